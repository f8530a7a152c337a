"""Many classes (issue 43, part 3): the class pairs of -s smo and -s nu_svc, -b 1's folds included, run by the
pairs' kernel (cext/_smo.pyx's OneVsOne, in batches) are LIBSVM's: the model file byte for byte and svm-train's
stdout line for line against libsvm-official's (with -b 1, LIBSVM's own fold permutations replayed); the batches'
seams, the pair-by-pair path (the grid search's and llsvm.dask's) and the results per pair agree with it."""
import pickle

import numpy as np
import pytest
from click.testing import CliRunner

import llsvm
from llsvm.cli.train import main as train_main
from llsvm.options import SMOOptions
from llsvm.params import Params
from llsvm.report import Reporter
from llsvm.solvers import ovo, smo

from conftest import assert_exit, without_scaling_note
from test_single import libsvm_run, with_libsvms_folds
from test_smo_train import _write, blobs

# 23 labels (negative, zero, positive; the -1/+1 pair among them), classes of 4 to 40 rows that overlap
LABELS = tuple(3 * c - 30 for c in range(21)) + (1, -1)


@pytest.fixture(scope="module")
def many(tmp_path_factory):
    g = np.random.default_rng(17)
    X, y = blobs(17, 520, 4, LABELS, spread=1.6)
    keep = g.random(y.size) < np.where(np.abs(y) % 2 == 1, 0.95, 0.35)   # uneven class sizes
    path = tmp_path_factory.mktemp("many") / "many.txt"
    return _write(path, X[keep], y[keep])


def ours(args, path, model):
    r = CliRunner().invoke(train_main, [*args, str(path), str(model)])
    assert_exit(r, 0)
    return r.stdout


@pytest.mark.parametrize("solver,svm_type,args", [
    ("smo", "0", []), ("smo", "0", ["-h", "0", "-c", "4", "-w7", "3"]), ("smo", "0", ["-t", "1", "-d", "2", "-m", "0.01"]),
    ("nu_svc", "1", ["-n", "0.1"]), ("nu_svc", "1", ["-n", "0.15", "-t", "0", "-h", "0"])])
def test_many_classes_are_libsvms(many, tmp_path, solver, svm_type, args):
    """23 classes (253 pairs): the model file and every line svm-train prints."""
    out = ours(["-s", solver, *args], many, tmp_path / "ours.model")
    theirs = libsvm_run(many, tmp_path / "theirs.model", ["-s", svm_type, *args])
    assert out == theirs
    assert out.count("optimization finished") == 253
    assert (tmp_path / "ours.model").read_bytes() == (tmp_path / "theirs.model").read_bytes()


@pytest.mark.parametrize("solver,svm_type,args", [("smo", "0", []), ("smo", "0", ["-c", "8", "-w-1", "0.5"]),
                                                  ("nu_svc", "1", ["-n", "0.05"])])
def test_many_classes_probability_is_libsvms(many, tmp_path, monkeypatch, solver, svm_type, args):
    """-b 1 on 23 classes with LIBSVM's fold permutations (its rand() replayed, pair after pair): every fold's
    training lines, `Total nSV` and the model file, probA and probB included, byte for byte."""
    ds = llsvm.read_dataset(str(many))
    sizes = [rows.size for _, _, rows, _ in ovo.Pairs(ds.y).problems]
    out = with_libsvms_folds(monkeypatch, ovo, sizes, solver, args, many, tmp_path / "ours.model")
    assert out == libsvm_run(many, tmp_path / "theirs.model", ["-s", svm_type, "-b", "1", *args])
    assert out.count("Total nSV = ") == 5 * 253 + 1
    assert (tmp_path / "ours.model").read_bytes() == (tmp_path / "theirs.model").read_bytes()


def test_fold_that_overflows_is_refused_after_libsvms_lines(many, tmp_path, monkeypatch):
    """-s nu_svc -n 0.2 -b 1 with LIBSVM's folds: a fold's nu-SVC degenerates (r = inf: C = 0, rho nan, as LIBSVM's,
    which goes on with it); llsvm refuses the fold's model as SVMModel refuses it, after svm-train's lines up to
    that fold's `Total nSV`, byte for byte (the NaN of inf - inf printed by C's printf, "-nan")."""
    r = CliRunner().invoke(train_main, ["-s", "nu_svc", "-n", "0.2", "-b", "1", "--libsvm-rand", str(many),
                                        str(tmp_path / "m")])
    assert_exit(r, 1)
    assert without_scaling_note(r.stderr) == "Error: rho[0] is nan, not a finite number\n"
    assert not (tmp_path / "m").exists()
    theirs = libsvm_run(many, tmp_path / "theirs.model", ["-s", "1", "-n", "0.2", "-b", "1"])
    assert r.stdout.endswith("C = 0.000000\nobj = 0.000000, rho = -nan\nnSV = 0, nBSV = 0\nTotal nSV = 0\n")
    assert theirs.startswith(r.stdout)


@pytest.mark.parametrize("args", [["-s", "smo"], ["-s", "nu_svc", "-n", "0.05", "-b", "1"], ["-s", "smo", "-b", "1"]])
def test_batches_and_pair_by_pair_agree(many, tmp_path, monkeypatch, args):
    """The pairs in one call of the kernel per pair (a batch of no time) and pair by pair (ovo.run_pairs, the grid
    search's and the cluster's path, -b 1's permutations drawn one by one) give the run's stdout, model file and
    results per pair."""
    whole = ours(args, many, tmp_path / "whole.model")
    monkeypatch.setattr(smo, "BATCH_SECONDS", 0.0)
    assert ours(args, many, tmp_path / "split.model") == whole
    assert (tmp_path / "split.model").read_bytes() == (tmp_path / "whole.model").read_bytes()
    monkeypatch.undo()
    ds = llsvm.read_dataset(str(many))
    solver = args[1]
    opts = SMOOptions(probability=int("-b" in args))
    params = Params(solver=solver, options=opts, **({"nu": 0.05} if solver == "nu_svc" else {})).check()
    said = []
    batched = smo.fit(ds, params, Reporter(out=said.append))
    assert "".join(said) == whole
    said = []
    by_pair = ovo.run_pairs(smo.PairsRun(ds, params, Reporter(out=said.append)), params.seed,
                            Reporter(out=said.append))
    assert "".join(said) == whole
    assert by_pair.to_text() == batched.to_text() == (tmp_path / "whole.model").read_text()
    a, b = batched.meta["results"], by_pair.meta["results"]
    assert len(a) == len(b) == 253
    for r, s in zip(a, b):
        assert (r.n_iter, r.primal, r.dual, r.gap, r.max_violation, r.nSV, r.converged, r.extra) == \
               (s.n_iter, s.primal, s.dual, s.gap, s.max_violation, s.nSV, s.converged, s.extra)
        np.testing.assert_array_equal(r.alpha, s.alpha)
    # the results are made when read, and pickled as a list (llsvm.dask sends them)
    again = pickle.loads(pickle.dumps(a))
    assert type(again) is list and [r.extra for r in again] == [r.extra for r in a]
    assert a[-1] is a[252] and a[-3:] == [a[250], a[251], a[252]]


def test_one_row_classes(tmp_path):
    """200 classes of one row each (19,900 pairs of two rows), as svm-train trains them (no value 0:
    libsvm-official's Python reader drops it)."""
    path = tmp_path / "c200"
    path.write_text("".join("%d 1:%g\n" % (i, (i + 1) / 100) for i in range(200)))
    for solver, svm_type in (("smo", "0"), ("nu_svc", "1")):
        out = ours(["-s", solver], path, tmp_path / "ours.model")
        assert out == libsvm_run(path, tmp_path / "theirs.model", ["-s", svm_type])
        assert (tmp_path / "ours.model").read_bytes() == (tmp_path / "theirs.model").read_bytes()
