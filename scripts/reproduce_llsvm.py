#!/usr/bin/env python3
"""Reproduce Figure 1 and Table 2 of Alrajeh, Takeda, Niranjan, "Memory-efficient large-scale linear
support vector machine" (ICMV 2014, Proc. SPIE 9445; Section 4): `-s llsvm --one-pass` against LIBLINEAR's
`-s 3`, and llsvm's default mode (re-check passes) beside them.

`make reproduce-llsvm` (REPRODUCE_ARGS="--quick" for a smoke run). For every data set (loaded once, every solver
trains on the same in-memory CSRDataset), C=1, -B 1, seed 1, one thread:

  - `-s llsvm --one-pass`, the paper's Algorithm 2 (llsvm.train(solver="llsvm",
    options=LLSVMOptions(one_pass=True, return_alpha=True)); its tolerance, the relative change of the dual per
    outer iteration, is LLSVMOptions.inner_eps, --llsvm-eps here): its traces in FitResult.extra give the active
    set after the first pass and after each outer iteration, and the dual objective D = sum(alpha) - |w|^2/2 at
    the same points. Figure 1 and Table 2 are this run's;
  - `-s llsvm` in its default mode (LLSVMOptions(), -e 0.1: re-check passes over every row until the largest
    projected-gradient violation is within eps): accuracy, primal against the tight -s 3 reference, re-check
    passes, rows re-entered, wall time (the "Default mode" table);
  - `-s 3` at its default eps 0.1 (llsvm.train(solver=3)): model, alpha, wall time;
  - the same `-s 3` run again, driven here one outer iteration at a time: a `DCDState` (cext/_linear.pyx) built as
    solvers.solve_dcd builds it, with the sub-seed llsvm.train draws for each binary problem, advanced by
    `state.run(1, eps)`, which is the kernel's LIBLINEAR outer loop for one iteration (solve_dcd calls the same
    loop 10 iterations at a time; the RNG and the shrinking state live in the DCDState, so the sequence is the
    same). After each iteration: `state.active_size` (LIBLINEAR's active_size; l again after a '*' reset) and
    D = sum(alpha) - |w|^2/2. The final alpha is checked to be bit-identical to llsvm.train's (column
    "trace = train" in results.json);
  - `-s 3` with a tight eps (1e-3, at most 1000 iterations; --tight-eps 0 skips it): the reference optimum D*.

Figure 1: active set (% of rows; for K > 2 classes, % of K x rows summed over the one-vs-rest problems) and D per
iteration for the first --fig-iter iterations; llsvm's iteration 0 is its first pass, -s 3's iteration k is its
k-th outer iteration. Table 2: alpha_i = 0 counts of both, and the fraction of rows whose zero/non-zero status
differs, mean((alpha_llsvm > 0) != (alpha_s3 > 0)), per binary problem (mean and max over the classes for K > 2);
plus duals, primals, test accuracy (when a test file exists) and wall times; then the default mode's table.

Output in --out (default reproduce-results/<seed>/llsvm, --quick: .../llsvm/quick): table2.md, figure1.md,
results.json, figure1-<set>.png, figure1-generated.png. table2.md is printed at the end. The paper's Table 2 is of
sets that are not public, so nothing is gated on its numbers; the exit status is 1 when the traced -s 3 run (Figure
1's curve) is not llsvm.train's.
"""
import argparse
import gc
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)

import numpy as np  # noqa: E402

import llsvm  # noqa: E402
from llsvm._ext import _linear as KL  # noqa: E402
from llsvm._ext import _random as RNG  # noqa: E402
from llsvm.options import OPTION, LLSVMOptions  # noqa: E402
from llsvm.params import DUAL_MAX_ITER  # noqa: E402
from llsvm.params import PASS_EPS as LLSVM_DEFAULT_EPS  # noqa: E402
from llsvm.solvers import Subproblem, group_classes  # noqa: E402
from benchutil import (DATA_DIR, DEFAULT_SEED, FETCH_HINT, Acceptance, accuracy, exit_status,  # noqa: E402
                       match_problems, md_header, md_row, mismatch, pyplot, reproduce_dir, resolve, run_meta,
                       save_png, say, shared_training_sets, timed_train, timestamp)

DEFAULT_INNER_EPS = OPTION["--inner-eps"].default_for("llsvm")

GENERATED = ("demo", "sparse", "dense", "multiclass")     # data/<name> and data/<name>.t (data/Makefile.mk)
QUICK_MAX_BYTES = 10 << 20                                # --quick: training files up to 10 MB (on disk)
QUICK_GENERATED = ("demo",)                               # --quick: the one generated set under that size


# -- -s 3 one outer iteration at a time ---------------------------------------------------------------------------
def problem_seeds(seed, n_problems):
    """The sub-seeds llsvm.train draws, in order, for its binary problems (linear._Seeds)."""
    state = RNG.rng_state(int(seed) & 0xFFFFFFFFFFFFFFFF)
    return [int(RNG.rng_draw(state)) for _ in range(n_problems)]


def trace_s3(ds, y_sign, C, bias, eps, seed, max_iter=DUAL_MAX_ITER):
    """LIBLINEAR's -s 3 on one binary problem, exactly as solvers.solve_dcd runs it (alpha0 = 0, shuffled), with
    active_size and D = sum(alpha) - |w|^2/2 recorded after every outer iteration."""
    sub = Subproblem(ds, y_sign, C, C, bias=bias)
    alpha = np.zeros(sub.l)
    w = np.zeros(sub.w_size)
    xnorm = np.empty(sub.l)
    KL.sq_norms(*sub.args, xnorm)
    index = np.arange(sub.l, dtype=np.int32)
    state = KL.DCDState(*sub.args, sub.y, alpha, w, xnorm, index, sub.Cp, sub.Cn, True, RNG.rng_state(seed))
    active, dual, resets, seconds = [], [], [], []
    converged = False
    t0 = time.perf_counter()
    while state.n_iter < max_iter:
        converged, events = state.run(1, eps, True)
        seconds.append(time.perf_counter() - t0)
        active.append(int(state.active_size))
        dual.append(float(alpha.sum()) - 0.5 * float(w @ w))
        resets.append("*" in events)
        if converged:
            break
    return {"alpha": alpha, "w": w, "active": active, "dual": dual, "resets": resets, "seconds": seconds,
            "n_iter": int(state.n_iter), "converged": bool(converged)}


# -- one data set -------------------------------------------------------------------------------------------------
def _f(x):
    return None if x is None else float(x)


def run_set(name, kind, path, test_path, args, say):
    t0 = time.perf_counter()
    ds = llsvm.read_dataset(path)
    load_s = time.perf_counter() - t0
    labels, cls = group_classes(ds.y)
    K = 1 if labels.size <= 2 else labels.size
    l = ds.n_rows
    say(f"# {name}: {l} rows, {ds.n_features} features, {ds.nnz} nnz, {labels.size} classes "
        f"(loaded in {load_s:.2f} s)")
    C, bias, seed = args.C, args.bias, args.seed
    inner_iter = {} if args.inner_iter is None else {"inner_iter": args.inner_iter}
    # the paper's Algorithm 2: no re-check passes, its tolerance is inner_eps
    inner_eps = DEFAULT_INNER_EPS if args.llsvm_eps is None else args.llsvm_eps
    opts = LLSVMOptions(return_alpha=True, one_pass=True, inner_eps=inner_eps, **inner_iter)

    # -s llsvm --one-pass
    t_ll, m_ll = timed_train(ds, solver="llsvm", C=C, bias=bias, seed=seed, options=opts)
    say(f"#   -s llsvm --one-pass {t_ll:.3f} s")
    # -s llsvm, default mode (re-check passes), at its default -e and inner_eps
    t_def, m_def = timed_train(ds, solver="llsvm", C=C, bias=bias, seed=seed,
                               options=LLSVMOptions(return_alpha=True, **inner_iter))
    say(f"#   -s llsvm (default mode) {t_def:.3f} s")
    # -s 3 (default eps) as llsvm.train runs it, then the same run traced iteration by iteration
    t_s3, m_s3 = timed_train(ds, solver=3, C=C, bias=bias, seed=seed, eps=args.eps)
    say(f"#   -s 3 {t_s3:.3f} s")
    seeds = problem_seeds(seed, K)
    ys_all = [np.where(cls == (0 if K == 1 else k), 1, -1).astype(np.int8) for k in range(K)]
    traces = [trace_s3(ds, ys_all[k], C, bias, args.eps, seeds[k]) for k in range(K)]
    # -s 3 tight: the reference optimum
    m_t, t_t = None, None
    if args.tight_eps > 0:
        t_t, m_t = timed_train(ds, solver=3, C=C, bias=bias, seed=seed, eps=args.tight_eps,
                               max_iter=args.tight_max_iter)
        say(f"#   -s 3 eps {args.tight_eps:g} {t_t:.3f} s")

    if not np.array_equal(m_ll.label, m_s3.label) and K > 1:
        say(f"#   note: label orders differ (llsvm {m_ll.label.tolist()}, -s 3 {m_s3.label.tolist()}); "
            "problems matched by label")
    problems = []
    default_of = {k: j for k, j, _ in match_problems(m_def, m_s3)}
    for k, j, lab in match_problems(m_ll, m_s3):
        r_ll, r_s3, tr = m_ll.meta["results"][j], m_s3.meta["results"][k], traces[k]
        r_t = m_t.meta["results"][k] if m_t is not None else None
        r_d = m_def.meta["results"][default_of[k]]
        sub = Subproblem(ds, ys_all[k], C, C, bias=bias)
        w_ll = r_ll.w if (K > 1 or m_ll.label[0] == m_s3.label[0]) else -r_ll.w
        w_d = r_d.w if (K > 1 or m_def.label[0] == m_s3.label[0]) else -r_d.w
        rc = r_d.extra["recheck"]
        a_ll, a_s3 = r_ll.alpha, r_s3.alpha
        nz_ll, nz_s3 = a_ll > 0, a_s3 > 0
        p = {"label": lab if K > 1 else None, "rows": l,
             "n_zero_llsvm": int(l - nz_ll.sum()), "n_zero_s3": int(l - nz_s3.sum()),
             "n_at_C_llsvm": int(np.count_nonzero(a_ll >= C)), "n_at_C_s3": int(np.count_nonzero(a_s3 >= C)),
             "mismatch": mismatch(a_ll, a_s3),
             "dual_llsvm": float(r_ll.dual), "dual_s3": float(r_s3.dual),
             "primal_llsvm": float(sub.primal(np.ascontiguousarray(w_ll), True)), "primal_s3": float(r_s3.primal),
             "n_iter_llsvm": int(r_ll.n_iter), "n_iter_s3": int(r_s3.n_iter),
             "converged_llsvm": bool(r_ll.converged), "converged_s3": bool(r_s3.converged),
             "active_first_pass": int(r_ll.extra["active_first_pass"]),
             "llsvm_n_zero_extra": int(r_ll.extra["n_zero"]),
             "trace_equals_train": bool(np.array_equal(tr["alpha"], a_s3) and tr["n_iter"] == r_s3.n_iter),
             "llsvm_trace": {"active": [int(r_ll.extra["active_first_pass"])] + [int(a) for a in r_ll.extra["active"]],
                             "dual": [float(d) for d in r_ll.extra["dual_trace"]],
                             "blocks": [int(b) for b in r_ll.extra["blocks"]],
                             "seconds": [float(s) for s in r_ll.extra["seconds"]]},
             "s3_trace": {k2: tr[k2] for k2 in ("active", "dual", "resets", "seconds")},
             # the default mode (re-check passes); primal_default by the same definition as the others,
             # primal_default_solver the one its last re-check pass computed
             "primal_default": float(sub.primal(np.ascontiguousarray(w_d), True)),
             "primal_default_solver": _f(r_d.primal), "dual_default": float(r_d.dual),
             "max_violation_default": _f(r_d.max_violation), "converged_default": bool(r_d.converged),
             "n_iter_default": int(r_d.n_iter), "rechecks_default": len(rc),
             "reentered_default": int(sum(c["reentered"] for c in rc)),
             "mismatch_default_vs_s3": mismatch(r_d.alpha, a_s3) if r_d.alpha is not None else None}
        if r_t is not None:
            nz_t = r_t.alpha > 0
            p.update(n_zero_tight=int(l - nz_t.sum()), mismatch_tight=mismatch(a_ll, r_t.alpha),
                     mismatch_s3_vs_tight=mismatch(a_s3, r_t.alpha), dual_tight=float(r_t.dual),
                     primal_tight=float(r_t.primal), n_iter_tight=int(r_t.n_iter),
                     converged_tight=bool(r_t.converged))
        problems.append(p)
    if not all(p["trace_equals_train"] for p in problems):
        say(f"#   WARNING: the traced -s 3 run differs from llsvm.train's on {name}")

    out = {"set": name, "kind": kind, "path": path, "test_path": test_path, "rows": l,
           "features": int(ds.n_features), "nnz": int(ds.nnz), "classes": int(labels.size), "problems_n": K,
           "load_seconds": load_s, "llsvm_seconds": t_ll, "default_seconds": t_def,
           "llsvm_first_pass_seconds": _f(m_ll.meta.get("llsvm", {}).get("first_pass_seconds")),
           "s3_seconds": t_s3, "tight_seconds": t_t, "tight_eps": args.tight_eps, "problems": problems}
    del ds, traces
    gc.collect()
    if test_path:
        te = llsvm.read_dataset(test_path)
        out.update(test_rows=te.n_rows, acc_llsvm=accuracy(m_ll, te), acc_s3=accuracy(m_s3, te),
                   acc_tight=accuracy(m_t, te) if m_t is not None else None, acc_default=accuracy(m_def, te))
        del te
    gc.collect()
    out["figure1"] = figure_series(out, args.fig_iter)
    return out


# -- Figure 1 -----------------------------------------------------------------------------------------------------
def _summed(series, t):
    """Sum over problems of series[k][t], a finished problem contributing its last value; None when all ended."""
    if all(len(s) <= t for s in series):
        return None
    return sum(s[min(t, len(s) - 1)] for s in series)


def figure_series(res, n_iter):
    """Active set (% of rows x problems) and D summed over the problems: llsvm at iterations 0..n_iter (0 = first
    pass), -s 3 at iterations 1..n_iter."""
    ps = res["problems"]
    total = res["rows"] * len(ps)
    la = [p["llsvm_trace"]["active"] for p in ps]
    ld = [p["llsvm_trace"]["dual"] for p in ps]
    sa = [p["s3_trace"]["active"] for p in ps]
    sd = [p["s3_trace"]["dual"] for p in ps]
    sr = [p["s3_trace"]["resets"] for p in ps]
    fig = {"total": total, "llsvm": [], "s3": []}
    for t in range(n_iter + 1):
        a, d = _summed(la, t), _summed(ld, t)
        if a is not None:
            fig["llsvm"].append({"iter": t, "active": a, "active_pct": 100.0 * a / total, "dual": d})
    for t in range(1, n_iter + 1):
        a, d = _summed(sa, t - 1), _summed(sd, t - 1)
        if a is not None:
            reset = any(len(r) >= t and r[t - 1] for r in sr)
            fig["s3"].append({"iter": t, "active": a, "active_pct": 100.0 * a / total, "dual": d, "reset": reset})
    tight = [p.get("dual_tight") for p in ps]
    fig["dual_tight"] = sum(tight) if all(x is not None for x in tight) else None
    return fig


PAPER = "Alrajeh, Takeda, Niranjan (ICMV 2014)"
GAP_FLOOR = 1e-10         # plotted in place of a relative gap <= 0 (D at or above the reference D*)


def _gap(d, d_star):
    return max((d_star - d) / abs(d_star), GAP_FLOOR)


def _panel(ax_a, ax_d, res, legend=True):
    """Figure 1's two panels for one set: the active set, and the dual objective as its relative gap to D* on a log
    axis (D itself spans orders of magnitude from set to set, and a D* line far above the first iterations' D
    flattened the curves); without D* (--tight-eps 0), D itself."""
    f = res["figure1"]
    xl = [e["iter"] for e in f["llsvm"]]
    xs = [e["iter"] for e in f["s3"]]
    ll = dict(marker="o", ls="-", color="tab:red", label="-s llsvm --one-pass", ms=5)
    s3 = dict(marker="s", ls="--", color="tab:blue", label="-s 3 (LIBLINEAR)", ms=4, mfc="none")
    ax_a.plot(xl, [e["active_pct"] for e in f["llsvm"]], **ll)
    ax_a.plot(xs, [e["active_pct"] for e in f["s3"]], **s3)
    d_star = f["dual_tight"]
    k = len(res["problems"])
    if d_star:
        ax_d.plot(xl, [_gap(e["dual"], d_star) for e in f["llsvm"]], **ll)
        ax_d.plot(xs, [_gap(e["dual"], d_star) for e in f["s3"]], **s3)
        ax_d.set_yscale("log")
        ax_d.set_ylabel("(D* - D) / |D*|, log" + (" (D summed)" if k > 1 else ""), fontsize=8)
        gaps = [_gap(e["dual"], d_star) for s in ("llsvm", "s3") for e in f[s]]
        ax_d.set_ylim(min([1e-3] + [0.5 * g for g in gaps]), 2.0)     # one scale: a flat curve looks flat
        ends = [_gap(f[s][-1]["dual"], d_star) for s in ("llsvm", "s3") if f[s]]
        if ends and min(ends) > 0.5:      # the data is flat: say so in the panel
            ps = res["problems"]
            tight = (f"reaches eps {res.get('tight_eps', 1e-3):g} in {max(p['n_iter_tight'] for p in ps)} iterations"
                     if all(p.get("converged_tight") for p in ps) else
                     f"stops at its {max(p.get('n_iter_tight') or 0 for p in ps)}-iteration limit")
            ax_d.text(0.02, 0.04, f"flat: after {max(xl + xs + [0])} iterations both are > 50 % below D* = "
                      f"{d_star:.4g}\n(the tight -s 3 {tight})", transform=ax_d.transAxes, fontsize=6.5,
                      va="bottom")
    else:
        ax_d.plot(xl, [e["dual"] for e in f["llsvm"]], **ll)
        ax_d.plot(xs, [e["dual"] for e in f["s3"]], **s3)
        ax_d.set_ylabel("dual objective D" + (" (summed)" if k > 1 else ""), fontsize=8)
    ax_a.set_title(f"{res['set']} ({res['rows']:,} x {res['features']:,}"
                   + (f", {k} one-vs-rest problems" if k > 1 else "") + ")", fontsize=9)
    ax_a.set_ylabel("active set [% of rows" + (" x problems" if k > 1 else "") + "]", fontsize=8)
    ax_a.set_ylim(0, 105)
    ax_d.set_xlabel("iteration (llsvm: 0 = first pass)", fontsize=8)
    for ax in (ax_a, ax_d):
        ax.grid(alpha=0.3)
        ax.tick_params(labelsize=7)
        ax.set_xticks(range(0, max(xl + xs + [1]) + 1))
    if legend:
        ax_a.legend(fontsize=7)
        ax_d.legend(fontsize=7, loc="lower left" if not d_star else "best")


def _suptitle(fig, width_in):
    """The figure's title, naming the paper's Figure 1, in one or two lines as the width allows."""
    text = f"{PAPER}, Figure 1: active set (above), dual objective's gap to D* (below)"
    fig.suptitle(text if width_in >= 8 else text.replace(", Figure 1: ", ", Figure 1:\n"), fontsize=9)


def figures(results):
    """Figure 1 per set, and the generated sets side by side: [(file name, matplotlib figure)]."""
    plt = pyplot()
    out = []
    for res in results:
        fig, (a, d) = plt.subplots(2, 1, figsize=(6, 6.8), sharex=True)
        _panel(a, d, res)
        _suptitle(fig, 6)
        out.append((f"figure1-{res['set']}.png", fig))
    gen = [r for r in results if r["kind"] == "generated"]
    if gen:
        n = len(gen)
        fig, axes = plt.subplots(2, n, figsize=(max(4.6 * n, 6), 6.8), sharex="col", squeeze=False)
        for i, res in enumerate(gen):
            _panel(axes[0][i], axes[1][i], res, legend=(i == 0))
        _suptitle(fig, max(4.6 * n, 6))
        out.append(("figure1-generated.png", fig))
    return out


def plot_all(results, out_dir):
    return [save_png(fig, os.path.join(out_dir, name)) for name, fig in figures(results)]


# -- Markdown -----------------------------------------------------------------------------------------------------
def _n(x):
    return "–" if x is None else f"{x:,}"


def _g(x, fmt=".4f"):
    return "–" if x is None else format(x, fmt)


def _mis(values):
    """One problem: the value; several: mean (max)."""
    if any(v is None for v in values):
        return "–"
    if len(values) == 1:
        return f"{values[0]:.4f}"
    return f"{np.mean(values):.4f} (max {max(values):.4f})"


def _sum(ps, key):
    v = [p.get(key) for p in ps]
    return None if any(x is None for x in v) else sum(v)


def table2_md(results, args, meta):
    tight = f"eps {args.tight_eps:g}" if args.tight_eps > 0 else None
    lines = ["# Table 2: non-active dual variables of -s llsvm --one-pass vs -s 3 (LIBLINEAR)\n",
             f"{meta['when']}, python {meta['python']}, {meta['cpus']} cpus. C={args.C:g}, -B {args.bias:g}, "
             f"seed {args.seed}, one thread; 'llsvm' is -s llsvm --one-pass, the paper's Algorithm 2, at inner_eps "
             f"{meta['llsvm_inner_eps']:g} (relative dual change), inner_iter {meta['inner_iter']}; "
             f"-s 3 eps {args.eps:g}" + (f"; reference -s 3 {tight} (max {args.tight_max_iter} iterations)"
                                         if tight else "") + ".\n",
             "Non-active: alpha_i = 0. Mismatch: fraction of rows whose alpha_i = 0 / alpha_i > 0 status differs. "
             "Sets with K > 2 classes have K one-vs-rest problems: counts are summed over them (out of K x rows), "
             "mismatch is the mean over the problems (max in brackets).\n"]
    cols = ["set", "rows", "problems", "alpha=0 llsvm", "alpha=0 -s 3"]
    if tight:
        cols += [f"alpha=0 -s 3 {tight}"]
    cols += ["mismatch llsvm vs -s 3"]
    if tight:
        cols += [f"mismatch llsvm vs -s 3 {tight}", f"mismatch -s 3 vs -s 3 {tight}"]
    lines += md_header(cols)
    for r in results:
        ps = r["problems"]
        row = [r["set"], f"{r['rows']:,}", str(len(ps)), _n(_sum(ps, "n_zero_llsvm")), _n(_sum(ps, "n_zero_s3"))]
        if tight:
            row += [_n(_sum(ps, "n_zero_tight"))]
        row += [_mis([p["mismatch"] for p in ps])]
        if tight:
            row += [_mis([p.get("mismatch_tight") for p in ps]), _mis([p.get("mismatch_s3_vs_tight") for p in ps])]
        lines.append(md_row(row))

    lines += ["\n## Objectives, accuracy, time\n",
              "D: dual objective sum(alpha) - |w|^2/2 (summed over the problems); P: primal |w|^2/2 + C sum hinge; "
              "gap to D*: (D* - D) / |D*| with D* the tight -s 3 dual. Accuracy on the test file (– when there is "
              "none). Seconds: one training run on the loaded set (llsvm: first pass in brackets). Iterations: "
              "outer iterations (max over the problems); a '!' marks a run that hit its iteration limit.\n"]
    cols = ["set", "D llsvm", "D -s 3", "D*", "gap llsvm", "gap -s 3", "P llsvm", "P -s 3", "acc llsvm",
            "acc -s 3", "acc -s 3 tight", "s llsvm", "s -s 3", "s -s 3 tight", "iter llsvm", "iter -s 3",
            "iter tight", "active after 1st pass"]
    lines += md_header(cols)
    for r in results:
        ps = r["problems"]
        d_ll, d_s3, d_t = _sum(ps, "dual_llsvm"), _sum(ps, "dual_s3"), _sum(ps, "dual_tight")

        def gap(d):
            return None if d_t is None or d_t == 0 else (d_t - d) / abs(d_t)

        def iters(key, conv):
            v = [p.get(key) for p in ps]
            if any(x is None for x in v):
                return "–"
            return f"{max(v)}" + ("" if all(p.get(conv) for p in ps) else "!")

        first = r["llsvm_first_pass_seconds"]
        act = _sum(ps, "active_first_pass")
        row = [r["set"], _g(d_ll, ".6g"), _g(d_s3, ".6g"), _g(d_t, ".6g"), _g(gap(d_ll), ".2e"),
               _g(gap(d_s3), ".2e"), _g(_sum(ps, "primal_llsvm"), ".6g"), _g(_sum(ps, "primal_s3"), ".6g"),
               _g(r.get("acc_llsvm"), ".2f"), _g(r.get("acc_s3"), ".2f"), _g(r.get("acc_tight"), ".2f"),
               f"{r['llsvm_seconds']:.3f}" + (f" ({first:.3f})" if first is not None else ""),
               f"{r['s3_seconds']:.3f}", _g(r["tight_seconds"], ".3f"),
               iters("n_iter_llsvm", "converged_llsvm"), iters("n_iter_s3", "converged_s3"),
               iters("n_iter_tight", "converged_tight"),
               f"{100.0 * act / (r['rows'] * len(ps)):.1f}%"]
        lines.append(md_row(row))

    multi = [r for r in results if len(r["problems"]) > 1]
    if multi:
        lines += ["\n## Per class (one-vs-rest problems)\n"]
        cols = ["set", "class", "alpha=0 llsvm", "alpha=0 -s 3"] + ([f"alpha=0 -s 3 {tight}"] if tight else []) \
            + ["mismatch"] + ([f"mismatch vs {tight}"] if tight else []) + ["D llsvm", "D -s 3"] \
            + (["D*"] if tight else []) + ["iter llsvm", "iter -s 3"]
        lines += md_header(cols)
        for r in multi:
            for p in r["problems"]:
                row = [r["set"], str(p["label"]), _n(p["n_zero_llsvm"]), _n(p["n_zero_s3"])]
                if tight:
                    row += [_n(p.get("n_zero_tight"))]
                row += [f"{p['mismatch']:.4f}"]
                if tight:
                    row += [_g(p.get("mismatch_tight"))]
                row += [f"{p['dual_llsvm']:.6g}", f"{p['dual_s3']:.6g}"]
                if tight:
                    row += [_g(p.get("dual_tight"), ".6g")]
                row += [str(p["n_iter_llsvm"]), str(p["n_iter_s3"])]
                lines.append(md_row(row))
    lines += default_md(results, args, meta)
    same = all(p["trace_equals_train"] for r in results for p in r["problems"])
    lines.append(f"\n-s 3's per-iteration trace (figure1.md) comes from a run driven one outer iteration at a time; "
                 f"its final alpha is {'bit-identical to' if same else 'NOT identical to'} llsvm.train's -s 3 alpha "
                 f"on every problem above.")
    lines += ["\n## Checks\n", checks(results).text()]
    return "\n".join(lines) + "\n"


def default_md(results, args, meta):
    """The default mode (re-check passes) beside the paper's algorithm and -s 3: accuracy, primal, passes, time."""
    have_tight = args.tight_eps > 0
    lines = ["\n## Default mode: -s llsvm with re-check passes\n",
             f"-s llsvm without --one-pass, at -e {meta['llsvm_default_eps']:g} (the largest projected-gradient "
             f"violation over every row, checked by re-check passes over the whole input) and inner_eps "
             f"{meta['llsvm_default_inner_eps']:g}. rel P: (P - P*)/P*, P summed over the problems and P* the "
             + (f"-s 3 eps {args.tight_eps:g} primal" if have_tight else "reference primal (none: --tight-eps 0)")
             + ". Re-check passes: the most any problem ran; re-entered: dropped rows returned to the active sets, "
               "summed; certified: every problem's last re-check pass found max |PG| <= eps (a '!' marks a run "
               "ended by --max-passes). P* converged: whether the reference -s 3 run met its eps within "
               f"{args.tight_max_iter} iterations (when not, rel P may be negative). Seconds: one training run on the "
               "loaded set.\n"]
    cols = ["set", "acc default", "acc --one-pass", "acc -s 3", "acc -s 3 tight", "rel P default",
            "rel P --one-pass", "rel P -s 3", "P* converged", "max violation", "re-check passes", "re-entered",
            "outer its", "s default", "s --one-pass", "s -s 3"]
    lines += md_header(cols)
    for r in results:
        ps = r["problems"]
        p_t = _sum(ps, "primal_tight")

        def rel(key):
            v = _sum(ps, key)
            return None if v is None or not p_t else (v - p_t) / abs(p_t)

        viol = [p["max_violation_default"] for p in ps]
        certified = all(p["converged_default"] for p in ps)
        row = [r["set"], _g(r.get("acc_default"), ".2f"), _g(r.get("acc_llsvm"), ".2f"), _g(r.get("acc_s3"), ".2f"),
               _g(r.get("acc_tight"), ".2f"), _g(rel("primal_default"), ".2e"), _g(rel("primal_llsvm"), ".2e"),
               _g(rel("primal_s3"), ".2e"),
               "–" if p_t is None else ("yes" if all(p.get("converged_tight") for p in ps) else "no"),
               _g(None if None in viol else max(viol), ".3g"),
               f"{max(p['rechecks_default'] for p in ps)}" + ("" if certified else "!"),
               _n(sum(p["reentered_default"] for p in ps)), str(max(p["n_iter_default"] for p in ps)),
               f"{r['default_seconds']:.3f}", f"{r['llsvm_seconds']:.3f}", f"{r['s3_seconds']:.3f}"]
        lines.append(md_row(row))
    return lines


def figure1_md(results, args):
    lines = ["# Figure 1: active set and dual objective per iteration, -s llsvm --one-pass vs -s 3\n",
             "llsvm: the paper's Algorithm 2 (--one-pass); iteration 0 is the state after its first pass over the "
             "data, iteration k after its k-th outer iteration of block optimization (each runs inner_iter passes "
             "over the active set); its rows stop where it met its stopping rule. -s 3: state after LIBLINEAR's "
             "k-th outer iteration (active_size as LIBLINEAR keeps it: a '*' marks an iteration after which "
             "shrinking was undone, so active_size is all rows again). For K > 2 classes the numbers are summed "
             "over the K one-vs-rest problems (a problem that has stopped keeps its last value) and the active set "
             "is a percentage of K x rows. "
             "D = sum(alpha) - |w|^2/2; D* is the tight -s 3 optimum.\n"]
    for r in results:
        f = r["figure1"]
        lines.append(f"## {r['set']} ({r['rows']:,} rows" + (f", {len(r['problems'])} problems" if
                                                             len(r["problems"]) > 1 else "") +
                     (f"; D* = {f['dual_tight']:.6g}" if f["dual_tight"] is not None else "") + ")\n")
        lines += md_header(["iter", "llsvm active", "llsvm active %", "llsvm D", "-s 3 active", "-s 3 active %",
                            "-s 3 D"])
        ll = {e["iter"]: e for e in f["llsvm"]}
        s3 = {e["iter"]: e for e in f["s3"]}
        for t in range(args.fig_iter + 1):
            a, b = ll.get(t), s3.get(t)
            if a is None and b is None and t > 0:
                continue
            row = [str(t)]
            row += ["", "", ""] if a is None else [f"{a['active']:,}", f"{a['active_pct']:.2f}", f"{a['dual']:.6g}"]
            row += ["", "", ""] if b is None else [f"{b['active']:,}" + ("*" if b["reset"] else ""),
                                                   f"{b['active_pct']:.2f}", f"{b['dual']:.6g}"]
            lines.append(md_row(row))
        lines.append("")
    return "\n".join(lines)


def checks(results):
    """The paper prints no numbers to meet (Table 2 is of sets not public); what the figures rest on is checked: the
    -s 3 curve of Figure 1 is LIBLINEAR's run (the traced run's final alpha and iterations equal llsvm.train's)."""
    acc = Acceptance()
    for r in results:
        bad = [p["label"] for p in r["problems"] if not p["trace_equals_train"]]
        acc.add("trace", not bad, f"{r['set']}: the traced -s 3 run equals llsvm.train's (alpha bit for bit, "
                "iterations)" + (f"; differs on the problem(s) of class {bad}" if bad and bad[0] is not None else ""))
    return acc


# -- main ---------------------------------------------------------------------------------------------------------
def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sets", default=None,
                    help="comma list of set names (generated: demo, sparse, dense, multiclass under --data-dir; "
                         "public: file stems in --shared-dir, e.g. a9a) or paths; default: the generated sets "
                         "present plus every training set in the public directory")
    ap.add_argument("--out", default=None, help="output directory (default reproduce-results/<seed>/llsvm; --quick: "
                    ".../llsvm/quick)")
    ap.add_argument("--quick", action="store_true",
                    help=f"only small sets (training file up to {QUICK_MAX_BYTES >> 20} MB): a smoke run")
    ap.add_argument("--inner-iter", type=int, default=None, help="-s llsvm's passes per loaded block (default 5)")
    ap.add_argument("--C", type=float, default=1.0)
    ap.add_argument("--bias", type=float, default=1.0, help="-B (default 1)")
    ap.add_argument("--seed", type=int, default=DEFAULT_SEED, help=f"every solver's seed (default {DEFAULT_SEED})")
    ap.add_argument("--eps", type=float, default=0.1, help="-s 3's eps (LIBLINEAR's default 0.1)")
    ap.add_argument("--llsvm-eps", type=float, default=None,
                    help="-s llsvm --one-pass's tolerance, LLSVMOptions.inner_eps: the relative change of the dual "
                         f"per outer iteration (default {DEFAULT_INNER_EPS:g}, the paper's)")
    ap.add_argument("--tight-eps", type=float, default=1e-3, help="reference -s 3 eps (0: no reference run)")
    ap.add_argument("--tight-max-iter", type=int, default=1000)
    ap.add_argument("--fig-iter", type=int, default=10, help="iterations shown in Figure 1")
    ap.add_argument("--data-dir", default=os.path.join(ROOT, "data"))
    ap.add_argument("--shared-dir", default=DATA_DIR, metavar="DIR",
                    help="the public sets (NAME.xz; default data/public, which `make data` fills)")
    args = ap.parse_args(argv)

    shared_dir = os.path.normpath(args.shared_dir)
    if args.sets is None:
        names = [n for n in GENERATED if not args.quick or n in QUICK_GENERATED]
        if os.path.isdir(shared_dir):
            names += shared_training_sets(shared_dir)
        else:
            say(f"# skipping the public sets: {shared_dir} is absent ({FETCH_HINT})")
    else:
        names = [s for s in args.sets.split(",") if s]
    plan = []
    for name in names:
        found = resolve(name, args.data_dir, GENERATED, shared_dir)
        if found is None:
            hint = " (make data/%s)" % name if name in GENERATED else ""
            say(f"# skipping {name}: no such file{hint}")
            continue
        kind, path, test = found
        if args.quick and os.path.getsize(path) > QUICK_MAX_BYTES:
            say(f"# --quick: skipping {name} ({os.path.getsize(path) / 1e6:.0f} MB)")
            continue
        plan.append((os.path.basename(name), kind, path, test))
    if not plan:
        say("no data set to run")
        return 1

    stamp = timestamp()
    out_dir = reproduce_dir(os.path.join("llsvm", *(["quick"] if args.quick else [])), args.seed, args.out)
    defaults = LLSVMOptions()
    meta = run_meta(stamp, C=args.C, bias=args.bias, seed=args.seed, eps_s3=args.eps,
                    llsvm_inner_eps=DEFAULT_INNER_EPS if args.llsvm_eps is None else args.llsvm_eps,
                    llsvm_default_eps=LLSVM_DEFAULT_EPS, llsvm_default_inner_eps=defaults.inner_eps,
                    inner_iter=args.inner_iter if args.inner_iter is not None else defaults.inner_iter,
                    tight_eps=args.tight_eps, tight_max_iter=args.tight_max_iter, fig_iter=args.fig_iter,
                    quick=args.quick)
    results = []
    t_all = time.perf_counter()
    for name, kind, path, test in plan:
        results.append(run_set(name, kind, path, test, args, say))
    pngs = plot_all(results, out_dir)
    table = table2_md(results, args, meta)
    with open(os.path.join(out_dir, "table2.md"), "w") as f:
        f.write(table)
    with open(os.path.join(out_dir, "figure1.md"), "w") as f:
        f.write(figure1_md(results, args))
    meta["seconds"] = time.perf_counter() - t_all
    with open(os.path.join(out_dir, "results.json"), "w") as f:
        json.dump({"meta": meta, "sets": results, "pngs": [os.path.basename(p) for p in pngs]}, f, indent=1)
    say(f"# wrote {out_dir}: table2.md, figure1.md, results.json, {len(pngs)} PNGs "
        f"({meta['seconds']:.1f} s)")
    print(table)
    return exit_status("reproduce-llsvm", checks(results).failed)


if __name__ == "__main__":
    sys.exit(main())
