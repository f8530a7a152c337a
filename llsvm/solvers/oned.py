"""-s local1d and -s project1d: linear SVMs from 1-D projections (Schneider, Bogojeska, Vlachos, CIKM 2014),
LocalSVM (Algorithm 3) and ProjectSVM (Algorithm 2), around the kernels of cext/_oned.pyx (whose header states the
problem, the corrected SVM1D scan, the exact 1-D solver and both loops).

The problem is the L1-loss SVM with an unregularised bias, min ||w||^2/2 + sum_i C_i max(0, 1 - y_i (w.x_i + b)).
The driver is a random-access one: the trainer gives it one binary Subproblem (one-vs-rest with LIBLINEAR's label
order, -wi costs, -v folds, threads over classes). The model is LIBLINEAR's file with `bias` B (-B B > 0; 1 by
default) and w_{n+1} = b / B, written as solver_type L2R_L1LOSS_SVC_DUAL (LIBLINEAR's loader refuses unknown names and
its predict needs only w and the bias); --json names the real solver, its modes and its trace.
"""
import math
import time

import numpy as np

from .. import memory
from .._ext import _oned as K
from .._ext._random import rng_state
from .common import JSON_FIELDS as LIBLINEAR_JSON_FIELDS
from ..params import echo
from .common import FitResult, c_arithmetic, liblinear_metrics, report_finished, warn_max_iter

JSON_FIELDS = LIBLINEAR_JSON_FIELDS + ("oned",)


def thm41_draws(d, N, c0=1.0):
    """Theorem 4.1's number of random directions, 2 c0 e^(2 sqrt(d) + 2) log N, after which one is within the
    angle phi0 of the target with probability 1 - N^(-c0/2) (exponential in d)."""
    return 2.0 * c0 * math.exp(2.0 * math.sqrt(d) + 2.0) * math.log(max(N, 2))


def run(sub, params, seed=1, trace_rows=0):
    """The kernel's loop on one binary problem: (w_min, the kernel's dict with "snapshots" and "trace")."""
    opt = params.options
    local = params.spec.name == "local1d"
    d = sub.n_features
    max_iter = params.max_iter or params.spec.default_max_iter
    n_snap = K.n_snapshots(max_iter)
    memory.check(8 * n_snap * (d + len(K.SNAP_FIELDS)), "the power-of-two snapshots of w")
    snap = np.zeros((n_snap, len(K.SNAP_FIELDS)))
    snapw = np.zeros((n_snap, d))
    w = np.zeros(d)
    unit = opt.oned_norm == "unit"
    exact = opt.oned == "exact"
    max_seconds = opt.max_seconds or 0.0
    if local:
        trace = np.zeros((trace_rows, 3), np.int32)
        t0 = time.perf_counter()
        cols = sub.columns(with_bias=False, extra_bytes=sub.l * 96,
                           what="the columns and sorting arrays of -s local1d")
        setup = time.perf_counter() - t0
        out = K.local_svm(*cols, sub.y, sub.Cp, sub.Cn, unit, exact, max_iter, max_seconds, w, snap, snapw, trace)
        out["trace"] = trace[:out["n_trace"]]
    else:
        setup = 0.0
        target = -math.inf if opt.target_loss is None else opt.target_loss
        memory.check(sub.l * 72, "the sorting arrays of -s project1d")
        out = K.project_svm(sub.view.row_view(-1.0), sub.rows, sub.y, sub.Cp, sub.Cn, unit, exact, max_iter,
                            max_seconds, target, rng_state(seed), w, snap, snapw)
        out["trace"] = np.zeros((0, 3), np.int32)
    out["setup_seconds"] = setup
    ns = out["n_snap"]
    out["snapshots"] = [dict(zip(K.SNAP_FIELDS, row), w=snapw[k].copy()) for k, row in enumerate(snap[:ns].tolist())]
    for s in out["snapshots"]:
        for key in ("iter", "accepted", "rejected"):
            s[key] = int(s[key])
    return w, out


def _one_class(sub):
    """One class only: w = 0 and b = +-1 meet every margin (the scan has no pair)."""
    sign = 1.0 if sub.l and sub.y[0] > 0 else -1.0
    return np.zeros(sub.n_features), {"l_min": 0.0, "b": sign, "t": None, "thres": None, "seconds": 0.0, "n_iter": 0,
                                      "accepted": 0, "rejected": 0, "calls": 0, "n_trace": 0, "n_snap": 0,
                                      "reason": "one_class", "setup_seconds": 0.0, "snapshots": [], "trace": np.zeros((0, 3), np.int32)}


def train_one(sub, params, seed, reporter, warm=None):
    """One binary problem: the loop, then the model's w (bias coordinate b / B) and its certificate."""
    pos = int(np.count_nonzero(sub.y > 0))
    if pos in (0, sub.l):
        w, out = _one_class(sub)
    else:
        w, out = run(sub, params, seed)
    opt = params.options
    B = sub.bias
    b = out["b"] if math.isfinite(out["l_min"]) else 0.0
    wfull = np.concatenate([w, [b / B]])
    # the certificate of the written model: its primal and the rows on or inside the margin
    m = sub.margins(wfull)
    xi = np.maximum(0.0, 1.0 - sub.y * m)
    with c_arithmetic():            # inf at an extreme C (-c 1e308): the certificate says so
        primal = 0.5 * float(w @ w) + float(sub.C() @ xi)
    nSV = int(np.count_nonzero(sub.y * m <= 1.0))
    report_finished(reporter, out["n_iter"], primal, nSV, blank_line=False)
    if out["reason"] == "max_iter":
        warn_max_iter(reporter)
    elif out["reason"] == "time":
        reporter.warning(f"\nWARNING: reaching --max-seconds {opt.max_seconds:g}\n")
    extra = {"oned": {
        "solver": params.spec.name, "oned": opt.oned, "oned_norm": opt.oned_norm, "C": [sub.Cp, sub.Cn],
        "l_min": out["l_min"], "b": b, "t": out["t"], "thres": out["thres"], "accepted": out["accepted"],
        "rejected": out["rejected"], "svm1d_calls": out["calls"], "seconds": out["seconds"],
        "setup_seconds": out["setup_seconds"],
        "stop": out["reason"], "max_seconds": opt.max_seconds,
        "trace": [{k: s[k] for k in K.SNAP_FIELDS} for s in out["snapshots"]]}}
    if params.spec.name == "project1d":
        extra["oned"]["target_loss"] = opt.target_loss
        extra["oned"]["thm41_draws"] = thm41_draws(sub.n_features, sub.l)
    res = FitResult(w=wfull, n_iter=out["n_iter"], primal=primal, nSV=nSV, converged=out["reason"] in ("step", "target", "one_class"), solver=3, extra=extra)
    res.extra["snapshots"] = out["snapshots"]
    res.extra["trace"] = out["trace"]
    return res


def metrics(model, params, ds):
    """--json: LIBLINEAR's keys (solver: the real one; model_solver_type: the file's), and per class the loop's
    figures ("oned": modes, l_min, t, thres, accepted/rejected steps, stop reason, and per power-of-two iteration
    l_min, t, thres, counts and seconds)."""
    out = liblinear_metrics(model, params, ds)
    res = model.meta["results"]
    out["solver"] = params.spec.name
    out["model_solver_type"] = model.solver_type
    # a primal search has no dual iterate: no dual, gap or violation (null, not NaN)
    for d in [out] + out["classes"]:
        d["dual"] = d["gap"] = d["max_violation"] = None
    for cls, r in zip(out["classes"], res):
        cls["oned"] = r.extra["oned"]
    out["oned"] = echo(params, "oned", "oned_norm")
    return out
