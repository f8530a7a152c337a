"""LIBSVM text input: chunked, single-pass reading around the Cython scanner (cext/_libsvm.pyx).

The source is read in chunks of `chunk_size` bytes; each chunk is cut after its last newline and handed to the
scanner, the remainder moves to the front of the buffer. A line longer than the buffer grows it (doubling, in
place), up to the line limit `max_line`: a line with more bytes than that before its newline is refused with its
line number, before the buffer grows past the limit (the scanner applies the same rule to lines inside a chunk).
After a long line the buffer shrinks back to the chunk size. So any source works (stdin, pipes, compressed
streams), memory is bounded by the chunk (or the limit) when streaming, and the in-memory reader writes straight
into the final arrays (no second copy of the data). A regular, uncompressed file is not copied at all: its chunks
are parsed in place through a memory map (TextSource.mapped, _Scanner._mapped_chunks), the same chunks of whole
lines, the same errors, with the next chunk read ahead from the disk and the parsed pages dropped from the
process's resident memory.

`threads=2` parses each chunk in two parts at once (cext/_libsvm.pyx, parse_split): the same arrays and the same
errors as one thread. A stream's chunks (TextStream, take_each) recycle the memory of the arrays their user has
dropped (MemoryPool), so most of a stream's pages are written without being zeroed first.

`class_labels=True` (training a classifier) also refuses a label whose integer part does not fit int64 (llsvm's
class labels are 64-bit integers; LIBLINEAR's C int overflows beyond 2^31), at its line and column.
"""
import mmap
import re

import numpy as np

from ._ext import _mapguard
from ._ext._libsvm import (CSRBuilder, MemoryPool, format_text, last_newline, parse_split, split_point,
                          ST_AFTER_LABEL, ST_COLON, ST_INDEX, ST_INDEX_ORDER, ST_INDEX_RANGE, ST_INDEX_ZERO, ST_LABEL, ST_LABEL_NONFINITE, ST_LABEL_RANGE,
                          ST_LINE_LONG, ST_OK, ST_QID, ST_VALUE, ST_VALUE_FLOAT32, ST_VALUE_NONFINITE)
from .dataset import CSRDataset, Dataset, label_table
from .errors import QUOTE_LIMIT, DataFormatError, quote
from .report import size_bar
from .sources import TextSource

DEFAULT_CHUNK = 16 << 20

# the longest text line read (bytes before its newline): the default, and the floor of the limit under a memory
# budget (line_limit)
DEFAULT_MAX_LINE = 256 << 20
MIN_MAX_LINE = 1 << 20

INT32_MAX = 2147483647
INT64_MAX = 2 ** 63 - 1
# threads > 1 split a chunk only from this size: below it, the second thread's start and the scratch arrays cost
# more than half the chunk's parse (a9a, 2.3 MB: 0.017 CPU seconds on two threads against 0.010 on one)
SPLIT_MIN = 4 << 20
_BLANKS = b" \t\r\n\v\f"
_NEWLINE = re.compile(b"\n")


def line_limit(memory=None):
    """The line limit under a memory budget in bytes (llsvm-train --memory): a quarter of the budget, at least
    MIN_MAX_LINE (1 MiB) and at most DEFAULT_MAX_LINE (256 MiB); DEFAULT_MAX_LINE without a budget."""
    if memory is None:
        return DEFAULT_MAX_LINE
    return int(min(DEFAULT_MAX_LINE, max(MIN_MAX_LINE, int(memory) // 4)))


def _size(n):
    for unit, name in ((1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")):
        if n >= unit:
            return f"{n / unit:.4g} {name}"
    return f"{n} bytes"


def line_too_long(name, line, max_line):
    """The error of a line with more than max_line bytes before its newline (column 1)."""
    size = _size(max_line)
    exact = "" if size == f"{max_line} bytes" else f" ({max_line} bytes)"
    return DataFormatError(name, line, 1, f"line is longer than the limit of {size}{exact}")


def _token(buf, offset, end, stops=_BLANKS):
    """The token at buf[offset:], up to a blank or one of `stops`, quoted (llsvm.errors.quote: at most QUOTE_LIMIT
    bytes, then '...'; only one byte more is read)."""
    stop = offset
    limit = min(end, offset + QUOTE_LIMIT + 1)
    while stop < limit and buf[stop] not in stops:
        stop += 1
    return quote(bytes(buf[offset:stop]))


def _error(name, status, builder, buf, end, zero_based, max_line=DEFAULT_MAX_LINE):
    """The DataFormatError of a scanner status; offending tokens are quoted (llsvm.errors.quote): the value alone
    for value errors (the column is the value's), the index alone for index errors."""
    line, col, offset, a, b = builder.error
    # a line over the limit is refused as such, whatever else is wrong in it (as when it outgrows the buffer): is
    # there a newline within max_line bytes of its start? (the search reads buf in place)
    stop = min(end, offset - (col - 1) + max_line + 1)
    if status == ST_LINE_LONG or (stop < end and _NEWLINE.search(buf, offset, stop) is None):
        return line_too_long(name, line, max_line)
    tok = _token(buf, offset, end)
    if status == ST_LABEL:
        msg = f"label is not a number (found {tok})"
    elif status == ST_LABEL_NONFINITE:
        msg = f"label is NaN or infinite (found {tok})"
    elif status == ST_LABEL_RANGE:
        msg = (f"class label is beyond the int64 range (found {tok}; a class label must be less than 2^63 = "
               f"{INT64_MAX + 1} in magnitude)")
    elif status == ST_AFTER_LABEL:
        msg = f"missing label: the line starts with {tok}"
    elif status == ST_COLON:
        msg = f"expected index:value, missing ':' (found {tok})"
    elif status == ST_INDEX:
        msg = (f"index is not a {'non-negative' if zero_based else 'positive'} integer "
               f"(found {_token(buf, offset, end, _BLANKS + b':')})")
    elif status == ST_INDEX_ZERO:
        msg = "index 0 in 1-based data (indices start at 1; use --zero-based for 0-based files)"
    elif status == ST_INDEX_ORDER:
        msg = (f"index {a} repeated" if a == b else f"indices must be strictly increasing (index {a} after {b})")
    elif status == ST_INDEX_RANGE:
        # the index as written (digits only: the scanner stops counting digits past int32)
        a = _token(buf, offset, end, _BLANKS + b":")[1:-1]
        msg = f"index {a} is beyond the int32 range (largest allowed {INT32_MAX - (1 if zero_based else 0)})"
    elif status in (ST_VALUE, ST_VALUE_NONFINITE, ST_VALUE_FLOAT32) and tok == "''":
        msg = "value is missing after ':'"
    elif status == ST_VALUE:
        msg = f"value is not a number (found {tok})"
    elif status == ST_VALUE_NONFINITE:
        msg = f"value is NaN or infinite (found {tok})"
    elif status == ST_VALUE_FLOAT32:
        msg = f"value is beyond the float32 range (found {tok}; read without float32)"
    elif status == ST_QID:
        msg = f"qid must be a non-negative integer (found {tok})"
    else:  # pragma: no cover - every status is listed above
        msg = f"malformed input (status {status})"
    return DataFormatError(name, line, col, msg)


class _Scanner:
    """Drives a CSRBuilder over a TextSource chunk by chunk; `take_each` hands out one CSR per chunk."""

    def __init__(self, source, builder, chunk_size=DEFAULT_CHUNK, zero_based=False, progress=None, threads=1):
        self.source = source
        self.builder = builder
        # threads > 1: each chunk is parsed in two parts at once (parse_split; the same arrays and errors)
        self.scratch = (builder.empty_like(), builder.empty_like()) if threads > 1 else None
        self.chunk_size = max(int(chunk_size), 2)
        self.zero_based = zero_based
        self.progress = progress
        self.bytes_read = 0
        self.max_line = builder.max_line

    def run(self, take_each, with_text=False):
        """Yield the CSR arrays of each chunk (take_each) or of the whole input; with_text (and take_each):
        (arrays, the line before the chunk, a copy of the chunk's text) for each chunk."""
        pool = None
        if take_each:       # each chunk's arrays, once dropped, hold the next chunk's (MemoryPool)
            pool = MemoryPool()
            self.builder.use_pool(pool)
        try:
            yield from self._chunks(take_each, with_text)
        finally:
            if pool is not None:
                self.builder.use_pool(None)
                pool.close()

    def _parse(self, buf, end):
        """Parse the whole lines buf[0:end] (on two threads with a scratch pair); a malformed line raises."""
        cut = -1 if self.scratch is None or end < SPLIT_MIN else split_point(buf, end)
        if cut > 0:
            status = parse_split(self.builder, *self.scratch, buf, cut, end)
        else:
            status = self.builder.parse(buf, end)
        if status != ST_OK:
            raise _error(self.source.name, status, self.builder, buf, end, self.zero_based, self.max_line)

    def _chunks(self, take_each, with_text):
        mm = self.source.mapped()
        if mm is not None:
            yield from self._mapped_chunks(mm, take_each, with_text)
            return
        yield from self._read_chunks(take_each, with_text)

    def _mapped_chunks(self, mm, take_each, with_text):
        """_read_chunks for a regular file read through a memory map: each chunk (whole lines, about chunk_size
        bytes) is parsed in place in the page cache, without a copy into a buffer; only a last line without its
        newline is copied (with one). A line longer than the chunk makes its chunk longer, up to the line limit.
        The next two chunks are asked of the disk (MADV_WILLNEED) before this one is parsed: a file not in the
        page cache is read while the parser works.
        Pages already parsed leave this process's resident memory as it goes (MADV_DONTNEED: the page cache
        keeps them), so a stream's memory stays bounded by its chunk."""
        size = len(mm)
        arr = np.frombuffer(mm, dtype=np.uint8)
        # a file that shrinks while it is read (truncated, rewritten in place) faults past its new end: the guard
        # reads zeros there instead of dying of SIGBUS, and the file is reported as changed (cext/_mapguard.pyx)
        slot = _mapguard.guard(arr.ctypes.data, size)
        try:
            yield from self._mapped_loop(mm, arr, size, slot, take_each, with_text)
        except Exception:           # a malformed line, or a chunk cut short, in the zeros: the file changed?
            self._check_unchanged(mm, size, slot)
            raise
        finally:
            _mapguard.release(slot)
            del arr
            try:
                mm.close()
            except BufferError:      # a view still held (an error's traceback): the map goes with it
                pass
        if not take_each:
            yield self.builder.take()

    def _check_unchanged(self, mm, size, slot):
        """Raise the error of a mapped file that shrank while it was read (a fault past its new end, or a size
        below the one it had when it was opened)."""
        try:
            now = mm.size()
        except (OSError, ValueError):
            now = None
        if _mapguard.hit(slot) or (now is not None and now < size):
            was = "" if now is None else f" (from {size} to {now} bytes)"
            raise DataFormatError(self.source.name, 0, 0, f"the file shrank while it was read{was}") from None

    def _mapped_loop(self, mm, arr, size, slot, take_each, with_text):
        src = self.source
        page = mmap.PAGESIZE
        drop = hasattr(mm, "madvise") and hasattr(mmap, "MADV_DONTNEED")
        ahead = hasattr(mm, "madvise") and hasattr(mmap, "MADV_WILLNEED")
        if self.progress is not None:
            size_bar(self.progress, size, "B")
        pos = dropped = 0
        while pos < size:
            stop = min(size, pos + self.chunk_size)
            nl = -1 if stop == size else last_newline(arr[pos:stop], stop - pos)
            if nl >= 0:
                end = pos + nl + 1
            else:   # the last chunk, or a line longer than the chunk: up to its newline, within the line limit
                found = mm.rfind(b"\n", pos, size) if stop == size else \
                    mm.find(b"\n", stop, min(size, pos + self.max_line + 1))
                if found >= 0:
                    end = found + 1
                elif size - pos > self.max_line:
                    raise line_too_long(src.name, self.builder.line + 1, self.max_line)
                else:
                    end = size
            if ahead and end < size:    # the next chunks are read from the disk (if they must) while this one
                start = end & ~(page - 1)   # is parsed: two of them (measured: faster cold than one)
                mm.madvise(mmap.MADV_WILLNEED, start, min(size, end + 2 * self.chunk_size) - start)
            if end == size and arr[size - 1] != 10:      # a last line without its newline: copied, with one
                buf = np.empty(size - pos + 1, np.uint8)
                buf[:-1] = arr[pos:size]
                buf[-1] = 10
                yield from self._mapped_piece(buf, mm, size, slot, take_each, with_text)
            else:
                yield from self._mapped_piece(arr[pos:end], mm, size, slot, take_each, with_text)
            pos = end
            self.bytes_read = pos
            if drop and pos - dropped >= self.chunk_size:
                upto = pos & ~(page - 1)
                mm.madvise(mmap.MADV_DONTNEED, dropped, upto - dropped)
                dropped = upto
        self._check_unchanged(mm, size, slot)

    def _mapped_piece(self, view, mm, size, slot, take_each, with_text):
        """Parse whole lines `view` (a chunk of the map, or the copied last line); progress; the chunk's arrays,
        unless the file shrank under them."""
        line0 = self.builder.line
        self._parse(view, view.shape[0])
        if _mapguard.hit(slot):
            self._check_unchanged(mm, size, slot)
        if self.progress is not None:
            self.progress.update(view.shape[0])
        if take_each:
            yield (self.builder.take(), line0, bytes(view)) if with_text else self.builder.take()

    def _read_chunks(self, take_each, with_text):
        src = self.source
        if self.progress is not None and src.raw_position() is not None:
            # the file's bytes (compressed: the compressed bytes read), as the bar counts them
            size_bar(self.progress, src.total_bytes, "B")
        chunk = cap = self.chunk_size
        buf = np.empty(cap + 1, dtype=np.uint8)   # +1: room for a final newline
        filled = 0
        last_pos = 0
        while True:
            got = src.readinto(memoryview(buf)[filled:cap])
            self.bytes_read += got
            filled += got
            eof = got == 0
            if eof:
                if filled == 0:
                    break
                if buf[filled - 1] != 10:    # missing final newline
                    buf[filled] = 10
                    filled += 1
                end = filled
            else:
                nl = last_newline(buf, filled)
                if nl < 0:
                    if filled == cap:       # one line fills the buffer: grow it, up to the line limit
                        if cap > self.max_line:
                            raise line_too_long(src.name, self.builder.line + 1, self.max_line)
                        cap = min(2 * cap, self.max_line + 1)
                        # realloc (large blocks move by mremap): the line is not copied, no second buffer is held;
                        # no view of buf outlives a statement, so refcheck is not needed
                        buf.resize(cap + 1, refcheck=False)
                    continue
                end = nl + 1
            line0 = self.builder.line
            self._parse(buf, end)
            if self.progress is not None:
                pos = src.raw_position()
                pos = self.bytes_read if pos is None else pos
                self.progress.update(pos - last_pos)
                last_pos = pos
            if take_each:
                yield (self.builder.take(), line0, bytes(buf[:end])) if with_text else self.builder.take()
            rest = filled - end
            if rest:
                buf[:rest] = buf[end:filled]
            filled = rest
            if cap > chunk and rest < chunk:     # after a long line: back to the chunk size
                cap = chunk
                buf.resize(cap + 1, refcheck=False)
            if eof:
                break
        if not take_each:
            yield self.builder.take()

    def check_not_empty(self, n_rows):
        if n_rows == 0:
            raise DataFormatError(self.source.name, self.builder.line + 1, 1, "empty input: no data rows")


def read_text(path, *, zero_based=False, float32=False, chunk_size=DEFAULT_CHUNK, progress=None, source=None,
              max_line=DEFAULT_MAX_LINE, class_labels=False, threads=1):
    """Parse a LIBSVM text file ('-' for stdin, gzip/bzip2/xz by magic bytes) into an in-memory CSRDataset.

    A line with more than `max_line` bytes before its newline is refused; with `class_labels`, a label whose integer
    part is beyond the int range too (module docstring). `threads` > 1 parses each chunk in two parts at once (the
    same arrays, the same errors)."""
    own = source is None
    src = TextSource(path) if own else source
    try:
        builder = CSRBuilder(float32=float32, zero_based=zero_based, class_labels=class_labels, max_line=max_line)
        scanner = _Scanner(src, builder, chunk_size, zero_based, progress, threads)
        (y, indptr, indices, values), = scanner.run(take_each=False)
        scanner.check_not_empty(y.shape[0])
        n_features = builder.max_index + 1
        ds = CSRDataset(y, indptr, indices, values, n_features, n_qid=builder.n_qid, source=src.name, check=False)
        ds.zero_based = zero_based      # how its lines read again (io.row_error_at_line names a refused row's line)
        return ds
    finally:
        if own:
            src.close()


_SKIPPED = re.compile(rb"[ \t\r\v\f]*(#|$)")


def line_of_row(path, row, *, zero_based=False, chunk_size=DEFAULT_CHUNK, max_line=DEFAULT_MAX_LINE):
    """(line number, text) of data row `row` (0-based) of a LIBSVM text file, for a message that names the line of
    a row refused after reading (blank and comment lines are not rows): the file is scanned again by the chunked
    scanner, and only the chunk holding the row is split into lines. None for standard input (it cannot be read
    twice) or a row the file does not have."""
    if path == "-":
        return None
    with TextSource(path) as src:
        builder = CSRBuilder(zero_based=zero_based, max_line=max_line)
        seen = 0
        for (y, _, _, _), line0, text in _Scanner(src, builder, chunk_size, zero_based).run(True, with_text=True):
            if seen + y.shape[0] <= row:
                seen += y.shape[0]
                continue
            k = row - seen
            for n, line in enumerate(text.split(b"\n")):
                if _SKIPPED.match(line):
                    continue
                if k == 0:
                    return line0 + n + 1, line
                k -= 1
            return None
    return None


class TextStream(Dataset):
    """LIBSVM text read block by block in bounded memory (streaming only: as_view() refuses).

    n_rows, n_features, nnz and the label table are known once a full pass has been made (None before).
    Blocks are as the parser's chunks fall (about chunk_size bytes of text each), re-cut to max_rows/max_bytes.
    `max_line`, `class_labels` and `threads` as in read_text.
    """

    def __init__(self, path, *, zero_based=False, float32=False, chunk_size=DEFAULT_CHUNK, max_line=DEFAULT_MAX_LINE,
                 class_labels=False, threads=1):
        self.path = path
        self.zero_based = zero_based
        self.float32 = float32
        self.chunk_size = chunk_size
        self.max_line = max_line
        self.class_labels = class_labels
        self.threads = threads
        self.source = "<stdin>" if path == "-" else str(path)
        self.n_rows = self.n_features = self.nnz = None
        self.n_qid = 0
        self.labels = self.label_counts = None
        self._passes = 0

    def iter_blocks(self, max_rows=None, max_bytes=None, progress=None):
        if self.path == "-" and self._passes:
            raise DataFormatError("<stdin>", 0, 0, "standard input can be read only once")
        self._passes += 1
        src = TextSource(self.path)
        try:
            if src.kind == "binary":
                raise DataFormatError(src.name, 0, 0, "this is a binary llsvm file, not LIBSVM text")
            builder = CSRBuilder(float32=self.float32, zero_based=self.zero_based, class_labels=self.class_labels,
                                 max_line=self.max_line)
            scanner = _Scanner(src, builder, self.chunk_size, self.zero_based, progress, self.threads)
            n_rows = nnz = 0
            table = {}
            continuous = False
            for y, indptr, indices, values in scanner.run(take_each=True):
                if y.shape[0] == 0:
                    continue
                if not continuous:
                    labs, cnts = label_table(y)
                    if labs is None:
                        continuous = True
                    else:
                        for lab, cnt in zip(labs.tolist(), cnts.tolist()):
                            table[lab] = table.get(lab, 0) + cnt
                chunk = CSRDataset(y, indptr, indices, values, None, source=src.name, check=False)
                base = n_rows
                n_rows += chunk.n_rows
                nnz += chunk.nnz
                for block in chunk.iter_blocks(max_rows, max_bytes):
                    block.first_row = base
                    base += block.n_rows
                    block.n_features = builder.max_index + 1
                    yield block
            scanner.check_not_empty(n_rows)
            self.n_rows, self.nnz = n_rows, nnz
            self.n_features = builder.max_index + 1
            self.n_qid = builder.n_qid
            if not continuous and len(table) <= 65536:
                self.labels = np.array(list(table.keys()), dtype=np.float64)
                self.label_counts = np.array(list(table.values()), dtype=np.int64)
        finally:
            src.close()


def write_text(dataset, out, *, zero_based=False, rows_per_write=65536):
    """Write a dataset's rows to the binary file object `out` as LIBSVM text (%.17g, re-parses identically)."""
    for block in dataset.iter_blocks():
        for a in range(0, block.n_rows, rows_per_write):
            b = min(block.n_rows, a + rows_per_write)
            out.write(format_text(block.y, block.indptr, block.indices, block.values, a, b, zero_based))
