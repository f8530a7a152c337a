"""The parameters of a training run and their checks: every `-s` value as data (SolverSpec, REGISTRY), the solvers'
defaults, and Params (LIBLINEAR's fields, checked in LIBLINEAR's order and words, plus the solver's own options).

This module imports no driver (docs/architecture.md, section 2): a spec names its code (driver, --json metrics) as
"module:attribute" text that llsvm/solvers/registry.py resolves. The drivers import their defaults and Params from
here, never the other way round.

Three kinds of driver (SolverSpec.access):
- "random": the data is loaded (in memory or memory-mapped) and the trainer runs LIBLINEAR's machinery around the
  driver: classes and one-vs-rest, -wi weights, sub-seeds, threads over classes, -v folds and the -C search. The
  driver is `train_one(sub, params, seed, reporter, warm) -> FitResult` for one binary Subproblem.
- "loaded": the data is loaded (in memory or memory-mapped) and the driver does all of it (classes, one-vs-one):
  `fit(ds, params, reporter, n_features=None) -> model`; the trainer runs -v with LIBSVM's stratified folds
  (n_features: the whole set's, for defaults that depend on it).
- "stream": the driver is a class `Driver(params, reporter, zero_based=, progress=)` whose `fit(data)` takes a path
  ('-' for stdin), a BinaryDataset or in-memory rows, streams them within its memory budget, and returns the Model.
  Text lines are limited to textio.line_limit(its memory budget) unless `max_line=` is given.
"""
import os
import re
import sys
from dataclasses import dataclass, field, replace

from .errors import ParameterError
from .options import (BY_DEST, DUAL_MAX_ITER, ONLINE, OPTION, PRECOMPUTED, H1Options, LLSVMOptions, OneDOptions,
                      OnlineOptions, SMOOptions, StreamOptions, check_count, check_finite, is_finite, refuse_precomputed,
                      solvers_text, value_text)

# -- the solvers' defaults (their one home) ---------------------------------------------------------------------
NEWTON_MAX_ITER = 1000         # LIBLINEAR's Newton (-s 0, 2, 11), and -s 1 / -s 7 when they switch to it
ONECLASS_MAX_ITER = 1000       # -s 21
MCSVM_MAX_ITER = 100000        # -s 4
L1R_MAX_ITER = 1000            # -s 5
L1R_LR_MAX_ITER = 100          # -s 6 (Newton iterations)
OUT_OF_CORE_MAX_ITER = 100     # -s llsvm, streamsvm, bm
LOCAL_MAX_ITER = 4096          # -s local1d: 2^12, the spec's B1 budget
PROJECT_MAX_ITER = 1024        # -s project1d: 2^10 directions, B5
PASS_EPS = 0.1                 # -s llsvm, streamsvm, bm: -s 3's default, max |PG_i| over every row of a pass
KERNEL_EPS = 1e-3              # -s smo, h1tree: LIBSVM's default
# arrays of the weight vector's size one binary problem holds while it runs (the trainer checks them against the
# memory before it starts): solve_newton's w, g, s, r, M, w_zero, z, d, Hd, w_alpha and a line-search temporary;
# -s 3's w and the certificate's w(alpha); -s 5/6's w and the column sums and caches of the L1 solvers
NEWTON_WORK_VECTORS = 11
DUAL_WORK_VECTORS = 2
L1R_WORK_VECTORS = 6


@dataclass(frozen=True)
class SolverSpec:
    """What the CLI, the trainer and the tests need to know of one solver. driver_ref and metrics_ref name code as
    "module:attribute" of llsvm.solvers (llsvm/solvers/registry.py imports it when asked). Which options it takes
    is said by the options' rows (llsvm/options.py: Option.solvers)."""
    name: str                      # the -s value as users type it: LIBLINEAR's number ("3") or a name ("llsvm")
    number: int                    # LIBLINEAR's solver number; None for llsvm's own solvers
    title: str                     # one line of llsvm-train --help
    driver_ref: str                # the driver (see the module docstring)
    access: str                    # "random", "loaded" or "stream"
    solver_type: str               # the model file's solver_type: the problem it solves, in LIBLINEAR's names
    default_eps: float             # None: -e does not apply (the online solvers run a fixed number of steps)
    eps_meaning: str               # what -e measures
    default_max_iter: object       # an int, or the rule as text for --help (-s smo: LIBSVM's max(10^7, 100 l))
    metrics_ref: str               # metrics(model, params, ds) -> the --json dict; its module's JSON_FIELDS: the
                                   # keys beyond registry.DESIGN_KEYS
    options: type = None           # its own options class (llsvm/options.py), None when it has none
    model_kind: str = "linear"     # "linear" (a hashed linear model with --hash-bits), "kernel" (LIBSVM's model
                                   # file), "tree" (llsvm_tree_model)
    default_threads: int = 1       # --threads when not given
    threads_change_model: bool = False    # whether --threads changes the model (for a seed)
    same_model_any_input: bool = True     # text, binary and stdin input of the same rows give the same model
    progress: tuple = ("reading", "B")    # the progress bar of its first pass over a streamed input: desc, unit
    free_bias: bool = False        # it fits an unregularised bias b: the model always has a bias B (-B B > 0,
                                   # default 1) with w_{n+1} = b / B
    work_vectors: int = 1          # float64 arrays of the weight vector's size one binary problem of a random-access
                                   # driver holds while it runs (the trainer checks them against the memory)
    task: str = "ovr"              # what a random-access driver's problems are: "ovr" (classes one-vs-rest, each a
                                   # binary Subproblem), "regression" (one problem over real targets, -s 11/12/13),
                                   # "oneclass" (one problem over all rows, rho in the model, -s 21), "multiclass"
                                   # (one problem over all classes, a weight column per class, -s 4)
    zero_weight: str = None        # None: a class weight -wi 0 (C = 0 for the class) is fine; else why it is not
    cluster: str = "classes"       # how llsvm.dask splits a run (CLUSTER_SPLITS, docs/distributed.md): "classes"
                                   # (a task per one-vs-rest problem when there are several, else one task),
                                   # "cocoa" / "newton" (one two-class problem, -s 11's one regression problem,
                                   # by CoCoA+ / distributed Newton over the workers' blocks; more classes: as
                                   # "classes"), "pairs" (a task per class pair of the run in parts cluster_run
                                   # names), "tree" (-s h1tree on more than two classes: a task per pair's decision
                                   # list, its RBF node's pairs by cluster_run), "whole" (the run as one task)
    cluster_run: str = None        # "pairs" and "tree": the run in parts (smo.PairsRun's interface) as
                                   # "module:attribute" of llsvm.solvers

    @property
    def key(self):
        """The Params.solver value: LIBLINEAR's number, or the name."""
        return self.number if self.number is not None else self.name

    @property
    def class_labels(self):
        """Whether its training labels are class labels: their integer parts, as LIBLINEAR casts them, within the
        int64 range (text input is read with class_labels, which refuses a label beyond it at its line and
        column)."""
        return self.task in ("ovr", "multiclass")

    @property
    def class_weights(self):
        """Whether it takes class weights (-wi): class labels, and not one of NO_CLASS_WEIGHTS."""
        return self.class_labels and self.name not in NO_CLASS_WEIGHTS

    @property
    def streams(self):
        return self.access == "stream"

    @property
    def find_C(self):
        return self.accepts_option("-C")

    def accepts_option(self, flag):
        """Whether it takes an option (a row of llsvm/options.py that names its solvers, or any other)."""
        solvers = OPTION[flag].solvers
        return solvers is None or self.name in solvers

    @property
    def accepts(self):
        """The flags of the options that name their solvers and take this one."""
        return tuple(o.flag for o in OPTION.values() if o.solvers is not None and self.name in o.solvers)


# what -e measures for the out-of-core hinge-loss solvers (the same as -s 3's "dual maximal violation", checked over
# every row at the model the pass certifies)
PASS_VIOLATION = "largest projected-gradient violation over every row of a pass"

REGISTRY = {}

# the solvers over class labels that have no per-class cost, and why: -wi is refused for them (Params.check)
NO_CLASS_WEIGHTS = {**{name: "its step size is one for every row" for name in ONLINE},
                    "h1tree": "its node problems weigh the hard class against the soft one by --h1-c"}


# llsvm.dask's ways of splitting a run (SolverSpec.cluster)
CLUSTER_SPLITS = ("classes", "cocoa", "newton", "pairs", "tree", "whole")


def register(spec):
    if spec.key in REGISTRY:
        raise ValueError(f"solver {spec.name} registered twice")
    if spec.cluster not in CLUSTER_SPLITS or (spec.cluster_run is None) != (spec.cluster not in ("pairs", "tree")):
        raise ValueError(f"solver {spec.name}: cluster {spec.cluster!r} with cluster_run {spec.cluster_run!r}")
    REGISTRY[spec.key] = spec
    return spec


def _liblinear(number, title, driver, solver_type, default_eps, eps_meaning, default_max_iter, work_vectors=1,
               task="ovr", zero_weight=None, threads_change_model=False, cluster="classes"):
    """A LIBLINEAR solver type run in memory: LIBLINEAR's number and solver_type, liblinear_metrics."""
    return SolverSpec(name=str(number), number=number, title=title, driver_ref=driver, access="random",
                      solver_type=solver_type, default_eps=default_eps,
                      eps_meaning=f"{eps_meaning} (default {default_eps:g})", default_max_iter=default_max_iter,
                      metrics_ref="common:liblinear_metrics", work_vectors=work_vectors, task=task,
                      zero_weight=zero_weight, threads_change_model=threads_change_model, cluster=cluster)


_PRIMAL_EPS = "|f'(w)|_2 <= eps*min(pos,neg)/l*|f'(w0)|_2"
_L1R_EPS = "|f'(w)|_1 <= eps*min(pos,neg)/l*|f'(w0)|_1, f' the minimum-norm subgradient"


# -s 0, 2, 11 with --threads N > 1 on one problem: its rows in 2N blocks summed in block order (dnewton), the
# single-thread iterates up to the order of a sum; -s 1, 3: PASSCoDe-Atomic when common.PASSCODE is on (off by
# default; not repeatable run to run)
register(_liblinear(0, "L2-regularized logistic regression (primal)", "newton:train_one", "L2R_LR", 0.01,
                    _PRIMAL_EPS, NEWTON_MAX_ITER, work_vectors=NEWTON_WORK_VECTORS, threads_change_model=True,
                    cluster="newton"))
register(_liblinear(1, "L2-regularized L2-loss support vector classification (dual)", "dcd:train_one",
                    "L2R_L2LOSS_SVC_DUAL", 0.1, "dual maximal violation", DUAL_MAX_ITER,
                    work_vectors=NEWTON_WORK_VECTORS, threads_change_model=True, cluster="cocoa"))  # it may switch to -s 2's Newton, as LIBLINEAR does
register(_liblinear(2, "L2-regularized L2-loss support vector classification (primal)", "newton:train_one",
                    "L2R_L2LOSS_SVC", 0.01, _PRIMAL_EPS, NEWTON_MAX_ITER, work_vectors=NEWTON_WORK_VECTORS,
                    threads_change_model=True, cluster="newton"))
register(_liblinear(3, "L2-regularized L1-loss support vector classification (dual)", "dcd:train_one",
                    "L2R_L1LOSS_SVC_DUAL", 0.1, "dual maximal violation", DUAL_MAX_ITER,
                    work_vectors=DUAL_WORK_VECTORS, threads_change_model=True, cluster="cocoa"))
register(_liblinear(4, "support vector classification by Crammer and Singer", "l2dual:mcsvm_train_one", "MCSVM_CS",
                    0.1, "dual maximal violation, max_i (max_m G_i^m - min_m G_i^m)", MCSVM_MAX_ITER,
                    task="multiclass"))
register(_liblinear(5, "L1-regularized L2-loss support vector classification", "l1r:train_one", "L1R_L2LOSS_SVC",
                    0.01, _L1R_EPS, L1R_MAX_ITER, work_vectors=L1R_WORK_VECTORS))
register(_liblinear(6, "L1-regularized logistic regression", "l1r:train_one", "L1R_LR", 0.01, _L1R_EPS,
                    L1R_LR_MAX_ITER, work_vectors=L1R_WORK_VECTORS))
register(_liblinear(7, "L2-regularized logistic regression (dual)", "l2dual:lr_dual_train_one", "L2R_LR_DUAL", 0.1,
                    "max |g'(z)| of the one-variable subproblems", DUAL_MAX_ITER,
                    work_vectors=NEWTON_WORK_VECTORS,     # it may switch to -s 0's Newton, as LIBLINEAR does
                    # LIBLINEAR's solve_l2r_lr_dual takes log(alpha / (C - alpha)) with 0 < alpha < C: at C = 0 it
                    # is 0/0 and its weights NaN
                    zero_weight="its dual variables lie strictly between 0 and C, so every class needs C > 0"))
register(_liblinear(11, "L2-regularized L2-loss support vector regression (primal)", "newton:train_one",
                    "L2R_L2LOSS_SVR", 0.0001, "|f'(w)|_2 <= eps*|f'(w0)|_2", NEWTON_MAX_ITER,
                    work_vectors=NEWTON_WORK_VECTORS, task="regression", threads_change_model=True,
                    cluster="newton"))
register(_liblinear(12, "L2-regularized L2-loss support vector regression (dual)", "l2dual:svr_dual_train_one",
                    "L2R_L2LOSS_SVR_DUAL", 0.1, "|violation|_1 <= eps*|initial violation|_1",
                    DUAL_MAX_ITER, work_vectors=NEWTON_WORK_VECTORS, task="regression"))
register(_liblinear(13, "L2-regularized L1-loss support vector regression (dual)", "l2dual:svr_dual_train_one",
                    "L2R_L1LOSS_SVR_DUAL", 0.1, "|violation|_1 <= eps*|initial violation|_1",
                    DUAL_MAX_ITER, work_vectors=DUAL_WORK_VECTORS, task="regression"))
register(_liblinear(21, "one-class support vector machine (dual)", "l2dual:oneclass_train_one", "ONECLASS_SVM", 0.01,
                    "max -G over alpha<1 minus min -G over alpha>0", ONECLASS_MAX_ITER,
                    work_vectors=DUAL_WORK_VECTORS, task="oneclass"))
register(SolverSpec(
    name="llsvm", number=None,
    title="one-pass harsh shrinking + block optimization of the -s 3 problem, out of core",
    driver_ref="onepass:OnePassSolver", access="stream", solver_type="L2R_L1LOSS_SVC_DUAL",
    default_eps=PASS_EPS, eps_meaning=f"{PASS_VIOLATION} (default {PASS_EPS:g})",
    default_max_iter=OUT_OF_CORE_MAX_ITER, options=LLSVMOptions, metrics_ref="onepass:metrics",
    progress=("first pass", "B")))
register(SolverSpec(
    name="streamsvm", number=None,
    title="reader/trainer dual cached loops for the -s 3 problem, out of core",
    driver_ref="streamsvm:StreamSVMSolver", access="stream", solver_type="L2R_L1LOSS_SVC_DUAL",
    default_eps=PASS_EPS, eps_meaning=f"{PASS_VIOLATION} (default {PASS_EPS:g})",
    default_max_iter=OUT_OF_CORE_MAX_ITER, options=StreamOptions, metrics_ref="streamsvm:metrics",
    default_threads=2, threads_change_model=True, progress=("reading", "rows")))
register(SolverSpec(
    name="bm", number=None, title="block minimization for the -s 3 problem, out of core",
    driver_ref="bm:BlockMinimizationSolver", access="stream", solver_type="L2R_L1LOSS_SVC_DUAL",
    default_eps=PASS_EPS, eps_meaning=f"{PASS_VIOLATION} (default {PASS_EPS:g})",
    default_max_iter=OUT_OF_CORE_MAX_ITER, options=StreamOptions, metrics_ref="bm:metrics"))

# The kernel solvers run one thread by default, as LIBSVM's svm-train does: --threads N shares each long kernel
# column among N OpenMP threads, which pays on an idle machine only (issue 26: beside two busy processes, every
# column waited for a descheduled thread, 34x the one-thread time)
register(SolverSpec(
    name="smo", number=None,
    title="C-SVC with a kernel (LIBSVM's svm-train -s 0): SMO with second-order working sets and shrinking, "
          "one-vs-one; LIBSVM's model file",
    driver_ref="smo:fit", access="loaded", solver_type="C_SVC", default_eps=KERNEL_EPS,
    eps_meaning=f"LIBSVM's maximal violating pair, m(alpha) - M(alpha) (default {KERNEL_EPS:g})",
    default_max_iter="max(10^7, 100 l)", options=SMOOptions, metrics_ref="smo:metrics", model_kind="kernel",
    cluster="pairs", cluster_run="smo:PairsRun"))
register(SolverSpec(
    name="nu_svc", number=None,
    title="nu-SVC with a kernel (LIBSVM's svm-train -s 1): Solver_NU per pair, one-vs-one; LIBSVM's model file",
    driver_ref="smo:fit", access="loaded", solver_type="NU_SVC", default_eps=KERNEL_EPS,
    eps_meaning=f"LIBSVM's maximal violating pair within a class (default {KERNEL_EPS:g})",
    default_max_iter="max(10^7, 100 l)", options=SMOOptions, metrics_ref="smo:metrics", model_kind="kernel",
    cluster="pairs", cluster_run="smo:PairsRun"))

def _libsvm(name, title, solver_type, task, default_max_iter):
    """A LIBSVM type of one problem over all rows (llsvm/solvers/single.py): LIBSVM's model file."""
    return SolverSpec(
        name=name, number=None, title=title, driver_ref="single:fit", access="loaded", solver_type=solver_type,
        default_eps=KERNEL_EPS, eps_meaning=f"LIBSVM's maximal violating pair, m(alpha) - M(alpha) (default "
        f"{KERNEL_EPS:g})", default_max_iter=default_max_iter, options=SMOOptions, metrics_ref="single:metrics",
        model_kind="kernel", task=task, cluster="whole")


register(_libsvm("epsilon_svr", "epsilon-SVR with a kernel (LIBSVM's svm-train -s 3): SMO over the 2l variables; "
                 "LIBSVM's model file", "EPSILON_SVR", "regression", "max(10^7, 200 l)"))
register(_libsvm("nu_svr", "nu-SVR with a kernel (LIBSVM's svm-train -s 4): Solver_NU over the 2l variables; LIBSVM's "
                 "model file", "NU_SVR", "regression", "max(10^7, 200 l)"))
register(_libsvm("one_class", "one-class SVM with a kernel (LIBSVM's svm-train -s 2): SMO from LIBSVM's start; "
                 "LIBSVM's model file", "ONE_CLASS", "oneclass", "max(10^7, 100 l)"))

register(SolverSpec(
    name="h1tree", number=None,
    title="a decision list of H1-SVM hyperplanes per pair of classes (Fehr et al.), optionally ending in an RBF "
          "node; llsvm's tree model file",
    driver_ref="h1tree:fit", access="loaded", solver_type="H1_TREE", default_eps=KERNEL_EPS,
    eps_meaning=f"each node's maximal violating pair (default {KERNEL_EPS:g})",
    default_max_iter="max(10^7, 100 m_h) per node", options=H1Options, metrics_ref="h1tree:metrics",
    model_kind="tree", cluster="tree", cluster_run="h1tree:rbf_run"))


def _online(name, title):
    """An online kernel SVM of issue 16 (llsvm/solvers/online.py): LIBSVM's model file, one-vs-one."""
    return SolverSpec(
        name=name, number=None, title=title, driver_ref="online:fit", access="loaded", solver_type="C_SVC",
        default_eps=None, eps_meaning="none (they run --epochs passes; -e is refused)",
        default_max_iter="--epochs x rows steps per pair", options=OnlineOptions, metrics_ref="online:metrics",
        model_kind="kernel", cluster="pairs", cluster_run="online:OnlineRun")


register(_online("olsvm", "OL SVM (Kecman and Melki's List 3b): online kernel perceptron with margin 1 and step "
                          "C sqrt(2/t), output cache, bias update; LIBSVM's model file"))
register(_online("olsvm-rhl", "OL SVM List 3a: online regularized hinge loss with step C sqrt(2/t), no bias"))
register(_online("norma", "NORMA (List 1): faithful, or Kivinen's step eta0/sqrt(t) and decay with --eta0 and/or "
                          "--lambda"))
register(_online("pegaz", "Pegaz (List 2): kernel Pegasos without projection, step C sqrt(2/t)"))
register(_online("pegasos", "Pegasos: lambda = 1/(C l), step 1/(lambda t), mini-batches of -k rows, optional "
                            "projection"))


def _oned(name, title, default_max_iter):
    """A solver of issue 17 (llsvm/solvers/oned.py): LIBLINEAR's model file with a free bias, one-vs-rest."""
    return SolverSpec(
        name=name, number=None, title=title, driver_ref="oned:train_one", access="random",
        solver_type="L2R_L1LOSS_SVC_DUAL", default_eps=None,
        eps_meaning="none (they run --max-iter steps; -e is refused)", default_max_iter=default_max_iter,
        options=OneDOptions, metrics_ref="oned:metrics", free_bias=True, work_vectors=2)


register(_oned("local1d", "LocalSVM (Schneider et al., Algorithm 3): L1-loss SVM with a free bias by coordinate "
                          "steps of a direction, each solved exactly on its 1-D projection (sorted scan)",
               LOCAL_MAX_ITER))
register(_oned("project1d", "ProjectSVM (Algorithm 2): the best of --max-iter random Gaussian directions, each "
                            "solved on its 1-D projection", PROJECT_MAX_ITER))


def specs():
    """Every registered solver, LIBLINEAR's numbers first, in the order of the help text."""
    return list(REGISTRY.values())


_NUMBER = re.compile(r"[+-]?[0-9]+")
ALIASES = {"c_svc": "smo"}         # LIBSVM's svm_type name of -s smo (svm-train -s 0)


def get(value):
    """The spec of an -s value (LIBLINEAR's number as int or text, or a name); ParameterError otherwise."""
    if isinstance(value, SolverSpec):
        return value
    v = str(value).strip()
    if _NUMBER.fullmatch(v):                # a LIBLINEAR number ("--5" or "²" is not one: unknown, no ValueError)
        n = int(v)
        if n in REGISTRY:
            return REGISTRY[n]
        raise ParameterError("unknown solver type")
    v = ALIASES.get(v, v)
    if v in REGISTRY:
        return REGISTRY[v]
    raise ParameterError(unknown_solver(v))


def unknown_solver(value):
    """LIBLINEAR's message for an -s value that names no solver, with the names close to it (-s smoo: did you mean
    'smo'?)."""
    import difflib
    close = difflib.get_close_matches(value, [s.name for s in specs() if s.number is None], n=3)
    if not close:
        return "unknown solver type"
    return f"unknown solver type {value!r}; did you mean " + " or ".join(repr(c) for c in close) + "?"


def accepting(flag):
    """The -s values of the solvers that take an option, as text for messages ("-s llsvm, -s streamsvm")."""
    return solvers_text([s.name for s in specs() if s.accepts_option(flag)])


def usable_cpus():
    """The CPUs this process may run on (its affinity), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


@dataclass
class Params:
    """Training parameters, LIBLINEAR's names and defaults (eps None: the solver's default), and the solver's own
    options (`options`: an instance of its spec's options class; None: the defaults). The defaults are the option
    rows' (llsvm/options.py)."""
    solver: object = OPTION["-s"].default
    C: float = OPTION["-c"].default
    eps: float = None
    bias: float = OPTION["-B"].default
    weights: list = field(default_factory=list)      # [(label, weight)], as -wi gives them
    regularize_bias: bool = OPTION["-R"].default
    max_iter: int = None                              # None: the solver's default
    seed: int = OPTION["--seed"].default
    certify: bool = OPTION["--certify"].default     # -s 3: on past LIBLINEAR's stopping point to a 1e-3 gap
    threads: int = 1
    options: object = None
    svr_p: float = OPTION["-p"].default               # -p: epsilon of the SVR loss (-s 11, 12, 13)
    nu: float = OPTION["-n"].default                  # -n: nu of the one-class SVM (-s 21)
    rand_skip: int = 0        # --libsvm-rand: svm-train's rand() calls before this training's (a -v fold's)

    @property
    def spec(self):
        return get(self.solver)

    @property
    def precomputed(self):
        """Whether the kernel is LIBSVM's precomputed one (-t 4): the training rows are kernel values, read with
        0-based indices."""
        return getattr(self.options, "kernel_type", None) == PRECOMPUTED

    def check(self):
        """Validate in LIBLINEAR's order and words; fill in the solver's defaults. Returns self."""
        spec = get(self.solver)
        self.solver = spec.key
        self._check_liblinear(spec)
        self._check_bias(spec)
        self._check_options(spec)
        if self.certify and not spec.accepts_option("--certify"):
            raise ParameterError(f"--certify applies only to {accepting('--certify')}, not to -s {spec.name}")
        if self.max_iter is not None:
            check_count("--max-iter", self.max_iter)
        check_count("--threads", self.threads, high=None)
        # more threads than CPUs never run at once (LIBLINEAR-multicore's -n takes any count too): each would only
        # cost its stack, and a thousand of them fail to start under an address-space limit; -s streamsvm's two
        # (its reader and trainer side by side) stay two
        self.threads = min(self.threads, max(usable_cpus(), spec.default_threads))
        return self

    def _check_liblinear(self, spec):
        """LIBLINEAR's check_parameter, and what it lets through: non-finite values, negative class weights."""
        if spec.default_eps is None:
            if self.eps is not None:
                runs = "--max-iter steps" if spec.free_bias else "--epochs passes"
                raise ParameterError(f"-e applies only to solvers with a stopping tolerance, not to -s {spec.name} "
                                     f"(it runs {runs})")
        else:
            if self.eps is None:
                self.eps = spec.default_eps
            check_finite("-e", "eps", self.eps)
            if not self.eps > 0:
                raise ParameterError("eps <= 0")
        check_finite("-c", "C", self.C)
        if not self.C > 0:
            raise ParameterError("C <= 0")
        OPTION["-p"].check(self.svr_p)
        OPTION["-n"].check(self.nu)
        if self.weights and spec.name in NO_CLASS_WEIGHTS:
            raise ParameterError(f"-wi does not apply to -s {spec.name}: {NO_CLASS_WEIGHTS[spec.name]}")
        for label, weight in self.weights:
            if not (is_finite(weight) and weight >= 0):
                raise ParameterError(f"-w{label} {value_text(weight)}: a class weight must be a finite number >= 0")
            if weight == 0 and spec.zero_weight:
                raise ParameterError(f"-w{label} {value_text(weight)}: -s {spec.name} needs a class weight > 0 "
                                     f"({spec.zero_weight})")

    def _check_bias(self, spec):
        """-B and -R: the one-class SVM has no bias, a free bias needs B > 0, a kernel SVM's bias is its rho."""
        if spec.task == "oneclass" and spec.model_kind == "linear" and self.bias >= 0:
            raise ParameterError("prob->bias >=0, but this is ignored in ONECLASS_SVM")
        check_finite("-B", "the bias", self.bias)
        if not self.regularize_bias:
            if self.bias != 1.0:
                raise ParameterError("To not regularize bias, must specify -B 1 along with -R")
            if not spec.accepts_option("-R"):
                raise ParameterError("-R option supported only for solver L2R_LR, L2R_L2LOSS_SVC, L1R_L2LOSS_SVC, "
                                     "L1R_LR, and L2R_L2LOSS_SVR")
        if spec.free_bias:
            if self.bias == 0:
                raise ParameterError(f"-B 0: -s {spec.name} fits a free bias b and writes it as w_(n+1) = b / B, "
                                     "so B must be > 0 (default 1)")
            if 0 < self.bias < sys.float_info.min:
                # 1 / B overflows: w_(n+1) = b / B would be infinite for any b but 0
                raise ParameterError(f"-B {value_text(self.bias)}: -s {spec.name} writes its free bias b as "
                                     f"w_(n+1) = b / B, which overflows for so small a B: B must be at least "
                                     f"{sys.float_info.min:.17g} (default 1)")
            if self.bias < 0:
                self.bias = 1.0
        if spec.model_kind in ("kernel", "tree") and self.bias >= 0:
            raise ParameterError(f"-B applies only to the linear solvers, not to -s {spec.name} (a kernel SVM's "
                                 "bias is its rho)")

    def _check_options(self, spec):
        """The solver's own options: its class, each row's check, and no option another solver takes (given
        through the library; the CLI refuses them first, naming the solvers that take them)."""
        if spec.options is None:
            if self.options is not None:
                raise ParameterError(f"-s {spec.name} takes no solver options")
            return
        if self.options is None:
            self.options = spec.options()
        elif not isinstance(self.options, spec.options):
            raise ParameterError(f"-s {spec.name} takes {spec.options.__name__}, not {type(self.options).__name__}")
        self.options.check()
        if getattr(self.options, "kernel_type", None) == PRECOMPUTED:
            refuse_precomputed(spec.name)
        for flag in self.options.given():
            if not spec.accepts_option(flag):
                raise ParameterError(f"{flag} does not apply to -s {spec.name}")

    def but(self, **changes):
        """A copy with some fields changed (the options object is shared)."""
        return replace(self, **changes)


def estimator_parameters(spec):
    """{dest: default} of the parameters a solver takes: the Params fields of the option rows that apply to it and
    its options class's fields (llsvm/options.py), with their defaults for it (None: the solver's own, e.g. -e):
    the parameters of the scikit-learn estimator of a spec (issue 30)."""
    spec = get(spec)
    rows = [r for r in OPTION.values() if r.where == "params" and r.flag not in ("-s", "--weight")
            and spec.accepts_option(r.flag)]
    out = {r.dest: r.default_for(spec.name) for r in rows}
    if spec.options is not None:
        out.update({r.dest: getattr(spec.options(), r.dest) for r in spec.options.rows() if spec.accepts_option(r.flag)})
    return out


def echo(params, *dests, options=None):
    """{dest: value} of the parameters a --json file echoes, by the option rows' fields (llsvm/options.py): a Params
    field or a field of the solver's options (`options`: another instance of them, e.g. the kernel options with
    gamma resolved)."""
    opts = params.options if options is None else options
    return {d: getattr(params if BY_DEST[d].where == "params" else opts, d) for d in dests}
