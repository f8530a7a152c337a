"""-s streamsvm: dual cached loops, the out-of-core solver of Matsushima, Vishwanathan, Smola, "Linear support vector
machines via dual cached loops", KDD 2012 (Algorithms 1 and 2; the kernel is cext/_stream.pyx).

A reader streams the rows, pass after pass, into a cache of at most Omega rows (Omega from --memory) while a
trainer does dual coordinate steps on random cached rows and evicts the uninformative ones. Both run without the
GIL on two threads (`threads >= 2`, the default of the CLI); with `threads == 1` they alternate on one thread (256
rows read, then 2 picks per row read), which makes the run deterministic for a seed. Text input is parsed during
the first pass and written to a binary copy in the temporary directory, which the later passes read.

It solves the -s 3 problem (hinge loss, the bias as a regularized coordinate) and stops when the largest
projected-gradient violation max_i |PG_i| over every row of a reader pass, at the model frozen when that pass began,
is at most `eps` (default 0.1, LIBLINEAR's -s 3 default), and the paper's eq. (10), M+ - M- < eps over the trainer's
picks of at least n picks, holds too; it then returns that frozen model, whose primal, gap and violation the pass
measured exactly. Otherwise it stops after max_iter passes. Classes are one-vs-rest, one after the other, each with
the whole budget (LIBLINEAR's label order, {-1,+1} swap and -wi weights).
"""
import math
import os
import threading
import time

import numpy as np

from .. import memory
from .._ext._stream import SLOT_BYTES, StreamCache
from ..errors import ParameterError
from ..report import restage
from .common import EMPTY_ROWS, Classes, FitResult
from .outofcore import STREAM_JSON_FIELDS, BinaryProblem, StreamedSolver, stream_metrics

LOCKSTEP_ROWS = 256
MAX_OMEGA = (1 << 31) - 1   # the most rows StreamCache holds
CACHE_SLACK = 1.5           # a slot's buffer holds its row with up to about 2x room (see _stream.pyx)


def _row_bytes(nnz, n_rows):
    return CACHE_SLACK * 12.0 * nnz / max(1, n_rows) + SLOT_BYTES


def _cap(room, row_bytes, slots=0):
    """Rows the cache may hold in `room` bytes (at least 1): each costs row_bytes (its buffer and its slot's
    bookkeeping); `slots` slots exist already, whose bookkeeping stays when they are not all used."""
    cap = int((room - slots * SLOT_BYTES) // (row_bytes - SLOT_BYTES)) if slots else 0
    if cap > slots or not slots:
        cap = int(room // row_bytes)        # beyond the slots there are: each new slot costs a whole row
    return max(1, min(cap, MAX_OMEGA))      # a huge --memory (1000T) leaves room for more rows than a cache indexes


# per row of the data: alpha and the reader's frozen copy (8 bytes each), slot_of (4)
STATE_ROW_BYTES = 20


class StreamSVMSolver(StreamedSolver):
    """-s streamsvm: the reader (this thread) and the trainer (a second thread, or alternating with one)."""

    name = "streamsvm"

    # -- the budget: the per-row state, w and the reader's w, the reading, the cache gets the rest --------------
    def _state(self, rows):
        """Bytes of the per-row state (and of alpha's copy when the caller asked for it)."""
        return (STATE_ROW_BYTES + (8 if self.opt.return_alpha else 0)) * int(rows)

    def _weights(self, n_features, problems):
        """w and the reader's frozen w, the earlier problems' results, or (at the end) the model's stacked copy."""
        return max(2 + problems, 2 * problems) * 8 * (int(n_features) + 1)

    def _known_omega(self, src, n_rows, n_feat, problems, slots=0, capacity=None):
        """Omega for a known input (binary file, rows in memory, text's copy once read): every row without a
        budget, else what the budget leaves to the cache (at most n); refuses a budget that cannot hold the state,
        the weights, the reading and one cached row. `capacity`: rows the per-row arrays hold (default n)."""
        row_bytes = _row_bytes(src.nnz, n_rows)
        state, reading = self._state(n_rows), self._reading(src)
        room = self._check_budget(n_rows, state, self._weights(n_feat, problems), reading, row_bytes,
                                  note=self._block_note(src) if reading > state else None)
        if room is None:
            return max(1, n_rows)
        room -= self._state(capacity) - state if capacity is not None else 0
        return min(max(1, n_rows), _cap(room, row_bytes, slots))

    def _text_room(self, rows, n_features, seen_bytes, seen_rows, row_bytes, capacity=None, feat_capacity=None):
        """While text is read under the budget: the bytes left to the cache with `rows` rows read so far (the
        per-row arrays sized for `capacity`, w for `feat_capacity` features), after the minimum for the rows so far
        is checked (refused when they need more than the budget)."""
        reading = self._text_reading(seen_bytes, seen_rows)
        state, weights = self._state(rows), self._weights(n_features, 1)
        room = self._check_budget(rows, state, weights, reading, row_bytes, partial=True)
        return room - (self._state(capacity or rows) - state) - (self._weights(feat_capacity or n_features, 1)
                                                                 - weights)

    def _text_grow(self, cache, end, n_features, seen_bytes, seen_rows, row_bytes):
        """Text under a budget, before a block's rows go in: rows up to `end` and features up to n_features must
        fit. The minimum for the rows so far is checked first (refused before anything grows); the cache then
        shrinks to what the grown per-row arrays and weight vectors leave (set_cap), and they grow, by a quarter
        when that leaves room for a cached row, else to exactly what is needed. Returns the new cap, or None when
        it did not change."""
        rows_cap, feat_cap = cache.n_rows_capacity, cache.n_features_capacity
        need_rows, need_feat = end > rows_cap, n_features > feat_cap
        if need_feat:
            self.check_weights(n_features, 1)
        rows_new = max(end, rows_cap + rows_cap // 4) if need_rows else rows_cap
        feat_new = max(n_features, feat_cap + feat_cap // 4) if need_feat else feat_cap
        room = self._text_room(end, n_features, seen_bytes, seen_rows, row_bytes, rows_new, feat_new)
        if room < row_bytes:
            rows_new, feat_new = max(end, rows_cap), max(n_features, feat_cap)
            room = self._text_room(end, n_features, seen_bytes, seen_rows, row_bytes, rows_new, feat_new)
        cap = _cap(room, row_bytes, cache.omega)
        lowered = cap < cache.cap
        if lowered:
            cache.set_cap(cap)
        if need_rows or need_feat:
            cache.grow(n_rows=rows_new if need_rows else 0, n_features=feat_new if need_feat else 0)
        return cap if lowered else None

    def _copy_minimum(self, rows, n_feat, k):
        return self._state(rows), self._weights(n_feat, k)

    def _run(self, src, directory, t0):
        self._starts = None
        if self.warm is not None and not src.known:
            # -i: the start needs the classes before the first pass, which then reads a binary copy
            self._copy_text(src, directory)
        if src.known:
            labels = [int(v) for v in Classes(src.labels()).labels]
            problems = self._problems(labels, self._once)
            self._n_problems = len(problems)
            self._check_classes(src, labels, problems)
            if self.warm is not None:
                from .warm import model_starts
                self._starts = model_starts(self.warm, self.params, labels, self._n_features(src.n_features))
            problems = [p for p in problems if self._trains(p.k)]
            for p in problems:
                self._train_problem(p, src, Classes(labels), t0, None)
            return problems, labels
        # text: the first problem trains while the text is parsed and copied; a third class means one-vs-rest,
        # which starts over from the copy
        writer = self._copy_writer(os.path.join(directory, "input.bin"), src)
        self._n_problems = 1
        classes = Classes()
        first = BinaryProblem(0, 0, self.C, self.C)
        try:
            complete = self._train_problem(first, src, classes, t0, writer)
        finally:
            writer.abort()              # a no-op once the copy is complete
        labels = [int(v) for v in classes.labels]
        problems = self._problems(labels, self._once)
        self._n_problems = len(problems)
        if complete and len(problems) == 1:
            problems[0].trace, problems[0].result = first.trace, first.result
            return problems, labels
        self._check_classes(src, labels, problems)
        problems = [p for p in problems if self._trains(p.k)]
        for p in problems:
            self._train_problem(p, src, Classes(labels), t0, None)
        return problems, labels

    def _new_cache(self, p, omega, n_rows, n_feat, lockstep):
        """Problem p's cache (Omega rows, capacities n_rows and n_feat), and its trainer's thread, started, unless
        `lockstep` (None then)."""
        self.check_weights(n_feat, 1)
        cache = StreamCache(omega, n_rows, n_feat, self.bias, self._seed(p.k), batch=self.opt.batch,
                            n_sched=max(n_rows, 1), unbounded=self.opt.memory is None)
        if lockstep:
            return cache, None
        thread = threading.Thread(target=cache.train, name="llsvm-trainer", daemon=True)
        try:
            thread.start()
        except RuntimeError as exc:     # "can't start new thread": no room for its stack
            raise MemoryError(f"the trainer's thread could not start ({exc})") from None
        return cache, thread

    def _warm_cache(self, p, src, classes, cache, n_feat):
        """-i (fit(warm=model)): one pass over the (known) input sets problem p's alpha to the dual point of the
        model's w (warm.primal_to_dual, the hinge's) and the cache's w to w(alpha) (StreamCache.warm_rows)."""
        from .warm import primal_to_dual
        w0 = self._starts[p.k if len(self._starts) > 1 else 0]["w"]
        for block in src.blocks():
            if self._hash is not None:
                block = self._hash(block)
            cls, _ = classes.add(block.y)
            ys = p.signs(cls)
            C = np.where(ys > 0, p.Cp, p.Cn)
            if block.weights is not None:
                C = C * block.weights
            alpha = primal_to_dual((block.row_view(self.bias, n_feat), EMPTY_ROWS), ys, C, w0, True)
            cache.warm_rows(ys, block.row_view(), int(block.first_row), alpha)
            if self.progress is not None:
                self.progress.update(block.n_rows)
            del block, ys, cls, alpha

    def _check_classes(self, src, labels, problems):
        """One-vs-rest (more than two classes): the problems run one after the other, but each keeps its w for the
        model, stacked at the end: refused up front, naming the classes, when they cannot fit (without --memory;
        under it, the budget check counts them)."""
        if len(problems) > 1 and self.opt.memory is None:
            k = len(problems)
            memory.check_classes(len(labels), f"{k} one-vs-rest problems",
                                 (2 * k + 1) * 8 * (self._n_features(src.n_features) + 1),
                                 "weight vectors (and the model's)")

    def _train_problem(self, p, src, classes, t0, writer):
        """Run the cached loops for problem p. With `writer`, the first pass reads text (and copies it); returns
        False when that pass found a third class (the caller restarts with one-vs-rest)."""
        lockstep = self.threads == 1
        budget = self.opt.memory
        if src.known:
            n_rows, n_feat = int(src.n_rows), self._n_features(src.n_features)
            self.check_weights(n_feat, 1)
            omega = self._known_omega(src, n_rows, n_feat, self._n_problems)
        else:
            n_rows, n_feat, omega = 0, (1 << self.opt.hash_bits) if self.opt.hash_bits else 0, None
        # text under a budget: the largest parsed block so far and the average cached row's bytes
        seen_bytes = seen_rows = 0
        row_bytes = None
        cache = None
        trainer = None
        window = {"PGmax": -math.inf, "PGmin": math.inf, "picks": 0, "updates": 0, "evicted": 0}
        converged = False
        n_iter = 0
        total_read = 0.0
        start_dual = start_ww = 0.0   # dual and ||w||^2 of the model frozen at the start of the pass (alpha = 0)
        try:
            if self._starts is not None:
                # -i: every row's alpha from the model's w, and w = w(alpha), before the first pass, which
                # measures that start (the reader's view) as the later passes measure theirs
                cache, trainer = self._new_cache(p, omega, n_rows, n_feat, lockstep)
                self._warm_cache(p, src, classes, cache, n_feat)
                sa, start_ww, _, _ = cache.snapshot(n_rows, n_feat, freeze=True)
                start_dual = sa - 0.5 * start_ww
            for it in range(self.max_iter):
                tp = time.perf_counter()
                loss = 0.0
                inserted = skipped = evicted = 0
                nbytes = 0
                pending = 0
                cap_changes = []        # text under a budget: [rows read, Omega] at the start, then at each set_cap
                text_pass = writer is not None and it == 0
                # the bar: this pass's rows (once known), and the passes so far of the most the run makes
                restage(self.progress, f"pass {it + 1} of at most {self.max_iter}", n_rows or None, "rows")
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
                        defs = classes.problems(self.C, self.weights)[0]
                        p.Cp, p.Cn = defs[1], defs[2]
                    nbytes += block.nbytes
                    if self._hash is not None:
                        block = self._hash(block)
                    first = int(block.first_row)
                    if text_pass and budget is not None:
                        seen_bytes = max(seen_bytes, block.nbytes)
                        seen_rows = max(seen_rows, block.n_rows)
                    if cache is None:
                        if omega is None:
                            if budget is None:
                                omega = max(1, block.n_rows)
                            else:
                                # text: the rows so far are the first block's; Omega follows the per-row state as
                                # it grows (set_cap)
                                row_bytes = _row_bytes(block.nnz, block.n_rows)
                                room = self._text_room(block.n_rows, max(n_feat, block.n_features), seen_bytes,
                                                       seen_rows, row_bytes)
                                omega = _cap(room, row_bytes)
                                cap_changes.append([first, omega])
                        cache, trainer = self._new_cache(p, omega, max(n_rows, block.n_rows),
                                                         max(n_feat, block.n_features), lockstep)
                    if text_pass:
                        end = first + block.n_rows
                        need_rows = end > cache.n_rows_capacity
                        need_feat = block.n_features > cache.n_features_capacity
                        need_omega = budget is None and end > cache.omega
                        if budget is not None:
                            cap = self._text_grow(cache, end, block.n_features, seen_bytes, seen_rows, row_bytes)
                            if cap is not None:
                                cap_changes.append([first, cap])
                        elif need_rows or need_feat or need_omega:
                            if need_feat:
                                self.check_weights(block.n_features, 1)
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
                    del block, ys, cls      # not held while the next block is read
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
                    if budget is not None:
                        # n is known: the cache gets what reading the copy leaves (the known input's rule)
                        cap = self._known_omega(src, n_rows, cache.n_features_capacity, self._n_problems,
                                                slots=cache.omega, capacity=cache.n_rows_capacity)
                        cache.set_cap(cap)
                        cap_changes.append([n_rows, cap])
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
                # max |PG_i| over every row the reader read in this pass, at the model frozen when the pass began:
                # the certificate's violation, as for the in-memory solvers (the picks alone miss about e^-2 of
                # the rows)
                read_violation = max(stats["read_PGmax"], -stats["read_PGmin"], 0.0)
                # -e's rule: that violation at most eps; eq. (10) (M+ - M- < eps over at least n picks, a pass with
                # fewer picks extending the window) stays as a further condition where it is stricter. The frozen
                # model is then the one returned
                converged = (read_violation <= self.eps and window["picks"] >= n_rows and spread < self.eps
                             and window["updates"] + window["picks"] - window["evicted"] > 0)
                # the model now becomes the reader's view for the next pass (kept when converged)
                sa, ww, size, eps_now = cache.snapshot(n_rows, n_feat, freeze=not converged)
                secs = time.perf_counter() - tp
                total_read += secs
                # the rows the cache may hold, at most n (from text the slots were sized before n was known)
                om = int(min(cache.cap, max(n_rows, 1)))
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
                       "read_PG_max": stats["read_PGmax"], "read_PG_min": stats["read_PGmin"],
                       "cap_changes": cap_changes}
                p.trace.seconds.append(rec["seconds"])
                p.trace.dual.append(D)
                p.trace.primal.append(P)
                p.trace.records.append(rec)
                self.reporter.info(".")
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
        # alpha: a copy only when the caller asked for it (return_alpha), else read in place
        alpha = cache.alpha_array(n_rows, frozen=converged) if self.opt.return_alpha else \
            cache.alpha_view(n_rows, frozen=converged)
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
                   "cache_bytes": int(cache.row_bytes), "cache_peak_bytes": int(cache.peak_row_bytes),
                   "picks": int(cache.total_picks),
                   "updates": int(cache.total_updates), "evicted_trainer": int(cache.total_evicted_trainer),
                   "evicted_reader": int(cache.total_evicted_reader), "inserted": int(cache.total_inserted)}
        p.result = r
        self._report(p)
        return True


JSON_FIELDS = STREAM_JSON_FIELDS + ("passes",)


def metrics(model, params, ds=None):
    """--json of -s streamsvm: outofcore.stream_metrics with its per-pass records under "passes"."""
    return stream_metrics(model, params, trace_key="passes")
