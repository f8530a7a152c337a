"""-s olsvm | olsvm-rhl | norma | pegaz | pegasos: the online kernel SVMs of Kecman and Melki ("Fast online algorithms
for support vector machines", IEEE SoutheastCon 2016; docs/solvers.md, "Online lists: the printed errors and the resolutions implemented") and Pegasos
(Shalev-Shwartz, Singer, Srebro, ICML 2007), on loaded (or memory-mapped) rows, one-vs-one as -s smo.

    -s olsvm      List 3b: min R_hl = sum hinge, a kernel perceptron with margin 1, eta_t = C sqrt(2/t), bias
                  b += eta y_i on each violation (--no-bias-update: none); the solver of the paper's experiments
    -s olsvm-rhl  List 3a: min R_rhl = C sum hinge + 1/2 |o|^2, no bias
    -s norma      List 1 (NORMA): faithful (eta_t = C sqrt(2/t), decay 1 - sqrt(2/t), which wipes the model at t = 2:
                  spec finding 7), or Kivinen's with --eta0 e and/or --lambda l: eta_t = e / sqrt(t), decay
                  1 - eta_t l, e = 1 and l = 1/(C l_rows) by default
    -s pegaz      List 2: kernel Pegasos without projection, eta_t = C sqrt(2/t)
    -s pegasos    Pegasos: lambda = 1/(C l) (--lambda), eta_t = 1/(lambda t), mini-batches of -k rows, optional
                  --projection onto the ball of radius 1/sqrt(lambda)

Every binary problem: the rows shuffled once (the seeded RNG), --epochs passes (default 1) in that order, the last
iterate (or --average: the mean of the iterates), on the output cache o = K alpha (+ b) with one kernel column per
change (cext/_online.pyx); --original computes each output from the support instead (the lists as printed, for the
paper's timing figures); -t 0 runs on w directly. The kernel: LIBSVM's -t -g -d -r (default RBF, gamma
1/num_features), or --sigma s for exp(-|x-z|^2 / (2 s^2)). -m MB: the kernel columns kept across epochs (and across
the C values of a --grid). --max-iter N: at most N steps per problem (warns when it cuts the run short).

The model is LIBSVM's c_svc file (sv_coef = alpha, rho = -b), so svm-predict reads it. No certificate beyond the
primal value of the list's objective: a fixed number of stochastic steps has no dual iterate (dual, gap and
max_violation are null in --json).
"""
import math
import sys

import numpy as np

from .. import memory
from .._ext import _kernel as KK
from .._ext import _online
from .._ext._rowops import row_sq_norms, take_rows
from ..dataset import CSRDataset
from ..errors import ParameterError
from ..options import OnlineOptions
from ..params import echo
from ..models.svm import KERNEL_TYPES
from .common import WARN_MAX_ITER, FitResult
from .ovo import Pairs, run_pairs
from .smo import check_kernel_diag, check_pair_finite

# the -s name of each solver and the list cext/_online.run runs
KINDS = {"olsvm": "3b", "olsvm-rhl": "3a", "norma": "norma", "pegaz": "pegaz", "pegasos": "pegasos"}
# what to change when a run's steps overflow
OVERFLOW_HINT = {"3b": "lower -c", "3a": "lower -c", "pegaz": "lower -c", "norma": "lower --eta0 (or -c)",
                 "pegasos": "lower -c or raise --lambda"}
OBJECTIVE = {"3b": "R_hl", "3a": "R_rhl", "norma": "R_rhl", "pegaz": "R_rhl", "pegasos": "pegasos"}
JSON_FIELDS = ("C", "kernel_type", "gamma", "degree", "coef0", "epochs", "average", "original", "nr_class", "labels",
               "total_sv", "pairs")
SV_BLOCK = 256          # support vectors per kernel block when the outputs are recomputed (--original)
DEFAULT_ETA0 = 1.0      # -s norma with --lambda alone


def _outputs(view, sq, alpha, b, kparams):
    """o = K alpha + b over the view's rows (the --original runs keep no output cache), SV_BLOCK columns at a time."""
    o = np.full(view.n_rows, b, np.float64)
    sv = np.flatnonzero(alpha).astype(np.int64)
    if sv.size:
        for s in range(0, sv.size, SV_BLOCK):
            part = sv[s:s + SV_BLOCK]
            indptr, indices, values = take_rows(view, part)
            B = CSRDataset(np.zeros(part.size), indptr, indices, values, view.n_features, check=False).row_view()
            block = np.empty((view.n_rows, part.size), np.float64)
            KK.kernel_block(view, B, kparams, sq, np.ascontiguousarray(sq[part]), block)
            o += block @ alpha[part]
    return o


def _objective(kind, out, y, C, lam, o):
    """The primal value of the list's objective at the returned model."""
    alpha, b = out["alpha"], out["b"]
    hinge = float(np.maximum(0.0, 1.0 - y * o).sum())
    if kind == "3b":
        return hinge
    aKa = float(alpha @ (o - b))
    if kind == "pegasos":
        return 0.5 * lam * aKa + hinge / max(y.size, 1)
    return C * hinge + 0.5 * aKa


def _check_pegasos_lambda(lam, given, C, l):
    """Pegasos' first step is 1/lambda: refuse a lambda for which it is not a finite number (a --lambda below
    1/DBL_MAX, or the default 1/(C l) of a -c so large that C l overflows, or so small that lambda does)."""
    if lam > 0 and math.isfinite(lam) and math.isfinite(1.0 / lam):
        return
    if given:
        raise ParameterError(f"--lambda {lam!r}: -s pegasos's first step 1/lambda overflows: lambda must be at least "
                             f"{1.0 / sys.float_info.max:.3g}")
    raise ParameterError(f"-c {C!r}: -s pegasos's lambda = 1/(C l) on {l} rows is {lam!r}, so its first step "
                         "1/lambda is not a finite number: give another -c, or --lambda")


def check_epoch_counters(epochs, n_pairs):
    """The violation counts kept per epoch (the kernel's two counters of the running pair, then each pair's list
    for --json), checked against the memory before any pair runs: --epochs 300000000 would take gigabytes."""
    need = epochs * (16 + 40 * max(n_pairs, 1))
    memory.check(need, f"--epochs {epochs} keeps the violation counts of every epoch for {max(n_pairs, 1)} class "
                       f"pair(s): {memory.format_size(need)}", hint="give fewer --epochs")


def solve_pair(view, sq, y, index, kind, C, opts, order, max_iter=None, store=None):
    """One binary problem: the pair's rows are view rows `index` (None: all of them, in order) with labels y (+1/-1,
    in the pair's order), visited in `order`, a permutation of the pair's positions (one seeded shuffle,
    OnlineRun.permutation). Returns (alpha (signed) in the pair's order, the run's dict with "primal", "nSV", "lam",
    "converged")."""
    l = y.size
    lam = opts.lam
    # NORMA is Kivinen's when --eta0 or --lambda is given (eta0 1, lambda 1/(C l) by default), else the faithful list
    kivinen = kind == "norma" and (opts.eta0 is not None or opts.lam is not None)
    eta0 = (opts.eta0 if opts.eta0 is not None else DEFAULT_ETA0) if kivinen else None
    if (kind == "pegasos" or kivinen) and lam is None:
        lam = 1.0 / (C * l) if l else 1.0
    if kind == "pegasos":
        _check_pegasos_lambda(lam, opts.lam is not None, C, l)
    batch = min(opts.batch, max(l, 1))        # a mini-batch larger than the rows is all of them (as the kernel has it)
    if index is not None:                      # the pair is part of the view's rows: visit them through it
        y_view = np.zeros(view.n_rows, np.int8)
        y_view[index] = y
        order = index[order]
    else:
        y_view = y
    linear = opts.kernel_type == 0 and not opts.original
    if linear:          # the lists on w: one weight per column up to the rows' largest index (and its mean)
        memory.check_weights(KK.index_width(view), 2 if opts.average else 1)
    steps = opts.epochs * (l if kind != "pegasos" else -(-l // batch))
    cut = max_iter if max_iter is not None and max_iter < steps else None
    kparams = opts.kernel_params()
    out = _online.run(view, order, y_view, kparams, sq, kind=kind, C=C, epochs=opts.epochs,
                      bias=(kind == "3b" and opts.bias_update), average=opts.average, original=opts.original,
                      linear=linear, eta0=eta0, lam=lam if kind == "pegasos" or kivinen else None,
                      k=batch, projection=opts.projection, store=store, max_steps=-1 if cut is None else cut)
    if not (np.isfinite(out["alpha"]).all() and math.isfinite(out["b"])):
        # the steps overflowed: no objective from non-finite numbers (the caller refuses it, smo.check_pair_finite)
        alpha = out["alpha"] if index is None else out["alpha"][index]
        out.update(alpha=alpha, primal=math.nan, nSV=int(np.count_nonzero(alpha)), lam=lam, converged=False)
        return alpha, out
    # finite coefficients whose outputs or objective overflow (huge steps): the primal is reported as inf or nan,
    # without numpy's RuntimeWarnings on stderr
    with np.errstate(over="ignore", invalid="ignore"):
        o = out["o"] if out["o"] is not None else _outputs(view, sq, out["alpha"], out["b"], kparams)
        if index is not None:
            out["alpha"] = out["alpha"][index]
            o = o[index]
        alpha = out["alpha"]
        primal = _objective(kind, out, y.astype(np.float64), C, lam, o)
    out.update(primal=primal, nSV=int(np.count_nonzero(alpha)), lam=lam, converged=cut is None)
    return alpha, out


class OnlineRun:
    """The one-vs-one run of an online list on a loaded dataset, in parts, as smo.PairsRun (ovo.run_pairs runs them
    in order; the cluster, llsvm.dask, runs the pairs as tasks): the set-up (this object: the pairs, the options,
    the kernel's check; its text goes to `reporter`), each pair's draw (`permutation`: the one shuffle of its rows)
    and its solution (`pair`), and the model (`model`). n_features: the num_features that sets the default gamma
    (cross-validation passes the whole set's); keep: the pairs' rows and column stores are kept for a later run
    (a grid search's next C value), so a store is made even for one epoch."""

    def __init__(self, ds, params, reporter, n_features=None, keep=False):
        self.ds, self.params, self.keep = ds, params, keep
        self.kind = KINDS[params.spec.name]
        self.opts = (params.options or OnlineOptions()).resolved(ds.n_features if n_features is None else n_features)
        self.pairs = Pairs(ds.y)
        if self.pairs.nr_class == 1:
            reporter.info("WARNING: training data in only one class. See README for details.\n")
        self.top = check_kernel_diag(ds, row_sq_norms(ds.row_view()), self.opts)
        self.total = sum(rows.size for _, _, rows, _ in self.pairs.problems) or 1
        self.columns = self.opts.kernel_type != 0 and not self.opts.original    # whether it uses kernel columns
        check_epoch_counters(self.opts.epochs, len(self.pairs.problems))
        self.store_mb = None

    def permutation(self, seeds, p):
        """Pair p's order of visits: the next draw of `seeds` (the pairs draw in order, one shuffle each)."""
        return seeds.permutation(self.pairs.problems[p][3].size)

    def pair(self, p, order, reporter, held=None):
        """Pair p, its rows visited in `order`: (signed coefficients over its rows, FitResult, None (no -b 1), what
        it held: its rows, view, norms and column store, which a grid search's next C value reuses as `held`)."""
        ds, params, opts, kind, name = self.ds, self.params, self.opts, self.kind, self.params.spec.name
        labels = self.pairs.labels
        n_pairs = len(self.pairs.problems)
        i, j, rows, y = self.pairs.problems[p]
        if held is None:
            if n_pairs == 1:
                # two classes: the pair is every row, read in place through the dataset's view
                sub, index = ds, rows
            else:
                sub, index = ds.take_rows(rows), None
            view = sub.row_view()
            sq = row_sq_norms(view)
            # the column store: -m MB (shared among the pairs in proportion to their rows), when a column can be
            # needed again: a later epoch, or a later run of the grid search (one epoch visits each row once); -m is
            # a cap, as LIBSVM's, bounded by the memory available when the first store is made
            store = None
            if self.columns and (self.keep or opts.epochs > 1):
                if self.store_mb is None:
                    self.store_mb = memory.cache_mb(opts.cache_size)
                share = self.store_mb * (rows.size / self.total if n_pairs > 1 else 1.0)
                store = _online.ColumnStore(view, opts.kernel_params(), sq, share)
            held = (sub, view, sq, index, store)
        sub, view, sq, index, store = held
        coef, out = solve_pair(view, sq, y, index, kind, params.C, opts, order, params.max_iter, store)
        rho = -out["b"]
        check_pair_finite(name, int(labels[i]), int(labels[j]), coef, rho,
                          f"the steps are too large for kernel values up to {self.top:g}: {OVERFLOW_HINT[kind]}",
                          rows)
        if not out["converged"]:
            reporter.info(WARN_MAX_ITER)
        reporter.info(f"\noptimization finished, #iter = {out['t']}\n")
        reporter.info(f"violations = {int(np.sum(out['viol']))}\n")
        reporter.info(f"obj = {out['primal']:f}, rho = {rho:f}\n")
        reporter.info(f"nSV = {out['nSV']}\n")
        result = FitResult(w=None, alpha=np.abs(coef), n_iter=out["t"], primal=out["primal"], dual=None, gap=None,
                           max_violation=None, nSV=out["nSV"], converged=out["converged"], solver=name,
                           extra={"labels": (int(labels[i]), int(labels[j])), "rho": rho,
                                  "viol": [int(v) for v in out["viol"]], "seconds": out["seconds"],
                                  "objective": OBJECTIVE[kind], "lam": out["lam"],
                                  "store_hits": out.get("store_hits", 0),
                                  "store_misses": out.get("store_misses", 0)})
        return coef, result, None, held

    def model(self, coefs, results, probs, reporter):
        """The SVMModel of the pairs' solutions (meta: results per pair, params, options, sv_indices)."""
        opts = self.opts
        model, sv_rows = self.pairs.model(self.ds, coefs, [r.extra["rho"] for r in results], opts.kernel_type,
                                          opts.degree, opts.gamma, opts.coef0)
        reporter.info(f"Total nSV = {model.total_sv}\n")
        model.meta = {"results": results, "params": self.params, "options": opts, "sv_indices": sv_rows + 1}
        return model


def fit(ds, params, reporter, n_features=None, context=None):
    """Train one of the online lists (params.solver: its -s name) on a loaded dataset; returns an SVMModel (meta:
    results per pair). n_features: the num_features that sets the default gamma (cross-validation passes the
    whole set's). context: a dict the grid search keeps across the C values of one kernel and fold: each pair's
    rows and its column store (-m MB of kernel columns) are kept there and reused; the model does not depend on
    it."""
    return run_pairs(OnlineRun(ds, params, reporter, n_features, keep=context is not None), params.seed, reporter,
                     context)


def metrics(model, params, ds):
    """--json of the online solvers: the primal value of each pair's objective, summed (no dual: null)."""
    res = model.meta["results"]
    opts = model.meta["options"]
    return {
        "solver": params.spec.name, "n_rows": ds.n_rows, "n_features": ds.n_features, "nnz": ds.nnz,
        "n_iter": sum(r.n_iter for r in res), "primal": sum(r.primal for r in res), "dual": None, "gap": None,
        "max_violation": None, "nSV": int(model.total_sv), "converged": all(r.converged for r in res),
        **echo(params, "C", "kernel_type", "gamma", "degree", "coef0", "epochs", "average", "original", options=opts),
        "kernel_type": KERNEL_TYPES[opts.kernel_type],
        "nr_class": int(model.nr_class), "labels": [int(v) for v in model.label], "total_sv": int(model.total_sv),
        "pairs": [{"labels": list(r.extra["labels"]), "n_iter": r.n_iter, "objective": r.extra["objective"],
                   "primal": r.primal, "rho": r.extra["rho"], "violations": r.extra["viol"],
                   "loop_seconds": r.extra["seconds"], "lambda": r.extra["lam"], "nSV": r.nSV,
                   "converged": r.converged} for r in res],
    }
