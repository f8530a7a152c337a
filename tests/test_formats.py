"""The binary data format v1 (llsvm/binfmt.py) and the text <-> binary conversions: identity, header fields,
corrupt files rejected, atomic writes."""
import math
import os
import struct
import subprocess
import sys
import time
import tracemalloc

import numpy as np
import pytest

import llsvm
from llsvm.dataset import CSRDataset, Dataset
# the documented layout (binfmt.py docstring, docs/formats.md section 2), spelled out independently of the code
from reference.files import HEADER_SIZE, block_index, fix_block_crc, header, payload_span, set_header


def bits(a):
    return np.ascontiguousarray(a, dtype=np.float64).view(np.int64)


def row_sq_norms(ds):
    """Squared row norms, summed left to right in float64 (the order of the C kernel)."""
    sq = ds.values.astype(np.float64) ** 2
    return np.array([np.add.accumulate(sq[a:b])[-1] if b > a else 0.0
                     for a, b in zip(ds.indptr[:-1].tolist(), ds.indptr[1:].tolist())])


def assert_same(ds, ref, values=None, row_ids=None):
    values = ref.values if values is None else values
    assert ds.y.dtype == np.float64 and ds.indptr.dtype == np.int64 and ds.indices.dtype == np.int32
    assert ds.values.dtype == values.dtype
    np.testing.assert_array_equal(bits(ds.y), bits(ref.y))
    np.testing.assert_array_equal(ds.indptr, ref.indptr)
    np.testing.assert_array_equal(ds.indices, ref.indices)
    itype = np.int32 if values.dtype == np.float32 else np.int64
    np.testing.assert_array_equal(np.ascontiguousarray(ds.values).view(itype), np.ascontiguousarray(values).view(itype))
    if row_ids is not None:
        np.testing.assert_array_equal(ds.row_ids, row_ids)


def concat(blocks):
    y = np.concatenate([b.y for b in blocks])
    indices = np.concatenate([b.indices for b in blocks])
    values = np.concatenate([b.values for b in blocks])
    indptr = np.concatenate([[0], np.cumsum(np.concatenate([np.diff(b.indptr) for b in blocks]))]).astype(np.int64)
    ids = None
    if blocks[0].row_ids is not None:
        ids = np.concatenate([b.row_ids for b in blocks])
    return CSRDataset(y, indptr, indices, values, row_ids=ids)


@pytest.fixture
def text_file(tmp_path, random_libsvm):
    """A random LIBSVM file (labels 3, -1, 1, 0.5 in random order, empty rows, a qid) and its parsed dataset."""
    def make(seed=0, n_rows=150, n_features=40, density=0.15, name="data.txt"):
        r = random_libsvm(seed, n_rows=n_rows, n_features=n_features, density=density,
                          labels=(3.0, -1.0, 1.0, 0.5))
        path = tmp_path / name
        path.write_bytes(b"2 qid:7 1:-0 3:1e-300\n" + r.text)
        ds = llsvm.read_dataset(path)
        assert ds.n_rows == n_rows + 1 and ds.n_qid == 1
        return path, ds
    return make


# ---------------------------------------------------------------------------------------------------------------
# identity

@pytest.mark.parametrize("float32", [False, True])
@pytest.mark.parametrize("block_rows", [1, 2, 7, 1000, None])
def test_text_binary_arrays_identity(tmp_path, text_file, block_rows, float32):
    path, ref = text_file(seed=block_rows or 0)
    values = ref.values.astype(np.float32) if float32 else ref.values
    n = ref.n_rows
    expect_blocks = 1 if block_rows is None else math.ceil(n / block_rows)
    for src, out in ((path, tmp_path / "from_text.bin"), (ref, tmp_path / "from_memory.bin")):
        assert llsvm.write_binary(src, out, block_rows=block_rows, float32=float32) == out
        assert llsvm.file_kind(out) == "binary"
        with llsvm.BinaryDataset(out) as b:
            assert (b.n_rows, b.n_features, b.nnz, b.n_blocks) == (n, ref.n_features, ref.nnz, expect_blocks)
            assert b.dtype == (np.float32 if float32 else np.float64)
            assert b.n_qid == 1
            if block_rows is not None:
                assert b.block_rows.tolist() == [min(block_rows, n - i) for i in range(0, n, block_rows)]
            assert_same(b.load(), ref, values)
            assert b.load().n_features == ref.n_features
            assert_same(concat(list(b.iter_blocks())), ref, values)
        assert_same(llsvm.read_dataset(out), ref, values)
        assert_same(llsvm.read_dataset(out, float32=True), ref, ref.values.astype(np.float32))
    # the same rows give the same bytes, whichever way they came
    assert (tmp_path / "from_text.bin").read_bytes() == (tmp_path / "from_memory.bin").read_bytes()


def test_text_float32_binary_keeps_float32(tmp_path, text_file):
    path, ref = text_file(seed=3)
    out = tmp_path / "f32.bin"
    llsvm.write_binary(llsvm.read_dataset(path, float32=True), out)     # dtype taken from the dataset
    with llsvm.BinaryDataset(out) as b:
        assert b.dtype == np.float32 and b.float32
        assert_same(b.load(), ref, ref.values.astype(np.float32))
        assert header(out.read_bytes())["flags"] & 1 == 1


@pytest.mark.parametrize("float32", [False, True])
def test_binary_text_binary_round_trip(tmp_path, text_file, float32):
    path, ref = text_file(seed=5)
    b1 = tmp_path / "a.bin"
    llsvm.write_binary(path, b1, block_rows=9, float32=float32)
    txt = tmp_path / "back.txt"
    assert llsvm.dump_text(b1, txt) == txt
    back = llsvm.read_dataset(txt, float32=float32)
    values = ref.values.astype(np.float32) if float32 else ref.values
    assert_same(back, ref, values)
    assert back.n_features == ref.n_features
    # the dump is deterministic and the same from memory
    txt2 = tmp_path / "back2.txt"
    llsvm.dump_text(llsvm.read_dataset(b1), txt2)
    assert txt2.read_bytes() == txt.read_bytes()
    # first line: label and values as %.17g, 1-based indices (qid is not kept)
    first = txt.read_bytes().split(b"\n", 1)[0]
    assert first == (b"2 1:-0 3:0" if float32 else b"2 1:-0 3:1e-300")
    # text -> binary again: the same file byte for byte
    b2 = tmp_path / "b.bin"
    llsvm.write_binary(txt, b2, block_rows=9, float32=float32)
    raw1, raw2 = bytearray(b1.read_bytes()), bytearray(b2.read_bytes())
    assert header(raw2)["n_qid"] == 0 and header(raw1)["n_qid"] == 1
    set_header(raw2, "n_qid", 1)
    assert raw1 == raw2


def test_dump_text_zero_based(tmp_path):
    ds = CSRDataset([1.0, -1.0], [0, 2, 3], [0, 4, 2], [0.5, -2.0, 1e-7])
    out = tmp_path / "z.txt"
    llsvm.dump_text(ds, out, zero_based=True)
    assert out.read_bytes() == b"1 0:0.5 4:-2\n-1 2:9.9999999999999995e-08\n"
    llsvm.dump_text(ds, out)
    assert out.read_bytes() == b"1 1:0.5 5:-2\n-1 3:9.9999999999999995e-08\n"
    assert_same(llsvm.read_dataset(out), ds)


def test_header_fields(tmp_path, text_file):
    path, ref = text_file(seed=8, n_rows=300)
    out = tmp_path / "h.bin"
    llsvm.write_binary(path, out, block_rows=16)
    raw = out.read_bytes()
    h = header(raw)
    y = ref.y.tolist()
    first_order = list(dict.fromkeys(y))
    assert first_order[0] == 2.0 and len(first_order) == 5
    counts = [y.count(v) for v in first_order]
    norms = row_sq_norms(ref)
    assert h["magic"] == b"LLSVMBIN" and h["version"] == 1 and h["flags"] == 0
    assert (h["n_rows"], h["n_features"], h["nnz"], h["n_blocks"]) == (301, ref.n_features, ref.nnz, 19)
    assert h["n_qid"] == 1 and h["n_labels"] == 5
    assert h["max_sq_norm"] == norms.max()
    assert h["footer_offset"] + h["footer_size"] == len(raw)
    assert h["footer_size"] == 8 + 16 * 5 + 24 * 19 + 8
    with llsvm.BinaryDataset(out) as b:
        assert b.labels.tolist() == first_order
        assert b.label_counts.tolist() == counts
        assert b.max_sq_norm == norms.max()
        assert (b.n_qid, b.n_rows, b.nnz, b.n_features, b.n_blocks) == (1, 301, ref.nnz, ref.n_features, 19)
        assert b.has_row_ids is False and b.continuous is False
        assert b.load().labels.tolist() == first_order
        assert b.load().label_counts.tolist() == counts
        assert b.block_first_row.tolist() == list(range(0, 301, 16))
    # footer label table as documented
    pos = h["footer_offset"]
    assert raw[pos:pos + 8] == b"LLSVMFTR"
    assert np.frombuffer(raw, "<f8", 5, pos + 8).tolist() == first_order
    assert np.frombuffer(raw, "<u8", 5, pos + 48).tolist() == counts


def test_header_counts_from_writer_pieces(tmp_path):
    """Labels keep first-occurrence order across separate write() calls and blocks."""
    out = tmp_path / "w.bin"
    with llsvm.BinaryWriter(out, block_rows=2) as w:
        w.write([5.0, 5.0, -1.0], [0, 1, 1, 3], [2, 0, 9], [3.0, 1.0, 2.0])
        w.write([7.0, -1.0], [0, 0, 1], [1], [-4.0])
    with llsvm.BinaryDataset(out) as b:
        assert b.labels.tolist() == [5.0, -1.0, 7.0]
        assert b.label_counts.tolist() == [2, 2, 1]
        assert (b.n_rows, b.nnz, b.n_features, b.n_blocks) == (5, 4, 10, 3)
        assert b.max_sq_norm == 16.0
        ds = b.load()
        assert ds.indptr.tolist() == [0, 1, 1, 3, 3, 4]
        assert ds.indices.tolist() == [2, 0, 9, 1]
        assert ds.values.tolist() == [3.0, 1.0, 2.0, -4.0]


def test_row_ids_round_trip(tmp_path):
    rng = np.random.default_rng(3)
    out = tmp_path / "ids.bin"
    parts = []
    with llsvm.BinaryWriter(out, row_ids=True, block_rows=4) as w:
        start = 0
        for n in (3, 6, 1, 9):
            lengths = rng.integers(0, 4, n)
            indptr = np.concatenate([[0], np.cumsum(lengths)])
            indices = np.concatenate([np.sort(rng.choice(20, k, replace=False)) for k in lengths]).astype(np.int32)
            values = rng.standard_normal(indices.size)
            y = rng.choice([1.0, -1.0], n)
            ids = (np.arange(start, start + n) * 1000 + 7).astype(np.int64)
            start += n
            w.write(y, indptr, indices, values, row_ids=ids)
            parts.append(CSRDataset(y, indptr, indices, values, row_ids=ids))
    ref = concat(parts)
    with llsvm.BinaryDataset(out) as b:
        assert b.has_row_ids and b.n_blocks == 5 and b.n_rows == 19
        assert header(out.read_bytes())["flags"] == 2
        blocks = [b.read_block(i) for i in range(b.n_blocks)]
        assert [x.first_row for x in blocks] == [0, 4, 8, 12, 16]
        assert_same(concat(blocks), ref, row_ids=ref.row_ids)
        assert_same(concat(list(b.iter_blocks())), ref, row_ids=ref.row_ids)
        assert_same(concat(list(b.iter_blocks(max_rows=3))), ref, row_ids=ref.row_ids)
        assert_same(b.load(), ref, row_ids=ref.row_ids)
        loaded = b.load()
    # row ids survive a re-write (here into one block, loaded by mapping)
    again = tmp_path / "again.bin"
    llsvm.write_binary(loaded, again)
    with llsvm.BinaryDataset(again) as b2:
        assert b2.has_row_ids and b2.n_blocks == 1
        assert_same(b2.load(), ref, row_ids=ref.row_ids)


def _random_rows(rng, n, width=50):
    lengths = rng.integers(0, 8, n)
    indptr = np.concatenate([[0], np.cumsum(lengths)])
    indices = np.concatenate([np.sort(rng.choice(width, k, replace=False)) for k in lengths]).astype(np.int32)
    return CSRDataset(rng.choice([1.0, -1.0], n), indptr, indices, rng.standard_normal(indices.size), width)


def test_owned_pieces_and_gathered_blocks_write_the_same_bytes(tmp_path):
    """Blocks made of several write_dataset pieces go to the file piece by piece (no concatenation), and rows the
    caller gives up (owned=True) are held back without a copy: the bytes are those of one write of every row.
    Without owned, the writer copies what it holds back: the caller may change its arrays afterwards."""
    rng = np.random.default_rng(11)
    ds = _random_rows(rng, 2000)
    ds = CSRDataset(ds.y, ds.indptr, ds.indices, ds.values, ds.n_features, row_ids=np.arange(2000, dtype=np.int64),
                    alpha=rng.random(2000), check=False)
    cuts = [0, 3, 50, 51, 400, 777, 1500, 2000]
    files = {}
    for mode in ("whole", "owned", "copied"):
        out = tmp_path / f"{mode}.bin"
        with llsvm.BinaryWriter(out, row_ids=True, alpha=True, block_bytes=3000, fsync=False) as w:
            if mode == "whole":
                w.write_dataset(ds)
            for a, b in zip(cuts[:-1], cuts[1:]):
                if mode == "whole":
                    break
                piece = ds.take_rows(np.arange(a, b))
                piece = CSRDataset(piece.y, piece.indptr, piece.indices, piece.values, ds.n_features,
                                   row_ids=ds.row_ids[a:b].copy(), alpha=ds.alpha[a:b].copy(), check=False)
                w.write_dataset(piece, owned=mode == "owned")
                if mode == "copied":          # the caller reuses its arrays: the file must not see it
                    for x in (piece.indices, piece.values, piece.y, piece.row_ids, piece.alpha):
                        x[:] = 0
        files[mode] = out.read_bytes()
    assert files["owned"] == files["whole"] and files["copied"] == files["whole"]
    with llsvm.BinaryDataset(tmp_path / "owned.bin") as b:
        assert b.n_blocks > 10                        # blocks are made of several pieces
        assert_same(b.load(), ds)


@pytest.mark.parametrize("hold", [False, True])
def test_bytes_held_back_keep_owned_arrays_only_when_asked(tmp_path, hold):
    """The bytes waiting for the next aligned write: copied by default, so an owned piece's arrays are not kept
    alive by the writer (the out-of-core solvers write owned pieces under --memory: kept, -s llsvm's peak RSS rose
    from 116 to 150 MB at --memory 64M); held without a copy with hold_owned (llsvm-convert). The same bytes."""
    rng = np.random.default_rng(5)
    ds = _random_rows(rng, 3000)
    out = tmp_path / f"{hold}.bin"
    pieces, seen = [], []
    with llsvm.BinaryWriter(out, block_bytes=5000, fsync=False, write_align=1 << 16, hold_owned=hold) as w:
        for a in range(0, 3000, 500):
            pieces.append(ds.take_rows(np.arange(a, a + 500)))
            w.write_dataset(pieces[-1], owned=True)
            held = [np.frombuffer(v, np.uint8) for v in w._out]
            seen.append(any(np.shares_memory(h, x) for h in held for p in pieces
                            for x in (p.indices, p.values, p.y, p.indptr)))
    assert any(seen) == hold, seen
    with llsvm.BinaryDataset(out) as b:
        assert_same(b.load(), ds)


def test_arena_recycles_only_buffers_nothing_views(tmp_path):
    """binfmt.Arena: a load's k-th array reuses the k-th buffer once nothing views it, never a buffer still in use;
    load_blocks into it gives the rows of a fresh load."""
    from llsvm.binfmt import Arena
    a = Arena()
    x, y = a.empty(100, np.float64), a.empty(7, np.int32)
    assert x.base is not y.base and x.shape == (100,) and y.dtype == np.int32
    a.reset()
    x2 = a.empty(50, np.float64)                      # x still views buffer 0: a new one
    assert x2.base is not x.base
    del x, y
    a.reset()
    x3 = a.empty(80, np.int64)
    assert x3.base is not x2.base                     # x2 holds the replacement: again a new one
    at3 = x3.ctypes.data
    del x2, x3
    a.reset()
    assert a.empty(90, np.float64).ctypes.data == at3     # free and large enough: reused
    rng = np.random.default_rng(2)
    ds = _random_rows(rng, 3000)
    ds = CSRDataset(ds.y, ds.indptr, ds.indices, ds.values, ds.n_features, row_ids=np.arange(3000, dtype=np.int64),
                    alpha=rng.random(3000), check=False)
    out = tmp_path / "a.bin"
    with llsvm.BinaryWriter(out, row_ids=True, alpha=True, block_rows=500, fsync=False) as w:
        w.write_dataset(ds)
    arena = Arena()
    with llsvm.BinaryDataset(out) as f:
        for b0, b1 in ((0, 2), (2, 5), (5, 6), (1, 4)):
            arena.reset()
            got = f.load_blocks(b0, b1, arena=arena)
            want = f.load_blocks(b0, b1)
            assert_same(got, want, row_ids=want.row_ids)
            np.testing.assert_array_equal(got.alpha, want.alpha)
            assert got.values.base is not None and any(got.values.base is buf for buf in arena._bufs)
            del got, want


def test_scratch_files_are_written_over_byte_for_byte(tmp_path):
    """BinaryWriter(scratch=...): a replaced file becomes a spare, the next writer writes over it in place and cuts
    it to length; the result is the bytes of a fresh write. An aborted writer removes the spare it took."""
    from llsvm.fileutil import ScratchFiles
    rng = np.random.default_rng(5)
    scratch = ScratchFiles(str(tmp_path), "spare-")
    target = tmp_path / "active.bin"
    big, small, other = _random_rows(rng, 3000), _random_rows(rng, 40), _random_rows(rng, 700)
    for ds in (big, small, other):
        with llsvm.BinaryWriter(target, scratch=scratch, fsync=False, block_rows=64) as w:
            reused = w._reused
            w.write_dataset(ds)
        fresh = tmp_path / "fresh.bin"
        with llsvm.BinaryWriter(fresh, fsync=False, block_rows=64) as w:
            w.write_dataset(ds)
        assert target.read_bytes() == fresh.read_bytes()          # cut to length: no byte of the old file left
        assert reused == (ds is other)                            # the spare is the first file, replaced by the second
        assert len(scratch.free) == (ds is not big)               # the file it replaced, if any
    spare = scratch.free[0]
    with pytest.raises(RuntimeError):
        with llsvm.BinaryWriter(target, scratch=scratch, fsync=False) as w:
            assert w._reused
            raise RuntimeError("stop")
    assert not os.path.exists(spare) and scratch.free == []
    with llsvm.BinaryDataset(target) as b:
        assert b.n_rows == other.n_rows                            # the target is left as it was
    scratch.replace(str(fresh), str(target))                      # os.replace, the old target a spare
    assert not fresh.exists() and len(scratch.free) == 1
    for i in range(4):                                            # at most MAX_SPARES kept: the others removed
        extra = tmp_path / f"extra{i}.bin"
        extra.write_bytes(b"x")
        scratch.retire(str(extra))
        assert not extra.exists()
    assert len(scratch.free) == ScratchFiles.MAX_SPARES == 2 and all(os.path.exists(f) for f in scratch.free)
    assert len(list(tmp_path.glob("spare-*"))) == 2


def test_row_ids_required_when_declared(tmp_path):
    out = tmp_path / "ids.bin"
    with pytest.raises(ValueError):
        with llsvm.BinaryWriter(out, row_ids=True) as w:
            w.write([1.0], [0, 1], [0], [1.0])
    assert os.listdir(tmp_path) == []


def test_binary_to_binary_copy_is_identical(tmp_path, text_file):
    path, ref = text_file(seed=17)
    a, b, c = tmp_path / "a.bin", tmp_path / "b.bin", tmp_path / "c.bin"
    llsvm.write_binary(path, a, block_rows=13)
    llsvm.write_binary(a, b, block_rows=13)
    assert a.read_bytes() == b.read_bytes()
    llsvm.write_binary(a, c, block_rows=40, float32=True)
    with llsvm.BinaryDataset(c) as x:
        assert (x.n_blocks, x.dtype, x.n_qid) == (4, np.float32, 1)
        assert_same(x.load(), ref, ref.values.astype(np.float32))


def test_continuous_labels_have_no_table(tmp_path):
    y = np.arange(70000) * 0.5 - 7.0
    txt = tmp_path / "reg.txt"
    txt.write_bytes("".join(f"{v!r} 1:1\n" for v in y.tolist()).encode())
    out = tmp_path / "reg.bin"
    llsvm.write_binary(txt, out, block_rows=30000)
    raw = out.read_bytes()
    h = header(raw)
    assert h["flags"] == 4 and h["n_labels"] == 0 and h["n_blocks"] == 3
    with llsvm.BinaryDataset(out) as b:
        assert b.continuous and b.labels is None and b.label_counts is None
        ds = b.load()
        np.testing.assert_array_equal(bits(ds.y), bits(y))
        assert ds.labels is None
    st = llsvm.open_dataset(txt, stream=True, chunk_size=100000)
    assert sum(b.n_rows for b in st.iter_blocks()) == 70000
    assert st.labels is None and st.n_rows == 70000


def test_empty_dataset_binary(tmp_path):
    out = tmp_path / "e.bin"
    llsvm.write_binary(CSRDataset(np.empty(0), [0], np.empty(0, np.int32), np.empty(0)), out)
    raw = out.read_bytes()
    h = header(raw)
    assert (h["n_rows"], h["nnz"], h["n_blocks"], h["n_labels"], h["footer_offset"]) == (0, 0, 0, 0, 128)
    assert len(raw) == 128 + 16
    with llsvm.BinaryDataset(out) as b:
        assert b.load().n_rows == 0 and list(b.iter_blocks()) == [] and b.verify()


@pytest.mark.parametrize("indices", [[-1], [3, 1], [2, 2], [0, 5, 5], [2 ** 31 - 1, 0]])
def test_writer_refuses_indices_that_break_the_format(tmp_path, indices):
    """Writers guarantee 0-based, strictly increasing indices within a row (docs/formats.md section 2): BinaryWriter.write must
    refuse rows that would make a file violating it, and leave nothing behind."""
    out = tmp_path / "bad.bin"
    with pytest.raises((ValueError, llsvm.LLSVMError)):
        with llsvm.BinaryWriter(out) as w:
            w.write([1.0, -1.0], [0, 0, len(indices)], indices, np.ones(len(indices)))
    assert os.listdir(tmp_path) == []


# ---------------------------------------------------------------------------------------------------------------
# block streaming, loading, scipy

@pytest.mark.parametrize("max_rows,max_bytes", [(1, None), (4, None), (50, None), (None, 100), (None, 1000),
                                                (3, 200), (None, 1)])
def test_iter_blocks_recut(tmp_path, text_file, max_rows, max_bytes):
    path, ref = text_file(seed=13, n_rows=120)
    out = tmp_path / "r.bin"
    llsvm.write_binary(path, out, block_rows=11)
    for source in (out, path):
        blocks = list(llsvm.iter_blocks(source, max_rows=max_rows, max_bytes=max_bytes))
        assert [b.first_row for b in blocks] == np.cumsum([0] + [b.n_rows for b in blocks[:-1]]).tolist()
        assert all(b.n_rows >= 1 for b in blocks)
        if max_rows is not None:
            assert all(b.n_rows <= max_rows for b in blocks)
        if max_bytes is not None:
            assert all(b.n_rows == 1 or 16 * b.n_rows + 12 * b.nnz <= max_bytes for b in blocks)
        if source == out:
            # re-cut inside the stored blocks of 11 rows: no block crosses a stored block boundary
            assert all(b.first_row // 11 == (b.first_row + b.n_rows - 1) // 11 for b in blocks)
            if max_rows == 50:
                assert len(blocks) == 11
        assert_same(concat(blocks), ref)
    with llsvm.BinaryDataset(out) as b:
        blocks = list(b.iter_blocks(max_rows=max_rows, max_bytes=max_bytes))
        assert_same(concat(blocks), ref)


def test_load_single_block_equals_multi_block(tmp_path, text_file):
    path, ref = text_file(seed=21, n_rows=200)
    one, many = tmp_path / "one.bin", tmp_path / "many.bin"
    llsvm.write_binary(path, one)
    llsvm.write_binary(path, many, block_bytes=512)
    with llsvm.BinaryDataset(one) as a, llsvm.BinaryDataset(many) as b:
        assert a.n_blocks == 1 and b.n_blocks > 10
        assert a.verify() is True and b.verify(threads=3) is True
        la, lb = a.load(), b.load()
        assert_same(la, ref)
        assert_same(lb, ref)
        assert la.n_features == lb.n_features == ref.n_features
        assert la.n_qid == lb.n_qid == 1
    with llsvm.BinaryDataset(many) as c:
        assert_same(c.load(threads=1), ref)
        # blocks obey the byte budget: a block takes another row only while it fits
        sizes = [16 * int(r) + 12 * int(k) for r, k in zip(c.block_rows, c.block_nnz)]
        assert all(s <= 512 or r == 1 for s, r in zip(sizes, c.block_rows))


def test_to_csr_equals_sklearn(tmp_path, text_file):
    from sklearn.datasets import load_svmlight_file

    path, ref = text_file(seed=34, n_rows=250, n_features=300, density=0.05)
    X, y = load_svmlight_file(str(path), zero_based=False, query_id=False)
    out = tmp_path / "s.bin"
    llsvm.write_binary(path, out, block_rows=32)
    with llsvm.BinaryDataset(out) as b:
        C = b.to_csr()
        np.testing.assert_array_equal(bits(b.y), bits(y))
    for M in (C, llsvm.to_csr(out)[0], llsvm.to_csr(path)[0]):
        assert M.shape == X.shape
        np.testing.assert_array_equal(M.indptr, X.indptr)
        np.testing.assert_array_equal(M.indices, X.indices)
        np.testing.assert_array_equal(bits(M.data), bits(X.data))
    np.testing.assert_array_equal(bits(llsvm.to_csr(out)[1]), bits(y))


def test_binary_on_stdin_is_refused(tmp_path, text_file):
    path, _ = text_file(seed=1, n_rows=10)
    out = tmp_path / "x.bin"
    llsvm.write_binary(path, out)
    code = ("import llsvm\ntry:\n    llsvm.read_dataset('-')\nexcept llsvm.DataFormatError as e:\n"
            "    print(str(e))\n")
    p = subprocess.run([sys.executable, "-c", code], input=out.read_bytes(), capture_output=True, timeout=600)
    assert p.returncode == 0, p.stderr.decode()
    assert p.stdout.decode().strip() == "<stdin>: binary llsvm data cannot be read from standard input: give its path"


# ---------------------------------------------------------------------------------------------------------------
# corrupt files

@pytest.fixture
def small_bin(tmp_path, text_file):
    """A small multi-block binary file: (path, raw bytes, reference dataset)."""
    def make(block_rows=15, n_rows=40, seed=1, name="s.bin"):
        path, ref = text_file(seed=seed, n_rows=n_rows - 1, n_features=12, density=0.3)
        out = tmp_path / name
        llsvm.write_binary(path, out, block_rows=block_rows)
        return out, bytearray(out.read_bytes()), ref
    return make


def write_raw(path, raw):
    # a fresh file each time: truncating a written file in place can force a flush to disk (ext4), slow here
    if path.exists():
        path.unlink()
    path.write_bytes(bytes(raw))
    return path


def rejected(path, fragment=None, stage="open"):
    """Open (and for stage 'load', load) the file; it must raise DataFormatError naming the path."""
    with pytest.raises(llsvm.DataFormatError) as info:
        b = llsvm.BinaryDataset(path)
        try:
            if stage == "load":
                b.load()
            elif stage == "iter":
                list(b.iter_blocks())
            elif stage == "verify":
                b.verify()
        finally:
            b.close()
    e = info.value
    assert e.path == str(path) and (e.line, e.column) == (0, 0)
    assert str(e) == f"{path}: {e.message}"
    if fragment is not None:
        assert fragment in e.message
    return e


def test_wrong_magic(tmp_path, small_bin):
    path, raw, _ = small_bin()
    raw[7:8] = b"X"
    bad = write_raw(tmp_path / "m.bin", raw)
    rejected(bad, "not an llsvm binary file (wrong magic bytes)")
    with pytest.raises(llsvm.DataFormatError):      # not binary by its magic: parsed as text, and refused
        llsvm.read_dataset(bad)


@pytest.mark.parametrize("version", [0, 3, 0xFFFFFFFF])
def test_wrong_version(tmp_path, small_bin, version):
    path, raw, _ = small_bin()
    set_header(raw, "version", version, "<I")      # with a valid header CRC: the version check is what fails
    bad = write_raw(tmp_path / "v.bin", raw)
    rejected(bad, f"unsupported binary format version {version}")
    with pytest.raises(llsvm.DataFormatError, match="version"):
        llsvm.read_dataset(bad)


def test_unknown_flags(tmp_path, small_bin):
    path, raw, _ = small_bin()
    set_header(raw, "flags", 64, "<I")
    rejected(write_raw(tmp_path / "f.bin", raw), "unknown flags 0x40")
    set_header(raw, "flags", 32, "<I")                  # row weights (version 2's flag) in a version 1 file
    rejected(write_raw(tmp_path / "g.bin", raw), "header flag 32 (row weights) set in a version 1 file")


def test_every_header_bit_flip(tmp_path, small_bin):
    path, raw, _ = small_bin()
    bad = tmp_path / "h.bin"
    for off in range(HEADER_SIZE):
        for bit in range(8):
            r = bytearray(raw)
            r[off] ^= 1 << bit
            write_raw(bad, r)
            if off < 8:
                frag = "wrong magic"
            elif off < 12:
                frag = "unsupported binary format version"
            else:
                frag = "header checksum mismatch"
            rejected(bad, frag)


@pytest.mark.parametrize("block_rows", [15, None])
def test_payload_bit_flip_in_every_block(tmp_path, small_bin, block_rows):
    path, raw, _ = small_bin(block_rows=block_rows)
    index = block_index(raw)
    assert len(index) == (3 if block_rows else 1)
    bad = tmp_path / "p.bin"
    for b, (offset, _, _) in enumerate(index):
        a, z = payload_span(raw, offset)
        for pos in (a, (a + z) // 2, z - 1):
            r = bytearray(raw)
            r[pos] ^= 0x10
            write_raw(bad, r)
            frag = f"checksum mismatch in block {b}"
            for stage in ("load", "iter", "verify"):
                rejected(bad, frag, stage)
            with llsvm.BinaryDataset(bad) as ds:
                with pytest.raises(llsvm.DataFormatError, match=frag):
                    ds.read_block(b)
                for other in range(len(index)):
                    if other != b:
                        assert ds.read_block(other).n_rows == index[other][1]
            with pytest.raises(llsvm.DataFormatError, match=frag):
                llsvm.read_dataset(bad)


def region(raw, off):
    """Where byte `off` of a binary file lies, e.g. 'block 1 header +44' (for failure messages)."""
    if off < HEADER_SIZE:
        return f"header +{off}"
    h = header(raw)
    if off >= h["footer_offset"]:
        return f"footer +{off - h['footer_offset']} of {h['footer_size']}"
    for b, (offset, _, _) in enumerate(block_index(raw)):
        a, z = payload_span(raw, offset)
        if offset <= off < a:
            return f"block {b} header +{off - offset}"
        if a <= off < z:
            return f"block {b} payload +{off - a}"
    return "?"


def test_footer_bit_flip(tmp_path, small_bin):
    path, raw, _ = small_bin()
    h = header(raw)
    bad = tmp_path / "f.bin"
    undetected = []
    for off in range(h["footer_offset"], len(raw)):
        for bit in (0, 5):
            r = bytearray(raw)
            r[off] ^= 1 << bit
            write_raw(bad, r)
            try:
                llsvm.BinaryDataset(bad).close()
            except llsvm.DataFormatError as e:
                assert "footer" in e.message and e.path == str(bad)
                continue
            undetected.append((region(raw, off), bit))
    assert undetected == []


def test_every_single_bit_flip_is_detected(tmp_path, small_bin):
    """Flip one bit in every byte of a small file (all of header, block headers, payloads, footer): every such
    file must be refused by open() or load()."""
    path, raw, ref = small_bin(block_rows=15)
    bad = tmp_path / "x.bin"
    undetected = []
    for off in range(len(raw)):
        r = bytearray(raw)
        r[off] ^= 1 << (off % 8)
        write_raw(bad, r)
        try:
            with llsvm.BinaryDataset(bad) as b:
                b.load(threads=1)
        except llsvm.DataFormatError:
            continue
        undetected.append(region(raw, off))
    assert undetected == []


def test_block_header_corruption(tmp_path, small_bin):
    path, raw, _ = small_bin()
    index = block_index(raw)
    bad = tmp_path / "b.bin"
    for b, (offset, n, nnz) in enumerate(index):
        for field_off, value in ((0, b"LLSVMBLX"), (8, struct.pack("<Q", n + 1)), (16, struct.pack("<Q", nnz - 1)),
                                 (24, struct.pack("<Q", 12345)), (32, struct.pack("<Q", 8))):
            r = bytearray(raw)
            r[offset + field_off:offset + field_off + len(value)] = value
            write_raw(bad, r)
            for stage in ("load", "iter", "verify"):
                rejected(bad, f"corrupt block {b} header", stage)


def test_truncation_at_every_offset(tmp_path, small_bin):
    path, raw, _ = small_bin()
    bad = tmp_path / "t.bin"
    for size in range(len(raw)):
        write_raw(bad, raw[:size])
        e = rejected(bad)
        if 8 <= size < HEADER_SIZE:
            assert "truncated binary file" in e.message
        elif size >= HEADER_SIZE:
            assert "truncated or corrupt" in e.message
        with pytest.raises(llsvm.DataFormatError):
            llsvm.read_dataset(bad)


@pytest.mark.parametrize("extra", [b"\0", b"garbage\n", b"\0" * 8, None])
def test_appended_garbage(tmp_path, small_bin, extra):
    path, raw, _ = small_bin()
    bad = write_raw(tmp_path / "g.bin", raw + (bytes(raw) if extra is None else extra))
    e = rejected(bad, "truncated or corrupt")
    assert f"the file has {bad.stat().st_size}" in e.message


@pytest.mark.parametrize("field,value", [
    ("n_blocks", 2 ** 62), ("n_blocks", 2 ** 64 - 1), ("n_labels", 2 ** 61), ("n_labels", 2 ** 64 - 1),
    ("footer_size", 2 ** 63), ("footer_offset", 2 ** 63), ("n_rows", 2 ** 62), ("nnz", 2 ** 62),
    ("n_features", 2 ** 40),
])
def test_huge_header_counts_fail_fast(tmp_path, small_bin, field, value):
    path, raw, _ = small_bin()
    set_header(raw, field, value)
    bad = write_raw(tmp_path / "huge.bin", raw)
    tracemalloc.start()
    t0 = time.process_time()     # CPU seconds: time spent waiting for a busy machine's cores does not count
    try:
        for stage in ("open", "load"):
            rejected(bad, None, stage)
        cpu = time.process_time() - t0
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert cpu < 1.0             # 0.5-3 ms measured: work in proportion to a huge count would take far longer
    assert peak < 4 << 20


def test_index_out_of_range_with_valid_crc(tmp_path, small_bin):
    for block_rows in (15, None):
        path, raw, ref = small_bin(block_rows=block_rows, name=f"o{block_rows}.bin")
        index = block_index(raw)
        bad = tmp_path / "oor.bin"
        for b, (offset, n, nnz) in enumerate(index):
            a, _ = payload_span(raw, offset)
            o_idx = a + 8 * n + 8 * (n + 1)
            for k in (0, nnz - 1):
                for value in (ref.n_features, -1, 2 ** 31 - 1, -2 ** 31):
                    r = bytearray(raw)
                    struct.pack_into("<i", r, o_idx + 4 * k, value)
                    fix_block_crc(r, offset)
                    write_raw(bad, r)
                    for stage in ("load", "iter", "verify"):
                        rejected(bad, f"corrupt block {b}: a feature index is out of range", stage)
                    with llsvm.BinaryDataset(bad) as ds:
                        with pytest.raises(llsvm.DataFormatError):
                            ds.read_block(b)


@pytest.mark.parametrize("block_rows", [15, None])
def test_unsorted_indices_with_valid_crc(tmp_path, small_bin, block_rows):
    """The payload's indices are strictly increasing per row (binfmt.py docstring): a block that breaks this
    (two indices of a row swapped, or one repeated), even with a correct CRC, is corrupt."""
    path, raw, ref = small_bin(block_rows=block_rows)
    bad = tmp_path / "uns.bin"
    for b, (offset, n, nnz) in enumerate(block_index(raw)):
        a, _ = payload_span(raw, offset)
        ptr = np.frombuffer(bytes(raw), "<i8", n + 1, a + 8 * n)
        row = int(np.argmax(np.diff(ptr) >= 2))
        assert ptr[row + 1] - ptr[row] >= 2
        o_idx = a + 16 * n + 8 + 4 * int(ptr[row])
        i0, i1 = struct.unpack_from("<ii", raw, o_idx)
        for pair in ((i1, i0), (i0, i0)):
            r = bytearray(raw)
            struct.pack_into("<ii", r, o_idx, *pair)
            fix_block_crc(r, offset)
            write_raw(bad, r)
            for stage in ("load", "iter", "verify"):
                rejected(bad, f"corrupt block {b}", stage)


@pytest.mark.parametrize("block_rows", [15, None])
def test_row_offsets_corrupt_with_valid_crc(tmp_path, small_bin, block_rows):
    path, raw, ref = small_bin(block_rows=block_rows)
    bad = tmp_path / "ptr.bin"
    for b, (offset, n, nnz) in enumerate(block_index(raw)):
        a, _ = payload_span(raw, offset)
        o_ptr = a + 8 * n
        for row, value in ((0, 1), (n, nnz + 1), (n, nnz - 1), (1, 2 ** 62), (1, -5)):
            r = bytearray(raw)
            struct.pack_into("<q", r, o_ptr + 8 * row, value)
            fix_block_crc(r, offset)
            write_raw(bad, r)
            for stage in ("load", "iter", "verify"):
                rejected(bad, f"corrupt block {b}: row offsets out of order", stage)


# ---------------------------------------------------------------------------------------------------------------
# atomic writes

class FailingDataset(Dataset):
    """Yields a few blocks of a real dataset, then raises."""

    def __init__(self, ds, fail_after=3):
        self.ds = ds
        self.fail_after = fail_after
        self.n_rows, self.n_features, self.nnz = ds.n_rows, ds.n_features, ds.nnz
        self.n_qid = 0
        self.dtype = ds.dtype
        self.row_ids = None

    def iter_blocks(self, max_rows=None, max_bytes=None):
        for i, block in enumerate(self.ds.iter_blocks(max_rows=4)):
            if i == self.fail_after:
                raise RuntimeError("disk on fire")
            yield block


@pytest.mark.parametrize("existing", [False, True])
@pytest.mark.parametrize("name, old, write", [
    ("target.bin", b"old contents", lambda ds, t: llsvm.write_binary(ds, t, block_rows=2)),
    ("target.txt", b"1 1:1\n", lambda ds, t: llsvm.dump_text(ds, t)),
], ids=["write_binary", "dump_text"])
def test_failed_write_leaves_nothing(tmp_path, text_file, existing, name, old, write):
    path, ref = text_file(seed=2)
    work = tmp_path / "out"
    work.mkdir()
    target = work / name
    if existing:
        target.write_bytes(old)
    with pytest.raises(RuntimeError, match="disk on fire"):
        write(FailingDataset(ref), target)
    assert os.listdir(work) == ([name] if existing else [])
    if existing:
        assert target.read_bytes() == old


def test_failed_conversion_of_bad_text_leaves_nothing(tmp_path):
    src = tmp_path / "bad.txt"
    src.write_bytes(b"".join(b"1 1:%d\n" % i for i in range(5000)) + b"1 2:1 2:1\n")
    work = tmp_path / "out"
    work.mkdir()
    (work / "target.bin").write_bytes(b"keep me")
    with pytest.raises(llsvm.DataFormatError) as info:
        llsvm.write_binary(src, work / "target.bin", block_rows=100)
    assert (info.value.line, info.value.column) == (5001, 7)
    assert os.listdir(work) == ["target.bin"]
    assert (work / "target.bin").read_bytes() == b"keep me"


def test_writer_never_shows_a_partial_file(tmp_path):
    work = tmp_path / "w"
    work.mkdir()
    target = work / "t.bin"
    w = llsvm.BinaryWriter(target, block_rows=1)
    for i in range(5):
        w.write([1.0], [0, 1], [i], [float(i)])
        assert not target.exists()
        names = os.listdir(work)
        assert len(names) == 1 and names[0] != "t.bin" and names[0].startswith(".")   # a hidden temporary
    assert w.close() == str(target)
    assert os.listdir(work) == ["t.bin"]
    with llsvm.BinaryDataset(target) as b:
        assert (b.n_rows, b.n_blocks, b.nnz, b.n_features) == (5, 5, 5, 5)
        assert b.load().values.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]
    # abort, and an exception (even KeyboardInterrupt) inside the context manager, leave no trace
    w = llsvm.BinaryWriter(work / "u.bin")
    w.write([1.0], [0, 1], [0], [1.0])
    w.abort()
    assert os.listdir(work) == ["t.bin"]
    before = target.read_bytes()
    for exc in (RuntimeError, KeyboardInterrupt):
        with pytest.raises(exc):
            with llsvm.BinaryWriter(target, block_rows=1) as w:
                w.write([2.0, 3.0], [0, 1, 2], [0, 1], [1.0, 1.0])
                raise exc()
        assert os.listdir(work) == ["t.bin"]
        assert target.read_bytes() == before


def test_writeback_started_in_steps_and_fsync_kept(tmp_path, monkeypatch):
    """A durable file's bytes are sent to the disk in steps as they are written (contiguous ranges from the start,
    each of WRITEBACK_BYTES at least), the closing fsync still runs, and the file is the one written without them;
    a temporary file (fsync=False) starts none."""
    from llsvm import binfmt
    rng = np.random.default_rng(3)
    n, k = 20000, 40           # about 10 MB
    y = rng.choice([-1.0, 1.0], n)
    indptr = np.arange(0, n * k + 1, k, dtype=np.int64)
    indices = np.tile(np.arange(k, dtype=np.int32), n)
    values = rng.standard_normal(n * k)
    files = {}
    real, real_fsync = binfmt._start_writeback, os.fsync
    for fsync, step in ((True, 1 << 62), (True, 2 << 20), (False, 2 << 20)):
        calls, syncs = [], []
        monkeypatch.setattr(binfmt, "WRITEBACK_BYTES", step)
        monkeypatch.setattr(binfmt, "_start_writeback", lambda fd, o, m: (calls.append((o, m)), real(fd, o, m)))
        monkeypatch.setattr(os, "fsync", lambda fd: (syncs.append(fd), real_fsync(fd)))
        path = tmp_path / f"w{fsync}{step}.bin"
        with llsvm.BinaryWriter(path, fsync=fsync) as w:
            w.write(y, indptr, indices, values)
            w.close()
        files[(fsync, step)] = path.read_bytes()
        if fsync and step < 1 << 62:
            assert len(calls) >= 2 and calls[0][0] == 0
            assert all(m >= step for _, m in calls)
            assert all(a + m == b for (a, m), (b, _) in zip(calls, calls[1:]))
        else:
            assert calls == []
        assert len(syncs) == (1 if fsync else 0)
    assert len(set(files.values())) == 1
