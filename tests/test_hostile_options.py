"""Issue 27, items 3, 4, 5 and 8 (threads, --sigma): option values as a hostile user gives them.

- Item 3: no model file that its own llsvm-predict refuses: option values whose model cannot be finite are refused
  up front (LIBLINEAR's check_parameter style, exit 1), -s 21 -n 1 gets a finite rho, and every model (linear,
  kernel, tree) is checked for finite numbers in the one place models are saved (BaseModel.save), the message
  naming the value and the option to change.
- Item 4: no "internal error" from an option value: every range is checked and named, exit 1 (or Click's exit 2).
- Item 5: grids and caches bounded before anything is allocated: the grid's cells counted from its terms, -m
  bounded by the memory available (LIBSVM's -m is a cap), the per-epoch counters checked.
- Item 8: --threads above the CPUs is capped (it ended in libgomp's "Thread creation failed" under a memory limit);
  --sigma whose gamma underflows to 0 is refused.

The command-line cases run the installed console scripts in a subprocess under an address-space limit of 2 GiB
(test_reliability.run_limited), never in-process, as a user would; the library rules run in-process.
"""
import math
import os
import resource

import numpy as np
import pytest

from llsvm.solvers import grid as grid_module
from llsvm import memory
from llsvm.errors import ParameterError
from llsvm.models import Model, NonFiniteModelError, load_model
from llsvm.report import Reporter
from llsvm.solvers import online, smo
from llsvm.options import sigma_gamma
from llsvm.options import OnlineOptions, SMOOptions
from llsvm.params import Params
from llsvm.models.svm import SVMModel
from llsvm.models.tree import Node, Tree, TreeModel

from conftest import write_small_set
from test_reliability import assert_clean_failure, run_limited


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    """A 270-row two-class file (heart_scale's size) and a 3-class one."""
    d = tmp_path_factory.mktemp("hostile-options")
    return {"two": write_small_set(d / "two.txt", 270, n_features=13),
            "three": write_small_set(d / "three.txt", 60, labels=(1, 2, 3), n_features=8)}


def train(args, path, model, **kw):
    return run_limited(["llsvm-train", "-q", *args, path, model], **kw)


def assert_usage_error(proc, *needles):
    """Click's usage error: exit 2 and its message, no traceback."""
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr, proc.stderr
    for needle in needles:
        assert needle in proc.stderr, proc.stderr


def assert_predicts(path, model, tmp_path):
    proc = run_limited(["llsvm-predict", path, model, tmp_path / "out"])
    assert proc.returncode == 0, proc.stderr
    assert len((tmp_path / "out").read_text().splitlines()) == sum(1 for _ in open(path))


# -- item 3: models that predict refuses ------------------------------------------------------------------------
def test_s7_class_weight_zero_is_refused(data, tmp_path):
    """LIBLINEAR's -s 7 takes log(alpha / (C - alpha)): with -w1 0 that class's C is 0, 0/0, and LIBLINEAR writes NaN
    weights. Refused up front (a weight must be > 0 for -s 7); other solvers take a weight of 0 (C = 0 for the
    class) as LIBLINEAR does."""
    model = tmp_path / "m"
    proc = train(["-s", "7", "-w1", "0"], data["two"], model)
    assert_clean_failure(proc, "ERROR: -w1 0: -s 7 needs a class weight > 0")
    assert not model.exists()
    proc = train(["-s", "3", "-w1", "0"], data["two"], model)
    assert proc.returncode == 0, proc.stderr
    assert_predicts(data["two"], model, tmp_path)


def test_oneclass_nu_one_has_a_finite_rho(data, tmp_path):
    """-s 21 -n 1: every alpha is 1, no free one, and LIBLINEAR's (ub + lb) / 2 is inf; the model takes lb, the
    finite end of the optimal rhos, and predicts."""
    model = tmp_path / "m"
    proc = train(["-s", "21", "-n", "1"], data["two"], model)
    assert proc.returncode == 0, proc.stderr
    m = load_model(model)
    assert math.isfinite(m.rho)
    assert_predicts(data["two"], model, tmp_path)


@pytest.mark.parametrize("args,named", [(["-c", "1e308"], "-c 1e+308"), (["-B", "1e308"], "-B 1e+308"),
                                        (["-w1", "1e308"], "-w1 1e+308")], ids=["c", "B", "w1"])
def test_s7_model_that_is_not_finite_is_not_written(data, tmp_path, args, named):
    """LIBLINEAR's -s 7 makes NaN weights from these; the model is refused where it is saved, naming the value and
    the option to change, and no file is written (an existing one is left as it was)."""
    model = tmp_path / "m"
    model.write_text("before\n")
    proc = train(["-s", "7", *args], data["two"], model)
    assert_clean_failure(proc, "Error: the model is not written: the weight of feature", "not a finite number",
                         f"change {named}")
    assert model.read_text() == "before\n"


@pytest.mark.parametrize("solver", ["local1d", "project1d"])
@pytest.mark.parametrize("bias,shown", [("1e-320", "1e-320"), ("4.9e-324", "5e-324")])
def test_free_bias_too_small_is_refused(data, tmp_path, solver, bias, shown):
    """w_(n+1) = b / B overflows for a subnormal B."""
    model = tmp_path / "m"
    proc = train(["-s", solver, "-B", bias], data["two"], model)
    assert_clean_failure(proc, f"ERROR: -B {shown}: -s {solver} writes its free bias b as w_(n+1) = b / B")
    assert not model.exists()


def test_save_refuses_every_kind_of_model_that_is_not_finite(tmp_path):
    """The one check before any model is written (BaseModel.save): linear, kernel and tree models, each naming the
    value; a finite model of each kind is written."""
    path = tmp_path / "m"
    W = np.array([[1.0], [np.nan], [0.5]])
    with pytest.raises(NonFiniteModelError, match=r"the weight of feature 2 is nan, not a finite number"):
        Model("L2R_LR", 2, [1, -1], 2, 1.0, W).save(path)
    with pytest.raises(NonFiniteModelError, match=r"the bias weight of class 3 is inf"):
        Model("L2R_LR", 3, [1, 2, 3], 1, 1.0, np.array([[1.0, 2.0, 3.0], [0.0, 0.0, np.inf]])).save(path)
    with pytest.raises(NonFiniteModelError, match=r"rho is inf"):
        Model("ONECLASS_SVM", 2, None, 1, -1, np.ones((1, 1)), rho=math.inf).save(path)
    assert not path.exists()
    import scipy.sparse as sp
    svm = SVMModel("c_svc", "rbf", 3, 0.5, 0, [0.1], [[1.0, -1.0]], sp.csr_matrix(np.eye(2)), label=[1, -1],
                   nSV=[1, 1])
    svm.sv_coef[0, 1] = np.nan                 # what a solver's overflow would leave after construction
    with pytest.raises(NonFiniteModelError, match=r"sv_coef\[0\]\[1\] \(the coefficient of SV 2\) is nan"):
        svm.save(path)
    tree = TreeModel([1, -1], 3, [Tree(1, -1, [Node(1, 0.5, [0, 2], [1.0, 2.0])], ("leaf", 1))], math.inf)
    tree.trees[0].nodes[0].val[1] = -np.inf
    with pytest.raises(NonFiniteModelError, match=r"the weight of feature 3 in node 1 of the tree of the pair "
                                                  r"\(1, -1\) is -inf"):
        tree.save(path)
    tree.trees[0].nodes[0].b = np.nan
    with pytest.raises(NonFiniteModelError, match=r"b of node 1 of the tree of the pair \(1, -1\) is nan"):
        tree.save(path)
    assert not path.exists()
    tree.trees[0].nodes[0].b = 0.5
    tree.trees[0].nodes[0].val[1] = 2.0        # h1_c inf is a valid box, not a model value
    tree.save(path)
    assert load_model(path).to_text() == tree.to_text()


# -- item 4: option values that ended in "internal error" ------------------------------------------------------
@pytest.mark.parametrize("args,message", [
    (["-s", "smo", "-t", "1", "-d", "2147483648"], "ERROR: -d 2147483648: must be at most 2147483647"),
    (["-s", "olsvm", "--sigma", "1e-320"], "ERROR: --sigma 1e-320: sigma must be a finite number > 0 whose gamma"),
    (["-s", "olsvm", "--sigma", "1e200"], "ERROR: --sigma 1e+200: sigma must be a finite number > 0 whose gamma"),
    (["-s", "olsvm", "--epochs", "99999999999999999999"],
     "ERROR: --epochs 99999999999999999999: must be at most 2147483647"),
    (["-s", "pegasos", "-c", "1e308"], "Error: -c 1e+308: -s pegasos's lambda = 1/(C l) on 270 rows is 0.0"),
    (["-s", "pegasos", "--lambda", "1e-320"], "Error: --lambda 1e-320: -s pegasos's first step 1/lambda overflows"),
], ids=["degree", "sigma-tiny", "sigma-huge", "epochs", "pegasos-C", "pegasos-lambda"])
def test_option_ranges_are_named(data, tmp_path, args, message):
    model = tmp_path / "m"
    proc = train(args, data["two"], model)
    assert_clean_failure(proc, message)
    assert "internal error" not in proc.stderr
    assert not model.exists()


@pytest.mark.parametrize("solver", ["smo", "pegaz"])
def test_cross_validation_with_an_empty_fold(tmp_path, solver):
    """-v 8 on 7 rows of each of 3 classes (found by the options fuzzer): LIBSVM's stratified folds leave fold 0
    without rows, and predicting its zero rows with a 3-class kernel model was a ValueError (an internal error)."""
    path = write_small_set(tmp_path / "three.txt", 21, labels=(1, 2, 3), n_features=8)
    proc = train(["-s", solver, "-v", "8"], path, tmp_path / "m")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("Cross Validation Accuracy = ")


def test_solver_that_is_not_a_number(data, tmp_path):
    """-s --5 (found by the options fuzzer): int('--5') raised ValueError, an internal error."""
    for solver in ("--5", "²", "-1"):
        assert_clean_failure(train(["-s", solver], data["two"], tmp_path / "m"), "ERROR: unknown solver type")


@pytest.mark.parametrize("args,message", [
    (["-s", "olsvm", "-v", "2", "--grid", "sigma=1e-320"], "'1e-320' in 'sigma=1e-320': sigma must be"),
    (["-s", "olsvm", "-v", "2", "--grid", "C=1:10:99999999999999999999999"], "99999999999999999999999 cells"),
    (["-s", "5", "--max-iter", "99999999999999999999"], "'--max-iter': 99999999999999999999 is not in the range"),
    (["-s", "llsvm", "--inner-iter", "2147483648"], "'--inner-iter': 2147483648 is not in the range"),
], ids=["grid-sigma", "grid-N", "max-iter", "inner-iter"])
def test_option_ranges_usage_errors(data, tmp_path, args, message):
    proc = train(args, data["two"], tmp_path / "m")
    assert_usage_error(proc, message)


@pytest.mark.parametrize("args", [["-s", "pegasos", "-k", "99999999999999999999"],
                                  ["-s", "streamsvm", "--memory", "1000T"],
                                  ["-s", "smo", "--threads", "1000"], ["-s", "3", "--threads", "1000", "-v", "3"]],
                         ids=["batch", "memory-1000T", "threads-smo", "threads-cv"])
def test_values_beyond_what_is_useful_work(data, tmp_path, args):
    """A mini-batch larger than the rows is all of them; a --memory beyond the memory available is the memory
    available; more --threads than CPUs run as many as there are CPUs (1000 OpenMP threads ended in libgomp's
    "Thread creation failed" under the address-space limit)."""
    model = tmp_path / "m"
    proc = train(args, data["two"], model)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == "" and "Thread creation failed" not in proc.stdout
    if "-v" not in args:
        assert_predicts(data["two"], model, tmp_path)


def test_threads_capped_at_the_cpus():
    n = len(os.sched_getaffinity(0))
    assert Params(solver=3, threads=1000).check().threads == n
    assert Params(solver="streamsvm", threads=1000).check().threads == max(n, 2)
    assert Params(solver="streamsvm", threads=1).check().threads == 1


def test_sigma_gamma():
    assert sigma_gamma(0.5) == 2.0
    for sigma in (1e-320, 1e200, 0.0, -1.0, math.nan, math.inf):
        with pytest.raises(ParameterError, match="--sigma"):
            sigma_gamma(sigma)


# -- item 5: grids and caches bounded --------------------------------------------------------------------------
def test_grid_cells_counted_before_any_value_is_made(monkeypatch):
    """--grid 'C=1:10:20000000' built 20 million values (20 s, 982 MB) before the 10,000-cell check."""
    def refuse(*a, **kw):
        raise AssertionError("logspace called before the cells were counted")
    monkeypatch.setattr(grid_module.np, "logspace", refuse)
    for spec, cells in [("C=1:10:20000000", 20000000), ("C=1:10:2147483648", 2147483648),
                        ("C=1:10:99999999999999999999999", 99999999999999999999999), ("C=1:2:200 g=1:2:51", 10200)]:
        with pytest.raises(ParameterError, match=f"--grid: {cells} cells; at most 10000"):
            grid_module.parse_grid(spec)


def test_grid_command_refuses_at_once(data, tmp_path):
    """The refusal costs the command's start-up (a fraction of a CPU second); the grid's values took 20 s and
    982 MB. The command's CPU time (its rusage), not the wall clock: a busy machine slows both alike."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = train(["-s", "olsvm", "-v", "2", "--grid", "C=1:10:20000000"], data["two"], tmp_path / "m")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    assert_usage_error(proc, "20000000 cells; at most 10000")
    assert (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime) < 5


def test_column_store_bounded_by_the_memory_available(data, monkeypatch):
    """-s olsvm -m 1e12 --epochs 2 filled 4 GB with its column store (a9a): -m is a cap, as LIBSVM's, bounded by
    the memory available when the store is made."""
    from llsvm.io import read_dataset
    ds = read_dataset(str(data["two"]))
    params = Params(solver="olsvm", options=OnlineOptions(cache_size=1e12, epochs=2)).check()
    context = {}
    online.fit(ds, params, Reporter(quiet=True), context=context)
    assert context[0][4].capacity == ds.n_rows               # plenty of memory: every column
    monkeypatch.setattr(memory, "available", lambda: 8 * ds.n_rows * 20)     # room for 20 columns in all
    context = {}
    online.fit(ds, params, Reporter(quiet=True), context=context)
    assert context[0][4].capacity == 10                      # half of it


def test_kernel_cache_bounded_by_the_memory_available(data, monkeypatch):
    from llsvm.io import read_dataset
    ds = read_dataset(str(data["two"]))
    params = Params(solver="smo", eps=0.1, options=SMOOptions(cache_size=1e12)).check()
    cache = smo.PairsRun(ds, params, Reporter(quiet=True)).pair(0, None, Reporter(quiet=True))[3]
    assert cache.stats["capacity"] == ds.n_rows
    monkeypatch.setattr(memory, "available", lambda: 2 * 4 * ds.n_rows * 40)
    cache = smo.PairsRun(ds, params, Reporter(quiet=True)).pair(0, None, Reporter(quiet=True))[3]
    assert cache.stats["capacity"] < 40


def test_epoch_counters_checked_before_they_are_made(data, tmp_path):
    """--epochs 300000000 reserved 2.2 GiB of counters on a 270-row file."""
    proc = train(["-s", "olsvm", "--epochs", "300000000"], data["two"], tmp_path / "m")
    assert_clean_failure(proc, "Error: --epochs 300000000 keeps the violation counts of every epoch",
                         "give fewer --epochs")


def test_predict_json_to_an_unwritable_place_is_refused_before_predicting(data, tmp_path):
    """llsvm-predict --json into a missing directory: refused up front, as llsvm-train refuses it, naming the file
    (it was an "internal error" after the predictions were written), and no output is written."""
    assert train([], data["two"], tmp_path / "m").returncode == 0
    proc = run_limited(["llsvm-predict", "--json", tmp_path / "no" / "x.json", data["two"], tmp_path / "m",
                        tmp_path / "out"])
    assert proc.returncode == 1, proc.stderr
    assert proc.stderr == f"Error: can't write JSON file {tmp_path / 'no' / 'x.json'}: no such directory or not " \
                          "writable\n"
    assert not (tmp_path / "out").exists()
