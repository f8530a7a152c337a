"""What every llsvm.sklearn estimator shares: Params from the parameters, fit (all or nothing), prediction in
scikit-learn's conventions, files, and the fitted certificates.

An estimator class says three things: its family of solvers (`_solvers`, the first the default), how its parameters
become llsvm's Params fields (`_translate(X)`: (solver, {field: value}); the generic rule is `own_fields`, an option
row's field under the parameter of the same name, or scikit-learn's name of it, SKLEARN_NAME), and which option rows
it leaves at their defaults on purpose (`_not_exposed`: {field: why}). tests/test_sklearn.py checks that every option
row of a family's solvers is one of the three and that every parameter is in the class's docstring.
"""
import numbers
import os
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin, OutlierMixin, RegressorMixin
from sklearn.exceptions import ConvergenceWarning as SklearnConvergenceWarning
from sklearn.utils._available_if import available_if
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from ..dataset import CSRDataset
from ..errors import ConvergenceWarning as LLSVMConvergenceWarning
from ..errors import LLSVMError
from ..models.linear import PROBABILITY, Model
from ..models.base import NonFiniteModelError
from ..models.loader import load_model
from ..models.svm import KERNEL_TYPES
from ..options import BY_DEST, OPTION
from ..params import Params, estimator_parameters, get
from ..report import Reporter
from ..solvers.trainer import train
from .svm_attributes import ovr_decision, pair_order

# scikit-learn's name of a Params / options field, where it has one
SKLEARN_NAME = {"eps": "tol", "seed": "random_state", "threads": "n_jobs", "kernel_type": "kernel",
                "svr_p": "epsilon", "weights": "class_weight"}
FIELD = {sk: dest for dest, sk in SKLEARN_NAME.items()}
# parameters that are not option rows: what fit does with them is the estimator's own
# the fitted state fit keeps beyond scikit-learn's attributes (which end in _)
FITTED_PRIVATE = ("_from_source", "_from_file", "_sparse", "_shape_fit", "_fit_params", "_results", "_labels", "_gamma",
                  "_Xfit")
NOT_ROWS = ("solver", "fit_intercept", "intercept_scaling", "class_weight", "warm_start", "client", "verbose")


class ConvergenceWarning(LLSVMConvergenceWarning, SklearnConvergenceWarning):
    """The iteration limit was hit: llsvm's warning, and scikit-learn's, which its users filter and catch."""


class Estimator(BaseEstimator):
    """The parameters to Params, fit, the fitted attributes."""

    _solvers = ()
    _classifier = _outlier = False
    _not_exposed = {}
    _reads_rows = False          # whether the parameters look at the rows (dual="auto", gamma="scale"): fit(path)
                                 # then reads the path itself

    # -- the parameters ------------------------------------------------------------------------------------------
    def _spec(self, solver=None):
        """The SolverSpec of `solver` (default: the `solver` parameter, else the family's first), in the family."""
        if solver is None:
            solver = getattr(self, "solver", None)
        solver = self._solvers[0] if solver is None else solver
        try:
            spec = get(solver)
        except LLSVMError as exc:
            raise value_error(exc) from None
        if spec.name not in {get(s).name for s in self._solvers}:
            raise ValueError(f"solver={solver!r}: {type(self).__name__} takes one of "
                             f"{', '.join(repr(s) for s in self._solvers)}")
        return spec

    def _translate(self, X):
        """(spec, {field: value}) of the current parameters for training rows X (the generic rule)."""
        spec = self._spec()
        return spec, self.own_fields(spec, [n for n in self.get_params(deep=False) if n not in NOT_ROWS])

    def own_fields(self, spec, names):
        """{field: value} of the parameters `names` under the generic rule; ValueError for a parameter set away from
        its default that the solver does not take (as the CLI refuses the option)."""
        own = estimator_parameters(spec)
        defaults = self._defaults()
        out = {}
        for name in names:
            value = getattr(self, name)
            dest = FIELD.get(name, name)
            if dest not in own:
                if not same(value, defaults[name]):
                    raise ValueError(f"{name}={value!r} does not apply to solver={spec.key!r}")
                continue
            if value is None and dest == "threads":
                value = spec.default_threads            # the CLI's default (llsvm/cli/declare.py)
            if dest == "kernel_type":
                value = kernel_number(value)
            if dest == "seed":
                value = seed_of(value)
            row = BY_DEST.get(dest)
            if row is not None and row.parse is not None and isinstance(value, str):
                value = row.parse(value)                # memory="64M", as the CLI reads --memory 64M
            out[dest] = value
        return out

    @classmethod
    def _defaults(cls):
        import inspect
        return {k: p.default for k, p in inspect.signature(cls.__init__).parameters.items() if k != "self"}

    def _params(self, X=None, y_codes=None, sample_weight=None):
        """The checked Params of the current parameters (ValueError naming a parameter the solver does not take)."""
        spec, fields = self._translate(X)
        own = estimator_parameters(spec)
        if hasattr(self, "fit_intercept"):
            if spec.free_bias or (self.fit_intercept and "bias" in own):
                fields["bias"] = float(self.intercept_scaling) if self.fit_intercept else -1.0
            elif self.fit_intercept:
                raise ValueError(f"fit_intercept=True does not apply to solver={spec.key!r}")
        opts = {d: fields.pop(d) for d in list(fields) if BY_DEST.get(d) is not None and BY_DEST[d].where == "options"}
        try:
            params = Params(solver=spec.key, weights=self._class_weights(y_codes, sample_weight),
                            options=spec.options(**opts) if spec.options else None, **fields)
            return params.check()
        except (LLSVMError, TypeError) as exc:
            raise value_error(exc) from None

    def _source_codes(self, rows):
        """(codes, labels) of the rows read from a path for class_weight (their labels are the classes), or None
        for a path a solver streams: then class_weight is by label, and 'balanced' needs the rows."""
        y = getattr(rows, "y", None)
        if y is None:
            if isinstance(self.class_weight, str):
                raise ValueError("class_weight='balanced' counts the classes: fit(path) of a streaming solver "
                                 "takes a dict {label: weight} (or fit the rows)")
            return None
        self.classes_, codes = np.unique(np.asarray(y).astype(np.int64), return_inverse=True)
        return codes, llsvm_labels(self.classes_)

    def _class_weights(self, y_codes, sample_weight=None):
        cw = getattr(self, "class_weight", None)
        if cw is None:
            return []
        if y_codes is None:                     # a streamed path: its labels are the classes
            return [(int(label), float(weight)) for label, weight in cw.items()] if self._from_source else []
        codes, labels = y_codes
        if isinstance(cw, str):
            if cw != "balanced":
                raise ValueError(f"class_weight={cw!r}: a dict {{class: weight}} or 'balanced'")
            # scikit-learn's compute_class_weight: the classes' sizes as sums of the rows' weights, if any
            counts = np.bincount(codes, weights=sample_weight, minlength=len(self.classes_))
            total = codes.size if sample_weight is None else float(np.sum(sample_weight))
            w = total / (len(self.classes_) * np.where(counts > 0, counts, 1))
            return [(int(labels[k]), float(w[k])) for k in range(len(self.classes_))]
        out = []
        for cls, weight in cw.items():
            where = np.flatnonzero(self.classes_ == cls)
            if where.size == 0:
                raise ValueError(f"class_weight names class {cls!r}, which is not in the training labels")
            out.append((int(labels[where[0]]), float(weight)))
        return out

    # -- fit ----------------------------------------------------------------------------------------------------
    def fit(self, X, y=None, sample_weight=None):
        """Train on X (array, sparse matrix, a LIBSVM text / llsvm binary path, or an llsvm dataset) and y;
        sample_weight: each row's weight (its C times it, docs/weights.md), for the solvers that take them.

        A fit replaces the whole fitted state, or, when it fails or is interrupted, leaves the previous one whole.
        """
        before = dict(self.__dict__)
        warm = before.get("model_") if getattr(self, "warm_start", False) else None
        for name in list(self.__dict__):
            if (name.endswith("_") and not name.startswith("_")) or name in FITTED_PRIVATE:
                del self.__dict__[name]                 # the fitted state of the last fit: made again below
        try:
            self._fit(X, y, sample_weight, warm)
        except BaseException:
            self.__dict__.clear()
            self.__dict__.update(before)
            raise
        return self

    def _fit(self, X, y, sample_weight, warm):
        self._check_sklearn_params()
        data, y_train, codes = self._training_data(X, y)
        if sample_weight is not None:
            data, sample_weight = self._weighted(data, sample_weight)
        rows = data
        if self._from_source and self._reads_rows:
            rows = self._read_source(data)              # dual="auto" and gamma="scale" look at the rows (a binary
            if self.client is None:                     # file is mapped, not read); a cluster's workers read the
                data = rows                             # path themselves
            self._sparse, self._shape_fit = True, (rows.n_rows, rows.n_features)
        if codes is None and self._from_source and self._classifier and self.class_weight is not None:
            codes = self._source_codes(rows)
        params = self._params(rows if not self._from_source or self._reads_rows else None, y_codes=codes,
                              sample_weight=sample_weight)
        self._fit_params = params
        if warm is not None and (not params.spec.find_C or getattr(self, "solver", None) == "liblinear"):
            warm = None         # scikit-learn's warm_start does nothing for liblinear: llsvm's solvers without one
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", LLSVMConvergenceWarning)     # said below, as scikit-learn's
            try:
                if self.client is not None:
                    model = self._fit_on_cluster(data, params, warm)
                else:
                    model = train(data, y_train, params=params, warm=warm, reporter=self._reporter())
            except LLSVMError as exc:
                raise value_error(exc) from None
        try:
            model.check_finite()
        except NonFiniteModelError as exc:
            raise ValueError(self._nonfinite_message(exc)) from None
        self._set_fitted(model, data)
        if not self.converged_ or self._at_limit():
            warnings.warn(self._convergence_message(), ConvergenceWarning, stacklevel=3)

    def _weighted(self, data, sample_weight):
        """(the training rows with their weights, the weights): sample_weight is each row's weight, its C times it
        (docs/weights.md), as scikit-learn's LIBLINEAR and LIBSVM take it; rows of weight 0 have no effect."""
        if self._from_source:
            raise ValueError("sample_weight: fit(path) reads the rows from the file; fit the rows (X, y) to weight them")
        from ..dataset import check_weights
        try:
            data = data.with_weights(check_weights(sample_weight, data.n_rows))
        except LLSVMError as exc:
            raise value_error(exc) from None
        return data, data.weights

    def _read_source(self, data):
        """The rows of a path (or an llsvm dataset), loaded once for the solver (a random-access one) and for the
        parameters that look at them."""
        if not isinstance(data, (str, os.PathLike)):
            return data
        from ..io import read_dataset
        try:
            return read_dataset(data, class_labels=self._classifier)
        except LLSVMError as exc:
            raise value_error(exc) from None

    def _check_sklearn_params(self):
        """scikit-learn's own check of the parameters it shares (its exact errors), where the class has them."""
        if getattr(self, "_parameter_constraints", None):
            self._validate_params()

    def _nonfinite_message(self, exc):
        return (f"the fit gives {exc.what} = {exc.value!r}, not a finite number: lower C, scale the features or "
                f"lower intercept_scaling")

    def _at_limit(self):
        """Whether a problem used up max_iter (scikit-learn's LIBLINEAR rule: a ConvergenceWarning then even when
        the stopping rule held at the last iteration)."""
        return False

    def _convergence_message(self):
        return "llsvm: the solver reached its iteration limit (max_iter) before its stopping rule held"

    def _reporter(self):
        """LIBLINEAR's / LIBSVM's output on stdout when verbose (as scikit-learn's), else nothing."""
        if getattr(self, "verbose", 0):
            return Reporter(progress=False, out=lambda text: print(text, end="", flush=True),
                            err=lambda text: print(text, end="", flush=True))
        return Reporter(progress=False, out=lambda text: None, err=lambda text: None)

    def _fit_on_cluster(self, data, params, warm):
        """fit with client=: llsvm.dask.train on the cluster (a Client, or an address: 'local' or tcp://...), from
        a path to an llsvm binary file that every worker reads (the rows never pass through this process)."""
        if not isinstance(data, (str, os.PathLike)):
            raise ValueError("client=: fit takes the path of an llsvm binary file every worker can read (the data "
                             "stay where they are); fit an array without client=")
        if warm is not None:
            raise ValueError("client=: no warm start on a cluster")
        from .. import dask as lldask
        where = {"address": self.client} if isinstance(self.client, str) else {"client": self.client}
        return lldask.train(data, params=params, **where)

    def __sklearn_clone__(self):
        """scikit-learn's clone, the client passed on as it is (a Client cannot be deep-copied; it is shared)."""
        from sklearn.base import _clone_parametrized
        client, self.client = self.client, None
        try:
            new = _clone_parametrized(self)
        finally:
            self.client = client
        new.client = client
        return new

    def __getstate__(self):
        state = super().__getstate__()
        if not isinstance(state.get("client"), (str, type(None))):
            state = dict(state, client=None)     # a Client is a live connection: a pickle holds none
        return state

    def _training_data(self, X, y):
        """(data, labels for llsvm, (codes, labels) for class weights) and the input attributes."""
        if is_source(X):
            self._from_source = True
            return X, None, None
        self._from_source = False
        X, y = self._checked_input(X, y)
        if self._outlier:
            return self._train_rows(X, np.ones(X.shape[0])), None, None
        if self._classifier:
            check_classification_targets(y)
            self.classes_, codes = np.unique(y, return_inverse=True)
            self._check_classes()
            labels = llsvm_labels(self.classes_)
            y_train = labels[codes].astype(np.float64)
            return self._train_rows(X, y_train), y_train, (codes, labels)
        y = np.asarray(y, dtype=np.float64)
        return self._train_rows(X, y), None, None

    def _checked_input(self, X, y):
        """(X, y) of fit checked as scikit-learn checks them (y None for an outlier detector), and the input's
        attributes (_sparse, _shape_fit)."""
        if self._outlier:
            X = validate_data(self, X, accept_sparse=("csr", "csc"), dtype=(np.float64, np.float32))
        else:
            X, y = validate_data(self, X, y, accept_sparse=("csr", "csc"), dtype=(np.float64, np.float32),
                                 y_numeric=not self._classifier, multi_output=False)
        self._sparse, self._shape_fit = sp.issparse(X), X.shape
        return X, y

    def _train_rows(self, X, y):
        """llsvm's training rows of the checked X and labels y."""
        return dataset(X, y)

    def _check_classes(self):
        """A classifier needs two classes (scikit-learn's words)."""
        if len(self.classes_) < 2:
            raise ValueError(f"The number of classes has to be greater than one; got {len(self.classes_)} class")

    def _set_fitted(self, model, data):
        self.model_ = model
        results = (getattr(model, "meta", None) or {}).get("results", [])      # none for a model read from a file
        self._results = results
        self.n_iter_ = max((int(r.n_iter) for r in results), default=0)
        self.primal_ = collect(results, "primal")
        self.dual_ = collect(results, "dual")
        self.gap_ = collect(results, "gap")
        self.max_violation_ = collect(results, "max_violation")
        self.converged_ = all(bool(r.converged) for r in results)
        if self._from_source:
            if n_features_of(model) is not None:
                self.n_features_in_ = n_features_of(model)
            if self._classifier:
                self.classes_ = np.sort(np.asarray(model.label))
        self._labels = None if model.label is None else np.asarray(model.label)

    # -- prediction ---------------------------------------------------------------------------------------------
    def _rows(self, X):
        """The rows to predict: an array or sparse matrix checked as scikit-learn checks it, or a path's rows."""
        check_is_fitted(self, "model_")
        if is_source(X):
            return self._read_rows(X)
        return validate_data(self, X, accept_sparse=("csr", "csc"), dtype=(np.float64, np.float32), reset=False)

    def _read_rows(self, X):
        """The rows of a LIBSVM text / llsvm binary path (or an llsvm dataset) as a CSR matrix of the model's width."""
        from ..solvers.trainer import as_dataset
        try:
            ds = as_dataset(X)
        except LLSVMError as exc:
            raise value_error(exc) from None
        width = getattr(self, "n_features_in_", None) or ds.n_features
        rows = sp.csr_matrix((np.asarray(ds.values, np.float64), ds.indices, ds.indptr),
                             shape=(ds.n_rows, max(width, ds.n_features)))
        return rows[:, :width] if rows.shape[1] > width else rows     # features the model never saw weigh nothing

    def _raw_decision(self, X):
        rows = self._rows(X)
        try:
            return self.model_.decision_function(rows)
        except LLSVMError as exc:
            raise value_error(exc) from None

    def predict(self, X):
        """Labels of the rows of X (an array, a sparse matrix or a path), by the model's own rule."""
        dec = self._raw_decision(X)
        labels = self.model_.labels_from_decisions(dec)
        if self._classifier:
            return self.classes_[np.searchsorted(llsvm_labels(self.classes_), labels.astype(np.int64))]
        return labels

    def _scored(self, X, y):
        """X and y to score: a path's rows and labels when y is None."""
        if is_source(X) and y is None:
            from ..solvers.trainer import as_dataset
            try:
                y = as_dataset(X).y
            except LLSVMError as exc:
                raise value_error(exc) from None
        return X, y

    # -- files --------------------------------------------------------------------------------------------------
    def save(self, path):
        """Write LIBLINEAR's / LIBSVM's / llsvm's model file (atomic), as llsvm-train writes it."""
        check_is_fitted(self, "model_")
        self.model_.save(path)
        return self

    @classmethod
    def from_file(cls, path, **params):
        """A fitted estimator of a model file (classes_ are the file's labels)."""
        est = cls(**params)
        est._from_source = est._from_file = True
        est._sparse = True
        try:
            model = load_model(path)
        except LLSVMError as exc:
            raise value_error(exc) from None
        est._set_fitted(model, None)
        return est

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags


class Classifier(ClassifierMixin, Estimator):
    _classifier, _outlier = True, False
    _always_proba = False        # every solver of the family gives probabilities (logistic regression)

    def score(self, X, y=None, sample_weight=None):
        """The mean accuracy on X and y (X also a path, whose labels are y when y is None)."""
        return ClassifierMixin.score(self, *self._scored(X, y), sample_weight=sample_weight)

    def decision_function(self, X):
        """scikit-learn's convention: two classes, one value (> 0: classes_[1]); more, a column per class."""
        dec = self._raw_decision(X)
        labels = llsvm_labels(self.classes_)
        first = np.searchsorted(labels, self._labels)       # each model label's index in classes_
        if len(self.classes_) == 2 and dec.size == dec.shape[0]:
            dec = dec.reshape(-1)
            return dec if first[0] == 1 else -dec
        k = len(self.classes_)
        if dec.shape[1] == k and not is_ovo(self.model_):
            out = np.empty_like(dec)
            out[:, first] = dec
            return out[:, 1] - out[:, 0] if k == 2 else out      # Crammer-Singer's two columns: one, as coef_
        col, signs = pair_order(self._labels, labels)       # one value per pair of the model's labels
        return ovr_decision(dec[:, col] * signs)

    def _has_proba(self):
        """Whether predict_proba exists: as scikit-learn's, the parameters say (logistic regression, or
        probability=True); a model read from a file, whether it has probabilities."""
        if getattr(self, "_from_file", False):
            return bool(self.model_.supports_probability)
        if self._always_proba:
            return True
        probability = getattr(self, "probability", False)
        return self._spec().solver_type in PROBABILITY or probability is True or probability == 1

    @available_if(_has_proba)
    def predict_proba(self, X):
        """Probabilities in classes_' order (logistic regression; kernel models trained with probability=True)."""
        rows = self._rows(X)
        if not self.model_.supports_probability:
            from sklearn.exceptions import NotFittedError
            raise NotFittedError("predict_proba is not available when fitted with probability=False")
        try:
            _, p = self.model_.predict_probability(rows)
        except LLSVMError as exc:
            raise value_error(exc) from None
        first = np.searchsorted(llsvm_labels(self.classes_), self._labels)
        out = np.empty_like(p)
        out[:, first] = p
        return out

    @available_if(_has_proba)
    def predict_log_proba(self, X):
        return np.log(self.predict_proba(X))


class Regressor(RegressorMixin, Estimator):
    _classifier, _outlier = False, False

    def score(self, X, y=None, sample_weight=None):
        """R^2 on X and y (X also a path, whose targets are y when y is None)."""
        return RegressorMixin.score(self, *self._scored(X, y), sample_weight=sample_weight)


class Outlier(OutlierMixin, Estimator):
    _classifier, _outlier = False, True

    def fit(self, X, y=None, sample_weight=None):
        return super().fit(X, None, sample_weight)

    def decision_function(self, X):
        return np.asarray(self._raw_decision(X), dtype=np.float64).reshape(-1)

    def predict(self, X):
        return np.where(self.decision_function(X) > 0, 1, -1)

    def score_samples(self, X):
        return self.decision_function(X) + self.offset_

    def _set_fitted(self, model, data):
        super()._set_fitted(model, data)
        self.offset_ = float(np.asarray(model.rho).reshape(-1)[0]) if model.rho is not None else 0.0


class Linear:
    """coef_ and intercept_ of a linear model, in scikit-learn's convention."""

    def _set_fitted(self, model, data):
        super()._set_fitted(model, data)
        self.coef_, self.intercept_ = self._weights()

    def _weights(self):
        m = self.model_
        W = m.W[:m.nr_feature].T
        b = m.W[m.nr_feature] * m.bias if m.bias >= 0 else np.zeros(m.nr_w)
        if m.rho is not None:
            b = b - m.rho
        if self._classifier:
            labels = llsvm_labels(self.classes_)
            first = np.searchsorted(labels, self._labels)
            if m.nr_w == 1:
                return (W, b) if first[0] == 1 else (-W, -b)
            out_W, out_b = np.empty_like(W), np.empty_like(b)
            out_W[first], out_b[first] = W, b
            return out_W, out_b
        return W, b


def constraints(theirs, **more):
    """scikit-learn's parameter constraints of its class `theirs` (its exact checks and errors), tol and max_iter
    also None (llsvm: the solver's own default, as llsvm-train's), and `more`."""
    out = dict(theirs._parameter_constraints)
    for name in ("tol", "max_iter"):
        if name in out:
            out[name] = [*out[name], None]
    out.update(more)
    return out


def value_error(exc):
    """The ValueError of an llsvm error: itself when it is one (bad parameters, files, data), else one with its
    message (scikit-learn's callers catch ValueError)."""
    return exc if isinstance(exc, ValueError) else ValueError(str(exc))


def collect(results, name):
    values = [np.nan if getattr(r, name) is None else float(getattr(r, name)) for r in results]
    return values[0] if len(values) == 1 else np.array(values)


def same(a, b):
    if isinstance(a, float) and isinstance(b, float) and np.isnan(a) and np.isnan(b):
        return True
    try:
        return bool(a == b)
    except (TypeError, ValueError):
        return a is b


def kernel_number(value):
    """LIBSVM's kernel_type of scikit-learn's kernel name (or LIBSVM's number); a callable kernel is LIBSVM's
    precomputed one (4), of the matrix the estimator computes with it (scikit-learn's way)."""
    if isinstance(value, str):
        names = {n: i for i, n in enumerate(KERNEL_TYPES)}
        names["poly"] = names["polynomial"]
        if value not in names:
            raise ValueError(f"kernel={value!r}: one of linear, poly, rbf, sigmoid, precomputed or a callable")
        return names[value]
    if callable(value):
        return KERNEL_TYPES.index("precomputed")
    return value


def seed_of(value):
    if value is None:
        return OPTION["--seed"].default
    if isinstance(value, np.random.RandomState):
        return int(value.randint(0, 2 ** 31 - 1))
    if isinstance(value, numbers.Integral):
        return int(value)
    raise ValueError(f"random_state={value!r}: an int, a numpy RandomState or None")


def is_source(X):
    return isinstance(X, (str, os.PathLike)) or hasattr(X, "iter_blocks") or hasattr(X, "as_view")


def dataset(X, y):
    """llsvm's rows over X without a copy where X is CSR already (CSC and dense are converted once)."""
    if not sp.issparse(X):
        X = sp.csr_matrix(X)
    return CSRDataset.from_csr(X, y)


def llsvm_labels(classes):
    """The integer labels llsvm trains on for sorted classes_: the classes themselves when they are integers of
    magnitude at most 2^53 (so the model equals the CLI's on the same file), else their indices."""
    c = np.asarray(classes)
    if c.dtype.kind in "iuf" and c.size and np.all(np.abs(c.astype(np.float64)) <= 2 ** 53):
        if c.dtype.kind != "f" or np.all(np.mod(c, 1) == 0):
            return c.astype(np.int64)          # exactly: llsvm trains on labels as doubles, exact up to 2^53
    return np.arange(c.size, dtype=np.int64)


def is_ovo(model):
    return not isinstance(model, Model)


def n_features_of(model):
    """The feature count a model file states (LIBLINEAR's and the tree's nr_feature); None for LIBSVM's, whose
    file does not say it (predict then takes any number of columns, as svm-predict does)."""
    n = getattr(model, "nr_feature", None)
    return None if n is None else int(n)


__all__ = ["Estimator", "Classifier", "Regressor", "Outlier", "Linear", "ConvergenceWarning", "SKLEARN_NAME",
           "FIELD", "NOT_ROWS", "FITTED_PRIVATE", "constraints"]
