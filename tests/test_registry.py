"""The registry's contract, checked for every registered solver: a solver added later is picked up here with no new
test code (docs/solvers.md, "Adding a solver").

For each spec: the same seed gives the same model; text, binary and stdin input give the same model (where the spec
says so); -q silences every line and warning; the iteration-limit warning is printed once, on stdout, in
LIBLINEAR's words; every option the spec does not take is refused with exit 1 and a message naming it, and every
option it takes is accepted; --json holds the DESIGN keys and the spec's own; the model file round-trips through
Model.load and predicts as the trained model does. Also: llsvm-train --help lists every solver, one line each.
"""
import json
import warnings

import numpy as np
import pytest
from click.testing import CliRunner
from conftest import assert_exit, without_scaling_note

import llsvm
from llsvm.cli.predict import main as predict_main
from llsvm.cli.train import main as train_main
from llsvm.models import BaseModel, load_model
from llsvm.solvers import registry
from llsvm.options import OPTIONS
from llsvm.params import accepting, get, specs
from llsvm.solvers.registry import DESIGN_KEYS

# the options that name the solvers taking them (llsvm/options.py)
SOLVER_OPTIONS = [o.flag for o in OPTIONS if o.solvers is not None]

SPECS = specs()
IDS = [s.name for s in SPECS]

# an example value of every solver option (keys of SOLVER_OPTIONS); a new option must add one here
OPTION_ARGS = {
    "-R": ["-R", "-B", "1"],
    "-p": ["-p", "0.2"],
    "-n": ["-n", "0.3"],
    "-C": ["-C"],
    "--libsvm-rand": ["--libsvm-rand"],
    "-W": ["-W", "WEIGHTS"],          # a file of one weight a line for the set's rows (issue 46)
    "-i": ["-i", "MODEL"],            # a model of the solver on the set's rows (issue 47: warm start)
    "--memory": ["--memory", "64M"],
    "--tmp-dir": ["--tmp-dir", "TMP"],
    "--inner-iter": ["--inner-iter", "2"],
    "--keep-active-set": ["--keep-active-set", "TMP"],
    "--hash-bits": ["--hash-bits", "8"],
    "--inner-eps": ["--inner-eps", "0.2"],
    "-B R": ["-B", "R"],
    "--one-pass": ["--one-pass"],
    "--certify": ["--certify"],
    "--max-passes": ["--max-passes", "3"],
    "-t": ["-t", "0"],
    "-g": ["-g", "0.5"],
    "-d": ["-d", "2"],
    "-r": ["-r", "1"],
    "-m": ["-m", "10"],
    "-h": ["-h", "0"],
    "--ws": ["--ws", "4"],            # -s smo's working-set solver (issue 49)
    "-b": ["-b", "1"],
    "--hard-class": ["--hard-class", "alternate"],
    "--h1-c": ["--h1-c", "2"],
    "--min-remove": ["--min-remove", "0.01"],
    "--max-depth": ["--max-depth", "5"],
    "--rbf-depth": ["--rbf-depth", "1"],
    "--rbf-select": ["--rbf-select", "train"],
    "--rbf-tol": ["--rbf-tol", "1"],
    "--grid": ["--grid", "C=1,10"],
    "--sigma": ["--sigma", "2"],
    "--epochs": ["--epochs", "2"],
    "--average": ["--average"],
    "--original": ["--original"],
    "--no-bias-update": ["--no-bias-update"],
    "--eta0": ["--eta0", "0.5"],
    "--lambda": ["--lambda", "0.01"],
    "-k": ["-k", "4"],
    "--projection": ["--projection"],
    "--oned": ["--oned", "exact"],
    "--oned-norm": ["--oned-norm", "paper"],
    "--max-seconds": ["--max-seconds", "30"],
    "--target-loss": ["--target-loss", "1"],
}
# LIBLINEAR's own words where it has them; otherwise the registry's message, which names the option
REFUSAL = {"-R": ("ERROR: -R option supported only for solver ",
                  "ERROR: prob->bias >=0, but this is ignored in ONECLASS_SVM"),      # -R needs -B 1: -s 21's check
           "-C": ("ERROR: Warm-start parameter search only available for -s 0, -s 1, -s 2, -s 3 and -s 11\n",),
           "-W": ("ERROR: row weights (-W) are available for -s 0, ",),
           "-i": ("ERROR: a warm start (-i) is available for -s 0, ",)}


def _rows(seed, l, n, n_classes):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(l, n)) * (rng.random((l, n)) < 0.4)
    centers = rng.normal(size=(n_classes, n)) * 1.5
    cls = rng.integers(0, n_classes, l)
    X[X != 0] += centers[cls].repeat(1, 0)[X != 0]
    labels = np.array([-1, 1]) if n_classes == 2 else np.array([3, 1, 2])
    return X, labels[cls]


def _write(path, X, y):
    lines = []
    for xi, yi in zip(X, y):
        nz = np.flatnonzero(xi)
        lines.append(f"{int(yi)}" + "".join(f" {j + 1}:{xi[j]:.17g}" for j in nz))
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture(scope="module")
def sets(tmp_path_factory):
    """{'two', 'three'}: (text path, binary path). The two-class set starts with -1 (LIBLINEAR's label swap)."""
    d = tmp_path_factory.mktemp("registry")
    out = {}
    for name, k, seed in (("two", 2, 11), ("three", 3, 12)):
        X, y = _rows(seed, 240, 12, k)
        if k == 2 and y[0] != -1:
            y[0] = -1
        text = _write(d / f"{name}.txt", X, y)
        binary = d / f"{name}.bin"
        llsvm.write_binary(str(text), str(binary))
        out[name] = (text, binary)
    return out


def train(*args, input=None):
    return CliRunner().invoke(train_main, [str(a) for a in args], input=input)


def limit_args(spec):
    """--max-iter 1, and a tolerance no solver meets in one iteration where the solver has one (-e)."""
    return ["--max-iter", "1"] + (["-e", "1e-12"] if spec.default_eps is not None else [])


def base_args(spec):
    """Options that make every run of the spec deterministic."""
    return ["-s", spec.name] + (["--threads", "1"] if spec.threads_change_model else [])


@pytest.mark.parametrize("spec", SPECS, ids=IDS)
@pytest.mark.parametrize("which", ["two", "three"])
def test_same_seed_same_model_and_inputs(spec, which, sets, tmp_path):
    text, binary = sets[which]
    models = {}
    for kind, args, stdin in (("text", [text], None), ("again", [text], None), ("binary", [binary], None),
                              ("stdin", ["-"], text.read_bytes())):
        out = tmp_path / f"{kind}.model"
        r = train(*base_args(spec), "-q", "--seed", "7", *args, out, input=stdin)
        assert_exit(r, 0)
        models[kind] = out.read_bytes()
    assert models["again"] == models["text"]
    if spec.same_model_any_input:
        assert models["binary"] == models["text"]
        assert models["stdin"] == models["text"]


@pytest.mark.parametrize("spec", SPECS, ids=IDS)
def test_quiet_silences_everything(spec, sets, tmp_path):
    text, _ = sets["three"]
    for extra in ([], limit_args(spec)):
        r = train(*base_args(spec), "-q", *extra, text, tmp_path / "q.model")
        assert_exit(r, 0)
        assert (r.stdout, r.stderr) == ("", "")


@pytest.mark.parametrize("spec", SPECS, ids=IDS)
def test_iteration_limit_warning_on_stdout(spec, sets, tmp_path):
    """Every binary problem that stops at --max-iter says so once, on stdout (LIBLINEAR's info()), nothing on
    stderr."""
    text, _ = sets["two"]
    r = train(*base_args(spec), *limit_args(spec), text, tmp_path / "w.model")
    assert_exit(r, 0)
    assert without_scaling_note(r.stderr) == ""       # (the kernel and out-of-core runs' note on unscaled features)
    if spec.name in ("0", "2", "11"):    # LIBLINEAR's Newton method has its own words, and no closing lines
        assert r.stdout.count("\nWARNING: reaching max number of Newton iterations\n") == 1
    elif spec.name in ("4", "5", "6", "21"):
        # these LIBLINEAR solvers print it between `optimization finished` and `Objective value`
        assert r.stdout.count("\nWARNING: reaching max number of iterations\n") == 1
        assert r.stdout.index("optimization finished") < r.stdout.index("WARNING: reaching max number of iterations") \
            < r.stdout.index("Objective value")
    elif spec.model_kind == "tree":
        # one per node of the lists (each node is a problem), after its line
        nodes = r.stdout.count(": hard ")
        assert r.stdout.count("\nWARNING: reaching max number of iterations\n") == nodes >= 1
        assert r.stdout.index(": hard ") < r.stdout.index("WARNING: reaching max number of iterations")
    elif spec.model_kind == "kernel":
        # LIBSVM's Solver prints it before its closing lines
        assert r.stdout.count("\nWARNING: reaching max number of iterations\n") == 1
        assert r.stdout.index("WARNING: reaching max number of iterations") < r.stdout.index("optimization finished")
    else:
        assert r.stdout.count("\nWARNING: reaching max number of iterations\n") == 1
        # after the problem's closing lines, as LIBLINEAR's train_one prints it
        assert r.stdout.index("Objective value = ") < r.stdout.index("WARNING: reaching max number of iterations")
    params = llsvm.Params(solver=spec.key, max_iter=1, threads=1, eps=None if spec.default_eps is None else 1e-12)
    if spec.name == "3":
        # -s 3 --certify goes on past the limit (dcd._primal_after_limit) to a certified optimum: nothing to warn
        # about unless that falls short
        with warnings.catch_warnings():
            warnings.simplefilter("error", llsvm.ConvergenceWarning)
            r = llsvm.train(str(text), params=params.but(certify=True)).meta["results"][0]
        assert r.extra["switched_to_primal"] and r.converged and r.gap <= 1e-3 * r.primal
    with pytest.warns(llsvm.ConvergenceWarning):       # the library, printing nothing, warns through Python
        llsvm.train(str(text), params=params)


@pytest.mark.parametrize("spec", SPECS, ids=IDS)
@pytest.mark.parametrize("flag", sorted(SOLVER_OPTIONS))
def test_options_refused_or_accepted(spec, flag, sets, tmp_path):
    text, _ = sets["two"]
    (tmp_path / "weights").write_text("".join(f"{1 + k % 3}\n" for k in range(len(text.read_text().splitlines()))))
    model = tmp_path / "initial.model"
    if flag == "-i":        # a model of the solver's problem: its own when it takes -i (-s 3's for the others)
        assert_exit(train(*base_args(spec if flag in spec.accepts else SPECS[3]), "-q", text, model), 0)
    args = [{"TMP": str(tmp_path), "WEIGHTS": str(tmp_path / "weights"), "MODEL": str(model)}.get(a, a)
            for a in OPTION_ARGS[flag]]
    r = train(*base_args(spec), "-q", *args, text, tmp_path / "o.model")
    if flag in spec.accepts:
        assert_exit(r, 0)
    else:
        assert_exit(r, 1)
        if flag in REFUSAL:
            assert r.stderr.startswith(REFUSAL[flag]), r.stderr
        else:
            assert r.stderr == f"ERROR: {flag} applies only to {accepting(flag)}, not to -s {spec.name}\n"
        assert r.stdout == ""
        assert not (tmp_path / "o.model").exists()


def test_every_option_has_an_example():
    assert set(OPTION_ARGS) == set(SOLVER_OPTIONS)


@pytest.mark.parametrize("spec", SPECS, ids=IDS)
def test_json_holds_design_keys(spec, sets, tmp_path):
    text, _ = sets["three"]
    r = train(*base_args(spec), "-q", "--json", tmp_path / "m.json", text, tmp_path / "m.model")
    assert_exit(r, 0)
    m = json.loads((tmp_path / "m.json").read_text())
    missing = [k for k in DESIGN_KEYS + registry.json_fields(spec) if k not in m]
    assert not missing, missing
    first_seen = list(dict.fromkeys(int(v) for v in llsvm.read_dataset(str(text)).y))
    # one record per binary problem: one-vs-rest classes, or one-vs-one pairs or trees (3 of each for 3 classes);
    # one problem for regression, the one-class SVM and Crammer and Singer's
    problems = {"kernel": m.get("pairs"), "tree": m.get("trees")}.get(spec.model_kind, m.get("classes"))
    if spec.task in ("regression", "oneclass"):      # LIBLINEAR's models: nr_class 2 and no labels
        assert m["n_rows"] == 240 and m["nr_class"] == 2 and m["labels"] == [] and len(problems) == 1
    else:
        assert m["n_rows"] == 240 and m["n_features"] == 12 and m["nr_class"] == 3
        assert m["labels"] == first_seen and sorted(first_seen) == [1, 2, 3]
        assert len(problems) == (1 if spec.task == "multiclass" else 3)
    assert isinstance(m["converged"], bool) and m["nSV"] > 0 and m["n_iter"] >= 1
    assert m["train_seconds"] >= 0 and m["peak_rss_mb"] > 0


@pytest.mark.parametrize("spec", SPECS, ids=IDS)
def test_model_round_trips_and_predicts(spec, sets, tmp_path):
    text, binary = sets["three"]
    model_path = tmp_path / "m.model"
    assert_exit(train(*base_args(spec), "-q", text, model_path), 0)
    model = load_model(model_path)
    assert isinstance(model, BaseModel)
    assert model.to_text() == model_path.read_text()
    if spec.model_kind == "kernel":
        assert model.svm_type == spec.solver_type.lower()
    else:
        assert model.solver_type == spec.solver_type
    ds = llsvm.read_dataset(str(text))
    r = CliRunner().invoke(predict_main, [str(binary), str(model_path), str(tmp_path / "pred")])
    assert_exit(r, 0)
    pred = np.array([float(v) for v in (tmp_path / "pred").read_text().split()])
    np.testing.assert_array_equal(pred, model.predict(ds))
    if spec.task == "regression":
        mse = float(np.mean((pred - ds.y) ** 2))
        scc = float(np.corrcoef(pred, ds.y)[0, 1] ** 2)
        assert r.stdout == (f"Mean squared error = {mse:g} (regression)\n"
                            f"Squared correlation coefficient = {scc:g} (regression)\n")
        assert scc > 0.1
        return
    acc = 100.0 * float(np.count_nonzero(pred == ds.y)) / ds.n_rows
    tail = " (classification)" if spec.model_kind == "kernel" else ""    # svm-predict's line, or LIBLINEAR's
    assert r.stdout == f"Accuracy = {acc:g}% ({int(np.count_nonzero(pred == ds.y))}/{ds.n_rows}){tail}\n"
    if spec.task == "oneclass":          # +1 / -1 against the file's labels, as LIBLINEAR's predict counts them
        assert set(pred) <= {-1.0, 1.0} and 0.3 < np.mean(pred > 0) < 0.7      # nu = 0.5
    else:
        assert acc > 60.0


def test_train_help_lists_every_solver():
    # --help-all: Click's help of every option (--help is the compact usage, tests/test_usage.py)
    r = CliRunner().invoke(train_main, ["--help-all"], prog_name="llsvm-train")
    assert_exit(r, 0)
    lines = r.stdout.splitlines()
    assert lines[0] == "Usage: llsvm-train [OPTIONS] TRAINING_SET_FILE [MODEL_FILE]"
    listing = [ln.strip() for ln in lines[lines.index("  Solvers (-s type):") + 1:]]
    for spec in SPECS:
        assert sum(ln.startswith(f"{spec.name} -- ") for ln in listing) == 1, spec.name
        assert f"{spec.name} -- {spec.title}" in " ".join(" ".join(listing).split())
    # the options a solver alone takes say which solvers take them
    text = " ".join(r.stdout.split())
    assert "e.g. 64M, 2G (-s llsvm, -s streamsvm and -s bm)" in text
    assert "Passes over each loaded block: -s llsvm, per outer iteration (default 5); -s bm" in text
    assert "(-s streamsvm and -s bm)" in text
    assert "Find the parameter C by cross validation (-s 0, -s 1, -s 2, -s 3 and -s 11)" in text


def test_predict_help():
    r = CliRunner().invoke(predict_main, ["--help"], prog_name="llsvm-predict")
    assert_exit(r, 0)
    text = " ".join(r.stdout.split())
    assert r.stdout.startswith("Usage: llsvm-predict [OPTIONS] TEST_FILE MODEL_FILE OUTPUT_FILE\n")
    for opt in ("-b probability_estimates", "-q", "--decision-values FILE", "--zero-based", "--json FILE",
                "--progress / --no-progress"):
        assert opt in text, opt


def test_unknown_solvers():
    with pytest.raises(llsvm.ParameterError, match=r"^unknown solver type$"):
        get("nope")
    for n in (8, 9, 10, 14, 20, 22):          # numbers LIBLINEAR 2.50 does not use
        with pytest.raises(llsvm.ParameterError, match=r"^unknown solver type$"):
            get(n)
    assert {s.number for s in SPECS if s.number is not None} == {0, 1, 2, 3, 4, 5, 6, 7, 11, 12, 13, 21}
    for spec in SPECS:
        assert get(spec.name) is spec and get(spec.key) is spec


@pytest.mark.parametrize("first,message", [("svm_type c_svc\n", ":2: no 'SV' line: truncated model file"),
                                           ("llsvm_tree_model 1\n", ":2: expected 'solver_type H1_TREE', found ''")])
def test_model_kinds_by_first_line(tmp_path, first, message):
    """LIBSVM's `svm_type` goes to the kernel model reader (llsvm/models/svm.py), `llsvm_tree_model` to the tree
    model's (llsvm/models/tree.py)."""
    p = tmp_path / "m.model"
    p.write_text(first)
    with pytest.raises(llsvm.ModelFormatError, match=message):
        load_model(p)
