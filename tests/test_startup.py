"""Start-up and defaults that do not depend on the machine (issue 26), checked by counting, not by timing:
- what a command imports: `--help` and option errors import neither numpy nor any solver; a run imports the driver
  of its solver and no other (the registry keeps every solver as data);
- the kernel solvers' OpenMP threads: one by default, and spinning only briefly at a barrier when asked for.
The wall-clock figures are `make bench`'s part `startup` and part `contention`, never a test's verdict."""
import json
import os
import subprocess
import sys
import textwrap

import pytest

from conftest import write_small_set

from llsvm.params import get, specs
from llsvm.solvers import registry

# the driver modules of llsvm.solvers (registry, common, lazy helpers aside)
DRIVERS = {"dcd", "newton", "l1r", "l2dual", "onepass", "outofcore", "streamsvm", "bm", "smo", "ovo", "h1tree",
           "online", "oned", "single"}
# what a run of each solver may import among them: its driver and what that driver is built on
OWN = {"1": {"dcd", "newton"}, "3": {"dcd", "newton"}, "0": {"newton"}, "2": {"newton"}, "11": {"newton"},
       "5": {"l1r", "newton"}, "6": {"l1r", "newton"}, "4": {"l2dual", "newton"}, "7": {"l2dual", "newton"}, "12": {"l2dual", "newton"},
       "13": {"l2dual", "newton"}, "21": {"l2dual", "newton"}, "llsvm": {"onepass", "outofcore"},
       "streamsvm": {"streamsvm", "outofcore"}, "bm": {"bm", "outofcore"}, "smo": {"smo", "ovo"},
       "epsilon_svr": {"single", "smo", "ovo"}, "one_class": {"single", "smo", "ovo"},
       "nu_svr": {"single", "smo", "ovo"}, "nu_svc": {"smo", "ovo"},
       "h1tree": {"h1tree", "smo", "ovo"}, "olsvm": {"online", "smo", "ovo"}, "local1d": {"oned"},
       "project1d": {"oned"}}

PROBE = textwrap.dedent("""
    import json, sys
    command = sys.argv[1]
    sys.argv = ["llsvm-" + command] + sys.argv[2:]
    import importlib
    main = importlib.import_module("llsvm.cli." + command).main
    try:
        main()
    except SystemExit as exc:
        code = exc.code
    else:
        code = 0
    print(json.dumps({"code": code, "modules": sorted(sys.modules)}))
""")


def imported(command, *args, cwd=None):
    p = subprocess.run([sys.executable, "-c", PROBE, command, *args], capture_output=True, text=True, timeout=600,
                       cwd=cwd)
    assert p.returncode == 0, p.stderr[-2000:]
    out = json.loads(p.stdout.strip().splitlines()[-1])
    return out["code"], set(out["modules"])


def drivers_in(modules):
    return {m.split(".")[2] for m in modules if m.startswith("llsvm.solvers.")} & DRIVERS


@pytest.fixture(scope="module")
def small_set(tmp_path_factory):
    """A small three-class LIBSVM text file (seeded)."""
    return write_small_set(tmp_path_factory.mktemp("startup") / "small.txt", 120, labels=(1, 2, 3), n_features=5,
                           nnz=5, seed=7)


@pytest.mark.parametrize("command,args", [("train", ["--help"]), ("predict", ["--help"]), ("convert", ["--help"]),
                                          ("scale", ["--help"]), ("train", ["-s", "99", "x"]),
                                          ("train", ["-c", "0", "x"]), ("scale", ["-l", "x", "data"])],
                         ids=["train-help", "predict-help", "convert-help", "scale-help", "train-bad-solver",
                              "train-bad-C", "scale-bad-l"])
def test_help_and_option_errors_import_no_numpy_and_no_solver(command, args):
    code, modules = imported(command, *args)
    assert code in (0, 1, 2)
    assert not {"numpy", "scipy", "tqdm", "isal"} & modules
    assert not drivers_in(modules), drivers_in(modules)
    assert not any(m.startswith("llsvm._ext") for m in modules)


@pytest.mark.parametrize("solver", sorted(OWN, key=str))
def test_a_run_imports_only_its_own_driver(solver, small_set, tmp_path):
    spec = get(solver)
    code, modules = imported("train", "-q", "-s", solver, str(small_set), str(tmp_path / "m"), cwd=tmp_path)
    assert code == 0
    assert drivers_in(modules) <= OWN[solver], sorted(drivers_in(modules) - OWN[solver])
    assert spec.driver_ref.split(":")[0] in drivers_in(modules)
    assert "scipy" not in modules
    if not spec.streams:                # text input read in memory: no checksum to compute (the out-of-core
        assert "isal" not in modules    # solvers write a binary copy of it)


def test_every_solver_has_an_import_expectation():
    assert {s.name for s in specs()} - set(OWN) <= {"pegaz", "pegasos", "norma", "olsvm-rhl"}


def test_predict_imports_no_driver(small_set, tmp_path):
    subprocess.run([os.path.join(os.path.dirname(sys.executable), "llsvm-train"), "-q", str(small_set),
                    str(tmp_path / "m")], check=True, timeout=600)
    code, modules = imported("predict", str(small_set), str(tmp_path / "m"), str(tmp_path / "out"))
    assert code == 0
    assert not drivers_in(modules) and "llsvm.solvers.registry" not in modules
    assert "scipy" not in modules


def test_kernel_solvers_default_to_one_thread():
    """The OpenMP solvers (kernel columns) run one thread unless asked: on a busy machine more cost far more than
    they save, so the default can never be slower than --threads 1 (the same code path)."""
    for spec in specs():
        if spec.model_kind in ("kernel", "tree"):
            assert spec.default_threads == 1, spec.name


@pytest.mark.parametrize("given,expected", [({}, "1000"), ({"GOMP_SPINCOUNT": "50"}, "50"),
                                            ({"OMP_WAIT_POLICY": "active"}, None)],
                         ids=["default", "user-count", "user-policy"])
def test_openmp_threads_spin_briefly_unless_told(given, expected):
    """GNU OpenMP reads GOMP_SPINCOUNT when libgomp loads: llsvm sets a short spin before any kernel loads, and
    leaves a user's own policy or count alone."""
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")}
    env.update(given)
    code = "import os, llsvm._ext._kernel; print(os.environ.get('GOMP_SPINCOUNT'))"
    p = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == str(expected)


@pytest.mark.parametrize("spec", specs(), ids=lambda s: s.name)
def test_every_reference_of_the_registry_resolves(spec):
    """The registry names code as "module:attribute": each must import to what the trainer and the CLI call."""
    assert callable(registry.driver(spec))
    assert callable(registry.metrics(spec))
    assert spec.options is None or hasattr(spec.options, "check")
    fields = registry.json_fields(spec)
    assert isinstance(fields, tuple) and all(isinstance(k, str) for k in fields)
