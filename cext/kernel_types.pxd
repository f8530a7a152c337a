# Shared C types for the kernels (header-only: no .pyx of this stem).
from libc.stdint cimport int32_t, int64_t, uint32_t, uint64_t

ctypedef fused value_t:
    float
    double
