"""Progress that tells the truth (issue 48, item 2).

- LIBSVM's dots during an SMO solve are printed as the solver runs, as svm-train prints them: the kernel writes
  them into a locked text (cext/_smo.pyx's Channel, OneVsOne's text) that a thread of Reporter.live takes a few
  times a second. Checked without timing: the text is read while the solve still runs (a solve that never ends
  until the stop flag ends it), and in a terminal the dots of a command are there before its `optimization
  finished` line, while it still runs (then Ctrl-C ends it: exit 130). The bytes stay svm-train's
  (libsvm-official's, test_smo_train's reference), in a terminal too.
- Bars carry a total wherever the work's size is known (tqdm's `total`, recorded as each bar closes or goes on
  to its next stage): a text file's bytes, a binary file's rows, the passes of -s llsvm, bm and streamsvm, -v's
  folds, --grid's fits, llsvm-convert, llsvm-predict (--dask's tasks: tests/test_dask.py); conftest's `bars`.
- Nothing is written onto a bar's line: text for a terminal waits for its line's end while a bar is shown.
- -q silences everything; no bar when stderr is not a terminal.
"""
import os
import pty
import select
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest
import scipy.sparse as sp
from click.testing import CliRunner

from conftest import REPO_ROOT, assert_exit, write_small_set
from test_smo_train import libsvm_output

# the command in a fresh process, this checkout's llsvm first on the path
CLI = ("import sys; sys.path.insert(0, sys.argv.pop(1)); sys.argv[0] = 'llsvm-' + sys.argv[1]; "
       "from llsvm.cli import entry; getattr(entry, sys.argv.pop(1))()")
# C = 10^5 and a wide RBF on noisy labels, a cache of almost nothing: a solve that runs for minutes, a '.' every
# 1000 iterations (milliseconds)
LONG_SMO = ["-s", "smo", "-c", "100000", "-g", "0.02", "-m", "0.01", "-e", "1e-12"]


def _command(name, *args):
    return [sys.executable, "-c", CLI, str(REPO_ROOT), name, *map(str, args)]


def _read_until(fd, proc, done, limit=120.0):
    """What the pty's master `fd` gives until done(text) (or the process ends, or `limit` seconds: a guard against
    a hang, not a verdict)."""
    got = b""
    end = time.monotonic() + limit
    while not done(got.decode(errors="replace")) and time.monotonic() < end:
        ready, _, _ = select.select([fd], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(fd, 65536)
            except OSError:             # the child closed its side
                break
            if not chunk:
                break
            got += chunk
        elif proc.poll() is not None:
            break
    return got.decode(errors="replace")


def _drain(fd):
    got = b""
    while select.select([fd], [], [], 0.2)[0]:
        try:
            chunk = os.read(fd, 65536)
        except OSError:
            break
        if not chunk:
            break
        got += chunk
    return got.decode(errors="replace")


def _in_terminal(cmd, stderr=None, until=lambda text: False, then=None):
    """Run cmd with stdout (and stderr, unless given) on a pty until until(what the terminal got) (or its end), then
    then(proc) when given, to its end: (what the terminal got, the process, whether it still ran at `until`)."""
    master, slave = pty.openpty()
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=slave, stderr=slave if stderr is None else stderr)
    os.close(slave)
    try:
        seen = _read_until(master, proc, until, limit=300)
        running = proc.poll() is None
        if then is not None:
            then(proc)
        proc.wait(timeout=60)
        seen += _drain(master)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(master)
    return seen, proc, running


def _dense(path, rows=1000, features=8, seed=5):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((rows, features))
    y = np.where(X @ rng.standard_normal(features) + 2 * rng.standard_normal(rows) > 0, 1, -1)
    with open(path, "w") as f:
        for label, row in zip(y, X):
            f.write(f"{label} " + " ".join(f"{j + 1}:{v:.6g}" for j, v in enumerate(row)) + "\n")
    return path


# -- the kernel: its progress can be read while it runs ------------------------------------------------------------
@pytest.fixture
def stop():
    from llsvm._ext import _stop
    _stop.clear()
    yield _stop
    _stop.clear()


def test_the_solver_progress_is_read_while_it_runs(stop):
    """_smo.solve(live=Channel) writes '.' as the solver makes its iterations: a thread reads one while the solve
    still runs (it ends only when the stop flag is set, after that), and the channel's text is the events'."""
    from llsvm._ext import _kernel as KK
    from llsvm._ext import _smo
    from llsvm._ext._rowops import row_sq_norms
    from llsvm.dataset import CSRDataset
    rng = np.random.default_rng(3)
    l, n = 300, 8
    X = rng.standard_normal((l, n))
    y = np.where(X @ rng.standard_normal(n) + rng.standard_normal(l) > 0, 1, -1).astype(np.int8)
    view = CSRDataset.from_csr(sp.csr_matrix(X), y.astype(np.float64)).row_view()
    params = {"kernel_type": 2, "gamma": 0.5, "coef0": 0.0, "degree": 3}
    sq = row_sq_norms(view)
    QD = np.empty(l)
    KK.kernel_diag(np.arange(l, dtype=np.int64), params, sq, QD)
    cache = KK.KernelCache(view, None, params, sq, 100.0)
    channel, result = _smo.Channel(), {}

    def solve():           # eps 1e-300 and no iteration limit to speak of: it runs until stopped
        try:
            result["out"] = _smo.solve(cache, y, -np.ones(l), np.zeros(l), 1e5, 1e5, QD, eps=1e-300,
                                       max_iter=10 ** 15, live=channel)
        except SystemExit as exc:
            result["exit"] = exc.code

    worker = threading.Thread(target=solve)
    worker.start()
    seen = ""
    end = time.monotonic() + 120
    while "." not in seen and worker.is_alive() and time.monotonic() < end:
        seen += channel.take()
        time.sleep(0.01)
    running = worker.is_alive()
    stop.request_stop(signal.SIGINT)
    worker.join()
    assert running and "." in seen, (seen, result)
    assert result == {"exit": 130}
    assert set(seen + channel.take()) <= set(".*\nWARNING: using -h 0 may be faster")


def test_the_dots_come_before_the_solve_ends_in_a_terminal(tmp_path):
    """llsvm-train -s smo in a terminal: its dots are on the screen while the first pair's solve runs (no
    `optimization finished` yet, the process running); Ctrl-C then ends it (exit 130) before that line."""
    data = _dense(tmp_path / "d.txt")
    seen, proc, running = _in_terminal(_command("train", *LONG_SMO, data, tmp_path / "m"), stderr=subprocess.PIPE,
                                       until=lambda text: "..." in text,
                                       then=lambda proc: proc.send_signal(signal.SIGINT))
    err = proc.stderr.read().decode()
    assert running and "..." in seen, (seen, err)
    assert "optimization finished" not in seen
    assert proc.returncode == 130, err


@pytest.mark.parametrize("name,args", [("heart_scale", ["-c", "100"]), ("iris.scale", ["-b", "1", "-c", "1000"])])
def test_the_dots_in_a_terminal_are_svm_trains(shared_plain, tmp_path, name, args):
    """What a terminal shows of llsvm-train -s smo (stdout a pty, the live thread printing) is what svm-train
    prints, dots included (their count and place): heart_scale with -c 100 (one pair, 1,000s of iterations),
    iris with -b 1 (three pairs and their five folds each)."""
    path = shared_plain(name)
    theirs = libsvm_output(path, args)
    assert theirs.count(".") >= 3, theirs
    seen, proc, _ = _in_terminal(_command("train", "-s", "smo", *args, *(["--libsvm-rand"] if "-b" in args else []),
                                       path, tmp_path / "m"), stderr=subprocess.PIPE)
    assert proc.returncode == 0, proc.stderr.read()
    assert seen.replace("\r\n", "\n") == theirs


def test_quiet_prints_nothing_in_a_terminal(tmp_path):
    """-q (with --progress too): nothing on a terminal's stdout or stderr, dots and bars included."""
    data = write_small_set(tmp_path / "d.txt", 400)
    seen, proc, _ = _in_terminal(_command("train", "-s", "smo", "-c", "100", "-q", "--progress", data, tmp_path / "m"))
    assert proc.returncode == 0
    assert seen == ""


def test_no_bar_when_stderr_is_not_a_terminal(tmp_path):
    """Without --progress, a run whose stderr is a pipe shows no bar (its stdout carries the solver's lines)."""
    data = write_small_set(tmp_path / "d.txt", 300)
    proc = subprocess.run(_command("train", "-s", "1", "-v", "3", data), capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "Cross Validation Accuracy" in proc.stdout
    assert "\r" not in proc.stderr and "it/s" not in proc.stderr and "%|" not in proc.stderr, proc.stderr


# -- bars with a total ------------------------------------------------------------------------------------------------
def _cli(main, *args):
    r = CliRunner().invoke(main, [*map(str, args)])
    assert_exit(r, 0)
    return r


def _train(*args):
    from llsvm.cli.train import main
    return _cli(main, "--progress", *args)


def _complete(stage):
    desc, unit, total, n = stage
    return total is not None and total > 0 and n == total


def test_reading_a_text_file_counts_its_bytes(tmp_path, bars):
    data = write_small_set(tmp_path / "d.txt", 300)
    _train("-s", "1", data, tmp_path / "m")
    assert bars == [("reading", "B", os.path.getsize(data), os.path.getsize(data))]


def test_reading_compressed_text_counts_the_compressed_bytes(tmp_path, bars):
    import gzip
    data = write_small_set(tmp_path / "d.txt", 300)
    packed = tmp_path / "d.txt.gz"
    packed.write_bytes(gzip.compress(data.read_bytes()))
    _train("-s", "1", packed, tmp_path / "m")
    assert bars == [("reading", "B", os.path.getsize(packed), os.path.getsize(packed))]


@pytest.fixture
def binary(tmp_path):
    from llsvm.cli.convert import main
    data = write_small_set(tmp_path / "d.txt", 600, nnz=8)
    out = tmp_path / "d.bin"
    _cli(main, "--block-rows", "100", data, out)
    return out


def test_llsvm_from_a_binary_file_counts_its_rows_and_passes(binary, tmp_path, bars):
    """-s llsvm on a .bin: the first pass over its 600 rows (the header's count), then each re-check pass's rows,
    numbered of the most --max-passes allows."""
    _train("-s", "llsvm", binary, tmp_path / "m")
    assert bars[0] == ("first pass", "rows", 600, 600)
    passes = [s for s in bars if s[0].startswith("re-check pass")]
    assert passes and all(_complete(s) and s[2] == 600 and s[1] == "rows" for s in passes), bars
    assert passes[0][0] == "re-check pass 1 of at most 10"


def test_bm_and_streamsvm_count_each_pass(binary, tmp_path, bars):
    _train("-s", "bm", binary, tmp_path / "m")
    outer = [s for s in bars if s[0].startswith("outer iteration")]
    assert outer and all(_complete(s) and s[2] == 600 for s in outer), bars
    assert outer[0][0] == "outer iteration 1 of at most 100"
    bars.clear()
    _train("-s", "streamsvm", binary, tmp_path / "m")
    passes = [s for s in bars if s[0].startswith("pass ")]
    assert passes and all(_complete(s) and s[2] == 600 for s in passes), bars


def test_folds_and_grid_cells(tmp_path, bars):
    data = write_small_set(tmp_path / "d.txt", 200)
    _train("-s", "smo", "-v", "4", data)
    assert ("4-fold cross validation", "folds", 4, 4) in bars, bars
    bars.clear()
    _train("-s", "smo", "--grid", "C=1,10;gamma=0.1,1", "-v", "3", data)
    assert ("grid, 4 cells x 3 folds", "fits", 12, 12) in bars, bars


def test_convert_and_predict(tmp_path, bars):
    from llsvm.cli.convert import main as convert
    from llsvm.cli.predict import main as predict
    data = write_small_set(tmp_path / "d.txt", 300)
    size = os.path.getsize(data)
    _cli(convert, "--progress", data, tmp_path / "d.bin")
    assert bars == [("converting", "B", size, size)]
    bars.clear()
    _cli(__import__("llsvm.cli.train", fromlist=["main"]).main, "-s", "1", data, tmp_path / "m")
    _cli(predict, "--progress", data, tmp_path / "m", tmp_path / "p")
    _cli(predict, "--progress", tmp_path / "d.bin", tmp_path / "m", tmp_path / "p")
    assert bars == [("predicting", "B", size, size), ("predicting", "rows", 300, 300)]


# -- nothing onto a bar's line ----------------------------------------------------------------------------------------
class _Terminal:
    """A text stream that says it is a terminal, keeping what is written."""

    def __init__(self):
        self.text = ""

    def write(self, s):
        self.text += s

    def flush(self):
        pass

    def isatty(self):
        return True

    def fileno(self):
        raise OSError("no descriptor")


def test_text_waits_for_its_lines_end_while_a_bar_is_shown(monkeypatch):
    """LIBLINEAR's dots written while a bar is shown in the same terminal would land on the bar's line: a partial
    line waits for its end (then the bar is cleared, the lines written, the bar drawn again) or for the bar's
    close; text for a file or pipe is written as it comes."""
    from llsvm.report import Reporter
    out, err = _Terminal(), _Terminal()
    monkeypatch.setattr(sys, "stdout", out)
    monkeypatch.setattr(sys, "stderr", err)
    reporter = Reporter(progress=True)
    bar = reporter.bar(total=10, desc="work", unit="it")
    reporter.info("..")
    assert out.text == ""
    reporter.info(".\noptimization finished\n*")
    assert out.text == "...\noptimization finished\n"
    before = len(err.text)
    bar.update(5)
    bar.close()
    assert out.text == "...\noptimization finished\n*"
    assert len(err.text) >= before
    reporter.info("..")                         # no bar: as it comes
    assert out.text.endswith("*..")


def test_a_wait_of_unknown_length_shows_its_time(monkeypatch):
    """--dask local's cluster start (Reporter.waiting): a bar of its description and the time it has taken, drawn
    as the body starts (and redrawn by a thread every half second while it runs); nothing with -q."""
    from llsvm.report import Reporter
    err = _Terminal()
    monkeypatch.setattr(sys, "stderr", err)
    with Reporter(progress=True).waiting("starting a local Dask cluster"):
        assert "starting a local Dask cluster: 00:00" in err.text
    err.text = ""
    with Reporter(quiet=True, progress=True).waiting("starting a local Dask cluster"):
        pass
    assert err.text == ""


def test_a_counted_pass_holds_no_block_while_the_next_is_read():
    """The rows of a binary file's pass are counted on the bar (outofcore.counted) without holding a block: when
    the next one is read, the one before is gone (read_ahead's two blocks at most)."""
    import gc
    import weakref
    from llsvm.report import Reporter
    from llsvm.solvers.outofcore import counted

    class Block:
        n_rows = 3

    made, alive = [], []

    def blocks():
        for _ in range(3):
            gc.collect()
            alive.append(sum(r() is not None for r in made))
            block = Block()
            made.append(weakref.ref(block))
            yield block
            block = None

    bar = Reporter(progress=False).bar()
    for block in counted(blocks(), bar, 9):
        del block
    assert alive == [0, 0, 0]
