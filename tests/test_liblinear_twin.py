"""The NumPy/SciPy twin of LIBLINEAR 2.50's optimization problems (tests/reference/liblinear_twin.py) against
itself (optimality, perturbations) and against liblinear-official trained at a very tight eps, on tiny dense
problems with an explicit bias column of ones (-B -1, so the bias is regularized as LIBLINEAR does) or LIBLINEAR's
own bias with -R (not regularized: the twin's regularize_bias=False).

LIBLINEAR orders two labels by first occurrence and its w belongs to the first label as +1; the objectives are
compared with y re-signed to that order. LIBLINEAR's dual coordinate descent permutes with the C library's rand(),
never seeded by LIBLINEAR, so its result depends on what ran before in the process: ll_train calls srand(1) first.
A missing dependency (cvxopt, liblinear-official) fails the import.
"""
import ctypes

import numpy as np
import pytest
import scipy.sparse as sp
from liblinear import liblinearutil as lu

from reference import liblinear_twin as T

REGRESSION = (11, 12, 13)


def make(seed, solver, bias=True):
    """A tiny dense problem: X (l x n, features in [-1, 1], last column ones when bias), y, per-row C (class
    weights for classification) and the LIBLINEAR option string that gives the same C.

    C is 0.7 but 0.05 for the dual coordinate descent types 3 and 13: LIBLINEAR stops those at a fixed 1000
    iterations, short of 1e-6 of the objective on many of these problems with C = 0.7 (it warns "reaching max
    number of iterations"); with C = 0.05 it converges on all of 30 seeds tried."""
    rng = np.random.default_rng(seed)
    l, n = int(rng.integers(30, 61)), int(rng.integers(5, 9))
    c = 0.05 if solver in T.HINGE else 0.7
    X = rng.uniform(-1.0, 1.0, size=(l, n - 1))
    if bias:
        X = np.hstack([X, np.ones((l, 1))])
    w0 = rng.normal(size=X.shape[1])
    if solver in REGRESSION:
        y = X @ w0 + 0.3 * rng.normal(size=l)
        return X, y, np.full(l, c), f"-c {c} -p 0.1"
    y = np.where(X @ w0 + 0.8 * rng.normal(size=l) >= 0, 1.0, -1.0)
    y[:2] = [1.0, -1.0] if seed % 2 else [-1.0, 1.0]   # both classes; both first-label orders across seeds
    return X, y, np.where(y > 0, c * 1.5, c * 0.6), f"-c {c} -w1 1.5 -w-1 0.6"


def ll_train(X, y, opts):
    ctypes.CDLL(None).srand(1)
    return lu.train(lu.problem(y, sp.csr_matrix(X)), lu.parameter(opts + " -q"))


def ll_w(model, y):
    """LIBLINEAR's weights (bias last when it has one) and y re-signed so the first label is +1."""
    w, b = model.get_decfun()
    w = np.array(w + ([b] if model.bias > 0 else []), dtype=np.float64)
    if model.is_regression_model():
        return w, y
    return w, np.where(y == model.get_labels()[0], 1.0, -1.0)


def perturbed(rng, w, scale=1e-3):
    return [w + scale * rng.normal(size=w.shape) for _ in range(5)] + [w * (1 + scale), w * (1 - scale)]


@pytest.mark.parametrize("rb", [True, False])
@pytest.mark.parametrize("solver", [0, 1, 2, 3, 5, 6, 7, 11, 12, 13])
@pytest.mark.parametrize("seed", [1, 2])
def test_solve_optimal(seed, solver, rb):
    X, y, C, _ = make(seed, solver)
    w = T.solve(solver, X, y, C, regularize_bias=rb)
    if solver not in T.HINGE:
        assert T.kkt_violation(solver, w, X, y, C, regularize_bias=rb) < 1e-5
    f = T.primal(solver, w, X, y, C, regularize_bias=rb)
    rng = np.random.default_rng(seed)
    for v in perturbed(rng, w):
        assert f <= T.primal(solver, v, X, y, C, regularize_bias=rb) + 1e-12
    if not rb:   # the unregularized bias must matter: a different optimum than the regularized one
        assert f < T.primal(solver, T.solve(solver, X, y, C), X, y, C, regularize_bias=False)


def test_primal_values():
    """The formulas on a hand-checkable point."""
    X = np.array([[1.0, 2.0, 1.0], [-1.0, 0.5, 1.0]])
    y, C, w = np.array([1.0, -1.0]), np.array([2.0, 3.0]), np.array([0.5, -1.0, 0.25])
    z = X @ w   # [-1.25, -0.75]
    assert T.primal(0, w, X, y, C) == pytest.approx(0.5 * 1.3125 + 2 * np.log1p(np.exp(1.25))
                                                    + 3 * np.log1p(np.exp(-0.75)))
    assert T.primal(2, w, X, y, C) == pytest.approx(0.5 * 1.3125 + 2 * 2.25 ** 2 + 3 * 0.25 ** 2)
    assert T.primal(3, w, X, y, C) == pytest.approx(0.5 * 1.3125 + 2 * 2.25 + 3 * 0.25)
    assert T.primal(5, w, X, y, C, regularize_bias=False) == pytest.approx(1.5 + 2 * 2.25 ** 2 + 3 * 0.25 ** 2)
    assert T.primal(3, w, X, y, C, regularize_bias=False) == pytest.approx(0.5 * 1.25 + 2 * 2.25 + 3 * 0.25)
    d = np.maximum(0, np.abs(z - y) - 0.1)   # [2.15, 0.15]
    assert T.primal(11, w, X, y, C) == pytest.approx(0.5 * 1.3125 + C @ d ** 2)
    assert T.primal(13, w, X, y, C) == pytest.approx(0.5 * 1.3125 + C @ d)
    W, cls = np.array([[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]]), np.array([0, 1])
    # row 0: scores [1, 2], own 0 -> max(0, 1 + 2 - 1) = 2; row 1: scores [-1, 0.5], own 1 -> max(0, 1 - 1 - 0.5) = 0
    assert T.mcsvm_primal(W, X, cls, np.array([2.0, 3.0])) == pytest.approx(1.0 + 2 * 2.0)


def agree(f_twin, f_ll):
    assert f_twin <= f_ll + 1e-9 * abs(f_twin)
    assert f_ll - f_twin <= 1e-6 * abs(f_twin)


@pytest.mark.parametrize("solver", [0, 2, 3, 5, 6, 11, 13])
@pytest.mark.parametrize("seed", [3, 4])
def test_agrees_with_liblinear(seed, solver):
    X, y, C, opts = make(seed, solver)
    model = ll_train(X, y, f"-s {solver} -B -1 -e 1e-8 {opts}")
    w_ll, ys = ll_w(model, y)
    assert w_ll.shape == (X.shape[1],)
    agree(T.primal(solver, T.solve(solver, X, ys, C), X, ys, C), T.primal(solver, w_ll, X, ys, C))


@pytest.mark.parametrize("solver", [0, 2, 5, 6, 11])
@pytest.mark.parametrize("seed", [5, 6])
def test_agrees_with_liblinear_unregularized_bias(seed, solver):
    X, y, C, opts = make(seed, solver, bias=False)
    model = ll_train(X, y, f"-s {solver} -B 1 -R -e 1e-8 {opts}")
    w_ll, ys = ll_w(model, y)
    Xb = np.hstack([X, np.ones((len(y), 1))])
    assert w_ll.shape == (Xb.shape[1],)
    w = T.solve(solver, Xb, ys, C, regularize_bias=False)
    agree(T.primal(solver, w, Xb, ys, C, regularize_bias=False), T.primal(solver, w_ll, Xb, ys, C, regularize_bias=False))


@pytest.mark.parametrize("seed", [7, 8])
def test_mcsvm(seed):
    rng = np.random.default_rng(seed)
    l, n, k = int(rng.integers(30, 61)), int(rng.integers(5, 9)), 3
    X = np.hstack([rng.normal(size=(l, n - 1)), np.ones((l, 1))])
    cls = np.argmax(X @ rng.normal(size=(n, k)) + 0.7 * rng.normal(size=(l, k)), axis=1)
    cls[:k] = rng.permutation(k)
    Cclass = 0.7 * np.array([1.0, 1.5, 0.6])
    W = T.mcsvm_solve(X, cls, Cclass)
    assert W.shape == (n, k)
    f = T.mcsvm_primal(W, X, cls, Cclass)
    for V in perturbed(rng, W):
        assert f <= T.mcsvm_primal(V, X, cls, Cclass) + 1e-12
    model = ll_train(X, cls.astype(np.float64), "-s 4 -B -1 -e 1e-8 -c 0.7 -w1 1.5 -w2 0.6")
    labels = model.get_labels()
    W_ll = np.zeros((n, k))
    for idx, lab in enumerate(labels):
        W_ll[:, int(lab)] = [model.get_decfun_coef(j + 1, idx) for j in range(n)]
    agree(f, T.mcsvm_primal(W_ll, X, cls, Cclass))


@pytest.mark.parametrize("seed", [9, 10])
def test_oneclass(seed):
    rng = np.random.default_rng(seed)
    l, n, nu = int(rng.integers(30, 61)), int(rng.integers(5, 9)), 0.3
    X = rng.normal(size=(l, n)) + rng.uniform(0.5, 2.0, size=n)   # away from the origin: a non-trivial optimum
    a = T.oneclass_solve(X, nu)
    assert a.min() >= 0 and a.max() <= 1 and a.sum() == pytest.approx(nu * l, abs=1e-6)
    f = T.oneclass_dual(a, X)
    for t in (1e-3, 1e-2):   # convex combinations with the feasible point nu * ones stay feasible
        assert f <= T.oneclass_dual((1 - t) * a + t * nu, X) + 1e-12
    model = ll_train(X, np.ones(l), f"-s 21 -n {nu} -e 1e-6")
    w_ll = np.array(model.get_decfun()[0])
    f_ll = 0.5 * float(w_ll @ w_ll)
    assert f <= f_ll + 1e-6
    assert f_ll - f <= 1e-4 * f
    assert T.oneclass_rho(a, X, tol=1e-7) == pytest.approx(model.get_decfun_rho(), rel=1e-3)


def test_oneclass_rho_rule():
    X = np.array([[1.0], [2.0], [3.0], [4.0]])
    # no free alpha: w = 1 + 2 = 3, G = [3, 6, 9, 12]; lb = max G(alpha = 1) = 6, ub = min G(alpha = 0) = 9
    assert T.oneclass_rho(np.array([1.0, 1.0, 0.0, 0.0]), X) == 7.5
    # free alphas 2 and 3: w = 1 + 0.5 * 3 + 0.5 * 4 = 4.5, G = 4.5 * [3, 4] averaged
    assert T.oneclass_rho(np.array([1.0, 0.0, 0.5, 0.5]), X) == pytest.approx(4.5 * 3.5)
