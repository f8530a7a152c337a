"""A slow, single-threaded NumPy/Python twin of StreamSVM's cache (-s streamsvm) in lockstep mode.

Written from the paper (Matsushima, Vishwanathan, Smola, "Linear support vector machines via dual cached loops",
KDD 2012, Algorithms 1 and 2) with the choices llsvm's kernel
(cext/_stream.pyx) makes where the paper leaves them open, so that the twin follows it draw for draw and bit for
bit when the reader and the trainer alternate on one thread (what the driver does with --threads 1):

    max_alpha  D(alpha) = sum_i alpha_i - 1/2 ||w||^2,   w = sum_i alpha_i y_i x_i,   0 <= alpha_i <= C_i,

over a cache A of at most Omega rows ("slots"); alpha (all rows) and w are dense. With bias >= 0 every row has one
more coordinate of value `bias`, whose weight is the last entry of w.

State: the slots (row id, its indices and values as doubles, y, C, QD = ||x||^2 (+ bias^2), summed element by
element in one running sum, then the bias term), the stack of free slots (initially [Omega-1, ..., 0], popped from the end, so slot 0
is handed out first), the membership array of A (`members`; a row joins at the end, leaves by swapping the last
member into its place), slot_of[row] (-1 when not cached), and two xoshiro256** RNGs (tests/reference/dcd_twin.py,
Lemire's bounded draws): the reader's seeded with 2 seed + 1, the trainer's with 2 seed + 2 (mod 2^64).

Reader (`insert`, Algorithm 1), rows begin..end-1 of a block, in groups of g = min(32, cap) rows aligned on
global row numbers (a group ends where the global row number reaches a multiple of g, or at `end`):
    1. claim: for each row of the group: skip it if it is cached; else take a free slot (pop) while fewer than cap
       slots are held (Omega minus the free ones; cap = Omega unless set_cap lowered it), else evict the member at
       position bounded(|A|) of A (reader's RNG; in lockstep no slot is pinned);
    2. the claimed rows join A in row order;
    2a. (before 2) each claimed row is copied into its slot with its QD; every row's margin w.x (claimed or
       skipped) is summed in four partial sums (dcd_twin's "unroll4", the kernels' row_dot), then the bias term;
       w here is the reader's view (w_read);
    3. the hinge loss of every row of the group: margin times y; rows with margin < 1 add C_i (1 - margin) to a
       running sum; and PG = margin y - 1 projected at the bounds of alpha_read[row] (eq. 8), whose largest and
       smallest over the pass are read_PGmax / read_PGmin.
Trainer (`train(max_picks, blocking=False)`, Algorithm 2), in batches of `batch` picks (fewer for the last one):
    - draw the batch: `batch` members at positions bounded(|A|) of A (trainer's RNG, with replacement, |A| taken
      at the draw: size_now); stop early when A is empty;
    - for each pick in order: a slot that an earlier pick of the same batch evicted is skipped entirely (no count,
      no eps change); else: eps *= beta when size_now > 0.9 cap and rows_seen (1 + the largest row id
      inserted) > cap (never for an `unbounded` cache, the driver's
      choice without a memory budget); G = y_i (w.x_i) - 1 with w.x_i summed in two partial sums over the even
      and the odd positions of the row (the last odd element to the even sum), s0 + s1, then the bias term; if (alpha_i == 0 and G > eps) or (alpha_i == C_i and G < -eps) the pick
      evicts the row (at the batch's end); else PG is G projected at the bounds, eps_new = max(eps_new, |PG|),
      M+ / M- follow PG, and when PG != 0 the step alpha_i <- clip(alpha_i - G / QD_i, 0, C_i) updates w by
      (alpha_new - alpha_old) y_i x_i element by element in column order, then the bias weight, if it changed
      alpha_i (an update); every non-skipped pick advances t, and when t reaches n_sched eps = eps_new,
      eps_new = 0, t = 0;
    - the batch's end: its evictions leave A in pick order (swap with the last member), their slots are pushed
      onto the free stack in the same order.
The lockstep driver (`fit_lockstep`, llsvm.streaming.StreamSVMSolver._fit with one thread): every pass reads the
blocks in order in steps of 256 rows on global row numbers (a step may span blocks): each block's rows are
inserted in pieces cut where the global row number reaches a multiple of 256, and when it does, train(int(2.0 *
rows read since the last train)); the rest of the pass is trained at its end. After the pass, the trainer's
statistics (picks, updates, evictions, M+ and M- of the pass); converged when the pass's max_violation, max |PG|
over its rows (max(read_PGmax, -read_PGmin, 0)), is <= eps and the window of passes holding at least n picks has
M+ - M- < eps; then the
snapshot: D = sum(alpha) - 1/2 ||w||^2 (sequential sums), and unless converged alpha and w become the reader's
view (alpha_read, w_read). The pass's primal is 1/2 ||w_read||^2 + loss and its gap that minus the dual, both
of the view the pass began with. Stop when converged (returning the view: the model the pass certified), or
after max_iter passes (returning the current model).

Certificates (`projected_gradients`, `max_violation`, `dual_objective`, `w_from_alpha`) are dcd_twin's, vectorized
NumPy, independent of the above.
"""
import math

import numpy as np

from .dcd_twin import (Xoshiro256ss, _dot, _ieee_div, _sq_norm, design, dual_objective, max_violation,
                       primal_objective, projected_gradients, w_from_alpha)

__all__ = ["StreamTwin", "fit_lockstep", "problem_seed", "blocks_of", "Xoshiro256ss", "design", "dual_objective",
           "max_violation", "primal_objective", "projected_gradients", "w_from_alpha",
           "READ_GROUP", "LOCKSTEP_ROWS", "LOCKSTEP_RATIO", "EPS0", "BETA"]

MASK64 = (1 << 64) - 1
READ_GROUP = 32
MAX_BATCH = 64
LOCKSTEP_ROWS = 256
LOCKSTEP_RATIO = 2.0
EPS0 = 9.0
BETA = 0.9
INF = math.inf


def problem_seed(seed, k):
    """The cache's seed for binary problem k under a run seed (the driver's golden-ratio mixing)."""
    return (int(seed) * 0x9E3779B97F4A7C15 + k + 1) & MASK64


def _dot_pairs(idx, val, w):
    """w.x in two partial sums: even positions in s0, odd positions in s1 (a trailing element to s0); s0 + s1."""
    s0 = 0.0
    s1 = 0.0
    m = len(idx)
    k = 0
    while k + 2 <= m:
        s0 += w[idx[k]] * val[k]
        s1 += w[idx[k + 1]] * val[k + 1]
        k += 2
    if k < m:
        s0 += w[idx[k]] * val[k]
    return s0 + s1


class StreamTwin:
    """The cache: StreamTwin(omega, n_rows, n_features, bias, seed, batch=8, eps0=9, beta=0.9, n_sched=0), the
    same constructor as llsvm._ext._stream.StreamCache, with `insert`, `train`, `end_pass`, `snapshot`,
    `alpha_array`, `w_array`, `cached_rows` and the same counters."""

    def __init__(self, omega, n_rows, n_features, bias, seed, batch=8, eps0=EPS0, beta=BETA, n_sched=0,
                 unbounded=False):
        if omega < 1:
            raise ValueError("omega must be >= 1")
        self.omega = int(omega)
        self.cap = self.omega       # the rows A may hold now (set_cap)
        self.n_rows = max(int(n_rows), 1)
        self.n_features = int(n_features)
        self.bias = float(bias)
        self.unbounded = bool(unbounded)
        self.batch = max(1, min(int(batch), MAX_BATCH))
        self.eps = float(eps0)
        self.eps_new = 0.0
        self.beta = float(beta)
        self.t = 0
        self.n_sched = int(n_sched) if n_sched > 0 else max(int(n_rows), 1)
        seed = int(seed) & MASK64
        self.rng_reader = Xoshiro256ss((seed * 2 + 1) & MASK64)
        self.rng_trainer = Xoshiro256ss((seed * 2 + 2) & MASK64)
        # slots
        self.free = list(range(self.omega - 1, -1, -1))
        self.members = []
        self.where = [-1] * self.omega
        self.slot_row = [-1] * self.omega
        self.slot_idx = [None] * self.omega
        self.slot_val = [None] * self.omega
        self.slot_y = [0] * self.omega
        self.slot_C = [0.0] * self.omega
        self.slot_QD = [0.0] * self.omega
        # per row, and the model (bias weight last)
        self.alpha = [0.0] * self.n_rows
        self.slot_of = [-1] * self.n_rows
        self.w = [0.0] * (self.n_features + 1)
        self.rows_seen = 0          # 1 + the largest row id inserted
        # the reader's view: alpha and w as of the last snapshot(freeze=True)
        self.alpha_read = [0.0] * self.n_rows
        self.w_read = [0.0] * (self.n_features + 1)
        # statistics
        self._reset_pass()
        self.total_picks = self.total_updates = self.total_evicted_trainer = 0
        self.total_evicted_reader = self.total_inserted = self.total_skipped = 0
        self.log = None             # a list to record every pick: (row, kind) kind in "evict", "pick"

    @property
    def size(self):
        return len(self.members)

    def _reset_pass(self):
        self.pass_PGmax, self.pass_PGmin = -INF, INF
        self.read_PGmax, self.read_PGmin = -INF, INF
        self.pass_picks = self.pass_updates = self.pass_evicted = 0

    def _remove(self, s):
        p = self.where[s]
        if p < 0:
            return
        last = self.members[-1]
        self.members[p] = last
        self.where[last] = p
        self.members.pop()
        self.where[s] = -1

    # -- Algorithm 1 --------------------------------------------------------------------------------------------
    def insert(self, y, indptr, indices, values, row0, Cp, Cn, begin=0, end=-1):
        """Rows begin..end-1 of a CSR block whose row 0 is row `row0` of the data. Returns (inserted, skipped,
        evicted, loss)."""
        n = len(y)
        if end < 0:
            end = n
        indptr = [int(v) for v in indptr]
        Cp, Cn = float(Cp), float(Cn)
        group = min(READ_GROUP, self.cap)
        skipped = evicted = 0
        loss = 0.0
        nb = self.n_features
        c0 = begin
        while c0 < end:
            c1 = min(c0 + group - (row0 + c0) % group, end)
            self.rows_seen = max(self.rows_seen, row0 + c1)
            w = self.w_read
            rows, margins = [], []
            for r in range(c0, c1):
                a, b = indptr[r], indptr[r + 1]
                idx = [int(j) for j in indices[a:b]]
                val = [float(v) for v in values[a:b]]
                rows.append((idx, val))
                margins.append(_dot((idx, val), w, nb, self.bias, "unroll4"))
            claim = []
            for r in range(c0, c1):
                row = row0 + r
                if self.slot_of[row] >= 0:
                    claim.append(-1)
                    skipped += 1
                    continue
                # not stored when the trainer would evict it on sight (at the reader's view, its own alpha and eps)
                yi = 1 if int(y[r]) > 0 else -1
                Ci = Cp if yi > 0 else Cn
                a, G = self.alpha[row], margins[r - c0] * yi - 1.0
                if (a == 0.0 and G > self.eps) or (a > 0.0 and a >= Ci and G < -self.eps):
                    claim.append(-1)
                    skipped += 1
                    continue
                if self.free and self.omega - len(self.free) < self.cap:
                    s = self.free.pop()
                else:
                    if not self.members:
                        raise AssertionError("no member to evict and no free slot (the kernel would wait)")
                    s = self.members[self.rng_reader.bounded(len(self.members))]
                    self._remove(s)
                    self.slot_of[self.slot_row[s]] = -1
                    evicted += 1
                self.slot_of[row] = s
                self.slot_row[s] = row
                claim.append(s)
            for r in range(c0, c1):
                s = claim[r - c0]
                if s >= 0:
                    idx, val = rows[r - c0]
                    self.slot_idx[s], self.slot_val[s] = idx, val
                    self.slot_QD[s] = _sq_norm((idx, val), self.bias)
                    yi = 1 if int(y[r]) > 0 else -1
                    self.slot_y[s] = yi
                    self.slot_C[s] = Cp if yi > 0 else Cn
            for r in range(c0, c1):
                s = claim[r - c0]
                if s >= 0:
                    self.where[s] = len(self.members)
                    self.members.append(s)
                    self.total_inserted += 1
            for r in range(c0, c1):
                yi = 1 if int(y[r]) > 0 else -1
                margin = margins[r - c0] * yi
                Ci = Cp if yi > 0 else Cn
                if margin < 1.0:
                    loss += Ci * (1.0 - margin)
                PG = margin - 1.0
                a = self.alpha_read[row0 + r]
                if a == 0.0:
                    PG = min(PG, 0.0)
                elif a == Ci:
                    PG = max(PG, 0.0)
                self.read_PGmax = max(self.read_PGmax, PG)
                self.read_PGmin = min(self.read_PGmin, PG)
            c0 = c1
        self.total_skipped += skipped
        self.total_evicted_reader += evicted
        return end - begin - skipped, skipped, evicted, loss

    # -- Algorithm 2 --------------------------------------------------------------------------------------------
    def train(self, max_picks=-1, blocking=False):
        """Picks until max_picks are drawn (or A is empty). Returns the number of picks drawn (skipped ones too)."""
        if blocking or max_picks < 0:
            raise ValueError("the twin runs only bounded, non-blocking trains (lockstep)")
        done = 0
        w, alpha, bias, nb = self.w, self.alpha, self.bias, self.n_features
        full = INF if (self.unbounded or self.rows_seen <= self.cap) else 0.9 * self.cap
        while done < max_picks and self.members:
            want = min(self.batch, max_picks - done)
            size_now = len(self.members)
            batch = [self.members[self.rng_trainer.bounded(size_now)] for _ in range(want)]
            evict = [False] * want
            picks = updates = evicted = 0
            PGmax, PGmin = -INF, INF
            for k, s in enumerate(batch):
                if any(evict[k2] and batch[k2] == s for k2 in range(k)):
                    continue
                if size_now > full:
                    self.eps *= self.beta
                i = self.slot_row[s]
                yi = self.slot_y[s]
                C = self.slot_C[s]
                idx, val = self.slot_idx[s], self.slot_val[s]
                G = _dot_pairs(idx, val, w)
                if bias >= 0:
                    G += w[nb] * bias
                G = yi * G - 1.0
                a = alpha[i]
                picks += 1
                if (a == 0.0 and G > self.eps) or (a == C and G < -self.eps):
                    evict[k] = True
                    evicted += 1
                    if self.log is not None:
                        self.log.append((i, "evict"))
                else:
                    PG = G
                    if a == 0.0:
                        if PG > 0.0:
                            PG = 0.0
                    elif a == C:
                        if PG < 0.0:
                            PG = 0.0
                    if abs(PG) > self.eps_new:
                        self.eps_new = abs(PG)
                    PGmax = max(PGmax, PG)
                    PGmin = min(PGmin, PG)
                    if self.log is not None:
                        self.log.append((i, "pick"))
                    if PG != 0.0:
                        a_new = min(max(a - _ieee_div(G, self.slot_QD[s]), 0.0), C)
                        d = (a_new - a) * yi
                        if d != 0.0:
                            alpha[i] = a_new
                            for j, v in zip(idx, val):
                                w[j] += d * v
                            if bias >= 0:
                                w[nb] += d * bias
                            updates += 1
                self.t += 1
                if self.t >= self.n_sched:
                    self.eps = self.eps_new
                    self.eps_new = 0.0
                    self.t = 0
            done += want
            for k, s in enumerate(batch):
                if evict[k]:
                    self._remove(s)
                    self.slot_of[self.slot_row[s]] = -1
                    self.free.append(s)
            self.pass_PGmax = max(self.pass_PGmax, PGmax)
            self.pass_PGmin = min(self.pass_PGmin, PGmin)
            self.pass_picks += picks
            self.pass_updates += updates
            self.pass_evicted += evicted
            self.total_picks += picks
            self.total_updates += updates
            self.total_evicted_trainer += evicted
        return done

    def set_cap(self, cap):
        """A holds at most `cap` rows from now on: new slots (pushed so that the first new one is handed out
        first) when cap > Omega; members at positions bounded(|A|) (the reader's RNG) leave A, their slots pushed
        onto the free stack, until |A| <= cap (counted as reader evictions)."""
        cap = int(cap)
        if cap > self.omega:
            old = self.omega
            for lst, v in ((self.where, -1), (self.slot_row, -1), (self.slot_idx, None), (self.slot_val, None),
                           (self.slot_y, 0), (self.slot_C, 0.0), (self.slot_QD, 0.0)):
                lst.extend([v] * (cap - old))
            self.free.extend(range(cap - 1, old - 1, -1))
            self.omega = cap
        while len(self.members) > cap:
            s = self.members[self.rng_reader.bounded(len(self.members))]
            self._remove(s)
            self.slot_of[self.slot_row[s]] = -1
            self.free.append(s)
            self.total_evicted_reader += 1
        self.cap = cap

    # -- what the driver reads ----------------------------------------------------------------------------------
    def end_pass(self):
        out = {"PGmax": self.pass_PGmax, "PGmin": self.pass_PGmin, "picks": self.pass_picks,
               "updates": self.pass_updates, "evicted": self.pass_evicted,
               "read_PGmax": self.read_PGmax, "read_PGmin": self.read_PGmin}
        self._reset_pass()
        return out

    def snapshot(self, n_rows, n_features, freeze=True):
        if freeze:
            self.alpha_read = list(self.alpha)
            self.w_read = list(self.w)
        sa = 0.0
        for a in self.alpha[:n_rows]:
            sa += a
        ww = 0.0
        for v in self.w[:n_features]:
            ww += v * v
        if self.bias >= 0:
            ww += self.w[self.n_features] * self.w[self.n_features]
        return sa, ww, len(self.members), self.eps

    def alpha_array(self, n_rows, frozen=False):
        return np.array((self.alpha_read if frozen else self.alpha)[:n_rows], dtype=np.float64)

    def w_array(self, n_features, frozen=False):
        w = self.w_read if frozen else self.w
        out = list(w[:n_features])
        if self.bias >= 0:
            out.append(w[self.n_features])
        return np.array(out, dtype=np.float64)

    def cached_rows(self):
        return np.array([self.slot_row[s] for s in self.members], dtype=np.int64)


def blocks_of(indptr, indices, values, bounds):
    """[(first_row, indptr, indices, values)] of the CSR cut at row boundaries `bounds` ([0, ..., n])."""
    indptr = np.asarray(indptr, dtype=np.int64)
    out = []
    for a, b in zip(bounds[:-1], bounds[1:]):
        ip = indptr[a:b + 1] - indptr[a]
        out.append((a, ip, indices[indptr[a]:indptr[b]], values[indptr[a]:indptr[b]]))
    return out


def fit_lockstep(blocks, ys, n_rows, n_features, bias, Cp, Cn, seed, omega, eps=0.1, max_iter=100, batch=16,
                 ratio=LOCKSTEP_RATIO, cache=None, first_blocks=None, unbounded=False, first_caps=(),
                 first_n_sched=False):
    """The driver's one-thread run of one binary problem over blocks [(first_row, indptr, indices, values)] with
    labels ys (+1/-1 per row of the data). `seed` is the cache's seed (problem_seed(run seed, k)).
    first_blocks: other blocks for the first pass (text input: the parser's blocks), default `blocks`.
    unbounded: no memory budget (the cache is never full: no eps decay).
    first_caps: the first pass's set_cap calls [(row, cap)] (text under a budget): before the block starting at
    global row `row` is inserted, or, for row == n_rows, after the pass's last train.
    first_n_sched: in the first pass, n of the eps schedule is the rows read so far, set before each block (text:
    n is not known before the pass), then n_rows.

    Returns a dict: alpha, w (n_features entries, then the bias weight when bias >= 0), n_iter, converged, passes (per pass: inserted,
    skipped, evicted_reader, evicted_trainer, picks, updates, PGmax, PGmin, M_plus, M_minus, eps, cache_rows,
    dual, start_dual, primal, gap, max_violation), cached (row ids in A, membership order), and the twin itself
    (`cache`)."""
    cache = cache or StreamTwin(omega, n_rows, n_features, bias, seed, batch=batch, n_sched=max(n_rows, 1),
                                unbounded=unbounded)
    ys = np.asarray(ys)
    window = {"PGmax": -INF, "PGmin": INF, "picks": 0, "updates": 0, "evicted": 0}
    passes = []
    converged = False
    n_iter = 0
    start_dual = start_ww = 0.0     # the model frozen at the start of the pass (alpha = 0, w = 0 at first)
    for it in range(max_iter):
        loss = 0.0
        inserted = skipped = evicted = 0
        pending = 0
        caps = dict(first_caps) if it == 0 else {}
        for first, indptr, indices, values in (first_blocks if it == 0 and first_blocks is not None else blocks):
            if first in caps:
                cache.set_cap(caps.pop(first))
            nr = len(indptr) - 1
            if it == 0 and first_n_sched:
                cache.n_sched = first + nr
            yb = ys[first:first + nr]
            b0 = 0
            while b0 < nr:
                b1 = min(nr, b0 + LOCKSTEP_ROWS - (first + b0) % LOCKSTEP_ROWS)
                r = cache.insert(yb, indptr, indices, values, first, Cp, Cn, b0, b1)
                inserted += r[0]
                skipped += r[1]
                evicted += r[2]
                loss += r[3]
                pending += b1 - b0
                if (first + b1) % LOCKSTEP_ROWS == 0:
                    cache.train(int(ratio * pending), False)
                    pending = 0
                b0 = b1
        if pending:
            cache.train(int(ratio * pending), False)
        if it == 0 and first_n_sched:
            cache.n_sched = max(n_rows, 1)
        if n_rows in caps:
            cache.set_cap(caps.pop(n_rows))
        assert not caps, f"set_cap at rows no block starts at: {caps}"
        n_iter = it + 1
        stats = cache.end_pass()
        for key in ("picks", "updates", "evicted"):
            window[key] += stats[key]
        window["PGmax"] = max(window["PGmax"], stats["PGmax"])
        window["PGmin"] = min(window["PGmin"], stats["PGmin"])
        spread = window["PGmax"] - window["PGmin"]
        read_violation = max(stats["read_PGmax"], -stats["read_PGmin"], 0.0)
        converged = (read_violation <= eps and window["picks"] >= n_rows and spread < eps
                     and window["updates"] + window["picks"] - window["evicted"] > 0)
        sa, ww, size, eps_now = cache.snapshot(n_rows, n_features, freeze=not converged)
        passes.append({"max_violation": max(stats["read_PGmax"], -stats["read_PGmin"], 0.0), "inserted": inserted, "skipped": skipped,
                       "evicted_reader": evicted, "evicted_trainer": stats["evicted"], "picks": stats["picks"],
                       "updates": stats["updates"], "PGmax": stats["PGmax"], "PGmin": stats["PGmin"],
                       "M_plus": window["PGmax"], "M_minus": window["PGmin"], "eps": eps_now, "cache_rows": size,
                       "dual": sa - 0.5 * ww, "start_dual": start_dual, "primal": 0.5 * start_ww + loss,
                       "gap": 0.5 * start_ww + loss - start_dual})
        if converged:
            break
        start_dual, start_ww = sa - 0.5 * ww, ww
        if window["picks"] >= n_rows:
            window = {"PGmax": -INF, "PGmin": INF, "picks": 0, "updates": 0, "evicted": 0}
    # converged: the model frozen at the start of the last pass (the one that pass certified)
    return {"alpha": cache.alpha_array(n_rows, converged), "w": cache.w_array(n_features, converged),
            "n_iter": n_iter, "converged": converged, "passes": passes, "cached": cache.cached_rows(),
            "cache": cache}
