"""llsvm's tree models (`-s h1tree`): one decision list of H1-SVM nodes per pair of classes (one-vs-one), each
ending in a leaf label or in the RBF node, a LIBSVM model embedded in the file (docs/formats.md, "Tree models").

    llsvm_tree_model 1
    solver_type H1_TREE
    nr_class 3
    label 1 2 3
    nr_feature 256
    bias -1
    multiclass ovo
    h1_c inf                                   inf or kappa (C = kappa m_s / m_h)
    nr_tree 3                                  nr_class (nr_class - 1) / 2, in LIBSVM's pair order
    tree 1 2 nr_node 2 final leaf 1            final leaf LABEL, or final rbf
    node hard 1 b -0.5 w 3 4:0.25 17:-1 200:3  the hard label, b, and w's non-zeros (1-based, ascending)
    node hard 2 b 1.25 w 0
    tree 1 3 nr_node 0 final rbf
    ...
    rbf_model                                  present when a tree ends in rbf: a LIBSVM model follows verbatim
    svm_type c_svc
    ...

A row goes down the list of its pair (a, b): at a node with hard label h the decision value is f = w.x + b
(oriented toward a: a node with h = a keeps its hard rows at f >= 1, one with h = b at f <= -1), and the node
answers the soft label when f says so strictly (a node whose hard label is a answers b when f < 0; one whose hard
label is b answers a when f > 0); otherwise the row goes on. At the end: the leaf label, or the sign of the RBF
model's decision value for the pair. The pairs vote as LIBSVM's classes do (ties to the class listed first).
Node values are computed in C over blocks of rows, stopping at each row's answering node (cext/_h1.pyx).
"""
import math
import re

import numpy as np

from .. import memory
from ..errors import ModelFormatError, ParameterError, quote
from .base import INT32_MAX, INT64_MAX, INT64_MIN, BaseModel, as_rows, c_float, c_int, int64_labels

TREE_MAGIC = "llsvm_tree_model"
TREE_VERSION = 1
_PAIR = re.compile(r"(\d+):(.*)")


class Node:
    """One H1-SVM node: hard label, b, and w as sorted 0-based indices and values."""

    __slots__ = ("hard", "b", "idx", "val", "extra")

    def __init__(self, hard, b, idx, val, extra=None):
        self.hard = int(hard)
        self.b = float(b)
        self.idx = np.asarray(idx, dtype=np.int64)
        self.val = np.asarray(val, dtype=np.float64)
        self.extra = extra or {}


class Tree:
    """The decision list of the pair (a, b): nodes, then a leaf label (final = ("leaf", label)) or ("rbf",)."""

    def __init__(self, a, b, nodes, final):
        self.a = int(a)
        self.b = int(b)
        self.nodes = list(nodes)
        self.final = tuple(final)


class TreeModel(BaseModel):
    """An `-s h1tree` model: label (int64), trees (one per pair, LIBSVM's order), rbf (an SVMModel or None)."""

    solver_type = "H1_TREE"

    def __init__(self, label, nr_feature, trees, h1_c, rbf=None, meta=None):
        self.label = int64_labels(label)
        self.nr_class = int(self.label.size)
        self.nr_feature = int(nr_feature)
        self.trees = list(trees)
        self.h1_c = h1_c
        self.rbf = rbf
        self.meta = meta or {}
        k = self.nr_class
        if len(self.trees) != k * (k - 1) // 2:
            raise ParameterError(f"{k} classes need {k * (k - 1) // 2} trees, not {len(self.trees)}")
        pairs = [(int(self.label[i]), int(self.label[j])) for i in range(k) for j in range(i + 1, k)]
        for t, (a, b) in zip(self.trees, pairs):
            if (t.a, t.b) != (a, b):
                raise ParameterError(f"tree for ({t.a}, {t.b}) where the pair ({a}, {b}) is expected")
            for n in t.nodes:
                if n.hard not in (a, b):
                    raise ParameterError(f"a node of tree ({a}, {b}) has hard label {n.hard}")
                if n.idx.size and (n.idx.min() < 0 or n.idx.max() >= self.nr_feature or np.any(np.diff(n.idx) <= 0)):
                    raise ParameterError("node w indices must be ascending within the model's features")
            if t.final[0] == "leaf":
                if t.final[1] not in (a, b):
                    raise ParameterError(f"tree ({a}, {b}) ends in leaf {t.final[1]}")
            elif t.final != ("rbf",):
                raise ParameterError(f"tree ({a}, {b}): final must be ('leaf', label) or ('rbf',)")
        if any(t.final == ("rbf",) for t in self.trees):
            if rbf is None:
                raise ParameterError("a tree ends in the RBF node, and the model has none")
            if rbf.kernel_type == "precomputed":
                raise ParameterError("the RBF node cannot be a precomputed-kernel model (-s h1tree takes no -t 4)")
            if [int(v) for v in rbf.label] != [int(v) for v in self.label]:
                raise ParameterError("the RBF node's labels differ from the tree model's")
        self._packed = None
        self._node_width = None

    # -- prediction -----------------------------------------------------------------------------------------------
    def _width(self, rows_width):
        """The dense width of the nodes' W for rows `rows_width` wide: at least the largest index any node's w
        holds + 1, as wide as the rows within nr_feature (so that rows of the model's features are viewed in place),
        and never narrower than W already is (no repacking back and forth between blocks). Rows wider than that
        reach beyond nr_feature: their extra entries are left out (_within), never made room for."""
        if self._node_width is None:
            self._node_width = max([1] + [int(n.idx[-1]) + 1 for t in self.trees for n in t.nodes if n.idx.size])
        width = max(self._node_width, min(self.nr_feature, int(rows_width)))
        return width if self._packed is None else max(width, self._packed[0])

    def _pack(self, width):
        """Per tree: W (r x width, dense; width > every index of the nodes' w, _width), b, and each node's soft label
        (+1: a, -1: b)."""
        if self._packed is None or self._packed[0] != width:
            packed = []
            for t in self.trees:
                r = len(t.nodes)
                # checked before it is made: the nodes' largest index and the model's features set its size
                memory.check(8 * r * width, f"tree ({t.a}, {t.b}): {r} hyperplanes over {width} features make "
                                            f"{memory.format_size(8 * r * width)} of weights")
                W = np.zeros((r, width), np.float64)
                b = np.empty(r, np.float64)
                soft = np.empty(r, np.float64)
                for k, n in enumerate(t.nodes):
                    W[k, n.idx] = n.val
                    b[k] = n.b
                    soft[k] = -1.0 if n.hard == t.a else 1.0
                packed.append((W, b, soft))
            self._packed = (width, packed)
        return self._packed[1]

    def prepare(self, X):
        return as_rows(X)

    def decision_function(self, X, *, prepared=False, depth=None, reach=None):
        """(n_rows, n_trees) pair values, positive for the pair's first class: +1 or -1 from the answering node or
        the leaf, the RBF model's pairwise value for a row that reaches it. depth, reach (optional (n_rows, n_trees)
        arrays, int64 and bool): receive the nodes evaluated per row and tree, and whether the row reached the
        tree's RBF node."""
        from .._ext._h1 import node_eval
        rows = X if prepared else self.prepare(X)
        n = rows.n_rows
        # features beyond nr_feature are ignored, as by linear and kernel models: W is sized by the nodes and the
        # model's features, never by the test rows' largest index (nor by a file's nr_feature alone)
        width = self._width(rows.n_features)
        view = _within(rows, width).row_view(-1.0, width)
        cells = n * len(self.trees)
        memory.check(8 * cells, f"the decision values of {n} rows in {len(self.trees)} trees take "
                                f"{memory.format_size(8 * cells)}")
        dec = np.empty((n, len(self.trees)), np.float64)
        need = np.zeros(n, bool)
        reached = []
        for p, (t, (W, b, soft)) in enumerate(zip(self.trees, self._pack(width))):
            if len(t.nodes):
                first, nodes_seen = node_eval(view, W, b, soft)
            else:
                first, nodes_seen = np.full(n, -1, np.int64), np.zeros(n, np.int64)
            hit = first >= 0
            dec[:, p] = np.where(hit, soft[np.maximum(first, 0)] if len(t.nodes) else 0.0, 0.0)
            if depth is not None:
                depth[:, p] = nodes_seen
            if reach is not None:
                reach[:, p] = ~hit if t.final[0] == "rbf" else False
            if t.final[0] == "leaf":
                dec[~hit, p] = 1.0 if t.final[1] == t.a else -1.0
            else:
                need |= ~hit
                reached.append((p, ~hit))
        if reached and need.any():
            sel = np.flatnonzero(need)
            rd = self.rbf.decision_function(rows.take_rows(sel) if sel.size < n else rows)
            rd = np.asarray(rd).reshape(sel.size, -1)
            for p, miss in reached:
                where = np.flatnonzero(miss)
                dec[where, p] = rd[np.searchsorted(sel, where), p]
        return dec

    def labels_from_decisions(self, dec):
        """LIBSVM's vote over the pairs (dec > 0: the pair's first class), ties to the class listed first."""
        from .svm import ovo_vote
        dec = np.asarray(dec, dtype=np.float64)
        return ovo_vote(dec.reshape(dec.shape[0], len(self.trees)), self.label)

    @property
    def n_hyperplanes(self):
        return sum(len(t.nodes) for t in self.trees)

    # -- files ----------------------------------------------------------------------------------------------------
    def to_text(self):
        out = [f"{TREE_MAGIC} {TREE_VERSION}", "solver_type H1_TREE", f"nr_class {self.nr_class}",
               "label" + "".join(f" {int(v)}" for v in self.label), f"nr_feature {self.nr_feature}", "bias -1",
               "multiclass ovo", f"h1_c {_h1_c_text(self.h1_c)}", f"nr_tree {len(self.trees)}"]
        for t in self.trees:
            fin = f"leaf {t.final[1]}" if t.final[0] == "leaf" else "rbf"
            out.append(f"tree {t.a} {t.b} nr_node {len(t.nodes)} final {fin}")
            for n in t.nodes:
                out.append(f"node hard {n.hard} b {n.b:.17g} w {n.idx.size}"
                           + "".join(f" {j + 1}:{v:.17g}" for j, v in zip(n.idx.tolist(), n.val.tolist())))
        text = "\n".join(out) + "\n"
        if self.rbf is not None:
            text += "rbf_model\n" + self.rbf.to_text()
        return text

    @classmethod
    def parse(cls, path, text, size):
        """The tree format, strictly: every refusal names path:line."""
        from .svm import SVMModel

        def bad(lineno, msg):
            return ModelFormatError(f"{path}:{lineno}: {msg}")

        cut = text.find("\nrbf_model\n")
        head_text, rbf_text = (text, None) if cut < 0 else (text[:cut + 1], text[cut + len("\nrbf_model\n"):])
        lines = head_text.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        expect = [("llsvm_tree_model", str(TREE_VERSION)), ("solver_type", "H1_TREE")]
        for lineno, (key, value) in enumerate(expect, 1):
            parts = lines[lineno - 1].split() if len(lines) >= lineno else []
            if parts != [key, value]:
                raise bad(lineno, f"expected '{key} {value}', found {quote(' '.join(parts))}")
        head = {}
        keys = ("nr_class", "label", "nr_feature", "bias", "multiclass", "h1_c", "nr_tree")
        for lineno, key in enumerate(keys, 3):
            parts = lines[lineno - 1].split() if len(lines) >= lineno else []
            if not parts or parts[0] != key:
                raise bad(lineno, f"expected {key}, found {quote(' '.join(parts))}")
            head[key] = (lineno, parts[1:])
        try:
            nr_class = c_int(_one(head["nr_class"][1]))
            if not 1 <= nr_class <= 65536:
                raise ValueError
        except ValueError:
            raise bad(head["nr_class"][0], "nr_class must be an integer in 1..65536") from None
        try:
            label = [c_int(v) for v in head["label"][1]]
            if (len(label) != nr_class or len(set(label)) != nr_class
                    or any(not INT64_MIN <= v <= INT64_MAX for v in label)):
                raise ValueError
        except ValueError:
            raise bad(head["label"][0], f"label must list {nr_class} distinct integers") from None
        try:
            nr_feature = c_int(_one(head["nr_feature"][1]))
            if not 0 <= nr_feature <= INT32_MAX:
                raise ValueError
        except ValueError:
            # the dense w's prediction makes from it are checked against the memory when they are made (_pack)
            raise bad(head["nr_feature"][0], f"nr_feature must be an integer in 0..{INT32_MAX}") from None
        if head["bias"][1] != ["-1"]:
            raise bad(head["bias"][0], "bias must be -1 (a tree model has no bias feature)")
        if head["multiclass"][1] != ["ovo"]:
            raise bad(head["multiclass"][0], "multiclass must be ovo")
        try:
            h1_c = _parse_h1_c(_one(head["h1_c"][1]))
        except ValueError:
            raise bad(head["h1_c"][0], "h1_c must be inf or a number >= 1") from None
        n_pairs = nr_class * (nr_class - 1) // 2
        try:
            nr_tree = c_int(_one(head["nr_tree"][1]))
            if nr_tree != n_pairs:
                raise ValueError
        except ValueError:
            raise bad(head["nr_tree"][0], f"nr_tree must be {n_pairs} for {nr_class} classes") from None
        # every structural rule is checked here, at its line (what TreeModel's constructor checks for models made
        # in memory can then never fail without one); the pairs as a generator: a header may claim 65536 classes,
        # 2^31 pairs, in a file of a few lines, refused at the first tree line missing
        pairs = ((label[i], label[j]) for i in range(nr_class) for j in range(i + 1, nr_class))
        trees = []
        first_rbf = None               # the line of the first tree that ends in the RBF node
        lineno = len(keys) + 2
        for a_want, b_want in pairs:
            lineno += 1
            parts = lines[lineno - 1].split() if len(lines) >= lineno else []
            ok = (len(parts) in (7, 8) and parts[0] == "tree" and parts[3] == "nr_node" and parts[5] == "final")
            try:
                a, b_, r = c_int(parts[1]), c_int(parts[2]), c_int(parts[4])
                if parts[6] == "leaf" and len(parts) == 8:
                    final = ("leaf", c_int(parts[7]))
                elif parts[6] == "rbf" and len(parts) == 7:
                    final = ("rbf",)
                else:
                    raise ValueError
                if not ok or not 0 <= r <= len(lines):
                    raise ValueError
            except (ValueError, IndexError):
                raise bad(lineno, "expected 'tree A B nr_node R final leaf LABEL|rbf', found "
                                  f"{quote(' '.join(parts))}") from None
            if (a, b_) != (a_want, b_want):
                raise bad(lineno, f"tree for the pair ({a}, {b_}) where the pair ({a_want}, {b_want}) is expected "
                                  "(LIBSVM's pair order of the labels)")
            if final[0] == "leaf" and final[1] not in (a, b_):
                raise bad(lineno, f"tree ({a}, {b_}) ends in leaf {final[1]}, not one of its two labels")
            if final[0] == "rbf" and first_rbf is None:
                first_rbf = lineno
            nodes = []
            for _ in range(r):
                lineno += 1
                parts = lines[lineno - 1].split() if len(lines) >= lineno else []
                node = _parse_node(parts, nr_feature, lambda msg, n=lineno: bad(n, msg))
                if node.hard not in (a, b_):
                    raise bad(lineno, f"a node of tree ({a}, {b_}) has hard label {node.hard}, not one of the "
                                      "pair's labels")
                nodes.append(node)
            trees.append(Tree(a, b_, nodes, final))
        if lineno != len(lines):
            raise bad(lineno + 1, f"unexpected line {quote(lines[lineno].strip())} after the trees")
        rbf = None
        if rbf_text is not None:
            start = lineno + 2                  # the RBF model's first line (svm_type), after the rbf_model line
            try:
                rbf = SVMModel.parse(path, rbf_text, size)
            except ModelFormatError as exc:
                raise ModelFormatError(f"{exc} (in the RBF node, which starts at line {start})") from None
            if rbf.kernel_type == "precomputed":
                at = next((k for k, ln in enumerate(rbf_text.split("\n")) if ln.split()[:1] == ["kernel_type"]), 0)
                raise bad(start + at, "the RBF node cannot be a precomputed-kernel model (-s h1tree takes no -t 4)")
            if rbf.label is None or [int(v) for v in rbf.label] != label:
                at = next((k for k, ln in enumerate(rbf_text.split("\n")) if ln.split()[:1] == ["label"]), 0)
                raise bad(start + at, "the RBF node must be a classification model with the tree model's labels in "
                                      f"the same order ({' '.join(map(str, label))})")
        elif first_rbf is not None:
            raise bad(first_rbf, "this tree ends in the RBF node, and the file has no rbf_model after the trees")
        try:
            return cls(label, nr_feature, trees, h1_c, rbf)
        except ParameterError as exc:       # pragma: no cover - every rule above names its line first
            raise ModelFormatError(f"{path}: {exc}") from None

    def __repr__(self):
        return (f"TreeModel(nr_class={self.nr_class}, trees={len(self.trees)}, hyperplanes={self.n_hyperplanes}, "
                f"rbf={'yes' if self.rbf is not None else 'no'})")


def _within(rows, width):
    """The rows with the entries of features beyond `width` left out (the rows themselves when they have none): a
    dataset the kernels can view `width` wide. The RBF node is given the rows as they are, as svm-predict reads
    them."""
    if rows.n_features <= width:
        return rows
    from ..dataset import CSRDataset
    rows = rows.contiguous()
    keep = rows.indices < width
    if keep.all():
        return CSRDataset(rows.y, rows.indptr, rows.indices, rows.values, width, check=False)
    kept = np.concatenate([[0], np.cumsum(keep, dtype=np.int64)])
    return CSRDataset(rows.y, kept[rows.indptr], rows.indices[keep], rows.values[keep], width, check=False)


def _one(values):
    if len(values) != 1:
        raise ValueError
    return values[0]


def _h1_c_text(h1_c):
    return "inf" if h1_c is None or math.isinf(h1_c) else f"{h1_c:.17g}"


def _parse_h1_c(tok):
    if tok == "inf":
        return math.inf
    v = c_float(tok)
    if not (math.isfinite(v) and v >= 1):
        raise ValueError
    return v


def _parse_node(parts, nr_feature, bad):
    if len(parts) < 7 or parts[0] != "node" or parts[1] != "hard" or parts[3] != "b" or parts[5] != "w":
        raise bad(f"expected 'node hard LABEL b VALUE w NNZ index:value ...', found {quote(' '.join(parts[:8]))}")
    try:
        hard = c_int(parts[2])
        b = c_float(parts[4])
        nnz = c_int(parts[6])
        if not math.isfinite(b) or nnz < 0 or nnz != len(parts) - 7:
            raise ValueError
    except ValueError:
        raise bad("a node needs an integer label, a finite b and the count of its w entries") from None
    idx = np.empty(nnz, np.int64)
    val = np.empty(nnz, np.float64)
    prev = 0
    for k, tok in enumerate(parts[7:]):
        m = _PAIR.fullmatch(tok)
        try:
            if m is None:
                raise ValueError
            j = c_int(m.group(1))
            v = c_float(m.group(2))
            if not (prev < j <= nr_feature) or not math.isfinite(v):
                raise ValueError
        except ValueError:
            raise bad(f"w entry {quote(tok)}: index:value with ascending indices 1..{nr_feature} and a finite "
                      "value") from None
        idx[k] = j - 1
        val[k] = v
        prev = j
    return Node(hard, b, idx, val)
