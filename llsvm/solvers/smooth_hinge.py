"""-s 3 past the dual's iteration limit: the L1-loss SVC primal by Newton on a smoothed hinge with continuation, the
result certified by the exact duality gap of a feasible dual point.

Problem (LIBLINEAR's -s 3): min_w P(w) = 1/2 w.w + sum_i C_i max(0, 1 - y_i w.x_i); dual
max_alpha D(alpha) = sum alpha - 1/2 |w(alpha)|^2, 0 <= alpha_i <= C_i, w(alpha) = sum_i alpha_i y_i x_i.

Where dual coordinate descent stalls (n >> d with a large C x ||x||^2: Q = Y X X^T Y has rank d, most alphas sit
in the box's interior or move between its faces a little each pass; skin_nonskin's dual gains ~1.3 a pass against
a gap of ~8e4 after LIBLINEAR's 1000 passes), the d-dimensional primal is small. Its hinge is not smooth, so this
solves a sequence of smoothed problems (Nesterov's smoothing; the Huber hinge of Chapelle, "Training a support
vector machine in the primal", Neural Computation 2007, section 4):
    h_delta(z) = 0 (z <= 0),  z^2 / (2 delta) (0 < z < delta),  z - delta/2 (z >= delta),  z_i = 1 - y_i w.x_i,
    P_delta(w) = 1/2 w.w + sum_i C_i h_delta(z_i),  gradient w - w(alpha_delta) with alpha_delta,i = C_i h'(z_i)
    = C_i clip(z_i / delta, 0, 1),  Hessian I + 1/delta sum_{0 < z_i < delta} C_i x_i x_i^T.
Each Newton step: CG on the Hessian over the band rows (cext/_linear.pyx's pcg, LIBLINEAR's NEWTON::pcg with
factor 1/delta, Jacobi preconditioned by l2svc_diag), then an exact line search on the piecewise-quadratic
P_delta(w + t s) (margins updated as m + t X s: one pass over the rows a step). A stage ends when |grad| falls by
1e-3 or its step limit; then delta /= 10.

alpha_delta is feasible for the hinge's dual whatever w is, so after each stage (w(alpha_delta), alpha_delta) is
certified exactly (dcd.certify: P at w(alpha), D(alpha), the gap and the largest projected gradient, one pass):
the run stops when the gap <= rel_gap * P. Also the primal at the Newton iterate w itself is exact (one pass), so the gap
reported is the lowest primal seen (at a w(alpha) or at w) less the highest dual seen: exact either way. (At the
smoothed optimum w = w(alpha_delta) and the gap is sum_{band} C_i z_i (1 - z_i/delta) <= C delta/4 a band row.)
"""
import numpy as np

from .._ext import _linear as K

REL_GAP = 1e-3          # the certified target: duality gap <= REL_GAP * primal
DELTA0 = 1.0            # the first smoothing width (the hinge's margin is 1)
DELTA_MIN = 1e-9
STAGE_NEWTON = 30       # Newton steps per smoothing width at most
STAGE_GRAD = 1e-3       # a stage ends at |grad| <= STAGE_GRAD * |grad at its start|
LS_TOL = 1e-2           # the line search stops at |phi'(t)| <= LS_TOL |phi'(0)|
LS_STEPS = 40


def _huber(z, delta):
    """h_delta(z) elementwise."""
    return np.where(z <= 0.0, 0.0, np.where(z < delta, z * z / (2.0 * delta), z - 0.5 * delta))


def _line_search(w, s, z, xs, C, delta):
    """A step t > 0 with |phi'(t)| <= LS_TOL |phi'(0)| on phi(t) = P_delta(w + t s) (convex, piecewise quadratic;
    z = 1 - y w.x, xs = y s.x): Newton's method on phi' from t = 1, safeguarded by bisection on its sign; 0 when
    s is not a descent direction."""
    ws, ss = float(w @ s), float(s @ s)
    active = np.flatnonzero(xs)                  # rows whose margin the step moves
    z, xs, C = z[active], xs[active], C[active]

    def deriv_curv(t):
        slope, curv = K.huber_slope(z, xs, C, delta, t)
        return ws + t * ss - slope, ss + curv

    d0, _ = deriv_curv(0.0)
    if d0 >= 0.0:
        return 0.0
    lo, hi, t = 0.0, None, 1.0
    for _ in range(LS_STEPS):
        d, h = deriv_curv(t)
        if abs(d) <= LS_TOL * -d0:
            return t
        if d > 0:
            hi = t
        else:
            lo = t
        t_new = t - d / h
        if hi is None:
            t = t_new if t_new > lo else 2.0 * t
        else:
            t = t_new if lo < t_new < hi else 0.5 * (lo + hi)
    return lo      # phi' < 0 on [0, lo]: a decrease whatever happened since


def solve_smooth_hinge(sub, w0, certify, rel_gap=REL_GAP, delta0=DELTA0, reporter=None):
    """The -s 3 problem from w0 by smoothed-hinge Newton with continuation (see the module's doc).

    certify: dcd.certify (the certificate of a dual point, passed in: dcd imports this module).
    Returns (result, stats): result the certificate of the last (w(alpha), alpha) (certify's FitResult: w, alpha,
    primal, dual, gap, max_violation, nSV), converged when gap <= rel_gap * primal; stats counts the work (stages,
    Newton steps, CG steps, passes over the rows) and the last smoothing width. result.w is the iterate with the
    lowest exact primal (a w(alpha) or a Newton iterate) and result.alpha the feasible alpha with the highest exact
    dual seen, so gap = P(w) - D(alpha) is exact though w need not be w(alpha).
    """
    y = sub.y.astype(np.float64)
    C = sub.C().astype(np.float64)
    half_C = 0.5 * C
    n = sub.w_size
    w = np.array(w0, dtype=np.float64)
    z = 1.0 - y * sub.margins(w)
    passes = 1
    stats = {"stages": 0, "newton": 0, "cg": 0, "passes": 0, "delta": delta0}
    delta = delta0
    s = np.empty(n)
    r = np.empty(n)
    best = None
    while True:
        stats["stages"] += 1
        g0 = None
        for _ in range(STAGE_NEWTON):
            a = C * np.clip(z / delta, 0.0, 1.0)
            nz = np.flatnonzero(a).astype(np.int32)
            wa = np.empty(n)
            K.sub_xtv(*sub.args, nz, a[nz] * y[nz], wa)
            g = w - wa
            gnorm = float(np.sqrt(g @ g))
            if g0 is None:
                g0 = gnorm
            if gnorm <= STAGE_GRAD * g0 or gnorm == 0.0:
                break
            band = np.flatnonzero((z > 0.0) & (z < delta)).astype(np.int32)
            M = np.ones(n)
            K.l2svc_diag(*sub.args, band, half_C / delta, M)
            cg, _ = K.pcg(*sub.args, band, C, 1.0 / delta, True, g, M, s, r, 0.1)
            stats["cg"] += cg
            xs = y * sub.margins(s)
            passes += 1
            t = _line_search(w, s, z, xs, C, delta)
            if t == 0.0:
                break
            w += t * s
            z -= t * xs
            stats["newton"] += 1
        # the certificate of the feasible dual point this width gives at the current w
        a = C * np.clip(z / delta, 0.0, 1.0)
        wa = np.zeros(n)
        K.dcd_init_w(*sub.args, sub.y, a, wa)
        res = certify(sub, wa, a, True)
        p_w = sub.primal(w, True)
        passes += 3
        if best is None or res.dual > best.dual:
            best_dual = (res.dual, a, res.max_violation, res.nSV)
        for primal, model in ((res.primal, wa), (p_w, w)):
            if best is None or primal < best.primal:
                best = res
                best.primal, best.w = primal, model.copy()
        best.dual, best.alpha, best.max_violation, best.nSV = best_dual
        best.gap = best.primal - best.dual
        if reporter is not None:
            reporter.info(f"smoothed hinge delta = {delta:g}: primal {best.primal:.6f} gap {best.gap:.3e}\n")
        if best.gap <= rel_gap * abs(best.primal) or delta <= DELTA_MIN:
            break
        delta *= 0.1
    stats["passes"] = passes
    stats["delta"] = delta
    best.converged = best.gap <= rel_gap * abs(best.primal)
    return best, stats
