# The online kernel SVMs of issue 16 (Kecman & Melki, "Fast online algorithms for support vector machines: models
# and experimental studies", IEEE SoutheastCon 2016; ../shared/specs/seed-solvers.md section 4). This first kernel is
# List 3b, OL SVM on R_hl, the list of all the paper's experiments; the other lists follow.
#
# Problem (List 3b): min R_hl = sum_i max(0, 1 - y_i o(x_i)), o(x) = sum_j alpha_j k(x, x_j) (+ b), by one pass per
# epoch over the rows in a fixed order (the data shuffled once: `order`), t = 1 .. epochs l continuing across epochs,
# i_t = order[(t - 1) mod l], eta_t = C sqrt(2 / t).
# Update: the output cache o = K alpha (+ b) holds o(x_r) for every training row r; when y_i o_i < 1 (a violation):
# o_r += (eta y_i) k(x_r, x_i) for every r (one kernel column, x_i scattered once), alpha_i += eta y_i, and with the
# bias b += eta y_i and o_r += eta y_i. A check is O(1); a violation costs one column, O(l nnz).
# Stop: after `epochs` passes (no tolerance: the paper's lists run a fixed number of steps).
# The NumPy twin is tests/reference/online_twin.py (olsvm_3b).
from libc.math cimport sqrt
from libc.stdint cimport int64_t
from libc.stdlib cimport calloc, free

import numpy as np

from kernel_types cimport value_t
from rowview cimport RowView
from kernel cimport KernelParams, dot_dense, scatter_row, kernel_from_dot
from llsvm._ext._view cimport Rows


cdef KernelParams _params(params) except *:
    cdef KernelParams p
    p.kernel_type = params["kernel_type"]
    p.degree = params.get("degree", 3)
    p.gamma = params.get("gamma", 0.0) or 0.0
    p.coef0 = params.get("coef0", 0.0)
    if p.kernel_type not in (0, 1, 2, 3):
        raise ValueError(f"unknown kernel type {p.kernel_type}")
    return p


cdef int64_t _epochs_3b(const KernelParams* p, const RowView* v, const int64_t* order, const signed char* y,
                        const double* sq, int64_t l, double C, int64_t epochs, bint bias, double* alpha, double* o,
                        double* b, double* dense, int64_t* viol, value_t* kind) noexcept nogil:
    """List 3b for `epochs` passes; returns the last t. viol[e]: violations in epoch e."""
    cdef int64_t e, k, i, r, t = 0
    cdef double eta, c, sqi
    for e in range(epochs):
        viol[e] = 0
        for k in range(l):
            t += 1
            i = order[k]
            if y[i] * o[i] < 1.0:
                viol[e] += 1
                eta = C * sqrt(2.0 / <double>t)
                c = eta * y[i]
                scatter_row(v, i, dense, False, kind)
                sqi = sq[i]
                for r in range(l):
                    o[r] += c * kernel_from_dot(p, dot_dense(v, r, dense, kind), sq[r], sqi)
                scatter_row(v, i, dense, True, kind)
                alpha[i] += c
                if bias:
                    b[0] += c
                    for r in range(l):
                        o[r] += c
    return t


def olsvm_3b(Rows X not None, order, y, params, const double[::1] sqnorm, double C, int64_t epochs=1,
             bint bias=True):
    """List 3b over the rows of X (labels y, +1/-1, by row) in the given order (a permutation of the rows: the one
    shuffle), for `epochs` passes. params: the kernel (kernel_type, gamma, degree, coef0, LIBSVM's). Returns a dict:
    alpha, o (o = K alpha + b, by row), b, t (steps made), viol (violations per epoch)."""
    cdef KernelParams p = _params(params)
    if X.v.bias >= 0:
        raise ValueError("X must have no bias coordinate (the kernel SVM's bias is b)")
    cdef int64_t l = X.v.n_rows
    cdef const int64_t[::1] ord_ = np.ascontiguousarray(order, dtype=np.int64)
    cdef const signed char[::1] yv = np.ascontiguousarray(y, dtype=np.int8)
    if ord_.shape[0] != l or yv.shape[0] != l or sqnorm.shape[0] != l:
        raise ValueError(f"order, y and sqnorm must have the view's {l} entries")
    if l and not np.array_equal(np.sort(np.asarray(ord_)), np.arange(l)):
        raise ValueError("order must be a permutation of the rows")
    if not np.all((np.asarray(yv) == 1) | (np.asarray(yv) == -1)):
        raise ValueError("y must be +1 or -1")
    if not (C > 0) or epochs < 0:
        raise ValueError("C must be > 0 and epochs >= 0")
    alpha = np.zeros(l)
    o = np.zeros(l)
    viol = np.zeros(max(epochs, 1), np.int64)
    cdef double[::1] a_v = alpha, o_v = o
    cdef int64_t[::1] viol_v = viol
    cdef double b = 0.0
    cdef int64_t t = 0
    if l == 0 or epochs == 0:
        return {"alpha": alpha, "o": o, "b": 0.0, "t": 0, "viol": viol[:epochs]}
    cdef double* dense = <double*>calloc(max(X.v.n_features, 1), sizeof(double))
    if dense == NULL:
        raise MemoryError(f"a scratch row of {X.v.n_features} features")
    try:
        with nogil:
            if X.f32:
                t = _epochs_3b(&p, &X.v, &ord_[0], &yv[0], &sqnorm[0], l, C, epochs, bias, &a_v[0], &o_v[0], &b,
                               dense, &viol_v[0], <float*>NULL)
            else:
                t = _epochs_3b(&p, &X.v, &ord_[0], &yv[0], &sqnorm[0], l, C, epochs, bias, &a_v[0], &o_v[0], &b,
                               dense, &viol_v[0], <double*>NULL)
    finally:
        free(dense)
    return {"alpha": alpha, "o": o, "b": b, "t": int(t), "viol": viol[:epochs]}
