"""Part `cli` of `make bench` (issue 29): whole commands against LIBLINEAR's and LIBSVM's command-line tools.

Each row is one command of llsvm and the same command of the reference CLI on the same files, run as a user runs
them (a subprocess each, start-up, reading, training or predicting and writing included): wall time and peak RSS
(the command's own ru_maxrss, through benchutil.run_measured's launcher), medians of --cli-repeats runs taken
round-robin (llsvm, reference, llsvm, ...), and the ratio llsvm / reference from the same run. Every row is
measured on a quiet machine and again beside one CPU-bound process per core (`yes > /dev/null`,
bench_contention.Hogs). Targets: wall ratio <= 1.0, peak RSS <= the reference's + 40 MB.

Commands (sets: the public sets of data/public, `make data`, and generated sets of scripts/gen_data.py; the
issue's w8a, phishing, ijcnn1, news20.t and satimage are not on this machine, so sets of comparable shape stand in:
a9a for w8a, mushrooms for phishing, skin_nonskin for ijcnn1, the generated `news20-like` (20 classes, 60,000
features, 16,000 rows) and reuters_moneyfx.trn for news20.t, svmguide1's 3,053-SV kernel model for satimage's):
  - `llsvm-train` against LIBLINEAR's `train` with the default -s 1, `-s 3 -e 0.001`, `-s 0`, `-s 2` and
    `-s 2 -e 0.0001` on the sparse sets;
  - `llsvm-train -s smo` against LIBSVM's `svm-train` (defaults: C-SVC, RBF, C = 1, gamma = 1/num_features) on
    six shared sets;
  - `llsvm-predict` against LIBLINEAR's `predict` (LIBLINEAR's model of the default -s 1, the test file) and
    against LIBSVM's `svm-predict` (svm-train's kernel model, thousands of SVs);
  - whether llsvm's model file is byte-identical to the reference's (expected where the algorithm is
    deterministic: -s 0 and -s 2 (Newton), -s smo; LIBLINEAR's -s 1 and -s 3 visit the rows in rand() order,
    llsvm in --seed order); for prediction, whether the outputs are identical.
The floor of any Python command (`python -I -c "import numpy"`) is measured beside them, and the smallest peak RSS
the launcher can see (`true`: ru_maxrss carries the launcher's own high-water mark across fork and exec, about
12 MB, so a reference CLI's smaller peak is reported as that).

The reference CLIs (reference_cli): a directory holding the binaries or their sources (train.c and a Makefile,
built once into ~/.cache/llsvm/cli/), from --liblinear-dir / --libsvm-dir, else $LLSVM_LIBLINEAR_DIR /
$LLSVM_LIBSVM_DIR (or $LIBLINEAR_DIR / $LIBSVM_DIR); else the liblinear-official / libsvm-official sdist (pip
download --no-binary :all:), built when it holds the command-line sources. (The 2.50 and 3.37 sdists hold only
the library: linear.cpp, newton.cpp, blas/; svm.cpp. Then the part says so and names the variable to set.)
"""
import filecmp
import hashlib
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

from benchutil import FETCH_HINT, md_header, md_row, run_measured, say, shared_file

REPEATS = 5
RSS_SLACK_MB = 40.0
CACHE = os.path.join(os.path.expanduser("~"), ".cache", "llsvm", "cli")
LINEAR_SETS = ("a9a", "mushrooms", "skin_nonskin", "reuters_moneyfx.trn", "news20-like")
LINEAR_OPTIONS = ((), ("-s", "3", "-e", "0.001"), ("-s", "0"), ("-s", "2"), ("-s", "2", "-e", "0.0001"))
DETERMINISTIC = {("-s", "0"), ("-s", "2"), ("-s", "2", "-e", "0.0001")}
SMO_SETS = ("splice", "dna.scale", "usps.t", "mushrooms", "svmguide1", "segment.scale")
LINEAR_PREDICT_SETS = ("a9a", "reuters_moneyfx.trn", "news20-like")
KERNEL_PREDICT_SETS = ("svmguide1", "dna.scale", "usps.t")
# generated stand-ins (scripts/gen_data.py): name -> (kind, seed, rows, test rows, options)
GENERATED = {"news20-like": ("multiclass", 29, 16_000, 4_000,
                             dict(features=60_000, nnz_per_row=80, classes=20))}
TEST_FILES = {"reuters_moneyfx.trn": "reuters_moneyfx.tst"}
PACKAGES = {"liblinear": ("liblinear-official", "2.50", ("train", "predict"), "train.c"),
            "libsvm": ("libsvm-official", "3.37", ("svm-train", "svm-predict"), "svm-train.c")}


def _bin(name, bindir=None):
    """An llsvm command: in `bindir` when given (another tree's commands, e.g. before a change), else beside this
    Python (the installed console scripts)."""
    return os.path.join(bindir or os.path.dirname(sys.executable), name)


# -- the reference CLIs ---------------------------------------------------------------------------------------------
def _has_binaries(d, names):
    return all(os.access(os.path.join(d, n), os.X_OK) for n in names)


def _build(src, names, say):
    """A copy of the source directory `src` built with its Makefile under CACHE (once per source content)."""
    h = hashlib.sha256()
    for fn in sorted(os.listdir(src)):
        p = os.path.join(src, fn)
        if os.path.isfile(p) and fn.endswith((".c", ".cpp", ".h")) or fn == "Makefile":
            with open(p, "rb") as f:
                h.update(fn.encode() + b"\0" + f.read())
    out = os.path.join(CACHE, f"{os.path.basename(os.path.normpath(src))}-{h.hexdigest()[:12]}")
    if _has_binaries(out, names):
        return out
    if say:
        say(f"# cli: building {', '.join(names)} from {src} in {out}")
    work = out + ".part"
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(os.path.dirname(out), exist_ok=True)
    shutil.copytree(src, work, ignore=shutil.ignore_patterns("*.o", "*.so*", *names))
    subprocess.run(["make", "-C", work, *names], check=True, stdout=subprocess.DEVNULL)
    shutil.rmtree(out, ignore_errors=True)
    os.replace(work, out)
    return out


def _from_sdist(kind, say):
    """The reference sources from the PyPI sdist of liblinear-official / libsvm-official (unpacked under CACHE)."""
    import tarfile
    pkg, version, names, main_src = PACKAGES[kind]
    dl = os.path.join(CACHE, "sdist")
    os.makedirs(dl, exist_ok=True)
    tars = [f for f in os.listdir(dl) if f.startswith(pkg.replace("-", "_") + "-" + version)]
    if not tars:
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary", ":all:",
                        "-d", dl, f"{pkg}=={version}.*"], check=True)
        tars = [f for f in os.listdir(dl) if f.startswith(pkg.replace("-", "_") + "-" + version)]
    with tarfile.open(os.path.join(dl, tars[0])) as t:
        members = t.getnames()
        srcs = [m for m in members if m.endswith("/" + main_src)]
        if not srcs:
            cpp = sorted(os.path.basename(m) for m in members if m.endswith((".c", ".cpp")))
            raise FileNotFoundError(
                f"{tars[0]} holds the library only ({', '.join(cpp)}), not LIBLINEAR's/LIBSVM's command-line "
                f"sources ({main_src}): set LLSVM_{kind.upper()}_DIR to a directory holding {' and '.join(names)} "
                f"or the {kind} source tree")
        t.extractall(dl, filter="data")
    return _build(os.path.join(dl, os.path.dirname(srcs[0])), names, say)


def reference_cli(kind, given=None, say=say):
    """The directory holding LIBLINEAR's train/predict (kind "liblinear") or LIBSVM's svm-train/svm-predict
    ("libsvm"): `given`, $LLSVM_<KIND>_DIR or $<KIND>_DIR as binaries or as sources to build, else the sdist."""
    names, main_src = PACKAGES[kind][2], PACKAGES[kind][3]
    d = given or os.environ.get(f"LLSVM_{kind.upper()}_DIR") or os.environ.get(f"{kind.upper()}_DIR")
    if d:
        if _has_binaries(d, names):
            return d
        if os.path.exists(os.path.join(d, main_src)):
            return _build(d, names, say)
        raise FileNotFoundError(f"{d} holds neither {' and '.join(names)} nor {main_src}")
    return _from_sdist(kind, say)


# -- data -----------------------------------------------------------------------------------------------------------
def data_file(name, shared_dir, tmp, data_dir):
    """(train path, test path or None) of a public set (decompressed into tmp) or a generated stand-in (made under
    data_dir once); None when absent."""
    if name in GENERATED:
        import gen_data
        kind, seed, rows, test_rows, opts = GENERATED[name]
        path = os.path.join(data_dir, name)
        if not (os.path.exists(path) and os.path.exists(path + ".t")):
            os.makedirs(data_dir, exist_ok=True)
            gen_data.generate(kind, path, rows=rows, seed=seed, test_out=path + ".t", test_rows=test_rows, **opts)
        return path, path + ".t"
    path = shared_file(shared_dir, name, tmp)
    if path is None:
        return None
    test = shared_file(shared_dir, TEST_FILES.get(name, name + ".t"), tmp)
    return path, test


# -- measuring ------------------------------------------------------------------------------------------------------
def _round_robin(commands, repeats):
    """Round-robin runs of commands {key: argv}: {key: (wall median, RSS max)}."""
    walls = {k: [] for k in commands}
    rss = {k: [] for k in commands}
    for _ in range(repeats):
        for key, argv in commands.items():
            w, r = run_measured(argv)
            walls[key].append(w)
            rss[key].append(r)
    return {k: (statistics.median(walls[k]), max(rss[k])) for k in walls}


def _row(kind, name, what, ours, ref, repeats, same):
    return {"kind": kind, "dataset": name, "command": what, "argv_llsvm": ours, "argv_ref": ref,
            "repeats": repeats, "identical": same}


def _found(names, shared_dir, tmp, data_dir, say):
    """(name, train path, test path or None) of each set that is there; the others are reported and skipped."""
    for name in names:
        found = data_file(name, shared_dir, tmp, data_dir)
        if found is None:
            if say:
                say(f"# cli: {name} not found ({FETCH_HINT}), skipped")
            continue
        yield name, *found


def _once(ours, ref, a, b):
    """Run both commands once (their outputs a and b are written for what follows); whether a and b are byte for
    byte the same file."""
    subprocess.run(ours, check=True, stdout=subprocess.DEVNULL)
    subprocess.run(ref, check=True, stdout=subprocess.DEVNULL)
    return filecmp.cmp(a, b, shallow=False)


def plan(shared_dir, tmp, data_dir, ll_dir, svm_dir, sets, bindir=None, say=say):
    """The rows to measure (commands of both sides, each run once here so that prediction has its models), and
    whether their models / outputs are identical."""
    rows = []
    train, predict = _bin("llsvm-train", bindir), _bin("llsvm-predict", bindir)
    ll_train, ll_predict = (os.path.join(ll_dir, n) for n in ("train", "predict"))
    for name, path, test in _found(sets["linear"], shared_dir, tmp, data_dir, say):
        for opts in LINEAR_OPTIONS:
            tag = f"{name}{''.join(opts)}"
            a, b = os.path.join(tmp, tag + ".llsvm.model"), os.path.join(tmp, tag + ".ll.model")
            ours, ref = [train, *opts, path, a], [ll_train, *opts, path, b]
            rows.append(_row("train", name, "train " + (" ".join(opts) or "(-s 1)"), ours, ref, 0,
                             _once(ours, ref, a, b)) | {"deterministic": opts in DETERMINISTIC})
        if name in sets["linear_predict"] and test:
            model = os.path.join(tmp, name + ".ll.model")
            a, b = os.path.join(tmp, name + ".llsvm.out"), os.path.join(tmp, name + ".ll.out")
            ours, ref = [predict, test, model, a], [ll_predict, test, model, b]
            rows.append(_row("predict", name, "predict (LIBLINEAR -s 1 model)", ours, ref, 0,
                             _once(ours, ref, a, b)) | {"deterministic": True})
    svm_train, svm_predict = (os.path.join(svm_dir, n) for n in ("svm-train", "svm-predict"))
    for name, path, test in _found(sets["smo"], shared_dir, tmp, data_dir, say):
        a, b = os.path.join(tmp, name + ".smo.model"), os.path.join(tmp, name + ".svm.model")
        ours, ref = [train, "-s", "smo", path, a], [svm_train, path, b]
        rows.append(_row("train", name, "svm-train (-s smo)", ours, ref, 0, _once(ours, ref, a, b))
                    | {"deterministic": True})
        if name in sets["kernel_predict"]:
            model = b
            with open(model) as f:
                n_sv = next(int(ln.split()[1]) for ln in f if ln.startswith("total_sv"))
            a, b = os.path.join(tmp, name + ".smo.out"), os.path.join(tmp, name + ".svm.out")
            ours, ref = [predict, test or path, model, a], [svm_predict, test or path, model, b]
            rows.append(_row("predict", name, f"svm-predict ({n_sv} SVs)", ours, ref, 0, _once(ours, ref, a, b))
                        | {"deterministic": True})
    return rows


def bench_cli(shared_dir, tmp, data_dir, repeats=REPEATS, hogs=None, liblinear_dir=None, libsvm_dir=None,
              sets=None, bindir=None, baseline=None, say=say):
    """Every row of `plan`, quiet and beside `hogs` CPU-bound processes (default: one per CPU), and the floor.
    baseline: a directory of other llsvm commands (another tree's, e.g. before a change) timed in the same rounds."""
    from bench_contention import Hogs, _cpus

    hogs = _cpus() if hogs is None else hogs
    sets = {"linear": LINEAR_SETS, "linear_predict": LINEAR_PREDICT_SETS, "smo": SMO_SETS,
            "kernel_predict": KERNEL_PREDICT_SETS, **(sets or {})}
    ll_dir = reference_cli("liblinear", liblinear_dir, say)
    svm_dir = reference_cli("libsvm", libsvm_dir, say)
    rows = plan(shared_dir, tmp, data_dir, ll_dir, svm_dir, sets, bindir, say)
    floor = [sys.executable, "-I", "-c", "import numpy"]
    result = {"liblinear_dir": ll_dir, "libsvm_dir": svm_dir, "llsvm_bin": bindir or _bin(""),
              "baseline": baseline, "hogs": hogs, "repeats": repeats, "rows": rows, "load": os.getloadavg()}
    for state in ("quiet", "busy"):
        ctx = Hogs(hogs) if state == "busy" else _Nothing()
        with ctx:
            result[f"floor_{state}"] = statistics.median(run_measured(floor)[0] for _ in range(repeats))
            # the peak RSS a command cannot be seen below: the launcher's own, inherited through fork and exec
            result["launcher_mb"] = run_measured(["true"])[1]
            for r in rows:
                commands = {"llsvm": r["argv_llsvm"], "ref": r["argv_ref"]}
                if baseline:
                    commands["base"] = [os.path.join(baseline, os.path.basename(r["argv_llsvm"][0])),
                                        *r["argv_llsvm"][1:]]
                m = _round_robin(commands, repeats)
                r[state] = q = {f"{k}_{what}": v for k, (s, mb) in m.items() for what, v in (("s", s), ("mb", mb))}
                q["ratio"] = q["llsvm_s"] / q["ref_s"]
                if baseline:
                    q["base_ratio"] = q["base_s"] / q["ref_s"]
                if state == "busy" and any(p.poll() is not None for p in ctx.procs):
                    raise RuntimeError("a CPU hog (yes > /dev/null) ended during the busy runs: is /dev/null a "
                                       "regular file on a full disk?")
                if say:
                    say(f"# cli {state} {r['dataset']} {r['command']}: llsvm {q['llsvm_s']:.3f} s "
                        f"{q['llsvm_mb']:.0f} MB, reference {q['ref_s']:.3f} s {q['ref_mb']:.0f} MB, ratio "
                        f"{q['ratio']:.2f}" + (f"; baseline {q['base_s']:.3f} s {q['base_mb']:.0f} MB, ratio "
                                               f"{q['base_ratio']:.2f}" if baseline else ""))
    for r in rows:
        q = r["quiet"]
        r["ok_wall"] = q["ratio"] <= 1.0
        r["ok_rss"] = q["llsvm_mb"] <= q["ref_mb"] + RSS_SLACK_MB
    return result


class _Nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def cli_markdown(result, md_header=md_header, md_row=md_row):
    lines = [f"llsvm: {result['llsvm_bin']}; reference CLIs: {result['liblinear_dir']}, {result['libsvm_dir']}; "
             f"medians of {result['repeats']} round-robin runs; busy = {result['hogs']} x `yes > /dev/null`; load "
             f"average at the start {', '.join(f'{v:.2f}' for v in result['load'])}. Floor (`python -I -c \"import "
             f"numpy\"`): quiet {result['floor_quiet']:.3f} s, busy {result['floor_busy']:.3f} s. Peak RSS is "
             f"ru_maxrss, which a command "
             f"inherits from the launcher that forks it: `true` measures {result['launcher_mb']:.0f} MB, so a "
             f"smaller peak shows as that." + (f" Baseline (before): {result['baseline']}, timed in the same rounds."
                                               if result.get("baseline") else ""), ""]
    base = bool(result.get("baseline"))
    lines += md_header(["set", "command", "llsvm s", "ref s", "ratio", "llsvm MB", "ref MB"]
                       + (["before s", "before ratio", "before MB"] if base else [])
                       + ["busy llsvm s", "busy ref s", "busy ratio"] + (["busy before ratio"] if base else [])
                       + ["model/output identical", f"targets (wall <= 1.0x, RSS <= ref + {RSS_SLACK_MB:.0f} MB)"])
    for r in result["rows"]:
        q, b = r["quiet"], r["busy"]
        same = "yes" if r["identical"] else ("no" + ("" if r["deterministic"] else " (rand() order)"))
        lines.append(md_row([r["dataset"], r["command"], f"{q['llsvm_s']:.3f}", f"{q['ref_s']:.3f}",
                             f"{q['ratio']:.2f}", f"{q['llsvm_mb']:.0f}", f"{q['ref_mb']:.0f}"]
                            + ([f"{q['base_s']:.3f}", f"{q['base_ratio']:.2f}", f"{q['base_mb']:.0f}"] if base else [])
                            + [f"{b['llsvm_s']:.3f}", f"{b['ref_s']:.3f}", f"{b['ratio']:.2f}"]
                            + ([f"{b['base_ratio']:.2f}"] if base else [])
                            + [same, f"{'✓' if r['ok_wall'] else '✗'} {'✓' if r['ok_rss'] else '✗'}"]))
    return "\n".join(lines)


if __name__ == "__main__":          # by hand: python scripts/bench_cli.py [REPEATS [BASELINE_BIN_DIR]]
    import json
    from benchutil import DATA_DIR, ROOT
    tmp = tempfile.mkdtemp(prefix="llsvm-cli-")
    try:
        res = bench_cli(DATA_DIR, tmp, os.path.join(ROOT, "data"), int(sys.argv[1]) if len(sys.argv) > 1 else 1,
                        baseline=sys.argv[2] if len(sys.argv) > 2 else None)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(json.dumps(res, default=float), file=sys.stderr)
    print(cli_markdown(res))
