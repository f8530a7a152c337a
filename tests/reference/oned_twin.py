"""NumPy twin of the 1-D projection solvers of issue 17 (Schneider, Bogojeska, Vlachos, CIKM 2014; the corrections of
docs/solvers.md, "1-D projections: the printed errors and the corrections implemented"), for small problems: the
reference cext/_oned.pyx is tested against.

Problem: min_{w,b} ||w||^2/2 + sum_i C_i max(0, 1 - y_i (w.x_i + b)), y_i in {-1,+1}, b unregularised, C_i = Cp for
y_i = +1 and Cn for y_i = -1.

* svm1d_scan: Algorithm 1 with line 9 read as `v > 0` and line 11 as zeta = 2(i-1) - v (P_1(i) - P_-1(i)) (prefix
  sums), the first minimum kept; operation for operation the C scan's arithmetic (Python floats are IEEE doubles).
* oned_exact: the exact 1-D optimum, h(v) = scale2 v^2/2 + min_b hinge (b: a weighted median), by SciPy's bounded
  Brent search on [-V, V] (V = sqrt(2 h(0)/scale2)) and a polish; qp_1d: the same optimum from cvxopt's dual QP, the
  independent reference of both.
* project_svm / local_svm: Algorithms 2 and 3 line by line with the resolutions (unit or paper normalisation), the
  C loops' arithmetic (local_svm: X w kept as p, a step adds st times one column, p scaled by v on acceptance).
"""
import math

import numpy as np
import scipy.sparse as sp
from scipy.optimize import minimize_scalar

__all__ = ["scan_candidates", "svm1d_scan", "hinge_sum", "hinge_at", "oned_exact", "qp_1d", "project_svm",
           "local_svm", "primal"]


def _classes(p, y):
    pos = np.flatnonzero(y > 0)
    neg = np.flatnonzero(y < 0)
    pos = pos[np.argsort(p[pos], kind="stable")]
    neg = neg[np.argsort(-p[neg], kind="stable")]
    return p[pos], p[neg]            # class +1 ascending, class -1 descending


def scan_candidates(p, y, scale2=1.0, Cp=1.0, Cn=1.0):
    """Per pair i of the scan: (valid, v, b, slack sum (weighted by C), loss), arrays of length min(n+, n-)."""
    a, q = _classes(np.asarray(p, float), np.asarray(y))
    m = min(a.size, q.size)
    out = [np.zeros(m, bool)] + [np.full(m, np.nan) for _ in range(4)]
    P1 = 0.0
    Pm = 0.0
    for i in range(m):
        ai, qi = float(a[i]), float(q[i])
        diff = ai - qi
        if diff > 0:
            v = 2.0 / diff
            if Cp == Cn:
                zeta = 2.0 * i - v * (P1 - Pm)
                slack = Cp * zeta
                l = (0.5 * scale2) * (v * v) + slack
            else:
                slack = Cp * (v * (i * ai - P1)) + Cn * (v * (Pm - i * qi))
                l = (0.5 * scale2) * (v * v) + Cp * (v * (i * ai - P1)) + Cn * (v * (Pm - i * qi))
            out[0][i] = True
            out[1][i] = v
            out[2][i] = 1.0 - ai * v
            out[3][i] = slack
            out[4][i] = l
        P1 += ai
        Pm += qi
    return tuple(out)


def svm1d_scan(p, y, scale2=1.0, Cp=1.0, Cn=1.0):
    """(v, b, l, i) of the scan's first minimum; (nan, nan, inf, -1) when no pair has v > 0."""
    valid, v, b, _, l = scan_candidates(p, y, scale2, Cp, Cn)
    best = (math.nan, math.nan, math.inf, -1)
    for i in np.flatnonzero(valid):
        if l[i] < best[2]:
            best = (float(v[i]), float(b[i]), float(l[i]), int(i))
    return best


def hinge_sum(p, y, v, b, Cp=1.0, Cn=1.0):
    """sum_i C_i max(0, 1 - y_i (v p_i + b)), directly."""
    p = np.asarray(p, float)
    y = np.asarray(y, float)
    C = np.where(y > 0, Cp, Cn)
    return float(C @ np.maximum(0.0, 1.0 - y * (v * p + b)))


def hinge_at(p, y, v, Cp=1.0, Cn=1.0):
    """(min_b hinge sum, its minimiser): the breakpoints 1 - v p (+1, weight Cp) and -1 - v p (-1, weight Cn) in
    ascending order; the derivative in b starts at -Cp n+ and rises by each weight; b* is where it reaches 0."""
    p = np.asarray(p, float)
    y = np.asarray(y)
    bp = np.where(y > 0, 1.0 - v * p, -1.0 - v * p)
    wt = np.where(y > 0, Cp, Cn)
    order = np.argsort(bp, kind="stable")
    D = -Cp * np.count_nonzero(y > 0) + np.cumsum(wt[order])
    b = float(bp[order][np.argmax(D >= 0)])
    return hinge_sum(p, y, v, b, Cp, Cn), b


def oned_exact(p, y, scale2=1.0, Cp=1.0, Cn=1.0):
    """(v, b, l): the exact minimum of the 1-D problem over v (any sign) and b."""
    def h(v):
        return 0.5 * scale2 * v * v + hinge_at(p, y, v, Cp, Cn)[0]
    h0 = h(0.0)
    V = math.sqrt(2.0 * h0 / scale2)
    r = minimize_scalar(h, bounds=(-V, V), method="bounded", options={"xatol": 1e-13 * max(V, 1e-300)})
    best = min([(h0, 0.0), (float(r.fun), float(r.x))])
    v = best[1]
    # polish: golden steps in a shrinking neighbourhood
    step = max(abs(v), V) * 1e-6
    for _ in range(200):
        moved = False
        for cand in (v - step, v + step):
            if h(cand) < h(v):
                v, moved = cand, True
        if not moved:
            step *= 0.5
            if step < 1e-16 * max(abs(v), 1e-300):
                break
    return v, hinge_at(p, y, v, Cp, Cn)[1], h(v)


def qp_1d(p, y, Cp=1.0, Cn=1.0, scale2=1.0):
    """(v, b, primal, alpha) from cvxopt's solution of the 1-D dual: min 1/2 a^T Q a - 1^T a, Q_ij = y_i y_j p_i
    p_j / scale2, 0 <= a_i <= C_i, y^T a = 0; v = sum a_i y_i p_i / scale2, b the best bias for that v."""
    from cvxopt import matrix, solvers
    p = np.asarray(p, float)
    yf = np.asarray(y, float)
    n = p.size
    z = yf * p
    Q = np.outer(z, z) / scale2 + 1e-13 * np.eye(n)
    C = np.where(yf > 0, Cp, Cn)
    opts = {"show_progress": False, "abstol": 1e-12, "reltol": 1e-12, "feastol": 1e-12, "maxiters": 200}
    sol = solvers.qp(matrix(Q), matrix(-np.ones(n)), matrix(np.vstack([-np.eye(n), np.eye(n)])),
                     matrix(np.concatenate([np.zeros(n), C])), matrix(yf[None, :]), matrix(0.0), options=opts)
    a = np.array(sol["x"]).ravel()
    v = float(a @ z) / scale2
    g, b = hinge_at(p, y, v, Cp, Cn)
    return v, b, 0.5 * scale2 * v * v + g, a


def primal(X, y, w, b, Cp=1.0, Cn=1.0):
    y = np.asarray(y, float)
    C = np.where(y > 0, Cp, Cn)
    return 0.5 * float(w @ w) + float(C @ np.maximum(0.0, 1.0 - y * (X @ w + b)))


def _solve(q, y, scale2, Cp, Cn, oned):
    if oned == "exact":
        v, b, l = oned_exact(q, y, scale2, Cp, Cn)
        return v, b, l
    v, b, l, _ = svm1d_scan(q, y, scale2, Cp, Cn)
    return v, b, l


def project_svm(X, y, Cp, Cn, max_iter, normal_fill, state, norm="unit", target_loss=None, oned="scan"):
    """Algorithm 2: directions L = normal_fill(state, d); unit: project on L/||L||; paper: on L, w = v L / ||L||."""
    X = sp.csr_matrix(X, dtype=np.float64)
    d = X.shape[1]
    l_min, w, b, accepted = math.inf, np.zeros(d), 0.0, []
    it = 0
    for it in range(max_iter):
        L = np.asarray(normal_fill(state, d), float)
        nL2 = 0.0
        for j in range(d):
            nL2 += L[j] * L[j]
        nL = math.sqrt(nL2)
        if norm == "unit":
            u = L / nL
            v, bb, l = _solve(X @ u, y, 1.0, Cp, Cn, oned)
            cand = v * u
        else:
            v, bb, l = _solve(X @ L, y, 1.0, Cp, Cn, oned)
            cand = (v * L) / nL
        if l < l_min:
            l_min, b, w = l, bb, cand
            accepted.append(it)
        if target_loss is not None and l_min <= target_loss:
            it += 1
            break
    else:
        it = max_iter
    return {"w": w, "b": b, "l": l_min, "n_iter": it, "accepted": accepted}


def local_svm(X, y, Cp, Cn, max_iter, norm="unit", oned="scan"):
    """Algorithm 3 with the C loop's arithmetic; returns w, b, l, n_iter, reason, trace [(coord, sign, accepted)],
    snapshots (after every power-of-two iteration: iters, l_min, b, w, t, thres)."""
    X = sp.csc_matrix(X, dtype=np.float64)
    X.sort_indices()
    N, d = X.shape
    y = np.asarray(y)
    w = np.zeros(d)
    b = 0.0
    l_min = math.inf
    wn2 = 0.0
    p = np.zeros(N)
    t, ct, curr, thres, l_last, nld = 1.0, 2.0, 2.0, 1.1, 0.0, False
    reason = "max_iter"
    trace, snaps = [], []
    n_iter = max_iter
    for it in range(max_iter):
        coord = it % d
        if coord == 0 and it > 0:
            if l_last < l_min * thres:
                if nld:
                    thres = 1.0 + (thres - 1.0) / 16.0
                    curr = 1.0 / ct
                else:
                    curr = 1.0 / curr
                nld = True
            else:
                nld = False
            t = t * curr
            l_last = l_min
            wn2 = 0.0
            for j in range(d):
                wn2 += w[j] * w[j]
            if t < 1e-15 * (math.sqrt(wn2) + 1.0) or thres - 1.0 < 1e-15:
                reason = "step"
                n_iter = it
                break
        rows = X.indices[X.indptr[coord]:X.indptr[coord + 1]]
        vals = X.data[X.indptr[coord]:X.indptr[coord + 1]]
        for sign in (-1.0, 1.0):
            st = sign * t
            q = p.copy()
            q[rows] = p[rows] + st * vals
            n2 = (wn2 + (2.0 * st) * w[coord]) + t * t
            scale2 = n2 if norm == "unit" else 1.0
            if norm == "unit" and not n2 > 0:
                l = math.inf
            else:
                v, bb, l = _solve(q, y, scale2, Cp, Cn, oned)
            if l <= l_min and l < math.inf:
                w[coord] += st
                w = w * v
                p = q * v
                b, l_min = bb, l
                wn2 = (v * v) * n2
                trace.append((coord, int(sign), 1))
                break
            trace.append((coord, int(sign), 0))
        if (it + 1) & it == 0:
            snaps.append({"iter": it + 1, "l_min": l_min, "b": b, "w": w.copy(), "t": t, "thres": thres})
    return {"w": w, "b": b, "l": l_min, "n_iter": n_iter, "reason": reason, "trace": trace, "snapshots": snaps}
