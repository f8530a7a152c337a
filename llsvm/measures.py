"""Evaluation measures beyond accuracy (`--measure`, issue 47): LIBSVM's "eval" extension (libsvmtools' eval.cpp),
for llsvm-predict, -v, -C and --grid, in one place.

Two classes (the eval tool's definitions). The positive class is the tool's: of two labels, the one > 0 when the
other is not (+1 of +1/-1, 1 of 1/0: eval.cpp's `ty = label > 0 ? +1 : -1`, with the decision values negated when
the model's first label is not the positive one); for other labels (1/2, 3/7) the model's first label. With tp,
fp, fn, tn the confusion counts of the positive class:
- precision = tp / (tp + fp), recall = tp / (tp + fn) (0 when the denominator is 0, as the tool with its warning),
- fscore = 2 P R / (P + R) (0 when P + R = 0), bac = (tp / (tp + fn) + tn / (tn + fp)) / 2,
- auc: the tool sorts the rows by decreasing decision value of the positive class and adds, at each negative row,
  the positives above it: sum / (positives * negatives) (0 when a class is absent, as the tool). Where decision
  values tie, the tool's order is std::sort's, which the C++ standard leaves unspecified (an unstable introsort:
  its AUC on tied data depends on the library and on the input order); llsvm counts a positive and a negative that
  tie as 1/2, the mean of the tool's count over every order of the tied rows (the Mann-Whitney statistic, and
  scikit-learn's roc_auc_score). Without ties both are the tool's count exactly, in its arithmetic (sum / P / N).
- The confusion counts are those of the predicted labels (those llsvm-predict writes and its Accuracy line counts);
  the tool's `decision value >= 0` differs from svm-predict's and predict's `> 0` on a decision value of exactly 0
  only.
More than two classes (the tool has none; scikit-learn's definitions): per-class precision, recall and F1, their
macro averages over the classes present in the true or predicted labels, micro averages (= accuracy when every row
has one label), bac = the mean recall over the classes present in the true labels (balanced_accuracy_score); auc is
refused (a k-class kernel model has pairwise decision values, no score per class).
Regression: mse and scc are LIBSVM's (RegressionSums, in its arithmetic), mae = mean |v - y| (the eval
tool's mean_absolute_error), summed in the same sequential order.
Cross-validation (-v, -C, --grid): a measure over the whole set's fold predictions (the eval tool's cv mode, and
-v's accuracy), never a mean of per-fold figures; a fold model's decision values are oriented to the positive class
of the whole set's labels.

NumPy throughout: per block of rows, never per row.
"""
import numpy as np

from .errors import ParameterError
from .options import MEASURES as NAMES, MEASURES_CLASSIFICATION as CLASSIFICATION, \
    MEASURES_REGRESSION as REGRESSION, parse_measures  # noqa: F401 (the names' one home: the option rows)

LOWER_IS_BETTER = frozenset(("mse", "mae"))
ALREADY_REPORTED = frozenset(("accuracy", "mse", "scc"))     # llsvm-predict's and -v's lines and keys without --measure
TITLES = {"accuracy": "Accuracy", "precision": "Precision", "recall": "Recall", "fscore": "F-score", "auc": "AUC",
          "bac": "BAC", "mse": "Mean squared error", "scc": "Squared correlation coefficient",
          "mae": "Mean absolute error"}
# the --json keys of llsvm-predict (-v: "cv_" + the measure's name)
JSON_KEYS = {"accuracy": "accuracy", "precision": "precision", "recall": "recall", "fscore": "fscore", "auc": "auc",
             "bac": "bac", "mse": "mean_squared_error", "scc": "squared_correlation", "mae": "mean_absolute_error"}


class RegressionSums:
    """LIBLINEAR's predict's (and svm-predict's) regression sums over predictions v and targets y, in their order
    and arithmetic: row after row, `error += (v-y)*(v-y); sump += v; sumt += y; sumpp += v*v; sumtt += y*y;
    sumpt += v*y` in doubles (a sequential sum, np.add.accumulate, not numpy's pairwise one), so that the figures
    are theirs to the bit, inf and NaN (and the NaN's sign, which printf shows) included, without a warning. A
    seventh sum, of |v-y| in the same order, is the eval tool's mean absolute error."""

    def __init__(self):
        self.n = 0
        self.sums = np.zeros(7)         # error, sump, sumt, sumpp, sumtt, sumpt, absolute error

    def add(self, v, y):
        v = np.asarray(v, np.float64).reshape(-1)
        y = np.asarray(y, np.float64).reshape(-1)
        if not v.size:
            return
        with np.errstate(all="ignore"):
            d = v - y
            terms = (d * d, v, y, v * v, y * y, v * y, np.abs(d))
            for i, t in enumerate(terms):
                self.sums[i] = np.add.accumulate(np.concatenate((self.sums[i:i + 1], t)))[-1]
        self.n += v.size

    def scores(self):
        """(mean squared error, squared correlation coefficient), as predict prints them: error/total and
        ((n*sumpt - sump*sumt)^2) / ((n*sumpp - sump*sump) * (n*sumtt - sumt*sumt)), NaN or inf where a
        division is by zero, as in C."""
        error, sump, sumt, sumpp, sumtt, sumpt, _ = self.sums
        n = np.float64(self.n)
        with np.errstate(all="ignore"):
            a = n * sumpt - sump * sumt
            scc = (a * a) / ((n * sumpp - sump * sump) * (n * sumtt - sumt * sumt))
            return float(error / n), float(scc)


    def mean_absolute_error(self):
        """The eval tool's mean absolute error: the sum of |v-y| over the rows in their order, over n."""
        with np.errstate(all="ignore"):
            return float(self.sums[6] / np.float64(self.n))


def check_measures(names, regression, n_classes=None):
    """Refuse a measure the task has not: a classification measure for regression and the reverse, auc with more
    than two classes (n_classes None: not known yet)."""
    for name in names:
        if (name in REGRESSION) != bool(regression):
            kind, own = ("regression", REGRESSION) if regression else ("classification", CLASSIFICATION)
            raise ParameterError(f"--measure {name}: not a {kind} measure (a {kind} model is measured by "
                                 f"{', '.join(own)})")
    if "auc" in names and n_classes is not None and n_classes > 2:
        raise ParameterError(f"--measure auc: AUC is defined for two classes (LIBSVM's eval tool), not {n_classes}: "
                             "precision, recall, fscore and bac give per-class and averaged figures")


def better(name, a, b):
    """Whether the value a of measure `name` is strictly better than b (larger; smaller for mse and mae)."""
    return a < b if name in LOWER_IS_BETTER else a > b


def best_index(name, values):
    """The index of the best value (the first of equals); NaN is never best."""
    values = np.asarray(values, np.float64)
    ok = ~np.isnan(values)
    if not ok.any():
        return 0
    masked = np.where(ok, values, np.inf if name in LOWER_IS_BETTER else -np.inf)
    return int(np.argmin(masked) if name in LOWER_IS_BETTER else np.argmax(masked))


def positive_label(labels):
    """The eval tool's positive class of a two-class model's labels (see the module's docstring); None for more
    or fewer classes."""
    labels = [float(v) for v in (labels if labels is not None else ())]
    if len(labels) != 2:
        return None
    above = [v for v in labels if v > 0]
    return above[0] if len(above) == 1 else labels[0]


def model_labels(model):
    """A model's label order for measuring: its labels, (+1, -1) for a one-class model, None for regression."""
    if model.is_regression:
        return None
    label = getattr(model, "label", None)
    if label is None or (getattr(model, "svm_type", None) or getattr(model, "solver_type", None)) in (
            "one_class", "ONECLASS_SVM"):
        return [1.0, -1.0]
    return [float(v) for v in label]


def binary_scores(labels, dec, positive):
    """Decision values of a two-class model (labels: its label order) oriented so that larger means the positive
    class: the single value (positive for the first label) or, for two columns (Crammer and Singer's one per
    class), the positive column minus the other."""
    dec = np.asarray(dec, np.float64)
    first = float(labels[0]) == positive
    if dec.ndim == 2 and dec.shape[1] == 2:
        i = 0 if first else 1
        return dec[:, i] - dec[:, 1 - i]
    dec = dec.reshape(-1)
    return dec if first else -dec


def _ratio(a, b):
    return a / b if b else 0.0


def tie_groups(scores, truth):
    """Rows sorted by decreasing score, cut where the score changes: (score of each group, positives per group,
    negatives per group)."""
    order = np.argsort(-scores, kind="stable")
    s = scores[order]
    p = truth[order].astype(np.int64)
    starts = np.flatnonzero(np.concatenate(([True], s[1:] != s[:-1]))) if s.size else np.zeros(0, np.int64)
    pos = np.add.reduceat(p, starts) if s.size else np.zeros(0, np.int64)
    size = np.diff(np.append(starts, s.size))
    return s[starts], pos, size - pos


def roc_auc(scores, truth):
    """The eval tool's AUC of scores (larger: positive) for truth (bool, positive rows), ties counted 1/2."""
    _, pos, neg = tie_groups(np.asarray(scores, np.float64), np.asarray(truth, bool))
    tp, fp = int(pos.sum()), int(neg.sum())
    if tp == 0 or fp == 0:
        return 0.0
    above = np.cumsum(pos) - pos
    twice = int(np.sum(neg * (2 * above + pos)))      # 2 x (pairs ordered right + ties / 2), exact in integers
    return twice / 2 / tp / fp


def curves(scores, truth):
    """(fpr, tpr, recall, precision) at every threshold between tie groups, from (0, 0): the ROC and the
    precision-recall curve."""
    _, pos, neg = tie_groups(np.asarray(scores, np.float64), np.asarray(truth, bool))
    tp, fp = np.cumsum(pos), np.cumsum(neg)
    P, N = max(int(pos.sum()), 1), max(int(neg.sum()), 1)
    fpr = np.concatenate(([0.0], fp / N))
    tpr = np.concatenate(([0.0], tp / P))
    precision = np.concatenate(([1.0], tp / np.maximum(tp + fp, 1)))
    return fpr, tpr, tpr.copy(), precision


class Evaluation:
    """The measures of predictions added block by block: the confusion counts of the labels (classification), or
    the regression sums; the binary decision values (oriented, binary_scores) and the truth only when `keep` (AUC,
    the curves), the regression values only when `keep` (the scatter)."""

    def __init__(self, labels=None, *, regression=False, keep=False):
        self.regression = bool(regression)
        self.keep = keep
        self.classes = np.asarray(labels if labels is not None else [], np.float64)
        self.positive = None if regression else positive_label(labels)
        self.counts = np.zeros((self.classes.size,) * 2, np.int64)
        self.sums = RegressionSums()
        self._kept = []

    def _grow(self, values):
        values = np.unique(values)
        new = values[~np.isin(values, self.classes)]
        if np.isnan(self.classes).any():
            new = new[~np.isnan(new)]
        if new.size:
            k = self.classes.size
            self.classes = np.concatenate((self.classes, new))
            self.counts = np.pad(self.counts, ((0, new.size), (0, new.size)))
            assert self.counts.shape == (k + new.size,) * 2

    def _index(self, values):
        order = np.argsort(self.classes, kind="stable")
        return order[np.searchsorted(self.classes[order], values)]

    def add(self, y, pred, scores=None):
        """Rows with true values y, predictions pred and (two classes, with keep) their oriented scores."""
        y = np.asarray(y, np.float64).reshape(-1)
        pred = np.asarray(pred, np.float64).reshape(-1)
        if self.regression:
            self.sums.add(pred, y)
            if self.keep:
                self._kept.append((pred.copy(), y.copy()))
            return
        self._grow(np.concatenate((y, pred)))
        k = self.classes.size
        cell = self._index(y) * k + self._index(pred)
        self.counts += np.bincount(cell, minlength=k * k).reshape(k, k)
        if self.keep and scores is not None and self.positive is not None:
            self._kept.append((np.asarray(scores, np.float64).reshape(-1).copy(), y == self.positive))

    def kept(self):
        """The kept (scores, truth) or (predictions, targets), concatenated."""
        if not self._kept:
            return np.zeros(0), np.zeros(0, bool if not self.regression else np.float64)
        return tuple(np.concatenate(parts) for parts in zip(*self._kept))

    def summary(self):
        return Summary(self)


def evaluate(y, pred, labels=None, *, regression=False, scores=None):
    """The Summary of whole arrays at once (cross-validation: every fold's predictions; `scores` the oriented
    decision values for AUC)."""
    ev = Evaluation(labels, regression=regression, keep=scores is not None or regression)
    ev.add(y, pred, scores)
    return ev.summary()


class Summary:
    """Every measure of an Evaluation: `values` {name: value}; for classification `classes`, `counts` (rows: true
    label, columns: predicted), `positive` (two classes), `per_class` and the averages (more than two)."""

    def __init__(self, ev):
        self.regression = ev.regression
        self.positive = ev.positive
        self.kept = ev.kept() if ev.keep else None
        values = {}
        if ev.regression:
            mse, scc = ev.sums.scores()
            values.update(mse=mse, scc=scc, mae=ev.sums.mean_absolute_error())
            self.n = ev.sums.n
        else:
            self.classes, self.counts = ev.classes, ev.counts
            n = int(ev.counts.sum())
            self.n, self.correct = n, int(np.trace(ev.counts))
            values["accuracy"] = _ratio(self.correct, n)
            if self.positive is not None:
                self._binary(values)
            else:
                self._multi(values)
        self.values = values

    def _binary(self, values):
        p = int(np.flatnonzero(self.classes == self.positive)[0])
        c = self.counts
        tp = int(c[p, p])
        fn, fp = int(c[p].sum()) - tp, int(c[:, p].sum()) - tp
        tn = self.n - tp - fn - fp
        self.tp, self.fp, self.fn, self.tn = tp, fp, fn, tn
        P, R = _ratio(tp, tp + fp), _ratio(tp, tp + fn)
        values.update(precision=P, recall=R, fscore=_ratio(2 * P * R, P + R),
                      bac=(R + _ratio(tn, tn + fp)) / 2)
        if self.kept is not None:
            values["auc"] = roc_auc(*self.kept)

    def _multi(self, values):
        c = self.counts
        tp = np.diag(c).astype(np.float64)
        true, predicted = c.sum(axis=1), c.sum(axis=0)
        with np.errstate(all="ignore"):
            P = np.where(predicted > 0, tp / predicted, 0.0)
            R = np.where(true > 0, tp / true, 0.0)
            F = np.where(P + R > 0, 2 * P * R / (P + R), 0.0)
        present = (true + predicted) > 0
        self.per_class = [{"label": float(v), "precision": float(p), "recall": float(r), "fscore": float(f),
                           "support": int(s)} for v, p, r, f, s in zip(self.classes, P, R, F, true)]
        self.present = present
        self.macro = {"precision": float(P[present].mean()) if present.any() else 0.0,
                      "recall": float(R[present].mean()) if present.any() else 0.0,
                      "fscore": float(F[present].mean()) if present.any() else 0.0}
        micro_p, micro_r = _ratio(tp.sum(), predicted.sum()), _ratio(tp.sum(), true.sum())
        self.micro = {"precision": micro_p, "recall": micro_r, "fscore": _ratio(2 * micro_p * micro_r,
                                                                                micro_p + micro_r)}
        values.update(self.macro)
        values["bac"] = float(R[true > 0].mean()) if (true > 0).any() else 0.0

    # -- what the commands print and write ---------------------------------------------------------------------
    def lines(self, names, prefix=""):
        """The lines of the measures `names` (accuracy, mse and scc excepted: the commands print them already),
        the eval tool's style (%g; precision and recall in % with their counts); for more than two classes the
        averages, the per-class table and the confusion matrix. `prefix`: "Cross Validation " for -v."""
        out = []
        v = self.values
        if self.regression:
            if "mae" in names:
                out.append(f"{prefix}Mean absolute error = {v['mae']:g}" + ("" if prefix else " (regression)"))
            return out
        binary = self.positive is not None
        for name in names:
            if name in ("accuracy",) or name not in v:
                continue
            title = TITLES[name]
            if binary and name == "precision":
                out.append(f"{prefix}Precision = {100 * v[name]:g}% ({self.tp}/{self.tp + self.fp})")
            elif binary and name == "recall":
                out.append(f"{prefix}Recall = {100 * v[name]:g}% ({self.tp}/{self.tp + self.fn})")
            elif binary:
                out.append(f"{prefix}{title} = {v[name]:g}")
            elif name in ("precision", "recall"):
                out.append(f"{prefix}{title} = {100 * v[name]:g}% (macro average)")
            elif name == "fscore":
                out.append(f"{prefix}{title} = {v[name]:g} (macro average)")
            else:
                out.append(f"{prefix}{title} = {v[name]:g} (mean recall of the classes)")
        if binary and any(n in names for n in ("precision", "recall", "fscore", "bac")):
            out.append(f"(positive class {_label(self.positive)}: tp {self.tp} fp {self.fp} fn {self.fn} "
                       f"tn {self.tn})")
        if not binary and any(n != "accuracy" for n in names):
            out += self.table()
        return out

    def table(self):
        """The per-class table, its averages and the confusion matrix (more than two classes)."""
        out = [f"{'label':>10} {'precision':>10} {'recall':>10} {'F-score':>10} {'support':>9}"]
        for r in self.per_class:
            out.append(f"{_label(r['label']):>10} {r['precision']:>10.4f} {r['recall']:>10.4f} "
                       f"{r['fscore']:>10.4f} {r['support']:>9d}")
        for name, avg in (("macro avg", self.macro), ("micro avg", self.micro)):
            out.append(f"{name:>10} {avg['precision']:>10.4f} {avg['recall']:>10.4f} {avg['fscore']:>10.4f} "
                       f"{self.n:>9d}")
        texts = [_label(v) for v in self.classes]
        width = max([len(t) for t in texts] + [len(str(int(self.counts.max(initial=0))))]) + 1
        out.append("Confusion matrix (rows: true label, columns: predicted label):")
        out.append(" " * width + "".join(f"{t:>{width}}" for t in texts))
        for t, row in zip(texts, self.counts.tolist()):
            out.append(f"{t:>{width}}" + "".join(f"{c:>{width}d}" for c in row))
        return out

    def json(self, names, cv=False):
        """The --json keys of the measures `names` (JSON_KEYS; -v: "cv_" + name; accuracy, mse and scc are the
        commands' own keys already, accuracy in %) and, for classification, the
        confusion matrix; two classes: the positive label and its counts; more: per_class, macro, micro."""
        out = {}
        for name in names:
            if name in self.values and name not in ALREADY_REPORTED:
                out[f"cv_{name}" if cv else JSON_KEYS[name]] = self.values[name]
        if self.regression:
            return out
        out["confusion_matrix"] = {"labels": self.classes.tolist(), "counts": self.counts.tolist()}
        if self.positive is not None:
            out.update(positive_label=self.positive, tp=self.tp, fp=self.fp, fn=self.fn, tn=self.tn)
        else:
            out.update(per_class=self.per_class, macro=self.macro, micro=self.micro)
        return out


def _label(v):
    """A label as LIBSVM writes it (%g)."""
    return f"{v:g}"
