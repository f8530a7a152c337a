"""llsvm-predict: LIBLINEAR's `predict`, streaming the test data so memory does not grow with it."""
import json
import math
import sys
import time

import click
import numpy as np

from ..errors import LLSVMError, ModelFormatError
from ..fileutil import atomic_output
from ..io import open_dataset
from ..model import PROBABILITY, Model
from .common import InputOpenError, check_input, handle_errors, make_reporter

BLOCK_BYTES = 32 << 20


def _format_column(values):
    return "".join("%.17g\n" % v for v in values.tolist())


def _format_rows(dec):
    fmt = " ".join(["%.17g"] * dec.shape[1]) + "\n"
    return "".join(fmt % tuple(r) for r in dec.tolist())


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("test_file")
@click.argument("model_file")
@click.argument("output_file")
@click.option("-b", "probability", type=click.IntRange(0, 1), default=0, metavar="probability_estimates",
              help="Whether to output probability estimates, 0 or 1 (default 0); only for logistic regression.")
@click.option("-q", "quiet", is_flag=True, help="Quiet mode (no outputs).")
@click.option("--decision-values", "dec_file", default=None, metavar="FILE",
              help="Also write the raw decision values (one row per test row, nr_w values each).")
@click.option("--zero-based", is_flag=True, help="Text input has 0-based feature indices.")
@click.option("--json", "json_file", default=None, metavar="FILE", help="Write prediction metrics as JSON.")
@click.option("--progress/--no-progress", default=None, help="Progress bar on stderr.")
@handle_errors
def main(test_file, model_file, output_file, probability, quiet, dec_file, zero_based, json_file, progress):
    """Predict with a LIBLINEAR-format model: llsvm-predict [options] test_file model_file output_file."""
    reporter = make_reporter(quiet, progress)
    check_input(test_file)
    try:
        model = Model.load(model_file)
    except ModelFormatError as exc:
        if str(exc).startswith("can't open model file"):
            raise InputOpenError(f"can't open model file {model_file}") from None
        raise
    if probability and model.solver_type not in PROBABILITY:
        raise InputOpenError("probability output is only supported for logistic regression")
    t0 = time.perf_counter()
    correct = total = 0
    err = sum_v = sum_y = sum_vv = sum_yy = sum_vy = 0.0
    ds = open_dataset(test_file, zero_based=zero_based, stream=True)
    try:
        out_cm = _opening(output_file)
        dec_cm = _opening(dec_file) if dec_file else _Null()
        with out_cm as out, dec_cm as dout, reporter.bar(desc="predicting", unit="rows") as bar:
            if probability:
                out.write("labels" + "".join(f" {int(v)}" for v in model.label) + "\n")
            for block in ds.iter_blocks(max_bytes=BLOCK_BYTES):
                dec = model.decision_function(block)
                pred = model.labels_from_decisions(dec)
                if probability:
                    _, prob = model.predict_probability(block)
                    fmt = "%g" + " %g" * prob.shape[1] + "\n"
                    out.write("".join(fmt % (lab, *p) for lab, p in zip(pred.tolist(), prob.tolist())))
                else:
                    out.write(_format_column(pred))
                if dec_file:
                    dout.write(_format_rows(dec.reshape(block.n_rows, -1)))
                y = block.y
                total += block.n_rows
                correct += int(np.count_nonzero(pred == y))
                err += float(((pred - y) ** 2).sum())
                sum_v += float(pred.sum())
                sum_y += float(y.sum())
                sum_vv += float((pred * pred).sum())
                sum_yy += float((y * y).sum())
                sum_vy += float((pred * y).sum())
                bar.update(block.n_rows)
    finally:
        if hasattr(ds, "close"):
            ds.close()
    seconds = time.perf_counter() - t0
    if total == 0:
        raise LLSVMError(f"{test_file}: empty input: no data rows")
    result = {"n_rows": total, "predict_seconds": seconds}
    if model.is_regression:
        mse = err / total
        denom = (total * sum_vv - sum_v * sum_v) * (total * sum_yy - sum_y * sum_y)
        scc = ((total * sum_vy - sum_v * sum_y) ** 2 / denom) if denom else math.nan
        reporter.line(f"Mean squared error = {mse:g} (regression)")
        reporter.line(f"Squared correlation coefficient = {scc:g} (regression)")
        result.update(mean_squared_error=mse, squared_correlation=scc)
    else:
        acc = correct / total * 100
        reporter.line(f"Accuracy = {acc:g}% ({correct}/{total})")
        result.update(accuracy=acc, correct=correct)
    if json_file:
        with atomic_output(json_file, "w") as f:
            json.dump(result, f, indent=1)
            f.write("\n")


class _opening:
    """atomic_output(path) whose failure to create or write the file reads "can't open output file PATH"."""

    def __init__(self, path):
        self.path = path
        self.cm = atomic_output(path, "w")

    def __enter__(self):
        try:
            return self.cm.__enter__()
        except OSError:
            raise InputOpenError(f"can't open output file {self.path}") from None

    def __exit__(self, exc_type, exc, tb):
        try:
            return self.cm.__exit__(exc_type, exc, tb)
        except OSError:
            raise InputOpenError(f"can't open output file {self.path}") from None


class _Null:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def write(self, s):
        pass


if __name__ == "__main__":  # python -m llsvm.cli.predict
    main()
