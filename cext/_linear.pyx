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
#    the Python driver (llsvm/solvers.py) calls it in chunks of 10 iterations and owns output, warnings and the
#    -s 2 fallback. (On small sets, one Python call per iteration cost more than the iteration itself.)
#    The next row in the permutation is prefetched while the current one is processed.
# 2. Building blocks of the trust-region-free Newton method of LIBLINEAR's -s 2 (Galli & Lin 2021, newton.cpp;
#    Lin, Weng, Keerthi 2008): X v, X^T (restricted) v, the generalized Hessian-vector product of the squared
#    hinge loss and its diagonal preconditioner. The Newton/PCG loop itself is in llsvm/solvers.py.
# 3. Decision values for prediction (features beyond the model's nr_feature ignored, bias appended).
# Subproblems (one-vs-rest classes, cross-validation folds) are the full view plus `rows`, the rows they use.
# Every kernel also takes `segs`: None for contiguous arrays, or the segment table of a memory-mapped binary file
# read in place (rowview.pxd), so a loaded binary file is trained on and predicted without a copy.
from libc.math cimport fabs, INFINITY
from libc.stdint cimport int32_t, int64_t, uint64_t

import numpy as np

from kernel_util cimport LLSVM_PREFETCH
from kernel_types cimport value_t
from rowview cimport RowView, make_view, view_segments, row_dot, row_axpy, row_sq_norm, row_indices, row_values
from rng cimport Rng, rng_shuffle


cdef inline int64_t _row(const int64_t* rows, int64_t i) noexcept nogil:
    return rows[i] if rows != NULL else i


cdef inline void _prefetch_row(const RowView* v, int64_t row, value_t* kind) noexcept nogil:
    """Ask for the start of a row's indices and values ahead of use (rows are visited in random order)."""
    cdef int64_t k = v.indptr[row]
    LLSVM_PREFETCH(row_indices(v, row) + k)
    LLSVM_PREFETCH(row_values(v, row, kind) + k)


def sq_norms(const int64_t[::1] indptr, const int32_t[::1] indices, const value_t[::1] values, double bias,
             const int64_t[::1] rows, double[::1] out, segs=None):
    """out[i] = ||x_rows[i]||^2 including the bias coordinate (QD without the loss's diagonal term)."""
    cdef RowView v = make_view(indptr, indices, values, NULL, 0, bias)
    view_segments(&v, segs)
    cdef const int64_t* r = &rows[0] if rows.shape[0] > 0 else NULL
    cdef int64_t i, l = out.shape[0]
    with nogil:
        for i in range(l):
            out[i] = row_sq_norm(&v, _row(r, i), <value_t*>NULL)


def dcd_init_w(const int64_t[::1] indptr, const int32_t[::1] indices, const value_t[::1] values, int64_t n_features,
               double bias, const int64_t[::1] rows, const signed char[::1] y, const double[::1] alpha,
               double[::1] w, segs=None):
    """w = sum_i alpha_i y_i x_i (w is zeroed first)."""
    cdef RowView v = make_view(indptr, indices, values, NULL, n_features, bias)
    view_segments(&v, segs)
    cdef const int64_t* r = &rows[0] if rows.shape[0] > 0 else NULL
    cdef int64_t i, l = y.shape[0]
    with nogil:
        for i in range(w.shape[0]):
            w[i] = 0.0
        for i in range(l):
            if alpha[i] != 0.0:
                row_axpy(&v, _row(r, i), y[i] * alpha[i], &w[0], <value_t*>NULL)


cdef int64_t _dcd_pass(const RowView* v, const int64_t* r, const signed char* y, double* alpha, double* w,
                       const double* xnorm, int32_t* index, int64_t active_size, double PGmax_old,
                       double PGmin_old, double Cp, double Cn, bint l1_loss, Rng* g, bint shuffle,
                       double* PGmax_out, double* PGmin_out, int64_t* n_updates_out,
                       value_t* kind) noexcept nogil:
    """The body of one outer iteration (see dcd_epoch); returns the new active_size."""
    cdef double diag[3]
    cdef double upper[3]
    cdef double G, PG, C, d, alpha_old, QD
    cdef double PGmax_new = -INFINITY, PGmin_new = INFINITY
    cdef int64_t s, i, k, n_updates = 0
    cdef int32_t tmp
    cdef int yi
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
        G = yi * row_dot(v, _row(r, i), w, kind) - 1.0
        C = upper[k]
        G += alpha[i] * diag[k]
        PG = 0.0
        if alpha[i] == 0.0:
            if G > PGmax_old:
                active_size -= 1
                tmp = index[s]
                index[s] = index[active_size]
                index[active_size] = tmp
                continue
            elif G < 0.0:
                PG = G
        elif alpha[i] == C:
            if G < PGmin_old:
                active_size -= 1
                tmp = index[s]
                index[s] = index[active_size]
                index[active_size] = tmp
                continue
            elif G > 0.0:
                PG = G
        else:
            PG = G
        if PG > PGmax_new:
            PGmax_new = PG
        if PG < PGmin_new:
            PGmin_new = PG
        if fabs(PG) > 1.0e-12:
            alpha_old = alpha[i]
            QD = xnorm[i] + diag[k]
            alpha[i] = min(max(alpha[i] - G / QD, 0.0), C)
            d = (alpha[i] - alpha_old) * yi
            row_axpy(v, _row(r, i), d, w, kind)
            n_updates += 1
        s += 1
    PGmax_out[0] = PGmax_new
    PGmin_out[0] = PGmin_new
    n_updates_out[0] = n_updates
    return active_size


def dcd_epoch(const int64_t[::1] indptr, const int32_t[::1] indices, const value_t[::1] values, int64_t n_features,
              double bias, const int64_t[::1] rows, const signed char[::1] y, double[::1] alpha, double[::1] w,
              const double[::1] xnorm, int32_t[::1] index, int64_t active_size, double PGmax_old,
              double PGmin_old, double Cp, double Cn, bint l1_loss, uint64_t[::1] rng, bint shuffle=True,
              segs=None):
    """One outer iteration of dual CD with shrinking. Returns (active_size, PGmax_new, PGmin_new, n_updates).

    xnorm[i] = ||x_i||^2 (with bias); QD_i = xnorm[i] + D_ii. `index` holds the active variables first.
    shuffle=False visits index[0:active_size] in its current order (for tests against a reference).
    """
    cdef RowView v = make_view(indptr, indices, values, NULL, n_features, bias)
    view_segments(&v, segs)
    cdef const int64_t* r = &rows[0] if rows.shape[0] > 0 else NULL
    cdef double PGmax_new, PGmin_new
    cdef int64_t n_updates
    with nogil:
        active_size = _dcd_pass(&v, r, &y[0], &alpha[0], &w[0], &xnorm[0], &index[0], active_size, PGmax_old,
                                PGmin_old, Cp, Cn, l1_loss, <Rng*>&rng[0], shuffle, &PGmax_new, &PGmin_new,
                                &n_updates, <value_t*>NULL)
    return active_size, PGmax_new, PGmin_new, n_updates


cdef class DCDState:
    """The arrays of one dual CD run, held once so that outer iterations are a cheap call (`run`).

    Same computation as dcd_epoch; the driver calls run() for a few outer iterations at a time.
    """
    cdef RowView v
    cdef const int64_t* r
    cdef bint f32
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

    def __init__(self, indptr, indices, values, int64_t n_features, double bias, rows, y, alpha, w, xnorm,
                 index, double Cp, double Cn, bint l1_loss, rng, segs=None):
        cdef const int64_t[::1] ip = indptr
        cdef const int32_t[::1] ix = indices
        cdef const float[::1] v32
        cdef const double[::1] v64
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
        self.f32 = values.dtype == np.float32
        if self.f32:
            v32 = values
            self.v = make_view(ip, ix, v32, NULL, n_features, bias)
        else:
            v64 = values
            self.v = make_view(ip, ix, v64, NULL, n_features, bias)
        view_segments(&self.v, segs)
        self.keep = (indptr, indices, values, rows, y, alpha, w, xnorm, index, rng, segs)
        self.r = &rw[0] if rw.shape[0] > 0 else NULL
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
        events = bytearray(n_epochs + n_epochs // 10 + 2)
        cdef char* ev = events
        cdef int64_t n_ev = 0
        with nogil:
            while done < n_epochs:
                if self.f32:
                    self.active_size = _dcd_pass(&self.v, self.r, self.y, self.alpha, self.w, self.xnorm,
                                                 self.index, self.active_size, self.PGmax_old, self.PGmin_old,
                                                 self.Cp, self.Cn, self.l1_loss, self.g, shuffle, &PGmax_new,
                                                 &PGmin_new, &n_updates, <float*>NULL)
                else:
                    self.active_size = _dcd_pass(&self.v, self.r, self.y, self.alpha, self.w, self.xnorm,
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
        return converged, events[:n_ev].decode("ascii")


def dcd_violation(const int64_t[::1] indptr, const int32_t[::1] indices, const value_t[::1] values,
                  int64_t n_features, double bias, const int64_t[::1] rows, const signed char[::1] y,
                  const double[::1] alpha, const double[::1] w, double Cp, double Cn, bint l1_loss, segs=None):
    """(max_i |PG_i|, sum_i C_i loss_i, sum_i alpha_i, sum_i D_ii alpha_i^2, nSV) at (alpha, w), in one pass.

    loss_i = max(0, 1 - y_i w.x_i) for the L1 loss, its square for the L2 loss: the primal is w.w/2 + the sum,
    the dual sum alpha - w.w/2 - sum D_ii alpha_i^2 / 2. Nothing is changed (this is the certificate).
    """
    cdef RowView v = make_view(indptr, indices, values, NULL, n_features, bias)
    view_segments(&v, segs)
    cdef const int64_t* r = &rows[0] if rows.shape[0] > 0 else NULL
    cdef double diag[3]
    cdef double upper[3]
    cdef double cost[3]
    cdef double G, PG, m = 0.0, margin, xi, loss = 0.0, sum_alpha = 0.0, sum_diag = 0.0
    cdef int64_t i, l = y.shape[0], nSV = 0
    cdef int k
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
    with nogil:
        for i in range(l):
            k = y[i] + 1
            margin = y[i] * row_dot(&v, _row(r, i), &w[0], <value_t*>NULL)
            xi = 1.0 - margin
            if xi > 0.0:
                loss += cost[k] * (xi if l1_loss else xi * xi)
            G = margin - 1.0 + alpha[i] * diag[k]
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
    return m, loss, sum_alpha, sum_diag, nSV


def xv(const int64_t[::1] indptr, const int32_t[::1] indices, const value_t[::1] values, int64_t n_features,
       double bias, const int64_t[::1] rows, const double[::1] v_in, double[::1] out, segs=None):
    """out[i] = x_rows[i] . v (with the bias coordinate)."""
    cdef RowView v = make_view(indptr, indices, values, NULL, n_features, bias)
    view_segments(&v, segs)
    cdef const int64_t* r = &rows[0] if rows.shape[0] > 0 else NULL
    cdef int64_t i, l = out.shape[0]
    with nogil:
        for i in range(l):
            out[i] = row_dot(&v, _row(r, i), &v_in[0], <value_t*>NULL)


def sub_xtv(const int64_t[::1] indptr, const int32_t[::1] indices, const value_t[::1] values, int64_t n_features,
            double bias, const int64_t[::1] rows, const int32_t[::1] I, const double[::1] coef, double[::1] out,
            segs=None):
    """out = sum_k coef[k] x_rows[I[k]] (out zeroed first): X_I^T coef."""
    cdef RowView v = make_view(indptr, indices, values, NULL, n_features, bias)
    view_segments(&v, segs)
    cdef const int64_t* r = &rows[0] if rows.shape[0] > 0 else NULL
    cdef int64_t k
    with nogil:
        for k in range(out.shape[0]):
            out[k] = 0.0
        for k in range(I.shape[0]):
            row_axpy(&v, _row(r, I[k]), coef[k], &out[0], <value_t*>NULL)


def l2svc_hv(const int64_t[::1] indptr, const int32_t[::1] indices, const value_t[::1] values, int64_t n_features,
             double bias, const int64_t[::1] rows, const int32_t[::1] I, const double[::1] C, const double[::1] s,
             double[::1] out, segs=None):
    """out = sum_{i in I} C_i (x_i . s) x_i (the data part of the squared hinge's generalized Hessian times s)."""
    cdef RowView v = make_view(indptr, indices, values, NULL, n_features, bias)
    view_segments(&v, segs)
    cdef const int64_t* r = &rows[0] if rows.shape[0] > 0 else NULL
    cdef int64_t k, i
    cdef double xs
    with nogil:
        for k in range(out.shape[0]):
            out[k] = 0.0
        for k in range(I.shape[0]):
            i = _row(r, I[k])
            xs = C[I[k]] * row_dot(&v, i, &s[0], <value_t*>NULL)
            row_axpy(&v, i, xs, &out[0], <value_t*>NULL)


def l2svc_diag(const int64_t[::1] indptr, const int32_t[::1] indices, const value_t[::1] values,
               int64_t n_features, double bias, const int64_t[::1] rows, const int32_t[::1] I,
               const double[::1] C, double[::1] out, segs=None):
    """out[j] += 2 sum_{i in I} C_i x_ij^2 (the preconditioner's data part; out holds its initial value)."""
    cdef RowView v = make_view(indptr, indices, values, NULL, n_features, bias)
    view_segments(&v, segs)
    cdef int64_t k, i, p
    cdef const int64_t* r = &rows[0] if rows.shape[0] > 0 else NULL
    cdef const int32_t* ix
    cdef const value_t* x
    cdef double c
    with nogil:
        for k in range(I.shape[0]):
            i = _row(r, I[k])
            c = 2.0 * C[I[k]]
            ix = row_indices(&v, i)
            x = row_values(&v, i, <value_t*>NULL)
            for p in range(indptr[i], indptr[i + 1]):
                out[ix[p]] += c * x[p] * x[p]
            if bias >= 0:
                out[n_features] += c * bias * bias


def decision_values(const int64_t[::1] indptr, const int32_t[::1] indices, const value_t[::1] values,
                    const double[:, ::1] W, int64_t nr_feature, double bias, double[:, ::1] out, segs=None):
    """out[i, j] = sum over features < nr_feature of x_ik W[k, j] (+ bias * W[nr_feature, j] when bias >= 0).

    LIBLINEAR's predict: test features beyond the training dimension are ignored.
    """
    cdef RowView v = make_view(indptr, indices, values, NULL, nr_feature, -1.0)
    view_segments(&v, segs)
    cdef int64_t n = indptr.shape[0] - 1, nr_w = W.shape[1], i, p, j, f
    cdef const int32_t* ix
    cdef const value_t* xv
    cdef double x
    with nogil:
        for i in range(n):
            ix = row_indices(&v, i)
            xv = row_values(&v, i, <value_t*>NULL)
            for j in range(nr_w):
                out[i, j] = 0.0
            for p in range(indptr[i], indptr[i + 1]):
                f = ix[p]
                if f < nr_feature:
                    x = xv[p]
                    for j in range(nr_w):
                        out[i, j] += W[f, j] * x
            if bias >= 0:
                for j in range(nr_w):
                    out[i, j] += W[nr_feature, j] * bias
    return out

