"""scripts/gen_data.py's two-feature sets of the online-SVM paper (issue 16): the labels follow the geometry of the
written values, the class balance and centres are the spec's, and the same seed writes the same bytes."""
import sys

import numpy as np
import pytest

import llsvm
from conftest import REPO_ROOT

sys.path.insert(0, str(REPO_ROOT / "scripts"))
from gen_data import generate  # noqa: E402


@pytest.mark.parametrize("kind", ["chessboard", "gaussians"])
def test_same_seed_same_bytes_and_the_counts(tmp_path, kind):
    a = generate(kind, tmp_path / "a", rows=3000, seed=4, test_out=tmp_path / "a.t", test_rows=500)
    generate(kind, tmp_path / "b", rows=3000, seed=4)
    generate(kind, tmp_path / "c", rows=3000, seed=5)
    assert (tmp_path / "a").read_bytes() == (tmp_path / "b").read_bytes() != (tmp_path / "c").read_bytes()
    assert a["rows"] == 3000 and a["features"] == 2 and a["nnz"] == 6000 and a["test"]["rows"] == 500
    ds = llsvm.read_dataset(str(tmp_path / "a"))
    assert ds.n_rows == 3000 and ds.n_features == 2 and ds.nnz == 6000
    assert abs(np.mean(ds.y > 0) - 0.5) < 0.04


def test_chessboard_labels_are_the_board(tmp_path):
    generate("chessboard", tmp_path / "cb", rows=4992, seed=1)
    ds = llsvm.read_dataset(str(tmp_path / "cb"))
    X = ds.to_csr().toarray()
    assert X.min() > 0 and X.max() < 4
    even = (np.floor(X[:, 0]) + np.floor(X[:, 1])) % 2 == 0
    np.testing.assert_array_equal(ds.y, np.where(even, 1.0, -1.0))


def test_gaussians_centres(tmp_path):
    generate("gaussians", tmp_path / "g", rows=15000, seed=1)
    ds = llsvm.read_dataset(str(tmp_path / "g"))
    X = ds.to_csr().toarray()
    np.testing.assert_allclose(X[ds.y > 0].mean(axis=0), [2.0, 2.0], atol=0.05)
    np.testing.assert_allclose(X[ds.y < 0].mean(axis=0), [0.0, 0.0], atol=0.05)
    np.testing.assert_allclose(X[ds.y < 0].std(axis=0), [1.0, 1.0], atol=0.05)


def test_geometric_kinds_refuse_other_shapes(tmp_path):
    with pytest.raises(ValueError, match="2 features and 2 classes"):
        generate("chessboard", tmp_path / "x", features=3)
