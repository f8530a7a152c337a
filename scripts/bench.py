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
-s llsvm (part `llsvm`, issue 14), every job a subprocess of `llsvm-train` from text:
  - on each generated set, `-s llsvm --memory 64M` (--llsvm-memory) in its default mode and with `--one-pass`
    against `-s 3` (medians of --repeats), and `-s 3 -e 0.001` for the reference primal; the targets as ✓/✗
    lines: default mode primal within 1e-3 relative of the reference's, test accuracy within 0.1 points of
    `-s 3`'s, wall <= 1.0x `-s 3`'s, peak RSS <= the budget + 60 MB; `--one-pass` wall <= 0.6x `-s 3`'s;
  - on each public set (data/public, `make data`), from its binary file: `-s 3` (converged? from its --json) and `-s llsvm` at
    --memory a quarter of the binary file's size (the solver's minimum when that is more), test accuracy (5-fold
    CV without a test file); target: within 0.2 points where `-s 3` converges;
  - the paper's Table 2 (`-s llsvm --one-pass` vs `-s 3`, in memory) on every set.
-s streamsvm and -s bm (part `stream`, issues "StreamSVM" and 14), on the generated sparse set as a binary file
(data/sparse.bin, written with llsvm.write_binary when missing) and as text, --memory 64M, default -e (0.1 for all
three), every job a subprocess of the installed commands:
  - `-s 3` with unlimited memory, from the binary file: wall time (median), test accuracy (llsvm-predict); D* = the
    dual of `-s 3 -e 1e-4`;
  - `-s streamsvm --memory 64M` and `-s bm --memory 64M` from the binary file: wall, peak RSS, accuracy, and t_reach,
    the time to a dual within 1e-3 relative of D*: (wall - train_seconds) + `seconds` of the first per-pass
    (streamsvm) / per-block (bm) record that is close enough (process start, imports and model writing count);
    when the default -e stops a solver before it gets there, one more run at `-e` --reach-eps (0.001) gives it;
  - both from the text file: peak RSS (the first pass parses and copies it);
  - the issue's targets: streamsvm's wall <= 1.5 x -s 3's, its accuracy within 0.1 points of -s 3's, its t_reach
    <= 0.5 x bm's, and every peak RSS (both solvers, text and binary) <= --memory + 60 MB; for information, the
    trainer's update rate and the reader's MB/s (medians over the passes) against sequential block reading of the
    same file in this process (BinaryDataset.iter_blocks, page cache warm).
-s smo (part `smo`, issue 15): against libsvm-official's C svm_train on the public sets, in this process:
training time ratio, the dual objective of both models by one definition, nSV and accuracy (scripts/bench_smo.py).
LIBLINEAR's other solver types (part `types`, issue 18): -s 0 4 5 6 7 11 12 13 21 against liblinear-official's C
`train` in this process, on the generated sets (--types-scale of their rows), a generated regression set and
the public sets: time, the objective at the same -e, test accuracy / MSE, predict agreement, models read both ways,
and LIBLINEAR against itself with another rand() seed (scripts/bench_liblinear.py).
Start-up (part `startup`, issue 26): the wall of llsvm-train -q, llsvm-predict, llsvm-convert --info and --help on
heart_scale against LIBLINEAR's train/predict and Python's own floor (python, import numpy, import click), medians
of --startup-runs, and the solver modules each -s imports (scripts/bench_startup.py). Busy machine (part
`contention`, issue 26): -s smo and kernel prediction with the default threads against --threads 1 (and the
opt-in --threads N, and LIBSVM's binaries when given) beside one CPU-bound process per core, and quiet
(scripts/bench_contention.py). Signals (part `signals`, issue 27): for every solver of the registry and for
llsvm-predict with an -s smo model, on a9a, the exit latency after SIGINT and after SIGTERM sent in the middle of a
run (median and worst of --signal-runs), the exit code and that no file is left (scripts/bench_signals.py).
Whole commands (part `cli`, issue 29): llsvm-train and llsvm-predict against LIBLINEAR's train/predict and LIBSVM's
svm-train/svm-predict (built from their sources: --liblinear-dir, --libsvm-dir or $LLSVM_LIBLINEAR_DIR /
$LLSVM_LIBSVM_DIR), wall and peak RSS, medians of --cli-repeats round-robin runs, quiet and beside one
`yes > /dev/null` per core, whether the models are identical (scripts/bench_cli.py).
Defaults (part `defaults`, issue 43): every solver type at the tools' defaults, whole commands: `llsvm-train -s N
[-B 1]` for LIBLINEAR's twelve types against its `train`, `llsvm-train -s smo|nu_svc|one_class|epsilon_svr|nu_svr
[-b 1]` against LIBSVM's `svm-train -s 0-4 [-b 1]` (the same reference CLIs as part cli), on every public training
set of data/sets.tsv and a generated 200-class set: median wall of --defaults-repeats round-robin runs, the ratio,
identical models, ✓/✗ for ratio <= 1.5 where the reference takes >= 0.5 s, refusals, crashes and time-outs
(--defaults-timeout) reported as such; --defaults-sets / --defaults-solvers select (scripts/bench_defaults.py).
Threads (part `threads`, issue 32): one two-class problem, -s 3 1 2 0, LIBLINEAR's single-thread train call and
liblinear-multicore's -m 2 against llsvm --threads 1 and 2 on the generated sparse sets (--threads-seeds), the
dense set and the largest two-class public sets (scripts/bench_threads.py).
Out of core (part `ooc`, issue 32): -s llsvm and -s streamsvm at --memory 64M against in-memory -s 3 on the
generated sparse sets (--ooc-seeds) as binary files in the page cache, at their default -e (certified): wall and
CPU ratios, peak RSS, interleaved runs, each after a memory warm-up (scripts/bench_ooc.py).
Conversion (part `convert`, issue 32): the in-memory parse on 1 and 2 threads and llsvm-convert --threads 1 and 2
(whole commands) on the generated sparse and dense sets and the largest public sets, interleaved rounds: MB/s, CPU
seconds, and the conversion's speed against the parse's (scripts/bench_parse.py); before each run a helper touches
and frees memory, so no run inherits pages a virtual machine's host took back (bench_parse's docstring).
Peers (part `peers`, issue 49; not in the default --parts: it needs the peers' venv and is long): llsvm against
the tools a user would pick for speed, ratios peer ÷ llsvm of the same round (above 1: llsvm faster), peak RSS
beside each: (a) -s smo on 1 and 2 threads against scikit-learn-intelex's SVC and LIBSVM's svm-train on a9a,
usps.t, mushrooms, dna.scale and a 50,000-row sample of skin_nonskin (nSV and the dual of both by one
definition); (b) -s 3 1 2 0 --threads 2 against Snap ML's SupportVectorMachine / LogisticRegression (n_jobs=2)
from the same CSR matrix, the primal of both by one definition, on the generated sparse (--peers-seeds) and dense
sets, quiet and beside two CPU-bound processes; (c) -s llsvm and -s streamsvm at --memory 64M against in-memory -s 3
(part ooc's runs) and Vowpal Wabbit's one pass; (d) llsvm-convert against the in-memory parse and VW's reader.
--peers makes or updates the peers' venv (bench-results/peers-venv, pip from PyPI: snapml, vowpalwabbit,
scikit-learn-intelex; a peer that cannot be had is reported and the others run); without it an existing venv is
used, else only llsvm's and LIBSVM's figures are taken. --peers-scale small is a smoke run
(scripts/bench_peers.py).
Timings are medians of --repeats runs. Results: a Markdown table on stdout and Markdown + JSON in bench-results/.

Datasets: the generated `sparse` (500k x 100k, ~75 nnz/row) and `dense` (400k x 200) sets, made under data/ by
scripts/gen_data.py when missing, plus every public LIBSVM set in data/public (NAME.xz, decompressed to a temporary
directory; `make data` fetches them from the addresses of data/sets.tsv and checks them).
"""
import argparse
import json
import lzma
import math
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
from benchutil import (DATA_DIR, FETCH_HINT, accuracy, ensure_binary, match_problems, md_header,  # noqa: E402
                       md_row, mismatch, run_meta, say, shared_training_sets, timestamp, warm_page_cache)
from benchutil import liblinear_train as _liblinear_train, ll_W as _ll_W, run_measured, timed  # noqa: E402

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
    # llsvm imports its names on first use: import read_dataset (numpy, the kernels) before the clock starts
    timed = ("import time\nfrom llsvm import read_dataset\nt = time.perf_counter()\nread_dataset({!r})\n"
             "print(time.perf_counter() - t)")
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
        code = f"from llsvm import read_dataset; ds = read_dataset({path!r})"
        _, rss_load = run_measured([sys.executable, "-c", code])
        _, rss_base = run_measured([sys.executable, "-c", "from llsvm import read_dataset"])
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


def _quiet(text):
    pass


def bench_solvers(name, path, test_path, repeats, tmp, threads_set=False):
    """llsvm vs LIBLINEAR for -s 3 and -s 1 on one train/test pair; returns a list of rows."""
    from liblinear.liblinearutil import save_model

    from llsvm.solvers.trainer import train
    from llsvm.models.linear import Model

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


# -- part "llsvm": -s llsvm against -s 3 ----------------------------------------------------------------------------
LLSVM_MEMORY = "64M"
LLSVM_REF_EPS = 1e-3              # the primal reference: -s 3 -e 0.001
LLSVM_TARGETS = {"primal_rel": 1e-3, "acc_diff_pp": 0.1, "wall_vs_s3": 1.0, "rss_over_budget_mb": 60.0,
                 "one_pass_wall_vs_s3": 0.6, "shared_acc_diff_pp": 0.2}
SHARED_FOLDS = 5                  # shared sets without a test file: 5-fold cross-validation accuracy
ACC_SLACK = 1e-9                  # accuracy differences are multiples of 100/n: 0.1 points must pass despite rounding


def table2_row(name, ds, inner_iter=None):
    """The paper's Table 2 on one set: alpha_i = 0 counts of -s llsvm --one-pass (the paper's Algorithm 2) and
    -s 3, and their status mismatch."""
    from llsvm.options import OPTION, LLSVMOptions
    DEFAULT_INNER_ITER = OPTION['--inner-iter'].default
    m = llsvm.train(ds, solver="llsvm", bias=1.0, options=LLSVMOptions(return_alpha=True, one_pass=True,
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


def _train_json(exe, args, path, model, jpath):
    """One llsvm-train run with --json (a subprocess): (wall seconds, peak RSS MB, its metrics)."""
    wall, rss = run_measured([exe, *args, "-q", "--json", jpath, path, model])
    with open(jpath) as f:
        return wall, rss, json.load(f)


def bench_llsvm(name, path, test_path, repeats, tmp, memory=LLSVM_MEMORY):
    """-s llsvm --memory M (default mode, and --one-pass) against -s 3, from text, as a user runs them
    (subprocesses), with the issue's targets: primal within 1e-3 relative of -s 3 -e 0.001's, test accuracy within
    0.1 points of -s 3's, wall <= 1.0x -s 3's, peak RSS <= M + 60 MB, --one-pass wall <= 0.6x -s 3's."""
    from llsvm.memory import parse_size

    exe = os.path.join(os.path.dirname(sys.executable), "llsvm-train")
    T = LLSVM_TARGETS
    runs = {}
    plan = [("s3", ["-s", "3", "-B", "1"], repeats),
            ("ref", ["-s", "3", "-B", "1", "-e", f"{LLSVM_REF_EPS:g}", "--max-iter", "1000"], 1),
            ("llsvm", ["-s", "llsvm", "-B", "1", "--memory", memory], repeats),
            ("one_pass", ["-s", "llsvm", "-B", "1", "--memory", memory, "--one-pass"], repeats)]
    for _ in range(max(1, repeats)):         # interleaved, so that machine noise spreads over all of them
        for tag, args, n in plan:
            if len(runs.setdefault(tag, [])) < n:
                model, jpath = os.path.join(tmp, f"{name}.{tag}.model"), os.path.join(tmp, f"{name}.{tag}.json")
                runs[tag].append(_train_json(exe, args, path, model, jpath))
    test = llsvm.read_dataset(test_path)
    acc = {tag: accuracy(llsvm.load_model(os.path.join(tmp, f"{name}.{tag}.model")), test) for tag, _, _ in plan}
    del test
    wall = {tag: statistics.median(r[0] for r in rs) for tag, rs in runs.items()}
    rss = {tag: max(r[1] for r in rs) for tag, rs in runs.items()}
    js = {tag: rs[-1][2] for tag, rs in runs.items()}
    p_ref, p_ll = js["ref"]["primal"], js["llsvm"]["primal"]
    budget_mb = parse_size(memory) / (1 << 20)
    row = {"dataset": name, "memory": memory, "rows": js["llsvm"]["n_rows"], "nnz": js["llsvm"]["nnz"],
           "s3_s": wall["s3"], "s3_peak_rss_mb": rss["s3"], "acc_s3": acc["s3"], "primal_s3": js["s3"]["primal"],
           "ref_eps": LLSVM_REF_EPS, "ref_s": wall["ref"], "primal_ref": p_ref, "ref_converged": js["ref"]["converged"],
           "acc_ref": acc["ref"],
           "llsvm_s": wall["llsvm"], "llsvm_peak_rss_mb": rss["llsvm"], "acc_llsvm": acc["llsvm"],
           "primal_llsvm": p_ll, "dual_llsvm": js["llsvm"]["dual"], "gap_llsvm": js["llsvm"]["gap"],
           "max_violation_llsvm": js["llsvm"]["max_violation"], "converged_llsvm": js["llsvm"]["converged"],
           "rechecks": js["llsvm"]["rechecks"], "reentered": js["llsvm"]["reentered"],
           "n_iter": js["llsvm"]["n_iter"], "blocks": js["llsvm"]["blocks"],
           "active_first_pass": js["llsvm"]["active_first_pass"],
           "one_pass_s": wall["one_pass"], "one_pass_peak_rss_mb": rss["one_pass"], "acc_one_pass": acc["one_pass"],
           "dual_one_pass": js["one_pass"]["dual"], "n_iter_one_pass": js["one_pass"]["n_iter"],
           "walls": {tag: [r[0] for r in rs] for tag, rs in runs.items()}}
    row.update(primal_rel=(p_ll - p_ref) / abs(p_ref), primal_rel_s3=(js["s3"]["primal"] - p_ref) / abs(p_ref),
               acc_diff_pp=acc["llsvm"] - acc["s3"], ratio=wall["llsvm"] / wall["s3"],
               one_pass_ratio=wall["one_pass"] / wall["s3"], rss_budget_mb=budget_mb + T["rss_over_budget_mb"])
    row["targets"] = {
        "primal_within_1e-3": row["primal_rel"] <= T["primal_rel"],
        "acc_within_0_1pp": abs(row["acc_diff_pp"]) <= T["acc_diff_pp"] + ACC_SLACK,
        "wall_le_1_0_s3": row["ratio"] <= T["wall_vs_s3"],
        "peak_rss_le_budget_plus_60mb": row["llsvm_peak_rss_mb"] <= row["rss_budget_mb"],
        "one_pass_wall_le_0_6_s3": row["one_pass_ratio"] <= T["one_pass_wall_vs_s3"]}
    return row


def llsvm_min_memory(n_rows, n_features, n_classes):
    """The smallest --memory -s llsvm takes for a binary file: the status bytes and weight vectors
    (OnePassSolver._state_bytes) plus the smallest working set (MIN_BUDGET). Counted, as the driver counts a binary
    input before training, with one problem per class (for two classes one more than it trains: on the safe side)."""
    from llsvm.solvers.common import MIN_BUDGET
    from llsvm.solvers.onepass import OnePassSolver

    return OnePassSolver()._state_bytes(n_rows, max(1, n_classes), n_features) + MIN_BUDGET


def bench_llsvm_shared(name, path, test_path, tmp):
    """One public set (data/public): -s 3 (converged? from its --json) and -s llsvm (default mode) with --memory a quarter
    of the binary file's size (the solver's minimum when that is less), both trained from the binary file; test
    accuracy, or 5-fold cross-validation accuracy when the set has no test file."""
    exe = os.path.join(os.path.dirname(sys.executable), "llsvm-train")
    binpath = os.path.join(tmp, name + ".bin")
    llsvm.write_binary(path, binpath)
    ds = llsvm.read_dataset(binpath)
    n_rows, n_features, n_classes = ds.n_rows, ds.n_features, len(ds.labels)
    del ds
    size = os.path.getsize(binpath)
    quarter, minimum = size // 4, llsvm_min_memory(n_rows, n_features, n_classes)
    memory = max(quarter, minimum)
    s3, ll = ["-s", "3", "-B", "1"], ["-s", "llsvm", "-B", "1", "--memory", str(memory)]
    model, jpath = os.path.join(tmp, name + ".model"), os.path.join(tmp, name + ".json")
    _, _, j3 = _train_json(exe, s3, binpath, model, jpath)
    row = {"dataset": name, "rows": n_rows, "features": n_features, "classes": n_classes, "binary_bytes": size,
           "memory": memory, "quarter": quarter, "minimum": minimum, "memory_floor": quarter < minimum,
           "s3_converged": j3["converged"], "s3_n_iter": j3["n_iter"]}
    if test_path:
        te = llsvm.read_dataset(test_path)
        row["acc_s3"] = accuracy(llsvm.load_model(model), te)
        _, _, jl = _train_json(exe, ll, binpath, model, jpath)
        row.update(acc_llsvm=accuracy(llsvm.load_model(model), te), measure="test", llsvm_converged=jl["converged"],
                   llsvm_rechecks=jl["rechecks"], llsvm_max_violation=jl["max_violation"], row_pp=100.0 / te.n_rows)
        del te
    else:
        folds = ["-v", str(SHARED_FOLDS)]
        row["acc_s3"] = _train_json(exe, s3 + folds, binpath, model, jpath)[2]["cv_accuracy"]
        row.update(acc_llsvm=_train_json(exe, ll + folds, binpath, model, jpath)[2]["cv_accuracy"],
                   measure=f"{SHARED_FOLDS}-fold CV", row_pp=100.0 / n_rows)
    os.unlink(binpath)
    row["acc_diff_pp"] = row["acc_llsvm"] - row["acc_s3"]
    row["within_0_2pp"] = (abs(row["acc_diff_pp"]) <= LLSVM_TARGETS["shared_acc_diff_pp"] + ACC_SLACK) \
        if row["s3_converged"] else None
    return row


# -- part "stream": -s streamsvm and -s bm against -s 3 on the binary sparse set -------------------------------------
STREAM_MEMORY = "64M"
STREAM_REL = 1e-3                 # "within 1e-3 relative of D*"
STREAM_REACH_EPS = 1e-3           # -e of the runs that measure t_reach when the default -e stops short of it
# issue 14: -s streamsvm (default -e) within 1.5 x -s 3's wall time and 0.1 accuracy points of it; its t_reach at
# most half -s bm's; peak RSS of both, from text and from binary, within --memory + 60 MB
STREAM_TARGETS = {"wall_vs_s3": 1.5, "t_reach_vs_bm": 0.5, "rss_over_memory_mb": 60.0, "acc_diff_pp": 0.1}


def sequential_read(binpath, repeats):
    """Median seconds of reading every block of a binary file in order (llsvm-convert --info-style), and the sum
    of the blocks' in-memory bytes (the unit of -s streamsvm's reader_mb_per_second)."""
    def once():
        ds = llsvm.BinaryDataset(binpath)
        try:
            return sum(b.nbytes for b in ds.iter_blocks())
        finally:
            ds.close()
    return median_time(once, repeats)


def predict_accuracy(model_path, test_path, tmp):
    """Test accuracy (%) through llsvm-predict (its --json metrics)."""
    exe = os.path.join(os.path.dirname(sys.executable), "llsvm-predict")
    jp, out = os.path.join(tmp, "predict.json"), os.path.join(tmp, "predict.out")
    subprocess.run([exe, "-q", "--json", jp, test_path, model_path, out], check=True, capture_output=True)
    acc = float(json.load(open(jp))["accuracy"])
    os.unlink(out)
    return acc


def _stream_records(d):
    """The per-pass (streamsvm) or per-block (bm) records of a one-problem --json; None for several problems."""
    classes = d.get("classes") or []
    if len(classes) != 1:
        return None
    c = classes[0]
    return c.get("passes") if "passes" in c else c.get("trace")


def t_reach(d, wall, d_star, rel=None):
    """(Seconds from process start to the first record with (D* - dual)/|D*| <= rel, or None; the record)."""
    rel = STREAM_REL if rel is None else rel
    recs = _stream_records(d) or []
    for r in recs:
        if (d_star - r["dual"]) / abs(d_star) <= rel:
            return (wall - d["train_seconds"]) + r["seconds"], r
    return None, None


def _median_or_none(values):
    """Median, counting None (not reached) as infinitely late; None when the median itself is not reached."""
    vals = sorted(math.inf if v is None else v for v in values)
    if not vals:
        return None
    m = statistics.median(vals)
    return None if math.isinf(m) else m


def _run_stream(exe, args, binpath, tmp, tag, d_star, test_path):
    """One llsvm-train run with --json: wall, RSS, metrics, t_reach, accuracy (when test_path)."""
    model, jpath = os.path.join(tmp, tag + ".model"), os.path.join(tmp, tag + ".json")
    wall, rss = run_measured([exe, *args, "-q", "--json", jpath, binpath, model])
    d = json.load(open(jpath))
    t, rec = t_reach(d, wall, d_star)
    recs = _stream_records(d) or []
    run = {"wall_s": wall, "peak_rss_mb": rss, "train_s": d["train_seconds"], "t_reach_s": t,
           "reach_at": (rec.get("pass") if "pass" in rec else [rec.get("outer"), rec.get("block")]) if rec else None,
           "n_iter": d["n_iter"], "converged": d["converged"], "dual": d["dual"],
           "final_rel_diff": (d_star - d["dual"]) / abs(d_star), "records": len(recs),
           "self_peak_rss_mb": d.get("peak_rss_mb"),
           "trace": [{k: r.get(k) for k in ("pass", "outer", "block", "seconds", "dual", "updates_per_second",
                                            "reader_mb_per_second", "cache_fill", "picks", "updates") if k in r}
                     for r in recs]}
    if recs and "updates_per_second" in recs[0]:
        ups = [r["updates_per_second"] for r in recs if r.get("updates_per_second") is not None]
        mbs = [r["reader_mb_per_second"] for r in recs if r.get("reader_mb_per_second") is not None]
        run.update(updates_per_second=statistics.median(ups) if ups else None,
                   reader_mb_per_second=statistics.median(mbs) if mbs else None,
                   cache_fill=statistics.median(r["cache_fill"] for r in recs),
                   omega=recs[-1].get("omega"), passes=len(recs))
    if test_path:
        run["acc"] = predict_accuracy(model, test_path, tmp)
    os.unlink(model)
    return run, d


def _reach(exe, solver, memory, binpath, tmp, name, d_star, runs, reach_eps, say):
    """t_reach of a solver: the median over its default-eps runs when they reach D*'s neighbourhood; else one run at
    -e reach_eps (the stopping rule, not the trajectory, decides whether a run gets there). Returns (t_reach, how,
    the extra run or None)."""
    t = _median_or_none([r["t_reach_s"] for r in runs])
    if t is not None or not reach_eps:
        return t, "default -e", None
    warm_page_cache(binpath)
    run, _ = _run_stream(exe, ["-s", solver, "-c", "1", "--memory", memory, "-e", f"{reach_eps:g}"], binpath, tmp,
                         f"{name}.{solver}-reach", d_star, None)
    say(f"-s {solver} -e {reach_eps:g}: wall {run['wall_s']:.2f} s, t_reach {_s(run['t_reach_s'])}")
    return run["t_reach_s"], f"-e {reach_eps:g}", run


def bench_stream(name, path, test_path, binpath, repeats, tmp, memory=STREAM_MEMORY, reach_eps=STREAM_REACH_EPS,
                 quiet=False):
    """-s streamsvm and -s bm (--memory) against -s 3 (unlimited) on one binary file, and their peak RSS from the
    text file too; returns one row."""
    exe = os.path.join(os.path.dirname(sys.executable), "llsvm-train")
    from llsvm.memory import parse_size
    budget_mb = parse_size(memory) / (1 << 20)

    def say(msg):
        if not quiet:
            print(f"# stream {name}: {msg}", file=sys.stderr, flush=True)

    warm_page_cache(binpath)
    bin_mb = os.path.getsize(binpath) / 1e6
    seq_s, seq_nbytes = sequential_read(binpath, max(repeats, 3))
    row = {"dataset": name, "binary": binpath, "text": path, "binary_mb": bin_mb, "memory": memory,
           "memory_mb": budget_mb, "rel": STREAM_REL, "sequential_s": seq_s, "sequential_mb_s": bin_mb / seq_s,
           "blocks_mb": seq_nbytes / 1e6, "sequential_blocks_mb_s": seq_nbytes / 1e6 / seq_s}
    say(f"sequential read {row['sequential_mb_s']:.0f} MB/s")
    # -s 3 unlimited, its default -e: wall (median), accuracy; D* from -s 3 -e 1e-4
    m3 = os.path.join(tmp, name + ".s3.model")
    t3, r3 = [], []
    for _ in range(repeats):
        warm_page_cache(binpath)
        s, r = run_measured([exe, "-s", "3", "-c", "1", "-q", binpath, m3])
        t3.append(s), r3.append(r)
    row.update(s3_s=statistics.median(t3), s3_peak_rss_mb=max(r3), s3_runs=t3)
    if test_path:
        row["acc_s3"] = predict_accuracy(m3, test_path, tmp)
    js = os.path.join(tmp, name + ".star.json")
    s, _ = run_measured([exe, "-s", "3", "-c", "1", "-e", "1e-4", "-q", "--json", js, binpath, m3])
    dstar = json.load(open(js))
    d_star = float(dstar["dual"])
    row.update(d_star=d_star, d_star_s=s, d_star_n_iter=dstar["n_iter"], d_star_converged=dstar["converged"])
    say(f"-s 3 {row['s3_s']:.2f} s, D* = {d_star:.10g} ({s:.1f} s)")
    # -s streamsvm and -s bm --memory, their default -e (two threads for streamsvm, the CLI's default)
    for solver in ("streamsvm", "bm"):
        runs = []
        for i in range(repeats):
            warm_page_cache(binpath)
            run, _ = _run_stream(exe, ["-s", solver, "-c", "1", "--memory", memory], binpath, tmp,
                                 f"{name}.{solver}{i}", d_star, test_path)
            runs.append(run)
            say(f"-s {solver} run {i + 1}: wall {run['wall_s']:.2f} s, t_reach {_s(run['t_reach_s'])}, "
                f"RSS {run['peak_rss_mb']:.0f} MB, {run['n_iter']} {'passes' if solver == 'streamsvm' else 'outer'}")
        t, how, extra = _reach(exe, solver, memory, binpath, tmp, name, d_star, runs, reach_eps, say)
        row.update({f"{solver}_runs": runs, f"{solver}_s": statistics.median(r["wall_s"] for r in runs),
                    f"{solver}_n_iter": statistics.median(r["n_iter"] for r in runs),
                    f"{solver}_converged": sum(r["converged"] for r in runs),
                    f"{solver}_peak_rss_mb": max(r["peak_rss_mb"] for r in runs),
                    f"{solver}_final_rel_diff": statistics.median(r["final_rel_diff"] for r in runs),
                    f"{solver}_t_reach_s": t, f"{solver}_t_reach_from": how, f"{solver}_reach_run": extra})
        if test_path:
            row[f"acc_{solver}"] = statistics.median(r["acc"] for r in runs)
        # from the text file: peak RSS (the first pass parses and copies it)
        text_runs = []
        for i in range(repeats):
            run, _ = _run_stream(exe, ["-s", solver, "-c", "1", "--memory", memory], path, tmp,
                                 f"{name}.{solver}-text{i}", d_star, None)
            text_runs.append(run)
            say(f"-s {solver} from text run {i + 1}: wall {run['wall_s']:.2f} s, RSS {run['peak_rss_mb']:.0f} MB")
        row.update({f"{solver}_text_runs": text_runs,
                    f"{solver}_text_s": statistics.median(r["wall_s"] for r in text_runs),
                    f"{solver}_text_peak_rss_mb": max(r["peak_rss_mb"] for r in text_runs)})
    runs = row["streamsvm_runs"]
    row.update(streamsvm_updates_per_s=statistics.median(r["updates_per_second"] for r in runs),
               streamsvm_reader_mb_s=statistics.median(r["reader_mb_per_second"] for r in runs),
               streamsvm_omega=runs[0]["omega"])
    if test_path:
        row["acc_diff_pp"] = row["acc_streamsvm"] - row["acc_s3"]
    # the issue's figures
    T = STREAM_TARGETS
    ts, tb = row["streamsvm_t_reach_s"], row["bm_t_reach_s"]
    row["wall_vs_s3"] = row["streamsvm_s"] / row["s3_s"]
    row["t_reach_vs_bm"] = None if ts is None or tb is None else ts / tb
    rss_limit = budget_mb + T["rss_over_memory_mb"]
    row["rss_limit_mb"] = rss_limit
    row["targets"] = {
        "wall_le_1_5_s3": row["wall_vs_s3"] <= T["wall_vs_s3"],
        "t_reach_le_half_bm": ts is not None and (tb is None or ts <= T["t_reach_vs_bm"] * tb),
        "acc_within_0_1pp": abs(row["acc_diff_pp"]) <= T["acc_diff_pp"] if test_path else None,
        **{f"rss_{solver}_{kind}": row[f"{solver}{'_text' if kind == 'text' else ''}_peak_rss_mb"] <= rss_limit
           for solver in ("streamsvm", "bm") for kind in ("text", "binary")},
    }
    row["reader_vs_sequential"] = row["streamsvm_reader_mb_s"] / row["sequential_mb_s"]
    return row


def _s(v, nd=2):
    return "not reached" if v is None else f"{v:.{nd}f}"


def _ok(b):
    return "–" if b is None else ("✓" if b else "✗")


def stream_markdown(rows):
    out = []
    for r in rows:
        m = r["memory"]
        cols = ["solver", "input", "wall s", f"t_reach s ({STREAM_REL:g} of D*)", "peak RSS MB", "accuracy %",
                "passes / outer its", "final (D*-D)/D*"]
        lines = md_header(cols)
        lines.append(f"| -s 3 (unlimited) | binary | {r['s3_s']:.2f} | – | {r['s3_peak_rss_mb']:.0f} | "
                     f"{fmt(r.get('acc_s3', ''))} | – | – |")
        for solver in ("streamsvm", "bm"):
            acc = r.get(f"acc_{solver}")
            lines.append(f"| -s {solver} --memory {m} | binary | {r[f'{solver}_s']:.2f} | "
                         f"{_s(r[f'{solver}_t_reach_s'])} ({r[f'{solver}_t_reach_from']}) | "
                         f"{r[f'{solver}_peak_rss_mb']:.0f} | {fmt(acc if acc is not None else '')} | "
                         f"{r[f'{solver}_n_iter']:g} | {r[f'{solver}_final_rel_diff']:+.1e} |")
            lines.append(f"| -s {solver} --memory {m} | text | {r[f'{solver}_text_s']:.2f} | – | "
                         f"{r[f'{solver}_text_peak_rss_mb']:.0f} | – | – | – |")
        text = (f"### {r['dataset']} ({r['binary_mb']:.3g} MB binary file, --memory {m}, C=1, default -e; D* = "
                f"{r['d_star']:.10g} from -s 3 -e 1e-4 in {r['d_star_s']:.1f} s)\n\n" + "\n".join(lines))
        T = STREAM_TARGETS
        c = r["targets"]
        ts, tb = r["streamsvm_t_reach_s"], r["bm_t_reach_s"]
        checks = [
            f"- {_ok(c['wall_le_1_5_s3'])} -s streamsvm wall {r['streamsvm_s']:.2f} s <= {T['wall_vs_s3']} x -s 3's "
            f"{r['s3_s']:.2f} s: {r['wall_vs_s3']:.2f} x",
            f"- {_ok(c['t_reach_le_half_bm'])} -s streamsvm t_reach {_s(ts)} s <= {T['t_reach_vs_bm']} x -s bm's "
            f"{_s(tb)} s" + ("" if r["t_reach_vs_bm"] is None else f": {r['t_reach_vs_bm']:.2f} x"),
            f"- {_ok(c['acc_within_0_1pp'])} |accuracy(streamsvm) - accuracy(-s 3)| = "
            + (f"{abs(r['acc_diff_pp']):.2f}" if "acc_diff_pp" in r else "–") + f" <= {T['acc_diff_pp']} points",
        ]
        for solver in ("streamsvm", "bm"):
            for kind, key in (("binary", f"{solver}_peak_rss_mb"), ("text", f"{solver}_text_peak_rss_mb")):
                checks.append(f"- {_ok(c[f'rss_{solver}_{kind}'])} -s {solver} from {kind}: peak RSS {r[key]:.0f} MB "
                              f"<= --memory {m} + {T['rss_over_memory_mb']:.0f} MB = {r['rss_limit_mb']:.0f} MB")
        checks.append(f"- information: cache Omega = {r['streamsvm_omega']} rows; trainer "
                      f"{r['streamsvm_updates_per_s']:,.0f} updates/s; reader {r['streamsvm_reader_mb_s']:.0f} MB/s, "
                      f"{r['reader_vs_sequential']:.2f} x sequential block reading ({r['sequential_mb_s']:.0f} MB/s)")
        out.append(text + "\n\n" + "\n".join(checks))
    return "\n\n".join(out)


def _e(v):
    return "–" if v is None else f"{v:+.2e}"


def llsvm_markdown(rows, shared_rows, t2rows):
    T = LLSVM_TARGETS
    out = []
    for r in rows:
        m = r["memory"]
        lines = md_header(["run", "wall s", "peak RSS MB", "accuracy %", "primal", "(P - P_ref)/P_ref",
                           "converged", "passes / outer its"])
        conv = "yes" if r["converged_llsvm"] else "no (--max-passes)"
        lines += [
            f"| -s 3 | {r['s3_s']:.2f} | {r['s3_peak_rss_mb']:.0f} | {fmt(r['acc_s3'])} | {r['primal_s3']:.8g} | "
            f"{_e(r['primal_rel_s3'])} | – | – |",
            f"| -s 3 -e {r['ref_eps']:g} (P_ref) | {r['ref_s']:.2f} | – | {fmt(r['acc_ref'])} | "
            f"{r['primal_ref']:.8g} | 0 | {'yes' if r['ref_converged'] else 'no'} | – |",
            f"| -s llsvm --memory {m} | {r['llsvm_s']:.2f} | {r['llsvm_peak_rss_mb']:.0f} | {fmt(r['acc_llsvm'])} | "
            f"{r['primal_llsvm']:.8g} | {_e(r['primal_rel'])} | {conv} | {r['rechecks']} re-check passes, "
            f"{r['n_iter']} outer its |",
            f"| -s llsvm --memory {m} --one-pass | {r['one_pass_s']:.2f} | {r['one_pass_peak_rss_mb']:.0f} | "
            f"{fmt(r['acc_one_pass'])} | – | – | – | {r['n_iter_one_pass']} outer its |"]
        c = r["targets"]
        checks = [
            f"- {_ok(c['primal_within_1e-3'])} -s llsvm primal {_e(r['primal_rel'])} relative to -s 3 -e "
            f"{r['ref_eps']:g}'s, <= {T['primal_rel']:g} (max violation {r['max_violation_llsvm']:.3g}, "
            f"{r['reentered']} rows re-entered)",
            f"- {_ok(c['acc_within_0_1pp'])} |accuracy(llsvm) - accuracy(-s 3)| = {abs(r['acc_diff_pp']):.2f} <= "
            f"{T['acc_diff_pp']} points",
            f"- {_ok(c['wall_le_1_0_s3'])} -s llsvm wall {r['llsvm_s']:.2f} s <= {T['wall_vs_s3']} x -s 3's "
            f"{r['s3_s']:.2f} s: {r['ratio']:.2f} x",
            f"- {_ok(c['peak_rss_le_budget_plus_60mb'])} -s llsvm peak RSS {r['llsvm_peak_rss_mb']:.0f} MB <= "
            f"{m} + {T['rss_over_budget_mb']:.0f} MB = {r['rss_budget_mb']:.0f} MB",
            f"- {_ok(c['one_pass_wall_le_0_6_s3'])} -s llsvm --one-pass wall {r['one_pass_s']:.2f} s <= "
            f"{T['one_pass_wall_vs_s3']} x -s 3's: {r['one_pass_ratio']:.2f} x"]
        out.append(f"### {r['dataset']} ({r['rows']:,} rows, {r['nnz']:,} nnz, from text; C=1, -B 1; medians of the "
                   f"wall times)\n\n" + "\n".join(lines) + "\n\n" + "\n".join(checks))
    if shared_rows:
        lines = md_header(["set", "rows", "classes", "measure", "--memory", "-s 3 converged?", "acc -s 3",
                           "acc llsvm", "diff", "1 row", f"within {T['shared_acc_diff_pp']} points"])
        floor = False
        for r in shared_rows:
            mem = f"{r['memory'] / 1024:,.0f}K" + (" (minimum)" if r["memory_floor"] else "")
            floor = floor or r["memory_floor"]
            lines.append(md_row([r["dataset"], f"{r['rows']:,}", str(r["classes"]), r["measure"], mem,
                                 "yes" if r["s3_converged"] else f"no ({r['s3_n_iter']} its)", f"{r['acc_s3']:.2f}",
                                 f"{r['acc_llsvm']:.2f}", f"{r['acc_diff_pp']:+.2f}", f"{r['row_pp']:.2f}",
                                 _ok(r["within_0_2pp"])]))
        conv = [r for r in shared_rows if r["s3_converged"]]
        ok = sum(1 for r in conv if r["within_0_2pp"])
        out.append(f"### public sets (data/public): -s llsvm (default mode) vs -s 3\n\nBoth trained from the binary file (C=1, "
                   f"-B 1); test accuracy, or {SHARED_FOLDS}-fold cross-validation accuracy when the set has no test "
                   f"file. -s llsvm's --memory is a quarter of the binary file's size"
                   + (", or the solver's minimum (status bytes, weight vectors and the smallest working set) when "
                      "that is more: marked (minimum)" if floor else "")
                   + f". '1 row': the points one test row (CV: one row) is worth. The target applies where -s 3 "
                     f"converges: {ok} of {len(conv)} within {T['shared_acc_diff_pp']} points.\n\n"
                   + "\n".join(lines))
    if t2rows:
        cols = [("dataset", "set"), ("rows", "rows"), ("problems", "problems"), ("zero_llsvm", "alpha=0 llsvm"),
                ("zero_s3", "alpha=0 -s 3"), ("mismatch", "mismatch (max)"), ("mismatch_mean", "mismatch (mean)")]
        lines = md_header([c[1] for c in cols])
        for r in t2rows:
            lines.append(md_row(fmt(r[c], 4) for c, _ in cols))
        out.append("### Table 2 (-s llsvm --one-pass, the paper's algorithm, vs -s 3; C=1, -B 1, in memory)\n\n"
                   + "\n".join(lines))
    return "\n\n".join(out)


def solver_markdown(rows):
    cols = [("dataset", "set"), ("solver", "-s"), ("llsvm_train_s", "llsvm s"), ("liblinear_train_s", "LIBLINEAR s"),
            ("ratio", "ratio"), ("ratio_threads2", "ratio 2 thr"), ("primal_rel_diff", "primal vs LL"),
            ("primal_rel_diff_ref", "primal vs ref"), ("acc_llsvm", "acc llsvm"), ("acc_liblinear", "acc LL"),
            ("same_predictions_for_liblinear_model", "LL model same preds")]
    lines = md_header([c[1] for c in cols])
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
        lines.append(md_row(cells))
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
    lines = md_header([c[1] for c in cols])
    for r in rows:
        lines.append(md_row(fmt(r.get(c[0], "")) for c in cols))
    return "\n".join(lines)


def shared_sets(tmp, only=None):
    """(name, train path, test path or None) for every public set in data/public (those named in `only`, when
    given), decompressed into tmp."""
    shared = DATA_DIR
    out = []
    if not shared_training_sets(shared):
        say(f"# no public sets in {os.path.relpath(shared, ROOT)}: their rows are left out ({FETCH_HINT})")
    for name in shared_training_sets(shared):
        if only is not None and name not in only:
            continue
        test = name + ".t" if os.path.exists(os.path.join(shared, name + ".t.xz")) else None
        for n in (name, test) if test else (name,):
            with lzma.open(os.path.join(shared, n + ".xz")) as f, open(os.path.join(tmp, n), "wb") as g:
                shutil.copyfileobj(f, g)
        out.append((name, os.path.join(tmp, name), os.path.join(tmp, test) if test else None))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sets", default="sparse,dense,multiclass", help="generated sets (comma list; '' for none)")
    ap.add_argument("--parts",
                    default="parse,solvers,llsvm,stream,smo,types,startup,contention,signals,cli,sklearn,dask,threads,"
                            "ooc,dense,convert,defaults",
                    help="what to run: parse, solvers, llsvm, stream, smo, types, startup, contention, signals, "
                         "cli, sklearn, dask, threads, ooc, dense, convert, defaults, and peers (not by default) "
                         "(comma list; dense: -s 3 where n >> d, scripts/bench_dense.py)")
    ap.add_argument("--startup-runs", type=int, default=20, help="part startup: runs of each command (median)")
    ap.add_argument("--liblinear-dir", default=os.environ.get("LIBLINEAR_DIR"),
                    help="parts startup, cli and defaults: directory of LIBLINEAR's train and predict, or of its "
                         "sources (default $LIBLINEAR_DIR; parts cli and defaults also read $LLSVM_LIBLINEAR_DIR; "
                         "without it, part startup uses liblinear-official's Python module)")
    ap.add_argument("--contention-sets", default=None,
                    help="part contention: public sets (data/public) or paths (default dna.scale,usps.t,segment.scale,a9a)")
    ap.add_argument("--contention-repeats", type=int, default=3, help="part contention: runs of each variant")
    ap.add_argument("--hogs", type=int, default=None, help="part contention: CPU-bound processes (default: the CPUs)")
    ap.add_argument("--libsvm-dir", default=os.environ.get("LIBSVM_DIR"),
                    help="parts contention, cli, defaults and peers: directory of LIBSVM's svm-train and "
                         "svm-predict, or of its sources for parts cli, defaults and peers (default $LIBSVM_DIR; parts "
                         "cli, defaults and peers also read $LLSVM_LIBSVM_DIR)")
    ap.add_argument("--sklearn-sets", default=None,
                    help="part sklearn: public sets and 'sparse' (the generated 500k-row set; default: the five "
                         "largest public training sets and sparse)")
    ap.add_argument("--sklearn-rows", type=int, default=500000, help="part sklearn: rows of the generated sparse set")
    ap.add_argument("--dask-rows", type=int, default=500000,
                    help="part dask: rows of the generated sparse set (CoCoA+)")
    ap.add_argument("--dask-seed", type=int, default=1, help="part dask: the sparse set's generator seed")
    ap.add_argument("--dask-ovr-rows", type=int, default=200000, help="part dask: rows of the 10-class set")
    ap.add_argument("--threads-rows", type=int, default=500000,
                    help="part threads: rows of the generated sparse sets (and 0.8 of them for the dense set)")
    ap.add_argument("--threads-seeds", default="1,2,3,4", help="part threads: the sparse generator's seeds")
    ap.add_argument("--ooc-rows", type=int, default=500000, help="part ooc: rows of the generated sparse sets")
    ap.add_argument("--ooc-seeds", default="1,2", help="part ooc: the sparse generator's seeds")
    ap.add_argument("--convert-rows", type=int, default=500000,
                    help="part convert: rows of the generated sparse set (and 0.8 of them for the dense set)")
    ap.add_argument("--peers", action="store_true",
                    help="part peers: make or update the peers' venv first (pip from PyPI: snapml, vowpalwabbit, "
                         "scikit-learn-intelex)")
    ap.add_argument("--peers-venv", default=None,
                    help="part peers: the peers' venv (default bench-results/peers-venv)")
    ap.add_argument("--peers-scale", default="full",
                    help="part peers: small (a smoke run), full (the issue's sizes) or a fraction of full's rows")
    ap.add_argument("--peers-parts", default="kernel,linear,ooc,convert",
                    help="part peers: kernel, linear, ooc, convert (comma list)")
    ap.add_argument("--peers-seeds", default=None,
                    help="part peers: the sparse generator's seeds (default: the scale's, 1,2,3,4 at full)")
    ap.add_argument("--peers-smo-ws", type=int, default=0,
                    help="part peers, kernel: llsvm -s smo with --ws N (default 0: LIBSVM's pair solver)")
    ap.add_argument("--peers-modes", default="quiet,busy",
                    help="part peers, linear: quiet and/or busy (beside two CPU-bound processes)")
    ap.add_argument("--peers-linear-eps", type=float, default=None,
                    help="part peers, linear: llsvm's -e (default: LIBLINEAR's of each -s)")
    ap.add_argument("--multicore", default=None,
                    help="part threads: a directory holding liblinear-multicore's `liblinear` package (pip install "
                         "--target DIR liblinear-multicore; default: installed into the run's temporary directory)")
    ap.add_argument("--cli-repeats", type=int, default=5,
                    help="part cli: round-robin runs of each command pair (median wall, largest peak RSS)")
    ap.add_argument("--cli-llsvm-bin", default=None,
                    help="part cli: directory of the llsvm commands to time (default: the installed console scripts)")
    ap.add_argument("--cli-baseline-bin", default=None,
                    help="part cli: directory of other llsvm commands (another tree's) timed in the same rounds")
    ap.add_argument("--cli-sets", default=None,
                    help="part cli: GROUP=SET+SET,... for the groups linear, linear_predict, smo, kernel_predict "
                         "(default: scripts/bench_cli.py's)")
    ap.add_argument("--defaults-repeats", type=int, default=3,
                    help="part defaults: round-robin runs of each command pair (median wall)")
    ap.add_argument("--defaults-timeout", type=float, default=120.0,
                    help="part defaults: seconds after which a command is killed and reported as timed out")
    ap.add_argument("--defaults-long", type=float, default=30.0,
                    help="part defaults: a cell whose first round takes longer (seconds) is timed once")
    ap.add_argument("--defaults-sets", default=None,
                    help="part defaults: sets of data/sets.tsv and '200-classes' (comma list; default: every "
                         "public training set and 200-classes)")
    ap.add_argument("--defaults-solvers", default=None,
                    help="part defaults: -s values (0 1 2 3 4 5 6 7 11 12 13 21 smo nu_svc one_class epsilon_svr "
                         "nu_svr) and the families liblinear, libsvm (comma list; default: all)")
    ap.add_argument("--signal-runs", type=int, default=5,
                    help="part signals: runs per signal and command (median and worst latency)")
    ap.add_argument("--signal-solvers", default=None,
                    help="part signals: -s values to run, and 'predict' (comma list; default: every solver and "
                         "predict)")
    ap.add_argument("--types", default=None,
                    help="part types: LIBLINEAR's solver types to run (comma list; default 0,7,5,6,4,11,12,13,21)")
    ap.add_argument("--types-scale", type=float, default=0.2,
                    help="part types: fraction of the generated sets' rows (default 0.2)")
    ap.add_argument("--smo-sets", default=None,
                    help="part smo: public sets (data/public; default: the issue's six and five not tuned on)")
    ap.add_argument("--llsvm-memory", default=LLSVM_MEMORY,
                    help="part llsvm: --memory of the -s llsvm runs on the generated sets (the public sets get a "
                         "quarter of their binary file's size)")
    ap.add_argument("--stream-sets", default="sparse",
                    help="part stream: generated set names or paths of text training files (test file: PATH.t); "
                         "each is written as PATH.bin when missing")
    ap.add_argument("--stream-memory", default=STREAM_MEMORY, help="part stream: --memory of the out-of-core runs")
    ap.add_argument("--reach-eps", type=float, default=STREAM_REACH_EPS,
                    help="part stream: -e of the extra -s streamsvm / -s bm run made when the default -e ends it "
                         "before it reaches 1e-3 of D* (0: no extra run)")
    ap.add_argument("--scale", type=float, default=1.0, help="fraction of the default rows (quick runs)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--sklearn-repeats", type=int, default=None, help="default: --repeats")
    ap.add_argument("--no-shared", action="store_true", help="skip the public sets (data/public)")
    ap.add_argument("--shared-sets", default=None,
                    help="only these public sets of data/public (comma list of names such as a9a,dna.scale)")
    ap.add_argument("--data-dir", default=os.path.join(ROOT, "data"))
    ap.add_argument("--out-dir", default=os.path.join(ROOT, "bench-results"))
    ap.add_argument("-q", "--quiet", action="store_true")
    args = ap.parse_args()
    sk_rep = args.sklearn_repeats or args.repeats
    parts = set(args.parts.split(","))
    exe_convert = os.path.join(os.path.dirname(sys.executable), "llsvm-convert")

    os.makedirs(args.out_dir, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix="llsvm-bench-")
    rows, solver_rows, e2e_rows, llsvm_rows, t2_rows, stream_rows = [], [], [], [], [], []
    llsvm_shared_rows, smo_rows, type_rows = [], [], []
    startup, contention_rows, signal_rows, cli, defaults = None, [], [], None, None
    sklearn_rows, sklearn_mem = [], []
    dask_result = None
    threads_rows = None
    dense_text = dense_rows = None
    ooc_rows = None
    convert_rows = None
    peers = None
    shared_dir = DATA_DIR
    try:
        # the generated sets and the decompressed public sets, for the parts that read them
        generated = [(name, *ensure_set(name, args.data_dir, args.scale, args.quiet))
                     for name in [x for x in args.sets.split(",") if x]] \
            if parts & {"parse", "solvers", "llsvm", "types"} else []
        only = None if args.shared_sets is None else set(x for x in args.shared_sets.split(",") if x)
        shared = [] if args.no_shared or not parts & {"parse", "solvers", "llsvm"} else shared_sets(tmp, only)
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
                r = bench_llsvm(name, path, test, args.repeats, tmp, memory=args.llsvm_memory)
                llsvm_rows.append(r)
                if not args.quiet:
                    print(json.dumps(r), file=sys.stderr)
            for name, path, test in shared:
                r = bench_llsvm_shared(name, path, test, tmp)
                llsvm_shared_rows.append(r)
                if not args.quiet:
                    print(json.dumps(r), file=sys.stderr)
            for name, path, test in generated + shared:
                ds = llsvm.read_dataset(path)
                t2_rows.append(table2_row(name, ds))
                del ds
        if "stream" in parts:
            for name in [x for x in args.stream_sets.split(",") if x]:
                if name in SETS:
                    path, test = ensure_set(name, args.data_dir, args.scale, args.quiet)
                else:
                    path, test = name, name + ".t"
                    name = os.path.basename(name)
                test = test if os.path.exists(test) else None
                binpath = ensure_binary(path, path + ".bin", None if args.quiet else say)
                r = bench_stream(name, path, test, binpath, args.repeats, tmp, memory=args.stream_memory,
                                 reach_eps=args.reach_eps, quiet=args.quiet)
                stream_rows.append(r)
                if not args.quiet:
                    print(json.dumps(r, default=float), file=sys.stderr)
        if "smo" in parts and not args.no_shared:
            from bench_smo import ISSUE_SETS, EXTRA_SETS, bench_smo
            smo_sets = ISSUE_SETS + EXTRA_SETS if args.smo_sets is None else args.smo_sets.split(",")
            smo_rows = bench_smo(shared_dir, tmp, max(args.repeats, 3), smo_sets,
                                 say=None if args.quiet else say)
        if "types" in parts:
            from bench_liblinear import TYPES, bench_types
            tps = TYPES if args.types is None else tuple(int(t) for t in args.types.split(","))
            type_rows = bench_types(generated, shared_dir, tmp, args.repeats,
                                    say=None if args.quiet else say, types=tps, scale=args.types_scale,
                                    shared=not args.no_shared)
        if "startup" in parts and not args.no_shared:
            from bench_startup import bench_startup
            startup = bench_startup(shared_dir, tmp, args.startup_runs, args.liblinear_dir,
                                    say=None if args.quiet else say)
        if "contention" in parts and not args.no_shared:
            from bench_contention import DEFAULT_SETS, bench_contention
            csets = DEFAULT_SETS if args.contention_sets is None else args.contention_sets.split(",")
            contention_rows = bench_contention(shared_dir, tmp, csets, args.contention_repeats, args.hogs,
                                               args.libsvm_dir, say=None if args.quiet else say)
        if "cli" in parts and not args.no_shared:
            from bench_cli import bench_cli
            groups = {}
            for item in (args.cli_sets or "").split(","):
                if "=" in item:
                    g, names = item.split("=", 1)
                    groups[g] = tuple(x for x in names.split("+") if x)
            cli = bench_cli(shared_dir, tmp, args.data_dir, args.cli_repeats, args.hogs, args.liblinear_dir,
                            args.libsvm_dir, groups, args.cli_llsvm_bin, args.cli_baseline_bin,
                            say=None if args.quiet else say)
        if "defaults" in parts:
            from bench_defaults import bench_defaults
            defaults = bench_defaults(shared_dir, tmp, args.defaults_repeats, args.defaults_timeout,
                                      args.liblinear_dir, args.libsvm_dir, args.defaults_sets, args.defaults_solvers,
                                      args.defaults_long, shared=not args.no_shared,
                                      say=None if args.quiet else say)
        if "dask" in parts:
            from bench_dask import bench_dask
            dask_result = bench_dask(tmp, args.dask_rows, ovr_rows=args.dask_ovr_rows, seed=args.dask_seed,
                                     repeats=max(args.repeats, 3))
        if "ooc" in parts:
            from bench_ooc import bench_ooc
            ooc_rows = bench_ooc(tmp, args.ooc_rows, [int(x) for x in args.ooc_seeds.split(",") if x],
                                 repeats=max(args.repeats, 5))
        if "threads" in parts:
            from bench_threads import bench_threads
            threads_rows = bench_threads(tmp, args.threads_rows, [int(x) for x in args.threads_seeds.split(",") if x],
                                         mc_dir=args.multicore, repeats=max(args.repeats, 3))
        if "dense" in parts:
            from bench_dense import bench_dense, dense_markdown
            dense_rows = bench_dense(tmp, repeats=max(args.repeats, 3))
            dense_text = dense_markdown(dense_rows)
        if "convert" in parts:
            from bench_parse import bench_parse
            convert_rows = bench_parse(tmp, args.convert_rows, repeats=max(args.repeats, 5))
        if "peers" in parts:
            from bench_peers import VENV, bench_peers
            peers = bench_peers(tmp, args.peers, args.peers_venv or VENV, args.peers_scale,
                                args.peers_parts.split(","),
                                [int(x) for x in args.peers_seeds.split(",") if x] if args.peers_seeds else None,
                                tuple(args.peers_modes.split(",")), args.repeats, args.libsvm_dir, args.peers_smo_ws,
                                args.peers_linear_eps)
        if "sklearn" in parts:
            from bench_sklearn import SETS as SKLEARN_SETS, bench_sklearn
            sets = args.sklearn_sets.split(",") if args.sklearn_sets else list(SKLEARN_SETS) + ["sparse"]
            sklearn_rows, sklearn_mem = bench_sklearn(tmp, sets, max(args.repeats, 3), args.sklearn_rows)
        if "signals" in parts and not args.no_shared:
            from bench_signals import bench_signals
            signal_rows = bench_signals(shared_dir, tmp, args.signal_runs,
                                        None if args.signal_solvers is None else args.signal_solvers.split(","),
                                        say=None if args.quiet else say)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    stamp = timestamp()
    meta = run_meta(stamp, repeats=args.repeats, scale=args.scale)
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
    if llsvm_rows or llsvm_shared_rows or t2_rows:
        text.append("## -s llsvm vs -s 3 (C=1, -B 1, default eps; subprocess wall time)\n\n"
                    + llsvm_markdown(llsvm_rows, llsvm_shared_rows, t2_rows))
    if stream_rows:
        text.append("## -s streamsvm and -s bm vs -s 3 (binary file and text, C=1, no bias, default eps; subprocess "
                    "wall time, medians; peak RSS, maxima)\n\nt_reach: from process start to the first per-pass "
                    "(streamsvm) / per-block (bm) record with (D* - D)/|D*| <= 1e-3, i.e. (wall - train_seconds) + "
                    "the record's seconds.\n\n"
                    + stream_markdown(stream_rows))
    if smo_rows:
        from bench_smo import smo_markdown
        text.append("## -s smo vs libsvm-official (C-SVC, RBF, C=1, gamma=1/num_features, -e 0.001, -m 100, -h 1; "
                    "in-process C training calls, medians)\n\n" + smo_markdown(smo_rows, md_header, md_row))
    if type_rows:
        from bench_liblinear import types_markdown
        text.append("## LIBLINEAR's solver types vs liblinear-official (C=1, default -e and -p, single thread; "
                    "in-process C training calls, medians)\n\n" + types_markdown(type_rows, md_header, md_row))
    if startup:
        from bench_startup import startup_markdown
        text.append("## Start-up: wall of a command on heart_scale (medians, round-robin runs)\n\n"
                    + startup_markdown(startup, md_header, md_row))
    if contention_rows:
        from bench_contention import contention_markdown
        text.append("## -s smo and kernel prediction on a busy machine (wall, seconds, medians; -s smo defaults)\n\n"
                    + contention_markdown(contention_rows, md_header, md_row))
    if signal_rows:
        from bench_signals import signals_markdown
        text.append("## Exit after SIGINT and SIGTERM in the middle of a run, on a9a (wall from kill() to the exit)"
                    "\n\n" + signals_markdown(signal_rows, md_header, md_row))
    if cli:
        from bench_cli import cli_markdown
        text.append("## Whole commands against LIBLINEAR's and LIBSVM's CLIs (wall and peak RSS, quiet and busy)\n\n"
                    + cli_markdown(cli, md_header, md_row))
    if defaults:
        from bench_defaults import defaults_markdown
        text.append("## Every solver type at the tools' defaults against LIBLINEAR's train and LIBSVM's svm-train "
                    "(whole commands, wall)\n\n" + defaults_markdown(defaults, md_header, md_row))
    if sklearn_rows or sklearn_mem:
        from bench_sklearn import sklearn_markdown
        text.append("## llsvm.sklearn against scikit-learn's estimators (fit on the same matrix, medians; primal "
                    "objectives by one definition, B = 1)\n\n" + sklearn_markdown(sklearn_rows, sklearn_mem))
    if dask_result:
        from bench_dask import dask_markdown
        text.append("## llsvm-train --dask on a LocalCluster of 2 workers against one process\n\n"
                    + dask_markdown(dask_result))
    if threads_rows:
        from bench_threads import threads_markdown
        text.append("## One two-class problem on 2 threads against LIBLINEAR and liblinear-multicore -m 2 (train "
                    "calls, medians)\n\n" + threads_markdown(threads_rows))
    if dense_text:
        text.append("## -s 3 where rows >> features against LIBLINEAR's dual (part dense)\n\n" + dense_text)
    if ooc_rows:
        from bench_ooc import ooc_markdown
        text.append("## Out of core at --memory 64M against in-memory -s 3 (part ooc)\n\n" + ooc_markdown(ooc_rows))
    if convert_rows:
        from bench_parse import parse_markdown
        text.append("## Text parsing on 1 and 2 threads and llsvm-convert against the in-memory parse (medians of "
                    "interleaved rounds)\n\n" + parse_markdown(convert_rows))
    if peers:
        from bench_peers import peers_markdown
        text.append("## Against the fastest peers (part peers; ratios peer ÷ llsvm of the same round, above 1: "
                    "llsvm faster)\n\n" + peers_markdown(peers))
    report = "\n\n".join(text)
    with open(os.path.join(args.out_dir, f"bench-{stamp}.json"), "w") as f:
        json.dump({"meta": meta, "parse": rows, "solvers": solver_rows, "end_to_end": e2e_rows,
                   "llsvm": llsvm_rows, "llsvm_shared": llsvm_shared_rows, "table2": t2_rows, "stream": stream_rows, "smo": smo_rows, "types": type_rows,
                   "startup": startup, "contention": contention_rows, "signals": signal_rows,
                   "cli": cli, "defaults": defaults, "sklearn": sklearn_rows, "sklearn_memory": sklearn_mem,
                   "dask": dask_result,
                   "threads": threads_rows, "dense": dense_rows, "ooc": ooc_rows, "convert": convert_rows, "peers": peers},
                  f, indent=1, default=float)
    with open(os.path.join(args.out_dir, f"bench-{stamp}.md"), "w") as f:
        f.write(f"llsvm bench {stamp} ({meta['python']}, {meta['cpus']} cpus)\n\n{report}\n")
    print(report)


if __name__ == "__main__":
    main()
