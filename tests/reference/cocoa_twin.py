"""A slow, plain Python/NumPy twin of CoCoA+ for the L2-regularized L1-/L2-loss SVC dual (-s 3 / -s 1).

Written from the algorithm (Ma, Smith, Jaggi, Jordan, Richtarik, Takac, ICML 2015, CoCoA+ with gamma = 1 and
sigma' = K; the local solver is LIBLINEAR's dual coordinate descent on the local subproblem), not from llsvm's code:

    min_alpha  1/2 alpha^T (Q + D) alpha - e^T alpha,  0 <= alpha_i <= U_i,  Q_ij = y_i y_j x_i.x_j,
    L1 loss: D_ii = 0, U_i = C_i;  L2 loss: D_ii = 1/(2 C_i), U_i = inf.

The rows 0..l-1 are split into K contiguous ranges (boundaries round(k l / K)). The client starts from w = 0,
alpha = 0 and draws one seed per worker per call from xoshiro256** seeded with `seed` (round-major, worker 0 first).
A call of worker k, with the broadcast w and its alpha_[k]:
  1. at (w, alpha_[k]), rows in order: margin_i = y_i w.x_i; loss += C_i max(0, 1 - margin_i) (squared for L2);
     G_i = margin_i - 1 + D_ii alpha_i; PG_i = min(G_i, 0) at alpha_i = 0, max(G_i, 0) at alpha_i = U_i, else G_i;
     PG max / min; sum alpha_i; sum D_ii alpha_i alpha_i; QD_i = sigma' ||x_i||^2 (with the bias).
  2. beta = alpha_[k], u = w, index = 0..l_k-1; H times: shuffle index (Fisher-Yates with Lemire's bounded draws
     from xoshiro256** seeded with the call's seed, continued across the epochs), then for i in index order:
     G = y_i u.x_i - 1 + D_ii beta_i, PG as above at beta_i; if |PG| > 1e-12: beta_old = beta_i,
     beta_i = min(max(beta_i - G / (QD_i + D_ii), 0), U_i), u += (sigma' (beta_i - beta_old) y_i) x_i.
  3. dw = sum_i ((beta_i - alpha_i) y_i) x_i over the rows with beta_i != alpha_i, in row order, from 0.
Client: with the sums added over the workers in order, stop when PG_max - PG_min <= eps and |PG_max| <= eps and
|PG_min| <= eps (the returned w, alpha are the call's broadcast ones), or, after max_iter applied rounds, evaluate
once more without epochs and stop; else w += dw_0, then dw_1, ... and alpha_[k] = beta.

Dot products w.x_i follow a given summation order (dcd_twin._dot: "unroll4" is the kernel's), squared norms and
updates run element by element in column order, in Python floats, so the twin can agree with the kernel bit for bit.
"""
import math

import numpy as np

from .dcd_twin import Xoshiro256ss, _axpy, _dot, _ieee_div, _signs, _sq_norm, as_rows

INF = math.inf


def bounds(l, K):
    """The K contiguous ranges' boundaries."""
    return [int(b) for b in np.linspace(0, l, K + 1).round()]


def _pg(G, a, U):
    if a == 0.0:
        return G if G < 0.0 else 0.0
    if a == U:
        return G if G > 0.0 else 0.0
    return G


def _clip(a, U):
    if a < 0.0:
        return 0.0
    if a > U:
        return U
    return a


def local_round(rows, n, bias, ys, alpha, w, sigma, epochs, seed, Cp, Cn, l1_loss, dot_order="unroll4",
                shuffle=True, record=None):
    """One worker's call (steps 1-3 above). rows: [(indices, values)] of the worker's rows; ys: +-1 ints.
    Returns dict(dw, alpha_k_new, pg_max, pg_min, sum_alpha, sum_diag, loss); record (a list): the visiting
    order of every epoch is appended to it."""
    diag = {1: 0.0, -1: 0.0} if l1_loss else {1: 0.5 / Cp, -1: 0.5 / Cn}
    upper = {1: float(Cp), -1: float(Cn)} if l1_loss else {1: INF, -1: INF}
    cost = {1: float(Cp), -1: float(Cn)}
    l = len(rows)
    pg_max, pg_min, sum_alpha, sum_diag, loss = -INF, INF, 0.0, 0.0, 0.0
    QD = []
    for i in range(l):
        yi = ys[i]
        margin = yi * _dot(rows[i], w, n, bias, dot_order)
        xi = 1.0 - margin
        if xi > 0.0:
            loss += cost[yi] * (xi if l1_loss else xi * xi)
        pg = _pg(margin - 1.0 + alpha[i] * diag[yi], alpha[i], upper[yi])
        pg_max = max(pg_max, pg)
        pg_min = min(pg_min, pg)
        sum_alpha += alpha[i]
        sum_diag += diag[yi] * alpha[i] * alpha[i]
        QD.append(sigma * _sq_norm(rows[i], bias))
    beta = list(alpha)
    u = list(w)
    index = list(range(l))
    rng = Xoshiro256ss(seed)
    for _ in range(epochs):
        if shuffle:
            for s in range(l):
                j = s + rng.bounded(l - s)
                index[s], index[j] = index[j], index[s]
        if record is not None:
            record.append(list(index))
        for i in index:
            yi = ys[i]
            G = yi * _dot(rows[i], u, n, bias, dot_order) - 1.0 + beta[i] * diag[yi]
            if abs(_pg(G, beta[i], upper[yi])) > 1.0e-12:
                old = beta[i]
                beta[i] = _clip(beta[i] - _ieee_div(G, QD[i] + diag[yi]), upper[yi])
                _axpy(rows[i], sigma * (beta[i] - old) * yi, u, n, bias)
    dw = [0.0] * len(w)
    for i in range(l):
        d = beta[i] - alpha[i]
        if d != 0.0:
            _axpy(rows[i], d * ys[i], dw, n, bias)
    return dict(dw=dw, alpha_k_new=beta, pg_max=pg_max, pg_min=pg_min, sum_alpha=sum_alpha, sum_diag=sum_diag,
                loss=loss)


class TwinResult:
    def __init__(self, w, alpha, rounds, converged, history, calls):
        self.w = np.array(w, dtype=np.float64)
        self.alpha = np.array(alpha, dtype=np.float64)
        self.rounds = rounds
        self.converged = converged
        self.history = history      # per call: (primal, dual, gap) at its broadcast w
        self.calls = calls          # per call: the workers' returned dicts


def solve(X, y, Cp, Cn, l1_loss, K, epochs=1, eps=0.1, max_iter=1000, seed=1, bias=-1.0, sigma=None,
          dot_order="unroll4", shuffle=True):
    """CoCoA+ on (X, y) (dense or scipy sparse; y > 0 is +1) with K contiguous parts. Returns a TwinResult."""
    rows, n = as_rows(X)
    ys = _signs(y)
    l = len(rows)
    w_size = n + (1 if bias >= 0 else 0)
    sigma = float(K if sigma is None else sigma)
    b = bounds(l, K)
    alphas = [[0.0] * (b[k + 1] - b[k]) for k in range(K)]
    w = [0.0] * w_size
    seeds = Xoshiro256ss(seed)
    history, calls = [], []
    rounds = 0
    converged = False
    while True:
        h = epochs if rounds < max_iter else 0
        res = [local_round(rows[b[k]:b[k + 1]], n, bias, ys[b[k]:b[k + 1]], alphas[k], w, sigma, h, seeds.next(),
                           Cp, Cn, l1_loss, dot_order, shuffle) for k in range(K)]
        calls.append(res)
        pg_max = max(r["pg_max"] for r in res)
        pg_min = min(r["pg_min"] for r in res)
        wTw = float(np.dot(w, w))
        primal = 0.5 * wTw + sum(r["loss"] for r in res)
        dual = sum(r["sum_alpha"] for r in res) - 0.5 * wTw - 0.5 * sum(r["sum_diag"] for r in res)
        history.append((primal, dual, primal - dual))
        if pg_max - pg_min <= eps and abs(pg_max) <= eps and abs(pg_min) <= eps:
            converged = True
            break
        if h == 0:
            break
        for r in res:
            w = [a + d for a, d in zip(w, r["dw"])]
        alphas = [r["alpha_k_new"] for r in res]
        rounds += 1
    return TwinResult(w, [a for part in alphas for a in part], rounds, converged, history, calls)
