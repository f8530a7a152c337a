"""LIBSVM's Solver_NU: cext/_smo.pyx's solve(nu=True) and nu_start, and the nu-SVC and nu-SVR drivers, against the
NumPy twin tests/reference/smo_nu_twin.py; the twin checked on its own (the nu-problem's KKT conditions by class,
the C-SVC it solves) and against libsvm-official.

The kernel and the twin agree bit for bit on generated problems (several seeds, RBF and linear kernels, -h 1 and
-h 0, nu-SVC pairs with the rows grouped by class as LIBSVM's svm_group_classes, nu-SVR over its 2l variables, a
kernel cache of two columns, rows on a coarse grid where ties decide the pairs): the start, alpha, G, rho, r, the
iteration count, the final violation, the shrinking statistics and LIBSVM's progress characters; the objective to
1e-12 (both sum it element-wise, in different orders); rho and r without free variables (after 0 pairs). The
kernel does not give its working pairs out: they are read from its alpha after k pairs (max_iter=k) for the first
150 pairs, each the twin's pair. Each of these checks was seen to fail on a local perturbation of cext/_smo.pyx
(a tie rule, the shrinking bounds of one class, nu_start's class sums, the diagonal of the other class's i, the
no-free rho)."""
import json
import subprocess
import sys

import numpy as np
import pytest

import llsvm
from llsvm._ext import _smo as SMO
from llsvm.options import SMOOptions
from llsvm.params import Params
from reference import smo_nu_twin as N
from reference import smo_twin as S
from test_smo import setup
from test_smo_twin import problem

CASES = {
    # id: (kind, seed, rows, features, kernel_type, gamma, nu, C, shrinking, cache_size)
    "svc-rbf-1": ("svc", 1, 120, 4, 2, 0.5, 0.3, 1.0, True, 100.0),
    "svc-rbf-1-h0": ("svc", 1, 120, 4, 2, 0.5, 0.3, 1.0, False, 100.0),
    "svc-rbf-2-two-columns": ("svc", 2, 100, 5, 2, 0.2, 0.5, 1.0, True, 0.0),
    "svc-linear-3": ("svc", 3, 120, 3, 0, 1.0, 0.2, 1.0, True, 100.0),
    "svc-linear-4-h0": ("svc", 4, 90, 4, 0, 1.0, 0.4, 1.0, False, 100.0),
    "svc-linear-6-warning": ("svc", 6, 120, 4, 0, 1.0, 0.3, 1.0, True, 100.0),
    "svr-rbf-6": ("svr", 6, 80, 4, 2, 0.5, 0.4, 2.0, True, 100.0),
    "svr-rbf-7-h0": ("svr", 7, 70, 3, 2, 1.0, 0.6, 1.0, False, 100.0),
    "svr-rbf-8-two-columns": ("svr", 8, 60, 4, 2, 0.25, 0.3, 4.0, True, 0.0),
    "svr-linear-9": ("svr", 9, 80, 4, 0, 1.0, 0.5, 1.0, True, 100.0),
    "svr-linear-10-h0": ("svr", 10, 60, 3, 0, 1.0, 0.2, 2.0, False, 100.0),
    # rows on a coarse grid: many equal rows, so equal gradients and equal second-order gains, where only the
    # order of ties (LIBSVM's >= and <=) decides the pair
    "svc-ties-linear-4": ("svc-grid", 4, 80, 3, 0, 1.0, 0.4, 1.0, True, 100.0),
    "svc-ties-rbf-5-h0": ("svc-grid", 5, 80, 3, 2, 0.5, 0.4, 1.0, False, 100.0),
    "svr-ties-linear-7": ("svr-grid", 7, 80, 3, 0, 1.0, 0.4, 1.0, True, 100.0),
    "svr-ties-rbf-1": ("svr-grid", 1, 80, 3, 2, 0.5, 0.4, 1.0, True, 100.0),
}
EPS = 1e-3


def regression(seed, l, n):
    """l rows of n features in [-1, 1] and real targets, a noisy smooth function of them."""
    g = np.random.default_rng(seed)
    X = g.uniform(-1.0, 1.0, (l, n))
    return X, np.sin(2 * X[:, 0]) + X[:, 1] * X[:, 2 % n] + 0.1 * g.standard_normal(l)


def nu_problem(case):
    """One case as Solver_NU sees it: (X in the solver's row order, rows: the row of each variable, y, p, C, the
    twin's start, the kernel's start from _smo.nu_start as the driver computes it). Kinds "svc-grid" and
    "svr-grid": the features (and targets) rounded to a coarse grid."""
    kind, seed, l, n, _, _, nu, C, _, _ = case
    if kind.startswith("svc"):
        X, labels = problem(seed, l, n)
        if kind.endswith("grid"):
            X = np.round(X).clip(-1, 1)
        _, _, y, order = S.two_classes(labels)
        X, y = X[order], y[order]
        rows, p, C = np.arange(l), np.zeros(l), 1.0
        start = N.nu_start(y, nu * l / 2, C)
        kstart = np.zeros(l)
        SMO.nu_start(y.astype(np.int8), nu * l / 2, C, kstart)
    else:
        X, z = regression(seed, l, n)
        if kind.endswith("grid"):
            X, z = np.round(2 * X) / 2, np.round(4 * z) / 4
        rows, y, p, start = N.svr_problem(z, nu, C)
        kstart = np.zeros(2 * l)
        SMO.nu_start(np.ones(l, np.int8), C * nu * l / 2, C, kstart[:l])
        kstart[l:] = kstart[:l]
    return X, rows, y, p, C, start, kstart


def run_kernel(case, max_iter=None, n_threads=1):
    """The case solved by the kernel from its own start: (kernel dict, alpha, problem as nu_problem's); n_threads:
    the cache's (the pair search's parts, from SELECT_PARALLEL_MIN positions)."""
    _, _, _, _, kernel_type, gamma, _, _, shrinking, cache_size = case
    X, rows, y, p, C, start, kstart = nu_problem(case)
    cache, QD = setup(X, kernel_type, gamma, 0.0, 3, cache_size, rows=rows.astype(np.int64), n_threads=n_threads)
    alpha = kstart.copy()
    out = SMO.solve(cache, y.astype(np.int8), p, alpha, C, C, QD, eps=EPS, max_iter=max_iter, shrinking=shrinking,
                    nu=True)
    np.testing.assert_array_equal(cache.order, rows)        # the cache back in its order
    return out, alpha, (X, rows, y, p, C, start, kstart)


def run_twin(case, max_iter=None):
    _, _, _, _, kernel_type, gamma, _, _, shrinking, _ = case
    X, rows, y, p, C, start, _ = nu_problem(case)
    K = S.kernel_matrix(X, X, kernel_type=kernel_type, gamma=gamma)[np.ix_(rows, rows)]
    return N.solve_nu(K, y, p, C, start, EPS, shrinking, max_iter)


def run_both(case, max_iter=None):
    """The case solved by the twin and by the kernel: (twin dict, kernel dict, kernel alpha, problem)."""
    return (run_twin(case, max_iter),) + run_kernel(case, max_iter)


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_kernel_matches_twin(case):
    tw, out, alpha, (_, rows, y, p, C, start, kstart) = run_both(case)
    np.testing.assert_array_equal(kstart, start)
    np.testing.assert_array_equal(alpha, tw["alpha"])
    np.testing.assert_array_equal(out["G"], tw["G"])
    for key in ("rho", "r", "n_iter", "gap", "converged", "n_shrink", "min_active_size", "unshrunk"):
        assert out[key] == tw[key], key
    assert out["events"] == tw["events"].encode()
    assert out["obj"] == pytest.approx(tw["obj"], rel=1e-12, abs=1e-12)
    assert out["converged"] and out["gap"] < EPS and np.isfinite(out["r"])
    if not case[8]:
        assert out["n_shrink"] == 0 and out["min_active_size"] == rows.size and not out["unshrunk"]


@pytest.mark.parametrize("n_threads", [2, 3])
@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_parts_are_the_pass_over_all(case, n_threads):
    """Solver_NU's pair search cut into parts, one a thread, merged in order (a cache of two and of three threads,
    from one position on: select_parallel_min(1)), gives the twin's solve (one pass over all) bit for bit: alpha,
    G, rho, r, the iterations and LIBSVM's progress characters; the grid cases' ties fall across the parts."""
    old = SMO.select_parallel_min(1)
    try:
        out, alpha, _ = run_kernel(case, n_threads=n_threads)
    finally:
        SMO.select_parallel_min(old)
    tw = run_twin(case)
    np.testing.assert_array_equal(alpha, tw["alpha"])
    np.testing.assert_array_equal(out["G"], tw["G"])
    for key in ("rho", "r", "n_iter", "gap"):
        assert out[key] == tw[key], key
    assert out["events"] == tw["events"].encode()


def test_cases_cover_shrinking():
    """The -h 1 cases do shrink: variables leave the active set, the one-time unshrink happens, and LIBSVM's
    reconstruct_gradient warning ('W') comes once."""
    seen = {"shrunk": 0, "unshrunk": 0, "W": 0}
    for case in CASES.values():
        if not case[8]:
            continue
        tw, out, _, (_, rows, *_) = run_both(case)
        seen["shrunk"] += out["min_active_size"] < rows.size // 2
        seen["unshrunk"] += out["unshrunk"]
        seen["W"] += b"W" in out["events"]
    assert seen["shrunk"] >= 3 and seen["unshrunk"] >= 3 and seen["W"] >= 1, seen


@pytest.mark.parametrize("name", ["svc-rbf-1", "svc-rbf-1-h0", "svc-linear-3", "svr-rbf-6", "svr-linear-10-h0",
                                  "svc-ties-rbf-5-h0", "svr-ties-linear-7"])
def test_kernel_working_pairs_are_the_twins(name):
    """The kernel's alpha after k pairs (max_iter=k) differs from its alpha after k - 1 only in the twin's k-th
    working pair, for the first 150 pairs; after the last of them (and a do_shrinking) alpha is the twin's."""
    case = CASES[name]
    pairs = run_twin(case)["pairs"]
    k_max = min(150, len(pairs))
    assert k_max >= 30
    _, prev, _ = run_kernel(case, max_iter=0)
    for k in range(1, k_max + 1):
        out, alpha, _ = run_kernel(case, max_iter=k)
        changed = set(np.flatnonzero(alpha != prev).tolist())
        assert changed and changed <= set(pairs[k - 1]), (k, changed, pairs[k - 1])
        prev = alpha
    tw = run_twin(case, max_iter=k_max)
    np.testing.assert_array_equal(alpha, tw["alpha"])
    np.testing.assert_array_equal(out["G"], tw["G"])
    assert out["n_iter"] == tw["n_iter"] == k_max and out["rho"] == tw["rho"] and out["r"] == tw["r"]
    assert out["gap"] == tw["gap"] and out["events"] == tw["events"].encode()


@pytest.mark.parametrize("kind", ["svc", "svr"])
def test_rho_and_r_without_free_variables(kind):
    """A start whose class sums are whole (nu l / 2 = 10, C = 1) has no free variable: after 0 pairs (max_iter=0)
    rho and r come from the middle of each class's bounds (calculate_rho's other branch, r_s = (min G over its
    a_t = 0 + max G over its a_t = C) / 2): the kernel's equal to the twin's and to NumPy's."""
    case = (kind, 21, 80, 4, 2, 0.5, 0.25, 1.0, True, 100.0)
    tw, out, _, (_, _, y, _, C, start, _) = run_both(case, max_iter=0)
    assert out["n_iter"] == tw["n_iter"] == 0 and not out["converged"]
    assert not ((start > 0) & (start < C)).any()
    assert out["rho"] == tw["rho"] and out["r"] == tw["r"]
    np.testing.assert_array_equal(out["G"], tw["G"])
    G = tw["G"]
    rs = {s: (G[(y == s) & (start == 0)].min() + G[(y == s) & (start == C)].max()) / 2 for s in (1, -1)}
    assert tw["rho"] == (rs[1] - rs[-1]) / 2 and tw["r"] == (rs[1] + rs[-1]) / 2


@pytest.mark.parametrize("y,total,C", [
    ([1, 1, 1, -1, -1, -1, -1], 1.7, 1.0),        # a fractional remainder, the rest 0
    ([1, -1, 1, -1, 1, -1], 2.0, 1.0),            # exhausted exactly, classes interleaved
    ([1, 1, 1, 1], 10.0, 2.5),                    # more than the class can take: all at C
    ([1, 1, 1, 1, 1], 0.0, 1.0),                  # nothing
    ([-1, -1, 1, 1, 1], 0.3, 0.2),
])
def test_nu_start_is_the_twins(y, total, C):
    y = np.array(y, np.int8)
    a = np.full(y.size, np.nan)
    SMO.nu_start(y, total, C, a)
    np.testing.assert_array_equal(a, N.nu_start(y, total, C))
    for s in (1, -1):
        if (y == s).any():
            assert a[y == s].sum() == pytest.approx(min(total, C * (y == s).sum()), rel=1e-15)


def by_class_kkt(y, C, alpha, G, rho, r, eps):
    """The nu-problem's optimality by class, from alpha and G alone: for each class s, m_s - M_s < eps (the largest
    -y_t G_t over I_up minus the smallest over I_low), and with r_s = r + s rho (Solver_NU's class means:
    rho = (r_+ - r_-) / 2, r = (r_+ + r_-) / 2), G_t >= r_s - eps at a_t = 0, G_t <= r_s + eps at a_t = C and
    |G_t - r_s| < eps for free a_t (the class's multiplier is r_s)."""
    for s in (1, -1):
        c = y == s
        a, g = alpha[c], G[c]
        up = (a < C) if s > 0 else (a > 0)
        low = (a > 0) if s > 0 else (a < C)
        assert (-s * g[up]).max() - (-s * g[low]).min() < eps
        rs = r + s * rho
        free = (a > 0) & (a < C)
        assert free.any()
        assert np.all(g[a == 0] >= rs - eps) and np.all(g[a == C] <= rs + eps)
        np.testing.assert_allclose(g[free], rs, rtol=0, atol=eps)


@pytest.mark.parametrize("kind,seed,kernel_type,shrinking", [("svc", 12, 2, True), ("svc", 13, 0, False),
                                                             ("svr", 14, 2, True), ("svr", 15, 0, True)])
def test_twin_meets_the_kkt_conditions_by_class(kind, seed, kernel_type, shrinking):
    """At eps 1e-6: the box, each class's sum kept from the start, G = Q a + p and the objective recomputed in
    NumPy (Q in float32 as the solver's), and by_class_kkt."""
    eps, nu = 1e-6, 0.35
    case = (kind, seed, 60 if kind == "svc" else 40, 4, kernel_type, 0.5, nu, 2.0, shrinking, 100.0)
    X, rows, y, p, C, start, _ = nu_problem(case)
    K = S.kernel_matrix(X, X, kernel_type=kernel_type, gamma=0.5)[np.ix_(rows, rows)]
    tw = N.solve_nu(K, y, p, C, start, eps, shrinking)
    a, G = tw["alpha"], tw["G"]
    assert tw["converged"] and tw["gap"] < eps and (tw["n_shrink"] > 0) == shrinking
    assert np.all(a >= 0) and np.all(a <= C)
    for s in (1, -1):
        assert a[y == s].sum() == pytest.approx(start[y == s].sum(), rel=1e-12)
    Q32 = (y[:, None] * y[None, :] * K).astype(np.float32).astype(np.float64)
    Qa = (Q32 * a[None, :]).sum(1)
    np.testing.assert_allclose(G, Qa + p, rtol=0, atol=1e-12 * np.abs(Q32).sum(1).max() * C)
    assert tw["obj"] == pytest.approx(0.5 * (a * Qa).sum() + (p * a).sum(), rel=1e-10)
    by_class_kkt(y, C, a, G, tw["rho"], tw["r"], 2 * eps)


def test_twin_nu_svc_is_the_c_svc_of_c_1_over_r():
    """Chang and Lin 2001: the nu-SVC solution scaled by 1/r solves the C-SVC of C = 1/r. The smo_twin C-SVC at
    that C (both at eps 1e-8) reaches the same coefficients and rho."""
    X, labels = problem(16, 60, 4)
    nu_out = N.nu_svc(X, labels, 0.4, eps=1e-8, kernel_type=2, gamma=0.5)
    c_out = S.csvc(X, labels, C=nu_out["C"], eps=1e-8, kernel_type=2, gamma=0.5)
    assert nu_out["labels"] == c_out["labels"]
    np.testing.assert_allclose(nu_out["sv_coef"], c_out["sv_coef"], rtol=0, atol=1e-5 * nu_out["C"])
    assert nu_out["model_rho"] == pytest.approx(c_out["rho"], rel=1e-5, abs=1e-6)
    # LIBSVM's nu-SVC obj / r^2 is 1/2 a'Qa at the scaled a (p = 0), the C-SVC's f(a) without its -e'a
    assert nu_out["model_obj"] - np.abs(nu_out["sv_coef"]).sum() == pytest.approx(c_out["obj"], rel=1e-6)


@pytest.mark.parametrize("shrinking", [1, 0])
def test_drivers_give_the_twins_model(shrinking):
    """llsvm.train -s nu_svc (two classes, the ovo driver's grouping and start, the scaling by r) and -s nu_svr
    (single.py's 2l variables and start): the model's coefficients and rho are the twin's, bit for bit."""
    opts = SMOOptions(kernel_type=2, gamma=0.5, shrinking=shrinking)
    X, labels = problem(17, 80, 4)
    m = llsvm.train(X, labels, params=Params(solver="nu_svc", nu=0.3, eps=EPS, options=opts), say=lambda s: None)
    tw = N.nu_svc(X, labels, 0.3, eps=EPS, shrinking=bool(shrinking), kernel_type=2, gamma=0.5)
    idx = m.meta["sv_indices"] - 1
    np.testing.assert_array_equal(np.sort(idx), np.flatnonzero(tw["sv_coef"]))
    np.testing.assert_array_equal(m.sv_coef[0], tw["sv_coef"][idx])
    assert m.rho[0] == tw["model_rho"]
    X, z = regression(18, 70, 4)
    m = llsvm.train(X, z, params=Params(solver="nu_svr", nu=0.4, C=2.0, eps=EPS, options=opts), say=lambda s: None)
    tw = N.nu_svr(X, z, 0.4, C=2.0, eps=EPS, shrinking=bool(shrinking), kernel_type=2, gamma=0.5)
    idx = m.meta["sv_indices"] - 1
    np.testing.assert_array_equal(idx, np.flatnonzero(tw["coef"]))
    np.testing.assert_array_equal(m.sv_coef[0], tw["coef"][idx])
    assert m.rho[0] == tw["rho"]


TRAIN = ("import json, sys\nfrom libsvm import svmutil\ny, x = svmutil.svm_read_problem(sys.argv[1])\n"
         "m = svmutil.svm_train(y, x, ' '.join(sys.argv[2:]))\n"
         "print('RESULT ' + json.dumps({'rho': m.rho[0], 'coef': [c[0] for c in m.get_sv_coef()],\n"
         "                              'idx': m.get_sv_indices()}))\n")


def libsvm_official(path, args):
    """libsvm-official's svm_train in a fresh process (its C printf is the way to LIBSVM's r): its stdout lines
    and the model's rho, sv_coef and 1-based SV indices."""
    proc = subprocess.run([sys.executable, "-c", TRAIN, str(path), *args], capture_output=True, text=True,
                          timeout=600, check=True)
    lines = proc.stdout.splitlines()
    result = json.loads(next(s for s in lines if s.startswith("RESULT "))[7:])
    return lines, result


def printed(lines, key):
    """The number LIBSVM printed as `key = %f` (the first such)."""
    for line in lines:
        for part in line.split(", "):
            if part.startswith(key + " = "):
                return float(part[len(key) + 3:])
    raise AssertionError(f"no '{key} = ' in {lines}")


@pytest.mark.parametrize("kind", ["svc", "svr"])
def test_twin_rho_and_r_are_libsvms(tmp_path, kind):
    """A tiny problem (40 rows), -h 1: svm-train's r (nu-SVC prints C = 1/r, nu-SVR epsilon = -r, %f), rho and
    coefficients (the model's, %.17g) equal the twin's."""
    if kind == "svc":
        X, target = problem(19, 40, 3)
        args = ["-s", "1", "-n", "0.45"]
        tw = N.nu_svc(X, target, 0.45, kernel_type=2, gamma=0.5)
        coef, rho, r_line = tw["sv_coef"], tw["model_rho"], ("C", 1 / tw["r"])
    else:
        X, target = regression(20, 40, 3)
        args = ["-s", "4", "-n", "0.45", "-c", "2"]
        tw = N.nu_svr(X, target, 0.45, C=2.0, kernel_type=2, gamma=0.5)
        coef, rho, r_line = tw["coef"], tw["rho"], ("epsilon", -tw["r"])
    path = tmp_path / "tiny.txt"
    path.write_text("".join(f"{float(t)!r} " + " ".join(f"{j + 1}:{float(v)!r}" for j, v in enumerate(row)) + "\n"
                            for row, t in zip(X, target)))
    lines, lib = libsvm_official(path, [*args, "-t", "2", "-g", "0.5", "-e", "0.001", "-h", "1"])
    assert printed(lines, r_line[0]) == pytest.approx(r_line[1], abs=1e-6)
    assert printed(lines, "#iter") == tw["n_iter"]
    assert lib["rho"] == pytest.approx(rho, rel=1e-12, abs=1e-14)
    idx = np.asarray(lib["idx"]) - 1
    np.testing.assert_array_equal(np.sort(idx), np.flatnonzero(coef))
    np.testing.assert_allclose(lib["coef"], coef[idx], rtol=1e-12, atol=1e-14)
