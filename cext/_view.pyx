# The row view as a Python object (docs/architecture.md, "Row view"): `Rows`, what every kernel that reads rows takes.
#
# Problem: none; no computation. A Rows holds the C struct RowView of rowview.pxd (int64 row offsets, int32
# indices, float32 or float64 values, n_features, the implicit bias coordinate, optionally labels and the segment
# table of a memory-mapped file of several blocks) and the buffers of the arrays it points into, so the struct
# stays valid as long as the object lives. Kernels take one Rows instead of (indptr, indices, values,
# n_features, bias, segs), read `X.v` through the inline helpers of rowview.pxd inside their nogil loops, and
# dispatch on `X.f32` to the float or double specialization of their fused implementation.
# Construction checks types, lengths and the segment table once (O(1) apart from acquiring the buffers; the
# binary reader has verified every row of a mapped file); `with_bias` gives the same rows with another bias or a
# wider row (the bias coordinate's index) without touching the arrays.
from libc.stdint cimport int32_t, int64_t

import numpy as np

from rowview cimport make_view


cdef class Rows:
    """Rows(indptr, indices, values, n_features, bias=-1.0, segs=None, labels=None, weights=None): a view of CSR
    rows.

    indptr int64 (n_rows + 1 offsets), indices int32 (0-based, strictly increasing in a row), values float32 or
    float64, all C-contiguous (never copied: a wrong type or layout raises ValueError). bias >= 0 adds the
    coordinate n_features of value bias to every row. segs: None (contiguous arrays) or (seg int32[n_rows],
    seg_shift int64[2 * n_segments]) for a memory-mapped file read in place (rowview.pxd). labels: None or
    float64[n_rows]. weights: None (every row weighs 1) or float64[n_rows], the rows' weights (docs/weights.md;
    the kernels read them through rowview.pxd's row_cost).
    """

    def __init__(self, indptr, indices, values, int64_t n_features, double bias=-1.0, segs=None, labels=None,
                 weights=None):
        cdef int64_t n
        self._indptr = indptr
        self._indices = indices
        if self._indptr.shape[0] < 1:
            raise ValueError("indptr must have n_rows + 1 entries")
        dtype = np.asarray(values).dtype
        if dtype == np.float32:
            self.f32 = True
            self._values32 = values
            self.v = make_view(self._indptr, self._indices, self._values32, NULL, n_features, bias)
        elif dtype == np.float64:
            self.f32 = False
            self._values64 = values
            self.v = make_view(self._indptr, self._indices, self._values64, NULL, n_features, bias)
        else:
            raise ValueError(f"values must be float32 or float64, not {dtype}")
        if n_features < 0:
            raise ValueError("n_features must be >= 0")
        n = self.v.n_rows
        if segs is None:
            if self._indices.shape[0] != (self._values32.shape[0] if self.f32 else self._values64.shape[0]):
                raise ValueError("inconsistent CSR arrays: indices and values differ in length")
            if self._indptr[0] < 0 or self._indptr[n] > self._indices.shape[0]:
                raise ValueError("inconsistent CSR arrays: the offsets run beyond the non-zeros")
        else:
            self._seg, self._seg_shift = segs
            if self._seg.shape[0] != n or self._seg_shift.shape[0] % 2:
                raise ValueError("segment table does not match the view")
            self.v.seg = &self._seg[0] if n > 0 else NULL
            self.v.seg_shift = &self._seg_shift[0] if self._seg_shift.shape[0] > 0 else NULL
        if labels is not None:
            self._labels = labels
            if self._labels.shape[0] != n:
                raise ValueError("labels must have one entry per row")
            self.v.y = &self._labels[0] if n > 0 else NULL
        if weights is not None:
            self._weights = weights
            if self._weights.shape[0] != n:
                raise ValueError("weights must have one entry per row")
            self.v.weight = &self._weights[0] if n > 0 else NULL

    def with_bias(self, double bias, n_features=None):
        """The same rows with the bias coordinate `bias` (< 0: none) and, if given, a wider row: n_features
        (>= this view's) is the bias coordinate's index, for a caller whose w has room for more features than the
        data. The arrays are shared, not copied."""
        cdef Rows r = Rows.__new__(Rows)
        r.v = self.v
        r.v.bias = bias
        if n_features is not None:
            if n_features < self.v.n_features:
                raise ValueError(f"a view of {self.v.n_features} features cannot be narrowed to {n_features}")
            r.v.n_features = n_features
        r.f32 = self.f32
        r._indptr = self._indptr
        r._indices = self._indices
        r._values32 = self._values32
        r._values64 = self._values64
        r._labels = self._labels
        r._weights = self._weights
        r._seg = self._seg
        r._seg_shift = self._seg_shift
        return r

    @property
    def weights(self):
        """The rows' weights (float64, read-only) or None: every row weighs 1."""
        if self.v.weight == NULL:
            return None
        return np.asarray(self._weights)

    @property
    def n_rows(self):
        return self.v.n_rows

    @property
    def n_features(self):
        return self.v.n_features

    @property
    def bias(self):
        return self.v.bias

    @property
    def nnz(self):
        return self.v.indptr[self.v.n_rows] - self.v.indptr[0]

    @property
    def dtype(self):
        return np.dtype(np.float32 if self.f32 else np.float64)

    @property
    def segmented(self):
        return self.v.seg != NULL

    def __repr__(self):
        return (f"Rows(n_rows={self.v.n_rows}, n_features={self.v.n_features}, nnz={self.nnz}, "
                f"dtype={self.dtype.name}, bias={self.v.bias}{', segmented' if self.segmented else ''})")
