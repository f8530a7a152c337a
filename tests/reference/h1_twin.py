"""NumPy twin of the H1-SVM tree node and tree (Fehr, Zapien Arreola, Burkhardt, "Fast Support Vector Machine
Classification of Very Large Datasets", GfKl 2007; the resolutions of docs/solvers.md, "H1-SVM: the paper's gaps
and the resolutions implemented"), linear kernel.

The node as a nearest-point problem. Hard set H (label y_h, m_h rows), soft set S (label y_s = -y_h,
m_s rows). Substituting alpha_j = 1 on S (eq. 10) into the dual (8), and the equality (11),
y_h sum_H alpha_i + y_s m_s = 0, i.e. sum_H alpha_i = m_s, the dual (as a minimisation) is

    f(a) = 1/2 sum_{i,j in H} a_i a_j y_i y_j K_ij + sum_{i in H} a_i sum_{j in S} y_i y_j K_ij - sum_H a_i + const
         = 1/2 a'Qa + p'a + const,  Q_ij = y_i y_j K_ij = K_ij (one label on H),
           p_i = -1 + y_i sum_{j in S} y_j K_ij = -1 - sum_{j in S} K_ij     (y_i y_j = -1 across H and S)

subject to sum_H a_i = m_s, 0 <= a_i <= C. Since sum_H a_i is fixed, the -1 is a constant and
f(a) = 1/2 ||sum_H a_i x_i - sum_S x_j||^2 + const. With v = sum_H a_i x_i - sum_S x_j the gradient is

    G_i = (Qa + p)_i = x_i . v - 1,

no label in it: a node with hard label -1 solves the same problem as one with hard label +1. SMO on pairs of H (one
label: LIBSVM's y_i = y_j case) is MDM. Working pair (WSS 2 with every y_t = +1): i = argmax {-G_t : a_t < C},
j = argmin {-(b_t)^2 / q_t : a_t > 0, b_t = -G_i + G_t > 0}, q_t = K_ii + K_tt - 2 K_it (TAU if <= 0); ties to the
later index. Stop (R9): gap = max_{a_i<C} (-G_i) - min_{a_j>0} (-G_j) <= eps, or no j, or max_iter pairs
(max(1e7, 100 m_h) by default). Start a = m_s/m_h everywhere (feasible when C m_h >= m_s).
w = sum_H a_i y_h x_i + sum_S y_s x_j = y_h v (eq. 12). b (R2) = y_h - w.x_e, x_e the hard row of smallest
y_h w.x (the first on ties), so min_H y_h f = 1. Zero solution (R5): ||w|| <= 1e-12 ||sum_S x_j||. Removed (R3):
soft rows with y_s f(x) > 0 strictly.

Order of operations (so that cext/_h1.pyx agrees bit for bit): every dot product and squared norm is a sequential
sum over the row's stored entries in index order, then the bias term (np.cumsum is sequential); v is built as
(sum_H a0 x_i, row by row) - (sum_S x_j, row by row), and each pair step adds d_i x_i then d_j x_j to v; G is
recomputed from v after every step (G_t = x_t . v - 1, no drift); K_it is x_t . x_i.

Also: the tree (build_tree, R4/R5, the decision list) and predict_tree, and the independent references
qp_primal (cvxopt on primal (6)-(7), C = inf) and qp_dual (cvxopt on the box-constrained dual, any C).
"""
import math

import numpy as np
import scipy.sparse as sp

TAU = 1e-12
ZERO_REL = 1e-12


class Data:
    """Rows of a CSR matrix as the C kernel reads them: sorted indices, float32 or float64 values, optional
    implicit bias coordinate (index n_features, value bias, added last to every dot product)."""

    def __init__(self, X, bias=-1.0):
        X = sp.csr_matrix(X)
        if not X.has_sorted_indices:
            X = X.sorted_indices()
        X.sum_duplicates()
        if X.data.dtype not in (np.float32, np.float64):
            X = X.astype(np.float64)
        self.X = X
        self.n_features = X.shape[1]
        self.bias = float(bias)
        self.n_w = self.n_features + (1 if self.bias >= 0 else 0)

    def row(self, i):
        s, e = self.X.indptr[i], self.X.indptr[i + 1]
        return self.X.indices[s:e], self.X.data[s:e].astype(np.float64)

    def padded(self, rows):
        """(index matrix, value matrix) of the rows, padded with index 0 / value 0 to the longest row."""
        rows = np.asarray(rows, dtype=np.int64)
        ip = self.X.indptr
        lens = (ip[rows + 1] - ip[rows]).astype(np.int64)
        L = int(lens.max()) if len(rows) else 0
        PI = np.zeros((len(rows), L), dtype=np.int64)
        PV = np.zeros((len(rows), L), dtype=np.float64)
        for k in range(L):
            has = lens > k
            PI[has, k] = self.X.indices[ip[rows[has]] + k]
            PV[has, k] = self.X.data[ip[rows[has]] + k]
        return PI, PV

    def dots(self, rows, v, padded=None):
        """x_t . v for t in rows: sequential sum over the row's entries, then the bias term."""
        PI, PV = self.padded(rows) if padded is None else padded
        if PV.shape[1]:
            s = np.cumsum(v[PI] * PV, axis=1)[:, -1]
        else:
            s = np.zeros(PV.shape[0])
        if self.bias >= 0:
            s = s + v[self.n_features] * self.bias
        return s

    def sq_norms(self, rows, padded=None):
        PI, PV = self.padded(rows) if padded is None else padded
        s = np.cumsum(PV * PV, axis=1)[:, -1] if PV.shape[1] else np.zeros(PV.shape[0])
        if self.bias >= 0:
            s = s + self.bias * self.bias
        return s

    def axpy(self, i, a, v):
        """v += a x_i (in place)."""
        idx, val = self.row(i)
        v[idx] += a * val
        if self.bias >= 0:
            v[self.n_features] += a * self.bias

    def dense_row(self, i):
        d = np.zeros(self.n_w)
        idx, val = self.row(i)
        d[idx] = val
        if self.bias >= 0:
            d[self.n_features] = self.bias
        return d


def seq_norm(w):
    """sqrt of the sequential sum of w_c^2."""
    return math.sqrt(float(np.cumsum(w * w)[-1])) if len(w) else 0.0


def node_c(h1_c, m_h, m_s):
    """The box C of R1: inf, or kappa * m_s / m_h (kappa >= 1)."""
    if h1_c is None or h1_c == math.inf:
        return math.inf
    if not h1_c >= 1.0:
        raise ValueError(f"h1_c must be inf or kappa >= 1, not {h1_c}")
    C = h1_c * m_s / m_h
    while C * m_h < m_s:            # kappa = 1: the box's sum may round just below m_s (as llsvm/solvers/h1tree.py)
        C = math.nextafter(C, math.inf)
    return C


def solve_node(data, hard, soft, y_h, C=math.inf, eps=1e-3, max_iter=None):
    """One H1 node: hard / soft row indices of `data` (a Data), hard label y_h (+1/-1), box C (inf allowed).

    Returns a dict: alpha, w (n_w), b, n_iter, gap, norm_w, zero, converged, removed (bool over soft rows),
    f_soft (f on the soft rows)."""
    hard = np.asarray(hard, dtype=np.int64)
    soft = np.asarray(soft, dtype=np.int64)
    m_h, m_s = len(hard), len(soft)
    if m_h == 0 or m_s == 0:
        raise ValueError(f"an H1 node needs a non-empty hard and soft set (m_h = {m_h}, m_s = {m_s})")
    if y_h not in (1, -1, 1.0, -1.0):
        raise ValueError("y_h must be +1 or -1")
    if not C * m_h >= m_s:
        raise ValueError(f"infeasible box: C * m_h = {C * m_h} < m_s = {m_s} (sum of the hard alphas must be m_s)")
    limit = max(10_000_000, 100 * m_h) if max_iter is None else int(max_iter)
    a0 = m_s / m_h
    alpha = np.full(m_h, a0)
    # v = sum_H a0 x_i - sum_S x_j
    hv = np.zeros(data.n_w)
    for t in hard:
        data.axpy(t, a0, hv)
    ssum = np.zeros(data.n_w)
    for t in soft:
        data.axpy(t, 1.0, ssum)
    v = hv - ssum
    PH = data.padded(hard)
    QD = data.sq_norms(hard, PH)
    G = data.dots(hard, v, PH) - 1.0
    n_iter = 0
    gap = math.inf
    while n_iter < limit:
        # i: the largest -G_t over a_t < C (ties: the later index)
        up = alpha < C
        if up.any():
            cand = np.flatnonzero(up)
            vals = -G[cand]
            Gmax = vals.max()
            i = int(cand[np.flatnonzero(vals == Gmax)[-1]])
        else:
            Gmax = -math.inf
            i = -1
        low = alpha > 0.0
        Gmax2 = G[low].max() if low.any() else -math.inf
        j = -1
        if i >= 0:
            Ki = data.dots(hard, data.dense_row(hard[i]), PH)
            cand = np.flatnonzero(low)
            diff = Gmax + G[cand]
            ok = diff > 0.0
            cand, diff = cand[ok], diff[ok]
            if len(cand):
                quad = QD[i] + QD[cand] - 2.0 * Ki[cand]
                obj = -(diff * diff) / np.where(quad > 0.0, quad, TAU)
                j = int(cand[np.flatnonzero(obj == obj.min())[-1]])
        gap = Gmax + Gmax2
        if gap <= eps or j < 0:
            break
        n_iter += 1
        quad = QD[i] + QD[j] - 2.0 * Ki[j]
        delta = (G[i] - G[j]) / (quad if quad > 0.0 else TAU)
        old_i, old_j = alpha[i], alpha[j]
        total = alpha[i] + alpha[j]
        alpha[i] -= delta
        alpha[j] += delta
        if total > C:
            if alpha[i] > C:
                alpha[i] = C
                alpha[j] = total - C
        elif alpha[j] < 0.0:
            alpha[j] = 0.0
            alpha[i] = total
        if total > C:
            if alpha[j] > C:
                alpha[j] = C
                alpha[i] = total - C
        elif alpha[i] < 0.0:
            alpha[i] = 0.0
            alpha[j] = total
        data.axpy(hard[i], alpha[i] - old_i, v)
        data.axpy(hard[j], alpha[j] - old_j, v)
        G = data.dots(hard, v, PH) - 1.0
    w = v if y_h > 0 else -v
    dv = data.dots(hard, v, PH)            # y_h w.x_t
    e = int(np.argmin(dv))
    b = y_h - float(data.dots(hard[e:e + 1], w)[0])
    norm_w = seq_norm(w)
    zero = norm_w <= ZERO_REL * seq_norm(ssum)
    f_soft = data.dots(soft, w) + b
    return {"alpha": alpha, "w": w, "b": b, "n_iter": n_iter, "gap": float(gap), "norm_w": norm_w,
            "zero": bool(zero), "converged": bool(gap <= eps or n_iter < limit),
            "removed": (-y_h) * f_soft > 0.0, "f_soft": f_soft}


# ---------------------------------------------------------------------------------------------------------------
# the tree (R4, R5) and the decision list

def build_tree(X, y, hard_class="greedy", h1_c=math.inf, eps=1e-3, max_depth=256, min_remove=0.0, final=None,
               bias=-1.0, solver=None):
    """The linear H1 tree on X (scipy sparse or dense) with labels y in {-1, +1}.

    hard_class: "greedy" (R4: both candidates, keep the one removing more soft rows; tie -> the larger removed
    fraction |S_removed|/|S_soft|, then hard = +1), "alternate" (the larger class of the whole set first, ties ->
    +1, then alternating), "larger" (the larger class of the remaining S, ties -> +1). A candidate is void (R5) if
    its zero flag is set or it removes fewer than max(1, min_remove * |S|) rows; the build stops when S is
    single-class, when no candidate is left (both void; alternate and larger try the rule's class first and the
    other only when it is void), or at max_depth nodes. solver: None (this twin's solve_node) or a function (hard, soft, y_h, C, eps) -> its dict
    (e.g. cext/_h1.pyx's solve_node over a Rows of X). final: None -> the leaf is the class of S if single, else
    its majority (ties -> +1); else final(S) (S the remaining row indices) gives the leaf.

    Returns (nodes, leaf, S): nodes a list of dicts {hard, soft, w, b, removed (row indices of X), n_removed,
    n_iter, norm_w, zero, gap, converged}; S the remaining row indices. build_tree.candidates (an attribute set on
    each call) lists, per round, the candidates tried as (hard, n_removed, zero, void)."""
    data = X if isinstance(X, Data) else Data(X, bias)
    y = np.asarray(y, dtype=np.float64)
    if not np.all((y == 1) | (y == -1)):
        raise ValueError("labels must be +1 or -1")
    if hard_class not in ("greedy", "alternate", "larger"):
        raise ValueError(f"hard_class must be greedy, alternate or larger, not {hard_class!r}")
    S = np.arange(len(y), dtype=np.int64)
    nodes = []
    build_tree.candidates = []
    next_alt = 1.0 if (y > 0).sum() >= (y < 0).sum() else -1.0
    while len(nodes) < max_depth:
        ys = y[S]
        n_pos, n_neg = int((ys > 0).sum()), int((ys < 0).sum())
        if n_pos == 0 or n_neg == 0:
            break
        if hard_class == "greedy":
            choices = [1.0, -1.0]
        elif hard_class == "alternate":
            choices = [next_alt, -next_alt]
        else:
            choices = [1.0 if n_pos >= n_neg else -1.0, -1.0 if n_pos >= n_neg else 1.0]
        need = max(1.0, min_remove * len(S))
        best = None
        tried = []
        build_tree.candidates.append(tried)
        for k in choices:
            hard = S[ys == k]
            soft = S[ys == -k]
            C = node_c(h1_c, len(hard), len(soft))
            r = solve_node(data, hard, soft, k, C, eps) if solver is None else solver(hard, soft, k, C, eps)
            n_rem = int(r["removed"].sum())
            tried.append((k, n_rem, r["zero"], bool(r["zero"] or n_rem < need)))
            if r["zero"] or n_rem < need:
                continue
            key = (n_rem, n_rem / len(soft))
            if best is None or key > best[0]:     # strict: on a full tie the earlier (+1) stays
                best = (key, k, hard, soft, r)
            if hard_class != "greedy":
                break                             # the rule's class when it is not void
        if best is None:
            break
        _, k, hard, soft, r = best
        removed = soft[r["removed"]]
        nodes.append({"hard": k, "soft": -k, "w": r["w"], "b": r["b"], "removed": removed,
                      "n_removed": len(removed), "n_iter": r["n_iter"], "norm_w": r["norm_w"], "zero": r["zero"],
                      "gap": r["gap"], "converged": r["converged"]})
        S = np.setdiff1d(S, removed)
        next_alt = -k
    ys = y[S]
    if final is not None:
        leaf = final(S)
    else:
        leaf = 1.0 if (ys > 0).sum() >= (ys < 0).sum() else -1.0
    return nodes, leaf, S


def node_eval(nodes, X, bias=-1.0):
    """The decision list over the rows of X: (node, depth) per row, node = index of the first node whose
    sign(w.x + b) is its soft label (strictly: soft * f > 0), else -1; depth = nodes evaluated (node + 1, or
    len(nodes))."""
    data = X if isinstance(X, Data) else Data(X, bias)
    rows = np.arange(data.X.shape[0], dtype=np.int64)
    P = data.padded(rows)
    node = np.full(len(rows), -1, dtype=np.int64)
    depth = np.full(len(rows), len(nodes), dtype=np.int64)
    open_ = np.ones(len(rows), dtype=bool)
    for k, nd in enumerate(nodes):
        f = data.dots(rows, nd["w"], P) + nd["b"]
        hit = open_ & (nd["soft"] * f > 0.0)
        node[hit] = k
        depth[hit] = k + 1
        open_ &= ~hit
    return node, depth


def predict_tree(nodes, leaf, X, bias=-1.0):
    """(labels, depth): the soft label of the first node that claims the row, else the leaf label (leaf may be a
    callable of the remaining rows' indices returning their labels, e.g. an RBF node)."""
    node, depth = node_eval(nodes, X, bias)
    soft = np.array([nd["soft"] for nd in nodes] + [0.0])
    labels = soft[node].astype(np.float64)
    rest = node < 0
    if callable(leaf):
        labels[rest] = leaf(np.flatnonzero(rest))
    else:
        labels[rest] = leaf
    return labels, depth


# ---------------------------------------------------------------------------------------------------------------
# independent references (cvxopt)

def _dense(X):
    return np.asarray(X.todense() if sp.issparse(X) else X, dtype=np.float64)


def qp_primal(X, hard, soft, y_h):
    """Primal (6)-(7) with cvxopt: min 1/2||w||^2 - sum_S y_s (w.x + b) s.t. y_h (w.x_i + b) >= 1 on H.
    Well posed: the b term is -b sum_S y_s = y_h m_s b, bounded below by the hard constraints
    (y_h b >= 1 - min_H y_h w.x). Returns (w, b)."""
    from cvxopt import matrix, solvers
    X = _dense(X)
    Xh, Xs = X[hard], X[soft]
    n = X.shape[1]
    P = np.zeros((n + 1, n + 1))
    P[:n, :n] = np.eye(n)
    y_s = -y_h
    q = -y_s * np.concatenate([Xs.sum(axis=0), [len(soft)]])
    Gm = -y_h * np.hstack([Xh, np.ones((len(hard), 1))])
    h = -np.ones(len(hard))
    sol = solvers.qp(matrix(P), matrix(q), matrix(Gm), matrix(h),
                     options={"show_progress": False, "abstol": 1e-14, "reltol": 1e-14, "feastol": 1e-13,
                              "maxiters": 200})
    z = np.array(sol["x"]).ravel()
    return z[:n], float(z[n])


def qp_dual(X, hard, soft, y_h, C):
    """The dual box QP with cvxopt: min 1/2 a'K_HH a - a'K_HS 1 s.t. sum a = m_s, 0 <= a <= C. Returns (alpha, w)
    with w = y_h (X_H' a - sum_S x_j)."""
    from cvxopt import matrix, solvers
    X = _dense(X)
    Xh, Xs = X[hard], X[soft]
    m_h, m_s = len(hard), len(soft)
    K = Xh @ Xh.T
    q = -(Xh @ Xs.sum(axis=0))
    Gm = np.vstack([-np.eye(m_h), np.eye(m_h)]) if C != math.inf else -np.eye(m_h)
    h = np.concatenate([np.zeros(m_h), np.full(m_h, C)]) if C != math.inf else np.zeros(m_h)
    sol = solvers.qp(matrix(K), matrix(q), matrix(Gm), matrix(h), matrix(np.ones((1, m_h))),
                     matrix(np.array([float(m_s)])),
                     options={"show_progress": False, "abstol": 1e-14, "reltol": 1e-14, "feastol": 1e-13,
                              "maxiters": 200})
    a = np.array(sol["x"]).ravel()
    return a, y_h * (Xh.T @ a - Xs.sum(axis=0))
