"""Part `convert` of `make bench` (issue 32, "conversion at parse speed"): text parsing on 1 and 2 threads and
`llsvm-convert` against the in-memory parse of the same file, in the same run.

For each set, --repeats rounds, the runs of a round interleaved (the machine's load falls on all alike):
  - the in-memory parse, `llsvm.read_dataset(path, threads=T)` for T = 1 and 2, each in a fresh process (imports
    before the clock): wall seconds and the CPU seconds of the process during the call (user + system);
  - `llsvm-convert` with --threads 1 (parse, then write, in turn) and --threads 2 (its default: the parse on a helper
    thread while the writer writes), each a whole command (start-up, fsync and rename included): wall and CPU
    seconds; the files of both must be byte-identical; and --threads 2 without the start-up (its main() in a fresh
    process, modules imported before the clock, as the parse).
Also the scanner alone (the first 256 MB of the file in memory, parsed into resident output memory: best CPU seconds
of 5 rounds), which leaves out the page faults and the copy out of the page cache that reading a file costs.
Reported: medians; MB/s of the text; the conversion's speed as a fraction of the in-memory parse's (target >= 0.8)
and the parse's MB/s (targets: >= 1000 with one thread, >= 1600 with two) on the generated sparse set. CPU seconds
show the work apart from the machine's load (on a busy machine the wall of two threads says little); for the parse
on two threads, the CPU seconds of its busiest thread too (about its wall on idle cores).
Before every run (unless --no-warm-memory) a helper process touches and frees twice the text's size of memory
(benchutil.warm_memory, which says why), so each run's new pages (its arrays; the output file's page cache) are
memory the machine used a moment ago: without it the parse, whose process frees its arrays, ran on the pages a
conversion's rename had just freed, while the conversion's own page cache was always new.
--cold: every run (and the scanner's read) starts with the input out of the page cache (posix_fadvise
POSIX_FADV_DONTNEED on the input file after an fsync of it: the file's cached pages are dropped, the rest of the
machine's cache is left alone, root is not needed); without it the input is in the page cache (warm: the first
round reads it).
Sets: the generated sparse set (scripts/gen_data.py sparse, 500,000 rows, seed 1) and dense set (400,000 rows, seed
2) and the largest public sets (data/public, decompressed). Each child runs the llsvm of this repository
(PYTHONPATH), so a worktree measures its own code.

    python scripts/bench_parse.py [--rows 500000] [--shared reuters_moneyfx.trn,usps.t,skin_nonskin,a9a]
                                  [--repeats 5] [--cold] [--no-warm-memory] [--tmp DIR] [--out FILE.md]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchutil import ROOT, issue_sets, md_header, md_row, print_report, say, warm_memory  # noqa: E402

SHARED = ("reuters_moneyfx.trn", "usps.t", "skin_nonskin", "a9a")
TARGET_CONVERT = 0.8
TARGET_PARSE_MB_S = {1: 1000, 2: 1600}

# the parse in a fresh process: wall and this process's CPU seconds during the call
_PARSE = """
import json, os, resource, sys, time
from llsvm import read_dataset

def per_thread():      # CPU seconds of each thread of this process (Linux: /proc/self/task)
    tick, out = os.sysconf("SC_CLK_TCK"), {}
    for tid in os.listdir("/proc/self/task"):
        with open(f"/proc/self/task/{tid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        out[tid] = (int(fields[11]) + int(fields[12])) / tick
    return out

read_dataset(sys.argv[3], threads=int(sys.argv[2]))      # a small file first: the threads exist before the clock
r0, c0 = resource.getrusage(resource.RUSAGE_SELF), per_thread()
t = time.perf_counter()
ds = read_dataset(sys.argv[1], threads=int(sys.argv[2]))
wall = time.perf_counter() - t
r1, c1 = resource.getrusage(resource.RUSAGE_SELF), per_thread()
busiest = max(c1[k] - c0.get(k, 0.0) for k in c1)
print(json.dumps({"wall": wall, "cpu": r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime, "busiest": busiest,
                  "nnz": ds.nnz, "maxrss_mb": r1.ru_maxrss / 1024}))
"""

# the scanner alone in a fresh process: the first 256 MB of the file (whole lines) in memory, parsed into output
# memory that is already resident (recycled by a MemoryPool after the first round): the best CPU seconds of 5 rounds,
# apart from the page faults and the copy out of the page cache that reading a file costs
_SCAN = """
import json, sys, time
import numpy as np
from llsvm._ext import _libsvm as L
with open(sys.argv[1], "rb") as f:
    data = f.read(256 << 20)
data = data[:data.rfind(b"\\n") + 1]
buf = np.frombuffer(data, dtype=np.uint8)
pool, best = L.MemoryPool(), None
for _ in range(5):
    b = L.CSRBuilder()
    b.use_pool(pool)
    b.reserve(len(data) // 2 + 1, len(data) // 4 + 1)
    t = time.process_time()
    status = b.parse(buf, len(data))
    t = time.process_time() - t
    assert status == 0, status
    arrays = b.take()                  # freed below: their memory goes back to the pool for the next round
    del arrays, b
    best = t if best is None else min(best, t)
print(json.dumps({"mb": len(data) / 1e6, "cpu": best}))
"""

# llsvm-convert's main() in a fresh process, its modules imported before the clock (the command without its
# start-up, as the parse above)
_CONVERT = """
import json, resource, sys, time
import numpy, llsvm.binfmt, llsvm.io, llsvm.params, llsvm.sources, llsvm.textio
from llsvm.cli.convert import main
r0 = resource.getrusage(resource.RUSAGE_SELF)
t = time.perf_counter()
main(sys.argv[1:], standalone_mode=False)
wall = time.perf_counter() - t
r1 = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({"wall": wall, "cpu": r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime}))
"""

# a whole command: wall and the child's CPU seconds
_COMMAND = """
import json, os, subprocess, sys, time
t = time.perf_counter()
p = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
_, status, ru = os.wait4(p.pid, 0)
wall = time.perf_counter() - t
err = p.stderr.read().decode()
print(json.dumps({"wall": wall, "cpu": ru.ru_utime + ru.ru_stime, "rc": os.waitstatus_to_exitcode(status),
                  "stderr": err, "maxrss_mb": ru.ru_maxrss / 1024}))
"""


def drop_cached(path):
    """The input's pages out of the page cache (written back first): the next read comes from the disk."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def _env():
    env = dict(os.environ)
    env["PYTHONPATH"] = ROOT + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def _run(code, args):
    out = subprocess.run([sys.executable, "-c", code, *args], check=True, capture_output=True, text=True, env=_env())
    r = json.loads(out.stdout)
    if r.get("rc", 0) != 0:
        raise RuntimeError(f"{args} failed ({r['rc']}): {r['stderr']}")
    return r


def scan_once(path):
    return _run(_SCAN, [path])


def parse_once(path, threads, small):
    return _run(_PARSE, [path, str(threads), small])


def convert_once(path, out, threads):
    return _run(_COMMAND, [sys.executable, "-m", "llsvm.cli.convert", "-q", "--threads", str(threads), path, out])


def convert_main_once(path, out, threads):
    return _run(_CONVERT, ["-q", "--threads", str(threads), path, out])


def bench_set(name, path, tmp, repeats, cold=False, warm=True):
    mb = os.path.getsize(path) / 1e6
    warm_mb = 2 * mb if warm else 0
    runs = {k: [] for k in ("parse1", "parse2", "convert1", "convert2", "convertmain")}
    outs = {t: os.path.join(tmp, f"{os.path.basename(path)}.{t}.bin") for t in (1, 2)}
    small = os.path.join(tmp, "warm-up.txt")
    with open(small, "w") as f:
        f.write("".join(f"{i % 2} 1:{i} 3:0.5\n" for i in range(1000)))
    steps = (("parse1", lambda: parse_once(path, 1, small)), ("convert2", lambda: convert_once(path, outs[2], 2)),
             ("parse2", lambda: parse_once(path, 2, small)), ("convert1", lambda: convert_once(path, outs[1], 1)),
             ("convertmain", lambda: convert_main_once(path, outs[2], 2)))
    for _ in range(repeats):
        for key, step in steps:
            if cold:
                drop_cached(path)
            warm_memory(warm_mb)
            runs[key].append(step())
    with open(outs[1], "rb") as f1, open(outs[2], "rb") as f2:
        identical = f1.read() == f2.read()
    for p in (*outs.values(), small):
        os.unlink(p)
    scan = scan_once(path)
    row = {"set": name, "cold": cold, "warm_memory": warm, "text_mb": mb, "identical": identical,
           "scan_mb_s": scan["mb"] / scan["cpu"]}
    for k, rs in runs.items():
        row[k + "_s"] = statistics.median(r["wall"] for r in rs)
        row[k + "_cpu_s"] = statistics.median(r["cpu"] for r in rs)
        row[k + "_mb_s"] = mb / row[k + "_s"]
    # the CPU seconds of the busiest thread: about the wall the parse would take on idle cores
    row["parse2_busiest_s"] = statistics.median(r["busiest"] for r in runs["parse2"])
    row["parse2_busiest_mb_s"] = mb / row["parse2_busiest_s"] if row["parse2_busiest_s"] > 0 else None   # < a tick
    # the conversion's speed as a fraction of the in-memory parse's (1 thread each, and the defaults: 2)
    row["convert_vs_parse"] = row["parse1_s"] / row["convert2_s"]
    row["convert1_vs_parse"] = row["parse1_s"] / row["convert1_s"]
    row["convertmain_vs_parse"] = row["parse1_s"] / row["convertmain_s"]
    row["parse2_speedup"] = row["parse1_s"] / row["parse2_s"]
    say(json.dumps(row))
    return row


def parse_markdown(rows):
    lines = md_header(["set", "MB", "parse 1 thr MB/s (CPU s)", "parse 2 thr MB/s (CPU s)", "2 thr speed-up",
                       "2 thr: MB per busiest thread's CPU s",
                       "convert --threads 1 MB/s (CPU s)", "convert --threads 2 MB/s (CPU s)",
                       "convert 2 / parse 1", "convert 1 / parse 1", "convert 2 without start-up MB/s (CPU s)",
                       "that / parse 1", "scanner alone MB/s", "same file"])
    for r in rows:
        lines.append(md_row([r["set"], f"{r['text_mb']:.1f}",
                             f"{r['parse1_mb_s']:.0f} ({r['parse1_cpu_s']:.3f})",
                             f"{r['parse2_mb_s']:.0f} ({r['parse2_cpu_s']:.3f})", f"{r['parse2_speedup']:.2f}x",
                             f"{r['parse2_busiest_mb_s']:.0f} ({r['parse2_busiest_s']:.3f})"
                             if r["parse2_busiest_mb_s"] else "under a clock tick",
                             f"{r['convert1_mb_s']:.0f} ({r['convert1_cpu_s']:.3f})",
                             f"{r['convert2_mb_s']:.0f} ({r['convert2_cpu_s']:.3f})",
                             f"{r['convert_vs_parse']:.2f}x", f"{r['convert1_vs_parse']:.2f}x",
                             f"{r['convertmain_mb_s']:.0f} ({r['convertmain_cpu_s']:.3f})",
                             f"{r['convertmain_vs_parse']:.2f}x", f"{r['scan_mb_s']:.0f}",
                             "yes" if r["identical"] else "NO"]))
    out = "\n".join(lines) + "\n"
    for r in rows:
        if r["set"].startswith("sparse"):
            out += (f"\nTargets on {r['set']}: convert >= {TARGET_CONVERT}x the in-memory parse: "
                    f"{r['convert_vs_parse']:.2f}x {'✓' if r['convert_vs_parse'] >= TARGET_CONVERT else '✗'}; "
                    f"parse >= {TARGET_PARSE_MB_S[1]} MB/s on one thread: {r['parse1_mb_s']:.0f} "
                    f"{'✓' if r['parse1_mb_s'] >= TARGET_PARSE_MB_S[1] else '✗'}; >= {TARGET_PARSE_MB_S[2]} MB/s on "
                    f"two: {r['parse2_mb_s']:.0f} {'✓' if r['parse2_mb_s'] >= TARGET_PARSE_MB_S[2] else '✗'}\n")
    return out


def bench_parse(tmp, rows=500000, shared=SHARED, repeats=5, dense=True, cold=False, seeds=(1,), warm=True):
    sets = issue_sets(tmp, rows, seeds, shared, dense)
    return [bench_set(name, path, tmp, repeats, cold, warm) for name, path in sets]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=500000, help="rows of the generated sparse set (dense: 0.8 of them)")
    ap.add_argument("--shared", default=",".join(SHARED))
    ap.add_argument("--no-dense", action="store_true")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--seeds", default="1", help="generator seeds of the sparse sets (comma list)")
    ap.add_argument("--cold", action="store_true", help="each run reads the input from the disk (module docstring)")
    ap.add_argument("--no-warm-memory", action="store_true",
                    help="no helper touching memory before each run (module docstring)")
    ap.add_argument("--tmp", default=None, help="directory for the generated sets (kept: reused when present)")
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    tmp = args.tmp or tempfile.mkdtemp(prefix="bench-parse-")
    rows = bench_parse(tmp, args.rows, [s for s in args.shared.split(",") if s], args.repeats, not args.no_dense,
                       args.cold, [int(s) for s in args.seeds.split(",")], not args.no_warm_memory)
    text = ("# Text parsing on 1 and 2 threads and llsvm-convert against the in-memory parse (same run, medians"
            + (", input out of the page cache before each run" if args.cold else ", input in the page cache")
            + ("" if args.no_warm_memory else ", memory touched before each run")
            + ")\n\n" + parse_markdown(rows))
    print_report(text, args.out)
    return rows


if __name__ == "__main__":
    main()
