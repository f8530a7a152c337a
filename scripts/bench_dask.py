"""Part `dask` of `make bench` (issue 31): llsvm-train --dask on a LocalCluster of this machine's cores against
the same command in one process, in the same run.

- CoCoA+ (one two-class -s 3 problem): the generated sparse set (scripts/gen_data.py sparse, --dask-rows rows,
  seed --dask-seed) written as 4 binary files; `llsvm-train --dask local --workers 2 -s 3 'part-*.bin'` against
  `llsvm-train -s 3` on one file of the same rows: wall (medians), the primal of both against the optimum (-s 3 at
  -e 1e-5), the -e at which CoCoA+'s primal is within 1e-3 of it (tightened tenfold from LIBLINEAR's default 0.1
  until it is); then, through the library on 2 workers, the rounds CoCoA+ takes to a primal within 1e-3 and the
  bytes a round sends for 2, 4 and 8 parts (the bytes do not grow with the rows).
- Distributed Newton (one two-class -s 2 / -s 0 problem): the same 4 files; `--dask local --workers 2` against one
  process on the whole file: wall (medians), Newton and CG steps, rounds and bytes a round, and the largest
  difference of the two models' weights (the same iterates up to the order of a sum).
- One-vs-rest: the generated 10-class set; `--dask local --workers 2 -s 3` against `-s 3 --threads 1`; the model
  files compared byte for byte.
- -s smo --grid, 8 cells (C 4 values x gamma 2 values, 10 folds) on usps.t (or, without the public sets, the
  generated 10-class set's first 2,000 rows): `--dask local --workers 2` against `--threads 1`; the tables
  compared (C, gamma, CV error).

Walls include the LocalCluster's start (about a second), as a user's command does.

    python scripts/bench_dask.py [--rows 500000] [--seed 1] [--repeats 3] [--out FILE.md]
"""
import argparse
import glob
import json
import os
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchutil import DATA_DIR, md_header, md_row, print_report, say, shared_file, timed_command  # noqa: E402

import llsvm  # noqa: E402

BIN = os.path.dirname(sys.executable)
TRAIN = os.path.join(BIN, "llsvm-train")
GEN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "gen_data.py")


def _gen(kind, out, rows, seed, *extra):
    if not os.path.exists(out):
        subprocess.run([sys.executable, GEN, kind, "--out", out, "--rows", str(rows), "--seed", str(seed), "-q",
                        *extra], check=True)
    return out


def _split(text, n, prefix):
    """The text file's lines in n consecutive files, each written as an llsvm binary file of 4 blocks at least (8
    parts need 8 blocks): their paths."""
    with open(text, "rb") as f:
        lines = f.readlines()
    paths = []
    for k in range(n):
        part = lines[k * len(lines) // n:(k + 1) * len(lines) // n]
        t = f"{prefix}-{k}.txt"
        with open(t, "wb") as f:
            f.writelines(part)
        llsvm.write_binary(t, f"{prefix}-{k}.bin", block_rows=max(1, -(-len(part) // 4)))
        os.remove(t)
        paths.append(f"{prefix}-{k}.bin")
    return paths


def _median_wall(argv, repeats):
    return statistics.median(timed_command(argv) for _ in range(repeats))


def _json_run(argv):
    """Run llsvm-train with --json; the record."""
    fd, path = tempfile.mkstemp(suffix=".json")
    os.close(fd)
    try:
        timed_command(argv[:1] + ["--json", path] + argv[1:])
        with open(path) as f:
            return json.load(f)
    finally:
        os.remove(path)


def bench_cocoa(tmp, rows, seed, repeats, scaling_rounds=500):
    text = _gen("sparse", os.path.join(tmp, f"cocoa-{seed}"), rows, seed)
    whole = text + ".bin"
    if not os.path.exists(whole):
        llsvm.write_binary(text, whole)
    parts = sorted(glob.glob(text + "-part-*.bin")) or _split(text, 4, text + "-part")
    pattern = text + "-part-*.bin"
    model = os.path.join(tmp, "m")
    best = llsvm.train(whole, solver=3, eps=1e-5, max_iter=100000).meta["results"][0].primal
    say(f"# CoCoA+: optimum primal {best:.6f}")
    one = _json_run([TRAIN, "-s", "3", "-q", whole, model])
    t_one = _median_wall([TRAIN, "-s", "3", "-q", whole, model], repeats)
    eps, rec = 0.1, None
    while True:
        rec = _json_run([TRAIN, "--dask", "local", "--workers", "2", "-s", "3", "-q", "-e", f"{eps:g}", pattern,
                         model])
        if rec["primal"] <= best * (1 + 1e-3) or eps < 1e-4:
            break
        eps /= 10
    t_dask = _median_wall([TRAIN, "--dask", "local", "--workers", "2", "-s", "3", "-q", "-e", f"{eps:g}", pattern,
                           model], repeats)
    head = {"rows": rows, "files": len(parts), "optimum": best, "one_s": t_one, "one_primal": one["primal"],
            "one_rel": (one["primal"] - best) / best, "dask_eps": eps, "dask_s": t_dask, "dask_primal": rec["primal"],
            "dask_rel": (rec["primal"] - best) / best, "dask_rounds": rec["dask"]["rounds"],
            "dask_gap": rec["gap"], "ratio": t_dask / t_one}
    say(f"# CoCoA+ 2 workers: {t_dask:.2f} s (-e {eps:g}, {rec['dask']['rounds']} rounds, primal "
        f"{head['dask_rel']:+.1e}) vs one process {t_one:.2f} s (primal {head['one_rel']:+.1e}): {head['ratio']:.2f}x")
    scaling = []
    from distributed import Client, LocalCluster
    import llsvm.dask as lldask
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                      silence_logs=50) as cluster, Client(cluster) as client:
        for k in (2, 4, 8):
            m = lldask.train(pattern, client=client, solver=3, eps=1e-4, max_iter=scaling_rounds, parts=k,
                             say=lambda t: None)
            r = m.meta["results"][0]
            hist = r.extra["history"]
            first = next((i for i, (p, _, _) in enumerate(hist) if p <= best * (1 + 1e-3)), None)
            scaling.append({"parts": k, "rounds_1e3": first, "rounds": r.n_iter,
                            "bytes_per_round": m.meta["dask"]["bytes_per_round"],
                            "rel_gap_then": None if first is None else hist[first][2] / hist[first][0]})
            say(f"# CoCoA+ {k} parts: primal within 1e-3 after {first} rounds, "
                f"{m.meta['dask']['bytes_per_round'] / 1e6:.1f} MB a round")
    return head, scaling


def bench_newton(tmp, rows, seed, repeats):
    """-s 2 and -s 0 by distributed Newton on 2 workers against one process (the CoCoA+ set's files)."""
    text = os.path.join(tmp, f"cocoa-{seed}")
    whole, pattern = text + ".bin", text + "-part-*.bin"
    a, b = os.path.join(tmp, "n1.model"), os.path.join(tmp, "n2.model")
    out = []
    for solver in ("2", "0"):
        one = _json_run([TRAIN, "-s", solver, "-q", whole, a])
        rec = _json_run([TRAIN, "--dask", "local", "--workers", "2", "-s", solver, "-q", pattern, b])
        wa, wb = llsvm.load_model(a).W, llsvm.load_model(b).W
        diff = float(abs(wa - wb).max() / max(abs(wa).max(), 1e-300))
        t_one = _median_wall([TRAIN, "-s", solver, "-q", whole, a], repeats)
        t_dask = _median_wall([TRAIN, "--dask", "local", "--workers", "2", "-s", solver, "-q", pattern, b], repeats)
        d = rec["dask"]
        row = {"solver": solver, "rows": rows, "one_s": t_one, "dask_s": t_dask, "ratio": t_dask / t_one,
               "newton": d["newton_steps"], "cg": d["cg_steps"], "rounds": d["rounds"],
               "bytes_per_round": d["bytes_per_round"], "w_rel_diff": diff,
               "primal_rel": (rec["primal"] - one["primal"]) / one["primal"]}
        say(f"# Newton -s {solver}: {t_dask:.2f} s on 2 workers vs {t_one:.2f} s ({row['ratio']:.2f}x), "
            f"{d['rounds']} rounds, {d['bytes_per_round'] / 1e6:.2f} MB a round, w differs by {diff:.1e}")
        out.append(row)
    return out


def bench_ovr(tmp, rows, repeats):
    text = _gen("multiclass", os.path.join(tmp, "ovr10"), rows, 1, "--classes", "10")
    data = text + ".bin"
    if not os.path.exists(data):
        llsvm.write_binary(text, data)
    a, b = os.path.join(tmp, "a.model"), os.path.join(tmp, "b.model")
    t_one = _median_wall([TRAIN, "-s", "3", "-q", "--threads", "1", data, a], repeats)
    t_dask = _median_wall([TRAIN, "--dask", "local", "--workers", "2", "-s", "3", "-q", data, b], repeats)
    same = open(a, "rb").read() == open(b, "rb").read()
    say(f"# OvR 10 classes: {t_dask:.2f} s on 2 workers vs {t_one:.2f} s --threads 1 ({t_dask / t_one:.2f}x), "
        f"same model: {same}")
    return {"rows": rows, "one_s": t_one, "dask_s": t_dask, "ratio": t_dask / t_one, "same_model": same}


def bench_grid(tmp, repeats):
    path = shared_file(DATA_DIR, "usps.t", tmp)
    name = "usps.t"
    if path is None:
        text = _gen("multiclass", os.path.join(tmp, "grid10"), 2000, 2, "--classes", "10", "--features", "256")
        path, name = text, "generated 10-class, 2,000 rows"
    data = os.path.join(tmp, "grid.bin")
    if not os.path.exists(data):
        llsvm.write_binary(path, data)
    args = ["-s", "smo", "--grid", "C=0.5,1,2,4 g=0.005,0.02", "-v", "10", data]
    outs = {}

    def run(extra, key):
        p = subprocess.run([TRAIN, *extra, *args], capture_output=True, text=True, check=True)
        outs[key] = [line.split()[:3] for line in p.stdout.splitlines()]
    run(["--threads", "1"], "one")
    run(["--dask", "local", "--workers", "2"], "dask")
    t_one = _median_wall([TRAIN, "--threads", "1", *args], repeats)
    t_dask = _median_wall([TRAIN, "--dask", "local", "--workers", "2", *args], repeats)
    same = outs["one"] == outs["dask"]
    say(f"# smo --grid 8 cells on {name}: {t_dask:.2f} s on 2 workers vs {t_one:.2f} s ({t_dask / t_one:.2f}x), "
        f"same table: {same}")
    return {"set": name, "one_s": t_one, "dask_s": t_dask, "ratio": t_dask / t_one, "same_table": same}


def dask_markdown(result):
    head, scaling, ovr, grid = result["cocoa"], result["cocoa_parts"], result["ovr"], result["grid"]
    lines = ["### CoCoA+: one two-class -s 3 problem", ""]
    lines += md_header(["rows (4 files)", "one process s", "its primal vs optimum", "2 workers s", "-e", "rounds",
                        "primal vs optimum", "gap", "ratio (target <= 1.2)"])
    lines.append(md_row([f"{head['rows']:,}", f"{head['one_s']:.2f}", f"{head['one_rel']:+.1e}",
                         f"{head['dask_s']:.2f}", f"{head['dask_eps']:g}", str(head["dask_rounds"]),
                         f"{head['dask_rel']:+.1e}", f"{head['dask_gap']:.3g}", f"{head['ratio']:.2f}"]))
    lines += ["", "Rounds to a primal within 1e-3 of the optimum, and bytes a round (w down, dw up, every part):", ""]
    lines += md_header(["parts", "rounds to 1e-3", "relative gap then", "MB a round"])
    for s in scaling:
        lines.append(md_row([str(s["parts"]), "-" if s["rounds_1e3"] is None else str(s["rounds_1e3"]),
                             "-" if s["rel_gap_then"] is None else f"{s['rel_gap_then']:.1e}",
                             f"{s['bytes_per_round'] / 1e6:.2f}"]))
    lines += ["", "### Distributed Newton: one two-class -s 2 / -s 0 problem (the same 4 files)", ""]
    lines += md_header(["solver", "one process s", "2 workers s", "ratio", "Newton steps", "CG steps", "rounds",
                        "MB a round", "w: largest relative difference", "primal: relative difference"])
    for r in result["newton"]:
        lines.append(md_row([f"-s {r['solver']}", f"{r['one_s']:.2f}", f"{r['dask_s']:.2f}", f"{r['ratio']:.2f}",
                             str(r["newton"]), str(r["cg"]), str(r["rounds"]), f"{r['bytes_per_round'] / 1e6:.2f}",
                             f"{r['w_rel_diff']:.1e}", f"{r['primal_rel']:+.1e}"]))
    lines += ["", "### One-vs-rest and --grid", ""]
    lines += md_header(["run", "one process (--threads 1) s", "2 workers s", "ratio (target <= 0.6)", "same result"])
    lines.append(md_row([f"-s 3, 10 classes, {ovr['rows']:,} rows", f"{ovr['one_s']:.2f}", f"{ovr['dask_s']:.2f}",
                         f"{ovr['ratio']:.2f}", "model: " + ("yes" if ovr["same_model"] else "NO")]))
    lines.append(md_row([f"-s smo --grid 8 cells -v 10, {grid['set']}", f"{grid['one_s']:.2f}",
                         f"{grid['dask_s']:.2f}", f"{grid['ratio']:.2f}",
                         "table: " + ("yes" if grid["same_table"] else "NO")]))
    return "\n".join(lines) + "\n"


def bench_dask(tmp, rows=500000, ovr_rows=200000, seed=1, repeats=3, scaling_rounds=500):
    head, scaling = bench_cocoa(tmp, rows, seed, repeats, scaling_rounds)
    return {"cocoa": head, "cocoa_parts": scaling, "newton": bench_newton(tmp, rows, seed, repeats),
            "ovr": bench_ovr(tmp, ovr_rows, repeats),
            "grid": bench_grid(tmp, repeats)}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=500000, help="rows of the generated sparse set (CoCoA+)")
    ap.add_argument("--scaling-rounds", type=int, default=500, help="CoCoA+'s rounds at most for 2, 4, 8 parts")
    ap.add_argument("--ovr-rows", type=int, default=200000, help="rows of the generated 10-class set")
    ap.add_argument("--seed", type=int, default=1, help="the sparse set's generator seed")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out", default=None)
    ap.add_argument("--tmp", default=None)
    args = ap.parse_args(argv)
    tmp = args.tmp or tempfile.mkdtemp(prefix="bench-dask-")
    result = bench_dask(tmp, args.rows, args.ovr_rows, args.seed, args.repeats, args.scaling_rounds)
    text = "# llsvm-train --dask against one process (same run)\n\n" + dask_markdown(result)
    print_report(text, args.out)
    return result


if __name__ == "__main__":
    main()
