# Python's handle on the project's one seeded RNG (rng.pxd: xoshiro256** seeded through splitmix64).
#
# Drivers create a state (4 x uint64 in a NumPy array) from --seed, draw the sub-seeds of their binary problems
# and folds from it in a fixed order, and hand states to kernels, which advance them in place without the GIL.
# Nothing here is a solver; the DCD, LLSVM and StreamSVM kernels only take states made here.
from libc.stdint cimport int32_t, int64_t, uint32_t, uint64_t

import numpy as np

from rng cimport Rng, rng_seed, rng_next, rng_shuffle, rng_normal_fill


def rng_state(uint64_t seed):
    """A fresh RNG state (4 x uint64) seeded from `seed`; kernels advance it in place."""
    state = np.empty(4, dtype=np.uint64)
    cdef uint64_t[::1] s = state
    rng_seed(<Rng*>&s[0], seed)
    return state


def rng_draw(uint64_t[::1] rng):
    """The next 64-bit draw of an RNG state (for deriving sub-seeds)."""
    return rng_next(<Rng*>&rng[0])


def permutation(int64_t n, uint64_t[::1] rng):
    """A random permutation of 0..n-1 (Fisher-Yates with unbiased bounded draws), as LIBLINEAR's CV does."""
    perm = np.arange(n, dtype=np.int64)
    cdef int64_t[::1] p = perm
    if n > 0:
        with nogil:
            rng_shuffle(<Rng*>&rng[0], &p[0], n)
    return perm


def normal_fill(uint64_t[::1] rng, int64_t n):
    """n standard normal deviates from an RNG state (advanced in place): the stream ProjectSVM's directions are
    drawn from (rng.pxd's rng_normal_fill), for the NumPy twin to replay."""
    out = np.empty(n, dtype=np.float64)
    cdef double[::1] o = out
    if n > 0:
        with nogil:
            rng_normal_fill(<Rng*>&rng[0], &o[0], n)
    return out


def permutations(const int64_t[::1] sizes, uint64_t[::1] rng):
    """A permutation of 0..n-1 for every n of sizes, drawn in turn (the draws of permutation(n) called for each),
    concatenated into one int64 array."""
    out = _ranges(sizes, -1)
    cdef int64_t[::1] p = out
    cdef int64_t k, at = 0
    with nogil:
        for k in range(sizes.shape[0]):
            if sizes[k] > 0:
                rng_shuffle(<Rng*>&rng[0], &p[at], sizes[k])
            at += sizes[k]
    return out


cdef object _ranges(const int64_t[::1] sizes, int64_t high):
    """0..n-1 for every n of sizes, concatenated (int64); a size below 0 (or, with high > 0, of high or more) is a
    ValueError."""
    cdef int64_t k, i, at = 0, total = 0
    for k in range(sizes.shape[0]):
        if sizes[k] < 0 or (high > 0 and sizes[k] >= high):
            raise ValueError("sizes must be >= 0" if high <= 0 else f"sizes must be in [0, {high})")
        total += sizes[k]
    out = np.empty(total, dtype=np.int64)
    cdef int64_t[::1] p = out
    with nogil:
        for k in range(sizes.shape[0]):
            for i in range(sizes[k]):
                p[at + i] = i
            at += sizes[k]
    return out


# -- glibc's rand(), for LIBSVM's folds ------------------------------------------------------------------------------
# Problem: svm-train draws its cross-validation folds (svm_cross_validation) and -b 1's folds with C's rand(),
# never seeded (srand is not called, so the stream starts from seed 1), in the shuffle
# `j = i + rand() % (n - i); swap(a[i], a[j])` for i = 0..n-1. To give svm-train's folds, llsvm-svm-train replays
# that stream (llsvm/solvers/common.py, LibsvmRand; --libsvm-rand).
# Method: glibc's rand() is its random() with the default TYPE_3 state, an additive lagged Fibonacci generator
# (glibc manual, "BSD Random Number Functions"; the generator of Knuth, TAOCP vol. 2, 3.2.2, lags 31 and 3): a
# table of 31 words seeded by the minimal-standard LCG x' = 16807 x mod (2^31 - 1) (Park and Miller, computed with
# Schrage's decomposition 2^31 - 1 = 16807 * 127773 + 2836), two indices 3 apart ("front" and "rear"); each draw
# adds the rear word into the front word (mod 2^32), returns that sum shifted right by one (31 bits), and moves both
# indices on by one around the table; 310 draws are discarded after seeding. The state is one uint32 array:
# words 0..30 the table, 31 the front index, 32 the rear index. tests/test_svm_train_cli.py checks the stream
# against the C library's own rand().
cdef enum:
    GLIBC_WORDS = 31
    GLIBC_SEP = 3


cdef inline uint32_t _glibc_next(uint32_t* s) noexcept nogil:
    cdef uint32_t f = s[GLIBC_WORDS], r = s[GLIBC_WORDS + 1]
    s[f] = s[f] + s[r]
    cdef uint32_t out = s[f] >> 1
    f += 1
    r += 1
    if f >= GLIBC_WORDS:
        f = 0
    if r >= GLIBC_WORDS:
        r = 0
    s[GLIBC_WORDS] = f
    s[GLIBC_WORDS + 1] = r
    return out


def glibc_rand_state(int32_t seed=1):
    """glibc's rand() state after srand(seed) (seed 1: the state of a program that never calls srand)."""
    state = np.empty(GLIBC_WORDS + 2, dtype=np.uint32)
    cdef uint32_t[::1] s = state
    cdef int64_t word = 1 if seed == 0 else seed, hi, lo
    cdef int i
    s[0] = <uint32_t>(<int32_t>word)
    for i in range(1, GLIBC_WORDS):
        hi = word // 127773
        lo = word % 127773
        word = 16807 * lo - 2836 * hi
        if word < 0:
            word += 2147483647
        s[i] = <uint32_t>word
    s[GLIBC_WORDS] = GLIBC_SEP
    s[GLIBC_WORDS + 1] = 0
    for i in range(10 * GLIBC_WORDS):
        _glibc_next(&s[0])
    return state


def glibc_rand(uint32_t[::1] state, int64_t n):
    """The next n values of rand() from `state` (advanced in place), as an int64 array."""
    out = np.empty(n, dtype=np.int64)
    cdef int64_t[::1] o = out
    cdef int64_t k
    with nogil:
        for k in range(n):
            o[k] = _glibc_next(&state[0])
    return out


def glibc_permutations(const int64_t[::1] sizes, uint32_t[::1] state):
    """LIBSVM's shuffle of 0..n-1 (j = i + rand() % (n - i), a[i] and a[j] swapped, i = 0..n-1) for every n of
    sizes, in turn, from `state` (advanced in place), concatenated into one int64 array. n < 2^31 (C's int)."""
    out = _ranges(sizes, 2147483648)
    cdef int64_t[::1] p = out
    cdef int64_t k, i, j, t, n, at = 0
    with nogil:
        for k in range(sizes.shape[0]):
            n = sizes[k]
            for i in range(n):
                j = i + <int64_t>(_glibc_next(&state[0]) % <uint32_t>(n - i))
                t = p[at + i]
                p[at + i] = p[at + j]
                p[at + j] = t
            at += n
    return out
