"""The scanner's 32-byte token reader (llsvm_scan_pair in cext/_libsvm.pyx) against its byte-at-a-time scanner.

The reader takes `I:[-]D[.F]` tokens (I: 1-7 digits; D, F: 0-7 digits, one at least; under 32 bytes; 48 readable
bytes from the token's start) and hands every other token to the byte scanner. Checked here: the arrays are the
byte scanner's bit for bit and float(token) for each value; the reader takes exactly the tokens of that shape (the
count of byte-scanned tokens is predicted token by token); errors are the byte scanner's, status and position.
"""
import functools
import re

import numpy as np
import pytest

from llsvm._ext import _libsvm as L

pytestmark = pytest.mark.skipif(not L.SCAN_PAIR_BUILT, reason="the 32-byte reader is built for SSE2 only")

SHAPE = re.compile(rb"\d{1,7}:-?(\d{0,7})(?:\.(\d{0,7}))?")
TOKEN_END = b" \t\n\v\f\r#"


@pytest.fixture
def scan_pair():
    """Run a parse with the reader on or off; the setting is restored afterwards."""
    was = L.set_scan_pair(True)
    yield L.set_scan_pair
    L.set_scan_pair(was)


def parse(data, set_scan_pair, on, **kw):
    set_scan_pair(on)
    b = L.CSRBuilder(**kw)
    status = b.parse(np.frombuffer(data, dtype=np.uint8), len(data))
    out = dict(status=status, error=b.error if status else None, n_byte_tokens=b.n_byte_tokens, line=b.line)
    if status == 0:
        y, indptr, indices, values = b.take()
        out.update(y=y, indptr=indptr, indices=indices, values=values)
    return out


def fast_shape(tok):
    m = SHAPE.fullmatch(tok)
    return m is not None and len(tok) < 32 and (len(m.group(1)) + len(m.group(2) or b"")) > 0


def expected_byte_tokens(data):
    """Feature tokens of data (one chunk) that the reader leaves to the byte scanner: not of its shape, or starting
    within 48 bytes of the chunk's end."""
    n = 0
    for line in re.finditer(rb"[^\n]*\n", data):
        body = line.group().split(b"#")[0]
        toks = list(re.finditer(rb"[^ \t\r\n]+", body))
        for t in toks[1:]:
            n += not (fast_shape(t.group()) and line.start() + t.start() <= len(data) - 48)
    return n


PAD = b"0" + b"".join(b" %d:0.5" % i for i in range(1, 21)) + b"\n"      # its last tokens in the last 48 bytes


def _value(rng):
    """A value token around the reader's borders: signs, 0-9 digits either side of the point, exponents."""
    sign = (b"", b"-", b"+")[rng.choice(3, p=[0.55, 0.4, 0.05])]
    d = "".join(map(str, rng.integers(0, 10, int(rng.integers(0, 10))))).encode()
    f = "".join(map(str, rng.integers(0, 10, int(rng.integers(0, 10))))).encode()
    form = int(rng.integers(0, 8))
    if form == 0:
        t = d or b"0"
    elif form == 1:
        t = d + b"."
    elif form == 2:
        t = b"." + (f or b"5")
    else:
        t = d + b"." + f
    if not any(c in b"0123456789" for c in t):
        t = b"0" + t
    if rng.random() < 0.08:
        t += (b"e", b"E")[int(rng.integers(0, 2))] + str(int(rng.integers(-30, 30))).encode()
    return sign + t


def _rows(rng, n_rows):
    """Rows of random tokens with increasing indices of 1 to 9 digits (some with leading zeros); returns the text
    and, per feature token, (offset, token)."""
    out, toks = bytearray(), []
    for _ in range(n_rows):
        out += (b"+1", b"-1", b"3", b"0.5")[int(rng.integers(0, 4))]
        idx = 0
        for _ in range(int(rng.integers(0, 30))):
            idx += int(rng.integers(1, 10 ** (8 if rng.random() < 0.03 else int(rng.integers(1, 5)))))
            if idx >= 2 ** 31 - 1:
                break
            index = str(idx).encode()
            if rng.random() < 0.05:
                index = b"0" * int(rng.integers(1, 4)) + index
            out += (b" ", b"\t", b"  ")[rng.choice(3, p=[0.9, 0.05, 0.05])]
            tok = index + b":" + _value(rng)
            toks.append((len(out), tok))
            out += tok
        out += (b"\n", b"\r\n", b" # note 1:2\n", b" \n")[rng.choice(4, p=[0.8, 0.1, 0.05, 0.05])]
    return bytes(out), toks


@functools.lru_cache(maxsize=None)
def _sample(seed):
    """3,000 random rows of seed `seed` (_rows), made once for both value types (their making is most of the
    test's time)."""
    return _rows(np.random.default_rng(seed), 3000)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("float32", [False, True])
def test_reader_is_the_byte_scanner_bit_for_bit(scan_pair, seed, float32):
    data, toks = _sample(seed)
    on = parse(data, scan_pair, True, float32=float32)
    off = parse(data, scan_pair, False, float32=float32)
    assert on["status"] == off["status"] == 0
    for key in ("y", "indptr", "indices"):
        np.testing.assert_array_equal(on[key], off[key])
    assert on["values"].dtype == off["values"].dtype
    np.testing.assert_array_equal(on["values"].view(np.uint8), off["values"].view(np.uint8))
    expect = np.array([float(t.split(b":")[1]) for _, t in toks], dtype=np.float32 if float32 else np.float64)
    np.testing.assert_array_equal(on["values"].view(np.uint8), expect.view(np.uint8))
    # the reader took exactly the tokens of its shape that start 48 bytes or more before the end
    byte_tokens = sum(1 for off_, t in toks if not (fast_shape(t) and off_ <= len(data) - 48))
    assert on["n_byte_tokens"] == byte_tokens == expected_byte_tokens(data)
    assert off["n_byte_tokens"] == len(toks)
    assert 0.2 * len(toks) < byte_tokens < 0.8 * len(toks)     # the mix exercises both paths


@pytest.mark.parametrize("tok", [
    b"1:0", b"1:-0", b"1:-0.000", b"1:.5", b"1:-.5", b"1:5.", b"1:-5.", b"9999999:1", b"0000001:1",
    b"1:1234567.1234567", b"1:-1234567.1234567", b"1:12345678", b"1:0.12345678", b"12345678:1",
    b"1:1e5", b"1:1E-5", b"1:+1", b"1:123456789012345678901234", b"1:0.000000000000000000001",
])
def test_border_tokens(scan_pair, tok):
    """Tokens at the reader's limits, inside and outside its shape: the byte scanner's value, sign of zero too."""
    data = b"1 " + tok + b" 99999999:1\n" + PAD
    on = parse(data, scan_pair, True)
    off = parse(data, scan_pair, False)
    assert on["status"] == off["status"] == 0
    value = on["values"][0]
    assert np.float64(value).view(np.int64) == np.float64(float(tok.split(b":")[1])).view(np.int64)
    np.testing.assert_array_equal(on["values"].view(np.int64), off["values"].view(np.int64))
    assert on["n_byte_tokens"] == expected_byte_tokens(data)
    assert on["n_byte_tokens"] - (not fast_shape(tok)) - 1 == expected_byte_tokens(PAD)


@pytest.mark.parametrize("zero_based", [False, True])
@pytest.mark.parametrize("line", [
    b"1 0:1", b"1 3:1 2:1", b"1 3:1 3:1", b"1 1:2:3", b"1 1:-", b"1 1:.", b"1 1:--1", b"1 1:1.2.3", b"1 1::2",
    b"1 a:1", b"1 1:1e", b"1 1:1x", b"1 1:1-", b"1 1:-1-", b"1 12345678901:1", b"1 1:", b"1 :1", b"1 1:1/2",
    b"1 1:0.5\x00", b"1 1:1 2:nan", b"1 1:1 qid:3", b"1 2:1 1:0.5#c", b"1 1:1;", b"1 1:1,5",
])
def test_errors_are_the_byte_scanners(scan_pair, line, zero_based):
    data = b"+1 1:1\n" + line + b" 77:0.25\n" + PAD
    on = parse(data, scan_pair, True, zero_based=zero_based)
    off = parse(data, scan_pair, False, zero_based=zero_based)
    assert (on["status"], on["error"], on["line"]) == (off["status"], off["error"], off["line"])
    if on["status"] == 0:
        np.testing.assert_array_equal(on["values"].view(np.int64), off["values"].view(np.int64))
        np.testing.assert_array_equal(on["indices"], off["indices"])


def test_short_chunks_and_the_last_48_bytes(scan_pair):
    """Chunks under 48 bytes, and tokens near a chunk's end, are read byte by byte with the same result."""
    for n in range(1, 12):
        data = b"1" + b"".join(b" %d:0.%d" % (i + 1, 7 * i + 1) for i in range(n)) + b"\n"
        on = parse(data, scan_pair, True)
        off = parse(data, scan_pair, False)
        np.testing.assert_array_equal(on["values"].view(np.int64), off["values"].view(np.int64))
        assert on["n_byte_tokens"] == expected_byte_tokens(data)
