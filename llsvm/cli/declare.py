"""llsvm-train's options from their rows (llsvm/options.py): the Click options and their help, and the reading of a
command line into checked parameters (Request), in LIBLINEAR's order and words. Nothing here names a solver: what
a solver takes, its defaults and its checks are the rows' and the specs' (llsvm/params.py).

Imports click and the rows only (issue 26: `--help` and an option error answer before numpy is loaded).
"""
import string
import sys
from dataclasses import dataclass

import click

from ..errors import ParameterError
from ..options import OPTION, OPTIONS, PRECOMPUTED, Count, refuse_precomputed
from ..params import Params, accepting, get, specs
from .common import ParamError, complete_path, os_errors


def _names(names):
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def per_solver(attr):
    """ "-s 1 and 3: 300; -s 2: 1000; ..." for a SolverSpec field."""
    seen = {}
    for s in specs():
        seen.setdefault(getattr(s, attr), []).append(s.name)
    return "; ".join(f"-s {_names(names)}: {value}" for value, names in seen.items())


class _Solvers:
    """{solvers} in a row's help: who takes the row's option ({solvers:FLAG}: who takes FLAG); short: "-s 0, 2, 11"
    instead of "-s 0, -s 2 and -s 11"."""

    def __init__(self, flag, short=False):
        self.flag = flag
        self.short = short

    def __format__(self, spec):
        if self.short:
            return "-s " + ", ".join(s.name for s in specs() if s.accepts_option(spec or self.flag))
        return accepting(spec or self.flag)


def help_text(row, text=None, short=False):
    """A row's help (or `text`, its brief) with its placeholders filled in; short: the solvers named briefly."""
    text = row.help if text is None else text
    fields = {name for _, name, _, _ in string.Formatter().parse(text) if name}
    values = {"default": row.default, "solvers": _Solvers(row.flag, short)}
    if "per_solver" in fields:
        values["per_solver"] = per_solver(row.per_solver)
    return text.format(**values)


def _click_type(kind):
    if isinstance(kind, Count):
        return {"type": click.IntRange(min=kind.low, max=kind.high)}
    if kind is bool:
        return {}
    if isinstance(kind, tuple) and all(isinstance(k, str) for k in kind):
        return {"type": click.Choice(list(kind))}
    if kind is str:
        return {}
    return {"type": kind}


def click_option(row):
    """The Click option of a row (None for a row without one, such as -B R)."""
    decls = row.decls if row.decls is not None else (row.flag,)
    if not decls:
        return None
    kw = dict(default=None, help=help_text(row) if row.help else None, hidden=row.hidden, **_click_type(row.kind))
    if row.kind is bool and "/" not in decls[0]:
        kw["is_flag"] = True
    if row.metavar:
        kw["metavar"] = row.metavar
    if row.multiple:
        kw.update(multiple=True, default=())
    if row.flag == "-s":
        kw["shell_complete"] = _complete_solver
    elif row.metavar and "file" in row.metavar.lower():
        kw["shell_complete"] = complete_path
    return click.option(*decls, row.dest, **kw)


def _complete_solver(ctx, param, incomplete):
    """Shell completion of -s: the solvers' names (and LIBLINEAR's numbers) that begin with what is typed."""
    return [s.name for s in specs() if s.name.startswith(incomplete)]


def table_options(fn):
    """Decorate a command with a Click option per row, in the rows' order."""
    for row in reversed(OPTIONS):
        option = click_option(row)
        if option is not None:
            fn = option(fn)
    return fn


def _usage(row, message):
    return click.BadParameter(message.removeprefix(f"{row.flag} "), param_hint=f"'{row.flag}'")


@dataclass
class Request:
    """A command line, read and checked: the Params, and what the command does with them."""
    params: Params
    nr_fold: int
    find_C: bool
    grid: str
    json_file: str
    weight_file: str       # -W: the rows' weights (docs/weights.md), None: none
    initial_model: str     # -i: the model whose w starts the run (llsvm/solvers/warm.py), None: from zero
    dask: str
    workers: int
    local_epochs: int
    quiet: bool
    progress: object
    strict: bool           # --strict: exit STRICT_EXIT when the model written is not certified
    zero_based: bool       # text input read 0-based: --zero-based, or -t 4 (a precomputed kernel's 0:serial)
    given: dict            # {flag: value} of the options given (the values as Click read them)
    measure: tuple = ()    # --measure's names (llsvm/measures.py), () when not given
    plot_file: str = None  # --plot (with -v)

    @property
    def spec(self):
        return self.params.spec

    def inputs(self, training_set_file):
        """The files the command reads, as refuse_same_file takes them."""
        return [("training_set_file", training_set_file), ("-W", self.weight_file)]

    @property
    def budget(self):
        return getattr(self.params.options, "memory", None)


class CommandLine:
    """The values Click read, by the rows' dest; which options were given."""

    def __init__(self, values):
        self.values = values

    def value(self, row):
        if row.of is not None:
            flag, wanted = row.of
            text = self.values.get(OPTION[flag].dest)
            try:
                return True if text is not None and OPTION[flag].parse(text) == wanted else None
            except ParameterError:
                return None
        return self.values.get(row.dest)

    def given(self, row):
        value = self.value(row)
        return value is not None and value != ()

    def given_flags(self):
        return {row.flag: self.value(row) for row in OPTIONS if self.given(row)}


def read_request(values, reporter_warning):
    """Read and check llsvm-train's options, in LIBLINEAR's order: -v's count, the solver, -p and -n in
    check_parameter's words, every option the solver does not take, options that exclude each other, the values
    that are not plain numbers (usage errors), then Params.check. `reporter_warning(text)` says that -C picked a
    solver."""
    line = CommandLine(values)
    nr_fold, find_C = values["nr_fold"], bool(values["find_C"])
    if nr_fold is not None and nr_fold < 2:
        raise click.UsageError("n-fold cross validation: n must >= 2")
    try:
        spec = get(values["solver"] if values["solver"] is not None else OPTION["-s"].default)
    except ParameterError as exc:
        if find_C:
            raise ParamError(OPTION["-C"].refusal.format(solvers=accepting("-C"))) from None
        raise ParamError(str(exc)) from None
    given = line.given_flags()
    _check_early(given)
    _check_applicable(spec, given)
    _check_conflicts(given)
    parsed = _parse_values(line)
    if find_C:
        nr_fold = nr_fold or 5
        if values["solver"] is None:
            reporter_warning("Solver not specified. Using -s 2\n")
            spec = get(2)
    params = _params(spec, values, parsed)
    _check_dask(values, params)
    measure = parsed.get("measure", ())
    _check_measure(measure, values, nr_fold, find_C)
    check_weight_file(values["weight_file"])
    return Request(params=params, nr_fold=nr_fold, find_C=find_C, grid=values["grid"],
                   json_file=values["json_file"], weight_file=values["weight_file"],
                   initial_model=values["initial_model"], dask=values["dask"], workers=values["workers"],
                   local_epochs=values["local_epochs"],
                   quiet=bool(values["quiet"]), progress=values["progress"], strict=bool(values["strict"]),
                   zero_based=bool(values["zero_based"]) or params.precomputed, given=given, measure=measure,
                   plot_file=values["plot_file"])


def _check_measure(measure, values, nr_fold, find_C):
    """--measure goes with -v, -C or --grid, --plot with -v alone; neither with --dask (its folds report
    accuracy); the measure's task (classification or regression) is the solver's."""
    grid = values["grid"] is not None
    if measure and nr_fold is None and not find_C and not grid:
        raise click.BadParameter("applies with -v, -C or --grid", param_hint="'--measure'")
    if values["plot_file"] is not None and (nr_fold is None or find_C or grid):
        raise click.BadParameter("applies with -v (without -C or --grid)", param_hint="'--plot'")
    if (measure or values["plot_file"] is not None) and values["dask"] is not None:
        raise ParamError("--measure and --plot are not available with --dask")


def _check_dask(values, params):
    """--workers goes with --dask local, --local-epochs with --dask and -s 1 or 3: refused, not ignored.
    (--local-epochs names no solvers in its row: a solver's run without --dask never takes it.) A run that does not
    go to a cluster (-t 4) is refused with --dask."""
    spec = params.spec
    if values["workers"] is not None and values["dask"] != "local":
        raise click.BadParameter("applies to --dask local", param_hint="'--workers'")
    if values["dask"] is not None:
        from .. import dask
        try:
            dask.local_only(params)
        except ParameterError as exc:
            raise ParamError(str(exc)) from None
        _check_cluster(values["dask"], values["workers"])
    if values["local_epochs"] is not None and values["dask"] is None:
        raise click.BadParameter("applies with --dask (CoCoA+)", param_hint="'--local-epochs'")
    if values["local_epochs"] is not None and spec.name not in ("1", "3"):
        raise ParamError(f"--local-epochs applies only to -s 1 and -s 3, not to -s {spec.name}")


def _check_cluster(address, workers):
    """--workers beyond what the machine runs (a usage error, before a worker starts), an address no scheduler can
    have ("ERROR: --dask 'ADDRESS': why", before connecting): llsvm.dask's checks, which import Dask."""
    from .. import dask
    try:
        if address == dask.LOCAL:
            dask.local_workers(workers)
        else:
            dask.check_address(address)
    except ParameterError as exc:
        if address == dask.LOCAL:
            raise click.BadParameter(str(exc).removeprefix("--workers "), param_hint="'--workers'") from None
        raise ParamError(str(exc)) from None


def check_weight_file(path):
    """-W's file can be opened (before any work; None: no -W)."""
    if path is not None:
        with os_errors(f"can't open weight file {path}"):
            with open(path, "rb"):
                pass


def with_weight_file(ds, path):
    """The training rows with -W's weights (docs/weights.md; None: as they are): the file's errors name its line;
    rows that carry their weights already (a version 2 binary file) are refused (io.weights_for)."""
    if path is None:
        return ds
    from ..io import weights_for
    with os_errors(f"can't open weight file {path}"):
        return ds.with_weights(weights_for(path, ds, ds.n_rows))


def initial_model(req):
    """-i's model (None without -i), read strictly (llsvm.models.load_model: errors name the file and line) and
    checked against the solver and -B before any row is read (warm.model_starts checks the classes and features
    against the rows)."""
    if req.initial_model is None:
        return None
    from ..models import load_model
    from ..solvers.warm import check_run
    model = load_model(req.initial_model)
    model.meta = {**(getattr(model, "meta", None) or {}), "initial_model": req.initial_model}
    check_run(model, req.params)
    return model


# --strict's exit status when the model written is not certified (1 is an error, 2 a usage error: Click's)
STRICT_EXIT = 3


def make_reporter(values, model_file):
    """llsvm-train's reporter. Standard output that carries data (--json -, or the model written to '-') holds it
    alone: the usual lines go to stderr (docs/guide.md, "stdout, stderr and exit status")."""
    from ..report import Reporter
    if model_file == "-" and values["json_file"] == "-":
        raise click.BadParameter("the model is written to stdout ('-'): the JSON needs a file", param_hint="'--json'")
    return Reporter(quiet=bool(values["quiet"]), progress=values["progress"],
                    stdout_taken="-" in (model_file, values["json_file"]))


def check_strict(req, certificate, model_file):
    """--strict: exit STRICT_EXIT when the model written is not certified (its --json "converged" false), said on
    stderr even with -q, as an error is (a cron job's mail says why the status is not 0)."""
    if req.strict and not certificate["converged"]:
        click.echo(f"llsvm-train: --strict: the model is not certified (\"converged\": false: the iteration limit "
                   f"was reached or the certificate failed); it was written to {model_file}", err=True)
        sys.exit(STRICT_EXIT)


def check_measure_task(measure, y, params):
    """--measure's names against the solver's task and the number of classes of the rows (auc: two): an error
    (exit 1) once the rows are read."""
    from ..measures import check_measures
    from ..solvers.trainer import measure_labels
    labels = measure_labels(y, params)
    check_measures(measure, labels is None, None if labels is None else len(labels))


def cv_command(found, ds, req, reporter, training_set_file):
    """-v's run (or what the cluster found), its lines on stdout and its plot (--plot); its --json dict. The
    decision values are kept for auc and a plot."""
    from ..solvers import trainer
    from .common import write_plot
    scores = None
    if found:
        target = found.target
    elif "auc" in req.measure or req.plot_file:
        target, scores = trainer.cross_validation(ds, req.nr_fold, reporter=reporter, params=req.params, scores=True)
    else:
        target = trainer.cross_validation(ds, req.nr_fold, reporter=reporter, params=req.params)
    text, summary, measured = trainer.cv_summary(target, found.y if found else ds.y, req.params, req.measure, scores,
                                                 keep=bool(req.plot_file))
    reporter.result(text)
    if req.plot_file:
        write_plot(measured, req.plot_file, f"{training_set_file}, {req.nr_fold}-fold cross validation")
    return {"nr_fold": req.nr_fold, **summary, **getattr(found, "meta", {})}


def grid_command(found, ds, grid, req, reporter):
    """--grid's run (or what the cluster found; --measure: the cells' values and the best by it), its table on
    stdout; its --json dict."""
    from ..solvers.grid import grid_search, grid_table
    kw = {"measure": req.measure[0]} if req.measure else {}
    result = found or grid_search(ds, req.nr_fold or 5, grid, reporter=reporter, params=req.params, **kw)
    reporter.result(grid_table(result))
    return {"nr_fold": result.nr_fold, "cells": result.cells, "best": result.best, **getattr(result, "meta", {})}


def read_training_rows(path, req, progress):
    """The training rows of a run that loads them (the text's line limit under --memory, class labels checked for a
    classifier, the parse on --threads), with -W's weights."""
    from ..io import read_dataset
    from ..textio import line_limit
    ds = read_dataset(path, zero_based=req.zero_based, progress=progress, max_line=line_limit(req.budget),
                      class_labels=req.spec.class_labels, threads=req.params.threads or 1)
    return with_weight_file(ds, req.weight_file)


def find_C_command(find, data, req, reporter):
    """-C's run (in one process or on a cluster: `find` is trainer's or llsvm.dask's find_parameter_C):
    LIBLINEAR's first line, then the search from -c and -p when given; what `find` returns."""
    reporter.result(f"Doing parameter search with {req.nr_fold}-fold cross validation.\n")
    kw = {"measure": req.measure[0]} if req.measure else {}
    return find(data, req.nr_fold, start_C=req.given.get("-c"), start_p=req.given.get("-p"), reporter=reporter,
                params=req.params, **kw)


def _check_early(given):
    """-p and -n: LIBLINEAR's check_parameter words, before asking whether the solver takes them."""
    for flag, value in given.items():
        row = OPTION[flag]
        if row.early:
            try:
                row.check(value)
            except ParameterError as exc:
                raise ParamError(str(exc)) from None


def _check_applicable(spec, given):
    """Refuse every option the solver does not take (exit 1, naming the option and the solvers that take it).
    -R is left to Params.check, which refuses it in LIBLINEAR's words. -t 4 (the precomputed kernel) is LIBSVM's
    types' only: refused for any other solver, -t taken or not."""
    if given.get("-t") == PRECOMPUTED:
        try:
            refuse_precomputed(spec.name)
        except ParameterError as exc:
            raise ParamError(str(exc)) from None
    for flag in given:
        row = OPTION[flag]
        if row.solvers is None or flag == "-R" or spec.accepts_option(flag):
            continue
        if row.refusal:
            raise ParamError(row.refusal.format(solvers=accepting(flag)))
        raise ParamError(f"{flag} applies only to {accepting(flag)}, not to -s {spec.name}")


def _check_conflicts(given):
    for flag in given:
        others, why = OPTION[flag].conflicts or ((), None)
        for other in others:
            if other in given:
                raise ParamError(f"{other} {why}")


def _parse_values(line):
    """{dest: value} of the options whose text is parsed (-B, --h1-c, --memory, ...) and the usage checks of the
    others: a bad value is a usage error naming the option (exit 2)."""
    parsed = {}
    for row in OPTIONS:
        if not line.given(row) or row.of is not None:
            continue
        value = line.value(row)
        try:
            if row.usage_check:
                row.check(value)
            if row.parse is not None:
                parsed[row.dest] = row.parse(value)
        except ParameterError as exc:
            raise _usage(row, str(exc)) from None
    return parsed


def _params(spec, values, parsed):
    """The checked Params: the rows' values (parsed where they are text), the options of the solver's own class,
    Params' defaults for the rest; -B R is B = 1 and the radius option."""
    from ..options import RADIUS
    merged = {**values, **parsed}
    if merged.get("bias") == RADIUS:
        merged.update(bias=1.0, radius_bias=True)
    options = None
    if spec.options is not None:
        names = {row.dest for row in spec.options.rows()}
        options = spec.options(**{k: v for k, v in merged.items() if k in names and v is not None})
    kw = {row.dest: merged[row.dest] for row in OPTIONS
          if row.where == "params" and merged.get(row.dest) is not None}
    kw["solver"] = spec.key
    kw["weights"] = list(merged["weights"])
    if "regularize_bias" in kw:
        kw["regularize_bias"] = OPTION["-R"].flag_value
    kw.setdefault("threads", spec.default_threads)
    try:
        return Params(options=options, **kw).check()
    except ParameterError as exc:
        raise ParamError(str(exc)) from None


def overflow_hint(params):
    """What to change when a model is not finite: the options given that scale its numbers (-c, -wi, -B and the
    rows marked `scales`, when they differ from their defaults), else the data's scale."""
    spec = params.spec
    given = []
    if params.C != OPTION["-c"].default:
        given.append(f"-c {params.C:g}")
    given += [f"-w{label} {weight:g}" for label, weight in params.weights]
    if params.bias >= 0 and not (spec.free_bias and params.bias == 1.0):
        given.append(f"-B {params.bias:g}")
    for row in OPTIONS:
        if not row.scales or row.flag == "-c" or not spec.accepts_option(row.flag):
            continue
        source = params if row.where == "params" else params.options
        value = getattr(source, row.dest, None)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value != row.default_for(spec.name):
            given.append(f"{row.flag} {value:g}")
    if not given:
        return "the data's values make it overflow: scale the features"
    return f"the options make it overflow: change {' or '.join(given)}"
