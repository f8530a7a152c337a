"""What every model kind shares: the interface llsvm-predict and the library use (BaseModel), the refusal of a
model holding a number that is not finite (NonFiniteModelError), the numbers of a model file as C reads them, and
the one reader of a model file's header (`key value ...` lines up to the line that starts the body), which the
LIBLINEAR (llsvm.models.linear) and LIBSVM (llsvm.models.svm) formats both read theirs with.
"""
import os
import re
import sys

import numpy as np

from ..dataset import CSRDataset, full_rows
from ..errors import LLSVMError, ParameterError, escape, quote
from ..fileutil import atomic_output

# values per piece of a model's body formatted at a time (BaseModel.text_chunks): about 400 KB of text
CHUNK_VALUES = 1 << 14
INT32_MAX = 2147483647
INT32_MIN = -2147483648
# class labels are 64-bit integers (issue 45): written in full, read back in this range
INT64_MAX = 2 ** 63 - 1
INT64_MIN = -2 ** 63
# numbers as C's strtod/strtol (and so LIBLINEAR's fscanf) read them; Python-only forms like 1_5 are refused
FLOAT = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?|[+-]?(inf|infinity|nan)", re.IGNORECASE)
INT = re.compile(r"[+-]?\d+")


def c_float(tok):
    """A number as C's strtod reads it (ValueError otherwise)."""
    if not FLOAT.fullmatch(tok):
        raise ValueError(tok)
    return float(tok)


class BeyondInt(ValueError):
    """c_int's refusal of an integer with more digits than any C integer holds."""


def c_int(tok):
    """An integer as C's strtol reads it (ValueError otherwise): any number of leading zeros, and BeyondInt (a
    ValueError) for more than 19 digits after them, beyond every C integer type (Python's int() itself refuses
    more than 4,300 digits)."""
    if not INT.fullmatch(tok):
        raise ValueError(tok)
    digits = tok.lstrip("+-").lstrip("0")
    if len(digits) > 19:
        raise BeyondInt(tok)
    v = int(digits) if digits else 0
    return -v if tok.startswith("-") else v


def c_int_or_none(tok):
    """c_int(tok), or None when tok is no integer or one beyond every C integer."""
    try:
        return c_int(tok)
    except ValueError:
        return None


def int64_labels(label):
    """A model's class labels as an int64 array; ParameterError when one is not an integer within the int64 range
    (class labels are 64-bit integers: issue 45)."""
    out = np.asarray(label)
    if out.dtype.kind == "f":
        ok = bool((np.isfinite(out) & (out == np.trunc(out)) & (np.abs(out) < 2.0 ** 63)).all())
    else:
        try:
            ok = out.dtype.kind in "iubO" and all(INT64_MIN <= int(v) <= INT64_MAX for v in out.reshape(-1).tolist())
        except (TypeError, ValueError):
            ok = False
    if not ok:
        raise ParameterError("class labels must be integers within the int64 range")
    return out.astype(np.int64).reshape(-1)


def c_ints(args, low, not_int, beyond, high=INT32_MAX):
    """The tokens `args` as integers in low..high (C ints by default; class labels: int64). The first token that is
    not an integer is refused first, not_int(token), then the first out of the range, beyond(token): both
    ModelFormatErrors naming the token as it is written (quote it with llsvm.errors.quote or escape, which cut a
    long one)."""
    found = next((p for p in args if not INT.fullmatch(p)), None)
    if found is not None:
        raise not_int(found)
    vals = []
    for p in args:
        try:
            v = c_int(p)
        except BeyondInt:
            raise beyond(p) from None
        if not low <= v <= high:
            raise beyond(p)
        vals.append(v)
    return vals


def as_rows(X, full=False):
    """A CSRDataset-like object with indptr/indices/values from a dataset, scipy matrix or dense array (`full`: a
    dense array's every entry held, zeros too: a precomputed kernel's rows, dataset.full_rows)."""
    if hasattr(X, "as_view"):
        return X.as_view()
    import scipy.sparse as sp

    if full and not sp.issparse(X):
        return full_rows(np.atleast_2d(X))
    return CSRDataset.from_csr(sp.csr_matrix(X), np.zeros(X.shape[0]))


# -- the model header -----------------------------------------------------------------------------------------------
def parse_header(lines, end, fields, bad, *, truncated_after=False):
    """The header of a model file: `key value ...` lines, each key once, up to the line `end` standing alone.

    lines: the file's lines (numbered from 1); fields: {key: read(key, args, fail)}, `args` the line's tokens after
    the key, `fail(msg)` the ModelFormatError to raise for that line; read returns the key's value. bad(lineno,
    msg): the ModelFormatError naming a line. An empty line, a key given twice, a key not in `fields` and text
    after `end` are refused at their line; no `end` line at all at the last line (truncated_after: at the line
    after it). Returns (head {key: value}, where {key: its line}, the line of `end`)."""
    head, where = {}, {}
    lineno = 0
    for lineno, line in enumerate(lines, 1):
        parts = line.split()
        if not parts:
            raise bad(lineno, "empty line in the model header")
        key, args = parts[0], parts[1:]
        if key == end:
            if args:
                raise bad(lineno, f"'{end}' must stand alone on its line")
            return head, where, lineno
        if key in head:
            raise bad(lineno, f"'{key}' given twice")
        where[key] = lineno
        read = fields.get(key)
        if read is None:
            raise bad(lineno, f"unknown text in model file: [{escape(key)}]")
        head[key] = read(key, args, lambda msg, lineno=lineno: bad(lineno, msg))
    raise bad(lineno + 1 if truncated_after else lineno, f"no '{end}' line: truncated model file")


_BLANK_BYTES = frozenset(b" \t\n\v\f\r")


class ModelText:
    """A model file's bytes (or text) read as lines on demand, so that a large model is held once, as its bytes:
    iterating yields the lines from `start` as text.split("\n") gives them (without the empty string after a final
    newline when drop_final_empty), `pos` then being the offset of the line after the last one yielded; block()
    hands the body to the C readers (cext/_libsvm.pyx) without a copy; lines() splits everything from `start`, for
    the readers' token-by-token loops (the lines a C reader refuses, with their messages)."""

    def __init__(self, data, start=0, drop_final_empty=False):
        data = data.encode("ascii") if isinstance(data, str) else data
        if start > len(data):           # nothing after the lines before: one empty line, as "".split("\n")
            data, start = b"", 0
        self.data, self.start, self.pos, self.drop = data, start, start, drop_final_empty

    def __iter__(self):
        data, n = self.data, len(self.data)
        while self.pos < n or (self.pos == n and not self.drop):
            nl = data.find(b"\n", self.pos)
            end = n if nl < 0 else nl
            line = data[self.pos:end].decode("ascii")
            self.pos = end + 1
            yield line

    def lines(self):
        lines = self.data[self.start:].decode("ascii").split("\n")
        if self.drop and lines[-1] == "":
            lines.pop()
        return lines

    def block(self, first, n):
        """The n lines from offset `first`, each with its newline, when the file holds nothing after them but white
        space; else None (the caller's line loop then counts and names what is there)."""
        data = self.data
        q = len(data)
        while q > first and data[q - 1] in _BLANK_BYTES:
            q -= 1
        if q <= first:
            return b"" if n == 0 else None
        nl = data.find(b"\n", q)
        end = len(data) if nl < 0 else nl + 1
        if data.count(b"\n", first, end) + (nl < 0) != n:
            return None
        return memoryview(data)[first:end] if nl >= 0 else data[first:] + b"\n"


def header_int(low):
    """The header field reader (parse_header) of one integer in low..INT32_MAX."""
    def read(key, args, fail):
        if len(args) != 1:
            raise fail(f"'{key}' takes one integer")
        return c_ints(args, low, lambda tok: fail(f"'{key}' is not an integer: {quote(tok)}"),
                      lambda tok: fail(f"'{key}' out of range: {escape(tok)}"))[0]
    return read


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
        return as_rows(X)

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
        default serves the tree models (llsvm/models/tree.py): every node's b and w, and the RBF node's values."""
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

    def text_chunks(self):
        """The model file as ASCII bytes in pieces (save writes them one by one, so that a large model's text is
        never held whole); by default to_text() in one piece."""
        yield self.to_text().encode("ascii")

    def save(self, path):
        """Write the model atomically in its format; a model with a value that is not finite is refused first
        (NonFiniteModelError), so no file that its own reader would refuse is ever written."""
        self.check_finite()
        path = os.fspath(path)
        if path == "-":
            sys.stdout.flush()              # the text written before goes first
        with atomic_output(path, "wb") as f:
            for chunk in self.text_chunks():
                f.write(chunk)
