#!/usr/bin/env python3
"""Reproduce Figures 3 and 4 of Matsushima, Vishwanathan, Smola, "Linear support vector machines via dual cached
loops" (KDD 2012): the relative dual objective difference
(D* - D_t) / D* against wall-clock time.

`make reproduce-streamsvm` (REPRODUCE_ARGS="--quick" for a smoke run on the demo set, REPRODUCE_ARGS="--sets sparse"
for one set). For every data set (a generated two-class set, trained from its binary file, data/<set>.bin, written
from the text file with llsvm.write_binary when missing), C = 1, no bias (the CLI's default -B -1), seed 1:

  - D*: the dual of -s 3 at eps 1e-4 (llsvm.train on the set loaded in memory);
  - Figure 3: the four solvers of the -s 3 problem, each in this process, the data file in the page cache:
      -s streamsvm  llsvm.train(path, solver="streamsvm", eps=E, threads=2, options=StreamOptions(memory=M)): the
                    reader and the trainer on two threads (the CLI's default); D and the time after every reader
                    pass, from FitResult.extra["passes"];
      -s bm         llsvm.train(path, solver="bm", eps=E, options=StreamOptions(memory=M)): D after every block,
                    FitResult.extra["trace"];
                    E = --stream-eps, the paper's 0.001 (both solvers' default -e is 0.1, -s 3's);
      -s llsvm      llsvm.train(path, solver="llsvm", options=LLSVMOptions(memory=M)): D after its first pass and
                    after every outer iteration, FitResult.extra["dual_trace"] / ["seconds"] (first pass:
                    model.meta["llsvm"]["first_pass_seconds"]);
      -s 3          in memory, driven one outer iteration at a time (a DCDState from cext/_linear.pyx built as
                    solvers.solve_dcd builds it, `state.run(1, eps)`, as scripts/reproduce_llsvm.py does), at its
                    default eps 0.1; its clock starts with loading the binary file into memory (load time included,
                    as a user's `llsvm-train -s 3` pays it).
    The out-of-core solvers' times run from the start of their fit (which opens and reads the file). M = --memory
    (64M), or --small-memory (1M) for a set whose binary file is smaller than 4 x --memory (the demo set), so that
    the cache is smaller than the data. The budget holds alpha and the per-row state, the weight vectors and a
    block of the binary file, read whole (the demo set's is one block of 497 KB): --memory below that is refused;
  - Figure 4: -s streamsvm for several memory budgets (--memories, default 32M,64M,256M,unlimited (the sparse set
    needs 20.3 MiB at least); for small sets --small-memories, default 768K,1M,1280K,unlimited).

Output in --out (default reproduce-results/<seed>/streamsvm, --quick: .../streamsvm/quick): figure3-<set>.png,
figure4-<set>.png, table.md (per set and solver: time to reach 1e-2, 1e-3 and 1e-4 relative, the final relative
difference, passes / iterations) and results.json with every trace. table.md is printed at the end. The paper
prints no numbers to meet; the exit status is 1 when the reference run giving D* did not converge.
"""
import argparse
import gc
import json
import math
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
from llsvm.memory import parse_size  # noqa: E402
from llsvm.options import LLSVMOptions, StreamOptions  # noqa: E402
from llsvm.params import DUAL_MAX_ITER  # noqa: E402
from llsvm.solvers import Subproblem, group_classes  # noqa: E402
from benchutil import (DEFAULT_SEED, Acceptance, accuracy, ensure_binary, exit_status, md_header,  # noqa: E402
                       md_row, pyplot, reproduce_dir, resolve, run_meta, save_png, say, timed_train, timestamp,
                       warm_page_cache)
from reproduce_llsvm import problem_seeds  # noqa: E402

GENERATED = ("demo", "sparse", "dense")       # two-class generated sets (data/Makefile.mk)
THRESHOLDS = (1e-2, 1e-3, 1e-4)
FLOOR = 1e-10                                 # plotted in place of a relative difference <= 0 (at or above D*)
SOLVERS = ("streamsvm", "bm", "llsvm", "s3")
LABELS = {"streamsvm": "-s streamsvm", "bm": "-s bm", "llsvm": "-s llsvm", "s3": "-s 3 (in memory)"}
COLORS = {"streamsvm": "tab:red", "bm": "tab:green", "llsvm": "tab:purple", "s3": "tab:blue"}


# -- data ---------------------------------------------------------------------------------------------------------
def size_text(n):
    if n is None:
        return "unlimited"
    for unit, k in (("G", 30), ("M", 20), ("K", 10)):
        if n >= 1 << k and n % (1 << k) == 0:
            return f"{n >> k}{unit}"
    return str(n)


def parse_memories(text):
    out = []
    for s in text.split(","):
        s = s.strip()
        if s:
            out.append(None if s.lower() in ("unlimited", "none", "0") else parse_size(s))
    return out


# -- runs -----------------------------------------------------------------------------------------------------------
def trace_s3(ds, y_sign, C, bias, eps, seed, offset, max_iter=DUAL_MAX_ITER):
    """-s 3 on one binary problem exactly as solvers.solve_dcd runs it, D and the time after every outer iteration
    (the clock starts `offset` seconds in: the load time; setup counted)."""
    t0 = time.perf_counter()
    sub = Subproblem(ds, y_sign, C, C, bias=bias)
    alpha = np.zeros(sub.l)
    w = np.zeros(sub.w_size)
    xnorm = np.empty(sub.l)
    KL.sq_norms(*sub.args, xnorm)
    state = KL.DCDState(*sub.args, sub.y, alpha, w, xnorm, np.arange(sub.l, dtype=np.int32), sub.Cp, sub.Cn, True,
                        RNG.rng_state(seed))
    seconds, dual = [], []
    converged = False
    while state.n_iter < max_iter:
        converged, _ = state.run(1, eps, True)
        seconds.append(offset + time.perf_counter() - t0)          # D below is computed off the clock
        t_pause = time.perf_counter()
        dual.append(float(alpha.sum()) - 0.5 * float(w @ w))
        t0 += time.perf_counter() - t_pause
        if converged:
            break
    return {"seconds": seconds, "dual": dual, "n_iter": int(state.n_iter), "converged": bool(converged),
            "wall": seconds[-1] if seconds else offset, "w": w}


def one_problem(model, what):
    res = model.meta["results"]
    if len(res) != 1:
        raise SystemExit(f"{what}: {len(res)} one-vs-rest problems; this reproduction takes two-class sets only")
    return res[0]


def run_streamsvm(path, args, memory):
    warm_page_cache(path)
    wall, m = timed_train(path, solver="streamsvm", C=args.C, bias=args.bias, seed=args.seed, eps=args.stream_eps,
                          threads=args.stream_threads, options=StreamOptions(memory=memory))
    r = one_problem(m, "-s streamsvm")
    passes = r.extra["passes"]
    return {"solver": "streamsvm", "memory": memory, "wall": wall, "n_iter": int(r.n_iter),
            "converged": bool(r.converged), "dual_final": float(r.dual),
            "seconds": [p["seconds"] for p in passes], "dual": [p["dual"] for p in passes],
            "omega": int(r.extra["omega"]), "primal": [p["primal"] for p in passes],
            "cache_fill": [p["cache_fill"] for p in passes], "updates": [p["updates"] for p in passes],
            "updates_per_second": [p["updates_per_second"] for p in passes],
            "reader_mb_per_second": [p["reader_mb_per_second"] for p in passes], "model": m}


def run_bm(path, args, memory):
    warm_page_cache(path)
    wall, m = timed_train(path, solver="bm", C=args.C, bias=args.bias, seed=args.seed, eps=args.stream_eps,
                          options=StreamOptions(memory=memory))
    r = one_problem(m, "-s bm")
    tr = r.extra["trace"]
    return {"solver": "bm", "memory": memory, "wall": wall, "n_iter": int(r.n_iter), "converged": bool(r.converged),
            "dual_final": float(r.dual), "seconds": [t["seconds"] for t in tr], "dual": [t["dual"] for t in tr],
            "blocks": int(r.extra["blocks"]), "inner_iter": [t.get("inner_iter") for t in tr], "model": m}


def run_llsvm(path, args, memory):
    warm_page_cache(path)
    wall, m = timed_train(path, solver="llsvm", C=args.C, bias=args.bias, seed=args.seed,
                          options=LLSVMOptions(memory=memory))
    r = one_problem(m, "-s llsvm")
    dual = [float(d) for d in r.extra["dual_trace"]]
    seconds = [float(s) for s in r.extra["seconds"]]
    note = None
    if len(dual) == len(seconds) + 1:
        # the first-pass dual has no time of its own in the trace: the first pass's duration
        seconds = [float(m.meta["llsvm"]["first_pass_seconds"])] + seconds
        note = "first point timed by meta['llsvm']['first_pass_seconds']"
    elif len(dual) != len(seconds):
        n = min(len(dual), len(seconds))
        note = f"dual_trace ({len(dual)}) and seconds ({len(seconds)}) differ in length; last {n} paired"
        dual, seconds = dual[-n:], seconds[-n:]
    return {"solver": "llsvm", "memory": memory, "wall": wall, "n_iter": int(r.n_iter),
            "converged": bool(r.converged), "dual_final": float(r.dual), "seconds": seconds, "dual": dual,
            "blocks": [int(b) for b in r.extra["blocks"]], "trace_note": note, "model": m}


def accuracy_w(w, bias, labels, te):
    """Test accuracy of a binary w (class labels[0] is +1), as LIBLINEAR predicts."""
    if te is None:
        return None
    n = w.size - (1 if bias >= 0 else 0)
    X = te.to_csr()
    if X.shape[1] > n:
        X = X[:, :n]
    margin = X @ w[:X.shape[1]] + (w[-1] * bias if bias >= 0 else 0.0)
    pred = np.where(margin > 0, labels[0], labels[1])
    return 100.0 * float(np.mean(pred == np.trunc(te.y)))


def summarize(run, d_star):
    """Relative differences, the times to reach THRESHOLDS, the final difference."""
    rel = [(d_star - d) / abs(d_star) for d in run["dual"]]
    run["rel"] = rel
    reach = {}
    for thr in THRESHOLDS:
        reach[f"{thr:g}"] = next((s for s, r in zip(run["seconds"], rel) if r <= thr), None)
    run["reach"] = reach
    run["rel_final"] = (d_star - run["dual_final"]) / abs(d_star)
    return run


def run_set(name, text_path, test_path, args):
    # a binary input file is used as it is; a text file through its binary copy (written when missing or stale)
    bin_path = text_path if llsvm.file_kind(text_path) == "binary" else \
        ensure_binary(text_path, os.path.join(args.bin_dir, os.path.basename(text_path) + ".bin"), say, "#   ")
    size = os.path.getsize(bin_path)
    small = size < 4 * args.memory
    mem3 = args.small_memory if small else args.memory
    mems4 = args.small_memories if small else args.memories
    warm_page_cache(bin_path)
    t0 = time.perf_counter()
    ds = llsvm.read_dataset(bin_path)
    load_s = time.perf_counter() - t0
    labels, cls = group_classes(ds.y)
    if labels.size != 2:
        say(f"# skipping {name}: {labels.size} classes (two-class sets only)")
        return None
    say(f"# {name}: {ds.n_rows:,} rows, {ds.n_features:,} features, {ds.nnz:,} nnz, binary file {size / 1e6:.1f} MB "
        f"(loaded in {load_s:.2f} s); --memory {size_text(mem3)}, Figure 4: "
        + ", ".join(size_text(m) for m in mems4))
    # D*
    t_star, m_star = timed_train(ds, solver=3, C=args.C, bias=args.bias, seed=args.seed, eps=args.star_eps)
    r_star = one_problem(m_star, "-s 3")
    d_star = float(r_star.dual)
    say(f"#   D* = {d_star:.12g} (-s 3 eps {args.star_eps:g}: {t_star:.2f} s, {r_star.n_iter} iterations"
        f"{'' if r_star.converged else ', NOT converged'})")
    # -s 3, one outer iteration at a time, on the same sub-seed as llsvm.train's
    y_sign = np.where(cls == 0, 1, -1).astype(np.int8)
    seed = problem_seeds(args.seed, 1)[0]
    s3 = trace_s3(ds, y_sign, args.C, args.bias, args.s3_eps, seed, load_s)
    s3.update(solver="s3", memory=None, n_iter=s3["n_iter"], dual_final=s3["dual"][-1], load_seconds=load_s)
    say(f"#   -s 3 eps {args.s3_eps:g}: {s3['wall']:.2f} s with loading, {s3['n_iter']} iterations")
    shape = {"rows": int(ds.n_rows), "features": int(ds.n_features), "nnz": int(ds.nnz)}
    del ds
    gc.collect()
    te = llsvm.read_dataset(test_path) if test_path else None
    runs = {"s3": summarize(s3, d_star)}
    s3["acc"] = accuracy_w(s3.pop("w"), args.bias, labels, te)
    s3["acc_star"] = accuracy(m_star, te)
    del m_star
    gc.collect()
    for solver, fn in (("streamsvm", run_streamsvm), ("bm", run_bm), ("llsvm", run_llsvm)):
        r = fn(bin_path, args, mem3)
        r["acc"] = accuracy(r.pop("model"), te)
        runs[solver] = summarize(r, d_star)
        say(f"#   -s {solver} --memory {size_text(mem3)}: {r['wall']:.2f} s, {r['n_iter']} "
            f"{'passes' if solver == 'streamsvm' else 'iterations'}, final {r['rel_final']:+.2e}, "
            f"1e-3 at {_t(r['reach']['0.001'])} s" + ("" if r["converged"] else " (max-iter)"))
        gc.collect()
    fig4 = []
    for mem in mems4:
        if mem == mem3:
            r = dict(runs["streamsvm"])
        else:
            r = run_streamsvm(bin_path, args, mem)
            r["acc"] = accuracy(r.pop("model"), te)
            summarize(r, d_star)
            say(f"#   Figure 4 -s streamsvm --memory {size_text(mem)}: {r['wall']:.2f} s, {r['n_iter']} passes, "
                f"final {r['rel_final']:+.2e}, 1e-3 at {_t(r['reach']['0.001'])} s")
            gc.collect()
        fig4.append(r)
    return {"set": name, "text_path": text_path, "binary_path": bin_path, "binary_mb": size / 1e6,
            "test_path": test_path, **shape, "d_star": d_star, "d_star_seconds": t_star,
            "d_star_n_iter": int(r_star.n_iter), "star_eps": args.star_eps,
            "d_star_converged": bool(r_star.converged), "load_seconds": load_s, "memory": mem3,
            "memory_text": size_text(mem3), "runs": runs, "figure4": fig4}


def _t(x):
    """Seconds, three significant digits (the demo set's runs take milliseconds)."""
    return "–" if x is None else (f"{x:.2f}" if x >= 1 else f"{x:.3g}")


# -- plots ----------------------------------------------------------------------------------------------------------
PAPER_NAME = "Matsushima, Vishwanathan, Smola (KDD 2012)"
MARKERS = {"streamsvm": "o", "bm": "s", "llsvm": "^", "s3": "D"}
LINESTYLES = {"streamsvm": "-", "bm": "--", "llsvm": "-.", "s3": ":"}
FIG4_STYLES = (("o", "-"), ("s", "--"), ("^", "-."), ("D", ":"), ("v", "-"), ("x", "--"))


def _curve(ax, run, label, color, marker="o", ls="-"):
    y = [max(r, FLOOR) for r in run["rel"]]
    ax.plot(run["seconds"], y, marker=marker, ls=ls, color=color, label=label, ms=4, mfc="none", lw=1.2)


def _axes(ax, title):
    ax.set_yscale("log")
    ax.set_xlabel("wall-clock time [s]", fontsize=8)
    ax.set_ylabel("(D* - D) / D*, log  (<= 0 drawn at %g)" % FLOOR, fontsize=8)
    ax.set_title(title, fontsize=9)
    for thr in THRESHOLDS:
        ax.axhline(thr, color="gray", lw=0.6, ls=":")
    ax.grid(alpha=0.3)
    ax.tick_params(labelsize=7)
    ax.legend(fontsize=7)


def figures(results):
    """[(file name, matplotlib figure)]: Figures 3 and 4 of every set."""
    plt = pyplot()
    out = []
    for res in results:
        fig, ax = plt.subplots(figsize=(6.6, 4.6))
        for s in SOLVERS:
            run = res["runs"][s]
            mem = "" if s == "s3" else f" --memory {res['memory_text']}"
            _curve(ax, run, LABELS[s] + mem, COLORS[s], MARKERS[s], LINESTYLES[s])
        _axes(ax, f"{PAPER_NAME}, Figure 3:\n{res['set']} ({res['binary_mb']:.3g} MB binary file), C = 1, "
                  "relative dual difference against time")
        out.append((f"figure3-{res['set']}.png", fig))

        fig, ax = plt.subplots(figsize=(6.6, 4.6))
        cmap = plt.get_cmap("viridis")
        n = len(res["figure4"])
        for i, run in enumerate(res["figure4"]):
            mk, ls = FIG4_STYLES[i % len(FIG4_STYLES)]
            _curve(ax, run, f"-s streamsvm --memory {size_text(run['memory'])} (Omega {run['omega']:,} rows)",
                   cmap(i / max(1, n - 1) * 0.9), mk, ls)
        _axes(ax, f"{PAPER_NAME}, Figure 4:\n{res['set']}, -s streamsvm by memory budget")
        out.append((f"figure4-{res['set']}.png", fig))
    return out


def plot_all(results, out_dir):
    return [save_png(fig, os.path.join(out_dir, name)) for name, fig in figures(results)]


# -- Markdown ---------------------------------------------------------------------------------------------------------
def _its(run):
    if run["solver"] == "streamsvm":
        return f"{run['n_iter']} passes"
    if run["solver"] == "bm":
        return f"{run['n_iter']} outer ({run['blocks']} blocks)"
    return f"{run['n_iter']} iterations"


def _rel(x):
    return f"{x:+.2e}"


def table_md(results, meta):
    lines = ["# Figures 3 and 4 (StreamSVM): time to reach a relative dual difference\n",
             f"{meta['when']}, python {meta['python']}, {meta['cpus']} cpus. C={meta['C']:g}, bias {meta['bias']:g}, "
             f"seed {meta['seed']}; D* = dual of -s 3 at eps {meta['star_eps']:g}; -s 3 traced at eps "
             f"{meta['s3_eps']:g} from the start of loading the binary file; -s streamsvm and -s bm at -e "
             f"{meta['stream_eps']:g}; -s streamsvm with "
             f"{meta['stream_threads']} thread(s); the out-of-core solvers from the start of their fit.\n",
             "Seconds to the first record (streamsvm: reader pass; bm: block; llsvm: first pass / outer iteration; "
             "-s 3: outer iteration) with (D* - D)/D* at most 1e-2, 1e-3, 1e-4 (– : never); final: the returned "
             "model's difference (negative: above D*); '!' after the iterations: stopped by max-iter.\n",
             "## Figure 3\n"]
    cols = ["set", "solver", "memory", "t 1e-2", "t 1e-3", "t 1e-4", "final", "passes / iterations", "wall s",
            "acc %"]
    lines += md_header(cols)
    for res in results:
        for s in SOLVERS:
            r = res["runs"][s]
            lines.append(md_row([
                res["set"], LABELS[s], "–" if s == "s3" else res["memory_text"],
                *(_t(r["reach"][f"{t:g}"]) for t in THRESHOLDS), _rel(r["rel_final"]),
                _its(r) + ("" if r["converged"] else " !"), _t(r["wall"]),
                "–" if r.get("acc") is None else f"{r['acc']:.2f}"]))
    lines += ["\n## Figure 4: -s streamsvm by memory budget\n"]
    cols = ["set", "memory", "Omega (cache rows)", "t 1e-2", "t 1e-3", "t 1e-4", "final", "passes", "wall s",
            "median updates/s", "median reader MB/s", "acc %"]
    lines += md_header(cols)
    for res in results:
        for r in res["figure4"]:
            ups = [u for u in r["updates_per_second"] if u is not None]
            mbs = [u for u in r["reader_mb_per_second"] if u is not None]
            lines.append(md_row([
                res["set"], size_text(r["memory"]), f"{r['omega']:,}",
                *(_t(r["reach"][f"{t:g}"]) for t in THRESHOLDS), _rel(r["rel_final"]),
                f"{r['n_iter']}" + ("" if r["converged"] else " !"), _t(r["wall"]),
                f"{np.median(ups):,.0f}" if ups else "–", f"{np.median(mbs):.0f}" if mbs else "–",
                "–" if r.get("acc") is None else f"{r['acc']:.2f}"]))
    lines += ["\n## Checks\n", checks(results).text()]
    lines.append("\nD* per set: " + "; ".join(f"{r['set']} {r['d_star']:.12g} ({r['d_star_n_iter']} iterations"
                                            f"{'' if r['d_star_converged'] else ', not converged'})"
                                            for r in results))
    notes = [f"{r['set']}: -s llsvm trace: {r['runs']['llsvm']['trace_note']}" for r in results
             if r["runs"]["llsvm"].get("trace_note")]
    if notes:
        lines.append("\nNotes: " + "; ".join(notes))
    return "\n".join(lines) + "\n"


def checks(results):
    """The paper prints no numbers to meet (its Figures 3 and 4 are curves); what the figures rest on is checked:
    the reference run D* converged (else every relative difference is against a wrong optimum)."""
    acc = Acceptance()
    for r in results:
        acc.add("D*", r["d_star_converged"], f"{r['set']}: the reference -s 3 at eps {r.get('star_eps', '')} "
                f"converged ({r['d_star_n_iter']} iterations)")
    return acc


# -- main -------------------------------------------------------------------------------------------------------------
def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sets", default=None,
                    help="comma list of generated set names (demo, sparse, dense under --data-dir) or paths of "
                         "two-class training files; default: demo,sparse,dense")
    ap.add_argument("--quick", action="store_true", help="the demo set only: a smoke run (well under a minute)")
    ap.add_argument("--out", default=None, help="output directory (default reproduce-results/<seed>/streamsvm; "
                    "--quick: .../streamsvm/quick)")
    ap.add_argument("--memory", default="64M", help="Figure 3's --memory of the out-of-core solvers (default 64M)")
    ap.add_argument("--memories", default="32M,64M,256M,unlimited", help="Figure 4's -s streamsvm budgets")
    ap.add_argument("--small-memory", default="1M",
                    help="Figure 3's budget for sets whose binary file is smaller than 4 x --memory (default 1M)")
    ap.add_argument("--small-memories", default="768K,1M,1280K,unlimited",
                    help="Figure 4's budgets for those sets")
    ap.add_argument("--stream-threads", type=int, default=2,
                    help="-s streamsvm threads (2: reader and trainer concurrently, the CLI's default; 1: lockstep)")
    ap.add_argument("--C", type=float, default=1.0)
    ap.add_argument("--bias", type=float, default=-1.0, help="-B (default -1: no bias, the CLI's default)")
    ap.add_argument("--seed", type=int, default=DEFAULT_SEED, help=f"every solver's seed (default {DEFAULT_SEED})")
    ap.add_argument("--star-eps", type=float, default=1e-4, help="eps of the -s 3 run giving D*")
    ap.add_argument("--s3-eps", type=float, default=0.1, help="eps of the traced -s 3 run (LIBLINEAR's default)")
    ap.add_argument("--stream-eps", type=float, default=1e-3,
                    help="-e of -s streamsvm and -s bm: the paper's 0.001 (their default is 0.1): the largest "
                         "projected-gradient violation over every row of a pass")
    ap.add_argument("--data-dir", default=os.path.join(ROOT, "data"))
    ap.add_argument("--bin-dir", default=None, help="where the binary copies go (default: --data-dir)")
    args = ap.parse_args(argv)
    args.bin_dir = args.bin_dir or args.data_dir
    args.memory = parse_size(args.memory)
    args.small_memory = parse_size(args.small_memory)
    args.memories = parse_memories(args.memories)
    args.small_memories = parse_memories(args.small_memories)

    names = ["demo"] if args.quick else ([s for s in args.sets.split(",") if s] if args.sets else list(GENERATED))
    if args.quick and args.sets:
        say("# --quick: the demo set only (--sets ignored)")
    plan = []
    for name in names:
        found = resolve(name, args.data_dir, GENERATED)
        if found is None:
            say(f"# skipping {name}: no such file" + (f" (make data/{name})" if name in GENERATED else ""))
            continue
        plan.append((os.path.basename(name), *found[1:]))
    if not plan:
        say("no data set to run")
        return 1
    stamp = timestamp()
    out_dir = reproduce_dir(os.path.join("streamsvm", *(["quick"] if args.quick else [])), args.seed, args.out)
    os.makedirs(args.bin_dir, exist_ok=True)
    meta = run_meta(stamp, C=args.C, bias=args.bias, seed=args.seed, star_eps=args.star_eps, s3_eps=args.s3_eps,
                    stream_eps=args.stream_eps, stream_threads=args.stream_threads, memory=args.memory,
                    memories=args.memories,
                    small_memory=args.small_memory, small_memories=args.small_memories, quick=args.quick)
    t_all = time.perf_counter()
    results = []
    for name, path, test in plan:
        r = run_set(name, path, test, args)
        if r is not None:
            results.append(r)
    if not results:
        say("no two-class data set")
        return 1
    pngs = plot_all(results, out_dir)
    table = table_md(results, meta)
    with open(os.path.join(out_dir, "table.md"), "w") as f:
        f.write(table)
    meta["seconds"] = time.perf_counter() - t_all
    with open(os.path.join(out_dir, "results.json"), "w") as f:
        json.dump({"meta": meta, "sets": results, "pngs": [os.path.basename(p) for p in pngs]}, f, indent=1,
                  default=lambda o: None if isinstance(o, float) and math.isnan(o) else float(o))
    say(f"# wrote {out_dir}: table.md, results.json, {len(pngs)} PNGs ({meta['seconds']:.1f} s)")
    print(table)
    return exit_status("reproduce-streamsvm", checks(results).failed)


if __name__ == "__main__":
    sys.exit(main())
