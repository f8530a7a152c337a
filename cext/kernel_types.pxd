# Shared C types for the kernels (header-only: no .pyx of this stem).
from libc.stdint cimport int32_t, int64_t, uint32_t, uint64_t

ctypedef fused value_t:
    float
    double

# a second, independent float-or-double type: a function over rows of two views (a kernel value between a support
# vector set and a test block) is specialized for each pair of value types
ctypedef fused value2_t:
    float
    double
