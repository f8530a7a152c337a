"""Feature hashing for `--hash-bits B` and hashed models (docs/formats.md, section 1.2; Weinberger, Dasgupta,
Langford, Smola, Attenberg, "Feature hashing for large scale multitask learning", ICML 2009).

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


def check_bits(bits):
    """bits as an int if it is an integer in 1..28, else ParameterError."""
    if isinstance(bits, (bool, np.bool_)) or not isinstance(bits, (int, np.integer)):
        raise ParameterError(f"hash bits must be an integer in {MIN_BITS}..{MAX_BITS}, got {bits!r}")
    if not MIN_BITS <= bits <= MAX_BITS:
        raise ParameterError(f"hash bits must be in {MIN_BITS}..{MAX_BITS}, got {bits}")
    return int(bits)


def hash_dataset(ds, bits):
    """A CSRDataset of ds's rows hashed to 2^bits features: same labels (and row_ids, alpha, weights, first_row, source)."""
    bits = check_bits(bits)
    ds = ds.as_view() if hasattr(ds, "as_view") else ds
    # through the row view: a memory-mapped file of several blocks is hashed in place
    indptr, indices, values = hash_rows(ds.row_view(), bits)
    out = CSRDataset(ds.y, indptr, indices, values, 1 << bits, row_ids=getattr(ds, "row_ids", None),
                     alpha=getattr(ds, "alpha", None), weights=getattr(ds, "weights", None),
                     source=getattr(ds, "source", None),
                     labels=getattr(ds, "_labels", None), label_counts=getattr(ds, "_label_counts", None),
                     check=False)
    if hasattr(ds, "first_row"):
        out.first_row = ds.first_row
    return out
