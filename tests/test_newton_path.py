"""-s 0, -s 2, -s 11 and -s 21 print LIBLINEAR's iteration lines and write its model files, byte for byte (issue 29).

The Newton method amplifies a last-bit difference in a sum into another CG step count or step size a few iterations
later, so llsvm's Newton (cext/_linear.pyx NewtonFun) does every sum in LIBLINEAR's order: X w one running sum a
row with the bias last, w.w and the loss loop in row order with LIBLINEAR's expressions, the rows in LIBLINEAR's
class grouping, ddot's groups of five, dnrm2's scaled norm, the line search's incremental w.w and X w. The cases
below are ones where the earlier order (numpy's sums, four partial sums a row, original row order) printed other
lines or wrote other models: a generated sparse set (scripts/gen_data.py sparse, seed 1) and shared sets. The
reference is liblinear-official (LIBLINEAR 2.50's C code) in a fresh process, its stdout and its saved model.
-s 21 (the one-class SVM, deterministic too) chooses its pairs by G = X w: one running sum a row as well, and its
w.w and rho summed as LIBLINEAR sums them (cext/_l2dual.pyx).
"""
import subprocess
import sys

import pytest
from click.testing import CliRunner

from conftest import REPO_ROOT
from llsvm.cli.train import main as train_main

sys.path.insert(0, str(REPO_ROOT / "scripts"))
from gen_data import generate  # noqa: E402


def _liblinear(args, data, model):
    """liblinear-official's train: what it prints (stdout of a fresh process) and its model file at `model`."""
    code = ("import sys\nfrom liblinear.liblinearutil import svm_read_problem, train, save_model\n"
            "y, x = svm_read_problem(sys.argv[2])\nm = train(y, x, sys.argv[1])\nsave_model(sys.argv[3], m)\n")
    out = subprocess.run([sys.executable, "-c", code, " ".join(args), str(data), str(model)], capture_output=True,
                         text=True, check=True, timeout=600)
    return out.stdout


def _same_as_liblinear(args, data, tmp_path):
    theirs = _liblinear(args, data, tmp_path / "liblinear.model")
    assert theirs.strip()
    r = CliRunner().invoke(train_main, args + [str(data), str(tmp_path / "llsvm.model")])
    assert r.exit_code == 0, r.output
    assert r.output.splitlines() == theirs.splitlines()
    assert (tmp_path / "llsvm.model").read_bytes() == (tmp_path / "liblinear.model").read_bytes()


@pytest.fixture(scope="module")
def sparse_set(tmp_path_factory):
    """4000 rows, 20000 features, about 50 non-zeros a row (seed 1)."""
    path = tmp_path_factory.mktemp("newton") / "sparse"
    generate("sparse", path, rows=4000, features=20000, nnz_per_row=50, seed=1)
    return path


@pytest.mark.parametrize("args", [["-s", "2", "-c", "100"], ["-s", "2", "-c", "100", "-B", "1"],
                                  ["-s", "0", "-c", "100"], ["-s", "0", "-c", "100", "-w1", "3"],
                                  ["-s", "11", "-c", "100", "-B", "1"], ["-s", "21"]], ids=" ".join)
def test_generated_sparse_set(sparse_set, tmp_path, args):
    _same_as_liblinear(args, sparse_set, tmp_path)


@pytest.mark.parametrize("name,args", [("reuters_moneyfx.trn", ["-s", "2", "-c", "100"]),
                                       ("usps.t", ["-s", "2", "-B", "1"]),
                                       ("a9a", ["-s", "0", "-w1", "3"]),
                                       ("mushrooms", ["-s", "11", "-B", "1"]),
                                       ("a9a", ["-s", "21"]), ("mushrooms", ["-s", "21"])],
                         ids=lambda v: v if isinstance(v, str) else " ".join(v))
def test_shared_sets(shared_plain, tmp_path, name, args):
    _same_as_liblinear(args, shared_plain(name), tmp_path)
