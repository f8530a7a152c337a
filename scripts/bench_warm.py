"""Warm start from yesterday's model (issue 47, item 3): llsvm-train -i against a run from zero, day to day.

a9a's rows (a9a, then a9a.t: 48,842) split into "yesterday" (the first 90 %) and "today" (all rows: yesterday's and
10 % new). For each configuration: yesterday's model (`llsvm-train ARGS yesterday y.model`), then today's from zero
(`llsvm-train ARGS today`) and from yesterday's (`llsvm-train ARGS -i y.model today`), one thread. Reported from
their --json records: iterations (n_iter: Newton iterations of -s 0, 2, 11; passes of -s 1, 3; outer iterations
of -s bm and -s llsvm; passes of -s streamsvm), the median training seconds over --repeats runs (reading excluded),
the primal of each and their relative difference, and the duality gaps (the certificates: both models are within
their gap of the optimum).
-s 11 runs on the same rows as a regression of the +1/-1 targets (no regression set is in data/public).

    python scripts/bench_warm.py [--data-dir DIR] [--repeats 3] [--solvers 0,2,llsvm,...] [--out FILE.md]

--data-dir: where a9a and a9a.t are (plain text; default /tmp/d, else data/public's .xz decompressed).
--solvers: only the configurations of these -s values (default: all).
"""
import argparse
import json
import lzma
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

CONFIGS = [
    ["-s", "0"], ["-s", "0", "-e", "1e-6"],
    ["-s", "2"], ["-s", "2", "-e", "1e-6"],
    ["-s", "11"], ["-s", "11", "-e", "1e-6"],
    ["-s", "1"], ["-s", "1", "-e", "0.001", "--max-iter", "100000"],
    ["-s", "3", "--max-iter", "100000"], ["-s", "3", "-e", "0.01", "--max-iter", "100000"],
    ["-s", "bm"], ["-s", "bm", "--memory", "8M"],
    ["-s", "llsvm"], ["-s", "llsvm", "--memory", "8M"],
    ["-s", "streamsvm"], ["-s", "streamsvm", "--memory", "8M"],
]


def text_of(data_dir, name):
    plain = os.path.join(data_dir, name)
    if os.path.isfile(plain):
        with open(plain) as f:
            return f.read()
    with lzma.open(os.path.join(ROOT, "data", "public", name + ".xz"), "rt") as f:
        return f.read()


def train(args, tmp, name):
    """One llsvm-train run (one thread, -q) with --json; its record."""
    rec = os.path.join(tmp, name + ".json")
    cmd = [sys.executable, "-m", "llsvm.cli.train", "-q", "--threads", "1", "--json", rec, *args]
    subprocess.run(cmd, check=True, env={**os.environ, "PYTHONPATH": ROOT})
    with open(rec) as f:
        return json.load(f)


def measure(config, yesterday, today, tmp, repeats):
    """(cold record, warm record, cold median seconds, warm median seconds) of one configuration."""
    old = os.path.join(tmp, "yesterday.model")
    train([*config, yesterday, old], tmp, "yesterday")
    cold, warm = [], []
    for _ in range(repeats):            # interleaved: the machine's load falls on both alike
        cold.append(train([*config, today, os.path.join(tmp, "cold.model")], tmp, "cold"))
        warm.append(train([*config, "-i", old, today, os.path.join(tmp, "warm.model")], tmp, "warm"))
    return (cold[-1], warm[-1], statistics.median(r["train_seconds"] for r in cold),
            statistics.median(r["train_seconds"] for r in warm))


def fmt(x, spec):
    return "-" if x is None else format(x, spec)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data-dir", default="/tmp/d")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--solvers", help="comma-separated -s values (default: all)")
    ap.add_argument("--out")
    a = ap.parse_args(argv)
    lines = (text_of(a.data_dir, "a9a") + text_of(a.data_dir, "a9a.t")).splitlines(keepends=True)
    cut = len(lines) * 9 // 10
    rows = ["| command (ARGS) | iterations from zero | from yesterday | seconds from zero | from yesterday | "
            "primal from zero | from yesterday | relative difference | gap from zero | from yesterday |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    with tempfile.TemporaryDirectory() as tmp:
        yesterday, today = os.path.join(tmp, "yesterday.txt"), os.path.join(tmp, "today.txt")
        with open(yesterday, "w") as f:
            f.writelines(lines[:cut])
        with open(today, "w") as f:
            f.writelines(lines)
        print(f"# a9a + a9a.t: yesterday {cut} rows, today {len(lines)} rows; median of {a.repeats} runs",
              file=sys.stderr)
        wanted = None if a.solvers is None else set(a.solvers.split(","))
        for config in CONFIGS:
            if wanted is not None and config[1] not in wanted:
                continue
            c, w, cs, ws = measure(config, yesterday, today, tmp, a.repeats)
            rel = None if c["primal"] is None or w["primal"] is None else abs(w["primal"] - c["primal"]) / abs(c["primal"])
            rows.append(f"| {' '.join(config)} | {c['n_iter']} | {w['n_iter']} | {cs:.3f} | {ws:.3f} | "
                        f"{fmt(c['primal'], '.6f')} | {fmt(w['primal'], '.6f')} | {fmt(rel, '.1e')} | "
                        f"{fmt(c['gap'], '.3g')} | {fmt(w['gap'], '.3g')} |")
            print(rows[-1], file=sys.stderr)
    text = "\n".join(rows) + "\n"
    sys.stdout.write(text)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
