# The row view: the one way every kernel reads rows (docs/architecture.md, "Row view"). Header-only.
#
# A view is a CSR matrix (int64 row offsets, int32 0-based column indices, float32 or float64 values) plus an
# implicit bias: with bias >= 0 every row carries one more coordinate, index n_features, value bias, which is not
# stored. An in-memory dataset, a memory-mapped binary block, an active set or a tree node are all views; a subset
# is a view plus an index array held by the caller. The helpers are inline, nogil and never allocate.
#
# Segmented views (a memory-mapped binary file of several blocks, read in place): the rows' non-zeros lie in
# several pieces of one array (the mapped file, seen once as int32 and once as the value type). indptr still
# numbers the non-zeros contiguously (row i is non-zeros indptr[i] .. indptr[i+1]-1), and row i's segment
# s = seg[i] says where they are: indices at indices[seg_shift[2s] + k], values at values[seg_shift[2s+1] + k].
# seg == NULL is the plain contiguous view (both shifts 0). Kernels get a row's two base pointers with
# row_indices / row_values and index them with k as before.
#
# Kernels receive a view as a `Rows` (cext/_view.pyx: this struct plus the arrays and segment table it points
# into, kept alive by the object) and read its `v` through the helpers below.
from libc.stdint cimport int32_t, int64_t

from kernel_types cimport value_t, value2_t
from kernel_util cimport LLSVM_PREFETCH


cdef struct RowView:
    int64_t n_rows
    int64_t n_features      # columns in the data; the bias, if any, is coordinate n_features
    const int64_t* indptr   # n_rows + 1 offsets
    const int32_t* indices  # 0-based, strictly increasing within a row
    const void* values      # float or double, as the kernel's fused type says
    const double* y         # labels (may be NULL for kernels that do not need them)
    double bias             # < 0: no bias coordinate
    const int32_t* seg      # NULL: contiguous; else the segment of each row
    const int64_t* seg_shift  # 2 per segment: element shifts of its indices and of its values
    const double* weight    # NULL: every row weighs 1; else the weight of each row (docs/weights.md), read by row_cost


cdef inline RowView make_view(const int64_t[::1] indptr, const int32_t[::1] indices, const value_t[::1] values,
                              const double* y, int64_t n_features, double bias) noexcept nogil:
    """A view of CSR arrays (typed memoryviews at the boundary); y may be NULL."""
    cdef RowView v
    v.n_rows = indptr.shape[0] - 1
    v.n_features = n_features
    v.indptr = &indptr[0]
    v.indices = &indices[0] if indices.shape[0] > 0 else NULL
    v.values = <const void*>&values[0] if values.shape[0] > 0 else NULL
    v.y = y
    v.bias = bias
    v.seg = NULL
    v.seg_shift = NULL
    v.weight = NULL
    return v


cdef inline double row_cost(const RowView* v, int64_t i, double class_cost) noexcept nogil:
    """C_i of row i (docs/weights.md): its class's cost times the row's weight; with no weights (v.weight NULL) the
    class's cost itself, not multiplied by 1, so that an unweighted kernel computes what it computed before."""
    if v.weight == NULL:
        return class_cost
    return class_cost * v.weight[i]


cdef inline const int32_t* row_indices(const RowView* v, int64_t i) noexcept nogil:
    """Base of row i's indices: the row's entries are row_indices(v, i)[k], k in indptr[i] .. indptr[i+1]-1."""
    if v.seg == NULL:
        return v.indices
    return v.indices + v.seg_shift[2 * v.seg[i]]


cdef inline const value_t* row_values(const RowView* v, int64_t i, value_t* kind) noexcept nogil:
    """Base of row i's values, indexed like row_indices."""
    if v.seg == NULL:
        return <const value_t*>v.values
    return <const value_t*>v.values + v.seg_shift[2 * v.seg[i] + 1]


cdef enum:
    PREFETCH_ROW_MAX = 128      # non-zeros of a row prefetch_row asks for (the hardware streams the rest)


cdef inline void prefetch_offsets(const RowView* v, int64_t i) noexcept nogil:
    """Ask for row i's offsets (and its segment, in a segmented view): what row_indices / row_values read first."""
    LLSVM_PREFETCH(&v.indptr[i])
    if v.seg != NULL:
        LLSVM_PREFETCH(&v.seg[i])


cdef inline void prefetch_row(const RowView* v, int64_t i, value_t* kind) noexcept nogil:
    """Ask for row i's indices and values (its first PREFETCH_ROW_MAX non-zeros), every cache line, ahead of use:
    a solver visiting rows in random order otherwise waits on each line of each row in turn (the hardware's
    prefetcher only starts after a few lines of a row). Measured on the generated sparse set (75 non-zeros per
    row, -s 3 -B 1): the dual CD passes 2.3x faster (2.1 s against 4.9 s of CPU) than with none."""
    cdef int64_t k = v.indptr[i], end = v.indptr[i + 1]
    cdef const char* a
    cdef const char* a_end
    cdef const char* b
    cdef const char* b_end
    if end - k == v.n_features and end > k:
        # a dense row, if its last index says so (row_is_full): row_dot and row_axpy read that index only
        a = <const char*>(row_indices(v, i) + end - 1)
        a_end = a + 1
    else:
        a = NULL
    if end - k > PREFETCH_ROW_MAX:
        end = k + PREFETCH_ROW_MAX
    if a == NULL:
        a = <const char*>(<size_t>(row_indices(v, i) + k) & ~(<size_t>63))     # from the first line's start
        a_end = <const char*>(row_indices(v, i) + end)
    b = <const char*>(<size_t>(row_values(v, i, kind) + k) & ~(<size_t>63))
    b_end = <const char*>(row_values(v, i, kind) + end)
    while a < a_end:
        LLSVM_PREFETCH(a)
        a += 64
    while b < b_end:
        LLSVM_PREFETCH(b)
        b += 64


cdef inline bint row_is_full(const RowView* v, const int32_t* idx, int64_t k, int64_t end) noexcept nogil:
    """Whether the row k..end-1 holds every feature: n_features strictly increasing indices, the last
    n_features - 1, are exactly 0 .. n_features - 1 (a dense row; its index of entry k + t is t)."""
    return end - k == v.n_features and end > k and idx[end - 1] == v.n_features - 1


cdef enum:
    PREFETCH_MIN_ROW = 8        # rows_worth_prefetching: average non-zeros a row, at least


cdef inline bint rows_worth_prefetching(const RowView* v) noexcept nogil:
    """Whether prefetch_row pays on this view: its rows hold PREFETCH_MIN_ROW non-zeros or more on average. Shorter
    rows fit a line or two, which the hardware's prefetcher brings while rows are read in (mostly) increasing
    order, and prefetch_row's own work then costs more than it saves (skin_nonskin, 3 features a row: the Newton
    products 1.2x faster without it: -s 2 65 -> 53 ms, -s 0 126 -> 104 ms)."""
    return v.n_rows > 0 and v.indptr[v.n_rows] - v.indptr[0] >= PREFETCH_MIN_ROW * v.n_rows


cdef inline double row_dot(const RowView* v, int64_t i, const double* w, value_t* kind) noexcept nogil:
    """w . x_i (with the bias coordinate). `kind` only selects the value type; pass <value_t*>NULL.

    A dense row (row_is_full) is read without its indices: entry t meets w[t], the same products summed in the
    same order (bit for bit), with contiguous loads the compiler vectorizes and a third fewer bytes from memory."""
    cdef const value_t* x = row_values(v, i, kind)
    cdef const int32_t* idx = row_indices(v, i)
    cdef int64_t k = v.indptr[i], end = v.indptr[i + 1], t, n
    # four partial sums: the additions of a long row do not wait on each other
    cdef double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0
    cdef const value_t* xk
    if row_is_full(v, idx, k, end):
        xk = x + k
        n = end - k
        t = 0
        while t + 4 <= n:
            s0 += w[t] * xk[t]
            s1 += w[t + 1] * xk[t + 1]
            s2 += w[t + 2] * xk[t + 2]
            s3 += w[t + 3] * xk[t + 3]
            t += 4
        while t < n:
            s0 += w[t] * xk[t]
            t += 1
        k = end
    while k + 4 <= end:
        s0 += w[idx[k]] * x[k]
        s1 += w[idx[k + 1]] * x[k + 1]
        s2 += w[idx[k + 2]] * x[k + 2]
        s3 += w[idx[k + 3]] * x[k + 3]
        k += 4
    while k < end:
        s0 += w[idx[k]] * x[k]
        k += 1
    s0 = (s0 + s1) + (s2 + s3)
    if v.bias >= 0:
        s0 += w[v.n_features] * v.bias
    return s0


cdef inline double row_dot_inorder(const RowView* v, int64_t i, const double* w, value_t* kind) noexcept nogil:
    """w . x_i (with the bias coordinate) as ONE running sum, entry after entry and the bias last: the order of
    LIBLINEAR's sparse dot (its rows keep the bias as their last feature), so that the Newton solvers (-s 0, 2, 11)
    round as it does. row_dot's four partial sums are faster on long rows but round differently."""
    cdef const value_t* x = row_values(v, i, kind)
    cdef const int32_t* idx = row_indices(v, i)
    cdef int64_t k
    cdef double s = 0.0
    for k in range(v.indptr[i], v.indptr[i + 1]):
        s += w[idx[k]] * x[k]
    if v.bias >= 0:
        s += w[v.n_features] * v.bias
    return s


cdef inline void row_dot_inorder2(const RowView* v, int64_t i, int64_t j, const double* w, double* out_i,
                                  double* out_j, value_t* kind) noexcept nogil:
    """w . x_i and w . x_j, each summed exactly as row_dot_inorder sums it (bit for bit), the two running sums
    interleaved entry by entry: each is a chain of dependent additions, so one row waits on the latency of every
    addition, while two independent chains fill each other's gaps (the Newton solvers' X v and Hessian products)."""
    cdef const value_t* xi = row_values(v, i, kind)
    cdef const int32_t* ii = row_indices(v, i)
    cdef const value_t* xj = row_values(v, j, kind)
    cdef const int32_t* ij = row_indices(v, j)
    cdef int64_t ki = v.indptr[i], ei = v.indptr[i + 1], kj = v.indptr[j], ej = v.indptr[j + 1], t, n
    cdef double si = 0.0, sj = 0.0
    n = ei - ki if ei - ki < ej - kj else ej - kj
    for t in range(n):
        si += w[ii[ki + t]] * xi[ki + t]
        sj += w[ij[kj + t]] * xj[kj + t]
    for t in range(ki + n, ei):
        si += w[ii[t]] * xi[t]
    for t in range(kj + n, ej):
        sj += w[ij[t]] * xj[t]
    if v.bias >= 0:
        si += w[v.n_features] * v.bias
        sj += w[v.n_features] * v.bias
    out_i[0] = si
    out_j[0] = sj


cdef inline void row_axpy(const RowView* v, int64_t i, double a, double* w, value_t* kind) noexcept nogil:
    """w += a * x_i (with the bias coordinate); a dense row (row_is_full) without reading its indices."""
    cdef const value_t* x = row_values(v, i, kind)
    cdef const int32_t* idx = row_indices(v, i)
    cdef int64_t k, t, k0 = v.indptr[i], end = v.indptr[i + 1]
    cdef const value_t* xk
    if row_is_full(v, idx, k0, end):
        xk = x + k0
        for t in range(end - k0):
            w[t] += a * xk[t]
    else:
        for k in range(k0, end):
            w[idx[k]] += a * x[k]
    if v.bias >= 0:
        w[v.n_features] += a * v.bias


cdef inline double row_sq_norm(const RowView* v, int64_t i, value_t* kind) noexcept nogil:
    """||x_i||^2 (with the bias coordinate)."""
    cdef const value_t* x = row_values(v, i, kind)
    cdef int64_t k
    cdef double s = 0.0
    for k in range(v.indptr[i], v.indptr[i + 1]):
        s += <double>x[k] * x[k]
    if v.bias >= 0:
        s += v.bias * v.bias
    return s


cdef inline double rows_dot(const RowView* a, int64_t i, const RowView* b, int64_t j, value_t* kind_a,
                            value2_t* kind_b) noexcept nogil:
    """x_i . z_j for row i of view a and row j of view b (the same view or two, of either value type), by merging
    the two sorted index lists. WITHOUT the bias coordinate: row_row_dot adds it; the kernels of _kernel.pyx
    must not (a kernel SVM has no implicit bias feature)."""
    cdef const value_t* xa = row_values(a, i, kind_a)
    cdef const value2_t* xb = row_values(b, j, kind_b)
    cdef const int32_t* ia = row_indices(a, i)
    cdef const int32_t* ib = row_indices(b, j)
    cdef int64_t p = a.indptr[i], p_end = a.indptr[i + 1]
    cdef int64_t q = b.indptr[j], q_end = b.indptr[j + 1]
    cdef double s = 0.0
    while p < p_end and q < q_end:
        if ia[p] == ib[q]:
            s += <double>xa[p] * <double>xb[q]
            p += 1
            q += 1
        elif ia[p] < ib[q]:
            p += 1
        else:
            q += 1
    return s


cdef inline double row_row_dot(const RowView* v, int64_t i, int64_t j, value_t* kind) noexcept nogil:
    """x_i . x_j by merging the two sorted index lists (with the bias coordinate)."""
    cdef double s = rows_dot(v, i, v, j, kind, kind)
    if v.bias >= 0:
        s += v.bias * v.bias
    return s


cdef inline int64_t subset_row(const int64_t* rows, int64_t i) noexcept nogil:
    """Row i of a subproblem: rows[i], or i itself when rows is NULL (every row in order)."""
    return rows[i] if rows != NULL else i


cdef inline const int64_t* subset_ptr(const int64_t[::1] rows) noexcept nogil:
    """A subproblem's row numbers as subset_row takes them: NULL for all rows in order (an empty `rows`)."""
    return &rows[0] if rows.shape[0] > 0 else NULL


cdef enum:
    # visits ahead (in a visiting order) that prefetch_visits asks for: a variable's own entries (alpha, y, QD and,
    # for a subproblem, its row number) PREFETCH_AHEAD visits ahead, then the row's offsets, then the row itself
    PREFETCH_AHEAD = 4
    OFFSETS_AHEAD = 3
    ROW_AHEAD = 2


cdef inline void prefetch_visits(const RowView* v, const int64_t* r, const int32_t* index, int64_t s, int64_t n,
                                 const signed char* y, const double* alpha, const double* QD,
                                 value_t* kind) noexcept nogil:
    """At position s of a dual coordinate descent's visiting order index[0:n] (variables in random order; variable
    i is row subset_row(r, i)), ask for what the next visits read: each of alpha_i, y_i, QD_i, the row's offsets
    and its non-zeros is a cache miss otherwise, paid one after the other (a row's address needs its offset
    first), so the pass waits on memory rather than computing."""
    cdef int64_t i
    if s + PREFETCH_AHEAD < n:
        i = index[s + PREFETCH_AHEAD]
        LLSVM_PREFETCH(&alpha[i])
        LLSVM_PREFETCH(&QD[i])
        LLSVM_PREFETCH(&y[i])
        if r != NULL:
            LLSVM_PREFETCH(&r[i])
        else:
            prefetch_offsets(v, i)
    if r != NULL and s + OFFSETS_AHEAD < n:
        prefetch_offsets(v, r[index[s + OFFSETS_AHEAD]])
    if s + ROW_AHEAD < n:
        prefetch_row(v, subset_row(r, index[s + ROW_AHEAD]), kind)
