"""CoCoA+ for one two-class -s 1 / -s 3 problem: the client loop around the local solver of cext/_linear.pyx
(`cocoa_local`). Ma, Smith, Jaggi, Jordan, Richtarik, Takac, "Adding vs. Averaging in Distributed Primal-Dual
Optimization", ICML 2015 (CoCoA+); Smith et al., "CoCoA: A General Framework for Communication-Efficient
Distributed Optimization", JMLR 2018. The problem is LIBLINEAR's dual of section 1 of _linear.pyx (-s 3: hinge loss,
D_ii = 0, U_i = C_i; -s 1: squared hinge, D_ii = 1/(2 C_i), U_i = inf).

The rows are split into K parts (Subproblems over one view, `split_rows`), one per worker. A round: the client
broadcasts w; every worker runs `local_round` on its part (H epochs of dual CD on its local subproblem with
sigma' = K, gamma = 1: "adding") and returns dw_k = A_k d_k and its new alpha_[k], with the stopping figures and the
certificate's partial sums at the broadcast w and its old alpha_[k]. The client stops on LIBLINEAR 2.50's rule over
all workers (PG_max - PG_min <= eps and |PG_max|, |PG_min| <= eps) BEFORE applying the round, so the returned w and
alpha are the ones the certificate was evaluated at (the stopping round's local work is discarded); else
w += dw_0 + ... + dw_{K-1} (in that order, so runs are reproducible) and alpha_[k] = its new value.

`mapper(fn, list_of_args) -> list of results` runs the workers' calls: the default is a loop in this process; each
element of list_of_args is the tuple of fn's positional arguments, and local_round is a module-level pure function
of picklable arguments, so another module can run the calls on Dask workers (client.map then gather).
"""
import numpy as np

from .._ext import _linear as K
from .._ext._random import rng_state
from .common import FitResult, Seeds, Subproblem

L2R_L2LOSS_SVC_DUAL = 1
L2R_L1LOSS_SVC_DUAL = 3


def local_round(part, alpha_k, w, sigma, epochs, seed, l1_loss):
    """One worker's round: `epochs` passes of dual CD on part's local subproblem from the broadcast w, visiting the
    rows in a random order drawn from the project's RNG seeded with `seed` (a fresh permutation each epoch).

    part: a Subproblem (the worker's rows, labels, Cp, Cn, bias); alpha_k: its dual variables (float64, not
    modified); w: the broadcast weights (not modified). Returns dict(dw = A_k d (float64, w's size), alpha_k_new,
    pg_max, pg_min (LIBLINEAR's projected-gradient extremes over the part), sum_alpha, sum_diag (sum D_ii
    alpha_i^2), loss (sum C_i loss_i), nsv (alpha_k's non-zeros)), the last six at (w, alpha_k), the round's start.
    epochs = 0: only those.
    """
    alpha_k = np.ascontiguousarray(alpha_k, dtype=np.float64)
    w = np.ascontiguousarray(w, dtype=np.float64)
    alpha_new = np.empty_like(alpha_k)
    dw = np.empty_like(w)
    pg_max, pg_min, sum_alpha, sum_diag, loss = K.cocoa_local(
        *part.args, part.y, alpha_k, w, float(sigma), part.Cp, part.Cn, bool(l1_loss), int(epochs),
        rng_state(int(seed) & 0xFFFFFFFFFFFFFFFF), alpha_new, dw)
    return dict(dw=dw, alpha_k_new=alpha_new, pg_max=pg_max, pg_min=pg_min, sum_alpha=sum_alpha,
                sum_diag=sum_diag, loss=loss, nsv=int(np.count_nonzero(alpha_k > 0)))


def local_map(fn, list_of_args):
    """The default mapper: the workers' calls one after the other, in this process."""
    return [fn(*args) for args in list_of_args]


def split_rows(sub, n_parts):
    """sub's rows as n_parts Subproblems of contiguous ranges (sizes differ by at most one), in order."""
    rows = np.arange(sub.l, dtype=np.int64) if sub.rows.size == 0 else sub.rows
    bounds = np.linspace(0, sub.l, n_parts + 1).round().astype(np.int64)
    return [Subproblem(sub.view, sub.y[a:b], sub.Cp, sub.Cn, rows=rows[a:b], bias=sub.bias)
            for a, b in zip(bounds[:-1], bounds[1:])]


class LocalParts:
    """The workers of a CoCoA+ run held in this process: the parts (Subproblems of one view) and their dual
    variables; `mapper` runs their calls (the default: one after the other). llsvm.dask has the same interface
    with the parts and their alpha on Dask workers."""

    def __init__(self, parts, mapper=None):
        if not parts:
            raise ValueError("solve_cocoa: no parts")
        first = parts[0]
        for p in parts[1:]:
            if p.view is not first.view or p.bias != first.bias or p.Cp != first.Cp or p.Cn != first.Cn:
                raise ValueError("solve_cocoa: the parts must share the view, the bias and Cp, Cn")
        self.parts = parts
        self.mapper = local_map if mapper is None else mapper
        self.w_size = first.w_size
        self.alphas = [np.zeros(p.l, np.float64) for p in parts]
        self.pending = None

    def __len__(self):
        return len(self.parts)

    def round(self, w, sigma, epochs, seeds, l1_loss):
        """local_round on every part (seeds: one each): the results, in part order; their alpha kept pending."""
        res = self.mapper(local_round, [(p, a, w, sigma, epochs, seed, l1_loss)
                                        for p, a, seed in zip(self.parts, self.alphas, seeds)])
        self.pending = [r["alpha_k_new"] for r in res]
        return res

    def commit(self):
        """The last round is applied: its alpha become the parts' own."""
        self.alphas = self.pending

    def alpha(self):
        return np.concatenate(self.alphas) if self.alphas else np.zeros(0)


def solve_cocoa(parts, l1_loss, eps=0.1, max_iter=1000, epochs=1, seed=1, sigma=None, mapper=None):
    """CoCoA+ (gamma = 1, sigma' = K by default) over parts, a list of K Subproblems of one problem (the same view,
    bias, Cp and Cn; their rows disjoint) or an object with LocalParts' interface, from w = 0, alpha = 0.

    eps: LIBLINEAR 2.50's stopping rule on the projected gradient over all rows at the round's broadcast w;
    max_iter: the most rounds (updates of w); epochs: H, local passes a round; seed: the rounds' seeds (drawn from
    Seeds(seed), round by round, worker 0 first); sigma: sigma' (None: K; smaller is not safe for gamma = 1);
    mapper: see the module's docstring.

    Returns a FitResult: w, alpha (the parts' in part order; None when the parts keep it), primal = w.w/2 +
    sum C_i loss_i, dual = sum alpha - w.w/2 - sum D_ii alpha_i^2/2, gap, max_violation = max |PG|, nSV,
    n_iter = rounds applied, converged, and extra {rounds, calls (rounds of the mapper: the last one only
    evaluates), pg_max, pg_min, bytes_per_round (w's doubles down and dw's up, per worker), history: (primal, dual,
    gap) at the broadcast w of every call}.
    """
    workers = LocalParts(parts, mapper) if isinstance(parts, (list, tuple)) else parts
    n_parts = len(workers)
    sigma = float(n_parts if sigma is None else sigma)
    seeds = Seeds(seed)
    w = np.zeros(workers.w_size, np.float64)
    history = []
    rounds = 0
    converged = False
    while True:
        # the last allowed round only evaluates (no local epochs): the certificate of the w it returns
        h = epochs if rounds < max_iter else 0
        res = workers.round(w, sigma, h, [seeds.next() for _ in range(n_parts)], l1_loss)
        pg_max = max(r["pg_max"] for r in res)
        pg_min = min(r["pg_min"] for r in res)
        loss = sum(r["loss"] for r in res)
        sum_alpha = sum(r["sum_alpha"] for r in res)
        sum_diag = sum(r["sum_diag"] for r in res)
        nsv = sum(r["nsv"] for r in res)
        wTw = float(w @ w)
        primal = 0.5 * wTw + loss
        dual = sum_alpha - 0.5 * wTw - 0.5 * sum_diag
        history.append((primal, dual, primal - dual))
        if pg_max - pg_min <= eps and abs(pg_max) <= eps and abs(pg_min) <= eps:
            converged = True
            break
        if h == 0:
            break
        for r in res:
            w += r["dw"]
        workers.commit()
        rounds += 1
    return FitResult(
        w=w, alpha=workers.alpha(), n_iter=rounds, primal=primal, dual=dual, gap=primal - dual,
        max_violation=max(pg_max, -pg_min, 0.0), nSV=nsv, converged=converged,
        solver=L2R_L1LOSS_SVC_DUAL if l1_loss else L2R_L2LOSS_SVC_DUAL,
        extra={"rounds": rounds, "calls": len(history), "pg_max": pg_max, "pg_min": pg_min,
               "bytes_per_round": 8 * workers.w_size * 2 * n_parts, "history": history, "epochs": epochs,
               "sigma": sigma, "parts": n_parts})
