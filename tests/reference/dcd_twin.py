"""A slow, plain NumPy/Python twin of the dual coordinate descent solver of L2-regularized L1-/L2-loss SVC.

Written from the algorithm, not from llsvm's code: Hsieh, Chang, Lin, Keerthi and Sundararajan (ICML 2008),
Algorithm 3 (dual coordinate descent with shrinking), with LIBLINEAR 2.50's details:

    min_alpha  f(alpha) = 1/2 alpha^T Qbar alpha - e^T alpha,   0 <= alpha_i <= U_i,
    Qbar = Q + D,  Q_ij = y_i y_j x_i.x_j,
    L1 loss: D_ii = 0,          U_i = C_i
    L2 loss: D_ii = 1 / (2 C_i), U_i = infinity
    C_i = Cp for y_i = +1, Cn for y_i = -1, times the row's weight W_i with weights (docs/weights.md).

One outer iteration: (optionally) permute the active set, then visit index[0:active_size]; for variable i,
G = y_i w.x_i - 1 + D_ii alpha_i, projected gradient PG (0 at a bound where G points outwards), shrink a bound
variable whose G is beyond last iteration's PG_max / PG_min (swap it with the last active variable and examine
position s again), else update alpha_i <- min(max(alpha_i - G / Qbar_ii, 0), U_i) when |PG| > 1e-12 and keep
w = sum alpha_i y_i x_i up to date. Stop when PG_max - PG_min <= eps and |PG_max| <= eps and |PG_min| <= eps; if
variables were shrunk, reset the active set to all variables and PG_max_old / PG_min_old to +-inf, and go on
(the final unshrunk pass). After an iteration that does not stop, PG_max_old <= 0 becomes +inf and
PG_min_old >= 0 becomes -inf.

The visiting order: with shuffle=False the active set is visited in its current order; with shuffle=True it is
first permuted by j = s + bounded(active_size - s), swap(index[s], index[j]), for s = 0..active_size-1, where
bounded() is Lemire's unbiased multiply-and-reject draw on the high 32 bits of xoshiro256** (Blackman & Vigna),
seeded by four splitmix64 outputs (the generator llsvm's kernels use), so the twin follows the default solver
draw for draw.

Dot products are accumulated over the row's non-zeros in column order, then the bias term, in plain Python floats
(IEEE double, no fused multiply-add): by default in one running sum (LIBLINEAR's order), or with
dot_order="unroll4" in four interleaved partial sums (a C kernel unrolled by four), so results can agree with a
C kernel bit for bit. Squared norms and w updates are element by element in column order.
"""
import math

import numpy as np
import scipy.sparse as sp

MASK64 = (1 << 64) - 1
MASK32 = (1 << 32) - 1
INF = math.inf


# ---------------------------------------------------------------------------------------------------------------
# the random number generator

def splitmix64_stream(seed):
    """The splitmix64 outputs for a seed (Steele, Lea, Flood 2014), as an infinite generator."""
    x = seed & MASK64
    while True:
        x = (x + 0x9E3779B97F4A7C15) & MASK64
        z = x
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
        yield z ^ (z >> 31)


def _rotl(x, k):
    return ((x << k) | (x >> (64 - k))) & MASK64


class Xoshiro256ss:
    """xoshiro256** 1.0, seeded with four consecutive splitmix64 outputs."""

    def __init__(self, seed):
        sm = splitmix64_stream(seed)
        self.s = [next(sm) for _ in range(4)]

    def next(self):
        s = self.s
        result = (_rotl((s[1] * 5) & MASK64, 7) * 9) & MASK64
        t = (s[1] << 17) & MASK64
        s[2] ^= s[0]
        s[3] ^= s[1]
        s[1] ^= s[2]
        s[0] ^= s[3]
        s[2] ^= t
        s[3] = _rotl(s[3], 45)
        return result

    def bounded(self, n):
        """Uniform in [0, n) for 1 <= n < 2^32 (Lemire 2019, on the high 32 bits of each draw)."""
        assert 1 <= n <= MASK32
        m = (self.next() >> 32) * n
        low = m & MASK32
        if low < n:
            threshold = ((1 << 32) - n) % n
            while low < threshold:
                m = (self.next() >> 32) * n
                low = m & MASK32
        return m >> 32


# ---------------------------------------------------------------------------------------------------------------
# data as rows of (indices, values)

def as_rows(X):
    """[(indices list, values list)] per row: the non-zeros in increasing column order (dense or scipy sparse)."""
    rows = []
    if sp.issparse(X):
        X = sp.csr_matrix(X)
        X = X.sorted_indices()
        for i in range(X.shape[0]):
            a, b = X.indptr[i], X.indptr[i + 1]
            idx = [int(j) for j in X.indices[a:b]]
            val = [float(v) for v in X.data[a:b]]
            rows.append((idx, val))
        return rows, X.shape[1]
    X = np.asarray(X)
    for i in range(X.shape[0]):
        idx = [int(j) for j in np.flatnonzero(X[i])]
        rows.append((idx, [float(X[i, j]) for j in idx]))
    return rows, X.shape[1]


DOT_ORDERS = ("sequential", "unroll4")


def _dot(row, w, n, bias, order="sequential"):
    """w.x_i in a fixed summation order, then the bias term.

    "sequential": one running sum over the non-zeros in column order (LIBLINEAR's sparse_operator::dot).
    "unroll4": four partial sums s0..s3 taking non-zeros k, k+1, k+2, k+3 of each full group of four, the
    remaining (at most three) non-zeros added to s0, combined as (s0 + s1) + (s2 + s3).
    """
    idx, val = row
    if order == "sequential":
        s = 0.0
        for j, v in zip(idx, val):
            s += w[j] * v
    elif order == "unroll4":
        s0 = s1 = s2 = s3 = 0.0
        m = len(idx)
        k = 0
        while k + 4 <= m:
            s0 += w[idx[k]] * val[k]
            s1 += w[idx[k + 1]] * val[k + 1]
            s2 += w[idx[k + 2]] * val[k + 2]
            s3 += w[idx[k + 3]] * val[k + 3]
            k += 4
        while k < m:
            s0 += w[idx[k]] * val[k]
            k += 1
        s = (s0 + s1) + (s2 + s3)
    else:
        raise ValueError(f"unknown dot order {order!r} (known: {DOT_ORDERS})")
    if bias >= 0:
        s += w[n] * bias
    return s


def row_dots(X, w, bias=-1.0, order="sequential"):
    """[w.x_i for every row] in the given summation order (to probe a kernel's order)."""
    rows, n = as_rows(X)
    w = [float(v) for v in w]
    return np.array([_dot(r, w, n, bias, order) for r in rows])


def _axpy(row, a, w, n, bias):
    idx, val = row
    for j, v in zip(idx, val):
        w[j] += a * v
    if bias >= 0:
        w[n] += a * bias


def _sq_norm(row, bias):
    s = 0.0
    for v in row[1]:
        s += v * v
    if bias >= 0:
        s += bias * bias
    return s


def _ieee_div(a, b):
    """a / b with IEEE semantics (an empty row with L1 loss has Qbar_ii = 0: -1/0 = -inf sends alpha_i to C)."""
    if b == 0.0:
        with np.errstate(divide="ignore", invalid="ignore"):
            return float(np.float64(a) / np.float64(b))
    return a / b


def _box(Cp, Cn, l1_loss):
    """({label: D_ii}, {label: U_i}): D_ii = 0, U_i = C_i for the L1 loss; D_ii = 1 / (2 C_i), U_i = inf for L2."""
    if l1_loss:
        return {1: 0.0, -1: 0.0}, {1: float(Cp), -1: float(Cn)}
    return {1: 0.5 / Cp, -1: 0.5 / Cn}, {1: INF, -1: INF}


def _next_bounds(PGmax_new, PGmin_new):
    """The next iteration's shrinking bounds: this one's PG extremes, +-inf where they are on the wrong side."""
    return (PGmax_new if PGmax_new > 0 else INF), (PGmin_new if PGmin_new < 0 else -INF)


def _signs(y):
    return [1 if float(v) > 0 else -1 for v in np.asarray(y).ravel()]


# ---------------------------------------------------------------------------------------------------------------
# the solver

class TwinResult:
    def __init__(self, alpha, w, n_iter, epochs):
        self.alpha = np.array(alpha, dtype=np.float64)
        self.w = np.array(w, dtype=np.float64)
        self.n_iter = n_iter
        self.epochs = epochs        # per outer iteration: dict(active_size, PGmax, PGmin, n_updates, ...)


def solve_l2r_l1l2_svc(X, y, Cp, Cn, eps, l1_loss, max_iter=300, bias=-1.0, shuffle=True, seed=1,
                       alpha0=None, record_w=False, dot_order="sequential", weights=None):
    """Dual CD with shrinking on (X, y), y in {+1, -1} (anything > 0 is +1). Returns a TwinResult.

    dot_order: the summation order of w.x_i (see _dot), to follow a given kernel to the last bit.
    weights: None, or the rows' weights W_i > 0: C_i = (Cp or Cn) W_i, and D_ii, U_i of C_i.
    record_w: also keep w and alpha at the start of every outer iteration (epochs[k]['w_start'], ['alpha_start'])
    and the variables visited (not shrunk) in visiting order with their projected gradients at the visit
    (epochs[k]['visited'], ['PG']).
    """
    rows, n = as_rows(X)
    ys = _signs(y)
    l = len(rows)
    w_size = n + (1 if bias >= 0 else 0)
    diag, upper = _box(Cp, Cn, l1_loss)
    if weights is None:
        D = [diag[yi] for yi in ys]
        U = [upper[yi] for yi in ys]
    else:                       # per row: C_i = C_{y_i} W_i
        Ci = [(float(Cp) if yi > 0 else float(Cn)) * float(wi) for yi, wi in zip(ys, weights)]
        D = [0.0 if l1_loss else 0.5 / c for c in Ci]
        U = [c if l1_loss else INF for c in Ci]
    alpha = [0.0] * l if alpha0 is None else [float(a) for a in alpha0]
    if alpha0 is not None and l1_loss:
        alpha = [min(a, U[i]) for i, a in enumerate(alpha)]
    w = [0.0] * w_size
    for i in range(l):
        if alpha[i] != 0.0:
            _axpy(rows[i], ys[i] * alpha[i], w, n, bias)
    QD = [_sq_norm(rows[i], bias) + D[i] for i in range(l)]
    index = list(range(l))
    rng = Xoshiro256ss(seed)
    active_size = l
    PGmax_old, PGmin_old = INF, -INF
    it = 0
    epochs = []
    while it < max_iter:
        rec = {}
        if record_w:
            rec["w_start"] = list(w)
            rec["alpha_start"] = list(alpha)
            rec["visited"] = []
            rec["PG"] = []
        PGmax_new, PGmin_new = -INF, INF
        if shuffle:
            for s in range(active_size):
                j = s + rng.bounded(active_size - s)
                index[s], index[j] = index[j], index[s]
        n_updates = 0
        s = 0
        while s < active_size:
            i = index[s]
            yi = ys[i]
            G = yi * _dot(rows[i], w, n, bias, dot_order) - 1.0
            C = U[i]
            G += alpha[i] * D[i]
            PG = 0.0
            if alpha[i] == 0.0:
                if G > PGmax_old:
                    active_size -= 1
                    index[s], index[active_size] = index[active_size], index[s]
                    continue
                elif G < 0.0:
                    PG = G
            elif alpha[i] == C:
                if G < PGmin_old:
                    active_size -= 1
                    index[s], index[active_size] = index[active_size], index[s]
                    continue
                elif G > 0.0:
                    PG = G
            else:
                PG = G
            PGmax_new = max(PGmax_new, PG)
            PGmin_new = min(PGmin_new, PG)
            if record_w:
                rec["visited"].append(i)
                rec["PG"].append(PG)
            if abs(PG) > 1.0e-12:
                alpha_old = alpha[i]
                alpha[i] = min(max(alpha[i] - _ieee_div(G, QD[i]), 0.0), C)
                d = (alpha[i] - alpha_old) * yi
                _axpy(rows[i], d, w, n, bias)
                n_updates += 1
            s += 1
        it += 1
        rec.update(active_size=active_size, PGmax=PGmax_new, PGmin=PGmin_new, n_updates=n_updates)
        epochs.append(rec)
        if PGmax_new - PGmin_new <= eps and abs(PGmax_new) <= eps and abs(PGmin_new) <= eps:
            if active_size == l:
                break
            active_size = l
            PGmax_old, PGmin_old = INF, -INF
            continue
        PGmax_old, PGmin_old = _next_bounds(PGmax_new, PGmin_new)
    return TwinResult(alpha, w, it, epochs)


# ---------------------------------------------------------------------------------------------------------------
# objectives and certificates (vectorized NumPy; independent of the solver above)

def design(X, bias=-1.0):
    """X as a scipy CSR matrix with the constant bias column appended when bias >= 0."""
    X = sp.csr_matrix(X, dtype=np.float64)
    if bias >= 0:
        X = sp.hstack([X, sp.csr_matrix(np.full((X.shape[0], 1), float(bias)))], format="csr")
    return X


def costs(y, Cp, Cn):
    y = np.asarray(y, dtype=np.float64).ravel()
    return np.where(y > 0, float(Cp), float(Cn))


def primal_objective(w, X, y, Cp, Cn, l1_loss, bias=-1.0):
    """1/2 w.w + sum_i C_i xi_i with xi_i = max(0, 1 - y_i w.x_i) (L1 loss) or its square (L2 loss)."""
    Xb = design(X, bias)
    ys = np.where(np.asarray(y, dtype=np.float64).ravel() > 0, 1.0, -1.0)
    xi = np.maximum(0.0, 1.0 - ys * (Xb @ np.asarray(w, dtype=np.float64)))
    loss = xi if l1_loss else xi * xi
    w = np.asarray(w, dtype=np.float64)
    return 0.5 * float(w @ w) + float(costs(y, Cp, Cn) @ loss)


def w_from_alpha(alpha, X, y, bias=-1.0):
    """sum_i alpha_i y_i x_i (with the bias coordinate)."""
    ys = np.where(np.asarray(y, dtype=np.float64).ravel() > 0, 1.0, -1.0)
    return design(X, bias).T @ (np.asarray(alpha, dtype=np.float64) * ys)


def dual_objective(alpha, X, y, Cp, Cn, l1_loss, bias=-1.0):
    """The dual in maximization form: e.alpha - 1/2 ||sum alpha_i y_i x_i||^2 - 1/2 sum D_ii alpha_i^2."""
    alpha = np.asarray(alpha, dtype=np.float64)
    w = w_from_alpha(alpha, X, y, bias)
    d = 0.0 if l1_loss else float((alpha * alpha) @ (0.5 / costs(y, Cp, Cn)))
    return float(alpha.sum()) - 0.5 * float(w @ w) - 0.5 * d


def projected_gradients(alpha, X, y, Cp, Cn, l1_loss, bias=-1.0, w=None):
    """PG_i of the dual minimization problem at alpha (w: the primal point to use, default sum alpha_i y_i x_i)."""
    alpha = np.asarray(alpha, dtype=np.float64)
    ys = np.where(np.asarray(y, dtype=np.float64).ravel() > 0, 1.0, -1.0)
    C = costs(y, Cp, Cn)
    if w is None:
        w = w_from_alpha(alpha, X, y, bias)
    D = np.zeros_like(C) if l1_loss else 0.5 / C
    U = C if l1_loss else np.full_like(C, INF)
    G = ys * (design(X, bias) @ np.asarray(w, dtype=np.float64)) - 1.0 + D * alpha
    return np.where(alpha <= 0.0, np.minimum(G, 0.0), np.where(alpha >= U, np.maximum(G, 0.0), G))


def max_violation(alpha, X, y, Cp, Cn, l1_loss, bias=-1.0, w=None):
    """max_i |PG_i|: 0 exactly at the dual optimum."""
    pg = projected_gradients(alpha, X, y, Cp, Cn, l1_loss, bias, w)
    return float(np.abs(pg).max()) if pg.size else 0.0
