"""llsvm-train: LIBLINEAR's `train`, option for option, plus llsvm's long options.

Everything that depends on the solver comes from the registry (llsvm/solvers/registry.py): what -s takes, the
help text, which options apply to which solver, the default -e and --threads, how the input is read, and the
--json metrics.

Start-up (issue 26): this module imports only what parsing the command line needs (click, the registry's data);
numpy, the kernels, the reader and the solver that runs are imported by main once the options are checked, so
`--help` and an option error answer at once, and a run imports one driver.
"""
import math
import os
import re
import time
import warnings

import click

from ..errors import LLSVMError, ParameterError
from ..report import Reporter, write_standard
from ..solvers.registry import DESIGN_KEYS, INT_MAX, SOLVER_OPTIONS, Params, accepting, get, option_fields, specs
from .common import ParamError, arm_kernel_stop, check_input, handle_errors, os_errors


# NumPy's floating-point RuntimeWarnings (np.errstate's over, invalid, divide and under)
FLOATING_POINT_WARNINGS = r"(overflow|invalid value|divide by zero|underflow) encountered"


def _solver_lines():
    lines = ["\b", "Solvers (-s type):"]
    for s in specs():
        lines.append(f"   {s.name} -- {s.title}")
    return "\n".join(lines)


def _names(names):
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _eps_help():
    seen = {}
    for s in specs():
        seen.setdefault(s.eps_meaning, []).append(s.name)
    return "Tolerance of termination criterion: " + "; ".join(
        f"-s {_names(names)}: {meaning}" for meaning, names in seen.items()) + "."


def _defaults(attr):
    """ "-s 1 and 3: 300; -s 2: 1000; ..." for a spec field."""
    seen = {}
    for s in specs():
        seen.setdefault(getattr(s, attr), []).append(s.name)
    return "; ".join(f"-s {_names(names)}: {value}" for value, names in seen.items())


def _for(flag):
    return f"({accepting(flag)})"


class LiblinearCommand(click.Command):
    """Click command that also understands LIBLINEAR's -wi weight options (-w1 5 -w-1 2) and LIBSVM's -h 0|1
    (shrinking; -h alone, or followed by anything but a number, is the help)."""

    def parse_args(self, ctx, args):
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


def peak_rss_mb():
    import resource
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def write_json(path, data):
    import json
    from ..fileutil import atomic_output
    with os_errors(f"can't write JSON file {path}", detail=True, error=LLSVMError):
        with atomic_output(path, "w") as f:
            json.dump(data, f, indent=1, default=float)
            f.write("\n")


def check_writable(path, what):
    """Refuse early (before any work) an output path whose directory cannot take a new file."""
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory) or not os.access(directory, os.W_OK | os.X_OK) or os.path.isdir(path):
        raise LLSVMError(f"can't write {what} {path}: no such directory or not writable")


def _check_applicable(spec, given):
    """Refuse every solver option the spec does not take (exit 1, naming the option and the solvers that take it).
    -R is left to Params.check, which refuses it in LIBLINEAR's words."""
    for flag in SOLVER_OPTIONS:           # every solver option of the registry has its value here
        value = given[flag]
        if value is None or value is False or flag == "-R":
            continue
        if not spec.accepts_option(flag):
            if flag == "-C":
                raise ParamError(f"Warm-start parameter search only available for {accepting('-C')}")
            raise ParamError(f"{flag} applies only to {accepting(flag)}, not to -s {spec.name}")


def _h1_c(text):
    """--h1-c: inf or a number (checked >= 1 by the options)."""
    if text is None:
        return None
    if text.strip().lower() in ("inf", "infinity"):
        return math.inf
    try:
        return float(text)
    except ValueError:
        raise click.BadParameter(f"{text!r} is not inf or a number", param_hint="'--h1-c'") from None


def _rbf_depth(text):
    if text is None or text in ("auto", "none"):
        return text
    try:
        return int(text)
    except ValueError:
        raise click.BadParameter(f"{text!r} is not auto, none or a depth", param_hint="'--rbf-depth'") from None


def _options(spec, values):
    """The spec's options object from the values given on the command line (None: the dataclass default)."""
    if spec.options is None:
        return None
    names = option_fields(spec)
    return spec.options(**{k: v for k, v in values.items() if k in names and v is not None})


@click.command(cls=LiblinearCommand, context_settings={"help_option_names": ["--help"]},
               epilog=_solver_lines() + "\n\nWeights: -wi weight (e.g. -w1 5 -w-1 2) multiplies C of class i by "
               "weight.")
@click.argument("training_set_file")
@click.argument("model_file", required=False)
@click.option("-s", "solver", default=None, metavar="type",
              help="Set type of solver (default 1); the solvers are listed below.")
@click.option("-c", "cost", type=float, default=None, metavar="cost", help="Set the parameter C (default 1).")
@click.option("-p", "svr_p", type=float, default=None, metavar="epsilon",
              help=f"Epsilon of the SVR loss (default 0.1) {_for('-p')}.")
@click.option("-n", "nu", type=float, default=None, metavar="nu",
              help=f"Nu of the one-class SVM (default 0.5) {_for('-n')}.")
@click.option("-e", "eps", type=float, default=None, metavar="epsilon", help=_eps_help())
@click.option("-B", "bias", default="-1", metavar="bias",
              help="If bias >= 0, instance x becomes [x; bias]; if < 0, no bias term added (default -1). "
                   f"-B R: the bias value is the data radius max ||x_i|| {_for('-B R')}.")
@click.option("-R", "no_reg_bias", is_flag=True, help=f"Do not regularize the bias, with -B 1 {_for('-R')}.")
@click.option("--weight", "weights", type=(int, float), multiple=True, hidden=True)
@click.option("-v", "nr_fold", type=int, default=None, metavar="n", help="n-fold cross validation mode.")
@click.option("-C", "find_C", is_flag=True, help=f"Find the parameter C by cross validation {_for('-C')}.")
@click.option("-t", "kernel_type", type=int, default=None, metavar="kernel_type",
              help="Kernel: 0 linear u'v, 1 polynomial (gamma u'v + coef0)^degree, 2 radial basis function "
                   f"exp(-gamma |u-v|^2), 3 sigmoid tanh(gamma u'v + coef0) (default 2) {_for('-t')}.")
@click.option("-d", "degree", type=int, default=None, metavar="degree",
              help=f"Degree of the polynomial kernel (default 3) {_for('-d')}.")
@click.option("-g", "gamma", type=float, default=None, metavar="gamma",
              help=f"Gamma of the kernel (default 1/num_features) {_for('-g')}.")
@click.option("-r", "coef0", type=float, default=None, metavar="coef0",
              help=f"coef0 of the kernel (default 0) {_for('-r')}.")
@click.option("-m", "cache_size", type=float, default=None, metavar="cachesize",
              help=f"Kernel cache size in MB (default 100) {_for('-m')}.")
@click.option("--shrinking", "shrinking", type=int, default=None, metavar="shrinking",
              help=f"-h 0|1: whether to use the shrinking heuristics (default 1) {_for('-h')}; -h alone and "
                   "--help show this help.")
@click.option("--hard-class", type=click.Choice(["greedy", "alternate", "larger"]), default=None,
              help=f"Hard class of each node: greedy (train both, keep the one removing more rows; default), "
                   f"alternate (the larger class first), larger {_for('--hard-class')}.")
@click.option("--h1-c", "h1_c", default=None, metavar="inf|KAPPA",
              help=f"Box of the hard class: inf (default, the primal as printed) or KAPPA >= 1, C = KAPPA m_s / m_h "
                   f"{_for('--h1-c')}.")
@click.option("--min-remove", type=float, default=None, metavar="RHO",
              help=f"A node must remove at least max(1, RHO |S|) rows (default 0) {_for('--min-remove')}.")
@click.option("--max-depth", type=click.IntRange(min=1), default=None, metavar="N",
              help=f"Nodes per list at most (default 256) {_for('--max-depth')}.")
@click.option("--rbf-depth", default=None, metavar="auto|K|none",
              help="End every list in the RBF node (a -s smo model of all rows, kernel options -t -g -c ...): at "
                   "depth K, at the cheapest depth within --rbf-tol of the best validation accuracy (auto), or "
                   f"never (none, the default) {_for('--rbf-depth')}.")
@click.option("--rbf-select", type=click.Choice(["validation", "train"]), default=None,
              help=f"Where auto measures: a stratified 20 % split (default) or the training rows {_for('--rbf-select')}.")
@click.option("--rbf-tol", type=float, default=None, metavar="POINTS",
              help=f"Accuracy auto may give up for a cheaper depth (default 0.5) {_for('--rbf-tol')}.")
@click.option("--grid", "grid", default=None, metavar="SPEC",
              help="Cross-validation grid search (with -v n; 5 folds by default), e.g. --grid 'C=1e-4:1e4:9 "
                   "g=0.25,0.5,1,2': NAME=A:B:N is N values from A to B evenly spaced in log scale, NAME=V1,V2,... "
                   "a list; names C, g (gamma) or sigma. Prints the mean CV error and time of every cell and the "
                   f"best; writes no model {_for('--grid')}.")
@click.option("--sigma", type=float, default=None, metavar="SIGMA",
              help=f"Width of the Gaussian kernel exp(-|u-v|^2/(2 sigma^2)), instead of -g {_for('--sigma')}.")
@click.option("--epochs", type=int, default=None, metavar="N",
              help=f"Passes over the shuffled rows (default 1) {_for('--epochs')}.")
@click.option("--average", is_flag=True, default=None,
              help=f"The model is the mean of the iterates, not the last one {_for('--average')}.")
@click.option("--original", is_flag=True, default=None,
              help="The lists as printed: each output computed from the support vectors, no output cache (the "
                   f"paper's timing figures) {_for('--original')}.")
@click.option("--bias-update/--no-bias-update", "bias_update", default=None,
              help=f"Update the bias b on each violation (default on) {_for('--no-bias-update')}.")
@click.option("--eta0", type=float, default=None, metavar="ETA0",
              help=f"Kivinen's NORMA (with --eta0 and/or --lambda; default 1): step ETA0/sqrt(t), decay 1 - step "
                   "lambda (without both: the faithful list) "
                   f"{_for('--eta0')}.")
@click.option("--lambda", "lam", type=float, default=None, metavar="LAMBDA",
              help=f"Regularization lambda (default 1/(C l)) {_for('--lambda')}.")
@click.option("-k", "batch", type=int, default=None, metavar="k",
              help=f"Mini-batch size (default 1) {_for('-k')}.")
@click.option("--projection", is_flag=True, default=None,
              help=f"Project w onto the ball of radius 1/sqrt(lambda) after each step {_for('--projection')}.")
@click.option("--oned", type=click.Choice(["scan", "exact"]), default=None,
              help="The 1-D solver: the paper's sorted scan SVM1D (default) or the exact 1-D optimum (weighted-median "
                   f"bias, golden-section search) {_for('--oned')}.")
@click.option("--oned-norm", type=click.Choice(["unit", "paper"]), default=None,
              help="Project on the unit direction, so the loss is the primal objective of the model (default), or "
                   f"as the paper prints it {_for('--oned-norm')}.")
@click.option("--max-seconds", type=float, default=None, metavar="S",
              help=f"Stop each binary problem's search after S seconds {_for('--max-seconds')}.")
@click.option("--target-loss", type=float, default=None, metavar="LOSS",
              help=f"Stop once the loss is at most LOSS {_for('--target-loss')}.")
@click.option("-q", "quiet", is_flag=True, help="Quiet mode (no outputs).")
@click.option("--threads", type=click.IntRange(min=1), default=None,
              help="Threads for one-vs-rest classes and cross-validation folds (same model for any N). "
                   "-s streamsvm: 2 runs the reader and the trainer concurrently, 1 alternates them (deterministic "
                   "for a seed). -s smo, h1tree: OpenMP threads sharing each long kernel column (same model; they "
                   "pay only when the cores are idle, so one unless asked, as LIBSVM's svm-train). "
                   f"Default: {_defaults('default_threads')}; at most the number of CPUs (-s streamsvm: 2).")
@click.option("--seed", type=click.IntRange(min=0), default=1, help="Seed of the random number generator.")
@click.option("--max-iter", type=click.IntRange(min=1, max=INT_MAX), default=None,
              help="Iteration limit: outer iterations (passes of -s streamsvm, Newton iterations of -s 2). "
                   f"Default: {_defaults('default_max_iter')}.")
@click.option("--json", "json_file", default=None, metavar="FILE", help="Write training metrics as JSON.")
@click.option("--progress/--no-progress", default=None,
              help="Progress bars on stderr (default: when stderr is a terminal and not -q).")
@click.option("--zero-based", is_flag=True, help="Text input has 0-based feature indices.")
@click.option("--memory", default=None, metavar="SIZE",
              help=f"Budget for the training data, weight vectors and per-row state held in RAM, e.g. 64M, 2G {_for('--memory')}; "
              "default (and at most): the memory available.")
@click.option("--tmp-dir", default=None, metavar="DIR",
              help=f"Directory for temporary files {_for('--tmp-dir')}; default: the system's.")
@click.option("--inner-iter", type=click.IntRange(min=1, max=INT_MAX), default=None,
              help=f"Passes over each loaded block per outer iteration (default 5) {_for('--inner-iter')}.")
@click.option("--keep-active-set", default=None, metavar="DIR",
              help=f"Keep the final active-set files (binary format) in DIR {_for('--keep-active-set')}.")
@click.option("--hash-bits", type=click.IntRange(min=1, max=28), default=None, metavar="B",
              help=f"Hash features into 2^B signed buckets on the fly (a hashed model file) {_for('--hash-bits')}.")
@click.option("--inner-eps", type=float, default=None, metavar="EPS",
              help="Stopping tolerance inside: -s llsvm, the relative change of the dual per outer iteration of "
                   "block optimization (default 0.01); -s bm, the DCD run on each block (default 0.1).")
@click.option("--one-pass", is_flag=True,
              help="The paper's Algorithm 2 exactly: no re-check passes, the stopping rule is --inner-eps and the "
                   f"primal is not computed {_for('--one-pass')}.")
@click.option("--max-passes", type=click.IntRange(min=1, max=INT_MAX), default=None, metavar="N",
              help=f"Re-check passes at most (default 10) {_for('--max-passes')}.")
@handle_errors
def main(training_set_file, model_file, solver, cost, svr_p, nu, eps, bias, no_reg_bias, weights, nr_fold, find_C,
         kernel_type, degree, gamma, coef0, cache_size, shrinking, hard_class, h1_c, min_remove, max_depth,
         rbf_depth, rbf_select, rbf_tol, grid, sigma, epochs, average, original, bias_update, eta0, lam, batch,
         projection, oned, oned_norm, max_seconds, target_loss, quiet, threads, seed, max_iter, json_file,
         progress, zero_based, memory, tmp_dir, inner_iter, keep_active_set, hash_bits, inner_eps, one_pass,
         max_passes):
    """Train a linear SVM, as LIBLINEAR's train, or a kernel SVM (-s smo), as LIBSVM's svm-train:
    llsvm-train [options] training_set_file [model_file]."""
    reporter = Reporter(quiet=quiet, progress=progress)
    if nr_fold is not None and nr_fold < 2:
        raise click.UsageError("n-fold cross validation: n must >= 2")
    try:
        spec = get(solver if solver is not None else 1)
    except ParameterError as exc:
        if find_C:
            raise ParamError(f"Warm-start parameter search only available for {accepting('-C')}") from None
        raise ParamError(str(exc)) from None
    # LIBLINEAR's check_parameter words for -p and -n, before asking whether the solver takes them
    if svr_p is not None and not (svr_p >= 0 and math.isfinite(svr_p)):
        raise ParamError("p < 0" if svr_p < 0 else f"-p {svr_p}: p must be a finite number")
    if nu is not None and not (0 < nu <= 1):
        raise ParamError("nu <= 0 or nu > 1")
    radius_bias = bias.strip() in ("R", "r")
    _check_applicable(spec, {"-R": no_reg_bias, "-p": svr_p, "-n": nu, "-v": nr_fold, "-C": find_C, "--memory": memory,
                             "--tmp-dir": tmp_dir, "--inner-iter": inner_iter, "--keep-active-set": keep_active_set,
                             "--hash-bits": hash_bits, "--inner-eps": inner_eps, "-B R": radius_bias,
                             "--one-pass": one_pass, "--max-passes": max_passes, "-t": kernel_type, "-g": gamma,
                             "-d": degree, "-r": coef0, "-m": cache_size, "-h": shrinking,
                             "--hard-class": hard_class, "--h1-c": h1_c, "--min-remove": min_remove,
                             "--max-depth": max_depth, "--rbf-depth": rbf_depth, "--rbf-select": rbf_select,
                             "--rbf-tol": rbf_tol, "--grid": grid, "--sigma": sigma, "--epochs": epochs,
                             "--average": average, "--original": original,
                             "--no-bias-update": None if bias_update is None else "given", "--eta0": eta0,
                             "--lambda": lam, "-k": batch, "--projection": projection, "--oned": oned,
                             "--oned-norm": oned_norm, "--max-seconds": max_seconds, "--target-loss": target_loss})
    if one_pass:
        # the re-check passes are what -e and --max-passes control: with --one-pass they would do nothing
        for flag, value in (("-e", eps), ("--max-passes", max_passes)):
            if value is not None:
                raise ParamError(f"{flag} applies to the re-check passes, which --one-pass does not run (its "
                                 "stopping rule is --inner-eps)")
    if inner_eps is not None and not (inner_eps > 0 and math.isfinite(inner_eps)):
        raise click.BadParameter("must be a positive finite number", param_hint="'--inner-eps'")
    if radius_bias:
        bias = 1.0
    else:
        try:
            bias = float(bias)
        except ValueError:
            raise click.BadParameter(f"{bias!r} is not a number (or R with {accepting('-B R')})",
                                     param_hint="'-B'") from None
    try:
        budget = None
        if memory is not None:
            from ..memory import parse_size, within_available
            budget = within_available(parse_size(memory))
    except LLSVMError as exc:
        raise click.BadParameter(str(exc), param_hint="'--memory'") from None
    if tmp_dir is not None and not os.path.isdir(tmp_dir):
        raise click.BadParameter(f"{tmp_dir} is not a directory", param_hint="'--tmp-dir'")
    if find_C:
        if nr_fold is None:
            nr_fold = 5
        if solver is None:
            reporter.warning("Solver not specified. Using -s 2\n")
            spec = get(2)
    options = _options(spec, {"memory": budget, "tmp_dir": tmp_dir, "inner_iter": inner_iter,
                              "keep_active_set": keep_active_set, "radius_bias": radius_bias or None,
                              "hash_bits": hash_bits, "inner_eps": inner_eps, "one_pass": one_pass or None,
                              "max_passes": max_passes, "kernel_type": kernel_type, "gamma": gamma,
                              "degree": degree, "coef0": coef0, "cache_size": cache_size, "shrinking": shrinking,
                              "hard_class": hard_class, "h1_c": _h1_c(h1_c), "min_remove": min_remove,
                              "max_depth": max_depth, "rbf_depth": _rbf_depth(rbf_depth), "rbf_select": rbf_select,
                              "rbf_tol": rbf_tol, "sigma": sigma, "epochs": epochs, "average": average,
                              "original": original, "bias_update": bias_update, "eta0": eta0, "lam": lam,
                              "batch": batch, "projection": projection, "oned": oned, "oned_norm": oned_norm,
                              "max_seconds": max_seconds, "target_loss": target_loss})
    params = Params(solver=spec.key, C=1.0 if cost is None else cost, eps=eps, bias=bias, weights=list(weights),
                    regularize_bias=not no_reg_bias, max_iter=max_iter, seed=seed,
                    threads=spec.default_threads if threads is None else threads, options=options,
                    svr_p=0.1 if svr_p is None else svr_p, nu=0.5 if nu is None else nu)
    try:
        params.check()
    except ParameterError as exc:
        raise ParamError(str(exc)) from None

    grid_spec = None
    if grid is not None:
        from ..grid import parse_grid
        try:
            grid_spec = parse_grid(grid)
        except ParameterError as exc:
            raise click.BadParameter(str(exc).removeprefix("--grid: "), param_hint="'--grid'") from None
        if "C" in grid_spec and cost is not None:
            raise click.BadParameter("it gives C: leave out -c", param_hint="'--grid'")
        if ("gamma" in grid_spec or "sigma" in grid_spec) and (gamma is not None or sigma is not None):
            raise click.BadParameter("it gives the kernel width: leave out -g and --sigma", param_hint="'--grid'")
    check_input(training_set_file)
    if json_file:
        check_writable(json_file, "JSON file")
    if model_file is None:
        base = "stdin" if training_set_file == "-" else os.path.basename(training_set_file.rstrip("/"))
        model_file = base + ".model"
    opening = os_errors(f"can't open input file {training_set_file}", types=(IsADirectoryError,))
    # the options are good: now what the run needs (numpy, the kernels, the reader, the one solver)
    arm_kernel_stop()               # a signal stops a kernel in the middle of its loop from here on
    from ..io import read_dataset
    from ..textio import line_limit
    from ..trainer import cross_validation, find_parameter_C, make_driver, train
    # NumPy's floating-point warnings never reach the user, from any thread: an extreme option value (-c 1e308)
    # overflows a certificate's sums to inf or nan, printed as such (as LIBLINEAR prints them); a model that is not
    # finite is refused when it is saved (model.save), and the solvers check what they must themselves
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=FLOATING_POINT_WARNINGS, category=RuntimeWarning)
        t0 = time.perf_counter()
        if spec.streams and nr_fold is None:
            # streamed: the input is never held in memory as a whole
            with reporter.bar(desc=spec.progress_desc, unit=spec.progress_unit) as bar, opening:
                model = make_driver(params, reporter, zero_based=zero_based, progress=bar).fit(training_set_file)
            _finish(model, model_file, json_file, None, 0.0, time.perf_counter() - t0, params)
            return
        with reporter.bar(desc="reading") as bar, opening:
            ds = read_dataset(training_set_file, zero_based=zero_based, progress=bar, max_line=line_limit(budget),
                              class_labels=params.spec.class_labels)
        load_s = time.perf_counter() - t0
        name = spec.solver_type if spec.number is not None else spec.name

        if grid is not None:
            from ..grid import grid_search, grid_table
            t1 = time.perf_counter()
            result = grid_search(ds, nr_fold or 5, grid_spec, reporter=reporter, params=params)
            _stdout(grid_table(result))
            if json_file:
                write_json(json_file, {"solver": name, "n_rows": ds.n_rows, "n_features": ds.n_features, "nnz": ds.nnz,
                                       "load_seconds": load_s, "train_seconds": time.perf_counter() - t1,
                                       "nr_fold": result.nr_fold, "cells": result.cells, "best": result.best,
                                       "peak_rss_mb": peak_rss_mb()})
            return
        if find_C:
            _stdout(f"Doing parameter search with {nr_fold}-fold cross validation.\n")
            t1 = time.perf_counter()
            found = find_parameter_C(ds, nr_fold, start_C=cost, start_p=svr_p, reporter=reporter, params=params)
            if spec.task == "regression":
                best_C, best_p, best_mse = found
                _stdout(f"Best C = {best_C:g} Best p = {best_p:g}  CV MSE = {best_mse:g}\n")
                result = {"best_C": best_C, "best_p": best_p, "cv_mse": best_mse}
            else:
                best_C, best_rate = found
                _stdout(f"Best C = {best_C:g}  CV accuracy = {100.0 * best_rate:g}%\n")
                result = {"best_C": best_C, "cv_accuracy": 100.0 * best_rate}
            if json_file:
                write_json(json_file, {"solver": name, "n_rows": ds.n_rows, "n_features": ds.n_features, "nnz": ds.nnz,
                                       "load_seconds": load_s, "train_seconds": time.perf_counter() - t1, **result,
                                       "peak_rss_mb": peak_rss_mb()})
            return
        if nr_fold is not None:
            t1 = time.perf_counter()
            target = cross_validation(ds, nr_fold, reporter=reporter, params=params)
            if spec.task == "regression":
                from ..predict import regression_scores
                mse, scc = regression_scores(target, ds.y)
                _stdout(f"Cross Validation Mean squared error = {mse:g}\n"
                        f"Cross Validation Squared correlation coefficient = {scc:g}\n")
                result = {"cv_mse": mse, "cv_squared_correlation": scc}
            else:
                acc = 100.0 * float((target == ds.y).sum()) / ds.n_rows
                _stdout(f"Cross Validation Accuracy = {acc:g}%\n")
                result = {"cv_accuracy": acc}
            if json_file:
                write_json(json_file, {"solver": name, "n_rows": ds.n_rows, "n_features": ds.n_features, "nnz": ds.nnz,
                                       "load_seconds": load_s, "train_seconds": time.perf_counter() - t1,
                                       "nr_fold": nr_fold, **result, "peak_rss_mb": peak_rss_mb()})
            return
        t1 = time.perf_counter()
        model = train(ds, reporter=reporter, params=params)
        _finish(model, model_file, json_file, ds, load_s, time.perf_counter() - t1, params)


def metrics(model, ds, load_s, train_s, params):
    """The --json dict: the spec's metrics with the times and peak memory; it holds every DESIGN key."""
    m = params.spec.metrics(model, params, ds)
    m.update(load_seconds=load_s, train_seconds=train_s, peak_rss_mb=peak_rss_mb())
    missing = [k for k in DESIGN_KEYS if k not in m]
    if missing:                           # a registry entry without them is a bug, caught by the contract test
        raise AssertionError(f"-s {params.spec.name} metrics lack {missing}")
    return m


# the solver options that scale a model's numbers (kernel values, steps, box)
_SCALING = ("-g", "-d", "-r", "--sigma", "--eta0", "--lambda", "--h1-c")


def _overflow_hint(params):
    """What to change when a model is not finite: the options given that scale its numbers (-c, -wi, -B, -p, -n and
    the solver's own, _SCALING, when they differ from their defaults), else the data's scale."""
    given = []
    if params.C != 1.0:
        given.append(f"-c {params.C:g}")
    given += [f"-w{label} {weight:g}" for label, weight in params.weights]
    if params.bias >= 0 and not (params.spec.free_bias and params.bias == 1.0):
        given.append(f"-B {params.bias:g}")
    if params.spec.task == "regression" and params.svr_p != 0.1:
        given.append(f"-p {params.svr_p:g}")
    if params.spec.task == "oneclass" and params.nu != 0.5:
        given.append(f"-n {params.nu:g}")
    opts = params.options
    if opts is not None:
        defaults = type(opts)()
        names = option_fields(params.spec)
        for flag in _SCALING:
            name = SOLVER_OPTIONS[flag]
            value = getattr(opts, name, None) if name in names else None
            if isinstance(value, (int, float)) and not isinstance(value, bool) and value != getattr(defaults, name):
                given.append(f"{flag} {value:g}")
    if not given:
        return "the data's values make it overflow: scale the features"
    return f"the options make it overflow: change {' or '.join(given)}"


def _finish(model, model_file, json_file, ds, load_s, train_s, params):
    """Save the model (atomically) and the metrics; a model that is not finite is refused, with the options to
    change."""
    from ..model import NonFiniteModelError
    with os_errors(f"can't save model to file {model_file}"):
        try:
            model.save(model_file)
        except NonFiniteModelError as exc:
            raise exc.with_hint(_overflow_hint(params)) from None
    if json_file:
        write_json(json_file, metrics(model, ds, load_s, train_s, params))


def _stdout(s):
    write_standard("stdout", s)


if __name__ == "__main__":  # python -m llsvm.cli.train
    main()
