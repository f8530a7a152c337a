"""-s smo --ws N (issue 49): the working-set solver of cext/_smo.pyx (_run_ws), an option beside LIBSVM's pair solver.

Its models are certified to svm-train's own stopping rule, not its path: checked here from the definition in NumPy
(the gradient Q a - e rebuilt from the kernel matrix of the data, in the float values the cache holds, and
m(a) - M(a) < eps over every variable of every pair), and against libsvm-official: the same predictions on every
row of the test sets but a few whose decision value is within 0.01 of the boundary (certified to eps, not the
same path), the dual within 1e-6 of its. The gradient update is split over the threads by rows, each
row's sum in the same order, so --threads 2 gives the model of --threads 1 byte for byte. The default (--ws 0) stays
LIBSVM's model byte for byte: tests/test_smo_train.py."""
import numpy as np
import pytest
import scipy.sparse as sp
from click.testing import CliRunner
from libsvm import svmutil

import llsvm
from llsvm.cli.train import main as train_main
from llsvm.dataset import CSRDataset
from llsvm.options import SMOOptions
from llsvm.params import Params

from conftest import assert_exit
from test_smo_train import blobs


def train(X, y, ws, C=1.0, gamma=None, threads=1, eps=1e-3):
    ds = CSRDataset.from_csr(sp.csr_matrix(X), y)
    params = Params(solver="smo", C=C, eps=eps, threads=threads, options=SMOOptions(ws=ws, gamma=gamma))
    return ds, llsvm.train(ds, params=params, say=lambda s: None)


def rbf32(X, gamma):
    """The RBF kernel matrix as the cache holds it: float32 of LIBSVM's double value."""
    sq = (X * X).sum(1)
    d = np.maximum(sq[:, None] + sq[None, :] - 2.0 * X @ X.T, 0.0)
    return np.exp(-gamma * d).astype(np.float32).astype(np.float64)


def assert_predictions_agree(p_ws, p_lib, dec_lib):
    """The same prediction on every row but those libsvm-official's own decision value puts within 0.01 of the
    boundary (two solutions certified to eps, not the same path: rho and the coefficients differ by about eps), at
    most one row in 200."""
    p_ws, p_lib, dec_lib = np.asarray(p_ws), np.asarray(p_lib), np.abs(np.asarray(dec_lib)).min(axis=1)
    differ = p_ws != p_lib
    assert differ.sum() <= len(p_lib) // 200, differ.sum()
    assert np.all(dec_lib[differ] < 0.01), dec_lib[differ]


def violation(K, ys, alpha, C):
    """LIBSVM's m(a) - M(a) of the C-SVC dual at alpha (labels ys in {-1, +1}, box [0, C])."""
    G = ys * (K @ (ys * alpha)) - 1.0
    up = ((ys > 0) & (alpha < C)) | ((ys < 0) & (alpha > 0))
    low = ((ys > 0) & (alpha > 0)) | ((ys < 0) & (alpha < C))
    return np.max(-ys[up] * G[up]) + np.max(ys[low] * G[low])


def pair_alpha(model, l):
    """alpha of the one pair of a two-class model of l rows."""
    alpha = np.zeros(l)
    idx = np.asarray(model.meta["sv_indices"]) - 1
    alpha[idx] = np.abs(np.asarray(model.sv_coef)[0])
    return alpha


@pytest.mark.parametrize("ws,C", [(16, 1.0), (64, 10.0)])
def test_certified_to_libsvms_stopping_rule(ws, C):
    """A binary problem of 1200 rows (the set well below the rows, so many outer steps): m(a) - M(a) < eps from
    the data, and the predictions and dual of libsvm-official's model."""
    X, y = blobs(3, 1200, 6, (1, -1), spread=0.6)
    gamma = 1.0 / 6
    ds, model = train(X, y, ws, C=C)
    res = model.meta["results"][0]
    assert res.converged and res.n_iter > 0
    ys = np.where(y == 1, 1.0, -1.0)
    alpha = pair_alpha(model, len(y))
    K = rbf32(X, gamma)
    assert violation(K, ys, alpha, C) < 1e-3
    assert abs(float(np.dot(ys, alpha))) < 1e-9 * C * len(y)
    rows = [{j + 1: float(v) for j, v in enumerate(r)} for r in X]
    lm = svmutil.svm_train(list(map(float, y)), rows, f"-q -c {C}")
    Xt, yt = blobs(4, 2000, 6, (1, -1), spread=0.6)
    test_rows = [{j + 1: float(v) for j, v in enumerate(r)} for r in Xt]
    p_lib, _, dec = svmutil.svm_predict(list(map(float, yt)), test_rows, lm, "-q")
    dt = CSRDataset.from_csr(sp.csr_matrix(Xt), yt)
    assert_predictions_agree(model.predict(dt), p_lib, dec)
    # both duals within eps of the optimum: their objectives within a few eps of each other
    lib_alpha = np.zeros(len(y))
    lib_alpha[np.asarray(lm.get_sv_indices()) - 1] = np.abs(np.array(lm.get_sv_coef())[:, 0])
    dual = lambda a: a.sum() - 0.5 * (ys * a) @ K @ (ys * a)
    assert abs(dual(alpha) - dual(lib_alpha)) < 1e-6 * abs(dual(lib_alpha))


def test_public_set_predictions_are_svm_trains(shared_plain, tmp_path):
    """svmguide1 (3,089 rows, binary) at -c 10: the predictions of svmguide1.t are libsvm-official's (but
    borderline rows, assert_predictions_agree)."""
    train_path, test_path = shared_plain("svmguide1"), shared_plain("svmguide1.t")
    out = tmp_path / "ws.model"
    r = CliRunner().invoke(train_main, ["-s", "smo", "-q", "-c", "10", "--ws", "128", str(train_path), str(out)])
    assert_exit(r, 0)
    yl, xl = svmutil.svm_read_problem(str(train_path))
    lm = svmutil.svm_train(yl, xl, "-q -c 10")
    yt, xt = svmutil.svm_read_problem(str(test_path))
    p_lib, _, dec = svmutil.svm_predict(yt, xt, lm, "-q")
    p_ws, _, _ = svmutil.svm_predict(yt, xt, svmutil.svm_load_model(str(out)), "-q")
    assert_predictions_agree(p_ws, p_lib, dec)


def test_threads_give_the_same_model(tmp_path):
    """Three classes (three pairs of 800 rows): --threads 2 writes --threads 1's model file byte for byte, and
    it differs from the default's only as a certified solution may (the predictions on the training rows)."""
    X, y = blobs(11, 1200, 5, (2, 1, 3), spread=1.0)
    data = tmp_path / "d.txt"
    data.write_text("".join(f"{int(t)} " + " ".join(f"{j + 1}:{v:.6g}" for j, v in enumerate(r)) + "\n"
                            for t, r in zip(y, X)))
    paths = {}
    for name, args in (("t1", ["--threads", "1"]), ("t2", ["--threads", "2"])):
        paths[name] = tmp_path / f"{name}.model"
        r = CliRunner().invoke(train_main, ["-s", "smo", "-q", "--ws", "32", *args, str(data), str(paths[name])])
        assert_exit(r, 0)
    assert paths["t1"].read_bytes() == paths["t2"].read_bytes()
    yl, xl = svmutil.svm_read_problem(str(data))
    p_lib, _, dec = svmutil.svm_predict(yl, xl, svmutil.svm_train(yl, xl, "-q"), "-q")
    p_ws, _, _ = svmutil.svm_predict(yl, xl, svmutil.svm_load_model(str(paths["t1"])), "-q")
    assert_predictions_agree(p_ws, p_lib, dec)


@pytest.mark.parametrize("value", ["1", "-3"])
def test_refused(tmp_path, value):
    data = tmp_path / "d.txt"
    data.write_text("1 1:1\n-1 1:-1\n")
    r = CliRunner().invoke(train_main, ["-s", "smo", "--ws", value, str(data), str(tmp_path / "m")])
    assert_exit(r, 1)
    assert "--ws must be 0" in r.stderr


@pytest.mark.parametrize("f32", [False, True])
@pytest.mark.parametrize("kernel_type", [0, 1, 2, 3])
def test_block_columns_are_the_caches(kernel_type, f32):
    """KernelCache.block (the set's columns, the missing ones computed as one block over 2 threads) gives the float
    columns get_column gives, bit for bit, cached or not, and leaves them in the cache; two columns of budget (the
    block's columns evict each other) included. Those are the floats of kernel_column's doubles (libm's exp for
    RBF, where the cache's floats come from exp_to_float)."""
    from llsvm._ext import _kernel as KK
    g = np.random.default_rng(5)
    X = g.standard_normal((300, 12))
    X[g.random(X.shape) < 0.5] = 0.0
    ds = CSRDataset.from_csr(sp.csr_matrix(X.astype(np.float32) if f32 else X), np.zeros(300))
    view = ds.row_view()
    params = {"kernel_type": kernel_type, "gamma": 0.1, "coef0": 0.5, "degree": 3}
    sq = KK.kernel_sq_norms(view, params)
    plain = KK.KernelCache(view, None, params, sq, 100.0)
    js = np.array([5, 17, 5 + 100, 299, 0, 42], np.int64)
    want = np.stack([plain.column(int(j)) for j in js])
    exact = np.empty(300)                                   # libm's kernel in double, then the float
    for k, j in enumerate(js):
        KK.kernel_column(view, np.arange(300, dtype=np.int64), int(j), params, sq, exact)
        np.testing.assert_array_equal(want[k], exact.astype(np.float32))
    for mb in (100.0, 0.0):
        cache = KK.KernelCache(view, None, params, sq, mb, 2)
        cache.column(17)                                    # one of them cached first
        np.testing.assert_array_equal(cache.block(js), want)
        np.testing.assert_array_equal(cache.block(js[::-1]), want[::-1])
        assert cache.cached_length(int(js[0])) == 300        # the last one the reversed block computed
