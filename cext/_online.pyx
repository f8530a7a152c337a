# The online kernel SVMs of issue 16 (Kecman & Melki, "Fast online algorithms for support vector machines: models
# and experimental studies", IEEE SoutheastCon 2016; the resolutions implemented: docs/solvers.md, "Online lists:
# the printed errors and the resolutions implemented"): Lists 3b, 3a, 1 (NORMA) and 2 (Pegaz), and Pegasos proper
# (Shalev-Shwartz, Singer, Srebro, ICML 2007), kernel and linear. One epoch loop (_epochs) runs every list in one of
# three forms:
#   cached    the output cache o over every training row, one kernel column per change (optionally served by a
#             ColumnStore of full columns kept across runs: the grid search's store per kernel and fold);
#   original  the paper's lists as printed (--original): no cache, the output at x_i is the kernel row restricted
#             to the support {j : alpha_j ever set non-zero since the last wipe}, O(|support| nnz) per step;
#   linear    (kernel_type 0 only) the lists on w = sum_j alpha_j x_j directly: o_i = w.x_i computed on demand,
#             "add coef K[:, i]" becomes w += coef x_i, O(nnz_i).
# All three make the same decisions (up to rounding ties); the model alpha is over the rows of X (original index).
#
# Problem (List 3b): min R_hl = sum_i max(0, 1 - y_i o(x_i)), o(x) = sum_j alpha_j k(x, x_j) (+ b), by one pass per
# epoch over the rows in a fixed order (the data shuffled once: `order`), t = 1 .. epochs l continuing across epochs,
# i_t = order[(t - 1) mod l], eta_t = C sqrt(2 / t).
# Update: when y_i o_i < 1 (a violation): o_r += (eta y_i) k(x_r, x_i) for every r (one kernel column, x_i
# scattered once), alpha_i += eta y_i, and with the bias b += eta y_i and o_r += eta y_i. A check is O(1) cached; a
# violation costs one column, O(l nnz).
# List 3a (R_rhl, no bias): y_i o_i < 1: o += eta (y_i - alpha_i / C) K[:, i], alpha_i := (1 - eta/C) alpha_i +
# eta y_i; y_i o_i > 1: o -= (eta alpha_i / C) K[:, i], alpha_i := (1 - eta/C) alpha_i.
# List 1, NORMA (R_rhl): viol = y_i o_i before the decay; every alpha_j decays by d (faithful: d = 1 - eta/C = 1 -
# sqrt(2/t), which is 0 at t = 2 and wipes the model, as printed; with eta0 and lambda: eta = eta0/sqrt(t), d = 1 -
# eta lambda); on viol <= 1 alpha_i := eta y_i (overwritten, not decayed).
# List 2, Pegaz: alpha = eta_t beta, obar = K beta; viol = y_i eta obar_i <= 1: beta_i += y_i, obar += y_i K[:, i];
# at the end alpha = eta_T beta.
# Pegasos: step t (counting mini-batches across epochs) over the batch A_t (consecutive chunks of `order` of size k,
# the last shorter, the same every epoch): eta_t = 1/(lam t), A+ = {i in A_t : y_i o_i < 1} with every margin of the
# batch taken before the updates, alpha <- (1 - eta lam) alpha + (eta/|A_t|) sum_{A+} y_i e_i, optional projection
# alpha <- min(1, (1/sqrt(lam))/||w||) alpha.
# Global scale (NORMA, Pegasos): alpha = s abar, o = s obar (w = s v in the linear form), so the decay is s *= d,
# O(1); when s reaches 0 (NORMA's faithful t = 2, Pegasos' t = 1) abar, obar / v and the support are reset and s = 1;
# s is folded back into them when |s| leaves [1e-150, 1e150]. Pegasos' ||w||^2 = s^2 nn with nn = ||sum abar_j
# phi_j||^2 kept incrementally (nn += 2 c (K abar)_i + c^2 k(x_i, x_i) before abar_i += c; (K abar)_i is obar_i cached,
# v.x_i linear, a support row in the original form: one more support row per element of A+ there).
# average=True: the mean of the iterates after steps 1..T (alpha, o, b alike; w in the linear form): a dense
# accumulation per step, O(l) (+ O(l) for o cached, + O(n_features) for w linear).
# Stop: after `epochs` passes (no tolerance: the paper's lists run a fixed number of steps).
# The NumPy twin is tests/reference/online_twin.py (olsvm_3b, olsvm_3a, norma, pegaz, pegasos_kernel, pegasos_linear:
# cached and uncached forms); the linear 3b is scikit-learn's SGDClassifier (tests/test_online_twin.py).
from libc.math cimport fabs, sqrt, isfinite
from libc.stdint cimport int32_t, int64_t
from libc.stdlib cimport calloc, malloc, free
from posix.time cimport clock_gettime, timespec, CLOCK_MONOTONIC

import numpy as np

from kernel_types cimport value_t
from rowview cimport RowView, row_indices, row_values
from kernel cimport (KernelParams, dot_dense, dot_with, row_width, scatter_into, scatter_row, scratch_size,
                    kernel_from_dot, KERNEL_PRECOMPUTED)
from llsvm._ext._view cimport Rows
from llsvm._ext._stop cimport stop_requested, check_stop
from llsvm._ext._kernel cimport kernel_params


cdef KernelParams _params(params) except *:
    """kernel_params, refusing the precomputed kernel: these loops compute x.z (dot_with) for every kernel value."""
    cdef KernelParams p = kernel_params(params)
    if p.kernel_type == KERNEL_PRECOMPUTED:
        raise ValueError("the online kernel SVMs do not take the precomputed kernel (kernel_type 4)")
    return p


cdef inline double _now() noexcept nogil:
    cdef timespec ts
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return <double>ts.tv_sec + 1e-9 * <double>ts.tv_nsec


cdef inline void _column_add(const KernelParams* p, const RowView* v, int64_t i, double coef, double shift,
                             double* o, const double* sq, int64_t l, double* dense, value_t* kind) noexcept nogil:
    """o[r] = (o[r] + coef k(x_r, x_i)) + shift for every row r (x_i scattered once into dense, zeros again on
    return, or merged with each row when dense is NULL: kernel.pxd, dot_with). shift is List 3b's bias step, added
    in the same pass: the same two roundings as two passes."""
    cdef int64_t r
    cdef double sqi = sq[i]
    if dense == NULL:
        for r in range(l):
            o[r] = (o[r] + coef * kernel_from_dot(p, dot_with(v, r, i, dense, kind), sq[r], sqi)) + shift
        return
    scatter_row(v, i, dense, False, kind)
    for r in range(l):
        o[r] = (o[r] + coef * kernel_from_dot(p, dot_dense(v, r, dense, kind), sq[r], sqi)) + shift
    scatter_row(v, i, dense, True, kind)


cdef struct StoreC:
    double** cols           # column j (l doubles) or NULL
    int64_t l
    int64_t capacity        # columns the budget holds
    int64_t n_stored
    int64_t hits, misses


cdef class ColumnStore:
    """ColumnStore(X, params, sqnorm, cache_mb): full double kernel columns over the rows of X (column j =
    [k(x_r, x_j) for r]), at most floor(cache_mb 2^20 / (8 l)) of them, filled first-come by the runs that use it
    (run(..., store=)) and never evicted: once full, further columns are computed on the fly. A stored column is
    computed with the very arithmetic of the uncached column, so results are bit-identical with and without it.
    Meant to be kept per (kernel params, training fold) and reused across C values and epochs."""
    cdef StoreC c
    cdef Rows X
    cdef KernelParams p
    cdef object _sq          # the squared norms the columns were made with (a float64 array copy)

    def __cinit__(self):
        self.c.cols = NULL
        self.c.l = 0
        self.c.capacity = 0
        self.c.n_stored = 0
        self.c.hits = 0
        self.c.misses = 0

    def __init__(self, Rows X not None, params, const double[::1] sqnorm, double cache_mb):
        self.p = _params(params)
        if X.v.bias >= 0:
            raise ValueError("X must have no bias coordinate (the kernel SVM's bias is b)")
        cdef int64_t l = X.v.n_rows
        if sqnorm.shape[0] != l:
            raise ValueError(f"sqnorm must have the view's {l} entries")
        if not isfinite(cache_mb) or cache_mb < 0:
            raise ValueError("cache_mb must be finite and >= 0")
        if self.c.cols != NULL:
            raise ValueError("ColumnStore is initialised once")
        self.X = X
        self._sq = np.array(sqnorm, dtype=np.float64, copy=True)
        cap = 0
        if l > 0:
            cap = min(int(cache_mb * 1048576.0 // (8.0 * l)), l)
            if cap > 0 and (l > 0x7fffffffffffffff // 8 or cap > 0x7fffffffffffffff // (8 * l)):
                raise MemoryError(f"a store of {cap} columns of {l} rows overflows the address space")
            self.c.cols = <double**>calloc(l, sizeof(double*))
            if self.c.cols == NULL:
                raise MemoryError(f"a column table of {l} entries")
        self.c.l = l
        self.c.capacity = cap

    def __dealloc__(self):
        cdef int64_t j
        if self.c.cols != NULL:
            for j in range(self.c.l):
                free(self.c.cols[j])
            free(self.c.cols)
            self.c.cols = NULL

    @property
    def n_stored(self):
        return self.c.n_stored

    @property
    def capacity(self):
        return self.c.capacity

    @property
    def hits(self):
        return self.c.hits

    @property
    def misses(self):
        return self.c.misses


cdef enum:
    LIST_3B = 0
    LIST_3A = 1
    LIST_NORMA = 2
    LIST_PEGAZ = 3
    LIST_PEGASOS = 4

cdef enum:
    MODE_CACHED = 0
    MODE_ORIGINAL = 1
    MODE_LINEAR = 2

_KINDS = {"3b": LIST_3B, "3a": LIST_3A, "norma": LIST_NORMA, "pegaz": LIST_PEGAZ, "pegasos": LIST_PEGASOS}


cdef struct State:
    # the problem
    const KernelParams* p
    const RowView* v
    const int64_t* order
    const signed char* y
    const double* sq
    int64_t l
    int64_t n                 # features
    int which
    int mode
    double C
    bint bias
    bint faithful             # NORMA: d = 1 - eta/C (else eta0, lam)
    double eta0
    double lam
    int64_t k                 # Pegasos' batch size
    bint projection
    bint average
    int64_t max_steps         # stop after this many steps (-1: none; --max-iter)
    # the model: alpha = scale * abar (scale: 1 for 3b/3a, s for NORMA/Pegasos, eta for Pegaz)
    double* abar              # l
    double* obar              # l: the output cache (cached form) or NULL
    double* wv                # n (the rows' largest index + 1): v, w = s v (linear form) or NULL
    double* dense             # scratch_size zeros: scratch for a scattered row (kernel forms), or NULL (none: a
                              # wide sparse view, whose products merge the rows; kernel.pxd)
    double s
    double b
    double eta
    double nn                 # Pegasos: ||sum_j abar_j phi(x_j)||^2
    int64_t* support          # original form: the support rows, in the order they entered
    char* in_support
    int64_t n_support
    bint* plus                # Pegasos: the batch's A+ flags (k entries)
    StoreC* store             # or NULL
    # averages
    double* acc_a
    double* acc_o
    double* acc_w
    double acc_b
    int64_t n_avg


cdef inline double _raw(State* st, int64_t i, value_t* kind) noexcept nogil:
    """(K abar)_i of the current abar (plus b in the cached 3b, whose o holds it): obar_i cached, v.x_i linear, the
    kernel row over the support in the original form."""
    cdef int64_t q, j
    cdef double acc = 0.0, sqi
    if st.mode == MODE_CACHED:
        return st.obar[i]
    if st.mode == MODE_LINEAR:
        return dot_dense(st.v, i, st.wv, kind)
    sqi = st.sq[i]
    scatter_into(st.v, i, st.dense, False, kind)
    for q in range(st.n_support):
        j = st.support[q]
        acc += st.abar[j] * kernel_from_dot(st.p, dot_with(st.v, j, i, st.dense, kind), st.sq[j], sqi)
    scatter_into(st.v, i, st.dense, True, kind)
    return acc


cdef inline void _add(State* st, int64_t i, double coef, double shift, value_t* kind) noexcept nogil:
    """The output side of abar_i += coef: obar += coef K[:, i], then + shift (List 3b's bias step; 0 otherwise), in
    one pass (cached, through the store when there is one), v += coef x_i (linear), i joins the support
    (original)."""
    cdef int64_t r
    cdef double* col
    cdef double sqi
    cdef const value_t* x
    cdef const int32_t* idx
    cdef StoreC* S = st.store
    if st.mode == MODE_LINEAR:
        x = row_values(st.v, i, kind)
        idx = row_indices(st.v, i)
        for r in range(st.v.indptr[i], st.v.indptr[i + 1]):
            st.wv[idx[r]] += coef * <double>x[r]
        return
    if st.mode == MODE_ORIGINAL:
        if not st.in_support[i]:
            st.in_support[i] = 1
            st.support[st.n_support] = i
            st.n_support += 1
        return
    if S != NULL:
        col = S.cols[i]
        if col == NULL and S.n_stored < S.capacity:
            col = <double*>malloc(st.l * sizeof(double))
            if col != NULL:
                sqi = st.sq[i]
                scatter_into(st.v, i, st.dense, False, kind)
                for r in range(st.l):
                    col[r] = kernel_from_dot(st.p, dot_with(st.v, r, i, st.dense, kind), st.sq[r], sqi)
                scatter_into(st.v, i, st.dense, True, kind)
                S.cols[i] = col
                S.n_stored += 1
                S.misses += 1
                for r in range(st.l):
                    st.obar[r] = (st.obar[r] + coef * col[r]) + shift
                return
        elif col != NULL:
            S.hits += 1
            for r in range(st.l):
                st.obar[r] = (st.obar[r] + coef * col[r]) + shift
            return
        S.misses += 1
    _column_add(st.p, st.v, i, coef, shift, st.obar, st.sq, st.l, st.dense, kind)


cdef inline void _wipe(State* st) noexcept nogil:
    """The model is exactly 0 (the scale reached 0): abar, obar / v, nn and the support reset."""
    cdef int64_t r
    for r in range(st.l):
        st.abar[r] = 0.0
    if st.obar != NULL:
        for r in range(st.l):
            st.obar[r] = 0.0
    if st.wv != NULL:
        for r in range(st.n):
            st.wv[r] = 0.0
    if st.mode == MODE_ORIGINAL:
        for r in range(st.n_support):
            st.in_support[st.support[r]] = 0
        st.n_support = 0
    st.nn = 0.0


cdef inline void _fold(State* st) noexcept nogil:
    """Fold the global scale s into abar, obar / v (and nn) when |s| leaves [1e-150, 1e150]."""
    cdef int64_t r
    cdef double s = st.s
    if fabs(s) >= 1e-150 and fabs(s) <= 1e150:
        return
    for r in range(st.l):
        st.abar[r] *= s
    if st.obar != NULL:
        for r in range(st.l):
            st.obar[r] *= s
    if st.wv != NULL:
        for r in range(st.n):
            st.wv[r] *= s
    st.nn *= s * s
    st.s = 1.0


cdef inline void _accumulate(State* st) noexcept nogil:
    """average: add the iterate after this step (alpha = f abar, o = f obar, w = f v, b)."""
    cdef int64_t r
    cdef double f = st.s
    if st.which == LIST_PEGAZ:
        f = st.eta
    elif st.which == LIST_3B or st.which == LIST_3A:
        f = 1.0
    for r in range(st.l):
        st.acc_a[r] += f * st.abar[r]
    if st.obar != NULL:
        for r in range(st.l):
            st.acc_o[r] += f * st.obar[r]
    if st.wv != NULL:
        for r in range(st.n):
            st.acc_w[r] += f * st.wv[r]
    st.acc_b += st.b
    st.n_avg += 1


cdef int64_t _epochs(State* st, int64_t epochs, int64_t* viol, int64_t* over, value_t* kind) noexcept nogil:
    """The list `st.which` for `epochs` passes; returns the last t (Pegasos: batch steps). viol[e] / over[e]: the
    violations of epoch e (Pegasos: |A+| summed) / (List 3a) the steps with y_i o_i > 1."""
    cdef int64_t e, q, q0, q1, i, r, t = 0
    cdef double eta = 0.0, c, d, vi, oi, a_old, a_new, s_new, delta, f, cs, cur
    cdef double C = st.C
    cdef double rad = 1.0 / sqrt(st.lam) if st.which == LIST_PEGASOS else 0.0
    cdef const signed char* y = st.y
    cdef int64_t l = st.l
    for e in range(epochs):
        viol[e] = 0
        over[e] = 0
        if st.which == LIST_PEGASOS:
            q0 = 0
            while q0 < l:
                q1 = q0 + st.k
                if q1 > l:
                    q1 = l
                if t == st.max_steps or stop_requested():     # a step can cost a kernel column: every step
                    return t
                t += 1
                eta = 1.0 / (st.lam * <double>t)
                d = 1.0 - eta * st.lam
                c = eta / <double>(q1 - q0)
                for q in range(q0, q1):
                    i = st.order[q]
                    st.plus[q - q0] = y[i] * (st.s * _raw(st, i, kind)) < 1.0
                    if st.plus[q - q0]:
                        viol[e] += 1
                s_new = st.s * d
                if s_new == 0.0:
                    _wipe(st)
                    s_new = 1.0
                st.s = s_new
                for q in range(q0, q1):
                    if st.plus[q - q0]:
                        i = st.order[q]
                        cs = c * y[i] / st.s
                        if st.projection:
                            cur = _raw(st, i, kind)
                            st.nn += 2.0 * cs * cur + cs * cs * kernel_from_dot(st.p, st.sq[i], st.sq[i], st.sq[i])
                        st.abar[i] += cs
                        _add(st, i, cs, 0.0, kind)
                if st.projection and st.nn > 0.0:
                    f = rad / (fabs(st.s) * sqrt(st.nn))
                    if f < 1.0:
                        st.s *= f
                _fold(st)
                st.eta = eta
                if st.average:
                    _accumulate(st)
                q0 = q1
            continue
        for q in range(l):
            if t == st.max_steps or stop_requested():         # (cext/_stop.pyx) the caller raises
                return t
            t += 1
            i = st.order[q]
            if st.which == LIST_NORMA and not st.faithful:
                eta = st.eta0 / sqrt(<double>t)
            else:
                eta = C * sqrt(2.0 / <double>t)
            st.eta = eta
            if st.which == LIST_3B:
                oi = _raw(st, i, kind)
                if st.mode != MODE_CACHED:
                    oi += st.b
                if y[i] * oi < 1.0:
                    viol[e] += 1
                    c = eta * y[i]
                    # the bias step joins the column's pass (cached form): o_r = (o_r + c K_ri) + c
                    _add(st, i, c, c if st.bias and st.mode == MODE_CACHED else 0.0, kind)
                    st.abar[i] += c
                    if st.bias:
                        st.b += c
            elif st.which == LIST_3A:
                d = 1.0 - eta / C
                vi = y[i] * _raw(st, i, kind)
                if vi < 1.0:
                    viol[e] += 1
                    _add(st, i, eta * (y[i] - st.abar[i] / C), 0.0, kind)
                    st.abar[i] = d * st.abar[i] + eta * y[i]
                elif vi > 1.0:
                    over[e] += 1
                    _add(st, i, -(eta * st.abar[i] / C), 0.0, kind)
                    st.abar[i] = d * st.abar[i]
            elif st.which == LIST_NORMA:
                d = (1.0 - eta / C) if st.faithful else (1.0 - eta * st.lam)
                vi = y[i] * (st.s * _raw(st, i, kind))
                a_old = st.s * st.abar[i]
                if vi <= 1.0:
                    viol[e] += 1
                    a_new = eta * y[i]
                else:
                    a_new = a_old
                s_new = st.s * d
                if s_new == 0.0:
                    _wipe(st)
                    s_new = 1.0
                st.s = s_new
                st.abar[i] = a_new / st.s
                delta = a_new - d * a_old
                if delta != 0.0:
                    _add(st, i, delta / st.s, 0.0, kind)
                _fold(st)
            else:
                if y[i] * (eta * _raw(st, i, kind)) <= 1.0:
                    viol[e] += 1
                    st.abar[i] += y[i]
                    _add(st, i, <double>y[i], 0.0, kind)
            if st.average:
                _accumulate(st)
    return t


cdef void _column_loop(const KernelParams* p, const RowView* v, const int64_t* cols, int64_t m, const double* sq,
                       int64_t l, double* o, double* dense, value_t* kind) noexcept nogil:
    cdef int64_t q
    for q in range(m):
        _column_add(p, v, cols[q], 1.0, 0.0, o, sq, l, dense, kind)


def column_seconds(Rows X not None, params, const double[::1] sqnorm, rows):
    """The mean wall seconds of one full kernel column (computed as the cached lists' column update does, into a
    scratch o) over the column indices `rows`, in a nogil loop (0.0 for no rows)."""
    cdef KernelParams p = _params(params)
    if X.v.bias >= 0:
        raise ValueError("X must have no bias coordinate (the kernel SVM's bias is b)")
    cdef int64_t l = X.v.n_rows
    if sqnorm.shape[0] != l:
        raise ValueError(f"sqnorm must have the view's {l} entries")
    cdef const int64_t[::1] cols = np.ascontiguousarray(rows, dtype=np.int64)
    cdef int64_t m = cols.shape[0]
    if m == 0:
        return 0.0
    if np.any(np.asarray(cols) < 0) or np.any(np.asarray(cols) >= l):
        raise ValueError(f"column indices must be in [0, {l})")
    cdef double[::1] o = np.zeros(l)
    cdef double[::1] scratch = np.zeros(max(scratch_size(&X.v), 1))
    cdef double* dense = &scratch[0] if scratch_size(&X.v) > 0 else NULL
    cdef double t0, t1
    with nogil:
        t0 = _now()
        if X.f32:
            _column_loop(&p, &X.v, &cols[0], m, &sqnorm[0], l, &o[0], dense, <float*>NULL)
        else:
            _column_loop(&p, &X.v, &cols[0], m, &sqnorm[0], l, &o[0], dense, <double*>NULL)
        t1 = _now()
    return (t1 - t0) / m


cdef inline bint _same_params(const KernelParams* a, const KernelParams* b):
    return (a.kernel_type == b.kernel_type and a.degree == b.degree and a.gamma == b.gamma and a.coef0 == b.coef0)


def _core(Rows X, order, y, params, const double[::1] sqnorm, str kind, double C, int64_t epochs, bint bias,
          bint average, bint original, bint linear, eta0, lam, int64_t k, bint projection, ColumnStore store,
          int64_t max_steps=-1):
    """The epoch loop with its checks and scratch; returns the raw state (abar, obar, v, s, eta, b, averages)."""
    if kind not in _KINDS:
        raise ValueError(f"kind must be one of {sorted(_KINDS)}, not {kind!r}")
    cdef KernelParams p = _params(params)
    cdef State st
    cdef int which = _KINDS[kind]
    if X.v.bias >= 0:
        raise ValueError("X must have no bias coordinate (the kernel SVM's bias is b)")
    cdef int64_t l = X.v.n_rows
    cdef int64_t n = max(row_width(&X.v), 1)     # the linear form's w: up to the rows' largest index
    cdef const int64_t[::1] ord_ = np.ascontiguousarray(order, dtype=np.int64)
    cdef const signed char[::1] yv = np.ascontiguousarray(y, dtype=np.int8)
    if ord_.shape[0] != l or yv.shape[0] != l or sqnorm.shape[0] != l:
        raise ValueError(f"order, y and sqnorm must have the view's {l} entries")
    if l and not np.array_equal(np.sort(np.asarray(ord_)), np.arange(l)):
        raise ValueError("order must be a permutation of the rows")
    if not np.all((np.asarray(yv) == 1) | (np.asarray(yv) == -1)):
        raise ValueError("y must be +1 or -1")
    if epochs < 0:
        raise ValueError("epochs must be >= 0")
    if max_steps < -1:
        raise ValueError("max_steps must be >= 0, or -1 for no limit")
    if which != LIST_PEGASOS and not (C > 0):
        raise ValueError("C must be > 0")
    if linear and p.kernel_type != 0:
        raise ValueError("linear=True needs the linear kernel (kernel_type 0)")
    if linear and original:
        raise ValueError("linear and original exclude each other (original is the kernel lists as printed)")
    st.faithful = True
    st.eta0 = 0.0
    st.lam = 0.0
    if which == LIST_NORMA:
        st.faithful = eta0 is None
        st.eta0 = 0.0 if eta0 is None else float(eta0)
        st.lam = 0.0 if lam is None else float(lam)
        if not st.faithful and (lam is None or not st.eta0 > 0 or not st.lam >= 0):
            raise ValueError("eta0 > 0 needs lam >= 0")
    elif which == LIST_PEGASOS:
        if lam is None or not float(lam) > 0 or not isfinite(float(lam)):
            raise ValueError("pegasos needs lam > 0 (the driver passes 1/(C l))")
        st.lam = float(lam)
        if k < 1:
            raise ValueError("the mini-batch size k must be >= 1")
    if store is not None:
        if store.X is not X:
            raise ValueError("the store was built on another Rows object")
        if not _same_params(&store.p, &p):
            raise ValueError("the store was built with other kernel params")
        if not np.array_equal(store._sq, np.asarray(sqnorm)):
            raise ValueError("the store was built with other squared norms")
    st.p = &p
    st.v = &X.v
    st.l = l
    st.n = n
    st.which = which
    st.mode = MODE_LINEAR if linear else (MODE_ORIGINAL if original else MODE_CACHED)
    st.C = C
    st.bias = bias and which == LIST_3B
    st.k = min(k, max(l, 1)) if which == LIST_PEGASOS else 1
    st.projection = projection and which == LIST_PEGASOS
    st.average = average
    st.max_steps = max_steps
    st.s = 1.0
    st.b = 0.0
    st.eta = 0.0
    st.nn = 0.0
    st.n_support = 0
    st.acc_b = 0.0
    st.n_avg = 0
    st.store = NULL
    if store is not None and st.mode == MODE_CACHED:
        st.store = &store.c
    abar = np.zeros(l)
    obar = np.zeros(l) if st.mode == MODE_CACHED else None
    wv = np.zeros(n) if st.mode == MODE_LINEAR else None
    acc_a = np.zeros(l) if average else None
    acc_o = np.zeros(l) if average and st.mode == MODE_CACHED else None
    acc_w = np.zeros(n) if average and st.mode == MODE_LINEAR else None
    viol = np.zeros(max(epochs, 1), np.int64)
    over = np.zeros(max(epochs, 1), np.int64)
    cdef double[::1] a_v = abar
    cdef double[::1] o_v = obar
    cdef double[::1] w_v = wv
    cdef double[::1] aa_v = acc_a
    cdef double[::1] ao_v = acc_o
    cdef double[::1] aw_v = acc_w
    cdef int64_t[::1] viol_v = viol, over_v = over
    cdef int64_t t = 0, hits0 = 0, misses0 = 0
    cdef double t0 = 0.0, t1 = 0.0
    res = {"abar": abar, "obar": obar, "v": wv, "acc_a": acc_a, "acc_o": acc_o, "acc_w": acc_w, "s": 1.0,
           "eta": 0.0, "b": 0.0, "acc_b": 0.0, "n_avg": 0, "t": 0, "viol": viol[:epochs], "over": over[:epochs],
           "seconds": 0.0, "store_hits": 0, "store_misses": 0, "which": which, "mode": st.mode}
    if l == 0 or epochs == 0:
        return res
    st.order = &ord_[0]
    st.y = &yv[0]
    st.sq = &sqnorm[0]
    st.abar = &a_v[0]
    st.obar = &o_v[0] if obar is not None else NULL
    st.wv = &w_v[0] if wv is not None else NULL
    st.acc_a = &aa_v[0] if acc_a is not None else NULL
    st.acc_o = &ao_v[0] if acc_o is not None else NULL
    st.acc_w = &aw_v[0] if acc_w is not None else NULL
    st.dense = NULL
    st.support = NULL
    st.in_support = NULL
    st.plus = NULL
    try:
        if st.mode != MODE_LINEAR and scratch_size(&X.v) > 0:      # else none: products merge the rows
            st.dense = <double*>calloc(scratch_size(&X.v), sizeof(double))
            if st.dense == NULL:
                raise MemoryError(f"a scratch row of {scratch_size(&X.v)} features")
        if st.mode == MODE_ORIGINAL:
            st.support = <int64_t*>calloc(l, sizeof(int64_t))
            st.in_support = <char*>calloc(l, sizeof(char))
            if st.support == NULL or st.in_support == NULL:
                raise MemoryError(f"a support list of {l} rows")
        if which == LIST_PEGASOS:
            st.plus = <bint*>calloc(st.k, sizeof(bint))
            if st.plus == NULL:
                raise MemoryError(f"a batch of {st.k} flags")
        if st.store != NULL:
            hits0 = st.store.hits
            misses0 = st.store.misses
        with nogil:
            t0 = _now()
            if X.f32:
                t = _epochs(&st, epochs, &viol_v[0], &over_v[0], <float*>NULL)
            else:
                t = _epochs(&st, epochs, &viol_v[0], &over_v[0], <double*>NULL)
            t1 = _now()
    finally:
        free(st.dense)
        free(st.support)
        free(st.in_support)
        free(st.plus)
    check_stop()                    # epochs cut short by a signal are never returned
    res.update(s=st.s, eta=st.eta, b=st.b, acc_b=st.acc_b, n_avg=int(st.n_avg), t=int(t), seconds=t1 - t0)
    if st.store != NULL:
        res.update(store_hits=int(st.store.hits - hits0), store_misses=int(st.store.misses - misses0))
    return res


def _linear_o(Rows X, w, double b):
    """o_r = w.x_r + b for every row (the sparse dot in the row's index order)."""
    cdef const double[::1] wv = np.ascontiguousarray(w, dtype=np.float64)
    cdef int64_t r, l = X.v.n_rows
    o = np.empty(l)
    cdef double[::1] ov = o
    if l == 0:
        return o
    with nogil:
        if X.f32:
            for r in range(l):
                ov[r] = dot_dense(&X.v, r, &wv[0], <float*>NULL) + b
        else:
            for r in range(l):
                ov[r] = dot_dense(&X.v, r, &wv[0], <double*>NULL) + b
    return o


def run(Rows X not None, order, y, params, const double[::1] sqnorm, *, str kind, double C=1.0, int64_t epochs=1,
        bint bias=True, bint average=False, bint original=False, bint linear=False, eta0=None, lam=None,
        int64_t k=1, bint projection=False, ColumnStore store=None, int64_t max_steps=-1):
    """One online SVM over the rows of X (labels y, +1/-1 by row) in the given order (a permutation: the one
    shuffle) for `epochs` passes. kind: "3b" | "3a" | "norma" | "pegaz" | "pegasos". params: the kernel (LIBSVM's
    kernel_type, gamma, degree, coef0); sqnorm: the rows' squared norms (row_sq_norms).
    bias: List 3b only (ignored by the others). eta0, lam: NORMA's Kivinen mode (None: faithful). Pegasos: lam > 0
    required (the driver passes 1/(C l)), k >= 1 the mini-batch size, projection; C is unused.
    original: the paper's uncached lists (support rows each step); linear: the lists on w (kernel_type 0 only; not
    with original). store: a ColumnStore of this X, params and sqnorm (else ValueError) serving the cached form's
    columns (checked but unused by the original and linear forms, which need no columns).
    Returns a dict: alpha (float64[l], the model over the rows of X), b, o (K alpha + b at every row, None when
    original), t (steps; Pegasos: batch steps), viol (per epoch), over (3a's y o > 1 per epoch), seconds (the
    epoch loop's wall time; max_steps >= 0 stops the run after that many steps, t tells), w (linear: the dense
    weights up to the rows' largest index, else None), store_hits, store_misses (this run's columns
    served by / computed despite the store; 0 without one), and with average
    alpha_last, b_last (the last iterate; alpha, b, o, w are then the mean of the iterates after steps 1..T)."""
    r = _core(X, order, y, params, sqnorm, kind, C, epochs, bias, average, original, linear, eta0, lam, k,
              projection, store, max_steps)
    which = r["which"]
    f = r["eta"] if which == LIST_PEGAZ else (r["s"] if which in (LIST_NORMA, LIST_PEGASOS) else 1.0)
    alpha = f * r["abar"]
    b = r["b"]
    o = None if r["obar"] is None else f * r["obar"]
    w = None if r["v"] is None else f * r["v"]
    out = {"alpha": alpha, "b": b, "t": r["t"], "viol": r["viol"], "over": r["over"], "seconds": r["seconds"],
           "store_hits": r["store_hits"], "store_misses": r["store_misses"]}
    if average:
        out["alpha_last"], out["b_last"] = alpha, b
        n = max(r["n_avg"], 1)
        alpha = r["acc_a"] / n
        b = r["acc_b"] / n
        if o is not None:
            o = r["acc_o"] / n
        if w is not None:
            w = r["acc_w"] / n
    if linear:
        w = w[:X.v.n_features]
        o = _linear_o(X, w, b) if X.v.n_features > 0 else np.full(X.v.n_rows, b)
    out.update(alpha=alpha, b=b, o=o, w=w)
    return out


def olsvm_3b(Rows X not None, order, y, params, const double[::1] sqnorm, double C, int64_t epochs=1,
             bint bias=True):
    """List 3b over the rows of X (labels y, +1/-1, by row) in the given order (a permutation of the rows: the one
    shuffle), for `epochs` passes. params: the kernel (kernel_type, gamma, degree, coef0, LIBSVM's). Returns a dict:
    alpha, o (o = K alpha + b, by row), b, t (steps made), viol (violations per epoch)."""
    r = run(X, order, y, params, sqnorm, kind="3b", C=C, epochs=epochs, bias=bias)
    return {k: r[k] for k in ("alpha", "o", "b", "t", "viol")}


def olsvm_3a(Rows X not None, order, y, params, const double[::1] sqnorm, double C, int64_t epochs=1):
    """List 3a (no bias). Returns alpha, o (= K alpha), t, viol (y_i o_i < 1 per epoch), over (y_i o_i > 1)."""
    r = run(X, order, y, params, sqnorm, kind="3a", C=C, epochs=epochs)
    return {k: r[k] for k in ("alpha", "o", "t", "viol", "over")}


def norma(Rows X not None, order, y, params, const double[::1] sqnorm, double C, int64_t epochs=1, eta0=None,
          lam=None):
    """List 1, NORMA: faithful (eta0 None: d = 1 - sqrt(2/t)) or Kivinen's (eta_t = eta0/sqrt(t), d = 1 - eta_t lam).
    Returns alpha, o (= K alpha), t, viol (viol <= 1 per epoch)."""
    r = run(X, order, y, params, sqnorm, kind="norma", C=C, epochs=epochs, eta0=eta0, lam=lam)
    return {k: r[k] for k in ("alpha", "o", "t", "viol")}


def pegaz(Rows X not None, order, y, params, const double[::1] sqnorm, double C, int64_t epochs=1):
    """List 2, Pegaz. Returns alpha (= eta_T beta), beta, o (= K alpha), obar (= K beta), t, viol."""
    r = _core(X, order, y, params, sqnorm, "pegaz", C, epochs, False, False, False, False, None, None, 1, False,
              None)
    eta = r["eta"]
    return {"alpha": eta * r["abar"], "beta": r["abar"], "o": eta * r["obar"], "obar": r["obar"], "t": r["t"],
            "viol": r["viol"]}
