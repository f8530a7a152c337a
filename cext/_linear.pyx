# Kernels of the L2-regularized linear SVM solvers (LIBLINEAR 2.50 semantics), over the row view.
#
# 1. Dual coordinate descent with shrinking (Hsieh, Chang, Lin, Keerthi, Sundararajan, ICML 2008, Algorithm 3;
#    LIBLINEAR's solve_l2r_l1l2_svc). Problem, for labels y_i in {-1,+1}:
#        min_alpha  f(alpha) = 1/2 alpha^T (Q + D) alpha - e^T alpha,   0 <= alpha_i <= U_i,
#        Q_ij = y_i y_j x_i.x_j,  L1 loss (-s 3): D_ii = 0, U_i = C_i;  L2 loss (-s 1): D_ii = 1/(2 C_i), U_i = inf,
#    with w = sum_i alpha_i y_i x_i kept up to date. Update of coordinate i: G = y_i w.x_i - 1 + D_ii alpha_i,
#    projected gradient PG (0 at an active bound), alpha_i <- min(max(alpha_i - G/QD_i, 0), U_i), w += d y_i x_i.
#    Shrinking: a variable at a bound whose G is beyond last epoch's PG_max / PG_min leaves the active set.
#    `dcd_epoch` runs ONE outer iteration (random permutation of the active set from the project's RNG, then one
#    pass). `DCDState.run(n, eps)` runs up to n of them with LIBLINEAR 2.50's stopping rule
#    PG_max - PG_min <= eps and |PG_max| <= eps and |PG_min| <= eps, and a final pass over all variables;
#    the Python driver (llsvm/solvers/dcd.py) calls it in chunks of 10 iterations and owns output, warnings and the
#    -s 2 fallback. (On small sets, one Python call per iteration cost more than the iteration itself.)
#    The next row in the permutation is prefetched while the current one is processed.
# 2. Building blocks of the Newton method of LIBLINEAR's -s 0, -s 2 and -s 11 (Galli & Lin 2021, newton.cpp;
#    Lin, Weng, Keerthi 2008): X v, X^T (restricted) v, the (generalized) Hessian-vector product
#    s + factor X_I^T diag(c) X_I s and its diagonal preconditioner, and the whole preconditioned conjugate gradient
#    (`pcg`: NEWTON::pcg, solving H s = -g with the quadratic-model stopping rule). The Newton loop and line search
#    are in llsvm/solvers/newton.py.
# 3. Decision values for prediction (features beyond the model's nr_feature ignored, bias appended).
# Every kernel takes the rows as one row view X (a `Rows`, cext/_view.pyx: arrays, n_features, the bias, and for a
# memory-mapped binary file read in place its segment table, so such a file is trained on and predicted without a
# copy); subproblems (one-vs-rest classes, cross-validation folds) are the full view plus `rows`, the rows they
# use. Each def dispatches on X.f32 to the float or double specialization of a fused nogil implementation. The
# coordinate step (G, PG, the clipped minimizer) is dual_step.pxd's, shared with _llsvm and _stream.
from libc.math cimport fabs, sqrt, INFINITY
from libc.stdint cimport int32_t, int64_t, uint64_t

import numpy as np

from kernel_util cimport LLSVM_PREFETCH
from kernel_types cimport value_t
from llsvm._ext._stop cimport stop_requested, check_stop
from rowview cimport RowView, row_dot, row_axpy, row_sq_norm, row_indices, row_values
from rowview cimport subset_row as _row, subset_ptr as _rows_ptr
from dual_step cimport dual_gradient, projected_gradient, dual_step
from rng cimport Rng, rng_shuffle
from llsvm._ext._view cimport Rows


cdef inline void _prefetch_row(const RowView* v, int64_t row, value_t* kind) noexcept nogil:
    """Ask for the start of a row's indices and values ahead of use (rows are visited in random order)."""
    cdef int64_t k = v.indptr[row]
    LLSVM_PREFETCH(row_indices(v, row) + k)
    LLSVM_PREFETCH(row_values(v, row, kind) + k)


cdef int _check_w(Rows X, int64_t size, str name) except -1:
    """A dense vector indexed by X's features (and its bias coordinate) must have room for them."""
    cdef int64_t need = X.v.n_features + (1 if X.v.bias >= 0 else 0)
    if size < need:
        raise ValueError(f"{name} has {size} entries; the view's features and bias need {need}")
    return 0


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
                       value_t* kind) noexcept nogil:
    """The body of one outer iteration (see dcd_epoch); returns the new active_size."""
    cdef double diag[3]
    cdef double upper[3]
    cdef double G, PG, C, d, alpha_old
    cdef double PGmax_new = -INFINITY, PGmin_new = INFINITY
    cdef int64_t s, i, k, n_updates = 0
    cdef int32_t tmp
    cdef int yi
    cdef bint shrink
    if l1_loss:
        diag[0] = 0.0
        diag[2] = 0.0
        upper[0] = Cn
        upper[2] = Cp
    else:
        diag[0] = 0.5 / Cn
        diag[2] = 0.5 / Cp
        upper[0] = INFINITY
        upper[2] = INFINITY
    # random permutation of the active set
    if shuffle:
        rng_shuffle(g, index, active_size)
    s = 0
    while s < active_size:
        i = index[s]
        if s + 1 < active_size:
            _prefetch_row(v, _row(r, index[s + 1]), kind)
        yi = y[i]
        k = yi + 1
        C = upper[k]
        G = dual_gradient(yi * row_dot(v, _row(r, i), w, kind), alpha[i], diag[k])
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
            alpha[i] = dual_step(G, alpha_old, xnorm[i], diag[k], C)
            d = (alpha[i] - alpha_old) * yi
            row_axpy(v, _row(r, i), d, w, kind)
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

    def run(self, int64_t n_epochs, double eps, bint shuffle=True):
        """Up to n_epochs outer iterations with LIBLINEAR 2.50's stopping rule; returns (converged, events).

        Stop when PG_max - PG_min <= eps and |PG_max| <= eps and |PG_min| <= eps on a pass over all variables;
        when that holds on the shrunk set, reset to all variables ('*') and go on. events is LIBLINEAR's
        progress text for these epochs: '.' at every 10th iteration, '*' at each reset.
        """
        cdef double PGmax_new, PGmin_new
        cdef int64_t n_updates, done = 0
        cdef bint converged = False
        cdef bint f32 = self.X.f32
        cdef const RowView* v = &self.X.v
        events = bytearray(n_epochs + n_epochs // 10 + 2)
        cdef char* ev = events
        cdef int64_t n_ev = 0
        with nogil:
            while done < n_epochs:
                if stop_requested():     # once a pass (cext/_stop.pyx)
                    break
                if f32:
                    self.active_size = _dcd_pass(v, self.r, self.y, self.alpha, self.w, self.xnorm,
                                                 self.index, self.active_size, self.PGmax_old, self.PGmin_old,
                                                 self.Cp, self.Cn, self.l1_loss, self.g, shuffle, &PGmax_new,
                                                 &PGmin_new, &n_updates, <float*>NULL)
                else:
                    self.active_size = _dcd_pass(v, self.r, self.y, self.alpha, self.w, self.xnorm,
                                                 self.index, self.active_size, self.PGmax_old, self.PGmin_old,
                                                 self.Cp, self.Cn, self.l1_loss, self.g, shuffle, &PGmax_new,
                                                 &PGmin_new, &n_updates, <double*>NULL)
                self.n_iter += 1
                done += 1
                if self.n_iter % 10 == 0:
                    ev[n_ev] = 46        # '.'
                    n_ev += 1
                if PGmax_new - PGmin_new <= eps and fabs(PGmax_new) <= eps and fabs(PGmin_new) <= eps:
                    if self.active_size == self.l:
                        converged = True
                        break
                    self.active_size = self.l
                    ev[n_ev] = 42        # '*'
                    n_ev += 1
                    self.PGmax_old = INFINITY
                    self.PGmin_old = -INFINITY
                    continue
                self.PGmax_old = PGmax_new
                self.PGmin_old = PGmin_new
                if self.PGmax_old <= 0:
                    self.PGmax_old = INFINITY
                if self.PGmin_old >= 0:
                    self.PGmin_old = -INFINITY
        check_stop()
        return converged, events[:n_ev].decode("ascii")


cdef void _violation(const RowView* v, const int64_t* r, const signed char* y, const double* alpha,
                     const double* w, int64_t l, const double* diag, const double* upper, const double* cost,
                     bint l1_loss, double* out, int64_t* nSV_out, value_t* kind) noexcept nogil:
    """out = (max |PG|, loss, sum alpha, sum D alpha^2) and *nSV_out (see dcd_violation)."""
    cdef double G, PG, m = 0.0, margin, xi, loss = 0.0, sum_alpha = 0.0, sum_diag = 0.0
    cdef int64_t i, nSV = 0
    cdef int k
    for i in range(l):
        k = y[i] + 1
        margin = y[i] * row_dot(v, _row(r, i), w, kind)
        xi = 1.0 - margin
        if xi > 0.0:
            loss += cost[k] * (xi if l1_loss else xi * xi)
        G = dual_gradient(margin, alpha[i], diag[k])
        if alpha[i] <= 0.0:
            PG = G if G < 0.0 else 0.0
        elif alpha[i] >= upper[k]:
            PG = G if G > 0.0 else 0.0
        else:
            PG = G
        if fabs(PG) > m:
            m = fabs(PG)
        if alpha[i] > 0.0:
            nSV += 1
            sum_alpha += alpha[i]
            sum_diag += diag[k] * alpha[i] * alpha[i]
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
    out[0] = out[1] = out[2] = out[3] = 0.0
    if l == 0:
        return out[0], out[1], out[2], out[3], nSV
    with nogil:
        if X.f32:
            _violation(&X.v, r, &y[0], &alpha[0], &w[0], l, diag, upper, cost, l1_loss, out, &nSV, <float*>NULL)
        else:
            _violation(&X.v, r, &y[0], &alpha[0], &w[0], l, diag, upper, cost, l1_loss, out, &nSV, <double*>NULL)
    return out[0], out[1], out[2], out[3], nSV


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


cdef void _hv(const RowView* v, const int64_t* r, const int32_t* I, int64_t n_I, const double* C,
              const double* s, double* out, int64_t n_out, value_t* kind) noexcept nogil:
    cdef int64_t k, i
    cdef double xs
    for k in range(n_out):
        out[k] = 0.0
    for k in range(n_I):
        i = _row(r, I[k])
        xs = C[I[k]] * row_dot(v, i, s, kind)
        row_axpy(v, i, xs, out, kind)


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


# -- the conjugate gradient of the Newton method (NEWTON::pcg) ----------------------------------------------------
cdef double _ddot(const double* x, const double* y, int64_t n) noexcept nogil:
    """x . y summed in LIBLINEAR's blas order (groups of five, then the rest), so that its iterates are matched."""
    cdef int64_t i = 0
    cdef double t = 0.0
    while i < n - 4:
        t += x[i] * y[i] + x[i + 1] * y[i + 1] + x[i + 2] * y[i + 2] + x[i + 3] * y[i + 3] + x[i + 4] * y[i + 4]
        i += 5
    while i < n:
        t += x[i] * y[i]
        i += 1
    return t


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


cdef void _diag(const RowView* v, const int64_t* r, const int32_t* I, int64_t n_I, const double* C, double* out,
                value_t* kind) noexcept nogil:
    cdef int64_t k, i, p
    cdef const int32_t* ix
    cdef const value_t* x
    cdef double c
    cdef double bias = v.bias
    for k in range(n_I):
        i = _row(r, I[k])
        c = 2.0 * C[I[k]]
        ix = row_indices(v, i)
        x = row_values(v, i, kind)
        for p in range(v.indptr[i], v.indptr[i + 1]):
            out[ix[p]] += c * x[p] * x[p]
        if bias >= 0:
            out[v.n_features] += c * bias * bias


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
            _diag(&X.v, r, &I[0], n_I, &C[0], &out[0], <float*>NULL)
        else:
            _diag(&X.v, r, &I[0], n_I, &C[0], &out[0], <double*>NULL)


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

