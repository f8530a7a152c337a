"""llsvm-train: LIBLINEAR's `train`, option for option, plus llsvm's long options."""
import json
import os
import re
import resource
import sys
import time

import click

from ..errors import LLSVMError, ParameterError
from ..fileutil import atomic_output
from ..io import read_dataset
from ..linear import IMPLEMENTED, IMPLEMENTED_TEXT, OUT_OF_CORE as OUT_OF_CORE_SOLVERS, Params, cross_validation, \
    find_parameter_C, train
from ..onepass import DEFAULT_INNER_ITER, LLSVM, LLSVMOptions, parse_size
from ..streaming import BM, DEFAULT_INNER_EPS, STREAMSVM, StreamOptions
from ..solvers import SOLVER_NAMES
from .common import InputOpenError, ParamError, check_input, handle_errors, make_reporter

LIBLINEAR_SOLVERS = {0, 1, 2, 3, 4, 5, 6, 7, 11, 12, 13, 21}
NAMED_SOLVERS = {"llsvm", "streamsvm", "bm", "h1tree", "project1d", "local1d", "olsvm", "norma", "pegaz", "pegasos"}
OUT_OF_CORE = "-s llsvm, -s streamsvm and -s bm"

USAGE_SOLVERS = """\b
-s type : set type of solver (default 1)
   1 -- L2-regularized L2-loss support vector classification (dual)
   2 -- L2-regularized L2-loss support vector classification (primal)
   3 -- L2-regularized L1-loss support vector classification (dual)
   llsvm -- one-pass harsh shrinking + block optimization of the -s 3 problem, out of core (default -e 0.01)
   streamsvm -- reader/trainer dual cached loops for the -s 3 problem, out of core (default -e 0.001)
   bm -- block minimization for the -s 3 problem, out of core (default -e 0.001, relative dual change)
  (LIBLINEAR's other numbers and llsvm's other named solvers: not implemented yet)"""


class LiblinearCommand(click.Command):
    """Click command that also understands LIBLINEAR's -wi weight options (-w1 5 -w-1 2)."""

    def parse_args(self, ctx, args):
        out = []
        i = 0
        while i < len(args):
            a = args[i]
            if a == "--":
                out.extend(args[i:])
                break
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


def parse_solver(value):
    """The solver number of -s VALUE, or ParamError."""
    v = str(value).strip()
    if v.lstrip("-").isdigit():
        n = int(v)
        if n in IMPLEMENTED:
            return n
        if n in LIBLINEAR_SOLVERS:
            raise ParamError(f"unknown solver type {n}: LIBLINEAR's -s {n} is not implemented in llsvm yet "
                             f"(implemented: {IMPLEMENTED_TEXT})")
        raise ParamError("unknown solver type")
    if v in (LLSVM, STREAMSVM, BM):
        return v
    if v in NAMED_SOLVERS:
        raise ParamError(f"unknown solver type {v}: not implemented yet (implemented: {IMPLEMENTED_TEXT})")
    raise ParamError("unknown solver type")


def peak_rss_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def metrics(model, ds, load_s, train_s, params):
    res = model.meta["results"]
    if params.solver == LLSVM:
        return llsvm_metrics(model, load_s, train_s, params)
    if params.solver in (STREAMSVM, BM):
        return stream_metrics(model, load_s, train_s, params)
    return {
        "solver": SOLVER_NAMES[params.solver], "solver_number": params.solver,
        "n_rows": ds.n_rows, "n_features": ds.n_features, "nnz": ds.nnz,
        "load_seconds": load_s, "train_seconds": train_s,
        "n_iter": max(r.n_iter for r in res), "primal": sum(r.primal for r in res),
        "dual": sum(r.dual for r in res), "gap": sum(r.gap for r in res),
        "max_violation": max(r.max_violation for r in res), "nSV": sum(r.nSV for r in res),
        "converged": all(r.converged for r in res), "peak_rss_mb": peak_rss_mb(),
        "C": params.C, "eps": params.eps, "bias": params.bias, "seed": params.seed, "threads": params.threads,
        "nr_class": model.nr_class, "labels": [int(v) for v in model.label],
        "classes": [{"label": int(model.label[k]) if len(res) > 1 else None, "n_iter": r.n_iter,
                     "primal": r.primal, "dual": r.dual, "gap": r.gap, "max_violation": r.max_violation,
                     "nSV": r.nSV, "converged": r.converged} for k, r in enumerate(res)],
    }


def llsvm_metrics(model, load_s, train_s, params):
    """-s llsvm never holds the data, so the primal, gap and violation (a full pass each) are null."""
    res = model.meta["results"]
    info = model.meta["llsvm"]
    per = [{"label": int(model.label[k]) if len(res) > 1 else None, "n_iter": r.n_iter, "dual": r.dual,
            "nSV": r.nSV, "converged": r.converged, "active_first_pass": r.extra["active_first_pass"],
            "active": r.extra["active"], "dual_trace": r.extra["dual_trace"], "blocks": r.extra["blocks"],
            "seconds": r.extra["seconds"]} for k, r in enumerate(res)]
    o = params.llsvm
    return {
        "solver": "llsvm", "model_solver_type": model.solver_type,
        "n_rows": info["n_rows"], "n_features": info["n_features"], "nnz": info["nnz"],
        "load_seconds": load_s, "train_seconds": train_s, "first_pass_seconds": info["first_pass_seconds"],
        "n_iter": max(r.n_iter for r in res), "primal": None, "dual": sum(r.dual for r in res), "gap": None,
        "max_violation": None, "nSV": sum(r.nSV for r in res), "converged": all(r.converged for r in res),
        "peak_rss_mb": peak_rss_mb(), "C": params.C, "eps": params.eps, "bias": info["bias"], "seed": params.seed,
        "threads": params.threads, "memory": o.memory, "inner_iter": o.inner_iter,
        "active_first_pass": sum(r.extra["active_first_pass"] for r in res),
        "blocks": max((max(r.extra["blocks"]) if r.extra["blocks"] else 0) for r in res),
        "nr_class": model.nr_class, "labels": [int(v) for v in model.label], "classes": per,
    }


def stream_metrics(model, load_s, train_s, params):
    """-s streamsvm: per-pass records (dual, streamed primal, gap, cache fill, evictions, rates); -s bm: the dual
    after every block. Neither holds the data: -s streamsvm's primal, gap and max_violation are those its last
    pass streamed for the model it returns (null when it stopped at --max-iter); -s bm's are null."""
    res = model.meta["results"]
    info = model.meta["stream"]
    o = params.stream
    streamsvm = params.solver == STREAMSVM
    per = []
    for k, r in enumerate(res):
        d = {"label": int(model.label[k]) if len(res) > 1 else None, "n_iter": r.n_iter, "dual": r.dual,
             "nSV": r.nSV, "converged": r.converged}
        if streamsvm:
            d.update({"primal": r.primal, "gap": r.gap, "max_violation": r.max_violation, **r.extra})
        else:
            d.update(r.extra)
        per.append(d)

    def total(key):
        vals = [getattr(r, key) for r in res]
        return None if any(v is None or v != v for v in vals) else sum(vals)
    return {
        "solver": params.solver, "model_solver_type": model.solver_type,
        "n_rows": info["n_rows"], "n_features": info["n_features"], "nnz": info["nnz"],
        "load_seconds": load_s, "train_seconds": train_s,
        "n_iter": max(r.n_iter for r in res), "primal": total("primal"), "dual": sum(r.dual for r in res),
        "gap": total("gap"), "max_violation": (None if any(r.max_violation is None for r in res)
                                               else max(r.max_violation for r in res)) if streamsvm else None,
        "nSV": sum(r.nSV for r in res), "converged": all(r.converged for r in res), "peak_rss_mb": peak_rss_mb(),
        "C": params.C, "eps": params.eps, "bias": params.bias, "seed": params.seed, "threads": params.threads,
        "memory": o.memory, "hash_bits": o.hash_bits, "inner_eps": None if streamsvm else o.inner_eps,
        "nr_class": model.nr_class, "labels": [int(v) for v in model.label],
        # the per-pass (streamsvm) or per-block (bm) records of a two-class problem, also under "classes"
        ("passes" if streamsvm else "trace"): per[0]["passes" if streamsvm else "trace"] if len(per) == 1 else None,
        "classes": per,
    }


def write_json(path, data):
    try:
        with atomic_output(path, "w") as f:
            json.dump(data, f, indent=1, default=float)
            f.write("\n")
    except OSError as exc:
        raise LLSVMError(f"can't write JSON file {path}: {exc.strerror or exc}") from None


def check_writable(path, what):
    """Refuse early (before any work) an output path whose directory cannot take a new file."""
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory) or not os.access(directory, os.W_OK | os.X_OK) or os.path.isdir(path):
        raise LLSVMError(f"can't write {what} {path}: no such directory or not writable")


@click.command(cls=LiblinearCommand, context_settings={"help_option_names": ["-h", "--help"]},
               epilog="Weights: -wi weight (e.g. -w1 5 -w-1 2) multiplies C of class i by weight.")
@click.argument("training_set_file")
@click.argument("model_file", required=False)
@click.option("-s", "solver", default=None, metavar="type", help="Solver: 1 (default), 2 or 3; see below.")
@click.option("-c", "cost", type=float, default=None, metavar="cost", help="Set the parameter C (default 1).")
@click.option("-p", "svr_p", type=float, default=0.1, metavar="epsilon",
              help="Epsilon of the SVR loss (default 0.1; used only by regression solvers).")
@click.option("-n", "nu", type=float, default=0.5, metavar="nu",
              help="Nu of the one-class SVM (default 0.5; used only by -s 21).")
@click.option("-e", "eps", type=float, default=None, metavar="epsilon",
              help="Tolerance of termination criterion: -s 1 and 3 dual maximal violation (default 0.1); "
                   "-s 2 |f'(w)|_2 <= eps*min(pos,neg)/l*|f'(w0)|_2 (default 0.01).")
@click.option("-B", "bias", default="-1", metavar="bias",
              help="If bias >= 0, instance x becomes [x; bias]; if < 0, no bias term added (default -1). "
                   "-s llsvm also takes -B R: the bias value is the data radius max ||x_i||.")
@click.option("-R", "no_reg_bias", is_flag=True, help="Do not regularize the bias (with -B 1, for -s 2).")
@click.option("--weight", "weights", type=(int, float), multiple=True, hidden=True)
@click.option("-v", "nr_fold", type=int, default=None, metavar="n", help="n-fold cross validation mode.")
@click.option("-C", "find_C", is_flag=True, help="Find the parameter C (-s 1, 2 and 3) by cross validation.")
@click.option("-q", "quiet", is_flag=True, help="Quiet mode (no outputs).")
@click.option("--threads", type=click.IntRange(min=1), default=None,
              help="Threads for one-vs-rest classes and cross-validation folds (same model for any N; default 1). "
                   "-s streamsvm: 2 (default) runs the reader and the trainer concurrently, 1 alternates them "
                   "(deterministic for a seed).")
@click.option("--seed", type=click.IntRange(min=0), default=1, help="Seed of the random number generator.")
@click.option("--max-iter", type=click.IntRange(min=1), default=None,
              help="Outer iterations of the dual solvers (default 300) / Newton iterations of -s 2 (1000).")
@click.option("--json", "json_file", default=None, metavar="FILE", help="Write training metrics as JSON.")
@click.option("--progress/--no-progress", default=None,
              help="Progress bars on stderr (default: when stderr is a terminal and not -q).")
@click.option("--zero-based", is_flag=True, help="Text input has 0-based feature indices.")
@click.option("--memory", default=None, metavar="SIZE",
              help=f"Budget for training data held in RAM, e.g. 64M, 2G ({OUT_OF_CORE} only; default: no limit).")
@click.option("--tmp-dir", default=None, metavar="DIR",
              help=f"Directory for temporary files ({OUT_OF_CORE} only; default: the system's).")
@click.option("--inner-iter", type=click.IntRange(min=1), default=None,
              help="-s llsvm: passes over each loaded block per outer iteration (default 5).")
@click.option("--keep-active-set", default=None, metavar="DIR",
              help="-s llsvm: keep the final active-set files (binary format) in DIR.")
@click.option("--hash-bits", type=click.IntRange(min=1, max=28), default=None, metavar="B",
              help="-s streamsvm, -s bm: hash features into 2^B signed buckets on the fly (a hashed model file).")
@click.option("--inner-eps", type=float, default=None, metavar="EPS",
              help=f"-s bm: stopping tolerance of the DCD run on each block (default {DEFAULT_INNER_EPS:g}).")
@handle_errors
def main(training_set_file, model_file, solver, cost, svr_p, nu, eps, bias, no_reg_bias, weights, nr_fold, find_C,
         quiet, threads, seed, max_iter, json_file, progress, zero_based, memory, tmp_dir, inner_iter,
         keep_active_set, hash_bits, inner_eps):
    """Train a linear SVM, as LIBLINEAR's train: llsvm-train [options] training_set_file [model_file]."""
    reporter = make_reporter(quiet, progress)
    say = (lambda s: None) if quiet else _stdout
    warn = _stderr
    if nr_fold is not None and nr_fold < 2:
        raise click.UsageError("n-fold cross validation: n must >= 2")
    try:
        solver_no = parse_solver(solver) if solver is not None else 1
    except ParamError:
        if find_C and solver is not None:
            raise click.UsageError("Warm-start parameter search only available for -s 1, -s 2 and -s 3") from None
        raise
    is_llsvm = solver_no == LLSVM
    out_of_core = solver_no in OUT_OF_CORE_SOLVERS
    if not out_of_core:
        for opt, val in (("--memory", memory), ("--tmp-dir", tmp_dir)):
            if val is not None:
                raise click.UsageError(f"{opt} applies only to the out-of-core solvers ({OUT_OF_CORE}), "
                                       f"not to -s {solver_no}")
    if not is_llsvm:
        for opt, val in (("--inner-iter", inner_iter), ("--keep-active-set", keep_active_set)):
            if val is not None:
                raise click.UsageError(f"{opt} applies only to -s llsvm, not to -s {solver_no}")
    if hash_bits is not None and solver_no not in (STREAMSVM, BM):
        raise click.UsageError(f"--hash-bits applies only to -s streamsvm and -s bm, not to -s {solver_no}")
    if inner_eps is not None:
        if solver_no != BM:
            raise click.UsageError(f"--inner-eps applies only to -s bm, not to -s {solver_no}")
        if not inner_eps > 0:
            raise click.BadParameter("must be positive", param_hint="'--inner-eps'")
    if threads is None:
        threads = 2 if solver_no == STREAMSVM else 1
    radius_bias = bias.strip() in ("R", "r")
    if radius_bias:
        if not is_llsvm:
            raise click.UsageError("-B R (bias value = data radius) applies only to -s llsvm")
        bias = 1.0
    else:
        try:
            bias = float(bias)
        except ValueError:
            raise click.BadParameter(f"{bias!r} is not a number (or R with -s llsvm)", param_hint="'-B'") from None
    if find_C and out_of_core:
        raise click.UsageError("Warm-start parameter search only available for -s 1, -s 2 and -s 3")
    options = stream_options = None
    if out_of_core:
        try:
            budget = None if memory is None else parse_size(memory)
        except LLSVMError as exc:
            raise click.BadParameter(str(exc), param_hint="'--memory'") from None
        if tmp_dir is not None and not os.path.isdir(tmp_dir):
            raise click.BadParameter(f"{tmp_dir} is not a directory", param_hint="'--tmp-dir'")
        if is_llsvm:
            options = LLSVMOptions(memory=budget, inner_iter=inner_iter or DEFAULT_INNER_ITER, tmp_dir=tmp_dir,
                                   keep_active_set=keep_active_set, radius_bias=radius_bias)
        else:
            stream_options = StreamOptions(memory=budget, tmp_dir=tmp_dir, hash_bits=hash_bits,
                                           inner_eps=DEFAULT_INNER_EPS if inner_eps is None else inner_eps)
    if find_C:
        if nr_fold is None:
            nr_fold = 5
        if solver is None:
            warn("Solver not specified. Using -s 2\n")
            solver_no = 2
    params = Params(solver=solver_no, C=1.0 if cost is None else cost, eps=eps, bias=bias,
                    weights=list(weights), regularize_bias=not no_reg_bias, max_iter=max_iter, seed=seed,
                    threads=threads, llsvm=options, stream=stream_options)
    try:
        params.check()
    except ParameterError as exc:
        raise ParamError(str(exc)) from None

    check_input(training_set_file)
    if json_file:
        check_writable(json_file, "JSON file")
    if model_file is None:
        base = "stdin" if training_set_file == "-" else os.path.basename(training_set_file.rstrip("/"))
        model_file = base + ".model"
    t0 = time.perf_counter()
    if out_of_core and nr_fold is None:
        # streamed: the input is never held in memory as a whole
        from ..linear import one_pass_solver
        with reporter.bar(desc="first pass" if is_llsvm else "reading", unit="rows" if solver_no == STREAMSVM
                          else "B") as bar:
            solver_obj = one_pass_solver(params, say, progress=bar, zero_based=zero_based, warn=warn)
            try:
                model = solver_obj.fit(training_set_file)
            except IsADirectoryError:
                raise InputOpenError(f"can't open input file {training_set_file}") from None
        _finish(model, model_file, json_file, None, 0.0, time.perf_counter() - t0, params)
        return
    try:
        with reporter.bar(desc="reading") as bar:
            ds = read_dataset(training_set_file, zero_based=zero_based, progress=bar)
    except IsADirectoryError:
        raise InputOpenError(f"can't open input file {training_set_file}") from None
    load_s = time.perf_counter() - t0

    if find_C:
        _stdout(f"Doing parameter search with {nr_fold}-fold cross validation.\n")
        t1 = time.perf_counter()
        best_C, best_rate = find_parameter_C(ds, nr_fold, start_C=cost, say=say, warn=warn, params=params)
        _stdout(f"Best C = {best_C:g}  CV accuracy = {100.0 * best_rate:g}%\n")
        if json_file:
            write_json(json_file, {"solver": SOLVER_NAMES.get(solver_no, str(solver_no)), "n_rows": ds.n_rows,
                                   "n_features": ds.n_features, "nnz": ds.nnz, "load_seconds": load_s,
                                   "train_seconds": time.perf_counter() - t1, "best_C": best_C,
                                   "cv_accuracy": 100.0 * best_rate, "peak_rss_mb": peak_rss_mb()})
        return
    if nr_fold is not None:
        t1 = time.perf_counter()
        target = cross_validation(ds, nr_fold, say=say, warn=warn, params=params)
        acc = 100.0 * float((target == ds.y).sum()) / ds.n_rows
        _stdout(f"Cross Validation Accuracy = {acc:g}%\n")
        if json_file:
            write_json(json_file, {"solver": SOLVER_NAMES.get(solver_no, str(solver_no)), "n_rows": ds.n_rows,
                                   "n_features": ds.n_features, "nnz": ds.nnz, "load_seconds": load_s,
                                   "train_seconds": time.perf_counter() - t1, "nr_fold": nr_fold,
                                   "cv_accuracy": acc, "peak_rss_mb": peak_rss_mb()})
        return
    t1 = time.perf_counter()
    model = train(ds, say=say, warn=warn, params=params)
    _finish(model, model_file, json_file, ds, load_s, time.perf_counter() - t1, params)


def _finish(model, model_file, json_file, ds, load_s, train_s, params):
    """Save the model (atomically) and the metrics."""
    try:
        model.save(model_file)
    except OSError:
        raise InputOpenError(f"can't save model to file {model_file}") from None
    if json_file:
        write_json(json_file, metrics(model, ds, load_s, train_s, params))


def _stdout(s):
    sys.stdout.write(s)
    sys.stdout.flush()


def _stderr(s):
    sys.stderr.write(s)
    sys.stderr.flush()


if __name__ == "__main__":  # python -m llsvm.cli.train
    main()
