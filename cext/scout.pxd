# The scout: a second thread that reads the rows a one-thread coordinate descent pass will visit next, so that the
# pass waits less on memory (--threads 2 on one -s 1/3/7/12/13 problem). Header-only (inline, nogil).
from libc.stdint cimport int32_t, int64_t

from kernel_types cimport value_t
from kernel_util cimport LLSVM_LOAD_RELAXED, LLSVM_STORE_RELAXED, LLSVM_PAUSE, LLSVM_TOUCH
from rowview cimport RowView, row_indices, row_values, subset_row as _row


cdef extern from "unistd.h":
    int usleep(unsigned int usec) nogil


cdef enum:
    SCOUT_LEAD = 16         # the scout reads rows this many visits ahead of the pass ...
    SCOUT_WINDOW = 512      # ... up to this many, then sleeps (SCOUT_NAP_US) rather than spin: a busy machine
    SCOUT_NAP_US = 20       # gets the second core back (the pass takes well over a microsecond a row)


cdef inline void scout_publish(int64_t* progress, int64_t s) noexcept nogil:
    """The pass's side, at visit s: its position, every 8 visits (progress NULL: no scout)."""
    if progress != NULL and (s & 7) == 0:
        LLSVM_STORE_RELAXED(progress, s)


cdef inline void scout_rows(const RowView* v, const int64_t* r, const int32_t* index, int64_t l,
                            int64_t* progress, value_t* kind) noexcept nogil:
    """The second core's help to a one-thread coordinate descent pass (--threads 2 on one problem): it reads (one byte
    a cache line) the rows the pass will visit SCOUT_LEAD .. SCOUT_WINDOW visits ahead, following the position the
    pass publishes in progress every 8 visits, so that their lines are on their way from memory before the pass
    asks for them: the pass waits on memory (its own prefetches stall on the line-fill buffers), and the scout's
    misses are the second core's. It writes nothing the pass reads, so the pass's iterates are one thread's, bit
    for bit. It reads index[] while the pass shuffles and shrinks it: every entry is a row of the problem at every
    moment (swaps), so at worst it reads a row the pass does not visit next. progress -1: between passes (the
    scout waits; a position lower than the last also starts a new pass); below -1: the solve is over, the scout
    returns."""
    cdef int64_t p, j, last = 0, k, end, i, n, p_old = 0
    cdef const char* a
    cdef const char* a_end
    while True:
        p = LLSVM_LOAD_RELAXED(progress)
        if p < -1:
            return
        if p < 0:               # between passes: the next one starts from its first visit
            last = 0
            LLSVM_PAUSE()
            continue
        if p < p_old:           # a new pass, the change between them unseen
            last = 0
        p_old = p
        j = p + SCOUT_LEAD
        if j < last:
            j = last
        n = p + SCOUT_WINDOW
        if n > l:
            n = l
        if j >= n:              # far enough ahead: the core is free until the pass comes closer
            usleep(SCOUT_NAP_US)
            continue
        while j < n:
            i = _row(r, index[j])
            k = v.indptr[i]
            end = v.indptr[i + 1]
            # every cache line of the row's values, and of its indices unless it is dense (row_is_full); from the
            # first line's start, one byte each
            a = <const char*>(<size_t>(row_values(v, i, kind) + k) & ~(<size_t>63))
            a_end = <const char*>(row_values(v, i, kind) + end)
            while a < a_end:
                LLSVM_TOUCH(a)
                a += 64
            if end - k != v.n_features:
                a = <const char*>(<size_t>(row_indices(v, i) + k) & ~(<size_t>63))
                a_end = <const char*>(row_indices(v, i) + end)
                while a < a_end:
                    LLSVM_TOUCH(a)
                    a += 64
            j += 1
        last = n


cdef inline void scout_view(const RowView* v, bint f32, const int64_t* r, const int32_t* index, int64_t l,
                            int64_t* progress) noexcept nogil:
    """scout_rows for a view of float32 (f32) or float64 values: the second thread's side of a solve."""
    if f32:
        scout_rows(v, r, index, l, progress, <float*>NULL)
    else:
        scout_rows(v, r, index, l, progress, <double*>NULL)
