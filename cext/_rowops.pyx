# Row statistics and checks over CSR arrays (DESIGN.md section 3).
#
# Problems: per-row squared norms ||x_i||^2 (Q_ii of the dual without the label and bias terms) and their maximum,
# which the binary format records (the LLSVM solver's data radius R^2); and the structural check every reader and
# writer of the binary format applies (offsets monotone within bounds, indices in [0, n_features) and strictly
# increasing within each row), so a kernel can never index out of bounds. One pass over the non-zeros, nogil.
from libc.stdint cimport int32_t, int64_t, uint32_t, uint64_t

import numpy as np

from kernel_types cimport value_t
from rowview cimport RowView, make_view, row_sq_norm


def row_sq_norms(const int64_t[::1] indptr, const int32_t[::1] indices, const value_t[::1] values,
                 double bias=-1.0):
    """||x_i||^2 for every row (with the bias coordinate when bias >= 0), as float64."""
    cdef RowView v = make_view(indptr, indices, values, NULL, 0, bias)
    out = np.empty(v.n_rows, dtype=np.float64)
    cdef double[::1] o = out
    cdef int64_t i
    with nogil:
        for i in range(v.n_rows):
            o[i] = row_sq_norm(&v, i, <value_t*>NULL)
    return out


def max_sq_norm(const int64_t[::1] indptr, const int32_t[::1] indices, const value_t[::1] values):
    """max_i ||x_i||^2 (0.0 for no rows)."""
    cdef RowView v = make_view(indptr, indices, values, NULL, 0, -1.0)
    cdef int64_t i
    cdef double m = 0.0, s
    with nogil:
        for i in range(v.n_rows):
            s = row_sq_norm(&v, i, <value_t*>NULL)
            if s > m:
                m = s
    return m


# check_csr status codes
cdef enum:
    _CSR_OK = 0
    _CSR_OFFSETS = 1
    _CSR_RANGE = 2
    _CSR_ORDER = 3

CSR_OK, CSR_OFFSETS, CSR_RANGE, CSR_ORDER = _CSR_OK, _CSR_OFFSETS, _CSR_RANGE, _CSR_ORDER


def check_csr(const int64_t[::1] indptr, const int32_t[::1] indices, int64_t n_features):
    """(status, row): CSR_OK, or the first problem and the row it is in."""
    cdef int64_t n = indptr.shape[0] - 1, nnz = indices.shape[0], i, k, start, stop
    cdef int status = 0
    cdef int32_t prev
    if n < 0 or indptr[0] != 0 or indptr[n] != nnz:
        return _CSR_OFFSETS, 0
    with nogil:
        for i in range(n):
            start = indptr[i]
            stop = indptr[i + 1]
            if stop < start or stop > nnz:
                status = _CSR_OFFSETS
                break
            prev = -1
            for k in range(start, stop):
                if <uint64_t><uint32_t>indices[k] >= <uint64_t>n_features:   # negative or too large
                    status = _CSR_RANGE
                    break
                if indices[k] <= prev:
                    status = _CSR_ORDER
                    break
                prev = indices[k]
            if status != 0:
                break
    return status, (i if status else -1)


def take_rows(const int64_t[::1] indptr, const int32_t[::1] indices, const value_t[::1] values,
              const int64_t[::1] rows):
    """(indptr, indices, values) of the given rows, in the given order (a compacted copy; rows in range)."""
    cdef int64_t n = rows.shape[0], i, r, k, start, length, total = 0
    new_indptr = np.empty(n + 1, dtype=np.int64)
    cdef int64_t[::1] ip = new_indptr
    with nogil:
        ip[0] = 0
        for i in range(n):
            r = rows[i]
            total += indptr[r + 1] - indptr[r]
            ip[i + 1] = total
    new_indices = np.empty(total, dtype=np.int32)
    new_values = np.empty(total, dtype=np.float32 if value_t is float else np.float64)
    cdef int32_t[::1] ix = new_indices
    cdef value_t[::1] vx = new_values
    with nogil:
        for i in range(n):
            r = rows[i]
            start = indptr[r]
            length = indptr[r + 1] - start
            for k in range(length):
                ix[ip[i] + k] = indices[start + k]
                vx[ip[i] + k] = values[start + k]
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
