"""Binary files read in place (memory-mapped, several blocks: a segmented view) against contiguous arrays.

A multi-block binary file loads as a MappedDataset: labels and offsets in memory, the non-zeros where they lie in
the mapped file, each row's block in a segment table (cext/rowview.pxd). Every kernel must give on its row view
(`row_view()`, a segmented `Rows`) bit for bit what it gives on the contiguous copy of the same rows, and training
and prediction must never make that copy (`materialized` stays False).
"""
import os
import struct
import zlib

import numpy as np
import pytest

import llsvm
from llsvm._ext import _linear as K
from llsvm._ext import _random as RNG
from llsvm._ext import _rowops as R
from llsvm._ext._view import Rows
from llsvm.binfmt import BinaryDataset, MappedDataset
from llsvm.dataset import CSRDataset


def _bits(a):
    a = np.ascontiguousarray(a)
    return a.view(np.int32 if a.dtype == np.float32 else np.int64)


@pytest.fixture
def mapped(tmp_path, random_libsvm):
    """(MappedDataset, contiguous reference) for a random file cut into many small blocks."""
    def make(seed=0, n_rows=300, n_features=60, float32=False, block_rows=17, labels=(-1.0, 1.0)):
        r = random_libsvm(seed, n_rows=n_rows, n_features=n_features, density=0.2, labels=labels)
        text = tmp_path / f"d{seed}.txt"
        text.write_bytes(r.text)
        ref = llsvm.read_dataset(text, float32=float32)
        out = tmp_path / f"d{seed}.bin"
        llsvm.write_binary(ref, out, block_rows=block_rows, float32=float32)
        ds = llsvm.read_dataset(out)
        assert isinstance(ds, MappedDataset) and ds.n_blocks == -(-n_rows // block_rows)
        return ds, ref
    return make


@pytest.mark.parametrize("float32", [False, True])
def test_mapped_rows_equal_the_contiguous_rows(mapped, float32):
    ds, ref = mapped(seed=1, float32=float32)
    assert ds.dtype == ref.dtype and ds.nnz == ref.nnz and ds.n_features == ref.n_features
    np.testing.assert_array_equal(_bits(ds.y), _bits(ref.y))
    np.testing.assert_array_equal(ds.indptr, ref.indptr)     # the non-zeros are numbered as if contiguous
    np.testing.assert_array_equal(ds.labels, ref.labels)
    np.testing.assert_array_equal(ds.label_counts, ref.label_counts)
    # every row found through the segment table, as a kernel finds it
    indptr, file_ix, file_val = ds.kernel_arrays()
    seg, shift = ds.segs
    for i in range(ds.n_rows):
        a, b = indptr[i], indptr[i + 1]
        s = seg[i]
        np.testing.assert_array_equal(file_ix[shift[2 * s] + a:shift[2 * s] + b], ref.indices[a:b])
        np.testing.assert_array_equal(_bits(file_val[shift[2 * s + 1] + a:shift[2 * s + 1] + b]),
                                      _bits(ref.values[a:b]))
    assert not ds.materialized
    c = ds.contiguous()
    assert ds.materialized and ds.contiguous() is c and type(c) is CSRDataset
    np.testing.assert_array_equal(ds.indices, ref.indices)
    np.testing.assert_array_equal(_bits(ds.values), _bits(ref.values))


def test_blocks_slices_and_copies(mapped):
    ds, ref = mapped(seed=2, block_rows=10)
    # slices inside one block are views into the map; across blocks, copies
    inside = ds.slice(12, 19)
    assert not inside.values.flags.owndata and not inside.values.flags.writeable
    across = ds.slice(5, 37)
    assert across.values.flags.writeable
    for got, (a, b) in ((inside, (12, 19)), (across, (5, 37)), (ds.slice(40, 40), (40, 40))):
        want = ref.slice(a, b)
        np.testing.assert_array_equal(got.indptr, want.indptr)
        np.testing.assert_array_equal(got.indices, want.indices)
        np.testing.assert_array_equal(_bits(got.values), _bits(want.values))
        np.testing.assert_array_equal(_bits(got.y), _bits(want.y))
    rows = np.array([299, 0, 17, 17, 150, 3], np.int64)
    got, want = ds.take_rows(rows), ref.take_rows(rows)
    for name in ("indptr", "indices", "values", "y"):
        np.testing.assert_array_equal(getattr(got, name), getattr(want, name))
    with pytest.raises(IndexError):
        ds.take_rows(np.array([300]))
    # iter_blocks: the file's blocks (views), re-cut on request, first_row set
    for kw in ({}, {"max_rows": 4}, {"max_bytes": 200}):
        pieces = list(ds.iter_blocks(**kw))
        assert [p.first_row for p in pieces] == np.cumsum([0] + [p.n_rows for p in pieces[:-1]]).tolist()
        np.testing.assert_array_equal(np.concatenate([p.indices for p in pieces]), ref.indices)
    assert len(list(ds.iter_blocks())) == ds.n_blocks
    assert not ds.materialized
    C = ds.to_csr()                      # scipy needs contiguous arrays: this one copies
    assert (C != ref.to_csr()).nnz == 0


def test_kernels_agree_on_segmented_and_contiguous_views(mapped):
    ds, ref = mapped(seed=3, n_rows=250, block_rows=13)
    rng = np.random.default_rng(0)
    n, d = ds.n_rows, ds.n_features
    rows = rng.permutation(n)[:180].astype(np.int64)
    assert ds.row_view().segmented and not ref.row_view().segmented
    for bias in (-1.0, 1.5):
        w = rng.standard_normal(d + 1)

        def args(v):
            return (v.row_view(bias), rows)
        out_a, out_b = np.empty(rows.size), np.empty(rows.size)
        K.sq_norms(*args(ds), out_a)
        K.sq_norms(*args(ref), out_b)
        np.testing.assert_array_equal(out_a, out_b)
        K.xv(*args(ds), w, out_a)
        K.xv(*args(ref), w, out_b)
        np.testing.assert_array_equal(out_a, out_b)
        I = np.arange(0, rows.size, 2, dtype=np.int32)
        coef = rng.standard_normal(I.size)
        g_a, g_b = np.empty(d + 1), np.empty(d + 1)
        K.sub_xtv(*args(ds), I, coef, g_a)
        K.sub_xtv(*args(ref), I, coef, g_b)
        np.testing.assert_array_equal(g_a, g_b)
        C = rng.uniform(0.5, 2.0, rows.size)
        K.l2svc_hv(*args(ds), I, C, w, g_a)
        K.l2svc_hv(*args(ref), I, C, w, g_b)
        np.testing.assert_array_equal(g_a, g_b)
        g_a[:] = g_b[:] = 1.0
        K.l2svc_diag(*args(ds), I, C, g_a)
        K.l2svc_diag(*args(ref), I, C, g_b)
        np.testing.assert_array_equal(g_a, g_b)
        y = np.where(ref.y[rows] > 0, 1, -1).astype(np.int8)
        alpha = rng.uniform(0, 1, rows.size)
        K.dcd_init_w(*args(ds), y, alpha, g_a)
        K.dcd_init_w(*args(ref), y, alpha, g_b)
        np.testing.assert_array_equal(g_a, g_b)
        assert K.dcd_violation(*args(ds), y, alpha, w, 1.0, 2.0, True) == \
            K.dcd_violation(*args(ref), y, alpha, w, 1.0, 2.0, True)
        # one epoch from the same state and RNG: same alpha, w and shrinking
        res = []
        for v in (ds, ref):
            a, ww, idx = alpha.copy(), g_a.copy(), np.arange(rows.size, dtype=np.int32)
            xn = np.empty(rows.size)
            K.sq_norms(*args(v), xn)
            out = K.dcd_epoch(*args(v), y, a, ww, xn, idx, rows.size, 0.5, -0.5, 1.0, 2.0, True,
                              RNG.rng_state(7))
            res.append((out, a, ww, idx))
        assert res[0][0] == res[1][0]
        for x, z in zip(res[0][1:], res[1][1:]):
            np.testing.assert_array_equal(x, z)
    W = rng.standard_normal((d - 5 + 1, 3))          # a model with fewer features than the data
    dec_a, dec_b = np.empty((n, 3)), np.empty((n, 3))
    K.decision_values(ds.row_view(), W, d - 5, 1.0, dec_a)
    K.decision_values(ref.row_view(), W, d - 5, 1.0, dec_b)
    np.testing.assert_array_equal(dec_a, dec_b)
    np.testing.assert_array_equal(R.row_sq_norms(ds.row_view(1.0)), R.row_sq_norms(ref.row_view(1.0)))
    assert R.max_sq_norm(ds.row_view()) == R.max_sq_norm(ref.row_view())
    assert not ds.materialized
    with pytest.raises(ValueError, match="segment table"):
        Rows(*ds.kernel_arrays(), d, bias, (ds.segs[0][:-1], ds.segs[1]))


@pytest.mark.filterwarnings("ignore:reaching max number of iterations")
@pytest.mark.parametrize("solver", [1, 2, 3])
def test_training_and_prediction_read_the_map_in_place(mapped, solver):
    ds, ref = mapped(seed=4, n_rows=400, block_rows=23, labels=(-1.0, 1.0, 2.0))
    a = llsvm.train(ds, solver=solver, C=0.5, bias=1.0)
    b = llsvm.train(ref, solver=solver, C=0.5, bias=1.0)
    np.testing.assert_array_equal(a.W, b.W)
    np.testing.assert_array_equal(a.decision_function(ds), b.decision_function(ref))
    np.testing.assert_array_equal(llsvm.cross_validation(ds, 3, solver=solver, seed=5),
                                  llsvm.cross_validation(ref, 3, solver=solver, seed=5))
    assert not ds.materialized


def test_find_parameter_C_and_hashing_on_the_map(mapped):
    ds, ref = mapped(seed=5, n_rows=200, block_rows=9)
    assert llsvm.find_parameter_C(ds, 3, solver=2, seed=1) == llsvm.find_parameter_C(ref, 3, solver=2, seed=1)
    assert not ds.materialized
    from llsvm.hashing import hash_dataset
    h_a, h_b = hash_dataset(ds, 6), hash_dataset(ref, 6)
    for name in ("indptr", "indices", "values", "y"):
        np.testing.assert_array_equal(getattr(h_a, name), getattr(h_b, name))
    assert not ds.materialized


@pytest.mark.filterwarnings("ignore:reaching max number of iterations")
def test_out_of_core_solvers_read_the_map_in_place(mapped):
    """-s llsvm, streamsvm and bm given a loaded multi-block file read it through its row view (never its
    contiguous copy); llsvm and streamsvm (one thread) do not depend on how the rows come in blocks."""
    ds, ref = mapped(seed=7, n_rows=300, block_rows=23)
    for solver in ("llsvm", "streamsvm", "bm"):
        a = llsvm.train(ds, solver=solver, C=1.0, bias=1.0, threads=1)
        assert not ds.materialized, solver
        if solver != "bm":       # bm's blocks are the file's: another run than over one in-memory block
            np.testing.assert_array_equal(a.W, llsvm.train(ref, solver=solver, C=1.0, bias=1.0, threads=1).W)


def test_cli_train_and_predict_on_a_multi_block_file(tmp_path, mapped):
    from click.testing import CliRunner

    from llsvm.cli.predict import main as predict_main
    from llsvm.cli.train import main as train_main
    ds, ref = mapped(seed=6, n_rows=300, block_rows=11)
    txt = tmp_path / "d6.txt"
    runner = CliRunner()
    for src, tag in ((tmp_path / "d6.bin", "bin"), (txt, "txt")):
        r = runner.invoke(train_main, ["-s", "3", "-B", "1", "-q", str(src), str(tmp_path / f"{tag}.model")])
        assert r.exit_code == 0, r.output
        r = runner.invoke(predict_main, [str(src), str(tmp_path / f"{tag}.model"), str(tmp_path / f"{tag}.out")])
        assert r.exit_code == 0, r.output
    assert (tmp_path / "bin.model").read_bytes() == (tmp_path / "txt.model").read_bytes()
    assert (tmp_path / "bin.out").read_bytes() == (tmp_path / "txt.out").read_bytes()


def test_a_corrupt_block_fails_the_mapped_load_and_leaves_no_view(tmp_path, mapped):
    ds, ref = mapped(seed=7, block_rows=20)
    path = tmp_path / "d7.bin"
    raw = bytearray(path.read_bytes())
    # flip one bit of the first index in the last block (20 rows: after 20 labels and 21 offsets), whose CRC
    # then no longer matches
    with BinaryDataset(path) as b:
        off = int(b.block_offsets[-1])
        assert int(b.block_rows[-1]) == 20
    raw[off + 48 + 8 * 20 + 8 * 21 + 1] ^= 0x10
    bad = tmp_path / "bad.bin"
    bad.write_bytes(bytes(raw))
    with BinaryDataset(bad) as b:
        with pytest.raises(llsvm.DataFormatError, match=f"checksum mismatch in block {b.n_blocks - 1}"):
            b.load()
        assert b._view is None and b._mmap is None
        with pytest.raises(llsvm.DataFormatError):
            b.load(threads=1)
    # the same flip with a matching CRC is caught by the structure check, before any kernel reads the rows
    payload = off + 48
    psize = struct.unpack_from("<Q", raw, off + 32)[0]
    struct.pack_into("<I", raw, off + 40, zlib.crc32(bytes(raw[payload:payload + psize])))
    bad.write_bytes(bytes(raw))
    with BinaryDataset(bad) as b:
        with pytest.raises(llsvm.DataFormatError, match="corrupt block"):
            b.load()


def _check_reference(indptr, indices, n_features):
    """check_csr's contract, row by row in order, in plain Python."""
    n, nnz = len(indptr) - 1, len(indices)
    if n < 0 or indptr[0] != 0 or indptr[-1] != nnz:
        return R.CSR_OFFSETS, 0
    for i in range(n):
        a, b = indptr[i], indptr[i + 1]
        if b < a or b > nnz:
            return R.CSR_OFFSETS, i
        prev = -1
        for k in range(a, b):
            if indices[k] < 0 or indices[k] >= n_features:
                return R.CSR_RANGE, i
            if indices[k] <= prev:
                return R.CSR_ORDER, i
            prev = indices[k]
    return R.CSR_OK, -1


@pytest.mark.parametrize("seed", range(40))
def test_check_csr_matches_a_row_by_row_reference(seed):
    rng = np.random.default_rng(seed)
    # long rows too, so that groups of rows (about 64K non-zeros each) end inside the data
    n = int(rng.integers(1, 60))
    lengths = rng.integers(0, 5000 if seed % 4 == 0 else 40, n)
    lengths[rng.random(n) < 0.2] = 0
    n_features = int(lengths.max()) * 2 + 5
    indices = np.concatenate([np.sort(rng.choice(n_features, m, replace=False)) for m in lengths]
                             ).astype(np.int32) if lengths.sum() else np.empty(0, np.int32)
    indptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    if seed % 5:
        kind = seed % 5
        if indices.size:
            k = int(rng.integers(indices.size))
            if kind == 1:
                indices[k] = n_features + int(rng.integers(0, 3))
            elif kind == 2:
                indices[k] = -1 - int(rng.integers(0, 3))
            elif kind == 3 and k > 0:
                indices[k] = indices[k - 1]
            elif kind == 4:
                indices[k] = indices[max(k - 2, 0)]
        if kind == 4 and n > 2:
            j = int(rng.integers(1, n))
            indptr[j] = indptr[j + 1] + 1 if rng.random() < 0.5 else indptr[j]
    want = _check_reference(indptr.tolist(), indices.tolist(), n_features)
    assert R.check_csr(indptr, indices, n_features) == want


def test_check_csr_finds_a_problem_in_a_later_group():
    # 3 rows of 40,000 non-zeros: rows 0-1 form the first group; row 2 (the next group) is out of order
    row = np.arange(0, 80000, 2, dtype=np.int32)
    indices = np.concatenate([row, row, row])
    indptr = np.array([0, 40000, 80000, 120000], np.int64)
    assert R.check_csr(indptr, indices, 80000) == (R.CSR_OK, -1)
    indices[100000] = indices[99999]
    assert R.check_csr(indptr, indices, 80000) == (R.CSR_ORDER, 2)
    indices[100000] = indices[99999] + 1
    indices[-1] = 80000
    assert R.check_csr(indptr, indices, 80000) == (R.CSR_RANGE, 2)


def test_writer_survives_partial_writev(tmp_path, mapped, monkeypatch):
    ds, ref = mapped(seed=8, block_rows=50)
    want = (tmp_path / "d8.bin").read_bytes()
    real = os.writev

    def short(fd, buffers):            # the kernel may write less than asked: at most 5 bytes here
        first = bytes(memoryview(buffers[0]).cast("B")[:5])
        return real(fd, [first])
    monkeypatch.setattr(os, "writev", short)
    out = tmp_path / "short.bin"
    llsvm.write_binary(ref, out, block_rows=50)
    assert out.read_bytes() == want


def test_writer_writes_whole_2mb_ranges(tmp_path, monkeypatch):
    """Every gathered write but the last ends on a 2 MB boundary (so each 2 MB of the file is one page-cache
    folio), nothing the writer keeps back outlives the caller's arrays, and the file reads back exactly."""
    from llsvm.binfmt import WRITE_ALIGN
    rng = np.random.default_rng(3)
    n, per_row = 100000, 12          # about 16 MB
    indices = np.tile(np.arange(0, 2 * per_row, 2, dtype=np.int32), n)
    values = rng.standard_normal(n * per_row)
    y = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    indptr = np.arange(0, n * per_row + 1, per_row, dtype=np.int64)
    ends = []
    real = os.writev

    def recording(fd, buffers):
        done = real(fd, buffers)
        ends.append(os.lseek(fd, 0, os.SEEK_CUR))
        return done
    monkeypatch.setattr(os, "writev", recording)
    out = tmp_path / "w.bin"
    with llsvm.BinaryWriter(out, block_rows=977) as w:
        for a in range(0, n, 5000):        # the caller reuses its buffers between calls
            b = min(a + 5000, n)
            piece = values[indptr[a]:indptr[b]].copy()
            w.write(y[a:b], indptr[a:b + 1] - indptr[a], indices[indptr[a]:indptr[b]], piece, n_features=2 * per_row)
            piece[:] = np.nan
    assert len(ends) > 3 and all(e % WRITE_ALIGN == 0 for e in ends[:-1])
    back = llsvm.read_dataset(out)
    np.testing.assert_array_equal(back.indptr, indptr)
    np.testing.assert_array_equal(back.indices, indices)
    np.testing.assert_array_equal(back.values, values)
