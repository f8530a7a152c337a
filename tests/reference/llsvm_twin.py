"""A slow, plain NumPy/Python twin of the one-pass harsh-shrinking solver's kernels (-s llsvm).

Written from the paper, not from llsvm's code: Alrajeh, Takeda, Niranjan, "Memory-efficient large-scale linear
support vector machine" (ICMV 2014, Proc. SPIE 9445), Algorithm 1 (dual coordinate
ascent for the 1-norm soft margin SVM, the kernel-Adatron step eta = 1 / x_i.x_i) and Algorithm 2 (one pass with
harsh shrinking, then N passes over loaded blocks of the active set):

    max_alpha  D(alpha) = sum_i alpha_i - 1/2 ||w||^2,   w = sum_i alpha_i y_i x_i,   0 <= alpha_i <= C_i,
    C_i = Cp for y_i = +1, Cn for y_i = -1.

With bias >= 0 every row has one more coordinate, index n_features, value bias (w then has n_features + 1
entries, the last one the bias weight); QD_i = ||x_i||^2 (+ bias^2).

- `first_pass`: ONE step per row, rows in stream order, from alpha = 0 (Algorithm 2, lines 2-8):
      G = y_i w.x_i - 1,   alpha_i = min(max(0 - G / QD_i, 0), C_i),   w += alpha_i y_i x_i
  (block_pass's step from alpha_i = 0; 0 - G / QD_i and -G / QD_i differ only in the sign of a zero).
- `block_pass`: n_inner passes of Algorithm 1 over rows index[0:l] of a block (Algorithm 2, line 17):
      alpha_old = alpha_i,   alpha_i <- min(max(alpha_i - G / QD_i, 0), C_i),   w += (alpha_i - alpha_old) y_i x_i,
  in the order of `index` (shuffle off), or with `rng` given, after a Fisher-Yates shuffle of index before each
  pass (index[s] swaps with index[s + rng.bounded(l - s)], s = 0..l-1), the RNG being the project's
  xoshiro256** of the dual CD twin (tests/reference/dcd_twin.py).
- `fit_in_memory`: Algorithm 2 end to end for one binary problem whose active set fits in memory: the first
  pass, then outer iterations of one block_pass over the whole active set (rows in their original order, then
  shuffled by the problem's RNG), rows at 0 or C dropped after each outer iteration, stop when the dual changed
  by at most eps relatively (the paper's criterion, section 3) or the active set is empty.

Dot products: the non-zeros of a row in column order, then the bias term, in plain Python floats (IEEE double,
no fused multiply-add), either in one running sum ("sequential") or in four interleaved partial sums combined
as (s0 + s1) + (s2 + s3) ("unroll4", a C loop unrolled by four), so results can agree with a C kernel bit for
bit. float32 values are widened to double exactly before any arithmetic. Squared norms and w updates go
element by element in column order.
"""
import numpy as np

from .dcd_twin import DOT_ORDERS, Xoshiro256ss, _axpy, _dot, _sq_norm
from .dcd_twin import _ieee_div as _div

__all__ = ["DOT_ORDERS", "rows_of", "sq_norms", "first_pass", "block_pass", "dual", "fit_in_memory",
           "problem_seed"]

MASK64 = (1 << 64) - 1


def rows_of(indptr, indices, values):
    """[(indices list, values list as Python floats)] per CSR row."""
    indptr = np.asarray(indptr)
    rows = []
    for i in range(indptr.shape[0] - 1):
        a, b = int(indptr[i]), int(indptr[i + 1])
        rows.append(([int(j) for j in indices[a:b]], [float(v) for v in values[a:b]]))
    return rows


def sq_norms(rows, bias):
    """QD_i = ||x_i||^2 (+ bias^2) for every row."""
    return np.array([_sq_norm(r, bias) for r in rows], dtype=np.float64)


def _clip(a, C):
    return min(max(a, 0.0), C)


def first_pass(rows, ys, Cp, Cn, n_features, bias=-1.0, w=None, QD=None, dot_order="unroll4"):
    """One step per row from alpha = 0, rows in order. ys: +1/-1 per row.

    w: the weights to start from (n_features + 1 entries; the last is the bias weight), default zeros; it is
    not modified. Returns (alpha, w, sum of alpha).
    """
    w = [0.0] * (n_features + 1) if w is None else [float(v) for v in w]
    QD = sq_norms(rows, bias) if QD is None else QD
    alpha = np.zeros(len(rows))
    s = 0.0
    for i, row in enumerate(rows):
        yi = 1 if ys[i] > 0 else -1
        C = float(Cp) if yi > 0 else float(Cn)
        G = yi * _dot(row, w, n_features, bias, dot_order) - 1.0
        a = _clip(0.0 - _div(G, float(QD[i])), C)
        alpha[i] = a
        if a != 0.0:
            _axpy(row, a * yi, w, n_features, bias)
            s += a
    return alpha, np.array(w), s


def block_pass(rows, ys, QD, alpha, w, Cp, Cn, n_inner, index, n_features, bias=-1.0, rng=None,
               dot_order="unroll4", G_out=None, n=None, pg_first_out=None):
    """n_inner passes over rows index[0:l] (l = n, by default len(rows): with n given, the block's rows that
    index[0:n] names, the others untouched); shuffled before each pass when `rng` is given.

    alpha, w and index are not modified. Returns (alpha, w, index after the last shuffle, change of sum(alpha),
    number of updates, the largest |PG| of the last pass, each row's before its step). G_out (a list of len(rows),
    optional) receives each row's G of the last pass, before its step; pg_first_out (a list of one entry,
    optional) the largest |PG| of the first pass, each row's before its step.
    """
    alpha = [float(a) for a in alpha]
    w = [float(v) for v in w]
    index = [int(i) for i in index]
    l = len(rows) if n is None else int(n)
    d_sum = 0.0
    n_updates = 0
    pg_max = pg_first = 0.0
    for it in range(n_inner):
        if rng is not None:
            for s in range(l):
                j = s + rng.bounded(l - s)
                index[s], index[j] = index[j], index[s]
        for s in range(l):
            i = index[s]
            yi = 1 if ys[i] > 0 else -1
            C = float(Cp) if yi > 0 else float(Cn)
            G = yi * _dot(rows[i], w, n_features, bias, dot_order) - 1.0
            a_old = alpha[i]
            PG = min(G, 0.0) if a_old == 0.0 else max(G, 0.0) if a_old == C else G
            if it == 0 and C > 0.0:
                pg_first = max(pg_first, abs(PG))
            if it == n_inner - 1 and C > 0.0:
                pg_max = max(pg_max, abs(PG))
            if it == n_inner - 1 and G_out is not None:
                G_out[i] = G
            a = _clip(a_old - _div(G, float(QD[i])), C)
            if a != a_old:
                alpha[i] = a
                _axpy(rows[i], (a - a_old) * yi, w, n_features, bias)
                d_sum += a - a_old
                n_updates += 1
    if pg_first_out is not None:
        pg_first_out[0] = pg_first
    return np.array(alpha), np.array(w), np.array(index), d_sum, n_updates, pg_max


def dual(alpha, w):
    """D = sum(alpha) - 1/2 |w|^2 for a w = sum alpha_i y_i x_i."""
    w = np.asarray(w, dtype=np.float64)
    return float(np.sum(alpha)) - 0.5 * float(w @ w)


def problem_seed(seed, k):
    """The RNG seed of binary problem k under a run seed: the driver's convention (golden-ratio mixing)."""
    return (int(seed) * 0x9E3779B97F4A7C15 + k + 1) & MASK64


def recheck(rows, ys, alpha, w, Cp, Cn, n_features, bias=-1.0, dot_order="unroll4", in_set=()):
    """The re-check pass at w: every row's projected gradient from its alpha. Returns (max |PG|, sum of C_i times
    the hinge loss, the rows outside `in_set` (the active set) with PG != 0, in row order)."""
    in_set = set(in_set)
    m = loss = 0.0
    enter = []
    for i, r in enumerate(rows):
        yi = 1 if ys[i] > 0 else -1
        C = float(Cp) if yi > 0 else float(Cn)
        G = yi * _dot(r, w, n_features, bias, dot_order) - 1.0
        if G < 0.0:
            loss += C * -G
        a = alpha[i]
        PG = min(G, 0.0) if a == 0.0 else max(G, 0.0) if a == C else G
        if C == 0.0:
            PG = 0.0
        m = max(m, abs(PG))
        if abs(PG) > 0.0 and i not in in_set:
            enter.append(i)
    return m, loss, enter


def fit_in_memory(rows, ys, Cp, Cn, n_features, bias=-1.0, eps=0.01, n_inner=5, max_iter=100, seed=1, k=0,
                  dot_order="unroll4", recheck_eps=None, max_passes=10, sweep_fraction=0.5):
    """Algorithm 2 for one binary problem whose active set stays in memory. Returns a dict with w (n_features
    + 1 entries), alpha (all rows), the dual trace (after the first pass, then after each outer iteration), the
    active set sizes (after the first pass, then after each outer iteration) and n_iter.

    recheck_eps (llsvm's default mode, -e): eps is then --inner-eps; block optimization also waits for its last
    pass's largest |PG| to be within sweep_fraction x recheck_eps; re-check passes follow (`recheck`): the dropped
    violators join the end of the active set, and the run stops when a pass finds max |PG| <= recheck_eps, or
    after max_passes of them. With re-check passes a row at a bound stays in the active set while its G of the
    last pass points outward by at most that pass's largest |PG| (LIBLINEAR's shrinking test). The dict then also
    has "rechecks": [(max |PG|, primal, rows re-entered)]."""
    QD = sq_norms(rows, bias)
    alpha, w, sum_alpha = first_pass(rows, ys, Cp, Cn, n_features, bias, QD=QD, dot_order=dot_order)
    C = np.where(np.asarray(ys) > 0, float(Cp), float(Cn))
    active = [i for i in range(len(rows)) if 0.0 < alpha[i] < C[i]]
    trace = [sum_alpha - 0.5 * float(w @ w)]
    sizes = [len(active)]
    rng = Xoshiro256ss(problem_seed(seed, k))
    n_iter = 0
    rechecks = []
    while True:
        for it in range(1, max_iter + 1):
            if not active:
                break
            D_prev = trace[-1]
            sub = [rows[i] for i in active]
            G = [0.0] * len(active)
            a, w, _, d_sum, _, pg = block_pass(sub, [ys[i] for i in active], QD[active], alpha[active], w, Cp, Cn,
                                               n_inner, range(len(active)), n_features, bias, rng=rng,
                                               dot_order=dot_order, G_out=G)
            sum_alpha += d_sum
            alpha[active] = a
            if recheck_eps is None:
                active = [i for i, ai in zip(active, a) if 0.0 < ai < C[i]]
            else:
                active = [i for i, ai, g in zip(active, a, G) if 0.0 < ai < C[i] or (ai == 0.0 and g <= pg)
                          or (ai == C[i] and g >= -pg and C[i] > 0)]
            n_iter += 1
            D = sum_alpha - 0.5 * float(w @ w)
            trace.append(D)
            sizes.append(len(active))
            if D != 0.0 and (D - D_prev) / abs(D) <= eps and \
                    (recheck_eps is None or pg <= sweep_fraction * recheck_eps):
                break
        if recheck_eps is None:
            break
        m, loss, enter = recheck(rows, ys, alpha, w, Cp, Cn, n_features, bias, dot_order, in_set=active)
        rechecks.append((m, 0.5 * float(w @ w) + loss, len(enter)))
        if m <= recheck_eps or len(rechecks) >= max_passes:
            break
        active = active + enter
    return {"w": w, "alpha": alpha, "dual_trace": trace, "active": sizes, "n_iter": n_iter,
            "sum_alpha": sum_alpha, "rechecks": rechecks}
