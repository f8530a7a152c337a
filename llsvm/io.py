"""Reading and writing datasets: one entry point that sniffs the magic bytes (text, compressed text, binary)."""
import math
import os
import re

import numpy as np

from ._ext._rowops import max_sq_norm
from .binfmt import DEFAULT_BLOCK_BYTES, BinaryDataset, write_binary as _write_binary
from .dataset import CSRDataset, RowError
from .errors import DataFormatError, LLSVMError, ParameterError, quote
from .fileutil import atomic_output
from .sources import STDIN, TextSource, display_name, sniff_path
from .textio import DEFAULT_CHUNK, DEFAULT_MAX_LINE, TextStream, line_of_row, read_text, write_text


def file_kind(path):
    """'binary', 'text', 'gzip', 'bzip2', 'xz', or 'stdin' (stdin is sniffed only when read)."""
    return sniff_path(path)


def open_dataset(path, *, zero_based=False, float32=False, stream=False, chunk_size=DEFAULT_CHUNK,
                 progress=None, max_line=DEFAULT_MAX_LINE, class_labels=False, threads=1):
    """A Dataset for `path` (a path or '-'), text or binary as its first bytes say.

    Binary files give a BinaryDataset (random access by loading, or streaming). Text gives an in-memory
    CSRDataset, or with ``stream=True`` a TextStream that parses block by block in bounded memory. Text lines may
    hold at most `max_line` bytes; `class_labels`: text labels must be class labels, within the int64 range
    (llsvm.textio). `threads` > 1: text is parsed on two threads (the same rows, the same errors).
    """
    if os.fspath(path) != STDIN and sniff_path(path) == "binary":
        return BinaryDataset(path)
    if stream:
        return TextStream(path, zero_based=zero_based, float32=float32, chunk_size=chunk_size, max_line=max_line,
                          class_labels=class_labels, threads=threads)
    src = TextSource(path)
    try:
        if src.kind == "binary":
            raise DataFormatError(display_name(path), 0, 0,
                                  "binary llsvm data cannot be read from standard input: give its path")
        return read_text(path, zero_based=zero_based, float32=float32, chunk_size=chunk_size, progress=progress,
                         source=src, max_line=max_line, class_labels=class_labels, threads=threads)
    finally:
        src.close()


def read_dataset(path, *, zero_based=False, float32=False, chunk_size=DEFAULT_CHUNK, progress=None,
                 max_line=DEFAULT_MAX_LINE, class_labels=False, threads=1):
    """The whole dataset in memory as a CSRDataset (text parsed, binary loaded and verified).

    A binary file keeps its stored value dtype unless float32=True asks for float32. `max_line`, `class_labels` and
    `threads` as in open_dataset.
    """
    ds = open_dataset(path, zero_based=zero_based, float32=float32, chunk_size=chunk_size, progress=progress,
                      max_line=max_line, class_labels=class_labels, threads=threads)
    if isinstance(ds, BinaryDataset):
        view = ds.load()
        if float32 and view.dtype != np.float32:
            view = view.contiguous()
            view = CSRDataset(view.y, view.indptr, view.indices, view.values.astype(np.float32), view.n_features,
                              row_ids=view.row_ids, n_qid=ds.n_qid, source=view.source, check=False,
                              weights=view.weights)
        return view
    return ds


def iter_blocks(path, *, max_rows=None, max_bytes=None, zero_based=False, float32=False, max_line=DEFAULT_MAX_LINE):
    """Stream a dataset's rows block by block (CSRDataset blocks, each with `first_row`)."""
    ds = open_dataset(path, zero_based=zero_based, float32=float32, stream=True, max_line=max_line)
    try:
        yield from ds.iter_blocks(max_rows=max_rows, max_bytes=max_bytes)
    finally:
        if isinstance(ds, BinaryDataset):
            ds.close()


def _as_dataset(data, zero_based=False, float32=False):
    if isinstance(data, (str, os.PathLike)):
        return open_dataset(data, zero_based=zero_based, float32=float32, stream=True), True
    return data, False


BINARY_NOTE = " (the binary format records each row's squared norm)"
# a precomputed kernel's row refused in a binary file: the file keeps LIBSVM's index 0 only when converted 0-based
PRECOMPUTED_BINARY = (" (a binary file holds a precomputed kernel's rows, 0:sample_serial_number at index 0, when "
                      "made from LIBSVM's text by `llsvm-convert --zero-based`: convert the text with --zero-based)")


def row_error_at_line(path, exc, zero_based=False, note=BINARY_NOTE):
    """A row of the LIBSVM text at `path` refused after reading (dataset.RowError: the binary writer's, the
    trainers'), as an error that names the row's line and the column of its largest value (the text is scanned
    again to find them; standard input cannot be: its row number then); an error at one pair of the row (RowError's
    `pair`) as the parser's DataFormatError at that pair's column."""
    name = display_name(path)
    found = None
    try:
        if os.fspath(path) != STDIN and sniff_path(path) != "binary":
            found = line_of_row(path, exc.row, zero_based=zero_based)
    except (LLSVMError, OSError):        # the file changed since it was read: its row number then
        found = None
    if found is None:
        if getattr(exc, "pair", None) is not None and os.fspath(path) != STDIN and sniff_path(path) == "binary":
            note = PRECOMPUTED_BINARY
        return ParameterError(f"{name}: row {exc.row + 1}: {exc.detail}{note}")
    line, text = found
    if getattr(exc, "pair", None) is not None:
        # an error at one pair of the row (a precomputed kernel's rows): its index or value, or the line's end
        body = text.split(b"#", 1)[0].rstrip()
        pairs = list(_PAIR.finditer(body))
        col = len(body) + 1 if exc.pair >= len(pairs) else pairs[exc.pair].start(2 if exc.on_value else 1) + 1
        return DataFormatError(name, line, col, exc.detail)
    col, big = None, -1.0
    for m in _PAIR.finditer(text.split(b"#", 1)[0]):
        try:
            v = abs(float(m.group(2)))
        except ValueError:
            continue
        if v > big:
            col, big = m.start(2) + 1, v
    where = f"line {line}" + (f", column {col}" if col is not None else "")
    return ParameterError(f"{name}: {where}: {exc.detail}{note}")


# an index:value pair of a text line (not qid:N), up to a comment; the value's column is the match's start(2) + 1
_PAIR = re.compile(rb"(?<=[ \t\v\f\r])(\d+):(\S+)")


def write_binary(data, out_path, *, float32=None, block_rows=None, block_bytes=DEFAULT_BLOCK_BYTES,
                 zero_based=False):
    """Write a dataset, or convert the file at a path, to a binary file (streaming, atomic). A row of text the
    binary format cannot hold is refused at its line (row_error_at_line)."""
    ds, opened = _as_dataset(data, zero_based=zero_based, float32=bool(float32))
    try:
        return _write_binary(ds, out_path, float32=float32, block_rows=block_rows, block_bytes=block_bytes)
    except RowError as exc:
        if not opened or isinstance(ds, BinaryDataset):
            raise
        raise row_error_at_line(data, exc, zero_based) from None
    finally:
        if opened and isinstance(ds, BinaryDataset):
            ds.close()


def dump_text(data, out_path, *, zero_based=False):
    """Write a dataset (or the file at a path) as LIBSVM text with %.17g numbers; '-' writes to stdout."""
    ds, opened = _as_dataset(data)
    try:
        with atomic_output(out_path, "wb") as f:
            write_text(ds, f, zero_based=zero_based)
    finally:
        if opened and isinstance(ds, BinaryDataset):
            ds.close()
    return out_path


def to_csr(data):
    """(X, y): a scipy.sparse.csr_matrix and the label vector of a dataset or of the file at a path."""
    ds = read_dataset(data) if isinstance(data, (str, os.PathLike)) else data.as_view()
    return ds.to_csr(), ds.y


def describe(path, zero_based=False, reporter=None):
    """A dict describing a text or binary dataset (text is parsed streaming, in bounded memory)."""
    kind = sniff_path(path)
    if kind == "binary":
        with BinaryDataset(path) as ds:
            info = dict(format=f"llsvm binary v{ds.version}", rows=ds.n_rows, features=ds.n_features, nnz=ds.nnz,
                        dtype=ds.dtype.name, blocks=ds.n_blocks, row_ids=ds.has_row_ids, qid=ds.n_qid,
                        max_sq_norm=ds.max_sq_norm, labels=ds.labels, label_counts=ds.label_counts,
                        file_bytes=ds.file_size, weights=ds.has_weights)
            try:
                ds.verify()
                info["checksum"] = f"ok ({ds.n_blocks} blocks verified)"
            except LLSVMError as exc:
                if getattr(exc, "field", None):
                    raise       # a header or footer field the blocks contradict: nothing above can be shown
                info["checksum"] = f"FAILED: {exc}"
                info["checksum_error"] = exc
            return info
    ds = open_dataset(path, zero_based=zero_based, stream=True)
    src_kind = kind if kind != "stdin" else "text"
    max_sq = 0.0
    bar = reporter.bar(desc="reading") if reporter is not None else None
    for block in ds.iter_blocks(progress=bar):
        max_sq = max(max_sq, max_sq_norm(block.row_view()))
    if bar is not None:
        bar.close()
    fmt = "LIBSVM text" + ("" if src_kind in ("text", "stdin") else f" ({src_kind})")
    return dict(format=fmt, rows=ds.n_rows, features=ds.n_features, nnz=ds.nnz, dtype="float64 (text)",
                blocks=None, row_ids=False, qid=ds.n_qid, max_sq_norm=max_sq, labels=ds.labels,
                label_counts=ds.label_counts, checksum="none (text has no checksum)")


def read_weights(path, n_rows):
    """The row weights of -W weight_file (LIBLINEAR's and LIBSVM's weights extensions; docs/weights.md): one number a
    line (surrounding blanks allowed), a line per training row, each finite and >= 0. A number that is not one, a
    negative or non-finite one, a missing or an extra line: DataFormatError at its file, line and column. n_rows
    None: rows not counted yet (streamed text), as many weights as lines; the reader of the rows checks the count
    when it knows it (weights_count)."""
    name = display_name(path)
    with open(path, "rb") as f:
        data = f.read()
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()                      # the file's last newline ends the last line
    w = None if b"_" in data else _weights_at_once(lines, n_rows)
    if w is None:                        # a line NumPy did not take: each line read alone, the bad one named
        w = _weights_by_line(name, path, lines, n_rows)
    if n_rows is not None and len(lines) < n_rows:
        raise weights_count(path, len(lines), n_rows)
    if (n_rows or n_rows is None and w.size) and not (w > 0).any():
        raise DataFormatError(name, 0, 0, "every weight is zero: no row to train on")
    return w


def _weights_at_once(lines, n_rows):
    """-W's lines parsed by NumPy in one call (no Python per row; blanks around a number allowed, as float() allows
    them), or None when a line is not a finite number >= 0 or there are more lines than rows: _weights_by_line
    then finds the line and names it."""
    if n_rows is not None and len(lines) > n_rows:
        return None
    if lines and max(map(len, lines)) > 64:
        return None          # NumPy's array of the lines is as wide as the widest line, times the lines: read alone
    try:
        w = np.array(lines, dtype=np.bytes_).astype(np.float64) if lines else np.empty(0, np.float64)
    except (ValueError, UnicodeDecodeError):
        return None
    return w if np.all(np.isfinite(w) & (w >= 0)) else None


def _weights_by_line(name, path, lines, n_rows):
    """-W's lines read one by one: the first line that is not a finite number >= 0, or is beyond the last row, is
    refused at its line and column."""
    w = np.empty(len(lines) if n_rows is None else min(len(lines), n_rows), np.float64)
    for k, raw in enumerate(lines):
        if n_rows is not None and k >= n_rows:
            raise weights_count(path, len(lines), n_rows)
        text = raw.rstrip(b"\r").strip(b" \t")
        col = len(raw) - len(raw.lstrip(b" \t")) + 1
        try:
            value = float(text.decode("ascii")) if text and b"_" not in text else None
        except (UnicodeDecodeError, ValueError):
            value = None
        if value is None:
            raise DataFormatError(name, k + 1, col, f"weight {quote(text)} is not a number" if text else
                                  "empty line: expected the row's weight (a number >= 0)")
        if not math.isfinite(value) or value < 0:
            raise DataFormatError(name, k + 1, col, f"weight {quote(text)} must be a finite number >= 0")
        w[k] = value
    return w


def weights_for(path, ds, n_rows=None):
    """-W's weights (read_weights) for the rows of ds, of n_rows rows (None: not known yet, streamed text; else
    ds.n_rows when ds has it). Rows that carry their weights already (a binary file of version 2) are refused: one
    source of weights per run, never one replacing the other silently."""
    if getattr(ds, "weights", None) is not None or getattr(ds, "has_weights", False):
        raise ParameterError(f"-W {path}: the training file {getattr(ds, 'source', None) or ''} carries its rows' "
                             "weights already (an llsvm binary file of version 2): train it without -W, or give -W "
                             "with a file that has no weights")
    return read_weights(path, n_rows)


def weighted_blocks(blocks, weights, path, n_rows=None, whole=True):
    """The blocks (CSRDatasets with first_row, in order) with their rows' weights from -W's `weights` (read from
    `path`): shallow copies sharing the blocks' arrays and the weights. A row beyond the file's lines is refused at
    its line, and so, once the blocks of a `whole` pass are all read, are lines beyond the last row (weights_count;
    n_rows: the rows when known up front, None for streamed text)."""
    import copy
    rows = 0
    for block in blocks:
        first = int(block.first_row)
        rows = first + block.n_rows
        if rows > weights.shape[0]:
            raise weights_count(path, weights.shape[0], n_rows)
        out = copy.copy(block)
        out.weights = weights[first:rows]
        out._rows = None                  # its row view is made again, with the weights
        del block
        yield out
        del out
    if whole and rows != weights.shape[0]:
        raise weights_count(path, weights.shape[0], rows)


def weights_count(path, n_weights, n_rows):
    """The DataFormatError of a -W file of n_weights lines for n_rows training rows (n_rows None: more rows than
    lines, the rest not counted: streamed text), at the first line beyond the last row or after the last line."""
    name = display_name(path)
    rows = "more" if n_rows is None else str(n_rows)
    if n_rows is not None and n_weights > n_rows:
        return DataFormatError(name, n_rows + 1, 1, f"{n_weights} weights for {rows} training rows: one weight a "
                                                    "line, a line per row (this line is beyond the last row)")
    return DataFormatError(name, n_weights + 1, 1, f"{n_weights} weights for {rows} training rows: one weight a line, "
                                                   "a line per row (missing from here on)")
