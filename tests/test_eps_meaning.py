"""One meaning of -e for the hinge-loss (-s 3 problem) solvers (issue 14, item 2): a converged run returns a model
whose largest projected-gradient violation max_i |PG_i| over every row is at most eps, and the certificate it
reports (primal, dual, gap, max_violation) is that model's.

Everything is checked independently in NumPy from the data, the returned w and alpha:
- w == sum_i alpha_i y_i x_i (the bias as one more coordinate), 0 <= alpha_i <= C;
- PG_i = G_i = y_i w.x_i - 1 for 0 < alpha_i < C, min(G_i, 0) at alpha_i = 0, max(G_i, 0) at alpha_i = C, and
  max_i |PG_i| <= eps;
- the reported primal 1/2 w.w + C sum_i max(0, 1 - y_i w.x_i), dual sum_i alpha_i - 1/2 w.w, gap and max_violation
  equal NumPy's.

SOLVERS lists how each solver is called (one line each); the problem is one small generated set with a bias.
"""
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import llsvm
from llsvm.dataset import CSRDataset
from llsvm.options import LLSVMOptions, StreamOptions

KB = 1 << 10
C = 1.0
BIAS = 1.0

# solver -> keyword arguments of llsvm.train beyond the problem's (alpha over all rows is in FitResult.alpha)
SOLVERS = {
    "3": {},
    "streamsvm": dict(threads=1, options=StreamOptions(memory=1024 * KB, return_alpha=True)),
    "bm": dict(options=StreamOptions(memory=1024 * KB, return_alpha=True)),
    "llsvm": dict(options=LLSVMOptions(memory=1024 * KB, return_alpha=True, max_passes=50)),
}
EPS = (0.1, 0.01)
# enough for every solver here: -s 3 needs about 700 outer iterations at eps 0.01, -s bm (one DCD iteration per
# block and outer iteration once its inner eps 0.1 holds) several hundred
MAX_ITER = 2000


@pytest.fixture(scope="module")
def problem():
    """4,000 rows of 200 features (about 20 non-zeros each), labels from a noisy linear model: at the optimum many
    alpha_i are at 0, many at C and some between. The first label is +1, so w keeps its sign."""
    g = np.random.default_rng(1414)
    l, n = 4000, 200
    X = sp.random(l, n, density=0.1, format="csr", random_state=g, data_rvs=g.standard_normal)
    X.sort_indices()
    y = np.where(X @ g.standard_normal(n) + 0.5 * g.standard_normal(l) > 0, 1.0, -1.0)
    if y[0] < 0:
        y = -y
    ds = CSRDataset.from_csr(X, y)
    Xb = sp.hstack([X, np.full((l, 1), BIAS)], format="csr")
    return ds, Xb, y


def numpy_certificate(Xb, y, w, alpha):
    """(primal, dual, max |PG|, w(alpha)) from the data alone; the dual with w(alpha) = sum alpha_i y_i x_i."""
    w_alpha = Xb.T @ (alpha * y)
    G = y * (Xb @ w) - 1.0
    PG = np.where(alpha <= 0.0, np.minimum(G, 0.0), np.where(alpha >= C, np.maximum(G, 0.0), G))
    primal = 0.5 * float(w @ w) + C * float(np.maximum(0.0, -G).sum())
    dual = float(alpha.sum()) - 0.5 * float(w_alpha @ w_alpha)
    return primal, dual, float(np.abs(PG).max()), w_alpha


@pytest.mark.parametrize("eps", EPS)
@pytest.mark.parametrize("solver", SOLVERS)
def test_converged_model_is_within_eps_and_its_certificate_is_exact(problem, solver, eps):
    ds, Xb, y = problem
    with warnings.catch_warnings():
        warnings.simplefilter("error", llsvm.ConvergenceWarning)       # the run must meet its rule
        m = llsvm.train(ds, solver=solver, C=C, bias=BIAS, eps=eps, max_iter=MAX_ITER, **SOLVERS[solver])
    (r,) = m.meta["results"]
    assert r.converged
    w, alpha = np.asarray(r.w), np.asarray(r.alpha)
    np.testing.assert_array_equal(m.W[:, 0], w)
    assert alpha.shape == (ds.n_rows,) and w.shape == (ds.n_features + 1,)
    assert alpha.min() >= 0.0 and alpha.max() <= C
    primal, dual, viol, w_alpha = numpy_certificate(Xb, y, w, alpha)
    assert np.abs(w_alpha - w).max() <= 1e-9 * max(1.0, np.abs(w).max())
    # -e's meaning: the returned model's largest violation over every row
    assert viol <= eps, f"-s {solver} -e {eps}: max |PG| = {viol}"
    # the certificate reported is this model's
    assert r.max_violation == pytest.approx(viol, rel=1e-9, abs=1e-12)
    assert r.primal == pytest.approx(primal, rel=1e-10)
    assert r.dual == pytest.approx(dual, rel=1e-10)
    assert r.gap == pytest.approx(primal - dual, rel=1e-6, abs=1e-9 * primal)
    assert r.nSV == np.count_nonzero(alpha)
    # a problem where the bounds matter: rows at 0, at C and in between
    assert (alpha == 0).sum() > 100 and (alpha == C).sum() > 100 and ((alpha > 0) & (alpha < C)).sum() > 10
