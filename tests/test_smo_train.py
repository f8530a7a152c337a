"""-s smo (llsvm/solvers/smo.py): LIBSVM's C-SVC, one-vs-one, against libsvm-official trained on the same rows.

With the same kernel values and LIBSVM's order of operations the solutions agree to rounding: per pair rho and
obj, the support vectors (their original row numbers), nSV per class and sv_coef (to 1e-9 of C); the certificate
of every pair is checked against its definition in NumPy (primal, dual, gap). The options and refusals of the CLI
follow svm-train's (check_parameter's words), and -v uses LIBSVM's stratified folds.
"""
import subprocess
import sys

import numpy as np
import pytest
import scipy.sparse as sp
from click.testing import CliRunner
from libsvm import svmutil

import llsvm
from llsvm.cli.predict import main as predict_main
from llsvm.cli.train import main as train_main
from llsvm.dataset import CSRDataset
from llsvm.solvers.common import Seeds
from llsvm.options import SMOOptions
from llsvm.params import Params
from llsvm.solvers.folds import stratified_folds
from reference import smo_twin as S

from conftest import assert_exit


def blobs(seed, l, n, labels, sparse=0.0, spread=1.3):
    """l rows around one random centre per label (dense, or with a fraction `sparse` of zeros)."""
    g = np.random.default_rng(seed)
    centres = g.standard_normal((len(labels), n)) * spread
    k = g.integers(0, len(labels), l)
    X = centres[k] + g.standard_normal((l, n))
    if sparse:
        X[g.random((l, n)) < sparse] = 0.0
    return X, np.asarray(labels, np.float64)[k]


def libsvm_model(X, y, opts):
    rows = [{j + 1: float(v) for j, v in enumerate(r) if v != 0} for r in X]
    return svmutil.svm_train(list(map(float, y)), rows, opts + " -q")


def ours(X, y, **kw):
    opts = {k: kw.pop(k) for k in ("kernel_type", "gamma", "degree", "coef0", "cache_size", "shrinking") if k in kw}
    ds = CSRDataset.from_csr(sp.csr_matrix(X), y)
    params = Params(solver="smo", options=SMOOptions(**opts), **kw)
    return ds, llsvm.train(ds, params=params, say=lambda s: None)


CASES = {
    # id: (seed, rows, features, labels, libsvm options, our keywords)
    "rbf-2": (1, 300, 6, (1, -1), "-t 2 -c 1", {}),
    "rbf-2-minus-first": (2, 300, 6, (-1, 1), "-t 2 -c 4 -g 0.3", {"C": 4.0, "gamma": 0.3}),
    "linear-3": (3, 240, 5, (3, 1, 2), "-t 0 -c 0.5", {"kernel_type": 0, "C": 0.5}),
    "poly-4": (4, 320, 4, (2, 7, 1, 5), "-t 1 -d 2 -g 0.5 -r 1 -c 2",
               {"kernel_type": 1, "degree": 2, "gamma": 0.5, "coef0": 1.0, "C": 2.0}),
    "sigmoid-2": (5, 200, 4, (1, 2), "-t 3 -g 0.05 -r -0.5", {"kernel_type": 3, "gamma": 0.05, "coef0": -0.5}),
    "rbf-3-weights": (6, 300, 5, (1, 2, 3), "-c 2 -w1 3 -w3 0.5 -w9 2",
                      {"C": 2.0, "weights": [(1, 3.0), (3, 0.5), (9, 2.0)]}),
    "rbf-sparse-eps": (7, 400, 20, (1, -1), "-c 10 -e 0.01", {"C": 10.0, "eps": 0.01, "sparse": 0.6}),
    "rbf-2-small-cache": (8, 500, 6, (1, -1), "-m 0.01", {"cache_size": 0.01}),
}


def _case(name, h):
    seed, l, n, labels, lopts, kw = CASES[name]
    kw = dict(kw)
    X, y = blobs(seed, l, n, labels, sparse=kw.pop("sparse", 0.0))
    lm = libsvm_model(X, y, f"-s 0 {lopts} -h {h}")
    ds, model = ours(X, y, shrinking=h, **kw)
    return X, y, lm, ds, model


@pytest.mark.parametrize("h", [0, 1])
@pytest.mark.parametrize("name", CASES)
def test_model_matches_libsvm(name, h):
    X, y, lm, ds, model = _case(name, h)
    k = lm.get_nr_class()
    assert model.nr_class == k
    assert [int(v) for v in model.label] == [int(v) for v in lm.get_labels()]
    assert model.nSV.tolist() == [lm.nSV[i] for i in range(k)]
    assert model.meta["sv_indices"].tolist() == list(lm.get_sv_indices())
    n_pairs = k * (k - 1) // 2
    np.testing.assert_allclose(model.rho, [lm.rho[p] for p in range(n_pairs)], rtol=1e-9, atol=1e-12)
    C = max(lm.param.C * (lm.param.weight[i] if i < lm.param.nr_weight else 1.0) for i in range(max(1, lm.param.nr_weight)))
    coef = np.array(lm.get_sv_coef()).T.reshape(k - 1, -1)
    np.testing.assert_allclose(model.sv_coef, coef, rtol=0, atol=1e-9 * max(C, lm.param.C))
    # the gamma written is the one used (1/num_features by default, as svm-train sets it)
    assert model.gamma == pytest.approx(lm.param.gamma, rel=1e-15)


@pytest.mark.parametrize("name", ["rbf-2", "linear-3", "poly-4", "rbf-3-weights"])
def test_certificate_of_every_pair(name):
    """primal, dual and gap of each pair recomputed in NumPy from the model's coefficients: the kernel matrix of
    the pair's rows, f = K coef - rho, primal = 1/2 coef'K coef + sum C_t max(0, 1 - y_t f_t)."""
    seed, l, n, labels, _, kw = CASES[name]
    kw = dict(kw)
    X, y = blobs(seed, l, n, labels, sparse=kw.pop("sparse", 0.0))
    ds, model = ours(X, y, **kw)
    opts = model.meta["options"]
    lab = [int(v) for v in model.label]
    costs = dict((int(a), b) for a, b in kw.get("weights", []))
    C = kw.get("C", 1.0)
    for r in model.meta["results"]:
        a, b = r.extra["labels"]
        rows = np.flatnonzero((y == a) | (y == b))
        rows = np.concatenate([rows[y[rows] == a], rows[y[rows] == b]])
        ys = np.where(y[rows] == a, 1.0, -1.0)
        K = S.kernel_matrix(X[rows], X[rows], kernel_type=opts.kernel_type, gamma=opts.gamma, coef0=opts.coef0,
                            degree=opts.degree)
        coef = ys * r.alpha
        f = K @ coef - r.extra["rho"]
        Ct = np.where(ys > 0, C * costs.get(a, 1.0), C * costs.get(b, 1.0))
        primal = 0.5 * coef @ K @ coef + Ct @ np.maximum(0.0, 1.0 - ys * f)
        dual = r.alpha.sum() - 0.5 * coef @ K @ coef
        # the solver's Q is float32 (LIBSVM's Qfloat): its values carry 6e-8 of relative error, so the sums agree
        # to that much of the size of their terms
        scale = np.abs(coef) @ np.abs(K) @ np.abs(coef) + Ct.sum()
        assert r.primal == pytest.approx(primal, rel=0, abs=1e-6 * scale)
        assert r.dual == pytest.approx(dual, rel=0, abs=1e-6 * scale)
        assert r.dual == pytest.approx(-r.extra["obj"], rel=1e-12)
        assert 0.0 <= r.gap <= 1e-2 * abs(r.primal)
        assert r.max_violation < 1e-3 and r.converged
        assert lab.index(a) < lab.index(b)


def test_one_class_warns_and_predicts_it():
    X, _ = blobs(9, 30, 3, (1,))
    y = np.full(30, 4.0)
    out = []
    ds = CSRDataset.from_csr(sp.csr_matrix(X), y)
    model = llsvm.train(ds, params=Params(solver="smo"), say=out.append)
    assert "WARNING: training data in only one class. See README for details.\n" in out
    assert model.nr_class == 1 and model.total_sv == 0


def test_output_lines_per_pair():
    X, y = blobs(3, 240, 5, (3, 1, 2))
    out = []
    ds = CSRDataset.from_csr(sp.csr_matrix(X), y)
    llsvm.train(ds, params=Params(solver="smo"), say=out.append)
    text = "".join(out)
    assert text.count("\noptimization finished, #iter = ") == 3
    assert text.count("nu = ") == 3 and text.count(", rho = ") == 3 and text.count(", nBSV = ") == 3
    assert text.endswith(f"Total nSV = {int(text.split('Total nSV = ')[1])}\n")


# -- cross validation ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("nr_fold", [2, 5, 7])
def test_stratified_folds(nr_fold):
    """LIBSVM's plan: fold i takes [i c / n, (i + 1) c / n) of every class c; folds partition the rows."""
    y = np.array([2.0] * 37 + [1.0] * 11 + [5.0] * 23)
    np.random.default_rng(0).shuffle(y)
    folds = stratified_folds(y, nr_fold, Seeds(3), None)
    tests = np.concatenate([te for _, te in folds])
    assert sorted(tests.tolist()) == list(range(y.size))
    for i, (tr, te) in enumerate(folds):
        assert sorted(np.concatenate([tr, te]).tolist()) == list(range(y.size))
        for lab, c in ((2.0, 37), (1.0, 11), (5.0, 23)):
            assert np.count_nonzero(y[te] == lab) == (i + 1) * c // nr_fold - i * c // nr_fold
    again = stratified_folds(y, nr_fold, Seeds(3), None)
    assert all(np.array_equal(a[1], b[1]) for a, b in zip(folds, again))
    other = stratified_folds(y, nr_fold, Seeds(4), None)
    assert not all(np.array_equal(a[1], b[1]) for a, b in zip(folds, other))


def _write(path, X, y):
    with open(path, "w") as f:
        for xi, yi in zip(X, y):
            f.write(f"{int(yi)}" + "".join(f" {j + 1}:{v:.17g}" for j, v in enumerate(xi) if v != 0) + "\n")
    return path


def test_cross_validation_cli(tmp_path):
    X, y = blobs(11, 300, 5, (1, 2, 3), spread=0.9)
    data = _write(tmp_path / "d.txt", X, y)
    r = CliRunner().invoke(train_main, ["-s", "smo", "-v", "5", "-q", str(data)])
    assert_exit(r, 0)
    ours_acc = float(r.stdout.split("Cross Validation Accuracy = ")[1].rstrip("%\n"))
    again = CliRunner().invoke(train_main, ["-s", "smo", "-v", "5", "-q", str(data)])
    assert again.stdout == r.stdout
    rows = [{j + 1: float(v) for j, v in enumerate(xi)} for xi in X]
    theirs = svmutil.svm_train(list(map(float, y)), rows, "-v 5 -q")
    # different random folds (LIBSVM's rand() against our seeded RNG): close, not equal
    assert abs(ours_acc - theirs) < 4.0
    assert not (tmp_path / "d.txt.model").exists()


# -- the command line ------------------------------------------------------------------------------------------
@pytest.fixture
def data(tmp_path):
    X, y = blobs(12, 80, 4, (1, -1))
    return _write(tmp_path / "d.txt", X, y)


@pytest.mark.parametrize("args, message", [
    (["-t", "5"], "ERROR: unknown kernel type\n"),
    (["-g", "-1"], "ERROR: gamma < 0\n"),
    (["-d", "-2"], "ERROR: degree of polynomial kernel < 0\n"),
    (["-m", "0"], "ERROR: cache_size <= 0\n"),
    (["-h", "2"], "ERROR: shrinking != 0 and shrinking != 1\n"),
    (["-c", "0"], "ERROR: C <= 0\n"),
    (["-e", "0"], "ERROR: eps <= 0\n"),
    (["-g", "nan"], "ERROR: -g nan: gamma must be a finite number\n"),
    (["-B", "1"], "ERROR: -B applies only to the linear solvers, not to -s smo (a kernel SVM's bias is its rho)\n"),
])
def test_refusals(data, tmp_path, args, message):
    r = CliRunner().invoke(train_main, ["-s", "smo", *args, str(data), str(tmp_path / "m")])
    assert_exit(r, 1)
    assert r.stderr == message and r.stdout == ""
    assert not (tmp_path / "m").exists()


@pytest.mark.parametrize("flag, value", [("-t", "0"), ("-g", "0.5"), ("-d", "2"), ("-r", "1"), ("-m", "10"),
                                         ("-h", "0")])
def test_kernel_options_belong_to_smo(data, tmp_path, flag, value):
    r = CliRunner().invoke(train_main, ["-s", "3", flag, value, str(data), str(tmp_path / "m")])
    assert_exit(r, 1)
    libsvm = "-s smo, -s nu_svc, -s epsilon_svr, -s nu_svr, -s one_class"
    takers = (f"{libsvm} and -s h1tree" if flag == "-h" else
              f"{libsvm}, -s h1tree, -s olsvm, -s olsvm-rhl, -s norma, -s pegaz and -s pegasos")
    assert r.stderr == f"ERROR: {flag} applies only to {takers}, not to -s 3\n"


def test_h_alone_is_help_and_h_number_is_shrinking(data, tmp_path):
    for args in (["-h"], ["-s", "smo", "-h"], ["-h", str(data)]):
        r = CliRunner().invoke(train_main, args)
        assert_exit(r, 0)
        assert "Usage:" in r.stdout and "-h 0|1" in r.stdout
    outs = {}
    for h in ("0", "1"):
        m = tmp_path / f"m{h}"
        r = CliRunner().invoke(train_main, ["-s", "smo", "-h", h, "-q", str(data), str(m)])
        assert_exit(r, 0)
        outs[h] = m.read_text()
    assert outs["0"].splitlines()[:3] == outs["1"].splitlines()[:3]


# -- LIBSVM's progress and closing lines ------------------------------------------------------------------------
LIBSVM_TRAIN = ("import sys\nfrom libsvm import svmutil\ny, x = svmutil.svm_read_problem(sys.argv[1])\n"
                "svmutil.svm_train(y, x, ' '.join(sys.argv[2:]))\n")


def libsvm_output(path, args):
    """What libsvm-official's svm_train prints (its C info(), on stdout) for the file and options."""
    proc = subprocess.run([sys.executable, "-c", LIBSVM_TRAIN, str(path), *args], capture_output=True, text=True,
                          timeout=300, check=True)
    return proc.stdout


def test_output_is_svm_trains_on_generated_data(tmp_path):
    """Every line svm-train prints, '.' every min(l, 1000) iterations and '*' at each rebuild of the gradient
    included: three classes, with and without shrinking."""
    X, y = blobs(21, 1500, 5, (2, 1, 3), spread=2.5)
    data = _write(tmp_path / "d.txt", X, y)
    for args in ([], ["-h", "0"], ["-c", "10"]):
        r = CliRunner().invoke(train_main, ["-s", "smo", *args, str(data), str(tmp_path / "m")])
        assert_exit(r, 0)
        theirs = libsvm_output(data, args)
        assert theirs.count(".") >= 3 and theirs.count("*") >= 3, theirs
        assert r.stdout == theirs, args


@pytest.mark.parametrize("name,args", [("heart_scale", ["-c", "100"]), ("mushrooms", []),
                                       ("segment.scale", ["-c", "10"])])
def test_output_is_svm_trains_on_public_sets(shared_plain, tmp_path, name, args):
    """The same on public sets: mushrooms' run warns "using -h 0 may be faster" as LIBSVM's reconstruct_gradient
    does; segment.scale has 21 pairs."""
    path = shared_plain(name)
    r = CliRunner().invoke(train_main, ["-s", "smo", *args, str(path), str(tmp_path / "m")])
    assert_exit(r, 0)
    theirs = libsvm_output(path, args)
    assert r.stdout == theirs
    if name == "mushrooms":
        assert "\nWARNING: using -h 0 may be faster\n" in theirs


# -- LIBSVM's model file ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("h", ["0", "1"])
@pytest.mark.parametrize("args", [[], ["-t", "0", "-c", "0.5"], ["-t", "1", "-d", "2", "-r", "1", "-g", "0.5"],
                                  ["-t", "3", "-g", "0.05", "-r", "-0.5"], ["-c", "2", "-w2", "3"]],
                         ids=["rbf", "linear", "poly", "sigmoid", "weights"])
def test_model_file_is_libsvms_byte_for_byte(tmp_path, args, h):
    """llsvm-train -s smo and svm-train (libsvm-official, from the same text file) write the same model file, byte
    for byte; LIBSVM's svm_predict reads ours and predicts what llsvm-predict predicts."""
    X, y = blobs(21, 260, 5, (2, 1, 3))
    data = _write(tmp_path / "d.txt", X, y)
    ours_path = tmp_path / "ours.model"
    r = CliRunner().invoke(train_main, ["-s", "smo", "-q", "-h", h, *args, str(data), str(ours_path)])
    assert_exit(r, 0)
    yl, xl = svmutil.svm_read_problem(str(data))
    lm = svmutil.svm_train(yl, xl, " ".join(["-q", "-h", h, *args]))
    theirs_path = tmp_path / "theirs.model"
    svmutil.svm_save_model(str(theirs_path), lm)
    assert ours_path.read_bytes() == theirs_path.read_bytes()
    mine = svmutil.svm_load_model(str(ours_path))
    p_lib, _, dec_lib = svmutil.svm_predict(yl, xl, mine, "-q")
    r = CliRunner().invoke(predict_main, [str(data), str(ours_path), str(tmp_path / "pred")])
    assert_exit(r, 0)
    assert [float(v) for v in (tmp_path / "pred").read_text().split()] == p_lib
    loaded = llsvm.load_model(str(ours_path))
    np.testing.assert_array_equal(loaded.decision_function(CSRDataset.from_csr(sp.csr_matrix(X), y)),
                                  np.array(dec_lib))


# -- -b 1: LIBSVM's probability training ------------------------------------------------------------------------
LIBSVM_SAVE = ("import sys\nfrom libsvm import svmutil\ny, x = svmutil.svm_read_problem(sys.argv[1])\n"
               "svmutil.svm_save_model(sys.argv[2], svmutil.svm_train(y, x, ' '.join(sys.argv[3:])))\n")


def libsvm_saved_model(path, out, args):
    """libsvm-official's model of the file, trained in a fresh process: its rand() starts from glibc's default
    seed, as svm-train's does."""
    subprocess.run([sys.executable, "-c", LIBSVM_SAVE, str(path), str(out), *args], check=True, timeout=600,
                   capture_output=True)
    return llsvm.load_model(str(out))


def log_loss(model, ds):
    labels, P = model.predict_probability(ds)
    column = {int(v): k for k, v in enumerate(model.label)}
    return -float(np.mean(np.log(P[np.arange(ds.n_rows), [column[int(v)] for v in ds.y]])))


# nu_svc's -b 1 on dna.scale (3 classes, 15 s) left out: its folds are smo's (covered on dna.scale) with nu's solver
# (covered on splice)
@pytest.mark.parametrize("solver,svm_type,name", [("smo", "0", "splice"), ("smo", "0", "dna.scale"),
                                                  ("smo", "0", "svmguide1"), ("nu_svc", "1", "splice")])
def test_probability_log_loss_is_libsvms(shared_plain, tmp_path, name, solver, svm_type):
    """-b 1 (two and three classes, scaled and not (splice, svmguide1: nu-SVC's slow unscaled svmguide1, a minute
    of the suite on two loaded cores, is left out); C-SVC, and nu-SVC whose folds train nu-SVCs): the test set's
    log loss within 1 % of LIBSVM's (the folds differ: LIBSVM draws them with rand(), llsvm from --seed; measured
    within 0.2 % for C-SVC), the same SVs and rho (the pairs' own solves do not depend on the folds), and LIBSVM
    predicts llsvm's model's probabilities as llsvm."""
    train, test = shared_plain(name), shared_plain(name + ".t")
    ours_path = tmp_path / "ours.model"
    r = CliRunner().invoke(train_main, ["-s", solver, "-q", "-b", "1", str(train), str(ours_path)])
    assert_exit(r, 0)
    ours = llsvm.load_model(str(ours_path))
    theirs = libsvm_saved_model(train, tmp_path / "theirs.model", ["-s", svm_type, "-q", "-b", "1"])
    assert ours.svm_type == theirs.svm_type and ours.probA is not None and ours.probA.shape == theirs.probA.shape
    np.testing.assert_array_equal(ours.rho, theirs.rho)
    ds = llsvm.read_dataset(str(test))
    a, b = log_loss(ours, ds), log_loss(theirs, ds)
    assert abs(a / b - 1.0) <= 0.01, (a, b)
    yl, xl = svmutil.svm_read_problem(str(test))
    _, _, p_lib = svmutil.svm_predict(yl, xl, svmutil.svm_load_model(str(ours_path)), "-b 1 -q")
    np.testing.assert_allclose(ours.predict_probability(ds)[1], np.array(p_lib), rtol=1e-12, atol=1e-15)


PERMUTATIONS = ("import ctypes, json, sys\nlibc = ctypes.CDLL('libc.so.6')\nout = []\n"
                "for l in map(int, sys.argv[1:]):\n    perm = list(range(l))\n    for i in range(l):\n"
                "        j = i + libc.rand() % (l - i)\n        perm[i], perm[j] = perm[j], perm[i]\n"
                "    out.append(perm)\nprint(json.dumps(out))\n")


def test_probability_with_libsvms_folds_is_libsvms(shared_plain, tmp_path):
    """With LIBSVM's own folds (its rand() sequence replayed through glibc in a fresh process, as svm-train draws
    them pair after pair), each pair's probA and probB are libsvm-official's bit for bit: the folds' trainings,
    their decision values and the sigmoid fit (cext/_kpredict.pyx, LIBSVM's arithmetic) follow LIBSVM's."""
    train = shared_plain("dna.scale")
    theirs = libsvm_saved_model(train, tmp_path / "theirs.model", ["-q", "-b", "1"])
    assert_libsvm_fold_probabilities(llsvm.read_dataset(str(train)), SMOOptions(probability=1), theirs)


def assert_libsvm_fold_probabilities(ds, options, theirs):
    """Every pair of a C-SVC -b 1 run on ds (options: its SMOOptions), its folds LIBSVM's (the rand() permutations
    replayed in a fresh process, pair after pair), has the probA and probB of `theirs`, LIBSVM's model, bit for bit."""
    import json
    from llsvm.solvers import smo
    from llsvm.report import as_reporter
    run = smo.PairsRun(ds, Params(solver="smo", options=options).check(), as_reporter())
    sizes = [rows.size for _, _, rows, _ in run.pairs.problems]
    perms = json.loads(subprocess.run([sys.executable, "-c", PERMUTATIONS, *map(str, sizes)], check=True,
                                      capture_output=True, text=True, timeout=600).stdout)
    for p in range(len(sizes)):
        _, _, (A, B), _ = run.pair(p, np.array(perms[p]), as_reporter())
        assert (A, B) == (theirs.probA[p], theirs.probB[p])


def test_sigmoid_train_minimises_platts_loss():
    """cext/_kpredict.sigmoid_train against scipy's minimiser of the same regularised cross-entropy: its gradient
    is below LIBSVM's 1e-5 at (A, B) and no lower loss is found; the decision values of overlapping classes."""
    from scipy.optimize import minimize
    from llsvm._ext import _kpredict
    g = np.random.default_rng(3)
    y = np.where(g.random(400) < 0.4, 1.0, -1.0)
    dec = 1.5 * y + g.normal(0, 1.2, 400)
    A, B, status = _kpredict.sigmoid_train(dec, y)
    n1 = float((y > 0).sum())
    t = np.where(y > 0, (n1 + 1) / (n1 + 2), 1 / (y.size - n1 + 2))

    def loss(ab):
        z = dec * ab[0] + ab[1]
        return float(np.sum(t * z + np.logaddexp(0, -z)))

    p = 1 / (1 + np.exp(dec * A + B))
    assert status == 0 and abs(float(np.sum(dec * (t - p)))) < 1e-5 and abs(float(np.sum(t - p))) < 1e-5
    best = minimize(loss, [0.0, 0.0], method="BFGS", options={"gtol": 1e-10})
    assert loss([A, B]) <= best.fun + 1e-9 and A < 0


def test_probability_cross_validation_predicts_by_probabilities():
    """-v with -b 1: each fold's labels are svm_predict_probability's (the largest probability), as LIBSVM's
    svm_cross_validation, not the votes: recomputed here over the same folds from the seed, on classes that
    overlap enough for the two to differ on some rows."""
    from llsvm.report import as_reporter
    from llsvm.solvers import smo
    X, y = blobs(5, 300, 4, (1, 2, 3), spread=0.8)
    ds = CSRDataset.from_csr(sp.csr_matrix(X), y)
    params = Params(solver="smo", options=SMOOptions(probability=1)).check()
    target = llsvm.cross_validation(ds, 5, params=params)
    seeds = Seeds(params.seed)
    folds = stratified_folds(ds.y, 5, seeds, as_reporter())
    by_probability, by_votes = np.empty(ds.n_rows), np.empty(ds.n_rows)
    for (tr, te), seed in zip(folds, [seeds.next() for _ in folds]):
        model = smo.fit(ds.take_rows(tr), params.but(seed=seed), as_reporter(), n_features=ds.n_features)
        by_probability[te] = model.predict_probability(ds.take_rows(te))[0]
        by_votes[te] = model.predict(ds.take_rows(te))
    np.testing.assert_array_equal(target, by_probability)
    assert (by_probability != by_votes).sum() >= 1
