"""What every solver driver shares, each in one copy: the fit result and its certificate fields, the binary
subproblem over a row view, classes and the one-vs-rest split (LIBLINEAR's label order and {-1,+1} swap), class
costs after -wi weights, seeds, sizes (--memory), and the closing lines and warnings every solver prints."""
import os
import time
from dataclasses import dataclass, field

import numpy as np

from .._ext import _linear as K
from .._ext import _random
from ..dataset import positive_rows
from ..errors import ParameterError
from ..memory import format_size
from ..params import echo
from ..memory import check as check_memory
from ..memory import check_classes

EMPTY_ROWS = np.empty(0, np.int64)


def sq_norm(w):
    """w.w by the kernels' ddot, not NumPy's BLAS: OpenBLAS's threads spin after a call and take the second core
    from whatever runs there (a read-ahead thread, another problem), and a call on a busy machine costs 0.35 ms
    against 13 us for 100,000 features."""
    return float(K.ddot(w, w))


@dataclass
class FitResult:
    """A binary fit and its certificate (None or NaN where the solver cannot know a figure)."""
    w: np.ndarray
    alpha: np.ndarray = None
    n_iter: int = 0
    primal: float = float("nan")
    dual: float = float("nan")
    gap: float = float("nan")
    max_violation: float = float("nan")
    nSV: int = 0
    converged: bool = True
    solver: int = 3
    extra: dict = field(default_factory=dict)


class Subproblem:
    """A binary problem over a dataset's view: rows (None: all), y_sign (+1/-1 int8), C per class. A regression
    problem (-s 11/12/13) also has `targets` (float64, y_sign all +1, Cp = Cn = C); Crammer and Singer's (-s 4)
    has `cls` (class index per row, int32) and `C_class` (C per class). `weights`: its rows' weights when the
    dataset has them (docs/weights.md), else None; C() multiplies them in, and the kernels read them from the view
    (rowview.pxd's row_cost)."""

    def __init__(self, view, y_sign, Cp, Cn, rows=None, bias=-1.0, targets=None, cls=None, C_class=None):
        self.view = view
        self.rows = EMPTY_ROWS if rows is None else np.ascontiguousarray(rows, dtype=np.int64)
        self.y = np.ascontiguousarray(y_sign, dtype=np.int8)
        self.l = self.y.shape[0]
        self.Cp = float(Cp)
        self.Cn = float(Cn)
        self.bias = float(bias)
        self.n_features = view.n_features
        self.w_size = view.n_features + (1 if bias >= 0 else 0)
        self.targets = None if targets is None else np.ascontiguousarray(targets, dtype=np.float64)
        self.cls = None if cls is None else np.ascontiguousarray(cls, dtype=np.int32)
        self.C_class = None if C_class is None else np.ascontiguousarray(C_class, dtype=np.float64)
        weights = getattr(view, "weights", None)
        self.weights = None if weights is None else (weights if rows is None else weights[self.rows])

    def columns(self, with_bias=True, extra_bytes=0, what=None):
        """The problem's columns as CSC (col_ptr int64, col_row int32 within the problem, col_val float64), the
        bias column included unless with_bias is false: what LIBLINEAR's transpose() gives its L1-regularized
        solvers (and -s local1d its coordinate steps). The memory is checked first: the columns and `extra_bytes`
        more (`what`: what the message calls them)."""
        from .._ext._oned import column_counts, column_fill
        col_ptr = column_counts(self.view.row_view(-1.0), self.rows, self.l)
        nnz = int(col_ptr[-1])
        bias = with_bias and self.bias >= 0
        total = nnz + (self.l if bias else 0)
        check_memory(12 * total + extra_bytes,
                     what or f"the columns of {self.l} rows with {nnz} non-zeros (a copy of the data, as LIBLINEAR's "
                             f"transpose makes) take {format_size(12 * total)}")
        col_row = np.empty(total, np.int32)
        col_val = np.empty(col_row.size, np.float64)
        column_fill(self.view.row_view(-1.0), self.rows, self.l, col_ptr, col_row, col_val)
        if bias:
            col_row[nnz:] = np.arange(self.l, dtype=np.int32)
            col_val[nnz:] = self.bias
            col_ptr = np.append(col_ptr, nnz + self.l)
        return col_ptr, col_row, col_val

    @property
    def args(self):
        """The rows as the kernels take them: the view's row view with this problem's bias, and `rows`."""
        return (self.view.row_view(self.bias), self.rows)

    def C(self):
        """C_i of every row: its class's C, times its weight when the rows have weights (docs/weights.md)."""
        C = np.where(self.y > 0, self.Cp, self.Cn)
        return C if self.weights is None else C * self.weights

    def sizes(self):
        """(rows of the positive class, rows) as LIBLINEAR's train_one counts them for its tolerances; with weights,
        the sums of the weights (a row of weight k counts as k rows: docs/weights.md)."""
        if self.weights is None:
            pos = int(np.count_nonzero(self.y > 0))
            return pos, self.l
        return float(self.weights[self.y > 0].sum()), float(self.weights.sum())

    def margins(self, w):
        out = np.empty(self.l, np.float64)
        K.xv(*self.args, w, out)
        return out

    def primal(self, w, l1_loss):
        """1/2 w.w + sum_i C_i loss_i (hinge for L1 loss, squared hinge otherwise)."""
        xi = np.maximum(0.0, 1.0 - self.y * self.margins(w))
        loss = xi if l1_loss else xi * xi
        return 0.5 * float(w @ w) + float(self.C() @ loss)

    def dual(self, alpha, w, l1_loss):
        """sum alpha - 1/2 w.w - 1/2 sum D_ii alpha_i^2 with w = sum alpha_i y_i x_i (maximization form)."""
        if l1_loss:
            d = 0.0
        else:       # a class weight of 0 makes C_i = 0: alpha_i is held at 0 and its term is 0
            C = self.C()
            d = float((alpha * alpha) @ np.divide(0.5, C, out=np.zeros_like(C), where=C > 0))
        return float(alpha.sum()) - 0.5 * float(w @ w) - 0.5 * d


# -- classes ----------------------------------------------------------------------------------------------------
# |integer part of a class label| < 2^63: the labels are 64-bit integers (issue 45; LIBLINEAR's and LIBSVM's are C
# ints, which a label beyond 2^31 overflows); the text parser's bound (cext/_libsvm.pyx, class_labels) is the same
CLASS_LABEL_BOUND = 2.0 ** 63


class Classes:
    """Integer labels (LIBLINEAR truncates) in order of first occurrence, discovered block by block."""

    def __init__(self, labels=()):
        self.labels = []
        self._sorted = np.empty(0, np.int64)
        self._cls = np.empty(0, np.int32)
        if len(labels):
            self.add(np.asarray(labels, np.float64))

    def add(self, y):
        """Class index per row (int32); new labels are appended. Returns (cls, number of new labels)."""
        yt = np.trunc(np.asarray(y, dtype=np.float64))
        if yt.size and not (np.abs(yt) < CLASS_LABEL_BOUND).all():
            raise ParameterError("a class label is beyond the int64 range (class labels are 64-bit integers: a label "
                                 "must be less than 2^63 = 9223372036854775808 in magnitude)")
        yi = yt.astype(np.int64)
        uniq, first = np.unique(yi, return_index=True)
        new = 0
        if self._sorted.size:
            pos = np.searchsorted(self._sorted, uniq)
            known = (pos < self._sorted.size) & (self._sorted[np.minimum(pos, self._sorted.size - 1)] == uniq)
        else:
            known = np.zeros(uniq.size, bool)
        if not known.all():
            fresh = uniq[~known][np.argsort(first[~known], kind="stable")]
            self.labels.extend(fresh.tolist())
            new = fresh.size
            labs = np.array(self.labels, np.int64)
            order = np.argsort(labs, kind="stable")
            self._sorted = labs[order]
            self._cls = order.astype(np.int32)
        return self._cls[np.searchsorted(self._sorted, yi)], new

    @property
    def swapped(self):
        """LIBLINEAR's one reordering: a two-class {-1, +1} set seen -1 first is stored as label 1 -1."""
        return swapped(self.labels)

    def problems(self, C, weights, reporter=None):
        """(pos, Cp, Cn) of every binary problem for the classes seen so far: one for one or two classes (class 0
        positive), one per class otherwise (one-vs-rest, the class against C of the rest), none for no class (no
        rows: a fold of leave-one-out on one row, where LIBLINEAR's train makes none). With a reporter, weights of
        absent labels are warned about (LIBLINEAR's words)."""
        wC = class_costs(C, weights, self.labels, reporter).tolist()
        if not self.labels:
            return []
        if len(self.labels) <= 2:
            return [(0, wC[0], wC[1] if len(self.labels) == 2 else float(C))]
        return [(k, wC[k], float(C)) for k in range(len(self.labels))]


# Python objects one binary problem or class pair keeps besides its arrays: its Subproblem or (i, j, rows, y) tuple,
# FitResult and records (measured with tracemalloc: about 1.2 KiB for a one-vs-rest problem, 1.5 KiB for a pair of
# -s smo, 2.6 KiB for a tree of -s h1tree; rounded up)
PROBLEM_OBJECT_BYTES = 2048
PAIR_OBJECT_BYTES = 2048
TREE_OBJECT_BYTES = 4096


def check_ovr(k, l, n_features, sets=1, *, budget=None):
    """Refuse the one-vs-rest problems of k classes over l rows before any is made (k > 2; two classes make one
    problem): each holds its labels (l bytes), its dual variables (8 l) and its weight vector, stacked into the
    model (twice 8 (n_features + 1)). `sets`: how many such sets are held at once (the -C search keeps every
    fold's)."""
    if k <= 2:
        return
    per = 9 * int(l) + 16 * (int(n_features) + 1) + PROBLEM_OBJECT_BYTES
    check_classes(k, f"{k} one-vs-rest problems over {l} rows" + (f" in each of {sets} folds" if sets > 1 else ""),
                  sets * k * per, "labels, dual variables and weight vectors", budget=budget)


def check_ovo(k, l, what="rows, labels, coefficients and model", per_row=33, per_pair=PAIR_OBJECT_BYTES):
    """Refuse the one-vs-one class pairs of k classes over l rows before any is made (LIBSVM's svm_train, -s smo,
    the online solvers, -s h1tree): every row is in k - 1 pairs, and each (pair, row) costs `per_row` bytes (a
    kernel solver's: its row index 8 and label 1, its coefficient 8 and alpha 8, the model's sv_coef 8), each
    pair `per_pair` more."""
    if k <= 2:
        return
    P = k * (k - 1) // 2
    check_classes(k, f"{P} class pairs (one-vs-one) over {l} rows", per_row * (k - 1) * int(l) + per_pair * P, what)


def one_vs_rest(view, cls, labels, rows, params, reporter):
    """The binary subproblems of a random-access run over (view, rows): Classes.problems' split and costs, with
    labels (model order) and the class index of every row of the view; rows None: all of them."""
    c = cls if rows is None else cls[rows]
    return [Subproblem(view, np.where(c == pos, 1, -1).astype(np.int8), Cp, Cn, rows=rows, bias=params.bias)
            for pos, Cp, Cn in Classes(labels).problems(params.C, params.weights, reporter)]


# --threads N on one problem pays only when a pass is long enough to share (a Newton round, a dual CD pass): below
# THREAD_MIN_NNZ non-zeros the thread pool's start and each round's hand-over cost more than the pass (measured
# on a9a, 451,592 non-zeros: 1.44x one thread for -s 2); PASSCoDe also needs rows that rarely share a feature
# (PASSCODE_MAX_DENSITY: on a9a, 11 %, its atomic additions collide and stale reads multiply the iterations: 5x)
# PASSCoDe (-s 1/3 on N threads, DCDState.run_passcode) is off: since the dual CD's passes prefetch their rows,
# one thread is faster than two on this 2-core machine (make bench part threads, generated sparse seeds 1-4: one
# thread 0.33-0.43x LIBLINEAR, two 0.42-0.60x; each atomic addition costs more than the rest of a non-zero's work,
# and plain additions doubled the iterations); True turns it on for a problem above both thresholds. Off, a
# problem above THREAD_MIN_NNZ with --threads 2 or more runs one thread's passes with a scout thread reading the
# rows ahead (dcd.train_one: the same iterates, bit for bit)
THREAD_MIN_NNZ = 4_000_000
PASSCODE = False
PASSCODE_MAX_DENSITY = 0.01


def problem_threads(sub, threads, sparse=False):
    """The threads one problem of --threads `threads` runs on: `threads` when its rows hold THREAD_MIN_NNZ
    non-zeros or more (and, `sparse` (PASSCoDe), when PASSCODE is on and at most PASSCODE_MAX_DENSITY of their
    entries are non-zero), else 1."""
    if threads <= 1 or (sparse and not PASSCODE):
        return 1
    view = sub.view
    n_rows = max(int(view.n_rows), 1)
    nnz = float(view.nnz) * sub.l / n_rows               # the problem's rows' share of the view's non-zeros
    if nnz < THREAD_MIN_NNZ:
        return 1
    if sparse and nnz > PASSCODE_MAX_DENSITY * sub.l * max(int(view.n_features), 1):
        return 1
    return threads


# A scout thread (-s 1/3/7/12/13 on --threads 2 and up) pays only when a core is idle for it: on a busy machine it
# takes part of the pass's own share of a core. Sparse seed 2, -s 3 -c 1 -B 1, two CPU-bound processes beside it:
# one thread 3.9-5.1 s, with the scout 5.2-5.9 s (quiet: 2.39-2.41 s and 2.20-2.26 s with it). PROBES looks at
# /proc/stat's count of running threads (less this process's own), the fewest taken.
PROBES = 3
PROBE_GAP = 0.001       # seconds between the looks


def others_running():
    """Threads of other processes running or runnable now (/proc/stat's procs_running less this process's threads in
    state R, /proc/self/task: its own OpenMP workers spin a while after a parallel region), the fewest of PROBES
    looks; None where that cannot be read (not Linux)."""
    seen = []
    try:
        for k in range(PROBES):
            if k:
                time.sleep(PROBE_GAP)       # a kernel thread's moment of work is not a busy machine
            with open("/proc/stat", "rb") as f:
                running = next((int(line.split()[1]) for line in f if line.startswith(b"procs_running")), None)
            if running is None:
                return None
            own = 0
            for task in os.listdir("/proc/self/task"):
                try:
                    with open(f"/proc/self/task/{task}/stat", "rb") as f:
                        own += f.read().rpartition(b")")[2].split()[0] == b"R"
                except OSError:         # the thread ended meanwhile
                    pass
            seen.append(running - own)
    except (OSError, ValueError, IndexError):
        return None
    return max(0, min(seen))


def scout_pays(sub, threads):
    """Whether the one-thread passes over sub take a scout thread: --threads 2 and up on a long pass
    (problem_threads), and a core that no other thread runs on now (others_running; unknown: assumed idle). The
    count is the whole machine's, so it is weighed against the machine's CPUs (os.cpu_count), not the ones this
    process may use: a process pinned to 2 CPUs of a large host keeps its scout while the host has room. The model
    is the same either way (the scout only reads)."""
    if problem_threads(sub, threads) <= 1:
        return False
    others = others_running()
    return others is None or (os.cpu_count() or 1) - 1 - others >= 1


def idle_threads(threads):
    """The threads a kernel solve of --threads `threads` takes: no more than the cores that no other process's
    thread runs on now (others_running, weighed against os.cpu_count as scout_pays weighs it; unknown: all of
    them), and at least one. Every pair of LIBSVM's solver opens up to four OpenMP regions (the pair search's two
    passes, the columns, the gradient's updates), each of which waits for its slowest thread, so a thread whose
    core another process holds stalls each of them: -s smo --threads 2 on a9a took 5.5 s beside one CPU-bound
    process against 2.2 s on one thread (issue 49). The model is the same on any number of threads (every kernel
    value and every sum is computed alike), so only the time depends on it. One look, when the solve starts."""
    if threads <= 1:
        return threads
    others = others_running()
    if others is None:
        return threads
    return max(1, min(threads, (os.cpu_count() or 1) - others))


def class_grouping(cls, rows):
    """The order of LIBLINEAR's train() over the rows of (cls, rows): positions into rows (None: all rows) that
    group them by class in the model's label order, each class's rows in their own order (group_classes' perm).
    The Newton solvers sum over the rows in this order so that they round as LIBLINEAR does."""
    return np.argsort(cls if rows is None else cls[rows], kind="stable")


def swapped(labels):
    return len(labels) == 2 and labels[0] == -1 and labels[1] == 1


def group_classes(y):
    """(labels, class index of every row): LIBLINEAR's group_classes, in the model's label order.

    Labels are the integer parts of y in order of first occurrence, except that a two-class {-1, +1} set whose
    first label is -1 is swapped so that label[0] = +1.
    """
    classes = Classes()
    cls, _ = classes.add(y)
    labels = np.array(classes.labels, dtype=np.int64)
    cls = cls.astype(np.int64)
    if classes.swapped:
        labels = labels[::-1].copy()
        cls = 1 - cls
    return labels, cls


def stacked_weights(labels, results):
    """(labels, W) of a run whose problems were trained with classes in first-occurrence order, in the model's
    label order: with LIBLINEAR's {-1,+1} swap the single problem is its mirror image (its w is negated)."""
    labs = np.array(labels, dtype=np.int64)
    W = np.stack([r.w for r in results], axis=1)
    if swapped(labels):
        labs = labs[::-1].copy()
        W = -W
        for r in results:
            r.w = -r.w
    return labs, W


def class_costs(C, weights, labels, reporter=None):
    """C of every class (labels in class order) after LIBLINEAR's -wi weights; weighted labels that are not among
    `labels` are warned about through the reporter, in LIBLINEAR's words."""
    wC = np.full(len(labels), float(C))
    for lab, weight in weights:
        hit = np.flatnonzero(np.asarray(labels) == int(lab))
        if hit.size == 0:
            if reporter is not None:
                reporter.warning(f"WARNING: class label {int(lab)} specified in weight is not found\n")
        else:
            c = float(wC[hit[0]]) * float(weight)        # Python floats: an overflow is inf, not a RuntimeWarning
            if not np.isfinite(c):
                raise ParameterError(f"-w{int(lab)} {float(weight):g}: the class's C, {float(C):g} x "
                                     f"{float(weight):g}, overflows")
            wC[hit[0]] = c
    return wC


# -- seeds ------------------------------------------------------------------------------------------------------
class Seeds:
    """Sub-seeds drawn in a fixed order from the one seeded RNG (the in-memory trainer: problems and folds)."""

    def __init__(self, seed):
        self.state = _random.rng_state(int(seed) & 0xFFFFFFFFFFFFFFFF)

    @classmethod
    def at(cls, state):
        """Seeds that continue from an RNG state (a copy of another Seeds' .state)."""
        seeds = cls.__new__(cls)
        seeds.state = np.array(state, np.uint64)
        return seeds

    def next(self):
        return int(_random.rng_draw(self.state))

    def permutation(self, n):
        return _random.permutation(n, self.state)

    def permutations(self, sizes):
        """The permutations of permutation(n) for each n of sizes, in turn, concatenated (one int64 array)."""
        return _random.permutations(np.ascontiguousarray(sizes, np.int64), self.state)


class LibsvmRand:
    """The random numbers of LIBSVM's svm-train (--libsvm-rand): glibc's rand() from the state of a program that
    never calls srand (svm-train does not), each permutation LIBSVM's shuffle `j = i + rand() % (n - i)` (the C
    kernel: cext/_random.pyx), one rand() call a row. Seeds' permutation interface, so the folds drawn from it are
    svm-train's. skip: the calls made before (svm-train's one stream for the whole process: a fold of -v starts
    after the folds' and the earlier folds' calls); `drawn` counts the calls from the first state."""

    def __init__(self, skip=0):
        self.state = _random.glibc_rand_state(1)
        self.drawn = 0
        while self.drawn < skip:
            _random.glibc_rand(self.state, min(skip - self.drawn, 1 << 20))
            self.drawn = min(skip, self.drawn + (1 << 20))

    def permutation(self, n):
        return self.permutations([n])

    def permutations(self, sizes):
        sizes = np.ascontiguousarray(sizes, np.int64)
        self.drawn += int(sizes.sum())
        return _random.glibc_permutations(sizes, self.state)


def libsvm_rand(params):
    """Whether a run draws as svm-train (--libsvm-rand)."""
    return bool(getattr(params.options, "libsvm_rand", False))


def fold_draws(params):
    """(where -v's and the grid's folds are drawn from, where the folds' seeds are drawn from): the one Seeds of
    --seed for both, or, with --libsvm-rand (LIBSVM's types), svm-train's rand() for both (fold_seeds)."""
    seeds = Seeds(params.seed)
    return (LibsvmRand() if libsvm_rand(params) else seeds), seeds


def training_draws(params):
    """Where a LIBSVM training draws -b 1's fold permutations from: the Seeds of --seed, or, with --libsvm-rand,
    svm-train's rand() after params.rand_skip calls (0 for a training of its own; a fold's: fold_seeds)."""
    return LibsvmRand(params.rand_skip) if libsvm_rand(params) else Seeds(params.seed)


def libsvm_draws(params, y):
    """The rand() calls of LIBSVM's svm_train on labels y: -b 1's 5-fold permutation of every pair's rows (C-SVC
    and nu-SVC: k classes, k - 1 pairs per row) or of the rows (epsilon-SVR and nu-SVR); none otherwise."""
    if not getattr(params.options, "probability", 0):
        return 0
    if params.spec.name in ("smo", "nu_svc"):
        k = group_classes(np.asarray(y))[0].size
        return (k - 1) * int(np.asarray(y).size) if k else 0
    return int(np.asarray(y).size) if params.spec.name in ("epsilon_svr", "nu_svr") else 0


def fold_seeds(params, rand, seeds, folds, y, weights=None):
    """The seed of every fold's training: the next draws of `seeds`, or, with --libsvm-rand, the rand() calls
    before the fold's training in svm-train (`rand`'s, the folds', then each earlier fold's: libsvm_draws of its
    training rows), which the fold's params carry as rand_skip (and seed)."""
    if not isinstance(rand, LibsvmRand):
        return [seeds.next() for _ in folds]
    out, at = [], rand.drawn
    for tr, _ in folds:
        out.append(at)
        at += libsvm_draws(params, np.asarray(y)[positive_rows(weights, tr)])
    return out


def problem_seed(seed, k):
    """The seed of binary problem k of a run seeded with `seed` (the out-of-core drivers)."""
    return (int(seed) * 0x9E3779B97F4A7C15 + k + 1) & 0xFFFFFFFFFFFFFFFF


# -- numerics the solvers share -------------------------------------------------------------------------------------
def expit(z):
    """1 / (1 + exp(-z)) without overflow (numpy only: scipy.special costs its import in every process)."""
    return np.exp(-np.logaddexp(0.0, -z))


def c_arithmetic():
    """np.errstate for a certificate's arithmetic (the primal, dual, gap, violation and objective a solver reports):
    an overflow gives inf and inf - inf gives nan without numpy's RuntimeWarning, as C's doubles give them and as
    LIBLINEAR prints them ("Objective value = inf", "init f inf |g| -nan" at -c 1e308). Not a silence: the value
    says it (FitResult, the printed lines), and a model that is not finite is refused where it is saved
    (NonFiniteModelError; BaseModel.check_finite names the value). A fresh context each time: thread-safe."""
    return np.errstate(over="ignore", invalid="ignore")


def xlogx(x):
    """x log x with 0 log 0 = 0."""
    x = np.asarray(x, np.float64)
    out = np.zeros_like(x)
    pos = x > 0
    out[pos] = x[pos] * np.log(x[pos])
    return out


# -- what every solver prints -----------------------------------------------------------------------------------
WARN_MAX_ITER = "\nWARNING: reaching max number of iterations\n"


def report_finished(reporter, n_iter, objective, nSV, iter_name="#iter", blank_line=True, after_first="", before="",
                    last=""):
    """LIBLINEAR's closing lines of one binary problem: `optimization finished` (after a blank line, as LIBLINEAR's
    dots end), `Objective value` (the minimization objective) and `nSV` (None: no such line). after_first: text
    between the first two lines (the iteration-limit warning of -s 4, 5, 6 and 21); before: text before them (the
    line of = of -s 6's Newton); last: a closing line of the solver's own (-s 5/6: #nonzeros/#features)."""
    if before:
        reporter.info(before)
    reporter.info(f"{chr(10) if blank_line else ''}optimization finished, {iter_name} = {n_iter}\n")
    if after_first:
        reporter.info(after_first)
    reporter.info(f"Objective value = {objective:f}\n")
    if nSV is not None:
        reporter.info(f"nSV = {nSV}\n")
    if last:
        reporter.info(last)


def event_buffer(max_iter, extra=64):
    """A buffer for a kernel's progress characters ('.' every 10 iterations, '*' per restart, extra for others)."""
    return np.zeros(2 * min(max_iter, 1 << 22) // 10 + extra, np.int8)


def say_events(reporter, buf, n):
    """Print the first n progress characters a kernel left in buf."""
    if reporter is not None and n:
        reporter.info(buf[:n].tobytes().decode("ascii"))


def warn_max_iter(reporter, hint=""):
    """LIBLINEAR's iteration-limit warning, for every solver: on the info stream (LIBLINEAR prints it with info(),
    so -q silences it), after the problem's closing lines; `hint` is LIBLINEAR's advice that follows it."""
    reporter.info(WARN_MAX_ITER + hint)


# -- --json metrics ---------------------------------------------------------------------------------------------
def _labels(model):
    return [] if model.label is None else [int(v) for v in model.label]


def _class_label(model, results, k):
    return int(model.label[k]) if len(results) > 1 and model.label is not None else None


JSON_FIELDS = ("solver_number", "C", "eps", "bias", "seed", "threads", "nr_class", "labels", "classes")


def liblinear_metrics(model, params, ds):
    """--json of the in-memory solvers: the certificate summed over the binary problems, and one per problem."""
    res = model.meta["results"]
    return {
        "solver": params.spec.solver_type, "solver_number": params.solver,
        "n_rows": ds.n_rows, "n_features": ds.n_features, "nnz": ds.nnz,
        "n_iter": max(r.n_iter for r in res), "primal": sum(r.primal for r in res),
        "dual": sum(r.dual for r in res), "gap": sum(r.gap for r in res),
        "max_violation": max(r.max_violation for r in res), "nSV": sum(r.nSV for r in res),
        "converged": all(r.converged for r in res),
        **echo(params, "C", "eps", "bias", "seed", "threads"), "nr_class": model.nr_class, "labels": _labels(model),
        "classes": [{"label": _class_label(model, res, k), "n_iter": r.n_iter,
                     "primal": r.primal, "dual": r.dual, "gap": r.gap, "max_violation": r.max_violation,
                     "nSV": r.nSV, "converged": r.converged} for k, r in enumerate(res)],
    }
