"""llsvm on Dask (issue 31): a LocalCluster of two worker processes, and a real `dask scheduler` with two
`dask worker` processes on this machine started by the tests.

- One task per class: for every random-access linear type and the out-of-core solvers (-s llsvm, streamsvm, bm,
  also under --memory) on more than two classes, the model file and the text printed are the single-process run's
  byte for byte (the same problems with the same seeds, on the workers).
- One task per class pair: -s smo, nu_svc and the online lists (olsvm, olsvm-rhl, norma, pegaz, pegasos), each
  pair's draws from the RNG state the one-process run gives it, and -s h1tree's decision lists (its RBF node as
  -s smo's pairs): the model file and the text, byte for byte.
- Whole runs on one worker (two classes of -s 5, -s 12, one-class, -s 4, h1tree and -s llsvm): the same model as
  in one process.
- Distributed Newton (two-class -s 0 / -s 2, -s 11): on one part the single-process model bit for bit; on three
  the in-process dnewton run over the same parts bit for bit; a worker killed in the middle: the same model.
- llsvm-train --dask: the same model and stdout as without it; --json says what ran where; text input and --workers
  without --dask local are refused with their exit codes.
- -C on the cluster (at each value of C one task per worker thread, running the folds whose home it is, each
  fold's warm start kept on its worker; a step is one round trip): the same lines, the same best C (and p) and the
  same --json as in one process; only a bool and a number come back per fold; a worker that loses its folds' warm
  starts makes the search start again, with the same lines printed once.
- Faults, on the real cluster, each made while a task is running (the tests wait until the scheduler shows one
  processing; nothing depends on the machine's speed): a worker killed with SIGKILL (its task runs again on the
  other worker, and the model is the one-process model); the scheduler killed (exit 1, a message, no model file);
  Ctrl-C (exit 130, no model file, no task left on the scheduler).
"""
import json
import os
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import llsvm
from llsvm import dask as lldask
import llsvm.dask.client as dask_client
import llsvm.dask.tasks as dask_tasks
from llsvm.dask import ClusterError
from llsvm.options import H1Options, LLSVMOptions, OnlineOptions, StreamOptions

from conftest import REPO_ROOT

import distributed  # noqa: E402  (a test dependency, pyproject [test]: missing, the suite fails, it does not skip)

ENV = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO_ROOT), os.environ.get("PYTHONPATH", "")]))


def _generated(path, classes, rows, features, seed):
    subprocess.run([sys.executable, str(REPO_ROOT / "scripts" / "gen_data.py"), "multiclass", "--rows", str(rows),
                    "--features", str(features), "--classes", str(classes), "--seed", str(seed), "--out", str(path),
                    "-q"], check=True)
    llsvm.write_binary(str(path), str(path) + ".bin")
    return str(path) + ".bin"


ROWS = {"five": 1000, "two": 800, "reg": 300}       # the module's sets' rows (fixtures of those names)


@pytest.fixture(scope="module")
def five(tmp_path_factory):
    """A 5-class set of 1,000 rows (binary file)."""
    return _generated(tmp_path_factory.mktemp("dask") / "five", 5, ROWS["five"], 300, 4)


@pytest.fixture(scope="module")
def two(tmp_path_factory):
    return _generated(tmp_path_factory.mktemp("dask") / "two", 2, ROWS["two"], 200, 5)


@pytest.fixture(scope="module")
def slow(tmp_path_factory):
    """12 classes whose -s 3 -c 10 -e 1e-4 problems take a while each: a run to break in the middle of."""
    return _generated(tmp_path_factory.mktemp("dask") / "slow", 12, 20000, 5000, 3)


SLOW = ["-s", "3", "-c", "10", "-e", "0.0001", "-q"]


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, silence_logs=50,
                                       dashboard_address="127.0.0.1:0", scheduler_kwargs={"dashboard": False})
    c = distributed.Client(cluster)
    yield c
    c.close()
    cluster.close()


def _text_and_model(train, tmp_path, name, *args, **kw):
    out = []
    model = train(*args, say=out.append, warn=out.append, **kw)
    path = tmp_path / name
    model.save(str(path))
    return "".join(out), path.read_bytes(), model


@pytest.mark.parametrize("kw", [dict(solver=0, bias=1), dict(solver=1), dict(solver=2, bias=1, C=4.0),
                                dict(solver=3, bias=1, weights={2: 3.0, 9: 2.0}), dict(solver=5, bias=1),
                                dict(solver=6), dict(solver=7, bias=1), dict(solver=3, seed=7, max_iter=5)],
                         ids=lambda kw: " ".join(f"{k}={v}" for k, v in kw.items()))
def test_one_task_per_class_is_the_single_process_model(client, five, tmp_path, kw):
    text, model, m = _text_and_model(lldask.train, tmp_path, "d.model", five, client=client, **kw)
    text1, model1, _ = _text_and_model(llsvm.train, tmp_path, "s.model", five, **kw)
    assert model == model1
    assert text == text1
    assert m.meta["dask"]["tasks"] == 5 and m.meta["dask"]["split"] == "one task per class"
    assert m.meta["dask"]["bytes_up_per_task"] == 8 * (300 + (1 if kw.get("bias", -1) >= 0 else 0))
    assert all(r.alpha is None for r in m.meta["results"])          # nothing of one value per row came back
    if "weights" in kw:
        assert "9" in text1                                           # the absent class's warning, printed once
        assert text.count("9") == text1.count("9")


@pytest.fixture(scope="module")
def five_blocks(five, tmp_path_factory):
    """`five` in blocks of 100 rows: a budget (--memory) small enough for -s bm to load a few at a time."""
    path = str(tmp_path_factory.mktemp("dask") / "five-blocks.bin")
    llsvm.write_binary(five, path, block_rows=100)
    return path


@pytest.mark.parametrize("kw", [dict(solver="llsvm"), dict(solver="llsvm", bias=1, weights={2: 3.0, 9: 2.0}, seed=3),
                                dict(solver="llsvm", C=10.0, options=LLSVMOptions(memory=1 << 20, inner_iter=2)),
                                dict(solver="llsvm", options=LLSVMOptions(one_pass=True)),
                                dict(solver="streamsvm"), dict(solver="streamsvm", bias=1, weights={9: 2.0}, seed=5),
                                dict(solver="bm"), dict(solver="bm", bias=1, weights={3: 0.5, 9: 2.0}),
                                dict(solver="bm", options=StreamOptions(memory=600 << 10))],
                         ids=["llsvm", "llsvm -B 1 -w", "llsvm -m", "llsvm --one-pass", "streamsvm",
                              "streamsvm -B 1 -w", "bm", "bm -B 1 -w", "bm -m"])
def test_out_of_core_one_task_per_class_is_the_single_process_model(client, five, five_blocks, tmp_path, kw):
    """-s llsvm, streamsvm and bm on five classes: each one-vs-rest problem trained alone by its driver on a worker
    (under the run's --memory: -s bm loads a few blocks at a time, -s llsvm streams its active sets), the model
    assembled as the driver does it: the model file and the text printed are the one-process run's, byte for
    byte."""
    data = five_blocks if kw.get("options") is not None and kw["options"].memory else five
    text, model, m = _text_and_model(lldask.train, tmp_path, "d.model", data, client=client, **kw)
    text1, model1, m1 = _text_and_model(llsvm.train, tmp_path, "s.model", data, **kw)
    assert model == model1
    assert text == text1
    assert m.meta["dask"]["tasks"] == 5 and m.meta["dask"]["split"] == "one task per class"
    assert all(r.alpha is None for r in m.meta["results"])          # nothing of one value per row came back
    if "weights" in kw:
        assert text.count("WARNING: class label 9") == 1
    if kw["solver"] == "bm" and kw.get("options") is not None:
        assert m1.meta["results"][0].extra["blocks"] > 1              # the budget held a few blocks at a time
    if kw["solver"] == "llsvm" and kw.get("options") is not None and kw["options"].memory:
        assert max(max(r.extra["blocks"]) for r in m1.meta["results"]) > 1     # active sets streamed in blocks


@pytest.mark.parametrize("kw", [dict(solver=5, bias=1), dict(solver=12, svr_p=0.1), dict(solver=21),
                                dict(solver=4), dict(solver="llsvm", bias=1), dict(solver="h1tree")],
                         ids=lambda kw: " ".join(f"{k}={v}" for k, v in kw.items()))
def test_whole_runs_are_the_single_process_model(client, two, five, tmp_path, kw):
    data = five if kw["solver"] == 4 else two
    text, model, m = _text_and_model(lldask.train, tmp_path, "d.model", data, client=client, **kw)
    text1, model1, _ = _text_and_model(llsvm.train, tmp_path, "s.model", data, **kw)
    assert model == model1
    assert text == text1
    assert m.meta["dask"]["tasks"] == 1 and m.meta["dask"]["split"] == "whole run"


@pytest.mark.parametrize("kw", [dict(solver="smo", C=2.0), dict(solver="nu_svc", nu=0.3),
                                dict(solver="smo", options=llsvm.SMOOptions(probability=1), seed=5),
                                dict(solver="nu_svc", nu=0.2, options=llsvm.SMOOptions(probability=1))],
                         ids=["smo", "nu_svc", "smo -b 1", "nu_svc -b 1"])
@pytest.mark.parametrize("data", ["two", "five"])
def test_one_task_per_class_pair_is_the_single_process_model(client, request, tmp_path, kw, data):
    """LIBSVM's pairs as tasks (with -b 1, each pair's fold permutation drawn after the pairs' before it, as in
    one process), the model made on a worker from their coefficients: model file and stdout byte for byte."""
    path = request.getfixturevalue(data)
    text, model, m = _text_and_model(lldask.train, tmp_path, "d.model", path, client=client, **kw)
    text1, model1, _ = _text_and_model(llsvm.train, tmp_path, "s.model", path, **kw)
    assert model == model1
    assert text == text1
    assert m.meta["dask"]["tasks"] == (1 if data == "two" else 10) + 2
    assert b"-0 " in model1 or data == "two"       # negative zeros (alpha 0 of class -1) came back as such


H1 = [{}, {"rbf_depth": 2}, {"rbf_depth": "auto"}, {"rbf_depth": "auto", "rbf_select": "train", "rbf_tol": 5.0},
      {"hard_class": "alternate", "rbf_depth": 0}]


@pytest.mark.parametrize("opts", H1, ids=lambda o: " ".join(f"{k}={v}" for k, v in o.items()) or "default")
def test_h1tree_one_task_per_class_pair_is_the_single_process_model(client, five, tmp_path, opts):
    """-s h1tree on five classes: a task per pair's decision list (--rbf-depth auto: also per pair's list on the
    split's training rows, and a task for the cuts), the trees made on the client, and the RBF node, when a tree
    ends in it, as -s smo's pairs: model file and stdout byte for byte."""
    kw = dict(solver="h1tree", options=H1Options(**opts))
    text, model, m = _text_and_model(lldask.train, tmp_path, "d.model", five, client=client, **kw)
    text1, model1, m1 = _text_and_model(llsvm.train, tmp_path, "s.model", five, **kw)
    assert model == model1
    assert text == text1
    rbf = 10 + 2 if m1.rbf is not None else 0
    auto = opts.get("rbf_depth") == "auto"
    assert m.meta["dask"]["tasks"] == 1 + 10 + (11 if auto else 0) + rbf
    assert m.meta["dask"]["split"] == "one task per class pair"
    assert (m1.rbf is not None) == (opts.get("rbf_depth", "none") != "none" and "rbf_select" not in opts)


ONLINE = [dict(solver="olsvm"), dict(solver="olsvm-rhl", seed=3, C=2.0),
          dict(solver="norma", options=OnlineOptions(epochs=2)), dict(solver="pegaz", seed=11),
          dict(solver="pegasos", options=OnlineOptions(batch=4, epochs=2))]


@pytest.mark.parametrize("kw", ONLINE, ids=[kw["solver"] for kw in ONLINE])
def test_online_one_task_per_class_pair_is_the_single_process_model(client, five, tmp_path, kw):
    """The online lists' pairs as tasks, each from the RNG state the one-process run has when it starts the pair
    (the shuffles of the pairs before it replayed, ovo.pair_states): model file and stdout byte for byte."""
    text, model, m = _text_and_model(lldask.train, tmp_path, "d.model", five, client=client, **kw)
    text1, model1, _ = _text_and_model(llsvm.train, tmp_path, "s.model", five, **kw)
    assert model == model1
    assert text == text1
    assert m.meta["dask"]["tasks"] == 10 + 2 and m.meta["dask"]["split"] == "one task per class pair"
    assert all(r.alpha is None for r in m.meta["results"])


@pytest.mark.parametrize("args", [["-s", "3"], ["-s", "0", "-B", "1"], ["-s", "11", "-p", "0.1"], ["-s", "smo"],
                                  ["-s", "smo", "-b", "1"], ["-s", "h1tree"], ["-s", "olsvm"], ["-s", "llsvm"]],
                         ids=lambda a: " ".join(a))
def test_cli_cross_validation_on_the_cluster(client, two, five, args, tmp_path):
    """-v on the cluster, one task per fold: stdout byte for byte (every fold's lines, then the summary)."""
    data = five if args[1] in ("3", "olsvm") or args == ["-s", "smo"] else two     # -b 1: two classes (its folds' folds)
    j = tmp_path / "v.json"
    p = _cli(*_on(client), *args, "-v", "4", "--json", j, data)
    q = _cli(*args, "-v", "4", data)
    assert p.returncode == 0 and q.returncode == 0, p.stderr
    assert p.stdout == q.stdout and "Cross Validation" in p.stdout
    assert json.loads(j.read_text())["dask"]["tasks"] == 4


def test_the_tasks_have_a_bar(client, two, bars):
    """--dask's tasks on a bar with their total (issue 48): -v 4 on the cluster, four tasks, each counted as it
    ends; --grid, a task per width and fold."""
    from llsvm.report import Reporter
    said = []
    reporter = Reporter(progress=True, out=said.append, err=said.append)
    lldask.cross_validation(two, 4, client=client, reporter=reporter, solver=1)
    assert bars == [("Dask tasks", "tasks", 4, 4)]
    bars.clear()
    lldask.grid_search(two, 3, "C=1,2;gamma=0.1,1", client=client, reporter=reporter, solver="smo")
    assert bars == [("Dask tasks", "tasks", 6, 6)]


def test_input_must_be_one_binary_file(five, tmp_path):
    text = tmp_path / "t.txt"
    text.write_text("1 1:1\n-1 2:1\n")
    with pytest.raises(llsvm.errors.ParameterError, match=r"llsvm-convert .*t\.txt .*t\.txt\.bin"):
        lldask.binary_files(str(text))
    with pytest.raises(llsvm.errors.ParameterError, match="no file matches"):
        lldask.binary_files(str(tmp_path / "none-*.bin"))
    with pytest.raises(llsvm.errors.ParameterError, match="2 files given"):
        lldask.one_file(lldask.binary_files([five, five]))
    assert lldask.binary_files(five.replace("five.bin", "fiv*.bin")) == [os.path.abspath(five)]


def _cli(*args, timeout=300):
    return subprocess.run([sys.executable, "-m", "llsvm.cli.train", *map(str, args)], capture_output=True,
                          text=True, env=ENV, timeout=timeout)


def _on(client):
    """llsvm-train's options for the module's cluster (two workers): the CLI runs share it, as a user's runs share
    their scheduler; `--dask local` itself (a cluster of the run's own) is test_cli_dask_local's and the
    reliability tests'."""
    return ["--dask", client.scheduler.address]


def test_cli_dask_local(five, tmp_path):
    a, b, j = tmp_path / "d.model", tmp_path / "s.model", tmp_path / "d.json"
    p = _cli("--dask", "local", "--workers", "2", "-s", "3", "-B", "1", "--json", j, five, a)
    q = _cli("-s", "3", "-B", "1", five, b)
    assert p.returncode == 0 and q.returncode == 0, p.stderr
    assert p.stdout == q.stdout
    assert a.read_bytes() == b.read_bytes()
    rec = json.loads(j.read_text())
    assert rec["dask"]["workers"] == 2 and rec["dask"]["tasks"] == 5
    assert rec["n_rows"] == ROWS["five"] and rec["n_features"] == 300
    assert rec["primal"] == pytest.approx(sum(r.primal for r in llsvm.train(five, solver=3, bias=1)
                                              .meta["results"]), rel=1e-12)


@pytest.mark.parametrize("args", [["-s", "2", "-B", "1"], ["-s", "llsvm"], ["-s", "smo"], ["-s", "11", "-p", "0.2"]],
                         ids=lambda a: " ".join(a))
def test_cli_every_kind_of_run(client, two, tmp_path, args):
    """A whole run, an out-of-core one, the pairs: llsvm-train --dask writes the model and the --json record of the
    run without --dask."""
    da, db = _cli_with_and_without_dask(client, two, tmp_path, args)
    assert da.pop("dask")["workers"] == 2
    assert _untimed(da) == _untimed(db)


def _cli_with_and_without_dask(client, data, tmp_path, args):
    """llsvm-train with args on data, on the module's cluster (2 workers) and without: the same stdout and model file;
    returns their --json records."""
    a, b, ja, jb = tmp_path / "d.model", tmp_path / "s.model", tmp_path / "d.json", tmp_path / "s.json"
    p = _cli(*_on(client), *args, "--json", ja, data, a)
    q = _cli(*args, "--json", jb, data, b)
    assert p.returncode == 0 and q.returncode == 0, p.stderr
    assert p.stdout == q.stdout and a.read_bytes() == b.read_bytes()
    return json.loads(ja.read_text()), json.loads(jb.read_text())


def _untimed(v):
    """A --json record without times, rates and memory (the workers', not this process's)."""
    if isinstance(v, dict):
        return {k: _untimed(x) for k, x in v.items() if "second" not in k and k != "peak_rss_mb"}
    return [_untimed(x) for x in v] if isinstance(v, list) else v


@pytest.mark.parametrize("args", [["-s", "llsvm", "-B", "1"], ["-s", "streamsvm", "--threads", "1"], ["-s", "bm"],
                                  ["-s", "pegasos", "--epochs", "2"], ["-s", "h1tree", "--rbf-depth", "auto"]],
                         ids=lambda a: " ".join(a))
def test_cli_classes_and_pairs_of_the_other_solvers(client, five, tmp_path, args):
    """llsvm-train --dask on five classes: an out-of-core solver's one task per class, an online list's and -s
    h1tree's one task per pair; stdout, the model file and the --json record (times aside) are the run's without
    --dask."""
    da, db = _cli_with_and_without_dask(client, five, tmp_path, args)
    tasks = {"pegasos": 10 + 2, "h1tree": 1 + 10 + 10 + 1 + 12 + 1}.get(args[1], 5)
    assert da.pop("dask")["tasks"] == tasks
    assert _untimed(da) == _untimed(db)


def test_cli_refusals(five, tmp_path):
    text = tmp_path / "t.txt"
    text.write_text("1 1:1\n-1 2:1\n")
    p = _cli("--dask", "local", text, tmp_path / "m")
    assert p.returncode == 1 and "llsvm-convert" in p.stderr and not (tmp_path / "m").exists()
    p = _cli("--workers", "2", five, tmp_path / "m")
    assert p.returncode == 2 and "--workers" in p.stderr
    p = _cli("--dask", "local", "-C", "-s", "2", text)
    assert p.returncode == 1 and "llsvm-convert" in p.stderr and p.stdout == ""      # before the search's first line
    p = _cli("--local-epochs", "2", "-s", "3", five, tmp_path / "m")
    assert p.returncode == 2 and "--local-epochs" in p.stderr and "--dask" in p.stderr
    p = _cli("--dask", "local", "--local-epochs", "2", "-s", "0", five, tmp_path / "m")
    assert p.returncode == 1 and "--local-epochs applies only to -s 1 and -s 3, not to -s 0" in p.stderr
    env = dict(ENV, DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT="2s")
    with_port = subprocess.run([sys.executable, "-m", "llsvm.cli.train", "--dask", "tcp://127.0.0.1:9", five,
                                str(tmp_path / "m")], capture_output=True, text=True, env=env, timeout=120)
    assert with_port.returncode == 1 and "can't connect to the Dask scheduler at tcp://127.0.0.1:9" in \
        with_port.stderr
    assert not (tmp_path / "m").exists()


# -- a real scheduler and two workers -----------------------------------------------------------------------------
class Cluster:
    """`dask scheduler` and `dask worker` processes (no nanny: a killed worker stays dead) on this machine."""

    def __init__(self, tmp_path, n_workers=2):
        lldask.quiet_logs()           # this process's client logs its reconnection attempts once the scheduler is gone
        self.file = str(tmp_path / "scheduler.json")
        self.scheduler = subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_scheduler", "--scheduler-file",
                                           self.file, "--host", "127.0.0.1", "--port", "0", "--no-dashboard"],
                                          env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self._wait(lambda: os.path.exists(self.file) and os.path.getsize(self.file) > 0, "the scheduler file")
        with open(self.file) as f:
            self.address = json.load(f)["address"]
        self.workers = [subprocess.Popen([sys.executable, "-m", "distributed.cli.dask_worker", "--scheduler-file",
                                          self.file, "--nthreads", "1", "--no-nanny", "--no-dashboard",
                                          "--host", "127.0.0.1"], env=ENV, stdout=subprocess.DEVNULL,
                                         stderr=subprocess.DEVNULL) for _ in range(n_workers)]
        self.client = distributed.Client(self.address)
        self.client.wait_for_workers(n_workers, timeout=120)

    @staticmethod
    def _wait(cond, what, timeout=120):
        end = time.monotonic() + timeout
        while not cond():
            if time.monotonic() > end:
                raise AssertionError(f"timed out waiting for {what}")
            time.sleep(0.05)

    def processing(self):
        """{worker address: [task keys it runs]} as the scheduler sees it."""
        return {w: list(keys) for w, keys in self.client.processing().items() if keys}

    def finished(self, prefix):
        """How many tasks of a kind the scheduler has seen end (in memory, released or forgotten since)."""
        def count(dask_scheduler, prefix=prefix):
            tp = dask_scheduler.task_prefixes.get(prefix)
            return 0 if tp is None else sum(tp.state_counts.get(s, 0) for s in ("memory", "released", "forgotten"))
        return self.client.run_on_scheduler(count)

    def wait_processing(self, prefix="problem_task", at_most_done=6):
        """The address of a worker running one of our tasks, once one is, while at most `at_most_done` tasks of the
        kind have ended (the fault then lands with most of the run ahead of it, whatever the machine's speed)."""
        found = {}

        def cond():
            found.clear()
            found.update({w: k for w, k in self.processing().items() if any(prefix in str(x) for x in k)})
            if found and self.finished(prefix) > at_most_done:
                raise AssertionError(f"the run went past {at_most_done} {prefix} tasks before one was seen running")
            return bool(found)
        self._wait(cond, "a task in progress")
        return next(iter(found))

    def pid_of(self, address):
        return self.client.run(os.getpid, workers=[address])[address]

    def close(self):
        try:
            self.client.close(timeout=10)
        except Exception:
            pass
        for p in self.workers + [self.scheduler]:
            if p.poll() is None:
                p.kill()
            p.wait()


@pytest.fixture
def cluster(tmp_path):
    c = Cluster(tmp_path)
    yield c
    c.close()


def test_a_worker_killed_in_the_middle_of_a_run(cluster, slow, tmp_path):
    """SIGKILL to a worker while it runs one of the run's tasks: Dask runs that task again on the other worker and
    the run ends with the single-process model."""
    box = {}

    def run():
        try:
            box["model"] = lldask.train(slow, client=distributed.Client(cluster.address), solver=3, C=10.0,
                                        eps=1e-4, say=print, warn=lambda text: None)
        except BaseException as exc:             # noqa: BLE001 (reported by the assertion below)
            box["error"] = exc
    t = threading.Thread(target=run)
    t.start()
    victim = cluster.wait_processing()
    pid = cluster.pid_of(victim)
    os.kill(pid, signal.SIGKILL)
    killed_while_running = t.is_alive()
    t.join(timeout=600)
    assert "error" not in box, box.get("error")
    assert killed_while_running
    assert any(p.poll() == -signal.SIGKILL for p in cluster.workers)
    box["model"].save(str(tmp_path / "d.model"))
    llsvm.train(slow, solver=3, C=10.0, eps=1e-4, say=print, warn=lambda text: None).save(str(tmp_path / "s.model"))
    assert (tmp_path / "d.model").read_bytes() == (tmp_path / "s.model").read_bytes()


def _cli_in_background(cluster, slow, model):
    # a child whose SIGINT is not ignored (a shell's background job would inherit SIG_IGN)
    return subprocess.Popen([sys.executable, "-m", "llsvm.cli.train", "--dask", cluster.address, *SLOW, slow,
                             str(model)], env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))


def test_the_scheduler_going_away_ends_the_run_with_an_error_and_no_model(cluster, slow, tmp_path):
    model = tmp_path / "m.model"
    p = _cli_in_background(cluster, slow, model)
    cluster.wait_processing()
    cluster.scheduler.kill()
    out, err = p.communicate(timeout=300)
    assert p.returncode == 1
    assert "went away during the run" in err and "no model written" in err
    assert "Traceback" not in err
    assert not model.exists()
    assert not [f for f in os.listdir(tmp_path) if f.startswith("m.model")]       # no temporary file either


def test_ctrl_c_cancels_the_tasks_and_exits_130(cluster, slow, tmp_path):
    model = tmp_path / "m.model"
    p = _cli_in_background(cluster, slow, model)
    cluster.wait_processing()
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=300)
    assert p.returncode == 130, err
    assert not model.exists()
    Cluster._wait(lambda: not cluster.client.run_on_scheduler(
        lambda dask_scheduler: [k for k in dask_scheduler.tasks if "problem_task" in str(k)]),
        "the run's tasks to leave the scheduler", timeout=60)


def test_what_a_task_raises_is_not_the_cluster_going_away(client):
    """An OSError raised on a worker (it cannot read the input there) names the worker, not a lost cluster; a task
    whose workers kept dying is a ClusterError that says so."""
    with pytest.raises(llsvm.errors.LLSVMError, match=r"^on a worker of the Dask cluster at tcp://x: .*No such file "
                       r"or directory: '/nonexistent/llsvm.bin'; no model written$") as e:
        dask_client._gather(client, [client.submit(open, "/nonexistent/llsvm.bin", pure=False)], "tcp://x")
    assert not isinstance(e.value, ClusterError)

    def killed():
        from types import SimpleNamespace
        raise distributed.KilledWorker("problem_task-1", SimpleNamespace(address="tcp://127.0.0.1:1"), 3)
    with pytest.raises(ClusterError, match=r"kept dying while they ran a task \(out of memory\?\): problem_task-1; "
                                           r"no model written$"):
        dask_client._gather(client, [client.submit(killed, pure=False)], "tcp://x")


def test_no_row_reaches_the_client(client, five):
    """What comes back from the workers is weight vectors and certificates: no array as long as the rows."""
    m = lldask.train(five, client=client, solver=1)
    for r in m.meta["results"]:
        arrays = [v for v in vars(r).values() if isinstance(v, np.ndarray)]
        assert all(a.size <= 301 for a in arrays)


TIMES = ("seconds", "cpu_seconds", "fit_seconds", "fit_cpu_seconds")


@pytest.mark.parametrize("solver,grid", [("smo", "C=0.25:4:3 g=0.01,0.1"), ("olsvm", "C=0.5,2"),
                                         ("pegasos", "C=1,8 sigma=2,4")])
def test_grid_cells_are_the_single_process_cells(client, two, solver, grid):
    """One task per kernel width and fold: every cell's error, nSV and violations as in one process (the times are
    the workers' own)."""
    from llsvm.solvers.grid import grid_search
    got = lldask.grid_search(two, 4, grid, client=client, solver=solver, seed=3)
    want = grid_search(two, 4, grid, solver=solver, seed=3)
    def strip(cell):
        return {k: v for k, v in cell.items() if k not in TIMES}
    assert [strip(c) for c in got.cells] == [strip(c) for c in want.cells]
    assert strip(got.best) == strip(want.best)
    widths = 2 if ("g=" in grid or "sigma=" in grid) else 1
    assert got.meta["dask"]["tasks"] == widths * 4


def test_cli_grid_on_the_cluster(client, two, tmp_path):
    j = tmp_path / "g.json"
    p = _cli(*_on(client), "-s", "smo", "--grid", "C=0.5,2 g=0.1,1", "-v", "3", "--json", j,
             two)
    q = _cli("-s", "smo", "--grid", "C=0.5,2 g=0.1,1", "-v", "3", two)
    assert p.returncode == 0 and q.returncode == 0, p.stderr
    def cut(out):                                    # C, gamma, CV error
        return [line.split()[:3] for line in out.splitlines()]
    assert cut(p.stdout) == cut(q.stdout)
    rec = json.loads(j.read_text())
    assert rec["dask"]["tasks"] == 6 and rec["n_rows"] == ROWS["two"]


# -- CoCoA+ for one two-class -s 1 / -s 3 problem ------------------------------------------------------------------
def _blocks_file(tmp_path, name, rows, seed, block_rows, bias_free=True):
    path = tmp_path / name
    subprocess.run([sys.executable, str(REPO_ROOT / "scripts" / "gen_data.py"), "sparse", "--rows", str(rows),
                    "--features", "400", "--nnz-per-row", "12", "--seed", str(seed), "--out", str(path), "-q"],
                   check=True)
    llsvm.write_binary(str(path), str(path) + ".bin", block_rows=block_rows)
    return str(path) + ".bin"


@pytest.fixture(scope="module")
def blocks(tmp_path_factory):
    """A two-class set of 600 rows in blocks of 50 rows."""
    return _blocks_file(tmp_path_factory.mktemp("cocoa"), "c", 600, 7, 50)


def _reference(paths, n_parts, solver, eps, max_iter, epochs, seed, bias=-1.0, C=1.0):
    """solve_cocoa in this process over the same parts (cocoa.LocalParts): rows of the files in order, cut where
    llsvm.dask.block_parts cuts the blocks."""
    from llsvm.binfmt import BinaryDataset
    from llsvm.solvers.cocoa import solve_cocoa
    from llsvm.solvers.common import Subproblem, group_classes
    infos, parts_y, xs = [], [], []
    for p in paths:
        f = BinaryDataset(p)
        infos.append((p, [int(r) for r in f.block_rows]))
        f.close()
        xs.append(llsvm.read_dataset(p).to_csr())
        parts_y.append(llsvm.read_dataset(p).y)
    import scipy.sparse as sp
    n_features = max(x.shape[1] for x in xs)
    X = sp.vstack([sp.csr_matrix((x.data, x.indices, x.indptr), shape=(x.shape[0], n_features)) for x in xs]).tocsr()
    y = np.concatenate(parts_y)
    ds = llsvm.CSRDataset.from_csr(X, y)
    labels, _ = group_classes(y)
    sign = np.where(y.astype(np.int64) == int(labels[0]), 1, -1).astype(np.int8)
    runs = lldask.block_parts(infos, n_parts)
    first = {(p, b): r0 for p, rows in infos for b, r0 in enumerate(np.cumsum([0] + rows[:-1]))}
    offsets = dict(zip(paths, np.cumsum([0] + [len(x.indptr) - 1 for x in xs[:-1]])))
    subs = []
    for run in runs:
        rows = np.concatenate([np.arange(offsets[p] + first[(p, b0)], offsets[p] + first[(p, b0)] +
                                         sum(dict(infos)[p][b0:b1])) for p, b0, b1 in run])
        subs.append(Subproblem(ds, sign[rows], C, C, rows=rows, bias=bias))
    return solve_cocoa(subs, solver == 3, eps=eps, max_iter=max_iter, epochs=epochs, seed=seed), labels


@pytest.mark.parametrize("solver,bias,n_parts,epochs", [(3, -1, 2, 1), (1, -1, 2, 1), (3, 1, 3, 2), (1, 1, 4, 1)])
def test_cocoa_rounds_are_the_one_process_rounds(client, blocks, solver, bias, n_parts, epochs):
    """CoCoA+ on the cluster (each part's blocks read by its worker, its alpha kept there) against cocoa.LocalParts
    over the same rows: the same rounds, w bit for bit, the same certificate."""
    m = lldask.train(blocks, client=client, solver=solver, bias=bias, eps=0.05, max_iter=60, parts=n_parts,
                     local_epochs=epochs, seed=3, say=lambda t: None)
    ref, _ = _reference([blocks], n_parts, solver, 0.05, 60, epochs, 3, bias=float(bias))
    r = m.meta["results"][0]
    assert r.n_iter == ref.n_iter and r.extra["history"] == ref.extra["history"]
    np.testing.assert_array_equal(r.w, ref.w)
    assert (r.primal, r.dual, r.nSV, r.max_violation) == (ref.primal, ref.dual, ref.nSV, ref.max_violation)
    assert m.meta["dask"]["parts"] == n_parts and m.meta["dask"]["rounds"] == r.n_iter
    assert m.meta["dask"]["bytes_per_round"] == 8 * (400 + (bias >= 0)) * 2 * n_parts


def test_cocoa_reaches_the_optimum_with_the_gap_certified(client, blocks):
    """-s 3 by CoCoA+ on 2 workers: the primal within 1e-3 of the one-process optimum, 0 <= gap <= 1e-3 primal."""
    m = lldask.train(blocks, client=client, solver=3, eps=0.01, say=lambda t: None)
    r = m.meta["results"][0]
    best = llsvm.train(blocks, solver=3, eps=1e-6, max_iter=100000).meta["results"][0]
    assert r.converged
    assert abs(r.primal - best.primal) <= 1e-3 * best.primal
    assert 0 <= r.gap <= 1e-3 * r.primal
    acc = np.mean(m.predict(llsvm.read_dataset(blocks)) == llsvm.read_dataset(blocks).y)
    acc1 = np.mean(llsvm.train(blocks, solver=3).predict(llsvm.read_dataset(blocks)) == llsvm.read_dataset(blocks).y)
    assert abs(acc - acc1) <= 0.01


def test_cocoa_reads_several_files(client, tmp_path):
    """A glob of three files of different widths: the parts cut across them, the same rounds as one process."""
    paths = [_blocks_file(tmp_path, f"f{i}", 150 + 50 * i, 20 + i, 40) for i in range(3)]
    m = lldask.train(str(tmp_path / "f*.bin"), client=client, solver=1, eps=0.05, max_iter=40, parts=4, seed=2,
                     say=lambda t: None)
    ref, labels = _reference(sorted(paths), 4, 1, 0.05, 40, 1, 2)
    np.testing.assert_array_equal(m.meta["results"][0].w, ref.w)
    assert list(m.label) == list(labels)
    assert m.meta["shape"].n_rows == 150 + 200 + 250


def test_cocoa_needs_a_block_per_part(client, blocks, two, tmp_path):
    with pytest.raises(llsvm.errors.ParameterError, match="12 blocks for 13 workers"):
        lldask.train(blocks, client=client, solver=3, parts=13)
    # unasked, a one-block file is one part: dual CD without shrinking on one worker, to LIBLINEAR's rule
    m = lldask.train(two, client=client, solver=3, say=lambda t: None)
    assert m.meta["dask"]["parts"] == 1 and m.meta["results"][0].converged


def test_cocoa_survives_a_worker_killed_in_the_middle(cluster, tmp_path):
    """SIGKILL to a worker holding a part's dual variables in the middle of a CoCoA+ run: the run starts again on
    the remaining worker and ends with the same w as a run without the fault."""
    data = _blocks_file(tmp_path, "k", 600, 9, 50)
    # 20 rounds in, while at most 100 of the run's 2 x (400 + 1) tasks have ended
    m = _killed_in_the_middle(cluster, "cocoa_task", 40, 200, lambda client: lldask.train(
        data, client=client, solver=3, eps=1e-4, max_iter=400, parts=2, say=lambda t: None))
    assert m.meta["dask"]["restarts"] == 1
    ref, _ = _reference([data], 2, 3, 1e-4, 400, 1, 1)
    assert ref.n_iter > 100            # the kill came within its first 100 rounds: in the middle
    np.testing.assert_array_equal(m.meta["results"][0].w, ref.w)


def _killed_in_the_middle(cluster, prefix, after, at_most_done, train):
    """train(client) on the cluster in a thread; once the scheduler has made `after` tasks of `prefix` and one
    runs (while at most `at_most_done` have ended), SIGKILL to its worker. The run's model, once it ends."""
    box = {}

    def run():
        try:
            box["model"] = train(distributed.Client(cluster.address))
        except BaseException as exc:             # noqa: BLE001 (reported by the assertion below)
            box["error"] = exc
    t = threading.Thread(target=run)
    t.start()
    Cluster._wait(lambda: _tasks(cluster, prefix) > after, f"{after} {prefix} tasks")
    victim = cluster.wait_processing(prefix, at_most_done=at_most_done)
    os.kill(cluster.pid_of(victim), signal.SIGKILL)
    alive = t.is_alive()
    t.join(timeout=600)
    assert "error" not in box, box.get("error")
    assert alive
    return box["model"]


def _tasks(cluster, prefix):
    """How many tasks of a kind the scheduler has made so far."""
    def count(dask_scheduler, prefix=prefix):
        tp = dask_scheduler.task_prefixes.get(prefix)
        return 0 if tp is None else sum(tp.state_counts.values())
    return cluster.client.run_on_scheduler(count)


NEWTON_CASES = [dict(solver=0), dict(solver=2, bias=1), dict(solver=11, svr_p=0.1),
                dict(solver=2, bias=1, regularize_bias=False), dict(solver=0, weights={1: 2.0})]


def _newton_local(path, n_parts, **kw):
    """dnewton over the parts llsvm.dask would make of `path` (block_parts), each read in this process by the
    workers' own code (_newton_part), called one after the other."""
    from llsvm.solvers import dnewton, trainer
    from llsvm.solvers.common import class_costs
    params = trainer.checked_params(None, dict(kw))
    head = lldask.headers([path])
    if params.spec.task == "regression":
        labels, Cp, Cn = None, params.C, params.C
    else:
        labels = head.labels
        Cp, Cn = (float(c) for c in class_costs(params.C, params.weights, labels, None))
    parts = [dask_tasks._newton_part(tuple(r), head.n_features, labels, params, Cp, Cn)
             for r in lldask.block_parts(head.infos, n_parts)]
    return dnewton.solve_dnewton(dnewton.LocalParts(parts), params.solver, params.eps,
                                 params.max_iter or params.spec.default_max_iter, params.regularize_bias,
                                 p=params.svr_p)


@pytest.mark.parametrize("kw", NEWTON_CASES, ids=lambda kw: ",".join(f"{k}={v}" for k, v in kw.items()))
def test_newton_on_the_cluster(client, blocks, kw):
    """A two-class -s 0 / -s 2, or -s 11, by distributed Newton over the workers' blocks: on one part the
    single-process model and text bit for bit; on three, dnewton's in-process run over the same parts bit for bit,
    and the single-process model up to the order of a sum (the same lines, w within 1e-9)."""
    ref_lines, one_lines, three_lines = [], [], []
    ref = llsvm.train(blocks, say=ref_lines.append, **kw)
    one = lldask.train(blocks, client=client, parts=1, say=one_lines.append, **kw)
    np.testing.assert_array_equal(one.W, ref.W)
    assert one_lines == ref_lines and b"".join(one.text_chunks()) == b"".join(ref.text_chunks())
    three = lldask.train(blocks, client=client, parts=3, say=three_lines.append, **kw)
    local = _newton_local(blocks, 3, **kw)
    r = three.meta["results"][0]
    np.testing.assert_array_equal(r.w, local.w)
    assert (r.primal, r.n_iter, r.extra["cg_steps"]) == (local.primal, local.n_iter, local.extra["cg_steps"])
    assert np.abs(three.W - ref.W).max() <= 1e-9 * np.abs(ref.W).max()
    assert [x.split(" CG")[0] for x in three_lines] == [x.split(" CG")[0] for x in ref_lines]
    meta = three.meta["dask"]
    w_size = 400 + (kw.get("bias", -1) >= 0)
    assert meta["split"] == "distributed Newton over the workers' blocks" and meta["parts"] == 3
    assert meta["rounds"] == 2 + local.extra["cg_steps"] + 2 * local.n_iter
    assert (meta["bytes_down_per_task"], meta["bytes_up_per_task"]) == (8 * w_size, 16 * w_size)


def test_cli_newton_on_the_cluster(client, blocks, tmp_path):
    """llsvm-train --dask local -s 2: the single-process stdout; --json the same certificate (to rounding) plus
    the rounds and bytes."""
    out = {}
    for name, extra in (("one", []), ("dask", _on(client))):
        p = _cli("-s", "2", "-B", "1", "--json", str(tmp_path / f"{name}.json"), *extra, blocks,
                 str(tmp_path / f"{name}.model"))
        assert p.returncode == 0, p.stderr
        out[name] = (p.stdout, json.loads((tmp_path / f"{name}.json").read_text()))
    assert out["one"][0] == out["dask"][0]
    one, dask = out["one"][1], out["dask"][1]
    for key in ("primal", "dual", "gap", "max_violation"):
        assert dask[key] == pytest.approx(one[key], rel=1e-9)
    assert dask["dask"]["workers"] == 2 and dask["dask"]["rounds"] > 2 and "bytes_per_round" in dask["dask"]


def test_newton_survives_a_worker_killed_in_the_middle(cluster, tmp_path):
    """SIGKILL to a worker holding a Newton part in the middle of a run: the run starts again on the remaining
    worker and ends with the same w as a run without the fault."""
    data = _blocks_file(tmp_path, "n", 600, 9, 50)
    kw = dict(solver=2, C=100.0, eps=1e-6)
    m = _killed_in_the_middle(cluster, "newton_task", 40, 400, lambda client: lldask.train(
        data, client=client, parts=2, say=lambda t: None, **kw))
    assert m.meta["dask"]["restarts"] == 1
    ref = _newton_local(data, 2, **kw)
    assert ref.extra["rounds"] > 400            # the kill came within its first 200 rounds: in the middle
    np.testing.assert_array_equal(m.meta["results"][0].w, ref.w)


def test_estimators_take_a_client(client, five, two):
    """llsvm.sklearn's estimators with client=: fit(path) on the cluster, the same coefficients as without; clone
    shares the client, a pickle drops it; an array is refused (its rows would pass through this process)."""
    import pickle
    from sklearn.base import clone
    from llsvm.sklearn import SVC, LinearSVC
    est = LinearSVC(solver=3, client=client).fit(five)
    ref = LinearSVC(solver=3).fit(five)
    np.testing.assert_array_equal(est.coef_, ref.coef_)
    np.testing.assert_array_equal(est.intercept_, ref.intercept_)
    assert est.model_.meta["dask"]["tasks"] == 5
    assert clone(est).client is client and clone(est).get_params()["C"] == est.C
    assert pickle.loads(pickle.dumps(est)).client is None
    svc, svc1 = SVC(client=client).fit(two), SVC().fit(two)
    assert b"".join(svc.model_.text_chunks()) == b"".join(svc1.model_.text_chunks())
    with pytest.raises(ValueError, match="llsvm binary file"):
        LinearSVC(client=client).fit(np.eye(3), [0, 1, 1])


# -- -C: the warm-started search for C ----------------------------------------------------------------------------
@pytest.fixture(scope="module")
def reg(tmp_path_factory):
    """A regression set of 300 rows and 8 dense features (no label table in its binary file)."""
    path = tmp_path_factory.mktemp("reg") / "reg"
    rng = np.random.default_rng(11)
    X = rng.normal(size=(ROWS["reg"], 8))
    y = X @ rng.normal(size=8) + 0.3 * rng.normal(size=ROWS["reg"])
    path.write_text("".join("%.6g " % t + " ".join(f"{j + 1}:{v:.6g}" for j, v in enumerate(row)) + "\n"
                            for row, t in zip(X, y)))
    llsvm.write_binary(str(path), str(path) + ".bin")
    return str(path) + ".bin"


SEARCHES = [("two", 5, dict(solver=2, bias=1, start_C=0.5)), ("two", 5, dict(solver=1, start_C=0.5)),
            ("five", 4, dict(solver=0, start_C=0.25, seed=3)), ("reg", 3, dict(solver=11, start_C=0.25, start_p=0.5))]


def _search(find, data, nr_fold, **kw):
    out = []
    found = find(data, nr_fold, say=out.append, warn=out.append, **kw)
    return found, "".join(out)


@pytest.mark.parametrize("data,nr_fold,kw", SEARCHES, ids=["-s 2", "-s 1", "-s 0 five classes", "-s 11"])
def test_find_C_on_the_cluster_is_the_single_process_search(client, request, data, nr_fold, kw):
    """At each value of C a task per worker thread (2 here) for the folds whose home it is, each fold warm-started on
    its worker (-s 1: its alpha), -s 11 over C and p: the same lines, the same best C (and p, MSE) as in one
    process, bit for bit; nothing is left on the workers."""
    path = request.getfixturevalue(data)
    got, text = _search(lldask.find_parameter_C, path, nr_fold, client=client, **kw)
    want, text1 = _search(llsvm.find_parameter_C, path, nr_fold, **kw)
    assert tuple(got) == want and text == text1
    steps = text1.count("log2c=")
    assert steps >= 10 and (kw["solver"] != 11 or text1.count("p=   0.00") >= 5)         # -s 11: two p values
    assert got.meta["dask"]["tasks"] == 1 + steps * 2 and got.meta["dask"]["restarts"] == 0
    assert got.shape.n_rows == ROWS[data]
    assert client.run(lambda: len(dask_tasks._SEARCH)) == {w: 0 for w in client.scheduler_info()["workers"]}


def test_find_C_brings_no_row_to_the_client(client, two, monkeypatch):
    """-s 1 (an alpha per training row, kept for the warm start) on the cluster: what the client gathers is the plan
    (the searches, the folds' count, text) and a bool and a number per fold; no array at all."""
    gathered = []
    real = dask_client._gather

    def recording(c, futures, address):
        done = real(c, futures, address)
        gathered.extend(done)
        return done
    monkeypatch.setattr(dask_client, "_gather", recording)
    got = lldask.find_parameter_C(two, 5, client=client, solver=1, start_C=0.5)

    def arrays(x):
        if isinstance(x, np.ndarray):
            return [x]
        if isinstance(x, (list, tuple)):
            return [a for v in x for a in arrays(v)]
        return [a for v in vars(x).values() for a in arrays(v)] if hasattr(x, "__dict__") else []
    assert gathered and not arrays(gathered)
    steps = gathered[1:]
    assert len(steps) == got.meta["dask"]["tasks"] - 1
    folds = [fold for task in steps for fold in task]
    assert len(steps) % 2 == 0 and len(folds) == 5 * len(steps) // 2          # 2 tasks, 5 folds a step
    assert all(type(changed) is bool and type(right) is int for changed, right in folds)


def test_find_C_gathers_a_step_in_one_round_trip(client, two, monkeypatch):
    """Issue 44 (L6): -C's tasks of a step went in waves of a task per worker thread, each wave a round trip from
    the client to the workers and back (5 folds on 2 workers: 3 round trips a step, 20 ms each here, whatever the
    folds' size). Now a step is one task per worker thread running its folds (3 and 2), sent at once and gathered
    in one round trip: the plan's gather, then one per step, of 2 tasks; the same lines as in one process."""
    gathers = []
    real = dask_client._gather

    def counting(c, futures, address):
        gathers.append(len(futures))
        return real(c, futures, address)
    monkeypatch.setattr(dask_client, "_gather", counting)
    got, text = _search(lldask.find_parameter_C, two, 5, client=client, solver=2, start_C=0.5)
    want, text1 = _search(llsvm.find_parameter_C, two, 5, solver=2, start_C=0.5)
    assert tuple(got) == want and text == text1
    steps = text.count("log2c=")
    assert steps >= 10 and gathers == [1] + [2] * steps
    assert got.meta["dask"]["tasks"] == 1 + 2 * steps and got.meta["dask"]["bytes_up_per_task"] == 16 * 3


def _losing(monkeypatch, client, at_step, times):
    """DaskFolds whose first `times` searches lose the folds' warm starts on one worker after step `at_step` (as if
    the worker had died and another had taken its place): the next step's tasks there raise StateLost."""
    call = lldask.DaskFolds.__call__
    lost = []
    # the victim is chosen here: inside the search, scheduler_info() may answer from a cache whose "workers" is
    # empty (distributed 2026.8: its value for asynchronous use), which failed a CI run with an IndexError
    victim = sorted(client.scheduler_info()["workers"])[0]

    def losing(self, params, k, s):
        out = call(self, params, k, s)
        if s == at_step and len(lost) < times and self.run not in lost:
            client.run(lldask.forget, self.run, workers=[victim])
            lost.append(self.run)
        return out
    monkeypatch.setattr(lldask.DaskFolds, "__call__", losing)
    return lost


@pytest.mark.parametrize("data,nr_fold,kw", [SEARCHES[1], SEARCHES[3]], ids=["-s 1", "-s 11"])
def test_find_C_starts_again_when_a_worker_loses_its_folds(client, request, monkeypatch, data, nr_fold, kw):
    """A worker loses its folds' warm starts in the middle of the search: the next step raises StateLost, the client
    starts the search again, and it ends with the lines (printed once) and the values of one process."""
    path = request.getfixturevalue(data)
    lost = _losing(monkeypatch, client, 2, 1)
    got, text = _search(lldask.find_parameter_C, path, nr_fold, client=client, **kw)
    want, text1 = _search(llsvm.find_parameter_C, path, nr_fold, **kw)
    assert len(lost) == 1 and got.meta["dask"]["restarts"] == 1
    assert tuple(got) == want and text == text1
    assert client.run(lambda: len(dask_tasks._SEARCH)) == {w: 0 for w in client.scheduler_info()["workers"]}


def test_find_C_gives_up_after_losing_workers_too_often(client, two, monkeypatch):
    _losing(monkeypatch, client, 1, lldask.MAX_RESTARTS + 1)
    with pytest.raises(ClusterError, match=f"the C search lost workers {lldask.MAX_RESTARTS + 1} times"):
        lldask.find_parameter_C(two, 5, client=client, solver=2, start_C=0.5)


@pytest.mark.parametrize("args,data", [(["-s", "2"], "two"), (["-s", "11", "-p", "0.5", "-c", "0.25", "-v", "3"],
                                                                "reg")], ids=["-s 2", "-s 11"])
def test_cli_find_C_on_the_cluster(client, request, tmp_path, args, data):
    """llsvm-train --dask -C: stdout byte for byte and the --json record of the run without --dask (times aside),
    with the "dask" record; no model file."""
    path = request.getfixturevalue(data)
    ja, jb = tmp_path / "d.json", tmp_path / "s.json"
    p = _cli(*_on(client), "-C", *args, "--json", ja, path, tmp_path / "m")
    q = _cli("-C", *args, "--json", jb, path, tmp_path / "m")
    assert p.returncode == 0 and q.returncode == 0, p.stderr
    assert p.stdout == q.stdout and p.stdout.count("log2c=") >= 10 and "Best C = " in p.stdout
    da, db = json.loads(ja.read_text()), json.loads(jb.read_text())
    record = da.pop("dask")
    assert record["workers"] == 2 and record["restarts"] == 0
    assert record["tasks"] == 1 + p.stdout.count("log2c=") * 2          # a task per worker and value of C
    untimed = ("load_seconds", "train_seconds", "peak_rss_mb")
    assert {k: v for k, v in da.items() if k not in untimed} == {k: v for k, v in db.items() if k not in untimed}
    assert not (tmp_path / "m").exists()


def test_find_C_survives_a_worker_killed_between_steps(cluster, two, monkeypatch):
    """SIGKILL to a worker after the third C of a -C search (-s 1: each fold's alpha is its warm start): its folds'
    tasks go to the other worker, which has no warm start for them; the search starts again there and ends with
    the lines and values of one process."""
    call = lldask.DaskFolds.__call__
    killed = []

    def killing(self, params, k, s):
        out = call(self, params, k, s)
        if s == 2 and not killed:
            killed.append(self.home[0])
            os.kill(cluster.pid_of(self.home[0]), signal.SIGKILL)
        return out
    monkeypatch.setattr(lldask.DaskFolds, "__call__", killing)
    got, text = _search(lldask.find_parameter_C, two, 5, client=cluster.client, solver=1, start_C=0.5)
    want, text1 = _search(llsvm.find_parameter_C, two, 5, solver=1, start_C=0.5)
    assert killed and sum(p.poll() == -signal.SIGKILL for p in cluster.workers) == 1
    assert got.meta["dask"]["restarts"] == 1
    assert tuple(got) == want and text == text1


def test_ctrl_c_in_the_middle_of_find_C(cluster, reg, tmp_path):
    """Ctrl-C once the search's first tasks have ended (its 1,505 tasks are far from done): exit 130, no task of
    the run left on the scheduler, nothing of the search left on the workers."""
    p = subprocess.Popen([sys.executable, "-m", "llsvm.cli.train", "--dask", cluster.address, "-s", "11", "-C",
                          reg], env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    Cluster._wait(lambda: cluster.finished("csearch_task") >= 4, "the first steps")
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=300)
    assert p.returncode == 130, err
    assert out.startswith("Doing parameter search") and "Best C" not in out
    Cluster._wait(lambda: not cluster.client.run_on_scheduler(
        lambda dask_scheduler: [k for k in dask_scheduler.tasks if "csearch" in str(k)]),
        "the run's tasks to leave the scheduler", timeout=60)
    Cluster._wait(lambda: not any(cluster.client.run(lambda: len(dask_tasks._SEARCH)).values()),
                  "the workers to drop the search", timeout=60)
