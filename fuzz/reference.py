"""A strict, slow, pure-Python reference reader of LIBSVM text: the fuzzer's oracle for cext/_libsvm.pyx.

Written from docs/formats.md (section 3), not from the scanner: it splits lines and tokens with ``bytes``
methods and regular expressions and converts numbers with Python's ``float`` (correctly rounded, as C's strtod),
so it shares no code with the Cython scanner. The rules:

- lines end at ``\\n``; a missing final newline is allowed;
- blanks are space, ``\\t``, ``\\v``, ``\\f`` and ``\\r``; ``#`` starts a comment that runs to the end of the line
  (it also ends the token it touches: ``1:2#c`` is ``1:2``); a line that is blank or only a comment is skipped but
  counted;
- the first token is the label: a decimal number (optional sign, digits with an optional fraction or a fraction
  alone, optional exponent), finite as a double;
- the token right after the label may be ``qid:N`` with N one or more ASCII digits (ignored, counted);
- every other token is ``index:value``: the index one or more ASCII digits, at least 1 (0 with ``zero_based``),
  stored 0-based, and the stored index at most 2^31 - 2 (so that n_features still fits int32); indices strictly
  increasing within the row; the value a decimal number as for labels, finite as a double and, with
  ``float32``, finite once rounded to float32;
- there must be at least one row;
- with ``max_line``, a line holding more than that many bytes before its newline (``\r`` and comments count) is
  refused at column 1, whatever else is wrong in it;
- with ``class_labels`` (reading to train a classifier), a label must have magnitude below 2^63, so that its
  integer part fits int64 (llsvm's class labels are 64-bit integers, issue 45; LIBLINEAR's C int cast overflows
  beyond 2^31).

``parse`` returns a ``Parsed`` (arrays equal to what llsvm must produce) or a ``Rejected`` giving the 1-based line
of the first bad token and the 1-based byte columns where llsvm may report it: anywhere in the token or just
after it (where a missing value would be), on that token's line.

``decode_source`` undoes gzip, bzip2 and xz as llsvm does (by magic bytes), with a size cap.
"""
import bz2
import gzip
import io
import lzma
import re
import zlib
from dataclasses import dataclass, field

import numpy as np

BLANKS = b" \t\v\f\r"
TOKEN = re.compile(rb"[^ \t\v\f\r]+")
NUMBER = re.compile(rb"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
DIGITS = re.compile(rb"[0-9]+")
QID = re.compile(rb"qid:[0-9]+")
MAX_STORED_INDEX = 2 ** 31 - 2          # largest 0-based index: n_features = index + 1 <= INT32_MAX
MAX_LABELS = 65536                      # more distinct labels than this: no label table

GZIP_MAGIC = b"\x1f\x8b"
BZIP2_MAGIC = b"BZh"
XZ_MAGIC = b"\xfd7zXZ\x00"
BINARY_MAGIC = b"LLSVMBIN"


@dataclass
class Rejected:
    """Where the reference rejects the input: `line` (1-based) and the token's 1-based columns [col0, col1]."""
    line: int
    col0: int
    col1: int
    reason: str


@dataclass
class Parsed:
    y: np.ndarray               # float64 labels
    indptr: np.ndarray          # int64, from 0
    indices: np.ndarray         # int32, 0-based
    values: np.ndarray          # float64, or float32 when parsed with float32
    n_features: int
    n_qid: int
    labels: np.ndarray = field(default=None)        # distinct labels in first-occurrence order (None if too many)
    label_counts: np.ndarray = field(default=None)


def _number(tok):
    """The double a decimal-number token denotes, or None when it is not one (NaN, inf, hex, '1_0' are not)."""
    if NUMBER.fullmatch(tok) is None:
        return None
    return float(tok.decode("ascii"))


def _finite(v):
    return v is not None and v - v == 0.0


def _as_float32(v):
    """v rounded to float32 as C's (float) cast does (round to nearest even; beyond the range: infinite)."""
    with np.errstate(over="ignore"):
        return np.float32(v)


def _index(digits):
    """The integer an index's digits denote, capped (huge digit strings are beyond any int32 anyway)."""
    digits = digits.lstrip(b"0") or b"0"
    return int(digits) if len(digits) <= 12 else 10 ** 12


def parse(text, *, zero_based=False, float32=False, class_labels=False, max_line=None):
    """Parse LIBSVM text (bytes, already decompressed): a Parsed, or the Rejected of its first bad token."""
    lines = text.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()                       # the final newline ends the last line; it does not start another
    one = 0 if zero_based else 1
    y, indptr, indices, values = [], [0], [], []
    n_qid = 0
    max_index = -1
    for lineno, line in enumerate(lines, 1):
        if max_line is not None and len(line) > max_line:
            return Rejected(lineno, 1, 1, f"line longer than {max_line} bytes")
        body = line.split(b"#", 1)[0]
        toks = [(m.start() + 1, m.end(), m.group()) for m in TOKEN.finditer(body)]
        if not toks:
            continue                      # blank or comment-only line

        def bad(tok, reason):    # the column may be anywhere in the token, or just after it (a missing value)
            return Rejected(lineno, tok[0], tok[1] + 1, reason)

        label = _number(toks[0][2])
        if label is None:
            return bad(toks[0], "label is not a number")
        if not _finite(label):
            return bad(toks[0], "label is not finite")
        if class_labels and not abs(label) < 2.0 ** 63:
            return bad(toks[0], "class label beyond the int range")
        rest = toks[1:]
        if rest and rest[0][2].startswith(b"qid:"):
            if QID.fullmatch(rest[0][2]) is None:
                return bad(rest[0], "malformed qid")
            n_qid += 1
            rest = rest[1:]
        prev = -1
        for tok in rest:
            idx_part, colon, val_part = tok[2].partition(b":")
            if DIGITS.fullmatch(idx_part) is None:
                return bad(tok, "index is not an unsigned integer")
            if not colon:
                return bad(tok, "missing ':'")
            idx = _index(idx_part) - one
            if idx < 0:
                return bad(tok, "index 0 in 1-based data")
            if idx > MAX_STORED_INDEX:
                return bad(tok, "index beyond the int32 range")
            if idx <= prev:
                return bad(tok, "indices not strictly increasing")
            v = _number(val_part)
            if v is None:
                return bad(tok, "value is not a number")
            if not _finite(v):
                return bad(tok, "value is not finite")
            if float32 and not np.isfinite(_as_float32(v)):
                return bad(tok, "value beyond the float32 range")
            prev = idx
            indices.append(idx)
            values.append(v)
        max_index = max(max_index, prev)
        y.append(label)
        indptr.append(len(indices))
    if not y:
        return Rejected(len(lines) + 1, 1, 1, "empty input: no rows")
    y = np.array(y, np.float64)
    with np.errstate(over="ignore"):
        vals = np.array(values, np.float64).astype(np.float32 if float32 else np.float64)
    labels, counts = first_occurrence_table(y.tolist()) or (None, None)
    return Parsed(y, np.array(indptr, np.int64), np.array(indices, np.int32), vals, max_index + 1, n_qid,
                  labels, counts)


def first_occurrence_table(labels):
    """(distinct labels in order of first occurrence, their counts), or None for more than 65536 of them.
    -0.0 and 0.0 are one label (NumPy's unique has them so)."""
    table = {}
    for lab in labels:
        table[lab] = table.get(lab, 0) + 1
    if len(table) > MAX_LABELS:
        return None
    return np.array(list(table.keys()), np.float64), np.array(list(table.values()), np.int64)


class TooLarge(Exception):
    """The decompressed input is over the cap: the fuzzer skips it (a decompression bomb is not a parser test)."""


def _streams(data, kind, cap):
    """bzip2 or xz as `bzip2 -d` / `xz -d` read them (and llsvm, sources._Streams): one stream after another, xz's
    stream padding (null bytes, a multiple of 4) between them; None when a stream is corrupt or truncated or when
    anything else follows a stream (Python's BZ2File and LZMAFile ignore such trailing garbage: llsvm refuses it,
    as the tools warn of it)."""
    magic = XZ_MAGIC if kind == "xz" else BZIP2_MAGIC
    out, rest = b"", data
    while True:
        dec = lzma.LZMADecompressor(lzma.FORMAT_XZ) if kind == "xz" else bz2.BZ2Decompressor()
        try:
            out += dec.decompress(rest, cap + 1 - len(out))
        except (EOFError, OSError, lzma.LZMAError):
            return None
        if len(out) > cap:
            raise TooLarge(kind)
        if not dec.eof:
            if dec.needs_input:
                return None                          # truncated
            raise TooLarge(kind)                     # more output than the cap
        rest = dec.unused_data
        if kind == "xz":
            kept = rest.lstrip(b"\0")
            if (len(rest) - len(kept)) % 4:
                return None
            rest = kept
        if not rest:
            return out
        if not rest.startswith(magic):
            return None


def decode_source(data, cap=1 << 20):
    """(kind, text) as llsvm's reader sees `data`: kind is 'text', 'gzip', 'bzip2', 'xz' or 'binary'; text is
    the decompressed bytes, or None when the compressed stream is corrupt or truncated (llsvm must reject it).
    Raises TooLarge when the text would exceed `cap` bytes."""
    head = data[:8]
    if head.startswith(BINARY_MAGIC):
        return "binary", None
    if head.startswith(GZIP_MAGIC):
        kind, opener = "gzip", lambda f: gzip.GzipFile(fileobj=f, mode="rb")
    elif head.startswith(BZIP2_MAGIC):
        return "bzip2", _streams(data, "bzip2", cap)
    elif head.startswith(XZ_MAGIC):
        return "xz", _streams(data, "xz", cap)
    else:
        return "text", data
    try:
        with opener(io.BytesIO(data)) as f:
            text = f.read(cap + 1)
    except (EOFError, OSError, zlib.error, lzma.LZMAError):
        return kind, None
    if len(text) > cap:
        raise TooLarge(kind)
    return kind, text
