# The online kernel SVMs of issue 16 (Kecman & Melki, "Fast online algorithms for support vector machines: models
# and experimental studies", IEEE SoutheastCon 2016; ../shared/specs/seed-solvers.md section 4): Lists 3b, 3a, 1
# (NORMA) and 2 (Pegaz), cached forms (the output cache o over every training row, one kernel column per change).
#
# Problem (List 3b): min R_hl = sum_i max(0, 1 - y_i o(x_i)), o(x) = sum_j alpha_j k(x, x_j) (+ b), by one pass per
# epoch over the rows in a fixed order (the data shuffled once: `order`), t = 1 .. epochs l continuing across epochs,
# i_t = order[(t - 1) mod l], eta_t = C sqrt(2 / t).
# Update: the output cache o = K alpha (+ b) holds o(x_r) for every training row r; when y_i o_i < 1 (a violation):
# o_r += (eta y_i) k(x_r, x_i) for every r (one kernel column, x_i scattered once), alpha_i += eta y_i, and with the
# bias b += eta y_i and o_r += eta y_i. A check is O(1); a violation costs one column, O(l nnz).
# List 3a (R_rhl, no bias): y_i o_i < 1: o += eta (y_i - alpha_i / C) K[:, i], alpha_i := (1 - eta/C) alpha_i +
# eta y_i; y_i o_i > 1: o -= (eta alpha_i / C) K[:, i], alpha_i := (1 - eta/C) alpha_i.
# List 1, NORMA (R_rhl): viol = y_i o_i before the decay; every alpha_j decays by d (faithful: d = 1 - eta/C = 1 -
# sqrt(2/t), which is 0 at t = 2 and wipes the model, spec finding 7; with eta0 and lambda: eta = eta0/sqrt(t), d = 1 -
# eta lambda); on viol <= 1 alpha_i := eta y_i (overwritten, not decayed). alpha = s abar and o = s obar with one
# global scale s, so the decay is O(1); abar and obar are reset when s reaches 0 and folded back when |s| leaves
# [1e-150, 1e150].
# List 2, Pegaz: alpha = eta_t beta, obar = K beta; viol = y_i eta obar_i <= 1: beta_i += y_i, obar += y_i K[:, i];
# at the end alpha = eta_T beta.
# Stop: after `epochs` passes (no tolerance: the paper's lists run a fixed number of steps).
# The NumPy twin is tests/reference/online_twin.py (olsvm_3b, olsvm_3a, norma, pegaz: their cached forms).
from libc.math cimport fabs, sqrt
from libc.stdint cimport int64_t
from libc.stdlib cimport calloc, free

import numpy as np

from kernel_types cimport value_t
from rowview cimport RowView
from kernel cimport KernelParams, dot_dense, scatter_row, kernel_from_dot
from llsvm._ext._view cimport Rows
from llsvm._ext._kernel cimport kernel_params


cdef inline void _column_add(const KernelParams* p, const RowView* v, int64_t i, double coef, double* o,
                             const double* sq, int64_t l, double* dense, value_t* kind) noexcept nogil:
    """o[r] += coef k(x_r, x_i) for every row r (x_i scattered once; dense is zeros again on return)."""
    cdef int64_t r
    cdef double sqi = sq[i]
    scatter_row(v, i, dense, False, kind)
    for r in range(l):
        o[r] += coef * kernel_from_dot(p, dot_dense(v, r, dense, kind), sq[r], sqi)
    scatter_row(v, i, dense, True, kind)


cdef enum:
    LIST_3B = 0
    LIST_3A = 1
    LIST_NORMA = 2
    LIST_PEGAZ = 3


cdef struct Run:
    int which
    double C
    bint bias
    bint faithful          # NORMA: d = 1 - eta/C (else eta0, lam)
    double eta0
    double lam


cdef int64_t _epochs(const KernelParams* p, const RowView* v, const int64_t* order, const signed char* y,
                     const double* sq, int64_t l, const Run* run, int64_t epochs, double* alpha, double* o,
                     double* b, double* s_out, double* eta_out, double* dense, int64_t* viol, int64_t* over,
                     value_t* kind) noexcept nogil:
    """The list `run.which` for `epochs` passes; returns the last t. viol[e] / over[e]: the steps of epoch e with a
    violation / (List 3a) with y_i o_i > 1. NORMA: alpha, o hold abar, obar and s_out the scale; Pegaz: alpha, o
    hold beta, obar and eta_out the last eta."""
    cdef int64_t e, k, i, r, t = 0
    cdef double eta = 0.0, c, d, vi, a_old, a_new, s = 1.0, s_new, delta
    cdef double C = run.C
    for e in range(epochs):
        viol[e] = 0
        over[e] = 0
        for k in range(l):
            t += 1
            i = order[k]
            if run.which == LIST_NORMA and not run.faithful:
                eta = run.eta0 / sqrt(<double>t)
            else:
                eta = C * sqrt(2.0 / <double>t)
            if run.which == LIST_3B:
                if y[i] * o[i] < 1.0:
                    viol[e] += 1
                    c = eta * y[i]
                    _column_add(p, v, i, c, o, sq, l, dense, kind)
                    alpha[i] += c
                    if run.bias:
                        b[0] += c
                        for r in range(l):
                            o[r] += c
            elif run.which == LIST_3A:
                d = 1.0 - eta / C
                vi = y[i] * o[i]
                if vi < 1.0:
                    viol[e] += 1
                    _column_add(p, v, i, eta * (y[i] - alpha[i] / C), o, sq, l, dense, kind)
                    alpha[i] = d * alpha[i] + eta * y[i]
                elif vi > 1.0:
                    over[e] += 1
                    _column_add(p, v, i, -(eta * alpha[i] / C), o, sq, l, dense, kind)
                    alpha[i] = d * alpha[i]
            elif run.which == LIST_NORMA:
                d = (1.0 - eta / C) if run.faithful else (1.0 - eta * run.lam)
                vi = y[i] * (s * o[i])
                a_old = s * alpha[i]
                if vi <= 1.0:
                    viol[e] += 1
                    a_new = eta * y[i]
                else:
                    a_new = a_old
                s_new = s * d
                if s_new == 0.0:
                    for r in range(l):
                        alpha[r] = 0.0
                        o[r] = 0.0
                    s_new = 1.0
                s = s_new
                alpha[i] = a_new / s
                delta = a_new - d * a_old
                if delta != 0.0:
                    _column_add(p, v, i, delta / s, o, sq, l, dense, kind)
                if fabs(s) < 1e-150 or fabs(s) > 1e150:
                    for r in range(l):
                        alpha[r] *= s
                        o[r] *= s
                    s = 1.0
            else:
                if y[i] * (eta * o[i]) <= 1.0:
                    viol[e] += 1
                    alpha[i] += y[i]
                    _column_add(p, v, i, <double>y[i], o, sq, l, dense, kind)
    s_out[0] = s
    eta_out[0] = eta
    return t


def _run(int which, Rows X, order, y, params, const double[::1] sqnorm, double C, int64_t epochs, bint bias,
         eta0, lam):
    cdef KernelParams p = kernel_params(params)
    cdef Run run
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
    run.which = which
    run.C = C
    run.bias = bias
    run.faithful = eta0 is None
    run.eta0 = 0.0 if eta0 is None else float(eta0)
    run.lam = 0.0 if lam is None else float(lam)
    if not run.faithful and (lam is None or not run.eta0 > 0 or not run.lam >= 0):
        raise ValueError("eta0 > 0 needs lam >= 0")
    alpha = np.zeros(l)
    o = np.zeros(l)
    viol = np.zeros(max(epochs, 1), np.int64)
    over = np.zeros(max(epochs, 1), np.int64)
    cdef double[::1] a_v = alpha, o_v = o
    cdef int64_t[::1] viol_v = viol, over_v = over
    cdef double b = 0.0, s = 1.0, eta = 0.0
    cdef int64_t t = 0
    if l == 0 or epochs == 0:
        return {"alpha": alpha, "o": o, "b": 0.0, "t": 0, "viol": viol[:epochs], "over": over[:epochs], "s": 1.0,
                "eta": 0.0}
    cdef double* dense = <double*>calloc(max(X.v.n_features, 1), sizeof(double))
    if dense == NULL:
        raise MemoryError(f"a scratch row of {X.v.n_features} features")
    try:
        with nogil:
            if X.f32:
                t = _epochs(&p, &X.v, &ord_[0], &yv[0], &sqnorm[0], l, &run, epochs, &a_v[0], &o_v[0], &b, &s, &eta,
                            dense, &viol_v[0], &over_v[0], <float*>NULL)
            else:
                t = _epochs(&p, &X.v, &ord_[0], &yv[0], &sqnorm[0], l, &run, epochs, &a_v[0], &o_v[0], &b, &s, &eta,
                            dense, &viol_v[0], &over_v[0], <double*>NULL)
    finally:
        free(dense)
    return {"alpha": alpha, "o": o, "b": b, "t": int(t), "viol": viol[:epochs], "over": over[:epochs], "s": s,
            "eta": eta}


def olsvm_3b(Rows X not None, order, y, params, const double[::1] sqnorm, double C, int64_t epochs=1,
             bint bias=True):
    """List 3b over the rows of X (labels y, +1/-1, by row) in the given order (a permutation of the rows: the one
    shuffle), for `epochs` passes. params: the kernel (kernel_type, gamma, degree, coef0, LIBSVM's). Returns a dict:
    alpha, o (o = K alpha + b, by row), b, t (steps made), viol (violations per epoch)."""
    r = _run(LIST_3B, X, order, y, params, sqnorm, C, epochs, bias, None, None)
    return {k: r[k] for k in ("alpha", "o", "b", "t", "viol")}


def olsvm_3a(Rows X not None, order, y, params, const double[::1] sqnorm, double C, int64_t epochs=1):
    """List 3a (no bias). Returns alpha, o (= K alpha), t, viol (y_i o_i < 1 per epoch), over (y_i o_i > 1)."""
    r = _run(LIST_3A, X, order, y, params, sqnorm, C, epochs, False, None, None)
    return {k: r[k] for k in ("alpha", "o", "t", "viol", "over")}


def norma(Rows X not None, order, y, params, const double[::1] sqnorm, double C, int64_t epochs=1, eta0=None,
          lam=None):
    """List 1, NORMA: faithful (eta0 None: d = 1 - sqrt(2/t)) or Kivinen's (eta_t = eta0/sqrt(t), d = 1 - eta_t lam).
    Returns alpha, o (= K alpha), t, viol (viol <= 1 per epoch)."""
    r = _run(LIST_NORMA, X, order, y, params, sqnorm, C, epochs, False, eta0, lam)
    return {"alpha": r["s"] * r["alpha"], "o": r["s"] * r["o"], "t": r["t"], "viol": r["viol"]}


def pegaz(Rows X not None, order, y, params, const double[::1] sqnorm, double C, int64_t epochs=1):
    """List 2, Pegaz. Returns alpha (= eta_T beta), beta, o (= K alpha), obar (= K beta), t, viol."""
    r = _run(LIST_PEGAZ, X, order, y, params, sqnorm, C, epochs, False, None, None)
    eta = r["eta"]
    return {"alpha": eta * r["alpha"], "beta": r["alpha"], "o": eta * r["o"], "obar": r["o"], "t": r["t"],
            "viol": r["viol"]}
