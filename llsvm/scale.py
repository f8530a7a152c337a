"""llsvm-scale's work: LIBSVM's svm-scale (3.37) over LIBSVM text or an llsvm binary file, in two passes that
stream the file (bounded memory), its text output byte for byte svm-scale's.

Pass 1 reads every row: each feature's range [min, max] over all rows (a row without the feature counts as 0),
the labels' range, the largest index. Then, as svm-scale does between its passes: with a range file (-r), the
file's bounds and ranges replace these (a feature the range file does not have, whose range in the data is not a
single value, is scaled to 0 with svm-scale's warning; the range file's features beyond the data's are written
too); with -s, the range file is written (atomically). Pass 2 reads the rows again and writes them scaled
(cext/_scale.pyx): text as svm-scale prints it, or binary rows with the unrounded values. A feature whose range is
a single value (min == max) is left out, as svm-scale leaves it out. Standard input is spooled to a temporary file
first (read twice, never held in memory).
"""
import os
import sys
import tempfile

import numpy as np

from ._ext._scale import Scaling, column_stats, parse_range_table, range_lines, zero_texts
from .errors import DataFormatError, ParameterError
from .fileutil import discard_temporary, temporary_file

TEXT_BUFFER = 8 << 20           # bytes of text formatted per kernel call (a larger row grows it)
SPOOL_READ = 1 << 20
MAX_INDEX = 2 ** 31 - 1        # the largest feature index (LIBSVM's int; the text parser's too)


class Bounds:
    """What scales: x onto [lower, upper]; with y_scaling the labels from [y_min, y_max] onto [y_lower, y_upper]."""

    def __init__(self, lower=-1.0, upper=1.0, y=None):
        self.lower, self.upper = float(lower), float(upper)
        self.y_scaling = y is not None
        self.y_lower, self.y_upper = (float(y[0]), float(y[1])) if y is not None else (0.0, 0.0)


class Ranges:
    """The features' ranges: fmin, fmax indexed by the 1-based feature (0 unused), length max_index + 1; the labels'
    range; the rows read and their stored non-zeros (svm-scale's #nonzeros)."""

    def __init__(self, fmin, fmax, y_min, y_max, n_rows, nnz):
        self.fmin, self.fmax = fmin, fmax
        self.y_min, self.y_max = y_min, y_max
        self.n_rows, self.nnz = n_rows, nnz

    @property
    def max_index(self):
        return self.fmin.shape[0] - 1


def _grow(a, n, fill):
    if a.shape[0] >= n:
        return a
    out = np.full(max(n, 2 * a.shape[0]), fill, dtype=a.dtype)
    out[:a.shape[0]] = a
    return out


def _columns(blocks):
    """One pass of the column kernel over the blocks (CSRDatasets): each feature's (0-based) smallest and largest
    stored value and their count (inf, -inf, 0 for a feature no row holds), the rows, the stored non-zeros, and the
    labels' extremes."""
    lo = np.full(1024, np.inf)
    hi = np.full(1024, -np.inf)
    count = np.zeros(1024, dtype=np.int64)
    width = n_rows = nnz = 0
    y_min, y_max = np.inf, -np.inf
    for block in blocks:
        if block.n_rows == 0:
            continue
        n_rows += block.n_rows
        nnz += block.indices.shape[0]
        y_min = min(y_min, float(block.y.min()))
        y_max = max(y_max, float(block.y.max()))
        if block.indices.shape[0]:
            top = int(block.indices.max()) + 1
            width = max(width, top)
            lo, hi, count = _grow(lo, top, np.inf), _grow(hi, top, -np.inf), _grow(count, top, 0)
            column_stats(block.indptr, block.indices, block.values, lo, hi, count)
    return lo[:width], hi[:width], count[:width], n_rows, nnz, y_min, y_max


def data_ranges(blocks):
    """Pass 1 over the blocks (CSRDatasets): the features' ranges as svm-scale's pass 2 finds them (Ranges)."""
    lo, hi, count, n_rows, nnz, y_min, y_max = _columns(blocks)
    partial = count < n_rows                       # some row lacks the feature: a 0 in its range
    lo = np.where(partial, np.minimum(lo, 0.0), lo)
    hi = np.where(partial, np.maximum(hi, 0.0), hi)
    fmin = np.concatenate(([0.0], lo))
    fmax = np.concatenate(([0.0], hi))
    return Ranges(fmin, fmax, y_min, y_max, n_rows, nnz)


class RangeFile:
    """svm-scale's range file: optionally "y" / y_lower y_upper / y_min y_max, then "x" / lower upper / lines
    "index min max" (indices increasing)."""

    def __init__(self, y=None, x=None, index=None, fmin=None, fmax=None):
        self.y = y              # (y_lower, y_upper, y_min, y_max) or None
        self.x = x              # (lower, upper) or None (no x section: the data's own ranges, as svm-scale)
        self.index = np.zeros(0, np.int64) if index is None else index
        self.fmin = np.zeros(0) if fmin is None else fmin
        self.fmax = np.zeros(0) if fmax is None else fmax

    @property
    def max_index(self):
        return int(self.index[-1]) if self.index.shape[0] else 0


def _numbers(name, lineno, line, count, what):
    """`count` finite numbers on one line of a range file, refused at their line and column otherwise."""
    tokens = line.split()
    if len(tokens) != count:
        raise DataFormatError(name, lineno, 1, f"expected {what} ({count} numbers), found {len(tokens)} "
                                               f"token{'s' if len(tokens) != 1 else ''}")
    out = []
    col = 0
    for tok in tokens:
        col = line.index(tok, col) + 1
        try:
            value = float(tok)
        except ValueError:
            value = None
        if value is None or not np.isfinite(value):
            from .errors import quote
            raise DataFormatError(name, lineno, col, f"{what}: {quote(tok)} is not a finite number")
        out.append(value)
        col += len(tok) - 1
    return out


def read_range(path):
    """The range file at `path` (RangeFile); a malformed one raises DataFormatError at its line and column. The
    feature lines are parsed by NumPy at once; only a file NumPy refuses is read line by line to name the line."""
    name = os.fspath(path)
    with open(path, "rb") as f:
        data = f.read()
    try:
        text = data.decode("ascii")
    except UnicodeDecodeError:
        text = data.decode("latin-1")
    lines = text.split("\n", 5)         # the sections' first lines, then the feature lines in one piece
    k = 0
    rf = RangeFile()

    def head(expect):
        return k < len(lines) and lines[k].strip() == expect

    if head("y"):
        y_bounds = _numbers(name, k + 2, lines[k + 1] if k + 1 < len(lines) else "", 2, "y_lower y_upper")
        y_range = _numbers(name, k + 3, lines[k + 2] if k + 2 < len(lines) else "", 2, "y_min y_max")
        rf.y = (*y_bounds, *y_range)
        k += 3
    if head("x"):
        rf.x = tuple(_numbers(name, k + 2, lines[k + 1] if k + 1 < len(lines) else "", 2, "lower upper"))
        k += 2
        body = "\n".join(lines[k:]).rstrip()
        first = k + 1               # the line number of the body's first line
        table = _table_at_once(body)
        if table is None:
            table = _table_by_line(name, body.split("\n"), first)
        rf.index, rf.fmin, rf.fmax = table
        if rf.index.shape[0]:
            bad = np.flatnonzero(np.diff(rf.index) <= 0)
            if rf.index[0] < 1 or bad.shape[0] or rf.index[-1] > MAX_INDEX:
                at = 0 if rf.index[0] < 1 else int(bad[0]) + 1 if bad.shape[0] else rf.index.shape[0] - 1
                what = ("a feature index must be a positive integer" if rf.index[at] < 1 else
                        f"feature index {rf.index[at]} is beyond the int32 range (largest allowed {MAX_INDEX})"
                        if rf.index[at] > MAX_INDEX else
                        f"feature indices must increase (index {rf.index[at]} after {rf.index[at - 1]})")
                raise DataFormatError(name, first + at, 1, what)
    elif k < len(lines) and lines[k].strip():
        raise DataFormatError(name, k + 1, 1, "expected 'x' (or 'y') to start a section of svm-scale's range file")
    return rf


def _table_at_once(body):
    """(index, min, max) of the feature lines (the text `body`), or None when a line is not "integer number number"
    of finite numbers (then _table_by_line names it): the kernel's one pass (a range file has a line per feature, a
    million for some sets)."""
    table = parse_range_table(body.encode("latin-1") + b"\0")
    return None if isinstance(table, int) else table


def _table_by_line(name, body, first):
    from .errors import quote
    index = np.empty(len(body), np.int64)
    fmin = np.empty(len(body))
    fmax = np.empty(len(body))
    for n, line in enumerate(body):
        tokens = line.split()
        if len(tokens) != 3:
            raise DataFormatError(name, first + n, 1, f"expected a feature's line 'index min max', found "
                                                      f"{len(tokens)} token{'s' if len(tokens) != 1 else ''}")
        try:
            index[n] = int(tokens[0])
        except ValueError:
            raise DataFormatError(name, first + n, line.index(tokens[0]) + 1,
                                  f"feature index {quote(tokens[0])} is not an integer") from None
        vals = _numbers(name, first + n, line, 3, "index min max")
        fmin[n], fmax[n] = vals[1], vals[2]
    return index, fmin, fmax


def restore(ranges, rf, bounds, data_name, range_name):
    """svm-scale's pass 2.5 with -r: the range file's bounds and ranges over the data's (in place); returns the
    warnings (features of the data the range file does not have)."""
    warnings = []
    if rf.y is not None:
        bounds.y_scaling = True
        bounds.y_lower, bounds.y_upper, ranges.y_min, ranges.y_max = rf.y
    if rf.x is None:
        return warnings
    bounds.lower, bounds.upper = rf.x
    n = ranges.max_index
    listed = np.zeros(n + 1, dtype=bool)
    listed[rf.index] = True
    unseen = np.flatnonzero(~listed & (ranges.fmin != ranges.fmax))
    unseen = unseen[unseen >= 1]
    if unseen.shape[0]:
        warnings = [f"WARNING: feature index {i} appeared in file {data_name} was not seen in the scaling factor "
                    f"file {range_name}. The feature is scaled to 0.\n" for i in unseen.tolist()]
        ranges.fmin[unseen] = 0.0
        ranges.fmax[unseen] = 0.0
    ranges.fmin[rf.index] = rf.fmin
    ranges.fmax[rf.index] = rf.fmax
    return warnings


def widen(ranges, max_index):
    """The ranges of features up to max_index (beyond the data's: every row has 0 there, a range of 0 to 0)."""
    extra = max_index - ranges.max_index
    if extra > 0:
        ranges.fmin = np.concatenate((ranges.fmin, np.zeros(extra)))
        ranges.fmax = np.concatenate((ranges.fmax, np.zeros(extra)))


def range_text(ranges, bounds):
    """svm-scale's range file (-s) as bytes."""
    out = []
    if bounds.y_scaling:
        out.append("y\n%.17g %.17g\n%.17g %.17g\n" % (bounds.y_lower, bounds.y_upper, ranges.y_min, ranges.y_max))
    out.append("x\n%.17g %.17g\n" % (bounds.lower, bounds.upper))
    return "".join(out).encode("ascii") + range_lines(ranges.fmin, ranges.fmax)


def scaling(ranges, bounds):
    """The kernel's Scaling of the run (cext/_scale.pyx)."""
    zval, ztext, zoff, zcnt = zero_texts(ranges.fmin, ranges.fmax, bounds.lower, bounds.upper)
    return Scaling(bounds.lower, bounds.upper, bounds.y_scaling, bounds.y_lower, bounds.y_upper, ranges.y_min,
                   ranges.y_max, ranges.fmin, ranges.fmax, ztext, zoff, zcnt, zval)


def scale_to_text(blocks, sc, write, threads=1):
    """Pass 2, text: every block's rows scaled and formatted (on `threads` threads, at most 2), handed to write() in
    pieces of up to TEXT_BUFFER bytes (memoryviews of a buffer reused after write returns). Returns the non-zeros
    written."""
    buf = np.empty(TEXT_BUFFER, dtype=np.uint8)
    nnz = 0
    for block in blocks:
        r = 0
        while r < block.n_rows:
            done, first, second, nz = sc.text(block.y, block.indptr, block.indices, block.values, r, buf, threads)
            if done == 0:               # one row larger than the buffer
                buf = np.empty(sc.row_bound(int(block.indptr[r + 1] - block.indptr[r])), dtype=np.uint8)
                continue
            view = memoryview(buf)
            write(view[:first])
            if second:
                half = buf.shape[0] // 2
                write(view[half:half + second])
            nnz += nz
            r += done
        del block
    return nnz


def scale_to_csr(blocks, sc, n_features):
    """Pass 2, binary: every block's rows scaled, as CSRDatasets (row ids and weights kept)."""
    from .dataset import CSRDataset
    for block in blocks:
        y, indptr, indices, values = sc.csr(block.y, block.indptr, block.indices, block.values)
        yield CSRDataset(y, indptr, indices, values, n_features, row_ids=block.row_ids, weights=block.weights,
                         check=False)
        del block


def spool_stdin(directory=None):
    """Standard input copied to a new temporary file (recorded: removed on any exit), read in pieces of
    SPOOL_READ bytes: its path. The caller discards it (fileutil.discard_temporary)."""
    fd, path = temporary_file(directory or tempfile.gettempdir(), "llsvm-scale-stdin-")
    try:
        with os.fdopen(fd, "wb") as out:
            src = sys.stdin.buffer
            while True:
                piece = src.read1(SPOOL_READ) if hasattr(src, "read1") else src.read(SPOOL_READ)
                if not piece:
                    break
                out.write(piece)
    except BaseException:
        discard_temporary(path)
        raise
    return path


def check_bounds(lower, upper, y):
    """svm-scale's check of -l, -u and -y."""
    for flag, value in (("-l", lower), ("-u", upper)) + ((("-y", y[0]), ("-y", y[1])) if y else ()):
        if not np.isfinite(value):
            raise ParameterError(f"{flag} {value}: must be a finite number")
    if not upper > lower or (y is not None and not y[1] > y[0]):
        raise ParameterError("inconsistent lower/upper specification")


def nonzeros_warning(before, after):
    """svm-scale's warning when scaling made the data denser."""
    if after <= before:
        return ""
    return (f"WARNING: original #nonzeros {before}\n"
            f"       > new      #nonzeros {after}\n"
            "If feature values are non-negative and sparse, use -l 0 rather than the default -l -1\n")


# -- llsvm-train's advice ------------------------------------------------------------------------------------------
# LIBSVM's guide and LIBLINEAR's FAQ: scale each feature to [-1, 1] or [0, 1] before training. llsvm-train says so
# once when a kernel (-t 1, 2, 3) or out-of-core run reads data whose features are far from that: some |value|
# beyond SCALE_BOUND (an RBF kernel with gamma = 1/num_features then sees distances of many widths: pendigits'
# values reach 100), or features whose largest |value|s differ by more than SCALE_RATIO (the small ones count for
# nothing in a distance or an inner product).
SCALE_BOUND = 5.0
SCALE_RATIO = 1e3


def column_max_abs(blocks):
    """The largest |value| of each feature (0-based; 0 for a feature no row holds) over the blocks' rows."""
    lo, hi, count = _columns(blocks)[:3]
    return np.where(count > 0, np.maximum(np.abs(lo), np.abs(hi)), 0.0)


def first_block(path):
    """The first block of rows of the text or binary file at `path` (a list of one CSRDataset, empty for no rows)."""
    from .binfmt import BinaryDataset
    from .io import open_dataset
    ds = open_dataset(path, stream=True)
    blocks = ds.iter_blocks()
    try:
        return [next(blocks)]
    except StopIteration:
        return []
    finally:
        blocks.close()
        if isinstance(ds, BinaryDataset):
            ds.close()


def range_advice(blocks, sample=False):
    """The note llsvm-train prints when the rows' features call for scaling (see SCALE_BOUND), else ""; `sample`:
    the blocks are the file's first rows only (an out-of-core run), and the note says so."""
    top = column_max_abs(blocks)
    nonzero = np.flatnonzero(top > 0)
    if not nonzero.shape[0]:
        return ""
    big = int(nonzero[np.argmax(top[nonzero])])
    small = int(nonzero[np.argmin(top[nonzero])])
    ratio = top[big] / top[small]
    reasons = []
    if top[big] > SCALE_BOUND:
        reasons.append(f"values reach {top[big]:g} in magnitude (feature {big + 1})")
    if ratio > SCALE_RATIO:
        reasons.append(f"the features' largest |values| differ by a factor of {ratio:.3g} (feature {big + 1}: "
                       f"{top[big]:g}, feature {small + 1}: {top[small]:g})")
    if not reasons:
        return ""
    where = " in the first rows" if sample else ""
    return (f"Note: {' and '.join(reasons)}{where}: scaling the features to [-1, 1] (or [0, 1] for sparse "
            "non-negative data) may help, as LIBSVM's and LIBLINEAR's guides advise: llsvm-scale -l -1 -u 1 -s range "
            "train > train.scale, then llsvm-scale -r range test > test.scale\n")


def scaling_note(params, path, ds, quiet=False):
    """llsvm-train's note (range_advice), once: for a kernel run of LIBSVM's types with -t 1, 2 or 3, or an
    out-of-core run, on its loaded rows `ds` (-v, --grid), or when it streams (ds None) on the first block of its
    file (a path: standard input cannot be read twice); "" for other runs and with -q (nothing is read then)."""
    from .options import LIBSVM_TYPES, OUT_OF_CORE
    name = params.spec.name
    kernel = name in LIBSVM_TYPES and getattr(params.options, "kernel_type", None) in (1, 2, 3)
    if quiet or not (kernel or (name in OUT_OF_CORE and (ds is not None or path != "-"))):
        return ""
    return range_advice(ds.iter_blocks()) if ds is not None else range_advice(first_block(path), sample=True)
