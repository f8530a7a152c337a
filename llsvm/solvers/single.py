"""-s epsilon_svr and -s one_class: LIBSVM's epsilon-SVR (svm-train -s 3) and one-class SVM (svm-train -s 2), one
problem over all rows in their file order, on the generic SMO of cext/_smo.pyx (LIBSVM's Solver, Chang & Lin,
"LIBSVM: a library for support vector machines", ACM TIST 2(3), 2011, sections 2.2, 2.4 and 4).

- epsilon-SVR (solve_epsilon_svr): 2l variables, a_t for the rows with y_t = +1 and linear term p - z_t, a*_t with
  y_t = -1 and p + z_t (z: the targets, p: -p epsilon), box C for all, start 0; the kernel column of variable t is
  row (t mod l)'s, its sign y: each row appears twice in the solver's positions (LIBSVM's SVR_Q). The model's
  coefficients are a_t - a*_t, "nu = sum |coef| / (C l)" is printed, as LIBSVM's.
- one-class (solve_one_class): min 1/2 a'Ka subject to e'a = nu l, 0 <= a_t <= 1, y = +1, p = 0, from LIBSVM's
  start (the first floor(nu l) a_t at 1, the next at nu l - floor(nu l)).
- row weights W (the dataset's, docs/weights.md; rows of weight 0 are gone before): scikit-learn's weighted LIBSVM,
  the box of row t's variables W_t C (epsilon-SVR, nu-SVR: both of them) or W_t (one-class), read by the kernel
  through row_cost; nu l becomes nu sum W in the starts and sums (nu-SVR: C nu sum W / 2 for each half, a_t =
  min(W_t C, what is left); one-class: a_t = min(W_t, what is left of nu sum W), in order) and in the certificate.
Output lines as svm-train's: the Solver's progress, `optimization finished, #iter = N`, (`nu = ` for SVR),
`obj = , rho = `, `nSV = , nBSV = ` (no "Total nSV": LIBSVM prints it for classification only). The model is
LIBSVM's epsilon_svr / one_class file (no label or nr_sv line), byte for byte svm-train's. The certificate: dual
= -f(a) (the solver's objective), primal of the same (scaled) problem at the model, their gap, and the solver's
maximal violating pair.
"""
import math
from dataclasses import replace

import numpy as np

from .._ext._kernel import kernel_sq_norms
from .._ext._smo import nu_start
from ..errors import ParameterError
from ..models.svm import KERNEL_TYPES, NR_MARKS, NoRowsModel, SVMModel
from ..options import SMOOptions
from ..params import echo
from ..predict import printf_f
from .common import FitResult, idle_threads, training_draws
from .folds import plain_folds
from .smo import check_kernel_diag, check_pair_finite, report_problem, solve

JSON_FIELDS = ("C", "eps", "svr_p", "nu", "kernel_type", "gamma", "degree", "coef0", "cache_size", "shrinking",
               "probability", "nr_class", "labels", "total_sv", "pairs")
SVM_TYPE = {"epsilon_svr": "epsilon_svr", "nu_svr": "nu_svr", "one_class": "one_class"}


def fit(ds, params, reporter, n_features=None, context=None):
    """Train LIBSVM's epsilon-SVR or one-class SVM on a loaded dataset; returns an SVMModel (meta: results,
    params, options). n_features: the num_features that sets the default gamma (cross-validation passes the whole
    set's); context: accepted for the grid search's interface, unused."""
    spec = params.spec
    opts = (params.options or SMOOptions()).resolved(ds.n_features if n_features is None else n_features)
    l = ds.n_rows
    view = ds.row_view()
    sq = kernel_sq_norms(view, opts.kernel_params())     # -t 4: the diagonal K(x, x)
    top = check_kernel_diag(ds, sq, opts)
    everything = np.arange(l, dtype=np.int64)
    z = np.asarray(ds.y, np.float64)
    W = getattr(ds, "weights", None)
    total = float(l) if W is None or not l else float(np.cumsum(W)[-1])     # sum W (in row order): nu l -> nu sum W
    svr = spec.name in ("epsilon_svr", "nu_svr")
    if svr:
        rows = np.concatenate([everything, everything])
        y = np.concatenate([np.ones(l, np.int8), -np.ones(l, np.int8)])
        C = float(params.C)
        alpha = np.zeros(2 * l, np.float64)
        if spec.name == "epsilon_svr":
            p = np.concatenate([params.svr_p - z, params.svr_p + z])
        else:
            p = np.concatenate([-z, z])
            # LIBSVM's solve_nu_svr start: a_t = a*_t = min(what is left of C nu l / 2, C) in turn (weighted:
            # C nu sum W / 2 and W_t C)
            nu_start(np.ones(l, np.int8), C * params.nu * total / 2, C if W is None else C * W, alpha[:l])
            alpha[l:] = alpha[:l]
        hint = f"C {C:g} with kernel values up to {top:g}; lower -c or scale the features or targets"
    else:
        rows, y, p = everything, np.ones(l, np.int8), np.zeros(l, np.float64)
        alpha = np.zeros(l, np.float64)
        if W is None:
            n = int(params.nu * l)
            alpha[:n] = 1.0
            if n < l:
                alpha[n] = params.nu * l - n
        else:       # scikit-learn's weighted solve_one_class: a_t = min(W_t, what is left of nu sum W), in order
            nu_start(np.ones(l, np.int8), params.nu * total, W, alpha)
        C = 1.0
        hint = f"kernel values up to {top:g}; scale the features"
    out = solve(view, rows, y, p, alpha, C, C, opts, sq, params.eps, params.max_iter, idle_threads(params.threads),
                nu=spec.name == "nu_svr", doubled=svr, reporter=reporter)
    out.pop("cache")
    coef = alpha[:l] - alpha[l:] if svr else alpha
    if l:
        check_pair_finite(spec.name, 1, -1, coef, out["rho"], hint, everything)
    out.update(_certificate(spec.name, out, coef, z, p, params, l, W))
    out["nSV"] = int(np.count_nonzero(coef))
    out["nBSV"] = int(np.count_nonzero(np.abs(coef) >= out["C"][:l]))      # C_t: the kernel's box of row t
    out["sum_alpha"] = float(np.abs(coef).sum())
    # LIBSVM's lines: solve_epsilon_svr prints nu = sum |coef| / (C l) (0 / 0 on no rows: x86's NaN, its sign bit
    # set, "-nan"), solve_nu_svr epsilon = -r (no rows: -(-nan), "nan"), the one-class SVM nothing
    nu = out["sum_alpha"] / (C * l) if l else -math.nan
    line = {"epsilon_svr": f"nu = {printf_f(nu)}\n",
            "nu_svr": f"epsilon = {printf_f(-out['r'])}\n"}.get(spec.name, "")
    report_problem(reporter, out, line)
    if opts.probability and svr and not l:
        # a fold of -v's leave-one-out on one row: svm_svr_probability's folds of no rows are none (svm-train
        # divides by zero)
        raise ParameterError(f"-s {spec.name} -b 1 -v on a set of 1 row: the fold that leaves the row out trains "
                             "on no rows, and the probability model of no rows (a 5-fold cross-validation) has no "
                             "fold")
    sv = np.flatnonzero(coef)

    def make(**probability):
        if not l:           # a fold of leave-one-out on one row: LIBSVM's model of no rows (rho nan)
            return NoRowsModel(SVM_TYPE[spec.name])
        return SVMModel(SVM_TYPE[spec.name], KERNEL_TYPES[opts.kernel_type], opts.degree, opts.gamma, opts.coef0,
                        np.array([out["rho"]]), coef[sv].reshape(1, -1), ds.take_rows(sv), **probability)

    model = make()
    meta = {}
    if opts.probability and svr:
        # LIBSVM's svm_train: the probability model after the problem's own solve
        folds = plain_folds(l, 5, training_draws(params), reporter, libsvm=True)
        sigma = svr_probability(ds, folds, params.but(options=replace(opts, probability=0)), reporter)
        if math.isfinite(sigma):
            model = make(probA=[sigma])
        else:
            # nan on 1 row (the 5 folds train on no rows), or residuals that overflow: LIBSVM's model holds it
            # (cross-validation predicts values, which it does not change), and so does this one, which save
            # refuses (a file llsvm-predict would refuse), saying what to change
            model.probA = np.array([sigma])
            if l == 1:
                meta["nonfinite_hint"] = (f"-s {spec.name} -b 1 needs a training set of 2 rows or more: sigma "
                                          "comes from a 5-fold cross-validation, which on 1 row trains on no rows")
    elif opts.probability:
        marks = density_marks(model.decision_function(ds), reporter)
        if marks is not None:
            model = make(prob_density_marks=marks)
    result = FitResult(w=None, alpha=coef, n_iter=out["n_iter"], primal=out["primal"], dual=out["dual"],
                       gap=out["primal"] - out["dual"], max_violation=out["gap"], nSV=out["nSV"],
                       converged=out["converged"], solver=spec.name,
                       extra={"nBSV": out["nBSV"], "obj": out["obj"], "rho": out["rho"]})
    model.meta = {"results": [result], "params": params, "options": opts, "sv_indices": sv + 1, **meta}
    return model


def svr_probability(ds, folds, params, reporter):
    """sigma of LIBSVM's Laplace model of an SVR's errors (svm_svr_probability): every row's residual z - f(x)
    from the SVR of its type trained on the other folds (`folds`: [(train, test)], LIBSVM's 5 from a permutation,
    plain_folds; `params` without -b, each fold's training printing svm-train's lines as LIBSVM's nested svm_train
    does), their mean absolute value m, then the mean absolute value of the residuals within 5 sqrt(2) m (the
    rest are outliers). Prints svm-train's "Prob. model for test data" lines."""
    z = np.asarray(ds.y, np.float64)
    residual = np.empty(ds.n_rows, np.float64)
    for train, test in folds:
        sub = fit(ds.take_rows(train), params, reporter, n_features=ds.n_features)
        residual[test] = z[test] - sub.decision_function(ds.take_rows(test))
    size = np.abs(residual)
    # the sums in LIBSVM's order (cumsum adds one after the other): the printed %g is svm-train's
    mae = float(np.cumsum(size)[-1]) / ds.n_rows
    std = math.sqrt(2 * mae * mae)
    kept = size[~(size > 5 * std)]
    sigma = float(np.cumsum(kept)[-1]) / kept.size
    reporter.info("Prob. model for test data: target value = predicted value + z,\nz: Laplace distribution "
                  f"e^(-|z|/sigma)/(2sigma),sigma= {sigma:g}\n")
    return sigma


def density_marks(dec, reporter, nr_marks=NR_MARKS):
    """A one-class model's prob_density_marks, LIBSVM's svm_one_class_probability (the binning of Que and Lin):
    the training rows' decision values sorted, split at the first value >= 0 into n negatives and p positives;
    the marks are the midpoints of consecutive bin edges, nr_marks / 2 edges taken evenly from each side
    (sorted[i n / 5] below 0, 0 itself, sorted[n - 1 + i p / 5] above). None, with LIBSVM's warning on stderr, when
    either side has fewer than nr_marks / 2 values (the model then has no probability model, as LIBSVM's)."""
    dec = np.sort(np.asarray(dec, np.float64), kind="stable")
    l = dec.size
    mid = nr_marks // 2
    nonneg = np.flatnonzero(dec >= 0)
    neg = int(nonneg[0]) if nonneg.size else 0       # LIBSVM's neg_counter: 0 when no value is >= 0
    pos = l - neg
    if neg < mid or pos < mid:
        reporter.warning(f"WARNING: number of positive or negative decision values <{mid}; too few to do a "
                         "probability estimation.\n")
        return None
    edges = [dec[i * neg // mid] for i in range(mid)] + [0.0] + \
        [dec[neg - 1 + (i - mid) * pos // mid] for i in range(mid + 1, nr_marks + 1)]
    return np.array([(edges[i] + edges[i + 1]) / 2 for i in range(nr_marks)], np.float64)


def _certificate(name, out, coef, z, p, params, l, W=None):
    """The primal of the problem the solver's dual belongs to, at the solution, and the dual (-f(a)).
    epsilon-SVR: 1/2 coef'K coef + C sum max(0, |z_t - f(x_t)| - epsilon), f = K coef - rho; K coef is G - p over
    the first l variables. nu-SVR: the same with epsilon = -r (the solver's), plus C nu l epsilon. One-class (scaled
    by nu l, LIBSVM's form): 1/2 a'Ka + sum max(0, rho - (Ka)_t) - nu l rho, with Ka = G. Row weights W: each
    row's loss term times W_t, and l is sum W."""
    G, rho = out["G"], out["rho"]

    def total(terms):
        return float(terms.sum()) if W is None else float((W * terms).sum())

    size = l if W is None else float(W.sum())
    with np.errstate(over="ignore", invalid="ignore"):
        if name in ("epsilon_svr", "nu_svr"):
            Kc = G[:l] - p[:l]
            wTw = float((coef * Kc).sum())
            epsilon = params.svr_p if name == "epsilon_svr" else -out["r"]
            loss = total(np.maximum(0.0, np.abs(z - (Kc - rho)) - epsilon))
            if name == "nu_svr":
                loss += params.nu * size * epsilon
            primal = 0.5 * wTw + float(params.C) * loss
        else:
            wTw = float((coef * G).sum())
            primal = 0.5 * wTw + total(np.maximum(0.0, rho - G)) - params.nu * size * rho
    return {"primal": primal, "dual": -out["obj"]}


def metrics(model, params, ds):
    """--json of -s epsilon_svr and -s one_class: the certificate of the one problem, LIBSVM's parameters."""
    (r,) = model.meta["results"]
    opts = model.meta["options"]
    return {
        "solver": params.spec.name, "n_rows": ds.n_rows, "n_features": ds.n_features, "nnz": ds.nnz,
        "n_iter": r.n_iter, "primal": r.primal, "dual": r.dual, "gap": r.gap, "max_violation": r.max_violation,
        "nSV": int(model.total_sv), "converged": r.converged,
        **echo(params, "C", "eps", "svr_p", "nu", "kernel_type", "gamma", "degree", "coef0", "cache_size",
               "shrinking", "probability", options=opts),
        "kernel_type": KERNEL_TYPES[opts.kernel_type],
        # LIBSVM's model of one problem: nr_class 2, no labels; its one problem as -s smo's pairs list them
        "nr_class": 2, "labels": [], "total_sv": int(model.total_sv),
        "pairs": [{"labels": [], "n_iter": r.n_iter, "obj": r.extra["obj"], "rho": r.extra["rho"], "primal": r.primal,
                   "dual": r.dual, "gap": r.gap, "max_violation": r.max_violation, "nSV": r.nSV,
                   "nBSV": r.extra["nBSV"], "converged": r.converged}],
    }

