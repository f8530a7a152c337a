#!/usr/bin/env python3
"""Kecman and Melki's "Fast Online Algorithms for SVMs" (IEEE SoutheastCon 2016; OL SVM List 3b against SMO, NORMA
and Pegaz): Table II's reuters, chessboard and two-Gaussians rows and the shapes of Figures 1-8, with the acceptance
figures C1-C5 of docs/solvers.md, "Online lists: reproduction (`make reproduce-online`) and acceptance figures
C1-C5" (`make reproduce-online`).

Every method runs in this process on the same folds: llsvm.solvers.grid.fold_plan's (LIBSVM's stratified folds from
--seed), the folds of `llsvm-train -v` and of llsvm.solvers.grid.grid_search. The llsvm methods are grid_search cells
(-s olsvm: List 3b, --epochs passes (default 1), bias update on; -s smo: llsvm's LIBSVM port; -s norma with --eta0 1; -s pegaz);
libsvm-official 3.37 is C-SVC with the RBF kernel, -m --cache-mb (default 1024, every method's kernel cache), -e 0.001, trained per cell and fold on the fold's rows
(an svm_problem built once per fold beforehand), its training timed around svm_train only, its predictions
(svm_predict) apart. Times are CPU seconds (time.process_time: the paper compares CPU time), wall seconds beside
them; OMP_NUM_THREADS is 1 unless set. The speedups of the C-lines and the plots are of training CPU (llsvm:
grid_search's fit_cpu_seconds, the fits alone; LIBSVM: svm_train); the tables give training + prediction beside.
A cell's error is the percentage of rows misclassified over all folds (100 - the -v accuracy).

Parts (--parts, default all):
  reuters     reuters_moneyfx .trn + .tst of data/public as one set (11,069 rows), C in 10^{-4..4} x gamma in
              {0.25, 0.5, 1, 2}: -s olsvm, -s smo, libsvm-official (Table II's row, Figs. 3-4; C1)
  chessboard  data/chessboard (8,000 rows), C in 10^{-4..4} x sigma in {0.1, 0.3, 1, 3} (gamma = 1/(2 sigma^2)):
              -s olsvm, libsvm-official (C2)
  gaussians   data/gaussians (15,000 rows), C in {1e-1, ..., 1e4} x sigma in {0.3, 1, 3, 10}, the paper's 24 runs
              of Figs. 1-2: -s olsvm, libsvm-official (C3; long: LIBSVM's C = 1e4 cells hit its iteration limit)
  threeway    the chessboard of 4,992 rows (scripts/gen_data.py chessboard --rows 4992 --seed 1), the chessboard
              grid: -s olsvm, -s norma --eta0 1, -s pegaz, each cached (Figs. 7-8) and --original (Figs. 5-6) (C4)
  c5          two Gaussians, a seeded 80/20 split: per cell of the gaussians grid -s olsvm fits (--c5-repeats,
              default 3: the least of each time), the epoch loop's seconds and violations, the measured kernel column
              time (_online.column_seconds over 512 columns), the check time, and the bound violations x column
              time + rows x check time; LIBSVM's training time at C = 100 against C = 1 with sigma = 0.3 (C5)
The check time: the seconds per row of NumPy's y * o < 1 over the l rows (the least of 7), a vectorised stand-in for
the C loop's O(1) check, which has no timer of its own.

--quick: the 4,992-row chessboard only, 2 folds, C in {1, 100} x sigma in {0.3, 1}: one grid part with -s olsvm,
-s smo and libsvm-official, the three-way part and the C5 part on it (a smoke run; the C-lines are printed, but
their thresholds are the full runs'). --libsvm-cache FILE: a JSON of libsvm-official cells keyed by (set name,
sha256 of the set's rows and labels, nr_fold, seed, C, gamma, libsvm version): cells found there are reused (marked
"r" in the tables, their times those of the run that measured them), cells computed are added to it.
Results: Markdown on stdout and in --out (default reproduce-results/<seed>/online; --quick: .../online/quick):
online.md, online.json (every cell), PNGs of error and CPU time per cell in grid order. The exit status is 1 when
a gated acceptance line is ✗ (--quick gates none: its set and grid are not the spec's).
"""
import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
import shutil

os.environ.setdefault("OMP_NUM_THREADS", "1")

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)

import numpy as np  # noqa: E402
import scipy.sparse as sp  # noqa: E402

import llsvm  # noqa: E402
from benchutil import (DATA_DIR, DEFAULT_SEED, FETCH_HINT, Acceptance, exit_status, md_header,  # noqa: E402
                       md_row, pyplot, reproduce_dir, run_meta, save_png, say, shared_set, timestamp)

SHARED = DATA_DIR         # the public sets (reuters_moneyfx), fetched by `make data`
DATA = os.path.join(ROOT, "data")
PARTS = ("reuters", "chessboard", "gaussians", "threeway", "c5")

C9 = [10.0 ** k for k in range(-4, 5)]
GAUSS_C = [1e-1, 1.0, 10.0, 1e2, 1e3, 1e4]
GRIDS = {   # part: (C values, width name, widths)
    "reuters": (C9, "gamma", [0.25, 0.5, 1.0, 2.0]),
    "chessboard": (C9, "sigma", [0.1, 0.3, 1.0, 3.0]),
    "gaussians": (GAUSS_C, "sigma", [0.3, 1.0, 3.0, 10.0]),
}
QUICK_GRID = ([1.0, 100.0], "sigma", [0.3, 1.0])
# the paper's figures of each grid part (the 8,000-row chessboard has Table II's row only)
GRID_FIGS = {"reuters": "Figs. 3-4 and Table II", "gaussians": "Figs. 1-2 and Table II", "chessboard": "Table II"}
# Table II's rows (error SMO %, error OL SVM %, OL SVM x faster) and the acceptance figures C1-C3 (docs/solvers.md)
PAPER = {"reuters": (5.65, 4.48, 4.10), "chessboard": (13.62, 4.27, 7.65), "gaussians": (28.25, 7.82, 41.50)}
ACCEPT = {  # part: (C-figure, OL SVM best error at most, points above LIBSVM's best at most, grid speedup at least)
    "reuters": ("C1", 4.48, 0.5, 4.1), "chessboard": ("C2", 4.27, 1.0, 7.65), "gaussians": ("C3", 7.82, 0.5, 10.0)}
# the kernel cache of every method, MB (--cache-mb): LIBSVM's -m, -s smo's -m, the online solvers' column store
CACHE_MB = [1024.0]
# passes of the online methods (--epochs; the paper does not say how many: -s olsvm's default is 1)
EPOCHS = [1]
LABELS = {"olsvm": "OL SVM (-s olsvm)", "smo": "-s smo", "libsvm": "libsvm-official", "norma": "NORMA (--eta0 1)",
          "pegaz": "Pegaz"}


def gamma_of(sigma):
    return 1.0 / (2.0 * sigma * sigma)


def clock():
    return time.perf_counter(), time.process_time()


def since(t):
    w, c = clock()
    return w - t[0], c - t[1]


# -- data -----------------------------------------------------------------------------------------------------------
def load_reuters(tmp):
    """reuters_moneyfx .trn and .tst concatenated (their feature counts padded to the larger), or None."""
    from llsvm.dataset import CSRDataset
    parts = [shared_set(SHARED, name, tmp) for name in ("reuters_moneyfx.trn", "reuters_moneyfx.tst")]
    if any(p is None for p in parts):
        return None
    mats = [p.to_csr() for p in parts]
    n = max(m.shape[1] for m in mats)
    mats = [sp.csr_matrix((m.data, m.indices, m.indptr), shape=(m.shape[0], n)) for m in mats]
    return CSRDataset.from_csr(sp.vstack(mats, format="csr"), np.concatenate([p.y for p in parts]))


def generated(kind, path, extra):
    """A set of scripts/gen_data.py, written with the data/Makefile.mk arguments when missing, then read."""
    if not os.path.exists(path):
        cmd = [sys.executable, os.path.join(HERE, "gen_data.py"), kind, "--out", path, *extra, "-q"]
        say("# " + " ".join(cmd))
        subprocess.run(cmd, check=True)
    return llsvm.read_dataset(path, class_labels=True)


def chessboard8000():
    return generated("chessboard", os.path.join(DATA, "chessboard"),
                     ["--test-out", os.path.join(DATA, "chessboard.t"), "--test-rows", "2000", "--seed", "1"])


def gaussians15000():
    return generated("gaussians", os.path.join(DATA, "gaussians"),
                     ["--test-out", os.path.join(DATA, "gaussians.t"), "--test-rows", "3000", "--seed", "1"])


def chessboard4992(tmp):
    return generated("chessboard", os.path.join(tmp, "chessboard4992"), ["--rows", "4992", "--seed", "1"])


def fingerprint(ds):
    """sha256 of a set's rows (CSR arrays) and labels."""
    X = ds.to_csr()
    h = hashlib.sha256()
    for a in (X.indptr.astype(np.int64), X.indices.astype(np.int64), X.data.astype(np.float64),
              np.asarray(ds.y, np.float64), np.array(X.shape, np.int64)):
        h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()


# -- libsvm-official ----------------------------------------------------------------------------------------------
def write_atomic(path, text):
    tmp = path + ".part"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def libsvm_version():
    import importlib.metadata
    try:
        return importlib.metadata.version("libsvm-official")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


class LibsvmCache:
    """libsvm-official cells of earlier runs (a JSON object keyed by the cell's identity), or nothing."""

    def __init__(self, path):
        self.path = path
        self.cells = {}
        if path and os.path.exists(path):
            with open(path) as f:
                self.cells = json.load(f)

    @staticmethod
    def key(name, sha, nr_fold, seed, C, gamma, version):
        return json.dumps([name, sha, nr_fold, seed, float(C), float(gamma), version])

    def get(self, key):
        return self.cells.get(key)

    def put(self, key, cell):
        if not self.path:
            return
        self.cells[key] = cell
        tmp = self.path + ".part"
        with open(tmp, "w") as f:
            json.dump(self.cells, f, indent=1)
        os.replace(tmp, self.path)


def libsvm_fit(prob, C, gamma):
    """(model, cpu seconds, wall seconds) of svm_train alone: C-SVC, RBF, -m --cache-mb, -e 0.001."""
    from libsvm import svmutil
    param = svmutil.svm_parameter(f"-s 0 -t 2 -c {C!r} -g {gamma!r} -m {CACHE_MB[0]!r} -e 0.001 -q")
    w0, c0 = time.perf_counter(), time.process_time()
    m = svmutil.svm_train(prob, param)
    return m, time.process_time() - c0, time.perf_counter() - w0


def libsvm_grid(name, ds, cells_spec, nr_fold, seed, cache):
    """libsvm-official over the cells [(width, C, gamma)] on fold_plan's folds: one cell dict each."""
    from libsvm import svmutil
    from llsvm.solvers.folds import fold_plan
    from bench_smo import _libsvm_problem
    version = libsvm_version()
    sha = fingerprint(ds)
    folds = fold_plan(ds.y, nr_fold, seed)
    probs = None
    out = []
    for width, C, gamma in cells_spec:
        key = LibsvmCache.key(name, sha, nr_fold, seed, C, gamma, version + f" -m {CACHE_MB[0]:g}")
        hit = cache.get(key)
        if hit is not None and "fit_cpu_seconds" in hit:
            out.append(dict(hit, width=width, reused=True))
            continue
        if probs is None:       # the folds' problems, built once (not timed)
            probs = []
            for tr, te in folds:
                prob, _ = _libsvm_problem(ds.take_rows(tr))
                test = ds.take_rows(te)
                _, rows = _libsvm_problem(test)
                probs.append((prob, list(map(float, test.y)), rows))
        pred = np.empty(ds.n_rows)
        cpu = wall = nsv = pcpu = pwall = 0.0
        for (tr, te), (prob, yte, rows) in zip(folds, probs):
            m, c, w = libsvm_fit(prob, C, gamma)
            cpu += c
            wall += w
            nsv += m.get_nr_sv() / nr_fold
            w0, c0 = time.perf_counter(), time.process_time()
            p, _, _ = svmutil.svm_predict(yte, rows, m, "-q")
            pcpu += time.process_time() - c0
            pwall += time.perf_counter() - w0
            pred[te] = p
        err = 100.0 * float(np.count_nonzero(pred != ds.y)) / ds.n_rows
        # grid_search's fields: fit_* the svm_train calls alone, cpu_seconds / seconds with svm_predict's
        cell = {"C": C, "gamma": gamma, "error": err, "fit_cpu_seconds": cpu, "fit_seconds": wall,
                "cpu_seconds": cpu + pcpu, "seconds": wall + pwall, "nSV": nsv, "viol": None}
        cache.put(key, cell)
        out.append(dict(cell, width=width, reused=False))
        say(f"#   libsvm {name} width {width:g} C {C:g}: error {err:.2f} %, {cpu:.2f} s CPU")
    return out


# -- llsvm --------------------------------------------------------------------------------------------------------
def llsvm_grid(ds, solver, Cs, width_key, widths, nr_fold, seed, options=None):
    """grid_search's cells (grid order: width outer, C inner), each with its width."""
    from llsvm.solvers.grid import grid_search
    from llsvm.params import Params
    res = grid_search(ds, nr_fold, {"C": list(Cs), width_key: list(widths)},
                      params=Params(solver=solver, seed=seed, threads=1, options=options))
    out = []
    for k, cell in enumerate(res.cells):
        c = {key: cell.get(key) for key in ("C", "gamma", "error", "fit_cpu_seconds", "fit_seconds", "cpu_seconds",
                                             "seconds",
                                             "viol", "nSV")}
        c["width"] = widths[k // len(Cs)]
        c["reused"] = False
        out.append(c)
    return out


def online_options(**kw):
    from llsvm.options import OnlineOptions
    kw.setdefault("epochs", EPOCHS[0])
    return OnlineOptions(cache_size=CACHE_MB[0], **kw)


# -- summaries, tables, plots -------------------------------------------------------------------------------------
def best(cells):
    return min(cells, key=lambda c: c["error"])     # the first in grid order on ties


def total(cells, key="fit_cpu_seconds"):
    return float(sum(c[key] for c in cells))


def cell_table(width_key, methods):
    names = list(methods)
    head = [width_key, "C"] + [f"{LABELS.get(m, m)} err %" for m in names] + \
        [f"{LABELS.get(m, m)} fit CPU s" for m in names]
    if "olsvm" in methods:
        head.append("OL SVM violations")
    lines = md_header(head)
    first = methods[names[0]]
    for k, c in enumerate(first):
        row = [f"{c['width']:g}", f"{c['C']:g}"]
        row += [f"{methods[m][k]['error']:.2f}" for m in names]
        row += [f"{methods[m][k]['fit_cpu_seconds']:.3f}" + (" r" if methods[m][k].get("reused") else "")
                for m in names]
        if "olsvm" in methods:
            v = methods["olsvm"][k]["viol"]
            row.append("-" if v is None else str(v))
        lines.append(md_row(row))
    return "\n".join(lines)


def summary_table(width_key, methods, anchor="libsvm"):
    a = LABELS.get(anchor, anchor)
    lines = md_header(["method", f"best cell ({width_key}, C)", "best error %", "best-cell nSV", "grid fit CPU s",
                       f"{a} / method, fit CPU", "grid fit wall s", "grid fit + predict CPU s",
                       f"{a} / method, fit + predict CPU", "grid fit + predict wall s"])
    ratio = (lambda key, t: f"{total(methods[anchor], key) / t:.2f}" if anchor in methods and t > 0 else "-")
    for m, cells in methods.items():
        b = best(cells)
        t, tp = total(cells), total(cells, "cpu_seconds")
        lines.append(md_row([LABELS.get(m, m), f"{b['width']:g}, {b['C']:g}", f"{b['error']:.2f}",
                             f"{b['nSV']:.0f}", f"{t:.2f}", ratio("fit_cpu_seconds", t),
                             f"{total(cells, 'fit_seconds'):.2f}", f"{tp:.2f}", ratio("cpu_seconds", tp),
                             f"{total(cells, 'seconds'):.2f}"]))
    reused = sum(c.get("reused", False) for c in methods.get(anchor, []))
    note = ("\n\nfit CPU: the training calls alone (llsvm: grid_search's fit_cpu_seconds; libsvm-official: "
            "svm_train); fit + predict: with the predictions of the held-out rows (svm_predict).")
    if reused:
        note += f" {reused} libsvm-official cells reused from --libsvm-cache (r)."
    return "\n".join(lines) + note


PAPER_NAME = "Kecman & Melki (SoutheastCon 2016)"
# every method's line: colour, marker, line style (no two alike: one line never hides another)
STYLE = {"olsvm": ("tab:red", "o", "-"), "smo": ("tab:green", "s", "--"), "libsvm": ("tab:blue", "^", "-."),
         "norma": ("tab:purple", "D", ":"), "pegaz": ("tab:brown", "v", "--")}


def _style(m):
    c, mk, ls = STYLE.get(m, ("black", "x", "-"))
    return dict(color=c, marker=mk, ls=ls, ms=4, mfc="none", lw=1.2, label=LABELS.get(m, m))


def _cell_axis(ax, width_key, widths, Cs):
    """The x axis of a per-cell plot: C at every cell, the cells grouped by kernel width (dotted lines between
    groups, the width written under each group), as the paper's figures order their runs."""
    x = np.arange(1, len(widths) * len(Cs) + 1)
    ax.set_xticks(x)
    ax.set_xticklabels([f"{C:g}" for _ in widths for C in Cs], fontsize=7, rotation=90 if x.size > 12 else 0)
    ax.set_xlabel(f"C (cells in grid order, grouped by {width_key})")
    for g, w in enumerate(widths):
        if g:
            ax.axvline(g * len(Cs) + 0.5, color="grey", lw=0.6, ls=":")
        ax.text((g * len(Cs) + 1 + (g + 1) * len(Cs)) / 2, 1.0, f"{width_key} = {w:g}", fontsize=8, ha="center",
                va="bottom", transform=ax.get_xaxis_transform())
    return x


def grid_png(path, title, width_key, widths, Cs, methods):
    return save_png(grid_figure(title, width_key, widths, Cs, methods), path)


def grid_figure(title, width_key, widths, Cs, methods):
    """The paper's figures: error and CPU time per cell, the cells in grid order (C within each kernel width)."""
    plt = pyplot()
    fig, axes = plt.subplots(2, 1, figsize=(9, 7), sharex=True)
    x = np.arange(1, len(widths) * len(Cs) + 1)
    for k, (m, cells) in enumerate(methods.items()):
        dx = 0.06 * (k - (len(methods) - 1) / 2)      # side by side: methods with equal values stay apart
        axes[0].plot(x + dx, [c["error"] for c in cells], **_style(m))
        axes[1].plot(x + dx, [max(c["fit_cpu_seconds"], 1e-6) for c in cells], **_style(m))
    axes[0].set_ylabel("CV error [%]")
    axes[1].set_ylabel("training CPU time [s], all folds")
    axes[1].set_yscale("log")
    for ax in axes:
        _cell_axis(ax, width_key, widths, Cs)
        ax.grid(alpha=0.3)
    axes[0].set_xlabel("")
    axes[0].legend(fontsize=8)
    fig.suptitle(title, fontsize=10)
    return fig


QUICK_NOT_GATED = "--quick: not the spec's set or grid, whose thresholds these are"


def accept_grid(part, methods, quick):
    fig, max_err, margin, speed = ACCEPT[part]
    ol, lib = methods["olsvm"], methods["libsvm"]
    e_ol, e_lib = best(ol)["error"], best(lib)["error"]
    s = total(lib) / max(total(ol), 1e-12)
    acc = Acceptance()
    ng = QUICK_NOT_GATED if quick else None
    acc.add(fig, e_ol <= max_err, f"{part}: OL SVM best-cell error {e_ol:.2f} % (<= {max_err} %, the paper's)", ng)
    acc.add(fig, e_ol <= e_lib + margin, f"{part}: OL SVM best {e_ol:.2f} % against libsvm-official's best "
            f"{e_lib:.2f} % (<= +{margin} points: {e_ol - e_lib:+.2f})", ng)
    acc.add(fig, s >= speed, f"{part}: grid training CPU {total(ol):.2f} s against libsvm-official's "
            f"{total(lib):.2f} s: {s:.2f}x faster (>= {speed}x; with the predictions: "
            f"{total(lib, 'cpu_seconds') / max(total(ol, 'cpu_seconds'), 1e-12):.2f}x)", ng)
    return acc


def table2_row(part, methods):
    ol, lib = methods["olsvm"], methods["libsvm"]
    p = PAPER.get(part)
    lines = md_header(["", "Error SMO %", "Error OL SVM %", "OL SVM x faster (training CPU)"])
    lines.append(md_row(["this run (libsvm-official)", f"{best(lib)['error']:.2f}", f"{best(ol)['error']:.2f}",
                         f"{total(lib) / max(total(ol), 1e-12):.2f}"]))
    if "smo" in methods:
        s = methods["smo"]
        lines.append(md_row(["this run (-s smo)", f"{best(s)['error']:.2f}", f"{best(ol)['error']:.2f}",
                             f"{total(s) / max(total(ol), 1e-12):.2f}"]))
    if p:
        lines.append(md_row(["paper (MATLAB fitcsvm)", f"{p[0]:.2f}", f"{p[1]:.2f}", f"{p[2]:.2f}"]))
    return "\n".join(lines)


# -- parts --------------------------------------------------------------------------------------------------------
def grid_part(part, name, ds, grid, args, cache, methods_wanted, quick):
    Cs, width_key, widths = grid
    say(f"# {part}: {name}, {ds.n_rows} rows, {len(Cs) * len(widths)} cells, {args.folds} folds")
    gam = (lambda w: gamma_of(w)) if width_key == "sigma" else (lambda w: w)
    methods = {}
    for m in methods_wanted:
        t = clock()
        if m == "libsvm":
            methods[m] = libsvm_grid(name, ds, [(w, C, gam(w)) for w in widths for C in Cs], args.folds, args.seed,
                                     cache)
        elif m == "smo":
            from llsvm.options import SMOOptions
            methods[m] = llsvm_grid(ds, "smo", Cs, width_key, widths, args.folds, args.seed,
                                    SMOOptions(cache_size=CACHE_MB[0]))
        else:
            methods[m] = llsvm_grid(ds, m, Cs, width_key, widths, args.folds, args.seed, online_options())
        w, c = since(t)
        say(f"#   {m}: {w:.1f} s wall, {c:.1f} s CPU")
    png = grid_png(os.path.join(args.out, f"{part}-error-cpu.png"),
                   f"{PAPER_NAME}, {GRID_FIGS.get(part, 'Table II')}: {name} ({ds.n_rows:,} rows, "
                   f"{args.folds}-fold),\nCV error and training CPU time per grid cell", width_key, widths, Cs, methods)
    text = (f"### {part}: {name} ({ds.n_rows} rows, {args.folds}-fold, seed {args.seed})\n\n"
            f"{table2_row(part, methods)}\n\n{summary_table(width_key, methods)}\n\n"
            f"{cell_table(width_key, methods)}\n\nFigure: {png}")
    acc = accept_grid(part if part in ACCEPT else "chessboard", methods, quick)
    return {"part": part, "set": name, "rows": ds.n_rows, "sha256": fingerprint(ds), "folds": args.folds,
            "grid": {"C": Cs, width_key: widths}, "methods": methods, "png": [png], "text": text,
            "acceptance": acc.lines, "failed": acc.failed}


def threeway_part(ds, grid, args, quick):
    Cs, width_key, widths = grid
    say(f"# threeway: chessboard {ds.n_rows} rows, {len(Cs) * len(widths)} cells x 6, {args.folds} folds")
    runs = {}
    for original in (False, True):
        form = "original" if original else "cached"
        runs[form] = {}
        for m in ("olsvm", "norma", "pegaz"):
            kw = {"original": original}
            if m == "norma":
                kw["eta0"] = 1.0
            t = clock()
            runs[form][m] = llsvm_grid(ds, m, Cs, width_key, widths, args.folds, args.seed, online_options(**kw))
            w, c = since(t)
            say(f"#   {m} {form}: {w:.1f} s wall, {c:.1f} s CPU")
    lines = md_header(["method", "form", f"best cell ({width_key}, C)", "best error %", "grid fit CPU s",
                       "grid fit wall s", "grid fit + predict CPU s"])
    for form, methods in runs.items():
        for m, cells in methods.items():
            b = best(cells)
            lines.append(md_row([LABELS[m], form, f"{b['width']:g}, {b['C']:g}", f"{b['error']:.2f}",
                                 f"{total(cells):.2f}", f"{total(cells, 'fit_seconds'):.2f}",
                                 f"{total(cells, 'cpu_seconds'):.2f}"]))
    pngs = [grid_png(os.path.join(args.out, "threeway-cached-error-cpu.png"),
                     f"{PAPER_NAME}, Figs. 7-8: chessboard {ds.n_rows:,} rows, cached lists,\n"
                     "CV error and training CPU time per grid cell", width_key, widths, Cs, runs["cached"]),
            grid_png(os.path.join(args.out, "threeway-original-error-cpu.png"),
                     f"{PAPER_NAME}, Figs. 5-6: chessboard {ds.n_rows:,} rows, original lists,\n"
                     "CV error and training CPU time per grid cell", width_key, widths, Cs, runs["original"])]
    ng = QUICK_NOT_GATED if quick else None
    acc = Acceptance()
    for form in ("cached", "original"):
        e = {m: best(cells)["error"] for m, cells in runs[form].items()}
        acc.add("C4", e["olsvm"] <= e["pegaz"] and e["olsvm"] <= e["norma"], f"({form}): best-cell error OL SVM "
                f"{e['olsvm']:.2f} % <= Pegaz {e['pegaz']:.2f} % and <= NORMA (--eta0) {e['norma']:.2f} %", ng)
    t = {m: total(cells) for m, cells in runs["original"].items()}
    acc.add("C4", t["olsvm"] <= 0.5 * t["norma"], f"(--original): OL SVM grid training CPU {t['olsvm']:.2f} s "
            f"<= 0.5 x NORMA's {t['norma']:.2f} s (ratio {t['olsvm'] / max(t['norma'], 1e-12):.3f})", ng)
    acc.add("C4", t["norma"] <= 0.5 * t["pegaz"], f"(--original): NORMA grid training CPU {t['norma']:.2f} s "
            f"<= 0.5 x Pegaz's {t['pegaz']:.2f} s (ratio {t['norma'] / max(t['pegaz'], 1e-12):.3f}; the issue's "
            "form)", ng)
    acc.add("C4", t["olsvm"] <= 0.25 * t["pegaz"], f"(--original): OL SVM grid training CPU <= 0.25 x Pegaz's "
            f"(ratio {t['olsvm'] / max(t['pegaz'], 1e-12):.3f}; the spec's 4x)", ng)
    detail = "\n\n".join(f"#### {form} lists\n\n{cell_table(width_key, methods)}" for form, methods in runs.items())
    text = (f"### threeway: chessboard {ds.n_rows} rows ({args.folds}-fold, seed {args.seed}; Figs. 5-8)\n\n"
            + "\n".join(lines) + f"\n\n{detail}\n\nFigures: {pngs[0]}, {pngs[1]}")
    return {"part": "threeway", "set": f"chessboard{ds.n_rows}", "rows": ds.n_rows, "folds": args.folds,
            "grid": {"C": Cs, width_key: widths}, "runs": runs, "png": pngs, "text": text,
            "acceptance": acc.lines, "failed": acc.failed}


def check_seconds(l, rng):
    """Seconds per row of y * o < 1 over l rows (the least of 7): the stand-in for one O(1) check."""
    y = rng.choice([-1.0, 1.0], l)
    o = rng.standard_normal(l)
    ts = []
    for _ in range(7):
        t0 = time.perf_counter()
        np.less(y * o, 1.0)
        ts.append(time.perf_counter() - t0)
    return float(min(ts)) / l


def c5_part(name, ds, grid, args, cache, quick):
    from llsvm._ext import _online
    from llsvm._ext._rowops import row_sq_norms
    from llsvm.params import Params
    Cs, width_key, widths = grid
    rng = np.random.default_rng(args.seed)
    perm = rng.permutation(ds.n_rows)
    cut = int(round(0.8 * ds.n_rows))
    tr, te = ds.take_rows(np.sort(perm[:cut])), ds.take_rows(np.sort(perm[cut:]))
    l = tr.n_rows
    say(f"# c5: {name} 80/20 ({l} / {te.n_rows} rows), {len(Cs) * len(widths)} cells")
    view = tr.row_view()
    sq = row_sq_norms(view)
    cols = np.sort(rng.choice(l, min(512, l), replace=False)).astype(np.int64)
    check = check_seconds(l, rng)
    cells = []
    for w in widths:
        g = gamma_of(w) if width_key == "sigma" else w
        for C in Cs:
            loops, colts = [], []
            for _ in range(args.c5_repeats):    # the same seeded fit: the same violations; the least times
                model = llsvm.train(tr, params=Params(solver="olsvm", C=C, seed=args.seed,
                                                      options=online_options(gamma=g, epochs=1)))
                res = model.meta["results"]
                loops.append(float(sum(r.extra["seconds"] for r in res)))
                viol = int(sum(sum(r.extra["viol"]) for r in res))
                colts.append(float(_online.column_seconds(view, {"kernel_type": 2, "gamma": g}, sq, cols)))
            loop, col = min(loops), min(colts)      # a shared machine only adds time: the minima
            bound = viol * col + l * check
            err = 100.0 * float(np.mean(model.predict(te) != te.y))
            cells.append({"width": w, "C": C, "gamma": g, "loop_seconds": loop, "loop_runs": loops, "viol": viol,
                          "column_seconds": col, "column_runs": colts,
                          "check_seconds": check, "bound": bound, "ratio": loop / bound,
                          "excess_per_violation": (loop - bound) / max(viol, 1), "test_error": err})
    # libsvm at C = 100 against C = 1, sigma 0.3, on the training rows
    from bench_smo import _libsvm_problem
    prob, _ = _libsvm_problem(tr)
    sha = fingerprint(tr)
    lib = {}
    for C in (1.0, 100.0):
        g = gamma_of(0.3)
        key = LibsvmCache.key(name + "-train80", sha, 0, args.seed, C, g, libsvm_version() + f" -m {CACHE_MB[0]:g}")
        hit = cache.get(key)
        if hit is None:
            _, c, wall = libsvm_fit(prob, C, g)
            hit = {"C": C, "gamma": g, "cpu_seconds": c, "seconds": wall}
            cache.put(key, hit)
            hit = dict(hit, reused=False)
        else:
            hit = dict(hit, reused=True)
        lib[C] = hit
    lines = md_header([width_key, "C", "violations", "loop s", "column s", "check s", "bound s", "loop / bound",
                       "(loop - bound) / violation, us", "test error %"])
    for c in cells:
        lines.append(md_row([f"{c['width']:g}", f"{c['C']:g}", str(c["viol"]), f"{c['loop_seconds']:.4f}",
                             f"{c['column_seconds']:.3g}", f"{c['check_seconds']:.3g}", f"{c['bound']:.4f}",
                             f"{c['ratio']:.3f}", f"{1e6 * c['excess_per_violation']:.2f}",
                             f"{c['test_error']:.2f}"]))
    worst = max(cells, key=lambda c: c["ratio"])
    ng = QUICK_NOT_GATED if quick else None
    acc = Acceptance()
    acc.add("C5", worst["ratio"] <= 1.1, f"OL SVM loop time <= 1.1 x (violations x column time + rows x "
            f"check time) at every cell (worst {worst['ratio']:.3f} at {width_key} {worst['width']:g}, "
            f"C {worst['C']:g})", ng)
    above = []
    for w in widths:
        row = [c for c in cells if c["width"] == w]
        above += [(w, c["C"], c["loop_seconds"] / row[0]["loop_seconds"]) for c in row[1:]
                  if c["loop_seconds"] > row[0]["loop_seconds"]]
    acc.add("C5", not above, f"loop time never above its smallest-C (C = {Cs[0]:g}) time of the same {width_key}"
            + (": above at " + ", ".join(f"({w:g}, {C:g}: {r:.2f}x)" for w, C, r in above) if above else ""), ng)
    r = lib[100.0]["cpu_seconds"] / max(lib[1.0]["cpu_seconds"], 1e-12)
    acc.add("C5", r >= 5, f"libsvm-official CPU at C = 100 {lib[100.0]['cpu_seconds']:.2f} s against "
            f"C = 1 {lib[1.0]['cpu_seconds']:.2f} s, sigma 0.3: {r:.2f}x (>= 5x)", ng)
    png = save_png(c5_figure(name, l, cells, width_key, widths, Cs), os.path.join(args.out, "c5-bound.png"))
    text = (f"### c5: {name} 80/20 split ({l} training rows, seed {args.seed})\n\n" + "\n".join(lines) +
            f"\n\nlibsvm-official, sigma 0.3, training rows: C = 1 {lib[1.0]['cpu_seconds']:.3f} s CPU"
            f"{' (r)' if lib[1.0]['reused'] else ''}, C = 100 {lib[100.0]['cpu_seconds']:.3f} s CPU"
            f"{' (r)' if lib[100.0]['reused'] else ''}\n\nFigure: {png}")
    return {"part": "c5", "set": name, "rows": ds.n_rows, "train_rows": l, "grid": {"C": Cs, width_key: widths},
            "cells": cells, "libsvm": {str(k): v for k, v in lib.items()}, "png": [png], "text": text,
            "acceptance": acc.lines, "failed": acc.failed}


def c5_figure(name, l, cells, width_key, widths, Cs):
    """C5: OL SVM's measured epoch time and its violation bound per cell, in grid order."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(9, 4.6))
    ax.plot(np.arange(1, len(cells) + 1), [c["loop_seconds"] for c in cells], color="tab:red", marker="o", ms=4,
            ls="-", label="OL SVM epoch loop (measured)")
    ax.plot(np.arange(1, len(cells) + 1), [c["bound"] for c in cells], color="tab:blue", marker="s", ms=4,
            mfc="none", ls="--", label="bound: violations x column time + rows x check time")
    ax.set_yscale("log")
    _cell_axis(ax, width_key, widths, Cs)
    ax.set_ylabel("time [s]")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.suptitle(f"{PAPER_NAME}, C5 (not in the paper: the spec's test of its claim that OL SVM's CPU time\n"
                 f"does not depend on C): {name}, {l:,} training rows, epoch time against its violation bound",
                 fontsize=10)
    return fig


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--parts", default=",".join(PARTS), help="comma-separated subset of " + ",".join(PARTS))
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--folds", type=int, default=None, help="CV folds (default 5; --quick: 2)")
    ap.add_argument("--seed", type=int, default=DEFAULT_SEED, help="the folds' and the online solvers' seed "
                    f"(default {DEFAULT_SEED}); results under reproduce-results/<seed>/online/")
    ap.add_argument("--out", default=None, help="output directory (default reproduce-results/<seed>/online, "
                    "--quick: .../online/quick)")
    ap.add_argument("--libsvm-cache", default=None, metavar="FILE")
    ap.add_argument("--cache-mb", type=float, default=CACHE_MB[0],
                    help="kernel cache MB of every method: LIBSVM's and -s smo's -m, the online solvers' column "
                         "store, kept across the C values of one kernel and fold (default 1024: a reuters fold's "
                         "Gram matrix)")
    ap.add_argument("--epochs", type=int, default=EPOCHS[0],
                    help="passes of the online methods (default 1; the paper does not give its number)")
    ap.add_argument("--c5-repeats", type=int, default=3, help="C5: fits per cell (the least loop and column "
                    "times; default 3)")
    args = ap.parse_args(argv)
    CACHE_MB[0] = args.cache_mb
    EPOCHS[0] = args.epochs
    parts = [p.strip() for p in args.parts.split(",") if p.strip()]
    bad = [p for p in parts if p not in PARTS]
    if bad:
        ap.error(f"unknown part(s) {', '.join(bad)}: choose from {', '.join(PARTS)}")
    if args.folds is None:
        args.folds = 2 if args.quick else 5
    args.out = reproduce_dir(os.path.join("online", *(("quick",) if args.quick else ())), args.seed, args.out)
    cache = LibsvmCache(args.libsvm_cache)
    tmp = tempfile.mkdtemp(prefix="llsvm-online-")
    results, timing = [], {}
    stamp = timestamp()

    def write_out():
        """The report so far (after every part, so that a long run interrupted later keeps what it measured)."""
        text = "\n\n".join(r["text"] for r in results)
        text += "\n\n### Acceptance (spec C1-C5)\n\n" + "\n".join(line for r in results for line in r["acceptance"])
        text += "\n\n### Time per part\n\n" + "\n".join(
            md_header(["part", "wall s", "CPU s"]) + [md_row([k, f"{v['wall']:.1f}", f"{v['cpu']:.1f}"])
                                                      for k, v in timing.items()])
        title = f"llsvm reproduce-online {stamp}" + (" (--quick)" if args.quick else "")
        write_atomic(os.path.join(args.out, "online.md"), f"{title}\n\n{text}\n")
        meta = run_meta(stamp, quick=args.quick, folds=args.folds, seed=args.seed, parts=parts,
                        libsvm=libsvm_version(), omp_num_threads=os.environ.get("OMP_NUM_THREADS"),
                        libsvm_cache=args.libsvm_cache, cache_mb=CACHE_MB[0], epochs=EPOCHS[0],
                        timing=timing)
        write_atomic(os.path.join(args.out, "online.json"),
                     json.dumps({"meta": meta, "parts": [{k: v for k, v in r.items() if k != "text"}
                                                         for r in results]}, indent=1, default=float))
        return text

    def timed(label, fn):
        t = clock()
        r = fn()
        w, c = since(t)
        timing[label] = {"wall": w, "cpu": c}
        say(f"# {label}: {w:.1f} s wall, {c:.1f} s CPU")
        if r is not None:
            results.append(r)
        write_out()

    try:
        if args.quick:
            ds = chessboard4992(tmp)
            if any(p in parts for p in ("reuters", "chessboard", "gaussians")):
                timed("grid", lambda: grid_part("chessboard", "chessboard4992", ds, QUICK_GRID, args, cache,
                                                ("olsvm", "smo", "libsvm"), True))
            if "threeway" in parts:
                timed("threeway", lambda: threeway_part(ds, QUICK_GRID, args, True))
            if "c5" in parts:
                timed("c5", lambda: c5_part("chessboard4992", ds, QUICK_GRID, args, cache, True))
        else:
            if "reuters" in parts:
                def reuters():
                    ds = load_reuters(tmp)
                    if ds is None:
                        say(f"# reuters: reuters_moneyfx.trn/.tst.xz not in data/public: skipped ({FETCH_HINT})")
                        return None
                    return grid_part("reuters", "reuters_moneyfx", ds, GRIDS["reuters"], args, cache,
                                     ("olsvm", "smo", "libsvm"), False)
                timed("reuters", reuters)
            if "chessboard" in parts:
                timed("chessboard", lambda: grid_part("chessboard", "chessboard", chessboard8000(),
                                                      GRIDS["chessboard"], args, cache, ("olsvm", "libsvm"), False))
            if "gaussians" in parts:
                timed("gaussians", lambda: grid_part("gaussians", "gaussians", gaussians15000(), GRIDS["gaussians"],
                                                     args, cache, ("olsvm", "libsvm"), False))
            if "threeway" in parts:
                timed("threeway", lambda: threeway_part(chessboard4992(tmp), GRIDS["chessboard"], args, False))
            if "c5" in parts:
                timed("c5", lambda: c5_part("gaussians", gaussians15000(), GRIDS["gaussians"], args, cache, False))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    text = write_out()
    print(text)
    return exit_status("reproduce-online", list(dict.fromkeys(f for r in results for f in r.get("failed", []))))


if __name__ == "__main__":
    sys.exit(main())
