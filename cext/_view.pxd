# The Python-visible row view (cext/_view.pyx): the declaration other kernels cimport, by the extension's full
# name (`from llsvm._ext._view cimport Rows`; setup.py says why).
from libc.stdint cimport int32_t, int64_t

from rowview cimport RowView


cdef class Rows:
    cdef RowView v                  # what the kernels read, through the helpers of rowview.pxd
    cdef readonly bint f32          # values are float32 (else float64): the kernels dispatch on it
    # the arrays v points into, held as buffers so that they stay alive (and cannot be resized) while v is used
    cdef const int64_t[::1] _indptr
    cdef const int32_t[::1] _indices
    cdef const float[::1] _values32
    cdef const double[::1] _values64
    cdef const double[::1] _labels
    cdef const double[::1] _weights
    cdef const int32_t[::1] _seg
    cdef const int64_t[::1] _seg_shift
