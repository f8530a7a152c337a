"""-s 1 and -s 3: dual coordinate descent with shrinking for the L2-regularized L2-loss / L1-loss SVC, LIBLINEAR
2.50's solve_l2r_l1l2_svc (Hsieh, Chang, Lin, Keerthi, Sundararajan, "A dual coordinate descent method for
large-scale linear SVM", ICML 2008, Algorithm 3), around the kernel of cext/_linear.pyx.

The driver owns the outer loop (the kernel runs 10 iterations a call), LIBLINEAR's output lines and warnings, the
certificate of the result and, for -s 1, LIBLINEAR's switch to -s 2 at the iteration limit. At the defaults both
stop where LIBLINEAR 2.50 stops; -s 3 --certify goes on to a certified optimum (dual_cg.py, smooth_hinge.py).
Kernels see a binary subproblem: the dataset's row view, `rows` (the rows it uses, empty for all), labels y in
{-1,+1} (int8) and per-class costs Cp, Cn.
"""
import numpy as np

from .._ext import _linear as K
from .._ext._random import rng_draw, rng_state
from .common import FitResult, problem_threads, report_finished, scout_pays, warn_max_iter
from .newton import solve_newton
from .dual_cg import solve_dual_cg
from .smooth_hinge import REL_GAP, solve_smooth_hinge
from ..params import DUAL_MAX_ITER, NEWTON_MAX_ITER

L2R_L2LOSS_SVC_DUAL = 1
L2R_L1LOSS_SVC_DUAL = 3
PASSCODE_STALL_EPOCHS = 50     # iterations without progress before PASSCoDe hands over to one thread (run_passcode)
# -s 3 --certify's stall check: at STALL_CHECK_ITER iterations (if the dual has not stopped), the certificate is taken once
# (one pass); a duality gap above STALL_GAP of the primal means a dual that creeps (skin_nonskin: 0.998 there, and
# LIBLINEAR's 300 iterations still end 50 % above the optimum; the generated dense set, which converges at 118:
# 1.4e-4), and the run goes on at once, as where the dual stops (_primal_after_limit).
STALL_CHECK_ITER = 100
STALL_GAP = 0.5
# -s 3 --certify: CG on the free dual variables first where rows <= this many times the features (usps.t: 8 and
# news20.t: 0.06 need it; skin_nonskin: 61,000 needs the smoothed-hinge primal Newton; a9a: 262, either)
CG_ROWS_PER_FEATURE = 100



def train_one(sub, params, seed, reporter, warm=None):
    """One binary problem with LIBLINEAR's train_one logic for -s 1 and -s 3 (the -s 1 -> -s 2 switch included).

    -s 3 stops where LIBLINEAR's stops (-e, or the iteration limit with its warning) and gives its point. With
    params.certify it goes on: the stall check at STALL_CHECK_ITER iterations, and from wherever the dual stopped
    with a duality gap above REL_GAP of the primal, CG on the free dual variables or the smoothed-hinge primal
    Newton (_primal_after_limit)."""
    l1 = params.solver == L2R_L1LOSS_SVC_DUAL
    certify_opt = l1 and params.certify
    max_iter = params.max_iter or params.spec.default_max_iter
    threads = problem_threads(sub, params.threads, sparse=True)          # PASSCoDe's (1 unless common.PASSCODE)
    scout = threads == 1 and scout_pays(sub, params.threads)        # --threads 2 and up, a long pass, an idle core
    res = solve_dcd(sub, l1, params.eps, max_iter, rng_seed=seed, alpha0=_warm_alpha(sub, warm, l1),
                    reporter=reporter, threads=threads, stall_check=certify_opt, scout=scout)
    if "dual_stalled" in res.extra:
        if reporter is not None:
            reporter.warning(f"\nWARNING: the dual stalls: its duality gap is {res.extra['dual_stalled']:.1%} of the "
                          f"primal after {res.n_iter} iterations\n")
    elif res.n_iter >= max_iter:
        if l1:
            warn_max_iter(reporter, "Using -s 2 may be faster (also see FAQ)\n\n")
        else:
            warn_max_iter(reporter, "Switching to use -s 2\n\n")
            pos, l = sub.sizes()
            tol = params.eps * max(min(pos, l - pos), 1) / l * 0.1
            dual = res
            res = solve_newton(sub, tol, NEWTON_MAX_ITER, w0=dual.w, reporter=reporter)
            res.extra["dual_iterations"] = dual.n_iter
            res.extra["switched_to_primal"] = True
    if certify_opt and not res.gap <= REL_GAP * abs(res.primal):     # not certified yet: go on
        res = _primal_after_limit(sub, res, reporter)
    return res


def _warm_alpha(sub, warm, l1):
    """The dual start of a warm start: its alpha, or the dual point of its w (warm.primal_to_dual: a model file
    holds w only); None from zero."""
    if warm is None:
        return None
    if warm.get("alpha") is None and warm.get("w") is not None:
        from .warm import primal_to_dual
        return primal_to_dual(sub.args, sub.y, sub.C(), warm["w"], l1)
    return warm.get("alpha")


def _primal_after_limit(sub, dual, reporter):
    """-s 3 --certify, where the dual stopped (the stall check, -e or the iteration limit) with a duality gap above
    REL_GAP of the primal: on to a certified relative gap of 1e-3, as -s 1 goes on by -s 2's Newton. Two methods,
    the first by the problem's shape, the other from where it stopped if it stops short:
    - CG steps on the free dual variables between DCD iterations (dual_cg.py), first where the rows are at most
      CG_ROWS_PER_FEATURE times the features (text, usps: its system is over the free rows, of rank <= features);
    - the smoothed-hinge primal Newton (smooth_hinge.py), first where the rows are far more numerous (skin_nonskin,
      245,057 x 3: its system is the features').
    The model is the certified point with the smaller gap, and a run that ends short of the gap says so (llsvm's
    own warning: on stderr, -q silences it)."""
    def by_cg(start):
        if reporter is not None:
            reporter.info("Going on by CG on the free dual variables (until the duality gap <= 0.1 % of the "
                          "primal)\n")
        r, stats = solve_dual_cg(sub, start, solve_dcd, REL_GAP, reporter=reporter)
        return r, stats, "dual_cg"

    def by_smoothing(start):
        if reporter is not None:
            reporter.info("Switching to the smoothed-hinge primal Newton (until the duality gap <= 0.1 % of the "
                          "primal)\n")
        r, stats = solve_smooth_hinge(sub, start.w, certify, reporter=reporter)
        return r, stats, "smoothed_hinge"

    methods = (by_cg, by_smoothing) if sub.l <= CG_ROWS_PER_FEATURE * sub.w_size else (by_smoothing, by_cg)
    res, stats, method = methods[0](dual)
    if not res.converged:
        other, other_stats, other_method = methods[1](res)
        if other.gap < res.gap:
            res, stats, method = other, other_stats, other_method
    rel = res.gap / abs(res.primal) if res.primal else 0.0
    if reporter is not None:
        reporter.info(f"primal {res.primal:f} dual {res.dual:f} relative gap {rel:.3e}\n")
        if not res.converged:
            reporter.warning(f"WARNING: the certified optimum was not reached: relative duality gap {rel:.3e} "
                          f"(> {REL_GAP:g})\n")
    res.n_iter = dual.n_iter
    res.solver = L2R_L1LOSS_SVC_DUAL
    res.extra.update(objective_value=-res.dual, dual_iterations=dual.n_iter, switched_to_primal=True,
                     certify_method=method, relative_gap=rel, **{f"primal_{k}": v for k, v in stats.items()})
    if "dual_stalled" in dual.extra:
        res.extra["dual_stalled"] = dual.extra["dual_stalled"]
    return res


def solve_dcd(sub, l1_loss, eps, max_iter=DUAL_MAX_ITER, rng_seed=1, alpha0=None, reporter=None, shuffle=True,
              threads=1, stall_check=False, scout=False):
    """Dual coordinate descent with shrinking: LIBLINEAR 2.50's solve_l2r_l1l2_svc, outer loop here.

    Returns a FitResult; `n_iter >= max_iter` means the iteration limit was hit (converged False).
    shuffle=False keeps the visiting order fixed (index order, as shrinking leaves it): for reference tests.
    threads > 1: PASSCoDe-Atomic on that many threads (DCDState.run_passcode: a share of the rows per thread, the
    additions into w atomic, the stopping rule checked exactly at w(alpha)); not repeatable run to run. When the
    threads stall (run_passcode's guard), one thread goes on from their alpha.
    scout (one thread): a second thread reads the rows the passes will visit next (DCDState.scout, scout_rows in
    cext/scout.pxd); it writes nothing the passes read, so the run is one thread's bit for bit, only faster.
    stall_check: at STALL_CHECK_ITER iterations, stop if the duality gap exceeds STALL_GAP of the primal
    (extra["dual_stalled"]: that fraction; converged False). With threads, the check makes w = w(alpha) in row
    order, as the exact check does.
    """
    l = sub.l
    w = np.zeros(sub.w_size, np.float64)
    xnorm = np.empty(l, np.float64)
    K.sq_norms(*sub.args, xnorm)
    if alpha0 is None:
        alpha = np.zeros(l, np.float64)
    else:
        alpha = np.array(alpha0, dtype=np.float64)
        if l1_loss:
            np.minimum(alpha, sub.C(), out=alpha)
        K.dcd_init_w(*sub.args, sub.y, alpha, w)
    index = np.arange(l, dtype=np.int32)
    rng = rng_state(rng_seed)
    state = K.DCDState(*sub.args, sub.y, alpha, w, xnorm, index, sub.Cp, sub.Cn, l1_loss, rng)
    state.scout = scout and threads <= 1
    # PASSCoDe: an RNG state per thread, drawn from the run's
    rngs = np.stack([rng_state(rng_draw(rng)) for _ in range(threads)]) if threads > 1 else None
    # LIBLINEAR's outer loop runs in the kernel, 10 iterations per call so the dots appear as LIBLINEAR's do
    converged, stalled = False, None
    while state.n_iter < max_iter:
        n = min(10, max_iter - state.n_iter)
        if threads > 1 and not state.stalled:
            converged, events = state.run_passcode(n, eps, rngs, stall_epochs=PASSCODE_STALL_EPOCHS)
            if state.stalled:           # the threads cycle short of eps: one thread from their alpha on
                state.end_threads()
        else:
            converged, events = state.run(n, eps, shuffle)
        if events and reporter is not None:
            reporter.info(events)
        if converged:
            break
        if stall_check and STALL_CHECK_ITER <= state.n_iter < max_iter:
            stall_check = False         # once (past STALL_CHECK_ITER: a PASSCoDe stall ends a call mid-chunk)
            res = _certified(sub, w, alpha, l1_loss, threads)
            rel = res.gap / abs(res.primal) if res.primal else 0.0
            if rel > STALL_GAP:
                stalled = rel
                break
    it = state.n_iter
    if stalled is None:         # (a stalled run's certificate is the check's: alpha and w have not moved since)
        res = _certified(sub, w, alpha, l1_loss, threads)
    if reporter is not None:
        # LIBLINEAR's "Objective value" is the dual minimization objective f(alpha) = -dual
        report_finished(reporter, it, -res.dual, res.nSV)
    res.n_iter = it
    res.converged = it < max_iter and stalled is None
    if stalled is not None:
        res.extra["dual_stalled"] = stalled
    res.solver = L2R_L1LOSS_SVC_DUAL if l1_loss else L2R_L2LOSS_SVC_DUAL
    res.extra["objective_value"] = -res.dual
    if threads > 1:
        res.extra["threads"] = threads
        res.extra["exact_checks"] = state.exact_checks
        res.extra["threads_stalled"] = bool(state.stalled)
    elif state.scout:
        res.extra["scout"] = True
    return res


def _certified(sub, w, alpha, l1_loss, threads):
    """certify at (w, alpha), w made w(alpha) in row order first for threads (whose additions into w came in any
    order): one pass, two with threads."""
    if threads > 1:
        K.dcd_init_w(*sub.args, sub.y, alpha, w)
    return certify(sub, w, alpha, l1_loss)


def certify(sub, w, alpha, l1_loss):
    """Primal, dual, gap, max projected-gradient violation and nSV of a dual solution (w as the solver kept it).

    One pass over the data: the kernel returns the violation, the loss term of the primal and the dual's sums.
    """
    viol, loss, sum_alpha, sum_diag, nSV = K.dcd_violation(*sub.args, sub.y, alpha, w, sub.Cp, sub.Cn, l1_loss)
    wTw = float(w @ w)
    primal = 0.5 * wTw + loss
    dual = sum_alpha - 0.5 * wTw - 0.5 * sum_diag
    return FitResult(w=w, alpha=alpha, primal=primal, dual=dual, gap=primal - dual, max_violation=viol, nSV=nSV)
