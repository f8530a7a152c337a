"""-s llsvm: the one-pass harsh-shrinking solver with a binary active-set file and block optimization, and (by
default) re-check passes over the whole input that certify the result.

Alrajeh, Takeda, Niranjan, "Memory-efficient large-scale linear support vector machine", ICMV 2014 (Algorithm 2:
phases 1 and 2, which are all of --one-pass); phase 3 is llsvm's. The hinge-loss dual of LIBLINEAR's -s 3; the
kernels are in cext/_llsvm.pyx.

1. First pass (lines 1-8). The input streams by once, block by block (text is parsed on a second thread while
   the kernel works on the previous block). Every row gets one dual coordinate step from alpha = 0 and w is
   updated in place. Rows left with 0 < alpha < C are appended, with their row id and alpha, to the problem's
   active-set file (the project's binary format, flags "row ids" and "alpha"); the others are gone for good
   (alpha stays 0 or C; a row at C stays in w). One status byte per row and problem records where its alpha is
   and whether the row is in the active set. Text and stdin input are also copied to a binary file (not with
   --one-pass), which the re-check passes read.
2. Block optimization (lines 9-21). As many rows of the active-set file as the memory budget allows are loaded
   (so the number of blocks follows the active set's size), `inner_iter` shuffled passes of the step are run over
   them, then the next rows; rows that reached 0 or C are dropped. With --one-pass the file is rewritten without
   them at every outer iteration (the paper's Algorithm 2); in the default mode it is left as written (_Lazy: the
   rows' alpha in memory, a dropped row only marked in its status byte) and rewritten when more than half of it is
   dead and at the end of the outer iterations, and a block's rows are visited through the list of its live ones.
   When the whole active set fits the budget it stays in memory and is compacted in place instead. Stop when the
   dual objective D = sum(alpha) - |w|^2/2 changed by at most inner_eps relatively over one outer iteration (the
   paper's criterion), or after max_iter outer iterations. With re-check passes, also not before the last sweep's
   largest violation is within SWEEP_FRACTION x eps (over several blocks, each block's first inner pass counts
   too: its rows as its turn finds them), and a row at a bound stays while its gradient points out by at most the
   block's last-pass violation (LIBLINEAR's shrinking test).
3. Re-check passes (not with --one-pass). One pass over the whole input at w computes every row's projected
   gradient from its status byte (the exact primal, gap and largest violation of w); the dropped rows that
   violate come back into the active set with their alpha, and block optimization resumes. Stop when a pass finds
   max |PG| <= eps over every row, or after max_passes passes.

Classes are one-vs-rest (two classes: one problem, LIBLINEAR's label order and {-1,+1} swap), all fed by the same
single pass. The class set is discovered while streaming: when a new class first appears, its problem (and any
problem whose costs change) is brought up to date by replaying the rows before it, from memory when they were
kept (a bounded prefix), else by re-reading the input (impossible for stdin: a clear error). Every problem thus
sees the rows in stream order, so text, stdin and binary input give the same model.
"""
import os
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np

from .._ext import _linear as KL
from .._ext import _llsvm as K
from .._ext._rowops import compact_rows
from ..binfmt import Arena, BinaryDataset, BinaryWriter, RowError
from ..dataset import CSRDataset, norm_overflow
from ..errors import DataFormatError, LLSVMError, ParameterError
from ..fileutil import ScratchFiles
from .. import memory
from ..models.linear import Model
from .._ext._random import rng_state
from ..memory import MIN_BUDGET
from ..params import echo
from ..report import restage
from .common import (EMPTY_ROWS, PROBLEM_OBJECT_BYTES, Classes, FitResult, class_costs, problem_seed, sq_norm,
                     report_finished, stacked_weights, warn_max_iter)
from .outofcore import Input, OutOfCoreSolver, counted

ROW_BYTES = 48            # a loaded active row: label, offset, row id, alpha, QD, order, sign
WEIGHT_BYTES = 8          # and its weight, when the rows are weighted (the active-set file keeps the column)
ALPHA_BYTES = 8           # a row of an active-set file streamed without rewriting it: its alpha, held (_Lazy)
# per-row state of every problem: one status byte, the kernel's: where alpha is (ZERO, AT_CP, FREE, AT_CN: the
# STATE bits) and IN_SET when the row is in the active set; ACTIVE = FREE | IN_SET
ZERO, AT_CP, FREE, AT_CN, STATE, IN_SET, ACTIVE = K.ZERO, K.AT_CP, K.FREE, K.AT_CN, K.STATE, K.IN_SET, K.ACTIVE
STATUS_BYTES = 1
OPEN_FILES_SLACK = 64          # files -s llsvm may hold open besides one per problem (input, its copy, a re-check's)
# re-check passes: a row outside the active set comes back at alpha = 0 when G < REENTER, at C when G > -REENTER
# (0: every violator, as LIBLINEAR's unshrinking brings every row back); block optimization sweeps until its
# violations are within SWEEP_FRACTION x eps (docs/solvers.md, "-s llsvm", has the measurements behind both)
REENTER = 0.0
SWEEP_FRACTION = 0.5
# a re-check pass holds RECHECK_BLOCKS blocks of the input at most: the one it works on, the one read ahead and the
# rows it takes out of one
RECHECK_BLOCKS = 3

@dataclass
class _Trace:
    active_first: int = 0
    active: list = field(default_factory=list)      # after each outer iteration
    dual: list = field(default_factory=list)        # D after the first pass, then after each outer iteration
    blocks: list = field(default_factory=list)      # blocks used in each outer iteration
    block_dual: list = field(default_factory=list)  # D after every block optimization (non-decreasing)
    seconds: list = field(default_factory=list)     # wall time at each record (from the start of training)
    recheck: list = field(default_factory=list)     # one record per re-check pass


class _Bytes:
    """A growable uint8 array (one status byte per row)."""

    def __init__(self):
        self.a = np.zeros(1 << 16, np.uint8)
        self.n = 0

    def put(self, start, values):
        end = start + values.shape[0]
        if end > self.a.shape[0]:
            b = np.zeros(max(end, 2 * self.a.shape[0]), np.uint8)
            b[:self.n] = self.a[:self.n]
            self.a = b
        self.a[start:end] = values
        self.n = max(self.n, end)

    def view(self):
        return self.a[:self.n]


class _Problem:
    """One binary problem: rows with class `pos` are +1, the others -1; costs Cp, Cn."""

    def __init__(self, k, pos, Cp, Cn, cap, seed, directory, write_block_bytes, float32, weighted=False):
        self.k, self.pos, self.Cp, self.Cn = k, pos, float(Cp), float(Cn)
        self.weighted = bool(weighted)        # the rows carry weights: C_i = Cp or Cn times the row's weight
        self.w = np.zeros(cap + 1)            # w[cap] is the bias weight
        self.rng = rng_state(problem_seed(seed, k))
        self.status = _Bytes()
        self.sum_alpha = 0.0
        self.path = os.path.join(directory, f"active-{k}.bin")
        self.float32 = float32
        self.scratch = ScratchFiles(directory, f"spare-{k}-")     # the active-set files' pages, reused
        self.writer = self.set_writer(self.path, write_block_bytes)
        self.trace = _Trace()
        self.memory_set = None                # the active set when it is held in memory
        self.arena = None                     # binfmt.Arena: recycled memory of the streamed blocks
        self.held = None                      # -s llsvm streaming its active set: the last block, kept
        self.lazy = None                      # _Lazy: the active-set file streamed without rewriting it
        self.open_set = None                  # the active-set file's writer, left open for a re-check pass
        self.n_iter = 0
        self.inner_converged = False          # the last block optimization met inner_eps
        self.rechecks = 0
        self.certified = False                # a re-check pass found max |PG| <= eps over every row
        self.cert = None                      # that pass's primal, dual, gap and max_violation
        self.add_writer = None
        self.sweep_violation = 0.0            # the largest |PG| of the last inner pass of an outer iteration
        self.output = []

    def definition(self):
        return (self.pos, self.Cp, self.Cn)

    def set_writer(self, path, block_bytes):
        """A writer of active rows (row ids, alpha, and the rows' weights when weighted) over the problem's
        spare files."""
        return BinaryWriter(path, row_ids=True, alpha=True, float32=self.float32, block_bytes=block_bytes,
                            fsync=False, scratch=self.scratch, weights=self.weighted)

    def costs(self, positive, weights):
        """C_i of rows (positive: whether each is of class pos; their weights, None without)."""
        C = np.where(positive, self.Cp, self.Cn)
        return C if weights is None else C * weights

    def grow(self, cap):
        old = self.w.shape[0] - 1
        w = np.zeros(cap + 1)
        w[:old] = self.w[:old]
        w[cap] = self.w[old]
        self.w = w

    def dual(self):
        return self.sum_alpha - 0.5 * sq_norm(self.w)

    def step_block(self, block, cls, QD, row0, cap, bias, warm=False):
        """The first pass over one block: one step per row, active rows to the file, outcome per row. `warm` (-i):
        from the alpha the status bytes record (OnePassSolver._warm_pass), which w holds, rather than from 0."""
        n = block.n_rows
        if warm:
            alpha = _alpha_of(self.status.view()[row0:row0 + n], self.Cp, self.Cn, block.weights)
        else:
            alpha = np.empty(n)
        self.sum_alpha += K.first_pass(block.row_view(bias, cap), cls, self.pos, QD, self.w, self.Cp, self.Cn,
                                       alpha, warm)
        pos = cls == self.pos
        C = self.costs(pos, block.weights)
        active = (alpha > 0.0) & (alpha < C)
        st = np.where(alpha == 0.0, ZERO, np.where(active, ACTIVE, np.where(pos, AT_CP, AT_CN))).astype(np.uint8)
        self.status.put(row0, st)
        rows = np.flatnonzero(active)
        if rows.size:
            sub = block.take_rows(rows)
            act = CSRDataset(np.where(pos[rows], 1.0, -1.0), sub.indptr, sub.indices, sub.values, cap,
                             row_ids=rows + row0, alpha=alpha[rows], weights=sub.weights, check=False)
            self.writer.write_dataset(act, owned=True)        # fresh arrays: held back without a copy

    def abort(self):
        self.writer.abort()
        for w in (self.add_writer, self.open_set):
            if w is not None:
                w.abort()


class _Elsewhere:
    """Problem k of a run that trains another problem alone (OnePassSolver.only): its definition, no state."""

    def __init__(self, k, pos, Cp, Cn):
        self.k, self.pos, self.Cp, self.Cn = k, pos, float(Cp), float(Cn)

    definition = _Problem.definition

    def abort(self):
        pass


class _Lazy:
    """An active-set file block optimization streams without rewriting it (not with --one-pass): the rows that
    leave the active set stay in the file (their status bytes lose IN_SET, which is what tells them apart), the alpha
    of every row of the file is here (taken from the file as each block is first loaded), and the rows and non-zeros
    still in the active set are counted. Rewritten without its dead rows (_rewrite with lazy) when they are more
    than half of it and at the end of the outer iterations; gathered into memory when its live rows fit the
    budget. Between those, rows only leave: a re-check pass, which brings rows back, runs after the rewrite."""

    def __init__(self, f):
        self.alpha = np.empty(f.n_rows)       # ALPHA_BYTES a row
        self.filled = np.zeros(f.n_blocks, bool)
        self.live_rows, self.live_nnz = int(f.n_rows), int(f.nnz)
        self.held_range = None            # the blocks of p.held

    def alpha_of(self, f, b, e, loaded):
        """The alpha of blocks b..e-1 (a view, updated in place), filled from `loaded` (the file's) where no
        block of them was loaded before."""
        r0 = int(f.block_first_row[b])
        for c in range(b, e):
            if not self.filled[c]:
                a = int(f.block_first_row[c])
                self.alpha[a:a + int(f.block_rows[c])] = loaded[a - r0:a - r0 + int(f.block_rows[c])]
                self.filled[c] = True
        return self.alpha[r0:r0 + loaded.shape[0]]


def _kept(ds, keep, alpha):
    """A loaded block's rows `keep` (in order), moved down in place (the budget holds the block once, not twice),
    with their `alpha`."""
    nnz = compact_rows(ds.indptr, ds.indices, ds.values, keep)
    return CSRDataset(ds.y[keep], ds.indptr[:keep.size + 1], ds.indices[:nnz], ds.values[:nnz], ds.n_features,
                      row_ids=ds.row_ids[keep], alpha=alpha[keep],
                      weights=None if ds.weights is None else ds.weights[keep], check=False)


def _groups(f, lo, hi, budget, weighted):
    """Blocks lo..hi-1 of the active-set file f in consecutive runs (b, e) of as many blocks as `budget` bytes
    hold loaded (one at least)."""
    b = lo
    while b < hi:
        e, used = b, 0
        while e < hi:
            more = _loaded_bytes(None, int(f.block_rows[e]), int(f.block_nnz[e]), f.float32, weighted)
            if e > b and used + more > budget:
                break
            used += more
            e += 1
        yield b, e
        b = e


def _lazy_fits(f, budget, weighted):
    """Whether the file f may be streamed without rewriting it (_Lazy) under `budget`: the alpha of its rows
    (8 bytes each) and its largest block fit together."""
    return ALPHA_BYTES * f.n_rows + _largest_block(f, weighted) <= budget


def _largest_block(f, weighted):
    """Bytes of the largest block of f loaded."""
    if not f.n_blocks:
        return 0
    return max(_loaded_bytes(None, int(r), int(z), f.float32, weighted) for r, z in zip(f.block_rows, f.block_nnz))


def _take(p, name):
    """p's attribute `name`, which becomes None (the caller then holds the only reference)."""
    value = getattr(p, name)
    setattr(p, name, None)
    return value


def _loaded_bytes(ds, n_rows=None, nnz=None, float32=None, weighted=False):
    """Bytes of active rows loaded in memory (ds, or n_rows rows with nnz non-zeros, weighted or not)."""
    if ds is not None:
        n_rows, nnz, float32 = ds.n_rows, ds.nnz, ds.values.dtype == np.float32
        weighted = ds.weights is not None
    return (ROW_BYTES + (WEIGHT_BYTES if weighted else 0)) * n_rows + ((4 if float32 else 8) + 4) * nnz


def _alpha_of(status, Cp, Cn, weights=None):
    """The alpha a status byte records for a row at a bound: 0 or C_i, Cp or Cn times the row's weight (`weights`,
    None without) (0 too for a free row, whose alpha is in the active set)."""
    st = status & STATE
    alpha = np.where(st == AT_CP, Cp, np.where(st == AT_CN, Cn, 0.0))
    return alpha if weights is None else alpha * weights


def _budget_split(memory, n_parallel):
    if memory is None:
        return None
    return max(MIN_BUDGET // 2, memory // max(1, n_parallel))


class OnePassSolver(OutOfCoreSolver):
    """Drives the two phases for all problems of one training run."""

    name = "llsvm"
    READ_AHEAD = True             # re-check passes read the next block of a binary input on a helper thread

    def __init__(self, params=None, reporter=None, **kw):
        super().__init__(params, reporter, **kw)
        m = self.opt.memory
        # the first pass holds about 3 parser blocks (one parsing, one queued, one in the kernel) and the writers'
        # pending blocks; together about half the budget
        self.chunk = 16 << 20 if m is None else int(min(16 << 20, max(256 << 10, m // 8)))
        self.block_bytes = self.chunk_size = self.chunk

    # -- phase 1 ------------------------------------------------------------------------------------------------
    def _first_pass(self, src, directory, pool, problems):
        """Phase 1 over `src`: the problems it makes go into `problems` (the caller's list, so that the caller
        aborts their active-set writers, whatever is raised here)."""
        classes = Classes()
        mine = []                      # the problems this run trains (all, or `only`)
        cap = 0
        n_rows = nnz = 0
        n_features = 0
        kept = []                      # the prefix of blocks held for replay, while it is small
        kept_bytes = 0
        keep_limit = (32 << 20) if self.opt.memory is None else self.opt.memory // 8
        replay_from_memory = True
        writer_bytes = 8 << 20 if self.opt.memory is None else None
        float32 = None
        warm = None
        if self.warm is not None:
            # -i: the classes, the weights and the status bytes of the start, before the first pass
            classes, cap, warm = self._warm_pass(src, directory)

        def QD_of(block):
            q = np.empty(block.n_rows)
            KL.sq_norms(block.row_view(self.bias), EMPTY_ROWS, q)
            if not np.isfinite(q).all():
                # a row the binary copy would refuse (--one-pass reads text without one): refused the same way
                k = int(np.argmin(np.isfinite(q)))
                a, b = int(block.indptr[k]), int(block.indptr[k + 1])
                row = int(getattr(block, "first_row", 0) or 0) + k
                with np.errstate(over="ignore", invalid="ignore"):
                    own = float(np.square(block.values[a:b], dtype=np.float64).sum())
                if not np.isfinite(own):
                    raise RowError(row, norm_overflow(block.indices[a:b], block.values[a:b]))
                raise ParameterError(f"-B {self.bias:g}: with the bias coordinate the squared norm of row {row + 1} "
                                     "overflows")
            return q

        def replay(new_problems, upto):
            """Bring new problems up to row `upto` by running their first pass over the rows before it."""
            if upto == 0 or not new_problems:
                return
            if replay_from_memory:
                blocks = iter(kept)
            elif src.stdin:
                raise LLSVMError(f"class {classes.labels[-1]} first appears after row {upto} of standard input, "
                                 "beyond the rows -s llsvm keeps for late classes: train from a file (text or "
                                 "binary) or raise --memory")
            else:
                blocks = src.blocks()
            done = 0
            for b in blocks:
                if done >= upto:
                    break
                if b.n_rows > upto - done:
                    b = b.slice(0, upto - done)
                c, _ = classes.add(b.y)
                q = QD_of(b)
                for p in new_problems:
                    p.step_block(b, c, q, done, cap, self.bias)
                done += b.n_rows

        # the re-check passes read the input again: text (and stdin) is copied to a binary file as it is parsed
        copy = None
        if not self.opt.one_pass and not src.known:
            copy = self._copy = BinaryWriter(os.path.join(directory, "input.bin"), block_bytes=self.chunk,
                                             fsync=False, weights=src.weighted)
        for block in src.blocks(prefetch=True, progress=True):
            if copy is not None:
                # here rather than on the parser's thread, which is the first pass's bottleneck (measured on the
                # generated sparse set: first pass 2.0 s against 2.7 s, medians of two)
                copy.write_dataset(block)
            if block.n_rows == 0:
                continue
            if float32 is None:
                float32 = block.dtype == np.float32
                wb = writer_bytes or max(64 << 10, min(8 << 20, self.opt.memory // 16))
            row0 = n_rows
            nf = max(int(block.n_features or 0), int(block.indices.max()) + 1 if block.indices.size else 0)
            n_features = max(n_features, nf)
            if n_features > cap:
                self.check_weights(n_features, len(problems))
                cap = max(n_features, 2 * cap, 1024)
                for p in problems:
                    p.grow(cap)
            cls, new = classes.add(block.y)
            if new or (warm is not None and not problems):
                defs = classes.problems(self.C, self.weights)
                self._check_problems(len(classes.labels), len(defs), n_rows + block.n_rows, n_features)
                self.check_weights(n_features, len(defs))
                fresh = []
                for k, d in enumerate(defs):
                    if k < len(problems) and problems[k].definition() == d:
                        continue
                    p = _Problem(k, d[0], d[1], d[2], cap, self.seed, directory, wb, float32, src.weighted) \
                        if self._trains(k) else _Elsewhere(k, *d)
                    if k < len(problems):
                        problems[k].abort()
                        problems[k] = p
                    else:
                        problems.append(p)
                    if warm is not None and self._trains(k):
                        p.w, p.sum_alpha, p.status = warm[k]
                    fresh.append(p)
                mine = [p for p in problems if self._trains(p.k)]
                if self.opt.memory is not None:
                    # the writers' pending blocks share a sixteenth of the budget (at least 64K each)
                    share = max(64 << 10, min(8 << 20, self.opt.memory // (16 * len(problems))))
                    for p in mine:
                        p.writer.block_bytes = share
                replay([p for p in fresh if self._trains(p.k)], row0)
            QD = QD_of(block)
            on = warm is not None
            if len(mine) > 1 and pool is not None:
                list(pool.map(lambda p: p.step_block(block, cls, QD, row0, cap, self.bias, on), mine))
            else:
                for p in mine:
                    p.step_block(block, cls, QD, row0, cap, self.bias, on)
            n_rows += block.n_rows
            nnz += block.nnz
            if not src.known:
                self._check_state(n_rows, len(problems), n_features, False)
            if replay_from_memory:
                kept.append(block)
                kept_bytes += block.nbytes
                if kept_bytes > keep_limit:
                    kept = []
                    replay_from_memory = False
        if n_rows == 0:
            raise DataFormatError(getattr(src.ds, "source", None) or str(src.data), 0, 0, "empty input: no rows")
        if copy is not None:
            copy.close(n_features=cap)
            src.switch_to_copy(copy.path)
        self._n_problems = len(problems)
        problems = mine
        for p in problems:
            p.writer.close(n_features=cap)
            p.trace.active_first = int(np.count_nonzero(p.status.view() == ACTIVE))
            p.trace.dual.append(p.dual())
        return problems, classes.labels, n_rows, nnz, n_features, cap

    def _warm_pass(self, src, directory):
        """-i (fit(warm=model)): text is first copied to the binary file the re-check passes read (the start needs
        the classes), then one pass over the input sets, for every problem this run trains, the dual point of the
        model's w (warm.primal_to_dual, the hinge's: alpha_i = C_i or 0, which a status byte records, AT_CP / AT_CN
        or ZERO, outside the active set) and w = w(alpha). Returns (the classes, the width of w, per problem
        (w, sum(alpha), status bytes)); the first pass then steps every row from its alpha."""
        from .warm import model_starts, primal_to_dual
        if not src.known:
            copy = BinaryWriter(os.path.join(directory, "input.bin"), block_bytes=self.chunk, fsync=False,
                                weights=src.weighted)
            n_features = 0
            for block in src.blocks(prefetch=True, progress=True):
                copy.write_dataset(block)
                n_features = max(n_features, int(block.n_features or 0))
                del block
            copy.close(n_features=n_features)
            src.switch_to_copy(copy.path)
        classes = Classes(src.labels())
        n_rows, n_features = int(src.n_rows), int(src.n_features)
        defs = classes.problems(self.C, self.weights)
        self._check_state(n_rows, len(defs), n_features, True)
        self.check_weights(n_features, len(defs))
        cap = max(n_features, 1024)
        starts = model_starts(self.warm, self.params, classes.labels, n_features)
        state = {}
        for k, (pos, Cp, Cn) in enumerate(defs):
            if not self._trains(k):
                continue
            w = np.zeros(cap + 1)
            w0 = starts[k if len(starts) > 1 else 0]["w"]
            w[:n_features] = w0[:n_features]
            if self.bias >= 0:
                w[cap] = w0[n_features]
            state[k] = [w, np.zeros(cap + 1), 0.0, _Bytes()]
        w_alpha = np.empty(cap + 1)
        r0 = 0
        for block in src.blocks():
            cls, _ = classes.add(block.y)
            view = block.row_view(self.bias, cap)
            for k, st in state.items():
                pos = cls == defs[k][0]
                ys = np.where(pos, 1, -1).astype(np.int8)
                C = np.where(pos, defs[k][1], defs[k][2])
                if block.weights is not None:
                    C = C * block.weights
                alpha = primal_to_dual((view, EMPTY_ROWS), ys, C, st[0], True)
                KL.dcd_init_w(view, EMPTY_ROWS, ys, alpha, w_alpha)
                st[1] += w_alpha
                st[2] += float(alpha.sum())
                st[3].put(r0, np.where(alpha == 0.0, ZERO, np.where(pos, AT_CP, AT_CN)).astype(np.uint8))
            r0 += block.n_rows
            del block
        return classes, cap, {k: (st[1], st[2], st[3]) for k, st in state.items()}

    # -- phase 2 ------------------------------------------------------------------------------------------------
    def _optimize_block(self, p, ds, cap, live=None, one_of_several=False):
        """inner_iter passes over a loaded block (over its rows `live` only when given: the rows of a block of
        p.lazy's file still in the active set); returns the block's alpha (updated) and sign. The outer
        iteration's sweep violation (p.sweep_violation) takes the largest |PG| of the block's last inner pass, and
        of its first too when the block is one of several in the outer iteration (one_of_several): a block's rows
        have that violation when its turn comes, after the other blocks moved w, so that a sweep over all the
        blocks is measured, not each block right after its own passes."""
        y = getattr(ds, "ysign", None)
        if y is None:
            ds.ysign = y = np.where(ds.y > 0, 1, -1).astype(np.int8)
            ds.QD = np.empty(ds.n_rows)
            KL.sq_norms(ds.row_view(self.bias), EMPTY_ROWS, ds.QD)
        alpha = ds.alpha                  # fresh, writable float64 (or p.lazy's): updated in place
        if live is None:
            index, n = np.arange(ds.n_rows, dtype=np.int32), -1
        else:
            index, n = live.astype(np.int32), live.shape[0]     # a copy: block_pass shuffles it
        ds.G = None if self.opt.one_pass else np.empty(ds.n_rows)
        first = np.zeros(1)
        d_sum, _, pg = K.block_pass(ds.row_view(self.bias, cap), y, ds.QD, alpha, p.w, p.Cp, p.Cn,
                                    self.opt.inner_iter, p.rng, index, True, ds.G, n, first)
        ds.sweep_violation = pg
        p.sweep_violation = max(p.sweep_violation, pg, first[0] if one_of_several else 0.0)
        p.sum_alpha += d_sum
        p.trace.block_dual.append(p.dual())
        return alpha, y

    def _mark(self, p, ds, alpha, y, rows=None):
        """Rows of a block (its rows `rows`, all by default) that reached 0 or C leave the active set (for good
        with --one-pass; until a re-check pass finds them violating otherwise): record their status; returns
        which of them stay (a mask)."""
        G = getattr(ds, "G", None)
        weights = ds.weights
        if rows is not None:
            alpha, y = alpha[rows], y[rows]
            weights = None if weights is None else weights[rows]
            G = None if G is None else G[rows]
        C = p.costs(y > 0, weights)
        stay = (alpha > 0.0) & (alpha < C)
        if G is not None:
            # with re-check passes, a row at a bound stays while its gradient points outward by no more than the
            # block's last sweep violation (LIBLINEAR's shrinking test against PGmax_old / PGmin_old): rows near
            # the margin would only come back at the next re-check
            M = ds.sweep_violation
            stay |= ((alpha == 0.0) & (G <= M)) | ((alpha == C) & (G >= -M) & (C > 0))
        st = np.where(alpha == 0.0, ZERO, np.where(alpha == C, np.where(y > 0, AT_CP, AT_CN), FREE))
        p.status.a[ds.row_ids if rows is None else ds.row_ids[rows]] = \
            (st | np.where(stay, IN_SET, 0)).astype(np.uint8)
        return stay

    def _settle(self, p, ds, alpha, y):
        """Rows of a block that reached 0 or C leave the active set (_mark); return the rows that stay."""
        keep = np.flatnonzero(self._mark(p, ds, alpha, y))
        if keep.size == ds.n_rows:
            return ds
        out = _kept(ds, keep, alpha)
        out.ysign, out.QD = ds.ysign[keep], ds.QD[keep]
        return out

    def _outer(self, p, budget, cap, t0):
        """Outer iterations of block optimization for one problem (at most max_iter), until the relative change of
        the dual is at most inner_eps (the paper's rule) or the active set is empty. An active set larger than the
        budget is streamed from its file: with --one-pass rewritten at every outer iteration without its dead rows
        (the paper's Algorithm 2), otherwise left as written while the alpha of its rows is kept in memory (p.lazy,
        _Lazy) until half of it is dead, the live rows fit the budget, or the outer iterations end."""
        f = BinaryDataset(p.path, trusted=True) if p.memory_set is None else None
        p.inner_converged = False
        p.held = p.lazy = None
        # the streamed blocks are loaded into recycled memory (one block's worth, freed with the outer iterations)
        p.arena = Arena() if f is not None else None
        try:
            for it in range(1, self.max_iter + 1):
                lz = p.lazy
                if p.memory_set is not None:
                    n_active = p.memory_set.n_rows
                elif lz is not None:
                    n_active = lz.live_rows
                else:
                    n_active = f.n_rows
                if n_active == 0:
                    p.inner_converged = True
                    break
                D_prev = p.trace.dual[-1]
                p.sweep_violation = 0.0
                if p.memory_set is None and lz is not None:
                    # (the file itself is larger than the budget: it would have been loaded whole otherwise)
                    live = _loaded_bytes(None, lz.live_rows, lz.live_nnz, f.float32, p.weighted)
                    whole = _loaded_bytes(None, f.n_rows, f.nnz, f.float32, p.weighted)
                    # while the live rows are gathered, the alpha of the file's rows and one block of it are held too
                    if live + lz.alpha.nbytes + _largest_block(f, p.weighted) <= budget:
                        p.held = p.arena = None
                        p.memory_set = self._gather_live(p, f)
                        p.lazy = lz = None
                        f.close()
                        f = None
                        p.scratch.retire(p.path)
                    elif live < whole - live:
                        # more than half of the file is dead: rewritten without it (the loaded blocks' memory
                        # freed first: the alpha and a block of the file are held while it is written)
                        p.held = None
                        p.arena = Arena()
                        self._rewrite(p, [f], None, cap, lazy=_take(p, "lazy"))
                        lz = None
                        f = BinaryDataset(p.path, trusted=True)
                if p.memory_set is None and lz is None:
                    if budget is None or _loaded_bytes(None, f.n_rows, f.nnz, f.float32, p.weighted) <= budget:
                        p.arena = None                # its memory freed before the whole set is loaded
                        p.memory_set = f.load_blocks(0, f.n_blocks)
                        f.close()
                        f = None
                        p.scratch.retire(p.path)
                if p.memory_set is not None:
                    alpha, y = self._optimize_block(p, p.memory_set, cap)
                    p.memory_set = self._settle(p, p.memory_set, alpha, y)
                    blocks, n_after = 1, p.memory_set.n_rows
                elif self.opt.one_pass or (p.lazy is None and not _lazy_fits(f, budget, p.weighted)):
                    # --one-pass, or the file's alpha and a block of it do not fit the budget together
                    blocks, n_after, f = self._stream_iteration(p, f, budget, cap)
                else:
                    blocks, n_after = self._lazy_iteration(p, f, budget, cap)
                p.n_iter += 1
                D = p.dual()
                p.trace.active.append(n_after)
                p.trace.dual.append(D)
                p.trace.blocks.append(blocks)
                p.trace.seconds.append(time.perf_counter() - t0)
                p.output.append(".")
                if self.progress is not None:       # the bar counts the outer iterations (its total is unknown)
                    self.progress.update(1)
                # the paper's rule; with re-check passes, also not before the last sweep over the active set found
                # its violations within eps / 2 (LIBLINEAR's shrinking loop asks eps of its active set; the half
                # leaves room for the rows that move after their step in the sweep, so that the re-check pass, which
                # sees every row at the final w, can certify)
                if D != 0.0 and (D - D_prev) / abs(D) <= self.opt.inner_eps and \
                        (self.opt.one_pass or p.sweep_violation <= SWEEP_FRACTION * self.eps):
                    p.inner_converged = True
                    break
                if n_after == 0:
                    p.inner_converged = True
                    break
            # the re-check pass that follows appends its re-entering rows to the active-set file written here
            keep = not self.opt.one_pass
            if p.lazy is not None:
                # the live rows with their alpha (the held block is among them, in the file)
                p.held = None
                self._rewrite(p, [f], None, cap, keep_open=keep, lazy=_take(p, "lazy"))
                f = None
            elif p.memory_set is not None and self._keep_budget is not None and \
                    _loaded_bytes(p.memory_set) > self._keep_budget:
                # the re-check pass cannot hold it besides its own blocks: to the file until then
                self._rewrite(p, [], _take(p, "memory_set"), cap, keep_open=keep)
        finally:
            p.held = p.arena = p.lazy = None
            if f is not None:
                f.close()

    def _lazy_iteration(self, p, f, budget, cap):
        """One outer iteration over an active-set file larger than the budget, left as it is (not with
        --one-pass): blocks of it in turn, each over its rows still in the active set (their status bytes), from
        and into the alpha p.lazy keeps. The last block loaded stays in memory (p.held) and the next outer
        iteration begins with it and goes on with the block after it, around the file: each outer iteration reads
        one block fewer. Only where the alpha and a block of the file fit the budget together (_lazy_fits).
        Returns (blocks optimized, rows in the active set after)."""
        lz = p.lazy
        if lz is None:
            lz = p.lazy = _Lazy(f)
        # the alpha of the file's rows are held besides the loaded blocks (at least a block: _lazy_fits)
        load_budget = budget - lz.alpha.nbytes
        held, p.held = p.held, None
        n = f.n_blocks
        spans = [(0, n)] if held is None else [(lz.held_range[1], n), (0, lz.held_range[0])]
        groups = ([] if held is None else [lz.held_range]) + \
            [g for lo, hi in spans for g in _groups(f, lo, hi, load_budget, p.weighted)]
        blocks = 0
        for k, (b, e) in enumerate(groups):
            if k == 0 and held is not None:
                ds, held = held, None
            else:
                p.arena.reset()
                ds = f.load_blocks(b, e, arena=p.arena)
                ds.alpha = lz.alpha_of(f, b, e, ds.alpha)
            live = np.flatnonzero(p.status.a[ds.row_ids] & IN_SET)
            if live.size:
                alpha, y = self._optimize_block(p, ds, cap, live, len(groups) > 1)
                stay = self._mark(p, ds, alpha, y, live)
                dead = live[~stay]
                lz.live_rows -= dead.size
                lz.live_nnz -= int((ds.indptr[dead + 1] - ds.indptr[dead]).sum())
                blocks += 1
            if k == len(groups) - 1 and len(groups) > 1:
                # the last block stays for the next iteration
                p.held, lz.held_range = ds, (b, e)
            del ds
        return blocks, lz.live_rows

    def _live_blocks(self, p, f, lz):
        """The blocks of p.lazy's file `f`, each without its rows that left the active set and with the alpha
        p.lazy holds."""
        for b in range(f.n_blocks):
            ds = f.load_blocks(b, b + 1)
            alpha = lz.alpha_of(f, b, b + 1, ds.alpha)
            keep = np.flatnonzero(p.status.a[ds.row_ids] & IN_SET)
            if keep.size == 0:
                continue
            if keep.size < ds.n_rows:
                ds = _kept(ds, keep, alpha)
            else:
                ds.alpha = alpha.copy()
            yield ds

    def _gather_live(self, p, f):
        """The rows of p.lazy's file `f` still in the active set, with their alpha, as one dataset in memory, block
        by block into arrays sized once (p.lazy counts the rows)."""
        lz = p.lazy
        n, nnz = lz.live_rows, lz.live_nnz
        y, ids, alpha = np.empty(n), np.empty(n, np.int64), np.empty(n)
        weights = np.empty(n) if p.weighted else None
        indptr = np.empty(n + 1, np.int64)
        indptr[0] = 0
        indices, values = np.empty(nnz, np.int32), np.empty(nnz, f.vdtype)
        r = k = 0
        for ds in self._live_blocks(p, f, lz):
            m, z = ds.n_rows, ds.nnz
            if r + m > n or k + z > nnz:
                raise LLSVMError(f"-s llsvm: the active-set file {f.path} holds more rows in the active set than "
                                 "were counted")
            y[r:r + m], ids[r:r + m], alpha[r:r + m] = ds.y, ds.row_ids, ds.alpha
            if weights is not None:
                weights[r:r + m] = ds.weights
            indptr[r + 1:r + m + 1] = ds.indptr[1:m + 1] + k
            indices[k:k + z], values[k:k + z] = ds.indices[:z], ds.values[:z]
            r, k = r + m, k + z
        if r != n or k != nnz:
            raise LLSVMError(f"-s llsvm: the active-set file {f.path} holds fewer rows in the active set than were "
                             "counted")
        return CSRDataset(y, indptr, indices, values, f.n_features, row_ids=ids, alpha=alpha, weights=weights,
                          check=False)

    def _stream_iteration(self, p, f, budget, cap):
        """One outer iteration over an active-set file larger than the budget, rewritten (--one-pass, and the
        default mode where the file's alpha and a block do not fit the budget together): blocks of it in turn, in
        the paper's order, the rows that stay written to the next file, which replaces it."""
        new_path = p.path + ".next"
        wb = max(64 << 10, min(8 << 20, budget // 8))
        load_budget = max(budget - wb, budget // 2)
        blocks = 0
        groups = list(_groups(f, 0, f.n_blocks, load_budget, p.weighted))
        with p.set_writer(new_path, wb) as out:
            for b, e in groups:
                p.arena.reset()
                ds = f.load_blocks(b, e, arena=p.arena)
                alpha, y = self._optimize_block(p, ds, cap, None, len(groups) > 1)
                rest = self._settle(p, ds, alpha, y)
                blocks += 1
                if rest.n_rows:
                    out.write_dataset(rest, owned=True)     # written by the flush, before anything changes it
                    out.flush()           # the block's memory is free before the next one is loaded
                del ds, rest
            out.close(n_features=cap)
            n_after = out.n_rows
        f.close()
        p.scratch.replace(new_path, p.path)
        return blocks, n_after, BinaryDataset(p.path, trusted=True)

    # -- the run ------------------------------------------------------------------------------------------------
    def _fit(self, src, directory, t0):
        pool = ThreadPoolExecutor(max_workers=self.threads) if self.threads > 1 else None
        made = []                       # every problem the first pass makes (its writers are aborted at the end)
        given = src
        self._copy = None
        self._all_weights = None        # every row's weight, read once when needed (_input_weights)
        try:
            if self.opt.radius_bias:
                src, self.bias = self._radius_source(src, directory)
            if src.known and src.n_rows:
                n_labels = len(Classes(src.labels()).labels)
                self._check_state(src.n_rows, 1 if n_labels <= 2 else n_labels, src.n_features, True)
            problems, labels, n_rows, nnz, n_features, cap = self._first_pass(src, directory, pool, made)
            t_first = time.perf_counter() - t0
            # LIBLINEAR's warning, once every class is known
            class_costs(self.C, self.weights, labels, self._once)
            budget = self._block_budget(problems, n_rows, cap)
            # the first pass's bar, at its next stage (and again before each block optimization that follows a
            # re-check pass)
            optimizing = f"block optimization (at most {self.max_iter} outer iterations)"
            restage(self.progress, optimizing, unit="it")
            swapped = Classes(labels).swapped
            if self.opt.keep_active_set:
                os.makedirs(self.opt.keep_active_set, exist_ok=True)

            def finish(p):
                if self.opt.return_alpha:
                    p.final_alpha = self._final_alpha(p, n_rows, self._input_weights(src, n_rows))
                if self.opt.keep_active_set:
                    name = "active-set.bin" if self._n_problems == 1 else f"active-set.{labels[p.pos]}.bin"
                    self._keep(p, os.path.join(self.opt.keep_active_set, name), n_features, swapped)
                p.memory_set = None       # a finished class holds no rows while the others run

            def outer(p):
                self._outer(p, budget, cap, t0)
                if self.opt.one_pass:
                    finish(p)
                return p

            def each(fn, todo):
                if pool is not None and len(todo) > 1:
                    list(pool.map(fn, todo))
                else:
                    for p in todo:
                        fn(p)
            each(outer, problems)
            if not self.opt.one_pass:
                # re-check passes: every row's projected gradient at w; dropped violators come back
                classes = Classes(labels)
                todo = list(problems)
                while todo:
                    self._recheck(todo, src, classes, cap, directory, pool, t0)
                    todo = [p for p in todo if not p.certified]
                    if not todo or todo[0].rechecks >= self.opt.max_passes:
                        break
                    for p in todo:
                        self._merge(p, cap)
                    restage(self.progress, optimizing, unit="it")
                    each(outer, todo)
                if self.opt.return_alpha or self.opt.keep_active_set:
                    for p in problems:        # the rows the last pass returned (for their alpha)
                        self._merge(p, cap)
                each(finish, problems)
            results = [self._result(p, n_rows, n_features, cap) for p in problems]
            for p in problems:
                self.reporter.info("".join(p.output) + "\n" if p.output else "")
                r = p.result
                self.reporter.info(f"active set: {p.trace.active_first} of {n_rows} rows after the first pass, "
                                   f"{p.trace.active[-1] if p.trace.active else p.trace.active_first} at the end\n")
                if not self.opt.one_pass:
                    rc = p.trace.recheck
                    self.reporter.info(f"re-check passes: {len(rc)}, {sum(c['reentered'] for c in rc)} rows "
                                       f"re-entered; max violation {r.max_violation:g}, primal {r.primal:.6f}, "
                                       f"gap {r.gap:.6g}\n")
                report_finished(self.reporter, r.n_iter, -r.dual, r.nSV, blank_line=False)
                if not r.converged:
                    warn_max_iter(self.reporter)
            return self._done(results, labels, {"n_rows": n_rows, "nnz": nnz, "n_features": n_features,
                                                "first_pass_seconds": t_first, "bias": self.bias,
                                                "one_pass": bool(self.opt.one_pass)})
        finally:
            if pool is not None:
                pool.shutdown(wait=True)
            for p in made:
                p.abort()
                p.memory_set = None
            if self._copy is not None:
                self._copy.abort()
            if src is not given:          # the binary copy of -B R
                src.close()

    # -- memory -------------------------------------------------------------------------------------------------
    def _check_problems(self, n_classes, n_problems, n_rows, n_features):
        """Before the problems of new classes are made (more than two classes: one-vs-rest): without --memory
        (_check_state checks a budget), their status bytes (at least the first 64 KiB each), weight vectors and
        objects against the memory available; and, each writing its active set to a file of its own, the open
        files: the soft limit (ulimit -n) is raised up to the hard one when it is too low, and a count beyond that
        is refused, naming the classes, rather than failing on the file that does not open."""
        if n_problems <= 1:
            return
        if self.opt.memory is None:
            per = max(1 << 16, STATUS_BYTES * int(n_rows)) + 8 * (int(n_features) + 1) + PROBLEM_OBJECT_BYTES
            memory.check_classes(n_classes, f"{n_problems} one-vs-rest problems", n_problems * per,
                                 "status bytes, weight vectors and active-set writers")
        need = n_problems + OPEN_FILES_SLACK
        try:
            import resource
            soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        except (ImportError, ValueError, OSError):
            return
        if soft == resource.RLIM_INFINITY or need <= soft:
            return
        if hard == resource.RLIM_INFINITY or need <= hard:
            try:
                resource.setrlimit(resource.RLIMIT_NOFILE, (need if hard == resource.RLIM_INFINITY
                                                            else max(need, min(hard, 2 * need)), hard))
                return
            except (ValueError, OSError):
                pass
        raise LLSVMError(f"{n_classes} classes make {n_problems} one-vs-rest problems, each writing its active set "
                         f"to a file: -s llsvm needs {need} open files, more than the {max(soft, hard)} this "
                         f"process may open (ulimit -n); {memory.CLASSES_HINT}")

    def _state_bytes(self, n_rows, n_problems, n_features):
        """What training holds whatever the budget: per problem, one status byte per row and the weight vector;
        and -W's row weights when the run holds them."""
        return n_problems * (STATUS_BYTES * int(n_rows) + 8 * (int(n_features) + 1)) + self._held_weights()

    def _check_state(self, n_rows, n_problems, n_features, known):
        """Refuse a --memory budget smaller than the per-row state and weight vectors plus the smallest working
        set (MIN_BUDGET: a parser block and a loaded block), naming the minimum (memory.check_budget). Binary and
        in-memory input is checked before training; text as its rows come."""
        state = self._state_bytes(n_rows, n_problems, n_features)
        memory.check_budget(self.opt.memory, state + MIN_BUDGET, state, solver="llsvm", rows=n_rows,
                            partial=not known, what="the status bytes and the weight vectors",
                            note=None if n_problems == 1 else f"{n_problems} one-vs-rest problems")

    def _block_budget(self, problems, n_rows, cap):
        """Bytes of active rows each problem may load for block optimization (None: no limit), and the part of it
        that may stay in memory during a re-check pass (self._keep_budget). --one-pass: the budget split by classes
        (not threads: the model must not depend on --threads), as the paper's driver always had it. With re-check
        passes, the per-row state and the weight vectors come off first; while a re-check pass runs, also what it
        holds (the block of the input it works on, the block read ahead, the rows it takes out of one, at most
        another block, and the writers of re-entering rows): a larger active set is spilled to its file before it."""
        n = self._n_problems                  # the run's problems (those trained here may be one: `only`)
        if self.opt.memory is None or self.opt.one_pass:
            self._keep_budget = None
            return _budget_split(self.opt.memory, n)
        # every problem's state is alike (a status byte per row, w of cap + 1): the run's is n times a problem's
        state = sum(p.status.a.nbytes + p.w.nbytes for p in problems) * n // max(1, len(problems))
        left = self.opt.memory - state - self._held_weights()
        keep = left - RECHECK_BLOCKS * self.chunk - n * self._add_bytes(n)
        self._keep_budget = max(MIN_BUDGET // 2, keep // max(1, n))
        return max(MIN_BUDGET // 2, left // max(1, n))

    def _add_bytes(self, n_problems):
        """The block size of each problem's writer of re-entering rows."""
        m = self.opt.memory
        return 1 << 20 if m is None else int(max(64 << 10, min(1 << 20, m // (16 * max(1, n_problems)))))

    # -- re-check passes ----------------------------------------------------------------------------------------
    def _recheck(self, todo, src, classes, cap, directory, pool, t0):
        """One pass over the whole input at the problems' current w (unchanged by the pass): every row's projected
        gradient from its status, the largest violation and the hinge losses (the exact primal, gap and violation
        of w), and the dropped rows that violate (REENTER) written, with their alpha (0 or C), to the problem's
        file of re-entering rows (their status gets IN_SET)."""
        tp = time.perf_counter()
        # sized for the run's problems, not those still running: a problem's blocks do not depend on the others
        wb = self._add_bytes(self._n_problems)
        for p in todo:
            p.check = [0.0, 0.0, 0]       # max |PG|, sum C_i hinge_i, rows re-entered
            if p.open_set is not None:
                # re-entering rows are appended to the active-set file block optimization left open
                p.add_path, p.add_writer, p.open_set = None, p.open_set, None
            else:
                p.add_path = p.path + ".add"
                p.add_writer = p.set_writer(p.add_path, wb)

        def one(p, block, cls):
            n = block.n_rows
            row0 = int(block.first_row)
            st = p.status.a[row0:row0 + n]
            enter = np.empty(n, np.int64)
            m, loss, k = K.recheck(block.row_view(self.bias, cap), cls, p.pos, st, p.w, p.Cp, p.Cn, REENTER, enter)
            p.check[0] = max(p.check[0], m)
            p.check[1] += loss
            if k:
                rows = enter[:k]
                pos = cls[rows] == p.pos
                sub = block.take_rows(rows)
                alpha = _alpha_of(st[rows], p.Cp, p.Cn, sub.weights)
                p.add_writer.write_dataset(CSRDataset(np.where(pos, 1.0, -1.0), sub.indptr, sub.indices,
                                                      sub.values, cap, row_ids=rows + row0, alpha=alpha,
                                                      weights=sub.weights, check=False), owned=True)
                st[rows] |= IN_SET
                p.check[2] += k

        # the bar: this pass's rows, and the passes so far of the most the run makes (--max-passes)
        restage(self.progress, f"re-check pass {todo[0].rechecks + 1} of at most {self.opt.max_passes}",
                src.n_rows if src.known else None, "rows")
        for block in counted(src.blocks(read_ahead=self.READ_AHEAD), self.progress):
            if block.n_rows == 0:
                continue
            cls, _ = classes.add(block.y)
            if pool is not None and len(todo) > 1:
                list(pool.map(lambda p: one(p, block, cls), todo))
            else:
                for p in todo:
                    one(p, block, cls)
            del block, cls        # two blocks of the input at most: this one is gone before the next is read
        for p in todo:
            p.add_writer.close(n_features=cap)
            p.rechecks += 1
            ww = sq_norm(p.w)
            P, D = 0.5 * ww + p.check[1], p.sum_alpha - 0.5 * ww
            p.cert = {"primal": P, "dual": D, "gap": P - D, "max_violation": p.check[0]}
            p.certified = p.check[0] <= self.eps
            p.trace.recheck.append({"pass": p.rechecks, "seconds": time.perf_counter() - t0,
                                    "pass_seconds": time.perf_counter() - tp, "reentered": p.check[2], **p.cert})
            p.output.append("*")
            if p.check[2] == 0 and p.add_path is not None:
                p.scratch.retire(p.add_path)

    def _merge(self, p, cap):
        """Re-entering rows join the active set: the active set (its file, or the rows held in memory) and the
        re-entering rows are written to the active-set file, which block optimization then loads or streams."""
        if p.add_path is None or not os.path.exists(p.add_path):
            return
        try:
            if p.memory_set is not None:
                self._rewrite(p, [BinaryDataset(p.add_path, trusted=True)], _take(p, "memory_set"), cap)
            else:
                files = [BinaryDataset(p.path, trusted=True)] if os.path.exists(p.path) else []
                self._rewrite(p, files + [BinaryDataset(p.add_path, trusted=True)], None, cap)
        finally:
            p.scratch.retire(p.add_path)

    def _rewrite(self, p, files, rows, cap, keep_open=False, lazy=None):
        """The active-set file rewritten as the in-memory `rows` (None: none), then the blocks of `files` (closed
        here; with `lazy`, the _Lazy of files[0], only its live rows with their alpha). keep_open: its writer is
        left open (p.open_set) for the re-check pass that follows, which appends the re-entering rows and closes it
        (no file of re-entering rows to merge afterwards)."""
        out = p.set_writer(p.path, self._add_bytes(self._n_problems))
        try:
            if rows is not None:
                out.write_dataset(rows, owned=True)     # written by the flush, before anything changes it
                out.flush()
                rows = None       # freed before the files' blocks are read
            for i, f in enumerate(files):
                for b in self._live_blocks(p, f, lazy) if i == 0 and lazy is not None else f.iter_blocks():
                    out.write_dataset(b, owned=True)
                    out.flush()
                f.close()
        except BaseException:
            out.abort()
            raise
        finally:
            for f in files:
                f.close()
        if keep_open:
            p.open_set = out
        else:
            out.close(n_features=cap)

    def _radius_source(self, src, directory):
        """-B R: the data radius must be known before the first step. Binary input records it in its header;
        in-memory data is scanned; text is first written to a binary copy in the temporary directory."""
        if src.binary or isinstance(src.ds, CSRDataset):
            return src, float(np.sqrt(src.radius_sq()))
        copy = os.path.join(directory, "input.bin")
        with BinaryWriter(copy, weights=src.weighted) as w:      # the copy keeps -W's weights
            for b in src.blocks(prefetch=True, progress=True):
                w.write_dataset(b)
            w.close()
        src.close()
        new = self._src = Input(copy, False, None, self.chunk, self.chunk)
        return new, float(np.sqrt(new.radius_sq()))

    def _final_alpha(self, p, n_rows, weights=None):
        """Every row's alpha: from its status byte (0 or C_i: `weights`, the rows' weights, None without), or the
        active set's."""
        alpha = _alpha_of(p.status.view()[:n_rows], p.Cp, p.Cn, weights)
        rest = self._active_set(p)
        if rest is not None and rest.n_rows:
            alpha[rest.row_ids] = rest.alpha
        return alpha

    def _input_weights(self, src, n_rows):
        """Every row's weight (None without weights; read from the input once: a pass over a binary file's blocks
        unless the rows are in memory or -W's weights are held)."""
        if not src.weighted:
            return None
        if self._all_weights is None:
            w = src.ds.weights if src.memory else src.row_weights
            if w is None:
                w = np.empty(n_rows)
                for b in src.blocks():
                    w[b.first_row:b.first_row + b.n_rows] = b.weights
            self._all_weights = w
        return self._all_weights

    def _active_set(self, p):
        if p.memory_set is not None:
            return p.memory_set
        if os.path.exists(p.path):
            with BinaryDataset(p.path, trusted=True) as f:
                return f.load_blocks(0, f.n_blocks)
        return None

    def _keep(self, p, target, n_features, swapped):
        """Write a problem's final active set to `target` (labels in the model's orientation)."""
        blocks = [p.memory_set] if p.memory_set is not None else []
        f = None
        if p.memory_set is None and os.path.exists(p.path):
            f = BinaryDataset(p.path, trusted=True)
            blocks = f.iter_blocks()
        try:
            with BinaryWriter(target, row_ids=True, alpha=True, float32=p.float32, weights=p.weighted) as w:
                for b in blocks:
                    w.write_dataset(CSRDataset(-b.y if swapped else b.y, b.indptr, b.indices, b.values, n_features,
                                               row_ids=b.row_ids, alpha=b.alpha, weights=b.weights, check=False))
                w.close(n_features=n_features)
        finally:
            if f is not None:
                f.close()

    def _result(self, p, n_rows, n_features, cap):
        """Problem p's FitResult (also p.result)."""
        w = p.w[:n_features]
        if self.bias >= 0:
            w = np.append(w, p.w[cap])
        st = p.status.view()[:n_rows]
        nSV = int(np.count_nonzero((st & STATE) != ZERO))
        r = FitResult(w=np.ascontiguousarray(w), n_iter=p.n_iter, dual=p.dual(), nSV=nSV,
                      converged=p.inner_converged if self.opt.one_pass else p.certified, solver=3)
        if p.cert is not None:
            r.primal, r.gap, r.max_violation = p.cert["primal"], p.cert["gap"], p.cert["max_violation"]
        r.extra = {"active_first_pass": p.trace.active_first, "active": p.trace.active, "dual_trace":
                   p.trace.dual, "blocks": p.trace.blocks, "seconds": p.trace.seconds,
                   "block_dual": p.trace.block_dual, "recheck": p.trace.recheck,
                   "n_zero": int(np.count_nonzero((st & STATE) == ZERO))}
        if self.opt.return_alpha:
            r.alpha = p.final_alpha
        p.result = r
        return r

    def assemble(self, results, labels, info):
        """The model; info: the run's figures of the input (its meta["llsvm"]; bias: -B R's radius)."""
        labs, W = stacked_weights(labels, results)
        return Model(self.params.spec.solver_type, labs.size, labs, info["n_features"], info["bias"], W,
                     meta={"results": results, "solver": self.name, "llsvm": dict(info)})


JSON_FIELDS = ("model_solver_type", "first_pass_seconds", "C", "eps", "inner_eps", "one_pass", "max_passes",
               "bias", "seed", "threads", "memory", "inner_iter", "active_first_pass", "blocks", "rechecks",
               "reentered", "nr_class", "labels", "classes")


def metrics(model, params, ds=None):
    """--json of -s llsvm. The primal, gap and max violation are those the last re-check pass computed over every
    row for the returned w (exact; summed over the classes' problems, the violation their largest); --one-pass
    runs no re-check pass and never holds the data, so they are null there."""
    res = model.meta["results"]
    info = model.meta["llsvm"]
    one_pass = info["one_pass"]
    per = []
    for k, r in enumerate(res):
        d = {"label": int(model.label[k]) if len(res) > 1 else None, "n_iter": r.n_iter, "dual": r.dual,
             "nSV": r.nSV, "converged": r.converged, "active_first_pass": r.extra["active_first_pass"],
             "active": r.extra["active"], "dual_trace": r.extra["dual_trace"], "blocks": r.extra["blocks"],
             "seconds": r.extra["seconds"]}
        if not one_pass:
            d.update({"primal": r.primal, "gap": r.gap, "max_violation": r.max_violation,
                      "recheck": r.extra["recheck"]})
        per.append(d)
    o = params.options
    rc = [r.extra["recheck"] for r in res]
    return {
        "solver": "llsvm", "model_solver_type": model.solver_type,
        "n_rows": info["n_rows"], "n_features": info["n_features"], "nnz": info["nnz"],
        "first_pass_seconds": info["first_pass_seconds"],
        "n_iter": max(r.n_iter for r in res),
        "primal": None if one_pass else sum(r.primal for r in res), "dual": sum(r.dual for r in res),
        "gap": None if one_pass else sum(r.gap for r in res),
        "max_violation": None if one_pass else max(r.max_violation for r in res),
        "nSV": sum(r.nSV for r in res), "converged": all(r.converged for r in res),
        **echo(params, "C", "eps", "inner_eps", "one_pass", "max_passes"), "one_pass": one_pass,
        "max_passes": None if one_pass else o.max_passes, "bias": info["bias"],
        **echo(params, "seed", "threads", "memory", "inner_iter"),
        "active_first_pass": sum(r.extra["active_first_pass"] for r in res),
        "blocks": max((max(r.extra["blocks"]) if r.extra["blocks"] else 0) for r in res),
        "rechecks": max(len(c) for c in rc), "reentered": sum(x["reentered"] for c in rc for x in c),
        "nr_class": model.nr_class, "labels": [int(v) for v in model.label], "classes": per,
    }
