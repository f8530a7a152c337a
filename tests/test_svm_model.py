"""LIBSVM kernel models (llsvm/models/svm.py, cext/_kpredict.pyx) against libsvm-official, in both directions.

- LIBSVM -> llsvm: models trained by libsvm.svmutil (every svm_type, every kernel_type 0-3, with and without
  -b 1) and written by svm_save_model; llsvm loads them; its decision values, labels and -b 1 probabilities equal
  those of LIBSVM's svm_predict_values / svm_predict_probability on the model LIBSVM loads from the same file, and
  llsvm writes the file back byte for byte.
- llsvm -> LIBSVM: an SVMModel built from a LIBSVM model's arrays, saved by llsvm, read by svm_load_model.
- llsvm-predict end to end on LIBSVM model files, and the refusals of malformed files (path:line, exit 1).

libsvm-official is built with OpenMP: its one-class / SVR sum is an OpenMP reduction whose order depends on the
thread count. With one thread (set below through libgomp) it is the plain sum in SV order, which llsvm forms.
"""
import ctypes

import numpy as np
import pytest
import scipy.sparse as sp
from click.testing import CliRunner
from conftest import assert_exit

import llsvm
from llsvm import ModelFormatError, ParameterError
from llsvm.cli.predict import main as predict_main
from llsvm.dataset import CSRDataset
from llsvm.models import load_model
from llsvm.models.svm import SVMModel

from libsvm import svmutil  # noqa: E402  (a test dependency: missing is a failure)
from libsvm.svm import gen_svm_nodearray, libsvm as clib  # noqa: E402

try:
    ctypes.CDLL("libgomp.so.1").omp_set_num_threads(1)
except OSError:         # a LIBSVM built without OpenMP: nothing to pin
    pass

SVM_TYPES = ["c_svc", "nu_svc", "one_class", "epsilon_svr", "nu_svr"]


def libsvm_predict(m, X, probability=False):
    """(labels, decision values (n, n_dec), probabilities or None, -b 1 labels or None) of LIBSVM's C functions,
    row by row: svm_predict_values's labels (the votes), svm_predict_probability's (the largest probability)."""
    k = m.get_nr_class()
    st = m.get_svm_type()
    n_dec = k * (k - 1) // 2 if st in (0, 1) else 1
    dec = (ctypes.c_double * max(n_dec, 1))()
    pb = (ctypes.c_double * max(k, 2))()
    labels, values, probs, plabels = [], [], [], []
    for i in range(X.shape[0]):
        sl = slice(X.indptr[i], X.indptr[i + 1])
        xi, _ = gen_svm_nodearray((X.indices[sl], X.data[sl]))
        labels.append(clib.svm_predict_values(m, xi, dec))
        values.append(dec[:n_dec])
        if probability:
            plabels.append(clib.svm_predict_probability(m, xi, pb))
            probs.append(pb[:k])
    if not probability:
        probs = plabels = None
    return np.array(labels), np.array(values).reshape(len(labels), n_dec), np.array(probs), np.array(plabels)


def rel_diff(a, b):
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return float(np.max(np.abs(a - b) / np.maximum(np.abs(b), 1e-300), initial=0.0))


@pytest.fixture(scope="module")
def toy():
    """120 rows, 6 features (a third zero), with binary, 4-class (balanced) and real targets."""
    rng = np.random.default_rng(7)
    X = rng.normal(size=(120, 6))
    X[X < -0.5] = 0
    y2 = np.where(X[:, 0] + X[:, 1] > 0.3, 1.0, -1.0)
    s = X[:, 0] + 0.5 * X[:, 2]
    y4 = np.digitize(s, np.quantile(s, [0.25, 0.5, 0.75])).astype(np.float64) * 3 - 2   # -2, 1, 4, 7
    yr = X[:, 0] - 2 * X[:, 3] + 0.1 * rng.normal(size=120)
    return sp.csr_matrix(X), {"2": y2, "4": y4, "r": yr}


def train_save(tmp_path, y, X, options, name="m.model"):
    """LIBSVM trains and saves; returns (path, the model LIBSVM loads back from the file)."""
    m = svmutil.svm_train(y, X, "-q " + options)
    path = tmp_path / name
    svmutil.svm_save_model(str(path), m)
    return path, svmutil.svm_load_model(str(path))


def check_against_libsvm(path, m, X, probability):
    """llsvm's model from `path` predicts X as LIBSVM's m does; returns (max rel diff of dec, max prob diff)."""
    model = load_model(path)
    assert isinstance(model, SVMModel)
    assert model.to_text() == path.read_text()
    labels, dec, prob, plabels = libsvm_predict(m, X, probability)
    ours = model.decision_function(X).reshape(dec.shape)
    d = rel_diff(ours, dec)
    assert d <= 1e-12, d
    np.testing.assert_array_equal(model.predict(X), labels)
    p = 0.0
    if probability:
        assert model.supports_probability
        lab, P = model.predict_probability(X)
        p = float(np.max(np.abs(P - prob)))
        assert p <= 1e-10, p
        np.testing.assert_array_equal(lab, plabels)
    return d, p


# -- LIBSVM -> llsvm ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("b", [0, 1])
@pytest.mark.parametrize("kernel", [0, 1, 2, 3])
@pytest.mark.parametrize("svm_type,target", [("c_svc", "2"), ("c_svc", "4"), ("nu_svc", "2"), ("nu_svc", "4"),
                                             ("one_class", "2"), ("epsilon_svr", "r"), ("nu_svr", "r")])
def test_libsvm_models_predict_alike(toy, tmp_path, svm_type, target, kernel, b):
    X, ys = toy
    st = SVM_TYPES.index(svm_type)
    path, m = train_save(tmp_path, ys[target], X, f"-s {st} -t {kernel} -b {b} -g 0.3 -r 0.5 -d 3 -n 0.2")
    model = load_model(path)
    assert (model.svm_type, model.kernel_type) == (svm_type, ["linear", "polynomial", "rbf", "sigmoid"][kernel])
    assert model.is_regression == (st >= 3)
    assert model.supports_probability == bool(b)
    check_against_libsvm(path, m, X, probability=bool(b) and st <= 2)


@pytest.mark.parametrize("name,options", [("heart_scale", "-s 0 -t 2 -b 1"), ("heart_scale", "-s 0 -t 1 -d 2"),
                                          ("heart_scale", "-s 3 -t 2 -p 0.05"), ("heart_scale", "-s 2 -t 2 -b 1"),
                                          ("iris.scale", "-s 0 -t 2 -b 1"), ("vowel.scale", "-s 0 -t 2 -b 1 -c 10"),
                                          ("vowel.scale", "-s 1 -t 3 -g 0.1 -n 0.05")])
def test_public_sets_predict_alike(shared_plain, tmp_path, name, options):
    """Real data: heart_scale (2 classes, 13 features), iris (3 classes), vowel (11 classes: the pairwise coupling
    of 11 classes, 55 pairwise values)."""
    data = shared_plain(name)
    y, X = svmutil.svm_read_problem(str(data), return_scipy=True)
    path, m = train_save(tmp_path, y, X, options)
    check_against_libsvm(path, m, X, probability="-b 1" in options)
    # llsvm's own reader of the data file gives the same rows
    ds = llsvm.read_dataset(data)
    labels, dec, _, _ = libsvm_predict(m, X)
    assert rel_diff(load_model(path).decision_function(ds).reshape(dec.shape), dec) <= 1e-12


def test_multiclass_decision_layout(toy, tmp_path):
    """k = 4: (n, 6) pairwise values in LIBSVM's order (0,1), (0,2), (0,3), (1,2), (1,3), (2,3); the votes."""
    X, ys = toy
    path, m = train_save(tmp_path, ys["4"], X, "-t 2 -g 0.5")
    model = load_model(path)
    dec = model.decision_function(X)
    assert dec.shape == (X.shape[0], 6)
    assert model.label.tolist() == list(m.get_labels())
    # a tie: every class 1.5 votes is impossible; three classes with one vote each -> the first of them
    three = SVMModel("c_svc", "linear", 3, 0, 0, [0, 0, 0], np.zeros((2, 0)), sp.csr_matrix((0, 1)),
                     label=[5, 6, 7], nSV=[0, 0, 0])
    # (0,1) -> 0, (0,2) -> 2, (1,2) -> 1: one vote each, class index 0 wins
    assert three.labels_from_decisions(np.array([[1.0, -1.0, 1.0]])).tolist() == [5.0]
    # dec == 0 votes for the second class of the pair
    assert three.labels_from_decisions(np.array([[0.0, 0.0, 0.0]])).tolist() == [7.0]


# -- llsvm -> LIBSVM ------------------------------------------------------------------------------------------------

def from_libsvm(m):
    """An SVMModel from a LIBSVM model's arrays (the -s smo driver builds it the same way)."""
    k, l, st = m.get_nr_class(), m.l, m.get_svm_type()
    n_pairs = k * (k - 1) // 2 if st <= 1 else 1
    rows = m.get_SV()
    indptr = np.cumsum([0] + [len(r) for r in rows])
    indices = [j - 1 for r in rows for j in sorted(r)]
    values = [r[j] for r in rows for j in sorted(r)]
    n_features = max(indices) + 1 if indices else 0
    SV = sp.csr_matrix((values, indices, indptr), shape=(l, n_features))
    sv_coef = np.array(m.get_sv_coef(), dtype=np.float64).reshape(l, -1).T
    opt = {}
    if st <= 1:
        opt.update(label=m.get_labels(), nSV=[m.nSV[i] for i in range(k)])
        if m.probA:
            opt.update(probA=[m.probA[i] for i in range(n_pairs)], probB=[m.probB[i] for i in range(n_pairs)])
    elif st == 2 and m.prob_density_marks:
        opt.update(prob_density_marks=[m.prob_density_marks[i] for i in range(10)])
    elif st >= 3 and m.probA:
        opt.update(probA=[m.probA[0]])
    p = m.param
    return SVMModel(st, p.kernel_type, p.degree, p.gamma, p.coef0, [m.rho[i] for i in range(n_pairs)], sv_coef, SV,
                    **opt)


@pytest.mark.parametrize("svm_type,target,options", [("c_svc", "2", "-t 2 -b 1"), ("c_svc", "4", "-t 1 -b 1"),
                                                     ("nu_svc", "4", "-t 3 -n 0.2"), ("one_class", "2", "-t 2 -b 1"),
                                                     ("epsilon_svr", "r", "-t 0 -b 1"), ("nu_svr", "r", "-t 1")])
def test_libsvm_reads_our_models(toy, tmp_path, svm_type, target, options):
    X, ys = toy
    st = SVM_TYPES.index(svm_type)
    path, m = train_save(tmp_path, ys[target], X, f"-s {st} {options} -g 0.3 -r 0.5")
    ours = from_libsvm(m)
    assert ours.to_text() == path.read_text()          # byte for byte what svm_save_model wrote
    out = tmp_path / "ours.model"
    ours.save(out)
    m2 = svmutil.svm_load_model(str(out))
    assert m2 is not None
    prob = "-b 1" in options and st <= 2
    l1, d1, p1, q1 = libsvm_predict(m, X, prob)
    l2, d2, p2, q2 = libsvm_predict(m2, X, prob)
    np.testing.assert_array_equal(l1, l2)
    np.testing.assert_array_equal(d1, d2)
    if prob:
        np.testing.assert_array_equal(p1, p2)
        np.testing.assert_array_equal(q1, q2)
    np.testing.assert_array_equal(ours.predict(X), l1)


def test_constructor_refusals():
    SV = sp.csr_matrix(np.eye(3))
    ok = dict(svm_type="c_svc", kernel_type="rbf", degree=3, gamma=0.5, coef0=0, rho=[0.1], sv_coef=[[1, -1, 0.5]],
              SV=SV, label=[1, -1], nSV=[1, 2])
    SVMModel(**ok)
    for change, msg in [({"kernel_type": "precomputed"}, "a precomputed kernel's SV starts with index 0"),
                        ({"kernel_type": "sigmoidal"}, "unsupported kernel_type 'sigmoidal'"),
                        ({"svm_type": "c_svm"}, "unknown svm_type"),
                        ({"nSV": [2, 2]}, "summing to total_sv 3"),
                        ({"rho": [0.1, 0.2]}, "rho must be 1 values, not 2"),
                        ({"rho": [np.inf]}, r"rho\[0\] is inf, not a finite number"),
                        ({"sv_coef": [[1, 2]]}, "sv_coef has shape"),
                        ({"gamma": -1}, "gamma must be finite and >= 0"),
                        ({"probA": [1.0]}, "probA and probB, or neither"),
                        ({"label": None}, "needs label and nSV"),
                        ({"sv_coef": [[1, np.nan, 0]]},
                         r"sv_coef\[0\]\[1\] is nan \(the coefficient of SV 2\), not a finite number"),
                        ({"SV": sp.csr_matrix(([1.0, 2.0], [2, 1], [0, 2, 2, 2]), shape=(3, 3))},
                         "strictly ascending")]:
        with pytest.raises(ParameterError, match=msg):
            SVMModel(**{**ok, **change})


# -- the blocked predictor ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("svm_type,target", [("c_svc", "4"), ("epsilon_svr", "r")])
def test_blocks_and_float32(toy, tmp_path, svm_type, target):
    """Blocks of 1, 3, 7 test rows (fewer than the SVs and the rows) give the very values of one block; float32
    test rows equal their float64 copies (the kernel reads float32 values as doubles)."""
    X, ys = toy
    path, _ = train_save(tmp_path, ys[target], X, f"-s {SVM_TYPES.index(svm_type)} -t 2 -g 0.3")
    model = load_model(path)
    assert model.total_sv > 7
    whole = model.decision_function(X)
    for b in (1, 3, 7):
        np.testing.assert_array_equal(model.decision_function(X, block_rows=b), whole)
    X32 = CSRDataset.from_csr(X, np.zeros(X.shape[0]), dtype=np.float32)
    X64 = CSRDataset.from_csr(X32.to_csr().astype(np.float64), np.zeros(X.shape[0]))
    assert X32.values.dtype == np.float32
    np.testing.assert_array_equal(model.decision_function(X32, block_rows=5), model.decision_function(X64))
    assert model.decision_function(sp.csr_matrix((0, 6))).shape[0] == 0


# -- llsvm-predict --------------------------------------------------------------------------------------------------

def predict(*args):
    return CliRunner().invoke(predict_main, [str(a) for a in args])


def test_cli_classification_like_svm_predict(shared_plain, tmp_path):
    data = shared_plain("heart_scale")
    y, X = svmutil.svm_read_problem(str(data), return_scipy=True)
    path, m = train_save(tmp_path, y, X, "-t 2 -c 4")
    labels, _, _, _ = libsvm_predict(m, X)
    r = predict(data, path, tmp_path / "out")
    assert_exit(r, 0)
    correct = int((labels == y).sum())
    assert r.stdout == "Accuracy = %g%% (%d/%d) (classification)\n" % (correct / len(y) * 100, correct, len(y))
    assert (tmp_path / "out").read_text() == "".join("%.17g\n" % v for v in labels)
    r = predict("-q", data, path, tmp_path / "out2")
    assert_exit(r, 0)
    assert (r.stdout, r.stderr) == ("", "")
    assert (tmp_path / "out2").read_bytes() == (tmp_path / "out").read_bytes()
    # -b 1 on a model without probabilities: svm-predict's refusal, exit 1, no output
    r = predict("-b", "1", data, path, tmp_path / "out3")
    assert_exit(r, 1)
    assert r.stderr == "Model does not support probability estimates (train it with -b 1)\n"
    assert not (tmp_path / "out3").exists()


def test_cli_probability_like_svm_predict(shared_plain, tmp_path):
    data = shared_plain("iris.scale")
    y, X = svmutil.svm_read_problem(str(data), return_scipy=True)
    path, m = train_save(tmp_path, y, X, "-t 2 -b 1")
    _, _, probs, labels = libsvm_predict(m, X, probability=True)
    r = predict("-b", "1", data, path, tmp_path / "out")
    assert_exit(r, 0)
    head = "labels" + "".join(f" {v}" for v in m.get_labels()) + "\n"
    assert (tmp_path / "out").read_text() == head + "".join(
        "%g" % lab + "".join(" %g" % p for p in row) + "\n" for lab, row in zip(labels, probs))
    correct = int((labels == y).sum())
    assert r.stdout.endswith("Accuracy = %g%% (%d/%d) (classification)\n" % (correct / len(y) * 100, correct,
                                                                               len(y)))
    # without -b: svm-predict's note, then the labels by vote
    r = predict(data, path, tmp_path / "out2")
    assert_exit(r, 0)
    assert r.stdout.startswith("Model supports probability estimates, but disabled in prediction.\n")


def test_cli_one_class_and_svr(toy, tmp_path):
    X, ys = toy
    data = tmp_path / "toy.txt"
    with open(data, "w") as f:
        for i in range(X.shape[0]):
            sl = slice(X.indptr[i], X.indptr[i + 1])
            f.write("%.17g" % ys["r"][i] + "".join(" %d:%.17g" % (j + 1, v) for j, v in
                                                    zip(X.indices[sl], X.data[sl])) + "\n")
    y, Xr = svmutil.svm_read_problem(str(data), return_scipy=True)
    # one-class with -b 1: svm-predict's `label normal outlier` header
    path, m = train_save(tmp_path, y, Xr, "-s 2 -t 2 -b 1 -n 0.3", "oc.model")
    _, _, probs, labels = libsvm_predict(m, Xr, probability=True)
    r = predict("-b", "1", data, path, tmp_path / "oc.out")
    assert_exit(r, 0)
    assert (tmp_path / "oc.out").read_text() == "label normal outlier\n" + "".join(
        "%g %g %g\n" % (lab, p[0], p[1]) for lab, p in zip(labels, probs))
    # SVR: the values in %.17g, svm-predict's two regression lines; -b 1 prints the Laplace note
    path, m = train_save(tmp_path, y, Xr, "-s 3 -t 2 -b 1", "svr.model")
    labels, _, _, _ = libsvm_predict(m, Xr)
    r = predict("-b", "1", data, path, tmp_path / "svr.out")
    assert_exit(r, 0)
    assert (tmp_path / "svr.out").read_text() == "".join("%.17g\n" % v for v in labels)
    sigma = load_model(path).svr_probability
    mse = float(np.mean((labels - y) ** 2))
    lines = r.stdout.splitlines()
    assert lines[:2] == ["Prob. model for test data: target value = predicted value + z,",
                         "z: Laplace distribution e^(-|z|/sigma)/(2sigma),sigma=%g" % sigma]
    assert lines[2] == "Mean squared error = %g (regression)" % mse
    assert lines[3].startswith("Squared correlation coefficient = ") and lines[3].endswith(" (regression)")


# -- malformed files ------------------------------------------------------------------------------------------------

GOOD = ("svm_type c_svc\nkernel_type rbf\ngamma 0.5\nnr_class 2\ntotal_sv 3\nrho 0.25\nlabel 1 -1\nnr_sv 2 1\nSV\n"
        "1 1:0.5 3:1 \n0.5 2:-1 \n-1.5 1:1 2:1 \n")


def _edit(old, new):
    assert old in GOOD
    return GOOD.replace(old, new, 1)


@pytest.mark.parametrize("text,line,message", [
    (_edit("kernel_type rbf", "kernel_type precomputed"), 3, "'gamma' for the precomputed kernel, which has none"),
    (_edit("kernel_type rbf\ngamma 0.5", "kernel_type precomputed"), 9,
     "expected 0:sample_serial_number (an integer from 1 to 2147483647) after the coefficients of a precomputed "
     "kernel's SV, found '1:0.5 3:1'"),
    (_edit("kernel_type rbf", "kernel_type gaussian"), 2,
     "unknown kernel function 'gaussian' (one of linear, polynomial, rbf, sigmoid, precomputed)"),
    (_edit("svm_type c_svc", "svm_type c_svm"), 1, "unknown svm type 'c_svm' (one of c_svc, nu_svc, one_class, "
                                                    "epsilon_svr, nu_svr)"),
    (_edit("gamma 0.5\n", "gamma 0.5\nweight 3\n"), 4, "unknown text in model file: [weight]"),
    (_edit("rho 0.25", "rho 0.25 0.5"), 6, "'rho' lists 2 values for nr_class 2 (1 expected)"),
    (_edit("rho 0.25", "rho 0x1p3"), 6, "'rho' values must be numbers (found '0x1p3')"),
    (_edit("rho 0.25", "rho nan"), 6, "'rho' values must be finite (found 'nan')"),
    (_edit("total_sv 3", "total_sv 3x"), 5, "'total_sv' is not an integer: '3x'"),
    (_edit("total_sv 3", "total_sv 4"), 8, "'nr_sv' sums to 3, not total_sv 4"),
    (_edit("total_sv 3", "total_sv 2000000000"), 5,
     "truncated model file: 2000000000 support vectors with 1 coefficients each cannot fit in "),
    (_edit("nr_sv 2 1", "nr_sv 2 1 0"), 8, "'nr_sv' lists 3 values for nr_class 2 (2 expected)"),
    (_edit("nr_sv 2 1\n", ""), 8, "the header has no 'nr_sv' line (a c_svc model needs it)"),
    (_edit("label 1 -1", "label 1 -1.5"), 7, "'label' values must be integers (found '-1.5')"),
    (_edit("gamma 0.5\n", ""), 8, "the header has no 'gamma' (the rbf kernel uses it)"),
    (_edit("gamma 0.5\n", "gamma 0.5\ncoef0 1\n"), 4, "'coef0' for the rbf kernel, which has none"),
    (_edit("gamma 0.5", "gamma -0.5"), 3, "gamma < 0: '-0.5'"),
    (GOOD.split("SV\n")[0], 9, "no 'SV' line: truncated model file"),
    (_edit("-1.5 1:1 2:1 \n", ""), 12, "expected 3 SV lines (total_sv), found 2"),
    (_edit("-1.5 1:1 2:1 \n", "-1.5 1:1 2:1 \n0 1:1\n"), 13, "expected 3 SV lines (total_sv), found 4"),
    (_edit("0.5 2:-1", "0.5 2:-1 2:3"), 11, "index 2 not ascending (indices are 1-based, strictly ascending)"),
    (_edit("0.5 2:-1", "0.5 0:-1"), 11, "index 0 not positive (indices are 1-based, strictly ascending)"),
    (_edit("0.5 2:-1", "0.5 2-1"), 11, "expected index:value, found '2-1'"),
    (_edit("0.5 2:-1", "0.5 2:inf"), 11, "a value is NaN or infinite (found '2:inf')"),
    (_edit("0.5 2:-1", "x 2:-1"), 11, "a coefficient is not a number (found 'x')"),
    (_edit("0.5 2:-1", ""), 11, "expected 1 coefficients, found 0"),
    (_edit("svm_type c_svc", "svm_type one_class").replace("label 1 -1\nnr_sv 2 1\n", "").replace("nr_class 2",
                                                                                                   "nr_class 3"), 4,
     "nr_class 3 for one_class, whose models have nr_class 2"),
    (_edit("svm_type c_svc", "svm_type epsilon_svr"), 7, "'label' in a epsilon_svr model"),
    (_edit("nr_class 2", "nr_class 3"), 6, "'rho' lists 1 values for nr_class 3 (3 expected)"),
    (_edit("label 1 -1\n", "label 1 -1\nprobA 1\n"), 8, "a classification model has probA and probB, or neither"),
    (_edit("label 1 -1\n", "label 1 -1\nprob_density_marks 1\n"), 8, "'prob_density_marks' in a c_svc model"),
    (_edit("SV\n", "\nSV\n"), 9, "empty line in the model header"),
    (_edit("SV\n", "SV 3\n"), 9, "'SV' must stand alone on its line"),
    (_edit("rho 0.25", "rho 0.25\nrho 1"), 7, "'rho' given twice"),
], ids=lambda v: v if isinstance(v, int) else None)
def test_malformed_kernel_models(tmp_path, text, line, message):
    p = tmp_path / "bad.model"
    p.write_text(text)
    with pytest.raises(ModelFormatError) as ei:
        load_model(p)
    assert str(ei.value).startswith(f"{p}:{line}: {message}"), str(ei.value)
    # llsvm-predict: the same message, exit 1, no traceback, no output file
    data = tmp_path / "t.txt"
    data.write_text("1 1:1\n")
    r = predict(data, p, tmp_path / "out")
    assert_exit(r, 1)
    assert str(p) + f":{line}: " in r.stderr and message in r.stderr
    assert not (tmp_path / "out").exists()


def test_good_model_reads(tmp_path):
    p = tmp_path / "good.model"
    p.write_text(GOOD)
    m = load_model(p)
    assert (m.total_sv, m.nr_class, m.label.tolist(), m.nSV.tolist()) == (3, 2, [1, -1], [2, 1])
    assert m.SV.indices.tolist() == [0, 2, 1, 0, 1]
    assert m.to_text() == GOOD
    # by hand: k(x, sv) = exp(-0.5 |x - sv|^2); dec = sum coef K - rho
    x = np.array([[1.0, 0.0, 0.0]])
    sv = np.array([[0.5, 0, 1], [0, -1, 0], [1, 1, 0]])
    K = np.exp(-0.5 * ((x - sv) ** 2).sum(axis=1))
    assert m.decision_function(sp.csr_matrix(x))[0] == pytest.approx(K @ [1, 0.5, -1.5] - 0.25, rel=1e-15)


def test_size_is_checked_before_allocating(tmp_path):
    """A huge nr_class with no SVs allocates nothing; a huge total_sv is refused against the file's size."""
    p = tmp_path / "huge.model"
    p.write_text("svm_type c_svc\nkernel_type linear\nnr_class 2147483647\ntotal_sv 0\nrho\nlabel 1\nnr_sv 0\nSV\n")
    with pytest.raises(ModelFormatError, match=r":5: 'rho' lists 0 values for nr_class 2147483647"):
        load_model(p)


@pytest.mark.parametrize("float32", [False, True])
def test_cli_binary_input(shared_plain, tmp_path, float32):
    """A binary test file (several blocks) gives what the text file gives: float64 the same bytes; float32 the
    prediction of the float32-rounded rows."""
    data = shared_plain("heart_scale")
    y, X = svmutil.svm_read_problem(str(data), return_scipy=True)
    path, m = train_save(tmp_path, y, X, "-s 0 -t 2 -b 1")
    binary = tmp_path / "heart.bin"
    llsvm.write_binary(data, binary, float32=float32, block_rows=50)
    r = predict("-b", "1", binary, path, tmp_path / "bin.out")
    assert_exit(r, 0)
    X32 = X.astype(np.float32).astype(np.float64) if float32 else X
    _, _, probs, labels = libsvm_predict(m, X32, probability=True)
    assert (tmp_path / "bin.out").read_text() == "labels 1 -1\n" + "".join(
        "%g %g %g\n" % (lab, p[0], p[1]) for lab, p in zip(labels, probs))
    if not float32:
        assert_exit(predict("-b", "1", data, path, tmp_path / "text.out"), 0)
        assert (tmp_path / "text.out").read_bytes() == (tmp_path / "bin.out").read_bytes()


def test_single_class_model(tmp_path):
    """LIBSVM trains a c_svc on one class (nr_class 1, no SV, an empty rho line): every row gets the label, with
    probability 1 under -b 1 (LIBSVM's coupling of one class); the file round-trips."""
    X = sp.csr_matrix(np.random.default_rng(1).normal(size=(10, 3)))
    path, m = train_save(tmp_path, np.full(10, 3.0), X, "-b 1")
    model = load_model(path)
    assert model.to_text() == path.read_text()
    assert (model.nr_class, model.total_sv) == (1, 0)
    assert model.decision_function(X).shape == (10, 0)
    labels, probs = model.predict_probability(X)
    _, _, lp, ll = libsvm_predict(m, X, probability=True)
    np.testing.assert_array_equal(labels, ll)
    np.testing.assert_array_equal(probs, lp)
    np.testing.assert_array_equal(model.predict(X), np.full(10, 3.0))


def test_one_class_bins_as_libsvm():
    """predict_one_class_probability's rule, value by value (the marks themselves, beyond both ends, unsorted
    marks where dec < marks[0] and dec > marks[9] both hold: the first test wins)."""
    def libsvm_rule(d, marks):
        if d < marks[0]:
            return 0.001
        if d > marks[9]:
            return 0.999
        for i in range(1, 10):
            if d < marks[i]:
                return i / 10
        return 0.0

    SV = sp.csr_matrix(np.ones((1, 1)))
    for marks in (np.linspace(-1, 1, 10), np.array([0.5, -1, -0.5, 0, 0.2, 0.1, 0.7, 0.8, 0.9, -2.0])):
        m = SVMModel("one_class", "linear", 3, 0, 0, [0.0], [[1.0]], SV, prob_density_marks=marks)
        dec = np.concatenate([marks, marks + 1e-9, marks - 1e-9, [-5, 5, 0.0]])
        prob = m.probabilities_from_decisions(dec)
        np.testing.assert_array_equal(prob[:, 0], [libsvm_rule(d, marks) for d in dec])
        np.testing.assert_array_equal(prob[:, 1], 1 - prob[:, 0])


# -- the SV lines in C (cext/_libsvm.pyx parse_sv_block) against the reference reader (_sv_lines) ---------------------

SV_TOKENS = ["1", "-0.5", "+2", "1e3", "1E-3", "2.", ".5", "-.5e+2", "0", "-0", "1e999", "inf", "-nan", "infinity",
             "1e", "e5", ".", "+", "x", "0x1p3", "1.5.2", "9007199254740993", "0.1000000000000000055511151231257827",
             "4.9406564584124654e-324", "1.7976931348623157e308", "123456789012345678901234567890"]
SV_PAIRS = ["1:1", "3:-2.5", "5:1e-3", "2147483647:1", "2147483648:1", "0:1", "+7:1", "07:2", "8:", ":1", "9:x",
            "10:1:2", "11:inf", "12:1e999", "13:nan", "a:1", "14:0x10", "99999999999999999999:1", "-3:1", "15:+.5"]


def _reference(lines, m):
    from llsvm.models.svm import _sv_lines

    def bad(ln, msg):
        return ModelFormatError(f"f:{ln}: {msg}")
    try:
        return _sv_lines(lines, 0, m, bad)
    except ModelFormatError as exc:
        return str(exc)


@pytest.mark.parametrize("seed", range(6))
def test_sv_block_reader_matches_the_reference(seed):
    """Random SV lines built from numbers and pairs of every spelling, white space of every kind, m = 0..3: what
    the C reader takes it reads to the same bits as the reference reader; what it hands back, the reference
    reader names (or, for the few spellings only it takes, reads); lines C takes are most of the valid ones."""
    from llsvm._ext._libsvm import parse_sv_block

    rng = np.random.default_rng(seed)
    seps = [" ", " ", "  ", "\t", "\v", "\f", "\r", " \r"]
    taken = 0
    for trial in range(400):
        m = int(rng.integers(0, 4))
        l = int(rng.integers(0, 5))
        lines = []
        for _ in range(l):
            good = rng.random() < 0.7
            toks = [str(rng.choice(SV_TOKENS[:10] if good else SV_TOKENS)) for _ in range(m)]
            prev = 0
            for _ in range(int(rng.integers(0, 4))):
                if good:
                    prev += int(rng.integers(1, 50))
                    toks.append(f"{prev}:{rng.choice(SV_TOKENS[:10])}")
                else:
                    toks.append(str(rng.choice(SV_PAIRS)))
            sep = [str(rng.choice(seps)) for _ in range(len(toks) + 1)]
            lines.append(sep[0] * int(rng.random() < 0.2) + "".join(t + s for t, s in zip(toks, sep[1:])))
        block = "".join(ln + "\n" for ln in lines).encode("ascii")
        got = parse_sv_block(block, m, l)
        ref = _reference(lines, m)
        if isinstance(got, int):
            # handed back at line got + 1: the lines before it are valid, so the reference reader names none of them
            if isinstance(ref, str):
                assert int(ref.split(":")[1]) >= got + 1, (lines, got, ref)
            continue
        taken += 1
        assert not isinstance(ref, str), (lines, ref)
        for a, b in zip(got, ref):
            if isinstance(a, np.ndarray):
                assert a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes(), (lines, a, b)
            else:
                assert a == b, (lines, a, b)
    assert taken > 100


def test_sv_block_reader_takes_written_models(toy, tmp_path):
    """The C reader reads every SV line LIBSVM's svm_save_model and llsvm's writer produce (no fall-back to the
    reference reader): a whole model's block is taken in one call."""
    from llsvm._ext._libsvm import parse_sv_block

    X, ys = toy
    GOODS = [GOOD]
    for target, options in (("4", "-t 2 -b 1"), ("r", "-s 3 -t 1 -d 2"), ("2", "-s 2 -t 3")):
        path, _ = train_save(tmp_path, ys[target], X, options)
        GOODS.append(path.read_text())
        model = load_model(path)
        model.save(tmp_path / "ours.model")
        GOODS.append((tmp_path / "ours.model").read_text())
    for text in GOODS:
        head, body = text.split("SV\n", 1)
        k = int(head.split("nr_class ")[1].split()[0])
        l = int(head.split("total_sv ")[1].split()[0])
        got = parse_sv_block(body.encode(), k - 1, l)
        assert not isinstance(got, int), got
        assert load_model_text(tmp_path, text).to_text() == text


def load_model_text(tmp_path, text):
    p = tmp_path / "rt.model"
    p.write_text(text)
    return load_model(p)


def test_sv_index_order_checked_within_rows_only():
    """Indices ascend within each row; across a row boundary (empty rows too) they may go down."""
    def model(indptr, indices):
        SV = CSRDataset(np.zeros(len(indptr) - 1), np.array(indptr, np.int64), np.array(indices, np.int32),
                        np.ones(len(indices)), 10)
        return SVMModel("c_svc", "rbf", 3, 0.5, 0, [0.1], np.ones((1, len(indptr) - 1)), SV, label=[1, -1],
                        nSV=[len(indptr) - 2, 1])
    assert model([0, 1, 1, 3], [5, 0, 2]).SV.indices.tolist() == [5, 0, 2]
    assert model([0, 2, 3], [1, 7, 0]).total_sv == 2
    for indptr, indices in (([0, 2, 2], [3, 3]), ([0, 1, 3], [2, 4, 1]), ([0, 0, 3], [0, 5, 5])):
        with pytest.raises(ParameterError, match="strictly ascending within each row"):
            model(indptr, indices)
