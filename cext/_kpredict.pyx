# Prediction with a LIBSVM kernel model (llsvm/svm_model.py): decision values and probability estimates, nogil.
#
# What it computes, for every test row x (a row view X) against the model's support vectors SV (a row view over
# the SV CSR, float64), following LIBSVM 3.x svm.cpp (svm_predict_values, sigmoid_predict, multiclass_probability):
# - kernel values K[b, i] = k(x_b, SV_i) for a block of B test rows at a time (a B x l slab of doubles the caller
#   allocates, B chosen to keep it at a few MB), by kernel.pxd's kernel_function: LIBSVM's own Kernel::k_function,
#   the same operations in the same order (RBF from the term-by-term squared distance, not from norms; the
#   precomputed kernel, kernel_type 4: x_b's value at the index SV_i's serial names, the SV rows holding 0:serial
#   alone, as LIBSVM's k_function reads x[(int)(y->value)]);
# - classification (nr_class = k >= 2, SVs grouped by class, start[c] = nSV[0] + ... + nSV[c-1]): for each pair
#   (a, b), a < b, in the order a = 0..k-1, b = a+1..k-1 (p = 0, 1, ...):
#       dec[p] = sum_{i < nSV[a]} sv_coef[b-1][start[a]+i] K[start[a]+i]
#              + sum_{j < nSV[b]} sv_coef[a][start[b]+j] K[start[b]+j]  - rho[p]
#   one accumulator, class a's terms first, each class in SV order: the very sum svm_predict_values forms, so the
#   values equal LIBSVM's bit for bit when the kernel values do (the votes are counted in llsvm/svm_model.py);
# - one-class and SVR: dec = sum_i sv_coef[0][i] K[i] - rho[0], in SV order;
# - svc_probability: pairwise r_ab = min(max(sigmoid_predict(dec[p], probA[p], probB[p]), 1e-7), 1 - 1e-7), then
#   for k = 2 (r_01, r_10), else the pairwise coupling of Wu, Lin & Weng (JMLR 5, 2004, method 2) as LIBSVM's
#   multiclass_probability iterates it: at most max(100, k) iterations, stopping when max_t |Qp_t - pQp| < 0.005/k;
# - sigmoid_train (training's side of sigmoid_predict, for -b 1): Platt's A, B minimising the cross-entropy of
#   1 / (1 + exp(A f + B)) against the regularised targets, Newton on H + 1e-12 I with backtracking (sufficient
#   decrease 1e-4, steps to 1e-10), stopping at |gradient| < 1e-5 or after 100 iterations (Lin, Lin & Weng 2007),
#   LIBSVM's sigmoid_train operation for operation (libm's exp and log, sums in row order): its bits.
# Every buffer is allocated by the def wrappers before nogil; the loops never allocate, print or raise.
from libc.math cimport exp, fabs, log
from libc.stdint cimport int64_t

import numpy as np

from kernel_types cimport value_t
from rowview cimport RowView
from kernel cimport KernelParams, kernel_function, KERNEL_LINEAR, KERNEL_PRECOMPUTED
from llsvm._ext._view cimport Rows
from llsvm._ext._stop cimport stop_requested, check_stop
from platt cimport sigmoid_fit

BLOCK_BYTES = 4 << 20       # the kernel slab of one block of test rows


cdef void _kernel_rows(const KernelParams* p, const RowView* x, int64_t r0, int64_t nb, const RowView* sv,
                       double* K, value_t* kind) noexcept nogil:
    """K[b, i] = k(x_{r0+b}, SV_i), b < nb, i < l: each SV read once per block, the block's rows stay in cache."""
    cdef int64_t i, b, l = sv.n_rows
    for i in range(l):
        for b in range(nb):
            K[b * l + i] = kernel_function(p, x, r0 + b, sv, i, kind, <double*>NULL)


cdef void _decisions(const double* K, int64_t nb, int64_t l, int64_t k, const int64_t* start, const double* coef,
                     const double* rho, double* dec, int64_t n_dec) noexcept nogil:
    """dec[b, p] for the block from its kernel values (see the opening comment); coef is (k-1) x l row-major."""
    cdef int64_t b, a, c, t, p
    cdef const double* kv
    cdef const double* c1
    cdef const double* c2
    cdef double s
    for b in range(nb):
        kv = K + b * l
        if start == NULL:                       # one-class, SVR
            s = 0.0
            for t in range(l):
                s += coef[t] * kv[t]
            dec[b * n_dec] = s - rho[0]
            continue
        p = 0
        for a in range(k):
            for c in range(a + 1, k):
                c1 = coef + (c - 1) * l
                c2 = coef + a * l
                s = 0.0
                for t in range(start[a], start[a + 1]):
                    s += c1[t] * kv[t]
                for t in range(start[c], start[c + 1]):
                    s += c2[t] * kv[t]
                dec[b * n_dec + p] = s - rho[p]
                p += 1


def decision_values(Rows X not None, Rows SV not None, int kernel_type, int degree, double gamma, double coef0,
                    const double[:, ::1] sv_coef, const double[::1] rho, nSV, double[:, ::1] dec, block_rows=None):
    """dec[r, :] for every row r of X: k(k-1)/2 pairwise values (classification, nSV given: the SV count of each
    class, k = len(nSV)) or one value (nSV None: one-class, SVR). SV: float64 values. block_rows: test rows per
    kernel block (default: what keeps the B x l slab under BLOCK_BYTES). kernel_type 4 (precomputed): X's rows are
    read zero-based (index s holds K(x, x_s)) and each SV row holds 0:serial; degree, gamma, coef0 are unused."""
    cdef KernelParams p
    cdef int64_t n = X.v.n_rows, l = SV.v.n_rows, k, nb, r0, n_dec = dec.shape[1], B, c
    cdef int64_t[::1] start
    cdef int64_t* sp = NULL
    if X.v.bias >= 0 or SV.v.bias >= 0:
        raise ValueError("kernel values take views without a bias coordinate")
    if SV.f32:
        raise ValueError("the support vectors must be float64")
    if kernel_type < KERNEL_LINEAR or kernel_type > KERNEL_PRECOMPUTED:
        raise ValueError(f"unknown kernel type {kernel_type}")
    p.kernel_type = kernel_type
    p.degree = degree
    p.gamma = gamma
    p.coef0 = coef0
    if nSV is None:
        k = 2
        if sv_coef.shape[0] != 1 or n_dec != 1 or rho.shape[0] < 1:
            raise ValueError("one-class and SVR models have one row of sv_coef, one rho, one decision value")
    else:
        counts = np.asarray(nSV, dtype=np.int64)
        k = counts.shape[0]
        start_arr = np.zeros(k + 1, dtype=np.int64)
        np.cumsum(counts, out=start_arr[1:])
        if k < 1 or (counts < 0).any() or start_arr[k] != l:
            raise ValueError(f"nSV must be k >= 1 counts >= 0 summing to the {l} support vectors")
        if sv_coef.shape[0] != k - 1 or n_dec != k * (k - 1) // 2 or rho.shape[0] != n_dec:
            raise ValueError(f"{k} classes: sv_coef has {k - 1} rows, rho and a row of dec {k * (k - 1) // 2}")
        start = start_arr
        sp = &start[0]
    if sv_coef.shape[1] != l:
        raise ValueError(f"sv_coef has {sv_coef.shape[1]} columns for {l} support vectors")
    if dec.shape[0] != n:
        raise ValueError(f"dec has {dec.shape[0]} rows for {n} test rows")
    if n == 0 or n_dec == 0:
        return
    if l == 0:
        # no support vector: every sum is empty, 0 - rho as svm_predict_values computes it (+0 for rho 0, not -0)
        for c in range(n_dec):
            dec[:, c] = 0.0 - rho[c]
        return
    B = (BLOCK_BYTES // (8 * l)) if block_rows is None else block_rows
    B = max(1, min(B, n))
    kbuf = np.empty(B * l, dtype=np.float64)
    cdef double[::1] K = kbuf
    cdef const double* coef = &sv_coef[0, 0] if sv_coef.shape[0] > 0 else NULL
    with nogil:
        r0 = 0
        while r0 < n:
            if stop_requested():        # once a block of B rows x the l SVs, ~4 MB of kernel values (_stop.pyx)
                break
            nb = min(B, n - r0)
            if X.f32:
                _kernel_rows(&p, &X.v, r0, nb, &SV.v, &K[0], <float*>NULL)
            else:
                _kernel_rows(&p, &X.v, r0, nb, &SV.v, &K[0], <double*>NULL)
            _decisions(&K[0], nb, l, k, sp, coef, &rho[0], &dec[r0, 0], n_dec)
            r0 += nb
    check_stop()


cdef inline double _sigmoid_predict(double dec, double A, double B) noexcept nogil:
    cdef double fApB = dec * A + B
    # 1-p is used later: the form that avoids cancellation, as LIBSVM
    if fApB >= 0:
        return exp(-fApB) / (1.0 + exp(-fApB))
    return 1.0 / (1 + exp(fApB))


cdef int _coupling(int64_t k, const double* r, double* pr, double* Q, double* Qp) noexcept nogil:
    """LIBSVM's multiclass_probability: pr from the k x k pairwise r (row-major); returns the iterations used
    (max(100, k) when it stopped at the limit)."""
    cdef int64_t t, j, it, max_iter = 100 if k < 100 else k
    cdef double pQp, eps = 0.005 / k, err, max_error, diff
    for t in range(k):
        pr[t] = 1.0 / k
        Q[t * k + t] = 0
        for j in range(t):
            Q[t * k + t] += r[j * k + t] * r[j * k + t]
            Q[t * k + j] = Q[j * k + t]
        for j in range(t + 1, k):
            Q[t * k + t] += r[j * k + t] * r[j * k + t]
            Q[t * k + j] = -r[j * k + t] * r[t * k + j]
    it = 0
    while it < max_iter:
        pQp = 0
        for t in range(k):
            Qp[t] = 0
            for j in range(k):
                Qp[t] += Q[t * k + j] * pr[j]
            pQp += pr[t] * Qp[t]
        max_error = 0
        for t in range(k):
            err = fabs(Qp[t] - pQp)
            if err > max_error:
                max_error = err
        if max_error < eps:
            break
        for t in range(k):
            diff = (-Qp[t] + pQp) / Q[t * k + t]
            pr[t] += diff
            pQp = (pQp + diff * (diff * Q[t * k + t] + 2 * Qp[t])) / (1 + diff) / (1 + diff)
            for j in range(k):
                Qp[j] = (Qp[j] + diff * Q[t * k + j]) / (1 + diff)
                pr[j] /= (1 + diff)
        it += 1
    return <int>it


def svc_probability(const double[:, ::1] dec, const double[::1] probA, const double[::1] probB,
                    double[:, ::1] prob):
    """prob[r, :] (k classes) from the pairwise decision values dec[r, :] (k(k-1)/2 each) of a C-SVC / nu-SVC
    model with probA, probB: LIBSVM's svm_predict_probability. Returns how many rows hit the iteration limit."""
    cdef int64_t n = dec.shape[0], k = prob.shape[1], n_dec = dec.shape[1], row, a, c, q
    cdef double pab, min_prob = 1e-7
    cdef int64_t limited = 0, max_iter = 100 if k < 100 else k
    if prob.shape[0] != n or k < 2 or n_dec != k * (k - 1) // 2 or probA.shape[0] != n_dec \
            or probB.shape[0] != n_dec:
        raise ValueError(f"{k} classes: dec, probA and probB need {k * (k - 1) // 2} values, prob {n} rows")
    if n == 0:
        return 0
    scratch = np.zeros(3 * k * k + k, dtype=np.float64)
    cdef double[::1] s = scratch
    cdef double* r = &s[0]
    cdef double* Q = &s[k * k]
    cdef double* Qp = &s[2 * k * k]
    with nogil:
        for row in range(n):
            q = 0
            for a in range(k):
                for c in range(a + 1, k):
                    pab = _sigmoid_predict(dec[row, q], probA[q], probB[q])
                    pab = min(max(pab, min_prob), 1 - min_prob)
                    r[a * k + c] = pab
                    r[c * k + a] = 1 - pab
                    q += 1
            if k == 2:
                prob[row, 0] = r[1]
                prob[row, 1] = r[k]
            elif _coupling(k, r, &prob[row, 0], Q, Qp) >= max_iter:
                limited += 1
    return limited


def sigmoid_train(const double[::1] dec not None, const double[::1] labels not None):
    """(A, B, status) of Platt's sigmoid P(y = 1 | f) = 1 / (1 + exp(A f + B)) fitted to decision values dec with
    labels (> 0: positive), LIBSVM's sigmoid_train (Lin, Lin, Weng, "A note on Platt's probabilistic outputs for
    support vector machines", 2007): targets (n+ + 1)/(n+ + 2) and 1/(n- + 2), Newton's method on H + 1e-12 I with
    a backtracking line search (sufficient decrease 1e-4, steps down to 1e-10), stopping when both gradient
    entries are below 1e-5, at most 100 iterations; LIBSVM's arithmetic in its order (libm's exp and log, sums
    row after row), so the result is LIBSVM's bit for bit on the same decision values. status: 0 converged,
    1 the line search failed, 2 the iteration limit (the driver prints LIBSVM's message)."""
    cdef int64_t l = dec.shape[0]
    if labels.shape[0] != l:
        raise ValueError(f"dec has {l} values, labels {labels.shape[0]}")
    y_buf = np.where(np.asarray(labels) > 0, 1, -1).astype(np.int8).reshape(-1)
    t_buf = np.empty(max(l, 1), dtype=np.float64)
    y_buf = y_buf if l else np.ones(1, np.int8)
    cdef const signed char[::1] y = y_buf
    cdef double[::1] t = t_buf
    cdef double A = 0.0, B = 0.0
    cdef int status
    with nogil:
        status = sigmoid_fit(&dec[0] if l else <const double*>NULL, &y[0], l, &t[0], &A, &B)
    return A, B, status
