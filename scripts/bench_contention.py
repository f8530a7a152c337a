"""Part `contention` of `make bench` (issue 26): the kernel solvers on a busy machine.

Cron jobs, shared servers, CI and several trainings side by side are this tool's ordinary setting. With --hogs
CPU-bound processes beside it (default: one per CPU, each a `yes > /dev/null`), on each set:
  - `llsvm-train -q -s smo SET MODEL` with the default threads, with `--threads 1` and with `--threads N` (N the
    CPUs, the opt-in), wall time, medians of --contention-repeats runs taken round-robin; and `--threads 1` once
    more, as a control: the spread between two identical commands on a busy machine (A/A) is the noise the
    default's ratio is read against;
  - `llsvm-predict TEST MODEL OUT` with that kernel model (the test file, else the training file): with the
    default environment and with OMP_NUM_THREADS=1;
  - LIBSVM's `svm-train` and `svm-predict` (same parameters) when --libsvm-dir (or LIBSVM_DIR) names a directory
    holding them, built from LIBSVM's sources.
and the same without the hogs (a quiet machine), so the table shows what the opt-in threads buy when the cores
are free and what they cost when they are not. Targets: under load, the default's wall <= 1.05x `--threads 1`'s,
for training and for prediction.

Sets: the public dna.scale, usps.t, segment.scale and a9a of data/public (`make data`; --contention-sets: names
there, or paths of LIBSVM files, e.g. a scaled pendigits; a path's test file is PATH.t when it exists). The default
-s smo parameters (C-SVC, RBF, C = 1, gamma = 1/num_features, -m 100, shrinking on).
"""
import os
import statistics
import subprocess
import sys
import time

from benchutil import resolve, say, shared_file, timed_command

TARGET_RATIO = 1.05
DEFAULT_SETS = ("dna.scale", "usps.t", "segment.scale", "a9a")


def _bin(name):
    return os.path.join(os.path.dirname(sys.executable), name)


def _cpus():
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


class Hogs:
    """`n` CPU-bound processes (`yes` into /dev/null) while the block runs."""

    def __init__(self, n):
        self.n = n
        self.procs = []

    def __enter__(self):
        for _ in range(self.n):
            self.procs.append(subprocess.Popen(["yes"], stdout=subprocess.DEVNULL))
        time.sleep(0.5)
        return self

    def __exit__(self, *exc):
        for p in self.procs:
            p.kill()
        for p in self.procs:
            p.wait()
        self.procs = []
        return False


def _resolve(shared_dir, name, tmp):
    """(label, train path, test path or None) of a shared set name or a path (benchutil.resolve; a shared set is
    decompressed into tmp)."""
    found = resolve(name, tmp, (), shared_dir)
    if found is None:
        return None
    kind, path, test = found
    if kind == "shared":
        path = shared_file(shared_dir, name, tmp)
        test = test and shared_file(shared_dir, name + ".t", tmp)
    return os.path.basename(name), path, test


def _commands(path, test, tmp, tag, libsvm_dir):
    model = os.path.join(tmp, f"{tag}.smo.model")
    out = os.path.join(tmp, f"{tag}.out")
    target = test or path
    one = dict(os.environ, OMP_NUM_THREADS="1")
    train = {
        "default": ([_bin("llsvm-train"), "-q", "-s", "smo", path, model], None),
        "--threads 1": ([_bin("llsvm-train"), "-q", "-s", "smo", "--threads", "1", path, model], None),
        "--threads 1 (A/A)": ([_bin("llsvm-train"), "-q", "-s", "smo", "--threads", "1", path, model], None),
        f"--threads {_cpus()}": ([_bin("llsvm-train"), "-q", "-s", "smo", "--threads", str(_cpus()), path, model],
                                 None),
    }
    predict = {
        "default": ([_bin("llsvm-predict"), "-q", target, model, out], None),
        "OMP_NUM_THREADS=1": ([_bin("llsvm-predict"), "-q", target, model, out], one),
    }
    if libsvm_dir:
        lmodel = os.path.join(tmp, f"{tag}.libsvm.model")
        train["svm-train"] = ([os.path.join(libsvm_dir, "svm-train"), "-q", path, lmodel], None)
        predict["svm-predict"] = ([os.path.join(libsvm_dir, "svm-predict"), "-q", target, lmodel, out], None)
    return train, predict


def _measure(train, predict, repeats):
    """Medians of round-robin runs: training first (every variant writes the models prediction reads), then
    prediction."""
    times = {("train", k): [] for k in train}
    times.update({("predict", k): [] for k in predict})
    for _ in range(repeats):
        for k, (argv, env) in train.items():
            times[("train", k)].append(timed_command(argv, env))
        for k, (argv, env) in predict.items():
            times[("predict", k)].append(timed_command(argv, env))
    return {f"{what} {k}": statistics.median(v) for (what, k), v in times.items()}


def bench_contention(shared_dir, tmp, sets=DEFAULT_SETS, repeats=3, hogs=None, libsvm_dir=None, say=say):
    hogs = _cpus() if hogs is None else hogs
    rows = []
    for name in sets:
        found = _resolve(shared_dir, name, tmp)
        if found is None:
            if say:
                say(f"# contention: {name} not found, skipped")
            continue
        label, path, test = found
        train, predict = _commands(path, test, tmp, label, libsvm_dir)
        row = {"dataset": label, "hogs": hogs, "repeats": repeats}
        row["quiet"] = _measure(train, predict, repeats)
        with Hogs(hogs):
            row["busy"] = _measure(train, predict, repeats)
        busy = row["busy"]
        row["train_ratio"] = busy["train default"] / busy["train --threads 1"]
        row["predict_ratio"] = busy["predict default"] / busy["predict OMP_NUM_THREADS=1"]
        row["aa_ratio"] = busy["train --threads 1 (A/A)"] / busy["train --threads 1"]
        row["ok"] = row["train_ratio"] <= TARGET_RATIO and row["predict_ratio"] <= TARGET_RATIO
        rows.append(row)
        if say:
            say(f"# contention {label}: quiet {fmt_times(row['quiet'])}; busy {fmt_times(busy)}; default / one "
                f"thread under load: train {row['train_ratio']:.3f}, predict {row['predict_ratio']:.3f} (A/A "
                f"{row['aa_ratio']:.3f})")
    return rows


def fmt_times(d):
    return ", ".join(f"{k} {v:.2f} s" for k, v in d.items())


def contention_markdown(rows, md_header, md_row):
    if not rows:
        return "(no set found)"
    keys = list(rows[0]["busy"].keys())
    lines = md_header(["set", "machine"] + keys + ["default / one thread (train, predict)", "A/A"])
    for r in rows:
        for state in ("quiet", "busy"):
            cells = [r["dataset"], "quiet" if state == "quiet" else f"{r['hogs']} hogs"]
            cells += [f"{r[state].get(k, float('nan')):.2f}" for k in keys]
            if state == "busy":
                cells.append(f"{r['train_ratio']:.3f}, {r['predict_ratio']:.3f} "
                             f"{'✓' if r['ok'] else '✗'} (<= {TARGET_RATIO})")
                cells.append(f"{r['aa_ratio']:.3f}")
            else:
                cells += ["", ""]
            lines.append(md_row(cells))
    return "\n".join(lines)
