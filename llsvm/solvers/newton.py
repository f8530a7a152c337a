"""-s 0, -s 2 and -s 11: the L2-regularized primal problems of LIBLINEAR 2.50, by its Newton method with
preconditioned conjugate gradient and backtracking line search (Galli & Lin, "A study on truncated Newton methods
for linear classification", IEEE TNNLS 2021; newton.cpp), around the X v, X^T v and Hessian-vector kernels of
cext/_linear.pyx. One Newton loop (solve_newton), three functions:
  -s 0  logistic regression  f(w) = 1/2 w.w + sum C_i log(1 + exp(-y_i w.x_i))       (l2r_lr_fun)
  -s 2  L2-loss SVC          f(w) = 1/2 w.w + sum C_i max(0, 1 - y_i w.x_i)^2          (l2r_l2_svc_fun)
  -s 11 L2-loss SVR          f(w) = 1/2 w.w + sum C_i max(0, |w.x_i - y_i| - p)^2      (l2r_l2_svr_fun)
each with the certificate of its dual (the dual point the optimality conditions give at w).
"""

import numpy as np

from .._ext import _linear as K
from .common import FitResult, expit, xlogx
from ..params import NEWTON_MAX_ITER

L2R_LR = 0
L2R_L2LOSS_SVC = 2
L2R_L2LOSS_SVR = 11


def primal_tol(sub, eps):
    """LIBLINEAR's train_one tolerance of the primal solvers: eps * max(min(pos, neg), 1) / l for classification,
    eps itself for regression."""
    if sub.targets is not None:
        return eps
    l = sub.l
    pos = int(np.count_nonzero(sub.y > 0))
    return eps * max(min(pos, l - pos), 1) / l


def train_one(sub, params, seed, reporter, warm=None):
    """One problem of -s 0, -s 2 or -s 11 with LIBLINEAR's train_one logic (the tolerance of primal_tol)."""
    return solve_newton(sub, primal_tol(sub, params.eps), params.max_iter or params.spec.default_max_iter,
                        w0=None if warm is None else warm.get("w"), regularize_bias=params.regularize_bias,
                        reporter=reporter, solver=params.solver, p=params.svr_p)


class _L2SVCFun:
    """f(w) = 1/2 w.w + sum C_i max(0, 1 - y_i w.x_i)^2, its gradient and generalized Hessian (l2r_l2_svc_fun)."""

    def __init__(self, sub, regularize_bias=True):
        self.sub = sub
        self.C = sub.C()
        self.yf = sub.y.astype(np.float64)
        self.regularize_bias = regularize_bias
        self.wx = np.empty(sub.l, np.float64)
        self.tmp = np.empty(sub.l, np.float64)
        self.I = np.empty(0, np.int32)
        self.wTw = 0.0

    def _wTw(self, w):
        t = float(w @ w)
        if not self.regularize_bias:
            t -= w[-1] * w[-1]
        return t

    def loss(self, wx):
        d = 1.0 - self.yf * wx
        np.maximum(d, 0.0, out=d)
        return float(self.C @ (d * d))

    def fun(self, w):
        K.xv(*self.sub.args, w, self.wx)
        self.wTw = self._wTw(w)
        return self.loss(self.wx) + 0.5 * self.wTw

    def grad(self, w, g):
        t = self.wx * self.yf
        self.I = np.flatnonzero(t < 1).astype(np.int32)
        coef = self.C[self.I] * self.yf[self.I] * (t[self.I] - 1.0)
        K.sub_xtv(*self.sub.args, self.I, coef, g)
        g *= 2.0
        g += w
        if not self.regularize_bias:
            g[-1] -= w[-1]

    def hessian(self):
        """(I, c, factor) of the Hessian I + factor X_I^T diag(c) X_I: the rows with a positive loss, 2 C."""
        return self.I, self.C, 2.0

    def diag_preconditioner(self, M):
        """M = 1 + diag(factor X_I^T diag(c) X_I) of hessian() (0 for an unregularized bias before the data)."""
        M.fill(1.0)
        if not self.regularize_bias:
            M[-1] = 0.0
        I, c, factor = self.hessian()
        K.l2svc_diag(*self.sub.args, I, c * (factor / 2.0), M)     # the kernel adds 2 sum c_i x_ij^2

    def linesearch_and_update(self, w, s, f, g, alpha):
        """Backtracking line search on f(w + alpha s) using X s (l2r_erm_fun::linesearch_and_update)."""
        eta = 0.01
        fold = f
        K.xv(*self.sub.args, s, self.tmp)
        sTs = float(s @ s)
        wTs = float(s @ w)
        gTs = float(s @ g)
        if not self.regularize_bias:
            sTs -= s[-1] * s[-1]
            wTs -= s[-1] * w[-1]
        for _ in range(20):
            f = self.loss(self.tmp * alpha + self.wx) + (alpha * alpha * sTs + self.wTw) / 2.0 + alpha * wTs
            if f - fold <= eta * alpha * gTs:
                self.wx += alpha * self.tmp
                break
            alpha *= 0.5
        else:
            return 0.0, fold
        w += alpha * s
        self.wTw += alpha * alpha * sTs + 2 * alpha * wTs
        return alpha, f


class _LRFun(_L2SVCFun):
    """f(w) = 1/2 w.w + sum C_i log(1 + exp(-y_i w.x_i)), its gradient and Hessian (l2r_lr_fun): every row is in
    the Hessian, with weight C_i D_i, D_i = sigma_i (1 - sigma_i)."""

    def __init__(self, sub, regularize_bias=True):
        super().__init__(sub, regularize_bias)
        self.I = np.arange(sub.l, dtype=np.int32)
        self.CD = np.zeros(sub.l, np.float64)

    def loss(self, wx):
        return float(self.C @ np.logaddexp(0.0, -self.yf * wx))

    def grad(self, w, g):
        t = expit(self.yf * self.wx)
        np.multiply(self.C, t * (1.0 - t), out=self.CD)
        coef = self.C * (t - 1.0) * self.yf
        K.sub_xtv(*self.sub.args, self.I, coef, g)
        g += w
        if not self.regularize_bias:
            g[-1] -= w[-1]

    def hessian(self):
        """Every row, with weight C_i D_i."""
        return self.I, self.CD, 1.0



class _SVRFun(_L2SVCFun):
    """f(w) = 1/2 w.w + sum C_i max(0, |w.x_i - y_i| - p)^2 (l2r_l2_svr_fun): the squared-hinge Hessian over the
    rows outside the tube."""

    def __init__(self, sub, regularize_bias=True, p=0.1):
        super().__init__(sub, regularize_bias)
        self.t = sub.targets
        self.p = float(p)

    def _excess(self, wx):
        d = wx - self.t
        return np.sign(d) * np.maximum(np.abs(d) - self.p, 0.0)

    def loss(self, wx):
        e = self._excess(wx)
        return float(self.C @ (e * e))

    def grad(self, w, g):
        e = self._excess(self.wx)
        self.I = np.flatnonzero(e != 0).astype(np.int32)
        K.sub_xtv(*self.sub.args, self.I, self.C[self.I] * e[self.I], g)
        g *= 2.0
        g += w
        if not self.regularize_bias:
            g[-1] -= w[-1]


def make_fun(sub, solver, regularize_bias=True, p=0.1):
    if solver == L2R_LR:
        return _LRFun(sub, regularize_bias)
    if solver == L2R_L2LOSS_SVR:
        return _SVRFun(sub, regularize_bias, p)
    return _L2SVCFun(sub, regularize_bias)


def _pcg(fun, g, M, s, r, eps_cg, say):
    """Preconditioned conjugate gradient for H s = -g with the quadratic-model stopping rule (NEWTON::pcg): the
    kernel runs the whole loop (cext/_linear.pyx: pcg) on the function's Hessian H = I + factor X_I^T diag(c) X_I."""
    I, c, factor = fun.hessian()
    cg_iter, flags = K.pcg(*fun.sub.args, I, c, factor, fun.regularize_bias, g, M, s, r, eps_cg)
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
    w_zero = np.zeros(n, np.float64)
    fun.fun(w_zero)
    fun.grad(w_zero, g)
    gnorm0 = float(np.linalg.norm(g))
    f = fun.fun(w)
    fun.grad(w, g)
    gnorm = float(np.linalg.norm(g))
    say(f"init f {f:5.3e} |g| {gnorm:5.3e}\n")
    search = gnorm > eps * gnorm0
    it = 1
    done = 0                       # Newton steps taken
    converged = not search
    while it <= max_iter and search:
        fun.diag_preconditioner(M)
        M *= alpha_pcg
        M += 1.0 - alpha_pcg
        cg_iter = _pcg(fun, g, M, s, r, eps_cg, say)
        fold = f
        step, f = fun.linesearch_and_update(w, s, f, g, 1.0)
        if step == 0:
            say("WARNING: line search fails\n")
            break
        done += 1
        fun.grad(w, g)
        gnorm = float(np.linalg.norm(g))
        say(f"iter {it:2d} f {f:5.3e} |g| {gnorm:5.3e} CG {cg_iter:3d} step_size {step:4.2e} \n")
        if gnorm <= eps * gnorm0:
            converged = True
            break
        if f < -1.0e32:
            say("WARNING: f < -1.0e+32\n")
            break
        actred = fold - f
        if abs(actred) <= 1.0e-12 * abs(f):
            say("WARNING: actred too small\n")
            break
        it += 1
    if it >= max_iter:
        say("\nWARNING: reaching max number of Newton iterations\n")
    primal = fun.fun(w)
    fun.grad(w, g)
    alpha, dual = _dual_certificate(sub, fun, w)
    res = FitResult(w=w, alpha=alpha, n_iter=done, primal=primal, dual=dual, gap=primal - dual,
                    max_violation=float(np.linalg.norm(g)), nSV=int(np.count_nonzero(alpha != 0)),
                    converged=converged, solver=solver)
    res.extra["gnorm0"] = gnorm0
    return res


def _dual_certificate(sub, fun, w):
    """(alpha, dual value) of the dual point the optimality conditions give at w, with w(alpha) recomputed (the
    dual's maximization form, so primal - dual >= 0 is the gap). With -R the bias is unregularized and these duals
    do not apply: dual NaN."""
    n = w.shape[0]
    C = fun.C
    wx = fun.wx
    w_alpha = np.zeros(n, np.float64)
    if isinstance(fun, _SVRFun):
        # beta_i = -2 C_i excess_i; dual: -(1/2 |X^T beta|^2 - y.beta + p |beta|_1 + beta^2 / (4 C))
        beta = -2.0 * C * fun._excess(wx)
        I = np.flatnonzero(beta).astype(np.int32)
        K.sub_xtv(*sub.args, I, beta[I], w_alpha)
        quad = np.divide(beta * beta, 4.0 * C, out=np.zeros_like(beta), where=C > 0)
        dual = -(0.5 * float(w_alpha @ w_alpha) - float(fun.t @ beta) + fun.p * float(np.abs(beta).sum())
                 + float(quad.sum()))
        alpha = beta
    elif isinstance(fun, _LRFun):
        # alpha_i = C_i sigma(-y_i w.x_i); dual: -(1/2 |w(alpha)|^2 + sum alpha log alpha + (C - alpha) log (C - alpha)
        # - C log C)
        alpha = C * expit(-fun.yf * wx)
        K.dcd_init_w(*sub.args, sub.y, alpha, w_alpha)
        ent = xlogx(alpha) + xlogx(C - alpha) - xlogx(C)
        dual = -(0.5 * float(w_alpha @ w_alpha) + float(ent.sum()))
    else:
        # alpha_i = 2 C_i max(0, 1 - y_i w.x_i)
        xi = np.maximum(0.0, 1.0 - fun.yf * wx)
        alpha = 2.0 * C * xi
        K.dcd_init_w(*sub.args, sub.y, alpha, w_alpha)
        dual = sub.dual(alpha, w_alpha, False)
    if not fun.regularize_bias:
        dual = float("nan")
    return alpha, dual
