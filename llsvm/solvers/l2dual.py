"""-s 7, -s 12, -s 13, -s 21 and -s 4: LIBLINEAR 2.50's other L2-regularized dual solvers, around the kernels of
cext/_l2dual.pyx (whose opening comment states each problem, update and stopping rule):

  -s 7   logistic regression, dual coordinate descent with inner Newton steps (solve_l2r_lr_dual); at the iteration
         limit LIBLINEAR switches to -s 0 at a tenth of the primal tolerance, and so does this driver
  -s 12  L2-loss SVR, dual coordinate descent (solve_l2r_l1l2_svr); at the limit it switches to -s 11 at 0.001 of it
  -s 13  L1-loss SVR, dual coordinate descent
  -s 21  one-class SVM, two-level coordinate descent (solve_oneclass_svm); the model carries rho
  -s 4   Crammer and Singer's multiclass SVM, sequential dual (Solver_MCSVM_CS); one problem over all classes

Each driver prints LIBLINEAR's lines and returns a FitResult with the certificate of its problem (primal, dual in
maximization form, gap, a violation). On no rows (a fold of leave-one-out cross-validation on one row) the drivers
of -s 12, 13, 21 and 4 print what LIBLINEAR's solver prints on none, without calling the kernel: its loop's first
test stops it (NO_ROWS_ITER), w = 0 (-s 21: rho nan, LIBLINEAR's (inf - inf) / 2).
"""
import math

import numpy as np

from .._ext import _l2dual as K
from .._ext._random import rng_state
from .. import memory
from .common import (FitResult, WARN_MAX_ITER, c_arithmetic, event_buffer, report_finished, scout_pays,
                     say_events, warn_max_iter, xlogx)
from .newton import L2R_LR, L2R_L2LOSS_SVR, primal_tol, solve_newton
from ..params import NEWTON_MAX_ITER
from ..predict import printf_f

L2R_LR_DUAL = 7
L2R_L2LOSS_SVR_DUAL = 12
L2R_L1LOSS_SVR_DUAL = 13
ONECLASS_SVM = 21
MCSVM_CS = 4
# the iterations LIBLINEAR's solvers count on no rows: solve_l2r_l1l2_svr's and Solver_MCSVM_CS's first pass ends
# with iter = 1 (then its stopping test holds: 0 <= eps * 0, -inf < eps); solve_oneclass_svm tests before counting
NO_ROWS_ITER = {L2R_L2LOSS_SVR_DUAL: 1, L2R_L1LOSS_SVR_DUAL: 1, ONECLASS_SVM: 0, MCSVM_CS: 1}


# -- -s 7 ---------------------------------------------------------------------------------------------------------
def lr_dual_train_one(sub, params, seed, reporter, warm=None):
    max_iter = params.max_iter or params.spec.default_max_iter
    alpha = np.empty(2 * sub.l, np.float64)
    w = np.zeros(sub.w_size, np.float64)
    ev = event_buffer(max_iter)
    scout = scout_pays(sub, params.threads)         # a second thread reads the rows ahead (same model)
    it, n = K.lr_dual(*sub.args, sub.y, sub.Cp, sub.Cn, params.eps, max_iter, alpha, w, rng_state(seed), ev,
                      scout)
    say_events(reporter, ev, n)
    a = alpha[0::2].copy()
    C = sub.C()
    with c_arithmetic():            # inf or nan at an extreme C (-c 1e308): the certificate says so
        ent = xlogx(alpha[0::2]) + xlogx(alpha[1::2]) - xlogx(C)
        wTw = float(w @ w)
        objective = 0.5 * wTw + float(ent.sum())
        m = sub.y * sub.margins(w)
        primal = 0.5 * wTw + float(C @ np.logaddexp(0.0, -m))
        # the violation: the largest |g'| of the one-variable problems at alpha (log(alpha / (C - alpha)) - y w.x ...)
        viol = float(np.max(np.abs(np.log(alpha[0::2] / alpha[1::2]) + m))) if sub.l else 0.0
    if reporter is not None:
        report_finished(reporter, it, objective, None)
    res = FitResult(w=w, alpha=a, n_iter=it, primal=primal, dual=-objective, gap=primal + objective,
                    max_violation=viol, nSV=int(np.count_nonzero(a > 0)), converged=it < max_iter,
                    solver=L2R_LR_DUAL)
    res.extra["objective_value"] = objective
    if scout:
        res.extra["scout"] = True
    if it >= max_iter:
        warn_max_iter(reporter, "Switching to use -s 0\n\n")
        dual = res
        res = solve_newton(sub, primal_tol(sub, params.eps) * 0.1, NEWTON_MAX_ITER, w0=dual.w, reporter=reporter,
                           solver=L2R_LR)
        res.extra["dual_iterations"] = dual.n_iter
        res.extra["switched_to_primal"] = True
    return res


# -- -s 12 / -s 13 ------------------------------------------------------------------------------------------------
def svr_dual_train_one(sub, params, seed, reporter, warm=None):
    l1 = params.solver == L2R_L1LOSS_SVR_DUAL
    max_iter = params.max_iter or params.spec.default_max_iter
    C, p = sub.Cp, params.svr_p
    beta = np.zeros(sub.l, np.float64)
    w = np.zeros(sub.w_size, np.float64)
    ev = event_buffer(max_iter)
    scout = scout_pays(sub, params.threads)         # a second thread reads the rows ahead (same model)
    if sub.l:
        it, n = K.svr_dual(*sub.args, sub.targets, C, p, l1, params.eps, max_iter, beta, w, rng_state(seed), ev,
                           scout)
    else:
        it, n = NO_ROWS_ITER[params.solver], 0
    say_events(reporter, ev, n)
    if sub.weights is not None:
        C = sub.C()                 # C_i = C W_i (docs/weights.md): lambda_i, U_i and the primal's costs per row
    lam = 0.0 if l1 else 0.5 / C
    wTw = float(w @ w)
    quad = lam * (beta @ beta) if sub.weights is None else float((lam * beta) @ beta)
    objective = 0.5 * wTw + float(p * np.abs(beta).sum() - sub.targets @ beta + 0.5 * quad)
    nSV = int(np.count_nonzero(beta))
    report_finished(reporter, it, objective, nSV)
    e = np.abs(sub.margins(w) - sub.targets) - p
    np.maximum(e, 0.0, out=e)
    loss = e if l1 else e * e
    primal = 0.5 * wTw + (C * float(loss.sum()) if sub.weights is None else float(C @ loss))
    res = FitResult(w=w, alpha=beta, n_iter=it, primal=primal, dual=-objective, gap=primal + objective,
                    max_violation=_svr_violation(sub, w, beta, C, p, lam, l1), nSV=nSV, converged=it < max_iter,
                    solver=params.solver)
    res.extra["objective_value"] = objective
    if scout:
        res.extra["scout"] = True
    if it >= max_iter:
        if l1:
            warn_max_iter(reporter, "Using -s 11 may be faster (also see FAQ)\n\n")
        else:
            warn_max_iter(reporter, "Switching to use -s 11\n\n")
            dual = res
            res = solve_newton(sub, params.eps * 0.001, NEWTON_MAX_ITER, w0=dual.w, reporter=reporter,
                               solver=L2R_L2LOSS_SVR, p=p)
            res.extra["dual_iterations"] = dual.n_iter
            res.extra["switched_to_primal"] = True
    return res


def _svr_violation(sub, w, beta, C, p, lam, l1):
    """The largest projected-gradient violation of the SVR dual at beta (LIBLINEAR's `violation`); C and lam scalars
    or, with weights, one per row."""
    G = sub.margins(w) - sub.targets + lam * beta
    Gp, Gn = G + p, G - p
    U = C if l1 else np.inf
    v = np.where(beta > 0, np.abs(Gp), np.abs(Gn))
    zero = beta == 0
    v[zero] = np.maximum(np.maximum(-Gp[zero], Gn[zero]), 0.0)
    if l1:
        up, lo = beta >= U, beta <= -U
        v[up] = np.maximum(Gp[up], 0.0)
        v[lo] = np.maximum(-Gn[lo], 0.0)
    return float(v.max()) if v.size else 0.0


# -- -s 21 --------------------------------------------------------------------------------------------------------
def oneclass_train_one(sub, params, seed, reporter, warm=None):
    max_iter = params.max_iter or params.spec.default_max_iter
    l, nu = sub.l, params.nu
    alpha = np.empty(l, np.float64)
    w = np.zeros(sub.w_size, np.float64)
    ev = event_buffer(max_iter)
    if l:
        it, n = K.oneclass(*sub.args, l, nu, params.eps, max_iter, alpha, w, ev)
        wTw, lb, ub, nr_free, sum_free = K.oneclass_end(*sub.args, alpha, w)     # summed in LIBLINEAR's order
    else:
        it, n = NO_ROWS_ITER[ONECLASS_SVM], 0
        wTw, lb, ub, nr_free, sum_free = 0.0, -math.inf, math.inf, 0, 0.0
    say_events(reporter, ev, n)
    nSV = int(np.count_nonzero(alpha > 0))
    report_finished(reporter, it, wTw / 2, nSV, after_first=WARN_MAX_ITER + "\n" if it >= max_iter else "")
    G = sub.margins(w)
    if nr_free > 0:
        rho = sum_free / nr_free
    else:
        # LIBLINEAR takes (ub + lb) / 2, which is infinite when one side is empty: with -n 1 every alpha is 1 (their
        # sum is nu l = l) and every rho >= lb is optimal; the model takes the finite end, lb (or ub), which LIBLINEAR's
        # predict reads, where it would write "rho inf"; no rows at all: LIBLINEAR's (inf - inf) / 2, x86's NaN,
        # its sign bit set, which train prints "-nan" (its model predicts -1)
        rho = (ub + lb) / 2 if math.isfinite(ub) and math.isfinite(lb) else (lb if math.isfinite(lb) else ub)
        if not l:
            rho = -math.nan
    if reporter is not None:
        reporter.info(f"rho = {printf_f(rho)}\n")
    # the scaled primal: 1/2 |w|^2 - nu l rho + sum max(0, rho - w.x_i); the dual (maximization) -1/2 |w|^2;
    # weighted rows (docs/weights.md): U_i = W_i, 1/2 |w|^2 - nu sum W rho + sum W_i max(0, rho - w.x_i)
    U = sub.C()
    if sub.weights is None:
        primal = 0.5 * wTw - nu * l * rho + float(np.maximum(rho - G, 0.0).sum())
    else:
        primal = 0.5 * wTw - nu * float(U.sum()) * rho + float(U @ np.maximum(rho - G, 0.0))
    negG = -G
    up, low = alpha < U, alpha > 0
    viol = float(negG[up].max() - negG[low].min()) if up.any() and low.any() else 0.0
    res = FitResult(w=w, alpha=alpha, n_iter=it, primal=primal, dual=-wTw / 2, gap=primal + wTw / 2,
                    max_violation=max(viol, 0.0), nSV=nSV, converged=it < max_iter, solver=ONECLASS_SVM)
    res.extra["rho"] = rho
    res.extra["objective_value"] = wTw / 2
    return res


# -- -s 4 ---------------------------------------------------------------------------------------------------------
def mcsvm_train_one(sub, params, seed, reporter, warm=None):
    max_iter = params.max_iter or params.spec.default_max_iter
    k = sub.C_class.size
    # alpha and its class order (l k of them), and the decision values of the certificate: checked before made
    memory.check(20 * sub.l * k, f"-s 4's dual variables for {sub.l} rows and {k} classes take "
                                 f"{memory.format_size(20 * sub.l * k)}")
    alpha = np.empty(sub.l * k, np.float64)
    W = np.zeros((sub.w_size, k), np.float64)
    ev = event_buffer(max_iter)
    if sub.l:
        it, n = K.mcsvm_cs(*sub.args, sub.cls, sub.C_class, params.eps, max_iter, alpha, W.reshape(-1),
                           rng_state(seed), ev)
    else:
        it, n = NO_ROWS_ITER[MCSVM_CS], 0
    say_events(reporter, ev, n)
    A = alpha.reshape(sub.l, k)
    rows = np.arange(sub.l)
    with c_arithmetic():            # inf or nan at an extreme C (-c 1e308): the certificate says so
        wTw = float((W * W).sum())
        objective = 0.5 * wTw + float(A.sum()) - float(A[rows, sub.cls].sum())
    nSV = int(np.count_nonzero(A))
    report_finished(reporter, it, objective, nSV, after_first=WARN_MAX_ITER if it >= max_iter else "")
    dec = np.empty((sub.l, k), np.float64)
    for m in range(k):
        dec[:, m] = sub.margins(np.ascontiguousarray(W[:, m]))
    own = dec[rows, sub.cls]
    with c_arithmetic():
        marg = dec - own[:, None] + 1.0
        marg[rows, sub.cls] = 0.0
        Cy = sub.C_class[sub.cls]
        if sub.weights is not None:
            Cy = Cy * sub.weights       # C_i = C_{y_i} W_i (docs/weights.md)
        primal = 0.5 * wTw + (float(Cy @ marg.max(axis=1)) if k else 0.0)
        # the violation: LIBLINEAR's maxG - minG of every row at the end
        viol = 0.0
        if sub.l:
            G = marg
            free_low = A < 0
            free_low[rows, sub.cls] = A[rows, sub.cls] < Cy
            minG = np.where(free_low, G, np.inf).min(axis=1)
            viol = float(np.max(G.max(axis=1) - minG))
    res = FitResult(w=W, alpha=A, n_iter=it, primal=primal, dual=-objective, gap=primal + objective,
                    max_violation=max(viol, 0.0), nSV=nSV, converged=it < max_iter, solver=MCSVM_CS)
    res.extra["objective_value"] = objective
    return res
