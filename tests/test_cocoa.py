"""CoCoA+ for one two-class -s 1 / -s 3 problem (cext/_linear.pyx cocoa_local, llsvm/solvers/cocoa.py):

- the kernel and the client agree bit for bit with the Python twin (tests/reference/cocoa_twin.py) on tiny problems:
  K = 1, 2, 3 workers, H = 1, 2 local epochs, both losses, with and without a bias, float32 values, a row subset;
- one worker with sigma' = 1 and H = 1: a round is one epoch of the DCD kernel without shrinking;
- converged runs reach the -s 3 / -s 1 primal on heart_scale, for K = 2, 4;
- determinism (the seed, the mapper) and the certificate (dual <= primal; the sums equal a direct computation at
  the returned w and alpha).
"""
import pickle

import numpy as np
import pytest
import scipy.sparse as sp

import llsvm
from llsvm._ext import _linear as K
from llsvm._ext._random import rng_state
from llsvm.dataset import CSRDataset
from llsvm.solvers import Subproblem
from llsvm.solvers.cocoa import local_round, solve_cocoa, split_rows
from llsvm.solvers.common import Seeds
from llsvm.solvers.dcd import certify
from reference import cocoa_twin as CT
from reference import dcd_twin as T


def tiny(seed=1, l=40, n=7, density=0.5, float32=False, scales=False):
    """A tiny problem: Gaussian features (scales: rows on three scales, 0.1 to 10), a row without features, a
    duplicated row with the opposite label."""
    g = np.random.default_rng(seed)
    X = g.standard_normal((l, n)) * (g.random((l, n)) < density)
    y = np.where(g.random(l) < 0.45, 1.0, -1.0)
    if scales:
        X *= 10.0 ** g.integers(-1, 2, (l, 1))
    X[l // 2] = 0.0
    X[3], y[3] = X[2], -y[2]
    if float32:
        X = X.astype(np.float32).astype(np.float64)
    return X, y


def problem(X, y, Cp, Cn, bias, rows=None, float32=False):
    ds = CSRDataset.from_csr(sp.csr_matrix(X), y, dtype=np.float32 if float32 else None)
    ys = np.where((y if rows is None else y[rows]) > 0, 1, -1).astype(np.int8)
    return Subproblem(ds, ys, Cp, Cn, rows=rows, bias=bias)


def assert_same_run(res, twin):
    assert res.n_iter == twin.rounds and res.converged == twin.converged
    np.testing.assert_array_equal(res.w, twin.w)
    np.testing.assert_array_equal(res.alpha, twin.alpha)
    assert res.extra["history"] == twin.history


# ---------------------------------------------------------------------------------------------------------------
# the twin

@pytest.mark.parametrize("H", [1, 2])
@pytest.mark.parametrize("n_parts", [1, 2, 3])
@pytest.mark.parametrize("bias", [-1.0, 1.0], ids=["nobias", "bias"])
@pytest.mark.parametrize("l1", [True, False], ids=["s3", "s1"])
def test_agrees_with_twin(l1, bias, n_parts, H):
    X, y = tiny()
    Cp, Cn = 1.0, 2.0
    sub = problem(X, y, Cp, Cn, bias)
    res = solve_cocoa(split_rows(sub, n_parts), l1, eps=0.05, max_iter=300, epochs=H, seed=7)
    twin = CT.solve(X, y, Cp, Cn, l1, n_parts, H, eps=0.05, max_iter=300, seed=7, bias=bias)
    assert_same_run(res, twin)
    assert res.w.size == X.shape[1] + (bias >= 0)
    assert res.extra["rounds"] == res.n_iter and res.extra["calls"] == res.n_iter + 1
    assert res.extra["bytes_per_round"] == 8 * res.w.size * 2 * n_parts
    assert (res.alpha >= 0).all()
    if l1:
        assert (res.alpha <= sub.C()).all()


def test_the_twin_suite_stops_both_ways():
    """The twin cases above end by the stopping rule and at the round limit, both."""
    X, y = tiny()
    ends = set()
    for l1 in (True, False):
        for n_parts in (1, 3):
            res = solve_cocoa(split_rows(problem(X, y, 1.0, 2.0, 1.0), n_parts), l1, eps=0.05, max_iter=300,
                              seed=7)
            ends.add(res.converged)
    assert ends == {True, False}


@pytest.mark.parametrize("n_parts", [2, 3])
def test_agrees_with_twin_float32_and_row_subset(n_parts):
    X, y = tiny(seed=2, l=60, n=9, float32=True, scales=True)
    rows = np.random.default_rng(5).permutation(60)[:45]
    sub = problem(X, y, 0.5, 3.0, 0.5, rows=rows, float32=True)
    for l1 in (True, False):
        res = solve_cocoa(split_rows(sub, n_parts), l1, eps=0.05, max_iter=60, epochs=2, seed=11)
        twin = CT.solve(X[rows], y[rows], 0.5, 3.0, l1, n_parts, 2, eps=0.05, max_iter=60, seed=11, bias=0.5)
        assert_same_run(res, twin)


def test_local_round_agrees_with_twin_and_leaves_its_inputs():
    """One call from a non-zero (w, alpha): every returned figure, the visiting order the seed gives, and the
    inputs untouched."""
    X, y = tiny(seed=3, scales=True)
    sub = split_rows(problem(X, y, 1.0, 1.0, 1.0), 2)[1]
    g = np.random.default_rng(0)
    for l1 in (True, False):
        alpha = g.random(sub.l) * (sub.C() if l1 else 2.0)
        alpha[::4] = 0.0
        if l1:
            alpha[1::5] = sub.C()[1::5]
        w = g.standard_normal(sub.w_size)
        a0, w0 = alpha.copy(), w.copy()
        out = local_round(sub, alpha, w, 2.0, 3, 99, l1)
        np.testing.assert_array_equal(alpha, a0)
        np.testing.assert_array_equal(w, w0)
        rows, n = T.as_rows(X[20:])
        order = []
        ref = CT.local_round(rows, n, 1.0, [int(v) for v in sub.y], list(alpha), list(w), 2.0, 3, 99, 1.0, 1.0, l1,
                             record=order)
        for key in ("pg_max", "pg_min", "sum_alpha", "sum_diag", "loss"):
            assert out[key] == ref[key], key
        np.testing.assert_array_equal(out["dw"], ref["dw"])
        np.testing.assert_array_equal(out["alpha_k_new"], ref["alpha_k_new"])
        # the twin's order is the project's RNG: the kernel's permutation of 0..l-1, continued epoch after epoch
        st = rng_state(99)
        perm = np.arange(sub.l)
        from llsvm._ext._random import permutation
        for e in range(3):
            p = permutation(sub.l, st)
            perm = perm[p]
            assert order[e] == perm.tolist()


def test_epochs_zero_only_evaluates():
    X, y = tiny()
    sub = problem(X, y, 1.0, 1.0, 1.0)
    alpha = np.full(sub.l, 0.3)
    w = np.random.default_rng(1).standard_normal(sub.w_size)
    out = local_round(sub, alpha, w, 1.0, 0, 1, True)
    np.testing.assert_array_equal(out["alpha_k_new"], alpha)
    assert not out["dw"].any()
    out1 = local_round(sub, alpha, w, 1.0, 2, 1, True)
    for key in ("pg_max", "pg_min", "sum_alpha", "sum_diag", "loss"):
        assert out[key] == out1[key]


# ---------------------------------------------------------------------------------------------------------------
# one worker, sigma' = 1, H = 1: DCD epochs without shrinking

@pytest.mark.parametrize("bias", [-1.0, 1.0], ids=["nobias", "bias"])
@pytest.mark.parametrize("l1", [True, False], ids=["s3", "s1"])
def test_one_worker_round_is_one_dcd_epoch(l1, bias):
    X, y = tiny(seed=4, scales=True)
    sub = problem(X, y, 1.0, 2.0, bias)
    xnorm = np.empty(sub.l)
    K.sq_norms(*sub.args, xnorm)
    seeds = Seeds(5)
    alpha = np.zeros(sub.l)
    w = np.zeros(sub.w_size)
    res = solve_cocoa([sub], l1, eps=0.0, max_iter=6, epochs=1, seed=5)
    for r in range(6):
        seed = seeds.next()
        out = local_round(sub, alpha, w, 1.0, 1, seed, l1)
        # LIBLINEAR's epoch from the same (alpha, w), same order, no shrinking (PG_max_old = inf, PG_min_old = -inf)
        a_dcd, w_dcd = alpha.copy(), w.copy()
        K.dcd_epoch(*sub.args, sub.y, a_dcd, w_dcd, xnorm, np.arange(sub.l, dtype=np.int32), sub.l, np.inf, -np.inf,
                    sub.Cp, sub.Cn, l1, rng_state(seed))
        np.testing.assert_array_equal(out["alpha_k_new"], a_dcd)
        # w moves by the same steps, added in another order (dw: rows in order at the end of the round)
        np.testing.assert_allclose(w + out["dw"], w_dcd, rtol=0, atol=1e-12 * max(1.0, np.abs(w_dcd).max()))
        alpha, w = out["alpha_k_new"], w + out["dw"]
    # the client with K = 1 runs these rounds
    np.testing.assert_array_equal(res.alpha, alpha)
    np.testing.assert_array_equal(res.w, w)
    assert res.n_iter == 6 and not res.converged


# ---------------------------------------------------------------------------------------------------------------
# convergence, determinism, certificate

def signs(y):
    return np.where(np.asarray(y) > 0, 1, -1).astype(np.int8)


@pytest.fixture(scope="module")
def heart(load):
    ds = load("heart_scale")
    sub = Subproblem(ds, signs(ds.y), 1.0, 1.0, bias=1.0)
    ref = {s: llsvm.train(ds, solver=s, C=1.0, bias=1.0, eps=1e-4, max_iter=100000).meta["results"][0]
           for s in (1, 3)}
    return ds, sub, ref


@pytest.mark.parametrize("n_parts", [2, 4])
@pytest.mark.parametrize("solver", [3, 1])
def test_converges_to_the_dcd_primal(heart, solver, n_parts):
    ds, sub, ref = heart
    res = solve_cocoa(split_rows(sub, n_parts), solver == 3, eps=0.01, max_iter=10000, seed=1)
    assert res.converged and res.solver == solver
    assert abs(res.primal - ref[solver].primal) <= 1e-3 * ref[solver].primal
    assert 0 <= res.gap <= 1e-3 * res.primal
    assert res.max_violation <= 0.01
    gaps = [g for _, _, g in res.extra["history"]]
    assert min(gaps) >= -1e-9 * res.primal and gaps[-1] < 1e-2 * gaps[0]


def test_determinism_and_the_mapper(heart):
    ds, sub, _ = heart
    parts = split_rows(sub, 4)
    a = solve_cocoa(parts, True, eps=0.01, max_iter=300, epochs=2, seed=3)
    b = solve_cocoa(split_rows(sub, 4), True, eps=0.01, max_iter=300, epochs=2, seed=3)
    np.testing.assert_array_equal(a.w, b.w)
    np.testing.assert_array_equal(a.alpha, b.alpha)
    # a mapper that ships every call through pickle (as Dask would) and runs the workers in reverse order
    calls = []

    def pickled_map(fn, list_of_args):
        calls.append(len(list_of_args))
        shipped = [pickle.loads(pickle.dumps((fn, args))) for args in list_of_args]
        out = [f(*args) for f, args in reversed(shipped)][::-1]
        return [pickle.loads(pickle.dumps(o)) for o in out]

    c = solve_cocoa(parts, True, eps=0.01, max_iter=300, epochs=2, seed=3, mapper=pickled_map)
    np.testing.assert_array_equal(a.w, c.w)
    assert calls == [4] * (a.n_iter + 1)
    # another seed: another path, the same neighbourhood
    d = solve_cocoa(parts, True, eps=0.01, max_iter=300, epochs=2, seed=4)
    assert not np.array_equal(a.w, d.w)


def test_different_worker_counts_reach_the_same_w(heart):
    ds, sub, ref = heart
    ws = [solve_cocoa(split_rows(sub, k), False, eps=1e-3, max_iter=20000, seed=1).w for k in (1, 2, 4)]
    for w in ws[1:]:
        assert np.linalg.norm(w - ws[0]) <= 1e-3 * np.linalg.norm(ws[0])
    assert np.linalg.norm(ws[0] - ref[1].w) <= 1e-3 * np.linalg.norm(ref[1].w)


@pytest.mark.parametrize("max_iter", [5, 10000])
@pytest.mark.parametrize("l1", [True, False], ids=["s3", "s1"])
def test_certificate_is_at_the_returned_w_and_alpha(heart, l1, max_iter):
    """Stopped by the rule or by the round limit, the reported figures are those of the returned (w, alpha)."""
    ds, sub, _ = heart
    res = solve_cocoa(split_rows(sub, 3), l1, eps=0.01, max_iter=max_iter, seed=2)
    assert res.converged == (max_iter > 5) and (res.n_iter == 5 or res.converged)
    assert res.dual <= res.primal
    X = ds.to_csr()
    ys = sub.y
    assert res.primal == pytest.approx(T.primal_objective(res.w, X, ys, 1.0, 1.0, l1, 1.0), rel=1e-12)
    cert = certify(sub, res.w, res.alpha, l1)
    assert res.primal == pytest.approx(cert.primal, rel=1e-12)
    assert res.dual == pytest.approx(cert.dual, rel=1e-12)
    assert res.max_violation == pytest.approx(cert.max_violation, rel=1e-12, abs=1e-15)
    assert res.nSV == cert.nSV
    # w is w(alpha) up to rounding: the dual from alpha alone agrees
    assert res.dual == pytest.approx(T.dual_objective(res.alpha, X, ys, 1.0, 1.0, l1, 1.0), rel=1e-10)
    assert res.max_violation == pytest.approx(T.max_violation(res.alpha, X, ys, 1.0, 1.0, l1, 1.0), abs=1e-9)
