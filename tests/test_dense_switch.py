"""-s 3 at the defaults stops where LIBLINEAR 2.50 stops (issue 43); -s 3 --certify (certify=True) goes on past it to a
certified optimum: the smoothed-hinge primal Newton of llsvm/solvers/smooth_hinge.py where rows far outnumber the
features (issue 32 item 4), CG on the free dual variables of llsvm/solvers/dual_cg.py where they do not, each
certified by a duality gap computed here in NumPy and checked against cvxopt's optimum of the dual QP; runs that
LIBLINEAR's dual finishes within the gap are untouched (LIBLINEAR's model bit for bit)."""
import ctypes

import numpy as np
import pytest
import scipy.sparse as sp

import llsvm
from llsvm._ext import _linear as K
from llsvm.solvers.common import Subproblem
from llsvm.solvers.dcd import solve_dcd


def stalling_set(n=3000, seed=0, scale=100.0):
    """n >> d, overlapping classes, unscaled features (skin_nonskin's shape: 3 features in 0..255): Q = Y X X^T Y
    of rank 4 with large diagonal, where dual CD creeps (a few dozen passes leave the gap near the primal)."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(0.0, scale, (n, 3))
    y = np.where(X[:, 0] - X[:, 1] + 0.3 * scale * rng.standard_normal(n) > 0, 1.0, -1.0)
    return X, y


def numpy_certificate(X, y, C, w, alpha, bias=1.0):
    """Primal at w, dual at alpha, independently: P = w.w/2 + C sum hinge, D = sum alpha - |sum alpha_i y_i x_i|^2/2."""
    Xb = np.hstack([X, np.full((X.shape[0], 1), bias)])
    primal = 0.5 * w @ w + C * np.maximum(0.0, 1.0 - y * (Xb @ w)).sum()
    wa = Xb.T @ (alpha * y)
    return primal, alpha.sum() - 0.5 * wa @ wa


def signs(model, y):
    return np.where(y == model.label[0], 1.0, -1.0)


def test_stalled_dual_switches_and_is_certified():
    X, y = stalling_set()
    model = llsvm.train(X, y, solver=3, C=1.0, bias=1.0, max_iter=30, certify=True)
    r = model.meta["results"][0]
    assert r.extra["switched_to_primal"] and r.extra["dual_iterations"] == 30
    assert r.extra["certify_method"] == "smoothed_hinge"
    assert r.converged
    ys = signs(model, y)
    w = model.W[:, 0]
    assert np.all(r.alpha >= 0.0) and np.all(r.alpha <= 1.0)
    primal, dual = numpy_certificate(X, ys, 1.0, w, r.alpha)
    assert primal - dual <= 1e-3 * primal
    assert primal == pytest.approx(r.primal, rel=1e-9) and dual == pytest.approx(r.dual, rel=1e-9)
    # the dual alone at the same limit is far from it: the switch is what certifies
    sub = Subproblem(llsvm.CSRDataset.from_csr(sp.csr_matrix(X), y), ys.astype(np.int8), 1.0, 1.0, bias=1.0)
    d = solve_dcd(sub, True, 0.1, 30)
    assert d.gap > 0.1 * d.primal and primal < d.primal


def test_smooth_hinge_reaches_the_optimum_of_a_long_dual_run():
    """The certified primal agrees with a long dual run's (both within their gaps of the same optimum)."""
    X, y = stalling_set(n=600, seed=3, scale=10.0)
    fast = llsvm.train(X, y, solver=3, C=1.0, bias=1.0, max_iter=5, certify=True)
    long = llsvm.train(X, y, solver=3, C=1.0, bias=1.0, max_iter=200000, eps=1e-4)
    rf, rl = fast.meta["results"][0], long.meta["results"][0]
    assert rf.extra.get("switched_to_primal") and not rl.extra.get("switched_to_primal")
    assert rl.gap <= 1e-3 * rl.primal
    assert abs(rf.primal - rl.primal) <= rf.gap + rl.gap


def test_converging_run_is_untouched():
    """Where the dual finishes before its limit there is no switch: the model is solve_dcd's (LIBLINEAR's path)."""
    X, y = stalling_set(n=500, seed=1, scale=1.0)
    model = llsvm.train(X, y, solver=3, C=1.0, bias=1.0)
    r = model.meta["results"][0]
    assert "switched_to_primal" not in r.extra and r.n_iter < 1000


def test_huber_slope_against_numpy():
    rng = np.random.default_rng(5)
    z, xs, C = rng.standard_normal(1000), rng.standard_normal(1000), rng.uniform(0.5, 2.0, 1000)
    for delta, t in ((1.0, 0.0), (0.1, 0.7), (1e-3, -0.2)):
        zt = z - t * xs
        a = np.clip(zt / delta, 0.0, 1.0)
        band = (zt > 0) & (zt < delta)
        slope, curv = K.huber_slope(z, xs, C, delta, t)
        assert slope == pytest.approx(float((C * a) @ xs), rel=1e-12, abs=1e-12)
        assert curv == pytest.approx(float((C[band] * xs[band]) @ xs[band]) / delta, rel=1e-12)


def test_a_dual_that_creeps_switches_at_the_stall_check():
    """At STALL_CHECK_ITER iterations a gap above STALL_GAP of the primal switches to the primal Newton (without
    waiting for the limit): the same certified optimum as the switch at the limit, the check's gap reported."""
    from llsvm.solvers import dcd
    X, y = stalling_set()
    lines = []
    model = llsvm.train(X, y, solver=3, C=1.0, bias=1.0, say=lines.append, warn=lines.append, certify=True)
    r = model.meta["results"][0]
    assert r.extra["dual_iterations"] == dcd.STALL_CHECK_ITER and r.extra["dual_stalled"] > dcd.STALL_GAP
    assert r.extra["switched_to_primal"] and r.converged
    assert any("WARNING: the dual stalls" in s for s in lines) and not any("reaching max" in s for s in lines)
    primal, dual = numpy_certificate(X, signs(model, y), 1.0, model.W[:, 0], r.alpha)
    assert primal - dual <= 1e-3 * primal
    at_limit = llsvm.train(X, y, solver=3, C=1.0, bias=1.0, max_iter=30, certify=True).meta["results"][0]
    assert abs(primal - at_limit.primal) <= r.gap + at_limit.gap


def test_a_dual_that_progresses_passes_the_stall_check(monkeypatch):
    """A run past STALL_CHECK_ITER whose gap is small goes on as LIBLINEAR's (the check only reads): the model is
    the one without the check, bit for bit."""
    from llsvm.solvers import dcd
    X, y = stalling_set(n=500, seed=1, scale=1.0)
    monkeypatch.setattr(dcd, "STALL_CHECK_ITER", 10)
    checked = llsvm.train(X, y, solver=3, C=1.0, bias=1.0, eps=1e-6, max_iter=2000, certify=True)
    r = checked.meta["results"][0]
    assert r.n_iter > 10 and "dual_stalled" not in r.extra and "switched_to_primal" not in r.extra
    monkeypatch.setattr(dcd, "STALL_CHECK_ITER", 10 ** 9)
    plain = llsvm.train(X, y, solver=3, C=1.0, bias=1.0, eps=1e-6, max_iter=2000, certify=True)
    np.testing.assert_array_equal(checked.W, plain.W)
    default = llsvm.train(X, y, solver=3, C=1.0, bias=1.0, eps=1e-6, max_iter=2000)
    np.testing.assert_array_equal(checked.W, default.W)      # a certified run that needs nothing more: LIBLINEAR's


def test_a_certified_point_at_the_limit_is_liblinears():
    """At the iteration limit, a dual whose duality gap is already within 1e-3 of the primal is kept as LIBLINEAR
    returns it (its warning, converged False), with no switch: the model is w(alpha) of the dual's alpha."""
    X, y = stalling_set(n=500, seed=1, scale=1.0)
    lines = []
    limit = llsvm.train(X, y, solver=3, C=1.0, bias=1.0, eps=1e-9, max_iter=150, say=lines.append, certify=True)
    r = limit.meta["results"][0]
    assert r.n_iter == 150 and "switched_to_primal" not in r.extra and not r.converged
    assert any("reaching max number of iterations" in s for s in lines) and not any("Switching" in s for s in lines)
    ys = signs(limit, y)
    primal, dual = numpy_certificate(X, ys, 1.0, limit.W[:, 0], r.alpha)
    assert primal - dual <= 1e-3 * primal
    Xb = np.hstack([X, np.ones((X.shape[0], 1))])
    np.testing.assert_allclose(limit.W[:, 0], Xb.T @ (r.alpha * ys), rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("threads", [1, 2])
def test_the_stall_checks_certificate_is_the_results(threads):
    """A run stopped by the stall check returns the check's certificate: the duality gap above STALL_GAP, exact at
    the returned (w, alpha) by NumPy, with w = w(alpha) (made so in row order on two threads)."""
    from llsvm.solvers import dcd
    X, y = stalling_set()
    ys = np.where(y > 0, 1, -1)
    sub = Subproblem(llsvm.CSRDataset.from_csr(sp.csr_matrix(X), y), ys.astype(np.int8), 1.0, 1.0, bias=1.0)
    r = solve_dcd(sub, True, 0.1, 300, threads=threads, stall_check=True)
    # the first call's end at or past STALL_CHECK_ITER (two threads: PASSCoDe's own stall guard ends a call early)
    assert dcd.STALL_CHECK_ITER <= r.n_iter < dcd.STALL_CHECK_ITER + 10 and not r.converged and r.extra["dual_stalled"] > dcd.STALL_GAP
    Xb = np.hstack([X, np.ones((X.shape[0], 1))])
    np.testing.assert_allclose(r.w, Xb.T @ (r.alpha * ys), rtol=1e-9, atol=1e-9)
    primal, dual = numpy_certificate(X, ys, 1.0, r.w, r.alpha)
    assert r.primal == pytest.approx(primal, rel=1e-9) and r.dual == pytest.approx(dual, rel=1e-9)
    assert r.extra["dual_stalled"] == pytest.approx((primal - dual) / primal, rel=1e-9)


def test_defaults_stop_where_liblinear_stops():
    """At the defaults a creeping dual runs LIBLINEAR's 300 iterations, no stall check and no switch, and returns
    LIBLINEAR's point w(alpha) with its warning lines: its duality gap is far above 1e-3 (what --certify is for);
    liblinear-official stops at its limit on the same problem too, its primal as far from the optimum."""
    from liblinear import liblinearutil as LU
    X, y = stalling_set()
    lines = []
    model = llsvm.train(X, y, solver=3, C=1.0, bias=1.0, say=lines.append, warn=lines.append)
    r = model.meta["results"][0]
    assert r.n_iter == 300 and not r.converged
    assert not {"switched_to_primal", "dual_stalled", "certify_method"} & set(r.extra)
    text = "".join(lines)
    assert "WARNING: reaching max number of iterations\nUsing -s 2 may be faster (also see FAQ)\n" in text
    assert "stalls" not in text and "Switching" not in text and "CG" not in text
    ys = signs(model, y)
    Xb = np.hstack([X, np.ones((X.shape[0], 1))])
    np.testing.assert_allclose(model.W[:, 0], Xb.T @ (r.alpha * ys), rtol=1e-10, atol=1e-10)
    primal, dual = numpy_certificate(X, ys, 1.0, model.W[:, 0], r.alpha)
    assert primal - dual > 0.1 * primal
    ctypes.CDLL(None).srand(1)        # LIBLINEAR's train never seeds rand(): a fresh process's state, whatever ran before
    theirs = LU.train(ys.tolist(), [dict(enumerate(row, 1)) for row in X.tolist()], "-s 3 -B 1 -q")
    w_ll = np.array(theirs.get_decfun()[0] + [theirs.get_decfun()[1]]) * (1.0 if theirs.get_labels()[0] == 1 else -1.0)
    p_ll = 0.5 * w_ll @ w_ll + np.maximum(0.0, 1.0 - ys * (Xb @ w_ll)).sum()
    optimum = llsvm.train(X, y, solver=3, C=1.0, bias=1.0, certify=True).meta["results"][0]
    assert p_ll - optimum.primal > 0.1 * optimum.primal       # LIBLINEAR stops as far short as llsvm does


def text_like(n=400, d=3000, seed=0):
    """Rows of raw word counts (news20.t's kind, rows fewer than features): Zipf words, lognormal lengths (|x|^2 over
    four orders of magnitude), 4 topics one of which is the class, 10 % of labels flipped; dual CD creeps (the gap
    8-30 % of the primal after LIBLINEAR's 300 iterations)."""
    rng = np.random.default_rng(seed)
    p = 1.0 / np.arange(1, d + 1) ** 1.1
    p /= p.sum()
    topic = rng.integers(0, 4, n)
    rows = np.zeros((n, d))
    for i in range(n):
        words = (rng.choice(d, size=int(rng.lognormal(4.0, 1.2)) + 1, p=p) + 37 * topic[i]) % d
        rows[i] = np.bincount(words, minlength=d)
    y = np.where(topic == 0, 1.0, -1.0)
    y[rng.random(n) < 0.1] *= -1
    return sp.csr_matrix(rows), y


def qp_optimum(X, y, C=1.0):
    """The -s 3 dual's optimum by cvxopt's interior-point QP (an independent solver): min 1/2 a'Qa - 1'a, 0 <= a <= C,
    Q = (y x_i . y x_j) with the bias coordinate 1; returns the primal at w(a*)."""
    from cvxopt import matrix, solvers
    Xb = np.hstack([X.toarray(), np.ones((X.shape[0], 1))])
    Z = y[:, None] * Xb
    n = len(y)
    Q = Z @ Z.T
    solvers.options.update(show_progress=False, abstol=1e-10, reltol=1e-10, feastol=1e-10)
    sol = solvers.qp(matrix(Q), matrix(-np.ones(n)), matrix(np.vstack([-np.eye(n), np.eye(n)])),
                     matrix(np.concatenate([np.zeros(n), np.full(n, C)])))
    a = np.clip(np.array(sol["x"]).ravel(), 0.0, C)
    w = Z.T @ a
    return 0.5 * w @ w + C * np.maximum(0.0, 1.0 - Z @ w).sum(), a.sum() - 0.5 * w @ w


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_certify_by_cg_on_text_like_rows(seed):
    """Rows fewer than features: --certify goes on by CG on the free dual variables to a duality gap <= 1e-3 of the
    primal, exact by NumPy at the returned (w, alpha), and within it of cvxopt's optimum; the default run stops
    short of it at LIBLINEAR's limit."""
    X, y = text_like(seed=seed)
    default = llsvm.train(X, y, solver=3, C=1.0, bias=1.0).meta["results"][0]
    lines = []
    model = llsvm.train(X, y, solver=3, C=1.0, bias=1.0, certify=True, say=lines.append)
    r = model.meta["results"][0]
    assert r.extra["certify_method"] == "dual_cg" and r.converged and r.extra["primal_rounds"] >= 1
    assert "Going on by CG on the free dual variables" in "".join(lines)
    ys = signs(model, y)
    assert np.all(r.alpha >= 0.0) and np.all(r.alpha <= 1.0)
    primal, dual = numpy_certificate(X.toarray(), ys, 1.0, model.W[:, 0], r.alpha)
    assert primal - dual <= 1e-3 * primal
    assert primal == pytest.approx(r.primal, rel=1e-9) and dual == pytest.approx(r.dual, rel=1e-9)
    p_star, d_star = qp_optimum(X, ys)
    assert abs(p_star - d_star) <= 1e-6 * p_star
    assert p_star - 1e-6 * p_star <= primal <= p_star + 1e-3 * p_star
    assert default.gap > 1e-3 * default.primal and default.primal > primal


def test_certify_is_an_option_of_s3_only():
    """--certify names the solver that takes it; the CLI refuses it elsewhere, naming -s 3."""
    from click.testing import CliRunner
    from llsvm.cli.train import main
    X, y = stalling_set(n=50)
    with pytest.raises(llsvm.ParameterError, match="certify"):
        llsvm.train(X, y, solver=1, certify=True)
    r = CliRunner().invoke(main, ["-s", "1", "--certify", "in", "out"])
    assert (r.exit_code, r.stderr) == (1, "ERROR: --certify applies only to -s 3, not to -s 1\n")


@pytest.mark.parametrize("extra", [[], ["--certify"]])
def test_quiet_prints_nothing_and_each_warning_comes_once(tmp_path, extra):
    """-q silences every line but errors (issue 43: LIBLINEAR's -q prints nothing here); without it each warning is
    printed once: the iteration limit, and with --certify short of the gap, that it was not reached."""
    from click.testing import CliRunner
    from llsvm.cli.train import main
    import llsvm.solvers.dual_cg as DC
    import llsvm.solvers.smooth_hinge as SH
    X, y = stalling_set(n=400)
    data = tmp_path / "d.txt"
    data.write_text("".join(f"{int(t)} " + " ".join(f"{j + 1}:{v:.6g}" for j, v in enumerate(row)) + "\n"
                            for t, row in zip(y, X)))
    mp = pytest.MonkeyPatch()
    mp.setattr(SH, "DELTA_MIN", 0.5)
    mp.setattr(DC, "MAX_ROUNDS", 0)
    try:
        args = ["-s", "3", *extra, "--max-iter", "1", "-e", "1e-9", str(data), str(tmp_path / "m")]
        quiet = CliRunner().invoke(main, ["-q", *args])
        loud = CliRunner().invoke(main, args)
    finally:
        mp.undo()
    assert quiet.exit_code == 0 and (quiet.stdout, quiet.stderr) == ("", "")
    assert loud.exit_code == 0
    text = loud.stdout + loud.stderr
    assert text.count("WARNING: reaching max number of iterations") == 1
    assert text.count("WARNING: the certified optimum was not reached") == (1 if extra else 0)
