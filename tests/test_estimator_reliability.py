"""The reliability of the Python and scikit-learn surface (issue 45, H1, H8, H12-H14).

- H1, Ctrl-C in a fit from Python: the kernels' stop flag (cext/_stop.pyx) is armed around every training call from
  Python (llsvm/stop.py: llsvm.train, cross_validation, find_parameter_C, grid_search, kernel prediction), so
  SIGINT ends a kernel in the middle of its loop with KeyboardInterrupt. Subprocess, one per estimator family: a
  child Python fits on a generated set with parameters that make the fit last tens of seconds of CPU, writes its
  CPU time as the fit starts, and is sent SIGINT once it has used LEAD_CPU more (so it is inside the solver); the
  verdict is the child's CPU time from the signal to its exit (rusage, scripts/children.py), under CPU_AFTER, and
  its "KeyboardInterrupt" line. Every wait is bounded by the child's CPU time, never the wall clock. Before the fix
  (the flag armed by the CLI only) every kernel family went on computing: killed at CPU_AFTER. In process: the
  flag is armed for a call of the main thread and given back after it (the host's handlers as they were), left
  alone under a host handler of its own, nested in a command's arming, never armed from another thread, and a
  kernel cut short in another thread raises KeyboardInterrupt there.
- H8, wide sparse rows: a kernel solver's scratch row is as wide as the rows' largest index, and none at all when
  that is far wider than the data (the products then merge the rows, LIBSVM's dot): a CSR matrix of 10^9 columns
  (or a 2^40-column shape) with a few non-zeros trains under an address-space limit that an 8 GB scratch exceeds,
  to the model of the same rows on compact columns; llsvm-train -s smo on a file whose largest index is 10^9 too.
  Column indices beyond int32 are refused, not wrapped around; the online lists' linear weight vector is checked
  before it is made.
- H12: the errors of bad input (ParameterError, DataFormatError, ModelFormatError) are ValueErrors; the CLI's
  messages and exit codes are unchanged.
- H13: an extreme C (1e308) or bias leaks no numpy RuntimeWarning (the certificates are inf or nan, as LIBLINEAR
  prints them), a model that is not finite is refused where it is saved; -s llsvm's refusal of an overflowing
  bias leaves no file open (ResourceWarning).
- H14: class labels are 64-bit integers: ±2^40 trains, is written whole and read back; beyond 2^63 is refused.
"""
import gc
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
import warnings
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
import scipy.sparse as sp

import llsvm
from llsvm.errors import DataFormatError, LLSVMError, ModelFormatError, ParameterError

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "scripts"))
from children import STALL, Watch, cpu_of, kill, reap, reap_within, wait_for  # noqa: E402

BIN = os.path.dirname(sys.executable)
LEAD_CPU = 1.0          # CPU seconds into the fit before the signal
CPU_AFTER = 1.0         # the rule: less CPU than this from the signal to the exit
START_CPU = 120.0       # a child that uses this much before its fit starts never starts it
PARALLEL = 2


def _small(n=60, seed=0):
    """A small two-class problem (X, labels +1/-1)."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 4))
    return X, np.where(X[:, 0] + 0.3 * rng.standard_normal(n) > 0, 1.0, -1.0)


# -- H12: ValueError for bad input -----------------------------------------------------------------------------------
def test_bad_input_errors_are_value_errors(tmp_path):
    for cls in (ParameterError, DataFormatError, ModelFormatError):
        assert issubclass(cls, ValueError) and issubclass(cls, LLSVMError)
    bad_model = tmp_path / "bad.model"
    bad_model.write_text("solver_type L2R_L2LOSS_SVC_DUAL\nnr_class x\n")
    with pytest.raises(ValueError):
        llsvm.load_model(bad_model)
    bad_data = tmp_path / "bad.txt"
    bad_data.write_text("1 1:x\n")
    with pytest.raises(ValueError):
        llsvm.read_dataset(bad_data)
    with pytest.raises(ValueError):
        llsvm.train(*_small(), solver=3, C=-1.0)
    from llsvm.sklearn import LinearSVC, OutOfCoreSVC
    with pytest.raises(ValueError):
        LinearSVC.from_file(bad_model)
    with pytest.raises(ValueError):
        OutOfCoreSVC(memory="abc").fit(*_small())


@pytest.mark.parametrize("argv,rc,stderr", [
    (["llsvm-train", "-c", "-1", "{data}"], 1, "ERROR: C <= 0\n"),
    (["llsvm-train", "-s", "smo", "-g", "-1", "{data}"], 1, "ERROR: gamma < 0\n"),
    (["llsvm-train", "{bad}"], 1, "Wrong input format at line 1\n{bad}: line 1, column 5: value is not a number "
                                  "(found 'x')\n"),
    (["llsvm-predict", "{data}", "{bad_model}", "{out}"], 1, "Error: {bad_model}:2: 'nr_class' is not an integer: "
                                                             "'x'\n"),
    (["llsvm-train", "--memory", "abc", "-s", "llsvm", "{data}"], 2, None),
])
def test_the_cli_reports_them_as_before(tmp_path, argv, rc, stderr):
    """ParameterError, DataFormatError and ModelFormatError being ValueErrors changes nothing the commands print."""
    names = {"data": tmp_path / "d.txt", "bad": tmp_path / "bad.txt", "bad_model": tmp_path / "bad.model",
             "out": tmp_path / "out"}
    names["data"].write_text("1 1:1\n-1 1:-1\n1 1:2\n")
    names["bad"].write_text("1 1:x\n")
    names["bad_model"].write_text("solver_type L2R_L2LOSS_SVC_DUAL\nnr_class x\n")
    cmd = [os.path.join(BIN, argv[0])] + [a.format(**names) for a in argv[1:]]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert r.returncode == rc, r.stderr
    if stderr is not None:
        assert r.stderr == stderr.format(**names)
    assert "Traceback" not in r.stderr


# -- H8: wide sparse rows ------------------------------------------------------------------------------------------
def _wide(n_rows=40, n_cols=10 ** 9, seed=3):
    """(wide CSR over n_cols columns, the same rows on compact columns 0..k-1, labels, targets): 6 non-zeros a row
    among 12 columns spread up to n_cols - 1."""
    rng = np.random.default_rng(seed)
    used = np.unique(np.concatenate([[0, n_cols - 1], rng.integers(1, n_cols - 1, 10)]))
    compact = np.zeros((n_rows, used.size))
    for i in range(n_rows):
        cols = rng.choice(used.size, 6, replace=False)
        compact[i, cols] = np.round(rng.standard_normal(6) + 0.5 * (i % 2) * (cols % 2), 4)
    C = sp.csr_matrix(compact)
    W = sp.csr_matrix((C.data, used[C.indices], C.indptr), shape=(n_rows, n_cols))
    y = np.where(np.arange(n_rows) % 2 == 1, 1.0, -1.0)
    return W, C, y, compact @ np.linspace(-1, 1, used.size)


WIDE_SOLVERS = ["smo", "nu_svc", "epsilon_svr", "nu_svr", "one_class", "olsvm", "pegasos"]


def _fit(X, y, t, solver):
    """The solver's model of X (labels y, or targets t for an SVR) with gamma 0.5 (the default, 1 / num_features,
    would differ between the wide and the compact columns)."""
    from llsvm.params import get
    return llsvm.train(X, t if solver in ("epsilon_svr", "nu_svr") else y, solver=solver,
                       options=get(solver).options(gamma=0.5))

# a child under an address-space limit: what it holds after its imports plus 1 GiB, which an 8 GB scratch row
# (10^9 columns of float64) exceeds
LIMITED = textwrap.dedent('''
    import resource, sys
    import numpy as np, scipy.sparse as sp
    sys.path.insert(0, sys.argv[1])
    import llsvm, test_estimator_reliability as T
    from llsvm._ext import _kernel, _smo, _online, _kpredict  # noqa: F401
    with open("/proc/self/statm") as f:
        vm = int(f.read().split()[0]) * resource.getpagesize()
    resource.setrlimit(resource.RLIMIT_AS, (vm + (1 << 30), resource.RLIM_INFINITY))
    W, C, y, t = T._wide()
    for solver in sys.argv[2:]:
        wide, compact = (T._fit(X, y, t, solver) for X in (W, C))
        same = np.array_equal(wide.decision_function(W), compact.decision_function(C))
        print(solver, "same" if same else "DIFFERENT", flush=True)
''')


def test_kernel_solvers_train_wide_sparse_rows_under_a_memory_limit(tmp_path):
    """10^9 columns, a few non-zeros: the model (decision values) of the same rows on compact columns, under an
    address-space limit of 1 GiB beyond the child's imports (the scratch row of 8 GB made it a MemoryError)."""
    script = tmp_path / "limited.py"
    script.write_text(LIMITED)
    r = subprocess.run([sys.executable, str(script), os.path.dirname(os.path.abspath(__file__)), *WIDE_SOLVERS],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stdout.split("\n")[:-1] == [f"{s} same" for s in WIDE_SOLVERS]


@pytest.mark.parametrize("solver", WIDE_SOLVERS)
def test_a_wide_shape_with_small_indices(solver):
    """A 2^40-column shape whose rows hold small indices: no scratch row of 2^40 doubles (calloc of 8 TiB failed:
    'kernel cache: ... could not be allocated')."""
    _, C, y, t = _wide(n_cols=50)
    X = sp.csr_matrix((C.data, C.indices, C.indptr), shape=(C.shape[0], 2 ** 40))
    np.testing.assert_array_equal(_fit(X, y, t, solver).decision_function(X),
                                  _fit(C, y, t, solver).decision_function(C))


def test_column_indices_beyond_int32_are_refused_not_wrapped():
    n = 2 ** 40
    X = sp.csr_matrix((np.ones(3), np.array([5, 2 ** 31 - 1, n - 1], np.int64), np.array([0, 1, 2, 3])),
                      shape=(3, n))
    for solver in ("smo", 1):
        with pytest.raises(ValueError, match=r"column 1099511627775 is beyond the int32 range \(columns "
                                             r"0\.\.2147483646"):
            llsvm.train(X, np.array([1.0, -1.0, 1.0]), solver=solver)
    last = sp.csr_matrix((np.ones(2), np.array([5, 2 ** 31 - 2], np.int64), np.array([0, 1, 2])), shape=(2, n))
    assert llsvm.CSRDataset.from_csr(last, np.ones(2)).indices.tolist() == [5, 2 ** 31 - 2]   # the largest: kept


def test_llsvm_train_smo_on_a_file_whose_largest_index_is_a_billion(tmp_path):
    """The CLI path: the model of the wide file under an address-space limit is the compact file's model with the
    indices written back (svm-train's sparse rows need no scratch either)."""
    import resource
    W, C, y, _ = _wide()
    rows = []
    for Xs, name in ((W, "wide"), (C, "compact")):
        with open(tmp_path / name, "w") as f:
            for i in range(Xs.shape[0]):
                a, b = Xs.indptr[i], Xs.indptr[i + 1]
                f.write(f"{int(y[i])} " + " ".join(f"{j + 1}:{v:.17g}" for j, v in zip(Xs.indices[a:b],
                                                                                          Xs.data[a:b])) + "\n")
        rows.append(tmp_path / name)
    exe = os.path.join(BIN, "llsvm-train")

    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (3 << 30, resource.RLIM_INFINITY))
    for path in rows:
        r = subprocess.run([exe, "-s", "smo", "-g", "0.5", "-q", str(path), str(path) + ".model"], capture_output=True,
                           text=True,
                           timeout=600, preexec_fn=limit)
        assert (r.returncode, r.stderr) == (0, ""), r.stderr
    used = np.unique(W.indices)
    compact = (tmp_path / "compact.model").read_text().split("SV\n")
    wide = (tmp_path / "wide.model").read_text().split("SV\n")
    assert wide[0] == compact[0]

    def back(line):
        head, *pairs = line.split(" ")
        return " ".join([head] + [f"{used[int(p.split(':')[0]) - 1] + 1}:{p.split(':')[1]}" if ":" in p else p
                                  for p in pairs])
    assert wide[1] == "\n".join(back(line) for line in compact[1].split("\n"))


def test_the_online_lists_linear_weights_are_checked_before_they_are_made(tmp_path):
    """olsvm with the linear kernel keeps w over the columns up to the largest index: 2^31 - 1 of them is 16 GiB,
    refused with what it is, under a limit that it exceeds (it was numpy's MemoryError, or a scratch row's)."""
    script = tmp_path / "linear.py"
    script.write_text(textwrap.dedent('''
        import resource, sys
        import numpy as np, scipy.sparse as sp
        import llsvm
        from llsvm._ext import _online  # noqa: F401
        with open("/proc/self/statm") as f:
            vm = int(f.read().split()[0]) * resource.getpagesize()
        resource.setrlimit(resource.RLIMIT_AS, (vm + (1 << 30), resource.RLIM_INFINITY))
        n = 2 ** 31 - 1
        X = sp.csr_matrix((np.arange(1.0, 5.0), [5, n - 1, 7, n - 2], [0, 2, 4]), shape=(2, n))
        try:
            llsvm.train(X, np.array([1.0, -1.0]), solver="olsvm", options=llsvm.OnlineOptions(kernel_type=0))
        except llsvm.LLSVMError as exc:
            print(type(exc).__name__, exc)
    '''))
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stdout.startswith("MemoryLimitError feature index 2147483647 makes a weight vector of 16 GiB"), r.stdout


# -- H13: extreme values leak no warning -----------------------------------------------------------------------------
LINEAR_SOLVERS = [0, 1, 2, 3, 4, 5, 6, 7, 11, 12, 13, "local1d", "project1d"]


@pytest.mark.parametrize("solver", LINEAR_SOLVERS)
@pytest.mark.parametrize("extreme", [{"C": 1e308}, {"C": 1e200}, {"bias": 1e200}], ids=["C1e308", "C1e200", "B1e200"])
def test_an_extreme_value_leaks_no_runtime_warning(solver, extreme):
    """The certificate overflows to inf or nan, as C computes it (LIBLINEAR prints 'Objective value = inf'), without
    numpy's RuntimeWarning; a model that is not finite (-s 7) is refused where it is saved, and check_finite says
    which value."""
    X, y = _small()
    target = X[:, 0].copy() if solver in (11, 12, 13) else y
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        warnings.simplefilter("error", RuntimeWarning)
        model = llsvm.train(X, target, solver=solver, **extreme)
        try:
            model.check_finite()
        except LLSVMError as exc:
            assert "not a finite number" in str(exc)
            with pytest.raises(LLSVMError):
                model.save(os.devnull)


def test_linear_svc_with_c_1e308_leaks_no_warning():
    from llsvm.sklearn import LinearSVC
    X, y = _small()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        warnings.simplefilter("error", RuntimeWarning)
        for dual in (True, False):
            LinearSVC(C=1e308, dual=dual).fit(X, y)


def test_an_overflowing_bias_in_the_first_pass_leaves_no_file_open():
    """-s llsvm refuses -B 1e308 in its first pass; the active-set writers it had opened are closed (they were left
    to the garbage collector: ResourceWarning 'unclosed file')."""
    X, y = _small()
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        with pytest.raises(ValueError, match="the squared norm of row 1 overflows"):
            llsvm.train(X, y, solver="llsvm", bias=1e308)
        gc.collect()
    assert [str(w.message) for w in got if issubclass(w.category, ResourceWarning)] == []


# -- H14: 64-bit class labels ----------------------------------------------------------------------------------------
BIG_LABELS = [2 ** 40, -2 ** 40]


@pytest.mark.parametrize("solver", [1, 4, "smo", "nu_svc", "h1tree", "olsvm", "local1d", "llsvm", "streamsvm"])
def test_labels_beyond_int32_train_and_are_written_whole(tmp_path, solver):
    X, y = _small()
    labels = np.where(y > 0, BIG_LABELS[0], BIG_LABELS[1]).astype(np.float64)
    model = llsvm.train(X, labels, solver=solver)
    assert sorted(int(v) for v in model.label) == sorted(BIG_LABELS)
    model.save(tmp_path / "m")
    text = (tmp_path / "m").read_text()
    assert f"label {int(model.label[0])} {int(model.label[1])}\n" in text
    back = llsvm.load_model(tmp_path / "m")
    assert back.label.tolist() == model.label.tolist()
    np.testing.assert_array_equal(back.predict(X), model.predict(X))
    assert set(back.predict(X).tolist()) <= set(float(v) for v in BIG_LABELS)


def test_the_commands_take_labels_beyond_int32(tmp_path):
    data = tmp_path / "d.txt"
    data.write_text("1099511627776 1:1 2:0.5\n-1099511627776 1:-1\n1099511627776 1:2\n-1099511627776 2:-1\n")
    r = subprocess.run([os.path.join(BIN, "llsvm-train"), "-q", str(data), str(tmp_path / "m")], capture_output=True,
                       text=True, timeout=600)
    assert (r.returncode, r.stderr) == (0, "")
    assert "\nlabel 1099511627776 -1099511627776\n" in (tmp_path / "m").read_text()
    r = subprocess.run([os.path.join(BIN, "llsvm-predict"), str(data), str(tmp_path / "m"), str(tmp_path / "p")],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0 and r.stdout.startswith("Accuracy = 100% (4/4)"), (r.stdout, r.stderr)
    assert (tmp_path / "p").read_text() == "1099511627776\n-1099511627776\n1099511627776\n-1099511627776\n"


def test_labels_beyond_int64_are_refused(tmp_path):
    X, y = _small()
    with pytest.raises(ValueError, match="a class label is beyond the int64 range"):
        llsvm.train(X, np.where(y > 0, 1e19, 1.0), solver=1)
    (tmp_path / "m").write_text("solver_type L2R_L2LOSS_SVC_DUAL\nnr_class 2\nlabel 9223372036854775808 -1\n")
    with pytest.raises(ModelFormatError, match="label 9223372036854775808 is beyond the int64 range"):
        llsvm.load_model(tmp_path / "m")
    (tmp_path / "m").write_text("solver_type L2R_L2LOSS_SVC_DUAL\nnr_class 2\nlabel 9223372036854775807 "
                                "-9223372036854775808\nnr_feature 1\nbias -1\nw\n1 \n")
    assert llsvm.load_model(tmp_path / "m").label.tolist() == [2 ** 63 - 1, -2 ** 63]


# -- H1: Ctrl-C stops every estimator's fit ------------------------------------------------------------------------
# The child (scripts/fit_child.py): a generated set and an estimator whose fit lasts tens of seconds of CPU
# (measured: 10-50 s on this machine's cores; the lead before the signal is 1 s of it, so the ratio, not the speed,
# decides), its CPU time at the fit's start written to a file, then the fit; KeyboardInterrupt reported on stdout.
CHILD = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "scripts", "fit_child.py")
BIG = 2 ** 31 - 1
CASES = {       # family: (class, parameters, generated set, target)
    "LinearSVC": ("LinearSVC", dict(dual=True, C=1000.0, tol=1e-12, max_iter=BIG), "dense", "labels"),
    "LogisticRegression": ("LogisticRegression", dict(solver="liblinear", dual=True, C=1000.0, tol=1e-12,
                                                      max_iter=BIG), "dense", "labels"),
    "LinearSVR": ("LinearSVR", dict(C=1000.0, tol=1e-12, max_iter=BIG), "dense", "targets"),
    "OneClassSVM": ("OneClassSVM", dict(gamma=2.0, nu=0.1, cache_size=0.01, tol=1e-12), "kernel8k", "none"),
    "OneClassSVM-21": ("OneClassSVM", dict(solver=21, kernel="linear", nu=0.123457, tol=1e-12, max_iter=BIG),
                       "dense", "none"),
    "SVC": ("SVC", dict(C=1e5, gamma=0.02, cache_size=0.01, tol=1e-12), "kernel", "labels"),
    "NuSVC": ("NuSVC", dict(nu=0.02, gamma=0.02, cache_size=0.01, tol=1e-12), "kernel", "labels"),
    "SVR": ("SVR", dict(C=1e5, gamma=0.02, cache_size=0.01, tol=1e-12), "kernel", "targets"),
    "NuSVR": ("NuSVR", dict(C=1e5, gamma=0.02, cache_size=0.01, tol=1e-12), "kernel", "targets"),
    "TreeSVC": ("TreeSVC", dict(tol=1e-12), "dense", "labels"),
    "OnlineSVC": ("OnlineSVC", dict(epochs=10 ** 6), "kernel", "labels"),
    "ProjectionSVC": ("ProjectionSVC", dict(max_iter=BIG), "sparse", "labels"),
    "OutOfCoreSVC": ("OutOfCoreSVC", dict(C=1000.0, tol=1e-12, max_iter=BIG), "dense", "labels"),
}
FAMILIES = list(CASES)


def interrupt_fit(name, work, lead=LEAD_CPU, cpu_after=CPU_AFTER):
    """Run the child for estimator `name`, SIGINT it `lead` CPU seconds into its fit: what happened (cpu_after:
    the child's CPU seconds from the signal to its exit, or to the kill once it has used `cpu_after`)."""
    work.mkdir(parents=True, exist_ok=True)
    marker = work / "fit-started"
    cls, params, data, target = CASES[name]
    env = dict(os.environ, TMPDIR=str(work))
    with open(work / "stdout", "wb") as out, open(work / "stderr", "wb") as err:
        p = subprocess.Popen([sys.executable, CHILD, cls, repr(params), data, target, str(marker)], stdout=out,
                             stderr=err, env=env)
    res = {"name": name}
    try:
        wait_for(marker.exists, p, START_CPU, "starting its fit")
    except AssertionError as exc:
        res.update(never_started=str(exc), stderr=(work / "stderr").read_text()[-3000:])
        return res
    start = float(marker.read_text().split()[1])           # the child's CPU time as its fit starts
    watch = Watch(p.pid)
    while True:                        # to `lead` CPU seconds into the fit
        if reap(p, time.monotonic()) is not None:
            res.update(ended_before_signal=True, rc=p.returncode, stdout=(work / "stdout").read_text(),
                       stderr=(work / "stderr").read_text()[-3000:])
            return res
        if cpu_of(p.pid) >= start + lead:
            break
        watch.used()
        if watch.stalled():
            kill(p)
            res.update(never_reached=True)
            return res
        time.sleep(0.005)
    c0 = cpu_of(p.pid)
    t0 = time.monotonic()
    os.kill(p.pid, signal.SIGINT)
    got = reap_within(p, cpu_after)
    if got is None:
        c1 = cpu_of(p.pid)
        kill(p)
        res.update(still_running=True, blocked=c1 - c0 < cpu_after, cpu_after=c1 - c0)
    else:
        _, usage = got
        res.update(cpu_after=usage.ru_utime + usage.ru_stime - c0)
    res.update(wall_after=time.monotonic() - t0, rc=p.returncode, cpu_at_signal=c0 - start,
               stdout=(work / "stdout").read_text(), stderr=(work / "stderr").read_text()[-3000:])
    return res


class Runs:
    """The selected families' children, PARALLEL at a time, started when the first test asks (each verdict is its
    own child's CPU time, so two side by side do not change it)."""

    def __init__(self, names, root):
        self.pool = ThreadPoolExecutor(PARALLEL)
        self.futures = {n: self.pool.submit(interrupt_fit, n, root / n) for n in names}

    def __getitem__(self, name):
        return self.futures[name].result()


@pytest.fixture(scope="module")
def fits(request, tmp_path_factory):
    selected = [item.callspec.params["name"] for item in request.session.items
                if getattr(item, "originalname", None) == "test_ctrl_c_stops_the_fit" and hasattr(item, "callspec")]
    runs = Runs(selected, tmp_path_factory.mktemp("ctrl-c"))
    yield runs
    runs.pool.shutdown(wait=True)


@pytest.mark.skipif(not os.path.exists("/proc/self/stat"), reason="reads the child's CPU time in /proc")
@pytest.mark.parametrize("name", FAMILIES)
def test_ctrl_c_stops_the_fit(fits, name):
    res = fits[name]
    info = {k: v for k, v in res.items() if k not in ("stdout",)}
    assert "never_started" not in res, info
    assert not res.get("never_reached"), f"{name}: the child stalled ({STALL} s without CPU) before the signal"
    assert not res.get("ended_before_signal"), f"{name}: the fit ended before {LEAD_CPU} s of CPU: too short ({info})"
    assert not res.get("blocked"), f"{name}: still there after the signal, using no CPU for {STALL} s ({info})"
    assert not res.get("still_running"), f"{name}: still computing {CPU_AFTER} s of CPU after SIGINT ({info})"
    assert res["cpu_after"] < CPU_AFTER, info
    assert res["stdout"] == "KeyboardInterrupt\n" and res["rc"] == 3, info


# -- H1 in process: when the flag is armed, and what it leaves ----------------------------------------------------
@pytest.fixture
def stop():
    from llsvm._ext import _stop
    from llsvm.stop import KERNEL_STOP
    assert _stop.armed() == () and not KERNEL_STOP.armed
    yield _stop
    KERNEL_STOP.disarm()
    _stop.disarm()
    _stop.clear()


def _armed_during(stop, fn, **kw):
    """The signals the flag holds armed while fn trains (seen from its printed lines, `say`), and after."""
    seen = []
    fn(say=lambda text: seen.append(stop.armed()), **kw)
    assert seen, "the training printed nothing: no moment to look at the flag"
    return set(seen), stop.armed()


@pytest.mark.parametrize("call", ["train-smo", "train-linear", "cross_validation", "find_parameter_C", "grid_search",
                                  "predict"])
def test_a_call_from_python_arms_sigint_and_gives_it_back(stop, call, monkeypatch):
    X, y = _small()
    if call in ("grid_search", "predict"):        # they print nothing: the flag seen from the kernels' caller
        import llsvm.models.svm as M
        import llsvm.solvers.grid as G
        where, name = (G, "fold_cells") if call == "grid_search" else (M, "_decision_values")
        inner = getattr(where, name)
        hooked = []
        monkeypatch.setattr(where, name, lambda *a, **k: (hooked[0](""), inner(*a, **k))[1])
        model = llsvm.train(X, y, solver="smo")

        def fn(say):
            hooked.append(say)
            if call == "grid_search":
                return llsvm.grid_search(X, 2, "C=1,2", y, solver="smo")
            return model.decision_function(X)
    else:
        fn = {"train-smo": lambda **kw: llsvm.train(X, y, solver="smo", **kw),
              "train-linear": lambda **kw: llsvm.train(X, y, solver=1, **kw),
              "cross_validation": lambda **kw: llsvm.cross_validation(X, 3, y, solver="smo", **kw),
              "find_parameter_C": lambda **kw: llsvm.find_parameter_C(X, 3, y, solver=2, **kw)}[call]
    before = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)
    assert before[0] is signal.default_int_handler
    during, after = _armed_during(stop, fn)
    assert during == {(signal.SIGINT,)}                     # SIGINT only: SIGTERM is the host's (default: exit)
    assert after == () and stop.stopped() == 0
    assert (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)) == before
    # the host's Ctrl-C is Python's again: KeyboardInterrupt, and the flag stays clear
    with pytest.raises(KeyboardInterrupt):
        os.kill(os.getpid(), signal.SIGINT)
        for _ in range(1000):
            time.sleep(0.001)
    assert stop.stopped() == 0


def test_an_error_gives_the_flag_back(stop):
    with pytest.raises(ValueError):
        llsvm.train(*_small(), solver="smo", C=-1.0)
    assert stop.armed() == ()


def test_a_host_handler_of_its_own_is_left_alone(stop):
    """A handler the host installed runs as it always has (when the kernel call returns): nothing is armed."""
    got = []
    prev = signal.signal(signal.SIGINT, lambda signum, frame: got.append(signum))
    try:
        during, after = _armed_during(stop, lambda **kw: llsvm.train(*_small(), solver="smo", **kw))
        assert during == {()} and after == ()
        assert signal.getsignal(signal.SIGINT) is not signal.default_int_handler
        os.kill(os.getpid(), signal.SIGINT)
        for _ in range(1000):
            if got:
                break
            time.sleep(0.001)
        assert got == [signal.SIGINT] and stop.stopped() == 0
    finally:
        signal.signal(signal.SIGINT, prev)


def test_a_command_arms_both_signals_and_a_call_inside_it_changes_nothing(stop):
    """llsvm-train's body arms SIGINT and SIGTERM (SystemExit 130 / 143); llsvm.train inside it neither arms nor
    disarms; the command gives both back."""
    from llsvm.cli.common import arm_kernel_stop, handle_errors
    seen = {}

    @handle_errors
    def body():
        arm_kernel_stop()
        seen["before"] = stop.armed()
        seen["during"], seen["after"] = _armed_during(stop, lambda **kw: llsvm.train(*_small(), solver="smo", **kw))
    body()
    both = (signal.SIGINT, signal.SIGTERM)
    assert seen == {"before": both, "during": {both}, "after": both}
    assert stop.armed() == ()
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_a_call_from_another_thread_arms_nothing(stop):
    seen = []
    X, y = _small()
    t = threading.Thread(target=lambda: llsvm.train(X, y, solver="smo", say=lambda s: seen.append(stop.armed())))
    t.start()
    t.join()
    assert seen and set(seen) == {()}
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


@pytest.mark.parametrize("keyboard", [True, False], ids=["call", "command"])
def test_a_kernel_cut_short_in_another_thread(stop, keyboard):
    """Where Python runs no handler (a thread other than the main one), the kernel raises itself: KeyboardInterrupt
    under a call's arming, SystemExit(130) under a command's (the CLI's worker threads, as before)."""
    from llsvm._ext._rowops import row_sq_norms
    stop.arm(sigint=True, sigterm=False, keyboard=keyboard)
    from llsvm._ext import _online
    X, _ = _small()
    view = llsvm.CSRDataset.from_csr(sp.csr_matrix(X), np.zeros(len(X))).row_view()
    out = []

    def online():           # a kernel loop with the flag set: the online lists, one epoch
        stop.request_stop(signal.SIGINT)
        try:
            _online.run(view, np.arange(len(X)), np.where(X[:, 0] > 0, 1, -1).astype(np.int8), {"kernel_type": 2,
                        "gamma": 0.5}, row_sq_norms(view), kind="3b", C=1.0, epochs=1)
        except BaseException as exc:        # noqa: B036
            out.append(exc)
    t = threading.Thread(target=online)
    t.start()
    t.join()
    assert len(out) == 1
    if keyboard:
        assert type(out[0]) is KeyboardInterrupt
    else:
        assert type(out[0]) is SystemExit and out[0].code == 130
