# Row statistics, checks and copies over CSR rows (docs/architecture.md, "The seams").
#
# Problems: per-row squared norms ||x_i||^2 (Q_ii of the dual without the label term) and their maximum, which the
# binary format records (the LLSVM solver's data radius R^2); copies of chosen rows (take_rows); and the
# structural check every reader and writer of the binary format applies (offsets monotone within bounds, indices
# in [0, n_features) and strictly increasing within each row), so a kernel can never index out of bounds. One
# pass over the non-zeros, nogil; no stopping rule.
# The row kernels (row_sq_norms, max_sq_norm, take_rows) read a row view X (a `Rows`, cext/_view.pyx; segmented
# views of memory-mapped files included) and dispatch on X.f32. check_csr and compact_rows stay on raw arrays:
# check_csr validates the arrays a view may only be built on once they pass (it scans the contiguous index array
# of a block, not rows through a view), and compact_rows edits a CSR's own writable arrays in place, which a
# read-only view does not give.
from libc.stdint cimport int32_t, int64_t, uint32_t, uint64_t

import numpy as np

from kernel_types cimport value_t
from rowview cimport RowView, row_sq_norm, row_indices, row_values
from llsvm._ext._view cimport Rows


cdef void _sq_norms(const RowView* v, double* out, value_t* kind) noexcept nogil:
    cdef int64_t i
    for i in range(v.n_rows):
        out[i] = row_sq_norm(v, i, kind)


def row_sq_norms(Rows X not None):
    """||x_i||^2 for every row (with X's bias coordinate when it has one), as float64."""
    out = np.empty(X.v.n_rows, dtype=np.float64)
    cdef double[::1] o = out
    if X.v.n_rows == 0:
        return out
    with nogil:
        if X.f32:
            _sq_norms(&X.v, &o[0], <float*>NULL)
        else:
            _sq_norms(&X.v, &o[0], <double*>NULL)
    return out


cdef double _max_sq_norm(const RowView* v, value_t* kind) noexcept nogil:
    cdef int64_t i
    cdef double m = 0.0, s
    for i in range(v.n_rows):
        s = row_sq_norm(v, i, kind)
        if s > m:
            m = s
    return m


def max_sq_norm(Rows X not None):
    """max_i ||x_i||^2 (with X's bias coordinate when it has one; 0.0 for no rows)."""
    cdef double m
    with nogil:
        if X.f32:
            m = _max_sq_norm(&X.v, <float*>NULL)
        else:
            m = _max_sq_norm(&X.v, <double*>NULL)
    return m


# check_csr status codes
cdef enum:
    _CSR_OK = 0
    _CSR_OFFSETS = 1
    _CSR_RANGE = 2
    _CSR_ORDER = 3

CSR_OK, CSR_OFFSETS, CSR_RANGE, CSR_ORDER = _CSR_OK, _CSR_OFFSETS, _CSR_RANGE, _CSR_ORDER


cdef inline int _check_row(const int32_t* ix, int64_t start, int64_t stop, int64_t n_features) noexcept nogil:
    """The first problem of one row, scanning its entries in order (the slow path of check_csr)."""
    cdef int64_t k
    cdef int32_t prev = -1
    for k in range(start, stop):
        if <uint64_t><uint32_t>ix[k] >= <uint64_t>n_features:   # negative or too large
            return _CSR_RANGE
        if ix[k] <= prev:
            return _CSR_ORDER
        prev = ix[k]
    return _CSR_OK


cdef uint32_t _descents(const int32_t* ix, int64_t k0, int64_t k1) noexcept nogil:
    """How many k in k0..k1-1 have ix[k] <= ix[k-1] (k0 >= 1, k1 - k0 < 2^32; a loop the compiler vectorizes)."""
    cdef uint32_t c = 0
    cdef int64_t k
    for k in range(k0, k1):
        c += ix[k] <= ix[k - 1]
    return c


def check_csr(const int64_t[::1] indptr, const int32_t[::1] indices, int64_t n_features):
    """(status, row): CSR_OK, or the first problem and the row it is in.

    Fast path, for valid data, over groups of rows spanning about 64K non-zeros (so the group stays in L2):
    offsets checked row by row; indices strictly increasing within every row exactly when the descents
    (ix[k] <= ix[k-1]) over the group's span all sit at the starts of its non-empty rows, counted by one
    vectorized loop; strictly increasing rows lie in [0, n_features) when their first and last index do.
    A group that fails (or a row with bad offsets) has its rows scanned again in order, to name the first problem.
    """
    cdef int64_t n = indptr.shape[0] - 1, nnz = indices.shape[0], i = 0, j, r, start, stop, k0, boundary
    cdef int status = 0
    cdef bint bad
    cdef uint32_t descents
    cdef const int32_t* ix = &indices[0] if nnz > 0 else NULL
    if n < 0 or indptr[0] != 0 or indptr[n] != nnz:
        return _CSR_OFFSETS, 0
    cdef const int64_t* ip = &indptr[0]
    with nogil:
        while i < n:
            k0 = ip[i]
            j = i
            while j < n:
                start = ip[j]
                stop = ip[j + 1]
                if stop < start or stop > nnz:
                    status = _CSR_OFFSETS
                    break
                if stop - k0 > 65536 and j > i:
                    break
                j += 1
            if status != 0:
                # row j's offsets are bad: a problem in rows i..j-1 (whose offsets are fine) comes first
                for r in range(i, j):
                    if _check_row(ix, ip[r], ip[r + 1], n_features) != 0:
                        status = _check_row(ix, ip[r], ip[r + 1], n_features)
                        j = r
                        break
                i = j
                break
            # rows i..j-1: non-zeros k0..ip[j]-1, streamed into cache by the descents loop first
            descents = _descents(ix, max(k0, 1), ip[j]) if ip[j] > k0 else 0
            bad = False
            boundary = 0
            for r in range(i, j):
                start = ip[r]
                stop = ip[r + 1]
                if stop > start:
                    bad |= (<uint64_t><uint32_t>ix[start] >= <uint64_t>n_features) | \
                        (<uint64_t><uint32_t>ix[stop - 1] >= <uint64_t>n_features)
                    if start > 0:
                        boundary += ix[start] <= ix[start - 1]
            if bad or descents != boundary:
                for r in range(i, j):
                    status = _check_row(ix, ip[r], ip[r + 1], n_features)
                    if status != 0:
                        i = r
                        break
                break
            i = j
    return status, (i if status else -1)


cdef void _take_rows(const RowView* v, const int64_t* rows, int64_t n, const int64_t* ip, int32_t* ix,
                     value_t* vx) noexcept nogil:
    cdef int64_t i, r, k, start, length
    cdef const int32_t* src_ix
    cdef const value_t* src_x
    for i in range(n):
        r = rows[i]
        start = v.indptr[r]
        length = v.indptr[r + 1] - start
        src_ix = row_indices(v, r) + start
        src_x = row_values(v, r, vx) + start
        for k in range(length):
            ix[ip[i] + k] = src_ix[k]
            vx[ip[i] + k] = src_x[k]


def take_rows(Rows X not None, const int64_t[::1] rows):
    """(indptr, indices, values) of the given rows, in the given order (a compacted copy; rows in range)."""
    cdef int64_t n = rows.shape[0], i, r, total = 0
    cdef const int64_t* src_ip = X.v.indptr
    new_indptr = np.empty(n + 1, dtype=np.int64)
    cdef int64_t[::1] ip = new_indptr
    with nogil:
        ip[0] = 0
        for i in range(n):
            r = rows[i]
            total += src_ip[r + 1] - src_ip[r]
            ip[i + 1] = total
    new_indices = np.empty(total, dtype=np.int32)
    new_values = np.empty(total, dtype=X.dtype)
    cdef int32_t[::1] ix = new_indices
    cdef float[::1] v32
    cdef double[::1] v64
    if total == 0:
        return new_indptr, new_indices, new_values
    if X.f32:
        v32 = new_values
        with nogil:
            _take_rows(&X.v, &rows[0], n, &ip[0], &ix[0], &v32[0])
    else:
        v64 = new_values
        with nogil:
            _take_rows(&X.v, &rows[0], n, &ip[0], &ix[0], &v64[0])
    return new_indptr, new_indices, new_values


def compact_rows(int64_t[::1] indptr, int32_t[::1] indices, value_t[::1] values, const int64_t[::1] keep):
    """Keep the given rows (strictly increasing row numbers) in place, moving them to the front.

    Afterwards indptr[0:len(keep)+1], indices[0:nnz] and values[0:nnz] hold the kept rows; returns nnz.
    Rows only move towards the front, so no row is overwritten before it is moved.
    """
    cdef int64_t n = keep.shape[0], i, r, k, start, length, pos = 0
    with nogil:
        for i in range(n):
            r = keep[i]
            start = indptr[r]
            length = indptr[r + 1] - start
            if start != pos:
                for k in range(length):
                    indices[pos + k] = indices[start + k]
                    values[pos + k] = values[start + k]
            indptr[i] = pos
            pos += length
        indptr[n] = pos
    return pos
