"""The fuzzer (fuzz/, `make fuzz`): its oracles on hand-written inputs, the bug reproducers, and a short run.

- The reference LIBSVM reader (fuzz/reference.py) is checked against expected results on valid and invalid lines,
  and llsvm's parser against it through the text oracle, so the oracle itself is tested.
- The binary and model oracles are shown to catch crafted files and models.
- Each reproducer in fuzz/regressions.py must pass its oracle: one fails while its bug is open.
- A short run (a fixed number of inputs per target, about 10 s each on a quiet machine) must find nothing;
  the harness's own target shows a crash, a hang and a huge allocation are each counted. Both count inputs
  (--runs), never seconds, so a slow or busy machine takes longer but cannot change the verdict.
"""
import json
import os
import signal
import struct
import subprocess
import sys
import time
import zlib

import numpy as np
import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)

from fuzz import options, reference, regressions, seeds, targets, worker  # noqa: E402
from fuzz.mutators import fix_checksums  # noqa: E402
from fuzz.targets import OracleFailure  # noqa: E402
from llsvm import BinaryDataset, DataFormatError, Model, ModelFormatError  # noqa: E402

F32_MAX = float(np.finfo(np.float32).max)


@pytest.fixture
def work():
    w = targets.Workdir()
    yield w
    w.cleanup()


# ---------------------------------------------------------------------------------------------------------------
# The reference reader: what it must accept, and the values

VALID = [
    # text, zero_based, rows as (label, [(0-based index, value), ...]), n_qid
    (b"1 1:2 3:4\n", False, [(1.0, [(0, 2.0), (2, 4.0)])], 0),
    (b"-1\n", False, [(-1.0, [])], 0),
    (b"+1 qid:7 2:0.5 # comment\n", False, [(1.0, [(1, 0.5)])], 1),
    (b"  \t 2\t1:1e3\r\n", False, [(2.0, [(0, 1000.0)])], 0),
    (b"# comment\n\n3 4:-.5", False, [(3.0, [(3, -0.5)])], 0),
    (b"1 2147483647:1\n", False, [(1.0, [(2147483646, 1.0)])], 0),
    (b"0 0:1 2147483646:2\n", True, [(0.0, [(0, 1.0), (2147483646, 2.0)])], 0),
    (b"1.5e-3 1:1.#tail\n", False, [(1.5e-3, [(0, 1.0)])], 0),
    (b"1#c\n", False, [(1.0, [])], 0),
    (b"1 1:0.1000000000000000055511151231257827021181583404541015625\n", False, [(1.0, [(0, 0.1)])], 0),
    (b"1 1:123456789012345678901234567890\n", False, [(1.0, [(0, 1.2345678901234568e29)])], 0),
    (b"1 1:4.9e-324 2:1e-400 3:00012\n", False, [(1.0, [(0, 5e-324), (1, 0.0), (2, 12.0)])], 0),
    (b"1\v1:1\f2:2\n", False, [(1.0, [(0, 1.0), (1, 2.0)])], 0),
    (b"1 00003:1\n", False, [(1.0, [(2, 1.0)])], 0),
    (b"1 qid:123456789012345678901234567890\n", False, [(1.0, [])], 1),
    (b"1 1:1.7976931348623157e308\n", False, [(1.0, [(0, 1.7976931348623157e308)])], 0),
    (b"1 1:1\r2:2\n", False, [(1.0, [(0, 1.0), (1, 2.0)])], 0),
    (b"1 1:1\n\n-1 2:3\n\n", False, [(1.0, [(0, 1.0)]), (-1.0, [(1, 3.0)])], 0),
]


@pytest.mark.parametrize("text,zero_based,rows,n_qid", VALID)
def test_reference_accepts(text, zero_based, rows, n_qid):
    got = reference.parse(text, zero_based=zero_based)
    assert isinstance(got, reference.Parsed), got
    assert got.y.tolist() == [r[0] for r in rows]
    assert got.indptr.tolist() == np.cumsum([0] + [len(r[1]) for r in rows]).tolist()
    assert got.indices.tolist() == [i for r in rows for i, _ in r[1]]
    assert got.values.tolist() == [v for r in rows for _, v in r[1]]
    assert got.n_features == max([i + 1 for r in rows for i, _ in r[1]], default=0)
    assert got.n_qid == n_qid


def test_reference_keeps_the_sign_of_zero():
    got = reference.parse(b"-0 1:-0 2:+0.0\n")
    assert np.signbit(got.y[0]) and np.signbit(got.values[0]) and not np.signbit(got.values[1])


def test_reference_float32():
    got = reference.parse(b"1 1:3.4028235e38 2:1e-50 3:0.1\n", float32=True)
    assert got.values.dtype == np.float32
    assert got.values.tolist() == [F32_MAX, 0.0, float(np.float32(0.1))]


INVALID = [
    # text, zero_based, float32, line, 1-based column where the bad token starts
    (b"1 0:1\n", False, False, 1, 3),
    (b"1 2:1 2:3\n", False, False, 1, 7),
    (b"1 3:1 2:3\n", False, False, 1, 7),
    (b"1 2147483648:1\n", False, False, 1, 3),
    (b"0 2147483647:1\n", True, False, 1, 3),
    (b"1 99999999999999999999999:1\n", False, False, 1, 3),
    (b"1 1:nan\n", False, False, 1, 3),
    (b"1 1:inf\n", False, False, 1, 3),
    (b"1 1:-Infinity\n", False, False, 1, 3),
    (b"1 1:1e999\n", False, False, 1, 3),
    (b"nan 1:1\n", False, False, 1, 1),
    (b"  inf\n", False, False, 1, 3),
    (b"1e400\n", False, False, 1, 1),
    (b"1 1:abc\n", False, False, 1, 3),
    (b"1 1:\n", False, False, 1, 3),
    (b"1 1\n", False, False, 1, 3),
    (b"1 :1\n", False, False, 1, 3),
    (b"1 -1:1\n", False, False, 1, 3),
    (b"1 +1:1\n", False, False, 1, 3),
    (b"1:1 2:2\n", False, False, 1, 1),
    (b"1x 1:1\n", False, False, 1, 1),
    (b"1 1:1x\n", False, False, 1, 3),
    (b"1 1:0x10\n", False, False, 1, 3),
    (b"1 1:1_0\n", False, False, 1, 3),
    (b"1 1:1e\n", False, False, 1, 3),
    (b"1 1:.\n", False, False, 1, 3),
    (b"1 1:1e+\n", False, False, 1, 3),
    (b"1 1:1:2\n", False, False, 1, 3),
    (b"1 qid:x 1:1\n", False, False, 1, 3),
    (b"1 qid: 1:1\n", False, False, 1, 3),
    (b"1 1:1 qid:3\n", False, False, 1, 7),
    (b"1 qid:1 qid:2\n", False, False, 1, 9),
    (b"1 qid:-1\n", False, False, 1, 3),
    (b"1 QID:1\n", False, False, 1, 3),
    (b"1 1:1\n2 1:1 1:1\n", False, False, 2, 7),
    (b"\n\n# c\n", False, False, 4, 1),
    (b"", False, False, 1, 1),
    (b"   \n", False, False, 2, 1),
    (b"1 1:3.5e38\n", False, True, 1, 3),
    (b"1 1:-3.4028236e38\n", False, True, 1, 3),
    (b"1 1:1\x00\n", False, False, 1, 3),
    (b"1 1:1\n\xff\n", False, False, 2, 1),
    (b"1 1:1\r2 2:2\n", False, False, 1, 7),
]


@pytest.mark.parametrize("text,zero_based,float32,line,col", INVALID)
def test_reference_rejects(text, zero_based, float32, line, col):
    got = reference.parse(text, zero_based=zero_based, float32=float32)
    assert isinstance(got, reference.Rejected), got
    assert (got.line, got.col0) == (line, col)
    if float32:        # the same text is valid without float32
        assert isinstance(reference.parse(text, zero_based=zero_based), reference.Parsed)


LIMITS = [
    # text, options, (line, column) of the rejection or None
    (b"1 1:1\n12345678\n", dict(max_line=7), (2, 1)),
    (b"1 1:1\n1234567\n", dict(max_line=7), None),
    (b"1 1:1\n# a long comment\n", dict(max_line=5), (2, 1)),
    (b"1 1:1\r\n", dict(max_line=5), (1, 1)),                  # the \r counts
    (b"1 1:1\r\n", dict(max_line=6), None),
    (b"1 1:1\n" + b"x" * 40, dict(max_line=10), (2, 1)),        # too long and malformed: the length is reported
    (b"1 0:1\n" + b"2" * 40, dict(max_line=10), (1, 3)),        # an earlier line's error comes first
    (b"\n\n", dict(max_line=0), (3, 1)),                        # empty lines fit any limit: empty input
    # class labels: below 2^63 in magnitude (64-bit integers, issue 45; C ints before)
    (b"9223372036854775808 1:1\n", dict(class_labels=True), (1, 1)),
    (b"-9223372036854775808\n", dict(class_labels=True), (1, 1)),
    (b"1 1:1\n  3e19\n", dict(class_labels=True), (2, 3)),
    (b"2147483648.9\n-2147483648\n3e9\n9223372036854774784\n", dict(class_labels=True), None),
    (b"3e19 1:1\n", dict(), None),
]


@pytest.mark.parametrize("text,options,where", LIMITS)
def test_line_limit_and_class_labels(text, options, where, work):
    """The two reading options, in the reference and in llsvm (in memory and streamed with a 4-byte chunk)."""
    got = reference.parse(text, **options)
    if where is None:
        assert isinstance(got, reference.Parsed), got
    else:
        assert isinstance(got, reference.Rejected) and (got.line, got.col0) == where, got
    path = work.write("limits.txt", text)
    for stream in (False, True):
        args = (path, stream, False, False, 4, None, options.get("max_line", 1 << 28),
                options.get("class_labels", False))
        if where is None:
            y = targets._read_text(*args)[0]
            assert targets.same_bits(y, got.y)
        else:
            with pytest.raises(DataFormatError) as err:
                targets._read_text(*args)
            assert (err.value.line, err.value.column) == where


@pytest.mark.parametrize("text", [case[0] for case in VALID + INVALID + LIMITS],
                         ids=range(len(VALID) + len(INVALID) + len(LIMITS)))
def test_llsvm_agrees_with_the_reference(text, work):
    """The text oracle on every hand-written case: llsvm's four readings against the reference."""
    targets.check_text(text, work)


def test_reference_decompresses_like_llsvm(work):
    import gzip
    good = gzip.compress(b"1 1:1\n", mtime=0)
    assert reference.decode_source(good) == ("gzip", b"1 1:1\n")
    assert reference.decode_source(good[:-3]) == ("gzip", None)          # truncated: llsvm must refuse it
    targets.check_text(good, work)
    targets.check_text(good[:-3], work)
    with pytest.raises(reference.TooLarge):
        reference.decode_source(gzip.compress(b"\n" * 4096), cap=1024)


def test_reference_reads_bzip2_and_xz_streams_as_llsvm(work):
    """Concatenated streams and xz's padding accepted, anything else after a stream refused (sources._Streams; Python's
    BZ2File and LZMAFile would ignore it): the fuzzer found a bzip2 file with trailing garbage the reference took."""
    import bz2
    import lzma
    one, two = bz2.compress(b"1 1:1\n"), bz2.compress(b"-1 2:1\n")
    assert reference.decode_source(one + two) == ("bzip2", b"1 1:1\n-1 2:1\n")
    assert reference.decode_source(one + b"%%%%") == ("bzip2", None)
    xz = lzma.compress(b"1 1:1\n")
    assert reference.decode_source(xz + b"\0" * 4 + xz) == ("xz", b"1 1:1\n1 1:1\n")
    assert reference.decode_source(xz + b"\0" * 3) == ("xz", None)
    for case in (one + two, one + b"%%%%", xz + b"\0" * 4 + xz, xz + b"\0" * 3, one[:-2]):
        targets.check_text(case, work)


def test_text_oracle_catches_a_disagreement(work, monkeypatch):
    """With a reference that is wrong on purpose, the oracle must complain: it is not vacuous."""
    monkeypatch.setattr(reference, "MAX_STORED_INDEX", 10)
    with pytest.raises(OracleFailure, match="text.accepts_invalid"):
        targets.check_text(b"1 12:1\n", work)
    monkeypatch.undo()
    real = reference.parse

    def off_by_one(text, **kw):
        got = real(text, **kw)
        if isinstance(got, reference.Rejected):
            got.line += 1
        else:
            got.values = got.values + 1
        return got
    monkeypatch.setattr(reference, "parse", off_by_one)
    with pytest.raises(OracleFailure, match="text.error_line"):
        targets.check_text(b"1 0:1\n", work)
    with pytest.raises(OracleFailure, match="text.values"):
        targets.check_text(b"1 1:1\n", work)


# ---------------------------------------------------------------------------------------------------------------
# Binary and model oracles, seeds, the checksum fixer

@pytest.mark.parametrize("target", ["text", "binary", "model"])
def test_seeds_pass_their_oracle(target, work):
    """Valid files written by llsvm itself: accepted, consistent, round-tripping."""
    check = getattr(targets, "check_" + target)
    for name, data in seeds.seeds(target, work).items():
        check(data, work)


def test_fix_checksums_makes_a_crafted_file_readable(work):
    data = seeds.binary_seeds(work)["blocks"]
    (f_off,) = struct.unpack_from("<Q", data, 48)
    (n_labels,) = struct.unpack_from("<Q", data, 80)
    buf = bytearray(data)
    struct.pack_into("<Q", buf, f_off + 8 + 16 * n_labels, 129)     # the first block's offset in the index
    with pytest.raises(DataFormatError, match="checksum"):
        BinaryDataset(work.write("x.bin", bytes(buf)))
    with pytest.raises(DataFormatError, match="do not tile"):       # past the checksum: the structure check
        BinaryDataset(work.write("x.bin", fix_checksums(buf)))
    buf = bytearray(data)
    struct.pack_into("<Q", buf, 72, 9)                                 # n_qid: any value up to n_rows (9)
    with BinaryDataset(work.write("y.bin", fix_checksums(buf))) as ds:
        assert ds.n_qid == 9
        ds.verify()
    struct.pack_into("<Q", buf, 72, 10)                                # more qid tokens than rows: refused
    with pytest.raises(DataFormatError, match="header n_qid 10 but the file has only 9 rows"):
        BinaryDataset(work.write("z.bin", fix_checksums(buf)))


class _Header:
    """What binary_invariants reads of an open file."""

    def __init__(self, n_rows, labels, counts):
        self.n_rows, self.labels, self.label_counts = n_rows, np.array(labels), np.array(counts)


def _header_bytes(flags=0, n_rows=2, n_features=3, nnz=2, max_sq=4.0, n_labels=2, n_qid=0):
    return struct.pack("<8sIIQQQQQQdQQ", b"LLSVMBIN", 1, flags, n_rows, n_features, nnz, 1, 0, 0, max_sq, n_qid,
                       n_labels).ljust(128, b"\0")


@pytest.mark.parametrize("header,labels,counts,rule", [
    (dict(), [1.0, -1.0], [1, 1], None),
    (dict(flags=32), [1.0, -1.0], [1, 1], "binary.flags"),
    (dict(n_features=1), [1.0, -1.0], [1, 1], "binary.n_features"),
    (dict(n_features=5), [1.0, -1.0], [1, 1], "binary.n_features"),
    (dict(flags=16, n_features=5), [1.0, -1.0], [1, 1], None),
    (dict(flags=16), [1.0, -1.0], [1, 1], "binary.n_features"),
    (dict(max_sq=float("nan")), [1.0, -1.0], [1, 1], "binary.max_sq_norm"),
    (dict(max_sq=1.0), [1.0, -1.0], [1, 1], "binary.max_sq_norm"),
    (dict(), [1.0, -1.0], [2, 1], "binary.label_counts"),
    (dict(), [-1.0, 1.0], [1, 1], "binary.label_table"),
    (dict(flags=4, n_labels=0), [], [], "binary.label_table"),
    (dict(n_rows=3), [1.0, -1.0], [1, 1], "binary.rows"),
    (dict(n_qid=2), [1.0, -1.0], [1, 1], None),
    (dict(n_qid=3), [1.0, -1.0], [1, 1], "binary.n_qid"),
])
def test_binary_invariants(header, labels, counts, rule):
    arrays = (np.array([1.0, -1.0]), np.array([0, 1, 2]), np.array([2, 0], np.int32), np.array([2.0, -1.0]),
              None, None)
    data = _header_bytes(**header)
    ds = _Header(header.get("n_rows", 2), labels, counts)
    if rule is None:
        targets.binary_invariants(data, ds, arrays)
    else:
        with pytest.raises(OracleFailure, match=rule):
            targets.binary_invariants(data, ds, arrays)


def _label_beyond_int64():
    """A model whose label is beyond int64 (its constructor refuses one; a reader that let it through would not)."""
    m = Model("L2R_L1LOSS_SVC_DUAL", 2, [1, -1], 1, -1, np.ones((1, 1)))
    m.label = np.array([2 ** 63, 1], np.uint64)
    return m


@pytest.mark.parametrize("model,rule", [
    (Model("L2R_L2LOSS_SVR", 3, None, 1, -1, np.ones((1, 3))), "model.nr_class"),
    (_label_beyond_int64(), "model.labels"),
    (Model("L2R_L1LOSS_SVC_DUAL", 2, [1, -1], 1, 1.0, np.array([[1.0], [np.nan]])), "model.weights"),
])
def test_model_invariants(model, rule):
    valid = Model("L2R_LR", 2, [1, -1], 1, 1.0, np.ones((2, 1)))
    targets.model_invariants(valid.to_text().encode(), valid)
    with pytest.raises(OracleFailure, match=rule):
        targets.model_invariants(model.to_text().encode(), model)
    with pytest.raises(OracleFailure, match="model.bytes"):
        targets.model_invariants(valid.to_text().replace(" ", "\x1f", 1).encode(), valid)


def _tree(hard=1, leaf=1, index=0):
    """A one-node tree model; hard, leaf, index: set after construction (which refuses them), as a reader that let
    them through would give them."""
    from llsvm.models.tree import Node, Tree, TreeModel
    m = TreeModel([1, -1], 3, [Tree(1, -1, [Node(1, 0.5, [0], [1.0])], ("leaf", 1))], float("inf"))
    m.trees[0].nodes[0].hard = hard
    m.trees[0].nodes[0].idx = np.array([index], np.int64)
    m.trees[0].final = ("leaf", leaf)
    return m


def test_tree_model_oracle(work):
    """The tree models' oracle (check_tree_model): a valid model passes (round trip, finite pair values on the probe
    rows, one of which reaches feature 70001, far beyond the model); one the reader would refuse does not."""
    good = _tree()
    targets.check_tree_model(good.to_text().encode(), good, work)
    for broken, rule in [(_tree(hard=7), "model.tree"), (_tree(leaf=3), "model.tree"), (_tree(index=5), "model.tree")]:
        with pytest.raises(OracleFailure, match=rule):
            targets.tree_model_invariants(broken.to_text().encode(), broken)
    with pytest.raises(OracleFailure, match="model.bytes"):
        targets.tree_model_invariants(good.to_text().replace(" ", "\x1f", 1).encode(), good)


def test_model_refusals_must_name_the_line(work, monkeypatch):
    """model.error_line: every reader's refusal names the file and line (a malformed tree, a LIBSVM model, a linear
    one pass); a refusal without a line is a failure (the tree reader's structural errors had none)."""
    tree = _tree().to_text()
    for bad in (tree.replace("leaf 1", "leaf 7"), tree.replace("tree 1 -1", "tree -1 1"),
                tree.replace("hard 1", "hard 5"), "svm_type c_svc\nkernel_type rbf\n", "solver_type L2R_LR\nw\n"):
        targets.check_model(bad.encode(), work)
    from llsvm.models import tree as tree_model
    from llsvm.errors import ModelFormatError

    def no_line(path, text, size):
        raise ModelFormatError(f"{path}: something is wrong")
    monkeypatch.setattr(tree_model.TreeModel, "parse", staticmethod(no_line))
    with pytest.raises(OracleFailure, match="model.error_line"):
        targets.check_model(tree.encode(), work)


def test_long_integer_models_pass_the_model_oracle(work):
    """Issue 44: models with a header integer of 5,000 digits (beyond Python's int() limit: an internal error in
    every reader), as nines (refused at their line, the message short) and with leading zeros (read as C reads
    them) pass the model oracle."""
    models = seeds.long_integer_models(seeds.model_seeds(work))
    assert len(models) >= 40
    for name, data in models.items():
        assert b"9" * 5000 in data or b"0" * 5000 in data, name
        targets.check_model(data, work)


def _sampled(data):
    """data with blanks added until check_long_integers picks it (its CRC-32 a multiple of LONG_INTEGER_SHARE)."""
    while zlib.crc32(data) % targets.LONG_INTEGER_SHARE:
        data += b" "
    return data


def test_long_integer_oracle(work, monkeypatch):
    """model.long_integer: one input in LONG_INTEGER_SHARE gets an integer written 5,000 digits long; a reader that
    accepts 5,000 nines, or refuses (or reads otherwise) 5,000 leading zeros, fails; model.message_length: a
    refusal quoting a whole 5 KB token fails."""
    data = _sampled(seeds.model_seeds(work)["s3-three"])
    targets.check_model(data, work)
    read = targets.load_model
    original = work.write("original.model", data)

    def refusal(message):
        def refuse(path):
            raise ModelFormatError(f"{path}:1: {message}")
        return refuse

    for when, then, rule in [(b"9" * 5000, lambda path: read(original), "model.long_integer"),
                             (b"0" * 5000, refusal("leading zeros"), "model.long_integer"),
                             (b"9" * 5000, refusal("found " + "9" * 5000), "model.message_length")]:
        def load(path, when=when, then=then):
            with open(path, "rb") as f:
                return then(path) if when in f.read() else read(path)
        monkeypatch.setattr(targets, "load_model", load)
        with pytest.raises(OracleFailure, match=rule):
            targets.check_model(data, work)


# ---------------------------------------------------------------------------------------------------------------
# The options target (fuzz/options.py): llsvm-train's options in-process on a tiny file

def test_options_command_stays_in_its_directory(work):
    """A token that is not an option is dropped (it would be taken for a file), an option's value is the next token
    whatever it is, a missing one is empty, the path options get a path in the scratch directory, @NAME picks the
    training file, and -v, -C, --grid and the help write no model."""
    args, dataset, writes = options.command(b"-s 7 /etc/passwd -c --json @three -w-1", work)
    assert (args, dataset, writes) == (["-s", "7", "-c", "--json", "-w-1", ""], "three", True)
    args, dataset, writes = options.command(b"--json /etc/x --tmp-dir --keep-active-set /k -v 3", work)
    assert args == ["--json", work.file("run.json"), "--tmp-dir", work.file("tmp"), "-v", "3"]
    assert (dataset, writes) == ("two", False)
    assert options.command(b"-s smo -h 0", work)[::2] == (["-s", "smo", "-h", "0"], True)
    assert options.command(b"-h -q", work)[::2] == (["-h", "-q"], False)


def test_options_oracle_catches_failures(work, monkeypatch):
    """The oracle is not vacuous: a model that predict refuses, an internal error and a slow stop are failures."""
    import llsvm.solvers.grid
    from llsvm.models.linear import Model
    options.check_options(b"-s 7 -c 1e308", work)              # refused where it is saved: fine
    monkeypatch.setattr(Model, "check_finite", lambda self: None)
    with pytest.raises(OracleFailure, match="options.predict_refuses"):
        options.check_options(b"-s 7 -c 1e308", work)
    monkeypatch.undo()

    def broken(text):
        raise ValueError("a bug")
    monkeypatch.setattr(llsvm.solvers.grid, "parse_grid", broken)
    with pytest.raises(OracleFailure, match="options.internal_error"):
        options.check_options(b"-s smo -v 2 --grid C=1", work)
    monkeypatch.undo()
    monkeypatch.setattr(options, "GUARD_SECONDS", 0.2)
    monkeypatch.setattr(options, "STOP_SECONDS", 0.0)
    with pytest.raises(OracleFailure, match="options.slow_stop"):
        options.check_options(b"-s project1d --max-iter 2147483647", work)


def test_options_guard_interrupts_a_long_run(work, monkeypatch):
    """A value that asks for hours (--max-iter 2147483647 directions) gets the guard's SIGINT and must end with
    exit 130 within STOP_SECONDS: the kernels poll the stop flag (issue 27, item 1)."""
    monkeypatch.setattr(options, "GUARD_SECONDS", 0.3)
    t0 = time.monotonic()
    options.check_options(b"-s project1d --max-iter 2147483647", work)
    assert time.monotonic() - t0 < 0.3 + options.STOP_SECONDS + 1.0


# ---------------------------------------------------------------------------------------------------------------
# Reproducers of the bugs found: each fails while its bug is open

@pytest.mark.parametrize("case", regressions.CASES, ids=[f"{c.target}-{c.name}" for c in regressions.CASES])
def test_regression(case, work):
    data = case.build(work)
    with targets.memory_limit():
        getattr(targets, "check_" + case.target)(data, work)


# ---------------------------------------------------------------------------------------------------------------
# The short run of make test

# Inputs per target: about a quarter of what a 20 s budget ran on 2 quiet cores (text 20,000-34,000, binary 43,000-
# 73,000, model 173,000-318,000 as this VM's speed varied), so each run takes 4-10 s, worker start-up included:
# a smoke test that every target runs and its checks hold, inside the suite's 10-minute budget; `make fuzz` is the
# fuzzing (60 s a target by default, FUZZ_ARGS for more).
# A count, not a time budget: a slow or busy machine takes longer but runs the same number of inputs, and the
# verdict (no failure, the whole count run) cannot depend on its speed.
SHORT_RUNS = {"text": 2_500, "binary": 6_000, "model": 25_000, "options": 200}  # 6-12 s each, 4-7 of them start-up


def run_fuzz(args, tmp_path, timeout=600):
    """python -m fuzz ARGS with its results under tmp_path: (completed process, summary.json's targets). The runner
    and its workers get their own session, killed together if the run hangs (the timeout only guards against a
    hang: the runs here take 6-12 s)."""
    summary = tmp_path / "summary.json"
    proc = subprocess.Popen([sys.executable, "-m", "fuzz", *args, "--results", str(tmp_path / "results"),
                             "--json", str(summary)], cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)

    def kill_session():
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        return proc.communicate()

    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        out, err = kill_session()
        pytest.fail(f"python -m fuzz {' '.join(args)} still running after {timeout} s\n{out}{err[-3000:]}")
    except BaseException:               # Ctrl-C: the session does not get the terminal's SIGINT
        kill_session()
        raise
    done = subprocess.CompletedProcess(proc.args, proc.returncode, out, err)
    assert summary.exists(), out + err[-3000:]
    return done, json.loads(summary.read_text())["targets"]


@pytest.mark.parametrize("target", ["text", "binary", "model", "options"])
def test_fuzz_short_run(target, tmp_path):
    proc, targets_ = run_fuzz(["--targets", target, "--runs", str(SHORT_RUNS[target])], tmp_path)
    result = targets_[target]
    assert result["failures"] == 0, proc.stdout + proc.stderr[-3000:]
    assert result["inputs"] == SHORT_RUNS[target], proc.stdout          # the whole count ran, no worker died early
    assert proc.returncode == 0, proc.stdout + proc.stderr[-3000:]


def test_replay(tmp_path):
    """python -m fuzz --replay TARGET FILE...: each file checked under the memory limit, PASS or FAIL with its rule."""
    (tmp_path / "fine").write_bytes(b"fine")
    (tmp_path / "alloc").write_bytes(b"ALLOC")
    proc = subprocess.run([sys.executable, "-m", "fuzz", "--replay", "selftest", str(tmp_path / "fine"),
                           str(tmp_path / "alloc")], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1
    assert f"PASS {tmp_path / 'fine'}" in proc.stdout
    assert f"FAIL {tmp_path / 'alloc'} [exception.MemoryError" in proc.stdout


def test_runner_counts_crashes_hangs_and_allocations(tmp_path):
    """The harness's own target: one input aborts, one hangs past --timeout, one asks for 8 TiB. Each is a failure,
    the run goes on after each, and the exit status says so.

    The seeds (fuzz/seeds.py) are checked by every worker before any mutation, so a count of inputs reaches all
    three whatever the machine's speed: one worker stops on the hang, the next (its corpus without that input) on
    the crash, the third records the MemoryError and runs the rest of the count. Only libFuzzer's
    per-input -timeout is a time: the hang exceeds any timeout, and 5 s is over a thousand times what any other
    input takes (microseconds), so a slow machine cannot turn an ordinary input into a timeout."""
    runs = 10_000           # seeds, then about a second of mutations; the hang costs ~6 s (libFuzzer's alarm period)
    proc, targets_ = run_fuzz(["--targets", "selftest", "--runs", str(runs), "--timeout", "5"], tmp_path)
    result = targets_["selftest"]
    kinds = sorted(c["kind"] for c in result["crashes"])
    assert kinds == ["crash", "timeout"], proc.stdout
    assert all(c["artifact"] for c in result["crashes"]), proc.stdout
    assert any(rule.startswith("exception.MemoryError") for rule in result["rules"]), proc.stdout
    assert result["inputs"] == runs, proc.stdout
    assert result["workers"] == 3, proc.stdout
    assert proc.returncode == 1


def test_real_targets_are_guided_by_llsvms_coverage():
    """Every target but the runner's selftest instruments llsvm and the oracles (libFuzzer's guide); the selftest,
    which checks only the runner, instruments its own check alone."""
    for target in targets.CHECKS:
        if target == "selftest":
            assert worker.instrumented(target) == ["fuzz.targets"]
        else:
            assert worker.instrumented(target) == ["llsvm", "fuzz.reference", "fuzz.targets"], target
    assert set(targets.CHECKS) == {"text", "binary", "model", "options", "selftest"}
