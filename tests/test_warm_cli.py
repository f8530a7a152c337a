"""llsvm-train -i initial_model (issue 47, item 3): a warm start from a model file's w, the day-to-day scenario on
a9a's rows (yesterday: the first 90 %; today: all of them), and every refusal (llsvm/solvers/warm.py)."""
import json

import numpy as np
import pytest
from click.testing import CliRunner
from conftest import assert_exit, linear_primal

import llsvm
from llsvm.cli.train import main as train_main
from llsvm.models import load_model

TODAY = 6000            # a9a's first rows; yesterday's are the first 90 % of them
YESTERDAY = TODAY * 9 // 10
LOSS = {"0": "log", "1": "squared_hinge", "2": "squared_hinge", "3": "hinge", "11": "squared_eps"}


@pytest.fixture(scope="module")
def days(shared_plain, tmp_path_factory):
    """(yesterday's file, today's file): a9a's first TODAY rows and their first 90 %."""
    lines = shared_plain("a9a").read_text().splitlines(keepends=True)[:TODAY]
    d = tmp_path_factory.mktemp("days")
    (d / "yesterday").write_text("".join(lines[:YESTERDAY]))
    (d / "today").write_text("".join(lines))
    return d / "yesterday", d / "today"


def train(*args):
    return CliRunner().invoke(train_main, [str(a) for a in args])


def run(tmp_path, name, *args):
    """Train with args (-q, one thread) into tmp_path/name.model; (its model, its --json record)."""
    model, rec = tmp_path / f"{name}.model", tmp_path / f"{name}.json"
    assert_exit(train("-q", "--threads", "1", "--json", rec, *args, model), 0)
    return model, json.loads(rec.read_text())


def primal(model_path, data_path, solver, C=1.0, p=0.1):
    """LIBLINEAR's primal of a model file's w on the rows (conftest.linear_primal: NumPy, not the solvers)."""
    m = load_model(model_path)
    ds = llsvm.read_dataset(str(data_path))
    X = ds.to_csr()
    w = m.W[:X.shape[1], 0] if m.W.shape[0] >= X.shape[1] else np.r_[m.W[:, 0], np.zeros(X.shape[1] - m.W.shape[0])]
    y = ds.y
    if m.label is not None:
        y = np.where(ds.y == m.label[0], 1.0, -1.0)
    return linear_primal(X, y, w, C, LOSS[solver], p=p)


@pytest.mark.parametrize("solver", ["0", "1", "2", "3", "11", "llsvm", "streamsvm", "bm"])
def test_cli_gives_the_python_warm_start(solver, days, tmp_path):
    """-i gives what llsvm.train(warm=the model read from its file) gives, byte for byte."""
    yesterday, today = days
    old, _ = run(tmp_path, "old", "-s", solver, yesterday)
    new, rec = run(tmp_path, "new", "-s", solver, "-i", old, today)
    params = llsvm.Params(solver=int(solver) if solver.isdigit() else solver, threads=1)
    model = llsvm.train(str(today), params=params, warm=load_model(old))
    model.save(tmp_path / "python.model")
    assert new.read_bytes() == (tmp_path / "python.model").read_bytes()
    assert rec["converged"]


@pytest.mark.parametrize("solver", ["0", "2", "11"])
def test_newton_from_yesterday_takes_fewer_iterations_to_the_same_optimum(solver, days, tmp_path):
    """LIBLINEAR's incremental setting: Newton from yesterday's w needs fewer iterations than from zero, and
    reaches the same optimum (the primal, computed by NumPy from the model files, within 1e-6 relative at -e
    1e-6)."""
    yesterday, today = days
    old, _ = run(tmp_path, "old", "-s", solver, "-e", "1e-6", yesterday)
    cold, cold_rec = run(tmp_path, "cold", "-s", solver, "-e", "1e-6", today)
    warm, warm_rec = run(tmp_path, "warm", "-s", solver, "-e", "1e-6", "-i", old, today)
    assert warm_rec["n_iter"] < cold_rec["n_iter"], (warm_rec["n_iter"], cold_rec["n_iter"])
    p_cold, p_warm = primal(cold, today, solver), primal(warm, today, solver)
    assert abs(p_warm - p_cold) <= 1e-6 * abs(p_cold), (p_warm, p_cold)
    assert abs(p_warm - warm_rec["primal"]) <= 1e-9 * abs(p_warm)


@pytest.mark.parametrize("solver", ["1", "3", "llsvm", "streamsvm", "bm"])
def test_dual_from_yesterday_reaches_the_certified_optimum(solver, days, tmp_path):
    """The dual solvers start from the dual point of yesterday's w: their model is within its duality gap of the
    optimum, as the cold run's, so the two primals differ by at most the sum of the gaps. The out-of-core solvers
    take fewer passes (-s llsvm: outer iterations; -s streamsvm: passes) than from zero."""
    yesterday, today = days
    extra = ["-e", "0.01", "--max-iter", "3000"] if solver in ("1", "3") else []
    old, _ = run(tmp_path, "old", "-s", solver, *extra, yesterday)
    cold, c = run(tmp_path, "cold", "-s", solver, *extra, today)
    warm, w = run(tmp_path, "warm", "-s", solver, *extra, "-i", old, today)
    assert c["converged"] and w["converged"]
    assert abs(w["primal"] - c["primal"]) <= c["gap"] + w["gap"], (w, c)
    assert abs(primal(warm, today, solver if solver in ("1", "3") else "3") - w["primal"]) <= 1e-9 * abs(w["primal"])
    if solver in ("llsvm", "streamsvm"):
        assert w["n_iter"] < c["n_iter"], (w["n_iter"], c["n_iter"])


@pytest.mark.parametrize("solver", ["llsvm", "streamsvm"])
def test_out_of_core_warm_start_with_row_weights_under_a_budget(solver, days, tmp_path):
    """-W and --memory with -i: yesterday's model starts today's weighted rows under a 4M budget (the start's pass
    and the text's copy within it); the optimum is the cold run's within the two certified gaps."""
    yesterday, today = days
    weights = tmp_path / "weights"
    weights.write_text("".join(f"{(0, 0.5, 1, 2)[i % 4]}\n" for i in range(TODAY)))
    old, _ = run(tmp_path, "old", "-s", solver, yesterday)
    _, c = run(tmp_path, "cold", "-s", solver, "-W", weights, today)
    _, w = run(tmp_path, "warm", "-s", solver, "-W", weights, "--memory", "4M", "-i", old, today)
    assert c["converged"] and w["converged"]
    assert abs(w["primal"] - c["primal"]) <= c["gap"] + w["gap"], (w, c)


def test_new_features_are_padded_and_missing_ones_cut(days, tmp_path):
    """A new day's rows with a feature the model has not seen: its weight starts at 0; rows without the model's
    last features: the model's weights there are dropped (no row has them, their optimum is 0). Both give the
    Python warm start's model, of the data's width."""
    yesterday, today = days
    old, _ = run(tmp_path, "old", "-s", "2", "-B", "1", yesterday)
    wider = tmp_path / "wider"
    wider.write_text(today.read_text().replace("\n", " 200:0.5\n", 50))
    narrower = tmp_path / "narrower"
    narrower.write_text("".join(" ".join(t for t in line.split() if ":" not in t or int(t.split(":")[0]) < 100)
                                + "\n" for line in today.read_text().splitlines()))
    for data, width in ((wider, 200), (narrower, 99)):
        new, rec = run(tmp_path, data.name, "-s", "2", "-B", "1", "-i", old, data)
        m = llsvm.train(str(data), solver=2, bias=1, threads=1, warm=load_model(old))
        assert load_model(new).nr_feature == m.nr_feature == width
        m.save(tmp_path / "python.model")
        assert new.read_bytes() == (tmp_path / "python.model").read_bytes()


@pytest.fixture(scope="module")
def models(days, shared_plain, tmp_path_factory):
    """Models the refusals start from: -s 2 (with and without -B 1), -s 3, -s 4, a kernel model (-s smo) and a
    hashed -s bm model, on yesterday's rows."""
    yesterday, _ = days
    d = tmp_path_factory.mktemp("models")
    out = {}
    for name, args in (("s2", ["-s", "2"]), ("s2b", ["-s", "2", "-B", "1"]), ("s3", ["-s", "3"]),
                       ("s4", ["-s", "4"]), ("hashed", ["-s", "bm", "--hash-bits", "10"])):
        out[name] = d / f"{name}.model"
        assert_exit(train("-q", *args, yesterday, out[name]), 0)
    out["kernel"] = d / "kernel.model"
    assert_exit(train("-q", "-s", "smo", shared_plain("heart_scale"), out["kernel"]), 0)
    out["bad"] = d / "bad.model"
    out["bad"].write_text(out["s2"].read_text().replace("nr_feature", "nr_feature x", 1))
    out["three"] = d / "three"
    out["three"].write_text(shared_plain("dna.scale").read_text())
    return out


REFUSALS = [
    # (options, model, data ("today" or a models key), message, exit code)
    (["-s", "2"], "kernel", "today", "Error: -i {model}: a LIBSVM kernel model (svm_type c_svc, kernel_type rbf) "
     "cannot start -s 2: a warm start takes LIBLINEAR's linear model of the same problem\n", 1),
    (["-s", "2"], "s4", "today", "Error: -i {model}: a model of solver_type MCSVM_CS (Crammer and Singer's "
     "multi-class SVC) cannot start -s 2 (L2-regularized L2-loss SVC): a warm start takes a model of the same "
     "problem\n", 1),
    (["-s", "2"], "s3", "today", "Error: -i {model}: a model of solver_type L2R_L1LOSS_SVC_DUAL (L2-regularized "
     "L1-loss SVC) cannot start -s 2 (L2-regularized L2-loss SVC): a warm start takes a model of the same "
     "problem\n", 1),
    (["-s", "0"], "s2", "today", "Error: -i {model}: a model of solver_type L2R_L2LOSS_SVC (L2-regularized L2-loss "
     "SVC) cannot start -s 0 (L2-regularized logistic regression): a warm start takes a model of the same "
     "problem\n", 1),
    (["-s", "llsvm"], "s2", "today", "Error: -i {model}: a model of solver_type L2R_L2LOSS_SVC (L2-regularized "
     "L2-loss SVC) cannot start -s llsvm (L2-regularized L1-loss SVC): a warm start takes a model of the same "
     "problem\n", 1),
    (["-s", "streamsvm"], "kernel", "today", "Error: -i {model}: a LIBSVM kernel model (svm_type c_svc, "
     "kernel_type rbf) cannot start -s streamsvm: a warm start takes LIBLINEAR's linear model of the same "
     "problem\n", 1),
    (["-s", "streamsvm", "-B", "1"], "s3", "today", "Error: -i {model}: the model has no bias, the run -B 1: give "
     "no -B (or -B -1)\n", 1),
    (["-s", "llsvm"], "s3", "three", "Error: -i {model}: the model's classes 1 -1 are not the data's classes 3 1 2 "
     "(the data's classes 2 3 not in the model; the model's class -1 not in the data): a warm start needs the "
     "same classes\n", 1),
    (["-s", "bm"], "hashed", "today", "Error: -i {model}: the model's w is over 2^10 hashed buckets, the run has no "
     "--hash-bits: a warm start needs the same features\n", 1),
    (["-s", "2", "-B", "1"], "s2", "today", "Error: -i {model}: the model has no bias, the run -B 1: give no -B "
     "(or -B -1)\n", 1),
    (["-s", "2"], "s2b", "today", "Error: -i {model}: the model has bias 1, the run no bias: give -B 1\n", 1),
    (["-s", "2"], "s2", "three", "Error: -i {model}: the model's classes 1 -1 are not the data's classes 3 1 2 (the "
     "data's classes 2 3 not in the model; the model's class -1 not in the data): a warm start needs the same "
     "classes\n", 1),
    (["-s", "5"], "s2", "today", "ERROR: a warm start (-i) is available for -s 0, -s 1, -s 2, -s 3, -s 11, "
     "-s llsvm, -s streamsvm and -s bm\n", 1),
    (["-s", "smo"], "s2", "today", "ERROR: a warm start (-i) is available for -s 0, -s 1, -s 2, -s 3, -s 11, "
     "-s llsvm, -s streamsvm and -s bm\n", 1),
    (["-s", "2", "-v", "3"], "s2", "today", "ERROR: -v cannot be given with -i: -i starts the one model a run "
     "trains\n", 1),
    (["-s", "2", "-C"], "s2", "today", "ERROR: -C cannot be given with -i: -i starts the one model a run trains\n",
     1),
    (["-s", "2", "--dask", "local"], "s2", "today", "ERROR: --dask cannot be given with -i: -i starts the one model "
     "a run trains\n", 1),
    (["-s", "2"], "bad", "today", "Error: {model}:4: ", 1),
    (["-s", "2"], "missing", "today", "Error: can't open model file {model}: No such file or directory\n", 1),
]


@pytest.mark.parametrize("options,model,data,message,code", REFUSALS,
                         ids=[f"{m}:{' '.join(o)}" for o, m, _, _, _ in REFUSALS])
def test_refusals(options, model, data, message, code, models, days, tmp_path):
    path = models.get(model, tmp_path / "missing.model")
    r = train(*options, "-i", path, days[1] if data == "today" else models[data], tmp_path / "out.model")
    assert_exit(r, code)
    assert r.stderr.startswith(message.format(model=path)), r.stderr
    assert not (tmp_path / "out.model").exists()


def test_warm_start_of_other_classes_order_is_matched_by_label(days, tmp_path):
    """A day whose first row is of the other class (LIBLINEAR's label order is the rows', for labels other than
    -1 and +1): yesterday's w is negated for it; fewer iterations than from zero, to the same optimum."""
    yesterday, today = days

    def relabelled(path, lines):
        path.write_text("".join(("5" if line.split()[0] == "+1" else "2") + line[line.index(" "):] for line in lines))
        return path
    lines = today.read_text().splitlines(keepends=True)
    k = next(i for i, line in enumerate(lines) if line.split()[0] != lines[0].split()[0])
    old, _ = run(tmp_path, "old", "-s", "2", relabelled(tmp_path / "yesterday", lines[:YESTERDAY]))
    swapped = relabelled(tmp_path / "swapped", [lines[k]] + lines[:k] + lines[k + 1:])
    new, rec = run(tmp_path, "new", "-s", "2", "-e", "1e-6", "-i", old, swapped)
    cold, cold_rec = run(tmp_path, "cold", "-s", "2", "-e", "1e-6", swapped)
    assert list(load_model(new).label) == list(load_model(cold).label) == list(load_model(old).label)[::-1]
    assert rec["n_iter"] < cold_rec["n_iter"], (rec["n_iter"], cold_rec["n_iter"])
    assert abs(rec["primal"] - cold_rec["primal"]) <= 1e-6 * cold_rec["primal"]
