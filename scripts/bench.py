#!/usr/bin/env python3
"""llsvm benchmarks (`make bench`): text parsing, binary loading and conversion memory.

For each dataset, in one run:
  - parse time of `sklearn.datasets.load_svmlight_file` and of `llsvm.read_dataset` (single-threaded), MB/s, ratio;
  - text -> binary conversion (`llsvm-convert`, a subprocess: wall time and peak RSS), at full size and at a
    quarter of the rows, to show the conversion's memory does not grow with the input;
  - loading the binary file into memory (`llsvm.read_dataset` on it), and its ratio to parsing the text;
  - the in-memory dataset's bytes against 12 bytes per non-zero + 8 per row (+8 per row for the labels);
  - peak RSS of loading the text into memory (a subprocess).
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
    # name: (kind, seed, options for gen_data.generate)
    "sparse": ("sparse", 1, {}),
    "dense": ("dense", 2, {}),
}


def median_time(fn, repeats):
    times = []
    result = None
    for _ in range(repeats):
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), result


def run_measured(cmd):
    """Run a command; return (seconds, peak RSS in MB) of that child alone (os.wait4 rusage)."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    err = proc.stderr.read().decode()
    proc.stderr.close()
    if proc.returncode != 0:
        raise RuntimeError(f"{cmd} failed ({proc.returncode}): {err}")
    return seconds, usage.ru_maxrss / 1024.0


def ensure_set(name, data_dir, scale, quiet):
    import gen_data

    kind, seed, opts = SETS[name]
    suffix = "" if scale == 1.0 else f"-x{scale:g}"
    path = os.path.join(data_dir, name + suffix)
    if not os.path.exists(path):
        defaults = {"sparse": 500_000, "dense": 400_000}
        rows = int(defaults[name] * scale)
        t0 = time.perf_counter()
        gen_data.generate(kind, path, rows=rows, seed=seed, **opts)
        if not quiet:
            print(f"# generated {path} in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    return path


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
    t_ll, ds = median_time(lambda: llsvm.read_dataset(path), repeats)
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
    t_load, view = median_time(lambda: llsvm.read_dataset(binpath), repeats)
    row.update(binary_load_s=t_load, load_speedup_vs_parse=t_ll / t_load)
    del view
    if memory:
        code = f"import llsvm; ds = llsvm.read_dataset({path!r})"
        _, rss_load = run_measured([sys.executable, "-c", code])
        _, rss_base = run_measured([sys.executable, "-c", "import llsvm"])
        row.update(text_load_peak_rss_mb=rss_load, import_rss_mb=rss_base)
    os.unlink(binpath)
    return row


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


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sets", default="sparse,dense", help="generated sets to run (comma list; '' for none)")
    ap.add_argument("--scale", type=float, default=1.0, help="fraction of the default rows (quick runs)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--sklearn-repeats", type=int, default=None, help="default: --repeats")
    ap.add_argument("--no-shared", action="store_true", help="skip ../shared/data")
    ap.add_argument("--data-dir", default=os.path.join(ROOT, "data"))
    ap.add_argument("--out-dir", default=os.path.join(ROOT, "bench-results"))
    ap.add_argument("-q", "--quiet", action="store_true")
    args = ap.parse_args()
    sk_rep = args.sklearn_repeats or args.repeats

    os.makedirs(args.out_dir, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix="llsvm-bench-")
    rows = []
    try:
        for name in [s for s in args.sets.split(",") if s]:
            path = ensure_set(name, args.data_dir, args.scale, args.quiet)
            r = bench_file(name, path, tmp, args.repeats, sk_rep)
            # the same conversion on a quarter of the rows: peak memory must not depend on the input size
            quarter = first_rows(path, os.path.join(tmp, name + ".quarter"), r["rows"] // 4)
            t_q, rss_q = run_measured([os.path.join(os.path.dirname(sys.executable), "llsvm-convert"), "-q",
                                       quarter, os.path.join(tmp, name + ".quarter.bin")])
            r.update(convert_quarter_s=t_q, convert_quarter_peak_rss_mb=rss_q)
            os.unlink(quarter)
            rows.append(r)
            if not args.quiet:
                print(json.dumps(r), file=sys.stderr)
        shared = os.path.join(ROOT, "..", "shared", "data")
        if not args.no_shared and os.path.isdir(shared):
            for fn in sorted(os.listdir(shared)):
                if not fn.endswith(".xz"):
                    continue
                plain = os.path.join(tmp, fn[:-3])
                with lzma.open(os.path.join(shared, fn)) as f, open(plain, "wb") as g:
                    shutil.copyfileobj(f, g)
                r = bench_file(fn[:-3], plain, tmp, max(args.repeats, 5), max(sk_rep, 5), convert=False,
                               memory=False)
                rows.append(r)
                os.unlink(plain)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    meta = {"when": stamp, "python": platform.python_version(), "machine": platform.machine(),
            "cpus": os.cpu_count(), "llsvm": llsvm.__version__, "repeats": args.repeats, "scale": args.scale}
    table = markdown(rows)
    with open(os.path.join(args.out_dir, f"bench-{stamp}.json"), "w") as f:
        json.dump({"meta": meta, "rows": rows}, f, indent=1)
    with open(os.path.join(args.out_dir, f"bench-{stamp}.md"), "w") as f:
        f.write(f"llsvm bench {stamp} ({meta['python']}, {meta['cpus']} cpus)\n\n{table}\n")
    print(table)
    for r in rows:
        if "convert_peak_rss_mb" in r:
            print(f"\n{r['dataset']}: conversion peak RSS {r['convert_peak_rss_mb']:.0f} MB for {r['text_mb']} MB "
                  f"of text, {r['convert_quarter_peak_rss_mb']:.0f} MB for a quarter of it; in-memory dataset "
                  f"{r['dataset_bytes'] / 1e6:.1f} MB = {r['bytes_per_nnz']:.1f} B/nnz + {r['bytes_per_row']:.1f} "
                  f"B/row (budget 12 B/nnz + 8 B/row = {r['bytes_budget_12nnz_8row'] / 1e6:.1f} MB)")


if __name__ == "__main__":
    main()
