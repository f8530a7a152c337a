"""Output a script can rely on (issue 48, item 3; docs/guide.md, "stdout, stderr and exit status").

The rule: LIBLINEAR's lines on stdout as LIBLINEAR prints them (liblinear-official, LIBLINEAR 2.50's C library, is
the reference); llsvm's own warnings and notes on stderr, silenced by -q; stdout that carries data (`--json -`, the
predictions to `-`) holds it alone, the usual lines then on stderr; `llsvm-train --strict` exits 3 when the model
written is not certified, 0 by default as LIBLINEAR. CliRunner runs the commands in-process (its stdout and stderr
kept apart); one pipe runs the installed console script as a shell would.
"""
import json
import os
import subprocess
import sys

import pytest
from click.testing import CliRunner
from conftest import assert_exit, write_small_set

from llsvm.cli.predict import main as predict_main
from llsvm.cli.train import main as train_main

BIN = os.path.dirname(sys.executable)
NOT_CERTIFIED = "llsvm-train: --strict: the model is not certified"


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    return write_small_set(tmp_path_factory.mktemp("rule") / "d.txt", 120, n_features=12, seed=4)


def invoke(main, *args):
    return CliRunner().invoke(main, [str(a) for a in args])


def liblinear_stdout(data, options):
    """What LIBLINEAR's train prints on stdout (the C library's printf, so a child process whose stdout is read)."""
    code = ("import sys\nfrom liblinear.liblinearutil import svm_read_problem, train\n"
            f"y, x = svm_read_problem({str(data)!r})\ntrain(y, x, {options!r})\n")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return p.stdout


def test_liblinear_lines_on_stdout_or_on_stderr_when_json_takes_stdout(data, tmp_path):
    """-s 2 prints LIBLINEAR's lines byte for byte: on stdout alone; with --json - on stderr, stdout holding the
    JSON alone; -q silences them."""
    theirs = liblinear_stdout(data, "-s 2 -c 1")
    assert theirs.startswith("init f ")
    r = invoke(train_main, "-s", "2", "-c", "1", data, tmp_path / "m")
    assert_exit(r, 0)
    assert (r.stdout, r.stderr) == (theirs, "")
    r = invoke(train_main, "-s", "2", "-c", "1", "--json", "-", data, tmp_path / "m")
    assert_exit(r, 0)
    assert r.stderr == theirs
    got = json.loads(r.stdout)
    assert got["converged"] is True and got["solver"] == "L2R_L2LOSS_SVC"
    r = invoke(train_main, "-q", "-s", "2", "-c", "1", "--json", "-", data, tmp_path / "m")
    assert_exit(r, 0)
    assert r.stderr == "" and json.loads(r.stdout)["n_iter"] == got["n_iter"]


@pytest.mark.parametrize("mode", [["-v", "5"], ["-C"], ["-s", "smo", "--grid", "C=0.5,2 g=0.1,1", "-v", "3"]])
def test_json_dash_is_all_of_stdout(data, tmp_path, mode):
    """-v, -C and --grid: their results (Cross Validation Accuracy, -C's lines, the grid table: on stdout even with
    -q, as LIBLINEAR's) go to stderr with --json -, and -q silences them there."""
    plain = invoke(train_main, *mode, data)
    assert_exit(plain, 0)
    assert plain.stdout.strip()                         # the results LIBLINEAR prints on stdout
    loud = invoke(train_main, *mode, "--json", "-", data)
    assert_exit(loud, 0)
    summary = json.loads(loud.stdout)                   # the JSON alone
    assert plain.stdout.splitlines()[-1] + "\n" in loud.stderr     # the result line (the grid's: its seconds vary)
    quiet = invoke(train_main, "-q", *mode, "--json", "-", data)
    assert_exit(quiet, 0)
    assert quiet.stderr == "" and json.loads(quiet.stdout).keys() == summary.keys()


def test_json_dash_into_a_pipe_parses(data):
    """The issue's command, as a shell runs it: `llsvm-train -q -v 5 --json - data | python -c json.load`."""
    reader = "import json, sys; d = json.load(sys.stdin); print(d['nr_fold'], d['cv_accuracy'] > 50)"
    for quiet in (["-q"], []):
        cmd = [os.path.join(BIN, "llsvm-train"), *quiet, "-v", "5", "--json", "-", str(data)]
        train = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        parse = subprocess.run([sys.executable, "-c", reader], stdin=train.stdout, capture_output=True, text=True)
        train.stdout.close()
        err = train.stderr.read().decode()
        assert train.wait() == 0 and parse.returncode == 0, (parse.stderr, err)
        assert parse.stdout == "5 True\n"
        assert ("Cross Validation Accuracy = " in err) == (not quiet)


def test_strict_exit_status(data, tmp_path):
    """--strict: exit 3 and a line on stderr (even with -q) when the model is not certified (the iteration limit of
    -s 3, its --json "converged" false), the model written all the same; 0 without --strict (LIBLINEAR's) and for a
    certified model."""
    model = tmp_path / "m"
    r = invoke(train_main, "-q", "-s", "3", "--max-iter", "1", "--json", tmp_path / "j", data, model)
    assert_exit(r, 0)
    assert json.loads((tmp_path / "j").read_text())["converged"] is False
    assert (r.stdout, r.stderr) == ("", "")
    model.unlink()
    r = invoke(train_main, "-q", "--strict", "-s", "3", "--max-iter", "1", data, model)
    assert_exit(r, 3)
    assert r.stdout == "" and r.stderr.startswith(NOT_CERTIFIED) and model.is_file()
    written = model.read_text()
    r = invoke(train_main, "--strict", "-s", "3", "--max-iter", "1", "--json", "-", data, model)
    assert_exit(r, 3)
    assert json.loads(r.stdout)["converged"] is False and model.read_text() == written
    assert "WARNING: reaching max number of iterations" in r.stderr and NOT_CERTIFIED in r.stderr
    # a certified model: 0; -s 1's switch to -s 2 at the limit ends at -s 2's optimum: certified too
    for args in (["-s", "3"], ["-s", "1", "--max-iter", "1"]):
        r = invoke(train_main, "-q", "--strict", *args, data, model)
        assert_exit(r, 0)
        assert (r.stdout, r.stderr) == ("", "")
    r = invoke(train_main, "--strict", "-v", "3", data)
    assert_exit(r, 1)
    assert "--strict" in r.stderr


def test_a_certificate_that_fails_is_strict_and_warned_on_stderr(data, tmp_path):
    """-s 3 --certify short of its gap: llsvm's own warning on stderr (not in LIBLINEAR's stdout lines), exit 3 with
    --strict."""
    import llsvm.solvers.dual_cg as DC
    import llsvm.solvers.smooth_hinge as SH
    mp = pytest.MonkeyPatch()
    mp.setattr(SH, "DELTA_MIN", 0.5)            # one smoothing width only: short of the gap
    mp.setattr(DC, "MAX_ROUNDS", 0)             # and no CG rounds
    try:
        r = invoke(train_main, "--strict", "-s", "3", "--certify", "--max-iter", "1", "-e", "1e-9", data,
                   tmp_path / "m")
    finally:
        mp.undo()
    assert_exit(r, 3)
    assert "certified optimum was not reached" in r.stderr and "certified optimum" not in r.stdout
    assert "WARNING: reaching max number of iterations" in r.stdout


def test_predictions_to_stdout_hold_predictions_only(data, tmp_path):
    """llsvm-predict T M -: the predictions alone on stdout (one label a row), the Accuracy line on stderr (-q: not
    at all); a file output keeps LIBLINEAR's Accuracy line on stdout; --json - takes stdout the same way."""
    model = tmp_path / "m"
    assert_exit(invoke(train_main, "-q", data, model), 0)
    to_file = invoke(predict_main, data, model, tmp_path / "p")
    assert_exit(to_file, 0)
    assert to_file.stdout.startswith("Accuracy = ") and to_file.stderr == ""
    r = invoke(predict_main, data, model, "-")
    assert_exit(r, 0)
    assert r.stdout == (tmp_path / "p").read_text() and set(r.stdout.split()) <= {"1", "-1"}
    assert r.stderr == to_file.stdout
    r = invoke(predict_main, "-q", data, model, "-")
    assert_exit(r, 0)
    assert r.stdout == (tmp_path / "p").read_text() and r.stderr == ""
    r = invoke(predict_main, "--measure", "auc", "--json", "-", data, model, tmp_path / "p2")
    assert_exit(r, 0)
    assert json.loads(r.stdout)["n_rows"] == 120 and r.stderr.startswith(to_file.stdout)
    assert "AUC = " in r.stderr
    r = invoke(predict_main, "--json", "-", data, model, "-")
    assert_exit(r, 2)
