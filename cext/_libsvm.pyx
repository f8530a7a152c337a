# LIBSVM text codec: a scanner that turns LIBSVM/svmlight text into CSR arrays, and a formatter for the way back.
#
# Problem: parse `label index:value index:value ... [# comment]` lines (LIBLINEAR's grammar, 1-based strictly
# increasing int32 indices, labels and values as finite doubles) at memory speed, bit-exactly, with the line and
# column of the first malformed token. Also accepted: CRLF, tabs/repeated spaces, blank and comment-only lines
# (skipped, but counted), a `qid:N` token right after the label (ignored, counted), 0-based files on request.
# On request, two more rules: a line may hold at most `max_line` bytes before its newline, and (class labels) a
# label's integer part must fit a C int, as LIBLINEAR casts it; both cost one comparison per line.
#
# Method: one pass over a chunk of bytes that the driver guarantees to end with '\n' (so every loop stops at a
# line end without a bounds test). Numbers are scanned by hand: up to 19 significant digits into a uint64 and a
# decimal exponent; when the mantissa is below 2^53 and |exponent| <= 22 the value is m * 10^e or m / 10^-e,
# one correctly rounded IEEE operation on exact operands (Clinger's fast path), hence exactly what strtod gives.
# Anything else (17-digit `%.17g` output, huge exponents) goes to strtod on the already validated token.
# The common feature token, `index:value` with an index of up to 7 digits and a value `[-]D[.F]` (D and F up to 7
# digits each, no exponent), is read from one 32-byte window (llsvm_scan_pair, SSE2): the classes of its bytes
# (digit, ':', '.', '-', token end) are compared at once, and the token's end is the first end byte, so finding
# the next token waits on one load and one bit scan, not on every digit before it; the digits' values come from
# 8-byte words by three multiplications (SWAR). The mantissa DF < 10^14 and the exponent -len(F) >= -7 are in
# Clinger's range, so the value is the byte-at-a-time scanner's bit for bit. Any other token, and any within
# 48 bytes of the chunk's end, goes to the byte-at-a-time scanner, which also gives every error.
# The scanner writes straight into the caller's arrays, which the driver reserves for the worst case of the
# chunk (a row needs >= 2 bytes, a feature >= 4), so the loop never checks capacity.
#
# Output rules: indices are stored 0-based (index - 1, or as read with zero_based); the largest stored index + 1
# is the feature count. The kernel runs without the GIL and reports errors as a status code plus position; the
# Python driver (llsvm/textio.py) turns them into DataFormatError.
from libc.stdint cimport int32_t, int64_t, uint64_t, INT64_MAX
from libc.stdlib cimport malloc, realloc, free, strtod
from libc.string cimport memcpy, memchr
from libc.stdio cimport snprintf
from libc.math cimport fabs, isfinite, signbit

cimport numpy as cnp
import numpy as np

from cython.parallel cimport prange

from kernel_types cimport value_t

cnp.import_array()

# status codes: C constants for the kernel, and (cpdef) module-level Python ints that llsvm/textio.py
# imports by name to turn them into messages
cpdef enum:
    ST_OK = 0
    ST_LABEL = 1
    ST_LABEL_NONFINITE = 2
    ST_COLON = 3
    ST_INDEX = 4
    ST_INDEX_ZERO = 5
    ST_INDEX_ORDER = 6
    ST_INDEX_RANGE = 7
    ST_VALUE = 8
    ST_VALUE_NONFINITE = 9
    ST_QID = 10
    ST_AFTER_LABEL = 11
    ST_VALUE_FLOAT32 = 12
    ST_LABEL_RANGE = 13
    ST_LINE_LONG = 14

# number scanner results
cdef enum:
    NUM_OK = 0
    NUM_SYNTAX = 1
    NUM_NONFINITE = 2

cdef double POW10[23]
POW10[:] = [1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
            1e17, 1e18, 1e19, 1e20, 1e21, 1e22]

cdef extern from *:
    """
    #include <string.h>
    #include <stdint.h>
    #if defined(__SSE2__) && (defined(__GNUC__) || defined(__clang__))
    #include <emmintrin.h>
    #define LLSVM_SCAN_PAIR 1
    /* the 8 bytes at p as a word whose lowest byte is p[0] (x86 is little-endian) */
    static inline uint64_t llsvm_load8(const unsigned char* p) {
        uint64_t v;
        memcpy(&v, p, 8);
        return v;
    }
    /* the value of the word's lowest k ASCII digits (1 <= k <= 8; the lowest byte is the first digit): they are
       moved to the top bytes (the zero bytes below are leading zeros), then pairs, fours and eights of digits are
       combined by multiplications whose partial products do not overlap */
    static inline uint64_t llsvm_digits_value(uint64_t v, int k) {
        v = (v - 0x3030303030303030ULL) << (8 * (8 - k));
        v = (v * 10) + (v >> 8);
        v = (((v & 0x000000FF000000FFULL) * 0x000F424000000064ULL) +
             (((v >> 16) & 0x000000FF000000FFULL) * 0x0000271000000001ULL)) >> 32;
        return (uint32_t)v;
    }
    static const uint64_t llsvm_pow10_u[8] = {1ULL, 10ULL, 100ULL, 1000ULL, 10000ULL, 100000ULL, 1000000ULL,
                                              10000000ULL};
    static const double llsvm_pow10_d[8] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7};
    /* the classes of 16 bytes: bit i of `other` set where byte i is none of "-.0123456789:" (0x2D to 0x3A but
       not '/'), and where it is ':', '-', '.' */
    static inline void llsvm_classes16(__m128i x, uint32_t* other, uint32_t* colon, uint32_t* minus,
                                       uint32_t* dot) {
        __m128i t = _mm_sub_epi8(x, _mm_set1_epi8(0x2D));
        __m128i in = _mm_cmpeq_epi8(_mm_min_epu8(t, _mm_set1_epi8(13)), t);
        __m128i ok = _mm_andnot_si128(_mm_cmpeq_epi8(x, _mm_set1_epi8(0x2F)), in);
        *other = (uint32_t)_mm_movemask_epi8(ok) ^ 0xFFFFu;
        *colon = (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(x, _mm_set1_epi8(0x3A)));
        *minus = (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(x, _mm_set1_epi8(0x2D)));
        *dot = (uint32_t)_mm_movemask_epi8(_mm_cmpeq_epi8(x, _mm_set1_epi8(0x2E)));
    }
    /* The feature token at p if it is `I:[-]D[.F]` (I: 1 to 7 digits; D, F: up to 7 digits each, one at least in
       all) followed by a token end (blank, newline or '#'), within 32 bytes: its index as written in idx, its value
       in val, and the token end's address; else NULL, and the caller scans the token byte by byte. The caller
       guarantees 48 readable bytes at p. The token's end is its first byte outside "-.0123456789:", found by one
       compare of 16 bytes (of 32 for a longer token), so the next token's address does not wait on the digits.
       The value is (double)DF / 10^len(F): DF < 10^14 <= 2^53 and len(F) <= 7, Clinger's fast path, which
       scan_number also takes for such a token (no digit dropped): the same double, -0.0 included. */
    static inline const unsigned char* llsvm_scan_pair(const unsigned char* p, int64_t* idx, double* val) {
        uint32_t other, colon, minus, dot, o2, c2, m2, d2, below;
        int end, c, s, d, k, f;
        unsigned char e;
        uint64_t m;
        double x;
        llsvm_classes16(_mm_loadu_si128((const __m128i*)p), &other, &colon, &minus, &dot);
        if (other == 0) {                            /* a token of 16 bytes or more */
            llsvm_classes16(_mm_loadu_si128((const __m128i*)(p + 16)), &o2, &c2, &m2, &d2);
            if (o2 == 0) return NULL;
            other = o2 << 16;
            colon |= c2 << 16;
            minus |= m2 << 16;
            dot |= d2 << 16;
        }
        end = __builtin_ctz(other);
        e = p[end];
        if (!(e == 32 || (unsigned char)(e - 9) <= 4 || e == 35)) return NULL;    /* not a token end */
        below = (1u << end) - 1;
        colon &= below;
        minus &= below;
        dot &= below;
        if (colon == 0) return NULL;
        c = __builtin_ctz(colon);
        if (colon != (1u << c) || c == 0 || c > 7) return NULL;    /* one ':', after 1 to 7 index digits */
        s = c + 1;
        if (minus) {
            if (minus != (1u << s)) return NULL;     /* one '-', right after the ':' */
            s += 1;
        }
        if (dot) {
            d = __builtin_ctz(dot);
            if ((dot & (dot - 1)) || d < s) return NULL;     /* one '.', in the value */
            k = d - s;
            f = end - d - 1;
        } else {
            d = end;
            k = end - s;
            f = 0;
        }
        if (k > 7 || f > 7 || k + f == 0) return NULL;
        /* every other byte of the token is a digit now */
        *idx = (int64_t)llsvm_digits_value(llsvm_load8(p), c);
        if (k == 1)
            m = (uint64_t)(p[s] - 48);
        else
            m = k ? llsvm_digits_value(llsvm_load8(p + s), k) : 0;
        if (f) m = m * llsvm_pow10_u[f] + llsvm_digits_value(llsvm_load8(p + d + 1), f);
        x = (double)m;
        if (f) x = x / llsvm_pow10_d[f];
        *val = minus ? -x : x;
        return p + end;
    }
    #else
    #define LLSVM_SCAN_PAIR 0
    static inline const unsigned char* llsvm_scan_pair(const unsigned char* p, int64_t* idx, double* val) {
        (void)p; (void)idx; (void)val;
        return NULL;
    }
    #endif
    """
    const unsigned char* llsvm_scan_pair(const unsigned char* p, int64_t* idx, double* val) noexcept nogil
    bint LLSVM_SCAN_PAIR


cdef enum:
    SCAN_PAIR_BYTES = 48            # bytes llsvm_scan_pair may read from a token's start

# the 32-byte token reader: built (SSE2) and switched on; tests switch it off to compare with the byte scanner
SCAN_PAIR_BUILT = bool(LLSVM_SCAN_PAIR)
cdef bint _scan_pair_on = LLSVM_SCAN_PAIR


def set_scan_pair(bint on):
    """Switch the 32-byte token reader on or off (where it is built); returns the previous setting. For tests."""
    global _scan_pair_on
    cdef bint was = _scan_pair_on
    _scan_pair_on = on and LLSVM_SCAN_PAIR
    return was


cdef enum:
    MAX_STORED_INDEX = 2147483646   # so that n_features = index + 1 still fits int32


cdef inline bint is_digit(unsigned char c) noexcept nogil:
    return <unsigned char>(c - 48) < 10


cdef inline bint is_blank(unsigned char c) noexcept nogil:
    # space, \t, \v, \f, \r (so CRLF line ends are accepted); '\n' ends a line and is not blank
    return c == 32 or (c >= 9 and c <= 13 and c != 10)


cdef inline bint ends_token(unsigned char c) noexcept nogil:
    return c == 32 or (c >= 9 and c <= 13) or c == 35   # blank, '\n' or '#'


cdef inline int scan_number(const unsigned char* s, const unsigned char** endp, double* out) noexcept nogil:
    """Scan a decimal floating-point number at s; store it in out and the first byte after it in endp."""
    cdef const unsigned char* p = s
    cdef const unsigned char* digits
    cdef unsigned char c
    cdef bint neg = False
    cdef uint64_t m = 0
    cdef int nd = 0            # significant digits kept in m
    cdef int ndig = 0          # digits seen
    cdef int exp10 = 0
    cdef bint dropped = False  # a non-zero digit did not fit in m
    cdef int e = 0
    cdef bint eneg = False
    cdef unsigned int d
    cdef double v
    cdef char* cend
    if p[0] == 45:             # '-'
        neg = True
        p += 1
    elif p[0] == 43:           # '+'
        p += 1
    digits = p
    while is_digit(p[0]):
        d = p[0] - 48
        ndig += 1
        if nd < 19:
            m = m * 10 + d
            if m != 0:
                nd += 1
        else:
            exp10 += 1
            if d != 0:
                dropped = True
        p += 1
    if p[0] == 46:             # '.'
        p += 1
        while is_digit(p[0]):
            d = p[0] - 48
            ndig += 1
            if nd < 19:
                m = m * 10 + d
                if m != 0:
                    nd += 1
                exp10 -= 1
            elif d != 0:
                dropped = True
            p += 1
    if ndig == 0:
        endp[0] = p
        c = p[0] | 32          # lower case: "nan", "inf", "infinity" are numbers to strtod, not to us
        if (c == 110 and (p[1] | 32) == 97 and (p[2] | 32) == 110) or \
           (c == 105 and (p[1] | 32) == 110 and (p[2] | 32) == 102):
            return NUM_NONFINITE
        return NUM_SYNTAX
    if p[0] == 101 or p[0] == 69:   # 'e' / 'E'
        p += 1
        if p[0] == 45:
            eneg = True
            p += 1
        elif p[0] == 43:
            p += 1
        if not is_digit(p[0]):
            endp[0] = p
            return NUM_SYNTAX
        while is_digit(p[0]):
            if e < 100000:
                e = e * 10 + (p[0] - 48)
            else:
                dropped = True     # exponent beyond any double: let strtod give inf or 0
            p += 1
        exp10 += -e if eneg else e
    endp[0] = p
    if m == 0:
        v = 0.0
    elif not dropped and m <= 9007199254740992ULL and -22 <= exp10 <= 22:
        v = <double>m
        if exp10 >= 0:
            v = v * POW10[exp10]
        else:
            v = v / POW10[-exp10]
    else:
        v = strtod(<const char*>digits, &cend)   # unsigned: the token was validated above
        if <const unsigned char*>cend != p:
            return NUM_SYNTAX
    if neg:
        v = -v
    out[0] = v
    if not isfinite(v):
        return NUM_NONFINITE
    return NUM_OK


cdef struct ParseState:
    int64_t line            # lines completed before the current one (1-based line = line + 1)
    int64_t n_rows          # rows written so far into the output arrays
    int64_t nnz             # non-zeros written so far
    int64_t max_index       # largest stored (0-based) index, -1 if none
    int64_t n_qid           # qid tokens skipped
    int64_t n_byte_tokens   # feature tokens read byte by byte (not by llsvm_scan_pair)
    int zero_based
    int class_labels        # labels are class labels: |label| < 2^63, 64-bit integers (issue 45; LIBLINEAR's C int
                            # cast overflows beyond 2^31)
    int64_t max_line        # bytes a line may hold before its '\n'
    # error report
    int64_t err_line
    int64_t err_col
    int64_t err_offset      # byte offset of the offending token in the chunk
    int64_t err_a           # extra numbers for the message (index values)
    int64_t err_b


cdef int parse_lines(const unsigned char* buf, int64_t length, ParseState* st, double* y, int64_t* indptr,
                     int32_t* indices, value_t* values) noexcept nogil:
    """Parse whole lines buf[0:length] (buf[length-1] == '\\n'), appending rows at st.n_rows / st.nnz."""
    cdef const unsigned char* p = buf
    cdef const unsigned char* end = buf + length
    # the offset of the last token start with SCAN_PAIR_BYTES readable bytes (-1: none, the reader off)
    cdef int64_t lim = length - SCAN_PAIR_BYTES if _scan_pair_on else -1
    cdef const unsigned char* line_start
    cdef const unsigned char* tok
    cdef const unsigned char* q
    cdef double label, val
    cdef int rc
    cdef int64_t prev, idx, row = st.n_rows, nnz = st.nnz, max_index = st.max_index
    cdef int64_t one = 0 if st.zero_based else 1
    cdef bint first
    cdef int status = ST_OK

    while p < end:
        line_start = p
        while is_blank(p[0]):
            p += 1
        if p[0] == 10 or p[0] == 35:           # blank or comment-only line
            while p[0] != 10:
                p += 1
            if p - line_start > st.max_line:
                tok = line_start
                status = ST_LINE_LONG
                break
            p += 1
            st.line += 1
            continue
        # label
        tok = p
        rc = scan_number(p, &p, &label)
        if rc != NUM_OK:
            status = ST_LABEL if rc == NUM_SYNTAX else ST_LABEL_NONFINITE
            break
        if not ends_token(p[0]):
            status = ST_AFTER_LABEL if p[0] == 58 else ST_LABEL
            break
        if st.class_labels and not fabs(label) < 9223372036854775808.0:
            status = ST_LABEL_RANGE
            break
        y[row] = label
        prev = -1
        first = True
        while True:
            while is_blank(p[0]):
                p += 1
            if p[0] == 10:
                break
            if p[0] == 35:                      # trailing comment
                while p[0] != 10:
                    p += 1
                break
            tok = p
            if first and p[0] == 113 and p[1] == 105 and p[2] == 100 and p[3] == 58:   # "qid:"
                q = p + 4
                if not is_digit(q[0]):
                    status = ST_QID
                    break
                while is_digit(q[0]):
                    q += 1
                if not ends_token(q[0]):
                    status = ST_QID
                    break
                st.n_qid += 1
                p = q
                first = False
                continue
            first = False
            # a well-formed token read whole (q: its end), or else its index read here byte by byte
            q = llsvm_scan_pair(p, &idx, &val) if p - buf <= lim else NULL
            if q == NULL:
                if not is_digit(p[0]):
                    status = ST_INDEX
                    break
                idx = 0
                while is_digit(p[0]):
                    if idx < 100000000000LL:
                        idx = idx * 10 + (p[0] - 48)
                    p += 1
                if p[0] != 58:                  # ':'
                    status = ST_COLON
                    break
                p += 1
            idx -= one
            if idx < 0:
                status = ST_INDEX_ZERO
                break
            if idx > MAX_STORED_INDEX:
                status = ST_INDEX_RANGE
                st.err_a = idx + one
                break
            if idx <= prev:
                status = ST_INDEX_ORDER
                st.err_a = idx + one
                st.err_b = prev + one
                break
            if q == NULL:
                st.n_byte_tokens += 1
                rc = scan_number(p, &q, &val)
                if rc != NUM_OK or not ends_token(q[0]):
                    tok = p                     # value errors point at the value, not at its index
                    status = ST_VALUE_NONFINITE if rc == NUM_NONFINITE else ST_VALUE
                    break
                if value_t is float:
                    if not isfinite(<float>val):
                        tok = p
                        status = ST_VALUE_FLOAT32
                        break
            p = q
            prev = idx
            indices[nnz] = <int32_t>idx
            values[nnz] = <value_t>val
            nnz += 1
        if status != ST_OK:
            break
        if p - line_start > st.max_line:        # p is at the line's '\n'
            tok = line_start
            status = ST_LINE_LONG
            break
        if prev > max_index:
            max_index = prev
        row += 1
        indptr[row] = nnz
        p += 1                                  # the '\n'
        st.line += 1

    if status != ST_OK:
        st.err_line = st.line + 1
        st.err_col = (tok - line_start) + 1
        st.err_offset = tok - buf
    st.n_rows = row
    st.nnz = nnz
    st.max_index = max_index
    return status


cdef enum:
    POOL_DEPTH = 2      # freed arrays kept per kind (labels, offsets, indices, values)


cdef class MemoryPool:
    """The memory of a stream's handed-over arrays, freed by their user and kept for the builder's next chunk.

    A fresh allocation's pages are zeroed by the kernel at first touch, which costs about as much as scanning the
    text into them; a stream (llsvm-convert, the out-of-core readers) drops each chunk's arrays before long, so
    their pages, recycled, are written again without that cost. At most POOL_DEPTH arrays of each kind are kept;
    close() frees them and lets later arrays be freed as usual (the pool lives as long as one pass)."""
    cdef void* slots[4][POOL_DEPTH]
    cdef int count[4]
    cdef bint closed
    cdef readonly int64_t reused       # arrays handed out again

    cdef void* pop(self, int kind):
        if self.count[kind] == 0:
            return NULL
        self.count[kind] -= 1
        self.reused += 1
        return self.slots[kind][self.count[kind]]

    cdef bint push(self, int kind, void* p):
        if self.closed or self.count[kind] == POOL_DEPTH:
            return False
        self.slots[kind][self.count[kind]] = p
        self.count[kind] += 1
        return True

    def close(self):
        cdef int k
        self.closed = True
        for k in range(4):
            while self.count[k]:
                self.count[k] -= 1
                free(self.slots[k][self.count[k]])

    def __dealloc__(self):
        self.close()


cdef class _Owner:
    """Keeps a malloc'ed buffer alive for the NumPy arrays that view it, and frees it with them (or hands it back
    to its MemoryPool)."""
    cdef void* ptr
    cdef MemoryPool pool
    cdef int kind

    def __dealloc__(self):
        if self.pool is None or not self.pool.push(self.kind, self.ptr):
            free(self.ptr)


cdef object _adopt(void* ptr, int64_t n, int typenum, MemoryPool pool=None, int kind=0):
    """An ndarray of n items that owns ptr (freed when the array goes, or handed back to pool as `kind`)."""
    cdef cnp.npy_intp dims[1]
    cdef _Owner owner = _Owner.__new__(_Owner)
    owner.ptr = ptr
    owner.pool = pool
    owner.kind = kind
    dims[0] = n
    arr = cnp.PyArray_SimpleNewFromData(1, dims, typenum, ptr)
    cnp.Py_INCREF(owner)
    cnp.PyArray_SetBaseObject(arr, owner)
    return arr


cdef class CSRBuilder:
    """Growing CSR arrays that the scanner fills directly, then hands over as NumPy arrays without a copy.

    Capacity grows with realloc (for large blocks glibc moves pages with mremap instead of copying), and pages
    reserved but not written are never touched, so resident memory is what the data needs: 12 bytes per
    non-zero with float64 values (8 with float32), 16 per row (offset and label).
    """
    cdef double* y
    cdef int64_t* indptr
    cdef int32_t* indices
    cdef void* values
    cdef int64_t cap_rows, cap_nnz
    cdef ParseState st
    cdef readonly bint float32
    cdef MemoryPool pool

    def __cinit__(self, bint float32=False, bint zero_based=False, bint class_labels=False,
                  int64_t max_line=INT64_MAX):
        if max_line < 0:
            raise ValueError("max_line must be non-negative")
        self.float32 = float32
        self.st.zero_based = zero_based
        self.st.class_labels = class_labels
        self.st.max_line = max_line
        self.st.max_index = -1
        self._alloc()

    cdef _alloc(self):
        self.cap_rows = 0
        self.cap_nnz = 0
        self.y = NULL
        self.indices = NULL
        self.values = NULL
        self.indptr = <int64_t*>malloc(sizeof(int64_t))
        if self.indptr == NULL:
            raise MemoryError()
        self.indptr[0] = 0
        self.st.n_rows = 0
        self.st.nnz = 0

    def __dealloc__(self):
        free(self.y)
        free(self.indptr)
        free(self.indices)
        free(self.values)

    @property
    def n_rows(self):
        return self.st.n_rows

    @property
    def nnz(self):
        return self.st.nnz

    @property
    def line(self):
        """Lines consumed so far (complete lines, blank ones included)."""
        return self.st.line

    @property
    def max_index(self):
        return self.st.max_index

    @property
    def n_qid(self):
        return self.st.n_qid

    @property
    def n_byte_tokens(self):
        """Feature tokens read byte by byte so far (the others by the 32-byte reader)."""
        return self.st.n_byte_tokens

    @property
    def max_line(self):
        return self.st.max_line

    @property
    def error(self):
        return (self.st.err_line, self.st.err_col, self.st.err_offset, self.st.err_a, self.st.err_b)

    def reserve(self, int64_t rows, int64_t nnz):
        """Make room for `rows` more rows and `nnz` more non-zeros (growing by at least half each time)."""
        cdef int64_t need_rows = self.st.n_rows + rows, need_nnz = self.st.nnz + nnz
        cdef int64_t vsize = sizeof(float) if self.float32 else sizeof(double)
        cdef void* p
        if self.pool is not None and self.cap_rows == 0 and self.cap_nnz == 0:
            # empty: start from arrays handed back (realloc below keeps the pages they have written)
            p = self.pool.pop(1)
            if p != NULL:
                free(self.indptr)
                self.indptr = <int64_t*>p
                self.indptr[0] = 0
            self.y = <double*>self.pool.pop(0)
            self.indices = <int32_t*>self.pool.pop(2)
            self.values = self.pool.pop(3)
        if need_rows > self.cap_rows:
            need_rows = max(need_rows, self.cap_rows + self.cap_rows // 2)
            p = realloc(self.y, need_rows * sizeof(double))
            if p == NULL:
                raise MemoryError()
            self.y = <double*>p
            p = realloc(self.indptr, (need_rows + 1) * sizeof(int64_t))
            if p == NULL:
                raise MemoryError()
            self.indptr = <int64_t*>p
            self.cap_rows = need_rows
        if need_nnz > self.cap_nnz:
            need_nnz = max(need_nnz, self.cap_nnz + self.cap_nnz // 2)
            p = realloc(self.indices, need_nnz * sizeof(int32_t))
            if p == NULL:
                raise MemoryError()
            self.indices = <int32_t*>p
            p = realloc(self.values, need_nnz * vsize)
            if p == NULL:
                raise MemoryError()
            self.values = p
            self.cap_nnz = need_nnz

    def parse(self, const unsigned char[::1] buf, int64_t length):
        """Parse buf[0:length], which must end with '\\n'. Reserves the worst case first. Returns a status."""
        cdef int status
        if length <= 0:
            return ST_OK
        if buf[length - 1] != 10:
            raise ValueError("chunk must end with a newline")
        self.reserve(length // 2 + 1, length // 4 + 1)
        with nogil:
            if self.float32:
                status = parse_lines(&buf[0], length, &self.st, self.y, self.indptr, self.indices,
                                     <float*>self.values)
            else:
                status = parse_lines(&buf[0], length, &self.st, self.y, self.indptr, self.indices,
                                     <double*>self.values)
        return status

    def use_pool(self, MemoryPool pool):
        """Take the memory of arrays handed over earlier from `pool`, and hand it back there once they are freed."""
        self.pool = pool

    def empty_like(self):
        """A new, empty builder with this one's settings (parse_split's scratch)."""
        return CSRBuilder(self.float32, self.st.zero_based, self.st.class_labels, self.st.max_line)

    cdef _alloc_reset(self):
        """Empty, keeping the capacity (a scratch builder's memory is reused chunk after chunk)."""
        self.st.n_rows = 0
        self.st.nnz = 0
        self.st.line = 0
        self.st.n_qid = 0
        self.st.n_byte_tokens = 0
        self.st.max_index = -1

    def take(self):
        """Hand over (y, indptr, indices, values) as NumPy arrays, shrunk to fit, and start empty again."""
        cdef int64_t n = self.st.n_rows, nnz = self.st.nnz
        cdef int64_t vsize = sizeof(float) if self.float32 else sizeof(double)
        cdef void* p
        # shrink to fit (never to zero bytes: realloc(p, 0) may free)
        p = realloc(self.y, max(n, 1) * sizeof(double))
        if p != NULL:
            self.y = <double*>p
        p = realloc(self.indptr, (n + 1) * sizeof(int64_t))
        if p != NULL:
            self.indptr = <int64_t*>p
        if self.indices == NULL:
            self.reserve(0, 1)
        p = realloc(self.indices, max(nnz, 1) * sizeof(int32_t))
        if p != NULL:
            self.indices = <int32_t*>p
        p = realloc(self.values, max(nnz, 1) * vsize)
        if p != NULL:
            self.values = p
        if self.y == NULL:
            self.y = <double*>malloc(sizeof(double))
            if self.y == NULL:
                raise MemoryError()
        y = _adopt(self.y, n, cnp.NPY_FLOAT64, self.pool, 0)
        self.y = NULL
        indptr = _adopt(self.indptr, n + 1, cnp.NPY_INT64, self.pool, 1)
        self.indptr = NULL
        indices = _adopt(self.indices, nnz, cnp.NPY_INT32, self.pool, 2)
        self.indices = NULL
        values = _adopt(self.values, nnz, cnp.NPY_FLOAT32 if self.float32 else cnp.NPY_FLOAT64, self.pool, 3)
        self.values = NULL
        self._alloc()
        return y, indptr, indices, values


# ---------------------------------------------------------------------------------------------------------------
# Two threads on one chunk.
#
# Problem: the CSR arrays of whole lines buf[0:length] exactly as one parse_lines call gives them (the same bits,
# and on a malformed line the same status, line, column and offset: the first bad line in file order).
# Method: the chunk is cut at the first '\n' at or after its middle; the two parts are parsed at once on two OpenMP
# threads, each into a scratch builder (line count from 0) whose memory is reused chunk after chunk, then each thread
# copies its part's rows into the builder's arrays at their place (labels and non-zeros as they are, offsets shifted
# by the non-zeros before them). So both the scan and the first touch of the output pages (the kernel zeroing fresh
# memory, as costly as the scan) are shared by the threads; the copy is one pass over the output, from cache-warm
# scratch. Numbers are scanned one token at a time with no state carried across a line, so each value is the one
# the serial scan reads. Errors: the first part's, if any (it comes first in the file), else the second's, their
# lines shifted by the lines before them and offsets by the cut. Stopping rule: the end of each part, or its first
# malformed line. Without OpenMP the parts run in turn on one thread (the same result).

def split_point(const unsigned char[::1] buf, int64_t length):
    """The cut of parse_split: one past the first '\n' at or after length // 2 in buf[0:length], or -1 when that
    newline is buf's last (nothing to put in a second part)."""
    cdef int64_t half = length // 2
    cdef const unsigned char* p
    if length < 2:
        return -1
    with nogil:
        p = <const unsigned char*>memchr(&buf[half], 10, length - half)
    if p == NULL or p - &buf[0] + 1 >= length:
        return -1
    return p - &buf[0] + 1


cdef void touch_for_write(char* p, int64_t n) noexcept nogil:
    """Write one byte of every 4 KB page of p[0:n] (not yet written: the builder's fresh capacity) before a memcpy
    fills it. glibc's memcpy copies large blocks with `rep movsb`, whose first access to a page that has none yet
    faults as a read here: the kernel maps the shared zero page, and the store that follows faults again to copy
    it, with a TLB shoot-down of every thread's CPU. Measured: 400 MB into fresh memory 0.96 s, 0.08 s touched
    first; the two-thread parse spent 12 % of its samples there."""
    cdef volatile char* q = p
    cdef int64_t k = 0
    while k < n:
        q[k] = 0
        k += 4096
    if n > 0:
        q[n - 1] = 0                # the last page, when p is not on a page's start


cdef void place_rows(double* y, int64_t* indptr, int32_t* indices, char* values, const double* sy,
                     const int64_t* sindptr, const int32_t* sindices, const char* svalues, int64_t n, int64_t nnz,
                     int64_t shift, int64_t vsize) noexcept nogil:
    """Copy n rows (nnz non-zeros) of scratch arrays to y, indptr[1..n], indices, values; offsets + shift."""
    cdef int64_t i
    touch_for_write(<char*>y, n * sizeof(double))
    touch_for_write(<char*>indices, nnz * sizeof(int32_t))
    touch_for_write(values, nnz * vsize)
    memcpy(y, sy, n * sizeof(double))
    memcpy(indices, sindices, nnz * sizeof(int32_t))
    memcpy(values, svalues, nnz * vsize)
    for i in range(1, n + 1):
        indptr[i] = sindptr[i] + shift


def parse_split(CSRBuilder a, CSRBuilder s0, CSRBuilder s1, const unsigned char[::1] buf, int64_t cut,
                int64_t length):
    """Parse buf[0:cut] into scratch s0 and buf[cut:length] into scratch s1 (empty builders with a's settings) on
    two threads, then append both to `a` and empty the scratches (they keep their memory). buf[cut - 1] and
    buf[length - 1] must be '\n'. Returns the status; a failure is left in a.error as the serial parse reports it."""
    cdef int status[2]
    cdef CSRBuilder s
    cdef ParseState* sts[2]
    cdef const unsigned char* starts[2]
    cdef int64_t lens[2]
    cdef double* ys[2]
    cdef int64_t* ptrs[2]
    cdef int32_t* idxs[2]
    cdef void* vals[2]
    cdef int64_t rows[2]
    cdef int64_t nzs[2]
    cdef int64_t n0, nnz0, k
    cdef int64_t vsize = sizeof(float) if a.float32 else sizeof(double)
    cdef bint f32 = a.float32
    if not 0 < cut < length or buf[cut - 1] != 10 or buf[length - 1] != 10:
        raise ValueError("both parts must end with a newline")
    for s in (s0, s1):
        if s.st.n_rows or s.st.nnz or s.st.line or s.float32 != a.float32 or s.st.zero_based != a.st.zero_based or \
                s.st.class_labels != a.st.class_labels or s.st.max_line != a.st.max_line:
            raise ValueError("the scratch builders must be empty, with the builder's settings")
    s0.reserve(cut // 2 + 1, cut // 4 + 1)
    s1.reserve((length - cut) // 2 + 1, (length - cut) // 4 + 1)
    sts[0], sts[1] = &s0.st, &s1.st
    starts[0], starts[1] = &buf[0], &buf[cut]
    lens[0], lens[1] = cut, length - cut
    ys[0], ys[1] = s0.y, s1.y
    ptrs[0], ptrs[1] = s0.indptr, s1.indptr
    idxs[0], idxs[1] = s0.indices, s1.indices
    vals[0], vals[1] = s0.values, s1.values
    with nogil:
        for k in prange(2, num_threads=2, schedule="static", chunksize=1):
            if f32:
                status[k] = parse_lines(starts[k], lens[k], sts[k], ys[k], ptrs[k], idxs[k], <float*>vals[k])
            else:
                status[k] = parse_lines(starts[k], lens[k], sts[k], ys[k], ptrs[k], idxs[k], <double*>vals[k])
    for k in range(2):
        if status[k] != ST_OK:
            s = s0 if k == 0 else s1
            a.st.err_line = s.st.err_line + a.st.line + (s0.st.line if k == 1 else 0)
            a.st.err_col = s.st.err_col
            a.st.err_offset = s.st.err_offset + (cut if k == 1 else 0)
            a.st.err_a = s.st.err_a
            a.st.err_b = s.st.err_b
            s0._alloc_reset()
            s1._alloc_reset()
            return status[k]
    n0, nnz0 = a.st.n_rows, a.st.nnz
    rows[0], rows[1] = s0.st.n_rows, s1.st.n_rows
    nzs[0], nzs[1] = s0.st.nnz, s1.st.nnz
    a.reserve(rows[0] + rows[1], nzs[0] + nzs[1])
    with nogil:
        for k in prange(2, num_threads=2, schedule="static", chunksize=1):
            place_rows(a.y + n0 + k * rows[0], a.indptr + n0 + k * rows[0], a.indices + nnz0 + k * nzs[0],
                       <char*>a.values + (nnz0 + k * nzs[0]) * vsize, ys[k], ptrs[k], idxs[k], <const char*>vals[k],
                       rows[k], nzs[k], nnz0 + k * nzs[0], vsize)
    a.st.n_rows = n0 + rows[0] + rows[1]
    a.st.nnz = nnz0 + nzs[0] + nzs[1]
    a.st.line += s0.st.line + s1.st.line
    a.st.n_qid += s0.st.n_qid + s1.st.n_qid
    a.st.n_byte_tokens += s0.st.n_byte_tokens + s1.st.n_byte_tokens
    a.st.max_index = max(a.st.max_index, s0.st.max_index, s1.st.max_index)
    s0._alloc_reset()
    s1._alloc_reset()
    return ST_OK


def last_newline(const unsigned char[::1] buf, int64_t length):
    """Index of the last '\\n' in buf[0:length], or -1."""
    cdef int64_t i = length - 1
    with nogil:
        while i >= 0 and buf[i] != 10:
            i -= 1
    return i


# ---------------------------------------------------------------------------------------------------------------
# Formatter: CSR rows back to LIBSVM text, every number as %.17g (round-trips bit-exactly through the parser).

cdef int64_t format_rows(const double* y, const int64_t* indptr, const int32_t* indices, const value_t* values,
                         int64_t r0, int64_t r1, int64_t one, char* out, int64_t cap) noexcept nogil:
    """Write rows r0..r1-1 into out; return bytes written, or -1 if cap was too small."""
    cdef int64_t pos = 0, k, i
    cdef int n
    for i in range(r0, r1):
        if cap - pos < 32:
            return -1
        n = snprintf(out + pos, 32, "%.17g", y[i])
        pos += n
        for k in range(indptr[i], indptr[i + 1]):
            if cap - pos < 48:
                return -1
            n = snprintf(out + pos, 48, " %lld:%.17g", <long long>(indices[k] + one), <double>values[k])
            pos += n
        out[pos] = 10
        pos += 1
    return pos


def format_text(const double[::1] y, const int64_t[::1] indptr, const int32_t[::1] indices, values,
                int64_t r0, int64_t r1, bint zero_based=False):
    """LIBSVM text of rows r0..r1-1 as bytes (labels and values %.17g, 1-based indices unless zero_based)."""
    cdef int64_t base = indptr[r0], cap, pos
    cdef int64_t one = 0 if zero_based else 1
    cdef const double[::1] v64
    cdef const float[::1] v32
    cap = 32 * (r1 - r0 + 1) + 48 * (indptr[r1] - base) + 64
    out = bytearray(cap)
    cdef char* out_ptr = out
    if values.dtype == np.float32:
        v32 = values
        with nogil:
            pos = format_rows(&y[0] if y.shape[0] else NULL, &indptr[0], &indices[0] if indices.shape[0] else NULL,
                              &v32[0] if v32.shape[0] else NULL, r0, r1, one, out_ptr, cap)
    else:
        v64 = values
        with nogil:
            pos = format_rows(&y[0] if y.shape[0] else NULL, &indptr[0], &indices[0] if indices.shape[0] else NULL,
                              &v64[0] if v64.shape[0] else NULL, r0, r1, one, out_ptr, cap)
    if pos < 0:
        raise RuntimeError("format buffer too small")   # cannot happen: cap is the worst case
    del out[pos:]
    return bytes(out)


# ---------------------------------------------------------------------------------------------------------------
# Model bodies: LIBSVM's SV lines and LIBLINEAR's weight lines.
#
# Problem: the body of a LIBSVM model file (svm_save_model): `l` lines, each `coef_1 ... coef_m index:value ...`
# (m = nr_class - 1 coefficients as finite doubles, then 1-based strictly ascending int32 indices with finite
# values), into a coefficient matrix (m x l, row-major: coef[j * l + i]) and CSR arrays; or the body of a LIBLINEAR
# model file (save_model): `l` lines of exactly m finite doubles (no pairs), into an l x m matrix.
# Method: one pass with the data scanner's scan_number (bit-exact with strtod, as above). Tokens are separated by
# C's white space other than '\n' (space, \t, \v, \f, \r), as Python's str.split() on the ASCII text the model
# loader admits; there are no comments. The grammar is a subset of llsvm/models/svm.py's reference reader: a line
# this scanner refuses is handed back to that reader (by status), which names the line and column in its own words
# (and accepts the few spellings refused here, such as a '+' before an index).
# Stopping rule: after `l` lines, or at the first token outside the grammar (status SV_BAD, line in sv_bad_line).

cdef enum:
    SV_OK = 0
    SV_BAD = 1


cdef inline bint ends_sv_token(unsigned char c) noexcept nogil:
    return c == 32 or (c >= 9 and c <= 13)     # blank or '\n'


cdef int parse_sv_lines(const unsigned char* p, const unsigned char* end, int m, int64_t l, double* coef,
                        int64_t sj, int64_t si, bint pairs, int64_t* indptr, int32_t* indices, double* values,
                        int64_t* bad_line, int64_t* max_index) noexcept nogil:
    """Parse l lines from p (the region ends with '\\n' at end[-1]); see the comment above. The j-th number of
    line i goes to coef[j * sj + i * si]; without pairs, a line ends after its m numbers."""
    cdef int64_t i, nnz = 0, idx, prev, top = -1
    cdef int j, rc
    cdef double v
    cdef const unsigned char* q
    indptr[0] = 0
    for i in range(l):
        bad_line[0] = i
        if p >= end:
            return SV_BAD
        for j in range(m):
            while is_blank(p[0]):
                p += 1
            rc = scan_number(p, &q, &v)
            if rc != NUM_OK or not ends_sv_token(q[0]):
                return SV_BAD
            coef[j * sj + i * si] = v
            p = q
        prev = 0
        while True:
            while is_blank(p[0]):
                p += 1
            if p[0] == 10:
                break
            if not pairs or not is_digit(p[0]):
                return SV_BAD
            idx = 0
            while is_digit(p[0]):
                if idx <= 2147483647:
                    idx = idx * 10 + (p[0] - 48)
                p += 1
            if p[0] != 58 or idx <= prev or idx > 2147483647:
                return SV_BAD
            p += 1
            rc = scan_number(p, &q, &v)
            if rc != NUM_OK or not ends_sv_token(q[0]):
                return SV_BAD
            p = q
            prev = idx
            indices[nnz] = <int32_t>(idx - 1)
            values[nnz] = v
            nnz += 1
        if prev - 1 > top:
            top = prev - 1
        indptr[i + 1] = nnz
        p += 1                                  # the '\n'
    max_index[0] = top
    return SV_OK


def parse_sv_block(const unsigned char[::1] buf, int m, int64_t l):
    """The SV lines of a LIBSVM model: buf holds exactly l lines, the last ending with '\\n'. Returns (coef (m, l)
    float64, indptr int64, indices int32, values float64, n_features), or the 0-based number of the first line
    outside the grammar (for the reference reader to name the error)."""
    cdef int64_t n = buf.shape[0], bad = 0, top = -1, cap, i
    cdef int status
    if l < 0 or m < 0 or (n == 0 and l > 0) or (n > 0 and buf[n - 1] != 10):
        raise ValueError("the SV block must hold its lines, the last ending with a newline")
    # every pair has its ':' (a line outside the grammar is refused anyway): arrays of the exact size, no copy
    cap = 0
    with nogil:
        for i in range(n):
            cap += buf[i] == 58
    cap += 1
    coef = np.empty((m, l), dtype=np.float64)
    indptr = np.empty(l + 1, dtype=np.int64)
    indices = np.empty(cap, dtype=np.int32)
    values = np.empty(cap, dtype=np.float64)
    cdef double[:, ::1] c = coef
    cdef int64_t[::1] ip = indptr
    cdef int32_t[::1] ix = indices
    cdef double[::1] vv = values
    with nogil:
        status = parse_sv_lines(&buf[0] if n else NULL, &buf[0] + n if n else NULL, m, l,
                                &c[0, 0] if m * l else NULL, l, 1, True, &ip[0], &ix[0], &vv[0], &bad, &top)
    if status != SV_OK:
        return int(bad)
    nnz = int(indptr[l])
    return coef, indptr, indices[:nnz], values[:nnz], int(top + 1)


def parse_weight_block(const unsigned char[::1] buf, int m, int64_t l, out=None):
    """The weight lines of a LIBLINEAR model: buf holds exactly l lines of m numbers, the last ending with '\\n'.
    Returns W (l, m) float64 (written into `out`, an (l, m) C-contiguous float64 array, when given: a model read
    in pieces), or the 0-based number of the first line outside the grammar."""
    cdef int64_t n = buf.shape[0], bad = 0, top = -1
    cdef int status
    if l < 0 or m < 0 or (n == 0 and l > 0) or (n > 0 and buf[n - 1] != 10):
        raise ValueError("the weight block must hold its lines, the last ending with a newline")
    W = np.empty((l, m), dtype=np.float64) if out is None else out
    if W.shape[0] != l or W.shape[1] != m:
        raise ValueError("out must be (l, m)")
    indptr = np.empty(l + 1, dtype=np.int64)
    cdef double[:, ::1] w = W
    cdef int64_t[::1] ip = indptr
    with nogil:
        status = parse_sv_lines(&buf[0] if n else NULL, &buf[0] + n if n else NULL, m, l,
                                &w[0, 0] if m * l else NULL, 1, m, False, &ip[0], NULL, NULL, &bad, &top)
    if status != SV_OK:
        return int(bad)
    return W


# ---------------------------------------------------------------------------------------------------------------
# Model bodies back to text, as LIBLINEAR's save_model and LIBSVM's svm_save_model print them (C's printf, so the
# digits are theirs): a weight matrix's rows r0..r1-1 as "%.17g " per value and "\n" per row; an SV block's rows as
# "%.17g " per coefficient, then "index:%.8g " per pair (1-based), then "\n". A caller writes a model in chunks of
# rows, so that no text of the whole model is ever held.

cdef inline int put_g17(char* out, double x) noexcept nogil:
    """snprintf(out, 32, "%.17g ", x), with a zero written directly ("0 " or "-0 ", printf's bytes): a linear
    model's weights are mostly zero on sparse data (news20: 77 %), and glibc spends ~300 ns on each."""
    if x == 0.0:
        if signbit(x):
            out[0] = 45         # '-'
            out[1] = 48         # '0'
            out[2] = 32         # ' '
            return 3
        out[0] = 48
        out[1] = 32
        return 2
    return snprintf(out, 32, "%.17g ", x)


cdef int64_t format_weight_rows(const double* W, int64_t ncol, int64_t r0, int64_t r1, char* out) noexcept nogil:
    cdef int64_t pos = 0, i, j
    for i in range(r0, r1):
        for j in range(ncol):
            pos += put_g17(out + pos, W[i * ncol + j])
        out[pos] = 10
        pos += 1
    return pos


def format_weights(const double[:, ::1] W, int64_t r0, int64_t r1):
    """Rows r0..r1-1 of W as LIBLINEAR's model body: "%.17g " per value, a newline per row (a bytearray)."""
    cdef int64_t ncol = W.shape[1], pos
    if not 0 <= r0 <= r1 <= W.shape[0]:
        raise ValueError("rows out of range")
    out = bytearray(32 * ncol * (r1 - r0) + (r1 - r0) + 1)
    cdef char* o = out
    if r1 > r0:
        with nogil:
            pos = format_weight_rows(&W[0, 0], ncol, r0, r1, o)
        del out[pos:]
    else:
        del out[:]
    return out


cdef int64_t format_sv_rows(const double* coef, int64_t m, int64_t l, const int64_t* indptr,
                            const int32_t* indices, const double* values, int64_t r0, int64_t r1,
                            char* out) noexcept nogil:
    cdef int64_t pos = 0, i, j, t
    for i in range(r0, r1):
        for j in range(m):
            pos += snprintf(out + pos, 32, "%.17g ", coef[j * l + i])
        for t in range(indptr[i], indptr[i + 1]):
            pos += snprintf(out + pos, 48, "%lld:%.8g ", <long long>indices[t] + 1, values[t])
        out[pos] = 10
        pos += 1
    return pos


def format_svs(const double[:, ::1] coef, const int64_t[::1] indptr, const int32_t[::1] indices,
               const double[::1] values, int64_t r0, int64_t r1):
    """SV rows r0..r1-1 as LIBSVM's model body (a bytearray): coef (m, l), the SVs as CSR with 0-based indices."""
    cdef int64_t m = coef.shape[0], l = indptr.shape[0] - 1, pos = 0
    if not 0 <= r0 <= r1 <= l or (m and coef.shape[1] != l):
        raise ValueError("rows out of range")
    cdef int64_t nnz = indptr[r1] - indptr[r0]
    out = bytearray(32 * m * (r1 - r0) + 48 * nnz + (r1 - r0) + 1)
    cdef char* o = out
    if r1 > r0:
        with nogil:
            pos = format_sv_rows(&coef[0, 0] if m else NULL, m, l, &indptr[0],
                                 &indices[0] if indices.shape[0] else NULL,
                                 &values[0] if values.shape[0] else NULL, r0, r1, o)
    del out[pos:]
    return out


def first_control(const unsigned char[::1] buf):
    """The offset of the first byte of buf that is neither printable ASCII nor C's white space (\\t \\n \\v \\f \\r):
    a model file's characters (llsvm/models/loader.py); -1 when there is none."""
    cdef int64_t i, n = buf.shape[0], at = -1
    cdef unsigned char c
    with nogil:
        for i in range(n):
            c = buf[i]
            if (c < 32 and not (c >= 9 and c <= 13)) or c > 126:
                at = i
                break
    return at
