"""The kernel core (cext/kernel.pxd, cext/_kernel.pyx): LIBSVM's four kernels over the row view against
scikit-learn's pairwise kernels, kernel columns over a row subset, dense blocks between two views, and the LRU
column cache (correct columns under a small budget, eviction order, swap_index, the two-column minimum)."""
import math

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.metrics import pairwise

from llsvm._ext import _kernel as K
from llsvm._ext._rowops import row_sq_norms
from llsvm._ext._view import Rows

PARAMS = [
    {"kernel_type": 0},
    {"kernel_type": 1, "degree": 3, "gamma": 0.7, "coef0": 1.5},
    {"kernel_type": 1, "degree": 2, "gamma": 0.3, "coef0": -0.5},
    {"kernel_type": 1, "degree": 0, "gamma": 0.3, "coef0": 0.0},
    {"kernel_type": 2, "gamma": 0.4},
    {"kernel_type": 3, "gamma": 0.2, "coef0": -0.3},
]
IDS = ["linear", "poly3", "poly2", "poly0", "rbf", "sigmoid"]


def sparse(seed, n_rows, n_features, density=0.3, dtype=np.float64, empty=(1,)):
    """A random CSR matrix (sorted indices) with the given rows empty."""
    rng = np.random.default_rng(seed)
    M = sp.random(n_rows, n_features, density=density, format="csr", random_state=rng,
                  data_rvs=lambda n: rng.normal(size=n)).astype(dtype)
    M = M.tolil()
    for i in empty:
        if i < n_rows:
            M[i, :] = 0
    M = M.tocsr()
    M.eliminate_zeros()
    M.sort_indices()
    return M


def view(M, n_features=None, bias=-1.0):
    return Rows(M.indptr.astype(np.int64), M.indices.astype(np.int32), np.ascontiguousarray(M.data),
                M.shape[1] if n_features is None else n_features, bias)


def reference(p, A, B):
    """scikit-learn's kernel with LIBSVM's parameters, in float64 on the (possibly float32) values."""
    A = A.toarray().astype(np.float64)
    B = B.toarray().astype(np.float64)
    t = p["kernel_type"]
    if t == 0:
        return pairwise.linear_kernel(A, B)
    if t == 1 and p["degree"] < 1:        # scikit-learn refuses degree 0; LIBSVM accepts it (k = 1)
        return (p["gamma"] * A @ B.T + p["coef0"]) ** p["degree"]
    if t == 1:
        return pairwise.polynomial_kernel(A, B, degree=p["degree"], gamma=p["gamma"], coef0=p["coef0"])
    if t == 2:
        return pairwise.rbf_kernel(A, B, gamma=p["gamma"])
    return pairwise.sigmoid_kernel(A, B, gamma=p["gamma"], coef0=p["coef0"])


@pytest.mark.parametrize("p", PARAMS, ids=IDS)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_kernel_column_over_a_subset(p, dtype):
    M = sparse(1, 40, 25, dtype=dtype, empty=(1, 7))
    X = view(M)
    sq = row_sq_norms(X)
    ref = reference(p, M, M)
    rows = np.array([5, 1, 39, 7, 0, 5, 22], np.int64)       # empty rows, a repeated row
    out = np.empty(len(rows))
    for j in (0, 1, 7, 22, 39):
        K.kernel_column(X, rows, j, p, sq, out)
        np.testing.assert_allclose(out, ref[rows, j], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("p", PARAMS, ids=IDS)
def test_kernel_diag(p):
    M = sparse(8, 30, 12, empty=(0, 4))
    sq = row_sq_norms(view(M))
    rows = np.array([4, 0, 29, 13, 13], np.int64)
    QD = np.full(5, np.nan)
    K.kernel_diag(rows, p, sq, QD)
    np.testing.assert_allclose(QD, np.diag(reference(p, M, M))[rows], rtol=1e-12, atol=1e-12)
    with pytest.raises(ValueError, match="out of range"):
        K.kernel_diag(np.array([30], np.int64), p, sq, np.empty(1))


def test_rbf_near_duplicates_stay_at_most_one_and_empty_rows():
    # rows 1e-6 apart around a point of norm ~5e3: |x|^2 + |z|^2 - 2 x.z cancels to rounding (~1e-8), often
    # negative; clamped at 0, no kernel value exceeds 1 (unclamped, about half of them would), and k(x, x) = 1
    rng = np.random.default_rng(0)
    D = rng.normal(size=30) * 1e3 + rng.normal(size=(20, 30)) * 1e-6
    M = sp.csr_matrix(D)
    X = view(M)
    sq = row_sq_norms(X)
    out = np.empty((20, 20))
    K.kernel_block(X, X, {"kernel_type": 2, "gamma": 1.0}, sq, sq, out)
    assert np.all(out <= 1.0) and np.all(np.diag(out) == 1.0)
    np.testing.assert_allclose(out, 1.0, atol=1e-6)
    M = sparse(2, 12, 9, density=0.5, empty=(3,))
    X = view(M)
    sq = row_sq_norms(X)
    out = np.empty(12)
    # an empty row: x.z = 0, so linear 0, polynomial coef0^degree, sigmoid tanh(coef0)
    for p, want in [({"kernel_type": 0}, 0.0), ({"kernel_type": 1, "gamma": 2.0, "coef0": 1.5, "degree": 3}, 3.375),
                    ({"kernel_type": 3, "gamma": 2.0, "coef0": 0.5}, np.tanh(0.5))]:
        K.kernel_column(X, np.arange(12, dtype=np.int64), 3, p, sq, out)
        np.testing.assert_allclose(out, want, rtol=1e-15)


def test_disjoint_indices_give_zero_dot():
    # rows over features 0..4 and 5..9 only
    A = sp.csr_matrix(np.hstack([np.arange(1.0, 6.0), np.zeros(5)])[None, :])
    B = sp.csr_matrix(np.hstack([np.zeros(5), np.arange(1.0, 6.0)])[None, :])
    M = sp.vstack([A, B]).tocsr()
    X = view(M)
    sq = row_sq_norms(X)
    out = np.empty(1)
    K.kernel_column(X, np.array([0], np.int64), 1, {"kernel_type": 0}, sq, out)
    assert out[0] == 0.0
    K.kernel_column(X, np.array([0], np.int64), 1, {"kernel_type": 2, "gamma": 0.01}, sq, out)
    assert out[0] == pytest.approx(np.exp(-0.01 * 2 * 55.0), rel=1e-15)


@pytest.mark.parametrize("p", PARAMS, ids=IDS)
@pytest.mark.parametrize("dtypes", [(np.float64, np.float64), (np.float32, np.float64), (np.float64, np.float32),
                                    (np.float32, np.float32)])
def test_kernel_block_between_two_views(p, dtypes):
    A = sparse(3, 17, 30, dtype=dtypes[0], empty=(0, 16))
    B = sparse(4, 11, 23, dtype=dtypes[1], empty=(5,))     # fewer features: B's rows never reach A's last ones
    VA, VB = view(A), view(B)
    out = np.full((17, 11), np.nan)
    K.kernel_block(VA, VB, p, row_sq_norms(VA), row_sq_norms(VB), out)
    Bw = sp.csr_matrix((B.data, B.indices, B.indptr), shape=(11, 30))
    np.testing.assert_allclose(out, reference(p, A, Bw), rtol=1e-12, atol=1e-12)


def test_views_with_a_bias_are_refused():
    M = sparse(5, 6, 4)
    Xb = view(M, bias=1.0)
    X = view(M)
    sq = row_sq_norms(X)
    with pytest.raises(ValueError, match="bias"):
        K.kernel_column(Xb, np.arange(6, dtype=np.int64), 0, {"kernel_type": 0}, sq, np.empty(6))
    with pytest.raises(ValueError, match="bias"):
        K.kernel_block(X, Xb, {"kernel_type": 0}, sq, sq, np.empty((6, 6)))
    with pytest.raises(ValueError, match="bias"):
        K.KernelCache(Xb, None, {"kernel_type": 0}, sq)
    # the same view without its bias gives the bias-free kernel
    out = np.empty(6)
    K.kernel_column(Xb.with_bias(-1.0), np.arange(6, dtype=np.int64), 2, {"kernel_type": 0}, sq, out)
    np.testing.assert_allclose(out, (M @ M.T).toarray()[:, 2], rtol=1e-14)


def test_parameter_and_shape_checks():
    M = sparse(6, 5, 4)
    X = view(M)
    sq = row_sq_norms(X)
    rows = np.arange(5, dtype=np.int64)
    for bad, msg in [({"kernel_type": 5}, "unknown kernel"), ({"kernel_type": 2}, "gamma is required"),
                     ({"kernel_type": 2, "gamma": -1.0}, "gamma < 0"),
                     ({"kernel_type": 1, "gamma": 1.0, "degree": -1}, "degree"), ({}, "kernel_type")]:
        with pytest.raises(ValueError, match=msg):
            K.kernel_column(X, rows, 0, bad, sq, np.empty(5))
    with pytest.raises(ValueError, match="out of range"):
        K.kernel_column(X, np.array([0, 5], np.int64), 0, {"kernel_type": 0}, sq, np.empty(2))
    with pytest.raises(ValueError, match="out of range"):
        K.kernel_column(X, rows, 5, {"kernel_type": 0}, sq, np.empty(5))
    with pytest.raises(ValueError, match="entries"):
        K.kernel_column(X, rows, 0, {"kernel_type": 0}, sq[:4], np.empty(5))
    with pytest.raises(ValueError, match="entries"):
        K.kernel_column(X, rows, 0, {"kernel_type": 0}, sq, np.empty(4))
    with pytest.raises(ValueError, match="block"):
        K.kernel_block(X, X, {"kernel_type": 0}, sq, sq, np.empty((5, 4)))
    with pytest.raises(ValueError, match="cache size"):
        K.KernelCache(X, None, {"kernel_type": 0}, sq, -1.0)


# -- the cache ----------------------------------------------------------------------------------------------------
def cache_problem(seed=7, n_rows=60, dtype=np.float64):
    M = sparse(seed, n_rows, 20, dtype=dtype, empty=(2, 30))
    X = view(M)
    return M, X, row_sq_norms(X)


def mb_for_columns(l, n_columns):
    """A cache size (MB) that holds exactly n_columns columns of l rows (budget less the bookkeeping)."""
    return (n_columns * l * 4 + l * 48) / 2.0 ** 20       # 6 int64 of bookkeeping per row


@pytest.mark.parametrize("p", PARAMS, ids=IDS)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_cache_under_a_small_budget_returns_correct_columns(p, dtype):
    M, X, sq = cache_problem(dtype=dtype)
    rows = np.random.default_rng(1).permutation(60)[:45].astype(np.int64)   # a subproblem of 45 rows
    l = len(rows)
    ref = reference(p, M, M)[np.ix_(rows, rows)]
    c = K.KernelCache(X, rows, p, sq, mb_for_columns(l, 5))
    assert c.l == l and c.stats["capacity"] == 5
    rng = np.random.default_rng(2)
    for _ in range(300):
        j = int(rng.integers(l))
        length = int(rng.integers(1, l + 1))
        col = c.column(j, length)
        assert col.dtype == np.float32 and col.shape == (length,)
        np.testing.assert_allclose(col, ref[:length, j].astype(np.float32), rtol=2e-6, atol=2e-6)
    st = c.stats
    assert st["hits"] + st["misses"] == 300
    assert st["evictions"] > 0 and st["columns"] == 5
    assert st["bytes_in_use"] == 4 * sum(c.cached_length(j) for j in range(l))
    assert st["bytes_in_use"] <= st["capacity_bytes"] == 5 * l * 4


def test_cache_default_budget_holds_everything():
    M, X, sq = cache_problem()
    c = K.KernelCache(X, None, {"kernel_type": 2, "gamma": 0.5}, sq)
    assert c.stats["capacity"] == 60
    for j in range(60):
        c.column(j)
    for j in range(60):
        c.column(j)
    assert c.stats == {"hits": 60, "misses": 60, "evictions": 0, "dropped": 0, "columns": 60, "capacity": 60,
                       "bytes_in_use": 60 * 60 * 4, "capacity_bytes": 60 * 60 * 4}


def test_cache_evicts_the_least_recently_used():
    M, X, sq = cache_problem()
    c = K.KernelCache(X, None, {"kernel_type": 0}, sq, mb_for_columns(60, 3))
    for j in (0, 1, 2):
        c.column(j)
    c.column(0)                     # 0 is now the most recent; 1 the least
    c.column(3)                     # evicts 1
    assert c.stats["evictions"] == 1
    assert [c.cached_length(j) for j in range(4)] == [60, 0, 60, 60]
    misses = c.stats["misses"]
    c.column(0)
    c.column(2)
    assert c.stats["misses"] == misses      # both survived
    c.column(1)                     # back in: evicts 3, the least recent now
    assert c.cached_length(3) == 0 and c.stats["misses"] == misses + 1 and c.stats["evictions"] == 2


def test_cache_extends_a_short_column():
    M, X, sq = cache_problem()
    ref = reference({"kernel_type": 0}, M, M)
    c = K.KernelCache(X, None, {"kernel_type": 0}, sq, mb_for_columns(60, 2))
    c.column(4, 10)
    assert c.cached_length(4) == 10
    c.column(4, 5)                  # shorter: a hit
    assert c.stats["hits"] == 1 and c.cached_length(4) == 10
    col = c.column(4, 50)           # longer: extended
    assert c.stats["misses"] == 2 and c.cached_length(4) == 50
    np.testing.assert_allclose(col, ref[:50, 4], rtol=2e-6, atol=2e-6)
    assert c.stats["bytes_in_use"] == 50 * 4


@pytest.mark.parametrize("n_columns", [2, 7, 60])
def test_swap_index_keeps_columns_consistent(n_columns):
    M, X, sq = cache_problem(seed=11)
    p = {"kernel_type": 2, "gamma": 0.3}
    full = reference(p, M, M)
    c = K.KernelCache(X, None, p, sq, mb_for_columns(60, n_columns))
    perm = np.arange(60)
    rng = np.random.default_rng(3)
    for step in range(400):
        if rng.random() < 0.3:
            i, j = (int(v) for v in rng.integers(60, size=2))
            c.swap_index(i, j)
            perm[[i, j]] = perm[[j, i]]
        else:
            j = int(rng.integers(60))
            length = int(rng.integers(1, 61))
            col = c.column(j, length)
            np.testing.assert_allclose(col, full[perm[:length], perm[j]], rtol=2e-6, atol=2e-6)
        np.testing.assert_array_equal(c.order, perm)
    # every column still cached is right over its whole cached length
    for j in range(60):
        n = c.cached_length(j)
        if n:
            np.testing.assert_allclose(c.column(j, n), full[perm[:n], perm[j]], rtol=2e-6, atol=2e-6)


@pytest.mark.parametrize("n_columns", [2, 7, 60])
def test_reset_order_undoes_the_swaps(n_columns):
    """After any swaps, reset_order gives back the first order (rows given at construction, here a permutation),
    every column still cached is right, and full-length columns survive."""
    M, X, sq = cache_problem(seed=12)
    p = {"kernel_type": 2, "gamma": 0.3}
    full = reference(p, M, M)
    rows = np.random.default_rng(5).permutation(60).astype(np.int64)
    c = K.KernelCache(X, rows, p, sq, mb_for_columns(60, n_columns))
    rng = np.random.default_rng(4)
    for j in range(min(n_columns, 60)):
        c.column(j)                        # full-length columns
    kept = [j for j in range(60) if c.cached_length(j) == 60]
    for _ in range(300):
        i, j = (int(v) for v in rng.integers(60, size=2))
        c.swap_index(i, j)
    assert not np.array_equal(c.order, rows)
    c.reset_order()
    np.testing.assert_array_equal(c.order, rows)
    assert [j for j in range(60) if c.cached_length(j) == 60] == kept
    for j in range(60):
        n = c.cached_length(j)
        if n:
            np.testing.assert_allclose(c.column(j, n), full[rows[:n], rows[j]], rtol=2e-6, atol=2e-6)


def test_swap_index_drops_a_column_holding_only_one_of_the_two():
    M, X, sq = cache_problem()
    c = K.KernelCache(X, None, {"kernel_type": 0}, sq)
    c.column(0, 10)                 # holds entry 5, not entry 20
    c.column(1, 30)                 # holds both
    c.column(2, 3)                  # holds neither
    c.swap_index(20, 5)
    assert [c.cached_length(j) for j in range(3)] == [0, 30, 3]
    assert c.stats["dropped"] == 1 and c.stats["bytes_in_use"] == 33 * 4
    # a swapped column moves with its row
    c.column(5, 60)
    c.swap_index(5, 59)
    assert c.cached_length(59) == 60 and c.cached_length(5) == 0


@pytest.mark.parametrize("size", [0.0, 1e-9, mb_for_columns(60, 1.5)])
def test_a_budget_below_two_columns_holds_two(size):
    M, X, sq = cache_problem()
    ref = reference({"kernel_type": 1, "gamma": 0.5, "coef0": 1.0, "degree": 2}, M, M)
    c = K.KernelCache(X, None, {"kernel_type": 1, "gamma": 0.5, "coef0": 1.0, "degree": 2}, sq, size)
    assert c.stats["capacity"] == 2
    for j in (3, 9, 3, 9, 17, 3):
        np.testing.assert_allclose(c.column(j), ref[:, j], rtol=2e-6)
    st = c.stats
    assert (st["hits"], st["misses"], st["evictions"], st["columns"]) == (2, 4, 2, 2)


def test_tiny_problems():
    M, X, sq = cache_problem()
    c = K.KernelCache(X, np.array([4], np.int64), {"kernel_type": 0}, sq, 0.0)
    assert c.stats["capacity"] == 1
    np.testing.assert_allclose(c.column(0), [sq[4]], rtol=2e-6)
    c0 = K.KernelCache(X, np.empty(0, np.int64), {"kernel_type": 0}, sq)
    assert c0.l == 0 and c0.stats["capacity"] == 0
    with pytest.raises(ValueError, match="out of range"):
        c0.column(0)
    c = K.KernelCache(X, None, {"kernel_type": 0}, sq)
    for bad in [(60, 1), (-1, 1), (0, 0), (0, 61)]:
        with pytest.raises(ValueError, match="out of range"):
            c.column(*bad)
    with pytest.raises(ValueError, match="out of range"):
        c.swap_index(0, 60)


@pytest.mark.parametrize("p", PARAMS, ids=IDS)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_columns_bit_for_bit_with_the_merge_and_any_threads(p, dtype):
    """A column scatters its row into a dense scratch and sums one product per entry of the other row in index
    order: the same sum as the sorted-index merge (kernel_block's) bit for bit; with 2 OpenMP threads (long
    columns: 3000 rows) the values are the same again."""
    M = sparse(11, 3000, 40, density=0.4, dtype=dtype, empty=(3, 700))
    X = view(M)
    sq = row_sq_norms(X)
    rows = np.arange(3000, dtype=np.int64)
    cols = [5, 3, 1999]
    merged = np.empty((3000, len(cols)))
    block = np.empty((3000, 1))
    for k, j in enumerate(cols):
        one = M[j]
        K.kernel_block(X, view(one.tocsr(), n_features=M.shape[1]), p, sq, sq[j:j + 1].copy(), block)
        merged[:, k] = block[:, 0]
    out = np.empty(3000)
    for k, j in enumerate(cols):
        K.kernel_column(X, rows, j, p, sq, out)
        np.testing.assert_array_equal(out, merged[:, k])
    one = K.KernelCache(X, rows, p, sq, 100.0, n_threads=1)
    two = K.KernelCache(X, rows, p, sq, 100.0, n_threads=2)
    for k, j in enumerate(cols):
        np.testing.assert_array_equal(one.column(j, 3000), merged[:, k].astype(np.float32))
        np.testing.assert_array_equal(two.column(j, 3000), one.column(j, 3000))
    with pytest.raises(ValueError, match="n_threads"):
        K.KernelCache(X, rows, p, sq, 100.0, n_threads=0)


def libm_floats(t):
    """float32(exp(t)) with libm's exp (Python's math.exp), one value at a time; inf where it overflows."""
    out = []
    for x in t:
        try:
            out.append(math.exp(x))
        except OverflowError:
            out.append(math.inf)
    with np.errstate(over="ignore"):      # exp(709) is a double beyond the largest float: inf, as the cast gives it
        return np.array(out).astype(np.float32)


def same_bits(a, b):
    return np.array_equal(a.view(np.int32), b.view(np.int32)) or (
        np.array_equal(np.isnan(a), np.isnan(b)) and np.array_equal(a[~np.isnan(a)].view(np.int32),
                                                                    b[~np.isnan(b)].view(np.int32)))


def test_exp_floats_are_libms_bit_for_bit():
    """exp_to_float (kernel.pxd: the RBF cache's exps, many at once) gives float32(libm's exp) bit for bit: over the
    exponents an RBF kernel meets (random, around 0, the float's subnormal range, where the float becomes 0, below
    -708 where the candidates are not computed), the special values, and values whose exp lies at a float
    rounding boundary, which the candidates cannot round safely and libm recomputes (counted)."""
    rng = np.random.default_rng(3)
    special = [math.nan, -0.0, 0.0, math.inf, -math.inf, -708.0, np.nextafter(-708.0, 0), -745.2, -746.0, -1e300,
               88.72, 88.73, 709.0, 709.8, -103.97, -103.98, -87.33, 1e-300, -1e-300]
    # exp(t) at the midpoint of two adjacent floats (to within a unit of the double): the candidates' check flags it
    f = rng.uniform(0.4, 2.5, 2000).astype(np.float32)
    mid = (f.astype(np.float64) + np.nextafter(f, np.float32(np.inf)).astype(np.float64)) / 2
    t_mid = np.log(mid)
    t = np.concatenate([special, t_mid, rng.uniform(-30, 0, 100000), rng.uniform(-1e-6, 0, 20000),
                        rng.uniform(-104.5, -86, 20000), rng.uniform(-800, 800, 20000),
                        -np.abs(rng.standard_normal(20000)) * 1e3])
    out = np.empty(t.shape, np.float32)
    redone = K.exp_floats(t, out)
    ref = libm_floats(t)
    bad = np.flatnonzero((out.view(np.int32) != ref.view(np.int32)) & ~(np.isnan(out) & np.isnan(ref)))
    assert bad.size == 0, (t[bad[:5]], out[bad[:5]], ref[bad[:5]])
    assert redone >= len(t_mid)          # every boundary value went to libm (and NaN, inf, over 709)
    assert redone < len(t_mid) + 20000   # the rest from the candidates: only the out-of-range part of [-800, 800]
    part = np.empty(7, np.float32)       # a length that is no multiple of the vector width
    K.exp_floats(t[5000:5007], part)
    assert same_bits(part, ref[5000:5007])
    with pytest.raises(ValueError, match="entries"):
        K.exp_floats(t[:3], np.empty(2, np.float32))


@pytest.mark.parametrize("gamma", [1e-9, 0.4, 6.5, 3000.0])
@pytest.mark.parametrize("wide", [False, True])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_rbf_cache_columns_are_libms_floats(gamma, wide, dtype):
    """The cache's RBF columns (exps many at once, kernel.pxd's exp_to_float; four rows' dot products side by side,
    dot_dense4) hold the floats of kernel_column's doubles (libm's exp and one dot product at a time) bit for bit:
    with a dense scratch and with the merge (indices too wide for a scratch), rows of different lengths and empty
    ones, one and two threads, a column extended from a short one, and gammas from k = 1 to underflow (40:
    exponents in the float's subnormal range; 3000: below -708)."""
    M = sparse(21, 3000, 40, density=0.4, dtype=dtype, empty=(3, 700))
    if wide:                               # the same rows, indices spread to 4e8: no dense scratch
        M = sp.csr_matrix((M.data, M.indices.astype(np.int64) * 10_000_000, M.indptr), shape=(3000, 400_000_000))
        assert K.index_width(view(M)) > 1 << 20
    X = view(M)
    p = {"kernel_type": 2, "gamma": gamma}
    sq = K.kernel_sq_norms(X, p)
    rows = np.arange(3000, dtype=np.int64)
    exact = np.empty(3000)
    seen = []
    for n_threads in (1, 2):
        c = K.KernelCache(X, rows, p, sq, 100.0, n_threads=n_threads)
        for j in (5, 3, 1999):
            K.kernel_column(X, rows, j, p, sq, exact)
            want = exact.astype(np.float32)
            assert same_bits(c.column(j, 1001), want[:1001])
            assert same_bits(c.column(j, 3000), want)             # extended from entry 1001
            seen.append(want)
    seen = np.concatenate(seen)
    if gamma == 6.5:
        assert 0 < np.count_nonzero((seen > 0) & (seen < np.finfo(np.float32).tiny))    # subnormal floats met
    if gamma == 3000.0:
        assert np.count_nonzero(seen == 0) > 1000


def assert_cache_is_kernel_column(c, X, rows, p, sq, columns, short, block):
    """The cache c over X's rows `rows` gives the floats of kernel_column's doubles bit for bit: each of `columns`
    first for its `short` first positions, then extended to full length, and the columns `block` by get_block."""
    exact = np.empty(rows.size)
    for j in columns:
        K.kernel_column(X, rows, rows[j], p, sq, exact)
        want = exact.astype(np.float32)
        assert same_bits(c.column(j, short), want[:short])
        assert same_bits(c.column(j, rows.size), want)
    got = c.block(np.array(block, np.int64))
    for k, j in enumerate(block):
        K.kernel_column(X, rows, rows[j], p, sq, exact)
        assert same_bits(got[k], exact.astype(np.float32))


def binary(seed, n_rows, n_features, density=0.2, dtype=np.float64):
    """A random CSR matrix of ones, every seventh entry an explicit 0.0 (kept), rows 2 and 9 empty."""
    rng = np.random.default_rng(seed)
    M = sp.random(n_rows, n_features, density=density, format="csr", random_state=rng).astype(dtype)
    M.sort_indices()
    M.data[:] = 1.0
    M.data[::7] = 0.0
    for i in (2, 9):
        M.data[M.indptr[i]:M.indptr[i + 1]] = 0.0
    return M


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
@pytest.mark.parametrize("p", PARAMS + [{"kernel_type": 2, "gamma": 1 / 150}, {"kernel_type": 2, "gamma": 40.0}],
                         ids=IDS + ["rbf-1/n", "rbf-underflow"])
def test_binary_cache_columns_are_the_general_floats(p, dtype):
    """Rows of 0s and 1s (the binary rows' way: popcounts and a table of the kernel at each integer, _kernel.pyx)
    give the floats of kernel_column's doubles (one product at a time, libm's exp) bit for bit, for every kernel:
    rows in a shuffled order, explicit zeros and empty rows, one and two threads, a column extended from a short
    one, a block (get_block, which takes them column by column), and after a swap."""
    M = binary(31, 3000, 150, dtype=dtype)
    X = view(M)
    sq = K.kernel_sq_norms(X, p)
    rows = np.random.default_rng(5).permutation(3000).astype(np.int64)
    exact = np.empty(3000)
    for n_threads in (1, 2):
        c = K.KernelCache(X, rows, p, sq, 100.0, n_threads=n_threads)
        assert c.binary
        assert_cache_is_kernel_column(c, X, rows, p, sq, (0, 5, 2999, int(np.flatnonzero(rows == 2)[0])), 1001,
                                      (7, 11, 0))
        c.swap_index(0, 2500)
        order = c.order
        assert order[0] == rows[2500]
        K.kernel_column(X, order, order[1], p, sq, exact)
        assert same_bits(c.column(1, 3000), exact.astype(np.float32))


def test_binary_rows_only_where_they_are_exact():
    """The binary way is taken only where it gives the general floats: every stored value 0 or 1, at most 16 words
    of 64 features and no more words than a row's mean entries (else the general way: a value of 2 or 0.5, 1,100
    features, a sparse wide set), and for the RBF kernel the squared norms the counts."""
    p = {"kernel_type": 2, "gamma": 0.1}
    M = binary(3, 400, 150)
    X = view(M)
    assert K.KernelCache(X, None, p, K.kernel_sq_norms(X, p)).binary
    assert K.KernelCache(X, None, {"kernel_type": 0}, K.kernel_sq_norms(X, p)).binary
    for value in (2.0, 0.5, -1.0, np.nan):
        N = M.copy()
        N.data[np.flatnonzero(N.data == 1.0)[10]] = value
        Y = view(N)
        assert not K.KernelCache(Y, None, p, K.kernel_sq_norms(Y, p)).binary
    sq = K.kernel_sq_norms(X, p).copy()
    sq[17] += 1.0                                # squared norms that are not the counts: RBF reads them
    assert not K.KernelCache(X, None, p, sq).binary
    assert K.KernelCache(X, None, {"kernel_type": 0}, sq).binary       # the linear kernel does not
    wide = binary(4, 400, 1100, density=0.5)
    W = view(wide)
    assert not K.KernelCache(W, None, p, K.kernel_sq_norms(W, p)).binary
    thin = binary(4, 400, 1000, density=0.004)      # 16 words a row, 4 entries
    T = view(thin)
    assert not K.KernelCache(T, None, p, K.kernel_sq_norms(T, p)).binary


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
@pytest.mark.parametrize("gamma", [1 / 3, 0.37, 0.0125, 1e-6, 7.0], ids=["1/n", "0.37", "0.0125", "tiny", "7"])
def test_integer_rows_rbf_columns_are_libms_floats(gamma, dtype):
    """An RBF cache over integer-valued rows (skin_nonskin's pixels: 0 .. 255; here -40 .. 255 and zeros) reads its
    floats from a table of exp(-gamma k) for integer squared distances k, +0 below the exponent -104, else libm's
    exp; the floats are kernel_column's doubles' bit for bit: gammas whose exponents step across -104 (0.37: one
    every 0.37, so some fall in (-104, -103], where the float is the least subnormal, not 0), a table capped at
    65,536 integers (tiny gamma: the rest from libm's exp), most entries far below -104 (7), one and two threads,
    float32 rows, a column extended, a block (get_block: --ws), and squared norms that are not integers (a
    caller's, read as given: then no table look-up applies, and the floats are still libm's)."""
    rng = np.random.default_rng(8)
    dense = rng.integers(-40, 256, size=(2500, 3)).astype(dtype)
    dense[::5, 1] = 0
    M = sp.csr_matrix(dense)
    M.sort_indices()
    X = view(M)
    p = {"kernel_type": 2, "gamma": gamma}
    sq = K.kernel_sq_norms(X, p)
    rows = rng.permutation(2500).astype(np.int64)
    exact = np.empty(2500)
    for given in (sq, sq + 0.25):
        for n_threads in (1, 2):
            c = K.KernelCache(X, rows, p, given, 100.0, n_threads=n_threads)
            assert not c.binary and c.table_size == min(65536, int(104 / gamma + 2))
            assert_cache_is_kernel_column(c, X, rows, p, given, (0, 17, 2499), 700, (3, 9, 1000))
    if gamma == 0.37:                       # a column with floats just above the exponent -104: not 0
        D = dense.astype(np.int64)
        d2 = ((D[:, None, :] - D[None, :400, :]) ** 2).sum(axis=2)
        e = -gamma * d2.astype(np.float64)
        j = int(np.flatnonzero(((e > -104) & (e < -103)).any(axis=0))[0])
        c = K.KernelCache(X, None, p, sq, 100.0)
        K.kernel_column(X, np.arange(2500, dtype=np.int64), j, p, sq, exact)
        near = (e[:, j] > -104) & (e[:, j] < -103)
        assert np.all(exact[near].astype(np.float32) > 0) and same_bits(c.column(j), exact.astype(np.float32))
    N = M.copy()
    N.data[5] = 0.5                         # one value not an integer: no table
    Y = view(N)
    assert K.KernelCache(Y, None, p, K.kernel_sq_norms(Y, p)).table_size == 0
    assert K.KernelCache(X, None, {"kernel_type": 1, "gamma": gamma, "coef0": 1.0, "degree": 2}, sq).table_size == 0


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
@pytest.mark.parametrize("n_threads", [1, 2])
def test_full_rows_rbf_columns_are_libms_floats(n_threads, dtype):
    """Rows holding every feature (usps.t's 256) take their dot products eight at a time (kernel.pxd's dot_full8:
    no index read, x_j loaded once), bit for bit the general sums: a dense view with a few rows missing a feature
    here and there (groups of eight that are not all full, and columns of such rows), in a shuffled order, columns
    extended, a block; the floats are kernel_column's (one dot_dense at a time)."""
    rng = np.random.default_rng(12)
    dense = rng.normal(size=(1200, 37)).astype(dtype)
    dense[[3, 100, 101, 107, 555, 1199], [0, 36, 5, 9, 17, 1]] = 0.0      # six rows not full
    M = sp.csr_matrix(dense)
    M.sort_indices()
    X = view(M)
    p = {"kernel_type": 2, "gamma": 0.05}
    sq = K.kernel_sq_norms(X, p)
    rows = rng.permutation(1200).astype(np.int64)
    c = K.KernelCache(X, rows, p, sq, 100.0, n_threads=n_threads)
    assert not c.binary and c.table_size == 0
    where = [int(np.flatnonzero(rows == r)[0]) for r in (3, 555, 8, 9)]
    assert_cache_is_kernel_column(c, X, rows, p, sq, where + [0, 1199], 333, (5, 100, where[0]))


def assert_swapped_columns_exact(c, X, sq, p, swaps, columns):
    """After the positions `swaps` of cache c are exchanged, its `columns` are kernel_column's floats bit for bit."""
    for a, b in swaps:
        c.swap_index(a, b)
    order = c.order
    exact = np.empty(c.l)
    for j in columns:
        K.kernel_column(X, order, order[j], p, sq, exact)
        assert same_bits(c.column(j), exact.astype(np.float32))


def with_holes(dense, rng):
    """dense with a tenth of its entries gone and row 17 empty, and its CSR matrix with explicit zeros of both signs
    stored: the holes a panel's lanes fill with zeros."""
    holey = dense.copy()
    holey[rng.random(holey.shape) < 0.1] = 0.0
    holey[17] = 0.0
    H = sp.csr_matrix(holey)
    H.data[::50] = -0.0
    H.data[25::50] = 0.0
    return holey, H


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
@pytest.mark.parametrize("n_threads", [1, 2])
def test_panel_columns_are_libms_floats(n_threads, dtype):
    """A dense view keeps its positions' rows in panels of four (one SIMD lane a row, llsvm_panel_dots) and their
    squared norms in position order: the columns are kernel_column's floats bit for bit, from any start (3, 333:
    not a multiple of four), after swaps (the panels rebuilt), on 1 and 2 threads, from float32 rows; rows that lack
    features (zeros in their lanes: an empty row, x_j's own holes, explicit -0.0 and 0.0 kept) and a view of 3
    features too; a view with fewer than 3/4 of its width stored, or one with a hole and an infinite value, goes
    without."""
    rng = np.random.default_rng(14)
    dense = rng.normal(size=(1203, 37)).astype(dtype)
    dense[dense == 0] = 0.5
    M = sp.csr_matrix(dense)
    X = view(M)
    p = {"kernel_type": 2, "gamma": 0.05}
    sq = K.kernel_sq_norms(X, p)
    rows = rng.permutation(1203).astype(np.int64)
    c = K.KernelCache(X, rows, p, sq, 100.0, n_threads=n_threads)
    assert c.panels
    exact = np.empty(1203)
    for j in (0, 5, 1202):
        K.kernel_column(X, rows, rows[j], p, sq, exact)
        assert same_bits(c.column(j, 3), exact[:3].astype(np.float32))
        assert same_bits(c.column(j, 333), exact[:333].astype(np.float32))
        assert same_bits(c.column(j, 1203), exact.astype(np.float32))
    assert_swapped_columns_exact(c, X, sq, p, ((0, 700), (5, 6)), (1, 6, 700, 1000))
    holey, H = with_holes(dense, rng)
    H = view(H)
    hsq = K.kernel_sq_norms(H, p)
    h = K.KernelCache(H, rows, p, hsq, 100.0, n_threads=n_threads)
    assert h.panels
    for j in (0, int(np.flatnonzero(rows == 17)[0]), 1202):
        K.kernel_column(H, rows, rows[j], p, hsq, exact)
        assert same_bits(h.column(j, 333), exact[:333].astype(np.float32))
        assert same_bits(h.column(j), exact.astype(np.float32))
    assert_swapped_columns_exact(h, H, hsq, p, ((2, 900),), (2, 900))
    # three features, rows permuted by swaps: the positions' squared norms follow them
    N = view(sp.csr_matrix(np.round(dense[:, :3] * 40)))
    nsq = K.kernel_sq_norms(N, p)
    n = K.KernelCache(N, None, p, nsq, 100.0, n_threads=n_threads)
    assert n.panels
    assert_swapped_columns_exact(n, N, nsq, p, ((0, 1202), (7, 400), (3, 4)), (0, 3, 400, 1202))
    sparse = dense.copy()
    sparse[rng.random(sparse.shape) < 0.3] = 0.0
    S = view(sp.csr_matrix(sparse))
    assert not K.KernelCache(S, None, p, K.kernel_sq_norms(S, p)).panels
    bad = holey.astype(np.float64)
    bad[40, 2] = np.inf
    B = view(sp.csr_matrix(bad))
    assert not K.KernelCache(B, None, p, np.ones(1203)).panels


@pytest.mark.parametrize("narrow", [False, True], ids=["widest", "256-bit"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["f64", "f32"])
@pytest.mark.parametrize("n_threads", [1, 2])
def test_panel_blocks_are_libms_floats(n_threads, dtype, narrow):
    """get_block over the panels (--ws on a dense view: two panels by eight or four columns a tile,
    llsvm_tile_dots) gives kernel_column's floats bit for bit, with 512-bit vectors (where the CPU has them) and
    256-bit ones alike: blocks of 1, 7, 8, 9 and 64 columns (D padded to a multiple of 8), some of them cached
    already, 1203 positions (an odd number of panels, the last one short), after swaps, from float32 rows, over rows
    with holes (an empty row, explicit zeros of both signs) and over integer rows (the table of integer
    distances), on 1 and 2 threads."""
    K.tile_vectors(narrow)
    try:
        rng = np.random.default_rng(15)
        dense = rng.normal(size=(1203, 37)).astype(dtype)
        dense[dense == 0] = 0.5
        _, H = with_holes(dense, rng)
        p = {"kernel_type": 2, "gamma": 0.05}
        rows = rng.permutation(1203).astype(np.int64)
        integers = sp.csr_matrix(np.round(dense[:, :5] * 40))           # through the table of integer distances
        for M, integer in ((sp.csr_matrix(dense), False), (H, False), (integers, True)):
            X = view(M)
            sq = K.kernel_sq_norms(X, p)
            c = K.KernelCache(X, rows, p, sq, 100.0, n_threads=n_threads)
            assert c.panels and (c.table_size > 0) == integer
            exact = np.empty(1203)
            c.column(3, 1203)                     # cached before the blocks: copied, not computed
            c.column(500, 100)                    # a short one: computed again at full length
            for block in ((1202,), (0, 3, 4, 5, 6, 7, 500), tuple(range(8, 16)), tuple(range(100, 109)),
                          tuple(rng.choice(1203, 64, replace=False))):
                got = c.block(np.array(block, np.int64))
                for k, j in enumerate(block):
                    K.kernel_column(X, rows, rows[j], p, sq, exact)
                    assert same_bits(got[k], exact.astype(np.float32))
            for a, b in ((0, 700), (5, 1202)):
                c.swap_index(a, b)
            order = c.order
            block = (0, 5, 700, 1202, 9, 10, 11, 12, 13)
            got = K.KernelCache(X, order, p, sq, 100.0, n_threads=n_threads).block(np.array(block, np.int64))
            got_swapped = c.block(np.array(block, np.int64))
            for k, j in enumerate(block):
                K.kernel_column(X, order, order[j], p, sq, exact)
                assert same_bits(got[k], exact.astype(np.float32))
                assert same_bits(got_swapped[k], exact.astype(np.float32))
    finally:
        K.tile_vectors(False)


@pytest.mark.parametrize("n_columns", [2, 7, 60])
def test_doubled_cache_is_the_cache_of_the_rows_twice(n_columns):
    """DoubledCache (LIBSVM's SVR_Q: epsilon-SVR's and nu-SVR's 2m variables over m rows) gives, under any budget and
    any sequence of swaps, the columns bit for bit of a plain cache over the rows twice swapped alike, while each
    row's column is computed once (no column of the doubled positions), and reset_order undoes the swaps."""
    M, X, sq = cache_problem()
    p = {"kernel_type": 2, "gamma": 0.5}
    m = 60
    twice = np.concatenate([np.arange(m), np.arange(m)]).astype(np.int64)
    plain = K.KernelCache(X, twice, p, sq)
    doubled = K.DoubledCache(K.KernelCache(X, None, p, sq, mb_for_columns(m, n_columns)))
    assert doubled.l == 2 * m
    rng = np.random.default_rng(4)
    for _ in range(400):
        if rng.random() < 0.3:
            i, j = (int(v) for v in rng.integers(2 * m, size=2))
            plain.swap_index(i, j)
            doubled.swap_index(i, j)
        else:
            j, length = int(rng.integers(2 * m)), int(rng.integers(1, 2 * m + 1))
            np.testing.assert_array_equal(doubled.column(j, length), plain.column(j, length))
    np.testing.assert_array_equal(doubled.order, plain.order % m)
    st = doubled.stats
    assert st["columns"] <= n_columns and st["bytes_in_use"] <= st["capacity_bytes"] == n_columns * m * 4
    doubled.reset_order()
    np.testing.assert_array_equal(doubled.order, np.arange(2 * m) % m)
