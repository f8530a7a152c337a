"""llsvm-easy: LIBSVM's tools/easy.py, the practical guide's workflow in one command, in one process:
llsvm-easy [options] training_file [testing_file].

The steps are easy.py's, each run by the body of the llsvm command that does it alone (so each file is what that
command writes): llsvm-scale -s training_file.range training_file (-> training_file.scale), the search for C and
gamma (grid.py's defaults: log2c -5..15 step 2, log2g 3..-15 step -2, 5-fold cross validation) by llsvm-train's
--grid with --libsvm-rand, so each cell is the rate svm-train -v prints, and the best cell chosen as grid.py chooses
it (its order of the cells, its rule for ties), llsvm-train -s smo -c C -g G training_file.scale
training_file.model, then for a testing file llsvm-scale -r training_file.range testing_file
(-> testing_file.scale) and llsvm-predict testing_file.scale training_file.model testing_file.predict. The files go
to the current directory under the inputs' base names, as easy.py's do.

All or nothing: every file is written to a temporary directory beside them and renamed into place once the last
step has succeeded, so an error or a Ctrl-C (exit 130) leaves no file, and no file of an earlier run is replaced
by half a run's.
"""
import os

import click

from ..errors import LLSVMError
from ..options import MEASURE_HELP
from .common import check_input, complete_path, handle_errors, make_reporter, measure_names, refuse_same_file
from .usage import version_option

GRID_LOG2C = "-5,15,2"          # grid.py's defaults (GridOption)
GRID_LOG2G = "3,-15,-2"
GRID_FOLD = 5


def log2_range(ctx, param, value):
    """--log2c / --log2g: grid.py's begin,end,step; the exponents as grid.py's range_f lists them (begin, begin +
    step, ... while not past end)."""
    try:
        begin, end, step = (float(v) for v in value.split(","))
    except ValueError:
        raise click.BadParameter(f"{value!r} is not begin,end,step (three numbers)") from None
    if step == 0 or not all(abs(v) < 1024 for v in (begin, end, step)):
        raise click.BadParameter(f"{value!r}: the step must not be 0 and the exponents must be within +-1024")
    seq = []
    while not ((step > 0 and begin > end) or (step < 0 and begin < end)):
        seq.append(begin)
        begin += step
    if not seq:
        raise click.BadParameter(f"{value!r}: no exponent (a step of the wrong sign)")
    return seq


def middle_first(seq):
    """grid.py's order of one axis: the middle value, then the two halves' own orders taken in turn, so the first
    cells spread over the grid."""
    if len(seq) <= 1:
        return list(seq)
    mid = len(seq) // 2
    left, right = middle_first(seq[:mid]), middle_first(seq[mid + 1:])
    out = [seq[mid]]
    for k in range(max(len(left), len(right))):
        out += left[k:k + 1] + right[k:k + 1]
    return out


def grid_order(c_exps, g_exps):
    """The (log2 C, log2 gamma) cells in the order grid.py's workers take them: each axis middle first, the grid
    grown one row or column at a time, whichever axis has the smaller share done."""
    cs, gs = middle_first(c_exps), middle_first(g_exps)
    i = j = 0
    order = []
    while i < len(cs) or j < len(gs):
        if i / len(cs) < j / len(gs):
            order += [(cs[i], gs[k]) for k in range(j)]
            i += 1
        else:
            order += [(cs[k], gs[j]) for k in range(i)]
            j += 1
    return order


def best_cell(order, rate):
    """grid.py's choice over the cells in its order: a higher rate wins; an equal rate only at the same log2 gamma
    with a smaller log2 C. rate: (log2 C, log2 gamma) -> the rate grid.py reads (svm-train's %g)."""
    best = None
    for c, g in order:
        r = rate[(c, g)]
        if best is None or r > best[2] or (r == best[2] and g == best[1] and c < best[0]):
            best = (c, g, r)
    return best


def _printed(value):
    """A rate as grid.py reads it from svm-train's line: printf's %g, read back as a float."""
    return float(f"{value:g}")


def _body(command, name, args):
    """Run an llsvm command's body (without its own error and signal handling: this command's) on a command line."""
    with command.make_context(name, list(args)) as ctx:
        return command.callback.__wrapped__(**ctx.params)


def _quiet(quiet, progress):
    return (["-q"] if quiet else []) + ([] if progress is None else ["--progress" if progress else "--no-progress"])


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("training_file", shell_complete=complete_path)
@click.argument("testing_file", required=False, shell_complete=complete_path)
@click.option("--log2c", "c_exps", default=GRID_LOG2C, metavar="begin,end,step",
              callback=log2_range, help=f"The exponents of C's grid, as grid.py's -log2c (default {GRID_LOG2C}).")
@click.option("--log2g", "g_exps", default=GRID_LOG2G, metavar="begin,end,step",
              callback=log2_range, help=f"The exponents of gamma's grid, as grid.py's -log2g (default {GRID_LOG2G}).")
@click.option("-v", "nr_fold", type=click.IntRange(min=2), default=GRID_FOLD, metavar="n",
              help=f"n-fold cross validation, as grid.py's -v (default {GRID_FOLD}).")
@click.option("--measure", "measures", default=None, metavar="NAME", callback=measure_names,
              help="Choose C and gamma by this measure of the cross validation instead of accuracy, and report it "
                   "(and the others named) for the testing file. " + MEASURE_HELP)
@click.option("-q", "--quiet", is_flag=True, help="Quiet mode (no outputs but errors).")
@click.option("--progress/--no-progress", default=None,
              help="Progress bars on stderr (default: on when stderr is a terminal and not -q).")
@handle_errors
@version_option
def main(training_file, testing_file, c_exps, g_exps, nr_fold, measures, quiet, progress):
    """Scale, search C and gamma by cross validation, train and test, as LIBSVM's easy.py: llsvm-easy [options]
    training_file [testing_file]. Writes training_file.range, training_file.scale, training_file.model, and with a
    testing file testing_file.scale and testing_file.predict, in the current directory (all or none)."""
    from ..fileutil import commit_output, remove_tree, reset_commit, temporary_dir
    reporter = make_reporter(quiet, progress)
    check_input(training_file)
    if testing_file is not None:
        check_input(testing_file)
    if training_file == "-" or testing_file == "-":
        raise LLSVMError("llsvm-easy reads its files twice or more: give file names, not - (standard input)")
    base = os.path.basename(training_file.rstrip("/"))
    names = {"range": base + ".range", "scale": base + ".scale", "model": base + ".model"}
    if testing_file is not None:
        test_base = os.path.basename(testing_file.rstrip("/"))
        names.update(test_scale=test_base + ".scale", predict=test_base + ".predict")
    refuse_same_file([(what, path) for what, path in names.items()],
                     [("training_file", training_file), ("testing_file", testing_file)])
    stage = temporary_dir(".", ".llsvm-easy-")
    staged = {what: os.path.join(stage, path) for what, path in names.items()}
    try:
        _steps(training_file, testing_file, staged, names, c_exps, g_exps, nr_fold, measures, quiet, progress,
               reporter, reset_commit)
        for what in names:          # the point of no return: every file renamed into place
            commit_output(staged[what], names[what])
    finally:
        remove_tree(stage)


def _steps(training_file, testing_file, staged, names, c_exps, g_exps, nr_fold, measures, quiet, progress, reporter,
           reset_commit):
    from . import predict, scale, train
    # easy.py shows svm-scale's warnings (stderr) and svm-predict's lines, not svm-train's output (its stdout)
    q, shown = _quiet(True, progress), _quiet(quiet, progress)
    reporter.line("Scaling training data...")
    _body(scale.main, "llsvm-scale", shown + ["-s", staged["range"], "-o", staged["scale"], "--", training_file])
    reset_commit()                  # a staged file, not yet an output: Ctrl-C still ends the run
    reporter.line("Cross validation...")
    c, g, rate = _search(staged["scale"], training_file, c_exps, g_exps, nr_fold, measures, reporter, progress)
    C, gamma = 2.0 ** c, 2.0 ** g
    what = "rate" if not measures else measures[0]
    reporter.line(f"Best c={C}, g={gamma} CV {what}={rate}")
    reporter.line("Training...")
    _body(train.main, "llsvm-train", q + ["-s", "smo", "--libsvm-rand", "-c", repr(C), "-g", repr(gamma), "--",
                                          staged["scale"], staged["model"]])
    reset_commit()
    reporter.line(f"Output model: {names['model']}")
    if testing_file is None:
        return
    reporter.line("Scaling testing data...")
    _body(scale.main, "llsvm-scale", shown + ["-r", staged["range"], "-o", staged["test_scale"], "--", testing_file])
    reset_commit()
    reporter.line("Testing...")
    _body(predict.main, "llsvm-predict", shown +
          (["--measure", ",".join(measures)] if measures else []) +
          ["--", staged["test_scale"], staged["model"], staged["predict"]])
    reset_commit()
    reporter.line(f"Output prediction: {names['predict']}")


def _search(scaled, training_file, c_exps, g_exps, nr_fold, measures, reporter, progress):
    """grid.py's search, in one process: every cell by llsvm-train --grid (-s smo --libsvm-rand: svm-train -v's
    folds and rate), the best as grid.py picks it. (log2 C, log2 gamma, the rate) of the best."""
    import numpy as np
    from ..solvers.grid import grid_search
    from .declare import check_measure_task, read_request, read_training_rows
    from .train import check_grid, main as train_main
    cs, gs = [2.0 ** c for c in c_exps], [2.0 ** g for g in g_exps]
    args = ["-s", "smo", "--libsvm-rand", "-v", str(nr_fold), "-q",
            "--grid", f"C={','.join(map(repr, cs))} g={','.join(map(repr, gs))}"]
    if measures:
        args += ["--measure", measures[0]]
    with train_main.make_context("llsvm-train", args + ["--", scaled]) as ctx:
        values = {k: v for k, v in ctx.params.items() if k not in ("training_set_file", "model_file")}
    req = read_request(values, reporter.warning)
    grid = check_grid(req)
    with reporter.bar(desc="reading") as bar:
        ds = read_training_rows(scaled, req, bar)
    y = np.asarray(ds.y)
    odd = np.flatnonzero(y != np.trunc(y))
    if odd.size:
        raise LLSVMError(f"{training_file}: the label {y[odd[0]]:g} of row {odd[0] + 1} is not a class: llsvm-easy, "
                         "as easy.py, searches a classifier (C-SVC); for regression, scale with llsvm-scale and "
                         "search with llsvm-train -s epsilon_svr --grid")
    if req.measure:
        check_measure_task(req.measure, ds.y, req.params)
    kw = {"measure": req.measure[0]} if req.measure else {}
    result = grid_search(ds, req.nr_fold, grid, reporter=reporter, params=req.params, **kw)
    key = req.measure[0] if req.measure else "accuracy"
    # the cells come width outer, C inner (grid.py's -log2g and -log2c lists, in their order)
    rate = {(c, g): _printed(result.cells[w * len(cs) + k][key])
            for w, g in enumerate(g_exps) for k, c in enumerate(c_exps)}
    return best_cell(grid_order(c_exps, g_exps), rate)


if __name__ == "__main__":  # python -m llsvm.cli.easy
    main()
