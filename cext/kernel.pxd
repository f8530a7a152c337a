# Kernel functions over the row view (LIBSVM's five kernel types). Header-only: inline, nogil, never allocate.
#
# k(x, z) as LIBSVM 3.x defines it (svm.cpp, Kernel::k_function and the Kernel members of the training side), with
# LIBSVM's parameter names and kernel_type numbers:
#   0 linear      x.z
#   1 polynomial  (gamma x.z + coef0)^degree        integer power by squaring (powi below, as LIBSVM's powi)
#   2 RBF         exp(-gamma |x - z|^2),  |x - z|^2 = |x|^2 + |z|^2 - 2 x.z  from precomputed squared norms
#   3 sigmoid     tanh(gamma x.z + coef0)
#   4 precomputed the user's kernel values, read from the rows (README of LIBSVM, "Precomputed Kernels"): a row is
#                 0:serial then s:K(x, x_s) for the training instances s = 1..L. k(x, z) = x's value at index
#                 s = (int) of z's first value (z's serial; (int) truncates, as LIBSVM's
#                 x[i][(int)(x[j][0].value)].value); no dot product, no parameter. LIBSVM reads POSITION s of the
#                 row; llsvm reads the problem zero-based (file index k is view index k) and looks INDEX s up: at
#                 entry indptr[i] + s when the row holds every index up to s (a full row, as LIBSVM requires: the
#                 same entry), else by binary search, 0.0 when the row holds no index s (a zero the reader dropped).
#                 The checks that make it meaningful (first index 0, serial in range, every serial held) are the
#                 Python side's, before any kernel runs. What the other types read as the squared norm |x|^2 is
#                 here the diagonal k(x, x) (precomputed_sq_norm; cext/_kernel.pyx, kernel_sq_norms), so that
#                 kernel_from_dot(p, s, s, s) = s is QD, as for the linear kernel.
# x.z merges the two rows' sorted indices (rowview.pxd's rows_dot), accumulated in double whatever the values'
# type. The rows may come from two different views of either value type (support vectors and a test block), hence
# the two fused kinds.
#
# RBF clamp: LIBSVM's training kernel does not clamp |x|^2 + |z|^2 - 2 x.z. For two distinct but nearly equal
# rows rounding makes it slightly negative (cancellation, error ~ 1e-16 |x|^2), giving k slightly above 1. We clamp
# it at 0, so 0 < k <= 1 always, as for the exact kernel (LIBSVM's own prediction-side k_function sums
# (x_k - z_k)^2 and is never negative either). The difference from LIBSVM's training values is within rounding.
# (For a row with itself the squared norm and the dot product are the same sum in the same order: exactly 0, k = 1.)
#
# Two homes for the same kernels, one per side of LIBSVM: kernel_eval (the solvers; RBF from the squared norms, as
# LIBSVM's training Kernel) and kernel_function (prediction, cext/_kpredict.pyx; RBF from the term-by-term squared
# distance rows_sq_dist, as LIBSVM's Kernel::k_function, so that predicted decision values match LIBSVM's bit for
# bit). Both share powi, kernel_from_dot and rows_dot.
#
# The bias coordinate: a kernel SVM has no implicit bias feature, so rows_dot ignores the view's bias and the
# squared norms must be computed without it. The def wrappers of _kernel.pyx refuse a view with bias >= 0
# rather than silently drop it.
from libc.math cimport exp, tanh
from libc.stdint cimport int32_t, int64_t

from kernel_types cimport value_t, value2_t
from rowview cimport RowView, row_indices, row_values, rows_dot


cdef enum:
    KERNEL_LINEAR = 0
    KERNEL_POLY = 1
    KERNEL_RBF = 2
    KERNEL_SIGMOID = 3
    KERNEL_PRECOMPUTED = 4


cdef struct KernelParams:
    int kernel_type     # KERNEL_LINEAR .. KERNEL_PRECOMPUTED, LIBSVM's numbers
    int degree          # polynomial only (>= 0)
    double gamma        # polynomial, RBF, sigmoid (>= 0)
    double coef0        # polynomial, sigmoid


cdef inline double powi(double base, int times) noexcept nogil:
    """base^times for times >= 0 by repeated squaring (1.0 for times <= 0), as LIBSVM's powi."""
    cdef double ret = 1.0
    cdef int t = times
    while t > 0:
        if t & 1:
            ret *= base
        base *= base
        t >>= 1
    return ret


cdef inline int64_t precomputed_serial(const RowView* v, int64_t j, value_t* kind) noexcept nogil:
    """Row j's serial number: (int) of its first value, truncated as C's (int) (LIBSVM's (int)x[j][0].value; the
    Python side checks that its index is 0 and the serial in range). -1 for an empty row, and for a value (int)
    cannot hold (NaN, |value| >= 2^31: converting it would be undefined), which no row then holds."""
    cdef int64_t k = v.indptr[j]
    cdef double s
    if k == v.indptr[j + 1]:
        return -1
    s = <double>row_values(v, j, kind)[k]
    if not (s > -2147483649.0 and s < 2147483648.0):
        return -1
    return <int64_t>s


cdef inline double precomputed_at(const RowView* v, int64_t i, int64_t s, value_t* kind) noexcept nogil:
    """Row i's value at index s, 0.0 when it holds none (s < 0 included): entry indptr[i] + s when that entry's
    index is s (the row holds every index up to s: a full row), else a binary search over the row's increasing
    indices."""
    cdef const int32_t* idx = row_indices(v, i)
    cdef int64_t lo = v.indptr[i], end = v.indptr[i + 1], hi, mid
    if s < 0:
        return 0.0
    if s < end - lo and idx[lo + s] == s:
        return <double>row_values(v, i, kind)[lo + s]
    hi = end
    while lo < hi:
        mid = lo + (hi - lo) // 2
        if idx[mid] < s:
            lo = mid + 1
        else:
            hi = mid
    if lo < end and idx[lo] == s:
        return <double>row_values(v, i, kind)[lo]
    return 0.0


cdef inline double precomputed_kernel(const RowView* va, int64_t i, const RowView* vb, int64_t j, value_t* kind_a,
                                      value2_t* kind_b) noexcept nogil:
    """k(x_i, z_j) of the precomputed kernel: x_i's value at z_j's serial (LIBSVM's kernel_precomputed and
    k_function's PRECOMPUTED case: x is the row read, z the row whose serial names the column)."""
    return precomputed_at(va, i, precomputed_serial(vb, j, kind_b), kind_a)


cdef inline double precomputed_sq_norm(const RowView* v, int64_t i, value_t* kind) noexcept nogil:
    """The precomputed kernel's k(x_i, x_i), which stands for |x_i|^2 (QD = kernel_from_dot(p, s, s, s) = s)."""
    return precomputed_at(v, i, precomputed_serial(v, i, kind), kind)


cdef inline double rbf_d2(double dot, double sqa, double sqb) noexcept nogil:
    """|x - z|^2 = |x|^2 + |z|^2 - 2 x.z from x.z and the squared norms, clamped at 0 (see above)."""
    cdef double d2 = sqa + sqb - 2.0 * dot
    if d2 < 0.0:
        d2 = 0.0
    return d2


cdef inline double rbf_exponent(const KernelParams* p, double dot, double sqa, double sqb) noexcept nogil:
    """The RBF kernel's exponent -gamma |x - z|^2 from x.z and the squared norms (rbf_d2): the kernel is exp of it
    (kernel_from_dot, or exp_to_float for many at once)."""
    return -p.gamma * rbf_d2(dot, sqa, sqb)


cdef inline double kernel_from_dot(const KernelParams* p, double dot, double sqa, double sqb) noexcept nogil:
    """k(x, z) from x.z and the squared norms |x|^2, |z|^2 (only RBF reads them). For the precomputed kernel `dot`
    is the value looked up (precomputed_kernel), returned as it is, as the linear kernel's."""
    if p.kernel_type == KERNEL_RBF:
        return exp(rbf_exponent(p, dot, sqa, sqb))
    if p.kernel_type == KERNEL_POLY:
        return powi(p.gamma * dot + p.coef0, p.degree)
    if p.kernel_type == KERNEL_SIGMOID:
        return tanh(p.gamma * dot + p.coef0)
    return dot


cdef inline double kernel_eval(const KernelParams* p, const RowView* va, int64_t i, const RowView* vb, int64_t j,
                               double sqa, double sqb, value_t* kind_a, value2_t* kind_b) noexcept nogil:
    """k(x_i, z_j) for row i of view va and row j of view vb; sqa = |x_i|^2, sqb = |z_j|^2 without the bias
    coordinate (read by RBF only). The kinds only select the value types; pass <float*>NULL or <double*>NULL."""
    if p.kernel_type == KERNEL_PRECOMPUTED:
        return precomputed_kernel(va, i, vb, j, kind_a, kind_b)
    return kernel_from_dot(p, rows_dot(va, i, vb, j, kind_a, kind_b), sqa, sqb)


cdef inline double rows_sq_dist(const RowView* a, int64_t i, const RowView* b, int64_t j, value_t* kind_a,
                                value2_t* kind_b) noexcept nogil:
    """|x_i - z_j|^2 summed term by term in ascending index order, one accumulator: (x_k - z_k)^2 where both rows
    hold index k, else the square of the one that does (LIBSVM's Kernel::k_function, RBF case). Never negative;
    WITHOUT the bias coordinate."""
    cdef const value_t* xa = row_values(a, i, kind_a)
    cdef const value2_t* xb = row_values(b, j, kind_b)
    cdef const int32_t* ia = row_indices(a, i)
    cdef const int32_t* ib = row_indices(b, j)
    cdef int64_t p = a.indptr[i], p_end = a.indptr[i + 1]
    cdef int64_t q = b.indptr[j], q_end = b.indptr[j + 1]
    cdef double s = 0.0, d
    while p < p_end and q < q_end:
        if ia[p] == ib[q]:
            d = <double>xa[p] - <double>xb[q]
            s += d * d
            p += 1
            q += 1
        elif ia[p] > ib[q]:
            d = <double>xb[q]
            s += d * d
            q += 1
        else:
            d = <double>xa[p]
            s += d * d
            p += 1
    while p < p_end:
        d = <double>xa[p]
        s += d * d
        p += 1
    while q < q_end:
        d = <double>xb[q]
        s += d * d
        q += 1
    return s


cdef inline double kernel_function(const KernelParams* p, const RowView* va, int64_t i, const RowView* vb, int64_t j,
                                   value_t* kind_a, value2_t* kind_b) noexcept nogil:
    """k(x_i, z_j) exactly as LIBSVM's prediction side (Kernel::k_function) computes it: the RBF kernel from
    rows_sq_dist (no squared norms, no clamp needed), the others from rows_dot, the same operations in the same
    order, so a decision value sums the very same doubles as svm_predict_values. Prediction (cext/_kpredict.pyx)
    uses this; the solvers use kernel_eval (norms computed once per row). Precomputed: x_i's value at z_j's serial
    (z_j a support vector, which holds its serial alone)."""
    if p.kernel_type == KERNEL_PRECOMPUTED:
        return precomputed_kernel(va, i, vb, j, kind_a, kind_b)
    if p.kernel_type == KERNEL_RBF:
        return exp(-p.gamma * rows_sq_dist(va, i, vb, j, kind_a, kind_b))
    return kernel_from_dot(p, rows_dot(va, i, vb, j, kind_a, kind_b), 0.0, 0.0)


cdef inline double dot_dense(const RowView* v, int64_t r, const double* dense, value_t* kind) noexcept nogil:
    """x_r . z with z scattered into `dense` (n_features doubles), one product at a time in x_r's index order. Where
    z is 0 the product is an exact zero, so the sum is the merge's (rows_dot, LIBSVM's dot) bit for bit, at the
    cost of x_r's entries alone and without the merge's branches."""
    cdef const value_t* x = row_values(v, r, kind)
    cdef const int32_t* idx = row_indices(v, r)
    cdef int64_t k
    cdef double s = 0.0
    for k in range(v.indptr[r], v.indptr[r + 1]):
        s += <double>x[k] * dense[idx[k]]
    return s


cdef inline void dot_dense4(const RowView* v, const int64_t* r, const double* dense, value_t* kind,
                            double* out) noexcept nogil:
    """out[q] = dot_dense(v, r[q], dense, kind) for q < 4, bit for bit: the four sums side by side, each one product
    at a time in its own row's index order (over the entries all four rows have, then each row's rest), so that the
    four chains of additions overlap where one sum waits for its previous addition (a dense row of 256 values is
    256 dependent additions)."""
    cdef const value_t* x0 = row_values(v, r[0], kind)
    cdef const value_t* x1 = row_values(v, r[1], kind)
    cdef const value_t* x2 = row_values(v, r[2], kind)
    cdef const value_t* x3 = row_values(v, r[3], kind)
    cdef const int32_t* i0 = row_indices(v, r[0])
    cdef const int32_t* i1 = row_indices(v, r[1])
    cdef const int32_t* i2 = row_indices(v, r[2])
    cdef const int32_t* i3 = row_indices(v, r[3])
    cdef int64_t b0 = v.indptr[r[0]], b1 = v.indptr[r[1]], b2 = v.indptr[r[2]], b3 = v.indptr[r[3]]
    cdef int64_t e0 = v.indptr[r[0] + 1], e1 = v.indptr[r[1] + 1], e2 = v.indptr[r[2] + 1], e3 = v.indptr[r[3] + 1]
    cdef int64_t n = e0 - b0, k
    cdef double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0
    if e1 - b1 < n:
        n = e1 - b1
    if e2 - b2 < n:
        n = e2 - b2
    if e3 - b3 < n:
        n = e3 - b3
    for k in range(n):
        s0 += <double>x0[b0 + k] * dense[i0[b0 + k]]
        s1 += <double>x1[b1 + k] * dense[i1[b1 + k]]
        s2 += <double>x2[b2 + k] * dense[i2[b2 + k]]
        s3 += <double>x3[b3 + k] * dense[i3[b3 + k]]
    for k in range(b0 + n, e0):
        s0 += <double>x0[k] * dense[i0[k]]
    for k in range(b1 + n, e1):
        s1 += <double>x1[k] * dense[i1[k]]
    for k in range(b2 + n, e2):
        s2 += <double>x2[k] * dense[i2[k]]
    for k in range(b3 + n, e3):
        s3 += <double>x3[k] * dense[i3[k]]
    out[0] = s0
    out[1] = s1
    out[2] = s2
    out[3] = s3


cdef inline bint rows_full(const RowView* v, const int64_t* r, int n, int64_t width) noexcept nogil:
    """Whether rows r[0..n-1] each hold every index below width (width entries: their indices increase and stay
    below the view's width, so they are 0 .. width - 1)."""
    cdef int q
    for q in range(n):
        if v.indptr[r[q] + 1] - v.indptr[r[q]] != width:
            return False
    return True


cdef inline void dot_full8(const RowView* v, const int64_t* r, int64_t j, int64_t width, value_t* kind,
                           double* out) noexcept nogil:
    """out[q] = x_r[q] . x_j for q < 8, where the nine rows hold every index below width (rows_full: the caller
    checks), bit for bit dot_dense's with x_j scattered: each sum one product at a time in index order, the same
    products. No index is read and x_j's value is loaded once for the eight, whose chains of additions overlap
    (a dense row of 256 values: 256 dependent additions each)."""
    cdef const value_t* z = row_values(v, j, kind) + v.indptr[j]
    cdef const value_t* x0 = row_values(v, r[0], kind) + v.indptr[r[0]]
    cdef const value_t* x1 = row_values(v, r[1], kind) + v.indptr[r[1]]
    cdef const value_t* x2 = row_values(v, r[2], kind) + v.indptr[r[2]]
    cdef const value_t* x3 = row_values(v, r[3], kind) + v.indptr[r[3]]
    cdef const value_t* x4 = row_values(v, r[4], kind) + v.indptr[r[4]]
    cdef const value_t* x5 = row_values(v, r[5], kind) + v.indptr[r[5]]
    cdef const value_t* x6 = row_values(v, r[6], kind) + v.indptr[r[6]]
    cdef const value_t* x7 = row_values(v, r[7], kind) + v.indptr[r[7]]
    cdef double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0, s4 = 0.0, s5 = 0.0, s6 = 0.0, s7 = 0.0, zk
    cdef int64_t k
    for k in range(width):
        zk = <double>z[k]
        s0 += <double>x0[k] * zk
        s1 += <double>x1[k] * zk
        s2 += <double>x2[k] * zk
        s3 += <double>x3[k] * zk
        s4 += <double>x4[k] * zk
        s5 += <double>x5[k] * zk
        s6 += <double>x6[k] * zk
        s7 += <double>x7[k] * zk
    out[0] = s0
    out[1] = s1
    out[2] = s2
    out[3] = s3
    out[4] = s4
    out[5] = s5
    out[6] = s6
    out[7] = s7


cdef inline void scatter_row(const RowView* v, int64_t j, double* dense, bint clear, value_t* kind) noexcept nogil:
    """dense[idx] = x_j's values (clear: back to 0)."""
    cdef const value_t* x = row_values(v, j, kind)
    cdef const int32_t* idx = row_indices(v, j)
    cdef int64_t k
    for k in range(v.indptr[j], v.indptr[j + 1]):
        dense[idx[k]] = 0.0 if clear else <double>x[k]


# The dense scratch row (issue 45, H8): a column loop scatters x_j into `dense` once and takes each product with
# dot_dense, at the cost of x_r's entries alone. The scratch is as wide as the largest index of the rows, not as
# n_features (a CSR matrix of 10^9 columns holding a few non-zeros), and only when that width is at most
# max(SCRATCH_FREE, the view's non-zeros): it then costs no more than the rows' own index array (or 8 MB). Wider
# (an index of 10^9 among a few thousand non-zeros), there is no scratch (scratch_size 0, dense NULL) and every
# product merges the two rows (rows_dot, LIBSVM's own dot): the same sum, bit for bit, with no array as wide as
# the indices. A hot loop takes the two ways apart (cext/_kernel.pyx's columns, so that the dense loop is as it
# was); the others go through scatter_into and dot_with.
cdef enum:
    SCRATCH_FREE = 1 << 20      # doubles of a dense scratch always worth taking (8 MB)


cdef inline int64_t row_width(const RowView* v) noexcept nogil:
    """The largest index of v's rows + 1 (0 for no entry): a row's indices increase, so its last is its largest."""
    cdef int64_t r, w = 0
    cdef int64_t last
    for r in range(v.n_rows):
        if v.indptr[r + 1] > v.indptr[r]:
            last = row_indices(v, r)[v.indptr[r + 1] - 1]
            if last + 1 > w:
                w = last + 1
    return w


cdef inline int64_t scratch_size(const RowView* v) noexcept nogil:
    """The doubles of the dense scratch row of v's column loops: row_width(v), or 0 (no scratch: dot_with merges)
    when that is more than max(SCRATCH_FREE, v's non-zeros)."""
    cdef int64_t w = row_width(v)
    cdef int64_t nnz = v.indptr[v.n_rows] - v.indptr[0]
    return w if w <= (SCRATCH_FREE if SCRATCH_FREE > nnz else nnz) else 0


cdef inline void scatter_into(const RowView* v, int64_t j, double* dense, bint clear, value_t* kind) noexcept nogil:
    """scatter_row into a scratch of scratch_size(v) doubles; nothing without one (dense NULL)."""
    if dense != NULL:
        scatter_row(v, j, dense, clear, kind)


cdef inline double dot_with(const RowView* v, int64_t r, int64_t j, const double* dense,
                            value_t* kind) noexcept nogil:
    """x_r . x_j with x_j scattered into `dense` (scatter_into), or merged without a scratch (dense NULL)."""
    if dense != NULL:
        return dot_dense(v, r, dense, kind)
    return rows_dot(v, r, v, j, kind, kind)


# The RBF kernel's exp for the float columns of the kernel cache, many at once (issue 49): libm's exp is a call per
# value (a9a's RBF training spent a third of its time in it, perf), which no compiler vectorises. exp_to_float gives
# out[k] = <float>exp(t[k]) with libm's exp, BIT FOR BIT, the same floats the cache held before (so svm-train's
# models stay byte for byte):
# 1. A vectorisable exp (llsvm_exp_float_candidates, plain C below): n = round(t / ln 2) by the 1.5 * 2^52 shift,
#    r = t - n ln 2 in two parts (Cody and Waite; n * LN2_HI is exact), exp(r) by its Taylor polynomial of degree
#    13 in Horner form (|r| <= ln 2 / 2: the truncation is below 1e-17), times 2^n built in the exponent bits. Its
#    double y is within about 3 units in the last place of exp(t), and libm's within 0.52 (glibc's bound), so
#    |y - exp_libm(t)| < m = y 2^-48 (8 times that; measured: at most 1.0 unit from libm's over 10^8 exponents).
# 2. Rounding to float is monotone: when (float)(y - m) == (float)(y + m), every double in [y - m, y + m], libm's
#    among them, rounds to that float. Where they differ (t's exp within m of a float rounding boundary: a few
#    random exponents in 10^7), or t is above 709 or NaN, the entry is recomputed with libm's exp (a scalar loop
#    over the few flagged). Below -708 the float is +0 whatever libm gives (exp(t) < 2^-1021), taken as such.
# On x86-64 Linux with GCC the candidates are built three times (target_clones, chosen at load time by the CPU):
# AVX-512 where the CPU has it (2.8 against 3.75 ns a value with AVX2, issue 49), else AVX2, else SSE2; elsewhere
# the compiler's own vectorisation of the loop. No contraction into fused multiply-adds (fp-contract=off: AVX-512
# has them), so every clone computes the same doubles, and step 2 decides anyway: the same floats on every machine.
cdef extern from *:
    """
    #include <stdint.h>
    #include <string.h>
    #if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__) && defined(__GLIBC__)
    #define LLSVM_EXP_CLONES __attribute__((target_clones("avx512f", "avx2", "default"), optimize("fp-contract=off"), unused))
    #else
    #define LLSVM_EXP_CLONES __attribute__((unused))
    #endif
    /* out[k]: (float)exp(t[k]) where ok[k] != 0; ok[k] == 0 where the caller must recompute it with libm's exp.
       No branch in the loop (the clamps and checks are selects), so that it vectorises. */
    static LLSVM_EXP_CLONES void llsvm_exp_float_candidates(const double* restrict t, float* restrict out,
                                                            int32_t* restrict ok, int64_t n) {
        const double log2e = 1.4426950408889634, shift = 6755399441055744.0;          /* 1.5 * 2^52 */
        const double ln2_hi = 6.93147180369123816490e-01, ln2_lo = 1.90821492927058770002e-10;
        int64_t k;
        for (k = 0; k < n; k++) {
            double x = t[k], kd, r, p, s, y, m;
            uint64_t bits, sbits;
            uint32_t n32;
            int32_t a, b, under, fine;
            float lo, hi;
            kd = x * log2e + shift;            /* the mantissa's low bits hold n = round(x / ln 2) */
            memcpy(&bits, &kd, 8);
            kd -= shift;
            r = (x - kd * ln2_hi) - kd * ln2_lo;
            p = 1.0 / 6227020800.0;
            p = p * r + 1.0 / 479001600.0;
            p = p * r + 1.0 / 39916800.0;
            p = p * r + 1.0 / 3628800.0;
            p = p * r + 1.0 / 362880.0;
            p = p * r + 1.0 / 40320.0;
            p = p * r + 1.0 / 5040.0;
            p = p * r + 1.0 / 720.0;
            p = p * r + 1.0 / 120.0;
            p = p * r + 1.0 / 24.0;
            p = p * r + 1.0 / 6.0;
            p = p * r + 0.5;
            p = p * r + 1.0;
            p = p * r + 1.0;
            sbits = (bits + 1023u) << 52;      /* 2^n (n + 1023 in the exponent field; 2^51 shifts out) */
            memcpy(&s, &sbits, 8);
            y = p * s;
            m = y * 0x1p-48;
            lo = (float)(y - m);
            hi = (float)(y + m);
            memcpy(&a, &lo, 4);
            memcpy(&b, &hi, 4);
            n32 = (uint32_t)bits;           /* n, two's complement (unsigned: no overflow anywhere) */
            under = -(int32_t)(x < -708.0);    /* exp(x) < 2^-1021: the float is +0 */
            fine = (a & 0x7f800000) != 0x7f800000;
            a &= ~under;
            memcpy(&lo, &a, 4);
            out[k] = lo;
            ok[k] = under | ((a == b) & (n32 + 1021u <= 2042u) & (x <= 709.0) & fine);
        }
    }
    """
    void llsvm_exp_float_candidates(const double* t, float* out, int32_t* ok, int64_t n) noexcept nogil


cdef enum:
    EXP_CHUNK = 256         # exp_to_float's flags live on the stack, this many at a time


cdef inline int64_t exp_to_float(const double* t, float* out, int64_t n) noexcept nogil:
    """out[k] = <float>exp(t[k]) for k < n, libm's exp bit for bit (see above); returns how many were recomputed
    with libm's exp."""
    cdef int32_t ok[EXP_CHUNK]
    cdef int64_t s = 0, k, m, redone = 0
    while s < n:
        m = n - s if n - s < EXP_CHUNK else EXP_CHUNK
        llsvm_exp_float_candidates(t + s, out + s, ok, m)
        for k in range(m):
            if not ok[k]:
                out[s + k] = <float>exp(t[s + k])
                redone += 1
        s += m
    return redone
