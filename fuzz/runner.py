"""`make fuzz` / `python -m fuzz`: run the fuzz targets, each in its own process under a memory limit, and report.

    python -m fuzz [--targets text,binary,model,options] [--time SECONDS] [--runs N] [--jobs J] [--results DIR]
                   [--max-len N] [--timeout S] [--memory-mb MB] [--seed N] [--json FILE]
    python -m fuzz --replay TARGET FILE...

--time is the budget of the whole run, shared equally by the targets (60 s by default: 15 s each); --runs N stops
each target after N inputs (with --runs alone there is no time limit). --jobs runs that many targets at once.
Each target runs as `python -m fuzz.worker` with RLIMIT_AS and libFuzzer's -rss_limit_mb at --memory-mb, inputs
up to --max-len bytes (by default 8192 for text, 16384 for binary, 4096 for models, 512 for option lists) and
libFuzzer's per-input -timeout. A worker that libFuzzer stops (a crash, a hang past the timeout, memory past the
limit) counts one failure, with libFuzzer's saved input, and is started again on what remains of its budget.

Results go under --results (default fuzz-results/, not tracked): per target the corpus (kept between runs), the
failing inputs by rule (failures/<rule>/<sha1>.input with the traceback beside it), libFuzzer's artifacts and its
log; summary.json holds the figures printed at the end. The exit status is 1 when anything failed.
--replay runs one target's check on the given files (a saved failure, say) and prints what it finds.
"""
import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time

from fuzz.worker import RESTART

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGETS = ("text", "binary", "model", "options")
MAX_LEN = {"text": 8192, "binary": 16384, "model": 4096, "options": 512, "selftest": 64}
MAX_RESTARTS = 50
STARTUP_SLACK = 120          # seconds a worker may take beyond its budget (imports, seeds) before it is killed


def _scratch_base():
    return "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None


def _drop_from_corpus(corpus, artifact):
    """Remove the input libFuzzer saved as `artifact` from the corpus, if it is there (a seed or a reproducer that
    kills the process): else every restart would stop on it again."""
    with open(artifact, "rb") as f:
        bad = hashlib.sha1(f.read()).digest()
    for name in os.listdir(corpus):
        path = os.path.join(corpus, name)
        with open(path, "rb") as f:
            if hashlib.sha1(f.read()).digest() == bad:
                os.unlink(path)


class TargetRun:
    """One target's share of the run: its workers, one after another, until the budget is spent."""

    def __init__(self, target, args, seconds, runs):
        self.target = target
        self.args = args
        self.seconds = seconds
        self.runs = runs
        self.inputs = 0
        self.failures = 0             # failures the worker caught (oracle rules, exceptions)
        self.rules = {}
        self.crashes = []             # workers stopped by libFuzzer: (kind, artifact or None)
        self.elapsed = 0.0
        self.starts = 0
        self.planned = 0              # restarts the worker asked for (its memory), not failures

    def run(self):
        base = os.path.join(self.args.results, self.target)
        artifacts = os.path.join(base, "artifacts")
        os.makedirs(artifacts, exist_ok=True)
        scratch = tempfile.mkdtemp(prefix=f"llsvm-fuzz-{self.target}-", dir=_scratch_base())
        counter = os.path.join(scratch, "counter")
        with open(counter, "wb") as f:
            f.write(bytes(16))
        log_path = os.path.join(base, "worker.log")
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([REPO] + [p for p in [os.environ.get("PYTHONPATH")] if p]),
                   OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", PYTHONHASHSEED="0")
        t0 = time.monotonic()
        deadline = None if self.seconds is None else time.time() + self.seconds
        try:
            with open(log_path, "wb") as log:
                while True:
                    left = None if self.seconds is None else self.seconds - (time.monotonic() - t0)
                    if left is not None and left <= 0:
                        break
                    if self.runs is not None and self._read(counter)[0] >= self.runs:
                        break
                    if self.starts - self.planned > MAX_RESTARTS:
                        self.crashes.append(("too many restarts", None))
                        break
                    before = set(os.listdir(artifacts))
                    cmd = [sys.executable, "-m", "fuzz.worker", "--target", self.target,
                           "--results", self.args.results, "--scratch", scratch, "--counter", counter,
                           "--max-len", str(self.args.max_len or MAX_LEN[self.target]),
                           "--timeout", str(self.args.timeout), "--memory-mb", str(self.args.memory_mb),
                           "--seed", str(self.args.seed + self.starts)]
                    if deadline is not None:
                        cmd += ["--deadline", f"{deadline:.3f}"]
                    if self.runs is not None:
                        cmd += ["--runs", str(self.runs)]
                    if self.starts == 0:
                        cmd.append("--fresh")
                    self.starts += 1
                    proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=log, stderr=log, stdin=subprocess.DEVNULL)
                    try:
                        limit = None if left is None else left + self.args.timeout + STARTUP_SLACK
                        rc = proc.wait(timeout=limit)
                    except subprocess.TimeoutExpired:
                        proc.kill()
                        proc.wait()
                        self.crashes.append(("worker overran its budget", None))
                        break
                    if rc == 0:
                        break
                    if rc == RESTART:             # a planned restart (fuzz/worker.py), not a failure
                        self.planned += 1
                        continue
                    new = sorted(set(os.listdir(artifacts)) - before)
                    if new:
                        for name in new:
                            self.crashes.append((name.split("-", 1)[0], os.path.join(artifacts, name)))
                            _drop_from_corpus(os.path.join(base, "corpus"), os.path.join(artifacts, name))
                    else:
                        self.crashes.append((f"worker exit status {rc}", None))
        finally:
            self.elapsed = time.monotonic() - t0
            self.inputs, self.failures = self._read(counter)
            rules = os.path.join(scratch, "rules.json")
            if os.path.exists(rules):
                with open(rules) as f:
                    self.rules = json.load(f)
            shutil.rmtree(scratch, ignore_errors=True)

    @staticmethod
    def _read(counter):
        with open(counter, "rb") as f:
            data = f.read(16)
        return int.from_bytes(data[:8], "little"), int.from_bytes(data[8:16], "little")

    @property
    def failed(self):
        return self.failures + len(self.crashes)

    def summary(self):
        return {"inputs": self.inputs, "seconds": round(self.elapsed, 1),
                "inputs_per_second": round(self.inputs / self.elapsed, 1) if self.elapsed else None,
                "failures": self.failed, "rules": self.rules,
                "crashes": [{"kind": k, "artifact": a} for k, a in self.crashes], "workers": self.starts,
                "planned_restarts": self.planned}


def replay(target, files, memory_mb):
    """Run one target's check on files; print PASS or the failure with its traceback. Returns the exit status."""
    import traceback
    from fuzz.worker import failure_rule, set_memory_limit
    set_memory_limit(memory_mb)
    from fuzz import targets
    check = targets.CHECKS[target]
    work = targets.Workdir()
    status = 0
    try:
        for path in files:
            with open(path, "rb") as f:
                data = f.read()
            try:
                check(data, work)
                print(f"PASS {path}")
            except Exception as exc:
                status = 1
                print(f"FAIL {path} [{failure_rule(exc)}]")
                traceback.print_exception(type(exc), exc, exc.__traceback__)
    finally:
        work.cleanup()
    return status


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m fuzz", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--targets", default=",".join(TARGETS), help="comma-separated: text, binary, model, options")
    ap.add_argument("--time", type=float, default=None, help="seconds for the whole run (default 60)")
    ap.add_argument("--runs", type=int, default=None, help="inputs per target")
    ap.add_argument("--jobs", type=int, default=1, help="targets run at once")
    ap.add_argument("--results", default=os.path.join(REPO, "fuzz-results"))
    ap.add_argument("--max-len", type=int, default=None, help="largest input in bytes (default per target)")
    ap.add_argument("--timeout", type=int, default=10, help="seconds one input may take (a hang past it fails)")
    ap.add_argument("--memory-mb", type=int, default=2048, help="address-space and RSS limit of each process")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", default=None, help="also write the summary to this file")
    ap.add_argument("--replay", nargs="+", metavar=("TARGET", "FILE"), help="check files with one target")
    args = ap.parse_args(argv)

    if args.replay:
        if len(args.replay) < 2 or args.replay[0] not in TARGETS + ("selftest",):
            ap.error("--replay TARGET FILE...: TARGET is text, binary, model or options")
        return replay(args.replay[0], args.replay[1:], args.memory_mb)

    names = [t for t in args.targets.split(",") if t]
    unknown = [t for t in names if t not in TARGETS + ("selftest",)]
    if unknown or not names:
        ap.error(f"unknown targets {unknown}: choose from {', '.join(TARGETS)}")
    total = args.time if args.time is not None else (None if args.runs is not None else 60.0)
    per_target = None if total is None else total / len(names)
    args.results = os.path.abspath(args.results)
    os.makedirs(args.results, exist_ok=True)
    runs = [TargetRun(t, args, per_target, args.runs) for t in names]
    budget = f"{per_target:.0f} s" if per_target is not None else "no time limit"
    if args.runs is not None:
        budget += f", {args.runs} inputs"
    print(f"fuzzing {', '.join(names)}: {budget} each, {args.jobs} at a time, memory limit {args.memory_mb} MB, "
          f"timeout {args.timeout} s; results in {args.results}", flush=True)

    pending = list(runs)
    lock = threading.Lock()

    def work():
        while True:
            with lock:
                if not pending:
                    return
                r = pending.pop(0)
            r.run()

    threads = [threading.Thread(target=work) for _ in range(max(1, min(args.jobs, len(runs))))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()

    summary = {"targets": {r.target: r.summary() for r in runs}}
    summary["inputs"] = sum(r.inputs for r in runs)
    summary["failures"] = sum(r.failed for r in runs)
    print(f"\n{'target':8} {'inputs':>10} {'seconds':>8} {'inputs/s':>9} {'failures':>9}")
    for r in runs:
        s = r.summary()
        print(f"{r.target:8} {s['inputs']:>10} {s['seconds']:>8.1f} {s['inputs_per_second'] or 0:>9.1f} "
              f"{s['failures']:>9}")
        for rule, n in sorted(r.rules.items()):
            print(f"    {n:>8} x {rule}   ({os.path.join(args.results, r.target, 'failures')})")
        for kind, artifact in r.crashes:
            print(f"    libFuzzer stopped the worker: {kind} {artifact or ''} (log: "
                  f"{os.path.join(args.results, r.target, 'worker.log')})")
    print(f"{'total':8} {summary['inputs']:>10} {'':>8} {'':>9} {summary['failures']:>9}")
    for path in [os.path.join(args.results, "summary.json")] + ([args.json] if args.json else []):
        with open(path, "w") as f:
            json.dump(summary, f, indent=1)
    return 1 if summary["failures"] else 0
