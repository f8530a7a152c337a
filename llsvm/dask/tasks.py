"""What runs on a Dask cluster's workers (llsvm.dask's tasks) and the state a worker keeps between them.

Every task is a plain function of picklable arguments that Dask ships to a worker: it opens the llsvm binary file
there (mapped and verified once per worker process, `_opened`), runs one piece of a run (a one-vs-rest problem, a
class pair, a fold, a part's round, ...) with the solvers' public parts, and returns what the client needs, with
the text it printed as a buffered reporter's items (report.replay says them in order on the client). No row goes
back to the client. The state a run keeps on a worker between its tasks (CoCoA+'s dual variables, distributed
Newton's parts, a -C search's folds and warm starts) is held here under the run's id, dropped by `forget` and
never kept for a run that has ended (StateLost: the client starts the run again). The client's side (the session,
the plans, the model's assembly) is llsvm/dask/client.py; this module never imports it.
"""
import os
import threading
from types import SimpleNamespace

import numpy as np

from ..dataset import positive_rows
from ..errors import LLSVMError
from ..report import Reporter, as_reporter




_OPEN = {}


def source(path, weight_file=None):
    """What a task is given to open: the binary file's path, or (path, weight file) for a run with row weights
    (-W, docs/weights.md): every worker reads both where they are, as it reads the file."""
    return path if weight_file is None else (path, os.fspath(weight_file))


def _split(src):
    """(path, weight file or None) of a task's source."""
    return (src, None) if isinstance(src, (str, os.PathLike)) else (src[0], src[1])


def _dataset(path, params):
    """The file's rows on this worker (with their weights for a run with -W): mapped and verified once per process,
    as trainer.as_dataset gives them."""
    return _opened(path, params)[0]


def _trained(path, params):
    """The rows a training task trains on: _dataset's without its rows of weight 0 (trainer.weighted_rows, as
    trainer.train leaves them out), made once per process."""
    entry = _opened(path, params)
    if "trained" not in entry[1]:
        from ..solvers import trainer
        trainer.check_weighted(entry[0], params)
        entry[1]["trained"] = trainer.weighted_rows(entry[0])
    return entry[1]["trained"]


def _classes(path, params):
    """(labels, class of every row) of the rows trained on (_trained), as trainer.labels_of gives them: computed
    once per process."""
    entry = _opened(path, params)
    if params.spec.task not in entry[1]:
        from ..solvers import trainer
        entry[1][params.spec.task] = trainer.labels_of(_trained(path, params).y, params)
    return entry[1][params.spec.task]


def _stamp(path):
    st = os.stat(path)
    return path, st.st_size, st.st_mtime_ns


def _opened(src, params):
    from ..solvers.trainer import as_dataset
    path, weight_file = _split(src)
    key = (_stamp(path), None if weight_file is None else _stamp(weight_file))
    entry = _OPEN.get(key)
    if entry is None:
        _OPEN.clear()                          # one file mapped per worker process
        ds = as_dataset(path, None, params)
        if weight_file is not None:
            ds = ds.with_weights(_weights(weight_file, ds.n_rows))
        entry = _OPEN[key] = (ds, {})
    return entry


_WEIGHTS = {}


def _weights(weight_file, n_rows):
    """The weights of -W's file (io.read_weights) for n_rows rows, read once per process (the last file only)."""
    key = (_stamp(weight_file), n_rows)
    w = _WEIGHTS.get(key)
    if w is None:
        from ..io import read_weights
        _WEIGHTS.clear()
        w = _WEIGHTS[key] = read_weights(weight_file, n_rows)
    return w


def _text_reporter(quiet):
    """A reporter whose text is kept (in order, info and warnings) to be replayed by the client."""
    return Reporter(quiet=quiet, progress=False, out=lambda text: None, err=lambda text: None).buffered()


def describe(path, params):
    """Rows, features, non-zeros and the model's labels of the file (as train() groups them)."""
    ds = _dataset(path, params)
    labels, _ = _classes(path, params)
    return {"n_rows": ds.n_rows, "n_features": ds.n_features, "nnz": ds.nnz, "labels": labels}


def problem_task(path, params, k, seed, quiet):
    """Problem k of _fit's one-vs-rest split, trained with its seed: (FitResult without the dual variables, the
    text it printed)."""
    from .. import memory
    from ..solvers import trainer
    ds = _trained(path, params)
    labels, cls = _classes(path, params)
    rep = _text_reporter(quiet)
    sub = trainer.ovr_problems(ds, cls, labels, None, params, as_reporter())[0][k]
    memory.check_weights(ds.n_features, params.spec.work_vectors + 2)
    res = trainer.solve_binary(sub, params, seed, rep)
    res.alpha = None                             # one value per row: it stays on the worker
    return res, rep.items


def whole_task(path, params, quiet, want_metrics):
    """The whole run on one worker: (model, its --json metrics or None, the text it printed). A streaming solver
    streams the file, as llsvm-train does."""
    from ..solvers import registry, trainer
    rep = _text_reporter(quiet)
    if params.spec.streams:
        path = _split(path)[0]                   # the client refuses -W's file for a streamed run
        model = trainer.train(path, params=params, reporter=rep)
        metrics = registry.metrics(params.spec)(model, params) if want_metrics else None
        from ..binfmt import BinaryDataset
        ds = BinaryDataset(path)                 # its header: the shape
        ds.close()
    else:
        ds = _dataset(path, params)
        model = trainer.train(ds, params=params, reporter=rep)
        metrics = registry.metrics(params.spec)(model, params, ds) if want_metrics else None
    for r in (model.meta or {}).get("results", []):
        r.alpha = None                           # one value per row: it stays on the worker
    model.meta.pop("sv_indices", None)
    model.meta["shape"] = SimpleNamespace(n_rows=ds.n_rows, n_features=ds.n_features, nnz=ds.nnz)
    return model, metrics, rep.items


def _pairs_run(ds, params, reporter):
    """The one-vs-one run in parts (smo.PairsRun's interface) of a "pairs" spec, or -s h1tree's RBF node's: the
    spec's cluster_run."""
    from ..solvers import registry
    return registry.cluster_run(params.spec)(ds, params, reporter)


def outofcore_task(path, params, k, quiet):
    """One-vs-rest problem k of an out-of-core run (-s llsvm, streamsvm, bm), trained alone by its driver (`only`)
    on this worker, which streams or maps the file under the run's --memory: (its Part, whose FitResult comes
    without the dual variables, the text it printed)."""
    from ..solvers import trainer
    rep = _text_reporter(quiet)
    driver = trainer.make_driver(params, rep)
    driver.only = k
    part = driver.fit(path)
    part.result.alpha = None                     # one value per row: it stays on the worker
    return part, rep.items


def pairs_describe(path, params, quiet):
    """(the RNG state each pair starts from, rows, features, non-zeros, the set-up's text) of the one-vs-one run
    on the file (-s smo, nu_svc, the online lists, -s h1tree's RBF node); the states replay the pairs' draws in
    order (ovo.pair_states)."""
    from ..solvers.ovo import pair_states
    ds = _trained(path, params)
    rep = _text_reporter(quiet)
    run = _pairs_run(ds, params, rep)
    return pair_states(run, params.seed), ds.n_rows, ds.n_features, ds.nnz, rep.items


def pair_task(path, params, p, state, quiet):
    """Pair p of the one-vs-one run, its draws (-b 1's fold permutation, an online list's shuffle) from `state`,
    the RNG state it starts from in the one-process run: (its coefficients as _sparse_coef gives them, FitResult,
    (probA, probB) or None, its text)."""
    from ..solvers.common import Seeds
    ds = _trained(path, params)
    run = _pairs_run(ds, params, as_reporter())
    rep = _text_reporter(quiet)
    coef, res, prob, _ = run.pair(p, run.permutation(Seeds.at(state), p), rep)
    res.alpha = None                             # one value per row of the pair: it stays on the worker
    return _sparse_coef(coef, run.pairs.problems[p][3]), res, prob, rep.items


def metrics_task(path, params, model):
    """The --json record of a model of the file, where its rows are (a record that measures the model on them)."""
    from ..solvers import registry
    return registry.metrics(params.spec)(model, params, _dataset(path, params))


def tree_describe(path, params, quiet):
    """The set-up of -s h1tree's run on the file (h1tree.TreeRun; with --rbf-depth auto, its validation split):
    (labels, resolved options, num_features, whether auto, rows, non-zeros, the set-up's text)."""
    from ..solvers.h1tree import TreeRun
    ds = _trained(path, params)
    rep = _text_reporter(quiet)
    run = TreeRun(ds, params, rep)
    if run.auto:
        run.split(rep)
    return run.labels, run.opts, run.nf, run.auto, ds.n_rows, ds.nnz, rep.items


def tree_list_task(path, params, p, split, quiet):
    """The decision list of -s h1tree's pair p (TreeRun.pair_list) over every row, or (split) silently over the
    training rows of --rbf-depth auto's split: ((nodes, leaf, stalled), the text it printed)."""
    from ..solvers.h1tree import TreeRun
    run = TreeRun(_trained(path, params), params, None)
    rows = run.split(as_reporter())[0] if split else None
    rep = _text_reporter(quiet)
    return run.pair_list(p, None if split else rep, rows), rep.items


def tree_cuts_task(path, params, lists):
    """--rbf-depth auto's cuts (TreeRun.cuts) from the pairs' lists over the split's training rows (tree_list_task's
    results): the RBF node of those rows trained here, silently, and every list measured on the validation rows."""
    from ..solvers.h1tree import TreeRun
    run = TreeRun(_trained(path, params), params, None)
    return run.cuts([out for out, _ in lists], run.split(as_reporter()))


def _sparse_coef(coef, y):
    """(positions, values) of a pair's coefficients that pairs_model_task turns back into the same floats: the
    non-zeros, and every zero whose sign is not y's (alpha_t y_t is -0.0 for a zero alpha of class -1, which the
    model file prints as LIBSVM does)."""
    zero = coef == 0
    keep = ~zero | (np.signbit(coef) != (y < 0))
    nz = np.flatnonzero(keep)
    return nz, coef[nz]


def pairs_model_task(path, params, coefs, results, probs, quiet):
    """The SVMModel of the pairs' solutions (the run's `model`), made where the support vectors' rows are."""
    ds = _trained(path, params)
    run = _pairs_run(ds, params, as_reporter())
    dense = []
    for (nz, values), (_, _, _, y) in zip(coefs, run.pairs.problems):
        coef = np.where(y < 0, -0.0, 0.0)
        coef[nz] = values
        dense.append(coef)
    rep = _text_reporter(quiet)
    model = run.model(dense, results, probs, rep)
    return model, rep.items


_PARTS = {}


def _rows_of(runs, n_features):
    """The blocks of `runs` ((path, first block, end block), ...) read and verified into memory on this worker (its
    own rows only), as one CSRDataset: read once per process and kept (the last set of runs only)."""
    from ..binfmt import BinaryDataset
    from ..dataset import CSRDataset
    key = tuple((path, b0, b1, os.stat(path).st_mtime_ns) for path, b0, b1 in runs) + (n_features,)
    ds = _ROWS.get(key)
    if ds is None:
        _ROWS.clear()
        pieces = []
        for path, b0, b1 in runs:
            f = BinaryDataset(path)
            try:
                pieces.append(f.load_blocks(b0, b1))
            finally:
                f.close()
        if len(pieces) == 1:
            one = pieces[0]
            ds = CSRDataset(one.y, one.indptr, one.indices, one.values, n_features, source=one.source, check=False)
        else:
            offsets = np.cumsum([0] + [p.nnz for p in pieces[:-1]])
            indptr = np.concatenate([[0]] + [p.indptr[1:] + o for p, o in zip(pieces, offsets)]).astype(np.int64)
            ds = CSRDataset(np.concatenate([p.y for p in pieces]), indptr,
                            np.concatenate([p.indices for p in pieces]), np.concatenate([p.values for p in pieces]),
                            n_features, check=False)
        _ROWS[key] = ds
    return ds


_ROWS = {}


def _weighted_rows_of(runs, n_features, weights):
    """(_rows_of's rows with their weights, the rows of positive weight or None for all): weights None (no -W), or
    (weight file, the input's rows, (first row in the input, rows) of each run), each part's weights cut from the
    file where the worker reads it; a part whose every row weighs 0 trains on none (docs/weights.md)."""
    ds = _rows_of(runs, n_features)
    if weights is None:
        return ds, None
    weight_file, n_rows, spans = weights
    every = _weights(weight_file, n_rows)
    w = np.concatenate([every[a:a + n] for a, n in spans])
    if not (w > 0).any():
        return ds, np.zeros(0, np.int64)
    return ds.with_weights(w), positive_rows(w)


def _part(runs, n_features, labels, params, Cp, Cn, weights=None):
    """A CoCoA+ part on this worker: its blocks' rows (_rows_of) as a Subproblem (+1 for labels[0]'s rows), made
    once and kept for the run's rounds; with weights (-W), over its rows of positive weight, each with its C_i."""
    from ..solvers.common import Classes, Subproblem
    key = (tuple(runs), n_features, tuple(labels), Cp, Cn, params.bias, weights)
    sub = _PARTS.get(key)
    if sub is None:
        ds, rows = _weighted_rows_of(runs, n_features, weights)
        cls, _ = Classes(list(labels)).add(ds.y)        # the class of each row in the model's label order
        y = np.where(cls == 0, 1, -1).astype(np.int8)
        sub = _PARTS[key] = Subproblem(ds, y if rows is None else y[rows], Cp, Cn, rows=rows, bias=params.bias)
    return sub


def _newton_part(runs, n_features, labels, params, Cp, Cn, weights=None):
    """A distributed Newton part on this worker (dnewton.NewtonPart): its blocks' rows, for classification in
    LIBLINEAR's class grouping (labels[0]'s rows first, +1), for -s 11 over the targets; with weights (-W), its rows
    of positive weight, each with its C_i."""
    from ..solvers.common import Classes, Subproblem, class_grouping
    from ..solvers.dnewton import NewtonPart
    ds, keep = _weighted_rows_of(runs, n_features, weights)
    if labels is None:
        y = ds.y if keep is None else ds.y[keep]
        sub = Subproblem(ds, np.ones(y.size, np.int8), Cp, Cn, rows=keep, bias=params.bias, targets=y)
    else:
        cls, _ = Classes(list(labels)).add(ds.y)
        rows = class_grouping(cls, None).astype(np.int64)
        if keep is not None:
            rows = rows[ds.weights[rows] > 0] if keep.size else keep
        sub = Subproblem(ds, np.where(cls[rows] == 0, 1, -1).astype(np.int8), Cp, Cn, rows=rows, bias=params.bias)
    return NewtonPart(sub, params.solver, params.regularize_bias, params.svr_p)


class StateLost(LLSVMError):
    """A CoCoA+ part's dual variables (a -C fold's warm start) are not on the worker running its round (its step):
    its worker died and another took the task over. The client starts the run again, which gives the same rounds
    (steps)."""


_ALPHA = {}


def cocoa_task(run, k, r, part, w, sigma, epochs, seed, l1_loss):
    """Round r of part k of CoCoA+ run `run` (cocoa.local_round) on this worker: from the dual variables its round
    r - 1 left here (zeros at r = 0), which stay here; returns the rest of the round's result."""
    from ..solvers.cocoa import local_round
    sub = _part(*part)
    if r == 0:
        alpha = np.zeros(sub.l, np.float64)
    else:
        kept = _ALPHA.get((run, k), {}).get(r - 1)
        if kept is None:
            raise StateLost(f"part {k}'s dual variables of round {r - 1} are not on this worker")
        alpha = kept
    out = local_round(sub, alpha, w, sigma, epochs, seed, l1_loss)
    alpha_new = out.pop("alpha_k_new")
    with _STATE_LOCK:
        if run not in _ENDED:        # the client may have ended the run while this round ran: then keep nothing
            _ALPHA[(run, k)] = {r - 1: alpha, r: alpha_new}      # this round's and the one before
    return out


_NEWTON = {}


def newton_task(run, k, part, op, args):
    """Round op of part k of distributed Newton run `run` (dnewton.NewtonPart's methods) on this worker: "start"
    makes the part here from its blocks; the later rounds need the state the earlier ones left here."""
    from ..solvers.dnewton import part_call
    if op == "start":
        made = _newton_part(*part)
        with _STATE_LOCK:
            if run not in _ENDED:    # a start after the client ended the run (Ctrl-C, a restart) keeps nothing
                _NEWTON[(run, k)] = made
    held = _NEWTON.get((run, k))
    if held is None:
        raise StateLost(f"part {k}'s Newton state is not on this worker")
    return part_call(held, op, args)


def forget(run):
    """Drop a finished run's state (CoCoA+'s dual variables, Newton's parts, a -C search's folds and warm starts)
    from this worker; a -C task of the run that ends here later keeps nothing (the last 1,000 runs are remembered
    as ended)."""
    with _STATE_LOCK:
        _ENDED[run] = None
        if len(_ENDED) > 1000:
            del _ENDED[next(iter(_ENDED))]
        for state in (_ALPHA, _SEARCH, _NEWTON):
            for key in [key for key in state if key[0] == run]:
                del state[key]


def cv_task(path, params, nr_fold, i, quiet):
    """Fold i of -v (trainer.cv_fold; the folds drawn again from the seed): (its test rows, their predictions,
    their labels, its text: fold 0's begins with what the run prints before the folds)."""
    from ..solvers import trainer
    ds = _dataset(path, params)
    rep = _text_reporter(quiet)
    if i == 0:
        trainer.warn_ignored(params, rep)
    folds, fold_seeds = trainer.cv_plan(ds, nr_fold, params, rep if i == 0 else as_reporter())
    te, pred = trainer.cv_fold(ds, params, folds, fold_seeds, i, rep)
    return te, np.asarray(pred, np.float64), ds.y[te], rep.items


def grid_task(path, params, nr_fold, grid, w, f, quiet):
    """Width w and fold f of the grid search (grid.fold_cells): the plan is drawn again from the seed on the
    worker, the same on every one; (one record per C value, the plan's text: the folds' warnings)."""
    from ..solvers.grid import fold_cells, grid_plan
    ds = _dataset(path, params)
    rep = _text_reporter(quiet)
    plan = grid_plan(ds, nr_fold, grid, params, rep)
    return fold_cells(ds, plan, w, f), rep.items


_SEARCH = {}
_STATE_LOCK = threading.Lock()
_ENDED = {}


def csearch_plan_task(path, params, nr_fold, start_C, start_p):
    """-C's plan (trainer.csearch_folds and csearch_searches, as in one process): (the searches over C, the number
    of folds, the plan's text: the folds' warning)."""
    from ..solvers import trainer
    ds = _dataset(path, params)
    rep = _text_reporter(False)
    folds = trainer.csearch_folds(ds, nr_fold, params, rep)
    return trainer.csearch_searches(ds, params, start_C, start_p), len(folds), rep.items


def csearch_task(run, path, params, nr_fold, folds, k, s):
    """Folds `folds` (their indices, in order) at the s-th C (params.C) of search k (-s 11: the k-th p) of -C run
    `run` (trainer.csearch_fold), one after the other on this worker thread: each warm-started from the fold's
    (W, results) its step s - 1 left here, which stay here (the folds drawn here from the seed at the run's first
    task); returns per fold (changed, figure): a bool and a number. A step is one such task per worker thread, not
    one per fold: a round trip from the client per step rather than per fold (issue 44: on 2 workers, 5 folds went
    in three waves)."""
    from ..solvers import trainer
    out = []
    for i in folds:
        with _STATE_LOCK:
            if run in _ENDED:        # it started after the client ended the run (Ctrl-C, a restart)
                raise StateLost(f"-C run {run} has ended")
            plan = _SEARCH.get((run, None))
            prev = _SEARCH.get((run, i), {}).get((k, s - 1))
        if s > 0 and prev is None:
            raise StateLost(f"fold {i}'s warm start of step {s - 1} is not on this worker")
        ds = _dataset(path, params)
        if plan is None:
            plan = trainer.csearch_folds(ds, nr_fold, params, as_reporter())
        state, small = trainer.csearch_fold(ds, plan[i], params, prev)
        with _STATE_LOCK:
            if run not in _ENDED:    # the client may have ended the run while this fold ran: then keep nothing
                _SEARCH.setdefault((run, None), plan)
                _SEARCH[(run, i)] = {(k, s): state}   # the next step's warm start (a task run twice: StateLost)
        out.append(small)
    return out
