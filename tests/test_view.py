"""The row view as a Python object (cext/_view.pyx): what `Rows` checks, what `with_bias` shares, and the datasets'
`row_view()` that every kernel call goes through."""
import gc

import numpy as np
import pytest

import llsvm
from llsvm._ext import _linear as K
from llsvm._ext import _rowops as R
from llsvm._ext._view import Rows
from llsvm.binfmt import MappedDataset
from llsvm.dataset import CSRDataset

EMPTY = np.empty(0, np.int64)


def small():
    """Three rows over 4 features (one empty): indptr, indices, values."""
    return (np.array([0, 2, 2, 5], np.int64), np.array([0, 3, 0, 1, 2], np.int32),
            np.array([1.0, 2.0, 3.0, -1.0, 0.5]))


def test_rows_describe_their_arrays():
    ip, ix, v = small()
    X = Rows(ip, ix, v, 4)
    assert (X.n_rows, X.n_features, X.bias, X.nnz, X.dtype, X.f32, X.segmented) == \
        (3, 4, -1.0, 5, np.float64, False, False)
    X32 = Rows(ip, ix, v.astype(np.float32), 4, 0.5)
    assert X32.f32 and X32.dtype == np.float32 and X32.bias == 0.5
    assert "n_rows=3" in repr(X32) and "float32" in repr(X32)
    # an empty view
    E = Rows(np.zeros(1, np.int64), np.empty(0, np.int32), np.empty(0), 0)
    assert (E.n_rows, E.nnz) == (0, 0)
    np.testing.assert_array_equal(R.row_sq_norms(E), np.empty(0))


def test_rows_refuse_what_a_kernel_cannot_read():
    ip, ix, v = small()
    with pytest.raises(ValueError, match="float32 or float64"):
        Rows(ip, ix, v.astype(np.int64), 4)
    with pytest.raises(ValueError):
        Rows(ip.astype(np.int32), ix, v, 4)                     # offsets must be int64: never converted
    with pytest.raises(ValueError):
        Rows(ip, np.array([0, 9, 3, 0, 1, 9, 2, 9, 9, 9], np.int32)[::2], v, 4)   # not contiguous: never copied
    with pytest.raises(ValueError, match="n_rows \\+ 1"):
        Rows(np.empty(0, np.int64), ix, v, 4)
    with pytest.raises(ValueError, match="inconsistent"):
        Rows(ip, ix[:4], v, 4)
    with pytest.raises(ValueError, match="inconsistent"):
        Rows(np.array([0, 2, 2, 6], np.int64), ix, v, 4)
    with pytest.raises(ValueError, match="n_features"):
        Rows(ip, ix, v, -1)
    with pytest.raises(ValueError, match="one entry per row"):
        Rows(ip, ix, v, 4, labels=np.ones(2))
    with pytest.raises(ValueError, match="segment table"):
        Rows(ip, ix, v, 4, segs=(np.zeros(2, np.int32), np.zeros(2, np.int64)))
    with pytest.raises(TypeError):
        K.sq_norms(None, EMPTY, np.empty(3))


def test_with_bias_shares_the_arrays_and_keeps_them_alive():
    ip, ix, v = small()
    X = Rows(ip, ix, v, 4)
    B = X.with_bias(2.0, 6)
    assert (B.n_features, B.bias, B.nnz) == (6, 2.0, 5) and (X.n_features, X.bias) == (4, -1.0)
    np.testing.assert_array_equal(R.row_sq_norms(B), R.row_sq_norms(X) + 4.0)
    with pytest.raises(ValueError, match="narrowed"):
        X.with_bias(1.0, 3)
    # the bias weight is w[n_features] of the view: w[6] here
    out = np.empty(3)
    w = np.arange(7, dtype=np.float64)
    K.xv(B, EMPTY, w, out)
    np.testing.assert_array_equal(out, [0 * 1.0 + 3 * 2.0 + 12.0, 12.0, 0 * 3.0 + 1 * -1.0 + 2 * 0.5 + 12.0])
    with pytest.raises(ValueError, match="need 7"):
        K.xv(B, EMPTY, w[:6], out)
    # the view holds the buffers: the arrays outlive every other reference to them (and to the first view)
    del X, ip, ix, v
    gc.collect()
    K.xv(B, EMPTY, w, out)
    np.testing.assert_array_equal(out, [18.0, 12.0, 12.0])


@pytest.mark.parametrize("float32", [False, True])
def test_dataset_row_view(tmp_path, float32):
    ip, ix, v = small()
    ds = CSRDataset([1.0, -1.0, 1.0], ip, ix, v.astype(np.float32) if float32 else v, 4)
    X = ds.row_view()
    assert (X.n_rows, X.n_features, X.bias, X.f32) == (3, 4, -1.0, float32)
    Xb = ds.row_view(1.0, 10)
    assert (Xb.bias, Xb.n_features) == (1.0, 10)
    assert ds._rows is not None and ds.row_view(1.0) is not ds.row_view(1.0)   # made once, seen anew per call
    np.testing.assert_array_equal(R.row_sq_norms(ds.row_view(1.0)), R.row_sq_norms(X) + 1.0)
    # a file of several blocks: a segmented view over the map, the same rows
    path = tmp_path / "s.bin"
    llsvm.write_binary(ds, path, block_rows=1, float32=float32)
    m = llsvm.read_dataset(path)
    assert isinstance(m, MappedDataset)
    M = m.row_view(0.5)
    assert M.segmented and M.f32 == float32 and M.n_rows == 3 and M.nnz == 5
    np.testing.assert_array_equal(R.row_sq_norms(M), R.row_sq_norms(ds.row_view(0.5)))
    ptr, idx, vals = R.take_rows(M, np.array([2, 0], np.int64))
    np.testing.assert_array_equal(ptr, [0, 3, 5])
    np.testing.assert_array_equal(idx, [0, 1, 2, 0, 3])
    np.testing.assert_array_equal(vals, [3.0, -1.0, 0.5, 1.0, 2.0])
    assert vals.dtype == (np.float32 if float32 else np.float64)
    assert not m.materialized


@pytest.mark.parametrize("solver", [3, 1, 7])
@pytest.mark.parametrize("float32", [False, True])
def test_dense_rows_are_read_without_their_indices_bit_for_bit(solver, float32):
    """row_dot and row_axpy read a row that holds every feature (row_is_full) without its indices: the same
    products summed in the same order. Training on rows that hold every feature, once with n_features = d (the
    dense path) and once declared one feature wider (no row is full: the indexed path), gives the same weights
    bit for bit; a few sparse rows mixed in take the indexed path in both."""
    rng = np.random.default_rng(7)
    n, d = 600, 13                       # d not a multiple of 4: the partial sums' tail
    X = rng.standard_normal((n, d))
    X[::50, ::3] = 0.0                   # some rows sparse (their zeros are not stored)
    y = np.where(X[:, 0] + 0.5 * X[:, 1] + 0.3 * rng.standard_normal(n) > 0, 1.0, -1.0)
    mask = X != 0.0
    indptr = np.concatenate([[0], np.cumsum(mask.sum(1))]).astype(np.int64)
    indices = np.nonzero(mask)[1].astype(np.int32)
    values = X[mask].astype(np.float32 if float32 else np.float64)
    full = np.diff(indptr) == d
    assert 0 < (~full).sum() < n
    W = {}
    for width in (d, d + 1):
        ds = CSRDataset(y, indptr, indices, values, width)
        m = llsvm.train(ds, params=llsvm.Params(solver=solver, C=1, bias=1, threads=1))
        W[width] = np.asarray(m.W)
    dense, wide = W[d], W[d + 1]
    assert wide.shape[0] == dense.shape[0] + 1
    np.testing.assert_array_equal(dense[:d].view(np.int64), wide[:d].view(np.int64))
    np.testing.assert_array_equal(dense[d].view(np.int64), wide[d + 1].view(np.int64))      # the bias weight
    assert not wide[d].any()
