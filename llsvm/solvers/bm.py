"""-s bm: block minimization, Yu, Hsieh, Chang, Lin, "Large linear classification when data cannot fit in memory",
KDD 2010: the baseline of both out-of-core papers.

The binary file is read in blocks that fit --memory (text input is first copied to a binary file in the temporary
directory); every outer iteration loads the blocks in turn. On each block it first measures the block's rows at the
current (alpha, w) (KL.dcd_violation: max |PG_i|, the hinge loss); a block whose largest violation is at most eps
is skipped, the others get LIBLINEAR's dual coordinate descent (with shrinking, cext/_linear.pyx) until its own
stopping rule holds at --inner-eps, alpha and w carried across blocks. It solves the -s 3 problem and stops after
an outer iteration that skipped every block: w did not change during it, so max_i |PG_i| <= eps over every row, and
the primal 1/2 w.w + sum_i C_i loss_i, the dual and the gap it measured are exact for the returned model. Otherwise
it stops after max_iter outer iterations. The binary problems of one-vs-rest are trained side by side: each block is
visited for every problem still running.
"""
import time

import numpy as np

from .._ext import _linear as KL
from .. import memory
from .._ext._random import rng_state
from ..params import echo
from ..report import restage
from .common import EMPTY_ROWS, Classes, FitResult, sq_norm
from .outofcore import STREAM_JSON_FIELDS, StreamedSolver, stream_metrics



class BlockMinimizationSolver(StreamedSolver):
    """-s bm: every outer iteration loads the blocks in turn and runs DCD (inner eps) on each."""

    name = "bm"

    BLOCK_ROW_BYTES = 64     # per row of a loaded block: labels, class indices, signs, xnorm, DCD's index

    # -- the budget: alpha of every problem, their w, the loaded block gets the rest -----------------------------
    def _state(self, rows, problems):
        """Bytes of the per-row state: one alpha per binary problem (they are trained side by side)."""
        return 8 * int(rows) * max(1, problems)

    def _weights(self, n_features, problems):
        """One w per problem, and the model's stacked copy at the end."""
        return 2 * max(1, problems) * 8 * (int(n_features) + 1)

    def _unit_costs(self, src):
        """(cost of each block of the binary file, loaded: its arrays, with its weight column when it has one, and
        _block_extra), or None for rows in memory (cut by _memory_bytes)."""
        if src.memory:
            return None
        ds = src.ds
        vsize = 4 if ds.float32 else 8
        per_row = 16 + (8 if ds.has_weights else 0)
        return [(4 + vsize) * int(k) + per_row * int(r) + self._block_extra(int(r), int(k))
                for r, k in zip(ds.block_rows, ds.block_nnz)]

    def _memory_bytes(self, ds, limit):
        """Rows in memory are cut into blocks of at most this many bytes, counted as a binary file's (12 bytes per
        non-zero, 16 per row), so that with _block_extra, which is all a block of them costs (it is a view of
        them), an average block costs at most `limit` (one block without a budget)."""
        if limit is None:
            return None
        n = max(1, ds.n_rows)
        per_row = 16 + (4 + ds.dtype.itemsize) * ds.nnz / n
        extra = self._block_extra(1, ds.nnz / n)
        return max(1, int(limit * per_row / (per_row + extra)))

    def _plan(self, src, n_rows, n_feat, problems):
        """Check the budget (up front: n is known) and return the bytes left to the loaded blocks (None: no
        budget). The smallest block that must fit is the file's largest (read whole), or the largest row of rows in
        memory."""
        state, weights = self._state(n_rows, problems), self._weights(n_feat, problems)
        costs = self._unit_costs(src)
        if costs is not None:
            smallest = max(costs, default=0)
        else:
            ip = src.ds.indptr
            longest = int(np.diff(ip).max()) if src.ds.n_rows else 0
            smallest = 12 * longest + 16 + self.BLOCK_ROW_BYTES + (12 * longest + 16 if self._hash else 0)
        return self._check_budget(n_rows, state, weights, 0, smallest,
                                  note=self._block_note(src) if smallest > state else None)

    def _units(self, src, limit):
        """One outer iteration's blocks, in file order, each costing at most `limit` bytes (with first_row); held
        one at a time (the caller lets each go before taking the next)."""
        ds = src.ds
        if src.memory:
            for b in src.blocks_of(self._piece_bytes):
                yield src.with_weights(b)
            return
        costs = self._costs
        if limit is None or sum(costs) <= limit:
            # everything fits: load once, keep it for the later outer iterations
            if getattr(self, "_whole", None) is None:
                self._whole = src.with_weights(ds.load_blocks(0, ds.n_blocks))
            yield self._whole
            return
        b0 = 0
        while b0 < ds.n_blocks:
            b1, used = b0, 0
            while b1 < ds.n_blocks and (b1 == b0 or used + costs[b1] <= limit):
                used += costs[b1]
                b1 += 1
            yield src.with_weights(ds.load_blocks(b0, b1))
            b0 = b1

    def _copy_minimum(self, rows, n_feat, k):
        return self._state(rows, k), self._weights(n_feat, k)

    def _run(self, src, directory, t0):
        self._whole = None
        if not src.known:
            self._copy_text(src, directory)
        labels = [int(v) for v in Classes(src.labels()).labels]
        problems = self._problems(labels, self._once)
        classes = Classes(labels)
        n_rows, n_feat = int(src.n_rows), self._n_features(src.n_features)
        w_size = n_feat + (1 if self.bias >= 0 else 0)
        if self.opt.memory is None and len(problems) > 1:      # under --memory, _plan refuses a budget below them
            memory.check_classes(len(labels), f"{len(problems)} one-vs-rest problems over {n_rows} rows",
                                 self._state(n_rows, len(problems)) + self._weights(n_feat, len(problems)),
                                 "dual variables and weight vectors")
        self.check_weights(n_feat, len(problems))
        limit = self._plan(src, n_rows, n_feat, len(problems))
        self._costs = self._unit_costs(src)
        self._piece_bytes = self._memory_bytes(src.ds, limit) if src.memory else None
        # the budget and the blocks are the run's (every problem counted); a problem's steps are its own
        problems = [p for p in problems if self._trains(p.k)]
        for p in problems:
            p.alpha = np.zeros(n_rows)
            p.w = np.zeros(w_size)
            p.rng = rng_state(self._seed(p.k))
            p.n_iter = 0
            p.converged = False
            p.cert = None
        if self.warm is not None:
            self._warm_start(src, limit, problems, labels, classes, n_feat)
        active = list(problems)
        for it in range(self.max_iter):
            if not active:
                break
            n_blocks = 0
            for p in active:
                # the certificate of this outer iteration: valid while every block is skipped (w unchanged)
                p.cert = {"max_violation": 0.0, "loss": 0.0, "all_skipped": True}
            # the bar: this outer iteration's rows, and the iterations so far of the most the run makes
            restage(self.progress, f"outer iteration {it + 1} of at most {self.max_iter}", n_rows, "rows")
            for unit in self._units(src, limit):
                n_blocks += 1
                self._visit(unit, n_blocks, it, active, classes, n_feat, t0)
                if self.progress is not None:
                    self.progress.update(unit.n_rows)
                del unit            # the block's memory is free before the next one is loaded
            self._once.info(".")
            for p in list(active):
                p.n_iter = it + 1
                p.blocks = n_blocks
                if p.cert["all_skipped"]:
                    p.converged = True
                    active.remove(p)
        self._whole = None
        for p in problems:
            ww = sq_norm(p.w)
            r = FitResult(w=p.w, n_iter=p.n_iter, dual=float(p.alpha.sum()) - 0.5 * ww,
                          nSV=int(np.count_nonzero(p.alpha)), converged=p.converged, solver=3)
            if p.converged:
                # the last outer iteration skipped every block: w did not move while it measured every row, so the
                # primal, the gap and the largest violation are exact for the returned model
                r.primal = 0.5 * ww + p.cert["loss"]
                r.gap = r.primal - r.dual
                r.max_violation = p.cert["max_violation"]
            else:
                r.primal = r.gap = r.max_violation = None
            if self.opt.return_alpha:
                r.alpha = p.alpha
            r.extra = {"blocks": p.blocks, "trace": p.trace.records}
            p.result = r
            self._report(p)
        return problems, labels

    def _block(self, unit, classes, n_feat):
        """A loaded block as the problems use it: (the block, hashed with --hash-bits; its rows' class indices; its
        first row; its row view; the rows the problems have and their positions, or EMPTY_ROWS and None for all).
        The rows the problems have are those of positive weight (a row of weight 0 has C_i = 0 and no effect: its
        alpha stays 0, and the kernels, which never see one in memory (trainer.weighted_rows), are not given it)."""
        if self._hash is not None:
            unit = self._hash(unit)
        cls, _ = classes.add(unit.y)
        rows, keep = EMPTY_ROWS, None
        if unit.weights is not None and not (unit.weights > 0).all():
            keep = np.flatnonzero(unit.weights > 0)
            rows = keep.astype(np.int64)
        return unit, cls, int(unit.first_row), unit.row_view(self.bias, n_feat), rows, keep

    def _warm_start(self, src, limit, problems, labels, classes, n_feat):
        """-i (fit(warm=model)): one pass over the blocks sets every problem's alpha to the dual point of the
        model's w (warm.primal_to_dual, the hinge's) and its w to w(alpha), the start of the outer iterations."""
        from .warm import model_starts, primal_to_dual
        starts = model_starts(self.warm, self.params, labels, n_feat)
        w_alpha = np.empty_like(problems[0].w) if problems else None
        for unit in self._units(src, limit):
            unit, cls, r0, view, rows, keep = self._block(unit, classes, n_feat)
            for p in problems:
                ys = p.signs(cls)
                C = np.where(ys > 0, p.Cp, p.Cn)
                if unit.weights is not None:
                    C = C * unit.weights
                if keep is not None:
                    ys, C = ys[keep], C[keep]
                alpha = primal_to_dual((view, rows), ys, C, starts[p.k if len(starts) > 1 else 0]["w"], True)
                KL.dcd_init_w(view, rows, ys, alpha, w_alpha)
                p.w += w_alpha
                if keep is None:
                    p.alpha[r0:r0 + unit.n_rows] = alpha
                else:
                    p.alpha[r0 + keep] = alpha
            del unit

    def _visit(self, unit, block, it, active, classes, n_feat, t0):
        """One block of one outer iteration, for every active problem: the block's certificate at the current
        (alpha, w) (KL.dcd_violation); a block already within eps is skipped (w unchanged), the others get dual
        coordinate descent to --inner-eps."""
        unit, cls, r0, view, rows, keep = self._block(unit, classes, n_feat)
        n = unit.n_rows if keep is None else keep.size
        xnorm = None
        for p in active:
            alpha = p.alpha[r0:r0 + unit.n_rows]
            ys = p.signs(cls)
            if keep is not None:
                alpha, ys = alpha[keep], ys[keep]       # copies: alpha goes back after the steps
            viol, loss, _, _, _ = KL.dcd_violation(view, rows, ys, alpha, p.w, p.Cp, p.Cn, True)
            p.cert["max_violation"] = max(p.cert["max_violation"], viol)
            p.cert["loss"] += loss
            skipped = viol <= self.eps
            inner = 0
            if not skipped:
                p.cert["all_skipped"] = False
                if xnorm is None:
                    xnorm = np.empty(n)
                    KL.sq_norms(view, rows, xnorm)
                state = KL.DCDState(view, rows, ys, alpha, p.w, xnorm, np.arange(n, dtype=np.int32), p.Cp, p.Cn,
                                    True, p.rng)
                while state.n_iter < self.opt.inner_iter:
                    done, _ = state.run(min(10, self.opt.inner_iter - state.n_iter), self.opt.inner_eps, True)
                    if done:
                        break
                inner = int(state.n_iter)
                del state
                if keep is not None:
                    p.alpha[r0 + keep] = alpha
            D = float(p.alpha.sum()) - 0.5 * sq_norm(p.w)
            p.trace.seconds.append(time.perf_counter() - t0)
            p.trace.dual.append(D)
            p.trace.records.append({"outer": it + 1, "block": block, "seconds": p.trace.seconds[-1], "dual": D,
                                    "max_violation": viol, "skipped": skipped, "inner_iter": inner})


    def print_once(self, labels, results):
        """The -wi warnings, then a dot per outer iteration of the run (the last problem to stop ran them all)."""
        super().print_once(labels, results)
        self.reporter.info("." * max(r.n_iter for r in results))


JSON_FIELDS = STREAM_JSON_FIELDS + ("inner_iter", "trace")


def metrics(model, params, ds=None):
    """--json of -s bm: outofcore.stream_metrics with --inner-iter and its per-block records under "trace"."""
    return {**stream_metrics(model, params, trace_key="trace"), **echo(params, "inner_iter")}
