# The H1-SVM tree node, linear kernel (Fehr, Zapien Arreola, Burkhardt, "Fast Support Vector Machine
# Classification of Very Large Datasets", GfKl 2007; docs/solvers.md, "H1-SVM: the paper's gaps and the resolutions
# implemented": the nearest-point form, R1-R3, R5, R9).
#
# Problem: hard rows H (label y_h, m_h of them), soft rows S (label -y_h, m_s of them) of a row view. With the soft
# alphas fixed to 1 (eq. 10) and the equality (11), sum_H a_i = m_s, the dual (8) is the nearest-point problem
#     min_a 1/2 ||v||^2,  v = sum_H a_i x_i - sum_S x_j,   sum_H a_i = m_s,  0 <= a_i <= C  (C = inf allowed),
# i.e. LIBSVM's 1/2 a'Qa + p'a with Q_ij = K_ij (one label), p_i = -1 - sum_S K_ij, gradient G_i = x_i . v - 1.
# Solver: MDM = SMO on pairs of hard rows, LIBSVM's WSS 2 with every y_t = +1: i = argmax {-G_t : a_t < C},
# j = argmin {-(G_i - G_t)^2 / q_t : a_t > 0, G_t - G_i > 0}, q_t = K_ii + K_tt - 2 K_it (TAU if <= 0), ties to the
# later index; the pair's sub-problem solved exactly and clipped to [0, C] (LIBSVM's y_i == y_j case). Start
# a = m_s/m_h (feasible iff C m_h >= m_s). Stop (R9): max_{a_i<C} (-G_i) - min_{a_j>0} (-G_j) <= eps, or no j,
# or max_iter pairs (default max(1e7, 100 m_h); converged = False then).
# Update, O(nnz(X_H)) per pair: v (dense, n_features + bias coordinate) += d_i x_i + d_j x_j, then
# G_t = x_t . v - 1 is recomputed over H (exact to v: no drift), and the column K_it = x_t . x_i is read against
# x_i scattered into a dense buffer, only for the candidates t of j.
# Output: w = y_h v (eq. 12), b = y_h - w.x_e with x_e the hard row of smallest y_h w.x (R2: min_H y_h f = 1), the
# zero flag ||w|| <= 1e-12 ||sum_S x_j|| (R5), the removed soft rows y_s f(x) > 0 strictly (R3).
# node_eval: the decision list over a block of rows: the first node k with soft_k (w_k.x + b_k) > 0 (strictly).
# Every dot product is a sequential sum over the row's entries, then the bias term; the NumPy twin
# tests/reference/h1_twin.py does the same operations in the same order and agrees bit for bit.
from libc.math cimport INFINITY, sqrt
from libc.stdint cimport int64_t, int32_t
from libc.stdlib cimport calloc, free

import numpy as np

from rowview cimport RowView, row_indices, row_values, row_axpy, row_sq_norm
from kernel_types cimport value_t
from kernel cimport dot_dense
from smo_step cimport same_label_step
from llsvm._ext._view cimport Rows
from llsvm._ext._stop cimport stop_requested, check_stop

cdef double TAU = 1e-12
cdef double ZERO_REL = 1e-12


cdef inline double _dot(const RowView* v, int64_t i, const double* w, value_t* kind) noexcept nogil:
    """w . x_i: a sequential sum over the row's entries (kernel.pxd's dot_dense), then the bias term (the twin's
    order)."""
    cdef double s = dot_dense(v, i, w, kind)
    if v.bias >= 0:
        s += w[v.n_features] * v.bias
    return s


cdef inline double _seq_norm(const double* w, int64_t n) noexcept nogil:
    cdef int64_t c
    cdef double s = 0.0
    for c in range(n):
        s += w[c] * w[c]
    return sqrt(s)


cdef int64_t _node(const RowView* X, const int64_t* hard, int64_t m_h, const int64_t* soft, int64_t m_s,
                   double y_h, double C, double eps, int64_t limit, double* alpha, double* w, int64_t n_w,
                   double* G, double* QD, double* Ki, double* d, double* ssum, double* f_soft, double* out,
                   value_t* kind) noexcept nogil:
    """The node solver; out receives b, gap, norm_w, norm of sum_S x_j. Returns the number of pairs made.
    w (the vector v during the loop), d and ssum are n_w zeros on entry."""
    cdef int64_t t, i, j, c, k, it = 0, e
    cdef double a0 = <double>m_s / <double>m_h
    cdef double Gmax, Gmax2, diff, quad, obj, best, delta, old_i, old_j, gap = INFINITY, dv, b
    cdef const value_t* xi
    cdef const int32_t* ii
    for t in range(m_h):
        alpha[t] = a0
        row_axpy(X, hard[t], a0, w, kind)
    for t in range(m_s):
        row_axpy(X, soft[t], 1.0, ssum, kind)
    for c in range(n_w):
        w[c] = w[c] - ssum[c]
    for t in range(m_h):
        QD[t] = row_sq_norm(X, hard[t], kind)
        G[t] = _dot(X, hard[t], w, kind) - 1.0
    while it < limit:
        if stop_requested():            # O(nnz of the hard rows) a pair: checked at every pair (cext/_stop.pyx)
            break
        Gmax = -INFINITY
        i = -1
        for t in range(m_h):
            if alpha[t] < C and -G[t] >= Gmax:
                Gmax = -G[t]
                i = t
        Gmax2 = -INFINITY
        for t in range(m_h):
            if alpha[t] > 0.0 and G[t] >= Gmax2:
                Gmax2 = G[t]
        j = -1
        if i >= 0:
            # x_i scattered into d: K_it = x_t . x_i for the candidates t
            xi = row_values(X, hard[i], kind)
            ii = row_indices(X, hard[i])
            for k in range(X.indptr[hard[i]], X.indptr[hard[i] + 1]):
                d[ii[k]] = xi[k]
            if X.bias >= 0:
                d[X.n_features] = X.bias
            best = INFINITY
            for t in range(m_h):
                if not alpha[t] > 0.0:
                    continue
                diff = Gmax + G[t]
                if diff > 0.0:
                    Ki[t] = _dot(X, hard[t], d, kind)
                    quad = QD[i] + QD[t] - 2.0 * Ki[t]
                    obj = -(diff * diff) / (quad if quad > 0.0 else TAU)
                    if obj <= best:
                        best = obj
                        j = t
            for k in range(X.indptr[hard[i]], X.indptr[hard[i] + 1]):
                d[ii[k]] = 0.0
        gap = Gmax + Gmax2
        if gap <= eps or j < 0:
            break
        it += 1
        quad = QD[i] + QD[j] - 2.0 * Ki[j]
        delta = (G[i] - G[j]) / (quad if quad > 0.0 else TAU)
        old_i = alpha[i]
        old_j = alpha[j]
        same_label_step(&alpha[i], &alpha[j], delta, C, C)
        row_axpy(X, hard[i], alpha[i] - old_i, w, kind)
        row_axpy(X, hard[j], alpha[j] - old_j, w, kind)
        for t in range(m_h):
            G[t] = _dot(X, hard[t], w, kind) - 1.0
    # x_e: the smallest y_h w.x = x.v over H (the first on ties), then w = y_h v
    e = 0
    best = INFINITY
    for t in range(m_h):
        dv = _dot(X, hard[t], w, kind)
        if dv < best:
            best = dv
            e = t
    if y_h < 0:
        for c in range(n_w):
            w[c] = -w[c]
    b = y_h - _dot(X, hard[e], w, kind)
    for t in range(m_s):
        f_soft[t] = _dot(X, soft[t], w, kind) + b
    out[0] = b
    out[1] = gap
    out[2] = _seq_norm(w, n_w)
    out[3] = _seq_norm(ssum, n_w)
    return it


def _index_array(rows, int64_t n_rows, name):
    r = np.ascontiguousarray(rows, dtype=np.int64)
    if r.ndim != 1:
        raise ValueError(f"{name} must be a 1-D array of row indices")
    if r.shape[0] and (r.min() < 0 or r.max() >= n_rows):
        raise ValueError(f"{name} holds a row index outside the view's {n_rows} rows")
    return r


def solve_node(Rows X not None, hard, soft, double y_h, double C=INFINITY, double eps=1e-3, max_iter=None):
    """One H1 node (linear kernel) over the rows `hard` (label y_h = +1 or -1) and `soft` (label -y_h) of X.
    C: the hard rows' box (inf: the primal (6)-(7) exactly; the spec's kappa m_s/m_h otherwise), eps: the stopping
    gap, max_iter: pairs at most (default max(1e7, 100 m_h)).

    Returns a dict: alpha (m_h), w (n_features + 1 if X has a bias coordinate), b, n_iter, gap, norm_w, zero (R5),
    converged, removed (bool over the soft rows, R3: y_s f > 0 strictly), f_soft (f on the soft rows)."""
    cdef int64_t[::1] h = _index_array(hard, X.v.n_rows, "hard")
    cdef int64_t[::1] s = _index_array(soft, X.v.n_rows, "soft")
    cdef int64_t m_h = h.shape[0], m_s = s.shape[0]
    if m_h == 0 or m_s == 0:
        raise ValueError(f"an H1 node needs a non-empty hard and soft set (m_h = {m_h}, m_s = {m_s})")
    if y_h != 1.0 and y_h != -1.0:
        raise ValueError(f"y_h must be +1 or -1, not {y_h}")
    if not C * m_h >= m_s:
        raise ValueError(f"infeasible box: C * m_h = {C * m_h} < m_s = {m_s} (the hard alphas must sum to m_s)")
    if not eps > 0:
        raise ValueError(f"eps must be > 0, not {eps}")
    cdef int64_t limit = max(10_000_000, 100 * m_h) if max_iter is None else int(max_iter)
    if limit < 0:
        raise ValueError("max_iter must be >= 0")
    cdef int64_t n_w = X.v.n_features + (1 if X.v.bias >= 0 else 0)
    cdef double[::1] alpha = np.empty(m_h)
    cdef double[::1] w = np.zeros(n_w)
    cdef double[::1] f_soft = np.empty(m_s)
    cdef double[::1] out = np.zeros(4)
    cdef int64_t n_iter
    cdef double* G = <double*>calloc(m_h, sizeof(double))
    cdef double* QD = <double*>calloc(m_h, sizeof(double))
    cdef double* Ki = <double*>calloc(m_h, sizeof(double))
    cdef double* d = <double*>calloc(n_w + 1, sizeof(double))
    cdef double* ssum = <double*>calloc(n_w + 1, sizeof(double))
    if G == NULL or QD == NULL or Ki == NULL or d == NULL or ssum == NULL:
        free(G); free(QD); free(Ki); free(d); free(ssum)
        raise MemoryError()
    try:
        with nogil:
            if X.f32:
                n_iter = _node(&X.v, &h[0], m_h, &s[0], m_s, y_h, C, eps, limit, &alpha[0], &w[0], n_w, G, QD, Ki,
                               d, ssum, &f_soft[0], &out[0], <float*>NULL)
            else:
                n_iter = _node(&X.v, &h[0], m_h, &s[0], m_s, y_h, C, eps, limit, &alpha[0], &w[0], n_w, G, QD, Ki,
                               d, ssum, &f_soft[0], &out[0], <double*>NULL)
    finally:
        free(G); free(QD); free(Ki); free(d); free(ssum)
    check_stop()                        # a node cut short by a signal is never returned
    fs = np.asarray(f_soft)
    return {"alpha": np.asarray(alpha), "w": np.asarray(w), "b": float(out[0]), "n_iter": int(n_iter),
            "gap": float(out[1]), "norm_w": float(out[2]), "zero": bool(out[2] <= ZERO_REL * out[3]),
            "converged": bool(out[1] <= eps or n_iter < limit), "removed": (-y_h) * fs > 0.0, "f_soft": fs}


cdef void _eval(const RowView* X, const int64_t* rows, int64_t l, const double* W, int64_t n_w, const double* b,
                const double* soft, int64_t r, int64_t* node, int64_t* depth, value_t* kind) noexcept nogil:
    cdef int64_t t, k
    cdef double f
    for t in range(l):
        node[t] = -1
        depth[t] = r
        for k in range(r):
            f = _dot(X, rows[t], W + k * n_w, kind) + b[k]
            if soft[k] * f > 0.0:
                node[t] = k
                depth[t] = k + 1
                break


def node_eval(Rows X not None, W, b, soft, rows=None):
    """The decision list of r linear H1 nodes over rows of X (rows: indices, None = all): W float64 (r, n_w)
    C-contiguous, n_w = X.n_features (+1 with a bias coordinate), b and soft (the nodes' soft labels, +1/-1) of
    length r. Returns (node, depth), int64 per row: node = the first k with soft_k (W_k.x + b_k) > 0 strictly (the
    row gets soft_k), else -1 (the caller applies the leaf or the final node); depth = nodes evaluated (k + 1, or
    r)."""
    cdef const double[:, ::1] Wv = np.ascontiguousarray(W, dtype=np.float64)
    cdef const double[::1] bv = np.ascontiguousarray(b, dtype=np.float64)
    cdef const double[::1] sv = np.ascontiguousarray(soft, dtype=np.float64)
    cdef int64_t r = Wv.shape[0], n_w = X.v.n_features + (1 if X.v.bias >= 0 else 0)
    if Wv.shape[1] != n_w:
        raise ValueError(f"W has {Wv.shape[1]} columns; the view's rows have {n_w} coordinates")
    if bv.shape[0] != r or sv.shape[0] != r:
        raise ValueError("b and soft must have one entry per node")
    if not np.all((np.asarray(sv) == 1) | (np.asarray(sv) == -1)):
        raise ValueError("soft labels must be +1 or -1")
    cdef int64_t[::1] rv = (np.arange(X.v.n_rows, dtype=np.int64) if rows is None
                            else _index_array(rows, X.v.n_rows, "rows"))
    cdef int64_t l = rv.shape[0]
    node = np.empty(l, dtype=np.int64)
    depth = np.empty(l, dtype=np.int64)
    cdef int64_t[::1] nv = node, dvw = depth
    if l == 0:
        return node, depth
    cdef const double* Wp = &Wv[0, 0] if r > 0 else NULL
    cdef const double* bp = &bv[0] if r > 0 else NULL
    cdef const double* sp = &sv[0] if r > 0 else NULL
    with nogil:
        if X.f32:
            _eval(&X.v, &rv[0], l, Wp, n_w, bp, sp, r, &nv[0], &dvw[0], <float*>NULL)
        else:
            _eval(&X.v, &rv[0], l, Wp, n_w, bp, sp, r, &nv[0], &dvw[0], <double*>NULL)
    return node, depth
