"""--measure and --plot (issue 47, item 2): LIBSVM's eval-tool measures in llsvm-predict, -v, -C and --grid, the
--json keys, the plots.

References, independent of llsvm: scikit-learn's metrics (accuracy_score, precision_score, recall_score, f1_score,
roc_auc_score, balanced_accuracy_score, confusion_matrix, mean_squared_error, mean_absolute_error, the squared
Pearson correlation), on the labels and decision values that LIBSVM's and LIBLINEAR's own C libraries
(libsvm-official, liblinear-official) predict from the model files; the eval tool's AUC loop (eval.cpp: sort by
decreasing decision value, add the positives above each negative) written out below for the tie test. Three sets:
heart_scale (two classes), glass.scale (six), scikit-learn's diabetes (regression, bundled with scikit-learn).
"""
import json
import os
import re

import numpy as np
import pytest
from click.testing import CliRunner
from sklearn import metrics as skm
from sklearn.datasets import dump_svmlight_file, load_diabetes, load_svmlight_file

from libsvm import svmutil  # noqa: E402  (test dependencies: missing is a failure)
from liblinear import liblinearutil as llu  # noqa: E402

import llsvm
from llsvm import measures, plots
from llsvm.cli.predict import main as predict_main
from llsvm.cli.train import main as train_main
from llsvm.errors import LLSVMError
from llsvm.solvers.trainer import cross_validation

REL = 1e-12


@pytest.fixture
def run():
    def invoke(main, args, code=0):
        r = CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)
        assert r.exit_code == code, r.output
        return r
    return invoke


@pytest.fixture(scope="module")
def diabetes(tmp_path_factory):
    X, y = load_diabetes(return_X_y=True)
    path = tmp_path_factory.mktemp("reg") / "diabetes"
    dump_svmlight_file(X, y, str(path), zero_based=False)
    return path


def _libsvm_predict(data, model_file):
    """(true labels, predicted labels, decision values, model labels) from LIBSVM's C library."""
    y, x = svmutil.svm_read_problem(str(data))
    m = svmutil.svm_load_model(str(model_file))
    pred, _, dec = svmutil.svm_predict(y, x, m, "-q")
    return np.array(y), np.array(pred), np.array(dec), m.get_labels()


def _eval_tool_auc(dec, ty):
    """eval.cpp's auc(): rows in the given order of decreasing decision value, `roc += tp` at each negative."""
    roc = tp = fp = 0
    for i in np.argsort(-dec, kind="stable"):
        if ty[i] == 1:
            tp += 1
        else:
            roc += tp
            fp += 1
    return roc / tp / fp


# -- the measures themselves ------------------------------------------------------------------------------------

def test_positive_class_is_the_eval_tools():
    assert measures.positive_label([-1, 1]) == 1 and measures.positive_label([1, -1]) == 1
    assert measures.positive_label([0, 1]) == 1                 # 1/0 labels: the one > 0
    assert measures.positive_label([2, 1]) == 2                 # otherwise the model's first label
    assert measures.positive_label([1, 2, 3]) is None


def test_auc_ties_count_one_half():
    """Decision values with ties: scikit-learn's AUC, and the mean of the eval tool's count over the two extreme
    orders of the tied rows (positives first, negatives first); without ties the tool's count exactly."""
    rng = np.random.default_rng(3)
    y = rng.choice([1, -1], 400)
    dec = np.round(rng.normal(size=400) + 0.7 * y, 0)           # a handful of distinct values: many ties
    assert np.unique(dec).size < 20
    got = measures.roc_auc(dec, y == 1)
    assert got == pytest.approx(skm.roc_auc_score(y, dec), rel=REL)
    pos_first = np.lexsort((y == 1, dec))[::-1]                 # decreasing dec, positives before negatives in a tie
    neg_first = np.lexsort((y != 1, dec))[::-1]
    hi = _eval_tool_auc(-np.argsort(pos_first).astype(float), y)
    lo = _eval_tool_auc(-np.argsort(neg_first).astype(float), y)
    assert lo < got < hi and got == pytest.approx((lo + hi) / 2, rel=REL)
    distinct = rng.normal(size=400) + 0.7 * y
    assert measures.roc_auc(distinct, y == 1) == _eval_tool_auc(distinct, y)


def test_predict_two_classes_against_sklearn(shared_plain, tmp_path, run):
    """heart_scale, a kernel model: every measure equals scikit-learn's on LIBSVM's predictions and decision
    values (positive class +1, the model's first label), printed in the eval tool's style, in --json."""
    data = shared_plain("heart_scale")
    model = tmp_path / "m"
    run(train_main, ["-s", "smo", "-c", "4", "-g", "0.2", "-q", data, model])
    y, pred, dec, labels = _libsvm_predict(data, model)
    assert labels == [1, -1]
    want = {"precision": skm.precision_score(y, pred), "recall": skm.recall_score(y, pred),
            "fscore": skm.f1_score(y, pred), "auc": skm.roc_auc_score(y, dec[:, 0]),
            "bac": skm.balanced_accuracy_score(y, pred)}
    out = run(predict_main, ["--measure", "accuracy,precision,recall,fscore,auc,bac", "--json", tmp_path / "j",
                             data, model, tmp_path / "o"]).output
    got = json.loads((tmp_path / "j").read_text())
    for name, value in want.items():
        assert got[name] == pytest.approx(value, rel=REL), name
    assert got["accuracy"] == pytest.approx(100 * skm.accuracy_score(y, pred), rel=REL)
    tp, fp = int(((pred == 1) & (y == 1)).sum()), int(((pred == 1) & (y == -1)).sum())
    fn = int(((pred == -1) & (y == 1)).sum())
    assert f"Precision = {100 * got['precision']:g}% ({tp}/{tp + fp})\n" in out
    assert f"Recall = {100 * got['recall']:g}% ({tp}/{tp + fn})\n" in out
    for title, name in (("F-score", "fscore"), ("AUC", "auc"), ("BAC", "bac")):
        assert f"{title} = {got[name]:g}\n" in out
    assert out.index("Accuracy = ") < out.index("Precision = ") < out.index("AUC = ") < out.index("BAC = ")
    assert set(got) == {"n_rows", "predict_seconds", "accuracy", "correct", "precision", "recall", "fscore", "auc",
                        "bac", "confusion_matrix", "positive_label", "tp", "fp", "fn", "tn"}    # docs/formats.md 4.2
    assert got["positive_label"] == 1 and (got["tp"], got["fp"], got["fn"]) == (tp, fp, fn)
    assert got["confusion_matrix"] == {"labels": [1.0, -1.0],
                                       "counts": skm.confusion_matrix(y, pred, labels=[1, -1]).tolist()}


def test_auc_with_tied_decision_values_end_to_end(shared_plain, tmp_path, run):
    """A linear model on heart_scale's signs (x > 0: many identical rows, tied decision values): the AUC is
    scikit-learn's on LIBLINEAR's decision values; the positive class is +1 although the file starts with -1."""
    X, y = load_svmlight_file(str(shared_plain("heart_scale")))
    X = (X.toarray() > 0).astype(float)[:, :4]
    order = np.argsort(y, kind="stable")                        # the -1 rows first
    data = tmp_path / "signs"
    dump_svmlight_file(X[order], y[order], str(data), zero_based=False)
    model = tmp_path / "m"
    run(train_main, ["-s", "2", "-q", data, model])
    yy, xx = llu.svm_read_problem(str(data))
    m = llu.load_model(str(model))
    pred, _, dec = llu.predict(yy, xx, m, "-q")
    dec = np.array(dec)[:, 0] * (1 if m.get_labels()[0] == 1 else -1)
    assert np.unique(dec).size < len(yy) / 4                  # ties
    run(predict_main, ["--measure", "auc,fscore", "--json", tmp_path / "j", data, model, tmp_path / "o"])
    got = json.loads((tmp_path / "j").read_text())
    assert got["positive_label"] == 1
    assert got["auc"] == pytest.approx(skm.roc_auc_score(yy, dec), rel=REL)
    assert got["fscore"] == pytest.approx(skm.f1_score(yy, pred, pos_label=1), rel=1e-12)


def test_predict_more_classes_against_sklearn(shared_plain, tmp_path, run):
    """glass.scale (six classes): per-class precision/recall/F1, macro and micro averages, balanced accuracy
    and the confusion matrix equal scikit-learn's on LIBSVM's predictions; auc is refused (exit 1)."""
    data = shared_plain("glass.scale")
    model = tmp_path / "m"
    run(train_main, ["-s", "smo", "-c", "8", "-q", data, model])
    y, pred, _, labels = _libsvm_predict(data, model)
    out = run(predict_main, ["--measure", "precision,recall,fscore,bac", "--json", tmp_path / "j", data, model,
                             tmp_path / "o"]).output
    got = json.loads((tmp_path / "j").read_text())
    for name, f in (("precision", skm.precision_score), ("recall", skm.recall_score), ("fscore", skm.f1_score)):
        assert got[name] == pytest.approx(f(y, pred, average="macro", zero_division=0), rel=REL), name
        assert got["macro"][name] == got[name]
        assert got["micro"][name] == pytest.approx(f(y, pred, average="micro"), rel=REL)
        per = f(y, pred, labels=labels, average=None, zero_division=0)
        assert [r[name] for r in got["per_class"]] == pytest.approx(per, rel=REL)
    assert got["bac"] == pytest.approx(skm.balanced_accuracy_score(y, pred), rel=REL)
    cm = skm.confusion_matrix(y, pred, labels=labels)
    assert got["confusion_matrix"] == {"labels": [float(v) for v in labels], "counts": cm.tolist()}
    assert [r["support"] for r in got["per_class"]] == cm.sum(axis=1).tolist()
    assert "Precision = " in out and "(macro average)" in out and "Confusion matrix" in out
    row = " ".join(str(c) for c in cm[0])
    assert re.search(r"\n +%g +%s\n" % (labels[0], r" +".join(str(c) for c in cm[0])), out), row
    r = run(predict_main, ["--measure", "auc", data, model, tmp_path / "o"], code=1)
    assert "AUC is defined for two classes" in r.output


def test_predict_regression_against_sklearn(diabetes, tmp_path, run):
    data = diabetes
    model = tmp_path / "m"
    run(train_main, ["-s", "epsilon_svr", "-c", "10", "-g", "0.5", "-q", data, model])
    y, pred, _, _ = _libsvm_predict(data, model)
    out = run(predict_main, ["--measure", "mse,scc,mae", "--json", tmp_path / "j", data, model,
                             tmp_path / "o"]).output
    got = json.loads((tmp_path / "j").read_text())
    assert got["mean_squared_error"] == pytest.approx(skm.mean_squared_error(y, pred), rel=1e-9)
    assert got["mean_absolute_error"] == pytest.approx(skm.mean_absolute_error(y, pred), rel=1e-9)
    assert got["squared_correlation"] == pytest.approx(np.corrcoef(y, pred)[0, 1] ** 2, rel=1e-9)
    assert f"Mean absolute error = {got['mean_absolute_error']:g} (regression)\n" in out
    assert run(predict_main, ["--measure", "auc", data, model, tmp_path / "o"], code=1).output.startswith(
        "Error: --measure auc: not a regression measure")


# -- cross-validation, -C, --grid -------------------------------------------------------------------------------

def test_cv_measures_over_the_whole_sets_fold_predictions(shared_plain, tmp_path, run):
    """-v --measure: every measure is scikit-learn's over the concatenated fold predictions (not a mean of the
    folds'), the decision values oriented to +1 (positive exactly where +1 is predicted)."""
    data = shared_plain("heart_scale")
    out = run(train_main, ["-s", "smo", "-v", "5", "--measure", "auc,precision,recall,fscore,bac", "--json",
                           tmp_path / "j", "-q", data]).output
    got = json.loads((tmp_path / "j").read_text())
    ds = llsvm.read_dataset(str(data))
    target, dec = cross_validation(ds, 5, solver="smo", scores=True)
    y = ds.y
    assert np.array_equal(dec > 0, target == 1)
    assert got["cv_accuracy"] == pytest.approx(100 * skm.accuracy_score(y, target), rel=REL)
    assert got["cv_auc"] == pytest.approx(skm.roc_auc_score(y, dec), rel=REL)
    assert got["cv_precision"] == pytest.approx(skm.precision_score(y, target), rel=REL)
    assert got["cv_recall"] == pytest.approx(skm.recall_score(y, target), rel=REL)
    assert got["cv_fscore"] == pytest.approx(skm.f1_score(y, target), rel=REL)
    assert got["cv_bac"] == pytest.approx(skm.balanced_accuracy_score(y, target), rel=REL)
    assert {k for k in got if k.startswith("cv_")} == {"cv_accuracy", "cv_auc", "cv_precision", "cv_recall",
                                                       "cv_fscore", "cv_bac"}
    assert got["measure"] == "auc" and got["positive_label"] == 1
    assert f"Cross Validation AUC = {got['cv_auc']:g}\n" in out
    assert f"Cross Validation Precision = {100 * got['cv_precision']:g}%" in out


def test_cv_regression_mae(diabetes, tmp_path, run):
    run(train_main, ["-s", "11", "-B", "1", "-v", "4", "--measure", "mae", "--json", tmp_path / "j", "-q", diabetes])
    got = json.loads((tmp_path / "j").read_text())
    ds = llsvm.read_dataset(str(diabetes))
    target = cross_validation(ds, 4, solver=11, bias=1.0)
    assert got["cv_mae"] == pytest.approx(skm.mean_absolute_error(ds.y, target), rel=1e-9)
    assert got["cv_mse"] == pytest.approx(skm.mean_squared_error(ds.y, target), rel=1e-9)


def test_grid_selects_by_auc(shared_plain, tmp_path, run):
    """--grid --measure auc on heart_scale: the best cell is the argmax of the cells' AUC, which is not the cell of
    the lowest error."""
    data = shared_plain("heart_scale")
    out = run(train_main, ["-s", "smo", "--grid", "C=0.1,1,10 g=0.01,0.1,1", "--measure", "auc", "--json",
                           tmp_path / "j", data]).output
    got = json.loads((tmp_path / "j").read_text())
    cells = got["cells"]
    by_auc = max(cells, key=lambda c: c["auc"])
    by_error = min(cells, key=lambda c: c["error"])
    assert got["measure"] == "auc" and got["best"] == by_auc and by_auc != by_error
    assert f"Best C = {by_auc['C']:g} gamma = {by_auc['gamma']:g}  CV AUC = {by_auc['auc']:g}" in out


def test_C_search_selects_by_auc(shared_plain, tmp_path, run):
    data = shared_plain("heart_scale")
    out = run(train_main, ["-s", "2", "-C", "--measure", "auc", "--json", tmp_path / "j", data]).output
    got = json.loads((tmp_path / "j").read_text())
    lines = re.findall(r"log2c=(.{7})\tAUC=(\S+)", out)
    assert len(lines) > 5
    best = max(lines, key=lambda t: float(t[1]))                # the first of equals: max keeps it
    assert got["best_C"] == 2.0 ** float(best[0]) and f"{got['cv_auc']:g}" == best[1]


def test_measure_usage_errors(shared_plain, tmp_path, run):
    data = shared_plain("heart_scale")
    assert "not one of accuracy" in run(predict_main, ["--measure", "roc", data, data, tmp_path / "o"],
                                        code=2).output
    assert "applies with -v, -C or --grid" in run(train_main, ["--measure", "auc", data], code=2).output
    assert "applies with -v" in run(train_main, ["--plot", tmp_path / "p.png", data], code=2).output
    r = run(train_main, ["-v", "3", "--measure", "mae", "-q", data], code=1)
    assert "not a classification measure" in r.output


# -- plots ------------------------------------------------------------------------------------------------------

def _png_size(path):
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n"
    return int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big")


def test_plots(shared_plain, diabetes, tmp_path, run):
    """--plot: a PNG of the kind's size, nothing else left in the folder (the temporary file renamed); the
    figures' axes and titles."""
    for name, kind, train_args in (("heart_scale", "binary", ["-s", "smo"]), ("glass.scale", "multi", ["-s", "smo"]),
                                   (None, "regression", ["-s", "epsilon_svr"])):
        data = diabetes if name is None else shared_plain(name)
        folder = tmp_path / kind
        folder.mkdir()
        model = tmp_path / f"{kind}.model"
        run(train_main, train_args + ["-q", data, model])
        run(predict_main, ["-q", "--plot", folder / "p.png", data, model, tmp_path / "o"])
        w, h = plots.SIZES[kind]
        assert _png_size(folder / "p.png") == (int(w * plots.DPI), int(h * plots.DPI))
        assert os.listdir(folder) == ["p.png"]
    # -v --plot
    run(train_main, ["-s", "smo", "-v", "3", "-q", "--plot", tmp_path / "cv.png", shared_plain("heart_scale")])
    assert _png_size(tmp_path / "cv.png") == (1000, 450)


def test_figures(shared_plain):
    ds = llsvm.read_dataset(str(shared_plain("heart_scale")))
    rng = np.random.default_rng(0)
    dec = rng.normal(size=ds.n_rows) + ds.y
    pred = np.where(dec > 0, 1.0, -1.0)
    s = measures.evaluate(ds.y, pred, [1, -1], scores=dec)
    fig = plots.figure(s, "heart")
    roc, pr = fig.axes
    assert roc.get_xlabel().startswith("false positive rate") and roc.get_ylabel().startswith("true positive rate")
    assert roc.get_title() == f"ROC curve: AUC = {skm.roc_auc_score(ds.y, dec):.4g}"
    assert (pr.get_xlabel(), pr.get_ylabel()) == ("recall", "precision") and "F = " in pr.get_title()
    assert fig._suptitle.get_text().startswith("heart: positive class 1")
    s = measures.evaluate(np.array([1, 2, 3, 3.0]), np.array([1, 3, 3, 3.0]), [1, 2, 3])
    ax = plots.figure(s).axes[0]
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("predicted label", "true label")
    assert [t.get_text() for t in ax.get_xticklabels()] == ["1", "2", "3"] and "accuracy 75%" in ax.get_title()
    s = measures.evaluate(np.array([1.0, 2, 3]), np.array([1.5, 2, 2.5]), regression=True)
    ax = plots.figure(s).axes[0]
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("true value", "predicted value") and "MAE = 0.3333" in ax.get_title()


def test_plot_is_atomic_and_needs_matplotlib(tmp_path, monkeypatch):
    """A failed write leaves the old file and no temporary file; without matplotlib a clear error names the
    extra."""
    s = measures.evaluate(np.array([1.0, 2, 3]), np.array([1.5, 2, 2.5]), regression=True)
    path = tmp_path / "p.png"
    path.write_bytes(b"old")
    from matplotlib.figure import Figure

    def broken(self, out, **kw):
        out.write(b"partial")
        raise OSError("disk full")
    monkeypatch.setattr(Figure, "savefig", broken)
    with pytest.raises(OSError):
        plots.save(s, str(path))
    assert path.read_bytes() == b"old" and os.listdir(tmp_path) == ["p.png"]
    monkeypatch.setitem(__import__("sys").modules, "matplotlib", None)
    with pytest.raises(LLSVMError, match=r"llsvm\[plot\]"):
        plots.figure(s)
