"""Issue 49, item 4 ("conversion at parse speed"): a regular, uncompressed text file is parsed in place through a
memory map (llsvm.sources.TextSource.mapped, llsvm.textio._Scanner._mapped_chunks), not copied into a buffer;
compressed input, pipes and standard input keep the streaming reader. Both readers give the same rows, the same
errors and the same binary file; the map's parsed pages leave the process's resident memory as a stream goes
(bounded memory); and llsvm-convert, whose writer now keeps a text chunk's rows without copying them, writes the
file the in-memory writer writes, byte for byte. A file that shrinks while it is mapped is refused, not a SIGBUS.
"""
import gzip
import random

import numpy as np
import pytest
from click.testing import CliRunner

import llsvm
from llsvm.cli.convert import main as convert_main
from llsvm.sources import TextSource
from llsvm.textio import TextStream, read_text


def _text(seed, rows=400):
    """LIBSVM text with what the chunking must get right: blank and comment lines, CRLF endings, qid tokens, long
    and short lines, and no newline after the last line."""
    rnd = random.Random(seed)
    lines = []
    for i in range(rows):
        r = rnd.random()
        if r < 0.05:
            lines.append(b"")
        elif r < 0.08:
            lines.append(b"# a comment line")
        else:
            k = rnd.choice([0, 1, 3, 30])
            idx = sorted(rnd.sample(range(1, 500), k))
            pairs = b" ".join(b"%d:%.6g" % (j, rnd.uniform(-5, 5)) for j in idx)
            qid = b" qid:%d" % rnd.randrange(9) if r > 0.9 else b""
            end = b"\r" if r > 0.85 else b""
            lines.append(b"%d%s %s%s" % (rnd.choice([-1, 1, 2]), qid, pairs, end))
    return b"\n".join(lines)                     # no final newline


def _no_reads(monkeypatch):
    """Reading a regular file through TextSource.readinto (the copying reader) fails the test."""
    def refuse(self, view):
        raise AssertionError(f"{self.name} was read by copying, not through its memory map")
    monkeypatch.setattr(TextSource, "readinto", refuse)


def _arrays(ds):
    return ds.y, ds.indptr, ds.indices, ds.values


@pytest.mark.parametrize("chunk", [7, 64, 1000, 1 << 20])
@pytest.mark.parametrize("threads", [1, 2])
def test_map_reads_what_the_stream_reads(tmp_path, monkeypatch, chunk, threads):
    """read_text and TextStream of a plain file (mapped) against the same text gzipped (streamed): the same arrays,
    chunk by chunk, and the map is read without a copy into a buffer (before issue 49 every file was copied)."""
    data = _text(chunk + threads)
    plain, packed = tmp_path / "d.txt", tmp_path / "d.gz"
    plain.write_bytes(data)
    packed.write_bytes(gzip.compress(data))
    want = read_text(str(packed), chunk_size=chunk, threads=threads)
    want_blocks = [_arrays(b) for b in TextStream(str(packed), chunk_size=chunk).iter_blocks()]
    _no_reads(monkeypatch)
    got = read_text(str(plain), chunk_size=chunk, threads=threads)
    assert (got.n_rows, got.n_features, got.n_qid) == (want.n_rows, want.n_features, want.n_qid)
    for a, b in zip(_arrays(got), _arrays(want)):
        np.testing.assert_array_equal(a, b)
    # the blocks fall where each reader's chunks end (a line longer than the chunk: the stream's buffer doubles,
    # the map's chunk ends at its newline); their rows, joined, are the same
    stream = TextStream(str(plain), chunk_size=chunk, threads=threads)
    got_blocks = [_arrays(b) for b in stream.iter_blocks()]
    for k in (0, 2, 3):
        np.testing.assert_array_equal(np.concatenate([g[k] for g in got_blocks]),
                                      np.concatenate([w[k] for w in want_blocks]))
    np.testing.assert_array_equal(np.concatenate([np.diff(g[1]) for g in got_blocks]),
                                  np.concatenate([np.diff(w[1]) for w in want_blocks]))
    assert (stream.n_rows, stream.nnz) == (want.n_rows, want.nnz)


@pytest.mark.parametrize("data, line, column", [
    (b"1 1:1\n1 2:x\n", 2, 5),
    (b"1 1:1\n\n1 3:1 2:1", 3, 7),                       # in the last line, which has no newline
    (b"1 1:1\n1 " + b"1:1 " * 40 + b"\n1 1:1\n", 2, 1),   # longer than the limit (100 bytes)
    (b"1 1:1\n1 " + b"1:1 " * 40, 2, 1),                  # the same, as the last line
])
def test_map_errors_name_the_stream_line(tmp_path, monkeypatch, data, line, column):
    """A malformed line read through the map is refused at the line and column the streaming reader names."""
    plain, packed = tmp_path / "d.txt", tmp_path / "d.gz"
    plain.write_bytes(data)
    packed.write_bytes(gzip.compress(data))
    errors = []
    for path in (packed, plain):
        if path is plain:
            _no_reads(monkeypatch)
        with pytest.raises(llsvm.DataFormatError) as info:
            read_text(str(path), chunk_size=16, max_line=100)
        errors.append((info.value.line, info.value.column, info.value.message))
    assert errors[0] == errors[1]
    assert errors[1][:2] == (line, column)


def _rss_file():
    with open("/proc/self/status") as f:
        for row in f:
            if row.startswith("RssFile:"):
                return int(row.split()[1]) << 10
    raise AssertionError("no RssFile in /proc/self/status")


def test_map_pages_leave_resident_memory(tmp_path):
    """A TextStream of a 24 MB file in 1 MB chunks: the parsed part of the map leaves the process's resident memory
    as the stream goes (the page cache keeps it), so the stream's memory does not grow with the file."""
    path = tmp_path / "big.txt"
    path.write_bytes(b"1 1:0.5 2:0.25 7:1\n" * 1_300_000)      # 24.7 MB
    base = _rss_file()
    peak = 0
    rows = 0
    for block in TextStream(str(path), chunk_size=1 << 20).iter_blocks():
        rows += block.n_rows
        peak = max(peak, _rss_file() - base)
    assert rows == 1_300_000
    assert peak < 6 << 20, peak


@pytest.mark.parametrize("extra", [[], ["--block-rows", "7"], ["--float32"], ["--zero-based"]])
def test_convert_writes_the_in_memory_writers_file(tmp_path, extra):
    """llsvm-convert (a mapped file, its chunks' rows kept by the writer without a copy) writes byte for byte the
    file that llsvm.write_binary writes from the parsed dataset (rows copied, bytes held back copied)."""
    text = tmp_path / "d.txt"
    text.write_bytes(b"\n".join(_text(seed) for seed in range(5)) + b"\n")
    out = tmp_path / "cli.bin"
    result = CliRunner().invoke(convert_main, ["-q", *extra, str(text), str(out)])
    assert result.exit_code == 0, result.output
    zero = "--zero-based" in extra
    ds = llsvm.read_dataset(str(text), zero_based=zero, float32="--float32" in extra)
    ref = tmp_path / "ref.bin"
    block_rows = int(extra[1]) if extra[:1] == ["--block-rows"] else None
    llsvm.write_binary(ds, str(ref), block_rows=block_rows)
    assert out.read_bytes() == ref.read_bytes()


# A child that parses a mapped file in 64 KB chunks and truncates it after the first chunk (as another process
# truncating or rewriting the file in place would), as read_text, as a stream, or through llsvm-convert's CLI.
_SHRINK = r"""
import os, sys
import llsvm.textio as textio
path, cut, how = sys.argv[1], int(sys.argv[2]), sys.argv[3]
piece = textio._Scanner._mapped_piece
def once(self, *args, **kwargs):
    if os.path.getsize(path) > cut:
        os.truncate(path, cut)
    return piece(self, *args, **kwargs)
textio._Scanner._mapped_piece = once
textio.DEFAULT_CHUNK = 1 << 16
if how == "convert":
    from llsvm.cli.convert import main
    sys.exit(main([path, path + ".bin", "--block-rows", "1000"]))
try:
    if how == "read":
        textio.read_text(path, chunk_size=1 << 16)
    else:
        for block in textio.TextStream(path, chunk_size=1 << 16).iter_blocks():
            pass
except llsvm.DataFormatError as e:
    print("refused:", e)
    sys.exit(1)
print("read it all")
""".replace("llsvm.DataFormatError", "textio.DataFormatError")


@pytest.mark.parametrize("how", ["read", "stream", "convert"])
@pytest.mark.parametrize("cut", [0, 5000, 200_001])
def test_a_file_that_shrinks_while_mapped_is_refused_not_a_crash(tmp_path, how, cut):
    """Truncated while it is parsed through the map (after its first 64 KB chunk): the pages past the new end would
    raise SIGBUS and kill the process without a word (before the guard: exit -7); the guard answers the fault with
    zero pages and the reader refuses the file, naming it, with exit 1 from the CLI and no output file; also for a cut
    inside a page (200,001 bytes), whose rest reads as zeros without a fault."""
    import subprocess
    import sys
    path = tmp_path / "big.txt"
    path.write_bytes(b"1 1:0.5 2:0.25 7:1\n" * 60_000)         # 1.1 MB: 18 chunks
    proc = subprocess.run([sys.executable, "-c", _SHRINK, str(path), str(cut), how], capture_output=True,
                          text=True, timeout=600)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, (proc.returncode, out)
    assert f"{path}: the file shrank while it was read (from 1140000 to {cut} bytes)" in out, out
    assert "Traceback" not in out
    assert not (tmp_path / "big.txt.bin").exists()
