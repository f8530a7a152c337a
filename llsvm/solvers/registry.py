"""The solver registry: every `-s` value, LIBLINEAR's numbers and llsvm's names, maps to one SolverSpec.

The CLI builds `-s` parsing, its help text, which options apply, and the --json metrics from these entries; the
trainer dispatches on them. A new solver is one kernel in cext/, one driver module here, and one entry below
(docs/solvers.md has the recipe).

An entry is data: what the CLI needs to parse options and write its help (names, titles, defaults, which options
apply) is written here, and the code (the driver, its options class, its --json metrics and their keys) is named
as "module:attribute" of llsvm.solvers and imported only when it is asked for. So `llsvm-train --help` imports no
solver, and a `-s 1` run imports dcd.py alone, not the other twelve drivers (issue 26: start-up). The defaults a
driver needs itself (DUAL_MAX_ITER, NEWTON_MAX_ITER) have their one home here; drivers import them from here, never
the other way round.

Three kinds of driver:
- access "random": the data is loaded (in memory or memory-mapped) and the trainer runs LIBLINEAR's machinery
  around the driver: classes and one-vs-rest, -wi weights, sub-seeds, threads over classes, -v folds and the -C
  search. The driver is `train_one(sub, params, seed, reporter, warm) -> FitResult` for one binary Subproblem.
- access "loaded": the data is loaded (in memory or memory-mapped) and the driver does all of it (classes,
  one-vs-one): `fit(ds, params, reporter, n_features=None) -> model`; the trainer runs -v with LIBSVM's stratified
  folds (n_features: the whole set's, for defaults that depend on it).
- access "stream": the driver is a class `Driver(params, reporter, zero_based=, progress=)` whose `fit(data)`
  takes a path ('-' for stdin), a BinaryDataset or in-memory rows, streams them within its memory budget, and
  returns the Model. Text lines are limited to textio.line_limit(its memory budget) unless `max_line=` is given.
"""
import importlib
import math
import numbers
import os
import re
import sys
from dataclasses import dataclass, field, fields, replace

from ..errors import ParameterError

# -- the solvers' defaults (their one home) ---------------------------------------------------------------------
DUAL_MAX_ITER = 300            # LIBLINEAR's dual coordinate descent (-s 1, 3, 7, 12, 13): outer iterations
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
INT_MAX = 2147483647           # LIBLINEAR's and LIBSVM's int: the largest count an option takes (--max-iter, -d, ...)
# arrays of the weight vector's size one binary problem holds while it runs (the trainer checks them against the
# memory before it starts): solve_newton's w, g, s, r, M, w_zero, z, d, Hd, w_alpha and a line-search temporary;
# -s 3's w and the certificate's w(alpha); -s 5/6's w and the column sums and caches of the L1 solvers
NEWTON_WORK_VECTORS = 11
DUAL_WORK_VECTORS = 2
L1R_WORK_VECTORS = 6

# the keys every --json file of llsvm-train has (docs/formats.md, section 4); a spec's json_fields come on top
DESIGN_KEYS = ("solver", "n_rows", "n_features", "nnz", "load_seconds", "train_seconds", "n_iter", "primal", "dual",
               "gap", "max_violation", "nSV", "converged", "peak_rss_mb")

# llsvm-train's options that only some solvers take, with the Params field or options field each one sets; a
# solver accepts those its spec lists in `accepts`, every other solver refuses them
SOLVER_OPTIONS = {
    "-R": "regularize_bias",
    "-p": "svr_p",
    "-n": "nu",
    "-v": "nr_fold",
    "-C": "find_C",
    "--memory": "memory",
    "--tmp-dir": "tmp_dir",
    "--inner-iter": "inner_iter",
    "--keep-active-set": "keep_active_set",
    "--hash-bits": "hash_bits",
    "--inner-eps": "inner_eps",
    "--one-pass": "one_pass",
    "--max-passes": "max_passes",
    "-B R": "radius_bias",
    "-t": "kernel_type",
    "-g": "gamma",
    "-d": "degree",
    "-r": "coef0",
    "-m": "cache_size",
    "-h": "shrinking",
    "--hard-class": "hard_class",
    "--h1-c": "h1_c",
    "--min-remove": "min_remove",
    "--max-depth": "max_depth",
    "--rbf-depth": "rbf_depth",
    "--rbf-select": "rbf_select",
    "--rbf-tol": "rbf_tol",
    "--grid": "grid",
    "--sigma": "sigma",
    "--epochs": "epochs",
    "--average": "average",
    "--original": "original",
    "--no-bias-update": "bias_update",
    "--eta0": "eta0",
    "--lambda": "lam",
    "-k": "batch",
    "--projection": "projection",
    "--oned": "oned",
    "--oned-norm": "oned_norm",
    "--max-seconds": "max_seconds",
    "--target-loss": "target_loss",
}


def load(ref):
    """The object a "module:attribute" reference names in llsvm.solvers (the module imported on first use)."""
    module, _, attr = ref.partition(":")
    return getattr(importlib.import_module(f"{__package__}.{module}"), attr)


@dataclass(frozen=True)
class SolverSpec:
    """What the CLI, the trainer and the tests need to know of one solver. The *_ref fields name code as
    "module:attribute" of llsvm.solvers; the properties of the same name without _ref import it when asked."""
    name: str                      # the -s value as users type it: LIBLINEAR's number ("3") or a name ("llsvm")
    number: int                    # LIBLINEAR's solver number; None for llsvm's own solvers
    title: str                     # one line of llsvm-train --help
    driver_ref: str                # the driver (see the module docstring)
    access: str                    # "random", "loaded" or "stream"
    solver_type: str               # the model file's solver_type: the problem it solves, in LIBLINEAR's names
    default_eps: float             # None: -e does not apply (the online solvers run a fixed number of steps)
    eps_meaning: str               # what -e measures
    default_max_iter: object       # an int, or the rule as text for --help (-s smo: LIBSVM's max(10^7, 100 l))
    options_ref: str = None        # its own options (a dataclass: fields and defaults), None when it has none
    accepts: tuple = ()            # keys of SOLVER_OPTIONS it takes
    json_fields_ref: str = None    # its --json keys beyond DESIGN_KEYS (a tuple), None when it has none
    metrics_ref: str = None        # metrics(model, params, ds) -> the --json dict (ds: the loaded data or None)
    model_kind: str = "linear"     # "linear" (a hashed linear model with --hash-bits), "kernel" (LIBSVM's model
                                   # file), "tree" (llsvm_tree_model)
    default_threads: int = 1
    threads_change_model: bool = False    # whether --threads changes the model (for a seed)
    same_model_any_input: bool = True     # text, binary and stdin input of the same rows give the same model
    progress_desc: str = "reading"  # the progress bar of its first pass over a streamed input
    progress_unit: str = "B"
    free_bias: bool = False        # it fits an unregularised bias b: the model always has a bias B (-B B > 0,
                                   # default 1) with w_{n+1} = b / B
    work_vectors: int = 1          # float64 arrays of the weight vector's size one binary problem of a random-access
                                   # driver holds while it runs (the trainer checks them against the memory)
    task: str = "ovr"              # what a random-access driver's problems are: "ovr" (classes one-vs-rest, each a
                                   # binary Subproblem), "regression" (one problem over real targets, -s 11/12/13),
                                   # "oneclass" (one problem over all rows, rho in the model, -s 21), "multiclass"
                                   # (one problem over all classes, a weight column per class, -s 4)
    zero_weight: str = None        # None: a class weight -wi 0 (C = 0 for the class) is fine; else why it is not

    @property
    def driver(self):
        return load(self.driver_ref)

    @property
    def options(self):
        return None if self.options_ref is None else load(self.options_ref)

    @property
    def metrics(self):
        return load(self.metrics_ref)

    @property
    def json_fields(self):
        return () if self.json_fields_ref is None else load(self.json_fields_ref)

    @property
    def key(self):
        """The Params.solver value: LIBLINEAR's number, or the name."""
        return self.number if self.number is not None else self.name

    @property
    def class_labels(self):
        """Whether its training labels are class labels: integers in the int range, as LIBLINEAR casts them (text
        input is read with class_labels, which refuses a label beyond it at its line and column)."""
        from ..model import UNLABELLED
        return self.solver_type not in UNLABELLED

    @property
    def cross_validation(self):
        return "-v" in self.accepts

    @property
    def find_C(self):
        return "-C" in self.accepts

    @property
    def streams(self):
        return self.access == "stream"

    def accepts_option(self, flag):
        return flag in self.accepts


_LIBLINEAR_COMMON = ("-v",)
# what -e measures for the out-of-core hinge-loss solvers (the same as -s 3's "dual maximal violation", checked over
# every row at the model the pass certifies)
PASS_VIOLATION = "largest projected-gradient violation over every row of a pass"
_OUT_OF_CORE = ("-v", "--memory", "--tmp-dir")

REGISTRY = {}


def register(spec):
    if spec.key in REGISTRY:
        raise ValueError(f"solver {spec.name} registered twice")
    REGISTRY[spec.key] = spec
    return spec


def _liblinear(number, title, driver, solver_type, default_eps, eps_meaning, default_max_iter, accepts=(),
               work_vectors=1, find_C=True, task="ovr", zero_weight=None):
    """A LIBLINEAR solver type run in memory: LIBLINEAR's number and solver_type, -v (and -C), liblinear_metrics."""
    return SolverSpec(name=str(number), number=number, title=title, driver_ref=driver, access="random",
                      solver_type=solver_type, default_eps=default_eps,
                      eps_meaning=f"{eps_meaning} (default {default_eps:g})", default_max_iter=default_max_iter,
                      accepts=_LIBLINEAR_COMMON + (("-C",) if find_C else ()) + accepts,
                      metrics_ref="common:liblinear_metrics", json_fields_ref="common:LIBLINEAR_JSON_FIELDS",
                      work_vectors=work_vectors, task=task, zero_weight=zero_weight)


_PRIMAL_EPS = "|f'(w)|_2 <= eps*min(pos,neg)/l*|f'(w0)|_2"
_L1R_EPS = "|f'(w)|_1 <= eps*min(pos,neg)/l*|f'(w0)|_1, f' the minimum-norm subgradient"


register(_liblinear(0, "L2-regularized logistic regression (primal)", "newton:train_one", "L2R_LR", 0.01,
                    _PRIMAL_EPS, NEWTON_MAX_ITER, accepts=("-R",), work_vectors=NEWTON_WORK_VECTORS))
register(_liblinear(1, "L2-regularized L2-loss support vector classification (dual)", "dcd:train_one",
                    "L2R_L2LOSS_SVC_DUAL", 0.1, "dual maximal violation", DUAL_MAX_ITER,
                    work_vectors=NEWTON_WORK_VECTORS))      # it may switch to -s 2's Newton, as LIBLINEAR does
register(_liblinear(2, "L2-regularized L2-loss support vector classification (primal)", "newton:train_one",
                    "L2R_L2LOSS_SVC", 0.01, _PRIMAL_EPS, NEWTON_MAX_ITER,
                    accepts=("-R",), work_vectors=NEWTON_WORK_VECTORS))
register(_liblinear(3, "L2-regularized L1-loss support vector classification (dual)", "dcd:train_one",
                    "L2R_L1LOSS_SVC_DUAL", 0.1, "dual maximal violation", DUAL_MAX_ITER,
                    work_vectors=DUAL_WORK_VECTORS))
register(_liblinear(4, "support vector classification by Crammer and Singer", "l2dual:mcsvm_train_one", "MCSVM_CS",
                    0.1, "dual maximal violation, max_i (max_m G_i^m - min_m G_i^m)", MCSVM_MAX_ITER,
                    find_C=False, task="multiclass"))
register(_liblinear(5, "L1-regularized L2-loss support vector classification", "l1r:train_one", "L1R_L2LOSS_SVC",
                    0.01, _L1R_EPS, L1R_MAX_ITER, accepts=("-R",), find_C=False, work_vectors=L1R_WORK_VECTORS))
register(_liblinear(6, "L1-regularized logistic regression", "l1r:train_one", "L1R_LR", 0.01, _L1R_EPS,
                    L1R_LR_MAX_ITER, accepts=("-R",), find_C=False, work_vectors=L1R_WORK_VECTORS))
register(_liblinear(7, "L2-regularized logistic regression (dual)", "l2dual:lr_dual_train_one", "L2R_LR_DUAL", 0.1,
                    "max |g'(z)| of the one-variable subproblems", DUAL_MAX_ITER, find_C=False,
                    work_vectors=NEWTON_WORK_VECTORS,     # it may switch to -s 0's Newton, as LIBLINEAR does
                    # LIBLINEAR's solve_l2r_lr_dual takes log(alpha / (C - alpha)) with 0 < alpha < C: at C = 0 it
                    # is 0/0 and its weights NaN
                    zero_weight="its dual variables lie strictly between 0 and C, so every class needs C > 0"))
register(_liblinear(11, "L2-regularized L2-loss support vector regression (primal)", "newton:train_one",
                    "L2R_L2LOSS_SVR", 0.0001, "|f'(w)|_2 <= eps*|f'(w0)|_2", NEWTON_MAX_ITER,
                    accepts=("-R", "-p"), work_vectors=NEWTON_WORK_VECTORS, task="regression"))
register(_liblinear(12, "L2-regularized L2-loss support vector regression (dual)", "l2dual:svr_dual_train_one",
                    "L2R_L2LOSS_SVR_DUAL", 0.1, "|violation|_1 <= eps*|initial violation|_1",
                    DUAL_MAX_ITER, accepts=("-p",), find_C=False, work_vectors=NEWTON_WORK_VECTORS,
                    task="regression"))
register(_liblinear(13, "L2-regularized L1-loss support vector regression (dual)", "l2dual:svr_dual_train_one",
                    "L2R_L1LOSS_SVR_DUAL", 0.1, "|violation|_1 <= eps*|initial violation|_1",
                    DUAL_MAX_ITER, accepts=("-p",), find_C=False, work_vectors=DUAL_WORK_VECTORS,
                    task="regression"))
register(_liblinear(21, "one-class support vector machine (dual)", "l2dual:oneclass_train_one", "ONECLASS_SVM", 0.01,
                    "max -G over alpha<1 minus min -G over alpha>0", ONECLASS_MAX_ITER, accepts=("-n",),
                    find_C=False, work_vectors=DUAL_WORK_VECTORS, task="oneclass"))
register(SolverSpec(
    name="llsvm", number=None,
    title="one-pass harsh shrinking + block optimization of the -s 3 problem, out of core",
    driver_ref="onepass:OnePassSolver", access="stream", solver_type="L2R_L1LOSS_SVC_DUAL",
    default_eps=PASS_EPS, eps_meaning=f"{PASS_VIOLATION} (default {PASS_EPS:g})",
    default_max_iter=OUT_OF_CORE_MAX_ITER, options_ref="onepass:LLSVMOptions",
    accepts=_OUT_OF_CORE + ("--inner-iter", "--keep-active-set", "-B R", "--inner-eps", "--one-pass",
                            "--max-passes"), metrics_ref="onepass:metrics",
    json_fields_ref="onepass:JSON_FIELDS", progress_desc="first pass"))
register(SolverSpec(
    name="streamsvm", number=None,
    title="reader/trainer dual cached loops for the -s 3 problem, out of core",
    driver_ref="streamsvm:StreamSVMSolver", access="stream", solver_type="L2R_L1LOSS_SVC_DUAL",
    default_eps=PASS_EPS, eps_meaning=f"{PASS_VIOLATION} (default {PASS_EPS:g})",
    default_max_iter=OUT_OF_CORE_MAX_ITER, options_ref="outofcore:StreamOptions",
    accepts=_OUT_OF_CORE + ("--hash-bits",), metrics_ref="streamsvm:metrics", json_fields_ref="streamsvm:JSON_FIELDS",
    default_threads=2, threads_change_model=True, progress_unit="rows"))
register(SolverSpec(
    name="bm", number=None, title="block minimization for the -s 3 problem, out of core",
    driver_ref="bm:BlockMinimizationSolver", access="stream", solver_type="L2R_L1LOSS_SVC_DUAL",
    default_eps=PASS_EPS, eps_meaning=f"{PASS_VIOLATION} (default {PASS_EPS:g})",
    default_max_iter=OUT_OF_CORE_MAX_ITER, options_ref="outofcore:StreamOptions",
    accepts=_OUT_OF_CORE + ("--hash-bits", "--inner-eps"), metrics_ref="bm:metrics", json_fields_ref="bm:JSON_FIELDS"))

# The kernel solvers run one thread by default, as LIBSVM's svm-train does: --threads N shares each long kernel
# column among N OpenMP threads, which pays on an idle machine only (issue 26: beside two busy processes, every
# column waited for a descheduled thread, 34x the one-thread time)
register(SolverSpec(
    name="smo", number=None,
    title="C-SVC with a kernel (LIBSVM's svm-train -s 0): SMO with second-order working sets and shrinking, "
          "one-vs-one; LIBSVM's model file",
    driver_ref="smo:fit", access="loaded", solver_type="C_SVC", default_eps=KERNEL_EPS,
    eps_meaning=f"LIBSVM's maximal violating pair, m(alpha) - M(alpha) (default {KERNEL_EPS:g})",
    default_max_iter="max(10^7, 100 l)", options_ref="smo:SMOOptions",
    accepts=("-v", "--grid", "-t", "-g", "-d", "-r", "-m", "-h"), metrics_ref="smo:metrics",
    json_fields_ref="smo:JSON_FIELDS", model_kind="kernel"))

register(SolverSpec(
    name="h1tree", number=None,
    title="a decision list of H1-SVM hyperplanes per pair of classes (Fehr et al.), optionally ending in an RBF "
          "node; llsvm's tree model file",
    driver_ref="h1tree:fit", access="loaded", solver_type="H1_TREE", default_eps=KERNEL_EPS,
    eps_meaning=f"each node's maximal violating pair (default {KERNEL_EPS:g})",
    default_max_iter="max(10^7, 100 m_h) per node", options_ref="h1tree:H1Options",
    accepts=("-v", "-t", "-g", "-d", "-r", "-m", "-h", "--hard-class", "--h1-c", "--min-remove", "--max-depth",
             "--rbf-depth", "--rbf-select", "--rbf-tol"),
    metrics_ref="h1tree:metrics", json_fields_ref="h1tree:JSON_FIELDS", model_kind="tree"))

_ONLINE_COMMON = ("-v", "--grid", "-t", "-g", "--sigma", "-d", "-r", "-m", "--epochs", "--average", "--original")


def _online(name, title, extra=()):
    """An online kernel SVM of issue 16 (llsvm/solvers/online.py): LIBSVM's model file, one-vs-one."""
    return SolverSpec(
        name=name, number=None, title=title, driver_ref="online:fit", access="loaded", solver_type="C_SVC",
        default_eps=None, eps_meaning="none (they run --epochs passes; -e is refused)",
        default_max_iter="--epochs x rows steps per pair", options_ref="online:OnlineOptions",
        accepts=_ONLINE_COMMON + extra, metrics_ref="online:metrics", json_fields_ref="online:JSON_FIELDS",
        model_kind="kernel")


register(_online("olsvm", "OL SVM (Kecman and Melki's List 3b): online kernel perceptron with margin 1 and step "
                          "C sqrt(2/t), output cache, bias update; LIBSVM's model file", ("--no-bias-update",)))
register(_online("olsvm-rhl", "OL SVM List 3a: online regularized hinge loss with step C sqrt(2/t), no bias"))
register(_online("norma", "NORMA (List 1): faithful, or Kivinen's step eta0/sqrt(t) and decay with --eta0 and/or --lambda",
                 ("--eta0", "--lambda")))
register(_online("pegaz", "Pegaz (List 2): kernel Pegasos without projection, step C sqrt(2/t)"))
register(_online("pegasos", "Pegasos: lambda = 1/(C l), step 1/(lambda t), mini-batches of -k rows, optional "
                            "projection", ("--lambda", "-k", "--projection")))

_ONED_COMMON = ("-v", "--oned", "--oned-norm", "--max-seconds")


def _oned(name, title, default_max_iter, extra=()):
    """A solver of issue 17 (llsvm/solvers/oned.py): LIBLINEAR's model file with a free bias, one-vs-rest."""
    return SolverSpec(
        name=name, number=None, title=title, driver_ref="oned:train_one", access="random",
        solver_type="L2R_L1LOSS_SVC_DUAL", default_eps=None,
        eps_meaning="none (they run --max-iter steps; -e is refused)", default_max_iter=default_max_iter,
        options_ref="oned:OneDOptions", accepts=_ONED_COMMON + extra, metrics_ref="oned:metrics",
        json_fields_ref="oned:JSON_FIELDS", free_bias=True, work_vectors=2)


register(_oned("local1d", "LocalSVM (Schneider et al., Algorithm 3): L1-loss SVM with a free bias by coordinate "
                          "steps of a direction, each solved exactly on its 1-D projection (sorted scan)",
               LOCAL_MAX_ITER))
register(_oned("project1d", "ProjectSVM (Algorithm 2): the best of --max-iter random Gaussian directions, each "
                            "solved on its 1-D projection", PROJECT_MAX_ITER, ("--target-loss",)))


def specs():
    """Every registered solver, LIBLINEAR's numbers first, in the order of the help text."""
    return list(REGISTRY.values())


_NUMBER = re.compile(r"[+-]?[0-9]+")


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
    if v in REGISTRY:
        return REGISTRY[v]
    raise ParameterError("unknown solver type")


def accepting(flag):
    """The -s values of the solvers that take an option, as text for messages ("-s llsvm, -s streamsvm")."""
    names = [f"-s {s.name}" for s in specs() if flag in s.accepts]
    if len(names) > 1:
        return ", ".join(names[:-1]) + " and " + names[-1]
    return names[0] if names else "no solver implemented yet"


def _is_finite(value):
    try:
        return math.isfinite(float(value))
    except (TypeError, ValueError):
        return False


def _text(value):
    """An option value as messages quote it: %g, or Python's shortest form for a subnormal number (1e-320, which
    %g shows as 9.99989e-321) or one %g would change."""
    if not isinstance(value, float):
        return str(value)
    short = f"{value:g}"
    if not math.isfinite(value) or (float(short) == value and not 0 < abs(value) < sys.float_info.min):
        return short
    return repr(value)


def _finite(flag, name, value):
    """Refuse a NaN or infinite option value, naming the option (exit 1 from the CLI, as check_parameter's)."""
    if not _is_finite(value):
        raise ParameterError(f"{flag} {_text(value)}: {name} must be a finite number")


def check_count(flag, value, low=1, high=INT_MAX):
    """Refuse an integer option below `low` or above `high` (None: no such bound), naming it: the counts of
    LIBLINEAR and LIBSVM are C ints, and a larger one would end in an OverflowError inside a kernel."""
    if not isinstance(value, numbers.Integral):
        raise ParameterError(f"{flag} {_text(value)}: must be an integer")
    if low is not None and value < low:
        raise ParameterError(f"{flag} must be at least {low}")
    if high is not None and value > high:
        raise ParameterError(f"{flag} {value}: must be at most {high}")


def sigma_gamma(sigma, flag="--sigma"):
    """gamma = 1/(2 sigma^2) of a Gaussian width sigma, refused (naming `flag`) unless it is a finite number > 0: a
    sigma so small that the square underflows or the quotient overflows, or so large that gamma underflows to 0
    (which would silently mean LIBSVM's default 1/num_features)."""
    try:
        ok = math.isfinite(sigma) and sigma > 0
        gamma = 1.0 / (2.0 * sigma * sigma) if ok else math.nan
    except (ZeroDivisionError, OverflowError, TypeError):
        gamma = math.nan
    if not (math.isfinite(gamma) and gamma > 0):
        raise ParameterError(f"{flag} {_text(sigma)}: sigma must be a finite number > 0 whose gamma = 1/(2 sigma^2) is "
                             "a finite number > 0 (sigma from about 5.3e-155 to 9.4e153)")
    return gamma


def usable_cpus():
    """The CPUs this process may run on (its affinity), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


@dataclass
class Params:
    """Training parameters, LIBLINEAR's names and defaults (eps None: the solver's default), and the solver's own
    options (`options`: an instance of its spec's options class; None: the defaults)."""
    solver: object = 1
    C: float = 1.0
    eps: float = None
    bias: float = -1.0
    weights: list = field(default_factory=list)      # [(label, weight)], as -wi gives them
    regularize_bias: bool = True
    max_iter: int = None                              # None: the solver's default
    seed: int = 1
    threads: int = 1
    options: object = None
    svr_p: float = 0.1                                # -p: epsilon of the SVR loss (-s 11, 12, 13)
    nu: float = 0.5                                   # -n: nu of the one-class SVM (-s 21)

    @property
    def spec(self):
        return get(self.solver)

    def check(self):
        """Validate in LIBLINEAR's order and words; fill in the solver's defaults. Returns self."""
        spec = get(self.solver)
        self.solver = spec.key
        if spec.default_eps is None:
            if self.eps is not None:
                runs = "--max-iter steps" if spec.free_bias else "--epochs passes"
                raise ParameterError(f"-e applies only to solvers with a stopping tolerance, not to -s {spec.name} "
                                     f"(it runs {runs})")
        else:
            if self.eps is None:
                self.eps = spec.default_eps
            # LIBLINEAR's check_parameter, and what it lets through: non-finite values, negative class weights
            _finite("-e", "eps", self.eps)
            if not self.eps > 0:
                raise ParameterError("eps <= 0")
        _finite("-c", "C", self.C)
        if not self.C > 0:
            raise ParameterError("C <= 0")
        _finite("-p", "p", self.svr_p)
        if self.svr_p < 0:
            raise ParameterError("p < 0")
        if not 0 < self.nu <= 1:
            raise ParameterError("nu <= 0 or nu > 1")
        if spec.task == "oneclass" and self.bias >= 0:
            raise ParameterError("prob->bias >=0, but this is ignored in ONECLASS_SVM")
        _finite("-B", "the bias", self.bias)
        for label, weight in self.weights:
            if not (_is_finite(weight) and weight >= 0):
                raise ParameterError(f"-w{label} {_text(weight)}: a class weight must be a finite number >= 0")
            if weight == 0 and spec.zero_weight:
                raise ParameterError(f"-w{label} {_text(weight)}: -s {spec.name} needs a class weight > 0 "
                                     f"({spec.zero_weight})")
        if not self.regularize_bias:
            if self.bias != 1.0:
                raise ParameterError("To not regularize bias, must specify -B 1 along with -R")
            if "-R" not in spec.accepts:
                raise ParameterError("-R option supported only for solver L2R_LR, L2R_L2LOSS_SVC, L1R_L2LOSS_SVC, "
                                     "L1R_LR, and L2R_L2LOSS_SVR")
        if spec.free_bias:
            if self.bias == 0:
                raise ParameterError(f"-B 0: -s {spec.name} fits a free bias b and writes it as w_(n+1) = b / B, "
                                     "so B must be > 0 (default 1)")
            if 0 < self.bias < sys.float_info.min:
                # 1 / B overflows: w_(n+1) = b / B would be infinite for any b but 0
                raise ParameterError(f"-B {_text(self.bias)}: -s {spec.name} writes its free bias b as w_(n+1) = "
                                     f"b / B, which overflows for so small a B: B must be at least "
                                     f"{sys.float_info.min:.17g} (default 1)")
            if self.bias < 0:
                self.bias = 1.0
        if spec.model_kind in ("kernel", "tree") and self.bias >= 0:
            raise ParameterError(f"-B applies only to the linear solvers, not to -s {spec.name} (a kernel SVM's "
                                 "bias is its rho)")
        if spec.options is None:
            if self.options is not None:
                raise ParameterError(f"-s {spec.name} takes no solver options")
        else:
            if self.options is None:
                self.options = spec.options()
            elif not isinstance(self.options, spec.options):
                raise ParameterError(f"-s {spec.name} takes {spec.options.__name__}, not "
                                     f"{type(self.options).__name__}")
            self.options.check()
        if self.max_iter is not None:
            check_count("--max-iter", self.max_iter)
        check_count("--threads", self.threads, high=None)
        # more threads than CPUs never run at once (LIBLINEAR-multicore's -n takes any count too): each would only
        # cost its stack, and a thousand of them fail to start under an address-space limit; -s streamsvm's two
        # (its reader and trainer side by side) stay two
        self.threads = min(self.threads, max(usable_cpus(), spec.default_threads))
        return self

    def but(self, **changes):
        """A copy with some fields changed (the options object is shared)."""
        return replace(self, **changes)


def option_fields(spec):
    """The names of the fields of a spec's options class ({} when it has none)."""
    return {f.name for f in fields(spec.options)} if spec.options is not None else set()
