"""NumPy twin of the generic SMO that issue 15 puts in cext/ (LIBSVM's Solver, without shrinking), for tiny
problems: the reference the C kernel is tested against, and itself tested against libsvm-official
(tests/test_smo_twin.py).

Problem (Chang and Lin, "LIBSVM: a library for support vector machines", ACM TIST 2011, section 4.1):
    min_a  f(a) = 1/2 a'Qa + p'a   subject to  y'a = Delta,  0 <= a_i <= C_i,   y_i in {-1, +1},
Q_ij = y_i y_j K(x_i, x_j). C-SVC: p = -1, a = 0 at the start (feasible: Delta = 0), C_i = C times the weight of
y_i's class.

Iteration: the gradient G = Qa + p is kept up to date. The working pair is chosen by the second-order rule of Fan,
Chen and Lin (JMLR 2005, WSS 2):
    i = argmax { -y_t G_t : t in I_up },          I_up  = {t : y_t = +1, a_t < C_t} u {t : y_t = -1, a_t > 0},
    j = argmin { -b_t^2 / a_t : t in I_low, b_t > 0 },  I_low = {t : y_t = +1, a_t > 0} u {t : y_t = -1, a_t < C_t},
with b_t = m(a) + y_t G_t (m(a) = -y_i G_i) and a_t = K_ii + K_tt - 2 K_it (TAU = 1e-12 when it is not positive);
ties go to the later index, as in LIBSVM's loops (>= and <=). The pair's sub-problem is solved exactly and clipped
to the box (LIBSVM's two cases, y_i != y_j and y_i == y_j), and G moves by the two columns. Stop when
m(a) - M(a) < eps, M(a) = min { -y_t G_t : t in I_low } (LIBSVM's Gmax + Gmax2 < eps), or when I_low has no
candidate. rho is LIBSVM's: the mean of y_t G_t over the free a_t, else the middle of its bounds. Q is held in
float32, as LIBSVM's cache holds it (Qfloat); G and a in float64.
"""
import math

import numpy as np

TAU = 1e-12


def kernel_matrix(X, Z, kernel_type=2, gamma=None, coef0=0.0, degree=3):
    """LIBSVM's kernels on dense rows: 0 linear x.z, 1 (gamma x.z + coef0)^degree, 2 exp(-gamma |x - z|^2),
    3 tanh(gamma x.z + coef0). gamma defaults to 1/n_features."""
    X = np.asarray(X, dtype=np.float64)
    Z = np.asarray(Z, dtype=np.float64)
    if gamma is None:
        gamma = 1.0 / X.shape[1]
    # dot products and squared norms summed feature by feature, in index order, as LIBSVM's dot() does (a BLAS
    # product sums in another order, and the last bit of a kernel value can change which pair SMO picks)
    dot = np.zeros((X.shape[0], Z.shape[0]))
    for k in range(X.shape[1]):
        dot += X[:, k][:, None] * Z[:, k][None, :]
    if kernel_type == 0:
        return dot
    if kernel_type == 1:
        return _powi(gamma * dot + coef0, degree)
    if kernel_type == 2:
        xx = np.zeros(X.shape[0])
        zz = np.zeros(Z.shape[0])
        for k in range(X.shape[1]):
            xx += X[:, k] * X[:, k]
            zz += Z[:, k] * Z[:, k]
        sq = xx[:, None] + zz[None, :] - 2.0 * dot
        return np.exp(-gamma * sq)
    if kernel_type == 3:
        # the C library's tanh, as LIBSVM's (NumPy's own may differ in the last bit)
        return np.vectorize(math.tanh, otypes=[np.float64])(gamma * dot + coef0)
    raise ValueError(f"kernel_type {kernel_type}")


def _powi(base, times):
    """base^times by repeated squaring, as LIBSVM's powi (the last bit can differ from pow)."""
    base = np.array(base, dtype=np.float64)
    ret = np.ones_like(base)
    t = int(times)
    while t > 0:
        if t % 2 == 1:
            ret = ret * base
        base = base * base
        t //= 2
    return ret


def solve(K, y, Cp, Cn, eps=1e-3, p=None, max_iter=None):
    """LIBSVM's Solver on the kernel matrix K (l x l) for labels y (+1/-1), C_i = Cp or Cn. Returns a dict with
    alpha, G, rho, obj (f at the solution), n_iter, and the final violation m(a) - M(a)."""
    y = np.asarray(y, dtype=np.int64)
    l = y.shape[0]
    Q = (y[:, None] * y[None, :] * K).astype(np.float32)
    QD = np.diag(K).astype(np.float64)            # LIBSVM keeps the diagonal in double
    C = np.where(y > 0, float(Cp), float(Cn))
    p = -np.ones(l) if p is None else np.asarray(p, dtype=np.float64)
    alpha = np.zeros(l)
    G = p.copy()
    max_iter = max(10_000_000, 100 * l) if max_iter is None else max_iter
    n_iter = 0
    gap = np.inf
    while n_iter < max_iter:
        i, j, gap = _select(Q, QD, G, alpha, y, C, eps)
        if j < 0:
            break
        n_iter += 1
        old_i, old_j = alpha[i], alpha[j]
        _update_pair(Q, QD, G, alpha, y, C, i, j)
        G += Q[:, i].astype(np.float64) * (alpha[i] - old_i) + Q[:, j].astype(np.float64) * (alpha[j] - old_j)
    obj = 0.5 * float(alpha @ (G + p))
    return {"alpha": alpha, "G": G, "rho": _rho(G, alpha, y, C), "obj": obj, "n_iter": n_iter, "gap": gap}


def _select(Q, QD, G, alpha, y, C, eps):
    l = y.shape[0]
    Gmax, i = -np.inf, -1
    for t in range(l):
        if y[t] > 0:
            if alpha[t] < C[t] and -G[t] >= Gmax:
                Gmax, i = -G[t], t
        elif alpha[t] > 0 and G[t] >= Gmax:
            Gmax, i = G[t], t
    Gmax2, j, best = -np.inf, -1, np.inf
    for t in range(l):
        if y[t] > 0:
            if alpha[t] > 0:
                diff = Gmax + G[t]
                Gmax2 = max(Gmax2, G[t])
            else:
                continue
        else:
            if alpha[t] < C[t]:
                diff = Gmax - G[t]
                Gmax2 = max(Gmax2, -G[t])
            else:
                continue
        if diff > 0 and i >= 0:
            # K_ii + K_tt - 2 K_it, from Q_it = y_i y_t K_it as LIBSVM forms it
            quad = QD[i] + QD[t] - 2.0 * y[t] * y[i] * float(Q[i, t])
            obj = -(diff * diff) / (quad if quad > 0 else TAU)
            if obj <= best:
                best, j = obj, t
    if Gmax + Gmax2 < eps:
        return i, -1, Gmax + Gmax2
    return i, j, Gmax + Gmax2


def _update_pair(Q, QD, G, alpha, y, C, i, j):
    Ci, Cj = C[i], C[j]
    Qij = float(Q[i, j])
    if y[i] != y[j]:
        quad = QD[i] + QD[j] + 2.0 * Qij
        delta = (-G[i] - G[j]) / (quad if quad > 0 else TAU)
        diff = alpha[i] - alpha[j]
        alpha[i] += delta
        alpha[j] += delta
        if diff > 0:
            if alpha[j] < 0:
                alpha[j], alpha[i] = 0.0, diff
        elif alpha[i] < 0:
            alpha[i], alpha[j] = 0.0, -diff
        if diff > Ci - Cj:
            if alpha[i] > Ci:
                alpha[i], alpha[j] = Ci, Ci - diff
        elif alpha[j] > Cj:
            alpha[j], alpha[i] = Cj, Cj + diff
    else:
        quad = QD[i] + QD[j] - 2.0 * Qij
        delta = (G[i] - G[j]) / (quad if quad > 0 else TAU)
        total = alpha[i] + alpha[j]
        alpha[i] -= delta
        alpha[j] += delta
        if total > Ci:
            if alpha[i] > Ci:
                alpha[i], alpha[j] = Ci, total - Ci
        elif alpha[j] < 0:
            alpha[j], alpha[i] = 0.0, total
        if total > Cj:
            if alpha[j] > Cj:
                alpha[j], alpha[i] = Cj, total - Cj
        elif alpha[i] < 0:
            alpha[i], alpha[j] = 0.0, total


def _rho(G, alpha, y, C):
    ub, lb, total, n_free = np.inf, -np.inf, 0.0, 0
    for t in range(y.shape[0]):
        yG = y[t] * G[t]
        if alpha[t] >= C[t]:
            if y[t] < 0:
                ub = min(ub, yG)
            else:
                lb = max(lb, yG)
        elif alpha[t] <= 0:
            if y[t] > 0:
                ub = min(ub, yG)
            else:
                lb = max(lb, yG)
        else:
            n_free += 1
            total += yG
    return total / n_free if n_free else 0.5 * (ub + lb)


def csvc(X, labels, C=1.0, weights=None, eps=1e-3, **kernel):
    """C-SVC on dense rows as LIBSVM trains a two-class problem: the first label seen is +1 (for labels {-1, +1}:
    +1). Returns the solver's
    dict plus the labels (in LIBSVM's order) and the decision function's sv_coef = y_i a_i over all rows."""
    labels = np.asarray(labels)
    first = labels[0]
    other = [v for v in labels if v != first][0]
    if (first, other) == (-1, 1):        # LIBSVM (as LIBLINEAR) puts +1 first for labels {-1, +1}
        first, other = 1, -1
    y = np.where(labels == first, 1, -1)
    weights = dict(weights or {})
    K = kernel_matrix(X, X, **kernel)
    out = solve(K, y, C * weights.get(first, 1.0), C * weights.get(other, 1.0), eps=eps)
    out["labels"] = [first, other]
    out["y"] = y
    out["sv_coef"] = y * out["alpha"]
    return out
