# The row view: the one way every kernel reads rows (DESIGN.md section 3). Header-only.
#
# A view is a CSR matrix (int64 row offsets, int32 0-based column indices, float32 or float64 values) plus an
# implicit bias: with bias >= 0 every row carries one more coordinate, index n_features, value bias, which is not
# stored. An in-memory dataset, a memory-mapped binary block, an active set or a tree node are all views; a subset
# is a view plus an index array held by the caller. The helpers are inline, nogil and never allocate.
from libc.stdint cimport int32_t, int64_t

from kernel_types cimport value_t


cdef struct RowView:
    int64_t n_rows
    int64_t n_features      # columns in the data; the bias, if any, is coordinate n_features
    const int64_t* indptr   # n_rows + 1 offsets
    const int32_t* indices  # 0-based, strictly increasing within a row
    const void* values      # float or double, as the kernel's fused type says
    const double* y         # labels (may be NULL for kernels that do not need them)
    double bias             # < 0: no bias coordinate


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
    return v


cdef inline double row_dot(const RowView* v, int64_t i, const double* w, value_t* kind) noexcept nogil:
    """w . x_i (with the bias coordinate). `kind` only selects the value type; pass <value_t*>NULL."""
    cdef const value_t* x = <const value_t*>v.values
    cdef const int32_t* idx = v.indices
    cdef int64_t k = v.indptr[i], end = v.indptr[i + 1]
    # four partial sums: the additions of a long row do not wait on each other
    cdef double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0
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


cdef inline void row_axpy(const RowView* v, int64_t i, double a, double* w, value_t* kind) noexcept nogil:
    """w += a * x_i (with the bias coordinate)."""
    cdef const value_t* x = <const value_t*>v.values
    cdef int64_t k
    for k in range(v.indptr[i], v.indptr[i + 1]):
        w[v.indices[k]] += a * x[k]
    if v.bias >= 0:
        w[v.n_features] += a * v.bias


cdef inline double row_sq_norm(const RowView* v, int64_t i, value_t* kind) noexcept nogil:
    """||x_i||^2 (with the bias coordinate)."""
    cdef const value_t* x = <const value_t*>v.values
    cdef int64_t k
    cdef double s = 0.0
    for k in range(v.indptr[i], v.indptr[i + 1]):
        s += <double>x[k] * x[k]
    if v.bias >= 0:
        s += v.bias * v.bias
    return s


cdef inline double row_row_dot(const RowView* v, int64_t i, int64_t j, value_t* kind) noexcept nogil:
    """x_i . x_j by merging the two sorted index lists (with the bias coordinate)."""
    cdef const value_t* x = <const value_t*>v.values
    cdef int64_t a = v.indptr[i], a_end = v.indptr[i + 1]
    cdef int64_t b = v.indptr[j], b_end = v.indptr[j + 1]
    cdef double s = 0.0
    while a < a_end and b < b_end:
        if v.indices[a] == v.indices[b]:
            s += <double>x[a] * x[b]
            a += 1
            b += 1
        elif v.indices[a] < v.indices[b]:
            a += 1
        else:
            b += 1
    if v.bias >= 0:
        s += v.bias * v.bias
    return s
