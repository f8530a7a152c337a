# The generic SMO of the kernel SVMs (issue 15): LIBSVM 3.x's Solver (Chang & Lin, "LIBSVM: a library for support
# vector machines", ACM TIST 2(3), 2011, sections 4 and 5.1; Fan, Chen & Lin, "Working set selection using second
# order information for training SVM", JMLR 6, 2005, WSS 2), with or without shrinking (LIBSVM's -h 1 / -h 0).
#
# Problem:  min_a  f(a) = 1/2 a'Qa + p'a   subject to  y'a = Delta,  0 <= a_i <= C_i,   y_i in {-1, +1},
# Q_ij = y_i y_j K(x_i, x_j), from the kernel columns of cext/_kernel.pyx's KernelCache (float, as LIBSVM's
# Qfloat); QD_i = K_ii in double. The start a must be feasible; G = Qa + p is formed from it.
# Working pair: i = argmax {-y_t G_t : t in I_up}, I_up = {y_t = +1, a_t < C_t} u {y_t = -1, a_t > 0}; j = argmin of
# -b_t^2 / a_t over t in I_low = {y_t = +1, a_t > 0} u {y_t = -1, a_t < C_t} with b_t = -y_i G_i + y_t G_t > 0 and
# a_t = K_ii + K_tt - 2 K_it (TAU when not positive); ties to the later position, as LIBSVM's loops.
# Update: the pair's sub-problem solved exactly and clipped to the box (LIBSVM's cases for y_i != y_j and
# y_i == y_j); G moves by the two columns. Stop: m(a) - M(a) < eps (LIBSVM's Gmax + Gmax2 < eps) or no j, or after
# max_iter pairs. rho (the decision function's -b): the mean of y_t G_t over the free a_t, else the middle of its
# bounds.
# Shrinking (Chang & Lin 2011, section 5.1): the variables live at positions (LIBSVM's swap_index exchanges two
# positions in y, p, alpha, its status, G, G_bar, QD, active_set and the cache's order), and only the first
# active_size positions are selected from, updated in G and checked by the stopping rule. Every min(l, 1000)
# iterations do_shrinking takes m = max {-y_t G_t : I_up} and M' = max {y_t G_t : I_low} over the active set and
# moves behind active_size each bounded variable that could not be selected (at the upper bound: -G_t > m for
# y = +1, -G_t > M' for y = -1; at the lower bound: G_t > M' for y = +1, G_t > m for y = -1); the first time
# m + M' <= 10 eps it first brings every variable back (unshrink, once). G of the shrunk positions is rebuilt from
# G_bar_k = sum {C_t Q_kt : a_t at its upper bound} (kept up to date with a full column whenever a variable
# reaches or leaves its upper bound) plus p_k plus the free a_t's terms (reconstruct_gradient). When the active
# set meets the stopping rule, G is rebuilt, active_size = l and the rule is checked over every variable: the
# solver stops, or goes on and shrinks at the next iteration. After max_iter pairs, G is rebuilt too. rho is
# summed by position, as LIBSVM's; alpha and G are given back by the caller's order, and the cache is put back in
# the order it came in. G_bar is kept only with shrinking (only reconstruct_gradient reads it): without, the loop is
# LIBSVM's -h 0 one, column for column. The NumPy twin is tests/reference/smo_twin.py (Shrinking for -h 1); with
# the same kernel values and the same order of rows the two agree bit for bit. With shrinking the order of the rows
# matters beyond ties (the rebuilt G is summed by position and its last bits can change the path): to follow
# libsvm-official's own run, give the rows in its order (svm_train groups them by class, the first class first).
# Progress, as LIBSVM's Solver prints it (the driver prints the events in order): '.' every min(l, 1000)
# iterations (after do_shrinking), '*' at each rebuild of the whole gradient (the unshrink, a stopping check over
# every variable, the end after max_iter pairs with variables shrunk), 'W' for reconstruct_gradient's "using -h 0
# may be faster" (fewer than half the active variables free).
from libc.math cimport INFINITY
from libc.stdint cimport int64_t
from libc.stdlib cimport malloc, free, realloc

import numpy as np

from llsvm._ext._kernel cimport KernelCache
from llsvm._ext._stop cimport stop_requested, check_stop
from smo_step cimport same_label_step

cdef double TAU = 1e-12

cdef enum:
    LOWER_BOUND = 0
    UPPER_BOUND = 1
    FREE = 2


cdef struct Work:
    # the solver's arrays by position (active_set[k]: the caller's index at position k)
    int64_t l
    int64_t active_size
    signed char* y
    double* yd              # y as +1.0 / -1.0 (the loops multiply by it instead of branching)
    double* p
    double* alpha
    double* G
    double* G_bar
    double* QD
    char* status
    int64_t* active_set
    double Cp
    double Cn
    double eps
    bint unshrink
    bint nu                 # LIBSVM's Solver_NU (nu-SVC, nu-SVR): the pair from one class, rho and r by class
    double r                # Solver_NU's r: the mean of the two classes' rho values
    # statistics
    int64_t n_shrink
    int64_t min_active
    # LIBSVM's progress characters, in order (grown by doubling; ev_lost when a growth failed)
    char* ev
    int64_t ev_n
    int64_t ev_cap
    bint ev_lost


cdef void _event(Work* w, char c) noexcept nogil:
    cdef char* grown
    if w.ev_n == w.ev_cap:
        grown = <char*>realloc(w.ev, 2 * w.ev_cap)
        if grown == NULL:
            w.ev_lost = True
            return
        w.ev = grown
        w.ev_cap *= 2
    w.ev[w.ev_n] = c
    w.ev_n += 1


cdef inline double _C(const Work* w, int64_t t) noexcept nogil:
    return w.Cp if w.y[t] > 0 else w.Cn


cdef inline void _update_status(Work* w, int64_t t) noexcept nogil:
    if w.alpha[t] >= _C(w, t):
        w.status[t] = UPPER_BOUND
    elif w.alpha[t] <= 0.0:
        w.status[t] = LOWER_BOUND
    else:
        w.status[t] = FREE


cdef inline double _q(const signed char* y, int64_t i, int64_t t, const float* Ki) noexcept nogil:
    """Q_it = y_i y_t K_it as LIBSVM's float, widened (Ki: the cache's column i)."""
    return <double>(<float>(y[i] * y[t]) * Ki[t])


cdef bint _select(KernelCache cache, Work* w, int64_t n, int64_t* out_i, int64_t* out_j,
                  double* gap_out) noexcept nogil:
    """The working pair over positions [0, n); True (optimal) when m - M < eps or there is no j."""
    cdef int64_t i = -1, j = -1, t
    cdef double Gmax = -INFINITY, Gmax2 = -INFINITY, best = INFINITY, diff, quad, obj
    cdef const signed char* y = w.y
    cdef const double* G = w.G
    cdef const char* st = w.status
    cdef const float* Ki = NULL
    # i: the largest -y_t G_t over I_up
    for t in range(n):
        if y[t] > 0:
            if st[t] != UPPER_BOUND and -G[t] >= Gmax:
                Gmax = -G[t]
                i = t
        elif st[t] != LOWER_BOUND and G[t] >= Gmax:
            Gmax = G[t]
            i = t
    if i >= 0:
        Ki = cache.get_column(i, n)
    for t in range(n):
        if y[t] > 0:
            if st[t] == LOWER_BOUND:
                continue
            diff = Gmax + G[t]
            if G[t] >= Gmax2:
                Gmax2 = G[t]
        else:
            if st[t] == UPPER_BOUND:
                continue
            diff = Gmax - G[t]
            if -G[t] >= Gmax2:
                Gmax2 = -G[t]
        if diff > 0.0 and i >= 0:
            # K_ii + K_tt - 2 K_it: LIBSVM's 2 y_t y_i Q_it, where the signs cancel exactly
            quad = w.QD[i] + w.QD[t] - 2.0 * <double>Ki[t]
            obj = -(diff * diff) / (quad if quad > 0.0 else TAU)
            if obj <= best:
                best = obj
                j = t
    gap_out[0] = Gmax + Gmax2
    out_i[0] = i
    out_j[0] = j
    return Gmax + Gmax2 < w.eps or j < 0


cdef bint _select_nu(KernelCache cache, Work* w, int64_t n, int64_t* out_i, int64_t* out_j,
                     double* gap_out) noexcept nogil:
    """Solver_NU's working pair over positions [0, n): i the largest -y_t G_t over I_up within each class (ip for
    y = +1, in for y = -1), j the second-order choice among the same class's I_low; True (optimal) when
    max(m_p - M_p, m_n - M_n) < eps or there is no j."""
    cdef int64_t ip = -1, iN = -1, j = -1, t
    cdef double Gmaxp = -INFINITY, Gmaxp2 = -INFINITY, Gmaxn = -INFINITY, Gmaxn2 = -INFINITY
    cdef double best = INFINITY, diff, quad, obj
    cdef const signed char* y = w.y
    cdef const double* G = w.G
    cdef const char* st = w.status
    cdef const float* Kp = NULL
    cdef const float* Kn = NULL
    for t in range(n):
        if y[t] > 0:
            if st[t] != UPPER_BOUND and -G[t] >= Gmaxp:
                Gmaxp = -G[t]
                ip = t
        elif st[t] != LOWER_BOUND and G[t] >= Gmaxn:
            Gmaxn = G[t]
            iN = t
    if ip >= 0:
        Kp = cache.get_column(ip, n)
    if iN >= 0:
        Kn = cache.get_column(iN, n)        # Kp stays valid: the cache holds at least two columns
    for t in range(n):
        if y[t] > 0:
            if st[t] == LOWER_BOUND:
                continue
            diff = Gmaxp + G[t]
            if G[t] >= Gmaxp2:
                Gmaxp2 = G[t]
            if diff > 0.0:
                # same class: Q_it = K_it, the signs cancel
                quad = w.QD[ip] + w.QD[t] - 2.0 * <double>Kp[t]
                obj = -(diff * diff) / (quad if quad > 0.0 else TAU)
                if obj <= best:
                    best = obj
                    j = t
        else:
            if st[t] == UPPER_BOUND:
                continue
            diff = Gmaxn - G[t]
            if -G[t] >= Gmaxn2:
                Gmaxn2 = -G[t]
            if diff > 0.0:
                quad = w.QD[iN] + w.QD[t] - 2.0 * <double>Kn[t]
                obj = -(diff * diff) / (quad if quad > 0.0 else TAU)
                if obj <= best:
                    best = obj
                    j = t
    gap_out[0] = Gmaxp + Gmaxp2 if Gmaxp + Gmaxp2 > Gmaxn + Gmaxn2 else Gmaxn + Gmaxn2
    out_j[0] = j
    if j >= 0:
        out_i[0] = ip if y[j] > 0 else iN
    return gap_out[0] < w.eps or j < 0


cdef inline bint _be_shrunk(const Work* w, int64_t t, double Gmax1, double Gmax2, double Gmax3,
                            double Gmax4) noexcept nogil:
    """Whether a bounded variable can leave the active set: at the upper bound, -G_t above Gmax1 (y = +1) or Gmax4
    (y = -1); at the lower bound, G_t above Gmax2 (y = +1) or Gmax3 (y = -1). LIBSVM's Solver passes (m, M', m, M'),
    its Solver_NU the four bounds by class."""
    if w.status[t] == UPPER_BOUND:
        if w.y[t] > 0:
            return -w.G[t] > Gmax1
        return -w.G[t] > Gmax4
    if w.status[t] == LOWER_BOUND:
        if w.y[t] > 0:
            return w.G[t] > Gmax2
        return w.G[t] > Gmax3
    return False


cdef void _shrink(KernelCache cache, Work* w, double Gmax1, double Gmax2, double Gmax3, double Gmax4) noexcept nogil:
    """Move behind active_size every variable _be_shrunk says can leave (LIBSVM's loop: active_size shrinks as it
    goes)."""
    cdef int64_t t = 0
    while t < w.active_size:
        if _be_shrunk(w, t, Gmax1, Gmax2, Gmax3, Gmax4):
            w.active_size -= 1
            while w.active_size > t:
                if not _be_shrunk(w, w.active_size, Gmax1, Gmax2, Gmax3, Gmax4):
                    _swap(cache, w, t, w.active_size)
                    break
                w.active_size -= 1
        t += 1
    if w.active_size < w.min_active:
        w.min_active = w.active_size


cdef void _do_shrinking_nu(KernelCache cache, Work* w) noexcept nogil:
    """Solver_NU's do_shrinking: the bounds by class; its unshrink prints no '*' (LIBSVM's does not)."""
    cdef double Gmax1 = -INFINITY, Gmax2 = -INFINITY, Gmax3 = -INFINITY, Gmax4 = -INFINITY
    cdef int64_t t
    w.n_shrink += 1
    for t in range(w.active_size):
        if w.status[t] != UPPER_BOUND:
            if w.y[t] > 0:
                if -w.G[t] > Gmax1:
                    Gmax1 = -w.G[t]
            elif -w.G[t] > Gmax4:
                Gmax4 = -w.G[t]
        if w.status[t] != LOWER_BOUND:
            if w.y[t] > 0:
                if w.G[t] > Gmax2:
                    Gmax2 = w.G[t]
            elif w.G[t] > Gmax3:
                Gmax3 = w.G[t]
    if not w.unshrink and (Gmax1 + Gmax2 if Gmax1 + Gmax2 > Gmax3 + Gmax4 else Gmax3 + Gmax4) <= w.eps * 10:
        w.unshrink = True
        _reconstruct_gradient(cache, w)
        w.active_size = w.l
    _shrink(cache, w, Gmax1, Gmax2, Gmax3, Gmax4)


cdef double _rho_nu(Work* w) noexcept nogil:
    """Solver_NU's calculate_rho: r1, r2 the two classes' means of G over their free a_t (else the middle of their
    bounds); rho = (r1 - r2) / 2 and w.r = (r1 + r2) / 2."""
    cdef double ub1 = INFINITY, ub2 = INFINITY, lb1 = -INFINITY, lb2 = -INFINITY, sum1 = 0.0, sum2 = 0.0, r1, r2
    cdef int64_t t, n1 = 0, n2 = 0
    for t in range(w.active_size):
        if w.y[t] > 0:
            if w.status[t] == UPPER_BOUND:
                lb1 = lb1 if lb1 > w.G[t] else w.G[t]
            elif w.status[t] == LOWER_BOUND:
                ub1 = ub1 if ub1 < w.G[t] else w.G[t]
            else:
                n1 += 1
                sum1 += w.G[t]
        else:
            if w.status[t] == UPPER_BOUND:
                lb2 = lb2 if lb2 > w.G[t] else w.G[t]
            elif w.status[t] == LOWER_BOUND:
                ub2 = ub2 if ub2 < w.G[t] else w.G[t]
            else:
                n2 += 1
                sum2 += w.G[t]
    r1 = sum1 / n1 if n1 > 0 else (ub1 + lb1) / 2
    r2 = sum2 / n2 if n2 > 0 else (ub2 + lb2) / 2
    w.r = (r1 + r2) / 2
    return (r1 - r2) / 2


cdef inline bint _pick(KernelCache cache, Work* w, int64_t n, int64_t* out_i, int64_t* out_j,
                       double* gap_out) noexcept nogil:
    if w.nu:
        return _select_nu(cache, w, n, out_i, out_j, gap_out)
    return _select(cache, w, n, out_i, out_j, gap_out)


cdef double _violation(const Work* w) noexcept nogil:
    """The stopping rule's value over every position (no kernel column): m(a) - M(a), or Solver_NU's
    max(m_p - M_p, m_n - M_n) by class. Gp, Gn: the largest -y_t G_t over I_up of each class; Gp2, Gn2: the
    largest y_t G_t over I_low."""
    cdef double Gp = -INFINITY, Gp2 = -INFINITY, Gn = -INFINITY, Gn2 = -INFINITY
    cdef int64_t t
    for t in range(w.l):
        if w.y[t] > 0:
            if w.status[t] != UPPER_BOUND and -w.G[t] > Gp:
                Gp = -w.G[t]
            if w.status[t] != LOWER_BOUND and w.G[t] > Gp2:
                Gp2 = w.G[t]
        else:
            if w.status[t] != LOWER_BOUND and w.G[t] > Gn:
                Gn = w.G[t]
            if w.status[t] != UPPER_BOUND and -w.G[t] > Gn2:
                Gn2 = -w.G[t]
    if w.nu:
        return Gp + Gp2 if Gp + Gp2 > Gn + Gn2 else Gn + Gn2
    return (Gp if Gp > Gn else Gn) + (Gp2 if Gp2 > Gn2 else Gn2)


cdef void _update_pair(Work* w, int64_t i, int64_t j, double Qij) noexcept nogil:
    """LIBSVM's exact solution of the pair's sub-problem, clipped to the box."""
    cdef double* alpha = w.alpha
    cdef const double* G = w.G
    cdef double Ci = _C(w, i), Cj = _C(w, j), quad, delta, diff
    if w.y[i] != w.y[j]:
        quad = w.QD[i] + w.QD[j] + 2.0 * Qij
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
        quad = w.QD[i] + w.QD[j] - 2.0 * Qij
        delta = (G[i] - G[j]) / (quad if quad > 0.0 else TAU)
        same_label_step(&alpha[i], &alpha[j], delta, Ci, Cj)


cdef void _swap(KernelCache cache, Work* w, int64_t i, int64_t j) noexcept nogil:
    """LIBSVM's swap_index: positions i and j exchanged in every array and in the cache."""
    cdef signed char c
    cdef char s
    cdef double d
    cdef int64_t k
    cache.swap(i, j)
    c = w.y[i]; w.y[i] = w.y[j]; w.y[j] = c
    d = w.yd[i]; w.yd[i] = w.yd[j]; w.yd[j] = d
    d = w.G[i]; w.G[i] = w.G[j]; w.G[j] = d
    s = w.status[i]; w.status[i] = w.status[j]; w.status[j] = s
    d = w.alpha[i]; w.alpha[i] = w.alpha[j]; w.alpha[j] = d
    d = w.p[i]; w.p[i] = w.p[j]; w.p[j] = d
    k = w.active_set[i]; w.active_set[i] = w.active_set[j]; w.active_set[j] = k
    d = w.G_bar[i]; w.G_bar[i] = w.G_bar[j]; w.G_bar[j] = d
    d = w.QD[i]; w.QD[i] = w.QD[j]; w.QD[j] = d


cdef void _reconstruct_gradient(KernelCache cache, Work* w) noexcept nogil:
    """G of the shrunk positions [active_size, l) from G_bar, p and the free variables. Two loops as LIBSVM's
    (by shrunk column when the free variables are many, else by free column); Q is symmetric, so both add the
    same terms in the same order (the free positions ascending)."""
    cdef int64_t a = w.active_size, l = w.l, i, j, nr_free = 0
    cdef const float* Ki
    cdef double alpha_i
    if a == l:
        return
    for j in range(a, l):
        w.G[j] = w.G_bar[j] + w.p[j]
    for j in range(a):
        if w.status[j] == FREE:
            nr_free += 1
    if 2 * nr_free < a:
        _event(w, b'W')                     # LIBSVM's "WARNING: using -h 0 may be faster"
    if nr_free * l > 2 * a * (l - a):
        for i in range(a, l):
            if stop_requested():            # one column per step (cext/_stop.pyx); the caller then raises
                return
            Ki = cache.get_column(i, a)
            for j in range(a):
                if w.status[j] == FREE:
                    w.G[i] += w.alpha[j] * _q(w.y, i, j, Ki)
    else:
        for i in range(a):
            if w.status[i] == FREE:
                if stop_requested():
                    return
                Ki = cache.get_column(i, l)
                alpha_i = w.alpha[i]
                for j in range(a, l):
                    w.G[j] += alpha_i * _q(w.y, i, j, Ki)


cdef void _do_shrinking(KernelCache cache, Work* w) noexcept nogil:
    cdef double Gmax1 = -INFINITY, Gmax2 = -INFINITY    # max -y_t G_t over I_up, max y_t G_t over I_low
    cdef int64_t t
    w.n_shrink += 1
    for t in range(w.active_size):
        if w.y[t] > 0:
            if w.status[t] != UPPER_BOUND and -w.G[t] >= Gmax1:
                Gmax1 = -w.G[t]
            if w.status[t] != LOWER_BOUND and w.G[t] >= Gmax2:
                Gmax2 = w.G[t]
        else:
            if w.status[t] != UPPER_BOUND and -w.G[t] >= Gmax2:
                Gmax2 = -w.G[t]
            if w.status[t] != LOWER_BOUND and w.G[t] >= Gmax1:
                Gmax1 = w.G[t]
    if not w.unshrink and Gmax1 + Gmax2 <= w.eps * 10:
        w.unshrink = True
        _reconstruct_gradient(cache, w)
        w.active_size = w.l
        _event(w, b'*')
    _shrink(cache, w, Gmax1, Gmax2, Gmax1, Gmax2)


cdef void _bar_column(KernelCache cache, Work* w, int64_t i, double sign) noexcept nogil:
    """G_bar += sign C_i Q_i (a variable reaching, sign +1, or leaving, sign -1, its upper bound)."""
    cdef const float* Ki = cache.get_column(i, w.l)
    cdef double c = _C(w, i) * w.yd[i]
    cdef const double* yd = w.yd
    cdef double* G_bar = w.G_bar
    cdef int64_t k
    # C_i Q_ik = y_k (K_ik (y_i C_i)): the signs factor out exactly, so the sum is LIBSVM's bit for bit
    if sign > 0:
        for k in range(w.l):
            G_bar[k] += yd[k] * (<double>Ki[k] * c)
    else:
        for k in range(w.l):
            G_bar[k] -= yd[k] * (<double>Ki[k] * c)


cdef int64_t _solve(KernelCache cache, Work* w, int64_t max_iter, bint shrinking, double* gap_out,
                    bint* converged) noexcept nogil:
    cdef int64_t it = 0, i, j, t, n, l = w.l
    cdef int64_t counter = (l if l < 1000 else 1000) + 1
    cdef double old_i, old_j, dai, daj
    cdef const float* Ki
    cdef const float* Kj
    cdef const signed char* y = w.y
    cdef const double* yd = w.yd
    cdef double* G = w.G
    cdef signed char yi, yj
    cdef bint ui, uj
    gap_out[0] = INFINITY
    converged[0] = False
    while it < max_iter:
        if stop_requested():                # a kernel column or two per pair: checked at every pair
            break
        counter -= 1
        if counter == 0:
            counter = l if l < 1000 else 1000
            if shrinking:
                if w.nu:
                    _do_shrinking_nu(cache, w)
                else:
                    _do_shrinking(cache, w)
            _event(w, b'.')
        if _pick(cache, w, w.active_size, &i, &j, gap_out):
            if w.active_size == l:          # nothing shrunk: the check over every variable is this one
                _event(w, b'*')
                converged[0] = True
                break
            _reconstruct_gradient(cache, w)
            w.active_size = l
            _event(w, b'*')
            if _pick(cache, w, l, &i, &j, gap_out):
                converged[0] = True
                break
            counter = 1                     # shrink at the next iteration
        it += 1
        n = w.active_size
        Ki = cache.get_column(i, n)
        Kj = cache.get_column(j, n)         # Ki stays valid: the cache holds at least two columns
        yi = y[i]
        yj = y[j]
        old_i = w.alpha[i]
        old_j = w.alpha[j]
        _update_pair(w, i, j, _q(y, i, j, Ki))
        dai = w.alpha[i] - old_i
        daj = w.alpha[j] - old_j
        # LIBSVM's G_t += Q_it da_i + Q_jt da_j with Q_it = y_i y_t K_it: the signs factor out exactly (rounding
        # is symmetric), so y_t (K_it (y_i da_i) + K_jt (y_j da_j)) is the same sum bit for bit, without branches
        dai *= yi
        daj *= yj
        for t in range(n):
            G[t] += yd[t] * (<double>Ki[t] * dai + <double>Kj[t] * daj)
        ui = w.status[i] == UPPER_BOUND
        uj = w.status[j] == UPPER_BOUND
        _update_status(w, i)
        _update_status(w, j)
        if shrinking:                       # G_bar is read only by reconstruct_gradient
            if ui != (w.status[i] == UPPER_BOUND):
                _bar_column(cache, w, i, -1.0 if ui else 1.0)
            if uj != (w.status[j] == UPPER_BOUND):
                _bar_column(cache, w, j, -1.0 if uj else 1.0)
    if not converged[0] and shrinking:
        # max_iter pairs: every G rebuilt, and the gap is the one at the end over every variable (the last
        # check saw the active set before the last pair)
        if w.active_size < l:
            _reconstruct_gradient(cache, w)
            w.active_size = l
            _event(w, b'*')
        gap_out[0] = _violation(w)
    return it


cdef void _start_gradient(KernelCache cache, Work* w, bint shrinking) noexcept nogil:
    """G = p + Q a and G_bar = sum C_i Q_i over the a_i at the upper bound: one kernel column per non-zero a_i,
    in order (LIBSVM's start)."""
    cdef int64_t i, t, l = w.l
    cdef const float* col
    cdef double Ci
    for t in range(l):
        w.G[t] = w.p[t]
        w.G_bar[t] = 0.0
    for i in range(l):
        if w.status[i] == LOWER_BOUND:
            continue
        if stop_requested():
            return
        col = cache.get_column(i, l)
        for t in range(l):
            w.G[t] += _q(w.y, i, t, col) * w.alpha[i]
        if shrinking and w.status[i] == UPPER_BOUND:
            Ci = _C(w, i)
            for t in range(l):
                w.G_bar[t] += Ci * _q(w.y, i, t, col)


cdef double _rho(const Work* w) noexcept nogil:
    """By position, over every variable (LIBSVM's calculate_rho)."""
    cdef double ub = INFINITY, lb = -INFINITY, total = 0.0, yG
    cdef int64_t t, n_free = 0
    for t in range(w.l):
        yG = w.y[t] * w.G[t]
        if w.status[t] == UPPER_BOUND:
            if w.y[t] < 0:
                if yG < ub:
                    ub = yG
            elif yG > lb:
                lb = yG
        elif w.status[t] == LOWER_BOUND:
            if w.y[t] > 0:
                if yG < ub:
                    ub = yG
            elif yG > lb:
                lb = yG
        else:
            n_free += 1
            total += yG
    return total / n_free if n_free > 0 else 0.5 * (ub + lb)


def solve(KernelCache cache not None, const signed char[::1] y, const double[::1] p, double[::1] alpha,
          double Cp, double Cn, const double[::1] QD, double eps=1e-3, max_iter=None, bint shrinking=True,
          bint nu=False):
    """LIBSVM's Solver on the cache's l-row problem, in the cache's current order: labels y (+1/-1), linear term
    p, box C_i = Cp or Cn, QD the kernel's diagonal (kernel_diag). alpha is the feasible start and receives the
    solution. shrinking: LIBSVM's -h 1 (the default, as LIBSVM's) or -h 0. The cache is given back in the order
    it came in.

    Returns a dict: n_iter, rho, obj (f at the solution, LIBSVM's sum a_t (G_t + p_t) / 2), gap (m(a) - M(a) over
    every variable at the last check; after max_iter pairs without shrinking, the check before the last pair), G
    (the final gradient), converged (False when max_iter pairs were made first), n_shrink (do_shrinking calls),
    min_active_size (the smallest active set they left; l if none), unshrunk (whether the one-time unshrink at
    m - M <= 10 eps happened) and events (LIBSVM's progress, bytes of '.', '*' and 'W', see the top; None when
    memory for them ran out), r (Solver_NU's r with nu=True: LIBSVM's nu-SVC and nu-SVR, whose pair comes from
    one class and whose rho and r come from the two classes' free variables; 0 otherwise)."""
    cdef int64_t l = cache.l, n_iter = 0, k
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
    cdef double[::1] G_out = np.empty(l, dtype=np.float64)
    cdef double gap = INFINITY, rho = 0.0
    cdef bint converged = False
    cdef Work w
    if l == 0:
        return {"n_iter": 0, "rho": 0.0, "obj": 0.0, "gap": 0.0, "G": np.asarray(G_out), "converged": True,
                "n_shrink": 0, "min_active_size": 0, "unshrunk": False, "events": b"", "r": 0.0}
    w.l = l
    w.active_size = l
    w.Cp = Cp
    w.Cn = Cn
    w.eps = eps
    w.unshrink = False
    w.nu = nu
    w.r = 0.0
    w.n_shrink = 0
    w.min_active = l
    w.ev_n = 0
    w.ev_cap = 256
    w.ev_lost = False
    w.ev = <char*>malloc(w.ev_cap)
    w.y = <signed char*>malloc(l * sizeof(signed char))
    w.yd = <double*>malloc(l * sizeof(double))
    w.status = <char*>malloc(l * sizeof(char))
    w.p = <double*>malloc(l * sizeof(double))
    w.alpha = <double*>malloc(l * sizeof(double))
    w.G = <double*>malloc(l * sizeof(double))
    w.G_bar = <double*>malloc(l * sizeof(double))
    w.QD = <double*>malloc(l * sizeof(double))
    w.active_set = <int64_t*>malloc(l * sizeof(int64_t))
    try:
        if (w.y == NULL or w.yd == NULL or w.status == NULL or w.p == NULL or w.alpha == NULL or w.G == NULL or w.G_bar == NULL
                or w.QD == NULL or w.active_set == NULL or w.ev == NULL):
            raise MemoryError(f"SMO: the work arrays for {l} variables could not be allocated")
        with nogil:
            for k in range(l):
                w.y[k] = y[k]
                w.yd[k] = 1.0 if y[k] > 0 else -1.0
                w.p[k] = p[k]
                w.alpha[k] = alpha[k]
                w.QD[k] = QD[k]
                w.active_set[k] = k
                _update_status(&w, k)
            _start_gradient(cache, &w, shrinking)
            n_iter = _solve(cache, &w, limit, shrinking, &gap, &converged)
            rho = _rho_nu(&w) if w.nu else _rho(&w)
            # the solution by the caller's order; the cache back in its order (LIBSVM leaves it permuted)
            for k in range(l):
                alpha[w.active_set[k]] = w.alpha[k]
                G_out[w.active_set[k]] = w.G[k]
            # (not after a signal: the result is discarded, and each swap walks every cached column, seconds with
            # a large -m)
            for k in range(l):
                if stop_requested():
                    break
                while w.active_set[k] != k:
                    cache.swap(k, w.active_set[k])
                    _swap_int(w.active_set, k, w.active_set[k])
        events = (<char*>w.ev)[:w.ev_n] if not w.ev_lost else None
    finally:
        free(w.ev)
        free(w.y)
        free(w.yd)
        free(w.status)
        free(w.p)
        free(w.alpha)
        free(w.G)
        free(w.G_bar)
        free(w.QD)
        free(w.active_set)
    check_stop()                            # a solve cut short by a signal is never returned
    Gn = np.asarray(G_out)
    obj = 0.5 * float((np.asarray(alpha) * (Gn + np.asarray(p))).sum())   # not BLAS (its threads spin afterwards)
    return {"n_iter": int(n_iter), "rho": float(rho), "obj": obj, "gap": float(gap), "G": Gn,
            "converged": bool(converged), "n_shrink": int(w.n_shrink), "min_active_size": int(w.min_active),
            "unshrunk": bool(w.unshrink), "events": events, "r": float(w.r)}


cdef inline void _swap_int(int64_t* a, int64_t i, int64_t j) noexcept nogil:
    cdef int64_t t = a[i]
    a[i] = a[j]
    a[j] = t


def nu_start(const signed char[::1] y, double total, double C, double[::1] alpha):
    """The start of LIBSVM's nu solvers: position by position, alpha_t = min(C, what is left of its class's
    total), then subtracted from it; each class starts from `total` (solve_nu_svc: y by class, C = 1, total
    nu l / 2; solve_nu_svr: y all +1, C the box, total C nu l / 2, the same alpha for a_t and a*_t)."""
    cdef double left_p = total, left_n = total, a
    cdef int64_t t, l = y.shape[0]
    if alpha.shape[0] != l:
        raise ValueError("y and alpha must have the same length")
    with nogil:
        for t in range(l):
            if y[t] > 0:
                a = C if C < left_p else left_p
                left_p -= a
            else:
                a = C if C < left_n else left_n
                left_n -= a
            alpha[t] = a
