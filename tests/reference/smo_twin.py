"""NumPy twin of the generic SMO that issue 15 puts in cext/ (LIBSVM's Solver, without shrinking and, in the class
Shrinking, with it), for small problems: the reference the C kernel is tested against, and itself tested against
libsvm-official (tests/test_smo_twin.py).

Problem (Chang and Lin, "LIBSVM: a library for support vector machines", ACM TIST 2011, section 4.1):
    min_a  f(a) = 1/2 a'Qa + p'a   subject to  y'a = Delta,  0 <= a_i <= C_i,   y_i in {-1, +1},
Q_ij = y_i y_j K(x_i, x_j). C-SVC: p = -1, a = 0 at the start (feasible: Delta = 0), C_i = C times the weight of
y_i's class, times the weight W_i of row i when rows are weighted (scikit-learn's weighted LIBSVM, issue 46).

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

Shrinking (LIBSVM's -h 1, Chang and Lin 2011 section 5.1): see the class Shrinking. The loops of solve() and
Shrinking.select are written independently (one by index, one vectorized); the tests hold them to LIBSVM each.
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


def box(y, Cp, Cn, W=None):
    """C_i of every variable: Cp for y_i = +1, Cn for y_i = -1, times its row's weight W_i (W None: no weights)."""
    C = np.where(np.asarray(y) > 0, float(Cp), float(Cn))
    return C if W is None else C * np.asarray(W, dtype=np.float64)


def solve(K, y, Cp, Cn, eps=1e-3, p=None, max_iter=None, shrinking=False, alpha0=None, W=None):
    """LIBSVM's Solver on the kernel matrix K (l x l) for labels y (+1/-1), C_i = Cp or Cn (times W_i, the weight of
    variable i's row, when W is given). Returns a dict with
    alpha, G, rho, obj (f at the solution), n_iter, and the final violation m(a) - M(a).

    shrinking=True: LIBSVM's -h 1 (Shrinking below; alpha0, a feasible start, only there). The dict then also has
    converged, n_shrink (do_shrinking calls), min_active_size, unshrunk, r (0: Solver_NU's only), events and
    pairs (see Shrinking.run)."""
    if shrinking:
        return Shrinking(K, y, Cp, Cn, eps, p, max_iter, alpha0, W=W).run()
    if alpha0 is not None:
        raise ValueError("alpha0 is only taken with shrinking=True")
    y = np.asarray(y, dtype=np.int64)
    l = y.shape[0]
    Q = (y[:, None] * y[None, :] * K).astype(np.float32)
    QD = np.diag(K).astype(np.float64)            # LIBSVM keeps the diagonal in double
    C = box(y, Cp, Cn, W)
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
    _pair(QD, G, alpha, y, C, i, j, float(Q[i, j]))


def _pair(QD, G, alpha, y, C, i, j, Qij):
    """LIBSVM's update of alpha_i, alpha_j (Qij = y_i y_j K_ij as float32, widened)."""
    Ci, Cj = C[i], C[j]
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


LOWER, UPPER, FREE = 0, 1, 2


class Shrinking:
    """LIBSVM 3.x's Solver with shrinking (-h 1), written plainly: Chang and Lin 2011, section 5.1 (and Fan, Chen
    and Lin 2005). The arrays are held by position; positions start as the rows 0..l-1 and swap (LIBSVM's
    swap_index) exchanges two of them in every array, active_set[k] being the row at position k. Only the first
    active_size positions are iterated on: selection, the pair's update of G, and the stopping rule see them alone.
    G_bar_k = sum { C_t Q_kt : a_t at its upper bound } over all rows, kept up to date when a variable reaches or
    leaves its upper bound (a full column), rebuilds G of the shrunk positions: G_k = G_bar_k + p_k + the free a_t's
    terms (reconstruct).

    Every min(l, 1000) iterations do_shrinking takes m = max {-y_t G_t : t in I_up}, M' = max {y_t G_t : t in
    I_low} over the active set and moves behind active_size every bounded variable that neither I_up nor I_low
    would select (be_shrunk: at the upper bound, y = +1: -G > m, y = -1: -G > M'; at the lower bound, y = +1:
    G > M', y = -1: G > m). The first time m + M' <= 10 eps it first reconstructs G and brings every variable back
    (unshrink, once). When the active set meets the stopping rule, G is reconstructed, active_size = l and the
    rule is checked again over all rows: it stops, or goes on with do_shrinking at the next iteration. After
    max_iter iterations G is reconstructed too. rho is computed by position (the order of its sum), alpha and G are
    given back by row.

    shrinking=False runs the same loop without do_shrinking (LIBSVM's -h 0: one Solve loop for both; solve() above
    is the C-SVC's -h 0 written again by index). Solver_NU (tests/reference/smo_nu_twin.py) is this class with its
    own select, do_shrinking and rho, as in LIBSVM's class Solver_NU : public Solver.
    """

    def __init__(self, K, y, Cp, Cn, eps, p, max_iter, alpha0, shrinking=True, W=None):
        y = np.asarray(y, dtype=np.int64)
        l = self.l = y.shape[0]
        self.Q0 = (y[:, None] * y[None, :] * K).astype(np.float32)     # by row, as the kernel cache computes it
        self.QD = np.diag(K).astype(np.float64)
        self.y = y.copy()
        self.C = box(y, Cp, Cn, W)
        self.p = -np.ones(l) if p is None else np.array(p, dtype=np.float64)
        self.p0 = self.p.copy()
        self.alpha = np.zeros(l) if alpha0 is None else np.array(alpha0, dtype=np.float64)
        self.eps = eps
        self.max_iter = max(10_000_000, 100 * l) if max_iter is None else max_iter
        self.shrinking = shrinking
        self.active_set = np.arange(l)
        self.active_size = l
        self.r = 0.0                    # Solver_NU's r (its rho sets it)
        self.events = []                # LIBSVM's progress: '.', '*', 'W' (reconstruct's "using -h 0" warning)
        self.pairs = []                 # the working pairs (i, j), by row
        self.status = np.array([self._status(k) for k in range(l)], dtype=np.int64)
        self.unshrink = False
        self.n_shrink = 0
        self.min_active = l
        # G = Q alpha + p and G_bar, one column per non-zero alpha in row order (LIBSVM's start)
        self.G = self.p.copy()
        self.G_bar = np.zeros(l)
        for k in range(l):
            if self.status[k] != LOWER:
                col = self.column(k, l)
                self.G += self.alpha[k] * col
                if self.status[k] == UPPER:
                    self.G_bar += self.C[k] * col

    def _status(self, k):
        if self.alpha[k] >= self.C[k]:
            return UPPER
        if self.alpha[k] <= 0:
            return LOWER
        return FREE

    def column(self, k, n):
        """Q at positions 0..n-1 of the column at position k, widened to float64."""
        return self.Q0[self.active_set[:n], self.active_set[k]].astype(np.float64)

    def swap(self, a, b):
        for arr in (self.y, self.C, self.QD, self.p, self.alpha, self.G, self.G_bar, self.status, self.active_set):
            arr[a], arr[b] = arr[b], arr[a]

    def select(self, n):
        """The working pair over positions 0..n-1 (solve's rule, vectorized: the last of equal values wins, as
        LIBSVM's >= and <=): (i, j, m - M), j = -1 when optimal."""
        y, G, st = self.y[:n], self.G[:n], self.status[:n]
        up = ((y > 0) & (st != UPPER)) | ((y < 0) & (st != LOWER))
        low = ((y > 0) & (st != LOWER)) | ((y < 0) & (st != UPPER))
        v = -y * G                                     # -y_t G_t
        Gmax, i = -np.inf, -1
        if up.any():
            Gmax = v[up].max()
            i = int(np.flatnonzero(up & (v == Gmax))[-1])      # ties to the later position, as LIBSVM's >=
        w = y * G                                      # y_t G_t
        Gmax2 = w[low].max() if low.any() else -np.inf
        gap = Gmax + Gmax2
        diff = Gmax + w
        cand = low & (diff > 0)
        j = -1
        if i >= 0 and cand.any():
            quad = self.QD[i] + self.QD[:n] - 2.0 * y * y[i] * self.column(i, n)
            obj = -(diff * diff) / np.where(quad > 0, quad, TAU)
            best = obj[cand].min()
            j = int(np.flatnonzero(cand & (obj == best))[-1])
        if gap < self.eps:
            j = -1
        return i, j, gap

    def reconstruct(self):
        a, l = self.active_size, self.l
        if a == l:
            return
        self.G[a:] = self.G_bar[a:] + self.p[a:]
        if 2 * np.count_nonzero(self.status[:a] == FREE) < a:
            self.events.append("W")
        for t in range(a):
            if self.status[t] == FREE:
                # Q_kt for the shrunk positions k, from the position-t column (Q is symmetric)
                self.G[a:] += self.alpha[t] * self.Q0[self.active_set[a:], self.active_set[t]].astype(np.float64)

    def be_shrunk(self, k, Gmax1, Gmax2, Gmax3, Gmax4):
        """Whether the bounded variable at position k can leave: at the upper bound -G_k > Gmax1 (y = +1) or Gmax4
        (y = -1), at the lower bound G_k > Gmax2 (y = +1) or Gmax3 (y = -1). LIBSVM's Solver passes (m, M', m, M'),
        Solver_NU its four bounds by class."""
        if self.status[k] == UPPER:
            return -self.G[k] > (Gmax1 if self.y[k] > 0 else Gmax4)
        if self.status[k] == LOWER:
            return self.G[k] > (Gmax2 if self.y[k] > 0 else Gmax3)
        return False

    def do_shrinking(self):
        self.n_shrink += 1
        n = self.active_size
        y, G, st = self.y[:n], self.G[:n], self.status[:n]
        up = ((y > 0) & (st != UPPER)) | ((y < 0) & (st != LOWER))
        low = ((y > 0) & (st != LOWER)) | ((y < 0) & (st != UPPER))
        Gmax1 = (-y * G)[up].max() if up.any() else -np.inf
        Gmax2 = (y * G)[low].max() if low.any() else -np.inf
        if not self.unshrink and Gmax1 + Gmax2 <= self.eps * 10:
            self.unshrink = True
            self.reconstruct()
            self.active_size = self.l
            self.events.append("*")
        self.shrink(lambda k: self.be_shrunk(k, Gmax1, Gmax2, Gmax1, Gmax2))

    def shrink(self, leaves):
        """Move behind active_size every position k for which leaves(k) holds (LIBSVM's loop: active_size shrinks
        as it goes, each leaving position swapped with the last staying one)."""
        k = 0
        while k < self.active_size:
            if leaves(k):
                self.active_size -= 1
                while self.active_size > k:
                    if not leaves(self.active_size):
                        self.swap(k, self.active_size)
                        break
                    self.active_size -= 1
            k += 1
        self.min_active = min(self.min_active, self.active_size)

    def rho(self):
        """LIBSVM's calculate_rho, by position (the order of its sum)."""
        return _rho(self.G, self.alpha, self.y, self.C)

    def run(self):
        """Solve: the dict of solve(), with events (LIBSVM's progress characters in order, as cext/_smo.pyx's
        events) and pairs (the working pair (i, j) of every iteration, as rows)."""
        l = self.l
        n_iter, counter, converged, gap = 0, min(l, 1000) + 1, False, np.inf
        while n_iter < self.max_iter:
            counter -= 1
            if counter == 0:
                counter = min(l, 1000)
                if self.shrinking:
                    self.do_shrinking()
                self.events.append(".")
            i, j, gap = self.select(self.active_size)
            if j < 0:
                self.reconstruct()
                self.active_size = l
                self.events.append("*")
                i, j, gap = self.select(l)
                if j < 0:
                    converged = True
                    break
                counter = 1
            n_iter += 1
            self.pairs.append((int(self.active_set[i]), int(self.active_set[j])))
            n = self.active_size
            Qi, Qj = self.column(i, n), self.column(j, n)
            old_i, old_j = self.alpha[i], self.alpha[j]
            _pair(self.QD, self.G, self.alpha, self.y, self.C, i, j, Qi[j])
            dai, daj = self.alpha[i] - old_i, self.alpha[j] - old_j
            self.G[:n] += Qi * dai + Qj * daj
            for k in (i, j):
                was_upper = self.status[k] == UPPER
                self.status[k] = self._status(k)
                if was_upper != (self.status[k] == UPPER):
                    col = self.column(k, l)
                    if was_upper:
                        self.G_bar -= self.C[k] * col
                    else:
                        self.G_bar += self.C[k] * col
        if not converged and self.shrinking:
            # (LIBSVM's -h 0 keeps the last check's gap, from before the last pair)
            if self.active_size < l:
                self.reconstruct()
                self.active_size = l
                self.events.append("*")
            _, _, gap = self.select(l)
        rho = self.rho()
        alpha, G = np.empty(l), np.empty(l)
        alpha[self.active_set] = self.alpha
        G[self.active_set] = self.G
        return {"alpha": alpha, "G": G, "rho": rho, "obj": 0.5 * float(alpha @ (G + self.p0)), "n_iter": n_iter,
                "gap": gap, "converged": converged, "n_shrink": self.n_shrink, "min_active_size": self.min_active,
                "unshrunk": self.unshrink, "r": self.r, "events": "".join(self.events), "pairs": self.pairs}


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


def csvc(X, labels, C=1.0, weights=None, eps=1e-3, shrinking=False, W=None, **kernel):
    """C-SVC on dense rows as LIBSVM trains a two-class problem: the first label seen is +1 (for labels {-1, +1}:
    +1), and the solver sees the rows grouped by class, the +1 rows first, each class in its order (LIBSVM's
    svm_group_classes; the order matters with shrinking, where the rebuilt gradient sums by position). Returns the
    solver's dict (alpha and G by row) plus the labels (in LIBSVM's order) and the decision function's
    sv_coef = y_i a_i over all rows. W: the rows' weights (C_i = W_i C_{y_i}), or None."""
    first, other, y, order = two_classes(labels)
    weights = dict(weights or {})
    K = kernel_matrix(X, X, **kernel)[np.ix_(order, order)]
    out = solve(K, y[order], C * weights.get(first, 1.0), C * weights.get(other, 1.0), eps=eps,
                shrinking=shrinking, W=None if W is None else np.asarray(W, dtype=np.float64)[order])
    by_row(out, order)
    out["labels"] = [first, other]
    out["y"] = y
    out["sv_coef"] = y * out["alpha"]
    return out


def two_classes(labels):
    """LIBSVM's two-class problem from labels: (first, other, y, order). first (the first label seen; +1 of
    {-1, +1}, as LIBSVM and LIBLINEAR put it first) is y = +1; order lists the rows grouped by class, the +1 rows
    first, each class in its order (svm_group_classes: the order the solver sees them in)."""
    labels = np.asarray(labels)
    first = labels[0]
    other = [v for v in labels if v != first][0]
    if (first, other) == (-1, 1):
        first, other = 1, -1
    y = np.where(labels == first, 1, -1)
    return first, other, y, np.argsort(y < 0, kind="stable")


def by_row(out, order):
    """A solver's alpha and G (and its working pairs, when it keeps them), solved over the rows in `order`, put
    back by row (in place)."""
    for key in ("alpha", "G"):
        back = np.empty_like(out[key])
        back[order] = out[key]
        out[key] = back
    if "pairs" in out:
        out["pairs"] = [(int(order[i]), int(order[j])) for i, j in out["pairs"]]
