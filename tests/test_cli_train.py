"""llsvm-train and llsvm-predict end to end (docs/architecture.md sections 7 and 9, docs/formats.md).

The contract: a script that runs LIBLINEAR's `train`/`predict` keeps working with `llsvm-train`/`llsvm-predict`:
same option meanings, same output lines, same model file format, same exit codes. CliRunner runs the commands
in-process (exact stdout/stderr and exit codes); liblinear-official (LIBLINEAR 2.50's C library) is the reference
for formats, deterministic outputs (-s 2) and predictions; a few tests run the installed console scripts.
"""
import gzip
import json
import math
import os
import re
import subprocess
import sys

import numpy as np
import pytest
from click.testing import CliRunner
from conftest import assert_exit

import llsvm
from llsvm.models import load_model
from llsvm.cli.predict import main as predict_main
from llsvm.cli.train import main as train_main
from llsvm.solvers.trainer import cross_validation
from llsvm.solvers.trainer import train as llsvm_fit
from llsvm.models.linear import Model

import liblinear.liblinear as liblinear  # noqa: E402  (a test dependency: missing is a failure)
from liblinear import liblinearutil as llu  # noqa: E402

BIN = os.path.dirname(sys.executable)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "scripts"))
from children import wait_for  # noqa: E402
HEART = dict(rows=270, features=13, nnz=3378)        # data/sets.tsv
DNA = dict(rows=2000, features=180, nnz=91233, labels=[3, 1, 2])

# a small binary set that needs no shared data: 3 features, labels +1 / -1 (first row +1)
SMALL = (
    "1 1:0.5 2:1\n"
    "-1 1:-1 3:0.25\n"
    "1 2:2 3:-0.5\n"
    "-1 1:-0.75 2:-1\n"
    "1 1:1 2:0.5 3:0.5\n"
    "-1 2:-0.25 3:1\n"
)

BLOCK = r"[.*]*\noptimization finished, #iter = (\d+)\nObjective value = (-?\d+\.\d{6})\nnSV = (\d+)\n"
WARN_L1 = "\nWARNING: reaching max number of iterations\nUsing -s 2 may be faster (also see FAQ)\n\n"
WARN_L2 = "\nWARNING: reaching max number of iterations\nSwitching to use -s 2\n\n"
INIT_RE = re.compile(r"init f \d\.\d{3}e[+-]\d\d \|g\| \d\.\d{3}e[+-]\d\d")
ITER_RE = re.compile(r"iter [ \d]\d+ f \d\.\d{3}e[+-]\d\d \|g\| \d\.\d{3}e[+-]\d\d CG [ \d]{2}\d+ step_size "
                     r"\d\.\d\de[+-]\d\d ")
LOG2C_RE = re.compile(r"log2c=(.{7})\trate=(\S+)")


# -- helpers ----------------------------------------------------------------------------------------------------

@pytest.fixture
def runner():
    return CliRunner()


@pytest.fixture(scope="module")
def data(shared_plain):
    """heart_scale and dna.scale decompressed: {name: path}."""
    return {name: shared_plain(name) for name in ("heart_scale", "dna.scale")}


@pytest.fixture
def heart(data):
    return data["heart_scale"]


@pytest.fixture
def dna(data):
    return data["dna.scale"]


@pytest.fixture
def small(tmp_path):
    p = tmp_path / "small.txt"
    p.write_text(SMALL)
    return p


def run(runner, cmd, args, input=None):
    return runner.invoke(cmd, [str(a) for a in args], input=input)


def train(runner, *args, input=None):
    return run(runner, train_main, args, input)


def predict(runner, *args):
    return run(runner, predict_main, args)


def library_output(path, **kw):
    """(model, the exact text the library says) for llsvm.solvers.trainer.train on a file."""
    chunks = []
    model = llsvm_fit(str(path), say=chunks.append, **kw)
    return model, "".join(chunks)


_CALLBACKS = []      # keep LIBLINEAR print callbacks alive for the life of the process


def liblinear_train(path, options):
    """(LIBLINEAR model, everything LIBLINEAR's library printed) for `train options path`."""
    y, x = llu.svm_read_problem(str(path), return_scipy=True)
    out = []
    cb = liblinear.PRINT_STRING_FUN(lambda s: out.append(s.decode()))
    _CALLBACKS.append(cb)
    param = liblinear.parameter(options)
    param.print_func = cb
    model = llu.train(liblinear.problem(y, x), param)
    liblinear.liblinear.set_print_string_function(liblinear.ctypes_print_null)
    return model, "".join(out)


def liblinear_predict(test_path, model_path):
    """(labels, decision values, y) of LIBLINEAR's predict for a model file on a test file."""
    y, x = llu.svm_read_problem(str(test_path), return_scipy=True)
    m = llu.load_model(str(model_path))
    assert m is not None
    labels, _, values = llu.predict(y, x, m, "-q")
    return np.array(labels), np.array(values), y


def model_weights(text, solver_type, labels, nr_feature, bias, nr_w):
    """Check a model file's text is LIBLINEAR's format exactly; return its weights (w_size, nr_w)."""
    lines = text.split("\n")
    head = [f"solver_type {solver_type}", f"nr_class {len(labels)}", "label " + " ".join(map(str, labels)),
            f"nr_feature {nr_feature}", f"bias {bias}", "w"]
    assert lines[:6] == head
    assert lines[-1] == ""
    body = lines[6:-1]
    assert len(body) == nr_feature + (1 if float(bias) >= 0 else 0)
    for line in body:
        assert line.endswith(" ") and not line.endswith("  ")
        toks = line[:-1].split(" ")
        assert len(toks) == nr_w
        assert toks == ["%.17g" % float(t) for t in toks]
    return np.array([[float(t) for t in line.split()] for line in body])


SWITCH_L1 = "Switching to the smoothed-hinge primal Newton (until the duality gap <= 0.1 % of the primal)\n"
CERTIFY_L1 = "Going on by CG on the free dual variables (until the duality gap <= 0.1 % of the primal)\n"


def blocks(stdout):
    """[(n_iter, objective text, nSV, warning)] of a dual solver's stdout; the text must be exactly blocks."""
    pattern = re.compile(BLOCK + "(" + re.escape(WARN_L1) + "|" + re.escape(WARN_L2) + ")?")
    pos, out = 0, []
    while pos < len(stdout):
        m = pattern.match(stdout, pos)
        assert m, stdout[pos:pos + 200]
        dots = stdout[pos:m.start(1)].split("\n")[0]
        assert dots.count(".") == int(m.group(1)) // 10
        out.append((int(m.group(1)), m.group(2), int(m.group(3)), m.group(4)))
        pos = m.end()
        if m.group(4) == WARN_L2:           # -s 1 -> -s 2: LIBLINEAR's Newton lines follow
            newton = re.compile(r"(?:%s\n)(?:%s\n)*" % (INIT_RE.pattern, ITER_RE.pattern))
            n = newton.match(stdout, pos)
            assert n, stdout[pos:pos + 200]
            pos = n.end()
        if m.group(4) == WARN_L1 and stdout.startswith((SWITCH_L1, CERTIFY_L1), pos):   # -s 3 --certify
            sh = re.compile("(?:" + re.escape(SWITCH_L1) + r"(?:smoothed hinge delta = \S+: primal \S+ gap \S+\n)+|"
                            + re.escape(CERTIFY_L1) + r"(?:CG on the free variables, round \d+: primal \S+ gap \S+\n)+)"
                            r"primal \S+ dual \S+ relative gap \S+\n")
            n = sh.match(stdout, pos)
            assert n, stdout[pos:pos + 200]
            pos = n.end()
    return out


def newton_blocks(stdout):
    """The -s 2 output split into blocks, each an `init f` line followed by `iter` lines."""
    lines = stdout.split("\n")
    assert lines[-1] == ""
    out = []
    for line in lines[:-1]:
        if line.startswith("init f"):
            assert INIT_RE.fullmatch(line), line
            out.append([line])
        else:
            assert ITER_RE.fullmatch(line), line
            out[-1].append(line)
    return out


# -- training output ----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("solver,solver_type", [(1, "L2R_L2LOSS_SVC_DUAL"), (3, "L2R_L1LOSS_SVC_DUAL")])
def test_dual_output_lines_and_model_file(runner, heart, tmp_path, solver, solver_type):
    mfile = tmp_path / "out.model"
    jfile = tmp_path / "m.json"
    r = train(runner, "-s", solver, "--json", jfile, heart, mfile)
    assert_exit(r, 0)
    assert r.stderr == ""
    ref, text = library_output(heart, solver=solver)
    assert r.stdout == text
    [(n_iter, obj, nsv, warn)] = blocks(r.stdout)
    metrics = json.loads(jfile.read_text())
    assert (n_iter, nsv, warn) == (metrics["n_iter"], metrics["nSV"], None)
    # LIBLINEAR's "Objective value" is the dual minimization objective: minus llsvm's dual
    assert obj == "%f" % -metrics["dual"]
    # and it is LIBLINEAR's optimum up to the stopping tolerance
    _, ll_text = liblinear_train(heart, f"-s {solver}")
    [(_, ll_obj, ll_nsv, _)] = blocks(ll_text)
    assert abs(float(obj) - float(ll_obj)) <= 1e-3 * abs(float(ll_obj))
    assert abs(nsv - ll_nsv) <= 0.05 * ll_nsv
    W = model_weights(mfile.read_text(), solver_type, [1, -1], 13, "-1", 1)
    np.testing.assert_array_equal(W, ref.W)
    assert mfile.read_text() == ref.to_text()


@pytest.mark.parametrize("solver,solver_type", [(1, "L2R_L2LOSS_SVC_DUAL"), (3, "L2R_L1LOSS_SVC_DUAL")])
def test_dual_multiclass_one_block_per_class(runner, dna, tmp_path, solver, solver_type):
    mfile = tmp_path / "dna.model"
    r = train(runner, "-s", solver, "-B", "1", dna, mfile)
    assert_exit(r, 0)
    ref, text = library_output(dna, solver=solver, bias=1.0)
    assert r.stdout == text
    assert len(blocks(r.stdout)) == 3
    W = model_weights(mfile.read_text(), solver_type, DNA["labels"], 180, "1", 3)
    np.testing.assert_array_equal(W, ref.W)
    # LIBLINEAR's model of the same run has the same header
    ll, _ = liblinear_train(dna, f"-s {solver} -B 1")
    llu.save_model(str(tmp_path / "ll.model"), ll)
    assert (tmp_path / "ll.model").read_text().split("\n")[:6] == mfile.read_text().split("\n")[:6]


def test_primal_newton_output_equals_liblinear(runner, heart, tmp_path):
    """-s 2 is deterministic: on heart_scale the `init f`/`iter` lines are LIBLINEAR's, character for character."""
    r = train(runner, "-s", "2", heart, tmp_path / "m")
    assert_exit(r, 0)
    ll_model, ll_text = liblinear_train(heart, "-s 2")
    assert r.stdout == ll_text
    [blk] = newton_blocks(r.stdout)
    assert blk[0] == "init f 2.700e+02 |g| 5.054e+02"    # f(0) = C l, from the data alone
    llu.save_model(str(tmp_path / "ll"), ll_model)
    ours = load_model(tmp_path / "m")
    theirs = load_model(tmp_path / "ll")
    assert ours.solver_type == theirs.solver_type == "L2R_L2LOSS_SVC"
    np.testing.assert_allclose(ours.W, theirs.W, rtol=0, atol=1e-12)


def test_primal_newton_multiclass_blocks(runner, dna, tmp_path):
    r = train(runner, "-s", "2", dna, tmp_path / "m")
    assert_exit(r, 0)
    blks = newton_blocks(r.stdout)
    assert len(blks) == 3
    assert all(len(b) >= 2 for b in blks)
    assert [int(b[i].split()[1]) for b in blks for i in range(1, len(b))] == \
        [i for b in blks for i in range(1, len(b))]
    _, ll_text = liblinear_train(dna, "-s 2")
    # the same first line per class (f and |g| at w = 0 depend on the data only)
    assert [b[0] for b in blks] == [b[0] for b in newton_blocks(ll_text)]


def test_quiet_prints_nothing_and_writes_same_model(runner, small, tmp_path):
    r1 = train(runner, small, tmp_path / "a.model")
    r2 = train(runner, "-q", small, tmp_path / "b.model")
    assert_exit(r1, 0)
    assert_exit(r2, 0)
    assert r1.stdout.endswith("\n") and "optimization finished, #iter = " in r1.stdout
    assert (r2.stdout, r2.stderr) == ("", "")
    assert (tmp_path / "a.model").read_bytes() == (tmp_path / "b.model").read_bytes()
    model_weights((tmp_path / "b.model").read_text(), "L2R_L2LOSS_SVC_DUAL", [1, -1], 3, "-1", 1)


def test_default_model_name_in_current_directory(runner, small, tmp_path, monkeypatch):
    work = tmp_path / "cwd"
    work.mkdir()
    monkeypatch.chdir(work)
    r = train(runner, "-q", small)
    assert_exit(r, 0)
    assert sorted(os.listdir(work)) == ["small.txt.model"]
    r = train(runner, "-q", "-s", "3", os.path.relpath(small, work))     # ../small.txt: basename still
    assert_exit(r, 0)
    assert sorted(os.listdir(work)) == ["small.txt.model"]
    assert (work / "small.txt.model").read_text().startswith("solver_type L2R_L1LOSS_SVC_DUAL\nnr_class 2\n")


def test_default_model_name_absolute_path(runner, heart, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    r = train(runner, "-q", heart)
    assert_exit(r, 0)
    assert os.listdir(tmp_path) == ["heart_scale.model"]
    assert (tmp_path / "heart_scale.model").read_text() == llsvm_fit(str(heart), solver=1).to_text()


# -- cross validation and the C search -----------------------------------------------------------------------------

def test_cross_validation_lines_and_no_model(runner, heart, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    r = train(runner, "-v", "5", heart)
    assert_exit(r, 0)
    lines = r.stdout.split("\n")
    cv = lines[-2]
    body = "\n".join(lines[:-2]) + "\n"
    assert len(blocks(body)) == 5
    from llsvm.params import Params
    target = cross_validation(llsvm.read_dataset(heart), 5, params=Params(solver=1))
    y = llsvm.read_dataset(heart).y
    acc = 100.0 * float((target == y).sum()) / y.size
    assert cv == "Cross Validation Accuracy = %g%%" % acc
    assert 78.0 <= acc <= 88.0
    assert os.listdir(tmp_path) == []
    # -q: LIBLINEAR prints the accuracy with printf, so it stays
    r = train(runner, "-q", "-v", "5", heart)
    assert_exit(r, 0)
    assert r.stdout == cv + "\n"
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("n", ["1", "0", "-3"])
def test_cross_validation_needs_two_folds(runner, small, n):
    r = train(runner, "-v", n, small)
    assert_exit(r, 2)
    assert r.stderr.rstrip("\n").endswith("n-fold cross validation: n must >= 2")


def _max_sq_norm(path):
    X = llsvm.read_dataset(path).to_csr()
    return float(X.multiply(X).sum(axis=1).max()), X.shape[0]


def check_search(stdout, start_log2c, quiet=False, folds=5):
    lines = stdout.split("\n")
    assert lines[0] == f"Doing parameter search with {folds}-fold cross validation."
    assert lines[-1] == ""
    m = re.fullmatch(r"Best C = (\S+)  CV accuracy = (\S+)%", lines[-2])
    assert m, lines[-2]
    if quiet:
        assert len(lines) == 3
        return m.group(1), m.group(2)
    steps = lines[1:-2]
    warned = steps[-1] == "WARNING: maximum C reached."
    if warned:
        steps = steps[:-1]
    parsed = [LOG2C_RE.fullmatch(s) for s in steps]
    assert all(parsed), steps
    log2c = [float(p.group(1)) for p in parsed]
    assert [p.group(1) for p in parsed] == ["%7.2f" % v for v in log2c]
    rates = [p.group(2) for p in parsed]
    assert log2c == [start_log2c + k for k in range(len(log2c))]
    assert log2c[-1] <= 10
    if warned:
        assert log2c[-1] == 10
    values = [float(x) for x in rates]
    best = values.index(max(values))        # the first C reaching the best rate
    assert m.group(1) == "%g" % 2.0 ** log2c[best]
    assert m.group(2) == rates[best]
    return m.group(1), m.group(2)


def test_parameter_search_default_solver(runner, heart, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    r = train(runner, "-C", heart)
    assert_exit(r, 0)
    assert r.stderr == "Solver not specified. Using -s 2\n"
    mx, l = _max_sq_norm(heart)
    start = math.floor(math.log2(1.0 / (2 * l * mx)))
    assert start == -13
    best = check_search(r.stdout, start)
    assert os.listdir(tmp_path) == []
    r = train(runner, "-C", "-q", heart)
    assert_exit(r, 0)
    assert check_search(r.stdout, start, quiet=True) == best
    # fprintf(stderr) in LIBLINEAR, which its -q leaves; llsvm's -q silences everything but errors (issue 43)
    assert r.stderr == ""


@pytest.mark.parametrize("solver,factor", [("3", 1), ("1", 2)])
def test_parameter_search_dual_solvers(runner, heart, solver, factor):
    """llsvm extends LIBLINEAR's -C to -s 1 and -s 3 (warm-started in the dual)."""
    r = train(runner, "-C", "-s", solver, heart)
    assert_exit(r, 0)
    assert r.stderr == ""
    mx, l = _max_sq_norm(heart)
    best_c, best_rate = check_search(r.stdout, math.floor(math.log2(1.0 / (factor * l * mx))))
    assert 80.0 <= float(best_rate) <= 90.0


def test_parameter_search_start_c_and_folds(runner, heart):
    r = train(runner, "-C", "-s", "2", "-c", "0.5", "-v", "3", heart)
    assert_exit(r, 0)
    check_search(r.stdout, -1, folds=3)


def test_parameter_search_unsupported_solver(runner, small):
    r = train(runner, "-C", "-s", "5", small)
    assert_exit(r, 1)         # LIBLINEAR exits 1 here too
    # LIBLINEAR's -s 0, -s 2 and -s 11, and llsvm's dual -s 1 and -s 3 (warm-started in the dual)
    assert r.stderr == "ERROR: Warm-start parameter search only available for -s 0, -s 1, -s 2, -s 3 and -s 11\n"


# -- errors -------------------------------------------------------------------------------------------------------

def test_missing_input(runner, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    r = train(runner, "no-such-file")
    assert_exit(r, 1)
    assert (r.stdout, r.stderr) == ("", "can't open input file no-such-file\n")
    r = train(runner, tmp_path)            # a directory cannot be read either
    assert_exit(r, 1)
    assert r.stderr == f"can't open input file {tmp_path}\n"
    assert os.listdir(tmp_path) == []


def test_malformed_input_leaves_no_model(runner, write_bytes, tmp_path, monkeypatch):
    bad = write_bytes(b"1 1:1\n-1 2:x\n", "bad.txt")
    work = tmp_path / "w"
    work.mkdir()
    monkeypatch.chdir(work)
    r = train(runner, bad)
    assert_exit(r, 1)
    lines = r.stderr.split("\n")
    assert lines[0] == "Wrong input format at line 2"
    assert lines[1] == f"{bad}: line 2, column 6: value is not a number (found 'x')"
    assert r.stdout == ""
    assert os.listdir(work) == []
    # an existing model file of that name is left as it was
    (work / "bad.txt.model").write_text("old")
    r = train(runner, bad)
    assert_exit(r, 1)
    assert os.listdir(work) == ["bad.txt.model"]
    assert (work / "bad.txt.model").read_text() == "old"


def test_empty_input_is_an_error(runner, write_bytes, tmp_path):
    empty = write_bytes(b"", "empty.txt")
    r = train(runner, empty, tmp_path / "m")
    assert_exit(r, 1)
    assert r.stderr.split("\n")[0] == "Wrong input format at line 1"
    assert "empty input" in r.stderr
    assert not (tmp_path / "m").exists()


def test_unwritable_model_path(runner, small, tmp_path):
    target = tmp_path / "no" / "such" / "dir.model"
    r = train(runner, "-q", small, target)
    assert_exit(r, 1)
    assert r.stderr == f"can't save model to file {target}\n"
    assert not (tmp_path / "no").exists()


@pytest.mark.parametrize("args,message", [
    (["-c", "0"], "ERROR: C <= 0\n"),
    (["-c", "-2"], "ERROR: C <= 0\n"),
    (["-e", "-1"], "ERROR: eps <= 0\n"),
    (["-e", "0"], "ERROR: eps <= 0\n"),
    (["-c", "0", "-e", "-1"], "ERROR: eps <= 0\n"),          # LIBLINEAR checks eps first
    (["-s", "99"], "ERROR: unknown solver type\n"),
    (["-R"], "ERROR: To not regularize bias, must specify -B 1 along with -R\n"),
    (["-R", "-B", "2", "-s", "2"], "ERROR: To not regularize bias, must specify -B 1 along with -R\n"),
    (["-R", "-B", "1", "-s", "1"], "ERROR: -R option supported only for solver L2R_LR, L2R_L2LOSS_SVC, "
                                   "L1R_L2LOSS_SVC, L1R_LR, and L2R_L2LOSS_SVR\n"),
])
def test_parameter_errors(runner, small, tmp_path, args, message):
    r = train(runner, *args, small, tmp_path / "m")
    assert_exit(r, 1)
    assert (r.stdout, r.stderr) == ("", message)
    assert not (tmp_path / "m").exists()


@pytest.mark.parametrize("solver", ["8", "10", "14", "22", "99", "-1", "foo", "local"])
def test_unknown_solver(runner, small, tmp_path, solver):
    r = train(runner, "-s", solver, small, tmp_path / "m")
    assert_exit(r, 1)
    assert r.stderr.startswith("ERROR: unknown solver type")
    assert r.stderr.count("\n") == 1
    assert not (tmp_path / "m").exists()


def test_unknown_option_is_usage_error(runner, small):
    r = train(runner, "-x", "1", small)
    assert_exit(r, 2)
    assert "No such option" in r.stderr and "-x" in r.stderr
    r = train(runner)              # no arguments: the compact usage on stderr (issue 48), still exit 2
    assert_exit(r, 2)
    assert "training_set_file" in r.stderr.splitlines()[0]


@pytest.mark.parametrize("opt", [["--memory", "64M"], ["--tmp-dir", "/tmp"]])
def test_out_of_core_options_refused_for_in_memory_solvers(runner, small, tmp_path, opt):
    r = train(runner, *opt, "-s", "3", small, tmp_path / "m")
    assert_exit(r, 1)
    assert r.stderr == f"ERROR: {opt[0]} applies only to -s llsvm, -s streamsvm and -s bm, not to -s 3\n"
    assert not (tmp_path / "m").exists()


def test_class_weights_like_liblinear(runner, heart, tmp_path):
    r = train(runner, "-q", "-s", "2", "-w1", "5", "-w-1", "2", heart, tmp_path / "w.model")
    assert_exit(r, 0)
    r = train(runner, "-q", "-s", "2", heart, tmp_path / "plain.model")
    assert_exit(r, 0)
    ours = load_model(tmp_path / "w.model")
    plain = load_model(tmp_path / "plain.model")
    ll, _ = liblinear_train(heart, "-s 2 -w1 5 -w-1 2")
    llu.save_model(str(tmp_path / "ll.model"), ll)
    theirs = load_model(tmp_path / "ll.model")
    np.testing.assert_allclose(ours.W, theirs.W, rtol=0, atol=1e-12)
    assert np.abs(ours.W - plain.W).max() > 0.05
    # the dual solver takes them too: C+ = 5, C- = 2 gives a model unlike the unweighted one
    r = train(runner, "-q", "-w1", "5", "-w-1", "2", heart, tmp_path / "w1.model")
    assert_exit(r, 0)
    ref = llsvm_fit(str(heart), solver=1, weights=[(1, 5.0), (-1, 2.0)])
    assert (tmp_path / "w1.model").read_text() == ref.to_text()
    assert np.abs(ref.W - llsvm_fit(str(heart), solver=1).W).max() > 0.05


def test_weight_for_unknown_label_warns(runner, small, tmp_path):
    r = train(runner, "-w7", "2", small, tmp_path / "m")
    assert_exit(r, 0)
    assert r.stderr == "WARNING: class label 7 specified in weight is not found\n"
    assert_exit(train(runner, "-q", small, tmp_path / "plain"), 0)
    assert (tmp_path / "m").read_bytes() == (tmp_path / "plain").read_bytes()
    # LIBLINEAR prints it with fprintf(stderr) even with -q; llsvm's -q silences everything but errors (issue 43)
    r = train(runner, "-q", "-w7", "2", "-w1", "1", small, tmp_path / "q")
    assert_exit(r, 0)
    assert (r.stdout, r.stderr) == ("", "")
    assert (tmp_path / "q").read_bytes() == (tmp_path / "plain").read_bytes()


def test_weight_option_needs_a_value(runner, small):
    r = train(runner, small, "-w1")
    assert_exit(r, 2)


# -- long options -------------------------------------------------------------------------------------------------

def test_threads_give_identical_model(runner, dna, tmp_path):
    r1 = train(runner, "--threads", "1", dna, tmp_path / "t1")
    r2 = train(runner, "--threads", "2", dna, tmp_path / "t2")
    assert_exit(r1, 0)
    assert_exit(r2, 0)
    assert r1.stdout == r2.stdout
    assert len(blocks(r1.stdout)) == 3
    assert (tmp_path / "t1").read_bytes() == (tmp_path / "t2").read_bytes()
    c1 = train(runner, "-q", "-v", "4", "--threads", "1", dna)
    c2 = train(runner, "-q", "-v", "4", "--threads", "3", dna)
    assert c1.stdout == c2.stdout
    assert c1.stdout.startswith("Cross Validation Accuracy = ")


def test_seed(runner, heart, tmp_path):
    for name, seed in (("a", 1), ("b", 1), ("c", 2), ("d", 12345)):
        assert_exit(train(runner, "-q", "--seed", seed, heart, tmp_path / name), 0)
    files = {n: (tmp_path / n).read_bytes() for n in "abcd"}
    assert files["a"] == files["b"]
    assert files["a"] != files["c"] and files["a"] != files["d"] and files["c"] != files["d"]
    # the default seed is 1
    assert_exit(train(runner, "-q", heart, tmp_path / "e"), 0)
    assert (tmp_path / "e").read_bytes() == files["a"]


def test_max_iter_switches_to_primal(runner, heart, tmp_path):
    r = train(runner, "--max-iter", "2", heart, tmp_path / "m")
    assert_exit(r, 0)
    head, sep, tail = r.stdout.partition(WARN_L2)
    assert sep
    [(n_iter, _, _, _)] = blocks(head)
    assert n_iter == 2
    assert head.startswith("\noptimization finished, #iter = 2\n")      # no dots before 10 iterations
    newton = newton_blocks(tail)
    assert len(newton) == 1 and len(newton[0]) >= 2
    # the model is then the -s 2 optimum, written as -s 1's solver type
    m = load_model(tmp_path / "m")
    assert m.solver_type == "L2R_L2LOSS_SVC_DUAL"
    r3 = train(runner, "--max-iter", "2", "-s", "3", heart, tmp_path / "m3")
    assert_exit(r3, 0)
    [(n_iter, _, _, warn)] = blocks(r3.stdout)
    assert (n_iter, warn) == (2, WARN_L1) and SWITCH_L1 not in r3.stdout   # LIBLINEAR's point (issue 43)
    r3c = train(runner, "--max-iter", "2", "-s", "3", "--certify", heart, tmp_path / "m3c")
    assert_exit(r3c, 0)
    [(n_iter, _, _, warn)] = blocks(r3c.stdout)
    assert (n_iter, warn) == (2, WARN_L1) and CERTIFY_L1 in r3c.stdout     # then on to a certified optimum
    # the warnings are LIBLINEAR's info(): -q silences them
    rq = train(runner, "-q", "--max-iter", "2", heart, tmp_path / "mq")
    assert_exit(rq, 0)
    assert (rq.stdout, rq.stderr) == ("", "")
    assert (tmp_path / "mq").read_bytes() == (tmp_path / "m").read_bytes()


def test_json_metrics(runner, heart, tmp_path):
    jfile = tmp_path / "m.json"
    r = train(runner, "-s", "1", "--json", jfile, heart, tmp_path / "m")
    assert_exit(r, 0)
    m = json.loads(jfile.read_text())
    keys = {"solver", "n_rows", "n_features", "nnz", "load_seconds", "train_seconds", "n_iter", "primal", "dual",
            "gap", "max_violation", "nSV", "converged", "peak_rss_mb"}
    assert keys <= set(m)
    assert m["solver"] == "L2R_L2LOSS_SVC_DUAL"
    assert (m["n_rows"], m["n_features"], m["nnz"]) == (HEART["rows"], HEART["features"], HEART["nnz"])
    [(n_iter, obj, nsv, _)] = blocks(r.stdout)
    assert (m["n_iter"], m["nSV"]) == (n_iter, nsv)
    assert m["converged"] is True
    assert 0 <= m["load_seconds"] < 10 and 0 < m["train_seconds"] < 10
    assert 0 < m["dual"] <= m["primal"]
    assert m["gap"] == pytest.approx(m["primal"] - m["dual"], abs=1e-9)
    assert 0 <= m["gap"] <= 1e-2 * m["primal"]
    assert 0 <= m["max_violation"] <= 0.1          # LIBLINEAR's default eps of -s 1
    assert 10 < m["peak_rss_mb"] < 4096
    assert not [f for f in os.listdir(tmp_path) if f.endswith(".tmp")]


def test_json_unwritable_path_is_a_clean_error(runner, small, tmp_path):
    target = tmp_path / "no" / "dir" / "m.json"
    r = train(runner, "-q", "--json", target, small, tmp_path / "m")
    assert_exit(r, 1)
    assert str(target) in r.stderr


# -- inputs -------------------------------------------------------------------------------------------------------

def test_text_gzip_xz_stdin_binary_give_same_model(runner, heart, shared_data, tmp_path):
    raw = heart.read_bytes()
    gz = tmp_path / "heart.gz"
    gz.write_bytes(gzip.compress(raw))
    binf = tmp_path / "heart.bin"
    llsvm.write_binary(str(heart), str(binf))
    assert llsvm.file_kind(str(binf)) == "binary"
    outs = {}
    for name, src, inp in (("text", heart, None), ("gzip", gz, None), ("xz", shared_data / "heart_scale.xz", None),
                           ("stdin", "-", raw), ("binary", binf, None)):
        r = train(runner, "-s", "3", "-B", "1", src, tmp_path / f"{name}.model", input=inp)
        assert_exit(r, 0)
        outs[name] = (r.stdout, (tmp_path / f"{name}.model").read_bytes())
    assert len(set(outs.values())) == 1
    model_weights(outs["text"][1].decode(), "L2R_L1LOSS_SVC_DUAL", [1, -1], 13, "1", 1)


def test_stdin_default_model_name(runner, small, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    r = train(runner, "-q", "-", input=small.read_bytes())
    assert_exit(r, 0)
    assert (tmp_path / "stdin.model").read_bytes() == llsvm_fit(str(small)).to_text().encode()


def test_stdin_through_a_real_pipe(heart, tmp_path):
    exe = os.path.join(BIN, "llsvm-train")
    with open(heart, "rb") as f:
        p = subprocess.run([exe, "-q", "-", str(tmp_path / "pipe.model")], stdin=f, capture_output=True,
                           timeout=600)
    assert (p.returncode, p.stdout, p.stderr) == (0, b"", b"")
    p = subprocess.run(f"cat '{heart}' | '{exe}' -q - '{tmp_path / 'cat.model'}'", shell=True,
                       capture_output=True, timeout=600)
    assert p.returncode == 0
    expected = llsvm_fit(str(heart)).to_text().encode()
    assert (tmp_path / "pipe.model").read_bytes() == expected
    assert (tmp_path / "cat.model").read_bytes() == expected


# -- llsvm-predict ------------------------------------------------------------------------------------------------

def test_predict_labels_and_accuracy_like_liblinear(runner, dna, tmp_path):
    mfile, out = tmp_path / "m", tmp_path / "out"
    assert_exit(train(runner, "-q", dna, mfile), 0)
    r = predict(runner, dna, mfile, out)
    assert_exit(r, 0)
    labels, _, y = liblinear_predict(dna, mfile)
    correct = int((labels == y).sum())
    assert r.stdout == "Accuracy = %g%% (%d/%d)\n" % (100.0 * correct / y.size, correct, y.size)
    assert r.stderr == ""
    assert out.read_text() == "".join("%.17g\n" % v for v in labels)
    assert set(out.read_text().split()) == {"1", "2", "3"}
    # -q: nothing printed, the same output file
    r = predict(runner, "-q", dna, mfile, tmp_path / "out2")
    assert_exit(r, 0)
    assert (r.stdout, r.stderr) == ("", "")
    assert (tmp_path / "out2").read_bytes() == out.read_bytes()
    r = predict(runner, "-b", "0", dna, mfile, tmp_path / "out3")
    assert_exit(r, 0)
    assert (tmp_path / "out3").read_bytes() == out.read_bytes()


def test_predict_accuracy_exact_small(runner, small, tmp_path):
    """A hand-made model: w = (1, 0, 0) predicts by the sign of feature 1 (0 gives label[1] = -1): row 3 wrong."""
    m = Model("L2R_L2LOSS_SVC_DUAL", 2, [1, -1], 3, -1.0, np.array([[1.0], [0.0], [0.0]]))
    m.save(tmp_path / "m")
    r = predict(runner, small, tmp_path / "m", tmp_path / "out")
    assert_exit(r, 0)
    assert r.stdout == "Accuracy = 83.3333% (5/6)\n"
    assert (tmp_path / "out").read_text() == "1\n-1\n-1\n-1\n1\n-1\n"


def test_probability_refused_for_svm_models(runner, small, tmp_path):
    assert_exit(train(runner, "-q", small, tmp_path / "m"), 0)
    r = predict(runner, "-b", "1", small, tmp_path / "m", tmp_path / "out")
    assert_exit(r, 1)
    assert (r.stdout, r.stderr) == ("", "probability output is only supported for logistic regression\n")
    assert not (tmp_path / "out").exists()
    r = predict(runner, "-b", "2", small, tmp_path / "m", tmp_path / "out")
    assert_exit(r, 2)


def test_probability_output_for_logistic_regression_model(runner, heart, tmp_path):
    """A LIBLINEAR -s 0 model with -b 1: LIBLINEAR writes a `labels 1 -1` line, then `label p1 p2` per row."""
    ll, _ = liblinear_train(heart, "-s 0")
    llu.save_model(str(tmp_path / "lr.model"), ll)
    y, x = llu.svm_read_problem(str(heart), return_scipy=True)
    labels, _, probs = llu.predict(y, x, ll, "-b 1 -q")
    r = predict(runner, "-b", "1", heart, tmp_path / "lr.model", tmp_path / "out")
    assert_exit(r, 0)
    expected = "labels 1 -1\n" + "".join("%g %g %g\n" % (lab, p[0], p[1]) for lab, p in zip(labels, probs))
    assert (tmp_path / "out").read_text() == expected


def test_predict_missing_files(runner, small, tmp_path):
    assert_exit(train(runner, "-q", small, tmp_path / "m"), 0)
    out = tmp_path / "out"
    r = predict(runner, tmp_path / "nope.txt", tmp_path / "m", out)
    assert_exit(r, 1)
    assert r.stderr == f"can't open input file {tmp_path / 'nope.txt'}\n"
    assert not out.exists()
    r = predict(runner, small, tmp_path / "nope.model", out)
    assert_exit(r, 1)
    assert r.stderr == f"can't open model file {tmp_path / 'nope.model'}\n"
    assert not out.exists()
    (tmp_path / "bad.model").write_text("solver_type NOPE\nnr_class 2\n")
    r = predict(runner, small, tmp_path / "bad.model", out)
    assert_exit(r, 1)
    assert r.stderr.startswith("Error: ") and "bad.model" in r.stderr
    assert not out.exists()
    assert sorted(os.listdir(tmp_path)) == ["bad.model", "m", "small.txt"]


def test_predict_unwritable_output(runner, small, tmp_path):
    assert_exit(train(runner, "-q", small, tmp_path / "m"), 0)
    target = tmp_path / "no" / "such" / "out"
    r = predict(runner, small, tmp_path / "m", target)
    assert_exit(r, 1)
    assert r.stderr == f"can't open output file {target}\n"
    assert not (tmp_path / "no").exists()


def test_predict_malformed_test_file_leaves_no_output(runner, small, write_bytes, tmp_path):
    assert_exit(train(runner, "-q", small, tmp_path / "m"), 0)
    bad = write_bytes(b"1 1:1\n1 1:1\n-1 3:zz\n", "bad.txt")
    (tmp_path / "out").write_text("old")
    r = predict(runner, bad, tmp_path / "m", tmp_path / "out")
    assert_exit(r, 1)
    assert r.stderr.split("\n")[0] == "Wrong input format at line 3"
    assert (tmp_path / "out").read_text() == "old"
    assert not [f for f in os.listdir(tmp_path) if f.endswith(".tmp")]


def test_features_beyond_the_model_are_ignored(runner, heart, tmp_path):
    mfile = tmp_path / "m"
    assert_exit(train(runner, "-q", "-s", "3", "-B", "1", heart, mfile), 0)
    rows = heart.read_text().splitlines()
    wide = tmp_path / "wide.txt"
    wide.write_text("".join(f"{r.rstrip()} 14:5 15:-7.5 1000:3\n" for r in rows))
    r1 = predict(runner, "--decision-values", tmp_path / "d1", heart, mfile, tmp_path / "o1")
    r2 = predict(runner, "--decision-values", tmp_path / "d2", wide, mfile, tmp_path / "o2")
    assert_exit(r1, 0)
    assert_exit(r2, 0)
    assert r1.stdout == r2.stdout
    assert (tmp_path / "o1").read_bytes() == (tmp_path / "o2").read_bytes()
    assert (tmp_path / "d1").read_bytes() == (tmp_path / "d2").read_bytes()
    labels, values, _ = liblinear_predict(wide, mfile)
    assert (tmp_path / "o2").read_text() == "".join("%.17g\n" % v for v in labels)
    dec = np.loadtxt(tmp_path / "d2")
    np.testing.assert_allclose(dec, values[:, 0], rtol=1e-13, atol=1e-13)


def test_bias_is_appended(runner, heart, tmp_path):
    mfile = tmp_path / "m"
    assert_exit(train(runner, "-q", "-B", "1", heart, mfile), 0)
    model = load_model(mfile)
    assert model.bias == 1.0 and model.W.shape == (14, 1) and model.W[13, 0] != 0.0
    r = predict(runner, "--decision-values", tmp_path / "dec", heart, mfile, tmp_path / "out")
    assert_exit(r, 0)
    dec = np.loadtxt(tmp_path / "dec")
    X = llsvm.read_dataset(heart).to_csr()
    np.testing.assert_allclose(dec, X @ model.W[:13, 0] + model.W[13, 0], rtol=1e-12, atol=1e-12)
    labels, values, _ = liblinear_predict(heart, mfile)
    np.testing.assert_allclose(dec, values[:, 0], rtol=1e-13, atol=1e-13)
    assert (tmp_path / "out").read_text() == "".join("%.17g\n" % v for v in labels)


def test_decision_values_binary_and_multiclass(runner, heart, dna, tmp_path):
    for name, path, ncol in (("heart", heart, 1), ("dna", dna, 3)):
        mfile = tmp_path / f"{name}.model"
        assert_exit(train(runner, "-q", path, mfile), 0)
        dfile = tmp_path / f"{name}.dec"
        r = predict(runner, "-q", "--decision-values", dfile, path, mfile, tmp_path / f"{name}.out")
        assert_exit(r, 0)
        lines = dfile.read_text().split("\n")
        assert lines[-1] == ""
        rows = [[float(t) for t in line.split(" ")] for line in lines[:-1]]
        assert all(len(row) == ncol for row in rows)
        model = load_model(mfile)
        expected = model.decision_function(llsvm.read_dataset(path))
        np.testing.assert_array_equal(np.array(rows).reshape(expected.shape), expected)
        _, values, _ = liblinear_predict(path, mfile)
        np.testing.assert_allclose(np.array(rows), values, rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize("options", ["-s 1", "-s 3 -B 1", "-s 2 -c 4", "-s 4", "-s 5 -B 1", "-s 7"])
def test_liblinear_model_predicts_identically(runner, dna, tmp_path, options):
    ll, _ = liblinear_train(dna, options)
    mfile = tmp_path / "ll.model"
    llu.save_model(str(mfile), ll)
    y, x = llu.svm_read_problem(str(dna), return_scipy=True)
    labels, _, values = llu.predict(y, x, ll, "-q")
    correct = int((np.array(labels) == y).sum())
    r = predict(runner, "--decision-values", tmp_path / "dec", dna, mfile, tmp_path / "out")
    assert_exit(r, 0)
    assert r.stdout == "Accuracy = %g%% (%d/%d)\n" % (100.0 * correct / y.size, correct, y.size)
    assert (tmp_path / "out").read_text() == "".join("%.17g\n" % v for v in labels)
    np.testing.assert_allclose(np.loadtxt(tmp_path / "dec"), np.array(values), rtol=1e-13, atol=1e-13)


def test_regression_model_lines(runner, heart, tmp_path):
    """A LIBLINEAR -s 11 model: the two regression lines of LIBLINEAR's predict, and the values."""
    ll, _ = liblinear_train(heart, "-s 11")
    llu.save_model(str(tmp_path / "svr.model"), ll)
    y, x = llu.svm_read_problem(str(heart), return_scipy=True)
    labels, (_, mse, scc), _ = llu.predict(y, x, ll, "-q")
    r = predict(runner, heart, tmp_path / "svr.model", tmp_path / "out")
    assert_exit(r, 0)
    assert r.stdout == ("Mean squared error = %g (regression)\nSquared correlation coefficient = %g (regression)\n"
                        % (mse, scc))
    np.testing.assert_allclose(np.loadtxt(tmp_path / "out"), labels, rtol=1e-13, atol=1e-13)


def test_single_class_model_predicts_its_label(runner, write_bytes, tmp_path):
    """Training data with one class gives nr_class 1 (as LIBLINEAR); predicting returns that label."""
    one = write_bytes(b"1 1:1 2:0.5\n1 1:-1\n1 2:2\n", "one.txt")
    r = train(runner, "-q", one, tmp_path / "m")
    assert_exit(r, 0)
    assert (tmp_path / "m").read_text().startswith("solver_type L2R_L2LOSS_SVC_DUAL\nnr_class 1\nlabel 1\n")
    r = predict(runner, one, tmp_path / "m", tmp_path / "out")
    assert_exit(r, 0)
    assert r.stdout == "Accuracy = 100% (3/3)\n"
    assert (tmp_path / "out").read_text() == "1\n1\n1\n"


# -- the installed commands ---------------------------------------------------------------------------------------

def test_installed_commands_train_then_predict_gzip(heart, tmp_path):
    gz = tmp_path / "heart.gz"
    gz.write_bytes(gzip.compress(heart.read_bytes()))
    train_exe, predict_exe = os.path.join(BIN, "llsvm-train"), os.path.join(BIN, "llsvm-predict")
    p = subprocess.run([train_exe, "-s", "3", str(gz)], cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr
    assert p.stderr == ""
    assert len(blocks(p.stdout)) == 1
    mfile = tmp_path / "heart.gz.model"
    assert mfile.read_text() == llsvm_fit(str(heart), solver=3).to_text()
    p = subprocess.run([predict_exe, str(gz), str(mfile), str(tmp_path / "out")], capture_output=True, text=True,
                       timeout=600)
    assert p.returncode == 0, p.stderr
    labels, _, y = liblinear_predict(heart, mfile)
    correct = int((labels == y).sum())
    assert p.stdout == "Accuracy = %g%% (%d/%d)\n" % (100.0 * correct / y.size, correct, y.size)
    assert (tmp_path / "out").read_text() == "".join("%.17g\n" % v for v in labels)
    # exit codes: 1 for LIBLINEAR's errors, 2 for usage errors
    p = subprocess.run([train_exe, str(tmp_path / "missing")], capture_output=True, text=True, timeout=600)
    assert (p.returncode, p.stderr) == (1, f"can't open input file {tmp_path / 'missing'}\n")
    p = subprocess.run([train_exe, "-v", "1", str(gz)], capture_output=True, text=True, timeout=600)
    assert p.returncode == 2 and "n-fold cross validation: n must >= 2" in p.stderr
    p = subprocess.run([predict_exe, str(gz), str(tmp_path / "missing.model"), str(tmp_path / "o")],
                       capture_output=True, text=True, timeout=600)
    assert (p.returncode, p.stderr) == (1, f"can't open model file {tmp_path / 'missing.model'}\n")
    assert not (tmp_path / "o").exists()


def test_jobs_run_many_commands_in_one_process(heart, tmp_path):
    """llsvm-train --jobs FILE (issue 43: the start-up paid once): every line runs as the command alone would (the
    same model bytes, the same stdout), quotes and comments as a shell reads them, the command's name allowed first;
    llsvm-predict --jobs likewise."""
    exe = os.path.join(BIN, "llsvm-train")
    jobs = tmp_path / "jobs.txt"
    jobs.write_text(f"# models\nllsvm-train -q '{heart}' '{tmp_path / 'a b.model'}'\n\n"
                    f"-s 0 -c 2 '{heart}' {tmp_path / 'lr.model'}   # logistic\n-s 3 -v 3 '{heart}'\n")
    p = subprocess.run([exe, "--jobs", str(jobs)], capture_output=True, text=True, timeout=600)
    assert p.returncode == 0 and p.stderr == ""
    alone = [subprocess.run([exe, *args], capture_output=True, text=True, timeout=600, cwd=tmp_path)
             for args in (["-q", str(heart), "a.model"], ["-s", "0", "-c", "2", str(heart), "lr2.model"],
                          ["-s", "3", "-v", "3", str(heart)])]
    assert p.stdout == "".join(r.stdout for r in alone)
    assert (tmp_path / "a b.model").read_bytes() == (tmp_path / "a.model").read_bytes()
    assert (tmp_path / "lr.model").read_bytes() == (tmp_path / "lr2.model").read_bytes()
    pexe = os.path.join(BIN, "llsvm-predict")
    p = subprocess.run([pexe, "--jobs=-"], input=f"'{heart}' '{tmp_path / 'a b.model'}' {tmp_path / 'out1'}\n",
                       capture_output=True, text=True, timeout=600)
    q = subprocess.run([pexe, str(heart), str(tmp_path / "a.model"), str(tmp_path / "out2")], capture_output=True,
                       text=True, timeout=600)
    assert (p.returncode, p.stdout, p.stderr) == (0, q.stdout, "")
    assert (tmp_path / "out1").read_bytes() == (tmp_path / "out2").read_bytes()


def test_jobs_stop_at_the_first_failure(heart, tmp_path):
    """The first job that fails ends the batch with its exit code (1: an error, 2: a usage error) after a line
    naming the file and line, and the jobs after it do not run; a line that does not split is refused before
    anything runs; a job file that cannot be read is an error."""
    exe = os.path.join(BIN, "llsvm-train")
    run = lambda *a, **kw: subprocess.run([exe, *a], capture_output=True, text=True, timeout=600, **kw)
    text = f"-q '{heart}' {tmp_path / 'first'}\n-s 99 '{heart}' {tmp_path / 'x'}\n-q '{heart}' {tmp_path / 'last'}\n"
    p = run("--jobs", "-", input=text)
    assert p.returncode == 1 and (tmp_path / "first").exists() and not (tmp_path / "last").exists()
    assert p.stderr == "ERROR: unknown solver type\nllsvm-train --jobs: -:2: the job failed (exit 1); the jobs " \
                       "after it did not run\n"
    p = run("--jobs", "-", input=f"--bogus '{heart}'\n")
    assert p.returncode == 2 and "No such option '--bogus'" in p.stderr and "-:1: the job failed (exit 2)" in p.stderr
    p = run("--jobs", "-", input=f"-q '{heart}' {tmp_path / 'never'}\n-q \"{heart}\n")
    assert p.returncode == 2 and p.stderr.endswith("Error: -:2: no closing quotation\n")
    assert not (tmp_path / "never").exists()
    for nested in ("--jobs other.txt", "-q --jobs=other.txt"):
        p = run("--jobs", "-", input=f"-q '{heart}' {tmp_path / 'never'}\n{nested}\n")
        assert p.returncode == 2 and p.stderr.endswith("Error: -:2: a job cannot be a batch itself (--jobs)\n")
        assert not (tmp_path / "never").exists()
    p = run("--jobs", str(tmp_path / "absent"))
    assert p.returncode == 1 and p.stderr == f"llsvm-train --jobs: can't open job file {tmp_path / 'absent'}: " \
                                             "No such file or directory\n"


def test_jobs_end_on_ctrl_c_with_130(heart, tmp_path):
    """Ctrl-C in the middle of a batch (the second job waiting on a FIFO nobody writes) ends it at once with 130:
    the first job's model stays, the third never runs, nothing is left behind."""
    import signal
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    jobs = tmp_path / "jobs.txt"
    jobs.write_text(f"-q '{heart}' {tmp_path / 'first'}\n-q {fifo} {tmp_path / 'second'}\n"
                    f"-q '{heart}' {tmp_path / 'third'}\n")
    p = subprocess.Popen([os.path.join(BIN, "llsvm-train"), "--jobs", str(jobs)], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    # the first job done: bounded by the command's CPU time (about a second), not the wall clock
    wait_for((tmp_path / "first").exists, p, 30.0, "the first job's model", every=0.05)
    for _ in range(20):     # a signal in the instant the first job commits its model is ignored (it succeeded)
        p.send_signal(signal.SIGINT)
        try:
            out, err = p.communicate(timeout=3)
            break
        except subprocess.TimeoutExpired:
            continue
    assert (p.returncode, out, err) == (130, b"", b"")
    assert sorted(f.name for f in tmp_path.iterdir()) == ["fifo", "first", "jobs.txt"]
