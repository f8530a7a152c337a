"""-s bm: block minimization, Yu, Hsieh, Chang, Lin, "Large linear classification when data cannot fit in memory",
KDD 2010: the baseline of both out-of-core papers.

The binary file is read in blocks that fit --memory (text input is first copied to a binary file in the temporary
directory); every outer iteration loads the blocks in turn and runs LIBLINEAR's dual coordinate descent (with
shrinking, cext/_linear.pyx) on each until its own stopping rule holds at --inner-eps, alpha and w carried across
blocks. It solves the -s 3 problem and stops when the dual objective changed by at most eps relatively over an
outer iteration, or after max_iter of them. Classes are one-vs-rest, one after the other, each with the whole budget.
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

DEFAULT_EPS = 1e-3


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
            self.reporter.info(".")
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


JSON_FIELDS = STREAM_JSON_FIELDS + ("trace",)


def metrics(model, params, ds=None):
    """--json of -s bm: outofcore.stream_metrics with its per-block records under "trace"."""
    return stream_metrics(model, params, certified=False, trace_key="trace")
