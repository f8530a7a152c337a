"""-s 5 and -s 6: LIBLINEAR 2.50's L1-regularized solvers, around the kernels of cext/_l1r.pyx (whose opening
comment states each problem, update and stopping rule): coordinate descent for the L2-loss SVC (solve_l1r_l2_svc)
and newGLMNET for logistic regression (solve_l1r_lr). Both work on the problem's columns, which the driver builds
from the row view as LIBLINEAR's transpose() does (the bias column included).

The certificate: the primal objective and the largest violation of the optimality conditions (the minimum-norm
subgradient, as the solvers measure it); these problems have no dual that LIBLINEAR computes, so dual and gap are
NaN.
"""
import numpy as np

from .._ext import _l1r as K
from .._ext import _linear as L
from .._ext._random import rng_state
from .common import WARN_MAX_ITER, FitResult, c_arithmetic, event_buffer, report_finished, say_events
from .newton import primal_tol

L1R_L2LOSS_SVC = 5
L1R_LR = 6


def _closing(reporter, it, objective, w, limit, banner=False):
    """LIBLINEAR's closing lines of -s 5 and 6 (-s 6's Newton after a line of =), the warning between the first
    two, and the count of non-zero weights."""
    if reporter is None:
        return
    warning = (WARN_MAX_ITER.lstrip("\n") if banner else WARN_MAX_ITER) if limit else ""
    report_finished(reporter, it, objective, None, blank_line=not banner, after_first=warning,
                    before="=========================\n" if banner else "",
                    last=f"#nonzeros/#features = {int(np.count_nonzero(w))}/{w.size}\n")


def certify_lr(sub, w, exp_wx, violation, regularize_bias=True):
    """certify() for -s 6 from what its kernel leaves: exp(w.x_i) of every row and the violation it measured over
    every feature at w (no pass over the data)."""
    with c_arithmetic():            # inf at an extreme C (-c 1e308): the certificate says so, as LIBLINEAR prints it
        m = sub.y * np.log(exp_wx)
        loss = float(sub.C() @ np.logaddexp(0.0, -m))
    reg = np.abs(w)
    if not regularize_bias:
        reg[-1] = 0.0
    nSV = int(np.count_nonzero(np.exp(-np.logaddexp(0.0, m))))
    return float(reg.sum()) + loss, float(violation), nSV


def certify(sub, w, l2loss, regularize_bias=True, columns=None, b=None):
    """(primal, max violation, nSV) of an L1-regularized model: |w|_1 + sum C_i loss_i, the largest minimum-norm
    subgradient violation over the features, and the rows whose loss has a non-zero gradient. `columns`: the
    problem's columns as the solver left them ((col_ptr, col_row, col_val), -s 5's values multiplied by y_i), to
    compute X w and X^T v from them; None: from the row view. b: -s 5's 1 - y_i w.x_i as its kernel left it."""
    C = sub.C()
    if b is not None:
        m = 1.0 - b
    elif columns is None:
        m = sub.y * sub.margins(w)
    else:
        m = np.empty(sub.l, np.float64)
        K.col_xv(*columns, w, m)
        if not l2loss:
            m *= sub.y
    with c_arithmetic():            # inf at an extreme C (-c 1e308): the certificate says so, as LIBLINEAR prints it
        if l2loss:
            b = np.maximum(1.0 - m, 0.0)
            loss = float(C @ (b * b))
            coef = -2.0 * C * b                 # times y_i: in -s 5's columns, or below
        else:
            loss = float(C @ np.logaddexp(0.0, -m))
            coef = -C * sub.y * np.exp(-np.logaddexp(0.0, m))
    g = np.empty(sub.w_size, np.float64)
    I = np.flatnonzero(coef).astype(np.int32)
    if columns is None:
        if l2loss:
            coef = coef * sub.y
        L.sub_xtv(*sub.args, I, coef[I], g)
    else:
        K.col_xtv(*columns, coef, g)
    reg = np.abs(w)
    if not regularize_bias:
        reg[-1] = 0.0
    v = np.where(w > 0, np.abs(g + 1.0), np.where(w < 0, np.abs(g - 1.0), np.maximum(np.abs(g) - 1.0, 0.0)))
    if not regularize_bias:
        v[-1] = abs(g[-1])
    return float(reg.sum()) + loss, float(v.max()) if v.size else 0.0, int(I.size)


def train_one(sub, params, seed, reporter, warm=None):
    """One binary problem of -s 5 or -s 6 with LIBLINEAR's train_one logic (the primal tolerance)."""
    l2loss = params.solver == L1R_L2LOSS_SVC
    max_iter = params.max_iter or params.spec.default_max_iter
    eps = primal_tol(sub, params.eps)
    col_ptr, col_row, col_val = sub.columns()
    C = sub.C()
    w = np.zeros(sub.w_size, np.float64)
    if l2loss:
        ev = event_buffer(max_iter, extra=4096)            # and a '#' per line search that recomputes b
        it, n, b = K.l1r_l2svc(col_ptr, col_row, col_val, sub.y, sub.Cp, sub.Cn, params.regularize_bias, eps, max_iter, w,
                               rng_state(seed), ev, None if sub.weights is None else C)
        say_events(reporter, ev, n)
    else:
        it, cycles, inner, exp_wx, violation = K.l1r_lr(col_ptr, col_row, col_val, sub.y, C,
                                                         params.regularize_bias, eps, max_iter, w, rng_state(seed))
        if reporter is not None:
            for k in range(it):
                if inner[k]:
                    reporter.info("WARNING: reaching max number of inner iterations\n")
                reporter.info(f"iter {k + 1:3d}  #CD cycles {int(cycles[k])}\n")
    if not l2loss and np.isfinite(violation):
        primal, viol, nSV = certify_lr(sub, w, exp_wx, violation, params.regularize_bias)
    else:
        primal, viol, nSV = certify(sub, w, l2loss, params.regularize_bias, (col_ptr, col_row, col_val),
                                    b if l2loss else None)
    _closing(reporter, it, primal, w, it >= max_iter, banner=not l2loss)
    res = FitResult(w=w, n_iter=it, primal=primal, max_violation=viol, nSV=nSV,
                    converged=it < max_iter, solver=params.solver)
    res.extra["objective_value"] = primal
    return res
