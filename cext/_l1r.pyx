# Kernels of LIBLINEAR 2.50's L1-regularized solvers, over the problem's columns (CSC: col_ptr, col_row, col_val,
# the bias column included when there is one; llsvm/solvers/l1r.py builds them from the row view). Both run their
# whole loop without the GIL; the driver owns the output, the objective and the certificate.
#
# 1. -s 5, L1-regularized L2-loss SVC by coordinate descent with shrinking (Yuan, Chang, Hsieh, Lin, "A comparison
#    of optimization methods and software for large-scale L1-regularized linear classification", JMLR 2010, the
#    CDN method; LIBLINEAR's solve_l1r_l2_svc):
#        min_w |w|_1 + sum_i C_i max(0, 1 - y_i w.x_i)^2   (with regularize_bias off, the bias is not in |w|_1),
#    C_i = Cp or Cn by y_i (ClassCost: a 3-entry table), or one per row with weights (RowCost: C_i = class C x W_i,
#    docs/weights.md), the two compiled apart (cost_t), so that the unweighted loop is the one it was.
#    b_i = 1 - y_i w.x_i is kept. Update of feature j: the Newton direction of the one-variable model (G, H from the
#    rows with b_i > 0), then a line search (sigma 0.01, at most 20 halvings, first tried on the upper bound
#    xj_sq d^2 + G d + ...) on the exact objective. Shrinking of zero weights inside +-1 by last iteration's
#    violation / l; stop when the 1-norm of the violations <= eps times the first iteration's, over all features.
# 2. -s 6, L1-regularized logistic regression by newGLMNET (Yuan, Ho, Lin, "An improved GLMNET for L1-regularized
#    logistic regression", JMLR 2012; LIBLINEAR's solve_l1r_lr):
#        min_w |w|_1 + sum_i C_i log(1 + exp(-y_i w.x_i)).
#    Each Newton iteration builds the gradient and diagonal Hessian, shrinks (outer level), solves the quadratic
#    model with |.|_1 by coordinate descent (inner shrinking, at most 1000 cycles, inner tolerance inner_eps x the
#    first outer violation, inner_eps /= 4 after a one-cycle solve) and takes a line search on the direction
#    (sigma 0.01, at most 20 halvings). Stop when the outer violation's 1-norm <= eps times the first one's, or
#    after 100 Newton iterations. `cycles` receives the CD cycles of each Newton iteration (LIBLINEAR prints them).
# Features are visited in a random order from the project's RNG (rng.pxd) where LIBLINEAR calls rand().
cimport cython
from libc.math cimport fabs, exp, log, INFINITY, NAN
from libc.stdint cimport int32_t, int64_t, uint64_t

import numpy as np

from kernel_util cimport put_char as _event
from rng cimport Rng, rng_shuffle as _shuffle
from llsvm._ext._stop cimport stop_requested, check_stop


cdef int _check(const int64_t[::1] col_ptr, const int32_t[::1] col_row, const double[::1] col_val, int64_t l,
                int64_t w_len, uint64_t[::1] rng) except -1:
    cdef int64_t n = col_ptr.shape[0] - 1, k
    if n < 0 or w_len != n:              # n = 0: no feature and no bias (w empty, as LIBLINEAR allows)
        raise ValueError("w must have one entry per column (n_features + bias)")
    if l < 1 or l > 2147483647:
        raise ValueError("a problem needs 1 to 2^31 - 1 rows")
    if col_row.shape[0] < col_ptr[n] or col_val.shape[0] < col_ptr[n]:
        raise ValueError("col_row / col_val are shorter than col_ptr says")
    for k in range(col_ptr[n]):
        if col_row[k] < 0 or col_row[k] >= l:
            raise ValueError("a column's row index is out of range")
    if rng.shape[0] != 4:
        raise ValueError("rng must be an RNG state of 4 words")
    return 0


# -- 1. -s 5 ------------------------------------------------------------------------------------------------------
cdef struct ClassCost:
    const double* C3            # C of a row by its label: C3[y_i + 1]
    const signed char* y


cdef struct RowCost:
    const double* C             # C_i of every row (weighted rows)


ctypedef fused cost_t:
    ClassCost
    RowCost


cdef inline double _cost(const cost_t* c, int64_t i) noexcept nogil:
    """C_i of row i (LIBLINEAR's C[GETI(i)])."""
    if cost_t is ClassCost:
        return c.C3[c.y[i] + 1]
    else:
        return c.C[i]


cdef int64_t _l1r_l2svc(const int64_t* cp, const int32_t* cr, double* cv, int64_t l, int64_t w_size,
                        const signed char* y, const cost_t* cost, bint regularize_bias, double eps, int64_t max_iter,
                        double* w, double* b, double* xj_sq, int32_t* index, Rng* g, char* ev, int64_t* n_ev,
                        int64_t cap) noexcept nogil:
    cdef int64_t j, s, it = 0, active_size = w_size, k, i, num_ls
    cdef int max_num_linesearch = 20
    cdef double sigma = 0.01
    cdef double Gmax_old = INFINITY, Gmax_new, Gnorm1_new, Gnorm1_init = -1.0
    cdef double G_loss, G, H, violation, Gp, Gn, d, delta, d_old, d_diff, cond, appxcond
    cdef double loss_old = 0.0, loss_new, val, tmp, b_new, bi, pos
    cdef int64_t npos
    cdef bint free_j, mixed
    cdef int32_t t
    # C of a row: _cost(cost, i), by its label from a 3-entry table (no gather from an l-array) without weights
    for i in range(l):
        b[i] = 1.0
    for j in range(w_size):
        w[j] = 0.0
        index[j] = <int32_t>j
        xj_sq[j] = 0.0
        for k in range(cp[j], cp[j + 1]):
            i = cr[k]
            cv[k] *= y[i]                      # the column holds y_i x_ij from here on
            val = cv[k]
            xj_sq[j] += _cost(cost, i) * val * val
    while it < max_iter:
        if stop_requested():            # once a pass over the active features (cext/_stop.pyx)
            break
        Gmax_new = 0.0
        Gnorm1_new = 0.0
        _shuffle(g, index, active_size)
        npos = 0
        for i in range(l):
            if b[i] > 0:
                npos += 1
        mixed = 5 * npos > l and 5 * npos < 4 * l          # between a fifth and four fifths of the rows
        s = 0
        while s < active_size:
            j = index[s]
            free_j = j == w_size - 1 and not regularize_bias
            G_loss = 0.0
            H = 0.0
            if mixed:
                # the rows with b_i > 0 without a branch: when a fair share of the rows pass, a mispredicted branch
                # per non-zero cost twice the whole sweep (measured); adding +-0 leaves the sums as they were
                for k in range(cp[j], cp[j + 1]):
                    i = cr[k]
                    bi = b[i]
                    pos = <double>(bi > 0)
                    tmp = _cost(cost, i) * cv[k] * pos
                    G_loss -= tmp * bi
                    H += tmp * cv[k]
            else:
                # few rows (or nearly all) pass: the branch is predicted and skipping the others is cheaper
                for k in range(cp[j], cp[j + 1]):
                    i = cr[k]
                    if b[i] > 0:
                        val = cv[k]
                        tmp = _cost(cost, i) * val
                        G_loss -= tmp * b[i]
                        H += tmp * val
            G_loss *= 2
            G = G_loss
            H *= 2
            if H < 1e-12:
                H = 1e-12
            violation = 0.0
            Gp = 0.0
            Gn = 0.0
            if free_j:
                violation = fabs(G)
            else:
                Gp = G + 1
                Gn = G - 1
                if w[j] == 0:
                    if Gp < 0:
                        violation = -Gp
                    elif Gn > 0:
                        violation = Gn
                    elif Gp > Gmax_old / l and Gn < -Gmax_old / l:
                        active_size -= 1
                        t = index[s]; index[s] = index[active_size]; index[active_size] = t
                        continue
                elif w[j] > 0:
                    violation = fabs(Gp)
                else:
                    violation = fabs(Gn)
            if violation > Gmax_new:
                Gmax_new = violation
            Gnorm1_new += violation
            if free_j:
                d = -G / H
            elif Gp < H * w[j]:
                d = -Gp / H
            elif Gn > H * w[j]:
                d = -Gn / H
            else:
                d = -w[j]
            s += 1
            if fabs(d) < 1.0e-12:
                continue
            if free_j:
                delta = G * d
            else:
                delta = fabs(w[j] + d) - fabs(w[j]) + G * d
            d_old = 0.0
            num_ls = 0
            while num_ls < max_num_linesearch:
                d_diff = d_old - d
                if free_j:
                    cond = -sigma * delta
                else:
                    cond = fabs(w[j] + d) - fabs(w[j]) - sigma * delta
                appxcond = xj_sq[j] * d * d + G_loss * d + cond
                if appxcond <= 0:
                    for k in range(cp[j], cp[j + 1]):
                        b[cr[k]] += d_diff * cv[k]
                    break
                if num_ls == 0:
                    loss_old = 0.0
                    loss_new = 0.0
                    for k in range(cp[j], cp[j + 1]):
                        i = cr[k]
                        if b[i] > 0:
                            loss_old += _cost(cost, i) * b[i] * b[i]
                        b_new = b[i] + d_diff * cv[k]
                        b[i] = b_new
                        if b_new > 0:
                            loss_new += _cost(cost, i) * b_new * b_new
                else:
                    loss_new = 0.0
                    for k in range(cp[j], cp[j + 1]):
                        i = cr[k]
                        b_new = b[i] + d_diff * cv[k]
                        b[i] = b_new
                        if b_new > 0:
                            loss_new += _cost(cost, i) * b_new * b_new
                cond = cond + loss_new - loss_old
                if cond <= 0:
                    break
                d_old = d
                d *= 0.5
                delta *= 0.5
                num_ls += 1
            w[j] += d
            if num_ls >= max_num_linesearch:
                _event(ev, n_ev, cap, c'#')
                for i in range(l):
                    b[i] = 1.0
                for i in range(w_size):
                    if w[i] == 0:
                        continue
                    for k in range(cp[i], cp[i + 1]):
                        b[cr[k]] -= w[i] * cv[k]
        if it == 0:
            Gnorm1_init = Gnorm1_new
        it += 1
        if it % 10 == 0:
            _event(ev, n_ev, cap, c'.')
        if Gnorm1_new <= eps * Gnorm1_init:
            if active_size == w_size:
                break
            active_size = w_size
            _event(ev, n_ev, cap, c'*')
            Gmax_old = INFINITY
            continue
        Gmax_old = Gmax_new
    return it


def l1r_l2svc(const int64_t[::1] col_ptr, const int32_t[::1] col_row, double[::1] col_val,
              const signed char[::1] y, double Cp, double Cn, bint regularize_bias, double eps, int64_t max_iter,
              double[::1] w, uint64_t[::1] rng, signed char[::1] events, const double[::1] C=None):
    """-s 5 from w = 0, C_i = Cp for y_i = +1, Cn for y_i = -1, or C[i] when C (one per row: weighted rows) is given.
    col_val is overwritten (by y_i x_ij). w receives the solution; returns (iterations, event characters written,
    b = 1 - y_i w.x_i)."""
    cdef int64_t l = y.shape[0], w_size = w.shape[0], n_ev = 0, it, i
    cdef double C3[3]
    cdef ClassCost by_class
    cdef RowCost by_row
    _check(col_ptr, col_row, col_val, l, w_size, rng)
    if C is not None and C.shape[0] != l:
        raise ValueError("C must have one entry per row")
    for i in range(l):
        if y[i] != 1 and y[i] != -1:
            raise ValueError("labels must be +1 or -1")
    C3[0] = Cn
    C3[1] = 0.0
    C3[2] = Cp
    b = np.empty(l, np.float64)
    xj_sq = np.empty(w_size, np.float64)
    index = np.empty(w_size, np.int32)
    cdef double[::1] bb = b
    cdef double[::1] xs = xj_sq
    cdef int32_t[::1] ix = index
    cdef int64_t cap = events.shape[0]
    cdef char* ev = <char*>&events[0] if cap else NULL
    by_class.C3 = C3
    by_class.y = &y[0]
    by_row.C = &C[0] if C is not None else NULL
    with nogil:
        if by_row.C == NULL:
            it = _l1r_l2svc(&col_ptr[0], &col_row[0] if col_row.shape[0] else NULL,
                            &col_val[0] if col_val.shape[0] else NULL, l, w_size, &y[0], &by_class, regularize_bias,
                            eps, max_iter, &w[0], &bb[0], &xs[0], &ix[0], <Rng*>&rng[0], ev, &n_ev, cap)
        else:
            it = _l1r_l2svc(&col_ptr[0], &col_row[0] if col_row.shape[0] else NULL,
                            &col_val[0] if col_val.shape[0] else NULL, l, w_size, &y[0], &by_row, regularize_bias,
                            eps, max_iter, &w[0], &bb[0], &xs[0], &ix[0], <Rng*>&rng[0], ev, &n_ev, cap)
    check_stop()
    return it, n_ev, b


# -- 2. -s 6 ------------------------------------------------------------------------------------------------------
cdef int64_t _l1r_lr(const int64_t* cp, const int32_t* cr, const double* cv, int64_t l, int64_t w_size,
                     const signed char* y, const double* C, bint regularize_bias, double eps, int64_t max_newton_iter,
                     double* w, double* Hdiag, double* Grad, double* wpd, double* xjneg_sum, double* xTd,
                     double* exp_wTx, double* exp_wTx_new, double* tau, double* D, int32_t* index, Rng* g,
                     int32_t* cycles, int32_t* inner_limit, double* final_violation) noexcept nogil:
    cdef int64_t j, s, k, i, newton_iter = 0, it = 0, num_ls, active_size, QP_active_size
    cdef int64_t max_iter = 1000
    cdef int max_num_linesearch = 20
    cdef double nu = 1e-12, inner_eps = 1.0, sigma = 0.01
    cdef double w_norm, w_norm_new, z, G, H, Gnorm1_init = -1.0, Gmax_old = INFINITY, Gmax_new, Gnorm1_new
    cdef double QP_Gmax_old, QP_Gmax_new, QP_Gnorm1_new, delta, negsum_xTd, cond, tmp, violation, Gp, Gn
    cdef double tau_tmp, exp_xTd, val
    cdef bint free_j
    cdef int32_t t
    for i in range(l):
        exp_wTx[i] = 0.0
    w_norm = 0.0
    for j in range(w_size):
        w[j] = 0.0
        wpd[j] = 0.0
        index[j] = <int32_t>j
        xjneg_sum[j] = 0.0
        for k in range(cp[j], cp[j + 1]):
            i = cr[k]
            if y[i] == -1:
                xjneg_sum[j] += C[i] * cv[k]
    for i in range(l):
        exp_wTx[i] = exp(exp_wTx[i])
        tau_tmp = 1 / (1 + exp_wTx[i])
        tau[i] = C[i] * tau_tmp
        D[i] = C[i] * exp_wTx[i] * tau_tmp * tau_tmp
    while newton_iter < max_newton_iter:
        if stop_requested():            # once a pass over the active features (cext/_stop.pyx)
            break
        Gmax_new = 0.0
        Gnorm1_new = 0.0
        active_size = w_size
        s = 0
        while s < active_size:
            j = index[s]
            Hdiag[j] = nu
            tmp = 0.0
            for k in range(cp[j], cp[j + 1]):
                i = cr[k]
                val = cv[k]
                Hdiag[j] += val * val * D[i]
                tmp += val * tau[i]
            Grad[j] = -tmp + xjneg_sum[j]
            violation = 0.0
            if j == w_size - 1 and not regularize_bias:
                violation = fabs(Grad[j])
            else:
                Gp = Grad[j] + 1
                Gn = Grad[j] - 1
                if w[j] == 0:
                    if Gp < 0:
                        violation = -Gp
                    elif Gn > 0:
                        violation = Gn
                    elif Gp > Gmax_old / l and Gn < -Gmax_old / l:
                        active_size -= 1
                        t = index[s]; index[s] = index[active_size]; index[active_size] = t
                        continue
                elif w[j] > 0:
                    violation = fabs(Gp)
                else:
                    violation = fabs(Gn)
            if violation > Gmax_new:
                Gmax_new = violation
            Gnorm1_new += violation
            s += 1
        if newton_iter == 0:
            Gnorm1_init = Gnorm1_new
        if Gnorm1_new <= eps * Gnorm1_init:
            final_violation[0] = Gmax_new     # over every feature, at the w returned
            break
        it = 0
        QP_Gmax_old = INFINITY
        QP_active_size = active_size
        for i in range(l):
            xTd[i] = 0.0
        while it < max_iter:
            if stop_requested():            # once a pass over the active features (cext/_stop.pyx)
                break
            QP_Gmax_new = 0.0
            QP_Gnorm1_new = 0.0
            _shuffle(g, index, QP_active_size)
            s = 0
            while s < QP_active_size:
                j = index[s]
                H = Hdiag[j]
                G = Grad[j] + (wpd[j] - w[j]) * nu
                for k in range(cp[j], cp[j + 1]):
                    i = cr[k]
                    G += cv[k] * D[i] * xTd[i]
                violation = 0.0
                free_j = j == w_size - 1 and not regularize_bias
                if free_j:
                    violation = fabs(G)
                    z = -G / H
                else:
                    Gp = G + 1
                    Gn = G - 1
                    if wpd[j] == 0:
                        if Gp < 0:
                            violation = -Gp
                        elif Gn > 0:
                            violation = Gn
                        elif Gp > QP_Gmax_old / l and Gn < -QP_Gmax_old / l:
                            QP_active_size -= 1
                            t = index[s]; index[s] = index[QP_active_size]; index[QP_active_size] = t
                            continue
                    elif wpd[j] > 0:
                        violation = fabs(Gp)
                    else:
                        violation = fabs(Gn)
                    if Gp < H * wpd[j]:
                        z = -Gp / H
                    elif Gn > H * wpd[j]:
                        z = -Gn / H
                    else:
                        z = -wpd[j]
                if violation > QP_Gmax_new:
                    QP_Gmax_new = violation
                QP_Gnorm1_new += violation
                s += 1
                if fabs(z) < 1.0e-12:
                    continue
                if z < -10.0:
                    z = -10.0
                if z > 10.0:
                    z = 10.0
                wpd[j] += z
                for k in range(cp[j], cp[j + 1]):
                    xTd[cr[k]] += z * cv[k]
            it += 1
            if QP_Gnorm1_new <= inner_eps * Gnorm1_init:
                if QP_active_size == active_size:
                    break
                QP_active_size = active_size
                QP_Gmax_old = INFINITY
                continue
            QP_Gmax_old = QP_Gmax_new
        inner_limit[newton_iter] = 1 if it >= max_iter else 0
        delta = 0.0
        w_norm_new = 0.0
        for j in range(w_size):
            delta += Grad[j] * (wpd[j] - w[j])
            if wpd[j] != 0:
                w_norm_new += fabs(wpd[j])
        if not regularize_bias:
            w_norm_new -= fabs(wpd[w_size - 1])
        delta += w_norm_new - w_norm
        negsum_xTd = 0.0
        for i in range(l):
            if y[i] == -1:
                negsum_xTd += C[i] * xTd[i]
        num_ls = 0
        while num_ls < max_num_linesearch:
            cond = w_norm_new - w_norm + negsum_xTd - sigma * delta
            for i in range(l):
                exp_xTd = exp(xTd[i])
                exp_wTx_new[i] = exp_wTx[i] * exp_xTd
                cond += C[i] * log((1 + exp_wTx_new[i]) / (exp_xTd + exp_wTx_new[i]))
            if cond <= 0:
                w_norm = w_norm_new
                for j in range(w_size):
                    w[j] = wpd[j]
                for i in range(l):
                    exp_wTx[i] = exp_wTx_new[i]
                    tau_tmp = 1 / (1 + exp_wTx[i])
                    tau[i] = C[i] * tau_tmp
                    D[i] = C[i] * exp_wTx[i] * tau_tmp * tau_tmp
                break
            w_norm_new = 0.0
            for j in range(w_size):
                wpd[j] = (w[j] + wpd[j]) * 0.5
                if wpd[j] != 0:
                    w_norm_new += fabs(wpd[j])
            if not regularize_bias:
                w_norm_new -= fabs(wpd[w_size - 1])
            delta *= 0.5
            negsum_xTd *= 0.5
            for i in range(l):
                xTd[i] *= 0.5
            num_ls += 1
        if num_ls >= max_num_linesearch:
            for i in range(l):
                exp_wTx[i] = 0.0
            for j in range(w_size):
                if w[j] == 0:
                    continue
                for k in range(cp[j], cp[j + 1]):
                    exp_wTx[cr[k]] += w[j] * cv[k]
            for i in range(l):
                exp_wTx[i] = exp(exp_wTx[i])
        if it == 1:
            inner_eps *= 0.25
        cycles[newton_iter] = <int32_t>it
        newton_iter += 1
        Gmax_old = Gmax_new
    return newton_iter


def l1r_lr(const int64_t[::1] col_ptr, const int32_t[::1] col_row, const double[::1] col_val,
           const signed char[::1] y, const double[::1] C, bint regularize_bias, double eps, int64_t max_newton_iter,
           double[::1] w, uint64_t[::1] rng):
    """-s 6 from w = 0; w receives the solution. Returns (Newton iterations, CD cycles of each, whether each hit
    the inner limit, exp(w.x_i) of every row, the largest minimum-norm-subgradient violation at w over every
    feature when the stopping rule ended the run (NaN when the iteration limit did))."""
    cdef int64_t l = y.shape[0], w_size = w.shape[0], it
    _check(col_ptr, col_row, col_val, l, w_size, rng)
    if C.shape[0] != l:
        raise ValueError("C must have l entries")
    if max_newton_iter < 1:
        raise ValueError("max_newton_iter must be >= 1")
    nw = np.empty((4, w_size), np.float64)
    nl = np.empty((6, l), np.float64)
    index = np.empty(w_size, np.int32)
    cycles = np.zeros(max_newton_iter, np.int32)
    inner = np.zeros(max_newton_iter, np.int32)
    cdef double[:, ::1] a = nw
    cdef double[:, ::1] b = nl
    cdef int32_t[::1] ix = index
    cdef int32_t[::1] cy = cycles
    cdef int32_t[::1] il = inner
    cdef double final_violation = NAN
    with nogil:
        it = _l1r_lr(&col_ptr[0], &col_row[0] if col_row.shape[0] else NULL,
                     &col_val[0] if col_val.shape[0] else NULL, l, w_size, &y[0], &C[0], regularize_bias, eps,
                     max_newton_iter, &w[0], &a[0, 0], &a[1, 0], &a[2, 0], &a[3, 0], &b[0, 0], &b[1, 0], &b[2, 0],
                     &b[3, 0], &b[4, 0], &ix[0], <Rng*>&rng[0], &cy[0], &il[0], &final_violation)
    check_stop()
    return it, cycles[:it].copy(), inner[:it].copy(), nl[1].copy(), final_violation


# -- the certificate's two products over the columns ---------------------------------------------------------------
def col_xv(const int64_t[::1] col_ptr, const int32_t[::1] col_row, const double[::1] col_val, const double[::1] w,
           double[::1] out):
    """out = X w (X given by its columns; out zeroed first)."""
    cdef int64_t n = col_ptr.shape[0] - 1, j, k
    if w.shape[0] != n:
        raise ValueError("w must have one entry per column")
    if col_row.shape[0] < col_ptr[n] or col_val.shape[0] < col_ptr[n]:
        raise ValueError("col_row / col_val are shorter than col_ptr says")
    for k in range(col_ptr[n]):
        if col_row[k] < 0 or col_row[k] >= out.shape[0]:
            raise ValueError("a column's row index is out of range")
    with nogil:
        for k in range(out.shape[0]):
            out[k] = 0.0
        for j in range(n):
            if w[j] != 0:
                for k in range(col_ptr[j], col_ptr[j + 1]):
                    out[col_row[k]] += w[j] * col_val[k]


def col_xtv(const int64_t[::1] col_ptr, const int32_t[::1] col_row, const double[::1] col_val, const double[::1] v,
            double[::1] out):
    """out = X^T v (X given by its columns)."""
    cdef int64_t n = col_ptr.shape[0] - 1, j, k
    cdef double s
    if out.shape[0] != n:
        raise ValueError("out must have one entry per column")
    if col_row.shape[0] < col_ptr[n] or col_val.shape[0] < col_ptr[n]:
        raise ValueError("col_row / col_val are shorter than col_ptr says")
    for k in range(col_ptr[n]):
        if col_row[k] < 0 or col_row[k] >= v.shape[0]:
            raise ValueError("a column's row index is out of range")
    with nogil:
        for j in range(n):
            s = 0.0
            for k in range(col_ptr[j], col_ptr[j + 1]):
                s += col_val[k] * v[col_row[k]]
            out[j] = s
