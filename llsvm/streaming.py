"""-s streamsvm (dual cached loops) and -s bm (block minimization): the out-of-core solvers over a block stream.

StreamSVM: Matsushima, Vishwanathan, Smola, "Linear support vector machines via dual cached loops", KDD 2012
(../shared/papers/streamsvm-dual-cached-loops.txt, Algorithms 1 and 2; the kernel is cext/_stream.pyx). A reader
streams the rows, pass after pass, into a cache of at most Omega rows (Omega from --memory) while a trainer
does dual coordinate steps on random cached rows and evicts the uninformative ones. Both run without the GIL on
two threads (`threads >= 2`, the default of the CLI); with `threads == 1` they alternate on one thread (256 rows
read, then 2 picks per row read), which makes the run deterministic for a seed. Text input is parsed during the
first pass and written to a binary copy in the temporary directory, which the later passes read.

BM: Yu, Hsieh, Chang, Lin, "Large linear classification when data cannot fit in memory", KDD 2010, the baseline
of both out-of-core papers. The binary file is read in blocks that fit --memory; every outer iteration loads the
blocks in turn and runs LIBLINEAR's dual coordinate descent (with shrinking) on each until its own stopping rule
holds at --inner-eps, alpha and w carried across blocks.

Both solve the -s 3 problem (hinge loss, the bias as a regularized coordinate) and stop when a reader pass /
outer iteration meets `eps` (StreamSVM: M+ - M- of the projected gradients it saw; BM: the relative change of the
dual objective), or after max_iter of them. Classes are one-vs-rest, one after the other, each with the whole
budget (LIBLINEAR's label order, {-1,+1} swap and -wi weights).
"""
import math
import os
import shutil
import tempfile
import threading
import time
from dataclasses import dataclass, field

import numpy as np

from ._ext import _linear as KL
from ._ext._stream import SLOT_BYTES, StreamCache
from .binfmt import BinaryDataset, BinaryWriter
from .dataset import CSRDataset
from .errors import LLSVMError, ParameterError
from .model import Model
from .onepass import MIN_BUDGET, _Classes, _definitions, _prefetched, problem_seed, stacked_weights
from .solvers import EMPTY_ROWS, DUAL_MAX_ITER, FitResult, warn_missing_weights, weighted_C

STREAMSVM = "streamsvm"
BM = "bm"
SOLVER_TYPE = "L2R_L1LOSS_SVC_DUAL"
DEFAULT_EPS = {STREAMSVM: 1e-3, BM: 1e-3}
DEFAULT_MAX_ITER = 100
DEFAULT_INNER_EPS = 0.1
DEFAULT_BATCH = 16
LOCKSTEP_ROWS = 256
LOCKSTEP_RATIO = 2.0
CACHE_SLACK = 1.5           # a slot's buffer holds its row with up to about 2x room (see _stream.pyx)
READ_BLOCK_BYTES = 8 << 20


@dataclass
class StreamOptions:
    memory: int = None             # bytes of training rows held in RAM (None: no limit)
    tmp_dir: str = None
    hash_bits: int = None          # -s streamsvm: map features into 2^hash_bits signed buckets on the fly
    inner_eps: float = DEFAULT_INNER_EPS   # -s bm: stopping tolerance of the DCD run on each block
    batch: int = DEFAULT_BATCH     # -s streamsvm: trainer picks per lock
    lockstep_ratio: float = LOCKSTEP_RATIO  # -s streamsvm with one thread: picks per row read
    return_alpha: bool = False     # FitResult.alpha over all rows


@dataclass
class _Trace:
    seconds: list = field(default_factory=list)   # from the start of training
    dual: list = field(default_factory=list)      # D = sum(alpha) - |w|^2/2 (maximization form)
    primal: list = field(default_factory=list)
    records: list = field(default_factory=list)   # per pass / block dicts for --json


class _Input:
    """The rows: a binary file, a CSRDataset, or text (parsed once, copied to binary for the later passes)."""

    def __init__(self, data, zero_based, progress, directory, block_bytes):
        from .io import open_dataset
        self.progress = progress
        self.directory = directory
        self.block_bytes = block_bytes
        self.copy = None
        self._own = False
        if isinstance(data, (str, os.PathLike)):
            self.name = os.fspath(data)
            self.ds = open_dataset(data, zero_based=zero_based, stream=True)
            self._own = True
        else:
            self.ds = data
            self.name = getattr(data, "source", None) or "<data>"
        self.binary = isinstance(self.ds, BinaryDataset)
        self.memory = isinstance(self.ds, CSRDataset)
        self.known = self.binary or self.memory
        if self.memory and self.ds.n_rows == 0 or self.binary and self.ds.n_rows == 0:
            raise ParameterError("no training data")

    @property
    def n_rows(self):
        return self.ds.n_rows

    @property
    def n_features(self):
        return self.ds.n_features

    @property
    def nnz(self):
        return self.ds.nnz

    def labels(self):
        if self.memory:
            from .dataset import label_table
            return label_table(self.ds.y)[0]
        return self.ds.labels

    def blocks(self):
        """One pass, blocks in order, each with first_row and nbytes."""
        if self.memory:
            yield from self.blocks_of(self.block_bytes)
        elif self.binary:
            # read on this thread: with the trainer on a second core, a third thread would only take from it
            yield from self.ds.iter_blocks(max_bytes=self.block_bytes)
        else:
            raise AssertionError("text is read by text_pass")

    def blocks_of(self, max_bytes):
        """In-memory data cut into blocks of at most max_bytes (all rows in one without a limit)."""
        base = 0
        for b in self.ds.iter_blocks(max_bytes=max_bytes):
            b.first_row = base
            base += b.n_rows
            yield b

    def text_pass(self, writer):
        """The first pass over text: blocks in order (parsed on a helper thread), each also written to `writer`."""
        for b in _prefetched(self.ds.iter_blocks()):
            writer.write_dataset(b)
            yield b

    def switch_to_copy(self, path):
        """After the text pass: read the binary copy from now on."""
        if self._own and hasattr(self.ds, "close"):
            self.ds.close()
        self.ds = BinaryDataset(path)
        self._own = True
        self.binary = True
        self.known = True
        if self.ds.n_rows == 0:
            raise ParameterError("no training data")

    def close(self):
        if self._own and hasattr(self.ds, "close"):
            self.ds.close()


def _row_bytes(nnz, n_rows):
    return CACHE_SLACK * 12.0 * nnz / max(1, n_rows) + SLOT_BYTES


def _omega(memory, avg_row_bytes, n_rows):
    """Rows the cache may hold: all of them without a budget, else what the budget pays for."""
    if memory is None:
        return max(1, n_rows)
    om = max(1, int(memory // avg_row_bytes))
    return min(om, max(1, n_rows)) if n_rows else om


def _hasher(bits):
    if bits is None:
        return None
    from .hashing import check_bits, hash_dataset
    check_bits(bits)
    return lambda block: hash_dataset(block, bits)


class _Problem:
    """One binary problem of one-vs-rest: class `pos` is +1, the others -1."""

    def __init__(self, k, pos, Cp, Cn):
        self.k, self.pos, self.Cp, self.Cn = k, pos, float(Cp), float(Cn)
        self.trace = _Trace()
        self.result = None

    def signs(self, cls):
        return np.where(cls == self.pos, 1, -1).astype(np.int8)


class _OutOfCore:
    """What -s streamsvm and -s bm share: input, temporary directory, classes, the model."""

    solver = None

    def __init__(self, C=1.0, eps=None, bias=-1.0, weights=(), max_iter=DEFAULT_MAX_ITER, seed=1, threads=1,
                 options=None, say=None, zero_based=False, progress=None, warn=None):
        self.C = float(C)
        self.eps = float(DEFAULT_EPS[self.solver] if eps is None else eps)
        self.bias = float(bias)
        self.weights = list(weights)
        self.max_iter = int(max_iter or DEFAULT_MAX_ITER)
        self.seed = int(seed)
        self.threads = max(1, int(threads))
        self.opt = options or StreamOptions()
        self.say = say or (lambda s: None)
        self.warn = warn or (lambda s: None)
        self.zero_based = zero_based
        self.progress = progress
        if self.opt.memory is not None and self.opt.memory < MIN_BUDGET:
            raise ParameterError("memory budget is too small (at least 256K)")
        if not self.eps > 0:
            raise ParameterError("eps <= 0")
        self.block_bytes = READ_BLOCK_BYTES if self.opt.memory is None else \
            int(min(READ_BLOCK_BYTES, max(64 << 10, self.opt.memory // 8)))
        self._hash = _hasher(self.opt.hash_bits)

    def _seed(self, k):
        return problem_seed(self.seed, k)

    def _n_features(self, src):
        return (1 << self.opt.hash_bits) if self.opt.hash_bits else int(src.n_features)

    def fit(self, data):
        """Train on a path ('-' for stdin), a BinaryDataset or a CSRDataset. Returns a Model."""
        t0 = time.perf_counter()
        base = self.opt.tmp_dir or tempfile.gettempdir()
        if not os.path.isdir(base):
            raise LLSVMError(f"temporary directory {base} does not exist")
        directory = tempfile.mkdtemp(prefix="llsvm-", dir=base)
        src = None
        try:
            src = _Input(data, self.zero_based, self.progress, directory, self.block_bytes)
            problems, labels = self._run(src, directory, t0)
            return self._model(problems, labels, self._n_features(src), src)
        finally:
            if src is not None:
                src.close()
            shutil.rmtree(directory, ignore_errors=True)

    def _problems(self, labels):
        return [_Problem(k, pos, Cp, Cn) for k, (pos, Cp, Cn) in enumerate(_definitions(self.C, self.weights,
                                                                                           labels))]

    def _classes_of(self, labels):
        classes = _Classes()
        classes.add(np.asarray(labels, np.float64))
        return classes

    def _model(self, problems, labels, n_features, src):
        results = [p.result for p in problems]
        labs, W = stacked_weights(labels, results)
        kw = {"hash_bits": self.opt.hash_bits} if self.opt.hash_bits else {}
        model = Model(SOLVER_TYPE, labs.size, labs, n_features, self.bias, W,
                      meta={"results": results, "solver": self.solver}, **kw)
        model.meta["stream"] = {"n_rows": int(src.n_rows), "n_features": int(src.n_features), "nnz": int(src.nnz),
                                "bias": self.bias, "hash_bits": self.opt.hash_bits}
        return model

    def _report(self, p, n_iter_name="#iter"):
        r = p.result
        self.say(f"\noptimization finished, {n_iter_name} = {r.n_iter}\n")
        if not r.converged:
            self.warn("\nWARNING: reaching max number of iterations\n")
        self.say(f"Objective value = {-r.dual:f}\n")
        self.say(f"nSV = {r.nSV}\n")


class StreamSVMSolver(_OutOfCore):
    """-s streamsvm: the reader (this thread) and the trainer (a second thread, or alternating with one)."""

    solver = STREAMSVM

    def _run(self, src, directory, t0):
        if src.known:
            labels = [int(v) for v in self._classes_of(src.labels()).labels]
            problems = self._problems(labels)
            warn_missing_weights(weighted_C(self.C, self.weights, labels)[1], self.warn)
            for p in problems:
                self._fit(p, src, self._classes_of(labels), t0, None)
            return problems, labels
        # text: the first problem trains while the text is parsed and copied; a third class means one-vs-rest,
        # which starts over from the copy
        writer = BinaryWriter(os.path.join(directory, "input.bin"), fsync=False)
        classes = _Classes()
        first = _Problem(0, 0, self.C, self.C)
        try:
            complete = self._fit(first, src, classes, t0, writer)
        finally:
            writer.abort()              # a no-op once the copy is complete
        labels = [int(v) for v in classes.labels]
        warn_missing_weights(weighted_C(self.C, self.weights, labels)[1], self.warn)
        problems = self._problems(labels)
        if complete and len(problems) == 1:
            problems[0].trace, problems[0].result = first.trace, first.result
            return problems, labels
        for p in problems:
            self._fit(p, src, self._classes_of(labels), t0, None)
        return problems, labels

    def _fit(self, p, src, classes, t0, writer):
        """Run the cached loops for problem p. With `writer`, the first pass reads text (and copies it); returns
        False when that pass found a third class (the caller restarts with one-vs-rest)."""
        lockstep = self.threads == 1
        bias = self.bias
        if src.known:
            n_rows, n_feat = int(src.n_rows), self._n_features(src)
            omega = _omega(self.opt.memory, _row_bytes(src.nnz, n_rows), n_rows)
        else:
            n_rows, n_feat, omega = 0, (1 << self.opt.hash_bits) if self.opt.hash_bits else 0, None
        cache = None
        trainer = None
        window = {"PGmax": -math.inf, "PGmin": math.inf, "picks": 0, "updates": 0, "evicted": 0}
        converged = False
        n_iter = 0
        total_read = 0.0
        start_dual = start_ww = 0.0   # dual and ||w||^2 of the model frozen at the start of the pass (alpha = 0)
        try:
            for it in range(self.max_iter):
                tp = time.perf_counter()
                loss = 0.0
                inserted = skipped = evicted = 0
                nbytes = 0
                pending = 0
                text_pass = writer is not None and it == 0
                blocks = src.text_pass(writer) if text_pass else src.blocks()
                for block in blocks:
                    cls, new = classes.add(block.y)
                    if text_pass:
                        labels = classes.labels
                        if len(labels) > 2:
                            # one-vs-rest from the copy: stop training, finish the copy
                            if trainer is not None:
                                cache.stop()
                                trainer.join()
                                trainer = None
                            for _ in blocks:
                                pass
                            writer.close()
                            src.switch_to_copy(writer.path)
                            return False
                        defs = _definitions(self.C, self.weights, labels)[0]
                        p.Cp, p.Cn = defs[1], defs[2]
                    nbytes += block.nbytes
                    if self._hash is not None:
                        block = self._hash(block)
                    first = int(block.first_row)
                    if cache is None:
                        if omega is None:
                            omega = _omega(self.opt.memory, _row_bytes(block.nnz, block.n_rows), 0)
                            if self.opt.memory is None:
                                omega = max(omega, block.n_rows)
                        cache = StreamCache(omega, max(n_rows, block.n_rows), max(n_feat, block.n_features), bias,
                                            self._seed(p.k), batch=self.opt.batch, n_sched=max(n_rows, 1),
                                            unbounded=self.opt.memory is None)
                        if not lockstep:
                            trainer = threading.Thread(target=cache.train, name="llsvm-trainer", daemon=True)
                            trainer.start()
                    if text_pass:
                        end = first + block.n_rows
                        need_rows = end > cache.n_rows_capacity
                        need_feat = block.n_features > cache.n_features_capacity
                        need_omega = self.opt.memory is None and end > cache.omega
                        if need_rows or need_feat or need_omega:
                            cap = max(end, 2 * cache.n_rows_capacity) if need_rows else 0
                            cache.grow(n_rows=cap,
                                       n_features=max(block.n_features, 2 * cache.n_features_capacity)
                                       if need_feat else 0,
                                       omega=max(end, 2 * cache.omega) if need_omega else 0)
                        n_rows = end
                        n_feat = max(n_feat, block.n_features)
                        cache.set_n(n_rows)
                    ys = p.signs(cls)
                    if lockstep:
                        # steps of LOCKSTEP_ROWS rows on global row numbers (a step may span two blocks), so the
                        # run does not depend on how the rows come in blocks
                        b0 = 0
                        while b0 < block.n_rows:
                            b1 = min(block.n_rows, b0 + LOCKSTEP_ROWS - (first + b0) % LOCKSTEP_ROWS)
                            r = cache.insert(ys, block.row_view(), first, p.Cp, p.Cn, b0, b1)
                            inserted += r[0]
                            skipped += r[1]
                            evicted += r[2]
                            loss += r[3]
                            pending += b1 - b0
                            if (first + b1) % LOCKSTEP_ROWS == 0:
                                cache.train(int(self.opt.lockstep_ratio * pending), False)
                                pending = 0
                            b0 = b1
                    else:
                        r = cache.insert(ys, block.row_view(), first, p.Cp, p.Cn)
                        inserted += r[0]
                        skipped += r[1]
                        evicted += r[2]
                        loss += r[3]
                    if self.progress is not None:
                        self.progress.update(block.n_rows)
                if cache is None:
                    raise ParameterError("no training data")
                if pending:
                    cache.train(int(self.opt.lockstep_ratio * pending), False)
                    pending = 0
                if text_pass:
                    # the later passes (and problems) read the binary copy
                    writer.close()
                    src.switch_to_copy(writer.path)
                    writer = None
                    cache.set_n(n_rows)
                n_iter = it + 1
                read_secs = time.perf_counter() - tp
                if not lockstep:
                    cache.wait_picks(n_rows)
                stats = cache.end_pass()
                for key in ("picks", "updates", "evicted"):
                    window[key] += stats[key]
                window["PGmax"] = max(window["PGmax"], stats["PGmax"])
                window["PGmin"] = min(window["PGmin"], stats["PGmin"])
                spread = window["PGmax"] - window["PGmin"]
                # over every row the reader read, 0 included (at alpha = 0 every PG is -1: no spread, yet not
                # optimal); and max |PG_i|, the certificate's violation as for the in-memory solvers
                read_spread = max(stats["read_PGmax"], 0.0) - min(stats["read_PGmin"], 0.0)
                read_violation = max(stats["read_PGmax"], -stats["read_PGmin"], 0.0)
                # eq. (10) over at least n picks (a pass with fewer picks extends the window), and the same
                # spread over every row the reader read in this pass, at the model frozen when the pass began
                # (the picks alone miss about e^-2 of the rows): that frozen model is then the one returned
                converged = (window["picks"] >= n_rows and spread < self.eps and read_spread < self.eps
                             and window["updates"] + window["picks"] - window["evicted"] > 0)
                # the model now becomes the reader's view for the next pass (kept when converged)
                sa, ww, size, eps_now = cache.snapshot(n_rows, n_feat, freeze=not converged)
                secs = time.perf_counter() - tp
                total_read += secs
                # the rows the cache may hold, at most n (from text the slots were sized before n was known)
                om = int(min(cache.omega, max(n_rows, 1)))
                D = sa - 0.5 * ww
                # the primal and the gap of the model frozen at the start of this pass (exact: the reader summed
                # the loss of every row at that model)
                P = 0.5 * start_ww + loss
                rec = {"pass": n_iter, "seconds": time.perf_counter() - t0, "pass_seconds": secs, "dual": D,
                       "start_dual": start_dual, "primal": P, "gap": P - start_dual,
                       "max_violation": read_violation, "cache_rows": int(size), "cache_fill": size / om,
                       "omega": om, "cache_bytes": int(cache.row_bytes),
                       "cache_peak_bytes": int(cache.peak_row_bytes), "inserted": inserted,
                       "skipped": skipped, "evicted_reader": evicted, "evicted_trainer": stats["evicted"],
                       "picks": stats["picks"], "updates": stats["updates"],
                       "updates_per_second": stats["updates"] / secs if secs > 0 else None,
                       "picks_per_second": stats["picks"] / secs if secs > 0 else None,
                       "reader_seconds": read_secs,
                       "reader_mb_per_second": nbytes / read_secs / 1e6 if read_secs > 0 else None,
                       "eps": eps_now, "M_plus": window["PGmax"], "M_minus": window["PGmin"],
                       "read_PG_max": stats["read_PGmax"], "read_PG_min": stats["read_PGmin"]}
                p.trace.seconds.append(rec["seconds"])
                p.trace.dual.append(D)
                p.trace.primal.append(P)
                p.trace.records.append(rec)
                self.say(".")
                if self.progress is not None and hasattr(self.progress, "set_postfix_str"):
                    self.progress.set_postfix_str(f"pass {n_iter} dual {D:.6g} gap {rec['gap']:.3g} "
                                                  f"cache {100 * size / om:.0f}%")
                if converged:
                    break
                start_dual, start_ww = D, ww
                if window["picks"] >= n_rows:
                    window = {"PGmax": -math.inf, "PGmin": math.inf, "picks": 0, "updates": 0, "evicted": 0}
        finally:
            if cache is not None:
                cache.stop()
            if trainer is not None:
                trainer.join()
        # converged: the model frozen at the start of the last pass, which that pass certified (its primal, gap
        # and largest violation over every row are exact); otherwise the latest model, whose primal is unknown
        alpha = cache.alpha_array(n_rows, frozen=converged)
        w = cache.w_array(n_feat, frozen=converged)
        last = p.trace.records[-1]
        r = FitResult(w=w, n_iter=n_iter, dual=float(alpha.sum()) - 0.5 * float(w @ w),
                      primal=last["primal"] if converged else None,
                      nSV=int(np.count_nonzero(alpha)), converged=converged, solver=3)
        r.gap = r.primal - r.dual if converged else None
        r.max_violation = last["max_violation"] if converged else None
        if self.opt.return_alpha:
            r.alpha = alpha
        r.extra = {"passes": p.trace.records, "reader_seconds": total_read, "omega": om,
                   "cache_bytes": int(cache.row_bytes), "cache_peak_bytes": int(cache.peak_row_bytes), "picks": int(cache.total_picks),
                   "updates": int(cache.total_updates), "evicted_trainer": int(cache.total_evicted_trainer),
                   "evicted_reader": int(cache.total_evicted_reader), "inserted": int(cache.total_inserted)}
        p.result = r
        self._report(p)
        return True


class BlockMinimizationSolver(_OutOfCore):
    """-s bm: every outer iteration loads the blocks in turn and runs DCD (inner eps) on each."""

    solver = BM

    def _units(self, src):
        """One outer iteration's blocks, in file order, each at most the budget (with first_row)."""
        ds = src.ds
        if src.memory:
            yield from src.blocks_of(self.opt.memory)
            return
        limit = self.opt.memory
        sizes = [12 * int(k) + 16 * int(r) for r, k in zip(ds.block_rows, ds.block_nnz)]
        if limit is None or sum(sizes) <= limit:
            # everything fits: load once, keep it for the later outer iterations
            if getattr(self, "_whole", None) is None:
                self._whole = ds.load_blocks(0, ds.n_blocks)
            yield self._whole
            return
        if max(sizes, default=0) > limit:
            # file blocks larger than the budget: cut each into pieces that fit
            yield from ds.iter_blocks(max_bytes=limit)
            return
        b0 = 0
        while b0 < ds.n_blocks:
            b1, used = b0, 0
            while b1 < ds.n_blocks and used + sizes[b1] <= limit:
                used += sizes[b1]
                b1 += 1
            yield ds.load_blocks(b0, b1)
            b0 = b1

    def _run(self, src, directory, t0):
        self._whole = None
        if not src.known:
            copy = os.path.join(directory, "input.bin")
            with BinaryWriter(copy, fsync=False) as w:
                for b in _prefetched(src.ds.iter_blocks(progress=self.progress)):
                    w.write_dataset(b)
                w.close()
            src.switch_to_copy(copy)
        labels = [int(v) for v in self._classes_of(src.labels()).labels]
        warn_missing_weights(weighted_C(self.C, self.weights, labels)[1], self.warn)
        problems = self._problems(labels)
        classes = self._classes_of(labels)
        n_rows, n_feat = int(src.n_rows), self._n_features(src)
        w_size = n_feat + (1 if self.bias >= 0 else 0)
        for p in problems:
            p.alpha = np.zeros(n_rows)
            p.w = np.zeros(w_size)
            p.rng = KL.rng_state(self._seed(p.k))
            p.D = 0.0
            p.n_iter = 0
            p.converged = False
            p.inner = []
        active = list(problems)
        for it in range(self.max_iter):
            if not active:
                break
            n_blocks = 0
            for unit in self._units(src):
                n_blocks += 1
                if self._hash is not None:
                    unit = self._hash(unit)
                cls, _ = classes.add(unit.y)
                r0 = int(unit.first_row)
                xnorm = np.empty(unit.n_rows)
                KL.sq_norms(unit.row_view(self.bias), EMPTY_ROWS, xnorm)
                for p in active:
                    alpha = p.alpha[r0:r0 + unit.n_rows]
                    state = KL.DCDState(unit.row_view(self.bias, n_feat), EMPTY_ROWS, p.signs(cls), alpha, p.w,
                                        xnorm, np.arange(unit.n_rows, dtype=np.int32), p.Cp, p.Cn, True, p.rng)
                    while state.n_iter < DUAL_MAX_ITER:
                        done, _ = state.run(min(10, DUAL_MAX_ITER - state.n_iter), self.opt.inner_eps, True)
                        if done:
                            break
                    p.inner.append(int(state.n_iter))
                    D = float(p.alpha.sum()) - 0.5 * float(p.w @ p.w)
                    p.trace.seconds.append(time.perf_counter() - t0)
                    p.trace.dual.append(D)
                    p.trace.records.append({"outer": it + 1, "block": n_blocks, "seconds": p.trace.seconds[-1],
                                            "dual": D, "inner_iter": int(state.n_iter)})
            self.say(".")
            for p in list(active):
                p.n_iter = it + 1
                D_old, p.D = p.D, p.trace.dual[-1]
                if abs(p.D - D_old) <= self.eps * abs(p.D):
                    p.converged = True
                    active.remove(p)
            for p in problems:
                p.blocks = n_blocks
        self._whole = None
        for p in problems:
            r = FitResult(w=p.w, n_iter=p.n_iter, dual=p.D, nSV=int(np.count_nonzero(p.alpha)),
                          converged=p.converged, solver=3)
            if self.opt.return_alpha:
                r.alpha = p.alpha
            r.extra = {"blocks": p.blocks, "trace": p.trace.records}
            p.result = r
            self._report(p)
        return problems, labels
