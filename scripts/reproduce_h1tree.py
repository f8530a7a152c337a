#!/usr/bin/env python3
"""Fehr, Zapién Arreola and Burkhardt's Tables 1-3 (H1-SVM trees against an RBF SVM, "Fast support vector machine
classification of very large datasets", GfKl 2007) on public stand-ins, and the fourclass node sequence of Figs. 2-3
(`make reproduce-h1tree`); the stand-ins and the acceptance figures are those of docs/solvers.md, "H1-SVM:
reproduction (`make reproduce-h1tree`) and acceptance figures A1-A5".

Training is a subprocess of the installed command, as a user runs it: `llsvm-train -s smo` (the RBF column: C-SVC,
RBF, gamma as scikit-learn's 'scale' = 1 / (n_features var(X)), C as listed below), `llsvm-train -s h1tree
--hard-class alternate` (the paper's "H1-SVM" column) and `--hard-class greedy` ("Gr-Heu"); training time is its
wall time. Classification time is the model's decision values over the loaded test rows (median of --repeats, at
least 3), the paper's measure; `llsvm-predict`'s wall time (start-up, parsing and writing included, the same for
every model) is reported beside it, and the accuracy is llsvm-predict's.
Sets, from data/public (`make data` fetches them; skin_nonskin and svmguide1 min-max scaled to [-1, 1] on the
training rows):
  - usps.t, stratified 70/30 (seed --seed), one-vs-one, --h1-c 2, RBF C = 10          (Table 2, USPS)
  - mushrooms, stratified 70/30, --h1-c inf, RBF C = 1                               (the "mostly easy" regime)
  - skin_nonskin, 3,372 random training rows, the rest as test, --h1-c inf, RBF C = 10 (Table 3, cell nuclei):
    the linear tree and the non-linear tree (--rbf-depth auto)
  - svmguide1 -> svmguide1.t, non-linear tree (--rbf-depth auto), RBF C = 1
and the acceptance figures A1-A5 as lines marked ✓ / ✗; the exit status is 1 when one is ✗. Results: Markdown on
stdout and in reproduce-results/<seed>/h1tree/ (--quick: .../h1tree/quick/): h1tree.md, h1tree.json,
fourclass-nodes.png. --quick: usps.t and mushrooms only, 1 repeat.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)

import numpy as np  # noqa: E402

import llsvm  # noqa: E402
from benchutil import (DATA_DIR, DEFAULT_SEED, FETCH_HINT, Acceptance, exit_status, md_header,  # noqa: E402
                       md_row, minmax_scale, pyplot, reproduce_dir, run_meta, save_png, say, shared_set, timestamp)

SHARED = DATA_DIR
BIN = os.path.dirname(sys.executable)


def exe(name):
    return os.path.join(BIN, name)


def load(name, tmp):
    ds = shared_set(SHARED, name, tmp)
    if ds is None:
        say(f"# {name}: not in {os.path.relpath(SHARED, ROOT)}, skipped ({FETCH_HINT})")
    return ds


def split(ds, test_fraction, seed, n_train=None):
    """A stratified split (every class split in the same proportion), or n_train random rows for training."""
    g = np.random.default_rng(seed)
    if n_train is not None:
        perm = g.permutation(ds.n_rows)
        return ds.take_rows(np.sort(perm[:n_train])), ds.take_rows(np.sort(perm[n_train:]))
    test = []
    for lab in np.unique(ds.y):
        rows = np.flatnonzero(ds.y == lab)
        g.shuffle(rows)
        test.append(rows[:int(round(test_fraction * rows.size))])
    test = np.sort(np.concatenate(test))
    train = np.setdiff1d(np.arange(ds.n_rows), test)
    return ds.take_rows(train), ds.take_rows(test)


def gamma_scale(ds):
    """scikit-learn's gamma='scale': 1 / (n_features X.var()), the variance over every entry of X."""
    X = ds.to_csr()
    var = float(X.multiply(X).mean() - X.mean() ** 2)
    return 1.0 / (X.shape[1] * var) if var > 0 else 1.0


def run(cmd):
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    dt = time.perf_counter() - t0
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({proc.returncode}): {proc.stderr[-2000:]}")
    return dt, proc


def train_predict(tag, args, train_path, test_path, tmp, repeats):
    model = os.path.join(tmp, tag + ".model")
    jpath = os.path.join(tmp, tag + ".json")
    train_s, _ = run([exe("llsvm-train"), "-q", *args, "--json", jpath, train_path, model])
    with open(jpath) as f:
        m = json.load(f)
    times = []
    for _ in range(repeats):
        dt, proc = run([exe("llsvm-predict"), test_path, model, os.path.join(tmp, tag + ".pred")])
        times.append(dt)
    acc = float(proc.stdout.split("Accuracy = ")[1].split("%")[0])
    # the classification itself: the model's decision values over the loaded test rows, in this process (the
    # paper's classification time; llsvm-predict's wall time adds start-up and parsing, the same for every model)
    loaded = llsvm.load_model(model)
    te = llsvm.read_dataset(test_path)
    clf = []
    for _ in range(max(repeats, 3)):
        t0 = time.perf_counter()
        loaded.decision_function(te)
        clf.append(time.perf_counter() - t0)
    reach_test = None
    if getattr(loaded, "trees", None) and loaded.rbf is not None:
        reach = np.zeros((te.n_rows, len(loaded.trees)), bool)
        loaded.decision_function(te, reach=reach)
        reach_test = float(reach.any(axis=1).mean())
    return {"tag": tag, "args": args, "train_s": train_s, "train_seconds": m["train_seconds"],
            "predict_wall_s": statistics.median(times), "predict_s": statistics.median(clf), "accuracy": acc,
            "json": m,
            "size": m.get("n_hyperplanes", m.get("nSV")), "rbf_nSV": m.get("rbf_nSV"),
            "average_depth": m.get("average_depth"), "reach_rbf": m.get("reach_rbf"), "reach_rbf_test": reach_test}


def write(ds, path):
    llsvm.dump_text(ds, path)
    return path


def experiment(name, tr, te, tmp, repeats, rbf_C, h1_c, nonlinear=False, linear_variants=True):
    trp = write(tr, os.path.join(tmp, name + ".train"))
    tep = write(te, os.path.join(tmp, name + ".test"))
    g = gamma_scale(tr)
    kern = ["-c", repr(rbf_C), "-g", repr(g)]
    rows = {"rbf": train_predict(name + "-rbf", ["-s", "smo", *kern], trp, tep, tmp, repeats)}
    h1 = ["-s", "h1tree", "--h1-c", h1_c]
    if linear_variants:
        rows["alternate"] = train_predict(name + "-alt", [*h1, "--hard-class", "alternate"], trp, tep, tmp, repeats)
        rows["greedy"] = train_predict(name + "-gr", [*h1, "--hard-class", "greedy"], trp, tep, tmp, repeats)
    if nonlinear:
        rows["nonlinear"] = train_predict(name + "-nl", [*h1, "--rbf-depth", "auto", *kern], trp, tep, tmp, repeats)
    say(f"# {name}: " + ", ".join(f"{k} acc {v['accuracy']:.2f} size {v['size']} predict {v['predict_s']:.3f} s"
                                  for k, v in rows.items()))
    return {"dataset": name, "train_rows": tr.n_rows, "test_rows": te.n_rows, "gamma": g, "rbf_C": rbf_C,
            "h1_c": h1_c, "runs": rows}


def table(e):
    runs = e["runs"]
    cols = [k for k in ("rbf", "alternate", "greedy", "nonlinear") if k in runs]
    names = {"rbf": "RBF kernel", "alternate": "H1-SVM", "greedy": "H1-SVM Gr-Heu", "nonlinear": "non-linear tree"}
    head = [""] + [names[c] for c in cols] + [f"RBF/{names[c]}" for c in cols if c != "rbf"]
    lines = md_header(head)

    def ratio(a, b):
        return f"{a / b:.2f}" if b else "-"

    for label, key, fmt in (("Nr. SVs or hyperplanes", "size", "{}"), ("Training time (s)", "train_s", "{:.3f}"),
                            ("Classification time (s)", "predict_s", "{:.4f}"),
                            ("llsvm-predict wall time (s)", "predict_wall_s", "{:.3f}"),
                            ("Classif. accuracy %", "accuracy", "{:.2f}")):
        cells = [label] + [fmt.format(runs[c][key]) for c in cols]
        cells += [ratio(runs["rbf"][key], runs[c][key]) for c in cols if c != "rbf"]
        lines.append(md_row(cells))
    depth = [label for label in cols if runs[label]["average_depth"] is not None]
    if depth:
        lines.append(md_row(["average classification depth"] + [
            f"{runs[c]['average_depth']:.2f}" if runs[c]["average_depth"] is not None else "-" for c in cols]
            + ["" for c in cols if c != "rbf"]))
    return f"### {e['dataset']} ({e['train_rows']} train / {e['test_rows']} test, RBF C = {e['rbf_C']}, " \
           f"gamma = {e['gamma']:.4g}, --h1-c {e['h1_c']})\n\n" + "\n".join(lines)


def acceptance(exps):
    """The spec's A1-A5 over the experiments run: an Acceptance (lines and the figures that failed)."""
    acc = Acceptance()

    def line(ok, text):
        name, _, rest = text.partition(" ")
        acc.add(name, ok, rest)

    def speed(r, other):
        return r["runs"]["rbf"]["predict_s"] / r["runs"][other]["predict_s"]

    if "usps.t" in exps:
        r = exps["usps.t"]["runs"]
        d = r["greedy"]["accuracy"] - r["rbf"]["accuracy"]
        s = speed(exps["usps.t"], "greedy")
        line(d >= -2.5 and s >= 5.9, f"A1 usps.t: greedy tree {d:+.2f} points against RBF (>= -2.5), predict {s:.1f}x "
                                     "faster (>= 5.9x)")
    if "mushrooms" in exps:
        r = exps["mushrooms"]["runs"]
        s = speed(exps["mushrooms"], "greedy")
        line(r["greedy"]["size"] <= 5 and r["greedy"]["accuracy"] >= 99.8 and s >= 100,
             f"A2 mushrooms: {r['greedy']['size']} hyperplanes (<= 5), {r['greedy']['accuracy']:.2f} % (>= 99.8), "
             f"predict {s:.0f}x faster (>= 100x)")
    if "skin_nonskin" in exps:
        r = exps["skin_nonskin"]["runs"]
        d1 = r["greedy"]["accuracy"] - r["rbf"]["accuracy"]
        s1 = speed(exps["skin_nonskin"], "greedy")
        line(d1 >= -0.5 and s1 >= 20, f"A3 skin, linear tree: {d1:+.2f} points (>= -0.5), predict {s1:.1f}x faster "
                                       "(>= 20x)")
        d2 = r["nonlinear"]["accuracy"] - r["rbf"]["accuracy"]
        s2 = speed(exps["skin_nonskin"], "nonlinear")
        line(d2 >= -0.1 and s2 >= 5, f"A3 skin, non-linear tree: {d2:+.2f} points (>= -0.1), predict {s2:.1f}x "
                                      "faster (>= 5x)")
    if "svmguide1" in exps:
        r = exps["svmguide1"]["runs"]
        d = r["nonlinear"]["accuracy"] - r["rbf"]["accuracy"]
        reach = r["nonlinear"]["reach_rbf_test"]
        line(d >= -0.5 and reach is not None and reach <= 0.4,
             f"A4 svmguide1, non-linear tree: {d:+.2f} points (>= -0.5), {100 * (reach or 0):.1f} % of test rows "
             "reach the RBF node (<= 40 %)")
    for name, e in exps.items():
        r = e["runs"]
        if "alternate" in r and "greedy" in r:
            t = r["greedy"]["train_seconds"] / max(r["alternate"]["train_seconds"], 1e-9)
            line(r["greedy"]["size"] <= r["alternate"]["size"] and t <= 2.5,
                 f"A5 {name}: greedy {r['greedy']['size']} hyperplanes against alternate's {r['alternate']['size']}, "
                 f"training time {t:.2f}x (<= 2.5x)")
    return acc


PAPER_NAME = "Fehr, Zapién Arreola, Burkhardt (GfKl 2007)"
NODE_STYLES = ("-", "--", "-.", ":")
NODE_COLOURS = ("black", "tab:purple", "tab:green", "tab:brown", "tab:pink")     # none of the classes' colours


def fourclass_figure(X, y, nodes):
    """Figs. 2-3: the data (the two classes as light markers) and each node's hyperplane, numbered in the order the
    tree built them (colours and line styles none of the classes', the number written at the line's end); `nodes`:
    the tree's nodes (idx, val, b, hard)."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7.2, 5.4))
    for lab, c, mk in zip(np.unique(y), ("tab:blue", "tab:orange"), ("o", "^")):
        ax.scatter(X[y == lab, 0], X[y == lab, 1], s=7, c=c, marker=mk, alpha=0.45, label=f"class {int(lab)}")
    x0, x1 = X[:, 0].min(), X[:, 0].max()
    y0, y1 = X[:, 1].min(), X[:, 1].max()
    xs = np.linspace(x0, x1, 200)
    for k, n in enumerate(nodes):
        w = np.zeros(2)
        w[n.idx] = n.val
        style = dict(color=NODE_COLOURS[k % len(NODE_COLOURS)], lw=1.6, ls=NODE_STYLES[k % len(NODE_STYLES)],
                     label=f"node {k + 1} (hard class {n.hard})")
        if abs(w[1]) > 1e-12:
            ys = -(w[0] * xs + n.b) / w[1]
            inside = (ys >= y0) & (ys <= y1)
            ax.plot(xs, ys, **style)
            if inside.any():
                i = np.flatnonzero(inside)[-1]
                ax.annotate(str(k + 1), (xs[i], ys[i]), fontsize=9, fontweight="bold", xytext=(3, 3),
                            textcoords="offset points")
        elif abs(w[0]) > 1e-12:
            ax.axvline(-n.b / w[0], **style)
    ax.set_xlim(x0 - 0.02 * (x1 - x0), x1 + 0.02 * (x1 - x0))
    ax.set_ylim(y0 - 0.02 * (y1 - y0), y1 + 0.02 * (y1 - y0))
    ax.set_xlabel("feature 1 (fourclass, unscaled)")
    ax.set_ylabel("feature 2 (fourclass, unscaled)")
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    ax.set_title(f"{PAPER_NAME}, Figs. 2-3: the H1-SVM tree's nodes on fourclass\n"
                 f"(--h1-c 1: {len(nodes)} nodes, numbered in the order built; the paper shows 6, at a C it does "
                 "not give)", fontsize=9)
    return fig


def fourclass_png(tmp, out_dir):
    """Figs. 2-3: the nodes of the fourclass tree (kappa = 1: with C = inf the soft centroids lie inside the hard
    hulls and no node is built) over the data, numbered in order."""
    ds = load("fourclass", tmp)
    if ds is None:
        return None
    path = write(ds, os.path.join(tmp, "fourclass.txt"))
    model_path = os.path.join(tmp, "fourclass.model")
    run([exe("llsvm-train"), "-q", "-s", "h1tree", "--h1-c", "1", path, model_path])
    m = llsvm.load_model(model_path)
    fig = fourclass_figure(ds.to_csr().toarray(), ds.y, m.trees[0].nodes)
    return save_png(fig, os.path.join(out_dir, "fourclass-nodes.png"))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--seed", type=int, default=DEFAULT_SEED,
                    help=f"the 70/30 splits and skin_nonskin's training rows (default {DEFAULT_SEED})")
    ap.add_argument("--out", "--out-dir", dest="out_dir", default=None,
                    help="output directory (default reproduce-results/<seed>/h1tree; --quick: .../h1tree/quick)")
    args = ap.parse_args(argv)
    repeats = 1 if args.quick else args.repeats
    args.out_dir = reproduce_dir(os.path.join("h1tree", *(("quick",) if args.quick else ())), args.seed,
                                 args.out_dir)
    tmp = tempfile.mkdtemp(prefix="llsvm-h1-")
    exps = {}
    try:
        ds = load("usps.t", tmp)
        if ds is not None:
            tr, te = split(ds, 0.3, args.seed)
            exps["usps.t"] = experiment("usps.t", tr, te, tmp, repeats, 10.0, "2")
        ds = load("mushrooms", tmp)
        if ds is not None:
            tr, te = split(ds, 0.3, args.seed)
            exps["mushrooms"] = experiment("mushrooms", tr, te, tmp, repeats, 1.0, "inf")
        if not args.quick:
            ds = load("skin_nonskin", tmp)
            if ds is not None:
                tr, te = split(ds, None, args.seed, n_train=3372)
                tr, te = minmax_scale(tr, te)
                exps["skin_nonskin"] = experiment("skin_nonskin", tr, te, tmp, repeats, 10.0, "inf", nonlinear=True)
            tr, te = load("svmguide1", tmp), load("svmguide1.t", tmp)
            if tr is not None and te is not None:
                tr, te = minmax_scale(tr, te)
                exps["svmguide1"] = experiment("svmguide1", tr, te, tmp, repeats, 1.0, "inf", nonlinear=True,
                                               linear_variants=False)
        png = fourclass_png(tmp, args.out_dir)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    stamp = timestamp()
    acc = acceptance(exps)
    text = "\n\n".join(table(e) for e in exps.values())
    text += "\n\n### Acceptance (spec A1-A5)\n\n" + acc.text()
    if png:
        text += f"\n\nFigs. 2-3: {png}"
    with open(os.path.join(args.out_dir, "h1tree.md"), "w") as f:
        f.write(f"llsvm reproduce-h1tree {stamp}\n\n{text}\n")
    with open(os.path.join(args.out_dir, "h1tree.json"), "w") as f:
        json.dump({"meta": run_meta(stamp, repeats=repeats, seed=args.seed, quick=args.quick), "experiments": exps,
                   "acceptance": acc.lines, "failed": acc.failed}, f, indent=1, default=float)
    print(text)
    return exit_status("reproduce-h1tree", acc.failed)


if __name__ == "__main__":
    sys.exit(main())
