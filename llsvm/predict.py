"""Prediction over a stream of blocks: memory stays at one block whatever the size of the test data."""
import math
import time

import numpy as np

from .io import open_dataset

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


def squared_correlation(n, sum_v, sum_y, sum_vv, sum_yy, sum_vy):
    """LIBLINEAR's squared correlation coefficient of n predictions v and targets y from their sums (NaN where its
    division is by zero)."""
    denom = (n * sum_vv - sum_v * sum_v) * (n * sum_yy - sum_y * sum_y)
    return ((n * sum_vy - sum_v * sum_y) ** 2 / denom) if denom else math.nan


def regression_scores(v, y):
    """(mean squared error, squared correlation coefficient) of predictions v for targets y, LIBLINEAR's."""
    v = np.asarray(v, np.float64)
    y = np.asarray(y, np.float64)
    scc = squared_correlation(y.size, float(v.sum()), float(y.sum()), float(v @ v), float(y @ y), float(v @ y))
    return float(((v - y) ** 2).sum()) / y.size, float(scc)


def predict_file(model, test_path, out, *, dec_out=None, probability=False, zero_based=False, progress=None):
    """Predict every row of a text or binary test file with any model (the BaseModel interface), LIBLINEAR's
    predict style.

    Writes one label per row to the text stream `out` (`%.17g`; with `probability`, the model's header line
    (LIBLINEAR's and svm-predict's `labels ...`, svm-predict's `label normal outlier` for one-class) and
    `label p1 p2 ...` lines in `%g`), the decision values to `dec_out` when given, and returns the metrics:
    n_rows, correct, accuracy (%), mean_squared_error, squared_correlation, predict_seconds.
    """
    t0 = time.perf_counter()
    correct = total = 0
    err = sum_v = sum_y = sum_vv = sum_yy = sum_vy = 0.0
    ds = open_dataset(test_path, zero_based=zero_based, stream=True, chunk_size=TEXT_CHUNK)
    try:
        if probability:
            out.write(model.probability_header() + "\n")
        for block in ds.iter_blocks(max_bytes=BLOCK_BYTES):
            # the block as the model reads it (a hashed model: mapped to its 2^B hashed features), once
            rows = model.prepare(block)
            dec = model.decision_function(rows, prepared=True)
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
            err += float(((pred - y) ** 2).sum())
            sum_v += float(pred.sum())
            sum_y += float(y.sum())
            sum_vv += float((pred * pred).sum())
            sum_yy += float((y * y).sum())
            sum_vy += float((pred * y).sum())
            if progress is not None:
                progress.update(block.n_rows)
    finally:
        if hasattr(ds, "close"):
            ds.close()
    return {"n_rows": total, "correct": correct, "accuracy": 100.0 * correct / total if total else math.nan,
            "mean_squared_error": err / total if total else math.nan,
            "squared_correlation": squared_correlation(total, sum_v, sum_y, sum_vv, sum_yy, sum_vy),
            "predict_seconds": time.perf_counter() - t0}
