# Kernels of the L2-regularized linear SVM solvers (LIBLINEAR 2.50 semantics), over the row view.
#
# 1. Dual coordinate descent with shrinking (Hsieh, Chang, Lin, Keerthi, Sundararajan, ICML 2008, Algorithm 3;
#    LIBLINEAR's solve_l2r_l1l2_svc). Problem, for labels y_i in {-1,+1}:
#        min_alpha  f(alpha) = 1/2 alpha^T (Q + D) alpha - e^T alpha,   0 <= alpha_i <= U_i,
#        Q_ij = y_i y_j x_i.x_j,  L1 loss (-s 3): D_ii = 0, U_i = C_i;  L2 loss (-s 1): D_ii = 1/(2 C_i), U_i = inf,
#    C_i = Cp or Cn by y_i, times the row's weight when the view has weights (rowview.row_cost, docs/weights.md;
#    _row_box: without weights the class's values of _box, as before),
#    with w = sum_i alpha_i y_i x_i kept up to date. Update of coordinate i: G = y_i w.x_i - 1 + D_ii alpha_i,
#    projected gradient PG (0 at an active bound), alpha_i <- min(max(alpha_i - G/QD_i, 0), U_i), w += d y_i x_i.
#    Shrinking: a variable at a bound whose G is beyond last epoch's PG_max / PG_min leaves the active set.
#    `dcd_epoch` runs ONE outer iteration (random permutation of the active set from the project's RNG, then one
#    pass). `DCDState.run(n, eps)` runs up to n of them with LIBLINEAR 2.50's stopping rule
#    PG_max - PG_min <= eps and |PG_max| <= eps and |PG_min| <= eps, and a final pass over all variables;
#    the Python driver (llsvm/solvers/dcd.py) calls it in chunks of 10 iterations and owns output, warnings and the
#    -s 2 fallback. (On small sets, one Python call per iteration cost more than the iteration itself.)
#    The visits ahead in the permutation are prefetched while the current one is processed (rowview.prefetch_visits).
#    `cocoa_local`: one worker's round of CoCoA+ (Ma et al., ICML 2015), the same coordinate step on the worker's
#    local subproblem (sigma' ||x_i||^2 in the curvature, a private u = w + sigma' A_k d), H epochs without
#    shrinking, with the round's stopping figures and certificate sums at the broadcast w; the client loop is
#    llsvm/solvers/cocoa.py.
# 2. X v and X^T (restricted) v; the Newton method of LIBLINEAR's -s 0, -s 2 and -s 11 (Galli & Lin 2021,
#    newton.cpp; Lin, Weng, Keerthi 2008): `NewtonFun` holds one problem and computes each piece of the Newton loop
#    in one call (f with X w and w.w, the gradient, the diagonal preconditioner, the whole preconditioned conjugate
#    gradient `pcg` of NEWTON::pcg with its quadratic-model stopping rule, the backtracking line search), every sum
#    in LIBLINEAR's order (see the section's opening comment); `dnrm2` is its |g|. The loop itself, its output and
#    the certificate are in llsvm/solvers/newton.py.
# 3. Decision values for prediction (features beyond the model's nr_feature ignored, bias appended).
# Every kernel takes the rows as one row view X (a `Rows`, cext/_view.pyx: arrays, n_features, the bias, and for a
# memory-mapped binary file read in place its segment table, so such a file is trained on and predicted without a
# copy); subproblems (one-vs-rest classes, cross-validation folds) are the full view plus `rows`, the rows they
# use. Each def dispatches on X.f32 to the float or double specialization of a fused nogil implementation. The
# coordinate step (G, PG, the clipped minimizer) is dual_step.pxd's, shared with _llsvm and _stream.
from cython.parallel cimport prange
from libc.math cimport exp, fabs, log, sqrt, INFINITY
from libc.stdint cimport int32_t, int64_t, uint64_t

import numpy as np

from kernel_types cimport value_t
from llsvm._ext._stop cimport stop_requested, check_stop
from rowview cimport RowView, prefetch_visits, prefetch_row, rows_worth_prefetching, row_dot, row_dot_inorder, row_dot_inorder2, row_axpy
from rowview cimport row_sq_norm, row_indices, row_values, row_cost
from rowview cimport subset_row as _row, subset_ptr as _rows_ptr
from dual_step cimport dual_gradient, projected_gradient, dual_step
from rng cimport Rng, rng_shuffle
from kernel_util cimport LLSVM_STORE_RELAXED
from scout cimport scout_publish, scout_view
from llsvm._ext._view cimport Rows

cdef extern from *:
    """
    /* w[j] += v as one atomic read-modify-write (a compare-and-swap loop on the double's bits): PASSCoDe-Atomic's
       update of the shared w. Plain C11/GCC builtins; no lock. */
    static inline void llsvm_atomic_add(double *p, double v) {
        union { double d; unsigned long long u; } seen, next;
        seen.u = __atomic_load_n((unsigned long long *)p, __ATOMIC_RELAXED);
        do {
            next.d = seen.d + v;
        } while (!__atomic_compare_exchange_n((unsigned long long *)p, &seen.u, next.u, 1, __ATOMIC_RELAXED,
                                              __ATOMIC_RELAXED));
    }
    """
    void llsvm_atomic_add(double* p, double v) noexcept nogil


cdef inline void _row_axpy_atomic(const RowView* v, int64_t i, double a, double* w, value_t* kind) noexcept nogil:
    """w += a * x_i with every addition atomic (threads sharing w lose no update)."""
    cdef const value_t* x = row_values(v, i, kind)
    cdef const int32_t* idx = row_indices(v, i)
    cdef int64_t k
    for k in range(v.indptr[i], v.indptr[i + 1]):
        llsvm_atomic_add(&w[idx[k]], a * x[k])
    if v.bias >= 0:
        llsvm_atomic_add(&w[v.n_features], a * v.bias)


cdef int _check_w(Rows X, int64_t size, str name) except -1:
    """A dense vector indexed by X's features (and its bias coordinate) must have room for them."""
    cdef int64_t need = X.v.n_features + (1 if X.v.bias >= 0 else 0)
    if size < need:
        raise ValueError(f"{name} has {size} entries; the view's features and bias need {need}")
    return 0


cdef inline void _box(double Cp, double Cn, bint l1_loss, double* diag, double* upper, double* cost) noexcept nogil:
    """D_ii, U_i and C_i of the dual (section 1) by y_i + 1: index 0 for y_i = -1, 2 for y_i = +1."""
    cost[0] = Cn
    cost[2] = Cp
    if l1_loss:
        diag[0] = diag[2] = 0.0
        upper[0] = Cn
        upper[2] = Cp
    else:
        diag[0] = 0.5 / Cn
        diag[2] = 0.5 / Cp
        upper[0] = upper[2] = INFINITY


cdef inline double _row_box(const RowView* v, int64_t row, int k, bint l1_loss, const double* diag,
                            const double* upper, const double* cost, double* D) noexcept nogil:
    """U_i (returned) and D_ii (in *D) of `row`, of label index k = y_i + 1: _box's values of its class when the
    view has no weights (one test a visit, no arithmetic), else from C_i = row_cost(v, row, cost[k]) (rows of
    weight 0 never reach a solver: docs/weights.md)."""
    cdef double C
    if v.weight == NULL:
        D[0] = diag[k]
        return upper[k]
    C = row_cost(v, row, cost[k])
    if l1_loss:
        D[0] = 0.0
        return C
    D[0] = 0.5 / C
    return INFINITY


cdef inline double _row_diag(const RowView* v, int64_t row, int k, bint l1_loss, const double* diag,
                             const double* cost) noexcept nogil:
    """D_ii of `row` alone, as _row_box gives it."""
    if v.weight == NULL:
        return diag[k]
    if l1_loss:
        return 0.0
    return 0.5 / row_cost(v, row, cost[k])


cdef void _sq_norms(const RowView* v, const int64_t* r, double* out, int64_t l, value_t* kind) noexcept nogil:
    cdef int64_t i
    for i in range(l):
        out[i] = row_sq_norm(v, _row(r, i), kind)


def sq_norms(Rows X not None, const int64_t[::1] rows, double[::1] out):
    """out[i] = ||x_rows[i]||^2 including X's bias coordinate (QD without the loss's diagonal term)."""
    cdef const int64_t* r = _rows_ptr(rows)
    cdef int64_t l = out.shape[0]
    if l == 0:
        return
    with nogil:
        if X.f32:
            _sq_norms(&X.v, r, &out[0], l, <float*>NULL)
        else:
            _sq_norms(&X.v, r, &out[0], l, <double*>NULL)


cdef void _init_w(const RowView* v, const int64_t* r, const signed char* y, const double* alpha, int64_t l,
                  double* w, int64_t n_w, value_t* kind) noexcept nogil:
    cdef int64_t i
    for i in range(n_w):
        w[i] = 0.0
    for i in range(l):
        if alpha[i] != 0.0:
            row_axpy(v, _row(r, i), y[i] * alpha[i], w, kind)


def dcd_init_w(Rows X not None, const int64_t[::1] rows, const signed char[::1] y, const double[::1] alpha,
               double[::1] w):
    """w = sum_i alpha_i y_i x_i (w is zeroed first)."""
    _check_w(X, w.shape[0], "w")
    if alpha.shape[0] != y.shape[0]:
        raise ValueError("alpha and y differ in length")
    cdef const int64_t* r = _rows_ptr(rows)
    cdef int64_t l = y.shape[0]
    if w.shape[0] == 0:
        return
    with nogil:
        if X.f32:
            _init_w(&X.v, r, &y[0] if l else NULL, &alpha[0] if l else NULL, l, &w[0], w.shape[0], <float*>NULL)
        else:
            _init_w(&X.v, r, &y[0] if l else NULL, &alpha[0] if l else NULL, l, &w[0], w.shape[0], <double*>NULL)


cdef int64_t _dcd_pass(const RowView* v, const int64_t* r, const signed char* y, double* alpha, double* w,
                       const double* xnorm, int32_t* index, int64_t active_size, double PGmax_old,
                       double PGmin_old, double Cp, double Cn, bint l1_loss, Rng* g, bint shuffle,
                       double* PGmax_out, double* PGmin_out, int64_t* n_updates_out,
                       value_t* kind, bint atomic=False, int64_t* progress=NULL) noexcept nogil:
    """The body of one outer iteration (see dcd_epoch); returns the new active_size. atomic: the additions into w
    are atomic (PASSCoDe-Atomic: threads running passes over their shares of the rows at once)."""
    cdef double diag[3]
    cdef double upper[3]
    cdef double cost[3]
    cdef double G, PG, C, D, d, alpha_old
    cdef double PGmax_new = -INFINITY, PGmin_new = INFINITY
    cdef int64_t s, i, k, row, n_updates = 0
    cdef int32_t tmp
    cdef int yi
    cdef bint shrink
    _box(Cp, Cn, l1_loss, diag, upper, cost)
    # random permutation of the active set
    if shuffle:
        rng_shuffle(g, index, active_size)
    s = 0
    while s < active_size:
        scout_publish(progress, s)
        i = index[s]
        prefetch_visits(v, r, index, s, active_size, y, alpha, xnorm, kind)
        yi = y[i]
        k = yi + 1
        row = _row(r, i)
        C = _row_box(v, row, k, l1_loss, diag, upper, cost, &D)
        G = dual_gradient(yi * row_dot(v, row, w, kind), alpha[i], D)
        # shrinking: a variable at a bound whose gradient points out beyond last iteration's extremes leaves
        shrink = False
        if alpha[i] == 0.0:
            shrink = G > PGmax_old
        elif alpha[i] == C:
            shrink = G < PGmin_old
        if shrink:
            active_size -= 1
            tmp = index[s]
            index[s] = index[active_size]
            index[active_size] = tmp
            continue
        PG = projected_gradient(G, alpha[i], C)
        if PG > PGmax_new:
            PGmax_new = PG
        if PG < PGmin_new:
            PGmin_new = PG
        if fabs(PG) > 1.0e-12:
            alpha_old = alpha[i]
            alpha[i] = dual_step(G, alpha_old, xnorm[i], D, C)
            d = (alpha[i] - alpha_old) * yi
            if atomic:
                _row_axpy_atomic(v, row, d, w, kind)
            else:
                row_axpy(v, row, d, w, kind)
            n_updates += 1
        s += 1
    PGmax_out[0] = PGmax_new
    PGmin_out[0] = PGmin_new
    n_updates_out[0] = n_updates
    return active_size


def dcd_epoch(Rows X not None, const int64_t[::1] rows, const signed char[::1] y, double[::1] alpha,
              double[::1] w, const double[::1] xnorm, int32_t[::1] index, int64_t active_size, double PGmax_old,
              double PGmin_old, double Cp, double Cn, bint l1_loss, uint64_t[::1] rng, bint shuffle=True):
    """One outer iteration of dual CD with shrinking. Returns (active_size, PGmax_new, PGmin_new, n_updates).

    xnorm[i] = ||x_i||^2 (with bias); QD_i = xnorm[i] + D_ii. `index` holds the active variables first.
    shuffle=False visits index[0:active_size] in its current order (for tests against a reference).
    """
    _check_w(X, w.shape[0], "w")
    cdef int64_t l = y.shape[0]
    if alpha.shape[0] != l or xnorm.shape[0] != l or index.shape[0] != l or rng.shape[0] != 4 or \
            active_size < 0 or active_size > l:
        raise ValueError("dcd_epoch: array sizes disagree")
    cdef const int64_t* r = _rows_ptr(rows)
    cdef double PGmax_new = -INFINITY, PGmin_new = INFINITY
    cdef int64_t n_updates = 0
    if l == 0:
        return active_size, PGmax_new, PGmin_new, n_updates
    with nogil:
        if X.f32:
            active_size = _dcd_pass(&X.v, r, &y[0], &alpha[0], &w[0], &xnorm[0], &index[0], active_size,
                                    PGmax_old, PGmin_old, Cp, Cn, l1_loss, <Rng*>&rng[0], shuffle, &PGmax_new,
                                    &PGmin_new, &n_updates, <float*>NULL)
        else:
            active_size = _dcd_pass(&X.v, r, &y[0], &alpha[0], &w[0], &xnorm[0], &index[0], active_size,
                                    PGmax_old, PGmin_old, Cp, Cn, l1_loss, <Rng*>&rng[0], shuffle, &PGmax_new,
                                    &PGmin_new, &n_updates, <double*>NULL)
    return active_size, PGmax_new, PGmin_new, n_updates


# -- PASSCoDe on N threads (DCDState.run_wild): the exact check at the end ----------------------------------------
cdef enum:
    CHECK_BLOCK = 4096      # gradients computed at once by the exact check
    STALL_EPOCHS = 50       # PASSCoDe's iterations without a new low of PG_max - PG_min before it gives up
                            # (0: after its first iteration, for tests)

cdef double STALL_FACTOR = 0.9      # a new low is below this fraction of the last


cdef void _block_gradients(const RowView* v, const int64_t* r, const signed char* y, const double* alpha,
                           const double* w, const int32_t* index, int64_t t, int64_t send, const double* diag,
                           const double* cost, bint l1_loss, double* grad, int n_threads,
                           value_t* kind) noexcept nogil:
    """grad[s] = y_i w.x_i - 1 + D_ii alpha_i for i = index[t + s], s < send, shared among n_threads threads (each
    value computed by one thread alone)."""
    cdef int64_t s, i
    if n_threads > 1:
        for s in prange(send, num_threads=n_threads, schedule="static"):
            i = index[t + s]
            grad[s] = dual_gradient(y[i] * row_dot(v, _row(r, i), w, kind), alpha[i],
                                    _row_diag(v, _row(r, i), y[i] + 1, l1_loss, diag, cost))
    else:
        for s in range(send):
            i = index[t + s]
            grad[s] = dual_gradient(y[i] * row_dot(v, _row(r, i), w, kind), alpha[i],
                                    _row_diag(v, _row(r, i), y[i] + 1, l1_loss, diag, cost))


cdef void _pg_extremes(const RowView* v, const int64_t* r, const signed char* y, const double* alpha,
                       const double* w, int32_t* order, int64_t l, double Cp, double Cn, bint l1_loss, double* grad,
                       int n_threads, double* PGmax_out, double* PGmin_out, value_t* kind) noexcept nogil:
    """The extremes of the projected gradient over every variable at (alpha, w), exactly (no update in between), by
    blocks of CHECK_BLOCK gradients on n_threads threads; order: l scratch int32, grad: CHECK_BLOCK scratch."""
    cdef double diag[3]
    cdef double upper[3]
    cdef double cost[3]
    cdef double PG, D, PGmax = -INFINITY, PGmin = INFINITY
    cdef int64_t t = 0, send, s, i
    _box(Cp, Cn, l1_loss, diag, upper, cost)
    for i in range(l):
        order[i] = <int32_t>i
    while t < l:
        send = CHECK_BLOCK
        if send > l - t:
            send = l - t
        _block_gradients(v, r, y, alpha, w, order, t, send, diag, cost, l1_loss, grad, n_threads, kind)
        for s in range(send):
            i = t + s
            PG = projected_gradient(grad[s], alpha[i], _row_box(v, _row(r, i), y[i] + 1, l1_loss, diag, upper, cost,
                                                                &D))
            if PG > PGmax:
                PGmax = PG
            if PG < PGmin:
                PGmin = PG
        t += send
    PGmax_out[0] = PGmax
    PGmin_out[0] = PGmin


cdef inline void _set_flag(bint* p, bint value) noexcept nogil:
    p[0] = value


cdef class DCDState:
    """The arrays of one dual CD run, held once so that the outer iterations (`run`) are cheap calls.

    DCDState(X, rows, y, alpha, w, xnorm, index, Cp, Cn, l1_loss, rng): the same computation as dcd_epoch.
    """
    cdef Rows X               # the row view (keeps its arrays alive)
    cdef const int64_t* r
    cdef object keep          # the arrays whose memory the pointers below refer to
    cdef const signed char* y
    cdef double* alpha
    cdef double* w
    cdef const double* xnorm
    cdef int32_t* index
    cdef Rng* g
    cdef double Cp, Cn
    cdef bint l1_loss
    cdef int64_t l
    # LIBLINEAR's outer-loop state, advanced by run()
    cdef readonly int64_t n_iter
    cdef readonly int64_t active_size
    cdef double PGmax_old, PGmin_old
    # PASSCoDe (run_wild): the threads' shares and the exact check's buffers
    cdef readonly int64_t exact_checks
    cdef readonly bint stalled    # run_passcode gave up: no progress in STALL_EPOCHS iterations (see there)
    cdef public bint scout        # run(): a second thread reads the rows ahead of the pass (scout.pxd)
    cdef double best_range
    cdef int64_t since_best
    cdef int64_t n_w
    cdef object wild_keep

    def __init__(self, Rows X not None, rows, y, alpha, w, xnorm, index, double Cp, double Cn, bint l1_loss, rng):
        cdef const int64_t[::1] rw = rows
        cdef const signed char[::1] yy = y
        cdef double[::1] a = alpha
        cdef double[::1] ww = w
        cdef const double[::1] xn = xnorm
        cdef int32_t[::1] idx = index
        cdef uint64_t[::1] st = rng
        if a.shape[0] != yy.shape[0] or xn.shape[0] != yy.shape[0] or idx.shape[0] != yy.shape[0] or \
                st.shape[0] != 4 or (rw.shape[0] and rw.shape[0] != yy.shape[0]):
            raise ValueError("DCDState: array sizes disagree")
        if yy.shape[0] == 0:
            raise ValueError("DCDState: empty problem")
        _check_w(X, ww.shape[0], "w")
        self.X = X
        self.keep = (rows, y, alpha, w, xnorm, index, rng)
        self.r = _rows_ptr(rw)
        self.y = &yy[0]
        self.alpha = &a[0]
        self.w = &ww[0]
        self.xnorm = &xn[0]
        self.index = &idx[0]
        self.g = <Rng*>&st[0]
        self.Cp = Cp
        self.Cn = Cn
        self.l1_loss = l1_loss
        self.l = yy.shape[0]
        self.n_iter = 0
        self.active_size = self.l
        self.PGmax_old = INFINITY
        self.PGmin_old = -INFINITY
        self.exact_checks = 0
        self.stalled = False
        self.best_range = INFINITY
        self.since_best = 0
        self.n_w = ww.shape[0]
        self.wild_keep = None

    cdef inline void _unshrink(self) noexcept nogil:
        """Every variable active again, and no shrinking bound (LIBLINEAR's reset, '*')."""
        self.active_size = self.l
        self.PGmax_old = INFINITY
        self.PGmin_old = -INFINITY

    cdef inline void _next_bounds(self, double PGmax_new, double PGmin_new) noexcept nogil:
        """The next iteration's shrinking bounds: this one's PG extremes, +-inf where they are on the wrong side."""
        self.PGmax_old = PGmax_new if PGmax_new > 0 else INFINITY
        self.PGmin_old = PGmin_new if PGmin_new < 0 else -INFINITY

    def run_passcode(self, int64_t n_epochs, double eps, uint64_t[:, ::1] rngs, bint atomic=True,
                     int64_t stall_epochs=STALL_EPOCHS):
        """Up to n_epochs outer iterations of PASSCoDe (Hsieh, Yu, Dhillon, "PASSCoDe: Parallel ASynchronous
        Stochastic dual Co-ordinate Descent", ICML 2015) on rngs.shape[0] OpenMP threads; returns (converged,
        events) as run() does.

        Problem, step and stopping rule as run()'s (LIBLINEAR 2.50's dual CD). The rows are cut into one share per
        thread (ranges of positions of `index`); in an outer iteration every thread runs _dcd_pass, the one-thread
        iteration (a shuffle of its share's active set from its own RNG state, LIBLINEAR's shrinking within its
        share), over its share at the same time, reading the shared w without a lock and adding into it with atomic
        additions (atomic=True, PASSCoDe-Atomic: no update is lost, w = w(alpha) up to the order of the additions;
        atomic=False, PASSCoDe-Wild: plain additions, which lose updates when two threads write a feature at once).
        The iteration's PG extremes are the threads' together, and LIBLINEAR's rule decides with them. When it holds
        with every variable active, w is made w(alpha) again (serially, in row order) and every gradient taken at it
        (_pg_extremes, on the threads): the run stops only if the rule holds there, so the stopping rule and the
        certificate are exact; else every variable is active again and the run goes on. The reads see the other
        thread's updates as they come, so a run is not repeatable: each model is within the tolerance, not the same
        from run to run. The threads' steps on strongly coupled variables (a bias feature every row shares, a large
        C) can overshoot together and cycle short of a tight eps: with no new low of PG_max - PG_min (below
        STALL_FACTOR times the last) in stall_epochs iterations, the run stops with `stalled` set, and the driver
        goes on with one thread (end_threads, then run()). One thread: run() with that RNG state, bit for bit (its pass and rule, no check)."""
        cdef int64_t T = rngs.shape[0], t, size, total
        cdef double PGmax_new, PGmin_new
        cdef int64_t done = 0
        cdef bint converged = False
        cdef bint f32 = self.X.f32
        cdef const RowView* v = &self.X.v
        if T < 1 or rngs.shape[1] != 4:
            raise ValueError("run_passcode: rngs must be (threads, 4)")
        if self.wild_keep is None or self.wild_keep[0].shape[0] != T + 1:
            start = np.linspace(0, self.l, T + 1).round().astype(np.int64)
            self.wild_keep = (start, np.diff(start), np.zeros(T), np.zeros(T), np.zeros(T, np.int64),
                              np.zeros(self.l, np.int32), np.zeros(CHECK_BLOCK, np.float64))
            self.active_size = self.l
        cdef int64_t[::1] st = self.wild_keep[0]
        cdef int64_t[::1] act = self.wild_keep[1]
        cdef double[::1] pmax = self.wild_keep[2]
        cdef double[::1] pmin = self.wild_keep[3]
        cdef int64_t[::1] nup = self.wild_keep[4]
        cdef int32_t[::1] ov = self.wild_keep[5]
        cdef double[::1] gbuf = self.wild_keep[6]
        events = bytearray(n_epochs + n_epochs // 10 + 2)
        cdef char* ev = events
        cdef int64_t n_ev = 0
        with nogil:
            while done < n_epochs:
                if stop_requested():     # once a pass (cext/_stop.pyx)
                    break
                for t in prange(T, num_threads=T, schedule="static", chunksize=1):
                    if f32:
                        act[t] = _dcd_pass(v, self.r, self.y, self.alpha, self.w, self.xnorm, &self.index[st[t]],
                                           act[t], self.PGmax_old, self.PGmin_old, self.Cp, self.Cn, self.l1_loss,
                                           <Rng*>&rngs[t, 0], True, &pmax[t], &pmin[t], &nup[t], <float*>NULL,
                                           atomic)
                    else:
                        act[t] = _dcd_pass(v, self.r, self.y, self.alpha, self.w, self.xnorm, &self.index[st[t]],
                                           act[t], self.PGmax_old, self.PGmin_old, self.Cp, self.Cn, self.l1_loss,
                                           <Rng*>&rngs[t, 0], True, &pmax[t], &pmin[t], &nup[t], <double*>NULL,
                                           atomic)
                PGmax_new = -INFINITY
                PGmin_new = INFINITY
                total = 0
                for t in range(T):
                    if pmax[t] > PGmax_new:
                        PGmax_new = pmax[t]
                    if pmin[t] < PGmin_new:
                        PGmin_new = pmin[t]
                    total += act[t]
                self.active_size = total
                self.n_iter += 1
                done += 1
                if self.n_iter % 10 == 0:
                    ev[n_ev] = 46        # '.'
                    n_ev += 1
                if PGmax_new - PGmin_new <= eps and fabs(PGmax_new) <= eps and fabs(PGmin_new) <= eps:
                    if total == self.l and T == 1:
                        converged = True         # one thread: run()'s pass and rule
                        break
                    if total == self.l:
                        # w(alpha) again, then the rule with every gradient at it
                        self.exact_checks += 1
                        if f32:
                            _init_w(v, self.r, self.y, self.alpha, self.l, self.w, self.n_w, <float*>NULL)
                            _pg_extremes(v, self.r, self.y, self.alpha, self.w, &ov[0], self.l, self.Cp, self.Cn,
                                         self.l1_loss, &gbuf[0], <int>T, &PGmax_new, &PGmin_new, <float*>NULL)
                        else:
                            _init_w(v, self.r, self.y, self.alpha, self.l, self.w, self.n_w, <double*>NULL)
                            _pg_extremes(v, self.r, self.y, self.alpha, self.w, &ov[0], self.l, self.Cp, self.Cn,
                                         self.l1_loss, &gbuf[0], <int>T, &PGmax_new, &PGmin_new, <double*>NULL)
                        if PGmax_new - PGmin_new <= eps and fabs(PGmax_new) <= eps and fabs(PGmin_new) <= eps:
                            converged = True
                            break
                    for t in range(T):
                        act[t] = st[t + 1] - st[t]
                    self._unshrink()
                    self.best_range = INFINITY
                    self.since_best = 0
                    ev[n_ev] = 42        # '*'
                    n_ev += 1
                    continue
                # the stall guard: no new low of PG_max - PG_min (by STALL_FACTOR) in STALL_EPOCHS iterations
                if PGmax_new - PGmin_new < STALL_FACTOR * self.best_range:
                    self.best_range = PGmax_new - PGmin_new
                    self.since_best = 0
                else:
                    self.since_best += 1
                self._next_bounds(PGmax_new, PGmin_new)
                if T > 1 and self.since_best >= stall_epochs:
                    self.stalled = True
                    break
        check_stop()
        return converged, events[:n_ev].decode("ascii")

    def end_threads(self):
        """After run_passcode: w made w(alpha) again (in row order) and every variable active, so that run() goes
        on from the threads' alpha with the one-thread iteration and its exact rule."""
        if self.X.f32:
            _init_w(&self.X.v, self.r, self.y, self.alpha, self.l, self.w, self.n_w, <float*>NULL)
        else:
            _init_w(&self.X.v, self.r, self.y, self.alpha, self.l, self.w, self.n_w, <double*>NULL)
        self._unshrink()

    cdef bint _epochs(self, int64_t n_epochs, double eps, bint shuffle, char* ev, int64_t* n_ev,
                      int64_t* progress) noexcept nogil:
        """run()'s loop: up to n_epochs outer iterations; returns whether the rule held on every variable.
        progress (NULL: no scout): each pass publishes its position there (_dcd_pass), -1 between passes."""
        cdef double PGmax_new, PGmin_new
        cdef int64_t n_updates, done = 0
        cdef const RowView* v = &self.X.v
        while done < n_epochs:
            if stop_requested():     # once a pass (cext/_stop.pyx)
                break
            if self.X.f32:
                self.active_size = _dcd_pass(v, self.r, self.y, self.alpha, self.w, self.xnorm,
                                             self.index, self.active_size, self.PGmax_old, self.PGmin_old,
                                             self.Cp, self.Cn, self.l1_loss, self.g, shuffle, &PGmax_new,
                                             &PGmin_new, &n_updates, <float*>NULL, False, progress)
            else:
                self.active_size = _dcd_pass(v, self.r, self.y, self.alpha, self.w, self.xnorm,
                                             self.index, self.active_size, self.PGmax_old, self.PGmin_old,
                                             self.Cp, self.Cn, self.l1_loss, self.g, shuffle, &PGmax_new,
                                             &PGmin_new, &n_updates, <double*>NULL, False, progress)
            if progress != NULL:
                LLSVM_STORE_RELAXED(progress, -1)
            self.n_iter += 1
            done += 1
            if self.n_iter % 10 == 0:
                ev[n_ev[0]] = 46        # '.'
                n_ev[0] += 1
            if PGmax_new - PGmin_new <= eps and fabs(PGmax_new) <= eps and fabs(PGmin_new) <= eps:
                if self.active_size == self.l:
                    return True
                self._unshrink()
                ev[n_ev[0]] = 42        # '*'
                n_ev[0] += 1
                continue
            self._next_bounds(PGmax_new, PGmin_new)
        return False

    def run(self, int64_t n_epochs, double eps, bint shuffle=True):
        """Up to n_epochs outer iterations with LIBLINEAR 2.50's stopping rule; returns (converged, events).

        Stop when PG_max - PG_min <= eps and |PG_max| <= eps and |PG_min| <= eps on a pass over all variables;
        when that holds on the shrunk set, reset to all variables ('*') and go on. events is LIBLINEAR's
        progress text for these epochs: '.' at every 10th iteration, '*' at each reset.

        With `scout` set, a second thread runs scout_view (cext/scout.pxd) beside the passes: it only reads, so
        the iterates are one thread's, bit for bit, and the passes wait less on memory.
        """
        cdef bint converged = False
        cdef int64_t progress = -1, t
        events = bytearray(n_epochs + n_epochs // 10 + 2)
        cdef char* ev = events
        cdef int64_t n_ev = 0
        with nogil:
            if self.scout:
                for t in prange(2, num_threads=2, schedule="static", chunksize=1):
                    if t == 0:
                        # (through a pointer: a variable assigned in a prange body is the threads' own)
                        _set_flag(&converged, self._epochs(n_epochs, eps, shuffle, ev, &n_ev, &progress))
                        LLSVM_STORE_RELAXED(&progress, -2)
                    else:
                        scout_view(&self.X.v, self.X.f32, self.r, self.index, self.l, &progress)
            else:
                converged = self._epochs(n_epochs, eps, shuffle, ev, &n_ev, NULL)
        check_stop()
        return converged, events[:n_ev].decode("ascii")


cdef void _violation(const RowView* v, const int64_t* r, const signed char* y, const double* alpha,
                     const double* w, int64_t l, const double* diag, const double* upper, const double* cost,
                     bint l1_loss, double* out, int64_t* nSV_out, value_t* kind) noexcept nogil:
    """out = (max |PG|, loss, sum alpha, sum D alpha^2) and *nSV_out (see dcd_violation)."""
    cdef double G, PG, m = 0.0, margin, xi, loss = 0.0, sum_alpha = 0.0, sum_diag = 0.0, U, D
    cdef int64_t i, row, nSV = 0
    cdef int k
    for i in range(l):
        k = y[i] + 1
        row = _row(r, i)
        U = _row_box(v, row, k, l1_loss, diag, upper, cost, &D)
        margin = y[i] * row_dot(v, row, w, kind)
        xi = 1.0 - margin
        if xi > 0.0:
            loss += row_cost(v, row, cost[k]) * (xi if l1_loss else xi * xi)
        G = dual_gradient(margin, alpha[i], D)
        if alpha[i] <= 0.0:
            PG = G if G < 0.0 else 0.0
        elif alpha[i] >= U:
            PG = G if G > 0.0 else 0.0
        else:
            PG = G
        if fabs(PG) > m:
            m = fabs(PG)
        if alpha[i] > 0.0:
            nSV += 1
            sum_alpha += alpha[i]
            sum_diag += D * alpha[i] * alpha[i]
    out[0] = m
    out[1] = loss
    out[2] = sum_alpha
    out[3] = sum_diag
    nSV_out[0] = nSV


def dcd_violation(Rows X not None, const int64_t[::1] rows, const signed char[::1] y, const double[::1] alpha,
                  const double[::1] w, double Cp, double Cn, bint l1_loss):
    """(max_i |PG_i|, sum_i C_i loss_i, sum_i alpha_i, sum_i D_ii alpha_i^2, nSV) at (alpha, w), in one pass.

    loss_i = max(0, 1 - y_i w.x_i) for the L1 loss, its square for the L2 loss: the primal is w.w/2 + the sum,
    the dual sum alpha - w.w/2 - sum D_ii alpha_i^2 / 2. Nothing is changed (this is the certificate).
    """
    _check_w(X, w.shape[0], "w")
    cdef const int64_t* r = _rows_ptr(rows)
    cdef double diag[3]
    cdef double upper[3]
    cdef double cost[3]
    cdef double out[4]
    cdef int64_t l = y.shape[0], nSV = 0
    if alpha.shape[0] != l:
        raise ValueError("alpha and y differ in length")
    _box(Cp, Cn, l1_loss, diag, upper, cost)
    out[0] = out[1] = out[2] = out[3] = 0.0
    if l == 0:
        return out[0], out[1], out[2], out[3], nSV
    with nogil:
        if X.f32:
            _violation(&X.v, r, &y[0], &alpha[0], &w[0], l, diag, upper, cost, l1_loss, out, &nSV, <float*>NULL)
        else:
            _violation(&X.v, r, &y[0], &alpha[0], &w[0], l, diag, upper, cost, l1_loss, out, &nSV, <double*>NULL)
    return out[0], out[1], out[2], out[3], nSV


# -- CoCoA+: one worker's local solver for one round ------------------------------------------------------------
# Problem (Ma, Smith, Jaggi, Jordan, Richtarik, Takac, ICML 2015, "Adding vs. Averaging in Distributed Primal-Dual
# Optimization", the local subproblem with gamma = 1; Smith et al., JMLR 2018): the rows are split into K parts;
# worker k holds alpha_[k] and receives the broadcast w = sum_j alpha_j y_j x_j; it minimizes over a change d of its
# own variables, with 0 <= alpha_i + d_i <= U_i,
#     sum_{i in P_k} ( 1/2 D_ii (alpha_i + d_i)^2 - d_i ) + w.(A_k d) + (sigma'/2) ||A_k d||^2,
#     A_k d = sum_{i in P_k} d_i y_i x_i,
# (D_ii, U_i as in section 1: -s 3 D_ii = 0, U_i = C_i; -s 1 D_ii = 1/(2 C_i), U_i = inf; C_i through _row_box,
# the class's C times the row's weight with weights, docs/weights.md).
# Update: LIBLINEAR's dual CD on that subproblem, without shrinking. u = w + sigma' A_k d is kept (a private copy of
# w); with beta_i = alpha_i + d_i: G = y_i u.x_i - 1 + D_ii beta_i, PG as dual_step.pxd's projected_gradient, and
# when |PG| > 1e-12, beta_i <- min(max(beta_i - G / (sigma' ||x_i||^2 + D_ii), 0), U_i), u += sigma' (beta_i new -
# beta_i old) y_i x_i. (With sigma' = 1 this is section 1's coordinate step bit for bit: one epoch of a single
# worker is one epoch of dcd_epoch without shrinking.)
# Stopping rule: none here: exactly `epochs` (H) passes, each over a fresh random permutation of the worker's rows
# (rng_shuffle of index, which starts as 0..l-1 each round, as DCDState shuffles it); the client (llsvm/solvers/
# cocoa.py) stops on LIBLINEAR's projected-gradient rule over all workers, from the sums returned here.
# Before the epochs, one pass at the broadcast (w, alpha) gives that rule's PG max / min over the worker's rows and
# the certificate's partial sums: sum alpha_i, sum D_ii alpha_i^2, sum C_i loss(1 - y_i w.x_i) (hinge or squared
# hinge), and ||x_i||^2 (no separate sq_norms pass). After them, one pass gives dw = A_k d = sum (beta_i - alpha_i)
# y_i x_i over the rows that moved (d_i exactly as the difference the client's alpha takes).
cdef void _cocoa_local(const RowView* v, const int64_t* r, const signed char* y, const double* alpha,
                       const double* w, double* beta, double* dw, double* u, double* QD, int32_t* index,
                       int64_t l, int64_t n_w, double sigma, double Cp, double Cn, bint l1_loss, int64_t epochs,
                       Rng* g, bint shuffle, double* out, value_t* kind) noexcept nogil:
    """beta (the new alpha_[k]), dw and out = (PG max, PG min, sum alpha, sum D alpha^2, loss); see above."""
    cdef double diag[3]
    cdef double upper[3]
    cdef double cost[3]
    cdef double G, PG, margin, xi, beta_old, d, D, U
    cdef double PGmax = -INFINITY, PGmin = INFINITY, sum_alpha = 0.0, sum_diag = 0.0, loss = 0.0
    cdef int64_t i, j, s, e, row
    cdef int k, yi
    _box(Cp, Cn, l1_loss, diag, upper, cost)
    # the pass at the broadcast (w, alpha): the stopping rule's PG extremes and the certificate's sums
    for i in range(l):
        row = _row(r, i)
        k = y[i] + 1
        U = _row_box(v, row, k, l1_loss, diag, upper, cost, &D)      # the class's, or C_i's with weights
        margin = y[i] * row_dot(v, row, w, kind)
        xi = 1.0 - margin
        if xi > 0.0:
            loss += row_cost(v, row, cost[k]) * (xi if l1_loss else xi * xi)
        PG = projected_gradient(dual_gradient(margin, alpha[i], D), alpha[i], U)
        if PG > PGmax:
            PGmax = PG
        if PG < PGmin:
            PGmin = PG
        sum_alpha += alpha[i]
        sum_diag += D * alpha[i] * alpha[i]
        QD[i] = sigma * row_sq_norm(v, row, kind)
        beta[i] = alpha[i]
        index[i] = <int32_t>i
    out[0] = PGmax
    out[1] = PGmin
    out[2] = sum_alpha
    out[3] = sum_diag
    out[4] = loss
    # H epochs of dual CD on the local subproblem, u = w + sigma' A_k d
    for j in range(n_w):
        u[j] = w[j]
    for e in range(epochs):
        if stop_requested():     # once a pass (cext/_stop.pyx)
            break
        if shuffle:
            rng_shuffle(g, index, l)
        for s in range(l):
            i = index[s]
            prefetch_visits(v, r, index, s, l, y, beta, QD, kind)
            row = _row(r, i)
            yi = y[i]
            k = yi + 1
            U = _row_box(v, row, k, l1_loss, diag, upper, cost, &D)
            G = dual_gradient(yi * row_dot(v, row, u, kind), beta[i], D)
            PG = projected_gradient(G, beta[i], U)
            if fabs(PG) > 1.0e-12:
                beta_old = beta[i]
                beta[i] = dual_step(G, beta_old, QD[i], D, U)
                row_axpy(v, row, sigma * (beta[i] - beta_old) * yi, u, kind)
    # dw = A_k d, d = beta - alpha, rows in order
    for j in range(n_w):
        dw[j] = 0.0
    for i in range(l):
        d = beta[i] - alpha[i]
        if d != 0.0:
            row_axpy(v, _row(r, i), d * y[i], dw, kind)


def cocoa_local(Rows X not None, const int64_t[::1] rows, const signed char[::1] y, const double[::1] alpha,
                const double[::1] w, double sigma, double Cp, double Cn, bint l1_loss, int64_t epochs,
                uint64_t[::1] rng, double[::1] alpha_new, double[::1] dw, bint shuffle=True):
    """One CoCoA+ round of one worker (see the comment above): `epochs` passes of dual CD on the local subproblem
    from the broadcast w over the worker's rows (X, rows) with labels y and dual variables alpha.

    alpha and w are read only. Written: alpha_new (the worker's new alpha, alpha + d), dw (A_k d = sum_i d_i y_i x_i,
    w's size) and rng (advanced in place: one shuffle per epoch; shuffle=False visits the rows in order). Returns
    (PG max, PG min, sum alpha, sum D_ii alpha_i^2, sum C_i loss_i) over the worker's rows at (w, alpha), the round's
    START: PG of the dual minimization problem, loss_i = max(0, 1 - y_i w.x_i) (-s 3) or its square (-s 1).
    epochs = 0: only those figures (alpha_new = alpha, dw = 0). Rows with weights (docs/weights.md): C_i = C_{y_i}
    W_i in U_i, D_ii and the loss (rowview.row_cost).
    """
    _check_w(X, w.shape[0], "w")
    cdef int64_t l = y.shape[0], n_w = w.shape[0]
    if alpha.shape[0] != l or alpha_new.shape[0] != l or dw.shape[0] != n_w or rng.shape[0] != 4 or \
            (rows.shape[0] and rows.shape[0] != l) or epochs < 0:
        raise ValueError("cocoa_local: array sizes disagree")
    if l >= 2147483647:
        raise ValueError("cocoa_local: a worker holds at most 2^31 - 2 rows")
    if not sigma > 0.0:
        raise ValueError("cocoa_local: sigma' must be positive")
    cdef double out[5]
    out[0] = -INFINITY
    out[1] = INFINITY
    out[2] = out[3] = out[4] = 0.0
    if l == 0:
        dw[:] = 0.0
        return out[0], out[1], out[2], out[3], out[4]
    u = np.empty(max(n_w, 1), np.float64)
    QD = np.empty(l, np.float64)
    index = np.empty(l, np.int32)
    cdef double[::1] uu = u
    cdef double[::1] qd = QD
    cdef int32_t[::1] idx = index
    cdef const int64_t* r = _rows_ptr(rows)
    with nogil:
        if X.f32:
            _cocoa_local(&X.v, r, &y[0], &alpha[0], _ptr(w), &alpha_new[0], _ptr(dw), &uu[0], &qd[0], &idx[0], l,
                         n_w, sigma, Cp, Cn, l1_loss, epochs, <Rng*>&rng[0], shuffle, out, <float*>NULL)
        else:
            _cocoa_local(&X.v, r, &y[0], &alpha[0], _ptr(w), &alpha_new[0], _ptr(dw), &uu[0], &qd[0], &idx[0], l,
                         n_w, sigma, Cp, Cn, l1_loss, epochs, <Rng*>&rng[0], shuffle, out, <double*>NULL)
    check_stop()
    return out[0], out[1], out[2], out[3], out[4]


cdef void _xv(const RowView* v, const int64_t* r, const double* v_in, double* out, int64_t l,
              value_t* kind) noexcept nogil:
    cdef int64_t i
    for i in range(l):
        out[i] = row_dot(v, _row(r, i), v_in, kind)


def xv(Rows X not None, const int64_t[::1] rows, const double[::1] v_in, double[::1] out):
    """out[i] = x_rows[i] . v (with the bias coordinate)."""
    _check_w(X, v_in.shape[0], "v")
    cdef const int64_t* r = _rows_ptr(rows)
    cdef int64_t l = out.shape[0]
    if l == 0:
        return
    with nogil:
        if X.f32:
            _xv(&X.v, r, &v_in[0], &out[0], l, <float*>NULL)
        else:
            _xv(&X.v, r, &v_in[0], &out[0], l, <double*>NULL)


cdef void _sub_xtv(const RowView* v, const int64_t* r, const int32_t* I, int64_t n_I, const double* coef,
                   double* out, int64_t n_out, value_t* kind) noexcept nogil:
    cdef int64_t k
    for k in range(n_out):
        out[k] = 0.0
    for k in range(n_I):
        row_axpy(v, _row(r, I[k]), coef[k], out, kind)


def sub_xtv(Rows X not None, const int64_t[::1] rows, const int32_t[::1] I, const double[::1] coef,
            double[::1] out):
    """out = sum_k coef[k] x_rows[I[k]] (out zeroed first): X_I^T coef."""
    _check_w(X, out.shape[0], "out")
    if coef.shape[0] < I.shape[0]:
        raise ValueError("coef is shorter than I")
    cdef const int64_t* r = _rows_ptr(rows)
    cdef int64_t n_I = I.shape[0]
    if out.shape[0] == 0:
        return
    with nogil:
        if X.f32:
            _sub_xtv(&X.v, r, &I[0] if n_I else NULL, n_I, &coef[0] if n_I else NULL, &out[0], out.shape[0],
                     <float*>NULL)
        else:
            _sub_xtv(&X.v, r, &I[0] if n_I else NULL, n_I, &coef[0] if n_I else NULL, &out[0], out.shape[0],
                     <double*>NULL)


# -- the Newton method of -s 0, -s 2 and -s 11 (LIBLINEAR's NEWTON with l2r_lr_fun, l2r_l2_svc_fun, l2r_l2_svr_fun) --
# Problem: min_w f(w) = 1/2 w.w + sum_i C_i loss(w.x_i), loss the logistic loss (-s 0), the squared hinge (-s 2) or
# the squared epsilon-insensitive loss (-s 11). Update: w += alpha s, s from preconditioned CG on H s = -g (H the
# (generalized) Hessian), alpha the first of 1, 1/2, 1/4, ... (at most 20) with the Armijo condition
# f(w + alpha s) - f(w) <= 0.01 alpha g.s. Stopping rule (the driver's): |g| <= eps |g(0)|.
# Galli & Lin, "A study on truncated Newton methods for linear classification", IEEE TNNLS 2021; Lin, Weng &
# Keerthi, JMLR 2008.
#
# The order of every sum: LIBLINEAR's. Its iterates decide the printed lines (f, |g|, CG steps, step size), and a
# Newton iteration amplifies a last-bit difference (a CG stopping test or an Armijo test that lands on the other
# side) into a different step, so the same arithmetic in the same order is the only way to print its lines:
# - x_i . v: one running sum over the row's entries, the bias last (row_dot_inorder); X^T v: row after row, each
#   row added entry by entry (row_axpy), rows in the problem's order (the driver gives LIBLINEAR's class grouping);
#   two rows' running sums are interleaved (row_dot_inorder2: two independent chains of additions instead of one,
#   each still in its row's order) and the rows of I are prefetched ROWS_AHEAD ahead: the same sums, faster
#   (-s 2 30 %, -s 0 24 % on the generated sparse set, seed 2);
# - w.w and the line search's s.s, w.s, g.s: one running sum from coordinate 0 up; the loss: one running sum over
#   the rows of C_i loss_i with LIBLINEAR's expressions (C_i d d; C_i log(1 + exp(-z)) or C_i (-z + log(1 + exp(z)));
#   C_i (d -+ p)^2 as (C_i (d -+ p)) (d -+ p));
# - the line search updates w.w and X w incrementally (w.w += alpha^2 s.s + 2 alpha w.s, Xw += alpha X s) as
#   LIBLINEAR does, instead of recomputing them at the new w;
# - the preconditioner's diagonal adds x_ij^2 C_i D_i (x_ij^2 C_i 2 for the squared losses) in that order;
# - CG's inner products sum five products at a time (x0 y0 + ... + x4 y4 added to the total) and then the rest,
#   as the reference BLAS ddot does; |g| is the scaled two-norm of the reference dnrm2 (from the last coordinate
#   down, scale and sum of squares).
# (The compilers round the same: neither build enables FMA contraction, setup.py and LIBLINEAR use -O3 without
# -march.)
cdef double _ddot(const double* x, const double* y, int64_t n) noexcept nogil:
    """x . y in the reference BLAS ddot's grouping: the sum of five products added to the total, then the rest."""
    cdef int64_t i = 0
    cdef double t = 0.0
    while i < n - 4:
        t += x[i] * y[i] + x[i + 1] * y[i + 1] + x[i + 2] * y[i + 2] + x[i + 3] * y[i + 3] + x[i + 4] * y[i + 4]
        i += 5
    while i < n:
        t += x[i] * y[i]
        i += 1
    return t


cdef double _dnrm2(const double* x, int64_t n) noexcept nogil:
    """sqrt(x . x) by the reference BLAS dnrm2's scaled sum of squares, from the last coordinate down."""
    cdef int64_t i
    cdef double scale = 0.0, ssq = 1.0, a, t
    if n <= 0:
        return 0.0
    if n == 1:
        return fabs(x[0])
    i = n - 1
    while i >= 0:
        if x[i] != 0.0:
            a = fabs(x[i])
            if scale < a:
                t = scale / a
                ssq = ssq * (t * t) + 1.0
                scale = a
            else:
                t = a / scale
                ssq += t * t
        i -= 1
    return scale * sqrt(ssq)


def ddot(const double[::1] x, const double[::1] y):
    """x . y in the reference BLAS ddot's grouping (the kernels' _ddot)."""
    cdef int64_t n = x.shape[0]
    cdef double t = 0.0
    if y.shape[0] != n:
        raise ValueError("ddot: x and y differ in length")
    if n == 0:
        return t
    with nogil:
        t = _ddot(&x[0], &y[0], n)
    return t


def dot_inorder(const double[::1] x, const double[::1] y):
    """x . y summed from the first coordinate to the last (the Newton kernels' w.w, s.w, s.g)."""
    cdef int64_t i, n = x.shape[0]
    cdef double t = 0.0
    if y.shape[0] != n:
        raise ValueError("dot_inorder: x and y differ in length")
    with nogil:
        for i in range(n):
            t += x[i] * y[i]
    return t


def dnrm2(const double[::1] x):
    """The two-norm of x as the reference BLAS dnrm2 computes it (LIBLINEAR's |g|)."""
    cdef int64_t n = x.shape[0]
    cdef double norm = 0.0
    if n == 0:
        return norm
    with nogil:
        norm = _dnrm2(&x[0], n)
    return norm


cdef enum:
    ROWS_AHEAD = 4      # the Newton products' row loops over I prefetch the row this many places ahead


cdef void _hv(const RowView* v, const int64_t* r, const int32_t* I, int64_t n_I, const double* C,
              const double* s, double* out, int64_t n_out, value_t* kind, double* xs_out=NULL) noexcept nogil:
    """out = sum_{k} C_{I[k]} (x_{I[k]} . s) x_{I[k]}, rows in I's order, each product as LIBLINEAR's Hv takes it;
    xs_out (not NULL): xs_out[k] = x_{I[k]} . s as well (the threaded Newton's X d, kept for X s)."""
    cdef int64_t k, i, j
    cdef double xs, xs_j
    cdef bint ahead = rows_worth_prefetching(v)
    for k in range(n_out):
        out[k] = 0.0
    k = 0
    while k + 1 < n_I:              # two rows' dot products at once (s is not out: the same sums as one by one)
        if ahead and k + ROWS_AHEAD + 1 < n_I:      # the pair after next (rows of I are apart: each start is a miss)
            prefetch_row(v, _row(r, I[k + ROWS_AHEAD]), kind)
            prefetch_row(v, _row(r, I[k + ROWS_AHEAD + 1]), kind)
        i = _row(r, I[k])
        j = _row(r, I[k + 1])
        row_dot_inorder2(v, i, j, s, &xs, &xs_j, kind)
        if xs_out != NULL:
            xs_out[k] = xs
            xs_out[k + 1] = xs_j
        row_axpy(v, i, C[I[k]] * xs, out, kind)
        row_axpy(v, j, C[I[k + 1]] * xs_j, out, kind)
        k += 2
    if k < n_I:
        i = _row(r, I[k])
        xs = row_dot_inorder(v, i, s, kind)
        if xs_out != NULL:
            xs_out[k] = xs
        row_axpy(v, i, C[I[k]] * xs, out, kind)


def l2svc_hv(Rows X not None, const int64_t[::1] rows, const int32_t[::1] I, const double[::1] C,
             const double[::1] s, double[::1] out):
    """out = sum_{i in I} C_i (x_i . s) x_i (the data part of the squared hinge's generalized Hessian times s)."""
    _check_w(X, out.shape[0], "out")
    _check_w(X, s.shape[0], "s")
    cdef const int64_t* r = _rows_ptr(rows)
    cdef int64_t n_I = I.shape[0]
    if out.shape[0] == 0:
        return
    with nogil:
        if X.f32:
            _hv(&X.v, r, &I[0] if n_I else NULL, n_I, &C[0] if n_I else NULL, &s[0], &out[0], out.shape[0],
                <float*>NULL)
        else:
            _hv(&X.v, r, &I[0] if n_I else NULL, n_I, &C[0] if n_I else NULL, &s[0], &out[0], out.shape[0],
                <double*>NULL)


cdef void _hess(const RowView* v, const int64_t* r, const int32_t* I, int64_t n_I, const double* c, double factor,
                bint regularize_bias, const double* s, double* Hs, int64_t n, value_t* kind) noexcept nogil:
    """Hs = s + factor sum_{i in I} c_i (x_i . s) x_i, the bias's own term dropped when it is not regularized."""
    cdef int64_t k
    _hv(v, r, I, n_I, c, s, Hs, n, kind)
    for k in range(n):
        Hs[k] = s[k] + factor * Hs[k]
    if not regularize_bias:
        Hs[n - 1] -= s[n - 1]


cdef int64_t _pcg(const RowView* v, const int64_t* r, const int32_t* I, int64_t n_I, const double* c,
                  double factor, bint regularize_bias, const double* g, const double* M, double* s, double* res,
                  double eps_cg, double* d, double* Hd, double* z, int64_t n, int* flags,
                  value_t* kind) noexcept nogil:
    """NEWTON::pcg: CG on H s = -g preconditioned by M, stopped by the quadratic model's decrease (see pcg)."""
    cdef int64_t i, cg_iter = 0, max_cg_iter = n if n > 5 else 5
    cdef double zTr, znewTrnew, alpha, beta, cgtol, dHd, Q = 0.0, newQ, Qdiff, gMinv_norm
    for i in range(n):
        s[i] = 0.0
        res[i] = -g[i]
        z[i] = res[i] / M[i]
        d[i] = z[i]
    zTr = _ddot(z, res, n)
    gMinv_norm = sqrt(zTr)
    cgtol = sqrt(gMinv_norm)
    if eps_cg < cgtol:
        cgtol = eps_cg
    flags[0] = 0
    while cg_iter < max_cg_iter:
        if stop_requested():            # a Hessian-vector product a step (cext/_stop.pyx)
            break
        cg_iter += 1
        _hess(v, r, I, n_I, c, factor, regularize_bias, d, Hd, n, kind)
        dHd = _ddot(d, Hd, n)
        if dHd <= 1.0e-16:
            break
        alpha = zTr / dHd
        if alpha != 0.0:                # the reference daxpy leaves y alone for a zero multiplier
            for i in range(n):
                s[i] += alpha * d[i]
            for i in range(n):
                res[i] -= alpha * Hd[i]
        newQ = -0.5 * (_ddot(s, res, n) - _ddot(s, g, n))
        Qdiff = newQ - Q
        if newQ <= 0 and Qdiff <= 0:
            if cg_iter * Qdiff >= cgtol * newQ:
                break
        else:
            flags[0] |= 1
            break
        Q = newQ
        for i in range(n):
            z[i] = res[i] / M[i]
        znewTrnew = _ddot(z, res, n)
        beta = znewTrnew / zTr
        for i in range(n):
            d[i] = beta * d[i] + z[i]
        zTr = znewTrnew
    if cg_iter == max_cg_iter:
        flags[0] |= 2
    return cg_iter


def pcg(Rows X not None, const int64_t[::1] rows, const int32_t[::1] I, const double[::1] c, double factor,
        bint regularize_bias, const double[::1] g, const double[::1] M, double[::1] s, double[::1] r,
        double eps_cg):
    """Preconditioned CG for H s = -g, H = I + factor X_I^T diag(c) X_I (LIBLINEAR 2.50's NEWTON::pcg, with its
    quadratic-model stopping rule and at most max(n, 5) steps). s and r (the residual) receive the result.
    Returns (CG steps, flags): flag 1 = the quadratic model was positive or increasing, 2 = the step limit."""
    cdef int64_t n = g.shape[0]
    cdef int flags = 0
    cdef int64_t it
    _check_w(X, n, "g")
    if M.shape[0] != n or s.shape[0] != n or r.shape[0] != n:
        raise ValueError("pcg: g, M, s and r must have the same size")
    if n != X.v.n_features + (1 if X.v.bias >= 0 else 0):
        raise ValueError("pcg: the vectors must have the view's features and bias")
    work = np.empty((3, n), np.float64)
    cdef double[:, ::1] wk = work
    cdef const int64_t* rr = _rows_ptr(rows)
    cdef int64_t n_I = I.shape[0]
    cdef const int32_t* Ip = &I[0] if n_I else NULL
    cdef const double* cp = &c[0] if c.shape[0] else NULL
    with nogil:
        if X.f32:
            it = _pcg(&X.v, rr, Ip, n_I, cp, factor, regularize_bias, &g[0], &M[0], &s[0], &r[0], eps_cg,
                      &wk[0, 0], &wk[1, 0], &wk[2, 0], n, &flags, <float*>NULL)
        else:
            it = _pcg(&X.v, rr, Ip, n_I, cp, factor, regularize_bias, &g[0], &M[0], &s[0], &r[0], eps_cg,
                      &wk[0, 0], &wk[1, 0], &wk[2, 0], n, &flags, <double*>NULL)
    check_stop()
    return it, flags


cdef inline void _diag_row(const RowView* v, int64_t i, double c, double d, double* out,
                           value_t* kind) noexcept nogil:
    """out[j] += x_ij^2 c d over row i, multiplied in that order (the bias coordinate too): one row of _diag."""
    cdef const int32_t* ix = row_indices(v, i)
    cdef const value_t* x = row_values(v, i, kind)
    cdef int64_t p
    cdef double xv
    for p in range(v.indptr[i], v.indptr[i + 1]):
        xv = x[p]
        out[ix[p]] += xv * xv * c * d
    if v.bias >= 0:
        out[v.n_features] += v.bias * v.bias * c * d


cdef void _diag(const RowView* v, const int64_t* r, const int32_t* I, int64_t n_I, const double* C,
                const double* D, double* out, value_t* kind) noexcept nogil:
    """out[j] += x_ij^2 C_i D_i over i in I (D NULL: D_i = 2), multiplied in that order (the bias coordinate too)."""
    cdef int64_t k, q
    cdef bint ahead = rows_worth_prefetching(v)
    for k in range(n_I):
        if ahead and k + ROWS_AHEAD < n_I:
            prefetch_row(v, _row(r, I[k + ROWS_AHEAD]), kind)
        q = I[k]
        _diag_row(v, _row(r, q), C[q], D[q] if D != NULL else 2.0, out, kind)


def l2svc_diag(Rows X not None, const int64_t[::1] rows, const int32_t[::1] I, const double[::1] C,
               double[::1] out):
    """out[j] += 2 sum_{i in I} C_i x_ij^2 (the preconditioner's data part; out holds its initial value)."""
    _check_w(X, out.shape[0], "out")
    cdef const int64_t* r = _rows_ptr(rows)
    cdef int64_t n_I = I.shape[0]
    if n_I == 0:
        return
    with nogil:
        if X.f32:
            _diag(&X.v, r, &I[0], n_I, &C[0], NULL, &out[0], <float*>NULL)
        else:
            _diag(&X.v, r, &I[0], n_I, &C[0], NULL, &out[0], <double*>NULL)


cdef enum:
    LOSS_LR = 0
    LOSS_L2SVC = 2
    LOSS_L2SVR = 11


cdef struct NewtonProblem:
    const RowView* v
    const int64_t* r
    int64_t l
    int64_t n               # the weight vector's size (the bias coordinate last)
    int loss                # LOSS_LR, LOSS_L2SVC or LOSS_L2SVR
    const double* y         # +1/-1 (classification) or the targets (regression)
    const double* C         # C_i of every row
    double p                # -s 11's tube
    bint regularize_bias
    double* wx              # X w at the current w
    double* tmp             # X s in the line search; the gradient's row coefficients
    double* D               # -s 0: sigma_i (1 - sigma_i)
    double* CD              # -s 0: C_i D_i, the Hessian's row weights
    int32_t* I              # the Hessian's rows (-s 2, 11: the rows with a loss; -s 0: every row)
    int64_t sizeI
    double* diag            # diag(H) at I (with the identity's 1s), from _nf_grad's pass
    bint diag_ok            # diag is the current I's (set by _nf_grad, cleared whenever I is made again)
    double wTw              # w.w at the current w (without an unregularized bias)


cdef inline double _c_loss(const NewtonProblem* P, int64_t i, double wx_i) noexcept nogil:
    """C_i loss_i at w.x_i = wx_i, LIBLINEAR's C_times_loss expressions."""
    cdef double d, z
    if P.loss == LOSS_L2SVC:
        d = 1.0 - P.y[i] * wx_i
        if d > 0:
            return P.C[i] * d * d
        return 0.0
    if P.loss == LOSS_LR:
        z = wx_i * P.y[i]
        if z >= 0:
            return P.C[i] * log(1.0 + exp(-z))
        return P.C[i] * (-z + log(1.0 + exp(z)))
    d = wx_i - P.y[i]
    if d < -P.p:
        return P.C[i] * (d + P.p) * (d + P.p)
    if d > P.p:
        return P.C[i] * (d - P.p) * (d - P.p)
    return 0.0


cdef void _rows_dot(NewtonProblem* P, const double* w, double* out, value_t* kind) noexcept nogil:
    """out[i] = x_i . w for every row, each as row_dot_inorder sums it, two rows at a time (row_dot_inorder2)."""
    cdef int64_t i = 0
    while i + 1 < P.l:
        row_dot_inorder2(P.v, _row(P.r, i), _row(P.r, i + 1), w, &out[i], &out[i + 1], kind)
        i += 2
    if i < P.l:
        out[i] = row_dot_inorder(P.v, _row(P.r, i), w, kind)


cdef double _nf_loss(NewtonProblem* P, const double* w, value_t* kind) noexcept nogil:
    """sum_i C_i loss_i at w, in row order; sets X w (f's data part)."""
    _rows_dot(P, w, P.wx, kind)
    return _nf_loss_wx(P)


cdef double _nf_loss_wx(const NewtonProblem* P) noexcept nogil:
    """sum_i C_i loss_i at the X w held (P.wx), in row order."""
    cdef int64_t i
    cdef double f = 0.0
    for i in range(P.l):
        f += _c_loss(P, i, P.wx[i])
    return f


cdef void _nf_carry(NewtonProblem* P, double carry, const double* xd) noexcept nogil:
    """X s (tmp) += carry X d (xd): the step CG took along its last direction, into the X s kept for the line
    search (hv_rows_kept, line_losses_kept)."""
    cdef int64_t i
    for i in range(P.l):
        P.tmp[i] += carry * xd[i]


cdef double _nf_fun(NewtonProblem* P, const double* w, value_t* kind) noexcept nogil:
    """f(w); sets X w and w.w (l2r_erm_fun::fun)."""
    cdef int64_t i
    cdef double f, wTw = 0.0
    for i in range(P.n):
        wTw += w[i] * w[i]
    if not P.regularize_bias:
        wTw -= w[P.n - 1] * w[P.n - 1]
    P.wTw = wTw
    f = _nf_loss(P, w, kind)
    return f + 0.5 * wTw


cdef void _nf_grad_rows(NewtonProblem* P, double* g, value_t* kind) noexcept nogil:
    """g = sum_{i in I} coef_i x_i at the X w of the last fun/line search (the gradient's data part before its
    factor), and the Hessian's rows I and weights there."""
    _nf_grad_diag_rows(P, g, NULL, kind)


cdef void _nf_grad_diag_rows(NewtonProblem* P, double* g, double* M, value_t* kind) noexcept nogil:
    """_nf_grad_rows and then (M not NULL) _diag over its rows into M, in one pass over the rows: each sum gets the
    same terms in the same order as the two passes give it (bit for bit), each row read once."""
    cdef int64_t i, k, q, p
    for i in range(P.n):
        g[i] = 0.0
    k = _nf_coefs(P)
    cdef bint ahead = rows_worth_prefetching(P.v)
    for p in range(k):
        if ahead and p + ROWS_AHEAD < k:
            prefetch_row(P.v, _row(P.r, P.I[p + ROWS_AHEAD]), kind)
        q = P.I[p]
        i = _row(P.r, q)
        row_axpy(P.v, i, P.tmp[p], g, kind)
        if M != NULL:
            _diag_row(P.v, i, P.C[q], P.D[q] if P.loss == LOSS_LR else 2.0, M, kind)


cdef int64_t _nf_coefs(NewtonProblem* P) noexcept nogil:
    """The gradient's row coefficients (tmp), the Hessian's rows I and weights at the X w of the last fun/line
    search; returns the number of rows in I."""
    cdef int64_t i, k = 0
    cdef double t, d
    P.diag_ok = False
    if P.loss == LOSS_LR:
        for i in range(P.l):
            t = 1.0 / (1.0 + exp(-P.y[i] * P.wx[i]))
            P.D[i] = t * (1.0 - t)
            P.CD[i] = P.C[i] * P.D[i]
            P.tmp[i] = P.C[i] * (t - 1.0) * P.y[i]
            P.I[i] = <int32_t>i
        k = P.l
    elif P.loss == LOSS_L2SVC:
        for i in range(P.l):
            t = P.wx[i] * P.y[i]
            if t < 1:
                P.tmp[k] = P.C[i] * P.y[i] * (t - 1.0)
                P.I[k] = <int32_t>i
                k += 1
    else:
        for i in range(P.l):
            d = P.wx[i] - P.y[i]
            if d < -P.p:
                P.tmp[k] = P.C[i] * (d + P.p)
                P.I[k] = <int32_t>i
                k += 1
            elif d > P.p:
                P.tmp[k] = P.C[i] * (d - P.p)
                P.I[k] = <int32_t>i
                k += 1
    P.sizeI = k
    return k


cdef void _nf_grad(NewtonProblem* P, const double* w, double* g, value_t* kind) noexcept nogil:
    """g = grad f(w) at the w of the last fun/line search, and the Hessian's rows and weights there; in the same
    pass over the rows, the preconditioner's diagonal there (P.diag: _nf_precond's M before its mix, the same sums
    bit for bit), which the next _nf_precond takes instead of a pass of its own."""
    cdef int64_t i
    cdef double two = 1.0 if P.loss == LOSS_LR else 2.0
    _nf_diag_start(P, P.diag)
    _nf_grad_diag_rows(P, g, P.diag, kind)
    P.diag_ok = True
    for i in range(P.n):
        g[i] = w[i] + two * g[i]
    if not P.regularize_bias:
        g[P.n - 1] -= w[P.n - 1]


cdef void _nf_precond(NewtonProblem* P, double* M, double alpha_pcg, value_t* kind) noexcept nogil:
    """M = (1 - alpha_pcg) + alpha_pcg diag(H) (get_diag_preconditioner, then NEWTON's mix with the identity)."""
    cdef int64_t i
    if P.diag_ok:
        for i in range(P.n):
            M[i] = P.diag[i]
    else:
        _nf_diag_start(P, M)
        _diag(P.v, P.r, P.I, P.sizeI, P.C, P.D if P.loss == LOSS_LR else NULL, M, kind)
    for i in range(P.n):
        M[i] = (1.0 - alpha_pcg) + alpha_pcg * M[i]


cdef void _nf_diag_start(NewtonProblem* P, double* M) noexcept nogil:
    """M = the identity's diagonal, the bias's 0 when it is not regularized: where diag(H)'s sums start."""
    cdef int64_t i
    for i in range(P.n):
        M[i] = 1.0
    if not P.regularize_bias and P.n:
        M[P.n - 1] = 0.0


cdef void _nf_xs(NewtonProblem* P, const double* s, value_t* kind) noexcept nogil:
    """tmp = X s (the line search's direction over the rows)."""
    _rows_dot(P, s, P.tmp, kind)


cdef double _nf_loss_at(NewtonProblem* P, double alpha) noexcept nogil:
    """sum_i C_i loss_i at X (w + alpha s) = X w + alpha X s (X s in tmp), in row order."""
    cdef int64_t i
    cdef double loss = 0.0
    for i in range(P.l):
        loss += _c_loss(P, i, P.tmp[i] * alpha + P.wx[i])
    return loss


cdef double _nf_linesearch(NewtonProblem* P, double* w, const double* s, double* f, const double* g,
                           double alpha, value_t* kind) noexcept nogil:
    """Backtracking on f(w + alpha s) from X s, with w.w and X w updated incrementally
    (l2r_erm_fun::linesearch_and_update). Returns the step (0: none of the 20 tries passed, w unchanged)."""
    cdef int64_t i, tries
    cdef double sTs = 0.0, wTs = 0.0, gTs = 0.0, loss, fold = f[0], eta = 0.01
    _nf_xs(P, s, kind)
    for i in range(P.n):
        sTs += s[i] * s[i]
        wTs += s[i] * w[i]
        gTs += s[i] * g[i]
    if not P.regularize_bias:
        sTs -= s[P.n - 1] * s[P.n - 1]
        wTs -= s[P.n - 1] * w[P.n - 1]
    for tries in range(20):
        loss = _nf_loss_at(P, alpha)
        f[0] = loss + (alpha * alpha * sTs + P.wTw) / 2.0 + alpha * wTs
        if f[0] - fold <= eta * alpha * gTs:
            for i in range(P.l):
                P.wx[i] += alpha * P.tmp[i]
            for i in range(P.n):
                w[i] += alpha * s[i]
            P.wTw += alpha * alpha * sTs + 2 * alpha * wTs
            return alpha
        alpha *= 0.5
    f[0] = fold
    return 0.0


cdef inline double* _ptr(const double[::1] a) noexcept nogil:
    """The first element's address, NULL for an empty vector (a problem without features or bias)."""
    return <double*>&a[0] if a.shape[0] else NULL


cdef class NewtonFun:
    """One problem of -s 0, -s 2 or -s 11 as LIBLINEAR's l2r_*_fun holds it: the rows, their labels or targets, C_i,
    and the state the Newton loop carries (X w, w.w, the Hessian's rows and weights).

    NewtonFun(X, rows, loss, y, C, p, regularize_bias): loss 0 (logistic), 2 (squared hinge) or 11 (squared
    epsilon-insensitive, tube p); y float64 (+1/-1, or the targets); C float64 per row. The methods are the
    pieces of the Newton loop, each one kernel call: fun, grad, preconditioner, pcg, linesearch.
    """
    cdef Rows X
    cdef NewtonProblem P
    cdef object keep
    cdef readonly object wx        # X w (float64, one per row), for the driver's certificate
    cdef object work               # CG's d, Hd, z, and P.diag
    cdef object xd                 # hv_rows_kept's x_i . d (allocated by its first call)

    def __init__(self, Rows X not None, rows, int loss, y, C, double p, bint regularize_bias):
        cdef const int64_t[::1] rw = rows
        cdef const double[::1] yy = y
        cdef const double[::1] cc = C
        cdef int64_t l = yy.shape[0]
        cdef int64_t n = X.v.n_features + (1 if X.v.bias >= 0 else 0)
        if loss not in (LOSS_LR, LOSS_L2SVC, LOSS_L2SVR):
            raise ValueError(f"NewtonFun: unknown loss {loss}")
        if cc.shape[0] != l or (rw.shape[0] and rw.shape[0] != l):
            raise ValueError("NewtonFun: rows, y and C disagree in length")
        self.X = X
        self.wx = np.zeros(l, np.float64)
        tmp = np.zeros(max(l, 1), np.float64)         # one entry at least: the pointers below are never NULL
        D = np.zeros(max(l, 1), np.float64)
        CD = np.zeros(max(l, 1), np.float64)
        I = np.zeros(max(l, 1), np.int32)
        self.work = np.zeros((4, max(n, 1)), np.float64)       # row 3: P.diag
        ywx = np.zeros(1, np.float64) if l == 0 else None
        self.keep = (rows, y, C, tmp, D, CD, I, ywx)
        cdef double[::1] wxv = self.wx if l else ywx
        cdef double[::1] tv = tmp
        cdef double[::1] dv = D
        cdef double[::1] cdv = CD
        cdef int32_t[::1] iv = I
        self.P.v = &self.X.v
        self.P.r = _rows_ptr(rw)
        self.P.l = l
        self.P.n = n
        self.P.loss = loss
        self.P.y = &yy[0] if l else NULL
        self.P.C = &cc[0] if l else NULL
        self.P.p = p
        self.P.regularize_bias = regularize_bias
        self.P.wx = &wxv[0]
        self.P.tmp = &tv[0]
        self.P.D = &dv[0]
        self.P.CD = &cdv[0]
        self.P.I = &iv[0]
        self.P.sizeI = 0
        cdef double[:, ::1] wk = self.work
        self.P.diag = &wk[3, 0]
        self.P.diag_ok = False
        self.P.wTw = 0.0

    cdef int _check(self, const double[::1] a, str name) except -1:
        if a.shape[0] != self.P.n:
            raise ValueError(f"NewtonFun: {name} has {a.shape[0]} entries, the problem {self.P.n}")
        return 0

    def fun(self, const double[::1] w):
        """f(w), and X w and w.w kept for grad and linesearch."""
        self._check(w, "w")
        cdef double f
        with nogil:
            if self.X.f32:
                f = _nf_fun(&self.P, _ptr(w), <float*>NULL)
            else:
                f = _nf_fun(&self.P, _ptr(w), <double*>NULL)
        return f

    def grad(self, const double[::1] w, double[::1] g):
        """g = grad f(w) at the w of the last fun or linesearch (its X w); sets the Hessian's rows and weights."""
        self._check(w, "w")
        self._check(g, "g")
        with nogil:
            if self.X.f32:
                _nf_grad(&self.P, _ptr(w), _ptr(g), <float*>NULL)
            else:
                _nf_grad(&self.P, _ptr(w), _ptr(g), <double*>NULL)

    def preconditioner(self, double[::1] M, double alpha_pcg):
        """M = (1 - alpha_pcg) + alpha_pcg diag(H) at the last grad's w."""
        self._check(M, "M")
        with nogil:
            if self.X.f32:
                _nf_precond(&self.P, _ptr(M), alpha_pcg, <float*>NULL)
            else:
                _nf_precond(&self.P, _ptr(M), alpha_pcg, <double*>NULL)

    def pcg(self, const double[::1] g, const double[::1] M, double[::1] s, double[::1] r, double eps_cg):
        """CG on H s = -g at the last grad's w (see pcg); returns (CG steps, flags)."""
        for a, name in ((g, "g"), (M, "M"), (s, "s"), (r, "r")):
            self._check(a, name)
        cdef double[:, ::1] wk = self.work
        cdef const double* c = self.P.C
        if self.P.loss == LOSS_LR:
            c = self.P.CD
        cdef double factor = 1.0 if self.P.loss == LOSS_LR else 2.0
        cdef int flags = 0
        cdef int64_t it
        with nogil:
            if self.X.f32:
                it = _pcg(self.P.v, self.P.r, self.P.I, self.P.sizeI, c, factor, self.P.regularize_bias, _ptr(g),
                          _ptr(M), _ptr(s), _ptr(r), eps_cg, &wk[0, 0], &wk[1, 0], &wk[2, 0], self.P.n, &flags,
                          <float*>NULL)
            else:
                it = _pcg(self.P.v, self.P.r, self.P.I, self.P.sizeI, c, factor, self.P.regularize_bias, _ptr(g),
                          _ptr(M), _ptr(s), _ptr(r), eps_cg, &wk[0, 0], &wk[1, 0], &wk[2, 0], self.P.n, &flags,
                          <double*>NULL)
        check_stop()
        return it, flags

    def linesearch(self, double[::1] w, const double[::1] s, double f, const double[::1] g, double alpha):
        """Backtracking line search from w along s (f = f(w)); updates w, X w and w.w. Returns (step, f): step 0
        when it fails (w unchanged, f the old value)."""
        for a, name in ((w, "w"), (s, "s"), (g, "g")):
            self._check(a, name)
        cdef double step
        with nogil:
            if self.X.f32:
                step = _nf_linesearch(&self.P, _ptr(w), _ptr(s), &f, _ptr(g), alpha, <float*>NULL)
            else:
                step = _nf_linesearch(&self.P, _ptr(w), _ptr(s), &f, _ptr(g), alpha, <double*>NULL)
        return step, f

    @property
    def sizeI(self):
        """Rows in the Hessian at the last grad."""
        return self.P.sizeI

    # -- one part of a distributed problem (llsvm.solvers.dnewton: MPI-LIBLINEAR's distributed TRON): the sums
    # over this part's rows; the client adds the parts' and does the rest (w.w, CG, the line search's choice) --
    def loss(self, const double[::1] w):
        """sum_i C_i loss_i at w over the rows, in row order (f without 1/2 w.w); sets X w."""
        self._check(w, "w")
        cdef double f
        with nogil:
            if self.X.f32:
                f = _nf_loss(&self.P, _ptr(w), <float*>NULL)
            else:
                f = _nf_loss(&self.P, _ptr(w), <double*>NULL)
        return f

    def grad_rows(self, double[::1] G):
        """G = sum_{i in I} coef_i x_i at the last loss's or advance's X w: grad f = w + factor G (the bias's own
        term dropped when it is not regularized); sets the Hessian's rows and weights."""
        self._check(G, "G")
        with nogil:
            if self.X.f32:
                _nf_grad_rows(&self.P, _ptr(G), <float*>NULL)
            else:
                _nf_grad_rows(&self.P, _ptr(G), <double*>NULL)

    def diag_rows(self, double[::1] M):
        """M[j] += sum_{i in I} c_i d_i x_ij^2 at the last grad_rows (M holds its initial value): the
        preconditioner's data part."""
        self._check(M, "M")
        with nogil:
            if self.X.f32:
                _diag(self.P.v, self.P.r, self.P.I, self.P.sizeI, self.P.C,
                      self.P.D if self.P.loss == LOSS_LR else NULL, _ptr(M), <float*>NULL)
            else:
                _diag(self.P.v, self.P.r, self.P.I, self.P.sizeI, self.P.C,
                      self.P.D if self.P.loss == LOSS_LR else NULL, _ptr(M), <double*>NULL)

    def hv_rows(self, const double[::1] s, double[::1] out):
        """out = sum_{i in I} c_i (x_i . s) x_i at the last grad_rows: H s = s + factor out."""
        self._check(s, "s")
        self._check(out, "out")
        cdef const double* c = self.P.C
        if self.P.loss == LOSS_LR:
            c = self.P.CD
        with nogil:
            if self.X.f32:
                _hv(self.P.v, self.P.r, self.P.I, self.P.sizeI, c, _ptr(s), _ptr(out), self.P.n, <float*>NULL)
            else:
                _hv(self.P.v, self.P.r, self.P.I, self.P.sizeI, c, _ptr(s), _ptr(out), self.P.n, <double*>NULL)

    def grad_diag_rows(self, double[::1] G, double[::1] M):
        """grad_rows(G) then diag_rows(M) in one pass over the rows (the same sums bit for bit)."""
        self._check(G, "G")
        self._check(M, "M")
        with nogil:
            if self.X.f32:
                _nf_grad_diag_rows(&self.P, _ptr(G), _ptr(M), <float*>NULL)
            else:
                _nf_grad_diag_rows(&self.P, _ptr(G), _ptr(M), <double*>NULL)

    def hv_rows_kept(self, const double[::1] d, double[::1] out, double carry, bint reset):
        """hv_rows(d, out) for -s 0, keeping each row's x_i . d, and X s built from them as CG builds s: first
        X s += carry X d_prev (the step CG took along the last call's d; reset: X s = 0 instead, a new CG). Saves
        the line search's pass over the rows (line_losses_kept); X s is then sum_k alpha_k X d_k, equal to X (sum_k
        alpha_k d_k) up to rounding, so the threaded Newton alone uses it."""
        self._check(d, "d")
        self._check(out, "out")
        if self.P.loss != LOSS_LR or self.P.sizeI != self.P.l:
            raise ValueError("NewtonFun: hv_rows_kept needs -s 0 after grad_rows")
        if self.xd is None:
            self.xd = np.zeros(max(self.P.l, 1), np.float64)
        cdef double[::1] xd = self.xd
        cdef int64_t i
        with nogil:
            if reset:
                for i in range(self.P.l):
                    self.P.tmp[i] = 0.0
            else:
                _nf_carry(&self.P, carry, &xd[0])
            if self.X.f32:
                _hv(self.P.v, self.P.r, self.P.I, self.P.sizeI, self.P.CD, _ptr(d), _ptr(out), self.P.n,
                    <float*>NULL, _ptr(xd))
            else:
                _hv(self.P.v, self.P.r, self.P.I, self.P.sizeI, self.P.CD, _ptr(d), _ptr(out), self.P.n,
                    <double*>NULL, _ptr(xd))

    def line_losses_kept(self, double carry, const double[::1] alphas, double[::1] out):
        """line_losses along the s of the last CG (X s += carry X d_last, from hv_rows_kept), without a pass over
        the rows."""
        if self.xd is None:
            raise ValueError("NewtonFun: line_losses_kept needs hv_rows_kept first")
        cdef double[::1] xd = self.xd
        cdef int64_t t, m = alphas.shape[0]
        if out.shape[0] != m:
            raise ValueError("NewtonFun: alphas and out disagree in length")
        with nogil:
            _nf_carry(&self.P, carry, &xd[0])
            for t in range(m):
                out[t] = _nf_loss_at(&self.P, alphas[t])

    def loss_kept(self):
        """sum_i C_i loss_i at the X w kept (the last loss's, advanced by each accepted step), in row order, without
        a pass over the rows."""
        cdef double f
        with nogil:
            f = _nf_loss_wx(&self.P)
        return f

    def line_losses(self, s, const double[::1] alphas, double[::1] out):
        """out[t] = sum_i C_i loss_i at w + alphas[t] s (the line search's tries). s: the direction, whose X s is
        computed and kept for the next calls and advance; None: the last call's direction."""
        cdef const double[::1] sv
        cdef int64_t t, m = alphas.shape[0]
        if out.shape[0] != m:
            raise ValueError("NewtonFun: alphas and out disagree in length")
        if s is not None:
            sv = s
            self._check(sv, "s")
            with nogil:
                if self.X.f32:
                    _nf_xs(&self.P, _ptr(sv), <float*>NULL)
                else:
                    _nf_xs(&self.P, _ptr(sv), <double*>NULL)
        with nogil:
            for t in range(m):
                out[t] = _nf_loss_at(&self.P, alphas[t])

    def advance(self, double alpha):
        """X w += alpha X s (the accepted step of the last line_losses' direction)."""
        cdef int64_t i
        with nogil:
            for i in range(self.P.l):
                self.P.wx[i] += alpha * self.P.tmp[i]

    @property
    def factor(self):
        """grad f = w + factor G: 1 for -s 0, 2 for -s 2 and -s 11."""
        return 1.0 if self.P.loss == LOSS_LR else 2.0



cdef void _decision(const RowView* v, const double[:, ::1] W, int64_t nr_feature, double bias,
                    double[:, ::1] out, value_t* kind) noexcept nogil:
    cdef int64_t n = v.n_rows, nr_w = W.shape[1], i, p, j, f
    cdef const int32_t* ix
    cdef const value_t* xv
    cdef double x
    for i in range(n):
        ix = row_indices(v, i)
        xv = row_values(v, i, kind)
        for j in range(nr_w):
            out[i, j] = 0.0
        for p in range(v.indptr[i], v.indptr[i + 1]):
            f = ix[p]
            if f < nr_feature:
                x = xv[p]
                for j in range(nr_w):
                    out[i, j] += W[f, j] * x
        if bias >= 0:
            for j in range(nr_w):
                out[i, j] += W[nr_feature, j] * bias


def decision_values(Rows X not None, const double[:, ::1] W, int64_t nr_feature, double bias, double[:, ::1] out):
    """out[i, j] = sum over features < nr_feature of x_ik W[k, j] (+ bias * W[nr_feature, j] when bias >= 0).

    LIBLINEAR's predict: test features beyond the training dimension are ignored. nr_feature and bias are the
    model's; X's own n_features and bias are not used.
    """
    if W.shape[0] < nr_feature + (1 if bias >= 0 else 0) or out.shape[0] != X.v.n_rows or \
            out.shape[1] != W.shape[1]:
        raise ValueError("decision_values: W, out and the rows disagree")
    with nogil:
        if X.f32:
            _decision(&X.v, W, nr_feature, bias, out, <float*>NULL)
        else:
            _decision(&X.v, W, nr_feature, bias, out, <double*>NULL)
    return out



# -- the smoothed hinge's line search (-s 3 past the dual's limit; llsvm/solvers/smooth_hinge.py) --------------------
# Problem: min_w 1/2 w.w + sum_i C_i h_delta(1 - y_i w.x_i), h_delta the Huber hinge (0 below 0, z^2/(2 delta) on
# (0, delta), z - delta/2 above; Chapelle, Neural Computation 2007, section 4). Along a Newton direction s, with
# z_i = 1 - y_i w.x_i and xs_i = y_i s.x_i, phi'(t) = w.s + t s.s - sum_i C_i h'(z_i - t xs_i) xs_i and
# phi''(t) = s.s + sum_{band} C_i xs_i^2 / delta. This kernel computes the two sums at one t (one pass over the
# arrays, no update); the driver's safeguarded Newton iteration on phi' calls it and decides when to stop.
cdef void _huber_slope(const double* z, const double* xs, const double* C, int64_t l, double delta, double t,
                       double* slope, double* curv) noexcept nogil:
    cdef int64_t i
    cdef double zt, a, s1 = 0.0, s2 = 0.0, inv = 1.0 / delta
    for i in range(l):
        zt = z[i] - t * xs[i]
        if zt <= 0.0:
            continue
        if zt >= delta:
            s1 += C[i] * xs[i]
        else:
            a = zt * inv
            s1 += C[i] * a * xs[i]
            s2 += C[i] * xs[i] * xs[i]
    slope[0] = s1
    curv[0] = s2 * inv


def huber_slope(const double[::1] z, const double[::1] xs, const double[::1] C, double delta, double t):
    """(sum_i C_i h'(z_i - t xs_i) xs_i, sum_{0 < z_i - t xs_i < delta} C_i xs_i^2 / delta), h' = clip(./delta, 0, 1):
    the data parts of the smoothed hinge's phi'(t) and phi''(t) (see the section's comment)."""
    cdef int64_t l = z.shape[0]
    cdef double slope = 0.0, curv = 0.0
    if xs.shape[0] != l or C.shape[0] != l:
        raise ValueError("huber_slope: z, xs and C differ in length")
    if not delta > 0.0:
        raise ValueError("huber_slope: delta must be positive")
    if l:
        with nogil:
            _huber_slope(&z[0], &xs[0], &C[0], l, delta, t, &slope, &curv)
    return slope, curv
