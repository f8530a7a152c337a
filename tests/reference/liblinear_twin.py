"""A small, independent NumPy/SciPy twin of the optimization problems of LIBLINEAR 2.50's solver types.

Written from the problem statements (LIBLINEAR's README and its guide), not from llsvm's or LIBLINEAR's code, and
solved by general-purpose methods (L-BFGS-B, cvxopt's interior-point QP), never by coordinate descent, so it can
judge a coordinate-descent solver from outside. Dense inputs only: X is l x n float64 with the bias column (if
any) already appended by the caller, y float64 (+1/-1 for classification), C float64 of length l (per-row cost).

Primal objectives, z_i = w.x_i (``primal``):
    -s 0, 7    0.5 w.w + sum C_i log(1 + exp(-y_i z_i))
    -s 1, 2    0.5 w.w + sum C_i max(0, 1 - y_i z_i)^2
    -s 3       0.5 w.w + sum C_i max(0, 1 - y_i z_i)
    -s 5       ||w||_1 + sum C_i max(0, 1 - y_i z_i)^2
    -s 6       ||w||_1 + sum C_i log(1 + exp(-y_i z_i))
    -s 11, 12  0.5 w.w + sum C_i max(0, |z_i - y_i| - p)^2
    -s 13      0.5 w.w + sum C_i max(0, |z_i - y_i| - p)
With regularize_bias=False the last coordinate of w is left out of the regularizer (L2 and L1 alike).
    -s 4       0.5 ||W||_F^2 + sum_i C_{y_i} max_m (e_im + W_m.x_i - W_{y_i}.x_i)      (``mcsvm_primal``)
    -s 21      min 0.5 a^T X X^T a, 0 <= a_i <= 1, sum a = nu l  (the scaled dual, ``oneclass_dual``)

Solvers (``solve``, ``mcsvm_solve``, ``oneclass_solve``):
    smooth (0, 1, 2, 7, 11, 12): L-BFGS-B on the primal with the analytic gradient.
    L1 (5, 6): w = u - v, u, v >= 0, L-BFGS-B with bounds on sum(u + v) + loss (a free, unsplit bias coordinate
        when regularize_bias=False), then a polish: the zero coordinates are fixed at 0 and the others are
        re-optimized within their orthant, where the objective is smooth.
    hinge (3, 13) and Crammer-Singer (4): cvxopt.solvers.qp on the PRIMAL QP with one slack per row
        (variables (w, xi); for -s 4 (vec W, xi) with the l*k constraints W_{y_i}.x_i - W_m.x_i >= e_im - xi_i).
    one-class (21): cvxopt.solvers.qp on the dual above (+1e-12 I).
All QPs run with abstol = reltol = feastol = 1e-10.

``kkt_violation`` is 0 at the optimum: the 2-norm of the primal gradient for the smooth types; for 5 and 6 the
largest minimum-norm-subgradient violation (w_j != 0: |g_j + sign w_j|, w_j == 0: max(0, |g_j| - 1), an
unregularized bias: |g_j|), g the gradient of the loss part.
"""
import numpy as np
from cvxopt import matrix as _cm, solvers as _cvx
from scipy.optimize import minimize
from scipy.special import expit

SMOOTH = (0, 1, 2, 7, 11, 12)
L1 = (5, 6)
HINGE = (3, 13)
QP_OPTIONS = {"abstol": 1e-10, "reltol": 1e-10, "feastol": 1e-10, "show_progress": False, "maxiters": 500}
LBFGS_OPTIONS = {"gtol": 1e-10, "ftol": 1e-16, "maxiter": 100000, "maxfun": 200000, "maxcor": 30}


def _mask(n, regularize_bias):
    """1 for the regularized coordinates, 0 for the last one when regularize_bias is False."""
    r = np.ones(n)
    if not regularize_bias:
        r[-1] = 0.0
    return r


def _loss(solver, z, y, C, p):
    """The loss part of the primal at z = Xw and its derivative with respect to z (a subgradient for hinge)."""
    if solver in (0, 6, 7):
        m = y * z
        return float(C @ np.logaddexp(0.0, -m)), -C * y * expit(-m)
    if solver in (1, 2, 5):
        d = np.maximum(0.0, 1.0 - y * z)
        return float(C @ d ** 2), -2.0 * C * y * d
    if solver in (11, 12):
        r = z - y
        d = np.maximum(0.0, np.abs(r) - p)
        return float(C @ d ** 2), 2.0 * C * d * np.sign(r)
    if solver == 3:
        d = np.maximum(0.0, 1.0 - y * z)
        return float(C @ d), -C * y * (d > 0)
    if solver == 13:
        r = z - y
        d = np.maximum(0.0, np.abs(r) - p)
        return float(C @ d), C * np.sign(r) * (d > 0)
    raise ValueError(f"unknown solver type {solver}")


def primal(solver, w, X, y, C, p=0.1, regularize_bias=True):
    """The primal objective LIBLINEAR's solver type `solver` minimizes, at w."""
    w = np.asarray(w, dtype=np.float64)
    r = _mask(len(w), regularize_bias)
    reg = float(r @ np.abs(w)) if solver in L1 else 0.5 * float((r * w) @ w)
    return reg + _loss(solver, X @ w, y, C, p)[0]


def _loss_grad(solver, w, X, y, C, p):
    f, dz = _loss(solver, X @ w, y, C, p)
    return f, X.T @ dz


def kkt_violation(solver, w, X, y, C, p=0.1, regularize_bias=True):
    """0 at the optimum: see the module docstring (smooth and L1 types only)."""
    w = np.asarray(w, dtype=np.float64)
    r = _mask(len(w), regularize_bias)
    g = _loss_grad(solver, w, X, y, C, p)[1]
    if solver in SMOOTH:
        return float(np.linalg.norm(g + r * w))
    if solver in L1:
        v = np.where(w != 0, np.abs(g + np.sign(w)), np.maximum(0.0, np.abs(g) - 1.0))
        v = np.where(r == 0, np.abs(g), v)
        return float(v.max())
    raise ValueError(f"kkt_violation is defined for the smooth and L1 types, not {solver}")


def _lbfgs(fun, x0, bounds=None):
    res = minimize(fun, x0, jac=True, method="L-BFGS-B", bounds=bounds, options=LBFGS_OPTIONS)
    return res.x


def _solve_smooth(solver, X, y, C, p, regularize_bias):
    r = _mask(X.shape[1], regularize_bias)

    def fun(w):
        f, g = _loss_grad(solver, w, X, y, C, p)
        return f + 0.5 * float((r * w) @ w), g + r * w

    w = np.zeros(X.shape[1])
    for _ in range(5):   # restart (fresh curvature pairs) while the gradient is not tiny
        w = _lbfgs(fun, w)
        if kkt_violation(solver, w, X, y, C, p, regularize_bias) < 1e-9:
            break
    return w


def _solve_l1(solver, X, y, C, p, regularize_bias):
    n = X.shape[1]
    nr = n if regularize_bias else n - 1   # the regularized (split) coordinates come first

    def unpack(x):
        return np.concatenate([x[:nr] - x[nr:2 * nr], x[2 * nr:]])

    def fun(x):
        f, g = _loss_grad(solver, unpack(x), X, y, C, p)
        return f + float(x[:2 * nr].sum()), np.concatenate([1.0 + g[:nr], 1.0 - g[:nr], g[nr:]])

    bounds = [(0.0, None)] * (2 * nr) + [(None, None)] * (n - nr)
    w = unpack(_lbfgs(fun, np.zeros(2 * nr + n - nr), bounds))
    return _polish_l1(solver, w, X, y, C, p, regularize_bias, nr)


def _polish_l1(solver, w, X, y, C, p, regularize_bias, nr):
    """Fix the (near-)zero regularized coordinates at 0; re-optimize the rest inside their orthant."""
    best = w
    for thr in (1e-10, 1e-8, 1e-6):
        support = np.ones(len(w), dtype=bool)
        support[:nr] = np.abs(w[:nr]) > thr
        s = np.where(np.arange(len(w)) < nr, np.sign(w), 0.0)[support]
        Xs = X[:, support]

        def fun(ws):
            f, g = _loss_grad(solver, ws, Xs, y, C, p)
            return f + float(s @ ws), g + s

        bounds = [(0.0, None) if sj > 0 else (None, 0.0) if sj < 0 else (None, None) for sj in s]
        cand = np.zeros(len(w))
        cand[support] = _lbfgs(fun, w[support], bounds)
        if primal(solver, cand, X, y, C, p, regularize_bias) <= primal(solver, best, X, y, C, p, regularize_bias) \
                and kkt_violation(solver, cand, X, y, C, p, regularize_bias) \
                < kkt_violation(solver, best, X, y, C, p, regularize_bias):
            best = cand
    return best


def _qp(P, q, G, h, A=None, b=None):
    args = [_cm(np.asarray(M, dtype=np.float64)) for M in (P, q, G, h)]
    if A is not None:
        args += [_cm(np.asarray(A, dtype=np.float64)), _cm(np.asarray(b, dtype=np.float64))]
    sol = _cvx.qp(*args, options=QP_OPTIONS)
    if sol["status"] not in ("optimal", "unknown") or sol["x"] is None:
        raise RuntimeError(f"cvxopt qp failed: {sol['status']}")
    return np.array(sol["x"]).ravel()


def _solve_hinge(solver, X, y, C, p, regularize_bias):
    """Primal QP in (w, xi): min 0.5 w^T R w + C^T xi, xi >= the row's loss argument(s), xi >= 0."""
    l, n = X.shape
    P = np.diag(np.concatenate([_mask(n, regularize_bias), np.zeros(l)]))
    q = np.concatenate([np.zeros(n), C])
    I = np.eye(l)
    if solver == 3:   # 1 - y_i w.x_i <= xi_i
        G = np.block([[-y[:, None] * X, -I], [np.zeros((l, n)), -I]])
        h = np.concatenate([-np.ones(l), np.zeros(l)])
    else:             # |w.x_i - y_i| - p <= xi_i
        G = np.block([[X, -I], [-X, -I], [np.zeros((l, n)), -I]])
        h = np.concatenate([y + p, p - y, np.zeros(l)])
    return _qp(P, q, G, h)[:n]


def solve(solver, X, y, C, p=0.1, nu=0.5, regularize_bias=True):
    """A tight optimum w of the primal of solver type 0, 1, 2, 3, 5, 6, 7, 11, 12, 13 (4: mcsvm_solve,
    21: oneclass_solve(X, nu))."""
    X, y, C = (np.asarray(a, dtype=np.float64) for a in (X, y, C))
    if solver in SMOOTH:
        return _solve_smooth(solver, X, y, C, p, regularize_bias)
    if solver in L1:
        return _solve_l1(solver, X, y, C, p, regularize_bias)
    if solver in HINGE:
        return _solve_hinge(solver, X, y, C, p, regularize_bias)
    if solver == 21:
        return oneclass_solve(X, nu)
    raise ValueError(f"solve() does not handle solver type {solver} (-s 4: mcsvm_solve)")


def _margins(W, X, cls):
    """e_im + W_m.x_i - W_{y_i}.x_i (l x k), 0 in the own-class column."""
    Z = X @ W
    rows = np.arange(len(cls))
    M = 1.0 + Z - Z[rows, cls][:, None]
    M[rows, cls] = 0.0
    return M


def _row_costs(Cclass, cls, weights):
    """C_i = Cclass[cls_i], times the row's weight with weights (docs/weights.md)."""
    C = np.asarray(Cclass, dtype=np.float64)[cls]
    return C if weights is None else C * np.asarray(weights, dtype=np.float64)


def mcsvm_primal(W, X, cls, Cclass, weights=None):
    """Crammer-Singer (-s 4) primal: 0.5 ||W||_F^2 + sum_i C_i max_m margins_im, C_i = Cclass[cls_i] (x W_i)."""
    W = np.asarray(W, dtype=np.float64)
    cls = np.asarray(cls, dtype=int)
    return 0.5 * float(np.sum(W * W)) + float(_row_costs(Cclass, cls, weights) @ _margins(W, X, cls).max(axis=1))


def mcsvm_solve(X, cls, Cclass, weights=None):
    """W (n x k) from the primal QP in (vec W, xi), W[:, m] at positions m*n .. m*n+n-1."""
    X = np.asarray(X, dtype=np.float64)
    cls = np.asarray(cls, dtype=int)
    l, n = X.shape
    k = int(np.max(cls)) + 1
    P = np.diag(np.concatenate([np.ones(n * k), np.zeros(l)]))
    q = np.concatenate([np.zeros(n * k), _row_costs(Cclass, cls, weights)])
    G = np.zeros((l * k, n * k + l))
    h = np.zeros(l * k)
    for i in range(l):
        for m in range(k):   # -(W_{y_i} - W_m).x_i - xi_i <= -e_im
            row = i * k + m
            G[row, cls[i] * n:(cls[i] + 1) * n] -= X[i]
            G[row, m * n:(m + 1) * n] += X[i]
            G[row, n * k + i] = -1.0
            h[row] = 0.0 if m == cls[i] else -1.0
    return _qp(P, q, G, h)[:n * k].reshape(k, n).T


def oneclass_dual(alpha, X):
    """0.5 ||X^T alpha||^2, LIBLINEAR's -s 21 (scaled) dual objective."""
    w = np.asarray(X).T @ np.asarray(alpha)
    return 0.5 * float(w @ w)


def oneclass_rho(alpha, X, tol=0.0, weights=None):
    """LIBLINEAR's rho: mean of G_i = w.x_i over the free alphas, else (ub + lb) / 2 (lb: max G over alpha == U_i,
    ub: min G over alpha == 0; U_i = 1, or the row's weight). tol > 0 treats alphas within tol of a bound as at it
    (for a QP's output)."""
    alpha = np.asarray(alpha, dtype=np.float64)
    G = np.asarray(X) @ (np.asarray(X).T @ alpha)
    U = 1.0 if weights is None else np.asarray(weights, dtype=np.float64)
    upper, lower = alpha >= U - tol, alpha <= tol
    free = ~(upper | lower)
    if free.any():
        return float(G[free].mean())
    lb = G[upper].max() if upper.any() else -np.inf
    ub = G[lower].min() if lower.any() else np.inf
    return float((ub + lb) / 2)


def oneclass_solve(X, nu, weights=None):
    """alpha of min 0.5 a^T X X^T a, 0 <= a <= U, sum a = nu sum U (cvxopt QP, +1e-12 I), clipped to [0, U]; U = 1,
    or the rows' weights (LIBSVM's weighted one-class, docs/weights.md)."""
    X = np.asarray(X, dtype=np.float64)
    l = X.shape[0]
    U = np.ones(l) if weights is None else np.asarray(weights, dtype=np.float64)
    P = X @ X.T + 1e-12 * np.eye(l)
    G = np.vstack([-np.eye(l), np.eye(l)])
    h = np.concatenate([np.zeros(l), U])
    a = _qp(P, np.zeros(l), G, h, np.ones((1, l)), np.array([nu * U.sum()]))
    return np.clip(a, 0.0, U)
