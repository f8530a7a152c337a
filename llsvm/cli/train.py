"""llsvm-train: LIBLINEAR's `train`, option for option, plus llsvm's long options.

A thin command: read the options (llsvm/cli/declare.py, from the rows of llsvm/options.py), check them (the specs
and Params of llsvm/params.py), dispatch to the training layer (llsvm/solvers/trainer.py, grid.py), report. What a
solver takes, its defaults, checks, help and --json metrics are the rows' and the registry's, never this module's.

Start-up (issue 26): this module imports only what parsing the command line needs (click, the rows, the specs);
numpy, the kernels, the reader and the solver that runs are imported once the options are checked, so `--help` and
an option error answer at once, and a run imports one driver.
"""
import os
import re
import time
import warnings

import click

from ..options import OPTION
from .common import (arm_kernel_stop, check_input, check_plot, check_writable, complete_path, handle_errors,
                     os_errors, peak_rss_mb, refuse_same_file, write_json)
from .declare import (check_measure_task, check_strict, cv_command, find_C_command, grid_command, help_text,
                      initial_model, make_reporter, overflow_hint, read_request, read_training_rows, table_options)
from .jobs import batch_help
from .usage import CompactHelp, help_all_option, solver_lines, version_option

# NumPy's floating-point RuntimeWarnings (np.errstate's over, invalid, divide and under)
FLOATING_POINT_WARNINGS = r"(overflow|invalid value|divide by zero|underflow) encountered"


class LiblinearCommand(CompactHelp):
    """Click command that also understands LIBLINEAR's -wi weight options (-w1 5 -w-1 2) and LIBSVM's -h 0|1
    (shrinking; -h alone, or followed by anything but a number, is the help: CompactHelp's, llsvm/cli/usage.py)."""

    def parse_args(self, ctx, args):
        self.answer_help(ctx, args)
        out = []
        i = 0
        while i < len(args):
            a = args[i]
            if a == "--":
                out.extend(args[i:])
                break
            if a == "-h":
                # LIBSVM's -h 0|1 (shrinking, -s smo) when a number follows; otherwise help, as before
                if i + 1 < len(args) and re.fullmatch(r"[+-]?\d+", args[i + 1]):
                    out += ["--shrinking", args[i + 1]]
                    i += 2
                else:
                    out.append("--help")
                    i += 1
                continue
            m = re.fullmatch(r"-w([+-]?\d+)", a)
            if m:
                if i + 1 >= len(args):
                    raise click.UsageError(f"Option '{a}' requires a weight.", ctx=ctx)
                out += ["--weight", m.group(1), args[i + 1]]
                i += 2
                continue
            out.append(a)
            i += 1
        return super().parse_args(ctx, out)


def check_grid(req):
    """--grid's spec, parsed and checked for the solver (-t 4: no width); it may not give what -c, -g, --sigma give."""
    from ..errors import ParameterError
    from ..solvers.grid import grid_request
    try:
        _, grid = grid_request(req.grid, req.params, {})
    except ParameterError as exc:
        raise click.BadParameter(str(exc).removeprefix("--grid: "), param_hint="'--grid'") from None
    if "C" in grid and "-c" in req.given:
        raise click.BadParameter("it gives C: leave out -c", param_hint="'--grid'")
    if ("gamma" in grid or "sigma" in grid) and ("-g" in req.given or "--sigma" in req.given):
        raise click.BadParameter("it gives the kernel width: leave out -g and --sigma", param_hint="'--grid'")
    return grid


@click.command(cls=LiblinearCommand, no_args_is_help=True,
               context_settings={"help_option_names": ["--help"], "max_content_width": 80},
               epilog=solver_lines() + "\n\n" + help_text(OPTION["--weight"]) + "\n\n" + batch_help("llsvm-train"))
@click.argument("training_set_file", shell_complete=complete_path)
@click.argument("model_file", required=False, shell_complete=complete_path)
@table_options
@help_all_option
@version_option
@handle_errors
def main(training_set_file, model_file, **values):
    """Train a linear SVM, as LIBLINEAR's train, or a kernel SVM (-s smo), as LIBSVM's svm-train:
    llsvm-train [options] training_set_file [model_file]."""
    reporter = make_reporter(values, model_file)
    req = read_request(values, reporter.warning)
    grid = check_grid(req) if req.grid is not None else None
    check_input(training_set_file, pattern=req.dask is not None)
    if req.json_file:
        check_writable(req.json_file, "JSON file")
    check_plot(req.plot_file)
    if model_file is None:
        base = "stdin" if training_set_file == "-" else os.path.basename(training_set_file.rstrip("/"))
        model_file = base + ".model"
    written = None if grid is not None or req.find_C or req.nr_fold is not None else model_file   # -v, -C: none
    refuse_same_file([("model_file", written), ("--json", req.json_file), ("--plot", req.plot_file)],
                     req.inputs(training_set_file))
    # the options are good: now what the run needs (numpy, the kernels, the reader, the one solver)
    arm_kernel_stop()               # a signal stops a kernel in the middle of its loop from here on
    # NumPy's floating-point warnings never reach the user, from any thread: an extreme option value (-c 1e308)
    # overflows a certificate's sums to inf or nan, printed as such (as LIBLINEAR prints them); a model that is not
    # finite is refused when it is saved (model.save), and the solvers check what they must themselves
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=FLOATING_POINT_WARNINGS, category=RuntimeWarning)
        certificate = _run(req, grid, training_set_file, model_file, reporter)
    check_strict(req, certificate, model_file)


def _run(req, grid, training_set_file, model_file, reporter):
    """Train (streamed or loaded), or run -v, -C or --grid, and report; _finish's metrics of a model written."""
    from ..scale import scaling_note
    from ..solvers import trainer
    params, spec = req.params, req.spec
    opening = os_errors(f"can't open input file {training_set_file}", types=(IsADirectoryError,))
    t0 = time.perf_counter()
    found, warm = None, initial_model(req)      # -i's model: read and checked before the rows
    if req.dask is not None:        # on a cluster: the data stay on the storage the workers read
        from .cluster import train_command
        found = train_command(training_set_file, req, grid, reporter)
        if grid is None and req.nr_fold is None:
            return _finish(found, model_file, req, found.meta["shape"], 0.0, time.perf_counter() - t0)
    elif spec.streams and req.nr_fold is None:
        # streamed: the input is never held in memory as a whole
        desc, unit = spec.progress
        with reporter.bar(desc=desc, unit=unit) as bar, opening:
            reporter.warning(scaling_note(params, training_set_file, None, reporter.quiet))
            model = trainer.make_driver(params, reporter, zero_based=req.zero_based, progress=bar).fit(
                training_set_file, weight_file=req.weight_file, warm=warm)
        return _finish(model, model_file, req, None, 0.0, time.perf_counter() - t0)
    if found is None:
        with reporter.bar(desc="reading") as bar, opening:
            ds = read_training_rows(training_set_file, req, bar)
        reporter.warning(scaling_note(params, training_set_file, ds, reporter.quiet))
    else:                           # the cluster's grid, -v or -C: the rows, features and non-zeros it read
        ds = found.shape
    load_s = time.perf_counter() - t0 if found is None else 0.0
    t1 = time.perf_counter() if found is None else t0
    if req.measure and found is None:
        check_measure_task(req.measure, ds.y, params)
    if grid is not None:
        summary = grid_command(found, ds, grid, req, reporter)
    elif req.find_C:                # with --dask: the search ran on the cluster, its lines printed
        found = found or find_C_command(trainer.find_parameter_C, ds, req, reporter)
        text, summary = trainer.search_summary(found, params, req.measure[0] if req.measure else None)
        reporter.result(text)
        summary.update(getattr(found, "meta", {}))
    elif req.nr_fold is not None:
        summary = cv_command(found, ds, req, reporter, training_set_file)
    else:
        model = trainer.train(ds, reporter=reporter, params=params, warm=warm)
        return _finish(model, model_file, req, ds, load_s, time.perf_counter() - t1)
    summary.update({"measure": req.measure[0]} if req.measure else {})
    if req.json_file:
        write_json(req.json_file, {"solver": spec.solver_type if spec.number is not None else spec.name,
                                   "n_rows": ds.n_rows, "n_features": ds.n_features, "nnz": ds.nnz,
                                   "load_seconds": load_s, "train_seconds": time.perf_counter() - t1, **summary,
                                   "peak_rss_mb": peak_rss_mb()})


def metrics(model, ds, load_s, train_s, params):
    """The --json dict: the spec's metrics with the times and peak memory; it holds every DESIGN key."""
    from ..solvers import registry
    meta = model.meta or {}
    # a run on a cluster: the record its worker made (whole runs), and what ran where
    m = meta["metrics"] if "metrics" in meta else registry.metrics(params.spec)(model, params, ds)
    m.update(load_seconds=load_s, train_seconds=train_s, peak_rss_mb=peak_rss_mb())
    if "dask" in meta:
        m["dask"] = {k: v for k, v in meta["dask"].items() if k != "train_seconds"}
    missing = [k for k in registry.DESIGN_KEYS if k not in m]
    if missing:                           # a registry entry without them is a bug, caught by the contract test
        raise AssertionError(f"-s {params.spec.name} metrics lack {missing}")
    return m


def _finish(model, model_file, req, ds, load_s, train_s):
    """Save the model (atomically) and the metrics; a model that is not finite is refused, with the options to
    change. Returns the metrics when --json or --strict asks for them, else None."""
    from ..models import NonFiniteModelError
    params = req.params
    with os_errors(f"can't save model to file {model_file}"):
        try:
            model.save(model_file)
        except NonFiniteModelError as exc:
            raise exc.with_hint((model.meta or {}).get("nonfinite_hint") or overflow_hint(params)) from None
    m = metrics(model, ds, load_s, train_s, params) if req.json_file or req.strict else None
    if req.json_file:
        write_json(req.json_file, m)
    return m


if __name__ == "__main__":  # python -m llsvm.cli.train
    main()
