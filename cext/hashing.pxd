# The feature hash of `--hash-bits B` (header-only: no .pyx of this stem; the kernel is _hashing.pyx).
#
# Weinberger et al. 2009 ("Feature hashing for large scale multitask learning"), as the StreamSVM paper uses it to
# expand features on the fly: an original feature with 1-based index j (j = 0-based CSR index + 1, as uint32) goes
# to the 0-based hashed index fmix32(j) & (2^B - 1) with the sign -1 when bit 31 of fmix32(j ^ 0x9E3779B9) is set,
# +1 otherwise. fmix32 is MurmurHash3's 32-bit finalizer. Fixed and documented (docs/formats.md section 1.2): a hashed
# model file is only meaningful with exactly this mapping, so it must never change.
from libc.stdint cimport uint32_t

cdef enum:
    HASH_BITS_MIN = 1
    HASH_BITS_MAX = 28


cdef inline uint32_t fmix32(uint32_t h) noexcept nogil:
    """MurmurHash3's 32-bit finalizer (all arithmetic modulo 2^32)."""
    h ^= h >> 16
    h = h * <uint32_t>0x85ebca6bU
    h ^= h >> 13
    h = h * <uint32_t>0xc2b2ae35U
    h ^= h >> 16
    return h


cdef inline uint32_t hash_bucket(uint32_t j, uint32_t mask) noexcept nogil:
    """0-based hashed index of the 1-based original index j; mask = 2^B - 1."""
    return fmix32(j) & mask


cdef inline double hash_sign(uint32_t j) noexcept nogil:
    """The sign (+1.0 or -1.0) the value of the 1-based original index j takes in the hashed row."""
    return -1.0 if (fmix32(j ^ <uint32_t>0x9E3779B9U) & <uint32_t>0x80000000U) else 1.0
