"""llsvm-train --dask's command line (issue 44), each in a subprocess through the console script (its signal
handlers and its removal of temporary paths), with TMPDIR a directory of the test's own:

- --workers beyond what the machine runs (4 a CPU, and the memory available at 128 MiB a worker) is a usage error
  naming both bounds, before any worker starts: Dask is not even imported (a stand-in `distributed` that records
  its import says so), under an address-space cap;
- a malformed --dask address is "ERROR: --dask 'ADDRESS': why" (exit 1), before connecting; stdin as the input
  says to convert it to a file;
- a local cluster serves no dashboard on 8787 (port taken: no warning on stderr), and leaves nothing in TMPDIR:
  after a run, and after SIGINT or SIGTERM while it starts or runs (once every process of the run is gone);
- after SIGKILL of the client, multiprocessing's resource tracker (which removes the nannies' semaphores) prints
  no warning;
- Ctrl-C kills the local workers rather than waiting for them (a worker preload's teardown, which a graceful close
  runs, never runs), and a Ctrl-C whose handler runs inside a Dask Future's __del__ (or a weakref callback) is not
  lost.

The clusters are of one worker; the runs a signal ends are CoCoA+ runs of -s 3 that never meet their -e, and the
signal comes once the files of the cluster's scheduler or worker exist (nothing waits a given time).
"""
import errno
import glob
import os
import resource
import signal
import socket
import subprocess
import sys
import time

import pytest

import llsvm
from llsvm import dask as lldask
from llsvm.errors import quote
from llsvm.memory import machine_available

from conftest import REPO_ROOT

import distributed  # noqa: E402,F401  (a test dependency, pyproject [test]: missing, the suite fails, it does not skip)

TRAIN = os.path.join(os.path.dirname(sys.executable), "llsvm-train")
AS_CAP = 2 << 30                # the address space of the command (a refusal needs a fraction of it)
ENDLESS = ["-s", "3", "-c", "1e6", "-e", "1e-300", "--max-iter", "2147483647"]     # CoCoA+ rounds, on and on
DEADLINE = 300                  # seconds a command (or its processes' exit) may take before the test gives up


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    """A small two-class set (binary file)."""
    d = tmp_path_factory.mktemp("daskrel")
    text = d / "two.txt"
    text.write_text("".join(f"{1 if i % 3 else -1} 1:{(i % 7) / 7:.3f} 2:{(i % 5) / 5 - 0.5:.2f} "
                            f"{3 + i % 4}:{1 if i % 2 else -1}\n" for i in range(200)))
    llsvm.write_binary(str(text), str(d / "two.bin"))
    return str(d / "two.bin")


def _env(tmp_path, **extra):
    tmp = tmp_path / "tmp"
    tmp.mkdir(exist_ok=True)
    return dict(os.environ, TMPDIR=str(tmp), PYTHONPATH=os.pathsep.join([str(REPO_ROOT),
                                                                         os.environ.get("PYTHONPATH", "")]), **extra)


def _capped(cpus=None):
    """preexec_fn: the address-space cap, and the CPUs the command may run on."""
    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (AS_CAP, AS_CAP))
        if cpus is not None:
            os.sched_setaffinity(0, cpus)
    return limit


def _train(tmp_path, *args, env=None, cpus=None, stdin=None):
    return subprocess.run([TRAIN, *map(str, args)], capture_output=True, text=True, env=env or _env(tmp_path),
                          stdin=stdin, timeout=DEADLINE, preexec_fn=_capped(cpus))


def _left(tmp_path):
    return sorted(os.path.relpath(os.path.join(root, name), tmp_path / "tmp")
                  for root, dirs, files in os.walk(tmp_path / "tmp") for name in dirs + files)


# -- --workers: bounded before any worker starts ------------------------------------------------------------------
@pytest.fixture
def no_dask(tmp_path):
    """An environment whose `distributed` is a stand-in that records its import (the file `imported`) and fails
    as a missing one does: a command that gets as far as Dask says "--dask needs dask.distributed"."""
    fake = tmp_path / "fake" / "distributed"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("import os\nopen(os.environ['FAKE_DISTRIBUTED_IMPORTED'], 'w').close()\n"
                                      "raise ImportError('no distributed here')\n")
    marker = tmp_path / "imported"
    env = _env(tmp_path, FAKE_DISTRIBUTED_IMPORTED=str(marker))
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path / "fake"), env["PYTHONPATH"]])
    return env, marker


@pytest.mark.parametrize("workers", ["1000", "2147483648", "99999999999999999999999"])
def test_workers_beyond_the_machine_are_a_usage_error_before_dask(data, tmp_path, no_dask, workers):
    """`--dask local --workers 1000` started worker after worker (80 after a minute, each ~75 MiB, on a 24 GB
    machine): now a usage error naming both bounds, with Dask never imported and nothing written."""
    env, marker = no_dask
    p = _train(tmp_path, "--dask", "local", "--workers", workers, "-q", data, tmp_path / "m", env=env)
    assert p.returncode == 2, p.stderr
    assert f"Invalid value for '--workers': {workers} is more than this machine can run: at most " in p.stderr
    assert "for the CPUs (4 a CPU," in p.stderr and "for the memory (" in p.stderr and "128 MiB a worker" in p.stderr
    assert p.stdout == "" and not marker.exists() and not (tmp_path / "m").exists() and _left(tmp_path) == []


def test_the_workers_bound_counts_the_cpus_the_command_may_use(data, tmp_path, no_dask):
    """On one CPU (its affinity): 4 workers go on to Dask, 5 are refused, naming 1 CPU."""
    if (machine_available() or 0) < 2 * lldask.WORKERS_PER_CPU * lldask.WORKER_MEMORY:
        pytest.skip("the memory available, not the CPU, bounds the workers here")
    env, marker = no_dask
    one = {sorted(os.sched_getaffinity(0))[0]}
    top = lldask.WORKERS_PER_CPU
    p = _train(tmp_path, "--dask", "local", "--workers", top + 1, "-q", data, tmp_path / "m", env=env, cpus=one)
    assert p.returncode == 2 and f"at most {top} for the CPUs ({top} a CPU, 1 CPU)" in p.stderr, p.stderr
    assert not marker.exists()
    p = _train(tmp_path, "--dask", "local", "--workers", top, "-q", data, tmp_path / "m", env=env, cpus=one)
    assert p.returncode == 1 and "--dask needs dask.distributed" in p.stderr, p.stderr
    assert marker.exists() and _left(tmp_path) == []


def test_the_api_refuses_too(monkeypatch):
    """llsvm.dask.connect (train(address=, workers=) and the others): the same refusals, no cluster made."""
    import distributed

    def no_cluster(*args, **kw):
        raise AssertionError("a LocalCluster was made")
    monkeypatch.setattr(distributed, "LocalCluster", no_cluster)
    with pytest.raises(llsvm.errors.ParameterError, match="--workers 100000 is more than this machine can run"):
        lldask.connect("local", 100000)
    with pytest.raises(llsvm.errors.ParameterError, match="--dask 'foo://bar': unknown address scheme 'foo'"):
        lldask.connect("foo://bar")


# -- addresses and input -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("address,why", [
    ("foo://bar", "unknown address scheme 'foo' (Dask knows inproc://, tcp://, tls://"),
    ("", "no address"),
    ("tcp://", "missing port number"),
    ("tcp://127.0.0.1", "missing port number"),
    ("localhost:x", "not an address Dask can connect to"),
    ("tcp://[::1", "not an address Dask can connect to"),
    ("tcp://127.0.0.1:99999", "port 99999 is out of range (1 to 65535)"),
    ("inproc://x", "an inproc:// scheduler runs inside one process"),
    ("tls://127.0.0.1:1", "a tls:// scheduler needs Dask's TLS configuration"),
])
def test_a_malformed_address_is_refused_before_connecting(data, tmp_path, address, why):
    """Each was an internal error (ValueError: unknown address scheme, missing port number, ...; TypeError for
    tls:// without TLS configured) or, for the port out of range, a connection attempt until Dask's timeout."""
    p = _train(tmp_path, "--dask", address, "-q", data, tmp_path / "m",
               env=_env(tmp_path, DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT="60s"))
    assert p.returncode == 1, p.stderr
    assert p.stderr.startswith(f"ERROR: --dask {quote(address)}: ") and why in p.stderr, p.stderr
    assert p.stderr.count("\n") == 1 and p.stdout == "" and not (tmp_path / "m").exists()


def test_stdin_is_refused_with_the_conversion(data, tmp_path):
    """`llsvm-train --dask local -`: "can't open input file -" before; now what to do."""
    with open(data, "rb") as f:
        p = _train(tmp_path, "--dask", "local", "-q", "-", tmp_path / "m", stdin=f)
    assert p.returncode == 1
    assert "not standard input: convert it to a file first: llsvm-convert - FILE.bin" in p.stderr, p.stderr
    assert not (tmp_path / "m").exists() and _left(tmp_path) == []


# -- a local cluster: no dashboard, no scratch space left ----------------------------------------------------------
@pytest.fixture
def port_8787_taken():
    """127.0.0.1:8787 held (by this test, or by whoever holds it already)."""
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", 8787))
        s.listen()
    except OSError as exc:
        if exc.errno != errno.EADDRINUSE:
            raise
    yield
    s.close()


def test_a_local_cluster_starts_no_dashboard(data, tmp_path, port_8787_taken):
    """With the dashboard's port taken, `--dask local -q` printed distributed's "UserWarning: Port 8787 is
    already in use"; now nothing."""
    p = _train(tmp_path, "--dask", "local", "--workers", "1", "-q", data, tmp_path / "m")
    assert p.returncode == 0 and p.stderr == "" and p.stdout == ""
    assert (tmp_path / "m").exists()


def test_a_local_run_leaves_nothing_in_tmpdir(data, tmp_path):
    """Every run left $TMPDIR/dask-scratch-space/ with global.lock and purge.lock."""
    p = _train(tmp_path, "--dask", "local", "--workers", "1", "-q", data, tmp_path / "m")
    assert p.returncode == 0, p.stderr
    assert _left(tmp_path) == []


def _alive(pgid):
    """The processes of the group that are not zombies."""
    out = []
    for stat in glob.glob("/proc/[0-9]*/stat"):
        try:
            with open(stat) as f:
                s = f.read()
        except OSError:
            continue
        fields = s[s.rindex(")") + 2:].split()
        if int(fields[2]) == pgid and fields[0] != "Z":
            out.append(int(stat.split("/")[2]))
    return out


def _gone(pgid):
    """Wait for every process of the run (its group) to be gone."""
    deadline = time.monotonic() + DEADLINE
    while _alive(pgid):
        assert time.monotonic() < deadline, f"processes {_alive(pgid)} of the run still there"
        time.sleep(0.05)


class _Run:
    """An endless --dask local run in a session of its own: every process it starts (the worker, the resource
    tracker) is in its group, killed at the end whatever happened."""

    def __init__(self, data, tmp_path, env=None):
        self.tmp = tmp_path / "tmp"
        self.p = subprocess.Popen([TRAIN, "--dask", "local", "--workers", "1", *ENDLESS, "-q", data,
                                   str(tmp_path / "m")], env=env or _env(tmp_path), stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True, start_new_session=True, preexec_fn=_capped())

    def wait_for(self, pattern):
        """Until a file of the cluster exists (the scheduler's or a worker's lock file)."""
        deadline = time.monotonic() + DEADLINE
        while not glob.glob(str(self.tmp / "**" / pattern), recursive=True):
            assert self.p.poll() is None, self.p.communicate()
            assert time.monotonic() < deadline, f"no {pattern} after {DEADLINE} s"
            time.sleep(0.02)

    def gone(self):
        _gone(self.p.pid)

    def kill(self):
        try:
            os.killpg(self.p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.p.wait()


@pytest.mark.parametrize("when", ["starting", "running"])
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_leaves_nothing_in_tmpdir(data, tmp_path, sig, when):
    """SIGINT or SIGTERM while the cluster starts (its scheduler's directory there, the worker still starting)
    or once its worker runs: exit 130 / 143, no message, and once the run's processes are gone TMPDIR is empty
    (the cluster closed before its directory is removed: a worker still starting would make it again)."""
    run = _Run(data, tmp_path)
    try:
        run.wait_for("scheduler-*.dirlock" if when == "starting" else "worker-*.dirlock")
        os.kill(run.p.pid, sig)
        out, err = run.p.communicate(timeout=DEADLINE)
        assert run.p.returncode == 128 + sig and out == "" and err == "", err
        run.gone()
        assert _left(tmp_path) == []
        assert not (tmp_path / "m").exists()
    finally:
        run.kill()


def test_sigkill_brings_no_resource_tracker_warning(data, tmp_path):
    """After SIGKILL of the client, multiprocessing's resource tracker removes the semaphores of the nannies'
    queues (6 a worker) and warned "There appear to be 6 leaked semaphore objects to clean up at shutdown" on the
    command's stderr. (The run's directory stays: nothing of the client runs after SIGKILL.)"""
    run = _Run(data, tmp_path)
    try:
        run.wait_for("worker-*.dirlock")           # the nanny's queues exist from before the worker's start
        os.kill(run.p.pid, signal.SIGKILL)
        out, err = run.p.communicate(timeout=DEADLINE)    # stderr's end: the tracker and the worker are gone too
        assert run.p.returncode == -signal.SIGKILL
        assert "leaked" not in err and "resource_tracker" not in err, err
        assert err == "" and out == ""
        run.gone()
    finally:
        run.kill()


# -- Ctrl-C: within a second, never lost ---------------------------------------------------------------------------
PRELOAD = """import os


def _say(what):
    with open(os.environ["LLSVM_TEST_MARKER"], "a") as f:
        f.write(what + "\\n")


def dask_setup(worker):
    _say("setup")


def dask_teardown(worker):
    _say("teardown")
"""


@pytest.fixture
def marked(tmp_path):
    """An environment whose Dask workers load a preload that writes "setup" to the file `marker` when a worker starts
    and "teardown" when it closes gracefully (Worker.close runs its preloads' teardown; a killed worker does not)."""
    preload = tmp_path / "marker_preload.py"
    preload.write_text(PRELOAD)
    marker = tmp_path / "marker"
    env = _env(tmp_path, LLSVM_TEST_MARKER=str(marker), DASK_DISTRIBUTED__WORKER__PRELOAD=f"[{str(preload)!r}]")
    return env, marker


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_kills_the_workers_rather_than_waiting_for_them(data, tmp_path, marked, sig):
    """Issue 44: SIGINT in the middle of a --dask local run exited only once the cluster had closed, which asks each
    worker to finish the task it runs and waits up to 4 s for it (a nanny's close; 4.1 s here for a -s smo pair's
    task). Now the workers are killed (SIGKILL, their nannies told first) and only then is the cluster closed and its
    directory removed: a worker's graceful close, which runs its preloads' teardown, never happens (it does at the
    end of a run that ends), and nothing is left (processes, TMPDIR)."""
    env, marker = marked
    p = _train(tmp_path, "--dask", "local", "--workers", "1", "-q", data, tmp_path / "m", env=env)
    assert p.returncode == 0 and p.stderr == "", p.stderr
    assert marker.read_text().split() == ["setup", "teardown"]          # a run that ends: its worker closed
    marker.unlink()
    run = _Run(data, tmp_path, env=env)
    try:
        run.wait_for("worker-*.dirlock")
        deadline = time.monotonic() + DEADLINE
        # the worker has started: its preload's setup has run (its line written, not only the file opened: a
        # signal between the two leaves an empty marker)
        while not (marker.exists() and marker.read_text().endswith("\n")):
            assert run.p.poll() is None and time.monotonic() < deadline, run.p.communicate()
            time.sleep(0.02)
        os.kill(run.p.pid, sig)
        out, err = run.p.communicate(timeout=DEADLINE)
        assert run.p.returncode == 128 + sig and out == "" and err == "", err
        run.gone()
        assert marker.read_text().split() == ["setup"]                   # killed, not asked to close
        assert _left(tmp_path) == []
    finally:
        run.kill()


FINALIZER_SIGNAL = """import os
import signal
import sys
import threading
import weakref


class _Dropped:
    pass


def _interrupt():
    signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)
    for _ in range(1000):                       # the handler runs at a check in here
        pass


def _in_weakref_callback(ref):
    _interrupt()


if __name__ == "__main__":
    import distributed.client
    real = distributed.client.Future.__del__
    dropped = [0]

    def __del__(self):
        # the main thread drops a step's futures: at the SIGNAL_AT-th, Ctrl-C lands in its __del__ (or in a weakref
        # callback that its __del__ sets off)
        if threading.current_thread() is threading.main_thread():
            dropped[0] += 1
            if dropped[0] == int(os.environ["SIGNAL_AT"]):
                if os.environ["SIGNAL_IN"] == "__del__":
                    _interrupt()
                else:
                    target = _Dropped()
                    ref = weakref.ref(target, _in_weakref_callback)
                    del target
        real(self)
    distributed.client.Future.__del__ = __del__
    sys.argv[0] = "llsvm-train"
    from llsvm.cli.entry import train
    train()
"""


@pytest.mark.parametrize("where", ["__del__", "weakref callback"])
def test_a_signal_in_a_finalizer_is_not_lost(data, tmp_path, where):
    """Issue 44: about one Ctrl-C in six of an `llsvm-train --dask local` run was lost: its handler ran inside a Dask
    Future's __del__ (the main thread drops each step's futures), where Python swallows the SystemExit it raised
    ("Exception ignored in: <function Future.__del__>", a traceback on stderr); the run went on to its end, and
    every later Ctrl-C was ignored (the command was "exiting"). Here the signal lands in the __del__ of the third
    Future the main thread of a -C search drops (or in a weakref callback set off there): exit 130, the search cut
    short, nothing on stderr, nothing left."""
    script = tmp_path / "finalizer_signal.py"
    script.write_text(FINALIZER_SIGNAL)
    env = _env(tmp_path, SIGNAL_AT="3", SIGNAL_IN=where)
    p = subprocess.Popen([sys.executable, str(script), "--dask", "local", "--workers", "1", "-s", "3", "-C", data],
                         env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
                         preexec_fn=_capped())
    try:
        out, err = p.communicate(timeout=DEADLINE)
        assert p.returncode == 130 and err == "", err
        assert out.startswith("Doing parameter search") and "Best C" not in out
        _gone(p.pid)
        assert _left(tmp_path) == []
    finally:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        p.wait()
