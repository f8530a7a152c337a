"""-s h1tree: the SVM decision tree of H1-SVM nodes (Fehr, Zapién Arreola and Burkhardt, "Fast support vector
machine classification of very large datasets", GfKl 2007), with the resolutions of docs/solvers.md, "H1-SVM:
the paper's gaps and the resolutions implemented" (R1-R9), one-vs-one.

For every pair of classes (a, b) (LIBSVM's label order; y = +1 for a), the rows S of the pair:
  while S holds both classes and the list is shorter than --max-depth:
    candidates: hard = +1 and hard = -1 (--hard-class greedy), or one of them by rule (alternate: the larger class
    first, then alternating; larger: the larger class of S), the other when the first is void;
    a candidate's node: the H1-SVM on S with that class hard, solved as the nearest point problem (cext/_h1.pyx:
    MDM on the hard rows, C = inf or kappa m_s / m_h by --h1-c; b = y_h - w.x_e at the hard row of smallest
    y_h w.x, R2); the soft rows it answers strictly (y_s f(x) > 0, R3) are removed;
    a candidate is void when its w is zero (||w|| <= 1e-12 ||sum_s x_j||) or it removes fewer than
    max(1, --min-remove |S|) rows (R5); greedy keeps the candidate that removes more soft rows (ties: the larger
    share of its soft class, then hard = +1, R4);
    no candidate left: the list stops (stalled).
  The list ends in a leaf (S's one class, or its majority when it stalled) or, with --rbf-depth, in the RBF node:
  one LIBSVM C-SVC (-s smo, the kernel options -t -g -c ...) trained once on all the training rows, whose pairwise
  decision value answers the rows that reach it; nodes below the cut are dropped (R6): K, or auto: the cut of
  smallest expected cost (mean nodes evaluated + P(reach the RBF node) nSV) among those within --rbf-tol points of
  the best accuracy on a stratified 20 % validation split (--rbf-select train: on the training rows).
"""
import math

import numpy as np

from .. import memory
from .._ext import _h1
from ..errors import ParameterError
from ..options import H1Options, SMOOptions
from ..params import echo
from ..report import as_reporter
from .common import TREE_OBJECT_BYTES, FitResult, Seeds, check_ovo, group_classes
from .folds import stratified_folds
# dense arrays of the weight vector's size a node holds (cext/_h1.pyx solve_node: w, and its d and ssum; with
# --hard-class greedy the first candidate's w while the second is solved; the kept non-zeros of a w)
H1_WORK_VECTORS = 5
JSON_FIELDS = ("C", "eps", "h1_c", "hard_class", "rbf_depth", "nr_class", "labels", "n_hyperplanes",
               "average_depth", "rbf_nSV", "reach_rbf", "trees")
ZERO_REL = 1e-12


# -- one node and one list --------------------------------------------------------------------------------------
def _node(view, rows, y, hard, opts, eps, max_iter):
    """The H1 node with class `hard` (+1/-1) hard over `rows` (labels y): (node dict, removed soft rows)."""
    H = rows[y == hard]
    S = rows[y != hard]
    C = math.inf if math.isinf(opts.h1_c) else opts.h1_c * S.size / H.size
    while C * H.size < S.size:              # kappa = 1: the sum of the box may round just below m_s
        C = math.nextafter(C, math.inf)
    try:
        out = _h1.solve_node(view, H, S, float(hard), C, eps=eps, max_iter=max_iter)
    except MemoryError as exc:        # the kernel's calloc says nothing: say what it was
        if str(exc):
            raise
        need = 3 * 8 * (view.n_features + 1) + 24 * H.size
        raise MemoryError(f"an H1 node over {view.n_features} features and {H.size} hard rows: its dense arrays "
                          f"({memory.format_size(need)}) could not be allocated") from None
    removed = S[out["removed"]]             # the soft rows it answers: y_s (w.x + b) > 0 strictly
    out.update(hard=hard, C=C, m_h=int(H.size), m_s=int(S.size))
    return out, removed


def _void(out, removed, n_S, opts):
    return bool(out["zero"]) or removed.size < max(1, math.ceil(opts.min_remove * n_S))


def build_list(view, rows, y, opts, eps, max_iter=None):
    """The decision list of one binary problem: (nodes (dicts with w, b, hard, removed, ...), S left, stalled)."""
    S = np.asarray(rows, np.int64)
    yS = np.asarray(y, np.int8)
    nodes = []
    alternate_next = None
    stalled = False
    while len(nodes) < opts.max_depth:
        n_pos = int(np.count_nonzero(yS > 0))
        n_neg = yS.size - n_pos
        if n_pos == 0 or n_neg == 0:
            break
        larger = 1 if n_pos >= n_neg else -1
        if opts.hard_class == "greedy":
            order = [1, -1]
        elif opts.hard_class == "larger":
            order = [larger, -larger]
        else:
            first = larger if alternate_next is None else alternate_next
            order = [first, -first]
        best = None
        for hard in order:
            out, removed = _node(view, S, yS, hard, opts, eps, max_iter)
            if _void(out, removed, S.size, opts):
                continue
            share = removed.size / out["m_s"]
            key = (removed.size, share, hard > 0)
            if best is None or key > best[0]:
                best = (key, out, removed)
            if opts.hard_class != "greedy":
                break
        if best is None:
            stalled = True
            break
        _, out, removed = best
        # what the list keeps of a node: w as its non-zeros (a dense w per node of every list would hold
        # n_features doubles each), not the per-row arrays of the solve
        w = out.pop("w")
        nz = np.flatnonzero(w)
        out.update(idx=nz, val=w[nz], removed=int(removed.size))
        for key in ("alpha", "f_soft"):
            out.pop(key, None)
        nodes.append(out)
        keep = ~np.isin(S, removed, assume_unique=True)
        S, yS = S[keep], yS[keep]
        alternate_next = -out["hard"]
    else:
        stalled = bool(np.count_nonzero(yS > 0)) and bool(np.count_nonzero(yS < 0))
    return nodes, S, yS, stalled


def _leaf(yS, a, b):
    """The list's leaf: S's one class, or its majority (ties: the pair's first class)."""
    n_pos = int(np.count_nonzero(yS > 0))
    return a if n_pos >= yS.size - n_pos else b


def _class_rows(cls, k, rows=None):
    """The rows of each of the k classes, each in file order, among `rows` (None: all), found once (a pair's rows
    are two of them: no pass over every row per pair)."""
    use = np.arange(cls.size, dtype=np.int64) if rows is None else np.sort(np.asarray(rows, np.int64))
    c = cls[use]
    order = use[np.argsort(c, kind="stable")]
    bounds = np.concatenate([[0], np.cumsum(np.bincount(c, minlength=k))])
    return [order[bounds[m]:bounds[m + 1]] for m in range(k)]


def _pair_rows(members, i, j):
    """The rows of classes i and j (class i first, each in file order) and their labels (+1 for i)."""
    ri, rj = members[i], members[j]
    rows = np.concatenate([ri, rj]).astype(np.int64)
    y = np.concatenate([np.ones(ri.size, np.int8), -np.ones(rj.size, np.int8)])
    return rows, y


def _pair_list(view, members, labels, i, j, opts, params, reporter):
    """The list of the pair of classes i and j over `members` (_class_rows): (nodes, its leaf, stalled); with a
    reporter, a line per node."""
    prows, y = _pair_rows(members, i, j)
    nodes, _, yS, stalled = build_list(view, prows, y, opts, params.eps, params.max_iter)
    for d, n in enumerate(nodes):        # the data's norms are finite: only --h1-c can make it overflow
        if not (math.isfinite(n["b"]) and np.isfinite(n["val"]).all()):
            raise ParameterError(f"-s h1tree: node {d + 1} of the list of the pair ({labels[i]}, "
                                 f"{labels[j]}) overflows (its b or w is not a finite number): lower --h1-c "
                                 "or scale the features")
    if reporter is not None:
        for d, n in enumerate(nodes):
            hard = labels[i] if n["hard"] > 0 else labels[j]
            reporter.info(f"tree {labels[i]} {labels[j]} node {d + 1}: hard {hard}, #iter = {n['n_iter']}, removed "
                          f"{n['removed']} of {n['m_s']}, |w| = {n['norm_w']:g}\n")
            if not n["converged"]:
                reporter.info("\nWARNING: reaching max number of iterations\n")
    return nodes, _leaf(yS, int(labels[i]), int(labels[j])), stalled


def pairs_of(k):
    """The pairs (i, j), i < j, of k classes in LIBSVM's order."""
    return [(i, j) for i in range(k) for j in range(i + 1, k)]


def _rbf(ds, opts, params, reporter, rows=None):
    """The RBF node: -s smo's C-SVC with the kernel options, on the given rows (None: all)."""
    from . import smo
    sub = ds if rows is None else ds.take_rows(rows)
    return smo.fit(sub, rbf_params(params, opts), reporter, n_features=ds.n_features)


def rbf_params(params, opts):
    """The Params of the RBF node's -s smo run: the tree's, with its kernel options (opts: resolved H1Options)."""
    kernel = SMOOptions(kernel_type=opts.kernel_type, gamma=opts.gamma, degree=opts.degree, coef0=opts.coef0,
                        cache_size=opts.cache_size, shrinking=opts.shrinking)
    return params.but(options=kernel)


def rbf_run(ds, params, reporter):
    """The RBF node over all rows as smo's run in parts (smo.PairsRun), for llsvm.dask's pair tasks."""
    from .smo import PairsRun
    return PairsRun(ds, rbf_params(params, _setup(ds, params, None)[1]), reporter)


def _cut_costs(first, r, stalled, yv, node_label, leaf, rbf_label, nSV):
    """acc(d), E[cost](d) for d = 0..r of one pair's list on rows whose first answering node is `first` (-1: none):
    nodes below d dropped, the RBF node (labels rbf_label) at d (at d = r: the leaf unless the list stalled)."""
    out = []
    for d in range(r + 1):
        answered = (first >= 0) & (first < d)
        pred = np.where(answered, node_label, rbf_label)
        reach = ~answered
        if d == r and not stalled:
            pred = np.where(answered, node_label, leaf)
            reach = np.zeros_like(answered)
        evals = np.where(answered, first + 1, d)
        acc = 100.0 * float(np.mean(pred == yv)) if yv.size else 100.0
        cost = float(np.mean(evals) + np.mean(reach) * nSV) if yv.size else 0.0
        out.append((acc, cost))
    return out


def _choose_cut(costs, tol):
    best = max(a for a, _ in costs)
    ok = [(c, d) for d, (a, c) in enumerate(costs) if a >= best - tol]
    return min(ok)[1]


def _first(rows_ds, nodes, n_features):
    """The first node of a list answering each row of a dataset (-1: none), by the C evaluator."""
    width = max(n_features, rows_ds.n_features, 1)
    r = len(nodes)
    memory.check(8 * r * width, f"a list of {r} hyperplanes over {width} features makes "
                                f"{memory.format_size(8 * r * width)} of weights")
    W = np.zeros((r, width), np.float64)
    b = np.empty(r, np.float64)
    soft = np.empty(r, np.float64)
    for k, n in enumerate(nodes):
        W[k, n["idx"]] = n["val"]
        b[k] = n["b"]
        soft[k] = -float(n["hard"])
    first, _ = _h1.node_eval(rows_ds.row_view(-1.0, width), W, b, soft)
    return first


def _split(ds, opts, params, reporter):
    """R6's rows to choose the cuts with: (training rows, validation rows), sorted: a stratified 20 % validation
    split drawn from --seed (its warnings to `reporter`), or the training rows both (--rbf-select train)."""
    if opts.rbf_select == "train":
        return (np.arange(ds.n_rows, dtype=np.int64),) * 2
    tr, va = stratified_folds(ds.y, 5, Seeds(params.seed), reporter)[0]
    return np.sort(tr), np.sort(va)


def _cuts(ds, cls, labels, opts, va, lists, rbf):
    """R6's cut of every pair's list, from the lists (TreeRun.lists) and the RBF node (_rbf) of the split's training rows,
    on its validation rows `va`: per pair (the cut, [(accuracy, expected cost) of every cut])."""
    vds = ds.take_rows(va)
    rdec = rbf.decision_function(vds).reshape(va.size, -1)
    cuts = []
    for p, ((i, j), (nodes, leaf, stalled)) in enumerate(zip(pairs_of(labels.size), lists)):
        mask = (cls[va] == i) | (cls[va] == j)
        sub = vds.take_rows(np.flatnonzero(mask))
        yv = np.where(cls[va][mask] == i, labels[i], labels[j])
        first = _first(sub, nodes, ds.n_features) if nodes else np.full(sub.n_rows, -1, np.int64)
        hard = np.array([n["hard"] for n in nodes] or [1])
        node_label = np.where(first >= 0, np.where(-hard[np.maximum(first, 0)] > 0, labels[i], labels[j]), 0)
        rbf_label = np.where(rdec[mask, p] > 0, labels[i], labels[j])
        costs = _cut_costs(first, len(nodes), stalled, yv, node_label, leaf, rbf_label, rbf.total_sv)
        cuts.append((_choose_cut(costs, opts.rbf_tol), costs))
    return cuts


def _check_memory(ds, k, opts):
    """Refuse a run that cannot fit before any node is solved: the lists of the k (k - 1) / 2 pairs and their
    records, the RBF node's -s smo pairs when it may be trained, and each node's dense arrays of n_features (a
    4-row file with index 2^28 would otherwise ask for gigabytes per node, then fail without a word)."""
    check_ovo(k, ds.n_rows, "decision lists and records", per_row=1, per_pair=TREE_OBJECT_BYTES)
    if opts.rbf_depth != "none":
        check_ovo(k, ds.n_rows)
    memory.check_weights(ds.n_features, H1_WORK_VECTORS)


def _setup(ds, params, reporter, n_features=None):
    """(num_features, resolved options, labels, class of every row) of a run; refused when it cannot fit; with a
    reporter, LIBSVM's one-class warning."""
    nf = ds.n_features if n_features is None else n_features
    opts = (params.options or H1Options()).resolved(nf)
    labels, cls = group_classes(ds.y)
    _check_memory(ds, labels.size, opts)
    if labels.size == 1 and reporter is not None:
        reporter.info("WARNING: training data in only one class. See README for details.\n")
    return nf, opts, labels, cls


class TreeRun:
    """-s h1tree's run on a loaded dataset in parts, as smo.PairsRun is LIBSVM's: the set-up (this object: nf, the
    resolved options, the labels and the class of every row, the pairs; refused when it cannot fit; LIBSVM's
    one-class warning to `reporter`), --rbf-depth auto's validation split (`split`), the pairs' decision lists
    (`lists`, or one pair's: `pair_list`), the cuts (`cuts`, `auto_cuts`) and the RBF node (`rbf`). The trees and
    the model need no row (make_trees, tree_model). `fit` runs it all in one process; llsvm.dask runs a task per
    pair's list and the trees on the client."""

    def __init__(self, ds, params, reporter, n_features=None):
        self.ds, self.params = ds, params
        self.nf, self.opts, self.labels, self.cls = _setup(ds, params, reporter, n_features)
        self.auto = self.opts.rbf_depth == "auto" and self.labels.size > 1
        self.pairs = pairs_of(self.labels.size)

    def split(self, reporter):
        """(training rows, validation rows) of --rbf-depth auto's cuts (_split), its warnings to `reporter`."""
        return _split(self.ds, self.opts, self.params, reporter)

    def lists(self, reporter, rows=None):
        """Every pair's list over `rows` (None: all): [(nodes, leaf, stalled)] in pair order; with a reporter, a
        line per node."""
        view = self.ds.row_view()
        members = _class_rows(self.cls, self.labels.size, rows)
        return [_pair_list(view, members, self.labels, i, j, self.opts, self.params, reporter) for i, j in self.pairs]

    def pair_list(self, p, reporter, rows=None):
        """Pair p's list over `rows` (None: all): (nodes, leaf, stalled)."""
        i, j = self.pairs[p]
        return _pair_list(self.ds.row_view(), _class_rows(self.cls, self.labels.size, rows), self.labels, i, j,
                          self.opts, self.params, reporter)

    def rbf(self, reporter, rows=None):
        """The RBF node on `rows` (None: all)."""
        return _rbf(self.ds, self.opts, self.params, reporter, rows=rows)

    def cuts(self, lists, split):
        """R6's cut of every pair's list from the lists over the split's training rows (`split`: (training rows,
        validation rows)), with the RBF node trained on them silently: per pair (the cut, [(accuracy, expected
        cost) of every cut])."""
        tr, va = split
        return _cuts(self.ds, self.cls, self.labels, self.opts, va, lists, self.rbf(as_reporter(), rows=tr))

    def auto_cuts(self, reporter):
        """The cuts chosen on a stratified 20 % validation split (or the training rows), its warnings to
        `reporter`."""
        split = self.split(reporter)
        return self.cuts(self.lists(None, rows=split[0]), split)


def make_trees(labels, lists, cuts, opts, reporter):
    """The trees of the pairs' lists (with --rbf-depth auto, their cuts): (trees, their records, whether a tree
    ends in the RBF node); a line per tree."""
    from ..models.tree import Node, Tree
    trees, records = [], []
    need_rbf = False
    for p, ((i, j), (nodes, leaf, stalled)) in enumerate(zip(pairs_of(labels.size), lists)):
        a, b = int(labels[i]), int(labels[j])
        r = len(nodes)
        if opts.rbf_depth == "none":
            d, rbf_end = r, False
        else:
            d = min(cuts[p][0], r) if cuts is not None else min(int(opts.rbf_depth), r)
            rbf_end = d < r or stalled
        need_rbf |= rbf_end
        kept = [Node(a if n["hard"] > 0 else b, n["b"], n["idx"], n["val"]) for n in nodes[:d]]
        trees.append(Tree(a, b, kept, ("rbf",) if rbf_end else ("leaf", leaf)))
        records.append({"labels": [a, b], "stalled": bool(stalled), "cut": d, "final": "rbf" if rbf_end else "leaf",
                        # auto: (validation accuracy %, expected cost) of every cut d = 0.. of the 80 % list
                        "cut_costs": [list(c) for c in cuts[p][1]] if cuts is not None else None,
                        "nodes": [{"hard": a if n["hard"] > 0 else b, "removed": n["removed"], "n_iter": n["n_iter"],
                                   "norm_w": n["norm_w"], "zero": bool(n["zero"]), "converged": bool(n["converged"]),
                                   "gap": n["gap"], "kept": d > q} for q, n in enumerate(nodes)]})
        reporter.info(f"tree {a} {b}: {r} nodes{' (stalled)' if stalled else ''}, final "
                      f"{'rbf after ' + str(d) if rbf_end else 'leaf ' + str(trees[-1].final[1])}\n")
    return trees, records, need_rbf


def tree_model(labels, nf, trees, records, rbf, opts, params, reporter):
    """The TreeModel (meta: per tree its nodes' records) and its closing line."""
    from ..models.tree import TreeModel
    model = TreeModel(labels, nf, trees, opts.h1_c, rbf)
    results = [FitResult(w=None, n_iter=sum(n["n_iter"] for n in rec["nodes"]),
                         max_violation=max((n["gap"] for n in rec["nodes"]), default=0.0),
                         nSV=len(rec["nodes"]), converged=all(n["converged"] for n in rec["nodes"]),
                         solver="h1tree", extra=rec) for rec in records]
    model.meta = {"results": results, "params": params, "options": opts}
    reporter.info(f"Total hyperplanes = {model.n_hyperplanes}" + (f", RBF node nSV = {rbf.total_sv}" if rbf else "")
                  + "\n")
    return model


def fit(ds, params, reporter, n_features=None):
    """Train the H1-SVM tree model on a loaded dataset; returns a TreeModel (meta: per tree its nodes' records).
    In parts (TreeRun; llsvm.dask runs the pairs' lists as tasks): the set-up, with --rbf-depth auto the cuts (the
    lists and the RBF node of a split), the lists, the trees, the RBF node when a tree ends in it, the model."""
    run = TreeRun(ds, params, reporter, n_features)
    cuts = run.auto_cuts(reporter) if run.auto else None
    lists = run.lists(reporter)
    trees, records, need_rbf = make_trees(run.labels, lists, cuts, run.opts, reporter)
    rbf = run.rbf(reporter) if need_rbf else None
    return tree_model(run.labels, run.nf, trees, records, rbf, run.opts, params, reporter)


def metrics(model, params, ds):
    """--json of -s h1tree: per tree its nodes (hard label, rows removed, SMO iterations, ||w||, zero flag), the
    average classification depth and the share of training rows that reach the RBF node."""
    res = model.meta["results"]
    opts = model.meta["options"]
    cells = ds.n_rows * len(model.trees)
    memory.check(25 * cells, f"the classification depth of {ds.n_rows} rows in {len(model.trees)} trees (--json) "
                             f"takes {memory.format_size(25 * cells)}")
    depth = np.zeros((ds.n_rows, len(model.trees)), np.int64)
    reached = np.zeros((ds.n_rows, len(model.trees)), bool)
    if model.trees:
        model.decision_function(ds, depth=depth, reach=reached)
    reach = float(np.mean(reached.any(axis=1))) if ds.n_rows else 0.0
    return {
        "solver": "h1tree", "n_rows": ds.n_rows, "n_features": ds.n_features, "nnz": ds.nnz,
        "n_iter": sum(r.n_iter for r in res), "primal": None, "dual": None, "gap": None,
        "max_violation": max((r.max_violation for r in res), default=0.0), "nSV": model.n_hyperplanes,
        "converged": all(r.converged for r in res),
        **echo(params, "C", "eps", "h1_c", "hard_class", "rbf_depth", options=opts),
        "h1_c": None if math.isinf(opts.h1_c) else opts.h1_c, "nr_class": model.nr_class,
        "labels": [int(v) for v in model.label], "n_hyperplanes": model.n_hyperplanes,
        "average_depth": float(depth.sum(axis=1).mean()) if ds.n_rows else 0.0,
        "rbf_nSV": int(model.rbf.total_sv) if model.rbf is not None else 0, "reach_rbf": reach,
        "trees": [r.extra for r in res],
    }
