# Linear SVMs from 1-D projections (Schneider, Bogojeska, Vlachos, "Solving Linear SVMs with Multiple 1D
# Projections", CIKM 2014; the corrections implemented here: docs/solvers.md, "1-D projections: the printed errors
# and the corrections implemented").
#
# Problem (eq. 1-3 with p = 1): min_{w,b} ||w||^2/2 + sum_i C_i max(0, 1 - y_i (w.x_i + b)), y_i in {-1,+1}, the bias
# b unregularised, C_i = Cp for y_i = +1 and Cn for y_i = -1. Every solver here restricts w to a line w = v L and
# solves the 1-D problem in (v, b) on the projections p_i = x_i.L:
#
# 1. SVM1D (Algorithm 1), the sorted scan: class +1 ascending (PLS_1), class -1 descending (PLS_-1); for
#    i = 0 .. min(n+, n-) - 1 (the paper's i - 1) the hyperplane through PLS_1(i) (margin +1) and PLS_-1(i)
#    (margin -1) has v = 2 / (PLS_1(i) - PLS_-1(i)), kept if v > 0 (the corrected line 9), b = 1 - PLS_1(i) v, and
#    exactly i violators per class; their hinge sum is (corrected line 11) 2i - v (P_1(i) - P_-1(i)) with the prefix
#    sums P_c(i) = sum_{k<i} PLS_c(k) (per class with Cp != Cn: Cp v (i a - P_1) + Cn v (P_-1 - i q)). The loss is
#    scale2 v^2/2 + C zeta, scale2 = ||L||^2 (1 for a unit direction), so it is the primal of w = v L. The first
#    minimum is kept (strict <); no pair with v > 0 gives an infinite loss. The scan is not the 1-D optimum in
#    general (it never tries v <= 0 or interior optima): that is
# 2. the exact 1-D solver (`--oned exact`): h(v) = scale2 v^2/2 + min_b sum_i C_i hinge is convex in v; b*(v) is the
#    weighted median of the breakpoints {1 - v p_i} (+1 rows, weight Cp) and {-1 - v p_j} (-1 rows, weight Cn), read
#    in order from the sorted classes; v is found by golden-section search on [-V, V], V = sqrt(2 h(0) / scale2).
# 3. LocalSVM (Algorithm 3), the whole loop in `local_svm`: phases of d coordinate steps with the step t adapted
#    after each phase by the factor curr (2 or 1/2) and the threshold thres, exactly as the pseudocode (quirks kept:
#    -t tried before +t, `<=` accepts ties; must-fix: an infinite loss is never accepted). Each step projects on
#    w_min +- t e_coord: the projections X w_min are kept, so a step adds t times one column (the CSC copy) and
#    re-sorts the classes from the last accepted order with an adaptive natural merge sort (rows with a zero in the
#    column keep their order; a small t leaves a dense column nearly sorted: O(N + N log runs)). Unit mode
#    (`--oned-norm unit`) projects on the unit direction (scale2 = ||w_min + s t e_c||^2, kept in O(1) and recomputed
#    every phase), so l_min is the primal (1) of (w_min, b_min) and never increases; paper mode uses scale2 = 1 (the
#    literal line 32). Stops: max_iter iterations, max_seconds, or when t < 1e-15 (||w_min|| + 1) or
#    thres - 1 < 1e-15 at a phase start (nothing can change any more).
# 4. ProjectSVM (Algorithm 2), the whole loop in `project_svm`: directions L with i.i.d. N(0,1) entries from the
#    project's RNG (rng.pxd's rng_normal_fill), projected after normalisation (unit mode, so the losses are primal
#    values and comparable) or raw with w = v L / ||L|| (paper mode, line 8 literally); the best loss (strict <) is
#    kept; stops at max_iter directions, max_seconds or a loss <= target_loss.
# The arithmetic of the scan and of LocalSVM is the NumPy twin's (tests/reference/oned_twin.py) operation for
# operation, so the two visit the same (coordinate, sign, accept) sequence.
cimport cython
from libc.math cimport INFINITY, sqrt
from libc.stdint cimport int8_t, int32_t, int64_t, uint64_t
from libc.string cimport memcpy, memset
from posix.time cimport clock_gettime, timespec, CLOCK_MONOTONIC

import numpy as np

from kernel_types cimport value_t
from rowview cimport RowView, row_dot, row_indices, row_values
from rng cimport Rng, rng_normal_fill
from llsvm._ext._view cimport Rows
from llsvm._ext._stop cimport stop_requested, check_stop

# why a loop stopped (the driver's names: REASONS)
DEF STOP_MAX_ITER = 0
DEF STOP_STEP = 1
DEF STOP_TIME = 2
DEF STOP_TARGET = 3
REASONS = ("max_iter", "step", "time", "target")

# columns of the snapshot table (one row per power-of-two iteration, and the last iteration)
SNAP_FIELDS = ("iter", "l_min", "b", "t", "thres", "accepted", "rejected", "seconds")
DEF SNAP_NF = 8


ctypedef unsigned char[::1] uint8_t_view


cdef struct KI:
    double k        # the projection
    int32_t i       # the row (0-based within the problem)


cdef inline double _now() noexcept nogil:
    cdef timespec ts
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return ts.tv_sec + ts.tv_nsec * 1e-9


# -- sorting ------------------------------------------------------------------------------------------------------
cdef inline void _merge(const KI* a, int64_t na, const KI* b, int64_t nb, KI* out) noexcept nogil:
    """Merge two ascending runs (stable: a's element first on ties). Branch-free selection: the data decide which
    side each step reads, so there is no branch to mispredict."""
    cdef const KI* ae = a + na
    cdef const KI* be = b + nb
    cdef const KI* src
    cdef bint take_b
    while a < ae and b < be:
        take_b = b[0].k < a[0].k
        src = b if take_b else a
        out[0] = src[0]
        out += 1
        b += take_b
        a += 1 - take_b
    if a < ae:
        memcpy(out, a, (ae - a) * sizeof(KI))
    elif b < be:
        memcpy(out, b, (be - b) * sizeof(KI))


DEF MINRUN = 24


cdef inline void _insertion(KI* a, int64_t lo, int64_t sorted_end, int64_t hi) noexcept nogil:
    """Extend the ascending run a[lo:sorted_end] to a[lo:hi] by insertion (stable)."""
    cdef int64_t i, j
    cdef KI x
    for i in range(sorted_end, hi):
        x = a[i]
        j = i
        while j > lo and a[j - 1].k > x.k:
            a[j] = a[j - 1]
            j -= 1
        a[j] = x


cdef inline uint64_t _rkey(double k) noexcept nogil:
    """The double's bits as an unsigned key in the same order (negatives: all bits flipped; else the sign bit set)."""
    cdef uint64_t u
    memcpy(&u, &k, 8)
    if u >> 63:
        return ~u
    return u | (<uint64_t>1 << 63)


cdef void _radix(KI* a, KI* buf, int64_t n, int64_t* cnt) noexcept nogil:
    """LSD radix sort of a[0:n] by k, 8 passes of one byte (a pass whose byte is the same in every key is skipped):
    O(n) whatever the order. cnt: 8 x 256 entries."""
    cdef int64_t i, b, tot, c0
    cdef uint64_t u
    cdef int shift
    cdef KI* src = a
    cdef KI* dst = buf
    cdef KI* sw
    cdef int64_t* c
    memset(cnt, 0, 8 * 256 * sizeof(int64_t))
    for i in range(n):
        u = _rkey(a[i].k)
        for b in range(8):
            cnt[256 * b + ((u >> (8 * b)) & 255)] += 1
    for b in range(8):
        c = cnt + 256 * b
        shift = 8 * b
        if c[(_rkey(src[0].k) >> shift) & 255] == n:
            continue
        tot = 0
        for i in range(256):
            c0 = c[i]
            c[i] = tot
            tot += c0
        for i in range(n):
            u = (_rkey(src[i].k) >> shift) & 255
            dst[c[u]] = src[i]
            c[u] += 1
        sw = src
        src = dst
        dst = sw
    if src != a:
        memcpy(a, src, n * sizeof(KI))


cdef void _sort(KI* a, KI* buf, int64_t* runs, int64_t n) noexcept nogil:
    """Sort a[0:n] ascending by k: the natural merge sort below when a[] is nearly sorted (at most n/32 descents:
    a small step of LocalSVM), else the radix sort (runs + n + 1 holds its 8 x 256 counters)."""
    cdef int64_t i, desc = 0
    for i in range(1, n):
        desc += a[i].k < a[i - 1].k
    if desc <= n // 32:
        _natural(a, buf, runs, n)
    else:
        _radix(a, buf, n, runs + n + 1)


cdef void _natural(KI* a, KI* buf, int64_t* runs, int64_t n) noexcept nogil:
    """Sort a[0:n] ascending by k: natural merge sort (maximal ascending runs, strictly descending runs reversed,
    runs shorter than MINRUN extended by insertion, then pairwise merges of neighbouring runs): O(n) on a sorted or
    reversed input, O(n log runs) in general. buf: n elements, runs: n + 1 entries."""
    cdef int64_t nr = 0, s = 0, e, lo, hi, j, m
    cdef KI tmp
    cdef KI* src = a
    cdef KI* dst = buf
    cdef KI* sw
    if n < 2:
        return
    while s < n:
        e = s + 1
        if e < n and a[e].k < a[s].k:
            while e + 1 < n and a[e + 1].k < a[e].k:
                e += 1
            e += 1
            lo = s
            hi = e - 1
            while lo < hi:
                tmp = a[lo]
                a[lo] = a[hi]
                a[hi] = tmp
                lo += 1
                hi -= 1
        else:
            while e < n and a[e].k >= a[e - 1].k:
                e += 1
        if e - s < MINRUN and e < n:
            hi = s + MINRUN if s + MINRUN < n else n
            _insertion(a, s, e, hi)
            e = hi
        runs[nr] = s
        nr += 1
        s = e
    runs[nr] = n
    while nr > 1:
        j = 0
        m = 0
        while j < nr:
            if j + 1 < nr:
                _merge(src + runs[j], runs[j + 1] - runs[j], src + runs[j + 1], runs[j + 2] - runs[j + 1],
                       dst + runs[j])
                runs[m] = runs[j]
                j += 2
            else:
                memcpy(dst + runs[j], src + runs[j], (runs[j + 1] - runs[j]) * sizeof(KI))
                runs[m] = runs[j]
                j += 1
            m += 1
        runs[m] = n
        nr = m
        sw = src
        src = dst
        dst = sw
    if src != a:
        memcpy(a, src, n * sizeof(KI))


# -- the 1-D solvers ----------------------------------------------------------------------------------------------
cdef double _scan(const KI* pos, int64_t npos, const KI* neg, int64_t nneg, double scale2, double Cp, double Cn,
                  double* v_out, double* b_out) noexcept nogil:
    """SVM1D on the sorted classes (pos and neg both ascending; neg is read from its end): the loss of the best
    pair, INFINITY when no pair has v > 0 (v_out, b_out then untouched)."""
    cdef int64_t m = npos if npos < nneg else nneg, i
    cdef double P1 = 0.0, Pm = 0.0, best = INFINITY, a, q, diff, v, zeta, l
    for i in range(m):
        a = pos[i].k
        q = neg[nneg - 1 - i].k
        diff = a - q
        if diff > 0:
            v = 2.0 / diff
            if Cp == Cn:
                zeta = 2.0 * i - v * (P1 - Pm)
                l = (0.5 * scale2) * (v * v) + Cp * zeta
            else:
                l = (0.5 * scale2) * (v * v) + Cp * (v * (i * a - P1)) + Cn * (v * (Pm - i * q))
            if l < best:
                best = l
                v_out[0] = v
                b_out[0] = 1.0 - a * v
        P1 += a
        Pm += q
    return best


cdef double _hinge_at(const KI* pos, int64_t npos, const KI* neg, int64_t nneg, double v, double Cp, double Cn,
                      double* b_out) noexcept nogil:
    """min_b sum_i C_i max(0, 1 - y_i (v p_i + b)) and its minimiser b: the weighted median of the breakpoints
    1 - v a (+1 rows, weight Cp) and -1 - v q (-1 rows, weight Cn), merged in ascending order (for v >= 0 that is
    both classes from their largest projection down, for v < 0 from the smallest up)."""
    cdef int64_t ip, iq, sp, sq
    cdef double D = -Cp * npos, bp, bq, b = 0.0, g = 0.0, z
    if v >= 0:
        ip = npos - 1
        iq = nneg - 1
        sp = -1
        sq = -1
    else:
        ip = 0
        iq = 0
        sp = 1
        sq = 1
    while True:
        # the next breakpoint in ascending order
        if 0 <= ip < npos:
            bp = 1.0 - v * pos[ip].k
        else:
            bp = INFINITY
        if 0 <= iq < nneg:
            bq = -1.0 - v * neg[iq].k
        else:
            bq = INFINITY
        if bp <= bq:
            if bp == INFINITY:
                break
            D += Cp
            b = bp
            ip += sp
        else:
            D += Cn
            b = bq
            iq += sq
        if D >= 0:
            break
    for ip in range(npos):
        z = 1.0 - v * pos[ip].k - b
        if z > 0:
            g += z
    g *= Cp
    z = 0.0
    for iq in range(nneg):
        bq = 1.0 + v * neg[iq].k + b
        if bq > 0:
            z += bq
    b_out[0] = b
    return g + Cn * z


cdef double _exact(const KI* pos, int64_t npos, const KI* neg, int64_t nneg, double scale2, double Cp, double Cn,
                   double* v_out, double* b_out) noexcept nogil:
    """The exact 1-D optimum: golden-section search of the convex h(v) = scale2 v^2/2 + min_b hinge on [-V, V]."""
    cdef double bb, h0, V, lo, hi, x1, x2, f1, f2, b1, b2, best, bv, bestb
    cdef double gr = 0.6180339887498949
    cdef int it
    if npos == 0 or nneg == 0 or not scale2 > 0:
        return INFINITY
    h0 = _hinge_at(pos, npos, neg, nneg, 0.0, Cp, Cn, &bb)
    best = h0
    bv = 0.0
    bestb = bb
    V = sqrt(2.0 * h0 / scale2)
    lo = -V
    hi = V
    x1 = hi - gr * (hi - lo)
    x2 = lo + gr * (hi - lo)
    f1 = (0.5 * scale2) * (x1 * x1) + _hinge_at(pos, npos, neg, nneg, x1, Cp, Cn, &b1)
    f2 = (0.5 * scale2) * (x2 * x2) + _hinge_at(pos, npos, neg, nneg, x2, Cp, Cn, &b2)
    for it in range(200):
        if f1 < best:
            best = f1
            bv = x1
            bestb = b1
        if f2 < best:
            best = f2
            bv = x2
            bestb = b2
        if hi - lo <= 1e-15 * (1.0 + (bv if bv >= 0 else -bv)):
            break
        if f1 <= f2:
            hi = x2
            x2 = x1
            f2 = f1
            b2 = b1
            x1 = hi - gr * (hi - lo)
            f1 = (0.5 * scale2) * (x1 * x1) + _hinge_at(pos, npos, neg, nneg, x1, Cp, Cn, &b1)
        else:
            lo = x1
            x1 = x2
            f1 = f2
            b1 = b2
            x2 = lo + gr * (hi - lo)
            f2 = (0.5 * scale2) * (x2 * x2) + _hinge_at(pos, npos, neg, nneg, x2, Cp, Cn, &b2)
    v_out[0] = bv
    b_out[0] = bestb
    return best


cdef inline double _solve1d(const KI* pos, int64_t npos, const KI* neg, int64_t nneg, double scale2, double Cp,
                            double Cn, bint exact, double* v_out, double* b_out) noexcept nogil:
    if exact:
        return _exact(pos, npos, neg, nneg, scale2, Cp, Cn, v_out, b_out)
    return _scan(pos, npos, neg, nneg, scale2, Cp, Cn, v_out, b_out)


cdef struct Classes:
    KI* pos         # the +1 rows, sorted by projection (the last accepted order)
    KI* neg
    KI* tpos        # a trial's re-sorted copies
    KI* tneg
    KI* buf
    int64_t* runs
    int64_t npos
    int64_t nneg


cdef void _classes_init(Classes* c, const int8_t* y, int64_t N, KI* pairs, int64_t* runs) noexcept nogil:
    """Lay the classes out in `pairs` (4 N + max(npos, nneg) elements): rows in order, projection 0."""
    cdef int64_t i, a = 0, b = 0
    for i in range(N):
        if y[i] > 0:
            a += 1
        else:
            b += 1
    c.npos = a
    c.nneg = b
    c.pos = pairs
    c.neg = pairs + a
    c.tpos = pairs + N
    c.tneg = pairs + N + a
    c.buf = pairs + 2 * N
    c.runs = runs
    a = 0
    b = 0
    for i in range(N):
        if y[i] > 0:
            c.pos[a].i = <int32_t>i
            c.pos[a].k = 0.0
            a += 1
        else:
            c.neg[b].i = <int32_t>i
            c.neg[b].k = 0.0
            b += 1


cdef inline void _trial_sort(Classes* c, const double* q) noexcept nogil:
    """The trial orders: the last accepted order with the trial's projections q, re-sorted."""
    cdef int64_t j
    for j in range(c.npos):
        c.tpos[j].i = c.pos[j].i
        c.tpos[j].k = q[c.pos[j].i]
    for j in range(c.nneg):
        c.tneg[j].i = c.neg[j].i
        c.tneg[j].k = q[c.neg[j].i]
    _sort(c.tpos, c.buf, c.runs, c.npos)
    _sort(c.tneg, c.buf, c.runs, c.nneg)


cdef inline void _trial_accept(Classes* c) noexcept nogil:
    cdef KI* t = c.pos
    c.pos = c.tpos
    c.tpos = t
    t = c.neg
    c.neg = c.tneg
    c.tneg = t


cdef inline bint _pow2(int64_t n) noexcept nogil:
    return n > 0 and (n & (n - 1)) == 0


cdef inline void _snapshot(double* row, double* wrow, const double* w, int64_t d, int64_t it, double l, double b,
                           double t, double thres, int64_t acc, int64_t rej, double sec) noexcept nogil:
    row[0] = it
    row[1] = l
    row[2] = b
    row[3] = t
    row[4] = thres
    row[5] = acc
    row[6] = rej
    row[7] = sec
    memcpy(wrow, w, d * sizeof(double))


def _work(int64_t N):
    """The sorting work arrays of a problem of N rows: pairs (as bytes: KI is 16 bytes), run bounds and the radix
    sort's counters."""
    return np.empty(4 * N * sizeof(KI), np.uint8), np.empty(N + 1 + 8 * 256, np.int64)


def scan(const double[::1] p, const int8_t[::1] y, double scale2=1.0, double Cp=1.0, double Cn=1.0,
         bint exact=False):
    """SVM1D (or the exact 1-D solver) on projections p: (v, b, l); l = inf when no pair has v > 0."""
    cdef int64_t N = p.shape[0], i
    cdef double v = float("nan"), b = float("nan"), l
    cdef Classes c
    if y.shape[0] != N:
        raise ValueError("p and y differ in length")
    pairs, runs = _work(max(N, 1))
    cdef uint8_t_view pv = pairs
    cdef int64_t[::1] rv = runs
    with nogil:
        _classes_init(&c, &y[0] if N else NULL, N, <KI*>&pv[0], &rv[0])
        for i in range(c.npos):
            c.pos[i].k = p[c.pos[i].i]
        for i in range(c.nneg):
            c.neg[i].k = p[c.neg[i].i]
        _sort(c.pos, c.buf, c.runs, c.npos)
        _sort(c.neg, c.buf, c.runs, c.nneg)
        l = _solve1d(c.pos, c.npos, c.neg, c.nneg, scale2, Cp, Cn, exact, &v, &b)
    return v, b, l


def sort_pairs(const int32_t[::1] order, const double[::1] key):
    """The natural merge sort of the kernels on its own (for tests): `order` re-sorted ascending by key[order]."""
    cdef int64_t n = order.shape[0], j
    pairs, runs = _work(max(n, 1))
    cdef uint8_t_view pv = pairs
    cdef int64_t[::1] rv = runs
    cdef KI* a = <KI*>&pv[0]
    out = np.empty(n, np.int32)
    cdef int32_t[::1] o = out
    for j in range(n):
        if not 0 <= order[j] < key.shape[0]:
            raise ValueError("order holds an index outside key")
    with nogil:
        for j in range(n):
            a[j].i = order[j]
            a[j].k = key[order[j]]
        _sort(a, a + n, &rv[0], n)
        for j in range(n):
            o[j] = a[j].i
    return out


# -- the columns of a problem (LocalSVM changes one coordinate at a time) -----------------------------------------
cdef inline int64_t _row(const int64_t* rows, int64_t r) noexcept nogil:
    return rows[r] if rows != NULL else r


cdef void _col_counts(const RowView* v, const int64_t* rows, int64_t N, int64_t* cnt, value_t* kind) noexcept nogil:
    cdef int64_t r, k, g
    cdef const int32_t* idx
    for r in range(N):
        g = _row(rows, r)
        idx = row_indices(v, g)
        for k in range(v.indptr[g], v.indptr[g + 1]):
            cnt[idx[k] + 1] += 1


cdef void _col_fill(const RowView* v, const int64_t* rows, int64_t N, int64_t* fill, int32_t* crow, double* cval,
                    value_t* kind) noexcept nogil:
    cdef int64_t r, k, g, c
    cdef const int32_t* idx
    cdef const value_t* x
    for r in range(N):
        g = _row(rows, r)
        idx = row_indices(v, g)
        x = row_values(v, g, kind)
        for k in range(v.indptr[g], v.indptr[g + 1]):
            c = idx[k]
            crow[fill[c]] = <int32_t>r
            cval[fill[c]] = <double>x[k]
            fill[c] += 1


def column_counts(Rows X not None, const int64_t[::1] rows, int64_t N):
    """col_ptr (int64, n_features + 1) of the problem's rows (`rows`; empty: the first N rows in order)."""
    cdef int64_t d = X.v.n_features, j
    out = np.zeros(d + 1, np.int64)
    cdef int64_t[::1] c = out
    cdef const int64_t* r = &rows[0] if rows.shape[0] > 0 else NULL
    with nogil:
        if X.f32:
            _col_counts(&X.v, r, N, &c[0], <float*>NULL)
        else:
            _col_counts(&X.v, r, N, &c[0], <double*>NULL)
        for j in range(d):
            c[j + 1] += c[j]
    return out


def column_fill(Rows X not None, const int64_t[::1] rows, int64_t N, const int64_t[::1] col_ptr,
                int32_t[::1] col_row, double[::1] col_val):
    """The problem's columns (CSC: rows 0..N-1 within the problem, values as double) into col_row, col_val."""
    fill = np.array(col_ptr[:X.v.n_features], np.int64)
    cdef int64_t[::1] f = fill
    cdef const int64_t* r = &rows[0] if rows.shape[0] > 0 else NULL
    if col_row.shape[0] < col_ptr[X.v.n_features] or col_val.shape[0] < col_ptr[X.v.n_features]:
        raise ValueError("col_row / col_val are shorter than the problem's non-zeros")
    if col_row.shape[0] == 0:
        return
    with nogil:
        if X.f32:
            _col_fill(&X.v, r, N, &f[0], &col_row[0], &col_val[0], <float*>NULL)
        else:
            _col_fill(&X.v, r, N, &f[0], &col_row[0], &col_val[0], <double*>NULL)


# -- LocalSVM (Algorithm 3) ---------------------------------------------------------------------------------------
@cython.cdivision(True)
cdef int _local(int64_t N, int64_t d, const int64_t* cptr, const int32_t* crow, const double* cval,
                const int8_t* y, double Cp, double Cn, bint unit, bint exact, int64_t max_iter,
                double max_seconds, double* w, double* p, double* saved, Classes* cl, double* state,
                int64_t* counts, double* snap, double* snapw, int64_t max_snap, int64_t* n_snap,
                int32_t* trace, int64_t trace_cap) noexcept nogil:
    """The loop; returns the stop reason. state in/out: l_min, b_min, t, thres; counts out: iterations, accepted,
    rejected, SVM1D calls."""
    cdef double t = 1.0, ct = 2.0, curr = 2.0, thres = 1.1, l_last = 0.0, l_min = INFINITY, b_min = 0.0
    cdef double wn2 = 0.0, st, n2, scale2, v, bb, l, t0 = _now(), sec
    cdef bint nld = False, accepted
    cdef int reason = STOP_MAX_ITER
    cdef int64_t it, coord, k, j, acc = 0, rej = 0, calls = 0, ns = 0, done = 0
    cdef int s
    for it in range(max_iter):
        coord = it % d
        if coord == 0 and it > 0:                   # a new phase: adapt t and thres (lines 12-26)
            if l_last < l_min * thres:
                if nld:
                    thres = 1.0 + (thres - 1.0) / 16.0          # c_t^4
                    curr = 1.0 / ct
                else:
                    curr = 1.0 / curr
                nld = True
            else:
                nld = False
            t = t * curr
            l_last = l_min
            wn2 = 0.0
            for j in range(d):
                wn2 += w[j] * w[j]
            if t < 1e-15 * (sqrt(wn2) + 1.0) or thres - 1.0 < 1e-15:
                reason = STOP_STEP
                break
        if stop_requested():                        # an iteration sorts N values: checked at every one
            break                                   # (cext/_stop.pyx; the wrapper raises)
        if max_seconds > 0 and _now() - t0 > max_seconds:
            reason = STOP_TIME
            break
        accepted = False
        for s in range(2):                          # -t, then +t unless -t was accepted (lines 27-39)
            st = -t if s == 0 else t
            for k in range(cptr[coord], cptr[coord + 1]):
                saved[k - cptr[coord]] = p[crow[k]]
                p[crow[k]] = p[crow[k]] + st * cval[k]
            n2 = (wn2 + (2.0 * st) * w[coord]) + t * t
            scale2 = n2 if unit else 1.0
            v = 0.0
            bb = 0.0
            if unit and not n2 > 0:
                l = INFINITY
            else:
                _trial_sort(cl, p)
                l = _solve1d(cl.tpos, cl.npos, cl.tneg, cl.nneg, scale2, Cp, Cn, exact, &v, &bb)
                calls += 1
            accepted = l <= l_min and l < INFINITY
            if done < trace_cap:
                trace[3 * done] = <int32_t>coord
                trace[3 * done + 1] = -1 if s == 0 else 1
                trace[3 * done + 2] = 1 if accepted else 0
                done += 1
            if accepted:
                w[coord] += st
                for j in range(d):
                    w[j] = w[j] * v
                for k in range(N):
                    p[k] = p[k] * v
                _trial_accept(cl)
                b_min = bb
                l_min = l
                wn2 = (v * v) * n2
                acc += 1
                break
            for k in range(cptr[coord], cptr[coord + 1]):
                p[crow[k]] = saved[k - cptr[coord]]
            rej += 1
        if _pow2(it + 1) and ns < max_snap:
            sec = _now() - t0
            _snapshot(snap + SNAP_NF * ns, snapw + d * ns, w, d, it + 1, l_min, b_min, t, thres, acc, rej, sec)
            ns += 1
    else:
        it = max_iter
    state[0] = l_min
    state[1] = b_min
    state[2] = t
    state[3] = thres
    state[4] = _now() - t0
    counts[0] = it
    counts[1] = acc
    counts[2] = rej
    counts[3] = calls
    counts[4] = done
    n_snap[0] = ns
    return reason


def n_snapshots(int64_t max_iter):
    """Rows of the snapshot table of a run of max_iter iterations: one per power of two up to max_iter."""
    cdef int64_t n = 0, k = 1
    while k <= max_iter:
        n += 1
        k *= 2
    return n


def local_svm(const int64_t[::1] col_ptr, const int32_t[::1] col_row, const double[::1] col_val,
              const int8_t[::1] y, double Cp, double Cn, bint unit, bint exact, int64_t max_iter,
              double max_seconds, double[::1] w, double[:, ::1] snap, double[:, ::1] snapw, int32_t[:, ::1] trace):
    """LocalSVM on a problem given by its columns (column_counts / column_fill) and labels y (+1/-1).

    w (n_features) receives w_min; snap (n_snapshots(max_iter) x len(SNAP_FIELDS)) and snapw (same rows x
    n_features) the state after every power-of-two iteration; trace (rows x 3, may have 0 rows) the first
    (coordinate, sign, accepted) of every SVM1D step. Returns a dict: l_min, b, t, thres, seconds, n_iter,
    accepted, rejected, calls, n_trace, n_snap, reason."""
    cdef int64_t N = y.shape[0], d = w.shape[0], j, max_col = 0
    cdef Classes cl
    cdef double state[5]
    cdef int64_t counts[5]
    cdef int64_t ns = 0
    cdef int reason
    if col_ptr.shape[0] != d + 1 or d < 1:
        raise ValueError("col_ptr must have n_features + 1 entries, n_features >= 1")
    if N < 1 or N > 2147483647:
        raise ValueError("a problem needs 1 to 2^31 - 1 rows")
    if snap.shape[0] != snapw.shape[0] or snap.shape[1] != SNAP_NF or (snapw.shape[0] and snapw.shape[1] != d):
        raise ValueError("snap / snapw have the wrong shape")
    if trace.shape[0] and trace.shape[1] != 3:
        raise ValueError("trace must have 3 columns")
    for j in range(d):
        if col_ptr[j + 1] - col_ptr[j] > max_col:
            max_col = col_ptr[j + 1] - col_ptr[j]
    if col_row.shape[0] < col_ptr[d] or col_val.shape[0] < col_ptr[d]:
        raise ValueError("col_row / col_val are shorter than col_ptr says")
    for j in range(col_ptr[d]):
        if not 0 <= col_row[j] < N:
            raise ValueError("col_row holds a row outside the problem")
    pairs, runs = _work(N)
    p = np.zeros(N, np.float64)
    saved = np.empty(max(max_col, 1), np.float64)
    cdef uint8_t_view pv = pairs
    cdef int64_t[::1] rv = runs
    cdef double[::1] pp = p
    cdef double[::1] sv = saved
    w[:] = 0.0
    with nogil:
        _classes_init(&cl, &y[0], N, <KI*>&pv[0], &rv[0])
        reason = _local(N, d, &col_ptr[0], &col_row[0] if col_row.shape[0] else NULL,
                        &col_val[0] if col_val.shape[0] else NULL, &y[0], Cp, Cn, unit, exact, max_iter,
                        max_seconds, &w[0], &pp[0], &sv[0], &cl, state, counts,
                        &snap[0, 0] if snap.shape[0] else NULL, &snapw[0, 0] if snapw.shape[0] else NULL,
                        snap.shape[0], &ns, &trace[0, 0] if trace.shape[0] else NULL, trace.shape[0])
    check_stop()
    return {"l_min": state[0], "b": state[1], "t": state[2], "thres": state[3], "seconds": state[4],
            "n_iter": counts[0], "accepted": counts[1], "rejected": counts[2], "calls": counts[3],
            "n_trace": counts[4], "n_snap": ns, "reason": REASONS[reason]}


# -- ProjectSVM (Algorithm 2) -------------------------------------------------------------------------------------
@cython.cdivision(True)
cdef int _project(const RowView* X, const int64_t* rows, int64_t N, int64_t d, Classes* cl, double Cp, double Cn,
                  bint unit, bint exact, int64_t max_iter, double max_seconds, double target, Rng* rng,
                  double* L, double* u, double* w, double* state, int64_t* counts, double* snap, double* snapw,
                  int64_t max_snap, int64_t* n_snap, value_t* kind) noexcept nogil:
    cdef double l_min = INFINITY, b_min = 0.0, nL2, nL, v, bb, l, t0 = _now(), sec
    cdef int64_t it, j, r, acc = 0, rej = 0, ns = 0
    cdef int reason = STOP_MAX_ITER
    cdef const double* dirn
    for it in range(max_iter):
        if stop_requested():                        # (cext/_stop.pyx; the wrapper raises)
            break
        if max_seconds > 0 and _now() - t0 > max_seconds:
            reason = STOP_TIME
            break
        rng_normal_fill(rng, L, d)                  # line 3
        nL2 = 0.0
        for j in range(d):
            nL2 += L[j] * L[j]
        nL = sqrt(nL2)
        if unit:
            for j in range(d):
                u[j] = L[j] / nL
            dirn = u
        else:
            dirn = L
        for j in range(cl.npos):                    # line 4: project, sort, scan
            cl.pos[j].k = row_dot(X, _row(rows, cl.pos[j].i), dirn, kind)
        for j in range(cl.nneg):
            cl.neg[j].k = row_dot(X, _row(rows, cl.neg[j].i), dirn, kind)
        _sort(cl.pos, cl.buf, cl.runs, cl.npos)
        _sort(cl.neg, cl.buf, cl.runs, cl.nneg)
        v = 0.0
        bb = 0.0
        l = _solve1d(cl.pos, cl.npos, cl.neg, cl.nneg, 1.0, Cp, Cn, exact, &v, &bb) if nL > 0 else INFINITY
        if l < l_min:                               # lines 5-8
            l_min = l
            b_min = bb
            for j in range(d):
                w[j] = v * u[j] if unit else (v * L[j]) / nL
            acc += 1
        else:
            rej += 1
        if _pow2(it + 1) and ns < max_snap:
            sec = _now() - t0
            _snapshot(snap + SNAP_NF * ns, snapw + d * ns, w, d, it + 1, l_min, b_min, 0.0, 0.0, acc, rej, sec)
            ns += 1
        if l_min <= target:
            it += 1
            reason = STOP_TARGET
            break
    else:
        it = max_iter
    state[0] = l_min
    state[1] = b_min
    state[2] = 0.0
    state[3] = 0.0
    state[4] = _now() - t0
    counts[0] = it
    counts[1] = acc
    counts[2] = rej
    counts[3] = it
    counts[4] = 0
    n_snap[0] = ns
    return reason


def project_svm(Rows X not None, const int64_t[::1] rows, const int8_t[::1] y, double Cp, double Cn, bint unit,
                bint exact, int64_t max_iter, double max_seconds, double target_loss, uint64_t[::1] rng,
                double[::1] w, double[:, ::1] snap, double[:, ::1] snapw):
    """ProjectSVM on the problem's rows (`rows`, empty: the first len(y) rows; X without a bias coordinate): w
    (n_features) receives w_min; rng (a state of _random.rng_state) is advanced; snap/snapw as local_svm's.
    target_loss: stop once l_min <= it (-inf: never). Returns local_svm's dict."""
    cdef int64_t N = y.shape[0], d = X.v.n_features
    cdef Classes cl
    cdef double state[5]
    cdef int64_t counts[5]
    cdef int64_t ns = 0
    cdef int reason
    cdef const int64_t* r = &rows[0] if rows.shape[0] > 0 else NULL
    if X.v.bias >= 0:
        raise ValueError("ProjectSVM reads the rows without a bias coordinate (its bias is free)")
    if w.shape[0] != d or d < 1:
        raise ValueError("w must have n_features >= 1 entries")
    if N < 1 or N > 2147483647 or (rows.shape[0] and rows.shape[0] != N) or (not rows.shape[0] and N > X.v.n_rows):
        raise ValueError("y does not match the problem's rows")
    if snap.shape[0] != snapw.shape[0] or snap.shape[1] != SNAP_NF or (snapw.shape[0] and snapw.shape[1] != d):
        raise ValueError("snap / snapw have the wrong shape")
    if rng.shape[0] != 4:
        raise ValueError("rng must be a state of _random.rng_state")
    pairs, runs = _work(N)
    L = np.empty(d, np.float64)
    u = np.zeros(d, np.float64)
    cdef uint8_t_view pv = pairs
    cdef int64_t[::1] rv = runs
    cdef double[::1] Lv = L
    cdef double[::1] uv = u
    w[:] = 0.0
    with nogil:
        _classes_init(&cl, &y[0], N, <KI*>&pv[0], &rv[0])
        if X.f32:
            reason = _project(&X.v, r, N, d, &cl, Cp, Cn, unit, exact, max_iter, max_seconds, target_loss,
                              <Rng*>&rng[0], &Lv[0], &uv[0], &w[0], state, counts,
                              &snap[0, 0] if snap.shape[0] else NULL, &snapw[0, 0] if snapw.shape[0] else NULL,
                              snap.shape[0], &ns, <float*>NULL)
        else:
            reason = _project(&X.v, r, N, d, &cl, Cp, Cn, unit, exact, max_iter, max_seconds, target_loss,
                              <Rng*>&rng[0], &Lv[0], &uv[0], &w[0], state, counts,
                              &snap[0, 0] if snap.shape[0] else NULL, &snapw[0, 0] if snapw.shape[0] else NULL,
                              snap.shape[0], &ns, <double*>NULL)
    check_stop()
    return {"l_min": state[0], "b": state[1], "t": None, "thres": None, "seconds": state[4],
            "n_iter": counts[0], "accepted": counts[1], "rejected": counts[2], "calls": counts[3],
            "n_trace": 0, "n_snap": ns, "reason": REASONS[reason]}

