"""LIBSVM's kernel models (svm_model): LIBSVM's model file read strictly and written byte for byte as
svm_save_model writes it, and prediction as svm_predict_values / svm_predict_probability compute it (the kernel
loop in cext/_kpredict.pyx). docs/formats.md, section "LIBSVM kernel models", describes the file.

    svm_type c_svc                  c_svc, nu_svc, one_class, epsilon_svr, nu_svr
    kernel_type rbf                 linear, polynomial, rbf, sigmoid, precomputed
    degree 3                        polynomial only
    gamma 0.5                       polynomial, rbf, sigmoid
    coef0 0                         polynomial, sigmoid
    nr_class 2                      2 for one-class and SVR
    total_sv 130
    rho 0.4 (k(k-1)/2 values)
    label 1 -1                      classification only
    probA ... / probB ...           optional (k(k-1)/2 each; SVR: probA only, one value)
    prob_density_marks ... (10)     one-class only, optional
    nr_sv 64 66                     classification only: SVs per class, in the order of `label`
    SV
    coef_1 .. coef_{k-1} index:value index:value ...   (one line per SV; 1-based ascending indices)
    coef_1 .. coef_{k-1} 0:serial                      (precomputed: the SV's sample serial number only)
"""
import re
import warnings

import numpy as np

from .._ext._kpredict import decision_values as _decision_values, svc_probability
from .._ext._libsvm import format_svs, format_weights, parse_sv_block
from ..dataset import CSRDataset, check_kernel_rows
from ..errors import ConvergenceWarning, ModelFormatError, ParameterError, escape, quote
from ..stop import stoppable
from .base import (CHUNK_VALUES, FLOAT, INT32_MAX, INT32_MIN, INT64_MAX, INT64_MIN, BaseModel, ModelText, as_rows,
                   c_float, c_int_or_none, c_ints, header_int, int64_labels, parse_header)

SVM_TYPES = ("c_svc", "nu_svc", "one_class", "epsilon_svr", "nu_svr")
KERNEL_TYPES = ("linear", "polynomial", "rbf", "sigmoid", "precomputed")      # LIBSVM's kernel_type 0..4
CLASSIFICATION = ("c_svc", "nu_svc")
REGRESSION = ("epsilon_svr", "nu_svr")
NR_MARKS = 10                    # prob_density_marks of a one-class model (LIBSVM's nr_marks)
_PAIR = re.compile(r"([+-]?\d+):(.*)")


def _serial_lines(coef, serials, r0, r1):
    """SV lines r0..r1-1 of a precomputed kernel's model as svm_save_model writes them: the coefficients ("%.17g "
    each, C's printf: format_weights), then "0:%d " of the SV's sample serial number."""
    text = format_weights(np.ascontiguousarray(coef[:, r0:r1].T), 0, r1 - r0) if coef.shape[0] else \
        b"\n" * (r1 - r0)
    lines = bytes(text).split(b"\n")[:-1]
    return b"".join(line + b"0:%d \n" % int(s) for line, s in zip(lines, serials[r0:r1].tolist()))


def _sv_lines(body, sv_line, m, bad, precomputed=False):
    """The SV lines of a LIBSVM model read token by token (the reference reader, and the one that names an error:
    parse_sv_block in cext/_libsvm.pyx reads the lines it can and hands the others here; a precomputed kernel's,
    `precomputed`: the coefficients then 0:serial, its sample serial number, an integer from 1 to 2^31 - 1).
    Returns (coef (m, l), indptr, indices (0-based int32), values, n_features)."""
    l = len(body)
    coef = np.empty((m, l), np.float64)
    indptr = np.zeros(l + 1, np.int64)
    indices, values = [], []
    for i, line in enumerate(body):
        ln = sv_line + 1 + i
        parts = line.split()
        if len(parts) < m:
            raise bad(ln, f"expected {m} coefficients, found {len(parts)}")
        for j in range(m):
            tok = parts[j]
            if not FLOAT.fullmatch(tok):
                raise bad(ln, f"a coefficient is not a number (found {quote(tok)})")
            coef[j, i] = v = float(tok)
            if not np.isfinite(v):
                raise bad(ln, f"a coefficient is NaN or infinite (found {quote(tok)})")
        if precomputed:
            mt = _PAIR.fullmatch(parts[m]) if len(parts) == m + 1 else None
            serial = c_int_or_none(mt.group(2)) if mt is not None and mt.group(1) == "0" else None
            if serial is None or not 1 <= serial <= INT32_MAX:
                raise bad(ln, f"expected 0:sample_serial_number (an integer from 1 to {INT32_MAX}) after the "
                              f"coefficients of a precomputed kernel's SV, found "
                              f"{quote(' '.join(parts[m:])) if len(parts) > m else 'nothing'}")
            indices.append(0)       # a precomputed kernel's indices are 0-based: index 0 is view index 0
            values.append(float(serial))
            indptr[i + 1] = len(indices)
            continue
        prev = 0
        for tok in parts[m:]:
            mt = _PAIR.fullmatch(tok)
            if mt is None or not FLOAT.fullmatch(mt.group(2)):
                raise bad(ln, f"expected index:value, found {quote(tok)}")
            written = mt.group(1)
            idx = c_int_or_none(written)
            if idx is None:             # more digits than any C integer holds
                idx = INT32_MIN if written.startswith("-") else INT32_MAX + 1
            if idx <= prev or idx > INT32_MAX:
                what = "not positive" if idx <= 0 else ("not ascending" if idx <= prev else "beyond int")
                raise bad(ln, f"index {escape(written)} {what} (indices are 1-based, strictly ascending)")
            v = float(mt.group(2))
            if not np.isfinite(v):
                raise bad(ln, f"a value is NaN or infinite (found {quote(tok)})")
            prev = idx
            indices.append(idx - 1)
            values.append(v)
        indptr[i + 1] = len(indices)
    indices = np.array(indices, dtype=np.int32)
    nf = int(indices.max()) + 1 if indices.size else 0
    return coef, indptr, indices, np.array(values, dtype=np.float64), nf


def ovo_vote(dec, label):
    """LIBSVM's one-vs-one vote: dec (n_rows, k(k-1)/2) pairwise values in LIBSVM's pair order; pair (a, b) votes
    for a when its value is > 0, else for b; the label of the first class with the most votes (float64)."""
    k = len(label)
    votes = np.zeros((dec.shape[0], k), np.int64)
    p = 0
    if k == 0:
        # no class (a model of no rows: a fold of leave-one-out on one row): no label, nan, which is never right
        return np.full(dec.shape[0], np.nan)
    for a in range(k):
        for b in range(a + 1, k):
            pos = dec[:, p] > 0
            votes[:, a] += pos
            votes[:, b] += ~pos
            p += 1
    return np.asarray(label)[np.argmax(votes, axis=1)].astype(np.float64)


def refuse_nonfinite(a, name):
    """ParameterError naming the first entry of `a` that is not a finite number: "rho[2] is nan", "sv_coef[0][17]
    is inf (the coefficient of SV 18)"."""
    bad = np.argwhere(~np.isfinite(a))
    if bad.size:
        at = tuple(int(v) for v in bad[0])
        where = "".join(f"[{v}]" for v in at)
        sv = f" (the coefficient of SV {at[1] + 1})" if name == "sv_coef" else ""
        raise ParameterError(f"{name}{where} is {float(a[at])!r}{sv}, not a finite number")


def _finite(a):
    return bool(np.isfinite(a).all())


class SVMModel(BaseModel):
    """LIBSVM's svm_model.

    SVMModel(svm_type, kernel_type, degree, gamma, coef0, rho, sv_coef, SV, label=None, nSV=None, probA=None,
    probB=None, prob_density_marks=None):

    - svm_type: "c_svc", "nu_svc", "one_class", "epsilon_svr", "nu_svr"; kernel_type: "linear", "polynomial",
      "rbf", "sigmoid" (LIBSVM's names; or its numbers 0..4 / 0..3);
    - degree (int), gamma, coef0: the kernel's parameters (written only for the kernels that use them);
    - rho: k(k-1)/2 values for k = nr_class classes (one for one-class and SVR, whose nr_class is 2);
    - sv_coef: a (k-1, total_sv) float64 array (one row for one-class and SVR): LIBSVM's sv_coef[j][i];
    - SV: a scipy.sparse csr_matrix (total_sv rows, 0-based columns; LIBSVM's file indices are these + 1) or a
      CSRDataset; the SVs grouped by class as nSV says (classification), as LIBSVM orders them;
    - label, nSV: classification only (k integers each; sum(nSV) == total_sv);
    - probA, probB: k(k-1)/2 values each (classification, both or neither); SVR: probA alone, one value;
    - prob_density_marks: one-class only, 10 values.

    Every value is checked (ParameterError): counts, shapes, finite numbers, ascending column indices.
    """

    report_style = "libsvm"

    def __init__(self, svm_type, kernel_type, degree, gamma, coef0, rho, sv_coef, SV, label=None, nSV=None,
                 probA=None, probB=None, prob_density_marks=None):
        if isinstance(svm_type, (int, np.integer)) and 0 <= svm_type < len(SVM_TYPES):
            svm_type = SVM_TYPES[svm_type]
        if isinstance(kernel_type, (int, np.integer)) and 0 <= kernel_type < len(KERNEL_TYPES):
            kernel_type = KERNEL_TYPES[kernel_type]
        if svm_type not in SVM_TYPES:
            raise ParameterError(f"unknown svm_type {svm_type!r} (one of {', '.join(SVM_TYPES)})")
        if kernel_type not in KERNEL_TYPES:
            raise ParameterError(f"unsupported kernel_type {kernel_type!r} (one of {', '.join(KERNEL_TYPES)})")
        self.svm_type = svm_type
        self.kernel_type = kernel_type
        self.degree = int(degree)
        self.gamma = float(gamma)
        self.coef0 = float(coef0)
        if not (np.isfinite(self.gamma) and np.isfinite(self.coef0)) or self.gamma < 0:
            raise ParameterError("gamma must be finite and >= 0, coef0 finite")
        if kernel_type == "polynomial" and not 0 <= self.degree <= INT32_MAX:
            raise ParameterError(f"degree of polynomial kernel < 0 (or beyond the int range): {self.degree}")
        self.SV = self._sv_rows(SV)
        if kernel_type == "precomputed":
            self.SV = self._serials(self.SV)
        l = self.SV.n_rows
        classification = svm_type in CLASSIFICATION
        if classification:
            if label is None or nSV is None:
                raise ParameterError(f"a {svm_type} model needs label and nSV")
            self.label = int64_labels(label)
            self.nSV = np.asarray(nSV, dtype=np.int64).reshape(-1)
            k = self.label.shape[0]
            if k < 1 or self.nSV.shape[0] != k:
                raise ParameterError(f"label has {k} classes, nSV {self.nSV.shape[0]} counts")
            if (self.nSV < 0).any() or int(self.nSV.sum()) != l:
                raise ParameterError(f"nSV {self.nSV.tolist()} must be counts >= 0 summing to total_sv {l}")
        else:
            if label is not None or nSV is not None:
                raise ParameterError(f"a {svm_type} model has no label or nSV")
            self.label = self.nSV = None
            k = 2
        self.nr_class = k
        n_pairs = k * (k - 1) // 2
        self.rho = np.array(rho, dtype=np.float64).reshape(-1)
        if self.rho.shape[0] != n_pairs:
            raise ParameterError(f"rho must be {n_pairs} values, not {self.rho.shape[0]}")
        refuse_nonfinite(self.rho, "rho")
        self.sv_coef = np.array(sv_coef, dtype=np.float64, ndmin=2)
        if l == 0 and self.sv_coef.size == 0:
            self.sv_coef = self.sv_coef.reshape(k - 1, 0)
        if self.sv_coef.shape != (k - 1, l):
            raise ParameterError(f"sv_coef has shape {self.sv_coef.shape}, expected {(k - 1, l)}")
        refuse_nonfinite(self.sv_coef, "sv_coef")
        self.sv_coef = np.ascontiguousarray(self.sv_coef)

        def vector(v, n, name):
            if v is None:
                return None
            a = np.array(v, dtype=np.float64).reshape(-1)
            if a.shape[0] != n:
                raise ParameterError(f"{name} must be {n} values, not {a.shape[0]}")
            refuse_nonfinite(a, name)
            return a

        if classification:
            if (probA is None) != (probB is None):
                raise ParameterError("a classification model has probA and probB, or neither")
            if prob_density_marks is not None:
                raise ParameterError("prob_density_marks belong to one-class models")
            self.probA, self.probB = vector(probA, n_pairs, "probA"), vector(probB, n_pairs, "probB")
            self.prob_density_marks = None
        elif svm_type == "one_class":
            if probA is not None or probB is not None:
                raise ParameterError("a one-class model has no probA or probB (its probability: prob_density_marks)")
            self.probA = self.probB = None
            self.prob_density_marks = vector(prob_density_marks, NR_MARKS, "prob_density_marks")
        else:
            if probB is not None or prob_density_marks is not None:
                raise ParameterError("an SVR model's probability model is probA alone")
            self.probA, self.probB = vector(probA, 1, "probA"), None
            self.prob_density_marks = None

    @staticmethod
    def _sv_rows(SV):
        if isinstance(SV, CSRDataset):
            indptr, indices, values, nf = SV.indptr, SV.indices, SV.values, SV.n_features
        else:
            import scipy.sparse as sp

            if not sp.issparse(SV):
                raise ParameterError("SV must be a scipy.sparse csr_matrix or a CSRDataset")
            SV = SV.tocsr()          # explicit zeros are kept: LIBSVM writes them
            indptr, indices, values, nf = SV.indptr, SV.indices, SV.data, SV.shape[1]
        indptr = np.asarray(indptr, dtype=np.int64)
        indices = np.asarray(indices)
        if indices.dtype.kind not in "iu":
            indices = indices.astype(np.int64)
        values = np.ascontiguousarray(values, dtype=np.float64)
        if indptr.ndim != 1 or indptr.shape[0] < 1 or indptr[0] != 0 or (np.diff(indptr) < 0).any() \
                or indptr[-1] != indices.shape[0] or indices.shape != values.shape:
            raise ParameterError("SV: malformed CSR arrays")
        nnz = indices.shape[0]
        if nnz:
            if indices.min() < 0 or indices.max() >= INT32_MAX:
                raise ParameterError("SV column indices must be in 0 .. 2^31 - 2 (LIBSVM's indices are C ints)")
            # in int32 from here (no int64 copies of nnz size): each step within a row must be > 0; the steps
            # across a row boundary are set to 1
            indices = indices.astype(np.int32, copy=False)
            step = np.diff(indices)
            bounds = indptr[1:-1]
            step[bounds[(bounds > 0) & (bounds < nnz)] - 1] = 1
            if (step <= 0).any():
                raise ParameterError("SV column indices must be strictly ascending within each row")
            del step
        if not _finite(values):
            raise ParameterError("SV values must be finite")
        nf = max(int(nf), int(indices.max()) + 1 if nnz else 0)
        return CSRDataset(np.zeros(indptr.shape[0] - 1), indptr, np.ascontiguousarray(indices, dtype=np.int32),
                          values, nf)

    @staticmethod
    def _serials(SV):
        """A precomputed kernel's SVs as LIBSVM keeps them in its model: each SV's sample serial number (the (int)
        of its first value, at index 0, as C casts it), at index 0 alone; the rest of a training row (its kernel
        values) is not the model's."""
        ip, idx, val = SV.indptr, SV.indices, SV.values
        l = SV.n_rows
        held = ip[1:] > ip[:-1]
        if not held.all() or (l and (idx[ip[:-1]] != 0).any()):
            raise ParameterError("a precomputed kernel's SV starts with index 0, its sample serial number")
        v = np.asarray(val[ip[:-1]], np.float64)
        if l and not ((v >= 1) & (v < INT32_MAX + 1.0)).all():
            raise ParameterError("a precomputed kernel's sample serial numbers are 1 to 2^31 - 1")
        return CSRDataset(np.zeros(l), np.arange(l + 1, dtype=np.int64), np.zeros(l, np.int32), np.trunc(v),
                          1 if l else 0)

    @property
    def precomputed(self):
        """Whether the kernel is LIBSVM's precomputed one: its rows to predict are kernel values, read 0-based."""
        return self.kernel_type == "precomputed"

    @property
    def serials(self):
        """A precomputed kernel's SV serial numbers, ascending and distinct (int64): the indices its rows to predict
        must hold."""
        if self._serials_cache is None:
            self._serials_cache = np.unique(self.SV.values.astype(np.int64))
        return self._serials_cache

    _serials_cache = None

    @property
    def zero_based(self):
        """Whether the rows to predict are read with 0-based indices (a precomputed kernel's: 0:? then K(x, x_s)
        at index s)."""
        return self.precomputed

    # -- BaseModel ----------------------------------------------------------------------------------------------
    @property
    def total_sv(self):
        return self.SV.n_rows

    @property
    def l(self):
        return self.SV.n_rows

    @property
    def is_regression(self):
        return self.svm_type in REGRESSION

    @property
    def supports_probability(self):
        """LIBSVM's svm_check_probability_model."""
        if self.svm_type in CLASSIFICATION:
            return self.probA is not None and self.probB is not None
        if self.svm_type == "one_class":
            return self.prob_density_marks is not None
        return self.probA is not None

    @property
    def probability_refusal(self):
        return "Model does not support probability estimates (train it with -b 1)"

    @property
    def svr_probability(self):
        """sigma of the Laplace noise model of an SVR model with probA (LIBSVM's svm_get_svr_probability)."""
        if self.svm_type not in REGRESSION or self.probA is None:
            raise ParameterError("only an SVR model with probA has a Laplace noise model")
        return float(self.probA[0])

    @stoppable          # Ctrl-C stops kernel prediction within a block, from Python too
    def decision_function(self, X, *, prepared=False, block_rows=None):
        """Decision values as svm_predict_values gives them: (n_rows, k(k-1)/2) for classification with k > 2
        classes, (n_rows,) for two classes, one-class and SVR ((n_rows, 0) for a single class). `prepared` is
        accepted for the BaseModel interface (a kernel model reads the rows as they are); block_rows: test rows
        per kernel block (default: a slab of about 4 MB)."""
        rows = as_rows(X, full=self.precomputed)
        k = self.nr_class
        classification = self.svm_type in CLASSIFICATION
        n_dec = k * (k - 1) // 2 if classification else 1
        if self.precomputed and self.total_sv:
            # the kernel reads K(x, x_s) at index s of each row, s the SVs' serial numbers: every row must hold them
            rows = rows.contiguous()
            check_kernel_rows(rows, self.serials)
        out = np.empty((rows.n_rows, n_dec), np.float64)
        if rows.n_rows:
            kt = KERNEL_TYPES.index(self.kernel_type)
            _decision_values(rows.row_view(), self.SV.row_view(), kt, self.degree, self.gamma, self.coef0,
                             self.sv_coef, self.rho, self.nSV if classification else None, out,
                             block_rows=block_rows)
        return out[:, 0] if n_dec == 1 else out

    def labels_from_decisions(self, dec):
        """LIBSVM's rule: one-class +1 if dec > 0 else -1; SVR the value; classification one vote per pair (a, b)
        (to a if dec > 0, else to b), the first class with the most votes."""
        dec = np.asarray(dec, dtype=np.float64)
        if self.svm_type in REGRESSION:
            return dec.reshape(-1).copy()
        if self.svm_type == "one_class":
            return np.where(dec.reshape(-1) > 0, 1.0, -1.0)
        k = self.nr_class
        if k == 2:
            return np.where(dec.reshape(-1) > 0, self.label[0], self.label[1]).astype(np.float64)
        # the pair count, not -1: zero rows (an empty cross-validation fold, as LIBSVM's stratified folds can
        # leave) have no size to infer it from
        return ovo_vote(dec.reshape(dec.shape[0], k * (k - 1) // 2), self.label)

    def probabilities_from_decisions(self, dec):
        """svm_predict_probability's estimates: (n_rows, k) for classification (model.label's order), (n_rows, 2)
        for one-class (normal, outlier)."""
        if not self.supports_probability or self.svm_type in REGRESSION:
            raise ParameterError(self.probability_refusal if not self.supports_probability else
                                 "an SVR model gives no class probabilities (its probA is a noise model)")
        dec = np.asarray(dec, dtype=np.float64)
        if self.svm_type == "one_class":
            d = dec.reshape(-1)
            marks = self.prob_density_marks
            p = np.zeros(d.shape[0])
            for i in range(NR_MARKS - 1, 0, -1):      # the first mark above dec wins
                p[d < marks[i]] = i / NR_MARKS
            # LIBSVM tests dec < marks[0] first, then dec > marks[9]: applied last, the first test wins
            p[d > marks[NR_MARKS - 1]] = 0.999
            p[d < marks[0]] = 0.001
            return np.column_stack([p, 1 - p])
        k = self.nr_class
        if k == 1:
            # LIBSVM's coupling of one class: p = 1/1, already converged
            return np.ones((dec.shape[0], 1))
        dec = np.ascontiguousarray(dec.reshape(-1, k * (k - 1) // 2))
        prob = np.empty((dec.shape[0], k), np.float64)
        limited = svc_probability(dec, self.probA, self.probB, prob)
        if limited:
            # LIBSVM prints "Exceeds max_iter in multiclass_prob" for each such row and keeps the estimate
            warnings.warn(ConvergenceWarning(f"Exceeds max_iter in multiclass_prob ({limited} rows)"), stacklevel=2)
        return prob

    def labels_and_probabilities(self, dec):
        """(labels, probabilities) as svm_predict_probability returns them: classification labels are the first
        class of largest probability (not the vote); one-class labels the sign of the decision value."""
        prob = self.probabilities_from_decisions(dec)
        if self.svm_type == "one_class":
            return self.labels_from_decisions(dec), prob
        return self.label[np.argmax(prob, axis=1)].astype(np.float64), prob

    def probability_header(self):
        """The first line of svm-predict's -b 1 output."""
        if self.svm_type == "one_class":
            return "label normal outlier"
        return "labels" + "".join(f" {int(v)}" for v in self.label)

    def finite_values(self):
        """gamma, coef0, rho, sv_coef, the SVs' values and the probability figures (BaseModel.finite_values)."""
        yield (lambda i: "gamma"), self.gamma
        yield (lambda i: "coef0"), self.coef0
        yield (lambda i: f"rho[{i[0]}]"), self.rho
        yield (lambda i: f"sv_coef[{i[0]}][{i[1]}] (the coefficient of SV {i[1] + 1})"), self.sv_coef
        yield (lambda i: f"a value of SV {int(np.searchsorted(self.SV.indptr, i[0], side='right'))}"), self.SV.values
        for name in ("probA", "probB", "prob_density_marks"):
            if getattr(self, name) is not None:
                yield (lambda i, name=name: f"{name}[{i[0]}]"), getattr(self, name)

    # -- files --------------------------------------------------------------------------------------------------
    def to_text(self):
        return b"".join(self.text_chunks()).decode("ascii")

    def text_chunks(self):
        """svm_save_model's text: the header, `SV`, then per SV its coefficients ("%.17g ") and its pairs
        ("index:%.8g ", 1-based), each line ending in a space before the newline (C's printf, cext/_libsvm.pyx
        format_svs, about CHUNK_VALUES numbers at a time)."""
        k = self.nr_class
        out = [f"svm_type {self.svm_type}\n", f"kernel_type {self.kernel_type}\n"]
        if self.kernel_type == "polynomial":
            out.append(f"degree {self.degree}\n")
        if self.kernel_type in ("polynomial", "rbf", "sigmoid"):
            out.append("gamma %.17g\n" % self.gamma)
        if self.kernel_type in ("polynomial", "sigmoid"):
            out.append("coef0 %.17g\n" % self.coef0)
        out.append(f"nr_class {k}\ntotal_sv {self.total_sv}\n")

        def doubles(name, v):
            # " %.17g" per value, by C's printf as svm_save_model's: format_weights' "%.17g " per value of one row
            # and its newline, the last space moved to the front
            if not v.size:
                return name + "\n"
            row = format_weights(np.ascontiguousarray(v, np.float64).reshape(1, -1), 0, 1)
            return name + " " + row[:-2].decode("ascii") + "\n"

        out.append(doubles("rho", self.rho))
        if self.label is not None:
            out.append("label" + "".join(f" {v}" for v in self.label.tolist()) + "\n")
        if self.probA is not None:
            out.append(doubles("probA", self.probA))
        if self.probB is not None:
            out.append(doubles("probB", self.probB))
        if self.prob_density_marks is not None:
            out.append(doubles("prob_density_marks", self.prob_density_marks))
        if self.nSV is not None:
            out.append("nr_sv" + "".join(f" {v}" for v in self.nSV.tolist()) + "\n")
        out.append("SV\n")
        yield "".join(out).encode("ascii")
        coef = np.ascontiguousarray(self.sv_coef, dtype=np.float64)
        ip = np.ascontiguousarray(self.SV.indptr, dtype=np.int64)
        idx = np.ascontiguousarray(self.SV.indices, dtype=np.int32)
        val = np.ascontiguousarray(self.SV.values, dtype=np.float64)
        per_row = max(1, coef.shape[0] + (int(ip[-1]) // max(self.total_sv, 1)))
        step = max(1, CHUNK_VALUES // per_row)
        for r in range(0, self.total_sv, step):
            if self.precomputed:
                yield _serial_lines(coef, val, r, min(r + step, self.total_sv))
            else:
                yield format_svs(coef, ip, idx, val, r, min(r + step, self.total_sv))

    @staticmethod
    def header_fields():
        """The LIBSVM header's keys and their readers (llsvm.models.base.parse_header)."""
        def svm_type(key, args, fail):
            if len(args) != 1 or args[0] not in SVM_TYPES:
                raise fail(f"unknown svm type {quote(' '.join(args))} (one of {', '.join(SVM_TYPES)})")
            return args[0]

        def kernel_type(key, args, fail):
            if len(args) != 1 or args[0] not in KERNEL_TYPES:
                raise fail(f"unknown kernel function {quote(' '.join(args))} (one of {', '.join(KERNEL_TYPES)})")
            return args[0]

        def numbers(key, args, fail):
            vals = []
            for tok in args:
                try:
                    v = c_float(tok)
                except ValueError:
                    raise fail(f"'{key}' values must be numbers (found {quote(tok)})") from None
                if not np.isfinite(v):
                    raise fail(f"'{key}' values must be finite (found {quote(tok)})")
                vals.append(v)
            if key in ("gamma", "coef0"):
                if len(vals) != 1:
                    raise fail(f"'{key}' takes one number")
                if key == "gamma" and vals[0] < 0:
                    raise fail(f"gamma < 0: {quote(args[0])}")
                vals = vals[0]
            return vals

        def integers(key, args, fail):
            label = key == "label"          # class labels are 64-bit integers (issue 45); nr_sv counts C ints
            return c_ints(args, INT64_MIN if label else 0,
                          lambda tok: fail(f"'{key}' values must be integers (found {quote(tok)})"),
                          lambda tok: fail(f"'{key}' value {escape(tok)} out of range"),
                          high=INT64_MAX if label else INT32_MAX)

        return {"svm_type": svm_type, "kernel_type": kernel_type, "degree": header_int(0), "nr_class": header_int(1),
                "total_sv": header_int(0), **{key: numbers for key in ("gamma", "coef0", "rho", "probA", "probB",
                                                                       "prob_density_marks")},
                "label": integers, "nr_sv": integers}

    @classmethod
    def parse(cls, path, text, size):
        """LIBSVM's model file, strictly: every refusal names path:line."""
        def bad(lineno, msg):
            return ModelFormatError(f"{path}:{lineno}: {msg}")

        # the lines without the empty one after the file's final newline
        src = ModelText(text, drop_final_empty=True)
        head, where, sv_line = parse_header(src, "SV", cls.header_fields(), bad, truncated_after=True)
        first = src.pos
        for key in ("svm_type", "kernel_type", "nr_class", "total_sv", "rho"):
            if key not in head:
                raise bad(sv_line, f"the header has no '{key}'")
        svm_type, kernel = head["svm_type"], head["kernel_type"]
        uses = {"degree": kernel == "polynomial", "gamma": kernel in ("polynomial", "rbf", "sigmoid"),
                "coef0": kernel in ("polynomial", "sigmoid")}
        for key, used in uses.items():
            if used and key not in head:
                raise bad(sv_line, f"the header has no '{key}' (the {kernel} kernel uses it)")
            if not used and key in head:
                raise bad(where[key], f"'{key}' for the {kernel} kernel, which has none")
        k, l = head["nr_class"], head["total_sv"]
        classification = svm_type in CLASSIFICATION
        if not classification and k != 2:
            raise bad(where["nr_class"], f"nr_class {k} for {svm_type}, whose models have nr_class 2")
        n_pairs = k * (k - 1) // 2
        m = max(k - 1, 0)
        # every SV line needs at least two bytes per coefficient ("0 ") and a newline: check before allocating
        if l * (2 * m + 1) > size:
            raise bad(where["total_sv"], f"truncated model file: {l} support vectors with {m} coefficients each "
                                         f"cannot fit in {size} bytes")

        def count(key, n, what):
            if key in head and len(head[key]) != n:
                raise bad(where[key], f"'{key}' lists {len(head[key])} values for {what} ({n} expected)")

        count("rho", n_pairs if classification else 1, f"nr_class {k}")
        allowed = {"c_svc": ("label", "nr_sv", "probA", "probB"), "nu_svc": ("label", "nr_sv", "probA", "probB"),
                   "one_class": ("prob_density_marks",), "epsilon_svr": ("probA",), "nu_svr": ("probA",)}[svm_type]
        for key in ("label", "nr_sv", "probA", "probB", "prob_density_marks"):
            if key in head and key not in allowed:
                raise bad(where[key], f"'{key}' in a {svm_type} model")
        if classification:
            for key in ("label", "nr_sv"):
                if key not in head:
                    raise bad(sv_line, f"the header has no '{key}' line (a {svm_type} model needs it)")
                count(key, k, f"nr_class {k}")
            if ("probA" in head) != ("probB" in head):
                key = "probA" if "probA" in head else "probB"
                raise bad(where[key], "a classification model has probA and probB, or neither")
            count("probA", n_pairs, f"nr_class {k}")
            count("probB", n_pairs, f"nr_class {k}")
            if sum(head["nr_sv"]) != l:
                raise bad(where["nr_sv"], f"'nr_sv' sums to {sum(head['nr_sv'])}, not total_sv {l}")
        else:
            count("probA", 1, svm_type)
            count("prob_density_marks", NR_MARKS, "a one-class model")
        # the SV lines in C (cext/_libsvm.pyx parse_sv_block) from the file's bytes; when they are not exactly l
        # lines in its grammar, _sv_lines reads them, and names the error (or takes a line: its grammar is wider)
        block = src.block(first, l)
        parsed = 0 if block is None or kernel == "precomputed" else parse_sv_block(block, m, l)
        if isinstance(parsed, int):
            body = src.lines()[sv_line:]
            if len(body) != l:
                extra = body[l:] if len(body) > l else []
                if len(body) > l and all(not s.strip() for s in extra):
                    body = body[:l]
                else:
                    raise bad(sv_line + min(len(body), l) + 1,
                              f"expected {l} SV lines (total_sv), found {len(body)}")
            parsed = _sv_lines(body, sv_line, m, bad, kernel == "precomputed")
        coef, indptr, indices, values, nf = parsed
        SV = CSRDataset(np.zeros(l), indptr, indices, values, nf)
        try:
            return cls(svm_type, kernel, head.get("degree", 3), head.get("gamma", 0.0), head.get("coef0", 0.0),
                       head["rho"], coef, SV, label=head.get("label"), nSV=head.get("nr_sv"),
                       probA=head.get("probA"), probB=head.get("probB"),
                       prob_density_marks=head.get("prob_density_marks"))
        except ParameterError as exc:
            raise ModelFormatError(f"{path}:{sv_line}: {exc}") from None

    def __repr__(self):
        return (f"SVMModel({self.svm_type}, {self.kernel_type}, nr_class={self.nr_class}, "
                f"total_sv={self.total_sv})")


class NoRowsModel(BaseModel):
    """The model LIBSVM's svm_train makes of no rows, which only the leave-one-out cross-validation of a set of one
    row asks for (-v n: the fold that leaves the row out trains on nothing): no SV, no class, rho = (ub + lb) / 2
    of no variable, inf - inf: x86's NaN, its sign bit set ("-nan" in C's printf). Its decision values are 0 - rho,
    that NaN (printf_g writes a regression's figures of it "-nan", as svm-train), and so its predictions: an SVR's
    value -nan, a one-class model's -1 (nan > 0 is false), a classifier's label nan (LIBSVM's is label[0] of an
    empty array, never a class: the row counts as wrong). It has no file (save refuses it); `meta` as the drivers'
    models have it."""

    report_style = "libsvm"
    total_sv = 0

    def __init__(self, svm_type, meta=None):
        self.svm_type = svm_type
        self.nr_class = 0 if svm_type in CLASSIFICATION else 2
        self.meta = meta or {}

    @property
    def is_regression(self):
        return self.svm_type in REGRESSION

    def decision_function(self, X, *, prepared=False, block_rows=None):
        return np.full(as_rows(X).n_rows, -np.nan)

    def labels_from_decisions(self, dec):
        dec = np.asarray(dec, dtype=np.float64).reshape(-1)
        return np.where(dec > 0, 1.0, -1.0) if self.svm_type == "one_class" else dec.copy()

    def to_text(self):
        raise ParameterError(f"a {self.svm_type} model of no rows has no model file")

    def __repr__(self):
        return f"NoRowsModel({self.svm_type})"
