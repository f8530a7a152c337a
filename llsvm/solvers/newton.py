"""-s 0, -s 2 and -s 11: the L2-regularized primal problems of LIBLINEAR 2.50, by its Newton method with
preconditioned conjugate gradient and backtracking line search (Galli & Lin, "A study on truncated Newton methods
for linear classification", IEEE TNNLS 2021; newton.cpp), around cext/_linear.pyx's NewtonFun (f, gradient,
preconditioner, CG, line search: every sum in LIBLINEAR's order, so that the lines and models are its own). One
Newton loop (solve_newton), three functions:
  -s 0  logistic regression  f(w) = 1/2 w.w + sum C_i log(1 + exp(-y_i w.x_i))       (l2r_lr_fun)
  -s 2  L2-loss SVC          f(w) = 1/2 w.w + sum C_i max(0, 1 - y_i w.x_i)^2          (l2r_l2_svc_fun)
  -s 11 L2-loss SVR          f(w) = 1/2 w.w + sum C_i max(0, |w.x_i - y_i| - p)^2      (l2r_l2_svr_fun)
each with the certificate of its dual (the dual point the optimality conditions give at w).
"""

import numpy as np

from .._ext import _linear as K
from .common import FitResult, problem_threads
from .newtonfun import L2R_L2LOSS_SVC, L2R_L2LOSS_SVR, L2R_LR, after_step, certificate_sums, dual_value, make_fun
from ..params import NEWTON_MAX_ITER

__all__ = ["L2R_LR", "L2R_L2LOSS_SVC", "L2R_L2LOSS_SVR", "primal_tol", "train_one", "solve_newton"]


def primal_tol(sub, eps):
    """LIBLINEAR's train_one tolerance of the primal solvers: eps * max(min(pos, neg), 1) / l for classification,
    eps itself for regression (weighted rows: Subproblem.sizes' sums of weights)."""
    if sub.targets is not None:
        return eps
    pos, l = sub.sizes()
    return eps * max(min(pos, l - pos), 1) / l


def train_one(sub, params, seed, reporter, warm=None):
    """One problem of -s 0, -s 2 or -s 11 with LIBLINEAR's train_one logic (the tolerance of primal_tol). With
    params.threads > 1 (the problem alone: trainer._fit gives it the threads), its rows in blocks summed by a thread
    pool (dnewton.solve_threaded)."""
    threads = problem_threads(sub, params.threads) if warm is None else 1
    if threads > 1:
        from .dnewton import solve_threaded
        return solve_threaded(sub, params.but(threads=threads), reporter)
    return solve_newton(sub, primal_tol(sub, params.eps), params.max_iter or params.spec.default_max_iter,
                        w0=None if warm is None else warm.get("w"), regularize_bias=params.regularize_bias,
                        reporter=reporter, solver=params.solver, p=params.svr_p)


def _pcg(fun, g, M, s, r, eps_cg, say):
    """Preconditioned conjugate gradient for H s = -g with the quadratic-model stopping rule (NEWTON::pcg), the
    whole loop in the kernel."""
    cg_iter, flags = fun.k.pcg(g, M, s, r, eps_cg)
    if flags & 1:
        say("WARNING: quadratic approximation > 0 or increasing in CG\n")
    if flags & 2:
        say("WARNING: reaching maximal number of CG steps\n")
    return cg_iter


def solve_newton(sub, eps, max_iter=NEWTON_MAX_ITER, w0=None, regularize_bias=True, reporter=None, eps_cg=0.5,
                 solver=L2R_L2LOSS_SVC, p=0.1):
    """-s 0, -s 2 or -s 11 (`solver`): Newton with preconditioned CG and backtracking line search (LIBLINEAR 2.50's
    NEWTON::newton).

    `eps` is the tolerance after LIBLINEAR's scaling (primal_tol): stop when |grad f(w)| <= eps |grad f(0)|.
    """
    say = reporter.info if reporter is not None else (lambda s: None)
    fun = make_fun(sub, solver, regularize_bias, p)
    n = sub.w_size
    w = np.zeros(n, np.float64) if w0 is None else np.array(w0, dtype=np.float64)
    g = np.empty(n, np.float64)
    s = np.empty(n, np.float64)
    r = np.empty(n, np.float64)
    M = np.empty(n, np.float64)
    alpha_pcg = 0.01
    k = fun.k
    w_zero = np.zeros(n, np.float64)
    k.fun(w_zero)
    k.grad(w_zero, g)
    gnorm0 = K.dnrm2(g)
    f = k.fun(w)
    k.grad(w, g)
    gnorm = K.dnrm2(g)
    say(f"init f {f:5.3e} |g| {gnorm:5.3e}\n")
    search = gnorm > eps * gnorm0
    it = 1
    done = 0                       # Newton steps taken
    converged = not search
    while it <= max_iter and search:
        k.preconditioner(M, alpha_pcg)
        cg_iter = _pcg(fun, g, M, s, r, eps_cg, say)
        fold = f
        step, f = k.linesearch(w, s, f, g, 1.0)
        if step == 0:
            say("WARNING: line search fails\n")
            break
        done += 1
        k.grad(w, g)
        gnorm = K.dnrm2(g)
        end = after_step(say, it, f, fold, gnorm, gnorm0, eps, cg_iter, step)
        if end is not None:
            converged = end == "converged"
            break
        it += 1
    if it >= max_iter:
        say("\nWARNING: reaching max number of Newton iterations\n")
    primal = k.fun(w)
    k.grad(w, g)
    alpha, dual = _dual_certificate(sub, fun, w)
    res = FitResult(w=w, alpha=alpha, n_iter=done, primal=primal, dual=dual, gap=primal - dual,
                    max_violation=K.dnrm2(g), nSV=int(np.count_nonzero(alpha != 0)),
                    converged=converged, solver=solver)
    res.extra["gnorm0"] = gnorm0
    return res


def _dual_certificate(sub, fun, w):
    """(alpha, dual value) of the dual point the optimality conditions give at w, with w(alpha) recomputed (the
    dual's maximization form, so primal - dual >= 0 is the gap). With -R the bias is unregularized and these duals
    do not apply: dual NaN."""
    alpha, w_alpha, sums = certificate_sums(sub, fun)
    dual = dual_value(fun.solver, w_alpha, sums, fun.p) if fun.regularize_bias else float("nan")
    return alpha, dual
