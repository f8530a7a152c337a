#!/usr/bin/env python3
"""llsvm benchmarks (`make bench`): text parsing, binary loading, conversion memory, and solvers vs LIBLINEAR.

For each dataset, in one run:
  - parse time of `sklearn.datasets.load_svmlight_file` and of `llsvm.read_dataset` (single-threaded), MB/s, ratio;
  - text -> binary conversion (`llsvm-convert`, a subprocess: wall time and peak RSS), at full size and at a
    quarter of the rows, to show the conversion's memory does not grow with the input;
  - loading the binary file into memory (`llsvm.read_dataset` on it), and its ratio to parsing the text;
  - the in-memory dataset's bytes against 12 bytes per non-zero + 8 per row (+8 per row for the labels);
  - peak RSS of loading the text into memory (a subprocess).
Solvers (issue "Foundation II"), against liblinear-official's C library in the same process:
  - `-s 3` and `-s 1` solver time (llsvm.train on the loaded dataset vs LIBLINEAR's C `train` call on a problem
    built beforehand), single-threaded, same C, eps and bias; with --threads 2 on the 10-class set;
  - primal objectives of both models (one NumPy definition), relative difference, and against a tight reference
    (-s 2 at eps 1e-6 for the squared hinge; -s 3 at eps 1e-3 for the hinge);
  - test accuracy of both, and whether llsvm predicts exactly what LIBLINEAR predicts for LIBLINEAR's own model;
  - end-to-end `llsvm-train` (parse + train, a subprocess: wall time and peak RSS) against LIBLINEAR's
    end-to-end time estimated as its C reader's rate (60 MB/s on this machine class) plus its train call.
Timings are medians of --repeats runs. Results: a Markdown table on stdout and Markdown + JSON in bench-results/.

Datasets: the generated `sparse` (500k x 100k, ~75 nnz/row) and `dense` (400k x 200) sets, made under data/ by
scripts/gen_data.py when missing, plus every file in ../shared/data (xz, decompressed to a temporary directory).
"""
import argparse
import datetime
import json
import lzma
import os
import platform
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

SETS = {
    # name: (kind, seed, default rows, test rows, options for gen_data.generate)
    "sparse": ("sparse", 1, 500_000, 50_000, {}),
    "dense": ("dense", 2, 400_000, 40_000, {}),
    "multiclass": ("multiclass", 3, 200_000, 20_000, {}),
}
LIBLINEAR_READ_MB_S = 60.0


def median_time(fn, repeats):
    times = []
    result = None
    for _ in range(repeats):
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), result


# A child's peak RSS (ru_maxrss) includes the high-water mark of the process it was forked from, carried across
# exec; forked from this benchmark (gigabytes of data loaded) it would be meaningless. So a small launcher process
# starts the command and reports the command's own peak.
_LAUNCHER = """
import json, os, subprocess, sys, time
t0 = time.perf_counter()
p = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
_, status, usage = os.wait4(p.pid, 0)
err = p.stderr.read().decode()
print(json.dumps({"seconds": time.perf_counter() - t0, "maxrss_kb": usage.ru_maxrss,
                  "rc": os.waitstatus_to_exitcode(status), "stderr": err}))
"""


def run_measured(cmd):
    """Run a command; return (seconds, peak RSS in MB) of that command alone."""
    out = subprocess.run([sys.executable, "-c", _LAUNCHER, *cmd], check=True, capture_output=True, text=True)
    r = json.loads(out.stdout)
    if r["rc"] != 0:
        raise RuntimeError(f"{cmd} failed ({r['rc']}): {r['stderr']}")
    return r["seconds"], r["maxrss_kb"] / 1024.0


def fresh_time(code, repeats):
    """Median of `repeats` timings printed by `code` run in a fresh Python process (as a user's command runs)."""
    times = []
    for _ in range(repeats):
        out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
        times.append(float(out.stdout.strip().splitlines()[-1]))
    return statistics.median(times)


def ensure_set(name, data_dir, scale, quiet):
    """(train path, test path) of a generated set, made with scripts/gen_data.py when missing."""
    import gen_data

    kind, seed, rows, test_rows, opts = SETS[name]
    suffix = "" if scale == 1.0 else f"-x{scale:g}"
    path = os.path.join(data_dir, name + suffix)
    if not (os.path.exists(path) and os.path.exists(path + ".t")):
        os.makedirs(data_dir, exist_ok=True)
        t0 = time.perf_counter()
        gen_data.generate(kind, path, rows=int(rows * scale), seed=seed, test_out=path + ".t",
                          test_rows=max(1000, int(test_rows * scale)), **opts)
        if not quiet:
            print(f"# generated {path} in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    return path, path + ".t"


def first_rows(path, out, n_rows):
    """Write the first n_rows lines of a text file to out (for the quarter-size conversion)."""
    if not os.path.exists(out):
        with open(path, "rb") as f, open(out + ".part", "wb") as g:
            for i, line in enumerate(f):
                if i >= n_rows:
                    break
                g.write(line)
        os.replace(out + ".part", out)
    return out


def bench_file(name, path, tmp, repeats, sklearn_repeats, convert=True, memory=True):
    from sklearn.datasets import load_svmlight_file

    size = os.path.getsize(path)
    mb = size / 1e6
    row = {"dataset": name, "text_mb": round(mb, 1)}
    t_sk, _ = median_time(lambda: load_svmlight_file(path), sklearn_repeats)
    timed = "import time, llsvm\nt = time.perf_counter()\nllsvm.read_dataset({!r})\nprint(time.perf_counter() - t)"
    t_ll = fresh_time(timed.format(path), repeats)
    ds = llsvm.read_dataset(path)
    row.update(rows=ds.n_rows, features=ds.n_features, nnz=ds.nnz,
               sklearn_s=t_sk, sklearn_mb_s=mb / t_sk, llsvm_parse_s=t_ll, llsvm_mb_s=mb / t_ll,
               parse_speedup_vs_sklearn=t_sk / t_ll)
    row["dataset_bytes"] = ds.nbytes
    row["bytes_budget_12nnz_8row"] = 12 * ds.nnz + 8 * ds.n_rows
    row["bytes_per_nnz"] = (ds.indices.nbytes + ds.values.nbytes) / max(ds.nnz, 1)
    row["bytes_per_row"] = (ds.indptr.nbytes + ds.y.nbytes) / max(ds.n_rows, 1)
    del ds
    binpath = os.path.join(tmp, name + ".bin")
    convert_cmd = [os.path.join(os.path.dirname(sys.executable), "llsvm-convert"), "-q", path, binpath]
    if convert:
        t_conv, rss_conv = run_measured(convert_cmd)
        row.update(convert_s=t_conv, convert_peak_rss_mb=rss_conv)
    else:
        llsvm.write_binary(path, binpath)
    row["binary_mb"] = round(os.path.getsize(binpath) / 1e6, 1)
    bds = llsvm.BinaryDataset(binpath)
    row["blocks"] = bds.n_blocks
    bds.close()
    t_load = fresh_time(timed.format(binpath), repeats)
    t_load_warm, view = median_time(lambda: llsvm.read_dataset(binpath), repeats)
    row.update(binary_load_s=t_load, binary_load_in_process_s=t_load_warm, load_speedup_vs_parse=t_ll / t_load)
    del view
    if memory:
        code = f"import llsvm; ds = llsvm.read_dataset({path!r})"
        _, rss_load = run_measured([sys.executable, "-c", code])
        _, rss_base = run_measured([sys.executable, "-c", "import llsvm"])
        row.update(text_load_peak_rss_mb=rss_load, import_rss_mb=rss_base)
    os.unlink(binpath)
    return row


def _primal(ds, labels, W, bias, l1_loss, C=1.0):
    """Sum over the one-vs-rest problems of 1/2 |w|^2 + C sum loss (one definition for both libraries)."""
    from llsvm.solvers import Subproblem

    total = 0.0
    cols = [0] if labels.size == 2 else range(labels.size)
    yi = np.trunc(ds.y).astype(np.int64)
    for k in cols:
        ys = np.where(yi == labels[k], 1, -1).astype(np.int8)
        total += Subproblem(ds, ys, C, C, bias=bias).primal(np.ascontiguousarray(W[:, k]), l1_loss)
    return total


def _inner_count(seconds):
    """Calls per timing for a job taking `seconds`: short jobs are repeated to about 50 ms (timer noise)."""
    return 1 if seconds >= 0.05 else max(1, int(0.05 / max(seconds, 1e-6)))


def _liblinear_train(X, y, opts, repeats):
    """(median seconds of the C train call only, liblinear model) for a problem built beforehand."""
    from liblinear import liblinear as L
    from liblinear.liblinearutil import toPyModel

    param = L.parameter(opts)
    prob = L.problem(y, X)
    prob.set_bias(param.bias)
    L.liblinear.set_print_string_function(L.ctypes_print_null)

    def once():
        t0 = time.perf_counter()
        m = L.liblinear.train(prob, param)
        return time.perf_counter() - t0, toPyModel(m)

    first, model = once()
    inner = _inner_count(first)
    times = []
    for _ in range(repeats):
        total = 0.0
        for _ in range(inner):
            sec, model = once()
            total += sec
        times.append(total / inner)
    return statistics.median(times), model


def timed(fn, repeats):
    """(median seconds per call, last result); calls shorter than 50 ms are repeated within each timing."""
    t0 = time.perf_counter()
    result = fn()
    inner = _inner_count(time.perf_counter() - t0)
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(inner):
            result = fn()
        times.append((time.perf_counter() - t0) / inner)
    return statistics.median(times), result


def _ll_W(m, n_features, bias):
    nr_w = 1 if m.nr_class == 2 else m.nr_class
    w_size = n_features + (1 if bias >= 0 else 0)
    return np.ctypeslib.as_array(m.w, shape=(w_size * nr_w,)).reshape(w_size, nr_w).copy()


def _quiet(text):
    pass


def bench_solvers(name, path, test_path, repeats, tmp, threads_set=False):
    """llsvm vs LIBLINEAR for -s 3 and -s 1 on one train/test pair; returns a list of rows."""
    from liblinear.liblinearutil import save_model

    from llsvm.linear import train
    from llsvm.model import Model

    ds = llsvm.read_dataset(path)
    te = llsvm.read_dataset(test_path) if test_path else ds
    X = ds.to_csr()
    bias = 1.0
    rows = []
    for s in (3, 1):
        l1 = s == 3
        t_ll, llm = _liblinear_train(X, ds.y, f"-s {s} -c 1 -B {bias:g} -q", repeats)
        t_ours, model = timed(lambda: train(ds, solver=s, C=1.0, bias=bias, seed=1, threads=1, say=_quiet),
                              repeats)
        labels = model.label
        W_ll = _ll_W(llm, ds.n_features, bias)
        ll_labels = np.array(llm.get_labels())
        # align LIBLINEAR's columns with ours (same label order rules, but be safe)
        order = [int(np.flatnonzero(ll_labels == lab)[0]) for lab in labels] if ll_labels.size > 2 else [0]
        W_ll_al = W_ll[:, order]
        if ll_labels.size == 2 and ll_labels[0] != labels[0]:
            W_ll_al = -W_ll_al
        p_ours = _primal(ds, labels, model.W, bias, l1)
        p_ll = _primal(ds, labels, W_ll_al, bias, l1)
        acc_ours = 100.0 * float((model.predict(te) == te.y).mean())
        mpath = os.path.join(tmp, f"{name}-s{s}.liblinear.model")
        save_model(mpath, llm)
        ll_model = Model.load(mpath)
        pred_ll_by_us = ll_model.predict(te)
        from liblinear.liblinearutil import predict as ll_predict
        p_lab, _, _ = ll_predict(te.y, te.to_csr(), llm, "-q")
        acc_ll = 100.0 * float((np.array(p_lab) == te.y).mean())
        row = {"dataset": name, "solver": f"-s {s}", "rows": ds.n_rows, "nnz": ds.nnz,
               "llsvm_train_s": t_ours, "liblinear_train_s": t_ll, "ratio": t_ours / t_ll,
               "primal_llsvm": p_ours, "primal_liblinear": p_ll, "primal_rel_diff": (p_ours - p_ll) / abs(p_ll),
               "acc_llsvm": acc_ours, "acc_liblinear": acc_ll, "acc_diff_pp": acc_ours - acc_ll,
               "same_predictions_for_liblinear_model": int((pred_ll_by_us != np.array(p_lab)).sum()) == 0,
               "n_iter": max(r.n_iter for r in model.meta["results"])}
        # tight reference optimum
        if l1:
            ref = train(ds, solver=3, C=1.0, bias=bias, eps=1e-3, max_iter=1000, seed=1, say=lambda t: None)
        else:
            ref = train(ds, solver=2, C=1.0, bias=bias, eps=1e-6, seed=1)
        p_ref = _primal(ds, labels, ref.W, bias, l1)
        row.update(primal_ref=p_ref, primal_rel_diff_ref=(p_ours - p_ref) / abs(p_ref))
        if threads_set:
            t2, m2 = timed(lambda: train(ds, solver=s, C=1.0, bias=bias, seed=1, threads=2, say=_quiet), repeats)
            row.update(llsvm_threads2_s=t2, ratio_threads2=t2 / t_ll,
                       threads2_identical=bool(np.array_equal(m2.W, model.W)))
        rows.append(row)
        print(json.dumps(row), file=sys.stderr)
    return rows


def bench_end_to_end(name, path, tmp, liblinear_train_s):
    """llsvm-train -s 3 -B 1 on the text file (subprocess): wall time and peak RSS vs LIBLINEAR's estimate."""
    exe = os.path.join(os.path.dirname(sys.executable), "llsvm-train")
    model = os.path.join(tmp, name + ".e2e.model")
    seconds, rss = run_measured([exe, "-s", "3", "-B", "1", "-q", path, model])
    mb = os.path.getsize(path) / 1e6
    ll_parse = mb / LIBLINEAR_READ_MB_S
    return {"dataset": name, "llsvm_e2e_s": seconds, "liblinear_e2e_est_s": ll_parse + liblinear_train_s,
            "e2e_ratio": seconds / (ll_parse + liblinear_train_s), "llsvm_e2e_peak_rss_mb": rss}


def _accuracy(model_path, test_ds):
    m = llsvm.load_model(model_path)
    return 100.0 * float(np.mean(m.predict(test_ds) == test_ds.y))


def table2_row(name, ds, inner_iter=None):
    """The paper's Table 2 on one set: alpha_i = 0 counts of -s llsvm and -s 3, and their status mismatch."""
    from llsvm.onepass import DEFAULT_INNER_ITER, LLSVMOptions
    from reproduce_llsvm import match_problems, mismatch
    m = llsvm.train(ds, solver="llsvm", bias=1.0, llsvm=LLSVMOptions(return_alpha=True,
                                                                     inner_iter=inner_iter or DEFAULT_INNER_ITER))
    m3 = llsvm.train(ds, solver=3, bias=1.0, say=_quiet)
    mism, zl, z3 = [], 0, 0
    for k, j, _ in match_problems(m, m3):
        r, r3 = m.meta["results"][j], m3.meta["results"][k]
        mism.append(mismatch(r.alpha, r3.alpha))
        zl += int(np.count_nonzero(r.alpha == 0))
        z3 += int(np.count_nonzero(r3.alpha == 0))
    return {"dataset": name, "rows": ds.n_rows, "zero_llsvm": zl, "zero_s3": z3, "mismatch": max(mism),
            "mismatch_mean": float(np.mean(mism)), "problems": len(mism)}


def bench_llsvm(name, path, test_path, repeats, tmp):
    """-s llsvm vs -s 3 from text, as a user runs them (subprocesses): wall time, accuracy, and --memory 64M."""
    exe = os.path.join(os.path.dirname(sys.executable), "llsvm-train")
    m3, ml, mm = (os.path.join(tmp, f"{name}.{k}.model") for k in ("s3", "llsvm", "m64"))
    jl, jm = os.path.join(tmp, name + ".llsvm.json"), os.path.join(tmp, name + ".m64.json")
    t3, tl, tm, r3, rl, rm = [], [], [], [], [], []
    for _ in range(repeats):
        s, r = run_measured([exe, "-s", "3", "-B", "1", "-q", path, m3])
        t3.append(s), r3.append(r)
        s, r = run_measured([exe, "-s", "llsvm", "-B", "1", "-q", "--json", jl, path, ml])
        tl.append(s), rl.append(r)
    s, r = run_measured([exe, "-s", "llsvm", "-B", "1", "-q", "--memory", "64M", "--json", jm, path, mm])
    tm.append(s), rm.append(r)
    test = llsvm.read_dataset(test_path)
    jl_d, jm_d = json.load(open(jl)), json.load(open(jm))
    acc3, accl, accm = _accuracy(m3, test), _accuracy(ml, test), _accuracy(mm, test)
    row = {"dataset": name, "s3_s": statistics.median(t3), "llsvm_s": statistics.median(tl),
           "ratio": statistics.median(tl) / statistics.median(t3), "acc_s3": acc3, "acc_llsvm": accl,
           "acc_diff_pp": accl - acc3, "s3_peak_rss_mb": max(r3), "llsvm_peak_rss_mb": max(rl),
           "m64_s": tm[0], "m64_peak_rss_mb": rm[0], "acc_m64": accm, "m64_blocks": jm_d["blocks"],
           "active_first_pass": jl_d["active_first_pass"], "n_iter": jl_d["n_iter"],
           "dual_llsvm": jl_d["dual"], "dual_m64": jm_d["dual"],
           "m64_dual_rel_diff": (jm_d["dual"] - jl_d["dual"]) / abs(jl_d["dual"])}
    return row


def llsvm_markdown(rows, t2rows):
    cols = [("dataset", "set"), ("s3_s", "-s 3 s"), ("llsvm_s", "llsvm s"), ("ratio", "ratio"),
            ("acc_s3", "acc -s 3"), ("acc_llsvm", "acc llsvm"), ("acc_diff_pp", "diff pp"),
            ("active_first_pass", "active after pass 1"), ("n_iter", "outer its"),
            ("s3_peak_rss_mb", "-s 3 RSS MB"), ("llsvm_peak_rss_mb", "llsvm RSS MB"),
            ("m64_peak_rss_mb", "64M RSS MB"), ("m64_s", "64M s"), ("m64_blocks", "64M blocks"),
            ("m64_dual_rel_diff", "64M dual rel diff"), ("acc_m64", "acc 64M")]
    lines = ["| " + " | ".join(c[1] for c in cols) + " |", "|" + "---|" * len(cols)]
    for r in rows:
        lines.append("| " + " | ".join(f"{r[c]:+.1e}" if c == "m64_dual_rel_diff" else fmt(r.get(c, ""))
                                       for c, _ in cols) + " |")
    out = "\n".join(lines)
    if t2rows:
        cols = [("dataset", "set"), ("rows", "rows"), ("problems", "problems"), ("zero_llsvm", "alpha=0 llsvm"),
                ("zero_s3", "alpha=0 -s 3"), ("mismatch", "mismatch (max)"), ("mismatch_mean", "mismatch (mean)")]
        lines = ["| " + " | ".join(c[1] for c in cols) + " |", "|" + "---|" * len(cols)]
        for r in t2rows:
            lines.append("| " + " | ".join(fmt(r[c], 4) for c, _ in cols) + " |")
        out += "\n\nTable 2 (-s llsvm vs -s 3, C=1, -B 1):\n\n" + "\n".join(lines)
    return out


def solver_markdown(rows):
    cols = [("dataset", "set"), ("solver", "-s"), ("llsvm_train_s", "llsvm s"), ("liblinear_train_s", "LIBLINEAR s"),
            ("ratio", "ratio"), ("ratio_threads2", "ratio 2 thr"), ("primal_rel_diff", "primal vs LL"),
            ("primal_rel_diff_ref", "primal vs ref"), ("acc_llsvm", "acc llsvm"), ("acc_liblinear", "acc LL"),
            ("same_predictions_for_liblinear_model", "LL model same preds")]
    lines = ["| " + " | ".join(c[1] for c in cols) + " |", "|" + "---|" * len(cols)]
    for r in rows:
        cells = []
        for c, _ in cols:
            v = r.get(c, "")
            if c in ("primal_rel_diff", "primal_rel_diff_ref") and v != "":
                cells.append(f"{v:+.2e}")
            elif isinstance(v, float):
                cells.append(f"{v:.3f}" if c.endswith("_s") or c.startswith("ratio") else f"{v:.2f}")
            else:
                cells.append(str(v))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def fmt(v, nd=2):
    if isinstance(v, float):
        return f"{v:.{nd}f}"
    return str(v)


def markdown(rows):
    cols = [("dataset", "set"), ("text_mb", "text MB"), ("nnz", "nnz"), ("sklearn_mb_s", "sklearn MB/s"),
            ("llsvm_mb_s", "llsvm MB/s"), ("parse_speedup_vs_sklearn", "parse x sklearn"),
            ("binary_load_s", "bin load s"), ("load_speedup_vs_parse", "load x parse"),
            ("convert_s", "convert s"), ("convert_peak_rss_mb", "convert RSS MB"),
            ("bytes_per_nnz", "B/nnz"), ("bytes_per_row", "B/row"), ("text_load_peak_rss_mb", "load RSS MB")]
    lines = ["| " + " | ".join(c[1] for c in cols) + " |", "|" + "---|" * len(cols)]
    for r in rows:
        lines.append("| " + " | ".join(fmt(r.get(c[0], "")) for c in cols) + " |")
    return "\n".join(lines)


def shared_sets(tmp):
    """(name, train path, test path or None) for every set in ../shared/data, decompressed into tmp."""
    shared = os.path.join(ROOT, "..", "shared", "data")
    if not os.path.isdir(shared):
        return []
    names = sorted(fn[:-3] for fn in os.listdir(shared) if fn.endswith(".xz"))
    out = []
    for name in names:
        plain = os.path.join(tmp, name)
        with lzma.open(os.path.join(shared, name + ".xz")) as f, open(plain, "wb") as g:
            shutil.copyfileobj(f, g)
        out.append(name)
    return [(n, os.path.join(tmp, n), os.path.join(tmp, n + ".t") if n + ".t" in names else None)
            for n in out if not n.endswith(".t")]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sets", default="sparse,dense,multiclass", help="generated sets (comma list; '' for none)")
    ap.add_argument("--parts", default="parse,solvers,llsvm",
                    help="what to run: parse, solvers, llsvm (comma list)")
    ap.add_argument("--scale", type=float, default=1.0, help="fraction of the default rows (quick runs)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--sklearn-repeats", type=int, default=None, help="default: --repeats")
    ap.add_argument("--no-shared", action="store_true", help="skip ../shared/data")
    ap.add_argument("--data-dir", default=os.path.join(ROOT, "data"))
    ap.add_argument("--out-dir", default=os.path.join(ROOT, "bench-results"))
    ap.add_argument("-q", "--quiet", action="store_true")
    args = ap.parse_args()
    sk_rep = args.sklearn_repeats or args.repeats
    parts = set(args.parts.split(","))
    exe_convert = os.path.join(os.path.dirname(sys.executable), "llsvm-convert")

    os.makedirs(args.out_dir, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix="llsvm-bench-")
    rows, solver_rows, e2e_rows, llsvm_rows, t2_rows = [], [], [], [], []
    try:
        generated = [(name, *ensure_set(name, args.data_dir, args.scale, args.quiet))
                     for name in [x for x in args.sets.split(",") if x]]
        shared = [] if args.no_shared else shared_sets(tmp)
        if "parse" in parts:
            for name, path, _ in generated:
                if name == "multiclass":
                    continue
                r = bench_file(name, path, tmp, args.repeats, sk_rep)
                # the same conversion on a quarter of the rows: peak memory must not depend on the input size
                quarter = first_rows(path, os.path.join(tmp, name + ".quarter"), r["rows"] // 4)
                t_q, rss_q = run_measured([exe_convert, "-q", quarter, os.path.join(tmp, name + ".quarter.bin")])
                r.update(convert_quarter_s=t_q, convert_quarter_peak_rss_mb=rss_q)
                os.unlink(quarter)
                rows.append(r)
                if not args.quiet:
                    print(json.dumps(r), file=sys.stderr)
            for name, path, _ in shared:
                rows.append(bench_file(name, path, tmp, max(args.repeats, 5), max(sk_rep, 5), convert=False,
                                       memory=False))
        if "solvers" in parts:
            for name, path, test in generated:
                srows = bench_solvers(name, path, test, args.repeats, tmp, threads_set=(name == "multiclass"))
                solver_rows.extend(srows)
                if name == "sparse":
                    ll_s3 = [r for r in srows if r["solver"] == "-s 3"][0]["liblinear_train_s"]
                    e = bench_end_to_end(name, path, tmp, ll_s3)
                    nnz = srows[0]["nnz"]
                    e.update(rss_budget_mb=(14 * nnz) / 1e6 + 100, nnz=nnz)
                    e2e_rows.append(e)
                    print(json.dumps(e), file=sys.stderr)
            for name, path, test in shared:
                solver_rows.extend(bench_solvers(name, path, test, max(args.repeats, 3), tmp,
                                                 threads_set=False))
        if "llsvm" in parts:
            for name, path, test in generated:
                r = bench_llsvm(name, path, test, args.repeats, tmp)
                llsvm_rows.append(r)
                if not args.quiet:
                    print(json.dumps(r), file=sys.stderr)
            for name, path, test in generated + shared:
                ds = llsvm.read_dataset(path)
                t2_rows.append(table2_row(name, ds))
                del ds
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    meta = {"when": stamp, "python": platform.python_version(), "machine": platform.machine(),
            "cpus": os.cpu_count(), "llsvm": llsvm.__version__, "repeats": args.repeats, "scale": args.scale}
    text = []
    if rows:
        text.append("## Parsing and binary loading\n\n" + markdown(rows))
        for r in rows:
            if "convert_peak_rss_mb" in r:
                text.append(f"{r['dataset']}: conversion peak RSS {r['convert_peak_rss_mb']:.0f} MB for "
                            f"{r['text_mb']} MB of text, {r['convert_quarter_peak_rss_mb']:.0f} MB for a quarter of "
                            f"it; in-memory dataset {r['dataset_bytes'] / 1e6:.1f} MB = {r['bytes_per_nnz']:.1f} "
                            f"B/nnz + {r['bytes_per_row']:.1f} B/row (budget 12 B/nnz + 8 B/row = "
                            f"{r['bytes_budget_12nnz_8row'] / 1e6:.1f} MB)")
    if solver_rows:
        text.append("## Solvers vs LIBLINEAR (C=1, -B 1, default eps, single thread unless noted)\n\n"
                    + solver_markdown(solver_rows))
    for e in e2e_rows:
        text.append(f"{e['dataset']} end to end (llsvm-train -s 3 -B 1, text): {e['llsvm_e2e_s']:.2f} s vs LIBLINEAR "
                    f"estimated {e['liblinear_e2e_est_s']:.2f} s (ratio {e['e2e_ratio']:.3f}); peak RSS "
                    f"{e['llsvm_e2e_peak_rss_mb']:.0f} MB (budget 14 B/nnz + 100 MB = {e['rss_budget_mb']:.0f} MB)")
    if llsvm_rows or t2_rows:
        text.append("## -s llsvm vs -s 3 (from text, C=1, -B 1, default eps; subprocess wall time)\n\n"
                    + llsvm_markdown(llsvm_rows, t2_rows))
    report = "\n\n".join(text)
    with open(os.path.join(args.out_dir, f"bench-{stamp}.json"), "w") as f:
        json.dump({"meta": meta, "parse": rows, "solvers": solver_rows, "end_to_end": e2e_rows,
                   "llsvm": llsvm_rows, "table2": t2_rows}, f, indent=1, default=float)
    with open(os.path.join(args.out_dir, f"bench-{stamp}.md"), "w") as f:
        f.write(f"llsvm bench {stamp} ({meta['python']}, {meta['cpus']} cpus)\n\n{report}\n")
    print(report)


if __name__ == "__main__":
    main()
