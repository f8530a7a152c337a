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
