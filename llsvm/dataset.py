"""Datasets (docs/architecture.md, "Dataset protocol"): what solvers read rows from.

Every dataset has ``n_rows``, ``n_features``, ``nnz``, ``labels`` (distinct labels in order of first occurrence,
LIBLINEAR's order) with ``label_counts``, ``as_view()`` (random access only) and
``iter_blocks(max_rows=None, max_bytes=None)``.

- ``CSRDataset``: CSR arrays in memory (or memory-mapped): int64 row offsets, int32 0-based indices, float64 or
  float32 values, float64 labels, optional int64 original row ids. Costs 12 bytes per non-zero (float64) plus
  16 bytes per row (offset and label).
- ``BinaryDataset`` (llsvm.binfmt): a binary file; random access by loading it (mapped, read in place: a
  ``MappedDataset`` when it has several blocks), or streamed block by block.
- Kernels take ``row_view(bias)``: a ``Rows`` (cext/_view.pyx) over ``kernel_arrays()`` and ``segs`` (None for
  contiguous arrays; cext/rowview.pxd).
- ``TextStream`` (llsvm.textio): LIBSVM text parsed chunk by chunk; streaming only.
"""
import numpy as np

from .errors import ParameterError

# more distinct labels than this and a dataset is taken to have continuous (regression) targets: no label table
MAX_LABELS = 65536


def label_table(y):
    """(labels, counts): the distinct values of y in order of first occurrence, or (None, None) if too many."""
    y = np.asarray(y, dtype=np.float64)
    if y.size == 0:
        return np.empty(0, np.float64), np.empty(0, np.int64)
    uniq, first, counts = np.unique(y, return_index=True, return_counts=True)
    if uniq.size > MAX_LABELS:
        return None, None
    order = np.argsort(first, kind="stable")
    return uniq[order], counts[order].astype(np.int64)


class RowError(ParameterError):
    """A row refused for its values after reading (its squared norm is not a finite number: the trainers, the
    binary writer; a row that is not a precomputed kernel's: check_precomputed, check_kernel_rows): "[source: ]row
    N: detail". `row`: its 0-based number, so that a caller reading text can name the row's line instead
    (io.row_error_at_line). `pair`: the position in the row of the index:value pair the error is at (its index, or
    its value with `on_value`; the row's length: after its last pair), None: the row's largest value."""

    def __init__(self, row, detail, source=None, pair=None, on_value=False):
        self.row = int(row)
        self.detail = detail
        self.source = source
        self.pair = pair
        self.on_value = bool(on_value)
        super().__init__(f"{source + ': ' if source else ''}row {self.row + 1}: {detail}")

    def __reduce__(self):
        return (type(self), (self.row, self.detail, self.source, self.pair, self.on_value))

    def moved(self, first_row, source=None):
        """The same error for the row `first_row` rows further on (a block's row, in its file), from `source`."""
        return RowError(self.row + first_row, self.detail, source or self.source, self.pair, self.on_value)


def norm_overflow(indices, values):
    """What is wrong with a row whose squared norm is not a finite number (its 0-based indices and values), for a
    RowError: a value that is NaN or infinite, or values so large that the sum of their squares overflows."""
    values = np.asarray(values, dtype=np.float64)
    bad = np.flatnonzero(~np.isfinite(values))
    if bad.size:
        j = int(bad[0])
        return f"the value of feature {int(indices[j]) + 1} is {values[j]!r}, not a finite number"
    big = float(np.abs(values).max()) if values.size else 0.0
    return (f"the squared norm of the features overflows (values up to {big:g}; the sum of their squares is beyond "
            "the largest double): scale the features")


def check_row_norms(ds, sq=None):
    """Refuse (RowError) a dataset with a row whose squared norm is not a finite number, naming the first
    such row (1-based) and its largest value (norm_overflow): kernels, dot products and the binary format's
    max_sq_norm all overflow on it. `sq`: the squared row norms when the caller has them (else computed here:
    one pass over the rows)."""
    if sq is None:
        from ._ext._rowops import row_sq_norms
        sq = row_sq_norms(ds.row_view())
    ok = np.isfinite(sq)
    if ok.all():
        return
    r = int(np.argmin(ok))
    row = ds.take_rows(np.array([r], np.int64))
    raise RowError(r + int(getattr(ds, "first_row", 0) or 0), norm_overflow(row.indices, row.values), ds.source)


# -- LIBSVM's precomputed kernel (-t 4) -----------------------------------------------------------------------------
# Its rows are read with 0-based indices: index 0 holds the row's sample serial number s (1-based: the column of the
# kernel matrix that is the row's own), index t holds K(x, x_t), every t from 1 on written, zeros too (LIBSVM's
# README, "Precomputed Kernels"; a row to predict holds any number at index 0, `0:?`). The kernels (cext/kernel.pxd,
# kernel_type 4) read K(x_i, x_j) at index s_j of row i (at position s_j of a full row, LIBSVM's
# x[i][(int)x[j][0].value]); these checks, made before any kernel runs, refuse a row that lacks an index a kernel
# would read, where LIBSVM reads whatever lies at that position (another value, or past the row).
PRECOMPUTED_ROW = "{row} then K(x, x_s) at every index s from 1 to {top} ({what}), zeros written"


def first_missing(ds, needed):
    """(row, index, position) of the first row of `ds` (contiguous CSR arrays) that lacks one of the indices
    `needed` (ascending int64), its smallest such index and where in the row it would stand; None when every row
    holds them all."""
    indptr, indices = ds.indptr, ds.indices
    n = indptr.shape[0] - 1
    if n <= 0 or not needed.size:
        return None
    top = int(needed[-1])
    at = indptr[:-1] + top
    inside = at < indptr[1:]
    full = np.zeros(n, bool)
    # ascending distinct indices from 0: position top holds index top exactly when the row holds 0..top (a full
    # row, as LIBSVM's format has them: the one look-up that answers for every needed index)
    full[inside] = indices[at[inside]] == top
    # the other rows at once (no loop over rows): how many of the needed indices each holds (a row's indices are
    # distinct), then the first that holds fewer than all
    rest = np.flatnonzero(~full)
    if not rest.size:
        return None
    lens = indptr[rest + 1] - indptr[rest]
    owner = np.repeat(np.arange(rest.size), lens)
    pos = np.arange(owner.size) - np.repeat(np.cumsum(lens) - lens, lens) + np.repeat(indptr[rest], lens)
    held = np.bincount(owner, weights=np.isin(indices[pos], needed), minlength=rest.size)
    short = np.flatnonzero(held < needed.size)
    if not short.size:
        return None
    r = int(rest[short[0]])
    row = indices[indptr[r]:indptr[r + 1]]
    k = int(needed[~np.isin(needed, row)][0])
    return r, k, int(np.searchsorted(row, k))


def check_precomputed(ds):
    """Refuse (RowError, at the pair it is about) training rows that are not a precomputed kernel's: svm-train's
    checks in its words (each row's first pair is 0:sample_serial_number; the serial, (int) of its value as C
    casts it, within 1..the largest index of the rows), then llsvm's own: every row holds K(x, x_s) at the index s
    of every row's serial (LIBSVM reads another value, or past the row). Returns the serials, ascending, distinct."""
    ds = ds.contiguous()
    indptr, indices, values = ds.indptr, ds.indices, ds.values
    n = ds.n_rows
    base = int(getattr(ds, "first_row", 0) or 0)
    starts = indptr[:-1]
    held = indptr[1:] > starts
    first = np.full(n, -1, np.int64)
    first[held] = indices[starts[held]]
    v = np.zeros(n, np.float64)
    v[held] = values[starts[held]]
    max_index = int(indices.max()) if indices.size else 0
    no_serial = first != 0
    # (int) v <= 0 or > max_index, as svm-train tests it (a value beyond C's int is out of range)
    out = ~no_serial & ((v < 1) | (v >= max_index + 1))
    bad = no_serial | out
    if bad.any():
        r = int(np.argmax(bad))
        if no_serial[r]:
            raise RowError(base + r, "first column must be 0:sample_serial_number", ds.source, pair=0)
        found = f"{v[r]:g}" if float(f"{v[r]:g}") == v[r] else repr(float(v[r]))
        raise RowError(base + r, f"sample_serial_number out of range (found {found}; the serial numbers are 1 to "
                       f"{max_index}, the largest index)", ds.source, pair=0, on_value=True)
    serials = np.unique(np.trunc(v).astype(np.int64))
    missing = first_missing(ds, serials)
    if missing is not None:
        r, k, at = missing
        raise RowError(base + r, f"no kernel value at index {k}, the sample_serial_number of a training row: " +
                       PRECOMPUTED_ROW.format(row="a training row of a precomputed kernel holds 0:sample_serial_number",
                                              top=int(serials[-1]),
                                              what="the largest sample_serial_number of the training rows"),
                       ds.source, pair=at)
    return serials


def check_kernel_rows(rows, serials):
    """Refuse (RowError) a row to predict with a precomputed-kernel model that lacks the index of one of the serial
    numbers `serials` (ascending, distinct) of the model's support vectors (index 0 may hold any number, LIBSVM's
    `0:?`)."""
    missing = first_missing(rows, serials)
    if missing is not None:
        r, k, at = missing
        raise RowError(r, f"no kernel value at index {k}, the sample_serial_number of a support vector: " +
                       PRECOMPUTED_ROW.format(row="a row to predict with a precomputed kernel holds 0:? (any number)",
                                              top=int(serials[-1]),
                                              what="the largest sample_serial_number of the model's support vectors"),
                       rows.source, pair=at)


def kernel_rows(K, y=None, serials=False):
    """A kernel matrix K (m x n, dense) as a precomputed kernel's rows, read 0-based: row i holds index 0 (its sample
    serial number i + 1 with `serials`, the training rows of an estimator, whose row i is column i + 1; else 0, the
    `0:?` of a row to predict) then K[i, s - 1] at every index s = 1..n, zeros held. Labels y (default 0)."""
    K = np.asarray(K, dtype=np.float64)
    values = np.empty((K.shape[0], K.shape[1] + 1), np.float64)
    values[:, 0] = np.arange(1, K.shape[0] + 1) if serials else 0.0
    values[:, 1:] = K
    return full_rows(values, y)


def full_rows(X, y=None):
    """The rows of a dense matrix X with every entry held, zeros too (column j: index j), labels y (default 0): a
    precomputed kernel's rows as LIBSVM's format has them (a CSR matrix of X would drop its zero kernel values)."""
    X = np.asarray(X)
    if X.dtype not in (np.float32, np.float64):
        X = X.astype(np.float64)
    m, n = X.shape
    if y is not None and len(y) != m:
        raise ParameterError(f"X has {m} rows but y has {len(y)} labels")
    indptr = np.arange(m + 1, dtype=np.int64) * n
    indices = np.tile(np.arange(n, dtype=np.int32), m)
    return CSRDataset(np.zeros(m) if y is None else y, indptr, indices, np.ascontiguousarray(X).reshape(-1), n)


def block_rows_for(indptr, max_rows=None, max_bytes=None, value_size=8, row_overhead=16, first=False):
    """Row boundaries [0, r1, r2, ..., n] cutting a CSR into blocks of at most max_rows rows / max_bytes bytes
    (`first`: only [0, r1]).

    A block always holds at least one row, even if that row alone is over max_bytes.
    """
    n = len(indptr) - 1
    if max_rows is None and max_bytes is None:
        return [0, n]
    bounds = [0]
    if max_bytes is None:
        step = max(1, int(max_rows))
        bounds.extend(range(step, n, step))
        bounds.append(n)
        return sorted(set(bounds))
    per_nnz = 4 + value_size
    # cumulative bytes up to row r: row_overhead * r + per_nnz * (indptr[r] - indptr[0])
    cum = (indptr - indptr[0]) * per_nnz + row_overhead * np.arange(n + 1, dtype=np.int64)
    start = 0
    while start < n:
        limit = cum[start] + int(max_bytes)
        stop = int(np.searchsorted(cum, limit, side="right")) - 1
        stop = max(stop, start + 1)
        if max_rows is not None:
            stop = min(stop, start + max(1, int(max_rows)))
        stop = min(stop, n)
        bounds.append(stop)
        if first:
            break
        start = stop
    return bounds


def check_weights(weights, n_rows, what="sample_weight"):
    """Row weights as the solvers take them (docs/weights.md): float64, one per row, each finite and >= 0, not all
    0; else ParameterError naming the first bad one (`what`: how the caller calls them)."""
    w = np.asarray(weights, dtype=np.float64)
    if w.ndim != 1 or w.shape[0] != n_rows:
        raise ParameterError(f"{what} has shape {w.shape}; expected one weight per row ({n_rows},)")
    bad = np.flatnonzero(~(np.isfinite(w) & (w >= 0)))
    if bad.size:
        raise ParameterError(f"{what}[{int(bad[0])}] is {float(w[bad[0]])!r}: a weight must be a finite number >= 0")
    if n_rows and not (w > 0).any():
        raise ParameterError(f"every {what} is zero: no row to train on")
    return np.ascontiguousarray(w)


def positive_rows(weights, rows=None):
    """The rows (None: all) that weigh more than 0, as an int64 array, or `rows` itself when none weighs 0 (or
    there are no weights): a row of weight 0 has no effect (docs/weights.md), so no solver sees one."""
    if weights is None:
        return rows
    w = weights if rows is None else weights[rows]
    if (w > 0).all():
        return rows
    keep = np.flatnonzero(w > 0)
    return keep.astype(np.int64) if rows is None else np.asarray(rows, np.int64)[keep]


class Dataset:
    """Base of the dataset protocol."""

    source = None

    def as_view(self):
        raise ParameterError(f"{self.source or 'this dataset'} can only be streamed; load it into memory first")

    def iter_blocks(self, max_rows=None, max_bytes=None):
        raise NotImplementedError  # pragma: no cover - abstract


# the largest 0-based column a row holds: its 1-based index, 2^31 - 1, is LIBSVM's and LIBLINEAR's largest int (and
# the text parser's); the kernels' rows hold int32 indices
MAX_COLUMN = 2 ** 31 - 2


def _int32_indices(indices):
    """Column indices as the kernels read them (int32), refused (ParameterError) beyond MAX_COLUMN or below 0
    rather than wrapped around: a CSR matrix of 2^40 columns may hold int64 indices."""
    indices = np.asarray(indices)
    if indices.dtype == np.int32:
        return indices
    if indices.size and indices.dtype.kind in "iu":
        top, low = int(indices.max()), int(indices.min())
        if top > MAX_COLUMN or low < 0:
            bad = top if top > MAX_COLUMN else low
            raise ParameterError(f"column {bad} is beyond the int32 range (columns 0..{MAX_COLUMN}: LIBSVM's and "
                                 "LIBLINEAR's feature indices are C ints)")
    return indices.astype(np.int32)


class CSRDataset(Dataset):
    """Rows in memory as CSR arrays; the random-access dataset every in-memory solver reads through its view."""

    segs = None          # the segment table of a segmented view (llsvm.binfmt.MappedDataset); None: contiguous
    _rows = None         # the row view, made on first use (row_view)
    weights = None       # the rows' weights (float64, docs/weights.md), None: every row weighs 1

    def __init__(self, y, indptr, indices, values, n_features=None, *, row_ids=None, n_qid=0, source=None,
                 labels=None, label_counts=None, check=True, alpha=None, weights=None):
        self.y = np.asarray(y, dtype=np.float64)
        self.weights = None if weights is None else np.ascontiguousarray(weights, dtype=np.float64)
        self.indptr = np.asarray(indptr, dtype=np.int64)
        self.indices = _int32_indices(indices)
        values = np.asarray(values)
        if values.dtype not in (np.float32, np.float64):
            values = values.astype(np.float64)
        self.values = values
        self.row_ids = None if row_ids is None else np.asarray(row_ids, dtype=np.int64)
        self.alpha = None if alpha is None else np.asarray(alpha, dtype=np.float64)   # active-set files
        self.n_qid = int(n_qid)
        self.source = source
        if n_features is None:
            n_features = int(self.indices.max()) + 1 if self.indices.size else 0
        self.n_features = int(n_features)
        self._labels = labels
        self._label_counts = label_counts
        if check:
            self._check()

    def _check(self):
        n = self.y.shape[0]
        if self.indptr.shape != (n + 1,):
            raise ParameterError(f"indptr has {self.indptr.shape[0]} entries, expected n_rows + 1 = {n + 1}")
        if self.indptr[0] != 0 or self.indptr[-1] != self.indices.shape[0]:
            raise ParameterError("indptr must start at 0 and end at nnz")
        if self.indices.shape != self.values.shape:
            raise ParameterError("indices and values differ in length")
        if self.row_ids is not None and self.row_ids.shape != (n,):
            raise ParameterError("row_ids must have one entry per row")
        if self.alpha is not None and self.alpha.shape != (n,):
            raise ParameterError("alpha must have one entry per row")
        if self.weights is not None and self.weights.shape != (n,):
            raise ParameterError(f"{self.weights.shape[0]} weights for {n} rows: one weight per row")

    @property
    def n_rows(self):
        return self.y.shape[0]

    @property
    def nnz(self):
        return int(self.indptr[-1])

    @property
    def dtype(self):
        return self.values.dtype

    @property
    def nbytes(self):
        extra = (self.row_ids.nbytes if self.row_ids is not None else 0) + \
            (self.alpha.nbytes if self.alpha is not None else 0) + (self.weights.nbytes if self.weights is not None else 0)
        return self.y.nbytes + self.indptr.nbytes + self.indices.nbytes + self.values.nbytes + extra

    def _table(self):
        if self._labels is None:
            self._labels, self._label_counts = label_table(self.y)
        return self._labels, self._label_counts

    @property
    def labels(self):
        """Distinct labels in order of first occurrence (None for continuous targets)."""
        return self._table()[0]

    @property
    def label_counts(self):
        return self._table()[1]

    def as_view(self):
        return self

    def kernel_arrays(self):
        """(indptr, indices, values): the arrays row_view() wraps, with `segs` (cext/rowview.pxd)."""
        return self.indptr, self.indices, self.values

    def __getstate__(self):
        """Pickled without its row view (a kernel object over these arrays, made again on first use), so that a
        dataset and the Subproblems over it can be sent to another process (llsvm/solvers/cocoa.py's mapper)."""
        state = dict(self.__dict__)
        state.pop("_rows", None)
        return state

    def row_view(self, bias=-1.0, n_features=None):
        """The rows as the kernels take them: a ``Rows`` (cext/_view.pyx) over kernel_arrays() and segs, made
        once, seen with the bias coordinate `bias` (< 0: none) and, if given, a wider row (n_features >= the
        dataset's: the index of the bias weight in the caller's w). Never copies the rows."""
        if self._rows is None:
            from ._ext._view import Rows
            self._rows = Rows(*self.kernel_arrays(), self.n_features, -1.0, self.segs,
                              np.ascontiguousarray(self.y, dtype=np.float64), self.weights)
        return self._rows.with_bias(bias, n_features)

    def contiguous(self):
        """This dataset with contiguous CSR arrays (itself; a segmented one copies)."""
        return self

    def with_weights(self, weights):
        """This dataset's rows with the given weights (checked: check_weights; None: unweighted), sharing its arrays."""
        import copy
        ds = copy.copy(self)
        ds.weights = None if weights is None else check_weights(weights, self.n_rows)
        ds._rows = None
        return ds

    def slice(self, start, stop):
        """Rows start..stop-1 as a CSRDataset sharing the index and value arrays (offsets are re-based)."""
        k0, k1 = int(self.indptr[start]), int(self.indptr[stop])
        return CSRDataset(self.y[start:stop], self.indptr[start:stop + 1] - k0, self.indices[k0:k1],
                          self.values[k0:k1], self.n_features,
                          row_ids=None if self.row_ids is None else self.row_ids[start:stop],
                          alpha=None if self.alpha is None else self.alpha[start:stop],
                          weights=None if self.weights is None else self.weights[start:stop],
                          source=self.source, check=False)

    def iter_blocks(self, max_rows=None, max_bytes=None):
        bounds = block_rows_for(self.indptr, max_rows, max_bytes, self.values.dtype.itemsize,
                                16 + (8 if self.row_ids is not None else 0) + (8 if self.alpha is not None else 0)
                                + (8 if self.weights is not None else 0))
        for a, b in zip(bounds[:-1], bounds[1:]):
            yield self.slice(a, b)

    def take_rows(self, rows):
        """A contiguous copy holding the given rows, in the given order (segmented views included)."""
        from ._ext._rowops import take_rows
        rows = np.ascontiguousarray(rows, dtype=np.int64)
        if rows.size and (rows.min() < 0 or rows.max() >= self.n_rows):
            raise IndexError("row index out of range")
        indptr, indices, values = take_rows(self.row_view(), rows)
        return CSRDataset(self.y[rows], indptr, indices, values, self.n_features,
                          row_ids=None if self.row_ids is None else self.row_ids[rows],
                          alpha=None if self.alpha is None else self.alpha[rows],
                          weights=None if self.weights is None else self.weights[rows], source=self.source, check=False)

    def to_csr(self):
        """A scipy.sparse.csr_matrix of shape (n_rows, n_features) sharing the value array where scipy allows."""
        import scipy.sparse as sp

        return sp.csr_matrix((self.values, self.indices, self.indptr), shape=(self.n_rows, self.n_features))

    @classmethod
    def from_csr(cls, X, y, *, dtype=None, source=None):
        """A CSRDataset from a scipy sparse matrix (or anything scipy can make CSR) and labels."""
        import scipy.sparse as sp

        X = sp.csr_matrix(X)            # shares a CSR matrix's arrays
        if not X.has_canonical_format:
            X = X.copy()                  # never sort or sum the caller's matrix in place
            X.sum_duplicates()
        values = X.data if dtype is None else X.data.astype(dtype, copy=False)
        if values.dtype not in (np.float32, np.float64):
            values = values.astype(np.float64)
        y = np.asarray(y, dtype=np.float64).ravel()
        if y.shape[0] != X.shape[0]:
            raise ParameterError(f"X has {X.shape[0]} rows but y has {y.shape[0]} labels")
        # the values and the column indices in place (a copy only of int64 indices, or an int32 indptr: n + 1)
        return cls(y, X.indptr.astype(np.int64, copy=False), X.indices, values, X.shape[1], source=source)

    def __repr__(self):
        return (f"CSRDataset(n_rows={self.n_rows}, n_features={self.n_features}, nnz={self.nnz}, "
                f"dtype={self.values.dtype.name})")
