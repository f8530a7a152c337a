"""One-vs-one, as LIBSVM's svm_train does it for C_SVC, for every kernel solver (-s smo and the online SVMs).

- classes: labels in order of first occurrence with the {-1, +1} swap (common.group_classes, LIBSVM's
  svm_group_classes), rows grouped by class in their file order;
- for every pair i < j of classes: a binary problem over class i's rows (y = +1) then class j's (y = -1);
- the model: a row is a support vector if its coefficient is non-zero in any of its pairs; SVs in grouped order;
  sv_coef[j-1] holds the coefficients of class i's SVs in pair (i, j), sv_coef[i] those of class j's; rho of every
  pair (llsvm.models.svm.SVMModel, LIBSVM's model file).
"""
from collections.abc import Sequence

import numpy as np

from .._ext._smo import ovo_model
from ..models.svm import KERNEL_TYPES, NoRowsModel, SVMModel
from .common import Seeds, check_ovo, group_classes


class Pairs:
    """The one-vs-one problems of labels y: `labels`, `nr_class`, the classes' rows (class c's are perm[start[c]:
    start[c] + count[c]], in file order), pair p's classes (first[p], second[p]) in LIBSVM's order, its rows at
    offsets[p]:offsets[p + 1] of the concatenation of every pair's (their coefficients, -b 1's permutations), and
    `problems`, the sequence of (i, j, rows, y) with rows (int64, indices into y: class i's then class j's, each in
    file order) and y (int8, +1 then -1), each made when read (`problem`). What the pairs and the model of their
    solutions hold is checked against the memory before any pair is made (check_ovo)."""

    def __init__(self, y):
        self.labels, cls = group_classes(y)
        self.nr_class = self.labels.size
        check_ovo(self.nr_class, cls.size)
        self.perm = np.argsort(cls, kind="stable").astype(np.int64)
        self.count = np.bincount(cls, minlength=self.nr_class).astype(np.int64)
        self.start = np.concatenate([[0], np.cumsum(self.count)[:-1]]).astype(np.int64)
        first, second = np.triu_indices(self.nr_class, 1)
        self.first, self.second = first.astype(np.int64), second.astype(np.int64)
        self.offsets = np.concatenate([[0], np.cumsum(self.count[self.first] + self.count[self.second])]).astype(
            np.int64)
        self.problems = _Problems(self)

    def size(self, p):
        """The rows of pair p."""
        return int(self.offsets[p + 1] - self.offsets[p])

    def pair_labels(self, p):
        """The labels (ints) of pair p's classes."""
        return int(self.labels[self.first[p]]), int(self.labels[self.second[p]])

    def problem(self, p):
        """Pair p as (i, j, rows, y)."""
        i, j = int(self.first[p]), int(self.second[p])
        si, ci, sj, cj = self.start[i], self.count[i], self.start[j], self.count[j]
        rows = np.concatenate([self.perm[si:si + ci], self.perm[sj:sj + cj]])
        y = np.concatenate([np.ones(ci, np.int8), -np.ones(cj, np.int8)])
        return i, j, rows, y

    def model(self, ds, coefs, rho, kernel_type, degree, gamma, coef0, probA=None, probB=None, svm_type="c_svc"):
        """The SVMModel of the pairs' solutions: coefs the signed coefficients (alpha_t y_t) of every pair over its
        rows, a list (coefs[p] of problem p) or their concatenation (pair p at offsets[p]), rho[p] its rho, probA[p]
        and probB[p] its Platt scaling (-b 1; None: none). Returns (model, sv_rows: the SVs' row indices in ds, in
        the model's order). No class (no rows: a fold of leave-one-out on one row): LIBSVM's model of no class,
        which predicts no label."""
        if not self.nr_class:
            return NoRowsModel(svm_type), np.empty(0, np.int64)
        if not isinstance(coefs, np.ndarray):
            coefs = np.concatenate(coefs) if len(coefs) else np.empty(0)
        sv, nSV, sv_coef = ovo_model(np.ascontiguousarray(coefs, np.float64), self.offsets, self.start, self.count)
        sv_rows = self.perm[sv]
        SV = ds.take_rows(sv_rows)         # a CSRDataset (SVMModel takes it as it is); empty with no SVs
        model = SVMModel(svm_type, KERNEL_TYPES[kernel_type], degree, gamma, coef0,
                         np.asarray(rho, np.float64), sv_coef, SV, label=self.labels, nSV=nSV,
                         probA=None if probA is None else np.asarray(probA, np.float64),
                         probB=None if probB is None else np.asarray(probB, np.float64))
        return model, sv_rows


class _Problems(Sequence):
    """Pairs.problems: (i, j, rows, y) of pair p, made when read."""

    def __init__(self, pairs):
        self.pairs = pairs

    def __len__(self):
        return self.pairs.first.size

    def __getitem__(self, p):
        if isinstance(p, slice):
            return [self[q] for q in range(*p.indices(len(self)))]
        return self.pairs.problem(range(len(self))[p])


def _draws(seed):
    return seed if hasattr(seed, "permutations") else Seeds(seed)


def run_batched(run, seed, reporter):
    """A one-vs-one run whose pairs its kernel runs in batches (smo.PairsRun.run), their draws from the one RNG
    seeded with `seed` (or from `seed` itself, a Seeds or common.LibsvmRand), as run_pairs draws them."""
    return run.run(_draws(seed), reporter)


def run_pairs(run, seed, reporter, context=None):
    """A one-vs-one run (smo.PairsRun, online.OnlineRun: set up, with `pairs`, `permutation`, `pair` and `model`)
    in one process: its pairs in order, each with its draws from the one RNG seeded with `seed` (or from `seed`
    itself, a Seeds or common.LibsvmRand), then the model.
    context: a dict the grid search keeps across the cells of one kernel and fold, each pair's `held` (kernel cache,
    column store) kept there and reused; the model does not depend on it."""
    seeds = _draws(seed)
    coefs, results, probs = [], [], []
    for p in range(len(run.pairs.problems)):
        coef, res, prob, held = run.pair(p, run.permutation(seeds, p), reporter,
                                         None if context is None else context.get(p))
        if context is not None:
            context[p] = held
        coefs.append(coef)
        results.append(res)
        probs.append(prob)
    return run.model(coefs, results, probs, reporter)


def pair_states(run, seed):
    """The RNG state each pair of a one-vs-one run (as run_pairs runs it) starts from: the state of Seeds(seed)
    after the draws of the pairs before it, replayed without training (a pair's draws, `run.permutation`, are a
    shuffle of its rows: how many numbers it takes depends on the state and the pair's size, not on the data), so
    that a pair can run alone with the draws it has in the whole run (llsvm.dask). One state (4 x uint64) per
    pair; Seeds.at(state) continues from it."""
    seeds = Seeds(seed)
    states = []
    for p in range(len(run.pairs.problems)):
        states.append(seeds.state.copy())
        run.permutation(seeds, p)
    return states
