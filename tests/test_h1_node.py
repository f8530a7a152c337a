"""cext/_h1.pyx, the H1-SVM tree node (linear kernel) and the decision list: against its NumPy twin
(tests/reference/h1_twin.py) bit for bit, against cvxopt's solutions of primal (6)-(7) and of the dual box QP, the
centroid difference of kappa = 1, the hard rows' side (R2), the zero solution (R5), sparse and float32 views, the
refusals, and the stall of the greedy tree on fourclass (docs/solvers.md, "H1-SVM: the paper's gaps and the resolutions implemented")."""
import math

import numpy as np
import pytest
import scipy.sparse as sp

from llsvm._ext import _h1 as H1
from llsvm.dataset import CSRDataset
from reference import h1_twin as T


def blobs(seed, m_h=40, m_s=30, n=5, shift=2.0):
    """Hard rows (label +1) around +shift, soft rows around -shift/2: the soft centroid is outside the hard hull."""
    rng = np.random.default_rng(seed)
    X = np.vstack([rng.normal(size=(m_h, n)) + shift, rng.normal(size=(m_s, n)) - shift / 2])
    y = np.concatenate([np.ones(m_h), -np.ones(m_s)])
    return X, y


def sparse_blobs(seed, m=120, n=30, density=0.15):
    """Sparse rows with empty ones; label +1 rows lean on the first half of the features."""
    rng = np.random.default_rng(seed)
    X = sp.random(m, n, density=density, random_state=seed, format="lil")
    y = np.where(rng.random(m) < 0.5, 1.0, -1.0)
    for i in range(m):
        if y[i] > 0 and rng.random() < 0.8:
            X[i, rng.integers(0, n // 2)] = 1.0 + rng.random()
    X = X.tocsr()
    for i in rng.choice(m, 10, replace=False):      # empty rows
        X.data[X.indptr[i]:X.indptr[i + 1]] = 0.0
    X.eliminate_zeros()
    assert np.any(np.diff(X.indptr) == 0)
    return X, y


def views(X, y, dtype=np.float64, bias=-1.0):
    """The C kernel's Rows and the twin's Data over the same values."""
    Xc = sp.csr_matrix(X).astype(dtype)
    return CSRDataset.from_csr(Xc, y, dtype=dtype).row_view(bias), T.Data(Xc, bias)


def same(rc, rt):
    for key in ("alpha", "w", "f_soft", "removed"):
        np.testing.assert_array_equal(rc[key], rt[key], err_msg=key)
    for key in ("b", "n_iter", "gap", "norm_w", "zero", "converged"):
        assert rc[key] == rt[key], key


CASES = {
    "dense-inf": (lambda: blobs(0), np.float64, -1.0, "inf"),
    "dense-kappa2": (lambda: blobs(1), np.float64, -1.0, 2.0),
    "dense-kappa1": (lambda: blobs(2), np.float64, -1.0, 1.0),
    "dense-overlap-inf": (lambda: blobs(3, shift=0.5), np.float64, -1.0, "inf"),
    "float32-inf": (lambda: blobs(4), np.float32, -1.0, "inf"),
    "float32-kappa3": (lambda: blobs(5, shift=1.0), np.float32, -1.0, 3.0),
    "bias-inf": (lambda: blobs(6), np.float64, 1.0, "inf"),
    "sparse-inf": (lambda: sparse_blobs(7), np.float64, -1.0, "inf"),
    "sparse-f32-kappa2": (lambda: sparse_blobs(8), np.float32, -1.0, 2.0),
}


@pytest.mark.parametrize("eps", [1e-3, 1e-8])
@pytest.mark.parametrize("y_h", [1.0, -1.0])
@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_node_matches_twin_bit_for_bit(case, y_h, eps):
    make, dtype, bias, h1_c = case
    X, y = make()
    rows, data = views(X, y, dtype, bias)
    hard, soft = np.flatnonzero(y == y_h), np.flatnonzero(y == -y_h)
    C = T.node_c(math.inf if h1_c == "inf" else h1_c, len(hard), len(soft))
    rc = H1.solve_node(rows, hard, soft, y_h, C, eps)
    rt = T.solve_node(data, hard, soft, y_h, C, eps)
    same(rc, rt)
    assert rc["converged"]
    assert rc["w"].shape == (data.n_w,)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_node_matches_cvxopt(seed):
    import cvxopt  # noqa: F401  (a test dependency: missing, the test fails)
    X, y = blobs(seed, shift=1.5)
    rows, _ = views(X, y)
    hard, soft = np.flatnonzero(y > 0), np.flatnonzero(y < 0)
    # C = inf: primal (6)-(7); the node's b (R2) is the primal-optimal b
    r = H1.solve_node(rows, hard, soft, 1.0, math.inf, 1e-10)
    w, b = T.qp_primal(X, hard, soft, 1.0)
    assert np.linalg.norm(r["w"] - w) <= 1e-6 * np.linalg.norm(w)
    assert abs(r["b"] - b) <= 1e-6 * max(1.0, abs(b))
    # kappa = 2: the dual box QP, hard label -1 (the same nearest-point problem, w = y_h v)
    r = H1.solve_node(rows, soft, hard, -1.0, 2.0 * len(hard) / len(soft), 1e-10)
    _, w = T.qp_dual(X, soft, hard, -1.0, 2.0 * len(hard) / len(soft))
    assert np.linalg.norm(r["w"] - w) <= 1e-6 * np.linalg.norm(w)


@pytest.mark.parametrize("y_h", [1.0, -1.0])
def test_kappa1_is_the_centroid_difference(y_h):
    X, y = blobs(11, m_h=37, m_s=23)
    rows, _ = views(X, y)
    hard, soft = np.flatnonzero(y == y_h), np.flatnonzero(y == -y_h)
    m_s = len(soft)
    r = H1.solve_node(rows, hard, soft, y_h, T.node_c(1.0, len(hard), m_s))
    assert r["n_iter"] == 0
    np.testing.assert_array_equal(r["alpha"], m_s / len(hard))
    # w = y_h m_s (xbar_h - xbar_s): the centroid difference, oriented so that the hard class is positive
    expect = y_h * m_s * (X[hard].mean(axis=0) - X[soft].mean(axis=0))
    assert np.abs(r["w"] - expect).max() <= 1e-12 * np.abs(expect).max()


@pytest.mark.parametrize("h1_c", ["inf", 2.0, 1.0])
@pytest.mark.parametrize("case", ["dense", "sparse"])
def test_hard_rows_on_their_side(case, h1_c):
    X, y = blobs(21, shift=0.8) if case == "dense" else sparse_blobs(22)
    rows, _ = views(X, y)
    Xd = sp.csr_matrix(X).toarray()
    for y_h in (1.0, -1.0):
        hard, soft = np.flatnonzero(y == y_h), np.flatnonzero(y == -y_h)
        C = T.node_c(math.inf if h1_c == "inf" else h1_c, len(hard), len(soft))
        r = H1.solve_node(rows, hard, soft, y_h, C)
        m = y_h * (Xd[hard] @ r["w"] + r["b"])
        assert m.min() >= 1 - 1e-9
        assert abs(m.min() - 1) <= 1e-9                    # R2: x_e is on the margin
        f = Xd[soft] @ r["w"] + r["b"]
        np.testing.assert_allclose(r["f_soft"], f, rtol=1e-12, atol=1e-9)
        np.testing.assert_array_equal(r["removed"], -y_h * r["f_soft"] > 0)


def test_zero_solution_detected():
    """Soft rows placed symmetrically around the hard centroid: sbar = hbar is in the hull, w = 0 exactly."""
    rng = np.random.default_rng(5)
    a = rng.integers(-4, 5, size=(6, 3)).astype(float)
    c = np.array([1.0, -2.0, 3.0])
    Xh = np.vstack([c + a, c - a])                        # integer centroid c: every sum is exact
    offs = rng.integers(-3, 4, size=(6, 3)).astype(float)
    Xs = np.vstack([c + offs, c - offs])                  # 12 soft rows, centroid c
    X = np.vstack([Xh, Xs])
    y = np.concatenate([np.ones(12), -np.ones(12)])
    rows, data = views(X, y)
    hard, soft = np.arange(12), np.arange(12, 24)
    for C in (math.inf, 2.0):
        rc = H1.solve_node(rows, hard, soft, 1.0, C)
        same(rc, T.solve_node(data, hard, soft, 1.0, C))
        assert rc["zero"] and rc["norm_w"] == 0.0 and rc["n_iter"] == 0
        assert not rc["removed"].any()
    # one soft row moved outside the hull: no longer zero
    Xs2 = Xs.copy()
    Xs2[0] += 100.0
    rows2, _ = views(np.vstack([Xh, Xs2]), y)
    assert not H1.solve_node(rows2, hard, soft, 1.0)["zero"]


def c_solver(rows):
    return lambda hard, soft, y_h, C, eps: H1.solve_node(rows, hard, soft, y_h, C, eps)


def same_trees(a, b):
    (na, la, Sa), (nb, lb, Sb) = a, b
    assert len(na) == len(nb) and la == lb
    np.testing.assert_array_equal(Sa, Sb)
    for x, z in zip(na, nb):
        for key in ("w", "removed"):
            np.testing.assert_array_equal(x[key], z[key])
        for key in ("hard", "soft", "b", "n_iter", "norm_w", "zero", "gap"):
            assert x[key] == z[key], key


@pytest.mark.parametrize("hard_class", ["greedy", "alternate", "larger"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_tree_and_node_eval_match_twin(hard_class, dtype):
    rng = np.random.default_rng(31)
    # blobs along a line, -1 | +1 | -1 | +1, so that the list peels them off in several nodes
    X = np.vstack([rng.normal(size=(n, 2)) * 0.5 + [x, 0] for n, x in ((40, -4), (60, 0), (12, 4), (20, 8))])
    y = np.concatenate([-np.ones(40), np.ones(60), -np.ones(12), np.ones(20)])
    Xtr, Xte = sp.csr_matrix(X[::2]).astype(dtype), sp.csr_matrix(X[1::2] + 0.1).astype(dtype)
    ytr = y[::2]
    rows, data = views(Xtr, ytr, dtype)
    for h1_c in (math.inf, 2.0):
        twin = T.build_tree(data, ytr, hard_class, h1_c)
        same_trees(T.build_tree(data, ytr, hard_class, h1_c, solver=c_solver(rows)), twin)
        nodes, leaf, _ = twin
        assert len(nodes) >= (1 if hard_class == "larger" else 3)
        for Xe in (Xtr, Xte):
            te_rows, te_data = views(Xe, np.zeros(Xe.shape[0]), dtype)
            W = np.array([nd["w"] for nd in nodes])
            node, depth = H1.node_eval(te_rows, W, [nd["b"] for nd in nodes], [nd["soft"] for nd in nodes])
            tnode, tdepth = T.node_eval(nodes, te_data)
            np.testing.assert_array_equal(node, tnode)
            np.testing.assert_array_equal(depth, tdepth)
            labels, _ = T.predict_tree(nodes, leaf, te_data)
            soft = np.array([nd["soft"] for nd in nodes])
            np.testing.assert_array_equal(np.where(node >= 0, soft[node], leaf), labels)
        # every removed training row is claimed by its node (R3 = the decision list's rule)
        node, _ = T.node_eval(nodes, data)
        for k, nd in enumerate(nodes):
            assert np.all(node[nd["removed"]] == k)
            assert np.all(ytr[nd["removed"]] == nd["soft"])


def test_node_eval_ties_and_subset():
    X = sp.csr_matrix(np.array([[1.0, 0.0], [0.0, 0.0], [-1.0, 0.0], [2.0, 1.0]]))
    rows, _ = views(X, np.zeros(4))
    W = np.array([[1.0, 0.0], [0.0, 1.0]])
    # node 0: soft +1, f = x0 - 1 (row 3 only: f = 0 at row 0 is a tie, not claimed); node 1: soft -1, f = x1 - 0.5
    node, depth = H1.node_eval(rows, W, [-1.0, -0.5], [1.0, -1.0])
    np.testing.assert_array_equal(node, [1, 1, 1, 0])
    np.testing.assert_array_equal(depth, [2, 2, 2, 1])
    node, depth = H1.node_eval(rows, W, [-1.0, -1.0], [1.0, 1.0], rows=[3, 0])
    np.testing.assert_array_equal(node, [0, -1])
    np.testing.assert_array_equal(depth, [1, 2])
    node, depth = H1.node_eval(rows, np.zeros((0, 2)), [], [])
    np.testing.assert_array_equal(node, -1)
    np.testing.assert_array_equal(depth, 0)


def test_refusals():
    X, y = blobs(0, m_h=4, m_s=6)
    rows, data = views(X, y)
    hard, soft = np.arange(4), np.arange(4, 10)
    with pytest.raises(ValueError, match="non-empty hard and soft"):
        H1.solve_node(rows, [], soft, 1.0)
    with pytest.raises(ValueError, match="non-empty hard and soft"):
        H1.solve_node(rows, hard, [], 1.0)
    with pytest.raises(ValueError, match=r"infeasible box: C \* m_h = 4.0 < m_s = 6"):
        H1.solve_node(rows, hard, soft, 1.0, 1.0)
    with pytest.raises(ValueError, match="non-empty"):
        T.solve_node(data, hard, [], 1.0)
    with pytest.raises(ValueError, match="infeasible box"):
        T.solve_node(data, hard, soft, 1.0, 1.0)
    with pytest.raises(ValueError, match="kappa >= 1"):
        T.node_c(0.5, 4, 6)
    with pytest.raises(ValueError, match="y_h must be"):
        H1.solve_node(rows, hard, soft, 0.0)
    with pytest.raises(ValueError, match="outside the view"):
        H1.solve_node(rows, hard, [4, 10], 1.0)
    with pytest.raises(ValueError, match="eps must be"):
        H1.solve_node(rows, hard, soft, 1.0, math.inf, 0.0)
    with pytest.raises(ValueError, match="columns"):
        H1.node_eval(rows, np.zeros((1, 4)), [0.0], [1.0])
    with pytest.raises(ValueError, match="one entry per node"):
        H1.node_eval(rows, np.zeros((1, 5)), [0.0, 1.0], [1.0])
    with pytest.raises(ValueError, match="soft labels"):
        H1.node_eval(rows, np.zeros((1, 5)), [0.0], [2.0])


def test_max_iter_not_converged():
    X, y = blobs(3, shift=0.5)
    rows, data = views(X, y)
    hard, soft = np.flatnonzero(y > 0), np.flatnonzero(y < 0)
    rc = H1.solve_node(rows, hard, soft, 1.0, math.inf, 1e-8, max_iter=3)
    same(rc, T.solve_node(data, hard, soft, 1.0, math.inf, 1e-8, max_iter=3))
    assert rc["n_iter"] == 3 and not rc["converged"]


def fourclass(shared_plain):
    from sklearn.datasets import load_svmlight_file
    X, y = load_svmlight_file(str(shared_plain("fourclass")))
    X = X.toarray()
    lo, hi = X.min(axis=0), X.max(axis=0)
    return 2 * (X - lo) / (hi - lo) - 1, y                 # Min-Max to [-1, 1] as spec 2.4


def test_fourclass_greedy_stalls_at_zero_nodes(shared_plain):
    """Spec 0.2 / 2.4: with C = inf both candidates remove no soft row (the soft centroids lie inside the other
    class's hull), so the guard of R5 stops before the first node; the leaf is the majority class."""
    X, y = fourclass(shared_plain)
    rows, data = views(X, y)
    twin = T.build_tree(data, y)
    assert T.build_tree.candidates == [[(1.0, 0, False, True), (-1.0, 0, False, True)]]
    same_trees(T.build_tree(data, y, solver=c_solver(rows)), twin)
    nodes, leaf, S = twin
    assert nodes == [] and leaf == -1.0 and len(S) == len(y)
    # kappa = 1 (centroid differences) does build nodes, identically in C and in the twin
    twin = T.build_tree(data, y, h1_c=1.0)
    same_trees(T.build_tree(data, y, h1_c=1.0, solver=c_solver(rows)), twin)
    assert len(twin[0]) >= 2
