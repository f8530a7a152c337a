"""The cost of a class pair (issue 43, part 3): `llsvm-train -s smo`, `-s nu_svc` and `-b 1` against LIBSVM's
`svm-train` on many classes, whole commands run as a user runs them.

Every row runs one llsvm command and the same svm-train command on the same file (`-q`, the model to a temporary
file), round-robin, --repeats times; the figures are medians. Each program's start-up floor is its command on a
two-class set of two rows (nothing much to train), run just before each of its runs; a row's per-pair cost is the
median of (run - floor) over the rounds / pairs, for both programs, and their ratio. A floor's noise (tens of
milliseconds for llsvm's Python start-up on a busy machine) is larger than the pairs of c50, so llsvm's command
is also run in one process, in turn with the floor's, 4 x --repeats + 1 times (after one run of each, which imports
what they need): its per-pair cost there is the median of the differences / pairs, against svm-train's
whole-command figure. Whether the model files are identical is checked on the first round (with
-b 1 the folds differ: LIBSVM draws them with rand(), llsvm from --seed, so only the -b 1-free rows compare).

Sets: `c200`, `c50` (200 and 50 classes of one row each, generated here: 19,900 and 1,225 pairs of two rows), and
from --data (a directory of LIBSVM sets), vowel.scale (11 classes, 55 pairs) and usps.t (10 classes, 45 pairs)
when present.

    python scripts/bench_pairs.py --svm-train DIR_OR_BINARY --data DIR [--repeats 5] [--llsvm-train PATH]

svm-train: a binary or the directory of LIBSVM's build (default $LLSVM_LIBSVM_DIR).
"""
import argparse
import filecmp
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

SETS = ("c200", "c50", "vowel.scale", "usps.t")
# (llsvm's options, svm-train's): C-SVC, nu-SVC, each with and without -b 1
KINDS = ((("-s", "smo"), ("-s", "0")), (("-s", "nu_svc"), ("-s", "1")),
         (("-s", "smo", "-b", "1"), ("-s", "0", "-b", "1")), (("-s", "nu_svc", "-b", "1"), ("-s", "1", "-b", "1")))


def generated(path, k):
    """k classes of one row each: row i is `i 1:i/100`."""
    with open(path, "w") as f:
        f.write("".join("%d 1:%g\n" % (i, i / 100) for i in range(k)))


def n_classes(path):
    with open(path) as f:
        return len({line.split(None, 1)[0] for line in f if line.strip()})


def wall(cmd):
    t = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t


# llsvm-train's command and the floor's, in turn, `repeats` times in one process (after one run of each that
# imports what they need): the median of their differences
IN_PROCESS = """
import json, statistics, sys, time
from llsvm.cli.train import main
floor, args, repeats = json.loads(sys.argv[1]), json.loads(sys.argv[2]), int(sys.argv[3])
def run(a):
    t = time.perf_counter()
    try:
        main(a, standalone_mode=False)
    except SystemExit:
        pass
    return time.perf_counter() - t
run(floor), run(args)
print(json.dumps(statistics.median(run(args) - run(floor) for _ in range(repeats))))
"""


def in_process(python, floor, args, repeats, cwd):
    """The median of `repeats` differences between llsvm-train's commands `args` and `floor` run in turn in one
    process (in cwd: `python -c` imports from its working directory first)."""
    proc = subprocess.run([python, "-c", IN_PROCESS, json.dumps(floor), json.dumps(args), str(repeats)], check=True,
                          capture_output=True, text=True, cwd=cwd)
    return json.loads(proc.stdout.splitlines()[-1])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--svm-train", default=os.environ.get("LLSVM_LIBSVM_DIR"))
    ap.add_argument("--llsvm-train", default=os.path.join(os.path.dirname(sys.executable), "llsvm-train"))
    ap.add_argument("--python", default=None, help="the Python of the in-process figures (default: llsvm-train's)")
    ap.add_argument("--data", default=None, help="a directory holding vowel.scale and usps.t")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--sets", default=",".join(SETS))
    ap.add_argument("--kinds", default="0,1,2,3", help="rows of KINDS: 0 -s smo, 1 -s nu_svc, 2 and 3 with -b 1")
    a = ap.parse_args(argv)
    svm = a.svm_train
    if svm and os.path.isdir(svm):
        svm = os.path.join(svm, "svm-train")
    if not svm or not os.access(svm, os.X_OK):
        sys.exit("give LIBSVM's svm-train: --svm-train or $LLSVM_LIBSVM_DIR")
    # on a memory file system where there is one: llsvm's model file is fsync'ed, whose disk latency is noise here
    tmp = tempfile.mkdtemp(prefix="bench_pairs", dir="/dev/shm" if os.path.isdir("/dev/shm") else None)
    try:
        files = {}
        floor = os.path.join(tmp, "c2")
        with open(floor, "w") as f:
            f.write("1 1:1\n-1 1:2\n")
        for name in a.sets.split(","):
            if name in ("c200", "c50"):
                files[name] = os.path.join(tmp, name)
                generated(files[name], int(name[1:]))
            elif a.data and os.path.exists(os.path.join(a.data, name)):
                files[name] = os.path.join(a.data, name)
        ours_m, theirs_m = os.path.join(tmp, "ours.model"), os.path.join(tmp, "theirs.model")

        def both(data, ours_opts, their_opts):
            return ([a.llsvm_train, "-q", *ours_opts, data, ours_m], [svm, "-q", *their_opts, data, theirs_m])

        floor_cmds = both(floor, ("-s", "smo"), ("-s", "0"))
        python = a.python or os.path.join(os.path.dirname(a.llsvm_train), "python")
        print("| set | pairs | options | llsvm-train ms | svm-train ms | llsvm us/pair | svm-train us/pair | ratio "
              "| llsvm in one process: us/pair | ratio | same model |")
        print("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---|")
        floors = [[], []]
        for name, data in files.items():
            k = n_classes(data)
            pairs = k * (k - 1) // 2
            for ours_opts, their_opts in (KINDS[int(q)] for q in a.kinds.split(",")):
                cmds = both(data, ours_opts, their_opts)
                times, net = [[], []], [[], []]
                same = None
                for r in range(a.repeats):
                    for side, cmd in enumerate(cmds):
                        f = wall(floor_cmds[side])
                        t = wall(cmd)
                        floors[side].append(f)
                        times[side].append(t)
                        net[side].append(t - f)
                    if r == 0 and "-b" not in ours_opts:
                        same = filecmp.cmp(ours_m, theirs_m, shallow=False)
                t_ours, t_theirs = (statistics.median(v) for v in times)
                per_ours, per_theirs = (statistics.median(v) / pairs for v in net)
                ratio = per_ours / per_theirs if per_theirs > 0 else float("inf")
                per_ip = in_process(python, floor_cmds[0][1:], cmds[0][1:], 4 * a.repeats + 1, tmp) / pairs
                print(f"| {name} | {pairs} | {' '.join(ours_opts)} | {t_ours * 1e3:.1f} | {t_theirs * 1e3:.1f} | "
                      f"{per_ours * 1e6:.1f} | {per_theirs * 1e6:.1f} | {ratio:.2f} | {per_ip * 1e6:.1f} | "
                      f"{per_ip / per_theirs if per_theirs > 0 else float('inf'):.2f} | "
                      f"{'-' if same is None else ('yes' if same else 'NO')} |", flush=True)
        f_ours, f_theirs = (statistics.median(v) for v in floors)
        print(f"\nstart-up floor (2 rows, 2 classes): llsvm-train {f_ours * 1e3:.1f} ms, svm-train {f_theirs * 1e3:.1f} "
              f"ms (medians of {len(floors[0])})")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
