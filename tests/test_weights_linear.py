"""Instance weights (issue 46, docs/weights.md) in the rest of the linear solvers: -s 21 (LIBLINEAR's one-class SVM,
weighted as LIBSVM's one-class: U_i = W_i, sum alpha = nu sum W), -s 4 (Crammer and Singer: alpha_i^{y_i} <= C_{y_i}
W_i, as scikit-learn's weighted Solver_MCSVM_CS), -v / -C / --grid over weighted rows, --dask (CoCoA+ and the
distributed Newton) and the solvers that refuse weights.

References: scikit-learn's OneClassSVM(kernel="linear") and LinearSVC(multi_class="crammer_singer") with the same
sample_weight (their vendored LIBSVM / LIBLINEAR are the weights extensions), the QP references of
tests/reference/liblinear_twin.py, the repeated-rows identity (integer weights = each row repeated that many times),
and the in-memory weighted models for the distributed ones.
"""
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
import sklearn.svm as sks
from click.testing import CliRunner
from conftest import assert_exit

import llsvm
import llsvm.sklearn as S
from llsvm.cli.train import main as train_main
from llsvm.dataset import CSRDataset
from reference import liblinear_twin as T

SETS = ("heart_scale", "diabetes", "breast-cancer")
MULTI = ("iris.scale", "wine.scale", "glass.scale")


def _weights(n, seed=0, zeros=5):
    rng = np.random.RandomState(seed)
    w = rng.uniform(0.0, 3.0, n)
    w[rng.choice(n, zeros, replace=False)] = 0.0
    return w


def _X(ds):
    X = ds.to_csr().toarray()
    X /= np.maximum(np.abs(X).max(axis=0), 1e-300)      # scaled to [-1, 1] (diabetes' and breast-cancer's are not)
    return X


def _ds(X, y, weights=None):
    ds = CSRDataset.from_csr(sp.csr_matrix(X), y)
    return ds if weights is None else ds.with_weights(weights)


def _three_classes(X):
    return np.digitize(X[:, 0], [-0.5, 0.2]).astype(np.float64)


# -- -s 21 ---------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("nu", [0.1, 0.5])
@pytest.mark.parametrize("name", SETS)
def test_oneclass_weighted_matches_scikit_learn(load, name, nu):
    """-s 21 with no bias is LIBSVM's one-class SVM with the linear kernel (the same dual, min 1/2 a^T X X^T a,
    0 <= a_i <= W_i, sum a = nu sum W); scikit-learn's weighted OneClassSVM solves it by SMO: the dual objectives
    1/2 |w|^2 within 1e-9 relative, rho within 1e-6 relative, the same predictions off the boundary."""
    X = _X(load(name))
    sw = _weights(X.shape[0])
    a = S.OneClassSVM(kernel="linear", solver=21, nu=nu, tol=1e-10, max_iter=10**7).fit(X, sample_weight=sw)
    b = sks.OneClassSVM(kernel="linear", nu=nu, tol=1e-10).fit(X, sample_weight=sw)
    fa = 0.5 * float(a.coef_.ravel() @ a.coef_.ravel())
    fb = 0.5 * float(b.coef_.ravel() @ b.coef_.ravel())
    assert abs(fa - fb) <= 1e-9 * fb, (fa, fb)
    assert abs(float(a.offset_) - float(b.offset_[0])) <= 1e-6 * abs(float(b.offset_[0]))
    sure = np.abs(b.decision_function(X)) > 1e-5 * abs(float(b.offset_[0]))
    assert (a.predict(X)[sure] == b.predict(X)[sure]).all()


def test_oneclass_weighted_matches_the_qp_reference(load):
    """The weighted -s 21 dual against the QP reference with the boxes W_i (tests/reference/liblinear_twin.py)."""
    X = _X(load("heart_scale"))[:80]
    sw = _weights(X.shape[0], zeros=0)
    m = llsvm.train(_ds(X, np.ones(X.shape[0]), sw), solver=21, nu=0.3, eps=1e-10)
    a = T.oneclass_solve(X, 0.3, weights=sw)
    d_ref = T.oneclass_dual(a, X)
    d = 0.5 * float(m.W.ravel() @ m.W.ravel())
    assert abs(d - d_ref) <= 1e-6 * d_ref
    r = m.meta["results"][0]
    assert abs(r.alpha.sum() - 0.3 * sw.sum()) <= 1e-9 * sw.sum() and (r.alpha <= sw).all() and (r.alpha >= 0).all()
    assert abs(r.extra["rho"] - T.oneclass_rho(a, X, tol=1e-7, weights=sw)) <= 1e-4 * abs(r.extra["rho"])


@pytest.mark.parametrize("solver", [21, 4])
def test_integer_weights_are_repeated_rows(load, solver):
    """Integer weights give the model of the rows repeated that many times (0: left out): the same optimum w (its
    primal is strictly convex), to 1e-9 at a tight tolerance; -s 21's rho too."""
    X = _X(load("heart_scale"))
    y = np.ones(X.shape[0]) if solver == 21 else _three_classes(X)
    k = np.random.RandomState(3).randint(0, 4, X.shape[0])
    rep = np.repeat(np.arange(X.shape[0]), k)
    kw = dict(nu=0.3) if solver == 21 else dict(bias=1.0)
    weighted = llsvm.train(_ds(X, y, k.astype(np.float64)), solver=solver, eps=1e-10, **kw)
    repeated = llsvm.train(_ds(X[rep], y[rep]), solver=solver, eps=1e-10, **kw)
    np.testing.assert_allclose(weighted.W, repeated.W, rtol=0, atol=1e-9 * np.abs(repeated.W).max())
    a, b = weighted.meta["results"][0], repeated.meta["results"][0]
    assert abs(a.primal - b.primal) <= 1e-9 * abs(b.primal)
    if solver == 21:
        assert abs(a.extra["rho"] - b.extra["rho"]) <= 1e-9 * abs(b.extra["rho"])


@pytest.mark.parametrize("solver", [21, 4])
def test_zero_weights_and_ones(load, solver):
    """Rows of weight 0 change nothing (the model of the other rows, bit for bit); all weights 1 are no weights,
    bit for bit (-s 21's greedy start of nu sum W is LIBLINEAR's start then)."""
    X = _X(load("diabetes"))
    y = np.ones(X.shape[0]) if solver == 21 else _three_classes(X)
    keep = _weights(X.shape[0], seed=2, zeros=40) > 0
    kw = dict(nu=0.3) if solver == 21 else dict(bias=1.0)
    with_zeros = llsvm.train(_ds(X, y, np.where(keep, 1.0, 0.0)), solver=solver, **kw)
    without = llsvm.train(_ds(X[keep], y[keep]), solver=solver, **kw)
    assert np.array_equal(with_zeros.W, without.W)
    ones = llsvm.train(_ds(X, y, np.ones(X.shape[0])), solver=solver, **kw)
    plain = llsvm.train(_ds(X, y), solver=solver, **kw)
    assert np.array_equal(ones.W, plain.W)
    if solver == 21:
        assert ones.rho == plain.rho and with_zeros.rho == without.rho


# -- -s 4 ----------------------------------------------------------------------------------------------------------

def _cs_objective(coef, intercept, X, y, classes, sw, C=1.0):
    """Crammer and Singer's weighted primal, the bias coordinate regularized (intercept_scaling 1)."""
    W = np.hstack([coef, np.ravel(intercept)[:, None]]).T
    Xb = np.hstack([X, np.ones((X.shape[0], 1))])
    return T.mcsvm_primal(W, Xb, np.searchsorted(classes, y), np.full(classes.size, C), weights=sw)


@pytest.mark.parametrize("name", MULTI)
def test_crammer_singer_weighted_matches_scikit_learn(load, name):
    """-s 4's weighted row has the box alpha_i^{y_i} <= C_{y_i} W_i, as scikit-learn's Solver_MCSVM_CS: the weighted
    primal within 1e-6 relative of LinearSVC(multi_class="crammer_singer")'s at a tight tolerance, the same
    predictions off ties."""
    ds = load(name)
    X, y = _X(ds), ds.y
    sw = _weights(X.shape[0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = S.LinearSVC(multi_class="crammer_singer", tol=1e-8, max_iter=100_000).fit(X, y, sample_weight=sw)
        b = sks.LinearSVC(multi_class="crammer_singer", tol=1e-8, max_iter=100_000, random_state=0).fit(
            X, y, sample_weight=sw)
    classes = np.unique(y)
    fa = _cs_objective(a.coef_, a.intercept_, X, y, classes, sw)
    fb = _cs_objective(b.coef_, b.intercept_, X, y, classes, sw)
    assert abs(fa - fb) <= 1e-6 * fb, (fa, fb)
    dec = np.sort(b.decision_function(X), axis=1)
    sure = dec[:, -1] - dec[:, -2] > 1e-3
    assert (a.predict(X)[sure] == b.predict(X)[sure]).all()


def test_crammer_singer_weighted_matches_the_qp_reference(load):
    ds = load("iris.scale")
    X, y = _X(ds), ds.y
    sw = _weights(X.shape[0], zeros=0)
    m = llsvm.train(_ds(X, y, sw), solver=4, C=0.5, eps=1e-8)
    cls = np.argmax(y[:, None] == np.asarray(m.label), axis=1)      # W's columns in the model's label order
    Cc = np.full(3, 0.5)
    f_ref = T.mcsvm_primal(T.mcsvm_solve(X, cls, Cc, weights=sw), X, cls, Cc, weights=sw)
    f = T.mcsvm_primal(m.W[:X.shape[1]], X, cls, Cc, weights=sw)
    assert abs(f - f_ref) <= 1e-6 * f_ref


# -- -v, -C, --grid over weighted rows -----------------------------------------------------------------------------

def _write(tmp_path, X, y, w):
    data = tmp_path / "data.txt"
    data.write_text("".join(f"{int(t)} " + " ".join(f"{j + 1}:{v:.6g}" for j, v in enumerate(row) if v) + "\n"
                            for row, t in zip(X, y)))
    wfile = tmp_path / "weights.txt"
    wfile.write_text("".join(f"{v:.17g}\n" for v in w))
    return data, wfile


def _run(args):
    r = CliRunner().invoke(train_main, [str(a) for a in args])
    return r


def test_cross_validation_folds_keep_their_weights(load):
    """-v's folds train on their rows with the rows' weights (the view carries them): weights k on every row give
    the predictions of C k; and -C's first C counts a row of weight k as k rows (calc_start_C with l = sum W over the
    rows of positive weight): integer weights start where the repeated rows start."""
    from llsvm.params import Params
    from llsvm.solvers.trainer import calc_start_C, cross_validation
    X = _X(load("heart_scale"))
    y = load("heart_scale").y
    for solver in (2, 3):
        a = cross_validation(_ds(X, y, np.full(X.shape[0], 4.0)), 5, solver=solver, C=0.25, seed=1)
        b = cross_validation(_ds(X, y), 5, solver=solver, C=1.0, seed=1)
        c = cross_validation(_ds(X, y), 5, solver=solver, C=0.25, seed=1)
        assert np.array_equal(a, b) and not np.array_equal(a, c)
    k = np.random.RandomState(3).randint(0, 8, X.shape[0])
    k[np.argmax((X * X).sum(axis=1))] = 0          # the longest row weighs 0: it has no effect on the start either
    rep = np.repeat(np.arange(X.shape[0]), k)
    t = X @ np.linspace(-1, 1, X.shape[1])
    for solver, target in ((2, y), (3, y), (11, t)):
        p = Params(solver=solver, bias=1.0).check()
        weighted, repeated = _ds(X, target, k.astype(np.float64)), _ds(X[rep], target[rep])
        assert calc_start_C(weighted, weighted.n_rows, p) == calc_start_C(repeated, repeated.n_rows, p)
        assert calc_start_C(weighted, weighted.n_rows, p) != calc_start_C(_ds(X, target), X.shape[0], p)


def _grid_cells(text):
    """{C: error} of --grid's table."""
    out = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[2].endswith("%"):
            out[float(parts[0])] = float(parts[2][:-1])
    return out


def test_weighted_grid_is_each_cells_weighted_cross_validation(tmp_path, load):
    """--grid with -W: every cell's error is the -v run's of its C with -W, on the same folds (the folds train on
    their rows' weights, the error counts rows), and the best cell is theirs; the weights change the errors."""
    ds = load("heart_scale")
    X, y = ds.to_csr().toarray(), ds.y
    data, wfile = _write(tmp_path, X, y, _weights(X.shape[0], seed=4, zeros=20))
    r = _run(["-s", "smo", "-v", "3", "--grid", "C=0.1,1,10", "-W", wfile, data])
    assert r.exit_code == 0, r.output
    cells = _grid_cells(r.stdout)
    assert sorted(cells) == [0.1, 1.0, 10.0]
    plain = _grid_cells(_run(["-s", "smo", "-v", "3", "--grid", "C=0.1,1,10", data]).stdout)
    assert cells != plain
    for C, err in cells.items():
        v = _run(["-s", "smo", "-v", "3", "-c", C, "-W", wfile, data])
        assert v.exit_code == 0, v.output
        acc = float(v.stdout.split("Cross Validation Accuracy = ")[1].split("%")[0])
        assert f"{100.0 - acc:.4g}" == f"{err:.4g}"          # the table's 4 digits
    best = min(cells, key=lambda C: (cells[C], [0.1, 1.0, 10.0].index(C)))
    assert f"Best C = {best:g} " in r.stdout


def test_weighted_grid_refused_for_a_solver_without_weights(tmp_path):
    """--grid with -W and a solver that takes no weights (the online ones): refused, naming the solvers that do."""
    X = np.random.RandomState(0).rand(20, 3)
    y = np.where(X[:, 0] > 0.5, 1, -1)
    data, wfile = _write(tmp_path, X, y, np.ones(20))
    r = _run(["-s", "pegasos", "-v", "3", "--grid", "C=1,10", "-W", wfile, data])
    assert_exit(r, 1)
    assert "row weights (-W) are available for -s 0" in r.output and "Traceback" not in r.output


# -- CoCoA+ and distributed Newton, in one process and on a cluster --------------------------------------------------

def _heart_weighted(load, seed=0):
    ds = load("heart_scale")
    w = _weights(ds.n_rows, seed=seed)
    return ds, w


@pytest.mark.parametrize("solver", [3, 1])
def test_cocoa_certifies_the_weighted_problem(load, solver):
    """CoCoA+ over three parts of weighted rows (cocoa_local's box, D_ii and loss from C_i = C W_i): its certificate
    brackets the weighted optimum, dual <= P* <= primal, P* the in-memory weighted -s 3 / -s 1 model's primal at a
    tight tolerance; converged -s 3 is within its gap of it."""
    from llsvm.solvers.cocoa import solve_cocoa, split_rows
    from llsvm.solvers.common import Subproblem
    ds, w = _heart_weighted(load)
    dw = ds.with_weights(w)
    keep = np.flatnonzero(w > 0)
    best = llsvm.train(dw, solver=solver, eps=1e-9, bias=1.0, max_iter=10**6).meta["results"][0]
    y = np.where(ds.y[keep] == ds.y[0], 1, -1).astype(np.int8)
    res = solve_cocoa(split_rows(Subproblem(dw, y, 1.0, 1.0, rows=keep, bias=1.0), 3), solver == 3, eps=1e-3,
                      max_iter=4000 if solver == 3 else 300, epochs=2)
    tol = 1e-9 * best.primal
    assert res.dual - tol <= best.primal <= res.primal + tol
    if solver == 3:
        assert res.converged and res.primal - best.primal <= res.gap + tol
    # the certificate is the weighted one: the unweighted problem's optimum is outside it
    plain = llsvm.train(ds.take_rows(keep), solver=solver, eps=1e-9, bias=1.0, max_iter=10**6).meta["results"][0]
    assert not res.dual - tol <= plain.primal <= res.primal + tol


@pytest.fixture(scope="module")
def cluster_client():
    """One in-process LocalCluster of two one-thread workers (a TCP scheduler, so that llsvm-train --dask can reach
    it too) for every cluster test here."""
    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, protocol="tcp",
                                       silence_logs=50, dashboard_address=None, scheduler_kwargs={"dashboard": False})
    c = distributed.Client(cluster)
    yield c
    c.close()
    cluster.close()


@pytest.fixture(scope="module")
def heart_blocks(load, tmp_path_factory):
    """heart_scale as a binary file of 30-row blocks, and a weight file for its rows (5 of weight 0)."""
    ds = load("heart_scale")
    d = tmp_path_factory.mktemp("wdask")
    path = str(d / "heart.bin")
    llsvm.write_binary(ds, path, block_rows=30)
    w = _weights(ds.n_rows, seed=5)
    wfile = d / "heart.w"
    wfile.write_text("".join(f"{v:.17g}\n" for v in w))
    return path, str(wfile), ds, w


@pytest.mark.parametrize("kw", [dict(solver=0, bias=1), dict(solver=2), dict(solver=11, bias=1)],
                         ids=["s0", "s2", "s11"])
def test_distributed_newton_is_the_weighted_model(cluster_client, heart_blocks, kw):
    """Distributed Newton over three parts of the workers' blocks, each part with its rows' weights read from the
    weight file where the worker is: the in-memory weighted model to 1e-9."""
    import llsvm.dask as lldask
    path, wfile, ds, w = heart_blocks
    m = lldask.train(path, client=cluster_client, weight_file=wfile, parts=3, say=lambda t: None, **kw)
    ref = llsvm.train(ds.with_weights(w), **kw)
    assert "Newton" in m.meta["dask"]["split"]
    np.testing.assert_allclose(m.W, ref.W, rtol=0, atol=1e-9 * np.abs(ref.W).max())
    assert not np.allclose(m.W, llsvm.train(ds, **kw).W, rtol=0, atol=1e-3 * np.abs(ref.W).max())


@pytest.mark.parametrize("solver", [3, 1])
def test_cocoa_on_the_cluster_certifies_the_weighted_model(cluster_client, heart_blocks, solver):
    """CoCoA+ on the cluster with -W's file: the rounds of the in-process run over the same weighted parts (w bit for
    bit), and a certificate that brackets the in-memory weighted model's primal."""
    import llsvm.dask as lldask
    from llsvm.solvers.cocoa import solve_cocoa
    from llsvm.solvers.common import Subproblem
    path, wfile, ds, w = heart_blocks
    m = lldask.train(path, client=cluster_client, weight_file=wfile, solver=solver, bias=1, eps=1e-3, parts=3,
                     max_iter=200, seed=3, say=lambda t: None)
    r = m.meta["results"][0]
    best = llsvm.train(ds.with_weights(w), solver=solver, bias=1, eps=1e-9, max_iter=10**6).meta["results"][0]
    tol = 1e-9 * best.primal
    assert r.dual - tol <= best.primal <= r.primal + tol
    # the same parts in this process: 9 blocks of 30 rows cut into three runs of three blocks, rows of weight 0 out
    dw = ds.with_weights(w)
    sign = np.where(ds.y == ds.y[0], 1, -1).astype(np.int8)
    subs = []
    for k in range(3):
        rows = np.arange(90 * k, 90 * (k + 1))
        rows = rows[w[rows] > 0]
        subs.append(Subproblem(dw, sign[rows], 1.0, 1.0, rows=rows, bias=1.0))
    ref = solve_cocoa(subs, solver == 3, eps=1e-3, max_iter=200, epochs=1, seed=3)
    assert r.n_iter == ref.n_iter
    np.testing.assert_array_equal(r.w, ref.w)


def test_cluster_cross_validation_and_search_take_the_weights(cluster_client, heart_blocks):
    """-v and -C on the cluster with -W's file (every worker reads it): the predictions and the best C of the
    weighted run in one process."""
    import llsvm.dask as lldask
    from llsvm.solvers.trainer import cross_validation, find_parameter_C
    path, wfile, ds, w = heart_blocks
    dw = ds.with_weights(w)
    cv = lldask.cross_validation(path, 5, client=cluster_client, weight_file=wfile, solver=2, seed=2)
    assert np.array_equal(cv.target, cross_validation(dw, 5, solver=2, seed=2))
    assert not np.array_equal(cv.target, cross_validation(ds, 5, solver=2, seed=2))
    found = lldask.find_parameter_C(path, 3, client=cluster_client, weight_file=wfile, solver=2, say=lambda t: None)
    assert tuple(found) == tuple(find_parameter_C(dw, 3, solver=2, say=lambda t: None))


def test_cli_dask_with_a_weight_file(cluster_client, heart_blocks, tmp_path):
    """llsvm-train --dask ADDRESS -W: the model file of the weighted run in one process (-s 2 two classes:
    distributed Newton, to 1e-9; -s 5: a whole run on one worker, the same file)."""
    path, wfile, ds, w = heart_blocks
    address = cluster_client.scheduler.address
    for solver in ("2", "5"):
        a = _run(["-q", "-s", solver, "--dask", address, "-W", wfile, path, tmp_path / "a"])
        assert_exit(a, 0)
        b = _run(["-q", "-s", solver, "-W", wfile, path, tmp_path / "b"])
        assert_exit(b, 0)
        ma, mb = llsvm.load_model(str(tmp_path / "a")), llsvm.load_model(str(tmp_path / "b"))
        np.testing.assert_allclose(ma.W, mb.W, rtol=0, atol=1e-9 * np.abs(mb.W).max())
        if solver == "5":
            assert (tmp_path / "a").read_bytes() == (tmp_path / "b").read_bytes()
    bad = _run(["-q", "-s", "pegasos", "--dask", address, "-W", wfile, path, tmp_path / "c"])
    assert_exit(bad, 1)
    assert "row weights (-W) are available for -s 0" in bad.output


# -- the solvers that refuse weights -------------------------------------------------------------------------------

@pytest.mark.parametrize("solver", ["pegasos", "local1d", "h1tree"], ids=["online", "1-D", "h1tree"])
def test_cli_refuses_weights_naming_the_solvers_that_take_them(tmp_path, solver):
    """-W with an online solver, a 1-D projection or the H1 tree (no per-row cost in their papers): exit 1, the
    option layer's message naming the solvers that take weights, no model."""
    X = np.random.RandomState(0).rand(20, 3)
    y = np.where(X[:, 0] > 0.5, 1, -1)
    data, wfile = _write(tmp_path, X, y, np.ones(20))
    r = _run(["-q", "-s", solver, "-W", wfile, data, tmp_path / "m"])
    assert_exit(r, 1)
    assert ("ERROR: row weights (-W) are available for -s 0, -s 1, -s 2, -s 3, -s 4, " in r.output
            and "-s 13" in r.output and "-s 21" in r.output)
    assert not (tmp_path / "m").exists()


@pytest.mark.parametrize("make,name", [(lambda: S.OnlineSVC(), "olsvm"), (lambda: S.ProjectionSVC(), "local1d"),
                                       (lambda: S.TreeSVC(), "h1tree")], ids=["OnlineSVC", "ProjectionSVC", "TreeSVC"])
def test_estimators_refuse_sample_weight_clearly(make, name):
    """OnlineSVC, ProjectionSVC and TreeSVC: fit(..., sample_weight=...) is a ValueError naming the solver and the
    ones that take weights, and leaves the estimator unfitted."""
    X = np.random.RandomState(0).randn(30, 3)
    y = np.where(X[:, 0] > 0, 1, -1)
    est = make()
    with pytest.raises(ValueError, match=rf"row weights \(-W\) are available for -s 0, .* not -s {name}"):
        est.fit(X, y, sample_weight=np.ones(30))
    assert not hasattr(est, "classes_")
    est.fit(X, y)                    # without weights: trained
    assert hasattr(est, "classes_")
