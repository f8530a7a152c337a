"""-s smo: LIBSVM's C-SVC (svm-train -s 0) with a kernel, one-vs-one, on loaded (or memory-mapped) rows.

What svm_train does for C_SVC (LIBSVM 3.x, svm.cpp), step by step, with llsvm's pieces:
- classes: labels in order of first occurrence with the {-1, +1} swap (common.group_classes, LIBSVM's
  svm_group_classes), rows grouped by class in their file order;
- C of class k: C times its -wi weight (common.class_costs, LIBSVM's weighted_C and its warning); with row weights
  (-W, docs/weights.md) row t's C_t is that times its weight W_t (scikit-learn's weighted LIBSVM), read by the
  kernel through row_cost, in every pair and -b 1 fold (a fold's rows keep their weights); nu-SVC's box is W_t and
  its classes' sizes (start, feasibility) sums of weights;
- for every pair i < j of classes: the binary problem over class i's rows (y = +1) then class j's (y = -1), solved
  by the generic SMO (cext/_smo.pyx: WSS 2, shrinking with -h, LIBSVM's stopping rule and rho) over a kernel
  column cache of -m MB (cext/_kernel.pyx), from alpha = 0; the pairs, -b 1's folds and their lines are run in C,
  in batches (cext/_smo.pyx's OneVsOne: a pair of LIBSVM's costs microseconds, less than a Python object);
- the model: a row is a support vector if its alpha is non-zero in any of its pairs; SVs in grouped order;
  sv_coef[j-1] holds the coefficients (alpha_t y_t) of class i's SVs in pair (i, j), sv_coef[i] those of class
  j's; rho of every pair (llsvm.models.svm.SVMModel, LIBSVM's model file).
Output lines as svm-train prints them per pair (`optimization finished, #iter = N`, `nu = ` when Cp = Cn,
`obj = , rho = `, `nSV = , nBSV = `) and `Total nSV = ` at the end, each pair's after LIBSVM's progress: '.' every
min(l, 1000) iterations, '*' at each rebuild of the gradient, and "WARNING: using -h 0 may be faster", live as the
solver runs, as svm-train prints them (issue 48: cext/_smo.pyx writes them into a locked text a thread of
Reporter.live prints a few times a second; progress_text makes the same text of a solve's events).
gamma 0 or not given is 1/num_features (the largest feature index of the training data), as svm-train sets it.
"""
import contextlib
import math
from collections.abc import Sequence

import numpy as np

from .. import memory
from .._ext import _kernel as KK
from .._ext import _smo
from ..errors import CheckParameterError, ParameterError
from ..options import INT_MAX, SMOOptions
from ..params import echo
from ..predict import printf_f
from ..models.svm import KERNEL_TYPES, refuse_nonfinite
from .common import WARN_MAX_ITER, FitResult, class_costs, idle_threads, training_draws
from .ovo import Pairs, run_batched, run_pairs

JSON_FIELDS = ("C", "eps", "kernel_type", "gamma", "degree", "coef0", "cache_size", "shrinking", "probability",
               "nr_class", "labels", "total_sv", "pairs")


def max_iter_default(l):
    """LIBSVM's iteration limit of a problem of l rows: max(10^7, 100 l) (INT_MAX beyond it)."""
    return max(10_000_000, INT_MAX if l > INT_MAX // 100 else 100 * l)


def report_problem(reporter, out, line=""):
    """svm-train's lines of one problem: the Solver's progress, the iteration-limit warning, `optimization
    finished`, the type's own line (C-SVC and epsilon-SVR: `nu = `, nu-SVC: `C = `, nu-SVR: `epsilon = `; "":
    none), `obj, rho`, `nSV, nBSV`. The progress is said already when the solve said it live (out["live"])."""
    if not out.get("live"):
        reporter.info(progress_text(out["events"]))
    if not out["converged"]:
        reporter.info(WARN_MAX_ITER)
    reporter.info(f"\noptimization finished, #iter = {out['n_iter']}\n")
    reporter.info(line)
    reporter.info(f"obj = {printf_f(out['obj'])}, rho = {printf_f(out['rho'])}\n")     # C's %f: 0/0 is "-nan"
    reporter.info(f"nSV = {out['nSV']}, nBSV = {out['nBSV']}\n")


def progress_text(events):
    """What LIBSVM's Solver prints while it runs, from the kernel's events: '.' and '*' as they are, 'W' its
    reconstruct_gradient's warning."""
    if not events:
        return ""
    return events.decode("ascii").replace("W", "\nWARNING: using -h 0 may be faster\n")


def solve(view, rows, y, p, alpha, Cp, Cn, opts, sq, eps, max_iter=None, n_threads=1, cache=None, nu=False,
          doubled=False, reporter=None):
    """LIBSVM's Solver over positions that are rows of the view (a row may come twice: epsilon-SVR's 2l
    variables), labels y (+1/-1), linear term p, feasible start alpha (receives the solution), box Cp / Cn: the
    result dict of _smo.solve, with "cache", the kernel cache back in its first row order. cache: a KernelCache of
    an earlier solve over the same rows and kernel (the grid search), or None. doubled: rows is m rows twice
    (epsilon-SVR's and nu-SVR's 2m variables), and the cache holds the m rows' columns once (KK.DoubledCache, LIBSVM's
    SVR_Q). reporter: says the Solver's progress live (out["live"] True), as svm-train prints it; None: not said
    (out["events"] holds it, for report_problem)."""
    l = rows.size
    params = opts.kernel_params()
    QD = np.empty(l, np.float64)
    KK.kernel_diag(rows, params, sq, QD)
    if cache is None:
        # -m is a cap, as LIBSVM's (its cache allocates as it fills): bounded by the memory available
        once = rows[:l // 2] if doubled else rows
        cache = KK.KernelCache(view, once, params, sq, memory.cache_mb(opts.cache_size), n_threads)
        if doubled:
            cache = KK.DoubledCache(cache)
    # a huge C (-c 1e308) may overflow the certificate's sums (inf or nan, reported as such) or the solve itself
    # (the caller refuses a rho or coefficient that is not finite: check_pair_finite); numpy's RuntimeWarnings
    # never reach stderr
    channel = _smo.Channel() if reporter is not None else None
    with np.errstate(over="ignore", invalid="ignore"), \
            (reporter.live(channel.take) if channel is not None else contextlib.nullcontext()):
        out = _smo.solve(cache, y, p, alpha, Cp, Cn, QD, eps=eps,
                         max_iter=max_iter_default(l) if max_iter is None else max_iter,
                         shrinking=bool(opts.shrinking), nu=nu, live=channel)
    out["live"] = channel is not None and l > 0          # no rows: no solve, the events as LIBSVM's (_smo.solve)
    cache.reset_order()
    out["cache"] = cache
    return out


def kernel_text(opts):
    """The kernel as messages name it: -t, and the parameters it uses (LIBSVM's option letters)."""
    kind = KERNEL_TYPES[opts.kernel_type]
    parts = [f"-t {opts.kernel_type} ({kind})"]
    if opts.kernel_type in (1, 2, 3):
        parts.append(f"-g {float(opts.gamma or 0.0):g}")
    if opts.kernel_type == 1:
        parts.append(f"-d {opts.degree}")
    if opts.kernel_type in (1, 3):
        parts.append(f"-r {float(opts.coef0):g}")
    return " ".join(parts)


def check_kernel_diag(ds, sq, opts):
    """Refuse rows whose kernel value with themselves, K(x, x), is not a finite number (a polynomial kernel of
    large values: (gamma x.x + coef0)^degree overflows, though x.x does not), naming the first such row (1-based)
    and its largest value, before any pair is solved: every kernel column holding it would overflow, and rho and
    the coefficients with it. The squared norms `sq` are finite (the trainer refuses the rest,
    dataset.check_row_norms). Returns the largest K(x, x)."""
    n = ds.n_rows
    QD = np.empty(n, np.float64)
    KK.kernel_diag(np.arange(n, dtype=np.int64), opts.kernel_params(), sq, QD)
    ok = np.isfinite(QD)
    if not ok.all():
        t = int(np.argmin(ok))
        row = ds.take_rows(np.array([t], np.int64))
        big = float(np.abs(row.values).max()) if row.values.size else 0.0
        raise ParameterError(f"row {t + 1}: the kernel value K(x, x) is {float(QD[t])!r}, not a finite number "
                             f"({kernel_text(opts)}; values up to {big:g}): scale the features or change the kernel "
                             "parameters")
    return float(np.abs(QD).max()) if n else 0.0


def check_pair_finite(name, a, b, coef, rho, hint, rows):
    """Refuse the solution of the class pair (a, b) when the solver's arithmetic overflowed (the data's squared
    norms and kernel values are finite: the options made it so), naming the value that is not finite (`rows`: the
    pair's rows, 0-based in the training set, for the coefficient's row)."""
    bad = np.flatnonzero(~np.isfinite(coef))
    if math.isfinite(rho) and not bad.size:
        return
    what = f"rho is {rho!r}" if not math.isfinite(rho) else \
        f"the coefficient of row {int(rows[bad[0]]) + 1} is {float(coef[bad[0]])!r}"
    raise ParameterError(f"-s {name}: the solution of the class pair ({a}, {b}) overflows ({what}, not a finite "
                         f"number): {hint}")


class PairResults(Sequence):
    """The FitResult of every pair of a one-vs-one run, made when first read (a run of 200 classes has 19,900 pairs,
    and a Python object costs more than a pair of LIBSVM's): stats (a row per pair, _smo.PAIR_STATS), the
    coefficients (pair p at pairs.offsets[p]) and the Pairs. Pickled as the list of its results (llsvm.dask drops
    their alpha first)."""

    def __init__(self, stats, coef, pairs):
        self.stats, self.coef, self.pairs = stats, coef, pairs
        self._made = [None] * len(pairs.problems)

    def __len__(self):
        return len(self._made)

    def __getitem__(self, p):
        if isinstance(p, slice):
            return [self[q] for q in range(*p.indices(len(self)))]
        p = range(len(self))[p]
        if self._made[p] is None:
            pairs = self.pairs
            self._made[p] = pair_result(self.stats[p], self.coef[pairs.offsets[p]:pairs.offsets[p + 1]],
                                        pairs.pair_labels(p))
        return self._made[p]

    def __reduce__(self):
        return list, (list(self),)


def pair_result(st, coef, labels):
    """A pair's FitResult from its row of statistics (_smo.PAIR_STATS) and its signed coefficients."""
    s = dict(zip(_smo.PAIR_STATS, st.tolist()))
    return FitResult(w=None, alpha=np.abs(coef), n_iter=int(s["n_iter"]), primal=s["primal"], dual=s["dual"],
                     gap=s["primal"] - s["dual"], max_violation=s["gap"], nSV=int(s["nSV"]),
                     converged=bool(s["converged"]), solver="smo",
                     extra={"labels": labels, "nBSV": int(s["nBSV"]), "obj": s["obj"], "rho": s["rho"]})


# a run's pairs are given to the kernel in calls of about this many seconds: their lines are printed as they come
BATCH_SECONDS = 0.05


class PairsRun:
    """The one-vs-one run of LIBSVM's C-SVC or nu-SVC on a loaded dataset, in parts: the set-up (this object: the
    pairs, class costs, kernel options and squared norms; its text goes to `reporter`), each pair (`pair`), and
    the model (`model`); or all of them (`run`), the pairs in batches of the kernel (cext/_smo.pyx's OneVsOne), as
    `fit` runs them. The cluster (llsvm.dask) and the grid search (which keeps each pair's kernel cache) run the
    pairs one by one."""

    def __init__(self, ds, params, reporter, n_features=None):
        self.ds, self.params = ds, params
        self.threads = idle_threads(params.threads)     # the kernel caches' (--threads, less the busy cores)
        self.opts = (params.options or SMOOptions()).resolved(ds.n_features if n_features is None else n_features)
        self.pairs = Pairs(ds.y)
        labels = self.pairs.labels
        if self.pairs.nr_class == 1:
            reporter.info("WARNING: training data in only one class. See README for details.\n")
        self.wC = class_costs(params.C, params.weights, labels.tolist(), reporter)
        self.view = ds.row_view()
        self.sq = KK.kernel_sq_norms(self.view, self.opts.kernel_params())     # -t 4: the diagonal K(x, x)
        self.top = check_kernel_diag(ds, self.sq, self.opts)
        self.nu = params.nu if params.spec.name == "nu_svc" else None
        if self.nu is not None:
            W = getattr(ds, "weights", None)
            # scikit-learn's weighted LIBSVM: each class's size is the sum of its rows' weights
            check_nu_feasible(self.nu, self.pairs.count if W is None else
                              np.bincount(np.repeat(np.arange(self.pairs.nr_class), self.pairs.count),
                                          weights=W[self.pairs.perm], minlength=self.pairs.nr_class))
        self._engine = None
        self._mb = None

    def engine(self, reporter):
        """The kernel of the pairs (made once), its text on or off as `reporter` is quiet or not."""
        if self._engine is None:
            opts, params, pairs = self.opts, self.params, self.pairs
            # -m is a cap, as LIBSVM's (its cache allocates as it fills): bounded by the memory available
            self._mb = memory.cache_mb(opts.cache_size)
            scratch = KK.KernelCache(self.view, np.empty(0, np.int64), opts.kernel_params(), self.sq, self._mb,
                                     self.threads)
            self._engine = _smo.OneVsOne(
                scratch, pairs.perm, pairs.start, pairs.count, pairs.first, pairs.second, pairs.offsets, self.wC,
                params.eps, -1 if params.max_iter is None else params.max_iter, bool(opts.shrinking), self.nu,
                bool(opts.probability), WARN_MAX_ITER.encode("ascii"), False)
            self._engine.ws = int(getattr(opts, "ws", 0) or 0)     # --ws (nu-SVC's options have none)
        self._engine.quiet = bool(getattr(reporter, "quiet", False))
        return self._engine

    def permutation(self, seeds, p):
        """-b 1's fold permutation of pair p, the next draw of `seeds` (the pairs draw in order); None without -b 1."""
        return seeds.permutation(self.pairs.size(p)) if self.opts.probability else None

    def run(self, seeds, reporter):
        """Every pair, in order (-b 1: their fold permutations drawn from `seeds` in turn), then the model."""
        pairs = self.pairs
        n, off = len(pairs.problems), pairs.offsets
        perms = seeds.permutations(np.diff(off)) if self.opts.probability else None
        engine = self.engine(reporter) if n else None           # no pair: one class, or none (no rows)
        coef = np.empty(int(off[-1]), np.float64)
        stats = np.empty((n, len(_smo.PAIR_STATS)), np.float64)
        p = 0
        with reporter.live(engine.take_text if n else str) as say:     # the dots as the pairs are solved
            while p < n:
                q, status = engine.run(p, n, BATCH_SECONDS, coef[off[p]:], stats[p:],
                                       None if perms is None else perms[off[p]:])
                say()
                if status != _smo.PAIRS_OK:
                    self._refuse(q, status, coef[off[q]:off[q + 1]], stats[q])
                p = q
        col = {name: k for k, name in enumerate(_smo.PAIR_STATS)}
        prob = self.opts.probability
        return self._finish(coef, stats[:, col["rho"]], stats[:, col["probA"]] if prob else None,
                            stats[:, col["probB"]] if prob else None, PairResults(stats, coef, pairs), reporter)

    def pair(self, p, perm, reporter, cache=None):
        """Pair p (its -b 1 fold permutation `perm`): (coef over its rows, FitResult, (probA, probB) or None, the
        kernel cache it used: `cache`, one of an earlier solve over its rows and kernel (the grid search), or a new
        one)."""
        rows = self.pairs.problem(p)[2]
        if cache is None:
            self.engine(reporter)
            cache = KK.KernelCache(self.view, rows, self.opts.kernel_params(), self.sq, self._mb, self.threads)
        engine = self.engine(reporter)
        coef = np.empty(rows.size, np.float64)
        stats = np.empty((1, len(_smo.PAIR_STATS)), np.float64)
        with reporter.live(engine.take_text):
            _, status = engine.run(p, p + 1, math.inf, coef, stats, perm, cache)
        if status != _smo.PAIRS_OK:
            self._refuse(p, status, coef, stats[0])
        st = dict(zip(_smo.PAIR_STATS, stats[0].tolist()))
        return (coef, pair_result(stats[0], coef, self.pairs.pair_labels(p)),
                (st["probA"], st["probB"]) if self.opts.probability else None, cache)

    def _refuse(self, p, status, coef, st):
        """Refuse pair p whose solution (status PAIR_NOT_FINITE) or one of whose -b 1 folds (FOLD_NOT_FINITE)
        overflowed: the fold's model as SVMModel refuses it, the pair's as check_pair_finite does."""
        if status == _smo.FOLD_NOT_FINITE:
            engine = self._engine
            if engine.fail_sv < 0:
                refuse_nonfinite(np.array([engine.fail_rho]), "rho")
            bad = np.zeros((1, engine.fail_sv + 1))
            bad[0, -1] = engine.fail_coef
            refuse_nonfinite(bad, "sv_coef")
        i, j, rows, _ = self.pairs.problem(p)
        wC, labels, s = self.wC, self.pairs.labels, dict(zip(_smo.PAIR_STATS, st.tolist()))
        hint = (f"C {float(wC[i]):g} and {float(wC[j]):g} with kernel values up to {self.top:g}; lower -c (or -wi) "
                "or scale the features" if self.nu is None else
                f"r = {s['r']:g}, C = 1/r (kernel values up to {self.top:g}); change the kernel (-t -g -r) or -n")
        check_pair_finite(self.params.spec.name, int(labels[i]), int(labels[j]), coef, s["rho"], hint, rows)
        raise AssertionError(f"pair {p}: status {status} without a value that is not finite")

    def model(self, coefs, results, probs, reporter):
        """The SVMModel of the pairs' solutions (meta: results per pair, params, options, sv_indices)."""
        prob = self.opts.probability
        return self._finish(coefs, [r.extra["rho"] for r in results], [a for a, _ in probs] if prob else None,
                            [b for _, b in probs] if prob else None, results, reporter)

    def _finish(self, coefs, rho, probA, probB, results, reporter):
        opts = self.opts
        model, sv_rows = self.pairs.model(self.ds, coefs, rho, opts.kernel_type, opts.degree, opts.gamma, opts.coef0,
                                          probA=probA, probB=probB, svm_type="c_svc" if self.nu is None else "nu_svc")
        reporter.info(f"Total nSV = {model.total_sv}\n")
        model.meta = {"results": results, "params": self.params, "options": opts, "sv_indices": sv_rows + 1}
        return model


def fit(ds, params, reporter, n_features=None, context=None):
    """Train LIBSVM's C-SVC on a loaded dataset; returns an SVMModel (meta: results per pair, params).
    n_features: the num_features that sets the default gamma (cross-validation passes the whole set's).
    context: a dict the grid search keeps across the cells of one kernel and fold: each pair's kernel cache is
    kept there and reused (its rows back in their first order), so a cell after the first starts with the columns
    its predecessors computed; the model does not depend on it."""
    run = PairsRun(ds, params, reporter, n_features)
    if context is None:
        return run_batched(run, training_draws(params), reporter)
    return run_pairs(run, training_draws(params), reporter, context)


def check_nu_feasible(nu, count):
    """LIBSVM's svm_check_parameter for nu-SVC: every pair of classes (counts n1, n2: rows, or with row weights the
    sums of the classes' weights, as scikit-learn's weighted LIBSVM) needs nu (n1 + n2) / 2 <= min(n1, n2)."""
    count = np.asarray(count)
    for a in range(count.size - 1):
        rest = count[a + 1:]
        if (nu * (count[a] + rest) / 2 > np.minimum(count[a], rest)).any():
            raise CheckParameterError("specified nu is infeasible")


def metrics(model, params, ds):
    """--json of -s smo: the certificate summed over the pairs (max_violation: the largest m(a) - M(a)), and one
    record per pair."""
    res = model.meta["results"]
    opts = model.meta["options"]
    return {
        "solver": "smo", "n_rows": ds.n_rows, "n_features": ds.n_features, "nnz": ds.nnz,
        "n_iter": sum(r.n_iter for r in res), "primal": sum(r.primal for r in res),
        "dual": sum(r.dual for r in res), "gap": sum(r.gap for r in res),
        "max_violation": max((r.max_violation for r in res), default=0.0), "nSV": int(model.total_sv),
        "converged": all(r.converged for r in res),
        **echo(params, "C", "eps", "kernel_type", "gamma", "degree", "coef0", "cache_size", "shrinking", "probability",
               options=opts),
        "kernel_type": KERNEL_TYPES[opts.kernel_type],
        "nr_class": int(model.nr_class), "labels": [int(v) for v in model.label], "total_sv": int(model.total_sv),
        "pairs": [{"labels": list(r.extra["labels"]), "n_iter": r.n_iter, "obj": r.extra["obj"],
                   "rho": r.extra["rho"], "primal": r.primal, "dual": r.dual, "gap": r.gap,
                   "max_violation": r.max_violation, "nSV": r.nSV, "nBSV": r.extra["nBSV"],
                   "converged": r.converged} for r in res],
    }
