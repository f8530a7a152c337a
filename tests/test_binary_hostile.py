"""Crafted binary files whose checksums are all valid (issue 13, item 5): every header and footer field is checked
against the data it describes (llsvm/binfmt.py; docs/formats.md section 2, "Readers"), on open when it is cheap,
otherwise while the blocks are read, by every path that reads them; the commands end with exit 1 and the message,
without a traceback and without first allocating by a forged n_features (also under a 2 GiB address-space limit)."""
import math
import resource
import struct
import subprocess
import sys
import tracemalloc

import numpy as np
import pytest

import llsvm
from llsvm._ext import _rowops
from llsvm.binfmt import BinaryDataset, BinaryWriter
from llsvm.dataset import CSRDataset
from reference.files import (block_arrays, block_index, fix_block_crc, header, label_table, set_header,
                             set_label_table)

LABELS = (2.0, -1.0, 7.0)          # first-occurrence order of the sample


def sample(seed=0, n_rows=90, n_features=20, density=0.3, labels=LABELS):
    """A random dataset whose largest index is n_features - 1 and whose first rows show `labels` in order."""
    rng = np.random.default_rng(seed)
    mask = rng.random((n_rows, n_features)) < density
    mask[:, 0] = True                      # no empty row
    mask[0, n_features - 1] = True
    X = np.where(mask, rng.standard_normal((n_rows, n_features)), 0.0)
    indptr = np.concatenate([[0], np.cumsum(mask.sum(1))]).astype(np.int64)
    indices = np.nonzero(mask)[1].astype(np.int32)
    y = np.array(labels)[rng.integers(0, len(labels), n_rows)]
    y[:len(labels)] = labels
    return CSRDataset(y, indptr, indices, X[mask], n_features)


@pytest.fixture
def made(tmp_path):
    """made(block_rows=20, **sample kw) -> (path, bytearray of the file, the dataset written)."""
    def make(block_rows=20, name="s.bin", **kw):
        ds = sample(**kw)
        path = tmp_path / name
        llsvm.write_binary(ds, path, block_rows=block_rows)
        return path, bytearray(path.read_bytes()), ds
    return make


def save(tmp_path, raw, name="bad.bin"):
    path = tmp_path / name
    if path.exists():
        path.unlink()
    path.write_bytes(bytes(raw))
    return path


def read_all(path, stage):
    with BinaryDataset(path) as b:
        if stage == "load":
            b.load()
        elif stage == "iter":
            for _ in b.iter_blocks():
                pass
        elif stage == "iter_recut":
            for _ in b.iter_blocks(max_rows=7):
                pass
        elif stage == "load_blocks":
            b.load_blocks(0, b.n_blocks)
        elif stage == "load_blocks_2":
            for b0 in range(0, b.n_blocks, 2):
                b.load_blocks(b0, min(b0 + 2, b.n_blocks))
        elif stage == "verify":
            b.verify()
        elif stage == "verify_1":
            b.verify(threads=1)


STAGES = ["load", "iter", "iter_recut", "load_blocks", "load_blocks_2", "verify", "verify_1"]


def refused(path, fragment, field=None, on_open=False):
    """The file is refused with a DataFormatError naming it, whose message holds `fragment`: on open, or else by
    every path that reads all the blocks (after open succeeded)."""
    errors = []
    if on_open:
        with pytest.raises(llsvm.DataFormatError) as info:
            BinaryDataset(path)
        errors.append(info.value)
    else:
        for stage in STAGES:
            with pytest.raises(llsvm.DataFormatError) as info:
                read_all(path, stage)
            errors.append(info.value)
    for e in errors:
        assert e.path == str(path) and (e.line, e.column) == (0, 0)
        assert fragment in e.message, (fragment, e.message)
        assert getattr(e, "field", None) == field
    return errors[0].message


def accepted(path):
    for stage in STAGES:
        read_all(path, stage)


# -- n_features -------------------------------------------------------------------------------------------------

def test_writer_flags_a_declared_width(tmp_path):
    """n_features wider than the data is legitimate (a caller's explicit width, the active sets of -s llsvm): the
    writer marks it with flag 16; without it n_features is the largest index + 1."""
    ds = sample()
    narrow, wide, copy = tmp_path / "n.bin", tmp_path / "w.bin", tmp_path / "c.bin"
    llsvm.write_binary(ds, narrow, block_rows=20)
    llsvm.write_binary(CSRDataset(ds.y, ds.indptr, ds.indices, ds.values, 1000), wide, block_rows=20)
    llsvm.write_binary(wide, copy)
    assert header(narrow.read_bytes())["flags"] == 0 and header(narrow.read_bytes())["n_features"] == 20
    for p in (wide, copy):
        h = header(p.read_bytes())
        assert h["flags"] == 16 and h["n_features"] == 1000
        accepted(p)
        with BinaryDataset(p) as b:
            assert b.declared_width and b.n_features == 1000 and b.load().n_features == 1000
    with BinaryWriter(tmp_path / "z.bin") as w:       # no non-zeros, a declared width
        w.write([1.0, -1.0], [0, 0, 0], [], [], n_features=5)
    assert header((tmp_path / "z.bin").read_bytes())["flags"] == 16
    accepted(tmp_path / "z.bin")


@pytest.mark.parametrize("n_features", [2 ** 28, 2 ** 31 - 1])
def test_inflated_n_features_refused_on_open_without_allocating(tmp_path, made, n_features):
    path, raw, ds = made()
    set_header(raw, "n_features", n_features)
    bad = save(tmp_path, raw)
    tracemalloc.start()
    try:
        msg = refused(bad, f"header n_features {n_features} but the largest feature index in the data is 20 "
                           "(1-based)", "n_features", on_open=True)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 4 << 20
    assert msg == f"header n_features {n_features} but the largest feature index in the data is 20 (1-based)"


def test_inflated_n_features_refused_while_the_blocks_are_read(tmp_path, made):
    """n_features a little too large (arrays by it no larger than the file): open succeeds; every path that reads
    all the blocks refuses the file; reading some blocks does not."""
    path, raw, ds = made()
    set_header(raw, "n_features", 21)
    bad = save(tmp_path, raw)
    with BinaryDataset(bad) as b:
        assert b.n_blocks == 5 and 8 * 21 < b.file_size
        b.read_block(0)
        b.load_blocks(1, 3)
    refused(bad, "header n_features 21 but the largest feature index in the data is 20 (1-based)", "n_features")
    # once refused, the file stays refused
    with BinaryDataset(bad) as b:
        with pytest.raises(llsvm.DataFormatError, match="header n_features 21"):
            b.verify()
        with pytest.raises(llsvm.DataFormatError, match="header n_features 21"):
            b.read_block(0)


def test_declared_width_flag_must_be_true(tmp_path, made):
    path, raw, ds = made()
    set_header(raw, "flags", 16)
    refused(save(tmp_path, raw), "header flag 16 (a declared width) but n_features 20 is not wider than the data "
                                 "(its largest feature index is 20, 1-based)", "flags")


def test_n_features_without_non_zeros(tmp_path):
    path = tmp_path / "z.bin"
    llsvm.write_binary(CSRDataset([1.0, -1.0], [0, 0, 0], np.empty(0, np.int32), np.empty(0)), path)
    raw = bytearray(path.read_bytes())
    assert header(raw)["n_features"] == 0 and header(raw)["flags"] == 0
    r = bytearray(raw)
    set_header(r, "n_features", 2 ** 31 - 1)
    refused(save(tmp_path, r), "header n_features 2147483647 but the file has no non-zeros", "n_features",
            on_open=True)
    r = bytearray(raw)
    set_header(r, "flags", 16)
    refused(save(tmp_path, r), "header flag 16 (a declared width) but n_features is 0", "flags", on_open=True)


def test_n_features_zero_with_non_zeros(tmp_path, made):
    path, raw, ds = made()
    set_header(raw, "n_features", 0)
    refused(save(tmp_path, raw), f"header n_features 0 but the file has {ds.nnz} non-zeros", "n_features",
            on_open=True)


# -- max_sq_norm ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf, -1.0, -1e-300])
def test_max_sq_norm_not_a_norm(tmp_path, made, value):
    path, raw, ds = made()
    set_header(raw, "max_sq_norm", value)
    refused(save(tmp_path, raw), f"header max_sq_norm {value!r} is not a finite number >= 0", "max_sq_norm",
            on_open=True)


def test_max_sq_norm_against_the_rows(tmp_path, made):
    path, raw, ds = made()
    true = header(raw)["max_sq_norm"]
    assert math.isclose(true, float(np.max(np.add.reduceat(ds.values ** 2, ds.indptr[:-1]))), rel_tol=1e-12)
    r = bytearray(raw)
    set_header(r, "max_sq_norm", 2 * true)         # too large: seen once every row has been
    refused(save(tmp_path, r), f"header max_sq_norm {2 * true!r} but the largest squared row norm in the data is "
                               f"{true!r}", "max_sq_norm")
    r = bytearray(raw)
    set_header(r, "max_sq_norm", true / 2)         # too small: seen at the first block with a larger row
    msg = refused(save(tmp_path, r), f"header max_sq_norm {true / 2!r} but block ", "max_sq_norm")
    assert "has a row of squared norm" in msg
    for near in (np.nextafter(true, 0), np.nextafter(true, np.inf)):   # rounding is not a disagreement
        r = bytearray(raw)
        set_header(r, "max_sq_norm", float(near))
        accepted(save(tmp_path, r))


def test_max_sq_norm_without_non_zeros(tmp_path):
    path = tmp_path / "z.bin"
    llsvm.write_binary(CSRDataset([1.0], [0, 0], np.empty(0, np.int32), np.empty(0)), path)
    raw = bytearray(path.read_bytes())
    set_header(raw, "max_sq_norm", 1.0)
    refused(save(tmp_path, raw), "header max_sq_norm 1.0 but the file has no non-zeros (it must be 0)",
            "max_sq_norm", on_open=True)


# -- the label table and its counts -----------------------------------------------------------------------------

def test_label_table_of_the_writer(made):
    path, raw, ds = made()
    labels, counts = label_table(raw)
    assert labels == list(LABELS)
    assert counts == [int(np.count_nonzero(ds.y == v)) for v in LABELS]
    accepted(path)


@pytest.mark.parametrize("table,fragment,on_open", [
    ([math.nan, -1.0, 7.0], "footer label table: label 0 is nan, not a finite number", True),
    ([2.0, -1.0, math.inf], "footer label table: label 2 is inf, not a finite number", True),
    ([2.0, -1.0, 2.0], "footer label table: label 2.0 appears more than once", True),
    ([2.0, -0.0, 0.0], "footer label table: label ", True),
    ([2.0, -1.0, 8.0], "block 0: label 7.0 (row 2 of the block) is not in the footer's label table", False),
    ([-1.0, 2.0, 7.0], "footer label ", False),
])
def test_label_table_against_the_data(tmp_path, made, table, fragment, on_open):
    path, raw, ds = made()
    labels, counts = label_table(raw)
    if table[:2] == [-1.0, 2.0]:          # the same labels out of order (their counts follow them)
        counts = [counts[1], counts[0], counts[2]]
    msg = refused(save(tmp_path, set_label_table(raw, table, counts)), fragment, "labels", on_open=on_open)
    if table[:2] == [-1.0, 2.0]:
        assert msg == ("footer label table out of order: label 2.0 first appears in row 0, before label -1.0 "
                       "(row 1); the table lists the labels in order of first occurrence")


def test_label_counts_against_the_data(tmp_path, made):
    path, raw, ds = made()
    labels, counts = label_table(raw)
    n = sum(counts)
    moved = [counts[0] + 1, counts[1] - 1, counts[2]]     # right total, wrong split: seen once all rows are
    refused(save(tmp_path, set_label_table(raw, counts=moved)),
            f"footer label counts: label 2.0 has count {counts[0] + 1} but the data has {counts[0]} rows with it",
            "label_counts")
    refused(save(tmp_path, set_label_table(raw, counts=[counts[0] + 1, counts[1], counts[2]])),
            f"footer label counts sum to {n + 1} but the header has {n} rows", "label_counts", on_open=True)
    refused(save(tmp_path, set_label_table(raw, counts=[2 ** 64 - 1, counts[1], counts[2]])),
            "footer label counts sum to", "label_counts", on_open=True)
    refused(save(tmp_path, set_label_table(raw, labels + [9.0], counts + [0])),
            "footer label counts: label 9.0 has count 0", "label_counts", on_open=True)
    refused(save(tmp_path, set_label_table(raw, [], [])), f"footer label table is empty but the file has {n} rows",
            "labels", on_open=True)
    refused(save(tmp_path, set_label_table(raw, labels[:2], [counts[0], counts[1] + counts[2]])),
            "block 0: label 7.0 (row 2 of the block) is not in the footer's label table", "labels")


def test_label_table_too_long(tmp_path, made):
    path, raw, ds = made()
    k = 65537
    refused(save(tmp_path, set_label_table(raw, np.arange(k) * 1.0, [1] * k)),
            "footer label table of 65537 labels: more than 65536 without flag 4 (continuous labels)", "labels",
            on_open=True)


# -- flags ------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("flags", [64, 16 | 128, 32 | 256, 1 << 31])
def test_unknown_flags(tmp_path, made, flags):
    path, raw, ds = made()
    set_header(raw, "flags", flags)
    with pytest.raises(llsvm.DataFormatError, match=f"unknown flags 0x{flags:x} in the header"):
        BinaryDataset(save(tmp_path, raw))


def test_continuous_flag_on_classification_data(tmp_path, made):
    path, raw, ds = made()
    for r in (bytearray(raw), set_label_table(raw, [], [])):  # the table kept or dropped: too few rows either way
        set_header(r, "flags", 4)
        refused(save(tmp_path, r), "header flag 4 (continuous labels: more than 65536 distinct values) but the file "
                                   "has only 90 rows", "flags", on_open=True)


def test_continuous_flag_on_many_rows_of_few_labels(tmp_path):
    """More rows than 65536 but only 3 labels: refused once the blocks show it."""
    n = 70000
    y = np.array(LABELS)[np.arange(n) % 3]
    indptr = np.arange(n + 1, dtype=np.int64)
    path = tmp_path / "big.bin"
    llsvm.write_binary(CSRDataset(y, indptr, np.zeros(n, np.int32), np.ones(n)), path, block_rows=20000)
    raw = bytearray(path.read_bytes())
    set_header(raw, "flags", 4)                                # the table kept
    refused(save(tmp_path, raw), "header flag 4 (continuous labels) but the footer has a label table of 3 labels",
            "labels", on_open=True)
    raw = set_label_table(path.read_bytes(), [], [])
    set_header(raw, "flags", 4)
    refused(save(tmp_path, raw), "header flag 4 (continuous labels: more than 65536 distinct values) but the data "
                                 "has 3 distinct labels", "flags")


def test_continuous_labels_read_back(tmp_path):
    n = 70000
    y = np.arange(n) * 0.5 - 7.0
    path = tmp_path / "reg.bin"
    llsvm.write_binary(CSRDataset(y, np.arange(n + 1, dtype=np.int64), np.zeros(n, np.int32), np.ones(n)), path,
                       block_rows=30000)
    assert header(path.read_bytes())["flags"] == 4
    accepted(path)
    raw = bytearray(path.read_bytes())
    set_header(raw, "flags", 0)                                # a table is then required
    refused(save(tmp_path, raw), f"footer label table is empty but the file has {n} rows", "labels", on_open=True)


# -- rows the header and footer cannot describe -----------------------------------------------------------------

@pytest.mark.parametrize("what,value,fragment", [
    ("label", math.nan, "corrupt block 1: the label of row 3 of the block is nan, not a finite number"),
    ("label", -math.inf, "corrupt block 1: the label of row 3 of the block is -inf, not a finite number"),
    ("value", math.nan, "corrupt block 1: row 3 of the block has a squared norm that is not a finite number"),
    ("value", math.inf, "corrupt block 1: row 3 of the block has a squared norm that is not a finite number"),
    ("value", 1e200, "corrupt block 1: row 3 of the block has a squared norm that is not a finite number"),
])
def test_block_rows_not_finite(tmp_path, made, what, value, fragment):
    path, raw, ds = made()
    y, indptr, indices, values = block_arrays(raw, 1)
    assert indptr[4] > indptr[3]
    if what == "label":
        y[3] = value
    else:
        values[indptr[3]] = value
    fix_block_crc(raw, block_index(raw)[1][0])
    refused(save(tmp_path, raw), fragment)


@pytest.mark.parametrize("what,value", [("label", math.nan), ("label", math.inf), ("value", math.nan),
                                        ("value", -math.inf), ("value", 1e200)])
def test_writer_refuses_what_the_reader_would(tmp_path, what, value):
    ds = sample()
    y, values = ds.y.copy(), ds.values.copy()
    if what == "label":
        y[33] = value
    else:
        values[ds.indptr[33]] = value
    path = tmp_path / "w.bin"
    with pytest.raises(llsvm.ParameterError, match="row 34: "):      # 1-based, as the trainers count
        llsvm.write_binary(CSRDataset(y, ds.indptr, ds.indices, values, ds.n_features), path, block_rows=20)
    assert not path.exists()


# -- cost: the contents are checked the first time each block is read -------------------------------------------

def test_contents_checked_once_per_block(monkeypatch, made):
    """The first read of a block checks its contents in check_csr's pass (check_block); later reads, only its
    structure (check_csr)."""
    path, raw, ds = made()
    calls = {"check_block": 0, "check_csr": 0}

    def counting(name):
        real = getattr(_rowops, name)

        def fn(*args):
            calls[name] += 1
            return real(*args)
        return fn
    for name in calls:
        monkeypatch.setattr(f"llsvm.binfmt.{name}", counting(name))
    with BinaryDataset(path) as b:
        b.load()
        assert calls == {"check_block": 5, "check_csr": 0}
        b.verify()
        list(b.iter_blocks())
        b.load_blocks(0, b.n_blocks)
        assert calls == {"check_block": 5, "check_csr": 15}


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("n_labels", [0, 2, 4, 5, 40])
def test_check_block_is_check_csr_and_block_stats(dtype, n_labels):
    """The reader's fused pass gives check_csr's verdict and, on sound rows, block_stats' numbers, whatever the
    corruption (groups of rows past 64K non-zeros included)."""
    rng = np.random.default_rng(n_labels)
    table = np.sort(rng.choice(1000, n_labels, replace=False) - 500.0) if n_labels else None
    for trial in range(30):
        n = int(rng.integers(0, 3000))
        lengths = rng.integers(0, 80, n)
        indptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
        indices = np.concatenate([np.sort(rng.choice(500, k, replace=False)) for k in lengths] or
                                 [np.empty(0)]).astype(np.int32)
        values = rng.standard_normal(indptr[-1]).astype(dtype)
        y = rng.choice(table, n) if n_labels else rng.standard_normal(n)
        kind = trial % 6
        if n and indptr[-1] and kind == 1:
            indices[rng.integers(0, indices.size)] = rng.choice([500, -3, 2 ** 31 - 1])
        elif n and indptr[-1] and kind == 2:
            k = int(rng.integers(1, indices.size)) if indices.size > 1 else 0
            indices[k] = indices[k - 1]
        elif n > 2 and kind == 3:
            indptr[int(rng.integers(1, n))] = -1
        elif n and kind == 4:
            y[int(rng.integers(0, n))] = rng.choice([np.nan, np.inf, 0.5])
        elif n and indptr[-1] and kind == 5:
            big = 1e300 if dtype == np.float64 else 3e38       # (a float32 square cannot overflow a double)
            values[int(rng.integers(0, values.size))] = rng.choice([np.nan, np.inf, big])
        counts = first = None
        if table is not None:
            counts, first = np.zeros(n_labels, np.int64), np.full(n_labels, -1, np.int64)
        got = _rowops.check_block(indptr, indices, values, y, 500, table, counts, first)
        assert got[:2] == _rowops.check_csr(indptr, indices, 500)
        if got[0] == 0:
            c2 = f2 = None
            if table is not None:
                c2, f2 = np.zeros(n_labels, np.int64), np.full(n_labels, -1, np.int64)
            rows = CSRDataset(y, indptr, indices, values, 500, check=False).row_view()
            want = _rowops.block_stats(rows, table, c2, f2)
            assert got[2:5] == want[:3] and got[5] == want[3]
            assert want[3] == _rowops.max_sq_norm(rows) or want[2] >= 0
            if table is not None:
                np.testing.assert_array_equal(counts, c2)
                np.testing.assert_array_equal(first, f2)
                ok = np.isin(y, table)
                assert want[1] == (int(np.argmin(ok)) if not ok.all() else -1)
                np.testing.assert_array_equal(c2, [np.count_nonzero(y == t) for t in table])
                np.testing.assert_array_equal(f2, [int(np.argmax(y == t)) if (y == t).any() else -1
                                                   for t in table])


# -- the commands -----------------------------------------------------------------------------------------------

AS_LIMIT = 2 << 30


def _limit_address_space():
    resource.setrlimit(resource.RLIMIT_AS, (AS_LIMIT, AS_LIMIT))


def command(args, limit=False, cwd=None):
    return subprocess.run([sys.executable, "-m", *args], capture_output=True, text=True, timeout=600, cwd=cwd,
                          preexec_fn=_limit_address_space if limit else None)


@pytest.fixture(scope="module")
def heart(shared_plain, tmp_path_factory):
    """(binary heart_scale, a model trained on it, a directory for outputs)."""
    d = tmp_path_factory.mktemp("heart")
    path = d / "heart.bin"
    llsvm.write_binary(shared_plain("heart_scale"), path)
    model = d / "heart.model"
    llsvm.train(str(path), solver=3).save(model)
    return path, model, d


COMMANDS = {
    "info": lambda bad, model, d: ["llsvm.cli.convert", "--info", bad],
    "predict": lambda bad, model, d: ["llsvm.cli.predict", bad, model, d / "out.txt"],
    "train-s3": lambda bad, model, d: ["llsvm.cli.train", "-s", "3", bad, d / "m"],
    "train-llsvm": lambda bad, model, d: ["llsvm.cli.train", "-s", "llsvm", "--memory", "1M", bad, d / "m"],
    "train-llsvm-BR": lambda bad, model, d: ["llsvm.cli.train", "-s", "llsvm", "-B", "R", bad, d / "m"],
    "train-streamsvm": lambda bad, model, d: ["llsvm.cli.train", "-s", "streamsvm", bad, d / "m"],
    "train-bm": lambda bad, model, d: ["llsvm.cli.train", "-s", "bm", bad, d / "m"],
}


def crafted_heart(heart, name, edit):
    path, model, d = heart
    raw = bytearray(path.read_bytes())
    raw = edit(raw) or raw
    return save(d, raw, name)


def assert_refused(proc, message):
    assert proc.returncode == 1, (proc.returncode, proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr and "Error" in proc.stderr
    assert message in proc.stderr, proc.stderr


@pytest.mark.parametrize("cmd", ["info", "predict", "train-s3", "train-llsvm", "train-streamsvm", "train-bm"])
@pytest.mark.parametrize("n_features,limit", [(2 ** 28, True), (2 ** 31 - 1, True), (2 ** 31 - 1, False)])
def test_commands_refuse_inflated_n_features(heart, cmd, n_features, limit):
    bad = crafted_heart(heart, f"nf{n_features}.bin", lambda r: set_header(r, "n_features", n_features))
    proc = command([str(a) for a in COMMANDS[cmd](bad, heart[1], heart[2])], limit=limit)
    assert_refused(proc, f"Error: {bad}: header n_features {n_features} but the largest feature index in the data "
                         "is 13 (1-based)")
    assert not (heart[2] / "out.txt").exists()


@pytest.mark.parametrize("cmd", ["info", "predict", "train-llsvm-BR"])
def test_commands_refuse_a_nan_norm(heart, cmd):
    bad = crafted_heart(heart, "nan.bin", lambda r: set_header(r, "max_sq_norm", math.nan))
    assert_refused(command([str(a) for a in COMMANDS[cmd](bad, heart[1], heart[2])], limit=True),
                   f"Error: {bad}: header max_sq_norm nan is not a finite number >= 0")


def test_llsvm_radius_bias_refuses_a_wrong_norm(heart):
    bad = crafted_heart(heart, "norm.bin", lambda r: set_header(r, "max_sq_norm", 100.0))
    proc = command([str(a) for a in COMMANDS["train-llsvm-BR"](bad, heart[1], heart[2])])
    assert_refused(proc, f"Error: {bad}: header max_sq_norm 100.0 but the largest squared row norm in the data is ")


def test_info_shows_no_wrong_label_table(heart):
    path, model, d = heart
    labels, counts = label_table(path.read_bytes())
    assert labels == [1.0, -1.0] and counts == [120, 150]
    bad = crafted_heart(heart, "counts.bin", lambda r: set_label_table(r, counts=[121, 149]))
    proc = command(["llsvm.cli.convert", "--info", str(bad)])
    assert_refused(proc, f"Error: {bad}: footer label counts: label 1.0 has count 121 but the data has 120 rows "
                         "with it")
    assert proc.stdout == ""
    bad = crafted_heart(heart, "labels.bin", lambda r: set_label_table(r, [3.0, -1.0]))
    proc = command(["llsvm.cli.convert", "--info", str(bad)])
    assert_refused(proc, f"Error: {bad}: block 0: label 1.0 (row 0 of the block) is not in the footer's label "
                         "table")
    assert proc.stdout == ""


@pytest.mark.parametrize("cmd", ["train-streamsvm", "train-bm"])
def test_stream_solvers_on_crafted_label_fields(heart, cmd):
    path, model, d = heart
    bad = crafted_heart(heart, "nanlab.bin", lambda r: set_label_table(r, [math.nan, -1.0]))
    assert_refused(command([str(a) for a in COMMANDS[cmd](bad, model, d)]),
                   f"Error: {bad}: footer label table: label 0 is nan, not a finite number")

    def continuous(r):
        r = set_label_table(r, [], [])
        set_header(r, "flags", 4)
        return r
    bad = crafted_heart(heart, "cont.bin", continuous)
    assert_refused(command([str(a) for a in COMMANDS[cmd](bad, model, d)]),
                   f"Error: {bad}: header flag 4 (continuous labels: more than 65536 distinct values) but the file "
                   "has only 270 rows")


@pytest.mark.parametrize("solver", ["streamsvm", "bm"])
def test_stream_solvers_on_continuous_labels(tmp_path, solver):
    """A genuine regression file: the classifiers say why they cannot train on it."""
    n = 70000
    path = tmp_path / "reg.bin"
    llsvm.write_binary(CSRDataset(np.arange(n) * 0.5, np.arange(n + 1, dtype=np.int64), np.zeros(n, np.int32),
                                  np.ones(n)), path)
    proc = command(["llsvm.cli.train", "-s", solver, str(path), str(tmp_path / "m")])
    assert_refused(proc, f"Error: {path}: header flag 4: continuous labels (more than 65536 distinct values), not "
                         "classes: no label table to train on")


# -- row weights (version 2, flag 32; issue 46) ------------------------------------------------------------------

@pytest.fixture
def weighted(tmp_path):
    """weighted() -> (path, bytearray of a version 2 file of 5 blocks, its dataset, its weights)."""
    def make():
        ds = sample()
        w = np.random.default_rng(3).uniform(0.0, 2.0, ds.n_rows)
        path = tmp_path / "w.bin"
        llsvm.write_binary(ds.with_weights(w), path, block_rows=20)
        return path, bytearray(path.read_bytes()), ds, w
    return make


def test_weights_read_by_every_path(weighted):
    path, raw, ds, w = weighted()
    assert header(raw)["version"] == 2 and header(raw)["flags"] == 32
    accepted(path)
    with BinaryDataset(path) as b:
        assert b.has_weights and np.array_equal(b.load().weights, w)
        assert np.array_equal(np.concatenate([x.weights for x in b.iter_blocks(max_rows=7)]), w)
        assert np.array_equal(b.load_blocks(1, 3).weights, w[20:60])


@pytest.mark.parametrize("value", [-1.0, float("nan"), float("inf"), -0.5e-300])
def test_bad_weight_refused(tmp_path, weighted, value):
    """A weight that is not a finite number >= 0, checksums fixed: refused by every path that reads its block,
    naming the block and the row."""
    path, raw, ds, w = weighted()
    offset, n, _ = block_index(raw)[2]
    struct.pack_into("<d", raw, offset + 48 + 8 * n + 8 * 5, value)    # block 2's weight column, row 5
    fix_block_crc(raw, offset)
    refused(save(tmp_path, raw), f"corrupt block 2: the weight of row 5 of the block is {value!r}, not a finite "
                                 "number >= 0")


def test_weight_flag_and_version_agree(tmp_path, made, weighted):
    """Flag 32 goes with version 2 exactly: the flag on a version 1 file, version 2 without the flag, are refused
    on open; so is a weight column the blocks do not have (its length against the block index)."""
    path, raw, ds = made()
    bad = bytearray(raw)
    set_header(bad, "flags", 32)
    refused(save(tmp_path, bad), "header flag 32 (row weights) set in a version 1 file", "flags", on_open=True)
    bad = bytearray(raw)
    set_header(bad, "version", 2)
    refused(save(tmp_path, bad), "header flag 32 (row weights) not set in a version 2 file", "flags", on_open=True)
    set_header(bad, "flags", 32)          # a version 2 file whose blocks hold no weight column
    refused(save(tmp_path, bad), "corrupt block index (blocks do not tile the file)", on_open=True)
    wpath, wraw, _, _ = weighted()
    set_header(wraw, "flags", 0)
    set_header(wraw, "version", 1)        # a version 1 file whose blocks hold one
    refused(save(tmp_path, wraw), "corrupt block index (blocks do not tile the file)", on_open=True)


def test_writer_refuses_bad_weights(tmp_path):
    ds = sample()
    w = np.ones(ds.n_rows)
    w[7] = np.nan
    bad = CSRDataset(ds.y, ds.indptr, ds.indices, ds.values, ds.n_features, weights=w)
    with pytest.raises(llsvm.ParameterError, match=r"row 8: the weight nan is not a finite number >= 0"):
        llsvm.write_binary(bad, tmp_path / "x.bin")
    assert not (tmp_path / "x.bin").exists()
