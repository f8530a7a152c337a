"""-s 1 / -s 3 on two or more threads: PASSCoDe-Atomic (Hsieh, Yu, Dhillon, ICML 2015) in cext/_linear.pyx
(DCDState.run_passcode): a share of the rows per OpenMP thread, each running the one-thread pass, the additions into
the shared w atomic, LIBLINEAR's rule checked exactly at w(alpha) before it stops.

- One thread through run_passcode is run() with the same RNG state, bit for bit (the shares and the combination
  of the extremes do not change the one-thread solver), so the NumPy twin of test_solvers
  (tests/reference/dcd_twin.py) is its reference too.
- On two threads a run is not repeatable (the reads see the other thread's updates as they come), so the tests
  check what every run must give: LIBLINEAR's rule holding at the returned (alpha, w(alpha)) by the twin's own
  projected gradients, w = w(alpha), the certificate of the returned point, and the one-thread optimum within the
  tolerance; on the tiny problems of test_solvers (sparse, dense, float32, bias, Cp != Cn, both losses, an empty
  row, duplicated rows) and on a generated set of 8,000 rows.
- --threads picks it for one problem of THREAD_MIN_NNZ non-zeros or more (4 million; lowered here, so that small
  sets exercise it) whose entries are at most 1 % non-zero, when common.PASSCODE is on; otherwise, or with
  --threads 1, the one-thread solver bit for bit. PASSCoDe is off by default: above THREAD_MIN_NNZ, --threads 2
  and up run the one-thread passes with a scout thread reading the rows ahead (DCDState.scout), bit for bit the
  one-thread solver too.
"""
import os

import numpy as np
import pytest
import scipy.sparse as sp

import llsvm
from llsvm._ext import _linear as K
from llsvm._ext._random import rng_state
from llsvm.dataset import CSRDataset
from llsvm.params import usable_cpus
from llsvm.solvers import common
from llsvm.solvers.common import Subproblem
from llsvm.solvers.dcd import solve_dcd
from reference import dcd_twin as T
from conftest import generated_set
from test_solvers import TINY, tiny_problem

REAL_OTHERS_RUNNING = common.others_running      # before conftest's autouse fixture stands in for it (0: a scout)


@pytest.fixture(autouse=True)
def small_problems_take_threads(monkeypatch):
    monkeypatch.setattr(common, "THREAD_MIN_NNZ", 10_000)
    monkeypatch.setattr(common, "PASSCODE", True)      # off by default (test_passcode_is_off_by_default)


@pytest.mark.parametrize("solver", [3, 1])
def test_passcode_is_off_by_default(generated, solver, monkeypatch):
    """PASSCoDe is off (common.PASSCODE: one thread measured faster than two): --threads 2 on one -s 1/3 problem
    above the thresholds is the one-thread solver with a scout thread reading the rows ahead, bit for bit."""
    monkeypatch.setattr(common, "PASSCODE", False)
    one = llsvm.train(generated, solver=solver, bias=1, threads=1)
    two = llsvm.train(generated, solver=solver, bias=1, threads=2)
    assert "threads" not in two.meta["results"][0].extra
    assert two.meta["results"][0].extra.get("scout") is (usable_cpus() > 1)
    assert "scout" not in one.meta["results"][0].extra
    np.testing.assert_array_equal(one.W, two.W)


@pytest.mark.parametrize("case", list(TINY), ids=list(TINY))
def test_the_scout_leaves_the_one_thread_iterates(case):
    """DCDState.scout: a second thread reads the rows ahead of each pass (cext/scout.pxd, scout_rows) and writes
    nothing the pass reads: alpha, w and the iteration count are run()'s alone, bit for bit, on every tiny problem
    (sparse, dense, float32, bias, Cp != Cn, both losses, an empty row, duplicated rows), in chunks of 3 epochs as
    the driver calls it (each call one parallel region)."""
    seed, l, n, density, kind, bias, l1, Cp, Cn, eps = TINY[case]
    X, y = tiny_problem(seed, l, n, density, kind)
    sub = _sub(X, y, Cp, Cn, bias, kind == "float32")
    a, alpha_a, w_a = _state(sub, l1)
    b, alpha_b, w_b = _state(sub, l1)
    b.scout = True
    for _ in range(100):
        done_a, ev_a = a.run(3, eps)
        done_b, ev_b = b.run(3, eps)
        assert (done_a, ev_a, a.n_iter, a.active_size) == (done_b, ev_b, b.n_iter, b.active_size)
        if done_a:
            break
    np.testing.assert_array_equal(alpha_a, alpha_b)
    np.testing.assert_array_equal(w_a, w_b)


@pytest.mark.parametrize("solver", [3, 1])
def test_the_scout_on_dense_and_float32_rows(tmp_path, solver, monkeypatch):
    """The generated dense set (every row full: the passes read rows without their indices) and its float32 copy:
    --threads 2 (the scout) gives --threads 1's weights bit for bit."""
    monkeypatch.setattr(common, "PASSCODE", False)
    ds = generated_set(tmp_path / "dense", "dense", rows=6000, seed=3)
    for data in (ds, CSRDataset(ds.y, ds.indptr, ds.indices, ds.values.astype(np.float32), ds.n_features)):
        one = llsvm.train(data, solver=solver, bias=1, threads=1)
        two = llsvm.train(data, solver=solver, bias=1, threads=2)
        assert two.meta["results"][0].extra.get("scout") is (usable_cpus() > 1)
        np.testing.assert_array_equal(one.W, two.W)


def _sub(X, y, Cp, Cn, bias, float32=False):
    ds = CSRDataset.from_csr(sp.csr_matrix(X), y, dtype=np.float32 if float32 else None)
    return Subproblem(ds, np.where(y > 0, 1, -1), Cp, Cn, bias=bias)


def _state(sub, l1):
    l = sub.l
    xnorm = np.empty(l)
    K.sq_norms(*sub.args, xnorm)
    alpha, w, index = np.zeros(l), np.zeros(sub.w_size), np.arange(l, dtype=np.int32)
    return K.DCDState(*sub.args, sub.y, alpha, w, xnorm, index, sub.Cp, sub.Cn, l1, rng_state(5)), alpha, w


@pytest.mark.parametrize("case", list(TINY), ids=list(TINY))
def test_one_thread_is_the_one_thread_solver(case):
    seed, l, n, density, kind, bias, l1, Cp, Cn, eps = TINY[case]
    X, y = tiny_problem(seed, l, n, density, kind)
    sub = _sub(X, y, Cp, Cn, bias, kind == "float32")
    a, alpha_a, w_a = _state(sub, l1)
    b, alpha_b, w_b = _state(sub, l1)
    done_a = a.run(300, eps)[0]
    done_b = b.run_passcode(300, eps, rng_state(5).reshape(1, 4))[0]
    assert done_a == done_b and a.n_iter == b.n_iter
    np.testing.assert_array_equal(alpha_a, alpha_b)
    np.testing.assert_array_equal(w_a, w_b)


@pytest.mark.parametrize("case", list(TINY), ids=list(TINY))
def test_two_threads_stop_by_the_rule_at_the_returned_point(case):
    seed, l, n, density, kind, bias, l1, Cp, Cn, eps = TINY[case]
    X, y = tiny_problem(seed, l, n, density, kind)
    ys = np.where(y > 0, 1, -1)
    one = solve_dcd(_sub(X, y, Cp, Cn, bias, kind == "float32"), l1, eps, 3000, rng_seed=seed)
    res = solve_dcd(_sub(X, y, Cp, Cn, bias, kind == "float32"), l1, eps, 3000, rng_seed=seed, threads=2)
    Xt = X if kind != "float32" else X.astype(np.float32).astype(np.float64)
    np.testing.assert_allclose(res.w, T.w_from_alpha(res.alpha, Xt, ys, bias), rtol=1e-12, atol=1e-12)
    pg = T.projected_gradients(res.alpha, Xt, ys, Cp, Cn, l1, bias)
    assert res.max_violation == pytest.approx(np.abs(pg).max(), rel=1e-9, abs=1e-12)
    assert res.extra["threads"] == 2
    # float32-L2-bias reaches the 3,000 iterations in one thread too
    assert res.converged or not one.converged
    if res.converged and not res.extra["threads_stalled"]:
        assert pg.max() - pg.min() <= eps * (1 + 1e-9) and np.abs(pg).max() <= eps * (1 + 1e-9)
        assert res.extra["exact_checks"] >= 1
    # else handed over to one thread by the stall guard: LIBLINEAR's rule, checked during its last pass as one
    # thread's is (test_a_stall_hands_over_to_one_thread checks the optimum it reaches)


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    """A two-class generated sparse set of 8,000 rows."""
    return generated_set(tmp_path_factory.mktemp("passcode") / "g", "sparse", rows=8000, features=3000,
                         nnz_per_row=25, seed=12)


def _same_optimum(a, b):
    """a and b certify the same optimum: their intervals [dual, primal] meet (each dual at most the other's primal,
    up to rounding)."""
    slack = 1e-9 * max(abs(a.primal), abs(b.primal))
    assert a.primal - a.gap <= b.primal + slack and b.primal - b.gap <= a.primal + slack


@pytest.mark.parametrize("kw", [dict(solver=3), dict(solver=1), dict(solver=3, bias=1, C=4.0),
                                dict(solver=1, weights={1: 2.0})], ids=["s3", "s1", "s3-bias-C4", "s1-w"])
def test_threads_give_the_optimum_with_an_exact_certificate(generated, kw):
    one = llsvm.train(generated, threads=1, **kw).meta["results"][0]
    for t in (2, 3):
        r = llsvm.train(generated, threads=t, **kw).meta["results"][0]
        assert r.extra["threads"] == min(t, usable_cpus()) and r.converged and r.extra["exact_checks"] >= 1
        assert 0 <= r.max_violation <= 0.1          # LIBLINEAR's rule at -e 0.1, exactly at the returned point
        assert 0 <= r.gap
        # both certificates hold the optimum P* (dual <= P* <= primal): each primal is within its own gap of the
        # other's (a fixed relative tolerance failed a CI run: at -e 0.1 two orders of updates stop 1.07 % apart)
        _same_optimum(r, one)
    tight = llsvm.train(generated, threads=2, eps=1e-5, max_iter=5000, **kw).meta["results"][0]
    best = llsvm.train(generated, threads=1, eps=1e-5, max_iter=5000, **kw).meta["results"][0]
    _same_optimum(tight, best)
    assert tight.gap <= 1e-4 * tight.primal


def test_one_thread_small_and_dense_problems_are_the_one_thread_solver(shared_plain, generated, monkeypatch):
    """--threads 1 is the one-thread solver; so is --threads 2 on fewer non-zeros than THREAD_MIN_NNZ (heart_scale,
    3,378), on rows of more than 1 % non-zeros (a9a: 11 %), and, at the real threshold (4 million), on the
    generated set's 200,000."""
    for name in ("heart_scale", "a9a"):
        ds = llsvm.read_dataset(shared_plain(name))
        a = llsvm.train(ds, solver=3, threads=2).meta["results"][0]
        b = llsvm.train(ds, solver=3, threads=1).meta["results"][0]
        np.testing.assert_array_equal(a.w, b.w)
        assert "threads" not in a.extra
    monkeypatch.setattr(common, "THREAD_MIN_NNZ", 4_000_000)
    a = llsvm.train(generated, solver=3, threads=2).meta["results"][0]
    assert "threads" not in a.extra
    np.testing.assert_array_equal(a.w, llsvm.train(generated, solver=3, threads=1).meta["results"][0].w)


@pytest.mark.parametrize("l1", [True, False], ids=["s3", "s1"])
def test_a_stall_hands_over_to_one_thread(generated, monkeypatch, l1):
    """The stall guard (run_passcode's stall_epochs, 0 here: a stall after the first iteration) hands the threads'
    alpha to the one-thread iteration (end_threads: w = w(alpha), every variable active), which stops by LIBLINEAR's
    rule, checked during its last pass (each PG before its row's step), not at the returned point: there, w =
    w(alpha), the reported violation is the twin's exactly, and the optimum is the one-thread run's. (The returned
    point's own PG range may exceed eps by what the pass's later steps moved it: 1.15e-4 against 1e-4 in one run
    of 2026-11-30, whose hand-over point the threads' timing decides.)"""
    from llsvm.solvers import dcd
    monkeypatch.setattr(dcd, "PASSCODE_STALL_EPOCHS", 0)
    ds = generated
    ys = np.where(ds.y > 0, 1, -1)
    sub = Subproblem(ds, ys, 2.0, 2.0, bias=1.0)
    one = solve_dcd(sub, l1, 1e-4, 5000, threads=1)
    res = solve_dcd(sub, l1, 1e-4, 5000, threads=2)
    assert res.extra["threads_stalled"] and res.converged and res.n_iter > 1
    X = sp.csr_matrix((ds.values, ds.indices, ds.indptr), shape=(ds.n_rows, ds.n_features))
    np.testing.assert_allclose(res.w, T.w_from_alpha(res.alpha, X, ys, 1.0), rtol=1e-12, atol=1e-12)
    pg = T.projected_gradients(res.alpha, X, ys, 2.0, 2.0, l1, 1.0)
    assert res.max_violation == pytest.approx(np.abs(pg).max(), rel=1e-9, abs=1e-12)
    _same_optimum(res, one)
    assert 0 <= res.gap <= 1e-3 * res.primal


@pytest.mark.parametrize("solver", [7, 12, 13])
def test_the_scout_in_the_other_dual_solvers(tmp_path, solver):
    """-s 7 (logistic regression's dual) and -s 12 / -s 13 (support vector regression's): --threads 2 on one
    problem runs the same scout beside the one-thread passes (cext/_l2dual.pyx), the one-thread weights bit for
    bit, on sparse and dense rows."""
    sparse = generated_set(tmp_path / "sparse", "sparse", rows=3000, features=2000, nnz_per_row=30, seed=4)
    dense = generated_set(tmp_path / "dense", "dense", rows=3000, seed=5)
    for ds in (sparse, dense):
        if solver != 7:          # regression: real targets
            g = np.random.default_rng(1)
            ds = CSRDataset(ds.y * 2.0 + g.standard_normal(ds.n_rows), ds.indptr, ds.indices, ds.values,
                            ds.n_features)
        one = llsvm.train(ds, solver=solver, bias=1, threads=1)
        two = llsvm.train(ds, solver=solver, bias=1, threads=2)
        assert two.meta["results"][0].extra.get("scout") is (usable_cpus() > 1)
        assert "scout" not in one.meta["results"][0].extra
        np.testing.assert_array_equal(one.W, two.W)


@pytest.mark.parametrize("solver", [3, 1, 7, 12])
def test_no_scout_without_an_idle_core(generated, solver, monkeypatch):
    """On a busy machine (as many other threads running as the cores beside this one) --threads 2 runs the one-thread
    passes without a scout (common.scout_pays): the same model, bit for bit."""
    monkeypatch.setattr(common, "PASSCODE", False)
    monkeypatch.setattr(common, "others_running", lambda: (os.cpu_count() or 1) - 1)
    one = llsvm.train(generated, solver=solver, bias=1, threads=1)
    two = llsvm.train(generated, solver=solver, bias=1, threads=2)
    assert "scout" not in two.meta["results"][0].extra
    np.testing.assert_array_equal(one.W, two.W)
    monkeypatch.setattr(common, "others_running", lambda: None)     # not known (not Linux): as if idle
    assert llsvm.train(generated, solver=solver, bias=1, threads=2).meta["results"][0].extra.get("scout") is (
        usable_cpus() > 1)


def test_others_running_counts_spinning_processes():
    """others_running reads /proc/stat's procs_running less this process's running threads: two children spinning
    on the CPU are counted while they run (each is running or runnable at every look), so at least one of them is
    seen even if a thread of this process changes state between the two reads of a look."""
    import subprocess
    import sys
    code = "import sys; sys.stdout.write('go\\n'); sys.stdout.flush()\nwhile True: pass"
    children = [subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE) for _ in range(2)]
    try:
        for child in children:
            assert child.stdout.readline() == b"go\n"
        assert REAL_OTHERS_RUNNING() >= 1
    finally:
        for child in children:
            child.kill()
            child.wait()
            child.stdout.close()
