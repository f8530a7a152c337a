"""The linear model in LIBLINEAR's exact text format (docs/formats.md), with prediction and strict loading, and
its hashed variant.

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
import re

import numpy as np

from .._ext._libsvm import first_control, format_weights, parse_weight_block
from .._ext._linear import decision_values
from ..errors import ModelFormatError, ParameterError, escape, quote
from ..hashing import HASH_FUNCTION, MAX_BITS, MIN_BITS, check_bits, hash_dataset
from .base import (CHUNK_VALUES, FLOAT, INT, INT64_MAX, INT64_MIN, BaseModel, ModelText, as_rows, c_float,
                   c_int_or_none, c_ints, header_int, parse_header)

SOLVER_TYPE_TABLE = ["L2R_LR", "L2R_L2LOSS_SVC_DUAL", "L2R_L2LOSS_SVC", "L2R_L1LOSS_SVC_DUAL", "MCSVM_CS",
                     "L1R_L2LOSS_SVC", "L1R_LR", "L2R_LR_DUAL", "", "", "", "L2R_L2LOSS_SVR", "L2R_L2LOSS_SVR_DUAL",
                     "L2R_L1LOSS_SVR_DUAL", "", "", "", "", "", "", "", "ONECLASS_SVM"]
SOLVER_NUMBER = {name: i for i, name in enumerate(SOLVER_TYPE_TABLE) if name}
REGRESSION = {"L2R_L2LOSS_SVR", "L2R_L2LOSS_SVR_DUAL", "L2R_L1LOSS_SVR_DUAL"}
UNLABELLED = REGRESSION | {"ONECLASS_SVM"}    # solver types whose targets are not class labels: no 'label' line
PROBABILITY = {"L2R_LR", "L2R_LR_DUAL", "L1R_LR"}
HASHED_MAGIC = "llsvm_hashed_model"
HASHED_VERSION = 1


# the line that ends a LIBLINEAR header ("w" standing alone), for the streamed reader
_HEADER_END = re.compile(rb"^[ \t\v\f\r]*w[ \t\v\f\r]*\n", re.MULTILINE)
PIECE = 1 << 20


def _weights_in_pieces(rest, f, nr_w, w_size):
    """W (w_size, nr_w) from `rest` and then the file f, a piece of whole lines at a time into W's rows
    (parse_weight_block); only white space may follow the w_size lines. None when anything else is there."""
    W = np.empty((w_size, nr_w), np.float64)
    row, buf, eof = 0, rest, False
    while row < w_size:
        if not eof:
            more = f.read(PIECE)
            eof = not more
            buf += more
        cut = buf.rfind(b"\n") + 1
        if eof and cut < len(buf):
            buf += b"\n"               # the last line without its newline
            cut = len(buf)
        if cut == 0:
            if eof:
                return None
            continue                    # a line longer than a piece: read on
        piece, buf = buf[:cut], buf[cut:]
        k = piece.count(b"\n")
        if row + k > w_size:            # the lines after the weights: back to buf
            pos = 0
            for _ in range(w_size - row):
                pos = piece.find(b"\n", pos) + 1
            piece, buf, k = piece[:pos], piece[pos:] + buf, w_size - row
        if first_control(piece) >= 0 or isinstance(parse_weight_block(piece, nr_w, k, W[row:row + k]), int):
            return None
        row += k
        if eof and not buf and row < w_size:
            return None
    while True:                         # white space only after the weights
        if buf.translate(None, b" \t\n\v\f\r"):
            return None
        if eof:
            return W
        buf = f.read(PIECE)
        eof = not buf


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
        rows = as_rows(X)
        return rows if self.hash_bits is None else hash_dataset(rows, self.hash_bits)

    def decision_function(self, X, *, prepared=False):
        """Decision values, shape (n_rows,) when nr_w == 1, else (n_rows, nr_w). X: dataset, scipy or dense.

        A hashed model hashes X first, unless `prepared` says X already went through prepare().
        """
        rows = as_rows(X) if prepared else self.prepare(X)
        out = np.empty((rows.n_rows, self.nr_w), np.float64)
        if rows.n_rows:
            decision_values(rows.row_view(), self.W, self.nr_feature, self.bias, out)
        if self.solver_type == "ONECLASS_SVM":
            out -= self.rho or 0.0
        return out[:, 0] if self.nr_w == 1 else out

    def labels_from_decisions(self, dec):
        """LIBLINEAR's rule: two classes by the sign of the single value, else the first largest value; no class (a
        model of no rows: a fold of leave-one-out on one row) predicts nan, never a label (LIBLINEAR's label[0] of
        an empty array)."""
        dec = np.asarray(dec)
        if self.is_regression:
            return dec.reshape(-1).astype(np.float64)
        if self.solver_type == "ONECLASS_SVM":
            return np.where(dec.reshape(-1) > 0, 1.0, -1.0)
        if self.nr_class == 0:
            return np.full(dec.shape[0], np.nan)
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
        return b"".join(self.text_chunks()).decode("ascii")

    def text_chunks(self):
        """LIBLINEAR's save_model text: the header, then "%.17g " per weight and a newline per feature (C's
        printf, cext/_libsvm.pyx format_weights), CHUNK_VALUES weights at a time."""
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
        yield ("\n".join(lines) + "\n").encode("ascii")
        W = np.ascontiguousarray(self.W, dtype=np.float64)
        step = max(1, CHUNK_VALUES // max(W.shape[1], 1))
        for r in range(0, W.shape[0], step):
            yield format_weights(W, r, min(r + step, W.shape[0]))

    @staticmethod
    def header_fields(nr_feature=None):
        """The LIBLINEAR header's keys and their readers (llsvm.models.base.parse_header); nr_feature: the value
        required (a hashed model's 2^bits)."""
        def solver_type(key, args, fail):
            if len(args) != 1 or args[0] not in SOLVER_NUMBER:
                raise fail(f"unknown solver type {quote(' '.join(args))}")
            return args[0]

        def features(key, args, fail):
            v = header_int(0)(key, args, fail)
            if nr_feature is not None and v != nr_feature:
                raise fail(f"a hashed model has nr_feature 2^bits = {nr_feature}, not {v}")
            return v

        def finite(key, args, fail):
            try:
                if len(args) != 1:
                    raise ValueError
                v = c_float(args[0])
                if v != v or v in (float("inf"), float("-inf")):
                    raise ValueError
            except ValueError:
                raise fail(f"'{key}' takes one finite number") from None
            return v

        def labels(key, args, fail):
            return c_ints(args, INT64_MIN, lambda tok: fail(f"labels must be integers (found {quote(tok)})"),
                          lambda tok: fail(f"label {escape(tok)} is beyond the int64 range (llsvm's class labels are "
                                           f"64-bit integers)"), high=INT64_MAX)

        return {"solver_type": solver_type, "nr_class": header_int(1), "nr_feature": features, "bias": finite,
                "rho": finite, "label": labels}

    @classmethod
    def parse_hashed(cls, path, text, size):
        """The two hashed-model lines, then LIBLINEAR's format over 2^bits features (file line numbers kept)."""
        def bad(lineno, msg):
            return ModelFormatError(f"{path}:{lineno}: {msg}")

        src = ModelText(text)
        lines = [line for _, line in zip(range(2), src)]
        parts = lines[0].split()
        if len(parts) != 2 or not INT.fullmatch(parts[1]):
            raise bad(1, f"expected '{HASHED_MAGIC} {HASHED_VERSION}', found {quote(lines[0].strip())}")
        if c_int_or_none(parts[1]) != HASHED_VERSION:
            raise bad(1, f"unsupported hashed model version {escape(parts[1])} (this llsvm reads version "
                         f"{HASHED_VERSION})")
        parts = lines[1].split() if len(lines) > 1 else []
        if len(parts) != 3 or parts[0] != "hash":
            found = lines[1].strip() if len(lines) > 1 else ""
            raise bad(2, f"expected 'hash {HASH_FUNCTION} BITS', found {quote(found)}")
        if parts[1] != HASH_FUNCTION:
            raise bad(2, f"unknown hash function {quote(parts[1])} (this llsvm knows {quote(HASH_FUNCTION)})")
        bits = c_int_or_none(parts[2])
        if bits is None or not MIN_BITS <= bits <= MAX_BITS:
            raise bad(2, f"hash bits must be an integer in {MIN_BITS}..{MAX_BITS}, found {quote(parts[2])}")
        model = cls.parse_liblinear(path, ModelText(src.data, src.pos), size, line_offset=2, nr_feature=1 << bits)
        model.hash_bits = bits
        return model

    @classmethod
    def read_streamed(cls, path, head, f, size):
        """A LIBLINEAR model read in pieces (llsvm.models.load_model, for a large file): `head` the file's first
        bytes, f the file after them; the weights go straight into W, a MB of text at a time, so the file is never
        held whole. None when the file is not plainly one (the header not in `head`, a line outside the C
        reader's grammar, a character to refuse...): the caller then reads it whole, which names any error."""
        end = _HEADER_END.search(head)
        if end is None:
            return None
        return cls.parse_liblinear(path, ModelText(head[:end.end()]), size, stream=(head[end.end():], f))

    @classmethod
    def parse_liblinear(cls, path, text, size, line_offset=0, nr_feature=None, stream=None):
        """LIBLINEAR's format; errors name line `line_offset` + the line in `text`. nr_feature: the value required.
        Text from the file is quoted with llsvm.errors.quote (control characters escaped). stream: (the bytes after
        the header, the file after them) to read the weights in pieces (read_streamed: None if they are not
        plainly w_size weight lines)."""
        def bad(lineno, msg):
            return ModelFormatError(f"{path}:{lineno + line_offset}: {msg}")

        src = text if isinstance(text, ModelText) else ModelText(text)
        head, where, lineno = parse_header(src, "w", cls.header_fields(nr_feature), bad)
        first = src.pos
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
        if stream is not None:
            W = _weights_in_pieces(*stream, nr_w, w_size)
            return None if W is None else cls(solver, nr_class, label, nr_feature, bias, W, rho=head.get("rho"))
        # the weight lines in C (cext/_libsvm.pyx parse_weight_block) from the file's bytes; the loop below reads
        # them when they are not exactly w_size lines in its grammar, and names the error
        block = src.block(first, w_size)
        W = 0 if block is None else parse_weight_block(block, nr_w, w_size)
        if not isinstance(W, int):
            return cls(solver, nr_class, label, nr_feature, bias, W, rho=head.get("rho"))
        body = src.lines()[lineno:]
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
                W[i] = [c_float(p) for p in parts]
            except ValueError:
                found = next(p for p in parts if not FLOAT.fullmatch(p))
                raise bad(lineno + 1 + i, f"a weight is not a number (found {quote(found)})") from None
        if not np.isfinite(W).all():
            raise bad(lineno + 1 + int(np.argmax(~np.isfinite(W).all(axis=1))), "a weight is NaN or infinite")
        return cls(solver, nr_class, label, nr_feature, bias, W, rho=head.get("rho"))

    def __repr__(self):
        hashed = "" if self.hash_bits is None else f", hash_bits={self.hash_bits}"
        return (f"Model({self.solver_type}, nr_class={self.nr_class}, nr_feature={self.nr_feature}, "
                f"bias={self.bias:g}{hashed})")
