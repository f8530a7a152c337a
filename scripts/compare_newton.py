"""Compare llsvm-train's output lines and model files with LIBLINEAR's train on the Newton solver types.

    python scripts/compare_newton.py [--work DIR] [--liblinear /tmp/liblinear/train] [--llsvm LLSVM_TRAIN]
                                     [--sets NAME ...]
                                     [--solvers 0 2 11 21] [--costs default 100] [--gen-seeds 1 2 3] [--gen-rows 20000]
                                     [--gen-features 50000] [--gen-nnz 100]

Every case runs `llsvm-train ARGS SET MODEL` (the llsvm-train beside this interpreter) and `train ARGS SET MODEL`
(LIBLINEAR's CLI) and prints one line: the case, `lines same` or the first differing line of the two stdouts
(with its number), and whether the model files are byte-identical. Cases: each set with -s N and -s N -B 1 for
the solvers given, plus -s 0 -w1 3 on binary sets (-s 11 regresses on the class labels), each at every -c of
--costs (-s 21: only -s 21). Sets: the public sets
named (data/public/NAME.xz, decompressed into --work) and generated sparse sets (scripts/gen_data.py sparse, one
per --gen-seeds seed, news20-like by default: 20000 rows, 50000 features, 100 non-zeros a row). Exit status 1
when any case differs. Standard library only (the generator runs as a subprocess).
"""
import argparse
import filecmp
import lzma
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PUBLIC = os.path.join(ROOT, "data", "public")
DEFAULT_SETS = ["reuters_moneyfx.trn", "a9a", "usps.t", "mushrooms"]


def public_set(name, work):
    path = os.path.join(work, name)
    if not os.path.exists(path):
        with lzma.open(os.path.join(PUBLIC, name + ".xz")) as src, open(path + ".tmp", "wb") as dst:
            shutil.copyfileobj(src, dst)
        os.replace(path + ".tmp", path)
    return path


def generated_set(seed, rows, features, nnz, work):
    path = os.path.join(work, f"sparse_{rows}x{features}_{nnz}_s{seed}")
    if not os.path.exists(path):
        subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "gen_data.py"), "sparse", "--out", path,
                        "--rows", str(rows), "--features", str(features), "--nnz-per-row", str(nnz),
                        "--seed", str(seed), "-q"], check=True)
    return path


def binary(path):
    labels = set()
    with open(path) as f:
        for line in f:
            labels.add(line.split(None, 1)[0])
            if len(labels) > 2:
                return False
    return True


def cases(sets, solvers, costs):
    for name, path in sets:
        two = binary(path)
        for s in solvers:
            for c in costs if s != 21 else [None]:            # -s 21 takes neither -c nor a bias
                cost = [] if c is None else ["-c", c]
                for extra in ([], ["-B", "1"]) if s != 21 else ([],):
                    yield name, path, ["-s", str(s)] + cost + extra
                if s == 0 and two:
                    yield name, path, ["-s", "0"] + cost + ["-w1", "3"]


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {p.returncode}: {p.stderr.strip()}")
    return p.stdout.splitlines()


def compare(llsvm_train, liblinear, name, path, args, work):
    m_ll = os.path.join(work, "model.liblinear")
    m_ls = os.path.join(work, "model.llsvm")
    ref = run([liblinear] + args + [path, m_ll])
    got = run([llsvm_train] + args + [path, m_ls])
    same_model = filecmp.cmp(m_ll, m_ls, shallow=False)
    first = None
    for k in range(max(len(ref), len(got))):
        a = ref[k] if k < len(ref) else "<end>"
        b = got[k] if k < len(got) else "<end>"
        if a != b:
            first = (k + 1, a, b)
            break
    case = f"{name} {' '.join(args)}"
    if first is None:
        print(f"{case:45s} lines same ({len(ref)}), model {'identical' if same_model else 'DIFFERS'}", flush=True)
    else:
        k, a, b = first
        print(f"{case:45s} line {k} differs, model {'identical' if same_model else 'DIFFERS'}\n"
              f"    liblinear: {a}\n    llsvm:     {b}", flush=True)
    return first is None and same_model


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--work", help="directory for the decompressed and generated sets (default: a temporary one)")
    ap.add_argument("--liblinear", default="/tmp/liblinear/train")
    ap.add_argument("--llsvm", help="llsvm-train to run (default: the one beside this interpreter)")
    ap.add_argument("--sets", nargs="*", default=DEFAULT_SETS)
    ap.add_argument("--solvers", nargs="*", type=int, default=[0, 2, 11, 21])
    ap.add_argument("--costs", nargs="*", default=["default", "100"],
                    help="-c values, each a case of its own ('default': no -c); a larger C takes more Newton steps")
    ap.add_argument("--gen-seeds", nargs="*", type=int, default=[1, 2, 3])
    ap.add_argument("--gen-rows", type=int, default=20000)
    ap.add_argument("--gen-features", type=int, default=50000)
    ap.add_argument("--gen-nnz", type=int, default=100)
    a = ap.parse_args(argv)
    work = a.work or tempfile.mkdtemp(prefix="compare_newton_")
    os.makedirs(work, exist_ok=True)
    llsvm_train = a.llsvm or os.path.join(os.path.dirname(sys.executable), "llsvm-train")
    sets = [(f"sparse seed {s}", generated_set(s, a.gen_rows, a.gen_features, a.gen_nnz, work))
            for s in a.gen_seeds]
    sets += [(n, public_set(n, work)) for n in a.sets]
    bad = 0
    for name, path, args in cases(sets, a.solvers, [None if c == "default" else c for c in a.costs]):
        bad += not compare(llsvm_train, a.liblinear, name, path, args, work)
    print(f"{bad} case(s) differ")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
