"""llsvm-convert end to end (docs/architecture.md sections 7 and 9).

CliRunner runs the Click command in-process with exact stdout/stderr lines and exit codes; a few tests run the
installed console script in a real subprocess (pipes, gzip input, SIGINT/SIGTERM during a conversion).
"""
import bz2
import gzip
import lzma
import os
import shutil
import signal
import subprocess
import sys

import numpy as np
import pytest
from click.testing import CliRunner
from conftest import assert_exit

import llsvm
from llsvm import BinaryDataset, BinaryWriter, read_dataset
from llsvm.cli.convert import main

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "scripts"))
from children import communicate_within, wait_for  # noqa: E402

# 5 rows, 5 features, 9 non-zeros; labels in first-occurrence order 1 (2), -1 (2), 0.1 (1); one qid token;
# squared row norms 4.25, 1e-6, 7.25, 1, 14.
SAMPLE = (
    "1 1:0.5 3:2\n"
    "-1 2:1e-3\n"
    "0.1 qid:3 1:1 4:-2.5\n"
    "1 5:1\n"
    "-1 1:-1 2:2 3:3\n"
)
# what the writer gives back (%.17g, qid dropped)
SAMPLE_OUT = (
    "1 1:0.5 3:2\n"
    "-1 2:0.001\n"
    "0.10000000000000001 1:1 4:-2.5\n"
    "1 5:1\n"
    "-1 1:-1 2:2 3:3\n"
)
Y = [1.0, -1.0, 0.1, 1.0, -1.0]
INDPTR = [0, 2, 3, 5, 6, 9]
INDICES = [0, 2, 1, 0, 3, 4, 0, 1, 2]
VALUES = [0.5, 2.0, 1e-3, 1.0, -2.5, 1.0, -1.0, 2.0, 3.0]


# -- helpers ----------------------------------------------------------------------------------------------------

@pytest.fixture
def runner():
    return CliRunner()


@pytest.fixture
def sample(tmp_path):
    p = tmp_path / "sample.txt"
    p.write_text(SAMPLE)
    return p


def run(runner, args, input=None):
    return runner.invoke(main, [str(a) for a in args], input=input)


def assert_same(a, b, dtype=np.float64):
    """Two datasets hold identical arrays."""
    assert a.n_rows == b.n_rows
    assert a.n_features == b.n_features
    np.testing.assert_array_equal(a.y, b.y)
    np.testing.assert_array_equal(a.indptr, b.indptr)
    np.testing.assert_array_equal(a.indices, b.indices)
    assert a.values.dtype == dtype and b.values.dtype == dtype
    np.testing.assert_array_equal(a.values, b.values)


def assert_sample_arrays(ds, dtype=np.float64):
    assert ds.n_rows == 5
    assert ds.n_features == 5
    np.testing.assert_array_equal(ds.y, Y)
    np.testing.assert_array_equal(ds.indptr, INDPTR)
    np.testing.assert_array_equal(ds.indices, INDICES)
    assert ds.values.dtype == dtype
    np.testing.assert_array_equal(ds.values, np.array(VALUES, dtype=dtype))


def listing(directory):
    return sorted(os.listdir(directory))


def summary(path, rows=5, features=5, nnz=9, blocks=1, dtype="float64"):
    return f"wrote {path}: {rows} rows, {features} features, {nnz} non-zeros, {blocks} blocks, {dtype} values\n"


def text_summary(path, rows=5, features=5, nnz=9):
    return f"wrote {path}: {rows} rows, {features} features, {nnz} non-zeros (LIBSVM text)\n"


def flip_byte(path, offset):
    data = bytearray(path.read_bytes())
    data[offset] ^= 0xFF
    path.write_bytes(bytes(data))


def console_script():
    found = shutil.which("llsvm-convert", path=os.path.dirname(sys.executable))
    assert found is not None, "llsvm-convert is not installed next to " + sys.executable
    return found


def info_lines(path, fmt, dtype, classes, max_sq="14", qid=1, rows=5, features=5, nnz=9, density="36%",
               blocks=None, checksum="none (text has no checksum)", row_ids=False):
    lines = [f"file: {path}", f"format: {fmt}", f"rows: {rows}", f"features: {features}", f"nnz: {nnz}",
             f"density: {density}", f"value dtype: {dtype}", f"max squared row norm: {max_sq}"]
    if row_ids:
        lines.append("row ids: yes")
    lines.append(f"qid tokens: {qid}")
    lines += classes
    if blocks is not None:
        lines.append(f"blocks: {blocks}")
    lines.append(f"checksum: {checksum}")
    return "\n".join(lines) + "\n"


SAMPLE_CLASSES = ["classes: 3", "  1: 2", "  -1: 2", "  0.10000000000000001: 1"]


# -- conversions ------------------------------------------------------------------------------------------------

def test_text_binary_text_round_trip(runner, sample, tmp_path):
    out_bin = tmp_path / "sample.bin"
    r = run(runner, [sample, out_bin])
    assert_exit(r, 0)
    assert r.stdout == summary(out_bin)
    assert r.stderr == ""
    with BinaryDataset(out_bin) as b:
        assert (b.n_rows, b.n_features, b.nnz, b.n_blocks, b.dtype.name, b.n_qid) == (5, 5, 9, 1, "float64", 1)
        assert b.has_row_ids is False
    assert_sample_arrays(read_dataset(out_bin))
    assert_same(read_dataset(out_bin), read_dataset(sample))

    out_txt = tmp_path / "back.txt"
    r = run(runner, [out_bin, out_txt])
    assert_exit(r, 0)
    assert r.stdout == text_summary(out_txt)
    assert r.stderr == ""
    assert out_txt.read_text() == SAMPLE_OUT
    assert_same(read_dataset(out_txt), read_dataset(sample))
    assert listing(tmp_path) == ["back.txt", "sample.bin", "sample.txt"]


def test_round_trip_is_byte_exact_after_first_pass(runner, tmp_path):
    """Once normalised (%.17g, no qid), text -> binary -> text -> binary repeats byte for byte."""
    (tmp_path / "n.txt").write_text(SAMPLE_OUT)
    run(runner, [tmp_path / "n.txt", tmp_path / "a.bin"])
    run(runner, [tmp_path / "a.bin", tmp_path / "a.txt"])
    r = run(runner, ["-q", tmp_path / "a.txt", tmp_path / "b.bin"])
    assert_exit(r, 0)
    assert (tmp_path / "b.bin").read_bytes() == (tmp_path / "a.bin").read_bytes()
    r = run(runner, ["-q", tmp_path / "b.bin", tmp_path / "b.txt"])
    assert_exit(r, 0)
    assert (tmp_path / "b.txt").read_bytes() == (tmp_path / "a.txt").read_bytes() == SAMPLE_OUT.encode()


def test_quiet_silences_the_summary(runner, sample, tmp_path):
    out_bin = tmp_path / "q.bin"
    r = run(runner, ["-q", sample, out_bin])
    assert_exit(r, 0)
    assert (r.stdout, r.stderr) == ("", "")
    assert_sample_arrays(read_dataset(out_bin))
    r = run(runner, ["--quiet", out_bin, tmp_path / "q.txt"])
    assert_exit(r, 0)
    assert (r.stdout, r.stderr) == ("", "")
    assert (tmp_path / "q.txt").read_text() == SAMPLE_OUT


def test_float32(runner, sample, tmp_path):
    out = tmp_path / "f.bin"
    r = run(runner, ["--float32", sample, out])
    assert_exit(r, 0)
    assert r.stdout == summary(out, dtype="float32")
    with BinaryDataset(out) as b:
        assert b.dtype == np.float32
        assert b.float32 is True
    ds = read_dataset(out)
    assert_sample_arrays(ds, dtype=np.float32)
    # back to text: float32 values written with %.17g re-parse to the same float32 values
    r = run(runner, [out, tmp_path / "f.txt"])
    assert_exit(r, 0)
    assert (tmp_path / "f.txt").read_text().splitlines()[1] == "-1 2:0.0010000000474974513"
    back = read_dataset(tmp_path / "f.txt")
    np.testing.assert_array_equal(back.values, np.array(VALUES, np.float32).astype(np.float64))
    # binary -> binary keeps float32 unless asked otherwise
    r = run(runner, ["--to", "binary", out, tmp_path / "g.bin"])
    assert_exit(r, 0)
    assert r.stdout == summary(tmp_path / "g.bin", dtype="float32")
    assert_same(read_dataset(tmp_path / "g.bin"), ds, dtype=np.float32)


@pytest.mark.parametrize("block_rows, blocks, sizes", [(1, 5, [1, 1, 1, 1, 1]), (2, 3, [2, 2, 1]),
                                                       (4, 2, [4, 1]), (5, 1, [5]), (1000, 1, [5])])
def test_block_rows(runner, sample, tmp_path, block_rows, blocks, sizes):
    out = tmp_path / "b.bin"
    r = run(runner, ["--block-rows", block_rows, sample, out])
    assert_exit(r, 0)
    assert r.stdout == summary(out, blocks=blocks)
    with BinaryDataset(out) as b:
        assert b.n_blocks == blocks
        assert b.block_rows.tolist() == sizes
        assert b.block_first_row.tolist() == np.concatenate([[0], np.cumsum(sizes)[:-1]]).tolist()
        assert b.verify()
    assert_sample_arrays(read_dataset(out))
    r = run(runner, [out, "-"])
    assert_exit(r, 0)
    assert r.stdout == SAMPLE_OUT


def test_binary_to_binary_reblocks(runner, sample, tmp_path):
    run(runner, ["--block-rows", "2", sample, tmp_path / "a.bin"])
    r = run(runner, ["--to", "binary", "--block-rows", "4", tmp_path / "a.bin", tmp_path / "b.bin"])
    assert_exit(r, 0)
    assert r.stdout == summary(tmp_path / "b.bin", blocks=2)
    with BinaryDataset(tmp_path / "b.bin") as b:
        assert b.block_rows.tolist() == [4, 1]
        assert b.n_qid == 1
    assert_sample_arrays(read_dataset(tmp_path / "b.bin"))


def test_in_place_conversion_is_refused(runner, sample, tmp_path):
    """OUTPUT may not be INPUT (issue 44, L6): the rename at the end would replace the input (a text file by its
    binary form, qid tokens and float64 values lost with --float32), without a word. Refused before anything is
    written, the input as it was (tests/test_reliability3b.py: other spellings, symlinks, hard links)."""
    path = tmp_path / "x.bin"
    run(runner, [sample, path])
    before = path.read_bytes()
    for src in (path, sample):
        r = run(runner, ["-q", "--to", "binary", "--block-rows", "1", src, src])
        assert_exit(r, 1)
        assert r.stderr == (f"Error: OUTPUT {src} and INPUT {src} are the same file: writing OUTPUT would replace "
                            "it (nothing was written)\n")
    assert path.read_bytes() == before and sample.read_text() == SAMPLE
    assert listing(tmp_path) == ["sample.txt", "x.bin"]


def test_to_text_from_text_normalises(runner, tmp_path):
    src = tmp_path / "in.txt"
    src.write_bytes(b"+1\t1:1E2  2:.5\r\n-1 3:-0.0 # comment\n")
    out = tmp_path / "out.txt"
    r = run(runner, ["--to", "text", src, out])
    assert_exit(r, 0)
    assert r.stdout == text_summary(out, rows=2, features=3, nnz=3)
    assert out.read_text() == "1 1:100 2:0.5\n-1 3:-0\n"


def test_to_text_rejects_binary_only_options(runner, sample, tmp_path):
    for opt in (["--float32"], ["--block-rows", "3"]):
        r = run(runner, ["--to", "text", *opt, sample, tmp_path / "o.txt"])
        assert_exit(r, 1)
        assert r.stderr == "Error: --float32 and --block-rows apply to binary output only\n"
        assert r.stdout == ""
    assert listing(tmp_path) == ["sample.txt"]


def test_zero_based_input_and_output(runner, tmp_path):
    src = tmp_path / "z.txt"
    src.write_text("1 0:1 2:3\n-1 1:2\n")
    out = tmp_path / "z.bin"
    # without --zero-based, index 0 is rejected
    r = run(runner, [src, out])
    assert_exit(r, 1)
    assert r.stderr == (f"Wrong input format at line 1\n{src}: line 1, column 3: index 0 in 1-based data "
                        "(indices start at 1; use --zero-based for 0-based files)\n")
    assert listing(tmp_path) == ["z.txt"]
    r = run(runner, ["--zero-based", src, out])
    assert_exit(r, 0)
    assert r.stdout == summary(out, rows=2, features=3, nnz=3)
    ds = read_dataset(out)
    assert ds.indices.tolist() == [0, 2, 1]
    assert ds.n_features == 3
    r = run(runner, [out, "-"])
    assert_exit(r, 0)
    assert r.stdout == "1 1:1 3:3\n-1 2:2\n"
    r = run(runner, ["--zero-based", out, "-"])
    assert_exit(r, 0)
    assert r.stdout == "1 0:1 2:3\n-1 1:2\n"
    r = run(runner, ["--zero-based", "--to", "text", src, "-"])
    assert_exit(r, 0)
    assert r.stdout == "1 0:1 2:3\n-1 1:2\n"


def test_text_output_to_stdout(runner, sample, tmp_path):
    run(runner, [sample, tmp_path / "s.bin"])
    r = run(runner, [tmp_path / "s.bin", "-"])
    assert_exit(r, 0)
    assert r.stdout == SAMPLE_OUT          # no summary line mixed into the data
    assert r.stderr == ""
    r = run(runner, ["--to", "text", sample, "-"])
    assert_exit(r, 0)
    assert r.stdout == SAMPLE_OUT
    assert listing(tmp_path) == ["s.bin", "sample.txt"]


def test_binary_output_to_dash_is_refused(runner, sample, tmp_path, monkeypatch):
    """'-' means standard output; a binary file cannot go there (it is rewritten at the end), and the command
    must say so instead of creating a file literally named '-' in the current directory."""
    monkeypatch.chdir(tmp_path)
    r = run(runner, [sample, "-"])
    assert_exit(r, 1)
    assert r.stdout == ""
    assert r.stderr.startswith("Error: ")
    assert "standard output" in r.stderr
    assert listing(tmp_path) == ["sample.txt"]


def test_help(runner):
    r = run(runner, ["--help"])
    assert_exit(r, 0)
    assert r.stdout.startswith("Usage: main [OPTIONS] INPUT [OUTPUT]\n")
    for opt in ("--info", "--to [binary|text]", "--float32", "--block-rows", "--zero-based", "-q, --quiet"):
        assert opt in r.stdout


# -- --info -----------------------------------------------------------------------------------------------------

def test_info_text(runner, sample):
    r = run(runner, ["--info", sample])
    assert_exit(r, 0)
    assert r.stdout == info_lines(sample, "LIBSVM text", "float64 (text)", SAMPLE_CLASSES)
    assert r.stderr == ""


def test_info_text_gzip(runner, tmp_path):
    p = tmp_path / "s.gz"          # the name does not say gzip: the magic bytes do
    p.write_bytes(gzip.compress(SAMPLE.encode()))
    r = run(runner, ["--info", p])
    assert_exit(r, 0)
    assert r.stdout == info_lines(p, "LIBSVM text (gzip)", "float64 (text)", SAMPLE_CLASSES)


def test_info_binary(runner, sample, tmp_path):
    out = tmp_path / "i.bin"
    run(runner, ["--block-rows", "2", sample, out])
    r = run(runner, ["--info", out])
    assert_exit(r, 0)
    assert r.stdout == info_lines(out, "llsvm binary v1", "float64", SAMPLE_CLASSES, blocks=3,
                                  checksum="ok (3 blocks verified)")
    assert r.stderr == ""
    out32 = tmp_path / "i32.bin"
    run(runner, ["--float32", sample, out32])
    r = run(runner, ["--info", out32])
    assert_exit(r, 0)
    assert r.stdout == info_lines(out32, "llsvm binary v1", "float32", SAMPLE_CLASSES, blocks=1,
                                  checksum="ok (1 blocks verified)")


def test_info_labels_printed_with_17_digits_in_first_occurrence_order(runner, tmp_path):
    p = tmp_path / "l.txt"
    p.write_text("3 1:1\n0.3 1:1\n-2.5e-7 2:1\n3 2:1\n1e300 1:1\n0.3 1:1\n0.3 2:1\n")
    r = run(runner, ["--info", p])
    assert_exit(r, 0)
    assert r.stdout == info_lines(p, "LIBSVM text", "float64 (text)",
                                  ["classes: 4", "  3: 2", "  0.29999999999999999: 3",
                                   "  -2.4999999999999999e-07: 1", "  1.0000000000000001e+300: 1"],
                                  rows=7, features=2, nnz=7, density="50%", max_sq="1", qid=0)
    out = tmp_path / "l.bin"
    run(runner, [p, out])
    r = run(runner, ["--info", out])
    assert_exit(r, 0)
    assert r.stdout.splitlines()[9:14] == ["classes: 4", "  3: 2", "  0.29999999999999999: 3",
                                           "  -2.4999999999999999e-07: 1", "  1.0000000000000001e+300: 1"]


def test_info_continuous_labels(runner, tmp_path):
    n = 65537
    p = tmp_path / "reg.txt"
    p.write_bytes("".join(f"{i} 1:1\n" for i in range(n)).encode())
    r = run(runner, ["--info", p])
    assert_exit(r, 0)
    assert r.stdout == info_lines(p, "LIBSVM text", "float64 (text)",
                                  ["classes: continuous labels (more than 65536 distinct values)"],
                                  rows=n, features=1, nnz=n, density="100%", max_sq="1", qid=0)
    out = tmp_path / "reg.bin"
    r = run(runner, ["-q", p, out])
    assert_exit(r, 0)
    r = run(runner, ["--info", out])
    assert_exit(r, 0)
    assert "classes: continuous labels (more than 65536 distinct values)\n" in r.stdout


def test_info_binary_with_row_ids(runner, tmp_path):
    p = tmp_path / "ids.bin"
    with BinaryWriter(p, row_ids=True) as w:
        w.write([1.0, -1.0], [0, 1, 3], [0, 0, 2], [2.0, 1.0, 1.0], row_ids=[7, 3], n_features=3)
        w.close()
    r = run(runner, ["--info", p])
    assert_exit(r, 0)
    assert r.stdout == info_lines(p, "llsvm binary v1", "float64", ["classes: 2", "  1: 1", "  -1: 1"],
                                  rows=2, features=3, nnz=3, density="50%", max_sq="4", qid=0, blocks=1,
                                  checksum="ok (1 blocks verified)", row_ids=True)
    # binary -> binary keeps the row ids; binary -> text drops them
    r = run(runner, ["-q", "--to", "binary", p, tmp_path / "ids2.bin"])
    assert_exit(r, 0)
    with BinaryDataset(tmp_path / "ids2.bin") as b:
        assert b.has_row_ids
        assert b.load().row_ids.tolist() == [7, 3]
    r = run(runner, [p, "-"])
    assert_exit(r, 0)
    assert r.stdout == "1 1:2\n-1 1:1 3:1\n"


def test_info_stdin(runner):
    r = run(runner, ["--info", "-"], input=SAMPLE)
    assert_exit(r, 0)
    assert r.stdout == info_lines("-", "LIBSVM text", "float64 (text)", SAMPLE_CLASSES)


def test_info_corrupt_block_fails_checksum(runner, sample, tmp_path):
    out = tmp_path / "c.bin"
    run(runner, ["--block-rows", "2", sample, out])
    with BinaryDataset(out) as b:
        offset = int(b.block_offsets[1]) + 48 + 3       # inside block 1's labels
    flip_byte(out, offset)
    r = run(runner, ["--info", out])
    assert_exit(r, 1)
    msg = f"{out}: checksum mismatch in block 1: the file is corrupt"
    assert r.stdout == info_lines(out, "llsvm binary v1", "float64", SAMPLE_CLASSES, blocks=3,
                                  checksum=f"FAILED: {msg}")
    assert r.stderr == f"Error: {msg}\n"


def test_info_corrupt_header(runner, sample, tmp_path):
    out = tmp_path / "h.bin"
    run(runner, [sample, out])
    flip_byte(out, 20)                                  # n_rows
    r = run(runner, ["--info", out])
    assert_exit(r, 1)
    assert r.stdout == ""
    assert r.stderr == f"Error: {out}: header checksum mismatch: the file is corrupt\n"


def test_info_with_output_is_a_usage_error(runner, sample, tmp_path):
    r = run(runner, ["--info", sample, tmp_path / "o.bin"])
    assert_exit(r, 2)
    assert r.stdout == ""
    assert r.stderr.splitlines()[-1] == "Error: --info takes only INPUT"
    assert listing(tmp_path) == ["sample.txt"]


# -- errors -----------------------------------------------------------------------------------------------------

MALFORMED = [
    ("1 1:1\n-1 2:x\n", 2, 6, "value is not a number (found 'x')"),
    ("1 1:1\n1 3:1 2:1\n", 2, 7, "indices must be strictly increasing (index 2 after 3)"),
    ("1 1:1\nabc 1:1\n", 2, 1, "label is not a number (found 'abc')"),
    ("1 1:1\n1 1:1\n1 4\n", 3, 3, "expected index:value, missing ':' (found '4')"),
    ("1 1:nan\n", 1, 5, "value is NaN or infinite (found 'nan')"),
]


@pytest.mark.parametrize("to", ["binary", "text"])
@pytest.mark.parametrize("content, line, column, message", MALFORMED)
def test_malformed_text_line(runner, tmp_path, content, line, column, message, to):
    src = tmp_path / "bad.txt"
    src.write_text(content)
    out = tmp_path / "out.dat"
    r = run(runner, ["--to", to, src, out])
    assert_exit(r, 1)
    assert r.stdout == ""
    assert r.stderr == f"Wrong input format at line {line}\n{src}: line {line}, column {column}: {message}\n"
    assert listing(tmp_path) == ["bad.txt"]     # no output, no temporary file


@pytest.mark.parametrize("threads", ["1", "2", "3"])
def test_malformed_line_after_many_blocks_leaves_nothing(runner, tmp_path, threads):
    """The error comes after several blocks were written to the temporary file (with --threads 2 and more, by the
    writer while the parser runs ahead on its own thread)."""
    src = tmp_path / "late.txt"
    src.write_bytes(b"1 1:1 2:2\n" * 5000 + b"1 1:1 2:\n")
    r = run(runner, ["--threads", threads, "--block-rows", "100", src, tmp_path / "late.bin"])
    assert_exit(r, 1)
    assert r.stderr == (f"Wrong input format at line 5001\n{src}: line 5001, column 9: "
                        "value is missing after ':'\n")
    assert listing(tmp_path) == ["late.txt"]


def test_threads_write_the_same_file(runner, tmp_path, monkeypatch):
    """--threads 1 (parse, then write, in turn), 2 (the parse on a helper thread) and 3 (the parse itself on two
    threads, every chunk cut: SPLIT_MIN 0): the same bytes, on a generated set of several blocks, float64 and
    float32."""
    from conftest import generated_set

    from llsvm import textio
    monkeypatch.setattr(textio, "SPLIT_MIN", 0)
    src = tmp_path / "gen.txt"
    generated_set(src, "sparse", rows=4000, features=3000, seed=2)
    for extra in ([], ["--float32"]):
        files = []
        for threads in ("1", "2", "3"):
            out = tmp_path / f"t{threads}.bin"
            assert_exit(run(runner, ["-q", "--threads", threads, "--block-rows", "700", *extra, src, out]), 0)
            files.append(out.read_bytes())
        assert files[0] == files[1] == files[2]
        assert BinaryDataset(tmp_path / "t1.bin").n_blocks == 6


@pytest.mark.parametrize("to", ["binary", "text"])
def test_failed_conversion_keeps_existing_output(runner, tmp_path, to):
    src = tmp_path / "bad.txt"
    src.write_text("1 1:1\n-1 2:x\n")
    out = tmp_path / "out.dat"
    out.write_bytes(b"precious old contents\n")
    r = run(runner, ["--to", to, src, out])
    assert_exit(r, 1)
    assert r.stderr.splitlines()[0] == "Wrong input format at line 2"
    assert out.read_bytes() == b"precious old contents\n"
    assert listing(tmp_path) == ["bad.txt", "out.dat"]


def test_empty_input(runner, tmp_path):
    src = tmp_path / "empty.txt"
    src.write_text("")
    r = run(runner, [src, tmp_path / "e.bin"])
    assert_exit(r, 1)
    assert r.stderr == f"Wrong input format at line 1\n{src}: line 1, column 1: empty input: no data rows\n"
    assert listing(tmp_path) == ["empty.txt"]


def test_missing_input_file(runner, tmp_path):
    missing = tmp_path / "nope.txt"
    for args in ([missing, tmp_path / "o.bin"], ["--info", missing]):
        r = run(runner, args)
        assert_exit(r, 1)
        assert r.stdout == ""
        assert r.stderr == f"can't open input file {missing}\n"
    assert listing(tmp_path) == []


def test_input_is_a_directory(runner, tmp_path):
    r = run(runner, [tmp_path, tmp_path / "o.bin"])
    assert_exit(r, 1)
    assert r.stderr == f"can't open input file {tmp_path}\n"


def test_missing_output_argument(runner, sample):
    r = run(runner, [sample])
    assert_exit(r, 2)
    assert r.stdout == ""
    assert r.stderr.splitlines()[0] == "Usage: main [OPTIONS] INPUT [OUTPUT]"
    assert r.stderr.splitlines()[-1] == "Error: Missing argument 'OUTPUT' (or use --info)."


def test_no_arguments(runner):
    r = run(runner, [])
    assert_exit(r, 2)
    assert r.stderr.splitlines()[-1] == "Error: Missing argument 'INPUT'."


def test_unknown_option(runner, sample, tmp_path):
    r = run(runner, ["--bogus", sample, tmp_path / "o.bin"])
    assert_exit(r, 2)
    last = r.stderr.splitlines()[-1]
    assert last.startswith("Error: No such option") and "--bogus" in last      # Click's wording varies
    assert listing(tmp_path) == ["sample.txt"]


@pytest.mark.parametrize("value, message", [
    ("0", "Error: Invalid value for '--block-rows': 0 is not in the range x>=1."),
    ("-3", "Error: Invalid value for '--block-rows': -3 is not in the range x>=1."),
    ("two", "Error: Invalid value for '--block-rows': 'two' is not a valid integer"),
])
def test_bad_block_rows(runner, sample, tmp_path, value, message):
    r = run(runner, ["--block-rows", value, sample, tmp_path / "o.bin"])
    assert_exit(r, 2)
    assert r.stderr.splitlines()[-1].startswith(message)
    assert listing(tmp_path) == ["sample.txt"]


def test_bad_to_choice(runner, sample, tmp_path):
    r = run(runner, ["--to", "csv", sample, tmp_path / "o.bin"])
    assert_exit(r, 2)
    assert r.stderr.splitlines()[-1] == "Error: Invalid value for '--to': 'csv' is not one of 'binary', 'text'."


@pytest.mark.parametrize("to", ["text", "binary"])
def test_corrupt_binary_input(runner, sample, tmp_path, to):
    src = tmp_path / "c.bin"
    run(runner, [sample, src])
    flip_byte(src, 128 + 48 + 3)                        # block 0's first label
    out = tmp_path / "out.dat"
    r = run(runner, ["--to", to, src, out])
    assert_exit(r, 1)
    assert r.stdout == ""
    assert r.stderr == f"Error: {src}: checksum mismatch in block 0: the file is corrupt\n"
    assert listing(tmp_path) == ["c.bin", "sample.txt"]


def test_truncated_binary_input(runner, sample, tmp_path):
    src = tmp_path / "t.bin"
    run(runner, [sample, src])
    size = src.stat().st_size
    src.write_bytes(src.read_bytes()[:-10])
    r = run(runner, [src, tmp_path / "out.txt"])
    assert_exit(r, 1)
    assert r.stderr == (f"Error: {src}: truncated or corrupt: header and footer describe {size} bytes, "
                        f"the file has {size - 10}\n")
    assert listing(tmp_path) == ["sample.txt", "t.bin"]


def test_binary_on_stdin_is_refused(runner, sample, tmp_path):
    run(runner, [sample, tmp_path / "s.bin"])
    r = runner.invoke(main, ["-", str(tmp_path / "o.bin")], input=(tmp_path / "s.bin").read_bytes())
    assert_exit(r, 1)
    assert r.stderr == "Error: <stdin>: this is a binary llsvm file, not LIBSVM text\n"
    assert listing(tmp_path) == ["s.bin", "sample.txt"]


@pytest.mark.parametrize("to", ["binary", "text"])
def test_unwritable_output_directory_missing(runner, sample, tmp_path, to):
    out = tmp_path / "no-such-dir" / "out.dat"
    r = run(runner, ["--to", to, sample, out])
    assert_exit(r, 1)
    assert r.stdout == ""
    assert r.stderr == f"Error: can't write output file {out}: No such file or directory\n"
    assert listing(tmp_path) == ["sample.txt"]


@pytest.mark.parametrize("to", ["binary", "text"])
def test_output_is_an_existing_directory(runner, sample, tmp_path, to):
    out = tmp_path / "adir"
    out.mkdir()
    r = run(runner, ["--to", to, sample, out])
    assert_exit(r, 1)
    assert r.stdout == ""
    assert r.stderr == f"Error: can't write output file {out}: Is a directory\n"
    assert listing(tmp_path) == ["adir", "sample.txt"]
    assert listing(out) == []


def _truncated(data):
    return data[:len(data) // 2]


def _bad_crc(data):
    return data[:-8] + bytes(8)          # gzip trailer: CRC32 and size zeroed


def _bad_deflate(data):
    data = bytearray(data)
    data[12] ^= 0xFF                     # inside the deflate stream
    return bytes(data)


@pytest.mark.parametrize("compress, damage", [
    (gzip.compress, _truncated), (gzip.compress, _bad_crc), (gzip.compress, _bad_deflate),
    (bz2.compress, _truncated), (lzma.compress, _truncated),
], ids=["gzip-truncated", "gzip-bad-crc", "gzip-bad-deflate", "bzip2-truncated", "xz-truncated"])
def test_damaged_compressed_input(runner, tmp_path, compress, damage):
    """A damaged compressed file is bad input: `Error: PATH: ...` and exit 1, not a traceback nor Click's
    'Aborted!' (which Click prints for an EOFError, as if the user had pressed Ctrl-D)."""
    src = tmp_path / "in.z"
    src.write_bytes(damage(compress(("1 1:0.5 3:2\n-1 2:1\n" * 2000).encode())))
    for args in ([src, tmp_path / "out.bin"], ["--to", "text", src, tmp_path / "out.txt"], ["--info", src]):
        r = run(runner, args)
        assert_exit(r, 1)
        assert r.stdout == ""
        assert r.stderr.startswith(f"Error: {src}: ")
        assert "Aborted!" not in r.stderr
        assert len(r.stderr.splitlines()) == 1
        assert listing(tmp_path) == ["in.z"]


# -- stdin ------------------------------------------------------------------------------------------------------

def test_stdin_text_to_binary(runner, sample, tmp_path):
    out = tmp_path / "s.bin"
    r = run(runner, ["-", out], input=SAMPLE)
    assert_exit(r, 0)
    assert r.stdout == summary(out)
    assert_sample_arrays(read_dataset(out))
    assert_same(read_dataset(out), read_dataset(sample))


def test_stdin_text_to_stdout(runner):
    r = run(runner, ["--to", "text", "-", "-"], input=SAMPLE)
    assert_exit(r, 0)
    assert r.stdout == SAMPLE_OUT


def test_stdin_compressed(runner, tmp_path):
    out = tmp_path / "s.bin"
    r = runner.invoke(main, ["-q", "-", str(out)], input=gzip.compress(SAMPLE.encode()))
    assert_exit(r, 0)
    assert_sample_arrays(read_dataset(out))


def test_stdin_malformed(runner, tmp_path):
    r = run(runner, ["-", tmp_path / "o.bin"], input="1 1:1\n1 1:1 1:2\n")
    assert_exit(r, 1)
    assert r.stderr == "Wrong input format at line 2\n<stdin>: line 2, column 7: index 1 repeated\n"
    assert listing(tmp_path) == []


def test_stdin_real_pipe(tmp_path):
    out = tmp_path / "p.bin"
    proc = subprocess.run([console_script(), "-", str(out)], input=SAMPLE.encode(), capture_output=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.decode() == summary(out)
    assert proc.stderr == b""
    assert_sample_arrays(read_dataset(out))


def test_stdin_real_pipe_sys_executable(tmp_path):
    """The same with sys.executable running main() (convert.py has no __main__ guard for `python -m`),
    text piped in and out."""
    code = "import sys; from llsvm.cli.convert import main; sys.exit(main())"
    proc = subprocess.run([sys.executable, "-c", code, "--to", "text", "-", "-"], input=SAMPLE.encode(),
                          capture_output=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.decode() == SAMPLE_OUT


# -- real subprocesses ------------------------------------------------------------------------------------------

def test_subprocess_gzip_input(tmp_path):
    src = tmp_path / "data.txt.gz"
    src.write_bytes(gzip.compress(SAMPLE.encode()))
    out = tmp_path / "data.bin"
    proc = subprocess.run([console_script(), "--block-rows", "2", str(src), str(out)], capture_output=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.decode() == summary(out, blocks=3)
    assert proc.stderr == b""
    assert_sample_arrays(read_dataset(out))
    proc = subprocess.run([console_script(), "--info", str(out)], capture_output=True, timeout=600)
    assert proc.returncode == 0
    assert proc.stdout.decode() == info_lines(out, "llsvm binary v1", "float64", SAMPLE_CLASSES, blocks=3,
                                              checksum="ok (3 blocks verified)")
    proc = subprocess.run([console_script(), str(out), "-"], capture_output=True, timeout=600)
    assert proc.returncode == 0
    assert proc.stdout.decode() == SAMPLE_OUT


def test_subprocess_error_exit_codes(tmp_path):
    bad = tmp_path / "bad.txt"
    bad.write_text("1 1:1\n-1 2:x\n")
    proc = subprocess.run([console_script(), str(bad), str(tmp_path / "o.bin")], capture_output=True, timeout=600)
    assert proc.returncode == 1
    assert proc.stdout == b""
    assert proc.stderr.decode() == (f"Wrong input format at line 2\n{bad}: line 2, column 6: "
                                    "value is not a number (found 'x')\n")
    proc = subprocess.run([console_script(), str(tmp_path / "missing.txt"), str(tmp_path / "o.bin")],
                          capture_output=True, timeout=600)
    assert proc.returncode == 1
    assert proc.stderr.decode() == f"can't open input file {tmp_path / 'missing.txt'}\n"
    proc = subprocess.run([console_script(), "--block-rows", "0", str(bad), "o.bin"], capture_output=True,
                          timeout=600)
    assert proc.returncode == 2
    assert proc.stderr.decode().splitlines()[0] == "Usage: llsvm-convert [OPTIONS] INPUT [OUTPUT]"
    assert listing(tmp_path) == ["bad.txt"]


def wait_until_converting(proc, directory, name, cpu=30.0):
    """Until the writer's temporary file beside `name` (.NAME.*.tmp) holds data: the command is converting, its
    handlers are installed and part of the output is written (its first 8 MiB buffer of the 48 MB), most of the
    work still ahead. A point in the work, not a time, so the signal lands mid-conversion on a fast machine as on a
    slow one (the 0.1 s sleep once the file appeared, used before, was a fifth of the rest of the conversion here:
    a machine 5x faster would have finished first). The wait is bounded by the command's CPU time (this takes
    0.4 s of it) or its stall, not the wall clock; a conversion that ends first fails it (make the input larger)."""
    def converting():
        for n in os.listdir(directory):
            if n.startswith(f".{name}.") and n.endswith(".tmp"):
                try:
                    if os.path.getsize(os.path.join(directory, n)) > 0:
                        return True
                except FileNotFoundError:       # renamed or removed meanwhile: the loop sees the process end
                    pass
        return False
    wait_for(converting, proc, cpu, "converting", every=0.002)


@pytest.mark.parametrize("sig, expected_rc, expected_err", [
    (signal.SIGINT, 128 + signal.SIGINT, ""),      # handle_errors turns SIGINT into SystemExit(130), silently
    (signal.SIGTERM, 128 + signal.SIGTERM, ""),    # and SIGTERM into SystemExit(143)
], ids=["SIGINT", "SIGTERM"])
def test_signal_during_conversion_leaves_nothing(big_text, tmp_path, sig, expected_rc, expected_err):
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    out = out_dir / "big.bin"
    proc = subprocess.Popen([console_script(), "--no-progress", str(big_text), str(out)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        wait_until_converting(proc, out_dir, "big.bin")
        proc.send_signal(sig)
        stdout, stderr = communicate_within(proc, 5.0)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == expected_rc, stderr
    assert stdout == b""
    assert stderr.decode() == expected_err
    assert listing(out_dir) == []


def test_signal_keeps_existing_output(big_text, tmp_path):
    out = tmp_path / "big.bin"
    out.write_bytes(b"old")
    proc = subprocess.Popen([console_script(), str(big_text), str(out)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    try:
        wait_until_converting(proc, tmp_path, "big.bin")
        proc.send_signal(signal.SIGTERM)
        communicate_within(proc, 5.0)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 143
    assert out.read_bytes() == b"old"
    assert listing(tmp_path) == ["big.bin"]


def test_big_conversion_completes(big_text, tmp_path):
    """The same input converted to the end (in-process): the counts the signal tests interrupt."""
    out = tmp_path / "big.bin"
    r = run(CliRunner(), ["-q", big_text, out])
    assert_exit(r, 0)
    with BinaryDataset(out) as b:
        assert b.n_rows == 300000
        assert b.labels.tolist() == [-1.0, 1.0]
        assert b.label_counts.tolist() == [150000, 150000]
    assert llsvm.file_kind(out) == "binary"


def _into_closed_pipe(args):
    """Run `python -m ARGS` with stdout a pipe whose reader has gone (`... | head` after its lines)."""
    r, w = os.pipe()
    os.close(r)
    try:
        return subprocess.run([sys.executable, "-m", *map(str, args)], stdout=w, stderr=subprocess.PIPE, text=True,
                              timeout=600)
    finally:
        os.close(w)


def test_stdout_reader_gone_ends_quietly_with_sigpipes_status(tmp_path):
    """`llsvm-convert --info F | head -2`, `llsvm-convert --to text F.bin - | head`, `llsvm-predict ... - | head`:
    once stdout's reader has gone the command ends without a message (no 'internal error', no "can't write
    output file -"), with 141 as a C tool that SIGPIPE ended; the model of a `train` is the other case
    (test_liblinear_types: it goes on, exit 0)."""
    rng = np.random.default_rng(0)
    rows = "".join(f"{rng.choice([-1, 1])} " + " ".join(f"{j}:{rng.random():.6f}" for j in range(1, 40)) + "\n"
                   for _ in range(4000))
    text = tmp_path / "d.txt"
    text.write_text(rows)
    binary = tmp_path / "d.bin"
    assert subprocess.run([sys.executable, "-m", "llsvm.cli.convert", "-q", str(text), str(binary)]).returncode == 0
    model = tmp_path / "m.model"
    assert subprocess.run([sys.executable, "-m", "llsvm.cli.train", "-q", str(binary), str(model)]).returncode == 0
    for args in (["llsvm.cli.convert", "--info", binary], ["llsvm.cli.convert", "--to", "text", binary, "-"],
                 ["llsvm.cli.predict", text, model, "-"]):
        p = _into_closed_pipe(args)
        assert (p.returncode, p.stderr) == (128 + signal.SIGPIPE, ""), args
    # a broken pipe that is not stdout's (an output path naming a FIFO whose reader left) keeps its message
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)

    def read_and_leave():
        os.close(os.open(fifo, os.O_RDONLY))

    import threading
    reader = threading.Thread(target=read_and_leave)
    reader.start()
    p = subprocess.run([sys.executable, "-m", "llsvm.cli.convert", "--to", "text", str(binary), str(fifo)],
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, timeout=600)
    reader.join()
    assert p.returncode == 1 and p.stderr == f"Error: can't write output file {fifo}: Broken pipe\n"


# -- -W: row weights in a version 2 file (issue 46) --------------------------------------------------------------

def test_weight_file_writes_a_version_2_file(runner, sample, tmp_path):
    """-W stores the weights (llsvm-train -W's reader); without -W the file is version 1; converting a weighted
    file to binary again keeps them; to text drops them, saying so."""
    (tmp_path / "w").write_text("0.5\n2\n0\n1e-3\n3\n")
    r = run(runner, ["-W", tmp_path / "w", sample, tmp_path / "o.bin"])
    assert_exit(r, 0)
    assert r.stdout.endswith(", row weights (version 2)\n")
    with BinaryDataset(tmp_path / "o.bin") as b:
        assert b.version == 2 and b.has_weights
        assert_same(b.load(), read_dataset(sample))
        assert b.load().weights.tolist() == [0.5, 2.0, 0.0, 1e-3, 3.0]
    r = run(runner, ["--info", tmp_path / "o.bin"])
    assert "format: llsvm binary v2\n" in r.stdout and "row weights: yes\n" in r.stdout
    assert_exit(run(runner, ["-q", "--to", "binary", "--block-rows", "2", tmp_path / "o.bin", tmp_path / "p.bin"]), 0)
    with BinaryDataset(tmp_path / "p.bin") as b:
        assert b.n_blocks == 3 and b.load().weights.tolist() == [0.5, 2.0, 0.0, 1e-3, 3.0]
    r = run(runner, [tmp_path / "o.bin", tmp_path / "o.txt"])
    assert_exit(r, 0)
    assert "carries row weights; LIBSVM text has none" in r.stderr
    assert (tmp_path / "o.txt").read_text() == SAMPLE_OUT
    assert_exit(run(runner, ["-q", sample, tmp_path / "v1.bin"]), 0)
    with BinaryDataset(tmp_path / "v1.bin") as b:
        assert b.version == 1 and not b.has_weights


@pytest.mark.parametrize("text, where", [
    ("1\n" * 4, "w:5:1: 4 weights for more training rows"),
    ("1\n" * 6, "w:6:1: 6 weights for 5 training rows"),
    ("1\nx\n1\n1\n1\n", "w:2:1: weight 'x' is not a number"),
    ("1\n1\n-2\n1\n1\n", "w:3:1: weight '-2' must be a finite number >= 0"),
])
def test_weight_file_errors_name_file_and_line(runner, sample, tmp_path, text, where):
    """The weight file's errors as llsvm-train's: file and line; nothing is written."""
    (tmp_path / "w").write_text(text)
    r = run(runner, ["-W", tmp_path / "w", sample, tmp_path / "o.bin"])
    assert_exit(r, 1)
    out = (r.stdout + r.stderr).replace(str(tmp_path) + "/", "").replace(": line ", ":").replace(", column ", ":")
    assert where in out, out
    assert not (tmp_path / "o.bin").exists()


def test_weight_file_refusals(runner, sample, tmp_path):
    (tmp_path / "w").write_text("1\n" * 5)
    r = run(runner, ["-W", tmp_path / "absent", sample, tmp_path / "o.bin"])
    assert_exit(r, 1)
    assert "can't open weight file" in r.stderr
    r = run(runner, ["--to", "text", "-W", tmp_path / "w", sample, tmp_path / "o.txt"])
    assert_exit(r, 1)
    assert "-W applies to binary output only" in r.stderr
    assert_exit(run(runner, ["-q", "-W", tmp_path / "w", sample, tmp_path / "o.bin"]), 0)
    r = run(runner, ["--to", "binary", "-W", tmp_path / "w", tmp_path / "o.bin", tmp_path / "p.bin"])
    assert_exit(r, 1)
    assert "carries its rows' weights already" in r.stderr
    r = run(runner, ["-W", tmp_path / "w", sample, tmp_path / "w"])
    assert_exit(r, 1)
    assert "are the same file" in r.stderr
