"""cext/_smo.pyx, LIBSVM's Solver without shrinking, over the kernel cache: against its NumPy twin
(tests/reference/smo_twin.py) bit for bit on tiny dense problems, against libsvm-official (-h 0) to 1e-9 of C, with
a cache too small for the problem, and from a feasible start other than 0."""
import numpy as np
import pytest
import scipy.sparse as sp

from llsvm._ext import _kernel as KK
from llsvm._ext import _smo as SMO
from llsvm._ext._rowops import row_sq_norms
from llsvm.dataset import CSRDataset
from reference import smo_twin as S
from test_smo_twin import CASES, libsvm_coef, libsvm_train, problem


def setup(X, kernel_type, gamma, coef0, degree, cache_size=100.0):
    ds = CSRDataset.from_csr(sp.csr_matrix(X), np.zeros(len(X)))
    view = ds.row_view()
    params = {"kernel_type": kernel_type, "gamma": gamma, "coef0": coef0, "degree": degree}
    sq = row_sq_norms(view)
    rows = np.arange(len(X), dtype=np.int64)
    QD = np.empty(len(X))
    KK.kernel_diag(rows, params, sq, QD)
    return KK.KernelCache(view, None, params, sq, cache_size), QD


def signs(y):
    """LIBSVM's orientation: the first label seen is +1, except that labels {-1, +1} put +1 first."""
    first = y[0]
    if set(np.unique(y)) == {-1, 1}:
        first = 1
    return np.where(y == first, 1, -1).astype(np.int8)


@pytest.mark.parametrize("cache_size", [100.0, 0.0], ids=["cache", "two-columns"])
@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_smo_matches_twin_and_libsvm(case, cache_size):
    seed, l, n, kernel_type, gamma, coef0, degree, C, weights = case
    X, y = problem(seed, l, n)
    ys = signs(y)
    weights = weights or {}
    first, other = y[ys == 1][0], y[ys == -1][0]
    Cp, Cn = C * weights.get(int(first), 1.0), C * weights.get(int(other), 1.0)
    cache, QD = setup(X, kernel_type, gamma, coef0, degree, cache_size)
    alpha = np.zeros(l)
    out = SMO.solve(cache, ys, -np.ones(l), alpha, Cp, Cn, QD, eps=1e-3, shrinking=False)
    K = S.kernel_matrix(X, X, kernel_type=kernel_type, gamma=gamma, coef0=coef0, degree=degree)
    tw = S.solve(K, ys.astype(np.int64), Cp, Cn, eps=1e-3)
    np.testing.assert_array_equal(alpha, tw["alpha"])
    assert out["rho"] == tw["rho"] and out["n_iter"] == tw["n_iter"]
    assert out["obj"] == pytest.approx(tw["obj"], rel=1e-12)
    model = libsvm_train(X, y, kernel_type, gamma, coef0, degree, C, weights or None, 1e-3)
    coef = libsvm_coef(model, l)
    np.testing.assert_allclose(ys * alpha, coef, rtol=0, atol=1e-9 * max(Cp, Cn))
    assert out["rho"] == pytest.approx(model.rho[0], rel=1e-9, abs=1e-12)
    if cache_size == 0.0:
        st = cache.stats
        assert st["evictions"] > 0


def test_smo_from_a_feasible_start():
    """A start with y'a = 0 and some a at the bound: the same optimum (to the stopping tolerance) as from 0."""
    X, y = problem(21, 60, 4)
    ys = signs(y)
    cache, QD = setup(X, 2, 0.5, 0.0, 3)
    a0 = np.zeros(60)
    pos, neg = np.flatnonzero(ys > 0)[:3], np.flatnonzero(ys < 0)[:3]
    a0[pos] = [1.0, 0.5, 0.25]
    a0[neg] = [0.25, 1.0, 0.5]
    start = a0.copy()
    out = SMO.solve(cache, ys, -np.ones(60), a0, 1.0, 1.0, QD, eps=1e-8)
    ref = np.zeros(60)
    cache2, _ = setup(X, 2, 0.5, 0.0, 3)
    out0 = SMO.solve(cache2, ys, -np.ones(60), ref, 1.0, 1.0, QD, eps=1e-8)
    assert out["obj"] == pytest.approx(out0["obj"], rel=1e-9)
    np.testing.assert_allclose(a0, ref, atol=1e-5)
    assert abs(float(ys @ a0)) < 1e-9 and not np.array_equal(start, a0)


def test_smo_refusals():
    X, y = problem(22, 20, 3)
    cache, QD = setup(X, 2, 0.5, 0.0, 3)
    ys = signs(y)
    with pytest.raises(ValueError):
        SMO.solve(cache, ys[:10], -np.ones(20), np.zeros(20), 1.0, 1.0, QD)
    with pytest.raises(ValueError):
        SMO.solve(cache, ys, -np.ones(20), np.full(20, 2.0), 1.0, 1.0, QD)
    bad = ys.copy()
    bad[0] = 0
    with pytest.raises(ValueError):
        SMO.solve(cache, bad, -np.ones(20), np.zeros(20), 1.0, 1.0, QD)
