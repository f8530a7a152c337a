"""Part `startup` of `make bench` (issue 26): what a command costs before it does anything.

On heart_scale (270 rows: the run itself is a millisecond, so the wall is start-up), the wall time of
  - `llsvm-train -q heart_scale MODEL`, `llsvm-predict heart_scale MODEL OUT`, `llsvm-convert --info heart_scale`
    and `llsvm-train --help`, each a subprocess of the installed console scripts;
  - LIBLINEAR's `train -q` and `predict` on the same file: the binaries of a LIBLINEAR built from its sources when
    --liblinear-dir (or LIBLINEAR_DIR) names their directory, else liblinear-official's Python module doing the
    same (read, train, save; read the model, predict, write) in a `python -c`, labelled as such;
  - the floor every Python command pays on this machine: `python -I -c pass`, `python -I -c "import numpy"` and
    `python -I -c "import numpy, click"`,
as medians of --startup-runs runs (default 20), taken round-robin (one run of each command in turn, so a drift of
the machine's speed during the part shifts every command alike). Before timing, the llsvm package is byte-compiled
(compileall), as a wheel install does: a checkout run with PYTHONDONTWRITEBYTECODE=1 would otherwise measure the
compiler. Target: `llsvm-train -q`, `llsvm-predict` and `llsvm-train --help` <= 0.15 s each.

It also lists the modules of llsvm.solvers that `llsvm-train -q -s S heart_scale` has imported when it ends, for
S = 1, 3, smo and llsvm (sys.modules after the command's main, in a `python -c`; `python -X importtime` does not
list a module imported by importlib.import_module, as the registry imports a driver): the registry keeps every
solver as data, so a run imports the driver it runs and nothing else (registry, common and their shared helpers
aside).
"""
import compileall
import os
import statistics
import subprocess
import sys

from benchutil import FETCH_HINT, say, shared_file, timed_command

TARGET_S = 0.15
# modules of llsvm.solvers a run may import besides its driver: the registry, the training layer (trainer, folds),
# what every driver shares, and -s 1's switch to Newton (LIBLINEAR's -s 1 falls back on -s 2's solver)
SHARED_MODULES = {"registry", "trainer", "folds", "common"}
EXPECTED = {"1": {"dcd", "newton"}, "3": {"dcd", "newton"}, "smo": {"smo", "ovo"},
            "llsvm": {"onepass", "outofcore"}}


def _bin(name):
    return os.path.join(os.path.dirname(sys.executable), name)


def liblinear_commands(liblinear_dir, data, tmp):
    """(label, train argv, predict argv) of LIBLINEAR on `data`."""
    model = os.path.join(tmp, "hs.liblinear.model")
    out = os.path.join(tmp, "hs.liblinear.out")
    if liblinear_dir:
        return ("LIBLINEAR 2.x CLI (" + liblinear_dir + ")",
                [os.path.join(liblinear_dir, "train"), "-q", data, model],
                [os.path.join(liblinear_dir, "predict"), data, model, out])
    train = ("from liblinear.liblinearutil import svm_read_problem, train, save_model; "
             f"y, x = svm_read_problem({data!r}); save_model({model!r}, train(y, x, '-q'))")
    predict = ("from liblinear.liblinearutil import svm_read_problem, load_model, predict; "
               f"y, x = svm_read_problem({data!r}); m = load_model({model!r}); "
               f"p, _, _ = predict(y, x, m, '-q'); open({out!r}, 'w').write(''.join(f'{{v:g}}\\n' for v in p))")
    return ("liblinear-official via python -c (no LIBLINEAR binaries given)",
            [sys.executable, "-c", train], [sys.executable, "-c", predict])


def solver_modules(data, solver, tmp):
    """The llsvm.solvers modules imported once `llsvm-train -q -s solver data` has run (its main, in-process)."""
    code = ("import sys\nsys.argv = ['llsvm-train'] + sys.argv[1:]\nfrom llsvm.cli.train import main\n"
            "try:\n    main()\nexcept SystemExit as e:\n    assert not e.code, e.code\n"
            "print(' '.join(m.split('.')[2] for m in sys.modules if m.startswith('llsvm.solvers.')))")
    p = subprocess.run([sys.executable, "-c", code, "-q", "-s", solver, data,
                        os.path.join(tmp, f"imports.{solver}.model")], capture_output=True, text=True, check=True)
    return sorted(p.stdout.split())


def bench_startup(shared_dir, tmp, runs=20, liblinear_dir=None, say=say):
    data = shared_file(shared_dir, "heart_scale", tmp)
    if data is None:
        raise FileNotFoundError(f"heart_scale.xz not in {shared_dir} ({FETCH_HINT})")
    import llsvm
    compileall.compile_dir(os.path.dirname(llsvm.__file__), quiet=1)
    model = os.path.join(tmp, "hs.model")
    subprocess.run([_bin("llsvm-train"), "-q", data, model], check=True)
    label, ll_train, ll_predict = liblinear_commands(liblinear_dir, data, tmp)
    subprocess.run(ll_train, check=True, stdout=subprocess.DEVNULL)
    py = sys.executable
    commands = {
        "llsvm-train -q heart_scale": [_bin("llsvm-train"), "-q", data, model],
        "llsvm-predict heart_scale": [_bin("llsvm-predict"), data, model, os.path.join(tmp, "hs.out")],
        "llsvm-convert --info heart_scale": [_bin("llsvm-convert"), "--info", data],
        "llsvm-train --help": [_bin("llsvm-train"), "--help"],
        "LIBLINEAR train -q": ll_train,
        "LIBLINEAR predict": ll_predict,
        "python -I -c pass": [py, "-I", "-c", "pass"],
        "python -I -c 'import numpy'": [py, "-I", "-c", "import numpy"],
        "python -I -c 'import numpy, click'": [py, "-I", "-c", "import numpy, click"],
    }
    times = {k: [] for k in commands}
    for argv in commands.values():          # one warm-up run each (page cache)
        timed_command(argv)
    for i in range(runs):
        for k, argv in commands.items():
            times[k].append(timed_command(argv))
    rows = []
    for k, ts in times.items():
        med = statistics.median(ts)
        target = TARGET_S if k in ("llsvm-train -q heart_scale", "llsvm-predict heart_scale",
                                   "llsvm-train --help") else None
        rows.append({"command": k, "median_s": med, "min_s": min(ts), "max_s": max(ts), "runs": runs,
                     "target_s": target, "ok": None if target is None else med <= target})
        if say:
            say(f"# startup {k}: median {med * 1000:.1f} ms (min {min(ts) * 1000:.1f})")
    imports = []
    for s in ("1", "3", "smo", "llsvm"):
        mods = solver_modules(data, s, tmp)
        extra = sorted(set(mods) - SHARED_MODULES - EXPECTED[s])
        imports.append({"solver": s, "modules": mods, "unexpected": extra, "ok": not extra})
        if say:
            say(f"# startup -s {s} imports llsvm.solvers.{{{', '.join(mods)}}}")
    return {"rows": rows, "imports": imports, "liblinear": label}


def startup_markdown(result, md_header, md_row):
    lines = [f"LIBLINEAR: {result['liblinear']}", ""] + md_header(["command", "median (ms)", "min (ms)", "max (ms)",
                                                                  "target"])
    for r in result["rows"]:
        target = "" if r["target_s"] is None else f"<= {r['target_s'] * 1000:.0f} ms {'✓' if r['ok'] else '✗'}"
        lines.append(md_row([r["command"], f"{r['median_s'] * 1000:.1f}", f"{r['min_s'] * 1000:.1f}",
                             f"{r['max_s'] * 1000:.1f}", target]))
    lines += [""] + md_header(["llsvm-train -s", "llsvm.solvers modules imported", "only its own"])
    for r in result["imports"]:
        lines.append(md_row([r["solver"], ", ".join(r["modules"]), "✓" if r["ok"] else f"✗ {r['unexpected']}"]))
    return "\n".join(lines)
