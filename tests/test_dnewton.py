"""Distributed Newton for -s 0 / -s 2 / -s 11 (llsvm.solvers.dnewton: MPI-LIBLINEAR's distributed TRON) with the
parts held in this process (LocalParts), against the single-process Newton (llsvm.solvers.newton) and the
independent reference of tests/reference/liblinear_twin.py:

- one part: every iterate is the single-process one, bit for bit (w, the printed lines, primal, dual, |g|);
- K parts (the rows cut into contiguous ranges, each in LIBLINEAR's class grouping): the same iterates up to the
  order of a sum (the same Newton steps and lines, w within 1e-9 relative), and the optimum the reference's;
- the parts' sums are the whole problem's: f, the gradient, H d, the preconditioner and the line search's losses
  added over the parts equal the one-part values to rounding;
- the rounds and doubles sent: CG steps + 2 rounds a Newton step, n doubles down and up per part and round.
"""
import numpy as np
import pytest

import llsvm
from llsvm.report import as_reporter
from llsvm.solvers import common, dnewton, newton, trainer
from llsvm.solvers.common import Subproblem, class_grouping
from llsvm.solvers.newtonfun import make_fun
from conftest import generated_set
from reference import liblinear_twin as twin

CASES = [dict(solver=0), dict(solver=0, bias=1), dict(solver=2), dict(solver=2, bias=1),
         dict(solver=2, bias=1, regularize_bias=False), dict(solver=2, weights={1: 3.0}),
         dict(solver=11, svr_p=0.1), dict(solver=11, bias=1, svr_p=0.3)]


@pytest.fixture(scope="module")
def heart(shared_plain):
    return llsvm.read_dataset(shared_plain("heart_scale"))


def _single(ds, kw):
    params = trainer.checked_params(None, dict(kw))
    lines = []
    rep = as_reporter(say=lines.append)
    labels, cls = trainer.labels_of(ds.y, params)
    if params.spec.task == "regression":
        sub = trainer._whole_problem(ds, None, None, None, params, rep)
    else:
        (sub,), _ = trainer.ovr_problems(ds, cls, labels, None, params, rep)
    return params, sub, cls, newton.train_one(sub, params, 1, rep), lines


def _parts(ds, params, cls, sub, n_parts):
    """The rows cut into n_parts contiguous ranges, each a NewtonPart (classification: the range's rows in class
    grouping, as llsvm.dask's parts are)."""
    bounds = np.linspace(0, ds.n_rows, n_parts + 1).round().astype(np.int64)
    parts = []
    for a, b in zip(bounds[:-1], bounds[1:]):
        rows = np.arange(a, b, dtype=np.int64)
        if cls is None:
            part = Subproblem(ds, np.ones(rows.size, np.int8), sub.Cp, sub.Cn, rows=rows, bias=params.bias,
                              targets=ds.y[rows])
        else:
            rows = rows[class_grouping(cls, rows)]
            part = Subproblem(ds, np.where(cls[rows] == 0, 1, -1).astype(np.int8), sub.Cp, sub.Cn, rows=rows,
                              bias=params.bias)
        parts.append(dnewton.NewtonPart(part, params.solver, params.regularize_bias, params.svr_p))
    return dnewton.LocalParts(parts)


def _run(ds, params, cls, sub, n_parts):
    lines = []
    res = dnewton.solve_dnewton(_parts(ds, params, cls, sub, n_parts), params.solver, params.eps,
                                params.max_iter or params.spec.default_max_iter, params.regularize_bias,
                                as_reporter(say=lines.append), p=params.svr_p)
    return res, lines


@pytest.mark.parametrize("kw", CASES, ids=lambda kw: ",".join(f"{k}={v}" for k, v in kw.items()))
def test_one_part_is_the_single_process_run_bit_for_bit(heart, kw):
    params, sub, cls, ref, ref_lines = _single(heart, kw)
    res, lines = _run(heart, params, None if params.spec.task == "regression" else cls, sub, 1)
    assert lines == ref_lines and len(lines) > 3
    np.testing.assert_array_equal(res.w, ref.w)
    assert (res.n_iter, res.primal, res.max_violation, res.nSV, res.converged) == \
        (ref.n_iter, ref.primal, ref.max_violation, ref.nSV, ref.converged)
    assert res.dual == ref.dual or (np.isnan(res.dual) and np.isnan(ref.dual))


@pytest.mark.parametrize("n_parts", [2, 3, 7])
@pytest.mark.parametrize("kw", CASES, ids=lambda kw: ",".join(f"{k}={v}" for k, v in kw.items()))
def test_parts_give_the_same_iterates_up_to_the_order_of_a_sum(heart, kw, n_parts):
    params, sub, cls, ref, ref_lines = _single(heart, kw)
    res, lines = _run(heart, params, None if params.spec.task == "regression" else cls, sub, n_parts)
    assert res.n_iter == ref.n_iter
    assert [x.split(" CG")[0] for x in lines] == [x.split(" CG")[0] for x in ref_lines]
    assert np.abs(res.w - ref.w).max() <= 1e-9 * max(1.0, np.abs(ref.w).max())
    assert res.primal == pytest.approx(ref.primal, rel=1e-12)
    if params.regularize_bias:
        assert res.dual == pytest.approx(ref.dual, rel=1e-9)
        assert 0 <= res.gap == pytest.approx(ref.gap, rel=1e-6, abs=1e-9 * ref.primal)
    # the primal at the returned w by the reference's own definition
    X = heart.to_csr()
    Xb = X if params.bias < 0 else _with_bias(X, params.bias)
    y = heart.y if params.spec.task == "regression" else np.where(cls == 0, 1.0, -1.0)
    C = np.where(y > 0, sub.Cp, sub.Cn) if params.spec.task != "regression" else np.full(y.size, sub.Cp)
    assert twin.primal(params.solver, res.w, Xb, y, C, params.svr_p, params.regularize_bias) == \
        pytest.approx(res.primal, rel=1e-10)


def _with_bias(X, bias):
    import scipy.sparse as sp
    return sp.hstack([X, np.full((X.shape[0], 1), bias)]).tocsr()


def test_the_optimum_is_the_reference_optimum(heart):
    """-s 2 -B 1 at a tight tolerance on 4 parts: the w of the reference's own solver (L-BFGS on the primal)."""
    params, sub, cls, _, _ = _single(heart, dict(solver=2, bias=1, eps=1e-8))
    res, _ = _run(heart, params, cls, sub, 4)
    X = _with_bias(heart.to_csr(), 1.0).toarray()
    y = np.where(cls == 0, 1.0, -1.0)
    C = np.ones(heart.n_rows)
    w_ref = twin.solve(2, X, y, C)
    assert twin.primal(2, res.w, X, y, C) <= twin.primal(2, w_ref, X, y, C) * (1 + 1e-9)
    assert twin.kkt_violation(2, res.w, X, y, C) <= 1e-5 * heart.n_rows


def test_the_parts_sums_are_the_whole_problems(heart):
    """f's loss, the gradient's and H d's data parts, the preconditioner's and the line search's losses over 5
    parts add up to the one-part values (to rounding), at a random w."""
    params, sub, cls, _, _ = _single(heart, dict(solver=0, bias=1))
    one = _parts(heart, params, cls, sub, 1).parts[0]
    five = _parts(heart, params, cls, sub, 5).parts
    rng = np.random.default_rng(0)
    n = one.n
    w, d, s = rng.normal(size=n) * 0.1, rng.normal(size=n), rng.normal(size=n)
    m0 = np.ones(n)
    l, pos, L, G, M = one.start(w, m0)
    parts = [p.start(w, m0 if k == 0 else None) for k, p in enumerate(five)]
    assert sum(r[0] for r in parts) == l == heart.n_rows and sum(r[1] for r in parts) == pos
    assert sum(r[2] for r in parts) == pytest.approx(L, rel=1e-13)
    np.testing.assert_allclose(sum(r[3] for r in parts), G, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(sum(r[4] for r in parts), M, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(sum(p.hv(d) for p in five), one.hv(d), rtol=1e-12, atol=1e-12)
    alphas = [1.0, 0.5, 0.25]
    np.testing.assert_allclose(sum(p.line(s, alphas) for p in five), one.line(s, alphas), rtol=1e-12)
    np.testing.assert_allclose(sum(p.line(None, [0.125]) for p in five), one.line(None, [0.125]), rtol=1e-12)


def test_rounds_and_doubles(heart):
    """A Newton step is CG steps + 2 rounds (one Hessian-vector product a CG step, the line search, the next
    gradient); the start and the certificate one each."""
    params, sub, cls, _, _ = _single(heart, dict(solver=2))
    parts = _parts(heart, params, cls, sub, 3)
    res = dnewton.solve_dnewton(parts, 2, params.eps, 1000)
    assert res.extra["rounds"] == 1 + res.extra["cg_steps"] + 2 * res.n_iter + 1
    n = parts.w_size
    # down: the CG directions, the line search's direction, the start's and the certificate's w (per part)
    assert res.extra["doubles_down"] == 3 * n * (res.extra["cg_steps"] + res.n_iter + 2)


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    """A two-class generated sparse set of 6,000 rows (3,000 rows a thread for --threads 2)."""
    return generated_set(tmp_path_factory.mktemp("dnewton") / "g", "sparse", rows=6000, features=2000,
                         nnz_per_row=20, seed=11)


@pytest.mark.parametrize("kw", [dict(solver=0), dict(solver=2, bias=1), dict(solver=11, svr_p=0.1, eps=0.001)],
                         ids=["s0", "s2", "s11"])
def test_threads_split_one_problem_into_blocks(generated, kw, monkeypatch):
    """--threads 2 on one problem: the rows in 4 blocks summed in block order by a pool of 2 threads; the same w
    as the blocks run one after the other (whatever the schedule), bit for bit, again on a second run; the
    single-thread run's Newton steps and lines, w within 1e-7."""
    monkeypatch.setattr(common, "THREAD_MIN_NNZ", 10_000)        # the generated set's 120,000 take threads
    params, sub, cls, ref, ref_lines = _single(generated, kw)
    lines = []
    m = llsvm.train(generated, threads=2, say=lines.append, **kw)
    again = llsvm.train(generated, threads=2, say=lambda t: None, **kw)
    r = m.meta["results"][0]
    np.testing.assert_array_equal(r.w, again.meta["results"][0].w)
    blocks = dnewton.LocalParts([dnewton.NewtonPart(b, params.solver, params.regularize_bias, params.svr_p,
                                                    kept=True)
                                 for b in dnewton.split_blocks(sub, 4)])
    seq = dnewton.solve_dnewton(blocks, params.solver, params.eps, 1000, params.regularize_bias, p=params.svr_p,
                                keep_xs=True)
    np.testing.assert_array_equal(r.w, seq.w)
    assert (r.primal, r.dual) == (seq.primal, seq.dual)
    assert r.extra["rounds"] == seq.extra["rounds"] and r.n_iter == ref.n_iter
    assert [x.split(" CG")[0] for x in lines] == [x.split(" CG")[0] for x in ref_lines]
    assert np.abs(r.w - ref.w).max() <= 1e-7 * np.abs(ref.w).max()
    assert r.primal == pytest.approx(ref.primal, rel=1e-10)


def test_threads_go_to_the_classes_when_there_are_several(load):
    """More than one problem (one-vs-rest): the threads run the classes side by side, each on one thread, and the
    model is the single-thread model bit for bit, as before."""
    ds = load("vehicle.scale")
    a = llsvm.train(ds, solver=2, threads=2)
    b = llsvm.train(ds, solver=2, threads=1)
    assert b"".join(a.text_chunks()) == b"".join(b.text_chunks())
    assert all("rounds" not in r.extra for r in a.meta["results"])


def test_a_small_problem_stays_on_one_thread(heart, generated):
    """Below THREAD_MIN_NNZ non-zeros (4 million) the split does not pay: the single-thread run, bit for bit."""
    for ds in (heart, generated):
        a = llsvm.train(ds, solver=2, threads=2)
        b = llsvm.train(ds, solver=2, threads=1)
        np.testing.assert_array_equal(a.W, b.W)
        assert "rounds" not in a.meta["results"][0].extra


def test_kept_products_match_the_passes_they_replace(generated):
    """-s 0 on threads keeps X s from CG's products (hv_kept, line_kept), X 0 without a pass and the certificate from
    the parts' state: the same Newton steps as the passes give, w within 1e-10, primal and dual within 1e-12
    (relative), and fewer passes over the rows (counted: the kernel calls that read the rows)."""
    params, sub, cls, ref, _ = _single(generated, dict(solver=0))
    calls = {}

    def counted(kept):
        parts = [dnewton.NewtonPart(b, 0, params.regularize_bias, kept=kept) for b in dnewton.split_blocks(sub, 4)]
        for part in parts:
            part.fun.k = _Counting(part.fun.k, calls.setdefault(kept, {}))
        return dnewton.solve_dnewton(dnewton.LocalParts(parts), 0, params.eps, 1000, params.regularize_bias,
                                     keep_xs=kept)

    exact, kept = counted(False), counted(True)
    assert kept.n_iter == exact.n_iter and kept.extra["cg_steps"] == exact.extra["cg_steps"]
    assert np.abs(kept.w - exact.w).max() <= 1e-10 * np.abs(exact.w).max()
    assert kept.primal == pytest.approx(exact.primal, rel=1e-12)
    assert kept.dual == pytest.approx(exact.dual, rel=1e-12)
    assert kept.gap == pytest.approx(exact.gap, rel=1e-6, abs=1e-9 * exact.primal)
    assert kept.nSV == exact.nSV
    # passes over the rows: the exact run reads them for X w (start, certificate), each line search's X s and the
    # certificate's gradient and dual point; the kept run for the gradients and Hessian products only
    n_parts = 4
    assert calls[False]["line_losses"] == n_parts * exact.n_iter and "line_losses" not in calls[True]
    assert "loss" not in calls[True] and calls[False]["loss"] == 2 * n_parts
    assert calls[True]["hv_rows_kept"] == calls[False]["hv_rows"] == n_parts * exact.extra["cg_steps"]


def test_hv_rows_kept_builds_x_s_as_cg_builds_s(generated):
    """hv_rows_kept's X s = sum_k carry_k X d_k against X (sum_k carry_k d_k) from line_losses, and its products
    against hv_rows', bit for bit."""
    params, sub, cls, ref, _ = _single(generated, dict(solver=0))
    a, b = (dnewton.NewtonPart(sub, 0, params.regularize_bias) for _ in range(2))
    rng = np.random.default_rng(3)
    w = rng.standard_normal(a.n) * 0.01
    for part in (a, b):
        part.start(w, None)
    s = np.zeros(a.n)
    carry = 0.0
    for step in range(4):
        d = rng.standard_normal(a.n)
        out_a, out_b = a.hv_kept(d, carry, step == 0), b.hv(d)
        np.testing.assert_array_equal(out_a, out_b)
        carry = float(rng.uniform(0.1, 2.0))
        s += carry * d
    alphas = [1.0, 0.5, 0.25]
    kept = a.line_kept(carry, alphas)
    exact = b.line(s, alphas)
    np.testing.assert_allclose(kept, exact, rtol=1e-12)
    np.testing.assert_allclose(a.fun.k.loss_kept(), b.fun.k.loss(w), rtol=1e-12)


class _Counting:
    """A NewtonFun's calls counted by name (the kernel methods each read the rows at most once)."""

    def __init__(self, k, counts):
        self._k, self._counts = k, counts

    def __getattr__(self, name):
        attr = getattr(self._k, name)
        if callable(attr):
            def call(*args):
                self._counts[name] = self._counts.get(name, 0) + 1
                return attr(*args)
            return call
        return attr


@pytest.mark.parametrize("kw", [dict(solver=0), dict(solver=2, bias=1), dict(solver=11, svr_p=0.1, eps=0.001),
                                dict(solver=2, bias=1, regularize_bias=False)],
                         ids=["s0", "s2", "s11", "s2-R"])
def test_the_gradient_pass_leaves_the_preconditioner_bit_for_bit(generated, kw):
    """NewtonFun.grad computes diag(H) in its pass over the rows, and the next preconditioner takes it: the same M,
    bit for bit, as the preconditioner's own pass (after grad_rows, which leaves no diagonal)."""
    params, sub, cls, ref, _ = _single(generated, kw)
    k = make_fun(sub, params.solver, params.regularize_bias, params.svr_p).k
    rng = np.random.default_rng(5)
    w = rng.standard_normal(sub.w_size) * 0.05
    g, G = np.empty(sub.w_size), np.empty(sub.w_size)
    M_fused, M_pass = np.empty(sub.w_size), np.empty(sub.w_size)
    k.fun(w)
    k.grad(w, g)
    k.preconditioner(M_fused, 0.01)
    k.grad_rows(G)
    k.preconditioner(M_pass, 0.01)
    assert k.sizeI > 0
    np.testing.assert_array_equal(M_fused, M_pass)
    expected = w + k.factor * G
    if not params.regularize_bias:
        expected[-1] -= w[-1]
    np.testing.assert_array_equal(g, expected)          # and the gradient is grad_rows' own
