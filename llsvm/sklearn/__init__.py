"""scikit-learn estimators over llsvm's solvers (`pip install llsvm[sklearn]`; `import llsvm` never imports this).

    from llsvm.sklearn import LinearSVC
    clf = LinearSVC(solver=3, C=1.0, fit_intercept=True).fit(X, y)   # X: dense, CSR/CSC, float64 or float32
    clf.predict(X); clf.decision_function(X); clf.gap_; clf.save("train.model")
    OutOfCoreSVC(memory="1G").fit("big.bin")                          # a path: streamed, never loaded whole

Each estimator is a parameter bag over a family of solvers (`solver=`: a registered name or LIBLINEAR's number) and
`fit` calls llsvm.train, the same call the CLI makes. Its parameters are not listed here: they are the option rows
of llsvm/options.py that apply to the family's solvers (params.estimator_parameters), under scikit-learn's name where
it has one (SKLEARN_NAME) and the row's own name otherwise, with the row's default. So an option added to a solver
appears in its estimators, with its check, with nothing else to change. A parameter that the chosen solver does not
take must keep its default (else ValueError, as the CLI refuses the option).

Where the CLI's defaults and scikit-learn's differ, the CLI's hold (the same call gives the same model):
fit_intercept=False (-B -1), random_state=1 (--seed 1), gamma=None (LIBSVM's 1/num_features), tol=None (the solver's
-e default). random_state=None is the default seed too (no global state); a RandomState draws the seed from it.

Conventions kept: classes_ sorted; for two classes decision_function > 0 means classes_[1] and coef_ has one row
for it (LIBLINEAR's w points to the model's first label: coef_ is w or -w, exactly); several classes: coef_ and the
decision columns in classes_' order (one-vs-one models: scikit-learn's one-vs-rest transform of the pair values,
its _ovr_decision_function); intercept_ = B w_(n+1); predict is the model's own rule (LIBLINEAR's / LIBSVM's),
so it equals llsvm-predict's.
"""
import inspect
import numbers
import os

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin, OutlierMixin, RegressorMixin
from sklearn.utils._available_if import available_if
from sklearn.utils.multiclass import _ovr_decision_function, check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from ..dataset import CSRDataset
from ..errors import LLSVMError
from ..models.linear import PROBABILITY, Model
from ..models.loader import load_model
from ..models.svm import KERNEL_TYPES
from ..options import BY_DEST, OPTION
from ..params import Params, estimator_parameters, get
from ..solvers.trainer import train

# scikit-learn's name of a Params / options field, where it has one
SKLEARN_NAME = {"eps": "tol", "seed": "random_state", "threads": "n_jobs", "kernel_type": "kernel",
                "svr_p": "epsilon", "weights": "class_weight"}
_FIELD = {sk: dest for dest, sk in SKLEARN_NAME.items()}


def _parameters(solvers):
    """{name: default} of a family's estimator: the union of its solvers' parameters, in the rows' order."""
    out = {"solver": None}
    bias = False
    for s in solvers:
        for dest, default in estimator_parameters(s).items():
            if dest == "bias":
                bias = bias or get(s).model_kind == "linear" and get(s).task != "oneclass"
                continue
            if dest == "kernel_type":
                default = KERNEL_TYPES[default]
            out.setdefault(SKLEARN_NAME.get(dest, dest), default)
        if get(s).class_weights:
            out.setdefault("class_weight", None)
    if any(get(s).find_C for s in solvers):
        out["warm_start"] = False         # the solvers LIBLINEAR's find_parameter_C warm-starts (llsvm.train(warm=))
    if bias:
        out["fit_intercept"] = True         # scikit-learn's default (LIBLINEAR's CLI: -B -1, no bias)
        out["intercept_scaling"] = 1.0
    out["client"] = None                    # llsvm-train --dask: a dask.distributed Client or a scheduler address
    return out


def _field_of(name):
    """The Params / options field an estimator parameter sets."""
    return _FIELD.get(name, name)


class _Estimator(BaseEstimator):
    """What every estimator shares: the parameters to Params, fit, the fitted attributes."""

    _solvers = ()

    def _params(self, n_rows=None, y_codes=None):
        """The checked Params of the current parameters (ValueError naming a parameter the solver does not take)."""
        solver = self._solvers[0] if self.solver is None else self.solver
        try:
            spec = get(solver)
        except LLSVMError as exc:
            raise ValueError(str(exc)) from None
        if spec.name not in {get(s).name for s in self._solvers}:
            raise ValueError(f"solver={solver!r}: {type(self).__name__} takes one of "
                             f"{', '.join(str(s) for s in self._solvers)}")
        own = estimator_parameters(spec)
        defaults = type(self)._defaults
        fields, opts = {}, {}
        for name, value in self.get_params(deep=False).items():
            if name in ("solver", "fit_intercept", "intercept_scaling", "class_weight", "warm_start", "client"):
                continue
            dest = _field_of(name)
            if dest not in own:
                if not _same(value, defaults[name]):
                    raise ValueError(f"{name}={value!r} does not apply to solver={spec.key!r}")
                continue
            if value is None and dest == "threads":
                value = spec.default_threads            # the CLI's default (llsvm/cli/declare.py)
            if dest == "kernel_type":
                value = _kernel_number(value)
            if dest == "seed":
                value = _seed(value)
            row = BY_DEST.get(dest)
            if row is not None and row.parse is not None and isinstance(value, str):
                value = row.parse(value)                # memory="64M", as the CLI reads --memory 64M
            (opts if row is not None and row.where == "options" else fields)[dest] = value
        if "fit_intercept" in self._defaults:
            if spec.free_bias or (self.fit_intercept and "bias" in own):
                fields["bias"] = float(self.intercept_scaling) if self.fit_intercept else -1.0
            elif self.fit_intercept:
                raise ValueError(f"fit_intercept=True does not apply to solver={spec.key!r}")
        weights = self._class_weights(y_codes)
        try:
            params = Params(solver=spec.key, weights=weights, options=spec.options(**opts) if spec.options else None,
                            **fields)
            return params.check()
        except (LLSVMError, TypeError) as exc:
            raise ValueError(str(exc)) from None

    def _class_weights(self, y_codes):
        cw = getattr(self, "class_weight", None)
        if cw is None or y_codes is None:
            return []
        codes, labels = y_codes
        if isinstance(cw, str):
            if cw != "balanced":
                raise ValueError(f"class_weight={cw!r}: a dict {{class: weight}} or 'balanced'")
            counts = np.bincount(codes, minlength=len(self.classes_))
            w = codes.size / (len(self.classes_) * np.maximum(counts, 1))
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
        """Train on X (array, sparse matrix, a LIBSVM text / llsvm binary path, or an llsvm dataset) and y."""
        if sample_weight is not None:
            raise ValueError(f"sample_weight: {type(self).__name__}'s solvers take no per-row C (use class_weight)")
        data, y_train, codes = self._training_data(X, y)
        params = self._params(y_codes=codes)
        self._fit_params = params
        warm = self.model_ if getattr(self, "warm_start", False) and hasattr(self, "model_") else None
        try:
            if self.client is not None:
                model = self._fit_on_cluster(data, params, warm)
            else:
                model = train(data, y_train, params=params, warm=warm)
        except LLSVMError as exc:
            raise ValueError(str(exc)) from None
        self._set_fitted(model, data)
        return self

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
        if _is_source(X):
            self._from_source = True
            return X, None, None
        self._from_source = False
        if self._outlier:
            X = validate_data(self, X, accept_sparse=("csr", "csc"), dtype=(np.float64, np.float32))
            return _dataset(X, np.ones(X.shape[0])), None, None
        X, y = validate_data(self, X, y, accept_sparse=("csr", "csc"), dtype=(np.float64, np.float32),
                             y_numeric=not self._classifier, multi_output=False)
        if self._classifier:
            check_classification_targets(y)
            self.classes_, codes = np.unique(y, return_inverse=True)
            labels = _llsvm_labels(self.classes_)
            y_train = labels[codes].astype(np.float64)
            return _dataset(X, y_train), y_train, (codes, labels)
        y = np.asarray(y, dtype=np.float64)
        return _dataset(X, y), None, None

    def _set_fitted(self, model, data):
        self.model_ = model
        results = (getattr(model, "meta", None) or {}).get("results", [])      # none for a model read from a file
        self.n_iter_ = max((int(r.n_iter) for r in results), default=0)
        self.primal_ = _collect(results, "primal")
        self.dual_ = _collect(results, "dual")
        self.gap_ = _collect(results, "gap")
        self.max_violation_ = _collect(results, "max_violation")
        self.converged_ = all(bool(r.converged) for r in results)
        if self._from_source:
            if _n_features(model) is not None:
                self.n_features_in_ = _n_features(model)
            if self._classifier:
                self.classes_ = np.sort(np.asarray(model.label))
        self._labels = None if model.label is None else np.asarray(model.label)

    # -- prediction ---------------------------------------------------------------------------------------------
    def _rows(self, X):
        check_is_fitted(self, "model_")
        X = validate_data(self, X, accept_sparse=("csr", "csc"), dtype=(np.float64, np.float32), reset=False)
        return X

    def _raw_decision(self, X):
        rows = self._rows(X)
        try:
            return self.model_.decision_function(rows)
        except LLSVMError as exc:
            raise ValueError(str(exc)) from None

    def predict(self, X):
        dec = self._raw_decision(X)
        labels = self.model_.labels_from_decisions(dec)
        if self._classifier:
            return self.classes_[np.searchsorted(_llsvm_labels(self.classes_), labels.astype(np.int64))]
        return labels

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
        est._from_source = True
        model = load_model(path)
        est._set_fitted(model, None)
        return est

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags


class _Classifier(ClassifierMixin, _Estimator):
    _classifier, _outlier = True, False

    def decision_function(self, X):
        """scikit-learn's convention: two classes, one value (> 0: classes_[1]); more, a column per class."""
        dec = self._raw_decision(X)
        labels = _llsvm_labels(self.classes_)
        first = np.searchsorted(labels, self._labels)       # each model label's index in classes_
        if len(self.classes_) == 2 and dec.size == dec.shape[0]:
            dec = dec.reshape(-1)
            return dec if first[0] == 1 else -dec
        k = len(self.classes_)
        if dec.shape[1] == k and not _ovo(self.model_):
            out = np.empty_like(dec)
            out[:, first] = dec
            return out
        # one value per pair (a, b) of the model's labels, > 0 for label a: the pairs as scikit-learn lists them
        # (i < j in classes_' order, > 0 for class i), then its transform to one column per class
        order = sorted((min(first[a], first[b]), max(first[a], first[b]), p, 1.0 if first[a] < first[b] else -1.0)
                       for p, (a, b) in enumerate((a, b) for a in range(k) for b in range(a + 1, k)))
        conf = np.column_stack([sign * dec[:, p] for _, _, p, sign in order])
        return _ovr_decision_function(conf < 0, -conf, k)

    def _has_proba(self):
        """Whether predict_proba exists: a fitted model with probabilities, or parameters that give one."""
        if hasattr(self, "model_"):
            return bool(self.model_.supports_probability)
        solver = get(self._solvers[0] if self.solver is None else self.solver)
        return solver.solver_type in PROBABILITY or bool(getattr(self, "probability", 0))

    @available_if(_has_proba)
    def predict_proba(self, X):
        """Probabilities in classes_' order (logistic regression; kernel models trained with probability=1)."""
        rows = self._rows(X)
        try:
            _, p = self.model_.predict_probability(rows)
        except LLSVMError as exc:
            raise ValueError(str(exc)) from None
        first = np.searchsorted(_llsvm_labels(self.classes_), self._labels)
        out = np.empty_like(p)
        out[:, first] = p
        return out

    @available_if(_has_proba)
    def predict_log_proba(self, X):
        return np.log(self.predict_proba(X))


class _Linear:
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
            labels = _llsvm_labels(self.classes_)
            first = np.searchsorted(labels, self._labels)
            if m.nr_w == 1:
                return (W, b) if first[0] == 1 else (-W, -b)
            out_W, out_b = np.empty_like(W), np.empty_like(b)
            out_W[first], out_b[first] = W, b
            return out_W, out_b
        return W, b


def _collect(results, name):
    values = [np.nan if getattr(r, name) is None else float(getattr(r, name)) for r in results]
    return values[0] if len(values) == 1 else np.array(values)


def _same(a, b):
    if isinstance(a, float) and isinstance(b, float) and np.isnan(a) and np.isnan(b):
        return True
    try:
        return bool(a == b)
    except (TypeError, ValueError):
        return a is b


def _kernel_number(value):
    if isinstance(value, str):
        names = {n: i for i, n in enumerate(KERNEL_TYPES)}
        names["poly"] = names["polynomial"]
        if value not in names:
            raise ValueError(f"kernel={value!r}: one of linear, poly, rbf, sigmoid")
        return names[value]
    return value


def _seed(value):
    if value is None:
        return OPTION["--seed"].default
    if isinstance(value, np.random.RandomState):
        return int(value.randint(0, 2 ** 31 - 1))
    if isinstance(value, numbers.Integral):
        return int(value)
    raise ValueError(f"random_state={value!r}: an int, a numpy RandomState or None")


def _is_source(X):
    return isinstance(X, (str, os.PathLike)) or hasattr(X, "iter_blocks") or hasattr(X, "as_view")


def _dataset(X, y):
    """llsvm's rows over X without a copy where X is CSR already (CSC and dense are converted once)."""
    if not sp.issparse(X):
        X = sp.csr_matrix(X)
    return CSRDataset.from_csr(X, y)


def _llsvm_labels(classes):
    """The integer labels llsvm trains on for sorted classes_: the classes themselves when they are integers (so
    the model equals the CLI's on the same file), else their indices."""
    c = np.asarray(classes)
    if c.dtype.kind in "iu" or (c.dtype.kind == "f" and np.all(np.mod(c, 1) == 0) and np.all(np.abs(c) < 2 ** 31)):
        return c.astype(np.int64)
    return np.arange(c.size, dtype=np.int64)


def _ovo(model):
    return not isinstance(model, Model)


def _n_features(model):
    """The feature count a model file states (LIBLINEAR's and the tree's nr_feature); None for LIBSVM's, whose
    file does not say it (predict then takes any number of columns, as svm-predict does)."""
    n = getattr(model, "nr_feature", None)
    return None if n is None else int(n)


def _estimator(name, bases, solvers, doc):
    """An estimator class for a family of solvers: its __init__'s signature is the family's parameters."""
    defaults = _parameters(solvers)
    signature = inspect.Signature([inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)] + [
        inspect.Parameter(k, inspect.Parameter.KEYWORD_ONLY, default=v) for k, v in defaults.items()])

    def __init__(self, **params):
        bound = signature.bind(self, **params)
        bound.apply_defaults()
        for k, v in list(bound.arguments.items())[1:]:
            setattr(self, k, v)
    __init__.__signature__ = signature
    __init__.__qualname__ = f"{name}.__init__"
    cls = type(name, bases, {"__init__": __init__, "__doc__": doc, "__module__": __name__,
                             "_solvers": tuple(solvers), "_defaults": defaults})
    return cls


class _Regressor(RegressorMixin, _Estimator):
    _classifier, _outlier = False, False


class _Outlier(OutlierMixin, _Estimator):
    _classifier, _outlier = False, True

    def fit(self, X, y=None, sample_weight=None):
        return super().fit(X, None, sample_weight)

    def decision_function(self, X):
        return np.asarray(self._raw_decision(X), dtype=np.float64).reshape(-1)

    def predict(self, X):
        return np.where(self.decision_function(X) > 0, 1, -1)

    def score_samples(self, X):
        return self.decision_function(X) + self.offset_

    @property
    def offset_(self):
        check_is_fitted(self, "model_")
        m = self.model_
        return float(np.asarray(m.rho).reshape(-1)[0]) if m.rho is not None else 0.0


LinearSVC = _estimator("LinearSVC", (_Linear, _Classifier), (1, 2, 3, 4, 5),
                       "LIBLINEAR's linear SVMs (-s 1, 2, 3, 4, 5; default -s 1 as LIBLINEAR's train).")
LogisticRegression = _estimator("LogisticRegression", (_Linear, _Classifier), (0, 6, 7),
                                "LIBLINEAR's logistic regression (-s 0, 6, 7; default -s 0).")
LinearSVR = _estimator("LinearSVR", (_Linear, _Regressor), (11, 12, 13),
                       "LIBLINEAR's linear SVR (-s 11, 12, 13; default -s 11).")
OneClassSVM = _estimator("OneClassSVM", (_Outlier,), (21, "one_class"),
                         "The one-class SVM: LIBLINEAR's linear (-s 21, default) or LIBSVM's kernel (one_class).")
OutOfCoreSVC = _estimator("OutOfCoreSVC", (_Linear, _Classifier), ("llsvm", "streamsvm", "bm"),
                          "llsvm's out-of-core L1-loss SVMs (-s llsvm, streamsvm, bm; memory=, tmp_dir=); fit a path "
                          "to stream it.")
SVC = _estimator("SVC", (_Classifier,), ("smo", "nu_svc"),
                 "LIBSVM's kernel C-SVC (-s smo, default) and nu-SVC (-s nu_svc).")
SVR = _estimator("SVR", (_Regressor,), ("epsilon_svr", "nu_svr"),
                 "LIBSVM's kernel epsilon-SVR (default) and nu-SVR.")
TreeSVC = _estimator("TreeSVC", (_Classifier,), ("h1tree",), "The H1-SVM tree (-s h1tree).")
OnlineSVC = _estimator("OnlineSVC", (_Classifier,), ("olsvm", "olsvm-rhl", "norma", "pegaz", "pegasos"),
                       "The online kernel SVMs (-s olsvm, olsvm-rhl, norma, pegaz, pegasos; default olsvm).")
ProjectionSVC = _estimator("ProjectionSVC", (_Linear, _Classifier), ("local1d", "project1d"),
                           "The 1-D projection SVMs (-s local1d, default, and project1d).")

__all__ = ["LinearSVC", "LogisticRegression", "LinearSVR", "OneClassSVM", "OutOfCoreSVC", "SVC", "SVR", "TreeSVC",
           "OnlineSVC", "ProjectionSVC"]
