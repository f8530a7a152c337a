"""-s 3 --certify where the rows are fewer than the features: dual coordinate descent alternated with conjugate-gradient
steps on the free variables, to a certified duality gap.

Problem (LIBLINEAR's -s 3 dual): min_alpha f(alpha) = 1/2 |w(alpha)|^2 - sum alpha, 0 <= alpha_i <= C_i,
w(alpha) = sum_i alpha_i y_i x_i; gradient G_i = y_i w.x_i - 1; Hessian Q = Y X X^T Y.

Why: on text data of raw counts (news20.t: |x_i|^2 from 2 to 119,203, 900 of 4,000 alphas strictly inside the
box), dual coordinate descent is Gauss-Seidel on an ill-conditioned system Q_FF alpha_F = 1 - Q_FB alpha_B over the
free set F, and creeps: 5 of the 20 one-vs-rest problems are 26-59 % short of the optimum after LIBLINEAR's 300
iterations, and 17-32 % after 3,000. The smoothed-hinge primal Newton (smooth_hinge.py, made for rows far more
numerous than the features) takes steps of 1e-6 there. Conjugate gradients on the free variables, preconditioned by
QD_i = |x_i|^2 (Jacobi, which undoes the rows' scales), solve that system in tens of steps.

One round: (1) F = {i : 0 < alpha_i < C_i}; PCG on (Q_FF + MU diag(QD_F)) d = -G_F to a relative residual of
CG_TOL (CG_MAX steps at most; the ridge MU keeps duplicated rows of opposite labels, a singular and inconsistent
Q_FF, from sending the iterates to infinity); a product Q_FF p is X_F^T then X_F: two passes over the free rows.
(2) A projected backtracking search: alpha_F(t) = clip(alpha_F + t d, 0, C), t = 1, 1/2, ..., accepted at a decrease
of f with Armijo's condition on the projected step (one pass over the free rows a trial; none accepted: the round
leaves alpha). (3) DCD_ITER iterations of dual coordinate descent from there (dcd.solve_dcd, which fixes the
variables at the bounds and certifies its result exactly: primal at w(alpha), dual, gap, violation). Stops when the
gap <= rel_gap * primal, after MAX_ROUNDS rounds, or when STALL_ROUNDS rounds have not halved the smallest gap (the result,
the round of the smallest gap, then says so: converged False).
"""
import numpy as np

from .._ext import _linear as K

CG_TOL = 0.1
CG_MAX = 100
MU = 1e-6
DCD_ITER = 5
DCD_EPS = 1e-12          # the DCD iterations run their number (no early stop at LIBLINEAR's -e)
LS_STEPS = 30
ARMIJO = 1e-4
MAX_ROUNDS = 100
STALL_ROUNDS = 20       # stop when STALL_ROUNDS rounds have not brought the smallest gap below STALL_FACTOR of it
STALL_FACTOR = 0.5


def _subspace_step(sub, alpha, w, qd, C):
    """One CG step on the free variables from alpha (in place); returns the CG steps taken."""
    y = sub.y.astype(np.float64)
    G = y * sub.margins(w) - 1.0
    F = np.flatnonzero((alpha > 0.0) & (alpha < C)).astype(np.int32)
    if F.size == 0:
        return 0
    view, rows = sub.args
    rowsF = (rows[F] if rows.size else F).astype(np.int64)
    yF, g, M, CF = y[F], G[F], qd[F], C[F]
    u = np.empty(sub.w_size)
    q = np.empty(F.size)

    def Qp(p):
        K.sub_xtv(view, rows, F, p * yF, u)
        K.xv(view, rowsF, u, q)
        return yF * q + MU * M * p

    d = np.zeros(F.size)
    r = -g
    z = r / M
    p = z.copy()
    rz = float(r @ z)
    r0 = float(np.sqrt(r @ r))
    steps = 0
    while steps < CG_MAX:
        Ap = Qp(p)
        steps += 1
        pAp = float(p @ Ap)
        if not pAp > 0.0:
            break
        step = rz / pAp
        d += step * p
        r -= step * Ap
        if float(np.sqrt(r @ r)) <= CG_TOL * r0:
            break
        z = r / M
        rz_new = float(r @ z)
        p = z + (rz_new / rz) * p
        rz = rz_new
    # projected backtracking search on f(alpha) = 1/2 |w|^2 - sum alpha
    aF = alpha[F]
    f0 = 0.5 * float(w @ w) - float(aF.sum())
    t = 1.0
    dw = np.empty(sub.w_size)
    for _ in range(LS_STEPS):
        step = np.clip(aF + t * d, 0.0, CF) - aF
        K.sub_xtv(view, rows, F, step * yF, dw)
        wn = w + dw
        fn = 0.5 * float(wn @ wn) - float(aF.sum() + step.sum())
        if fn < f0 and fn <= f0 + ARMIJO * float(g @ step):
            alpha[F] = aF + step
            return steps
        t *= 0.5
    return steps


def solve_dual_cg(sub, dual, solve_dcd, rel_gap, reporter=None):
    """The -s 3 problem from a dual result `dual` (a FitResult of dcd.solve_dcd: alpha, w = w(alpha), certified) by
    rounds of CG on the free variables and DCD_ITER iterations of dual coordinate descent (see the module's doc).
    solve_dcd: dcd.solve_dcd (passed in: dcd imports this module). Returns (result, stats): result the certificate of
    the last round's DCD (alpha, w(alpha), primal, dual, gap, violation), converged when gap <= rel_gap * primal;
    stats counts the rounds, the CG steps and the DCD iterations."""
    C = sub.C().astype(np.float64)
    qd = np.empty(sub.l, np.float64)
    K.sq_norms(*sub.args, qd)
    qd[qd <= 0.0] = 1.0
    res = best = dual
    alpha = np.minimum(np.array(dual.alpha, dtype=np.float64), C)
    w = np.zeros(sub.w_size, np.float64)
    K.dcd_init_w(*sub.args, sub.y, alpha, w)           # w(alpha), whatever the start's w was
    stats = {"rounds": 0, "cg": 0, "dcd": 0}
    gaps = []
    while not best.gap <= rel_gap * abs(best.primal) and stats["rounds"] < MAX_ROUNDS:
        stats["cg"] += _subspace_step(sub, alpha, w, qd, C)
        res = solve_dcd(sub, True, DCD_EPS, DCD_ITER, alpha0=alpha, shuffle=True)
        alpha, w = np.array(res.alpha, dtype=np.float64), res.w
        stats["rounds"] += 1
        stats["dcd"] += res.n_iter
        if res.gap < best.gap:
            best = res
        if reporter is not None:
            reporter.info(f"CG on the free variables, round {stats['rounds']}: primal {res.primal:.6f} "
                          f"gap {res.gap:.3e}\n")
        gaps.append(best.gap)
        if len(gaps) > STALL_ROUNDS and not gaps[-1] < STALL_FACTOR * gaps[-1 - STALL_ROUNDS]:
            break               # no real progress (free variables far more than the features: Q_FF singular)
    res = best
    res.converged = bool(res.gap <= rel_gap * abs(res.primal))
    return res, stats
