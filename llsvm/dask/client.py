"""The client's side of training on a Dask cluster (llsvm.dask): the session, the plans and the model's assembly.

A Session is the client of a call: the one given (a dask.distributed Client) or one `connect` makes, for
`local` a LocalCluster of one-thread worker processes (bounded by the CPUs and the memory: local_workers) with no
dashboard and its scratch space in a directory of its own, removed when it closes; for an address, the scheduler
there (check_address refuses a malformed one before connecting). The input is llsvm binary files every worker can
read (binary_files), of which the client reads the headers and footers only (headers). How a run is split is the
solver's spec's (SolverSpec.cluster: classes, cocoa, newton, pairs, tree, whole); the tasks are
llsvm/dask/tasks.py's. The plans here submit them, gather their results in order (_gather: Ctrl-C cancels them, a
lost cluster is a ClusterError), say the text they printed, start again a run that lost a worker's state
(StateLost), and assemble the model as the single-process run does.
"""
import contextlib
import glob
import os
import threading
import time
import weakref
from concurrent.futures import CancelledError
from types import SimpleNamespace

import numpy as np

from ..errors import LLSVMError, ParameterError
from ..report import as_reporter, replay
from .tasks import (StateLost, source, cocoa_task, csearch_plan_task, csearch_task, cv_task, describe, forget, grid_task,
                    metrics_task, newton_task, outofcore_task, pair_task, pairs_describe, pairs_model_task,
                    problem_task, tree_cuts_task, tree_describe, tree_list_task, whole_task)


LOCAL = "local"
COCOA_MAX_ROUNDS = 1000          # CoCoA+'s rounds at most when --max-iter is not given
MAX_RESTARTS = 3                 # CoCoA+ runs started again after losing a worker's state, at most


class ClusterError(LLSVMError):
    """The cluster could not be reached, or went away during a run (nothing is written)."""


def _distributed():
    try:
        import distributed
    except ImportError:
        raise ParameterError("--dask needs dask.distributed: pip install 'llsvm[dask]'") from None
    return distributed


def quiet_logs():
    """Silence Dask's own log lines and Python warnings in this process (reconnection attempts with their
    tracebacks, a port in use): for a command, what went wrong is the one error message it prints. distributed sets
    up its loggers when imported."""
    import logging
    import warnings
    _distributed()
    for name in list(logging.root.manager.loggerDict) + ["distributed", "tornado", "asyncio"]:
        if name.split(".")[0] in ("distributed", "tornado", "asyncio"):
            logging.getLogger(name).setLevel(logging.CRITICAL + 1)
    warnings.filterwarnings("ignore", module=r"(distributed|dask)(\.|$)")       # its UserWarnings too


# a LocalCluster's worker process holds about 75 MiB with distributed, NumPy and llsvm loaded (measured here); its
# task's arrays come on top: the machine's available memory over WORKER_MEMORY is the most --workers it runs
WORKER_MEMORY = 128 << 20
# more worker processes than CPUs take turns on them (a CoCoA+ run's parts are the workers, so a few more than
# the CPUs still try a split on a small machine); beyond WORKERS_PER_CPU a CPU they would only cost start-up time
# (about 0.7 s a worker on 2 CPUs) and memory
WORKERS_PER_CPU = 4


def local_workers(workers=None):
    """The worker processes of `--dask local --workers N` (None: one a CPU, fewer when the memory available holds
    fewer); a ParameterError, naming both bounds, for more than WORKERS_PER_CPU a CPU or than the machine's
    available memory holds at WORKER_MEMORY a worker: refused before any of them starts."""
    from ..memory import format_size, machine_available
    from ..options import check_count
    from ..params import usable_cpus
    cpus = usable_cpus()
    free = machine_available()
    by_memory = None if free is None else max(1, free // WORKER_MEMORY)
    if workers is None:
        return min(cpus, by_memory or cpus)
    check_count("--workers", workers, high=None)
    by_cpus = WORKERS_PER_CPU * cpus
    if workers <= min(by_cpus, by_memory or by_cpus):
        return int(workers)
    memory = "unknown memory" if free is None else \
        f"{by_memory} for the memory ({format_size(free)} available, {format_size(WORKER_MEMORY)} a worker)"
    raise ParameterError(f"--workers {workers} is more than this machine can run: at most {by_cpus} for the CPUs "
                         f"({WORKERS_PER_CPU} a CPU, {cpus} CPU{'s' if cpus > 1 else ''}) and {memory}")


def check_address(address):
    """Refuse, before anything connects, an address no scheduler can have (ParameterError, "--dask 'ADDRESS':
    why"): one Dask cannot parse, of a scheme it does not know or cannot use here, or a port out of range. (Left
    to Dask, each was an exception of its own from deep inside the connection: unknown address scheme, missing
    port number, ...) Needs distributed: its registry knows the schemes (plug-ins included)."""
    _distributed()
    from distributed.comm import addressing, registry
    from ..errors import quote
    shown = f"--dask {quote(address)}"
    usage = "give 'local' or a scheduler's address, tcp://HOST:PORT"
    if not address.strip():
        raise ParameterError(f"{shown}: no address; {usage}")
    scheme, loc = addressing.parse_address(address)
    try:
        backend = registry.get_backend(scheme)
    except ValueError:
        raise ParameterError(f"{shown}: unknown address scheme {quote(scheme)} (Dask knows "
                             f"{', '.join(s + '://' for s in sorted(registry.backends))}); {usage}") from None
    if scheme == "inproc":
        raise ParameterError(f"{shown}: an inproc:// scheduler runs inside one process, out of a command's reach; "
                             f"{usage}")
    try:
        backend.get_connector()
    except (TypeError, ImportError, NotImplementedError):       # ucx:// without its package (distributed-ucxx)
        raise ParameterError(f"{shown}: this Dask installation cannot connect to {scheme}:// addresses; "
                             f"{usage}") from None
    try:
        _, port = backend.get_address_host_port(loc)
    except (ValueError, TypeError, NotImplementedError) as exc:
        raise ParameterError(f"{shown}: not an address Dask can connect to ({exc}); {usage}") from None
    if not 0 < port < 65536:
        raise ParameterError(f"{shown}: port {port} is out of range (1 to 65535); {usage}")
    if scheme == "tls":                         # (wss:// goes without: the system's certificates)
        from distributed.security import Security
        if Security().get_connection_args("client").get("ssl_context") is None:
            raise ParameterError(f"{shown}: a tls:// scheduler needs Dask's TLS configuration "
                                 "(distributed.comm.tls: ca-file, client.cert, client.key)")


def connect(address=LOCAL, workers=None):
    """(client, cluster) for an address: `local` starts a LocalCluster of `workers` processes (default: the CPUs;
    at most local_workers' bounds) of one thread each (cluster is then to be closed with the client: _close);
    otherwise the scheduler at the address (check_address)."""
    if address in (None, LOCAL):
        n = local_workers(workers)
        return _local_cluster(_distributed(), n)
    if workers is not None:
        raise ParameterError("--workers applies to --dask local (a remote cluster has the workers it has)")
    distributed = _distributed()
    check_address(address)
    try:
        return distributed.Client(address), None       # waits distributed.comm.timeouts.connect (Dask config)
    except (OSError, TimeoutError) as exc:
        raise ClusterError(f"can't connect to the Dask scheduler at {address}: {exc}") from None


# cluster -> the removal of its scratch directory (run by _close, or when the cluster is collected or the
# interpreter exits)
_SCRATCH = weakref.WeakKeyDictionary()


def _local_cluster(distributed, n):
    """(client, cluster) of a LocalCluster of n worker processes of one thread each, which
    - starts no dashboard: its scheduler always serves HTTP, on 8787 unless told (dashboard_address=None still
      means 8787, and distributed warned "Port 8787 is already in use" when another cluster held it), so on a free
      port of 127.0.0.1, without the dashboard's pages;
    - keeps its scratch directories (dask-scratch-space: the scheduler's and each worker's, their lock files) in a
      new directory under llsvm's temporary directory, removed when the cluster is closed (_close) or, after a
      signal, by the console script (fileutil records it before it exists).
    A signal (the CLI's SystemExit) or an error while it starts closes what it started (the cluster object is
    made before its __init__ starts the scheduler and the workers, so it is there to close), its workers killed
    rather than waited for (_killing: the close waited for each to finish starting, then stopped it), and only
    then is the directory removed: a worker still starting would make it again."""
    import tempfile
    from ..fileutil import remove_tree, temporary_dir
    directory = temporary_dir(tempfile.gettempdir(), "llsvm-dask-")
    cluster = distributed.LocalCluster.__new__(distributed.LocalCluster)
    try:
        try:
            cluster.__init__(n_workers=n, threads_per_worker=1, processes=True, dashboard_address="127.0.0.1:0",
                             local_directory=directory,
                             scheduler_kwargs={"dashboard": False, "local_directory": directory}, silence_logs=50)
        except Exception as exc:                        # noqa: BLE001 (a worker that could not start: why)
            reason = str(exc).splitlines()[-1] if str(exc) else type(exc).__name__
            raise ClusterError(f"could not start a local Dask cluster of {n} worker{'s' if n > 1 else ''}: "
                               f"{reason}") from None
        _SCRATCH[cluster] = weakref.finalize(cluster, remove_tree, directory)
        return distributed.Client(cluster), cluster
    except BaseException:
        try:
            with _killing(cluster):
                cluster.close()
        except Exception:       # noqa: BLE001 (stopped before it had what close() needs: nothing started)
            pass
        finally:
            remove_tree(directory)
        raise


def quiet_resource_tracker():
    """Start multiprocessing's resource tracker, unless it runs already, without its UserWarnings (llsvm-train
    --dask local). A LocalCluster's nannies, in this process, talk to their spawned workers through queues, each
    made of three named semaphores (/dev/shm/sem.*: 12 for 2 workers), which the tracker, a process of its own,
    removes when this one dies without closing them (SIGKILL): it then warned "There appear to be 12 leaked
    semaphore objects to clean up at shutdown", about objects the user never made, once it had removed them. The
    tracker takes this process's -W options when it starts (and only then)."""
    import sys
    from multiprocessing import resource_tracker
    option = "ignore::UserWarning:multiprocessing.resource_tracker"
    sys.warnoptions.append(option)
    try:
        resource_tracker.ensure_running()
    finally:
        sys.warnoptions.remove(option)


def binary_files(data):
    """The input's paths: a path, a glob, or a list of them; each must be an llsvm binary file (not stdin: every
    worker reads the file itself)."""
    from ..sources import sniff_path
    items = [data] if isinstance(data, (str, os.PathLike)) else list(data)
    paths = []
    for item in items:
        item = os.fspath(item)
        if item == "-":
            raise ParameterError("--dask reads llsvm binary files, which every worker maps in place, not standard "
                                 "input: convert it to a file first: llsvm-convert - FILE.bin")
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
    return [os.path.abspath(p) for p in paths]


def one_file(paths):
    """The one file of a run whose every task needs all rows."""
    if len(paths) > 1:
        raise ParameterError(f"--dask: {len(paths)} files given; only a two-class -s 1 or -s 3 problem (CoCoA+) "
                             "reads several, the other runs need every row in each task: join them with "
                             "llsvm-convert")
    return paths[0]


def headers(paths):
    """What the files' headers and footers say, read on the client (no row): per file (path, rows of each block),
    the rows, features (the largest) and non-zeros, and the labels as train() groups them (group_classes over the
    label tables: the distinct values in order of first occurrence), None when a file has no label table (too
    many distinct values: regression targets)."""
    from ..binfmt import BinaryDataset
    from ..solvers.common import group_classes
    infos, seen, n_rows, n_features, nnz = [], [], 0, 0, 0
    for path in paths:
        f = BinaryDataset(path)
        try:
            infos.append((path, [int(r) for r in f.block_rows]))
            seen = None if seen is None or f.labels is None else seen + list(f.labels)
            n_rows, n_features, nnz = n_rows + f.n_rows, max(n_features, f.n_features), nnz + f.nnz
        finally:
            f.close()
    labels = None if seen is None else group_classes(np.array(seen, np.float64))[0]
    return SimpleNamespace(infos=infos, labels=labels, n_rows=n_rows, n_features=n_features, nnz=nnz)


def weighted_source(path, weight_file, head, params):
    """What the tasks open: the file's path, or with -W's weight file (docs/weights.md) the pair (path, weight file)
    that every worker reads where it is, as it reads the file. The file is read here first (its errors at file and
    line, its count against the input's rows; the solver must take weights), and the input's rows are noted on
    `head` (head.weights: the file and the rows it weighs)."""
    head.weights = None
    if weight_file is None:
        return path
    from ..io import read_weights
    from ..solvers import trainer
    w = read_weights(weight_file, head.n_rows)
    trainer.check_weighted(SimpleNamespace(weights=w), params)
    if params.spec.streams:
        raise ParameterError(f"-W: -s {params.spec.name} streams its binary file on the cluster and reads no weight "
                             "file there (docs/weights.md)")
    head.weights = (os.path.abspath(weight_file), head.n_rows)
    return source(path, head.weights[0])


def _two_class_dual(params, head):
    """Whether the run is one two-class -s 1 / -s 3 problem."""
    return params.spec.cluster == "cocoa" and head.labels is not None and head.labels.size <= 2


def _two_class_primal(params, head):
    """Whether the run is one two-class -s 0 / -s 2 problem, or -s 11 (distributed Newton)."""
    if params.spec.cluster != "newton":
        return False
    return params.spec.task == "regression" or (head.labels is not None and head.labels.size == 2)


# the reporter whose bars show the tasks of the Session running (a bar per _gather; none outside a Session)
_progress = threading.local()


class Session:
    """The client of a call: the one given, or one connect() makes (closed on the way out). `reporter`: its bars
    (issue 48) show the local cluster's start (its time) and, while the Session is entered, each gather's tasks
    (done of how many)."""

    def __init__(self, client, address, workers, reporter=None):
        self.own = client is None
        self.cluster = None
        self.reporter = reporter
        if self.own:
            waiting = reporter.waiting("starting a local Dask cluster" if address in (None, LOCAL) else
                                       f"connecting to {address}") if reporter is not None else \
                contextlib.nullcontext()
            with waiting:
                client, self.cluster = connect(address, workers)
        self.client = client
        self.address = getattr(client, "scheduler", None) and client.scheduler.address or address

    def __enter__(self):
        self._outer = getattr(_progress, "reporter", None)
        _progress.reporter = self.reporter
        return self

    def __exit__(self, exc_type, exc, tb):
        _progress.reporter = self._outer
        if self.own:
            _close(self.client, self.cluster, fast=exc_type is not None)

    def gather(self, futures):
        return _gather(self.client, futures, self.address)


def local_only(params):
    """Refuse a run that does not go to a cluster: -t 4, LIBSVM's precomputed kernel (its rows are the kernel
    matrix, whose serial numbers every row's checks need whole, in one process)."""
    if params.precomputed:
        raise ParameterError("-t 4 (precomputed kernel) does not run on a cluster (--dask): train without --dask")
    return params


def cross_validation(data, nr_fold, *, client=None, address=LOCAL, workers=None, params=None, reporter=None,
                     say=None, warn=None, weight_file=None, **kw):
    """trainer.cross_validation on the cluster, one task per fold: a namespace with target (every row's prediction
    from the fold leaving it out, as in one process), y (the rows' labels), shape and meta. weight_file: -W's
    file of row weights, which every worker reads (docs/weights.md)."""
    from ..solvers import trainer
    params = local_only(trainer.checked_params(params, kw))
    trainer.cv_check(params)
    rep = as_reporter(reporter, say, warn)
    path = one_file(binary_files(data))
    head = headers([path])
    n_rows, n_features, nnz = head.n_rows, head.n_features, head.nnz
    if n_rows == 0:
        raise ParameterError("no training data")
    src = weighted_source(path, weight_file, head, params)
    n_folds = min(nr_fold, n_rows)               # leave-one-out when there are more folds than rows
    with Session(client, address, workers, rep) as s:
        done = s.gather([s.client.submit(cv_task, src, params, nr_fold, i, rep.quiet, pure=False)
                         for i in range(n_folds)])
        n_workers = _workers(s.client)
    target, y = np.empty(n_rows, np.float64), np.empty(n_rows, np.float64)
    for te, pred, y_te, items in done:
        replay(items, rep)
        target[te] = pred
        y[te] = y_te
    return SimpleNamespace(target=target, y=y, shape=SimpleNamespace(n_rows=n_rows, n_features=n_features, nnz=nnz),
                           meta={"dask": {"workers": n_workers, "tasks": n_folds, "split": "one task per fold"}})


def grid_search(data, nr_fold, grid, *, client=None, address=LOCAL, workers=None, params=None, reporter=None,
                say=None, warn=None, weight_file=None, **kw):
    """llsvm.solvers.grid.grid_search on the cluster: one task per kernel width and fold, each training every C
    on the fold (sharing the kernel state, as in one process); the same cells as in one process (the times are
    the workers'). weight_file: -W's file of row weights, which every worker reads."""
    from ..solvers.grid import GridPlan, grid_cells, grid_request
    params, grid = grid_request(grid, params, kw)
    local_only(params)
    rep = as_reporter(reporter, say, warn)
    path = one_file(binary_files(data))
    if nr_fold < 2:
        raise ParameterError("n-fold cross validation: n must >= 2")
    head = headers([path])
    n_rows, n_features, nnz = head.n_rows, head.n_features, head.nnz
    if n_rows == 0:
        raise ParameterError("no training data")
    src = weighted_source(path, weight_file, head, params)
    n_folds = min(nr_fold, n_rows)               # LIBSVM's leave-one-out when there are more folds than rows
    plan = GridPlan.make(params, grid, [None] * n_folds, None)     # the folds' rows stay on the workers
    with Session(client, address, workers, rep) as s:
        futures = [[s.client.submit(grid_task, src, params, nr_fold, grid, w, f, True if w or f else rep.quiet,
                                    pure=False) for f in range(n_folds)] for w in range(len(plan.widths))]
        done = s.gather([x for row in futures for x in row])
        n_workers = _workers(s.client)
    replay(done[0][1], rep)                     # the folds' text, once (every task drew the same plan)
    flat = [records for records, _ in done]
    runs = [flat[w * n_folds:(w + 1) * n_folds] for w in range(len(plan.widths))]
    result = grid_cells(plan, n_rows, runs)
    result.shape = SimpleNamespace(n_rows=n_rows, n_features=n_features, nnz=nnz)
    result.meta = {"dask": {"workers": n_workers, "tasks": len(flat), "split": "one task per kernel width and fold"}}
    return result


class SearchResult(tuple):
    """What trainer.find_parameter_C returns ((best_C, best_rate) or (best_C, best_p, best_MSE)), with .shape (the
    rows, features and non-zeros of the input) and .meta (the "dask" record)."""


class _Resumed:
    """The reporter of a search that may start again: the lines an earlier start printed are not printed again (a
    start prints the same lines, in the same order)."""

    def __init__(self, reporter):
        self.reporter, self.printed, self.seen = reporter, 0, 0

    def again(self):
        self.seen = 0
        return self

    def info(self, text):
        self.seen += 1
        if self.seen > self.printed:
            self.printed = self.seen
            self.reporter.info(text)


class DaskFolds:
    """-C's C steps on the cluster (trainer.FoldSteps' interface): fold i runs at every C on its home, a thread of a
    worker, which keeps the fold's (W, results) for the next C. A step is one task per worker thread (its `group`:
    the folds whose home it is, run one after the other), all sent at once and gathered in one round trip: a bool
    and a number per fold. No task waits in a worker's queue (Dask would let an idle worker steal it, away from its
    warm start). When a fold's warm start is not on the worker running its task, a step raises StateLost."""

    def __init__(self, session, path, nr_fold, n_folds, run):
        self.s, self.path, self.nr_fold, self.run = session, path, nr_fold, run
        info = session.client.scheduler_info(n_workers=-1)["workers"]
        threads = {a: max(1, int(info[a].get("nthreads", 1))) for a in info}
        slots = [a for t in range(max(threads.values())) for a in sorted(threads) if threads[a] > t]
        self.home = [slots[i % len(slots)] for i in range(n_folds)]
        self.groups = [tuple(range(j, n_folds, len(slots))) for j in range(min(len(slots), n_folds))]
        self.tasks = 0

    def __call__(self, params, k, s):
        c = self.s.client
        futures = [c.submit(csearch_task, self.run, self.path, params, self.nr_fold, group, k, s,
                            workers=[self.home[group[0]]], allow_other_workers=True, pure=False)
                   for group in self.groups]
        out = [None] * len(self.home)
        for group, smalls in zip(self.groups, self.s.gather(futures)):
            for i, small in zip(group, smalls):
                out[i] = small
        self.tasks += len(futures)
        return out


def find_parameter_C(data, nr_fold, *, client=None, address=LOCAL, workers=None, params=None, reporter=None,
                     say=None, warn=None, start_C=None, start_p=None, weight_file=None, **kw):
    """trainer.find_parameter_C on the cluster: at each value of C one task per worker thread running the folds
    whose home it is (DaskFolds), each fold warm-started on its worker from its previous C (no row's value comes
    back: a bool and a number per fold); the same lines and the same values as in one process, as a SearchResult.
    A search that loses a worker (and a fold's warm start) starts again, at most MAX_RESTARTS times, without
    printing its lines twice. weight_file: -W's file of row weights, which every worker reads."""
    from ..solvers import trainer
    params = trainer.find_C_check(trainer.checked_params(params, kw))
    rep = as_reporter(reporter, say, warn)
    path = one_file(binary_files(data))
    head = headers([path])
    if head.n_rows == 0:
        raise ParameterError("no training data")
    path = weighted_source(path, weight_file, head, params)
    with Session(client, address, workers, rep) as s:
        searches, n_folds, items = s.gather([s.client.submit(csearch_plan_task, path, params, nr_fold, start_C,
                                                             start_p, pure=False)])[0]
        replay(items, rep)
        resumed = _Resumed(rep)
        for restart in range(MAX_RESTARTS + 1):
            run = f"llsvm-csearch-{os.getpid()}-{time.monotonic_ns()}"
            steps = DaskFolds(s, path, nr_fold, n_folds, run)
            try:
                found = trainer.run_C_searches(searches, params, start_C, head.n_rows, steps, resumed.again())
                break
            except StateLost:
                # a worker died with folds' warm starts: the same steps again on the workers there are now
                if restart == MAX_RESTARTS:
                    raise ClusterError(f"the C search lost workers {MAX_RESTARTS + 1} times; no result") from None
            finally:
                _forget(s.client, run)
        n_workers = _workers(s.client)
    result = SearchResult(found)
    result.shape = SimpleNamespace(n_rows=head.n_rows, n_features=head.n_features, nnz=head.nnz)
    result.meta = {"dask": {"workers": n_workers, "tasks": 1 + steps.tasks, "restarts": restart,
                            "split": "one task per worker thread and value of C (its folds)",
                            "bytes_down_per_task": 0, "bytes_up_per_task": 16 * len(steps.groups[0])}}
    return result


def _forget(client, run):
    """forget(run) on every worker; a cluster that went away (the run's error says so) has nothing left to drop."""
    if client.status != "running":
        return
    try:
        client.run(forget, run)
    except (OSError, TimeoutError, CancelledError):
        pass


class _PartsOnWorkers:
    """Parts of a run over the workers' blocks (CoCoA+, distributed Newton): part k is a run of blocks of the input,
    read by the worker it is placed on (its home, the workers in turn) and kept there with its state; a task on
    another worker (its home died) finds no state and raises StateLost."""

    def __init__(self, session, parts, addresses, run, w_size):
        self.s, self.parts, self.run, self.w_size = session, parts, run, w_size
        self.home = [addresses[k % len(addresses)] for k in range(len(parts))]

    def __len__(self):
        return len(self.parts)

    def _each(self, fn, per_part):
        """fn(*args) for every part's args, each on the part's home worker; the results in part order."""
        c = self.s.client
        return self.s.gather([c.submit(fn, *args, workers=[home], allow_other_workers=True, pure=False)
                              for args, home in zip(per_part, self.home)])


class DaskParts(_PartsOnWorkers):
    """CoCoA+'s workers on the cluster (cocoa.LocalParts' interface), each part kept with its dual variables. A
    round sends w with each task and gathers dw, the stopping figures and the certificate's sums: 8 (n_features + 1)
    bytes each way per part."""

    def __init__(self, session, parts, addresses, run, w_size):
        super().__init__(session, parts, addresses, run, w_size)
        self.r = 0

    def round(self, w, sigma, epochs, seeds, l1_loss):
        return self._each(cocoa_task, [(self.run, k, self.r, part, w, sigma, epochs, seed, l1_loss)
                                       for k, (part, seed) in enumerate(zip(self.parts, seeds))])

    def commit(self):
        self.r += 1

    def alpha(self):
        return None                          # it stays on the workers


class DaskNewtonParts(_PartsOnWorkers):
    """Distributed Newton's parts on the cluster (dnewton.LocalParts' interface), each kept with its state (X w, the
    Hessian's rows, X s)."""

    def __init__(self, session, parts, addresses, run, w_size):
        super().__init__(session, parts, addresses, run, w_size)
        self.rounds = 0

    def call(self, op, args):
        self.rounds += 1
        return self._each(newton_task, [(self.run, k, part, op, a)
                                        for k, (part, a) in enumerate(zip(self.parts, args))])


def block_parts(infos, n_parts):
    """The input's blocks (infos: per file (path, rows of each block)) cut into n_parts runs of consecutive blocks
    with about the same number of rows: per part a list of (path, first block, end block)."""
    blocks = [(path, b, int(r)) for path, rows in infos for b, r in enumerate(rows)]
    if len(blocks) < n_parts:
        raise ParameterError(f"--dask: the input has {len(blocks)} blocks for {n_parts} workers: write it with "
                             "smaller blocks (llsvm-convert --block-rows N)")
    total = sum(r for _, _, r in blocks)
    parts, cur, acc, k = [], [], 0, 0
    for i, (path, b, r) in enumerate(blocks):
        cur.append((path, b))
        acc += r
        left = len(blocks) - i - 1
        if k < n_parts - 1 and (acc >= total * (k + 1) / n_parts or left == n_parts - 1 - k):
            parts.append(cur)
            cur, k = [], k + 1
    parts.append(cur)
    runs = []
    for part in parts:
        merged = []
        for path, b in part:
            if merged and merged[-1][0] == path and merged[-1][2] == b:
                merged[-1] = (path, merged[-1][1], b + 1)
            else:
                merged.append((path, b, b + 1))
        runs.append(merged)
    return runs


def _row_parts(s, head, params, rep, n_parts):
    """What a run over the workers' blocks starts from (CoCoA+, distributed Newton): (addresses of the workers,
    the parts' arguments (runs of blocks, features, labels, parameters, Cp, Cn), the parts' count); the -wi
    warnings said once."""
    from ..solvers import trainer
    from ..solvers.common import class_costs
    infos, labels = head.infos, head.labels
    if head.n_rows == 0:
        raise ParameterError("no training data")
    trainer.warn_ignored(params, rep)
    if params.spec.task == "regression":
        labels, Cp, Cn = None, float(params.C), float(params.C)
    else:
        wC = class_costs(params.C, params.weights, labels, rep)
        Cp, Cn = float(wC[0]), float(wC[1]) if labels.size == 2 else float(params.C)
    addresses = sorted(s.client.scheduler_info(n_workers=-1)["workers"])
    # a part per worker (fewer when the input has fewer blocks: a small file is one block of 8 MiB)
    n_parts = n_parts or max(1, min(len(addresses), sum(len(rows) for _, rows in infos)))
    runs = block_parts(infos, n_parts)
    return addresses, [(tuple(r), head.n_features, labels, params, Cp, Cn) + _part_weights(head, r)
                       for r in runs], n_parts


def _part_weights(head, runs):
    """The weights argument of a part over `runs` (tasks._weighted_rows_of): () without -W, else ((weight file, the
    input's rows, (first row in the input, rows) of each run),)."""
    if head.weights is None:
        return ()
    first, at = {}, 0
    for path, rows in head.infos:
        first[path] = (at, [0] + list(np.cumsum(rows)))
        at += int(sum(rows))
    spans = tuple((first[p][0] + int(first[p][1][b0]), int(first[p][1][b1] - first[p][1][b0])) for p, b0, b1 in runs)
    return (head.weights + (spans,),)


def _restarting(s, what, attempt):
    """attempt(run id, workers' addresses) until it ends without losing a worker's state (StateLost: the same
    rounds again on the workers there are now), at most MAX_RESTARTS times more; each run's state forgotten on
    the workers after it. Returns (its result, restarts)."""
    addresses = sorted(s.client.scheduler_info(n_workers=-1)["workers"])
    for restart in range(MAX_RESTARTS + 1):
        run = f"llsvm-{what}-{os.getpid()}-{time.monotonic_ns()}"
        try:
            return attempt(run, addresses), restart
        except StateLost:
            if restart == MAX_RESTARTS:
                raise ClusterError(f"{what} lost workers {MAX_RESTARTS + 1} times; no model written") from None
            addresses = sorted(s.client.scheduler_info(n_workers=-1)["workers"])
        finally:
            s.client.run(forget, run)


def _row_model(params, head, labels, res, meta):
    from ..solvers import trainer
    model = trainer.linear_model(params, labels, head.n_features, res.w.reshape(-1, 1), [res])
    model.meta["dask"] = meta
    model.meta["shape"] = SimpleNamespace(n_rows=head.n_rows, n_features=head.n_features, nnz=head.nnz)
    return model


def _cocoa(s, head, params, rep, epochs, n_parts, t0):
    """A two-class -s 1 / -s 3 problem by CoCoA+ over the workers' blocks (llsvm.solvers.cocoa)."""
    from ..solvers.cocoa import solve_cocoa
    from ..solvers.common import report_finished, warn_max_iter
    addresses, parts, n_parts = _row_parts(s, head, params, rep, n_parts)
    n_features = head.n_features
    w_size = n_features + (1 if params.bias >= 0 else 0)
    max_rounds = params.max_iter or COCOA_MAX_ROUNDS
    res, restart = _restarting(s, "CoCoA+", lambda run, addr: solve_cocoa(
        DaskParts(s, parts, addr, run, w_size), params.solver == 3, eps=params.eps, max_iter=max_rounds,
        epochs=epochs, seed=params.seed))
    rep.info(f"CoCoA+: {n_parts} parts, sigma' = {n_parts}, {epochs} local epoch{'s' if epochs > 1 else ''} a "
             f"round; primal {res.primal:.6f}, dual {res.dual:.6f}, gap {res.gap:.6g}\n")
    report_finished(rep, res.n_iter, -res.dual, res.nSV)
    if not res.converged:
        warn_max_iter(rep)
    return _row_model(params, head, head.labels, res, {
        "workers": len(addresses), "tasks": n_parts * res.extra["calls"], "restarts": restart,
        "split": "CoCoA+ over the workers' blocks", "parts": n_parts, "rounds": res.extra["rounds"],
        "local_epochs": epochs, "bytes_down_per_task": 8 * w_size, "bytes_up_per_task": 8 * w_size,
        "bytes_per_round": res.extra["bytes_per_round"], "train_seconds": time.perf_counter() - t0})


def _newton(s, head, params, rep, n_parts, t0):
    """A two-class -s 0 / -s 2 problem, or -s 11, by distributed Newton over the workers' blocks
    (llsvm.solvers.dnewton): the single-process iterates up to the order of a sum."""
    from ..solvers.dnewton import solve_dnewton
    addresses, parts, n_parts = _row_parts(s, head, params, rep, n_parts)
    w_size = head.n_features + (1 if params.bias >= 0 else 0)
    max_iter = params.max_iter or params.spec.default_max_iter

    # the iterations' lines as they come (a run started again after a lost worker says them again)
    res, restart = _restarting(s, "Newton", lambda run, addr: solve_dnewton(
        DaskNewtonParts(s, parts, addr, run, w_size), params.solver, params.eps, max_iter, params.regularize_bias,
        rep, p=params.svr_p))
    rounds = res.extra["rounds"]
    return _row_model(params, head, None if params.spec.task == "regression" else head.labels, res, {
        "workers": len(addresses), "tasks": n_parts * rounds, "restarts": restart,
        "split": "distributed Newton over the workers' blocks", "parts": n_parts, "rounds": rounds,
        "newton_steps": res.n_iter, "cg_steps": res.extra["cg_steps"],
        "bytes_down_per_task": 8 * w_size, "bytes_up_per_task": 16 * w_size,
        "bytes_per_round": round(8 * (res.extra["doubles_up"] + res.extra["doubles_down"]) / max(rounds, 1)),
        "train_seconds": time.perf_counter() - t0})


def _pairs(client, address, path, params, rep, n_workers, t0):
    """A one-vs-one run (LIBSVM's, the online lists'): one task per pair, then the model on a worker; stdout as in
    one process."""
    states, n_rows, n_features, nnz, items = _gather(
        client, [client.submit(pairs_describe, path, params, rep.quiet, pure=False)], address)[0]
    replay(items, rep)
    n_pairs = len(states)
    done = _gather(client, [client.submit(pair_task, path, params, p, states[p], rep.quiet, pure=False)
                            for p in range(n_pairs)], address)
    coefs, results, probs = [], [], []
    for coef, res, prob, items in done:
        replay(items, rep)
        coefs.append(coef)
        results.append(res)
        probs.append(prob)
    model, items = _gather(client, [client.submit(pairs_model_task, path, params, coefs, results, probs, rep.quiet,
                                                  pure=False)], address)[0]
    replay(items, rep)
    model.meta["dask"] = {"workers": n_workers, "tasks": n_pairs + 2, "split": "one task per class pair",
                          "rounds": 1, "bytes_down_per_task": 0,
                          "bytes_up_per_task": max((12 * c[0].size for c in coefs), default=0),
                          "train_seconds": time.perf_counter() - t0}
    model.meta["shape"] = SimpleNamespace(n_rows=n_rows, n_features=n_features, nnz=nnz)
    return model


def _by_parts(client, address, path, head, params, rep, n_workers, t0, want_metrics=False):
    """The model of a run of the kernel or out-of-core solvers split into tasks by class pair or by class (None for
    the others): the one-vs-one runs, -s h1tree and the out-of-core solvers on more than two classes. -s h1tree's
    --json record measures the model on every row: with want_metrics, a task computes it (.meta["metrics"])."""
    split = params.spec.cluster
    classes = 0 if head.labels is None else int(head.labels.size)
    if split == "pairs":
        return _pairs(client, address, path, params, rep, n_workers, t0)
    if split == "tree" and classes > 2:
        model = _tree(client, address, path, params, rep, n_workers, t0)
        if want_metrics:
            model.meta["metrics"] = _gather(client, [client.submit(metrics_task, path, params, model, pure=False)],
                                            address)[0]
            model.meta["dask"]["tasks"] += 1
        return model
    if split == "classes" and params.spec.streams and classes > 2:
        return _outofcore_classes(client, address, path, head, params, rep, n_workers, t0)
    return None


def _tree(client, address, path, params, rep, n_workers, t0):
    """-s h1tree: a task per pair's decision list (with --rbf-depth auto, also a task per pair's list over the
    split's training rows and one for the cuts), the trees on the client, then the RBF node, when a tree ends in
    it, as -s smo's pairs are run (a task per pair, then its model on a worker); stdout as in one process."""
    from ..solvers import h1tree
    labels, opts, nf, auto, n_rows, nnz, items = _gather(
        client, [client.submit(tree_describe, path, params, rep.quiet, pure=False)], address)[0]
    replay(items, rep)
    n_pairs = len(h1tree.pairs_of(labels.size))
    futures = [client.submit(tree_list_task, path, params, p, False, rep.quiet, pure=False) for p in range(n_pairs)]
    if auto:
        split = [client.submit(tree_list_task, path, params, p, True, True, pure=False) for p in range(n_pairs)]
        futures.append(client.submit(tree_cuts_task, path, params, split, pure=False))
    done = _gather(client, futures, address)
    lists = [out for out, _ in done[:n_pairs]]
    for _, items in done[:n_pairs]:
        replay(items, rep)
    trees, records, need_rbf = h1tree.make_trees(labels, lists, done[n_pairs] if auto else None, opts, rep)
    rbf, rbf_tasks = None, 0
    if need_rbf:
        rbf = _pairs(client, address, path, params, rep, n_workers, t0)
        rbf_tasks = rbf.meta.pop("dask")["tasks"]
        del rbf.meta["shape"]
    model = h1tree.tree_model(labels, nf, trees, records, rbf, opts, params, rep)
    model.meta["dask"] = {"workers": n_workers, "tasks": 1 + n_pairs * (2 if auto else 1) + auto + rbf_tasks,
                          "split": "one task per class pair", "rounds": 1, "bytes_down_per_task": 0,
                          "bytes_up_per_task": max(12 * sum(n["idx"].size for n in nodes) for nodes, _, _ in lists),
                          "train_seconds": time.perf_counter() - t0}
    model.meta["shape"] = SimpleNamespace(n_rows=n_rows, n_features=nf, nnz=nnz)
    return model


def _outofcore_classes(client, address, path, head, params, rep, n_workers, t0):
    """An out-of-core run on more than two classes: one task per one-vs-rest problem, then the model as the
    driver makes it (its `assemble`), with what the run prints once and each problem's text in order."""
    from ..solvers import trainer
    count = int(head.labels.size)
    done = _gather(client, [client.submit(outofcore_task, path, params, k, rep.quiet, pure=False)
                            for k in range(count)], address)
    parts = [part for part, _ in done]
    results = [part.result for part in parts]
    driver = trainer.make_driver(params, rep)
    driver.print_once(parts[0].labels, results)
    for _, items in done:
        replay(items, rep)
    model = driver.assemble(results, parts[0].labels, parts[0].info)
    model.meta["dask"] = {"workers": n_workers, "tasks": count, "split": "one task per class", "rounds": 1,
                          "bytes_down_per_task": 0, "bytes_up_per_task": 8 * int(model.W.shape[0]),
                          "train_seconds": time.perf_counter() - t0}
    model.meta["shape"] = SimpleNamespace(n_rows=head.n_rows, n_features=head.n_features, nnz=head.nnz)
    return model


def _gather(client, futures, address):
    """The futures' results in order; Ctrl-C cancels them (the cluster stops working for us) and goes on up. The
    scheduler going away, and a task whose workers kept dying, are ClusterErrors; an OSError a task raised (a worker
    that cannot read the input) is an LLSVMError naming it; a task's LLSVMError goes on up as it is."""
    distributed = _distributed()
    reporter = getattr(_progress, "reporter", None)
    bar = reporter.bar(total=len(futures), desc="Dask tasks", unit="tasks") if reporter is not None else None
    try:
        if bar is not None and reporter.progress and futures:
            for _ in distributed.as_completed(futures):     # the bar advances as each task ends, in any order
                bar.update(1)
        return client.gather(futures)
    except (KeyboardInterrupt, SystemExit):          # Ctrl-C, or the CLI's signal handler (exit 130 / 143)
        client.cancel(futures)
        raise
    except distributed.KilledWorker as exc:
        raise ClusterError(f"the workers of the Dask cluster at {address} kept dying while they ran a task (out of "
                           f"memory?): {getattr(exc, 'task', 'a task')}; no model written") from None
    except (distributed.comm.CommClosedError, CancelledError, TimeoutError, OSError) as exc:
        reason = str(exc).splitlines()[-1] if str(exc) else type(exc).__name__
        if isinstance(exc, OSError) and not isinstance(exc, distributed.comm.CommClosedError) and \
                client.status == "running":
            # raised by a task: the cluster is there, a worker could not do what the task asked
            raise LLSVMError(f"on a worker of the Dask cluster at {address}: {reason}; no model written") from None
        # the scheduler went away (Dask cancels every future of a client that lost it)
        raise ClusterError(f"the Dask cluster at {address} went away during the run ({reason}); no model written") \
            from None
    finally:
        if bar is not None:
            bar.close()


def _workers(client):
    return len(client.scheduler_info(n_workers=-1)["workers"])


def train(data, *, client=None, address=LOCAL, workers=None, params=None, reporter=None, say=None, warn=None,
          want_metrics=False, local_epochs=1, parts=None, weight_file=None, **kw):
    """Train on the cluster of `client` (or one `connect(address, workers)` makes and closes). `data`: an llsvm
    binary file (a path, a glob or a one-element list). Parameters as llsvm.train's. Returns a Model whose
    .meta["dask"] says what ran where: tasks, workers, bytes sent down and up per task; with want_metrics, also
    .meta["metrics"] (the --json record, for whole-run tasks computed on the worker). weight_file: -W's file of
    row weights (one a line, a line per row of the input, its files in order), which every worker reads where it
    is, as it reads the input (docs/weights.md): CoCoA+ and distributed Newton parts take their rows' weights."""
    from ..solvers import trainer
    params = local_only(trainer.checked_params(params, kw))
    rep = as_reporter(reporter, say, warn)
    paths = binary_files(data)
    head = headers(paths)
    silent = reporter is None and say is None
    src = weighted_source(paths[0], weight_file, head, params)       # (a run over several files: its parts')
    with Session(client, address, workers, rep) as s:
        if _two_class_dual(params, head) or _two_class_primal(params, head):
            run = _cocoa(s, head, params, rep, local_epochs, parts, time.perf_counter()) if \
                _two_class_dual(params, head) else _newton(s, head, params, rep, parts, time.perf_counter())
            trainer.warn_unconverged(silent, run.meta["results"])
            return run
        one_file(paths)
        return _train(s.client, s.address, src, head, params, rep, want_metrics, silent)


def _close(client, cluster, fast=False):
    """Close what train() opened; a scheduler that went away leaves nothing to close. `fast` (the run did not end:
    Ctrl-C, SIGTERM, an error): a local cluster's workers are killed (_killing) rather than waited for, so that the
    command ends within a second of a signal (issue 44: a nanny's close asks its worker to finish the task it runs
    and waits up to 4 s for it before it kills it; closing the cluster took 1 to 4 s)."""
    with _killing(cluster if fast else None):
        try:
            client.close(timeout=1 if fast else 5)
        except Exception:       # noqa: BLE001 (the scheduler is gone: there is nothing left to say to it)
            pass
        if cluster is not None:
            cluster.close()
    if cluster is not None:
        _SCRATCH.pop(cluster, lambda: None)()            # its workers gone: their scratch directory goes


KILL_EVERY = 0.02               # seconds between two rounds of _killing's SIGKILLs


@contextlib.contextmanager
def _killing(cluster):
    """The worker processes of a LocalCluster of ours (None: nothing) killed with SIGKILL on entering and every
    KILL_EVERY seconds until the block (the cluster's close) ends: a worker still starting gets its process later.
    Each nanny is told first that its worker is going (close_gracefully: it does not start it again); the close
    then finds the processes gone and joins them. Nothing of theirs outlives the command: their scratch space is in
    the cluster's directory, removed after the close, and the nannies' queues are this process's."""
    if cluster is None:
        yield
        return
    import threading
    done = threading.Event()

    def rounds():
        while not done.wait(KILL_EVERY):
            _kill_workers(cluster)
    _kill_workers(cluster)
    again = threading.Thread(target=rounds, name="llsvm-kill-workers", daemon=True)
    again.start()
    try:
        yield
    finally:
        done.set()
        again.join()


def _kill_workers(cluster):
    """One round of _killing: SIGKILL to every worker process of the cluster's nannies that runs (a cluster still
    starting has its nannies in SpecCluster's _created only), each nanny that runs or starts told first (again: its
    start may have set its status back)."""
    import signal
    from distributed.core import Status
    try:
        nannies = [*getattr(cluster, "workers", {}).values(), *getattr(cluster, "_created", ())]
    except RuntimeError:        # a nanny made while the set was read: the next round reads it
        return
    for nanny in nannies:
        try:
            if nanny.status in (Status.init, Status.starting, Status.running):
                nanny.close_gracefully(reason="llsvm: the run was stopped")
            pid = nanny.pid     # while its worker process runs (once joined, its pid may be another process's)
        except Exception:       # noqa: BLE001 (not a nanny with a worker process: nothing to kill)
            continue
        if pid:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:     # gone already
                pass


def _train(client, address, path, head, params, rep, want_metrics, silent):
    from ..solvers import trainer
    from ..solvers.common import Seeds, class_costs
    t0 = time.perf_counter()
    n_workers = _workers(client)
    spec = params.spec
    model = _by_parts(client, address, path, head, params, rep, n_workers, t0, want_metrics)
    if model is not None:
        trainer.warn_unconverged(silent, model.meta["results"])
        return model
    ovr = spec.access == "random" and not spec.streams
    if ovr:
        if head.labels is not None and head.weights is None and spec.task not in ("regression", "oneclass"):
            # the headers' label tables: no round trip to a worker before the problems start
            info = {"n_rows": head.n_rows, "n_features": head.n_features, "nnz": head.nnz, "labels": head.labels}
        else:
            info = _gather(client, [client.submit(describe, path, params, pure=False)], address)[0]
        if info["n_rows"] == 0:
            raise ParameterError("no training data")
        trainer.warn_ignored(params, rep)
        labels = info["labels"]
        if labels is not None:
            class_costs(params.C, params.weights, labels, rep)          # the weights' warnings, once
        count = trainer.problem_count(params, labels)
    if not ovr or count <= 1:
        # not split (yet): the whole run as one task, the same model as in one process
        model, metrics, items = _gather(client, [client.submit(whole_task, path, params, rep.quiet, want_metrics,
                                                               pure=False)], address)[0]
        replay(items, rep)
        model.meta["dask"] = {"workers": n_workers, "tasks": 1, "split": "whole run", "rounds": 1,
                              "bytes_down_per_task": 0, "bytes_up_per_task": 0}
        if metrics is not None:
            model.meta["metrics"] = metrics
        trainer.warn_unconverged(silent, model.meta.get("results", []))
        return model
    seeds = Seeds(params.seed)
    task_seeds = [seeds.next() for _ in range(count)]
    futures = [client.submit(problem_task, path, params, k, task_seeds[k], rep.quiet, pure=False)
               for k in range(count)]
    done = _gather(client, futures, address)
    results = []
    for res, items in done:
        replay(items, rep)
        results.append(res)
    trainer.warn_unconverged(silent, results)
    W = np.stack([r.w for r in results], axis=1)
    model = trainer.linear_model(params, labels, info["n_features"], W, results)
    model.meta["dask"] = {"workers": n_workers, "tasks": count, "split": "one task per class", "rounds": 1,
                          "bytes_down_per_task": 0, "bytes_up_per_task": 8 * int(W.shape[0]),
                          "train_seconds": time.perf_counter() - t0}
    model.meta["shape"] = SimpleNamespace(n_rows=info["n_rows"], n_features=info["n_features"], nnz=info["nnz"])
    return model
