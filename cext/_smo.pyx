# The generic SMO of the kernel SVMs (issue 15): LIBSVM's Solver (Chang & Lin, "LIBSVM: a library for support
# vector machines", ACM TIST 2(3), 2011, section 4; Fan, Chen & Lin, "Working set selection using second order
# information for training SVM", JMLR 6, 2005, WSS 2). This first version has no shrinking (LIBSVM's -h 0).
#
# Problem:  min_a  f(a) = 1/2 a'Qa + p'a   subject to  y'a = Delta,  0 <= a_i <= C_i,   y_i in {-1, +1},
# Q_ij = y_i y_j K(x_i, x_j), from the kernel columns of cext/_kernel.pyx's KernelCache (float, as LIBSVM's
# Qfloat); QD_i = K_ii in double. The start a must be feasible; G = Qa + p is formed from it.
# Working pair: i = argmax {-y_t G_t : t in I_up}, I_up = {y_t = +1, a_t < C_t} u {y_t = -1, a_t > 0}; j = argmin of
# -b_t^2 / a_t over t in I_low = {y_t = +1, a_t > 0} u {y_t = -1, a_t < C_t} with b_t = -y_i G_i + y_t G_t > 0 and
# a_t = K_ii + K_tt - 2 K_it (TAU when not positive); ties to the later index, as LIBSVM's loops.
# Update: the pair's sub-problem solved exactly and clipped to the box (LIBSVM's cases for y_i != y_j and
# y_i == y_j); G moves by the two columns. Stop: m(a) - M(a) < eps (LIBSVM's Gmax + Gmax2 < eps) or no j, or after
# max_iter pairs. rho (the decision function's -b): the mean of y_t G_t over the free a_t, else the middle of its
# bounds. The NumPy twin is tests/reference/smo_twin.py; with the same kernel values the two agree bit for bit.
from libc.math cimport INFINITY
from libc.stdint cimport int64_t
from libc.stdlib cimport malloc, free

import numpy as np

from llsvm._ext._kernel cimport KernelCache

cdef double TAU = 1e-12


cdef inline bint _up(int y, double a, double C) noexcept nogil:
    return (y > 0 and a < C) or (y < 0 and a > 0.0)


cdef inline bint _low(int y, double a, double C) noexcept nogil:
    return (y > 0 and a > 0.0) or (y < 0 and a < C)


cdef int64_t _solve(KernelCache cache, int64_t l, const signed char* y, const double* QD, const double* C,
                    double* alpha, double* G, double eps, int64_t max_iter, double* gap_out) noexcept nogil:
    cdef int64_t it = 0, i, j, t
    cdef double Gmax, Gmax2, diff, quad, obj, best, delta, old_i, old_j, dai, daj, total, Qij
    cdef const float* Qi
    cdef const float* Qj
    cdef double Ci, Cj
    cdef int yi, yj
    gap_out[0] = INFINITY
    while it < max_iter:
        # i: the largest -y_t G_t over I_up
        Gmax = -INFINITY
        i = -1
        for t in range(l):
            if y[t] > 0:
                if alpha[t] < C[t] and -G[t] >= Gmax:
                    Gmax = -G[t]
                    i = t
            elif alpha[t] > 0.0 and G[t] >= Gmax:
                Gmax = G[t]
                i = t
        Gmax2 = -INFINITY
        j = -1
        best = INFINITY
        Qi = NULL
        if i >= 0:
            Qi = cache.get_column(i, l)
        for t in range(l):
            if y[t] > 0:
                if not alpha[t] > 0.0:
                    continue
                diff = Gmax + G[t]
                if G[t] >= Gmax2:
                    Gmax2 = G[t]
            else:
                if not alpha[t] < C[t]:
                    continue
                diff = Gmax - G[t]
                if -G[t] >= Gmax2:
                    Gmax2 = -G[t]
            if diff > 0.0 and i >= 0:
                # K_ii + K_tt - 2 K_it, with Q_it = y_i y_t K_it formed as LIBSVM does
                quad = QD[i] + QD[t] - 2.0 * y[t] * y[i] * <double>(<float>(y[i] * y[t]) * Qi[t])
                obj = -(diff * diff) / (quad if quad > 0.0 else TAU)
                if obj <= best:
                    best = obj
                    j = t
        gap_out[0] = Gmax + Gmax2
        if Gmax + Gmax2 < eps or j < 0:
            break
        it += 1
        Qj = cache.get_column(j, l)       # Qi stays valid: the cache holds at least two columns
        yi = y[i]
        yj = y[j]
        Ci = C[i]
        Cj = C[j]
        old_i = alpha[i]
        old_j = alpha[j]
        Qij = <double>(<float>(yi * yj) * Qi[j])
        if yi != yj:
            quad = QD[i] + QD[j] + 2.0 * Qij
            delta = (-G[i] - G[j]) / (quad if quad > 0.0 else TAU)
            diff = alpha[i] - alpha[j]
            alpha[i] += delta
            alpha[j] += delta
            if diff > 0.0:
                if alpha[j] < 0.0:
                    alpha[j] = 0.0
                    alpha[i] = diff
            elif alpha[i] < 0.0:
                alpha[i] = 0.0
                alpha[j] = -diff
            if diff > Ci - Cj:
                if alpha[i] > Ci:
                    alpha[i] = Ci
                    alpha[j] = Ci - diff
            elif alpha[j] > Cj:
                alpha[j] = Cj
                alpha[i] = Cj + diff
        else:
            quad = QD[i] + QD[j] - 2.0 * Qij
            delta = (G[i] - G[j]) / (quad if quad > 0.0 else TAU)
            total = alpha[i] + alpha[j]
            alpha[i] -= delta
            alpha[j] += delta
            if total > Ci:
                if alpha[i] > Ci:
                    alpha[i] = Ci
                    alpha[j] = total - Ci
            elif alpha[j] < 0.0:
                alpha[j] = 0.0
                alpha[i] = total
            if total > Cj:
                if alpha[j] > Cj:
                    alpha[j] = Cj
                    alpha[i] = total - Cj
            elif alpha[i] < 0.0:
                alpha[i] = 0.0
                alpha[j] = total
        dai = alpha[i] - old_i
        daj = alpha[j] - old_j
        for t in range(l):
            G[t] += <double>(<float>(yi * y[t]) * Qi[t]) * dai + <double>(<float>(yj * y[t]) * Qj[t]) * daj
    return it


cdef void _start_gradient(KernelCache cache, int64_t l, const signed char* y, const double* alpha,
                          const int64_t* nz, int64_t n_nz, double* G) noexcept nogil:
    """G += Q a for a start a (its non-zero entries nz): one kernel column each."""
    cdef int64_t k, t
    cdef const float* col
    for k in range(n_nz):
        col = cache.get_column(nz[k], l)
        for t in range(l):
            G[t] += <double>(<float>(y[nz[k]] * y[t]) * col[t]) * alpha[nz[k]]


cdef double _rho(int64_t l, const signed char* y, const double* C, const double* alpha, const double* G) noexcept nogil:
    cdef double ub = INFINITY, lb = -INFINITY, total = 0.0, yG
    cdef int64_t t, n_free = 0
    for t in range(l):
        yG = y[t] * G[t]
        if alpha[t] >= C[t]:
            if y[t] < 0:
                if yG < ub:
                    ub = yG
            elif yG > lb:
                lb = yG
        elif alpha[t] <= 0.0:
            if y[t] > 0:
                if yG < ub:
                    ub = yG
            elif yG > lb:
                lb = yG
        else:
            n_free += 1
            total += yG
    return total / n_free if n_free > 0 else 0.5 * (ub + lb)


def solve(KernelCache cache not None, const signed char[::1] y, const double[::1] p, double[::1] alpha,
          double Cp, double Cn, const double[::1] QD, double eps=1e-3, max_iter=None):
    """LIBSVM's Solver (no shrinking) on the cache's l-row problem: labels y (+1/-1), linear term p, box C_i = Cp
    or Cn, QD the kernel's diagonal (kernel_diag). alpha is the feasible start and receives the solution.

    Returns a dict: n_iter, rho, obj (f at the solution, LIBSVM's sum a_t (G_t + p_t) / 2), gap (m(a) - M(a) at
    the end), G (the final gradient) and converged (False when max_iter pairs were made first)."""
    cdef int64_t l = cache.l, n_iter
    if y.shape[0] != l or p.shape[0] != l or alpha.shape[0] != l or QD.shape[0] != l:
        raise ValueError(f"y, p, alpha and QD must have the cache's {l} entries")
    if not (Cp >= 0 and Cn >= 0):
        raise ValueError("C must be >= 0")
    yv = np.asarray(y)
    if not np.all((yv == 1) | (yv == -1)):
        raise ValueError("y must be +1 or -1")
    a0 = np.asarray(alpha)
    Cv = np.where(yv > 0, Cp, Cn)
    if np.any(a0 < 0) or np.any(a0 > Cv):
        raise ValueError("the start alpha is outside the box")
    cdef int64_t limit = max(10_000_000, 100 * l) if max_iter is None else int(max_iter)
    cdef double[::1] C = np.ascontiguousarray(Cv, dtype=np.float64)
    cdef double[::1] G = np.array(p, dtype=np.float64)
    cdef double gap = INFINITY
    cdef int64_t[::1] nz = np.flatnonzero(a0).astype(np.int64)
    if l == 0:
        return {"n_iter": 0, "rho": 0.0, "obj": 0.0, "gap": 0.0, "G": np.asarray(G), "converged": True}
    with nogil:
        _start_gradient(cache, l, &y[0], &alpha[0], &nz[0] if nz.shape[0] else NULL, nz.shape[0], &G[0])
        n_iter = _solve(cache, l, &y[0], &QD[0], &C[0], &alpha[0], &G[0], eps, limit, &gap)
        rho = _rho(l, &y[0], &C[0], &alpha[0], &G[0])
    Gn = np.asarray(G)
    obj = 0.5 * float(np.asarray(alpha) @ (Gn + np.asarray(p)))
    return {"n_iter": int(n_iter), "rho": float(rho), "obj": obj, "gap": float(gap), "G": Gn,
            "converged": bool(gap < eps or n_iter < limit)}
