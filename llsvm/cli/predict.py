"""llsvm-predict: LIBLINEAR's `predict` (and LIBSVM's `svm-predict` for a LIBSVM kernel model file), streaming the
test data so memory does not grow with it. The model reader and numpy are imported once the options are parsed
(--help and a usage error answer at once: issue 26)."""
import click

from ..errors import LLSVMError, ModelFormatError
from ..fileutil import atomic_output
from .jobs import batch_help
from ..options import MEASURE_HELP, PLOT_HELP
from .common import (InputOpenError, arm_kernel_stop, check_input, check_plot, check_writable, complete_path,
                     handle_errors, make_reporter, measure_names, os_errors, refuse_same_file, write_json, write_plot)
from .usage import version_option

@click.command(context_settings={"help_option_names": ["-h", "--help"]},
               epilog=batch_help("llsvm-predict"))
@click.argument("test_file", shell_complete=complete_path)
@click.argument("model_file", shell_complete=complete_path)
@click.argument("output_file", shell_complete=complete_path)
@click.option("-b", "probability", type=click.IntRange(0, 1), default=0, metavar="probability_estimates",
              help="Whether to output probability estimates, 0 or 1 (default 0); for logistic regression and LIBSVM "
                   "models trained with -b 1.")
@click.option("-q", "quiet", is_flag=True, help="Quiet mode (no outputs).")
@click.option("--decision-values", "dec_file", default=None, metavar="FILE",
              help="Also write the raw decision values (one row per test row: nr_w values for a linear model, "
                   "the k(k-1)/2 pairwise values of LIBSVM's svm_predict_values for a k-class kernel model).")
@click.option("--zero-based", is_flag=True,
              help="Text input has 0-based feature indices (implied by a precomputed kernel's model).")
@click.option("--json", "json_file", default=None, metavar="FILE",
              help="Write prediction metrics as JSON to FILE; '-': to stdout, which then holds the JSON alone.")
@click.option("--measure", "measures", default=None, metavar="NAME[,NAME...]", callback=measure_names,
              help=MEASURE_HELP)
@click.option("--plot", "plot_file", default=None, metavar="FILE.png", help=PLOT_HELP)
@click.option("--progress/--no-progress", default=None, help="Progress bar on stderr.")
@handle_errors
@version_option
def main(test_file, model_file, output_file, probability, quiet, dec_file, zero_based, json_file, measures, plot_file,
         progress):
    """Predict with a model file (LIBLINEAR's format, llsvm's hashed and tree models (-s h1tree), or LIBSVM's kernel
    models):
    llsvm-predict [options] test_file model_file output_file."""
    on_stdout = [what for what, path in (("output_file", output_file), ("--decision-values", dec_file),
                                         ("--json", json_file)) if path == "-"]
    if len(on_stdout) > 1:
        raise click.UsageError(f"{' and '.join(on_stdout)} are both '-': stdout can carry one of them")
    # stdout that carries data (the predictions, decision values or JSON) holds it alone: the Accuracy line and the
    # measures go to stderr
    reporter = make_reporter(quiet, progress, stdout_taken=bool(on_stdout))
    check_input(test_file)
    if json_file:
        check_writable(json_file, "JSON file")
    check_plot(plot_file)
    refuse_same_file([("output_file", output_file), ("--decision-values", dec_file), ("--json", json_file),
                      ("--plot", plot_file)], [("test_file", test_file), ("model_file", model_file)])
    arm_kernel_stop()               # a signal stops kernel prediction in the middle of a block from here on
    from ..models import load_model
    from ..predict import predict_file, printf_g
    try:
        model = load_model(model_file)
    except ModelFormatError as exc:
        if str(exc).startswith("can't open model file"):
            raise InputOpenError(f"can't open model file {model_file}") from None
        raise
    libsvm = model.report_style == "libsvm"
    if probability and not model.supports_probability:
        raise InputOpenError(model.probability_refusal)
    if libsvm and probability and model.is_regression:
        # svm-predict's note: an SVR model's probability model is a noise model; the predictions are the values
        reporter.line("Prob. model for test data: target value = predicted value + z,\n"
                      f"z: Laplace distribution e^(-|z|/sigma)/(2sigma),sigma={model.svr_probability:g}")
        probability = 0
    elif libsvm and not probability and model.supports_probability:
        reporter.line("Model supports probability estimates, but disabled in prediction.")
    evaluation = None
    if measures or plot_file:
        from ..measures import Evaluation, check_measures, model_labels
        labels = model_labels(model)
        check_measures(measures or (), model.is_regression, None if labels is None else len(labels))
        evaluation = Evaluation(labels, regression=model.is_regression,
                                keep=bool(plot_file) or "auc" in (measures or ()))
    out_cm = _opening(output_file)
    dec_cm = _opening(dec_file) if dec_file else _Null()
    with out_cm as out, dec_cm as dout, reporter.bar(desc="predicting", unit="rows") as bar:
        m = predict_file(model, test_file, out, dec_out=dout if dec_file else None, probability=bool(probability),
                         zero_based=zero_based, progress=bar, evaluation=evaluation)
    if m["n_rows"] == 0:
        raise LLSVMError(f"{test_file}: empty input: no data rows")
    result = {"n_rows": m["n_rows"], "predict_seconds": m["predict_seconds"]}
    if model.is_regression:
        # C's printf: a NaN with its sign bit set is "-nan"
        reporter.line(f"Mean squared error = {printf_g(m['mean_squared_error'])} (regression)")
        reporter.line(f"Squared correlation coefficient = {printf_g(m['squared_correlation'])} (regression)")
        result.update(mean_squared_error=m["mean_squared_error"], squared_correlation=m["squared_correlation"])
    elif libsvm:
        # svm-predict's line and its arithmetic (correct / total * 100)
        reporter.line(f"Accuracy = {m['correct'] / m['n_rows'] * 100:g}% ({m['correct']}/{m['n_rows']}) "
                      f"(classification)")
        result.update(accuracy=m["accuracy"], correct=m["correct"])
    else:
        # LIBLINEAR's arithmetic too ((double) correct / total * 100)
        reporter.line(f"Accuracy = {m['correct'] / m['n_rows'] * 100:g}% ({m['correct']}/{m['n_rows']})")
        result.update(accuracy=m["accuracy"], correct=m["correct"])
    if evaluation is not None:
        summary = evaluation.summary()
        for line in summary.lines(measures or ()):
            reporter.line(line)
        result.update(summary.json(measures or ()))
        if plot_file:
            write_plot(summary, plot_file, test_file)
    if json_file:
        write_json(json_file, result)


class _opening:
    """atomic_output(path) whose failure to create or write the file reads "can't open output file PATH"."""

    def __init__(self, path):
        self.cm = atomic_output(path, "w")
        self.errors = os_errors(f"can't open output file {path}")

    def __enter__(self):
        with self.errors:
            return self.cm.__enter__()

    def __exit__(self, exc_type, exc, tb):
        with self.errors:
            return self.cm.__exit__(exc_type, exc, tb)


class _Null:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def write(self, s):
        pass


if __name__ == "__main__":  # python -m llsvm.cli.predict
    main()
