# Row statistics over the row view (DESIGN.md section 3).
#
# Problem: per-row squared norms ||x_i||^2 (Q_ii of the dual without the label and bias terms) and their maximum,
# which the binary format records (the LLSVM solver's data radius R^2). One pass over the non-zeros, nogil.
from libc.stdint cimport int32_t, int64_t

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
