"""The figure of `--plot FILE.png` (llsvm-predict, -v): matplotlib, from the `plot` extra, imported only here and
only when a plot is asked for.

- two classes: the ROC curve (with the AUC in its title) and the precision-recall curve, side by side;
- more classes: the confusion matrix (counts in the cells, labels on the axes, accuracy in the title);
- regression: the predicted values against the true ones, with the diagonal (MSE and SCC in the title).
The figure is built without pyplot (no display, no global state) and written atomically (fileutil.atomic_output).
"""
from .errors import LLSVMError
from .fileutil import atomic_output

DPI = 100
SIZES = {"binary": (10.0, 4.5), "multi": (6.5, 5.5), "regression": (6.0, 5.5)}   # inches; pixels = inches * DPI


def require_matplotlib():
    try:
        import matplotlib   # noqa: F401
        from matplotlib.figure import Figure
    except ImportError:
        raise LLSVMError("--plot needs matplotlib: pip install 'llsvm[plot]'") from None
    return Figure


def kind(summary):
    if summary.regression:
        return "regression"
    return "binary" if summary.positive is not None else "multi"


def figure(summary, title=""):
    """The matplotlib Figure of a measures.Summary (its kept scores or values: Evaluation(keep=True)); `title`
    (the data's name) heads it."""
    from .measures import curves
    Figure = require_matplotlib()
    k = kind(summary)
    fig = Figure(figsize=SIZES[k], dpi=DPI)
    v = summary.values
    if k == "binary":
        scores, truth = summary.kept
        fpr, tpr, recall, precision = curves(scores, truth)
        roc, pr = fig.subplots(1, 2)
        roc.plot(fpr, tpr, drawstyle="default", color="C0")
        roc.plot([0, 1], [0, 1], linestyle="--", color="0.6", linewidth=0.8)
        # the model's own threshold (the predicted labels): a point on each curve
        roc.plot([summary.fp / max(summary.fp + summary.tn, 1)], [v["recall"]], "o", color="C3",
                 label="the model's predictions")
        roc.legend(loc="lower right")
        roc.set(xlabel="false positive rate (1 - specificity)", ylabel="true positive rate (recall)",
                xlim=(0, 1), ylim=(0, 1.01), title=f"ROC curve: AUC = {v['auc']:.4g}")
        pr.plot(recall, precision, color="C1")
        base = truth.mean() if truth.size else 0.0
        pr.axhline(base, linestyle="--", color="0.6", linewidth=0.8)
        pr.plot([v["recall"]], [v["precision"]], "o", color="C3", label="the model's predictions")
        pr.legend(loc="lower left")
        pr.set(xlabel="recall", ylabel="precision", xlim=(0, 1), ylim=(0, 1.01),
               title=f"Precision-recall: P = {v['precision']:.4g}, R = {v['recall']:.4g}, F = {v['fscore']:.4g}")
        head = f"positive class {summary.positive:g}, {summary.n} rows, accuracy {100 * v['accuracy']:.4g}%"
        fig.suptitle(f"{title}: {head}" if title else head)
    elif k == "multi":
        ax = fig.subplots()
        counts = summary.counts
        im = ax.imshow(counts, cmap="Blues")
        fig.colorbar(im, ax=ax, label="rows")
        labels = [f"{c:g}" for c in summary.classes]
        ax.set_xticks(range(len(labels)), labels)
        ax.set_yticks(range(len(labels)), labels)
        high = counts.max(initial=0) / 2
        for i in range(counts.shape[0]):
            for j in range(counts.shape[1]):
                ax.text(j, i, str(int(counts[i, j])), ha="center", va="center", fontsize=8,
                        color="white" if counts[i, j] > high else "black")
        ax.set(xlabel="predicted label", ylabel="true label",
               title=f"accuracy {100 * v['accuracy']:.4g}%, macro F-score {v['fscore']:.4g}")
        fig.suptitle(f"{title}: confusion matrix" if title else "confusion matrix")
    else:
        pred, y = summary.kept
        ax = fig.subplots()
        ax.scatter(y, pred, s=8, alpha=0.6, color="C0", edgecolors="none")
        if y.size:
            lo, hi = float(min(y.min(), pred.min())), float(max(y.max(), pred.max()))
            ax.plot([lo, hi], [lo, hi], linestyle="--", color="0.4", linewidth=0.8, label="predicted = true")
            ax.legend(loc="upper left")
        ax.set(xlabel="true value", ylabel="predicted value",
               title=f"MSE = {v['mse']:.4g}, SCC = {v['scc']:.4g}, MAE = {v['mae']:.4g}")
        fig.suptitle(f"{title}: predicted against true" if title else "predicted against true")
    fig.tight_layout()
    return fig


def save(summary, path, title=""):
    """Write the summary's figure to `path` as a PNG, atomically (a temporary file beside it, then a rename)."""
    fig = figure(summary, title)
    with atomic_output(path, "wb") as out:
        fig.savefig(out, format="png", dpi=DPI)
