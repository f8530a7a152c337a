"""-s smo: LIBSVM's C-SVC (svm-train -s 0) with a kernel, one-vs-one, on loaded (or memory-mapped) rows.

What svm_train does for C_SVC (LIBSVM 3.x, svm.cpp), step by step, with llsvm's pieces:
- classes: labels in order of first occurrence with the {-1, +1} swap (common.group_classes, LIBSVM's
  svm_group_classes), rows grouped by class in their file order;
- C of class k: C times its -wi weight (common.class_costs, LIBSVM's weighted_C and its warning);
- for every pair i < j of classes: the binary problem over class i's rows (y = +1) then class j's (y = -1), solved
  by the generic SMO (cext/_smo.pyx: WSS 2, shrinking with -h, LIBSVM's stopping rule and rho) over a kernel
  column cache of -m MB (cext/_kernel.pyx), from alpha = 0;
- the model: a row is a support vector if its alpha is non-zero in any of its pairs; SVs in grouped order;
  sv_coef[j-1] holds the coefficients (alpha_t y_t) of class i's SVs in pair (i, j), sv_coef[i] those of class
  j's; rho of every pair (llsvm.models.svm.SVMModel, LIBSVM's model file).
Output lines as svm-train prints them per pair (`optimization finished, #iter = N`, `nu = ` when Cp = Cn,
`obj = , rho = `, `nSV = , nBSV = `) and `Total nSV = ` at the end, each pair's after LIBSVM's progress: '.' every
min(l, 1000) iterations, '*' at each rebuild of the gradient, and "WARNING: using -h 0 may be faster" (cext/_smo.pyx
records them, progress_text prints them).
gamma 0 or not given is 1/num_features (the largest feature index of the training data), as svm-train sets it.
"""
import math

import numpy as np

from .. import memory
from .._ext import _kernel as KK
from .._ext import _kpredict
from .._ext import _smo
from .._ext._rowops import row_sq_norms
from ..errors import ParameterError
from ..options import INT_MAX, SMOOptions
from ..params import echo
from ..models.svm import KERNEL_TYPES, SVMModel
from .common import WARN_MAX_ITER, FitResult, class_costs
from .ovo import Pairs, run_pairs

JSON_FIELDS = ("C", "eps", "kernel_type", "gamma", "degree", "coef0", "cache_size", "shrinking", "probability",
               "nr_class", "labels", "total_sv", "pairs")


def max_iter_default(l):
    """LIBSVM's iteration limit of a problem of l rows: max(10^7, 100 l) (INT_MAX beyond it)."""
    return max(10_000_000, INT_MAX if l > INT_MAX // 100 else 100 * l)


def report_problem(reporter, out, line=""):
    """svm-train's lines of one problem: the Solver's progress, the iteration-limit warning, `optimization
    finished`, the type's own line (C-SVC and epsilon-SVR: `nu = `, nu-SVC: `C = `, nu-SVR: `epsilon = `; "":
    none), `obj, rho`, `nSV, nBSV`."""
    reporter.info(progress_text(out["events"]))
    if not out["converged"]:
        reporter.info(WARN_MAX_ITER)
    reporter.info(f"\noptimization finished, #iter = {out['n_iter']}\n")
    reporter.info(line)
    reporter.info(f"obj = {out['obj']:f}, rho = {out['rho']:f}\n")
    reporter.info(f"nSV = {out['nSV']}, nBSV = {out['nBSV']}\n")


def _report_pair(reporter, out, Cp, Cn, l, nu=None):
    """A pair's lines: LIBSVM's solve_c_svc prints nu when both classes have the same C, solve_nu_svc (nu not
    None) C = 1/r."""
    if nu is not None:
        report_problem(reporter, out, f"C = {out['C']:f}\n")
        return
    # Python floats: C l may overflow to inf (nu 0) without numpy's RuntimeWarning on stderr
    report_problem(reporter, out, f"nu = {float(out['sum_alpha']) / (float(Cp) * l):f}\n" if Cp == Cn and Cp > 0
                   else "")


def svc_probability(ds, view, rows, y, Cp, Cn, opts, sq, params, perm, reporter, nr_fold=5, nu=None):
    """(probA, probB) of one pair, LIBSVM's svm_binary_svc_probability: the pair's rows (labels y) cut into 5
    folds in the order `perm` (LIBSVM draws it with rand(); here the seeded RNG), each fold's decision values from
    the pair's SVM type trained on the other four (its rows +1 first, as svm_train groups them; a fold whose
    training rows hold one class gets +1 or -1): a C-SVC of C = 1 and weights Cp and Cn, or with `nu` a nu-SVC of
    that nu (LIBSVM's sub-parameters are the run's with C and weights changed, which nu-SVC does not read); then
    Platt's sigmoid fitted to them (sigmoid_train). Each fold's training prints svm-train's lines, as LIBSVM's
    nested svm_train does."""
    l = rows.size
    dec = np.zeros(l, np.float64)
    for k in range(nr_fold):
        begin, end = k * l // nr_fold, (k + 1) * l // nr_fold
        train = np.concatenate([perm[:begin], perm[end:]])
        test = perm[begin:end]
        yt = y[train]
        n_pos, n_neg = int((yt > 0).sum()), int((yt < 0).sum())
        if n_pos == 0 or n_neg == 0:
            dec[test] = 0.0 if n_pos == n_neg else (1.0 if n_pos else -1.0)
            continue
        grouped = np.concatenate([train[yt > 0], train[yt < 0]])
        coef, out = solve_pair(view, rows[grouped], y[grouped], Cp, Cn, opts, sq, params.eps, params.max_iter,
                               params.threads, nu=nu)
        out.pop("cache")
        _report_pair(reporter, out, Cp, Cn, grouped.size, nu)
        sv = np.flatnonzero(coef)
        reporter.info(f"Total nSV = {sv.size}\n")
        n_sv_pos = int((y[grouped][sv] > 0).sum())
        sub = SVMModel("c_svc" if nu is None else "nu_svc", KERNEL_TYPES[opts.kernel_type], opts.degree, opts.gamma,
                       opts.coef0, np.array([out["rho"]]), coef[sv].reshape(1, -1), ds.take_rows(rows[grouped][sv]),
                       label=np.array([1, -1]), nSV=np.array([n_sv_pos, sv.size - n_sv_pos]))
        dec[test] = sub.decision_function(ds.take_rows(rows[test]))
    return sigmoid_train(dec, y, reporter)


def sigmoid_train(dec, y, reporter):
    """Platt's sigmoid P(y = 1 | f) = 1 / (1 + exp(A f + B)) fitted to decision values f with labels y, as LIBSVM's
    sigmoid_train (Lin, Lin, Weng, "A note on Platt's probabilistic outputs for support vector machines", 2007;
    cext/_kpredict.pyx, LIBSVM's arithmetic): (A, B), with LIBSVM's message when the line search fails or the 100
    iterations run out."""
    A, B, status = _kpredict.sigmoid_train(np.ascontiguousarray(dec, np.float64), np.ascontiguousarray(y, np.float64))
    if status == 1:
        reporter.info("Line search fails in two-class probability estimates\n")
    elif status == 2:
        reporter.info("Reaching maximal iterations in two-class probability estimates\n")
    return A, B


def progress_text(events):
    """What LIBSVM's Solver prints while it runs, from the kernel's events: '.' and '*' as they are, 'W' its
    reconstruct_gradient's warning."""
    if not events:
        return ""
    return events.decode("ascii").replace("W", "\nWARNING: using -h 0 may be faster\n")


def solve(view, rows, y, p, alpha, Cp, Cn, opts, sq, eps, max_iter=None, n_threads=1, cache=None, nu=False):
    """LIBSVM's Solver over positions that are rows of the view (a row may come twice: epsilon-SVR's 2l
    variables), labels y (+1/-1), linear term p, feasible start alpha (receives the solution), box Cp / Cn: the
    result dict of _smo.solve, with "cache", the kernel cache back in its first row order. cache: a KernelCache of
    an earlier solve over the same rows and kernel (the grid search), or None."""
    l = rows.size
    params = opts.kernel_params()
    QD = np.empty(l, np.float64)
    KK.kernel_diag(rows, params, sq, QD)
    if cache is None:
        # -m is a cap, as LIBSVM's (its cache allocates as it fills): bounded by the memory available
        cache = KK.KernelCache(view, rows, params, sq, memory.cache_mb(opts.cache_size), n_threads)
    # a huge C (-c 1e308) may overflow the certificate's sums (inf or nan, reported as such) or the solve itself
    # (the caller refuses a rho or coefficient that is not finite: check_pair_finite); numpy's RuntimeWarnings
    # never reach stderr
    with np.errstate(over="ignore", invalid="ignore"):
        out = _smo.solve(cache, y, p, alpha, Cp, Cn, QD, eps=eps,
                         max_iter=max_iter_default(l) if max_iter is None else max_iter,
                         shrinking=bool(opts.shrinking), nu=nu)
    cache.reset_order()
    out["cache"] = cache
    return out


def solve_pair(view, rows, y, Cp, Cn, opts, sq, eps, max_iter=None, n_threads=1, cache=None, nu=None):
    """One binary C-SVC problem over `rows` of the view (labels y, +1/-1): (alpha (signed: alpha_t y_t), result
    dict of _smo.solve with the certificate, and "cache": the kernel cache, back in its first row order).
    cache: a KernelCache of an earlier solve over the same rows and kernel (the grid search), or None.
    nu: LIBSVM's nu-SVC instead (solve_nu_svc: Solver_NU from its start, box 1, then every alpha, rho and the
    objective scaled by r, the C-SVC of C = 1/r it solves; out["C"] = 1/r); Cp and Cn are then unused."""
    l = rows.size
    alpha = np.zeros(l, np.float64)
    if nu is None:
        out = solve(view, rows, y, -np.ones(l), alpha, Cp, Cn, opts, sq, eps, max_iter, n_threads, cache)
        G = out["G"]
    else:
        _smo.nu_start(y, nu * l / 2, 1.0, alpha)  # LIBSVM's start: each class's first rows at 1, then the rest
        out = solve(view, rows, y, np.zeros(l), alpha, 1.0, 1.0, opts, sq, eps, max_iter, n_threads, cache, nu=True)
        r = np.float64(out["r"])                 # r = 0 (a degenerate kernel): inf and nan as LIBSVM's, which
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):   # the caller then refuses
            Cp = Cn = float(1.0 / r)
            alpha *= 1.0 / r                     # LIBSVM: alpha[i] *= y[i] / r
            out.update(rho=float(out["rho"] / r), obj=float(out["obj"] / (r * r)), C=Cp)
            G = out["G"] / r - 1.0               # the C-SVC's gradient Q a - e at the scaled alpha
    with np.errstate(over="ignore", invalid="ignore"):
        C = np.where(y > 0, Cp, Cn)
        # G_t + 1 = y_t sum_s alpha_s y_s K_ts, so y_t f(x_t) = G_t + 1 - y_t rho and a'Qa = a'(G + 1)
        # element-wise sums, not BLAS: OpenBLAS's threads spin after a call and would take the core the kernel
        # columns' OpenMP threads need
        aQa = float((alpha * (G + 1.0)).sum())
        hinge = np.maximum(0.0, -G + y * out["rho"])
        primal = 0.5 * aQa + float((C * hinge).sum())
        sum_alpha = float(alpha.sum())
        dual = sum_alpha - 0.5 * aQa
    out.update(primal=primal, dual=dual, nSV=int(np.count_nonzero(alpha)),
               nBSV=int(np.count_nonzero((alpha != 0) & (np.abs(alpha) >= C))), sum_alpha=sum_alpha)
    return alpha * y, out


def kernel_text(opts):
    """The kernel as messages name it: -t, and the parameters it uses (LIBSVM's option letters)."""
    kind = KERNEL_TYPES[opts.kernel_type]
    parts = [f"-t {opts.kernel_type} ({kind})"]
    if opts.kernel_type != 0:
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


class PairsRun:
    """The one-vs-one run of LIBSVM's C-SVC or nu-SVC on a loaded dataset, in parts: the set-up (this object: the
    pairs, class costs, kernel options and squared norms; its text goes to `reporter`), each pair (`pair`), and
    the model (`model`). `fit` runs them in order; the cluster (llsvm.dask) runs the pairs as tasks."""

    def __init__(self, ds, params, reporter, n_features=None):
        self.ds, self.params = ds, params
        self.opts = (params.options or SMOOptions()).resolved(ds.n_features if n_features is None else n_features)
        self.pairs = Pairs(ds.y)
        labels = self.pairs.labels
        if self.pairs.nr_class == 1:
            reporter.info("WARNING: training data in only one class. See README for details.\n")
        self.wC = class_costs(params.C, params.weights, labels.tolist(), reporter)
        self.view = ds.row_view()
        self.sq = row_sq_norms(self.view)
        self.top = check_kernel_diag(ds, self.sq, self.opts)
        self.nu = params.nu if params.spec.name == "nu_svc" else None
        if self.nu is not None:
            check_nu_feasible(self.nu, self.pairs.count)

    def permutation(self, seeds, p):
        """-b 1's fold permutation of pair p, the next draw of `seeds` (the pairs draw in order); None without -b 1."""
        return seeds.permutation(self.pairs.problems[p][2].size) if self.opts.probability else None

    def pair(self, p, perm, reporter, cache=None):
        """Pair p (its -b 1 fold permutation `perm`): (coef over its rows, FitResult, (probA, probB) or None, the
        kernel cache it used)."""
        ds, params, opts, wC, labels = self.ds, self.params, self.opts, self.wC, self.pairs.labels
        i, j, rows, y = self.pairs.problems[p]
        prob = None
        if opts.probability:
            # LIBSVM's svm_train: a pair's Platt scaling comes before its own solve
            prob = svc_probability(ds, self.view, rows, y, wC[i], wC[j], opts, self.sq, params, perm, reporter,
                                   nu=self.nu)
        coef, out = solve_pair(self.view, rows, y, wC[i], wC[j], opts, self.sq, params.eps, params.max_iter,
                               params.threads, cache=cache, nu=self.nu)
        used = out.pop("cache")
        hint = (f"C {float(wC[i]):g} and {float(wC[j]):g} with kernel values up to {self.top:g}; lower -c (or -wi) "
                "or scale the features" if self.nu is None else
                f"r = {out['r']:g}, C = 1/r (kernel values up to {self.top:g}); change the kernel (-t -g -r) or -n")
        check_pair_finite(params.spec.name, int(labels[i]), int(labels[j]), coef, out["rho"], hint, rows)
        _report_pair(reporter, out, wC[i], wC[j], rows.size, self.nu)
        result = FitResult(w=None, alpha=np.abs(coef), n_iter=out["n_iter"], primal=out["primal"], dual=out["dual"],
                           gap=out["primal"] - out["dual"], max_violation=out["gap"], nSV=out["nSV"],
                           converged=out["converged"], solver="smo",
                           extra={"labels": (int(labels[i]), int(labels[j])), "nBSV": out["nBSV"],
                                  "obj": out["obj"], "rho": out["rho"]})
        return coef, result, prob, used

    def model(self, coefs, results, probs, reporter):
        """The SVMModel of the pairs' solutions (meta: results per pair, params, options, sv_indices)."""
        opts = self.opts
        probA = [a for a, _ in probs] if opts.probability else None
        probB = [b for _, b in probs] if opts.probability else None
        model, sv_rows = self.pairs.model(self.ds, coefs, [r.extra["rho"] for r in results], opts.kernel_type,
                                          opts.degree, opts.gamma, opts.coef0, probA=probA, probB=probB,
                                          svm_type="c_svc" if self.nu is None else "nu_svc")
        reporter.info(f"Total nSV = {model.total_sv}\n")
        model.meta = {"results": results, "params": self.params, "options": opts, "sv_indices": sv_rows + 1}
        return model


def fit(ds, params, reporter, n_features=None, context=None):
    """Train LIBSVM's C-SVC on a loaded dataset; returns an SVMModel (meta: results per pair, params).
    n_features: the num_features that sets the default gamma (cross-validation passes the whole set's).
    context: a dict the grid search keeps across the cells of one kernel and fold: each pair's kernel cache is
    kept there and reused (its rows back in their first order), so a cell after the first starts with the columns
    its predecessors computed; the model does not depend on it."""
    return run_pairs(PairsRun(ds, params, reporter, n_features), params.seed, reporter, context)


def check_nu_feasible(nu, count):
    """LIBSVM's svm_check_parameter for nu-SVC: every pair of classes (counts n1, n2) needs nu (n1 + n2) / 2 <=
    min(n1, n2)."""
    for a in range(len(count)):
        for b in range(a + 1, len(count)):
            if nu * (count[a] + count[b]) / 2 > min(count[a], count[b]):
                raise ParameterError("specified nu is infeasible")


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
