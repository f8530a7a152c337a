"""What the Newton loops of -s 0, -s 2 and -s 11 share, in one process (llsvm.solvers.newton) and over parts
(llsvm.solvers.dnewton): one problem's functions around cext/_linear.pyx's NewtonFun (_Fun), the loop's line and
stopping tests after a step (after_step), and the certificate's dual point (certificate_sums, dual_value)."""
import numpy as np

from .._ext import _linear as K
from .common import c_arithmetic, expit, xlogx

L2R_LR = 0
L2R_L2LOSS_SVC = 2
L2R_L2LOSS_SVR = 11


class _Fun:
    """One problem of -s 0, -s 2 or -s 11 (LIBLINEAR's l2r_lr_fun, l2r_l2_svc_fun, l2r_l2_svr_fun): the kernel
    cext/_linear.pyx NewtonFun computes f, its gradient, the preconditioner, CG and the line search, every sum in
    LIBLINEAR's order; this keeps what the certificate needs besides (C_i, the labels or targets, X w)."""

    def __init__(self, sub, solver, regularize_bias=True, p=0.1):
        self.sub = sub
        self.solver = solver
        self.C = np.ascontiguousarray(sub.C(), dtype=np.float64)
        self.yf = sub.y.astype(np.float64)
        self.t = sub.targets
        self.p = float(p)
        self.regularize_bias = regularize_bias
        y = self.t if solver == L2R_L2LOSS_SVR else self.yf
        self.k = K.NewtonFun(*sub.args, solver, y, self.C, self.p, regularize_bias)

    @property
    def wx(self):
        return self.k.wx

    def excess(self, wx):
        """-s 11: (|w.x_i - y_i| - p)_+ with the sign of w.x_i - y_i."""
        d = wx - self.t
        return np.sign(d) * np.maximum(np.abs(d) - self.p, 0.0)


def make_fun(sub, solver, regularize_bias=True, p=0.1):
    return _Fun(sub, solver if solver in (L2R_LR, L2R_L2LOSS_SVR) else L2R_L2LOSS_SVC, regularize_bias, p)


def after_step(say, it, f, fold, gnorm, gnorm0, eps, cg_iter, step):
    """NEWTON::newton after a step: its line, then its tests: "converged" (|g| <= eps |g0|), "stop" (f below
    -1e32, or too small a decrease, with LIBLINEAR's warnings) or None (go on)."""
    say(f"iter {it:2d} f {f:5.3e} |g| {gnorm:5.3e} CG {cg_iter:3d} step_size {step:4.2e} \n")
    if gnorm <= eps * gnorm0:
        return "converged"
    if f < -1.0e32:
        say("WARNING: f < -1.0e+32\n")
        return "stop"
    if abs(fold - f) <= 1.0e-12 * abs(f):
        say("WARNING: actred too small\n")
        return "stop"
    return None


def certificate_sums(sub, fun):
    """The dual point at fun's X w over sub's rows: (alpha, w(alpha) = its rows' sum, the dual's sums over the
    rows); dual_value makes the dual of them (over one problem's rows, or added over a distributed problem's
    parts)."""
    with c_arithmetic():          # inf or nan at an extreme C (-c 1e308): the certificate says so
        C = fun.C
        wx = fun.wx
        w_alpha = np.zeros(sub.w_size, np.float64)
        if fun.solver == L2R_L2LOSS_SVR:
            # beta_i = -2 C_i excess_i; dual: -(1/2 |X^T beta|^2 - y.beta + p |beta|_1 + beta^2 / (4 C))
            beta = -2.0 * C * fun.excess(wx)
            I = np.flatnonzero(beta).astype(np.int32)
            K.sub_xtv(*sub.args, I, beta[I], w_alpha)
            quad = np.divide(beta * beta, 4.0 * C, out=np.zeros_like(beta), where=C > 0)
            return beta, w_alpha, (float(fun.t @ beta), float(np.abs(beta).sum()), float(quad.sum()))
        if fun.solver == L2R_LR:
            # alpha_i = C_i sigma(-y_i w.x_i); dual: -(1/2 |w(alpha)|^2 + sum alpha log alpha
            # + (C - alpha) log (C - alpha) - C log C)
            alpha = C * expit(-fun.yf * wx)
            K.dcd_init_w(*sub.args, sub.y, alpha, w_alpha)
            ent = xlogx(alpha) + xlogx(C - alpha) - xlogx(C)
            return alpha, w_alpha, (float(ent.sum()),)
        # alpha_i = 2 C_i max(0, 1 - y_i w.x_i); dual: sum alpha - 1/2 |w(alpha)|^2 - 1/2 sum alpha^2 / (2 C)
        xi = np.maximum(0.0, 1.0 - fun.yf * wx)
        alpha = 2.0 * C * xi
        K.dcd_init_w(*sub.args, sub.y, alpha, w_alpha)
        d = float((alpha * alpha) @ np.divide(0.5, C, out=np.zeros_like(C), where=C > 0))
        return alpha, w_alpha, (float(alpha.sum()), d)


def dual_value(solver, w_alpha, sums, p):
    """The dual (maximization form) from w(alpha) and certificate_sums' sums."""
    with c_arithmetic():
        if solver == L2R_L2LOSS_SVR:
            t_beta, abs_beta, quad = sums
            return -(0.5 * float(w_alpha @ w_alpha) - t_beta + p * abs_beta + quad)
        if solver == L2R_LR:
            return -(0.5 * float(w_alpha @ w_alpha) + sums[0])
        sum_alpha, d = sums
        return sum_alpha - 0.5 * float(w_alpha @ w_alpha) - 0.5 * d
