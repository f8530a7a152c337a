"""-s llsvm's default mode: re-check passes after block optimization (issue 14, item 1).

- the kernel `recheck` against the NumPy twin (tests/reference/llsvm_twin.py): every row's projected gradient from
  its status, the largest violation, the hinge losses, and which dropped rows come back;
- the whole driver in memory against the twin's default mode, bit for bit (dropped violators re-enter with their
  alpha, the passes, the certificates);
- a certified run: the largest violation over every row is at most eps, and the reported primal, dual, gap and
  violation are those NumPy computes from the data, w and alpha (in memory, streamed under --memory, multiclass);
- --one-pass is the paper's Algorithm 2 as it was before re-check passes existed: the model files of six runs are
  those of commit fd41c5d, byte for byte;
- the CLI: options, refusals, output lines, --json, the max-passes warning, the budget too small for the state.
"""
import hashlib
import json
import re

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import assert_exit

import llsvm
from llsvm._ext import _llsvm as K
from llsvm._ext._view import Rows
from llsvm.options import LLSVMOptions
from reference import dcd_twin as T
from reference import llsvm_twin as LT
from reference.files import write_text
from test_llsvm import (DESIGN_KEYS, DOT_ORDER, big_problem, dataset, first_label, fit,
                        kernel_problem, make_problem, problem_signs, runner_train)

ZERO, AT_CP, FREE, AT_CN, IN_SET, ACTIVE = K.ZERO, K.AT_CP, K.FREE, K.AT_CN, K.IN_SET, K.ACTIVE


# ---------------------------------------------------------------------------------------------------------------
# 1. the kernel

RECHECK_CASES = {
    # id: (seed, rows, features, density, float32, bias, Cp, Cn)
    "f64-nobias": (1, 300, 40, 0.2, False, -1.0, 1.0, 1.0),
    "f64-bias1-CpCn": (2, 257, 30, 0.3, False, 1.0, 2.0, 0.5),
    "f32-bias0.5": (3, 200, 25, 0.25, True, 0.5, 1.0, 1.0),
    "f64-zero-weight": (4, 150, 20, 0.3, False, 1.0, 0.0, 1.0),
}


@pytest.mark.parametrize("case", RECHECK_CASES.values(), ids=RECHECK_CASES.keys())
def test_recheck_kernel_matches_twin(case):
    """Random w and statuses (alpha 0, C or in between; in the active set or not): the largest |PG|, the C-weighted
    hinge losses and the rows outside the active set that violate (in row order) are the twin's."""
    seed, l, n, density, f32, bias, Cp, Cn = case
    indptr, indices, values, n, y = kernel_problem(seed, l, n, density, f32)
    rows = LT.rows_of(indptr, indices, values)
    g = np.random.default_rng(seed)
    w = g.standard_normal(n + 1) * 0.5
    status = g.integers(0, 4, l).astype(np.uint8)
    status[status == 2] = ACTIVE
    pos = y > 0
    # statuses consistent with the labels: AT_CP only for the positive class, AT_CN only for the negative one
    status[(status == AT_CP) & ~pos] = AT_CN
    status[(status == AT_CN) & pos] = AT_CP
    C = np.where(pos, Cp, Cn)
    alpha = np.where(status == ZERO, 0.0, np.where(status == ACTIVE, 0.5 * C, C))
    alpha[(status == ACTIVE) & (C == 0)] = 0.0
    status[(status == ACTIVE) & (C == 0)] = ZERO
    # some rows at a bound stay in the active set (they never come back: they are in)
    status[(status != ACTIVE) & (g.random(l) < 0.2)] |= IN_SET
    in_set = np.flatnonzero(status & IN_SET)
    cls = np.where(pos, 7, 3).astype(np.int32)
    enter = np.full(l, -1, np.int64)
    m, loss, k = K.recheck(Rows(indptr, indices, values, n, bias), cls, 7, status, w, Cp, Cn, 0.0, enter)
    mt, losst, entert = LT.recheck(rows, y, alpha, w, Cp, Cn, n, bias, dot_order=DOT_ORDER, in_set=in_set)
    assert m == mt and m > 0
    assert loss == pytest.approx(losst, rel=1e-12)
    assert list(enter[:k]) == entert and k > 0
    assert not np.any(status[enter[:k]] & IN_SET)
    if Cp == 0.0:
        assert not np.any(pos[enter[:k]])
    # a threshold t: rows at 0 with G < t and rows at C with G > -t come back (t > 0: also rows that close to the
    # margin)
    thr = 0.3
    k2 = K.recheck(Rows(indptr, indices, values, n, bias), cls, 7, status, w, Cp, Cn, thr, enter)[2]
    X = T.design(sp.csr_matrix((values.astype(np.float64), indices, indptr), shape=(l, n)), bias)
    G = np.where(pos, 1, -1) * (X @ (w if bias >= 0 else w[:n])) - 1
    PG = np.where(alpha == 0, np.minimum(G, 0), np.where(alpha == C, np.maximum(G, 0), G))
    PG[C == 0] = 0
    assert m == pytest.approx(np.abs(PG).max(), rel=1e-12)
    state = status & K.STATE
    back = np.where(state == ZERO, G < thr, np.where(state == FREE, False, G > -thr)) & (C > 0)
    assert k2 == np.count_nonzero(back & ((status & IN_SET) == 0)) > k


def test_recheck_kernel_small_cases():
    """One row at a time: which dropped rows come back, and the loss."""
    indptr = np.array([0, 1], np.int64)
    X = Rows(indptr, np.array([0], np.int32), np.array([1.0]), 1)
    enter = np.empty(1, np.int64)
    cls_pos, cls_neg = np.array([1], np.int32), np.array([0], np.int32)
    # y = +1, w.x = 0.5: G = -0.5; at 0 it violates (should grow; comes back unless it is in the active set), free
    # violates, at C it does not
    for st, cls, viol, back in ((ZERO, cls_pos, 0.5, 1), (ZERO | IN_SET, cls_pos, 0.5, 0), (ACTIVE, cls_pos, 0.5, 0),
                                (AT_CP, cls_pos, 0.0, 0),
                                # y = -1, w.x = 0.5: G = -1.5 at 0 violates; at C (G < 0) it does not
                                (ZERO, cls_neg, 1.5, 1), (AT_CN, cls_neg, 0.0, 0)):
        m, loss, k = K.recheck(X, cls, 1, np.array([st], np.uint8), np.array([0.5]), 2.0, 3.0, 0.0, enter)
        assert (m, k) == (viol, back)
        assert loss == (2.0 * 0.5 if cls[0] == 1 else 3.0 * 1.5)
    # y = +1, w.x = 3: G = 2 > 0; at C it violates (should shrink), at 0 it does not, and no loss
    m, loss, k = K.recheck(X, cls_pos, 1, np.array([AT_CP], np.uint8), np.array([3.0]), 2.0, 3.0, 0.0, enter)
    assert (m, loss, k) == (2.0, 0.0, 1)
    m, loss, k = K.recheck(X, cls_pos, 1, np.array([ZERO], np.uint8), np.array([3.0]), 2.0, 3.0, 0.0, enter)
    assert (m, loss, k) == (0.0, 0.0, 0)
    with pytest.raises(ValueError):
        K.recheck(X, cls_pos, 1, np.empty(0, np.uint8), np.array([3.0]), 2.0, 3.0, 0.0, enter)


# ---------------------------------------------------------------------------------------------------------------
# 2. the driver against the twin

DRIVER_CASES = {
    # id: (data seed, rows, run seed, bias, weights, C, eps)
    "bias1": (31, 600, 1, 1.0, (), 1.0, 0.1),
    "nobias-eps0.01": (32, 500, 4, -1.0, (), 1.0, 0.01),
    "weights-C4": (33, 600, 2, 0.5, ((1, 2.0), (-1, 0.5)), 4.0, 0.1),
}


@pytest.mark.parametrize("case", DRIVER_CASES.values(), ids=DRIVER_CASES.keys())
def test_driver_matches_twin_with_rechecks(case):
    """First pass, block optimization, re-check passes (dropped violators re-enter at the end of the active set
    with their alpha, 0 or C), more block optimization, until a pass certifies: W, alpha, iterations, passes and
    each pass's violation, primal and re-entered count are the twin's."""
    data, l, seed, bias, weights, C, eps = case
    X, y = make_problem(data, l=l, n=30, noise=1.5)
    y = first_label(y, 1.0)
    m = fit(dataset(X, y), recheck=True, C=C, eps=eps, bias=bias, seed=seed, weights=list(weights),
            options=LLSVMOptions(return_alpha=True, max_passes=30))
    r = m.meta["results"][0]
    wd = dict(weights)
    Cp, Cn = C * wd.get(1, 1.0), C * wd.get(-1, 1.0)
    rows = LT.rows_of(X.indptr, X.indices, X.data)
    tw = LT.fit_in_memory(rows, y, Cp, Cn, X.shape[1], bias, eps=0.01, n_inner=5, seed=seed, dot_order=DOT_ORDER,
                          recheck_eps=eps, max_passes=30)
    w_twin = tw["w"] if bias >= 0 else tw["w"][:-1]
    np.testing.assert_array_equal(r.w, w_twin)
    np.testing.assert_array_equal(r.alpha, tw["alpha"])
    assert r.n_iter == tw["n_iter"]
    rc = r.extra["recheck"]
    assert [x["max_violation"] for x in rc] == [t[0] for t in tw["rechecks"]]
    assert [x["reentered"] for x in rc] == [t[2] for t in tw["rechecks"]]
    np.testing.assert_allclose([x["primal"] for x in rc], [t[1] for t in tw["rechecks"]], rtol=1e-12)
    # rows dropped in the first pass or by block optimization came back, and the run is certified
    assert len(rc) >= 2 and rc[0]["reentered"] > 0
    assert r.converged and rc[-1]["max_violation"] <= eps < rc[0]["max_violation"]


# ---------------------------------------------------------------------------------------------------------------
# 3. certified runs, checked in NumPy from the data and the model

def check_certified(model, X, y, eps, C=1.0, bias=-1.0):
    """Every binary problem: w = sum alpha_i y_i x_i, 0 <= alpha <= C, max |PG| over every row <= eps, and the
    reported primal, dual, gap and max violation are NumPy's."""
    Xb = T.design(X, bias)
    for r, ys in zip(model.meta["results"], problem_signs(model, y)):
        alpha = r.alpha
        assert np.all(alpha >= 0) and np.all(alpha <= C)
        w = np.asarray(Xb.T @ (alpha * ys)).ravel()
        assert np.abs(w - r.w).max() <= 1e-9 * max(1.0, np.abs(w).max())
        G = ys * (Xb @ r.w) - 1
        PG = np.where(alpha == 0, np.minimum(G, 0), np.where(alpha == C, np.maximum(G, 0), G))
        viol = float(np.abs(PG).max())
        primal = 0.5 * float(r.w @ r.w) + C * float(np.maximum(0, -G).sum())
        dual = float(alpha.sum()) - 0.5 * float(r.w @ r.w)
        assert r.converged and viol <= eps
        assert r.max_violation == pytest.approx(viol, rel=1e-9, abs=1e-12)
        assert r.primal == pytest.approx(primal, rel=1e-10)
        assert r.dual == pytest.approx(dual, rel=1e-10)
        assert r.gap == pytest.approx(primal - dual, rel=1e-6, abs=1e-9) and r.gap >= -1e-9


@pytest.mark.parametrize("memory", [None, 1 << 20], ids=["in-memory", "1M-streamed"])
@pytest.mark.parametrize("eps", [0.1, 0.01])
def test_certified_run_max_violation_within_eps(memory, eps):
    X, y = big_problem()
    m = fit(dataset(X, y), recheck=True, eps=eps, bias=1.0,
            options=LLSVMOptions(memory=memory, return_alpha=True, max_passes=50))
    check_certified(m, X, y, eps, bias=1.0)
    r = m.meta["results"][0]
    assert sum(x["reentered"] for x in r.extra["recheck"]) > 0
    if memory is not None:
        assert max(r.extra["blocks"]) > 1          # the active set was streamed in blocks


def lazy_ways(monkeypatch):
    """The ways -s llsvm's lazy active-set file (onepass._Lazy) takes in a run, gathered in the set returned:
    "rewrite without the dead", "rewritten at the end", "gathered"."""
    from llsvm.solvers.onepass import OnePassSolver
    seen, rewrite, gather = set(), OnePassSolver._rewrite, OnePassSolver._gather_live

    def spy_rewrite(self, p, files, rows, cap, keep_open=False, lazy=None):
        if lazy is not None:
            seen.add("rewritten at the end" if keep_open else "rewrite without the dead")
        return rewrite(self, p, files, rows, cap, keep_open=keep_open, lazy=lazy)

    def spy_gather(self, p, f):
        seen.add("gathered")
        return gather(self, p, f)
    monkeypatch.setattr(OnePassSolver, "_rewrite", spy_rewrite)
    monkeypatch.setattr(OnePassSolver, "_gather_live", spy_gather)
    return seen


LAZY_PATHS = {
    # id: (problem, --memory in MiB, the ways of the active-set file the run must take)
    "half-dead-then-gathered": ("big", 0.6, {"rewrite without the dead", "gathered"}),
    "streamed-to-the-end": ("wide", 0.6, {"rewritten at the end"}),
    "float32-file": ("big-float32", 0.55, {"rewrite without the dead", "gathered"}),
}


@pytest.mark.parametrize("case", LAZY_PATHS.values(), ids=LAZY_PATHS.keys())
def test_lazy_active_set_file(tmp_path, monkeypatch, case):
    """With re-check passes, under a budget the first pass's active set exceeds, the active-set file is streamed
    without being rewritten (the alpha of its rows in memory, rows leaving the set only in their status bytes),
    rewritten without its dead rows once they are more than half of it, its live rows gathered into memory block by
    block once they fit, and rewritten with the live rows and their alpha at the
    end of the outer iterations. Every way gives a certified model whose w is sum alpha_i y_i x_i over the alpha
    it returns: the alpha kept in memory are those w was built from, and the rows counted in the set are those
    there."""
    problem, mib, ways = case
    X, y = wide_problem() if problem == "wide" else big_problem()
    data = dataset(X, y)
    if problem.endswith("float32"):          # a binary file of float32 values: the rows' values as it holds them
        data = str(tmp_path / "f32.bin")
        llsvm.write_binary(dataset(X, y), data, float32=True)
        X = X.astype(np.float32).astype(np.float64)
    seen, lazy = lazy_ways(monkeypatch), _spy(monkeypatch, "_lazy_iteration")
    m = fit(data, recheck=True, eps=0.1, bias=1.0,
            options=LLSVMOptions(memory=int(mib * (1 << 20)), return_alpha=True, max_passes=50))
    assert ways <= seen, seen
    r = m.meta["results"][0]
    assert len(lazy) >= 3 and max(r.extra["blocks"]) > 1
    check_certified(m, X, y, 0.1, bias=1.0)


def test_lazy_file_only_where_its_alpha_fits(tmp_path, monkeypatch):
    """Rows of two non-zeros each, so many that the first pass's active set has more rows than the budget holds
    alpha for beside a block of it: that file is rewritten at every outer iteration (as with --one-pass), and an
    active-set file is streamed without a rewrite only once its alpha and its largest block fit the budget; whenever
    one is, the kept alpha and every block loaded beside them stay within it. The run is certified."""
    from llsvm.binfmt import BinaryDataset
    from llsvm.solvers import onepass as OP
    g = np.random.default_rng(5)
    l, n = 150_000, 2000
    X = sp.csr_matrix((g.standard_normal(2 * l), (np.repeat(np.arange(l), 2), g.integers(0, n, 2 * l))), shape=(l, n))
    X.sum_duplicates()
    y = first_label(np.where(X @ g.standard_normal(n) + 2.0 * g.standard_normal(l) > 0, 1.0, -1.0), 1.0)
    path = str(tmp_path / "narrow.bin")
    llsvm.write_binary(dataset(X, y), path, block_rows=2000)
    rewritten, budget_now, peaks = _spy(monkeypatch, "_stream_iteration"), [None], []
    orig_lazy, orig_load = OP.OnePassSolver._lazy_iteration, BinaryDataset.load_blocks

    def spy_lazy(self, p, f, budget, cap):
        budget_now[0] = budget
        try:
            return orig_lazy(self, p, f, budget, cap)
        finally:
            budget_now[0] = None

    def spy_load(self, b0, b1, *a, **kw):
        ds = orig_load(self, b0, b1, *a, **kw)
        if budget_now[0] is not None:       # a block loaded beside the alpha of this file's rows
            peaks.append((OP.ALPHA_BYTES * self.n_rows + OP._loaded_bytes(ds), budget_now[0]))
        return ds
    monkeypatch.setattr(OP.OnePassSolver, "_lazy_iteration", spy_lazy)
    monkeypatch.setattr(BinaryDataset, "load_blocks", spy_load)
    m = fit(path, recheck=True, eps=0.1, bias=1.0,
            options=LLSVMOptions(memory=int(0.8 * (1 << 20)), return_alpha=True, max_passes=30))
    assert rewritten and peaks
    assert all(used <= budget for used, budget in peaks), max(u / b for u, b in peaks)
    assert max(u / b for u, b in peaks) > 0.5           # the alpha and the blocks fill the budget, not a tenth of it
    check_certified(m, X, y, 0.1, bias=1.0)


@pytest.mark.parametrize("l,n,density,noise,mib", [(8000, 4000, 0.005, 1.0, 0.6), (6000, 3000, 0.01, 0.3, 0.4)],
                         ids=["5-blocks", "8-blocks"])
def test_streamed_outer_iteration_measured_over_all_blocks(l, n, density, noise, mib):
    """An active set streamed in several blocks, whose rows every other block's steps move (the bias weight all
    rows share): block optimization stops only when each block's rows were within eps / 2 as its turn found them
    (its first inner pass), not right after its own passes, so the run is certified within 10 re-check passes
    (4 on both; measured after each block's own passes, they stopped at 0.20 and 0.36 after 10)."""
    X, y = make_problem(72, l=l, n=n, density=density, noise=noise)
    y = first_label(y, 1.0)
    m = fit(dataset(X, y), recheck=True, eps=0.1, bias=1.0,
            options=LLSVMOptions(memory=int(mib * (1 << 20)), return_alpha=True, max_passes=10))
    r = m.meta["results"][0]
    assert max(r.extra["blocks"]) >= 5
    check_certified(m, X, y, 0.1, bias=1.0)


def test_certified_multiclass_and_closer_than_one_pass():
    """One-vs-rest: every class's problem certified; each is at least as close to LIBLINEAR's optimum (the dual
    gap) as the paper's one-pass run, which leaves dropped violators out."""
    X, y = make_problem(41, l=1500, n=30, classes=[5, 2, 9], noise=1.0)
    m = fit(dataset(X, y), recheck=True, bias=1.0, options=LLSVMOptions(return_alpha=True))
    check_certified(m, X, y, 0.1, bias=1.0)
    one = fit(dataset(X, y), bias=1.0)
    for r, o in zip(m.meta["results"], one.meta["results"]):
        assert r.dual >= o.dual


# ---------------------------------------------------------------------------------------------------------------
# 4. --one-pass: unchanged, byte for byte

# model files written by `llsvm-train -q -s llsvm ARGS` at commit fd41c5d (before re-check passes), on the files
# written below; with --one-pass (and the same defaults) they must not change
GOLDEN = {
    "big-B1": (["-B", "1", "big.txt"], "b09886e4dd6e0b6804f1bc8169dc935af0e88c4c27cc6b861ff652357e296be9"),
    "big-1M": (["-B", "1", "--memory", "1M", "big.txt"],
               "9f030bee038b67e17ba38a10bec4c9e2005866a2c6ac8c10ec0113160f469671"),
    "big-bin-1M-c4": (["-c", "4", "--memory", "1M", "big.bin"],
                      "e4d7d5571fd61361572b5e3fcc7242d10a7728cf04734a85f91614ae2941e3fa"),
    "big-R": (["-B", "R", "--seed", "3", "big.txt"],
              "22dd420e769465bf793abf32d896c6e475a1411e59cecb2a081791a4c3fc9d11"),
    "late-2thr-1M": (["--threads", "2", "--memory", "1M", "late.txt"],
                     "a1298afdd3e4212a2a1f49ccb7949afbf192b339772e0c45d95b4fbfd4f45293"),
    "late-inner2": (["--inner-iter", "2", "-B", "1", "late.txt"],
                    "c0b80c9a4e306f7a31f4876e9f3cb30efa9043cbc4fecfecc57465e7d5da72a3"),
}
GOLDEN_DATA = {"big.txt": "e844d98c489bad8585bfc1b42a2f2ad361f04352e19df984878072088bb904a7",
               "late.txt": "6110f6a554a932fef6a8b1d830806f3f5a747ffac29ea3d3c83fad8fb3e4adc1"}


def sha256(path):
    return hashlib.sha256(open(path, "rb").read()).hexdigest()


@pytest.fixture(scope="module")
def golden_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("golden")
    X, y = big_problem()
    write_text(d / "big.txt", X, y)
    Xl, yl = make_problem(91, l=6000, n=60, density=0.2, noise=1.0, classes=[3, 1, 7, 2])
    yl[yl == 2] = 3
    yl[np.arange(5500, 6000)[::7]] = 2
    write_text(d / "late.txt", Xl, yl)
    llsvm.write_binary(str(d / "big.txt"), str(d / "big.bin"))
    for name, digest in GOLDEN_DATA.items():
        assert sha256(d / name) == digest, f"{name}: the generated data changed, the golden models do not apply"
    return d


@pytest.mark.parametrize("name", GOLDEN)
def test_one_pass_unchanged_bit_for_bit(golden_dir, tmp_path, name):
    args, digest = GOLDEN[name]
    *opts, data = args
    out = tmp_path / f"{name}.model"
    assert_exit(runner_train("-s", "llsvm", "-q", "--one-pass", *opts, golden_dir / data, out), 0)
    assert sha256(out) == digest


# ---------------------------------------------------------------------------------------------------------------
# 5. the CLI

def test_cli_default_mode_lines_and_json(tmp_path):
    X, y = make_problem(101, l=700, n=30, classes=[6, 2, 4])
    data = write_text(tmp_path / "m.txt", X, y)
    res = runner_train("-s", "llsvm", "-B", "1", "--json", tmp_path / "j.json", data, tmp_path / "m.model")
    assert_exit(res, 0)
    js = json.loads((tmp_path / "j.json").read_text())
    assert DESIGN_KEYS <= set(js)
    assert {"inner_eps", "one_pass", "max_passes", "rechecks", "reentered"} <= set(js)
    assert (js["eps"], js["inner_eps"], js["one_pass"], js["max_passes"]) == (0.1, 0.01, False, 10)
    assert js["converged"] is True and js["max_violation"] <= 0.1
    classes = js["classes"]
    assert js["primal"] == pytest.approx(sum(c["primal"] for c in classes))
    assert js["gap"] == pytest.approx(js["primal"] - js["dual"], rel=1e-9, abs=1e-9)
    assert js["max_violation"] == max(c["max_violation"] for c in classes)
    assert js["rechecks"] == max(len(c["recheck"]) for c in classes)
    assert js["reentered"] == sum(x["reentered"] for c in classes for x in c["recheck"])
    block = re.compile(r"([.*]*)\nactive set: (\d+) of 700 rows after the first pass, (\d+) at the end\n"
                       r"re-check passes: (\d+), (\d+) rows re-entered; max violation (\S+), primal (\S+), gap (\S+)\n"
                       r"optimization finished, #iter = (\d+)\nObjective value = (-?\d+\.\d{6})\nnSV = (\d+)\n")
    found = block.findall(res.stdout)
    assert len(found) == 3 and block.sub("", res.stdout) == "", res.stdout
    for f, cls in zip(found, classes):
        marks, _, _, passes, back, viol, primal, _, n_iter, obj, nsv = f
        assert marks.count("*") == int(passes) == len(cls["recheck"])
        assert marks.count(".") == int(n_iter) == cls["n_iter"]
        assert int(back) == sum(x["reentered"] for x in cls["recheck"])
        assert float(viol) == pytest.approx(cls["max_violation"], rel=1e-5)
        assert float(primal) == pytest.approx(cls["primal"], rel=1e-6)
        assert obj == "%f" % -cls["dual"] and int(nsv) == cls["nSV"]
    # the model: the library's default mode on the same rows
    m = fit(dataset(X, y), recheck=True, bias=1.0)
    np.testing.assert_array_equal(llsvm.load_model(str(tmp_path / "m.model")).W, m.W)
    # --one-pass: null certificate
    res = runner_train("-s", "llsvm", "-q", "--one-pass", "--json", tmp_path / "o.json", data, tmp_path / "o.model")
    assert_exit(res, 0)
    jo = json.loads((tmp_path / "o.json").read_text())
    assert jo["primal"] is None and jo["gap"] is None and jo["max_violation"] is None
    assert jo["one_pass"] is True and jo["rechecks"] == 0 and jo["max_passes"] is None


def test_cli_max_passes_reached_warns(tmp_path):
    X, y = big_problem()
    data = write_text(tmp_path / "b.txt", X, y)
    res = runner_train("-s", "llsvm", "-B", "1", "-e", "0.001", "--max-passes", "1", "--json", tmp_path / "j.json",
                       data, tmp_path / "m.model")
    assert_exit(res, 0)
    assert "WARNING: reaching max number of iterations" in res.stdout + res.stderr
    js = json.loads((tmp_path / "j.json").read_text())
    assert js["converged"] is False and js["rechecks"] == 1
    # the certificate is still exact for the model returned, and says how far it is
    assert js["max_violation"] > 0.001 and js["primal"] > js["dual"]


@pytest.mark.parametrize("args, needle, code", [
    (("--one-pass", "-e", "0.01"), "-e applies to the re-check passes, which --one-pass does not run", 1),
    (("--one-pass", "--max-passes", "3"), "--max-passes applies to the re-check passes", 1),
    (("--max-passes", "0"), "--max-passes", 2),
    (("--inner-eps", "0"), "--inner-eps", 2),
    (("-s", "3", "--one-pass"), "--one-pass applies only to -s llsvm", 1),
    (("-s", "3", "--max-passes", "2"), "--max-passes applies only to -s llsvm", 1),
])
def test_cli_option_refusals(tmp_path, args, needle, code):
    X, y = make_problem(5, l=50, n=5)
    data = write_text(tmp_path / "s.txt", X, y)
    solver = () if "-s" in args else ("-s", "llsvm")
    res = runner_train(*solver, *args, data, tmp_path / "m.model")
    assert_exit(res, code)
    assert needle in res.stderr
    assert not (tmp_path / "m.model").exists()


def tall_rows(n_rows):
    """n_rows rows of one non-zero each (labels alternating): little data, many rows."""
    X = sp.csr_matrix((np.ones(n_rows), np.zeros(n_rows, np.int32), np.arange(n_rows + 1)), shape=(n_rows, 1))
    return X, np.where(np.arange(n_rows) % 2 == 0, 1.0, -1.0)


def test_budget_too_small_for_the_state_is_refused(tmp_path):
    """One status byte per row and problem plus the weight vectors, plus the smallest working set (256K): a
    budget below that is refused naming the minimum, before training for binary input, as the rows come for text."""
    X, y = tall_rows(600_000)
    txt = write_text(tmp_path / "t.txt", X, y)
    binp = tmp_path / "t.bin"
    llsvm.write_binary(str(txt), str(binp))
    res = runner_train("-s", "llsvm", "--memory", "700K", binp, tmp_path / "m.model")
    assert_exit(res, 1)
    msg = res.stdout + res.stderr
    assert "--memory 700 KiB is too small for -s llsvm on 600000 rows" in msg
    assert "the status bytes and the weight vectors need 586 KiB, at least 842 KiB in all" in msg, msg
    res = runner_train("-s", "llsvm", "--memory", "700K", txt, tmp_path / "m.model")
    assert_exit(res, 1)
    msg = res.stdout + res.stderr
    assert "--memory 700 KiB is too small for -s llsvm on the" in msg and "rows read so far" in msg, msg
    assert not (tmp_path / "m.model").exists()
    # the minimum it names is enough
    res = runner_train("-s", "llsvm", "-q", "--memory", "900K", binp, tmp_path / "m.model")
    assert_exit(res, 0)


# ---------------------------------------------------------------------------------------------------------------
# issue 32 item 6: re-check passes read a binary input ahead on a helper thread; block optimization keeps its last
# block in memory for the next outer iteration and holds the whole active set while the budget less a re-check
# pass's blocks allows it (spilled to its file for the pass otherwise)

def _binary(tmp_path, X, y, block_rows):
    path = tmp_path / "set.bin"
    llsvm.write_binary(dataset(X, y), str(path), block_rows=block_rows)
    return str(path)


def _spy(monkeypatch, name):
    """Count the calls of OnePassSolver.<name>."""
    from llsvm.solvers.onepass import OnePassSolver
    calls = []
    orig = getattr(OnePassSolver, name)

    def spy(self, *a, **kw):
        calls.append(kw)
        return orig(self, *a, **kw)
    monkeypatch.setattr(OnePassSolver, name, spy)
    return calls


def wide_problem():
    """8000 x 4000 sparse binary rows (20 non-zeros each): about 3300 free rows at the optimum (a sixth of a row's
    features), so that the active set between re-check passes is close to 1M loaded."""
    X, y = make_problem(72, l=8000, n=4000, density=0.005, noise=1.0)
    return X, first_label(y, 1.0)


@pytest.mark.parametrize("memory,spilled", [(1 << 20, True), (int(1.9 * (1 << 20)), False)], ids=["1M", "1.9M"])
def test_read_ahead_changes_nothing_but_timing(tmp_path, monkeypatch, memory, spilled):
    """The same binary input under --memory with and without the read-ahead: the same model, bit for bit, and the
    same trace (duals, active-set sizes, blocks, re-check records). Under 1M the first-pass active set streams in
    blocks (the last one held for the next outer iteration; the file left as written, the alpha of its rows in
    memory), and the active set, held whole once it fits, is
    written to its file before each re-check pass, which appends its re-entering rows to it (the file's writer
    left open for it); under 1.9M it stays in memory through the re-check passes. The certificate is NumPy's."""
    from llsvm.solvers.onepass import OnePassSolver
    X, y = wide_problem()
    path = _binary(tmp_path, X, y, 500)
    held, rewrites = _spy(monkeypatch, "_lazy_iteration"), _spy(monkeypatch, "_rewrite")
    runs = {}
    for ahead in (True, False):
        monkeypatch.setattr(OnePassSolver, "READ_AHEAD", ahead)
        runs[ahead] = fit(path, recheck=True, eps=0.1, bias=1.0,
                          options=LLSVMOptions(memory=memory, return_alpha=True, max_passes=50))
    a, b = (runs[k].meta["results"][0] for k in (True, False))
    assert np.array_equal(a.w, b.w) and np.array_equal(a.alpha, b.alpha)
    for key in ("dual_trace", "block_dual", "active", "blocks", "recheck"):
        ra, rb = a.extra[key], b.extra[key]
        if key == "recheck":
            ra, rb = ([{k: v for k, v in x.items() if "seconds" not in k} for x in r] for r in (ra, rb))
        assert ra == rb, key
    n_passes = len(a.extra["recheck"])
    assert n_passes > 1 and (max(a.extra["blocks"]) > 1) == spilled and bool(held) == spilled
    assert sum(bool(kw.get("keep_open")) for kw in rewrites) == (2 * n_passes if spilled else 0)   # both runs
    check_certified(runs[True], X, y, 0.1, bias=1.0)


def test_prefetched_bounded_holds_two_items_in_order():
    """prefetched(bounded=True): the iterator's items in its order, never more than depth + 1 alive at once when
    the consumer drops each before asking for the next (counted with weak references, not timed)."""
    import gc
    import weakref
    from llsvm.solvers.outofcore import prefetched

    class Item:
        def __init__(self, k):
            self.k = k

    alive, most = weakref.WeakSet(), [0]

    def items():
        for k in range(40):
            it = Item(k)
            alive.add(it)
            most[0] = max(most[0], len(alive))
            yield it
            del it
    seen = []
    for item in prefetched(items(), bounded=True):
        seen.append(item.k)
        for _ in range(200):               # give the helper every chance to run ahead
            pass
        gc.collect(0)                      # the young generation: an Item is in no cycle (a full collection
        most[0] = max(most[0], len(alive))  # of the session's heap took ~0.2 s a time, 40 times)
        del item
    assert seen == list(range(40))
    assert most[0] <= 2


def _bad_block_5(tmp_path):
    """A binary file of wide_problem() in blocks of 700 rows, one byte of block 5's payload flipped."""
    from llsvm.binfmt import BinaryDataset
    X, y = wide_problem()
    path = _binary(tmp_path, X, y, 700)
    with BinaryDataset(path) as ds:
        off = int(ds.block_offsets[5]) + 200
    raw = bytearray(open(path, "rb").read())
    raw[off] ^= 0xFF
    open(path, "wb").write(bytes(raw))
    return path


def test_read_ahead_reports_a_bad_block_as_before(tmp_path):
    """A checksum mismatch in a block of the binary input is the same error with the read-ahead (re-check passes
    read the file on a helper thread) as when the file is read in the consumer."""
    from llsvm.solvers.outofcore import Input
    path = _bad_block_5(tmp_path)
    errors = []
    for ahead in (True, False):
        src = Input(path)
        n = 0
        with pytest.raises(Exception) as exc:
            for block in src.blocks(read_ahead=ahead):
                n += block.n_rows
                del block
        src.close()
        errors.append((type(exc.value), str(exc.value), n))
    assert errors[0] == errors[1] and errors[0][2] == 5 * 700


def test_active_set_files_are_read_trusted(tmp_path):
    """-s llsvm's own active-set files (written by the process into its temporary directory, read again and again)
    are opened trusted: no checksum or structure check on read (issue 49, out of core at in-memory speed). A user's
    file never is: the same flipped byte is an error by default and read as it is when trusted."""
    from llsvm.binfmt import BinaryDataset
    path = _bad_block_5(tmp_path)
    with BinaryDataset(path) as ds, pytest.raises(llsvm.DataFormatError, match="checksum mismatch in block 5"):
        ds.read_block(5)
    with BinaryDataset(path) as ds, pytest.raises(llsvm.DataFormatError, match="checksum mismatch in block 5"):
        ds.load_blocks(4, 6)
    with BinaryDataset(path, trusted=True) as ds:
        assert ds.read_block(5).n_rows == 700 and ds.load_blocks(4, 6).n_rows == 1400
    import llsvm.solvers.onepass as onepass
    with open(onepass.__file__) as f:
        src = f.read()
    assert src.count("BinaryDataset(p.") == src.count("BinaryDataset(p.path, trusted=True)") + \
        src.count("BinaryDataset(p.add_path, trusted=True)") > 0


def test_read_ahead_thread_ends_with_the_consumer(tmp_path):
    """Ctrl-C in the consumer (a KeyboardInterrupt between two blocks) ends the read-ahead: when it reaches the
    caller the helper thread is gone (it waits on its slot or the queue in steps of 0.1 s, and the consumer's exit
    waits for it)."""
    import threading
    from llsvm.solvers.outofcore import Input
    X, y = big_problem()
    path = _binary(tmp_path, X, y, 700)
    src = Input(path)
    with pytest.raises(KeyboardInterrupt):
        for k, block in enumerate(src.blocks(read_ahead=True)):
            del block
            if k == 3:
                raise KeyboardInterrupt
    src.close()
    assert not [t for t in threading.enumerate() if t.name == "llsvm-reader" and t.is_alive()]


def test_read_ahead_reuses_buffers_nothing_views(tmp_path):
    """The read-ahead reads a block into the buffer of an earlier one only when nothing views it: blocks whose
    arrays the consumer keeps stay as they were read, the others share a few buffers, and every block equals the
    one read into fresh memory."""
    from llsvm.binfmt import BinaryDataset
    from llsvm.solvers.outofcore import REUSE_BUFFERS, Input
    X, y = wide_problem()
    path = _binary(tmp_path, X, y, 500)
    with BinaryDataset(path) as ds:
        fresh = [ds.read_block(b) for b in range(ds.n_blocks)]
    src = Input(path, block_bytes=None)
    kept, buffers = {}, set()
    for k, block in enumerate(src.blocks(read_ahead=True)):
        want = fresh[k]
        for name in ("y", "indptr", "indices", "values", "row_ids"):
            got, exp = getattr(block, name), getattr(want, name)
            assert (got is None and exp is None) or np.array_equal(got, exp), (k, name)
        del got, exp
        if k % 5 == 0:
            kept[k] = (block.values, block.values.copy())      # a view the consumer keeps
        else:
            owner = block.values
            while isinstance(owner.base, np.ndarray):
                owner = owner.base
            buffers.add(id(owner))
            del owner
        del block
    src.close()
    # a kept block's buffer leaves the ring for a new one: REUSE_BUFFERS at most, and one more per kept block
    assert len(fresh) > 10 and len(buffers) <= REUSE_BUFFERS + len(kept)
    for k, (view, copy) in kept.items():
        assert np.array_equal(view, copy), k                     # never overwritten


def test_read_ahead_multiclass_on_two_threads(tmp_path, monkeypatch):
    """Three classes, their problems on two threads, each streaming its active set under 3M and appending its
    re-entering rows to its own file: with and without the read-ahead, the same models bit for bit, certified."""
    from llsvm.solvers.onepass import OnePassSolver
    X, y = make_problem(73, l=6000, n=3000, density=0.006, noise=1.0, classes=[3, 1, 7])
    path = _binary(tmp_path, X, y, 400)
    runs = {}
    for ahead in (True, False):
        monkeypatch.setattr(OnePassSolver, "READ_AHEAD", ahead)
        runs[ahead] = fit(path, recheck=True, eps=0.1, bias=1.0, threads=2,
                          options=LLSVMOptions(memory=3 << 20, return_alpha=True, max_passes=50))
    for a, b in zip(runs[True].meta["results"], runs[False].meta["results"]):
        assert np.array_equal(a.w, b.w) and np.array_equal(a.alpha, b.alpha)
        assert max(a.extra["blocks"]) > 1 and len(a.extra["recheck"]) > 1
    check_certified(runs[True], X, y, 0.1, bias=1.0)
