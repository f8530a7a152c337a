"""Ctrl-C in a fit from Python (issue 45, H1): the latency from SIGINT to KeyboardInterrupt for every estimator family
of llsvm.sklearn, on the public a9a (data/public or --data: a9a.xz, decompressed into a temporary directory).

For each family, --runs runs (default 5): a child Python reads a9a, makes the estimator (parameters that keep its
fit going for many seconds on a9a: PARAMS), notes the monotonic time its fit starts, and fits; the parent sends
SIGINT at 0.5, 1.0, ... s (wall) after that start, the child notes the monotonic time its `except
KeyboardInterrupt` runs (CLOCK_MONOTONIC is the machine's, the same for both processes) and exits. Latency: from
the kill() to that except clause; also the wall to the child's exit and its CPU time after the signal (rusage
minus /proc/<pid>/stat at the kill). A fit that ends before its signal is counted as such; a child still there
60 s after the signal is killed and counted as blocked. Prints a Markdown table: median and worst of the runs.

    python scripts/bench_estimator_signals.py [--data DIR] [--runs 5] [--only SVC,NuSVC]

Not part of the test suite (tests/test_estimator_reliability.py bounds the same by CPU time on generated sets).
"""
import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time

from benchutil import FETCH_HINT, shared_file
from children import cpu_of, kill, reap

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIG = 2 ** 31 - 1
PARAMS = {
    "LinearSVC": ("LinearSVC", dict(dual=True, C=1000.0, tol=1e-12, max_iter=BIG), "labels"),
    "LogisticRegression": ("LogisticRegression", dict(solver="liblinear", dual=True, C=1000.0, tol=1e-12,
                                                      max_iter=BIG), "labels"),
    "LinearSVR": ("LinearSVR", dict(C=1000.0, tol=1e-12, max_iter=BIG), "targets"),
    "OneClassSVM": ("OneClassSVM", dict(tol=1e-12), "none"),
    "OneClassSVM(solver=21)": ("OneClassSVM", dict(solver=21, kernel="linear", tol=1e-12, max_iter=BIG), "none"),
    "SVC": ("SVC", dict(), "labels"),
    "NuSVC": ("NuSVC", dict(nu=0.4), "labels"),          # nu 0.5 is infeasible on a9a (24 % positive)
    "SVR": ("SVR", dict(), "targets"),
    "NuSVR": ("NuSVR", dict(), "targets"),
    "TreeSVC": ("TreeSVC", dict(tol=1e-12), "labels"),
    "OnlineSVC": ("OnlineSVC", dict(epochs=50), "labels"),
    "ProjectionSVC": ("ProjectionSVC", dict(max_iter=BIG), "labels"),
    "OutOfCoreSVC": ("OutOfCoreSVC", dict(C=1000.0, tol=1e-12, max_iter=BIG), "labels"),
}
CHILD = os.path.join(ROOT, "scripts", "fit_child.py")


def one_run(name, train, work, delay, wait=60.0):
    cls, kw, target = PARAMS[name]
    marks = os.path.join(work, "marks")
    for p in (marks, marks + ".caught"):
        if os.path.exists(p):
            os.remove(p)
    env = dict(os.environ, TMPDIR=work, PYTHONPATH=ROOT)
    with open(os.path.join(work, "stderr"), "wb") as err:
        p = subprocess.Popen([sys.executable, CHILD, cls, repr(kw), train, target, marks],
                             stdout=subprocess.DEVNULL, stderr=err, env=env)
    while not os.path.exists(marks):
        if reap(p, time.monotonic()) is not None:
            raise RuntimeError(f"{name}: the child exited {p.returncode} before its fit: "
                               + open(os.path.join(work, "stderr")).read()[-2000:])
        time.sleep(0.005)
    with open(marks) as f:
        start = float(f.read().split()[0])
    while time.monotonic() < start + delay:
        if reap(p, time.monotonic()) is not None:
            return {"ended": True, "rc": p.returncode}
        time.sleep(0.001)
    c0 = cpu_of(p.pid)
    t_kill = time.monotonic()
    os.kill(p.pid, signal.SIGINT)
    got = reap(p, t_kill + wait)
    if got is None:
        kill(p)
        return {"blocked": True}
    t_exit = time.monotonic()
    _, usage = got
    caught = None
    if os.path.exists(marks + ".caught"):
        with open(marks + ".caught") as f:
            caught = float(f.read()) - t_kill
    return {"latency": caught, "exit": t_exit - t_kill, "cpu_after": usage.ru_utime + usage.ru_stime - c0,
            "rc": p.returncode}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default=os.environ.get("DATA_DIR", os.path.join(ROOT, "data", "public")))
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--only", default=None, help="comma-separated families (default: all)")
    args = ap.parse_args()
    names = list(PARAMS) if args.only is None else args.only.split(",")
    with tempfile.TemporaryDirectory(prefix="llsvm-estimator-signals-") as tmp:
        train = shared_file(args.data, "a9a", tmp)
        if train is None:
            sys.exit(f"a9a.xz is needed in {args.data} ({FETCH_HINT})")
        print("| estimator | parameters | SIGINT -> KeyboardInterrupt, median / worst (ms) | exit, worst (ms) | "
              "CPU after, worst (s) | exit codes | runs cut short / ended first / blocked |")
        print("|---|---|---|---|---|---|---|")
        for name in names:
            rows = [one_run(name, train, tmp, 0.5 * (k + 1)) for k in range(args.runs)]
            hit = [r for r in rows if "latency" in r and r["latency"] is not None]
            lat = [r["latency"] for r in hit]
            cells = [name, ", ".join(f"{k}={v!r}" for k, v in PARAMS[name][1].items()) or "defaults",
                     f"{statistics.median(lat) * 1000:.0f} / {max(lat) * 1000:.0f}" if lat else "-",
                     f"{max(r['exit'] for r in hit) * 1000:.0f}" if hit else "-",
                     f"{max(r['cpu_after'] for r in hit):.3f}" if hit else "-",
                     ", ".join(str(r.get("rc")) for r in rows),
                     f"{len(hit)} / {sum(1 for r in rows if r.get('ended'))} / "
                     f"{sum(1 for r in rows if r.get('blocked'))}"]
            print("| " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
