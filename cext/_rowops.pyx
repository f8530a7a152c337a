# Row statistics, checks and copies over CSR rows (docs/architecture.md, "The seams").
#
# Problems: per-row squared norms ||x_i||^2 (Q_ii of the dual without the label term; for LIBSVM's precomputed
# kernel, the diagonal k(x_i, x_i) that stands for them, cext/kernel.pxd) and their maximum, which the
# binary format records (the LLSVM solver's data radius R^2); copies of chosen rows (take_rows); the structural
# check every reader and writer of the binary format applies (offsets monotone within bounds, indices in
# [0, n_features) and strictly increasing within each row), so a kernel can never index out of bounds; and what
# the binary format records about a block's rows, for its writer to record (block_stats) and its reader to check
# against the header and footer (check_block: check_csr's pass, with the same statistics): the largest index, the
# largest squared norm, labels finite or in the label table, with per-label counts and first rows; and the rows'
# weights of a version 2 file, each a finite number >= 0 (bad_weight). One pass over the non-zeros (the weights),
# nogil; no stopping rule.
# The row kernels (row_sq_norms, max_sq_norm, block_stats, take_rows) read a row view X (a `Rows`,
# cext/_view.pyx; segmented views of memory-mapped files included) and dispatch on X.f32. check_csr, check_block
# and compact_rows stay on raw arrays: check_csr validates the arrays a view may only be built on once they pass
# (it scans the contiguous index array of a block, not rows through a view; check_block builds its view of the
# block's arrays itself, and reads it only for rows that passed), and compact_rows edits a CSR's own writable
# arrays in place, which a read-only view does not give.
from libc.float cimport DBL_MAX
from libc.math cimport NAN
from libc.stdint cimport int32_t, int64_t, uint32_t, uint64_t

import numpy as np

from kernel_types cimport value_t
from rowview cimport RowView, make_view, row_sq_norm, row_indices, row_values
from kernel cimport precomputed_sq_norm
from llsvm._ext._view cimport Rows


cdef void _sq_norms(const RowView* v, double* out, bint precomputed, value_t* kind) noexcept nogil:
    cdef int64_t i
    if precomputed:
        for i in range(v.n_rows):
            out[i] = precomputed_sq_norm(v, i, kind)
        return
    for i in range(v.n_rows):
        out[i] = row_sq_norm(v, i, kind)


def row_sq_norms(Rows X not None, bint precomputed=False):
    """||x_i||^2 for every row (with X's bias coordinate when it has one), as float64. precomputed: instead the
    diagonal k(x_i, x_i) of LIBSVM's precomputed kernel, x_i's value at its own serial (what the kernels read as
    the squared norm: _kernel.kernel_sq_norms, which callers use)."""
    out = np.empty(X.v.n_rows, dtype=np.float64)
    cdef double[::1] o = out
    if X.v.n_rows == 0:
        return out
    with nogil:
        if X.f32:
            _sq_norms(&X.v, &o[0], precomputed, <float*>NULL)
        else:
            _sq_norms(&X.v, &o[0], precomputed, <double*>NULL)
    return out


cdef double _max_sq_norm(const RowView* v, value_t* kind) noexcept nogil:
    cdef int64_t i
    cdef double m = 0.0, s
    for i in range(v.n_rows):
        s = row_sq_norm(v, i, kind)
        if s > m:
            m = s
    return m


def max_sq_norm(Rows X not None):
    """max_i ||x_i||^2 (with X's bias coordinate when it has one; 0.0 for no rows)."""
    cdef double m
    with nogil:
        if X.f32:
            m = _max_sq_norm(&X.v, <float*>NULL)
        else:
            m = _max_sq_norm(&X.v, <double*>NULL)
    return m


# -- what the binary format records about rows: block_stats (the writer), check_block (the reader) --------------
cdef struct RowStats:
    int64_t max_index       # the largest index, -1 without non-zeros
    int64_t bad_norm        # the first row whose squared norm is not finite, -1 if none
    double max_sq           # the largest finite squared norm (0.0 without rows)


cdef inline void _stats_init(RowStats* st) noexcept nogil:
    st.max_index = -1
    st.bad_norm = -1
    st.max_sq = 0.0


cdef void _rows_stats(const RowView* v, int64_t i0, int64_t i1, RowStats* st, value_t* kind) noexcept nogil:
    """Rows i0..i1-1 into st (indices strictly increasing in a row: its largest index is its last; the squared
    norms summed as row_sq_norm sums them, so the writer records exactly the value max_sq_norm gives)."""
    cdef int64_t i, start, stop
    cdef int64_t max_index = st.max_index, bad_norm = st.bad_norm     # locals: no store in the loop to alias
    cdef double s, m = st.max_sq
    for i in range(i0, i1):
        start = v.indptr[i]
        stop = v.indptr[i + 1]
        if stop > start and row_indices(v, i)[stop - 1] > max_index:
            max_index = row_indices(v, i)[stop - 1]
        s = row_sq_norm(v, i, kind)
        if s <= DBL_MAX:
            if s > m:
                m = s
        elif bad_norm < 0:
            bad_norm = i
    st.max_index = max_index
    st.bad_norm = bad_norm
    st.max_sq = m


cdef inline int64_t _find(const double* table, int64_t n, double y) noexcept nogil:
    """Position of y in the ascending table (n >= 1), or -1 (NaN is never found). Branch-free halving: the loop
    runs ceil(log2 n) times whatever y is, so random labels cost no mispredicted branches."""
    cdef const double* b = table
    cdef int64_t half
    while n > 1:
        half = n >> 1
        b = b + half if b[half - 1] < y else b
        n -= half
    if b[0] == y:
        return b - table
    return -1


cdef int64_t _label_stats(const double* y, int64_t n, const double* table, int64_t n_table, int64_t* counts,
                          int64_t* first) noexcept nogil:
    """counts and first rows of the table's labels over y; returns the first row whose label is not in the table
    (-1: none). A table of up to 4 labels (most data: two classes) is counted by comparing each row with all four
    (counts in registers, no branch), then y is rescanned only as far as the first occurrences (and the first bad
    row, if a row matched nothing) go; a longer one is searched row by row."""
    cdef int64_t i, pos, seen = 0, present = 0, bad = -1, total = 0
    cdef int64_t c0 = 0, c1 = 0, c2 = 0, c3 = 0
    cdef double t0, t1, t2, t3, yi
    if n_table == 0:
        return 0 if n > 0 else -1
    if n_table > 4:
        for i in range(n):
            pos = _find(table, n_table, y[i])
            if pos < 0:
                if bad < 0:
                    bad = i
            else:
                counts[pos] += 1
                if first[pos] < 0:
                    first[pos] = i
        return bad
    # NaN pads the table: it matches nothing
    t0 = table[0]
    t1 = table[1] if n_table > 1 else NAN
    t2 = table[2] if n_table > 2 else NAN
    t3 = table[3] if n_table > 3 else NAN
    for i in range(n):
        yi = y[i]
        c0 += t0 == yi
        c1 += t1 == yi
        c2 += t2 == yi
        c3 += t3 == yi
    total = c0 + c1 + c2 + c3
    present = (c0 > 0) + (c1 > 0) + (c2 > 0) + (c3 > 0)
    counts[0] += c0
    if n_table > 1:
        counts[1] += c1
    if n_table > 2:
        counts[2] += c2
    if n_table > 3:
        counts[3] += c3
    for i in range(n):
        if seen == present and (bad >= 0 or total == n):
            break
        yi = y[i]
        pos = 0 if t0 == yi else 1 if t1 == yi else 2 if t2 == yi else 3 if t3 == yi else -1
        if pos < 0:
            if bad < 0:
                bad = i
        elif first[pos] < 0:
            first[pos] = i
            seen += 1
    return bad


cdef int64_t _labels_finite(const double* y, int64_t n) noexcept nogil:
    cdef int64_t i
    for i in range(n):
        if not (-DBL_MAX <= y[i] <= DBL_MAX):
            return i
    return -1


cdef class _Table:
    """The optional (table, counts, first) arguments of block_stats and check_block, checked once."""
    cdef const double* table
    cdef int64_t n                      # -1: no table
    cdef int64_t* counts
    cdef int64_t* first
    cdef const double[::1] _t
    cdef int64_t[::1] _c
    cdef int64_t[::1] _f

    def __init__(self, table, counts, first):
        self.table = self.counts = self.first = NULL
        self.n = -1
        if table is None:
            return
        self._t, self._c, self._f = table, counts, first
        self.n = self._t.shape[0]
        if self._c.shape[0] != self.n or self._f.shape[0] != self.n:
            raise ValueError("counts and first must have one entry per table label")
        if self.n > 0:
            self.table, self.counts, self.first = &self._t[0], &self._c[0], &self._f[0]

    cdef int64_t labels(self, const double* y, int64_t n) noexcept nogil:
        """The first row whose label is bad (not finite without a table, not in it with one), -1 if none."""
        if self.n < 0:
            return _labels_finite(y, n)
        return _label_stats(y, n, self.table, self.n, self.counts, self.first)


def block_stats(Rows X not None, table=None, counts=None, first=None):
    """What the binary format records about rows (the writer's pass; the reader's is check_block): (largest
    index or -1, first row whose label is bad or -1, first row whose squared norm is not finite or -1, the largest
    finite squared norm, as max_sq_norm sums it).

    X must carry its labels and have strictly increasing indices in every row (check_csr): a row's largest index is
    its last. Its bias is not counted. table: None (a label is bad when NaN or infinite), or the label table in
    ascending order (a label is bad when it is not in it: NaN never is), with counts[k] += the rows labelled
    table[k] and first[k] set to the first such row where it is -1. A norm is not finite when a value is NaN or
    infinite, or the sum overflows.
    """
    cdef _Table t = _Table(table, counts, first)
    cdef RowStats st
    cdef int64_t bad_label
    cdef RowView v = X.v
    v.bias = -1.0
    if v.n_rows > 0 and v.y == NULL:
        raise ValueError("block_stats needs a view with labels")
    _stats_init(&st)
    with nogil:
        if X.f32:
            _rows_stats(&v, 0, v.n_rows, &st, <float*>NULL)
        else:
            _rows_stats(&v, 0, v.n_rows, &st, <double*>NULL)
        bad_label = t.labels(v.y, v.n_rows)
    return int(st.max_index), int(bad_label), int(st.bad_norm), st.max_sq


cdef int64_t _bad_weight(const double* w, int64_t n) noexcept nogil:
    """The first i with w[i] not a finite number >= 0 (NaN fails both comparisons), -1 if none."""
    cdef int64_t i
    for i in range(n):
        if not (0.0 <= w[i] <= DBL_MAX):
            return i
    return -1


def bad_weight(const double[::1] w):
    """The first row whose weight (the binary format's weight column, docs/weights.md) is not a finite number >= 0
    (NaN, infinite or negative), -1 if none: what the writer and the reader of a block check. One pass, nogil."""
    cdef int64_t n = w.shape[0], bad = -1
    if n > 0:
        with nogil:
            bad = _bad_weight(&w[0], n)
    return int(bad)


# check_csr status codes
cdef enum:
    _CSR_OK = 0
    _CSR_OFFSETS = 1
    _CSR_RANGE = 2
    _CSR_ORDER = 3

CSR_OK, CSR_OFFSETS, CSR_RANGE, CSR_ORDER = _CSR_OK, _CSR_OFFSETS, _CSR_RANGE, _CSR_ORDER


cdef inline int _check_row(const int32_t* ix, int64_t start, int64_t stop, int64_t n_features) noexcept nogil:
    """The first problem of one row, scanning its entries in order (the slow path of check_csr)."""
    cdef int64_t k
    cdef int32_t prev = -1
    for k in range(start, stop):
        if <uint64_t><uint32_t>ix[k] >= <uint64_t>n_features:   # negative or too large
            return _CSR_RANGE
        if ix[k] <= prev:
            return _CSR_ORDER
        prev = ix[k]
    return _CSR_OK


cdef uint32_t _descents(const int32_t* ix, int64_t k0, int64_t k1) noexcept nogil:
    """How many k in k0..k1-1 have ix[k] <= ix[k-1] (k0 >= 1, k1 - k0 < 2^32; a loop the compiler vectorizes)."""
    cdef uint32_t c = 0
    cdef int64_t k
    for k in range(k0, k1):
        c += ix[k] <= ix[k - 1]
    return c


cdef int _scan_csr(const int64_t* ip, const int32_t* ix, int64_t n, int64_t nnz, int64_t n_features,
                   int64_t* bad_row, const RowView* v, RowStats* st, value_t* kind) noexcept nogil:
    """check_csr's scan (n >= 0, ip[0] == 0, ip[n] == nnz). With st, every group of rows that passes also goes
    through _rows_stats over v (a view of the same arrays) while its offsets and indices are still in cache."""
    cdef int64_t i = 0, j, r, start, stop, k0, boundary
    cdef int status = 0
    cdef bint bad
    cdef uint32_t descents
    while i < n:
        k0 = ip[i]
        j = i
        while j < n:
            start = ip[j]
            stop = ip[j + 1]
            if stop < start or stop > nnz:
                status = _CSR_OFFSETS
                break
            if stop - k0 > 65536 and j > i:
                break
            j += 1
        if status != 0:
            # row j's offsets are bad: a problem in rows i..j-1 (whose offsets are fine) comes first
            for r in range(i, j):
                if _check_row(ix, ip[r], ip[r + 1], n_features) != 0:
                    status = _check_row(ix, ip[r], ip[r + 1], n_features)
                    j = r
                    break
            i = j
            break
        # rows i..j-1: non-zeros k0..ip[j]-1, streamed into cache by the descents loop first
        descents = _descents(ix, max(k0, 1), ip[j]) if ip[j] > k0 else 0
        bad = False
        boundary = 0
        for r in range(i, j):
            start = ip[r]
            stop = ip[r + 1]
            if stop > start:
                bad |= (<uint64_t><uint32_t>ix[start] >= <uint64_t>n_features) | \
                    (<uint64_t><uint32_t>ix[stop - 1] >= <uint64_t>n_features)
                if start > 0:
                    boundary += ix[start] <= ix[start - 1]
        if bad or descents != boundary:
            for r in range(i, j):
                status = _check_row(ix, ip[r], ip[r + 1], n_features)
                if status != 0:
                    i = r
                    break
            break
        if st != NULL:
            _rows_stats(v, i, j, st, kind)
        i = j
    bad_row[0] = i if status else -1
    return status


def check_csr(const int64_t[::1] indptr, const int32_t[::1] indices, int64_t n_features):
    """(status, row): CSR_OK, or the first problem and the row it is in.

    Fast path, for valid data, over groups of rows spanning about 64K non-zeros (so the group stays in L2):
    offsets checked row by row; indices strictly increasing within every row exactly when the descents
    (ix[k] <= ix[k-1]) over the group's span all sit at the starts of its non-empty rows, counted by one
    vectorized loop; strictly increasing rows lie in [0, n_features) when their first and last index do.
    A group that fails (or a row with bad offsets) has its rows scanned again in order, to name the first problem.
    """
    cdef int64_t n = indptr.shape[0] - 1, nnz = indices.shape[0], row
    cdef int status
    if n < 0 or indptr[0] != 0 or indptr[n] != nnz:
        return _CSR_OFFSETS, 0
    with nogil:
        status = _scan_csr(&indptr[0], &indices[0] if nnz > 0 else NULL, n, nnz, n_features, &row, NULL, NULL,
                           <double*>NULL)
    return status, row


def check_block(const int64_t[::1] indptr, const int32_t[::1] indices, values, const double[::1] y,
                int64_t n_features, table=None, counts=None, first=None):
    """check_csr and block_stats over one block of the binary format, in check_csr's pass (the reader's check of
    a block it reads for the first time): (status, row, largest index, first bad label row, first bad norm row,
    largest squared norm), the last four as block_stats gives them when status is CSR_OK. values: float32 or
    float64; y: one label per row; table, counts, first: as for block_stats."""
    cdef _Table t = _Table(table, counts, first)
    cdef int64_t n = indptr.shape[0] - 1, nnz = indices.shape[0], row, bad_label = -1
    cdef int status
    cdef RowStats st
    cdef RowView v
    cdef const float[::1] v32
    cdef const double[::1] v64
    cdef bint f32 = np.asarray(values).dtype == np.float32
    if n < 0 or indptr[0] != 0 or indptr[n] != nnz:
        return _CSR_OFFSETS, 0, -1, -1, -1, 0.0
    if y.shape[0] != n:
        raise ValueError("y must have one label per row")
    if f32:
        v32 = values
        if v32.shape[0] != nnz:
            raise ValueError("indices and values differ in length")
        v = make_view(indptr, indices, v32, &y[0] if n > 0 else NULL, n_features, -1.0)
    else:
        v64 = values
        if v64.shape[0] != nnz:
            raise ValueError("indices and values differ in length")
        v = make_view(indptr, indices, v64, &y[0] if n > 0 else NULL, n_features, -1.0)
    _stats_init(&st)
    with nogil:
        if f32:
            status = _scan_csr(v.indptr, v.indices, n, nnz, n_features, &row, &v, &st, <float*>NULL)
        else:
            status = _scan_csr(v.indptr, v.indices, n, nnz, n_features, &row, &v, &st, <double*>NULL)
        if status == 0:
            bad_label = t.labels(v.y, n)
    return status, row, int(st.max_index), int(bad_label), int(st.bad_norm), st.max_sq


cdef void _take_rows(const RowView* v, const int64_t* rows, int64_t n, const int64_t* ip, int32_t* ix,
                     value_t* vx) noexcept nogil:
    cdef int64_t i, r, k, start, length
    cdef const int32_t* src_ix
    cdef const value_t* src_x
    for i in range(n):
        r = rows[i]
        start = v.indptr[r]
        length = v.indptr[r + 1] - start
        src_ix = row_indices(v, r) + start
        src_x = row_values(v, r, vx) + start
        for k in range(length):
            ix[ip[i] + k] = src_ix[k]
            vx[ip[i] + k] = src_x[k]


def take_rows(Rows X not None, const int64_t[::1] rows):
    """(indptr, indices, values) of the given rows, in the given order (a compacted copy; rows in range)."""
    cdef int64_t n = rows.shape[0], i, r, total = 0
    cdef const int64_t* src_ip = X.v.indptr
    new_indptr = np.empty(n + 1, dtype=np.int64)
    cdef int64_t[::1] ip = new_indptr
    with nogil:
        ip[0] = 0
        for i in range(n):
            r = rows[i]
            total += src_ip[r + 1] - src_ip[r]
            ip[i + 1] = total
    new_indices = np.empty(total, dtype=np.int32)
    new_values = np.empty(total, dtype=X.dtype)
    cdef int32_t[::1] ix = new_indices
    cdef float[::1] v32
    cdef double[::1] v64
    if total == 0:
        return new_indptr, new_indices, new_values
    if X.f32:
        v32 = new_values
        with nogil:
            _take_rows(&X.v, &rows[0], n, &ip[0], &ix[0], &v32[0])
    else:
        v64 = new_values
        with nogil:
            _take_rows(&X.v, &rows[0], n, &ip[0], &ix[0], &v64[0])
    return new_indptr, new_indices, new_values


def compact_rows(int64_t[::1] indptr, int32_t[::1] indices, value_t[::1] values, const int64_t[::1] keep):
    """Keep the given rows (strictly increasing row numbers) in place, moving them to the front.

    Afterwards indptr[0:len(keep)+1], indices[0:nnz] and values[0:nnz] hold the kept rows; returns nnz.
    Rows only move towards the front, so no row is overwritten before it is moved.
    """
    cdef int64_t n = keep.shape[0], i, r, k, start, length, pos = 0
    with nogil:
        for i in range(n):
            r = keep[i]
            start = indptr[r]
            length = indptr[r + 1] - start
            if start != pos:
                for k in range(length):
                    indices[pos + k] = indices[start + k]
                    values[pos + k] = values[start + k]
            indptr[i] = pos
            pos += length
        indptr[n] = pos
    return pos
