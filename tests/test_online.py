"""cext/_online.pyx (issue 16): the online SVMs (Lists 3b, 3a, NORMA, Pegaz, Pegasos) against the NumPy twin
(tests/reference/online_twin.py, cached and uncached forms) on the same order: the def wrappers, and run() in its
cached, original and linear forms with and without averaging; the linear 3b against scikit-learn's SGDClassifier; the
ColumnStore (bit-identical results, reuse across C); the invariant o = K alpha + b; the refusals."""
import math
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import SGDClassifier

from llsvm._ext import _online
from llsvm._ext._rowops import row_sq_norms
from llsvm.dataset import CSRDataset
from reference import online_twin as OT
from reference.smo_twin import kernel_matrix


@pytest.mark.parametrize("kernel", [{"kernel_type": 2, "gamma": 0.5}, {"kernel_type": 0},
                                    {"kernel_type": 1, "gamma": 0.3, "coef0": 1.0, "degree": 2}])
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_olsvm_3b_matches_the_list(kernel, bias, dtype):
    g = np.random.default_rng(3)
    X = g.standard_normal((80, 4)) * (g.random((80, 4)) < 0.7)
    y = np.where(X[:, 0] * X[:, 1] + 0.3 * g.standard_normal(80) > 0, 1, -1).astype(np.int8)
    ds = CSRDataset.from_csr(sp.csr_matrix(X.astype(dtype)), y.astype(float))
    v = ds.row_view()
    order = g.permutation(80)
    out = _online.olsvm_3b(v, order, y, kernel, row_sq_norms(v), 4.0, epochs=3, bias=bias)
    K = kernel_matrix(X.astype(dtype).astype(np.float64), X.astype(dtype).astype(np.float64), **kernel)
    tw = OT.olsvm_3b(K, y, 4.0, order, epochs=3, bias=bias)
    un = OT.olsvm_3b(K, y, 4.0, order, epochs=3, bias=bias, cached=False)
    a, o, b, viol = tw["alpha"], tw["o"], tw.get("b", 0.0), list(tw["n_viol"])
    assert list(un["n_viol"]) == viol
    scale = np.abs(a).max()
    np.testing.assert_allclose(out["alpha"], a, rtol=0, atol=1e-12 * scale)
    np.testing.assert_allclose(out["o"], o, rtol=0, atol=1e-9 * max(1.0, np.abs(o).max()))
    assert out["b"] == pytest.approx(b, abs=1e-12 * scale) and out["viol"].tolist() == viol
    assert out["t"] == 240 and min(viol) > 0
    np.testing.assert_allclose(K @ out["alpha"] + out["b"], out["o"], rtol=0, atol=1e-9 * max(1.0, np.abs(o).max()))


def test_refusals():
    ds = CSRDataset.from_csr(sp.csr_matrix(np.eye(3)), np.array([1.0, -1.0, 1.0]))
    v = ds.row_view()
    sq = row_sq_norms(v)
    y = np.array([1, -1, 1], np.int8)
    with pytest.raises(ValueError, match="permutation"):
        _online.olsvm_3b(v, [0, 0, 1], y, {"kernel_type": 0}, sq, 1.0)
    with pytest.raises(ValueError, match="y must be"):
        _online.olsvm_3b(v, [0, 1, 2], np.array([1, 0, 1], np.int8), {"kernel_type": 0}, sq, 1.0)
    with pytest.raises(ValueError, match="C must be"):
        _online.olsvm_3b(v, [0, 1, 2], y, {"kernel_type": 0}, sq, 0.0)


def _problem(dtype=np.float64, seed=5):
    g = np.random.default_rng(seed)
    X = g.standard_normal((70, 3)) * (g.random((70, 3)) < 0.8)
    y = np.where(X[:, 0] - X[:, 1] + 0.5 * g.standard_normal(70) > 0, 1, -1).astype(np.int8)
    ds = CSRDataset.from_csr(sp.csr_matrix(X.astype(dtype)), y.astype(float))
    return X.astype(dtype).astype(np.float64), y, ds.row_view(), g.permutation(70)


def _close(ours, twin, key):
    scale = max(1.0, np.abs(twin[key]).max())
    np.testing.assert_allclose(ours[key], twin[key], rtol=0, atol=1e-12 * scale)


KERNELS = [{"kernel_type": 2, "gamma": 0.7}, {"kernel_type": 0}]


@pytest.mark.parametrize("kernel", KERNELS, ids=["rbf", "linear"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_olsvm_3a_matches_the_twin(kernel, dtype):
    X, y, v, order = _problem(dtype)
    K = kernel_matrix(X, X, **kernel)
    out = _online.olsvm_3a(v, order, y, kernel, row_sq_norms(v), 2.0, epochs=3)
    tw = OT.olsvm_3a(K, y, 2.0, order, epochs=3)
    _close(out, tw, "alpha")
    _close(out, tw, "o")
    assert out["viol"].tolist() == list(tw["n_viol"]) and out["over"].tolist() == list(tw["n_over"])
    assert sum(tw["n_over"]) > 0


@pytest.mark.parametrize("kernel", KERNELS, ids=["rbf", "linear"])
@pytest.mark.parametrize("mode", [{}, {"eta0": 0.5, "lam": 0.1}], ids=["faithful", "eta0"])
def test_norma_matches_the_twin(kernel, mode):
    """Faithful mode includes the wipe at t = 2 (the global scale reaches 0 and is reset)."""
    X, y, v, order = _problem()
    K = kernel_matrix(X, X, **kernel)
    out = _online.norma(v, order, y, kernel, row_sq_norms(v), 1.5, epochs=2, **mode)
    tw = OT.norma(K, y, 1.5, order, epochs=2, **mode)
    _close(out, tw, "alpha")
    _close(out, tw, "o")
    assert out["viol"].tolist() == list(tw["n_viol"])
    np.testing.assert_allclose(K @ out["alpha"], out["o"], rtol=0, atol=1e-9 * max(1.0, np.abs(out["o"]).max()))


def test_norma_faithful_keeps_only_the_last_rows_after_the_wipe():
    """After step 2 (d = 0) every coefficient but the current one is 0; with one epoch of l steps the decay
    1 - sqrt(2/t) keeps the last ones largest: the first row visited holds nothing."""
    X, y, v, order = _problem()
    out = _online.norma(v, order[:70], y, {"kernel_type": 0}, row_sq_norms(v), 1.0, epochs=1)
    assert out["alpha"][order[0]] == 0.0


@pytest.mark.parametrize("kernel", KERNELS, ids=["rbf", "linear"])
def test_pegaz_matches_the_twin(kernel):
    X, y, v, order = _problem()
    K = kernel_matrix(X, X, **kernel)
    out = _online.pegaz(v, order, y, kernel, row_sq_norms(v), 1.0, epochs=3)
    tw = OT.pegaz(K, y, 1.0, order, epochs=3)
    for key in ("alpha", "beta", "o", "obar"):
        _close(out, tw, key)
    assert out["viol"].tolist() == list(tw["n_viol"])


# ---- run(): the general entry point, every list in its cached, original and linear forms -------------------------

RUN_CASES = [
    ("3b", {"bias": True}), ("3b", {"bias": False}), ("3a", {}), ("norma", {}), ("norma", {"eta0": 0.5, "lam": 0.1}),
    ("pegaz", {}), ("pegasos", {"k": 1}), ("pegasos", {"k": 7}), ("pegasos", {"k": 1, "projection": True}),
    ("pegasos", {"k": 7, "projection": True}),
]
RUN_IDS = ["3b-bias", "3b", "3a", "norma", "norma-eta0", "pegaz", "pegasos1", "pegasos7", "pegasos1-proj",
           "pegasos7-proj"]
RUN_KERNELS = [{"kernel_type": 2, "gamma": 0.7}, {"kernel_type": 0},
               {"kernel_type": 1, "gamma": 0.3, "coef0": 1.0, "degree": 2}]
C_RUN = 2.0


def _lam(l):
    return OT.pegasos_lambda(C_RUN, l)


def _twin(kind, opts, K, y, order, epochs, cached=True, average=False):
    """The twin's list for run(kind=..., **opts)."""
    y = y.astype(np.float64)
    if kind == "3b":
        return OT.olsvm_3b(K, y, C_RUN, order, epochs, bias=opts["bias"], average=average, cached=cached)
    if kind == "3a":
        return OT.olsvm_3a(K, y, C_RUN, order, epochs, average=average, cached=cached)
    if kind == "norma":
        return OT.norma(K, y, C_RUN, order, epochs, eta0=opts.get("eta0"), lam=opts.get("lam"), average=average,
                        cached=cached)
    if kind == "pegaz":
        return OT.pegaz(K, y, C_RUN, order, epochs, average=average, cached=cached)
    return OT.pegasos_kernel(K, y, _lam(len(y)), order, epochs, k=opts["k"], projection=opts.get("projection", False),
                             average=average, cached=cached)


def _run(v, y, order, kernel, kind, opts, epochs, **kw):
    extra = dict(opts)
    if kind == "pegasos":
        extra["lam"] = _lam(len(y))
    return _online.run(v, order, y, kernel, row_sq_norms(v), kind=kind, C=C_RUN, epochs=epochs, **extra, **kw)


def _scale(a):
    return max(np.abs(a).max(), 1e-300)


def _assert_model(out, tw, K, check_o=True):
    a = tw["alpha"]
    np.testing.assert_allclose(out["alpha"], a, rtol=0, atol=1e-12 * _scale(a))
    assert out["b"] == pytest.approx(tw.get("b", 0.0), rel=0, abs=1e-12 * max(_scale(a), abs(tw.get("b", 0.0))))
    if check_o:
        o_scale = max(1.0, np.abs(tw["o"]).max())
        np.testing.assert_allclose(out["o"], tw["o"], rtol=0, atol=1e-9 * o_scale)
        # the returned model's invariant o = K alpha (+ b)
        np.testing.assert_allclose(K @ out["alpha"] + out["b"], out["o"], rtol=0, atol=1e-9 * o_scale)


@pytest.mark.parametrize("average", [False, True], ids=["last", "avg"])
@pytest.mark.parametrize("case", RUN_CASES, ids=RUN_IDS)
@pytest.mark.parametrize("kernel", RUN_KERNELS, ids=["rbf", "linear", "poly"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_run_matches_the_twin(dtype, kernel, case, average):
    """Cached and original forms of every list against the twin's cached and uncached forms; both forms make the
    same decisions (the same violations per epoch) and give the same alpha to 1e-12 of max |alpha|."""
    kind, opts = case
    seed = 7 + RUN_KERNELS.index(kernel) + 3 * (dtype is np.float32)
    X, y, v, order = _problem(dtype, seed)
    K = kernel_matrix(X, X, **kernel)
    epochs = 3
    tw = _twin(kind, opts, K, y, order, epochs, average=average)
    tu = _twin(kind, opts, K, y, order, epochs, cached=False, average=average)
    assert list(tu["n_viol"]) == list(tw["n_viol"])
    out = _run(v, y, order, kernel, kind, opts, epochs, average=average)
    org = _run(v, y, order, kernel, kind, opts, epochs, average=average, original=True)
    _assert_model(out, tw, K)
    _assert_model(org, tu, K, check_o=False)
    assert org["o"] is None and out["w"] is None and org["w"] is None
    for r in (out, org):
        assert r["viol"].tolist() == list(tw["n_viol"])
        assert r["over"].tolist() == list(tw.get("n_over", [0] * epochs))
        assert r["t"] == tw["t"] and r["seconds"] >= 0.0 and r["store_hits"] == r["store_misses"] == 0
    np.testing.assert_allclose(org["alpha"], out["alpha"], rtol=0, atol=1e-12 * _scale(out["alpha"]))
    assert sum(tw["n_viol"]) > 0
    if average:
        np.testing.assert_allclose(out["alpha_last"], tw["alpha_last"], rtol=0, atol=1e-12 * _scale(tw["alpha_last"]))
        assert out["b_last"] == pytest.approx(tw.get("b_last", 0.0), rel=0, abs=1e-12 * _scale(tw["alpha_last"]))
        assert not np.allclose(out["alpha"], out["alpha_last"])
    else:
        assert "alpha_last" not in out


def test_pegasos_projection_binds_and_batches_count():
    """On this problem the projection changes the model (it binds), k = 7 makes ceil(70/7) = 10 steps per epoch and a
    short last batch with k = 30 (3 steps per epoch)."""
    X, y, v, order = _problem()
    kern = {"kernel_type": 2, "gamma": 0.7}
    lam = 0.01  # radius 10: binds (at lam >= 1 it never does on this problem)
    a = _online.run(v, order, y, kern, row_sq_norms(v), kind="pegasos", lam=lam, epochs=2)
    b = _online.run(v, order, y, kern, row_sq_norms(v), kind="pegasos", lam=lam, epochs=2, projection=True)
    assert not np.allclose(a["alpha"], b["alpha"])
    K = kernel_matrix(X, X, **kern)
    tw = OT.pegasos_kernel(K, y.astype(float), lam, order, 2, projection=True)
    np.testing.assert_allclose(b["alpha"], tw["alpha"], rtol=0, atol=1e-12 * _scale(tw["alpha"]))
    assert _online.run(v, order, y, kern, row_sq_norms(v), kind="pegasos", lam=lam, k=7, epochs=2)["t"] == 20
    r = _online.run(v, order, y, kern, row_sq_norms(v), kind="pegasos", lam=lam, k=30, epochs=2)
    tw = OT.pegasos_kernel(K, y.astype(float), lam, order, 2, k=30)
    assert r["t"] == 6 and r["viol"].tolist() == list(tw["n_viol"])
    np.testing.assert_allclose(r["alpha"], tw["alpha"], rtol=0, atol=1e-12 * _scale(tw["alpha"]))


@pytest.mark.parametrize("average", [False, True], ids=["last", "avg"])
@pytest.mark.parametrize("case", RUN_CASES, ids=RUN_IDS)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_run_linear_matches_the_twin(dtype, case, average):
    """linear=True (the lists on w) against the twin on K = X X^T; w = X^T alpha; Pegasos also against the twin's
    pegasos_linear (w and w_scaled)."""
    kind, opts = case
    X, y, v, order = _problem(dtype, 21 + (dtype is np.float32))
    kern = {"kernel_type": 0}
    K = X @ X.T
    tw = _twin(kind, opts, K, y, order, 3, average=average)
    out = _run(v, y, order, kern, kind, opts, 3, average=average, linear=True)
    _assert_model(out, tw, K)
    assert out["viol"].tolist() == list(tw["n_viol"]) and out["t"] == tw["t"]
    assert out["w"].shape == (X.shape[1],)
    np.testing.assert_allclose(out["w"], out["alpha"] @ X, rtol=0, atol=1e-12 * max(1.0, np.abs(out["w"]).max()))
    np.testing.assert_allclose(out["o"], X @ out["w"] + out["b"], rtol=0, atol=1e-12 * max(1.0, np.abs(out["o"]).max()))
    if kind == "pegasos":
        tl = OT.pegasos_linear(X, y.astype(float), _lam(len(y)), order, 3, k=opts["k"],
                               projection=opts.get("projection", False), average=average)
        scale = _scale(tl["w"])
        np.testing.assert_allclose(out["w"], tl["w"], rtol=0, atol=1e-12 * scale)
        if not average:
            np.testing.assert_allclose(out["w"], tl["w_scaled"], rtol=0, atol=1e-12 * scale)
        assert out["viol"].tolist() == list(tl["n_viol"]) == list(tl["n_viol_scaled"])


@pytest.mark.parametrize("average", [False, True], ids=["last", "avg"])
@pytest.mark.parametrize("seed,C,epochs", [(11, 1.0, 1), (12, 0.3, 3), (13, 5.0, 4), (14, 0.05, 2)])
def test_run_3b_linear_is_sgdclassifier(seed, C, epochs, average):
    """3b linear with the bias is scikit-learn's SGDClassifier (hinge, no penalty, invscaling eta0 = C sqrt 2,
    power_t 0.5, no shuffle, tol=None) on the pre-shuffled rows: coef_ = w, intercept_ = b to 1e-12."""
    g = np.random.default_rng(seed)
    X = g.standard_normal((40, 4))
    y = np.where(X[:, 0] + 0.5 * X[:, 1] + 0.7 * g.standard_normal(40) > 0, 1, -1).astype(np.int8)
    v = CSRDataset.from_csr(sp.csr_matrix(X), y.astype(float)).row_view()
    order = g.permutation(40)
    out = _online.run(v, order, y, {"kernel_type": 0}, row_sq_norms(v), kind="3b", C=C, epochs=epochs,
                      average=average, linear=True)
    clf = SGDClassifier(loss="hinge", penalty=None, learning_rate="invscaling", eta0=C * math.sqrt(2.0),
                        power_t=0.5, shuffle=False, fit_intercept=True, tol=None, max_iter=epochs, average=average)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)  # none with tol=None: exactly max_iter epochs
        clf.fit(X[order], y[order].astype(float))
    scale = max(1.0, np.abs(clf.coef_).max())
    np.testing.assert_allclose(out["w"], clf.coef_[0], rtol=0, atol=1e-12 * scale)
    assert out["b"] == pytest.approx(clf.intercept_[0], rel=0, abs=1e-12 * scale)


# ---- ColumnStore ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("cache_mb", [1.0, 70 * 8 * 5 / 2 ** 20], ids=["all", "five-columns"])
@pytest.mark.parametrize("kind", ["3b", "3a", "norma", "pegaz", "pegasos"])
def test_store_gives_identical_results(kind, cache_mb):
    X, y, v, order = _problem(np.float32, 9)
    kern = {"kernel_type": 2, "gamma": 0.7}
    sq = row_sq_norms(v)
    store = _online.ColumnStore(v, kern, sq, cache_mb)
    assert store.capacity == min(70, int(cache_mb * 2 ** 20 // (8 * 70)))
    lam = {"lam": _lam(70)} if kind == "pegasos" else {}
    plain = _online.run(v, order, y, kern, sq, kind=kind, C=C_RUN, epochs=2, **lam)
    kept = _online.run(v, order, y, kern, sq, kind=kind, C=C_RUN, epochs=2, store=store, **lam)
    np.testing.assert_array_equal(kept["alpha"], plain["alpha"])
    np.testing.assert_array_equal(kept["o"], plain["o"])
    assert kept["b"] == plain["b"] and kept["viol"].tolist() == plain["viol"].tolist()
    assert store.n_stored <= store.capacity and store.n_stored > 0
    assert kept["store_misses"] == store.misses and kept["store_hits"] == store.hits
    assert store.hits + store.misses > 0 and plain["store_hits"] == plain["store_misses"] == 0


def test_store_reused_across_C():
    X, y, v, order = _problem(np.float64, 4)
    kern = {"kernel_type": 1, "gamma": 0.3, "coef0": 1.0, "degree": 3}
    sq = row_sq_norms(v)
    store = _online.ColumnStore(v, kern, sq, 1.0)
    for C in (0.5, 50.0):
        plain = _online.run(v, order, y, kern, sq, kind="3b", C=C, epochs=2)
        before = store.hits
        kept = _online.run(v, order, y, kern, sq, kind="3b", C=C, epochs=2, store=store)
        np.testing.assert_array_equal(kept["alpha"], plain["alpha"])
        np.testing.assert_array_equal(kept["o"], plain["o"])
        assert kept["b"] == plain["b"]
    assert kept["store_hits"] > 0 and store.hits > before
    # the second C found columns the first stored, and every stored column is a distinct row
    assert store.n_stored == store.misses <= 70


def test_store_refusals():
    X, y, v, order = _problem()
    sq = row_sq_norms(v)
    kern = {"kernel_type": 2, "gamma": 0.7}
    store = _online.ColumnStore(v, kern, sq, 1.0)
    other = CSRDataset.from_csr(sp.csr_matrix(X), y.astype(float)).row_view()
    with pytest.raises(ValueError, match="another Rows"):
        _online.run(other, order, y, kern, sq, kind="3b", store=store)
    with pytest.raises(ValueError, match="other kernel params"):
        _online.run(v, order, y, {"kernel_type": 2, "gamma": 0.8}, sq, kind="3b", store=store)
    with pytest.raises(ValueError, match="cache_mb"):
        _online.ColumnStore(v, kern, sq, -1.0)
    assert _online.ColumnStore(v, kern, sq, 0.0).capacity == 0


def test_run_refusals():
    X, y, v, order = _problem()
    sq = row_sq_norms(v)
    rbf = {"kernel_type": 2, "gamma": 0.7}
    with pytest.raises(ValueError, match="linear kernel"):
        _online.run(v, order, y, rbf, sq, kind="3b", linear=True)
    with pytest.raises(ValueError, match="exclude"):
        _online.run(v, order, y, {"kernel_type": 0}, sq, kind="3b", linear=True, original=True)
    with pytest.raises(ValueError, match="lam > 0"):
        _online.run(v, order, y, rbf, sq, kind="pegasos")
    with pytest.raises(ValueError, match="lam > 0"):
        _online.run(v, order, y, rbf, sq, kind="pegasos", lam=0.0)
    with pytest.raises(ValueError, match="k must be"):
        _online.run(v, order, y, rbf, sq, kind="pegasos", lam=0.1, k=0)
    with pytest.raises(ValueError, match="kind must be"):
        _online.run(v, order, y, rbf, sq, kind="3c")
    with pytest.raises(ValueError, match="epochs"):
        _online.run(v, order, y, rbf, sq, kind="3b", epochs=-1)
    with pytest.raises(ValueError, match="C must be"):
        _online.run(v, order, y, rbf, sq, kind="3a", C=0.0)
    with pytest.raises(ValueError, match="permutation"):
        _online.run(v, np.zeros(70, np.int64), y, rbf, sq, kind="3b")
    with pytest.raises(ValueError, match="y must be"):
        _online.run(v, order, np.zeros(70, np.int8), rbf, sq, kind="3b")
    # C is not Pegasos' parameter: any C is accepted there
    assert _online.run(v, order, y, rbf, sq, kind="pegasos", lam=0.1, C=0.0)["t"] == 70


def test_column_seconds():
    X, y, v, order = _problem()
    s = _online.column_seconds(v, {"kernel_type": 2, "gamma": 0.7}, row_sq_norms(v), order[:10])
    assert 0.0 < s < 0.1
    assert _online.column_seconds(v, {"kernel_type": 0}, row_sq_norms(v), []) == 0.0
    with pytest.raises(ValueError, match="column indices"):
        _online.column_seconds(v, {"kernel_type": 0}, row_sq_norms(v), [70])


@pytest.mark.parametrize("case", RUN_CASES, ids=RUN_IDS)
def test_every_epoch_end_matches_the_twins_snapshot(case):
    """The run of e epochs ends where the twin's e-th epoch ends (its snapshot), and there o = K alpha (+ b)."""
    kind, opts = case
    X, y, v, order = _problem(np.float64, 21)
    K = kernel_matrix(X, X, **RUN_KERNELS[0])
    tw = _twin(kind, opts, K, y, order, 3)
    for e, snap in enumerate(tw["snapshots"], start=1):
        out = _run(v, y, order, RUN_KERNELS[0], kind, opts, e)
        scale = _scale(snap["alpha"])
        np.testing.assert_allclose(out["alpha"], snap["alpha"], rtol=0, atol=1e-12 * scale)
        assert out["b"] == pytest.approx(snap.get("b", 0.0), rel=0, abs=1e-12 * scale)
        o_scale = max(1.0, np.abs(out["o"]).max())
        np.testing.assert_allclose(K @ out["alpha"] + out["b"], out["o"], rtol=0, atol=1e-9 * o_scale)
        np.testing.assert_allclose(out["o"], snap["o"], rtol=0, atol=1e-9 * o_scale)


@pytest.mark.parametrize("original", [False, True])
def test_norma_faithful_wipe_at_step_two(original):
    """Faithful NORMA: t = 1's decay factor is 1 - sqrt(2) < 0 and t = 2's is 0, so after two steps only the row of
    step 2 can hold a coefficient (eta_2 y, when it violates), whatever step 1 did; max_steps stops there."""
    X, y, v, order = _problem(np.float64, 5)
    sq = row_sq_norms(v)
    kernel = RUN_KERNELS[0]
    one = _online.run(v, order, y, kernel, sq, kind="norma", C=C_RUN, epochs=1, max_steps=1, original=original)
    assert one["t"] == 1 and one["alpha"][order[0]] == pytest.approx(C_RUN * np.sqrt(2.0) * y[order[0]])
    two = _online.run(v, order, y, kernel, sq, kind="norma", C=C_RUN, epochs=1, max_steps=2, original=original)
    assert two["t"] == 2 and two["viol"].tolist() == [2]
    expect = np.zeros(len(y))
    expect[order[1]] = C_RUN * 1.0 * y[order[1]]          # eta_2 = C sqrt(2/2)
    np.testing.assert_array_equal(two["alpha"], expect)
    tw = OT.norma(kernel_matrix(X, X, **kernel), y.astype(float), C_RUN, order, epochs=1)
    assert tw["n_viol"][0] > 2                            # the run goes on past the wipe
