"""-s olsvm | olsvm-rhl | norma | pegaz | pegasos (llsvm/solvers/online.py): the drivers against the NumPy twin
(tests/reference/online_twin.py) on the pair's rows in the driver's order, the LIBSVM model file against
libsvm-official's svm_predict, one-vs-one against the binary runs of its pairs, and the options and refusals."""
import numpy as np
import pytest
import scipy.sparse as sp
from click.testing import CliRunner
from libsvm import svmutil

import llsvm
from llsvm.cli.train import main as train_main
from llsvm.dataset import CSRDataset
from llsvm.solvers import online
from llsvm.solvers.common import Seeds
from llsvm.solvers.ovo import Pairs
from llsvm.options import OnlineOptions
from llsvm.params import Params
from reference import online_twin as OT
from reference.smo_twin import kernel_matrix

from conftest import assert_exit

SOLVERS = ("olsvm", "olsvm-rhl", "norma", "pegaz", "pegasos")


def blobs(seed, l, n, labels, spread=1.2):
    g = np.random.default_rng(seed)
    centres = g.standard_normal((len(labels), n)) * spread
    k = g.integers(0, len(labels), l)
    X = centres[k] + g.standard_normal((l, n))
    X[g.random((l, n)) < 0.2] = 0.0
    return X, np.asarray(labels, np.float64)[k]


def fit(X, y, solver, C=1.0, seed=1, **opts):
    ds = CSRDataset.from_csr(sp.csr_matrix(X), y)
    model = llsvm.train(ds, params=Params(solver=solver, C=C, seed=seed, options=OnlineOptions(**opts)))
    return ds, model


def twin(solver, K, yp, C, order, opts, l):
    """The twin's run of one pair (yp: +1/-1 in the pair's order)."""
    e = opts.get("epochs", 1)
    avg = opts.get("average", False)
    if solver == "olsvm":
        return OT.olsvm_3b(K, yp, C, order, epochs=e, bias=opts.get("bias_update", True), average=avg)
    if solver == "olsvm-rhl":
        return OT.olsvm_3a(K, yp, C, order, epochs=e, average=avg)
    if solver == "norma":
        kivinen = "eta0" in opts or "lam" in opts
        eta0 = opts.get("eta0", 1.0) if kivinen else None
        lam = opts.get("lam", 1.0 / (C * l)) if kivinen else None
        return OT.norma(K, yp, C, order, epochs=e, eta0=eta0, lam=lam, average=avg)
    if solver == "pegaz":
        return OT.pegaz(K, yp, C, order, epochs=e, average=avg)
    lam = opts.get("lam", OT.pegasos_lambda(C, l))
    return OT.pegasos_kernel(K, yp, lam, order, epochs=e, k=opts.get("batch", 1),
                             projection=opts.get("projection", False), average=avg)


CONFIGS = [
    ("olsvm", {}), ("olsvm", {"epochs": 3, "bias_update": False}), ("olsvm", {"average": True, "epochs": 2}),
    ("olsvm-rhl", {"epochs": 2}), ("norma", {}), ("norma", {"eta0": 0.5}), ("norma", {"lam": 0.02, "epochs": 2}), ("pegaz", {"epochs": 2}),
    ("pegasos", {"epochs": 2}), ("pegasos", {"batch": 5, "projection": True, "epochs": 3}),
    ("olsvm", {"kernel_type": 0}), ("pegasos", {"kernel_type": 0, "epochs": 2}), ("olsvm", {"original": True}),
]


@pytest.mark.parametrize("solver,opts", CONFIGS, ids=[f"{s}-{'-'.join(map(str, o))}" for s, o in CONFIGS])
@pytest.mark.parametrize("labels", [(1, -1), (-1, 1), (3, 1, 2)], ids=["two", "two-minus-first", "three"])
def test_pairs_equal_the_twin(solver, opts, labels):
    """Every pair's coefficients (sv_coef) and rho equal the twin's alpha and -b on the pair's rows, visited in the
    order the driver's seeded shuffle gives."""
    X, y = blobs(3, 150, 4, labels)
    C = 2.0
    kw = dict(opts)
    if kw.get("kernel_type", 2) != 0:
        kw["gamma"] = 0.4
    ds, model = fit(X, y, solver, C=C, seed=5, **kw)
    pairs = Pairs(y)
    seeds = Seeds(5)
    kparams = {"kernel_type": kw.get("kernel_type", 2), "gamma": kw.get("gamma", 0.0)}
    assert [int(v) for v in model.label] == [int(v) for v in pairs.labels]
    sv_rows = model.meta["sv_indices"] - 1
    for p, (i, j, rows, yp) in enumerate(pairs.problems):
        order = seeds.permutation(rows.size)
        K = kernel_matrix(X[rows], X[rows], **kparams)
        tw = twin(solver, K, yp.astype(float), C, order, kw, rows.size)
        res = model.meta["results"][p]
        # the pair's coefficients as the model stores them (sv_coef[j-1] on class i's SVs, sv_coef[i] on class j's)
        coef = np.zeros(ds.n_rows)
        k = model.nr_class
        start = np.concatenate([[0], np.cumsum(model.nSV)[:-1]])
        for cls, row in ((i, j - 1), (j, i)):
            s, e = start[cls], start[cls] + model.nSV[cls]
            coef[sv_rows[s:e]] = model.sv_coef[row, s:e]
        scale = max(np.abs(tw["alpha"]).max(), 1e-300)
        np.testing.assert_allclose(coef[rows], tw["alpha"], rtol=0, atol=1e-10 * scale)
        assert res.extra["rho"] == pytest.approx(-tw.get("b", 0.0), abs=1e-10 * scale)
        assert res.extra["viol"] == [int(v) for v in tw["n_viol"]]
        assert k == len(labels)
    assert model.total_sv == np.count_nonzero(np.abs(model.sv_coef).sum(axis=0)) > 0


@pytest.mark.parametrize("solver", SOLVERS)
@pytest.mark.parametrize("labels", [(1, -1), (2, 5, 9)])
def test_libsvm_reads_the_model_and_predicts_the_same(solver, labels, tmp_path):
    X, y = blobs(7, 200, 5, labels)
    ds, model = fit(X, y, solver, C=4.0, epochs=2, gamma=0.3)
    path = tmp_path / "m.model"
    model.save(str(path))
    lm = svmutil.svm_load_model(str(path))
    rows = [{j + 1: float(v) for j, v in enumerate(r) if v != 0} for r in X]
    pred, acc, dec = svmutil.svm_predict(list(y), rows, lm, "-q")
    # the file's SVs are LIBSVM's %.8g: compare with the model as read back
    back = llsvm.load_model(str(path))
    np.testing.assert_array_equal(np.array(pred), back.predict(ds))
    ours = back.decision_function(ds)
    np.testing.assert_allclose(np.array(dec).reshape(ours.shape), ours, rtol=1e-12, atol=1e-12)
    assert acc[0] > 50.0          # above chance (a third or a half): the model is not degenerate


def test_same_seed_same_model_other_seed_other_order():
    X, y = blobs(2, 120, 3, (1, -1))
    a = fit(X, y, "olsvm", seed=3)[1].to_text()
    assert fit(X, y, "olsvm", seed=3)[1].to_text() == a
    assert fit(X, y, "olsvm", seed=4)[1].to_text() != a


def test_sigma_is_gamma():
    X, y = blobs(4, 100, 3, (1, -1))
    a = fit(X, y, "olsvm", sigma=0.5)[1]
    b = fit(X, y, "olsvm", gamma=2.0)[1]
    assert a.to_text() == b.to_text() and a.gamma == 2.0


def test_max_iter_cuts_the_run_and_says_so():
    X, y = blobs(4, 100, 3, (1, -1))
    ds = CSRDataset.from_csr(sp.csr_matrix(X), y)
    lines = []
    with pytest.warns(llsvm.ConvergenceWarning):
        m = llsvm.train(ds, params=Params(solver="olsvm", max_iter=10, options=OnlineOptions(gamma=0.5)))
    assert m.meta["results"][0].n_iter == 10 and not m.meta["results"][0].converged
    m = llsvm.train(ds, params=Params(solver="olsvm", max_iter=100, options=OnlineOptions(gamma=0.5)),
                    say=lines.append)
    assert m.meta["results"][0].n_iter == 100 and "WARNING" not in "".join(lines)


@pytest.mark.parametrize("opts,message", [
    ({"sigma": 1.0, "gamma": 0.5}, "--sigma and -g both set the kernel width"),
    ({"sigma": -1.0}, "--sigma -1: sigma must be a finite number > 0"),
    ({"epochs": 0}, "--epochs must be at least 1"),
    ({"eta0": 0.0}, "--eta0 0: eta0 must be"),
    ({"lam": float("nan")}, "--lambda nan: lambda must be"),
    ({"batch": 0}, "-k must be at least 1"),
    ({"gamma": -1.0}, "gamma < 0"),
])
def test_option_refusals(opts, message):
    with pytest.raises(llsvm.ParameterError, match=message):
        Params(solver="pegasos", options=OnlineOptions(**opts)).check()


@pytest.mark.parametrize("solver,opts,message", [
    ("olsvm", {"eta0": 1.0}, "--eta0 does not apply to -s olsvm"),
    ("pegaz", {"bias_update": False}, "--no-bias-update does not apply to -s pegaz"),
    ("norma", {"batch": 3}, "-k does not apply to -s norma"),
])
def test_foreign_options_refused_by_the_library(solver, opts, message):
    X, y = blobs(4, 50, 3, (1, -1))
    with pytest.raises(llsvm.ParameterError, match=message):
        fit(X, y, solver, **opts)


def _cli(*args):
    return CliRunner().invoke(train_main, [str(a) for a in args])


@pytest.fixture
def data_file(tmp_path):
    X, y = blobs(9, 160, 4, (1, -1))
    path = tmp_path / "d.txt"
    path.write_text("".join(f"{int(t)}" + "".join(f" {j + 1}:{v:.10g}" for j, v in enumerate(r) if v) + "\n"
                            for r, t in zip(X, y)))
    return path


def test_cli_lines_and_refusals(data_file, tmp_path):
    r = _cli("-s", "olsvm", "-g", "0.5", "-c", "2", data_file, tmp_path / "m")
    assert_exit(r, 0)
    lines = r.stdout.splitlines()
    assert lines[0] == "" and lines[1].startswith("optimization finished, #iter = 160")
    assert lines[2].startswith("violations = ") and lines[3].startswith("obj = ") and ", rho = " in lines[3]
    assert lines[4].startswith("nSV = ") and lines[5].startswith("Total nSV = ")
    r = _cli("-s", "olsvm", "-e", "0.1", data_file, tmp_path / "m2")
    assert_exit(r, 1)
    assert r.stderr == "ERROR: -e applies only to solvers with a stopping tolerance, not to -s olsvm (it runs --epochs " \
                       "passes)\n"
    r = _cli("-s", "olsvm", "-w1", "2", data_file, tmp_path / "m2")
    assert_exit(r, 1)
    assert "-wi does not apply to -s olsvm" in r.stderr
    r = _cli("-s", "olsvm", "--sigma", "1", "-g", "1", data_file, tmp_path / "m2")
    assert_exit(r, 1)
    assert not (tmp_path / "m2").exists()


@pytest.mark.parametrize("labels", [(1, -1), (1, 2, 3)])
def test_context_reuses_columns_without_changing_models(labels):
    """The grid search's context: each pair's column store kept across C values and epochs; the models are the ones
    a fresh run gives, and the later runs are served from the store."""
    X, y = blobs(6, 160, 3, labels)
    ds = CSRDataset.from_csr(sp.csr_matrix(X), y)
    context = {}
    for C in (0.5, 4.0):
        p = Params(solver="olsvm", C=C, options=OnlineOptions(gamma=0.7, epochs=2, cache_size=1.0)).check()
        with_ctx = online.fit(ds, p, llsvm.report.as_reporter(), context=context)
        fresh = online.fit(ds, p, llsvm.report.as_reporter())
        assert with_ctx.to_text() == fresh.to_text()
        hits = [r.extra["store_hits"] for r in with_ctx.meta["results"]]
        if C == 4.0:
            assert min(hits) > 0
    assert len(context) == len(labels) * (len(labels) - 1) // 2


@pytest.mark.parametrize("solver,opts", [("olsvm", {}), ("olsvm-rhl", {}), ("norma", {"epochs": 2}), ("pegaz", {}),
                                         ("pegasos", {"batch": 3}), ("smo", {"probability": 1}), ("smo", {})],
                         ids=["olsvm", "olsvm-rhl", "norma", "pegaz", "pegasos", "smo -b 1", "smo"])
def test_a_pair_alone_starts_from_the_state_the_whole_run_gives_it(solver, opts):
    """ovo.pair_states replays the draws of the pairs before each pair (their shuffles, without training): the state
    pair p starts from is the one the RNG has when the one-process run (ovo.run_pairs) starts pair p, and pair p run
    alone from it (as a Dask task runs it) gives that run's coefficients, bit for bit."""
    from llsvm.options import SMOOptions
    from llsvm.report import as_reporter
    from llsvm.solvers import ovo, smo
    X, y = blobs(4, 200, 3, (4, 1, 7, 2))
    ds = CSRDataset.from_csr(sp.csr_matrix(X), y)
    params = Params(solver=solver, seed=9, options=(SMOOptions if solver == "smo" else OnlineOptions)(**opts)).check()
    make = smo.PairsRun if solver == "smo" else online.OnlineRun
    run = make(ds, params, as_reporter())
    seen, coefs = [], []
    draw, solve = run.permutation, run.pair

    def permutation(seeds, p):
        seen.append(seeds.state.copy())        # the RNG as the run starts pair p (its draws come first)
        return draw(seeds, p)

    def pair(p, perm, reporter, held=None):
        out = solve(p, perm, reporter, held)
        coefs.append(out[0])
        return out
    run.permutation, run.pair = permutation, pair
    ovo.run_pairs(run, params.seed, as_reporter())
    states = ovo.pair_states(make(ds, params, as_reporter()), params.seed)
    assert len(states) == len(seen) == 6
    for got, want in zip(states, seen):
        np.testing.assert_array_equal(got, want)
    assert len({s.tobytes() for s in states}) == (6 if solver != "smo" or opts else 1)   # a shuffle draws
    alone = make(ds, params, as_reporter())
    for p in (5, 2):
        coef = alone.pair(p, alone.permutation(Seeds.at(states[p]), p), as_reporter())[0]
        assert coef.tobytes() == coefs[p].tobytes()
