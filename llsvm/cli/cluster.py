"""llsvm-train --dask ADDRESS: the command's run on a Dask cluster (llsvm.dask), -v, --grid and -C included."""
import functools

from .declare import find_C_command


def train_command(path, req, grid, reporter):
    """llsvm-train --dask: the model, the GridResult of --grid, -v's cross_validation result, or -C's
    find_parameter_C result (its lines printed); Dask's own log lines and warnings silenced (quiet_logs), and for a
    local cluster the resource tracker's (quiet_resource_tracker)."""
    from .. import dask
    dask.quiet_logs()
    if req.dask == dask.LOCAL:
        dask.quiet_resource_tracker()
    if req.find_C:
        path = dask.one_file(dask.binary_files(path))          # refused before the search's first line
        with dask.Session(None, req.dask, req.workers, reporter) as s:
            return find_C_command(functools.partial(dask.find_parameter_C, client=s.client,
                                                    weight_file=req.weight_file), path, req, reporter)
    where = {"address": req.dask, "workers": req.workers, "params": req.params, "reporter": reporter,
             "weight_file": req.weight_file}
    if grid is None and req.nr_fold is not None:
        return dask.cross_validation(path, req.nr_fold, **where)
    if grid is not None:
        return dask.grid_search(path, req.nr_fold or 5, grid, **where)
    return dask.train(path, want_metrics=bool(req.json_file or req.strict), local_epochs=req.local_epochs or 1, **where)
