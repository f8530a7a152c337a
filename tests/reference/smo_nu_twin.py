"""NumPy twin of LIBSVM's Solver_NU, the solver of nu-SVC and nu-SVR (cext/_smo.pyx's solve(nu=True) and nu_start),
for small problems: the reference the C kernel is tested against (tests/test_smo_nu_twin.py), written from LIBSVM
3.37's svm.cpp (Solver_NU, solve_nu_svc, solve_nu_svr) on the generic Solver of tests/reference/smo_twin.py.

Problem (Chang and Lin, "LIBSVM: a library for support vector machines", ACM TIST 2011, sections 2.2, 2.4 and 4.2;
Chang and Lin, "Training nu-support vector classifiers: theory and algorithms", Neural Computation 13, 2001):
    min_a  f(a) = 1/2 a'Qa + p'a   subject to  y'a = Delta_1,  e'a = Delta_2,  0 <= a_t <= C_t,   y_t in {-1, +1}.
The two equalities fix the sum of a over each class (y = +1 and y = -1) apart, so every working pair is taken
inside one class, where Q_ij = K_ij, and the pair update (smo_twin._pair, y_i = y_j) keeps the class's sum.
- nu-SVC (solve_nu_svc): Q_ij = y_i y_j K_ij, p = 0, C = 1, each class summing to nu l / 2. Start: position by
  position a_t = min(1, what is left of its class's nu l / 2) (nu_start). The solution scaled, a_t y_t / r,
  rho / r and f / r^2, is the C-SVC solution of C = 1/r (LIBSVM prints `C = 1/r`).
- nu-SVR (solve_nu_svr): 2l variables over the rows twice (t and t + l are row t), a_t with y = +1 and p_t = -z_t,
  a*_t with y = -1 and p = +z_t, box C, Q = y y K; each half sums to C nu l / 2, and starts as a_t = a*_t = min(C,
  what is left of C nu l / 2). The model's coefficients are a_t - a*_t, epsilon = -r.
- Row weights W (scikit-learn's weighted LIBSVM, issue 46): the box of row t's variables is W_t (nu-SVC) or W_t C
  (nu-SVR), and l is sum W in the sums the start fills (nu sum W / 2 a class; C nu sum W / 2 a half).

Working pair (Solver_NU::select_working_set): ip = argmax {-G_t : y_t = +1, a_t < C_t}, in = argmax {G_t : y_t = -1,
a_t > 0} (m_+ = -G_ip, m_- = G_in: the largest -y_t G_t over each class's I_up); j = argmin -b_t^2 / a_t over the
I_low of both classes with b_t = m_s + y_t G_t > 0 (s: t's class) and a_t = K_ii + K_tt - 2 K_it for i, the ip or
in of t's class (TAU when a_t is not positive); i = ip or in by j's class. Ties go to the later position (>=, <=).
Stop: max(m_+ - M_+, m_- - M_-) < eps, M_s = min {-y_t G_t : t in I_low of class s}, or no j.
Shrinking (Solver_NU::do_shrinking, be_shrunk): the four bounds over the active set, Gmax1 = m_+, Gmax2 = -M_+,
Gmax3 = m_-, Gmax4 = -M_-; a variable of class +1 leaves at its upper bound when -G_t > Gmax1, at its lower bound
when G_t > Gmax2; of class -1, -G_t > Gmax4 at the upper bound, G_t > Gmax3 at the lower. The one-time unshrink at
max(Gmax1 + Gmax2, Gmax3 + Gmax4) <= 10 eps prints no '*' (Solver::do_shrinking's does). The rest (G_bar,
reconstruct, the Solve loop, the stopping check over every variable) is smo_twin.Shrinking's.
rho and r (Solver_NU::calculate_rho): r_s = the mean of G_t over the free a_t of class s, else the middle of
[max G_t over its a_t at C_t, min G_t over its a_t at 0]; rho = (r_+ - r_-) / 2, r = (r_+ + r_-) / 2.
"""
import numpy as np

from .smo_twin import LOWER, TAU, UPPER, Shrinking, by_row, kernel_matrix, two_classes


class SolverNU(Shrinking):
    """Solver_NU: smo_twin.Shrinking with the pair from one class, the shrinking bounds by class and rho and r by
    class. shrinking=False: LIBSVM's -h 0 (the same loop without do_shrinking)."""

    def select(self, n):
        """The working pair over positions 0..n-1, by index as LIBSVM's loops: (i, j, gap), j = -1 when optimal."""
        y, G, st, QD = self.y, self.G, self.status, self.QD
        Gmaxp, Gmaxn, ip, in_ = -np.inf, -np.inf, -1, -1
        for t in range(n):
            if y[t] > 0:
                if st[t] != UPPER and -G[t] >= Gmaxp:
                    Gmaxp, ip = -G[t], t
            elif st[t] != LOWER and G[t] >= Gmaxn:
                Gmaxn, in_ = G[t], t
        # within a class Q_it = K_it: the columns of ip and in are the kernel's
        Kp = self.column(ip, n) if ip >= 0 else None
        Kn = self.column(in_, n) if in_ >= 0 else None
        Gmaxp2, Gmaxn2, j, best = -np.inf, -np.inf, -1, np.inf
        for t in range(n):
            if y[t] > 0:
                if st[t] == LOWER:
                    continue
                diff = Gmaxp + G[t]
                Gmaxp2 = max(Gmaxp2, G[t])
                i, Ki = ip, Kp
            else:
                if st[t] == UPPER:
                    continue
                diff = Gmaxn - G[t]
                Gmaxn2 = max(Gmaxn2, -G[t])
                i, Ki = in_, Kn
            if diff > 0:
                quad = QD[i] + QD[t] - 2.0 * Ki[t]
                obj = -(diff * diff) / (quad if quad > 0 else TAU)
                if obj <= best:
                    best, j = obj, t
        gap = max(Gmaxp + Gmaxp2, Gmaxn + Gmaxn2)
        if gap < self.eps or j < 0:
            return -1, -1, gap
        return (ip if y[j] > 0 else in_), j, gap

    def bounds(self):
        """Gmax1..Gmax4 of Solver_NU::do_shrinking over the active set (-inf where a set is empty)."""
        n = self.active_size
        y, G, st = self.y[:n], self.G[:n], self.status[:n]

        def largest(mask, v):
            return v[mask].max() if mask.any() else -np.inf

        return (largest((y > 0) & (st != UPPER), -G), largest((y > 0) & (st != LOWER), G),
                largest((y < 0) & (st != LOWER), G), largest((y < 0) & (st != UPPER), -G))

    def do_shrinking(self):
        self.n_shrink += 1
        Gmax1, Gmax2, Gmax3, Gmax4 = self.bounds()
        if not self.unshrink and max(Gmax1 + Gmax2, Gmax3 + Gmax4) <= self.eps * 10:
            self.unshrink = True
            self.reconstruct()
            self.active_size = self.l
        self.shrink(lambda k: self.be_shrunk(k, Gmax1, Gmax2, Gmax3, Gmax4))

    def rho(self):
        """rho, and r into self.r, by class over the active set (every variable at the end), by position."""
        r = {}
        for s in (1, -1):
            ub, lb, total, n_free = np.inf, -np.inf, 0.0, 0
            for t in range(self.active_size):
                if self.y[t] != s:
                    continue
                if self.status[t] == UPPER:
                    lb = max(lb, self.G[t])
                elif self.status[t] == LOWER:
                    ub = min(ub, self.G[t])
                else:
                    n_free += 1
                    total += self.G[t]
            r[s] = total / n_free if n_free else (ub + lb) / 2
        self.r = (r[1] + r[-1]) / 2
        return (r[1] - r[-1]) / 2


def solve_nu(K, y, p, C, alpha0, eps=1e-3, shrinking=True, max_iter=None, W=None):
    """Solver_NU on the kernel matrix K of the solver's positions (l x l), labels y (+1/-1), linear term p, box C
    for all (times W_t, the weight of position t's row, when W is given), feasible start alpha0:
    smo_twin.Shrinking.run's dict (alpha and G by position, rho, r, obj, n_iter, gap, converged, n_shrink,
    min_active_size, unshrunk, events, pairs)."""
    return SolverNU(K, y, C, C, eps, p, max_iter, alpha0, shrinking, W=W).run()


def nu_start(y, total, C):
    """The start of LIBSVM's nu solvers: position by position, a_t = min(C_t, what is left of t's class's total),
    each class starting from total (C: one number, or one per position: the weighted rows' boxes)."""
    alpha = np.zeros(len(y))
    caps = np.broadcast_to(np.asarray(C, dtype=np.float64), (len(y),))
    left = {1: float(total), -1: float(total)}
    for t, s in enumerate(np.asarray(y)):
        alpha[t] = min(float(caps[t]), left[int(s)])
        left[int(s)] -= alpha[t]
    return alpha


def _total(W):
    """sum W, added in order (as the kernel and scikit-learn's LIBSVM add them)."""
    return float(np.cumsum(np.asarray(W, dtype=np.float64))[-1])


def svr_problem(z, nu, C, W=None):
    """nu-SVR's 2l variables: (rows, y, p, alpha0); rows[t] is the row of variable t. W: the rows' weights."""
    z = np.asarray(z, dtype=np.float64)
    l = z.shape[0]
    a = nu_start(np.ones(l, np.int64), C * nu * l / 2, C) if W is None else \
        nu_start(np.ones(l, np.int64), C * nu * _total(W) / 2, C * np.asarray(W, dtype=np.float64))
    return (np.concatenate([np.arange(l), np.arange(l)]), np.concatenate([np.ones(l, np.int64), -np.ones(l, np.int64)]),
            np.concatenate([-z, z]), np.concatenate([a, a]))


def nu_svc(X, labels, nu, eps=1e-3, shrinking=True, W=None, **kernel):
    """nu-SVC on dense rows as LIBSVM trains a two-class problem (the classes oriented and the rows grouped as
    smo_twin.two_classes says): the solver's dict (alpha, G and pairs by row; rho, r and obj the solver's, before
    scaling) plus labels, y, start (the start by row) and the C-SVC it solves: C = 1/r, sv_coef = a_t y_t / r,
    model_rho = rho / r, model_obj = obj / r^2, as solve_nu_svc scales them. W: the rows' weights (the box W_t,
    each class's sum nu sum W / 2), or None."""
    first, other, y, order = two_classes(labels)
    ys = y[order]
    Wo = None if W is None else np.asarray(W, dtype=np.float64)[order]
    start = nu_start(ys, nu * ys.shape[0] / 2, 1.0) if Wo is None else nu_start(ys, nu * _total(Wo) / 2, Wo)
    K = kernel_matrix(X, X, **kernel)[np.ix_(order, order)]
    out = solve_nu(K, ys, np.zeros(ys.shape[0]), 1.0, start, eps, shrinking, W=Wo)
    by_row(out, order)
    out["start"] = np.empty_like(start)
    out["start"][order] = start
    r = out["r"]
    out.update(labels=[first, other], y=y, C=1 / r, sv_coef=out["alpha"] * (y / r), model_rho=out["rho"] / r,
               model_obj=out["obj"] / (r * r))
    return out


def nu_svr(X, z, nu, C=1.0, eps=1e-3, shrinking=True, W=None, **kernel):
    """nu-SVR on dense rows in their order: the solver's dict over the 2l variables plus coef (a - a*, the
    model's coefficients), epsilon (-r) and the problem (rows, y, p, start). W: the rows' weights, or None."""
    rows, y, p, start = svr_problem(z, nu, C, W)
    K = kernel_matrix(X, X, **kernel)[np.ix_(rows, rows)]
    out = solve_nu(K, y, p, C, start, eps, shrinking, W=None if W is None else np.asarray(W, np.float64)[rows])
    l = rows.shape[0] // 2
    out.update(coef=out["alpha"][:l] - out["alpha"][l:], epsilon=-out["r"], rows=rows, y=y, p=p, start=start)
    return out
