"""A signal takes effect within a second, also in the middle of a long kernel call (issue 27, item 1).

Every long nogil loop polls the process-wide stop flag (cext/_stop.pyx) and leaves; its wrapper raises
SystemExit(128 + signal) through the CLI's handler. Two kinds of test:

- Subprocess, one per solver family (and kernel prediction): the installed console script runs on a generated set
  with parameters that make one kernel call last far longer than the test waits (iteration limits of 2^31 - 1,
  10^6 epochs, -e 1e-12, a large C, a two-column kernel cache). A calibration run of the same command with one
  iteration (or one epoch, or a one-SV model) gives the CPU time of start-up and loading; the test signals the
  child once its CPU time is a second past that (so it is inside the solver), and reads from the child's rusage
  (os.wait4) the CPU time it used after the signal. The verdict: exit 130 (SIGINT) / 143 (SIGTERM), nothing on
  stdout or stderr (-q), no model or output file and no temporary file, and less than 1 s of CPU after the signal
  (a child that keeps computing is killed at that second; one that uses no CPU for children.STALL seconds is
  blocked). CPU time, never wall time, bounds every wait: the calibration run's (CALIBRATION_CPU), the way to the
  signal point and the exit, so the verdict does not depend on the machine's speed or load (a calibration bounded
  by 240 s of wall failed at a load of 10-30 on 2 cores). The children run two at a time (each verdict is its own
  child's CPU time).
  Before the stop flag (main at 01b0903) 25 of these 35 cases failed, the child still computing 20 s after the
  signal; DCD (-s 1, 3: ten epochs a kernel call), Newton (-s 0, 2, 11: one CG solve a call) and the out-of-core
  solvers (a block a call) passed already, and are kept as a guard.
- In process, one per kernel: the flag set (`_stop.request_stop(2)`, as the handler sets it), then the kernel:
  SystemExit(130), and its loop has not run (its outputs, RNG state or cache counters untouched).
"""
import os
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
import scipy.sparse as sp

from conftest import write_small_set

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "scripts"))
from children import STALL, Watch, cpu_of, kill, reap, reap_within  # noqa: E402

BIN = os.path.dirname(sys.executable)
LEAD_CPU = 1.0          # CPU seconds past the calibration run's (start-up and loading) before the signal
CPU_AFTER = 1.0         # the rule: less CPU than this after the signal
CALIBRATION_CPU = 120.0     # a calibration run (start-up, loading, one iteration: seconds) that uses more never ends
PARALLEL = 2
BIG = "2147483647"
LONG = ["-c", "1000", "-e", "1e-12", "--max-iter", BIG]     # LIBLINEAR's solvers, out of core
# C = 10^5 and a wide RBF on noisy labels, a cache of two columns (each pair computes its columns): a solve of a
# fold of 1,000 rows takes tens of seconds of CPU
SMO = ["-s", "smo", "-c", "100000", "-g", "0.02", "-m", "0.01", "-e", "1e-12"]

# the child starts with SIGINT at its default action (it keeps an inherited SIG_IGN, and pytest may run as a
# background job that has one), then execs the console script in the same process (same pid)
EXEC = "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); os.execv(sys.argv[1], sys.argv[1:])"


# -- the generated sets -------------------------------------------------------------------------------------------
def write_dense(path, n_rows, n_features, noise, shift, seed):
    """Dense rows around (shift, ..., shift), labels of a random hyperplane through that centre with Gaussian
    label noise: no hyperplane separates them, and the origin is far from the rows (-s 21's |w| stays large)."""
    rng = np.random.default_rng(seed)
    Z = rng.standard_normal((n_rows, n_features))
    y = np.where(Z @ rng.standard_normal(n_features) + noise * rng.standard_normal(n_rows) > 0, 1, -1)
    X = np.round(Z + shift, 3)
    idx = [f"{j + 1}:" for j in range(n_features)]
    with open(path, "w") as f:
        for i in range(n_rows):
            f.write(f"{y[i]} " + " ".join(a + f"{v:g}" for a, v in zip(idx, X[i].tolist())) + "\n")
    return path


def write_sparse(path, n_rows, n_features, nnz, seed):
    """Sparse rows (nnz features each, one in each of nnz equal ranges) and random labels: separable (more
    features than rows), so the squared-hinge and logistic losses go on decreasing towards 0."""
    rng = np.random.default_rng(seed)
    step = n_features // nnz
    cols = (rng.integers(0, step, (n_rows, nnz)) + np.arange(nnz) * step + 1).tolist()
    vals = np.round(rng.standard_normal((n_rows, nnz)), 3).tolist()
    y = np.where(rng.random(n_rows) < 0.5, 1, -1)
    with open(path, "w") as f:
        for i in range(n_rows):
            f.write(f"{y[i]} " + " ".join(f"{c}:{v:g}" for c, v in zip(cols[i], vals[i])) + "\n")
    return path


def write_kernel_model(path, data, n_sv, gamma=0.02):
    """A LIBSVM RBF model (C-SVC, two classes) whose SVs are the first n_sv rows of `data`, coefficients +1 for
    the first half and -1 for the rest."""
    with open(data) as f:
        rows = [next(f).split(" ", 1)[1] for _ in range(n_sv)]
    pos = (n_sv + 1) // 2
    head = (f"svm_type c_svc\nkernel_type rbf\ngamma {gamma}\nnr_class 2\ntotal_sv {n_sv}\nrho 0\nlabel 1 -1\n"
            f"nr_sv {pos} {n_sv - pos}\nSV\n")
    with open(path, "w") as f:
        f.write(head + "".join(("1 " if i < pos else "-1 ") + r for i, r in enumerate(rows)))
    return path


@pytest.fixture(scope="module")
def sets(tmp_path_factory):
    d = tmp_path_factory.mktemp("signal-sets")
    out = {
        # 2,000 rows, 10 of 20 features: the kernel solvers (SMO with C = 10^5 and two cached columns, online
        # lists for 10^6 epochs, ProjectSVM's 2^31 - 1 directions)
        "kernel": write_small_set(d / "kernel.txt", 2000, n_features=20, nnz=10, seed=27),
        # 20,000 x 50 dense, noisy: LIBLINEAR's dual and L1 solvers and one-class, H1 nodes, the out-of-core
        # solvers, prediction
        "dense": write_dense(d / "dense.txt", 20000, 50, 2.0, 2.0, seed=27),
        # 20,000 x 50,000 sparse, separable: Newton (-s 0, 2, 11), LocalSVM (a phase is 50,000 coordinate steps,
        # each sorting 20,000 projections)
        "sparse": write_sparse(d / "sparse.txt", 20000, 50000, 20, seed=27),
    }
    # kernel prediction: 5,000 SVs x 20,000 test rows of 50 features (10^8 kernel values); calibration: one SV
    out["model"] = write_kernel_model(d / "rbf.model", out["dense"], 5000)
    out["model1"] = write_kernel_model(d / "rbf1.model", out["dense"], 1)
    return out


# -- the cases: (id, command, set, arguments, signal) -------------------------------------------------------------
def _train(sid, data, args, sig=signal.SIGINT):
    return (sid, "train", data, args, sig)


CASES = [
    _train("smo", "kernel", SMO),
    _train("smo-v3", "kernel", [*SMO, "-v", "3"]),
    # the working-set solver (issue 49): a block of 512 columns computed at once on two threads, then its sub-problem
    _train("smo-ws", "kernel", [*SMO, "--ws", "512", "--threads", "2"]),
    _train("smo-grid", "kernel", ["-s", "smo", "-m", "0.01", "-e", "1e-12", "-v", "2",
                                  "--grid", "C=100000,200000 g=0.02,0.01"]),
    _train("h1tree", "dense", ["-s", "h1tree", "-e", "1e-12"]),
    *[_train(s, "kernel", ["-s", s, "--epochs", "1000000"]) for s in ("olsvm", "olsvm-rhl", "norma", "pegaz",
                                                                       "pegasos")],
    _train("olsvm-original", "kernel", ["-s", "olsvm", "--original", "--epochs", "1000000"]),
    _train("local1d", "sparse", ["-s", "local1d", "--max-iter", BIG]),
    _train("project1d", "kernel", ["-s", "project1d", "--max-iter", BIG]),
    *[_train(f"s{s}", "dense", ["-s", s, *LONG]) for s in ("1", "5", "6", "7", "12", "13", "4")],
    # -s 3's dual creeps on the dense set, so its stall check hands it to the primal Newton, which ends in a second:
    # its dual CD kernel on the sparse set
    _train("s3", "sparse", ["-s", "3", *LONG]),
    _train("s21", "dense", ["-s", "21", "-n", "0.123457", "-e", "1e-12", "--max-iter", BIG]),
    _train("s2", "sparse", ["-s", "2", *LONG]),
    _train("s11", "sparse", ["-s", "11", *LONG]),
    _train("s0-v", "sparse", ["-s", "0", "-c", "1000000", "-e", "1e-12", "-v", "10"]),    # 10 trainings
    *[_train(s, "dense", ["-s", s, *LONG]) for s in ("llsvm", "streamsvm", "bm")],
    ("predict", "predict", "dense", [], signal.SIGINT),
    # SIGTERM (a job scheduler, `timeout`): a case of each kind of loop (a pair, a step, a coordinate, a pass, a
    # block of test rows)
    _train("smo-term", "kernel", SMO,
           signal.SIGTERM),
    _train("olsvm-term", "kernel", ["-s", "olsvm", "--epochs", "1000000"], signal.SIGTERM),
    _train("local1d-term", "sparse", ["-s", "local1d", "--max-iter", BIG], signal.SIGTERM),
    _train("s5-term", "dense", ["-s", "5", *LONG], signal.SIGTERM),
    _train("bm-term", "dense", ["-s", "bm", *LONG], signal.SIGTERM),
    ("predict-term", "predict", "dense", [], signal.SIGTERM),
]
IDS = [c[0] for c in CASES]


def quick(args):
    """The same arguments with one iteration (one epoch): the calibration run's."""
    out, skip = [], False
    for a in args:
        if skip:
            skip = False
            continue
        if a in ("--max-iter", "--epochs"):
            skip = True
            continue
        out.append(a)
    return out + (["--epochs", "1"] if "--epochs" in args else ["--max-iter", "1"])


# -- running a child ----------------------------------------------------------------------------------------------
def _start(argv, work):
    env = dict(os.environ, TMPDIR=str(work / "tmp"))
    out = open(work / "stdout", "wb")
    err = open(work / "stderr", "wb")
    try:
        return subprocess.Popen([sys.executable, "-c", EXEC, *argv], stdout=out, stderr=err, env=env)
    finally:
        out.close()
        err.close()


def calibrate(argv, work):
    """CPU seconds of a complete run (start-up, loading, one iteration, the model written)."""
    work.mkdir()
    (work / "tmp").mkdir()
    p = _start(argv, work)
    got = reap_within(p, CALIBRATION_CPU)
    if got is None:
        kill(p)
        raise AssertionError(f"the calibration run {argv} did not end within {CALIBRATION_CPU} s of CPU (or "
                             f"stalled, {STALL} s without CPU)")
    status, usage = got
    assert p.returncode == 0, (argv, p.returncode, (work / "stderr").read_text()[-2000:])
    return usage.ru_utime + usage.ru_stime


def signal_run(argv, work, lead, sig):
    """Start the command, signal it once its CPU time reaches `lead`; what happened."""
    work.mkdir()
    (work / "tmp").mkdir()
    (work / "out").mkdir()
    p = _start(argv, work)
    watch = Watch(p.pid)
    res = {"argv": argv, "lead": lead}
    while True:
        if reap(p, time.monotonic()) is not None:
            res.update(ended_before_signal=True, rc=p.returncode, stderr=(work / "stderr").read_text()[-2000:])
            return res
        if watch.used() >= lead:
            break
        if watch.stalled():         # blocked before the signal point (a busy machine still gives it CPU)
            kill(p)
            res.update(never_reached=True)
            return res
        time.sleep(0.01)
    c0 = cpu_of(p.pid)            # the child is not reaped before we are: /proc/<pid> is there
    t_sig = time.monotonic()
    os.kill(p.pid, sig)
    # reaped at its exit; killed once it has used CPU_AFTER (still computing: the verdict fails) or stalled
    got = reap_within(p, CPU_AFTER)
    if got is None:
        c1 = cpu_of(p.pid)
        kill(p)
        res.update(blocked=c1 - c0 < CPU_AFTER, cpu_after=c1 - c0, wall_after=time.monotonic() - t_sig)
    else:
        status, usage = got
        res.update(cpu_after=usage.ru_utime + usage.ru_stime - c0, wall_after=time.monotonic() - t_sig)
    res.update(cpu_at_signal=c0, rc=p.returncode, stdout=(work / "stdout").read_text(),
               stderr=(work / "stderr").read_text()[-2000:],
               leftovers=sorted(os.listdir(work / "out")) + sorted(os.listdir(work / "tmp")))
    return res


def run_case(case, sets, root, calibrations):
    sid, command, data, args, sig = case
    work = root / sid
    work.mkdir()
    run, calib = work / "run", work / "calib"
    if command == "predict":
        exe = os.path.join(BIN, "llsvm-predict")
        full = [exe, "-q", str(sets[data]), str(sets["model"]), str(run / "out" / "predictions")]
        short = [exe, "-q", str(sets[data]), str(sets["model1"]), str(calib / "predictions")]
    else:
        exe = os.path.join(BIN, "llsvm-train")
        ooc = args[1] in ("llsvm", "streamsvm", "bm")
        full = [exe, "-q", *args, *(["--tmp-dir", str(run / "tmp")] if ooc else []), str(sets[data]),
                str(run / "out" / "model")]
        short = [exe, "-q", *quick(args), *(["--tmp-dir", str(calib / "tmp")] if ooc else []), str(sets[data]),
                 str(calib / "model")]
    base = calibrations.get((command, data, tuple(args)), lambda: calibrate(short, calib))
    res = signal_run(full, run, base + LEAD_CPU, sig)
    res["calibration_cpu"] = base
    return res


class Calibrations:
    """One calibration run per command (the SIGTERM cases share their SIGINT twin's), thread-safe."""

    def __init__(self):
        self.lock = threading.Lock()
        self.known = {}

    def get(self, key, measure):
        with self.lock:
            entry = self.known.get(key)
            owner = entry is None
            if owner:
                entry = self.known[key] = [threading.Event(), None]
        if owner:
            try:
                entry[1] = measure()
            finally:
                entry[0].set()
        entry[0].wait()
        if entry[1] is None:
            raise AssertionError(f"the calibration run of {key} failed (see its own case)")
        return entry[1]


class Runs:
    """The selected cases' children, PARALLEL at a time, started when the first test asks."""

    def __init__(self, cases, sets, root):
        self.pool = ThreadPoolExecutor(PARALLEL)
        calibrations = Calibrations()
        self.futures = {c[0]: self.pool.submit(run_case, c, sets, root, calibrations) for c in cases}

    def __getitem__(self, sid):
        return self.futures[sid].result()


@pytest.fixture(scope="module")
def runs(request, sets, tmp_path_factory):
    selected = {item.callspec.id for item in request.session.items
                if getattr(item, "originalname", None) == "test_signal_ends_the_kernel_call"
                and hasattr(item, "callspec")}
    r = Runs([c for c in CASES if c[0] in selected], sets, tmp_path_factory.mktemp("signal-runs"))
    yield r
    r.pool.shutdown(wait=True)


@pytest.mark.skipif(not os.path.exists("/proc/self/stat"), reason="reads the child's CPU time in /proc")
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_signal_ends_the_kernel_call(runs, case):
    sid, _, _, _, sig = case
    res = runs[sid]
    info = {k: v for k, v in res.items() if k != "argv"}
    assert not res.get("never_reached"), f"{sid}: the child stalled before {res['lead']:.2f} s of CPU"
    assert not res.get("ended_before_signal"), \
        f"{sid}: ended (exit {res['rc']}) before {res['lead']:.2f} s of CPU: the run is not long enough ({info})"
    assert not res.get("blocked"), f"{sid}: still there after the signal, using no CPU for {STALL} s ({info})"
    assert res["cpu_after"] < CPU_AFTER, info
    assert res["rc"] == 128 + sig, info
    assert res["stderr"] == "" and res["stdout"] == "", info
    assert res["leftovers"] == [], info


def test_quick_drops_the_limits():
    assert quick(["-s", "olsvm", "--epochs", "1000000"]) == ["-s", "olsvm", "--epochs", "1"]
    assert quick(["-s", "1", "-c", "1000", "--max-iter", BIG]) == ["-s", "1", "-c", "1000", "--max-iter", "1"]
    assert quick(["-s", "smo", "-v", "3"]) == ["-s", "smo", "-v", "3", "--max-iter", "1"]


# -- in process: every kernel leaves its loop before the first step when the flag is set -------------------------
@pytest.fixture
def stop():
    from llsvm._ext import _stop
    _stop.clear()
    yield _stop
    _stop.clear()


def _stopped(stop, fn, *args, **kwargs):
    """fn(*args) with the flag set as the handler sets it for SIGINT: SystemExit(130)."""
    stop.request_stop(signal.SIGINT)
    with pytest.raises(SystemExit) as exc:
        fn(*args, **kwargs)
    assert exc.value.code == 130
    assert stop.stopped() == signal.SIGINT       # the flag stays set until cleared (arm() or clear())
    stop.clear()


def _dense_problem(seed=3, l=300, n=8):
    from llsvm.dataset import CSRDataset
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((l, n))
    y = np.where(X @ rng.standard_normal(n) + rng.standard_normal(l) > 0, 1, -1).astype(np.int8)
    return CSRDataset.from_csr(sp.csr_matrix(X), y.astype(np.float64)), y


def test_flag_functions(stop):
    assert stop.stopped() == 0
    stop.raise_if_stopped()                      # nothing: the flag is clear
    stop.request_stop(signal.SIGTERM)
    with pytest.raises(SystemExit) as exc:
        stop.raise_if_stopped()
    assert exc.value.code == 143
    stop.clear()
    assert stop.stopped() == 0


def test_smo(stop):
    from llsvm._ext import _kernel as KK
    from llsvm._ext import _smo
    from llsvm._ext._rowops import row_sq_norms
    ds, y = _dense_problem()
    view = ds.row_view()
    params = {"kernel_type": 2, "gamma": 0.5, "coef0": 0.0, "degree": 3}
    sq = row_sq_norms(view)
    QD = np.empty(ds.n_rows)
    KK.kernel_diag(np.arange(ds.n_rows, dtype=np.int64), params, sq, QD)
    cache = KK.KernelCache(view, None, params, sq, 100.0)
    alpha = np.zeros(ds.n_rows)
    _stopped(stop, _smo.solve, cache, y, -np.ones(ds.n_rows), alpha, 1.0, 1.0, QD, eps=1e-3)
    assert not alpha.any() and cache.stats["misses"] == 0          # no pair, no kernel column
    out = _smo.solve(cache, y, -np.ones(ds.n_rows), alpha, 1.0, 1.0, QD, eps=1e-3)    # the flag cleared: it runs
    assert out["n_iter"] > 0 and alpha.any() and cache.stats["misses"] > 0


@pytest.mark.parametrize("probability", [0, 1])
def test_one_vs_one(stop, probability):
    """The pairs' kernel (cext/_smo.pyx's OneVsOne, -s smo's many classes, -b 1's folds) polls the flag between
    pairs and inside each solve: a run with the flag set stops before its first pair."""
    from llsvm.options import SMOOptions
    from llsvm.params import Params
    from llsvm.report import Reporter
    from llsvm.solvers import smo
    from llsvm.dataset import CSRDataset
    ds, _ = _dense_problem(l=120)
    ds = CSRDataset.from_csr(ds.to_csr(), np.arange(ds.n_rows) % 6 * 1.0)
    params = Params(solver="smo", options=SMOOptions(probability=probability)).check()
    said = []
    _stopped(stop, smo.fit, ds, params, Reporter(out=said.append))
    assert "optimization finished" not in "".join(said)
    model = smo.fit(ds, params, Reporter(out=said.append))        # the flag cleared: it runs
    assert model.nr_class == 6 and "".join(said).count("optimization finished") == 15 * (1 + 5 * probability)


@pytest.mark.parametrize("kind", ["3b", "3a", "norma", "pegaz", "pegasos"])
def test_online(stop, kind):
    from llsvm._ext import _online
    from llsvm._ext._rowops import row_sq_norms
    ds, y = _dense_problem()
    view = ds.row_view()
    kern = {"kernel_type": 2, "gamma": 0.5}
    sq = row_sq_norms(view)
    order = np.arange(ds.n_rows)
    store = _online.ColumnStore(view, kern, sq, 10.0)
    extra = {"lam": 0.01} if kind == "pegasos" else {}
    _stopped(stop, _online.run, view, order, y, kern, sq, kind=kind, epochs=10 ** 6, store=store, **extra)
    assert store.misses == 0 and store.hits == 0 and store.n_stored == 0        # no step computed a column
    out = _online.run(view, order, y, kern, sq, kind=kind, epochs=1, store=store, **extra)
    assert out["t"] > 0 and store.misses > 0


def test_h1_node(stop):
    """No observable state: the node's cost. Interrupted, it makes its set-up (two passes over the hard rows);
    not interrupted, 200 pairs, each a pass over them: the interrupted call's CPU time is a small fraction."""
    from llsvm._ext import _h1
    from llsvm.dataset import CSRDataset
    rng = np.random.default_rng(5)
    m_h, m_s, n = 40000, 2000, 50
    X = np.vstack([rng.standard_normal((m_h, n)) + 0.1, rng.standard_normal((m_s, n)) - 0.1])
    view = CSRDataset.from_csr(sp.csr_matrix(X), np.ones(m_h + m_s)).row_view()
    hard, soft = np.arange(m_h), np.arange(m_h, m_h + m_s)
    t = time.thread_time()
    _stopped(stop, _h1.solve_node, view, hard, soft, 1.0, eps=1e-300, max_iter=10 ** 9)
    stopped_cpu = time.thread_time() - t
    t = time.thread_time()
    out = _h1.solve_node(view, hard, soft, 1.0, eps=1e-300, max_iter=200)
    full_cpu = time.thread_time() - t
    assert out["n_iter"] == 200
    assert stopped_cpu < full_cpu / 10, (stopped_cpu, full_cpu)


def _oned_problem():
    from llsvm._ext import _oned
    from llsvm.solvers import Subproblem
    ds, y = _dense_problem(l=200)
    sub = Subproblem(ds, y, 1.0, 1.0)
    return _oned, sub


def test_local_svm(stop):
    K, sub = _oned_problem()
    cols = sub.columns()
    d = sub.n_features
    max_iter = 10 ** 9
    n_snap = K.n_snapshots(max_iter)
    snap = np.full((n_snap, len(K.SNAP_FIELDS)), -7.0)
    snapw = np.full((n_snap, d), -7.0)
    trace = np.full((16, 3), -7, np.int32)
    w = np.zeros(d)
    _stopped(stop, K.local_svm, *cols, sub.y, 1.0, 1.0, True, False, max_iter, 0.0, w, snap, snapw, trace)
    assert (snap == -7.0).all() and (trace == -7).all()          # no SVM1D step, no snapshot after step 1
    out = K.local_svm(*cols, sub.y, 1.0, 1.0, True, False, 8, 0.0, w, snap[:K.n_snapshots(8)],
                      snapw[:K.n_snapshots(8)], trace)
    assert out["n_iter"] > 0 and (trace != -7).any()


def test_project_svm(stop):
    from llsvm._ext._random import rng_state
    K, sub = _oned_problem()
    d = sub.n_features
    max_iter = 10 ** 9
    n_snap = K.n_snapshots(max_iter)
    snap = np.zeros((n_snap, len(K.SNAP_FIELDS)))
    snapw = np.zeros((n_snap, d))
    w = np.zeros(d)
    rng = rng_state(1)
    start = rng.copy()
    view = sub.view.row_view(-1.0)
    _stopped(stop, K.project_svm, view, sub.rows, sub.y, 1.0, 1.0, True, False, max_iter, 0.0, -np.inf, rng, w,
             snap, snapw)
    assert np.array_equal(rng, start) and not w.any()            # no direction drawn
    K.project_svm(view, sub.rows, sub.y, 1.0, 1.0, True, False, 4, 0.0, -np.inf, rng, w,
                  snap[:K.n_snapshots(4)], snapw[:K.n_snapshots(4)])
    assert not np.array_equal(rng, start)


def _sub(bias=1.0, **kw):
    from llsvm.solvers import Subproblem
    ds, y = _dense_problem()
    return Subproblem(ds, y, 1.0, 1.0, bias=bias, **kw), ds, y


def test_lr_dual(stop):
    from llsvm._ext import _l2dual
    from llsvm._ext._random import rng_state
    sub, _, _ = _sub()
    rng = rng_state(1)
    start = rng.copy()
    alpha, w = np.empty(2 * sub.l), np.zeros(sub.w_size)
    ev = np.zeros(64, np.int8)
    _stopped(stop, _l2dual.lr_dual, *sub.args, sub.y, 1.0, 1.0, 1e-12, 10 ** 9, alpha, w, rng, ev)
    assert np.array_equal(rng, start)                              # no pass: each starts with a shuffle
    assert _l2dual.lr_dual(*sub.args, sub.y, 1.0, 1.0, 0.1, 3, alpha, w, rng, ev)[0] > 0


@pytest.mark.parametrize("l1_loss", [False, True], ids=["s12", "s13"])
def test_svr_dual(stop, l1_loss):
    from llsvm._ext import _l2dual
    from llsvm._ext._random import rng_state
    sub, _, y = _sub()
    targets = y.astype(np.float64)
    rng = rng_state(1)
    start = rng.copy()
    beta, w = np.zeros(sub.l), np.zeros(sub.w_size)
    ev = np.zeros(64, np.int8)
    _stopped(stop, _l2dual.svr_dual, *sub.args, targets, 1.0, 0.1, l1_loss, 1e-12, 10 ** 9, beta, w, rng, ev)
    assert np.array_equal(rng, start) and not beta.any()
    assert _l2dual.svr_dual(*sub.args, targets, 1.0, 0.1, l1_loss, 0.1, 3, beta, w, rng, ev)[0] > 0 and beta.any()


def test_oneclass(stop):
    """The interrupted call leaves alpha and w at LIBLINEAR's starting point: what max_iter = 0 gives."""
    from llsvm._ext import _l2dual
    sub, _, _ = _sub(bias=-1.0)
    ev = np.zeros(64, np.int8)
    alpha, w = np.empty(sub.l), np.zeros(sub.w_size)
    _stopped(stop, _l2dual.oneclass, *sub.args, sub.l, 0.3, 1e-12, 10 ** 9, alpha, w, ev)
    a0, w0 = np.empty(sub.l), np.zeros(sub.w_size)
    assert _l2dual.oneclass(*sub.args, sub.l, 0.3, 1e-12, 0, a0, w0, ev)[0] == 0
    a1, w1 = np.empty(sub.l), np.zeros(sub.w_size)
    assert _l2dual.oneclass(*sub.args, sub.l, 0.3, 1e-12, 1, a1, w1, ev)[0] == 1
    np.testing.assert_array_equal(alpha, a0)
    np.testing.assert_array_equal(w, w0)
    assert not np.array_equal(a1, a0)


def test_mcsvm_cs(stop):
    from llsvm._ext import _l2dual
    from llsvm._ext._random import rng_state
    sub, _, y = _sub()
    cls = (y > 0).astype(np.int32)
    C_class = np.ones(2)
    rng = rng_state(1)
    start = rng.copy()
    alpha, w = np.zeros(sub.l * 2), np.zeros(sub.w_size * 2)
    ev = np.zeros(64, np.int8)
    _stopped(stop, _l2dual.mcsvm_cs, *sub.args, cls, C_class, 1e-12, 10 ** 9, alpha, w, rng, ev)
    assert np.array_equal(rng, start) and not alpha.any() and not w.any()
    assert _l2dual.mcsvm_cs(*sub.args, cls, C_class, 0.1, 3, alpha, w, rng, ev)[0] > 0 and alpha.any()


def test_l1r_l2svc(stop):
    from llsvm._ext import _l1r
    from llsvm._ext._random import rng_state
    sub, _, _ = _sub()
    cols = sub.columns()
    rng = rng_state(1)
    start = rng.copy()
    w = np.zeros(sub.w_size)
    ev = np.zeros(64, np.int8)
    _stopped(stop, _l1r.l1r_l2svc, *cols, sub.y, 1.0, 1.0, True, 1e-12, 10 ** 9, w, rng, ev)
    assert np.array_equal(rng, start) and not w.any()
    cols = sub.columns()            # col_val was overwritten (y_i x_ij)
    assert _l1r.l1r_l2svc(*cols, sub.y, 1.0, 1.0, True, 0.01, 3, w, rng, ev)[0] > 0 and w.any()


def test_l1r_lr(stop):
    from llsvm._ext import _l1r
    from llsvm._ext._random import rng_state
    sub, _, _ = _sub()
    cols = sub.columns()
    rng = rng_state(1)
    start = rng.copy()
    w = np.zeros(sub.w_size)
    _stopped(stop, _l1r.l1r_lr, *cols, sub.y, sub.C(), True, 1e-12, 10 ** 6, w, rng)
    assert np.array_equal(rng, start) and not w.any()
    assert _l1r.l1r_lr(*cols, sub.y, sub.C(), True, 0.01, 3, w, rng)[0] > 0 and w.any()


def test_dcd_state(stop):
    from llsvm._ext import _linear
    from llsvm._ext._random import rng_state
    sub, _, _ = _sub()
    xnorm = np.empty(sub.l)
    _linear.sq_norms(*sub.args, xnorm)
    alpha, w = np.zeros(sub.l), np.zeros(sub.w_size)
    rng = rng_state(1)
    start = rng.copy()
    state = _linear.DCDState(*sub.args, sub.y, alpha, w, xnorm, np.arange(sub.l, dtype=np.int32), 1.0, 1.0, True,
                             rng)
    _stopped(stop, state.run, 10 ** 9, 1e-12)
    assert state.n_iter == 0 and not alpha.any() and not w.any() and np.array_equal(rng, start)
    state.run(2, 0.1)
    assert state.n_iter == 2 and alpha.any()


def test_pcg(stop):
    """s is set to 0 before the loop and moves at the first CG step."""
    from llsvm._ext import _linear
    sub, _, _ = _sub()
    n = sub.w_size
    I = np.arange(sub.l, dtype=np.int32)
    c = np.ones(sub.l)
    g = np.linspace(-1.0, 1.0, n)
    M = np.ones(n)
    s, r = np.full(n, 5.0), np.empty(n)
    _stopped(stop, _linear.pcg, *sub.args, I, c, 2.0, True, g, M, s, r, 1e-12)
    assert not s.any()
    it, _ = _linear.pcg(*sub.args, I, c, 2.0, True, g, M, s, r, 1e-12)
    assert it > 0 and s.any()


def test_kernel_prediction(stop):
    from llsvm._ext import _kpredict
    ds, y = _dense_problem()
    view = ds.row_view()
    coef = np.where(y > 0, 1.0, -1.0).reshape(1, -1)
    nSV = [int((y > 0).sum()), int((y <= 0).sum())]
    order = np.argsort(-y, kind="stable")
    from llsvm.dataset import CSRDataset
    SV = CSRDataset.from_csr(ds.to_csr()[order], y[order].astype(np.float64)).row_view()
    dec = np.full((ds.n_rows, 1), np.nan)
    _stopped(stop, _kpredict.decision_values, view, SV, 2, 3, 0.5, 0.0, np.ascontiguousarray(coef[:, order]),
             np.zeros(1), nSV, dec, block_rows=8)
    assert np.isnan(dec).all()                                  # no block computed
    _kpredict.decision_values(view, SV, 2, 3, 0.5, 0.0, np.ascontiguousarray(coef[:, order]), np.zeros(1), nSV,
                              dec, block_rows=8)
    assert not np.isnan(dec).any()


def test_a_signal_sets_the_flag_while_armed(stop):
    """arm() puts the flag's handler before Python's: a real SIGINT sets the flag and Python's handler still runs;
    disarm() gives the previous handler back."""
    got = []
    prev = signal.signal(signal.SIGINT, lambda signum, frame: got.append(signum))
    try:
        assert signal.SIGINT in stop.arm()
        os.kill(os.getpid(), signal.SIGINT)
        for _ in range(100):
            if got:
                break
            time.sleep(0.001)
        assert got == [signal.SIGINT] and stop.stopped() == signal.SIGINT
        stop.disarm()
        stop.clear()
        os.kill(os.getpid(), signal.SIGINT)
        for _ in range(100):
            if len(got) == 2:
                break
            time.sleep(0.001)
        assert got == [signal.SIGINT] * 2 and stop.stopped() == 0   # disarmed: Python's handler alone
    finally:
        stop.disarm()
        signal.signal(signal.SIGINT, prev)
