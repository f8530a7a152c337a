"""cext/_online.pyx (issue 16, begun): OL SVM List 3b's epoch loop against the NumPy twin (tests/reference/
online_twin.py, cached and uncached forms) on the same order, and the invariant o = K alpha + b."""
import numpy as np
import pytest
import scipy.sparse as sp

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
