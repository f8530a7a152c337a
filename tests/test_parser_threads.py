"""The text parse on two threads (cext/_libsvm.pyx parse_split, llsvm/textio.py `threads`): the arrays of the
serial parse bit for bit, and on a malformed line the serial parse's error (the first bad line in file order, its
line and column)."""
import numpy as np
import pytest
from conftest import generated_set
from test_parser import ERRORS

import llsvm
from llsvm._ext._libsvm import ST_OK, CSRBuilder, parse_split, split_point
from llsvm import textio
from llsvm.textio import read_text


@pytest.fixture(autouse=True)
def split_small_chunks(monkeypatch):
    """Every chunk of these small files is cut in two (textio.SPLIT_MIN spares chunks below 4 MiB otherwise)."""
    monkeypatch.setattr(textio, "SPLIT_MIN", 0)


def test_small_chunks_are_not_split(write_bytes, monkeypatch):
    """Below SPLIT_MIN a chunk is parsed on one thread (parse_split is not called); from it, it is cut."""
    path = write_bytes(b"".join(b"%d 1:%d\n" % (i % 2, i) for i in range(2000)))
    calls = []
    real = textio.parse_split
    monkeypatch.setattr(textio, "parse_split", lambda *a: (calls.append(a[-1]), real(*a))[1])
    monkeypatch.setattr(textio, "SPLIT_MIN", 1 << 20)
    same(read_text(str(path), threads=2), read_text(str(path)))
    assert calls == []
    monkeypatch.setattr(textio, "SPLIT_MIN", 1000)
    same(read_text(str(path), threads=2, chunk_size=4000), read_text(str(path), chunk_size=4000))
    assert calls and all(n >= 1000 for n in calls)


def same(a, b):
    """Two CSRDatasets hold the same bits (labels, offsets, indices, values) and counts."""
    assert a.values.dtype == b.values.dtype
    for x, y in ((a.y, b.y), (a.indptr, b.indptr), (a.indices, b.indices), (a.values, b.values)):
        assert x.shape == y.shape
        assert x.tobytes() == y.tobytes()
    assert (a.n_features, a.n_qid, a.n_rows, a.nnz) == (b.n_features, b.n_qid, b.n_rows, b.nnz)


def as_buf(text):
    return np.frombuffer(text, dtype=np.uint8).copy()


def kernel_both(text, **kw):
    """(serial builder and arrays, split builder and arrays, the cut) of one chunk through the kernel itself."""
    buf = as_buf(text)
    one = CSRBuilder(**kw)
    s1 = one.parse(buf, len(buf))
    two = CSRBuilder(**kw)
    cut = split_point(buf, len(buf))
    assert cut > 0
    s2 = parse_split(two, two.empty_like(), two.empty_like(), buf, cut, len(buf))
    return (s1, one), (s2, two), cut


def test_kernel_split_equals_one_call(random_libsvm):
    """parse_split on one chunk: the same arrays, line count, qid count and largest index as one parse_lines call,
    the second part's rows appended with shifted offsets."""
    r = random_libsvm(5, n_rows=400, n_features=60, density=0.2)
    text = r.text + b"-1 qid:3 2:1\n"
    for kw in ({}, {"float32": True}, {"zero_based": True}):
        (s1, one), (s2, two), cut = kernel_both(text, **kw)
        assert s1 == s2 == ST_OK and 0 < cut < len(text)
        assert (one.line, one.n_qid, one.max_index, one.n_rows, one.nnz) == \
            (two.line, two.n_qid, two.max_index, two.n_rows, two.nnz)
        for x, y in zip(one.take(), two.take()):
            assert x.tobytes() == y.tobytes()


def test_split_point():
    """The cut is one past the first newline at or after the middle; -1 when that newline ends the buffer."""
    text = b"1 1:1\n2 2:2\n3 3:3\n"
    assert split_point(as_buf(text), len(text)) == 12
    assert split_point(as_buf(b"1 1:1 2:2 3:3 4:4\n"), 18) == -1
    assert split_point(as_buf(b"\n\n"), 2) == -1
    assert split_point(as_buf(b"\n\n\n"), 3) == 2
    assert split_point(as_buf(b"\n"), 1) == -1


@pytest.mark.parametrize("kind,opts", [("sparse", dict(rows=3000, features=2000, seed=3)),
                                       ("sparse", dict(rows=2000, features=500, seed=4)),
                                       ("dense", dict(rows=1500, features=40, seed=5))])
def test_generated_sets_bit_identical(tmp_path, kind, opts):
    """Generated files (scripts/gen_data.py) read on two threads: the serial arrays bit for bit, at the default
    chunk and at chunks small enough to cut the file in many places, float64 and float32."""
    path = tmp_path / kind
    ref = generated_set(path, kind, **opts)
    for chunk in (1 << 24, 4096, 333):
        same(read_text(str(path), chunk_size=chunk, threads=2), read_text(str(path), chunk_size=chunk))
    same(llsvm.read_dataset(path, threads=2), ref)
    same(llsvm.read_dataset(path, threads=2, float32=True), llsvm.read_dataset(path, float32=True))


@pytest.mark.parametrize("chunk", [2, 7, 64, 1000, 1 << 20])
def test_fancy_text_bit_identical(write_bytes, random_libsvm, chunk):
    """Tabs, repeated spaces, CRLF, comments, blank lines, qid, a line longer than the chunk, no final newline."""
    r = random_libsvm(17, n_rows=300, n_features=80, density=0.1)
    long_line = b"7 " + b" ".join(b"%d:%.17g" % (j, j * 0.37) for j in range(1, 301)) + b"\r\n"
    path = write_bytes(r.text + long_line + b"1 qid:2 5:1\n" + r.text + b"-1 3:1")
    ref = read_text(str(path), chunk_size=chunk)
    same(read_text(str(path), chunk_size=chunk, threads=2), ref)
    blocks1 = list(llsvm.open_dataset(path, stream=True, chunk_size=chunk).iter_blocks())
    blocks2 = list(llsvm.open_dataset(path, stream=True, chunk_size=chunk, threads=2).iter_blocks())
    assert len(blocks1) == len(blocks2)
    for a, b in zip(blocks1, blocks2):
        same(a, b)
        assert a.first_row == b.first_row


@pytest.mark.parametrize("second", [b"\n", b"# a comment 1:2\n", b"  \t\r\n", b"\r\n"])
def test_cut_at_a_blank_or_comment_line(write_bytes, second):
    """The second part starts with a blank or comment-only line (counted in the lines, not a row)."""
    # the middle falls in the first part's last (long) line: the cut is right after it
    first = b"".join(b"%d 1:%d 3:0.25\r\n" % (i % 2, i) for i in range(3))
    first += b"1 " + b" ".join(b"%d:0.5" % j for j in range(1, 300)) + b"\r\n"
    rest = b"".join(b"%d 2:%d 7:1\n" % (i % 2, i) for i in range(150))
    text = first + second + rest
    (s1, one), (s2, two), cut = kernel_both(text)
    assert s1 == s2 == ST_OK
    assert cut == len(first)
    assert one.line == two.line == 155
    for x, y in zip(one.take(), two.take()):
        assert x.tobytes() == y.tobytes()
    path = write_bytes(text + b"1 1:2\n1 x")          # and a bad last line: its line number counts the blank one
    for threads in (1, 2):
        with pytest.raises(llsvm.DataFormatError) as info:
            read_text(str(path), threads=threads)
        assert (info.value.line, info.value.column) == (157, 3)


def _error(path, **kw):
    with pytest.raises(llsvm.DataFormatError) as info:
        read_text(str(path), **kw)
    e = info.value
    return e.line, e.column, e.message


@pytest.mark.parametrize("data,zero_based,line,column,fragment", ERRORS,
                         ids=[f"{i}:{e[0][:20]!r}" for i, e in enumerate(ERRORS)])
def test_rejections_in_either_part(write_bytes, data, zero_based, line, column, fragment):
    """Each malformed input of test_parser's table, after good lines (error in the second part) and before them
    (error in the first part, the second fine): the serial error, the same line, column and message."""
    good = b"".join(b"%d 1:%d 4:0.5\n" % (i % 2, i) for i in range(40))
    for text, shift in ((good + data, 40), (data + (b"\n" if data[-1:] != b"\n" else b"") + good, 0)):
        if not data.strip(b" \t\r\n") or data.startswith(b"#") or data.startswith(b"\n#"):
            continue            # empty input: with good lines around it there is no error to find
        path = write_bytes(text)
        ref = _error(path, zero_based=zero_based)
        assert ref[:2] == (line + shift, column) and fragment in ref[2]
        assert _error(path, zero_based=zero_based, threads=2) == ref
        assert _error(path, zero_based=zero_based, threads=2, chunk_size=100) == \
            _error(path, zero_based=zero_based, chunk_size=100)


def test_errors_in_both_parts_report_the_first(write_bytes):
    """A bad line in each part: the first part's is reported (the first in the file), wherever the bad lines sit
    (every pair of lines of a small file, in a chunk cut in two)."""
    n = 24
    lines = [b"%d 1:%d 5:0.5\n" % (i % 2, i) for i in range(n)]
    cut_line = None
    checked = 0
    for i in range(n):
        for j in range(i + 1, n):
            bad = list(lines)
            bad[i] = b"1 3:1 2:1\n"              # indices out of order: column 7
            bad[j] = b"1 1:x\n"                   # a value that is not a number: column 5
            text = b"".join(bad)
            buf = as_buf(text)
            cut = split_point(buf, len(buf))
            cut_line = text[:cut].count(b"\n")
            a = CSRBuilder()
            status = parse_split(a, a.empty_like(), a.empty_like(), buf, cut, len(buf))
            one = CSRBuilder()
            assert status == one.parse(buf, len(buf)) != ST_OK
            assert a.error == one.error                       # line, column, offset, index values
            assert a.error[:2] == (i + 1, 7)
            checked += i < cut_line <= j
    assert checked > 0      # pairs with one bad line in each part were among them


def test_error_in_the_second_part_only(write_bytes):
    """The first part fine, the second part bad: the line counts the first part's lines (comments, blanks)."""
    first = b"# header\n\n" + b"".join(b"1 1:%d\n" % i for i in range(30))
    second = b"".join(b"-1 2:%d\n" % i for i in range(25)) + b"-1 2:1 2:1\n" + b"1 1:1\n" * 5
    text = first + second
    buf = as_buf(text)
    cut = split_point(buf, len(buf))
    assert cut <= len(first) + text[len(first):].index(b"-1 2:1 2:1")
    a = CSRBuilder()
    status = parse_split(a, a.empty_like(), a.empty_like(), buf, cut, len(buf))
    one = CSRBuilder()
    assert status == one.parse(buf, len(buf)) != ST_OK
    assert a.error == one.error and a.error[0] == 2 + 30 + 26
    path = write_bytes(text)
    assert _error(path, threads=2) == _error(path) == (58, 8, "index 2 repeated")


def test_line_limit_in_the_second_part(write_bytes):
    """A line over max_line in the second part is refused at its line, as serially."""
    text = b"1 1:1\n" * 50 + b"1 " + b" ".join(b"%d:1" % j for j in range(1, 200)) + b"\n" + b"1 1:1\n" * 3
    path = write_bytes(text)
    ref = _error(path, max_line=300)
    assert ref[0] == 51 and "longer than the limit" in ref[2]
    assert _error(path, max_line=300, threads=2) == ref


def test_class_labels_range_in_the_second_part(write_bytes):
    text = b"1 1:1\n" * 30 + b"1e19 1:1\n"          # beyond int64 (a class label within it is read)
    path = write_bytes(text)
    ref = _error(path, class_labels=True)
    assert ref[:2] == (31, 1)
    assert _error(path, class_labels=True, threads=2) == ref
