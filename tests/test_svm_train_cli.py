"""llsvm-svm-train (issue 47): svm-train's command line, run by llsvm-train.

The references are independent of llsvm: LIBSVM 3.37 itself through libsvm-official (svm_train, svm_save_model and
svm_cross_validation, in a fresh process whose C library's rand() is where svm-train's starts: srand is never
called), the C library's own rand() (ctypes), svm-train's usage text as svm-train.c prints it, and LIBSVM's
tools/grid.py's interface to the svm-train it runs (its command line and how it reads the rate).
"""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from click.testing import CliRunner

from llsvm.cli import svmtrain
from reference.files import write_text

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ONE_THREAD = {**os.environ, "OMP_NUM_THREADS": "1"}

# svm-train.c's exit_with_help (LIBSVM 3.37), as it prints it
SVM_TRAIN_USAGE = """\
Usage: svm-train [options] training_set_file [model_file]
options:
-s svm_type : set type of SVM (default 0)
	0 -- C-SVC		(multi-class classification)
	1 -- nu-SVC		(multi-class classification)
	2 -- one-class SVM
	3 -- epsilon-SVR	(regression)
	4 -- nu-SVR		(regression)
-t kernel_type : set type of kernel function (default 2)
	0 -- linear: u'*v
	1 -- polynomial: (gamma*u'*v + coef0)^degree
	2 -- radial basis function: exp(-gamma*|u-v|^2)
	3 -- sigmoid: tanh(gamma*u'*v + coef0)
	4 -- precomputed kernel (kernel values in training_set_file)
-d degree : set degree in kernel function (default 3)
-g gamma : set gamma in kernel function (default 1/num_features)
-r coef0 : set coef0 in kernel function (default 0)
-c cost : set the parameter C of C-SVC, epsilon-SVR, and nu-SVR (default 1)
-n nu : set the parameter nu of nu-SVC, one-class SVM, and nu-SVR (default 0.5)
-p epsilon : set the epsilon in loss function of epsilon-SVR (default 0.1)
-m cachesize : set cache memory size in MB (default 100)
-e epsilon : set tolerance of termination criterion (default 0.001)
-h shrinking : whether to use the shrinking heuristics, 0 or 1 (default 1)
-b probability_estimates : whether to train a SVC or SVR model for probability estimates, 0 or 1 (default 0)
-wi weight : set the parameter C of class i to weight*C, for C-SVC (default 1)
-v n: n-fold cross validation mode
-q : quiet mode (no outputs)
"""

# LIBSVM (libsvm-official) as svm-train runs: argv[1] the data, argv[2] the model file, the rest svm-train's
# options. Its C output (the optimization's lines) is flushed before -v's result lines, which svmutil prints from
# Python, so the stdout is in svm-train's order.
SVM_TRAIN = textwrap.dedent("""\
    import contextlib, ctypes, io, sys
    from libsvm import svmutil
    y, x = svmutil.svm_read_problem(sys.argv[1])
    text = io.StringIO()
    with contextlib.redirect_stdout(text):
        m = svmutil.svm_train(y, x, ' '.join(sys.argv[3:]))
    ctypes.CDLL(None).fflush(None)
    sys.stdout.write(text.getvalue())
    if '-v' not in sys.argv:
        svmutil.svm_save_model(sys.argv[2], m)
    """)

# the cross-validation rates of svm-train, one fresh rand() stream a cell (srand(1): a new svm-train process), for
# the cells argv[2:] ("C,gamma"), of argv[1] with 3 folds
CV_RATES = textwrap.dedent("""\
    import ctypes, json, sys
    from libsvm import svmutil
    libc = ctypes.CDLL(None)
    y, x = svmutil.svm_read_problem(sys.argv[1])
    out = []
    for cell in sys.argv[2:]:
        c, g = cell.split(',')
        libc.srand(1)
        out.append(svmutil.svm_train(y, x, f'-c {c} -g {g} -v 3 -q'))
    print(json.dumps(out))
    """)


def libsvm(data, model, args):
    return subprocess.run([sys.executable, "-c", SVM_TRAIN, str(data), str(model), *args], capture_output=True,
                          text=True, timeout=600, check=True, env=ONE_THREAD).stdout


def ours(args, cwd=None):
    """llsvm-svm-train in this process: (exit code, stdout, stderr)."""
    runner = CliRunner(mix_stderr=False) if "mix_stderr" in CliRunner.__init__.__code__.co_varnames else CliRunner()
    if cwd is not None:
        old = os.getcwd()
        os.chdir(cwd)
    try:
        r = runner.invoke(svmtrain.main, [str(a) for a in args], catch_exceptions=False)
    finally:
        if cwd is not None:
            os.chdir(old)
    return r.exit_code, r.stdout, r.stderr


@pytest.fixture(scope="module")
def sets(tmp_path_factory, shared_plain):
    """heart_scale, a small regression set (heart_scale's features, a smooth target with noise), iris.scale,
    dna.scale's first 700 rows, and three classes of 500 dense rows of 12 features."""
    d = tmp_path_factory.mktemp("svm-train-sets")
    heart = shared_plain("heart_scale")
    import llsvm
    ds = llsvm.read_dataset(str(heart))
    X = ds.to_csr()[:150]
    g = np.random.default_rng(47)
    t = np.sin(3 * X[:, 0].toarray().ravel()) + X[:, 1:5].toarray().sum(axis=1) + g.normal(0, 0.1, X.shape[0])
    dna = llsvm.read_dataset(str(shared_plain("dna.scale")))        # rows of 0s and 1s, three classes
    D = g.normal(size=(500, 12))                                       # every feature in every row (panels)
    c = np.argmax(D[:, :3] + 0.8 * g.normal(size=(500, 3)), axis=1) + 1
    return {"heart": heart, "reg": write_text(d / "reg", X, t), "iris": shared_plain("iris.scale"),
            "dna": write_text(d / "dna", dna.to_csr()[:700], dna.y[:700]), "full": write_text(d / "full", D, c)}


def test_glibc_rand_is_the_c_librarys():
    """cext/_random.pyx's rand() stream against the C library's own rand(): from the unseeded state (svm-train's)
    and after srand(12345), 20000 draws each, and LIBSVM's shuffle of them."""
    from llsvm._ext import _random
    script = ("import ctypes, json\nlibc = ctypes.CDLL(None)\na = [libc.rand() for _ in range(20000)]\n"
              "libc.srand(12345)\nb = [libc.rand() for _ in range(20000)]\nprint(json.dumps([a, b]))\n")
    import json
    a, b = json.loads(subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600,
                                     check=True).stdout)
    assert _random.glibc_rand(_random.glibc_rand_state(), 20000).tolist() == a
    assert _random.glibc_rand(_random.glibc_rand_state(12345), 20000).tolist() == b
    # the shuffle: j = i + rand() % (n - i), a[i] and a[j] swapped, over a stream that goes on across sizes
    expect, k = [], 0
    for n in (7, 1, 0, 300):
        p = list(range(n))
        for i in range(n):
            j = i + a[k] % (n - i)
            k += 1
            p[i], p[j] = p[j], p[i]
        expect += p
    got = _random.glibc_permutations(np.array([7, 1, 0, 300], np.int64), _random.glibc_rand_state())
    assert got.tolist() == expect


@pytest.mark.parametrize("args, message", [
    ([], ""),
    (["-c"], ""),                                   # a value missing
    (["-c", "1"], ""),                              # no training file
    (["-z", "1", "f"], "Unknown option: -z\n"),
    (["-v", "1", "f"], "n-fold cross validation: n must >= 2\n"),
])
def test_usage_and_exit_code(args, message):
    """svm-train's usage on stdout, word for word, and exit 1: on no arguments, a missing value or file, an unknown
    option (named on stderr first) and -v below 2."""
    code, out, err = ours(args)
    assert (code, out, err) == (1, SVM_TRAIN_USAGE, message)


def test_svm_check_parameter_errors(sets, tmp_path):
    """svm_check_parameter's words, exit 1, no model: an unknown -s (after the input is found: svm-train reads it
    first), and a value a type checks; a value a type ignores is not checked (svm-train's -c of nu-SVC)."""
    heart = sets["heart"]
    assert ours(["-s", "7", tmp_path / "missing"])[::2] == (1, f"can't open input file {tmp_path / 'missing'}\n")
    assert ours(["-s", "7", heart, tmp_path / "m"])[::2] == (1, "ERROR: unknown svm type\n")
    assert ours(["-t", "9", heart, tmp_path / "m"])[::2] == (1, "ERROR: unknown kernel type\n")
    assert ours(["-g", "-1", heart, tmp_path / "m"])[::2] == (1, "ERROR: gamma < 0\n")
    assert ours(["-s", "3", "-p", "-1", heart, tmp_path / "m"])[::2] == (1, "ERROR: p < 0\n")
    assert ours(["-s", "1", "-n", "0.99", heart, tmp_path / "m"])[::2] == (1, "ERROR: specified nu is infeasible\n")
    assert not (tmp_path / "m").exists()
    code, _, err = ours(["-q", "-s", "1", "-c", "-1", "-p", "-5", heart, tmp_path / "m"])
    assert (code, err) == (0, "") and (tmp_path / "m").exists()


def test_c_values():
    """Values as C's atoi and atof read them: the leading number, 0 without one."""
    assert [svmtrain.atoi(t) for t in ("3", " -2x", "x", "+7.9", "")] == [3, -2, 0, 7, 0]
    assert [svmtrain.atof(t) for t in ("0.5", "1e-3x", "x", ".5", "-inf", "0x1p-2", "2.")] == \
        [0.5, 1e-3, 0.0, 0.5, -np.inf, 0.25, 2.0]


CASES = [("heart", ["-s", "0"]), ("heart", ["-s", "1", "-n", "0.3"]), ("heart", ["-s", "2", "-n", "0.2"]),
         ("reg", ["-s", "3", "-p", "0.2", "-c", "2"]), ("reg", ["-s", "4", "-n", "0.4"]),
         ("heart", ["-t", "1", "-d", "2", "-g", "0.5", "-r", "1", "-w1", "3", "-h", "0", "-c", "0.7e0"]),
         ("heart", ["-s", "2", "-b", "1", "-t", "0"]),
         ("reg", ["-s", "3", "-t", "3", "-g", "0.05", "-e", "0.01", "-m", "2"]),
         # dna.scale's rows are 0s and 1s (the kernel cache's binary rows: popcounts and a table), three classes
         ("dna", ["-s", "0"]), ("dna", ["-t", "1", "-g", "0.02", "-r", "1", "-m", "1"]),
         ("dna", ["-s", "1", "-n", "0.3", "-t", "3", "-g", "0.001"]), ("dna", ["-s", "3", "-t", "0", "-c", "0.1"]),
         # every row holds every feature (the kernel cache's panels), three classes
         ("full", ["-s", "0", "-c", "4"]), ("full", ["-s", "1", "-n", "0.4"])]


@pytest.mark.parametrize("name, args", CASES, ids=[" ".join(a) for _, a in CASES])
def test_model_file_and_output_are_svm_trains(sets, tmp_path, name, args):
    """The model file byte for byte and the stdout (the optimization's lines) equal LIBSVM's, for every -s; the
    model file's default name is svm-train's (the training file's base name + .model, in the current directory)."""
    data = sets[name]
    theirs = libsvm(data, tmp_path / "theirs.model", args)
    code, out, err = ours([*args, data], cwd=tmp_path)
    assert (code, err) == (0, "")
    assert out == theirs
    assert (tmp_path / (os.path.basename(data) + ".model")).read_bytes() == (tmp_path / "theirs.model").read_bytes()


VCASES = [("heart", ["-s", "0", "-v", "5"]), ("heart", ["-s", "1", "-v", "4"]), ("heart", ["-s", "2", "-v", "3"]),
          ("reg", ["-s", "3", "-v", "5"]), ("reg", ["-s", "4", "-v", "3", "-c", "4"])]


@pytest.mark.parametrize("name, args", VCASES, ids=[" ".join(a) for _, a in VCASES])
def test_cross_validation_is_svm_trains(sets, tmp_path, name, args):
    """-v: svm-train's folds (stratified for the classifiers, a permutation otherwise, from rand()), so every fold's
    optimization lines and the result line (accuracy, or the mean squared error and squared correlation) are
    LIBSVM's; without --libsvm-rand (llsvm-train's folds from --seed) the folds differ."""
    data = sets[name]
    theirs = libsvm(data, "-", args)
    code, out, err = ours([*args, data])
    assert (code, err) == (0, "")
    assert out == theirs and "Cross Validation" in out


PCASES = [("heart", ["-b", "1"]), ("iris", ["-b", "1", "-c", "4"]), ("iris", ["-s", "1", "-b", "1", "-n", "0.3"])]


@pytest.mark.parametrize("name, args", PCASES, ids=[" ".join(a) for a in (a for _, a in PCASES)])
def test_probability_model_is_svm_trains(sets, tmp_path, name, args):
    """-b 1 (C-SVC on two and three classes, nu-SVC): every pair's 5-fold permutation drawn from svm-train's rand()
    pair after pair, so the model file, probA and probB included, is svm-train's byte for byte, and so is the
    stdout (every fold's optimization lines)."""
    data = sets[name]
    theirs = libsvm(data, tmp_path / "theirs.model", args)
    code, out, err = ours([*args, data, tmp_path / "ours.model"])
    assert (code, err) == (0, "") and out == theirs
    assert (tmp_path / "ours.model").read_bytes() == (tmp_path / "theirs.model").read_bytes()
    assert b"probA" in (tmp_path / "ours.model").read_bytes()


PVCASES = [("heart", ["-b", "1", "-v", "5"]), ("iris", ["-s", "1", "-b", "1", "-v", "3", "-n", "0.3"]),
           ("reg", ["-s", "3", "-b", "1", "-v", "5"])]


@pytest.mark.parametrize("name, args", PVCASES, ids=[" ".join(a) for a in (a for _, a in PVCASES)])
def test_probability_cross_validation_is_svm_trains(sets, name, args):
    """-v with -b 1: svm_cross_validation's rand() calls first, then each fold's svm_train's (its pairs' -b 1
    permutations, or the SVR's 5 folds) on the one stream of the process, so every line, the rate included, is
    svm-train's."""
    data = sets[name]
    theirs = libsvm(data, "-", args)
    code, out, err = ours([*args, data])
    assert (code, err) == (0, "")
    assert out == theirs and "Cross Validation" in out


def test_cross_validation_differs_without_libsvm_rand(sets):
    """The test above can fail: llsvm-train's own folds (from --seed) give other fold lines on heart_scale."""
    from llsvm.cli.train import main as train_main
    theirs = libsvm(sets["heart"], "-", ["-v", "5"])
    r = CliRunner().invoke(train_main, ["-s", "smo", "-v", "5", str(sets["heart"])])
    assert r.exit_code == 0 and r.output.count("optimization finished") == 5 and r.output != theirs


def test_console_script():
    """pyproject's llsvm-svm-train is the entry the wrapper below runs."""
    with open(os.path.join(REPO, "pyproject.toml")) as f:
        lines = f.read().split("[project.scripts]\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert 'llsvm-svm-train = "llsvm.cli.entry:svm_train"' in lines


def grid_py_rate(svmtrain, c, g, fold, dataset):
    """One cell as LIBSVM 3.37's tools/grid.py runs it (its Worker.get_cmd and LocalWorker.run_one, the interface
    between grid.py and the svm-train it is given, restated here: grid.py itself is not a package a test can
    install): the command line '"svmtrain" -c C -g G -v fold  "dataset" ' through a shell, and the rate read from
    the last word of the first stdout line holding 'Cross', its '%' cut. The closing note of issue 47 runs the real
    grid.py."""
    cmdline = '"' + svmtrain + '"' + ' -c {0} '.format(c) + ' -g {0} '.format(g)
    cmdline += ' -v {0} {1} {2} '.format(fold, "", '"' + dataset + '"')
    result = subprocess.Popen(cmdline, shell=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              stdin=subprocess.PIPE, env=ONE_THREAD).stdout
    for line in result.readlines():
        if str(line).find('Cross') != -1:
            return float(line.split()[-1][0:-1])
    raise AssertionError(f"no 'Cross' line from {cmdline}")


def test_grid_pys_cells_are_svm_trains(sets, tmp_path):
    """grid.py -svmtrain llsvm-svm-train (the console script's entry, through a wrapper), cell by cell as grid.py
    runs them: every cell's CV rate is svm-train's (its folds), and so is llsvm-train -s smo --libsvm-rand --grid's."""
    wrapper = tmp_path / "llsvm-svm-train"
    wrapper.write_text(f"#!{sys.executable}\nimport sys\nsys.path.insert(0, {REPO!r})\n"
                       "from llsvm.cli.entry import svm_train\nsvm_train()\n")
    wrapper.chmod(0o755)
    cells = {(2.0 ** c, 2.0 ** g): grid_py_rate(str(wrapper), 2.0 ** c, 2.0 ** g, 3, str(sets["heart"]))
             for c in (-1, 1) for g in (-3, -1)}
    assert sorted(cells) == [(0.5, 0.125), (0.5, 0.5), (2.0, 0.125), (2.0, 0.5)]
    import json
    keys = sorted(cells)
    rates = json.loads(subprocess.run([sys.executable, "-c", CV_RATES, str(sets["heart"]),
                                       *[f"{c!r},{g!r}" for c, g in keys]], capture_output=True, text=True,
                                      timeout=600, check=True, env=ONE_THREAD).stdout.splitlines()[-1])
    assert [cells[k] for k in keys] == [float(f"{r:g}") for r in rates]
    from llsvm.cli.train import main as train_main
    r = CliRunner().invoke(train_main, ["-s", "smo", "--libsvm-rand", "-v", "3", "--grid", "C=0.5,2 g=0.125,0.5",
                                        str(sets["heart"])])
    assert r.exit_code == 0, r.output
    best = max(rates)
    assert f"(Cross Validation Accuracy = {best:g}%)" in r.output
