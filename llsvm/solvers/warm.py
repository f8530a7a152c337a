"""A warm start from a linear model's weights: LIBLINEAR's init_sol (`-i initial_model`, the incremental extension
of LIBLINEAR's tools page; `llsvm.train(warm=model)` and the estimators' warm_start when the rows differ).

A model file holds w, not the dual variables, so every problem starts from the model's w:
- -s 0, 2, 11 (Newton) from w itself, as LIBLINEAR's init_sol;
- -s 1 and 3 (dual coordinate descent) and the out-of-core -s bm, llsvm and streamsvm (one more pass over the input
  sets their alpha and w = w(alpha) before the first) from the dual point w gives (primal_to_dual): for the L2 loss
  the optimality condition alpha_i = 2 C_i max(0, 1 - y_i w.x_i) (newtonfun.certificate_sums' point), for the
  hinge the subgradient's ends, alpha_i = C_i where y_i w.x_i < 1 and 0 elsewhere (the free rows' values on the
  margin are not in w: they start at an end and the solver moves them).
The start changes where the solver begins, never the problem: the model it reaches is the optimum of the run's rows
within the stopping rule, as a run from zero.

What fits (model_starts refuses the rest, ParameterError): a linear model of the same problem (same loss and
regularization: -s 1 and -s 2 share theirs, -s 0 and -s 7, -s 11 and -s 12, -s 3 and the out-of-core solvers), of
the run's bias (-B), and of the run's classes (the same set; a file listing them in another order is matched by
label). Features: the model's w is padded with zeros to the data's features (a new day's data may have new ones)
and cut to them when the model has more (features beyond the data's last index are in no row: their optimum weight
is 0, and the model has the data's width, as a run from zero).
"""
import numpy as np

from .._ext import _linear as K
from ..errors import ParameterError

# the model's solver_type -> the problem its w solves (runs of the same problem may start from each other)
PROBLEM = {
    "L2R_LR": "L2-regularized logistic regression", "L2R_LR_DUAL": "L2-regularized logistic regression",
    "L2R_L2LOSS_SVC": "L2-regularized L2-loss SVC", "L2R_L2LOSS_SVC_DUAL": "L2-regularized L2-loss SVC",
    "L2R_L1LOSS_SVC_DUAL": "L2-regularized L1-loss SVC",
    "L2R_L2LOSS_SVR": "L2-regularized L2-loss SVR", "L2R_L2LOSS_SVR_DUAL": "L2-regularized L2-loss SVR",
    "L2R_L1LOSS_SVR_DUAL": "L2-regularized L1-loss SVR", "MCSVM_CS": "Crammer and Singer's multi-class SVC",
    "L1R_L2LOSS_SVC": "L1-regularized L2-loss SVC", "L1R_LR": "L1-regularized logistic regression",
    "ONECLASS_SVM": "one-class SVM",
}


def _where(model):
    """How a message names the model: -i FILE when it came from one (the CLI sets meta['initial_model'])."""
    path = (getattr(model, "meta", None) or {}).get("initial_model")
    return f"-i {path}" if path else "the warm start's model"


def check_kind(model, spec, options=None):
    """Refuse a model that is not LIBLINEAR's linear model of the run's problem (a kernel or tree model, a hashed
    model, another loss or regularization)."""
    from ..models.linear import Model
    where = _where(model)
    if not isinstance(model, Model):
        kind = (f"LIBSVM kernel model (svm_type {model.svm_type}, kernel_type {model.kernel_type})"
                if hasattr(model, "svm_type") else f"{type(model).__name__} (not a linear model)")
        raise ParameterError(f"{where}: a {kind} cannot start -s {spec.name}: a warm start takes LIBLINEAR's "
                             "linear model of the same problem")
    bits = getattr(options, "hash_bits", None)
    if model.hash_bits != bits:
        has = f"2^{model.hash_bits} hashed buckets" if model.hash_bits else "features not hashed"
        run = f"--hash-bits {bits}" if bits else "no --hash-bits"
        raise ParameterError(f"{where}: the model's w is over {has}, the run has {run}: a warm start needs the "
                             "same features")
    want = PROBLEM.get(spec.solver_type)
    if want is None or PROBLEM.get(model.solver_type) != want:
        have = PROBLEM.get(model.solver_type, model.solver_type)
        raise ParameterError(f"{where}: a model of solver_type {model.solver_type} ({have}) cannot start "
                             f"-s {spec.name} ({want}): a warm start takes a model of the same problem")


def check_run(model, params):
    """Refuse a model that cannot start a run of `params` whatever its rows: check_kind, and a bias that is not
    the run's (-B)."""
    check_kind(model, params.spec, params.options)
    if (model.bias >= 0 or params.bias >= 0) and model.bias != params.bias:
        has = f"bias {model.bias:g}" if model.bias >= 0 else "no bias"
        give = f"-B {model.bias:g}" if model.bias >= 0 else "no -B (or -B -1)"
        run = f"-B {params.bias:g}" if params.bias >= 0 else "no bias"
        raise ParameterError(f"{_where(model)}: the model has {has}, the run {run}: give {give}")


def model_starts(model, params, labels, n_features):
    """[{"w": w}] per problem of the run (one-vs-rest in `labels`' order; one for two classes or regression) from a
    linear model's weights, for a run over n_features features with params' bias; ParameterError (naming the
    model) when the model's type, bias or classes do not fit the run (see the module's doc)."""
    check_run(model, params)
    where = _where(model)
    W = model.W
    if model.bias >= 0:
        W, b = W[:-1], W[-1:]
    if W.shape[0] >= n_features:
        W = W[:n_features]
    else:
        W = np.vstack([W, np.zeros((n_features - W.shape[0], W.shape[1]))])
    if model.bias >= 0:
        W = np.vstack([W, b])
    if labels is None:                      # regression: one problem
        return [{"w": np.ascontiguousarray(W[:, 0])}]
    run, have = [int(v) for v in labels], [int(v) for v in model.label]
    if sorted(run) != sorted(have):
        new = sorted(set(run) - set(have))
        gone = sorted(set(have) - set(run))
        what = "; ".join(x for x in (f"the data's {_list(new)} not in the model" if new else "",
                                     f"the model's {_list(gone)} not in the data" if gone else "") if x)
        raise ParameterError(f"{where}: the model's {_list(have, 'class')} are not the data's "
                             f"{_list(run, 'class')} ({what}): a warm start needs the same classes")
    if len(run) == 2:                       # one w, for the first label as +1
        sign = 1.0 if run[0] == have[0] else -1.0
        return [{"w": np.ascontiguousarray(sign * W[:, 0])}]
    return [{"w": np.ascontiguousarray(W[:, have.index(c)])} for c in run]


def _list(labels, word="class"):
    return f"{word}es {' '.join(str(v) for v in labels)}" if len(labels) != 1 else f"{word} {labels[0]}"


def primal_to_dual(args, y, C, w, l1_loss):
    """The dual start of a dual solver from w over the rows `args` (the kernels' (row view, rows)) with labels y
    (+1/-1) and costs C: alpha_i = 2 C_i max(0, 1 - y_i w.x_i) for the L2 loss, C_i where y_i w.x_i < 1 else 0 for
    the hinge (l1_loss; see the module's doc)."""
    wx = np.empty(y.shape[0], np.float64)
    K.xv(*args, np.ascontiguousarray(w, dtype=np.float64), wx)
    z = 1.0 - y * wx
    if l1_loss:
        return np.where(z > 0.0, C, 0.0)
    return 2.0 * C * np.maximum(z, 0.0)
