"""Newton for one -s 0 / -s 2 / -s 11 problem whose rows are split into parts held by workers: the distributed
truncated Newton of MPI-LIBLINEAR and Spark-LIBLINEAR (Zhuang, Chin, Juan, Lin, "Distributed Newton Methods for
Regularized Logistic Regression", PAKDD 2015), around LIBLINEAR 2.50's NEWTON::newton as llsvm.solvers.newton runs
it in one process.

f(w) = 1/2 w.w + sum_k L_k(w), L_k the loss over part k's rows. Every sum over rows is a sum of the parts' sums:
  f:        sum_k L_k(w)                                  (a part also keeps X_k w)
  grad f:   w + factor sum_k G_k,  G_k = sum_{i in I_k} coef_i x_i          (factor 1 for -s 0, 2 otherwise)
  diag(H):  1 + sum_k sum_{i in I_k} c_i d_i x_ij^2       (the preconditioner, mixed with the identity)
  H d:      d + factor sum_k X_k^T diag(c) X_k d           (one round per CG step)
  line search: sum_k L_k(w + alpha s) from X_k s kept by the part (one round for the step 1, which usually
            passes, and one more for the 19 halvings when it does not)
and everything of size n (CG, the line search's choice, w, w.w) stays on the client. A Newton iteration is
(CG steps + 2) rounds, each sending n doubles down and n (2n for the gradient's round) up per part; the rows never
move. The vector operations and sums on the client are the single-process kernel's, in its order, and the parts'
sums add in part order: with one part every iterate is the single-process one bit for bit; with K parts they are
the same up to the order of a sum.

A part is a NewtonPart (a NewtonFun over its rows, in LIBLINEAR's class grouping); `parts.call(op, args)` runs
`op` on every part and returns the results in part order: LocalParts here (one after the other), ThreadParts (a
pool of threads: `--threads N` on one problem, liblinear-multicore's parallel Newton, Lee, Chiang, Lin, ICDM 2015,
over 2N blocks of the rows), llsvm.dask's on the cluster.
"""
import math

import numpy as np

from .._ext import _linear as K
from .common import FitResult, c_arithmetic, expit, xlogx
from .newtonfun import L2R_LR, after_step, certificate_sums, dual_value, make_fun

LINE_TRIES = 20
BLOCKS_PER_THREAD = 2   # solve_threaded's blocks of the rows, per thread


class NewtonPart:
    """One part's rows (a Subproblem) and the state a round leaves for the next: X w, the Hessian's rows and
    weights, X s. Each method is one round's work on the part."""

    def __init__(self, sub, solver, regularize_bias=True, p=0.1, kept=False):
        self.sub = sub
        self.fun = make_fun(sub, solver, regularize_bias, p)
        self.n = sub.w_size
        self.kept = kept and solver == L2R_LR   # -s 0 on threads: X w = 0 at w = 0, and certificate from the state
        self.G = None                           # kept: G_k at the kept X w (the last start or grad round's)

    def start(self, w, m0):
        """(rows, positive rows, L_k(w), G_k, diag part) at w; m0: the preconditioner's initial value (part 0),
        or None (zeros)."""
        n_pos, l = self.sub.sizes()        # (weighted rows: their weights' sums, docs/weights.md)
        return (l, n_pos if self.sub.targets is None else 0) + self.grad(None, w, m0)

    def grad(self, alpha, w, m0):
        """X w += alpha X s (the accepted step) or, alpha None, X w from w; then (L_k or None, G_k, diag part)."""
        k = self.fun.k
        loss = None
        if alpha is None and self.kept and not w.any():
            k.wx[:] = 0.0                   # X 0 without a pass (the pass's sums are +0.0 too)
            loss = k.loss_kept()
        elif alpha is None:
            loss = k.loss(w)
        else:
            k.advance(alpha)
        G = np.empty(self.n, np.float64)
        M = np.zeros(self.n, np.float64) if m0 is None else np.array(m0, np.float64)
        k.grad_diag_rows(G, M)
        if self.kept:
            self.G = G
        return loss, G, M

    def hv(self, d):
        out = np.empty(self.n, np.float64)
        self.fun.k.hv_rows(d, out)
        return out

    def hv_kept(self, d, carry, reset):
        """hv(d), the part keeping X s as CG builds s (-s 0 on threads: NewtonFun.hv_rows_kept)."""
        out = np.empty(self.n, np.float64)
        self.fun.k.hv_rows_kept(d, out, carry, reset)
        return out

    def line_kept(self, carry, alphas):
        """line(s, alphas) from the X s hv_kept built (carry: CG's last step along its last direction)."""
        out = np.empty(len(alphas), np.float64)
        self.fun.k.line_losses_kept(carry, np.asarray(alphas, np.float64), out)
        return out

    def line(self, s, alphas):
        """L_k(w + alpha s) for each alpha (s None: the last direction's)."""
        out = np.empty(len(alphas), np.float64)
        self.fun.k.line_losses(s, np.asarray(alphas, np.float64), out)
        return out

    def certificate(self, w):
        """At w: (L_k(w), G_k, the dual point's w part, its sums, its non-zeros). kept (-s 0 on threads): at the
        kept X w, without a pass over the rows: L_k from it, G_k the last round's, and the dual point alpha_i =
        C_i sigma(-y_i w.x_i) = -y_i coef_i, whose w part sum_i alpha_i y_i x_i is -G_k."""
        k = self.fun.k
        if self.kept and self.G is not None:
            with c_arithmetic():
                alpha = self.fun.C * expit(-self.fun.yf * k.wx)
                ent = xlogx(alpha) + xlogx(self.fun.C - alpha) - xlogx(self.fun.C)
            return k.loss_kept(), self.G, -self.G, (float(ent.sum()),), int(np.count_nonzero(alpha != 0))
        loss = k.loss(w)
        G = np.empty(self.n, np.float64)
        k.grad_rows(G)
        alpha, w_alpha, sums = certificate_sums(self.sub, self.fun)
        return loss, G, w_alpha, sums, int(np.count_nonzero(alpha != 0))


def part_call(part, op, args):
    return getattr(part, op)(*args)


class LocalParts:
    """The parts held in this process, called one after the other."""

    def __init__(self, parts):
        if not parts:
            raise ValueError("solve_dnewton: no parts")
        self.parts = parts
        self.w_size = parts[0].n
        self.rounds = 0

    def __len__(self):
        return len(self.parts)

    def call(self, op, args):
        self.rounds += 1
        return [part_call(p, op, a) for p, a in zip(self.parts, args)]


class ThreadParts(LocalParts):
    """The parts held in this process, each round's calls run by a pool of threads (the kernels release the GIL);
    the results in part order, whatever the schedule."""

    def __init__(self, parts, threads):
        super().__init__(parts)
        from concurrent.futures import ThreadPoolExecutor
        self.pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="llsvm-newton")

    def call(self, op, args):
        self.rounds += 1
        futures = [self.pool.submit(part_call, p, op, a) for p, a in zip(self.parts, args)]
        return [f.result() for f in futures]

    def close(self):
        self.pool.shutdown(cancel_futures=True)


def split_blocks(sub, n_blocks):
    """sub's rows (in its order) as n_blocks Subproblems of contiguous ranges, sizes differing by at most one."""
    from .common import Subproblem
    rows = np.arange(sub.l, dtype=np.int64) if sub.rows.size == 0 else sub.rows
    bounds = np.linspace(0, sub.l, n_blocks + 1).round().astype(np.int64)
    return [Subproblem(sub.view, sub.y[a:b], sub.Cp, sub.Cn, rows=rows[a:b], bias=sub.bias,
                       targets=None if sub.targets is None else sub.targets[a:b])
            for a, b in zip(bounds[:-1], bounds[1:])]


def solve_threaded(sub, params, reporter):
    """One -s 0 / -s 2 / -s 11 problem on params.threads threads (liblinear-multicore's parallel Newton, Lee, Chiang,
    Lin, ICDM 2015): its rows, in their order, cut into 2 x threads blocks whose sums a thread pool computes and the
    loop adds in block order, so the iterates depend on the thread count only through that grouping."""
    blocks = [NewtonPart(b, params.solver, params.regularize_bias, params.svr_p, kept=True)
              for b in split_blocks(sub, BLOCKS_PER_THREAD * params.threads)]
    parts = ThreadParts(blocks, params.threads)
    try:
        return solve_dnewton(parts, params.solver, params.eps, params.max_iter or params.spec.default_max_iter,
                             params.regularize_bias, reporter, p=params.svr_p, keep_xs=True)
    finally:
        parts.close()


def _sum(vectors):
    """The parts' vectors added in part order (the first one itself for one part)."""
    total = np.array(vectors[0], np.float64)
    for v in vectors[1:]:
        total += v
    return total


def _sum_scalars(values):
    total = 0.0
    for v in values:
        total += v
    return total


class _Client:
    """The client's side of one run: the parts, the loss's factor and the bias's regularization."""

    def __init__(self, parts, solver, regularize_bias, keep_xs=False):
        self.parts = parts
        self.keep_xs = keep_xs          # -s 0 on threads: the parts build X s from CG's X d (hv_kept, line_kept)
        self.carry = 0.0                # keep_xs: CG's step along the last direction, not yet in the parts' X s
        self.K = len(parts)
        self.n = parts.w_size
        self.factor = 1.0 if solver == L2R_LR else 2.0
        self.regularize_bias = regularize_bias
        self.m0 = np.ones(self.n, np.float64)
        if not regularize_bias and self.n:
            self.m0[-1] = 0.0
        self.up = 0                     # doubles sent up (parts to client) and down, over the run
        self.down = 0

    def each(self, op, *args, m0=False):
        """op on every part with the same args; m0: and, last, the preconditioner's initial value for part 0
        (None for the others, which start from zeros)."""
        per = [args + ((self.m0 if k == 0 else None),) if m0 else args for k in range(self.K)]
        self.down += self.K * sum(np.size(a) for a in args if isinstance(a, np.ndarray))
        return self.parts.call(op, per)

    def gradient(self, w, G):
        g = w + self.factor * G
        if not self.regularize_bias and self.n:
            g[-1] -= w[-1]
        return g

    def hess(self, d, reset=False):
        if self.keep_xs:
            H = self.each("hv_kept", d, self.carry, reset)
            self.carry = 0.0
        else:
            H = self.each("hv", d)
        self.up += self.K * self.n
        Hd = d + self.factor * _sum(H)
        if not self.regularize_bias and self.n:
            Hd[-1] -= d[-1]
        return Hd

    def pcg(self, g, M, eps_cg, say):
        """NEWTON::pcg as the kernel's _pcg, one Hessian-vector round per step."""
        n = self.n
        s = np.zeros(n, np.float64)
        r = -g
        z = r / M
        d = z.copy()
        zTr = K.ddot(z, r)
        gMinv_norm = math.sqrt(zTr)
        cgtol = min(eps_cg, math.sqrt(gMinv_norm))
        max_cg = n if n > 5 else 5
        cg_iter, Q, flags = 0, 0.0, 0
        while cg_iter < max_cg:
            cg_iter += 1
            Hd = self.hess(d, reset=cg_iter == 1)
            dHd = K.ddot(d, Hd)
            if dHd <= 1.0e-16:
                break
            alpha = zTr / dHd
            if alpha != 0.0:
                s += alpha * d
                r -= alpha * Hd
                self.carry = alpha
            newQ = -0.5 * (K.ddot(s, r) - K.ddot(s, g))
            Qdiff = newQ - Q
            if newQ <= 0 and Qdiff <= 0:
                if cg_iter * Qdiff >= cgtol * newQ:
                    break
            else:
                flags |= 1
                break
            Q = newQ
            z = r / M
            znewTrnew = K.ddot(z, r)
            beta = znewTrnew / zTr
            d = beta * d + z
            zTr = znewTrnew
        if cg_iter == max_cg:
            flags |= 2
        if flags & 1:
            say("WARNING: quadratic approximation > 0 or increasing in CG\n")
        if flags & 2:
            say("WARNING: reaching maximal number of CG steps\n")
        return s, cg_iter

    def linesearch(self, w, s, f, g, wTw):
        """l2r_erm_fun::linesearch_and_update with the losses from the parts: (step, f, w.w); step 0 when none of
        the tries passes (w unchanged)."""
        sTs, wTs, gTs = K.dot_inorder(s, s), K.dot_inorder(s, w), K.dot_inorder(s, g)
        if not self.regularize_bias and self.n:
            sTs -= s[-1] * s[-1]
            wTs -= s[-1] * w[-1]
        fold, eta = f, 0.01
        alphas = [0.5 ** t for t in range(LINE_TRIES)]
        losses = None
        for t, alpha in enumerate(alphas):
            if t == 0 and self.keep_xs:
                losses = [_sum_scalars(v) for v in zip(*self.each("line_kept", self.carry, alphas[:1]))]
                self.carry = 0.0
            elif t == 0:
                losses = [_sum_scalars(v) for v in zip(*self.each("line", s, alphas[:1]))]
            elif t == 1:
                losses = [None] + [_sum_scalars(v) for v in zip(*self.each("line", None, alphas[1:]))]
            f = losses[t] + (alpha * alpha * sTs + wTw) / 2.0 + alpha * wTs
            if f - fold <= eta * alpha * gTs:
                w += alpha * s
                wTw += alpha * alpha * sTs + 2 * alpha * wTs
                return alpha, f, wTw
        return 0.0, fold, wTw


def solve_dnewton(parts, solver, eps, max_iter, regularize_bias=True, reporter=None, eps_cg=0.5, p=0.1,
                  keep_xs=False):
    """-s 0, -s 2 or -s 11 (`solver`) over `parts`, from w = 0: NEWTON::newton's loop with LIBLINEAR's tolerance
    (train_one's eps * max(min(pos, neg), 1) / l for classification) from the parts' row counts. Returns a
    FitResult without the dual variables (they stay with the parts); .extra: rounds, Newton and CG steps.
    keep_xs (-s 0 only): the parts build the line search's X s from CG's products (X s = sum_k alpha_k X d_k, the
    same up to rounding) instead of a pass over their rows per Newton step."""
    say = reporter.info if reporter is not None else (lambda s: None)
    c = _Client(parts, solver, regularize_bias, keep_xs=keep_xs and solver == L2R_LR)
    n = c.n
    w = np.zeros(n, np.float64)
    starts = c.each("start", w, m0=True)
    c.up += c.K * (2 * n + 3)
    l = sum(r[0] for r in starts)
    n_pos = sum(r[1] for r in starts)
    if solver in (0, 2):
        eps = eps * max(min(n_pos, l - n_pos), 1) / l
    wTw = 0.0                       # w = 0
    f = _sum_scalars([r[2] for r in starts]) + 0.5 * wTw
    g = c.gradient(w, _sum([r[3] for r in starts]))
    D = _sum([r[4] for r in starts])
    gnorm0 = gnorm = K.dnrm2(g)
    say(f"init f {f:5.3e} |g| {gnorm:5.3e}\n")
    search = gnorm > eps * gnorm0
    it, done, cg_total = 1, 0, 0
    converged = not search
    alpha_pcg = 0.01
    while it <= max_iter and search:
        M = (1.0 - alpha_pcg) + alpha_pcg * D
        s, cg_iter = c.pcg(g, M, eps_cg, say)
        cg_total += cg_iter
        fold = f
        step, f, wTw = c.linesearch(w, s, f, g, wTw)
        if step == 0:
            say("WARNING: line search fails\n")
            break
        done += 1
        grads = c.each("grad", step, None, m0=True)
        c.up += c.K * 2 * n
        g = c.gradient(w, _sum([r[1] for r in grads]))
        D = _sum([r[2] for r in grads])
        gnorm = K.dnrm2(g)
        end = after_step(say, it, f, fold, gnorm, gnorm0, eps, cg_iter, step)
        if end is not None:
            converged = end == "converged"
            break
        it += 1
    if it >= max_iter:
        say("\nWARNING: reaching max number of Newton iterations\n")
    certs = c.each("certificate", w)
    c.up += c.K * (2 * n + 4)
    wTw_final = K.dot_inorder(w, w)
    if not regularize_bias and n:
        wTw_final -= w[-1] * w[-1]
    primal = _sum_scalars([r[0] for r in certs]) + 0.5 * wTw_final
    g = c.gradient(w, _sum([r[1] for r in certs]))
    w_alpha = _sum([r[2] for r in certs])
    sums = tuple(_sum_scalars(v) for v in zip(*[r[3] for r in certs]))
    dual = dual_value(solver, w_alpha, sums, p) if regularize_bias else float("nan")
    res = FitResult(w=w, alpha=None, n_iter=done, primal=primal, dual=dual, gap=primal - dual,
                    max_violation=K.dnrm2(g), nSV=sum(r[4] for r in certs), converged=converged, solver=solver)
    res.extra.update(gnorm0=gnorm0, cg_steps=cg_total, rounds=getattr(parts, "rounds", None),
                     doubles_up=c.up, doubles_down=c.down)
    return res
