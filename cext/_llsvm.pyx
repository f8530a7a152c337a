# Kernels of the one-pass harsh-shrinking solver LLSVM (Alrajeh, Takeda, Niranjan, "Memory-efficient
# large-scale linear support vector machine", ICMV 2014, Proc. SPIE 9445).
#
# Problem: the L1-loss (hinge) SVM dual, as LIBLINEAR's -s 3, for labels y_i in {-1,+1} and the bias as one
# more coordinate (the row view's implicit bias, value tau):
#     max_alpha  D(alpha) = sum_i alpha_i - 1/2 ||w||^2,   w = sum_i alpha_i y_i x_i,   0 <= alpha_i <= C_i,
# C_i = Cp or Cn by y_i, times the row's weight when the view has weights (rowview.row_cost, docs/weights.md: read
# once a visited row; without weights the class's C itself, as before).
# Update (the paper's Algorithm 1, lines 4-13; the kernel-Adatron step eta = 1/Q_ii): with G = y_i w.x_i - 1,
#     alpha_i <- min(max(alpha_i - G / QD_i, 0), C_i),   w += (alpha_i - alpha_old) y_i x_i,
# QD_i = ||x_i||^2 (+ tau^2). This is the exact maximizer of D along coordinate i, so D never decreases.
#
# 1. `first_pass`: Algorithm 2, lines 2-8 for one block of the stream: ONE step per row, in stream order, from
#    alpha_i = 0 (with -i, from the warm start's alpha_i, whose w = sum_j alpha_j y_j x_j the driver set
#    first). The driver keeps the rows left with 0 < alpha_i < C_i (the active set, written to a binary
#    file) and forgets the others for good (alpha_i stays 0 or C_i; a row at C_i stays in w).
# 2. `block_pass`: Algorithm 2, line 17: N passes of Algorithm 1 over a loaded block of the active set, each pass
#    in a fresh random order from the project's RNG; it also returns the largest |PG_i| of the last pass (each
#    before its row's step). The driver stops the outer iterations when the relative change of D is at most
#    --inner-eps (the paper's criterion, section 3; with re-check passes also not before that last-pass violation
#    is within eps / 2) and drops rows at 0 or C between them. A block may be visited through a list of some of
#    its rows only (`n`: the live rows of an active-set file the default mode does not rewrite at every outer
#    iteration); the others are not read. It may also give the first pass's largest violation, with which the
#    driver measures an outer iteration over several blocks (each block's rows as its turn finds them).
# 3. `recheck`: the re-check pass of llsvm's default mode (not in the paper, whose Algorithm 2 is `--one-pass`):
#    over one block of the whole input at the current w (not changed by the pass), every row's projected gradient
#    from its status byte (0: alpha = 0, PG = min(G, 0); C: alpha = C, PG = max(G, 0); free: PG = G),
#    the largest |PG| and the hinge losses sum_i C_i max(0, 1 - y_i w.x_i) (with the dual, the exact primal, gap
#    and violation of the model), and the rows outside the active set with |PG| > `reenter` (0: every violator),
#    which the driver returns to the active set with their alpha. The driver stops when a pass finds
#    max |PG| <= eps over every row (LIBLINEAR's -e).
# All take the block as a row view X (a `Rows`, cext/_view.pyx: its n_features is the width of w, the bias weight
# at w[X.n_features]), dispatch on X.f32, run without the GIL and return the change of sum(alpha), from which the
# driver keeps D up to date. The step is dual_step.pxd's (shared with _linear and _stream), with D_ii = 0.
from libc.stdint cimport int32_t, int64_t, uint8_t, uint64_t
from libc.math cimport fabs

from kernel_types cimport value_t
from rowview cimport RowView, prefetch_visits, row_dot, row_axpy, row_cost
from dual_step cimport dual_gradient, dual_step, projected_gradient
from rng cimport Rng, rng_shuffle
from llsvm._ext._view cimport Rows
from llsvm._ext._stop cimport stop_requested, check_stop


# a row's status in the driver's per-row, per-problem byte (onepass.py imports these): where its alpha is (the low
# two bits) and whether the row is in the active set (ST_IN)
cdef enum:
    ST_ZERO = 0         # alpha = 0
    ST_AT_CP = 1        # alpha = C_i of a row of the positive class (Cp, times the row's weight with weights)
    ST_FREE = 2         # 0 < alpha < C
    ST_AT_CN = 3        # alpha = C_i of a row of the negative class
    ST_STATE = 3        # the mask of the four
    ST_IN = 4           # in the active set (with re-check passes a row at a bound may stay in it)

ZERO, AT_CP, FREE, AT_CN, STATE, IN_SET = ST_ZERO, ST_AT_CP, ST_FREE, ST_AT_CN, ST_STATE, ST_IN
ACTIVE = ST_FREE | ST_IN


cdef int _check_w(Rows X, int64_t size) except -1:
    if size < X.v.n_features + (1 if X.v.bias >= 0 else 0):
        raise ValueError(f"w has {size} entries; the view's features and bias need more")
    return 0


cdef inline int _label(const RowView* v, int64_t i, int32_t cls_i, int32_t pos, double Cp, double Cn,
                       double* C) noexcept nogil:
    """y_i of row i in one-vs-rest (+1 for class `pos`, else -1), and its C_i in *C (row_cost)."""
    if cls_i == pos:
        C[0] = row_cost(v, i, Cp)
        return 1
    C[0] = row_cost(v, i, Cn)
    return -1


cdef double _first_pass(const RowView* v, int64_t l, const int32_t* cls, int32_t pos, const double* QD, double* w,
                        double Cp, double Cn, double* alpha, bint warm, value_t* kind) noexcept nogil:
    cdef int64_t i
    cdef double G, a, C, s = 0.0
    cdef int yi
    cdef double a0
    for i in range(l):
        yi = _label(v, i, cls[i], pos, Cp, Cn, &C)
        a0 = alpha[i] if warm else 0.0
        G = dual_gradient(yi * row_dot(v, i, w, kind), a0, 0.0)
        a = dual_step(G, a0, QD[i], 0.0, C)
        alpha[i] = a
        if a != a0:
            row_axpy(v, i, (a - a0) * yi, w, kind)
            s += a - a0
    return s


def first_pass(Rows X not None, const int32_t[::1] cls, int32_t pos, const double[::1] QD, double[::1] w,
               double Cp, double Cn, double[::1] alpha, bint warm=False):
    """One step per row from alpha = 0, rows 0..l-1 in order, l = len(cls); y_i = +1 if cls[i] == pos else -1.
    `warm` (-i): from the row's alpha in `alpha`, which w already holds (w = sum_j alpha_j y_j x_j over every row
    of the input, the warm start's dual point), rather than from 0.

    Writes each row's alpha into `alpha` and updates w in place. Returns the change of sum(alpha) over the block
    (sum(alpha) from 0).
    """
    cdef int64_t l = cls.shape[0]
    if X.v.n_rows < l or QD.shape[0] < l or alpha.shape[0] < l:
        raise ValueError("first_pass: cls, QD, alpha and the rows disagree")
    _check_w(X, w.shape[0])
    cdef double s = 0.0
    if l == 0:
        return s
    with nogil:
        if X.f32:
            s = _first_pass(&X.v, l, &cls[0], pos, &QD[0], &w[0], Cp, Cn, &alpha[0], warm, <float*>NULL)
        else:
            s = _first_pass(&X.v, l, &cls[0], pos, &QD[0], &w[0], Cp, Cn, &alpha[0], warm, <double*>NULL)
    return s


cdef double _block_pass(const RowView* v, int64_t l, const signed char* y, const double* QD, double* alpha,
                        double* w, double Cp, double Cn, int n_inner, Rng* g, int32_t* idx, bint shuffle,
                        int64_t* n_updates_out, double* pg_out, double* G_out, double* pg_first,
                        value_t* kind) noexcept nogil:
    cdef int64_t s, i, n_updates = 0
    cdef int it, yi
    cdef double G, PG, a, a_old, C, d_sum = 0.0, pg_max = 0.0
    for it in range(n_inner):
        if stop_requested():            # once a pass over the block (cext/_stop.pyx; the wrapper raises)
            break
        if shuffle:
            rng_shuffle(g, idx, l)
        for s in range(l):
            i = idx[s]
            if v.indices != NULL:
                prefetch_visits(v, NULL, idx, s, l, y, alpha, QD, kind)    # rows come in random order
            yi = y[i]
            C = row_cost(v, i, Cp if yi > 0 else Cn)
            a_old = alpha[i]
            G = dual_gradient(yi * row_dot(v, i, w, kind), a_old, 0.0)
            if it == 0 and pg_first != NULL and C > 0.0:
                PG = fabs(projected_gradient(G, a_old, C))
                if PG > pg_first[0]:
                    pg_first[0] = PG
            if it == n_inner - 1:
                # the last pass's largest violation, each row's before its step (LIBLINEAR's measure of a sweep),
                # and each row's G
                if C > 0.0:
                    PG = fabs(projected_gradient(G, a_old, C))
                    if PG > pg_max:
                        pg_max = PG
                if G_out != NULL:
                    G_out[i] = G
            a = dual_step(G, a_old, QD[i], 0.0, C)
            if a != a_old:
                alpha[i] = a
                row_axpy(v, i, (a - a_old) * yi, w, kind)
                d_sum += a - a_old
                n_updates += 1
    n_updates_out[0] = n_updates
    pg_out[0] = pg_max
    return d_sum


def block_pass(Rows X not None, const signed char[::1] y, const double[::1] QD, double[::1] alpha, double[::1] w,
               double Cp, double Cn, int n_inner, uint64_t[::1] rng, int32_t[::1] index, bint shuffle=True,
               double[::1] G=None, int64_t n=-1, double[::1] pg_first=None):
    """n_inner passes of Algorithm 1 over the block's rows index[0:l] (reshuffled before each pass), l = n, by
    default len(y); the rows, QD and alpha (and G) have at least len(y) entries, index at least l, each of index[0:l]
    in [0, len(y)) (checked when n is given: the driver's live rows of a loaded block, the others left alone).

    Returns (change of sum(alpha), number of coordinate updates, the last pass's largest |PG_i|, each taken
    before the row's step). shuffle=False keeps index's order. G (optional) receives each visited row's
    G = y_i w.x_i - 1 of the last pass, before its step; pg_first (optional, one entry) the first pass's largest
    |PG_i|, each before the row's step (the block's violation as the pass found it).
    """
    cdef int64_t m = y.shape[0], l = y.shape[0] if n < 0 else n, n_updates = 0, s
    cdef double pg_max = 0.0
    cdef bint bad = False
    if X.v.n_rows < m or QD.shape[0] < m or alpha.shape[0] < m or index.shape[0] < l or rng.shape[0] != 4 or \
            (G is not None and G.shape[0] < m):
        raise ValueError("block_pass: y, QD, alpha, index, G and the rows disagree")
    if n >= 0:
        with nogil:
            for s in range(l):
                if index[s] < 0 or index[s] >= m:
                    bad = True
                    break
        if bad:
            raise ValueError("block_pass: an index outside the block's rows")
    cdef double* G_ptr = NULL
    if G is not None and m > 0:
        G_ptr = &G[0]
    cdef double* first_ptr = NULL
    if pg_first is not None:
        if pg_first.shape[0] < 1:
            raise ValueError("block_pass: pg_first has no entry")
        pg_first[0] = 0.0
        first_ptr = &pg_first[0]
    _check_w(X, w.shape[0])
    cdef double d_sum = 0.0
    if l == 0:
        return d_sum, n_updates, pg_max
    with nogil:
        if X.f32:
            d_sum = _block_pass(&X.v, l, &y[0], &QD[0], &alpha[0], &w[0], Cp, Cn, n_inner, <Rng*>&rng[0],
                                &index[0], shuffle, &n_updates, &pg_max, G_ptr, first_ptr, <float*>NULL)
        else:
            d_sum = _block_pass(&X.v, l, &y[0], &QD[0], &alpha[0], &w[0], Cp, Cn, n_inner, <Rng*>&rng[0],
                                &index[0], shuffle, &n_updates, &pg_max, G_ptr, first_ptr, <double*>NULL)
    check_stop()
    return d_sum, n_updates, pg_max


cdef int64_t _recheck(const RowView* v, int64_t l, const int32_t* cls, int32_t pos, const uint8_t* status,
                      const double* w, double Cp, double Cn, double reenter, int64_t* enter, double* out,
                      value_t* kind) noexcept nogil:
    cdef int64_t i, n_enter = 0
    cdef double G, PG, C, viol, m = 0.0, loss = 0.0
    cdef int yi
    cdef uint8_t st
    cdef bint back
    for i in range(l):
        yi = _label(v, i, cls[i], pos, Cp, Cn, &C)
        G = dual_gradient(yi * row_dot(v, i, w, kind), 0.0, 0.0)
        if G < 0.0:
            loss += C * (-G)
        st = status[i]
        if (st & ST_STATE) == ST_FREE:
            PG = G
        elif (st & ST_STATE) == ST_ZERO:
            PG = G if G < 0.0 else 0.0
        else:
            PG = G if G > 0.0 else 0.0
        if C == 0.0:          # a class or row weight of 0: alpha is held at 0 = C, nothing to violate
            PG = 0.0
        viol = fabs(PG)
        if viol > m:
            m = viol
        if not (st & ST_IN) and C > 0.0:
            # back into the active set: a row at 0 whose G is below `reenter`, one at C whose G is above -reenter
            # (reenter = 0: the violators; > 0: also the rows that close to the margin; < 0: only the rows that
            # violate by more than -reenter)
            # (a free row is always in the active set: its alpha is there, not in the status byte)
            if (st & ST_STATE) == ST_ZERO:
                back = G < reenter
            elif (st & ST_STATE) == ST_FREE:
                back = False
            else:
                back = G > -reenter
            if back:
                enter[n_enter] = i
                n_enter += 1
    out[0] = m
    out[1] = loss
    return n_enter


def recheck(Rows X not None, const int32_t[::1] cls, int32_t pos, const uint8_t[::1] status, const double[::1] w,
            double Cp, double Cn, double reenter, int64_t[::1] enter):
    """The re-check of rows 0..l-1 (l = len(cls); y_i = +1 if cls[i] == pos else -1) at w, where their alpha is
    given by `status & STATE` (ZERO, AT_CP, FREE, AT_CN). Nothing is changed but `enter`, which receives the rows
    outside the active set (no IN_SET bit) that come back, in order: at alpha = 0 with G_i < reenter, at C with
    G_i > -reenter (0: every violator).

    Returns (max_i |PG_i|, sum_i C_i max(0, 1 - y_i w.x_i), number of rows written to enter).
    """
    cdef int64_t l = cls.shape[0], n_enter = 0
    cdef double out[2]
    if X.v.n_rows < l or status.shape[0] < l or enter.shape[0] < l:
        raise ValueError("recheck: cls, status, enter and the rows disagree")
    _check_w(X, w.shape[0])
    out[0] = out[1] = 0.0
    if l == 0:
        return out[0], out[1], n_enter
    with nogil:
        if X.f32:
            n_enter = _recheck(&X.v, l, &cls[0], pos, &status[0], &w[0], Cp, Cn, reenter, &enter[0], out, <float*>NULL)
        else:
            n_enter = _recheck(&X.v, l, &cls[0], pos, &status[0], &w[0], Cp, Cn, reenter, &enter[0], out,
                               <double*>NULL)
    return out[0], out[1], n_enter
