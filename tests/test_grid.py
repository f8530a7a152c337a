"""--grid (llsvm/grid.py): the syntax, every cell equal to the -v run of its C and gamma on the same folds, the
kernel state reused across the C values of one kernel and fold without changing any model, and the CLI table."""
import numpy as np
import pytest
import scipy.sparse as sp
from click.testing import CliRunner

import llsvm
from llsvm.cli.train import main as train_main
from llsvm.dataset import CSRDataset
from llsvm.solvers.folds import fold_plan
from llsvm.solvers.grid import grid_search, parse_grid
from llsvm.options import OnlineOptions, SMOOptions
from llsvm.params import Params
from llsvm.solvers.trainer import cross_validation

from conftest import assert_exit


def test_parse():
    g = parse_grid("C=1e-4:1e4:9 g=0.25,0.5,1,2")
    assert g["C"] == pytest.approx([10.0 ** k for k in range(-4, 5)], rel=1e-12)
    assert g["C"][0] == 1e-4 and g["C"][-1] == 1e4 and g["gamma"] == [0.25, 0.5, 1.0, 2.0]
    assert parse_grid("c=2;sigma=0.1,1") == {"C": [2.0], "sigma": [0.1, 1.0]}
    assert parse_grid("C=3:3:1") == {"C": [3.0]}


@pytest.mark.parametrize("text,message", [
    ("", "no NAME=VALUES"), ("x=1", "'x=1' is not NAME=VALUES"), ("C=1 C=2", "C is given twice"),
    ("C=1:2", "a range is A:B:N"), ("C=1:2:0", "N must be an integer >= 1"), ("C=a", "'a' in 'C=a' is not a number"),
    ("C=-1", "must be a finite number > 0"), ("g=1 sigma=1", "g and sigma both"), ("C=1:10:200 g=1:10:60",
                                                                                  "12000 cells; at most 10000"),
])
def test_parse_refusals(text, message):
    with pytest.raises(llsvm.ParameterError, match=message):
        parse_grid(text)


def _data(seed=1, l=180, labels=(1, -1)):
    g = np.random.default_rng(seed)
    X = g.standard_normal((l, 2)) * 1.5
    y = np.where(np.sin(X[:, 0]) * np.cos(X[:, 1]) > 0, labels[0], labels[1]).astype(float)
    if len(labels) > 2:
        y[g.random(l) < 0.3] = labels[2]
    return CSRDataset.from_csr(sp.csr_matrix(X), y)


CASES = [("smo", SMOOptions(cache_size=0.05)), ("olsvm", OnlineOptions(epochs=2, cache_size=0.05)),
         ("pegasos", OnlineOptions(epochs=2, batch=3)), ("norma", OnlineOptions(eta0=1.0))]


@pytest.mark.parametrize("solver,opts", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("labels", [(1, -1), (1, 2, 3)], ids=["two", "three"])
def test_cells_equal_cross_validation(solver, opts, labels):
    ds = _data(labels=labels)
    params = Params(solver=solver, seed=3, options=opts)
    res = grid_search(ds, 4, {"C": [0.1, 1.0, 30.0], "gamma": [0.3, 2.0]}, params=params)
    assert [(c["gamma"], c["C"]) for c in res.cells] == [(g, C) for g in (0.3, 2.0) for C in (0.1, 1.0, 30.0)]
    errors = []
    for cell in res.cells:
        o = type(opts)(**{**opts.__dict__, "gamma": cell["gamma"]})
        target = cross_validation(ds, 4, params=Params(solver=solver, C=cell["C"], seed=3, options=o))
        err = 100.0 * np.count_nonzero(target != ds.y) / ds.n_rows
        assert cell["error"] == err
        errors.append(err)
        assert cell["seconds"] >= cell["fit_seconds"] > 0 and cell["cpu_seconds"] > 0 and cell["nSV"] > 0
        assert (cell["viol"] is None) == (solver == "smo")
    assert res.best["error"] == min(errors) and res.best is res.cells[errors.index(min(errors))]
    assert len(set(errors)) > 1           # the grid's cells differ: the test can tell them apart


def test_folds_are_the_cross_validation_folds():
    ds = _data()
    folds = fold_plan(ds.y, 5, 7)
    res = grid_search(ds, 5, {"C": [1.0]}, params=Params(solver="olsvm", seed=7))
    for (a, b), (c, d) in zip(folds, res.folds):
        np.testing.assert_array_equal(a, c)
        np.testing.assert_array_equal(b, d)


def test_sigma_cells_and_store_reuse():
    ds = _data(l=300)
    res = grid_search(ds, 3, {"C": [1.0, 10.0, 100.0], "sigma": [0.5]},
                      params=Params(solver="olsvm", options=OnlineOptions(cache_size=50)))
    assert all(c["sigma"] == 0.5 and c["gamma"] == 2.0 for c in res.cells)


def test_grid_refused_for_linear_solvers():
    with pytest.raises(llsvm.ParameterError, match="--grid applies only to"):
        grid_search(_data(), 3, {"C": [1.0]}, params=Params(solver=3))


def test_cli_table(tmp_path):
    ds = _data()
    path = tmp_path / "d.txt"
    X = ds.to_csr().toarray()
    path.write_text("".join(f"{int(t)} 1:{r[0]:.10g} 2:{r[1]:.10g}\n" for r, t in zip(X, ds.y)))
    r = CliRunner().invoke(train_main, ["-s", "olsvm", "-v", "3", "--grid", "C=1,10 sigma=0.5,1", "--json",
                                        str(tmp_path / "g.json"), str(path), str(tmp_path / "m")])
    assert_exit(r, 0)
    lines = r.stdout.splitlines()
    assert lines[0] == "Grid search with 3-fold cross validation: 4 cells"
    assert lines[1].split() == ["C", "gamma", "CV", "error", "seconds"]
    assert len(lines) == 7 and lines[-1].startswith("Best C = ")
    assert not (tmp_path / "m").exists()
    import json
    m = json.loads((tmp_path / "g.json").read_text())
    assert len(m["cells"]) == 4 and m["best"] in m["cells"]
    r = CliRunner().invoke(train_main, ["-s", "olsvm", "--grid", "C=1", "-c", "2", str(path)])
    assert_exit(r, 2)
    assert "Invalid value for '--grid': it gives C: leave out -c" in r.stderr
    r = CliRunner().invoke(train_main, ["-s", "olsvm", "--grid", "C=x", str(path)])
    assert_exit(r, 2)
    assert "Invalid value for '--grid': 'x' in 'C=x' is not a number" in r.stderr
