"""Prediction over a stream of blocks: memory stays at one block whatever the size of the test data."""
import math
import time

import numpy as np

from .dataset import RowError
from .measures import RegressionSums, binary_scores, model_labels
from .io import open_dataset, row_error_at_line
from .report import size_bar
from .sources import display_name
from .textio import TextStream

# a block of test rows (CSR bytes) and the text read at a time to make it: LIBLINEAR's predict reads line by line, so
# both are small (8 MB and 1 MB: llsvm-predict on usps.t with a kernel model peaks 10 MB lower than with 32 and
# 16 MB, and runs as fast)
BLOCK_BYTES = 8 << 20
TEXT_CHUNK = 1 << 20


def _format_column(values):
    return "".join("%.17g\n" % v for v in values.tolist())


def _format_rows(dec):
    fmt = " ".join(["%.17g"] * dec.shape[1]) + "\n"
    return "".join(fmt % tuple(r) for r in dec.tolist())


def _printf(conversion, x):
    """x as C's printf(conversion) writes it ("%g", "%f"): Python's conversion % x but for a NaN whose sign bit is
    set, "-nan" (glibc's), which 0/0 and inf - inf give on x86 (Python writes every NaN "nan")."""
    return "-nan" if x != x and math.copysign(1.0, x) < 0 else conversion % x


def printf_g(x):
    return _printf("%g", x)


def printf_f(x):
    return _printf("%f", x)


def regression_scores(v, y):
    """(mean squared error, squared correlation coefficient) of predictions v for targets y, LIBLINEAR's
    (RegressionSums)."""
    sums = RegressionSums()
    sums.add(v, y)
    return sums.scores()


def _scores(model, dec, evaluation):
    """A block's decision values oriented to the evaluation's positive class, when it keeps them (AUC, curves)."""
    if not evaluation.keep or evaluation.positive is None:
        return None
    return binary_scores(model_labels(model), dec, evaluation.positive)


def predict_file(model, test_path, out, *, dec_out=None, probability=False, zero_based=False, progress=None,
                 evaluation=None):
    """Predict every row of a text or binary test file with any model (the BaseModel interface), LIBLINEAR's
    predict style.

    Writes one label per row to the text stream `out` (`%.17g`; with `probability`, the model's header line
    (LIBLINEAR's and svm-predict's `labels ...`, svm-predict's `label normal outlier` for one-class) and
    `label p1 p2 ...` lines in `%g`), the decision values to `dec_out` when given, and returns the metrics:
    n_rows, correct, accuracy (%), mean_squared_error, squared_correlation, predict_seconds. `evaluation` (an
    llsvm.measures.Evaluation of the model's labels) receives every block's labels and predictions, and with its
    `keep` the two-class decision values (oriented to its positive class).
    """
    t0 = time.perf_counter()
    correct = total = 0
    sums = RegressionSums()
    # a precomputed kernel's rows (0:? then K(x, x_s) at index s) are read 0-based, as svm-predict reads them
    zero_based = zero_based or getattr(model, "zero_based", False)
    ds = open_dataset(test_path, zero_based=zero_based, stream=True, chunk_size=TEXT_CHUNK)
    try:
        if probability:
            out.write(model.probability_header() + "\n")
        # the bar: a text file's bytes (the reader counts them), a binary file's rows
        by_rows = progress is not None and not isinstance(ds, TextStream)
        if by_rows:
            size_bar(progress, getattr(ds, "n_rows", None), "rows")
        for block in ds.iter_blocks(max_bytes=BLOCK_BYTES, **({} if by_rows or progress is None else
                                                               {"progress": progress})):
            # the block as the model reads it (a hashed model: mapped to its 2^B hashed features), once
            rows = model.prepare(block)
            try:
                dec = model.decision_function(rows, prepared=True)
            except RowError as exc:     # a row the model cannot read (a precomputed kernel's): named by its line
                moved = exc.moved(getattr(block, "first_row", 0) or 0, display_name(test_path))
                raise row_error_at_line(test_path, moved, zero_based, note="") from None
            if probability:
                pred, prob = model.labels_and_probabilities(dec)
                fmt = "%g" + " %g" * prob.shape[1] + "\n"
                out.write("".join(fmt % (lab, *p) for lab, p in zip(pred.tolist(), prob.tolist())))
            else:
                pred = model.labels_from_decisions(dec)
                out.write(_format_column(pred))
            if dec_out is not None:
                dec_out.write(_format_rows(dec.reshape(block.n_rows, -1)))
            y = block.y
            total += block.n_rows
            correct += int(np.count_nonzero(pred == y))
            sums.add(pred, y)
            if evaluation is not None:
                evaluation.add(y, pred, _scores(model, dec, evaluation))
            if by_rows:
                progress.update(block.n_rows)
    finally:
        if hasattr(ds, "close"):
            ds.close()
    mse, scc = sums.scores()
    return {"n_rows": total, "correct": correct, "accuracy": 100.0 * correct / total if total else math.nan,
            "mean_squared_error": mse, "squared_correlation": scc, "predict_seconds": time.perf_counter() - t0}
