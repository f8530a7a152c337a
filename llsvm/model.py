"""Models: the interface every model kind offers (BaseModel), loading by the file's first line, and the linear model
in LIBLINEAR's exact text format (docs/formats.md), with prediction and strict loading.

Model files are told apart by their first line: LIBLINEAR's `solver_type ...` (a linear model), `llsvm_hashed_model`
(a linear model over hashed features), LIBSVM's `svm_type ...` (a kernel model: `svm_type`, `kernel_type`, ...,
`SV`; llsvm.svm_model) and, reserved for the tree solvers, `llsvm_tree_model` (our own tree format). `Model.load` /
`load_model` read any of them; llsvm-predict uses only the BaseModel interface.

The linear format:

    solver_type L2R_L1LOSS_SVC_DUAL
    nr_class 2
    label 1 -1
    nr_feature 123
    bias -1
    w
    0.123 (one line per feature, then one for the bias if bias >= 0; nr_w values each, "%.17g " each)

nr_w is 1 for two classes, nr_class otherwise. Labels are integers, as LIBLINEAR stores them.

A hashed model (`hash_bits` set; llsvm.hashing, docs/formats.md section 1.2) is the same text after two lines of our
own, over the 2^B hashed features (nr_feature = 2^B); LIBLINEAR cannot read it:

    llsvm_hashed_model 1
    hash fmix32-signed 18
    solver_type L2R_L1LOSS_SVC_DUAL
    ...
"""
import os
import re

import numpy as np

from ._ext._linear import decision_values
from .dataset import CSRDataset
from .errors import LLSVMError, ModelFormatError, ParameterError, escape, quote
from .fileutil import atomic_output
from .hashing import HASH_FUNCTION, MAX_BITS, MIN_BITS, check_bits, hash_dataset

SOLVER_TYPE_TABLE = ["L2R_LR", "L2R_L2LOSS_SVC_DUAL", "L2R_L2LOSS_SVC", "L2R_L1LOSS_SVC_DUAL", "MCSVM_CS",
                     "L1R_L2LOSS_SVC", "L1R_LR", "L2R_LR_DUAL", "", "", "", "L2R_L2LOSS_SVR", "L2R_L2LOSS_SVR_DUAL",
                     "L2R_L1LOSS_SVR_DUAL", "", "", "", "", "", "", "", "ONECLASS_SVM"]
SOLVER_NUMBER = {name: i for i, name in enumerate(SOLVER_TYPE_TABLE) if name}
REGRESSION = {"L2R_L2LOSS_SVR", "L2R_L2LOSS_SVR_DUAL", "L2R_L1LOSS_SVR_DUAL"}
UNLABELLED = REGRESSION | {"ONECLASS_SVM"}    # solver types whose targets are not class labels: no 'label' line
PROBABILITY = {"L2R_LR", "L2R_LR_DUAL", "L1R_LR"}
INT32_MAX = 2147483647
HASHED_MAGIC = "llsvm_hashed_model"
HASHED_VERSION = 1
# numbers as C's strtod/strtol (and so LIBLINEAR's fscanf) read them; Python-only forms like 1_5 are refused
_FLOAT = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?|[+-]?(inf|infinity|nan)", re.IGNORECASE)
_INT = re.compile(r"[+-]?\d+")
_CONTROL = re.compile(r"[^\t\n\v\f\r\x20-\x7e]")
INT32_MIN = -2147483648


def _c_float(tok):
    if not _FLOAT.fullmatch(tok):
        raise ValueError(tok)
    return float(tok)


def _c_int(tok):
    if not _INT.fullmatch(tok):
        raise ValueError(tok)
    return int(tok)


def _as_rows(X):
    """A CSRDataset-like object with indptr/indices/values from a dataset, scipy matrix or dense array."""
    if hasattr(X, "as_view"):
        return X.as_view()
    import scipy.sparse as sp

    return CSRDataset.from_csr(sp.csr_matrix(X), np.zeros(X.shape[0]))


class NonFiniteModelError(LLSVMError):
    """A model holding a number that is not finite (NaN or infinite), refused by `save` before anything is written:
    its reader, and so llsvm-predict, would refuse the file. `what` names the value ("the weight of feature 3 of
    class 1"), `value` is it; `hint` (optional) says which option to change."""

    def __init__(self, what, value, hint=None):
        self.what, self.value, self.hint = what, value, hint
        super().__init__(f"the model is not written: {what} is {value!r}, not a finite number, which llsvm-predict "
                         f"would refuse" + (f"; {hint}" if hint else ""))

    def with_hint(self, hint):
        return NonFiniteModelError(self.what, self.value, hint)


class BaseModel:
    """What llsvm-predict and the library need of any model, linear, kernel or tree.

    `label` (int64 array, None for regression), `nr_class`, `is_regression`, `supports_probability`;
    `prepare(X)`: the rows as the model reads them (a hashed model hashes them), once per block;
    `decision_function(X, prepared=False)`: (n_rows,) or (n_rows, nr_w) values;
    `labels_from_decisions(dec)`, `probabilities_from_decisions(dec)`, `labels_and_probabilities(dec)` (the -b 1
    labels, which a kernel model takes from the probabilities), `probability_header()`, `predict(X)`,
    `predict_probability(X)`; `report_style` ("liblinear" or "libsvm": llsvm-predict's summary lines) and
    `probability_refusal` (why -b 1 is refused);
    `save(path)` (atomic, refused with NonFiniteModelError when a value is not finite: `finite_values()`) and
    `to_text()`.
    """

    label = None
    nr_class = 0
    supports_probability = False
    is_regression = False
    report_style = "liblinear"      # llsvm-predict's summary lines: LIBLINEAR's predict or LIBSVM's svm-predict
    probability_refusal = "probability output is only supported for logistic regression"

    def prepare(self, X):
        return _as_rows(X)

    def predict(self, X):
        """Predicted labels (float64, as LIBLINEAR and LIBSVM return them)."""
        return self.labels_from_decisions(self.decision_function(X))

    def probabilities_from_decisions(self, dec):
        raise ParameterError("probability output is only supported for logistic regression")

    def labels_and_probabilities(self, dec):
        """(labels, probabilities) of the -b 1 output from decision values."""
        return self.labels_from_decisions(dec), self.probabilities_from_decisions(dec)

    def probability_header(self):
        """The first line of a -b 1 output file."""
        return "labels" + "".join(f" {int(v)}" for v in self.label)

    def predict_probability(self, X):
        """(labels, probabilities (n_rows, nr_class)) where the model has them (LIBLINEAR's -b 1)."""
        return self.labels_and_probabilities(self.decision_function(X))

    def finite_values(self):
        """(describe, values) for every number of the model's file that its reader requires finite: `values` a
        number or an array, `describe(index)` the name of its entry at `index` (a tuple, () for a number). This
        default serves the tree models (llsvm/tree_model.py): every node's b and w, and the RBF node's values."""
        for t in getattr(self, "trees", ()):
            for k, n in enumerate(t.nodes):
                where = f"node {k + 1} of the tree of the pair ({t.a}, {t.b})"
                yield (lambda i, where=where: f"b of {where}"), n.b
                yield (lambda i, n=n, where=where: f"the weight of feature {int(n.idx[i[0]]) + 1} in {where}"), n.val
        rbf = getattr(self, "rbf", None)
        if rbf is not None:
            for describe, values in rbf.finite_values():
                yield (lambda i, describe=describe: f"{describe(i)} of the RBF node"), values

    def check_finite(self):
        """Raise NonFiniteModelError naming the first value of finite_values() that is not a finite number."""
        for describe, values in self.finite_values():
            a = np.asarray(values, dtype=np.float64)
            if a.ndim == 0:
                if not np.isfinite(a):
                    raise NonFiniteModelError(describe(()), float(a))
                continue
            ok = np.isfinite(a)
            if not ok.all():
                at = tuple(int(v) for v in np.argwhere(~ok)[0])
                raise NonFiniteModelError(describe(at), float(a[at]))

    def save(self, path):
        """Write the model atomically in its format; a model with a value that is not finite is refused first
        (NonFiniteModelError), so no file that its own reader would refuse is ever written."""
        self.check_finite()
        text = self.to_text()
        with atomic_output(os.fspath(path), "w") as f:
            f.write(text)

    @classmethod
    def load(cls, path):
        """Read any model file, the kind chosen by its first line; anything malformed raises ModelFormatError."""
        path = os.fspath(path)
        try:
            size = os.path.getsize(path)
            with open(path, "rb") as f:
                data = f.read()
        except OSError as exc:
            raise ModelFormatError(f"can't open model file {path}: {exc.strerror}") from None
        try:
            text = data.decode("ascii")
        except UnicodeDecodeError as exc:
            raise ModelFormatError(f"{path}: not a model file (non-ASCII byte at offset {exc.start})") from None
        # a model file is printable ASCII and C's white space (what LIBLINEAR's fscanf separates on); Python's
        # split() would also separate on \x1c-\x1f, so any other control character is refused here, once
        odd = _CONTROL.search(text)
        if odd is not None:
            lineno = text.count("\n", 0, odd.start()) + 1
            raise ModelFormatError(f"{path}:{lineno}: a control character {quote(odd.group())} in the model file")
        first = text.split("\n", 1)[0].split()
        reader = MODEL_FORMATS.get(first[0] if first else None, Model._parse_liblinear)
        return reader(path, text, size)


def _not_yet(kind):
    def reader(path, text, size):
        raise ModelFormatError(f"{path}: a {kind} model file: this llsvm does not read {kind} models yet")
    return reader


class Model(BaseModel):
    """A linear model: W has shape (nr_feature + (bias >= 0), nr_w).

    hash_bits: None for an ordinary model; B for a model over hashed features (nr_feature must be 2^B), whose
    prediction hashes its input first (llsvm.hashing.hash_dataset).
    """

    def __init__(self, solver_type, nr_class, label, nr_feature, bias, W, rho=None, meta=None, hash_bits=None):
        if solver_type not in SOLVER_NUMBER:
            raise ParameterError(f"unknown solver_type {solver_type}")
        self.hash_bits = None if hash_bits is None else check_bits(hash_bits)
        if self.hash_bits is not None and int(nr_feature) != 1 << self.hash_bits:
            raise ParameterError(f"a hashed model with {self.hash_bits} bits has nr_feature {1 << self.hash_bits}, "
                                 f"not {nr_feature}")
        self.solver_type = solver_type
        self.nr_class = int(nr_class)
        self.label = None if label is None else np.asarray(label, dtype=np.int64)
        self.nr_feature = int(nr_feature)
        self.bias = float(bias)
        self.W = np.ascontiguousarray(W, dtype=np.float64)
        self.rho = rho
        self.meta = meta or {}
        w_size = self.nr_feature + (1 if self.bias >= 0 else 0)
        if self.W.shape != (w_size, self.nr_w):
            raise ParameterError(f"W has shape {self.W.shape}, expected {(w_size, self.nr_w)}")

    @property
    def nr_w(self):
        return 1 if self.nr_class == 2 and self.solver_type != "MCSVM_CS" else self.nr_class

    @property
    def is_regression(self):
        return self.solver_type in REGRESSION

    @property
    def supports_probability(self):
        return self.solver_type in PROBABILITY

    @property
    def w(self):
        """The weights as LIBLINEAR's flat array w[feature * nr_w + class]."""
        return self.W.ravel()

    def finite_values(self):
        """bias, rho and every weight (BaseModel.finite_values)."""
        yield (lambda i: "the bias"), self.bias
        if self.rho is not None:
            yield (lambda i: "rho"), self.rho

        def weight(i):
            row, col = i
            name = "the bias weight" if row >= self.nr_feature else f"the weight of feature {row + 1}"
            if self.nr_w > 1 and self.label is not None:
                name += f" of class {int(self.label[col])}"
            return name
        yield weight, self.W

    # -- prediction ---------------------------------------------------------------------------------------------
    def prepare(self, X):
        """X as rows over the model's features: hashed for a hashed model (else X's rows as they are)."""
        rows = _as_rows(X)
        return rows if self.hash_bits is None else hash_dataset(rows, self.hash_bits)

    def decision_function(self, X, *, prepared=False):
        """Decision values, shape (n_rows,) when nr_w == 1, else (n_rows, nr_w). X: dataset, scipy or dense.

        A hashed model hashes X first, unless `prepared` says X already went through prepare().
        """
        rows = _as_rows(X) if prepared else self.prepare(X)
        out = np.empty((rows.n_rows, self.nr_w), np.float64)
        if rows.n_rows:
            decision_values(rows.row_view(), self.W, self.nr_feature, self.bias, out)
        if self.solver_type == "ONECLASS_SVM":
            out -= self.rho or 0.0
        return out[:, 0] if self.nr_w == 1 else out

    def labels_from_decisions(self, dec):
        """LIBLINEAR's rule: two classes by the sign of the single value, else the first largest value."""
        dec = np.asarray(dec)
        if self.is_regression:
            return dec.reshape(-1).astype(np.float64)
        if self.solver_type == "ONECLASS_SVM":
            return np.where(dec.reshape(-1) > 0, 1.0, -1.0)
        if self.nr_class == 2 and self.solver_type != "MCSVM_CS":
            return np.where(dec.reshape(-1) > 0, self.label[0], self.label[1]).astype(np.float64)
        return self.label[np.argmax(dec.reshape(dec.shape[0], -1), axis=1)].astype(np.float64)

    def probabilities_from_decisions(self, dec):
        """Probabilities (n_rows, nr_class) from decision values, for logistic-regression models."""
        if self.solver_type not in PROBABILITY:
            raise ParameterError("probability output is only supported for logistic regression")
        dec = np.asarray(dec).reshape(-1, self.nr_w)
        p = 1.0 / (1.0 + np.exp(-dec))
        if self.nr_class == 2:
            p = np.column_stack([p[:, 0], 1.0 - p[:, 0]])
        else:
            p = p / p.sum(axis=1, keepdims=True)
        return p

    # -- files --------------------------------------------------------------------------------------------------
    def to_text(self):
        lines = []
        if self.hash_bits is not None:
            lines += [f"{HASHED_MAGIC} {HASHED_VERSION}", f"hash {HASH_FUNCTION} {self.hash_bits}"]
        lines += [f"solver_type {self.solver_type}", f"nr_class {self.nr_class}"]
        if self.label is not None:
            lines.append("label" + "".join(f" {int(v)}" for v in self.label))
        lines.append(f"nr_feature {self.nr_feature}")
        lines.append(f"bias {self.bias:.17g}")
        if self.rho is not None:
            lines.append(f"rho {self.rho:.17g}")
        lines.append("w")
        head = "\n".join(lines) + "\n"
        fmt = "%.17g " * self.nr_w + "\n"
        body = "".join(fmt % tuple(row) for row in self.W.tolist())
        return head + body

    @classmethod
    def _parse_hashed(cls, path, text, size):
        """The two hashed-model lines, then LIBLINEAR's format over 2^bits features (file line numbers kept)."""
        def bad(lineno, msg):
            return ModelFormatError(f"{path}:{lineno}: {msg}")

        lines = text.split("\n", 2)
        parts = lines[0].split()
        if len(parts) != 2 or not _INT.fullmatch(parts[1]):
            raise bad(1, f"expected '{HASHED_MAGIC} {HASHED_VERSION}', found {quote(lines[0].strip())}")
        if int(parts[1]) != HASHED_VERSION:
            raise bad(1, f"unsupported hashed model version {parts[1]} (this llsvm reads version {HASHED_VERSION})")
        parts = lines[1].split() if len(lines) > 1 else []
        if len(parts) != 3 or parts[0] != "hash":
            found = lines[1].strip() if len(lines) > 1 else ""
            raise bad(2, f"expected 'hash {HASH_FUNCTION} BITS', found {quote(found)}")
        if parts[1] != HASH_FUNCTION:
            raise bad(2, f"unknown hash function {quote(parts[1])} (this llsvm knows {quote(HASH_FUNCTION)})")
        if not _INT.fullmatch(parts[2]) or not MIN_BITS <= int(parts[2]) <= MAX_BITS:
            raise bad(2, f"hash bits must be an integer in {MIN_BITS}..{MAX_BITS}, found {quote(parts[2])}")
        bits = int(parts[2])
        rest = lines[2] if len(lines) > 2 else ""
        model = cls._parse_liblinear(path, rest, size, line_offset=2, nr_feature=1 << bits)
        model.hash_bits = bits
        return model

    @classmethod
    def _parse_liblinear(cls, path, text, size, line_offset=0, nr_feature=None):
        """LIBLINEAR's format; errors name line `line_offset` + the line in `text`. nr_feature: the value required.
        Text from the file is quoted with llsvm.errors.quote (control characters escaped)."""
        def bad(lineno, msg):
            return ModelFormatError(f"{path}:{lineno + line_offset}: {msg}")

        lines = text.split("\n")
        head = {}
        where = {}                      # header key -> its line
        lineno = 0
        for lineno, line in enumerate(lines, 1):
            parts = line.split()
            if not parts:
                raise bad(lineno, "empty line in the model header")
            key = parts[0]
            if key == "w":
                if len(parts) != 1:
                    raise bad(lineno, "'w' must stand alone on its line")
                break
            if key in head:
                raise bad(lineno, f"'{key}' given twice")
            where[key] = lineno
            if key == "solver_type":
                if len(parts) != 2 or parts[1] not in SOLVER_NUMBER:
                    raise bad(lineno, f"unknown solver type {quote(' '.join(parts[1:]))}")
                head[key] = parts[1]
            elif key in ("nr_class", "nr_feature"):
                if len(parts) != 2:
                    raise bad(lineno, f"'{key}' takes one integer")
                try:
                    v = _c_int(parts[1])
                except ValueError:
                    raise bad(lineno, f"'{key}' is not an integer: {quote(parts[1])}") from None
                if v < (1 if key == "nr_class" else 0) or v > INT32_MAX:
                    raise bad(lineno, f"'{key}' out of range: {v}")
                if key == "nr_feature" and nr_feature is not None and v != nr_feature:
                    raise bad(lineno, f"a hashed model has nr_feature 2^bits = {nr_feature}, not {v}")
                head[key] = v
            elif key in ("bias", "rho"):
                try:
                    if len(parts) != 2:
                        raise ValueError
                    v = _c_float(parts[1])
                    if v != v or v in (float("inf"), float("-inf")):
                        raise ValueError
                except ValueError:
                    raise bad(lineno, f"'{key}' takes one finite number") from None
                head[key] = v
            elif key == "label":
                try:
                    head[key] = [_c_int(p) for p in parts[1:]]
                except ValueError:
                    found = next(p for p in parts[1:] if not _INT.fullmatch(p))
                    raise bad(lineno, f"labels must be integers (found {quote(found)})") from None
                beyond = [v for v in head[key] if not INT32_MIN <= v <= INT32_MAX]
                if beyond:
                    raise bad(lineno, f"label {beyond[0]} is beyond the int range (LIBLINEAR's labels are C ints)")
            else:
                raise bad(lineno, f"unknown text in model file: [{escape(key)}]")
        else:
            raise bad(lineno, "no 'w' line: truncated model file")
        for key in ("solver_type", "nr_class", "nr_feature", "bias"):
            if key not in head:
                raise bad(lineno, f"the header has no '{key}'")
        solver, nr_class, nr_feature, bias = head["solver_type"], head["nr_class"], head["nr_feature"], head["bias"]
        regression = solver in UNLABELLED
        label = head.get("label")
        if regression and nr_class > 2:
            raise bad(where["nr_class"], f"nr_class {nr_class} for {solver}, whose models have nr_class 2")
        if not regression:
            if label is None:
                raise bad(lineno, "the header has no 'label' line")
            if len(label) != nr_class:
                raise bad(where["label"], f"'label' lists {len(label)} labels for nr_class {nr_class}")
        nr_w = 1 if nr_class == 2 and solver != "MCSVM_CS" else nr_class
        w_size = nr_feature + (1 if bias >= 0 else 0)
        # every weight needs at least two bytes ("0 "): check the size before allocating
        if w_size * nr_w * 2 > size:
            raise bad(lineno, f"truncated model file: {w_size} x {nr_w} weights cannot fit in {size} bytes")
        body = lines[lineno:]
        while body and body[-1].strip() == "":
            body.pop()
        if len(body) != w_size:
            raise bad(lineno + min(len(body), w_size) + 1,
                      f"expected {w_size} weight lines, found {len(body)}")
        W = np.empty((w_size, nr_w), np.float64)
        for i, line in enumerate(body):
            parts = line.split()
            if len(parts) != nr_w:
                raise bad(lineno + 1 + i, f"expected {nr_w} weights, found {len(parts)}")
            try:
                W[i] = [_c_float(p) for p in parts]
            except ValueError:
                found = next(p for p in parts if not _FLOAT.fullmatch(p))
                raise bad(lineno + 1 + i, f"a weight is not a number (found {quote(found)})") from None
        if not np.isfinite(W).all():
            raise bad(lineno + 1 + int(np.argmax(~np.isfinite(W).all(axis=1))), "a weight is NaN or infinite")
        return cls(solver, nr_class, label, nr_feature, bias, W, rho=head.get("rho"))

    def __repr__(self):
        hashed = "" if self.hash_bits is None else f", hash_bits={self.hash_bits}"
        return (f"Model({self.solver_type}, nr_class={self.nr_class}, nr_feature={self.nr_feature}, "
                f"bias={self.bias:g}{hashed})")


def _read_svm(path, text, size):
    """LIBSVM's kernel model (llsvm.svm_model, which imports this module)."""
    from .svm_model import SVMModel

    return SVMModel._parse(path, text, size)


def _read_tree(path, text, size):
    """llsvm's tree model of -s h1tree (llsvm.tree_model, which imports this module)."""
    from .tree_model import TreeModel

    return TreeModel._parse(path, text, size)


# first word of a model file -> its reader (LIBLINEAR's format when none matches)
MODEL_FORMATS = {
    HASHED_MAGIC: Model._parse_hashed,
    "svm_type": _read_svm,
    "llsvm_tree_model": _read_tree,
}


def load_model(path):
    """A model of any kind from its file (BaseModel.load)."""
    return BaseModel.load(path)
