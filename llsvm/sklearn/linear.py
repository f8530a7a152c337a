"""LinearSVC, LogisticRegression and LinearSVR: scikit-learn's classes of the same name, over LIBLINEAR's solvers.

Their parameters are scikit-learn's, with its defaults and its meaning: penalty, loss, dual and multi_class choose
LIBLINEAR's solver type exactly as scikit-learn's _get_liblinear_solver_type does (dual="auto" too), tol is -e,
max_iter LIBLINEAR's iteration limit, intercept_scaling -B. Beyond scikit-learn's: `solver` (LIBLINEAR's number, which
then wins over penalty / loss / dual), `regularize_bias` (-R), `certify` (-s 3), `n_jobs` (threads over the classes),
`warm_start` and `client` (llsvm.dask). Where these defaults differ from llsvm-train's (LIBLINEAR's train: -s 1,
-e per solver, no bias, seed 1), the estimator's are scikit-learn's; `LinearSVC(solver=1, tol=None,
fit_intercept=False)` is `llsvm-train -s 1` exactly.
"""
import warnings

import numpy as np
from sklearn.linear_model import LogisticRegression as _SkLogisticRegression
from sklearn.linear_model._base import SparseCoefMixin
from sklearn.svm import LinearSVC as _SkLinearSVC
from sklearn.svm import LinearSVR as _SkLinearSVR
from sklearn.utils._param_validation import StrOptions

from .base import Classifier, Linear, Regressor, constraints

# LIBLINEAR's solver type of (loss, penalty, dual), as scikit-learn's _get_liblinear_solver_type; crammer_singer: 4
LIBLINEAR_TYPE = {
    ("logistic_regression", "l2", False): 0, ("logistic_regression", "l2", True): 7,
    ("logistic_regression", "l1", False): 6,
    ("squared_hinge", "l2", True): 1, ("squared_hinge", "l2", False): 2, ("squared_hinge", "l1", False): 5,
    ("hinge", "l2", True): 3,
    ("squared_epsilon_insensitive", "l2", False): 11, ("squared_epsilon_insensitive", "l2", True): 12,
    ("epsilon_insensitive", "l2", True): 13,
}
CRAMMER_SINGER = 4
_OF_TYPE = {t: k for k, t in LIBLINEAR_TYPE.items()}


def liblinear_type(multi_class, penalty, loss, dual):
    """LIBLINEAR's solver number of scikit-learn's parameters, refused in scikit-learn's words."""
    if multi_class == "crammer_singer":
        return CRAMMER_SINGER
    if multi_class != "ovr":
        raise ValueError(f"`multi_class` must be one of `ovr`, `crammer_singer`, got {multi_class!r}")
    number = LIBLINEAR_TYPE.get((loss, penalty, dual))
    if number is not None:
        return number
    if not any(k[0] == loss for k in LIBLINEAR_TYPE):
        why = f"loss='{loss}' is not supported"
    elif not any(k[:2] == (loss, penalty) for k in LIBLINEAR_TYPE):
        why = f"The combination of penalty='{penalty}' and loss='{loss}' is not supported"
    else:
        why = (f"The combination of penalty='{penalty}' and loss='{loss}' are not supported when "
               f"dual={dual}")
    raise ValueError(f"Unsupported set of arguments: {why}, Parameters: penalty={penalty!r}, loss={loss!r}, "
                     f"dual={dual!r}")


def resolve_dual(dual, loss, penalty, multi_class, shape):
    """scikit-learn's dual="auto": the dual when there are fewer rows than features and the combination has one,
    else the primal when it has one."""
    if dual != "auto":
        return dual
    first = shape[0] < shape[1]
    try:
        liblinear_type(multi_class, penalty, loss, first)
        return first
    except ValueError:
        return not first


def shape_of(X):
    """(rows, features) of the training data: an array, or the dataset read from a path."""
    if hasattr(X, "n_rows"):
        return (X.n_rows, X.n_features)
    return X.shape


class _LiblinearParams:
    """The parameters every LIBLINEAR-backed estimator passes on as they are."""

    _reads_rows = True

    _passed = ("C", "tol", "random_state", "max_iter", "regularize_bias", "n_jobs")

    def _chosen(self, number):
        """The spec of `solver` when given (it wins; scikit-learn's choosers must then agree with it or keep their
        defaults), else of LIBLINEAR's number that scikit-learn's parameters choose."""
        if self.solver in (None, "liblinear"):       # "liblinear": scikit-learn's name of all of them
            return self._spec(number)
        spec = self._spec()
        if spec.number is not None and spec.number != number:
            chosen = _OF_TYPE.get(spec.number)
            for name, default in self._choosers().items():
                value = getattr(self, name)
                if value != default and value != "auto" and (chosen is None or value not in chosen):
                    raise ValueError(f"solver={self.solver!r} is LIBLINEAR's -s {spec.number}: {name}={value!r} "
                                     f"does not agree with it (leave {name} at its default)")
        return spec

    def _choosers(self):
        return {}

    def _at_limit(self):
        return self.max_iter is not None and any(int(r.n_iter) >= self.max_iter for r in self._results)

    def _fields(self, spec):
        fields = self.own_fields(spec, [n for n in self._passed if hasattr(self, n)])
        if fields.get("max_iter") is not None and fields["max_iter"] < 1:
            raise ValueError(f"max_iter={self.max_iter!r}: at least 1")
        return fields


class LinearSVC(_LiblinearParams, Linear, SparseCoefMixin, Classifier):
    """Linear support vector classification over LIBLINEAR's solvers, scikit-learn's LinearSVC.

    The parameters and attributes are scikit-learn's (``sklearn.svm.LinearSVC``), with the same defaults; the
    solver is llsvm's LIBLINEAR 2.50 (the same models as ``llsvm-train -s N``, byte for byte).

    Parameters
    ----------
    penalty : {'l1', 'l2'}, default='l2'
        The norm of the penalty ('l1': LIBLINEAR's -s 5, sparse ``coef_``).
    loss : {'hinge', 'squared_hinge'}, default='squared_hinge'
        'hinge' is the L1-loss SVM (-s 3), 'squared_hinge' the L2-loss SVM (-s 1 dual, -s 2 primal).
    dual : "auto" or bool, default="auto"
        Solve the dual or the primal problem; "auto" chooses as scikit-learn does (the dual when there are fewer
        rows than features and the combination has one, else the primal when it has one).
    tol : float, default=1e-4
        The stopping tolerance (LIBLINEAR's -e); None: the solver's own default, as llsvm-train.
    C : float, default=1.0
        The cost of a training error (-c).
    multi_class : {'ovr', 'crammer_singer'}, default='ovr'
        One-vs-rest problems, or Crammer and Singer's multi-class SVM (-s 4; penalty, loss and dual are ignored).
    fit_intercept : bool, default=True
        Whether to fit an intercept: a constant feature ``intercept_scaling`` appended to every row (-B), whose
        weight is regularised like the others (unless ``regularize_bias=False``).
    intercept_scaling : float, default=1
        The value of that constant feature (-B).
    class_weight : dict or 'balanced', default=None
        C of class i multiplied by ``class_weight[i]`` (-wi); 'balanced': n_samples / (n_classes * count).
    verbose : int, default=0
        Print LIBLINEAR's output on stdout.
    random_state : int, RandomState instance or None, default=None
        The seed of the dual solvers' random order (--seed); None is llsvm's default seed 1 (the same model every
        time: llsvm keeps no global random state).
    max_iter : int, default=1000
        The iteration limit; a ConvergenceWarning says when it was reached. None: the solver's default.
    solver : int or str, default=None
        LIBLINEAR's solver number (1, 2, 3, 4, 5) or name; it wins over penalty, loss, dual and multi_class, which
        must then agree with it or keep their defaults. None or 'liblinear': chosen by them, as scikit-learn does.
    regularize_bias : bool, default=True
        Whether the intercept's weight is regularised (LIBLINEAR's default; False is -R).
    certify : bool, default=False
        -s 3 only: go on past LIBLINEAR's stopping point to a certified duality gap (--certify).
    n_jobs : int, default=None
        Threads over the one-vs-rest problems (--threads); None: one.
    warm_start : bool, default=False
        Start a fit from the last fit's solution (the solvers LIBLINEAR's -C warm-starts: 1, 2, 3; ignored for the
        others and with solver='liblinear', as scikit-learn ignores it for liblinear).
    client : dask.distributed.Client or str, default=None
        Train on a Dask cluster (a Client, 'local', or a scheduler's address) from the path of an llsvm binary
        file every worker reads.

    Attributes
    ----------
    coef_ : ndarray of shape (1, n_features) if n_classes == 2 else (n_classes, n_features)
        The weights; for two classes, of ``classes_[1]``.
    intercept_ : ndarray of shape (1,) if n_classes == 2 else (n_classes,), or 0.0 without an intercept
        The intercepts.
    classes_ : ndarray of shape (n_classes,)
        The class labels, sorted.
    n_features_in_ : int
        The number of features seen in fit.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        The feature names seen in fit, when X had string column names.
    n_iter_ : int
        The largest iteration count of the one-vs-rest problems.
    primal_, dual_, gap_, max_violation_ : float or ndarray
        llsvm's certificate of each problem: primal and dual objective, duality gap, largest violation of the
        optimality conditions.
    converged_ : bool
        Whether every problem met its stopping rule.
    model_ : llsvm model
        LIBLINEAR's model (``save`` writes its file).

    Examples
    --------
    >>> from llsvm.sklearn import LinearSVC
    >>> from sklearn.datasets import make_classification
    >>> X, y = make_classification(n_features=4, random_state=0)
    >>> clf = LinearSVC(tol=1e-5).fit(X, y)
    >>> clf.predict([[0, 0, 0, 0]])
    array([1])
    """

    _solvers = (1, 2, 3, 4, 5)
    _parameter_constraints = constraints(_SkLinearSVC)
    _not_exposed = {}

    def __init__(self, penalty="l2", loss="squared_hinge", *, dual="auto", tol=1e-4, C=1.0, multi_class="ovr",
                 fit_intercept=True, intercept_scaling=1, class_weight=None, verbose=0, random_state=None,
                 max_iter=1000, solver=None, regularize_bias=True, certify=False, n_jobs=None, warm_start=False,
                 client=None):
        self.penalty = penalty
        self.loss = loss
        self.dual = dual
        self.tol = tol
        self.C = C
        self.multi_class = multi_class
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.class_weight = class_weight
        self.verbose = verbose
        self.random_state = random_state
        self.max_iter = max_iter
        self.solver = solver
        self.regularize_bias = regularize_bias
        self.certify = certify
        self.n_jobs = n_jobs
        self.warm_start = warm_start
        self.client = client

    _passed = _LiblinearParams._passed + ("certify",)

    def _choosers(self):
        return {"penalty": "l2", "loss": "squared_hinge", "dual": "auto", "multi_class": "ovr"}

    def _translate(self, X):
        number = None
        if self.solver in (None, "liblinear"):
            dual = resolve_dual(self.dual, self.loss, self.penalty, self.multi_class, shape_of(X))
            number = liblinear_type(self.multi_class, self.penalty, self.loss, dual)
        spec = self._chosen(number)
        return spec, self._fields(spec)

    def _convergence_message(self):
        return "Liblinear failed to converge, increase the number of iterations."

    def _set_fitted(self, model, data):
        super()._set_fitted(model, data)
        if model.nr_w == 2 and len(self.classes_) == 2:          # Crammer and Singer's two columns: one, as scikit-learn
            self.coef_ = (self.coef_[1] - self.coef_[0]).reshape(1, -1)
            self.intercept_ = np.array([self.intercept_[1] - self.intercept_[0]])
        if not self.fit_intercept:
            self.intercept_ = 0.0


class LogisticRegression(_LiblinearParams, Linear, SparseCoefMixin, Classifier):
    """Logistic regression over LIBLINEAR's solvers, scikit-learn's LogisticRegression with solver='liblinear'.

    The parameters and attributes are scikit-learn's (``sklearn.linear_model.LogisticRegression``); its solvers are
    LIBLINEAR's (llsvm's LIBLINEAR 2.50), so ``solver`` is 'liblinear' or LIBLINEAR's number, never 'lbfgs'.

    Parameters
    ----------
    penalty : {'l1', 'l2'}, default='deprecated'
        Deprecated by scikit-learn 1.8 (a FutureWarning, as scikit-learn's): use ``l1_ratio`` (0: 'l2', 1: 'l1').
    C : float, default=1.0
        The inverse of the regularisation strength (-c); C=np.inf (no penalty) is refused, as by scikit-learn's
        liblinear.
    l1_ratio : float, default=0.0
        0: the L2 penalty (-s 0 primal, -s 7 dual), 1: the L1 penalty (-s 6); values between are elastic-net,
        which LIBLINEAR does not solve (refused).
    dual : bool, default=False
        Solve the dual (-s 7, L2 penalty only).
    tol : float, default=1e-4
        The stopping tolerance (-e); None: the solver's own default.
    fit_intercept : bool, default=True
        Whether to fit an intercept (-B intercept_scaling).
    intercept_scaling : float, default=1
        The constant feature appended to every row (-B).
    class_weight : dict or 'balanced', default=None
        C of class i multiplied by ``class_weight[i]`` (-wi).
    random_state : int, RandomState instance or None, default=None
        The seed of the dual solver's order (--seed); None: llsvm's default seed 1.
    solver : {'liblinear'} or int, default=None
        None: LIBLINEAR's solver that penalty / l1_ratio and dual choose, one-vs-rest over several classes as
        LIBLINEAR's train. 'liblinear': exactly scikit-learn's, which refuses more than two classes. Or LIBLINEAR's
        number (0, 6, 7), which wins over l1_ratio and dual. scikit-learn's other solvers are refused.
    max_iter : int, default=100
        The iteration limit (a ConvergenceWarning when reached); None: the solver's default.
    verbose : int, default=0
        Print LIBLINEAR's output on stdout.
    warm_start : bool, default=False
        Start a fit from the last fit's solution (-s 0 only, as LIBLINEAR's -C; ignored otherwise and with
        solver='liblinear', as scikit-learn ignores it for liblinear).
    n_jobs : int, default=None
        Threads over the one-vs-rest problems (--threads).
    regularize_bias : bool, default=True
        Whether the intercept's weight is regularised (False: -R).
    client : dask.distributed.Client or str, default=None
        Train on a Dask cluster from the path of an llsvm binary file.

    Attributes
    ----------
    coef_ : ndarray of shape (1, n_features) or (n_classes, n_features)
        The weights; for two classes, of ``classes_[1]``.
    intercept_ : ndarray of shape (1,) or (n_classes,), or 0.0 without an intercept
        The intercepts.
    classes_ : ndarray of shape (n_classes,)
        The class labels, sorted.
    n_features_in_ : int
        The number of features seen in fit.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        The feature names seen in fit, when X had string column names.
    n_iter_ : ndarray of shape (1,) or (n_classes,)
        The iteration count of each problem, as scikit-learn's liblinear gives it.
    primal_, dual_, gap_, max_violation_ : float or ndarray
        llsvm's certificate of each problem.
    converged_ : bool
        Whether every problem met its stopping rule.
    model_ : llsvm model
        LIBLINEAR's model.

    Examples
    --------
    >>> from llsvm.sklearn import LogisticRegression
    >>> from sklearn.datasets import load_iris
    >>> X, y = load_iris(return_X_y=True)
    >>> clf = LogisticRegression(solver="liblinear").fit(X[y < 2], y[y < 2])
    >>> clf.predict_proba(X[:1]).shape
    (1, 2)
    """

    _solvers = (0, 6, 7)
    _always_proba = True
    _parameter_constraints = constraints(
        _SkLogisticRegression,
        solver=[StrOptions({"liblinear", "lbfgs", "newton-cg", "newton-cholesky", "sag", "saga"}), int, None])

    def __init__(self, penalty="deprecated", *, C=1.0, l1_ratio=0.0, dual=False, tol=1e-4, fit_intercept=True,
                 intercept_scaling=1, class_weight=None, random_state=None, solver=None, max_iter=100, verbose=0,
                 warm_start=False, n_jobs=None, regularize_bias=True, client=None):
        self.penalty = penalty
        self.C = C
        self.l1_ratio = l1_ratio
        self.dual = dual
        self.tol = tol
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.class_weight = class_weight
        self.random_state = random_state
        self.solver = solver
        self.max_iter = max_iter
        self.verbose = verbose
        self.warm_start = warm_start
        self.n_jobs = n_jobs
        self.regularize_bias = regularize_bias
        self.client = client

    def _penalty(self):
        """scikit-learn 1.9's penalty of penalty / l1_ratio / C (with its FutureWarnings)."""
        if self.penalty == "deprecated":
            if self.l1_ratio is None:
                warnings.warn("'l1_ratio=None' was deprecated in version 1.8 and will trigger an error in 1.10. "
                              "Use 0<=l1_ratio<=1 instead.", FutureWarning, stacklevel=4)
            penalty = {0: "l2", None: "l2", 1: "l1"}.get(self.l1_ratio, "elasticnet")
            return None if self.C == np.inf else penalty
        warnings.warn("'penalty' was deprecated in version 1.8 and will be removed in 1.10. To avoid this warning, "
                      "leave 'penalty' set to its default value and use 'l1_ratio' or 'C' instead.", FutureWarning,
                      stacklevel=4)
        return self.penalty

    def _choosers(self):
        return {"penalty": "deprecated", "l1_ratio": 0.0, "dual": False}

    def _translate(self, X):
        number = None
        if self.solver is None or self.solver == "liblinear":
            penalty = self._penalty()
            if penalty is None:
                raise ValueError("C=np.inf as well as penalty=None is not supported for the liblinear solver")
            if penalty == "elasticnet":
                raise ValueError("Only 'saga' solver supports elasticnet penalty, got solver=liblinear.")
            number = liblinear_type("ovr", penalty, "logistic_regression", self.dual)
        elif isinstance(self.solver, str) and self.solver in self._parameter_constraints["solver"][0].options:
            raise ValueError(f"solver={self.solver!r}: llsvm's LogisticRegression solves with LIBLINEAR's solvers "
                             f"('liblinear', or its numbers 0, 6, 7)")
        spec = self._chosen(number) if self.solver != "liblinear" else self._spec(number)
        return spec, self._fields(spec)

    def _check_classes(self):
        super()._check_classes()
        if self.solver == "liblinear" and len(self.classes_) > 2:
            raise ValueError("The 'liblinear' solver does not support multiclass classification (n_classes >= 3). "
                             "Either use another solver or wrap the estimator in a OneVsRestClassifier to keep "
                             "applying a one-versus-rest scheme.")

    def _convergence_message(self):
        return "Liblinear failed to converge, increase the number of iterations."

    def _set_fitted(self, model, data):
        super()._set_fitted(model, data)
        self.n_iter_ = np.array([int(r.n_iter) for r in self._results] or [0], dtype=np.int32)
        if not self.fit_intercept:
            self.intercept_ = 0.0

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        if self.solver == "liblinear":
            tags.classifier_tags.multi_class = False
        return tags


class LinearSVR(_LiblinearParams, Linear, Regressor):
    """Linear support vector regression over LIBLINEAR's solvers, scikit-learn's LinearSVR.

    Parameters
    ----------
    epsilon : float, default=0.0
        The width of the insensitive zone (-p; llsvm-train's default is 0.1).
    tol : float, default=1e-4
        The stopping tolerance (-e); None: the solver's own default.
    C : float, default=1.0
        The cost of a training error (-c).
    loss : {'epsilon_insensitive', 'squared_epsilon_insensitive'}, default='epsilon_insensitive'
        L1-loss SVR (-s 13, dual) or L2-loss SVR (-s 11 primal, -s 12 dual).
    fit_intercept : bool, default=True
        Whether to fit an intercept (-B intercept_scaling).
    intercept_scaling : float, default=1.0
        The constant feature appended to every row (-B).
    dual : "auto" or bool, default="auto"
        Solve the dual or the primal; "auto" as scikit-learn chooses.
    verbose : int, default=0
        Print LIBLINEAR's output on stdout.
    random_state : int, RandomState instance or None, default=None
        The seed of the dual solvers' order (--seed); None: llsvm's default seed 1.
    max_iter : int, default=1000
        The iteration limit (a ConvergenceWarning when reached); None: the solver's default.
    solver : int or str, default=None
        LIBLINEAR's number (11, 12, 13), which wins over loss and dual; None or 'liblinear': chosen by them.
    regularize_bias : bool, default=True
        Whether the intercept's weight is regularised (False: -R).
    n_jobs : int, default=None
        Threads (--threads).
    warm_start : bool, default=False
        Start a fit from the last fit's solution (-s 11 only, as LIBLINEAR's -C; ignored otherwise).
    client : dask.distributed.Client or str, default=None
        Train on a Dask cluster from the path of an llsvm binary file.

    Attributes
    ----------
    coef_ : ndarray of shape (n_features,)
        The weights.
    intercept_ : ndarray of shape (1,), or 0.0 without an intercept
        The intercept.
    n_features_in_ : int
        The number of features seen in fit.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        The feature names seen in fit, when X had string column names.
    n_iter_ : int
        The iteration count.
    primal_, dual_, gap_, max_violation_ : float
        llsvm's certificate.
    converged_ : bool
        Whether the solver met its stopping rule.
    model_ : llsvm model
        LIBLINEAR's model.

    Examples
    --------
    >>> from llsvm.sklearn import LinearSVR
    >>> from sklearn.datasets import make_regression
    >>> X, y = make_regression(n_features=4, random_state=0)
    >>> LinearSVR(tol=1e-5).fit(X, y).coef_.shape
    (4,)
    """

    _solvers = (11, 12, 13)
    _parameter_constraints = constraints(_SkLinearSVR)
    _passed = _LiblinearParams._passed + ("epsilon",)

    def __init__(self, *, epsilon=0.0, tol=1e-4, C=1.0, loss="epsilon_insensitive", fit_intercept=True,
                 intercept_scaling=1.0, dual="auto", verbose=0, random_state=None, max_iter=1000, solver=None,
                 regularize_bias=True, n_jobs=None, warm_start=False, client=None):
        self.epsilon = epsilon
        self.tol = tol
        self.C = C
        self.loss = loss
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.dual = dual
        self.verbose = verbose
        self.random_state = random_state
        self.max_iter = max_iter
        self.solver = solver
        self.regularize_bias = regularize_bias
        self.n_jobs = n_jobs
        self.warm_start = warm_start
        self.client = client

    def _choosers(self):
        return {"loss": "epsilon_insensitive", "dual": "auto"}

    def _translate(self, X):
        number = None
        if self.solver in (None, "liblinear"):
            dual = resolve_dual(self.dual, self.loss, "l2", "ovr", shape_of(X))
            number = liblinear_type("ovr", "l2", self.loss, dual)
        spec = self._chosen(number)
        return spec, self._fields(spec)

    def _convergence_message(self):
        return "Liblinear failed to converge, increase the number of iterations."

    def _set_fitted(self, model, data):
        super()._set_fitted(model, data)
        self.coef_ = np.asarray(self.coef_).reshape(-1)
        self.intercept_ = np.asarray(self.intercept_, dtype=np.float64).reshape(-1)[:1] if self.fit_intercept \
            else 0.0


__all__ = ["LinearSVC", "LogisticRegression", "LinearSVR", "liblinear_type", "resolve_dual", "LIBLINEAR_TYPE"]
