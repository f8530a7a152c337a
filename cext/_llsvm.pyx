# Kernels of the one-pass harsh-shrinking solver LLSVM (Alrajeh, Takeda, Niranjan, "Memory-efficient
# large-scale linear support vector machine"; ../shared/papers/llsvm-memory-efficient-linear-svm.txt).
#
# Problem: the L1-loss (hinge) SVM dual, as LIBLINEAR's -s 3, for labels y_i in {-1,+1} and the bias as one
# more coordinate (the row view's implicit bias, value tau):
#     max_alpha  D(alpha) = sum_i alpha_i - 1/2 ||w||^2,   w = sum_i alpha_i y_i x_i,   0 <= alpha_i <= C_i.
# Update (the paper's Algorithm 1, lines 4-13; the kernel-Adatron step eta = 1/Q_ii): with G = y_i w.x_i - 1,
#     alpha_i <- min(max(alpha_i - G / QD_i, 0), C_i),   w += (alpha_i - alpha_old) y_i x_i,
# QD_i = ||x_i||^2 (+ tau^2). This is the exact maximizer of D along coordinate i, so D never decreases.
#
# 1. `first_pass`: Algorithm 2, lines 2-8 for one block of the stream: ONE step per row, in stream order, from
#    alpha_i = 0. The driver keeps the rows left with 0 < alpha_i < C_i (the active set, written to a binary
#    file) and forgets the others for good (alpha_i stays 0 or C_i; a row at C_i stays in w).
# 2. `block_pass`: Algorithm 2, line 17: N passes of Algorithm 1 over a loaded block of the active set, each pass
#    in a fresh random order from the project's RNG. The driver stops the outer iterations when the relative
#    change of D is at most eps (the paper's criterion, section 3) and drops rows at 0 or C between them.
# Both run without the GIL and return the change of sum(alpha), from which the driver keeps D up to date.
from libc.stdint cimport int32_t, int64_t, uint64_t

from kernel_util cimport LLSVM_PREFETCH, clip_box
from kernel_types cimport value_t
from rowview cimport RowView, make_view, row_dot, row_axpy
from rng cimport Rng, rng_shuffle


def first_pass(const int64_t[::1] indptr, const int32_t[::1] indices, const value_t[::1] values,
               int64_t n_features, double bias, const int32_t[::1] cls, int32_t pos, const double[::1] QD,
               double[::1] w, double Cp, double Cn, double[::1] alpha):
    """One step per row from alpha = 0, rows in order; y_i = +1 if cls[i] == pos else -1.

    Writes each row's alpha into `alpha` and updates w in place. Returns sum(alpha) of the block.
    """
    cdef RowView v = make_view(indptr, indices, values, NULL, n_features, bias)
    cdef int64_t i, l = cls.shape[0]
    cdef double G, a, C, s = 0.0
    cdef int yi
    with nogil:
        for i in range(l):
            if cls[i] == pos:
                yi = 1
                C = Cp
            else:
                yi = -1
                C = Cn
            G = yi * row_dot(&v, i, &w[0], <value_t*>NULL) - 1.0
            a = clip_box(-G / QD[i], C)
            alpha[i] = a
            if a != 0.0:
                row_axpy(&v, i, a * yi, &w[0], <value_t*>NULL)
                s += a
    return s


def block_pass(const int64_t[::1] indptr, const int32_t[::1] indices, const value_t[::1] values,
               int64_t n_features, double bias, const signed char[::1] y, const double[::1] QD, double[::1] alpha,
               double[::1] w, double Cp, double Cn, int n_inner, uint64_t[::1] rng, int32_t[::1] index,
               bint shuffle=True):
    """n_inner passes of Algorithm 1 over the block's rows index[0:l] (reshuffled before each pass).

    Returns (change of sum(alpha), number of coordinate updates). shuffle=False keeps index's order.
    """
    cdef RowView v = make_view(indptr, indices, values, NULL, n_features, bias)
    cdef int64_t s, i, nxt, l = y.shape[0], n_updates = 0
    cdef int it, yi
    cdef double G, a, a_old, C, d_sum = 0.0
    cdef Rng* g = <Rng*>&rng[0]
    cdef int32_t* idx = &index[0] if l > 0 else NULL
    cdef const value_t* x = &values[0] if values.shape[0] > 0 else NULL
    cdef const int32_t* ix = &indices[0] if indices.shape[0] > 0 else NULL
    with nogil:
        for it in range(n_inner):
            if shuffle:
                rng_shuffle(g, idx, l)
            for s in range(l):
                i = idx[s]
                if s + 1 < l and ix != NULL:
                    nxt = indptr[idx[s + 1]]
                    LLSVM_PREFETCH(ix + nxt)
                    LLSVM_PREFETCH(x + nxt)
                yi = y[i]
                C = Cp if yi > 0 else Cn
                G = yi * row_dot(&v, i, &w[0], <value_t*>NULL) - 1.0
                a_old = alpha[i]
                a = clip_box(a_old - G / QD[i], C)
                if a != a_old:
                    alpha[i] = a
                    row_axpy(&v, i, (a - a_old) * yi, &w[0], <value_t*>NULL)
                    d_sum += a - a_old
                    n_updates += 1
    return d_sum, n_updates
