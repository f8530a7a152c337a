"""Instance weights (issue 46, docs/weights.md): a row of weight W_i costs C_i = C x class weight x W_i.

- weighted models against scikit-learn's own LinearSVC, LogisticRegression(solver="liblinear") and LinearSVR,
  whose vendored LIBLINEAR is the weights extension (the same sample_weight): the objective within 1e-6 relative
  for the Newton and L1 solvers, 1e-4 for the randomised dual CD at a tight tolerance, and the same predictions;
- integer weights give the model of the rows repeated that many times (Newton: to 1e-9);
- a row of weight 0 has no effect (the model of the other rows, bit for bit), all weights 1 are no weights;
- -W weight_file on llsvm-train, its errors at file and line, and the solvers that refuse weights.
"""
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
import sklearn.linear_model as skl
import sklearn.svm as sks
from click.testing import CliRunner
from conftest import assert_exit, linear_primal

import llsvm
import llsvm.sklearn as S
from llsvm.cli.train import main as train_main
from llsvm.dataset import CSRDataset
from llsvm.errors import ParameterError

SETS = ("heart_scale", "diabetes", "breast-cancer")
WEIGHTED = (0, 1, 2, 3, 5, 6, 7, 11, 12, 13)
REGRESSION = (11, 12, 13)


def _weights(n, seed=0, zeros=5):
    rng = np.random.RandomState(seed)
    w = rng.uniform(0.0, 3.0, n)
    w[rng.choice(n, zeros, replace=False)] = 0.0
    return w


def _xy(load, name):
    ds = load(name)
    X = ds.to_csr().toarray()
    X /= np.maximum(np.abs(X).max(axis=0), 1e-300)      # scaled to [-1, 1] (diabetes' and breast-cancer's are not)
    y = np.where(ds.y == ds.y.max(), 1.0, -1.0)       # breast-cancer: 2 and 4
    return X, y


def _target(X, seed=1):
    rng = np.random.RandomState(seed)
    return X @ rng.randn(X.shape[1]) + 0.1 * rng.randn(X.shape[0])


def _objective(kind, coef, intercept, X, t, sw, C=1.0, p=0.1):
    """LIBLINEAR's primal of the weighted problem with the bias coordinate regularized (intercept_scaling 1); -s 6's
    with |w|_1."""
    w = np.append(np.ravel(coef), intercept)
    Xb = np.hstack([X, np.ones((X.shape[0], 1))])
    if kind.endswith("_l1"):
        return np.abs(w).sum() + linear_primal(Xb, t, w, C, kind[:-3], p, sw) - 0.5 * float(w @ w)
    return linear_primal(Xb, t, w, C, kind, p, sw)


# (id, llsvm estimator, scikit-learn's, objective, rtol, regression); scikit-learn's liblinear seeded (random_state=0):
# unseeded it takes its seed from NumPy's global state, which the tests run before move (a -s 13 run then stops at
# max_iter far from the optimum)
CASES = [
    ("s0", lambda: S.LogisticRegression(solver="liblinear", tol=1e-10, max_iter=1000),
     lambda: skl.LogisticRegression(random_state=0, solver="liblinear", tol=1e-10, max_iter=1000), "log", 1e-6, False),
    ("s1", lambda: S.LinearSVC(dual=True, tol=1e-8, max_iter=100_000),
     lambda: sks.LinearSVC(random_state=0, dual=True, tol=1e-8, max_iter=100_000), "squared_hinge", 1e-4, False),
    ("s2", lambda: S.LinearSVC(dual=False, tol=1e-10),
     lambda: sks.LinearSVC(random_state=0, dual=False, tol=1e-10), "squared_hinge", 1e-6, False),
    ("s3", lambda: S.LinearSVC(dual=True, loss="hinge", tol=1e-8, max_iter=100_000),
     lambda: sks.LinearSVC(random_state=0, dual=True, loss="hinge", tol=1e-8, max_iter=100_000), "hinge", 1e-4, False),
    ("s5", lambda: S.LinearSVC(penalty="l1", dual=False, tol=1e-10, max_iter=10_000),
     lambda: sks.LinearSVC(random_state=0,
                           penalty="l1", dual=False, tol=1e-10, max_iter=10_000), "squared_hinge_l1", 1e-6, False),
    ("s6", lambda: S.LogisticRegression(solver="liblinear", penalty="l1", tol=1e-10, max_iter=1000),
     lambda: skl.LogisticRegression(random_state=0,
                                    solver="liblinear", penalty="l1", tol=1e-10, max_iter=1000), "log_l1", 1e-6,
     False),
    ("s7", lambda: S.LogisticRegression(solver="liblinear", dual=True, tol=1e-8, max_iter=100_000),
     lambda: skl.LogisticRegression(random_state=0,
                                    solver="liblinear", dual=True, tol=1e-8, max_iter=100_000), "log", 1e-4, False),
    ("s12", lambda: S.LinearSVR(loss="squared_epsilon_insensitive", dual=True, tol=1e-8, epsilon=0.1,
                                max_iter=100_000),
     lambda: sks.LinearSVR(random_state=0,
                           loss="squared_epsilon_insensitive", dual=True, tol=1e-8, epsilon=0.1, max_iter=100_000),
     "squared_eps", 1e-4, True),
    ("s13", lambda: S.LinearSVR(loss="epsilon_insensitive", dual=True, tol=1e-8, epsilon=0.1, max_iter=100_000),
     lambda: sks.LinearSVR(random_state=0,
                           loss="epsilon_insensitive", dual=True, tol=1e-8, epsilon=0.1, max_iter=100_000),
     "epsilon_insensitive", 1e-4, True),
    ("s11", lambda: S.LinearSVR(loss="squared_epsilon_insensitive", dual=False, tol=1e-10, epsilon=0.1),
     lambda: sks.LinearSVR(random_state=0, loss="squared_epsilon_insensitive", dual=False, tol=1e-10, epsilon=0.1),
     "squared_eps", 1e-6, True),
]


@pytest.mark.parametrize("name", SETS)
@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_weighted_objective_and_predictions_match_scikit_learn(load, name, case):
    _, ours, theirs, kind, rtol, regression = case
    X, y = _xy(load, name)
    t = _target(X) if regression else y
    sw = _weights(X.shape[0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = ours().fit(X, t, sample_weight=sw)
        b = theirs().fit(X, t, sample_weight=sw)
    fa = _objective(kind, a.coef_, np.ravel(a.intercept_)[0], X, t, sw)
    fb = _objective(kind, b.coef_, np.ravel(b.intercept_)[0], X, t, sw)
    assert abs(fa - fb) <= rtol * abs(fb), (fa, fb)
    if regression:
        np.testing.assert_allclose(a.predict(X), b.predict(X), rtol=0, atol=1e-4 * np.abs(t).max())
    else:
        # rows whose decision value is (near) 0 may fall either way between two solutions within the tolerance
        sure = np.abs(b.decision_function(X)) > 1e-3
        assert (a.predict(X)[sure] == b.predict(X)[sure]).all()


def _ds(X, y, weights=None):
    ds = CSRDataset.from_csr(sp.csr_matrix(X), y)
    return ds if weights is None else ds.with_weights(weights)


@pytest.mark.parametrize("solver", [0, 2, 11])
def test_integer_weights_are_repeated_rows_newton(load, solver):
    """The Newton solvers' model of integer weights is the model of each row repeated that many times (0: left
    out), to 1e-9: the same function, the same tolerance (the weights' sums count the rows)."""
    X, y = _xy(load, "heart_scale")
    t = _target(X) if solver == 11 else y
    k = np.random.RandomState(3).randint(0, 4, X.shape[0])
    rep = np.repeat(np.arange(X.shape[0]), k)
    weighted = llsvm.train(_ds(X, t, k.astype(np.float64)), solver=solver, bias=1.0)
    repeated = llsvm.train(_ds(X[rep], t[rep]), solver=solver, bias=1.0)
    assert weighted.meta["results"][0].n_iter == repeated.meta["results"][0].n_iter
    np.testing.assert_allclose(weighted.W, repeated.W, rtol=0, atol=1e-9 * np.abs(repeated.W).max())


@pytest.mark.parametrize("solver", WEIGHTED)
def test_zero_weight_rows_have_no_effect(load, solver):
    """Rows of weight 0 change nothing: the model is the model of the other rows, bit for bit (also the dual CD's,
    whose random order is over the rows it trains on); all weights 1 are no weights, bit for bit."""
    X, y = _xy(load, "diabetes")
    t = _target(X) if solver in REGRESSION else y
    w = _weights(X.shape[0], seed=2, zeros=40)
    keep = w > 0
    with_zeros = llsvm.train(_ds(X, t, np.where(keep, 1.0, 0.0)), solver=solver, bias=1.0)
    without = llsvm.train(_ds(X[keep], t[keep]), solver=solver, bias=1.0)
    assert np.array_equal(with_zeros.W, without.W)
    ones = llsvm.train(_ds(X, t, np.ones(X.shape[0])), solver=solver, bias=1.0)
    plain = llsvm.train(_ds(X, t), solver=solver, bias=1.0)
    assert np.array_equal(ones.W, plain.W)


def test_weights_scale_the_class_costs_one_vs_rest(load):
    """Several classes: each one-vs-rest problem's C_i is its class's C (-wi) times the row's weight; a weight k on
    every row is C k."""
    ds = load("dna.scale")
    k = 3.0
    weighted = llsvm.train(ds.with_weights(np.full(ds.n_rows, k)), solver=2, C=0.5, weights={1: 2.0}, bias=1.0)
    scaled = llsvm.train(ds, solver=2, C=0.5 * k, weights={1: 2.0}, bias=1.0)
    np.testing.assert_allclose(weighted.W, scaled.W, rtol=0, atol=1e-12 * np.abs(scaled.W).max())


def test_weights_refused_where_no_solver_takes_them():
    X = np.random.RandomState(0).randn(30, 4)
    y = np.where(X[:, 0] > 0, 1.0, -1.0)
    with pytest.raises(ParameterError, match=r"row weights \(-W\) are available for -s 0, .*not -s pegasos"):
        llsvm.train(_ds(X, y, np.ones(30)), solver="pegasos")
    with pytest.raises(ValueError, match="row weights"):
        S.TreeSVC().fit(X, y, sample_weight=np.ones(30))
    with pytest.raises(ValueError, match="sample_weight"):
        S.LinearSVC().fit(X, y, sample_weight=np.ones(29))
    with pytest.raises(ValueError, match=r"sample_weight\[3\] is -1.0"):
        S.LinearSVC().fit(X, y, sample_weight=np.r_[np.ones(3), -1.0, np.ones(26)])
    with pytest.raises(ValueError, match="every sample_weight is zero"):
        S.LinearSVC().fit(X, y, sample_weight=np.zeros(30))


# -- -W weight_file ----------------------------------------------------------------------------------------------

SMALL = "".join(f"{1 if i % 3 else -1} 1:{(i % 7) / 7:.3f} 2:{(i % 5) / 5:.3f} 3:{(i % 2) * 0.5:.1f}\n"
                for i in range(12))


@pytest.fixture
def small(tmp_path):
    path = tmp_path / "small.txt"
    path.write_text(SMALL)
    return path


def _train(args):
    return CliRunner().invoke(train_main, [str(a) for a in args])


@pytest.mark.parametrize("solver", WEIGHTED)
def test_weight_file_trains_the_weighted_model(small, tmp_path, solver):
    """-W's model is the library's model of the rows with those weights, byte for byte, and a weight of 0 leaves
    its row out."""
    w = np.array([1.5, 0, 2, 1, 0.25, 3, 1, 1, 0, 2, 1, 0.5])
    (tmp_path / "w").write_text("".join(f"{v:g}\n" for v in w))
    res = _train(["-q", "-s", solver, "-W", tmp_path / "w", small, tmp_path / "m"])
    assert_exit(res, 0)
    ds = llsvm.read_dataset(small)
    lib = llsvm.train(ds.with_weights(w), solver=solver)
    lib.save(tmp_path / "lib")
    assert (tmp_path / "m").read_bytes() == (tmp_path / "lib").read_bytes()
    keep = np.flatnonzero(w > 0)
    cut = llsvm.train(ds.take_rows(keep).with_weights(w[keep]), solver=solver)
    assert np.array_equal(cut.W, lib.W)


@pytest.mark.parametrize("text, where", [
    ("1\n" * 11, "w:12:1: 11 weights for 12 training rows"),
    ("1\n" * 13, "w:13:1: 13 weights for 12 training rows"),
    ("1\n1\nabc\n" + "1\n" * 9, "w:3:1: weight 'abc' is not a number"),
    ("1\n" * 3 + "-1\n" + "1\n" * 8, "w:4:1: weight '-1' must be a finite number >= 0"),
    ("1\n" * 4 + "  nan\n" + "1\n" * 7, "w:5:3: weight 'nan' must be a finite number >= 0"),
    ("1\n" * 4 + "\n" + "1\n" * 7, "w:5:1: empty line"),
    ("0\n" * 12, "every weight is zero"),
])
def test_weight_file_errors_name_file_and_line(small, tmp_path, text, where):
    (tmp_path / "w").write_text(text)
    res = _train(["-q", "-s", "2", "-W", tmp_path / "w", small, tmp_path / "m"])
    assert_exit(res, 1)
    out = (res.stdout + res.stderr).replace(str(tmp_path) + "/", "").replace(": line ", ":").replace(", column ", ":")
    assert where in out, out
    assert not (tmp_path / "m").exists()


@pytest.mark.parametrize("solver", ["2", "llsvm", "streamsvm", "bm"])
def test_all_zero_weights_are_refused_whether_or_not_the_rows_are_counted_first(small, tmp_path, solver):
    """Every weight 0: no row to train on, refused before a model is written, by the solvers that load the rows
    (their count known) and by those that stream the text (the count not known when the weights are read)."""
    (tmp_path / "w").write_text("0\n" * 12)
    res = _train(["-q", "-s", solver, "-W", tmp_path / "w", small, tmp_path / "m"])
    assert_exit(res, 1)
    assert "every weight is zero: no row to train on" in res.stdout + res.stderr
    assert not (tmp_path / "m").exists()


@pytest.mark.parametrize("text", ["1\n2.5\n 3 \n0\n1e-3\r\n+4\n.5\n5.\n-0\n", "1\n2\n", "7"])
def test_weight_file_read_at_once_is_read_line_by_line(tmp_path, text):
    """-W's file parsed by NumPy in one call gives the weights of the line-by-line reading (which names a bad line)."""
    from llsvm.io import _weights_at_once, _weights_by_line, read_weights
    (tmp_path / "w").write_bytes(text.encode())
    lines = text.encode().split(b"\n")
    lines = lines[:-1] if lines[-1] == b"" else lines
    fast = _weights_at_once(lines, None)
    assert fast is not None
    assert np.array_equal(fast, _weights_by_line("w", tmp_path / "w", lines, None))
    assert np.array_equal(read_weights(tmp_path / "w", len(lines)), fast)


def test_a_long_line_in_the_weight_file_allocates_nothing_by_its_width(tmp_path):
    """One line of 50 MB among 12: NumPy's one-call parse would allocate 12 x 50 MB; the line is read alone and
    named (its width decides nothing), and blanks around a number are still allowed."""
    from llsvm.io import _weights_at_once, read_weights
    from llsvm.errors import DataFormatError
    wide = [b"1"] * 5 + [b"2" + b" " * 50_000_000] + [b"1"] * 6
    assert _weights_at_once(wide, 12) is None and _weights_at_once([b"1"] * 5 + [b" 2 "] + [b"1"] * 6, 12)[5] == 2
    (tmp_path / "w").write_bytes(b"\n".join(wide) + b"\n")
    assert read_weights(tmp_path / "w", 12)[5] == 2.0
    (tmp_path / "w").write_bytes(b"1\n" * 5 + b"x" * 50_000_000 + b"\n" + b"1\n" * 6)
    with pytest.raises(DataFormatError, match="weight 'x"):
        read_weights(tmp_path / "w", 12)


def test_weight_file_missing_and_refused(small, tmp_path):
    res = _train(["-q", "-s", "2", "-W", tmp_path / "absent", small, tmp_path / "m"])
    assert_exit(res, 1)
    assert "can't open weight file" in res.stdout + res.stderr
    (tmp_path / "w").write_text("1\n" * 12)
    for solver in ("pegasos", "h1tree", "project1d"):
        res = _train(["-q", "-s", solver, "-W", tmp_path / "w", small, tmp_path / "m"])
        assert_exit(res, 1)
        assert ("row weights (-W) are available for -s 0, -s 1, -s 2, -s 3, -s 4, -s 5, -s 6, -s 7, -s 11, -s 12, "
                "-s 13, -s 21, -s llsvm, -s streamsvm, -s bm, -s smo, -s nu_svc, -s epsilon_svr, -s nu_svr and "
                "-s one_class") in res.stdout + res.stderr


def test_threaded_newton_takes_the_weights(load, monkeypatch):
    """-s 2 --threads 2 (the rows in blocks, dnewton.solve_threaded): the weighted problem and tolerance, as one
    thread's (to the blocks' rounding)."""
    import llsvm.solvers.common as common
    monkeypatch.setattr(common, "THREAD_MIN_NNZ", 0)
    X, y = _xy(load, "heart_scale")
    ds = _ds(X, y, np.where(y > 0, 10.0, 0.1))      # weighted sizes far from the counts: a tolerance 40x tighter
    one = llsvm.train(ds, solver=2, bias=1.0, threads=1).meta["results"][0]
    two = llsvm.train(ds, solver=2, bias=1.0, threads=2).meta["results"][0]
    assert one.n_iter == two.n_iter
    np.testing.assert_allclose(two.w, one.w, rtol=0, atol=1e-9 * np.abs(one.w).max())


@pytest.mark.parametrize("solver", [2, 3])
def test_cross_validation_over_weighted_rows(load, solver):
    """-v over weighted rows: every fold trains on its rows of positive weight (all weights 1: the unweighted
    folds' predictions exactly)."""
    from llsvm.solvers.trainer import cross_validation
    X, y = _xy(load, "heart_scale")
    plain = cross_validation(_ds(X, y), 5, solver=solver)
    ones = cross_validation(_ds(X, y, np.ones(X.shape[0])), 5, solver=solver)
    assert np.array_equal(plain, ones)
    w = _weights(X.shape[0], seed=5, zeros=30)
    weighted = cross_validation(_ds(X, y, w), 5, solver=solver)
    assert weighted.shape == y.shape and 0.7 < float((weighted == y).mean()) <= 1.0


@pytest.mark.parametrize("shape", ["wide", "tall"])
def test_certified_hinge_dual_takes_the_weights(load, shape):
    """-s 3 --certify stopped early certifies the weighted problem's optimum (relative duality gap <= 1e-3), the
    primal of the tightly solved weighted dual's: by CG on the free dual variables (dual_cg.py) on heart_scale, by
    the smoothed-hinge primal Newton (smooth_hinge.py) on 3,000 rows of 4 features; both over sub.C()."""
    if shape == "wide":
        X, y = _xy(load, "heart_scale")
    else:
        rng = np.random.RandomState(10)
        X = rng.randn(3000, 4)
        y = np.where(X @ np.array([1.0, -2.0, 0.5, 0.0]) + 0.5 * rng.randn(3000) > 0, 1.0, -1.0)
    ds = _ds(X, y, _weights(X.shape[0], seed=6))
    r = llsvm.train(ds, solver=3, certify=True, max_iter=5, bias=1.0).meta["results"][0]
    tight = llsvm.train(ds, solver=3, eps=1e-6, max_iter=100_000, bias=1.0).meta["results"][0]
    assert r.extra["certify_method"] == ("dual_cg" if shape == "wide" else "smoothed_hinge")
    assert r.converged and r.gap <= 1e-3 * r.primal
    assert abs(r.primal - tight.primal) <= 1e-3 * tight.primal


@pytest.mark.parametrize("l1", [True, False], ids=["L1", "L2"])
def test_weighted_dcd_bit_identical_to_twin(load, l1):
    """The dual CD kernel over weighted rows (rowview.row_cost: U_i = C_i, D_ii = 1/(2 C_i)) and the NumPy twin
    with the same weights (tests/reference/dcd_twin.py) agree to the last bit, shuffled order included."""
    from reference import dcd_twin as T
    from test_solvers import DOT_ORDER
    from llsvm.solvers.common import Subproblem
    from llsvm.solvers.dcd import solve_dcd
    ds = load("heart_scale")
    ys = np.where(ds.y > 0, 1, -1).astype(np.int8)
    w = np.random.RandomState(8).uniform(0.1, 3.0, ds.n_rows)
    sub = Subproblem(ds.with_weights(w), ys, 1.0, 0.5, bias=1.0)
    res = solve_dcd(sub, l1, 0.1, rng_seed=7)
    twin = T.solve_l2r_l1l2_svc(ds.to_csr(), ys, 1.0, 0.5, 0.1, l1, bias=1.0, seed=7, dot_order=DOT_ORDER,
                                weights=w)
    assert res.n_iter == twin.n_iter and res.converged
    np.testing.assert_array_equal(res.alpha, twin.alpha)
    np.testing.assert_array_equal(res.w, twin.w)
    assert res.gap <= 0.1 * res.primal        # the certificate of the weighted problem (dcd_violation)


@pytest.mark.parametrize("solver", [3, 1])
def test_passcode_takes_the_weights(tmp_path, monkeypatch, solver):
    """PASSCoDe (-s 1/3 on two threads, when turned on): its passes and its exact check read C_i through the same
    _row_box, so it certifies the weighted problem's optimum, the one thread's (their [dual, primal] meet)."""
    import llsvm.solvers.common as common
    from conftest import generated_set
    monkeypatch.setattr(common, "THREAD_MIN_NNZ", 10_000)
    monkeypatch.setattr(common, "PASSCODE", True)
    ds = generated_set(tmp_path / "g", "sparse", rows=4000, features=3000, nnz_per_row=25, seed=12)
    ds = ds.with_weights(_weights(ds.n_rows, seed=9, zeros=0) + 0.1)
    one = llsvm.train(ds, solver=solver, bias=1.0, threads=1, eps=1e-3).meta["results"][0]
    two = llsvm.train(ds, solver=solver, bias=1.0, threads=2, eps=1e-3).meta["results"][0]
    assert two.extra.get("threads") == 2
    tol = 1e-9 * abs(one.primal)
    assert one.dual <= two.primal + tol and two.dual <= one.primal + tol
    assert two.gap <= 1e-2 * two.primal
