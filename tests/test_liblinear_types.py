"""LIBLINEAR's other solver types: -s 0, 4, 5, 6, 7, 11, 12, 13, 21 (llsvm/solvers/newton.py, l2dual.py, l1r.py;
cext/_l2dual.pyx, cext/_l1r.pyx), and what comes with them: regression and one-class models and output, -b 1,
-C for -s 0 and -s 11, -v for regression.

- each kernel against the NumPy twin (tests/reference/liblinear_twin.py: the optimum by L-BFGS-B or cvxopt, never
  coordinate descent) on tiny problems, at a tight -e: objective and optimality conditions, with the driver's
  certificate (primal, dual, gap, violation) checked against the twin's definitions;
- parity with liblinear-official on shared sets: the objective at the same -e, predictions, and models read both
  ways (llsvm's model by LIBLINEAR's loader and predict, LIBLINEAR's by llsvm-predict);
- -b 1 probabilities equal to LIBLINEAR's predict_probability to 1e-6;
- the output lines of train, -v, -C and predict against liblinear-official's own output (numbers masked where the
  two runs' random orders differ).
"""
import ctypes
import re
import subprocess
import sys

import numpy as np
import pytest
from click.testing import CliRunner

import llsvm
from llsvm.cli.predict import main as predict_main
from llsvm.cli.train import main as train_main
from llsvm.dataset import CSRDataset
from llsvm.models import load_model
from llsvm.params import Params
from llsvm.solvers.trainer import cross_validation, find_parameter_C, train
from reference import liblinear_twin as T

CLASSIFY = (0, 4, 5, 6, 7)
REGRESS = (11, 12, 13)
NEW = (0, 4, 5, 6, 7, 11, 12, 13, 21)


@pytest.fixture(scope="session")
def LL():
    from liblinear import liblinearutil     # a test dependency: missing is a failure, not a skip
    return liblinearutil


def ll_srand(seed=1):
    """LIBLINEAR's solvers call the C library's rand() and never seed it: seed it, so that liblinear-official's
    results do not depend on what ran before in this process."""
    ctypes.CDLL(None).srand(seed)


def tiny(seed, l=40, n=6, kind="binary"):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (l, n))
    X[rng.random((l, n)) < 0.3] = 0.0
    w = rng.normal(size=n)
    z = X @ w + 0.1 * rng.normal(size=l)
    if kind == "regression":
        y = z
    elif kind == "multiclass":
        y = np.digitize(z, np.quantile(z, [1 / 3, 2 / 3])).astype(np.float64) + 1.0
    else:
        y = np.where(z > 0, 1.0, -1.0)
    return X, y


def dense_with_bias(ds, bias):
    X = ds.to_csr().toarray()
    return np.hstack([X, np.full((X.shape[0], 1), bias)]) if bias >= 0 else X


# ---------------------------------------------------------------------------------------------------------------
# the kernels against the twin

@pytest.mark.parametrize("seed", [1, 2])
@pytest.mark.parametrize("solver,C,eps", [(0, 0.7, 1e-8), (5, 0.7, 1e-8), (6, 0.7, 1e-8), (7, 0.7, 1e-7),
                                          (11, 0.7, 1e-8), (12, 0.7, 1e-7), (13, 0.05, 1e-7)])
@pytest.mark.parametrize("bias", [-1.0, 1.0])
def test_binary_and_regression_types_reach_the_twins_optimum(seed, solver, C, eps, bias):
    X, y = tiny(seed, kind="regression" if solver in REGRESS else "binary")
    import scipy.sparse as sp
    ds = CSRDataset.from_csr(sp.csr_matrix(X), y)
    model = train(ds, solver=solver, C=C, eps=eps, bias=bias, max_iter=100000 if solver in (12, 13) else None)
    Xb = dense_with_bias(ds, bias)
    w_ref = T.solve(solver, Xb, y if solver in REGRESS else np.where(y == model.label[0], 1.0, -1.0),
                    np.full(y.size, C))
    ys = y if solver in REGRESS else np.where(y == model.label[0], 1.0, -1.0)
    f_ref = T.primal(solver, w_ref, Xb, ys, np.full(y.size, C))
    f = T.primal(solver, model.W[:, 0], Xb, ys, np.full(y.size, C))
    assert f <= f_ref * (1 + 1e-5) + 1e-9, (f, f_ref)
    assert f >= f_ref * (1 - 1e-6) - 1e-9
    res = model.meta["results"][0]
    assert res.primal == pytest.approx(f, rel=1e-9)             # the driver's certificate, by the twin's definition
    if solver not in (5, 6, 13):
        assert T.kkt_violation(solver, model.W[:, 0], Xb, ys, np.full(y.size, C)) < 1e-3
    if solver not in (5, 6):                                     # a dual: weak duality and a small gap
        assert res.gap >= -1e-7 * max(1.0, abs(f))
        assert res.gap <= 1e-4 * max(1.0, abs(f))


@pytest.mark.parametrize("solver,eps", [(0, 1e-8), (5, 1e-8), (6, 1e-6), (11, 1e-8)])
def test_unregularized_bias_reaches_the_twins_optimum(solver, eps):
    """-R -B 1: the bias weight is left out of the regularizer (L2 and L1 alike)."""
    import scipy.sparse as sp
    X, y = tiny(5, kind="regression" if solver in REGRESS else "binary")
    X[:, 0] += 2.0                                   # an offset only a free bias absorbs cheaply
    ds = CSRDataset.from_csr(sp.csr_matrix(X), y)
    model = train(ds, solver=solver, C=0.7, eps=eps, bias=1.0, regularize_bias=False)
    Xb = dense_with_bias(ds, 1.0)
    ys = y if solver in REGRESS else np.where(y == model.label[0], 1.0, -1.0)
    C = np.full(y.size, 0.7)
    f = T.primal(solver, model.W[:, 0], Xb, ys, C, regularize_bias=False)
    f_ref = T.primal(solver, T.solve(solver, Xb, ys, C, regularize_bias=False), Xb, ys, C, regularize_bias=False)
    assert f_ref * (1 - 1e-6) - 1e-9 <= f <= f_ref * (1 + 1e-5) + 1e-9
    # and it differs from the regularized problem's optimum
    f_reg = T.primal(solver, T.solve(solver, Xb, ys, C), Xb, ys, C, regularize_bias=False)
    assert f < f_reg


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_mcsvm_reaches_the_twins_optimum(seed):
    import scipy.sparse as sp
    X, y = tiny(seed, l=45, kind="multiclass")
    model = train(CSRDataset.from_csr(sp.csr_matrix(X), y), solver=4, C=0.5, eps=1e-6, weights={2: 2.0})
    cls = np.array([list(model.label).index(int(v)) for v in y])
    Cc = np.array([0.5 * (2.0 if lab == 2 else 1.0) for lab in model.label])
    f = T.mcsvm_primal(model.W, X, cls, Cc)
    f_ref = T.mcsvm_primal(T.mcsvm_solve(X, cls, Cc), X, cls, Cc)
    assert f_ref <= f <= f_ref * (1 + 1e-4) + 1e-8
    res = model.meta["results"][0]
    assert res.primal == pytest.approx(f, rel=1e-9)
    assert -1e-8 <= res.gap <= 1e-3 * f


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("nu", [0.1, 0.5, 0.83])
def test_oneclass_reaches_the_twins_optimum(seed, nu):
    import scipy.sparse as sp
    X, y = tiny(seed, l=50)
    X = X + 0.5                                        # away from the origin, as one-class data is
    model = train(CSRDataset.from_csr(sp.csr_matrix(X), y), solver=21, nu=nu, eps=1e-8)
    res = model.meta["results"][0]
    alpha = res.alpha
    assert alpha.min() >= 0 and alpha.max() <= 1 and alpha.sum() == pytest.approx(nu * X.shape[0], rel=1e-12)
    np.testing.assert_allclose(model.W[:, 0], X.T @ alpha, atol=1e-10)
    d = T.oneclass_dual(alpha, X)
    d_ref = T.oneclass_dual(T.oneclass_solve(X, nu), X)
    assert d_ref - 1e-8 <= d <= d_ref * (1 + 1e-5) + 1e-9
    assert model.rho == pytest.approx(T.oneclass_rho(alpha, X), rel=1e-9)
    assert -1e-8 <= res.gap <= 1e-4 * max(1.0, d)
    # the model predicts +1 where w.x > rho
    pred = model.predict(X)
    dec = X @ model.W[:, 0] - model.rho
    clear = np.abs(dec) > 1e-9                       # free support vectors lie on the boundary
    np.testing.assert_array_equal(pred[clear], np.where(dec[clear] > 0, 1.0, -1.0))


# ---------------------------------------------------------------------------------------------------------------
# parity with liblinear-official

def ll_objective(solver, W, ds, bias, labels, C=1.0, p=0.1, rho=None):
    """One definition of every type's objective (the twin's), for llsvm's and LIBLINEAR's weights alike."""
    X = dense_with_bias(ds, bias)
    y = ds.y
    if solver == 4:
        cls = np.array([list(labels).index(int(v)) for v in y])
        return T.mcsvm_primal(W, X, cls, np.full(len(labels), C))
    if solver == 21:
        return 0.5 * float(W[:, 0] @ W[:, 0])
    if solver in REGRESS:
        return T.primal(solver, W[:, 0], X, y, np.full(y.size, C), p=p)
    labels = list(labels)
    cols = [labels[0]] if len(labels) == 2 else labels
    return sum(T.primal(solver, W[:, k], X, np.where(np.trunc(y) == lab, 1.0, -1.0), np.full(y.size, C))
               for k, lab in enumerate(cols))


def ll_W(m):
    nr_w = 1 if m.nr_class == 2 and m.param.solver_type != 4 else m.nr_class
    w_size = m.nr_feature + (1 if m.bias >= 0 else 0)
    return np.array([m.w[i] for i in range(w_size * nr_w)], dtype=np.float64).reshape(w_size, nr_w)


PARITY = [
    # (solver, set, options, relative objective tolerance at the same -e)
    (0, "heart_scale", "", 1e-9), (0, "dna.scale", "-B 1", 1e-6), (0, "a9a", "-R -B 1", 1e-6),
    (7, "heart_scale", "-e 0.001", 1e-5), (7, "dna.scale", "", 1e-3),
    (5, "heart_scale", "-e 0.0001", 1e-5), (5, "dna.scale", "-e 0.0001", 1e-4), (5, "a9a", "-B 1 -R -e 0.001", 1e-4),
    (6, "heart_scale", "-e 0.0001", 1e-5), (6, "dna.scale", "-e 0.0001", 1e-4), (6, "splice", "-B 1 -R -e 0.001", 1e-3),
    (4, "heart_scale", "-e 0.01", 1e-3), (4, "dna.scale", "-e 0.001", 1e-3), (4, "iris.scale", "-B 1 -e 0.01", 1e-3),
    (11, "heart_scale", "", 1e-9), (11, "dna.scale", "-p 0.5 -B 1", 1e-3),
    (12, "heart_scale", "-e 0.001", 1e-4), (12, "dna.scale", "", 1e-3),
    (13, "heart_scale", "-e 0.01", 1e-3), (13, "dna.scale", "-c 0.1 -e 0.001", 1e-3),
    (21, "heart_scale", "", 1e-6), (21, "dna.scale", "-n 0.2", 1e-6), (21, "splice", "-e 0.001", 1e-6),
]


def _opts(options):
    kw = {}
    toks = options.split()
    i = 0
    while i < len(toks):
        t = toks[i]
        if t == "-R":
            kw["regularize_bias"] = False
            i += 1
            continue
        v = float(toks[i + 1])
        kw[{"-B": "bias", "-e": "eps", "-p": "svr_p", "-n": "nu", "-c": "C"}[t]] = v
        i += 2
    return kw


@pytest.mark.parametrize("solver,name,options,tol", PARITY)
def test_parity_with_liblinear(LL, load, tmp_path, solver, name, options, tol):
    ds = load(name)
    kw = _opts(options)
    bias = kw.get("bias", -1.0)
    ll_srand()
    m = LL.train(ds.y, ds.to_csr(), f"-s {solver} {options} -q")
    model = train(ds, solver=solver, **kw)
    labels = None if model.label is None else model.label
    if labels is not None:
        assert [int(v) for v in m.get_labels()] == list(labels)
    p = kw.get("svr_p", 0.1)
    f_ll = ll_objective(solver, ll_W(m), ds, bias, labels, p=p)
    f = ll_objective(solver, model.W, ds, bias, labels, p=p)
    assert abs(f - f_ll) <= tol * abs(f_ll), (f, f_ll)
    if solver == 21:
        assert model.rho == pytest.approx(m.rho, rel=1e-5, abs=1e-9)
    # models read both ways: LIBLINEAR's loader and predict on llsvm's file, llsvm's on LIBLINEAR's
    mine, theirs = tmp_path / "llsvm.model", tmp_path / "liblinear.model"
    model.save(mine)
    LL.save_model(str(theirs), m)
    X = ds.to_csr()
    p_ll_mine = np.asarray(LL.predict(ds.y, X, LL.load_model(str(mine)), "-q")[0])
    np.testing.assert_allclose(p_ll_mine, model.predict(ds), rtol=1e-12, atol=1e-12)
    p_ll = np.asarray(LL.predict(ds.y, X, m, "-q")[0])
    np.testing.assert_allclose(load_model(theirs).predict(ds), p_ll, rtol=1e-12, atol=1e-12)
    if solver in REGRESS:
        mse, mse_ll = np.mean((model.predict(ds) - ds.y) ** 2), np.mean((p_ll - ds.y) ** 2)
        assert abs(mse - mse_ll) <= 0.01 * mse_ll
    else:
        assert np.mean(model.predict(ds) == p_ll) >= 0.99


def test_threads_give_the_same_models(load):
    ds = load("dna.scale")
    for solver in (0, 5, 6, 7):
        a = train(ds, solver=solver, threads=1, seed=3)
        b = train(ds, solver=solver, threads=2, seed=3)
        np.testing.assert_array_equal(a.W, b.W)


# ---------------------------------------------------------------------------------------------------------------
# probabilities

@pytest.mark.parametrize("solver,name", [(0, "heart_scale"), (7, "heart_scale"), (6, "dna.scale"), (0, "iris.scale")])
def test_probabilities_equal_liblinear(LL, load, tmp_path, solver, name):
    ds = load(name)
    path = tmp_path / "m.model"
    train(ds, solver=solver).save(path)
    m = LL.load_model(str(path))
    labs, _, probs = LL.predict(ds.y, ds.to_csr(), m, "-b 1 -q")
    data = tmp_path / "data.txt"
    from llsvm.io import dump_text
    dump_text(ds, data)
    out = tmp_path / "out.txt"
    r = CliRunner().invoke(predict_main, ["-b", "1", str(data), str(path), str(out)])
    assert r.exit_code == 0, r.output
    lines = out.read_text().splitlines()
    assert lines[0] == "labels " + " ".join(str(int(v)) for v in m.get_labels())
    got = np.array([[float(t) for t in ln.split()] for ln in lines[1:]])
    np.testing.assert_array_equal(got[:, 0], labs)
    np.testing.assert_allclose(got[:, 1:], np.asarray(probs), atol=1e-6, rtol=0)


# ---------------------------------------------------------------------------------------------------------------
# output lines

def _liblinear_output(args, data):
    """What liblinear-official's train prints (its C code, through the Python binding, stdout of a subprocess)."""
    code = ("import ctypes, sys\nfrom liblinear.liblinearutil import svm_read_problem, train\n"
            "ctypes.CDLL(None).srand(1)\ny, x = svm_read_problem(sys.argv[2])\n"
            "r = train(y, x, sys.argv[1])\nprint('RESULT', r)\n")
    out = subprocess.run([sys.executable, "-c", code, " ".join(args), str(data)], capture_output=True, text=True,
                         check=True)
    return out.stdout


def _mask(text):
    """Numbers -> N, runs of progress characters -> P (the two runs' random orders differ)."""
    text = re.sub(r"[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?", "N", text)
    text = re.sub(r"[.*#]+(?=\n|N)", "P", text)
    return text


@pytest.mark.parametrize("solver", NEW)
def test_train_output_lines_match_liblinear(shared_plain, tmp_path, solver):
    data = shared_plain("heart_scale")
    args = ["-s", str(solver)]
    theirs = _liblinear_output(args, data).split("RESULT")[0]
    r = CliRunner().invoke(train_main, args + [str(data), str(tmp_path / "m")])
    assert r.exit_code == 0, r.output
    if solver in (0, 11, 21):      # deterministic: the very same text
        assert r.output == theirs
    else:
        assert _mask(r.output) == _mask(theirs)


@pytest.mark.parametrize("solver", [4, 7, 12, 13])
def test_dual_objective_values_match_liblinears_printed_ones(shared_plain, tmp_path, solver):
    """The dual solvers' `Objective value` lines (LIBLINEAR's measure at the same -e) within 1e-3 relative."""
    data = shared_plain("dna.scale")
    args = ["-s", str(solver)]
    theirs = _liblinear_output(args, data)
    r = CliRunner().invoke(train_main, args + [str(data), str(tmp_path / "m")])
    f_ll = [float(v) for v in re.findall(r"Objective value = (\S+)", theirs)]
    f = [float(v) for v in re.findall(r"Objective value = (\S+)", r.output)]
    assert len(f) == len(f_ll) >= 1
    assert sum(f) == pytest.approx(sum(f_ll), rel=1e-3)


@pytest.mark.parametrize("solver", [11, 12, 13])
def test_regression_cross_validation_lines(shared_plain, tmp_path, solver):
    data = shared_plain("heart_scale")
    r = CliRunner().invoke(train_main, ["-s", str(solver), "-v", "4", "-q", str(data)])
    assert r.exit_code == 0, r.output
    ds = llsvm.read_dataset(data, class_labels=False)
    target = cross_validation(ds, 4, solver=solver)
    mse = float(np.mean((target - ds.y) ** 2))
    scc = float(np.corrcoef(target, ds.y)[0, 1] ** 2)
    assert r.output == (f"Cross Validation Mean squared error = {mse:g}\n"
                        f"Cross Validation Squared correlation coefficient = {scc:g}\n")
    theirs = _liblinear_output(["-s", str(solver), "-v", "4", "-q"], data)
    assert _mask(theirs.split("RESULT")[0]) == _mask(r.output)


def test_find_C_for_logistic_regression_lines(shared_plain, tmp_path):
    data = shared_plain("heart_scale")
    r = CliRunner().invoke(train_main, ["-s", "0", "-C", str(data)])
    assert r.exit_code == 0, r.output
    theirs = _liblinear_output(["-s", "0", "-C"], data).split("RESULT")[0]
    lines = r.output.splitlines()
    # the C library prints the log2c lines (the first and last lines are train.c's, not the library's)
    assert _mask("\n".join(lines[1:-1])) == _mask("\n".join(theirs.splitlines()[:len(lines) - 2]))
    assert lines[0] == "Doing parameter search with 5-fold cross validation."
    assert all(re.fullmatch(r"log2c=[ -]\s*-?\d+\.\d\d\trate=\S+", ln) for ln in lines[1:-1]), lines
    assert re.fullmatch(r"Best C = \S+  CV accuracy = \S+%", lines[-1])


def test_find_C_and_p_for_svr(shared_plain, tmp_path):
    data = shared_plain("heart_scale")
    r = CliRunner().invoke(train_main, ["-s", "11", "-C", "-v", "3", str(data)])
    assert r.exit_code == 0, r.output
    lines = r.output.splitlines()
    assert lines[0] == "Doing parameter search with 3-fold cross validation."
    body = [ln for ln in lines[1:-1] if ln != "WARNING: maximum C reached."]
    assert body and all(re.fullmatch(r"log2c=[ -]\s*-?\d+\.\d\d\tp=\s*\d+\.\d\d\tMean squared error=\S+", ln)
                        for ln in body), body
    # p runs from 19/20 of max |y| down to 0, as LIBLINEAR's find_parameters
    ps = [float(re.search(r"p=\s*(\S+)", ln).group(1)) for ln in body]
    assert ps[0] == pytest.approx(0.95, abs=0.005) and ps[-1] == 0.0
    m = re.fullmatch(r"Best C = (\S+) Best p = (\S+)  CV MSE = (\S+)", lines[-1])
    assert m
    ds = llsvm.read_dataset(data, class_labels=False)
    best_C, best_p, best_mse = find_parameter_C(ds, 3, solver=11)
    assert (float(m.group(1)), float(m.group(2)), float(m.group(3))) == pytest.approx(
        (best_C, best_p, best_mse), rel=1e-5)
    theirs = _liblinear_output(["-s", "11", "-C", "-v", "3"], data).split("RESULT")[0]
    assert theirs.splitlines()[0].startswith("log2c=") and "\tp=" in theirs.splitlines()[0]


@pytest.mark.parametrize("solver", [11, 21])
def test_predict_output_for_regression_and_oneclass(LL, shared_plain, tmp_path, solver):
    data = shared_plain("heart_scale")
    model = tmp_path / "m.model"
    assert CliRunner().invoke(train_main, ["-s", str(solver), "-q", str(data), str(model)]).exit_code == 0
    out = tmp_path / "out"
    r = CliRunner().invoke(predict_main, [str(data), str(model), str(out)])
    assert r.exit_code == 0, r.output
    y, x = LL.svm_read_problem(str(data))
    labs, (acc, mse, scc), _ = LL.predict(y, x, LL.load_model(str(model)), "-q")
    if solver == 11:
        assert r.output == (f"Mean squared error = {mse:g} (regression)\n"
                            f"Squared correlation coefficient = {scc:g} (regression)\n")
        np.testing.assert_allclose([float(v) for v in out.read_text().split()], labs, rtol=1e-15)
    else:
        correct = int(round(acc * len(y) / 100))
        assert r.output == f"Accuracy = {acc:g}% ({correct}/{len(y)})\n"
        assert [float(v) for v in out.read_text().split()] == labs
    r = CliRunner().invoke(predict_main, ["-b", "1", str(data), str(model), str(out)])
    assert r.exit_code == 1 and "probability output is only supported for logistic regression" in r.output


# ---------------------------------------------------------------------------------------------------------------
# options and refusals

def test_option_checks():
    with pytest.raises(llsvm.errors.ParameterError, match="prob->bias >=0, but this is ignored in ONECLASS_SVM"):
        Params(solver=21, bias=1.0).check()
    with pytest.raises(llsvm.errors.ParameterError, match="p < 0"):
        Params(solver=11, svr_p=-1).check()
    with pytest.raises(llsvm.errors.ParameterError, match="-R option supported only"):
        Params(solver=7, bias=1.0, regularize_bias=False).check()
    for s in (0, 5, 6, 11):
        Params(solver=s, bias=1.0, regularize_bias=False).check()


def test_cli_refusals(shared_plain, tmp_path):
    data = str(shared_plain("heart_scale"))
    run = CliRunner().invoke
    r = run(train_main, ["-s", "5", "-C", data])
    assert r.exit_code == 1 and "Warm-start parameter search only available for -s 0" in r.output
    r = run(train_main, ["-s", "0", "-p", "0.2", data])
    assert r.exit_code == 1 and "-p applies only to -s 11, -s 12, -s 13 and -s epsilon_svr" in r.output
    r = run(train_main, ["-s", "21", "-B", "1", data])
    assert r.exit_code == 1 and "ONECLASS_SVM" in r.output
    r = run(train_main, ["-s", "21", "-c", "2", data, str(tmp_path / "m")])
    assert r.exit_code == 0 and "-c does not apply to -s 21" in r.stderr
    r = run(train_main, ["-s", "21", "-c", "2", "-q", data, str(tmp_path / "m")])
    assert r.exit_code == 0 and r.output == ""          # -q: nothing but errors (issue 43)


def test_regression_targets_are_real_values(tmp_path):
    data = tmp_path / "r.txt"
    data.write_text("0.25 1:1\n-1.5 1:2\n3e9 1:-1\n")
    r = CliRunner().invoke(train_main, ["-s", "11", "-q", str(data), str(tmp_path / "m")])
    assert r.exit_code == 0, r.output
    text = (tmp_path / "m").read_text()
    assert "solver_type L2R_L2LOSS_SVR\n" in text and "label" not in text


def test_iteration_limit_switches_like_liblinear(load):
    ds = load("heart_scale")
    out = []
    train(ds, solver=7, max_iter=2, say=out.append)
    assert "\nWARNING: reaching max number of iterations\nSwitching to use -s 0\n\n" in "".join(out)
    out = []
    train(ds, solver=12, max_iter=2, say=out.append)
    assert "\nWARNING: reaching max number of iterations\nSwitching to use -s 11\n\n" in "".join(out)
    out = []
    train(ds, solver=13, max_iter=2, say=out.append)
    assert "\nWARNING: reaching max number of iterations\nUsing -s 11 may be faster (also see FAQ)\n\n" in "".join(out)


def test_columns_are_checked_against_the_memory(load, monkeypatch):
    """-s 5 and -s 6 copy the data into columns, as LIBLINEAR's transpose: the copy is checked before it is made."""
    from llsvm import memory
    ds = load("heart_scale")
    monkeypatch.setattr(memory, "available", lambda: 20_000)
    with pytest.raises(memory.MemoryLimitError, match=r"the columns of 270 rows with 3378 non-zeros .* take "):
        train(ds, solver=5)


def test_output_into_a_closed_pipe_still_writes_the_model(shared_plain, tmp_path):
    """`llsvm-train ... | head -1`: once the reader has gone the output goes nowhere, quietly, and the model is still
    written (no 'internal error', exit 0)."""
    import os
    data = shared_plain("dna.scale")
    model = tmp_path / "m.model"
    r, w = os.pipe()
    os.close(r)                                   # the reader has gone before the first line
    try:
        p = subprocess.run([sys.executable, "-m", "llsvm.cli.train", "-s", "6", str(data), str(model)], stdout=w,
                           stderr=subprocess.PIPE, text=True, timeout=600)
    finally:
        os.close(w)
    assert p.returncode == 0 and p.stderr == ""
    assert model.read_text().startswith("solver_type L1R_LR\n")


@pytest.mark.parametrize("bias,regularize", [(-1.0, True), (1.0, True), (1.0, False)])
def test_l1_certificates_from_the_kernels_equal_a_full_pass(load, bias, regularize):
    """-s 5 takes its margins from the kernel's b, -s 6 its loss and violation from the kernel's exp(w.x) and last
    gradient: the same figures as a pass over the data (l1r.certify from the row view)."""
    from llsvm.solvers import l1r
    from llsvm.solvers.common import Subproblem
    ds = load("heart_scale")
    for solver in (5, 6):
        m = train(ds, solver=solver, bias=bias, regularize_bias=regularize)
        r = m.meta["results"][0]
        y = np.where(ds.y == m.label[0], 1, -1).astype(np.int8)
        primal, viol, nSV = l1r.certify(Subproblem(ds, y, 1.0, 1.0, bias=bias), r.w, solver == 5, regularize)
        assert r.primal == pytest.approx(primal, rel=1e-12)
        assert r.max_violation == pytest.approx(viol, rel=1e-9, abs=1e-12)
        assert r.nSV == nSV


def test_crammer_singer_dual_is_checked_against_the_memory(load, monkeypatch):
    """-s 4 holds l x nr_class dual variables: they are checked before they are made."""
    from llsvm import memory
    ds = load("heart_scale")
    monkeypatch.setattr(memory, "available", lambda: 5_000)
    with pytest.raises(memory.MemoryLimitError, match=r"-s 4's dual variables for 270 rows and 2 classes take "):
        train(ds, solver=4)


@pytest.mark.parametrize("solver", (0, 1, 2, 3, 4, 5, 6, 7, 11, 12, 13, 21))
def test_rows_without_features_give_liblinears_model(tmp_path, solver):
    """Labels and no feature at all, no bias: w is empty. Every type writes LIBLINEAR's model file (-s 11, 12 and 13
    used to end with an internal error reshaping the empty w)."""
    data = tmp_path / "empty"
    data.write_text("1\n-1\n2\n1\n")
    code = ("import ctypes, sys\nfrom liblinear.liblinearutil import svm_read_problem, train, save_model\n"
            "ctypes.CDLL(None).srand(1)\ny, x = svm_read_problem(sys.argv[2])\n"
            "save_model(sys.argv[3], train(y, x, sys.argv[1]))\n")
    subprocess.run([sys.executable, "-c", code, f"-s {solver} -q", str(data), str(tmp_path / "theirs")], check=True,
                   capture_output=True)
    r = CliRunner().invoke(train_main, ["-s", str(solver), "-q", str(data), str(tmp_path / "ours")])
    assert r.exit_code == 0, r.output
    assert (tmp_path / "ours").read_bytes() == (tmp_path / "theirs").read_bytes()
