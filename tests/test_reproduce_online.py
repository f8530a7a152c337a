"""scripts/reproduce_online.py's LIBSVM side: libsvm-official on fold_plan's folds agrees with -s smo's grid cells
(the same folds), and --libsvm-cache reuses a cell only for the same set, folds, seed, C and gamma."""
import os
import sys

import numpy as np
import pytest
import scipy.sparse as sp

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "scripts"))
import reproduce_online as RO  # noqa: E402
from llsvm.dataset import CSRDataset  # noqa: E402


def chessboard(n, seed):
    g = np.random.default_rng(seed)
    X = g.uniform(0, 4, (n, 2)) + 1e-5
    y = np.where((np.floor(X[:, 0]) + np.floor(X[:, 1])) % 2 == 0, 1.0, -1.0)
    return CSRDataset.from_csr(sp.csr_matrix(X), y)


def test_libsvm_cells_match_smo_on_the_same_folds(tmp_path):
    ds = chessboard(240, 3)
    Cs, widths = [1.0, 100.0], [0.5]
    lib = RO.libsvm_grid("cb", ds, [(w, C, RO.gamma_of(w)) for w in widths for C in Cs], 3, 1,
                         RO.LibsvmCache(None))
    smo = RO.llsvm_grid(ds, "smo", Cs, "sigma", widths, 3, 1)
    for a, b in zip(lib, smo):
        assert (a["C"], a["width"]) == (b["C"], b["width"])
        assert a["gamma"] == pytest.approx(b["gamma"])
        assert abs(a["error"] - b["error"]) <= 100.0 / ds.n_rows + 1e-9     # at most one row apart
        assert not a["reused"]


def test_libsvm_cache_reuse(tmp_path):
    ds = chessboard(150, 4)
    path = str(tmp_path / "cache.json")
    spec = [(1.0, 10.0, 0.5)]
    first = RO.libsvm_grid("cb", ds, spec, 2, 1, RO.LibsvmCache(path))
    again = RO.libsvm_grid("cb", ds, spec, 2, 1, RO.LibsvmCache(path))
    assert again[0]["reused"] and again[0]["error"] == first[0]["error"]
    assert again[0]["cpu_seconds"] == first[0]["cpu_seconds"]
    # another seed (other folds) or another set: computed afresh, and added to the file
    assert not RO.libsvm_grid("cb", ds, spec, 2, 2, RO.LibsvmCache(path))[0]["reused"]
    assert not RO.libsvm_grid("cb", chessboard(150, 5), spec, 2, 1, RO.LibsvmCache(path))[0]["reused"]
    assert len(RO.LibsvmCache(path).cells) == 3
