"""The solvers' code, found from their specs: a spec (llsvm/params.py) names its driver and --json metrics as
"module:attribute" of llsvm.solvers, and this module imports that module on first use. So `llsvm-train --help`
imports no solver, and a `-s 1` run imports dcd.py alone, not the other twelve drivers (issue 26: start-up).

This is the one place that goes from a spec to its code: the training layer (trainer, grid) and the CLI call
driver(spec), metrics(spec) and json_fields(spec); the drivers never import it (docs/architecture.md, section 2).
A new solver is one kernel in cext/, one driver module here, and one entry in llsvm/params.py (docs/solvers.md has
the recipe).
"""
import importlib

from ..params import get

# the keys every --json file of llsvm-train has (docs/formats.md, section 4); a spec's json_fields come on top
DESIGN_KEYS = ("solver", "n_rows", "n_features", "nnz", "load_seconds", "train_seconds", "n_iter", "primal", "dual",
               "gap", "max_violation", "nSV", "converged", "peak_rss_mb")


def load(ref):
    """The object a "module:attribute" reference names in llsvm.solvers (the module imported on first use)."""
    module, _, attr = ref.partition(":")
    return getattr(importlib.import_module(f"{__package__}.{module}"), attr)


def driver(spec):
    """The driver of a spec (an -s value, a SolverSpec or Params.solver)."""
    return load(get(spec).driver_ref)


def metrics(spec):
    """metrics(model, params, ds) -> the --json dict of a spec's runs."""
    return load(get(spec).metrics_ref)


def json_fields(spec):
    """The --json keys of a spec beyond DESIGN_KEYS: JSON_FIELDS of its metrics' module."""
    module = get(spec).metrics_ref.partition(":")[0]
    return load(f"{module}:JSON_FIELDS")


def cluster_run(spec):
    """The run in parts (smo.PairsRun's interface) that llsvm.dask splits a "pairs" or "tree" spec's run by."""
    return load(get(spec).cluster_run)
