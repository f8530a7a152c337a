"""Part `ooc` of `make bench` (issue 32, item 6): out of core at in-memory speed.

On the generated sparse set (scripts/gen_data.py sparse, 500,000 rows) with seed 1 and other seeds, from its binary
file (llsvm-convert's format, in the page cache: every run reads it from memory, and the file is read once before
the runs), in the same run and interleaved (run 1 of every command, then run 2, ...):

- `-s 3` in memory (the whole file loaded), LIBLINEAR's default -e 0.1;
- `-s llsvm --memory 64M` and `-s streamsvm --memory 64M`, their default -e 0.1 (the largest projected-gradient
  violation over every row, certified by their last pass over the input: "at the optimum").

Before each run (unless --no-warm-memory) a helper process touches and frees twice the file's size of memory
(benchutil.warm_memory): on a virtual machine that hands freed memory back to its host, -s llsvm's first active-set
files (about 300 MB of new page cache on sparse seed 1) were written at 0.28 GB/s with host faults against 2.75 GB/s
on memory freed a moment before (strace -T of its writes), about 1.2 s of system time a run, which in-memory -s 3,
reading the file through a map, never pays.

All with C = 1, -B 1. Reported per command: the median wall seconds, the median CPU seconds of the process (user +
system, all threads: the work, less noisy than the wall on a shared machine), the peak RSS, the certificate of
--json (converged, max violation, primal and its difference to -s 3's), training accuracy, and the targets: the
wall at most 1.3x -s 3's, the peak RSS within the budget + 60 MB.

    python scripts/bench_ooc.py [--rows 500000] [--seeds 1,2] [--memory 64M] [--repeats 5] [--data-dir DIR]
                                [--no-warm-memory] [--out FILE.md]

--data-dir: where the sets are (sparse-SEED, sparse-SEED.bin; generated there when missing; default a temporary
directory).
"""
import argparse
import json
import os
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchutil import (ensure_binary, md_header, md_row, print_report, run_measured, say,  # noqa: E402
                       warm_memory, warm_page_cache)

import llsvm  # noqa: E402
from llsvm.memory import parse_size  # noqa: E402

TARGET_WALL = 1.3           # -s llsvm and -s streamsvm at --memory 64M: at most 1.3x in-memory -s 3's wall
RSS_OVER_BUDGET_MB = 60.0   # peak RSS within --memory + 60 MB


def commands(memory):
    return [("s3", "-s 3", ["-s", "3"]),
            ("llsvm", f"-s llsvm --memory {memory}", ["-s", "llsvm", "--memory", memory]),
            ("streamsvm", f"-s streamsvm --memory {memory}", ["-s", "streamsvm", "--memory", memory])]


def bench_set(name, binpath, memory, repeats, tmp, warm=True):
    exe = os.path.join(os.path.dirname(sys.executable), "llsvm-train")
    warm_mb = 2 * os.path.getsize(binpath) / 1e6 if warm else 0
    cmds = commands(memory)
    runs = {tag: [] for tag, _, _ in cmds}
    warm_page_cache(binpath)
    for i in range(repeats):
        for tag, label, args in cmds:            # interleaved: the machine's noise spreads over all of them
            model, js = os.path.join(tmp, f"{tag}.model"), os.path.join(tmp, f"{tag}.json")
            warm_memory(warm_mb)
            wall, rss, cpu = run_measured([exe, *args, "-c", "1", "-B", "1", "-q", "--json", js, binpath, model],
                                          cpu=True)
            with open(js) as f:
                d = json.load(f)
            runs[tag].append({"wall": wall, "rss": rss, "cpu": cpu, "json": d})
            say(f"# ooc {name} run {i + 1}: {label}: wall {wall:.2f} s, CPU {cpu:.2f} s, RSS {rss:.0f} MB, "
                f"{'converged' if d['converged'] else 'NOT converged'}, max violation {d['max_violation']:.3g}")
    ds = llsvm.read_dataset(binpath)
    budget_mb = parse_size(memory) / (1 << 20)
    row = {"dataset": name, "memory": memory, "repeats": repeats, "warm_memory": warm, "rows": ds.n_rows,
           "nnz": ds.nnz, "solvers": {}}
    for tag, label, _ in cmds:
        rs = runs[tag]
        d = rs[-1]["json"]
        model = llsvm.load_model(os.path.join(tmp, f"{tag}.model"))
        acc = float((model.predict(ds) == ds.y).mean() * 100)
        row["solvers"][tag] = {
            "label": label, "wall_s": statistics.median(r["wall"] for r in rs),
            "cpu_s": statistics.median(r["cpu"] for r in rs), "peak_rss_mb": max(r["rss"] for r in rs),
            "walls": [r["wall"] for r in rs], "cpus": [r["cpu"] for r in rs],
            "converged": all(r["json"]["converged"] for r in rs), "max_violation": d["max_violation"],
            "primal": d["primal"], "train_accuracy": acc,
            "passes": d.get("rechecks") if tag == "llsvm" else d.get("n_iter")}
    del ds
    s3 = row["solvers"]["s3"]
    for tag in ("llsvm", "streamsvm"):
        r = row["solvers"][tag]
        r.update(wall_ratio=r["wall_s"] / s3["wall_s"], cpu_ratio=r["cpu_s"] / s3["cpu_s"],
                 primal_rel=(r["primal"] - s3["primal"]) / abs(s3["primal"]),
                 rss_limit_mb=budget_mb + RSS_OVER_BUDGET_MB)
        r["targets"] = {"wall_le_1_3_s3": r["wall_ratio"] <= TARGET_WALL,
                        "rss_le_budget_plus_60mb": r["peak_rss_mb"] <= r["rss_limit_mb"]}
    return row


def ooc_markdown(rows):
    out = []
    for row in rows:
        lines = md_header(["command", "wall s (median)", "x -s 3", "CPU s (median)", "x -s 3", "peak RSS MB",
                           "converged", "max violation", "primal vs -s 3", "train acc %", "passes", "targets"])
        for tag, r in row["solvers"].items():
            ok = "" if tag == "s3" else ", ".join(f"{'✓' if v else '✗'} {k}" for k, v in r["targets"].items())
            lines.append(md_row([r["label"], f"{r['wall_s']:.2f}", f"{r.get('wall_ratio', 1.0):.2f}",
                                 f"{r['cpu_s']:.2f}", f"{r.get('cpu_ratio', 1.0):.2f}", f"{r['peak_rss_mb']:.0f}",
                                 "yes" if r["converged"] else "no", f"{r['max_violation']:.3g}",
                                 f"{r.get('primal_rel', 0.0):+.1e}", f"{r['train_accuracy']:.2f}",
                                 str(r["passes"]), ok]))
        out.append(f"### {row['dataset']} ({row['rows']:,} rows, {row['nnz']:,} nnz, binary file in the page cache; "
                   f"C = 1, -B 1, -e 0.1; {row['repeats']} interleaved runs)\n\n" + "\n".join(lines))
    return "\n\n".join(out)


def bench_ooc(tmp, rows=500000, seeds=(1, 2), memory="64M", repeats=5, data_dir=None, warm=True):
    import gen_data
    data_dir = data_dir or tmp
    out = []
    for seed in seeds:
        path = os.path.join(data_dir, f"sparse-{seed}")
        binpath = path + ".bin"
        if not os.path.exists(binpath):
            if not os.path.exists(path):
                gen_data.generate("sparse", path, rows=rows, seed=seed)
            ensure_binary(path, binpath, say)
        out.append(bench_set(f"sparse seed {seed}", binpath, memory, repeats, tmp, warm))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", type=int, default=500000)
    ap.add_argument("--seeds", default="1,2")
    ap.add_argument("--memory", default="64M")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--data-dir")
    ap.add_argument("--no-warm-memory", action="store_true", help="no helper touching memory before each run")
    ap.add_argument("--out")
    ap.add_argument("--json")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="llsvm-bench-ooc-") as tmp:
        rows = bench_ooc(tmp, args.rows, [int(s) for s in args.seeds.split(",") if s], args.memory, args.repeats,
                         args.data_dir, not args.no_warm_memory)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    print_report("## Out of core against in-memory -s 3 (part ooc)\n\n" + ooc_markdown(rows), args.out)


if __name__ == "__main__":
    main()
