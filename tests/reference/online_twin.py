"""NumPy twin of the online kernel SVMs of issue 16 (docs/solvers.md, "Online lists: the printed errors and the
resolutions implemented"), for tiny dense problems: the reference the C epoch loops will be tested against.

Kecman and Melki, "Fast Online Algorithms for SVMs: Models and Experimental Studies": List 1 NORMA, List 2 Pegaz,
List 3a OL SVM (min R_rhl), List 3b OL SVM (min R_hl, the one of all the paper's experiments); and Pegasos proper
(Shalev-Shwartz, Singer, Srebro, ICML 2007), kernel and linear.

Common to the four lists (the paper's Lists 1-3, read as docs/solvers.md says):
  * the data are shuffled ONCE (shuffle_order); step t = 1..N*l visits i_t = order[(t - 1) mod l] (the paper's
    "i = i + 1, if i > l, i = 0" is a MATLAB slip for ((t - 1) mod l) + 1); t keeps counting across epochs;
  * eta_t = C * sqrt(2 / t);
  * the model is alpha over the ORIGINAL indices of K (order only says which row step t visits);
  * the result is the last iterate, or with average=True the mean of the iterates after steps 1..T (alpha, b and o
    averaged alike, so o = K alpha (+ b) holds for the average too; this is sklearn's average=1 rule);
  * `cached=True` is the o-cache form (o = K alpha (+ b) kept up to date by one kernel column per change),
    `cached=False` the paper's original form (the output at x_i computed from the full row K[i, :] . alpha each
    step; `--original`).  Both make the same decisions, so they give the same alpha up to rounding.

Every function returns a dict with at least
  alpha (float64[l]), o (the output cache at the end, = K alpha (+ b)), t (steps run), n_viol (list: violations
  per epoch), snapshots (list, one dict {alpha, b, o} per epoch end, of the last iterate), and b where a bias exists.
`callback(t, i, state)`, if given, is called after every step with a dict of the step's values (views: copy them).

The C kernel takes `order` as an input array (int32/int64 of length l), so C and twin agree whatever RNG made it;
shuffle_order is only the default way the Python driver makes one.
"""
import math

import numpy as np

__all__ = ["shuffle_order", "eta_lists", "olsvm_3b", "olsvm_3a", "norma", "pegaz", "pegasos_lambda",
           "pegasos_batches", "pegasos_kernel", "pegasos_linear"]


def shuffle_order(l, seed):
    """The one shuffle: a permutation of 0..l-1 from NumPy's default_rng(seed). The C solvers receive the order as an
    array, so the twin and C agree regardless of the generator."""
    return np.random.default_rng(seed).permutation(l)


def eta_lists(C, t):
    """eta_t = C sqrt(2/t), the step of all four lists."""
    return C * math.sqrt(2.0 / t)


class _Avg:
    """Running mean of the iterates after steps 1..T (acc / T at the end)."""

    def __init__(self, on, l):
        self.on = on
        self.alpha = np.zeros(l)
        self.o = np.zeros(l)
        self.b = 0.0
        self.n = 0

    def add(self, alpha, o, b=0.0):
        if self.on:
            self.alpha += alpha
            self.o += o
            self.b += b
            self.n += 1

    def result(self):
        n = max(self.n, 1)
        return self.alpha / n, self.o / n, self.b / n


def _check(K, y, order):
    K = np.asarray(K, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    order = np.asarray(order, dtype=np.int64)
    l = K.shape[0]
    if K.shape != (l, l) or y.shape != (l,) or order.shape != (l,):
        raise ValueError("K must be l x l, y and order of length l")
    if not np.all(np.abs(y) == 1.0):
        raise ValueError("labels must be -1 or +1")
    if not np.array_equal(np.sort(order), np.arange(l)):
        raise ValueError("order must be a permutation of 0..l-1")
    return K, y, order, l


def _finish(res, avg):
    res["alpha_last"] = res["alpha"].copy()
    res["o_last"] = res["o"].copy()
    if "b" in res:
        res["b_last"] = res["b"]
    if avg.on:
        a, o, b = avg.result()
        res["alpha"], res["o"] = a, o
        if "b" in res:
            res["b"] = b
    return res


def olsvm_3b(K, y, C, order, epochs=1, bias=True, average=False, cached=True, callback=None):
    """List 3b (min R_hl, a kernel perceptron with margin 1 and step eta_t = C sqrt(2/t)):
        viol = y_i o_i;  if viol < 1:  o += eta y_i K[:, i];  alpha_i += eta y_i;
                                       [bias] b += eta y_i;  o += eta y_i.
    Uncached: o_i = K[i, :] . alpha + b.  Returns alpha, b, o, n_viol, t, snapshots (+ *_last)."""
    K, y, order, l = _check(K, y, order)
    alpha = np.zeros(l)
    o = np.zeros(l)
    b = 0.0
    avg = _Avg(average, l)
    n_viol, snaps = [], []
    t = 0
    for _ in range(epochs):
        nv = 0
        for p in range(l):
            t += 1
            i = order[p]
            eta = eta_lists(C, t)
            oi = o[i] if cached else K[i, :] @ alpha + b
            viol = y[i] * oi
            hit = viol < 1.0
            if hit:
                nv += 1
                step = eta * y[i]
                alpha[i] += step
                if cached:
                    o += step * K[:, i]
                if bias:
                    b += step
                    if cached:
                        o += step
            if not cached and hit:
                # the uncached form's steps never read o; it is rebuilt here only for the result and the snapshots
                o = K @ alpha + b
            avg.add(alpha, o, b)
            if callback is not None:
                callback(t, i, dict(alpha=alpha, b=b, o=o, viol=viol, violated=hit, eta=eta))
        n_viol.append(nv)
        snaps.append(dict(alpha=alpha.copy(), b=b, o=o.copy()))
    return _finish(dict(alpha=alpha, b=b, o=o, n_viol=n_viol, t=t, snapshots=snaps), avg)


def olsvm_3a(K, y, C, order, epochs=1, average=False, cached=True, callback=None):
    """List 3a (min R_rhl; no bias, as the paper's (4)):
        viol = y_i o_i;
        viol < 1:  o += eta (y_i - alpha_i / C) K[:, i];  alpha_i := (1 - eta/C) alpha_i + eta y_i;
        viol > 1:  o -= eta alpha_i K[:, i] / C;          alpha_i := (1 - eta/C) alpha_i;
        viol = 1:  nothing.
    Only the current alpha_i is decayed. Note 1 - eta/C = 1 - sqrt(2/t): -0.41 at t = 1 and 0 at t = 2, as in NORMA
    (harmless here: it touches one coefficient). n_viol counts viol < 1, n_over counts viol > 1 (per epoch)."""
    K, y, order, l = _check(K, y, order)
    alpha = np.zeros(l)
    o = np.zeros(l)
    avg = _Avg(average, l)
    n_viol, n_over, snaps = [], [], []
    t = 0
    for _ in range(epochs):
        nv = no = 0
        for p in range(l):
            t += 1
            i = order[p]
            eta = eta_lists(C, t)
            d = 1.0 - eta / C
            oi = o[i] if cached else K[i, :] @ alpha
            viol = y[i] * oi
            if viol < 1.0:
                nv += 1
                if cached:
                    o += (eta * (y[i] - alpha[i] / C)) * K[:, i]
                alpha[i] = d * alpha[i] + eta * y[i]
            elif viol > 1.0:
                no += 1
                if cached:
                    o -= (eta * alpha[i] / C) * K[:, i]
                alpha[i] = d * alpha[i]
            if not cached:
                o = K @ alpha
            avg.add(alpha, o)
            if callback is not None:
                callback(t, i, dict(alpha=alpha, o=o, viol=viol, eta=eta, decay=d))
        n_viol.append(nv)
        n_over.append(no)
        snaps.append(dict(alpha=alpha.copy(), b=0.0, o=o.copy()))
    return _finish(dict(alpha=alpha, o=o, n_viol=n_viol, n_over=n_over, t=t, snapshots=snaps), avg)


def norma(K, y, C, order, epochs=1, eta0=None, lam=None, average=False, cached=True, callback=None):
    """List 1 NORMA (min R_rhl):
        viol = y_i (K[i, :] . alpha);  alpha_j *= d for all j != i;  if viol <= 1: alpha_i := eta y_i (overwrite).
    viol is taken before the decay, and alpha_i is never decayed by its own step.
    Faithful mode (eta0 is None): eta_t = C sqrt(2/t), d = 1 - eta_t / C = 1 - sqrt(2/t): -0.41 at t = 1 and
    exactly 0 at t = 2, which wipes every coefficient but the current one (as printed; docs/solvers.md).
    Usable mode (eta0 and lam given, Kivinen's NORMA): eta_t = eta0 / sqrt(t), d = 1 - eta_t lam.

    cached=True keeps alpha = s abar and o = s obar with one global scale s (the decay is s *= d, O(1)) and obar
    updated by one kernel column when alpha_i changes:  new alpha_i = a (eta y_i on a violation, else the old
    alpha_i), and o_new = d o + (a - d alpha_i_old) K[:, i].  When s becomes 0 (d = 0: the wipe) abar and obar are
    reset to 0 and s to 1; when |s| < 1e-150 (or > 1e150) the scale is folded back into abar and obar.
    cached=False is the paper's form: full row product, O(l) decay."""
    K, y, order, l = _check(K, y, order)
    faithful = eta0 is None
    if not faithful and lam is None:
        raise ValueError("eta0 needs lam")
    abar = np.zeros(l)
    obar = np.zeros(l)
    s = 1.0
    avg = _Avg(average, l)
    n_viol, snaps = [], []
    t = 0
    for _ in range(epochs):
        nv = 0
        for p in range(l):
            t += 1
            i = order[p]
            if faithful:
                eta = eta_lists(C, t)
                d = 1.0 - eta / C
            else:
                eta = eta0 / math.sqrt(t)
                d = 1.0 - eta * lam
            if cached:
                viol = y[i] * (s * obar[i])
                a_old = s * abar[i]
            else:
                viol = y[i] * (K[i, :] @ abar)
                a_old = abar[i]
            hit = viol <= 1.0
            if hit:
                nv += 1
            a_new = eta * y[i] if hit else a_old
            if cached:
                s_new = s * d
                if s_new == 0.0:
                    abar[:] = 0.0
                    obar[:] = 0.0
                    s_new = 1.0
                s = s_new
                abar[i] = a_new / s
                delta = a_new - d * a_old
                if delta != 0.0:
                    obar += (delta / s) * K[:, i]
                if abs(s) < 1e-150 or abs(s) > 1e150:
                    abar *= s
                    obar *= s
                    s = 1.0
                alpha, o = s * abar, s * obar
            else:
                abar *= d
                abar[i] = a_new
                alpha, o = abar, K @ abar
            avg.add(alpha, o)
            if callback is not None:
                callback(t, i, dict(alpha=alpha, o=o, viol=viol, violated=hit, eta=eta, decay=d))
        n_viol.append(nv)
        snaps.append(dict(alpha=alpha.copy(), b=0.0, o=o.copy()))
    alpha = s * abar if cached else abar.copy()
    o = s * obar if cached else K @ abar
    return _finish(dict(alpha=alpha, o=o, n_viol=n_viol, t=t, snapshots=snaps), avg)


def pegaz(K, y, C, order, epochs=1, average=False, cached=True, callback=None):
    """List 2 Pegaz (kernel Pegasos of the paper's [8], without projection, with eta_t = C sqrt(2/t)):
        alpha = eta_t beta;  viol = y_i (K[i, :] . alpha);  if viol <= 1: beta_i += y_i;  at the end alpha = eta_T beta.
    cached=True: obar = K beta (one column per violation), viol = y_i eta_t obar_i.
    Returns alpha (= eta_T beta), beta, o (= K alpha = eta_T obar), obar, n_viol, t, snapshots (alpha = eta_t beta
    at each epoch end)."""
    K, y, order, l = _check(K, y, order)
    beta = np.zeros(l)
    obar = np.zeros(l)
    avg = _Avg(average, l)
    n_viol, snaps = [], []
    t = 0
    eta = 0.0
    for _ in range(epochs):
        nv = 0
        for p in range(l):
            t += 1
            i = order[p]
            eta = eta_lists(C, t)
            if cached:
                viol = y[i] * (eta * obar[i])
            else:
                viol = y[i] * (K[i, :] @ (eta * beta))
            hit = viol <= 1.0
            if hit:
                nv += 1
                beta[i] += y[i]
                if cached:
                    obar += y[i] * K[:, i]
            if not cached:
                obar = K @ beta
            # the iterate after step t is eta_t beta (the value the next step would see is eta_{t+1} beta)
            avg.add(eta * beta, eta * obar)
            if callback is not None:
                callback(t, i, dict(beta=beta, obar=obar, viol=viol, violated=hit, eta=eta))
        n_viol.append(nv)
        snaps.append(dict(alpha=eta * beta, b=0.0, o=eta * obar))
    res = dict(alpha=eta * beta, beta=beta.copy(), o=eta * obar, obar=obar.copy(), n_viol=n_viol, t=t,
               snapshots=snaps)
    return _finish(res, avg)


def pegasos_lambda(C, l):
    """lambda = 1/(C l), the Pegasos regulariser equivalent to C (LLSVM paper)."""
    return 1.0 / (C * l)


def pegasos_batches(order, k):
    """The mini-batches of one epoch: consecutive chunks of `order` of size k, the last one shorter when k does not
    divide l. Batches never straddle an epoch; every epoch uses the same batches (the one shuffle)."""
    order = np.asarray(order, dtype=np.int64)
    return [order[j:j + k] for j in range(0, len(order), k)]


def pegasos_kernel(K, y, lam, order, epochs=1, k=1, projection=False, average=False, cached=True, callback=None):
    """Pegasos (Shalev-Shwartz et al. 2007), kernel form, w = sum_j alpha_j phi(x_j), no bias. Step t (counting
    batches across epochs) over the batch A_t (pegasos_batches):
        eta_t = 1/(lam t);  A+ = {i in A_t : y_i <w_t, phi(x_i)> < 1}   (all margins taken with w_t);
        alpha <- (1 - eta_t lam) alpha + (eta_t / |A_t|) sum_{i in A+} y_i e_i;
        [projection] alpha <- min(1, (1/sqrt(lam)) / ||w||) alpha,  ||w||^2 = alpha . K alpha.
    |A_t| is the batch's actual size (= k except for a short last batch).
    cached=True keeps o = K alpha (decayed with alpha, one column per element of A+); ||w||^2 = alpha . o.
    Without projection alpha_j = y_j beta_j / (lam t) with beta_j the (1/|A|-weighted) count of j's violations (the
    structure of DOGMA's k_pegasos_train.m); returned as beta.
    n_viol counts the elements of A+ per epoch."""
    K, y, order, l = _check(K, y, order)
    alpha = np.zeros(l)
    o = np.zeros(l)
    beta = np.zeros(l)
    avg = _Avg(average, l)
    rad = 1.0 / math.sqrt(lam)
    n_viol, snaps = [], []
    t = 0
    batches = pegasos_batches(order, k)
    for _ in range(epochs):
        nv = 0
        for A in batches:
            t += 1
            eta = 1.0 / (lam * t)
            if cached:
                margins = y[A] * o[A]
            else:
                margins = y[A] * (K[A, :] @ alpha)
            plus = A[margins < 1.0]
            nv += len(plus)
            d = 1.0 - eta * lam
            c = eta / len(A)
            alpha *= d
            if cached:
                o *= d
            for i in plus:
                alpha[i] += c * y[i]
                beta[i] += y[i] * y[i] / len(A)
                if cached:
                    o += (c * y[i]) * K[:, i]
            if projection:
                nw2 = alpha @ o if cached else alpha @ (K @ alpha)
                if nw2 > 0.0:
                    f = min(1.0, rad / math.sqrt(nw2))
                    if f < 1.0:
                        alpha *= f
                        if cached:
                            o *= f
            if not cached:
                o = K @ alpha
            avg.add(alpha, o)
            if callback is not None:
                callback(t, A, dict(alpha=alpha, o=o, eta=eta, plus=plus))
        n_viol.append(nv)
        snaps.append(dict(alpha=alpha.copy(), b=0.0, o=o.copy()))
    return _finish(dict(alpha=alpha, o=o, beta=beta, n_viol=n_viol, t=t, snapshots=snaps), avg)


def pegasos_linear(X, y, lam, order, epochs=1, k=1, projection=False, average=False, callback=None):
    """Pegasos, linear form, computed twice in lockstep:
      plain:  w <- (1 - eta_t lam) w + (eta_t / |A_t|) sum_{A+} y_i x_i;  [projection] w <- min(1, r/||w||) w;
      scaled (the C kernel's form, O(nnz) per update): w = s v;  s <- s (1 - eta_t lam) (when s becomes 0, the t = 1
      step, v <- 0 and s <- 1);  v += (eta_t / (|A_t| s)) y_i x_i;  ||v||^2 kept incrementally
      (vv += 2 c v.x + c^2 x.x, before v changes);  projection s <- s min(1, r / (|s| sqrt(vv)));
      |s| folded into v when it leaves [1e-150, 1e150].
    Margins y_i <w, x_i> < 1 are taken from each form's own w (plain from w, scaled from s v.x_i).
    Returns w (plain), w_scaled (= s v), s, v, vv, n_viol (plain form's), n_viol_scaled, t, snapshots (plain w)."""
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    l, n = X.shape
    order = np.asarray(order, dtype=np.int64)
    if y.shape != (l,) or not np.array_equal(np.sort(order), np.arange(l)):
        raise ValueError("y of length l, order a permutation of 0..l-1")
    w = np.zeros(n)
    v = np.zeros(n)
    s = 1.0
    vv = 0.0
    rad = 1.0 / math.sqrt(lam)
    acc = np.zeros(n)
    n_viol, n_viol_s, snaps = [], [], []
    t = 0
    batches = pegasos_batches(order, k)
    for _ in range(epochs):
        nv = nvs = 0
        for A in batches:
            t += 1
            eta = 1.0 / (lam * t)
            d = 1.0 - eta * lam
            c = eta / len(A)
            # plain
            plus = [i for i in A if y[i] * (X[i] @ w) < 1.0]
            plus_s = [i for i in A if y[i] * (s * (X[i] @ v)) < 1.0]
            nv += len(plus)
            nvs += len(plus_s)
            w = d * w
            for i in plus:
                w = w + (c * y[i]) * X[i]
            if projection:
                nw = math.sqrt(w @ w)
                if nw > 0.0 and rad / nw < 1.0:
                    w = (rad / nw) * w
            # scaled
            s *= d
            if s == 0.0:
                v[:] = 0.0
                vv = 0.0
                s = 1.0
            for i in plus_s:
                cs = c * y[i] / s
                vv += 2.0 * cs * (v @ X[i]) + cs * cs * (X[i] @ X[i])
                v += cs * X[i]
            if projection and vv > 0.0:
                f = rad / (abs(s) * math.sqrt(vv))
                if f < 1.0:
                    s *= f
            if abs(s) < 1e-150 or abs(s) > 1e150:
                v *= s
                vv *= s * s
                s = 1.0
            if average:
                acc += w
            if callback is not None:
                callback(t, A, dict(w=w, s=s, v=v, vv=vv, eta=eta, plus=plus))
        n_viol.append(nv)
        n_viol_s.append(nvs)
        snaps.append(dict(w=w.copy(), w_scaled=s * v))
    res = dict(w=w, w_scaled=s * v, s=s, v=v, vv=vv, n_viol=n_viol, n_viol_scaled=n_viol_s, t=t, snapshots=snaps)
    res["w_last"] = w.copy()
    if average:
        res["w"] = acc / max(t, 1)
    return res
