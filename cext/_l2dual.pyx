# Kernels of LIBLINEAR 2.50's remaining L2-regularized dual solvers, over the row view (each runs its whole loop
# without the GIL; the Python drivers in llsvm/solvers/ own the output, warnings, certificates and fallbacks).
#
# 1. -s 7, L2-regularized logistic regression in the dual (Yu, Huang, Lin, "Dual coordinate descent methods for
#    logistic regression and maximum entropy models", MLJ 2011, Algorithm 5; LIBLINEAR's solve_l2r_lr_dual):
#        min_alpha 1/2 alpha^T Q alpha + sum_i alpha_i log alpha_i + (U_i - alpha_i) log (U_i - alpha_i),
#        0 <= alpha_i <= U_i = C_i,  Q_ij = y_i y_j x_i.x_j,  w = sum alpha_i y_i x_i  (C_i: Cp or Cn by y_i, times
#        the row's weight with weights, rowview.row_cost).
#    Both alpha_i and U_i - alpha_i are kept (alpha2[2i], alpha2[2i+1]). Update of i: the one-variable problem
#    g(z) = z log z + (C - z) log (C - z) + a/2 (z - z_old)^2 + s b (z - z_old) by at most 100 Newton steps (a step
#    leaving (0, C) shrinks z by 0.1), with inner tolerance innereps (1e-2, divided by 10 after an iteration with at
#    most l/10 Newton steps, down to min(1e-8, eps)). Stop when max |g'(z)| at the start of the steps < eps.
# 2. -s 12 and -s 13, L2-loss and L1-loss SVR in the dual (Ho and Lin, "Large-scale linear support vector
#    regression", JMLR 2012, Algorithm 4; LIBLINEAR's solve_l2r_l1l2_svr):
#        min_beta 1/2 beta^T Q beta - y^T beta + p |beta|_1 + lambda/2 beta^T beta,  -U <= beta_i <= U,
#        Q = X X^T; L2 loss: lambda = 1/(2C), U = inf; L1 loss: lambda = 0, U = C (weighted rows: C_i = C W_i per
#        row, rowview.row_cost, the weights extension's lambda_i and U_i).
#    Update of i: G = w.x_i - y_i + lambda beta_i, H = QD_i + lambda, the Newton step of the piecewise quadratic,
#    clipped to [-U, U]. Shrinking on the bounds with last iteration's maximal violation; stop when the 1-norm of
#    the violations <= eps times that of the first iteration (then once more over all variables).
# 3. -s 21, the one-class SVM dual (Chou, Lin, Lin, "A fast two-level coordinate descent method for the one-class
#    SVM", SDM 2020, Algorithm 7; LIBLINEAR's solve_oneclass_svm):
#        min_alpha 1/2 alpha^T Q alpha,  0 <= alpha_i <= U_i,  sum alpha_i = nu sum_i U_i,  Q = X X^T,
#    U_i = 1 (weighted rows: U_i = W_i, rowview.row_cost, and the start fills nu sum W greedily, each alpha_i up to
#    U_i: LIBSVM's one-class SVM in its weights extension, scikit-learn's solve_one_class; docs/weights.md).
#    Each iteration computes G = X w over the active set, stops when max{-G_i: alpha_i < U_i} - min{-G_i: alpha_i > 0}
#    < eps (over all variables), shrinks bounded variables beyond those extremes, and updates up to
#    max(active/10, 1) pairs (i, j): the i with the largest -G_i among alpha_i < U_i matched, in order, with the j of
#    the smallest -G_j among alpha_j > 0, each pair solved exactly within its two boxes (LIBSVM's clipping). Pairs are ordered by (-G, index),
#    a total order, so quick-select and sorting the selected few give LIBLINEAR's pairs exactly. G_i = w.x_i is one
#    running sum a row (row_dot_inorder) and the end's w.w and rho are summed as LIBLINEAR sums them
#    (oneclass_end): a last-bit difference in G decides which pairs are chosen, and so the iteration count.
# 4. -s 4, Crammer and Singer's multiclass SVM (Keerthi, Sundararajan, Chang, Hsieh, Lin, KDD 2008, the sequential
#    dual method; LIBLINEAR's Solver_MCSVM_CS):
#        min_alpha 1/2 sum_m ||w_m||^2 + sum_i sum_m e_i^m alpha_i^m,  alpha_i^m <= C_i [m = y_i],
#        sum_m alpha_i^m = 0,  w_m = sum_i alpha_i^m x_i,  e_i^m = [m != y_i],  C_i = C_{y_i} (weighted rows:
#        C_{y_i} W_i, rowview.row_cost, as scikit-learn's weighted Solver_MCSVM_CS; docs/weights.md).
#    Update of i: the k-variable subproblem solved exactly by sorting (solve_sub_problem), with shrinking of the
#    classes of each row and of rows; stop when the largest maxG - minG of an iteration < eps after a pass over
#    everything (shrinking tolerance max(10 eps, 1), halved at each restart). w is LIBLINEAR's layout
#    w[feature * nr_class + m].
# All four visit rows in a random order from the project's RNG (rng.pxd) where LIBLINEAR calls rand(). Progress
# characters ('.' every 10 iterations, '*' when shrinking restarts) are written to `events` for the driver to
# print.
cimport cython
from cython.parallel cimport prange
from libc.math cimport fabs, log, INFINITY
from libc.stdint cimport int32_t, int64_t, uint32_t, uint64_t
from libc.stdlib cimport malloc, free, qsort

import numpy as np

from kernel_types cimport value_t
from kernel_util cimport put_char as _event
from rowview cimport RowView, row_dot, row_dot_inorder, row_axpy, row_sq_norm, row_row_dot, row_indices, row_values
from rowview cimport row_cost
from rowview cimport subset_row as _row, subset_ptr as _rows_ptr
from rng cimport Rng, rng_shuffle as _shuffle
from kernel_util cimport LLSVM_STORE_RELAXED
from scout cimport scout_publish, scout_view
from llsvm._ext._view cimport Rows
from llsvm._ext._stop cimport stop_requested, check_stop


cdef int _check(Rows X, int64_t l, const int64_t[::1] rows, int64_t w_len, int64_t mult, uint64_t[::1] rng) except -1:
    cdef int64_t need = (X.v.n_features + (1 if X.v.bias >= 0 else 0)) * mult
    if l < 1 or l > 2147483647:
        raise ValueError("a problem needs 1 to 2^31 - 1 rows")
    if rows.shape[0] and rows.shape[0] != l:
        raise ValueError("rows and the problem's size disagree")
    if w_len != need:
        raise ValueError(f"w has {w_len} entries, the view needs {need}")
    if rng.shape[0] != 4:
        raise ValueError("rng must be an RNG state of 4 words")
    return 0


# -- 1. -s 7: logistic regression in the dual ---------------------------------------------------------------------
cdef int64_t _lr_dual(const RowView* v, const int64_t* r, int64_t l, const signed char* y, double Cp, double Cn,
                      double eps, int64_t max_iter, double* alpha, double* w, int64_t w_size, double* xTx,
                      int32_t* index, Rng* g, char* ev, int64_t* n_ev, int64_t cap, value_t* kind,
                      int64_t* progress=NULL) noexcept nogil:
    cdef int64_t i, s, it = 0, newton_iter, inner_iter, ind1, ind2, row
    cdef int max_inner_iter = 100
    cdef double innereps = 1e-2
    cdef double innereps_min = eps if eps < 1e-8 else 1e-8
    cdef double C, a, b, z, alpha_old, gp, gpp, tmpz, Gmax
    cdef double eta = 0.1
    cdef int sign
    for i in range(w_size):
        w[i] = 0.0
    for i in range(l):
        row = _row(r, i)
        C = row_cost(v, row, Cp if y[i] > 0 else Cn)
        alpha[2 * i] = 0.001 * C if 0.001 * C < 1e-8 else 1e-8
        alpha[2 * i + 1] = C - alpha[2 * i]
        xTx[i] = row_sq_norm(v, row, kind)
        row_axpy(v, row, y[i] * alpha[2 * i], w, kind)
        index[i] = <int32_t>i
    while it < max_iter:
        if stop_requested():            # once a pass over the active rows (cext/_stop.pyx; the wrapper raises)
            break
        _shuffle(g, index, l)
        newton_iter = 0
        Gmax = 0.0
        for s in range(l):
            scout_publish(progress, s)
            i = index[s]
            row = _row(r, i)
            C = row_cost(v, row, Cp if y[i] > 0 else Cn)
            a = xTx[i]
            b = y[i] * row_dot(v, row, w, kind)
            ind1 = 2 * i
            ind2 = 2 * i + 1
            sign = 1
            if 0.5 * a * (alpha[ind2] - alpha[ind1]) + b < 0:
                ind1 = 2 * i + 1
                ind2 = 2 * i
                sign = -1
            alpha_old = alpha[ind1]
            z = alpha_old
            if C - z < 0.5 * C:
                z = 0.1 * z
            gp = a * (z - alpha_old) + sign * b + log(z / (C - z))
            if fabs(gp) > Gmax:
                Gmax = fabs(gp)
            inner_iter = 0
            while inner_iter <= max_inner_iter:
                if fabs(gp) < innereps:
                    break
                gpp = a + C / (C - z) / z
                tmpz = z - gp / gpp
                if tmpz <= 0:
                    z *= eta
                else:
                    z = tmpz
                gp = a * (z - alpha_old) + sign * b + log(z / (C - z))
                newton_iter += 1
                inner_iter += 1
            if inner_iter > 0:
                alpha[ind1] = z
                alpha[ind2] = C - z
                row_axpy(v, row, sign * (z - alpha_old) * y[i], w, kind)
        it += 1
        if it % 10 == 0:
            _event(ev, n_ev, cap, c'.')
        if Gmax < eps:
            break
        if newton_iter <= l / 10:
            innereps = 0.1 * innereps if 0.1 * innereps > innereps_min else innereps_min
    return it


def lr_dual(Rows X not None, const int64_t[::1] rows, const signed char[::1] y, double Cp, double Cn, double eps,
            int64_t max_iter, double[::1] alpha, double[::1] w, uint64_t[::1] rng, signed char[::1] events,
            bint scout=False):
    """-s 7 from LIBLINEAR's starting point; alpha (2 l) receives (alpha_i, C_i - alpha_i), w the weights.
    Returns (iterations, number of event characters written). scout: a second thread reads the rows ahead of
    the passes (cext/scout.pxd; the same iterates, bit for bit)."""
    cdef int64_t l = y.shape[0], n_ev = 0, it, t, progress = -1
    cdef int64_t out[1]
    _check(X, l, rows, w.shape[0], 1, rng)
    if alpha.shape[0] != 2 * l:
        raise ValueError("alpha must have 2 l entries")
    xTx = np.empty(l, np.float64)
    index = np.empty(l, np.int32)
    cdef double[::1] xt = xTx
    cdef int32_t[::1] ix = index
    cdef const int64_t* r = _rows_ptr(rows)
    cdef int64_t cap = events.shape[0]
    cdef char* ev = <char*>&events[0] if cap else NULL
    with nogil:
        if scout:
            for t in prange(2, num_threads=2, schedule="static", chunksize=1):
                if t == 0:
                    if X.f32:
                        out[0] = _lr_dual(&X.v, r, l, &y[0], Cp, Cn, eps, max_iter, &alpha[0], &w[0], w.shape[0],
                                          &xt[0], &ix[0], <Rng*>&rng[0], ev, &n_ev, cap, <float*>NULL, &progress)
                    else:
                        out[0] = _lr_dual(&X.v, r, l, &y[0], Cp, Cn, eps, max_iter, &alpha[0], &w[0], w.shape[0],
                                          &xt[0], &ix[0], <Rng*>&rng[0], ev, &n_ev, cap, <double*>NULL, &progress)
                    LLSVM_STORE_RELAXED(&progress, -2)
                else:
                    scout_view(&X.v, X.f32, r, &ix[0], l, &progress)
            it = out[0]
        elif X.f32:
            it = _lr_dual(&X.v, r, l, &y[0], Cp, Cn, eps, max_iter, &alpha[0], &w[0], w.shape[0], &xt[0], &ix[0],
                          <Rng*>&rng[0], ev, &n_ev, cap, <float*>NULL)
        else:
            it = _lr_dual(&X.v, r, l, &y[0], Cp, Cn, eps, max_iter, &alpha[0], &w[0], w.shape[0], &xt[0], &ix[0],
                          <Rng*>&rng[0], ev, &n_ev, cap, <double*>NULL)
    check_stop()
    return it, n_ev


# -- 2. -s 12 / -s 13: support vector regression in the dual ------------------------------------------------------
cdef int64_t _svr_dual(const RowView* v, const int64_t* r, int64_t l, const double* y, double C, double p,
                       bint l1_loss, double eps, int64_t max_iter, double* beta, double* w, int64_t w_size,
                       double* QD, int32_t* index, Rng* g, char* ev, int64_t* n_ev, int64_t cap,
                       value_t* kind, int64_t* progress=NULL) noexcept nogil:
    cdef int64_t i, s, it = 0, active_size = l, row
    cdef double lam = 0.0 if l1_loss else 0.5 / C
    cdef double U = C if l1_loss else INFINITY
    cdef double Gmax_old = INFINITY, Gmax_new, Gnorm1_new, Gnorm1_init = -1.0
    cdef double G, H, Gp, Gn, violation, d, beta_old
    cdef int32_t t
    for i in range(w_size):
        w[i] = 0.0
    for i in range(l):
        row = _row(r, i)
        QD[i] = row_sq_norm(v, row, kind)
        if beta[i] != 0:
            row_axpy(v, row, beta[i], w, kind)
        index[i] = <int32_t>i
    while it < max_iter:
        if stop_requested():            # once a pass over the active rows (cext/_stop.pyx; the wrapper raises)
            break
        Gmax_new = 0.0
        Gnorm1_new = 0.0
        _shuffle(g, index, active_size)
        s = 0
        while s < active_size:
            scout_publish(progress, s)
            i = index[s]
            row = _row(r, i)
            if v.weight != NULL:        # C_i = C W_i (docs/weights.md): lambda_i and U_i of the row
                lam = 0.0 if l1_loss else 0.5 / row_cost(v, row, C)
                U = row_cost(v, row, C) if l1_loss else INFINITY
            G = -y[i] + lam * beta[i] + row_dot(v, row, w, kind)
            H = QD[i] + lam
            Gp = G + p
            Gn = G - p
            violation = 0.0
            if beta[i] == 0:
                if Gp < 0:
                    violation = -Gp
                elif Gn > 0:
                    violation = Gn
                elif Gp > Gmax_old and Gn < -Gmax_old:
                    active_size -= 1
                    t = index[s]; index[s] = index[active_size]; index[active_size] = t
                    continue
            elif beta[i] >= U:
                if Gp > 0:
                    violation = Gp
                elif Gp < -Gmax_old:
                    active_size -= 1
                    t = index[s]; index[s] = index[active_size]; index[active_size] = t
                    continue
            elif beta[i] <= -U:
                if Gn < 0:
                    violation = -Gn
                elif Gn > Gmax_old:
                    active_size -= 1
                    t = index[s]; index[s] = index[active_size]; index[active_size] = t
                    continue
            elif beta[i] > 0:
                violation = fabs(Gp)
            else:
                violation = fabs(Gn)
            if violation > Gmax_new:
                Gmax_new = violation
            Gnorm1_new += violation
            if Gp < H * beta[i]:
                d = -Gp / H
            elif Gn > H * beta[i]:
                d = -Gn / H
            else:
                d = -beta[i]
            s += 1
            if fabs(d) < 1.0e-12:
                continue
            beta_old = beta[i]
            beta[i] = beta[i] + d
            if beta[i] < -U:
                beta[i] = -U
            if beta[i] > U:
                beta[i] = U
            d = beta[i] - beta_old
            if d != 0:
                row_axpy(v, row, d, w, kind)
        if it == 0:
            Gnorm1_init = Gnorm1_new
        it += 1
        if it % 10 == 0:
            _event(ev, n_ev, cap, c'.')
        if Gnorm1_new <= eps * Gnorm1_init:
            if active_size == l:
                break
            active_size = l
            _event(ev, n_ev, cap, c'*')
            Gmax_old = INFINITY
            continue
        Gmax_old = Gmax_new
    return it


def svr_dual(Rows X not None, const int64_t[::1] rows, const double[::1] y, double C, double p, bint l1_loss,
             double eps, int64_t max_iter, double[::1] beta, double[::1] w, uint64_t[::1] rng, signed char[::1] events,
             bint scout=False):
    """-s 12 (L2 loss) / -s 13 (L1 loss) from beta (LIBLINEAR starts at 0); w receives X^T beta at the end.
    Returns (iterations, number of event characters written). scout: as lr_dual's."""
    cdef int64_t l = y.shape[0], n_ev = 0, it, t, progress = -1
    cdef int64_t out[1]
    _check(X, l, rows, w.shape[0], 1, rng)
    if beta.shape[0] != l:
        raise ValueError("beta must have l entries")
    QD = np.empty(l, np.float64)
    index = np.empty(l, np.int32)
    cdef double[::1] qd = QD
    cdef int32_t[::1] ix = index
    cdef const int64_t* r = _rows_ptr(rows)
    cdef int64_t cap = events.shape[0]
    cdef char* ev = <char*>&events[0] if cap else NULL
    with nogil:
        if scout:
            for t in prange(2, num_threads=2, schedule="static", chunksize=1):
                if t == 0:
                    if X.f32:
                        out[0] = _svr_dual(&X.v, r, l, &y[0], C, p, l1_loss, eps, max_iter, &beta[0], &w[0],
                                           w.shape[0], &qd[0], &ix[0], <Rng*>&rng[0], ev, &n_ev, cap, <float*>NULL,
                                           &progress)
                    else:
                        out[0] = _svr_dual(&X.v, r, l, &y[0], C, p, l1_loss, eps, max_iter, &beta[0], &w[0],
                                           w.shape[0], &qd[0], &ix[0], <Rng*>&rng[0], ev, &n_ev, cap, <double*>NULL,
                                           &progress)
                    LLSVM_STORE_RELAXED(&progress, -2)
                else:
                    scout_view(&X.v, X.f32, r, &ix[0], l, &progress)
            it = out[0]
        elif X.f32:
            it = _svr_dual(&X.v, r, l, &y[0], C, p, l1_loss, eps, max_iter, &beta[0], &w[0], w.shape[0], &qd[0],
                           &ix[0], <Rng*>&rng[0], ev, &n_ev, cap, <float*>NULL)
        else:
            it = _svr_dual(&X.v, r, l, &y[0], C, p, l1_loss, eps, max_iter, &beta[0], &w[0], w.shape[0], &qd[0],
                           &ix[0], <Rng*>&rng[0], ev, &n_ev, cap, <double*>NULL)
    check_stop()
    return it, n_ev


# -- 3. -s 21: the one-class SVM ----------------------------------------------------------------------------------
cdef struct Node:
    double value
    int32_t index


cdef int _cmp_node(const void* a, const void* b) noexcept nogil:
    """LIBLINEAR's compare_feature_node: by value, then by index (a total order)."""
    cdef const Node* x = <const Node*>a
    cdef const Node* y = <const Node*>b
    if x.value < y.value:
        return -1
    if x.value > y.value:
        return 1
    if x.index < y.index:
        return -1
    if x.index > y.index:
        return 1
    return 0


cdef inline void _swap_node(Node* a, int64_t i, int64_t j) noexcept nogil:
    cdef Node t = a[i]
    a[i] = a[j]
    a[j] = t


cdef void _select(Node* a, int64_t n, int64_t k) noexcept nogil:
    """Rearrange a[0:n] so that a[0:k] hold its k smallest nodes (in _cmp_node's total order), in O(n) expected:
    iterative quick-select with a median-of-three pivot. The set is unique, so the pairs chosen are LIBLINEAR's."""
    cdef int64_t lo = 0, hi = n - 1, mid, i, store
    if k <= 0 or k >= n:
        return
    while hi > lo:
        mid = lo + (hi - lo) // 2
        if _cmp_node(&a[mid], &a[lo]) < 0:
            _swap_node(a, mid, lo)
        if _cmp_node(&a[hi], &a[lo]) < 0:
            _swap_node(a, hi, lo)
        if _cmp_node(&a[hi], &a[mid]) < 0:
            _swap_node(a, hi, mid)
        _swap_node(a, mid, hi)              # the median of three as the pivot, at hi
        store = lo
        for i in range(lo, hi):
            if _cmp_node(&a[i], &a[hi]) < 0:
                _swap_node(a, store, i)
                store += 1
        _swap_node(a, store, hi)            # a[store] is in its sorted place
        if store == k or store == k - 1:
            return
        if store > k:
            hi = store - 1
        else:
            lo = store + 1


cdef int64_t _oneclass(const RowView* v, const int64_t* r, int64_t l, double nu, double eps, int64_t max_iter,
                       double* alpha, double* w, int64_t w_size, double* QD, double* G, double* U, int32_t* index,
                       Node* up, Node* low, char* ev, int64_t* n_ev, int64_t cap, value_t* kind) noexcept nogil:
    cdef int64_t i, j, s, it = 0, active_size = l, n, len_up, len_low, max_inner, ri, rj
    cdef double negGmax, negGmin, Gi, Gj, Qij, quad_coef, delta, total, old_alpha_i, nu_l
    cdef int32_t t
    cdef bint violating
    for i in range(l):
        alpha[i] = 0.0
        U[i] = row_cost(v, _row(r, i), 1.0)     # the box: 1, or the row's weight (LIBSVM's weighted one-class)
    if v.weight == NULL:
        n = <int64_t>(nu * l)
        for i in range(n):
            alpha[i] = 1.0
        if n < l:
            alpha[n] = nu * l - n
    else:
        # LIBSVM's (weights) solve_one_class: fill nu sum W greedily, each alpha_i up to its box; with every weight
        # 1 this is the start above, bit for bit (sum W = l exactly and each subtraction of 1 is exact)
        nu_l = 0.0
        for i in range(l):
            nu_l += U[i]
        nu_l *= nu
        i = 0
        while nu_l > 0 and i < l:
            alpha[i] = U[i] if U[i] < nu_l else nu_l
            nu_l -= alpha[i]
            i += 1
    for i in range(w_size):
        w[i] = 0.0
    for i in range(l):
        ri = _row(r, i)
        QD[i] = row_sq_norm(v, ri, kind)
        if alpha[i] != 0:
            row_axpy(v, ri, alpha[i], w, kind)
        index[i] = <int32_t>i
    while it < max_iter:
        if stop_requested():            # once a pass over the active rows (cext/_stop.pyx; the wrapper raises)
            break
        negGmax = -INFINITY
        negGmin = INFINITY
        for s in range(active_size):
            i = index[s]
            G[i] = row_dot_inorder(v, _row(r, i), w, kind)
            if alpha[i] < U[i] and -G[i] > negGmax:
                negGmax = -G[i]
            if alpha[i] > 0 and -G[i] < negGmin:
                negGmin = -G[i]
        if negGmax - negGmin < eps:
            if active_size == l:
                break
            active_size = l
            _event(ev, n_ev, cap, c'*')
            continue
        s = 0
        while s < active_size:
            i = index[s]
            if (alpha[i] == U[i] and -G[i] > negGmax) or (alpha[i] == 0 and -G[i] < negGmin):
                active_size -= 1
                t = index[s]; index[s] = index[active_size]; index[active_size] = t
            else:
                s += 1
        max_inner = active_size / 10 if active_size / 10 > 1 else 1
        len_up = 0
        len_low = 0
        for s in range(active_size):
            i = index[s]
            if alpha[i] < U[i]:
                up[len_up].value = -G[i]
                up[len_up].index = <int32_t>i
                len_up += 1
            if alpha[i] > 0:
                low[len_low].value = -G[i]
                low[len_low].index = <int32_t>i
                len_low += 1
        if len_up < max_inner:
            max_inner = len_up
        if len_low < max_inner:
            max_inner = len_low
        # the max_inner largest of Iup and smallest of Ilow, each sorted (LIBLINEAR's quick_select_min_k + qsort)
        _select(up, len_up, len_up - max_inner)
        if max_inner:
            qsort(&up[len_up - max_inner], max_inner, sizeof(Node), _cmp_node)
        _select(low, len_low, max_inner)
        if max_inner:
            qsort(low, max_inner, sizeof(Node), _cmp_node)
        for s in range(max_inner):
            i = up[len_up - s - 1].index
            j = low[s].index
            if (alpha[i] == 0 and alpha[j] == 0) or (alpha[i] == U[i] and alpha[j] == U[j]):
                continue
            ri = _row(r, i)
            rj = _row(r, j)
            Gi = row_dot_inorder(v, ri, w, kind)
            Gj = row_dot_inorder(v, rj, w, kind)
            violating = False
            if alpha[i] < U[i] and alpha[j] > 0 and -Gj + 1e-12 < -Gi:
                violating = True
            elif alpha[i] > 0 and alpha[j] < U[j] and -Gi + 1e-12 < -Gj:
                violating = True
            if not violating:
                continue
            Qij = row_row_dot(v, ri, rj, kind)
            quad_coef = QD[i] + QD[j] - 2 * Qij
            if quad_coef <= 0:
                quad_coef = 1e-12
            delta = (Gi - Gj) / quad_coef
            old_alpha_i = alpha[i]
            total = alpha[i] + alpha[j]
            alpha[i] = alpha[i] - delta
            alpha[j] = alpha[j] + delta
            if total > U[i]:               # LIBSVM's two boxes (each 1 without weights)
                if alpha[i] > U[i]:
                    alpha[i] = U[i]
                    alpha[j] = total - U[i]
            else:
                if alpha[j] < 0:
                    alpha[j] = 0
                    alpha[i] = total
            if total > U[j]:
                if alpha[j] > U[j]:
                    alpha[j] = U[j]
                    alpha[i] = total - U[j]
            else:
                if alpha[i] < 0:
                    alpha[i] = 0
                    alpha[j] = total
            delta = alpha[i] - old_alpha_i
            row_axpy(v, ri, delta, w, kind)
            row_axpy(v, rj, -delta, w, kind)
        it += 1
        if it % 10 == 0:
            _event(ev, n_ev, cap, c'.')
    return it


def oneclass(Rows X not None, const int64_t[::1] rows, int64_t l, double nu, double eps, int64_t max_iter,
             double[::1] alpha, double[::1] w, signed char[::1] events):
    """-s 21 from LIBLINEAR's starting point (the first floor(nu l) alphas at 1, the next at the rest; weighted
    rows: LIBSVM's greedy fill of nu sum W, alpha_i up to W_i); alpha (l) and w receive the solution. Returns (iterations, number of event characters written)."""
    cdef int64_t n_ev = 0, it
    cdef uint64_t[::1] dummy = np.zeros(4, np.uint64)
    _check(X, l, rows, w.shape[0], 1, dummy)
    if alpha.shape[0] != l:
        raise ValueError("alpha must have l entries")
    QD = np.empty(l, np.float64)
    G = np.empty(l, np.float64)
    Ub = np.empty(l, np.float64)
    index = np.empty(l, np.int32)
    cdef double[::1] qd = QD
    cdef double[::1] gg = G
    cdef double[::1] ub = Ub
    cdef int32_t[::1] ix = index
    cdef Node* up = <Node*>malloc(l * sizeof(Node))
    cdef Node* low = <Node*>malloc(l * sizeof(Node))
    if up == NULL or low == NULL:
        free(up)
        free(low)
        raise MemoryError()
    cdef const int64_t* r = _rows_ptr(rows)
    cdef int64_t cap = events.shape[0]
    cdef char* ev = <char*>&events[0] if cap else NULL
    try:
        with nogil:
            if X.f32:
                it = _oneclass(&X.v, r, l, nu, eps, max_iter, &alpha[0], &w[0], w.shape[0], &qd[0], &gg[0], &ub[0],
                               &ix[0], up, low, ev, &n_ev, cap, <float*>NULL)
            else:
                it = _oneclass(&X.v, r, l, nu, eps, max_iter, &alpha[0], &w[0], w.shape[0], &qd[0], &gg[0], &ub[0],
                               &ix[0], up, low, ev, &n_ev, cap, <double*>NULL)
    finally:
        free(up)
        free(low)
    check_stop()
    return it, n_ev


cdef void _oneclass_end(const RowView* v, const int64_t* r, int64_t l, const double* alpha, const double* w,
                       int64_t w_size, double* out, value_t* kind) noexcept nogil:
    """out = (w.w, lb, ub, nr_free, sum_free) as solve_oneclass_svm sums them after its loop: w.w from coordinate 0
    up, then over the rows in order G_i = w.x_i (one running sum, row_dot_inorder): lb = max G_i over alpha_i = U_i,
    ub = min over alpha_i = 0, the others counted and summed (rho = sum_free / nr_free, else (ub + lb) / 2)."""
    cdef int64_t i
    cdef double wTw = 0.0, lb = -INFINITY, ub = INFINITY, nr_free = 0.0, sum_free = 0.0, G
    for i in range(w_size):
        wTw += w[i] * w[i]
    for i in range(l):
        G = row_dot_inorder(v, _row(r, i), w, kind)
        if alpha[i] == row_cost(v, _row(r, i), 1.0):      # at its box: 1, or the row's weight
            if G > lb:
                lb = G
        elif alpha[i] == 0:
            if G < ub:
                ub = G
        else:
            nr_free += 1
            sum_free += G
    out[0] = wTw
    out[1] = lb
    out[2] = ub
    out[3] = nr_free
    out[4] = sum_free


def oneclass_end(Rows X not None, const int64_t[::1] rows, const double[::1] alpha, const double[::1] w):
    """(w.w, lb, ub, nr_free, sum_free) of -s 21's solution, summed in LIBLINEAR's order (its objective value w.w/2
    and its rho: sum_free / nr_free when some alpha is free, else (ub + lb) / 2)."""
    cdef uint64_t[::1] dummy = np.zeros(4, np.uint64)
    cdef int64_t l = alpha.shape[0]
    cdef double out[5]
    _check(X, l, rows, w.shape[0], 1, dummy)
    out[0] = 0.0
    out[1] = -INFINITY
    out[2] = INFINITY
    out[3] = 0.0
    out[4] = 0.0
    with nogil:
        if X.f32:
            _oneclass_end(&X.v, _rows_ptr(rows), l, &alpha[0], &w[0], w.shape[0], out, <float*>NULL)
        else:
            _oneclass_end(&X.v, _rows_ptr(rows), l, &alpha[0], &w[0], w.shape[0], out, <double*>NULL)
    return out[0], out[1], out[2], out[3], out[4]


# -- 4. -s 4: Crammer and Singer ----------------------------------------------------------------------------------
cdef int _cmp_desc(const void* a, const void* b) noexcept nogil:
    cdef double x = (<const double*>a)[0]
    cdef double y = (<const double*>b)[0]
    if x > y:
        return -1
    if x < y:
        return 1
    return 0


cdef void _sub_problem(double A_i, int64_t yi, double C_yi, int64_t active_i, const double* B, double* D,
                       double* alpha_new) noexcept nogil:
    """The k-variable subproblem of row i, solved exactly (LIBLINEAR's solve_sub_problem)."""
    cdef int64_t m, rr
    cdef double beta
    for m in range(active_i):
        D[m] = B[m]
    if yi < active_i:
        D[yi] += A_i * C_yi
    qsort(D, active_i, sizeof(double), _cmp_desc)
    beta = D[0] - A_i * C_yi
    rr = 1
    while rr < active_i and beta < rr * D[rr]:
        beta += D[rr]
        rr += 1
    beta /= rr
    for m in range(active_i):
        if m == yi:
            alpha_new[m] = C_yi if C_yi < (beta - B[m]) / A_i else (beta - B[m]) / A_i
        else:
            alpha_new[m] = 0.0 if 0.0 < (beta - B[m]) / A_i else (beta - B[m]) / A_i


cdef inline bint _be_shrunk(int64_t m, int64_t yi, double alpha_i, double minG, double Cyi,
                            const double* G) noexcept nogil:
    cdef double bound = Cyi if m == yi else 0.0
    return alpha_i == bound and G[m] < minG


cdef int64_t _mcsvm(const RowView* v, const int64_t* r, int64_t l, int64_t k, const int32_t* cls, const double* Cc,
                    double eps, int64_t max_iter, double* alpha, double* w, int64_t w_size, double* QD,
                    int32_t* index, int32_t* alpha_index, int32_t* y_index, int32_t* active_size_i, double* G,
                    double* B, double* D, double* alpha_new, int32_t* d_ind, double* d_val, Rng* g, char* ev,
                    int64_t* n_ev, int64_t cap, value_t* kind) noexcept nogil:
    cdef int64_t i, m, s, it = 0, active_size = l, row, p, nz_d, f
    cdef double eps_shrink = 10.0 * eps if 10.0 * eps > 1.0 else 1.0
    cdef bint start_from_all = True
    cdef double stopping, Ai, minG, maxG, Cyi, d, x
    cdef double* alpha_i
    cdef int32_t* ai_idx
    cdef double* w_i
    cdef const int32_t* ix
    cdef const value_t* xv
    cdef int32_t t
    cdef double tg
    cdef double bias = v.bias
    cdef int64_t nf = v.n_features
    for i in range(l * k):
        alpha[i] = 0.0
    for i in range(w_size * k):
        w[i] = 0.0
    for i in range(l):
        for m in range(k):
            alpha_index[i * k + m] = <int32_t>m
        QD[i] = row_sq_norm(v, _row(r, i), kind)
        active_size_i[i] = <int32_t>k
        y_index[i] = cls[i]
        index[i] = <int32_t>i
    while it < max_iter:
        if stop_requested():            # once a pass over the active rows (cext/_stop.pyx; the wrapper raises)
            break
        stopping = -INFINITY
        _shuffle(g, index, active_size)
        s = 0
        while s < active_size:
            i = index[s]
            Ai = QD[i]
            alpha_i = &alpha[i * k]
            ai_idx = &alpha_index[i * k]
            Cyi = row_cost(v, _row(r, i), Cc[cls[i]])      # C_{y_i}, times the row's weight with weights
            if Ai > 0:
                row = _row(r, i)
                for m in range(active_size_i[i]):
                    G[m] = 1.0
                if y_index[i] < active_size_i[i]:
                    G[y_index[i]] = 0.0
                ix = row_indices(v, row)
                xv = row_values(v, row, kind)
                for p in range(v.indptr[row], v.indptr[row + 1]):
                    w_i = &w[<int64_t>ix[p] * k]
                    x = xv[p]
                    for m in range(active_size_i[i]):
                        G[m] += w_i[ai_idx[m]] * x
                if bias >= 0:
                    w_i = &w[nf * k]
                    for m in range(active_size_i[i]):
                        G[m] += w_i[ai_idx[m]] * bias
                minG = INFINITY
                maxG = -INFINITY
                for m in range(active_size_i[i]):
                    if alpha_i[ai_idx[m]] < 0 and G[m] < minG:
                        minG = G[m]
                    if G[m] > maxG:
                        maxG = G[m]
                if y_index[i] < active_size_i[i]:
                    if alpha_i[cls[i]] < Cyi and G[y_index[i]] < minG:
                        minG = G[y_index[i]]
                m = 0
                while m < active_size_i[i]:
                    if _be_shrunk(m, y_index[i], alpha_i[ai_idx[m]], minG, Cyi, G):
                        active_size_i[i] -= 1
                        while active_size_i[i] > m:
                            if not _be_shrunk(active_size_i[i], y_index[i], alpha_i[ai_idx[active_size_i[i]]],
                                              minG, Cyi, G):
                                t = ai_idx[m]; ai_idx[m] = ai_idx[active_size_i[i]]; ai_idx[active_size_i[i]] = t
                                tg = G[m]; G[m] = G[active_size_i[i]]; G[active_size_i[i]] = tg
                                if y_index[i] == active_size_i[i]:
                                    y_index[i] = <int32_t>m
                                elif y_index[i] == m:
                                    y_index[i] = active_size_i[i]
                                break
                            active_size_i[i] -= 1
                    m += 1
                if active_size_i[i] <= 1:
                    active_size -= 1
                    t = index[s]; index[s] = index[active_size]; index[active_size] = t
                    continue
                if maxG - minG <= 1e-12:
                    s += 1
                    continue
                if maxG - minG > stopping:
                    stopping = maxG - minG
                for m in range(active_size_i[i]):
                    B[m] = G[m] - Ai * alpha_i[ai_idx[m]]
                _sub_problem(Ai, y_index[i], Cyi, active_size_i[i], B, D, alpha_new)
                nz_d = 0
                for m in range(active_size_i[i]):
                    d = alpha_new[m] - alpha_i[ai_idx[m]]
                    alpha_i[ai_idx[m]] = alpha_new[m]
                    if fabs(d) >= 1e-12:
                        d_ind[nz_d] = ai_idx[m]
                        d_val[nz_d] = d
                        nz_d += 1
                for p in range(v.indptr[row], v.indptr[row + 1]):
                    w_i = &w[<int64_t>ix[p] * k]
                    x = xv[p]
                    for m in range(nz_d):
                        w_i[d_ind[m]] += d_val[m] * x
                if bias >= 0:
                    w_i = &w[nf * k]
                    for m in range(nz_d):
                        w_i[d_ind[m]] += d_val[m] * bias
            s += 1
        it += 1
        if it % 10 == 0:
            _event(ev, n_ev, cap, c'.')
        if stopping < eps_shrink:
            if stopping < eps and start_from_all:
                break
            active_size = l
            for i in range(l):
                active_size_i[i] = <int32_t>k
            _event(ev, n_ev, cap, c'*')
            eps_shrink = eps_shrink / 2 if eps_shrink / 2 > eps else eps
            start_from_all = True
        else:
            start_from_all = False
    return it


def mcsvm_cs(Rows X not None, const int64_t[::1] rows, const int32_t[::1] cls, const double[::1] C_class,
             double eps, int64_t max_iter, double[::1] alpha, double[::1] w, uint64_t[::1] rng, signed char[::1] events):
    """-s 4 from alpha = 0: cls (class index of every row, 0..k-1), C_class (C of each class); alpha (l k) and
    w (w_size k, w[feature * k + m]) receive the solution. Returns (iterations, event characters written)."""
    cdef int64_t l = cls.shape[0], k = C_class.shape[0], n_ev = 0, it, i
    cdef int64_t w_size = X.v.n_features + (1 if X.v.bias >= 0 else 0)
    if k < 1:
        raise ValueError("-s 4 needs a class")
    _check(X, l, rows, w.shape[0], k, rng)
    if alpha.shape[0] != l * k:
        raise ValueError("alpha must have l * nr_class entries")
    for i in range(l):
        if cls[i] < 0 or cls[i] >= k:
            raise ValueError("a class index is out of range")
    QD = np.empty(l, np.float64)
    index = np.empty(l, np.int32)
    alpha_index = np.empty(l * k, np.int32)
    y_index = np.empty(l, np.int32)
    active_i = np.empty(l, np.int32)
    work = np.empty(5 * k, np.float64)
    d_ind = np.empty(k, np.int32)
    cdef double[::1] qd = QD
    cdef int32_t[::1] ix = index
    cdef int32_t[::1] ai = alpha_index
    cdef int32_t[::1] yi = y_index
    cdef int32_t[::1] asi = active_i
    cdef double[::1] wk = work
    cdef int32_t[::1] di = d_ind
    cdef const int64_t* r = _rows_ptr(rows)
    cdef int64_t cap = events.shape[0]
    cdef char* ev = <char*>&events[0] if cap else NULL
    with nogil:
        if X.f32:
            it = _mcsvm(&X.v, r, l, k, &cls[0], &C_class[0], eps, max_iter, &alpha[0], &w[0], w_size, &qd[0], &ix[0],
                        &ai[0], &yi[0], &asi[0], &wk[0], &wk[k], &wk[2 * k], &wk[3 * k], &di[0], &wk[4 * k],
                        <Rng*>&rng[0], ev, &n_ev, cap, <float*>NULL)
        else:
            it = _mcsvm(&X.v, r, l, k, &cls[0], &C_class[0], eps, max_iter, &alpha[0], &w[0], w_size, &qd[0], &ix[0],
                        &ai[0], &yi[0], &asi[0], &wk[0], &wk[k], &wk[2 * k], &wk[3 * k], &di[0], &wk[4 * k],
                        <Rng*>&rng[0], ev, &n_ev, cap, <double*>NULL)
    check_stop()
    return it, n_ev
