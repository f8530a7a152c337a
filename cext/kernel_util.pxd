# Small inline helpers shared by the kernels (header-only: no .pyx of this stem).
from libc.stdint cimport int64_t

cdef extern from *:
    """
    /* A prefetch the compiler keeps. GCC's pure-const analysis takes a helper whose only statements are
       __builtin_prefetch calls for one without side effects and deletes the calls to it (GCC 12 -O1 and up: the
       dual CD kernel's row prefetches were never in the binary); a volatile asm is never deleted. */
    #if (defined(__GNUC__) || defined(__clang__)) && (defined(__x86_64__) || defined(__i386__))
    #define LLSVM_PREFETCH(p) __asm__ __volatile__("prefetcht0 %0" : : "m"(*(const char*)(p)))
    #elif (defined(__GNUC__) || defined(__clang__)) && defined(__aarch64__)
    #define LLSVM_PREFETCH(p) __asm__ __volatile__("prfm pldl1keep, %0" : : "Q"(*(const char*)(p)))
    #elif defined(__GNUC__) || defined(__clang__)
    #define LLSVM_PREFETCH(p) __builtin_prefetch((const void*)(p))
    #else
    #define LLSVM_PREFETCH(p) ((void)0)
    #endif
    /* A position one thread publishes and another follows (the dual CD's scout): relaxed atomics, no ordering. */
    #define LLSVM_LOAD_RELAXED(p) __atomic_load_n((p), __ATOMIC_RELAXED)
    #define LLSVM_STORE_RELAXED(p, v) __atomic_store_n((p), (v), __ATOMIC_RELAXED)
    #if defined(__x86_64__) || defined(__i386__)
    #define LLSVM_PAUSE() __asm__ __volatile__("pause")
    #else
    #define LLSVM_PAUSE() ((void)0)
    #endif
    /* a one-byte load the compiler keeps (its value goes to an asm that claims to use it): brings p's cache line */
    #define LLSVM_TOUCH(p) do { char _t = *(const volatile char*)(p); __asm__ __volatile__("" : : "r"(_t)); } while (0)
    """
    void LLSVM_PREFETCH(const void* p) noexcept nogil
    int64_t LLSVM_LOAD_RELAXED(const int64_t* p) noexcept nogil
    void LLSVM_STORE_RELAXED(int64_t* p, int64_t v) noexcept nogil
    void LLSVM_PAUSE() noexcept nogil
    void LLSVM_TOUCH(const void* p) noexcept nogil


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
