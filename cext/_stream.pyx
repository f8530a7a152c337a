# The cache of StreamSVM's dual cached loops (Matsushima, Vishwanathan, Smola, "Linear support vector machines
# via dual cached loops", KDD 2012, Algorithms 1 and 2).
#
# Problem: the hinge-loss SVM dual of LIBLINEAR's -s 3, labels y_i in {-1,+1}, the bias as one more coordinate:
#     min_alpha  f(alpha) = 1/2 ||w||^2 - sum_i alpha_i,   w = sum_i alpha_i y_i x_i,   0 <= alpha_i <= C_i,
# over data that does not fit in memory. A RAM cache A holds at most Omega rows (the "slots"); alpha (one double
# per row of the data) and w are dense. Under a memory budget whose share for A shrinks while the per-row state
# grows (text, whose size is not known before it is read), the driver lowers the rows A may hold, `cap` <= Omega
# (`set_cap`: random members leave A, and the buffers of free slots go back to the system); A is full at cap rows.
#
# Reader (Algorithm 1; `insert`): every row read from the stream is stored in a free slot, or, when A is full, in
# the slot of a cached row chosen uniformly at random (an eviction), unless the trainer would evict it on sight:
# a row at alpha_i = 0 with G > eps, or at alpha_i = C_i with G < -eps (G at the reader's view, eps the trainer's),
# is neither stored nor evicts a cached row (counted as skipped; llsvm's departure from the paper, issue 49: the
# cache then holds the rows that can move, the reader copies far fewer rows and the run takes fewer passes; the
# stopping rule, which every row's projected gradient decides, is unchanged); Q_ii = ||x_i||^2 (+ bias^2) is computed on
# load, and the row's C_i (rowview.row_cost: Cp or Cn by its label, times its weight when the view has weights,
# docs/weights.md) goes into its slot. A row that is already cached is skipped (A is a set), and so is a row of
# weight 0 (C_i = 0: alpha_i stays 0, the row has no effect; it never enters A). The reader also computes, for
# every row it reads, the hinge loss and the projected gradient PG_i (eq. 8; 0 for a row of C_i = 0, held at
# 0 = C_i) at the reader's view: alpha and w frozen by the driver's `snapshot` at the end of the previous pass.
# Over one pass that gives the exact primal P(w_snap) and the exact largest and smallest PG_i of the snapshot
# (every row, not only those the trainer picked), and the reader never touches the w the trainer writes. The
# reader reads the block through its row view (a `Rows`, cext/_view.pyx, seen with the cache's feature capacity
# and bias): Q_ii by row_sq_norm and w.x by row_dot (rowview.pxd), once the row's indices are known to be within
# the capacity (the copy checks them).
# Trainer (Algorithm 2; `train`): repeatedly picks a cached row i uniformly at random, G = y_i w.x_i - 1, and
#     evicts it if (alpha_i = 0 and G > eps) or (alpha_i = C_i and G < -eps),
#     else alpha_i <- min(max(alpha_i - G / Q_ii, 0), C_i) and w += (alpha_i - alpha_old) y_i x_i.
# It reads a cached row as a one-row view of its slot (w.x in its own two-partial-sum order, _slot_dot says why;
# the update by row_axpy), and G, PG and the step are those of dual_step.pxd (with D_ii = 0), shared with _linear
# and _llsvm.
# eps schedule (eq. 9 and Algorithm 2): eps starts at 9 (the paper's value); before each pick eps *= beta
# (0.9) when |A| > 0.9 cap and the reader has read more than cap rows (never without a memory budget:
# `unbounded`; nor while the cache could hold every row read so far, so that a budget larger than the data acts
# the same whether the number of rows is known up front or not); every n
# picks (n = rows of the data) eps becomes the largest |PG_i| seen over those n picks (PG the projected gradient of
# eq. 8; evictions record none). Stopping rule (the driver's): the largest violation max_i |PG_i| over every row of
# a reader pass, at the reader's view, is at most -e (default 0.1, as for -s 3), and M+ - M- (largest minus smallest
# PG over the trainer's picks of at least n picks, eq. 10) is below it too; the view, which the pass certified, is
# then the model returned. Otherwise it stops after max_iter passes.
#
# Synchronization: the two loops run on two threads without the GIL and share only the membership of A, under one
# pthread mutex (no Python lock). The trainer takes the mutex once per batch of `batch` picks: it draws the batch
# (with replacement), pins those slots so the reader will not evict them, releases the mutex, does the updates,
# and retakes it to apply its evictions (at the end of the batch, not at the pick: the only departure from the
# paper, and an invisible one) and publish its statistics. The reader takes it twice per group of up to 32 rows
# (claim slots; add them to A). Growing arrays and reading a consistent snapshot park the trainer between
# batches. alpha and w are written only by the trainer; the reader reads only its frozen copies. At the end of a
# pass the reader waits until the trainer has made n picks in it (`wait_picks`): a flow control the paper leaves
# implicit (its trainer is assumed at most kappa times faster than the reader, and T >> n), without which a fast
# reader on small data can finish passes before the trainer runs at all. With one thread the driver alternates
# `insert` and `train(n_picks)`: the run is then deterministic.
# Warm start (-i, `warm_rows`): before the first pass the driver sets every row's alpha to the dual point of a
# model's w (llsvm/solvers/warm.py primal_to_dual, the hinge's: C_i or 0) and w to sum_i alpha_i y_i x_i, which a
# snapshot makes the reader's view: the first pass then measures that start exactly, as later passes measure theirs.
from libc.stdint cimport int32_t, int64_t, uint32_t, uint64_t
from libc.stdlib cimport malloc, realloc, free
from libc.string cimport memcpy
from libc.math cimport fabs, INFINITY

import numpy as np
cimport numpy as cnp

from kernel_util cimport LLSVM_PREFETCH
from kernel_types cimport value_t
from rowview cimport RowView, row_dot, row_axpy, row_sq_norm, row_indices, row_values, row_cost
from dual_step cimport dual_gradient, projected_gradient, dual_step
from rng cimport Rng, rng_seed, rng_bounded
from llsvm._ext._view cimport Rows
from llsvm._ext._stop cimport stop_requested

cnp.import_array()

cdef extern from "<pthread.h>" nogil:
    ctypedef struct pthread_mutex_t:
        pass
    ctypedef struct pthread_cond_t:
        pass
    int pthread_mutex_init(pthread_mutex_t* m, const void* attr)
    int pthread_mutex_destroy(pthread_mutex_t* m)
    int pthread_mutex_lock(pthread_mutex_t* m)
    int pthread_mutex_unlock(pthread_mutex_t* m)
    int pthread_cond_init(pthread_cond_t* c, const void* attr)
    int pthread_cond_destroy(pthread_cond_t* c)
    int pthread_cond_wait(pthread_cond_t* c, pthread_mutex_t* m)
    int pthread_cond_broadcast(pthread_cond_t* c)


cdef enum:
    MAX_BATCH = 64
    READ_GROUP = 32
    EVICT_TRIES = 16
    _SLOT_BYTES = 64         # per-slot bookkeeping, besides the row's 12 bytes per non-zero
    N_CLASSES = 100          # size classes of the row buffers
    NO_CLASS = 255

DEFAULT_EPS0 = 9.0
DEFAULT_BETA = 0.9
SLOT_BYTES = _SLOT_BYTES


cdef struct Slot:
    char* buf                 # cap int32 indices, then (8-aligned) cap doubles
    int64_t row               # row id in the data, -1 when empty
    double QD
    double C
    int32_t nnz
    int32_t cap
    signed char y
    unsigned char pinned      # in the trainer's current batch: the reader must not evict it
    unsigned char cls         # size class of buf (NO_CLASS: no buffer)


# Row buffers come in size classes of geometric capacity (8, then x1.25 rounded up to 8 non-zeros). A slot keeps
# its buffer while the next row fits it without wasting more than half of it; otherwise it trades the buffer for
# one of the right class from a per-class free list (the reader's own: no lock), and malloc/free are left to the
# warm-up and to the free lists' bound. realloc of a buffer per row was a quarter of the reader's time.
cdef int64_t CLASS_CAP[N_CLASSES]


cdef void _init_classes():
    cdef int k
    cdef int64_t c = 8
    for k in range(N_CLASSES):
        CLASS_CAP[k] = c
        c = ((c + c // 4) + 7) & ~(<int64_t>7)
        if c > 2147483640:
            c = 2147483640


_init_classes()


cdef inline int _class_of(int64_t nnz) noexcept nogil:
    """The smallest size class holding nnz non-zeros (binary search)."""
    cdef int lo = 0, hi = N_CLASSES - 1, mid
    while lo < hi:
        mid = (lo + hi) >> 1
        if CLASS_CAP[mid] >= nnz:
            hi = mid
        else:
            lo = mid + 1
    return lo


cdef inline int64_t _buf_bytes(int64_t cap) noexcept nogil:
    return ((cap * 4 + 7) & ~(<int64_t>7)) + cap * 8


cdef inline bint _in_range(const RowView* x, int64_t r, int64_t ncap) noexcept nogil:
    """Every index of row r of x in [0, ncap) (the reader checks a row before it reads w through it)."""
    cdef const int32_t* idx = row_indices(x, r)
    cdef int64_t k
    cdef int bad = 0
    for k in range(x.indptr[r], x.indptr[r + 1]):
        bad |= <uint64_t><uint32_t>idx[k] >= <uint64_t>ncap
    return not bad


cdef inline double _slot_dot(const RowView* sv, const double* w) noexcept nogil:
    """w.x of the trainer's one-row view of a slot, with the bias coordinate: two partial sums (even and odd
    positions, a last odd element to the first), s0 + s1, then the bias term. The trainer's own summation order,
    kept rather than row_dot's four partial sums: with row_dot's order the trainer's discrete choices (evict,
    update or not) come out differently on binary data with a memory budget and the run changes by more than
    rounding (measured: -s streamsvm --threads 1 --memory 1M on a9a, 67 passes instead of 70, dual 2.6e-10
    apart), while the reader's order changes (Q_ii, margins) stay at rounding level."""
    cdef const int32_t* idx = sv.indices
    cdef const double* val = <const double*>sv.values
    cdef int64_t nnz = sv.indptr[1], k = 0
    cdef double s0 = 0.0, s1 = 0.0
    while k + 2 <= nnz:
        s0 += w[idx[k]] * val[k]
        s1 += w[idx[k + 1]] * val[k + 1]
        k += 2
    if k < nnz:
        s0 += w[idx[k]] * val[k]
    s0 = s0 + s1
    if sv.bias >= 0:
        s0 += w[sv.n_features] * sv.bias
    return s0


cdef inline void _slot_row(RowView* sv, int64_t* sv_ptr, const Slot* slot) noexcept nogil:
    """Point the one-row view sv (indptr sv_ptr = {0, nnz}) at a cached row (its values are doubles): the trainer
    updates w through row_axpy and sums w.x by _slot_dot."""
    sv_ptr[1] = slot.nnz
    sv.indices = <const int32_t*>slot.buf
    sv.values = <const void*>(slot.buf + ((<int64_t>slot.cap * 4 + 7) & ~(<int64_t>7)))


cdef class StreamCache:
    """Omega cached rows, alpha over all rows, w; the reader's `insert` and the trainer's `train`.

    StreamCache(omega, n_rows, n_features, bias, seed, batch=8, eps0=9.0, beta=0.9, n_sched=n_rows).
    Capacities grow with `grow` (the trainer is parked meanwhile).
    """
    cdef pthread_mutex_t mtx
    cdef pthread_cond_t cond
    cdef bint sync_ready
    # slots and the membership of A
    cdef readonly int64_t omega
    cdef readonly int64_t cap             # the rows A may hold now, <= omega (set_cap lowers it under a budget)
    cdef readonly int64_t size
    cdef int32_t* members          # slots of A, [0, size)
    cdef int32_t* where            # position of a slot in members, -1 when not in A
    cdef int32_t* free_slots
    cdef int64_t n_free
    cdef Slot* slots
    cdef readonly int64_t row_bytes       # slot bookkeeping plus every row buffer held (in slots or free lists)
    cdef readonly int64_t peak_row_bytes
    cdef char* free_head[N_CLASSES]       # per-class free lists of row buffers (reader only), linked through
    cdef int64_t free_bytes               # their first 8 bytes
    # per row of the data
    cdef int64_t n_rows_cap
    cdef double* alpha
    cdef int32_t* slot_of
    cdef double* alpha_read         # the reader's view: alpha and w as of the last `snapshot` (the start of the
    # the model: w[0:n_features_cap], the bias weight at w[n_features_cap]
    cdef int64_t n_features_cap
    cdef double* w
    cdef double* w_read             # pass), which its loss and projected gradients use: exact, and no cache line
    cdef readonly double bias       # of w moves between the two threads' cores
    # trainer state (touched by the trainer only)
    cdef Rng rng_trainer
    cdef Rng rng_reader
    cdef readonly double eps
    cdef double eps_new, beta
    cdef int64_t t
    cdef int64_t n_sched
    cdef int batch
    # shared flags and statistics (under mtx)
    cdef bint stop_flag
    cdef bint in_batch
    cdef bint reader_waiting
    cdef readonly bint unbounded    # no memory budget: the cache is never "full" (no eps *= beta)
    cdef readonly int64_t rows_seen # 1 + the largest row id inserted (under mtx)
    cdef int pause_req
    cdef double sum_alpha
    cdef double pass_PGmax, pass_PGmin
    cdef double read_PGmax, read_PGmin    # the reader's: PG of every row read since the last end_pass
    cdef int64_t pass_picks, pass_updates, pass_evicted
    cdef readonly int64_t total_picks, total_updates, total_evicted_trainer, total_evicted_reader
    cdef readonly int64_t total_inserted, total_skipped

    def __cinit__(self, int64_t omega, int64_t n_rows, int64_t n_features, double bias, uint64_t seed,
                  int batch=8, double eps0=DEFAULT_EPS0, double beta=DEFAULT_BETA, int64_t n_sched=0,
                  bint unbounded=False):
        if omega < 1 or omega > 2147483647:
            raise ValueError("omega must be in [1, 2^31)")
        if n_rows < 0 or n_features < 0:
            raise ValueError("negative capacity")
        self.sync_ready = False
        self.unbounded = unbounded
        self.bias = bias
        self.batch = max(1, min(batch, MAX_BATCH))
        self.eps = eps0
        self.eps_new = 0.0
        self.beta = beta
        self.t = 0
        self.n_sched = n_sched if n_sched > 0 else max(n_rows, 1)
        rng_seed(&self.rng_reader, seed * <uint64_t>2 + 1)
        rng_seed(&self.rng_trainer, seed * <uint64_t>2 + 2)
        self.pass_PGmax = -INFINITY
        self.pass_PGmin = INFINITY
        self.read_PGmax = -INFINITY
        self.read_PGmin = INFINITY
        if (self._grow_slots(omega) or self._grow_rows(max(n_rows, 1)) or
                self._grow_features(n_features)):
            raise MemoryError()
        self.cap = omega
        pthread_mutex_init(&self.mtx, NULL)
        pthread_cond_init(&self.cond, NULL)
        self.sync_ready = True

    def __dealloc__(self):
        cdef int64_t s
        cdef int k
        cdef char* b
        if self.slots != NULL:
            for s in range(self.omega):
                free(self.slots[s].buf)
        for k in range(N_CLASSES):
            while self.free_head[k] != NULL:
                b = self.free_head[k]
                self.free_head[k] = (<char**>b)[0]
                free(b)
        free(self.slots)
        free(self.members)
        free(self.where)
        free(self.free_slots)
        free(self.alpha)
        free(self.alpha_read)
        free(self.slot_of)
        free(self.w)
        free(self.w_read)
        if self.sync_ready:
            pthread_cond_destroy(&self.cond)
            pthread_mutex_destroy(&self.mtx)

    # -- capacities (called with the trainer parked, or before it starts) --------------------------------------
    cdef int _grow_slots(self, int64_t omega) noexcept nogil:
        cdef int64_t s, old = self.omega
        if omega <= old:
            return 0
        cdef void* p
        p = realloc(self.members, omega * sizeof(int32_t))
        if p == NULL: return 1
        self.members = <int32_t*>p
        p = realloc(self.where, omega * sizeof(int32_t))
        if p == NULL: return 1
        self.where = <int32_t*>p
        p = realloc(self.free_slots, omega * sizeof(int32_t))
        if p == NULL: return 1
        self.free_slots = <int32_t*>p
        p = realloc(self.slots, omega * sizeof(Slot))
        if p == NULL: return 1
        self.slots = <Slot*>p
        # new slots are free; pushed so that slot `old` is handed out first
        for s in range(omega - 1, old - 1, -1):
            self.where[s] = -1
            self.slots[s].row = -1
            self.slots[s].nnz = 0
            self.slots[s].cap = 0
            self.slots[s].buf = NULL
            self.slots[s].cls = NO_CLASS
            self.slots[s].pinned = 0
            self.free_slots[self.n_free] = <int32_t>s
            self.n_free += 1
        self.row_bytes += (omega - old) * _SLOT_BYTES
        if self.row_bytes > self.peak_row_bytes:
            self.peak_row_bytes = self.row_bytes
        self.omega = omega
        return 0

    cdef int _grow_rows(self, int64_t n_rows) noexcept nogil:
        cdef int64_t i, old = self.n_rows_cap
        if n_rows <= old:
            return 0
        cdef void* p = realloc(self.alpha, n_rows * sizeof(double))
        if p == NULL: return 1
        self.alpha = <double*>p
        p = realloc(self.alpha_read, n_rows * sizeof(double))
        if p == NULL: return 1
        self.alpha_read = <double*>p
        p = realloc(self.slot_of, n_rows * sizeof(int32_t))
        if p == NULL: return 1
        self.slot_of = <int32_t*>p
        for i in range(old, n_rows):
            self.alpha[i] = 0.0
            self.alpha_read[i] = 0.0
            self.slot_of[i] = -1
        self.n_rows_cap = n_rows
        return 0

    cdef int _grow_features(self, int64_t n_features) noexcept nogil:
        cdef int64_t j, old = self.n_features_cap
        if self.w != NULL and n_features <= old:
            return 0
        cdef double wb = self.w[old] if self.w != NULL else 0.0
        cdef double wbr = self.w_read[old] if self.w_read != NULL else 0.0
        cdef void* p = realloc(self.w, (n_features + 1) * sizeof(double))
        if p == NULL: return 1
        self.w = <double*>p
        p = realloc(self.w_read, (n_features + 1) * sizeof(double))
        if p == NULL: return 1
        self.w_read = <double*>p
        for j in range(old, n_features):
            self.w[j] = 0.0
            self.w_read[j] = 0.0
        self.w[n_features] = wb
        self.w_read[n_features] = wbr
        self.n_features_cap = n_features
        return 0

    cdef void _pause(self) noexcept nogil:
        """Take the mutex with the trainer parked between batches (it stays parked until _resume)."""
        pthread_mutex_lock(&self.mtx)
        self.pause_req += 1
        while self.in_batch:
            pthread_cond_wait(&self.cond, &self.mtx)

    cdef void _resume(self) noexcept nogil:
        self.pause_req -= 1
        pthread_cond_broadcast(&self.cond)
        pthread_mutex_unlock(&self.mtx)

    def grow(self, int64_t n_rows=0, int64_t n_features=0, int64_t omega=0):
        """Raise the capacities (rows of the data, features, slots); the trainer may be running."""
        cdef int bad = 0
        if omega > 2147483647:
            raise ValueError("omega must be below 2^31")
        cdef int64_t old = self.omega
        with nogil:
            self._pause()
            if omega > self.omega:
                bad = self._grow_slots(omega)
                if not bad and self.cap == old:
                    self.cap = self.omega
            if not bad and n_rows > self.n_rows_cap:
                bad = self._grow_rows(n_rows)
            if not bad and n_features > self.n_features_cap:
                bad = self._grow_features(n_features)
            self._resume()
        if bad:
            raise MemoryError()

    def set_cap(self, int64_t cap):
        """Let A hold at most `cap` rows from now on (cap >= 1; Omega, the slots, grows to it when smaller). Lower
        than the rows held: members drawn at random (the reader's RNG, as its evictions; counted with them) leave A
        until it fits, and the row buffers of every free slot and of the free lists go back to the system, so the
        cache's bytes follow a budget that the per-row state takes a growing share of. Called by the reader between
        its inserts; the trainer is parked meanwhile."""
        cdef int bad = 0, c
        cdef int32_t s
        cdef int64_t k
        cdef char* b
        if cap < 1 or cap > 2147483647:
            raise ValueError("cap must be in [1, 2^31)")
        with nogil:
            self._pause()
            if cap > self.omega:
                bad = self._grow_slots(cap)
            if not bad:
                while self.size > cap:
                    s = self.members[rng_bounded(&self.rng_reader, <uint32_t>self.size)]
                    self._remove(s)
                    self.slot_of[self.slots[s].row] = -1
                    self.free_slots[self.n_free] = s
                    self.n_free += 1
                    self.total_evicted_reader += 1
                if cap < self.cap:
                    for k in range(self.n_free):
                        s = self.free_slots[k]
                        if self.slots[s].buf != NULL:
                            self.row_bytes -= _buf_bytes(CLASS_CAP[self.slots[s].cls])
                            free(self.slots[s].buf)
                            self.slots[s].buf = NULL
                            self.slots[s].cap = 0
                            self.slots[s].nnz = 0
                            self.slots[s].cls = NO_CLASS
                    for c in range(N_CLASSES):
                        while self.free_head[c] != NULL:
                            b = self.free_head[c]
                            self.free_head[c] = (<char**>b)[0]
                            free(b)
                    self.row_bytes -= self.free_bytes
                    self.free_bytes = 0
                self.cap = cap
            self._resume()
        if bad:
            raise MemoryError()

    def set_n(self, int64_t n):
        """n of the eps schedule (the number of rows of the data, once known)."""
        with nogil:
            pthread_mutex_lock(&self.mtx)
            self.n_sched = n if n > 0 else 1
            pthread_mutex_unlock(&self.mtx)

    # -- the reader ----------------------------------------------------------------------------------------------
    cdef void _remove(self, int32_t s) noexcept nogil:
        """Take slot s out of A (mutex held)."""
        cdef int32_t p = self.where[s], last
        if p < 0:
            return
        last = self.members[self.size - 1]
        self.members[p] = last
        self.where[last] = p
        self.size -= 1
        self.where[s] = -1

    cdef inline void _release(self, char* buf, int cls) noexcept nogil:
        """Return a row buffer to its class's free list, or to the system once the free lists hold more than
        1/8 of the buffers in use (so the cache's bytes stay near Omega average rows)."""
        cdef int64_t nb = _buf_bytes(CLASS_CAP[cls])
        if 8 * (self.free_bytes + nb) <= self.row_bytes - self.free_bytes:
            (<char**>buf)[0] = self.free_head[cls]
            self.free_head[cls] = buf
            self.free_bytes += nb
        else:
            free(buf)
            self.row_bytes -= nb

    cdef int _store(self, int32_t s, const RowView* x, int64_t r, int* bad, value_t* kind) noexcept nogil:
        """Copy row r of x into slot s (the slot is the reader's: not in A). An index beyond the feature capacity
        sets *bad (and is stored as 0, so nothing reads out of bounds; the caller raises). Returns 1 when out of
        memory."""
        cdef int64_t k0 = x.indptr[r], nnz = x.indptr[r + 1] - k0, k, cap = self.slots[s].cap
        cdef uint64_t ncap = <uint64_t>self.n_features_cap
        cdef char* buf = self.slots[s].buf
        cdef int c, out_of_range = 0, b
        cdef int32_t j
        cdef int32_t* di
        cdef double* dv
        cdef const int32_t* idx = row_indices(x, r) + k0
        cdef const value_t* val = row_values(x, r, kind) + k0
        if buf == NULL or nnz > cap or 2 * nnz + 16 < cap:
            c = _class_of(nnz)
            if buf != NULL:
                self._release(buf, self.slots[s].cls)
            buf = self.free_head[c]
            if buf != NULL:
                self.free_head[c] = (<char**>buf)[0]
                self.free_bytes -= _buf_bytes(CLASS_CAP[c])
            else:
                buf = <char*>malloc(_buf_bytes(CLASS_CAP[c]))
                if buf == NULL:
                    self.slots[s].buf = NULL
                    self.slots[s].cap = 0
                    self.slots[s].cls = NO_CLASS
                    self.slots[s].nnz = 0
                    return 1
                self.row_bytes += _buf_bytes(CLASS_CAP[c])
                if self.row_bytes > self.peak_row_bytes:
                    self.peak_row_bytes = self.row_bytes
            self.slots[s].buf = buf
            self.slots[s].cls = <unsigned char>c
            self.slots[s].cap = <int32_t>CLASS_CAP[c]
            cap = CLASS_CAP[c]
        di = <int32_t*>buf
        dv = <double*>(buf + ((cap * 4 + 7) & ~(<int64_t>7)))
        for k in range(nnz):
            j = idx[k]
            b = <uint64_t><uint32_t>j >= ncap         # negative or too large
            out_of_range |= b
            di[k] = 0 if b else j
            dv[k] = val[k]
        if out_of_range:
            bad[0] = 1
        self.slots[s].nnz = <int32_t>nnz
        return 0

    cdef void _read(self, const signed char* y, const RowView* x, int64_t row0, double Cp, double Cn,
                    int64_t begin, int64_t n, int64_t* counts, double* loss_out, int* bad_index, int* oom,
                    value_t* kind) noexcept nogil:
        """The body of insert: rows begin..n-1 of x, in groups; counts = (skipped, evicted)."""
        cdef int64_t r, c0, c1, row, tries
        cdef int64_t inserted = 0, skipped = 0, evicted = 0
        cdef int32_t s
        cdef int32_t claim[READ_GROUP]
        cdef double marg[READ_GROUP]
        cdef int group, bad_row
        cdef double loss = 0.0, margin, Ci, PG, a, G, eps_now
        cdef double rPGmax = -INFINITY, rPGmin = INFINITY
        cdef int64_t settled = 0
        group = READ_GROUP if READ_GROUP < self.cap else <int>self.cap
        c0 = begin
        while c0 < n and not oom[0] and not bad_index[0]:
            # groups aligned on global row numbers, so the claims do not depend on how rows come in blocks
            c1 = c0 + group - (row0 + c0) % group
            if c1 > n:
                c1 = n
            # every row's margin w.x at the reader's view (w_read), through the row view, once its indices are
            # known to be in range: before the claims, which it decides
            for r in range(c0, c1):
                if not _in_range(x, r, self.n_features_cap):
                    bad_index[0] = 1
                    marg[r - c0] = 0.0
                else:
                    marg[r - c0] = row_dot(x, r, self.w_read, kind)
            # claim a slot for every row of the group that is not cached yet and that the trainer would not evict
            # on sight: a row at a bound whose gradient, at the reader's view, points out of the box by more than
            # the trainer's eps (alpha_i = 0 and G > eps, or alpha_i = C_i and G < -eps) is not stored and evicts
            # no cached row (its alpha is the trainer's, unchanged while the row is out of A)
            pthread_mutex_lock(&self.mtx)
            if row0 + c1 > self.rows_seen:
                self.rows_seen = row0 + c1
            eps_now = self.eps
            for r in range(c0, c1):
                row = row0 + r
                if self.slot_of[row] >= 0 or (x.weight != NULL and x.weight[r] == 0.0):
                    claim[r - c0] = -1
                    skipped += 1
                    continue
                if bad_index[0]:
                    claim[r - c0] = -1      # the group is never trained on (the caller raises)
                    continue
                a = self.alpha[row]
                G = marg[r - c0] * y[r] - 1.0
                if (a == 0.0 and G > eps_now) or \
                        (a > 0.0 and a >= row_cost(x, r, Cp if y[r] > 0 else Cn) and G < -eps_now):
                    claim[r - c0] = -1
                    settled += 1
                    continue
                tries = 0
                while True:
                    # a free slot while fewer than cap slots are held (in A or claimed); else an eviction
                    if self.n_free > 0 and self.omega - self.n_free < self.cap:
                        self.n_free -= 1
                        s = self.free_slots[self.n_free]
                        break
                    if self.size > 0:
                        s = self.members[rng_bounded(&self.rng_reader, <uint32_t>self.size)]
                        if not self.slots[s].pinned:
                            self._remove(s)
                            self.slot_of[self.slots[s].row] = -1
                            evicted += 1
                            break
                    tries += 1
                    if tries >= EVICT_TRIES:
                        # every draw was pinned by the trainer's batch: hold the trainer after its batch
                        # (it would otherwise pin the next one in the same critical section), then retry
                        self.reader_waiting = True
                        pthread_cond_wait(&self.cond, &self.mtx)
                        self.reader_waiting = False
                        tries = 0
                self.slot_of[row] = s
                self.slots[s].row = row
                claim[r - c0] = s
            pthread_mutex_unlock(&self.mtx)
            # copy the claimed rows (slots that are no one else's) and Q_ii of each
            for r in range(c0, c1):
                s = claim[r - c0]
                if s >= 0:
                    bad_row = 0
                    if self._store(s, x, r, &bad_row, kind):
                        oom[0] = 1
                    self.slots[s].y = y[r]
                    self.slots[s].C = row_cost(x, r, Cp if y[r] > 0 else Cn)
                    self.slots[s].QD = row_sq_norm(x, r, kind)
            # add them to A
            pthread_mutex_lock(&self.mtx)
            for r in range(c0, c1):
                s = claim[r - c0]
                if s >= 0 and (bad_index[0] or oom[0]):
                    # a bad group is never trained on: its slots go back to the free stack
                    self.slot_of[row0 + r] = -1
                    self.slots[s].row = -1
                    self.free_slots[self.n_free] = s
                    self.n_free += 1
                elif s >= 0:
                    self.where[s] = <int32_t>self.size
                    self.members[self.size] = s
                    self.size += 1
                    inserted += 1
            self.total_inserted += inserted
            pthread_cond_broadcast(&self.cond)
            pthread_mutex_unlock(&self.mtx)
            inserted = 0
            # the primal's loss term, and every row's projected gradient (eq. 8), at the reader's view (the
            # model at the last snapshot): the stopping rule's check of the rows the trainer did not pick
            # (a row of C_i = 0, alpha held at 0 = C_i, has nothing to violate)
            for r in range(c0, c1):
                margin = marg[r - c0] * y[r]
                Ci = row_cost(x, r, Cp if y[r] > 0 else Cn)
                if margin < 1.0:
                    loss += Ci * (1.0 - margin)
                a = self.alpha_read[row0 + r]
                PG = projected_gradient(dual_gradient(margin, a, 0.0), a, Ci) if Ci > 0.0 else 0.0
                if PG > rPGmax:
                    rPGmax = PG
                if PG < rPGmin:
                    rPGmin = PG
            c0 = c1
        pthread_mutex_lock(&self.mtx)
        self.total_skipped += skipped + settled
        self.total_evicted_reader += evicted
        if rPGmax > self.read_PGmax:
            self.read_PGmax = rPGmax
        if rPGmin < self.read_PGmin:
            self.read_PGmin = rPGmin
        pthread_mutex_unlock(&self.mtx)
        counts[0] = skipped + settled
        counts[1] = evicted
        loss_out[0] = loss

    def insert(self, const signed char[::1] y, Rows X not None, int64_t row0, double Cp, double Cn,
               int64_t begin=0, int64_t end=-1):
        """Algorithm 1 for the rows begin..end-1 of the view X (end -1: all), whose global ids start at
        row0 + begin (labels y in {-1,+1}, one per row of X; costs Cp, Cn, times each row's weight when X has
        weights: a row of weight 0 is not cached, counted as skipped). X's own n_features and bias are not
        used: the cache's feature capacity and bias are (the bias weight at w[n_features_capacity]).

        Returns (inserted, skipped (already cached), evicted, hinge loss sum_i C_i max(0, 1 - y_i w.x_i) of the
        block's rows against the reader's view). Capacities must already cover the block (see `grow`).
        """
        cdef int64_t n = y.shape[0]
        cdef int64_t counts[2]
        cdef double loss = 0.0
        cdef int bad_index = 0, oom = 0
        cdef RowView x
        if X.v.n_rows != n:
            raise ValueError("the rows and y disagree")
        if end < 0:
            end = n
        if begin < 0 or begin > end or end > n:
            raise ValueError("bad row range")
        if row0 < 0 or row0 + end > self.n_rows_cap:
            raise ValueError("rows beyond the capacity: grow first")
        counts[0] = counts[1] = 0
        with nogil:
            # the block seen by the cache: its rows, the cache's width and bias
            x = X.v
            x.n_features = self.n_features_cap
            x.bias = self.bias
            if X.f32:
                self._read(&y[0] if n else NULL, &x, row0, Cp, Cn, begin, end, counts, &loss, &bad_index, &oom,
                           <float*>NULL)
            else:
                self._read(&y[0] if n else NULL, &x, row0, Cp, Cn, begin, end, counts, &loss, &bad_index, &oom,
                           <double*>NULL)
        if oom:
            raise MemoryError()
        if bad_index:
            raise ValueError("a feature index is beyond the capacity: grow first")
        return end - begin - counts[0], counts[0], counts[1], loss

    # -- the warm start (-i) -------------------------------------------------------------------------------------
    def warm_rows(self, const signed char[::1] y, Rows X not None, int64_t row0, const double[::1] alpha):
        """The warm start's dual point, block by block before the first pass (nothing cached yet): alpha of the
        rows row0.. of X (labels y) is set to `alpha` and w += sum_i alpha_i y_i x_i, so that w stays
        sum_i alpha_i y_i x_i; `snapshot` then makes it the reader's view of the first pass. X is seen with the
        cache's feature capacity and bias, as by `insert`."""
        cdef int64_t n = y.shape[0], r
        cdef RowView x
        cdef int bad = 0
        if X.v.n_rows != n or alpha.shape[0] != n:
            raise ValueError("the rows, y and alpha disagree")
        if row0 < 0 or row0 + n > self.n_rows_cap:
            raise ValueError("rows beyond the capacity: grow first")
        with nogil:
            x = X.v
            x.n_features = self.n_features_cap
            x.bias = self.bias
            self._pause()
            for r in range(n):
                if not _in_range(&x, r, self.n_features_cap):
                    bad = 1
                    break
                self.alpha[row0 + r] = alpha[r]
                if alpha[r] != 0.0:
                    if X.f32:
                        row_axpy(&x, r, alpha[r] * y[r], self.w, <float*>NULL)
                    else:
                        row_axpy(&x, r, alpha[r] * y[r], self.w, <double*>NULL)
            self._resume()
        if bad:
            raise ValueError("a feature index is beyond the capacity: grow first")

    # -- the trainer ---------------------------------------------------------------------------------------------
    def train(self, int64_t max_picks=-1, bint blocking=True):
        """Algorithm 2: pick, evict or update, in batches. Runs until `stop()` (blocking: waits while A is empty)
        or, with max_picks >= 0, until that many picks (returns early when A is empty and not blocking).

        Returns the number of picks made.
        """
        cdef int64_t done
        with nogil:
            done = self._train(max_picks, blocking)
        return done

    cdef int64_t _train(self, int64_t max_picks, bint blocking) noexcept nogil:
        cdef int32_t batch_slot[MAX_BATCH]
        cdef unsigned char evict[MAX_BATCH]
        cdef int nb = 0, k, k2, want
        cdef int64_t done = 0, i, size_now = 0
        cdef int64_t picks = 0, updates = 0, evicted = 0
        cdef double PGmax = -INFINITY, PGmin = INFINITY, d_sum = 0.0
        cdef double G, PG, a, a_new, C, d, full
        cdef int32_t s
        cdef double* w
        cdef double* alpha
        cdef int yi
        cdef bint skip
        # the picked row as a one-row view (its indices and values point into the slot's buffer)
        cdef RowView sv
        cdef int64_t sv_ptr[2]
        sv.n_rows = 1
        sv.indptr = sv_ptr
        sv_ptr[0] = 0
        sv.y = NULL
        sv.bias = self.bias
        sv.seg = NULL
        sv.seg_shift = NULL
        sv.weight = NULL
        pthread_mutex_lock(&self.mtx)
        while True:
            # close the previous batch: unpin, apply evictions, publish statistics
            for k in range(nb):
                self.slots[batch_slot[k]].pinned = 0
            for k in range(nb):
                if evict[k]:
                    s = batch_slot[k]
                    self._remove(s)
                    self.slot_of[self.slots[s].row] = -1
                    self.free_slots[self.n_free] = s
                    self.n_free += 1
            if nb > 0:
                if PGmax > self.pass_PGmax:
                    self.pass_PGmax = PGmax
                if PGmin < self.pass_PGmin:
                    self.pass_PGmin = PGmin
                self.pass_picks += picks
                self.pass_updates += updates
                self.pass_evicted += evicted
                self.total_picks += picks
                self.total_updates += updates
                self.total_evicted_trainer += evicted
                self.sum_alpha += d_sum
                PGmax = -INFINITY
                PGmin = INFINITY
                picks = updates = evicted = 0
                d_sum = 0.0
            self.in_batch = False
            pthread_cond_broadcast(&self.cond)
            nb = 0
            if self.stop_flag or stop_requested() or (max_picks >= 0 and done >= max_picks):
                break                   # a signal (cext/_stop.pyx): the driver, back in Python, raises
            while (self.size == 0 or self.pause_req > 0 or self.reader_waiting) and not self.stop_flag:
                if self.pause_req == 0 and not self.reader_waiting and not blocking:
                    break
                pthread_cond_wait(&self.cond, &self.mtx)
            if self.stop_flag or self.size == 0:
                break
            # draw a batch (with replacement) and pin it
            want = self.batch
            if max_picks >= 0 and max_picks - done < want:
                want = <int>(max_picks - done)
            size_now = self.size
            for k in range(want):
                s = self.members[rng_bounded(&self.rng_trainer, <uint32_t>size_now)]
                batch_slot[k] = s
                evict[k] = 0
                self.slots[s].pinned = 1
            nb = want
            self.in_batch = True
            w = self.w
            alpha = self.alpha
            sv.n_features = self.n_features_cap     # the bias weight's index
            # the RAM is full when |A| > 0.9 Omega, and only once the reader has read more rows than Omega: a
            # cache as large as the data read so far is never full (so a budget larger than the data acts as
            # no budget, whether n was known up front, binary, or not, text)
            full = INFINITY if (self.unbounded or self.rows_seen <= self.cap) else 0.9 * self.cap
            pthread_mutex_unlock(&self.mtx)

            # the first rows of the batch on their way into the cache
            for k in range(nb if nb < 4 else 4):
                LLSVM_PREFETCH(&self.slots[batch_slot[k]])
            for k in range(nb if nb < 2 else 2):
                self._prefetch_slot(batch_slot[k], alpha)
            for k in range(nb):
                s = batch_slot[k]
                if k + 4 < nb:
                    LLSVM_PREFETCH(&self.slots[batch_slot[k + 4]])
                if k + 2 < nb:
                    self._prefetch_slot(batch_slot[k + 2], alpha)
                skip = False
                for k2 in range(k):
                    if evict[k2] and batch_slot[k2] == s:
                        skip = True       # drawn twice, evicted the first time
                if skip:
                    continue
                if size_now > full:
                    self.eps *= self.beta
                i = self.slots[s].row
                yi = self.slots[s].y
                C = self.slots[s].C
                _slot_row(&sv, sv_ptr, &self.slots[s])
                a = alpha[i]
                G = dual_gradient(yi * _slot_dot(&sv, w), a, 0.0)
                picks += 1
                if (a == 0.0 and G > self.eps) or (a == C and G < -self.eps):
                    evict[k] = 1
                    evicted += 1
                else:
                    PG = projected_gradient(G, a, C)
                    if fabs(PG) > self.eps_new:
                        self.eps_new = fabs(PG)
                    if PG > PGmax:
                        PGmax = PG
                    if PG < PGmin:
                        PGmin = PG
                    if PG != 0.0:
                        a_new = dual_step(G, a, self.slots[s].QD, 0.0, C)
                        d = (a_new - a) * yi
                        if d != 0.0:
                            alpha[i] = a_new
                            row_axpy(&sv, 0, d, w, <double*>NULL)
                            d_sum += a_new - a
                            updates += 1
                self.t += 1
                if self.t >= self.n_sched:
                    self.eps = self.eps_new
                    self.eps_new = 0.0
                    self.t = 0
            done += nb
            pthread_mutex_lock(&self.mtx)
        pthread_mutex_unlock(&self.mtx)
        return done

    cdef inline void _prefetch_slot(self, int32_t s, const double* alpha) noexcept nogil:
        cdef char* buf = self.slots[s].buf
        cdef int64_t off = (<int64_t>self.slots[s].cap * 4 + 7) & ~(<int64_t>7)
        LLSVM_PREFETCH(buf)
        LLSVM_PREFETCH(buf + 64)
        LLSVM_PREFETCH(buf + off)
        LLSVM_PREFETCH(buf + off + 64)
        LLSVM_PREFETCH(buf + off + 128)
        LLSVM_PREFETCH(&alpha[self.slots[s].row])

    def stop(self):
        """Make `train` return at the end of its batch (and wake it if it waits)."""
        with nogil:
            pthread_mutex_lock(&self.mtx)
            self.stop_flag = True
            pthread_cond_broadcast(&self.cond)
            pthread_mutex_unlock(&self.mtx)

    def wait_picks(self, int64_t target):
        """Block until the trainer has made `target` picks since the last end_pass (or stopped, or A is empty):
        the reader's flow control, so that a pass never ends before the trainer had its share of it."""
        with nogil:
            pthread_mutex_lock(&self.mtx)
            # the trainer broadcasts after every batch, and stops at a signal (then this returns too)
            while self.pass_picks < target and not self.stop_flag and self.size > 0 and not stop_requested():
                pthread_cond_wait(&self.cond, &self.mtx)
            pthread_mutex_unlock(&self.mtx)

    # -- what the driver reads -----------------------------------------------------------------------------------
    def end_pass(self):
        """Statistics since the last call, then reset: dict with the trainer's PGmax, PGmin (over its picks),
        picks, updates, evicted (by the trainer), and the reader's read_PGmax, read_PGmin (over every row read)."""
        cdef double PGmax, PGmin, rmax, rmin
        cdef int64_t picks, updates, evicted
        with nogil:
            pthread_mutex_lock(&self.mtx)
            PGmax, PGmin = self.pass_PGmax, self.pass_PGmin
            rmax, rmin = self.read_PGmax, self.read_PGmin
            picks, updates, evicted = self.pass_picks, self.pass_updates, self.pass_evicted
            self.pass_PGmax = -INFINITY
            self.pass_PGmin = INFINITY
            self.read_PGmax = -INFINITY
            self.read_PGmin = INFINITY
            self.pass_picks = self.pass_updates = self.pass_evicted = 0
            pthread_mutex_unlock(&self.mtx)
        return {"PGmax": PGmax, "PGmin": PGmin, "picks": picks, "updates": updates, "evicted": evicted,
                "read_PGmax": rmax, "read_PGmin": rmin}

    def snapshot(self, int64_t n_rows, int64_t n_features, bint freeze=True):
        """(sum(alpha[:n_rows]), ||w||^2 with the bias weight, |A|, eps) with the trainer parked; with `freeze`,
        alpha and w also become the reader's view (what its loss and projected gradients use until the next)."""
        cdef double sa = 0.0, ww = 0.0
        cdef int64_t i, size
        cdef double eps
        if n_rows > self.n_rows_cap or n_features > self.n_features_cap:
            raise ValueError("beyond the capacity")
        with nogil:
            self._pause()
            for i in range(n_rows):
                sa += self.alpha[i]
            for i in range(n_features):
                ww += self.w[i] * self.w[i]
            if self.bias >= 0:
                ww += self.w[self.n_features_cap] * self.w[self.n_features_cap]
            size = self.size
            eps = self.eps
            if freeze:
                memcpy(self.w_read, self.w, (self.n_features_cap + 1) * sizeof(double))
                memcpy(self.alpha_read, self.alpha, self.n_rows_cap * sizeof(double))
            self._resume()
        return sa, ww, size, eps

    def alpha_array(self, int64_t n_rows, bint frozen=False):
        """A copy of alpha[:n_rows] (trainer parked); `frozen`: of the reader's view (the last snapshot)."""
        if n_rows > self.n_rows_cap:
            raise ValueError("beyond the capacity")
        out = np.empty(n_rows, np.float64)
        cdef double[::1] o = out
        cdef const double* src = self.alpha_read if frozen else self.alpha
        with nogil:
            self._pause()
            if n_rows > 0:
                memcpy(&o[0], src, n_rows * sizeof(double))
            self._resume()
        return out

    def alpha_view(self, int64_t n_rows, bint frozen=False):
        """alpha[:n_rows] (`frozen`: the reader's view) as a read-only array over the cache's own memory, without a
        copy (the array holds a reference to the cache): valid until the capacities grow; read it with the trainer
        stopped."""
        cdef cnp.npy_intp dims[1]
        if n_rows < 0 or n_rows > self.n_rows_cap:
            raise ValueError("beyond the capacity")
        dims[0] = n_rows
        arr = cnp.PyArray_SimpleNewFromData(1, dims, cnp.NPY_FLOAT64,
                                            <void*>(self.alpha_read if frozen else self.alpha))
        cnp.PyArray_CLEARFLAGS(arr, cnp.NPY_ARRAY_WRITEABLE)
        cnp.Py_INCREF(self)
        cnp.PyArray_SetBaseObject(arr, self)
        return arr

    def w_array(self, int64_t n_features, bint frozen=False):
        """A copy of w[:n_features], with the bias weight appended when bias >= 0 (trainer parked); `frozen`: of
        the reader's view (the last snapshot)."""
        if n_features > self.n_features_cap:
            raise ValueError("beyond the capacity")
        out = np.empty(n_features + (1 if self.bias >= 0 else 0), np.float64)
        cdef double[::1] o = out
        cdef const double* src = self.w_read if frozen else self.w
        with nogil:
            self._pause()
            if n_features > 0:
                memcpy(&o[0], src, n_features * sizeof(double))
            if self.bias >= 0:
                o[n_features] = src[self.n_features_cap]
            self._resume()
        return out

    def cached_rows(self):
        """Row ids in A, in membership order (for tests)."""
        out = np.empty(self.size, np.int64)
        cdef int64_t p
        for p in range(self.size):
            out[p] = self.slots[self.members[p]].row
        return out

    @property
    def n_rows_capacity(self):
        return self.n_rows_cap

    @property
    def n_features_capacity(self):
        return self.n_features_cap
