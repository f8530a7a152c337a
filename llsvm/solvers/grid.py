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
"""
import math
import re
import time
from dataclasses import dataclass, replace

import numpy as np

from ..errors import ParameterError
from ..options import sigma_gamma
from ..report import as_reporter
from ..params import accepting
from . import registry
from .common import Seeds
from .folds import stratified_folds
from .trainer import as_dataset, checked_params

NAMES = {"c": "C", "C": "C", "g": "gamma", "gamma": "gamma", "sigma": "sigma"}
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
    over folds). best: the cell with the lowest error (the first in grid order on ties)."""
    cells: list
    best: dict
    nr_fold: int
    folds: list


def _options_with(options, width_key, width):
    """The options with the cell's kernel width (sigma given as gamma = 1/(2 sigma^2))."""
    if width_key is None:
        return options
    changes = {"gamma": sigma_gamma(width) if width_key == "sigma" else width}
    if hasattr(options, "sigma"):
        changes["sigma"] = None
    return replace(options, **changes)


def grid_search(data, nr_fold, grid, y=None, *, params=None, reporter=None, say=None, warn=None, **kw):
    """Cross-validate every cell of the grid (parse_grid's dict, or its text) for a kernel solver (an access
    "loaded" spec that takes --grid). Returns a GridResult."""
    params = checked_params(params, kw)
    spec = params.spec
    if not spec.accepts_option("--grid"):
        raise ParameterError(f"--grid applies only to {accepting('--grid')}, not to -s {spec.name}")
    if isinstance(grid, str):
        grid = parse_grid(grid)
    if nr_fold < 2:
        raise ParameterError("n-fold cross validation: n must >= 2")
    reporter = as_reporter(reporter, say, warn)
    silent = as_reporter()
    ds = as_dataset(data, y, params)
    base = params.options if params.options is not None else spec.options()
    Cs = grid.get("C", [params.C])
    width_key = "sigma" if "sigma" in grid else ("gamma" if "gamma" in grid else None)
    widths = grid[width_key] if width_key else [None]
    seeds = Seeds(params.seed)
    folds = stratified_folds(ds.y, nr_fold, seeds, reporter)
    fold_seeds = [seeds.next() for _ in folds]
    cells = []
    for width in widths:
        opts = _options_with(base, width_key, width)
        pred = np.empty((len(Cs), ds.n_rows), np.float64)
        wall = np.zeros(len(Cs))
        cpu = np.zeros(len(Cs))
        fit_s = np.zeros(len(Cs))
        fit_cpu = np.zeros(len(Cs))
        viol = [0] * len(Cs)
        nsv = np.zeros(len(Cs))
        resolved = None
        for f, (tr, te) in enumerate(folds):
            train, test = ds.take_rows(tr), ds.take_rows(te)
            context = {}
            for c, C in enumerate(Cs):
                p = params.but(C=C, seed=fold_seeds[f], options=opts).check()
                w0, c0 = time.perf_counter(), time.process_time()
                model = registry.driver(spec)(train, p, silent, n_features=ds.n_features, context=context)
                w1, c1 = time.perf_counter(), time.process_time()
                pred[c, te] = model.predict(test)
                wall[c] += time.perf_counter() - w0
                cpu[c] += time.process_time() - c0
                fit_s[c] += w1 - w0
                fit_cpu[c] += c1 - c0
                counts = [sum(r.extra["viol"]) for r in model.meta["results"] if "viol" in r.extra]
                viol[c] = viol[c] + sum(counts) if counts and viol[c] is not None else None
                nsv[c] += model.total_sv / len(folds)
                resolved = model.meta["options"]
            del context
        for c, C in enumerate(Cs):
            wrong = int(np.count_nonzero(pred[c] != ds.y))
            cell = {"C": C, "gamma": resolved.gamma if resolved is not None else None,
                    "error": 100.0 * wrong / ds.n_rows, "accuracy": 100.0 * (ds.n_rows - wrong) / ds.n_rows,
                    "seconds": float(wall[c]), "cpu_seconds": float(cpu[c]), "fit_seconds": float(fit_s[c]),
                    "fit_cpu_seconds": float(fit_cpu[c]),
                    "viol": viol[c], "nSV": float(nsv[c])}
            if width_key == "sigma":
                cell["sigma"] = width
            cells.append(cell)
    best = min(cells, key=lambda cell: cell["error"]) if cells else None     # min keeps the first of equals
    return GridResult(cells=cells, best=best, nr_fold=nr_fold, folds=folds)


HEADER = f"{'C':>12} {'gamma':>12} {'CV error':>10} {'seconds':>9}\n"


def cell_line(cell):
    return f"{cell['C']:>12g} {cell['gamma']:>12g} {cell['error']:>9.4g}% {cell['seconds']:>9.3f}\n"


def grid_table(result):
    """The table llsvm-train --grid prints on stdout: every cell, then the best."""
    lines = [f"Grid search with {result.nr_fold}-fold cross validation: {len(result.cells)} cells\n", HEADER]
    lines += [cell_line(c) for c in result.cells]
    b = result.best
    lines.append(f"Best C = {b['C']:g} gamma = {b['gamma']:g}  CV error = {b['error']:g}%  "
                 f"(Cross Validation Accuracy = {b['accuracy']:g}%)\n")
    return "".join(lines)
