"""Issue 44, part "one-row sets, compression, convert, test under load": the commands in subprocesses.

- H5: a training set of one row. Cross-validation (-v n, and -C) leaves one fold that trains on no rows, and
  LIBSVM's svm-train and LIBLINEAR's train go on: their solvers run on nothing and their model of no rows predicts
  no label (LIBSVM's and LIBLINEAR's label[0] of an empty array), nan (SVR) or -1 (one-class: the sign of nan).
  llsvm prints what they print (their stdout below is svm-train 3.37's and train 2.50's, byte for byte: printf's
  "-nan" of x86's NaN, whose sign bit is set, where the solver on no rows divides 0 by 0 or takes inf - inf) where
  it ended in `internal error (ZeroDivisionError)` and the like. An SVR's -b 1 on one row gives sigma = nan (its 5
  folds train on no rows): svm-train's lines, then the model is refused, as any model llsvm-predict would refuse
  (svm-train writes "probA nan"); inside -v's folds it does not matter and the run goes on, as svm-train's.
- H16: bzip2 and xz input with trailing garbage is refused, as gzip's is (Python's BZ2File and LZMAFile stopped at
  the garbage without a word): concatenated streams and xz's stream padding are input, as `bzip2 -d` and `xz -d`
  read them.
- L6: an output that is an input (or another output) by any path is refused before anything is written:
  llsvm-convert's OUTPUT, llsvm-train's model and --json, llsvm-predict's output, --decision-values and --json.
- Under load: the helpers of scripts/children.py bound a child by its CPU time, so a child that a busy machine
  gives a small share of a core still passes.
"""
import bz2
import gzip
import lzma
import math
import os
import signal
import subprocess
import sys
import threading
import time

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "scripts"))
from children import Watch, communicate_within, reap_within, wait_for, wait_within  # noqa: E402

BIN = os.path.dirname(sys.executable)
LIBSVM_LOO = "WARNING: # folds (2) > # data (1). Will use # folds = # data instead (i.e., leave-one-out cross validation)\n"
LIBSVM_LOO5 = LIBSVM_LOO.replace("(2)", "(5)")
LIBLINEAR_LOO = "WARNING: # folds > # data. Will use # folds = # data instead (i.e., leave-one-out cross validation)\n"


def run(command, *args, cwd=None):
    """An installed console script: (exit code, stdout, stderr), text."""
    p = subprocess.run([os.path.join(BIN, command), *map(str, args)], capture_output=True, text=True, timeout=600,
                       cwd=cwd)
    return p.returncode, p.stdout, p.stderr


@pytest.fixture
def one(tmp_path):
    path = tmp_path / "one"
    path.write_text("1 1:1 2:3\n")
    return path


# -- H5: one row --------------------------------------------------------------------------------------------------
SOLVE_NOTHING = "optimization finished, #iter = 0\n"
ONE_ROW_CV = [
    # (llsvm-train's arguments, svm-train's / train's stdout, stderr)
    (["-s", "one_class", "-v", "2"],
     "*.*\n" + SOLVE_NOTHING + "obj = 0.000000, rho = -nan\nnSV = 0, nBSV = 0\nCross Validation Accuracy = 0%\n",
     LIBSVM_LOO),
    (["-s", "one_class", "-h", "0", "-v", "2"],
     ".*\n" + SOLVE_NOTHING + "obj = 0.000000, rho = -nan\nnSV = 0, nBSV = 0\nCross Validation Accuracy = 0%\n",
     LIBSVM_LOO),
    (["-s", "one_class", "-b", "1", "-v", "2"],
     "*.*\n" + SOLVE_NOTHING + "obj = 0.000000, rho = -nan\nnSV = 0, nBSV = 0\nCross Validation Accuracy = 0%\n",
     LIBSVM_LOO + "WARNING: number of positive or negative decision values <5; too few to do a probability "
                  "estimation.\n"),
    (["-s", "epsilon_svr", "-v", "2"],
     "*.*\n" + SOLVE_NOTHING + "nu = -nan\nobj = 0.000000, rho = -nan\nnSV = 0, nBSV = 0\n"
     "Cross Validation Mean squared error = -nan\nCross Validation Squared correlation coefficient = -nan\n",
     LIBSVM_LOO),
    (["-s", "nu_svr", "-v", "2"],
     ".*\n" + SOLVE_NOTHING + "epsilon = nan\nobj = 0.000000, rho = -nan\nnSV = 0, nBSV = 0\n"
     "Cross Validation Mean squared error = -nan\nCross Validation Squared correlation coefficient = -nan\n",
     LIBSVM_LOO),
    *[(["-s", s, "-h", "0", "-v", "2"], ".*\n" + SOLVE_NOTHING + line + "obj = 0.000000, rho = -nan\n"
       "nSV = 0, nBSV = 0\nCross Validation Mean squared error = -nan\n"
       "Cross Validation Squared correlation coefficient = -nan\n", LIBSVM_LOO)
      for s, line in (("epsilon_svr", "nu = -nan\n"), ("nu_svr", "epsilon = nan\n"))],
    (["-s", "smo", "-v", "2"], "Total nSV = 0\nCross Validation Accuracy = 0%\n", LIBSVM_LOO),
    (["-s", "nu_svc", "-v", "2"], "Total nSV = 0\nCross Validation Accuracy = 0%\n", LIBSVM_LOO),
    (["-s", "smo", "-b", "1", "-v", "2"], "Total nSV = 0\nCross Validation Accuracy = 0%\n", LIBSVM_LOO),
    *[(["-s", s, "-v", "2"], "Cross Validation Accuracy = 0%\n", LIBLINEAR_LOO) for s in "0123567"],
    (["-s", "0", "-v", "2", "-B", "1"], "Cross Validation Accuracy = 0%\n", LIBLINEAR_LOO),
    (["-s", "4", "-v", "2"],
     "\noptimization finished, #iter = 1\nObjective value = 0.000000\nnSV = 0\nCross Validation Accuracy = 0%\n",
     LIBLINEAR_LOO),
    (["-s", "11", "-v", "2"],
     "init f 0.000e+00 |g| 0.000e+00\nCross Validation Mean squared error = 1\n"
     "Cross Validation Squared correlation coefficient = -nan\n", LIBLINEAR_LOO),
    *[(["-s", s, "-v", "2"],
       "\noptimization finished, #iter = 1\nObjective value = 0.000000\nnSV = 0\n"
       "Cross Validation Mean squared error = 1\nCross Validation Squared correlation coefficient = -nan\n",
       LIBLINEAR_LOO) for s in ("12", "13")],
    (["-s", "21", "-v", "2"],
     "\noptimization finished, #iter = 0\nObjective value = 0.000000\nnSV = 0\nrho = -nan\n"
     "Cross Validation Accuracy = 0%\n", LIBLINEAR_LOO),
    (["-s", "0", "-C"],
     "Doing parameter search with 5-fold cross validation.\n" +
     "".join(f"log2c={c:7.2f}\trate=0\n" for c in (-4, -3, -2, -1, 0)) + "Best C = 0.0625  CV accuracy = 0%\n",
     LIBLINEAR_LOO),
    (["-s", "2", "-C", "-v", "2"],
     "Doing parameter search with 2-fold cross validation.\n" +
     "".join(f"log2c={c:7.2f}\trate=0\n" for c in (-5, -4, -3, -2, -1)) + "Best C = 0.03125  CV accuracy = 0%\n",
     LIBLINEAR_LOO),
]


@pytest.mark.parametrize("args, stdout, stderr", ONE_ROW_CV, ids=[" ".join(c[0]) for c in ONE_ROW_CV])
def test_one_row_cross_validation_prints_what_the_reference_prints(one, tmp_path, args, stdout, stderr):
    """-v 2 (and -C) on one row: exit 0, the reference's stdout and stderr, no model written."""
    rc, out, err = run("llsvm-train", *args, one, tmp_path / "m")
    assert (rc, out, err) == (0, stdout, stderr)
    assert not (tmp_path / "m").exists()


@pytest.mark.parametrize("args", [["-s", "one_class"], ["-s", "epsilon_svr"], ["-s", "nu_svr", "-h", "0"],
                                  ["-s", "11"], ["-s", "12"], ["-s", "13"], ["-s", "21"]],
                         ids=lambda args: " ".join(args))
def test_one_row_cross_validation_quiet(one, tmp_path, args):
    """-q: the reference's stdout without its solver's lines, byte for byte ("-nan" where printf writes it); stderr
    empty (-q silences llsvm's warnings, where svm-train and train write the folds' warning to stderr anyway)."""
    stdout = next(out for a, out, _ in ONE_ROW_CV if a == args + ["-v", "2"])
    rc, out, err = run("llsvm-train", "-q", *args, "-v", "2", one, tmp_path / "m")
    assert (rc, out, err) == (0, stdout[stdout.index("Cross Validation"):], "")


def test_printf_f_and_g_write_the_sign_of_a_nan_as_c():
    """C's printf writes x86's NaN of 0/0 or inf - inf (its sign bit set) "-nan" and its negation "nan"; Python
    writes both "nan". Other values as Python's "%f" and "%g"."""
    from llsvm.predict import printf_f, printf_g
    neg = -math.nan
    assert math.copysign(1.0, neg) < 0
    assert [printf_f(x) for x in (neg, -neg, math.inf, -math.inf, 0.5, -0.0)] == [
        "-nan", "nan", "inf", "-inf", "0.500000", "-0.000000"]
    assert [printf_g(x) for x in (neg, -neg, 1e-5, 3.0)] == ["-nan", "nan", "1e-05", "3"]


@pytest.mark.parametrize("solver", ["llsvm", "streamsvm", "bm", "h1tree", "olsvm", "norma", "pegasos", "local1d",
                                    "project1d"])
def test_one_row_cross_validation_of_llsvms_own_solvers(one, tmp_path, solver):
    """The solvers without a reference: the fold of no rows predicts no label, as LIBLINEAR's -s 3 (the problem
    of the out-of-core ones)."""
    rc, out, err = run("llsvm-train", "-s", solver, "-v", "2", one, tmp_path / "m")
    assert (rc, out.splitlines()[-1], err) == (0, "Cross Validation Accuracy = 0%", LIBLINEAR_LOO if solver not in (
        "h1tree", "olsvm", "norma", "pegasos") else LIBSVM_LOO)


def test_one_row_grid_search(one, tmp_path):
    rc, out, err = run("llsvm-train", "-s", "smo", "-v", "2", "--grid", "C=1,2", one, tmp_path / "m")
    assert rc == 0 and err == LIBSVM_LOO
    assert out.endswith("Best C = 1 gamma = 0.5  CV error = 100%  (Cross Validation Accuracy = 0%)\n")


SVR_B1 = {
    "epsilon_svr": ("*\n" + SOLVE_NOTHING + "nu = 0.000000\nobj = 0.000000, rho = -1.000000\nnSV = 0, nBSV = 0\n"
                    "*.*\n" + SOLVE_NOTHING + "nu = -nan\nobj = 0.000000, rho = -nan\nnSV = 0, nBSV = 0\n"),
    "nu_svr": ("*\n" + SOLVE_NOTHING + "epsilon = -0.000000\nobj = 0.000000, rho = -1.000000\nnSV = 0, nBSV = 0\n"
               ".*\n" + SOLVE_NOTHING + "epsilon = nan\nobj = 0.000000, rho = -nan\nnSV = 0, nBSV = 0\n"),
}
SIGMA_NAN = ("Prob. model for test data: target value = predicted value + z,\n"
             "z: Laplace distribution e^(-|z|/sigma)/(2sigma),sigma= nan\n")


@pytest.mark.parametrize("solver", ["epsilon_svr", "nu_svr"])
def test_one_row_svr_probability_is_refused_after_svm_trains_lines(one, tmp_path, solver):
    """-b 1 on one row: svm-train's lines (its 5 folds of one row train on no rows: sigma nan), then the model,
    which svm-train writes with "probA nan", is refused as llsvm-predict would refuse it, saying why."""
    rc, out, err = run("llsvm-train", "-s", solver, "-b", "1", one, tmp_path / "m")
    assert rc == 1 and out == SVR_B1[solver] + SIGMA_NAN
    assert err == (LIBSVM_LOO5 + "Error: the model is not written: probA[0] is nan, not a finite number, which "
                   f"llsvm-predict would refuse; -s {solver} -b 1 needs a training set of 2 rows or more: sigma "
                   "comes from a 5-fold cross-validation, which on 1 row trains on no rows\n")
    assert sorted(os.listdir(tmp_path)) == ["one"]


@pytest.mark.parametrize("solver", ["epsilon_svr", "nu_svr"])
def test_svr_probability_inside_cross_validation(tmp_path, one, solver):
    """-b 1 -v 2 on two rows: each fold's -b 1 on one row has sigma nan, which cross-validation (it predicts
    values) does not use: svm-train's result. On one row (a fold of no rows, whose 5 folds svm-train divides by
    zero to make): refused, after the fold's lines."""
    two = tmp_path / "two"
    two.write_text("1 1:1\n-1 1:2\n")
    rc, out, err = run("llsvm-train", "-s", solver, "-b", "1", "-v", "2", two, tmp_path / "m")
    assert rc == 0 and err == LIBSVM_LOO5 * 2
    assert out.count(SIGMA_NAN) == 2
    assert out.endswith("Cross Validation Mean squared error = 4\nCross Validation Squared correlation coefficient "
                        "= 1\n")
    rc, out, err = run("llsvm-train", "-s", solver, "-b", "1", "-v", "2", one, tmp_path / "m")
    assert rc == 1 and out == SVR_B1[solver].split("nSV = 0, nBSV = 0\n", 1)[1]     # the fold's lines
    assert err == LIBSVM_LOO + (f"Error: -s {solver} -b 1 -v on a set of 1 row: the fold that leaves the row out "
                                "trains on no rows, and the probability model of no rows (a 5-fold "
                                "cross-validation) has no fold\n")


# -- H16: trailing garbage after compressed data --------------------------------------------------------------------
TEXT = b"1 1:0.5 3:2\n-1 2:1\n" * 50
COMPRESS = {"gzip": gzip.compress, "bzip2": bz2.compress, "xz": lzma.compress}


@pytest.mark.parametrize("kind", ["gzip", "bzip2", "xz"])
@pytest.mark.parametrize("tail", [b"garbage", b"\0\0\0\0garbage"], ids=["garbage", "nulls-then-garbage"])
def test_trailing_garbage_is_refused(tmp_path, kind, tail):
    """Every compression: `Error: PATH: corrupt or truncated KIND input (trailing garbage ...)`, exit 1, nothing
    written; bzip2 and xz went on without a word, the rest of the file lost."""
    src = tmp_path / "in.z"
    src.write_bytes(COMPRESS[kind](TEXT) + tail)
    rc, out, err = run("llsvm-convert", src, tmp_path / "out.bin")
    assert (rc, out) == (1, "")
    assert err == f"Error: {src}: corrupt or truncated {kind} input (trailing garbage after the compressed data)\n"
    assert sorted(os.listdir(tmp_path)) == ["in.z"]
    # the same refusal from standard input, and for llsvm-train (one reader: llsvm/sources.py)
    p = subprocess.run([os.path.join(BIN, "llsvm-train"), "-q", "-", str(tmp_path / "m")], input=src.read_bytes(),
                       capture_output=True, timeout=600)
    assert p.returncode == 1
    assert p.stderr == (f"Error: <stdin>: corrupt or truncated {kind} input (trailing garbage after the compressed "
                        "data)\n").encode()
    assert sorted(os.listdir(tmp_path)) == ["in.z"]


@pytest.mark.parametrize("kind, data", [
    ("gzip", gzip.compress(TEXT[:200]) + gzip.compress(TEXT[200:])),        # two members, as `cat a.gz b.gz`
    ("gzip", gzip.compress(TEXT) + b"\0" * 7),                              # zero padding (gzip -d reads it)
    ("bzip2", bz2.compress(TEXT[:200]) + bz2.compress(TEXT[200:])),
    ("xz", lzma.compress(TEXT[:200]) + lzma.compress(TEXT[200:])),
    ("xz", lzma.compress(TEXT) + b"\0" * 8),                                # xz's stream padding
    ("xz", lzma.compress(TEXT[:200]) + b"\0" * 4 + lzma.compress(TEXT[200:]) + b"\0" * 4),
], ids=["gzip-members", "gzip-zero-padding", "bzip2-streams", "xz-streams", "xz-padding", "xz-streams-padding"])
def test_what_the_decompressors_read_is_read(tmp_path, kind, data):
    src = tmp_path / "in.z"
    src.write_bytes(data)
    rc, out, err = run("llsvm-convert", "--to", "text", src, "-")
    assert (rc, err) == (0, "")
    assert out.encode() == TEXT


@pytest.mark.parametrize("kind, data, detail", [
    ("xz", lzma.compress(TEXT) + b"\0" * 3,
     "trailing garbage after the compressed data (stream padding of 3 null bytes, not a multiple of 4)"),
    ("bzip2", bz2.compress(TEXT) + b"\0" * 4, "trailing garbage after the compressed data"),
    ("bzip2", bz2.compress(TEXT) + b"BZh9", "Compressed file ended before the end-of-stream marker was reached"),
], ids=["xz-3-nulls", "bzip2-nulls", "bzip2-truncated-second-stream"])
def test_what_the_decompressors_refuse_is_refused(tmp_path, kind, data, detail):
    src = tmp_path / "in.z"
    src.write_bytes(data)
    rc, out, err = run("llsvm-convert", src, tmp_path / "out.bin")
    assert (rc, out, err) == (1, "", f"Error: {src}: corrupt or truncated {kind} input ({detail})\n")
    assert sorted(os.listdir(tmp_path)) == ["in.z"]


# -- L6: an output that is an input -------------------------------------------------------------------------------
SAMPLE = "1 1:1 2:3\n-1 1:2\n"


def _same_message(what, path, other_what, other):
    return (f"Error: {what} {path} and {other_what} {other} are the same file: writing {what} would replace it "
            "(nothing was written)\n")


def _state(directory):
    """Every file of the directory with its bytes and modification time (symlinks as their target)."""
    return {n: ((directory / n).read_bytes(), os.lstat(directory / n).st_mtime_ns) for n in sorted(os.listdir(
        directory))}


@pytest.mark.parametrize("to", ["binary", "text"])
@pytest.mark.parametrize("spelling", ["same", "dotted", "symlink", "hardlink"])
def test_convert_refuses_to_write_over_its_input(tmp_path, to, spelling):
    work = tmp_path / "w"
    work.mkdir()
    src = work / "data.txt"
    src.write_text(SAMPLE)
    if to == "text":
        assert run("llsvm-convert", "-q", src, work / "data.bin")[0] == 0
        src = work / "data.bin"
    output = {"same": src.name, "dotted": f"../w/./{src.name}", "symlink": "link", "hardlink": "hard"}[spelling]
    if spelling == "symlink":
        (work / "link").symlink_to(src.name)
    if spelling == "hardlink":
        os.link(src, work / "hard")
    before = _state(work)
    rc, out, err = run("llsvm-convert", "--to", to, src.name, output, cwd=work)
    assert (rc, out, err) == (1, "", _same_message("OUTPUT", output, "INPUT", src.name))
    assert _state(work) == before


def test_train_and_predict_refuse_to_write_over_an_input(tmp_path):
    data = tmp_path / "data"
    data.write_text(SAMPLE)
    link = tmp_path / "link"
    link.symlink_to(data)
    assert run("llsvm-train", "-q", data, tmp_path / "m")[0] == 0
    model = tmp_path / "m"
    before = _state(tmp_path)
    cases = [
        ("llsvm-train", ["-q", data, data], ("model_file", data, "training_set_file", data)),
        ("llsvm-train", ["-q", data, link], ("model_file", link, "training_set_file", data)),
        ("llsvm-train", ["-q", "--json", data, data, tmp_path / "new"], ("--json", data, "training_set_file", data)),
        ("llsvm-train", ["-q", "--json", tmp_path / "j", data, tmp_path / "j"], ("--json", tmp_path / "j",
                                                                                "model_file", tmp_path / "j")),
        ("llsvm-predict", [data, model, data], ("output_file", data, "test_file", data)),
        ("llsvm-predict", [link, model, data], ("output_file", data, "test_file", link)),
        ("llsvm-predict", [data, model, model], ("output_file", model, "model_file", model)),
        ("llsvm-predict", ["--decision-values", tmp_path / "o", data, model, tmp_path / "o"],
         ("--decision-values", tmp_path / "o", "output_file", tmp_path / "o")),
        ("llsvm-predict", ["--json", model, data, model, tmp_path / "o"], ("--json", model, "model_file", model)),
    ]
    for command, args, clash in cases:
        rc, out, err = run(command, *args)
        assert (rc, out, err) == (1, "", _same_message(*clash)), (command, args)
        assert _state(tmp_path) == before, (command, args)
    # -v writes no model: its model_file may be anything, as LIBLINEAR's
    rc, out, err = run("llsvm-train", "-q", "-v", "2", data, data)
    assert (rc, out) == (0, "Cross Validation Accuracy = 0%\n")
    assert _state(tmp_path) == before


# -- under load: bounds on a child's CPU time ------------------------------------------------------------------------
SPIN = "import time, sys\nt = time.process_time()\nwhile time.process_time() - t < float(sys.argv[1]): pass\n"


def _loaded(p, share):
    """Give the child p `share` of a core, as a busy machine does (at a load of 30 on 2 cores, about a fifteenth):
    SIGSTOP and SIGCONT in turn, every 100 ms of wall, until it exits."""
    def cycle():
        while p.poll() is None:
            try:
                os.kill(p.pid, signal.SIGCONT)
                time.sleep(0.1 * share)
                os.kill(p.pid, signal.SIGSTOP)
                time.sleep(0.1 * (1 - share))
            except ProcessLookupError:
                return
    t = threading.Thread(target=cycle, daemon=True)
    t.start()
    return t


def test_a_slowed_child_is_bounded_by_its_cpu_not_the_clock():
    """A child of 0.3 s of CPU given a tenth of a core takes about 3 s of wall: a wall bound of ten times its CPU
    time fails it, the CPU bound of wait_within passes it (the suite's verdicts, tests/conftest.py)."""
    p = subprocess.Popen([sys.executable, "-c", SPIN, "0.3"])
    t0 = time.monotonic()
    t = _loaded(p, 0.1)
    try:
        rc = wait_within(p, 5.0)
    finally:
        if p.poll() is None:
            os.kill(p.pid, signal.SIGCONT)
            p.kill()
            p.wait()
        t.join()
    wall = time.monotonic() - t0
    assert rc == 0
    assert wall > 10 * 0.3            # what a wall bound of 10x the child's CPU time would have refused


def test_the_bounds_end_a_spinning_or_blocked_child():
    """A child that keeps computing is ended by its CPU time, one that waits forever by its stall (no CPU time)."""
    spin = subprocess.Popen([sys.executable, "-c", SPIN, "1000"])
    watch = Watch(spin.pid)
    assert reap_within(spin, 0.5) is None                     # still working after 0.5 s of CPU: not reaped
    assert watch.used() >= 0.5
    spin.kill()
    spin.wait()
    spin = subprocess.Popen([sys.executable, "-c", SPIN, "1000"])
    with pytest.raises(AssertionError, match="used 0.2 s of CPU without the point"):
        wait_for(lambda: False, spin, 0.2, "the point")
    assert spin.returncode is not None                        # killed
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(1000)"], stdout=subprocess.PIPE)
    with pytest.raises(AssertionError, match=r"stalled \(1.0 s without CPU time\) without exiting"):
        communicate_within(sleeper, 100.0, stall=1.0)
    assert sleeper.returncode is not None
