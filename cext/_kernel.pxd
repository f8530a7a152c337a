# The kernel column cache (cext/_kernel.pyx): the declaration other kernels cimport, by the extension's full name
# (`from llsvm._ext._kernel cimport KernelCache`), to call get_column and swap from their nogil loops.
from libc.stdint cimport int32_t, int64_t, uint64_t

from rowview cimport RowView
from kernel cimport KernelParams
from llsvm._ext._view cimport Rows


cdef class KernelCache:
    cdef Rows X                     # keeps the arrays of v alive
    cdef const double[::1] _sq      # keeps sq alive
    cdef RowView v                  # X's view (bias < 0)
    cdef bint f32                   # X's values are float32
    cdef KernelParams params
    cdef const double* sq           # |x_r|^2 by X's row number r
    cdef readonly int64_t l         # rows of the problem (the columns' full length)
    cdef int64_t n_slots            # columns the budget holds (at least min(2, l))
    cdef float* slab                # n_slots columns of l floats
    cdef int64_t* rows              # position -> X's row (the active order; swap permutes it)
    cdef int64_t* first             # position -> the position its row held at construction (reset_order undoes swaps)
    cdef int64_t* slot              # column (position) -> its slot in slab, or -1
    cdef int64_t* length            # column -> entries filled, [0, length) valid; 0 when not cached
    cdef int64_t* prev              # LRU list over the cached columns: a circular list with sentinel l,
    cdef int64_t* next              #   next[l] the least recently used, prev[l] the most recently used
    cdef int64_t* free_slots        # a stack of unused slots
    cdef double* dense              # the scratch a column's row is scattered into (kernel.pxd's scratch_size zeros),
                                    # NULL for a wide sparse view (products merge the rows)
    cdef int64_t width              # its doubles (scratch_size; 0 without one)
    cdef int n_threads              # OpenMP threads that fill a long column
    cdef uint64_t* bits             # binary rows (_kernel.pyx, _binary_setup): n_words bits per row of X, or NULL
    cdef int32_t* ones              # per row of X: its bits set (= its squared norm)
    cdef uint64_t* pbits            # the same bits by position (the active order, kept by swap), or NULL
    cdef int32_t* pones             # the counts by position
    cdef int64_t pbit_cap           # the positions they hold
    cdef bint pbits_dirty           # a retarget since they were built (a swap keeps them in order: _swap_bits)
    cdef float* table               # the kernel's float at each integer (RBF: |x - z|^2, else x.z), or NULL: binary
                                    # rows' (every integer they can give), an integer-valued RBF view's (_integer_setup)
    cdef int64_t table_size
    cdef double* panels             # the positions' rows four by four (_panel_setup), or NULL
    cdef int64_t panel_cap          # the positions they hold
    cdef double* panel_sq           # after them: the squared norm of each position's row
    cdef bint panels_dirty          # a retarget since they were built (a swap keeps them in order: _swap_lanes)
    cdef int64_t n_words
    cdef int64_t row_cost           # the mean entries of a row + 16: the cost of one kernel value
    cdef int64_t n_free
    cdef int64_t hits, misses, evictions, dropped, n_filled
    cdef double cache_size          # the budget, MB (LIBSVM's -m)
    cdef int64_t cap_l, cap_slots, cap_slab     # the entries the arrays hold (retarget reuses them)

    cdef const float* get_column(self, int64_t j, int64_t length) noexcept nogil
    cdef int get_block(self, const int64_t* js, int64_t m, float* out) noexcept nogil
    cdef int64_t _free_slot(self) noexcept nogil
    cdef float* _take_slot(self, int64_t j) noexcept nogil
    cdef void swap(self, int64_t i, int64_t j) noexcept nogil
    cdef int retarget(self, const int64_t* rows, int64_t l) noexcept nogil
    cdef bint _binary_setup(self, int64_t width, int64_t l) except -1
    cdef void _build_pbits(self) noexcept nogil
    cdef void _drop_pbits(self) noexcept nogil
    cdef bint _fill_table(self, int64_t size) except -1
    cdef void _integer_setup(self) except *
    cdef void _panel_setup(self, int64_t l) except *
    cdef void _build_panels(self) noexcept nogil
    cdef void _binary_free(self) noexcept


cdef class DoubledCache(KernelCache):
    cdef KernelCache inner          # the m rows' columns, full length m, never swapped
    cdef int64_t* index             # position (0 .. 2m-1) -> its row in inner (LIBSVM's SVR_Q index)
    cdef float* buf                 # two columns of 2m floats, used in turn (LIBSVM's SVR_Q buffer[2])
    cdef int which


# LIBSVM's kernel parameters from a mapping (kernel_type, degree, gamma, coef0), checked with LIBSVM's refusals: the
# one parser of them for every kernel module
cdef KernelParams kernel_params(params) except *
