"""Cross-validation grid search over C and the kernel width for the kernel solvers (llsvm-train --grid, issue 16).

The grid: `parse_grid("C=1e-4:1e4:9 g=0.25,0.5,1,2")`: NAME=A:B:N is N values from A to B evenly spaced in log
scale (numpy.logspace; N = 1 gives A), NAME=V1,V2,... a list; names C (or c), g (or gamma) and sigma (the Gaussian
width: gamma = 1/(2 sigma^2)); terms separated by spaces or semicolons. A name left out keeps the value of the
parameters (-c, -g, --sigma or their defaults).

Every cell is what `llsvm-train -v n -c C -g gamma` computes, on the same folds (LIBSVM's stratified folds from
--seed) with the same per-fold seeds, so a cell's error is the -v run's 100 - accuracy. The order of the work is
gamma, then fold, then C: the cells of one kernel and fold share the solver's kernel state (a `context`: -s smo's
kernel caches, the online solvers' column stores, -m MB each), so a C after the first reuses the columns computed
before it. The models do not depend on that order.

Weighted rows (-W, docs/weights.md): the folds' training rows keep their weights (take_rows carries them; rows of
weight 0 are left out), and a cell's error counts the test rows, each row one, as -v's accuracy (LIBSVM's and
LIBLINEAR's weights extensions keep do_cross_validation's count of rows).
"""
import math
import re
import time
from dataclasses import dataclass, replace

import numpy as np

from ..errors import ParameterError
from ..options import sigma_gamma
from ..report import as_reporter
from ..stop import stoppable
from ..params import accepting
from . import registry
from .common import fold_draws, fold_seeds
from .folds import stratified_folds
from ..dataset import positive_rows
from ..measures import TITLES, best_index, check_measures, evaluate, positive_label
from .trainer import as_dataset, check_weighted, checked_params, fold_scores, measure_labels

NAMES = {"c": "C", "C": "C", "g": "gamma", "gamma": "gamma", "sigma": "sigma"}
NO_WIDTH = "--grid: -t 4 (precomputed kernel) has no kernel width (g, sigma): give C only"
MAX_CELLS = 10_000


def _number(text, term):
    try:
        v = float(text)
    except ValueError:
        raise ParameterError(f"--grid: {text!r} in {term!r} is not a number") from None
    if not (math.isfinite(v) and v > 0):
        raise ParameterError(f"--grid: {text!r} in {term!r} must be a finite number > 0")
    return v


def _width(text, term, key):
    """A value of the grid: a finite number > 0; for sigma, one whose gamma 1/(2 sigma^2) is finite and > 0."""
    v = _number(text, term)
    if key == "sigma":
        try:
            sigma_gamma(v)
        except ParameterError as exc:
            raise ParameterError(f"--grid: {text!r} in {term!r}: {str(exc).partition(': ')[2]}") from None
    return v


def parse_grid(text):
    """{"C": [...], "gamma": [...], "sigma": [...]} (the names given) from the --grid syntax; ParameterError names
    the bad term. The number of cells is known from the terms and checked before any value is made (a range of
    2^31 values is refused at once)."""
    terms = [t for t in re.split(r"[\s;]+", text.strip()) if t]
    if not terms:
        raise ParameterError("--grid: no NAME=VALUES term (e.g. 'C=1e-4:1e4:9 g=0.25,0.5,1,2')")
    parsed = {}
    for term in terms:
        name, eq, values = term.partition("=")
        if not eq or name not in NAMES:
            raise ParameterError(f"--grid: {term!r} is not NAME=VALUES with NAME one of C, g, sigma")
        key = NAMES[name]
        if key in parsed:
            raise ParameterError(f"--grid: {name} is given twice")
        if ":" in values:
            parts = values.split(":")
            if len(parts) != 3:
                raise ParameterError(f"--grid: {term!r}: a range is A:B:N")
            a, b = _width(parts[0], term, key), _width(parts[1], term, key)
            try:
                n = int(parts[2])
            except ValueError:
                n = 0
            if n < 1:
                raise ParameterError(f"--grid: {term!r}: N must be an integer >= 1")
            parsed[key] = (n, (a, b))
        else:
            vals = [_width(v, term, key) for v in values.split(",")]
            parsed[key] = (len(vals), vals)
    if "gamma" in parsed and "sigma" in parsed:
        raise ParameterError("--grid: g and sigma both set the kernel width: give one of them")
    cells = math.prod(n for n, _ in parsed.values())
    if cells > MAX_CELLS:
        raise ParameterError(f"--grid: {cells} cells; at most {MAX_CELLS}")
    grid = {}
    for key, (n, spec) in parsed.items():
        if isinstance(spec, tuple):
            a, b = spec
            vals = [a] if n == 1 else [float(v) for v in np.logspace(math.log10(a), math.log10(b), n)]
            if n > 1:
                vals[0], vals[-1] = a, b            # the ends exactly as written
        else:
            vals = spec
        grid[key] = vals
    return grid


@dataclass
class GridResult:
    """cells: one dict per cell in grid order (width outer, C inner): C, gamma (and sigma when the grid gave
    it), error (% of rows misclassified over the folds), accuracy, seconds (wall: fits and predictions of all
    folds), cpu_seconds, fit_seconds and fit_cpu_seconds (the fits alone), viol (violations summed over folds and pairs; None for -s smo), nSV (mean
    over folds). best: the cell with the lowest error (the first in grid order on ties); with `measure` (--measure:
    each cell also has its value, over the whole set's fold predictions) the cell of the best value (the largest;
    for mse and mae the smallest)."""
    cells: list
    best: dict
    nr_fold: int
    folds: list
    measure: str = None


def _options_with(options, width_key, width):
    """The options with the cell's kernel width (sigma given as gamma = 1/(2 sigma^2))."""
    if width_key is None:
        return options
    changes = {"gamma": sigma_gamma(width) if width_key == "sigma" else width}
    if hasattr(options, "sigma"):
        changes["sigma"] = None
    return replace(options, **changes)


@dataclass
class GridPlan:
    """What a grid search computes, before any work: the values of C, the widths (key None: one, the
    parameters' own), the folds (LIBSVM's stratified folds from --seed) and each fold's seed."""
    params: object
    Cs: list
    width_key: str
    widths: list
    folds: list
    fold_seeds: list

    @classmethod
    def make(cls, params, grid, folds, fold_seeds):
        width_key = "sigma" if "sigma" in grid else ("gamma" if "gamma" in grid else None)
        return cls(params=params, Cs=list(grid.get("C", [params.C])), width_key=width_key,
                   widths=list(grid[width_key]) if width_key else [None], folds=folds, fold_seeds=fold_seeds)

    def options(self, width):
        base = self.params.options if self.params.options is not None else self.params.spec.options()
        return _options_with(base, self.width_key, width)


def grid_request(grid, params, kw):
    """(Params, parse_grid's dict) of a grid search call, checked: the solver must take --grid."""
    params = checked_params(params, kw)
    if isinstance(grid, str):
        grid = parse_grid(grid)
    if not params.spec.accepts_option("--grid"):
        raise ParameterError(f"--grid applies only to {accepting('--grid')}, not to -s {params.spec.name}")
    if params.precomputed and ("gamma" in grid or "sigma" in grid):
        raise ParameterError(NO_WIDTH)
    return params, grid


def grid_plan(ds, nr_fold, grid, params, reporter):
    """The plan of a grid search (grid_request's) on a dataset; the folds' warnings go to `reporter`."""
    if nr_fold < 2:
        raise ParameterError("n-fold cross validation: n must >= 2")
    rand, seeds = fold_draws(params)
    folds = stratified_folds(ds.y, nr_fold, rand, reporter)
    seeds_of_folds = fold_seeds(params, rand, seeds, folds, ds.y, getattr(ds, "weights", None))
    return GridPlan.make(params, grid, folds, seeds_of_folds)


def fold_cells(ds, plan, w, f, positive=None, keep=False, bar=None):
    """Width w and fold f of a plan: every C trained on the fold's other rows and tested on its rows, the C values
    in order sharing the solver's kernel state. One record per C: wrong (test rows misclassified), wall, cpu,
    fit_s, fit_cpu, viol (None when the solver counts none), nSV, gamma (the kernel width the model used; None
    for -t 4, which has none); with `keep` (--measure) also te, pred (the test rows and their labels) and, with
    `positive` (auc), score (their decision values oriented to that class). `bar`: a progress bar advanced by
    one at each C."""
    spec = plan.params.spec
    silent = as_reporter()
    opts = plan.options(plan.widths[w])
    tr, te = plan.folds[f]
    tr = positive_rows(getattr(ds, "weights", None), tr)       # a row of weight 0 trains nothing (docs/weights.md)
    train, test = ds.take_rows(tr), ds.take_rows(te)
    context = {}
    out = []
    for C in plan.Cs:
        p = plan.params.but(C=C, seed=plan.fold_seeds[f], rand_skip=plan.fold_seeds[f], options=opts).check()
        w0, c0 = time.perf_counter(), time.process_time()
        model = registry.driver(spec)(train, p, silent, n_features=ds.n_features, context=context)
        w1, c1 = time.perf_counter(), time.process_time()
        dec = model.decision_function(test)
        pred = model.labels_from_decisions(dec)
        wrong = int(np.count_nonzero(pred != ds.y[te]))
        counts = [sum(r.extra["viol"]) for r in model.meta["results"] if "viol" in r.extra]
        out.append({"wrong": wrong, "wall": time.perf_counter() - w0, "cpu": time.process_time() - c0,
                    "fit_s": w1 - w0, "fit_cpu": c1 - c0, "viol": sum(counts) if counts else None,
                    "nSV": model.total_sv, "gamma": None if p.precomputed else model.meta["options"].gamma})
        if keep:
            out[-1].update(te=te, pred=np.asarray(pred, np.float64),
                           score=None if positive is None else fold_scores(model, dec, pred, positive))
        if bar is not None:
            bar.update(1)
    return out


def grid_cells(plan, n_rows, runs, measured=None):
    """The GridResult of a plan from fold_cells' records, runs[w][f] (width w, fold f); `measured` (--measure):
    (name, labels, y), the records keeping their predictions (fold_cells' keep)."""
    cells = []
    for w, width in enumerate(plan.widths):
        for c, C in enumerate(plan.Cs):
            recs = [runs[w][f][c] for f in range(len(plan.folds))]
            wrong = sum(r["wrong"] for r in recs)
            viol = None if any(r["viol"] is None for r in recs) else sum(r["viol"] for r in recs)
            cell = {"C": C, "gamma": recs[-1]["gamma"],
                    "error": 100.0 * wrong / n_rows, "accuracy": 100.0 * (n_rows - wrong) / n_rows,
                    "seconds": float(sum(r["wall"] for r in recs)), "cpu_seconds": float(sum(r["cpu"] for r in recs)),
                    "fit_seconds": float(sum(r["fit_s"] for r in recs)),
                    "fit_cpu_seconds": float(sum(r["fit_cpu"] for r in recs)),
                    "viol": viol, "nSV": float(sum(r["nSV"] / len(recs) for r in recs))}
            if plan.width_key == "sigma":
                cell["sigma"] = width
            if measured is not None:
                cell[measured[0]] = _cell_measure(recs, measured)
            cells.append(cell)
    if measured is not None and cells:
        best = cells[best_index(measured[0], [cell[measured[0]] for cell in cells])]
    else:
        best = min(cells, key=lambda cell: cell["error"]) if cells else None     # min keeps the first of equals
    return GridResult(cells=cells, best=best, nr_fold=len(plan.folds), folds=plan.folds,
                      measure=measured[0] if measured else None)


def _cell_measure(recs, measured):
    """A cell's --measure value over its folds' predictions, all at once (the eval tool's cv)."""
    name, labels, y = measured
    te = np.concatenate([r["te"] for r in recs])
    pred = np.concatenate([r["pred"] for r in recs])
    scores = np.concatenate([r["score"] for r in recs]) if recs and recs[0]["score"] is not None else None
    return evaluate(y[te], pred, labels, scores=scores).values[name]


@stoppable
def grid_search(data, nr_fold, grid, y=None, *, params=None, reporter=None, say=None, warn=None, measure=None,
                **kw):
    """Cross-validate every cell of the grid (parse_grid's dict, or its text) for a kernel solver (an access
    "loaded" spec that takes --grid). Returns a GridResult; `measure` (a --measure name): each cell's value of it,
    and the best cell by it."""
    params, grid = grid_request(grid, params, kw)
    reporter = as_reporter(reporter, say, warn)
    ds = as_dataset(data, y, params)
    check_weighted(ds, params)
    plan = grid_plan(ds, nr_fold, grid, params, reporter)
    measured = positive = None
    if measure is not None:
        labels = measure_labels(ds.y, params)
        check_measures((measure,), labels is None, None if labels is None else len(labels))
        measured = (measure, labels, ds.y)
        positive = positive_label(labels) if measure == "auc" else None
    n_cells, n_folds = len(plan.widths) * len(plan.Cs), len(plan.folds)
    # the bar: every cell's fit on every fold, in the order they run (width, fold, C)
    with reporter.bar(total=n_cells * n_folds, desc=f"grid, {n_cells} cells x {n_folds} folds", unit="fits") as bar:
        runs = [[fold_cells(ds, plan, w, f, positive, keep=measured is not None, bar=bar)
                 for f in range(n_folds)] for w in range(len(plan.widths))]
    return grid_cells(plan, ds.n_rows, runs, measured)


HEADER = f"{'C':>12} {'gamma':>12} {'CV error':>10} {'seconds':>9}\n"


def _width_text(gamma):
    """A cell's gamma as the table shows it; "-" for a kernel without one (-t 4)."""
    return "-" if gamma is None else f"{gamma:g}"


def cell_line(cell, measure=None):
    extra = "" if measure is None else f" {cell[measure]:>10.6g}"
    return (f"{cell['C']:>12g} {_width_text(cell['gamma']):>12} {cell['error']:>9.4g}% {cell['seconds']:>9.3f}"
            f"{extra}\n")


def grid_table(result):
    """The table llsvm-train --grid prints on stdout: every cell, then the best (with --measure, a column of the
    measure, by which the best is chosen)."""
    m = result.measure
    header = HEADER if m is None else HEADER[:-1] + f" {TITLES[m][:10]:>10}\n"
    lines = [f"Grid search with {result.nr_fold}-fold cross validation: {len(result.cells)} cells\n", header]
    lines += [cell_line(c, m) for c in result.cells]
    b = result.best
    by = "" if m is None else f"CV {TITLES[m]} = {b[m]:g}  "
    lines.append(f"Best C = {b['C']:g} gamma = {_width_text(b['gamma'])}  {by}CV error = {b['error']:g}%  "
                 f"(Cross Validation Accuracy = {b['accuracy']:g}%)\n")
    return "".join(lines)
