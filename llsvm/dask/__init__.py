"""Training on a Dask cluster (`llsvm-train --dask ADDRESS`, `llsvm.dask.train(..., client=)`): docs/distributed.md.

The wing has two modules, the client's (client.py: the session, the plans, the model's assembly) and the
workers' (tasks.py: the tasks and the state a worker keeps); this facade exports their public names lazily, so
that `import llsvm.dask` imports neither Dask nor a solver. The command line's glue is llsvm/cli/cluster.py.

The data stay where they are: the input is llsvm binary files on storage every worker can read; a worker maps the
file (the page cache holds one copy per machine), or reads its own blocks (CoCoA+), and no row passes through the
client or the scheduler, which reads the files' headers and footers only. What crosses the network is parameters,
seeds, weight vectors, certificates, the text the solvers print, the support vectors of a kernel model and -v's
predictions. Text input is refused with the command that converts it: each one-vs-rest task would otherwise parse
the whole text again, and a binary file's blocks are what give a worker its own range of rows.

What is distributed, and how (the solver's SolverSpec.cluster; each the single-process result where the
algorithm is the same):
- more than two classes of a random-access linear type: one task per class (`problem_task`), the problem and seed
  the trainer would use in one process;
- more than two classes of an out-of-core solver (-s llsvm, streamsvm, bm): one task per class (`outofcore_task`),
  the driver training one-vs-rest problem k alone (its `only`: the problem's seed, and the budget and blocks of
  the whole run), streaming or mapping the file on the worker under --memory; the client assembles the model as
  the driver does (`assemble`);
- -s smo, nu_svc and the online lists (olsvm, olsvm-rhl, norma, pegaz, pegasos): one task per class pair
  (`pair_task`), its draws from the RNG state the pair starts from in one process (ovo.pair_states: the draws of
  the pairs before it replayed, without training), then the model on a worker (`pairs_model_task`);
- -s h1tree on more than two classes: one task per pair's decision list (`tree_list_task`; --rbf-depth auto: also
  per pair's list over the split's training rows, and `tree_cuts_task`, which trains the split's RBF node), the
  trees on the client, the RBF node of every row as -s smo's pairs;
- -v: one task per fold (`cv_task`); --grid: one task per kernel width and fold (`grid_task`); -C: at each value
  of C one task per worker thread (`csearch_task`) running the folds whose home it is, each fold's warm start kept
  on its worker;
- one two-class -s 1 / -s 3 problem: CoCoA+ (`DaskParts`, `cocoa_task`, over llsvm.solvers.cocoa's loop), each
  part's dual variables kept on its worker;
- one two-class -s 0 / -s 2 problem, or -s 11: distributed Newton (`DaskNewtonParts`, `newton_task`, over
  llsvm.solvers.dnewton's loop), each part's state kept on its worker;
- anything else: the whole run as one task on a worker (`whole_task`).

Every task but CoCoA+'s, Newton's and -C's is a pure function of (file, parameters, seed): a task whose worker
dies is run again by Dask on another and gives the same result. A CoCoA+ or Newton run or a -C search that loses
a worker (and its state) starts again, with the same rounds or steps. Either way the run ends with the same model
or the same C.
"""
from ..lazy import exports

__getattr__, __dir__ = exports(__name__, {
    "client": ("COCOA_MAX_ROUNDS", "LOCAL", "MAX_RESTARTS", "WORKERS_PER_CPU", "WORKER_MEMORY", "ClusterError",
               "DaskFolds", "DaskNewtonParts", "DaskParts", "SearchResult", "Session", "binary_files", "block_parts",
               "check_address", "connect", "cross_validation", "find_parameter_C", "grid_search", "headers",
               "local_only", "local_workers", "one_file", "quiet_logs", "quiet_resource_tracker", "train"),
    "tasks": ("StateLost", "forget"),
})

__all__ = ["train", "cross_validation", "grid_search", "find_parameter_C", "connect", "Session", "ClusterError",
           "StateLost"]
