# Platt's sigmoid fit of -b 1 (header-only, inline, nogil): LIBSVM 3.x's sigmoid_train, which cext/_kpredict.pyx's
# sigmoid_train wraps for Python and cext/_smo.pyx's one-vs-one run calls for every class pair.
#
# P(y = 1 | f) = 1 / (1 + exp(A f + B)) fitted to decision values f with labels y (> 0: positive; Lin, Lin, Weng,
# "A note on Platt's probabilistic outputs for support vector machines", 2007): targets (n+ + 1)/(n+ + 2) and
# 1/(n- + 2), Newton's method on H + 1e-12 I with a backtracking line search (sufficient decrease 1e-4, steps down
# to 1e-10), stopping when both gradient entries are below 1e-5, at most 100 iterations; LIBSVM's arithmetic in its
# order (libm's exp and log, sums row after row), so the result is LIBSVM's bit for bit on the same values.
from libc.math cimport exp, fabs, log
from libc.stdint cimport int64_t


cdef inline double sigmoid_loss(const double* dec, const double* t, int64_t l, double A, double B) noexcept nogil:
    """Platt's regularised cross-entropy at (A, B), summed in row order as LIBSVM's sigmoid_train sums it."""
    cdef int64_t i
    cdef double fApB, f = 0.0
    for i in range(l):
        fApB = dec[i] * A + B
        if fApB >= 0:
            f += t[i] * fApB + log(1 + exp(-fApB))
        else:
            f += (t[i] - 1) * fApB + log(1 + exp(fApB))
    return f


cdef inline int sigmoid_fit(const double* d, const signed char* y, int64_t l, double* t, double* A_out,
                            double* B_out) noexcept nogil:
    """(A, B) into A_out, B_out for decision values d[0..l-1] with labels y (> 0: positive); t: l doubles of
    scratch (the targets). Returns 0 converged, 1 the line search failed, 2 the iteration limit (LIBSVM's two
    messages)."""
    cdef int64_t i
    cdef double prior1 = 0, prior0 = 0, A, B, fval, fApB, p, q, d1, d2, h11, h22, h21, g1, g2, det, dA, dB, gd
    cdef double stepsize, newA, newB, newf, hi, lo
    cdef int it, status = 2
    for i in range(l):
        if y[i] > 0:
            prior1 += 1
        else:
            prior0 += 1
    hi = (prior1 + 1.0) / (prior1 + 2.0)
    lo = 1 / (prior0 + 2.0)
    for i in range(l):
        t[i] = hi if y[i] > 0 else lo
    A = 0.0
    B = log((prior0 + 1.0) / (prior1 + 1.0))
    fval = sigmoid_loss(d, t, l, A, B)
    for it in range(100):
        h11 = 1e-12
        h22 = 1e-12
        h21 = 0.0
        g1 = 0.0
        g2 = 0.0
        for i in range(l):
            fApB = d[i] * A + B
            if fApB >= 0:
                p = exp(-fApB) / (1.0 + exp(-fApB))
                q = 1.0 / (1.0 + exp(-fApB))
            else:
                p = 1.0 / (1.0 + exp(fApB))
                q = exp(fApB) / (1.0 + exp(fApB))
            d2 = p * q
            h11 += d[i] * d[i] * d2
            h22 += d2
            h21 += d[i] * d2
            d1 = t[i] - p
            g1 += d[i] * d1
            g2 += d1
        if fabs(g1) < 1e-5 and fabs(g2) < 1e-5:
            status = 0
            break
        det = h11 * h22 - h21 * h21
        dA = -(h22 * g1 - h21 * g2) / det
        dB = -(-h21 * g1 + h11 * g2) / det
        gd = g1 * dA + g2 * dB
        stepsize = 1
        while stepsize >= 1e-10:
            newA = A + stepsize * dA
            newB = B + stepsize * dB
            newf = sigmoid_loss(d, t, l, newA, newB)
            if newf < fval + 0.0001 * stepsize * gd:
                A = newA
                B = newB
                fval = newf
                break
            stepsize = stepsize / 2.0
        if stepsize < 1e-10:
            status = 1
            break
    A_out[0] = A
    B_out[0] = B
    return status
