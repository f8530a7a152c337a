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

from .._ext._stream import SLOT_BYTES, StreamCache
from ..binfmt import BinaryWriter
from ..errors import ParameterError
from .common import Classes, FitResult
from .outofcore import STREAM_JSON_FIELDS, BinaryProblem, StreamedSolver, stream_metrics

DEFAULT_EPS = 0.1            # the -s 3 default: max |PG_i| over every row of a pass
LOCKSTEP_ROWS = 256
CACHE_SLACK = 1.5           # a slot's buffer holds its row with up to about 2x room (see _stream.pyx)


def _row_bytes(nnz, n_rows):
    return CACHE_SLACK * 12.0 * nnz / max(1, n_rows) + SLOT_BYTES


def _omega(memory, avg_row_bytes, n_rows):
    """Rows the cache may hold: all of them without a budget, else what the budget pays for."""
    if memory is None:
        return max(1, n_rows)
    om = max(1, int(memory // avg_row_bytes))
    return min(om, max(1, n_rows)) if n_rows else om


class StreamSVMSolver(StreamedSolver):
    """-s streamsvm: the reader (this thread) and the trainer (a second thread, or alternating with one)."""

    name = "streamsvm"

    def _run(self, src, directory, t0):
        if src.known:
            labels = [int(v) for v in Classes(src.labels()).labels]
            problems = self._problems(labels, self.reporter)
            for p in problems:
                self._train_problem(p, src, Classes(labels), t0, None)
            return problems, labels
        # text: the first problem trains while the text is parsed and copied; a third class means one-vs-rest,
        # which starts over from the copy
        writer = BinaryWriter(os.path.join(directory, "input.bin"), fsync=False)
        classes = Classes()
        first = BinaryProblem(0, 0, self.C, self.C)
        try:
            complete = self._train_problem(first, src, classes, t0, writer)
        finally:
            writer.abort()              # a no-op once the copy is complete
        labels = [int(v) for v in classes.labels]
        problems = self._problems(labels, self.reporter)
        if complete and len(problems) == 1:
            problems[0].trace, problems[0].result = first.trace, first.result
            return problems, labels
        for p in problems:
            self._train_problem(p, src, Classes(labels), t0, None)
        return problems, labels

    def _train_problem(self, p, src, classes, t0, writer):
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
                        defs = classes.problems(self.C, self.weights)[0]
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
                        self.check_weights(max(n_feat, block.n_features), 1)
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
