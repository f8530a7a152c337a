"""LIBSVM's other SVM types: -s epsilon_svr, nu_svr and one_class (llsvm/solvers/single.py) and -s nu_svc
(llsvm/solvers/smo.py, one-vs-one) against libsvm-official trained on the same file (its svm-train -s 3, 4, 2
and 1): model files byte for byte, svm-train's stdout line for line, the certificate, predictions,
cross-validation and the refusals; their -b 1 probability models (against LIBSVM's with its own folds replayed,
and with llsvm's seeded folds), and svm-predict -b 1 on them."""
import json
import os
import re
import subprocess
import sys

import numpy as np
import pytest
from click.testing import CliRunner
from libsvm import svmutil

import llsvm
from llsvm.cli.predict import main as predict_main
from llsvm.cli.train import main as train_main
from llsvm.params import Params

from conftest import assert_exit, without_scaling_note, write_small_set
from test_smo_train import PERMUTATIONS, libsvm_saved_model

LIBSVM = {"nu_svc": "1", "one_class": "2", "epsilon_svr": "3", "nu_svr": "4"}
TRAIN = ("import sys\nfrom libsvm import svmutil\ny, x = svmutil.svm_read_problem(sys.argv[1])\n"
         "svmutil.svm_save_model(sys.argv[2], svmutil.svm_train(y, x, ' '.join(sys.argv[3:])))\n")


# libsvm-official's svm_predict_values sums the kernel terms in an OpenMP reduction of guided schedule, whose
# order (the last bits) varies from run to run with two threads or more; with one it is the plain sum in SV order,
# as svm-train built without OpenMP and llsvm form it (the -b 1 models of the one-class SVM and the SVRs are made
# of decision values)
ONE_THREAD = {**os.environ, "OMP_NUM_THREADS": "1"}


def libsvm_run(path, model, args, stderr=False):
    """svm-train's stdout (and stderr) and model (libsvm-official, in a fresh process)."""
    proc = subprocess.run([sys.executable, "-c", TRAIN, str(path), str(model), *args], capture_output=True,
                          text=True, timeout=600, check=True, env=ONE_THREAD)
    return (proc.stdout, proc.stderr) if stderr else proc.stdout


def ours(solver, path, model, args):
    r = CliRunner().invoke(train_main, ["-s", solver, *args, str(path), str(model)])
    assert_exit(r, 0)
    return r.stdout


@pytest.fixture(scope="module")
def regression_file(tmp_path_factory):
    """400 rows of 6 features, real targets (a noisy smooth function of the rows)."""
    g = np.random.default_rng(28)
    X = g.uniform(-1, 1, (400, 6))
    z = np.sin(2 * X[:, 0]) + X[:, 1] * X[:, 2] + 0.1 * g.standard_normal(400)
    path = tmp_path_factory.mktemp("single") / "reg.txt"
    path.write_text("".join(f"{t:.12g} " + " ".join(f"{j + 1}:{v:.8g}" for j, v in enumerate(r)) + "\n"
                            for r, t in zip(X, z)))
    return path


CASES = [("epsilon_svr", []), ("epsilon_svr", ["-p", "0.05", "-c", "4"]), ("epsilon_svr", ["-h", "0", "-t", "1"]),
         ("one_class", []), ("one_class", ["-n", "0.1"]), ("one_class", ["-n", "0.7", "-h", "0", "-t", "0"]),
         ("nu_svr", []), ("nu_svr", ["-n", "0.2", "-c", "4"]), ("nu_svr", ["-h", "0", "-t", "3", "-g", "0.1"])]


@pytest.mark.parametrize("solver,args", CASES, ids=[f"{s}{''.join(a)}" for s, a in CASES])
def test_model_and_output_are_svm_trains(regression_file, tmp_path, solver, args):
    theirs_out = libsvm_run(regression_file, tmp_path / "theirs.model", ["-s", LIBSVM[solver], *args])
    ours_out = ours(solver, regression_file, tmp_path / "ours.model", args)
    assert (tmp_path / "ours.model").read_bytes() == (tmp_path / "theirs.model").read_bytes()
    assert ours_out == theirs_out
    assert "Total nSV" not in ours_out and ("nu = " in ours_out) == (solver == "epsilon_svr")
    assert ("epsilon = " in ours_out) == (solver == "nu_svr")


# one-class at its default nu on heart_scale, and on mushrooms at nu 0.1 (about 800 support vectors instead of 4,000:
# the same solver and predictions, a fifth of the kernel work of both programs)
@pytest.mark.parametrize("solver,name,args", [("epsilon_svr", "german.numer", ["-c", "2"]),
                                              ("one_class", "heart_scale", []),
                                              ("epsilon_svr", "mushrooms", []), ("one_class", "mushrooms", ["-n", "0.1"])])
def test_model_is_svm_trains_on_public_sets(shared_plain, tmp_path, solver, name, args):
    """Public sets (their labels as targets for the SVR): the same model file and lines; llsvm-predict gives
    LIBSVM's svm_predict values. libsvm-official's Python reader drops a file's explicit zeros (german.numer has
    some), svm-train's C reader keeps them, as llsvm's does: the SV lines are compared without them (against the
    svm-train binary, LIBSVM 3.37 built from source, the files are byte-identical)."""
    path = shared_plain(name)
    theirs_out = libsvm_run(path, tmp_path / "theirs.model", ["-s", LIBSVM[solver], *args])
    assert ours(solver, path, tmp_path / "ours.model", args) == theirs_out
    no_zeros = re.compile(r" \d+:0(?= |\n)")
    assert no_zeros.sub("", (tmp_path / "ours.model").read_text()) == (tmp_path / "theirs.model").read_text()
    r = CliRunner().invoke(predict_main, ["-q", str(path), str(tmp_path / "ours.model"), str(tmp_path / "out")])
    assert_exit(r, 0)
    y, x = svmutil.svm_read_problem(str(path))
    p_lib, _, _ = svmutil.svm_predict(y, x, svmutil.svm_load_model(str(tmp_path / "theirs.model")), "-q")
    # (the explicit zeros change the order of the kernels' sums: the last bit)
    np.testing.assert_allclose([float(v) for v in (tmp_path / "out").read_text().split()], p_lib, rtol=1e-12)


NU_SVC = [[], ["-n", "0.2", "-h", "0"], ["-t", "0", "-n", "0.4"], ["-t", "1", "-d", "2", "-g", "0.5"]]


@pytest.mark.parametrize("args", NU_SVC, ids=["rbf", "shrinking-off", "linear", "poly"])
def test_nu_svc_model_and_output_are_svm_trains(tmp_path, args):
    """nu-SVC, three classes one-vs-one (Solver_NU per pair, scaled by its r: `C = 1/r` printed): svm-train's
    file and lines."""
    g = np.random.default_rng(11)
    X = np.vstack([g.normal(c, 1.3, (90, 5)) for c in (-1.0, 0.0, 1.0)])
    y = np.repeat([2, 1, 3], 90)
    order = g.permutation(y.size)
    path = tmp_path / "three.txt"
    path.write_text("".join(f"{y[k]} " + " ".join(f"{j + 1}:{v:.8g}" for j, v in enumerate(X[k])) + "\n"
                            for k in order))
    theirs_out = libsvm_run(path, tmp_path / "theirs.model", ["-s", "1", *args])
    assert ours("nu_svc", path, tmp_path / "ours.model", args) == theirs_out
    assert (tmp_path / "ours.model").read_bytes() == (tmp_path / "theirs.model").read_bytes()
    assert theirs_out.count("C = ") == 3 and "Total nSV = " in theirs_out


@pytest.mark.parametrize("name,args", [("heart_scale", []), ("dna.scale", ["-n", "0.1"]), ("mushrooms", [])])
def test_nu_svc_is_svm_trains_on_public_sets(shared_plain, tmp_path, name, args):
    path = shared_plain(name)
    theirs_out = libsvm_run(path, tmp_path / "theirs.model", ["-s", "1", *args])
    assert ours("nu_svc", path, tmp_path / "ours.model", args) == theirs_out
    assert (tmp_path / "ours.model").read_bytes() == (tmp_path / "theirs.model").read_bytes()


def test_nu_svc_refusals(shared_plain, tmp_path):
    """An infeasible nu (LIBSVM's check over every pair of classes) and a degenerate kernel whose r is 0 (LIBSVM
    writes a model of inf and nan): refused, naming what to change."""
    data = write_small_set(tmp_path / "d.txt", 40, labels=(1, 1, 1, -1), n_features=4, nnz=2)
    r = CliRunner().invoke(train_main, ["-s", "nu_svc", "-n", "0.9", str(data), str(tmp_path / "m")])
    assert_exit(r, 1)
    assert r.stderr == "ERROR: specified nu is infeasible\n" and not (tmp_path / "m").exists()     # LIBSVM's words
    r = CliRunner().invoke(train_main, ["-s", "nu_svc", "-q", "-t", "3", "-g", "0.5", str(shared_plain("fourclass")),
                                        str(tmp_path / "m")])
    assert_exit(r, 1)
    assert "-s nu_svc: the solution of the class pair (1, -1) overflows (rho is nan" in r.stderr
    assert "r = 0, C = 1/r" in r.stderr and not (tmp_path / "m").exists()


@pytest.mark.parametrize("solver", ["epsilon_svr", "nu_svr", "one_class"])
def test_certificate(regression_file, solver):
    """The dual is -f(a), the primal of the same problem at the model is above it, and the gap closes with eps."""
    ds = llsvm.read_dataset(str(regression_file))
    gaps = []
    for eps in (1e-2, 1e-6):
        m = llsvm.train(ds, params=Params(solver=solver, eps=eps))
        (r,) = m.meta["results"]
        assert r.converged and r.max_violation < eps
        assert r.dual == pytest.approx(-r.extra["obj"], rel=1e-12)
        assert r.primal >= r.dual - 1e-9 * abs(r.dual)
        gaps.append(r.gap / max(1.0, abs(r.primal)))
    assert gaps[1] < 1e-5 and gaps[1] <= gaps[0]


def test_svr_fits_the_function(regression_file):
    """epsilon-SVR: the training MSE is near the noise level (0.01) and the --json certificate holds."""
    ds = llsvm.read_dataset(str(regression_file))
    m = llsvm.train(ds, params=Params(solver="epsilon_svr", C=4.0, svr_p=0.05))
    mse = float(np.mean((m.predict(ds) - ds.y) ** 2))
    assert mse < 0.03


def test_cross_validation_regression_lines(regression_file):
    """-v for the SVR: LIBSVM's mean squared error and squared correlation lines, over plain (unstratified)
    folds, the same for a seed."""
    r = CliRunner().invoke(train_main, ["-s", "epsilon_svr", "-q", "-v", "4", str(regression_file)])
    assert_exit(r, 0)
    lines = r.stdout.splitlines()
    assert lines[0].startswith("Cross Validation Mean squared error = ")
    assert lines[1].startswith("Cross Validation Squared correlation coefficient = ")
    assert float(lines[0].split("= ")[1]) < 0.05
    again = CliRunner().invoke(train_main, ["-s", "epsilon_svr", "-q", "-v", "4", str(regression_file)])
    assert again.stdout == r.stdout


def test_c_svc_is_smo(tmp_path):
    """-s c_svc (LIBSVM's svm_type name) is -s smo."""
    data = write_small_set(tmp_path / "d.txt", 120, labels=(1, 2, 3), n_features=5, nnz=3)
    for name in ("smo", "c_svc"):
        r = CliRunner().invoke(train_main, ["-s", name, "-q", str(data), str(tmp_path / f"{name}.model")])
        assert_exit(r, 0)
    assert (tmp_path / "smo.model").read_bytes() == (tmp_path / "c_svc.model").read_bytes()


@pytest.mark.parametrize("args,message", [
    (["-s", "one_class", "-n", "0"], "ERROR: nu <= 0 or nu > 1\n"),
    (["-s", "epsilon_svr", "-p", "-1"], "ERROR: p < 0\n"),
    (["-s", "one_class", "-p", "0.2"], "ERROR: -p applies only to -s 11, -s 12, -s 13 and -s epsilon_svr, not to "
                                       "-s one_class\n"),
    (["-s", "21", "-b", "1"], "ERROR: -b applies only to -s smo, -s nu_svc, -s epsilon_svr, -s nu_svr and -s "
                              "one_class, not to -s 21\n"),
    (["-s", "one_class", "-B", "1"], "ERROR: -B applies only to the linear solvers, not to -s one_class (a kernel "
                                     "SVM's bias is its rho)\n"),
])
def test_refusals(regression_file, tmp_path, args, message):
    r = CliRunner().invoke(train_main, [*args, str(regression_file), str(tmp_path / "m")])
    assert_exit(r, 1)
    assert r.stderr == message
    assert not (tmp_path / "m").exists()


# -- -b 1: the probability models of nu-SVC, the SVRs and the one-class SVM -------------------------------------
@pytest.mark.parametrize("name,args,warned", [("heart_scale", [], False), ("breast-cancer", ["-n", "0.2"], False),
                                              ("iris.scale", ["-t", "1", "-d", "2"], False),
                                              ("heart_scale", ["-n", "0.999"], True)])
def test_one_class_probability_is_svm_trains(shared_plain, tmp_path, name, args, warned):
    """One-class -b 1 (no folds: the density marks of the training decision values): svm-train -s 2 -b 1's model
    file byte for byte, its stdout, and its warning on stderr when a side has fewer than 5 values (nu 0.999: no
    prob_density_marks line then, as LIBSVM's)."""
    path = shared_plain(name)
    theirs = libsvm_run(path, tmp_path / "theirs.model", ["-s", "2", "-b", "1", *args], stderr=True)
    r = CliRunner().invoke(train_main, ["-s", "one_class", "-b", "1", *args, str(path), str(tmp_path / "ours.model")])
    assert_exit(r, 0)
    ours = (tmp_path / "ours.model").read_text()
    assert ours == (tmp_path / "theirs.model").read_text()
    assert (r.stdout, without_scaling_note(r.stderr)) == theirs       # unscaled breast-cancer: llsvm's note too
    assert ("prob_density_marks " in ours) != warned
    assert ("too few to do a probability estimation" in r.stderr) == warned


def libsvm_permutations(sizes):
    """The permutations LIBSVM draws with rand() from its start (a fresh process, glibc's default seed), one per
    size in turn."""
    return json.loads(subprocess.run([sys.executable, "-c", PERMUTATIONS, *map(str, sizes)], check=True,
                                     capture_output=True, text=True, timeout=600).stdout)


class Replay:
    """Seeds whose permutations are given ones, in turn (LIBSVM's, from libsvm_permutations): put in place of a
    driver's Seeds, its folds become LIBSVM's."""

    def __init__(self, perms):
        self.perms = list(perms)

    def permutation(self, n):
        perm = self.perms.pop(0)
        assert len(perm) == n
        return np.array(perm, np.int64)

    def permutations(self, sizes):
        return np.concatenate([self.permutation(n) for n in sizes]) if len(sizes) else np.empty(0, np.int64)


def with_libsvms_folds(monkeypatch, module, sizes, solver, args, path, model):
    """llsvm-train -b 1 --libsvm-rand in this process (LIBSVM's permutations: glibc's rand() from a fresh process's
    state, as svm-train draws them; libsvm_permutations replays the same through the C library): stdout."""
    r = CliRunner().invoke(train_main, ["-s", solver, "-b", "1", "--libsvm-rand", *args, str(path), str(model)])
    assert_exit(r, 0)
    return r.stdout


def prob_lines(text):
    """A model file's (probability lines, other lines)."""
    lines = text.splitlines()
    return [v for v in lines if v.startswith("prob")], [v for v in lines if not v.startswith("prob")]


@pytest.mark.parametrize("name,args", [("heart_scale", []), ("iris.scale", ["-n", "0.3"]),
                                       ("wine.scale", ["-t", "1", "-d", "2"])])
def test_nu_svc_probability_with_libsvms_folds_is_libsvms(shared_plain, tmp_path, monkeypatch, name, args):
    """nu-SVC -b 1 with LIBSVM's folds (every pair's rand() permutation replayed in svm_train's order): each
    pair's folds train nu-SVCs as LIBSVM's svm_binary_svc_probability does, svm-train's stdout line for line (the
    nested trainings' lines included) and its model file byte for byte, probA and probB included."""
    from llsvm.solvers import ovo
    path = shared_plain(name)
    ds = llsvm.read_dataset(str(path))
    sizes = [rows.size for _, _, rows, _ in ovo.Pairs(ds.y).problems]
    # the pairs' draws come from ovo.run_pairs' Seeds (one loop for smo's and the online lists' pairs)
    out = with_libsvms_folds(monkeypatch, ovo, sizes, "nu_svc", args, path, tmp_path / "ours.model")
    assert out == libsvm_run(path, tmp_path / "theirs.model", ["-s", "1", "-b", "1", *args])
    assert out.count("Total nSV = ") == 5 * len(sizes) + 1
    assert (tmp_path / "ours.model").read_text() == (tmp_path / "theirs.model").read_text()
    assert llsvm.load_model(str(tmp_path / "ours.model")).probA.size == len(sizes)


@pytest.mark.parametrize("solver,name,args", [("epsilon_svr", "heart_scale", []),
                                              ("epsilon_svr", "breast-cancer", ["-c", "2", "-p", "0.2"]),
                                              ("epsilon_svr", "reg", ["-t", "1", "-d", "2"]),
                                              ("nu_svr", "heart_scale", ["-n", "0.3"]), ("nu_svr", "breast-cancer", []),
                                              ("nu_svr", "reg", ["-h", "0"])])
def test_svr_probability_with_libsvms_folds_is_libsvms(shared_plain, regression_file, tmp_path, monkeypatch, solver,
                                                       name, args):
    """epsilon-SVR and nu-SVR -b 1 with LIBSVM's folds (svm_cross_validation's rand() permutation of the rows,
    replayed): svm-train's stdout line for line (the 5 folds' trainings, then the "Prob. model" lines) and its
    model file byte for byte, probA (the Laplace sigma) included: the residuals and their sums in LIBSVM's order."""
    from llsvm.solvers import single
    path = regression_file if name == "reg" else shared_plain(name)
    ds = llsvm.read_dataset(str(path))
    out = with_libsvms_folds(monkeypatch, single, [ds.n_rows], solver, args, path, tmp_path / "ours.model")
    assert out == libsvm_run(path, tmp_path / "theirs.model", ["-s", LIBSVM[solver], "-b", "1", *args])
    assert out.count("optimization finished") == 6 and "\nz: Laplace distribution" in out
    ours, theirs = ((tmp_path / f).read_text() for f in ("ours.model", "theirs.model"))
    assert ours == theirs
    a, b = llsvm.load_model(str(tmp_path / "ours.model")), llsvm.load_model(str(tmp_path / "theirs.model"))
    assert a.svr_probability == pytest.approx(b.svr_probability, rel=1e-9)


@pytest.mark.parametrize("solver,name", [("epsilon_svr", "heart_scale"), ("epsilon_svr", "breast-cancer"),
                                         ("nu_svr", "heart_scale"), ("nu_svr", "wine.scale"), ("nu_svr", "reg")])
def test_svr_probability_with_seeded_folds(shared_plain, regression_file, tmp_path, solver, name):
    """SVR -b 1 with llsvm's seeded folds: sigma within 5 % of LIBSVM's (its folds from rand(); measured within
    3 %), the rest of the model file LIBSVM's; the same --seed gives the same file, another seed another sigma."""
    path = regression_file if name == "reg" else shared_plain(name)
    theirs = libsvm_saved_model(path, tmp_path / "theirs.model", ["-s", LIBSVM[solver], "-q", "-b", "1"])
    files = {}
    for key, seed in (("a", []), ("b", []), ("c", ["--seed", "7"])):
        files[key] = tmp_path / f"{key}.model"
        r = CliRunner().invoke(train_main, ["-s", solver, "-q", "-b", "1", "--json", str(tmp_path / "m.json"), *seed,
                                            str(path), str(files[key])])
        assert_exit(r, 0)
        assert json.loads((tmp_path / "m.json").read_text())["probability"] == 1
    ours = llsvm.load_model(str(files["a"]))
    assert abs(ours.svr_probability / theirs.svr_probability - 1.0) <= 0.05, (ours.svr_probability,
                                                                            theirs.svr_probability)
    assert prob_lines(files["a"].read_text())[1] == prob_lines((tmp_path / "theirs.model").read_text())[1]
    assert files["a"].read_bytes() == files["b"].read_bytes()
    assert llsvm.load_model(str(files["c"])).svr_probability != ours.svr_probability


def test_svr_cross_validation_with_probability(regression_file):
    """-v with -b 1 for the SVR: each fold's model carries its Laplace sigma, and the fold's predictions are its
    values (as LIBSVM's svm_cross_validation, which uses probabilities for classification only): the same lines
    as without -b."""
    outs = []
    for b in ("0", "1"):
        r = CliRunner().invoke(train_main, ["-s", "nu_svr", "-q", "-b", b, "-v", "4", str(regression_file)])
        assert_exit(r, 0)
        outs.append(r.stdout)
    assert outs[0] == outs[1] and outs[0].startswith("Cross Validation Mean squared error = ")


# LIBSVM's own prediction of a model file: libsvm-official's svm_load_model and svm_predict_probability (the C
# functions svm-predict calls), one thread (its decision sums run in parallel otherwise), in a fresh process
LIBSVM_PREDICT = ("import json, sys\nfrom libsvm import svmutil\ny, x = svmutil.svm_read_problem(sys.argv[1])\n"
                  "m = svmutil.svm_load_model(sys.argv[2])\n"
                  "labels, _, p = svmutil.svm_predict(y, x, m, '-b 1 -q')\n"
                  "sigma = m.get_svr_probability() if m.get_svm_type() in (3, 4) else None\n"
                  "print(json.dumps({'labels': labels, 'p': p, 'sigma': sigma}))\n")


@pytest.mark.parametrize("solver,name,args", [("nu_svr", "reg", []), ("epsilon_svr", "heart_scale", ["-p", "0.2"]),
                                              ("one_class", "heart_scale", ["-n", "0.3"]),
                                              ("nu_svc", "iris.scale", [])])
def test_libsvm_predicts_our_probability_models_as_llsvm_predict(shared_plain, regression_file, tmp_path, solver,
                                                                 name, args):
    """llsvm-train -s ... -b 1, then LIBSVM's loader and svm_predict_probability (libsvm-official) and
    llsvm-predict -b 1 on the same model file: the same label and probabilities on every row, as svm-predict
    prints them (%g), and for the SVR the same sigma line. (Against the svm-predict binary built from LIBSVM 3.37's
    source the output files were byte-identical on 16 runs: 4 types x 4 sets.)"""
    path = regression_file if name == "reg" else shared_plain(name)
    model = tmp_path / "m"
    assert_exit(CliRunner().invoke(train_main, ["-s", solver, "-q", "-b", "1", *args, str(path), str(model)]), 0)
    theirs = json.loads(subprocess.run([sys.executable, "-c", LIBSVM_PREDICT, str(path), str(model)], env=ONE_THREAD,
                                       capture_output=True, text=True, timeout=600, check=True).stdout)
    r = CliRunner().invoke(predict_main, ["-b", "1", str(path), str(model), str(tmp_path / "ours.out")])
    assert_exit(r, 0)
    lines = (tmp_path / "ours.out").read_text().splitlines()
    regression = solver.endswith("svr")
    rows = lines if regression else lines[1:]
    assert len(rows) == len(theirs["labels"])
    for line, label, p in zip(rows, theirs["labels"], theirs["p"]):
        assert line == " ".join([f"{label:.17g}" if regression else f"{label:g}"] + [f"{v:g}" for v in p]), line
    if regression:
        assert f"sigma={theirs['sigma']:g}" in r.stdout
