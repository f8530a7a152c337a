"""Training the LIBLINEAR way, for every solver in the registry: labels, class weights, one-vs-rest, threads,
cross-validation and the C search.

    model = llsvm.train("train.txt", solver=3, C=1.0, bias=1.0)      # or a CSRDataset, or (X, y) with scipy
    model.predict(X); model.save("train.model")

A solver with random access (spec.access "random") gets the loaded data: the trainer groups the classes, splits
them one-vs-rest, and calls the spec's driver on each binary subproblem (in threads, output kept in order). A
streaming solver gets the data as it is (a path is streamed, never loaded whole) and does all of it itself.

Everything random comes from one seeded RNG (`seed`): sub-seeds for every binary problem and the CV permutation
are drawn from it before any work starts, so results do not depend on `threads`.
"""
import math
import os
import warnings

import numpy as np

from .. import memory
from .._ext import _linear as K
from ..dataset import CSRDataset, RowError, check_precomputed, check_row_norms, full_rows, positive_rows
from ..errors import ConvergenceWarning, ParameterError
from ..models.linear import Model
from ..options import OPTION
from ..params import Params, accepting
from ..report import as_reporter
from ..stop import stoppable
from . import registry
from .common import (Seeds, Subproblem, check_ovr, class_costs, class_grouping, fold_draws, fold_seeds, group_classes,
                     one_vs_rest)
from .folds import plain_folds, stratified_folds


def as_dataset(data, y=None, params=None):
    """The training rows for random access, refused when a row's squared norm is not a finite number (values so
    large that it overflows: every solver's arithmetic would, and the binary format cannot hold such a row either,
    so the streaming solvers refuse it too). With -t 4 (params.precomputed) a path is read with 0-based indices and
    the rows must be a precomputed kernel's (dataset.check_precomputed, at the line and column of a text file)."""
    precomputed = params is not None and params.precomputed
    if isinstance(data, (str, os.PathLike)):
        from ..io import read_dataset
        ds = read_dataset(data, zero_based=precomputed, class_labels=params is not None and params.spec.class_labels)
    elif hasattr(data, "as_view"):
        ds = data.as_view()
    else:
        if y is None:
            raise ParameterError("give labels y with a matrix X")
        import scipy.sparse as sp
        if precomputed and not sp.issparse(data):       # a kernel matrix's zeros are values: every entry held
            ds = full_rows(np.asarray(data, dtype=np.float64), np.asarray(y, dtype=np.float64).ravel())
        else:
            X = data if sp.issparse(data) else sp.csr_matrix(np.asarray(data, dtype=np.float64))
            ds = CSRDataset.from_csr(X, y)
    try:
        check_row_norms(ds)
        if precomputed:
            check_precomputed(ds)
    except RowError as exc:
        zero_based = getattr(ds, "zero_based", None)       # rows read from a text file: named by their line
        if not ds.source or ds.source == "<stdin>" or (zero_based is None and exc.pair is None):
            raise
        from ..io import row_error_at_line                 # (a precomputed kernel's binary file: how to make one)
        raise row_error_at_line(ds.source, exc, bool(zero_based), note="") from None
    return ds


def check_weighted(ds, params):
    """Refuse row weights (ds.weights) for a solver that does not take them yet (the -W option row names those that
    do; docs/weights.md)."""
    if getattr(ds, "weights", None) is not None and not params.spec.accepts_option("-W"):
        raise ParameterError(OPTION["-W"].refusal.format(solvers=accepting("-W")) + f", not -s {params.spec.name}")


def weighted_rows(ds):
    """The dataset without its rows of weight 0 (itself when it has none): such a row has no effect on the model,
    which is the model of the other rows (docs/weights.md)."""
    keep = positive_rows(getattr(ds, "weights", None))
    return ds if keep is None else ds.take_rows(keep)


def _run(tasks, threads, reporter, bar=None):
    """Run callables task(reporter) -> result; the text of each task reaches `reporter` whole and in task order.
    `bar`: a progress bar advanced by one as each task's result is taken."""
    if threads <= 1 or len(tasks) <= 1:
        results = []
        for t in tasks:
            results.append(t(reporter))
            if bar is not None:
                bar.update(1)
        return results

    def buffered(t):
        child = reporter.buffered()
        return t(child), child

    from concurrent.futures import ThreadPoolExecutor
    results = []
    with ThreadPoolExecutor(max_workers=threads) as pool:
        for fut in [pool.submit(buffered, t) for t in tasks]:
            r, child = fut.result()
            child.replay(reporter)
            results.append(r)
            if bar is not None:
                bar.update(1)
    return results


def solve_binary(sub, params, seed, reporter, warm=None):
    """One binary subproblem with the driver of a random-access solver (LIBLINEAR's train_one)."""
    return registry.driver(params.spec)(sub, params, seed, reporter, warm)


def _check_memory(view, labels, params, threads, l):
    """Refuse a run whose problems do not fit, before any is made: with more than two classes, every one-vs-rest
    problem's labels, dual variables and w over its l rows (check_ovr, which names the classes); then the weight
    vectors: the problems running at once each hold the driver's work vectors, and every problem's w is kept and
    then stacked into the model."""
    check_ovr(labels.size, l, view.n_features)
    nr_w = 1 if labels.size <= 2 else labels.size
    running = min(nr_w, max(1, threads))
    memory.check_weights(view.n_features, running * params.spec.work_vectors + 2 * nr_w)


def _whole_problem(view, cls, labels, rows, params, reporter):
    """The one problem of a spec whose task is not one-vs-rest: regression over the targets (view.y), the one-class
    SVM over all rows, or Crammer and Singer's over all classes."""
    task = params.spec.task
    n = view.n_rows if rows is None else rows.size
    if task == "regression":
        y = view.y if rows is None else view.y[rows]
        return Subproblem(view, np.ones(n, np.int8), params.C, params.C, rows=rows, bias=params.bias, targets=y)
    if task == "oneclass":
        return Subproblem(view, np.ones(n, np.int8), 1.0, 1.0, rows=rows, bias=params.bias)
    c = cls if rows is None else cls[rows]
    return Subproblem(view, np.ones(n, np.int8), params.C, params.C, rows=rows, bias=params.bias, cls=c,
                      C_class=class_costs(params.C, params.weights, labels, reporter))


def labels_of(ds_y, params):
    """(labels, class index of every row) of a spec's training rows; (None, None) for regression and one-class."""
    if params.spec.task in ("regression", "oneclass"):
        return None, None
    return group_classes(ds_y)


def warn_ignored(params, reporter):
    """LIBLINEAR ignores -wi for regression and the one-class SVM, and -c for the one-class SVM: say so."""
    task = params.spec.task
    if task in ("regression", "oneclass") and params.weights:
        reporter.warning(f"WARNING: -wi weights apply to classes; -s {params.spec.name} has none and ignores them\n")
    if task == "oneclass" and params.C != 1.0:
        reporter.warning(f"WARNING: -c does not apply to -s {params.spec.name} (its parameter is -n nu); ignored\n")


def ovr_problems(view, cls, labels, rows, params, reporter):
    """(subproblems, order) of a one-vs-rest run over (view, rows): the Newton solvers' rows in LIBLINEAR's class
    grouping (order: positions into rows, None for the others), so that they sum as LIBLINEAR does."""
    order = None
    if params.spec.driver_ref == "newton:train_one":
        order = class_grouping(cls, rows)
        rows = order if rows is None else rows[order]
    return one_vs_rest(view, cls, labels, rows, params, reporter), order


def problem_count(params, labels):
    """How many problems _fit trains (and draws a seed for): one per class beyond two, else one."""
    if params.spec.task != "ovr":
        return 1
    return 1 if labels.size <= 2 else labels.size


def _fit(view, cls, labels, rows, params, seeds, reporter, warms=None, threads=None):
    """Train all binary problems of (view, rows) with the spec's driver; returns (W, results)."""
    threads = params.threads if threads is None else threads
    if params.spec.task != "ovr":
        k = 1 if params.spec.task != "multiclass" else labels.size
        memory.check_weights(view.n_features, params.spec.work_vectors * k + 2 * k)
        sub = _whole_problem(view, cls, labels, rows, params, reporter)
        res = solve_binary(sub, params.but(threads=threads), seeds.next(), reporter,
                           None if warms is None else warms[0])
        return res.w.reshape(sub.w_size, k), [res]           # k explicit: w may be empty (no feature, no bias)
    _check_memory(view, labels, params, threads, view.n_rows if rows is None else rows.size)
    subs, order = ovr_problems(view, cls, labels, rows, params, reporter)
    task_seeds = [seeds.next() for _ in subs]

    # the threads go to the problems side by side, or to the one problem (a driver that splits one: -s 0, 2, 11)
    inner = params.but(threads=threads if len(subs) == 1 else 1)

    def make(k):
        return lambda r: solve_binary(subs[k], inner, task_seeds[k], r, None if warms is None else warms[k])

    results = _run([make(k) for k in range(len(subs))], threads, reporter)
    if order is not None:             # the dual variables back in the rows' own order
        for r in results:
            if r.alpha is not None:
                alpha = np.empty_like(r.alpha)
                alpha[order] = r.alpha
                r.alpha = alpha
    # no class (no rows: a fold of leave-one-out on one row) makes no problem, and a model of no weight column
    W = np.stack([r.w for r in results], axis=1) if results else np.zeros((view.n_features + (params.bias >= 0), 0))
    return W, results


def linear_model(params, labels, n_features, W, results):
    """The Model of a random-access run: LIBLINEAR's model of the weight columns W, its meta the problems'
    FitResults and the Params (regression and the one-class SVM: nr_class 2, no labels, -s 21's rho)."""
    meta = {"results": results, "params": params}
    if labels is None:            # regression and the one-class SVM: nr_class 2, no labels (LIBLINEAR's models)
        return Model(params.spec.solver_type, 2, None, n_features, params.bias, W,
                     rho=results[0].extra.get("rho"), meta=meta)
    return Model(params.spec.solver_type, labels.size, labels, n_features, params.bias, W, meta=meta)


def checked_params(params, kw):
    """The Params of a library call, given as `params` or as their fields in `kw`, checked."""
    if params is None:
        weights = kw.pop("weights", None)
        params = Params(**kw, weights=list(weights.items()) if isinstance(weights, dict) else list(weights or []))
    return params.check()


def make_driver(params, reporter, zero_based=False, progress=None):
    """The driver object of a streaming solver for checked Params."""
    return registry.driver(params.spec)(params, reporter, zero_based=zero_based, progress=progress)


def warn_unconverged(silent, results, stacklevel=3):
    """A library call that prints nothing says through Python's warnings that the iteration limit was hit (at the
    line of the call's caller: `stacklevel` frames up from here; train's is one more, its @stoppable)."""
    if silent and not all(r.converged for r in results):
        warnings.warn(ConvergenceWarning("reaching max number of iterations"), stacklevel=stacklevel)


def _warm_starts(warm, params, labels, ds):
    """The warm starts of train(warm=model), one per problem. A model train() made in this process with the same
    solver, bias and classes on as many rows (a C path, the estimators' warm_start on the same X): every problem
    from its w and its alpha scaled by the ratio of the C values (as find_parameter_C's). Any other linear model (a
    model file, other rows): from its w (warm.model_starts, which refuses a model whose type, bias or classes do
    not fit; the dual solvers derive their alpha from w)."""
    results = warm.meta.get("results") if hasattr(warm, "meta") else None
    old = warm.meta.get("params") if results else None
    same = (old is not None and old.spec.name == params.spec.name and old.bias == params.bias
            and all(r.w is not None and r.w.shape[0] == ds.n_features + (params.bias >= 0) for r in results)
            and (None if labels is None else list(labels)) == (None if warm.label is None else list(warm.label))
            and len(results) == (labels.size if labels is not None and labels.size > 2 else 1)
            and all(r.alpha is None or r.alpha.shape[0] == ds.n_rows for r in results))
    if not same:
        from .warm import model_starts
        return model_starts(warm, params, labels, ds.n_features)
    ratio = float(params.C) / float(old.C)
    return [{"w": r.w, "alpha": None if r.alpha is None else r.alpha * ratio} for r in results]


@stoppable
def train(data, y=None, *, params=None, reporter=None, say=None, warn=None, warm=None, **kw):
    """Train a model on a dataset, a path, or (X, y). Returns a Model (its .meta['results'] hold certificates).

    Parameters are Params' fields as keywords (solver=3, C=1.0, eps, bias, weights as {label: weight} or
    [(label, weight)], regularize_bias, max_iter, seed, threads, options: the solver's own options, e.g.
    LLSVMOptions(memory=64 << 20)), or `params`. `say` receives LIBLINEAR's output text and `warn` its
    warnings (default: neither), or give a `reporter`. A streaming solver (-s llsvm, streamsvm, bm) streams a
    path, never loading it whole. `warm`: a linear model that starts every problem (the solvers of -i: 0, 1, 2, 3,
    11, llsvm, streamsvm, bm): one train() made on the same rows and classes with the same solver starts from its
    w and alpha (scaled by the ratio of the C values), as LIBLINEAR's find_parameter_C warm-starts; any other (a
    model file, other rows: `llsvm-train -i`; always for the out-of-core solvers) from its w
    (llsvm/solvers/warm.py: what fits, what is refused).
    """
    params = checked_params(params, kw)
    rep = as_reporter(reporter, say, warn)
    if warm is not None and not params.spec.accepts_option("-i"):
        raise ParameterError(f"-s {params.spec.name} has no warm start (only {accepting('-i')})")
    if params.spec.streams:
        if not isinstance(data, (str, os.PathLike)) and not hasattr(data, "iter_blocks"):
            data = as_dataset(data, y)
        check_weighted(data, params)
        model = make_driver(params, rep).fit(data, warm=warm)
        warn_unconverged(reporter is None and say is None, model.meta["results"], 4)
        return model
    ds = as_dataset(data, y, params)
    if ds.n_rows == 0:
        raise ParameterError("no training data")
    check_weighted(ds, params)
    ds = weighted_rows(ds)
    if params.spec.access == "loaded":
        model = registry.driver(params.spec)(ds, params, rep)
        warn_unconverged(reporter is None and say is None, model.meta["results"], 4)
        return model
    warn_ignored(params, rep)
    labels, cls = labels_of(ds.y, params)
    warms = None if warm is None else _warm_starts(warm, params, labels, ds)
    W, results = _fit(ds, cls, labels, None, params, Seeds(params.seed), rep, warms=warms)
    warn_unconverged(reporter is None and say is None, results, 4)
    return linear_model(params, labels, ds.n_features, W, results)


def _decide_rows(view, model, rows, bias):
    """(labels, decision values) of the given rows under a model trained on the same view."""
    dec = np.empty((rows.size, model.nr_w), np.float64)
    col = np.empty(rows.size, np.float64)
    rows = np.ascontiguousarray(rows, dtype=np.int64)
    for j in range(model.nr_w):
        K.xv(view.row_view(bias), rows, np.ascontiguousarray(model.W[:, j]), col)
        dec[:, j] = col
    if model.rho is not None:
        dec -= model.rho
    dec = dec[:, 0] if model.nr_w == 1 else dec
    return model.labels_from_decisions(dec), dec


def cv_plan(ds, nr_fold, params, reporter):
    """(folds, fold seeds) of -v: LIBSVM's stratified folds for its classifiers, LIBLINEAR's plain folds otherwise,
    drawn from --seed, or with --libsvm-rand from svm-train's rand() (the folds' warnings go to `reporter`)."""
    spec = params.spec
    rand, seeds = fold_draws(params)
    if spec.access == "loaded" and spec.class_labels:
        # LIBSVM's svm_cross_validation: stratified folds for classification, a plain permutation otherwise
        folds = stratified_folds(ds.y, nr_fold, rand, reporter)
    else:
        folds = plain_folds(ds.n_rows, nr_fold, rand, reporter, libsvm=spec.access == "loaded")
    return folds, fold_seeds(params, rand, seeds, folds, ds.y, getattr(ds, "weights", None))


def measure_labels(y, params):
    """The label order by which --measure measures a cross-validation of these rows: the whole set's model's
    (group_classes), (+1, -1) for one-class, None for regression (llsvm/measures.py picks the positive class)."""
    if params.spec.task == "regression":
        return None
    if params.spec.task == "oneclass":
        return [1.0, -1.0]
    return [float(v) for v in group_classes(np.asarray(y))[0]]


def fold_scores(model, dec, pred, positive):
    """A fold model's decision values oriented to the whole set's positive class (measures.binary_scores); a model
    that saw one class (a fold without the other) has no pair value: +-1 by its predicted labels."""
    from ..measures import binary_scores, model_labels
    labels = model_labels(model)
    dec = np.asarray(dec, np.float64)
    if labels is None or len(labels) != 2 or dec.size not in (pred.size, 2 * pred.size):
        return np.where(pred == positive, 1.0, -1.0)
    return binary_scores(labels, dec, positive)


def cv_fold(ds, params, folds, fold_seeds, i, s, positive=None):
    """Fold i of -v: (its test rows, their predicted labels or values) from a model of the other rows; with
    `positive` (a label: --measure auc), also their decision values oriented to that class (fold_scores)."""
    spec = params.spec
    tr, te = folds[i]
    tr = positive_rows(getattr(ds, "weights", None), tr)       # a row of weight 0 trains nothing (docs/weights.md)
    if spec.access == "loaded" or spec.streams:
        if spec.access == "loaded":
            model = registry.driver(spec)(ds.take_rows(tr), params.but(seed=fold_seeds[i], rand_skip=fold_seeds[i]), s,
                                          n_features=ds.n_features)
        elif not tr.size:   # nothing to stream (leave-one-out on one row): no class, no label, as LIBLINEAR's -s 3
            nan = np.full(te.size, np.nan)
            return (te, nan) if positive is None else (te, nan, nan)
        else:
            model = make_driver(params.but(threads=1, seed=fold_seeds[i]), s).fit(ds.take_rows(tr))
        dec = model.decision_function(ds.take_rows(te))
        if spec.access == "loaded" and model.supports_probability and not model.is_regression:
            # LIBSVM's svm_cross_validation with -b 1: the labels of svm_predict_probability (an SVR's
            # probability model is a noise model: its predictions are the values)
            pred = model.labels_and_probabilities(dec)[0]
        else:
            pred = model.labels_from_decisions(dec)
    else:
        labels, cls = labels_of(ds.y[tr], params)
        full_cls = None
        if cls is not None:
            full_cls = np.empty(ds.n_rows, np.int64)
            full_cls[tr] = cls
        W, results = _fit(ds, full_cls, labels, tr, params, Seeds(fold_seeds[i]), s, threads=1)
        model = linear_model(params, labels, ds.n_features, W, results)
        pred, dec = _decide_rows(ds, model, te, params.bias)
    if positive is None:
        return te, pred
    return te, pred, fold_scores(model, dec, np.asarray(pred, np.float64), positive)


def cv_check(params):
    if not params.spec.accepts_option("-v"):
        raise ParameterError(f"cross validation (-v) is available for {accepting('-v')}, not -s {params.spec.name}")


@stoppable
def cross_validation(data, nr_fold, y=None, *, params=None, reporter=None, say=None, warn=None, scores=False,
                     **kw):
    """LIBLINEAR's n-fold cross-validation: the predicted label of every row (from the fold leaving it out); with
    `scores` (two classes: --measure auc, --plot), (labels, decision values oriented to the positive class of
    measure_labels)."""
    params = checked_params(params, kw)
    cv_check(params)
    reporter = as_reporter(reporter, say, warn)
    ds = as_dataset(data, y, params)
    check_weighted(ds, params)
    warn_ignored(params, reporter)
    folds, fold_seeds = cv_plan(ds, nr_fold, params, reporter)
    target = np.empty(ds.n_rows, np.float64)
    # a loaded driver's threads compute its kernel columns: its folds run one after the other
    fold_threads = 1 if params.spec.access == "loaded" else params.threads
    positive = None
    if scores:
        from ..measures import positive_label
        positive = positive_label(measure_labels(ds.y, params))
    dec = np.zeros(ds.n_rows, np.float64) if positive is not None else None
    tasks = [(lambda i: lambda s: cv_fold(ds, params, folds, fold_seeds, i, s, positive))(i)
             for i in range(len(folds))]
    with reporter.bar(total=len(tasks), desc=f"{nr_fold}-fold cross validation", unit="folds") as bar:
        done = _run(tasks, fold_threads, reporter, bar)
    for te, pred, *score in done:
        target[te] = pred
        if dec is not None:
            dec[te] = score[0]
    return (target, dec) if scores else target


def calc_start_C(view, l, params):
    """The smallest C worth trying, a power of two (LIBLINEAR's calc_start_C; for llsvm's -C of -s 1, -s 2's
    1/(2 l max x.x), of -s 3, 1/(l max x.x)). Weighted rows (docs/weights.md): l is the sum of the weights and the
    regression's sums weigh each row, over the rows of positive weight (a row of weight k counts as k rows: integer
    weights start where the rows repeated that many times start)."""
    norms = np.empty(view.n_rows, np.float64)
    K.sq_norms(view.row_view(params.bias), np.empty(0, np.int64), norms)
    weights = getattr(view, "weights", None)
    y_abs = np.abs(view.y) if params.spec.task == "regression" else None
    if weights is not None:
        keep = weights > 0
        norms, weights = norms[keep], weights[keep]
        l = float(weights.sum())
        if y_abs is not None:
            y_abs = y_abs[keep]
    max_xTx = float(norms.max()) if norms.size else 0.0
    if max_xTx <= 0:
        return 1.0
    if params.spec.solver_type in ("L2R_L2LOSS_SVC", "L2R_L2LOSS_SVC_DUAL"):
        min_C = 1.0 / (2 * l * max_xTx)
    elif params.spec.task == "regression":
        sq = np.maximum(y_abs - params.svr_p, 0.0) ** 2
        loss = float(sq.sum()) if weights is None else float(weights @ sq)
        sum_y = float(y_abs.sum()) if weights is None else float(weights @ y_abs)
        if loss <= 0:
            return math.inf
        min_C = 0.1 * 0.1 * loss / (8 * sum_y * sum_y * max_xTx)
    else:
        min_C = 1.0 / (l * max_xTx)
    return math.pow(2, math.floor(math.log(min_C) / math.log(2.0)))


C_RATIO = 2.0                    # -C's step: each C is twice the one before


@stoppable
def find_parameter_C(data, nr_fold, y=None, *, start_C=None, start_p=None, params=None, reporter=None, say=None,
                     warn=None, measure=None, **kw):
    """LIBLINEAR's warm-started search for C by cross-validation (also for -s 1 and -s 3, warm-started in the dual;
    for -s 11 over C and p, as LIBLINEAR's find_parameters).

    Returns (best_C, best_score) for classification (the CV accuracy as a fraction), (best_C, best_p, best_MSE)
    for -s 11. Lines `log2c=...\\trate=...` (`log2c=...\\tp=...\\tMean squared error=...`) go to the reporter.
    `measure` (a --measure name): the score is that measure over the whole set's fold predictions (the largest
    wins; for mse and mae the smallest), and the lines name it.
    """
    params = find_C_check(checked_params(params, kw))
    reporter = as_reporter(reporter, say, warn)
    ds = as_dataset(data, y, params)
    check_weighted(ds, params)
    folds = csearch_folds(ds, nr_fold, params, reporter)
    searches = csearch_searches(ds, params, start_C, start_p)
    measured = None
    if measure is not None:
        from ..measures import positive_label
        labels = measure_labels(ds.y, params)
        measured = (measure, labels, positive_label(labels) if measure == "auc" else None, ds.y)
    return run_C_searches(searches, params, start_C, ds.n_rows, FoldSteps(ds, folds, params.threads, measured),
                          reporter, measured)


def find_C_check(params):
    """The Params of a -C run, refused for a solver without the warm-started search."""
    if not params.spec.find_C:
        raise ParameterError(f"the C search (-C) is available for {accepting('-C')}, not -s {params.spec.name}")
    return params


def csearch_folds(ds, nr_fold, params, reporter):
    """-C's folds, the same in one process and on every worker: per fold (training rows, test rows, seed, labels of
    its training rows, class of every row), LIBLINEAR's plain folds drawn from --seed (their warning goes to
    `reporter`); refused (check_ovr) when every fold's one-vs-rest problems, all kept from one C to the next (the
    warm start), would not fit."""
    l = ds.n_rows
    seeds = Seeds(params.seed)
    folds = plain_folds(l, nr_fold, seeds, reporter)
    fold_seeds = [seeds.next() for _ in folds]
    plan = []
    for (tr, te), seed in zip(folds, fold_seeds):
        tr = positive_rows(getattr(ds, "weights", None), tr)      # a row of weight 0 trains nothing
        labels, cls = labels_of(ds.y[tr], params)
        full_cls = None
        if cls is not None:
            full_cls = np.empty(l, np.int64)
            full_cls[tr] = cls
        plan.append((tr, te, seed, labels, full_cls))
    if params.spec.task == "ovr":
        check_ovr(max(labels.size for _, _, _, labels, _ in plan), max(tr.size for tr, _ in folds), ds.n_features,
                  sets=len(folds))
    return plan


def csearch_searches(ds, params, start_C, start_p):
    """-C's searches over C, in order: [(p, first C, largest C)], p None for classification (one search from
    LIBLINEAR's calc_start_C, or the given start_C), and for -s 11 one search per p, from 19/20 of max |y| (or
    the given start_p) down to 0 in 20 steps, as LIBLINEAR's find_parameters."""
    l = ds.n_rows
    if params.spec.task != "regression":
        if start_C is None or start_C <= 0:
            start_C = calc_start_C(ds, l, params)
        max_C = 1024.0
        return [(None, min(start_C, max_C), max_C)]
    weights = getattr(ds, "weights", None)
    y = ds.y if weights is None else ds.y[weights > 0]       # a row of weight 0 has no effect
    max_p = float(np.abs(y).max()) if y.size else 0.0
    num_p_steps = 20
    max_C = 1048576.0
    searches = []
    i = num_p_steps - 1
    if start_p is not None and start_p > 0:
        i = min(int(start_p / (max_p / num_p_steps)), i)
    while i >= 0:
        p = params.but(svr_p=i * max_p / num_p_steps)
        C0 = start_C if start_C is not None and start_C > 0 else calc_start_C(ds, l, p)
        searches.append((p.svr_p, min(C0, max_C), max_C))
        i -= 1
    return searches


def run_C_searches(searches, params, start_C, l, steps, reporter, measured=None):
    """The searches of csearch_searches over l rows, each C step's folds run by `steps` (see _search_C); what
    find_parameter_C returns. `measured`: (measure, labels, positive, y) of --measure (None: LIBLINEAR's)."""
    if params.spec.task != "regression":
        (_, C0, max_C), = searches
        return _search_C(steps, 0, params, l, C0, max_C, reporter, measured)
    from ..measures import better
    name = measured[0] if measured else "mse"
    best = (start_C, -1.0, math.nan)
    for k, (svr_p, C0, max_C) in enumerate(searches):
        p = params.but(svr_p=svr_p)
        C, score = _search_C(steps, k, p, l, C0, max_C, reporter, measured)
        if best[2] != best[2] or better(name, score, best[2]):
            best = (C, p.svr_p, score)
    return best


def csearch_fold(ds, fold, params, prev, measured=None):
    """Fold `fold` (of csearch_folds) at params.C: _fit on its training rows, warm-started from its (W, results)
    at the previous C (`prev`, None at the first C: w and alpha from 0), then its test rows predicted. Returns
    ((W, results): the next C's warm start, (changed, figure)): whether W moved from the previous C's (norm of the
    difference > 1e-15; False at the first C), and the number of test rows predicted right, or for regression the
    sum of their squared errors; with `measured` (--measure, run_C_searches'), (test rows, their predictions,
    their oriented decision values or None) in place of the figure."""
    tr, te, seed, labels, full_cls = fold
    warms = None
    if prev is not None:
        warms = [{"w": r.w, "alpha": None if r.alpha is None else r.alpha * C_RATIO} for r in prev[1]]
    W, results = _fit(ds, full_cls, labels, tr, params, Seeds(seed), as_reporter(), warms=warms, threads=1)
    model = linear_model(params, labels, ds.n_features, W, results)
    pred, dec = _decide_rows(ds, model, te, params.bias)
    pred = np.asarray(pred, np.float64)
    changed = prev is not None and float(np.sqrt(((W - prev[0]) ** 2).sum())) > 1e-15
    if measured is not None:
        positive = measured[2]
        return (W, results), (changed, (te, pred, None if positive is None else fold_scores(model, dec, pred,
                                                                                           positive)))
    if params.spec.task == "regression":
        return (W, results), (changed, float(((pred - ds.y[te]) ** 2).sum()))
    return (W, results), (changed, int(np.count_nonzero(pred == ds.y[te])))


class FoldSteps:
    """-C's C steps in this process: every fold's csearch_fold on `threads` threads, each fold's (W, results) kept
    here for its next C."""

    def __init__(self, ds, folds, threads, measured=None):
        self.ds, self.folds, self.threads, self.measured = ds, folds, threads, measured
        self.prev = [None] * len(folds)

    def __call__(self, params, k, s):
        if s == 0:                          # a new search (-s 11: the next p) starts from 0
            self.prev = [None] * len(self.folds)

        def task(i):
            return lambda r: csearch_fold(self.ds, self.folds[i], params, self.prev[i], self.measured)

        outcomes = _run([task(i) for i in range(len(self.folds))], self.threads, as_reporter())
        self.prev = [state for state, _ in outcomes]
        return [small for _, small in outcomes]


def measured_figure(outcomes, measured):
    """The --measure value of a C step: the measure over every fold's (test rows, predictions, scores)
    (csearch_fold's figures with `measured`), the whole set's predictions at once."""
    from ..measures import evaluate
    name, labels, positive, y = measured
    te = np.concatenate([f[0] for _, f in outcomes])
    pred = np.concatenate([f[1] for _, f in outcomes])
    scores = np.concatenate([f[2] for _, f in outcomes]) if positive is not None else None
    return evaluate(y[te], pred, labels, regression=labels is None, scores=scores).values[name]


def _search_C(steps, k, params, l, start_C, max_C, reporter, measured=None):
    """LIBLINEAR's find_parameter_C: C doubled from start_C up to max_C, every fold warm-started from its model
    at the previous C, stopped after five values of C that leave every w unchanged. `steps(params at C, k, s)`
    runs the folds at the s-th C of search k and returns per fold (changed, figure) (csearch_fold's). Returns
    (best_C, best score) over the l rows: the accuracy (a fraction) or, for regression, the mean squared error (the
    sum of the folds' sums of squared errors, in fold order, over l)."""
    regression = params.spec.task == "regression"
    num_unchanged_w = 0
    best_C, best_score = start_C, (math.inf if regression else 0.0)
    if measured is not None:
        from ..measures import TITLES, better
        name = measured[0]
        best_score = math.nan
    C = start_C
    s = 0
    while C <= max_C:
        outcomes = steps(params.but(C=C), k, s)
        if num_unchanged_w >= 0 and any(changed for changed, _ in outcomes):
            num_unchanged_w = -1
        log2c = math.log(C) / math.log(2.0)
        if measured is not None:
            score = measured_figure(outcomes, measured)
            if best_score != best_score or better(name, score, best_score):
                best_C, best_score = C, score
            p_text = f"\tp={params.svr_p:7.2f}" if regression else ""
            reporter.info(f"log2c={log2c:7.2f}{p_text}\t{TITLES[name]}={_g(score)}\n")
        elif regression:
            score = float(sum(figure for _, figure in outcomes)) / l
            if score < best_score:
                best_C, best_score = C, score
            reporter.info(f"log2c={log2c:7.2f}\tp={params.svr_p:7.2f}\tMean squared error={_g(score)}\n")
        else:
            score = float(sum(figure for _, figure in outcomes)) / l
            if score > best_score:
                best_C, best_score = C, score
            reporter.info(f"log2c={log2c:7.2f}\trate={_g(100.0 * score)}\n")
        num_unchanged_w += 1
        if num_unchanged_w == 5:
            break
        C *= C_RATIO
        s += 1
    if C > max_C:
        reporter.info("WARNING: maximum C reached.\n")
    return best_C, best_score


def _g(x):
    """C's %g."""
    return "%g" % x


def cv_summary(target, y, params, measures=(), scores=None, keep=False):
    """What -v prints and its --json result, for the predictions of cross_validation: LIBLINEAR's mean squared
    error and squared correlation for regression, the accuracy otherwise; then the --measure lines over the whole
    set's fold predictions (`scores`: their oriented decision values, for auc). Returns (text, dict, the
    measures.Summary: None without measures, unless `keep` (a plot))."""
    if params.spec.task == "regression":
        from ..predict import printf_g, regression_scores
        mse, scc = regression_scores(target, y)
        text = (f"Cross Validation Mean squared error = {printf_g(mse)}\n"         # C's %g: 0/0 is "-nan"
                f"Cross Validation Squared correlation coefficient = {printf_g(scc)}\n")
        result = {"cv_mse": mse, "cv_squared_correlation": scc}
    else:
        acc = 100.0 * float((target == y).sum()) / y.size
        text, result = f"Cross Validation Accuracy = {acc:g}%\n", {"cv_accuracy": acc}
    if not measures and not keep:
        return text, result, None
    from ..measures import evaluate
    summary = evaluate(y, target, measure_labels(y, params), regression=params.spec.task == "regression",
                       scores=scores)
    text += "".join(line + "\n" for line in summary.lines(measures, prefix="Cross Validation "))
    result.update(summary.json(measures, cv=True))
    return text, result, summary


def search_summary(found, params, measure=None):
    """What -C prints and its --json result, for what find_parameter_C found: LIBLINEAR's best C (and p, for
    regression) with its score (with --measure: the measure's value over the fold predictions)."""
    if params.spec.task == "regression":
        best_C, best_p, best = found
        if measure is not None and measure != "mse":
            from ..measures import TITLES
            return (f"Best C = {best_C:g} Best p = {best_p:g}  CV {TITLES[measure]} = {best:g}\n",
                    {"best_C": best_C, "best_p": best_p, f"cv_{measure}": best})
        return (f"Best C = {best_C:g} Best p = {best_p:g}  CV MSE = {best:g}\n",
                {"best_C": best_C, "best_p": best_p, "cv_mse": best})
    best_C, best = found
    if measure is not None and measure != "accuracy":
        from ..measures import TITLES
        return f"Best C = {best_C:g}  CV {TITLES[measure]} = {best:g}\n", {"best_C": best_C, f"cv_{measure}": best}
    return (f"Best C = {best_C:g}  CV accuracy = {100.0 * best:g}%\n",
            {"best_C": best_C, "cv_accuracy": 100.0 * best})
