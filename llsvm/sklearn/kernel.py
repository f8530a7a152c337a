"""SVC, NuSVC, SVR, NuSVR and OneClassSVM: scikit-learn's kernel SVMs of the same names, over llsvm's LIBSVM.

Their parameters are scikit-learn's with its defaults (gamma='scale', cache_size=200, shrinking=True, tol=1e-3,
max_iter=-1, decision_function_shape='ovr'), and their fitted attributes scikit-learn's (support_, support_vectors_,
dual_coef_, intercept_, n_support_, ...: llsvm/sklearn/svm_attributes.py). Where the defaults differ from
llsvm-train's (LIBSVM's svm-train: gamma 1/num_features, cache 100 MB), the estimator's are scikit-learn's;
`SVC(gamma="auto", cache_size=100)` is `llsvm-train -s smo` exactly. Beyond scikit-learn's: `n_jobs` (threads over
the one-vs-one pairs) and `client` (llsvm.dask).
"""
import os
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.svm import SVC as _SkSVC
from sklearn.svm import SVR as _SkSVR
from sklearn.svm import NuSVC as _SkNuSVC
from sklearn.svm import NuSVR as _SkNuSVR
from sklearn.svm import OneClassSVM as _SkOneClassSVM

from sklearn.utils import check_consistent_length, column_or_1d
from sklearn.utils.validation import _num_samples, check_is_fitted, validate_data

from ..dataset import kernel_rows, positive_rows
from ..errors import LLSVMError
from ..params import get
from .base import Classifier, Outlier, Regressor, constraints, is_source, kernel_number, llsvm_labels, value_error
from .svm_attributes import fitted_attributes, ovo_decision, ovr_decision


NO_LIMIT = 2 ** 31 - 1       # max_iter=-1: scikit-learn's LIBSVM runs to its stopping rule


def gamma_of(gamma, X):
    """scikit-learn's gamma: 'scale' 1 / (n_features X.var()) (1 when the variance is 0), 'auto' 1 / n_features,
    else the number. X: an array, a sparse matrix, or llsvm rows (n_rows, n_features, values)."""
    if not isinstance(gamma, str):
        return float(gamma)
    if hasattr(X, "n_rows"):
        n_rows, n_features = X.n_rows, X.n_features
        values = np.asarray(X.values, dtype=np.float64)
        size = float(n_rows) * float(n_features)
        var = (values @ values) / size - (values.sum() / size) ** 2 if size else 0.0
    else:
        n_features = X.shape[1]
        if sp.issparse(X):
            var = X.multiply(X).mean() - X.mean() ** 2
        else:
            var = np.asarray(X).var()
    if gamma == "auto":
        return 1.0 / n_features
    return 1.0 / (n_features * var) if var != 0 else 1.0


class _Kernel:
    """The parameters every LIBSVM-backed estimator shares, and its fitted attributes."""

    _not_exposed = {"libsvm_rand": "svm-train's glibc rand() folds are llsvm-svm-train's (llsvm-train --libsvm-rand); "
                                   "the estimators draw from random_state, as scikit-learn's",
                    "ws": "llsvm-train -s smo --ws N, the working-set solver, is an option being measured against "
                          "oneDAL (issue 49); the estimators keep LIBSVM's pair solver, svm-train's model"}
    _reads_rows = True

    _passed = ("C", "nu", "epsilon", "tol", "degree", "coef0", "cache_size", "n_jobs", "random_state")

    def _translate(self, X):
        spec = self._spec()
        fields = self.own_fields(spec, [n for n in self._passed if hasattr(self, n)])
        fields["kernel_type"] = kernel_number(self.kernel)
        fields["shrinking"] = int(bool(self.shrinking))
        # a precomputed or callable kernel has no gamma: scikit-learn's _gamma is 0 then
        fields["gamma"] = self._gamma = 0.0 if self._given_kernel() else gamma_of(self.gamma, X)
        if self.max_iter is not None:                 # -1: no limit, as scikit-learn's LIBSVM
            fields["max_iter"] = NO_LIMIT if self.max_iter == -1 else int(self.max_iter)
        if hasattr(self, "probability"):
            fields["probability"] = int(self.probability is True or self.probability == 1)
        return spec, fields

    # -- precomputed and callable kernels (scikit-learn's sklearn/svm/_base.py, its checks and words) ---------------
    # kernel="precomputed": X is the kernel matrix K (n x n at fit; n_test x n at prediction), row i of the training
    # K the sample of serial number i + 1 (LIBSVM's -t 4; llsvm.dataset.kernel_rows); a callable kernel: K =
    # kernel(X, X) at fit, kernel(X, X_fit) at prediction (scikit-learn's _compute_kernel), then as precomputed.
    def _given_kernel(self):
        """"precomputed", "callable" or None (one of LIBSVM's kernels over the rows)."""
        if callable(self.kernel):
            return "callable"
        return "precomputed" if isinstance(self.kernel, str) and self.kernel == "precomputed" else None

    def _kernel_of(self, X):
        """The callable kernel's matrix of X against the training X, dense float64 (scikit-learn's)."""
        K = self.kernel(X, self._Xfit)
        if sp.issparse(K):
            K = K.toarray()
        return np.asarray(K, dtype=np.float64, order="C")

    def _checked_input(self, X, y):
        kind = self._given_kernel()
        if kind is None:
            return super()._checked_input(X, y)
        self._sparse = False
        if kind == "callable":
            # scikit-learn checks only the lengths: the kernel takes X as it is (strings, lists, sparse matrices)
            if y is not None:
                check_consistent_length(X, y)
                y = column_or_1d(y, warn=True)
            n = _num_samples(X)
            self._shape_fit = X.shape if hasattr(X, "shape") else (n,)
            self._Xfit = X
            K = self._kernel_of(X)
            if K.ndim != 2 or K.shape[0] != K.shape[1]:
                raise ValueError("X.shape[0] should be equal to X.shape[1]")
            if K.shape[0] != n:
                raise ValueError(f"the kernel gives a {K.shape[0]}x{K.shape[1]} matrix for {n} samples: kernel(X, X) "
                                 "must be n_samples x n_samples")
            return K, y
        if sp.issparse(X):
            raise TypeError("Sparse precomputed kernels are not supported.")
        if self._outlier:
            X = validate_data(self, X, dtype=np.float64, order="C")
        else:
            X, y = validate_data(self, X, y, dtype=np.float64, order="C", y_numeric=not self._classifier,
                                 multi_output=False)
        if X.shape[0] != X.shape[1]:
            raise ValueError(f"Precomputed matrix must be a square matrix. Input is a {X.shape[0]}x{X.shape[1]} "
                             "matrix.")
        self._shape_fit = X.shape
        return X, y

    def _train_rows(self, X, y):
        if self._given_kernel() is None:
            return super()._train_rows(X, y)
        return kernel_rows(X, y, serials=True)

    def _training_data(self, X, y):
        self._kept = None               # the rows of positive weight of this fit's sample_weight (_weighted)
        return super()._training_data(X, y)

    # -- sample_weight (scikit-learn's sklearn/svm/_base.py fit and its weighted LIBSVM's svm_check_parameter) ------
    def _weighted(self, data, sample_weight):
        """(the rows with their weights, None): scikit-learn's sample_weight of its LIBSVM classes. Empty: no
        weights; else one per row ("sample_weight and X have incompatible shapes"); a weight <= 0 drops its row
        (remove_zero_weight: a negative weight is a zero one), and the fit is refused, in scikit-learn's words, when
        no row is left, when C-SVC's rows left are of one class, and when a class of nu-SVC's is left without
        weight (its nu is infeasible). support_ then names the rows of X (_kept). class_weight='balanced' counts
        rows, as scikit-learn's SVC and NuSVC count them (None is given back for the class weights)."""
        if self._from_source or self._spec().model_kind != "kernel":
            return super()._weighted(data, sample_weight)
        w = np.asarray(sample_weight, dtype=np.float64)
        if w.ndim == 1 and w.shape[0] == 0:
            return data, None
        if w.ndim != 1 or w.shape[0] != data.n_rows:
            raise ValueError(f"sample_weight and X have incompatible shapes: {w.shape!r} vs "
                             f"{(data.n_rows, data.n_features)!r}\nNote: Sparse matrices cannot be indexed w/boolean "
                             "masks (use `indices=True` in CV).")
        w = np.where(w > 0, w, 0.0)           # NaN stays NaN: refused by with_weights below
        if w.size and not (w > 0).any():
            raise ValueError("Invalid input - all samples have zero or negative weights.")
        kept = positive_rows(w)
        if self._classifier and kept is not None:
            left = np.unique(data.y[kept])
            if self._solvers == ("smo",) and left.size == 1:
                raise ValueError("Invalid input - all samples with positive weights belong to the same class.")
            if self._solvers == ("nu_svc",) and left.size < np.unique(data.y).size:
                raise ValueError("specified nu is infeasible: a class has no sample of positive weight")
        data, _ = super()._weighted(data, w)
        self._kept = kept
        return data, None

    def _kept_rows(self, out):
        """support_ as rows of X when rows of weight 0 were dropped (the solver numbered the rows it kept)."""
        kept = getattr(self, "_kept", None)
        if kept is not None and "support_" in out:
            out["support_"] = kept[out["support_"]].astype(out["support_"].dtype)
        return out

    def _read_source(self, data):
        kind = self._given_kernel()
        if kind == "callable":
            raise ValueError("a callable kernel is called on the rows of X: fit takes X as an array, not a path")
        if kind is None or not isinstance(data, (str, os.PathLike)):
            return super()._read_source(data)
        from ..io import read_dataset
        try:            # a precomputed kernel's file, LIBSVM's: 0:serial then the kernel values, read 0-based
            return read_dataset(data, zero_based=True, class_labels=self._classifier)
        except LLSVMError as exc:
            raise value_error(exc) from None

    def _rows(self, X):
        check_is_fitted(self, "model_")
        if not getattr(self.model_, "precomputed", False):
            return super()._rows(X)
        if is_source(X):        # LIBSVM's test file of a precomputed kernel: 0:? then the kernel values, read 0-based
            if isinstance(X, (str, os.PathLike)):
                from ..io import read_dataset
                try:
                    return read_dataset(X, zero_based=True)
                except LLSVMError as exc:
                    raise value_error(exc) from None
            return X
        if self._given_kernel() == "callable":
            K = self._kernel_of(X)
        else:
            if sp.issparse(X):
                raise ValueError(f"cannot use sparse input in {type(self).__name__!r} trained on dense data")
            K = validate_data(self, X, dtype=np.float64, order="C", reset=False) if \
                hasattr(self, "n_features_in_") else np.asarray(X, dtype=np.float64)
        if K.ndim != 2:
            raise ValueError(f"Expected 2D array, got {K.ndim}D array instead")
        # the kernel reads K(x, x_s) for the support vectors' serials s only: the columns up to the largest
        top = int(self.model_.SV.values.max(initial=0))
        if hasattr(self, "shape_fit_") and K.shape[1] != self.shape_fit_[0]:
            raise ValueError(f"X.shape[1] = {K.shape[1]} should be equal to {self.shape_fit_[0]}, the number of "
                             "samples at training time")
        if K.shape[1] < top:        # a model read from a file: its largest serial
            raise ValueError(f"X.shape[1] = {K.shape[1]}: the model's support vectors are columns up to {top}")
        return kernel_rows(K[:, :top])

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = self.kernel == "precomputed"       # cross-validation slices K both ways
        tags.input_tags.sparse = self.kernel != "precomputed"
        return tags

    def _check_sklearn_params(self):
        super()._check_sklearn_params()
        if getattr(self, "probability", "deprecated") != "deprecated":
            warnings.warn(f"The `probability` parameter was deprecated in 1.9 and will be removed in version 1.11. "
                          f"Use `CalibratedClassifierCV({type(self).__name__}(), ensemble=False)` instead of "
                          f"`{type(self).__name__}(probability=True)`", FutureWarning, stacklevel=4)

    def _nonfinite_message(self, exc):
        return (f"The dual coefficients or intercepts are not finite ({exc.what} = {exc.value!r}). The input data may "
                f"contain large values and need to be preprocessed.")

    def _convergence_message(self):
        return (f"Solver terminated early (max_iter={self.max_iter}).  Consider pre-processing your data with "
                f"StandardScaler or MinMaxScaler.")

    def _set_fitted(self, model, data):
        super()._set_fitted(model, data)
        classes = None
        if self._classifier:
                classes = llsvm_labels(self.classes_)
        n_features = getattr(self, "n_features_in_", None)
        attrs = fitted_attributes(model, classes, sparse=bool(getattr(self, "_sparse", False)), n_features=n_features)
        self.__dict__.update(self._kept_rows(attrs))
        if hasattr(self, "_shape_fit"):
            self.shape_fit_ = self._shape_fit
        if self._classifier:
            self.class_weight_ = self._class_weight_array()

    @property
    def coef_(self):
        """The weights of the linear kernel (read-only, as scikit-learn's)."""
        try:
            return self.__dict__["coef_"]
        except KeyError:
            raise AttributeError("coef_ is only available when using a linear kernel") from None

    def _class_weight_array(self):
        """scikit-learn's class_weight_: the weight of each class in classes_' order (1 where none is given)."""
        out = np.ones(len(self.classes_), dtype=np.float64)
        weights = dict(getattr(self, "_fit_params", None).weights) if getattr(self, "_fit_params", None) else {}
        for k, label in enumerate(llsvm_labels(self.classes_)):
            out[k] = weights.get(int(label), 1.0)
        return out


def _deprecated_prob(name):
    """scikit-learn 1.9's probA_ / probB_: deprecated with probability=True, a FutureWarning when read."""
    def get(self):
        warnings.warn(f"Attribute `{name}` was deprecated in version 1.9 and will be removed in 1.11 as the "
                      f"`probability=True` option for SVC and NuSVC was deprecated in 1.9.", FutureWarning,
                      stacklevel=2)
        try:
            return self.__dict__[name]
        except KeyError:
            raise AttributeError(name) from None
    return property(get, doc=f"Platt's {name[-2]} of each pair (deprecated by scikit-learn 1.9).")


class _KernelClassifier(_Kernel, Classifier):
    probA_ = _deprecated_prob("probA_")
    probB_ = _deprecated_prob("probB_")

    def decision_function(self, X):
        """scikit-learn's: two classes one value (> 0: classes_[1]); more, 'ovr' (n_rows, n_classes) or 'ovo'
        (n_rows, n_pairs) as decision_function_shape says."""
        dec = self._raw_decision(X)
        ovo = ovo_decision(self.model_, self._classes_as_labels(), dec)
        if len(self.classes_) == 2 or self.decision_function_shape == "ovo":
            return ovo
        return ovr_decision(ovo)

    def _classes_as_labels(self):
        return llsvm_labels(self.classes_)

    def predict(self, X):
        """LIBSVM's vote, or with break_ties the largest 'ovr' decision value (scikit-learn's break_ties)."""
        if self.break_ties and self.decision_function_shape == "ovo":
            raise ValueError("break_ties must be False when decision_function_shape is 'ovo'")
        if self.break_ties and self.decision_function_shape == "ovr" and len(self.classes_) > 2:
            return self.classes_[np.argmax(self.decision_function(X), axis=1)]
        return super().predict(X)


_DOC_KERNEL = """
    kernel : {{'linear', 'poly', 'rbf', 'sigmoid', 'precomputed'}} or callable, default='rbf'
        The kernel (-t): linear u'v, poly (gamma u'v + coef0)^degree, rbf exp(-gamma |u-v|^2), sigmoid
        tanh(gamma u'v + coef0); 'precomputed' (-t 4): X is the kernel matrix, n x n at fit, n_test x n at
        prediction; a callable: kernel(X, X) at fit, kernel(X_test, X) at prediction, then as 'precomputed'.
    degree : int, default=3
        The degree of the poly kernel (-d).
    gamma : {{'scale', 'auto'}} or float, default='scale'
        'scale': 1 / (n_features * X.var()), 'auto': 1 / n_features (LIBSVM's default), or the number (-g).
    coef0 : float, default=0.0
        The constant of the poly and sigmoid kernels (-r).
    shrinking : bool, default=True
        LIBSVM's shrinking heuristics (-h).
    tol : float, default=1e-3
        The stopping tolerance (-e); None: the solver's default (solver=21: LIBLINEAR's 0.01).
    cache_size : float, default=200
        The kernel cache in MB (-m; svm-train's default is 100).
    verbose : bool, default=False
        Print LIBSVM's output on stdout.
    max_iter : int, default=-1
        The iteration limit; -1: none (scikit-learn's); None: LIBSVM 3.37's own, max(10^7, 100 l), as svm-train.{extra}
    n_jobs : int, default=None
        Threads over the problems (--threads); None: llsvm's default.
    client : dask.distributed.Client or str, default=None
        Train on a Dask cluster from the path of an llsvm binary file."""

_DOC_CLASSIFIER = """
    class_weight : dict or 'balanced', default=None
        C of class i multiplied by ``class_weight[i]`` (-wi).
    probability : bool, default='deprecated'
        Platt's probabilities by internal 5-fold cross-validation (-b 1; deprecated by scikit-learn 1.9, with its
        FutureWarning).
    decision_function_shape : {{'ovo', 'ovr'}}, default='ovr'
        decision_function's shape for more than two classes: one value per pair, or per class.
    break_ties : bool, default=False
        predict by the largest 'ovr' decision value instead of LIBSVM's vote.
    random_state : int, RandomState instance or None, default=None
        The seed of probability's folds (--seed); None: llsvm's default seed 1."""

_DOC_ATTRIBUTES = """
    Attributes
    ----------
    support_ : ndarray of shape (n_SV,)
        The training rows of the support vectors (grouped by class in classes_' order).
    support_vectors_ : ndarray or CSR matrix of shape (n_SV, n_features)
        The support vectors.
    dual_coef_ : ndarray of shape ({rows}, n_SV)
        The support vectors' coefficients in the decision function (scikit-learn's layout and signs).
    intercept_ : ndarray of shape ({intercepts},)
        The constants of the decision functions (-rho).
    n_support_ : ndarray of shape ({n_support},)
        The number of support vectors{per_class}.
    coef_ : ndarray of shape ({coef_rows}, n_features)
        The weights, for the linear kernel only.
    fit_status_ : int
        0, or 1 when the solver stopped at its iteration limit.
    n_iter_ : {n_iter}
        The iterations of the solver.
    shape_fit_ : tuple
        The shape of the training X.
    n_features_in_ : int
        The number of features seen in fit.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        The feature names seen in fit, when X had string column names.{more}
    primal_, dual_, gap_, max_violation_ : float or ndarray
        llsvm's certificate of each problem.
    converged_ : bool
        Whether every problem met its stopping rule.
    model_ : llsvm model
        LIBSVM's model (``save`` writes svm-train's file)."""

_CLASSIFIER_MORE = """
    classes_ : ndarray of shape (n_classes,)
        The class labels, sorted.
    class_weight_ : ndarray of shape (n_classes,)
        The weight of each class.
    probA_, probB_ : ndarray of shape (n_classes * (n_classes - 1) / 2,)
        Platt's parameters with probability=True (else empty)."""

_CLASSIFIER_ATTRIBUTES = _DOC_ATTRIBUTES.format(
    rows="n_classes - 1", intercepts="n_classes * (n_classes - 1) / 2", n_support="n_classes",
    per_class=" of each class", coef_rows="n_classes * (n_classes - 1) / 2",
    n_iter="ndarray of shape (n_classes * (n_classes - 1) / 2,)", more=_CLASSIFIER_MORE)
_ONE_ATTRIBUTES = _DOC_ATTRIBUTES.format(rows="1", intercepts="1", n_support="1", per_class="", coef_rows="1",
                                         n_iter="int", more="")


class SVC(_KernelClassifier):
    __doc__ = f"""C-support vector classification over llsvm's LIBSVM (svm-train -s 0), scikit-learn's SVC.

    Parameters
    ----------
    C : float, default=1.0
        The cost of a training error (-c).{_DOC_KERNEL.format(extra="")}{_DOC_CLASSIFIER}
{_CLASSIFIER_ATTRIBUTES}

    Examples
    --------
    >>> from llsvm.sklearn import SVC
    >>> from sklearn.datasets import load_iris
    >>> X, y = load_iris(return_X_y=True)
    >>> SVC().fit(X, y).n_support_
    array([ 7, 29, 24], dtype=int32)
    """

    _solvers = ("smo",)
    _parameter_constraints = constraints(_SkSVC)

    def __init__(self, *, C=1.0, kernel="rbf", degree=3, gamma="scale", coef0=0.0, shrinking=True,
                 probability="deprecated", tol=1e-3, cache_size=200, class_weight=None, verbose=False, max_iter=-1,
                 decision_function_shape="ovr", break_ties=False, random_state=None, n_jobs=None, client=None):
        self.C = C
        self.kernel = kernel
        self.degree = degree
        self.gamma = gamma
        self.coef0 = coef0
        self.shrinking = shrinking
        self.probability = probability
        self.tol = tol
        self.cache_size = cache_size
        self.class_weight = class_weight
        self.verbose = verbose
        self.max_iter = max_iter
        self.decision_function_shape = decision_function_shape
        self.break_ties = break_ties
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.client = client


class NuSVC(_KernelClassifier):
    __doc__ = f"""nu-support vector classification over llsvm's LIBSVM (svm-train -s 1), scikit-learn's NuSVC.

    Parameters
    ----------
    nu : float, default=0.5
        An upper bound on the fraction of margin errors and a lower bound on the fraction of support vectors (-n).
    {_DOC_KERNEL.format(extra="")}{_DOC_CLASSIFIER}
{_CLASSIFIER_ATTRIBUTES}

    Examples
    --------
    >>> from llsvm.sklearn import NuSVC
    >>> from sklearn.datasets import load_iris
    >>> X, y = load_iris(return_X_y=True)
    >>> NuSVC(nu=0.1).fit(X, y).classes_
    array([0, 1, 2])
    """

    _solvers = ("nu_svc",)
    _not_exposed = {**_Kernel._not_exposed,
                    "C": "nu-SVC's problem has no C (LIBSVM ignores -c for it, scikit-learn's NuSVC has none)"}
    _parameter_constraints = constraints(_SkNuSVC)

    def __init__(self, *, nu=0.5, kernel="rbf", degree=3, gamma="scale", coef0=0.0, shrinking=True,
                 probability="deprecated", tol=1e-3, cache_size=200, class_weight=None, verbose=False, max_iter=-1,
                 decision_function_shape="ovr", break_ties=False, random_state=None, n_jobs=None, client=None):
        self.nu = nu
        self.kernel = kernel
        self.degree = degree
        self.gamma = gamma
        self.coef0 = coef0
        self.shrinking = shrinking
        self.probability = probability
        self.tol = tol
        self.cache_size = cache_size
        self.class_weight = class_weight
        self.verbose = verbose
        self.max_iter = max_iter
        self.decision_function_shape = decision_function_shape
        self.break_ties = break_ties
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.client = client


class SVR(_Kernel, Regressor):
    __doc__ = f"""epsilon-support vector regression over llsvm's LIBSVM (svm-train -s 3), scikit-learn's SVR.

    Parameters
    ----------
    C : float, default=1.0
        The cost of a training error (-c).
    epsilon : float, default=0.1
        The width of the insensitive zone (-p).{_DOC_KERNEL.format(extra="")}
{_ONE_ATTRIBUTES}

    Examples
    --------
    >>> from llsvm.sklearn import SVR
    >>> import numpy as np
    >>> X = np.arange(10.0).reshape(-1, 1)
    >>> SVR(kernel="linear").fit(X, X.ravel()).predict([[4.0]]).round(1)
    array([4.])
    """

    _solvers = ("epsilon_svr",)
    _not_exposed = {**_Kernel._not_exposed,
                    "probability": "scikit-learn's SVRs have no probabilities; LIBSVM's -b 1 noise model of an SVR is "
                                   "llsvm-train's (-b 1)",
                    "seed": "only -b 1's folds draw from it"}
    _parameter_constraints = constraints(_SkSVR)

    def __init__(self, *, kernel="rbf", degree=3, gamma="scale", coef0=0.0, tol=1e-3, C=1.0, epsilon=0.1,
                 shrinking=True, cache_size=200, verbose=False, max_iter=-1, n_jobs=None, client=None):
        self.kernel = kernel
        self.degree = degree
        self.gamma = gamma
        self.coef0 = coef0
        self.tol = tol
        self.C = C
        self.epsilon = epsilon
        self.shrinking = shrinking
        self.cache_size = cache_size
        self.verbose = verbose
        self.max_iter = max_iter
        self.n_jobs = n_jobs
        self.client = client


class NuSVR(_Kernel, Regressor):
    __doc__ = f"""nu-support vector regression over llsvm's LIBSVM (svm-train -s 4), scikit-learn's NuSVR.

    Parameters
    ----------
    nu : float, default=0.5
        An upper bound on the fraction of training errors and a lower bound on the fraction of support vectors
        (-n).
    C : float, default=1.0
        The cost of a training error (-c).{_DOC_KERNEL.format(extra="")}
{_ONE_ATTRIBUTES}

    Examples
    --------
    >>> from llsvm.sklearn import NuSVR
    >>> import numpy as np
    >>> X = np.arange(10.0).reshape(-1, 1)
    >>> NuSVR(kernel="linear", nu=0.9).fit(X, X.ravel()).predict([[4.0]]).round(1)
    array([4.])
    """

    _solvers = ("nu_svr",)
    _not_exposed = {**_Kernel._not_exposed,
                    "probability": "scikit-learn's SVRs have no probabilities; LIBSVM's -b 1 noise model of an SVR is "
                                   "llsvm-train's (-b 1)",
                    "seed": "only -b 1's folds draw from it"}
    _parameter_constraints = constraints(_SkNuSVR)

    def __init__(self, *, nu=0.5, C=1.0, kernel="rbf", degree=3, gamma="scale", coef0=0.0, shrinking=True,
                 tol=1e-3, cache_size=200, verbose=False, max_iter=-1, n_jobs=None, client=None):
        self.nu = nu
        self.C = C
        self.kernel = kernel
        self.degree = degree
        self.gamma = gamma
        self.coef0 = coef0
        self.shrinking = shrinking
        self.tol = tol
        self.cache_size = cache_size
        self.verbose = verbose
        self.max_iter = max_iter
        self.n_jobs = n_jobs
        self.client = client


class OneClassSVM(_Kernel, Outlier):
    __doc__ = f"""The one-class SVM, scikit-learn's OneClassSVM: LIBSVM's kernel one (svm-train -s 2, the default) or
    LIBLINEAR's linear one (solver=21, llsvm-train -s 21).

    Parameters
    ----------
    {_DOC_KERNEL.format(extra="")}
    nu : float, default=0.5
        An upper bound on the fraction of training errors and a lower bound on the fraction of support vectors
        (-n).
    solver : {{'one_class', 21}}, default=None
        None or 'one_class': LIBSVM's kernel one-class SVM; 21: LIBLINEAR's linear one (kernel must be 'linear'
        then, and gamma, degree, coef0, shrinking and cache_size keep their defaults).
    C : float, default=1.0
        LIBLINEAR's -s 21 only: its cost -c (the kernel one-class SVM has none; keep the default).
    random_state : int, RandomState instance or None, default=None
        LIBLINEAR's -s 21 only: its seed (--seed); the kernel one-class SVM draws nothing.
{_ONE_ATTRIBUTES}
    offset_ : float
        rho: score_samples(X) - decision_function(X).

    Examples
    --------
    >>> from llsvm.sklearn import OneClassSVM
    >>> X = [[0.0], [0.44], [0.45], [0.46], [1.0]]
    >>> OneClassSVM(gamma="auto").fit(X).predict(X)
    array([-1,  1,  1,  1, -1])
    """

    _solvers = ("one_class", 21)
    _not_exposed = {**_Kernel._not_exposed,
                    "probability": "scikit-learn's OneClassSVM has no probabilities; LIBSVM's -b 1 density marks of a "
                                  "one-class model are llsvm-train's (-b 1)"}
    _parameter_constraints = constraints(_SkOneClassSVM)

    def __init__(self, *, kernel="rbf", degree=3, gamma="scale", coef0=0.0, tol=1e-3, nu=0.5, shrinking=True,
                 cache_size=200, verbose=False, max_iter=-1, solver=None, C=1.0, random_state=None, n_jobs=None,
                 client=None):
        self.kernel = kernel
        self.degree = degree
        self.gamma = gamma
        self.coef0 = coef0
        self.tol = tol
        self.nu = nu
        self.shrinking = shrinking
        self.cache_size = cache_size
        self.verbose = verbose
        self.max_iter = max_iter
        self.solver = solver
        self.C = C
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.client = client

    def _translate(self, X):
        spec = self._spec()
        if spec.model_kind == "kernel":
            if self.C != 1.0:
                raise ValueError("C applies to solver=21 (LIBLINEAR's linear one-class SVM) only")
            return super()._translate(X)             # random_state: the kernel one-class SVM draws nothing
        # LIBLINEAR's -s 21: a linear model, no kernel parameters
        defaults = self._defaults()
        if self.kernel != "linear":
            raise ValueError(f"solver=21 is LIBLINEAR's linear one-class SVM: kernel={self.kernel!r} does not apply "
                             f"(give kernel='linear')")
        for name in ("degree", "gamma", "coef0", "shrinking", "cache_size"):
            if getattr(self, name) != defaults[name]:
                raise ValueError(f"{name}={getattr(self, name)!r} does not apply to solver=21")
        fields = self.own_fields(spec, ["C", "nu", "tol", "random_state", "n_jobs"])
        if self.max_iter is not None:                 # -1: no limit, as scikit-learn's LIBSVM
            fields["max_iter"] = NO_LIMIT if self.max_iter == -1 else int(self.max_iter)
        return spec, fields

    def _set_fitted(self, model, data):
        if get(self._fit_params.solver).model_kind == "kernel":
            super()._set_fitted(model, data)
        else:
            Outlier._set_fitted(self, model, data)
            m = model
            self.__dict__["coef_"] = m.W[:m.nr_feature].T.copy()      # coef_ is a read-only property
            self.intercept_ = np.array([-float(np.asarray(m.rho).reshape(-1)[0])])


__all__ = ["SVC", "NuSVC", "SVR", "NuSVR", "OneClassSVM", "gamma_of"]
