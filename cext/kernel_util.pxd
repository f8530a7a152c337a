# Small inline helpers shared by the kernels (header-only: no .pyx of this stem).
from libc.stdint cimport int64_t

cdef extern from *:
    """
    #if defined(__GNUC__) || defined(__clang__)
    #define LLSVM_PREFETCH(p) __builtin_prefetch((const void*)(p))
    #else
    #define LLSVM_PREFETCH(p) ((void)0)
    #endif
    """
    void LLSVM_PREFETCH(const void* p) noexcept nogil


cdef inline void put_char(char* buf, int64_t* n, int64_t cap, char c) noexcept nogil:
    """Append c to buf (n: its length so far) unless it is full: a kernel's progress characters for its driver."""
    if n[0] < cap:
        buf[n[0]] = c
        n[0] += 1


cdef inline double clip_box(double a, double C) noexcept nogil:
    """a clipped to [0, C] (the box of the hinge-loss dual)."""
    if a < 0.0:
        return 0.0
    if a > C:
        return C
    return a
