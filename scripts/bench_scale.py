#!/usr/bin/env python3
"""llsvm-scale against LIBSVM's svm-scale (issue 47, item 1: >= 10x on a 500 MB text file).

    python scripts/bench_scale.py FILE [--options "-l 0 -u 1"] [--svm-scale PATH] [--tmp DIR]

FILE is LIBSVM text, e.g. `python scripts/gen_data.py sparse --out /tmp/sparse.txt` (577 MB) or the first 185,000
rows of `gen_data.py dense` (505 MB). Both commands run with the same options, once to /dev/null and once to a file
(llsvm-scale with -o FILE, svm-scale with its stdout redirected), each as a subprocess whose own wall seconds, CPU
seconds (user + system, every thread) and peak RSS are measured (benchutil.run_measured); the two output files and
the two range files (-s) must be identical byte for byte. svm-scale is the binary built from LIBSVM 3.37's source
(--svm-scale, else LLSVM_SVM_SCALE, else /tmp/ref/libsvm/svm-scale). On a busy machine run it under `nice -n 19`
and say so: the wall clock then depends on the other work, the CPU seconds much less.
"""
import argparse
import filecmp
import os
import shlex
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchutil import run_measured, say  # noqa: E402


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("file")
    ap.add_argument("--options", default="-l 0 -u 1", help="svm-scale's options for both (default: -l 0 -u 1)")
    ap.add_argument("--svm-scale", default=os.environ.get("LLSVM_SVM_SCALE", "/tmp/ref/libsvm/svm-scale"))
    ap.add_argument("--tmp", default=None, help="directory for the outputs (default: beside FILE)")
    args = ap.parse_args(argv)
    opts = shlex.split(args.options)
    tmp = tempfile.mkdtemp(prefix="bench-scale-", dir=args.tmp or os.path.dirname(os.path.abspath(args.file)))
    ours = os.path.join(os.path.dirname(sys.executable), "llsvm-scale")
    if not os.path.exists(ours):
        ours = None
    ours_cmd = [ours] if ours else [sys.executable, "-c", "from llsvm.cli.entry import scale; scale()"]
    size = os.path.getsize(args.file) / 1e6
    say(f"# {args.file}: {size:.0f} MB, options {' '.join(opts)}")
    say("| command | output | wall s | CPU s | peak MB |")
    say("|---|---|---|---|---|")
    rows = {}
    for where in ("/dev/null", "file"):
        out = {who: os.path.join(tmp, f"{who}.out") for who in ("svm-scale", "llsvm-scale")}
        rng = {who: os.path.join(tmp, f"{who}.range") for who in ("svm-scale", "llsvm-scale")}
        target = {who: "/dev/null" if where == "/dev/null" else out[who] for who in out}
        ref = ["sh", "-c", "exec \"$0\" \"$@\" > " + shlex.quote(target["svm-scale"]), args.svm_scale, *opts,
               "-s", rng["svm-scale"], args.file]
        mine = [*ours_cmd, *opts, "-s", rng["llsvm-scale"], "-o", target["llsvm-scale"], args.file]
        for who, cmd in (("svm-scale", ref), ("llsvm-scale", mine)):
            wall, peak, cpu = run_measured(cmd, cpu=True)
            rows[who, where] = (wall, cpu)
            say(f"| {who} | {where} | {wall:.2f} | {cpu:.2f} | {peak:.0f} |")
        assert filecmp.cmp(rng["svm-scale"], rng["llsvm-scale"], shallow=False), "the range files differ"
        if where == "file":
            assert filecmp.cmp(out["svm-scale"], out["llsvm-scale"], shallow=False), "the outputs differ"
            say("outputs and range files identical byte for byte")
        for f in list(out.values()) + list(rng.values()):
            if os.path.exists(f):
                os.unlink(f)
    for where in ("/dev/null", "file"):
        (w0, c0), (w1, c1) = rows["svm-scale", where], rows["llsvm-scale", where]
        say(f"{where}: llsvm-scale {w0 / w1:.1f}x faster (wall), {c0 / c1:.1f}x (CPU)")
    os.rmdir(tmp)
    return 0


if __name__ == "__main__":
    sys.exit(main())
