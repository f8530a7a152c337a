# The project's one seeded random number generator (header-only): xoshiro256** (Blackman & Vigna 2018),
# seeded through splitmix64. Bounded draws use Lemire's multiply-and-reject method, so they carry no modulo bias.
# Kernels receive an Rng by pointer from their driver; nothing here touches global state.
from libc.math cimport cos, log, sin, sqrt
from libc.stdint cimport int32_t, int64_t, uint32_t, uint64_t

ctypedef fused index_t:
    int32_t
    int64_t


cdef struct Rng:
    uint64_t s0
    uint64_t s1
    uint64_t s2
    uint64_t s3


cdef inline uint64_t _splitmix64(uint64_t* x) noexcept nogil:
    x[0] += <uint64_t>0x9E3779B97F4A7C15ULL
    cdef uint64_t z = x[0]
    z = (z ^ (z >> 30)) * <uint64_t>0xBF58476D1CE4E5B9ULL
    z = (z ^ (z >> 27)) * <uint64_t>0x94D049BB133111EBULL
    return z ^ (z >> 31)


cdef inline void rng_seed(Rng* r, uint64_t seed) noexcept nogil:
    cdef uint64_t x = seed
    r.s0 = _splitmix64(&x)
    r.s1 = _splitmix64(&x)
    r.s2 = _splitmix64(&x)
    r.s3 = _splitmix64(&x)


cdef inline uint64_t _rotl(uint64_t x, int k) noexcept nogil:
    return (x << k) | (x >> (64 - k))


cdef inline uint64_t rng_next(Rng* r) noexcept nogil:
    cdef uint64_t result = _rotl(r.s1 * 5, 7) * 9
    cdef uint64_t t = r.s1 << 17
    r.s2 ^= r.s0
    r.s3 ^= r.s1
    r.s1 ^= r.s2
    r.s0 ^= r.s3
    r.s2 ^= t
    r.s3 = _rotl(r.s3, 45)
    return result


cdef inline uint32_t rng_bounded(Rng* r, uint32_t n) noexcept nogil:
    """Uniform integer in [0, n), n >= 1, without modulo bias (Lemire 2019)."""
    cdef uint64_t m = <uint64_t>(<uint32_t>(rng_next(r) >> 32)) * n
    cdef uint32_t low = <uint32_t>m
    cdef uint32_t threshold
    if low < n:
        threshold = (<uint32_t>(-n)) % n
        while low < threshold:
            m = <uint64_t>(<uint32_t>(rng_next(r) >> 32)) * n
            low = <uint32_t>m
    return <uint32_t>(m >> 32)


cdef inline double rng_uniform(Rng* r) noexcept nogil:
    """Uniform double in [0, 1) with 53 random bits."""
    return (rng_next(r) >> 11) * (1.0 / 9007199254740992.0)


cdef inline void rng_shuffle(Rng* r, index_t* a, int64_t n) noexcept nogil:
    """Shuffle a[0:n] in place (Fisher-Yates: a[i] swaps with a[i + uniform(n - i)]), n < 2^32."""
    cdef int64_t i, j
    cdef index_t t
    for i in range(n):
        j = i + rng_bounded(r, <uint32_t>(n - i))
        t = a[i]
        a[i] = a[j]
        a[j] = t


cdef inline void rng_normal_fill(Rng* r, double* out, int64_t n) noexcept nogil:
    """n standard normal deviates (Box-Muller, both values of each pair): for each pair u1 = 1 - uniform (in
    (0, 1]), u2 = uniform, radius sqrt(-2 log u1), angle 2 pi u2, out = radius cos(angle), radius sin(angle); an odd
    n drops the last pair's sine. Every call starts a new pair, so a draw of d values takes ceil(d/2) pairs."""
    cdef int64_t k = 0
    cdef double u1, u2, rad, ang
    while k < n:
        u1 = 1.0 - rng_uniform(r)
        u2 = rng_uniform(r)
        rad = sqrt(-2.0 * log(u1))
        ang = 6.283185307179586 * u2
        out[k] = rad * cos(ang)
        if k + 1 < n:
            out[k + 1] = rad * sin(ang)
        k += 2
