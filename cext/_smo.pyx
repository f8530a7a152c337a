# The generic SMO of the kernel SVMs (issue 15): LIBSVM 3.x's Solver (Chang & Lin, "LIBSVM: a library for support
# vector machines", ACM TIST 2(3), 2011, sections 4 and 5.1; Fan, Chen & Lin, "Working set selection using second
# order information for training SVM", JMLR 6, 2005, WSS 2), with or without shrinking (LIBSVM's -h 1 / -h 0).
#
# Problem:  min_a  f(a) = 1/2 a'Qa + p'a   subject to  y'a = Delta,  0 <= a_i <= C_i,   y_i in {-1, +1},
# Q_ij = y_i y_j K(x_i, x_j), from the kernel columns of cext/_kernel.pyx's KernelCache (float, as LIBSVM's
# Qfloat; any of LIBSVM's kernel types, the precomputed one included); QD_i = K_ii in double. The start a must be feasible; G = Qa + p is formed from it.
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
# may be faster" (fewer than half the active variables free). Live (issue 48): svm-train prints them as the solver
# runs, so an event is also appended, as the text it prints, to a Text shared with a Python thread (Work.live: a
# Channel of solve(), or OneVsOne's own text) under its lock, a plain OS lock taken without the GIL (an event
# per min(l, 1000) iterations: nothing to measure); the thread takes what is there a few times a second and prints
# it (llsvm/report.py's Reporter.live). No Python call happens inside nogil.
from libc.math cimport INFINITY, fabs, isfinite
from libc.stdint cimport int64_t
from libc.stdio cimport snprintf
from libc.stdlib cimport calloc, malloc, free, realloc
from libc.string cimport memcpy, memset, strlen
from cpython.pythread cimport (PyThread_type_lock, PyThread_allocate_lock, PyThread_free_lock,
                               PyThread_acquire_lock, PyThread_release_lock, WAIT_LOCK)
from posix.time cimport clock_gettime, timespec, CLOCK_MONOTONIC
from cython.parallel cimport prange

import numpy as np

from kernel cimport kernel_from_dot, kernel_function
from platt cimport sigmoid_fit
from rowview cimport RowView, row_cost
from llsvm._ext._kernel cimport KernelCache, DoubledCache
from llsvm._ext._stop cimport stop_requested, check_stop
from smo_step cimport same_label_step

cdef double TAU = 1e-12

cdef struct Text:
    char* buf
    int64_t n
    int64_t cap
    bint lost
    PyThread_type_lock lock     # NULL: one thread only; else held to append and to take (a reader thread)


cdef void _put(Text* t, const char* s, int64_t n) noexcept nogil:
    if t.lock == NULL:
        _append(t, s, n)
    else:
        PyThread_acquire_lock(t.lock, WAIT_LOCK)
        _append(t, s, n)
        PyThread_release_lock(t.lock)


cdef void _append(Text* t, const char* s, int64_t n) noexcept nogil:
    cdef char* grown
    cdef int64_t cap
    if t.lost:
        return
    if t.n + n > t.cap:
        cap = t.cap * 2 if t.cap else 4096
        while cap < t.n + n:
            cap *= 2
        grown = <char*>realloc(t.buf, cap)
        if grown == NULL:
            t.lost = True
            return
        t.buf = grown
        t.cap = cap
    memcpy(t.buf + t.n, s, n)
    t.n += n


cdef inline void _puts(Text* t, const char* s) noexcept nogil:
    _put(t, s, strlen(s))


cdef void _putf(Text* t, double x) noexcept nogil:
    """x as svm-train's printf("%f") writes it (a NaN with its sign: "-nan" for 0/0 or inf - inf)."""
    cdef char b[400]                # "%f" of the largest double: 317 characters
    _put(t, b, snprintf(b, 400, "%f", x))


cdef void _puti(Text* t, int64_t v) noexcept nogil:
    cdef char b[32]
    _put(t, b, snprintf(b, 32, "%lld", <long long>v))


cdef str _take(Text* t):
    """The text appended since the last take (ASCII), and forget it; under its lock when it has one."""
    if t.lock != NULL:
        with nogil:
            PyThread_acquire_lock(t.lock, WAIT_LOCK)
    try:
        out = t.buf[:t.n].decode("ascii") if t.n else ""
        t.n = 0
    finally:
        if t.lock != NULL:
            PyThread_release_lock(t.lock)
    return out


cdef class Channel:
    """Where solve(live=) writes the Solver's progress as it runs (LIBSVM's '.', '*' and its warning's text), for
    a Python thread to take() and print while the solve holds no GIL."""
    cdef Text text

    def __cinit__(self):
        memset(&self.text, 0, sizeof(Text))
        self.text.lock = PyThread_allocate_lock()
        if self.text.lock == NULL:
            raise MemoryError("a lock for the live progress could not be allocated")

    def __dealloc__(self):
        if self.text.lock != NULL:
            PyThread_free_lock(self.text.lock)
        free(self.text.buf)

    def take(self):
        """The progress text written since the last take."""
        return _take(&self.text)

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
    double* C               # C_i by position: the box of each variable (row_cost: its class's C times its row's weight)
    char* status
    int64_t* active_set
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
    Text* live              # NULL, or where the events are also written, as their text, as they happen
    int64_t cap             # the variables the arrays hold (_reserve)
    void* block             # the arrays above, in one allocation


cdef void _event(Work* w, char c) noexcept nogil:
    cdef char* grown
    if w.live != NULL:
        if c == b'W':
            _puts(w.live, "\nWARNING: using -h 0 may be faster\n")
        else:
            _put(w.live, &c, 1)
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
    return w.C[t]


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


cdef enum:
    SELECT_MAX_PARTS = 64
# positions from which _select's two passes, the gradient's update and G_bar's are shared among the cache's threads
# (_parts; below, a parallel region's start costs more than the pass); select_parallel_min sets it (the tests: parts
# on small problems)
cdef int64_t SELECT_PARALLEL_MIN = 4096


def select_parallel_min(int64_t n):
    """Set the positions from which _select's passes and the gradient's and G_bar's updates are shared among threads
    (n >= 1); returns the previous value."""
    global SELECT_PARALLEL_MIN
    if n < 1:
        raise ValueError("n must be at least 1")
    old = SELECT_PARALLEL_MIN
    SELECT_PARALLEL_MIN = n
    return old


# _select's two passes in blocks (issue 49): each block's candidates are first mapped, without a branch (so that
# GCC vectorises the map, obj's divisions included), into a buffer where a variable that is not a candidate is a
# NaN; the block's best value is then taken over the buffer, and only when it is at least as good as the best so
# far (>= for a maximum, <= for obj's minimum: LIBSVM's comparisons) is the block scanned from its end for the last
# position holding that value (== : +0 and -0 alike, as LIBSVM's >= and <= take them), whose value, sign included,
# becomes the best. That is LIBSVM's loop's result exactly: its last update in the block is at the last position
# equal to the block's best, which no later position beats; a NaN is never taken (LIBSVM's comparisons are false on
# it), and an -INFINITY candidate is (>= -INFINITY), as in LIBSVM's loop.
cdef extern from *:
    """
    #include <stddef.h>
    #include <stdint.h>
    #include <string.h>
    #include <math.h>
    #if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__) && defined(__GLIBC__)
    #define LLSVM_SELECT_CLONES __attribute__((target_clones("avx2", "default"), \
                                                optimize("fp-contract=off", "no-trapping-math"), unused))
    #elif defined(__GNUC__) && !defined(__clang__)
    #define LLSVM_SELECT_CLONES __attribute__((optimize("fp-contract=off", "no-trapping-math"), unused))
    #else
    #define LLSVM_SELECT_CLONES __attribute__((unused))
    #endif
    #define LLSVM_SELECT_BLOCK 256
    typedef double llsvm_sel_v4d __attribute__((vector_size(32)));
    typedef int64_t llsvm_sel_v4i __attribute__((vector_size(32)));
    /* m where it is the larger or x is NaN, else x: a compare and a blend */
    #define LLSVM_SEL_MAX(m, x) do { llsvm_sel_v4i gt_ = (x) > (m); \
        (m) = (llsvm_sel_v4d)((gt_ & (llsvm_sel_v4i)(x)) | (~gt_ & (llsvm_sel_v4i)(m))); } while (0)
    /* the largest non-NaN value of v[0 .. n) above lo (lo when none): sixteen lanes side by side, then the lanes;
       inlined into each clone of its callers */
    static inline __attribute__((always_inline)) double llsvm_block_max(const double* v, int64_t n, double lo) {
        llsvm_sel_v4d m0 = {lo, lo, lo, lo}, m1 = m0, m2 = m0, m3 = m0, x0, x1, x2, x3;
        double r;
        int64_t k = 0, q;
        for (; k + 16 <= n; k += 16) {
            memcpy(&x0, v + k, 32);
            memcpy(&x1, v + k + 4, 32);
            memcpy(&x2, v + k + 8, 32);
            memcpy(&x3, v + k + 12, 32);
            LLSVM_SEL_MAX(m0, x0);
            LLSVM_SEL_MAX(m1, x1);
            LLSVM_SEL_MAX(m2, x2);
            LLSVM_SEL_MAX(m3, x3);
        }
        LLSVM_SEL_MAX(m0, m1);
        LLSVM_SEL_MAX(m2, m3);
        LLSVM_SEL_MAX(m0, m2);
        r = lo;
        for (; k < n; k++)
            r = v[k] > r ? v[k] : r;
        for (q = 0; q < 4; q++)
            r = m0[q] > r ? m0[q] : r;
        return r;
    }
    /* the last k < n with v[k] == x, or -1: the tail one at a time, then four at a time from the end (a compare,
       and the lanes looked at only in the group that holds one) */
    static inline __attribute__((always_inline)) int64_t llsvm_last_equal(const double* v, int64_t n, double x) {
        llsvm_sel_v4d xs = {x, x, x, x}, c;
        llsvm_sel_v4i eq;
        int64_t k = n, q;
        while (k % 4 != 0) {
            k--;
            if (v[k] == x)
                return k;
        }
        while (k > 0) {
            k -= 4;
            memcpy(&c, v + k, 32);
            eq = c == xs;
            if (eq[0] | eq[1] | eq[2] | eq[3])
                for (q = 3; q >= 0; q--)
                    if (eq[q])
                        return k + q;
        }
        return -1;
    }
    /* whether position t is in I_up (not at the upper bound for y = +1, not at the lower for y = -1), its class
       (*up: y = +1) and -y_t G_t (*s): the candidates of the first passes */
    static inline __attribute__((always_inline)) int64_t llsvm_up(const signed char* y, const double* G,
                                                                  const char* st, int64_t t, int64_t* up,
                                                                  double* s) {
        int64_t u = y[t] > 0;
        double g = G[t];
        *up = u;
        *s = u ? -g : g;
        return st[t] != u;
    }
    /* whether position t is in I_low (not at the lower bound for y = +1, not at the upper for y = -1), its class
       (*up: y = +1) and y_t G_t (*s): the candidates of the second passes */
    static inline __attribute__((always_inline)) int64_t llsvm_low(const signed char* y, const double* G,
                                                                   const char* st, int64_t t, int64_t* up,
                                                                   double* s) {
        int64_t u = y[t] > 0;
        double g = G[t];
        *up = u;
        *s = u ? g : -g;
        return st[t] != (u ^ 1);
    }
    /* a block's best onto the running (*best, *at) of a maximum with LIBSVM's >= (v: the block's values from
       position b, NaN where not a candidate): the last position holding the block's largest value, when that is at
       least *best */
    static inline __attribute__((always_inline)) void llsvm_block_best(const double* v, int64_t n, int64_t b,
                                                                       double* best, int64_t* at) {
        double bm = llsvm_block_max(v, n, -INFINITY);
        int64_t k;
        if (bm >= *best) {
            k = llsvm_last_equal(v, n, bm);
            if (k >= 0) {
                *best = v[k];
                *at = b + k;
            }
        }
    }
    /* the same for obj's minimum with LIBSVM's <= (o: -obj, NaN where not a candidate; *obj_min running) */
    static inline __attribute__((always_inline)) void llsvm_block_obj(const double* o, int64_t n, int64_t b,
                                                                      double* obj_min, int64_t* at) {
        double bm = llsvm_block_max(o, n, -INFINITY);
        int64_t k;
        if (-bm <= *obj_min) {
            k = llsvm_last_equal(o, n, bm);
            if (k >= 0) {
                *obj_min = -o[k];
                *at = b + k;
            }
        }
    }
    /* the largest non-NaN value of v[0 .. n) onto *top when it is at least *top (ties: the later position's value,
       which only a zero's sign tells apart) */
    static inline __attribute__((always_inline)) void llsvm_block_top(const double* v, int64_t n, double* top) {
        double bm = llsvm_block_max(v, n, -INFINITY);
        int64_t k;
        if (bm >= *top) {
            k = bm == 0.0 ? llsvm_last_equal(v, n, bm) : -2;
            if (k >= 0)
                *top = v[k];
            else if (k == -2)
                *top = bm;
        }
    }
    /* LIBSVM's first pass over [lo, hi): the largest -y_t G_t over I_up (st[t] != 1 for y = +1, != 0 for y = -1),
       ties to the later position; best and at are the running result (-INFINITY and -1 to start). */
    static LLSVM_SELECT_CLONES void llsvm_select_i(const signed char* restrict y, const double* restrict G,
                                                   const char* restrict st, int64_t lo, int64_t hi,
                                                   double* best, int64_t* at) {
        double v[LLSVM_SELECT_BLOCK];
        double Gmax = *best;
        int64_t i = *at, b, n, k;
        for (b = lo; b < hi; b += n) {
            n = hi - b < LLSVM_SELECT_BLOCK ? hi - b : LLSVM_SELECT_BLOCK;
            for (k = 0; k < n; k++) {
                int64_t up;
                double s;
                v[k] = llsvm_up(y, G, st, b + k, &up, &s) ? s : NAN;
            }
            llsvm_block_best(v, n, b, &Gmax, &i);
        }
        *best = Gmax;
        *at = i;
    }
    /* LIBSVM's second pass over [lo, hi) of I_low (st[t] != 0 for y = +1, != 1 for y = -1): Gmax2, the largest
       y_t G_t (*top, running, -INFINITY to start), and j (*at), the last t of the smallest
       obj = -(Gmax + y_t G_t)^2 / a_t (*best, running, INFINITY to start) among those with Gmax + y_t G_t > 0,
       a_t = QDi + QD[t] - 2 Ki[t] (TAU when not positive); Ki NULL (no i): Gmax2 alone. */
    static LLSVM_SELECT_CLONES void llsvm_select_j(const signed char* restrict y, const double* restrict G,
                                                   const char* restrict st, const double* restrict QD,
                                                   const float* restrict Ki, double QDi, double Gmax, double tau,
                                                   int64_t lo, int64_t hi, double* top, double* best,
                                                   int64_t* at) {
        double v[LLSVM_SELECT_BLOCK], o[LLSVM_SELECT_BLOCK];
        double Gmax2 = *top, obj_min = *best;
        int64_t j = *at, b, n, k;
        for (b = lo; b < hi; b += n) {
            n = hi - b < LLSVM_SELECT_BLOCK ? hi - b : LLSVM_SELECT_BLOCK;
            if (Ki != NULL) {
                for (k = 0; k < n; k++) {
                    int64_t up;
                    double s;
                    int64_t in = llsvm_low(y, G, st, b + k, &up, &s);
                    double diff = Gmax + s;
                    double quad = QDi + QD[b + k] - 2.0 * (double)Ki[b + k];
                    double obj = -(diff * diff) / (quad > 0.0 ? quad : tau);
                    v[k] = in ? s : NAN;
                    o[k] = (in & (diff > 0.0)) ? -obj : NAN;  /* negated: the smallest obj is the largest -obj */
                }
                llsvm_block_obj(o, n, b, &obj_min, &j);
            } else {
                for (k = 0; k < n; k++) {
                    int64_t up;
                    double s;
                    v[k] = llsvm_low(y, G, st, b + k, &up, &s) ? s : NAN;
                }
            }
            llsvm_block_top(v, n, &Gmax2);     /* a value other than 0 has one bit pattern: only a zero's sign
                                               needs the position */
        }
        *top = Gmax2;
        *best = obj_min;
        *at = j;
    }
    /* Solver_NU's first pass over [lo, hi): llsvm_select_i's candidates (I_up, -y_t G_t) by class, the largest of
       each, ties to the later position: *bp, *ap for y = +1 (Gmaxp, ip), *bn, *an for y = -1 (Gmaxn, in); each
       the running result (-INFINITY and -1 to start). */
    static LLSVM_SELECT_CLONES void llsvm_select_nu_i(const signed char* restrict y, const double* restrict G,
                                                      const char* restrict st, int64_t lo, int64_t hi,
                                                      double* bp, int64_t* ap, double* bn, int64_t* an) {
        double vp[LLSVM_SELECT_BLOCK], vn[LLSVM_SELECT_BLOCK];
        double Gp = *bp, Gn = *bn;
        int64_t ip = *ap, in_ = *an, b, n, k;
        for (b = lo; b < hi; b += n) {
            n = hi - b < LLSVM_SELECT_BLOCK ? hi - b : LLSVM_SELECT_BLOCK;
            for (k = 0; k < n; k++) {
                int64_t up;
                double s;
                int64_t c = llsvm_up(y, G, st, b + k, &up, &s);
                vp[k] = (c & up) ? s : NAN;
                vn[k] = (c & (up ^ 1)) ? s : NAN;
            }
            llsvm_block_best(vp, n, b, &Gp, &ip);
            llsvm_block_best(vn, n, b, &Gn, &in_);
        }
        *bp = Gp;
        *ap = ip;
        *bn = Gn;
        *an = in_;
    }
    /* Solver_NU's second pass over [lo, hi) of I_low (llsvm_select_j's: y_t G_t), by class: Gmaxp2 (*tp) and
       Gmaxn2 (*tn), the largest of each (running, -INFINITY to start), and j (*at), the last t of the smallest
       obj = -(Gm + y_t G_t)^2 / a_t over both classes (*best, running, INFINITY to start) among those with
       Gm + y_t G_t > 0, where Gm is Gp for y = +1 and Gn for y = -1 and a_t = QD of i + QD[t] - 2 K_it (TAU when
       not positive) with the class's i (column Kp, Kn; NULL when that class has none: its Gm is -INFINITY, so its
       terms are never taken, and the other column is read in its place); both NULL: the maxima alone. */
    static LLSVM_SELECT_CLONES void llsvm_select_nu_j(const signed char* restrict y, const double* restrict G,
                                                      const char* restrict st, const double* restrict QD,
                                                      const float* restrict Kp, const float* restrict Kn,
                                                      double QDp, double QDn, double Gp, double Gn, double tau,
                                                      int64_t lo, int64_t hi, double* tp, double* tn, double* best,
                                                      int64_t* at) {
        double vp[LLSVM_SELECT_BLOCK], vn[LLSVM_SELECT_BLOCK], o[LLSVM_SELECT_BLOCK];
        double obj_min = *best;
        int64_t j = *at, b, n, k;
        const float* A = Kp != NULL ? Kp : Kn;
        const float* B = Kn != NULL ? Kn : Kp;
        uint64_t gpb, gnb;
        memcpy(&gpb, &Gp, 8);
        memcpy(&gnb, &Gn, 8);
        for (b = lo; b < hi; b += n) {
            n = hi - b < LLSVM_SELECT_BLOCK ? hi - b : LLSVM_SELECT_BLOCK;
            if (A != NULL) {
                for (k = 0; k < n; k++) {
                    int64_t up;
                    double s;
                    int64_t in = llsvm_low(y, G, st, b + k, &up, &s);
                    /* the class's Gmax by its bits (a select between the two values kept GCC from vectorising) */
                    uint64_t m = -(uint64_t)up, gb = (m & gpb) | (~m & gnb);
                    double gm;
                    memcpy(&gm, &gb, 8);
                    double diff = gm + s;
                    double ka = (double)A[b + k], kb = (double)B[b + k];     /* both read: no branch */
                    double kv = up ? ka : kb;
                    double quad = (up ? QDp : QDn) + QD[b + k] - 2.0 * kv;
                    double obj = -(diff * diff) / (quad > 0.0 ? quad : tau);
                    vp[k] = (in & up) ? s : NAN;
                    vn[k] = (in & (up ^ 1)) ? s : NAN;
                    o[k] = (in & (diff > 0.0)) ? -obj : NAN;  /* negated: the smallest obj is the largest -obj */
                }
                llsvm_block_obj(o, n, b, &obj_min, &j);
            } else {
                for (k = 0; k < n; k++) {
                    int64_t up;
                    double s;
                    int64_t in = llsvm_low(y, G, st, b + k, &up, &s);
                    vp[k] = (in & up) ? s : NAN;
                    vn[k] = (in & (up ^ 1)) ? s : NAN;
                }
            }
            llsvm_block_top(vp, n, tp);
            llsvm_block_top(vn, n, tn);
        }
        *best = obj_min;
        *at = j;
    }
    """
    void llsvm_select_i(const signed char* y, const double* G, const char* st, int64_t lo, int64_t hi,
                        double* best, int64_t* at) noexcept nogil
    void llsvm_select_nu_i(const signed char* y, const double* G, const char* st, int64_t lo, int64_t hi,
                           double* bp, int64_t* ap, double* bn, int64_t* an) noexcept nogil
    void llsvm_select_nu_j(const signed char* y, const double* G, const char* st, const double* QD,
                           const float* Kp, const float* Kn, double QDp, double QDn, double Gp, double Gn,
                           double tau, int64_t lo, int64_t hi, double* tp, double* tn, double* best,
                           int64_t* at) noexcept nogil
    void llsvm_select_j(const signed char* y, const double* G, const char* st, const double* QD, const float* Ki,
                        double QDi, double Gmax, double tau, int64_t lo, int64_t hi, double* top, double* best,
                        int64_t* at) noexcept nogil


cdef inline void _select_i(const Work* w, int64_t lo, int64_t hi, double* Gmax_out, int64_t* i_out) noexcept nogil:
    """_select's first pass over positions [lo, hi): the largest -y_t G_t over I_up (t not at its bound: the upper
    for y = +1, the lower for y = -1), ties to the later position; -INFINITY and -1 when none (llsvm_select_i)."""
    Gmax_out[0] = -INFINITY
    i_out[0] = -1
    llsvm_select_i(w.y, w.G, w.status, lo, hi, Gmax_out, i_out)


cdef inline void _select_j(const Work* w, int64_t lo, int64_t hi, int64_t i, const float* Ki, double Gmax,
                           double* Gmax2_out, double* best_out, int64_t* j_out) noexcept nogil:
    """_select's second pass over positions [lo, hi) of I_low (t not at its lower bound for y = +1, its upper for
    y = -1): Gmax2, the largest y_t G_t; j, the t of the smallest obj = -(Gmax + y_t G_t)^2 / a_t among those with
    Gmax + y_t G_t > 0 (a_t = K_ii + K_tt - 2 K_it, TAU when not positive; LIBSVM's 2 y_t y_i Q_it, where the
    signs cancel exactly), ties to the later position (none: i < 0) (llsvm_select_j)."""
    Gmax2_out[0] = -INFINITY
    best_out[0] = INFINITY
    j_out[0] = -1
    llsvm_select_j(w.y, w.G, w.status, w.QD, Ki if i >= 0 else NULL, w.QD[i] if i >= 0 else 0.0, Gmax, TAU, lo,
                   hi, Gmax2_out, best_out, j_out)


def select_pair(const signed char[::1] y not None, const double[::1] G not None, const signed char[::1] status not None,
                const double[::1] QD not None, const float[:, ::1] K not None):
    """Test hook: _select's two passes over positions [0, l) (one part), the kernel's column i read from row i of
    K (l x l): (i, Gmax, j, Gmax2, best), i and j -1 for none. status: 0 at the lower bound, 1 the upper, 2 free."""
    cdef int64_t l = y.shape[0], i = -1, j = -1
    cdef double Gmax = -INFINITY, Gmax2 = -INFINITY, best = INFINITY
    if G.shape[0] != l or status.shape[0] != l or QD.shape[0] != l or K.shape[0] != l or K.shape[1] != l:
        raise ValueError("y, G, status, QD and K must be of one length l (K: l x l)")
    if l == 0:
        return i, Gmax, j, Gmax2, best
    with nogil:
        llsvm_select_i(&y[0], &G[0], <const char*>&status[0], 0, l, &Gmax, &i)
        llsvm_select_j(&y[0], &G[0], <const char*>&status[0], &QD[0], &K[i, 0] if i >= 0 else NULL,
                       QD[i] if i >= 0 else 0.0, Gmax, TAU, 0, l, &Gmax2, &best, &j)
    return i, Gmax, j, Gmax2, best


def select_pair_nu(const signed char[::1] y not None, const double[::1] G not None,
                   const signed char[::1] status not None, const double[::1] QD not None,
                   const float[:, ::1] K not None):
    """Test hook: _select_nu's two passes over positions [0, l), the kernel's columns ip and in read from rows ip
    and in of K (l x l): (ip, Gmaxp, in, Gmaxn, j, Gmaxp2, Gmaxn2, best), -1 for none."""
    cdef int64_t l = y.shape[0], ip = -1, iN = -1, j = -1
    cdef double Gmaxp = -INFINITY, Gmaxn = -INFINITY, Gmaxp2 = -INFINITY, Gmaxn2 = -INFINITY, best = INFINITY
    if G.shape[0] != l or status.shape[0] != l or QD.shape[0] != l or K.shape[0] != l or K.shape[1] != l:
        raise ValueError("y, G, status, QD and K must be of one length l (K: l x l)")
    if l == 0:
        return ip, Gmaxp, iN, Gmaxn, j, Gmaxp2, Gmaxn2, best
    with nogil:
        llsvm_select_nu_i(&y[0], &G[0], <const char*>&status[0], 0, l, &Gmaxp, &ip, &Gmaxn, &iN)
        llsvm_select_nu_j(&y[0], &G[0], <const char*>&status[0], &QD[0], &K[ip, 0] if ip >= 0 else NULL,
                          &K[iN, 0] if iN >= 0 else NULL, QD[ip] if ip >= 0 else 0.0, QD[iN] if iN >= 0 else 0.0,
                          Gmaxp, Gmaxn, TAU, 0, l, &Gmaxp2, &Gmaxn2, &best, &j)
    return ip, Gmaxp, iN, Gmaxn, j, Gmaxp2, Gmaxn2, best


cdef inline int64_t _parts(KernelCache cache, int64_t n) noexcept nogil:
    """The parts a pass over positions [0, n) is cut into, one a thread: the cache's threads (at most
    SELECT_MAX_PARTS) from SELECT_PARALLEL_MIN positions on, else 1. _select's passes, the gradient's update and
    G_bar's take the same parts, part c the positions [n c / parts, n (c + 1) / parts) on OpenMP's thread c (static
    schedule), so that each thread keeps reading and writing the same positions of G and of the columns (the cache
    fills a column's entries one contiguous part a thread too) instead of moving them between the cores' caches at
    every pair."""
    if cache.n_threads > 1 and n >= SELECT_PARALLEL_MIN:
        return cache.n_threads if cache.n_threads < SELECT_MAX_PARTS else SELECT_MAX_PARTS
    return 1


cdef bint _select(KernelCache cache, Work* w, int64_t n, int64_t* out_i, int64_t* out_j,
                  double* gap_out) noexcept nogil:
    """The working pair over positions [0, n); True (optimal) when m - M < eps or there is no j. From
    SELECT_PARALLEL_MIN positions on, with a cache of several threads, each pass is cut into contiguous parts, one a
    thread (OpenMP), whose results are merged in the parts' order by the same comparisons (>=, <=: the later part
    wins a tie): the very pair and gap of one pass over [0, n)."""
    cdef int64_t i = -1, j = -1, c, nparts = _parts(cache, n)
    cdef double Gmax = -INFINITY, Gmax2 = -INFINITY, best = INFINITY
    cdef int64_t pi[SELECT_MAX_PARTS]       # each part's i and j
    cdef int64_t pj[SELECT_MAX_PARTS]
    cdef double pg[SELECT_MAX_PARTS]        # each part's Gmax, Gmax2 and best
    cdef double pg2[SELECT_MAX_PARTS]
    cdef double pb[SELECT_MAX_PARTS]
    cdef const float* Ki = NULL
    if nparts == 1:
        _select_i(w, 0, n, &Gmax, &i)
    else:
        for c in prange(nparts, num_threads=nparts, schedule="static"):
            _select_i(w, n * c // nparts, n * (c + 1) // nparts, &pg[c], &pi[c])
        for c in range(nparts):
            if pi[c] >= 0 and pg[c] >= Gmax:
                Gmax = pg[c]
                i = pi[c]
    if i >= 0:
        Ki = cache.get_column(i, n)
    if nparts == 1:
        _select_j(w, 0, n, i, Ki, Gmax, &Gmax2, &best, &j)
    else:
        for c in prange(nparts, num_threads=nparts, schedule="static"):
            _select_j(w, n * c // nparts, n * (c + 1) // nparts, i, Ki, Gmax, &pg2[c], &pb[c], &pj[c])
        for c in range(nparts):
            if pg2[c] >= Gmax2:
                Gmax2 = pg2[c]
            if pj[c] >= 0 and pb[c] <= best:
                best = pb[c]
                j = pj[c]
    gap_out[0] = Gmax + Gmax2
    out_i[0] = i
    out_j[0] = j
    return Gmax + Gmax2 < w.eps or j < 0


cdef bint _select_nu(KernelCache cache, Work* w, int64_t n, int64_t* out_i, int64_t* out_j,
                     double* gap_out) noexcept nogil:
    """Solver_NU's working pair over positions [0, n): i the largest -y_t G_t over I_up within each class (ip for
    y = +1, in for y = -1), j the second-order choice among the same class's I_low; True (optimal) when
    max(m_p - M_p, m_n - M_n) < eps or there is no j. Both passes in blocks (llsvm_select_nu_i, llsvm_select_nu_j:
    LIBSVM's loops' results, as _select's), and in _select's parts (_parts: one a thread, merged in the parts'
    order by the same comparisons, the later part winning a tie)."""
    cdef int64_t ip = -1, iN = -1, j = -1, c, nparts = _parts(cache, n)
    cdef double Gmaxp = -INFINITY, Gmaxp2 = -INFINITY, Gmaxn = -INFINITY, Gmaxn2 = -INFINITY
    cdef double best = INFINITY, QDp = 0.0, QDn = 0.0
    cdef const float* Kp = NULL
    cdef const float* Kn = NULL
    cdef int64_t pp[SELECT_MAX_PARTS]       # each part's ip, in (then j)
    cdef int64_t pn[SELECT_MAX_PARTS]
    cdef double gp[SELECT_MAX_PARTS]        # each part's Gmaxp, Gmaxn (then Gmaxp2, Gmaxn2, best)
    cdef double gn[SELECT_MAX_PARTS]
    cdef double pb[SELECT_MAX_PARTS]
    if nparts == 1:
        llsvm_select_nu_i(w.y, w.G, w.status, 0, n, &Gmaxp, &ip, &Gmaxn, &iN)
    else:
        for c in prange(nparts, num_threads=nparts, schedule="static"):
            gp[c] = -INFINITY
            gn[c] = -INFINITY
            pp[c] = -1
            pn[c] = -1
            llsvm_select_nu_i(w.y, w.G, w.status, n * c // nparts, n * (c + 1) // nparts, &gp[c], &pp[c], &gn[c],
                              &pn[c])
        for c in range(nparts):
            if pp[c] >= 0 and gp[c] >= Gmaxp:
                Gmaxp = gp[c]
                ip = pp[c]
            if pn[c] >= 0 and gn[c] >= Gmaxn:
                Gmaxn = gn[c]
                iN = pn[c]
    if ip >= 0:
        Kp = cache.get_column(ip, n)
        QDp = w.QD[ip]
    if iN >= 0:
        Kn = cache.get_column(iN, n)        # Kp stays valid: the cache holds at least two columns
        QDn = w.QD[iN]
    if nparts == 1:
        llsvm_select_nu_j(w.y, w.G, w.status, w.QD, Kp, Kn, QDp, QDn, Gmaxp, Gmaxn, TAU, 0, n, &Gmaxp2, &Gmaxn2,
                          &best, &j)
    else:
        for c in prange(nparts, num_threads=nparts, schedule="static"):
            gp[c] = -INFINITY
            gn[c] = -INFINITY
            pb[c] = INFINITY
            pp[c] = -1
            llsvm_select_nu_j(w.y, w.G, w.status, w.QD, Kp, Kn, QDp, QDn, Gmaxp, Gmaxn, TAU, n * c // nparts,
                              n * (c + 1) // nparts, &gp[c], &gn[c], &pb[c], &pp[c])
        for c in range(nparts):
            if gp[c] >= Gmaxp2:
                Gmaxp2 = gp[c]
            if gn[c] >= Gmaxn2:
                Gmaxn2 = gn[c]
            if pp[c] >= 0 and pb[c] <= best:
                best = pb[c]
                j = pp[c]
    gap_out[0] = Gmaxp + Gmaxp2 if Gmaxp + Gmaxp2 > Gmaxn + Gmaxn2 else Gmaxn + Gmaxn2
    out_j[0] = j
    if j >= 0:
        out_i[0] = ip if w.y[j] > 0 else iN
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


cdef inline void _pair_step(signed char yi, signed char yj, double* ai, double* aj, double Gi, double Gj,
                            double QDi, double QDj, double Qij, double Ci, double Cj) noexcept nogil:
    """LIBSVM's exact solution of the pair's sub-problem, clipped to the box (svm.cpp's Solver::Solve): the step
    of _update_pair and of the working-set inner solver (_ws_inner)."""
    cdef double quad, delta, diff
    if yi != yj:
        quad = QDi + QDj + 2.0 * Qij
        delta = (-Gi - Gj) / (quad if quad > 0.0 else TAU)
        diff = ai[0] - aj[0]
        ai[0] += delta
        aj[0] += delta
        if diff > 0.0:
            if aj[0] < 0.0:
                aj[0] = 0.0
                ai[0] = diff
        elif ai[0] < 0.0:
            ai[0] = 0.0
            aj[0] = -diff
        if diff > Ci - Cj:
            if ai[0] > Ci:
                ai[0] = Ci
                aj[0] = Ci - diff
        elif aj[0] > Cj:
            aj[0] = Cj
            ai[0] = Cj + diff
    else:
        quad = QDi + QDj - 2.0 * Qij
        delta = (Gi - Gj) / (quad if quad > 0.0 else TAU)
        same_label_step(ai, aj, delta, Ci, Cj)


cdef void _update_pair(Work* w, int64_t i, int64_t j, double Qij) noexcept nogil:
    """LIBSVM's exact solution of the pair's sub-problem, clipped to the box (_pair_step)."""
    _pair_step(w.y[i], w.y[j], &w.alpha[i], &w.alpha[j], w.G[i], w.G[j], w.QD[i], w.QD[j], Qij, _C(w, i), _C(w, j))


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
    d = w.C[i]; w.C[i] = w.C[j]; w.C[j] = d


cdef void _reconstruct_gradient(KernelCache cache, Work* w) noexcept nogil:
    """G of the shrunk positions [active_size, l) from G_bar, p and the free variables. Two loops as LIBSVM's
    (by shrunk column when the free variables are many, else by free column); Q is symmetric, so both add the
    same terms in the same order (the free positions ascending)."""
    cdef int64_t a = w.active_size, l = w.l, i, j, k, nr_free = 0
    cdef int64_t* free_at = NULL
    cdef const float* Ki
    cdef double alpha_i, g
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
        # the free positions listed once, ascending (the same terms in the same order, without a branch on each
        # position's status); without the list's memory, LIBSVM's loop as it is
        free_at = <int64_t*>malloc(max(nr_free, 1) * sizeof(int64_t))
        if free_at != NULL:
            nr_free = 0
            for j in range(a):
                if w.status[j] == FREE:
                    free_at[nr_free] = j
                    nr_free += 1
        for i in range(a, l):
            if stop_requested():            # one column per step (cext/_stop.pyx); the caller then raises
                free(free_at)
                return
            Ki = cache.get_column(i, a)
            if free_at != NULL:
                g = w.G[i]                  # the same additions in the same order, in a register
                for k in range(nr_free):
                    j = free_at[k]
                    g += w.alpha[j] * _q(w.y, i, j, Ki)
                w.G[i] = g
            else:
                for j in range(a):
                    if w.status[j] == FREE:
                        w.G[i] += w.alpha[j] * _q(w.y, i, j, Ki)
        free(free_at)
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
    cdef int64_t q, l = w.l, nparts = _parts(cache, w.l)
    if nparts == 1:
        _bar_step(w.G_bar, w.yd, Ki, c, sign > 0, 0, l)
    else:
        for q in prange(nparts, num_threads=nparts, schedule="static"):
            _bar_step(w.G_bar, w.yd, Ki, c, sign > 0, l * q // nparts, l * (q + 1) // nparts)


cdef inline void _bar_step(double* G_bar, const double* yd, const float* Ki, double c, bint add, int64_t lo,
                           int64_t hi) noexcept nogil:
    """_bar_column over positions [lo, hi). C_i Q_ik = y_k (K_ik (y_i C_i)): the signs factor out exactly, so the
    sum is LIBSVM's bit for bit."""
    cdef int64_t k
    if add:
        for k in range(lo, hi):
            G_bar[k] += yd[k] * (<double>Ki[k] * c)
    else:
        for k in range(lo, hi):
            G_bar[k] -= yd[k] * (<double>Ki[k] * c)


cdef inline void _gradient_step(double* G, const double* yd, const float* Ki, const float* Kj, double dai, double daj,
                                int64_t lo, int64_t hi) noexcept nogil:
    """LIBSVM's G_t += Q_it da_i + Q_jt da_j over positions [lo, hi), with da_i, da_j already times y_i, y_j (see
    _solve)."""
    cdef int64_t t
    for t in range(lo, hi):
        G[t] += yd[t] * (<double>Ki[t] * dai + <double>Kj[t] * daj)


cdef int64_t _solve(KernelCache cache, Work* w, int64_t max_iter, bint shrinking, double* gap_out,
                    bint* converged) noexcept nogil:
    cdef int64_t it = 0, i, j, n, l = w.l, c, nparts
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
        nparts = _parts(cache, n)
        if nparts == 1:
            _gradient_step(G, yd, Ki, Kj, dai, daj, 0, n)
        else:
            for c in prange(nparts, num_threads=nparts, schedule="static"):
                _gradient_step(G, yd, Ki, Kj, dai, daj, n * c // nparts, n * (c + 1) // nparts)
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


cdef struct Out:
    # what one run of the Solver gives besides alpha and G
    int64_t n_iter
    double rho
    double obj
    double gap
    double r
    bint converged


cdef int _reserve(Work* w, int64_t l) noexcept nogil:
    """The work arrays for l variables (grown when smaller, else kept: a run of many problems reuses them), the
    events' buffer emptied; 0, or -1 when memory ran out (the arrays freed, cap 0)."""
    cdef int64_t n = l if l > 0 else 1
    w.ev_n = 0
    w.ev_lost = False
    if w.ev == NULL:
        w.ev_cap = 256
        w.ev = <char*>malloc(w.ev_cap)
    if n > w.cap:
        _release(w)
        # one block: eight arrays of 8-byte entries, then y and status
        w.block = malloc(<size_t>n * (8 * 8 + 2))
        if w.block == NULL:
            return -1
        w.active_set = <int64_t*>w.block
        w.yd = <double*>(w.active_set + n)
        w.p = w.yd + n
        w.alpha = w.p + n
        w.G = w.alpha + n
        w.G_bar = w.G + n
        w.QD = w.G_bar + n
        w.C = w.QD + n
        w.y = <signed char*>(w.C + n)
        w.status = <char*>(w.y + n)
        w.cap = n
    return 0 if w.ev != NULL else -1


cdef void _release(Work* w) noexcept nogil:
    """Free the work arrays (not the events' buffer)."""
    free(w.block)
    w.block = NULL
    w.cap = 0


cdef void _load(KernelCache cache, Work* w, const signed char* y, const double* p, const double* alpha,
                const double* QD, const double* C, double eps, bint shrinking, bint nu) noexcept nogil:
    """The work arrays of the cache's l-row problem by position (the caller's order), and its start gradient."""
    cdef int64_t l = cache.l, k
    w.l = l
    w.active_size = l
    w.eps = eps
    w.unshrink = False
    w.nu = nu
    w.r = 0.0
    w.n_shrink = 0
    w.min_active = l
    for k in range(l):
        w.y[k] = y[k]
        w.yd[k] = 1.0 if y[k] > 0 else -1.0
        w.p[k] = p[k]
        w.alpha[k] = alpha[k]
        w.QD[k] = QD[k]
        w.C[k] = C[k]
        w.active_set[k] = k
        _update_status(w, k)
    _start_gradient(cache, w, shrinking)


cdef int _run(KernelCache cache, Work* w, const signed char* y, const double* p, double* alpha, const double* QD,
              const double* C, double eps, int64_t max_iter, bint shrinking, bint nu, bint restore,
              double* G_out, Out* o) noexcept nogil:
    """LIBSVM's Solver on the cache's l-row problem (w reserved for l): alpha the feasible start, by the caller's
    order, receives the solution, C the box C_i by the caller's order, G_out the final gradient; o the rest, obj
    summed by position as LIBSVM's Solve sums it (before putting the solution back). restore: the cache back in the order it came in (a cache that
    serves again); else it is left permuted, as LIBSVM leaves its own. Returns 0, or 1 when a signal stopped it
    (nothing it gives is then of use)."""
    cdef int64_t l = cache.l, k
    cdef double v = 0.0
    _load(cache, w, y, p, alpha, QD, C, eps, shrinking, nu)
    o.n_iter = _solve(cache, w, max_iter, shrinking, &o.gap, &o.converged)
    if stop_requested():
        return 1
    o.rho = _rho_nu(w) if w.nu else _rho(w)
    o.r = w.r
    for k in range(l):
        v += w.alpha[k] * (w.G[k] + w.p[k])
    o.obj = v / 2
    for k in range(l):
        alpha[w.active_set[k]] = w.alpha[k]
        G_out[w.active_set[k]] = w.G[k]
    if restore:
        # (each swap walks every cached column: seconds with a large -m, so a signal cuts it short)
        for k in range(l):
            if stop_requested():
                return 1
            while w.active_set[k] != k:
                cache.swap(k, w.active_set[k])
                _swap_int(w.active_set, k, w.active_set[k])
    return 0


cdef void _box(const RowView* v, const int64_t* rows, const int64_t* index, int64_t l, const signed char* y,
               double Cp, double Cn, double* C) noexcept nogil:
    """The box of l positions, position k a variable of row rows[index[k]] (rows[k] when index is NULL): C_k =
    row_cost of that row and its class's C (Cp for y = +1, Cn for y = -1), the class's C times the row's weight
    (Cp or Cn itself without weights), once per variable."""
    cdef int64_t k
    for k in range(l):
        C[k] = row_cost(v, rows[index[k]] if index != NULL else rows[k], Cp if y[k] > 0 else Cn)


def solve(KernelCache cache not None, const signed char[::1] y, const double[::1] p, double[::1] alpha,
          double Cp, double Cn, const double[::1] QD, double eps=1e-3, max_iter=None, bint shrinking=True,
          bint nu=False, Channel live=None):
    """LIBSVM's Solver on the cache's l-row problem, in the cache's current order: labels y (+1/-1), linear term
    p, box C_i = Cp or Cn times the weight of the variable's row when the cache's view has row weights (scikit-
    learn's weighted LIBSVM: C_i = W_i C_{y_i}; a DoubledCache's two variables of a row share its weight), QD the
    kernel's diagonal (kernel_diag). alpha is the feasible start and receives the
    solution. shrinking: LIBSVM's -h 1 (the default, as LIBSVM's) or -h 0. The cache is given back in the order
    it came in.

    Returns a dict: n_iter, rho, obj (f at the solution, LIBSVM's sum a_t (G_t + p_t) / 2, summed by position as
    LIBSVM's), gap (m(a) - M(a) over every variable at the last check; after max_iter pairs without shrinking,
    the check before the last pair), G (the final gradient), converged (False when max_iter pairs were made
    first), n_shrink (do_shrinking calls), min_active_size (the smallest active set they left; l if none),
    unshrunk (whether the one-time unshrink at m - M <= 10 eps happened) and events (LIBSVM's progress, bytes of
    '.', '*' and 'W', see the top; None when memory for them ran out), r (Solver_NU's r with nu=True: LIBSVM's
    nu-SVC and nu-SVR, whose pair comes from one class and whose rho and r come from the two classes' free
    variables; 0 otherwise). live: a Channel that receives the events' text as they happen (they are in `events`
    too)."""
    cdef int64_t l = cache.l
    cdef int rc = 0
    if y.shape[0] != l or p.shape[0] != l or alpha.shape[0] != l or QD.shape[0] != l:
        raise ValueError(f"y, p, alpha and QD must have the cache's {l} entries")
    if not (Cp >= 0 and Cn >= 0):
        raise ValueError("C must be >= 0")
    yv = np.asarray(y)
    if not np.all((yv == 1) | (yv == -1)):
        raise ValueError("y must be +1 or -1")
    a0 = np.asarray(alpha)
    Cv = np.empty(l, np.float64)
    cdef double[::1] Cm = Cv
    cdef KernelCache rows_of = (<DoubledCache>cache).inner if isinstance(cache, DoubledCache) else cache
    cdef const int64_t* index = (<DoubledCache>cache).index if isinstance(cache, DoubledCache) else NULL
    if l:
        _box(&rows_of.v, rows_of.rows, index, l, &y[0], Cp, Cn, &Cm[0])
    if np.any(a0 < 0) or np.any(a0 > Cv):
        raise ValueError("the start alpha is outside the box")
    cdef int64_t limit = max(10_000_000, 100 * l) if max_iter is None else int(max_iter)
    cdef double[::1] G_out = np.empty(l, dtype=np.float64)
    cdef Out o
    cdef Work w
    if l == 0:
        # LIBSVM's Solver on no variable (a fold of leave-one-out on one row): the first pass shrinks, where the
        # plain Solver's do_shrinking unshrinks at once ("*", m - M = -inf), then '.', then the final check's '*';
        # rho = (ub + lb) / 2 of no free variable, inf - inf: x86's NaN, its sign bit set (svm-train prints "-nan"),
        # Solver_NU's r too
        return {"n_iter": 0, "rho": -np.nan, "obj": 0.0, "gap": 0.0, "G": np.asarray(G_out), "C": Cv, "converged": True,
                "n_shrink": 1 if shrinking else 0, "min_active_size": 0, "unshrunk": bool(shrinking and not nu),
                "events": b"*.*" if shrinking and not nu else b".*", "r": -np.nan if nu else 0.0}
    memset(&w, 0, sizeof(Work))
    if live is not None:
        w.live = &live.text
    try:
        if _reserve(&w, l) != 0:
            raise MemoryError(f"SMO: the work arrays for {l} variables could not be allocated")
        with nogil:
            rc = _run(cache, &w, &y[0], &p[0], &alpha[0], &QD[0], &Cm[0], eps, limit, shrinking, nu, True,
                      &G_out[0], &o)
        events = (<char*>w.ev)[:w.ev_n] if not w.ev_lost else None
    finally:
        _release(&w)
        free(w.ev)
    check_stop()                            # a solve cut short by a signal is never returned
    return {"n_iter": int(o.n_iter), "rho": float(o.rho), "obj": float(o.obj), "gap": float(o.gap),
            "G": np.asarray(G_out), "C": Cv, "converged": bool(o.converged), "n_shrink": int(w.n_shrink),
            "min_active_size": int(w.min_active), "unshrunk": bool(w.unshrink), "events": events, "r": float(o.r)}


# -- a working set of many variables (issue 49, --ws N; an option, off by default) ---------------------------------
# Problem: the C-SVC dual above (nu = False), solved with fewer synchronisations than one pair per iteration.
# Method: the outer/inner split of ThunderSVM's CSMOSolver and oneDAL's "thunder" SVC (Wen et al., "ThunderSVM: a
# fast SVM library on GPUs and CPUs", JMLR 19(21), 2018; docs/kernel-speed.md): each outer iteration takes a working
# set B of at most q variables (the q/2 largest -y_t G_t over I_up and the q/2 largest y_t G_t over I_low, the
# maximal violators of the first-order rule), fetches their q kernel columns into one q x l block (full length;
# KernelCache.get_block: the cached ones copied, the missing ones computed together, vectorised over the columns and
# shared among the threads by rows, the same floats as get_column's, then cached), solves the sub-problem over B alone by LIBSVM's pair SMO (WSS 2 and the same clipped
# pair step) on the q x q sub-matrix, up to a local gap max(eps, gap_B / 10) or 100 q pairs, then adds the set's
# changes to the whole gradient, G_t += y_t sum_k K_{b_k t} y_{b_k} da_k, in one pass over the block shared among
# the cache's threads (OpenMP, blocks of rows). It stops on LIBSVM's own rule over every variable, m(a) - M(a) < eps
# (checked at each outer iteration on the whole gradient, as _select's), never on the set's local gap nor on
# "no change" (oneDAL's exits): so the model is certified to svm-train's stopping rule, not its path. No shrinking
# (the block reads full columns). rho, obj and the statistics as _run's.
cdef struct WSBuf:
    int64_t q               # the largest set
    int64_t* B              # the set's positions
    float* K                # column B[k] at K + k l
    double* Kbb             # the q x q sub-matrix (row-major, n x n for a set of n)
    double* G               # the set's local gradient
    double* a0              # the set's alpha at the start of the inner solve
    double* dy              # y_b (alpha_b - a0_b) of the variables that moved
    int64_t* moved          # their indices in the set
    double* hv              # the two heaps' scores
    int64_t* ht             #   and positions
    char* inset             # l flags: a position is in the set


cdef inline void _heap_push(double* hv, int64_t* ht, int64_t* n, int64_t cap, double v, int64_t t) noexcept nogil:
    """A min-heap of the cap largest scores (ties: the earlier position kept, as the later one is not larger)."""
    cdef int64_t k, c, par
    if n[0] < cap:
        k = n[0]
        n[0] += 1
        while k > 0:
            par = (k - 1) >> 1
            if hv[par] <= v:
                break
            hv[k] = hv[par]
            ht[k] = ht[par]
            k = par
        hv[k] = v
        ht[k] = t
        return
    if v <= hv[0]:
        return
    k = 0                               # replace the smallest, sift down
    while True:
        c = 2 * k + 1
        if c >= cap:
            break
        if c + 1 < cap and hv[c + 1] < hv[c]:
            c += 1
        if hv[c] >= v:
            break
        hv[k] = hv[c]
        ht[k] = ht[c]
        k = c
    hv[k] = v
    ht[k] = t


cdef int64_t _ws_select(const Work* w, WSBuf* b, int64_t half) noexcept nogil:
    """The set: the `half` largest -y_t G_t over I_up, then the `half` largest y_t G_t over I_low not already in it,
    each only if it can be in a violating pair. Returns its size (inset flags set)."""
    cdef int64_t t, k, n = 0, nu = 0, nl = 0
    cdef double mu = -INFINITY, ml = -INFINITY
    cdef double* hu = b.hv
    cdef double* hl = b.hv + half
    cdef int64_t* tu = b.ht
    cdef int64_t* tl = b.ht + half
    for t in range(w.l):
        if w.y[t] > 0:
            if w.status[t] != UPPER_BOUND:
                _heap_push(hu, tu, &nu, half, -w.G[t], t)
            if w.status[t] != LOWER_BOUND:
                _heap_push(hl, tl, &nl, half, w.G[t], t)
        else:
            if w.status[t] != LOWER_BOUND:
                _heap_push(hu, tu, &nu, half, w.G[t], t)
            if w.status[t] != UPPER_BOUND:
                _heap_push(hl, tl, &nl, half, -w.G[t], t)
    # a variable of I_up pairs with a violation only if -y_t G_t + max {y_s G_s : I_low} > 0 (and I_low's the
    # same way): the others' columns would be fetched for nothing
    for k in range(nu):
        if hu[k] > mu:
            mu = hu[k]
    for k in range(nl):
        if hl[k] > ml:
            ml = hl[k]
    for k in range(nu):
        if hu[k] + ml <= 0.0:
            continue
        b.B[n] = tu[k]
        b.inset[tu[k]] = 1
        n += 1
    for k in range(nl):
        if hl[k] + mu <= 0.0:
            continue
        if not b.inset[tl[k]]:
            b.B[n] = tl[k]
            b.inset[tl[k]] = 1
            n += 1
    return n


cdef int64_t _ws_inner(Work* w, WSBuf* b, int64_t n, int64_t limit) noexcept nogil:
    """LIBSVM's pair SMO (WSS 2, _pair_step) over the set's n variables and its sub-matrix, the gradient local; at
    most `limit` pairs, until the local gap is under max(eps, first gap / 10). Returns the pairs made."""
    cdef int64_t it = 0, i, j, s, t
    cdef double Gmax, Gmax2, best, diff, quad, obj, local = -1.0, ai, aj, dai, daj
    cdef const double* Ki
    cdef const double* Kj
    cdef double* G = b.G
    cdef double* alpha = w.alpha
    cdef const int64_t* B = b.B
    cdef signed char ys
    while it < limit:
        Gmax = -INFINITY
        Gmax2 = -INFINITY
        i = -1
        for s in range(n):
            t = B[s]
            if w.y[t] > 0:
                if w.status[t] != UPPER_BOUND and -G[s] >= Gmax:
                    Gmax = -G[s]
                    i = s
            elif w.status[t] != LOWER_BOUND and G[s] >= Gmax:
                Gmax = G[s]
                i = s
        if i < 0:
            break
        Ki = b.Kbb + i * n
        j = -1
        best = INFINITY
        for s in range(n):
            t = B[s]
            if w.y[t] > 0:
                if w.status[t] == LOWER_BOUND:
                    continue
                diff = Gmax + G[s]
                if G[s] >= Gmax2:
                    Gmax2 = G[s]
            else:
                if w.status[t] == UPPER_BOUND:
                    continue
                diff = Gmax - G[s]
                if -G[s] >= Gmax2:
                    Gmax2 = -G[s]
            if diff > 0.0:
                quad = w.QD[B[i]] + w.QD[t] - 2.0 * Ki[s]
                obj = -(diff * diff) / (quad if quad > 0.0 else TAU)
                if obj <= best:
                    best = obj
                    j = s
        if local < 0.0:
            local = 0.1 * (Gmax + Gmax2)
            if local < w.eps:
                local = w.eps
        if Gmax + Gmax2 < local or j < 0:
            break
        it += 1
        Kj = b.Kbb + j * n
        ai = alpha[B[i]]
        aj = alpha[B[j]]
        _pair_step(w.y[B[i]], w.y[B[j]], &alpha[B[i]], &alpha[B[j]], G[i], G[j], w.QD[B[i]], w.QD[B[j]],
                   w.yd[B[i]] * w.yd[B[j]] * Ki[j], w.C[B[i]], w.C[B[j]])
        dai = (alpha[B[i]] - ai) * w.yd[B[i]]
        daj = (alpha[B[j]] - aj) * w.yd[B[j]]
        for s in range(n):
            G[s] += w.yd[B[s]] * (Ki[s] * dai + Kj[s] * daj)
        _update_status(w, B[i])
        _update_status(w, B[j])
    return it


cdef void _ws_gradient(Work* w, WSBuf* b, int64_t m, int n_threads) noexcept nogil:
    """G_t += y_t sum_k K_{b_k t} dy_k over the m moved variables, in blocks of rows shared among the threads."""
    cdef int64_t l = w.l, nb = (l + 4095) // 4096, c, t, lo, hi, k
    cdef const float* col
    cdef double d
    for c in prange(nb, num_threads=n_threads if nb > 1 else 1, schedule="static"):
        lo = c * 4096
        hi = lo + 4096
        if hi > l:
            hi = l
        for k in range(m):
            col = b.K + b.moved[k] * l
            d = b.dy[k]
            for t in range(lo, hi):
                w.G[t] += w.yd[t] * (<double>col[t] * d)


cdef int _ws_alloc(WSBuf* b, int64_t q, int64_t l) noexcept nogil:
    b.q = q
    b.B = <int64_t*>malloc(q * sizeof(int64_t))
    b.K = <float*>malloc(<size_t>q * <size_t>l * sizeof(float))
    b.Kbb = <double*>malloc(<size_t>q * <size_t>q * sizeof(double))
    b.G = <double*>malloc(q * sizeof(double))
    b.a0 = <double*>malloc(q * sizeof(double))
    b.dy = <double*>malloc(q * sizeof(double))
    b.moved = <int64_t*>malloc(q * sizeof(int64_t))
    b.hv = <double*>malloc(q * sizeof(double))
    b.ht = <int64_t*>malloc(q * sizeof(int64_t))
    b.inset = <char*>calloc(l if l > 0 else 1, 1)
    if (b.B == NULL or b.K == NULL or b.Kbb == NULL or b.G == NULL or b.a0 == NULL or b.dy == NULL
            or b.moved == NULL or b.hv == NULL or b.ht == NULL or b.inset == NULL):
        return -1
    return 0


cdef void _ws_free(WSBuf* b) noexcept nogil:
    free(b.B)
    free(b.K)
    free(b.Kbb)
    free(b.G)
    free(b.a0)
    free(b.dy)
    free(b.moved)
    free(b.hv)
    free(b.ht)
    free(b.inset)


cdef int _run_ws(KernelCache cache, Work* w, const signed char* y, const double* p, double* alpha, const double* QD,
                 const double* C, double eps, int64_t max_iter, int64_t q, double* G_out, Out* o) noexcept nogil:
    """_run's contract (no shrinking, no nu, the cache's order untouched) by the working-set method above, sets of
    at most q variables (q even, 2 <= q). Returns 0, 1 when a signal stopped it, -1 when memory ran out."""
    cdef int64_t l = cache.l, k, s, n, m, it = 0, outer = 0, inner
    cdef double v = 0.0, gap
    cdef WSBuf b
    memset(&b, 0, sizeof(WSBuf))
    if q > 2 * (l // 2):
        q = 2 * (l // 2) if l >= 2 else 2
    if _ws_alloc(&b, q, l) != 0:
        _ws_free(&b)
        return -1
    _load(cache, w, y, p, alpha, QD, C, eps, False, False)
    o.converged = False
    o.gap = INFINITY
    while True:
        if stop_requested():
            break
        gap = _violation(w)                 # LIBSVM's Gmax + Gmax2 over every variable
        o.gap = gap
        if gap < eps:
            o.converged = True
            break
        if it >= max_iter:
            break
        n = _ws_select(w, &b, q // 2)
        if n < 2:
            o.converged = True              # no pair to move: _select's "no j"
            break
        cache.get_block(b.B, n, b.K)      # the set's columns, the missing ones as one block
        if stop_requested():
            break
        for k in range(n):
            b.inset[b.B[k]] = 0
            b.a0[k] = w.alpha[b.B[k]]
            b.G[k] = w.G[b.B[k]]
            for s in range(n):
                b.Kbb[k * n + s] = <double>b.K[k * l + b.B[s]]
        inner = _ws_inner(w, &b, n, min(100 * n, max_iter - it))
        it += inner
        m = 0
        for k in range(n):
            if w.alpha[b.B[k]] != b.a0[k]:
                b.moved[m] = k
                b.dy[m] = w.yd[b.B[k]] * (w.alpha[b.B[k]] - b.a0[k])
                m += 1
        outer += 1
        if outer % 10 == 0:
            _event(w, b'.')
        if m == 0:
            if inner == 0:
                o.converged = True          # the set's best pair does not move: as _select's "no j"
                break
            continue
        _ws_gradient(w, &b, m, cache.n_threads)
    _ws_free(&b)
    if stop_requested():
        return 1
    _event(w, b'*')
    o.n_iter = it
    o.rho = _rho(w)
    o.r = 0.0
    for k in range(l):
        v += w.alpha[k] * (w.G[k] + w.p[k])
    o.obj = v / 2
    for k in range(l):
        alpha[k] = w.alpha[k]
        G_out[k] = w.G[k]
    return 0


cdef inline void _swap_int(int64_t* a, int64_t i, int64_t j) noexcept nogil:
    cdef int64_t t = a[i]
    a[i] = a[j]
    a[j] = t


cdef void _nu_start(const signed char* y, int64_t l, double total, const double* C, double* alpha) noexcept nogil:
    cdef double left_p = total, left_n = total, a
    cdef int64_t t
    for t in range(l):
        if y[t] > 0:
            a = C[t] if C[t] < left_p else left_p
            left_p -= a
        else:
            a = C[t] if C[t] < left_n else left_n
            left_n -= a
        alpha[t] = a


def nu_start(const signed char[::1] y, double total, C, double[::1] alpha):
    """The start of LIBSVM's nu solvers: position by position, alpha_t = min(C_t, what is left of its class's
    total), then subtracted from it; each class starts from `total` (solve_nu_svc: y by class, C_t = 1 (scikit-
    learn's weighted LIBSVM: the row's weight W_t), total nu l / 2 (nu sum W / 2); solve_nu_svr: y all +1, C_t the
    box C (W_t C), total C nu l / 2 (C nu sum W / 2), the same alpha for a_t and a*_t; solve_one_class: y all +1,
    C_t = 1 (W_t), total nu l (nu sum W)). C: one number for every position, or one per position."""
    cdef int64_t l = y.shape[0]
    if alpha.shape[0] != l:
        raise ValueError("y and alpha must have the same length")
    caps = np.full(l, C, np.float64) if np.ndim(C) == 0 else np.ascontiguousarray(C, np.float64)
    if caps.shape != (l,):
        raise ValueError("C must be one number or one per position")
    cdef const double[::1] cv = caps
    if l:
        with nogil:
            _nu_start(&y[0], l, total, &cv[0], &alpha[0])


# -- one-vs-one: every class pair of LIBSVM's C-SVC and nu-SVC (svm_train), -b 1's folds included ------------------
# Problem: the k(k-1)/2 binary problems of svm_train for k classes, each as llsvm/solvers/smo.py sets it out (rows of
# class i (y = +1) then of class j (y = -1), each in file order; the solve from LIBSVM's start; nu-SVC's scaling by
# 1/r; the certificate), and with -b 1 first its Platt scaling, LIBSVM's svm_binary_svc_probability: five folds of
# the pair's rows in the order of a given permutation, each fold's decision values from the SVM trained on the other
# four (positive rows first; a fold whose training rows hold one class gets +1 or -1), summed as svm_predict_values
# sums them (kernel.pxd's kernel_function, the SVs in order, minus rho), then the sigmoid (platt.pxd).
# Method: a pair costs microseconds in LIBSVM, so its set-up, its folds and its lines are made here, in C, without
# a Python object per pair: one scratch kernel cache retargeted to each problem's rows (the same columns, so the same
# values, as a fresh cache), work arrays sized once for the largest pair, and svm-train's lines formatted into a text
# buffer the driver prints (C's "%f" is Python's format(x, "f") for every finite x; nan is written "nan", as
# Python writes it). The sums are LIBSVM's, in its order (obj by position, sum_alpha by row, a fold's decision value
# by SV), so the lines and models are svm-train's. A call runs pairs until a time budget is spent, so the driver
# prints their lines as they come; a signal stops it between two pairs or inside a solve.
# the columns of a pair's statistics (OneVsOne.run's `stats`)
PAIR_STATS = ("n_iter", "rho", "obj", "gap", "primal", "dual", "converged", "nSV", "nBSV", "sum_alpha", "r", "C",
              "probA", "probB")
cdef enum:
    S_ITER = 0
    S_RHO = 1
    S_OBJ = 2
    S_GAP = 3
    S_PRIMAL = 4
    S_DUAL = 5
    S_CONV = 6
    S_NSV = 7
    S_NBSV = 8
    S_SUM = 9
    S_R = 10
    S_C = 11
    S_A = 12
    S_B = 13
    N_STATS = 14

# what OneVsOne.run returns with the next pair: every pair done (or the time budget spent), a pair's solution not
# finite (LIBSVM's model would hold it; the driver refuses it), a fold's not finite (its model is refused)
cpdef enum:
    PAIRS_OK = 0
    PAIR_NOT_FINITE = 1
    FOLD_NOT_FINITE = 2
cdef enum:
    STOPPED = 3
    NO_MEMORY = 4
    NR_FOLD = 5




cdef inline double _now() noexcept nogil:
    cdef timespec ts
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return ts.tv_sec + 1e-9 * ts.tv_nsec


cdef class OneVsOne:
    """OneVsOne(X, sq, params, perm, start, count, first, second, offsets, wC, eps, max_iter, shrinking, nu,
    probability, cache, warn, quiet): the class pairs of a one-vs-one run of LIBSVM's C-SVC (nu None) or nu-SVC
    over the rows of the view X (squared norms sq, kernel `params`): class c's rows are perm[start[c]:start[c] +
    count[c]], pair p is classes (first[p], second[p]) with C wC[first[p]] and wC[second[p]], its rows at
    offsets[p]:offsets[p + 1] of a concatenation of every pair's (its coefficients there, and with -b 1 its fold
    permutation). cache: a KernelCache over X (its rows unused), the scratch every problem is retargeted onto.
    max_iter: < 0 for LIBSVM's limit of each problem. warn: the iteration-limit warning's text; quiet: no text."""
    cdef KernelCache cache
    cdef const int64_t[::1] perm, start, count, first, second, offsets
    cdef const double[::1] wC
    cdef double eps, nu
    cdef int64_t max_iter, n_pairs
    cdef bint shrinking, is_nu, probability
    cdef public bint quiet           # no text
    cdef public int64_t ws          # --ws: C-SVC problems of 2 ws rows or more by the working-set method (_run_ws)
    cdef bytes warn                 # held for warn_p
    cdef const char* warn_p
    cdef int64_t warn_n
    cdef Work w
    cdef Text text
    cdef void* block                # the arrays below
    cdef int64_t* rows
    cdef signed char* y
    cdef int64_t* sub
    cdef int64_t* sub_rows
    cdef signed char* sub_y
    cdef double* sub_coef
    cdef double* alpha
    cdef double* p
    cdef double* QD
    cdef double* G
    cdef double* dec
    cdef double* t
    cdef double* C                  # the box C_i of the problem's rows (row_cost)
    cdef double fold[N_STATS]
    cdef readonly double fail_rho          # FOLD_NOT_FINITE: the fold's rho, and its first SV (index, coefficient)
    cdef readonly int64_t fail_sv          #   whose coefficient is not finite (-1: rho is not)
    cdef readonly double fail_coef

    def __cinit__(self):
        memset(&self.w, 0, sizeof(Work))
        memset(&self.text, 0, sizeof(Text))
        self.block = NULL
        self.text.lock = PyThread_allocate_lock()     # take_text() may run in a thread while run() solves
        if self.text.lock == NULL:
            raise MemoryError("a lock for the one-vs-one text could not be allocated")

    def __init__(self, KernelCache cache not None, const int64_t[::1] perm, const int64_t[::1] start,
                 const int64_t[::1] count, const int64_t[::1] first, const int64_t[::1] second,
                 const int64_t[::1] offsets, const double[::1] wC, double eps, int64_t max_iter, bint shrinking, nu,
                 bint probability, bytes warn not None, bint quiet):
        cdef int64_t k = count.shape[0], q, n = 0, big = 1
        if start.shape[0] != k or wC.shape[0] != k or first.shape[0] != second.shape[0] or \
                offsets.shape[0] != first.shape[0] + 1:
            raise ValueError("start, count and wC need one entry per class, offsets one per pair and one")
        for q in range(k):
            if count[q] < 1 or start[q] != n:
                raise ValueError("every class needs rows, grouped in class order")
            n += count[q]
        if perm.shape[0] != n:
            raise ValueError(f"perm has {perm.shape[0]} rows, the classes {n}")
        for q in range(n):
            if perm[q] < 0 or perm[q] >= cache.v.n_rows:
                raise ValueError(f"row {perm[q]} out of range for a view of {cache.v.n_rows} rows")
        if offsets[0] != 0:
            raise ValueError("offsets start at 0")
        for q in range(first.shape[0]):
            if not (0 <= first[q] < second[q] < k) or offsets[q + 1] - offsets[q] != count[first[q]] + count[second[q]]:
                raise ValueError(f"pair {q}: classes ({first[q]}, {second[q]}) or its offsets are wrong")
            big = max(big, offsets[q + 1] - offsets[q])
        self.cache = cache
        self.perm, self.start, self.count, self.first, self.second = perm, start, count, first, second
        self.offsets, self.wC = offsets, wC
        self.n_pairs = first.shape[0]
        self.eps = eps
        self.max_iter = max_iter
        self.shrinking = shrinking
        self.is_nu = nu is not None
        self.nu = float(nu) if nu is not None else 0.0
        self.probability = probability
        self.warn = warn
        self.warn_p = self.warn
        self.warn_n = len(warn)
        self.quiet = quiet
        # one block: eleven arrays of 8-byte entries, then the two of labels
        self.block = malloc(<size_t>big * (11 * 8 + 2))
        if self.block == NULL or _reserve(&self.w, big) != 0:
            raise MemoryError(f"one-vs-one: the work arrays of a pair of {big} rows could not be allocated")
        self.rows = <int64_t*>self.block
        self.sub = self.rows + big
        self.sub_rows = self.sub + big
        self.sub_coef = <double*>(self.sub_rows + big)
        self.alpha = self.sub_coef + big
        self.p = self.alpha + big
        self.QD = self.p + big
        self.G = self.QD + big
        self.dec = self.G + big
        self.t = self.dec + big
        self.C = self.t + big
        self.y = <signed char*>(self.C + big)
        self.sub_y = self.y + big

    def __dealloc__(self):
        _release(&self.w)
        free(self.w.ev)
        free(self.text.buf)
        if self.text.lock != NULL:
            PyThread_free_lock(self.text.lock)
        free(self.block)

    cdef int _problem(self, KernelCache c, const int64_t* rows, const signed char* y, int64_t l, double Cp,
                      double Cn, double* coef, double* st, bint restore) noexcept nogil:
        """One binary problem over rows[0..l-1] of the view (labels y), c the kernel cache of those rows: coef the
        signed coefficients alpha_t y_t, st its statistics (PAIR_STATS; probA and probB untouched); nu-SVC's
        scaled by 1/r (LIBSVM's solve_nu_svc). smo.py's solve_pair, step for step. Row weights (the view's, through
        row_cost): C_t = W_t Cp or W_t Cn (C-SVC); the box W_t and each class's sum nu sum W / 2 (nu-SVC), as
        scikit-learn's weighted LIBSVM (sum W = l without weights)."""
        cdef int64_t k, lim, nsv = 0, nbsv = 0
        cdef int rc
        cdef double s, Ck, h, aQa = 0.0, hinge = 0.0, sum_alpha = 0.0, r, inv, rho, obj, total = 0.0
        cdef Out o
        _box(&c.v, rows, NULL, l, y, 1.0 if self.is_nu else Cp, 1.0 if self.is_nu else Cn, self.C)
        for k in range(l):
            s = c.sq[rows[k]]                   # kernel_sq_norms: |x|^2, or the precomputed kernel's k(x, x)
            self.QD[k] = kernel_from_dot(&c.params, s, s, s)
        if self.is_nu:
            for k in range(l):
                total += self.C[k]              # sum W: l, exactly, without weights
            _nu_start(y, l, self.nu * total / 2, self.C, self.alpha)    # LIBSVM's start: each class's first rows
            for k in range(l):                                           # at their box
                self.p[k] = 0.0
        else:
            for k in range(l):
                self.alpha[k] = 0.0
                self.p[k] = -1.0
        if self.max_iter >= 0:
            lim = self.max_iter
        else:                                   # LIBSVM's max(10^7, 100 l), INT_MAX beyond it
            lim = 2147483647 if l > 2147483647 // 100 else 100 * l
            if lim < 10000000:
                lim = 10000000
        if _reserve(&self.w, l) != 0:
            return NO_MEMORY
        self.w.live = NULL if self.quiet else &self.text   # the Solver's progress into the text as it runs
        if self.ws > 0 and not self.is_nu and l >= 2 * self.ws:
            rc = _run_ws(c, &self.w, y, self.p, self.alpha, self.QD, self.C, self.eps, lim, self.ws, self.G, &o)
            if rc < 0:
                return NO_MEMORY
            if rc:
                return STOPPED
        elif _run(c, &self.w, y, self.p, self.alpha, self.QD, self.C, self.eps, lim, self.shrinking, self.is_nu,
                  restore, self.G, &o):
            return STOPPED
        rho = o.rho
        obj = o.obj
        if self.is_nu:
            # r = 0 (a degenerate kernel) gives inf and nan, as LIBSVM's, which the caller refuses
            r = o.r
            inv = 1.0 / r
            Cp = Cn = inv
            for k in range(l):
                self.C[k] *= inv                # LIBSVM: upper_bound[i] /= r (W_t / r; 1 / r without weights)
                self.alpha[k] *= inv            # LIBSVM: alpha[i] *= y[i] / r
                self.G[k] = self.G[k] / r - 1.0  # the C-SVC's gradient Q a - e at the scaled alpha
            rho = rho / r
            obj = obj / (r * r)
        # G_t + 1 = y_t sum_s alpha_s y_s K_ts, so y_t f(x_t) = G_t + 1 - y_t rho and a'Qa = a'(G + 1)
        for k in range(l):
            Ck = self.C[k]
            aQa += self.alpha[k] * (self.G[k] + 1.0)
            h = -self.G[k] + y[k] * rho
            if h < 0.0:
                h = 0.0
            hinge += Ck * h
            sum_alpha += self.alpha[k]
            if self.alpha[k] != 0.0:
                nsv += 1
                if fabs(self.alpha[k]) >= Ck:
                    nbsv += 1
            coef[k] = self.alpha[k] * y[k]
        st[S_ITER] = o.n_iter
        st[S_RHO] = rho
        st[S_OBJ] = obj
        st[S_GAP] = o.gap
        st[S_PRIMAL] = 0.5 * aQa + hinge
        st[S_DUAL] = sum_alpha - 0.5 * aQa
        st[S_CONV] = o.converged
        st[S_NSV] = nsv
        st[S_NBSV] = nbsv
        st[S_SUM] = sum_alpha
        st[S_R] = o.r if self.is_nu else 0.0
        st[S_C] = Cp
        return 0

    cdef void _lines(self, const double* st, int64_t l, double Cp, double Cn) noexcept nogil:
        """svm-train's lines of the problem just solved (smo.py's report_problem), after the Solver's progress
        (in the text already: Work.live): the iteration-limit warning, `optimization finished`, nu-SVC's `C = ` or C-SVC's `nu = ` (when Cp = Cn > 0),
        `obj, rho`, `nSV, nBSV`."""
        cdef Text* t = &self.text
        if self.quiet:
            return
        if not st[S_CONV]:
            _put(t, self.warn_p, self.warn_n)
        _puts(t, "\noptimization finished, #iter = ")
        _puti(t, <int64_t>st[S_ITER])
        if self.is_nu:
            _puts(t, "\nC = ")
            _putf(t, st[S_C])
        elif Cp == Cn and Cp > 0:
            _puts(t, "\nnu = ")
            _putf(t, st[S_SUM] / (Cp * <double>l))
        _puts(t, "\nobj = ")
        _putf(t, st[S_OBJ])
        _puts(t, ", rho = ")
        _putf(t, st[S_RHO])
        _puts(t, "\nnSV = ")
        _puti(t, <int64_t>st[S_NSV])
        _puts(t, ", nBSV = ")
        _puti(t, <int64_t>st[S_NBSV])
        _puts(t, "\n")

    cdef double _kernel(self, int64_t a, int64_t b) noexcept nogil:
        """k(x_a, x_b) as svm_predict_values computes it (Kernel::k_function)."""
        if self.cache.f32:
            return kernel_function(&self.cache.params, &self.cache.v, a, &self.cache.v, b, <float*>NULL,
                                   <float*>NULL)
        return kernel_function(&self.cache.params, &self.cache.v, a, &self.cache.v, b, <double*>NULL, <double*>NULL)

    cdef int _probability(self, const int64_t* rows, const signed char* y, int64_t l, double Cp, double Cn,
                          const int64_t* fp, double* st) noexcept nogil:
        """-b 1's (probA, probB) of the pair over rows[0..l-1] (labels y) into st, its folds in the order fp (smo.py's
        svc_probability; every fold's training prints its lines and `Total nSV`, as LIBSVM's nested svm_train)."""
        cdef int64_t k, q, m, begin, end, n_pos, n_neg, a, nsv, pos
        cdef double d, s, rho, A = 0.0, B = 0.0
        cdef double* fst = self.fold
        cdef int rc
        for k in range(NR_FOLD):
            begin = k * l // NR_FOLD
            end = (k + 1) * l // NR_FOLD
            n_pos = 0
            for q in range(begin):
                n_pos += y[fp[q]] > 0
            for q in range(end, l):
                n_pos += y[fp[q]] > 0
            n_neg = l - (end - begin) - n_pos
            if n_pos == 0 or n_neg == 0:
                d = 0.0 if n_pos == n_neg else (1.0 if n_pos else -1.0)
                for q in range(begin, end):
                    self.dec[fp[q]] = d
                continue
            # the training rows, positive first (svm_train's grouping of the sub-problem), each in fold order
            m = 0
            for a in range(2):
                for q in range(l):
                    if begin <= q < end:
                        continue
                    pos = fp[q]
                    if (y[pos] > 0) == (a == 0):
                        self.sub[m] = pos
                        m += 1
            for q in range(m):
                self.sub_rows[q] = rows[self.sub[q]]
                self.sub_y[q] = y[self.sub[q]]
            if self.cache.retarget(self.sub_rows, m) != 0:
                return NO_MEMORY
            rc = self._problem(self.cache, self.sub_rows, self.sub_y, m, Cp, Cn, self.sub_coef, fst, False)
            if rc:
                return rc
            self._lines(fst, m, Cp, Cn)
            if not self.quiet:
                _puts(&self.text, "Total nSV = ")
                _puti(&self.text, <int64_t>fst[S_NSV])
                _puts(&self.text, "\n")
            # the fold's model is refused, as SVMModel refuses it, when rho or an SV's coefficient is not finite
            rho = fst[S_RHO]
            self.fail_rho = rho
            self.fail_sv = -1
            if not isfinite(rho):
                return FOLD_NOT_FINITE
            nsv = 0
            for q in range(m):
                if self.sub_coef[q] != 0.0:
                    if not isfinite(self.sub_coef[q]):
                        self.fail_sv = nsv
                        self.fail_coef = self.sub_coef[q]
                        return FOLD_NOT_FINITE
                    nsv += 1
            for q in range(begin, end):
                if stop_requested():
                    return STOPPED
                if nsv == 0:
                    d = -rho
                else:
                    s = 0.0
                    for a in range(m):
                        if self.sub_coef[a] != 0.0:
                            s += self.sub_coef[a] * self._kernel(rows[fp[q]], self.sub_rows[a])
                    d = s - rho
                self.dec[fp[q]] = d
        rc = sigmoid_fit(self.dec, y, l, self.t, &A, &B)
        if not self.quiet:
            if rc == 1:
                _puts(&self.text, "Line search fails in two-class probability estimates\n")
            elif rc == 2:
                _puts(&self.text, "Reaching maximal iterations in two-class probability estimates\n")
        st[S_A] = A
        st[S_B] = B
        return 0

    cdef int _pair(self, int64_t q, KernelCache held, bint use_held, const int64_t* fp, double* coef,
                   double* st) noexcept nogil:
        """Pair q: -b 1's scaling first (as LIBSVM's svm_train), then its own solve, over `held` (kept for another
        solve: put back in order) or the scratch cache. PAIR_NOT_FINITE (before its lines) when its rho or a
        coefficient is not finite."""
        cdef int64_t i = self.first[q], j = self.second[q], ci = self.count[i], cj = self.count[j], l = ci + cj, k
        cdef double Cp = self.wC[i], Cn = self.wC[j]
        cdef int rc
        for k in range(ci):
            self.rows[k] = self.perm[self.start[i] + k]
            self.y[k] = 1
        for k in range(cj):
            self.rows[ci + k] = self.perm[self.start[j] + k]
            self.y[ci + k] = -1
        if self.probability:
            rc = self._probability(self.rows, self.y, l, Cp, Cn, fp, st)
            if rc:
                return rc
        if use_held:
            rc = self._problem(held, self.rows, self.y, l, Cp, Cn, coef, st, True)
        elif self.cache.retarget(self.rows, l) != 0:
            return NO_MEMORY
        else:
            rc = self._problem(self.cache, self.rows, self.y, l, Cp, Cn, coef, st, False)
        if rc:
            return rc
        if not isfinite(st[S_RHO]):
            return PAIR_NOT_FINITE
        for k in range(l):
            if not isfinite(coef[k]):
                return PAIR_NOT_FINITE
        self._lines(st, l, Cp, Cn)
        return 0

    def run(self, int64_t p0, int64_t p1, double seconds, double[::1] coef, double[:, ::1] stats, perms=None,
            KernelCache held=None):
        """Pairs p0, p0 + 1, ... up to p1 (excluded), until one ends `seconds` or more after the call began: pair p's
        coefficients into coef[offsets[p] - offsets[p0]:], its statistics into row p - p0 of stats (PAIR_STATS),
        with -b 1 its folds from perms[offsets[p] - offsets[p0]:] (positions within the pair). held: the kernel
        cache of pair p0's rows (p1 = p0 + 1), used and given back in its order. Returns (the next pair, status):
        PAIRS_OK, or PAIR_NOT_FINITE / FOLD_NOT_FINITE at that pair (its text so far is in take_text()). A signal
        raises (SystemExit, cext/_stop.pyx)."""
        cdef int64_t q = p0, base, t
        cdef int rc = 0
        cdef double t0
        cdef const int64_t[::1] fp
        cdef bint use_held = held is not None
        if not 0 <= p0 <= p1 <= self.n_pairs:
            raise ValueError(f"pairs {p0}..{p1} out of range (0..{self.n_pairs})")
        base = self.offsets[p0]
        if coef.shape[0] < self.offsets[p1] - base or stats.shape[0] < p1 - p0 or stats.shape[1] != N_STATS:
            raise ValueError("coef and stats are too small for the pairs")
        if use_held and (p1 != p0 + 1 or held.l != self.offsets[p1] - base or held.v.indptr != self.cache.v.indptr
                         or held.v.indices != self.cache.v.indices or held.v.values != self.cache.v.values):
            raise ValueError("a held cache serves one pair of its own rows")
        if self.probability:
            if perms is None:
                raise ValueError("-b 1 needs the pairs' fold permutations")
            fp = perms
            if fp.shape[0] < self.offsets[p1] - base:
                raise ValueError("perms are too short for the pairs")
            for q in range(p0, p1):
                for t in range(self.offsets[q] - base, self.offsets[q + 1] - base):
                    if not 0 <= fp[t] < self.offsets[q + 1] - self.offsets[q]:
                        raise ValueError(f"pair {q}'s fold permutation holds a position outside the pair")
            q = p0
        if p1 == p0:
            return p0, PAIRS_OK
        with nogil:
            t0 = _now()
            while q < p1:
                if stop_requested():
                    rc = STOPPED
                    break
                rc = self._pair(q, held, use_held, &fp[self.offsets[q] - base] if self.probability else NULL,
                                &coef[self.offsets[q] - base], &stats[q - p0, 0])
                if rc:
                    break
                q += 1
                if _now() - t0 >= seconds:
                    break
        check_stop()
        if rc == NO_MEMORY or self.text.lost:
            self.text.n = 0
            self.text.lost = False
            raise MemoryError("one-vs-one: memory ran out for a pair's kernel cache, work arrays or lines")
        return q, rc

    def take_text(self):
        """The lines of the pairs run since the last call (svm-train's), and forget them; also from another thread
        while run() solves (the progress as it comes)."""
        return _take(&self.text)


def ovo_model(const double[::1] coef, const int64_t[::1] offsets, const int64_t[::1] start,
              const int64_t[::1] count):
    """The model of one-vs-one pairs' coefficients (concatenated in pair order, pair p at offsets[p]; classes
    grouped, class c at start[c], count[c] rows): (sv, nSV, sv_coef) with sv the grouped positions of the support
    vectors (a row is one when its coefficient is non-zero in any of its pairs), nSV their count per class and
    sv_coef (k - 1, total_sv): sv_coef[j-1] the coefficients of class i's SVs in pair (i, j), sv_coef[i] those of
    class j's (LIBSVM's svm_train)."""
    cdef int64_t k = count.shape[0], n = 0, i, j, t, q, base, total = 0, c
    for c in range(k):
        n += count[c]
    if offsets.shape[0] != k * (k - 1) // 2 + 1 or (k and offsets[offsets.shape[0] - 1] != (k - 1) * n) or \
            coef.shape[0] < offsets[offsets.shape[0] - 1]:
        raise ValueError("offsets and coef must hold every pair")
    nz_arr = np.zeros(max(n, 1), np.int64)
    nsv_arr = np.zeros(k, np.int64)
    cdef int64_t[::1] nz = nz_arr            # 0, then the SV's index + 1
    cdef int64_t[::1] nsv = nsv_arr
    with nogil:
        q = 0
        for i in range(k):
            for j in range(i + 1, k):
                base = offsets[q]
                for t in range(count[i]):
                    if coef[base + t] != 0.0:
                        nz[start[i] + t] = 1
                base += count[i]
                for t in range(count[j]):
                    if coef[base + t] != 0.0:
                        nz[start[j] + t] = 1
                q += 1
        for c in range(k):
            for t in range(start[c], start[c] + count[c]):
                if nz[t]:
                    nsv[c] += 1
                    total += 1
                    nz[t] = total
    sv_coef_arr = np.zeros((max(k - 1, 0), total), np.float64)
    cdef double[:, ::1] sc = sv_coef_arr
    if total:
        with nogil:
            q = 0
            for i in range(k):
                for j in range(i + 1, k):
                    base = offsets[q]
                    for t in range(count[i]):
                        if nz[start[i] + t]:
                            sc[j - 1, nz[start[i] + t] - 1] = coef[base + t]
                    base += count[i]
                    for t in range(count[j]):
                        if nz[start[j] + t]:
                            sc[i, nz[start[j] + t] - 1] = coef[base + t]
                    q += 1
    return np.flatnonzero(nz_arr[:n]), nsv_arr, sv_coef_arr
