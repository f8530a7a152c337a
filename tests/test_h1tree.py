"""-s h1tree (llsvm/solvers/h1tree.py, llsvm/models/tree.py): the decision lists against the NumPy twin's tree
(tests/reference/h1_twin.py: the same nodes, removed sets, leaves and predictions), the stall guard, one-vs-one
voting, the RBF node and its cut, the model file (round trip, refusals) and the --json records."""
import json
import math
import os

import numpy as np
import pytest
import scipy.sparse as sp
from click.testing import CliRunner

import llsvm
from llsvm.cli.predict import main as predict_main
from llsvm.cli.train import main as train_main
from llsvm.dataset import CSRDataset
from llsvm.options import H1Options
from llsvm.params import Params
from llsvm.options import SMOOptions
from llsvm.models.tree import TreeModel
from reference import h1_twin as T
from test_smo_train import blobs as smo_blobs

from conftest import assert_exit


def blobs(seed, l, n, labels, sep=2.5, sparse=0.0):
    return smo_blobs(seed, l, n, labels, sparse=sparse, spread=sep)


def train(X, y, **opts):
    ds = CSRDataset.from_csr(sp.csr_matrix(X), y)
    params = Params(solver="h1tree", options=H1Options(**opts))
    return ds, llsvm.train(ds, params=params, say=lambda s: None)


CASES = {
    # id: (seed, rows, features, sep, sparse, options)
    "greedy-inf": (1, 300, 5, 2.0, 0.0, {}),
    "alternate-inf": (2, 300, 5, 2.0, 0.0, {"hard_class": "alternate"}),
    "larger-kappa2": (3, 300, 6, 1.5, 0.0, {"hard_class": "larger", "h1_c": 2.0}),
    "greedy-kappa1": (4, 240, 4, 1.2, 0.0, {"h1_c": 1.0}),
    "greedy-sparse": (5, 400, 30, 1.5, 0.6, {}),
    "greedy-min-remove": (6, 300, 5, 1.0, 0.0, {"min_remove": 0.05, "h1_c": 2.0}),
    "greedy-depth2": (7, 300, 5, 1.0, 0.0, {"max_depth": 2, "h1_c": 2.0}),
}


@pytest.mark.parametrize("name", CASES)
def test_lists_match_the_twin(name):
    """Every node (hard label, w, b, rows removed), the leaf and the prediction of every test row equal the
    twin's build_tree / predict_tree."""
    seed, l, n, sep, sparse, opts = CASES[name]
    X, y = blobs(seed, l + 200, n, (1, -1), sep=sep, sparse=sparse)
    Xtr, ytr, Xte = X[:l], y[:l], X[l:]
    ds, model = train(Xtr, ytr, **opts)
    nodes, leaf, _ = T.build_tree(sp.csr_matrix(Xtr), ytr, hard_class=opts.get("hard_class", "greedy"),
                                  h1_c=opts.get("h1_c", math.inf), min_remove=opts.get("min_remove", 0.0),
                                  max_depth=opts.get("max_depth", 256))
    tree = model.trees[0]
    rec = model.meta["results"][0].extra["nodes"]
    assert len(tree.nodes) == len(nodes) >= 1
    for ours, twin, r in zip(tree.nodes, nodes, rec):
        assert ours.hard == int(twin["hard"])
        w = np.zeros(n)
        w[ours.idx] = ours.val
        np.testing.assert_array_equal(w, twin["w"])
        assert ours.b == twin["b"]
        assert r["removed"] == twin["n_removed"] and r["n_iter"] == twin["n_iter"]
    assert tree.final == ("leaf", int(leaf))
    pred = model.predict(CSRDataset.from_csr(sp.csr_matrix(Xte), np.zeros(200)))
    tw, _ = T.predict_tree(nodes, leaf, sp.csr_matrix(Xte))
    np.testing.assert_array_equal(pred, tw)


def test_every_hard_row_on_its_side_and_removed_rows_answered():
    X, y = blobs(11, 300, 5, (1, -1), sep=1.5)
    ds, model = train(X, y, h1_c=math.inf)
    S = np.arange(300)
    for node in model.trees[0].nodes:
        w = np.zeros(5)
        w[node.idx] = node.val
        f = X[S] @ w + node.b
        yh = 1.0 if node.hard == 1 else -1.0
        hard = S[y[S] == yh]
        assert np.min(yh * (X[hard] @ w + node.b)) == pytest.approx(1.0, abs=1e-9)
        S = S[~((y[S] == -yh) & (-yh * f > 0))]


def test_stall_guard_stops_at_once_when_both_candidates_are_void():
    """Soft rows placed symmetrically around the hard class's centroid (inside its hull): with C = inf both
    candidates have the zero solution or remove nothing, so the list is empty and ends in the majority leaf."""
    g = np.random.default_rng(3)
    hard = g.standard_normal((60, 2)) * 3.0
    c = hard.mean(axis=0)
    d = g.standard_normal((20, 2)) * 0.3
    soft = np.concatenate([c + d, c - d])
    X = np.concatenate([hard, soft])
    y = np.concatenate([np.ones(60), -np.ones(40)])
    _, model = train(X, y)
    assert model.trees[0].nodes == [] and model.trees[0].final == ("leaf", 1)
    assert model.meta["results"][0].extra["stalled"]


def test_fourclass_stalls_with_c_inf_and_builds_nodes_with_kappa_1(shared_plain):
    """The spec's calibration: fourclass builds no node with C = inf (each class's centroid inside the other's
    hull); kappa = 1 (the centroid difference) builds some."""
    path = shared_plain("fourclass")
    ds = llsvm.read_dataset(str(path))
    m = llsvm.train(ds, params=Params(solver="h1tree"), say=lambda s: None)
    assert m.n_hyperplanes == 0 and m.meta["results"][0].extra["stalled"]
    m1 = llsvm.train(ds, params=Params(solver="h1tree", options=H1Options(h1_c=1.0)), say=lambda s: None)
    assert m1.n_hyperplanes >= 1


def test_one_vs_one_votes_like_libsvm():
    """Three classes: three lists; each row's label is LIBSVM's vote over the three pair answers, each answer the
    twin's list for that pair."""
    X, y = blobs(21, 450, 4, (3, 1, 2), sep=2.0)
    Xte, _ = blobs(22, 150, 4, (3, 1, 2), sep=2.0)
    _, model = train(X, y, h1_c=2.0)
    lab = [int(v) for v in dict.fromkeys(y.astype(int).tolist())]      # first occurrence: LIBSVM's order
    assert [int(v) for v in model.label] == lab and len(model.trees) == 3
    assert model.n_hyperplanes >= 3
    answers = []
    for a, b in ((lab[0], lab[1]), (lab[0], lab[2]), (lab[1], lab[2])):
        rows = (y == a) | (y == b)
        nodes, leaf, _ = T.build_tree(sp.csr_matrix(X[rows]), np.where(y[rows] == a, 1.0, -1.0), h1_c=2.0)
        p, _ = T.predict_tree(nodes, leaf, sp.csr_matrix(Xte))
        answers.append(np.where(p > 0, a, b))
    votes = np.zeros((150, 3), int)
    for ans in answers:
        for k, v in enumerate(lab):
            votes[:, k] += ans == v
    expect = np.array(lab)[np.argmax(votes, axis=1)]
    np.testing.assert_array_equal(model.predict(CSRDataset.from_csr(sp.csr_matrix(Xte), np.zeros(150))), expect)


def test_rbf_depth_zero_is_the_rbf_model_and_a_cut_keeps_the_first_nodes():
    X, y = blobs(31, 300, 4, (1, -1), sep=0.8)
    ds, model0 = train(X, y, rbf_depth=0, gamma=0.5)
    svm = llsvm.train(ds, params=Params(solver="smo", options=SMOOptions(gamma=0.5)), say=lambda s: None)
    assert model0.n_hyperplanes == 0 and model0.trees[0].final == ("rbf",)
    assert model0.rbf.to_text() == svm.to_text()
    np.testing.assert_array_equal(model0.predict(ds), svm.predict(ds))
    _, full = train(X, y, h1_c=2.0)
    _, cut = train(X, y, h1_c=2.0, rbf_depth=1, gamma=0.5)
    assert full.n_hyperplanes > 1
    assert cut.n_hyperplanes == 1 and cut.trees[0].final == ("rbf",)
    a, b = full.trees[0].nodes[0], cut.trees[0].nodes[0]
    assert (a.hard, a.b) == (b.hard, b.b) and np.array_equal(a.val, b.val)
    # rows the first node answers get its label; the others the RBF model's
    rest = cut.decision_function(ds)
    svm_pred = svm.predict(ds)
    w = np.zeros(4)
    w[b.idx] = b.val
    f = X @ w + b.b
    answered = (-1.0 if b.hard == 1 else 1.0) * f > 0
    assert answered.any() and (~answered).any()
    np.testing.assert_array_equal(cut.labels_from_decisions(rest)[~answered], svm_pred[~answered])


def test_auto_cut_is_within_tolerance_of_the_best():
    X, y = blobs(41, 500, 4, (1, -1), sep=0.7)
    ds, model = train(X, y, h1_c=2.0, rbf_depth="auto", gamma=0.5, rbf_tol=0.5)
    rec = model.meta["results"][0].extra
    costs = rec["cut_costs"]
    best = max(acc for acc, _ in costs)
    eligible = [(cost, d) for d, (acc, cost) in enumerate(costs) if acc >= best - 0.5]
    chosen = min(eligible)[1]                       # R6: the cheapest cut within the tolerance of the best
    assert rec["cut"] == min(chosen, len(rec["nodes"]))
    assert len(costs) >= 2 and costs[0][1] > costs[-1][1] >= 0     # the RBF node alone costs the most
    assert (model.rbf is not None) == (rec["final"] == "rbf")


# -- the model file and the command line -----------------------------------------------------------------------
def _write(path, X, y):
    with open(path, "w") as f:
        for xi, yi in zip(X, y):
            f.write(f"{int(yi)}" + "".join(f" {j + 1}:{v:.17g}" for j, v in enumerate(xi) if v != 0) + "\n")
    return path


@pytest.mark.parametrize("extra", [[], ["--rbf-depth", "1", "-g", "0.5"], ["--h1-c", "2", "--hard-class", "larger"]])
def test_model_file_round_trip_and_predict(tmp_path, extra):
    X, y = blobs(51, 300, 4, (2, 1, 3), sep=2.5)
    data = _write(tmp_path / "d.txt", X, y)
    lab = " ".join(dict.fromkeys(str(int(v)) for v in y))
    mpath = tmp_path / "m.model"
    r = CliRunner().invoke(train_main, ["-s", "h1tree", "-q", *extra, str(data), str(mpath)])
    assert_exit(r, 0)
    text = mpath.read_text()
    assert text.startswith(f"llsvm_tree_model 1\nsolver_type H1_TREE\nnr_class 3\nlabel {lab}\n")
    assert "\nnode hard " in text
    m = llsvm.load_model(str(mpath))
    assert isinstance(m, TreeModel) and m.to_text() == text
    r = CliRunner().invoke(predict_main, [str(data), str(mpath), str(tmp_path / "p")])
    assert_exit(r, 0)
    pred = np.array([float(v) for v in (tmp_path / "p").read_text().split()])
    np.testing.assert_array_equal(pred, m.predict(llsvm.read_dataset(str(data))))
    assert r.stdout.startswith("Accuracy = ")


def test_json_records_every_node(tmp_path):
    X, y = blobs(61, 300, 4, (1, -1), sep=1.2)
    data = _write(tmp_path / "d.txt", X, y)
    r = CliRunner().invoke(train_main, ["-s", "h1tree", "-q", "--h1-c", "2", "--json", str(tmp_path / "j"),
                                        str(data), str(tmp_path / "m")])
    assert_exit(r, 0)
    j = json.loads((tmp_path / "j").read_text())
    nodes = j["trees"][0]["nodes"]
    assert len(nodes) == j["n_hyperplanes"] >= 1
    for n in nodes:
        assert set(n) >= {"hard", "removed", "n_iter", "norm_w", "zero"} and n["zero"] is False
    assert 1.0 <= j["average_depth"] <= len(nodes) and j["reach_rbf"] == 0.0


BAD = {
    "version": ("llsvm_tree_model 2\n", ":1: expected 'llsvm_tree_model 1'"),
    "nr_tree": ("HEAD nr_tree 2\n", ":9: nr_tree must be 1 for 2 classes"),
    "node": ("HEAD nr_tree 1\ntree 1 -1 nr_node 1 final leaf 1\nnode hard 1 b x w 0\n", ":11: a node needs"),
    "index": ("HEAD nr_tree 1\ntree 1 -1 nr_node 1 final leaf 1\nnode hard 1 b 0.5 w 2 3:1 2:1\n", ":11: w entry '2:1'"),
    # every structural error names its line (docs/formats.md 1.4; issue 27, item 8: these named none)
    "leaf": ("HEAD nr_tree 1\ntree 1 -1 nr_node 0 final leaf 7\n", ":10: tree (1, -1) ends in leaf 7"),
    "rbf missing": ("HEAD nr_tree 1\ntree 1 -1 nr_node 0 final rbf\n", ":10: this tree ends in the RBF node, and "
                    "the file has no rbf_model"),
    "pair": ("HEAD nr_tree 1\ntree -1 1 nr_node 0 final leaf 1\n", ":10: tree for the pair (-1, 1) where the pair "
             "(1, -1) is expected"),
    "hard": ("HEAD nr_tree 1\ntree 1 -1 nr_node 1 final leaf 1\nnode hard 2 b 0.5 w 0\n",
             ":11: a node of tree (1, -1) has hard label 2"),
    "rbf labels": ("HEAD nr_tree 1\ntree 1 -1 nr_node 0 final rbf\nrbf_model\nsvm_type c_svc\nkernel_type linear\n"
                   "nr_class 2\ntotal_sv 0\nrho 0\nlabel -1 1\nnr_sv 0 0\nSV\n",
                   ":17: the RBF node must be a classification model with the tree model's labels"),
    "trailing": ("HEAD nr_tree 1\ntree 1 -1 nr_node 0 final leaf 1\nextra\n", ":11: unexpected line 'extra'"),
}
HEAD = "llsvm_tree_model 1\nsolver_type H1_TREE\nnr_class 2\nlabel 1 -1\nnr_feature 3\nbias -1\nmulticlass ovo\nh1_c inf\n"


@pytest.mark.parametrize("name", BAD)
def test_malformed_tree_models_are_refused(tmp_path, name):
    text, message = BAD[name]
    p = tmp_path / "m.model"
    p.write_text(text.replace("HEAD ", HEAD) if text.startswith("HEAD") else text)
    with pytest.raises(llsvm.ModelFormatError) as exc:
        llsvm.load_model(str(p))
    assert message in str(exc.value) and str(exc.value).startswith(str(p))
    data = tmp_path / "d.txt"
    data.write_text("1 1:1\n")
    r = CliRunner().invoke(predict_main, [str(data), str(p), str(tmp_path / "out")])
    assert_exit(r, 1)
    assert "Traceback" not in r.stderr and not os.path.exists(tmp_path / "out")


def test_a_tree_file_too_wide_for_memory_is_refused_before_allocating(tmp_path):
    """The nodes' largest index sets the width of the dense hyperplanes prediction makes: a hostile file whose 20
    nodes reach feature 2^31 - 1 (320 GiB of weights) is refused with exit 1 and a message, not attempted; one that
    only names 2^31 - 1 features in nr_feature costs nothing (features beyond the nodes' have weight 0)."""
    p = tmp_path / "m.model"
    p.write_text(HEAD.replace("nr_feature 3", "nr_feature 2147483647") + "nr_tree 1\ntree 1 -1 nr_node 20 final leaf 1\n"
                 + "node hard 1 b 0.5 w 1 2147483647:1\n" * 20)
    data = tmp_path / "d.txt"
    data.write_text("1 1:1\n")
    r = CliRunner().invoke(predict_main, [str(data), str(p), str(tmp_path / "out")])
    assert_exit(r, 1)
    assert r.stderr.startswith("Error: tree (1, -1): 20 hyperplanes over 2147483647 features make 320 GiB of weights, "
                               "more than")
    assert not os.path.exists(tmp_path / "out")
    p.write_text(HEAD.replace("nr_feature 3", "nr_feature 2147483647") + "nr_tree 1\ntree 1 -1 nr_node 20 final leaf 1\n"
                 + "node hard 1 b 0.5 w 1 5:1\n" * 20)
    r = CliRunner().invoke(predict_main, [str(data), str(p), str(tmp_path / "out")])
    assert_exit(r, 0)
    assert (tmp_path / "out").read_text() == "1\n"          # f = 0.5 >= 0 at every node: the leaf
