"""cext/_smo.pyx, LIBSVM's Solver over the kernel cache, without shrinking (-h 0) and with it (-h 1, the default):
against its NumPy twin (tests/reference/smo_twin.py) bit for bit on tiny dense problems and on two larger ones where
shrinking takes variables out several times and unshrinks, against libsvm-official (-h 0 / -h 1) to 1e-9 of C, with
a cache too small for the problem (two columns), after max_iter pairs, and from a feasible start other than 0."""
import functools
import math

import numpy as np
import pytest
import scipy.sparse as sp

from llsvm._ext import _kernel as KK
from llsvm._ext import _smo as SMO
from llsvm._ext._rowops import row_sq_norms
from llsvm.dataset import CSRDataset
from reference import smo_twin as S
from test_smo_twin import BIG, CASES, libsvm_coef, libsvm_train, problem


def setup(X, kernel_type, gamma, coef0, degree, cache_size=100.0, rows=None, n_threads=1):
    """A kernel cache over the rows of X (rows: the row of each variable, a row may come twice; None: every row
    once; n_threads: its threads) and the kernel's diagonal QD by variable."""
    ds = CSRDataset.from_csr(sp.csr_matrix(X), np.zeros(len(X)))
    view = ds.row_view()
    params = {"kernel_type": kernel_type, "gamma": gamma, "coef0": coef0, "degree": degree}
    sq = row_sq_norms(view)
    all_rows = np.arange(len(X), dtype=np.int64) if rows is None else rows
    QD = np.empty(all_rows.size)
    KK.kernel_diag(all_rows, params, sq, QD)
    return KK.KernelCache(view, rows, params, sq, cache_size, n_threads), QD


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


ALL = {**CASES, **BIG}


@functools.lru_cache(maxsize=None)
def grouped_case(name):
    """A case in LIBSVM's order (the rows grouped by class, +1 first: svm_group_classes), with the twin's -h 1
    solution: (X, y, ys, Cp, Cn, K, twin dict), X, y, ys and K in that order."""
    seed, l, n, kernel_type, gamma, coef0, degree, C, weights = ALL[name]
    X, y = problem(seed, l, n)
    ys = signs(y)
    order = np.argsort(ys < 0, kind="stable")
    X, y, ys = X[order], y[order], ys[order]
    weights = weights or {}
    first, other = y[ys == 1][0], y[ys == -1][0]
    Cp, Cn = C * weights.get(int(first), 1.0), C * weights.get(int(other), 1.0)
    K = S.kernel_matrix(X, X, kernel_type=kernel_type, gamma=gamma, coef0=coef0, degree=degree)
    tw = S.solve(K, ys.astype(np.int64), Cp, Cn, eps=1e-3, shrinking=True)
    return X, y, ys, Cp, Cn, K, tw


def full_gradient(K, ys, alpha):
    """Q alpha - 1 in NumPy, Q in float32 as the solver's, and a tolerance for the order of its sums."""
    Q32 = (ys[:, None] * ys[None, :] * K).astype(np.float32).astype(np.float64)
    return (Q32 * alpha[None, :]).sum(1) - 1.0, 1e-12 * np.abs(Q32).sum(1).max() * max(1.0, alpha.max())


def violation(ys, C, alpha, G):
    """m(a) - M(a) from alpha and G alone."""
    yG = ys * G
    up = ((ys > 0) & (alpha < C)) | ((ys < 0) & (alpha > 0))
    low = ((ys > 0) & (alpha > 0)) | ((ys < 0) & (alpha < C))
    return (-yG[up]).max() - (-yG[low]).min()


@pytest.mark.parametrize("cache_size", [100.0, 0.0], ids=["cache", "two-columns"])
@pytest.mark.parametrize("name", ALL.keys())
def test_smo_shrinking_matches_twin_and_libsvm(name, cache_size):
    _, l, _, kernel_type, gamma, coef0, degree, C, weights = ALL[name]
    X, y, ys, Cp, Cn, K, tw = grouped_case(name)
    cache, QD = setup(X, kernel_type, gamma, coef0, degree, cache_size)
    alpha = np.zeros(l)
    out = SMO.solve(cache, ys, -np.ones(l), alpha, Cp, Cn, QD, eps=1e-3)      # shrinking: the default
    np.testing.assert_array_equal(alpha, tw["alpha"])
    np.testing.assert_array_equal(out["G"], tw["G"])
    assert out["rho"] == tw["rho"] and out["n_iter"] == tw["n_iter"] and out["gap"] == tw["gap"]
    for key in ("converged", "n_shrink", "min_active_size", "unshrunk"):
        assert out[key] == tw[key], key
    assert out["converged"] and out["gap"] < 1e-3
    # G by row, the shrunk variables' rebuilt; the cache back in its order
    G, tol = full_gradient(K, ys, alpha)
    np.testing.assert_allclose(out["G"], G, rtol=0, atol=tol)
    np.testing.assert_array_equal(cache.order, np.arange(l))
    model = libsvm_train(X, y, kernel_type, gamma, coef0, degree, C, weights, 1e-3, shrinking=True)
    np.testing.assert_allclose(ys * alpha, libsvm_coef(model, l), rtol=0, atol=1e-9 * max(Cp, Cn))
    assert out["rho"] == pytest.approx(model.rho[0], rel=1e-9, abs=1e-12)
    if name in BIG:
        assert out["n_shrink"] >= 3 and out["min_active_size"] < l // 2 and out["unshrunk"]
    if cache_size == 0.0:
        assert cache.stats["evictions"] > 0


@pytest.mark.parametrize("name", BIG.keys())
def test_smo_shrinking_and_no_shrinking_reach_the_same_optimum(name):
    _, l, _, kernel_type, gamma, coef0, degree, _, _ = BIG[name]
    X, _, ys, Cp, Cn, K, _ = grouped_case(name)
    C = np.where(ys > 0, Cp, Cn)
    res = {}
    for shrinking in (True, False):
        cache, QD = setup(X, kernel_type, gamma, coef0, degree)
        alpha = np.zeros(l)
        out = SMO.solve(cache, ys, -np.ones(l), alpha, Cp, Cn, QD, eps=1e-3, shrinking=shrinking)
        assert out["converged"] and out["gap"] < 1e-3
        assert violation(ys, C, alpha, out["G"]) < 1e-3
        assert (out["n_shrink"] > 0) == shrinking
        res[shrinking] = out["obj"]
    assert res[True] == pytest.approx(res[False], rel=1e-6)


def test_smo_shrinking_stops_at_max_iter():
    """After max_iter pairs (here once two shrinkings have taken variables out): G rebuilt over every variable, the
    gap the one at the end, converged False; the twin agrees bit for bit."""
    name = "big-rbf"
    _, l, _, kernel_type, gamma, coef0, degree, _, _ = BIG[name]
    X, _, ys, Cp, Cn, K, _ = grouped_case(name)
    tw = S.solve(K, ys.astype(np.int64), Cp, Cn, eps=1e-3, shrinking=True, max_iter=2500)
    cache, QD = setup(X, kernel_type, gamma, coef0, degree)
    alpha = np.zeros(l)
    out = SMO.solve(cache, ys, -np.ones(l), alpha, Cp, Cn, QD, eps=1e-3, max_iter=2500)
    assert out["n_iter"] == tw["n_iter"] == 2500 and not out["converged"] and not tw["converged"]
    assert out["n_shrink"] == tw["n_shrink"] == 2 and out["min_active_size"] < l
    np.testing.assert_array_equal(alpha, tw["alpha"])
    np.testing.assert_array_equal(out["G"], tw["G"])
    assert out["rho"] == tw["rho"] and out["gap"] == tw["gap"]
    G, tol = full_gradient(K, ys, alpha)
    np.testing.assert_allclose(out["G"], G, rtol=0, atol=tol)
    C = np.where(ys > 0, Cp, Cn)
    assert out["gap"] == violation(ys, C, alpha, out["G"]) and out["gap"] >= 1e-3


@pytest.mark.parametrize("cache_size", [100.0, 0.0], ids=["cache", "two-columns"])
def test_smo_shrinking_from_a_feasible_start(cache_size):
    """A start with variables at both bounds and free (G_bar starts from the ones at C): the twin's path bit for
    bit, and the optimum of the start from 0."""
    X, y = problem(23, 400, 4)
    ys = signs(y)
    l = 400
    a0 = np.zeros(l)
    pos, neg = np.flatnonzero(ys > 0)[:6], np.flatnonzero(ys < 0)[:6]
    a0[pos] = [1.0, 1.0, 0.5, 0.25, 1.0, 0.0]
    a0[neg] = [0.25, 1.0, 0.5, 1.0, 1.0, 0.0]
    assert ys @ a0 == 0.0
    K = S.kernel_matrix(X, X, kernel_type=2, gamma=0.5)
    tw = S.solve(K, ys.astype(np.int64), 1.0, 1.0, eps=1e-3, shrinking=True, alpha0=a0)
    cache, QD = setup(X, 2, 0.5, 0.0, 3, cache_size)
    alpha = a0.copy()
    out = SMO.solve(cache, ys, -np.ones(l), alpha, 1.0, 1.0, QD, eps=1e-3)
    assert out["n_shrink"] >= 1 and out["n_iter"] == tw["n_iter"]
    np.testing.assert_array_equal(alpha, tw["alpha"])
    np.testing.assert_array_equal(out["G"], tw["G"])
    assert out["rho"] == tw["rho"]
    ref = np.zeros(l)
    out0 = SMO.solve(setup(X, 2, 0.5, 0.0, 3)[0], ys, -np.ones(l), ref, 1.0, 1.0, QD, eps=1e-3)
    assert out["obj"] == pytest.approx(out0["obj"], rel=1e-6)


def libsvm_select(y, G, status, QD, K):
    """LIBSVM's select_working_set, its loops as svm.cpp writes them (status 0 lower, 1 upper, 2 free): (i, Gmax, j,
    Gmax2, best)."""
    tau = 1e-12
    G, QD = G.tolist(), QD.tolist()     # Python's floats: IEEE arithmetic without numpy's warnings on inf - inf
    Gmax, i = -math.inf, -1
    for t in range(len(y)):
        if y[t] == 1:
            if status[t] != 1 and -G[t] >= Gmax:
                Gmax, i = -G[t], t
        elif status[t] != 0 and G[t] >= Gmax:
            Gmax, i = G[t], t
    Gmax2, j, best = -math.inf, -1, math.inf
    for t in range(len(y)):
        if y[t] == 1:
            if status[t] == 0:
                continue
            diff = Gmax + G[t]
            if G[t] >= Gmax2:
                Gmax2 = G[t]
        else:
            if status[t] == 1:
                continue
            diff = Gmax - G[t]
            if -G[t] >= Gmax2:
                Gmax2 = -G[t]
        if diff > 0 and i >= 0:
            quad = QD[i] + QD[t] - 2.0 * float(K[i, t])
            obj = -(diff * diff) / (quad if quad > 0 else tau)
            if obj <= best:
                best, j = obj, t
    return i, Gmax, j, Gmax2, best


def float_bits(x):
    return np.float64(x).view(np.int64)


def select_draws(l, seed, cases=60):
    """(case, y, G, status, QD, K) for the pair searches' tests: gradients of few values (ties within and across
    blocks of 256) or normal, +0 and -0, infinities and NaN in some, statuses of two mixes, QD of one or a few
    values, kernel rows of few values (obj ties) or uniform."""
    rng = np.random.default_rng(seed)
    few = np.array([-1.0, -0.5, 0.0, -0.0, 0.5, 1.0, 2.0])
    odd = np.array([np.inf, -np.inf, np.nan])
    for case in range(cases):
        y = rng.choice(np.array([-1, 1], np.int8), l)
        G = rng.choice(few, l) if case % 3 else rng.normal(size=l)
        if case % 4 == 1:
            G[rng.random(l) < 0.05] = rng.choice(odd)
        status = rng.choice(np.array([0, 1, 2], np.int8), l, p=[0.5, 0.2, 0.3] if case % 2 else [0.1, 0.1, 0.8])
        QD = np.ones(l) if case % 5 else rng.choice(np.array([0.5, 1.0, 2.0]), l)
        K = rng.choice(np.array([0.0, 0.25, 0.5, 1.0], np.float32), (l, l)) if case % 2 else \
            rng.random((l, l)).astype(np.float32)
        yield case, y, G, status, QD, K


@pytest.mark.parametrize("l", [1, 2, 5, 255, 256, 257, 700])
def test_pair_search_in_blocks_is_libsvms_loop(l):
    """_select's passes in blocks (llsvm_select_i, llsvm_select_j: a branch-free map, the block's best, its last
    position holding it) give LIBSVM's loops' i, j and values bit for bit (+0 and -0 told apart), on gradients
    drawn from few values (ties within and across blocks of 256), +0 and -0, infinities and NaN, every status, and
    kernel rows of few values (obj ties)."""
    for case, y, G, status, QD, K in select_draws(l, l):
        got = SMO.select_pair(y, G, status, QD, K)
        want = libsvm_select(y.astype(int), G, status, QD, K)
        assert got[0] == want[0] and got[2] == want[2], (case, got, want)
        for g, w in zip(got[1::2] + (got[4],), want[1::2] + (want[4],)):
            assert float_bits(g) == float_bits(w), (case, got, want)


def libsvm_select_nu(y, G, status, QD, K):
    """LIBSVM's Solver_NU::select_working_set, its loops as svm.cpp writes them: (ip, Gmaxp, in, Gmaxn, j, Gmaxp2,
    Gmaxn2, best)."""
    tau = 1e-12
    G, QD = G.tolist(), QD.tolist()
    Gmaxp, Gmaxn, ip, i_n = -math.inf, -math.inf, -1, -1
    for t in range(len(y)):
        if y[t] == 1:
            if status[t] != 1 and -G[t] >= Gmaxp:
                Gmaxp, ip = -G[t], t
        elif status[t] != 0 and G[t] >= Gmaxn:
            Gmaxn, i_n = G[t], t
    Gmaxp2, Gmaxn2, j, best = -math.inf, -math.inf, -1, math.inf
    for t in range(len(y)):
        if y[t] == 1:
            if status[t] == 0:
                continue
            diff = Gmaxp + G[t]
            if G[t] >= Gmaxp2:
                Gmaxp2 = G[t]
            if diff > 0:
                quad = QD[ip] + QD[t] - 2.0 * float(K[ip, t])
                obj = -(diff * diff) / (quad if quad > 0 else tau)
                if obj <= best:
                    best, j = obj, t
        else:
            if status[t] == 1:
                continue
            diff = Gmaxn - G[t]
            if -G[t] >= Gmaxn2:
                Gmaxn2 = -G[t]
            if diff > 0:
                quad = QD[i_n] + QD[t] - 2.0 * float(K[i_n, t])
                obj = -(diff * diff) / (quad if quad > 0 else tau)
                if obj <= best:
                    best, j = obj, t
    return ip, Gmaxp, i_n, Gmaxn, j, Gmaxp2, Gmaxn2, best


@pytest.mark.parametrize("l", [1, 2, 5, 255, 256, 257, 700])
def test_nu_pair_search_in_blocks_is_libsvms_loop(l):
    """_select_nu's passes in blocks (llsvm_select_nu_i, llsvm_select_nu_j: each class's maxima, one obj over both)
    give Solver_NU's loops' ip, in, j and values bit for bit (+0 and -0 told apart), on the draws of the C-SVC test
    above, and with one class's i missing (all its variables at the bound that bars them from I_up)."""
    for case, y, G, status, QD, K in select_draws(l, 100 + l):
        if case % 7 == 3:
            status[y > 0] = 1                   # no ip: every y = +1 variable at its upper bound
        if case % 7 == 5:
            status[y < 0] = 0                   # no in
        got = SMO.select_pair_nu(y, G, status, QD, K)
        want = libsvm_select_nu(y.astype(int), G, status, QD, K)
        assert (got[0], got[2], got[4]) == (want[0], want[2], want[4]), (case, got, want)
        for k in (1, 3, 5, 6, 7):
            assert float_bits(got[k]) == float_bits(want[k]), (case, k, got, want)


@pytest.mark.parametrize("shrinking", [False, True], ids=["h0", "h1"])
@pytest.mark.parametrize("case, twice", [(c, False) for c in CASES.values()] + [(c, True) for c in CASES.values()]
                         + [(c, False) for c in BIG.values()],
                         ids=list(CASES) + [k + "-twice" for k in CASES] + list(BIG))
def test_pair_search_in_parts_is_the_pass_over_all(case, shrinking, twice):
    """_select's two passes cut into parts, one a thread, merged in order, and the gradient's and G_bar's updates in
    the same parts (a cache of two and of three threads, from one position on: select_parallel_min(1)), give the
    solve of one pass bit for bit: alpha, G, rho, obj, the
    iterations and LIBSVM's progress characters; the first pass starts with every -y_t G_t equal (ties in every
    part), the shrinking solves search shorter and shorter active sets, and with every row twice (the second half
    the first again: the two halves' best j tie) the later part must win as the later position does."""
    seed, l, n, kernel_type, gamma, coef0, degree, C, _ = case
    X, y = problem(seed, l, n)
    if twice:
        X, y, l = np.vstack([X, X]), np.concatenate([y, y]), 2 * l
    ys = signs(y)
    outs = []
    old = SMO.select_parallel_min(1)
    try:
        for n_threads in (1, 2, 3):
            cache, QD = setup(X, kernel_type, gamma, coef0, degree, n_threads=n_threads)
            alpha = np.zeros(l)
            out = SMO.solve(cache, ys, -np.ones(l), alpha, C, C, QD, eps=1e-3, shrinking=shrinking)
            outs.append((alpha, out))
    finally:
        SMO.select_parallel_min(old)
    a1, o1 = outs[0]
    for a, o in outs[1:]:
        np.testing.assert_array_equal(a, a1)
        np.testing.assert_array_equal(o["G"], o1["G"])
        assert (o["rho"], o["obj"], o["n_iter"], o["events"]) == (o1["rho"], o1["obj"], o1["n_iter"], o1["events"])
