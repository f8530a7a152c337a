"""-s local1d and -s project1d (issue 17): cext/_oned.pyx against the NumPy twin (tests/reference/oned_twin.py),
cvxopt's 1-D QP, libsvm-official's linear optimum and liblinear-official's predict."""
import json
import math

import numpy as np
import pytest
import scipy.sparse as sp
from click.testing import CliRunner
from liblinear import liblinearutil as llu

import llsvm
from llsvm._ext import _oned as K
from llsvm._ext import _random
from llsvm.cli.predict import main as predict_main
from llsvm.cli.train import main as train_main
from llsvm.dataset import CSRDataset
from llsvm.solvers import oned
from llsvm.solvers.common import Subproblem
from llsvm.options import OneDOptions
from llsvm.params import Params
from reference import oned_twin as T

from conftest import assert_exit


def instance(rng, n, ties=False, shift=1.0):
    p = rng.normal(size=n)
    y = np.where(rng.random(n) < 0.5, 1, -1).astype(np.int8)
    y[0], y[1] = 1, -1
    p = p + shift * y
    if ties:
        p = np.round(p * 2) / 2
    return p, y


def problem(seed, n=300, d=6, density=1.0, classes=2):
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=density, random_state=rng, format="csr") if density < 1 else \
        sp.csr_matrix(rng.normal(size=(n, d)) * rng.uniform(0.5, 3, size=d))
    wtrue = rng.normal(size=d)
    s = X @ wtrue + 0.3 * rng.normal(size=n)
    if classes == 2:
        y = np.where(s > np.median(s), 1.0, -1.0)
    else:
        y = np.digitize(s, np.quantile(s, np.linspace(0, 1, classes + 1)[1:-1])).astype(float) + 1
    return X, y


def sub_of(X, y, Cp=1.0, Cn=1.0):
    ds = CSRDataset.from_csr(sp.csr_matrix(X), y)
    return ds, Subproblem(ds, np.where(y > 0, 1, -1).astype(np.int8), Cp, Cn, bias=1.0)


def c_local(X, y, max_iter, norm="unit", exact=False, Cp=1.0, Cn=1.0):
    """The C LocalSVM on (X, y) with the whole trace."""
    _, sub = sub_of(X, y, Cp, Cn)
    params = Params(solver="local1d", C=1.0, max_iter=max_iter,
                    options=OneDOptions(oned_norm=norm, oned="exact" if exact else "scan")).check()
    return oned.run(sub, params, trace_rows=2 * max_iter)


# -- the scan -----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("ties", [False, True])
@pytest.mark.parametrize("costs", [(1.0, 1.0), (2.0, 0.5), (0.3, 3.0)])
def test_scan_slack_is_the_direct_hinge_sum(ties, costs):
    """Every candidate of the corrected scan: its slack (2i - v (P1 - P-1), or the weighted form) equals the hinge
    sum of its hyperplane computed directly, to 1e-9."""
    rng = np.random.default_rng(1)
    checked = 0
    for _ in range(200):
        p, y = instance(rng, int(rng.integers(2, 60)), ties)
        valid, v, b, slack, l = T.scan_candidates(p, y, 1.7, *costs)
        for i in np.flatnonzero(valid):
            direct = T.hinge_sum(p, y, v[i], b[i], *costs)
            assert slack[i] == pytest.approx(direct, rel=1e-9, abs=1e-9)
            assert l[i] == pytest.approx(0.5 * 1.7 * v[i] ** 2 + direct, rel=1e-9)
            checked += 1
    assert checked > 1000


def test_scan_c_equals_twin_bit_for_bit():
    rng = np.random.default_rng(2)
    for k in range(300):
        p, y = instance(rng, int(rng.integers(2, 80)), ties=k % 3 == 0, shift=rng.uniform(-0.5, 2))
        costs = (1.0, 1.0) if k % 2 else (1.5, 0.7)
        scale2 = float(rng.uniform(0.1, 3))
        v, b, l = K.scan(p, y, scale2, *costs)
        tv, tb, tl, _ = T.svm1d_scan(p, y, scale2, *costs)
        if math.isinf(tl):
            assert math.isinf(l)
        else:
            assert (v, b, l) == (tv, tb, tl)


def test_scan_without_a_pair_is_infinite():
    p = np.array([0.0, 1.0, 2.0, 3.0])
    y = np.array([1, 1, -1, -1], np.int8)          # every +1 below every -1: no pair has v > 0
    assert math.isinf(K.scan(p, y)[2]) and math.isinf(T.svm1d_scan(p, y)[2])


def test_scan_never_below_the_qp_and_equal_with_margin_points():
    """1,000 random instances (N <= 40): the scan's loss is never below the 1-D QP optimum (cvxopt); it equals it
    when the optimum has v > 0 and a free margin point (0 < alpha < C) in each class (one cost for both classes: the
    scan's pairs have equal violator counts, which KKT gives only then); the exact solver (C and twin) equals it
    always."""
    rng = np.random.default_rng(3)
    equal_cases = 0
    for k in range(1000):
        n = int(rng.integers(4, 41))
        p, y = instance(rng, n, shift=rng.uniform(-0.3, 2.5))
        Cp, Cn = (1.0, 1.0) if k % 4 else (float(rng.uniform(0.2, 3)), float(rng.uniform(0.2, 3)))
        scale2 = 1.0 if k % 5 else float(rng.uniform(0.2, 4))
        qv, qb, qopt, alpha = T.qp_1d(p, y, Cp, Cn, scale2)
        sv, sb, sl = K.scan(p, y, scale2, Cp, Cn)
        assert sl >= qopt * (1 - 1e-7) - 1e-9
        C = np.where(y > 0, Cp, Cn)
        margin = np.abs(y * (qv * p + qb) - 1) < 1e-7
        free = (alpha > 1e-6 * C) & (alpha < C * (1 - 1e-6))
        if Cp == Cn and qv > 1e-6 and (margin & free & (y > 0)).any() and (margin & free & (y < 0)).any():
            assert sl == pytest.approx(qopt, rel=1e-6)
            equal_cases += 1
        ev, eb, el = K.scan(p, y, scale2, Cp, Cn, exact=True)
        assert el == pytest.approx(qopt, rel=1e-7, abs=1e-9)
        assert el == pytest.approx(scale2 * ev * ev / 2 + T.hinge_sum(p, y, ev, eb, Cp, Cn), rel=1e-12)
        if k % 50 == 0:
            assert T.oned_exact(p, y, scale2, Cp, Cn)[2] == pytest.approx(qopt, rel=1e-7, abs=1e-9)
    assert equal_cases > 100


def test_scan_misses_negative_and_interior_optima():
    """Spec finding 4: the printed claim of optimality is false; the exact solver finds what the scan cannot."""
    p = np.array([-2.0, -1.0, 1.0, 2.0, 0.5, -0.5])
    y = np.array([1, 1, -1, -1, 1, -1], np.int8)     # mostly reversed: the optimum has v < 0
    ev, _, el = K.scan(p, y, exact=True)
    assert ev < 0 and el < K.scan(p, y)[2]


# -- sorting, normals ---------------------------------------------------------------------------------------------
def test_incremental_resort_equals_a_full_sort():
    """The kernels' sort from a previous order: rows of a sparse column moved, a dense column nudged, reversed,
    random, ties; the result is the full sort's order of values (a permutation, ascending)."""
    rng = np.random.default_rng(4)
    for n in (1, 2, 23, 25, 200, 5000):
        base = np.sort(rng.normal(size=n))
        order = np.arange(n, dtype=np.int32)
        cases = [base.copy(), base[::-1].copy(), rng.normal(size=n), np.round(rng.normal(size=n)),
                 base + 1e-3 * rng.normal(size=n)]
        moved = base.copy()
        hit = rng.choice(n, size=max(1, n // 40), replace=False)
        moved[hit] += rng.normal(size=hit.size)
        cases.append(moved)
        for key in cases:
            o = K.sort_pairs(order, key)
            assert np.array_equal(np.sort(o), order)
            assert np.array_equal(key[o], np.sort(key))


def test_normal_fill_is_box_muller_on_the_project_rng():
    """_random.normal_fill replays from the state: u1 = 1 - uniform, u2 = uniform of rng_draw's 53 high bits."""
    z = _random.normal_fill(_random.rng_state(7), 9)
    st = _random.rng_state(7)
    ref = []
    while len(ref) < 9:
        u1 = 1.0 - (_random.rng_draw(st) >> 11) * 2.0 ** -53
        u2 = (_random.rng_draw(st) >> 11) * 2.0 ** -53
        r = math.sqrt(-2 * math.log(u1))
        ref += [r * math.cos(2 * math.pi * u2), r * math.sin(2 * math.pi * u2)]
    np.testing.assert_allclose(z, ref[:9], rtol=1e-14, atol=1e-15)
    big = _random.normal_fill(_random.rng_state(1), 200000)
    assert abs(big.mean()) < 0.01 and abs(big.std() - 1) < 0.01
    assert np.array_equal(_random.normal_fill(_random.rng_state(3), 5), _random.normal_fill(_random.rng_state(3), 5))


# -- LocalSVM -----------------------------------------------------------------------------------------------------
def _same_run(X, y, iters, norm="unit", Cp=1.0, Cn=1.0):
    w, out = c_local(X, y, iters, norm, Cp=Cp, Cn=Cn)
    tw = T.local_svm(X, y, Cp, Cn, iters, norm)
    assert [tuple(r) for r in out["trace"].tolist()] == tw["trace"]
    assert out["n_iter"] == tw["n_iter"] and out["reason"] == tw["reason"]
    np.testing.assert_array_equal(w, tw["w"])
    assert (out["b"], out["l_min"]) == (tw["b"], tw["l"])
    assert len(out["snapshots"]) == len(tw["snapshots"])
    for s, ts in zip(out["snapshots"], tw["snapshots"]):
        assert (s["iter"], s["l_min"], s["b"], s["t"], s["thres"]) == \
            (ts["iter"], ts["l_min"], ts["b"], ts["t"], ts["thres"])
        np.testing.assert_array_equal(s["w"], ts["w"])
    return w, out


@pytest.mark.parametrize("norm", ["unit", "paper"])
@pytest.mark.parametrize("seed,density", [(1, 1.0), (2, 0.3), (3, 0.05)])
def test_local_svm_visits_the_twins_sequence(norm, seed, density):
    X, y = problem(seed, n=250, d=7, density=density)
    _same_run(X, y, 1024, norm, *((1.0, 1.0) if seed != 2 else (1.5, 0.6)))


@pytest.mark.parametrize("name", ["diabetes", "svmguide1"])
def test_local_svm_sequence_on_shared_sets(shared_plain, name):
    """The spec's check: the same (coordinate, sign, accept) sequence as the twin for 2^10 iterations."""
    ds = llsvm.read_dataset(shared_plain(name), class_labels=True)
    X = ds.to_csr()
    labels, _ = llsvm.solvers.common.group_classes(ds.y)
    y = np.where(ds.y == labels[0], 1.0, -1.0)
    w, out = _same_run(X, y, 1024)
    assert out["accepted"] > 50 and out["rejected"] > 50


def test_unit_mode_loss_is_the_primal_and_never_increases():
    X, y = problem(5, n=400, d=9)
    w, out = c_local(X, y, 2048)
    assert out["l_min"] == pytest.approx(T.primal(X, y, w, out["b"]), rel=1e-9)
    for s in out["snapshots"]:
        assert s["l_min"] == pytest.approx(T.primal(X, y, s["w"], s["b"]), rel=1e-9)
    ls = [s["l_min"] for s in out["snapshots"]]
    assert all(b <= a for a, b in zip(ls, ls[1:]))
    # paper mode's loss is not the primal
    wp, outp = c_local(X, y, 2048, "paper")
    assert outp["l_min"] != pytest.approx(T.primal(X, y, wp, outp["b"]), rel=1e-3)


def test_exact_mode_is_at_least_as_good_and_its_loss_is_the_primal():
    X, y = problem(6, n=200, d=5)
    w, out = c_local(X, y, 512, exact=True)
    assert out["l_min"] == pytest.approx(T.primal(X, y, w, out["b"]), rel=1e-9)
    ws, outs = c_local(X, y, 512)
    assert out["l_min"] <= outs["l_min"] * (1 + 1e-9)


def test_local_svm_stops_when_the_step_cannot_change_anything():
    X, y = problem(7, n=60, d=2)
    w, out = c_local(X, y, 100000)
    assert out["reason"] == "step" and out["n_iter"] < 100000
    assert out["t"] < 1e-15 * (np.linalg.norm(w) + 1) or out["thres"] - 1 < 1e-15


def test_local_svm_near_the_libsvm_optimum(shared_plain):
    """B1 in small: diabetes, unit mode, C = 1, 2^12 iterations: within 0.5 % of the optimum (libsvm-official's
    linear kernel with a free bias; cvxopt's dual value is the certified lower bound used here)."""
    from cvxopt import matrix, solvers
    ds = llsvm.read_dataset(shared_plain("diabetes"), class_labels=True)
    X = ds.to_csr()
    y = np.where(ds.y == llsvm.solvers.common.group_classes(ds.y)[0][0], 1.0, -1.0)
    model = llsvm.train(ds, solver="local1d", max_iter=4096)
    primal = model.meta["results"][0].primal
    Z = X.multiply(y[:, None]).tocsr()
    Q = (Z @ Z.T).toarray()
    n = len(y)
    sol = solvers.qp(matrix(Q), matrix(-np.ones(n)), matrix(np.vstack([-np.eye(n), np.eye(n)])),
                     matrix(np.r_[np.zeros(n), np.ones(n)]), matrix(y[None, :]), matrix(0.0),
                     options={"show_progress": False, "abstol": 1e-10, "reltol": 1e-10, "feastol": 1e-10})
    a = np.clip(np.array(sol["x"]).ravel(), 0, 1)
    dual = a.sum() - 0.5 * a @ Q @ a
    assert dual <= primal <= dual * 1.005


# -- ProjectSVM ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("norm", ["unit", "paper"])
def test_project_svm_replays_the_twin(norm):
    X, y = problem(8, n=300, d=5, density=0.6)
    _, sub = sub_of(X, y)
    params = Params(solver="project1d", max_iter=200, options=OneDOptions(oned_norm=norm)).check()
    w, out = oned.run(sub, params, seed=11)
    tw = T.project_svm(X, y, 1.0, 1.0, 200, _random.normal_fill, _random.rng_state(11), norm)
    np.testing.assert_allclose(w, tw["w"], rtol=1e-9, atol=1e-12)
    assert out["l_min"] == pytest.approx(tw["l"], rel=1e-9)
    assert out["accepted"] == len(tw["accepted"])
    if norm == "unit":
        assert out["l_min"] == pytest.approx(T.primal(X, y, w, out["b"]), rel=1e-9)


def test_project_svm_target_loss_stops():
    X, y = problem(9, n=300, d=3)
    ds, sub = sub_of(X, y)
    full = oned.run(sub, Params(solver="project1d", max_iter=256).check(), seed=1)[1]
    target = full["snapshots"][3]["l_min"]          # the loss after 8 directions
    _, out = oned.run(sub, Params(solver="project1d", max_iter=256,
                                  options=OneDOptions(target_loss=target)).check(), seed=1)
    assert out["reason"] == "target" and out["n_iter"] <= 8 and out["l_min"] <= target


# -- the driver, the model file, the CLI --------------------------------------------------------------------------
def write(path, X, y):
    X = sp.csr_matrix(X)
    with open(path, "w") as f:
        for i in range(X.shape[0]):
            row = X[i]
            f.write(f"{y[i]:g} " + " ".join(f"{j + 1}:{v:.17g}" for j, v in zip(row.indices, row.data)) + "\n")
    return path


@pytest.mark.parametrize("solver", ["local1d", "project1d"])
@pytest.mark.parametrize("classes", [2, 3])
def test_model_file_is_liblinears_and_its_predict_agrees(tmp_path, solver, classes):
    X, y = problem(10, n=300, d=6, classes=classes)
    data = write(tmp_path / "d.txt", X, y)
    r = CliRunner().invoke(train_main, ["-s", solver, "--max-iter", "256", str(data), str(tmp_path / "m")])
    assert_exit(r, 0)
    text = (tmp_path / "m").read_text()
    assert text.startswith("solver_type L2R_L1LOSS_SVC_DUAL\n") and "\nbias 1\n" in text
    assert f"nr_class {classes}\n" in text
    r = CliRunner().invoke(predict_main, [str(data), str(tmp_path / "m"), str(tmp_path / "out")])
    assert_exit(r, 0)
    ours = np.loadtxt(tmp_path / "out")
    yy, xx = llu.svm_read_problem(str(data), return_scipy=True)
    theirs, _, _ = llu.predict(yy, xx, llu.load_model(str(tmp_path / "m")), "-q")
    assert np.array_equal(ours, np.array(theirs))
    assert r.stdout.startswith("Accuracy = ")
    assert text.count("\n") == 6 + X.shape[1] + 1


def test_written_model_primal_is_the_reported_loss(tmp_path):
    """Unit mode: l_min equals the primal of the model as written and read back (w and w_(n+1) = b), to 1e-9."""
    X, y = problem(11, n=300, d=6)
    data = write(tmp_path / "d.txt", X, y)
    r = CliRunner().invoke(train_main, ["-s", "local1d", "-B", "2", "--json", str(tmp_path / "j"), str(data),
                                        str(tmp_path / "m")])
    assert_exit(r, 0)
    m = llsvm.load_model(str(tmp_path / "m"))
    assert m.bias == 2.0
    w = m.W[:6, 0]
    b = m.W[6, 0] * m.bias
    if m.label[0] != 1:
        w, b = -w, -b
    meta = json.loads((tmp_path / "j").read_text())
    assert meta["solver"] == "local1d" and meta["model_solver_type"] == "L2R_L1LOSS_SVC_DUAL"
    assert meta["dual"] is None and meta["gap"] is None
    cls = meta["classes"][0]["oned"]
    assert cls["l_min"] == pytest.approx(T.primal(X, y, w, b), rel=1e-9)
    assert meta["primal"] == pytest.approx(cls["l_min"], rel=1e-9)
    assert [t["iter"] for t in cls["trace"]][:4] == [1, 2, 4, 8]
    assert cls["accepted"] + cls["rejected"] == cls["svm1d_calls"]
    assert f"Objective value = {meta['primal']:f}\n" in r.stdout


@pytest.mark.parametrize("args,message", [
    (["-B", "0"], "ERROR: -B 0: -s local1d fits a free bias"),
    (["-e", "0.1"], "ERROR: -e applies only to solvers with a stopping tolerance, not to -s local1d (it runs "
                    "--max-iter steps)"),
    (["--target-loss", "3"], "ERROR: --target-loss applies only to -s project1d, not to -s local1d"),
    (["--max-seconds", "0"], "ERROR: --max-seconds 0: must be a positive finite number"),
    (["-C"], "ERROR: Warm-start parameter search only available for"),
])
def test_refusals(tmp_path, args, message):
    X, y = problem(12, n=50, d=3)
    data = write(tmp_path / "d.txt", X, y)
    r = CliRunner().invoke(train_main, ["-s", "local1d", *args, str(data), str(tmp_path / "m")])
    assert_exit(r, 1)
    assert r.stderr.startswith(message), r.stderr
    assert not (tmp_path / "m").exists()


def test_max_seconds_stops_and_warns(tmp_path):
    """--max-seconds stops the loop first whatever the machine's speed: without it this problem runs 9,030
    iterations (4.8 s on 2 quiet cores) before the step rule stops it, so a machine would have to be ~500x faster to
    finish within 0.01 s; a slower or busy machine only reaches the time limit after fewer iterations."""
    X, y = problem(13, n=20000, d=30)
    data = write(tmp_path / "d.txt", X, y)
    r = CliRunner().invoke(train_main, ["-s", "local1d", "--max-iter", "100000000", "--max-seconds", "0.01",
                                        "--json", str(tmp_path / "j"), str(data), str(tmp_path / "m")])
    assert_exit(r, 0)
    assert "WARNING: reaching --max-seconds 0.01" in r.stderr
    meta = json.loads((tmp_path / "j").read_text())
    assert meta["classes"][0]["oned"]["stop"] == "time" and meta["converged"] is False
    assert meta["n_iter"] < 100000000


def test_one_class_and_weights():
    X, y = problem(14, n=100, d=3)
    m = llsvm.train(X, np.ones(100), solver="local1d")
    assert np.all(m.predict(CSRDataset.from_csr(X, np.ones(100))) == 1)
    # -w1 2: the C scan's weighted loss is the twin's
    w, out = c_local(X, y, 256, Cp=2.0, Cn=1.0)
    tw = T.local_svm(X, y, 2.0, 1.0, 256)
    assert out["l_min"] == tw["l"] and out["l_min"] == pytest.approx(T.primal(X, y, w, out["b"], 2.0, 1.0), rel=1e-9)
