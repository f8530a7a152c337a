"""Row weights (issue 46, docs/weights.md) in the binary format (version 2: a weight column per block) and in the
out-of-core solvers (-s llsvm, streamsvm, bm): C_i = C x class weight x W_i in their dual box, their certificates
(primal, dual, gap, largest violation) those of the weighted problem.

References: the weighted problem solved in memory by -s 3 (checked against scikit-learn in tests/test_weights.py)
reaches the same optimum, within the certified gaps; the primal each certificate reports is recomputed here from
the model (conftest.linear_primal with sample_weight), and the returned alpha lie in the weighted box and give w;
integer weights are the rows repeated that many times, rows of weight 0 are no rows, all weights 1 are no weights
(bit for bit); a weighted binary file trains every in-memory solver exactly as its text with -W."""
import re
import struct
import warnings
import zlib

import numpy as np
import pytest
import scipy.sparse as sp
from click.testing import CliRunner
from conftest import assert_exit, linear_primal

import llsvm
import llsvm.sklearn as S
from llsvm.binfmt import BinaryDataset
from llsvm.cli.convert import main as convert_main
from llsvm.cli.train import main as train_main
from llsvm.dataset import CSRDataset
from llsvm.options import LLSVMOptions, StreamOptions
from reference.files import libsvm_text

OOC = ("llsvm", "streamsvm", "bm")
IN_MEMORY = (0, 1, 2, 3, 5, 6, 7, 11, 12, 13)


def _data(seed=0, n=300, d=10, classes=2):
    """Sparse rows in [-1, 1] with label noise (a problem with free and bounded alpha)."""
    rng = np.random.RandomState(seed)
    X = rng.uniform(-1, 1, (n, d)) * (rng.rand(n, d) < 0.6)
    X[:, 0] = np.where(X[:, 0] == 0, 0.5, X[:, 0])           # no empty row
    score = X @ rng.randn(d) + 0.4 * rng.randn(n)
    if classes == 2:
        y = np.where(score > 0, 1.0, -1.0)
    else:
        y = 1.0 + np.digitize(score, np.quantile(score, [1 / 3, 2 / 3]))
    return CSRDataset.from_csr(sp.csr_matrix(X), y)


def _weights(n, seed=1, zeros=4, integer=False):
    rng = np.random.RandomState(seed)
    w = rng.randint(0, 4, n).astype(float) if integer else rng.uniform(0.0, 3.0, n)
    w[rng.choice(n, zeros, replace=False)] = 0.0
    return w


def _options(solver, **kw):
    return LLSVMOptions(**kw) if solver == "llsvm" else StreamOptions(**kw)


def _fit(data, solver, eps=1e-3, C=1.0, **opt):
    with warnings.catch_warnings():
        warnings.simplefilter("error", llsvm.ConvergenceWarning)
        return llsvm.train(data, solver=solver, C=C, eps=eps, bias=1.0, threads=1, max_iter=2000,
                           options=_options(solver, **opt))


def _signs(model, y, k=0):
    """y as +1 / -1 in problem k of the model (LIBLINEAR's order: the first label of a 2-class model is +1)."""
    return np.where(y == model.label[k], 1.0, -1.0)


def _primal(ds, model, weights, k=0, C=1.0):
    Xb = sp.hstack([ds.to_csr(), np.ones((ds.n_rows, 1))]).tocsr()
    w = model.W[:, k] if model.W.ndim > 1 else model.W
    return linear_primal(Xb, _signs(model, ds.y, k), w, C, "hinge", sample_weight=weights)


def _reference(ds):
    """The weighted -s 3 optimum in memory: (primal, dual) per one-vs-rest problem."""
    ref = llsvm.train(ds, solver=3, C=1.0, eps=1e-7, bias=1.0, max_iter=100000)
    return [(r.primal, r.dual) for r in ref.meta["results"]]


@pytest.mark.parametrize("classes", [2, 3])
@pytest.mark.parametrize("solver", OOC)
def test_weighted_optimum_and_certificate(solver, classes):
    """The out-of-core solvers certify the weighted problem: the primal they report is the weighted primal of the
    returned w, alpha lie in the weighted box [0, C W_i] (rows of weight 0 at 0) and give w, and the optimum is the
    in-memory -s 3's, within the two certified gaps (which the unweighted C would miss by far)."""
    ds = _data(classes=classes)
    w = _weights(ds.n_rows)
    wd = ds.with_weights(w)
    m = _fit(wd, solver, return_alpha=True)
    refs = _reference(wd)
    Xb = sp.hstack([ds.to_csr(), np.ones((ds.n_rows, 1))]).tocsr()
    for k, r in enumerate(m.meta["results"]):
        assert r.converged and r.max_violation <= 1e-3
        P = _primal(ds, m, w, k)
        assert r.primal == pytest.approx(P, rel=1e-10)
        assert r.primal - r.dual == pytest.approx(r.gap, abs=1e-9 * abs(P))
        t = _signs(m, ds.y, k)
        assert (r.alpha >= 0).all() and (r.alpha <= w * 1.0 * (1 + 1e-12)).all()
        assert (r.alpha[w == 0] == 0).all()
        np.testing.assert_allclose(Xb.T @ (r.alpha * t), r.w, atol=1e-9 * max(1.0, np.abs(r.w).max()))
        assert r.dual == pytest.approx(r.alpha.sum() - 0.5 * r.w @ r.w, rel=1e-9)
        P_ref, D_ref = refs[k]
        assert abs(P - P_ref) <= r.gap + (P_ref - D_ref) + 1e-9 * abs(P)
        assert r.dual <= P_ref + 1e-9 * abs(P) and D_ref <= P + 1e-9 * abs(P)
        # the unweighted problem's optimum is another one: the certificate could not pass for it
        assert abs(_primal(ds, m, None, k) - P) > 10 * (r.gap + P_ref - D_ref)


@pytest.mark.parametrize("solver", OOC)
def test_weighted_rows_streamed_under_a_budget(solver):
    """Under a budget smaller than the rows they work on (-s llsvm's active set streamed in several blocks from
    its files, which keep the weight column; bm's blocks; streamsvm's cache), the weighted certificate holds and
    the optimum is the unbounded run's, within the two gaps."""
    ds = _data(seed=15, n=24000, d=40)
    w = _weights(ds.n_rows, seed=16, zeros=100)
    wd = ds.with_weights(w)
    a = _fit(wd, solver, eps=0.1, return_alpha=True, memory=1 << 20)
    b = _fit(wd, solver, eps=0.1).meta["results"][0]
    r = a.meta["results"][0]
    if solver == "llsvm":
        assert max(r.extra["blocks"]) > 1
    assert r.primal == pytest.approx(_primal(ds, a, w), rel=1e-10)
    assert (r.alpha >= 0).all() and (r.alpha <= w * (1 + 1e-12)).all()
    assert abs(r.primal - b.primal) <= r.gap + b.gap + 1e-9 * abs(r.primal)


def test_weighted_lazy_active_set_file(monkeypatch):
    """-s llsvm at 0.6M: its active-set file, which keeps the weight column, is streamed without a rewrite (the
    alpha of its rows held in memory), rewritten without its dead rows and its live rows gathered (issue 49): the
    alpha returned lie in the weighted box and give w, and the weighted certificate holds."""
    from test_llsvm_recheck import lazy_ways
    ds = _data(seed=15, n=24000, d=40)
    w = _weights(ds.n_rows, seed=16, zeros=100)
    ways = lazy_ways(monkeypatch)
    m = _fit(ds.with_weights(w), "llsvm", eps=0.1, return_alpha=True, memory=int(0.6 * (1 << 20)))
    r = m.meta["results"][0]
    assert ways == {"rewrite without the dead", "gathered"} and max(r.extra["blocks"]) > 1
    assert r.converged and r.max_violation <= 0.1
    assert r.primal == pytest.approx(_primal(ds, m, w), rel=1e-10)
    assert (r.alpha >= 0).all() and (r.alpha <= w * (1 + 1e-12)).all() and (r.alpha[w == 0] == 0).all()
    Xb = sp.hstack([ds.to_csr(), np.ones((ds.n_rows, 1))]).tocsr()
    np.testing.assert_allclose(Xb.T @ (r.alpha * _signs(m, ds.y)), r.w, atol=1e-9 * max(1.0, np.abs(r.w).max()))


@pytest.mark.parametrize("solver", OOC)
def test_all_ones_are_no_weights(solver):
    """Every weight 1: the unweighted model, bit for bit (row_cost returns the class's C itself)."""
    ds = _data(seed=2)
    a = _fit(ds, solver)
    b = _fit(ds.with_weights(np.ones(ds.n_rows)), solver)
    assert np.array_equal(a.W, b.W)
    assert [r.n_iter for r in a.meta["results"]] == [r.n_iter for r in b.meta["results"]]


@pytest.mark.parametrize("solver", OOC)
def test_integer_weights_are_repeated_rows(solver):
    """Integer weights (0 to 3) against each row repeated that many times: the same problem, so the same optimum
    within the two certified gaps; each model's primal on the weighted problem is its primal on the repeated
    rows."""
    ds = _data(seed=3, n=200)
    w = _weights(ds.n_rows, seed=4, integer=True)
    rep = ds.take_rows(np.repeat(np.arange(ds.n_rows), w.astype(int)))
    a = _fit(ds.with_weights(w), solver).meta["results"][0]
    b = _fit(rep, solver).meta["results"][0]
    assert abs(a.primal - b.primal) <= a.gap + b.gap + 1e-9 * abs(a.primal)
    assert a.dual <= b.primal + 1e-9 * abs(a.primal) and b.dual <= a.primal + 1e-9 * abs(a.primal)


@pytest.mark.parametrize("solver", OOC)
def test_zero_weight_rows_have_no_effect(solver):
    """Rows of weight 0 (C_i = 0) stay at alpha 0 and are no part of the problem: the optimum of the other rows."""
    ds = _data(seed=5)
    w = _weights(ds.n_rows, seed=6, zeros=60)
    keep = np.flatnonzero(w > 0)
    a = _fit(ds.with_weights(w), solver, return_alpha=True).meta["results"][0]
    b = _fit(ds.take_rows(keep).with_weights(w[keep]), solver).meta["results"][0]
    assert (a.alpha[w == 0] == 0).all()
    assert abs(a.primal - b.primal) <= a.gap + b.gap + 1e-9 * abs(a.primal)


def _files(tmp_path, ds, w):
    text = tmp_path / "d.txt"
    text.write_text(libsvm_text(ds.to_csr(), ds.y))
    wf = tmp_path / "w.txt"
    wf.write_text("".join(f"{v!r}\n" for v in w.tolist()))
    return text, wf


@pytest.mark.parametrize("solver", OOC)
def test_sources_give_one_model(tmp_path, solver):
    """The weights travel with the rows whatever the input: a weighted binary file (version 2, several blocks),
    text with -W and rows in memory give one model, byte for byte (one thread), with --memory too (the weight
    column counts in the budget)."""
    ds = _data(seed=7, classes=3)
    w = _weights(ds.n_rows, seed=8)
    text, wf = _files(tmp_path, ds, w)
    res = CliRunner().invoke(convert_main, ["-q", "-W", str(wf), "--block-rows", "37", str(text),
                                            str(tmp_path / "w.bin")])
    assert_exit(res, 0)
    with BinaryDataset(tmp_path / "w.bin") as f:
        assert f.version == 2 and f.has_weights and f.n_blocks > 1
    lib = _fit(ds.with_weights(w), solver)
    lib.save(tmp_path / "lib")
    for args in (["-W", wf, text], [tmp_path / "w.bin"], ["--memory", "64M", "-W", wf, text],
                 ["--memory", "64M", tmp_path / "w.bin"]):
        res = CliRunner().invoke(train_main, [str(a) for a in ["-q", "-s", solver, "-e", "0.001", "-B", "1",
                                                               "--threads", "1", "--max-iter", "2000", *args,
                                                               tmp_path / "m"]])
        assert_exit(res, 0)
        assert (tmp_path / "m").read_bytes() == (tmp_path / "lib").read_bytes(), args


def _need(message):
    """The bytes of the size a --memory refusal names after "need" (memory.format_size's units)."""
    num, unit = re.search(r"need ([0-9.]+) (B|KiB|MiB|GiB)", message).groups()
    return float(num) * {"B": 1, "KiB": 1024, "MiB": 1 << 20, "GiB": 1 << 30}[unit]


@pytest.mark.parametrize("solver", OOC)
def test_memory_budget_counts_the_weights(tmp_path, solver):
    """-W's weights are held in memory (8 bytes a row): they count in --memory's budget, whose refusal names 8
    bytes a row more with them."""
    n = 100000
    X = sp.csr_matrix(np.c_[np.linspace(-1, 1, n), np.ones(n)])
    llsvm.write_binary(CSRDataset.from_csr(X, np.where(np.arange(n) % 3, 1.0, -1.0)), tmp_path / "d.bin")
    (tmp_path / "w.txt").write_text("1\n" * n)

    def need(extra):
        res = CliRunner().invoke(train_main, ["-q", "-s", solver, "--memory", "256K", *extra, str(tmp_path / "d.bin"),
                                              str(tmp_path / "m")])
        assert_exit(res, 1)
        out = res.stdout + res.stderr
        assert "--memory 256 KiB is too small" in out, out
        return _need(out)

    assert need(["-W", str(tmp_path / "w.txt")]) - need([]) == pytest.approx(8 * n, rel=0.1)


@pytest.mark.parametrize("text, where", [
    ("1\n" * 11, "w:12:1: 11 weights for more training rows"),
    ("1\n" * 13, "w:13:1: 13 weights for 12 training rows"),
    ("1\n1\nabc\n" + "1\n" * 9, "w:3:1: weight 'abc' is not a number"),
    ("1\n" * 3 + "-1\n" + "1\n" * 8, "w:4:1: weight '-1' must be a finite number >= 0"),
])
@pytest.mark.parametrize("solver", OOC)
def test_weight_file_errors_name_file_and_line(tmp_path, solver, text, where):
    """-W's errors while text streams by: the file and line, as llsvm-train's in memory (the rows not counted
    yet: a short file is "for more training rows")."""
    data = tmp_path / "small.txt"
    data.write_text("".join(f"{1 if i % 3 else -1} 1:{(i % 7) / 7:.3f} 2:{(i % 5) / 5:.3f}\n" for i in range(12)))
    (tmp_path / "w").write_text(text)
    res = CliRunner().invoke(train_main, ["-q", "-s", solver, "-W", str(tmp_path / "w"), str(data),
                                          str(tmp_path / "m")])
    assert_exit(res, 1)
    out = (res.stdout + res.stderr).replace(str(tmp_path) + "/", "").replace(": line ", ":").replace(", column ", ":")
    assert where in out, out
    assert not (tmp_path / "m").exists()


@pytest.mark.parametrize("solver", ("3",) + OOC)
def test_weight_file_with_a_weighted_binary_file_is_refused(tmp_path, solver):
    """A version 2 file carries its weights: -W with it is refused (one source of weights), naming both."""
    ds = _data(n=40)
    text, wf = _files(tmp_path, ds, np.ones(40))
    assert_exit(CliRunner().invoke(convert_main, ["-q", "-W", str(wf), str(text), str(tmp_path / "w.bin")]), 0)
    res = CliRunner().invoke(train_main, ["-q", "-s", solver, "-W", str(wf), str(tmp_path / "w.bin"),
                                          str(tmp_path / "m")])
    assert_exit(res, 1)
    assert "carries its rows' weights already" in res.stdout + res.stderr
    assert not (tmp_path / "m").exists()


@pytest.mark.parametrize("solver", IN_MEMORY)
@pytest.mark.parametrize("blocks", [None, 23])
def test_weighted_binary_trains_as_text_with_weight_file(tmp_path, solver, blocks):
    """Every in-memory weighted solver trains from a weighted binary file (one block, or several: the mapped
    dataset gives its weight column to the row view) exactly as from its text with -W: model files byte for
    byte."""
    ds = _data(seed=11, n=120)
    w = _weights(ds.n_rows, seed=12)
    text, wf = _files(tmp_path, ds, w)
    conv = ["-q", "-W", str(wf)] + (["--block-rows", str(blocks)] if blocks else [])
    assert_exit(CliRunner().invoke(convert_main, conv + [str(text), str(tmp_path / "w.bin")]), 0)
    for args, out in ((["-W", wf, text], "a"), ([tmp_path / "w.bin"], "b")):
        res = CliRunner().invoke(train_main, [str(a) for a in ["-q", "-s", solver, *args, tmp_path / out]])
        assert_exit(res, 0)
    assert (tmp_path / "a").read_bytes() == (tmp_path / "b").read_bytes()
    with BinaryDataset(tmp_path / "w.bin") as f:
        v = f.load()
        assert np.array_equal(v.weights, w)
        assert type(v).__name__ == ("MappedDataset" if blocks else "CSRDataset")


@pytest.mark.parametrize("solver", OOC)
def test_out_of_core_svc_takes_sample_weight(solver):
    """OutOfCoreSVC.fit(X, y, sample_weight): the library's model of the weighted rows."""
    ds = _data(seed=13)
    w = _weights(ds.n_rows, seed=14)
    X, y = ds.to_csr(), ds.y
    est = S.OutOfCoreSVC(solver=solver, tol=1e-3, n_jobs=1, max_iter=2000).fit(X, y, sample_weight=w)
    lib = llsvm.train(ds.with_weights(w), params=est._fit_params)
    np.testing.assert_array_equal(est.model_.W, lib.W)
    unweighted = S.OutOfCoreSVC(solver=solver, tol=1e-3, n_jobs=1, max_iter=2000).fit(X, y)
    assert not np.array_equal(unweighted.model_.W, lib.W)


# -- the binary format, version 2 ------------------------------------------------------------------------------

def _handmade(y, indptr, indices, values, n_features, weights=None):
    """A one-block binary file built byte by byte from docs/formats.md section 2 (not from llsvm/binfmt.py):
    version 1, or version 2 with flag 32 and the weight column right after the labels."""
    n, nnz = len(y), len(indices)

    def pad8(b):
        return b + b"\0" * (-len(b) % 8)
    payload = np.asarray(y, "<f8").tobytes() + (np.asarray(weights, "<f8").tobytes() if weights is not None else b"")
    payload += np.asarray(indptr, "<i8").tobytes() + pad8(np.asarray(indices, "<i4").tobytes())
    payload += pad8(np.asarray(values, "<f8").tobytes())
    block = struct.pack("<8sQQQQII", b"LLSVMBLK", n, nnz, 0, len(payload), zlib.crc32(payload), 0) + payload
    labels, first = np.unique(y, return_index=True)
    order = np.argsort(first, kind="stable")
    labs = labels[order]
    counts = np.array([int((np.asarray(y) == v).sum()) for v in labs], "<u8")
    footer = b"LLSVMFTR" + np.asarray(labs, "<f8").tobytes() + counts.tobytes() + \
        np.array([128, n, nnz], "<u8").tobytes()
    footer += struct.pack("<II", zlib.crc32(footer), 0)
    sq = max(float(np.sum(np.square(values[indptr[i]:indptr[i + 1]]))) for i in range(n))
    head = struct.pack("<8sIIQQQQQQdQQ", b"LLSVMBIN", 1 if weights is None else 2, 0 if weights is None else 32, n,
                       n_features, nnz, 1, 128 + len(block), len(footer), sq, 0, len(labs)).ljust(124, b"\0")
    head += struct.pack("<I", zlib.crc32(head))
    return head + block + footer


TINY = dict(y=[1.0, -1.0, 1.0], indptr=[0, 2, 3, 5], indices=[0, 2, 1, 0, 2], values=[0.5, -1.0, 2.0, 0.25, 3.0],
            n_features=3)


def test_files_without_weights_are_version_1_bytes(tmp_path):
    """A file without weights is exactly the version 1 file (the writer and llsvm-convert), which is still read;
    a weighted one is the version 2 file of docs/formats.md (the column after the labels), byte for byte."""
    v1 = _handmade(**TINY)
    ds = CSRDataset(TINY["y"], TINY["indptr"], TINY["indices"], TINY["values"], 3)
    llsvm.write_binary(ds, tmp_path / "a.bin")
    assert (tmp_path / "a.bin").read_bytes() == v1
    (tmp_path / "t.txt").write_text(libsvm_text(ds.to_csr(), ds.y))
    assert_exit(CliRunner().invoke(convert_main, ["-q", str(tmp_path / "t.txt"), str(tmp_path / "c.bin")]), 0)
    assert (tmp_path / "c.bin").read_bytes() == v1
    (tmp_path / "fixture.bin").write_bytes(v1)
    with BinaryDataset(tmp_path / "fixture.bin") as f:
        assert f.version == 1 and not f.has_weights and f.load().weights is None
        assert np.array_equal(f.load().to_csr().toarray(), ds.to_csr().toarray())
    w = [0.5, 0.0, 2.0]
    v2 = _handmade(**TINY, weights=w)
    llsvm.write_binary(ds.with_weights(w), tmp_path / "w.bin")
    assert (tmp_path / "w.bin").read_bytes() == v2
    with BinaryDataset(tmp_path / "w.bin") as f:
        assert f.version == 2 and np.array_equal(f.load().weights, w)
        assert np.array_equal(f.read_block(0).weights, w) and np.array_equal(f.load_blocks(0, 1).weights, w)
