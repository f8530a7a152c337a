"""The llsvm binary data format, versions 1 and 2 (docs/formats.md, section 2). Little-endian, memory-mappable.

    file   := header(128) block* footer
    header := magic "LLSVMBIN" | u32 version (1, or 2 with flag 32) | u32 flags | u64 n_rows | u64 n_features | u64 nnz
              | u64 n_blocks | u64 footer_offset | u64 footer_size | f64 max_sq_norm | u64 n_qid | u64 n_labels
              | zero padding | u32 CRC32 of bytes 0..123 (at offset 124)
    flags  := 1 values are float32 (else float64) | 2 rows carry int64 original row ids
              | 4 continuous labels (more than 65536 distinct: no label table)
              | 8 rows carry a float64 dual variable alpha (the active-set files of -s llsvm)
              | 16 declared width: n_features was given by the writer's caller and exceeds the largest index + 1
                (without it, n_features is exactly the largest index + 1, 0 without non-zeros)
              | 32 rows carry a float64 weight, each finite and >= 0 (docs/weights.md): version 2 exactly when set,
                so a file without weights is version 1, byte for byte what version 1 writers wrote
    block  := block header(48): magic "LLSVMBLK" | u64 n_rows | u64 nnz | u64 first_row | u64 payload_size
              | u32 CRC32 of the payload | u32 0
              payload: f64 labels[n] | f64 weights[n] if flag 32 | i64 offsets[n+1] (from 0) | i32 indices[nnz]
              (0-based, strictly increasing per row) | f32/f64 values[nnz] | i64 row_ids[n] if flag 2 | f64 alpha[n] if flag 8;
              every array starts on an 8-byte boundary (zero padding)
    footer := magic "LLSVMFTR" | f64 labels[n_labels] (first-occurrence order) | u64 counts[n_labels]
              | (u64 offset, u64 n_rows, u64 nnz) per block | u32 CRC32 of all before it in the footer | u32 0

The writer streams: blocks go out as rows arrive, the footer (label table, block index) at the end, and the
header is rewritten last, all in a temporary file renamed into place, so counts need not be known in advance and
an interrupted conversion leaves nothing behind. The header sits at the front (one read tells everything) and the
label table in the footer (its size is known only at the end).

Readers check, before allocating anything, that every size in the header, footer and block index agrees with the
file's size and that the header and footer fields are consistent among themselves; they verify each block's
CRC32 and structure whenever they read it, and the first time they read a block, its contents against what the
header and footer say about them (labels in the label table, row norms up to max_sq_norm); once every block has
been read, the whole file's (n_features, max_sq_norm, label counts and order, the continuous-labels flag). A bad
file raises DataFormatError naming the block or the field (docs/formats.md, section 2, "Readers").
"""
import math
import mmap
import os
import struct
import sys
import threading

import numpy as np

from ._ext._rowops import CSR_OFFSETS, CSR_ORDER, CSR_RANGE, bad_weight, block_stats, check_block, check_csr
from .dataset import MAX_LABELS, CSRDataset, Dataset, RowError, block_rows_for, label_table, norm_overflow
from .errors import DataFormatError, ParameterError
from .fileutil import commit_output, discard_temporary, joined, release_replaced, rename_temporary, temp_beside


def crc32(data, value=0):
    """CRC-32 of `data` continuing `value`: ISA-L's (the same polynomial and values as zlib's, only faster, ~34 GB/s
    here against ~6.5), imported on the first checksum, so that a command that reads only text never loads it
    (start-up, issue 26); zlib's when isal is missing."""
    global crc32
    try:
        from isal.isal_zlib import crc32 as fast
    except ImportError:                                 # pragma: no cover - isal is a dependency
        from zlib import crc32 as fast
    crc32 = fast
    return fast(data, value)

MAGIC = b"LLSVMBIN"
BLOCK_MAGIC = b"LLSVMBLK"
FOOTER_MAGIC = b"LLSVMFTR"
VERSION = 1                    # a file without row weights
VERSION_WEIGHTS = 2            # a file with them (flag 32)
HEADER_SIZE = 128
BLOCK_HEADER_SIZE = 48
FLAG_FLOAT32 = 1
FLAG_ROW_IDS = 2
FLAG_CONTINUOUS = 4
FLAG_ALPHA = 8
FLAG_WIDTH = 16
FLAG_WEIGHTS = 32
KNOWN_FLAGS = FLAG_FLOAT32 | FLAG_ROW_IDS | FLAG_CONTINUOUS | FLAG_ALPHA | FLAG_WIDTH | FLAG_WEIGHTS
DEFAULT_BLOCK_BYTES = 8 << 20
WRITE_ALIGN = 2 << 20          # the writer's writes end on multiples of this (the x86-64 huge page size)

_HEADER = struct.Struct("<8sIIQQQQQQdQQ")     # 88 bytes, padded to 124, then the CRC
_BLOCK = struct.Struct("<8sQQQQII")           # 48 bytes


_CSR_PROBLEMS = {CSR_OFFSETS: "row offsets out of order or out of bounds",
                 CSR_RANGE: "a feature index is out of range",
                 CSR_ORDER: "indices not strictly increasing within a row"}


def _pad8(n):
    return (n + 7) & ~7


def _thread_pool(threads):
    """A ThreadPoolExecutor of `threads` workers (concurrent.futures, and the logging it brings, imported only when
    a pool is needed: start-up, issue 26)."""
    from concurrent.futures import ThreadPoolExecutor
    return ThreadPoolExecutor(max_workers=threads)


def payload_layout(n_rows, nnz, float32, row_ids, alpha=False, weights=False):
    """Byte offsets of (labels, offsets, indices, values, row_ids, end) inside a block payload; alpha, when
    present, sits between the row ids (if any) and the end; the weights, when present, right after the labels
    (at byte 8 n_rows)."""
    vsize = 4 if float32 else 8
    o_y = 0
    o_ptr = o_y + 8 * n_rows + (8 * n_rows if weights else 0)
    o_idx = o_ptr + 8 * (n_rows + 1)
    o_val = o_idx + _pad8(4 * nnz)
    o_ids = o_val + _pad8(vsize * nnz)
    end = o_ids + (8 * n_rows if row_ids else 0) + (8 * n_rows if alpha else 0)
    return o_y, o_ptr, o_idx, o_val, o_ids, end


def _owned_copy(ds):
    """A copy of a piece the writer keeps for its next block (marked, so it is copied once)."""
    c = ds.take_rows(np.arange(ds.n_rows, dtype=np.int64))
    c._owned = True
    return c


def _writev_all(fd, buffers):
    """Write every buffer, in order, with as few writev calls as the kernel allows."""
    views = [memoryview(b).cast("B") for b in buffers]
    views = [v for v in views if v.nbytes]
    while views:
        done = os.writev(fd, views[:1024])
        while views and done >= views[0].nbytes:
            done -= views[0].nbytes
            views.pop(0)
        if views and done:
            views[0] = views[0][done:]


WRITEBACK_BYTES = 32 << 20    # a durable file's written bytes are sent to the disk in steps of this (_start_writeback)
_sync_file_range = None


def _start_writeback(fd, offset, length):
    """Start writing bytes offset..offset+length of fd to the disk, without waiting (Linux's sync_file_range with
    SYNC_FILE_RANGE_WRITE), so that the closing fsync, which still gives the guarantee, finds little left to write
    and the disk works while the writer goes on. A no-op where the call is missing or fails (the fsync does it all
    then)."""
    global _sync_file_range
    if _sync_file_range is None:
        try:
            import ctypes
            f = ctypes.CDLL(None, use_errno=True).sync_file_range
            f.argtypes = [ctypes.c_int, ctypes.c_int64, ctypes.c_int64, ctypes.c_uint]
            f.restype = ctypes.c_int
            _sync_file_range = f
        except (ImportError, OSError, AttributeError):
            _sync_file_range = False
    if _sync_file_range:
        _sync_file_range(fd, offset, length, 2)      # SYNC_FILE_RANGE_WRITE


def footer_size(n_labels, n_blocks):
    return 8 + 16 * n_labels + 24 * n_blocks + 8


def _same_norm(a, b):
    """Whether two largest squared row norms agree, up to rounding (the writer and the reader sum each row in the
    same order, so they agree exactly; the slack only spares files if that order ever changes)."""
    return abs(a - b) <= 1e-9 * max(a, b)


class BinaryWriter:
    """Streams CSR rows into a binary file: ``write(...)`` any number of times, then ``close()``.

    Blocks hold at most `block_rows` rows (if given) and about `block_bytes` payload bytes. Writes end on multiples
    of `write_align` (a power of two; see _emit), so up to that many bytes wait in memory. Use as a context
    manager: an exception discards the temporary file and leaves the target untouched. `output`: the file is a
    command's output, whose rename is the command's point of no return (fileutil.commit_output); temporary files
    of the solvers are not. `weights`: every row carries its weight (the rows written give them: CSRDataset.weights),
    a version 2 file; without, a version 1 file.
    """

    def __init__(self, path, *, float32=False, row_ids=False, block_rows=None, block_bytes=DEFAULT_BLOCK_BYTES,
                 alpha=False, fsync=True, write_align=WRITE_ALIGN, output=False, scratch=None, weights=False,
                 hold_owned=False):
        self.path = os.fspath(path)
        # hold_owned: the bytes of owned rows (write_dataset(owned=True)) that wait for the next aligned write are
        # held, not copied; their whole arrays then stay in memory until that write (llsvm-convert: a text chunk
        # more). Off for the out-of-core solvers, whose writers count against --memory.
        self.hold_owned = bool(hold_owned)
        self.scratch = scratch       # a solver's fileutil.ScratchFiles: its spare is written over, path's old file kept
        self.output = bool(output)
        self.fsync = bool(fsync)     # temporary files (active sets) need not reach the disk
        if write_align < 1 or write_align & (write_align - 1):
            raise ValueError("write_align must be a power of two")
        self.write_align = int(write_align)
        self.float32 = bool(float32)
        self.row_ids = bool(row_ids)
        self.alpha = bool(alpha)
        self.weights = bool(weights)
        self.block_rows = None if block_rows is None else max(1, int(block_rows))
        self.block_bytes = None if block_rows is not None and block_bytes == DEFAULT_BLOCK_BYTES else block_bytes
        self.vdtype = np.float32 if self.float32 else np.float64
        spare = scratch.take() if scratch is not None else None
        if spare is not None:       # written over from its start, cut to length by close()
            fd, self._tmp = os.open(spare, os.O_WRONLY | getattr(os, "O_CLOEXEC", 0)), spare
        else:
            fd, self._tmp = temp_beside(self.path)
        self._reused = spare is not None
        # a command's output: the file it replaces leaves the page cache while this one is written
        self._release = release_replaced(self.path) if self.output else None
        try:
            self._f = os.fdopen(fd, "wb")
            self._f.write(b"\0" * HEADER_SIZE)
        except BaseException:
            discard_temporary(self._tmp)
            raise
        self._pos = HEADER_SIZE
        self._written = HEADER_SIZE   # bytes handed to the file so far (_emit keeps the rest)
        self._synced = 0              # bytes whose writeback to the disk has been started (_start_writeback)
        self._out = []
        self._out_bytes = 0
        self._pending = []            # CSRDataset pieces of the block being filled
        self._pending_rows = 0
        self._pending_bytes = 0
        self._index = []              # (offset, n_rows, nnz)
        self.n_rows = 0
        self.nnz = 0
        self.n_features = 0
        self._width = 0               # the largest index + 1 of the rows written (n_features may be declared wider)
        self.max_sq_norm = 0.0
        self.n_qid = 0
        self._labels = {}
        self._continuous = False
        self._closed = False

    # -- input ------------------------------------------------------------------------------------------------
    def write(self, y, indptr, indices, values, row_ids=None, n_features=None):
        """Append rows given as CSR arrays (indptr from 0). Indices must be 0-based and strictly increasing."""
        ds = CSRDataset(y, indptr, indices, values, n_features, row_ids=row_ids, check=True)
        status, row = check_csr(ds.indptr, ds.indices, ds.n_features if n_features is not None else 2 ** 31 - 1)
        if status:
            raise ParameterError(f"row {row + 1}: " + _CSR_PROBLEMS[status])
        self.write_dataset(ds)

    def write_dataset(self, ds, owned=False):
        """Append every row of a dataset (any Dataset: in memory, binary or a text stream). `owned`: the caller
        gives the rows' arrays up (nothing changes them afterwards), so rows held back for the next block are
        not copied."""
        if self.row_ids and getattr(ds, "row_ids", 0) is None and isinstance(ds, CSRDataset):
            raise ValueError("this file carries row ids: give row_ids for every row")
        for block in ds.iter_blocks():
            self._add(block, owned)
        if ds.n_features is not None:
            self.n_features = max(self.n_features, int(ds.n_features))
        self.n_qid += int(getattr(ds, "n_qid", 0) or 0)

    def _add(self, ds, owned=False):
        if ds.n_rows == 0:
            return
        if ds.values.dtype != self.vdtype:
            values = ds.values.astype(self.vdtype)
            if self.float32 and not np.isfinite(values).all():
                raise ParameterError("a value is beyond the float32 range: write float64 values")
            ds = CSRDataset(ds.y, ds.indptr, ds.indices, values, ds.n_features, row_ids=ds.row_ids, check=False,
                            alpha=ds.alpha, weights=ds.weights)
        if self.row_ids and ds.row_ids is None:
            raise ValueError("this file carries row ids: give row_ids for every row")
        if self.alpha and ds.alpha is None:
            raise ValueError("this file carries alpha: give alpha for every row")
        if self.weights != (ds.weights is not None):
            raise ValueError("this file carries row weights: give weights for every row" if self.weights else
                             "rows with weights: open the writer with weights=True to keep them")
        # what the header records about the rows, in one pass: the reader checks the file against it
        max_index, bad_label, bad_norm, sq = block_stats(ds.row_view())
        row0 = self.n_rows + self._pending_rows
        # rows are numbered from 1 in messages (row0 + k + 1), as in the trainers'
        bad_w = bad_weight(ds.weights) if self.weights else -1
        if bad_w >= 0:
            raise ParameterError(f"row {row0 + bad_w + 1}: the weight {float(ds.weights[bad_w])!r} is not a finite "
                                 "number >= 0")
        if bad_label >= 0:
            raise ParameterError(f"row {row0 + bad_label + 1}: the label {float(ds.y[bad_label])!r} is not a finite "
                                 "number")
        if bad_norm >= 0:
            a, b = int(ds.indptr[bad_norm]), int(ds.indptr[bad_norm + 1])
            raise RowError(row0 + bad_norm, norm_overflow(ds.indices[a:b], ds.values[a:b]))
        if ds.n_features is not None:
            self.n_features = max(self.n_features, int(ds.n_features))
        self._width = max(self._width, max_index + 1)
        self.n_features = max(self.n_features, self._width)
        # labels and norms, per piece
        if not self._continuous:
            labs, cnts = label_table(ds.y)
            if labs is None:
                self._continuous = True
            else:
                for lab, cnt in zip(labs.tolist(), cnts.tolist()):
                    self._labels[lab] = self._labels.get(lab, 0) + cnt
                if len(self._labels) > MAX_LABELS:
                    self._continuous = True
        self.max_sq_norm = max(self.max_sq_norm, sq)
        # cut into blocks
        row_overhead = 16 + (8 if self.row_ids else 0) + (8 if self.alpha else 0) + (8 if self.weights else 0)
        vsize = 4 if self.float32 else 8
        start = 0
        n = ds.n_rows
        while start < n:
            room_rows = None if self.block_rows is None else self.block_rows - self._pending_rows
            room_bytes = None if self.block_bytes is None else max(self.block_bytes - self._pending_bytes, 1)
            # the rows that can fit the room (each costs at least row_overhead bytes): the cut looks at those
            # only, so writing n rows in blocks is O(n), not O(n x blocks)
            end = n if room_bytes is None else min(n, start + room_bytes // row_overhead + 1)
            if room_rows is not None:
                end = min(end, start + room_rows)
            bounds = block_rows_for(ds.indptr[start:end + 1] - ds.indptr[start], room_rows, room_bytes, vsize,
                                    row_overhead, first=True)
            stop = start + bounds[1]
            if self._pending_rows and self.block_bytes is not None:
                # a non-empty block takes a row only if it fits
                used = row_overhead * (stop - start) + (4 + vsize) * int(ds.indptr[stop] - ds.indptr[start])
                if used > room_bytes:
                    self._flush()
                    continue
            piece = ds.slice(start, stop)
            piece._owned = owned
            self._pending.append(piece)
            self._pending_rows += piece.n_rows
            self._pending_bytes += row_overhead * piece.n_rows + (4 + vsize) * piece.nnz
            start = stop
            if (self.block_rows is not None and self._pending_rows >= self.block_rows) or \
               (self.block_bytes is not None and self._pending_bytes >= self.block_bytes):
                self._flush()
        # rows kept for the next block must not change when the caller reuses its arrays: copy them (at most
        # one block's worth per call), unless the caller gave them up
        self._pending = [p if getattr(p, "_owned", False) else _owned_copy(p) for p in self._pending]

    # -- output -----------------------------------------------------------------------------------------------
    def _flush(self):
        if not self._pending:
            return
        pieces = self._pending
        self._pending = []
        self._pending_rows = self._pending_bytes = 0
        # the non-zeros of several pieces go to the file piece by piece (a gathered write), not concatenated first
        indices = [np.ascontiguousarray(p.indices, "<i4") for p in pieces]
        values = [np.ascontiguousarray(p.values, "<f4" if self.float32 else "<f8") for p in pieces]
        if len(pieces) == 1:
            p = pieces[0]
            y, indptr, ids, alpha, weights = p.y, p.indptr, p.row_ids, p.alpha, p.weights
        else:
            y = np.concatenate([p.y for p in pieces])
            lengths = np.concatenate([np.diff(p.indptr) for p in pieces])
            indptr = np.zeros(y.shape[0] + 1, np.int64)
            np.cumsum(lengths, out=indptr[1:])
            ids = np.concatenate([p.row_ids for p in pieces]) if self.row_ids else None
            alpha = np.concatenate([p.alpha for p in pieces]) if self.alpha else None
            weights = np.concatenate([p.weights for p in pieces]) if self.weights else None
        n, nnz = y.shape[0], sum(x.shape[0] for x in indices)
        layout = payload_layout(n, nnz, self.float32, self.row_ids, self.alpha, self.weights)
        sections = [np.ascontiguousarray(y, "<f8"), *([np.ascontiguousarray(weights, "<f8")] if self.weights else []),
                    np.ascontiguousarray(indptr, "<i8"), *indices,
                    b"\0" * (layout[3] - layout[2] - 4 * nnz), *values,
                    b"\0" * (layout[4] - layout[3] - (4 if self.float32 else 8) * nnz)]
        if self.row_ids:
            sections.append(np.ascontiguousarray(ids, "<i8"))
        if self.alpha:
            sections.append(np.ascontiguousarray(alpha, "<f8"))
        crc = 0
        for s in sections:
            crc = crc32(s, crc)
        head = _BLOCK.pack(BLOCK_MAGIC, n, nnz, self.n_rows, layout[5], crc, 0)
        # pieces the caller gave up (owned) do not change: with hold_owned, the bytes held back for the next write
        # are not copied
        self._emit([head] + sections, stable=self.hold_owned and all(getattr(p, "_owned", False) for p in pieces))
        self._index.append((self._pos, n, nnz))
        self._pos += BLOCK_HEADER_SIZE + layout[5]
        self.n_rows += n
        self.nnz += nnz

    def _emit(self, buffers, stable=False):
        """Queue bytes for the file and write everything up to the last write_align (2 MB) boundary, in one
        gathered write.

        Each 2 MB of the file is then written by a single call, so the page cache holds it as one large folio,
        which a reader's memory map takes with a single page-table entry: load() is faster, and solvers reading
        the map in place run as fast as on anonymous huge pages (with 4 KB pages they were ~15% slower). The
        bytes kept back (less than write_align) are copied, so the caller's arrays may change afterwards, unless
        they are `stable` (arrays nothing changes: they are held, not copied). A
        temporary copy that is only read block by block (the out-of-core solvers' copy of text) takes a smaller
        write_align, which keeps less in memory.
        """
        new = [memoryview(b).cast("B") for b in buffers]
        new = [v for v in new if v.nbytes]
        self._out.extend(new)
        self._out_bytes += sum(v.nbytes for v in new)
        aligned = (self._written + self._out_bytes) & ~(self.write_align - 1)
        if aligned <= self._written:
            # nothing to write yet: keep copies of the new bytes only (each byte is copied at most once)
            if not stable:
                self._out[len(self._out) - len(new):] = [memoryview(bytes(v)) for v in new]
            return
        n = aligned - self._written
        take = []
        while n:
            v = self._out[0]
            if v.nbytes <= n:
                take.append(v)
                self._out.pop(0)
                n -= v.nbytes
            else:
                take.append(v[:n])
                self._out[0] = v[n:]
                n = 0
        self._f.flush()
        _writev_all(self._f.fileno(), take)
        self._out_bytes -= aligned - self._written
        self._written = aligned
        if self.fsync and aligned - self._synced >= WRITEBACK_BYTES:
            _start_writeback(self._f.fileno(), self._synced, aligned - self._synced)
            self._synced = aligned
        if self._out and not stable:
            self._out = [memoryview(b"".join(self._out))]                       # < 2 MB, copied once

    def _drain(self):
        """Write whatever _emit holds back."""
        if self._out:
            self._f.flush()
            _writev_all(self._f.fileno(), self._out)
            self._written += self._out_bytes
            self._out, self._out_bytes = [], 0

    @property
    def n_blocks(self):
        return len(self._index)

    def flush(self):
        """End the current block now (it goes to the file; the writer holds no rows afterwards)."""
        self._flush()

    def close(self, n_features=None, n_qid=None):
        """Finish the file: last block, footer, header; then rename it into place. Returns the path."""
        if self._closed:
            return self.path
        try:
            self._flush()
            if n_features is not None:
                self.n_features = max(self.n_features, int(n_features))
            if n_qid is not None:
                self.n_qid = int(n_qid)
            if not 0 <= self.n_qid <= self.n_rows:      # what the readers check (one qid token per row at most)
                raise ParameterError(f"n_qid {self.n_qid}: a file of {self.n_rows} rows holds 0..{self.n_rows} qid "
                                     "tokens")
            if self._continuous:
                labels = np.empty(0, "<f8")
                counts = np.empty(0, "<u8")
            else:
                labels = np.array(list(self._labels.keys()), "<f8")
                counts = np.array(list(self._labels.values()), "<u8")
            index = np.array(self._index, "<u8").reshape(-1, 3)
            footer = FOOTER_MAGIC + labels.tobytes() + counts.tobytes() + index.tobytes()
            footer += struct.pack("<II", crc32(footer), 0)
            footer_offset = self._pos
            self._drain()
            self._f.write(footer)
            flags = (FLAG_FLOAT32 if self.float32 else 0) | (FLAG_ROW_IDS if self.row_ids else 0) | \
                (FLAG_CONTINUOUS if self._continuous else 0) | (FLAG_ALPHA if self.alpha else 0) | \
                (FLAG_WIDTH if self.n_features > self._width else 0) | (FLAG_WEIGHTS if self.weights else 0)
            version = VERSION_WEIGHTS if self.weights else VERSION
            head = _HEADER.pack(MAGIC, version, flags, self.n_rows, self.n_features, self.nnz, len(self._index),
                                footer_offset, len(footer), self.max_sq_norm, self.n_qid, labels.shape[0])
            head = head.ljust(124, b"\0")
            head += struct.pack("<I", crc32(head))
            self._f.seek(0)
            self._f.write(head)
            self._f.flush()
            if self._reused:
                os.ftruncate(self._f.fileno(), footer_offset + len(footer))
            if self.fsync:
                os.fsync(self._f.fileno())
            self._f.close()
            os.chmod(self._tmp, 0o644)
            if self.output:
                joined(self._release)
                commit_output(self._tmp, self.path)
            else:
                if self.scratch is not None:
                    self.scratch.retire(self.path)
                rename_temporary(self._tmp, self.path)
            self._closed = True
            return self.path
        except BaseException:
            self.abort()
            raise

    def abort(self):
        """Discard the temporary file (the target is left as it was)."""
        if self._closed:
            return
        self._closed = True
        try:
            self._f.close()
        finally:
            discard_temporary(self._tmp)

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            self.close()
        else:
            self.abort()


def write_binary(dataset, path, *, float32=None, block_rows=None, block_bytes=DEFAULT_BLOCK_BYTES):
    """Write any dataset (in memory, binary, or a TextStream) to a binary file, atomically. Returns the path."""
    if float32 is None:
        float32 = getattr(dataset, "dtype", np.float64) == np.float32
    row_ids = getattr(dataset, "row_ids", None) is not None or bool(getattr(dataset, "has_row_ids", False))
    weights = getattr(dataset, "weights", None) is not None or bool(getattr(dataset, "has_weights", False))
    with BinaryWriter(path, float32=float32, row_ids=row_ids, block_rows=block_rows,
                      block_bytes=block_bytes, weights=weights) as w:
        w.write_dataset(dataset)
        w.close(n_features=dataset.n_features, n_qid=getattr(dataset, "n_qid", 0))
    return path


def unviewed(bufs, k):
    """Whether nothing but the list `bufs` holds its buffer k (no array views it: its reference count, the list's
    and getrefcount's argument), so that new contents may go into it: the recycled buffers of Arena and of the
    out-of-core readers (solvers/outofcore.py)."""
    return sys.getrefcount(bufs[k]) <= 2


class Arena:
    """Recycled memory for arrays loaded again and again (an out-of-core solver's blocks): empty(n, dtype) gives
    an array in a buffer of an earlier call that nothing views any more (its reference count says so), rather than
    in fresh memory, whose pages the system must map and clear (on a VM whose freed memory goes back to the host,
    several microseconds a page). The k-th call since reset() has buffers of its own, so the arrays of one load
    never share one; a buffer still viewed is replaced (it lives on with its views). Drop the arena (or reset())
    to free its memory."""

    def __init__(self):
        self._bufs = []
        self._k = 0

    def reset(self):
        """The next empty() calls are a new load's: the first reuses the first buffer, and so on."""
        self._k = 0

    def empty(self, n, dtype):
        dtype = np.dtype(dtype)
        need = max(int(n), 1) * dtype.itemsize
        k = self._k
        self._k += 1
        if k == len(self._bufs):
            self._bufs.append(None)
        if self._bufs[k] is None or self._bufs[k].shape[0] < need or not unviewed(self._bufs, k):
            self._bufs[k] = None
            self._bufs[k] = np.empty(need + need // 4, np.uint8)
        return self._bufs[k][:int(n) * dtype.itemsize].view(dtype)


class BinaryDataset(Dataset):
    """A binary file: header and footer validated on open; blocks verified (CRC32, structure) as they are read, and
    checked against the header and footer (contents) the first time each is read.

    ``iter_blocks()`` streams blocks with plain reads into fresh buffers (resident memory stays at one block);
    ``as_view()`` (``load()``) maps the file and reads its rows in place: a CSRDataset for a single-block file,
    a MappedDataset (segmented) for several blocks; ``load_blocks()`` copies blocks into contiguous memory.
    """

    def __init__(self, path, trusted=False):
        """`trusted`: a file this process wrote itself into its own temporary directory (an out-of-core solver's
        active-set file, read again and again): its blocks' checksums and structure are not verified on read."""
        self.path = os.fspath(path)
        self.source = self.path
        self.trusted = bool(trusted)
        self._mmap = None
        self._view = None
        self._lock = threading.Lock()
        try:
            self._f = open(self.path, "rb", buffering=0)
        except OSError:
            raise
        try:
            self._open()
            self._start_contents()
            if self._verify_on_open:
                self.verify()
        except BaseException:
            self._f.close()
            raise

    def _bad(self, message, field=None):
        """The DataFormatError of this file; `field` names the header or footer field a check found wrong (the
        error says the file disagrees with itself: llsvm-convert --info then shows nothing)."""
        exc = DataFormatError(self.path, 0, 0, message)
        exc.field = field
        return exc

    def _open(self):
        size = os.fstat(self._f.fileno()).st_size
        self.file_size = size
        head = self._f.read(HEADER_SIZE)
        if not head.startswith(MAGIC):
            if len(head) < len(MAGIC) and MAGIC.startswith(head):
                raise self._bad(f"truncated binary file ({size} bytes, smaller than the {HEADER_SIZE}-byte header)")
            raise self._bad("not an llsvm binary file (wrong magic bytes)")
        if len(head) < 12:
            raise self._bad(f"truncated binary file ({size} bytes, smaller than the {HEADER_SIZE}-byte header)")
        version = struct.unpack_from("<I", head, 8)[0]
        if version not in (VERSION, VERSION_WEIGHTS):
            raise self._bad(f"unsupported binary format version {version} (this llsvm reads versions {VERSION} and "
                            f"{VERSION_WEIGHTS})")
        self.version = version
        if len(head) < HEADER_SIZE:
            raise self._bad(f"truncated binary file ({size} bytes, smaller than the {HEADER_SIZE}-byte header)")
        crc = struct.unpack_from("<I", head, 124)[0]
        if crc32(head[:124]) != crc:
            raise self._bad("header checksum mismatch: the file is corrupt")
        (_, _, flags, self.n_rows, self.n_features, self.nnz, self.n_blocks, f_off, f_size, self.max_sq_norm,
         self.n_qid, n_labels) = _HEADER.unpack_from(head)
        if flags & ~KNOWN_FLAGS:
            raise self._bad(f"unknown flags 0x{flags:x} in the header")
        self.float32 = bool(flags & FLAG_FLOAT32)
        self.has_row_ids = bool(flags & FLAG_ROW_IDS)
        self.has_alpha = bool(flags & FLAG_ALPHA)
        self.continuous = bool(flags & FLAG_CONTINUOUS)
        self.declared_width = bool(flags & FLAG_WIDTH)
        self.has_weights = bool(flags & FLAG_WEIGHTS)
        if self.has_weights != (self.version == VERSION_WEIGHTS):
            raise self._bad(f"header flag 32 (row weights) {'set' if self.has_weights else 'not set'} in a version "
                            f"{self.version} file (version {VERSION_WEIGHTS} files, and they only, carry row weights)",
                            "flags")
        self.vdtype = np.dtype("<f4" if self.float32 else "<f8")
        # sizes against the file before anything is allocated
        if f_off < HEADER_SIZE or f_off > size or f_size > size or n_labels > size or self.n_blocks > size:
            raise self._bad(f"truncated or corrupt: the header points past the end of the file ({size} bytes)")
        if f_size != footer_size(n_labels, self.n_blocks) or f_off + f_size != size:
            raise self._bad(f"truncated or corrupt: header and footer describe {f_off + f_size} bytes, "
                            f"the file has {size}")
        if self.n_features > 2147483647:
            raise self._bad(f"n_features {self.n_features} is beyond the int32 range")
        self._check_header_fields()
        self._f.seek(f_off)
        footer = self._f.read(f_size)
        if len(footer) != f_size or not footer.startswith(FOOTER_MAGIC):
            raise self._bad("corrupt footer (wrong magic bytes)")
        footer_crc, reserved = struct.unpack_from("<II", footer, f_size - 8)
        if crc32(footer[:-8]) != footer_crc or reserved:
            raise self._bad("footer checksum mismatch: the file is corrupt")
        pos = 8
        self.labels = np.frombuffer(footer, "<f8", n_labels, pos).astype(np.float64)
        pos += 8 * n_labels
        self._check_label_table(np.frombuffer(footer, "<u8", n_labels, pos))
        self.label_counts = np.frombuffer(footer, "<u8", n_labels, pos).astype(np.int64)
        pos += 8 * n_labels
        raw_index = np.frombuffer(footer, "<u8", 3 * self.n_blocks, pos).reshape(-1, 3)
        if self.n_blocks and (raw_index > np.uint64(size)).any():     # before int64 could wrap a value >= 2^63
            raise self._bad("corrupt block index (an offset or a block is larger than the file)")
        index = raw_index.astype(np.int64)
        if self.continuous:
            self.labels = self.label_counts = None
        # the block index must tile the file between the header and the footer exactly
        offsets, rows, nnzs = index[:, 0], index[:, 1], index[:, 2]
        if self.n_blocks:
            if (rows > size).any() or (nnzs > size).any():
                raise self._bad("corrupt block index (a block is larger than the file)")
            sizes = np.array([payload_layout(int(r), int(k), self.float32, self.has_row_ids, self.has_alpha,
                                             self.has_weights)[5]
                              for r, k in zip(rows, nnzs)], dtype=np.int64) + BLOCK_HEADER_SIZE
            expect = HEADER_SIZE + np.concatenate([[0], np.cumsum(sizes)[:-1]])
            if not np.array_equal(offsets, expect) or expect[-1] + sizes[-1] != f_off:
                raise self._bad("corrupt block index (blocks do not tile the file)")
        elif f_off != HEADER_SIZE:
            raise self._bad("corrupt block index (no blocks but data in the file)")
        if int(rows.sum()) != self.n_rows or int(nnzs.sum()) != self.nnz:
            raise self._bad("corrupt file: block index and header disagree on rows or non-zeros")
        self.block_offsets = offsets
        self.block_rows = rows
        self.block_nnz = nnzs
        self.block_first_row = np.concatenate([[0], np.cumsum(rows)[:-1]]).astype(np.int64) if self.n_blocks \
            else np.empty(0, np.int64)
        # n_features is checked against the data once every block has been read. Until then a reader may size
        # arrays by it (a trainer's w): when those would be larger than the file itself, the blocks are read and
        # checked now, so a header can never make a reader allocate more than about the file's size unchecked.
        self._verify_on_open = not self.declared_width and self.nnz > 0 and 8 * self.n_features > size

    # -- header and footer fields against each other (on open) -------------------------------------------------
    def _check_header_fields(self):
        n, nnz, nf, sq = self.n_rows, self.nnz, self.n_features, self.max_sq_norm
        if not (math.isfinite(sq) and sq >= 0.0):
            raise self._bad(f"header max_sq_norm {sq!r} is not a finite number >= 0", "max_sq_norm")
        if nnz == 0:
            if sq != 0.0:
                raise self._bad(f"header max_sq_norm {sq!r} but the file has no non-zeros (it must be 0)",
                                "max_sq_norm")
            if nf and not self.declared_width:
                raise self._bad(f"header n_features {nf} but the file has no non-zeros (n_features must be 0 "
                                "without flag 16, a declared width)", "n_features")
        elif nf == 0:
            raise self._bad(f"header n_features 0 but the file has {nnz} non-zeros", "n_features")
        if self.declared_width and nf == 0:
            raise self._bad("header flag 16 (a declared width) but n_features is 0", "flags")
        if self.continuous and n <= MAX_LABELS:
            raise self._bad(f"header flag 4 (continuous labels: more than {MAX_LABELS} distinct values) but the "
                            f"file has only {n} rows", "flags")
        # the text it came from allows one qid:N per row, right after the label (the blocks keep no qid)
        if self.n_qid > n:
            raise self._bad(f"header n_qid {self.n_qid} but the file has only {n} rows (a row holds at most one "
                            "qid token)", "n_qid")

    def _check_label_table(self, counts):
        """The footer's label table (self.labels) and its counts (uint64) against each other and the header."""
        labels, k = self.labels, self.labels.shape[0]
        if self.continuous:
            if k:
                raise self._bad(f"header flag 4 (continuous labels) but the footer has a label table of {k} labels",
                                "labels")
            return
        if k > MAX_LABELS:
            raise self._bad(f"footer label table of {k} labels: more than {MAX_LABELS} without flag 4 (continuous "
                            "labels)", "labels")
        if k == 0 and self.n_rows:
            raise self._bad(f"footer label table is empty but the file has {self.n_rows} rows", "labels")
        bad = np.flatnonzero(~np.isfinite(labels))
        if bad.size:
            raise self._bad(f"footer label table: label {int(bad[0])} is {float(labels[bad[0]])!r}, not a finite "
                            "number", "labels")
        if k > 1:
            ordered = np.sort(labels)
            dup = np.flatnonzero(ordered[1:] == ordered[:-1])
            if dup.size:
                raise self._bad(f"footer label table: label {float(ordered[dup[0]])!r} appears more than once",
                                "labels")
        if k and (counts == 0).any():
            i = int(np.flatnonzero(counts == 0)[0])
            raise self._bad(f"footer label counts: label {float(labels[i])!r} has count 0", "label_counts")
        total = sum(counts.tolist())
        if total != self.n_rows:
            raise self._bad(f"footer label counts sum to {total} but the header has {self.n_rows} rows",
                            "label_counts")

    # -- the blocks' contents against the header and footer (the first time each block is read) ---------------
    def _start_contents(self):
        self._seen = np.zeros(self.n_blocks, bool)
        self._n_seen = 0
        self._seen_lock = threading.Lock()
        self._contents_error = None
        self._max_index = -1
        self._max_norm = 0.0
        self._table = None
        if self.labels is not None:
            order = np.argsort(self.labels, kind="stable")
            self._table = (order, np.ascontiguousarray(self.labels[order]))
            self._counted = np.zeros(order.size, np.int64)                    # by position in the sorted table
            self._first = np.full(order.size, np.iinfo(np.int64).max, np.int64)
        self._distinct = np.empty(0, np.float64)     # continuous labels: distinct labels seen, while <= MAX_LABELS
        if self.n_blocks == 0:
            self._check_contents()

    def _check_block(self, b, y, indptr, indices, values, weights=None):
        """Block b (its CRC32 verified): its structure every time it is read (check_csr); the first time, in the
        same pass (check_block), its rows against the header and footer (and its weights: each a finite number
        >= 0), and once every block has been read, the whole file's."""
        if self._contents_error is not None:
            raise self._contents_error
        if self._seen[b]:
            status, row = check_csr(indptr, indices, self.n_features)
            if status:
                raise self._bad(f"corrupt block {b}: {_CSR_PROBLEMS[status]} (row {row} of the block)")
            return
        if weights is not None:
            bad = bad_weight(weights)
            if bad >= 0:
                raise self._bad(f"corrupt block {b}: the weight of row {bad} of the block is "
                                f"{float(weights[bad])!r}, not a finite number >= 0")
        counts = first = None
        if self._table is not None:
            k = self._table[1].shape[0]
            counts, first = np.zeros(k, np.int64), np.full(k, -1, np.int64)
        status, row, max_index, bad_label, bad_norm, sq = check_block(
            indptr, indices, values, y, self.n_features, None if counts is None else self._table[1], counts, first)
        if status:
            raise self._bad(f"corrupt block {b}: {_CSR_PROBLEMS[status]} (row {row} of the block)")
        if bad_label >= 0:
            label = float(y[bad_label])
            if not math.isfinite(label):
                raise self._bad(f"corrupt block {b}: the label of row {bad_label} of the block is {label!r}, not a "
                                "finite number")
            raise self._bad(f"block {b}: label {label!r} (row {bad_label} of the block) is not in the footer's label "
                            "table", "labels")
        if bad_norm >= 0:
            raise self._bad(f"corrupt block {b}: row {bad_norm} of the block has a squared norm that is not a finite "
                            "number (a value is NaN or infinite, or too large)")
        if sq > self.max_sq_norm and not _same_norm(sq, self.max_sq_norm):
            raise self._bad(f"header max_sq_norm {self.max_sq_norm!r} but block {b} has a row of squared norm "
                            f"{sq!r}", "max_sq_norm")
        new = None
        if self.continuous and self._distinct.shape[0] <= MAX_LABELS:
            known = self._distinct
            if known.shape[0]:
                pos = np.minimum(np.searchsorted(known, y), known.shape[0] - 1)
                new = np.unique(y[known[pos] != y])
            else:
                new = np.unique(y)
        with self._seen_lock:
            if self._seen[b]:
                return
            self._seen[b] = True
            self._n_seen += 1
            self._max_index = max(self._max_index, max_index)
            self._max_norm = max(self._max_norm, sq)
            if self._table is not None:
                self._counted += counts
                np.minimum(self._first, np.where(first >= 0, first + int(self.block_first_row[b]), self._first),
                           out=self._first)
            if new is not None and new.size and self._distinct.shape[0] <= MAX_LABELS:
                self._distinct = np.union1d(self._distinct, new)
            done = self._n_seen == self.n_blocks
        if done:
            self._check_contents()

    def _check_contents(self):
        """Every block has been read: the header and footer fields against the whole file's rows."""
        try:
            self._check_contents_now()
        except DataFormatError as exc:
            self._contents_error = exc
            raise

    def _check_contents_now(self):
        nf, width = self.n_features, self._max_index + 1
        if self.declared_width:
            if nf <= width:
                raise self._bad(f"header flag 16 (a declared width) but n_features {nf} is not wider than the data "
                                f"(its largest feature index is {width}, 1-based)", "flags")
        elif nf != width:
            raise self._bad(f"header n_features {nf} but the largest feature index in the data is {width} "
                            "(1-based)", "n_features")
        if not _same_norm(self._max_norm, self.max_sq_norm):
            raise self._bad(f"header max_sq_norm {self.max_sq_norm!r} but the largest squared row norm in the data "
                            f"is {self._max_norm!r}", "max_sq_norm")
        if self._table is not None and self.labels.shape[0]:
            order = self._table[0]
            counted = np.empty_like(self._counted)
            counted[order] = self._counted
            first = np.empty_like(self._first)
            first[order] = self._first
            wrong = np.flatnonzero(counted != self.label_counts)
            if wrong.size:
                i = int(wrong[0])
                raise self._bad(f"footer label counts: label {float(self.labels[i])!r} has count "
                                f"{int(self.label_counts[i])} but the data has {int(counted[i])} rows with it",
                                "label_counts")
            late = np.flatnonzero(first[1:] < first[:-1])
            if late.size:
                i = int(late[0])
                raise self._bad(f"footer label table out of order: label {float(self.labels[i + 1])!r} first appears "
                                f"in row {int(first[i + 1])}, before label {float(self.labels[i])!r} (row "
                                f"{int(first[i])}); the table lists the labels in order of first occurrence",
                                "labels")
        if self.continuous and self._distinct.shape[0] <= MAX_LABELS:
            raise self._bad(f"header flag 4 (continuous labels: more than {MAX_LABELS} distinct values) but the data "
                            f"has {self._distinct.shape[0]} distinct labels", "flags")

    @property
    def dtype(self):
        return np.dtype(np.float32 if self.float32 else np.float64)

    # -- blocks -----------------------------------------------------------------------------------------------
    def _layout(self, b):
        """payload_layout of block b."""
        return payload_layout(int(self.block_rows[b]), int(self.block_nnz[b]), self.float32, self.has_row_ids,
                              self.has_alpha, self.has_weights)

    def _block_arrays(self, b, payload):
        """Typed views into one block's payload (bytes-like of exactly payload_size bytes): labels, offsets,
        indices, values, row ids, alpha, weights (the last three None when the file has none)."""
        n, nnz = int(self.block_rows[b]), int(self.block_nnz[b])
        o_y, o_ptr, o_idx, o_val, o_ids, end = self._layout(b)
        y = np.frombuffer(payload, "<f8", n, o_y)
        weights = np.frombuffer(payload, "<f8", n, o_y + 8 * n) if self.has_weights else None
        indptr = np.frombuffer(payload, "<i8", n + 1, o_ptr)
        indices = np.frombuffer(payload, "<i4", nnz, o_idx)
        values = np.frombuffer(payload, self.vdtype, nnz, o_val)
        ids = np.frombuffer(payload, "<i8", n, o_ids) if self.has_row_ids else None
        alpha = np.frombuffer(payload, "<f8", n, end - 8 * n) if self.has_alpha else None
        return y, indptr, indices, values, ids, alpha, weights

    def _check_block_header(self, b, head):
        magic, n, nnz, first, psize, crc, reserved = _BLOCK.unpack(head)
        n_b, nnz_b = int(self.block_rows[b]), int(self.block_nnz[b])
        if magic != BLOCK_MAGIC or n != n_b or nnz != nnz_b or first != self.block_first_row[b] or reserved or \
                psize != self._layout(b)[5]:
            raise self._bad(f"corrupt block {b} header")
        return crc

    def read_block(self, b, out=None):
        """Block b as a CSRDataset in a fresh buffer (verified); `first_row` tells its first global row. `out`: a
        uint8 buffer of at least block_payload_bytes(b) to read into instead (the block's arrays view it: the caller
        must not reuse it while they live)."""
        offset = int(self.block_offsets[b])
        psize = self.block_payload_bytes(b)
        payload = np.empty(psize, np.uint8) if out is None else out[:psize]
        head = os.pread(self._f.fileno(), BLOCK_HEADER_SIZE, offset)
        if len(head) != BLOCK_HEADER_SIZE:
            raise self._bad(f"truncated block {b}")
        crc = self._check_block_header(b, head)
        got = os.preadv(self._f.fileno(), [payload], offset + BLOCK_HEADER_SIZE)
        if got != psize:
            raise self._bad(f"truncated block {b}")
        if not self.trusted and crc32(payload) != crc:
            raise self._bad(f"checksum mismatch in block {b}: the file is corrupt")
        y, indptr, indices, values, ids, alpha, weights = self._block_arrays(b, payload)
        if not self.trusted:
            self._check_block(b, y, indptr, indices, values, weights)
        ds = CSRDataset(y, indptr, indices, values, self.n_features, row_ids=ids, source=self.path, check=False,
                        alpha=alpha, weights=weights)
        ds.first_row = int(self.block_first_row[b])
        return ds

    def block_payload_bytes(self, b):
        """Bytes of block b's payload (what read_block reads)."""
        return self._layout(b)[5]

    def iter_blocks(self, max_rows=None, max_bytes=None):
        """Stream the file's blocks in order (re-cut to max_rows / max_bytes when given)."""
        for b in range(self.n_blocks):
            block = self.read_block(b)
            if max_rows is None and max_bytes is None:
                yield block
                continue
            base = block.first_row
            for piece in block.iter_blocks(max_rows, max_bytes):
                piece.first_row = base
                base += piece.n_rows
                yield piece

    def verify(self, threads=2):
        """Check every block's checksum and structure, and the blocks' contents against the header and footer
        (docs/formats.md section 2, "Readers"); raises DataFormatError at the first problem."""
        def one(b):
            self.read_block(b)
        with _thread_pool(max(1, threads)) as pool:
            list(pool.map(one, range(self.n_blocks)))
        return True

    # -- random access ----------------------------------------------------------------------------------------
    def load(self, threads=2):
        """All rows for random access, verified: read in place from a memory map, without a copy.

        The file's pages are mapped read-only (they are the page cache: nothing is copied or zero-filled) and
        every block's CRC32 and structure are checked there, `threads` blocks at a time (CRC32 and the check
        release the GIL). A single-block file gives a CSRDataset over its arrays; a file of several blocks gives
        a MappedDataset (a segmented view: per-row labels and offsets in memory, the non-zeros where they lie
        in the file). The file must not be rewritten in place while mapped; llsvm's own writers never do (they
        write a new file and rename it).
        """
        with self._lock:
            if self._view is not None:
                return self._view
            if self.n_blocks == 0:
                y, indptr, indices, values, ids, alpha, weights = self._load_blocks(1, 0, 0)
                self._view = CSRDataset(y, indptr, indices, values, self.n_features, row_ids=ids,
                                        n_qid=self.n_qid, source=self.path, labels=self.labels,
                                        label_counts=self.label_counts, check=False, alpha=alpha, weights=weights)
                return self._view
            self._mmap = mmap.mmap(self._f.fileno(), 0, access=mmap.ACCESS_READ)
            try:
                self._view = self._map_blocks(threads)
            except BaseException:
                self._view = None
                self._unmap()
                raise
            return self._view

    def _map_blocks(self, threads):
        mm = self._mmap
        buf = memoryview(mm)
        n, nb = self.n_rows, self.n_blocks
        vsize = self.vdtype.itemsize
        single = nb == 1
        y = indptr = seg = None
        if not single:
            y = np.empty(n, np.float64)
            indptr = np.empty(n + 1, np.int64)
            indptr[0] = 0
            seg = np.empty(n, np.int32)
        shift = np.empty(0 if single else 2 * nb, np.int64)
        ids = np.empty(n, np.int64) if self.has_row_ids and not single else None
        alpha = np.empty(n, np.float64) if self.has_alpha and not single else None
        weights = np.empty(n, np.float64) if self.has_weights and not single else None
        k_first = np.concatenate([[0], np.cumsum(self.block_nnz)[:-1]]).astype(np.int64)
        pieces = [None] * nb

        def one(b):
            offset = int(self.block_offsets[b])
            crc = self._check_block_header(b, mm[offset:offset + BLOCK_HEADER_SIZE])
            nr, k = int(self.block_rows[b]), int(self.block_nnz[b])
            lay = self._layout(b)
            start = offset + BLOCK_HEADER_SIZE
            payload = buf[start:start + lay[5]]
            if crc32(payload) != crc:
                raise self._bad(f"checksum mismatch in block {b}: the file is corrupt")
            yb, ptr, ixb, vb, idb, ab, wb = self._block_arrays(b, payload)
            self._check_block(b, yb, ptr, ixb, vb, wb)
            pieces[b] = (yb, ptr, ixb, vb, idb, ab, wb)
            if single:
                return
            r0, k0 = int(self.block_first_row[b]), int(k_first[b])
            y[r0:r0 + nr] = yb
            np.add(ptr[1:], k0, out=indptr[r0 + 1:r0 + nr + 1])
            seg[r0:r0 + nr] = b
            # element positions in the whole-file arrays, minus the block's first global non-zero number
            shift[2 * b] = (start + lay[2]) // 4 - k0
            shift[2 * b + 1] = (start + lay[3]) // vsize - k0
            if ids is not None:
                ids[r0:r0 + nr] = idb
            if alpha is not None:
                alpha[r0:r0 + nr] = ab
            if weights is not None:
                weights[r0:r0 + nr] = wb

        if threads > 1 and nb > 1:
            with _thread_pool(threads) as pool:
                list(pool.map(one, range(nb)))
        else:
            for b in range(nb):
                one(b)
        if single:
            yb, ptr, ixb, vb, idb, ab, wb = pieces[0]
            return CSRDataset(yb, ptr, ixb, vb, self.n_features, row_ids=idb, n_qid=self.n_qid, source=self.path,
                              labels=self.labels, label_counts=self.label_counts, check=False, alpha=ab, weights=wb)
        file_indices = np.frombuffer(mm, "<i4")
        file_values = np.frombuffer(mm, self.vdtype)
        blocks = [CSRDataset(p[0], p[1], p[2], p[3], self.n_features, row_ids=p[4], alpha=p[5], weights=p[6],
                             source=self.path, check=False) for p in pieces]
        return MappedDataset(y, indptr, file_indices, file_values, seg, shift, blocks, self.block_first_row,
                             self.n_features, row_ids=ids, alpha=alpha, n_qid=self.n_qid, source=self.path,
                             labels=self.labels, label_counts=self.label_counts, weights=weights)

    def load_blocks(self, b0, b1, threads=1, arena=None):
        """Blocks b0..b1-1 as one contiguous, verified CSRDataset in fresh memory (`first_row` set), or in the
        recycled memory of `arena` (an Arena)."""
        y, indptr, indices, values, ids, alpha, weights = self._load_blocks(threads, b0, b1, arena)
        ds = CSRDataset(y, indptr, indices, values, self.n_features, row_ids=ids, source=self.path, check=False,
                        alpha=alpha, weights=weights)
        ds.first_row = int(self.block_first_row[b0]) if b0 < self.n_blocks else self.n_rows
        return ds

    def _load_blocks(self, threads, b0, b1, arena=None):
        rows0 = int(self.block_first_row[b0]) if b0 < self.n_blocks else 0
        nnz0 = int(self.block_nnz[:b0].sum())
        n, nnz = int(self.block_rows[b0:b1].sum()), int(self.block_nnz[b0:b1].sum())
        empty = np.empty if arena is None else arena.empty
        y = empty(n, np.float64)
        indptr = empty(n + 1, np.int64)
        indptr[0] = 0
        indices = empty(nnz, np.int32)
        values = empty(nnz, self.vdtype)
        ids = empty(n, np.int64) if self.has_row_ids else None
        alpha = empty(n, np.float64) if self.has_alpha else None
        weights = empty(n, np.float64) if self.has_weights else None
        k_first = np.concatenate([[0], np.cumsum(self.block_nnz)[:-1]]).astype(np.int64) - nnz0
        fd = self._f.fileno()
        vsize = self.vdtype.itemsize

        def one(b):
            r0, k0 = int(self.block_first_row[b]) - rows0, int(k_first[b])
            nb, kb = int(self.block_rows[b]), int(self.block_nnz[b])
            o_y, o_ptr, o_idx, o_val, o_ids, end = self._layout(b)
            offset = int(self.block_offsets[b])
            head = os.pread(fd, BLOCK_HEADER_SIZE, offset)
            if len(head) != BLOCK_HEADER_SIZE:
                raise self._bad(f"truncated block {b}")
            crc = self._check_block_header(b, head)
            ptr = np.empty(nb + 1, np.int64)
            pad1 = bytearray(o_val - o_idx - 4 * kb)
            pad2 = bytearray(o_ids - o_val - vsize * kb)
            bufs = [y[r0:r0 + nb], *([weights[r0:r0 + nb]] if weights is not None else []), ptr,
                    indices[k0:k0 + kb], pad1, values[k0:k0 + kb], pad2]
            if ids is not None:
                bufs.append(ids[r0:r0 + nb])
            if alpha is not None:
                bufs.append(alpha[r0:r0 + nb])
            bufs = [memoryview(x).cast("B") if isinstance(x, np.ndarray) else x for x in bufs]
            if os.preadv(fd, bufs, offset + BLOCK_HEADER_SIZE) != end:
                raise self._bad(f"truncated block {b}")
            if not self.trusted:
                c = 0
                for x in bufs:
                    c = crc32(x, c)
                if c != crc:
                    raise self._bad(f"checksum mismatch in block {b}: the file is corrupt")
                self._check_block(b, y[r0:r0 + nb], ptr, indices[k0:k0 + kb], values[k0:k0 + kb],
                                  None if weights is None else weights[r0:r0 + nb])
            np.add(ptr[1:], k0, out=indptr[r0 + 1:r0 + nb + 1])

        if threads > 1 and b1 - b0 > 1:
            with _thread_pool(threads) as pool:
                list(pool.map(one, range(b0, b1)))
        else:
            for b in range(b0, b1):
                one(b)
        return y, indptr, indices, values, ids, alpha, weights

    def as_view(self):
        return self.load()

    def to_csr(self):
        return self.load().to_csr()

    @property
    def y(self):
        return self.load().y

    def _unmap(self):
        if self._mmap is not None:
            try:
                self._mmap.close()
            except BufferError:
                pass  # arrays still view the map; it closes when they go
            self._mmap = None

    def close(self):
        self._view = None
        self._unmap()
        self._f.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        return (f"BinaryDataset({self.path!r}, n_rows={self.n_rows}, n_features={self.n_features}, "
                f"nnz={self.nnz}, blocks={self.n_blocks}, dtype={self.dtype.name})")


class MappedDataset(CSRDataset):
    """The rows of a multi-block binary file read in place from its memory map: a segmented view.

    Labels, row offsets (numbering the non-zeros contiguously), row ids, alpha and weights are in memory (copied
    from the blocks: 16 bytes per row, plus 4 for the segment of each row); the indices and values stay in the mapped
    file. Kernels read it through ``row_view()``, a row view over ``kernel_arrays()`` (the whole file seen as int32
    and as the value type) and ``segs`` (each row's block and the blocks' element shifts; cext/rowview.pxd).
    ``iter_blocks``, ``slice`` within a block and the blocks themselves are views without a copy; ``take_rows``,
    ``to_csr`` and ``contiguous()`` copy. ``indices`` and ``values`` (contiguous arrays matching ``indptr``, as for any
    CSRDataset) are made on first use, by one copy kept from then on (``materialized`` tells whether it was);
    the kernels never need them.
    """

    def __init__(self, y, indptr, file_indices, file_values, seg, shift, blocks, block_first_row, n_features, *,
                 row_ids=None, alpha=None, n_qid=0, source=None, labels=None, label_counts=None, weights=None):
        self.y = y
        self.weights = weights
        self.indptr = indptr
        self._file_indices = file_indices
        self._file_values = file_values
        self.segs = (seg, shift)
        self.blocks = blocks
        self.block_first_row = np.asarray(block_first_row, np.int64)
        self.n_features = int(n_features)
        self.row_ids = row_ids
        self.alpha = alpha
        self.n_qid = int(n_qid)
        self.source = source
        self._labels = labels
        self._label_counts = label_counts
        self._contig = None

    @property
    def materialized(self):
        return self._contig is not None

    def contiguous(self):
        """A CSRDataset with contiguous copies of the rows (made once; what scipy and array code need)."""
        if self._contig is None:
            self._contig = self.take_rows(np.arange(self.n_rows, dtype=np.int64))
            self._contig.n_qid = self.n_qid
            self._contig._labels, self._contig._label_counts = self._labels, self._label_counts
        return self._contig

    @property
    def indices(self):
        return self.contiguous().indices

    @property
    def values(self):
        return self.contiguous().values

    @property
    def dtype(self):
        return self._file_values.dtype

    @property
    def n_blocks(self):
        return len(self.blocks)

    @property
    def nbytes(self):
        """Bytes in memory (labels, offsets, segments, row ids, alpha) plus the mapped non-zeros."""
        extra = sum(a.nbytes for a in (self.row_ids, self.alpha, self.weights) if a is not None)
        return self.y.nbytes + self.indptr.nbytes + self.segs[0].nbytes + self.segs[1].nbytes + extra + \
            self.nnz * (4 + self._file_values.dtype.itemsize)

    def kernel_arrays(self):
        return self.indptr, self._file_indices, self._file_values

    def _block_of(self, row):
        return int(np.searchsorted(self.block_first_row, row, side="right")) - 1

    def slice(self, start, stop):
        """Rows start..stop-1: a view into their block when they lie in one block, else a contiguous copy."""
        start, stop = int(start), int(stop)
        if stop <= start:
            return self.take_rows(np.empty(0, np.int64))
        b = self._block_of(start)
        if self._block_of(stop - 1) == b:
            r0 = int(self.block_first_row[b])
            return self.blocks[b].slice(start - r0, stop - r0)
        return self.take_rows(np.arange(start, stop, dtype=np.int64))

    def iter_blocks(self, max_rows=None, max_bytes=None):
        """The file's blocks in order (views into the map), re-cut to max_rows / max_bytes when given."""
        for b, block in enumerate(self.blocks):
            base = int(self.block_first_row[b])
            for piece in block.iter_blocks(max_rows, max_bytes):
                piece.first_row = base
                base += piece.n_rows
                yield piece

    def to_csr(self):
        return self.contiguous().to_csr()

    def __repr__(self):
        return (f"MappedDataset(n_rows={self.n_rows}, n_features={self.n_features}, nnz={self.nnz}, "
                f"blocks={self.n_blocks}, dtype={self.dtype.name})")
