# The kernel core of the kernel SVMs (issue 15): kernel values, kernel columns and blocks, and LIBSVM's column cache.
#
# Problem: the dual of a kernel SVM (LIBSVM's C-SVC, the H1-SVM tree nodes) reads the l x l matrix
# K_ij = k(x_i, x_j), too large to hold, one column at a time; prediction reads the dense block k(sv_a, x_b).
# Kernels (cext/kernel.pxd): LIBSVM's linear, polynomial, RBF and sigmoid (kernel_type 0..3, degree, gamma, coef0),
# as defined by Chang & Lin, "LIBSVM: A library for support vector machines", ACM TIST 2(3), 2011, section 2 and
# LIBSVM 3.x's svm.cpp; the RBF kernel reads squared norms computed once per row (_rowops.row_sq_norms). And
# LIBSVM's precomputed kernel (kernel_type 4, issue 47): the values are the rows' own (a row is 0:serial then the
# kernel values of the training instances, read zero-based), a kernel value is one look-up (kernel.pxd,
# precomputed_kernel), and what the others read as the squared norms is the diagonal k(x, x). kernel_sq_norms is the
# one home of what every function below takes as `sqnorm`, whatever the kernel.
# What this module computes, nogil, over the row view X (a `Rows`, cext/_view.pyx):
# - kernel_column: out[k] = k(x_rows[k], x_j) for a subset `rows` of X's rows; kernel_diag: QD[k] = k(x_rows[k],
#   x_rows[k]) (the solver's diagonal, from the squared norms alone: kernel_sq_norms);
# - kernel_block: out[a, b] = k(A_a, B_b) for the rows of two views (of either value type);
# - KernelCache: the columns of the l x l kernel matrix of an l-row problem under a byte budget (LIBSVM's
#   `-m cache_size` MB, default 100), filled lazily and evicted least recently used first, following LIBSVM's
#   Cache class: a column is requested for its first `length` positions (the active set of the shrinking solver),
#   a shorter cached column is extended, and swap_index(i, j) reorders positions as shrinking does.
# Choices:
# - Cached entries are float (LIBSVM's Qfloat): half the memory of double, so twice the columns under a budget;
#   the solver accumulates gradients in double. kernel_column and kernel_block write double (prediction and tests
#   need the full value).
# - The cache stores K, not Q = y_i y_j K: the solver (C-SVC, or an H1 node whose linear term differs) applies the
#   labels. The cache owns the active order (the position -> row map that swap_index permutes; LIBSVM's Kernel
#   swaps its x[] and x_square[] the same way); the solver swaps its own y, alpha, G, QD alongside.
# - Memory: one slab of fixed-size slots (l floats each) allocated when the cache is made, so no allocation (and
#   no failure) ever happens inside nogil. LIBSVM allocates each column at its requested length instead, so after
#   shrinking its budget holds more, shorter columns; a slot here always costs l floats. The budget is reduced by
#   the per-column bookkeeping (5 int64 per row), as LIBSVM subtracts its head array, and never holds fewer than
#   two columns (LIBSVM's minimum: the solver holds the columns of both working-set variables at once), nor more
#   than l.
# - A column that holds position i but not j is dropped by swap_index (it cannot be fixed without computing the
#   missing entry), as LIBSVM does; columns swapped in are moved to the most recently used end, as in LIBSVM.
# - The bias coordinate of a view never enters a kernel value; the wrappers refuse a view with bias >= 0.
from libc.math cimport exp, floor, isfinite
from libc.stdint cimport int64_t, uint64_t
from libc.stdlib cimport calloc, malloc, free
from libc.string cimport memcpy
from libc.stdint cimport int32_t
from cython.parallel cimport prange, threadid

import numpy as np

from kernel_types cimport value_t, value2_t
from rowview cimport RowView, rows_dot, row_indices, row_values
from kernel cimport (KernelParams, dot_dense, dot_dense4, dot_full8, rows_full, scatter_row, scratch_size,
                    row_width, kernel_eval,
                    kernel_from_dot, precomputed_at, precomputed_serial, rbf_d2, exp_to_float, EXP_CHUNK,
                    KERNEL_LINEAR, KERNEL_POLY, KERNEL_RBF, KERNEL_SIGMOID, KERNEL_PRECOMPUTED)
from llsvm._ext._view cimport Rows
from llsvm._ext._rowops import row_sq_norms

DEFAULT_CACHE_SIZE = 100.0      # MB, LIBSVM's -m default
# a column is shared among threads when its entries times the cost of one (the row's mean entries + 16 for the
# kernel function) reach this: below it a parallel region's start costs more than it saves
cdef int64_t PARALLEL_MIN_WORK = 4096
# get_block's dense block of the missing rows, at most this many doubles (32 MB); wider: column by column
cdef int64_t BLOCK_MAX = 4194304
# Below this exponent the float of exp is +0 whatever libm's last bit: e^-104 < 0.98 * 2^-150 (half the least
# subnormal float), libm's double is within a unit in its last place of exp (relative 2^-52), and rounding to
# nearest sends every positive double below 2^-150 to +0
cdef double EXP_FLOAT_ZERO = -104.0
# the integer distances' table of an RBF cache over integer-valued rows: at most this many floats (256 KB)
cdef int64_t INT_TABLE_MAX = 65536
# panels: rows holding at least 3/4 of the scratch's width a row on average, in at most PANEL_FREE bytes (64 MB)
cdef int64_t PANEL_FREE = 64 << 20

ctypedef fused col_t:
    float
    double


cdef KernelParams kernel_params(params) except *:
    """A KernelParams from a mapping with LIBSVM's names: kernel_type (required), degree (3), gamma (required
    except for linear and precomputed, which read none of the three), coef0 (0). LIBSVM's own refusals: gamma < 0,
    a polynomial degree < 0."""
    cdef KernelParams p
    try:
        kernel_type = params["kernel_type"]
    except (KeyError, TypeError):
        raise ValueError("params must be a mapping with kernel_type (0 linear, 1 polynomial, 2 RBF, 3 sigmoid, "
                         "4 precomputed)")
    if kernel_type not in (KERNEL_LINEAR, KERNEL_POLY, KERNEL_RBF, KERNEL_SIGMOID, KERNEL_PRECOMPUTED):
        raise ValueError(f"unknown kernel type {kernel_type!r}")
    p.kernel_type = kernel_type
    p.degree = params.get("degree", 3)
    p.coef0 = params.get("coef0", 0.0)
    gamma = params.get("gamma")
    if gamma is None:
        if kernel_type != KERNEL_LINEAR and kernel_type != KERNEL_PRECOMPUTED:
            raise ValueError("gamma is required for the polynomial, RBF and sigmoid kernels")
        gamma = 0.0
    p.gamma = gamma
    if not isfinite(p.gamma) or p.gamma < 0:
        raise ValueError("gamma < 0")
    if not isfinite(p.coef0):
        raise ValueError("coef0 must be finite")
    if kernel_type == KERNEL_POLY and p.degree < 0:
        raise ValueError("degree of polynomial kernel < 0")
    return p


cdef int _check_view(Rows X, str name) except -1:
    if X.v.bias >= 0:
        raise ValueError(f"{name} has a bias coordinate (bias {X.v.bias}); kernel values take views without one "
                         f"(a kernel SVM has no implicit bias feature)")
    return 0


cdef int _check_sq(Rows X, const double[::1] sq, str name) except -1:
    if sq.shape[0] != X.v.n_rows:
        raise ValueError(f"{name} has {sq.shape[0]} entries for {X.v.n_rows} rows")
    return 0


cdef int _check_rows(const int64_t[::1] rows, int64_t n_rows) except -1:
    cdef int64_t k
    for k in range(rows.shape[0]):
        if rows[k] < 0 or rows[k] >= n_rows:
            raise ValueError(f"row {rows[k]} out of range for a view of {n_rows} rows")
    return 0


# -- columns and blocks -------------------------------------------------------------------------------------------
cdef void _column(const KernelParams* p, const RowView* v, const int64_t* rows, const double* sq, int64_t j,
                  int64_t start, int64_t stop, col_t* out, double* dense, int64_t width, int n_threads,
                  const double* panels, const double* panel_sq, const float* table, int64_t size,
                  value_t* kind) noexcept nogil:
    """out[k] = k(x_rows[k], x_j) for k in [start, stop); sq by X's row number. dense: width = scratch_size(v) zeros
    (zeros again on return), into which x_j is scattered once for the whole column, or NULL: each product merges
    the two rows (rows_dot; kernel.pxd, scratch_size), a loop of its own so that the dense one is as it was.
    n_threads > 1: the entries are shared among that many OpenMP threads (each entry computed alone, so the values
    do not depend on it); with the scratch, four at a time (dot_dense4, the same sums). The precomputed kernel: one
    look-up per entry (_precomputed_column), no scratch. The RBF kernel into floats (the cache's columns):
    _rbf_float_column, the same floats with the exps many at a time, or from a table of integer distances (table,
    size: the cache's, NULL and 0 without one), the dot products from the cache's panels where it has them (panels:
    NULL without; panel_sq their rows' squared norms by position)."""
    cdef int64_t k, r
    cdef double sqj = sq[j]
    if p.kernel_type == KERNEL_PRECOMPUTED:
        _precomputed_column(v, rows, j, start, stop, out, n_threads, kind)
        return
    if col_t is float:
        if p.kernel_type == KERNEL_RBF:        # the cache's floats: the exps many at a time (kernel.pxd)
            _rbf_float_column(p, v, rows, sq, j, start, stop, out, dense, width, n_threads, panels, panel_sq, table,
                              size, kind)
            return
    if dense == NULL:                   # a wide sparse view: every product merges the two rows (LIBSVM's dot)
        if n_threads > 1:
            for k in prange(start, stop, num_threads=n_threads, schedule="guided"):
                out[k] = <col_t>kernel_from_dot(p, rows_dot(v, rows[k], v, j, kind, kind), sq[rows[k]], sqj)
        else:
            for k in range(start, stop):
                r = rows[k]
                out[k] = <col_t>kernel_from_dot(p, rows_dot(v, r, v, j, kind, kind), sq[r], sqj)
        return
    scatter_row(v, j, dense, False, kind)
    if n_threads > 1:                   # groups of four entries (_dense_four) shared among the threads, then the rest
        for k in prange((stop - start) // 4, num_threads=n_threads, schedule="guided"):
            _dense_four(p, v, rows, sq, sqj, start + 4 * k, out, dense, kind)
    else:
        for k in range((stop - start) // 4):
            _dense_four(p, v, rows, sq, sqj, start + 4 * k, out, dense, kind)
    for k in range(start + (stop - start) // 4 * 4, stop):
        r = rows[k]
        out[k] = <col_t>kernel_from_dot(p, dot_dense(v, r, dense, kind), sq[r], sqj)
    scatter_row(v, j, dense, True, kind)


cdef inline void _dense_four(const KernelParams* p, const RowView* v, const int64_t* rows, const double* sq,
                             double sqj, int64_t k, col_t* out, const double* dense, value_t* kind) noexcept nogil:
    """_column's entries k .. k + 3 with a dense scratch: their dot products side by side (dot_dense4, each
    dot_dense's bit for bit), then the kernel."""
    cdef double d4[4]
    cdef int q
    dot_dense4(v, rows + k, dense, kind, d4)
    for q in range(4):
        out[k + q] = <col_t>kernel_from_dot(p, d4[q], sq[rows[k + q]], sqj)


# Panels (issue 49): in a view whose every row holds every feature, the cache may keep the rows of its positions
# copied four by four, one SIMD lane a row (a panel: width x 4 doubles, index-major), so that a column's dot
# products are taken four rows a vector: each lane sums its own row one product at a time in index order, a multiply
# then an add (no fused multiply-add: `fp-contract=off`), the very sums of dot_dense, bit for bit.
cdef extern from *:
    """
    #include <stdint.h>
    #include <string.h>
    #if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__) && defined(__GLIBC__)
    #define LLSVM_PANEL_CLONES __attribute__((target_clones("avx2", "default"), optimize("fp-contract=off"), unused))
    #elif defined(__GNUC__) && !defined(__clang__)
    #define LLSVM_PANEL_CLONES __attribute__((optimize("fp-contract=off"), unused))
    #else
    #define LLSVM_PANEL_CLONES __attribute__((unused))
    #endif
    typedef double llsvm_v4d __attribute__((vector_size(32)));
    /* out[4 p + q] = sum over k < width, in order, of P[p][k][q] * z[k] for the n panels p (P: n panels of
       width x 4 doubles, index-major); four panels at a time, so that sixteen chains of additions overlap. */
    static LLSVM_PANEL_CLONES void llsvm_panel_dots(const double* restrict P, int64_t width, int64_t n,
                                                    const double* restrict z, double* restrict out) {
        int64_t p = 0, k;
        for (; p + 4 <= n; p += 4) {
            const double* a = P + p * width * 4;
            const double* b = a + width * 4;
            const double* c = b + width * 4;
            const double* d = c + width * 4;
            llsvm_v4d s0 = {0.0, 0.0, 0.0, 0.0}, s1 = s0, s2 = s0, s3 = s0, x0, x1, x2, x3;
            for (k = 0; k < width; k++) {
                llsvm_v4d zk = {z[k], z[k], z[k], z[k]};
                memcpy(&x0, a + 4 * k, 32);
                memcpy(&x1, b + 4 * k, 32);
                memcpy(&x2, c + 4 * k, 32);
                memcpy(&x3, d + 4 * k, 32);
                s0 = s0 + x0 * zk;
                s1 = s1 + x1 * zk;
                s2 = s2 + x2 * zk;
                s3 = s3 + x3 * zk;
            }
            memcpy(out + 4 * p, &s0, 32);
            memcpy(out + 4 * p + 4, &s1, 32);
            memcpy(out + 4 * p + 8, &s2, 32);
            memcpy(out + 4 * p + 12, &s3, 32);
        }
        for (; p < n; p++) {
            const double* a = P + p * width * 4;
            llsvm_v4d s0 = {0.0, 0.0, 0.0, 0.0}, x0;
            for (k = 0; k < width; k++) {
                llsvm_v4d zk = {z[k], z[k], z[k], z[k]};
                memcpy(&x0, a + 4 * k, 32);
                s0 = s0 + x0 * zk;
            }
            memcpy(out + 4 * p, &s0, 32);
        }
    }
    """
    void llsvm_panel_dots(const double* P, int64_t width, int64_t n, const double* z, double* out) noexcept nogil


cdef void _rbf_float_chunk(const KernelParams* p, const RowView* v, const int64_t* rows, const double* sq, int64_t j,
                           int64_t first, int64_t last, int64_t c, float* out, const double* dense, int64_t full,
                           const double* panels, const double* panel_sq, int64_t width, const float* table,
                           int64_t size, value_t* kind) noexcept nogil:
    """Chunk c of an RBF float column's entries [first, last): entries first + c EXP_CHUNK up to EXP_CHUNK more
    (not past last); the squared distances, each from the same dot product as kernel_from_dot's (full > 0: x_j
    holds every index below it, and eight rows that do too take dot_full8), then their floats: exp_to_float of the
    exponents (libm's exp, bit for bit), or with a table of integer distances (table NULL: none) _rbf_from_table.
    panels (NULL: none): the positions' rows four by four (llsvm_panel_dots), width doubles a row, and panel_sq
    their squared norms by position (read in order, where sq[rows[k]] would be read at random after swaps)."""
    cdef double t[EXP_CHUNK]
    cdef double pd[EXP_CHUNK]
    cdef double d8[8]
    cdef double sqj = sq[j]
    cdef int64_t k, q, r, n
    cdef int64_t start = first + c * EXP_CHUNK
    cdef int64_t stop = start + EXP_CHUNK if last - start > EXP_CHUNK else last
    if dense != NULL:
        k = start
        if panels != NULL:              # the positions' panels (full rows): four rows a vector, from a multiple of 4
            while k < stop and k % 4 != 0:
                t[k - start] = rbf_d2(dot_dense(v, rows[k], dense, kind), sq[rows[k]], sqj)
                k += 1
            n = (stop - k) // 4
            if n > 0:
                llsvm_panel_dots(panels + (k // 4) * width * 4, width, n, dense, pd)
                for q in range(4 * n):
                    t[k + q - start] = rbf_d2(pd[q], panel_sq[k + q], sqj)
                k += 4 * n
        while k + 4 <= stop:
            if full > 0 and k + 8 <= stop and rows_full(v, rows + k, 8, full):
                dot_full8(v, rows + k, j, full, kind, d8)     # eight full rows: no index, x_j read once
                for q in range(8):
                    t[k + q - start] = rbf_d2(d8[q], sq[rows[k + q]], sqj)
                k += 8
                continue
            dot_dense4(v, rows + k, dense, kind, d8)    # four rows' sums side by side (each dot_dense's bit for bit)
            for q in range(4):
                t[k + q - start] = rbf_d2(d8[q], sq[rows[k + q]], sqj)
            k += 4
        while k < stop:
            r = rows[k]
            t[k - start] = rbf_d2(dot_dense(v, r, dense, kind), sq[r], sqj)
            k += 1
    else:
        for k in range(start, stop):
            r = rows[k]
            t[k - start] = rbf_d2(rows_dot(v, r, v, j, kind, kind), sq[r], sqj)
    _rbf_floats(p, t, out + start, stop - start, table, size)


cdef inline void _rbf_floats(const KernelParams* p, double* d2, float* out, int64_t n, const float* table,
                             int64_t size) noexcept nogil:
    """out[k] = <float>exp(-gamma d2[k]) for k < n, libm's exp bit for bit (d2 overwritten): without a table,
    exp_to_float of the exponents; with one (table[i] the float of exp(-gamma i), i < size), _rbf_from_table."""
    cdef int64_t k
    if table != NULL:
        _rbf_from_table(p, d2, out, n, table, size)
        return
    for k in range(n):
        d2[k] = -p.gamma * d2[k]
    exp_to_float(d2, out, n)


cdef extern from *:
    """
    #include <stdint.h>
    #if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__) && defined(__GLIBC__)
    #define LLSVM_TABLE_CLONES __attribute__((target_clones("avx2", "default"), unused))
    #else
    #define LLSVM_TABLE_CLONES __attribute__((unused))
    #endif
    /* out[k] = table[d2[k]] where d2[k] is an integer below size, +0 where d2[k] is above size - 1 and its exponent
       -gamma d2[k] is below zero_below; ok[k] = 0 elsewhere (the caller computes those). Written without branches
       (the index clamped into the table, then masks), so that GCC vectorises it for AVX2. */
    static LLSVM_TABLE_CLONES void llsvm_rbf_table_candidates(const double* restrict d2, int64_t n, double gamma,
                                                              const float* restrict table, int64_t size,
                                                              double zero_below, float* restrict out,
                                                              int32_t* restrict ok) {
        const double top = (double)(size - 1);
        int64_t k;
        for (k = 0; k < n; k++) {
            double d = d2[k];
            double lo = d > 0.0 ? d : 0.0;              /* NaN: 0 */
            double dc = lo < top ? lo : top;
            int32_t i = (int32_t)dc;                     /* in [0, size) */
            float v = table[i];
            int32_t in = d <= top;                       /* false for NaN */
            int32_t exact = (double)i == d;
            int32_t zero = -gamma * d < zero_below;
            out[k] = in ? v : 0.0f;
            ok[k] = (in & exact) | ((in ^ 1) & zero);
        }
    }
    """
    void llsvm_rbf_table_candidates(const double* d2, int64_t n, double gamma, const float* table, int64_t size,
                                    double zero_below, float* out, int32_t* ok) noexcept nogil


cdef inline void _rbf_from_table(const KernelParams* p, const double* d2, float* out, int64_t n, const float* table,
                                 int64_t size) noexcept nogil:
    """out[k] = <float>exp(-gamma d2[k]) for k < n (at most EXP_CHUNK), libm's bit for bit: table[d2[k]] where
    d2[k] is an integer below size (the table holds the float of exp of the very same exponent, -gamma k), +0 where
    it is not below size and its exponent is below EXP_FLOAT_ZERO (the float of exp is then +0 whatever libm's
    last bit, see there), else libm's exp (llsvm_rbf_table_candidates flags those)."""
    cdef int32_t ok[EXP_CHUNK]
    cdef int64_t k
    llsvm_rbf_table_candidates(d2, n, p.gamma, table, size, EXP_FLOAT_ZERO, out, ok)
    for k in range(n):
        if not ok[k]:
            out[k] = <float>exp(-p.gamma * d2[k])


cdef void _rbf_float_column(const KernelParams* p, const RowView* v, const int64_t* rows, const double* sq,
                            int64_t j, int64_t start, int64_t stop, float* out, double* dense, int64_t width,
                            int n_threads, const double* panels, const double* panel_sq, const float* table,
                            int64_t size, value_t* kind) noexcept nogil:
    """_column for an RBF float column: in chunks of EXP_CHUNK entries (n_threads > 1: the entries cut into one
    contiguous part a thread, each in chunks), x_j scattered into `dense` (width doubles) once when there is a
    scratch; table, size: _rbf_floats's."""
    cdef int64_t c, q, a, b, n_chunks, full = 0, n = stop - start
    if dense != NULL:
        scatter_row(v, j, dense, False, kind)
        full = width if v.indptr[j + 1] - v.indptr[j] == width else 0
    if n_threads > 1:                   # one contiguous part of the entries a thread, each in chunks
        for q in prange(n_threads, num_threads=n_threads, schedule="static"):
            a = start + n * q // n_threads
            b = start + n * (q + 1) // n_threads
            for c in range((b - a + EXP_CHUNK - 1) // EXP_CHUNK):
                _rbf_float_chunk(p, v, rows, sq, j, a, b, c, out, dense, full, panels, panel_sq, width, table, size,
                                 kind)
    else:
        n_chunks = (n + EXP_CHUNK - 1) // EXP_CHUNK
        for c in range(n_chunks):
            _rbf_float_chunk(p, v, rows, sq, j, start, stop, c, out, dense, full, panels, panel_sq, width, table,
                             size, kind)
    if dense != NULL:
        scatter_row(v, j, dense, True, kind)


cdef void _block_row(const KernelParams* p, double* a, int64_t m, const double* sq, const int64_t* rows,
                     const int64_t* js, const int64_t* which, int64_t l, int64_t r, float* out, const float* table,
                     int64_t size) noexcept nogil:
    """Row r of _block_columns' m missing columns from its dot products a (overwritten): out[which[k] l + r] =
    the float of k(x_rows[r], x_rows[js[which[k]]]); RBF's many at a time (_rbf_floats: the exps, or the cache's
    table of integer distances), the others one by one."""
    cdef float f[EXP_CHUNK]
    cdef int64_t s, k, n
    cdef double sqr = sq[rows[r]]
    if p.kernel_type != KERNEL_RBF:
        for k in range(m):
            out[which[k] * l + r] = <float>kernel_from_dot(p, a[k], sqr, sq[rows[js[which[k]]]])
        return
    for k in range(m):
        a[k] = rbf_d2(a[k], sqr, sq[rows[js[which[k]]]])
    s = 0
    while s < m:
        n = m - s if m - s < EXP_CHUNK else EXP_CHUNK
        _rbf_floats(p, a + s, f, n, table, size)
        for k in range(n):
            out[which[s + k] * l + r] = f[k]
        s += n


cdef void _scatter_block(const RowView* v, const int64_t* rows, const int64_t* js, const int64_t* which, int64_t m,
                         double* D, int64_t mp, value_t* kind) noexcept nogil:
    """D[i mp + k] = the value of feature i in the row of position js[which[k]], for k < m (D: zeros before)."""
    cdef int64_t k, e, jr
    cdef const value_t* x
    cdef const int32_t* idx
    for k in range(m):
        jr = rows[js[which[k]]]
        x = row_values(v, jr, kind)
        idx = row_indices(v, jr)
        for e in range(v.indptr[jr], v.indptr[jr + 1]):
            D[<int64_t>idx[e] * mp + k] = <double>x[e]


cdef void _block_columns(const KernelParams* p, const RowView* v, const int64_t* rows, const double* sq,
                         const int64_t* js, const int64_t* which, int64_t m, int64_t l, double* D, double* acc,
                         float* out, int n_threads, const float* table, int64_t size, value_t* kind) noexcept nogil:
    """out[which[k] l + r] = k(x_rows[r], x_rows[js[which[k]]]) for r < l and k < m (KernelCache.get_block): D
    (scratch_size(v) x m zeros) receives the m rows, acc holds m doubles per thread."""
    cdef int64_t k, r, e
    cdef const value_t* x
    cdef const int32_t* idx
    cdef double* a
    cdef const double* d
    cdef double xv
    _scatter_block(v, rows, js, which, m, D, m, kind)
    for r in prange(l, num_threads=n_threads, schedule="static"):
        a = acc + threadid() * m
        for k in range(m):
            a[k] = 0.0
        x = row_values(v, rows[r], kind)
        idx = row_indices(v, rows[r])
        for e in range(v.indptr[rows[r]], v.indptr[rows[r] + 1]):
            xv = <double>x[e]
            d = D + <int64_t>idx[e] * m
            for k in range(m):
                a[k] += xv * d[k]
        _block_row(p, a, m, sq, rows, js, which, l, r, out, table, size)


# Blocks over the panels (issue 49, --ws on dense views): the dot products of the positions' rows with m columns'
# rows at once, eight rows by eight columns a tile, so that each row value and each column value loaded serves eight
# products (llsvm_panel_dots, one column at a time, reads the whole panel store from memory per column). Each entry is
# still a lane of its own summing its row one product at a time in index order, a multiply then an add: the sums of
# llsvm_panel_dots, so of dot_dense, bit for bit.
cdef extern from *:
    """
    #include <stdint.h>
    #include <string.h>
    #if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__) && defined(__GLIBC__)
    #define LLSVM_TILE_WIDE 1
    #define LLSVM_TILE8 __attribute__((target("avx512f"), optimize("fp-contract=off"), unused))
    #define LLSVM_TILE4 __attribute__((target_clones("avx2", "default"), optimize("fp-contract=off"), unused))
    #elif defined(__GNUC__) && !defined(__clang__)
    #define LLSVM_TILE4 __attribute__((optimize("fp-contract=off"), unused))
    #else
    #define LLSVM_TILE4 __attribute__((unused))
    #endif
    typedef double llsvm_v8d __attribute__((vector_size(64)));
    typedef double llsvm_v4t __attribute__((vector_size(32)));
    /* The tile of two panels (rows a and b, four each) by W columns from c: each of the eight rows' W sums side by
       side in one vector, a multiply then an add a product. */
    #define LLSVM_TILE(V, W)                                                                                       \
        {                                                                                                          \
            V s0 = {0.0}, s1 = s0, s2 = s0, s3 = s0, s4 = s0, s5 = s0, s6 = s0, s7 = s0, d;                        \
            const double* dk = D + c;                                                                              \
            for (k = 0; k < width; k++, dk += mp) {                                                                \
                memcpy(&d, dk, sizeof(V));                                                                         \
                s0 = s0 + d * a[4 * k];                                                                            \
                s1 = s1 + d * a[4 * k + 1];                                                                        \
                s2 = s2 + d * a[4 * k + 2];                                                                        \
                s3 = s3 + d * a[4 * k + 3];                                                                        \
                s4 = s4 + d * b[4 * k];                                                                            \
                s5 = s5 + d * b[4 * k + 1];                                                                        \
                s6 = s6 + d * b[4 * k + 2];                                                                        \
                s7 = s7 + d * b[4 * k + 3];                                                                        \
            }                                                                                                      \
            memcpy(out + c, &s0, sizeof(V));                                                                       \
            memcpy(out + mp + c, &s1, sizeof(V));                                                                  \
            memcpy(out + 2 * mp + c, &s2, sizeof(V));                                                              \
            memcpy(out + 3 * mp + c, &s3, sizeof(V));                                                              \
            memcpy(out + 4 * mp + c, &s4, sizeof(V));                                                              \
            memcpy(out + 5 * mp + c, &s5, sizeof(V));                                                              \
            memcpy(out + 6 * mp + c, &s6, sizeof(V));                                                              \
            memcpy(out + 7 * mp + c, &s7, sizeof(V));                                                              \
        }
    /* out[q mp + c] = sum over k < width, in order, of the row value of lane q (rows 0-3: panel a, 4-7: panel b)
       times D[k mp + c] (a multiply, then an add), for the mp columns c of D (width x mp, index-major; mp a
       multiple of 8). b may be a panel of zeros' stand-in: the caller passes a again and ignores rows 4-7. */
    static LLSVM_TILE4 void llsvm_tile_dots4(const double* restrict a, const double* restrict b, int64_t width,
                                             const double* restrict D, int64_t mp, double* restrict out) {
        int64_t c, k;
        for (c = 0; c < mp; c += 4)
            LLSVM_TILE(llsvm_v4t, 4)
    }
    #ifdef LLSVM_TILE_WIDE
    static LLSVM_TILE8 void llsvm_tile_dots8(const double* restrict a, const double* restrict b, int64_t width,
                                             const double* restrict D, int64_t mp, double* restrict out) {
        int64_t c, k;
        for (c = 0; c < mp; c += 8)
            LLSVM_TILE(llsvm_v8d, 8)
    }
    #endif
    /* The dot products of n (1 or 2) panels of P (width x 4 doubles each, index-major) with D's mp columns: 512-bit
       vectors where the CPU has them, else 256-bit ones (register pressure: sixteen 256-bit accumulators would
       spill); the same sums either way, so the same doubles on every machine. */
    static int llsvm_tile_narrow = 0;      /* the tests' switch: 256-bit vectors even where 512-bit ones exist */
    static int __attribute__((unused)) llsvm_tile_wide(void) {
    #ifdef LLSVM_TILE_WIDE
        return !llsvm_tile_narrow && __builtin_cpu_supports("avx512f");
    #else
        return 0;
    #endif
    }
    static void __attribute__((unused)) llsvm_tile_dots(const double* P, int64_t width, int64_t n, const double* D,
                                                        int64_t mp, double* out) {
        const double* b = n > 1 ? P + width * 4 : P;
    #ifdef LLSVM_TILE_WIDE
        if (llsvm_tile_wide()) {
            llsvm_tile_dots8(P, b, width, D, mp, out);
            return;
        }
    #endif
        llsvm_tile_dots4(P, b, width, D, mp, out);
    }
    """
    void llsvm_tile_dots(const double* P, int64_t width, int64_t n, const double* D, int64_t mp,
                         double* out) noexcept nogil
    int llsvm_tile_narrow
    int llsvm_tile_wide() noexcept nogil


def tile_vectors(narrow=None):
    """The vectors get_block's tiles over the panels use (512 or 256 bits: the same doubles either way); narrow
    True or False (the tests) asks for 256 bits even where 512 exist, or not."""
    global llsvm_tile_narrow
    if narrow is not None:
        llsvm_tile_narrow = 1 if narrow else 0
    return 512 if llsvm_tile_wide() else 256


cdef void _tile_rbf(const KernelParams* p, double* a, float* f, int64_t nr, int64_t r0, const double* panel_sq,
                    const int64_t* which, int64_t m, int64_t mp, int64_t l, const double* sqc, float* out,
                    const float* table, int64_t size) noexcept nogil:
    """The floats of a tile's nr rows (positions r0 ..) from their dot products a (nr x mp, overwritten): the
    squared distances (rbf_d2, as _block_row's), their floats a row at a time (_rbf_floats: the exps, or the table)
    into f (nr x mp), then written into out eight positions of a column at a time."""
    cdef int64_t q, k, s, c
    cdef double sqr
    cdef float* col
    for q in range(nr):
        sqr = panel_sq[r0 + q]
        for k in range(m):
            a[q * mp + k] = rbf_d2(a[q * mp + k], sqr, sqc[k])
        s = 0
        while s < m:
            c = m - s if m - s < EXP_CHUNK else EXP_CHUNK
            _rbf_floats(p, a + q * mp + s, f + q * mp + s, c, table, size)
            s += c
    for k in range(m):
        col = out + which[k] * l + r0
        for q in range(nr):
            col[q] = f[q * mp + k]


cdef void _block_panel_columns(const KernelParams* p, const double* panels, const double* panel_sq, int64_t width,
                               const int64_t* which, int64_t m, int64_t l, const double* D, const double* sqc,
                               int64_t mp, double* acc, float* out, int n_threads, const float* table,
                               int64_t size) noexcept nogil:
    """_block_columns over the panels (an RBF cache's: only RBF views have them): D (width x mp, the m missing
    columns' rows, zeros elsewhere and in the columns beyond m; sqc their squared norms) against the positions' rows
    two panels at a time (llsvm_tile_dots, the threads sharing the pairs of panels), then the tile's floats
    (_tile_rbf). acc holds 12 mp doubles per thread (the tile's 8 rows of doubles, then of floats)."""
    cdef int64_t n_panels = (l + 3) // 4, g, r0, n, nr
    cdef double* a
    for g in prange((n_panels + 1) // 2, num_threads=n_threads, schedule="static"):
        a = acc + threadid() * 12 * mp
        n = 2 if 2 * g + 1 < n_panels else 1
        llsvm_tile_dots(panels + 2 * g * width * 4, width, n, D, mp, a)
        r0 = 8 * g
        nr = 4 * n if l - r0 > 4 * n else l - r0
        _tile_rbf(p, a, <float*>(a + 8 * mp), nr, r0, panel_sq, which, m, mp, l, sqc, out, table, size)


cdef void _precomputed_column(const RowView* v, const int64_t* rows, int64_t j, int64_t start, int64_t stop,
                              col_t* out, int n_threads, value_t* kind) noexcept nogil:
    """out[k] = x_rows[k]'s value at x_j's serial, k in [start, stop) (kernel.pxd, precomputed_at): the serial read
    once, then one look-up per entry; n_threads > 1 shares the entries among OpenMP threads."""
    cdef int64_t k
    cdef int64_t s = precomputed_serial(v, j, kind)
    if n_threads > 1:
        for k in prange(start, stop, num_threads=n_threads, schedule="guided"):
            out[k] = <col_t>precomputed_at(v, rows[k], s, kind)
    else:
        for k in range(start, stop):
            out[k] = <col_t>precomputed_at(v, rows[k], s, kind)


# -- binary rows ---------------------------------------------------------------------------------------------------
# Rows whose every value is 0 or 1 (one-hot and indicator features: a9a, mushrooms, dna.scale, the web and adult
# sets) have dot products that are counts: x.z = |x AND z|, |x|^2 = |x|. A count is an integer below 2^53, so
# LIBSVM's sum of products (one at a time in index order) is that integer exactly, whatever the order, and so is
# every double the kernel is made of: RBF's |x|^2 + |z|^2 - 2 x.z is the integer |x| + |z| - 2 |x AND z| (never
# negative: the clamp never acts), the others' x.z is |x AND z|. A kernel value is therefore one of a few floats, the
# kernel of each integer from 0 to twice the widest row's count, computed once with kernel_from_dot (libm's exp,
# pow by squaring, tanh: the same call on the same doubles as the general path, so the same float bit for bit), and
# a column entry is a popcount over the rows' bits and a look-up. The KernelCache takes this way for the floats of
# its columns when the view qualifies (_binary_setup: every stored value 0.0 or 1.0, at most BINARY_MAX_WORDS words of
# 64 features a row, the squared norms given equal to the counts); kernel_column and prediction keep theirs.
cdef extern from *:
    """
    #include <stdint.h>
    #if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__) && defined(__GLIBC__)
    #define LLSVM_POPCNT_CLONES __attribute__((target_clones("popcnt", "default"), unused))
    #else
    #define LLSVM_POPCNT_CLONES __attribute__((unused))
    #endif
    /* out[k] = table[|x_r| + |x_j| - 2 |x_r AND x_j|] (rbf) or table[|x_r AND x_j|] for r = rows[k], k in
       [start, stop); bits: w words a row, ones: each row's count. The index is a (|x_r| + |x_j|) + (1 - 3a) c with
       a = rbf (0 or 1): no branch. The popcount is one instruction where the CPU has it (target_clones), else the
       compiler's own; one, two, three and four words a row have loops of their own (the word loop unrolled). */
    #define LLSVM_BINARY_LOOP(W, R)                                                                 \
        for (k = start; k < stop; k++) {                                                            \
            const uint64_t* br = bits + (R) * (W);                                                  \
            int64_t c = 0, q;                                                                       \
            for (q = 0; q < (W); q++)                                                               \
                c += __builtin_popcountll(br[q] & bj[q]);                                           \
            out[k] = table[a * ((int64_t)ones[R] + oj) + m * c];                                    \
        }
    static LLSVM_POPCNT_CLONES void llsvm_binary_column(const uint64_t* restrict bits, int64_t w,
                                                        const int32_t* restrict ones, const int64_t* restrict rows,
                                                        int64_t j, int64_t start, int64_t stop,
                                                        const float* restrict table, int rbf,
                                                        float* restrict out) {
        const uint64_t* bj = bits + j * w;
        const int64_t a = rbf ? 1 : 0, m = rbf ? -2 : 1, oj = ones[j];
        int64_t k;
        if (rows == NULL) {     /* bits and ones by position (the cache's copy in its order), j a position */
            switch (w) {
            case 1: LLSVM_BINARY_LOOP(1, k) break;
            case 2: LLSVM_BINARY_LOOP(2, k) break;
            case 3: LLSVM_BINARY_LOOP(3, k) break;
            case 4: LLSVM_BINARY_LOOP(4, k) break;
            default: LLSVM_BINARY_LOOP(w, k)
            }
            return;
        }
        switch (w) {
        case 1: LLSVM_BINARY_LOOP(1, rows[k]) break;
        case 2: LLSVM_BINARY_LOOP(2, rows[k]) break;
        case 3: LLSVM_BINARY_LOOP(3, rows[k]) break;
        case 4: LLSVM_BINARY_LOOP(4, rows[k]) break;
        default: LLSVM_BINARY_LOOP(w, rows[k])
        }
    }
    """
    void llsvm_binary_column(const uint64_t* bits, int64_t w, const int32_t* ones, const int64_t* rows, int64_t j,
                             int64_t start, int64_t stop, const float* table, int rbf, float* out) noexcept nogil


cdef inline void _swap_lanes(double* panels, double* panel_sq, int64_t width, int64_t i, int64_t j) noexcept nogil:
    """Positions i and j exchanged in built panels (their lanes and squared norms): a swap costs O(width), where
    a rebuild after LIBSVM's shrinking would cost O(l width)."""
    cdef double* a = panels + (i // 4) * width * 4 + i % 4
    cdef double* b = panels + (j // 4) * width * 4 + j % 4
    cdef double t
    cdef int64_t k
    for k in range(width):
        t = a[4 * k]; a[4 * k] = b[4 * k]; b[4 * k] = t
    t = panel_sq[i]; panel_sq[i] = panel_sq[j]; panel_sq[j] = t


cdef inline void _swap_bits(uint64_t* pbits, int32_t* pones, int64_t w, int64_t i, int64_t j) noexcept nogil:
    """Positions i and j exchanged in the binary rows' bits and counts by position (O(w))."""
    cdef uint64_t t
    cdef int32_t c
    cdef int64_t q
    for q in range(w):
        t = pbits[i * w + q]; pbits[i * w + q] = pbits[j * w + q]; pbits[j * w + q] = t
    c = pones[i]; pones[i] = pones[j]; pones[j] = c


cdef bint _all_finite(const RowView* v, value_t* kind) noexcept nogil:
    """Whether every stored value of v is finite (_panel_setup)."""
    cdef int64_t r, e
    cdef const value_t* x
    for r in range(v.n_rows):
        x = row_values(v, r, kind)
        for e in range(v.indptr[r], v.indptr[r + 1]):
            if not isfinite(x[e]):
                return False
    return True


cdef enum:
    BINARY_MAX_WORDS = 16       # 1,024 features: 128 bytes a row at most
    BINARY_CHUNK = 1024         # a binary column's entries shared among threads this many at a time


cdef int64_t _binary_rows(const RowView* v, int64_t w, uint64_t* bits, int32_t* ones, value_t* kind) noexcept nogil:
    """bits NULL: whether every stored value of v is 0.0 or 1.0 (1: yes, 0: no). Else: row r's bit i set (in bits[r w
    .. r w + w), zeros on entry) for each index i it holds a 1 at, ones[r] its count; returns the largest count."""
    cdef int64_t r, e, top = 0
    cdef const value_t* x
    cdef const int32_t* idx
    cdef double a
    for r in range(v.n_rows):
        x = row_values(v, r, kind)
        idx = row_indices(v, r)
        if bits == NULL:
            for e in range(v.indptr[r], v.indptr[r + 1]):
                a = <double>x[e]
                if a != 0.0 and a != 1.0:
                    return 0
            continue
        ones[r] = 0
        for e in range(v.indptr[r], v.indptr[r + 1]):
            if <double>x[e] == 1.0:
                bits[r * w + (idx[e] >> 6)] |= (<uint64_t>1) << (idx[e] & 63)
                ones[r] += 1
        if ones[r] > top:
            top = ones[r]
    return 1 if bits == NULL else top


cdef bint _integer_rows(const RowView* v, value_t* kind) noexcept nogil:
    """Whether every stored value of v is a finite integer."""
    cdef int64_t r, e
    cdef const value_t* x
    cdef double a
    for r in range(v.n_rows):
        x = row_values(v, r, kind)
        for e in range(v.indptr[r], v.indptr[r + 1]):
            a = <double>x[e]
            if not isfinite(a) or a != floor(a):
                return False
    return True


cdef void _binary_column(const uint64_t* bits, int64_t w, const int32_t* ones, const int64_t* rows, int64_t j,
                         int64_t start, int64_t stop, const float* table, bint rbf, float* out,
                         int n_threads) noexcept nogil:
    """A binary view's column entries [start, stop) (see above: llsvm_binary_column), in chunks of BINARY_CHUNK
    shared among n_threads OpenMP threads when n_threads > 1."""
    cdef int64_t c, n_chunks = (stop - start + BINARY_CHUNK - 1) // BINARY_CHUNK, a, b
    if n_threads > 1:
        for c in prange(n_chunks, num_threads=n_threads, schedule="static"):
            a = start + c * BINARY_CHUNK
            b = a + BINARY_CHUNK if stop - a > BINARY_CHUNK else stop
            llsvm_binary_column(bits, w, ones, rows, j, a, b, table, rbf, out)
    else:
        llsvm_binary_column(bits, w, ones, rows, j, start, stop, table, rbf, out)


def kernel_column(Rows X not None, const int64_t[::1] rows, int64_t j, params, const double[::1] sqnorm,
                  double[::1] out):
    """out[k] = k(x_rows[k], x_j) for every k (rows: row numbers of X; j: a row of X). sqnorm: kernel_sq_norms of
    X (|x_r|^2 for every row r, or the precomputed kernel's diagonal)."""
    cdef KernelParams p = kernel_params(params)
    _check_view(X, "X")
    _check_sq(X, sqnorm, "sqnorm")
    if j < 0 or j >= X.v.n_rows:
        raise ValueError(f"column {j} out of range for a view of {X.v.n_rows} rows")
    if out.shape[0] != rows.shape[0]:
        raise ValueError(f"out has {out.shape[0]} entries for {rows.shape[0]} rows")
    _check_rows(rows, X.v.n_rows)
    cdef int64_t n = rows.shape[0]
    if n == 0:
        return
    cdef int64_t width = scratch_size(&X.v) if p.kernel_type != KERNEL_PRECOMPUTED else 0
    cdef double[::1] scratch = np.zeros(max(width, 1), np.float64)
    cdef double* dense = &scratch[0] if width > 0 else NULL
    with nogil:
        if X.f32:
            _column(&p, &X.v, &rows[0], &sqnorm[0], j, 0, n, &out[0], dense, width, 1, NULL, NULL, NULL, 0, <float*>NULL)
        else:
            _column(&p, &X.v, &rows[0], &sqnorm[0], j, 0, n, &out[0], dense, width, 1, NULL, NULL, NULL, 0, <double*>NULL)


def exp_floats(const double[::1] t, float[::1] out):
    """out[k] = float32(exp(t[k])) as the kernel cache computes it (kernel.pxd, exp_to_float: libm's exp, bit for
    bit); returns how many entries were recomputed with libm's exp."""
    if out.shape[0] != t.shape[0]:
        raise ValueError(f"out has {out.shape[0]} entries for {t.shape[0]}")
    if t.shape[0] == 0:
        return 0
    cdef int64_t redone
    with nogil:
        redone = exp_to_float(&t[0], &out[0], t.shape[0])
    return redone


def index_width(Rows X not None):
    """The largest index of X's rows + 1 (0 for none): the width of a dense row over them (n_features may be far
    more: a CSR matrix of 10^9 columns holding a few non-zeros)."""
    return row_width(&X.v)


cdef void _diag(const KernelParams* p, const int64_t* rows, const double* sq, int64_t n, double* out) noexcept nogil:
    cdef int64_t k
    cdef double s
    for k in range(n):
        s = sq[rows[k]]
        out[k] = kernel_from_dot(p, s, s, s)


def kernel_diag(const int64_t[::1] rows, params, const double[::1] sqnorm, double[::1] QD):
    """QD[k] = k(x_rows[k], x_rows[k]) from the squared norms (sqnorm: kernel_sq_norms of the view, by row r):
    |x|^2 for linear, (gamma |x|^2 + coef0)^degree, 1 for RBF, tanh(gamma |x|^2 + coef0), and for the precomputed
    kernel sqnorm itself (its diagonal)."""
    cdef KernelParams p = kernel_params(params)
    if QD.shape[0] != rows.shape[0]:
        raise ValueError(f"QD has {QD.shape[0]} entries for {rows.shape[0]} rows")
    _check_rows(rows, sqnorm.shape[0])
    cdef int64_t n = rows.shape[0]
    if n == 0:
        return
    with nogil:
        _diag(&p, &rows[0], &sqnorm[0], n, &QD[0])


cdef void _block(const KernelParams* p, const RowView* a, const RowView* b, const double* sqa, const double* sqb,
                 double* out, value_t* kind_a, value2_t* kind_b) noexcept nogil:
    cdef int64_t i, j, nb = b.n_rows
    cdef double* o
    for i in range(a.n_rows):
        o = out + i * nb
        for j in range(nb):
            o[j] = kernel_eval(p, a, i, b, j, sqa[i], sqb[j], kind_a, kind_b)


def kernel_block(Rows A not None, Rows B not None, params, const double[::1] sqA, const double[::1] sqB,
                 double[:, ::1] out):
    """out[a, b] = k(A_a, B_b) for every row a of A and b of B (the two views may differ in value type). sqA,
    sqB: the rows' kernel_sq_norms (views without a bias coordinate). Precomputed: A_a's value at B_b's serial."""
    cdef KernelParams p = kernel_params(params)
    _check_view(A, "A")
    _check_view(B, "B")
    _check_sq(A, sqA, "sqA")
    _check_sq(B, sqB, "sqB")
    if out.shape[0] != A.v.n_rows or out.shape[1] != B.v.n_rows:
        raise ValueError(f"out is {out.shape[0]} x {out.shape[1]}; the block is {A.v.n_rows} x {B.v.n_rows}")
    if A.v.n_rows == 0 or B.v.n_rows == 0:
        return
    with nogil:
        if A.f32:
            if B.f32:
                _block(&p, &A.v, &B.v, &sqA[0], &sqB[0], &out[0, 0], <float*>NULL, <float*>NULL)
            else:
                _block(&p, &A.v, &B.v, &sqA[0], &sqB[0], &out[0, 0], <float*>NULL, <double*>NULL)
        else:
            if B.f32:
                _block(&p, &A.v, &B.v, &sqA[0], &sqB[0], &out[0, 0], <double*>NULL, <float*>NULL)
            else:
                _block(&p, &A.v, &B.v, &sqA[0], &sqB[0], &out[0, 0], <double*>NULL, <double*>NULL)


def kernel_sq_norms(Rows X not None, params):
    """What the kernel functions take as the squared norms of X's rows (the `sqnorm` of kernel_column, kernel_diag,
    kernel_block, KernelCache, and the solvers' QD through kernel_diag), as float64: |x_r|^2 for the kernel types
    0..3 (_rowops.row_sq_norms, X without a bias coordinate), the diagonal k(x_r, x_r) for the precomputed kernel
    (x_r's value at its own serial; kernel.pxd, precomputed_sq_norm)."""
    cdef KernelParams p = kernel_params(params)
    _check_view(X, "X")
    return row_sq_norms(X, p.kernel_type == KERNEL_PRECOMPUTED)


# -- the column cache ---------------------------------------------------------------------------------------------
cdef inline void _lru_delete(int64_t* prev, int64_t* next, int64_t c) noexcept nogil:
    next[prev[c]] = next[c]
    prev[next[c]] = prev[c]


cdef inline void _lru_insert(int64_t* prev, int64_t* next, int64_t sentinel, int64_t c) noexcept nogil:
    """c becomes the most recently used."""
    next[c] = sentinel
    prev[c] = prev[sentinel]
    next[prev[c]] = c
    prev[sentinel] = c


cdef int64_t BOOKKEEPING = 6 * sizeof(int64_t)     # per row: rows, first, slot, length, prev, next


cdef inline int64_t _slots(int64_t l, double cache_size) noexcept nogil:
    """The columns a budget of cache_size MB holds for an l-row problem: the budget in bytes less the bookkeeping, in
    whole columns of l floats; at least min(2, l), at most l."""
    cdef int64_t budget, col_bytes, n_slots
    budget = <int64_t>(cache_size * 1048576.0) if cache_size * 1048576.0 < 9.0e18 else <int64_t>9e18
    budget -= l * BOOKKEEPING
    col_bytes = l * <int64_t>sizeof(float)
    n_slots = budget // col_bytes if col_bytes > 0 and budget > 0 else 0
    if n_slots < 2:
        n_slots = 2
    return n_slots if n_slots < l else l


cdef void _fresh(KernelCache c, int64_t l, int64_t n_slots) noexcept nogil:
    """An empty cache of n_slots columns over the l rows in c.rows: every position at its own place, nothing
    cached."""
    cdef int64_t k
    c.l = l
    c.n_slots = n_slots
    for k in range(l):
        c.first[k] = k
        c.slot[k] = -1
        c.length[k] = 0
    c.prev[l] = l
    c.next[l] = l
    for k in range(n_slots):
        c.free_slots[k] = n_slots - 1 - k          # slot 0 is taken first
    c.n_free = n_slots
    c.n_filled = 0


cdef int _grow(void** a, int64_t n, size_t size) noexcept nogil:
    """Reallocate *a to n entries of `size` bytes (its contents are not kept); 0, or -1 when it failed (*a freed)."""
    free(a[0])
    a[0] = malloc(<size_t>(n if n > 0 else 1) * size)
    return 0 if a[0] != NULL else -1


cdef class KernelCache:
    """KernelCache(X, rows, params, sqnorm, cache_size=100.0, n_threads=1): kernel columns of the l-row problem
    X[rows] (rows None: all of X's rows) under a budget of cache_size MB (LIBSVM's -m), least recently used evicted
    first; a long column is computed by n_threads OpenMP threads (the values do not depend on it).

    Positions 0..l-1 start as rows[0..l-1]; swap_index(i, j) exchanges two positions (rows and cached entries).
    column(j, length) is K[p, j] for positions p < length as float32 (a copy; nogil callers use get_column).
    Never fewer than min(2, l) columns, whatever the budget (LIBSVM's minimum).
    """

    def __cinit__(self):
        self.slab = NULL
        self.rows = NULL
        self.first = NULL
        self.slot = NULL
        self.length = NULL
        self.prev = NULL
        self.next = NULL
        self.free_slots = NULL
        self.dense = NULL
        self.bits = NULL
        self.ones = NULL
        self.table = NULL
        self.table_size = 0
        self.n_words = 0
        self.panels = NULL
        self.panel_sq = NULL
        self.panel_cap = 0
        self.panels_dirty = True
        self.pbits = NULL
        self.pones = NULL
        self.pbit_cap = 0
        self.pbits_dirty = True

    def __init__(self, Rows X not None, rows, params, const double[::1] sqnorm, double cache_size=DEFAULT_CACHE_SIZE,
                 int n_threads=1):
        cdef int64_t l, k, col_bytes, n_slots, width
        cdef const int64_t[::1] r
        if self.slab != NULL or self.rows != NULL:
            raise RuntimeError("KernelCache is initialized once")
        self.params = kernel_params(params)
        _check_view(X, "X")
        _check_sq(X, sqnorm, "sqnorm")
        if not (cache_size >= 0) or not isfinite(cache_size):
            raise ValueError(f"cache size must be a finite number of MB >= 0, not {cache_size}")
        if rows is None:
            rows = np.arange(X.v.n_rows, dtype=np.int64)
        r = rows
        _check_rows(r, X.v.n_rows)
        l = r.shape[0]
        n_slots = _slots(l, cache_size)
        col_bytes = l * <int64_t>sizeof(float)
        self.cache_size = cache_size
        self.X = X
        self.v = X.v
        self.f32 = X.f32
        self._sq = sqnorm
        self.sq = &sqnorm[0] if sqnorm.shape[0] > 0 else NULL
        self.l = l
        self.n_slots = n_slots
        # every allocation checked here, never in nogil
        self.rows = <int64_t*>malloc(max(l, 1) * sizeof(int64_t))
        self.first = <int64_t*>malloc(max(l, 1) * sizeof(int64_t))
        self.slot = <int64_t*>malloc(max(l, 1) * sizeof(int64_t))
        self.length = <int64_t*>malloc(max(l, 1) * sizeof(int64_t))
        self.prev = <int64_t*>malloc((l + 1) * sizeof(int64_t))
        self.next = <int64_t*>malloc((l + 1) * sizeof(int64_t))
        self.free_slots = <int64_t*>malloc(max(n_slots, 1) * sizeof(int64_t))
        # no scratch for a wide sparse view (kernel.pxd: products merge rows), nor for the precomputed kernel's
        # look-ups
        width = scratch_size(&X.v) if self.params.kernel_type != KERNEL_PRECOMPUTED else 0
        self.width = width
        if width > 0:
            self.dense = <double*>calloc(width, sizeof(double))
            if self.dense == NULL:
                raise MemoryError(f"kernel cache: a scratch row of {width} features ({width * 8} bytes) could not be "
                                  f"allocated")
        if n_slots > 0:
            self.slab = <float*>malloc(<size_t>n_slots * <size_t>col_bytes)
        if (self.rows == NULL or self.first == NULL or self.slot == NULL or self.length == NULL or self.prev == NULL
                or self.next == NULL or self.free_slots == NULL or (n_slots > 0 and self.slab == NULL)):
            raise MemoryError(f"kernel cache: {n_slots} columns of {l} rows ({n_slots * col_bytes} bytes) "
                              f"could not be allocated")
        self.cap_l = l
        self.cap_slots = max(n_slots, 1)
        self.cap_slab = n_slots * l
        for k in range(l):
            self.rows[k] = r[k]
        _fresh(self, l, n_slots)
        if n_threads < 1:
            raise ValueError("n_threads must be at least 1")
        self.n_threads = n_threads
        # a precomputed value is one look-up, not a pass over the row
        self.row_cost = 16 if self.params.kernel_type == KERNEL_PRECOMPUTED else \
            (X.v.indptr[X.v.n_rows] // X.v.n_rows if X.v.n_rows > 0 else 0) + 16
        if self._binary_setup(width, l):
            self.row_cost = self.n_words + 4            # a popcount a word, then a look-up
        else:
            self._integer_setup()
            self._panel_setup(l)

    cdef void _panel_setup(self, int64_t l) except *:
        """Panels (see llsvm_panel_dots) for an RBF cache over a dense view: its rows hold on average at least 3/4
        of the scratch's width (a row's missing features are zeros in its lane: a product 0 * z is an exact zero
        when z is finite, and adding one to dot_dense's sum, which starts at +0 and is never -0, changes no bit; so
        when a row lacks a feature every value must be finite, checked here), and the panels take at most
        PANEL_FREE bytes (a copy of the rows beside the -m budget, so only a small one): room for max(l, the view's
        rows) positions (a retargeted problem larger than that goes without), with their squared norms in position
        order beside them (panel_sq), built when a column first needs them and again after a retarget (O(l width),
        as one column costs; a swap exchanges the two positions' lanes, _swap_lanes). Nothing when the memory could
        not be had."""
        cdef int64_t n = self.v.n_rows, cap, width = self.width, nnz
        cdef bint finite
        if self.params.kernel_type != KERNEL_RBF or self.dense == NULL or width == 0 or n == 0:
            return
        nnz = self.v.indptr[n] - self.v.indptr[0]
        if 4.0 * <double>nnz < 3.0 * <double>n * <double>width:           # in double: no overflow
            return
        cap = (max(l, n) + 3) // 4 * 4
        if <double>cap * (<double>width + 1.0) * 8.0 > <double>PANEL_FREE:
            return
        if nnz != n * width:            # some row lacks a feature: zeros in its lane need finite values
            with nogil:
                finite = _all_finite(&self.v, <float*>NULL) if self.f32 else _all_finite(&self.v, <double*>NULL)
            if not finite:
                return
        self.panels = <double*>malloc(cap * (width + 1) * sizeof(double))
        if self.panels != NULL:
            self.panel_cap = cap
            self.panel_sq = self.panels + cap * width
            self.panels_dirty = True

    cdef void _build_panels(self) noexcept nogil:
        """The panels of positions 0 .. l - 1 (position p in panel p / 4, lane p % 4: its row's values at their
        indices, zeros elsewhere; the last panel's spare lanes zero) and panel_sq[p], the squared norm of p's row."""
        cdef int64_t p, k, r, width = self.width, l = self.l
        cdef double* P
        cdef const float* xf
        cdef const double* xd
        cdef const int32_t* idx
        cdef int64_t a, b
        for p in range((l + 3) // 4 * 4):
            P = self.panels + (p // 4) * width * 4 + p % 4
            if p >= l:
                for k in range(width):
                    P[4 * k] = 0.0
                self.panel_sq[p] = 0.0
                continue
            r = self.rows[p]
            self.panel_sq[p] = self.sq[r]
            a = self.v.indptr[r]
            b = self.v.indptr[r + 1]
            if b - a != width:          # a row that lacks features (a full row's indices are 0 .. width - 1)
                for k in range(width):
                    P[4 * k] = 0.0
            idx = row_indices(&self.v, r) + a
            if self.f32:
                xf = row_values(&self.v, r, <float*>NULL) + a
                if b - a == width:
                    for k in range(width):
                        P[4 * k] = <double>xf[k]
                else:
                    for k in range(b - a):
                        P[4 * idx[k]] = <double>xf[k]
            else:
                xd = row_values(&self.v, r, <double*>NULL) + a
                if b - a == width:
                    for k in range(width):
                        P[4 * k] = xd[k]
                else:
                    for k in range(b - a):
                        P[4 * idx[k]] = xd[k]
        self.panels_dirty = False

    cdef void _build_pbits(self) noexcept nogil:
        """pbits and pones: each position's row's bits and count (the binary rows' way, by position)."""
        cdef int64_t p, q, w = self.n_words
        for p in range(self.l):
            for q in range(w):
                self.pbits[p * w + q] = self.bits[self.rows[p] * w + q]
            self.pones[p] = self.ones[self.rows[p]]
        self.pbits_dirty = False

    cdef void _drop_pbits(self) noexcept nogil:
        """Without the bits by position (the columns read them by row)."""
        free(self.pbits)
        free(self.pones)
        self.pbits = NULL
        self.pones = NULL
        self.pbit_cap = 0

    cdef bint _binary_setup(self, int64_t width, int64_t l) except -1:
        """Take the binary rows' way (see above, llsvm_binary_column) when the view qualifies: a kernel with a dot
        product (not precomputed) and a dense scratch, every stored value 0.0 or 1.0, w = ceil(width / 64) words a
        row with w <= BINARY_MAX_WORDS and w <= max(2, the mean entries of a row) (the bits then cost no more than
        the row's gathered products, nor more memory than its index array, 4 bytes an entry, plus 16 bytes), and for
        RBF the squared norms given equal to the counts. The bits, counts and table are allocated here, checked;
        when an allocation fails the columns take the general way (the same floats). Returns whether it took it."""
        cdef int64_t w = (width + 63) // 64, n = self.v.n_rows, k, top, size
        cdef bint rbf = self.params.kernel_type == KERNEL_RBF
        if self.params.kernel_type == KERNEL_PRECOMPUTED or self.dense == NULL or w == 0 or w > BINARY_MAX_WORDS:
            return False
        if n == 0 or w > max(2, (self.v.indptr[n] - self.v.indptr[0]) // n):
            return False
        with nogil:
            k = _binary_rows(&self.v, w, NULL, NULL, <float*>NULL) if self.f32 else \
                _binary_rows(&self.v, w, NULL, NULL, <double*>NULL)
        if not k:
            return False
        self.bits = <uint64_t*>calloc(n * w, sizeof(uint64_t))
        self.ones = <int32_t*>malloc(n * sizeof(int32_t))
        if self.bits == NULL or self.ones == NULL:
            self._binary_free()
            return False
        with nogil:
            top = _binary_rows(&self.v, w, self.bits, self.ones, <float*>NULL) if self.f32 else \
                _binary_rows(&self.v, w, self.bits, self.ones, <double*>NULL)
            if rbf:
                for k in range(n):
                    if self.sq[k] != <double>self.ones[k]:
                        top = -1
                        break
        size = 2 * top + 1 if rbf else top + 1
        if top < 0:
            self._binary_free()
            return False
        if not self._fill_table(size):
            self._binary_free()
            return False
        self.n_words = w
        # the bits and counts again in the positions' order (room for max(l, the view's rows) positions, else
        # none: the columns then read them by row), built when a column first needs them and kept in order by
        # swap, so that a column reads them in sequence where by row it would read them at random after LIBSVM's
        # shrinking has shuffled the positions
        k = max(l, n)
        self.pbits = <uint64_t*>malloc(max(k * w, 1) * sizeof(uint64_t))
        self.pones = <int32_t*>malloc(max(k, 1) * sizeof(int32_t))
        if self.pbits == NULL or self.pones == NULL:
            self._drop_pbits()
        else:
            self.pbit_cap = k
            self.pbits_dirty = True
        return True

    cdef bint _fill_table(self, int64_t size) except -1:
        """self.table: the float of the kernel at each integer k < size, |x - z|^2 = k for RBF (its exponent -gamma
        k, as rbf_exponent makes it), x.z = k for the others, by kernel_from_dot; False when the memory could not be
        had."""
        cdef int64_t k
        cdef bint rbf = self.params.kernel_type == KERNEL_RBF
        self.table = <float*>malloc(max(size, 1) * sizeof(float))
        if self.table == NULL:
            return False
        for k in range(size):
            self.table[k] = <float>(kernel_from_dot(&self.params, 0.0, <double>k, 0.0) if rbf else
                                    kernel_from_dot(&self.params, <double>k, 0.0, 0.0))
        self.table_size = size
        return True

    cdef void _integer_setup(self) except *:
        """An RBF cache over rows whose every stored value is an integer (pixels, counts: skin_nonskin's 0..255)
        keeps a table of the float of exp(-gamma k) for the integer squared distances k its columns can need (those
        whose exponent is not below EXP_FLOAT_ZERO, at most INT_TABLE_MAX), read by _rbf_from_table: the squared
        distances of such rows are the integers whenever their sums are exact, and every entry is checked to be an
        integer below the table's size before it is read, so the floats are libm's bit for bit whatever the data
        (other entries: +0 below EXP_FLOAT_ZERO, else libm's exp). Nothing when the memory could not be had."""
        cdef int64_t size
        cdef double top
        cdef bint ok
        if self.params.kernel_type != KERNEL_RBF or not (self.params.gamma > 0.0) or self.v.n_rows == 0:
            return
        with nogil:
            ok = _integer_rows(&self.v, <float*>NULL) if self.f32 else _integer_rows(&self.v, <double*>NULL)
        if not ok:
            return
        top = -EXP_FLOAT_ZERO / self.params.gamma + 2.0
        size = INT_TABLE_MAX if top > INT_TABLE_MAX else <int64_t>top
        self._fill_table(size)

    cdef void _binary_free(self) noexcept:
        free(self.bits)
        free(self.ones)
        free(self.table)
        self._drop_pbits()
        self.bits = NULL
        self.ones = NULL
        self.table = NULL
        self.table_size = 0
        self.n_words = 0

    def __dealloc__(self):
        free(self.slab)
        free(self.dense)
        free(self.panels)
        free(self.bits)
        free(self.ones)
        free(self.pbits)
        free(self.pones)
        free(self.table)
        free(self.rows)
        free(self.first)
        free(self.slot)
        free(self.length)
        free(self.prev)
        free(self.next)
        free(self.free_slots)

    cdef const float* get_column(self, int64_t j, int64_t length) noexcept nogil:
        """Column j (a position, 0 <= j < l) with positions [0, length) filled (0 < length <= l; the caller
        checks). The pointer stays valid until a later get_column evicts the column or swap drops it: with the
        minimum of two columns, the column returned by the previous call survives this one."""
        cdef int64_t s, old, start
        cdef int nt
        cdef float* col
        s = self.slot[j]
        if s >= 0:
            _lru_delete(self.prev, self.next, j)
            start = self.length[j]
        else:
            start = 0
            s = self._free_slot()
            self.slot[j] = s
        col = self.slab + s * self.l
        if start >= length:
            self.hits += 1
        else:
            self.misses += 1
            # threads only for a column worth them (a parallel region costs a few microseconds)
            nt = self.n_threads if (length - start) * self.row_cost >= PARALLEL_MIN_WORK else 1
            if self.panels != NULL and self.panels_dirty:
                self._build_panels()
            if self.pbits != NULL:
                if self.pbits_dirty:
                    self._build_pbits()
                _binary_column(self.pbits, self.n_words, self.pones, NULL, j, start, length, self.table,
                               self.params.kernel_type == KERNEL_RBF, col, nt)
            elif self.bits != NULL:
                _binary_column(self.bits, self.n_words, self.ones, self.rows, self.rows[j], start, length, self.table,
                               self.params.kernel_type == KERNEL_RBF, col, nt)
            elif self.f32:
                _column(&self.params, &self.v, self.rows, self.sq, self.rows[j], start, length, col, self.dense,
                        self.width, nt, self.panels, self.panel_sq, self.table, self.table_size, <float*>NULL)
            else:
                _column(&self.params, &self.v, self.rows, self.sq, self.rows[j], start, length, col, self.dense,
                        self.width, nt, self.panels, self.panel_sq, self.table, self.table_size, <double*>NULL)
            self.n_filled += length - start
            self.length[j] = length
        _lru_insert(self.prev, self.next, self.l, j)
        return col

    cdef int64_t _free_slot(self) noexcept nogil:
        """An unused slot, or the least recently used column's, evicted."""
        cdef int64_t s, c
        if self.n_free > 0:
            self.n_free -= 1
            return self.free_slots[self.n_free]
        c = self.next[self.l]
        _lru_delete(self.prev, self.next, c)
        s = self.slot[c]
        self.n_filled -= self.length[c]
        self.slot[c] = -1
        self.length[c] = 0
        self.evictions += 1
        return s

    cdef float* _take_slot(self, int64_t j) noexcept nogil:
        """A slot for column j (not cached), the least recently used column evicted when none is free: j then
        holds it, at full length, as the most recently used (the caller fills it)."""
        cdef int64_t s = self._free_slot()
        self.slot[j] = s
        self.length[j] = self.l
        self.n_filled += self.l
        _lru_insert(self.prev, self.next, self.l, j)
        return self.slab + s * self.l

    cdef int get_block(self, const int64_t* js, int64_t m, float* out) noexcept nogil:
        """Columns js[0..m-1] (positions), full length, into out (column k at out + k l), each the float
        get_column gives, bit for bit (issue 49, --ws). The cached ones are copied; the others are computed
        together: their rows scattered into a dense block D (features x missing, zeros elsewhere), then for each
        row r of the problem, shared among the threads, the products x_r . D[:, k] for every missing k at once
        (each in x_r's index order, as dot_dense sums it; the inner loop runs over k, contiguous, and vectorises),
        then the kernel from the dot; over the panels of a dense RBF view, the tiles of _block_panel_columns instead
        (eight rows by eight or four columns, the same sums); then they enter the cache (least recently used
        evicted). A view without a dense scratch (wide sparse), a block over BLOCK_MAX, the precomputed kernel or
        binary rows (whose columns are a popcount and a look-up an entry): column by column. Returns 0, or -1 when
        memory for the block ran out (out then holds the columns computed one by one)."""
        cdef int64_t k, miss = 0, width, l = self.l, mp
        cdef bint tiles
        cdef int64_t* which
        cdef double* D
        cdef double* acc
        cdef float* col
        width = self.width
        if (self.dense == NULL or self.params.kernel_type == KERNEL_PRECOMPUTED or width * m > BLOCK_MAX
                or self.bits != NULL):
            for k in range(m):
                memcpy(out + k * l, self.get_column(js[k], l), l * sizeof(float))
            return 0
        # over the panels (an RBF view's, _tile_rbf): D's columns padded to a multiple of 8 (llsvm_tile_dots), and
        # a thread's acc a tile's 8 rows of doubles and of floats (12 mp doubles)
        tiles = self.panels != NULL and self.params.kernel_type == KERNEL_RBF
        mp = (m + 7) // 8 * 8 if tiles else m
        which = <int64_t*>malloc((m if m > 0 else 1) * sizeof(int64_t))
        D = <double*>calloc(width * mp + mp if width * mp + mp > 0 else 1, sizeof(double))     # and sqc after it
        acc = <double*>malloc(self.n_threads * (12 * mp if tiles else m if m > 0 else 1) * sizeof(double))
        if which == NULL or D == NULL or acc == NULL:
            free(which); free(D); free(acc)
            for k in range(m):
                memcpy(out + k * l, self.get_column(js[k], l), l * sizeof(float))
            return -1
        for k in range(m):
            if self.slot[js[k]] >= 0 and self.length[js[k]] == l:
                _lru_delete(self.prev, self.next, js[k])
                _lru_insert(self.prev, self.next, l, js[k])
                self.hits += 1
                memcpy(out + k * l, self.slab + self.slot[js[k]] * l, l * sizeof(float))
            else:
                which[miss] = k
                miss += 1
        if miss > 0 and tiles:
            if self.panels_dirty:
                self._build_panels()
            mp = (miss + 7) // 8 * 8        # the missing columns only, padded (D and acc hold that many)
            if self.f32:
                _scatter_block(&self.v, self.rows, js, which, miss, D, mp, <float*>NULL)
            else:
                _scatter_block(&self.v, self.rows, js, which, miss, D, mp, <double*>NULL)
            for k in range(miss):
                D[width * mp + k] = self.sq[self.rows[js[which[k]]]]
            _block_panel_columns(&self.params, self.panels, self.panel_sq, width, which, miss, l, D, D + width * mp,
                                 mp, acc, out, self.n_threads, self.table, self.table_size)
        elif miss > 0:
            if self.f32:
                _block_columns(&self.params, &self.v, self.rows, self.sq, js, which, miss, l, D, acc, out,
                               self.n_threads, self.table, self.table_size, <float*>NULL)
            else:
                _block_columns(&self.params, &self.v, self.rows, self.sq, js, which, miss, l, D, acc, out,
                               self.n_threads, self.table, self.table_size, <double*>NULL)
        if miss > 0:
            for k in range(miss):
                self.misses += 1
                if self.slot[js[which[k]]] >= 0:          # a shorter column: dropped, then taken again
                    _lru_delete(self.prev, self.next, js[which[k]])
                    self.free_slots[self.n_free] = self.slot[js[which[k]]]
                    self.n_free += 1
                    self.n_filled -= self.length[js[which[k]]]
                    self.slot[js[which[k]]] = -1
                    self.length[js[which[k]]] = 0
                col = self._take_slot(js[which[k]])
                memcpy(col, out + which[k] * l, l * sizeof(float))
        free(which)
        free(D)
        free(acc)
        return 0

    cdef void swap(self, int64_t i, int64_t j) noexcept nogil:
        """Exchange positions i and j (0 <= i, j < l): their rows, their columns, and entries i and j of every
        cached column; a column holding entry min(i, j) but not max(i, j) is dropped."""
        cdef int64_t t, c, c_next, l = self.l
        cdef float* col
        cdef float f
        if i == j:
            return
        if self.panels != NULL and not self.panels_dirty:
            _swap_lanes(self.panels, self.panel_sq, self.width, i, j)
        if self.pbits != NULL and not self.pbits_dirty:
            _swap_bits(self.pbits, self.pones, self.n_words, i, j)
        if self.slot[i] >= 0:
            _lru_delete(self.prev, self.next, i)
        if self.slot[j] >= 0:
            _lru_delete(self.prev, self.next, j)
        t = self.rows[i]; self.rows[i] = self.rows[j]; self.rows[j] = t
        t = self.first[i]; self.first[i] = self.first[j]; self.first[j] = t
        t = self.slot[i]; self.slot[i] = self.slot[j]; self.slot[j] = t
        t = self.length[i]; self.length[i] = self.length[j]; self.length[j] = t
        if self.slot[i] >= 0:
            _lru_insert(self.prev, self.next, l, i)
        if self.slot[j] >= 0:
            _lru_insert(self.prev, self.next, l, j)
        if i > j:
            t = i; i = j; j = t
        c = self.next[l]
        while c != l:
            c_next = self.next[c]
            if self.length[c] > i:
                if self.length[c] > j:
                    col = self.slab + self.slot[c] * l
                    f = col[i]; col[i] = col[j]; col[j] = f
                else:
                    _lru_delete(self.prev, self.next, c)
                    self.free_slots[self.n_free] = self.slot[c]
                    self.n_free += 1
                    self.n_filled -= self.length[c]
                    self.slot[c] = -1
                    self.length[c] = 0
                    self.dropped += 1
            c = c_next

    cdef int retarget(self, const int64_t* rows, int64_t l) noexcept nogil:
        """Empty the cache and make it the cache of the l-row problem rows[0..l-1] (rows of the same view, checked by
        the caller), under the same budget: a class pair after another (cext/_smo.pyx's OneVsOne), without a new
        object. Its arrays grow when they are too small, and are reused otherwise. Returns 0, or -1 when memory
        ran out (the cache is then empty, l = 0, and can be retargeted again)."""
        cdef int64_t k, n_slots = _slots(l, self.cache_size)
        cdef int bad = 0
        self.l = 0
        self.n_slots = 0
        self.n_free = 0
        self.n_filled = 0
        if l > self.cap_l:
            bad |= _grow(<void**>&self.rows, l, sizeof(int64_t))
            bad |= _grow(<void**>&self.first, l, sizeof(int64_t))
            bad |= _grow(<void**>&self.slot, l, sizeof(int64_t))
            bad |= _grow(<void**>&self.length, l, sizeof(int64_t))
            bad |= _grow(<void**>&self.prev, l + 1, sizeof(int64_t))
            bad |= _grow(<void**>&self.next, l + 1, sizeof(int64_t))
            self.cap_l = l if not bad else -1
        if not bad and n_slots > self.cap_slots:
            bad |= _grow(<void**>&self.free_slots, n_slots, sizeof(int64_t))
            self.cap_slots = n_slots if not bad else 0
        if not bad and n_slots * l > self.cap_slab:
            bad |= _grow(<void**>&self.slab, n_slots * l, sizeof(float))
            self.cap_slab = n_slots * l if not bad else 0
        if bad:
            return -1
        for k in range(l):
            self.rows[k] = rows[k]
        _fresh(self, l, n_slots)
        self.panels_dirty = True
        self.pbits_dirty = True
        if l > self.pbit_cap:               # more positions than the binary copy holds: the bits by row
            self._drop_pbits()
        if l > self.panel_cap:              # more positions than the panels hold: without them
            free(self.panels)
            self.panels = NULL
            self.panel_sq = NULL
            self.panel_cap = 0
        return 0

    # -- Python's handle (tests, drivers) --
    def column(self, int64_t j, length=None):
        """Column j (a position) for positions [0, length) (default l), as a float32 copy."""
        cdef int64_t n = self.l if length is None else length
        if j < 0 or j >= self.l:
            raise ValueError(f"column {j} out of range for {self.l} rows")
        if n <= 0 or n > self.l:
            raise ValueError(f"length {n} out of range (1..{self.l})")
        cdef const float* col
        with nogil:
            col = self.get_column(j, n)
        out = np.empty(n, dtype=np.float32)
        cdef float[::1] o = out
        cdef int64_t k
        for k in range(n):
            o[k] = col[k]
        return out

    def block(self, js):
        """Columns js (positions), full length, as an (len(js), l) float32 array (get_block)."""
        cdef const int64_t[::1] j = np.ascontiguousarray(js, dtype=np.int64)
        cdef int64_t k, m = j.shape[0]
        for k in range(m):
            if j[k] < 0 or j[k] >= self.l:
                raise ValueError(f"column {j[k]} out of range for {self.l} rows")
        out = np.empty((m, self.l), dtype=np.float32)
        cdef float[:, ::1] o = out
        if m and self.l:
            with nogil:
                self.get_block(&j[0], m, &o[0, 0])
        return out

    def swap_index(self, int64_t i, int64_t j):
        """Exchange positions i and j (LIBSVM's swap_index)."""
        if i < 0 or i >= self.l or j < 0 or j >= self.l:
            raise ValueError(f"positions {i}, {j} out of range for {self.l} rows")
        self.swap(i, j)

    def reset_order(self):
        """Swap every row back to its position at construction (a solve's swap_index calls undone), so that the
        cache can serve another solve over the same rows; cached columns of full length survive."""
        cdef int64_t p, q, a, l = self.l
        cdef int64_t* where = <int64_t*>malloc(max(l, 1) * sizeof(int64_t))
        if where == NULL:
            raise MemoryError(f"kernel cache: {l} positions")
        with nogil:
            for p in range(l):
                where[self.first[p]] = p
            for p in range(l):
                q = where[p]                   # the position of the row that started at p
                if q != p:
                    a = self.first[p]
                    self.swap(p, q)
                    where[a] = q
                    where[p] = p
        free(where)

    def cached_length(self, int64_t j):
        """How many entries of column j are cached (0: not cached)."""
        if j < 0 or j >= self.l:
            raise ValueError(f"column {j} out of range for {self.l} rows")
        return self.length[j]

    @property
    def binary(self):
        """Whether the columns take the binary rows' way (popcounts and a table; _binary_setup)."""
        return self.bits != NULL

    @property
    def panels(self):
        """Whether the columns take their dot products from panels of the positions' rows (_panel_setup)."""
        return self.panels != NULL

    @property
    def table_size(self):
        """The integers the kernel's table holds (binary rows', or an integer-valued RBF view's: _integer_setup);
        0 without one."""
        return self.table_size

    @property
    def order(self):
        """X's row at each position (the current order), a copy."""
        return np.array([self.rows[k] for k in range(self.l)], dtype=np.int64)

    @property
    def stats(self):
        """hits, misses (a column computed or extended), evictions (LRU), dropped (by swap_index), columns
        (cached now), capacity (columns the budget holds), bytes_in_use (entries filled x 4), capacity_bytes."""
        cdef int64_t k, n_cols = 0
        for k in range(self.l):
            if self.slot[k] >= 0:
                n_cols += 1
        return {"hits": self.hits, "misses": self.misses, "evictions": self.evictions, "dropped": self.dropped,
                "columns": n_cols, "capacity": self.n_slots, "bytes_in_use": self.n_filled * <int64_t>sizeof(float),
                "capacity_bytes": self.n_slots * self.l * <int64_t>sizeof(float)}


cdef class DoubledCache(KernelCache):
    """DoubledCache(inner): the 2m variables of epsilon-SVR and nu-SVR over the m rows of the KernelCache `inner`,
    as LIBSVM's SVR_Q: position p starts as row p mod m (the variables alpha_p and alpha*_p of row p); the column of
    position j is inner's column of its row, computed once and at full length m for both of the row's variables,
    copied in the positions' order into one of two buffers used in turn (so the previous call's column survives
    this one); swap exchanges two positions' rows only, and inner is never swapped. Holding 2m-long columns of
    duplicated rows instead computed every kernel value twice and swapped every cached column at each shrink (2x
    svm-train's time on svmguide1 -s epsilon_svr). The values are inner's: the same floats, the same solve."""

    def __init__(self, KernelCache inner not None):
        cdef int64_t m = inner.l, p
        if self.index != NULL:
            raise RuntimeError("DoubledCache is initialized once")
        self.inner = inner
        self.l = 2 * m
        self.n_threads = inner.n_threads
        self.cache_size = inner.cache_size
        self.index = <int64_t*>malloc(max(2 * m, 1) * sizeof(int64_t))
        self.buf = <float*>malloc(max(4 * m, 1) * sizeof(float))
        if self.index == NULL or self.buf == NULL:
            raise MemoryError(f"kernel cache: the positions and two columns of {2 * m} variables")
        for p in range(2 * m):
            self.index[p] = p % m
        self.which = 0

    def __dealloc__(self):
        free(self.index)
        free(self.buf)

    cdef const float* get_column(self, int64_t j, int64_t length) noexcept nogil:
        cdef int64_t k
        cdef const float* data = self.inner.get_column(self.index[j], self.inner.l)
        cdef float* out = self.buf + self.which * self.l
        self.which = 1 - self.which
        for k in range(length):
            out[k] = data[self.index[k]]
        return out

    cdef void swap(self, int64_t i, int64_t j) noexcept nogil:
        cdef int64_t t = self.index[i]
        self.index[i] = self.index[j]
        self.index[j] = t

    cdef int retarget(self, const int64_t* rows, int64_t l) noexcept nogil:
        return -1           # one-vs-one retargets caches of pairs' rows, never of doubled rows

    def reset_order(self):
        """Every position back to its row at construction (p mod m)."""
        cdef int64_t p, m = self.inner.l
        for p in range(self.l):
            self.index[p] = p % m

    def cached_length(self, int64_t j):
        """How many entries of the column of position j's row inner holds."""
        if j < 0 or j >= self.l:
            raise ValueError(f"column {j} out of range for {self.l} rows")
        return self.inner.length[self.index[j]]

    @property
    def order(self):
        """inner's row (0 .. m-1) at each position, a copy."""
        return np.array([self.index[k] for k in range(self.l)], dtype=np.int64)

    @property
    def stats(self):
        """inner's statistics (its columns are the rows')."""
        return self.inner.stats
