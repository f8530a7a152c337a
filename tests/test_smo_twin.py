"""The NumPy twin of LIBSVM's SMO (tests/reference/smo_twin.py) against libsvm-official itself, on tiny problems:
the reference issue 15's cext SMO will be tested against must first be right.

Without shrinking (-h 0) the twin follows LIBSVM's iterations step for step (same working-set rule, the same ties,
Q in float32, kernel values summed in LIBSVM's order: with a BLAS product one case took another path and ended
2e-3 apart in alpha), so the solutions agree to rounding: alpha (from the model's sv_coef and SV indices) and rho to 1e-9
of C; the objective and the optimality conditions are checked in NumPy from alpha alone.

With shrinking (-h 1, LIBSVM's default; the twin's Shrinking) the order of the rows matters too: the gradient of
the shrunk variables is rebuilt by a sum over positions, so the twin solves with the rows grouped by class as
LIBSVM's svm_group_classes does (csvc). It then agrees with libsvm-official to 1e-9 of C as well, on CASES (the
tiny problems shrink too: do_shrinking runs every min(l, 1000) iterations) and on BIG, where it shrinks several
times and unshrinks.
"""
import numpy as np
import pytest
from libsvm import svmutil

from reference import smo_twin as S

CASES = {
    # id: (seed, rows, features, kernel_type, gamma, coef0, degree, C, weights)
    "rbf-C1": (1, 60, 4, 2, 0.5, 0.0, 3, 1.0, None),
    "rbf-C10-weights": (2, 80, 5, 2, 0.2, 0.0, 3, 10.0, {1: 2.0}),
    "linear": (3, 50, 3, 0, 1.0, 0.0, 3, 1.0, None),
    "poly-d3": (4, 60, 4, 1, 0.25, 1.0, 3, 2.0, None),
    "sigmoid": (5, 60, 4, 3, 0.05, -0.5, 3, 1.0, None),
    "first-label-minus": (6, 70, 4, 2, 1.0, 0.0, 3, 5.0, {-1: 3.0}),
}

# larger problems, where do_shrinking runs several times (every 1000 iterations), takes many variables out and the
# one-time unshrink happens
BIG = {
    "big-rbf": (31, 1500, 6, 2, 0.5, 0.0, 3, 10.0, None),
    "big-linear": (32, 1500, 5, 0, 1.0, 0.0, 3, 1.0, None),
}


def problem(seed, l, n):
    g = np.random.default_rng(seed)
    X = g.standard_normal((l, n))
    y = np.where(X[:, 0] - 0.5 * X[:, 1] + 0.7 * g.standard_normal(l) > 0, 1, -1)
    return X, y


def libsvm_train(X, y, kernel_type, gamma, coef0, degree, C, weights, eps, shrinking=False):
    h = 1 if shrinking else 0
    opts = f"-s 0 -t {kernel_type} -g {gamma!r} -r {coef0!r} -d {degree} -c {C!r} -e {eps!r} -h {h} -q"
    for label, w in (weights or {}).items():
        opts += f" -w{label} {w!r}"
    rows = [{k + 1: float(v) for k, v in enumerate(r)} for r in X]
    return svmutil.svm_train(list(map(float, y)), rows, opts)


def libsvm_coef(model, l):
    """y_i alpha_i over all l rows, from a two-class LIBSVM model's SV indices and sv_coef."""
    coef = np.zeros(l)
    coef[np.asarray(model.get_sv_indices()) - 1] = [c[0] for c in model.get_sv_coef()]
    return coef


def objective(K, y, alpha):
    Q = y[:, None] * y[None, :] * K
    return 0.5 * alpha @ Q @ alpha - alpha.sum()


def train_both(case, eps, shrinking=False):
    """One case trained by libsvm-official (-h 0, or -h 1 with shrinking) and by the twin: (X, libsvm's model, the
    twin's dict, libsvm's y_i alpha_i over all rows, the largest C_i)."""
    seed, l, n, kernel_type, gamma, coef0, degree, C, weights = case
    X, y = problem(seed, l, n)
    model = libsvm_train(X, y, kernel_type, gamma, coef0, degree, C, weights, eps, shrinking)
    tw = S.csvc(X, y, C=C, weights=weights, eps=eps, kernel_type=kernel_type, gamma=gamma, coef0=coef0,
                degree=degree, shrinking=shrinking)
    return X, model, tw, libsvm_coef(model, l), C * max([1.0] + list((weights or {}).values()))


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_twin_matches_libsvm(case):
    _, _, _, kernel_type, gamma, coef0, degree, _, _ = case
    eps = 1e-3
    X, model, tw, coef, Cmax = train_both(case, eps)
    # the same label order (the first seen, or +1 of {-1, +1}, is the positive class) and decision function
    assert [int(v) for v in model.get_labels()] == [int(v) for v in tw["labels"]]
    K = S.kernel_matrix(X, X, kernel_type=kernel_type, gamma=gamma, coef0=coef0, degree=degree)
    ys = tw["y"]
    np.testing.assert_allclose(tw["sv_coef"], coef, rtol=0, atol=1e-9 * Cmax)
    assert tw["rho"] == pytest.approx(model.rho[0], rel=1e-9, abs=1e-12)
    assert np.count_nonzero(tw["alpha"]) == model.l
    # the twin's objective is f(alpha) computed independently, and its stopping rule held
    assert tw["obj"] == pytest.approx(objective(K, ys, tw["alpha"]), rel=1e-6)
    assert tw["gap"] < eps


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_twin_and_libsvm_reach_the_same_solution_at_tight_eps(case):
    _, model, tw, coef, Cmax = train_both(case, 1e-7)
    np.testing.assert_allclose(tw["sv_coef"], coef, rtol=0, atol=1e-5 * Cmax)
    assert tw["rho"] == pytest.approx(model.rho[0], rel=1e-5, abs=1e-6)


def test_twin_kkt_and_box_at_tight_eps():
    """At eps 1e-8: 0 <= a <= C, y'a = 0, and the KKT conditions with LIBSVM's rho: y_t G_t >= rho... that is,
    m(a) - M(a) < eps and every free a_t has y_t G_t = rho to eps."""
    X, y = problem(11, 80, 4)
    tw = S.csvc(X, y, C=3.0, eps=1e-8, kernel_type=2, gamma=0.5)
    a, ys, G = tw["alpha"], tw["y"], tw["G"]
    assert np.all(a >= 0) and np.all(a <= 3.0)
    assert abs(float(ys @ a)) < 1e-9
    free = (a > 0) & (a < 3.0)
    assert free.any()
    np.testing.assert_allclose((ys * G)[free], tw["rho"], atol=1e-7)
    # bounded rows on their side of rho (with the sign conventions of I_up / I_low)
    yG = ys * G
    up = ((ys > 0) & (a < 3.0)) | ((ys < 0) & (a > 0))
    low = ((ys > 0) & (a > 0)) | ((ys < 0) & (a < 3.0))
    assert (-yG[up]).max() - (-yG[low]).min() < 1e-8


@pytest.mark.parametrize("case", list(CASES.values()) + list(BIG.values()), ids=list(CASES) + list(BIG))
def test_twin_with_shrinking_matches_libsvm(case):
    """-h 1: the same alpha and rho as libsvm-official to 1e-9 of C, the rule met over every variable, and G (by
    row, the shrunk variables' rebuilt) equal to Q alpha - 1 formed in NumPy (from Q in float32, as the solver's:
    only the order of the sums differs)."""
    _, l, _, kernel_type, gamma, coef0, degree, _, _ = case
    eps = 1e-3
    X, model, tw, coef, Cmax = train_both(case, eps, shrinking=True)
    assert [int(v) for v in model.get_labels()] == [int(v) for v in tw["labels"]]
    np.testing.assert_allclose(tw["sv_coef"], coef, rtol=0, atol=1e-9 * Cmax)
    assert tw["rho"] == pytest.approx(model.rho[0], rel=1e-9, abs=1e-12)
    assert np.count_nonzero(tw["alpha"]) == model.l
    assert tw["converged"] and tw["gap"] < eps
    K = S.kernel_matrix(X, X, kernel_type=kernel_type, gamma=gamma, coef0=coef0, degree=degree)
    ys = tw["y"]
    Q32 = (ys[:, None] * ys[None, :] * K).astype(np.float32).astype(np.float64)
    scale = np.abs(Q32).sum(1).max() * Cmax
    Qa = (Q32 * tw["alpha"][None, :]).sum(1)       # no BLAS (its threads on a shared machine)
    np.testing.assert_allclose(tw["G"], Qa - 1.0, rtol=0, atol=1e-12 * scale)
    assert tw["obj"] == pytest.approx(0.5 * (tw["alpha"] * Qa).sum() - tw["alpha"].sum(), rel=1e-6)
    if l >= 1000:
        # shrinking did happen: several do_shrinking calls, most variables out at some point, and the unshrink
        assert tw["n_shrink"] >= 3 and tw["min_active_size"] < l // 2 and tw["unshrunk"]
