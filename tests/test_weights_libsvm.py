"""Instance weights in LIBSVM's types (issue 46, docs/weights.md): -s smo (C-SVC), nu_svc, one_class, epsilon_svr,
nu_svr, as scikit-learn's weighted LIBSVM defines them (sklearn/svm/src/libsvm/svm.cpp): C_i = W_i C_{y_i} (C-SVC),
the box W_i and nu sum W for nu l (nu-SVC, one-class), C_i = C_{i+l} = W_i C (epsilon-SVR), the box W_i C and
C nu sum W / 2 a half (nu-SVR).

- against scikit-learn's SVC, NuSVC, SVR, NuSVR and OneClassSVM with the same sample_weight: the dual objective
  (computed from each model's attributes, the same formula) within 1e-6 relative, intercept, dual_coef_, support_
  and the predictions, on three public sets each (iris for the one-vs-one pairs);
- the kernel against its NumPy twins (tests/reference/smo_twin.py, smo_nu_twin.py) with weights, bit for bit;
- integer weights are the rows repeated (SMO at a tight -e: the decision values and each row's alpha sum to 1e-9);
- a row of weight 0 is a row absent and all weights 1 are no weights, bit for bit (-b 1 included);
- -b 1: every fold's model is the weighted model of the fold's rows (the reference re-trains the five folds with
  their rows' weights and fits the sigmoid: scikit-learn's folds come from another RNG, so its probA cannot be
  matched, and integer weights are not repeated rows for -b 1, whose folds split the rows differently);
- -v, --threads 2, the sklearn classes' refusals in scikit-learn's words, and llsvm-train -W end to end.
"""
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
import sklearn.svm as sks
from click.testing import CliRunner
from conftest import assert_exit
from sklearn.metrics.pairwise import rbf_kernel

import llsvm
import llsvm.sklearn as S
from llsvm._ext import _smo as SMO
from llsvm._ext._kpredict import sigmoid_train
from llsvm.cli.train import main as train_main
from llsvm.dataset import CSRDataset
from llsvm.options import SMOOptions
from llsvm.params import Params
from llsvm.solvers.common import Seeds
from reference import smo_nu_twin as N
from reference import smo_twin as T
from test_smo import setup
from test_smo_twin import problem
from test_weights import _weights

GAMMA = 0.1
TYPES = ("smo", "nu_svc", "one_class", "epsilon_svr", "nu_svr")
EXTRA = {"smo": {"C": 2.0}, "nu_svc": {"nu": 0.3}, "one_class": {"nu": 0.3}, "epsilon_svr": {"C": 2.0},
         "nu_svr": {"C": 2.0, "nu": 0.4}}


def _xy(load, name):
    ds = load(name)
    X = ds.to_csr().toarray()
    X /= np.maximum(np.abs(X).max(axis=0), 1e-300)      # scaled to [-1, 1]
    return X, ds.y.copy()


def _target(X, seed=1):
    rng = np.random.RandomState(seed)
    return 0.3 * (X @ rng.randn(X.shape[1])) + 0.1 * rng.randn(X.shape[0])


def _ds(X, t, w=None):
    ds = CSRDataset.from_csr(sp.csr_matrix(X), np.asarray(t, np.float64))
    return ds if w is None else ds.with_weights(w)


def _train(solver, ds, eps=1e-3, probability=0, threads=1, shrinking=1, seed=1):
    opts = SMOOptions(kernel_type=2, gamma=GAMMA, probability=probability, shrinking=shrinking)
    return llsvm.train(ds, params=Params(solver=solver, eps=eps, options=opts, threads=threads, seed=seed,
                                         **EXTRA[solver]), say=lambda s: None)


def _same_model(a, b):
    assert np.array_equal(a.rho, b.rho)
    assert np.array_equal(a.sv_coef, b.sv_coef)
    assert a.SV.n_rows == b.SV.n_rows and np.array_equal(a.SV.to_csr().toarray(), b.SV.to_csr().toarray())
    for name in ("probA", "probB", "nSV", "label"):
        va, vb = getattr(a, name, None), getattr(b, name, None)
        assert (va is None) == (vb is None) and (va is None or np.array_equal(va, vb)), name


# -- against scikit-learn's estimators -----------------------------------------------------------------------------

def _dual(kind, est, X, t, support):
    """The dual objective each LIBSVM formulation minimises (scikit-learn's and llsvm's attributes, one formula):
    f = 1/2 c'Kc + (C-SVC: -sum |c|; epsilon-SVR: epsilon sum |c| - z'c; nu-SVR: -z'c) over the support
    vectors' coefficients c (nu-SVC, one-class: 1/2 c'Kc; support: their rows of X). Binary or a regression: one
    problem."""
    c = np.asarray(est.dual_coef_).ravel()
    K = rbf_kernel(est.support_vectors_, est.support_vectors_, gamma=GAMMA)
    f = 0.5 * float(c @ K @ c)
    z = t[support] if t is not None else None
    if kind == "SVC":
        f -= np.abs(c).sum()
    elif kind == "SVR":
        f += est.epsilon * np.abs(c).sum() - float(z @ c)
    elif kind == "NuSVR":
        f -= float(z @ c)
    return f


KINDS = {"SVC": (sks.SVC, S.SVC, {"C": 2.0}), "NuSVC": (sks.NuSVC, S.NuSVC, {"nu": 0.3}),
         "SVR": (sks.SVR, S.SVR, {"C": 2.0}), "NuSVR": (sks.NuSVR, S.NuSVR, {"C": 2.0, "nu": 0.4}),
         "OneClassSVM": (sks.OneClassSVM, S.OneClassSVM, {"nu": 0.3})}
SETS = {"SVC": ("heart_scale", "breast-cancer", "iris.scale"), "NuSVC": ("heart_scale", "breast-cancer", "iris.scale"),
        "SVR": ("heart_scale", "diabetes", "breast-cancer"), "NuSVR": ("heart_scale", "diabetes", "breast-cancer"),
        "OneClassSVM": ("heart_scale", "diabetes", "breast-cancer")}
CASES = [(kind, name) for kind in KINDS for name in SETS[kind]]


@pytest.mark.parametrize("kind, name", CASES, ids=[f"{k}-{n}" for k, n in CASES])
def test_weighted_models_match_scikit_learn(load, kind, name):
    X, y = _xy(load, name)
    t = _target(X) if kind in ("SVR", "NuSVR") else (None if kind == "OneClassSVM" else y)
    w = _weights(X.shape[0], seed=4)
    sk_cls, ll_cls, kw = KINDS[kind]
    sk = sk_cls(kernel="rbf", gamma=GAMMA, tol=1e-10, **kw)
    ll = ll_cls(kernel="rbf", gamma=GAMMA, tol=1e-10, **kw)
    args = (X,) if t is None else (X, t)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sk.fit(*args, sample_weight=w)
        ll.fit(*args, sample_weight=w)
    # scikit-learn numbers support_ in the rows it kept (its remove_zero_weight), llsvm in the rows of X
    np.testing.assert_array_equal(ll.support_, np.flatnonzero(w > 0)[sk.support_])
    np.testing.assert_array_equal(ll.n_support_, sk.n_support_)
    scale = max(np.abs(sk.dual_coef_).max(), 1.0)
    np.testing.assert_allclose(ll.dual_coef_, sk.dual_coef_, rtol=0, atol=1e-6 * scale)
    np.testing.assert_allclose(ll.intercept_, sk.intercept_, rtol=1e-6, atol=1e-7 * scale)
    if kind in ("SVC", "NuSVC") and len(sk.classes_) > 2:
        np.testing.assert_allclose(ll.decision_function(X), sk.decision_function(X), rtol=0, atol=1e-6 * scale)
    else:
        a, b = _dual(kind, ll, X, t, ll.support_), _dual(kind, sk, X, t, np.flatnonzero(w > 0)[sk.support_])
        assert abs(a - b) <= 1e-6 * abs(b), (a, b)
    np.testing.assert_allclose(ll.predict(X), sk.predict(X), rtol=0, atol=1e-6 * scale) if t is not None and \
        kind in ("SVR", "NuSVR") else np.testing.assert_array_equal(ll.predict(X), sk.predict(X))
    # the weights change the model (the comparison is not of two unweighted models)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        plain = ll_cls(kernel="rbf", gamma=GAMMA, tol=1e-10, **kw).fit(*args)
    assert plain.dual_coef_.shape != ll.dual_coef_.shape or not np.allclose(plain.dual_coef_, ll.dual_coef_)


def test_scikit_learn_refusals_and_negative_weights():
    """scikit-learn's words: every weight <= 0; C-SVC's rows of positive weight in one class; a nu-SVC class left
    without weight (nu infeasible); a negative weight drops its row as a zero one does; a wrong length."""
    X = np.array([[-2, 0], [-1, -1], [0, -2], [0, 2], [1, 1], [2, 0]], float)
    Y = np.array([1, 1, 1, 2, 2, 2])
    for cls in (S.SVC, S.NuSVC, S.SVR, S.NuSVR, S.OneClassSVM):
        for sw in (np.zeros(6), np.full(6, -0.3)):
            with pytest.raises(ValueError, match="Invalid input - all samples have zero or negative weights"):
                cls(kernel="linear").fit(X, Y, sample_weight=sw)
    with pytest.raises(ValueError, match="all samples with positive weights belong to the same class"):
        S.SVC(kernel="linear").fit(X, Y, sample_weight=[0, -0.5, 0, 1, 1, 1])
    with pytest.raises(ValueError, match="specified nu is infeasible"):
        S.NuSVC(kernel="linear").fit(X, Y, sample_weight=[1, 1, 1, 0, -0.1, -0.3])
    with pytest.raises(ValueError, match="sample_weight and X have incompatible shapes"):
        S.SVC().fit(X, Y, sample_weight=np.ones(5))
    neg = S.SVC(kernel="linear").fit(X, Y, sample_weight=[1, -0.5, 1, 1, 1, 1])
    zero = S.SVC(kernel="linear").fit(X, Y, sample_weight=[1, 0, 1, 1, 1, 1])
    np.testing.assert_array_equal(neg.dual_coef_, zero.dual_coef_)
    np.testing.assert_array_equal(neg.support_, zero.support_)
    assert 1 not in neg.support_


def test_precomputed_kernel_takes_the_weights(load):
    """kernel="precomputed" with sample_weight: scikit-learn's model with positive weights; with rows of weight 0,
    the model of the rbf kernel over the rows (scikit-learn's own precomputed SVC predicts with the wrong columns
    then: its support_ numbers the rows it kept, and its prediction reads K's columns by it)."""
    X, y = _xy(load, "heart_scale")
    K = rbf_kernel(X, X, gamma=GAMMA)
    w = _weights(X.shape[0], seed=6, zeros=0) + 0.01
    pre = S.SVC(kernel="precomputed", C=2.0, tol=1e-10).fit(K, y, sample_weight=w)
    sk = sks.SVC(kernel="precomputed", C=2.0, tol=1e-10).fit(K, y, sample_weight=w)
    np.testing.assert_array_equal(pre.support_, sk.support_)
    np.testing.assert_allclose(pre.dual_coef_, sk.dual_coef_, rtol=0, atol=1e-6)
    np.testing.assert_array_equal(pre.predict(K), sk.predict(K))
    w = _weights(X.shape[0], seed=6, zeros=20)
    pre = S.SVC(kernel="precomputed", C=2.0, tol=1e-10).fit(K, y, sample_weight=w)
    rbf = sks.SVC(kernel="rbf", gamma=GAMMA, C=2.0, tol=1e-10).fit(X, y, sample_weight=w)
    np.testing.assert_array_equal(pre.support_, np.flatnonzero(w > 0)[rbf.support_])
    np.testing.assert_allclose(pre.dual_coef_, rbf.dual_coef_, rtol=0, atol=1e-6)
    np.testing.assert_array_equal(pre.predict(K), rbf.predict(X))


# -- the kernel against its twins ----------------------------------------------------------------------------------

@pytest.mark.parametrize("shrinking", [False, True], ids=["h0", "h1"])
def test_weighted_kernel_is_the_twins(shrinking):
    """_smo.solve over a weighted view: C_i = W_i C_{y_i} through row_cost, the twin's box; alpha, G, rho and the
    iterations bit for bit."""
    X, labels = problem(5, 90, 4)
    ys = np.where(labels == labels[0], 1, -1).astype(np.int8)
    W = _weights(90, seed=7, zeros=0) + 0.05
    K = T.kernel_matrix(X, X, kernel_type=2, gamma=0.5)
    tw = T.solve(K, ys, 1.5, 0.7, eps=1e-3, shrinking=shrinking, W=W)
    cache, QD = setup(X, 2, 0.5, 0.0, 3)
    ds = _ds(X, np.zeros(90), W)
    from llsvm._ext import _kernel as KK
    view = ds.row_view()
    params = {"kernel_type": 2, "gamma": 0.5, "coef0": 0.0, "degree": 3}
    cache = KK.KernelCache(view, None, params, KK.kernel_sq_norms(view, params), 100.0)
    alpha = np.zeros(90)
    out = SMO.solve(cache, ys, -np.ones(90), alpha, 1.5, 0.7, QD, eps=1e-3, shrinking=shrinking)
    np.testing.assert_array_equal(out["C"], np.where(ys > 0, 1.5, 0.7) * W)
    np.testing.assert_array_equal(alpha, tw["alpha"])
    np.testing.assert_array_equal(out["G"], tw["G"])
    assert out["rho"] == tw["rho"] and out["n_iter"] == tw["n_iter"]
    assert (alpha >= out["C"]).any()                # some variable at its weighted bound


@pytest.mark.parametrize("shrinking", [1, 0])
def test_weighted_drivers_give_the_twins_models(shrinking):
    """llsvm.train with row weights: -s smo (two classes) is smo_twin.csvc(W), -s nu_svc and -s nu_svr are
    smo_nu_twin's nu_svc(W) and nu_svr(W), -s epsilon_svr and -s one_class the generic twin over their variables:
    the coefficients and rho bit for bit."""
    opts = SMOOptions(kernel_type=2, gamma=0.5, shrinking=shrinking)
    X, labels = problem(17, 80, 4)
    W = _weights(80, seed=8, zeros=0) + 0.05
    ds = _ds(X, labels, W)

    def fit(solver, data, **kw):
        return llsvm.train(data, params=Params(solver=solver, eps=1e-3, options=opts, **kw), say=lambda s: None)

    def coef_by_row(m, l):
        out = np.zeros(l)
        out[m.meta["sv_indices"] - 1] = m.sv_coef[0]
        return out

    m = fit("smo", ds, C=1.5)
    tw = T.csvc(X, labels, C=1.5, eps=1e-3, shrinking=bool(shrinking), W=W, kernel_type=2, gamma=0.5)
    np.testing.assert_array_equal(coef_by_row(m, 80), tw["sv_coef"])
    assert m.rho[0] == tw["rho"]
    m = fit("nu_svc", ds, nu=0.3)
    tw = N.nu_svc(X, labels, 0.3, eps=1e-3, shrinking=bool(shrinking), W=W, kernel_type=2, gamma=0.5)
    np.testing.assert_array_equal(coef_by_row(m, 80), tw["sv_coef"])
    assert m.rho[0] == tw["model_rho"]
    z = _target(X)
    m = fit("nu_svr", _ds(X, z, W), nu=0.4, C=2.0)
    tw = N.nu_svr(X, z, 0.4, C=2.0, eps=1e-3, shrinking=bool(shrinking), W=W, kernel_type=2, gamma=0.5)
    np.testing.assert_array_equal(coef_by_row(m, 80), tw["coef"])
    assert m.rho[0] == tw["rho"]
    # epsilon-SVR: 2l variables over the rows twice, box W_t C for both; one-class: box W_t, the greedy start
    K = T.kernel_matrix(X, X, kernel_type=2, gamma=0.5)
    rows = np.r_[np.arange(80), np.arange(80)]
    m = fit("epsilon_svr", _ds(X, z, W), C=2.0)
    tw = T.solve(K[np.ix_(rows, rows)], np.r_[np.ones(80), -np.ones(80)].astype(np.int64), 2.0, 2.0, eps=1e-3,
                 p=np.r_[0.1 - z, 0.1 + z], shrinking=True, alpha0=np.zeros(160), W=W[rows]) if shrinking else \
        T.solve(K[np.ix_(rows, rows)], np.r_[np.ones(80), -np.ones(80)].astype(np.int64), 2.0, 2.0, eps=1e-3,
                p=np.r_[0.1 - z, 0.1 + z], W=W[rows])
    np.testing.assert_array_equal(coef_by_row(m, 80), tw["alpha"][:80] - tw["alpha"][80:])
    assert m.rho[0] == tw["rho"]
    start = N.nu_start(np.ones(80, np.int64), 0.3 * float(np.cumsum(W)[-1]), W)
    m = fit("one_class", _ds(X, np.ones(80), W), nu=0.3)
    tw = T.Shrinking(K, np.ones(80, np.int64), 1.0, 1.0, 1e-3, np.zeros(80), None, start, bool(shrinking), W=W).run()
    np.testing.assert_array_equal(coef_by_row(m, 80), tw["alpha"])
    assert m.rho[0] == tw["rho"]


def test_nu_start_takes_the_boxes():
    y = np.array([1, -1, 1, 1, -1, -1, 1], np.int8)
    caps = np.array([0.5, 2.0, 0.25, 3.0, 0.5, 0.5, 1.0])
    got = np.zeros(7)
    SMO.nu_start(y, 1.1, caps, got)
    np.testing.assert_array_equal(got, N.nu_start(y, 1.1, caps))
    np.testing.assert_array_equal(got, [0.5, 1.1, 0.25, 1.1 - 0.5 - 0.25, 0.0, 0.0, 0.0])


# -- identities ----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("solver", TYPES)
def test_integer_weights_are_repeated_rows(load, solver):
    """Integer weights k_t (0 to 3) against each row repeated k_t times, at -e 1e-12: the decision values, and each
    row's alpha against the sum of its copies' alphas, to 1e-9 (the two duals differ, their optima agree)."""
    X, y = _xy(load, "heart_scale")
    t = _target(X) if solver.endswith("svr") else (np.ones_like(y) if solver == "one_class" else y)
    k = np.random.RandomState(3).randint(0, 4, X.shape[0])
    rep = np.repeat(np.arange(X.shape[0]), k)
    weighted = _train(solver, _ds(X, t, k.astype(np.float64)), eps=1e-12)
    repeated = _train(solver, _ds(X[rep], t[rep]), eps=1e-12)
    every = _ds(X, t)
    da, db = np.asarray(weighted.decision_function(every)), np.asarray(repeated.decision_function(every))
    np.testing.assert_allclose(da, db, rtol=0, atol=1e-9 * max(1.0, np.abs(db).max()))

    def per_row(m, owner, l):
        s = np.zeros(l)
        np.add.at(s, owner[m.meta["sv_indices"] - 1], m.sv_coef[0])
        return s

    kept = np.flatnonzero(k > 0)
    a = per_row(weighted, kept, X.shape[0])
    b = per_row(repeated, rep, X.shape[0])
    np.testing.assert_allclose(a, b, rtol=0, atol=1e-9 * max(1.0, np.abs(b).max()))


@pytest.mark.parametrize("probability", [0, 1], ids=["b0", "b1"])
@pytest.mark.parametrize("solver", TYPES)
def test_zero_weight_is_row_absent_and_ones_are_no_weights(load, solver, probability):
    X, y = _xy(load, "heart_scale")
    t = _target(X) if solver.endswith("svr") else (np.ones_like(y) if solver == "one_class" else y)
    w = _weights(X.shape[0], seed=9, zeros=30)
    keep = w > 0
    _same_model(_train(solver, _ds(X, t, w), probability=probability),
                _train(solver, _ds(X[keep], t[keep], w[keep]), probability=probability))
    _same_model(_train(solver, _ds(X, t, np.ones(X.shape[0])), probability=probability),
                _train(solver, _ds(X, t), probability=probability))


def test_probability_folds_carry_the_weights(load):
    """-b 1 of a weighted C-SVC: probA and probB are Platt's sigmoid fitted to the decision values of five folds,
    each from the weighted model of the other folds' rows (re-trained here with their weights, the fold order of
    the pair's permutation, the positive class first, as svm_binary_svc_probability subsets W)."""
    X, y = _xy(load, "heart_scale")
    w = _weights(X.shape[0], seed=10, zeros=0) + 0.1
    model = _train("smo", _ds(X, y, w), probability=1, seed=5)
    # the pair: class of the first row (+1) then the other, each in row order (svm_group_classes)
    first = y[0]
    pos = np.r_[np.flatnonzero(y == first), np.flatnonzero(y != first)]
    ys = np.where(y[pos] == first, 1.0, -1.0)
    l = pos.size
    perm = Seeds(5).permutation(l)
    dec = np.empty(l)
    for f in range(5):
        b, e = f * l // 5, (f + 1) * l // 5
        train = np.r_[perm[:b], perm[e:]]
        train = np.r_[train[ys[train] > 0], train[ys[train] < 0]]
        sub = _train("smo", _ds(X[pos[train]], ys[train], w[pos[train]]))
        dec[perm[b:e]] = np.asarray(sub.decision_function(_ds(X[pos[perm[b:e]]], ys[perm[b:e]]))).ravel()
    A, B, _ = sigmoid_train(dec, ys)
    assert model.probA[0] == pytest.approx(A, rel=1e-9, abs=1e-12)
    assert model.probB[0] == pytest.approx(B, rel=1e-9, abs=1e-12)
    unweighted = _train("smo", _ds(X, y), probability=1, seed=5)
    assert abs(unweighted.probA[0] - A) > 1e-3 * abs(A)          # the weights matter to the folds


@pytest.mark.parametrize("solver", TYPES)
def test_threads_give_one_threads_model(load, solver):
    X, y = _xy(load, "breast-cancer")
    t = _target(X) if solver.endswith("svr") else (np.ones_like(y) if solver == "one_class" else y)
    ds = _ds(X, t, _weights(X.shape[0], seed=11))
    _same_model(_train(solver, ds, threads=1), _train(solver, ds, threads=2))


@pytest.mark.parametrize("solver", TYPES)
def test_cross_validation_over_weighted_rows(load, solver):
    """-v: all weights 1 are the unweighted folds' predictions exactly; rows of weight 0 are left out of the
    folds' training (a fold trains on its rows of positive weight)."""
    from llsvm.solvers.trainer import cross_validation
    X, y = _xy(load, "heart_scale")
    t = _target(X) if solver.endswith("svr") else (np.ones_like(y) if solver == "one_class" else y)
    opts = SMOOptions(kernel_type=2, gamma=GAMMA)
    kw = dict(solver=solver, options=opts, **EXTRA[solver])
    plain = cross_validation(_ds(X, t), 5, **kw)
    assert np.array_equal(plain, cross_validation(_ds(X, t, np.ones(X.shape[0])), 5, **kw))
    w = _weights(X.shape[0], seed=12, zeros=40)
    weighted = cross_validation(_ds(X, t, w), 5, **kw)
    assert weighted.shape == t.shape and not np.array_equal(weighted, plain)


# -- llsvm-train -W --------------------------------------------------------------------------------------------------

FILE_CASES = [(s, []) for s in TYPES] + [(s, ["-b", "1"]) for s in TYPES if s != "one_class"]


@pytest.mark.parametrize("solver, extra", FILE_CASES, ids=[s + "-b1" * bool(e) for s, e in FILE_CASES])
def test_weight_file_trains_the_weighted_model(load, tmp_path, solver, extra):
    """llsvm-train -s TYPE -W file (-b 1 too, but for one-class, whose -b 1 is the density marks of the decision
    values): the library's weighted model, byte for byte; the weights change it."""
    ds = load("heart_scale")
    path = tmp_path / "data"
    t = _target(ds.to_csr().toarray()) if solver.endswith("svr") else ds.y
    with open(path, "w") as fh:
        csr = ds.to_csr()
        for i in range(ds.n_rows):
            row = csr[i]
            fh.write(f"{t[i]:.17g} " + " ".join(f"{j + 1}:{v:.17g}" for j, v in zip(row.indices, row.data)) + "\n")
    w = _weights(ds.n_rows, seed=13)
    (tmp_path / "w").write_text("".join(f"{float(v)!r}\n" for v in w))
    args = ["-q", "-s", solver, "-W", tmp_path / "w", "-g", GAMMA] + extra
    args += sum(([f"-{'c' if k == 'C' else 'n'}", v] for k, v in EXTRA[solver].items()), [])
    res = CliRunner().invoke(train_main, [str(a) for a in args + [path, tmp_path / "m"]])
    assert_exit(res, 0)
    lib = _train(solver, llsvm.read_dataset(path).with_weights(w), probability=int(bool(extra)))
    lib.save(tmp_path / "lib")
    assert (tmp_path / "m").read_bytes() == (tmp_path / "lib").read_bytes()
    _train(solver, llsvm.read_dataset(path), probability=int(bool(extra))).save(tmp_path / "plain")
    assert (tmp_path / "plain").read_bytes() != (tmp_path / "lib").read_bytes()


def test_nu_svc_feasibility_sums_the_weights():
    """LIBSVM's nu-SVC check over the classes' weight sums (scikit-learn's weighted svm_check_parameter): nu 0.6 of
    classes weighing 1 and 3 is infeasible (0.6 x 4 / 2 > 1), of rows 10 and 10 it is not."""
    X, labels = problem(3, 20, 3)
    cls = labels == labels[0]
    w = np.where(cls, 1.0 / cls.sum(), 3.0 / (~cls).sum())
    opts = SMOOptions(kernel_type=2, gamma=0.5)
    with pytest.raises(llsvm.errors.CheckParameterError, match="specified nu is infeasible"):
        llsvm.train(_ds(X, labels, w), params=Params(solver="nu_svc", nu=0.6, options=opts), say=lambda s: None)
    llsvm.train(_ds(X, labels), params=Params(solver="nu_svc", nu=0.6, options=opts), say=lambda s: None)
