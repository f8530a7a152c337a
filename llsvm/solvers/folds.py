"""The folds of cross-validation (-v), the -C search and the grid search, and of -s h1tree's validation split:
LIBLINEAR's plain folds and LIBSVM's stratified ones, drawn from the run's seeded RNG (common.Seeds)."""
import numpy as np

from ..report import as_reporter
from .common import Seeds, group_classes


def plain_folds(l, nr_fold, seeds, reporter, libsvm=False):
    """LIBLINEAR's folds (cross_validation): a permutation of the l rows cut into nr_fold slices [(train, test)];
    more folds than rows is leave-one-out, with LIBLINEAR's warning (libsvm: LIBSVM's svm_cross_validation's,
    which counts both). On one row, the one fold trains on no rows."""
    if nr_fold > l:
        n_folds, n_data = (f" ({nr_fold})", f" ({l})") if libsvm else ("", "")
        nr_fold = l
        reporter.warning(f"WARNING: # folds{n_folds} > # data{n_data}. Will use # folds = # data instead (i.e., "
                         "leave-one-out cross validation)\n")
    perm = seeds.permutation(l)
    fold_start = [i * l // nr_fold for i in range(nr_fold + 1)]
    folds = []
    for i in range(nr_fold):
        b, e = fold_start[i], fold_start[i + 1]
        folds.append((np.concatenate([perm[:b], perm[e:]]), perm[b:e]))
    return folds


def stratified_folds(y, nr_fold, seeds, reporter):
    """LIBSVM's folds for classification (svm_cross_validation): every class's rows, in their grouped order, are
    shuffled (here by the seeded RNG, where LIBSVM calls rand()), and fold i takes the slice
    [i c / nr_fold, (i + 1) c / nr_fold) of each class c in turn, so every fold keeps the class proportions. With
    nr_fold >= l (leave-one-out) LIBSVM's plain permutation is used instead (plain_folds)."""
    l = y.size
    if nr_fold >= l:
        return plain_folds(l, nr_fold, seeds, reporter, libsvm=True)
    _, cls = group_classes(y)
    perm = np.argsort(cls, kind="stable").astype(np.int64)
    count = np.bincount(cls)
    start = np.concatenate([[0], np.cumsum(count)[:-1]])
    index = perm.copy()
    for c in range(count.size):
        block = index[start[c]:start[c] + count[c]]
        index[start[c]:start[c] + count[c]] = block[seeds.permutation(int(count[c]))]
    tests = []
    for i in range(nr_fold):
        tests.append(np.concatenate([index[start[c] + i * count[c] // nr_fold:start[c] + (i + 1) * count[c] // nr_fold]
                                     for c in range(count.size)]))
    folds = []
    for i in range(nr_fold):
        train = np.concatenate([tests[k] for k in range(nr_fold) if k != i])
        folds.append((train, tests[i]))
    return folds


def fold_plan(y, nr_fold, seed):
    """The folds of -v and of the grid search for a loaded driver, from a seed: [(train rows, test rows)]."""
    return stratified_folds(np.asarray(y), nr_fold, Seeds(seed), as_reporter())
