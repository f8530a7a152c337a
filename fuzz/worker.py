"""One fuzzing process: one target under atheris (libFuzzer), inside the runner's memory limit and budget.

    python -m fuzz.worker --target text --results DIR --scratch DIR --counter FILE [--deadline T] [--runs N] ...

The runner (fuzz/runner.py) starts it, and starts it again after libFuzzer stops on a crash, a timeout or an
out-of-memory, or when the worker asks for it (exit status RESTART: its resident memory has grown past
RESTART_SHARE of the limit; not a failure). The address-space limit (RLIMIT_AS) is set before llsvm is imported, so any allocation beyond it,
NumPy's included, fails here as a MemoryError (libFuzzer's own -malloc_limit_mb does not see NumPy). The worker
catches every failure of a check itself, saves the input under DIR/<target>/failures/<rule>/ and goes on, so one
bug does not stop the run; it stops when its budget (seconds or inputs) is spent. Counts go to the runner through
a small shared file (`--counter`: inputs and failures as two u64) and the per-rule counts through
<scratch>/rules.json.
"""
import argparse
import hashlib
import json
import mmap
import os
import resource
import sys
import time
import traceback

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SAVE_PER_RULE = 3            # inputs kept per failure rule (the first ones found)
# a worker whose resident memory passes this share of its limit between two inputs exits with RESTART and the runner
# starts a fresh one (not a failure): memory the instrumentation keeps (atheris holds native memory over long runs of
# some inputs, e.g. llsvm-train -s 11 -C in-process, 4 MB each) must not end the run as an out-of-memory crash
RESTART_SHARE = 0.7
RESTART = 75


def resident():
    """Bytes of this process's resident memory now."""
    with open("/proc/self/statm", "rb") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def instrumented(target):
    """The modules whose coverage guides libFuzzer for `target`: llsvm's for every real target; the runner's own
    `selftest` needs none of it (instrumenting llsvm costs about 5 s of each worker start, and it starts three)."""
    return ["fuzz.targets"] if target == "selftest" else ["llsvm", "fuzz.reference", "fuzz.targets"]


def set_memory_limit(mb):
    limit = int(mb) << 20
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def failure_rule(exc):
    """The rule a failure is grouped under: the oracle's rule, or the exception type and where it was raised
    (the innermost frame in llsvm, else the innermost frame)."""
    from fuzz.targets import OracleFailure
    if isinstance(exc, OracleFailure):
        return exc.rule
    frames = traceback.extract_tb(exc.__traceback__)
    inside = [f for f in frames if os.sep + "llsvm" + os.sep in f.filename] or frames
    where = ""
    if inside:
        f = inside[-1]
        name = os.path.relpath(f.filename, REPO) if f.filename.startswith(REPO) else os.path.basename(f.filename)
        where = f"@{name}:{f.lineno}"
    return f"exception.{type(exc).__name__}{where}"


def slug(rule):
    return "".join(c if c.isalnum() or c in "._-" else "_" for c in rule)[:120]


class Recorder:
    """Counts inputs and failures (shared counter file), saves failing inputs, keeps per-rule counts."""

    def __init__(self, target, results, scratch, counter):
        self.dir = os.path.join(results, target, "failures")
        self.rules_path = os.path.join(scratch, "rules.json")
        self._fd = os.open(counter, os.O_RDWR)
        self._map = mmap.mmap(self._fd, 16)
        self.counts = {}
        if os.path.exists(self.rules_path):
            with open(self.rules_path) as f:
                self.counts = json.load(f)
        self._last_write = 0.0

    @property
    def inputs(self):
        return int.from_bytes(self._map[0:8], "little")

    def count_input(self):
        self._map[0:8] = (self.inputs + 1).to_bytes(8, "little")

    def failure(self, data, exc):
        self._map[8:16] = (int.from_bytes(self._map[8:16], "little") + 1).to_bytes(8, "little")
        rule = failure_rule(exc)
        first = rule not in self.counts
        self.counts[rule] = self.counts.get(rule, 0) + 1
        where = os.path.join(self.dir, slug(rule))
        os.makedirs(where, exist_ok=True)
        kept = [n for n in os.listdir(where) if n.endswith(".input")]
        sha = hashlib.sha1(data).hexdigest()[:16]
        if len(kept) < SAVE_PER_RULE and sha + ".input" not in kept:
            with open(os.path.join(where, sha + ".input"), "wb") as f:
                f.write(data)
            with open(os.path.join(where, sha + ".txt"), "w") as f:
                f.write(f"rule: {rule}\n{len(data)} bytes\n\n")
                f.write("".join(traceback.format_exception(type(exc), exc, exc.__traceback__)))
        if first:
            print(f"FUZZ FAILURE [{rule}] {str(exc)[:300]} (input saved under {where})", file=sys.stderr,
                  flush=True)
        now = time.monotonic()
        if first or now - self._last_write > 0.5:
            self.write_rules()
            self._last_write = now

    def write_rules(self):
        tmp = self.rules_path + ".tmp"
        with open(tmp, "w") as f:
            json.dump(self.counts, f)
        os.replace(tmp, self.rules_path)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--target", required=True)
    ap.add_argument("--results", required=True)
    ap.add_argument("--scratch", required=True)
    ap.add_argument("--counter", required=True)
    ap.add_argument("--deadline", type=float, default=None, help="stop at this time (seconds since the epoch)")
    ap.add_argument("--runs", type=int, default=None, help="stop once the counter reaches this many inputs")
    ap.add_argument("--max-len", type=int, default=4096)
    ap.add_argument("--timeout", type=int, default=10)
    ap.add_argument("--memory-mb", type=int, default=2048)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--fresh", action="store_true", help="write the seeds and reproducers into the corpus")
    args = ap.parse_args(argv)

    set_memory_limit(args.memory_mb)
    import atheris
    with atheris.instrument_imports(include=instrumented(args.target)):
        import llsvm  # noqa: F401
        from fuzz import reference, targets  # noqa: F401
    from fuzz import mutators, regressions, seeds

    target = args.target
    check = targets.CHECKS[target]
    base = os.path.join(args.results, target)
    corpus = os.path.join(base, "corpus")
    artifacts = os.path.join(base, "artifacts")
    for d in (corpus, artifacts):
        os.makedirs(d, exist_ok=True)
    work = targets.Workdir(args.scratch)
    if args.fresh:           # a run's first worker: seeds, and the reproducers of bugs found before, checked first
        for name, data in seeds.seeds(target, work).items():
            with open(os.path.join(corpus, "seed-" + name), "wb") as f:
                f.write(data[:args.max_len])
        for case in regressions.CASES:
            if case.target == target:
                with open(os.path.join(corpus, "regression-" + case.name), "wb") as f:
                    f.write(case.build(work))
    dict_path = os.path.join(args.scratch, target + ".dict")
    with open(dict_path, "w") as f:
        f.write(seeds.dictionary_text(target))

    rec = Recorder(target, args.results, args.scratch, args.counter)
    restart_above = int(RESTART_SHARE * (args.memory_mb << 20))
    deadline = args.deadline
    runs = args.runs

    def stop(status=0):
        rec.write_rules()
        work.cleanup()
        sys.stderr.flush()
        os._exit(status)

    if (runs is not None and rec.inputs >= runs) or (deadline is not None and time.time() >= deadline):
        stop()

    def test_one(data):
        rec.count_input()
        try:
            check(data, work)
        except Exception as exc:        # every failure is recorded here; libFuzzer sees only crashes and hangs
            rec.failure(data, exc)
        if (runs is not None and rec.inputs >= runs) or (deadline is not None and time.time() >= deadline):
            stop()
        if resident() > restart_above:
            stop(RESTART)               # the runner starts a fresh worker on the rest of the budget

    lf_args = [sys.argv[0], corpus, f"-max_len={args.max_len}", f"-timeout={args.timeout}",
               f"-rss_limit_mb={args.memory_mb}", f"-artifact_prefix={artifacts}{os.sep}", f"-seed={args.seed}",
               "-print_final_stats=0"]
    if seeds.DICTIONARIES[target]:
        lf_args.append(f"-dict={dict_path}")
    if deadline is not None:
        lf_args.append(f"-max_total_time={int(deadline - time.time()) + 60}")   # a safety net: test_one stops first
    kwargs = {}
    if target == "binary":
        # atheris.Mutate is looked up at each call: Fuzz() rebinds it once libFuzzer runs
        kwargs["custom_mutator"] = mutators.binary_mutator(lambda data, size: atheris.Mutate(data, size))
    atheris.Setup(lf_args, test_one, **kwargs)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
