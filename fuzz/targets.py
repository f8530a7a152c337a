"""The fuzz targets and their oracles: LIBSVM text, the binary data format, model files (and `selftest`, the
harness's own check).

Each target is a function ``check(data, work)`` that feeds one input (bytes) to llsvm through its public readers
and raises when llsvm misbehaves:

- an llsvm error of the expected kind (DataFormatError for data, ModelFormatError for models) is a rejection,
  which is fine by itself;
- any other exception (a traceback, MemoryError under the runner's address-space limit) propagates: a failure;
- ``OracleFailure`` is raised when llsvm accepts something it must refuse, gives different results on two paths
  that must agree, or rejects something valid. Each failure names a ``rule``; the runner groups failures by it.

The rules of each oracle are listed in the docstrings of ``check_text``, ``check_binary`` (and
``binary_invariants``) and ``check_model`` (and ``model_invariants``).
``work`` is a ``Workdir``: a private scratch directory (on tmpfs when there is one) where inputs become files.
"""
import contextlib
import math
import os
import re
import resource
import struct
import tempfile
import time
import warnings
import zlib

import numpy as np

from llsvm import BinaryDataset, BinaryWriter, DataFormatError, LLSVMError, ModelFormatError, load_model, train
from llsvm.binfmt import FLAG_ALPHA, FLAG_CONTINUOUS, FLAG_FLOAT32, FLAG_ROW_IDS, MAGIC
from llsvm.dataset import CSRDataset
from llsvm.memory import MemoryLimitError
from llsvm.models.svm import KERNEL_TYPES, SVM_TYPES, SVMModel
from llsvm.models.tree import TreeModel
from llsvm.io import describe, open_dataset
from llsvm.textio import DEFAULT_CHUNK, DEFAULT_MAX_LINE

from . import reference
from .mutators import LONG_DIGITS, integer_tokens, widen_integer
from .reference import Parsed, Rejected, TooLarge, decode_source

INT32_MAX = 2 ** 31 - 1
INT32_MIN = -2 ** 31
INT64_MAX = 2 ** 63 - 1          # class labels are 64-bit integers (issue 45)
INT64_MIN = -2 ** 63
MAX_MESSAGE = 400            # an error message (path excluded) longer than this quotes too much of the input


class OracleFailure(AssertionError):
    """llsvm broke a rule of the oracle: `rule` names it (failures are grouped by rule), `detail` says how."""

    def __init__(self, rule, detail=""):
        self.rule = rule
        self.detail = detail
        super().__init__(f"{rule}: {detail}" if detail else rule)


def require(ok, rule, detail=""):
    if not ok:
        raise OracleFailure(rule, detail)


class Workdir:
    """A private scratch directory; ``write(name, data)`` gives the path of a file holding data."""

    def __init__(self, base=None):
        if base is None and os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK):
            base = "/dev/shm"
        self.path = tempfile.mkdtemp(prefix="llsvm-fuzz-", dir=base)

    def file(self, name):
        return os.path.join(self.path, name)

    def write(self, name, data):
        path = self.file(name)
        with open(path, "wb") as f:
            f.write(data)
        return path

    def cleanup(self):
        for name in os.listdir(self.path):
            try:
                os.unlink(os.path.join(self.path, name))
            except OSError:
                pass
        try:
            os.rmdir(self.path)
        except OSError:
            pass


@contextlib.contextmanager
def memory_limit(extra_mb=2048):
    """Limit the address space to what the process has mapped now plus `extra_mb` (the soft limit only, raised
    back afterwards): how tests check one input in-process as the fuzzer's workers would."""
    with open("/proc/self/statm") as f:
        mapped = int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    old = resource.getrlimit(resource.RLIMIT_AS)
    limit = mapped + (extra_mb << 20)
    if old[1] != resource.RLIM_INFINITY:
        limit = min(limit, old[1])
    resource.setrlimit(resource.RLIMIT_AS, (limit, old[1]))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, old)


def same_bits(a, b):
    """Arrays equal bit for bit (so -0.0 differs from 0.0), with the same dtype and shape."""
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    return a.tobytes() == b.tobytes()


def same_labels(a, b):
    """Label tables equal as numbers (0.0 and -0.0 are one label, as np.unique has them)."""
    if a is None or b is None:
        return a is None and b is None
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return a.shape == b.shape and bool((a == b).all())


# ---------------------------------------------------------------------------------------------------------------
# LIBSVM text

def _text_variants(data):
    """The (stream, zero_based, float32, chunk_size, max_rows, max_line, class_labels) readings of one input:
    every zero_based/float32 pair, two in memory and two streamed, two with a tiny chunk so that lines cross chunk
    boundaries, two with a tiny line limit, two reading class labels. The sizes follow from the input, so a saved
    input replays the same way."""
    crc = zlib.crc32(data)
    small1, small2 = 2 + len(data) % 17, 3 + crc % 61
    line1, line2 = 4 + (crc >> 8) % 90, len(data) % 64
    return [(False, False, False, DEFAULT_CHUNK, None, DEFAULT_MAX_LINE, False),
            (True, False, True, small1, 3, line1, True),
            (False, True, True, small2, None, line2, False),
            (True, True, False, DEFAULT_CHUNK, 2, DEFAULT_MAX_LINE, True)]


def _read_text(path, stream, zero_based, float32, chunk, max_rows, max_line, class_labels):
    """(y, indptr, indices, values, n_features, n_qid, labels, label_counts) as llsvm reads the file."""
    ds = open_dataset(path, zero_based=zero_based, float32=float32, stream=stream, chunk_size=chunk,
                      max_line=max_line, class_labels=class_labels)
    if not stream:
        require(isinstance(ds, CSRDataset), "text.kind", f"read_dataset gave {type(ds).__name__}")
        return ds.y, ds.indptr, ds.indices, ds.values, ds.n_features, ds.n_qid, ds.labels, ds.label_counts
    ys, ptrs, idx, vals = [], [np.zeros(1, np.int64)], [], []
    rows = nnz = 0
    for block in ds.iter_blocks(max_rows=max_rows):
        require(block.first_row == rows, "text.stream.first_row", f"block at row {block.first_row}, expected {rows}")
        require(max_rows is None or block.n_rows <= max_rows, "text.stream.max_rows")
        require(block.indptr[0] == 0, "text.stream.indptr", "a block's offsets do not start at 0")
        ys.append(block.y)
        ptrs.append(block.indptr[1:] + nnz)
        idx.append(block.indices)
        vals.append(block.values)
        rows += block.n_rows
        nnz += int(block.indptr[-1])
    require(ds.n_rows == rows and ds.nnz == nnz, "text.stream.counts",
            f"stream says {ds.n_rows} rows / {ds.nnz} nnz, blocks hold {rows} / {nnz}")
    vdtype = np.float32 if float32 else np.float64
    cat = (lambda parts, dt: np.concatenate(parts).astype(dt, copy=False) if parts else np.empty(0, dt))
    return (cat(ys, np.float64), np.concatenate(ptrs), cat(idx, np.int32), cat(vals, vdtype), ds.n_features,
            ds.n_qid, ds.labels, ds.label_counts)


def check_text(data, work):
    """LIBSVM text through llsvm.io.open_dataset, in memory and streamed, with and without a tiny line limit and
    class labels, against fuzz.reference.

    Rules: llsvm accepts exactly what the reference accepts (text.accepts_invalid / text.rejects_valid);
    accepted input gives bit-identical labels, offsets, indices and values (float32 when asked), the same
    n_features, qid count and label table, on all four readings (text.values, text.n_features, ...); a rejection
    is a DataFormatError on the reference's line, with a column inside the offending token (text.error_line,
    text.error_column) and a message of bounded length (text.message_length); a corrupt compressed stream is a
    DataFormatError. Input beginning with the binary magic belongs to the binary target and is skipped here, as
    is compressed input that expands beyond 1 MiB.
    """
    try:
        kind, text = decode_source(data)
    except TooLarge:
        return
    if kind == "binary":
        return
    path = work.write("input.txt", data)
    for stream, zero_based, float32, chunk, max_rows, max_line, class_labels in _text_variants(data):
        how = (f"{'streamed' if stream else 'in memory'}, zero_based={zero_based}, float32={float32}, "
               f"chunk={chunk}, max_rows={max_rows}, max_line={max_line}, class_labels={class_labels}")
        ref = None if text is None else reference.parse(text, zero_based=zero_based, float32=float32,
                                                        class_labels=class_labels, max_line=max_line)
        try:
            got = _read_text(path, stream, zero_based, float32, chunk, max_rows, max_line, class_labels)
        except DataFormatError as exc:
            require(len(exc.message) <= MAX_MESSAGE, "text.message_length",
                    f"{len(exc.message)} characters ({how})")
            if ref is None:
                return                 # corrupt compressed input, rightly refused
            require(isinstance(ref, Rejected), "text.rejects_valid", f"{exc} ({how})")
            require(exc.line == ref.line, "text.error_line",
                    f"llsvm says line {exc.line}, the reference line {ref.line} ({ref.reason}; {how})")
            require(ref.col0 <= exc.column <= ref.col1, "text.error_column",
                    f"llsvm says column {exc.column}, the bad token spans {ref.col0}..{ref.col1} ({how})")
            continue
        require(ref is not None, "text.accepts_corrupt_stream", f"the {kind} stream is corrupt ({how})")
        require(isinstance(ref, Parsed), "text.accepts_invalid",
                f"the reference rejects line {getattr(ref, 'line', '?')}: {getattr(ref, 'reason', '')} ({how})")
        y, indptr, indices, values, n_features, n_qid, labels, counts = got
        require(same_bits(y, ref.y), "text.labels", how)
        require(same_bits(indptr, ref.indptr), "text.indptr", how)
        require(same_bits(indices, ref.indices), "text.indices", how)
        require(same_bits(values, ref.values), "text.values", how)
        require(n_features == ref.n_features, "text.n_features", f"{n_features} != {ref.n_features} ({how})")
        require(n_qid == ref.n_qid, "text.n_qid", f"{n_qid} != {ref.n_qid} ({how})")
        require(same_labels(labels, ref.labels), "text.label_table", how)
        if ref.label_counts is not None:
            require(same_bits(np.asarray(counts, np.int64), ref.label_counts), "text.label_counts", how)


# ---------------------------------------------------------------------------------------------------------------
# The binary data format

_HEADER = struct.Struct("<8sIIQQQQQQdQQ")
FLAG_WIDTH = 16              # n_features declared wider than the data by the writer's caller (the hostile-file fix)


def _arrays(ds):
    """(y, indptr, indices, values, row_ids, alpha) of an in-memory or mapped dataset, contiguous."""
    ds = ds.contiguous()
    return ds.y, ds.indptr, ds.indices, ds.values, ds.row_ids, ds.alpha


def _same_arrays(a, b):
    return all((x is None and y is None) or (x is not None and y is not None and same_bits(x, y))
               for x, y in zip(a, b))


def _concat_blocks(blocks, vdtype, row_ids, alpha):
    ys, ptrs, idx, vals, ids, als = [], [np.zeros(1, np.int64)], [], [], [], []
    nnz = 0
    for b in blocks:
        ys.append(b.y)
        ptrs.append(b.indptr[1:] + nnz)
        idx.append(b.indices)
        vals.append(b.values)
        ids.append(b.row_ids)
        als.append(b.alpha)
        nnz += int(b.indptr[-1])

    def cat(parts, dt):
        return np.concatenate(parts).astype(dt, copy=False) if parts else np.empty(0, dt)
    return (cat(ys, np.float64), np.concatenate(ptrs), cat(idx, np.int32), cat(vals, vdtype),
            cat(ids, np.int64) if row_ids else None, cat(als, np.float64) if alpha else None)


def _row_sq_norms(indptr, values):
    """Squared norm of every row, in float64, summed by NumPy (an order of its own)."""
    sq = values.astype(np.float64) ** 2
    out = np.zeros(len(indptr) - 1)
    nonempty = np.diff(indptr) > 0
    if sq.size:
        out[nonempty] = np.add.reduceat(sq, indptr[:-1][nonempty])
    return out


def binary_invariants(data, ds, arrays):
    """The rules an accepted binary file must meet (ds: the open BinaryDataset; arrays: its rows).

    - binary.flags: no flag bits beyond 1, 2, 4, 8 and 16 (read from the raw header);
    - binary.rows / binary.nnz: the header's n_rows and nnz are the rows and non-zeros read;
    - binary.n_features: n_features <= 2^31 - 1; without flag 16 (a width declared by the writer's caller) it is
      exactly the largest index + 1 (0 without non-zeros), with flag 16 larger than that: a header cannot make a
      small file claim billions of features;
    - binary.indices: indices in [0, n_features), strictly increasing within each row;
    - binary.labels_finite / binary.values_finite: labels and values are finite (as text demands);
    - binary.label_table: without flag 4, the footer's labels are the distinct labels in order of first
      occurrence with their counts (n_labels <= 65536); with flag 4 there is no table and the file has more
      than 65536 distinct labels;
    - binary.max_sq_norm: the header's max_sq_norm is the largest squared row norm (relative 1e-6; never NaN);
    - binary.n_qid: the header's qid count is at most n_rows (text allows one qid token per row).
    """
    y, indptr, indices, values, row_ids, alpha = arrays
    (_, _, flags, n_rows, n_features, nnz, _, _, _, max_sq, n_qid, n_labels) = _HEADER.unpack_from(data)
    require(n_qid <= n_rows, "binary.n_qid", f"n_qid {n_qid} for {n_rows} rows")
    require(flags & ~(FLAG_FLOAT32 | FLAG_ROW_IDS | FLAG_CONTINUOUS | FLAG_ALPHA | FLAG_WIDTH) == 0,
            "binary.flags", f"flags 0x{flags:x}")
    require(y.shape[0] == n_rows == ds.n_rows and indptr.shape[0] == n_rows + 1, "binary.rows",
            f"header {n_rows}, read {y.shape[0]}")
    require(indptr[0] == 0 and indptr[-1] == nnz == indices.shape[0] == values.shape[0], "binary.nnz",
            f"header {nnz}, read {indices.shape[0]}")
    require(bool((np.diff(indptr) >= 0).all()), "binary.indptr", "row offsets decrease")
    require(n_features <= INT32_MAX, "binary.n_features", f"{n_features} is beyond int32")
    width = int(indices.max()) + 1 if indices.size else 0
    if flags & FLAG_WIDTH:
        require(n_features > width, "binary.n_features", f"flag 16 but n_features {n_features}, data width {width}")
    else:
        require(n_features == width, "binary.n_features", f"n_features {n_features}, the largest index + 1 {width}")
    if indices.size:
        require(int(indices.min()) >= 0 and int(indices.max()) < n_features, "binary.indices",
                f"an index outside [0, {n_features})")
        inner = np.ones(indices.size, bool)
        inner[indptr[:-1][np.diff(indptr) > 0]] = False           # a row's first index has no predecessor
        steps = np.diff(indices.astype(np.int64), prepend=-1)
        require(bool((steps[inner] > 0).all()), "binary.indices", "indices not strictly increasing in a row")
    require(bool(np.isfinite(y).all()), "binary.labels_finite", "a NaN or infinite label")
    require(bool(np.isfinite(values).all()), "binary.values_finite", "a NaN or infinite value")
    if flags & FLAG_CONTINUOUS:
        require(n_labels == 0, "binary.label_table", f"flag 4 (continuous) with {n_labels} labels")
        require(np.unique(y).size > reference.MAX_LABELS, "binary.label_table",
                f"flag 4 (continuous labels) on a file with {np.unique(y).size} distinct labels")
    else:
        want = reference.first_occurrence_table(y.tolist())
        require(want is not None, "binary.label_table", "more than 65536 distinct labels without flag 4")
        labels, counts = want
        require(same_labels(ds.labels, labels), "binary.label_table",
                f"footer {ds.labels.tolist()[:8]}, rows {labels.tolist()[:8]}")
        require(same_bits(np.asarray(ds.label_counts, np.int64), counts), "binary.label_counts",
                f"footer {ds.label_counts.tolist()[:8]}, rows {counts.tolist()[:8]}")
    norms = _row_sq_norms(indptr, values)
    actual = float(norms.max()) if norms.size else 0.0
    require(not math.isnan(max_sq) and (max_sq == actual or math.isclose(max_sq, actual, rel_tol=1e-6)),
            "binary.max_sq_norm", f"header {max_sq!r}, rows {actual!r}")


def check_binary(data, work):
    """llsvm's binary data format: open, the --info summary, verify, stream, copy and map, rewrite, train.

    A file may be refused (DataFormatError) when it is opened or when its blocks are read; then every reading must
    refuse it (binary.readings_disagree), and --info must not call it good (binary.info_disagrees: --info either
    refuses it or reports the failed check). An accepted file must meet binary_invariants, every reading
    (iter_blocks, load_blocks, load) must give the same arrays (binary.readings_differ), and writing it again
    with BinaryWriter and reading that back must give the same arrays and header (binary.rewrite). Training two
    iterations of -s 3 on it must not fail other than by an LLSVMError.
    """
    path = work.write("input.bin", data)
    info_ok = None
    if data.startswith(MAGIC):
        try:
            info = describe(path)               # llsvm-convert --info
            info_ok = "checksum_error" not in info
        except DataFormatError:
            info_ok = False
    try:
        ds = BinaryDataset(path)
    except DataFormatError:
        require(not info_ok, "binary.info_disagrees", "--info finds nothing wrong with a file that does not open")
        return
    with ds:
        outcomes = {}
        readings = {}
        for name, read in (("verify", lambda: ds.verify()),
                           ("iter_blocks", lambda: _concat_blocks(list(ds.iter_blocks()), ds.dtype,
                                                                  ds.has_row_ids, ds.has_alpha)),
                           ("load_blocks", lambda: _arrays(ds.load_blocks(0, ds.n_blocks))),
                           ("load", lambda: _arrays(ds.load()))):
            try:
                readings[name] = read()
                outcomes[name] = None
            except DataFormatError as exc:
                outcomes[name] = str(exc)
        failed = [k for k, v in outcomes.items() if v is not None]
        require(not failed or len(failed) == len(outcomes), "binary.readings_disagree",
                f"refused by {failed}, accepted by {[k for k in outcomes if k not in failed]}")
        require(info_ok == (not failed), "binary.info_disagrees",
                f"--info {'finds nothing wrong' if info_ok else 'finds a fault'}, the readings: {outcomes}")
        if failed:
            return
        arrays = readings["load"]
        for name in ("iter_blocks", "load_blocks"):
            require(_same_arrays(readings[name], arrays), "binary.readings_differ", f"{name} != load")
        binary_invariants(data, ds, arrays)
        _rewrite(data, ds, arrays, work)
        _train(ds.load())


def _rewrite(data, ds, arrays, work):
    """Write the rows again with BinaryWriter (small blocks) and read them back: same rows, same header."""
    y, indptr, indices, values, row_ids, alpha = arrays
    out = work.file("rewrite.bin")
    with BinaryWriter(out, float32=ds.float32, row_ids=ds.has_row_ids, alpha=ds.has_alpha, block_rows=3,
                      fsync=False) as w:
        if y.shape[0]:
            w.write_dataset(CSRDataset(y, indptr, indices, values, ds.n_features, row_ids=row_ids, alpha=alpha,
                                       check=False))
        w.close(n_features=ds.n_features, n_qid=ds.n_qid)
    with BinaryDataset(out) as again:
        require(_same_arrays(_arrays(again.load()), arrays), "binary.rewrite", "rows differ after a rewrite")
        with open(out, "rb") as f:
            flags = _HEADER.unpack_from(f.read(_HEADER.size))[2]
        require(flags == _HEADER.unpack_from(data)[2], "binary.rewrite",
                f"flags 0x{flags:x} after a rewrite, 0x{_HEADER.unpack_from(data)[2]:x} before")
        for field in ("n_rows", "nnz", "n_features", "n_qid", "float32", "has_row_ids", "has_alpha",
                      "continuous"):
            require(getattr(again, field) == getattr(ds, field), "binary.rewrite",
                    f"{field}: {getattr(again, field)!r} after a rewrite, {getattr(ds, field)!r} before")
        require(same_labels(again.labels, ds.labels), "binary.rewrite", "label table differs after a rewrite")
        require(again.max_sq_norm == ds.max_sq_norm or math.isclose(again.max_sq_norm, ds.max_sq_norm,
                                                                     rel_tol=1e-6),
                "binary.rewrite", f"max_sq_norm {again.max_sq_norm!r} after a rewrite, {ds.max_sq_norm!r} before")
    os.unlink(out)


def _train(view):
    """Train briefly on an accepted file, as llsvm-train would: refusals (LLSVMError) are fine, anything else,
    such as a MemoryError from a weight vector sized by n_features, is a failure."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            train(view, solver=3, max_iter=2)
        except LLSVMError:
            pass


# ---------------------------------------------------------------------------------------------------------------
# Model files

LIBLINEAR_SOLVERS = {"L2R_LR", "L2R_L2LOSS_SVC_DUAL", "L2R_L2LOSS_SVC", "L2R_L1LOSS_SVC_DUAL", "MCSVM_CS",
                     "L1R_L2LOSS_SVC", "L1R_LR", "L2R_LR_DUAL", "L2R_L2LOSS_SVR", "L2R_L2LOSS_SVR_DUAL",
                     "L2R_L1LOSS_SVR_DUAL", "ONECLASS_SVM"}
NO_LABELS = {"L2R_L2LOSS_SVR", "L2R_L2LOSS_SVR_DUAL", "L2R_L1LOSS_SVR_DUAL", "ONECLASS_SVM"}
# bytes a model file may hold: printable ASCII and what C's isspace() calls blank (LIBLINEAR's fscanf separators)
MODEL_BYTES = frozenset(range(0x20, 0x7F)) | frozenset(b" \t\n\v\f\r")


def _probe_rows():
    """Three rows to predict: one empty, one over low features, one reaching far beyond any small model."""
    return CSRDataset(np.zeros(3), np.array([0, 0, 3, 5]), np.array([0, 1, 5, 2, 70000], np.int32),
                      np.array([1.0, -2.0, 0.5, 3.0, 1e3]), 70001)


def model_invariants(data, m):
    """The rules an accepted model meets (LIBLINEAR's format, docs/formats.md section 1):

    - model.bytes: the file holds only printable ASCII and C blanks (LIBLINEAR reads tokens with fscanf: any
      other byte is part of a token, never a separator);
    - model.solver_type: one of LIBLINEAR's names;
    - model.nr_class: 1 <= nr_class <= 2^31 - 1; a regression or one-class model has one weight per feature, so
      nr_class 1 or 2 (LIBLINEAR writes 2; with more, nr_w would be nr_class);
    - model.labels: a classifier lists nr_class labels, each a 64-bit integer (llsvm's class labels; LIBLINEAR's
      are C ints);
    - model.nr_feature: 0 <= nr_feature <= 2^31 - 1, and 2^B for a hashed model with 1 <= B <= 28;
    - model.weights: bias, rho and every weight finite; W has nr_feature (+1 with a bias) rows of nr_w values.
    """
    bad = sorted(set(data) - MODEL_BYTES)
    require(not bad, "model.bytes", f"byte 0x{bad[0]:02x}" if bad else "")
    require(m.solver_type in LIBLINEAR_SOLVERS, "model.solver_type", m.solver_type)
    require(1 <= m.nr_class <= INT32_MAX, "model.nr_class", str(m.nr_class))
    if m.solver_type in NO_LABELS:
        require(m.nr_class <= 2, "model.nr_class", f"a {m.solver_type} model with nr_class {m.nr_class}")
    else:
        require(m.label is not None and len(m.label) == m.nr_class, "model.labels", "label count != nr_class")
    if m.label is not None:
        require(all(INT64_MIN <= int(v) <= INT64_MAX for v in m.label), "model.labels", "a label beyond int64")
    require(0 <= m.nr_feature <= INT32_MAX, "model.nr_feature", str(m.nr_feature))
    if m.hash_bits is not None:
        require(1 <= m.hash_bits <= 28 and m.nr_feature == 1 << m.hash_bits, "model.nr_feature",
                f"hash bits {m.hash_bits}, nr_feature {m.nr_feature}")
    require(math.isfinite(m.bias), "model.weights", f"bias {m.bias!r}")
    require(m.rho is None or math.isfinite(m.rho), "model.weights", f"rho {m.rho!r}")
    nr_w = 1 if m.nr_class == 2 and m.solver_type != "MCSVM_CS" else m.nr_class
    require(m.W.shape == (m.nr_feature + (1 if m.bias >= 0 else 0), nr_w), "model.weights", f"W {m.W.shape}")
    require(bool(np.isfinite(m.W).all()), "model.weights", "a NaN or infinite weight")


def svm_model_invariants(data, m):
    """The rules an accepted LIBSVM kernel model meets (docs/formats.md section 1.3): model.bytes as above;
    model.svm_type: LIBSVM's svm and kernel type names (no precomputed kernel); model.nr_class: 2 for one-class and
    SVR, >= 1 for classification with nr_class labels (64-bit integers) and nSV counts summing to total_sv;
    model.weights:
    rho (k(k-1)/2 values), sv_coef ((k-1) x total_sv), gamma, coef0 and the SV values finite, SV indices
    ascending."""
    bad = sorted(set(data) - MODEL_BYTES)
    require(not bad, "model.bytes", f"byte 0x{bad[0]:02x}" if bad else "")
    require(m.svm_type in SVM_TYPES and m.kernel_type in KERNEL_TYPES, "model.svm_type",
            f"{m.svm_type} {m.kernel_type}")
    k = m.nr_class
    if m.svm_type in ("c_svc", "nu_svc"):
        require(1 <= k <= INT32_MAX and len(m.label) == k and len(m.nSV) == k, "model.nr_class", str(k))
        require(all(INT64_MIN <= int(v) <= INT64_MAX for v in m.label), "model.labels", "a label beyond int64")
        require(int(m.nSV.sum()) == m.total_sv and (m.nSV >= 0).all(), "model.nr_class", "nSV")
    else:
        require(k == 2 and m.label is None and m.nSV is None, "model.nr_class", str(k))
    n_pairs = k * (k - 1) // 2 if m.label is not None else 1
    require(m.rho.shape == (n_pairs,) and bool(np.isfinite(m.rho).all()), "model.weights", "rho")
    require(m.sv_coef.shape == (k - 1, m.total_sv) and bool(np.isfinite(m.sv_coef).all()), "model.weights",
            f"sv_coef {m.sv_coef.shape}")
    require(math.isfinite(m.gamma) and m.gamma >= 0 and math.isfinite(m.coef0), "model.weights", "gamma, coef0")
    require(bool(np.isfinite(m.SV.values).all()), "model.weights", "an SV value")


def check_svm_model(data, m, work):
    """A LIBSVM kernel model: svm_model_invariants; saved and loaded again it gives the same text (model.roundtrip);
    the three probe rows get three predictions, among the labels for a classifier, +-1 for one-class."""
    svm_model_invariants(data, m)
    again_path = work.file("again.model")
    m.save(again_path)
    again = load_model(again_path)
    require(again.to_text() == m.to_text(), "model.roundtrip", "the saved text changes when saved again")
    with np.errstate(all="ignore"):
        pred = np.asarray(m.predict(_probe_rows()))
    require(pred.shape == (3,), "model.predict", f"{pred.shape} predictions for 3 rows")
    if m.svm_type == "one_class":
        require(set(pred.tolist()) <= {1.0, -1.0}, "model.predict", f"one-class predictions {pred.tolist()}")
    elif m.label is not None:
        require(set(pred.tolist()) <= set(float(v) for v in m.label), "model.predict",
                f"predictions {pred.tolist()} not among the labels")


def tree_model_invariants(data, m):
    """The rules an accepted tree model meets (docs/formats.md section 1.4): model.bytes as above;
    model.nr_class: 1..65536 distinct 64-bit integer labels, one tree per pair in LIBSVM's pair order; model.tree: every
    node's hard label and every leaf among its pair's labels, w's indices ascending within nr_feature, b and the
    values finite; model.rbf: an RBF node (a classification kernel model meeting svm_model_invariants, with the
    tree model's labels in order) exactly when the file has one, and always when a tree ends in it."""
    bad = sorted(set(data) - MODEL_BYTES)
    require(not bad, "model.bytes", f"byte 0x{bad[0]:02x}" if bad else "")
    k = m.nr_class
    labels = [int(v) for v in m.label]
    require(1 <= k <= 65536 and len(set(labels)) == k, "model.nr_class", str(k))
    require(all(INT64_MIN <= v <= INT64_MAX for v in labels), "model.labels", "a label beyond int64")
    require(0 <= m.nr_feature <= INT32_MAX, "model.nr_feature", str(m.nr_feature))
    pairs = [(labels[i], labels[j]) for i in range(k) for j in range(i + 1, k)]
    require([(t.a, t.b) for t in m.trees] == pairs, "model.tree", "trees not one per pair in LIBSVM's order")
    for t in m.trees:
        for n in t.nodes:
            require(n.hard in (t.a, t.b), "model.tree", f"hard label {n.hard} in tree ({t.a}, {t.b})")
            require(math.isfinite(n.b) and bool(np.isfinite(n.val).all()), "model.tree", "a value not finite")
            require(n.idx.size == 0 or (int(n.idx[0]) >= 0 and int(n.idx[-1]) < m.nr_feature
                                        and bool((np.diff(n.idx) > 0).all())), "model.tree", "w's indices")
        require(t.final == ("rbf",) or (t.final[0] == "leaf" and t.final[1] in (t.a, t.b)), "model.tree",
                f"final {t.final} of tree ({t.a}, {t.b})")
    needs = any(t.final == ("rbf",) for t in m.trees)
    require(not needs or m.rbf is not None, "model.rbf", "a tree ends in the RBF node, and there is none")
    require((m.rbf is not None) == (b"\nrbf_model\n" in data), "model.rbf", "an RBF node not in the file, or lost")
    if m.rbf is not None:
        require(m.rbf.label is not None and [int(v) for v in m.rbf.label] == labels, "model.rbf", "its labels")
        svm_model_invariants(m.rbf.to_text().encode(), m.rbf)


def check_tree_model(data, m, work):
    """A tree model (-s h1tree): tree_model_invariants; saved and loaded again it gives the same text
    (model.roundtrip); the three probe rows (one reaching feature 70001, beyond any small model: ignored, never a
    wider W) get finite pair values in [-1, 1] or the RBF node's, and labels among the model's (model.predict). A
    MemoryLimitError (the nodes' W sized by their largest index, checked before it is made) is a refusal."""
    tree_model_invariants(data, m)
    again_path = work.file("again.model")
    m.save(again_path)
    again = load_model(again_path)
    require(isinstance(again, TreeModel) and again.to_text() == m.to_text(), "model.roundtrip",
            "the saved text changes when saved again")
    try:
        with np.errstate(all="ignore"):
            dec = np.asarray(m.decision_function(_probe_rows()))
            pred = np.asarray(m.labels_from_decisions(dec))
    except MemoryLimitError:
        return
    require(dec.shape == (3, len(m.trees)), "model.predict", f"decision values of shape {dec.shape}")
    if m.rbf is None:
        require(bool(np.isin(dec, (-1.0, 1.0)).all()), "model.predict", f"pair values {dec.tolist()}")
    require(pred.shape == (3,) and set(pred.tolist()) <= set(float(v) for v in m.label), "model.predict",
            f"predictions {pred.tolist()} not among the labels")


# "path:LINE: message" (every reader names the line of the first problem, docs/formats.md section 1); the one
# exception: a byte that is not ASCII, named by its offset before any line is read
_AT_LINE = re.compile(r":(\d+): ")


def refusal_names_line(path, exc):
    """model.error_line: a refusal names the file, then the line (or the offset of a non-ASCII byte);
    model.message_length: the rest of its message is at most MAX_MESSAGE characters (a token it quotes is cut)."""
    text = str(exc)
    require(text.startswith(path + ":"), "model.error_line",
            f"the message does not start with the file: {text[:200]!r}")
    rest = text[len(path):]
    require(_AT_LINE.match(rest) is not None or rest.startswith(": not a model file (non-ASCII byte at offset"),
            "model.error_line", f"no line in {text[:200]!r}")
    require(len(rest) <= MAX_MESSAGE, "model.message_length", f"{len(rest)} characters: {rest[:200]!r}...")


def _load_or_refusal(path):
    """load_model(path), or the ModelFormatError it raises (its message checked by refusal_names_line)."""
    try:
        return load_model(path)
    except ModelFormatError as exc:
        refusal_names_line(path, exc)
        return exc


# one input in LONG_INTEGER_SHARE gets check_long_integers (two more readings of a 5 KB file: on every input they
# tripled the model target's time)
LONG_INTEGER_SHARE = 16


def check_long_integers(data, m, work):
    """model.long_integer (issue 44): for one input in LONG_INTEGER_SHARE, one integer token of it, both chosen by
    the input's CRC-32 (so a saved input replays the same way), written 5,000 digits long, beyond Python's int()
    limit of 4,300 digits (an input of this target is shorter than that: fuzz.mutators):

    - as 5,000 nines, sign kept: beyond every C integer, infinite as a double: the file is refused, naming its
      line, in a message of bounded length (model.error_line, model.message_length);
    - a token of a LIBLINEAR or LIBSVM header (not of a tree model, whose version and bias lines are literal) with
      5,000 zeros before its digits: the same value as C's strtol reads it, so the file reads as the input did
      (`m`: the model, or the refusal): the same model text, or a refusal."""
    pick = zlib.crc32(data)
    if pick % LONG_INTEGER_SHARE:
        return
    pick //= LONG_INTEGER_SHARE
    tokens = integer_tokens(data)
    if not tokens:
        return
    wide = work.write("wide.model", widen_integer(data, tokens[pick % len(tokens)], "nines"))
    got = _load_or_refusal(wide)
    require(isinstance(got, ModelFormatError), "model.long_integer",
            f"a token widened to {LONG_DIGITS} nines is accepted")
    if isinstance(m, TreeModel) or data.lstrip().startswith(b"llsvm_tree_model"):
        return
    tokens = integer_tokens(data, header_only=True)
    if not tokens:
        return
    zeros = work.write("wide.model", widen_integer(data, tokens[pick % len(tokens)], "zeros"))
    got = _load_or_refusal(zeros)
    if isinstance(m, ModelFormatError):
        require(isinstance(got, ModelFormatError), "model.long_integer",
                f"refused as written ({m}), accepted with {LONG_DIGITS} leading zeros in a header integer")
    else:
        require(not isinstance(got, ModelFormatError), "model.long_integer",
                f"accepted as written, refused with {LONG_DIGITS} leading zeros in a header integer: {got}")
        require(got.to_text() == m.to_text(), "model.long_integer",
                f"{LONG_DIGITS} leading zeros in a header integer change the model")


def check_model(data, work):
    """Model files through llsvm.load_model (LIBLINEAR's format, the hashed format, LIBSVM's kernel models:
    check_svm_model; tree models: check_tree_model).

    A ModelFormatError is a rejection, which names the file and the line (model.error_line). An accepted model
    must meet model_invariants; saving and loading it again gives the same model and the same text
    (model.roundtrip); predicting three rows (one empty, one reaching feature 70001) gives three labels, each one
    of the model's labels for a classifier, +-1 for a one-class model (model.predict), without an allocation
    beyond the runner's memory limit.
    """
    path = work.write("input.model", data)
    m = _load_or_refusal(path)
    check_long_integers(data, m, work)
    if isinstance(m, ModelFormatError):
        return
    if isinstance(m, SVMModel):
        check_svm_model(data, m, work)
        return
    if isinstance(m, TreeModel):
        check_tree_model(data, m, work)
        return
    model_invariants(data, m)
    again_path = work.file("again.model")
    m.save(again_path)
    again = load_model(again_path)
    for field in ("solver_type", "nr_class", "nr_feature", "hash_bits"):
        require(getattr(again, field) == getattr(m, field), "model.roundtrip", field)
    require(same_bits(np.float64(again.bias), np.float64(m.bias)), "model.roundtrip", "bias")
    require((again.rho is None) == (m.rho is None) and
            (m.rho is None or same_bits(np.float64(again.rho), np.float64(m.rho))), "model.roundtrip", "rho")
    require((again.label is None) == (m.label is None) and
            (m.label is None or same_bits(again.label, m.label)), "model.roundtrip", "labels")
    require(same_bits(again.W, m.W), "model.roundtrip", "weights")
    require(again.to_text() == m.to_text(), "model.roundtrip", "the saved text changes when saved again")
    pred = np.asarray(m.predict(_probe_rows()))
    require(pred.shape == (3,), "model.predict", f"{pred.shape} predictions for 3 rows")
    if m.solver_type == "ONECLASS_SVM":
        require(set(pred.tolist()) <= {1.0, -1.0}, "model.predict", f"one-class predictions {pred.tolist()}")
    elif m.solver_type not in NO_LABELS:
        require(set(pred.tolist()) <= set(float(v) for v in m.label), "model.predict",
                f"predictions {pred.tolist()} not among the labels")


# ---------------------------------------------------------------------------------------------------------------
# The harness's own check

def check_selftest(data, work):
    """Not a test of llsvm: inputs that crash the process, hang or ask for 8 TiB, so that tests/test_fuzz.py can
    show the runner counts each kind as a failure (python -m fuzz --targets selftest)."""
    if data.startswith(b"CRASH"):
        os.abort()
    if data.startswith(b"HANG"):
        while True:
            time.sleep(0.05)
    if data.startswith(b"ALLOC"):
        np.ones(1 << 40)


from . import options  # noqa: E402  (fuzz/options.py, llsvm-train's options; it uses OracleFailure above)


def check_options(data, work):
    options.check_options(data, work)


CHECKS = {"text": check_text, "binary": check_binary, "model": check_model, "options": check_options,
          "selftest": check_selftest}
