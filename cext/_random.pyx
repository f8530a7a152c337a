# Python's handle on the project's one seeded RNG (rng.pxd: xoshiro256** seeded through splitmix64).
#
# Drivers create a state (4 x uint64 in a NumPy array) from --seed, draw the sub-seeds of their binary problems
# and folds from it in a fixed order, and hand states to kernels, which advance them in place without the GIL.
# Nothing here is a solver; the DCD, LLSVM and StreamSVM kernels only take states made here.
from libc.stdint cimport int64_t, uint64_t

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
    cdef int64_t k, i, at = 0, total = 0
    for k in range(sizes.shape[0]):
        if sizes[k] < 0:
            raise ValueError("sizes must be >= 0")
        total += sizes[k]
    out = np.empty(total, dtype=np.int64)
    cdef int64_t[::1] p = out
    with nogil:
        for k in range(sizes.shape[0]):
            for i in range(sizes[k]):
                p[at + i] = i
            if sizes[k] > 0:
                rng_shuffle(<Rng*>&rng[0], &p[at], sizes[k])
            at += sizes[k]
    return out
