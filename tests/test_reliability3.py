"""Issue 44, model files and prediction: what llsvm-predict and the model readers did wrong on hostile but valid
input, each against what LIBLINEAR's `predict` and LIBSVM's `svm-predict` do.

- H4: regression targets of 1e200 and more overflow the squared error sums: predict prints "inf" and C's
  printf rendering of the NaN that follows ("-nan" on x86-64) and exits 0; llsvm-predict printed numpy's warnings
  and ended in an internal error (OverflowError). The sums are theirs, row after row (not numpy's pairwise sums).
- H6: a model whose integer header field has more than 4,300 digits (Python's int() limit) ended in an internal
  error (StopIteration) in every reader: now refused at its line like any malformed line, the token cut to 40
  characters (L1: one helper, llsvm.errors.escape, cuts every token a message quotes); leading zeros, which C's
  strtol reads, are read.
- H11: a LIBSVM model with no support vectors and rho 0 predicted -0 where svm-predict writes 0 (0 - rho).
"""
import ctypes
import math
import os
import shutil
import subprocess
import sys
import warnings

import numpy as np
import pytest

import llsvm
from llsvm.errors import ModelFormatError, escape, quote
from llsvm.predict import predict_file, printf_g, regression_scores

LONG = 5000                 # digits: beyond Python's int() limit of 4,300
NINES = "9" * LONG


def script(name):
    found = shutil.which(name, path=os.path.dirname(sys.executable))
    assert found is not None, f"{name} is not installed next to {sys.executable}"
    return found


def run(*args):
    return subprocess.run([script(args[0])] + [str(a) for a in args[1:]], capture_output=True, text=True,
                          timeout=120)


def c_printf_g(x):
    """x as this machine's C library prints it with "%g"."""
    buf = ctypes.create_string_buffer(64)
    ctypes.CDLL(None).snprintf(buf, 64, b"%g", ctypes.c_double(x))
    return buf.value.decode()


# the NaN an invalid operation (inf - inf, 0 * inf, 0 / 0) gives, as C prints it: "-nan" on x86-64
DEFAULT_NAN = c_printf_g(math.inf - math.inf)


# -- H4: regression targets whose squares overflow ----------------------------------------------------------------
HUGE = "1e200 1:1\n-1e200 2:-1\n1e300 3:1\n"


@pytest.mark.parametrize("solver", ["11", "12", "13", "epsilon_svr", "nu_svr", "21", "one_class"])
def test_predict_on_huge_targets_prints_c_figures(tmp_path, solver):
    """llsvm-predict on its own training file of targets 1e200..1e300, with every regression and one-class model:
    the lines predict and svm-predict print (MSE inf, the squared correlation the NaN of inf - inf, as printf
    renders it), exit 0, nothing on standard error."""
    data, model, out = tmp_path / "t", tmp_path / "m", tmp_path / "out"
    data.write_text(HUGE)
    r = run("llsvm-train", "-q", "-s", solver, data, model)
    assert r.returncode == 0, r.stderr
    r = run("llsvm-predict", data, model, out)
    assert (r.returncode, r.stderr) == (0, "")
    pred = [float(v) for v in out.read_text().split()]
    assert len(pred) == 3
    if solver in ("21", "one_class"):
        correct = sum(p == y for p, y in zip(pred, (1e200, -1e200, 1e300)))
        tail = " (classification)" if solver == "one_class" else ""
        assert r.stdout == f"Accuracy = {correct / 3 * 100:g}% ({correct}/3){tail}\n"
    else:
        assert r.stdout == (f"Mean squared error = inf (regression)\n"
                            f"Squared correlation coefficient = {DEFAULT_NAN} (regression)\n")


@pytest.mark.parametrize("solver", ["11", "12", "13", "epsilon_svr", "nu_svr"])
def test_cross_validation_on_huge_targets_prints_c_figures(tmp_path, solver):
    """-v on the same targets: the lines train -v and svm-train -v print (MSE inf, the squared correlation the NaN
    of inf - inf as printf renders it, "-nan", where Python's %g says "nan")."""
    data = tmp_path / "t"
    data.write_text(HUGE)
    r = run("llsvm-train", "-q", "-s", solver, "-v", "2", data)
    assert (r.returncode, r.stderr) == (0, "")
    assert r.stdout == (f"Cross Validation Mean squared error = inf\n"
                        f"Cross Validation Squared correlation coefficient = {DEFAULT_NAN}\n")


def test_regression_scores_c_arithmetic_without_warnings():
    """The library's figures (regression_scores, used by cross-validation too): no numpy warning, no exception;
    0/0 and inf - inf give C's NaN, which printf_g renders as C does; an empty sum is 0/0 too."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mse, scc = regression_scores([0.0, 0.0, 0.0], [1e200, -1e200, 1e300])
        assert mse == math.inf and math.isnan(scc)
        assert printf_g(scc) == DEFAULT_NAN
        mse, scc = regression_scores([1.0, 1.0], [1.0, 2.0])     # constant predictions: 0 / 0
        assert mse == 0.5 and printf_g(scc) == DEFAULT_NAN
    assert [printf_g(v) for v in (math.inf, -math.inf, 0.5, -0.0, 1e-5)] == ["inf", "-inf", "0.5", "-0", "1e-05"]
    assert printf_g(float("nan")) == "nan" and printf_g(-float("nan")) == "-nan"


def _c_order_scores(pred, y):
    """predict.c's loop, in Python floats (C doubles): error, sump, sumt, sumpp, sumtt, sumpt row after row."""
    error = sump = sumt = sumpp = sumtt = sumpt = 0.0
    for p, t in zip(pred, y):
        error += (p - t) * (p - t)
        sump += p
        sumt += t
        sumpp += p * p
        sumtt += t * t
        sumpt += p * t
    n = len(y)
    return error / n, (n * sumpt - sump * sumt) ** 2 / ((n * sumpp - sump * sump) * (n * sumtt - sumt * sumt))


def test_predict_file_sums_in_row_order_across_blocks(tmp_path, monkeypatch):
    """predict_file's figures are predict's to the bit, over many blocks: the sums run row after row (numpy's
    pairwise sums of each block differ in the last bits)."""
    rng = np.random.default_rng(44)
    n = 3000
    y = rng.standard_normal(n) * 10.0 ** rng.integers(-3, 6, n)
    x = rng.standard_normal(n) * 10.0 ** rng.integers(-3, 6, n)
    data = tmp_path / "t"
    data.write_text("".join(f"{a!r} 1:{b!r}\n" for a, b in zip(y.tolist(), x.tolist())))
    model = llsvm.Model("L2R_L2LOSS_SVR", 2, None, 1, -1, np.array([[0.75]]))
    monkeypatch.setattr(llsvm.predict, "BLOCK_BYTES", 8 << 10)        # about 500 rows a block
    with open(tmp_path / "out", "w") as out:
        m = predict_file(model, data, out)
    pred = [float(v) for v in (tmp_path / "out").read_text().split()]
    mse, scc = _c_order_scores(pred, llsvm.read_dataset(str(data)).y.tolist())
    assert (m["mean_squared_error"], m["squared_correlation"]) == (mse, scc)
    assert regression_scores(pred, llsvm.read_dataset(str(data)).y) == (mse, scc)


# -- H11: no support vectors, rho 0 --------------------------------------------------------------------------------
SVR_NO_SV = "svm_type epsilon_svr\nkernel_type rbf\ngamma 0.5\nnr_class 2\ntotal_sv 0\nrho 0\nSV\n"
SVC_NO_SV = "svm_type c_svc\nkernel_type linear\nnr_class 2\ntotal_sv 0\nrho 0\nlabel 1 -1\nnr_sv 0 0\nSV\n"


def test_no_support_vectors_predict_plus_zero(tmp_path):
    """svm_predict_values computes sum - rho with sum = 0: 0 - 0 is +0, which svm-predict prints as 0 (llsvm wrote
    -0), in the predictions and the decision values alike."""
    data = tmp_path / "t"
    data.write_text("1 1:1\n-2 2:-1\n")
    (tmp_path / "svr").write_text(SVR_NO_SV)
    (tmp_path / "svc").write_text(SVC_NO_SV)
    r = run("llsvm-predict", "--decision-values", tmp_path / "dec", data, tmp_path / "svr", tmp_path / "out")
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "out").read_text() == "0\n0\n"
    assert (tmp_path / "dec").read_text() == "0\n0\n"
    r = run("llsvm-predict", "--decision-values", tmp_path / "dec", data, tmp_path / "svc", tmp_path / "out")
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "out").read_text() == "-1\n-1\n"
    assert (tmp_path / "dec").read_text() == "0\n0\n"
    dec = llsvm.load_model(tmp_path / "svr").decision_function(np.eye(2))
    assert not np.signbit(dec).any()


# -- H6 and L1: integers of more than 4,300 digits, long tokens in messages ---------------------------------------
LINEAR = "solver_type L2R_L2LOSS_SVC_DUAL\nnr_class 2\nlabel 1 -1\nnr_feature 2\nbias -1\nw\n0.5 \n-0.25 \n"
KERNEL = ("svm_type c_svc\nkernel_type polynomial\ndegree 3\ngamma 0.5\ncoef0 1\nnr_class 2\ntotal_sv 2\nrho 0.1\n"
          "label 1 -1\nnr_sv 1 1\nSV\n0.5 1:1 2:0.5 \n-0.5 2:-1 \n")
CUT = "9" * 40 + "..."


@pytest.mark.parametrize("text,old,new,line,message", [
    (LINEAR, "label 1 -1", f"label 1 -{NINES}", 3,
     f"label -{'9' * 39}... is beyond the int64 range (llsvm's class labels are 64-bit integers)"),
    (LINEAR, "nr_class 2", f"nr_class {NINES}", 2, f"'nr_class' out of range: {CUT}"),
    (LINEAR, "nr_feature 2", f"nr_feature {NINES}", 4, f"'nr_feature' out of range: {CUT}"),
    (LINEAR, "nr_class 2", "nr_class " + "x" * LONG, 2, f"'nr_class' is not an integer: '{'x' * 40}...'"),
    (LINEAR, "label 1 -1", "label 1 " + "1x" * LONG, 3, f"labels must be integers (found '{'1x' * 20}...')"),
    (LINEAR, "solver_type", "x" * LONG + "\nsolver_type", 1, f"unknown text in model file: [{'x' * 40}...]"),
    ("llsvm_hashed_model 1\nhash fmix32-signed 1\n" + LINEAR, "llsvm_hashed_model 1",
     "llsvm_hashed_model " + NINES, 1, f"unsupported hashed model version {CUT} (this llsvm reads version 1)"),
    ("llsvm_hashed_model 1\nhash fmix32-signed 1\n" + LINEAR, "fmix32-signed 1", "fmix32-signed " + NINES, 2,
     f"hash bits must be an integer in 1..28, found '{CUT}'"),
    (KERNEL, "label 1 -1", f"label {NINES} -1", 9, f"'label' value {CUT} out of range"),
    (KERNEL, "nr_sv 1 1", f"nr_sv 1 {NINES}", 10, f"'nr_sv' value {CUT} out of range"),
    (KERNEL, "total_sv 2", f"total_sv {NINES}", 7, f"'total_sv' out of range: {CUT}"),
    (KERNEL, "nr_class 2", f"nr_class {NINES}", 6, f"'nr_class' out of range: {CUT}"),
    (KERNEL, "degree 3", f"degree {NINES}", 3, f"'degree' out of range: {CUT}"),
    (KERNEL, "-0.5 2:-1", f"-0.5 {NINES}:-1", 13,
     f"index {CUT} beyond int (indices are 1-based, strictly ascending)"),
    (KERNEL, "-0.5 2:-1", f"-0.5 -{NINES}:-1", 13,
     f"index -{'9' * 39}... not positive (indices are 1-based, strictly ascending)"),
    (KERNEL, "gamma 0.5", "gamma " + "x" * LONG, 4, f"'gamma' values must be numbers (found '{'x' * 40}...')"),
], ids=["linear-label", "linear-nr_class", "linear-nr_feature", "linear-nr_class-text", "linear-label-text",
        "linear-unknown-key", "hashed-version", "hashed-bits", "kernel-label", "kernel-nr_sv", "kernel-total_sv",
        "kernel-nr_class", "kernel-degree", "kernel-sv-index", "kernel-sv-negative-index", "kernel-gamma-text"])
def test_long_integer_refused_at_its_line(tmp_path, text, old, new, line, message):
    """load_model (and sklearn's from_file, which reads through it) refuses the line, the token cut to 40
    characters (it raised StopIteration, or an internal ValueError, or quoted 5 KB)."""
    path = tmp_path / "m"
    path.write_text(text.replace(old, new, 1))
    with pytest.raises(ModelFormatError) as exc:
        llsvm.load_model(path)
    assert str(exc.value) == f"{path}:{line}: {message}"
    from llsvm.sklearn import LinearSVC
    with pytest.raises(ModelFormatError):
        LinearSVC.from_file(path)


@pytest.mark.parametrize("kind", ["linear", "kernel"])
def test_long_integer_refused_by_llsvm_predict(tmp_path, kind):
    """llsvm-predict: the usual file:line error, exit 1 (it was an internal error)."""
    text = (LINEAR.replace("label 1 -1", f"label 1 {NINES}") if kind == "linear" else
            KERNEL.replace("nr_sv 1 1", f"nr_sv {NINES} 1"))
    (tmp_path / "m").write_text(text)
    (tmp_path / "t").write_text("1 1:1\n")
    r = run("llsvm-predict", tmp_path / "t", tmp_path / "m", tmp_path / "out")
    line, msg = ((3, f"label {CUT} is beyond the int64 range (llsvm's class labels are 64-bit integers)")
                 if kind == "linear"
                 else (10, f"'nr_sv' value {CUT} out of range"))
    assert (r.returncode, r.stdout, r.stderr) == (1, "", f"Error: {tmp_path / 'm'}:{line}: {msg}\n")
    assert not (tmp_path / "out").exists()


def test_long_integer_in_a_streamed_model(tmp_path):
    """A model over 4 MB (read in pieces, llsvm.models.loader.STREAM_FROM): the same refusal at the label line."""
    n = 1_000_000
    path = tmp_path / "big"
    with open(path, "w") as f:
        f.write(LINEAR.split("w\n")[0].replace("label 1 -1", f"label {NINES} -1")
                .replace("nr_feature 2", f"nr_feature {n}") + "w\n")
        f.write("0.5 \n" * n)
    assert path.stat().st_size > llsvm.models.loader.STREAM_FROM
    with pytest.raises(ModelFormatError) as exc:
        llsvm.load_model(path)
    assert str(exc.value) == (f"{path}:3: label {CUT} is beyond the int64 range (llsvm's class labels are "
                              "64-bit integers)")


@pytest.mark.parametrize("text,old,new", [
    (LINEAR, "label 1 -1", "label 1 -" + "0" * LONG + "1"),
    (LINEAR, "nr_feature 2", "nr_feature +" + "0" * LONG + "2"),
    (KERNEL, "nr_sv 1 1", "nr_sv " + "0" * LONG + "1 1"),
    (KERNEL, "total_sv 2", "total_sv " + "0" * LONG + "2"),
], ids=["linear-label", "linear-nr_feature", "kernel-nr_sv", "kernel-total_sv"])
def test_leading_zeros_read_as_c_reads_them(tmp_path, text, old, new):
    """C's strtol (and fscanf's %d) read any number of leading zeros: svm-predict reads such a model; so does
    llsvm, as the model without them (it said the token was not an integer)."""
    (tmp_path / "plain").write_text(text)
    (tmp_path / "zeros").write_text(text.replace(old, new, 1))
    assert llsvm.load_model(tmp_path / "zeros").to_text() == llsvm.load_model(tmp_path / "plain").to_text()


def test_messages_cut_quoted_tokens():
    """The one helper that quotes what a file holds cuts it after 40 characters (bytes for bytes) and escapes
    what it keeps."""
    assert quote("a" * 41) == "'" + "a" * 40 + "...'"
    assert quote("a" * 40) == "'" + "a" * 40 + "'"
    assert quote(b"\x00" * 50) == "'" + "\\x00" * 40 + "...'"
    assert escape("b" * 100, None) == "b" * 100
