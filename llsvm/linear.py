"""Training linear SVMs the LIBLINEAR way: labels, class weights, one-vs-rest, cross-validation, the C search.

    model = llsvm.train("train.txt", solver=3, C=1.0, bias=1.0)      # or a CSRDataset, or (X, y) with scipy
    model.predict(X); model.save("train.model")

Everything random comes from one seeded RNG (`seed`): sub-seeds for every binary problem and the CV permutation
are drawn from it before any work starts, so results do not depend on `threads`.
"""
import io
import math
import os
import warnings
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np

from ._ext import _linear as K
from .dataset import CSRDataset
from .errors import ConvergenceWarning, ParameterError
from .model import Model
from .onepass import DEFAULT_EPS as LLSVM_EPS, DEFAULT_MAX_ITER as LLSVM_MAX_ITER, LLSVM, LLSVMOptions, OnePassSolver
from .streaming import (BM, DEFAULT_EPS as STREAM_EPS, DEFAULT_MAX_ITER as STREAM_MAX_ITER, STREAMSVM,
                        BlockMinimizationSolver, StreamOptions, StreamSVMSolver)
from .solvers import (DEFAULT_EPS, DUAL_MAX_ITER, L2R_L1LOSS_SVC_DUAL, L2R_L2LOSS_SVC, L2R_L2LOSS_SVC_DUAL,
                      NEWTON_MAX_ITER, SOLVER_NAMES, Subproblem, solve_dcd, solve_newton, warn_missing_weights,
                      weighted_C)

IMPLEMENTED = (L2R_L2LOSS_SVC_DUAL, L2R_L2LOSS_SVC, L2R_L1LOSS_SVC_DUAL, LLSVM, STREAMSVM, BM)
OUT_OF_CORE = (LLSVM, STREAMSVM, BM)
IMPLEMENTED_TEXT = "-s 1, -s 2, -s 3, -s llsvm, -s streamsvm, -s bm"
WARN_DUAL_L1 = "\nWARNING: reaching max number of iterations\nUsing -s 2 may be faster (also see FAQ)\n\n"
WARN_DUAL_L2 = "\nWARNING: reaching max number of iterations\nSwitching to use -s 2\n\n"


@dataclass
class Params:
    """Training parameters, LIBLINEAR's names and defaults (eps None: the solver's default)."""
    solver: int = L2R_L2LOSS_SVC_DUAL
    C: float = 1.0
    eps: float = None
    bias: float = -1.0
    weights: list = field(default_factory=list)      # [(label, weight)], as -wi gives them
    regularize_bias: bool = True
    max_iter: int = None                              # outer iterations (dual) / Newton iterations (-s 2)
    seed: int = 1
    threads: int = 1
    llsvm: LLSVMOptions = None                        # -s llsvm's own options
    stream: StreamOptions = None                      # -s streamsvm's and -s bm's own options

    def check(self):
        if self.solver not in IMPLEMENTED:
            raise ParameterError(f"unknown solver type {self.solver} (implemented: {IMPLEMENTED_TEXT})")
        if self.eps is None:
            self.eps = LLSVM_EPS if self.solver == LLSVM else STREAM_EPS[self.solver] \
                if self.solver in (STREAMSVM, BM) else DEFAULT_EPS[self.solver]
        if not self.eps > 0:
            raise ParameterError("eps <= 0")
        if not self.C > 0:
            raise ParameterError("C <= 0")
        if not self.regularize_bias:
            if self.bias != 1.0:
                raise ParameterError("To not regularize bias, must specify -B 1 along with -R")
            if self.solver != L2R_L2LOSS_SVC:
                raise ParameterError("-R option supported only for solver L2R_LR, L2R_L2LOSS_SVC, L1R_L2LOSS_SVC, "
                                     "L1R_LR, and L2R_L2LOSS_SVR")
        if self.solver == LLSVM:
            self.llsvm = self.llsvm or LLSVMOptions()
            if self.llsvm.inner_iter < 1:
                raise ParameterError("--inner-iter must be at least 1")
        if self.solver in (STREAMSVM, BM):
            self.stream = self.stream or StreamOptions()
            if not self.stream.inner_eps > 0:
                raise ParameterError("--inner-eps must be positive")
        if self.max_iter is not None and self.max_iter < 1:
            raise ParameterError("--max-iter must be at least 1")
        if self.threads < 1:
            raise ParameterError("--threads must be at least 1")
        return self


def group_classes(y):
    """(labels, class index of every row): LIBLINEAR's group_classes.

    Labels are the integer parts of y (LIBLINEAR casts to int) in order of first occurrence, except that a
    two-class {-1, +1} set whose first label is -1 is swapped so that label[0] = +1.
    """
    yi = np.trunc(np.asarray(y, dtype=np.float64))
    if yi.size and (np.abs(yi) > 2147483647).any():
        raise ParameterError("a class label is beyond the int range")
    yi = yi.astype(np.int64)
    uniq, first, inverse = np.unique(yi, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")
    labels = uniq[order]
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    cls = rank[inverse.ravel()]
    if labels.size == 2 and labels[0] == -1 and labels[1] == 1:
        labels = labels[::-1].copy()
        cls = 1 - cls
    return labels, cls


def _as_dataset(data, y=None):
    if isinstance(data, (str, os.PathLike)):
        from .io import read_dataset
        return read_dataset(data)
    if hasattr(data, "as_view"):
        return data.as_view()
    if y is None:
        raise ParameterError("give labels y with a matrix X")
    import scipy.sparse as sp
    X = data if sp.issparse(data) else sp.csr_matrix(np.asarray(data, dtype=np.float64))
    return CSRDataset.from_csr(X, y)


class _Seeds:
    """Sub-seeds drawn in a fixed order from the one seeded RNG."""

    def __init__(self, seed):
        self.state = K.rng_state(int(seed) & 0xFFFFFFFFFFFFFFFF)

    def next(self):
        return int(K.rng_draw(self.state))

    def permutation(self, n):
        return K.permutation(n, self.state)


def _weighted_C(params, labels, warn):
    wC, missing = weighted_C(params.C, params.weights, labels)
    warn_missing_weights(missing, warn)
    return wC


def _binary_tasks(view, cls, labels, rows, params, warn):
    """(y_sign, Cp, Cn) per binary problem: one for two classes, one per class otherwise (one-vs-rest)."""
    wC = _weighted_C(params, labels, warn)
    c = cls if rows is None else cls[rows]
    if labels.size == 2:
        return [(np.where(c == 0, 1, -1).astype(np.int8), wC[0], wC[1])]
    return [(np.where(c == k, 1, -1).astype(np.int8), wC[k], params.C) for k in range(labels.size)]


def solve_binary(sub, params, seed, say, warm=None):
    """One binary problem with LIBLINEAR's train_one logic (the -s 1 -> -s 2 fallback included)."""
    s = params.solver
    if s == L2R_L2LOSS_SVC:
        l = sub.l
        pos = int(np.count_nonzero(sub.y > 0))
        tol = params.eps * max(min(pos, l - pos), 1) / l
        return solve_newton(sub, tol, params.max_iter or NEWTON_MAX_ITER,
                            w0=None if warm is None else warm.get("w"), regularize_bias=params.regularize_bias,
                            say=say)
    l1 = s == L2R_L1LOSS_SVC_DUAL
    max_iter = params.max_iter or DUAL_MAX_ITER
    res = solve_dcd(sub, l1, params.eps, max_iter, rng_seed=seed,
                    alpha0=None if warm is None else warm.get("alpha"), say=say)
    if res.n_iter >= max_iter:
        if l1:
            say(WARN_DUAL_L1)
        else:
            say(WARN_DUAL_L2)
            l = sub.l
            pos = int(np.count_nonzero(sub.y > 0))
            tol = params.eps * max(min(pos, l - pos), 1) / l * 0.1
            dual = res
            res = solve_newton(sub, tol, NEWTON_MAX_ITER, w0=dual.w, say=say)
            res.extra["dual_iterations"] = dual.n_iter
            res.extra["switched_to_primal"] = True
    return res


def _run(tasks, threads, out):
    """Run callables task(say) -> result; output of each task reaches `out` whole and in task order."""
    if threads <= 1 or len(tasks) <= 1:
        return [t(out) for t in tasks]

    def buffered(t):
        buf = io.StringIO()
        r = t(buf.write)
        return r, buf.getvalue()

    results = []
    with ThreadPoolExecutor(max_workers=threads) as pool:
        for fut in [pool.submit(buffered, t) for t in tasks]:
            r, text = fut.result()
            if text:
                out(text)
            results.append(r)
    return results


def _fit(view, cls, labels, rows, params, seeds, say, warn, warms=None, threads=None):
    """Train all binary problems of (view, rows); returns (W, results)."""
    tasks_def = _binary_tasks(view, cls, labels, rows, params, warn)
    subs = [Subproblem(view, ys, Cp, Cn, rows=rows, bias=params.bias) for ys, Cp, Cn in tasks_def]
    task_seeds = [seeds.next() for _ in subs]

    def make(k):
        return lambda s: solve_binary(subs[k], params, task_seeds[k], s, None if warms is None else warms[k])

    results = _run([make(k) for k in range(len(subs))], params.threads if threads is None else threads, say)
    W = np.stack([r.w for r in results], axis=1)
    return W, results


def _model(params, labels, n_features, W, results):
    solver_name = SOLVER_NAMES[params.solver]
    meta = {"results": results, "params": params}
    return Model(solver_name, labels.size, labels, n_features, params.bias, W, meta=meta)


def one_pass_solver(params, say=None, progress=None, zero_based=False, warn=None):
    """The driver of an out-of-core solver (-s llsvm, streamsvm, bm) for checked Params."""
    if params.solver in (STREAMSVM, BM):
        cls = StreamSVMSolver if params.solver == STREAMSVM else BlockMinimizationSolver
        return cls(C=params.C, eps=params.eps, bias=params.bias, weights=params.weights,
                   max_iter=params.max_iter or STREAM_MAX_ITER, seed=params.seed, threads=params.threads,
                   options=params.stream, say=say, zero_based=zero_based, progress=progress, warn=warn)
    return OnePassSolver(C=params.C, eps=params.eps, bias=params.bias, weights=params.weights,
                         max_iter=params.max_iter or LLSVM_MAX_ITER, seed=params.seed, threads=params.threads,
                         options=params.llsvm, say=say, zero_based=zero_based, progress=progress, warn=warn)


def train(data, y=None, *, solver=L2R_L2LOSS_SVC_DUAL, C=1.0, eps=None, bias=-1.0, weights=None,
          regularize_bias=True, max_iter=None, seed=1, threads=1, say=None, warn=None, params=None, llsvm=None,
          stream=None):
    """Train a model on a dataset, a path, or (X, y). Returns a Model (its .meta['results'] hold certificates).

    `say` receives LIBLINEAR's output text (default: none); `warn` LIBLINEAR's stderr warnings. With
    solver="llsvm", "streamsvm" or "bm" a path is streamed, never loaded whole; `llsvm` takes -s llsvm's
    LLSVMOptions (memory, ...), `stream` the StreamOptions of -s streamsvm and -s bm (memory, hash_bits, ...).
    """
    if params is None:
        params = Params(solver=solver, C=C, eps=eps, bias=bias, weights=list((weights or {}).items())
                        if isinstance(weights, dict) else list(weights or []), regularize_bias=regularize_bias,
                        max_iter=max_iter, seed=seed, threads=threads, llsvm=llsvm, stream=stream)
    params.check()
    if params.solver in OUT_OF_CORE:
        if not isinstance(data, (str, os.PathLike)) and not hasattr(data, "iter_blocks"):
            data = _as_dataset(data, y)
        model = one_pass_solver(params, say, warn=warn).fit(data)
        if say is None and not all(r.converged for r in model.meta["results"]):
            warnings.warn(ConvergenceWarning("reaching max number of iterations"), stacklevel=2)
        return model
    ds = _as_dataset(data, y)
    if ds.n_rows == 0:
        raise ParameterError("no training data")
    labels, cls = group_classes(ds.y)
    seeds = _Seeds(params.seed)
    W, results = _fit(ds, cls, labels, None, params, seeds, say or (lambda s: None), warn or (lambda s: None))
    if say is None and not all(r.converged for r in results):
        warnings.warn(ConvergenceWarning("reaching max number of iterations"), stacklevel=2)
    return _model(params, labels, ds.n_features, W, results)


def _fold_plan(l, nr_fold, seeds, warn):
    if nr_fold > l:
        nr_fold = l
        warn("WARNING: # folds > # data. Will use # folds = # data instead (i.e., leave-one-out cross validation)\n")
    perm = seeds.permutation(l)
    fold_start = [i * l // nr_fold for i in range(nr_fold + 1)]
    folds = []
    for i in range(nr_fold):
        b, e = fold_start[i], fold_start[i + 1]
        folds.append((np.concatenate([perm[:b], perm[e:]]), perm[b:e]))
    return folds


def _predict_rows(view, model, rows, bias):
    """Labels of the given rows under a model trained on the same view."""
    dec = np.empty((rows.size, model.nr_w), np.float64)
    col = np.empty(rows.size, np.float64)
    rows = np.ascontiguousarray(rows, dtype=np.int64)
    for j in range(model.nr_w):
        K.xv(view.row_view(bias), rows, np.ascontiguousarray(model.W[:, j]), col)
        dec[:, j] = col
    return model.labels_from_decisions(dec[:, 0] if model.nr_w == 1 else dec)


def cross_validation(data, nr_fold, y=None, *, say=None, warn=None, params=None, **kw):
    """LIBLINEAR's n-fold cross-validation: the predicted label of every row (from the fold leaving it out)."""
    params = (params or Params(**kw)).check()
    say = say or (lambda s: None)
    warn = warn or (lambda s: None)
    ds = _as_dataset(data, y)
    seeds = _Seeds(params.seed)
    folds = _fold_plan(ds.n_rows, nr_fold, seeds, warn)
    target = np.empty(ds.n_rows, np.float64)
    fold_seeds = [seeds.next() for _ in folds]

    def make(i):
        def task(s):
            tr, te = folds[i]
            if params.solver in OUT_OF_CORE:
                p = Params(**{**params.__dict__, "threads": 1, "seed": fold_seeds[i]})
                model = one_pass_solver(p, s, warn=warn).fit(ds.take_rows(tr))
                return te, model.predict(ds.take_rows(te))
            labels, cls = group_classes(ds.y[tr])
            full_cls = np.empty(ds.n_rows, np.int64)
            full_cls[tr] = cls
            W, results = _fit(ds, full_cls, labels, tr, params, _Seeds(fold_seeds[i]), s, warn, threads=1)
            return te, _predict_rows(ds, _model(params, labels, ds.n_features, W, results), te, params.bias)
        return task

    for te, pred in _run([make(i) for i in range(len(folds))], params.threads, say):
        target[te] = pred
    return target


def calc_start_C(view, l, params):
    """The smallest C worth trying, a power of two (LIBLINEAR's calc_start_C; -s 3 uses 1/(l max x.x))."""
    norms = np.empty(view.n_rows, np.float64)
    K.sq_norms(view.row_view(params.bias), np.empty(0, np.int64), norms)
    max_xTx = float(norms.max()) if norms.size else 0.0
    if max_xTx <= 0:
        return 1.0
    if params.solver in (L2R_L2LOSS_SVC, L2R_L2LOSS_SVC_DUAL):
        min_C = 1.0 / (2 * l * max_xTx)
    else:
        min_C = 1.0 / (l * max_xTx)
    return math.pow(2, math.floor(math.log(min_C) / math.log(2.0)))


def find_parameter_C(data, nr_fold, y=None, *, start_C=None, say=None, warn=None, params=None, **kw):
    """LIBLINEAR's warm-started search for C by cross-validation (also for -s 1 and -s 3, warm-started in the dual).

    Returns (best_C, best_rate). Lines `log2c=...\\trate=...` go to `say`.
    """
    params = (params or Params(**kw)).check()
    if params.solver in OUT_OF_CORE:
        raise ParameterError(f"the C search (-C) is available for -s 1, -s 2 and -s 3, not -s {params.solver}")
    say = say or (lambda s: None)
    warn = warn or (lambda s: None)
    ds = _as_dataset(data, y)
    l = ds.n_rows
    seeds = _Seeds(params.seed)
    folds = _fold_plan(l, nr_fold, seeds, warn)
    fold_seeds = [seeds.next() for _ in folds]
    if start_C is None or start_C <= 0:
        start_C = calc_start_C(ds, l, params)
    max_C = 1024.0
    start_C = min(start_C, max_C)
    ratio = 2.0
    fold_classes = []
    for tr, _ in folds:
        labels, cls = group_classes(ds.y[tr])
        full_cls = np.empty(l, np.int64)
        full_cls[tr] = cls
        fold_classes.append((labels, full_cls))
    prev = [None] * len(folds)          # per fold: (W, [result per class])
    num_unchanged_w = 0
    best_C, best_score = start_C, 0.0
    C = start_C
    target = np.empty(l, np.float64)
    while C <= max_C:
        p = Params(**{**params.__dict__, "C": C})

        def make(i, p=p):
            def task(s):
                tr, te = folds[i]
                labels, full_cls = fold_classes[i]
                warms = None
                if prev[i] is not None:
                    warms = [{"w": r.w, "alpha": None if r.alpha is None else r.alpha * ratio} for r in prev[i][1]]
                W, results = _fit(ds, full_cls, labels, tr, p, _Seeds(fold_seeds[i]), lambda t: None,
                                  lambda t: None, warms=warms, threads=1)
                pred = _predict_rows(ds, _model(p, labels, ds.n_features, W, results), te, p.bias)
                return W, results, pred
            return task

        outcomes = _run([make(i) for i in range(len(folds))], params.threads, lambda t: None)
        for i, (W, results, pred) in enumerate(outcomes):
            if prev[i] is not None and num_unchanged_w >= 0:
                if float(np.sqrt(((W - prev[i][0]) ** 2).sum())) > 1e-15:
                    num_unchanged_w = -1
            prev[i] = (W, results)
            target[folds[i][1]] = pred
        rate = float(np.count_nonzero(target == ds.y)) / l
        if rate > best_score:
            best_C, best_score = C, rate
        say(f"log2c={math.log(C) / math.log(2.0):7.2f}\trate={_g(100.0 * rate)}\n")
        num_unchanged_w += 1
        if num_unchanged_w == 5:
            break
        C *= ratio
    if C > max_C:
        say("WARNING: maximum C reached.\n")
    return best_C, best_score


def _g(x):
    """C's %g."""
    return "%g" % x
