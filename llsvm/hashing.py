"""Feature hashing for `--hash-bits B` and hashed models (README "Hashed models"; Weinberger et al. 2009).

The original feature with 1-based index j (j = 0-based CSR index + 1, as uint32) goes to the 0-based hashed index
fmix32(j) & (2^B - 1) with the sign -1 if fmix32(j ^ 0x9E3779B9) has bit 31 set, else +1; fmix32 is MurmurHash3's
32-bit finalizer. Values of one row that land in the same bucket are added (in storage order; an exact 0.0 stays an
entry); hashed rows are float64 with strictly increasing indices. The bias is not hashed: it stays one more
coordinate after the 2^B hashed features. The kernel is llsvm._ext._hashing.hash_rows (cext/hashing.pxd).
"""
import numpy as np

from ._ext._hashing import HASH_BITS_RANGE, hash_rows
from .dataset import CSRDataset
from .errors import ParameterError

HASH_FUNCTION = "fmix32-signed"
MIN_BITS, MAX_BITS = HASH_BITS_RANGE     # 1, 28
SIGN_SEED = 0x9E3779B9


def check_bits(bits):
    """bits as an int if it is an integer in 1..28, else ParameterError."""
    if isinstance(bits, (bool, np.bool_)) or not isinstance(bits, (int, np.integer)):
        raise ParameterError(f"hash bits must be an integer in {MIN_BITS}..{MAX_BITS}, got {bits!r}")
    if not MIN_BITS <= bits <= MAX_BITS:
        raise ParameterError(f"hash bits must be in {MIN_BITS}..{MAX_BITS}, got {bits}")
    return int(bits)


def hash_dataset(ds, bits):
    """A CSRDataset of ds's rows hashed to 2^bits features: same labels (and row_ids, alpha, first_row, source)."""
    bits = check_bits(bits)
    ds = ds.as_view() if hasattr(ds, "as_view") else ds
    # through the row view: a memory-mapped file of several blocks is hashed in place
    indptr, indices, values = hash_rows(ds.row_view(), bits)
    out = CSRDataset(ds.y, indptr, indices, values, 1 << bits, row_ids=getattr(ds, "row_ids", None),
                     alpha=getattr(ds, "alpha", None), source=getattr(ds, "source", None),
                     labels=getattr(ds, "_labels", None), label_counts=getattr(ds, "_label_counts", None),
                     check=False)
    if hasattr(ds, "first_row"):
        out.first_row = ds.first_row
    return out


# -- the NumPy reference (tests) ----------------------------------------------------------------------------------

def fmix32_reference(h):
    """MurmurHash3's fmix32 over a uint32 array, in NumPy."""
    h = np.asarray(h, dtype=np.uint32).copy()
    h ^= h >> np.uint32(16)
    h *= np.uint32(0x85EBCA6B)
    h ^= h >> np.uint32(13)
    h *= np.uint32(0xC2B2AE35)
    h ^= h >> np.uint32(16)
    return h


def hash_rows_reference(indptr, indices, values, bits):
    """hash_rows in NumPy (vectorized): the same arrays, bit for bit."""
    indptr = np.asarray(indptr, dtype=np.int64)
    j = np.asarray(indices, dtype=np.int64).astype(np.uint32) + np.uint32(1)
    x = np.asarray(values).astype(np.float64)
    n_rows = indptr.size - 1
    bucket = (fmix32_reference(j) & np.uint32((1 << bits) - 1)).astype(np.int64)
    negative = (fmix32_reference(j ^ np.uint32(SIGN_SEED)) & np.uint32(0x80000000)) != 0
    signed = np.where(negative, -x, x)
    row = np.repeat(np.arange(n_rows, dtype=np.int64), np.diff(indptr))
    # stable sort by (row, bucket): equal buckets keep storage order
    order = np.argsort(row * (1 << bits) + bucket, kind="stable")
    row, bucket, signed = row[order], bucket[order], signed[order]
    first = np.ones(row.size, dtype=bool)
    first[1:] = (row[1:] != row[:-1]) | (bucket[1:] != bucket[:-1])
    group = np.cumsum(first) - 1                       # output entry of every input entry
    starts = np.flatnonzero(first)
    out_values = signed[starts].copy()
    # add the r-th member of each group for r = 1, 2, ...: left to right, as the kernel does
    rank = np.arange(row.size) - starts[group]
    for r in range(1, int(rank.max()) + 1 if rank.size else 1):
        sel = rank == r
        out_values[group[sel]] += signed[sel]        # one member per group: no repeated targets
    out_indptr = np.zeros(n_rows + 1, dtype=np.int64)
    np.cumsum(np.bincount(row[starts], minlength=n_rows), out=out_indptr[1:])
    return out_indptr, bucket[starts].astype(np.int32), out_values
