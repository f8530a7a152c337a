"""scikit-learn's fitted attributes of the kernel SVMs (SVC, NuSVC, SVR, NuSVR, OneClassSVM: scikit-learn 1.9's
sklearn/svm/_base.py over its copy of LIBSVM) from an llsvm SVMModel (llsvm/models/svm.py), and the map of the
model's decision values to scikit-learn's. numpy and scipy only: the estimator layer sets what these give.

    attrs = fitted_attributes(model, classes, sparse=False, n_features=X.shape[1])   # {"support_": ..., ...}
    ovo = ovo_decision(model, classes, model.decision_function(X))                  # decision_function_shape="ovo"
    ovr = ovr_decision(ovo)                                                          # "ovr" (more than 2 classes)

`classes` are the estimator's classes_ as llsvm integer labels, ascending (None for SVR and one-class models).

The conventions, and where they differ from the model's:
- Class order. LIBSVM (and llsvm, llsvm.solvers.common.group_classes) numbers the classes in their order of first
  appearance in the training rows, a two-class {-1, +1} set swapped to (+1, -1); scikit-learn's LIBSVM sorts them
  (its svm_group_classes), and its classes are classes_' indices. Both then train pair (i, j), i < j, on class i's
  rows (y = +1) then class j's (y = -1), each class's rows in training order, and keep as SVs the rows whose
  coefficient is non-zero in any of their pairs, grouped by class. So scikit-learn's pair (a, b) of sorted classes
  is the model's pair of the same two classes, in the same or the opposite orientation: same solution up to the
  sign of y (alpha y, rho and the decision value change sign), and its SVs are the model's blocks taken in sorted
  class order (each block in training order in both).
- support_ (int32): 0-based training rows of the SVs, class blocks in classes_' order (model.meta["sv_indices"],
  1-based, in the model's order; absent from a model read from a file or trained on Dask: then so is support_).
- support_vectors_: those rows, dense (n_SV, n_features) or, for sparse training data, a CSR matrix (int32 indices);
  empty, (0, 0), for a precomputed kernel (scikit-learn's for kernel="precomputed" and a callable kernel).
- dual_coef_ (n_classes - 1, n_SV): LIBSVM's sv_coef in scikit-learn's layout: the coefficient (alpha y) of an SV
  of class a in pair (a, b) is in row b - 1 if b > a, else in row b. For two classes scikit-learn negates it (and
  intercept_ and the decision values), so that > 0 means classes_[1]. Sparse training data: a CSR matrix that holds
  every entry (zeros too), (1, 0) when there is no SV.
- intercept_: -rho per pair (a, b), a < b, in scikit-learn's order (0,1), (0,2), .., (1,2), ..; negated for two
  classes; SVR and one-class: (-rho,), and a one-class model's offset_ = (rho,).
- n_support_ (int32): SVs per class in classes_' order; SVR and one-class (n_SV,) (scikit-learn's dense value: its
  sparse path leaves this array uninitialised).
- probA_, probB_: Platt's A and B per scikit-learn pair (P(a) = 1 / (1 + exp(A f + B)), f > 0 for a, before the
  two-class negation): A as the model's, B negated where the model's pair has the opposite orientation; empty float64
  arrays without probabilities. Not given for SVR and one-class (scikit-learn has no such public attribute).
- coef_ (linear kernel): two classes dual_coef_ @ support_vectors_ (one row, > 0 for classes_[1]); more, one row per
  pair (a, b): the coefficients of a's SVs in the pair times a's SVs plus b's times b's (scikit-learn's
  one-vs-one rows); SVR and one-class dual_coef_ @ support_vectors_. Sparse when the training data was; read-only
  (scikit-learn's property marks it so).
- n_iter_: classifiers an int32 array, one count per scikit-learn pair (model.meta["results"][p].n_iter of the same
  pair); SVR and one-class a Python int (scikit-learn's `.item()` of its one count). fit_status_: 0, or 1 when a
  problem stopped at its iteration limit (scikit-learn's status of max_iter).
- Decision values: the model's one column per pair in its label order (> 0 for the pair's first model label; one
  value per row for two classes) become scikit-learn's ovo values by a column permutation and a sign per column
  (ovo_to_sklearn): > 0 for a in pair (a, b), and for two classes one value, > 0 for classes_[1]. 'ovr' is
  scikit-learn's transform of them (ovr_decision): per class its votes (pair (a, b) votes for a when the value is
  >= 0, else for b) plus the sum of its confidences mapped by x / (3 (|x| + 1)).
"""
import numpy as np
import scipy.sparse as sp

from ..errors import ParameterError

CLASSIFIERS = ("c_svc", "nu_svc")
SPARSE_INTERFACES = ("spmatrix", "sparray")


def _class_positions(model, classes):
    """pos[s]: the index in model.label of classes[s] (classes: the sorted llsvm labels of classes_)."""
    if model.svm_type not in CLASSIFIERS:
        if classes is not None:
            raise ParameterError(f"a {model.svm_type} model has no classes (give classes=None)")
        return None
    if classes is None:
        raise ParameterError(f"a {model.svm_type} model needs its classes (classes_ as llsvm labels)")
    classes = np.asarray(classes).reshape(-1)
    labels = np.asarray(model.label, dtype=np.int64)
    if classes.shape != labels.shape or (np.diff(classes) <= 0).any() or \
            not np.array_equal(np.sort(labels), classes.astype(np.int64)):
        raise ParameterError(f"classes {classes.tolist()} are not the model's labels {labels.tolist()} in "
                             f"ascending order")
    return np.argsort(labels, kind="stable")


def _pair_map(pos):
    """(col, orient) per scikit-learn pair (a, b), a < b, in its order: the model's column of the same two
    classes, and +1 when the model's pair has the same orientation (class a first), else -1."""
    k = pos.size
    model_col = {}
    for i in range(k):
        for j in range(i + 1, k):
            model_col[i, j] = len(model_col)
    col, orient = [], []
    for a in range(k):
        for b in range(a + 1, k):
            A, B = int(pos[a]), int(pos[b])
            col.append(model_col[min(A, B), max(A, B)])
            orient.append(1.0 if A < B else -1.0)
    return np.array(col, dtype=np.int64), np.array(orient, dtype=np.float64)


def pair_order(labels, classes):
    """(columns, signs) of ovo_to_sklearn for a one-vs-one model of these labels (in the model's order) whatever
    kind of model it is (the kernel SVMs, the online SVMs, the H1 tree): classes are the sorted labels."""
    labels = np.asarray(labels, dtype=np.int64).reshape(-1)
    if not np.array_equal(np.sort(labels), np.asarray(classes, dtype=np.int64).reshape(-1)):
        raise ParameterError(f"classes {list(classes)} are not the model's labels {labels.tolist()} in ascending "
                             f"order")
    col, orient = _pair_map(np.argsort(labels, kind="stable"))
    return col, (-orient if labels.size == 2 else orient)


def ovo_to_sklearn(model, classes):
    """(columns, signs) that take the model's decision values to scikit-learn's decision_function_shape='ovo'
    values: sklearn[:, p] = model_dec[:, columns[p]] * signs[p] (two classes: one value per row, dec * signs[0],
    > 0 for classes_[1]). columns int64, signs float64 (+1 or -1), one per scikit-learn pair."""
    pos = _class_positions(model, classes)
    if pos is None:
        raise ParameterError(f"a {model.svm_type} model has one decision value per row, no pairs")
    col, orient = _pair_map(pos)
    if pos.size == 2:
        orient = -orient            # scikit-learn's two-class negation: > 0 for classes_[1]
    return col, orient


def ovo_decision(model, classes, dec):
    """scikit-learn's 'ovo' decision values from the model's (model.decision_function's): (n_rows, n_pairs) in
    scikit-learn's pair order and signs; (n_rows,) for two classes."""
    col, signs = ovo_to_sklearn(model, classes)
    dec = np.asarray(dec, dtype=np.float64)
    if col.size == 1:
        return dec.reshape(-1) * signs[0]
    dec = dec.reshape(dec.shape[0], -1)
    if dec.shape[1] != col.size:
        raise ParameterError(f"{dec.shape[1]} decision columns for {col.size} pairs")
    return np.ascontiguousarray(dec[:, col] * signs)       # C order, as scikit-learn's (fancy indexing: F order)


def ovr_decision(ovo):
    """scikit-learn's 'ovr' decision values (n_rows, n_classes) of its 'ovo' values (n_rows, n_pairs, more than
    two classes): per class its votes, pair (a, b) voting for a when its value is >= 0 and for b when < 0, plus
    the sum of its confidences (the pair's value for a, minus it for b) mapped into (-1/3, 1/3) by
    x / (3 (|x| + 1)), which breaks ties of votes and never changes their order."""
    ovo = np.asarray(ovo, dtype=np.float64)
    if ovo.ndim != 2:
        raise ParameterError("ovr_decision takes one column per pair (two classes have no 'ovr' transform: "
                             "scikit-learn returns their one value)")
    n_pairs = ovo.shape[1]
    k = int(round((1 + np.sqrt(1 + 8 * n_pairs)) / 2))
    if k * (k - 1) // 2 != n_pairs:
        raise ParameterError(f"{n_pairs} columns are not one per pair of some number of classes")
    votes = np.zeros((ovo.shape[0], k))
    conf = np.zeros((ovo.shape[0], k))
    first, second = np.triu_indices(k, 1)
    for p in range(n_pairs):
        a, b, d = first[p], second[p], ovo[:, p]
        neg = d < 0
        votes[:, a] += ~neg
        votes[:, b] += neg
        conf[:, a] += d
        conf[:, b] -= d
    return votes + conf / (3 * (np.abs(conf) + 1))


def _sv_blocks(model, pos):
    """(order, bounds): the model's SV positions in scikit-learn's order (class blocks in classes_' order), and
    the bounds of class s's block in it (bounds[s]:bounds[s + 1])."""
    nSV = np.asarray(model.nSV, dtype=np.int64)
    start = np.concatenate([[0], np.cumsum(nSV)])
    order = np.concatenate([np.arange(start[A], start[A + 1]) for A in pos]).astype(np.int64)
    bounds = np.concatenate([[0], np.cumsum(nSV[pos])])
    return order, bounds


def _sv_coef(model, pos, order, bounds):
    """LIBSVM's sv_coef in scikit-learn's class order and orientation, (k - 1, n_SV), before its two-class
    negation."""
    k = pos.size
    src = model.sv_coef[:, order]
    out = np.empty(src.shape, np.float64)                  # C order, as scikit-learn's (src may be F order)
    for a in range(k):
        cols = slice(bounds[a], bounds[a + 1])
        A = int(pos[a])
        for b in range(k):
            if b == a:
                continue
            B = int(pos[b])
            same = (A < B) == (a < b)
            out[b if b < a else b - 1, cols] = src[B if B < A else B - 1, cols] * (1.0 if same else -1.0)
    return out


def _sv_matrix(model, order, n_features):
    """The SVs in `order` as a scipy CSR matrix (n_SV, n_features) with int32 indices."""
    SV = model.SV
    nf = SV.n_features if n_features is None else int(n_features)
    if nf < SV.n_features:
        raise ParameterError(f"n_features {nf} is fewer than the SVs' {SV.n_features}")
    csr = sp.csr_matrix((SV.values, SV.indices, SV.indptr), shape=(SV.n_rows, nf))[order]
    csr.indices = csr.indices.astype(np.int32, copy=False)
    csr.indptr = csr.indptr.astype(np.int32, copy=False)
    return csr


def _sparse_dual(coef):
    """scikit-learn's sparse dual_coef_: every entry stored, row by row; (1, 0) with no SV."""
    rows, n_sv = coef.shape
    if not n_sv:
        return sp.csr_matrix((1, 0))
    indices = np.tile(np.arange(n_sv, dtype=np.int32), rows)
    indptr = np.arange(0, rows * n_sv + 1, n_sv, dtype=np.int32)
    return sp.csr_matrix((coef.reshape(-1).copy(), indices, indptr), shape=(rows, n_sv))


def _ovo_coef(dual, bounds, SV):
    """One row per scikit-learn pair (a, b): a's coefficients in the pair times a's SVs plus b's times b's
    (dense or scipy sparse, as dual and SV are)."""
    k = bounds.size - 1
    rows = []
    for a in range(k):
        sv_a = SV[bounds[a]:bounds[a + 1]]
        for b in range(a + 1, k):
            sv_b = SV[bounds[b]:bounds[b + 1]]
            rows.append(dual[b - 1, bounds[a]:bounds[a + 1]] @ sv_a + dual[a, bounds[b]:bounds[b + 1]] @ sv_b)
    return sp.vstack(rows).tocsr() if sp.issparse(SV) else np.vstack(rows)


def fitted_attributes(model, classes=None, *, sparse=False, n_features=None, sparse_interface="spmatrix"):
    """scikit-learn's fitted attributes of an SVMModel (see the module's docstring for each): a dict with
    support_ (when model.meta has sv_indices), support_vectors_, dual_coef_, intercept_, n_support_, fit_status_,
    n_iter_ (when model.meta has results), coef_ (linear kernel), probA_ and probB_ (classifiers), offset_
    (one-class).

    classes: classes_ as llsvm integer labels, ascending (classifiers; None otherwise); sparse: the training data
    was sparse (support_vectors_, dual_coef_ and coef_ are then CSR matrices, `sparse_interface` "spmatrix":
    scipy's csr_matrix, or "sparray": csr_array, as scikit-learn's config says); n_features: the training data's
    column count (default: the SVs' highest column + 1)."""
    if sparse_interface not in SPARSE_INTERFACES:
        raise ParameterError(f"sparse_interface {sparse_interface!r} (one of {', '.join(SPARSE_INTERFACES)})")
    pos = _class_positions(model, classes)
    meta = getattr(model, "meta", None) or {}
    classifier = pos is not None
    if classifier:
        order, bounds = _sv_blocks(model, pos)
        col, orient = _pair_map(pos)
        coef = _sv_coef(model, pos, order, bounds)
        intercept = -model.rho[col] * orient
        n_support = np.asarray(model.nSV, dtype=np.int32)[pos]
    else:
        order = np.arange(model.total_sv, dtype=np.int64)
        col = np.zeros(1, np.int64)
        coef = model.sv_coef.copy()
        intercept = -model.rho.copy()
        n_support = np.array([model.total_sv], dtype=np.int32)
    # a precomputed kernel's model holds no vectors (its SVs are serial numbers): scikit-learn's empty (0, 0)
    SV = sp.csr_matrix((0, 0)) if model.kernel_type == "precomputed" else _sv_matrix(model, order, n_features)
    two = classifier and pos.size == 2
    dual = -coef if two else coef         # scikit-learn's two-class negation (and of intercept_)
    if two:
        intercept = -intercept
    out = {"intercept_": intercept, "n_support_": n_support}
    if sparse:
        out["support_vectors_"] = SV
        out["dual_coef_"] = _sparse_dual(dual)
    else:
        out["support_vectors_"] = SV.toarray()
        out["dual_coef_"] = dual
    if "sv_indices" in meta:
        out["support_"] = (np.asarray(meta["sv_indices"], dtype=np.int64)[order] - 1).astype(np.int32)
    results = meta.get("results")
    if results:
        out["fit_status_"] = 0 if all(r.converged for r in results) else 1
        if classifier:
            out["n_iter_"] = np.array([results[c].n_iter for c in col], dtype=np.int32)
        else:
            out["n_iter_"] = int(results[0].n_iter)
    else:
        out["fit_status_"] = 0
    if model.kernel_type == "linear":
        if classifier and not two:
            dual_ovo = out["dual_coef_"]
            if sparse:
                dual_ovo = sp.csr_matrix(dual_ovo)
            out["coef_"] = _ovo_coef(dual_ovo, bounds, out["support_vectors_"])
        else:
            out["coef_"] = out["dual_coef_"] @ out["support_vectors_"]
    if classifier:
        if model.probA is None:
            out["probA_"], out["probB_"] = np.empty(0), np.empty(0)
        else:
            out["probA_"], out["probB_"] = model.probA[col].copy(), model.probB[col] * orient
    if model.svm_type == "one_class":
        out["offset_"] = -intercept
    if sparse and sparse_interface == "sparray":
        for key in ("support_vectors_", "dual_coef_", "coef_"):
            if key in out and sp.issparse(out[key]):
                out[key] = sp.csr_array(out[key])
    if "coef_" in out:              # read-only, as scikit-learn's property gives it
        (out["coef_"].data if sp.issparse(out["coef_"]) else out["coef_"]).flags.writeable = False
    return out
