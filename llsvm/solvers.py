"""Drivers of the L2-regularized SVC solvers (LIBLINEAR 2.50 semantics) around the kernels of cext/_linear.pyx.

A driver owns the outer loop, the stopping rule, LIBLINEAR's output lines (through a `say` callable, so
parallel runs can buffer them) and the certificate of the result. Kernels see a binary subproblem: the dataset's
row view, `rows` (the rows it uses, empty for all), labels y in {-1,+1} (int8) and per-class costs Cp, Cn.
"""
import math
from dataclasses import dataclass, field

import numpy as np

from ._ext import _linear as K

INF = math.inf
EMPTY_ROWS = np.empty(0, np.int64)

L2R_L2LOSS_SVC_DUAL = 1
L2R_L2LOSS_SVC = 2
L2R_L1LOSS_SVC_DUAL = 3
SOLVER_NAMES = {L2R_L2LOSS_SVC_DUAL: "L2R_L2LOSS_SVC_DUAL", L2R_L2LOSS_SVC: "L2R_L2LOSS_SVC",
                L2R_L1LOSS_SVC_DUAL: "L2R_L1LOSS_SVC_DUAL"}
DEFAULT_EPS = {L2R_L2LOSS_SVC_DUAL: 0.1, L2R_L2LOSS_SVC: 0.01, L2R_L1LOSS_SVC_DUAL: 0.1}
DUAL_MAX_ITER = 300
NEWTON_MAX_ITER = 1000


@dataclass
class FitResult:
    """A binary fit and its certificate."""
    w: np.ndarray
    alpha: np.ndarray = None
    n_iter: int = 0
    primal: float = float("nan")
    dual: float = float("nan")
    gap: float = float("nan")
    max_violation: float = float("nan")
    nSV: int = 0
    converged: bool = True
    solver: int = L2R_L1LOSS_SVC_DUAL
    extra: dict = field(default_factory=dict)


def weighted_C(C, weights, labels):
    """C of every class (labels in class order) after LIBLINEAR's -wi weights, and the weighted labels not
    found among them."""
    wC = np.full(len(labels), float(C))
    missing = []
    for lab, weight in weights:
        hit = np.flatnonzero(np.asarray(labels) == int(lab))
        if hit.size == 0:
            missing.append(int(lab))
        else:
            wC[hit[0]] *= float(weight)
    return wC, missing


def warn_missing_weights(missing, warn):
    for lab in missing:
        warn(f"WARNING: class label {lab} specified in weight is not found\n")


class Subproblem:
    """A binary problem over a dataset's view: rows (None: all), y_sign (+1/-1 int8), C per class."""

    def __init__(self, view, y_sign, Cp, Cn, rows=None, bias=-1.0):
        self.view = view
        self.rows = EMPTY_ROWS if rows is None else np.ascontiguousarray(rows, dtype=np.int64)
        self.y = np.ascontiguousarray(y_sign, dtype=np.int8)
        self.l = self.y.shape[0]
        self.Cp = float(Cp)
        self.Cn = float(Cn)
        self.bias = float(bias)
        self.n_features = view.n_features
        self.w_size = view.n_features + (1 if bias >= 0 else 0)

    @property
    def args(self):
        """The rows as the kernels take them: the view's row view with this problem's bias, and `rows`."""
        return (self.view.row_view(self.bias), self.rows)

    def C(self):
        return np.where(self.y > 0, self.Cp, self.Cn)

    def margins(self, w):
        out = np.empty(self.l, np.float64)
        K.xv(*self.args, w, out)
        return out

    def primal(self, w, l1_loss):
        """1/2 w.w + sum_i C_i loss_i (hinge for L1 loss, squared hinge otherwise)."""
        xi = np.maximum(0.0, 1.0 - self.y * self.margins(w))
        loss = xi if l1_loss else xi * xi
        return 0.5 * float(w @ w) + float(self.C() @ loss)

    def dual(self, alpha, w, l1_loss):
        """sum alpha - 1/2 w.w - 1/2 sum D_ii alpha_i^2 with w = sum alpha_i y_i x_i (maximization form)."""
        d = 0.0 if l1_loss else float((alpha * alpha) @ (0.5 / self.C()))
        return float(alpha.sum()) - 0.5 * float(w @ w) - 0.5 * d


def solve_dcd(sub, l1_loss, eps, max_iter=DUAL_MAX_ITER, rng_seed=1, alpha0=None, say=None, shuffle=True):
    """Dual coordinate descent with shrinking: LIBLINEAR 2.50's solve_l2r_l1l2_svc, outer loop here.

    Returns a FitResult; `n_iter >= max_iter` means the iteration limit was hit (converged False).
    shuffle=False keeps the visiting order fixed (index order, as shrinking leaves it): for reference tests.
    """
    say = say or (lambda s: None)
    l = sub.l
    w = np.zeros(sub.w_size, np.float64)
    xnorm = np.empty(l, np.float64)
    K.sq_norms(*sub.args, xnorm)
    if alpha0 is None:
        alpha = np.zeros(l, np.float64)
    else:
        alpha = np.array(alpha0, dtype=np.float64)
        if l1_loss:
            np.minimum(alpha, sub.C(), out=alpha)
        K.dcd_init_w(*sub.args, sub.y, alpha, w)
    index = np.arange(l, dtype=np.int32)
    rng = K.rng_state(rng_seed)
    state = K.DCDState(*sub.args, sub.y, alpha, w, xnorm, index, sub.Cp, sub.Cn, l1_loss, rng)
    # LIBLINEAR's outer loop runs in the kernel, 10 iterations per call so the dots appear as LIBLINEAR's do
    while state.n_iter < max_iter:
        converged, events = state.run(min(10, max_iter - state.n_iter), eps, shuffle)
        if events:
            say(events)
        if converged:
            break
    it = state.n_iter
    say(f"\noptimization finished, #iter = {it}\n")
    res = certify(sub, w, alpha, l1_loss)
    # LIBLINEAR's "Objective value" is the dual minimization objective f(alpha) = -dual
    say(f"Objective value = {-res.dual:f}\n")
    say(f"nSV = {res.nSV}\n")
    res.n_iter = it
    res.converged = it < max_iter
    res.solver = L2R_L1LOSS_SVC_DUAL if l1_loss else L2R_L2LOSS_SVC_DUAL
    res.extra["objective_value"] = -res.dual
    return res


def certify(sub, w, alpha, l1_loss):
    """Primal, dual, gap, max projected-gradient violation and nSV of a dual solution (w as the solver kept it).

    One pass over the data: the kernel returns the violation, the loss term of the primal and the dual's sums.
    """
    viol, loss, sum_alpha, sum_diag, nSV = K.dcd_violation(*sub.args, sub.y, alpha, w, sub.Cp, sub.Cn, l1_loss)
    wTw = float(w @ w)
    primal = 0.5 * wTw + loss
    dual = sum_alpha - 0.5 * wTw - 0.5 * sum_diag
    return FitResult(w=w, alpha=alpha, primal=primal, dual=dual, gap=primal - dual, max_violation=viol, nSV=nSV)


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

    def Hv(self, s, Hs):
        K.l2svc_hv(*self.sub.args, self.I, self.C, s, Hs)
        Hs *= 2.0
        Hs += s
        if not self.regularize_bias:
            Hs[-1] -= s[-1]

    def diag_preconditioner(self, M):
        M.fill(1.0)
        if not self.regularize_bias:
            M[-1] = 0.0
        K.l2svc_diag(*self.sub.args, self.I, self.C, M)

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


def _pcg(fun, g, M, s, r, eps_cg, say):
    """Preconditioned conjugate gradient for H s = -g with the quadratic-model stopping rule (NEWTON::pcg)."""
    n = g.shape[0]
    s.fill(0.0)
    np.negative(g, out=r)
    z = r / M
    d = z.copy()
    Hd = np.empty(n, np.float64)
    zTr = float(z @ r)
    cgtol = min(eps_cg, math.sqrt(math.sqrt(zTr)))
    Q = 0.0
    cg_iter = 0
    max_cg_iter = max(n, 5)
    while cg_iter < max_cg_iter:
        cg_iter += 1
        fun.Hv(d, Hd)
        dHd = float(d @ Hd)
        if dHd <= 1.0e-16:
            break
        alpha = zTr / dHd
        s += alpha * d
        r -= alpha * Hd
        newQ = -0.5 * (float(s @ r) - float(s @ g))
        Qdiff = newQ - Q
        if newQ <= 0 and Qdiff <= 0:
            if cg_iter * Qdiff >= cgtol * newQ:
                break
        else:
            say("WARNING: quadratic approximation > 0 or increasing in CG\n")
            break
        Q = newQ
        np.divide(r, M, out=z)
        znewTrnew = float(z @ r)
        beta = znewTrnew / zTr
        d *= beta
        d += z
        zTr = znewTrnew
    if cg_iter == max_cg_iter:
        say("WARNING: reaching maximal number of CG steps\n")
    return cg_iter


def solve_newton(sub, eps, max_iter=NEWTON_MAX_ITER, w0=None, regularize_bias=True, say=None, eps_cg=0.5):
    """-s 2: Newton with preconditioned CG and backtracking line search (LIBLINEAR 2.50's NEWTON::newton).

    `eps` is the tolerance after LIBLINEAR's scaling (eps * max(min(pos, neg), 1) / l): stop when
    |grad f(w)| <= eps |grad f(0)|.
    """
    say = say or (lambda s: None)
    fun = _L2SVCFun(sub, regularize_bias)
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
    # certificate: the dual point alpha_i = 2 C_i max(0, 1 - y_i w.x_i) and its w(alpha)
    C = fun.C
    xi = np.maximum(0.0, 1.0 - fun.yf * sub.margins(w))
    alpha = 2.0 * C * xi
    w_alpha = np.zeros(n, np.float64)
    K.dcd_init_w(*sub.args, sub.y, alpha, w_alpha)
    primal = 0.5 * fun._wTw(w) + float(C @ (xi * xi))
    dual = sub.dual(alpha, w_alpha, False)
    fun.fun(w)
    fun.grad(w, g)
    res = FitResult(w=w, alpha=alpha, n_iter=done, primal=primal, dual=dual, gap=primal - dual,
                    max_violation=float(np.linalg.norm(g)), nSV=int(np.count_nonzero(alpha > 0)),
                    converged=converged, solver=L2R_L2LOSS_SVC)
    res.extra["gnorm0"] = gnorm0
    return res
