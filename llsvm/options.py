"""Every option of llsvm-train, declared once: one `Option` row each in OPTIONS.

A row holds what the option is everywhere: its flag and Click declarations, its type, default, check (range,
finiteness; the message names the flag), help text, the solvers that take it, and the field it fills (a Params
field, a field of the solver's options, or the command's own). From the rows come:
- the Click options of llsvm-train and its --help (llsvm/cli/declare.py), and docs/cli.md (scripts/gen_cli_docs.py);
- the refusal of an option the chosen solver does not take (params.refuse_foreign, params.accepting);
- the solvers' options classes below (`@solver_options(...)`: fields, defaults and `check()` from the rows);
- the --json echo of parameters and, later, the parameters of the scikit-learn estimators.

Adding an option is one row here, its flag in a `@solver_options(...)` class when it is a solver's own, and its use
in the driver (docs/solvers.md, "Adding an option").

This module imports nothing of llsvm but errors and memory: the layers above (params, the drivers, the CLI) read it,
it reads none of them (docs/architecture.md, section 2).
"""
import math
import numbers
import sys
from dataclasses import dataclass, field, fields, replace

from .errors import ParameterError
from .memory import check_floor

INT_MAX = 2147483647           # LIBLINEAR's and LIBSVM's int: the largest count an option takes (--max-iter, -d, ...)
DUAL_MAX_ITER = 300            # LIBLINEAR's dual coordinate descent (-s 1, 3, 7, 12, 13): outer iterations (llsvm/params.py
                               # has the solvers' other defaults; this one is also -s bm's --inner-iter)
DEFAULT_CACHE_MB = 100.0       # -m: LIBSVM's kernel cache


@dataclass(frozen=True)
class Count:
    """An integer option's Click range (a usage error, exit 2, outside it); None: no bound."""
    low: int = None
    high: int = None


def value_text(value):
    """An option value as messages quote it: %g, or Python's shortest form for a subnormal number (1e-320, which
    %g shows as 9.99989e-321) or one %g would change."""
    if not isinstance(value, float):
        return str(value)
    short = f"{value:g}"
    if not math.isfinite(value) or (float(short) == value and not 0 < abs(value) < sys.float_info.min):
        return short
    return repr(value)


def is_finite(value):
    try:
        return math.isfinite(float(value))
    except (TypeError, ValueError):
        return False


def check_finite(flag, name, value):
    """Refuse a NaN or infinite option value, naming the option (exit 1 from the CLI, as check_parameter's)."""
    if not is_finite(value):
        raise ParameterError(f"{flag} {value_text(value)}: {name} must be a finite number")


def check_count(flag, value, low=1, high=INT_MAX):
    """Refuse an integer option below `low` or above `high` (None: no such bound), naming it: the counts of
    LIBLINEAR and LIBSVM are C ints, and a larger one would end in an OverflowError inside a kernel."""
    if not isinstance(value, numbers.Integral):
        raise ParameterError(f"{flag} {value_text(value)}: must be an integer")
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
        raise ParameterError(f"{flag} {value_text(sigma)}: sigma must be a finite number > 0 whose gamma = "
                             "1/(2 sigma^2) is a finite number > 0 (sigma from about 5.3e-155 to 9.4e153)")
    return gamma


def solvers_text(names):
    """"-s llsvm, -s streamsvm and -s bm": the solvers of a row, as messages and the help name them."""
    names = [f"-s {n}" for n in names]
    if len(names) > 1:
        return ", ".join(names[:-1]) + " and " + names[-1]
    return names[0] if names else "no solver implemented yet"


# -- the solvers, by the families the rows name (in the registry's order, llsvm/params.py; a test checks it) -------
LIBLINEAR = ("0", "1", "2", "3", "4", "5", "6", "7", "11", "12", "13", "21")
OUT_OF_CORE = ("llsvm", "streamsvm", "bm")
# -i: the solvers that start from a model's w (solvers/warm.py)
WARM_START = ("0", "1", "2", "3", "11", "llsvm", "streamsvm", "bm")
ONLINE = ("olsvm", "olsvm-rhl", "norma", "pegaz", "pegasos")
LIBSVM_TYPES = ("smo", "nu_svc", "epsilon_svr", "nu_svr", "one_class")
KERNEL = LIBSVM_TYPES + ("h1tree",) + ONLINE
ONED = ("local1d", "project1d")
HARD_CLASS = ("greedy", "alternate", "larger")


# -- --measure: LIBSVM's eval tool's names (llsvm/measures.py computes them) ---------------------------------------
MEASURES_CLASSIFICATION = ("accuracy", "precision", "recall", "fscore", "auc", "bac")
MEASURES_REGRESSION = ("mse", "scc", "mae")
MEASURES = MEASURES_CLASSIFICATION + MEASURES_REGRESSION
MEASURE_HELP = ("Also report these measures (LIBSVM's eval tool): {classes} for classification (two classes: of the "
                "positive class, +1 of +1/-1, else the model's first label; auc from the decision values; more "
                "classes: per-class precision, recall and F-score, macro and micro averages, the confusion matrix), "
                "{regression} for regression.").format(classes=", ".join(MEASURES_CLASSIFICATION),
                                                       regression=", ".join(MEASURES_REGRESSION))
PLOT_HELP = ("Write a plot (PNG; matplotlib: pip install 'llsvm[plot]'): ROC and precision-recall curves for two "
             "classes, the confusion matrix for more, predicted against true values for regression.")


def parse_measures(text):
    """The names of `--measure NAME[,NAME...]`, in order, each once; ParameterError names a wrong one."""
    names = []
    for part in str(text).split(","):
        name = part.strip().lower()
        if name not in MEASURES:
            raise ParameterError(f"--measure {part.strip()!r}: not one of {', '.join(MEASURES)}")
        if name not in names:
            names.append(name)
    return tuple(names)


@dataclass(frozen=True)
class Option:
    """One option. `help` may use {default}, {solvers} (who takes it; {solvers:FLAG}: who takes FLAG) and
    {per_solver} (the solvers' values of a SolverSpec field), filled in by llsvm/cli/declare.py."""
    flag: str                      # as messages name it: "-c", "--inner-eps", "--no-bias-update", "-B R"
    dest: str                      # the field it fills, and Click's parameter name
    where: str                     # "params" (a Params field), "options" (the solver's options), "command"
    help: str = ""
    decls: tuple = None            # Click's declarations, when not (flag,); () when it has no Click option
    kind: object = str             # float, int, str, bool (a flag), a tuple of choices, or a Count
    default: object = None         # the value when not given; a dict {solver: value} when solvers differ
    metavar: str = None
    solvers: tuple = None          # the -s values that take it (None: every solver)
    check: object = None           # check(value): ParameterError naming the flag (exit 1), as check_parameter's
    parse: object = None           # parse(text) -> value for values that are not plain numbers (ParameterError:
                                   # a usage error naming the flag, exit 2)
    usage_check: bool = False      # the check is a usage error (exit 2), made before anything else is checked
    early: bool = False            # checked before the solver's options are matched (LIBLINEAR's order: -p, -n)
    refusal: str = None            # the message when the solver does not take it ({solvers}); None: the usual one
    conflicts: tuple = ()          # (other flag, why): refused together, "{other} applies to ..., {why}"
    scales: bool = False           # it scales the model's numbers (named when a model is not finite)
    multiple: bool = False
    hidden: bool = False
    flag_value: object = None      # a flag's value when given (kind bool); None: True
    per_solver: str = None         # the SolverSpec field whose values the help lists per solver ({per_solver})
    of: tuple = None               # (flag, value): no option of its own, given when that option has that value
    common: bool = False           # in the compact usage (llsvm-train -h, LIBLINEAR's train's options); the others
                                   # in --help-all and --help SOLVER (llsvm/cli/usage.py)
    brief: str = None              # the compact usage's text when not the help's first sentence

    def default_for(self, *solvers):
        """The default; for a row whose solvers differ, the first of `solvers` it gives one for."""
        if isinstance(self.default, dict):
            return next((self.default[s] for s in solvers if s in self.default), next(iter(self.default.values())))
        return self.default

    @property
    def applies_to(self):
        """Whether the row names the solvers that take it (every solver takes the others)."""
        return self.solvers is not None


# -- checks and parsers of single values ------------------------------------------------------------------------
def _positive_finite(flag, what="must be a positive finite number"):
    def check(value):
        if value is not None and not (is_finite(value) and value > 0):
            raise ParameterError(f"{flag} {what}")
    return check


def _at_least_one(flag):
    def check(value):
        if value < 1:
            raise ParameterError(f"{flag} must be at least 1")
    return check


def _finite_above_zero(flag, name):
    def check(value):
        if value is not None and not (math.isfinite(value) and value > 0):
            raise ParameterError(f"{flag} {value:g}: {name} must be a finite number > 0")
    return check


def _choice(flag, choices, words):
    def check(value):
        if value not in choices:
            raise ParameterError(f"{flag} {value}: {words}")
    return check


def _check_svr_p(p):
    # LIBLINEAR's check_parameter words, and what it lets through (a non-finite p)
    if not (p >= 0 and math.isfinite(p)):
        raise ParameterError("p < 0" if p < 0 else f"-p {value_text(p)}: p must be a finite number")


def _check_nu(nu):
    if not 0 < nu <= 1:
        raise ParameterError("nu <= 0 or nu > 1")


PRECOMPUTED = 4                # -t 4: LIBSVM's precomputed kernel (kernel values in the training file)


def _check_kernel_type(t):
    if t not in (0, 1, 2, 3, PRECOMPUTED):
        raise ParameterError("unknown kernel type")


def refuse_precomputed(solver):
    """-t 4 (LIBSVM's precomputed kernel) with a solver that is not one of LIBSVM's types: refused, naming the
    option and the solvers that take it (ParameterError)."""
    if solver not in LIBSVM_TYPES:
        raise ParameterError(f"-t 4 (precomputed kernel) applies only to {solvers_text(LIBSVM_TYPES)}, not to "
                             f"-s {solver}")


def _check_gamma(g):
    if g is not None:
        check_finite("-g", "gamma", g)
        if g < 0:
            raise ParameterError("gamma < 0")


def _check_degree(d):
    if d < 0:
        raise ParameterError("degree of polynomial kernel < 0")
    check_count("-d", d, low=None)     # LIBSVM's int


def _check_cache_size(m):
    check_finite("-m", "cache_size", m)
    if not m > 0:
        raise ParameterError("cache_size <= 0")


def _check_ws(n):
    if n != 0 and n < 2:
        raise ParameterError("--ws must be 0 (LIBSVM's pair solver) or at least 2")


def _check_probability(b):
    if b not in (0, 1):
        raise ParameterError("probability != 0 and probability != 1")


def _check_shrinking(h):
    if h not in (0, 1):
        raise ParameterError("shrinking != 0 and shrinking != 1")


def _check_h1_c(kappa):
    if not kappa >= 1:
        raise ParameterError(f"--h1-c {kappa:g}: kappa must be >= 1 (or inf)")


def _check_min_remove(rho):
    if not 0 <= rho < 1:
        raise ParameterError(f"--min-remove {rho:g}: a fraction in [0, 1)")


def _check_rbf_depth(depth):
    if not (depth in ("none", "auto") or (isinstance(depth, int) and depth >= 0)):
        raise ParameterError(f"--rbf-depth {depth}: auto, none or a depth >= 0")


def _check_rbf_tol(tol):
    if not (math.isfinite(tol) and tol >= 0):
        raise ParameterError(f"--rbf-tol {tol:g}: points of accuracy >= 0")


def _check_target_loss(loss):
    if loss is not None and not math.isfinite(loss):
        raise ParameterError(f"--target-loss {loss:g}: must be a finite number")


def _check_max_seconds(s):
    if s is not None and not (math.isfinite(s) and s > 0):
        raise ParameterError(f"--max-seconds {s:g}: must be a positive finite number")


RADIUS = "R"          # -B R


def _parse_bias(text):
    if text.strip() in ("R", "r"):
        return RADIUS
    try:
        return float(text)
    except ValueError:
        raise ParameterError(f"{text!r} is not a number (or R with {solvers_text(OPTION['-B R'].solvers)})") from None


def _parse_h1_c(text):
    """--h1-c: inf or a number (checked >= 1)."""
    if text.strip().lower() in ("inf", "infinity"):
        return math.inf
    try:
        return float(text)
    except ValueError:
        raise ParameterError(f"{text!r} is not inf or a number") from None


def _parse_rbf_depth(text):
    if text in ("auto", "none"):
        return text
    try:
        return int(text)
    except ValueError:
        raise ParameterError(f"{text!r} is not auto, none or a depth") from None


def _parse_memory(text):
    """--memory: a size, at most the memory available (memory.within_available)."""
    from .errors import LLSVMError
    from .memory import parse_size, within_available
    try:
        return within_available(parse_size(text))
    except LLSVMError as exc:
        raise ParameterError(str(exc)) from None


def _check_memory(budget):
    check_floor(budget)


def _parse_tmp_dir(text):
    import os
    if not os.path.isdir(text):
        raise ParameterError(f"{text} is not a directory")
    return text


def _check_inner_eps(eps):
    if eps is not None and not (eps > 0 and math.isfinite(eps)):
        raise ParameterError("--inner-eps must be a positive finite number")


_KERNEL_TYPE_HELP = ("Kernel: 0 linear u'v, 1 polynomial (gamma u'v + coef0)^degree, 2 radial basis function "
                     "exp(-gamma |u-v|^2), 3 sigmoid tanh(gamma u'v + coef0), 4 precomputed kernel (kernel values in "
                     "training_set_file, LIBSVM's format read 0-based: label 0:serial 1:K(x,x1) ... L:K(x,xL); -s smo, "
                     "nu_svc, epsilon_svr, nu_svr and one_class only; -g, -d and -r ignored) (default {default}) "
                     "({solvers}).")

# The rows, in llsvm-train's --help order.
OPTIONS = (
    Option("-s", "solver", "params", "Set type of solver (default {default}); the solvers are listed below.",
           default=1, metavar="type", common=True),
    Option("-c", "C", "params", "Set the parameter C (default {default:g}).", kind=float, default=1.0, metavar="cost",
           scales=True, common=True),
    Option("-p", "svr_p", "params", "Epsilon of the SVR loss (default {default}) ({solvers}).", kind=float,
           default=0.1, metavar="epsilon", solvers=("11", "12", "13", "epsilon_svr"), check=_check_svr_p, early=True,
           scales=True, common=True),
    Option("-n", "nu", "params", "Nu of the one-class SVM, nu-SVC and nu-SVR (default {default}) ({solvers}).",
           kind=float, default=0.5, metavar="nu", solvers=("21", "nu_svc", "nu_svr", "one_class"), check=_check_nu,
           early=True, scales=True, common=True),
    Option("-e", "eps", "params", "Tolerance of termination criterion: {per_solver}.", kind=float, metavar="epsilon",
           per_solver="eps_meaning", common=True,
           brief="Tolerance of termination criterion (default: the solver's)."),
    Option("-B", "bias", "params",
           "If bias >= 0, instance x becomes [x; bias]; if < 0, no bias term added (default {default:g}). -B R: "
           "the bias value is the data radius max ||x_i|| ({solvers:-B R}).", default=-1.0, metavar="bias",
           parse=_parse_bias, common=True),
    Option("-R", "regularize_bias", "params", "Do not regularize the bias, with -B 1 ({solvers}).", kind=bool,
           default=True, flag_value=False, solvers=("0", "2", "5", "6", "11"),
           # Params.check refuses it in LIBLINEAR's words
           refusal=None, common=True),
    # -wi weight: LiblinearCommand (llsvm/cli/train.py) reads it as --weight i weight
    Option("--weight", "weights", "params",
           "Weights adjust the parameter C of different classes: -wi weight multiplies C of class i by weight (e.g. "
           "-w1 5 -w-1 2).", kind=(int, float), multiple=True, hidden=True, metavar="weight", common=True,
           brief="Multiply C of class i by weight (e.g. -w1 5 -w-1 2)."),
    Option("-W", "weight_file", "command",
           "Weights of the training rows: a file of one non-negative number a line, a line per row ({solvers}).",
           metavar="weight_file", solvers=("0", "1", "2", "3", "4", "5", "6", "7", "11", "12", "13", "21", "llsvm",
                                           "streamsvm", "bm", "smo", "nu_svc", "epsilon_svr", "nu_svr", "one_class"),
           refusal="row weights (-W) are available for {solvers} (docs/weights.md)", common=True,
           brief="Weights of the training rows: a file of one number >= 0 a line."),
    Option("-i", "initial_model", "command",
           "Start from a linear model's w (LIBLINEAR's incremental extension, init_sol; e.g. yesterday's model for "
           "today's rows): a model of the same problem, bias and classes; its w is padded with zeros to new "
           "features; the dual solvers start from the dual point of w; the model reached is the optimum from zero's "
           "within -e ({solvers}).", metavar="initial_model", solvers=WARM_START,
           refusal="a warm start (-i) is available for {solvers}",
           conflicts=(("-v", "-C", "--dask"), "cannot be given with -i: -i starts the one model a run trains"),
           common=True, brief="Start from a linear model's w (LIBLINEAR's incremental extension) ({solvers})."),
    Option("-v", "nr_fold", "command", "n-fold cross validation mode.", kind=int, metavar="n", common=True),
    Option("-C", "find_C", "command", "Find the parameter C by cross validation ({solvers}).", kind=bool,
           solvers=("0", "1", "2", "3", "11"), refusal="Warm-start parameter search only available for {solvers}",
           common=True),
    Option("-t", "kernel_type", "options", _KERNEL_TYPE_HELP, kind=int, default=2, metavar="kernel_type",
           solvers=KERNEL, check=_check_kernel_type),
    Option("-d", "degree", "options", "Degree of the polynomial kernel (default {default}) ({solvers}).", kind=int,
           default=3, metavar="degree", solvers=KERNEL, check=_check_degree, scales=True),
    Option("-g", "gamma", "options", "Gamma of the kernel (default 1/num_features) ({solvers}).", kind=float,
           metavar="gamma", solvers=KERNEL, check=_check_gamma, scales=True),
    Option("-r", "coef0", "options", "coef0 of the kernel (default {default:g}) ({solvers}).", kind=float,
           default=0.0, metavar="coef0", solvers=KERNEL, check=lambda r: check_finite("-r", "coef0", r),
           scales=True),
    Option("-m", "cache_size", "options", "Kernel cache size in MB (default {default:g}) ({solvers}).", kind=float,
           default=DEFAULT_CACHE_MB, metavar="cachesize", solvers=KERNEL, check=_check_cache_size),
    Option("-h", "shrinking", "options",
           "-h 0|1: whether to use the shrinking heuristics (default {default}) ({solvers}); -h alone and --help show "
           "this help.", decls=("--shrinking",), kind=int, default=1, metavar="shrinking",
           solvers=LIBSVM_TYPES + ("h1tree",), check=_check_shrinking),
    Option("--ws", "ws", "options",
           "Working-set size N of a faster solver for the class pairs of 2N rows or more (default {default}: LIBSVM's "
           "pair solver, svm-train's model bit for bit): each step takes the N most violating variables, their N "
           "kernel columns as one block, solves their sub-problem by LIBSVM's pair SMO and adds the changes to the "
           "whole gradient on the --threads; it stops on LIBSVM's rule m(a) - M(a) < eps over every variable, so the "
           "model meets svm-train's stopping rule but not its path (the last digits and a few borderline SVs "
           "differ). No shrinking (-h is ignored); memory N columns of the pair's rows as float32. 64 was the fastest "
           "measured (docs/kernel-speed.md); 256 and more were slower. Where it pays most: RBF on dense rows (every "
           "row holding most features), whose blocks are computed as tiles (a generated 10,000 x 200 set: 1.9 s "
           "against the default's 7.6 s) ({solvers}).", kind=int, default=0, metavar="N", solvers=("smo",), check=_check_ws),
    Option("-b", "probability", "options",
           "Whether to train for probability estimates, 0 or 1 (default {default}), as LIBSVM's svm-train -b 1: "
           "C-SVC and nu-SVC, Platt scaling of every pair from 5-fold cross-validation of its type (probA and "
           "probB); epsilon-SVR and nu-SVR, the Laplace scale sigma of the 5-fold cross-validation residuals (probA); "
           "one-class, the 10 density marks of the training decision values (prob_density_marks); the folds are "
           "drawn from --seed, or with --libsvm-rand from svm-train's rand() ({solvers}).",
           kind=int, default=0, metavar="probability_estimates", solvers=LIBSVM_TYPES, check=_check_probability),
    Option("--libsvm-rand", "libsvm_rand", "options",
           "Draw -v's and --grid's folds, and -b 1's, as LIBSVM's svm-train draws them: glibc's rand() from its "
           "first state (svm-train never calls srand), in svm-train's order, LIBSVM's shuffle, so the folds, the "
           "cross-validation rates and C-SVC's and nu-SVC's probA/probB are svm-train's (epsilon-SVR's and nu-SVR's "
           "probA may differ in its last digit); without it, from --seed. The default of llsvm-svm-train "
           "({solvers}).", kind=bool,
           default=False, solvers=LIBSVM_TYPES),
    Option("--hard-class", "hard_class", "options",
           "Hard class of each node: greedy (train both, keep the one removing more rows; default), alternate (the "
           "larger class first), larger ({solvers}).", kind=HARD_CLASS, default="greedy", solvers=("h1tree",),
           check=_choice("--hard-class", HARD_CLASS, "one of " + ", ".join(HARD_CLASS))),
    Option("--h1-c", "h1_c", "options",
           "Box of the hard class: inf (default, the primal as printed) or KAPPA >= 1, C = KAPPA m_s / m_h "
           "({solvers}).", default=math.inf, metavar="inf|KAPPA", solvers=("h1tree",), check=_check_h1_c,
           parse=_parse_h1_c, scales=True),
    Option("--min-remove", "min_remove", "options",
           "A node must remove at least max(1, RHO |S|) rows (default {default:g}) ({solvers}).", kind=float,
           default=0.0, metavar="RHO", solvers=("h1tree",), check=_check_min_remove),
    Option("--max-depth", "max_depth", "options", "Nodes per list at most (default {default}) ({solvers}).",
           kind=Count(1), default=256, metavar="N", solvers=("h1tree",), check=_at_least_one("--max-depth")),
    Option("--rbf-depth", "rbf_depth", "options",
           "End every list in the RBF node (a -s smo model of all rows, kernel options -t -g -c ...): at depth K, at "
           "the cheapest depth within --rbf-tol of the best validation accuracy (auto), or never (none, the "
           "default) ({solvers}).", default="none", metavar="auto|K|none", solvers=("h1tree",),
           check=_check_rbf_depth, parse=_parse_rbf_depth),
    Option("--rbf-select", "rbf_select", "options",
           "Where auto measures: a stratified 20 % split (default) or the training rows ({solvers}).",
           kind=("validation", "train"), default="validation", solvers=("h1tree",),
           check=_choice("--rbf-select", ("validation", "train"), "validation or train")),
    Option("--rbf-tol", "rbf_tol", "options",
           "Accuracy auto may give up for a cheaper depth (default {default:g}) ({solvers}).", kind=float,
           default=0.5, metavar="POINTS", solvers=("h1tree",), check=_check_rbf_tol),
    Option("--grid", "grid", "command",
           "Cross-validation grid search (with -v n; 5 folds by default), e.g. --grid 'C=1e-4:1e4:9 "
           "g=0.25,0.5,1,2': NAME=A:B:N is N values from A to B evenly spaced in log scale, NAME=V1,V2,... a list; "
           "names C, g (gamma) or sigma. Prints the mean CV error and time of every cell and the best; writes no "
           "model ({solvers}).", metavar="SPEC", solvers=("smo",) + ONLINE),
    Option("--sigma", "sigma", "options",
           "Width of the Gaussian kernel exp(-|u-v|^2/(2 sigma^2)), instead of -g ({solvers}).", kind=float,
           metavar="SIGMA", solvers=ONLINE, check=lambda s: s is None or sigma_gamma(s), scales=True),
    Option("--epochs", "epochs", "options", "Passes over the shuffled rows (default {default}) ({solvers}).",
           kind=int, default=1, metavar="N", solvers=ONLINE, check=lambda n: check_count("--epochs", n)),
    Option("--average", "average", "options",
           "The model is the mean of the iterates, not the last one ({solvers}).", kind=bool, default=False,
           solvers=ONLINE),
    Option("--original", "original", "options",
           "The lists as printed: each output computed from the support vectors, no output cache (the paper's "
           "timing figures) ({solvers}).", kind=bool, default=False, solvers=ONLINE),
    Option("--no-bias-update", "bias_update", "options", "Update the bias b on each violation (default on) "
           "({solvers}).", decls=("--bias-update/--no-bias-update",), kind=bool, default=True,
           solvers=("olsvm",)),
    Option("--eta0", "eta0", "options",
           "Kivinen's NORMA (with --eta0 and/or --lambda; default 1): step ETA0/sqrt(t), decay 1 - step lambda "
           "(without both: the faithful list) ({solvers}).", kind=float, metavar="ETA0", solvers=("norma",),
           check=_finite_above_zero("--eta0", "eta0"), scales=True),
    Option("--lambda", "lam", "options", "Regularization lambda (default 1/(C l)) ({solvers}).", kind=float,
           metavar="LAMBDA", solvers=("norma", "pegasos"), check=_finite_above_zero("--lambda", "lambda"),
           scales=True),
    Option("-k", "batch", "options", "Mini-batch size (default {default}) ({solvers}).", kind=int, default=1,
           metavar="k", solvers=("pegasos",),
           # a mini-batch larger than the rows is all of them
           check=lambda k: check_count("-k", k, high=None)),
    Option("--projection", "projection", "options",
           "Project w onto the ball of radius 1/sqrt(lambda) after each step ({solvers}).", kind=bool, default=False,
           solvers=("pegasos",)),
    Option("--oned", "oned", "options",
           "The 1-D solver: the paper's sorted scan SVM1D (default) or the exact 1-D optimum (weighted-median bias, "
           "golden-section search) ({solvers}).", kind=("scan", "exact"), default="scan", solvers=ONED,
           check=_choice("--oned", ("scan", "exact"), "must be scan or exact")),
    Option("--oned-norm", "oned_norm", "options",
           "Project on the unit direction, so the loss is the primal objective of the model (default), or as the "
           "paper prints it ({solvers}).", kind=("unit", "paper"), default="unit", solvers=ONED,
           check=_choice("--oned-norm", ("unit", "paper"), "must be unit or paper")),
    Option("--max-seconds", "max_seconds", "options",
           "Stop each binary problem's search after S seconds ({solvers}).", kind=float, metavar="S", solvers=ONED,
           check=_check_max_seconds),
    Option("--target-loss", "target_loss", "options", "Stop once the loss is at most LOSS ({solvers}).", kind=float,
           metavar="LOSS", solvers=("project1d",), check=_check_target_loss),
    Option("-q", "quiet", "command", "Quiet mode (no outputs).", kind=bool, common=True),
    Option("--threads", "threads", "params",
           "Threads for one-vs-rest classes and cross-validation folds (same model for any N). On one problem (two "
           "classes, regression) of 4 million non-zeros or more: -s 0, 2, 11 sum its rows in 2N blocks on N threads (the one-thread iterates up to "
           "the order of a sum); -s 1, 3, 7, 12, 13 pass over the rows on one thread while a second reads "
           "the rows ahead when a core is idle (the one-thread model, bit for bit). -s streamsvm: 2 runs "
           "the reader and the trainer concurrently, 1 alternates them (deterministic for a seed). -s smo, h1tree and "
           "the other kernel types: OpenMP threads sharing each long kernel column and the pair search (same model; "
           "they pay only when the cores are idle, so one unless asked, as LIBSVM's svm-train, and no more than "
           "the cores no other process runs on when training starts). Default: {per_solver}; at most the number "
           "of CPUs "
           "(-s streamsvm: 2).", kind=Count(1), per_solver="default_threads"),
    Option("--seed", "seed", "params", "Seed of the random number generator.", kind=Count(0), default=1),
    Option("--certify", "certify", "params",
           "Go on past LIBLINEAR's stopping point (-e or the iteration limit) to a certified optimum: a duality gap "
           "of at most 0.1 % of the primal, by CG steps on the free dual variables (rows up to 100 times the "
           "features) or the smoothed-hinge primal Newton (more rows); the model then differs from LIBLINEAR's "
           "({solvers}).", kind=bool, default=False, solvers=("3",)),
    Option("--max-iter", "max_iter", "params",
           "Iteration limit: outer iterations (passes of -s streamsvm, Newton iterations of -s 2). Default: "
           "{per_solver}.", kind=Count(1, INT_MAX), per_solver="default_max_iter"),
    Option("--json", "json_file", "command",
           "Write training metrics as JSON to FILE; '-': to stdout, which then holds the JSON alone (the usual lines "
           "go to stderr; -q silences them).", metavar="FILE"),
    Option("--strict", "strict", "command",
           "Exit with status 3 when the model is not certified (--json's \"converged\": false: the iteration limit "
           "was reached or the certificate failed); the model is written all the same. Default: exit 0, as "
           "LIBLINEAR.", kind=bool,
           conflicts=(("-v", "-C", "--grid"), "cannot be given with --strict: --strict checks the model a run writes")),
    Option("--measure", "measure", "command",
           "With -v, -C or --grid: the cross-validation reports these measures over the whole set's fold "
           "predictions (LIBSVM's eval tool's cv), and -C and --grid select C (and gamma) by the first: the largest "
           "(for mse and mae the smallest). Names: " + ", ".join(MEASURES) + " (see llsvm-predict --measure).",
           metavar="NAME[,NAME...]", parse=parse_measures),
    Option("--plot", "plot_file", "command", "With -v: " + PLOT_HELP[0].lower() + PLOT_HELP[1:],
           metavar="FILE.png"),
    Option("--dask", "dask", "command",
           "Train on a Dask cluster: 'local' (a LocalCluster of --workers processes on this machine) or the "
           "scheduler's address (tcp://HOST:PORT). The input must be an llsvm binary file every worker can read "
           "(llsvm-convert); one task per class beyond two, per class pair of -s smo, nu_svc, h1tree and the online "
           "solvers, per fold of -v, per kernel width and fold of --grid, other runs whole on one worker "
           "(docs/distributed.md).",
           metavar="ADDRESS"),
    Option("--local-epochs", "local_epochs", "command",
           "With --dask, a two-class problem of -s 1 or 3 is solved by CoCoA+ over the workers' rows: H passes of "
           "dual coordinate descent on each worker's rows a round (default 1).", kind=Count(1), metavar="H"),
    Option("--workers", "workers", "command",
           "Worker processes of one thread each for --dask local (default: the number of CPUs; at most 4 a CPU, and "
           "as many as the memory available holds at 128 MiB a worker).", kind=Count(1),
           metavar="N"),
    Option("--progress", "progress", "command",
           "Progress bars on stderr (default: when stderr is a terminal and not -q), with a total and an ETA where "
           "the work's size is known: the input's bytes (or a binary file's rows), the passes of -s llsvm, bm and "
           "streamsvm, -v's folds, --grid's fits, --dask's tasks. LIBSVM's dots (-s smo and the other LIBSVM types) "
           "are printed on stdout as the solver runs, with or without it.", decls=("--progress/--no-progress",),
           kind=bool),
    Option("--zero-based", "zero_based", "command", "Text input has 0-based feature indices (implied by -t 4).",
           kind=bool),
    Option("--memory", "memory", "options",
           "Budget for the training data, weight vectors and per-row state held in RAM, e.g. 64M, 2G ({solvers}); "
           "default (and at most): the memory available.", metavar="SIZE", solvers=OUT_OF_CORE, check=_check_memory,
           parse=_parse_memory),
    Option("--tmp-dir", "tmp_dir", "options", "Directory for temporary files ({solvers}); default: the system's.",
           metavar="DIR", solvers=OUT_OF_CORE, parse=_parse_tmp_dir),
    Option("--inner-iter", "inner_iter", "options",
           "Passes over each loaded block: -s llsvm, per outer iteration (default {default[llsvm]}); -s bm, of the DCD "
           "run on each block at most (default {default[bm]}, LIBLINEAR's -s 3 limit).", kind=Count(1, INT_MAX),
           default={"llsvm": 5, "bm": DUAL_MAX_ITER}, solvers=("llsvm", "bm"), check=_at_least_one("--inner-iter")),
    Option("--keep-active-set", "keep_active_set", "options",
           "Keep the final active-set files (binary format) in DIR ({solvers}).", metavar="DIR", solvers=("llsvm",)),
    Option("--hash-bits", "hash_bits", "options",
           "Hash features into 2^B signed buckets on the fly (a hashed model file) ({solvers}).", kind=Count(1, 28),
           metavar="B", solvers=("streamsvm", "bm")),
    Option("--inner-eps", "inner_eps", "options",
           "Stopping tolerance inside: -s llsvm, the relative change of the dual per outer iteration of block "
           "optimization (default {default[llsvm]:g}); -s bm, the DCD run on each block (default {default[bm]:g}).",
           kind=float, default={"llsvm": 0.01, "bm": 0.1}, metavar="EPS", solvers=("llsvm", "bm"),
           check=_check_inner_eps, usage_check=True),
    Option("--one-pass", "one_pass", "options",
           "The paper's Algorithm 2 exactly: no re-check passes, the stopping rule is --inner-eps and the primal is "
           "not computed ({solvers}).", kind=bool, default=False, solvers=("llsvm",),
           # the re-check passes are what -e and --max-passes control: with --one-pass they would do nothing
           conflicts=(("-e", "--max-passes"), "applies to the re-check passes, which --one-pass does not run (its "
                      "stopping rule is --inner-eps)")),
    Option("--max-passes", "max_passes", "options", "Re-check passes at most (default {default}) ({solvers}).",
           kind=Count(1, INT_MAX), default=10, metavar="N", solvers=("llsvm",), check=_at_least_one("--max-passes")),
    # -B R: no option of its own (the value R of -B); a field of -s llsvm's options
    Option("-B R", "radius_bias", "options", decls=(), kind=bool, default=False, solvers=("llsvm",), of=("-B", RADIUS)),
)

OPTION = {o.flag: o for o in OPTIONS}
BY_DEST = {o.dest: o for o in OPTIONS}


# -- the solvers' options classes, their fields from the rows ---------------------------------------------------
class SolverOptions:
    """Base of a solver's options: the fields of its rows (FLAGS), checked by their rows; `check_together` for
    rules between fields. Instances are dataclasses: SMOOptions(kernel_type=0, cache_size=200)."""
    FLAGS = ()

    @classmethod
    def rows(cls):
        return [OPTION[f] for f in cls.FLAGS]

    def check(self):
        for row in self.rows():
            if row.check is not None:
                row.check(getattr(self, row.dest))
        self.check_together()
        return self

    def check_together(self):
        pass

    def given(self):
        """{flag: value} of the rows whose value differs from the default (the --json echo, the overflow hint)."""
        defaults = type(self)()
        return {row.flag: getattr(self, row.dest) for row in self.rows()
                if getattr(self, row.dest) != getattr(defaults, row.dest)}


def solver_options(*solvers):
    """Class decorator: the dataclass of the options of `solvers`, one field per row of llsvm/options.py that names
    one of them (type and default from the row, in the rows' order; a default given per solver is the first of
    `solvers`' that the row has), then the fields written in the class itself (the library's extras, which no option
    sets). So an option is one row: naming a solver in it gives that solver's options class the field."""
    def make(cls):
        own = dict(cls.__dict__.get("__annotations__", {}))
        inherited = {f.name for f in fields(cls)} if hasattr(cls, "__dataclass_fields__") else set()
        rows = [r for r in OPTIONS if r.where == "options" and r.solvers and set(r.solvers) & set(solvers)]
        annotations = {}
        for row in rows:
            if row.dest in inherited:
                continue
            annotations[row.dest] = object
            setattr(cls, row.dest, field(default=row.default_for(*solvers)))
        annotations.update(own)
        cls.__annotations__ = annotations
        cls.FLAGS = tuple(dict.fromkeys(getattr(cls, "FLAGS", ()) + tuple(r.flag for r in rows)))
        cls.SOLVERS = solvers
        return dataclass(cls)
    return make


@solver_options("smo")
class SMOOptions(SolverOptions):
    """svm-train's kernel options with its defaults: -t kernel_type (0 linear, 1 polynomial, 2 rbf, 3 sigmoid),
    -g gamma (None or 0: 1/num_features), -d degree, -r coef0, -m cache_size (MB), -h shrinking (0 or 1)."""

    def resolved(self, n_features):
        """The options with gamma set (svm-train: 0 or absent means 1/num_features when there are features; -t 4,
        the precomputed kernel, has no gamma: 0)."""
        if self.kernel_type == PRECOMPUTED:
            return replace(self, gamma=0.0)
        return replace(self, gamma=resolved_gamma(self.gamma, n_features))

    def kernel_params(self):
        return {"kernel_type": self.kernel_type, "gamma": float(self.gamma or 0.0), "coef0": float(self.coef0),
                "degree": int(self.degree)}


def resolved_gamma(gamma, n_features):
    """LIBSVM's gamma: 0 or absent means 1/num_features (when there are features)."""
    if not gamma and n_features > 0:
        gamma = 1.0 / n_features
    return float(gamma or 0.0)


@solver_options("h1tree")
class H1Options(SMOOptions):
    """The tree's options (and, inherited, the RBF node's kernel options of -s smo)."""


@solver_options(*ONLINE)
class OnlineOptions(SolverOptions):
    """The online solvers' options: LIBSVM's kernel (-t -g -d -r; --sigma instead of -g), -m the MB of kernel
    columns kept, --epochs, --average, --bias-update (-s olsvm), --original, --eta0/--lambda (-s norma; --lambda
    also -s pegasos), -k and --projection (-s pegasos)."""

    def check_together(self):
        if self.sigma is not None and self.gamma is not None:
            raise ParameterError("--sigma and -g both set the kernel width: give one of them")

    def resolved(self, n_features):
        """gamma set: from --sigma (1/(2 sigma^2)), or -g, or LIBSVM's 1/num_features."""
        gamma = sigma_gamma(self.sigma) if self.sigma is not None else self.gamma
        return replace(self, gamma=resolved_gamma(gamma, n_features))

    def kernel_options(self):
        """The kernel part, as -s smo takes it (the grid search's and the model's)."""
        return SMOOptions(kernel_type=self.kernel_type, gamma=self.gamma, degree=self.degree, coef0=self.coef0,
                          cache_size=self.cache_size)

    kernel_params = SMOOptions.kernel_params


@solver_options(*ONED)
class OneDOptions(SolverOptions):
    """The options of -s local1d and -s project1d (None: the default)."""


@solver_options("llsvm")
class LLSVMOptions(SolverOptions):
    """-s llsvm's options: memory (bytes of training data held in RAM, None: no limit), inner_iter, tmp_dir,
    keep_active_set (a directory to copy the final active-set files into), radius_bias (-B R: the bias value is the
    data radius max ||x_i||), inner_eps (block optimization stops at this relative change of the dual), one_pass
    (the paper's Algorithm 2 exactly: no re-check passes), max_passes (re-check passes at most); return_alpha:
    FitResult.alpha over all rows (for experiments)."""
    return_alpha: bool = False


DEFAULT_BATCH = 16             # -s streamsvm: trainer picks per lock
LOCKSTEP_RATIO = 2.0           # -s streamsvm with one thread: picks per row read


@solver_options("bm", "streamsvm")
class StreamOptions(SolverOptions):
    """-s streamsvm's and -s bm's options: memory (bytes of training rows held in RAM, None: no limit), tmp_dir,
    hash_bits (-s streamsvm, bm: features mapped into 2^hash_bits signed buckets on the fly), inner_eps (-s bm: the
    stopping tolerance of the DCD run on each block); batch (-s streamsvm: trainer picks per lock), lockstep_ratio
    (-s streamsvm with one thread: picks per row read), return_alpha (FitResult.alpha over all rows)."""
    batch: int = DEFAULT_BATCH
    lockstep_ratio: float = LOCKSTEP_RATIO
    return_alpha: bool = False
