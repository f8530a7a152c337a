"""LIBSVM's precomputed kernel (kernel_type 4, issue 47) in the kernel core: cext/kernel.pxd's look-up, the columns,
diagonal, blocks and cache of cext/_kernel.pyx, the solvers of cext/_smo.pyx and the decision values of
cext/_kpredict.pyx on a precomputed view (rows read zero-based: index 0 holds the 1-based serial of the row's
instance, index s the kernel value with instance s).

The reference is the original kernel on the rows themselves: a view holding llsvm's own Gram matrix of the rows
(kernel_block, the solvers' formula; for prediction the values svm_predict_values computes, kernel_function) gives
the very same kernel values, so the same floats in the cache, the same QD, and every solve the same path: alpha, rho
and the iteration count bit for bit, for C-SVC and nu-SVC (one-vs-one, -b 1's folds included), the one-class SVM,
epsilon-SVR and nu-SVR, over all the rows and over a permuted subset of them (serials point at columns). And LIBSVM
itself (libsvm-official's svm_train with -t 4 on the same Gram matrix) reaches the same alpha and rho to rounding.
"""
import numpy as np
import pytest
import scipy.sparse as sp
from libsvm import svmutil

from llsvm._ext import _kernel as K
from llsvm._ext import _kpredict
from llsvm._ext import _online
from llsvm._ext import _smo as SMO
from llsvm._ext._rowops import row_sq_norms
from llsvm._ext._view import Rows
from llsvm.solvers.ovo import Pairs

PRE = {"kernel_type": 4}
KERNELS = {
    "linear": {"kernel_type": 0},
    "poly": {"kernel_type": 1, "degree": 3, "gamma": 0.3, "coef0": 1.0},
    "rbf": {"kernel_type": 2, "gamma": 0.5},
    "sigmoid": {"kernel_type": 3, "gamma": 0.05, "coef0": -0.5},
}


# -- problems and views ------------------------------------------------------------------------------------------
def dense_x(seed, l, n):
    return np.random.default_rng(seed).standard_normal((l, n))


def sparse_x(seed, l, n, density=0.3):
    """A sparse set with an empty row (its kernel values with every row are the kernel's of 0)."""
    rng = np.random.default_rng(seed)
    M = sp.random(l, n, density=density, format="csr", random_state=rng, data_rvs=lambda k: rng.normal(size=k))
    M = M.tolil()
    M[3, :] = 0
    M = M.tocsr()
    M.eliminate_zeros()
    M.sort_indices()
    return M


def view(M, dtype=np.float64):
    M = sp.csr_matrix(M)
    M.sort_indices()
    return Rows(M.indptr.astype(np.int64), M.indices.astype(np.int32), np.ascontiguousarray(M.data, dtype=dtype),
                M.shape[1])


def gram(A, B, params):
    """k(A_a, B_b) as the solvers compute it (kernel_block: RBF from the squared norms)."""
    VA, VB = view(A), view(B)
    out = np.empty((VA.n_rows, VB.n_rows))
    K.kernel_block(VA, VB, params, row_sq_norms(VA), row_sq_norms(VB), out)
    return out


def predict_gram(T, S, params):
    """k(T_a, S_b) as svm_predict_values computes it (kernel.pxd's kernel_function, RBF term by term): the decision
    value of a one-SV model of coefficient 1 and rho 0, (0 + 1 k) - 0 = k exactly."""
    S = sp.csr_matrix(S)
    VT = view(T)
    out = np.empty((VT.n_rows, S.shape[0]))
    dec = np.empty((VT.n_rows, 1))
    for b in range(S.shape[0]):
        _kpredict.decision_values(VT, view(S[b]), params["kernel_type"], params.get("degree", 3),
                                  params.get("gamma", 0.0), params.get("coef0", 0.0), np.ones((1, 1)), np.zeros(1),
                                  None, dec)
        out[:, b] = dec[:, 0]
    return out


def precomputed(G, serials, drop_zeros=False, dtype=np.float64):
    """The zero-based precomputed view of kernel rows G (one row per instance, one column per training instance):
    index 0 the serial, index s >= 1 column s - 1 of G. drop_zeros: without the zero kernel values (a reader that
    drops zeros), so that the rows are not full."""
    n, L = G.shape
    M = sp.csr_matrix((np.hstack([np.asarray(serials, np.float64)[:, None], G]).ravel(),
                       np.tile(np.arange(L + 1, dtype=np.int32), n), np.arange(0, (L + 1) * n + 1, L + 1)),
                      shape=(n, L + 1))
    if drop_zeros:
        M.eliminate_zeros()             # the serials are never 0
    return view(M, dtype)


def sv_view(serials):
    """Support vectors as a precomputed model holds them: 0:serial alone."""
    n = len(serials)
    return view(sp.csr_matrix((np.asarray(serials, np.float64), np.zeros(n, np.int32), np.arange(n + 1)),
                              shape=(n, 1)))


DATA = {"dense": lambda: dense_x(1, 60, 5), "sparse": lambda: sparse_x(2, 60, 30)}


# -- the kernel values -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", KERNELS, ids=KERNELS.keys())
@pytest.mark.parametrize("data", DATA, ids=DATA.keys())
@pytest.mark.parametrize("subset", [False, True], ids=["all", "permuted-subset"])
def test_columns_diag_block_and_cache_are_the_gram(name, data, subset):
    """Every kernel function of _kernel.pyx on the precomputed view of the Gram matrix G gives G's entries (the
    cache their floats, whatever its budget, its threads and its swaps), and the same numbers as the original
    kernel on the rows; over a permuted subset of the instances the serials pick G's columns."""
    X = DATA[data]()
    p = KERNELS[name]
    G = gram(X, X, p)
    l = G.shape[0]
    sub = np.random.default_rng(3).permutation(l)[:41] if subset else np.arange(l)
    P = precomputed(G[sub], sub + 1)
    Gs = G[np.ix_(sub, sub)]
    m = sub.size
    sq = K.kernel_sq_norms(P, PRE)
    np.testing.assert_array_equal(sq, np.diag(G)[sub])
    rows = np.array([5, 0, m - 1, 3, 3, 17], np.int64)
    out = np.empty(rows.size)
    for j in (0, 3, 17, m - 1):
        K.kernel_column(P, rows, j, PRE, sq, out)
        np.testing.assert_array_equal(out, Gs[rows, j])
    QD = np.empty(rows.size)
    K.kernel_diag(rows, PRE, sq, QD)
    np.testing.assert_array_equal(QD, np.diag(Gs)[rows])
    B = np.empty((m, m))
    K.kernel_block(P, P, PRE, sq, sq, B)
    np.testing.assert_array_equal(B, Gs)
    # the cache: the floats of the original kernel's cache over the same rows, under a budget of 3 columns
    XV = view(sp.csr_matrix(X)[sub])
    orig = K.KernelCache(XV, None, p, row_sq_norms(XV), 3 * m * 4 / 1048576.0 + 6 * m * 8 / 1048576.0)
    for threads in (1, 2):
        cache = K.KernelCache(P, None, PRE, sq, 3 * m * 4 / 1048576.0 + 6 * m * 8 / 1048576.0, threads)
        for j in (0, 7, m - 1, 7, 20, 0):
            col = cache.column(j, m - 2)
            np.testing.assert_array_equal(col, Gs[:m - 2, j].astype(np.float32))
            np.testing.assert_array_equal(col, orig.column(j, m - 2))
        assert cache.stats["evictions"] > 0
        cache.swap_index(1, m - 1)
        order = cache.order
        np.testing.assert_array_equal(cache.column(4), Gs[order, order[4]].astype(np.float32))
        cache.reset_order()
        np.testing.assert_array_equal(cache.column(1), Gs[:, 1].astype(np.float32))
    # a long column shared among threads (PARALLEL_MIN_WORK) is the same
    big = precomputed(np.tile(G[sub], (12, 1)), np.tile(sub + 1, 12))
    cache = K.KernelCache(big, None, PRE, K.kernel_sq_norms(big, PRE), 100.0, 2)
    np.testing.assert_array_equal(cache.column(5), np.tile(Gs[:, 5], 12).astype(np.float32))


def test_rows_without_zeros_float32_and_the_serials_truncation():
    """Rows that do not hold every index (a reader that drops zero values: the linear kernel of rows with no
    feature in common) are looked up by binary search, an absent index giving 0; float32 values give their floats;
    a serial is (int) of the value, truncated as LIBSVM's (int)x[j][0].value."""
    X = sparse_x(4, 50, 200, density=0.02)
    G = gram(X, X, KERNELS["linear"])
    assert (G == 0).mean() > 0.5
    serials = np.arange(1, 51) + 0.75                           # 1.75 -> 1, ...
    for dtype in (np.float64, np.float32):
        P = precomputed(G.astype(dtype), serials, drop_zeros=True, dtype=dtype)
        assert P.nnz == 50 + np.count_nonzero(G)
        Gd = G.astype(dtype).astype(np.float64)
        sq = K.kernel_sq_norms(P, PRE)
        np.testing.assert_array_equal(sq, np.diag(Gd))
        B = np.empty((50, 50))
        K.kernel_block(P, P, PRE, sq, sq, B)
        np.testing.assert_array_equal(B, Gd)
        out = np.empty(50)
        K.kernel_column(P, np.arange(50, dtype=np.int64), 9, PRE, sq, out)
        np.testing.assert_array_equal(out, Gd[:, 9])
        cache = K.KernelCache(P, None, PRE, sq)
        np.testing.assert_array_equal(cache.column(9), G[:, 9].astype(np.float32))
    # a serial that names no index a row holds (beyond the row, or negative): 0, as an absent value
    P = precomputed(G[:2], [1.0, 3.0])
    Z = precomputed(np.zeros((2, 1)), [-5.0, 60.0])
    B = np.empty((2, 2))
    K.kernel_block(P, Z, PRE, K.kernel_sq_norms(P, PRE), K.kernel_sq_norms(Z, PRE), B)
    np.testing.assert_array_equal(B, 0.0)


def test_parameters_and_refusals():
    """kernel_type 4 takes no gamma; a view with a bias coordinate is refused; type 5 is unknown; the online
    kernel SVMs (cext/_online.pyx, which compute x.z) refuse the precomputed kernel with a ValueError."""
    X = dense_x(5, 8, 3)
    P = precomputed(gram(X, X, KERNELS["rbf"]), np.arange(1, 9))
    sq = K.kernel_sq_norms(P, {"kernel_type": 4, "gamma": None, "degree": 3, "coef0": 0.0})
    with pytest.raises(ValueError, match="bias"):
        K.kernel_sq_norms(P.with_bias(1.0), PRE)
    with pytest.raises(ValueError, match="unknown kernel type"):
        K.kernel_sq_norms(P, {"kernel_type": 5})
    order, y = np.arange(8, dtype=np.int64), np.where(np.arange(8) % 2, 1, -1).astype(np.int8)
    with pytest.raises(ValueError, match="precomputed"):
        _online.ColumnStore(P, PRE, sq, 1.0)
    with pytest.raises(ValueError, match="precomputed"):
        _online.column_seconds(P, PRE, sq, order)
    with pytest.raises(ValueError, match="precomputed"):
        _online.olsvm_3a(P, order, y, PRE, sq, 1.0)


# -- the solvers -------------------------------------------------------------------------------------------------
def labels(seed, X, k):
    rng = np.random.default_rng(seed)
    Xd = X.toarray() if sp.issparse(X) else X
    score = Xd[:, 0] - 0.5 * Xd[:, 1] + 0.7 * rng.standard_normal(Xd.shape[0])
    return np.digitize(score, np.quantile(score, np.linspace(0, 1, k + 1)[1:-1])).astype(np.float64) * 3 - 2


def run_pairs(V, params, y, nu=None, probability=False, shrinking=True):
    """The one-vs-one pairs of C-SVC (nu None) or nu-SVC on view V, as llsvm/solvers/smo.py's PairsRun runs them
    (cext/_smo.pyx's OneVsOne over a scratch cache): every pair's coefficients and statistics."""
    pairs = Pairs(y)
    n = len(pairs.first)
    sq = K.kernel_sq_norms(V, params)
    scratch = K.KernelCache(V, np.empty(0, np.int64), params, sq, 0.02)
    engine = SMO.OneVsOne(scratch, pairs.perm, pairs.start, pairs.count, pairs.first, pairs.second, pairs.offsets,
                          np.full(pairs.nr_class, 2.0), 1e-3, -1, shrinking, nu, probability, b"", True)
    rng = np.random.default_rng(11)
    perms = np.concatenate([rng.permutation(pairs.size(p)) for p in range(n)]).astype(np.int64)
    coef = np.empty(int(pairs.offsets[-1]))
    stats = np.empty((n, len(SMO.PAIR_STATS)))
    q, status = engine.run(0, n, 1e9, coef, stats, perms if probability else None)
    assert (q, status) == (n, SMO.PAIRS_OK)
    return coef, dict(zip(SMO.PAIR_STATS, stats.T))


def run_single(V, params, kind, z, C=2.0, nu=0.3, svr_p=0.2, shrinking=True):
    """The one-class SVM, epsilon-SVR or nu-SVR on view V as llsvm/solvers/single.py sets them up (epsilon- and
    nu-SVR over 2l variables, the cache's columns the l rows', KK.DoubledCache): (alpha, the solve's dict)."""
    l = V.n_rows
    every = np.arange(l, dtype=np.int64)
    sq = K.kernel_sq_norms(V, params)
    if kind == "one_class":
        rows, y, p = every, np.ones(l, np.int8), np.zeros(l)
        alpha = np.zeros(l)
        n = int(nu * l)
        alpha[:n] = 1.0
        if n < l:
            alpha[n] = nu * l - n
        C = 1.0
        cache = K.KernelCache(V, every, params, sq, 0.02)
    else:
        rows = np.concatenate([every, every])
        y = np.concatenate([np.ones(l, np.int8), -np.ones(l, np.int8)])
        alpha = np.zeros(2 * l)
        if kind == "epsilon_svr":
            p = np.concatenate([svr_p - z, svr_p + z])
        else:
            p = np.concatenate([-z, z])
            SMO.nu_start(np.ones(l, np.int8), C * nu * l / 2, C, alpha[:l])
            alpha[l:] = alpha[:l]
        cache = K.DoubledCache(K.KernelCache(V, every, params, sq, 0.02))
    QD = np.empty(rows.size)
    K.kernel_diag(rows, params, sq, QD)
    out = SMO.solve(cache, y, p, alpha, C, C, QD, eps=1e-3, shrinking=shrinking, nu=kind == "nu_svr")
    return alpha, out


SOLVER_KERNELS = ["linear", "poly", "rbf"]


@pytest.mark.parametrize("name", SOLVER_KERNELS)
@pytest.mark.parametrize("data", DATA, ids=DATA.keys())
@pytest.mark.parametrize("nu", [None, 0.2], ids=["c_svc", "nu_svc"])
def test_one_vs_one_is_the_original_kernels_bit_for_bit(name, data, nu):
    """Three classes, shrinking, over all the rows and over a permuted subset: the pairs' coefficients, rho,
    iterations and objective on the precomputed view are the original kernel's, bit for bit; -b 1's folds too
    (their decision values are kernel_function's: for RBF the prediction side's term-by-term distance, whose last
    bits differ from the Gram matrix's norm form, so there probA and probB agree to rounding)."""
    X = sp.csr_matrix(DATA[data]())
    p = KERNELS[name]
    G = gram(X, X, p)
    l = X.shape[0]
    for sub in (np.arange(l), np.random.default_rng(6).permutation(l)[:45]):
        y = labels(7, X[sub], 3)
        ref_coef, ref = run_pairs(view(X[sub]), p, y, nu)
        coef, st = run_pairs(precomputed(G[sub], sub + 1), PRE, y, nu)
        np.testing.assert_array_equal(coef, ref_coef)
        for key in ("n_iter", "rho", "obj", "nSV", "nBSV", "r"):
            np.testing.assert_array_equal(st[key], ref[key])
    y = labels(8, X, 2)
    ref_coef, ref = run_pairs(view(X), p, y, nu, probability=True)
    coef, st = run_pairs(precomputed(G, np.arange(1, l + 1)), PRE, y, nu, probability=True)
    np.testing.assert_array_equal(coef, ref_coef)
    np.testing.assert_array_equal(st["rho"], ref["rho"])
    if name == "rbf":
        np.testing.assert_allclose(st["probA"], ref["probA"], rtol=1e-9)
        np.testing.assert_allclose(st["probB"], ref["probB"], rtol=1e-9, atol=1e-12)
    else:
        np.testing.assert_array_equal(st["probA"], ref["probA"])
        np.testing.assert_array_equal(st["probB"], ref["probB"])


@pytest.mark.parametrize("name", SOLVER_KERNELS)
@pytest.mark.parametrize("data", DATA, ids=DATA.keys())
@pytest.mark.parametrize("kind", ["one_class", "epsilon_svr", "nu_svr"])
@pytest.mark.parametrize("shrinking", [True, False], ids=["h1", "h0"])
def test_single_problems_are_the_original_kernels_bit_for_bit(name, data, kind, shrinking):
    """The one-class SVM, epsilon-SVR and nu-SVR (the doubled cache): alpha, rho, r and the iteration count on
    the precomputed view of a permuted subset are the original kernel's on its rows, bit for bit."""
    X = sp.csr_matrix(DATA[data]())
    p = KERNELS[name]
    G = gram(X, X, p)
    sub = np.random.default_rng(9).permutation(X.shape[0])[:50]
    z = labels(10, X[sub], 5) / 3
    a_ref, ref = run_single(view(X[sub]), p, kind, z, shrinking=shrinking)
    a, out = run_single(precomputed(G[sub], sub + 1), PRE, kind, z, shrinking=shrinking)
    np.testing.assert_array_equal(a, a_ref)
    for key in ("n_iter", "rho", "r", "obj", "n_shrink"):
        assert out[key] == ref[key], key
    assert out["converged"]


@pytest.mark.parametrize("name", KERNELS, ids=KERNELS.keys())
@pytest.mark.parametrize("data", DATA, ids=DATA.keys())
def test_decision_values_are_the_original_kernels(name, data):
    """_kpredict.decision_values on precomputed test rows (0:? then the kernel values with every training instance,
    as svm_predict_values computes them) against support vectors holding 0:serial alone: the original kernel's
    decision values bit for bit, three classes and the one-class/SVR form."""
    X = sp.csr_matrix(DATA[data]())
    p = KERNELS[name]
    train, test = X[:40], X[40:]
    sv = np.array([2, 5, 6, 11, 17, 20, 21, 30, 33, 39])         # the SVs, grouped by class: 3, 4, 3
    nSV = [3, 4, 3]
    rng = np.random.default_rng(12)
    coef = rng.standard_normal((2, sv.size))
    rho = rng.standard_normal(3)
    Kt = predict_gram(test, train, p)
    T = precomputed(Kt, np.full(test.shape[0], 7.0))                # the test rows' 0:? (any value)
    for c, r, counts in ((coef, rho, nSV), (coef[:1], rho[:1], None)):
        ref = np.empty((test.shape[0], r.size))
        _kpredict.decision_values(view(test), view(train[sv]), p["kernel_type"], p.get("degree", 3),
                                  p.get("gamma", 0.0), p.get("coef0", 0.0), c, r, counts, ref)
        dec = np.empty_like(ref)
        _kpredict.decision_values(T, sv_view(sv + 1), 4, 3, 0.0, 0.0, c, r, counts, dec)
        np.testing.assert_array_equal(dec, ref)


# -- LIBSVM itself -----------------------------------------------------------------------------------------------
def libsvm_precomputed(G, y, args):
    """libsvm-official's svm_train with -t 4 on the Gram matrix G (its rows 0:serial then the kernel values):
    (coefficients over the rows, rho)."""
    l = G.shape[0]
    Pm = np.hstack([np.arange(1, l + 1, dtype=np.float64)[:, None], G])
    prob = svmutil.svm_problem(list(map(float, y)), Pm, isKernel=True)
    model = svmutil.svm_train(prob, svmutil.svm_parameter(f"-t 4 -q {args}"))
    full = np.zeros(l)
    full[np.asarray(model.get_sv_indices()) - 1] = [c[0] for c in model.get_sv_coef()]
    return full, model.rho[0]


@pytest.mark.parametrize("kind,args", [("c_svc", "-s 0 -c 2 -h 0"), ("c_svc", "-s 0 -c 2 -h 1"),
                                       ("nu_svc", "-s 1 -n 0.2 -h 1"), ("one_class", "-s 2 -n 0.3 -h 1"),
                                       ("epsilon_svr", "-s 3 -c 2 -p 0.2 -h 1"), ("nu_svr", "-s 4 -c 2 -n 0.3 -h 0")])
@pytest.mark.parametrize("name", ["rbf", "poly"])
def test_libsvm_official_precomputed(kind, args, name):
    """The same Gram matrix through libsvm-official (-t 4) and through llsvm's solvers on the precomputed view:
    the same coefficients and rho to rounding (1e-12)."""
    X = dense_x(13, 40, 4)
    G = gram(X, X, KERNELS[name])
    P = precomputed(G, np.arange(1, 41))
    shrinking = "-h 1" in args
    if kind in ("c_svc", "nu_svc"):
        y = labels(14, X, 2)
        theirs, rho = libsvm_precomputed(G, y, args)
        coef, st = run_pairs(P, PRE, y, 0.2 if kind == "nu_svc" else None, shrinking=shrinking)
        ours = np.zeros(40)
        ours[Pairs(y).problem(0)[2]] = coef
        ours_rho = st["rho"][0]
    else:
        z = labels(15, X, 5) / 3
        theirs, rho = libsvm_precomputed(G, z, args)
        a, out = run_single(P, PRE, kind, z, shrinking=shrinking)
        ours = a if kind == "one_class" else a[:40] - a[40:]
        ours_rho = out["rho"]
    assert np.count_nonzero(theirs) > 3
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-12)
    assert ours_rho == pytest.approx(rho, rel=1e-12, abs=1e-12)
