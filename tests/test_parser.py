"""The LIBSVM text scanner (cext/_libsvm.pyx) and its driver (llsvm/textio.py): exact arrays, exact errors."""
import bz2
import gzip
import io
import lzma
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import llsvm
from llsvm.textio import read_text

REPO_ROOT = pathlib.Path(__file__).resolve().parent.parent
SHARED = REPO_ROOT / "data" / "public"         # the public sets, `make data`
SHARED_FILES = sorted(p.name for p in SHARED.glob("*.xz")) if SHARED.is_dir() else ["<absent>"]


def bits(a):
    return np.ascontiguousarray(a, dtype=np.float64).view(np.int64)


def parse_bytes(write_bytes, data, **kw):
    return llsvm.read_dataset(write_bytes(data), **kw)


# ---------------------------------------------------------------------------------------------------------------
# exact arrays for hand-written inputs

def test_whitespace_crlf_comments_empty_rows_and_no_final_newline(write_bytes, assert_same_csr):
    data = (b"+1\t1:0.5  3:-2\t\t# trailing comment 9:9\r\n"
            b"\n"
            b"# a comment-only line\n"
            b"   \t \r\n"
            b"-1 2:1e-3 4:1E+2  \t7:-2.5e-7\n"
            b"-1.0\n"
            b"2.000000 # only a comment after the label\n"
            b"1e-3 1:1\r\n"
            b".5\t5:3")
    for reader in (llsvm.read_dataset, read_text):
        ds = reader(write_bytes(data))
        assert isinstance(ds, llsvm.CSRDataset)
        assert_same_csr(ds,
                        [1.0, -1.0, -1.0, 2.0, 0.001, 0.5],
                        [0, 2, 5, 5, 5, 6, 7],
                        [0, 2, 1, 3, 6, 0, 4],
                        [0.5, -2.0, 0.001, 100.0, -2.5e-7, 1.0, 3.0],
                        n_features=7)
        assert ds.n_rows == 6 and ds.nnz == 7 and ds.n_qid == 0
        np.testing.assert_array_equal(ds.labels, [1.0, -1.0, 2.0, 0.001, 0.5])
        np.testing.assert_array_equal(ds.label_counts, [1, 2, 1, 1, 1])


@pytest.mark.parametrize("label,expected", [
    (b"-1", -1.0), (b"+1", 1.0), (b"-1.0", -1.0), (b"2.000000", 2.0), (b"1e-3", 0.001), (b".5", 0.5),
    (b"5.", 5.0), (b"-.25", -0.25), (b"0", 0.0), (b"-0", -0.0), (b"007", 7.0), (b"1E2", 100.0),
    (b"3.5e+01", 35.0), (b"-2.5e-7", -2.5e-7),
])
def test_labels(write_bytes, label, expected):
    ds = parse_bytes(write_bytes, label + b" 1:1\n" + label + b"\n")
    assert bits(ds.y).tolist() == bits([expected, expected]).tolist()
    assert ds.indptr.tolist() == [0, 1, 1]


@pytest.mark.parametrize("text,expected", [
    (b"1e-3", 1e-3), (b"1E+2", 100.0), (b"-2.5e-7", -2.5e-7), (b"6.02214076e23", 6.02214076e23),
    (b"1e-320", 1e-320), (b"1.7976931348623157e308", 1.7976931348623157e308), (b"4.9e-324", 5e-324),
    (b"-0.0", -0.0), (b"0e999", 0.0), (b"1e-400", 0.0), (b"+.5e1", 5.0),
])
def test_values_with_exponents(write_bytes, text, expected):
    ds = parse_bytes(write_bytes, b"1 3:" + text + b"\n")
    assert ds.indices.tolist() == [2]
    assert bits(ds.values).tolist() == bits([expected]).tolist()
    assert ds.n_features == 3


def test_only_labels(write_bytes, assert_same_csr):
    ds = parse_bytes(write_bytes, b"1\n-1\n\n1 # c\n")
    assert_same_csr(ds, [1.0, -1.0, 1.0], [0, 0, 0, 0], np.empty(0, np.int32), np.empty(0), n_features=0)
    assert ds.nnz == 0


def test_qid_is_ignored_and_counted(write_bytes, assert_same_csr):
    ds = parse_bytes(write_bytes, b"3 qid:1 1:0.5 4:1\n2 qid:1\t2:2\n1 3:3\n# c\n1 qid:20\n")
    assert_same_csr(ds, [3.0, 2.0, 1.0, 1.0], [0, 2, 3, 4, 4], [0, 3, 1, 2], [0.5, 1.0, 2.0, 3.0], n_features=4)
    assert ds.n_qid == 3


def test_zero_based(write_bytes, assert_same_csr):
    data = b"1 0:1 2:3\n-1 1:4\n1\n"
    ds = parse_bytes(write_bytes, data, zero_based=True)
    assert_same_csr(ds, [1.0, -1.0, 1.0], [0, 2, 3, 3], [0, 2, 1], [1.0, 3.0, 4.0], n_features=3)
    one = parse_bytes(write_bytes, b"1 1:1 3:3\n-1 2:4\n1\n")
    assert_same_csr(one, ds.y, ds.indptr, ds.indices, [1.0, 3.0, 4.0], n_features=3)


def test_largest_indices(write_bytes, assert_same_csr):
    ds = parse_bytes(write_bytes, b"1 5:1 2147483647:2\n")
    assert_same_csr(ds, [1.0], [0, 2], [4, 2147483646], [1.0, 2.0], n_features=2147483647)
    ds = parse_bytes(write_bytes, b"1 0:1 2147483646:2\n", zero_based=True)
    assert_same_csr(ds, [1.0], [0, 2], [0, 2147483646], [1.0, 2.0], n_features=2147483647)


def test_float32_values(write_bytes, random_libsvm, assert_same_csr):
    r = random_libsvm(5, n_rows=300, n_features=40, density=0.2)
    path = write_bytes(r.text)
    ds32 = llsvm.read_dataset(path, float32=True)
    ds64 = llsvm.read_dataset(path)
    assert ds32.values.dtype == np.float32 and ds32.dtype == np.float32
    assert_same_csr(ds64, r.y, r.indptr, r.indices, r.values, n_features=r.n_features)
    assert_same_csr(ds32, r.y, r.indptr, r.indices, r.values.astype(np.float32), n_features=r.n_features)


def test_random_fancy_files(write_bytes, random_libsvm, assert_same_csr):
    for seed in range(4):
        r = random_libsvm(seed, n_rows=150, n_features=30, density=0.3, labels=(-1.0, 1.0, 2.5, 1e-3))
        assert_same_csr(parse_bytes(write_bytes, r.text), r.y, r.indptr, r.indices, r.values,
                        n_features=r.n_features)


# ---------------------------------------------------------------------------------------------------------------
# bit-exact numbers

SPECIAL_DOUBLES = [
    0.0, -0.0, 5e-324, -5e-324, 2.225073858507201e-308, 2.2250738585072014e-308, 1.7976931348623157e308,
    -1.7976931348623157e308, 0.1, 0.2, 0.3, 1.0 / 3.0, 2.0 ** 53, 2.0 ** 53 + 2, 2.0 ** -1074 * 12345,
    1e22, 1e23, 9007199254740991.0, 123456789012345680.0, 5e-310, 1.5e-323, 0.30000000000000004,
]


def _random_doubles(rng, n):
    raw = rng.integers(0, 2 ** 64, n, dtype=np.uint64, endpoint=False).view(np.float64)
    raw = raw[np.isfinite(raw)]
    sub = rng.integers(1, 2 ** 52, n // 8, dtype=np.uint64).view(np.float64)        # subnormals
    sub[::2] *= -1
    scaled = rng.standard_normal(n // 4) * 10.0 ** rng.integers(-300, 300, n // 4)
    unit = rng.random(n // 4)
    return np.concatenate([SPECIAL_DOUBLES, raw, sub, scaled, unit])


@pytest.mark.parametrize("formatter", ["%.17g", "repr"])
def test_round_trip_bit_exact(write_bytes, formatter):
    rng = np.random.default_rng(42)
    x = _random_doubles(rng, 20000)
    fmt = (lambda v: "%.17g" % v) if formatter == "%.17g" else repr
    toks = [fmt(float(v)) for v in x.tolist()]
    text = "".join(f"{t} 1:{t}\n" for t in toks).encode()
    ds = parse_bytes(write_bytes, text)
    assert ds.n_rows == x.size
    np.testing.assert_array_equal(bits(ds.y), bits(x))
    # an explicit zero is a stored value: every row has exactly one entry, bit-exact (signed zeros too)
    np.testing.assert_array_equal(ds.indptr, np.arange(x.size + 1))
    np.testing.assert_array_equal(bits(ds.values), bits(x))


def _random_decimal_strings(rng, n):
    toks = []
    for _ in range(n):
        nd = int(rng.integers(1, 26))
        digits = "".join(map(str, rng.integers(0, 10, nd).tolist()))
        e = int(rng.integers(-330, 311))
        sign = ("", "-", "+")[int(rng.integers(0, 3))]
        form = int(rng.integers(0, 5))
        k = int(rng.integers(0, nd + 1))
        if form == 0:
            t = f"{digits}e{e}"
        elif form == 1:
            t = f"{digits[:k]}.{digits[k:]}E{e:+d}"
        elif form == 2:
            t = f"{digits[:k]}.{digits[k:]}"
        elif form == 3:
            t = f"0.{'0' * int(rng.integers(0, 30))}{digits}e{e}"
        else:   # the fast path: short mantissa, |exponent| <= 22
            t = f"{digits[:15]}e{int(rng.integers(-22, 23))}"
        toks.append(sign + t)
    return toks


HARD_DECIMALS = [
    "9007199254740993", "9007199254740993e0", "9007199254740992e22", "9007199254740993e22", "9007199254740992e-22",
    "2.4703282292062327e-324", "2.4703282292062328e-324", "2.2250738585072011e-308", "2.2250738585072012e-308",
    "1.00000000000000011102230246251565404236316680908203125",
    "1.00000000000000011102230246251565404236316680908203124",
    "0.1000000000000000055511151231257827021181583404541015625", "123456789012345678901234567890",
    "1" + "0" * 40, "0." + "0" * 40 + "1", "4503599627370496.5", "4503599627370497.5", "1e22", "1e23", "1e-22",
    "1e-23", "7.2057594037927933e16", "179769313486231580793728971405303415079934132710037826936173778980444968292"
    "764750946649017977587207096330286416692887910946555547851940402630657488671505820681908902000708383676273854845"
    "817711531764475730270069855571366959622842914819860834936475292719074168444365510704342711559699508093042880177"
    "90400000000000000e-308", "0.000000000000000000000000000000000000000000001e45", "00000000000000000000000000001",
]


def test_decimal_strings_agree_with_python_float(write_bytes):
    """Both scanner paths (Clinger's fast path and the strtod fallback) give float(token) exactly."""
    rng = np.random.default_rng(7)
    toks = _random_decimal_strings(rng, 60000) + HARD_DECIMALS
    expect = np.array([float(t) for t in toks])
    keep = np.isfinite(expect)
    assert keep.sum() > 50000
    toks = [t for t, k in zip(toks, keep.tolist()) if k]
    expect = expect[keep]
    text = "".join(f"{t} 1:{t}\n" for t in toks).encode()
    ds = parse_bytes(write_bytes, text)
    np.testing.assert_array_equal(bits(ds.y), bits(expect))
    np.testing.assert_array_equal(bits(ds.values), bits(expect))


# ---------------------------------------------------------------------------------------------------------------
# rejections: DataFormatError with the exact line, column and a message fragment

ERRORS = [
    # (input, zero_based, line, column, fragment)
    (b"abc 1:1\n", False, 1, 1, "label is not a number (found 'abc')"),
    (b"1x 2:3\n", False, 1, 1, "label is not a number (found '1x')"),
    (b"1 1:1\n\n# comment\n-1 2:x\n", False, 4, 6, "value is not a number (found 'x')"),
    (b"1 2:3x\n", False, 1, 5, "value is not a number (found '3x')"),
    (b"1 3:\n", False, 1, 5, "value is missing after ':'"),
    (b"1 3: 4\n", False, 1, 5, "value is missing after ':'"),
    (b"1 3:1e\n", False, 1, 5, "value is not a number (found '1e')"),
    (b"1 3:0x10\n", False, 1, 5, "value is not a number (found '0x10')"),
    (b"1 3:1.5.5\n", False, 1, 5, "value is not a number (found '1.5.5')"),
    (b"1 3 4:5\n", False, 1, 3, "expected index:value, missing ':' (found '3')"),
    (b"1 1:1 7\n", False, 1, 7, "missing ':'"),
    (b"1 0:1\n", False, 1, 3, "index 0 in 1-based data"),
    (b"1 -1:3\n", False, 1, 3, "index is not a positive integer (found '-1')"),
    (b"1 -1:3\n", True, 1, 3, "index is not a non-negative integer (found '-1')"),
    (b"1 a:1\n", False, 1, 3, "index is not a positive integer (found 'a')"),
    (b"1 3:1 3:2\n", False, 1, 7, "index 3 repeated"),
    (b"1 0:1 0:2\n", True, 1, 7, "index 0 repeated"),
    (b"1 3:1 2:2\n", False, 1, 7, "indices must be strictly increasing (index 2 after 3)"),
    (b"# head\n\n1 1:1\r\n2 1:1 1:2\n", False, 4, 7, "index 1 repeated"),
    (b"1\t\t5:1\t5:2\n", False, 1, 8, "index 5 repeated"),
    (b"1 2147483648:1\n", False, 1, 3, "index 2147483648 is beyond the int32 range (largest allowed 2147483647)"),
    (b"1 2147483647:1\n", True, 1, 3, "index 2147483647 is beyond the int32 range (largest allowed 2147483646)"),
    (b"1 3:nan\n", False, 1, 5, "value is NaN or infinite (found 'nan')"),
    (b"1 3:NaN\n", False, 1, 5, "value is NaN or infinite (found 'NaN')"),
    (b"1 3:inf\n", False, 1, 5, "value is NaN or infinite (found 'inf')"),
    (b"1 3:-inf\n", False, 1, 5, "value is NaN or infinite (found '-inf')"),
    (b"1 3:Infinity\n", False, 1, 5, "value is NaN or infinite (found 'Infinity')"),
    (b"1 3:1e400\n", False, 1, 5, "value is NaN or infinite (found '1e400')"),
    (b"nan 1:1\n", False, 1, 1, "label is NaN or infinite (found 'nan')"),
    (b"inf\n", False, 1, 1, "label is NaN or infinite (found 'inf')"),
    (b"1 1:1\n-inf 1:1\n", False, 2, 1, "label is NaN or infinite (found '-inf')"),
    (b"-1e400 1:1\n", False, 1, 1, "label is NaN or infinite (found '-1e400')"),
    (b"1:2 3:4\n", False, 1, 1, "missing label: the line starts with '1:2'"),
    (b"1 1:1\n  1:2 3:4\n", False, 2, 3, "missing label: the line starts with '1:2'"),
    (b"1 qid:x 1:2\n", False, 1, 3, "qid must be a non-negative integer (found 'qid:x')"),
    (b"1 qid:-1 1:2\n", False, 1, 3, "qid must be a non-negative integer (found 'qid:-1')"),
    (b"1 qid: 1:2\n", False, 1, 3, "qid must be a non-negative integer (found 'qid:')"),
    (b"1 2:3 qid:4\n", False, 1, 7, "index is not a positive integer (found 'qid')"),
    (b"1 1:1\n2 1:z", False, 2, 5, "value is not a number (found 'z')"),
    (b"", False, 1, 1, "empty input: no data rows"),
    (b"\n# only comments\n  \t\n", False, 4, 1, "empty input: no data rows"),
    (b"# c\r\n\r\n", False, 3, 1, "empty input: no data rows"),
]


@pytest.mark.parametrize("data,zero_based,line,column,fragment", ERRORS,
                         ids=[f"{i}:{e[0][:20]!r}" for i, e in enumerate(ERRORS)])
def test_rejections(write_bytes, data, zero_based, line, column, fragment):
    path = write_bytes(data)
    for call in (lambda: llsvm.read_dataset(path, zero_based=zero_based),
                 lambda: read_text(str(path), zero_based=zero_based, chunk_size=3),
                 lambda: list(llsvm.open_dataset(path, zero_based=zero_based, stream=True,
                                                 chunk_size=5).iter_blocks())):
        with pytest.raises(llsvm.DataFormatError) as info:
            call()
        e = info.value
        assert isinstance(e, llsvm.LLSVMError)
        assert (e.line, e.column) == (line, column)
        assert fragment in e.message
        assert e.path == str(path)
        assert str(e) == f"{path}:{line}:{column}: {e.message}"


def test_every_scanner_status_has_its_own_message():
    """The status codes are defined once, in the kernel; textio imports them by name. Each one the kernel can
    report (all but ST_OK) is distinct and turned into its own message, never the 'malformed input' fallback."""
    from llsvm import textio
    from llsvm._ext import _libsvm
    codes = {name: getattr(_libsvm, name) for name in dir(_libsvm) if name.startswith("ST_")}
    assert codes["ST_OK"] == 0 and len(set(codes.values())) == len(codes)

    class Builder:
        error = (1, 1, 0, 0, 0)   # line, column, offset, a, b

    buf = np.frombuffer(b"tok\n", dtype=np.uint8)
    messages = {name: textio._error("f", code, Builder(), buf, 4, False).message
                for name, code in codes.items() if name != "ST_OK"}
    assert not [name for name, msg in messages.items() if msg.startswith("malformed input")]
    assert len(set(messages.values())) == len(messages)


def test_index_beyond_int32_reports_the_index_as_written(write_bytes):
    """The message must name the index found in the file, not a truncated copy of it."""
    path = write_bytes(b"1 2:1 99999999999999999999:1\n")
    with pytest.raises(llsvm.DataFormatError) as info:
        llsvm.read_dataset(path)
    assert (info.value.line, info.value.column) == (1, 7)
    assert "is beyond the int32 range" in info.value.message
    assert "99999999999999999999" in info.value.message


def test_huge_exponent_is_not_truncated(write_bytes):
    """0.(99999 zeros)1e1000001 is 10**900001: infinite, so refused like 1e400 (float() gives inf).

    The exponent digits must not be cut short in a way that lets the fast path make it 1.0.
    """
    tok = b"0." + b"0" * 99999 + b"1e1000001"
    assert float(tok) == float("inf")
    with pytest.raises(llsvm.DataFormatError) as info:
        llsvm.read_dataset(write_bytes(b"1 1:" + tok + b"\n"))
    assert (info.value.line, info.value.column) == (1, 5)
    assert "value is NaN or infinite" in info.value.message
    with pytest.raises(llsvm.DataFormatError) as info:
        llsvm.read_dataset(write_bytes(b"1 1:1\n" + tok + b" 1:1\n"))
    assert (info.value.line, info.value.column) == (2, 1)
    assert "label is NaN or infinite" in info.value.message
    # long but finite tokens with big exponents are exact
    for t in (b"0." + b"0" * 99999 + b"1e100003", b"1" + b"0" * 100010 + b"e-100000",
              b"0." + b"0" * 999999 + b"5e1000000"):
        ds = llsvm.read_dataset(write_bytes(b"1 1:" + t + b"\n"))
        assert bits(ds.values).tolist() == bits([float(t)]).tolist()


def test_float32_overflow_is_refused(write_bytes):
    """A value finite as a double but beyond the float32 range must not become inf in a float32 dataset."""
    path = write_bytes(b"1 1:1 2:3e38\n-1 1:2 2:1e39\n")
    assert llsvm.read_dataset(path).values.tolist() == [1.0, 3e38, 2.0, 1e39]
    assert np.isfinite(llsvm.read_dataset(write_bytes(b"1 1:3.4028234e38\n", "max.txt"), float32=True).values).all()
    with pytest.raises(llsvm.DataFormatError) as info:
        llsvm.read_dataset(path, float32=True)
    assert (info.value.line, info.value.column) == (2, 10)
    assert "(found '1e39';" in info.value.message


def test_error_path_is_str_of_pathlike(write_bytes):
    path = write_bytes(b"1 1:1\nx\n", name="with space.txt")
    with pytest.raises(llsvm.DataFormatError) as info:
        llsvm.read_dataset(pathlib.Path(path))
    assert info.value.path == str(path)
    assert str(info.value) == f"{path}:2:1: label is not a number (found 'x')"


def _run_stdin(code, data):
    return subprocess.run([sys.executable, "-c", code], input=data, capture_output=True, timeout=600,
                          cwd=str(REPO_ROOT))


STDIN_ERR = """
import llsvm
try:
    llsvm.read_dataset('-')
except llsvm.DataFormatError as e:
    print(e.path, e.line, e.column)
    print(str(e))
"""


def test_stdin_error_names_stdin():
    p = _run_stdin(STDIN_ERR, b"1 1:1\n\n2 0:1\n")
    assert p.returncode == 0, p.stderr.decode()
    assert p.stdout.decode().splitlines() == [
        "<stdin> 3 3",
        "<stdin>:3:3: index 0 in 1-based data (indices start at 1; use --zero-based for 0-based files)"]


# ---------------------------------------------------------------------------------------------------------------
# chunk boundaries

@pytest.mark.parametrize("chunk_size", [2, 3, 7, 64])
def test_tiny_chunks_equal_default(write_bytes, random_libsvm, assert_same_csr, chunk_size):
    r = random_libsvm(11, n_rows=120, n_features=40, density=0.15)
    # a line much longer than any chunk
    long_line = b"7 " + b" ".join(b"%d:%.17g" % (j, j * 0.37) for j in range(1, 301)) + b"\n"
    text = r.text + long_line + r.text + b"-1 qid:4 3:1\n1"
    path = write_bytes(text)
    ref = llsvm.read_dataset(path)
    assert ref.n_rows == 2 * 120 + 3 and ref.n_features == 300 and ref.n_qid == 1
    lengths = np.diff(ref.indptr)
    assert lengths[120] == 300 and lengths[-2:].tolist() == [1, 0]
    np.testing.assert_array_equal(ref.values[ref.indptr[120]:ref.indptr[121]], np.arange(1, 301) * 0.37)
    ds = read_text(str(path), chunk_size=chunk_size)
    assert_same_csr(ds, ref.y, ref.indptr, ref.indices, ref.values, n_features=ref.n_features)
    assert ds.n_qid == 1
    ds = llsvm.read_dataset(path, chunk_size=chunk_size, float32=True)
    assert_same_csr(ds, ref.y, ref.indptr, ref.indices, ref.values.astype(np.float32), n_features=ref.n_features)


@pytest.mark.parametrize("chunk_size", [2, 7, 64, 1000])
def test_error_on_a_later_chunk_has_the_absolute_line(write_bytes, chunk_size):
    good = b"".join(b"%d 1:%d 5:0.5\n" % (i % 2, i) for i in range(300))
    text = good + b"# comment\n\n" + b"1 2:1 4:1 3:1\n" + good
    path = write_bytes(text)
    for call in (lambda: read_text(str(path), chunk_size=chunk_size),
                 lambda: list(llsvm.open_dataset(path, stream=True, chunk_size=chunk_size).iter_blocks())):
        with pytest.raises(llsvm.DataFormatError) as info:
            call()
        assert (info.value.line, info.value.column) == (303, 11)
        assert "indices must be strictly increasing (index 3 after 4)" in info.value.message


# ---------------------------------------------------------------------------------------------------------------
# compressed inputs and stdin

def _compressors():
    return {"gzip": gzip.compress, "bzip2": bz2.compress, "xz": lzma.compress}


@pytest.mark.parametrize("kind", ["gzip", "bzip2", "xz"])
def test_compressed_equal_plain(write_bytes, random_libsvm, assert_same_csr, kind):
    r = random_libsvm(3, n_rows=400, n_features=60, density=0.1)
    plain = llsvm.read_dataset(write_bytes(r.text, "plain.txt"))
    path = write_bytes(_compressors()[kind](r.text), "data.bin.z")
    assert llsvm.file_kind(path) == kind
    for chunk_size in (llsvm.textio.DEFAULT_CHUNK, 5):
        ds = llsvm.read_dataset(path, chunk_size=chunk_size)
        assert_same_csr(ds, plain.y, plain.indptr, plain.indices, plain.values, n_features=plain.n_features)
        assert_same_csr(ds, r.y, r.indptr, r.indices, r.values, n_features=r.n_features)


def test_compression_by_magic_not_name(write_bytes, random_libsvm, assert_same_csr):
    r = random_libsvm(4, n_rows=100)
    gz_named_txt = write_bytes(gzip.compress(r.text), "data.txt")
    plain_named_gz = write_bytes(r.text, "data.gz")
    xz_named_bz2 = write_bytes(lzma.compress(r.text), "data.bz2")
    assert llsvm.file_kind(gz_named_txt) == "gzip"
    assert llsvm.file_kind(plain_named_gz) == "text"
    assert llsvm.file_kind(xz_named_bz2) == "xz"
    for path in (gz_named_txt, plain_named_gz, xz_named_bz2):
        assert_same_csr(llsvm.read_dataset(path), r.y, r.indptr, r.indices, r.values, n_features=r.n_features)


def test_error_in_compressed_file(write_bytes):
    text = b"".join(b"1 1:%d\n" % i for i in range(1000)) + b"1 1:1 1:2\n"
    path = write_bytes(gzip.compress(text), "bad.gz")
    with pytest.raises(llsvm.DataFormatError) as info:
        llsvm.read_dataset(path, chunk_size=100)
    assert (info.value.line, info.value.column, info.value.path) == (1001, 7, str(path))
    assert "index 1 repeated" in info.value.message


@pytest.mark.parametrize("kind", ["gzip", "bzip2", "xz"])
def test_damaged_compressed_input(write_bytes, kind):
    text = b"".join(b"1 1:%d 2:0.5\n" % i for i in range(3000))
    z = _compressors()[kind](text)
    for cut in (12, len(z) // 2, len(z) - 1):
        path = write_bytes(z[:cut], f"cut{cut}.z")
        for call in (lambda: llsvm.read_dataset(path, chunk_size=1000),
                     lambda: list(llsvm.open_dataset(path, stream=True, chunk_size=1000).iter_blocks())):
            with pytest.raises(llsvm.DataFormatError) as info:
                call()
            e = info.value
            assert (e.path, e.line, e.column) == (str(path), 0, 0)
            assert e.message.startswith(f"corrupt or truncated {kind} input (")
            assert str(e) == f"{path}: {e.message}"
    flipped = bytearray(z)
    flipped[len(z) // 2] ^= 0xFF
    with pytest.raises(llsvm.DataFormatError):
        llsvm.read_dataset(write_bytes(bytes(flipped), "flipped.z"))


STDIN_SAVE = """
import sys, numpy as np, llsvm
ds = llsvm.read_dataset('-', chunk_size=int(sys.argv[2]))
np.savez(sys.argv[1], y=ds.y, indptr=ds.indptr, indices=ds.indices, values=ds.values,
         n_features=ds.n_features, n_qid=ds.n_qid, source=str(ds.source))
"""


@pytest.mark.parametrize("compress", [None, "gzip", "xz"])
def test_stdin_equals_plain(tmp_path, write_bytes, random_libsvm, assert_same_csr, compress):
    r = random_libsvm(8, n_rows=300, n_features=80, density=0.1)
    ref = llsvm.read_dataset(write_bytes(r.text))
    data = r.text if compress is None else _compressors()[compress](r.text)
    out = tmp_path / "out.npz"
    p = subprocess.run([sys.executable, "-c", STDIN_SAVE, str(out), "17"], input=data, capture_output=True,
                       timeout=600)
    assert p.returncode == 0, p.stderr.decode()
    with np.load(out) as z:
        got = llsvm.CSRDataset(z["y"], z["indptr"], z["indices"], z["values"], int(z["n_features"]))
        assert str(z["source"]) == "<stdin>"
        assert int(z["n_qid"]) == 0
    assert_same_csr(got, ref.y, ref.indptr, ref.indices, ref.values, n_features=ref.n_features)


# ---------------------------------------------------------------------------------------------------------------
# agreement with scikit-learn's loader

def _sklearn(path_or_bytes, **kw):
    from sklearn.datasets import load_svmlight_file

    if isinstance(path_or_bytes, bytes):
        path_or_bytes = io.BytesIO(path_or_bytes)
    return load_svmlight_file(path_or_bytes, dtype=np.float64, zero_based=False, **kw)


def _assert_same_as_sklearn(ds, X, y):
    X = X.tocsr()
    assert ds.n_rows == X.shape[0]
    assert ds.n_features == X.shape[1]
    np.testing.assert_array_equal(bits(ds.y), bits(y))
    np.testing.assert_array_equal(ds.indptr, X.indptr)
    np.testing.assert_array_equal(ds.indices, X.indices)
    np.testing.assert_array_equal(bits(ds.values), bits(X.data))
    C = ds.to_csr()
    assert C.shape == X.shape
    assert (C != X).nnz == 0


@pytest.mark.parametrize("seed,n_rows,n_features,density,empty_frac,fancy", [
    (0, 300, 20, 0.5, 0.0, False), (1, 500, 200, 0.05, 0.2, False), (2, 200, 10, 1.0, 0.0, False),
    (3, 400, 100000, 0.0003, 0.3, False), (4, 1000, 50, 0.02, 0.5, False), (5, 50, 3, 0.7, 0.1, False),
    (6, 400, 30, 0.2, 0.1, True), (7, 300, 5000, 0.01, 0.2, True),
])
def test_agrees_with_sklearn_random(write_bytes, random_libsvm, seed, n_rows, n_features, density, empty_frac,
                                    fancy):
    r = random_libsvm(seed, n_rows=n_rows, n_features=n_features, density=density, empty_frac=empty_frac,
                      labels=(-1.0, 1.0, 3.0, 0.25), fancy=fancy)
    path = write_bytes(r.text)
    X, y = _sklearn(str(path))
    ds = llsvm.read_dataset(path)
    _assert_same_as_sklearn(ds, X, y)
    assert ds.n_features == r.n_features


def _manifest():
    rows = {}
    path = SHARED / "MANIFEST.tsv"
    if path.is_file():
        lines = path.read_text().splitlines()
        head = lines[0].split("\t")
        for line in lines[1:]:
            rec = dict(zip(head, line.split("\t")))
            rows[rec["file"]] = rec
    return rows


@pytest.mark.parametrize("name", SHARED_FILES)
def test_agrees_with_sklearn_shared_data(shared_data, name):
    path = shared_data / name
    raw = lzma.decompress(path.read_bytes())
    X, y = _sklearn(raw)
    ds = llsvm.read_dataset(path)
    _assert_same_as_sklearn(ds, X, y)
    rec = _manifest().get(name)
    if rec is not None:
        assert ds.n_rows == int(rec["rows"])
        assert ds.n_features == int(rec["features"])
        assert ds.nnz == int(rec["nnz"])
        counts = {}
        for item in rec["class_counts"].split():
            lab, cnt = item.rsplit(":", 1)
            counts[float(lab)] = int(cnt)
        assert dict(zip(ds.labels.tolist(), ds.label_counts.tolist())) == counts


# ---------------------------------------------------------------------------------------------------------------
# streaming TextStream

@pytest.mark.parametrize("chunk_size,max_rows,max_bytes", [(50, None, None), (1000, 7, None), (300, None, 200),
                                                            (16 << 20, None, None)])
def test_text_stream_blocks(write_bytes, random_libsvm, assert_same_csr, chunk_size, max_rows, max_bytes):
    r = random_libsvm(21, n_rows=250, n_features=30, density=0.2, labels=(2.0, -1.0, 7.0))
    text = b"5 qid:2 1:1\n" + r.text
    path = write_bytes(gzip.compress(text), "stream.txt")
    ref = llsvm.read_dataset(path)
    st = llsvm.open_dataset(path, stream=True, chunk_size=chunk_size)
    assert isinstance(st, llsvm.TextStream)
    assert st.n_rows is None and st.nnz is None and st.labels is None and st.n_features is None
    with pytest.raises(llsvm.ParameterError):
        st.as_view()
    for _ in range(2):     # a second pass gives the same
        blocks = list(st.iter_blocks(max_rows=max_rows, max_bytes=max_bytes))
        firsts = [b.first_row for b in blocks]
        assert firsts == np.concatenate([[0], np.cumsum([b.n_rows for b in blocks])[:-1]]).tolist()
        assert all(b.n_rows > 0 for b in blocks)
        if max_rows is not None:
            assert max(b.n_rows for b in blocks) <= max_rows
        if max_bytes is not None:
            assert all(b.n_rows == 1 or 16 * b.n_rows + 12 * b.nnz <= max_bytes for b in blocks)
        if chunk_size < 1000:
            assert len(blocks) > 5
        y = np.concatenate([b.y for b in blocks])
        indices = np.concatenate([b.indices for b in blocks])
        values = np.concatenate([b.values for b in blocks])
        indptr = np.concatenate([[0], np.cumsum(np.concatenate([np.diff(b.indptr) for b in blocks]))])
        assert_same_csr(llsvm.CSRDataset(y, indptr, indices, values), ref.y, ref.indptr, ref.indices, ref.values)
        assert st.n_rows == 251 and st.nnz == ref.nnz and st.n_features == ref.n_features
        assert st.n_qid == 1
        np.testing.assert_array_equal(st.labels, ref.labels)
        assert st.labels.tolist() == list(dict.fromkeys([5.0] + r.y.tolist()))
        np.testing.assert_array_equal(st.label_counts, ref.label_counts)
        assert int(st.label_counts.sum()) == 251


def test_text_stream_labels_first_occurrence(write_bytes):
    text = b"3 1:1\n-1\n3 2:2\n0.5 1:1\n-1 3:3\n3\n"
    st = llsvm.open_dataset(write_bytes(text), stream=True, chunk_size=4)
    blocks = list(st.iter_blocks())
    assert [b.first_row for b in blocks] == list(np.cumsum([0] + [b.n_rows for b in blocks[:-1]]))
    assert st.labels.tolist() == [3.0, -1.0, 0.5]
    assert st.label_counts.tolist() == [3, 2, 1]
    assert (st.n_rows, st.nnz, st.n_features) == (6, 4, 3)


def test_stream_of_stdin_is_single_pass():
    code = """
import llsvm
st = llsvm.open_dataset('-', stream=True, chunk_size=8)
print(sum(b.n_rows for b in st.iter_blocks()), st.n_rows, st.nnz, st.n_features)
try:
    list(st.iter_blocks())
except llsvm.DataFormatError as e:
    print(e.path, '|', e.message)
"""
    p = _run_stdin(code, b"1 1:1\n-1 2:2 3:3\n1\n")
    assert p.returncode == 0, p.stderr.decode()
    assert p.stdout.decode().splitlines() == ["3 3 3 3", "<stdin> | standard input can be read only once"]


# ---------------------------------------------------------------------------------------------------------------
# a stream's arrays recycled (MemoryPool): the next chunk is written into the memory of the arrays dropped

def test_memory_pool_recycles_dropped_arrays():
    """Arrays handed back to the pool hold the next chunk's rows (exactly those of a builder without a pool);
    arrays still alive are never reused; after close() the pool keeps nothing and arrays are freed as usual."""
    from llsvm._ext._libsvm import CSRBuilder, MemoryPool
    chunks = [np.frombuffer(b"".join(b"%d 1:%d %d:0.%d\n" % (i % 3, i, 2 + i % 50, i) for i in range(k, k + 400)),
                            dtype=np.uint8).copy() for k in (0, 400, 800)]
    pool = MemoryPool()
    pooled, plain = CSRBuilder(), CSRBuilder()
    pooled.use_pool(pool)
    kept = None
    for n, buf in enumerate(chunks):
        assert pooled.parse(buf, len(buf)) == plain.parse(buf, len(buf)) == 0
        got, ref = pooled.take(), plain.take()
        for a, b in zip(got, ref):
            assert a.tobytes() == b.tobytes()
        if n == 0:
            kept = [a.copy() for a in got], got       # held: the next chunk must not write into them
        del got, a, b
        # the second chunk got fresh memory (the first one's arrays are held); the third, the second's
        assert pool.reused == (4 if n == 2 else 0)
    for a, b in zip(*kept):
        assert a.tobytes() == b.tobytes()
    del kept
    pool.close()
    pooled.use_pool(None)
    buf = chunks[0]
    assert pooled.parse(buf, len(buf)) == 0
    assert len(pooled.take()[0]) == 400 and pool.reused == 4
    assert pooled.parse(buf, len(buf)) == 0 and pool.reused == 4


@pytest.mark.parametrize("chunk_size", [64, 4096])
def test_stream_with_recycled_chunks_equals_in_memory(write_bytes, random_libsvm, chunk_size):
    """Streaming and dropping each block (its memory recycled for the next chunk): every block holds the rows of
    the in-memory parse."""
    r = random_libsvm(23, n_rows=500, n_features=60, density=0.2)
    path = write_bytes(r.text)
    ref = llsvm.read_dataset(path)
    seen = 0
    for threads in (1, 2):
        seen = 0
        for b in llsvm.open_dataset(path, stream=True, chunk_size=chunk_size, threads=threads).iter_blocks():
            part = ref.slice(b.first_row, b.first_row + b.n_rows)
            for x, y in ((b.y, part.y), (b.indptr - b.indptr[0], part.indptr - part.indptr[0]),
                         (b.indices, part.indices), (b.values, part.values)):
                assert np.ascontiguousarray(x).tobytes() == np.ascontiguousarray(y).tobytes()
            seen += b.n_rows
            del b, part
        assert seen == ref.n_rows
