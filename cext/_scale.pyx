# Feature scaling as LIBSVM's svm-scale does it (llsvm-scale: llsvm/scale.py drives these kernels).
#
# Problem: map each feature i linearly from its range [min_i, max_i] (over every row, a row's absent features
# counting as 0) onto [lower, upper], and optionally the labels from [y_min, y_max] onto [y_lower, y_upper]; write
# the rows as svm-scale writes them, byte for byte: "%.17g " for the label, then for every feature 1..max_index
# whose scaled value is not 0, "%d:%g ", then "\n" (a feature with min_i == max_i is left out). Source: LIBSVM
# 3.37's svm-scale.c (output_target, output), whose arithmetic is copied in its order of operations:
#   v == min -> lower, v == max -> upper, else lower + (upper - lower) * (v - min) / (max - min).
# Method: one pass over a block of parsed CSR rows (the project's text parser, or a binary file's blocks), no
# per-element allocation, nogil.
# - column_stats: per-feature minimum, maximum and count of the stored values, and the labels' extremes (the
#   driver turns a count below the number of rows into a 0 in the range: the rows that lack the feature).
# - zero_texts: an absent feature's scaled value is the same in every row (scale(0)), so its text "i:%g " is
#   formatted once; the texts of all features are concatenated in index order, with prefix offsets, so the absent
#   features between two stored ones of a row are one memcpy (and the count of non-zeros they add one subtraction).
# - scale_text: a row's stored features are scaled and formatted (%g by put_g below, the label's %.17g by
#   snprintf, cached for a repeated label), the gaps copied from the zero texts; rows are written while the
#   output buffer has room for the next row's worst case (the driver grows the buffer for a row larger than it).
# - scale_csr: the same rows as CSR arrays (binary output): the scaled doubles, unrounded.
# %g: printf's "%g" (precision 6) is the correctly rounded 6-significant-digit decimal of the double, shown in
# fixed notation for a decimal exponent X in [-4, 6), else as d.ddddde+XX, trailing zeros removed. put_g computes
# the 6 digits with one correctly rounded multiplication or division by an exact power of ten (10^k, |k| <= 10),
# whose error (at most half an ulp of a number below 10^6, < 6e-11) cannot change the rounding unless the
# product's fraction is within 1e-9 of one half: such a near-tie, and any magnitude outside [1e-5, 1e15) (or 0,
# inf, nan), is handed to C's snprintf. So every byte is printf's (tests/test_scale.py checks against Python's %g
# on random and adversarial values, and against svm-scale's output on every public set).
from libc.math cimport fabs, isfinite
from libc.stdlib cimport strtod, strtoll
from libc.stdint cimport int32_t, int64_t, uint64_t
from libc.stdio cimport snprintf
from libc.string cimport memcpy, memcmp

import numpy as np

from cython.parallel cimport prange

from kernel_types cimport value_t

cdef double POW10[23]
POW10[:] = [1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
            1e17, 1e18, 1e19, 1e20, 1e21, 1e22]

# "00" "01" ... "99": two digits a lookup
cdef char PAIRS[200]
for _i in range(100):
    PAIRS[2 * _i] = 48 + _i // 10
    PAIRS[2 * _i + 1] = 48 + _i % 10

cdef enum:
    PAIR_MAX = 32       # the most bytes a pair "index:%g " takes: 10 digits, ':', 13 for %g ("-1.23457e-308"), ' '
    LABEL_MAX = 32      # the most a label "%.17g " takes ("-1.2345678901234567e-308 ": 25)


cdef inline int put_g(char* out, double v) noexcept nogil:
    """printf("%g", v)'s bytes into out (at most 13 + 1 for the NUL of the snprintf fallback); returns their count."""
    cdef double a = fabs(v), m, fl, frac
    cdef int e, k, nd, i, n
    cdef int32_t digits
    cdef uint64_t bits
    cdef char d[6]
    if not (a >= 1e-5 and a < 1e15):
        return snprintf(out, 16, "%g", v)
    # log10(a) is within 1 of e2 * log10(2) (e2: a's binary exponent; 78913 / 2^18 = log10(2) to 6 digits, exact
    # for |e2| < 1000 under the floor of the arithmetic shift); the loop corrects the estimate
    memcpy(&bits, &a, 8)
    e = ((<int>((bits >> 52) & 0x7ff) - 1023) * 78913) >> 18
    while True:
        k = 5 - e
        m = a * POW10[k] if k >= 0 else a / POW10[-k]
        if m < 100000.0:
            e -= 1
        elif m >= 1000000.0:
            e += 1
        else:
            break
    fl = <double>(<int32_t>m)           # m in [1e5, 1e6): the cast is the floor
    frac = m - fl
    if fabs(frac - 0.5) < 1e-9:         # a tie, or too close to one to decide from the product: printf decides
        return snprintf(out, 16, "%g", v)
    digits = <int32_t>fl + (1 if frac > 0.5 else 0)
    if digits == 1000000:
        digits = 100000
        e += 1
    k = digits // 10000                 # the six digits two at a time (a short chain of multiplications)
    memcpy(d, &PAIRS[2 * k], 2)
    k = digits - k * 10000
    memcpy(d + 2, &PAIRS[2 * (k // 100)], 2)
    memcpy(d + 4, &PAIRS[2 * (k % 100)], 2)
    nd = 6
    while nd > 1 and d[nd - 1] == 48:
        nd -= 1
    n = 0
    if v < 0:
        out[0] = 45
        n = 1
    if e < -4 or e >= 6:                # d.ddddde+XX
        out[n] = d[0]
        n += 1
        if nd > 1:
            out[n] = 46
            n += 1
            for i in range(1, nd):
                out[n] = d[i]
                n += 1
        out[n] = 101
        out[n + 1] = 45 if e < 0 else 43
        if e < 0:
            e = -e
        out[n + 2] = <char>(48 + e // 10)
        out[n + 3] = <char>(48 + e % 10)
        return n + 4
    if e >= 0:                          # integer digits d[0..e], then the fraction's
        for i in range(e + 1):
            out[n] = d[i]
            n += 1
        if nd > e + 1:
            out[n] = 46
            n += 1
            for i in range(e + 1, nd):
                out[n] = d[i]
                n += 1
        return n
    out[n] = 48                         # 0.000ddd
    out[n + 1] = 46
    n += 2
    for i in range(-e - 1):
        out[n] = 48
        n += 1
    for i in range(nd):
        out[n] = d[i]
        n += 1
    return n


cdef inline int put_int(char* out, int64_t x) noexcept nogil:
    """The decimal digits of x >= 0."""
    cdef char tmp[24]
    cdef int n = 0, i
    while True:
        tmp[n] = <char>(48 + x % 10)
        x //= 10
        n += 1
        if x == 0:
            break
    for i in range(n):
        out[i] = tmp[n - 1 - i]
    return n


cdef inline int put_pair(char* out, int64_t index, double v) noexcept nogil:
    """printf("%d:%g ", index, v)'s bytes."""
    cdef int n = put_int(out, index)
    out[n] = 58
    n += 1
    n += put_g(out + n, v)
    out[n] = 32
    return n + 1


cdef inline double scale_value(double v, double lo, double hi, double fmin, double fmax) noexcept nogil:
    """svm-scale's output(): the value v of a feature of range [fmin, fmax] on [lo, hi], in its order."""
    if v == fmin:
        return lo
    if v == fmax:
        return hi
    return lo + (hi - lo) * (v - fmin) / (fmax - fmin)


def format_g(const double[::1] x):
    """The values as printf("%g") writes them, separated by a blank: bytes (for the tests)."""
    cdef int64_t i, n = x.shape[0], pos = 0
    out = bytearray(PAIR_MAX * n + 1)
    cdef char* o = out
    with nogil:
        for i in range(n):
            pos += put_g(o + pos, x[i])
            o[pos] = 32
            pos += 1
    del out[pos:]
    return bytes(out)


cdef void _stats(const int64_t* indptr, const int32_t* indices, const value_t* values, int64_t n_rows,
                 double* fmin, double* fmax, int64_t* count) noexcept nogil:
    cdef int64_t k
    cdef int32_t j
    cdef double v
    for k in range(indptr[0], indptr[n_rows]):
        j = indices[k]
        v = <double>values[k]
        if v < fmin[j]:
            fmin[j] = v
        if v > fmax[j]:
            fmax[j] = v
        count[j] += 1


def column_stats(const int64_t[::1] indptr, const int32_t[::1] indices, values, double[::1] fmin,
                 double[::1] fmax, int64_t[::1] count):
    """Update the per-feature minimum, maximum and count of the stored values of a CSR block (0-based indices, each
    below the arrays' length; the driver sizes them)."""
    cdef int64_t n = indptr.shape[0] - 1
    cdef const double[::1] v64
    cdef const float[::1] v32
    if n <= 0 or indptr[n] == indptr[0]:
        return
    if values.dtype == np.float32:
        v32 = values
        with nogil:
            _stats(&indptr[0], &indices[0], &v32[0], n, &fmin[0], &fmax[0], &count[0])
    else:
        v64 = values
        with nogil:
            _stats(&indptr[0], &indices[0], &v64[0], n, &fmin[0], &fmax[0], &count[0])


def zero_texts(const double[::1] fmin, const double[::1] fmax, double lower, double upper):
    """For the features 1..n (arrays indexed by the feature, 0 unused): the scaled value of an absent feature
    (scale(0); 0 for a feature left out, min == max), the concatenated texts "i:%g " of those whose scaled 0 is not
    0, and prefix arrays over the features: off[i] (bytes before feature i's text) and cnt[i] (such features below
    i), both of length n + 2."""
    cdef int64_t n = fmin.shape[0] - 1, i, pos = 0, c = 0
    cdef double z
    zval = np.zeros(n + 1, dtype=np.float64)
    off = np.empty(n + 2, dtype=np.int64)
    cnt = np.empty(n + 2, dtype=np.int64)
    cdef double[::1] zv = zval
    cdef int64_t[::1] o = off
    cdef int64_t[::1] cn = cnt
    # first the count of texts, for the buffer's size
    with nogil:
        for i in range(1, n + 1):
            if fmin[i] != fmax[i] and scale_value(0.0, lower, upper, fmin[i], fmax[i]) != 0:
                c += 1
    text = bytearray(PAIR_MAX * c + 1)
    cdef char* t = text
    c = 0
    with nogil:
        o[0] = 0
        cn[0] = 0
        for i in range(1, n + 1):
            o[i] = pos
            cn[i] = c
            if fmin[i] == fmax[i]:
                continue
            z = scale_value(0.0, lower, upper, fmin[i], fmax[i])
            if z != 0:
                zv[i] = z
                pos += put_pair(t + pos, i, z)
                c += 1
        o[n + 1] = pos
        cn[n + 1] = c
    del text[pos:]
    return zval, bytes(text), off, cnt


cdef struct Scaler:
    double lower, upper
    bint y_scaling
    double y_lower, y_upper, y_min, y_max
    const double* fmin
    const double* fmax
    int64_t n                   # features 1..n
    const char* ztext
    const int64_t* zoff
    const int64_t* zcnt
    const double* zval
    const int64_t* zidx         # the features whose scaled 0 is not 0, in order (zcnt counts them)


cdef inline double scale_label(const Scaler* s, double y) noexcept nogil:
    """svm-scale's output_target()."""
    if s.y_scaling:
        if y == s.y_min:
            return s.y_lower
        if y == s.y_max:
            return s.y_upper
        return s.y_lower + (s.y_upper - s.y_lower) * (y - s.y_min) / (s.y_max - s.y_min)
    return y


cdef int64_t _text_rows(const Scaler* s, const double* y, const int64_t* indptr, const int32_t* indices,
                        const value_t* values, int64_t r0, int64_t r1, char* out, int64_t cap, int64_t* rows_done,
                        int64_t* new_nnz) noexcept nogil:
    cdef int64_t r, k, f, nxt, pos = 0, worst, nz = 0
    cdef int64_t zall = s.zoff[s.n + 1] - s.zoff[1]
    cdef double v, last = 0.0
    cdef char label[LABEL_MAX]
    cdef int label_len = -1
    cdef double lab
    r = r0
    while r < r1:
        worst = LABEL_MAX + PAIR_MAX * (indptr[r + 1] - indptr[r]) + zall + 1
        if pos + worst > cap:
            break
        lab = scale_label(s, y[r])
        if label_len < 0 or memcmp(&lab, &last, sizeof(double)) != 0:
            label_len = snprintf(label, LABEL_MAX, "%.17g ", lab)
            last = lab
        memcpy(out + pos, label, label_len)
        pos += label_len
        nxt = 1
        for k in range(indptr[r], indptr[r + 1]):
            f = <int64_t>indices[k] + 1
            if f > nxt:                 # the absent features nxt..f-1
                memcpy(out + pos, s.ztext + s.zoff[nxt], s.zoff[f] - s.zoff[nxt])
                pos += s.zoff[f] - s.zoff[nxt]
                nz += s.zcnt[f] - s.zcnt[nxt]
            nxt = f + 1
            if s.fmin[f] == s.fmax[f]:
                continue
            v = scale_value(<double>values[k], s.lower, s.upper, s.fmin[f], s.fmax[f])
            if v != 0:
                pos += put_pair(out + pos, f, v)
                nz += 1
        if nxt <= s.n:
            memcpy(out + pos, s.ztext + s.zoff[nxt], s.zoff[s.n + 1] - s.zoff[nxt])
            pos += s.zoff[s.n + 1] - s.zoff[nxt]
            nz += s.zcnt[s.n + 1] - s.zcnt[nxt]
        out[pos] = 10
        pos += 1
        r += 1
    rows_done[0] = r - r0
    new_nnz[0] += nz
    return pos


cdef Scaler _scaler(double lower, double upper, bint y_scaling, double y_lower, double y_upper, double y_min,
                    double y_max, const double[::1] fmin, const double[::1] fmax, const unsigned char[::1] ztext,
                    const int64_t[::1] zoff, const int64_t[::1] zcnt, const double[::1] zval,
                    const int64_t[::1] zidx):
    cdef Scaler s
    s.lower, s.upper = lower, upper
    s.y_scaling, s.y_lower, s.y_upper, s.y_min, s.y_max = y_scaling, y_lower, y_upper, y_min, y_max
    s.n = fmin.shape[0] - 1
    if fmax.shape[0] != s.n + 1 or zoff.shape[0] != s.n + 2 or zcnt.shape[0] != s.n + 2 or zval.shape[0] != s.n + 1 \
            or zidx.shape[0] != zcnt[s.n + 1] + 1:
        raise ValueError("the feature arrays disagree in length")
    s.fmin, s.fmax = &fmin[0], &fmax[0]
    s.ztext = <const char*>&ztext[0] if ztext.shape[0] else NULL
    s.zoff, s.zcnt, s.zval, s.zidx = &zoff[0], &zcnt[0], &zval[0], &zidx[0]
    return s


cdef class Scaling:
    """The scaling of a run: bounds, feature ranges (arrays indexed by the 1-based feature, length n + 1) and the
    absent features' texts (zero_texts). The driver checks that every block's indices are below n."""
    cdef Scaler s
    cdef object keep            # the arrays the Scaler points into

    def __init__(self, double lower, double upper, bint y_scaling, double y_lower, double y_upper, double y_min,
                 double y_max, fmin, fmax, ztext, zoff, zcnt, zval):
        fmin = np.ascontiguousarray(fmin, dtype=np.float64)
        fmax = np.ascontiguousarray(fmax, dtype=np.float64)
        ztext = np.frombuffer(ztext, dtype=np.uint8) if len(ztext) else np.zeros(1, dtype=np.uint8)
        zidx = np.append(np.flatnonzero(zval), 0).astype(np.int64)      # one more: never an empty array
        self.keep = (fmin, fmax, ztext, zoff, zcnt, zval, zidx)
        self.s = _scaler(lower, upper, y_scaling, y_lower, y_upper, y_min, y_max, fmin, fmax, ztext, zoff, zcnt,
                         zval, zidx)

    def text(self, const double[::1] y, const int64_t[::1] indptr, const int32_t[::1] indices, values, int64_t r0,
             unsigned char[::1] out, int threads=1):
        """Write rows r0.. of the block as svm-scale's text into out, as many as surely fit: (rows written, bytes of
        the first part, bytes of the second part), the second part at out[len(out) // 2:] (threads=2: the rows are
        cut in two runs, each formatted by a thread into its half of out, each half fitting its rows' worst case;
        threads=1, or a row too large for a half: one part, 0 bytes in the second). 0 rows: the next row may need
        more than out holds (row_bound tells how much)."""
        cdef int64_t r1 = y.shape[0], cap = out.shape[0], half = cap // 2
        cdef int64_t done[2]
        cdef int64_t pos[2]
        cdef int64_t nz[2]
        cdef int64_t start[2]
        cdef int64_t stop[2]
        cdef int64_t size[2]
        cdef int64_t r, used, zall = self.s.zoff[self.s.n + 1] - self.s.zoff[1]
        cdef int t, parts = 1
        cdef const double[::1] v64
        cdef const float[::1] v32
        cdef bint f32 = values.dtype == np.float32
        cdef char* o = <char*>&out[0]
        cdef const int32_t* ix = &indices[0] if indices.shape[0] else NULL
        if r0 >= r1:
            return 0, 0, 0, 0
        if f32:
            v32 = values
        else:
            v64 = values
        start[0], stop[0], size[0] = r0, r1, cap
        done[0] = done[1] = pos[0] = pos[1] = nz[0] = nz[1] = 0
        if threads > 1:
            # two runs of rows whose worst cases fit a half each (a row too large for a half: one thread)
            r, used = r0, 0
            while r < r1 and used + LABEL_MAX + PAIR_MAX * (indptr[r + 1] - indptr[r]) + zall + 1 <= half:
                used += LABEL_MAX + PAIR_MAX * (indptr[r + 1] - indptr[r]) + zall + 1
                r += 1
            if r == r1 and r1 - r0 >= 2:        # the rest fits a half: cut it in the middle
                r = r0 + (r1 - r0) // 2
            if r > r0 and r < r1:
                parts = 2
                start[0], stop[0], size[0] = r0, r, half
                start[1], stop[1], size[1] = r, r1, cap - half
        with nogil:
            for t in prange(parts, num_threads=parts, schedule="static", chunksize=1):
                if f32:
                    pos[t] = _text_rows(&self.s, &y[0], &indptr[0], ix, &v32[0] if v32.shape[0] else NULL,
                                        start[t], stop[t], o + t * half, size[t], &done[t], &nz[t])
                else:
                    pos[t] = _text_rows(&self.s, &y[0], &indptr[0], ix, &v64[0] if v64.shape[0] else NULL,
                                        start[t], stop[t], o + t * half, size[t], &done[t], &nz[t])
        if parts == 2 and done[0] < stop[0] - start[0]:     # cannot happen: the first run fits its half
            done[1] = pos[1] = nz[1] = 0
        return done[0] + done[1], pos[0], pos[1], nz[0] + nz[1]

    def row_bound(self, int64_t nnz):
        """The most bytes a row of nnz stored features can take."""
        return LABEL_MAX + PAIR_MAX * nnz + (self.s.zoff[self.s.n + 1] - self.s.zoff[1]) + 1

    def csr(self, const double[::1] y, const int64_t[::1] indptr, const int32_t[::1] indices, values):
        """The block's rows scaled, as CSR arrays (y, indptr, indices 0-based, values float64): the rows of the text
        output with the unrounded doubles. The labels are scaled with -y."""
        cdef int64_t n = y.shape[0], r, k, f, nxt, t, total = 0
        cdef const double[::1] v64
        cdef const float[::1] v32
        cdef bint f32 = values.dtype == np.float32
        cdef const int64_t* ip = &indptr[0]
        cdef const int32_t* ix = &indices[0] if indices.shape[0] else NULL
        if f32:
            v32 = values
        else:
            v64 = values
        counts = np.empty(n + 1, dtype=np.int64)
        cdef int64_t[::1] c = counts
        with nogil:
            c[0] = 0
            for r in range(n):
                if f32:
                    total += _csr_row(&self.s, ip, ix, &v32[0] if v32.shape[0] else NULL, r, NULL, NULL)
                else:
                    total += _csr_row(&self.s, ip, ix, &v64[0] if v64.shape[0] else NULL, r, NULL, NULL)
                c[r + 1] = total
        out_y = np.empty(n, dtype=np.float64)
        out_i = np.empty(total, dtype=np.int32)
        out_v = np.empty(total, dtype=np.float64)
        cdef double[::1] oy = out_y
        cdef int32_t[::1] oi = out_i
        cdef double[::1] ov = out_v
        cdef int32_t* pi = &oi[0] if total else NULL
        cdef double* pv = &ov[0] if total else NULL
        with nogil:
            for r in range(n):
                oy[r] = scale_label(&self.s, y[r])
                if f32:
                    _csr_row(&self.s, ip, ix, &v32[0] if v32.shape[0] else NULL, r, pi + c[r], pv + c[r])
                else:
                    _csr_row(&self.s, ip, ix, &v64[0] if v64.shape[0] else NULL, r, pi + c[r], pv + c[r])
        return out_y, counts, out_i, out_v


cdef int64_t _csr_row(const Scaler* s, const int64_t* indptr, const int32_t* indices, const value_t* values,
                      int64_t r, int32_t* oi, double* ov) noexcept nogil:
    """Row r's scaled non-zeros: counted, and written to oi/ov unless they are NULL."""
    cdef int64_t k, f, nxt = 1, t, m = 0
    cdef double v
    for k in range(indptr[r], indptr[r + 1]):
        f = <int64_t>indices[k] + 1
        if f > nxt:
            m += _zero_run(s, nxt, f, oi + m if oi != NULL else NULL, ov + m if ov != NULL else NULL)
        nxt = f + 1
        if s.fmin[f] == s.fmax[f]:
            continue
        v = scale_value(<double>values[k], s.lower, s.upper, s.fmin[f], s.fmax[f])
        if v != 0:
            if oi != NULL:
                oi[m] = <int32_t>(f - 1)
                ov[m] = v
            m += 1
    if nxt <= s.n:
        m += _zero_run(s, nxt, s.n + 1, oi + m if oi != NULL else NULL, ov + m if ov != NULL else NULL)
    return m


cdef inline int64_t _zero_run(const Scaler* s, int64_t a, int64_t b, int32_t* oi, double* ov) noexcept nogil:
    """The absent features a..b-1 whose scaled 0 is not 0: counted, and written unless oi is NULL."""
    cdef int64_t m = s.zcnt[b] - s.zcnt[a], t, f
    if oi == NULL:
        return m
    for t in range(m):
        f = s.zidx[s.zcnt[a] + t]
        oi[t] = <int32_t>(f - 1)
        ov[t] = s.zval[f]
    return m


def range_lines(const double[::1] fmin, const double[::1] fmax):
    """The feature lines of svm-scale's range file: "%d %.17g %.17g\\n" for each feature i in 1..n whose
    min != max (arrays indexed by the feature, 0 unused)."""
    cdef int64_t n = fmin.shape[0] - 1, i, pos = 0
    out = bytearray(64 * n + 1)
    cdef char* o = out
    with nogil:
        for i in range(1, n + 1):
            if fmin[i] != fmax[i]:
                pos += snprintf(o + pos, 64, "%lld %.17g %.17g\n", <long long>i, fmin[i], fmax[i])
    del out[pos:]
    return bytes(out)


cdef inline bint _blank(unsigned char c) noexcept nogil:
    return c == 32 or c == 9 or c == 13 or c == 11 or c == 12


cdef inline bint _ends(unsigned char c) noexcept nogil:
    return _blank(c) or c == 10 or c == 0


def parse_range_table(const unsigned char[::1] text):
    """The feature lines "index min max" of svm-scale's range file, `text` ending with a NUL byte: (index int64,
    min, max) with one entry per non-blank line (strtoll and strtod, as svm-scale's fscanf reads them), or the
    0-based number of the first line that is not an integer and two finite numbers (the caller names what is
    wrong in it)."""
    cdef int64_t n = text.shape[0], i, lines = 1, row = 0, line = 0
    cdef const char* p
    cdef char* q
    cdef double a, b
    cdef long long idx
    cdef int bad = 0
    if n == 0 or text[n - 1] != 0:
        raise ValueError("the text must end with a NUL byte")
    for i in range(n):
        lines += text[i] == 10
    index = np.empty(lines, dtype=np.int64)
    fmin = np.empty(lines, dtype=np.float64)
    fmax = np.empty(lines, dtype=np.float64)
    cdef int64_t[::1] ix = index
    cdef double[::1] lo = fmin
    cdef double[::1] hi = fmax
    p = <const char*>&text[0]
    with nogil:
        while p[0] != 0:
            while _blank(p[0]):
                p += 1
            if p[0] == 10:
                p += 1
                line += 1
                continue
            if p[0] == 0:
                break
            idx = strtoll(p, &q, 10)
            if q == p or not _blank(q[0]):
                bad = 1
                break
            a = strtod(q, &q)
            if not _blank(q[0]):
                bad = 1
                break
            b = strtod(q, &q)
            if not _ends(q[0]) or not isfinite(a) or not isfinite(b):
                bad = 1
                break
            p = q
            while _blank(p[0]):
                p += 1
            if p[0] != 10 and p[0] != 0:
                bad = 1
                break
            ix[row], lo[row], hi[row] = idx, a, b
            row += 1
    if bad:
        return int(line)
    return index[:row], fmin[:row], fmax[:row]
