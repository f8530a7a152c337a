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
import os
import time

import numpy as np

from .._ext import _linear as KL
from ..binfmt import BinaryWriter
from .._ext._random import rng_state
from .common import EMPTY_ROWS, Classes, FitResult
from .dcd import DUAL_MAX_ITER
from .outofcore import STREAM_JSON_FIELDS, StreamedSolver, stream_metrics

DEFAULT_EPS = 0.1            # the -s 3 default: max |PG_i| over every row of an outer iteration


class BlockMinimizationSolver(StreamedSolver):
    """-s bm: every outer iteration loads the blocks in turn and runs DCD (inner eps) on each."""

    name = "bm"

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
                for b in src.blocks(prefetch=True, progress=True):
                    w.write_dataset(b)
                w.close()
            src.switch_to_copy(copy)
        labels = [int(v) for v in Classes(src.labels()).labels]
        problems = self._problems(labels, self.reporter)
        classes = Classes(labels)
        n_rows, n_feat = int(src.n_rows), self._n_features(src)
        w_size = n_feat + (1 if self.bias >= 0 else 0)
        self.check_weights(n_feat, len(problems))
        for p in problems:
            p.alpha = np.zeros(n_rows)
            p.w = np.zeros(w_size)
            p.rng = rng_state(self._seed(p.k))
            p.n_iter = 0
            p.converged = False
            p.cert = None
        active = list(problems)
        for it in range(self.max_iter):
            if not active:
                break
            n_blocks = 0
            for p in active:
                # the certificate of this outer iteration: valid while every block is skipped (w unchanged)
                p.cert = {"max_violation": 0.0, "loss": 0.0, "all_skipped": True}
            for unit in self._units(src):
                n_blocks += 1
                self._visit(unit, n_blocks, it, active, classes, n_feat, t0)
                del unit            # the block's memory is free before the next one is loaded
            self.reporter.info(".")
            for p in list(active):
                p.n_iter = it + 1
                p.blocks = n_blocks
                if p.cert["all_skipped"]:
                    p.converged = True
                    active.remove(p)
        self._whole = None
        for p in problems:
            ww = float(p.w @ p.w)
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

    def _visit(self, unit, block, it, active, classes, n_feat, t0):
        """One block of one outer iteration, for every active problem: the block's certificate at the current
        (alpha, w) (KL.dcd_violation); a block already within eps is skipped (w unchanged), the others get dual
        coordinate descent to --inner-eps."""
        if self._hash is not None:
            unit = self._hash(unit)
        cls, _ = classes.add(unit.y)
        r0 = int(unit.first_row)
        view = unit.row_view(self.bias, n_feat)
        xnorm = None
        for p in active:
            alpha = p.alpha[r0:r0 + unit.n_rows]
            ys = p.signs(cls)
            viol, loss, _, _, _ = KL.dcd_violation(view, EMPTY_ROWS, ys, alpha, p.w, p.Cp, p.Cn, True)
            p.cert["max_violation"] = max(p.cert["max_violation"], viol)
            p.cert["loss"] += loss
            skipped = viol <= self.eps
            inner = 0
            if not skipped:
                p.cert["all_skipped"] = False
                if xnorm is None:
                    xnorm = np.empty(unit.n_rows)
                    KL.sq_norms(view, EMPTY_ROWS, xnorm)
                state = KL.DCDState(view, EMPTY_ROWS, ys, alpha, p.w, xnorm,
                                    np.arange(unit.n_rows, dtype=np.int32), p.Cp, p.Cn, True, p.rng)
                while state.n_iter < DUAL_MAX_ITER:
                    done, _ = state.run(min(10, DUAL_MAX_ITER - state.n_iter), self.opt.inner_eps, True)
                    if done:
                        break
                inner = int(state.n_iter)
                del state
            D = float(p.alpha.sum()) - 0.5 * float(p.w @ p.w)
            p.trace.seconds.append(time.perf_counter() - t0)
            p.trace.dual.append(D)
            p.trace.records.append({"outer": it + 1, "block": block, "seconds": p.trace.seconds[-1], "dual": D,
                                    "max_violation": viol, "skipped": skipped, "inner_iter": inner})


JSON_FIELDS = STREAM_JSON_FIELDS + ("trace",)


def metrics(model, params, ds=None):
    """--json of -s bm: outofcore.stream_metrics with its per-block records under "trace"."""
    return stream_metrics(model, params, trace_key="trace")
