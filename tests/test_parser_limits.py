"""Issue 13 ("Reliability"), items 2 and 7: the text line limit and what parser messages quote.

- A line with more bytes before its newline than the limit (llsvm.textio.DEFAULT_MAX_LINE, 256 MiB; under
  llsvm-train --memory, textio.line_limit: a quarter of the budget, at least 1 MiB) is refused with its line number,
  in bounded memory: the real commands run in subprocesses under a 2 GiB address-space limit, reading a 2 GiB line
  from a pipe, and must exit 1 with the message and no traceback.
- Messages quote just the offending piece (the value of an index:value pair, at the value's column; the index of a
  bad index), with control characters and bytes that are not UTF-8 escaped (llsvm.errors.quote), in data and model
  files alike; a model's label-count mismatch is reported at its `label` line; a class label beyond the int64 range
  is reported at its line and column when training.
"""
import gzip
import os
import resource
import sys
import subprocess
import threading

import numpy as np
import pytest
from click.testing import CliRunner

from conftest import PEAK, REPO_ROOT, assert_exit

import llsvm
from llsvm.models import load_model
from llsvm.cli.convert import main as convert_main
from llsvm.cli.predict import main as predict_main
from llsvm.cli.train import main as train_main
from llsvm.errors import ModelFormatError, escape, quote
from llsvm.options import LLSVMOptions
from llsvm.textio import DEFAULT_MAX_LINE, MIN_MAX_LINE, TextStream, line_limit, read_text

MiB = 1 << 20
AS_LIMIT = 2 << 30          # the address-space limit of the subprocesses
RSS_MARGIN = 192 * MiB      # the interpreter, NumPy, SciPy and Click, on top of the line buffer
# what the writer may get into the pipe beyond the limit before the command gives up: the pipe's buffer (measured:
# the limit + 64 KiB + the prefix) and a read chunk. A count of bytes, not a time: a command that went on reading
# the 2 GiB line (in bounded memory) would take all 2 GiB whatever the machine's speed.
READ_AHEAD = 4 * MiB

# writes argv[1] (hex) then argv[2] bytes of 'a' (no newline) to stdout; stops quietly when the reader is gone and
# writes the number of bytes the pipe took to the file argv[3] (the reader consumed all of them but a pipe buffer)
WRITER = r"""
import os, sys
written = 0
def put(data):
    global written
    view = memoryview(data)
    while view:
        n = os.write(1, view)
        written += n
        view = view[n:]
try:
    put(bytes.fromhex(sys.argv[1]))
    left = int(sys.argv[2])
    block = b"a" * (1 << 20)
    while left > 0:
        put(block[:left])
        left -= len(block)
except BrokenPipeError:
    pass
with open(sys.argv[3], "w") as f:
    f.write(str(written))
os._exit(0)
"""

SMALL = "1 1:0.5 2:1\n-1 1:-1 3:0.25\n1 2:2 3:-0.5\n-1 1:-0.75 2:-1\n"


def _limit_address_space():
    resource.setrlimit(resource.RLIMIT_AS, (AS_LIMIT, AS_LIMIT))


def run_long_line(args, prefix=b"", total=2 << 30, timeout=600):
    """`python -m args...` reading `prefix` then a line of `total` bytes of 'a' from a pipe, under RLIMIT_AS 2 GiB.
    Returns (exit code, stdout, stderr, peak RSS in bytes, bytes the writer got into the pipe). The timeout only
    guards against a hang: a run takes 0.4-1.5 s."""
    import tempfile
    fd, peak_file = tempfile.mkstemp(prefix="llsvm-peak-")
    os.close(fd)
    fd, written_file = tempfile.mkstemp(prefix="llsvm-written-")
    os.close(fd)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO_ROOT), os.environ.get("PYTHONPATH", "")]),
               LLSVM_PEAK_FILE=peak_file)
    writer = subprocess.Popen([sys.executable, "-c", WRITER, prefix.hex(), str(total), written_file],
                              stdout=subprocess.PIPE)
    try:
        proc = subprocess.Popen([sys.executable, "-c", PEAK, *map(str, args)], stdin=writer.stdout,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                                preexec_fn=_limit_address_space)
    finally:
        writer.stdout.close()
    outs = {}

    def drain(name, f):
        outs[name] = f.read().decode("utf-8", "replace")

    readers = [threading.Thread(target=drain, args=(n, f)) for n, f in (("out", proc.stdout), ("err", proc.stderr))]
    for t in readers:
        t.start()
    for t in readers:
        t.join(timeout)
    if any(t.is_alive() for t in readers):   # pragma: no cover - a hang
        proc.kill()
        writer.kill()
    proc.wait(timeout)
    proc.stdout.close()
    proc.stderr.close()
    writer.wait(timeout)
    with open(peak_file) as f:
        peak = int(f.read() or 0) * 1024
    os.unlink(peak_file)
    with open(written_file) as f:
        written = int(f.read() or -1)
    os.unlink(written_file)
    assert peak > 0, "the command did not report its peak RSS"
    assert written >= 0, "the writer did not report its count"
    return proc.returncode, outs["out"], outs["err"], peak, written


def too_long(line, limit):
    return (f"Wrong input format at line {line}\n<stdin>: line {line}, column 1: line is longer than the limit of "
            f"{limit // MiB} MiB ({limit} bytes)\n")


# -- the line limit: the real commands on a 2 GiB line ----------------------------------------------------------

def test_default_limit_llsvm_train_s3_in_bounded_memory():
    """-s 3 reads the whole input in memory: the 2 GiB line (after three good lines) stops at the 256 MiB limit."""
    rc, out, err, rss, written = run_long_line(["llsvm.cli.train", "-q", "-s", "3", "-", os.devnull],
                                               prefix="".join(SMALL.splitlines(True)[:3]).encode())
    assert (rc, out) == (1, ""), err
    assert err == too_long(4, DEFAULT_MAX_LINE)
    assert "Traceback" not in err
    assert rss < DEFAULT_MAX_LINE + RSS_MARGIN, rss
    assert written < DEFAULT_MAX_LINE + READ_AHEAD, written


@pytest.mark.parametrize("solver", ["llsvm", "streamsvm", "bm"])
def test_memory_lowers_the_limit_for_streamed_training(solver):
    """--memory 64M: the out-of-core solvers read text lines of at most 64M / 4 = 16 MiB."""
    rc, out, err, rss, written = run_long_line(["llsvm.cli.train", "-q", "-s", solver, "--memory", "64M", "-",
                                                os.devnull])
    assert (rc, out) == (1, ""), err
    assert err == too_long(1, 16 * MiB)
    assert rss < 16 * MiB + RSS_MARGIN, rss
    assert written < 16 * MiB + READ_AHEAD, written


def test_default_limit_llsvm_convert_from_stdin(tmp_path):
    out_file = tmp_path / "out.bin"
    rc, out, err, rss, written = run_long_line(["llsvm.cli.convert", "-", out_file], prefix=b"1 1:1\n")
    assert (rc, out) == (1, ""), err
    assert err == too_long(2, DEFAULT_MAX_LINE)
    assert rss < DEFAULT_MAX_LINE + RSS_MARGIN, rss
    assert written < DEFAULT_MAX_LINE + READ_AHEAD, written
    assert os.listdir(tmp_path) == []            # no output, no temporary file


def test_default_limit_llsvm_predict_from_stdin(tmp_path):
    model = tmp_path / "m"
    data = tmp_path / "small.txt"
    data.write_text(SMALL)
    assert_exit(CliRunner().invoke(train_main, ["-q", str(data), str(model)]), 0)
    rc, out, err, rss, written = run_long_line(["llsvm.cli.predict", "-", model, tmp_path / "pred"],
                                               prefix=b"1 1:1\n-1 2:1\n")
    assert (rc, out) == (1, ""), err
    assert err == too_long(3, DEFAULT_MAX_LINE)
    assert rss < DEFAULT_MAX_LINE + RSS_MARGIN, rss
    assert written < DEFAULT_MAX_LINE + READ_AHEAD, written
    assert not (tmp_path / "pred").exists()


# -- the line limit: the rule, in process -----------------------------------------------------------------------

def test_line_limit_rule():
    assert DEFAULT_MAX_LINE == 256 * MiB and MIN_MAX_LINE == MiB
    assert line_limit() == line_limit(None) == DEFAULT_MAX_LINE
    assert line_limit(64 * MiB) == 16 * MiB
    assert line_limit(10 * MiB) == 10 * MiB // 4
    assert line_limit(256 << 10) == MiB                   # the smallest --memory: the floor
    assert line_limit(2 << 30) == DEFAULT_MAX_LINE         # never above the default


def _readers(path, limit, chunk):
    yield lambda: read_text(str(path), max_line=limit, chunk_size=chunk)
    yield lambda: llsvm.read_dataset(path, max_line=limit, chunk_size=chunk)
    yield lambda: list(llsvm.open_dataset(path, stream=True, max_line=limit, chunk_size=chunk).iter_blocks())
    yield lambda: list(llsvm.iter_blocks(path, max_line=limit))


@pytest.mark.parametrize("chunk", [3, 16, 64, 1 << 16])     # smaller and larger than the line and the limit
@pytest.mark.parametrize("compress", [False, True])
def test_limit_is_exact_whatever_the_chunk(tmp_path, chunk, compress):
    """A line may hold max_line bytes before its newline ('\\r' and comments count), not one more; the same rule
    whether the line outgrows the read buffer or sits inside one chunk, on plain and gzip input."""
    import gzip
    limit = 40
    ok_row = b"1 " + b" ".join(b"%d:1" % i for i in range(1, 20))
    ok_row = ok_row[:ok_row.rindex(b" ", 0, limit + 1)]
    ok_row += b" " * (limit - len(ok_row))
    assert len(ok_row) == limit
    cases = [
        (b"1 1:1\n" + ok_row + b"\n-1 2:1\n", None),
        (b"1 1:1\n" + ok_row + b"\n-1 2:1", None),
        (b"1 1:1\n" + ok_row[:-1] + b"\r\n-1 2:1\n", None),
        (b"# " + b"c" * (limit - 2) + b"\n1 1:1\n", None),
        (b"1 1:1\n" + ok_row + b" \n-1 2:1\n", 2),
        (b"1 1:1\n\n" + ok_row + b"\r\n-1 2:1\n", 3),
        (b"1 1:1\n" + ok_row + b" ", 2),                                     # the last line, without newline
        (b"# " + b"c" * (limit - 1) + b"\n1 1:1\n", 1),
        (b"1 1:1\n-1 2:1\n" + b"a" * 10000 + b"\n", 3),
    ]
    for data, bad_line in cases:
        path = tmp_path / "d.txt"
        path.write_bytes(gzip.compress(data) if compress else data)
        for call in _readers(path, limit, chunk):
            if bad_line is None:
                call()
                continue
            with pytest.raises(llsvm.DataFormatError) as info:
                call()
            e = info.value
            assert (e.path, e.line, e.column) == (str(path), bad_line, 1), data
            assert e.message == "line is longer than the limit of 40 bytes"


@pytest.mark.parametrize("kind", ["gzip", "plain"])
def test_buffer_shrinks_back_after_a_long_line(tmp_path, kind):
    """After a line longer than the chunk, the reader goes back to chunk-sized reads (the parser's chunks, and so the
    blocks of a TextStream, stay small). A compressed stream grows its buffer (doubling: one chunk of 4 KB); a
    plain file is read through a memory map, where the long line's chunk ends at its newline."""
    rows = b"1 1:1\n" * 2000
    path = tmp_path / "d.txt"
    data = rows + b"1 " + b" ".join(b"%d:1" % i for i in range(1, 400)) + b"\n" + rows     # 2.5 KB
    path.write_bytes(gzip.compress(data) if kind == "gzip" else data)
    blocks = list(TextStream(str(path), chunk_size=64).iter_blocks())
    assert sum(b.n_rows for b in blocks) == 4001
    if kind == "gzip":
        assert max(b.n_rows for b in blocks) > 64               # the buffer grew: one chunk of 4 KB
    else:
        assert max(b.n_rows for b in blocks) <= 64 // 6 + 1     # the long line's chunk: the rows before it, and it
    assert max(b.n_rows for b in blocks[-100:]) <= 64 // 6      # and shrank back


def _long_row_file(tmp_path, n_bytes):
    """Two classes; line 3 holds about n_bytes of features."""
    path = tmp_path / "long.txt"
    feats = []
    size, i = 0, 1
    while size < n_bytes:
        tok = b"%d:0.5" % i
        feats.append(tok)
        size += len(tok) + 1
        i += 1
    path.write_bytes(b"1 1:1\n-1 2:1\n1 " + b" ".join(feats) + b"\n-1 3:1\n")
    return path


def test_limit_message_names_the_size(tmp_path):
    path = _long_row_file(tmp_path, MiB + 10)
    with pytest.raises(llsvm.DataFormatError) as info:
        llsvm.read_dataset(path, max_line=MiB)
    assert str(info.value) == f"{path}:3:1: line is longer than the limit of 1 MiB (1048576 bytes)"
    assert llsvm.read_dataset(path, max_line=2 * MiB).n_rows == 4


def test_streamed_solvers_take_the_limit_from_their_memory_budget(tmp_path):
    """The drivers derive the limit from their own budget (textio.line_limit), for the CLI and the library alike."""
    path = _long_row_file(tmp_path, 3 * MiB // 2)        # 1.5 MiB: over the 1 MiB floor, under 64M / 4
    with pytest.raises(llsvm.DataFormatError) as info:
        llsvm.train(str(path), solver="llsvm", options=LLSVMOptions(memory=4 * MiB))
    assert (info.value.line, info.value.column) == (3, 1)
    assert "limit of 1 MiB" in info.value.message
    assert llsvm.train(str(path), solver="llsvm", options=LLSVMOptions(memory=64 * MiB)).nr_class == 2
    runner = CliRunner()
    r = runner.invoke(train_main, ["-q", "-s", "bm", "--memory", "4M", str(path), str(tmp_path / "m")])
    assert_exit(r, 1)
    assert r.stderr == (f"Wrong input format at line 3\n{path}: line 3, column 1: line is longer than the limit of "
                        "1 MiB (1048576 bytes)\n")
    assert_exit(runner.invoke(train_main, ["-q", "-s", "bm", "--memory", "64M", str(path), str(tmp_path / "m")]), 0)
    assert_exit(runner.invoke(train_main, ["-q", "-s", "3", str(path), str(tmp_path / "m")]), 0)


# -- messages: the value alone, control characters escaped ------------------------------------------------------

MESSAGES = [
    # (input, line, column, message)
    (b"1 1:nan\n", 1, 5, "value is NaN or infinite (found 'nan')"),
    (b"1 2:1 10:1x\n", 1, 10, "value is not a number (found '1x')"),
    (b"1 1:\x00\n", 1, 5, "value is not a number (found '\\x00')"),
    (b"1 1:1\x01\n", 1, 5, "value is not a number (found '1\\x01')"),
    (b"1 1:\\x00\n", 1, 5, "value is not a number (found '\\\\x00')"),      # a backslash, not a NUL byte
    (b"1 1:\x1b[31mred\n", 1, 5, "value is not a number (found '\\x1b[31mred')"),
    (b"\x01 1:1\n", 1, 1, "label is not a number (found '\\x01')"),
    (b"\xff 1:1\n", 1, 1, "label is not a number (found '\\xff')"),
    (b"\xc3\xa9 1:1\n", 1, 1, "label is not a number (found '\xe9')"),            # UTF-8 is shown as such
    (b"1 2:1 \x7f:1\n", 1, 7, "index is not a positive integer (found '\\x7f')"),
    (b"1 4\x00 5:1\n", 1, 3, "expected index:value, missing ':' (found '4\\x00')"),
    (b"1 qid:\x02 1:1\n", 1, 3, "qid must be a non-negative integer (found 'qid:\\x02')"),
    (b"1:\x00 2:1\n", 1, 1, "missing label: the line starts with '1:\\x00'"),
    (b"1 1:" + b"\x00" * 50 + b"\n", 1, 5, "value is not a number (found '" + "\\x00" * 40 + "...')"),
]


@pytest.mark.parametrize("data,line,column,message", MESSAGES, ids=[repr(m[0][:12]) for m in MESSAGES])
def test_data_messages_quote_the_piece_escaped(write_bytes, data, line, column, message):
    path = write_bytes(data)
    for call in (lambda: llsvm.read_dataset(path), lambda: list(llsvm.open_dataset(path, stream=True).iter_blocks())):
        with pytest.raises(llsvm.DataFormatError) as info:
            call()
        e = info.value
        assert (e.line, e.column, e.message) == (line, column, message)


def test_cli_never_prints_a_control_character(write_bytes, tmp_path):
    path = write_bytes(b"1 1:1\n-1 3:\x00\x07\x1b[2J\n")
    r = CliRunner().invoke(train_main, ["-q", str(path), str(tmp_path / "m")])
    assert_exit(r, 1)
    assert r.stderr == (f"Wrong input format at line 2\n{path}: line 2, column 6: "
                        "value is not a number (found '\\x00\\x07\\x1b[2J')\n")
    assert not any(ord(c) < 32 and c != "\n" for c in r.stderr)


def test_quote_and_escape():
    assert quote("abc") == "'abc'" and escape("abc") == "abc"
    assert quote(b"a\x00b\x7f") == "'a\\x00b\\x7f'"
    assert quote(b"\xff\xe2\x82\xac") == "'\\xff\u20ac'"
    assert quote("a\\b") == "'a\\\\b'"
    assert quote("\x85\u2028") == "'\\x85\\u2028'"
    assert quote("tab\there") == "'tab\\x09here'"


# -- messages: model files --------------------------------------------------------------------------------------

BASE_MODEL = ["solver_type L2R_L1LOSS_SVC_DUAL", "nr_class 3", "label 3 1 2", "nr_feature 2", "bias 1", "w",
              "0.5 -1 2 ", "0.25 0 -3 ", "1 2 3 "]
HASHED_HEAD = ["llsvm_hashed_model 1", "hash fmix32-signed 1"]


def _model(tmp_path, lines, replace=None):
    lines = list(lines)
    for k, v in (replace or {}).items():
        lines[k - 1] = v
    p = tmp_path / "m.model"
    p.write_bytes(("\n".join(lines) + "\n").encode("latin-1"))
    return p


@pytest.mark.parametrize("labels", ["label 3 1", "label 3 1 2 4"])
def test_label_count_mismatch_is_reported_at_the_label_line(tmp_path, labels):
    n = len(labels.split()) - 1
    p = _model(tmp_path, BASE_MODEL, {3: labels})
    with pytest.raises(ModelFormatError) as info:
        load_model(p)
    assert str(info.value) == f"{p}:3: 'label' lists {n} labels for nr_class 3"
    # the label line after nr_feature and bias: still its own line
    lines = BASE_MODEL[:2] + BASE_MODEL[3:5] + [labels] + BASE_MODEL[5:]
    with pytest.raises(ModelFormatError) as info:
        load_model(_model(tmp_path, lines))
    assert str(info.value).endswith(":5: 'label' lists %d labels for nr_class 3" % n)
    # a hashed model: its two lines come first
    hashed = HASHED_HEAD + ["solver_type L2R_L1LOSS_SVC_DUAL", "nr_class 3", labels, "nr_feature 2", "bias -1", "w",
                            "1 2 3 ", "4 5 6 "]
    with pytest.raises(ModelFormatError) as info:
        load_model(_model(tmp_path, hashed))
    assert str(info.value).endswith(":5: 'label' lists %d labels for nr_class 3" % n)


MODEL_MESSAGES = [
    # (line replaced, its new text, message after "PATH:LINE: "); a control character is refused, escaped, at its
    # line before any field is read
    (3, "label 3 \x7f 2", "a control character '\\x7f' in the model file"),
    (3, "label 3 1 2.5", "labels must be integers (found '2.5')"),
    (1, "solver_type L2R\x00", "a control character '\\x00' in the model file"),
    (2, "nr_class 3\x01", "a control character '\\x01' in the model file"),
    (4, "f\x00o 1", "a control character '\\x00' in the model file"),
    (8, "0.25 \x01 -3 ", "a control character '\\x01' in the model file"),
    (8, "0.25 1,5 -3 ", "a weight is not a number (found '1,5')"),
]


@pytest.mark.parametrize("line,text,message", MODEL_MESSAGES, ids=[m[2][:24] for m in MODEL_MESSAGES])
def test_model_messages_quote_escaped(tmp_path, line, text, message):
    p = _model(tmp_path, BASE_MODEL, {line: text})
    with pytest.raises(ModelFormatError) as info:
        load_model(p)
    assert str(info.value) == f"{p}:{line}: {message}"


@pytest.mark.parametrize("line,text,message", [
    (1, "llsvm_hashed_model \x00", "a control character '\\x00' in the model file"),
    (2, "hash fmix\x1b 1", "a control character '\\x1b' in the model file"),
    (2, "hash fmix32-signed 1\x7f", "a control character '\\x7f' in the model file"),
])
def test_hashed_model_messages_quote_escaped(tmp_path, line, text, message):
    lines = HASHED_HEAD + ["solver_type L2R_L1LOSS_SVC_DUAL", "nr_class 2", "label 1 -1", "nr_feature 2",
                           "bias -1", "w", "1 ", "2 "]
    assert load_model(_model(tmp_path, lines)).hash_bits == 1
    p = _model(tmp_path, lines, {line: text})
    with pytest.raises(ModelFormatError) as info:
        load_model(p)
    assert str(info.value) == f"{p}:{line}: {message}"


# -- class labels beyond the int range --------------------------------------------------------------------------

RANGE = "a class label must be less than 2^63 = 9223372036854775808 in magnitude"


# class labels are 64-bit integers (issue 45; they were C ints): below 2^63 in magnitude as a double, so
# 9223372036854775807, which rounds to 2^63, is beyond it and 2^63 - 1024, the largest double below, is not
@pytest.mark.parametrize("label,ok", [("2147483647", True), ("2147483647.99", True), ("-2147483647.99", True),
                                      ("1e9", True), ("2147483648", True), ("-2147483648", True),
                                      ("99999999999", True), ("-2.5e10", True), ("9223372036854774784", True),
                                      ("-9223372036854774784.5", True), ("9223372036854775807", False),
                                      ("-9223372036854775808", False), ("1e19", False), ("1e300", False)])
def test_class_labels_in_the_int_range(write_bytes, label, ok):
    path = write_bytes(b"1 1:1\n# comment\n\t" + label.encode() + b" 1:1\n")
    # read as data (convert, predict, regression later): any finite label
    assert llsvm.read_dataset(path).y[1] == float(label)
    calls = (lambda: llsvm.read_dataset(path, class_labels=True),
             lambda: read_text(str(path), class_labels=True, chunk_size=5),
             lambda: list(llsvm.open_dataset(path, stream=True, class_labels=True).iter_blocks()))
    for call in calls:
        if ok:
            call()
            continue
        with pytest.raises(llsvm.DataFormatError) as info:
            call()
        e = info.value
        assert (e.line, e.column) == (3, 2)
        assert e.message == f"class label is beyond the int64 range (found '{label}'; {RANGE})"


@pytest.mark.parametrize("args", [["-s", "1"], ["-s", "2"], ["-s", "3"], ["-s", "llsvm"], ["-s", "streamsvm"],
                                  ["-s", "bm"], ["-s", "3", "-v", "2"], ["-s", "2", "-C"], ["-s", "llsvm", "-v", "2"]])
def test_training_reports_a_label_beyond_int_at_its_line(write_bytes, tmp_path, args):
    path = write_bytes(b"1 1:1\n-1 2:1\n  99999999999999999999 1:1\n")
    r = CliRunner().invoke(train_main, ["-q", *args, str(path), str(tmp_path / "m")])
    assert_exit(r, 1)
    assert r.stderr == (f"Wrong input format at line 3\n{path}: line 3, column 3: class label is beyond the int64 "
                        f"range (found '99999999999999999999'; {RANGE})\n")
    assert not (tmp_path / "m").exists()


def test_library_training_reports_a_label_beyond_int_at_its_line(write_bytes):
    path = write_bytes(b"1 1:1\n-1 2:1\n99999999999999999999 1:1\n")
    for solver in (3, "llsvm"):
        with pytest.raises(llsvm.DataFormatError) as info:
            llsvm.train(str(path), solver=solver)
        assert (info.value.path, info.value.line, info.value.column) == (str(path), 3, 1)
    # arrays have no lines: the trainer's own check stays
    with pytest.raises(llsvm.ParameterError, match="a class label is beyond the int64 range"):
        llsvm.train(np.eye(3), np.array([1.0, -1.0, 1e19]), solver=3)


def test_convert_and_predict_take_any_finite_label(write_bytes, tmp_path):
    """Only training reads class labels: conversion and the targets of a test file keep any finite label."""
    path = write_bytes(b"1 1:1\n-1 2:1\n99999999999 1:1\n")
    runner = CliRunner()
    assert_exit(runner.invoke(convert_main, ["-q", str(path), str(tmp_path / "d.bin")]), 0)
    assert llsvm.read_dataset(tmp_path / "d.bin").y.tolist() == [1, -1, 99999999999]
    small = write_bytes(SMALL.encode(), "small.txt")
    assert_exit(runner.invoke(train_main, ["-q", str(small), str(tmp_path / "m")]), 0)
    r = runner.invoke(predict_main, [str(path), str(tmp_path / "m"), str(tmp_path / "p")])
    assert_exit(r, 0)
    assert r.stdout.startswith("Accuracy = ")
