"""Training on a Dask cluster (`llsvm-train --dask ADDRESS`, `llsvm.dask.train(..., client=)`): docs/distributed.md.

The data stay where they are: the input is an llsvm binary file on storage every worker can read; each worker maps
it (the page cache holds one copy per machine) and no row passes through the client or the scheduler. What crosses
the network is parameters, seeds, weight vectors, certificates and the text the solvers print. Text input is
refused with the command that converts it: each one-vs-rest task would otherwise parse the whole text again, and a
binary file's blocks are what give a worker its own range of rows.

What is distributed, and how:
- more than two classes, a random-access linear type (-s 0..7, 21's kin): one task per class, each the problem
  `_fit` would train with the seed `_fit` would draw: the model is the single-process model bit for bit;
- anything else: the whole run as one task on a worker (the same model as in one process; not yet split).

Every task is a pure function of (file, parameters, seed): a task whose worker dies is run again by Dask on
another and gives the same result, so the run ends with the same model.
"""
import glob
import os
import time
from concurrent.futures import CancelledError
from types import SimpleNamespace

import numpy as np

from .errors import LLSVMError, ParameterError
from .report import Reporter, as_reporter

LOCAL = "local"


class ClusterError(LLSVMError):
    """The cluster could not be reached, or went away during a run (nothing is written)."""


def _distributed():
    try:
        import distributed
    except ImportError:
        raise ParameterError("--dask needs dask.distributed: pip install 'llsvm[dask]'") from None
    return distributed


def quiet_logs():
    """Silence Dask's own log lines in this process (reconnection attempts with their tracebacks): for a command,
    what went wrong is the one error message it prints. distributed sets up its loggers when imported."""
    import logging
    _distributed()
    for name in list(logging.root.manager.loggerDict) + ["distributed", "tornado", "asyncio"]:
        if name.split(".")[0] in ("distributed", "tornado", "asyncio"):
            logging.getLogger(name).setLevel(logging.CRITICAL + 1)


def connect(address=LOCAL, workers=None):
    """(client, cluster) for an address: `local` starts a LocalCluster of `workers` processes (default: the CPUs)
    of one thread each (cluster is then to be closed with the client); otherwise the scheduler at the address."""
    distributed = _distributed()
    if address in (None, LOCAL):
        n = int(workers or os.cpu_count() or 1)
        cluster = distributed.LocalCluster(n_workers=n, threads_per_worker=1, processes=True, dashboard_address=None,
                                           silence_logs=50)
        return distributed.Client(cluster), cluster
    if workers is not None:
        raise ParameterError("--workers applies to --dask local (a remote cluster has the workers it has)")
    try:
        return distributed.Client(address), None       # waits distributed.comm.timeouts.connect (Dask config)
    except (OSError, TimeoutError) as exc:
        raise ClusterError(f"can't connect to the Dask scheduler at {address}: {exc}") from None


def binary_files(data):
    """The input's paths: a path, a glob, or a list of them; each must be an llsvm binary file."""
    from .sources import sniff_path
    items = [data] if isinstance(data, (str, os.PathLike)) else list(data)
    paths = []
    for item in items:
        item = os.fspath(item)
        found = sorted(glob.glob(item)) if glob.has_magic(item) else [item]
        if not found:
            raise ParameterError(f"--dask: no file matches {item}")
        paths += found
    for path in paths:
        if not os.path.isfile(path):
            raise ParameterError(f"can't open input file {path}")
        if sniff_path(path) != "binary":
            raise ParameterError(f"{path}: --dask reads llsvm binary files, which every worker maps in place; "
                                 f"convert it first: llsvm-convert {path} {path}.bin")
    if len(paths) > 1:
        raise ParameterError(f"--dask: {len(paths)} files given; one-vs-rest and whole-run tasks read one file "
                             "(every worker needs all rows): join them with llsvm-convert")
    return [os.path.abspath(p) for p in paths]


# -- on the workers -----------------------------------------------------------------------------------------------
_OPEN = {}


def _dataset(path, params):
    """The file's rows on this worker: mapped and verified once per process, as trainer.as_dataset gives them."""
    from .solvers.trainer import as_dataset
    st = os.stat(path)
    key = (path, st.st_size, st.st_mtime_ns)
    ds = _OPEN.get(key)
    if ds is None:
        _OPEN.clear()                          # one file mapped per worker process
        ds = _OPEN[key] = as_dataset(path, None, params)
    return ds


def _text_reporter(quiet):
    """A reporter whose text is kept (in order, info and warnings) to be replayed by the client."""
    return Reporter(quiet=quiet, progress=False, out=lambda text: None, err=lambda text: None).buffered()


def describe(path, params):
    """Rows, features, non-zeros and the model's labels of the file (as train() groups them)."""
    from .solvers import trainer
    ds = _dataset(path, params)
    labels, _ = trainer._labels_of(ds.y, params)
    return {"n_rows": ds.n_rows, "n_features": ds.n_features, "nnz": ds.nnz, "labels": labels}


def problem_task(path, params, k, seed, quiet):
    """Problem k of _fit's one-vs-rest split, trained with its seed: (FitResult without the dual variables, the
    text it printed)."""
    from . import memory
    from .solvers import trainer
    ds = _dataset(path, params)
    labels, cls = trainer._labels_of(ds.y, params)
    rep = _text_reporter(quiet)
    sub = trainer.ovr_problems(ds, cls, labels, None, params, as_reporter())[0][k]
    memory.check_weights(ds.n_features, params.spec.work_vectors + 2)
    res = trainer.solve_binary(sub, params, seed, rep)
    res.alpha = None                             # one value per row: it stays on the worker
    return res, rep._items


def whole_task(path, params, quiet, want_metrics):
    """The whole run on one worker: (model, its --json metrics or None, the text it printed). A streaming solver
    streams the file, as llsvm-train does."""
    from .solvers import registry, trainer
    rep = _text_reporter(quiet)
    if params.spec.streams:
        model = trainer.train(path, params=params, reporter=rep)
        metrics = registry.metrics(params.spec)(model, params) if want_metrics else None
    else:
        ds = _dataset(path, params)
        model = trainer.train(ds, params=params, reporter=rep)
        metrics = registry.metrics(params.spec)(model, params, ds) if want_metrics else None
    for r in (model.meta or {}).get("results", []):
        r.alpha = None                           # one value per row: it stays on the worker
    model.meta.pop("sv_indices", None)
    return model, metrics, rep._items


def pairs_describe(path, params, quiet):
    """(pairs, rows, features, non-zeros, the set-up's text) of LIBSVM's one-vs-one run on the file."""
    from .solvers.smo import PairsRun
    ds = _dataset(path, params)
    rep = _text_reporter(quiet)
    run = PairsRun(ds, params, rep)
    return len(run.pairs.problems), ds.n_rows, ds.n_features, ds.nnz, rep._items


def pair_task(path, params, p, quiet):
    """Pair p of smo.PairsRun, its -b 1 permutation drawn as the one-process run draws it (after those of the pairs
    before it): (its coefficients as _sparse_coef gives them, FitResult, (probA, probB) or None, its text)."""
    from .solvers.common import Seeds
    from .solvers.smo import PairsRun
    ds = _dataset(path, params)
    run = PairsRun(ds, params, as_reporter())
    seeds = Seeds(params.seed)
    for q in range(p):
        run.permutation(seeds, q)
    rep = _text_reporter(quiet)
    coef, res, prob, _ = run.pair(p, run.permutation(seeds, p), rep)
    res.alpha = None                             # one value per row of the pair: it stays on the worker
    return _sparse_coef(coef, run.pairs.problems[p][3]), res, prob, rep._items


def _sparse_coef(coef, y):
    """(positions, values) of a pair's coefficients that pairs_model_task turns back into the same floats: the
    non-zeros, and every zero whose sign is not y's (alpha_t y_t is -0.0 for a zero alpha of class -1, which the
    model file prints as LIBSVM does)."""
    zero = coef == 0
    keep = ~zero | (np.signbit(coef) != (y < 0))
    nz = np.flatnonzero(keep)
    return nz, coef[nz]


def pairs_model_task(path, params, coefs, results, probs, quiet):
    """The SVMModel of the pairs' solutions (smo.PairsRun.model), made where the support vectors' rows are."""
    from .solvers.smo import PairsRun
    ds = _dataset(path, params)
    run = PairsRun(ds, params, as_reporter())
    dense = []
    for (nz, values), (_, _, _, y) in zip(coefs, run.pairs.problems):
        coef = np.where(y < 0, -0.0, 0.0)
        coef[nz] = values
        dense.append(coef)
    rep = _text_reporter(quiet)
    model = run.model(dense, results, probs, rep)
    return model, rep._items


def cv_describe(path, params, nr_fold, quiet):
    """(folds, rows, features, non-zeros, the text before the folds' work) of -v on the file."""
    from .solvers import trainer
    ds = _dataset(path, params)
    rep = _text_reporter(quiet)
    trainer._warn_ignored(params, rep)
    folds, _ = trainer.cv_plan(ds, nr_fold, params, rep)
    return len(folds), ds.n_rows, ds.n_features, ds.nnz, rep._items


def cv_task(path, params, nr_fold, i, quiet):
    """Fold i of -v (trainer.cv_fold; the folds drawn again from the seed): (its test rows, their predictions,
    their labels, its text)."""
    from .solvers import trainer
    ds = _dataset(path, params)
    folds, fold_seeds = trainer.cv_plan(ds, nr_fold, params, as_reporter())
    rep = _text_reporter(quiet)
    te, pred = trainer.cv_fold(ds, params, folds, fold_seeds, i, rep)
    return te, np.asarray(pred, np.float64), ds.y[te], rep._items


def grid_describe(path, params, nr_fold, grid, quiet):
    """(rows, features, non-zeros, folds, the folds' text) of a grid search on the file."""
    from .solvers.grid import grid_plan
    ds = _dataset(path, params)
    rep = _text_reporter(quiet)
    plan = grid_plan(ds, nr_fold, grid, params, rep)
    return ds.n_rows, ds.n_features, ds.nnz, len(plan.folds), rep._items


def grid_task(path, params, nr_fold, grid, w, f):
    """Width w and fold f of the grid search (grid.fold_cells): the plan is drawn again from the seed on the
    worker, the same on every one; one record per C value."""
    from .solvers.grid import fold_cells, grid_plan
    ds = _dataset(path, params)
    return fold_cells(ds, grid_plan(ds, nr_fold, grid, params, as_reporter()), w, f)


# -- on the client ------------------------------------------------------------------------------------------------
def train_command(path, req, grid, reporter):
    """llsvm-train --dask: the model, the GridResult of --grid, or -v's cross_validation result; Dask's own log
    lines silenced (quiet_logs)."""
    quiet_logs()
    if grid is None and req.nr_fold is not None:
        return cross_validation(path, req.nr_fold, address=req.dask, workers=req.workers, params=req.params,
                                reporter=reporter)
    if grid is not None:
        return grid_search(path, req.nr_fold or 5, grid, address=req.dask, workers=req.workers, params=req.params,
                           reporter=reporter)
    return train(path, address=req.dask, workers=req.workers, params=req.params, reporter=reporter,
                 want_metrics=bool(req.json_file))


class _Session:
    """The client of a call: the one given, or one connect() makes (closed on the way out)."""

    def __init__(self, client, address, workers):
        self.own = client is None
        self.cluster = None
        if self.own:
            client, self.cluster = connect(address, workers)
        self.client = client
        self.address = getattr(client, "scheduler", None) and client.scheduler.address or address

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self.own:
            _close(self.client, self.cluster)

    def gather(self, futures):
        return _gather(self.client, futures, self.address)


def cross_validation(data, nr_fold, *, client=None, address=LOCAL, workers=None, params=None, reporter=None,
                     say=None, warn=None, **kw):
    """trainer.cross_validation on the cluster, one task per fold: a namespace with target (every row's prediction
    from the fold leaving it out, as in one process), y (the rows' labels), shape and meta."""
    from .solvers import trainer
    params = trainer.checked_params(params, kw)
    trainer.cv_check(params)
    rep = as_reporter(reporter, say, warn)
    (path,) = binary_files(data)
    with _Session(client, address, workers) as s:
        n_folds, n_rows, n_features, nnz, items = s.gather(
            [s.client.submit(cv_describe, path, params, nr_fold, rep.quiet, pure=False)])[0]
        _replay(items, rep)
        done = s.gather([s.client.submit(cv_task, path, params, nr_fold, i, rep.quiet, pure=False)
                         for i in range(n_folds)])
        n_workers = _workers(s.client)
    target, y = np.empty(n_rows, np.float64), np.empty(n_rows, np.float64)
    for te, pred, y_te, items in done:
        _replay(items, rep)
        target[te] = pred
        y[te] = y_te
    return SimpleNamespace(target=target, y=y, shape=SimpleNamespace(n_rows=n_rows, n_features=n_features, nnz=nnz),
                           meta={"dask": {"workers": n_workers, "tasks": n_folds, "split": "one task per fold"}})


def grid_search(data, nr_fold, grid, *, client=None, address=LOCAL, workers=None, params=None, reporter=None,
                say=None, warn=None, **kw):
    """llsvm.solvers.grid.grid_search on the cluster: one task per kernel width and fold, each training every C
    on the fold (sharing the kernel state, as in one process); the same cells as in one process (the times are
    the workers')."""
    from .solvers.grid import GridPlan, grid_cells, grid_request
    params, grid = grid_request(grid, params, kw)
    rep = as_reporter(reporter, say, warn)
    (path,) = binary_files(data)
    with _Session(client, address, workers) as s:
        n_rows, n_features, nnz, n_folds, items = s.gather(
            [s.client.submit(grid_describe, path, params, nr_fold, grid, rep.quiet, pure=False)])[0]
        _replay(items, rep)
        plan = GridPlan.make(params, grid, [None] * n_folds, None)     # the folds' rows stay on the workers
        futures = [[s.client.submit(grid_task, path, params, nr_fold, grid, w, f, pure=False)
                    for f in range(n_folds)] for w in range(len(plan.widths))]
        flat = s.gather([x for row in futures for x in row])
        n_workers = _workers(s.client)
    runs = [flat[w * n_folds:(w + 1) * n_folds] for w in range(len(plan.widths))]
    result = grid_cells(plan, n_rows, runs)
    result.shape = SimpleNamespace(n_rows=n_rows, n_features=n_features, nnz=nnz)
    result.meta = {"dask": {"workers": n_workers, "tasks": len(flat), "split": "one task per kernel width and fold"}}
    return result


def _pairs(client, address, path, params, rep, n_workers, t0):
    """LIBSVM's one-vs-one run: one task per pair, then the model on a worker; stdout as in one process."""
    n_pairs, n_rows, n_features, nnz, items = _gather(
        client, [client.submit(pairs_describe, path, params, rep.quiet, pure=False)], address)[0]
    _replay(items, rep)
    done = _gather(client, [client.submit(pair_task, path, params, p, rep.quiet, pure=False)
                            for p in range(n_pairs)], address)
    coefs, results, probs = [], [], []
    for coef, res, prob, items in done:
        _replay(items, rep)
        coefs.append(coef)
        results.append(res)
        probs.append(prob)
    model, items = _gather(client, [client.submit(pairs_model_task, path, params, coefs, results, probs, rep.quiet,
                                                  pure=False)], address)[0]
    _replay(items, rep)
    model.meta["dask"] = {"workers": n_workers, "tasks": n_pairs + 2, "split": "one task per class pair",
                          "rounds": 1, "bytes_down_per_task": 0,
                          "bytes_up_per_task": max((12 * c[0].size for c in coefs), default=0),
                          "train_seconds": time.perf_counter() - t0}
    model.meta["shape"] = SimpleNamespace(n_rows=n_rows, n_features=n_features, nnz=nnz)
    return model


def _replay(items, reporter):
    for is_info, text in items:
        (reporter.info if is_info else reporter.warning)(text)


def _gather(client, futures, address):
    """The futures' results in order; Ctrl-C cancels them (the cluster stops working for us) and goes on up."""
    distributed = _distributed()
    try:
        return client.gather(futures)
    except (KeyboardInterrupt, SystemExit):          # Ctrl-C, or the CLI's signal handler (exit 130 / 143)
        client.cancel(futures)
        raise
    except (distributed.comm.CommClosedError, CancelledError, OSError, TimeoutError) as exc:
        # the scheduler went away (Dask cancels every future of a client that lost it)
        reason = str(exc).splitlines()[-1] if str(exc) else type(exc).__name__
        raise ClusterError(f"the Dask cluster at {address} went away during the run ({reason}); no model written") \
            from None


def _workers(client):
    return len(client.scheduler_info(n_workers=-1)["workers"]) if hasattr(client, "scheduler_info") else 0


def train(data, *, client=None, address=LOCAL, workers=None, params=None, reporter=None, say=None, warn=None,
          want_metrics=False, **kw):
    """Train on the cluster of `client` (or one `connect(address, workers)` makes and closes). `data`: an llsvm
    binary file (a path, a glob or a one-element list). Parameters as llsvm.train's. Returns a Model whose
    .meta["dask"] says what ran where: tasks, workers, bytes sent down and up per task; with want_metrics, also
    .meta["metrics"] (the --json record, for whole-run tasks computed on the worker)."""
    from .solvers import trainer
    params = trainer.checked_params(params, kw)
    rep = as_reporter(reporter, say, warn)
    (path,) = binary_files(data)
    with _Session(client, address, workers) as s:
        return _train(s.client, s.address, path, params, rep, want_metrics, reporter is None and say is None)


def _close(client, cluster):
    """Close what train() opened; a scheduler that went away leaves nothing to close."""
    try:
        client.close(timeout=5)
    except Exception:           # noqa: BLE001 (the scheduler is gone: there is nothing left to say to it)
        pass
    if cluster is not None:
        cluster.close()


def _train(client, address, path, params, rep, want_metrics, silent):
    from .solvers import trainer
    from .solvers.common import Seeds, class_costs
    t0 = time.perf_counter()
    n_workers = _workers(client)
    spec = params.spec
    if spec.driver_ref == "smo:fit":
        model = _pairs(client, address, path, params, rep, n_workers, t0)
        trainer._warn_unconverged(silent, model.meta["results"])
        return model
    ovr = spec.access == "random" and not spec.streams
    if ovr:
        info = _gather(client, [client.submit(describe, path, params, pure=False)], address)[0]
        if info["n_rows"] == 0:
            raise ParameterError("no training data")
        trainer._warn_ignored(params, rep)
        labels = info["labels"]
        if labels is not None:
            class_costs(params.C, params.weights, labels, rep)          # the weights' warnings, once
        count = trainer.problem_count(params, labels)
    if not ovr or count <= 1:
        # not split (yet): the whole run as one task, the same model as in one process
        model, metrics, items = _gather(client, [client.submit(whole_task, path, params, rep.quiet, want_metrics,
                                                               pure=False)], address)[0]
        _replay(items, rep)
        model.meta["dask"] = {"workers": n_workers, "tasks": 1, "split": "whole run", "rounds": 1,
                              "bytes_down_per_task": 0, "bytes_up_per_task": 0}
        if metrics is not None:
            model.meta["metrics"] = metrics
        trainer._warn_unconverged(silent, model.meta.get("results", []))
        return model
    seeds = Seeds(params.seed)
    task_seeds = [seeds.next() for _ in range(count)]
    futures = [client.submit(problem_task, path, params, k, task_seeds[k], rep.quiet, pure=False)
               for k in range(count)]
    done = _gather(client, futures, address)
    results = []
    for res, items in done:
        _replay(items, rep)
        results.append(res)
    trainer._warn_unconverged(silent, results)
    W = np.stack([r.w for r in results], axis=1)
    model = trainer._model(params, labels, info["n_features"], W, results)
    model.meta["dask"] = {"workers": n_workers, "tasks": count, "split": "one task per class", "rounds": 1,
                          "bytes_down_per_task": 0, "bytes_up_per_task": 8 * int(W.shape[0]),
                          "train_seconds": time.perf_counter() - t0}
    model.meta["shape"] = SimpleNamespace(n_rows=info["n_rows"], n_features=info["n_features"], nnz=info["nnz"])
    return model
