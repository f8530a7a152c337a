"""Shared fixtures for the llsvm tests.

- ``repo_root``: the repository root (the directory holding pyproject.toml).
- ``shared_data``: ``data/public`` of the repository, the public LIBSVM sets (NAME.xz and MANIFEST.tsv) that
  ``make data`` fetches and checks (``scripts/fetch_data.py``; ``make test`` runs it best effort); the test is skipped,
  saying so, when none are there. ``load(name)`` and ``shared_plain(name)`` skip when that one set is missing.
- ``write_bytes``: ``write_bytes(data, name="data.txt")`` writes a bytes string into the test's tmp_path and returns
  the path.
- ``random_libsvm``: ``random_libsvm(seed, ...)`` makes a random LIBSVM text file's bytes together with the exact
  arrays the parser must return (see ``RandomLibsvm``).
- ``assert_same_csr``: ``assert_same_csr(ds, y, indptr, indices, values, n_features=None)`` checks a dataset's
  arrays bit for bit (dtypes included).
- ``PEAK``, ``run_peak``: a command's own peak RSS (VmHWM).

Time in the tests: no verdict depends on the wall clock, which a busy machine stretches (at a load of 30 on 2
cores a process gets a fifteenth of a core). A bound on a command's work is a bound on its CPU time (its rusage, or
/proc: scripts/children.py, whose wait_for, wait_within and communicate_within also tell a blocked child by its
CPU time standing still); a wall-clock timeout only guards against a hang, at 600 s for the commands of a second
or two of CPU that the tests run (at least 10x what they need on such a machine).
"""
import os
import pathlib
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass

import numpy as np
import pytest

# A suite started as a background job of a shell without job control (`make test &`, nohup) inherits SIGINT as
# ignored, and so would every command the tests start: the commands keep an inherited SIG_IGN (as LIBLINEAR's do),
# and the tests that send them SIGINT (Ctrl-C) would wait for an exit that never comes. The suite's process takes
# SIGINT again, so that its children start with the default action, as they do from a terminal.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

# `make test` runs the suite inside make: MAKELEVEL and MAKEFLAGS (with `w`, and a jobserver) would reach the
# `make` the tests start and change what it prints ("make[1]: Entering directory ..."). The tests' make runs as a
# user's from a shell does.
for _name in ("MAKELEVEL", "MAKEFLAGS", "MFLAGS", "MAKEOVERRIDES"):
    os.environ.pop(_name, None)

REPO_ROOT = pathlib.Path(__file__).resolve().parent.parent

# runs `python -m MODULE ARGS` and, at exit, writes the process's own peak RSS (VmHWM, kB) to $LLSVM_PEAK_FILE. The
# rusage of a child would not do: its ru_maxrss counts the forked image of this (large) test process before exec
PEAK = r"""
import atexit, os, runpy, sys
def _peak():
    with open("/proc/self/status") as f:
        hwm = next(line.split()[1] for line in f if line.startswith("VmHWM:"))
    with open(os.environ["LLSVM_PEAK_FILE"], "w") as f:
        f.write(hwm)
atexit.register(_peak)
sys.argv = sys.argv[1:]
runpy.run_module(sys.argv[0], run_name="__main__", alter_sys=True)
"""


def run_peak(args, timeout=600):
    """`python -m args...` (e.g. ["llsvm.cli.train", ...]) with this checkout first on the path: (the completed
    process, its own peak RSS in bytes)."""
    fd, peak_file = tempfile.mkstemp(prefix="llsvm-peak-")
    os.close(fd)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO_ROOT), os.environ.get("PYTHONPATH", "")]),
               LLSVM_PEAK_FILE=peak_file)
    try:
        proc = subprocess.run([sys.executable, "-c", PEAK, *map(str, args)], capture_output=True, text=True,
                              env=env, timeout=timeout)
        with open(peak_file) as f:
            peak = int(f.read() or 0) * 1024
    finally:
        os.unlink(peak_file)
    return proc, peak


@pytest.fixture(autouse=True)
def cores_idle(monkeypatch):
    """Every test sees the machine's other cores idle (llsvm.solvers.common.others_running: 0), so that --threads N
    takes N threads and a scout whatever the suite's other worker is running: no test's path depends on the
    machine's load. The tests of that look (test_dcd_threads, test_kernel_threads) set it themselves."""
    from llsvm.solvers import common
    monkeypatch.setattr(common, "others_running", lambda: 0)


@pytest.fixture(scope="session")
def repo_root():
    return REPO_ROOT


# the public LIBSVM sets, fetched by `make data` (scripts/fetch_data.py, from the addresses of data/sets.tsv)
PUBLIC_DATA = REPO_ROOT / "data" / "public"
FETCH_HINT = "`make data` fetches them (without internet: LLSVM_DATA_MIRROR=DIR make data, DIR holding NAME.xz)"


@pytest.fixture(scope="session")
def shared_data():
    path = PUBLIC_DATA
    if not path.is_dir() or not any(path.glob("*.xz")):
        pytest.skip(f"the public LIBSVM sets are not in {path}: {FETCH_HINT}")
    return path


@pytest.fixture(scope="session")
def load(shared_data):
    """load(name): the shared data set `name` (e.g. "a9a", "a9a.t") as a CSRDataset, cached for the session."""
    import llsvm
    cache = {}

    def get(name):
        if name not in cache:
            path = shared_data / f"{name}.xz"
            if not path.is_file():
                pytest.skip(f"{path} is absent: {FETCH_HINT}")
            cache[name] = llsvm.read_dataset(path)
        return cache[name]
    return get


@pytest.fixture(scope="session")
def shared_plain(shared_data, tmp_path_factory):
    """plain(name) -> path of data/public/NAME.xz decompressed once per session into a temp directory (the test is
    skipped when that set is missing)."""
    import lzma

    d = tmp_path_factory.mktemp("shared-plain")
    cache = {}

    def plain(name):
        if name not in cache:
            if not (shared_data / f"{name}.xz").is_file():
                pytest.skip(f"{shared_data / (name + '.xz')} is absent: {FETCH_HINT}")
            with lzma.open(shared_data / f"{name}.xz") as f:
                (d / name).write_bytes(f.read())
            cache[name] = d / name
        return cache[name]
    return plain


@pytest.fixture
def write_bytes(tmp_path):
    def write(data, name="data.txt"):
        path = tmp_path / name
        path.write_bytes(data)
        return path
    return write


@dataclass
class RandomLibsvm:
    """A random LIBSVM text file and the arrays it must parse to (indices 0-based, n_features = max index + 1)."""

    text: bytes
    y: np.ndarray
    indptr: np.ndarray
    indices: np.ndarray
    values: np.ndarray
    n_features: int


def _fmt(rng, v):
    """A float as text that parses back to exactly v: %.17g, repr, or (when exact) a short %g form."""
    k = int(rng.integers(0, 3))
    if k == 0:
        return "%.17g" % v
    if k == 1:
        return repr(float(v))
    s = "%g" % v
    return s if float(s) == v else repr(float(v))


def make_random_libsvm(seed, n_rows=200, n_features=50, density=0.1, empty_frac=0.1, labels=(-1.0, 1.0),
                       fancy=True, zero_based=False):
    """Random rows; `fancy` mixes tabs, repeated spaces, CRLF, comments and blank lines into the text."""
    rng = np.random.default_rng(seed)
    y = rng.choice(np.asarray(labels, dtype=np.float64), n_rows)
    lines = []
    indptr = [0]
    all_idx, all_val = [], []
    one = 0 if zero_based else 1
    for i in range(n_rows):
        if rng.random() < empty_frac:
            k = 0
        else:
            k = int(rng.binomial(n_features, density))
        idx = np.sort(rng.choice(n_features, k, replace=False)).astype(np.int32)
        val = rng.standard_normal(k) * 10.0 ** rng.integers(-8, 9, k)
        all_idx.append(idx)
        all_val.append(val)
        indptr.append(indptr[-1] + k)
        if fancy:
            seps = [" ", "\t", "  ", " \t "]
            parts = [_fmt(rng, y[i])]
            for j, v in zip(idx.tolist(), val.tolist()):
                parts.append(seps[int(rng.integers(0, 4))] + f"{j + one}:{_fmt(rng, v)}")
            line = "".join(parts)
            r = rng.random()
            if r < 0.1:
                line += " # comment 1:2 x"
            elif r < 0.2:
                line += "  \t"
            end = "\r\n" if rng.random() < 0.2 else "\n"
            if rng.random() < 0.05:
                lines.append(["\n", "# a comment line\n", "   \t\n", "\r\n"][int(rng.integers(0, 4))])
            lines.append(line + end)
        else:
            lines.append(" ".join(["%.17g" % y[i]] + [f"{j + one}:{v!r}" for j, v in zip(idx.tolist(), val.tolist())])
                         + "\n")
    indices = np.concatenate(all_idx) if all_idx else np.empty(0, np.int32)
    values = np.concatenate(all_val) if all_val else np.empty(0, np.float64)
    n_feat = int(indices.max()) + 1 if indices.size else 0
    return RandomLibsvm("".join(lines).encode("ascii"), y, np.asarray(indptr, np.int64), indices.astype(np.int32),
                        values.astype(np.float64), n_feat)


def write_small_set(path, n_rows, labels=(-1, 1), n_features=30, nnz=6, seed=1):
    """A small learnable LIBSVM text file (seeded): row i has class labels[i % len(labels)] and nnz features whose
    values lean towards its class."""
    rng = np.random.default_rng(seed)
    with open(path, "w") as f:
        for i in range(n_rows):
            k = i % len(labels)
            cols = np.sort(rng.choice(n_features, size=nnz, replace=False))
            f.write(f"{labels[k]} " + " ".join(f"{c + 1}:{rng.normal() + 0.5 * (c % len(labels) == k):.4f}"
                                               for c in cols) + "\n")
    return path


def write_repeated_libsvm(path, repeats, seed=7):
    """1,000 distinct random rows (12 non-zeros among 3,000 features, labels alternating -1/+1) written `repeats`
    times: about 166 KB each; large inputs made in well under a second."""
    rng = np.random.default_rng(seed)
    n_distinct, k = 1000, 12
    idx = np.sort(rng.choice(np.arange(1, 3001), size=(n_distinct, k), replace=True), axis=1)
    vals = np.round(rng.standard_normal((n_distinct, k)), 6)
    lines = []
    for i in range(n_distinct):
        cols, first = np.unique(idx[i], return_index=True)
        lines.append(("1" if i % 2 else "-1") + "".join(f" {c}:{v:g}" for c, v in zip(cols, vals[i][first])))
    block = ("\n".join(lines) + "\n").encode()
    with open(path, "wb") as f:
        for _ in range(repeats):
            f.write(block)
    return path


@pytest.fixture(scope="session")
def big_text(tmp_path_factory):
    """About 300,000 rows (~50 MB) of LIBSVM text: long enough runs of llsvm-convert and the out-of-core solvers
    to signal them mid-way (tests/test_cli_convert.py, tests/test_reliability.py)."""
    return write_repeated_libsvm(tmp_path_factory.mktemp("big") / "big.txt", 300)


@pytest.fixture(scope="session")
def random_libsvm():
    return make_random_libsvm


def _assert_same_csr(ds, y, indptr, indices, values, n_features=None):
    assert ds.y.dtype == np.float64
    assert ds.indptr.dtype == np.int64
    assert ds.indices.dtype == np.int32
    assert ds.values.dtype == np.asarray(values).dtype
    np.testing.assert_array_equal(ds.y.view(np.int64), np.asarray(y, np.float64).view(np.int64))
    np.testing.assert_array_equal(ds.indptr, np.asarray(indptr, np.int64))
    np.testing.assert_array_equal(ds.indices, np.asarray(indices, np.int32))
    v = np.asarray(values)
    itype = np.int32 if v.dtype == np.float32 else np.int64
    np.testing.assert_array_equal(np.ascontiguousarray(ds.values).view(itype), np.ascontiguousarray(v).view(itype))
    if n_features is not None:
        assert ds.n_features == n_features


@pytest.fixture(scope="session")
def assert_same_csr():
    return _assert_same_csr


def without_scaling_note(stderr):
    """llsvm-train's stderr without its note that scaling may help (llsvm/scale.py, range_advice): llsvm's own
    line, which svm-train and train do not print, left out where a test compares their stderr with llsvm-train's."""
    return "".join(line for line in stderr.splitlines(True)
                   if not (line.startswith("Note: ") and "llsvm-scale" in line))


def assert_exit(result, code):
    """Exit code `code` through a clean sys.exit (never an uncaught exception), and no traceback."""
    info = (result.exit_code, result.stdout, result.stderr, result.exc_info)
    assert result.exit_code == code, info
    if code == 0:
        assert result.exception is None, info
    else:
        assert isinstance(result.exception, SystemExit), info
    assert "Traceback" not in result.stderr


def generated_set(path, kind, **opts):
    """scripts/gen_data.py KIND --out PATH with opts as its options (rows=..., features=..., nnz_per_row=...,
    seed=...), read as a CSRDataset."""
    import subprocess
    import sys
    import llsvm
    args = [f"--{k.replace('_', '-')}={v}" for k, v in opts.items()]
    subprocess.run([sys.executable, str(REPO_ROOT / "scripts" / "gen_data.py"), kind, "--out", str(path), "-q", *args],
                   check=True)
    return llsvm.read_dataset(path)


def linear_primal(X, y, w, C, loss, p=0.0, sample_weight=None):
    """LIBLINEAR's L2-regularized primal at w over rows X with the bias column: 1/2 w.w + sum_i C_i loss_i, C_i = C
    (times the row's weight with sample_weight, docs/weights.md); loss "hinge", "squared_hinge", "log",
    "epsilon_insensitive" or the squared epsilon-insensitive loss (anything else), p the SVR's epsilon."""
    m = X @ w
    if loss == "hinge":
        losses = np.maximum(0.0, 1.0 - y * m)
    elif loss == "squared_hinge":
        losses = np.maximum(0.0, 1.0 - y * m) ** 2
    elif loss == "log":
        losses = np.logaddexp(0.0, -y * m)
    elif loss == "epsilon_insensitive":
        losses = np.maximum(0.0, np.abs(m - y) - p)
    else:                                   # squared epsilon-insensitive
        losses = np.maximum(0.0, np.abs(m - y) - p) ** 2
    if sample_weight is None:
        return 0.5 * float(w @ w) + C * float(losses.sum())
    return 0.5 * float(w @ w) + C * float(np.asarray(sample_weight) @ losses)


@pytest.fixture
def bars(monkeypatch):
    """Every stage of every bar a run shows: (desc, unit, total, n) as it closes or goes on to its next stage."""
    from llsvm import report
    seen = []

    class Recording(report._bar_class()):
        def reset(self, total=None):
            seen.append((self.desc, self.unit, self.total, self.n))
            super().reset(total)

        def close(self):
            if not self.disable and self.reporter is not None:
                seen.append((self.desc, self.unit, self.total, self.n))
            super().close()

    monkeypatch.setattr(report, "_Bar", Recording)
    return seen
