"""A structure-aware mutator for the binary format: libFuzzer's byte mutation, then (most of the time) a header
field set to an edge value and every checksum recomputed.

Without the second step nearly every mutated file fails its CRC-32 and the checks behind the checksums are never
reached; with it the fuzzer produces crafted files with valid checksums, the case a hostile file presents.
The mutated file is the input itself, so a saved failure is a file llsvm can be handed directly.

For model files: integer_tokens and widen_integer write an integer of a model file 5,000 digits long (issue 44),
longer than an input of the model target may be.
"""
import random
import re
import struct

from llsvm.binfmt import BLOCK_HEADER_SIZE, BLOCK_MAGIC, HEADER_SIZE, MAGIC

try:
    from isal.isal_zlib import crc32
except ImportError:                                   # pragma: no cover - isal is a dependency of llsvm
    from zlib import crc32

# header fields: (offset, struct format)
HEADER_FIELDS = {"flags": (12, "<I"), "n_rows": (16, "<Q"), "n_features": (24, "<Q"), "nnz": (32, "<Q"),
                 "n_blocks": (40, "<Q"), "footer_offset": (48, "<Q"), "footer_size": (56, "<Q"),
                 "max_sq_norm": (64, "<d"), "n_qid": (72, "<Q"), "n_labels": (80, "<Q")}
EDGE_INTS = [0, 1, 2, 3, 4, 7, 8, 15, 16, 255, 1024, 2 ** 31 - 2, 2 ** 31 - 1, 2 ** 31, 2 ** 32 - 1, 2 ** 32,
             2 ** 62, 2 ** 63 - 1, 2 ** 63, 2 ** 64 - 1]
EDGE_FLOATS = [0.0, -0.0, 1.0, -1.0, 0.5, 1e300, 5e-324, float("inf"), float("-inf"), float("nan")]


def fix_checksums(buf):
    """Recompute the header, block and footer CRC-32s of a (possibly damaged) binary file, where they can be
    found: blocks are walked from offset 128 by their payload_size fields, the footer is located by the header's
    footer_offset/footer_size or, failing that, by its magic bytes."""
    buf = bytearray(buf)
    if len(buf) < HEADER_SIZE or not buf.startswith(MAGIC):
        return bytes(buf)
    pos = HEADER_SIZE
    while pos + BLOCK_HEADER_SIZE <= len(buf) and buf[pos:pos + 8] == BLOCK_MAGIC:
        psize = struct.unpack_from("<Q", buf, pos + 32)[0]
        end = pos + BLOCK_HEADER_SIZE + psize
        if end > len(buf):
            break
        struct.pack_into("<I", buf, pos + 40, crc32(bytes(buf[pos + BLOCK_HEADER_SIZE:end])))
        pos = end
    f_off, f_size = struct.unpack_from("<QQ", buf, 48)
    if not (HEADER_SIZE <= f_off and f_off + f_size == len(buf) and f_size >= 16):
        f_off = buf.rfind(b"LLSVMFTR", HEADER_SIZE)
    if f_off >= HEADER_SIZE and len(buf) - f_off >= 16:
        struct.pack_into("<I", buf, len(buf) - 8, crc32(bytes(buf[f_off:len(buf) - 8])))
    struct.pack_into("<I", buf, 124, crc32(bytes(buf[:124])))
    return bytes(buf)


def _set_field(buf, rng):
    """Set one header field, block-index entry or label-table entry to an edge value."""
    buf = bytearray(buf)
    choice = rng.random()
    if choice < 0.6 or len(buf) < HEADER_SIZE + 16:
        name = rng.choice(sorted(HEADER_FIELDS))
        offset, fmt = HEADER_FIELDS[name]
        if fmt == "<d":
            value = rng.choice(EDGE_FLOATS)
        elif rng.random() < 0.5:
            old = struct.unpack_from(fmt, buf, offset)[0]
            value = (old + rng.choice([-2, -1, 1, 2, 64])) % (1 << (8 * struct.calcsize(fmt)))
        else:
            value = rng.choice(EDGE_INTS) % (1 << (8 * struct.calcsize(fmt)))
        struct.pack_into(fmt, buf, offset, value)
        return bytes(buf)
    # somewhere in the footer or a block: an aligned 8-byte word set to an edge integer or float
    f_off = buf.rfind(b"LLSVMFTR", HEADER_SIZE)
    lo = f_off + 8 if f_off >= 0 and rng.random() < 0.6 else HEADER_SIZE
    hi = len(buf) - 8
    if hi <= lo:
        return bytes(buf)
    at = lo + 8 * rng.randrange((hi - lo) // 8 or 1)
    if rng.random() < 0.5:
        struct.pack_into("<d", buf, at, rng.choice(EDGE_FLOATS))
    else:
        struct.pack_into("<Q", buf, at, rng.choice(EDGE_INTS) % (1 << 64))
    return bytes(buf)


def binary_mutator(mutate):
    """A libFuzzer custom mutator over `mutate` (atheris.Mutate): data, max_size, seed -> new data."""
    def mutator(data, max_size, seed):
        rng = random.Random(seed)
        out = mutate(data, max_size)
        if len(out) >= HEADER_SIZE and out.startswith(MAGIC) and rng.random() < 0.5:
            out = _set_field(out, rng)
        if rng.random() < 0.85:
            out = fix_checksums(out)
        return out[:max_size]
    return mutator


# -- model files: integers longer than any C integer (issue 44) --------------------------------------------------
# Python's int() reads at most 4,300 digits; the model readers once crashed on a longer integer. A model input is
# at most 4096 bytes (the runner's --max-len), so the fuzzer cannot write one itself: the model target
# (fuzz.targets.check_long_integers) widens a token of its input; fuzz.seeds.long_integer_models writes such files.
LONG_DIGITS = 5000
_BLANK = rb" \t\n\v\f\r"
_INT_TOKEN = re.compile(rb"(?<![^" + _BLANK + rb"])[+-]?\d+(?![^" + _BLANK + rb"])")
# the line that ends a LIBLINEAR (w) or LIBSVM (SV) header
_HEADER_END = re.compile(rb"^[ \t\v\f\r]*(w|SV)[ \t\v\f\r]*$", re.MULTILINE)


def integer_tokens(data, header_only=False):
    """The (start, end) spans of the blank-separated integer tokens of a model file (of its header only: the
    lines before its `w` or `SV` line, the whole file when there is none)."""
    end = len(data)
    if header_only:
        m = _HEADER_END.search(data)
        end = m.start() if m else end
    return [m.span() for m in _INT_TOKEN.finditer(data, 0, end)]


def widen_integer(data, span, how):
    """data with the integer token at `span` written LONG_DIGITS digits long: how="zeros", LONG_DIGITS zeros
    between its sign and its digits (the same value as C's strtol reads it); how="nines", its sign then
    LONG_DIGITS nines (beyond every C integer; infinite as a double)."""
    start, end = span
    tok = data[start:end]
    sign = tok[:1] if tok[:1] in (b"+", b"-") else b""
    digits = tok[len(sign):]
    wide = b"0" * LONG_DIGITS + digits if how == "zeros" else b"9" * LONG_DIGITS
    return data[:start] + sign + wide + data[end:]
