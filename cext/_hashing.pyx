# Feature hashing of CSR rows (docs/formats.md section 1.2): `llsvm-train --hash-bits B` and hashed models.
#
# Problem: map each row x over original features j = 1, 2, ... (any number of them) to the row phi(x) over 2^B
#   hashed features, phi(x)_b = sum of sign(j) * x_j over the j with bucket(j) = b: the signed hash kernel of
#   Weinberger, Dasgupta, Langford, Smola and Attenberg, "Feature hashing for large scale multitask learning"
#   (ICML 2009, section 2, the hashed feature map with the sign hash xi), which Matsushima, Vishwanathan and Smola,
#   "Linear support vector machines via dual cached loops" (KDD 2012; section 4, "Expanding Features on the Fly",
#   and section 5 citing [31], [37]) use to train StreamSVM on features generated on demand. bucket and sign are
#   the inline helpers of hashing.pxd.
# Method, per row: one pass makes a key per entry, bucket << 32 | position << 1 | negative (positions are unique,
#   so the keys are distinct and any sort puts equal buckets in storage order); the keys are sorted (insertion sort
#   up to SMALL_ROW entries; beyond, insertion-sorted runs merged bottom-up: O(k log k)); one pass writes the
#   entries in bucket order, adding the values of equal buckets left to right in storage order (exactly as
#   tests/reference/hashing_twin.py does). A sum that is exactly 0.0 stays an entry. Values become float64.
# Memory: the output arrays are sized for nnz (a hashed row is never longer than its original), written compacted
#   and shrunk in place at the end; the only other memory is 2 keys per entry of the longest row (keys and the
#   merge buffer), allocated once per call. No stopping rule: one pass over the non-zeros, nogil.
# Rows are read through a row view X (a `Rows`, cext/_view.pyx; a memory-mapped file of several blocks is hashed
# in place, segment by segment); X's bias is not hashed (it stays the caller's extra coordinate).
from libc.stdint cimport int32_t, int64_t, uint32_t, uint64_t
from libc.stdlib cimport free, malloc

import numpy as np

from hashing cimport HASH_BITS_MAX, HASH_BITS_MIN, fmix32, hash_bucket, hash_sign
from kernel_types cimport value_t
from rowview cimport RowView, row_indices, row_values
from llsvm._ext._view cimport Rows

# rows up to this many entries are sorted by insertion sort
cdef enum:
    SMALL_ROW = 32

HASH_BITS_RANGE = (HASH_BITS_MIN, HASH_BITS_MAX)


cdef inline void _insertion_sort(uint64_t* a, int64_t n) noexcept nogil:
    cdef int64_t i, k
    cdef uint64_t v
    for i in range(1, n):
        v = a[i]
        k = i
        while k > 0 and a[k - 1] > v:
            a[k] = a[k - 1]
            k -= 1
        a[k] = v


cdef inline uint64_t* _merge_sort(uint64_t* a, uint64_t* tmp, int64_t n) noexcept nogil:
    """Sort a[0:n] (distinct keys): insertion-sorted runs of SMALL_ROW, then bottom-up merges ping-ponging between
    a and tmp. Returns whichever of the two holds the result."""
    cdef int64_t lo, mid, hi, i, j, o, width = SMALL_ROW
    cdef uint64_t* src = a
    cdef uint64_t* dst = tmp
    cdef uint64_t* t
    lo = 0
    while lo < n:
        _insertion_sort(a + lo, min(width, n - lo))
        lo += width
    while width < n:
        lo = 0
        while lo < n:
            mid = min(lo + width, n)
            hi = min(lo + 2 * width, n)
            i = lo
            j = mid
            o = lo
            while i < mid and j < hi:
                if src[j] < src[i]:
                    dst[o] = src[j]
                    j += 1
                else:
                    dst[o] = src[i]
                    i += 1
                o += 1
            while i < mid:
                dst[o] = src[i]
                i += 1
                o += 1
            while j < hi:
                dst[o] = src[j]
                j += 1
                o += 1
            lo = hi
        t = src
        src = dst
        dst = t
        width *= 2
    return src


cdef int64_t _hash_pass(const RowView* v, uint32_t mask, uint64_t* keys, int64_t* out_indptr, int32_t* out_indices,
                        double* out_values, value_t* kind) noexcept nogil:
    """Hash the rows of v into the out arrays; returns the output nnz."""
    cdef int64_t i, t, k, pos = 0
    cdef int64_t last
    cdef uint32_t j
    cdef uint64_t key, b
    cdef uint64_t* sorted_keys
    cdef const int32_t* ix
    cdef const value_t* x
    cdef double val
    out_indptr[0] = 0
    for i in range(v.n_rows):
        k = v.indptr[i + 1] - v.indptr[i]
        ix = row_indices(v, i) + v.indptr[i]
        x = row_values(v, i, kind) + v.indptr[i]
        # map: key = bucket | position | sign bit
        for t in range(k):
            j = <uint32_t>ix[t] + 1
            keys[t] = ((<uint64_t>hash_bucket(j, mask)) << 32) | (<uint64_t>t << 1) | \
                <uint64_t>(hash_sign(j) < 0)
        # sort
        if k <= SMALL_ROW:
            _insertion_sort(keys, k)
            sorted_keys = keys
        else:
            sorted_keys = _merge_sort(keys, keys + k, k)
        # write, merging equal buckets in storage order
        last = -1
        for t in range(k):
            key = sorted_keys[t]
            b = key >> 32
            val = <double>x[<int64_t>((key >> 1) & 0x7FFFFFFF)]
            if key & 1:
                val = -val
            if <int64_t>b == last:
                out_values[pos - 1] += val
            else:
                out_indices[pos] = <int32_t>b
                out_values[pos] = val
                pos += 1
                last = <int64_t>b
        out_indptr[i + 1] = pos
    return pos


cdef int64_t _hash_into(Rows X, uint32_t mask, uint64_t* keys, int64_t[::1] oip, int32_t[::1] oix,
                        double[::1] ov):
    """_hash_pass into the output arrays, whose buffers are released when this returns (so they may be resized)."""
    cdef int64_t pos, nnz = oix.shape[0]
    cdef int32_t* pix = &oix[0] if nnz else NULL
    cdef double* pv = &ov[0] if nnz else NULL
    with nogil:
        if X.f32:
            pos = _hash_pass(&X.v, mask, keys, &oip[0], pix, pv, <float*>NULL)
        else:
            pos = _hash_pass(&X.v, mask, keys, &oip[0], pix, pv, <double*>NULL)
    return pos


def hash_rows(Rows X not None, int bits):
    """(indptr int64, indices int32, values float64) of X's rows hashed to 2^bits features (hashing.pxd).

    Indices are 0-based (original feature j = index + 1); output indices are strictly increasing within each row.
    Raises ValueError on decreasing row offsets or bits outside 1..28 (llsvm.hashing checks user input first).
    """
    cdef const RowView* v = &X.v
    cdef int64_t n_rows = v.n_rows, nnz, i, k, longest = 0, bad_row = -1, pos
    if bits < HASH_BITS_MIN or bits > HASH_BITS_MAX:
        raise ValueError(f"hash bits must be in {HASH_BITS_MIN}..{HASH_BITS_MAX}, got {bits}")
    with nogil:
        for i in range(n_rows):
            k = v.indptr[i + 1] - v.indptr[i]
            if k < 0:
                bad_row = i
                break
            if k > longest:
                longest = k
    if bad_row >= 0:
        raise ValueError(f"row offsets decrease at row {bad_row}")
    if longest > 0x7FFFFFFF:
        raise ValueError(f"a row has {longest} entries (at most 2^31 - 1)")
    nnz = v.indptr[n_rows] - v.indptr[0]
    out_indptr = np.empty(n_rows + 1, dtype=np.int64)
    out_indices = np.empty(nnz, dtype=np.int32)
    out_values = np.empty(nnz, dtype=np.float64)
    cdef uint64_t* keys = <uint64_t*>malloc(<size_t>max(2 * longest, 1) * sizeof(uint64_t))
    if keys == NULL:
        raise MemoryError()
    try:
        pos = _hash_into(X, (<uint32_t>1 << bits) - 1, keys, out_indptr, out_indices, out_values)
    finally:
        free(keys)
    if pos < nnz:   # shrink in place (these arrays are ours alone and no buffer of them is held any more)
        out_indices.resize(pos, refcheck=False)
        out_values.resize(pos, refcheck=False)
    return out_indptr, out_indices, out_values


def fmix32_array(const uint32_t[::1] h):
    """fmix32 of every element (uint32): the function hashed models depend on, exposed so tests can pin it."""
    out = np.empty(h.shape[0], dtype=np.uint32)
    cdef uint32_t[::1] o = out
    cdef int64_t i
    with nogil:
        for i in range(h.shape[0]):
            o[i] = fmix32(h[i])
    return out
