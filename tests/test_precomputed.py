"""LIBSVM's precomputed kernel (-t 4, issue 47) above the kernels: llsvm-train -t 4 for every LIBSVM type, its
model file, llsvm-predict on it, the checks of the rows, and kernel="precomputed" / callable kernels in the
scikit-learn estimators.

The references are independent: libsvm-official (LIBSVM 3.37's svm_train, svm_save_model and svm_predict, in a
fresh process, as tests/test_single.py runs them) on the same Gram files, and scikit-learn's own SVC, NuSVC, SVR,
NuSVR and OneClassSVM. The Gram files are made here, in tmp_path: linear kernels summed as LIBSVM's dot sums them
(feature after feature, in doubles) and RBF kernels by C's exp of LIBSVM's formula, written with %.17g, so that a
precomputed linear kernel is the very matrix svm-train -t 0 computes (its -v must then be -t 0's, fold for fold).
"""
import json
import math
import os
import subprocess
import sys

import numpy as np
import pytest
import scipy.sparse as sp
from click.testing import CliRunner

import llsvm
from llsvm.cli.predict import main as predict_main
from llsvm.cli.train import main as train_main
from llsvm.errors import DataFormatError, ModelFormatError, ParameterError
from llsvm.options import SMOOptions

from conftest import assert_exit
from test_smo_train import assert_libsvm_fold_probabilities

# libsvm-official in a fresh process, one thread (its OpenMP sums differ run to run otherwise: tests/test_single.py)
ONE_THREAD = {**os.environ, "OMP_NUM_THREADS": "1"}
TRAIN = ("import sys\nfrom libsvm import svmutil\ny, x = svmutil.svm_read_problem(sys.argv[1])\n"
         "m = svmutil.svm_train(y, x, ' '.join(sys.argv[3:]))\n"
         "if sys.argv[2] != '-':\n    svmutil.svm_save_model(sys.argv[2], m)\n")
# without -b 1, LIBSVM's C svm_predict row by row: libsvm-official's svmutil.svm_predict sizes the decision values of
# a nu-SVC model as one (it dies on more than two classes)
PREDICT = ("import json, sys\nfrom libsvm import svmutil\nfrom libsvm.svm import gen_svm_nodearray, libsvm\n"
           "y, x = svmutil.svm_read_problem(sys.argv[1])\nm = svmutil.svm_load_model(sys.argv[2])\n"
           "if sys.argv[3] == '1':\n    p, _, v = svmutil.svm_predict(y, x, m, '-b 1 -q')\nelse:\n"
           "    p = [libsvm.svm_predict(m, gen_svm_nodearray(r, isKernel=True)[0]) for r in x]\n    v = []\n"
           "print(json.dumps({'labels': p, 'values': v}))\n")


def libsvm_train(path, model, args):
    """svm-train's stdout (libsvm-official's print) and, unless model is '-', its model file."""
    return subprocess.run([sys.executable, "-c", TRAIN, str(path), str(model), *args], capture_output=True,
                          text=True, timeout=600, check=True, env=ONE_THREAD).stdout


def libsvm_predict(path, model, probability=False):
    """svm_predict's labels and, with probability, its estimates (libsvm-official)."""
    out = subprocess.run([sys.executable, "-c", PREDICT, str(path), str(model), "1" if probability else "0"],
                         capture_output=True, text=True, timeout=600, check=True, env=ONE_THREAD).stdout
    return json.loads(out)


# -- the Gram files ---------------------------------------------------------------------------------------------
def dense(path, rows=None):
    ds = llsvm.read_dataset(str(path))
    X, y = ds.to_csr().toarray(), ds.y
    return (X, y) if rows is None else (X[:rows], y[:rows])


def gram(A, B, kind="linear", gamma=None):
    """K[i, j] = k(A_i, B_j) as LIBSVM's training kernel computes it: dot products summed feature after feature
    (LIBSVM's dot adds x_k y_k over the common indices in ascending order; a zero term leaves the sum as it is),
    RBF exp(-gamma (|a|^2 + |b|^2 - 2 a.b)) by C's exp (math.exp)."""
    K = np.zeros((A.shape[0], B.shape[0]))
    for k in range(A.shape[1]):
        K += np.outer(A[:, k], B[:, k])
    if kind == "rbf":
        sa, sb = np.zeros(A.shape[0]), np.zeros(B.shape[0])
        for k in range(A.shape[1]):
            sa += A[:, k] * A[:, k]
            sb += B[:, k] * B[:, k]
        D = sa[:, None] + sb[None, :] - 2 * K
        K = np.array([[math.exp(-gamma * d) for d in row] for row in D])
    return K


def write_gram(path, y, K, serials=None):
    """LIBSVM's precomputed format: `label 0:serial 1:K(x,x_1) ... L:K(x,x_L)`, every value written (%.17g);
    serials: each row's serial number (default 1..n, the rows in order; None entries: 0, a row to predict's 0:?)."""
    serials = range(1, K.shape[0] + 1) if serials is None else serials
    with open(path, "w") as f:
        for label, s, row in zip(y, serials, K):
            f.write(f"{label:.17g} 0:{s} " + " ".join(f"{j + 1}:{v:.17g}" for j, v in enumerate(row)) + "\n")
    return path


def blobs(seed, l, n, labels):
    g = np.random.default_rng(seed)
    centres = g.standard_normal((len(labels), n)) * 1.3
    k = g.integers(0, len(labels), l)
    return centres[k] + g.standard_normal((l, n)), np.asarray(labels, np.float64)[k]


def regression(seed=28, l=200, n=5):
    g = np.random.default_rng(seed)
    X = g.uniform(-1, 1, (l, n))
    return X, np.sin(2 * X[:, 0]) + X[:, 1] * X[:, 2] + 0.1 * g.standard_normal(l)


@pytest.fixture(scope="module")
def sets():
    """{name: (features, labels)}: generated sets that are always there: three classes whose first rows are of
    classes 1, 2, 3 (scikit-learn's LIBSVM sorts the classes, LIBSVM takes them in their order of first
    appearance: so both train the same pairs the same way round), and a regression."""
    X, y = blobs(7, 150, 4, (3, 1, 2))
    first = [int(np.flatnonzero(y == c)[0]) for c in (1, 2, 3)]
    order = first + [i for i in range(y.size) if i not in first]
    return {"three": (X[order], y[order]), "reg": regression()}


@pytest.fixture
def files(tmp_path, sets, request):
    """files(name, kind) -> the Gram file of a set (heart_scale and dna.scale's first 300 rows from the public
    sets, skipped without them; `three` and `reg` generated), with (X, y)."""
    def make(name, kind="rbf"):
        if name == "heart":
            X, y = dense(request.getfixturevalue("shared_plain")("heart_scale"))
        elif name == "dna":
            X, y = dense(request.getfixturevalue("shared_plain")("dna.scale"), 300)
        else:
            X, y = sets[name]
        K = gram(X, X, kind, 1.0 / X.shape[1])
        return write_gram(tmp_path / f"{name}.{kind}", y, K), X, y
    return make


def ours(args, path, model):
    r = CliRunner().invoke(train_main, [*args, str(path), str(model)])
    assert_exit(r, 0)
    return r.stdout


def run_predict(args, test, model, out):
    r = CliRunner().invoke(predict_main, [*args, str(test), str(model), str(out)])
    assert_exit(r, 0)
    return r.stdout


# svm-train's -s numbers and llsvm's names
CASES = [
    ("heart", "linear", ["-s", "0"], ["-s", "smo"]),
    ("heart", "rbf", ["-s", "0", "-c", "4"], ["-s", "smo", "-c", "4"]),
    ("heart", "rbf", ["-s", "2", "-n", "0.3"], ["-s", "one_class", "-n", "0.3"]),
    ("heart", "rbf", ["-s", "2", "-b", "1"], ["-s", "one_class", "-b", "1"]),   # no folds: the density marks
    ("dna", "rbf", ["-s", "0"], ["-s", "smo"]),
    ("dna", "linear", ["-s", "1", "-n", "0.1"], ["-s", "nu_svc", "-n", "0.1"]),
    ("dna", "rbf", ["-s", "0", "-w1", "3", "-w2", "0.5", "-h", "0"], ["-s", "smo", "-w1", "3", "-w2", "0.5", "-h", "0"]),
    ("three", "rbf", ["-s", "0"], ["-s", "smo"]),
    ("three", "linear", ["-s", "1", "-n", "0.2"], ["-s", "nu_svc", "-n", "0.2"]),
    ("reg", "rbf", ["-s", "3"], ["-s", "epsilon_svr"]),
    ("reg", "linear", ["-s", "3", "-p", "0.05", "-c", "4"], ["-s", "epsilon_svr", "-p", "0.05", "-c", "4"]),
    ("reg", "rbf", ["-s", "4", "-n", "0.3"], ["-s", "nu_svr", "-n", "0.3"]),
    ("reg", "linear", ["-s", "2"], ["-s", "one_class"]),
]


@pytest.mark.parametrize("name,kind,theirs,args", CASES, ids=[f"{c[0]}-{c[1]}-{' '.join(c[3])}" for c in CASES])
def test_model_and_output_are_svm_trains(files, tmp_path, name, kind, theirs, args):
    """llsvm-train -t 4: svm-train -t 4's model file byte for byte (kernel_type precomputed, no degree, gamma or
    coef0 line, each SV its coefficients then 0:serial) and its stdout line for line; -g, -d and -r are ignored
    as svm-train ignores them."""
    path, _, _ = files(name, kind)
    expected = libsvm_train(path, tmp_path / "theirs.model", [*theirs, "-t", "4"])
    assert ours([*args, "-t", "4"], path, tmp_path / "ours.model") == expected
    mine = (tmp_path / "ours.model").read_bytes()
    assert mine == (tmp_path / "theirs.model").read_bytes()
    assert b"kernel_type precomputed\n" in mine and b"gamma" not in mine
    ours([*args, "-t", "4", "-g", "7", "-d", "5", "-r", "2", "-q"], path, tmp_path / "ignored.model")
    assert (tmp_path / "ignored.model").read_bytes() == mine


@pytest.mark.parametrize("name,theirs", [("heart", ["-s", "0", "-b", "1"]), ("dna", ["-s", "0", "-b", "1"]),
                                         ("three", ["-s", "1", "-b", "1"]), ("reg", ["-s", "3", "-b", "1"]),
                                         ("heart", ["-s", "2", "-b", "1"]), ("dna", ["-s", "1"]),
                                         ("reg", ["-s", "4"])])
def test_predictions_are_svm_predicts(files, tmp_path, name, theirs):
    """llsvm-predict (and -b 1) on svm-train's -t 4 model: svm_predict's labels and probability estimates exactly
    (test rows `0:?` then the kernel values of the training rows); a model read and saved again is the same file."""
    path, _, _ = files(name)
    model = tmp_path / "theirs.model"
    libsvm_train(path, model, [*theirs, "-t", "4", "-q"])
    rows = llsvm.read_dataset(str(path), zero_based=True)
    test = write_gram(tmp_path / "test", rows.y, rows.to_csr().toarray()[:, 1:], serials=[0] * rows.n_rows)
    regression = theirs[1] in ("3", "4")
    for probability in ([False, True] if "-b" in theirs else [False]):
        run_predict(["-b", "1"] if probability else [], test, model, tmp_path / "out")
        lines = (tmp_path / "out").read_text().splitlines()
        ref = libsvm_predict(test, model, probability)
        if probability and not regression:       # svm-predict's `%g` label and estimates
            assert lines[1:] == ["%g" % label + "".join(" %g" % p for p in ps)
                                 for label, ps in zip(ref["labels"], ref["values"])]
        else:
            assert [float(t) for t in lines] == ref["labels"]
    resaved = tmp_path / "resaved.model"
    llsvm.load_model(str(model)).save(str(resaved))
    assert resaved.read_bytes() == model.read_bytes()


def test_probability_with_libsvms_folds_is_libsvms(files, tmp_path):
    """-b 1 of C-SVC on a precomputed kernel with LIBSVM's own folds (its rand() permutations replayed, as
    tests/test_smo_train.py replays them): every pair's probA and probB are svm-train's bit for bit, the folds
    being row subsets whose serials still point at the full rows' columns."""
    path, _, _ = files("dna")
    libsvm_train(path, tmp_path / "theirs.model", ["-t", "4", "-b", "1", "-q"])
    assert_libsvm_fold_probabilities(llsvm.read_dataset(str(path), zero_based=True),
                                     SMOOptions(kernel_type=4, probability=1),
                                     llsvm.load_model(str(tmp_path / "theirs.model")))


def test_subset_and_permutation_of_the_rows(files, tmp_path):
    """Any subset of the rows, in any order, is a precomputed problem (the serials keep pointing at the columns
    of the full matrix, some of which no row is then): svm-train's model and predictions."""
    path, _, _ = files("three", "rbf")
    lines = path.read_text().splitlines()
    order = np.random.default_rng(3).permutation(len(lines))[:100]
    sub = tmp_path / "sub"
    sub.write_text("".join(lines[i] + "\n" for i in order))
    for theirs, args in ((["-s", "0"], ["-s", "smo"]), (["-s", "2"], ["-s", "one_class"])):
        libsvm_train(sub, tmp_path / "theirs.model", [*theirs, "-t", "4", "-q"])
        ours([*args, "-t", "4", "-q"], sub, tmp_path / "ours.model")
        assert (tmp_path / "ours.model").read_bytes() == (tmp_path / "theirs.model").read_bytes()
        run_predict([], path, tmp_path / "ours.model", tmp_path / "out")
        got = [float(t) for t in (tmp_path / "out").read_text().split()]
        assert got == libsvm_predict(path, tmp_path / "theirs.model")["labels"]


def test_cross_validation(files, tmp_path, shared_plain):
    """-v over a precomputed kernel: the folds are row subsets, serials still valid. A linear Gram matrix is the
    one -t 0 computes, so -t 4 -v n gives -t 0 -v n's figures for every n (the same folds from --seed), -b 1 too;
    leave-one-out, whose folds do not depend on the draws, svm-train's own figure."""
    path, X, y = files("heart", "linear")
    plain = shared_plain("heart_scale")
    for extra in (["-v", "5"], ["-v", "3", "-b", "1"], ["-v", "4", "-c", "8"]):
        assert ours(["-s", "smo", "-q", "-t", "4", *extra], path, "unused") == \
            ours(["-s", "smo", "-q", "-t", "0", *extra], plain, "unused")
    loo = ours(["-s", "smo", "-q", "-t", "4", "-v", str(len(y))], path, "unused")
    assert loo == libsvm_train(path, "-", ["-t", "4", "-q", "-v", str(len(y))])
    reg, Xr, z = files("reg", "linear")
    plain_reg = tmp_path / "reg.txt"
    plain_reg.write_text("".join(f"{t:.17g} " + " ".join(f"{j + 1}:{v:.17g}" for j, v in enumerate(r)) + "\n"
                                 for r, t in zip(Xr, z)))
    assert ours(["-s", "epsilon_svr", "-q", "-t", "4", "-v", "5"], reg, "unused") == \
        ours(["-s", "epsilon_svr", "-q", "-t", "0", "-v", "5"], plain_reg, "unused")


def test_grid_and_threads(files, tmp_path):
    """--grid over C on a precomputed kernel: each cell is -v at that C (its accuracy), the gamma column "-";
    a kernel width in the grid is refused (there is none). --threads 2: the same model."""
    path, _, y = files("three")
    r = CliRunner().invoke(train_main, ["-s", "smo", "-t", "4", "--grid", "C=0.5,2", "-v", "3", str(path)])
    assert_exit(r, 0)
    rows = [ln.split() for ln in r.stdout.splitlines()[2:4]]
    for C, row in zip(("0.5", "2"), rows):
        cv = ours(["-s", "smo", "-q", "-t", "4", "-c", C, "-v", "3"], path, "unused")
        acc = float(cv.split("= ")[1].rstrip("%\n"))
        assert row[:3] == [C, "-", "%.4g%%" % (100 - acc)]
    assert "gamma = -" in r.stdout
    for grid in ("C=1 g=0.5", "sigma=1"):
        r = CliRunner().invoke(train_main, ["-s", "smo", "-t", "4", "--grid", grid, str(path)])
        assert_exit(r, 2)
        assert "-t 4 (precomputed kernel) has no kernel width (g, sigma): give C only" in r.stderr
    ours(["-s", "smo", "-q", "-t", "4"], path, tmp_path / "one.model")
    ours(["-s", "smo", "-q", "-t", "4", "--threads", "2"], path, tmp_path / "two.model")
    assert (tmp_path / "one.model").read_bytes() == (tmp_path / "two.model").read_bytes()


def test_binary_input(files, tmp_path, shared_plain):
    """A binary file keeps index 0 when llsvm-convert --zero-based made it: it trains as the text does. Converted
    1-based the text is refused (index 0); a binary file of ordinary rows is refused at its row, saying how to
    make one."""
    from llsvm.cli.convert import main as convert_main
    path, _, _ = files("three")
    binary = tmp_path / "k.bin"
    assert_exit(CliRunner().invoke(convert_main, ["-q", "--zero-based", str(path), str(binary)]), 0)
    ours(["-s", "smo", "-q", "-t", "4"], path, tmp_path / "text.model")
    ours(["-s", "smo", "-q", "-t", "4"], binary, tmp_path / "bin.model")
    assert (tmp_path / "bin.model").read_bytes() == (tmp_path / "text.model").read_bytes()
    run_predict([], binary, tmp_path / "bin.model", tmp_path / "bin.out")
    run_predict([], path, tmp_path / "bin.model", tmp_path / "text.out")
    assert (tmp_path / "bin.out").read_bytes() == (tmp_path / "text.out").read_bytes()
    r = CliRunner().invoke(convert_main, ["-q", str(path), str(tmp_path / "one.bin")])
    assert_exit(r, 1)
    assert "index 0 in 1-based data" in r.stderr
    ordinary = tmp_path / "ordinary.bin"
    assert_exit(CliRunner().invoke(convert_main, ["-q", str(shared_plain("iris.scale")), str(ordinary)]), 0)
    r = CliRunner().invoke(train_main, ["-s", "smo", "-t", "4", str(ordinary), str(tmp_path / "m")])
    assert_exit(r, 1)
    assert r.stderr.startswith(f"Error: {ordinary}: row 1: sample_serial_number out of range (found ")
    assert "llsvm-convert --zero-based" in r.stderr


def test_options_refused(files, tmp_path):
    """-t 4 is LIBSVM's types' only: every other solver refuses it naming the option, a cluster too; -t 5 is
    svm-train's unknown kernel type."""
    path, _, _ = files("three")
    takes = "-s smo, -s nu_svc, -s epsilon_svr, -s nu_svr and -s one_class"
    for solver in ("2", "3", "llsvm", "streamsvm", "bm", "h1tree", "olsvm", "pegasos", "local1d"):
        r = CliRunner().invoke(train_main, ["-s", solver, "-t", "4", str(path), str(tmp_path / "m")])
        assert_exit(r, 1)
        assert r.stderr == f"ERROR: -t 4 (precomputed kernel) applies only to {takes}, not to -s {solver}\n"
    r = CliRunner().invoke(train_main, ["-s", "smo", "-t", "4", "--dask", "local", str(path), str(tmp_path / "m")])
    assert_exit(r, 1)
    assert r.stderr == "ERROR: -t 4 (precomputed kernel) does not run on a cluster (--dask): train without --dask\n"
    r = CliRunner().invoke(train_main, ["-s", "smo", "-t", "5", str(path), str(tmp_path / "m")])
    assert_exit(r, 1)
    assert r.stderr == "ERROR: unknown kernel type\n"
    from llsvm import dask as lldask
    from llsvm.options import H1Options, OnlineOptions
    from llsvm.params import Params
    for solver, opts in (("h1tree", H1Options), ("olsvm", OnlineOptions)):
        with pytest.raises(ParameterError, match="-t 4 .precomputed kernel. applies only to"):
            Params(solver=solver, options=opts(kernel_type=4)).check()
    with pytest.raises(ParameterError, match="does not run on a cluster"):
        lldask.train(str(path), params=Params(solver="smo", options=SMOOptions(kernel_type=4)))


def _bad(path, line, old, new, name="bad"):
    lines = path.read_text().splitlines(keepends=True)
    assert old in lines[line - 1]
    lines[line - 1] = lines[line - 1].replace(old, new, 1)
    bad = path.with_name(name)
    bad.write_text("".join(lines))
    return bad


def test_training_rows_checked(files, tmp_path):
    """svm-train's checks in its words, at the line and column of the pair (llsvm's style: LIBSVM names no line),
    and llsvm's own: a row that lacks the kernel value of a training row's serial (LIBSVM reads another value,
    or past the row) names its line and the index it lacks."""
    path, _, y = files("three")
    n = len(y)
    line3 = path.read_text().splitlines()[2]
    col = len(line3.split(" ")[0]) + 2                   # the first pair's index: after the label and a space
    cases = [
        (_bad(path, 3, " 0:3 ", " ", "first"), 3, col, "first column must be 0:sample_serial_number"),
        (_bad(path, 3, " 0:3 ", f" 0:{n + 1} ", "beyond"), 3, col + 2,
         f"sample_serial_number out of range (found {n + 1}; the serial numbers are 1 to {n}, the largest index)"),
        (_bad(path, 3, " 0:3 ", " 0:0.5 ", "zero"), 3, col + 2,
         f"sample_serial_number out of range (found 0.5; the serial numbers are 1 to {n}, the largest index)"),
    ]
    line5 = path.read_text().splitlines()[4]
    token = next(t for t in line5.split() if t.startswith("17:"))
    bad = _bad(path, 5, f" {token}", "", "lacking")
    cases.append((bad, 5, line5.index(f" {token}") + 2,
                  f"no kernel value at index 17, the sample_serial_number of a training row: a training row of a "
                  f"precomputed kernel holds 0:sample_serial_number then K(x, x_s) at every index s from 1 to {n} "
                  f"(the largest sample_serial_number of the training rows), zeros written"))
    for bad, line, column, message in cases:
        r = CliRunner().invoke(train_main, ["-s", "smo", "-t", "4", str(bad), str(tmp_path / "m")])
        assert_exit(r, 1)
        assert r.stderr == f"Wrong input format at line {line}\n{bad}: line {line}, column {column}: {message}\n"
        with pytest.raises(DataFormatError) as exc:
            llsvm.train(str(bad), solver="smo", options=SMOOptions(kernel_type=4))
        assert (exc.value.line, exc.value.column, exc.value.message) == (line, column, message)
    # rows (serials 101..150) without the kernel value of column 50, which no row is: LIBSVM reads each value past
    # it one position off, llsvm reads by index and needs none there
    lines = path.read_text().splitlines()[100:]
    sub, dropped = tmp_path / "sub", tmp_path / "dropped"
    sub.write_text("".join(ln + "\n" for ln in lines))
    dropped.write_text("".join(" ".join(t for t in ln.split() if not t.startswith("50:")) + "\n" for ln in lines))
    ours(["-s", "smo", "-q", "-t", "4"], sub, tmp_path / "sub.model")
    ours(["-s", "smo", "-q", "-t", "4"], dropped, tmp_path / "dropped.model")
    assert (tmp_path / "sub.model").read_bytes() == (tmp_path / "dropped.model").read_bytes()


def test_test_rows_checked(files, tmp_path):
    """A row to predict must hold the kernel value of every support vector's serial: llsvm-predict names its line
    and column and the index; its index 0 may hold any number, or be left out."""
    path, _, _ = files("three")
    model = tmp_path / "m"
    ours(["-s", "smo", "-q", "-t", "4"], path, model)
    m = llsvm.load_model(str(model))
    s = int(m.serials[len(m.serials) // 2])
    line2 = path.read_text().splitlines()[1]
    token = next(t for t in line2.split() if t.startswith(f"{s}:"))
    bad = _bad(path, 2, f" {token}", "")
    r = CliRunner().invoke(predict_main, [str(bad), str(model), str(tmp_path / "out")])
    assert_exit(r, 1)
    top = int(m.serials[-1])
    assert r.stderr == (f"Wrong input format at line 2\n{bad}: line 2, column {line2.index(' ' + token) + 2}: no "
                        f"kernel value at index {s}, the sample_serial_number of a support vector: a row to predict "
                        f"with a precomputed kernel holds 0:? (any number) then K(x, x_s) at every index s from 1 to "
                        f"{top} (the largest sample_serial_number of the model's support vectors), zeros written\n")
    run_predict([], path, model, tmp_path / "full")
    free = tmp_path / "free"
    free.write_text("".join(" ".join(t for t in ln.split() if not t.startswith("0:")) + "\n"
                            for ln in path.read_text().splitlines()))
    run_predict([], free, model, tmp_path / "free.out")
    assert (tmp_path / "free.out").read_bytes() == (tmp_path / "full").read_bytes()


def test_model_file_read_strictly(files, tmp_path):
    """svm_save_model's SV lines of a precomputed kernel: coefficients then `0:%d `. Anything else is refused at
    its line; a header with gamma is refused as for the linear kernel; a tree's RBF node may not be one."""
    path, _, _ = files("three")
    model = tmp_path / "m"
    ours(["-s", "smo", "-q", "-t", "4"], path, model)
    text = model.read_text()
    head, body = text.split("SV\n")
    first = body.splitlines()[0]
    sv_line = head.count("\n") + 2
    coefs = " ".join(first.split()[:-1])
    for wrong in (f"{coefs} 0:2.5 ", f"{coefs} 1:2 ", f"{coefs} 0:3 1:0.5 ", f"{coefs} 0:0 ", f"{coefs} "):
        (tmp_path / "w").write_text(head + "SV\n" + body.replace(first, wrong, 1))
        with pytest.raises(ModelFormatError, match=f":{sv_line}: expected 0:sample_serial_number"):
            llsvm.load_model(str(tmp_path / "w"))
    (tmp_path / "g").write_text(text.replace("nr_class", "gamma 0.5\nnr_class", 1))
    with pytest.raises(ModelFormatError, match="'gamma' for the precomputed kernel, which has none"):
        llsvm.load_model(str(tmp_path / "g"))
    from llsvm.models.tree import TreeModel
    from llsvm.models.svm import SVMModel
    rbf = llsvm.load_model(str(model))
    with pytest.raises(ParameterError, match="cannot be a precomputed-kernel model"):
        from llsvm.models.tree import Tree
        TreeModel(rbf.label, 4, [Tree(int(rbf.label[i]), int(rbf.label[j]), [], ("rbf",))
                                 for i in range(3) for j in range(i + 1, 3)], 1.0, rbf=rbf)
    assert isinstance(rbf, SVMModel) and rbf.precomputed


# -- the scikit-learn estimators ----------------------------------------------------------------------------------
def _pairs():
    from sklearn import svm as sk
    from llsvm import sklearn as ll
    return [(ll.SVC, sk.SVC, {}, True), (ll.NuSVC, sk.NuSVC, {"nu": 0.3}, True), (ll.SVR, sk.SVR, {}, False),
            (ll.NuSVR, sk.NuSVR, {}, False), (ll.OneClassSVM, sk.OneClassSVM, {"nu": 0.2}, None)]


@pytest.mark.parametrize("k", range(5))
def test_estimators_precomputed_and_callable_are_sklearns(sets, k):
    """kernel="precomputed" (fit(K) with K = X X', predict(K_test)) and a callable kernel give scikit-learn's fit:
    the same support_, dual_coef_ and intercept_ (to rounding), support_vectors_ empty (0, 0) as scikit-learn's,
    n_features_in_ the columns of K (none for a callable), shape_fit_, the same predictions; and equal a linear
    kernel's model on X."""
    ll_cls, sk_cls, kw, classifier = _pairs()[k]
    X, y = sets["three"] if classifier else (sets["reg"][0], sets["reg"][1])
    K, KT = X @ X.T, X[:40] @ X.T
    fit_y = () if classifier is None else (y,)
    ours, theirs = ll_cls(kernel="precomputed", **kw).fit(K, *fit_y), sk_cls(kernel="precomputed", **kw).fit(K, *fit_y)
    if classifier is None:
        # scikit-learn's one-class SVM stops one iteration later than LIBSVM's whatever the kernel (its linear
        # kernel too): a support vector more, of coefficient 3e-14 here
        np.testing.assert_allclose(ours.decision_function(KT), theirs.decision_function(KT), atol=1e-5)
    else:
        np.testing.assert_array_equal(ours.support_, theirs.support_)
        np.testing.assert_allclose(ours.dual_coef_, theirs.dual_coef_, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(ours.intercept_, theirs.intercept_, rtol=1e-6, atol=1e-8)
        np.testing.assert_array_equal(ours.predict(KT), theirs.predict(KT))
    assert ours.support_vectors_.shape == theirs.support_vectors_.shape == (0, 0)
    assert ours.n_features_in_ == theirs.n_features_in_ and ours.shape_fit_ == theirs.shape_fit_
    linear = ll_cls(kernel="linear", **kw).fit(X, *fit_y)
    np.testing.assert_array_equal(ours.support_, linear.support_)
    np.testing.assert_allclose(ours.decision_function(KT) if classifier is not False else ours.predict(KT),
                               linear.decision_function(X[:40]) if classifier is not False else linear.predict(X[:40]),
                               rtol=1e-9, atol=1e-9)
    call, sk_call = ll_cls(kernel=lambda a, b: a @ b.T, **kw), sk_cls(kernel=lambda a, b: a @ b.T, **kw)
    call.fit(X, *fit_y)
    sk_call.fit(X, *fit_y)
    np.testing.assert_array_equal(call.support_, ours.support_)
    np.testing.assert_array_equal(call.predict(X[:40]), ours.predict(KT))
    assert call.support_vectors_.shape == (0, 0) and not hasattr(call, "n_features_in_")
    assert call.shape_fit_ == sk_call.shape_fit_ == X.shape


def test_estimator_errors_are_sklearns(sets):
    """scikit-learn's errors, word for word: a K that is not square, sparse K (TypeError), a K to predict of the
    wrong width, sparse rows after a dense K, a callable kernel's matrix that is not square."""
    from sklearn import svm as sk
    from llsvm.sklearn import SVC
    X, y = sets["three"]
    K = X @ X.T

    def message(fn):
        with pytest.raises((ValueError, TypeError)) as exc:
            fn()
        return type(exc.value), str(exc.value)

    for est in (SVC, sk.SVC):
        fitted = est(kernel="precomputed").fit(K, y)
        assert message(lambda: est(kernel="precomputed").fit(K[:, :10], y)) == \
            (ValueError, "Precomputed matrix must be a square matrix. Input is a 150x10 matrix.")
        assert message(lambda: est(kernel="precomputed").fit(sp.csr_matrix(K), y)) == \
            (TypeError, "Sparse precomputed kernels are not supported.")
        assert message(lambda: fitted.predict(K[:, :10])) == \
            (ValueError, "X has 10 features, but SVC is expecting 150 features as input.")
        assert message(lambda: fitted.predict(sp.csr_matrix(K))) == \
            (ValueError, "cannot use sparse input in 'SVC' trained on dense data")
        assert message(lambda: est(kernel=lambda a, b: (a @ b.T)[:, :3]).fit(X, y)) == \
            (ValueError, "X.shape[0] should be equal to X.shape[1]")
        bad = est(kernel=lambda a, b: a @ b.T).fit(X, y)
        assert message(lambda: bad.predict(X[:5, :2])) == message(lambda: sk.SVC(
            kernel=lambda a, b: a @ b.T).fit(X, y).predict(X[:5, :2]))


def test_estimator_cross_validation_and_paths(sets, tmp_path):
    """kernel="precomputed" is pairwise for scikit-learn's cross-validation (K sliced both ways): the same scores
    as scikit-learn's SVC; fit and predict from LIBSVM's precomputed files (read 0-based) as from the arrays; the
    model saved is svm-train's file."""
    from sklearn import svm as sk
    from sklearn.model_selection import cross_val_score
    from llsvm.sklearn import SVC
    X, y = sets["three"]
    K = X @ X.T
    assert SVC(kernel="precomputed").__sklearn_tags__().input_tags.pairwise
    np.testing.assert_array_equal(cross_val_score(SVC(kernel="precomputed"), K, y, cv=3),
                                  cross_val_score(sk.SVC(kernel="precomputed"), K, y, cv=3))
    path = write_gram(tmp_path / "k", y, K)
    test = write_gram(tmp_path / "t", y[:30], K[:30], serials=[0] * 30)
    a, b = SVC(kernel="precomputed").fit(K, y), SVC(kernel="precomputed").fit(str(path))
    np.testing.assert_array_equal(a.predict(K[:30]), b.predict(str(test)))
    np.testing.assert_array_equal(a.predict(K[:30]), b.predict(K[:30]))
    a.save(tmp_path / "a.model")
    libsvm_train(path, tmp_path / "theirs.model", ["-t", "4", "-c", "1", "-q"])
    assert (tmp_path / "a.model").read_bytes() == (tmp_path / "theirs.model").read_bytes()
