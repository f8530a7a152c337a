"""scikit-learn's examples of its SVM estimators, run as they are and with llsvm's classes substituted (issue 45).

    python scripts/sklearn_examples.py DIR                          # every example in DIR that uses an SVM class
    python scripts/sklearn_examples.py DIR plot_iris_svc plot_svm_margin          # only these
    python scripts/sklearn_examples.py --git GITDIR [--ref REF] [--under examples/svm] [NAME ...]
    python scripts/sklearn_examples.py DIR --also OTHER/plot_logistic_path.py    # and one more file
    python scripts/sklearn_examples.py DIR --classes llsvm          # the run with llsvm's classes only

The examples are not in scikit-learn's wheel and none of their code is in this repository: DIR is a folder of them
(scikit-learn's examples/svm, e.g. extracted from its sdist: `tar xzf scikit_learn-1.9.1.tar.gz -C /tmp`, then
DIR=/tmp/scikit_learn-1.9.1/examples/svm; --also PATH adds a file from elsewhere), or --git reads them from a git
directory at REF (a bare clone of scikit-learn) into a temporary folder. An example is selected when its text names
LinearSVC, LinearSVR, SVC, NuSVC, SVR, NuSVR, OneClassSVM or "liblinear".

Each example runs twice, each run a Python of its own (a subprocess of this one, `--child`) started in an empty
temporary directory with MPLBACKEND=Agg (plt.show() shows nothing), DISPLAY unset, stdin closed, the network cut
(a name look-up or a connect raises OSError unless --network) and numpy's and random's global generators seeded
with 0 (examples that draw unseeded data draw the same rows in both runs):
  sklearn: as it is;
  llsvm:   with the import swapped: before the example runs, sklearn.svm.{LinearSVC, LinearSVR, SVC, NuSVC, SVR,
           NuSVR, OneClassSVM} are llsvm.sklearn's classes of the same name (so `from sklearn.svm import SVC` and
           `from sklearn import svm; svm.SVC` give llsvm's) and sklearn.linear_model.LogisticRegression builds
           llsvm's LogisticRegression when solver="liblinear", scikit-learn's otherwise (the other solvers are not
           llsvm's). scikit-learn's own modules keep their classes. The example's text is not changed.
An example's code runs as `python example.py` would run it (its folder first on sys.path, __name__ "__main__").

Compared between the two runs ("key numbers"):
  stdout: the lines the example prints, equal or not (the first differing pair shown);
  fits:   every fit of an SVM estimator in the example's process (GridSearchCV's too; not those run in joblib's
          worker processes), in order: the estimator's class and parameters, and on its training rows (the first
          MAX_ROWS) predict's and decision_function's values, support_, coef_, intercept_; and a fit that raised
          (a grid search with error_score=nan swallows it): its exception. Reported: the pairs compared, the share
          of equal predictions, the largest |difference| of the decision values (of the predictions for a
          regressor), how many pairs have the same support set, the pairs whose parameters differ (misaligned);
  figures: the open figures at each plt.show() and at the end: their titles, axis labels, texts and legend texts
          (equal or not), the largest difference of their lines' y values (relative to the line's range), the
          levels of contour plots, and the share of pixels that differ in the drawn canvas;
  warnings: the warnings shown (Python's filters show a repeated one once a place), by category and first line,
          when they differ.
An example runs unchanged when the run exits 0 and its stderr holds no traceback. The verdict: "same" when stdout,
the texts, the lines (to 1e-9 of their range) and every prediction are equal; "differs" otherwise (what differs
is listed); "FAILS" with the error when the swapped run fails and the original does not; "original fails" when
scikit-learn's own run fails (a missing module such as pandas, the network).

Written to --out (default bench-results/sklearn-examples/): per example and run, NAME.RUN.{stdout,stderr,json}
and the figures NAME.RUN.figN.png (their pixels in .npy); summary.tsv (one row per example). Printed: one block
per example. Needs matplotlib where the examples run (not a dependency of llsvm: `pip install matplotlib`, or a
folder of it on PYTHONPATH).
"""
import argparse
import contextlib
import functools
import importlib.util
import inspect
import json
import os
import pathlib
import re
import resource
import subprocess
import sys
import tempfile
import threading
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = pathlib.Path(HERE).parent
sys.path.insert(0, HERE)
from children import wait_within  # noqa: E402
SUBSTITUTED = ("LinearSVC", "LinearSVR", "SVC", "NuSVC", "SVR", "NuSVR", "OneClassSVM")
SELECT = re.compile(r"\b(%s)\b|liblinear" % "|".join(SUBSTITUTED))
RUNS = ("sklearn", "llsvm")
MAX_ROWS = 5000           # training rows a fit is fingerprinted on
MAX_FITS = 5000           # fits fingerprinted per run
CPU_BOUND = 3600.0        # CPU seconds of a run (its own process) before it is taken for a hang
STALL = 900.0             # seconds without CPU time: a run waiting for joblib's workers ticks rarely


# == the child: one example, one run =============================================================================

class _Recorder:
    """The fits, constructions, figures and warnings of one run."""

    def __init__(self):
        self.fits, self.constructed, self.figures, self.warnings = [], {}, {}, []
        self.local, self.lock = threading.local(), threading.Lock()


def _plain(value):
    """A JSON value of an array-like (lists of numbers), None when it has none."""
    import numpy as np
    import scipy.sparse as sp
    if value is None:
        return None
    if sp.issparse(value):
        value = value.toarray()
    a = np.asarray(value)
    if a.dtype.kind in "biuf":
        return a.astype(float).tolist()
    return a.astype(str).tolist()


def _fingerprint(est, X):
    """What a fitted estimator gives on its training rows X (the first MAX_ROWS)."""
    from sklearn.utils import _safe_indexing
    n = X.shape[0] if hasattr(X, "shape") else len(X)
    if n > MAX_ROWS:
        X = _safe_indexing(X, list(range(MAX_ROWS)))
    out = {}
    for name in ("predict", "decision_function"):
        if hasattr(est, name):
            try:
                out[name] = _plain(getattr(est, name)(X))
            except Exception as exc:
                out[name + "_error"] = _first_line(exc)
    for name in ("classes_", "support_", "n_support_", "coef_", "intercept_"):
        try:
            out[name] = _plain(getattr(est, name))
        except Exception:       # coef_ of a non-linear kernel, support_ of LinearSVC: not there
            pass
    return out


def _first_line(exc):
    """"Type: the first non-empty line of the message"."""
    lines = [line for line in str(exc).splitlines() if line.strip()]
    return f"{type(exc).__name__}: {lines[0].strip() if lines else ''}"


def _params(est):
    """The parameters' reprs (an object's address left out: RandomState(MT19937) at 0x...)."""
    try:
        return {k: re.sub(r" at 0x[0-9a-fA-F]+", "", repr(v)) for k, v in est.get_params(deep=False).items()}
    except Exception:
        return {}


def _wrap_fit(cls, rec):
    """cls.fit noting each outermost fit of an estimator of exactly cls (what it gives, or its exception)."""
    fit = cls.fit
    fit = getattr(fit, "__wrapped__", fit) if getattr(fit, "_examples_recorder", False) else fit

    @functools.wraps(fit)
    def recorded(self, *args, **kwargs):
        depth = getattr(rec.local, "depth", 0)
        mine = depth == 0 and type(self) is cls and len(rec.fits) < MAX_FITS
        rec.local.depth = depth + 1
        try:
            result = fit(self, *args, **kwargs)
        except Exception as exc:
            if mine:
                with rec.lock:
                    rec.fits.append({"class": cls.__name__, "module": cls.__module__, "params": _params(self),
                                     "fit_error": _first_line(exc)})
            raise
        finally:
            rec.local.depth = depth
        if mine:
            X = args[0] if args else kwargs.get("X")
            entry = {"class": cls.__name__, "module": cls.__module__, "params": _params(self)}
            rec.local.depth = depth + 1         # predict may fit nothing, but is not a fit of the example's
            try:
                entry.update(_fingerprint(self, X))
            except Exception as exc:            # never the example's failure
                entry["fingerprint_error"] = _first_line(exc)
            finally:
                rec.local.depth = depth
            with rec.lock:
                rec.fits.append(entry)
        return result
    recorded._examples_recorder = True
    cls.fit = recorded


def _wrap_init(cls, rec):
    """cls.__init__ counting the estimators of exactly cls constructed (its signature kept: __wrapped__)."""
    init = cls.__dict__.get("__init__", cls.__init__)

    @functools.wraps(init)
    def __init__(self, *args, **kwargs):
        if type(self) is cls:
            with rec.lock:
                rec.constructed[cls.__name__] = rec.constructed.get(cls.__name__, 0) + 1
        init(self, *args, **kwargs)
    cls.__init__ = __init__


def _logistic_switch(ours, theirs):
    """sklearn.linear_model.LogisticRegression's stand-in: llsvm's class for solver="liblinear", scikit-learn's
    for the others (isinstance holds for both)."""
    signature = inspect.signature(theirs)
    default = signature.parameters["solver"].default

    class Switch(type):
        def __instancecheck__(cls, obj):
            return isinstance(obj, (ours, theirs))

        def __subclasscheck__(cls, sub):
            return issubclass(sub, (ours, theirs))

    class LogisticRegression(metaclass=Switch):
        __doc__ = theirs.__doc__

        def __new__(cls, *args, **kwargs):
            solver = signature.bind_partial(*args, **kwargs).arguments.get("solver", default)
            return (ours if solver == "liblinear" else theirs)(*args, **kwargs)
    return LogisticRegression


def _install(run, rec):
    """The run's classes fingerprinted; for the llsvm run, scikit-learn's public names swapped to llsvm's."""
    import sklearn.linear_model
    import sklearn.svm
    originals = {name: getattr(sklearn.svm, name) for name in SUBSTITUTED}
    originals["LogisticRegression"] = sklearn.linear_model.LogisticRegression
    if run == "sklearn":
        classes = originals
    else:
        import llsvm.sklearn as ours
        classes = {name: getattr(ours, name) for name in originals}
        for name in SUBSTITUTED:
            setattr(sklearn.svm, name, classes[name])
        sklearn.linear_model.LogisticRegression = _logistic_switch(classes["LogisticRegression"],
                                                                    originals["LogisticRegression"])
    for cls in classes.values():
        _wrap_fit(cls, rec)
        _wrap_init(cls, rec)
    if run == "llsvm":      # the switch's other class: its fits are in the sklearn run's sequence too
        _wrap_fit(originals["LogisticRegression"], rec)
    return {id(cls): f"{cls.__module__}.{cls.__name__}" for cls in originals.values()} if run == "llsvm" else {}


def _snapshot(rec, figdir, stem):
    """The open figures' texts, lines, contour levels and pixels (figure number -> entry; a PNG each)."""
    import matplotlib.pyplot as plt
    import numpy as np
    from matplotlib.contour import ContourSet
    for num in plt.get_fignums():
        fig = plt.figure(num)
        try:
            fig.canvas.draw()
            pixels = np.asarray(fig.canvas.buffer_rgba()).copy()
        except Exception as exc:
            rec.figures[str(num)] = {"error": _first_line(exc)}
            continue
        png = os.path.join(figdir, f"{stem}.fig{num}.png")
        plt.imsave(png, pixels)
        np.save(png[:-4] + ".npy", pixels)
        texts = [t.get_text() for t in fig.texts]
        if getattr(fig, "_suptitle", None) is not None:
            texts.append(fig._suptitle.get_text())
        lines, levels = [], []
        for ax in fig.axes:
            texts += [t.get_text() for t in (ax.title, ax._left_title, ax._right_title, ax.xaxis.label,
                                             ax.yaxis.label, *ax.texts)]
            legend = ax.get_legend()
            if legend is not None:
                texts += [t.get_text() for t in legend.get_texts()]
            for line in ax.lines:
                try:
                    lines.append(np.asarray(line.get_ydata(), dtype=float).tolist())
                except (TypeError, ValueError):
                    pass
            levels += [np.asarray(c.levels, dtype=float).tolist() for c in ax.get_children()
                       if isinstance(c, ContourSet)]
        rec.figures[str(num)] = {"texts": [t for t in texts if t], "lines": lines, "levels": levels,
                                 "png": os.path.basename(png)}


def _cut_network():
    import socket

    def cut(*args, **kwargs):
        raise OSError("the network is cut by scripts/sklearn_examples.py (--network lets it through)")
    socket.socket.connect = socket.socket.connect_ex = cut
    socket.getaddrinfo = socket.create_connection = cut


def child(run, example, out_json, figdir, network):
    """Runs `example` (a path) as `python example.py` would, with the run's classes; writes what it recorded."""
    import random
    import types
    import warnings

    import numpy as np
    rec = _Recorder()
    stem = pathlib.Path(out_json).name[:-len(".json")]
    if not network:
        _cut_network()
    # as `python example.py`: its folder first on sys.path, not this one's
    sys.path[:] = [os.path.dirname(os.path.abspath(example))] + [p for p in sys.path if p != HERE]
    import matplotlib
    import matplotlib.pyplot as plt
    originals = _install(run, rec)
    show = plt.show

    def snapshot_show(*args, **kwargs):
        _snapshot(rec, figdir, stem)
        return show(*args, **kwargs)
    plt.show = snapshot_show
    shown = warnings.showwarning

    def showwarning(message, category, filename, lineno, file=None, line=None):
        rec.warnings.append(f"{category.__name__}: {str(message).splitlines()[0] if str(message) else ''}")
        return shown(message, category, filename, lineno, file, line)
    warnings.showwarning = showwarning
    np.random.seed(0)
    random.seed(0)
    module = types.ModuleType("__main__")
    module.__file__ = os.path.abspath(example)
    module.__builtins__ = __builtins__
    main, sys.modules["__main__"] = sys.modules["__main__"], module
    sys.argv = [example]
    error = None
    try:
        with open(example, encoding="utf-8") as f:
            code = compile(f.read(), module.__file__, "exec")
        exec(code, module.__dict__)
    except SystemExit as exc:
        if exc.code not in (None, 0):
            error = f"SystemExit: {exc.code}"
    except BaseException as exc:
        traceback.print_exc()
        error = _first_line(exc)
    finally:
        sys.modules["__main__"] = main
    try:
        _snapshot(rec, figdir, stem)
    except Exception:
        traceback.print_exc()
    unsubstituted = sorted(f"{name} is {originals[id(v)]}" for name, v in list(vars(module).items())
                           if isinstance(v, type) and id(v) in originals)
    data = {"run": run, "example": example, "error": error, "fits": rec.fits, "constructed": rec.constructed,
            "figures": rec.figures, "warnings": rec.warnings, "unsubstituted": unsubstituted,
            "matplotlib": matplotlib.__version__}
    tmp = f"{out_json}.{os.getpid()}.tmp"
    with open(tmp, "w") as f:
        json.dump(data, f)
    os.replace(tmp, out_json)
    sys.stdout.flush()
    return 1 if error else 0


# == the parent: the runs and their comparison ===================================================================

class HarnessError(Exception):
    """A run that did not produce its record (killed, hung)."""


def examples_of(folder, names, also=()):
    """The selected example paths of a folder (names: stems or file names; default: every *.py whose text names an
    SVM class), and the paths `also`."""
    folder = pathlib.Path(folder)
    out = [p for p in sorted(folder.glob("*.py")) if SELECT.search(p.read_text(encoding="utf-8"))]
    if names:
        out = []
        for name in names:
            for candidate in (folder / name, folder / f"{name}.py"):
                if candidate.is_file():
                    out.append(candidate)
                    break
            else:
                raise HarnessError(f"{name}: no such example in {folder}")
    for path in also:
        if not pathlib.Path(path).is_file():
            raise HarnessError(f"{path}: no such file")
        out.append(pathlib.Path(path))
    return out


def from_git(git_dir, ref, under, dest):
    """The *.py files of `under` at `ref` of a git directory, written into dest; dest."""
    def git(*args):
        r = subprocess.run(["git", "--git-dir", git_dir, *args], capture_output=True, check=False)
        if r.returncode:
            raise HarnessError(f"git {' '.join(args)}: {r.stderr.decode(errors='replace').strip()}")
        return r.stdout
    for path in git("ls-tree", "--name-only", f"{ref}:{under}").decode().split("\n"):
        if path.endswith(".py"):
            (pathlib.Path(dest) / path).write_bytes(git("show", f"{ref}:{under}/{path}"))
    return dest


def run_one(example, run, out_dir, network, cpu=CPU_BOUND):
    """One run of an example in a subprocess: {"rc", "wall", "cpu", "stdout", "stderr", "record"}."""
    stem = f"{example.stem}.{run}"
    paths = {k: out_dir / f"{stem}.{k}" for k in ("stdout", "stderr", "json")}
    for p in list(paths.values()) + list(out_dir.glob(f"{stem}.fig*")):
        p.unlink(missing_ok=True)
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    env.update(MPLBACKEND="Agg", PYTHONDONTWRITEBYTECODE="1",
               PYTHONPATH=os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH")) if p))
    cmd = [sys.executable, os.path.abspath(__file__), "--child", run, str(example.resolve()), str(paths["json"]),
           str(out_dir)] + (["--network"] if network else [])
    with tempfile.TemporaryDirectory(prefix="llsvm-example-") as cwd, \
            open(paths["stdout"], "w") as out, open(paths["stderr"], "w") as err:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.monotonic()
        p = subprocess.Popen(cmd, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                             start_new_session=True)
        try:
            rc = wait_within(p, cpu, f"finishing {example.name}", stall=STALL)
        except AssertionError as exc:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(p.pid, 9)             # its joblib workers too (its own session)
            raise HarnessError(f"{example.name} ({run}): {exc}") from None
        wall = time.monotonic() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    record = json.loads(paths["json"].read_text()) if paths["json"].is_file() else None
    return {"rc": rc, "wall": wall, "stdout": paths["stdout"].read_text(errors="replace"),
            "cpu": (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime),
            "stderr": paths["stderr"].read_text(errors="replace"), "record": record}


def outcome(result):
    """(ran unchanged, the error or "")."""
    rec = result["record"]
    error = rec["error"] if rec else None
    if result["rc"] == 0 and "Traceback (most recent call last)" not in result["stderr"] and not error:
        return True, ""
    if not error:
        tb = result["stderr"].strip().splitlines()
        error = tb[-1] if tb else f"exit {result['rc']}"
    return False, error


def _max_abs(a, b):
    import numpy as np
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.shape != b.shape:
        return float("inf")
    return float(np.max(np.abs(a - b))) if a.size else 0.0


def compare_fits(ours, theirs):
    """The fits' comparison: a dict of counts and worst differences."""
    import numpy as np
    out = {"fits": (len(ours), len(theirs)), "compared": 0, "agree": 0, "rows": 0, "max_decision": None,
           "max_prediction": 0.0, "support_same": 0, "support_compared": 0, "misaligned": 0, "fit_errors": [],
           "errors": []}
    for a, b in zip(ours, theirs):
        if "fit_error" in a:
            out["fit_errors"].append(f"{a['class']}: {a['fit_error']}")
            continue
        if "fit_error" in b:
            continue
        out["compared"] += 1
        shared = set(a["params"]) & set(b["params"])
        if a["class"] != b["class"] or any(a["params"][k] != b["params"][k] for k in shared):
            out["misaligned"] += 1
        for name in ("predict_error", "decision_function_error"):
            if name in a and name not in b:
                out["errors"].append(f"{a['class']}.{name[:-6]}: {a[name]}")
        for run, entry in (("llsvm", a), ("sklearn", b)):
            if "fingerprint_error" in entry:
                out["errors"].append(f"(the harness) {run}'s {entry['class']} not fingerprinted: "
                                     f"{entry['fingerprint_error']}")
        if "predict" in a and "predict" in b:
            pa, pb = np.asarray(a["predict"]), np.asarray(b["predict"])
            if pa.shape == pb.shape:
                out["rows"] += pa.size
                if pa.dtype.kind == "f" and pb.dtype.kind == "f" and not a.get("classes_") \
                        and not b.get("classes_"):     # a regressor's values
                    out["max_prediction"] = max(out["max_prediction"], _max_abs(pa, pb))
                    out["agree"] += int(np.sum(np.isclose(pa, pb, rtol=1e-6, atol=1e-9)))
                else:
                    out["agree"] += int(np.sum(pa == pb))
        if "decision_function" in a and "decision_function" in b:
            out["max_decision"] = max(out["max_decision"] or 0.0, _max_abs(a["decision_function"],
                                                                           b["decision_function"]))
        if "support_" in a and "support_" in b:
            out["support_compared"] += 1
            out["support_same"] += set(a["support_"]) == set(b["support_"])
    return out


def compare_figures(ours, theirs, out_dir, stem_ours, stem_theirs):
    """The figures' comparison: texts that differ, the largest relative line difference, levels, pixels."""
    import numpy as np
    out = {"figures": (len(ours), len(theirs)), "texts": [], "max_line": 0.0, "levels_differ": 0, "pixels": []}
    for num in sorted(set(ours) & set(theirs), key=int):
        a, b = ours[num], theirs[num]
        if "error" in a or "error" in b:
            out["texts"].append(f"figure {num}: {a.get('error') or b.get('error')}")
            continue
        if a["texts"] != b["texts"]:
            diff = [f"{x!r} vs {y!r}" for x, y in zip(a["texts"], b["texts"]) if x != y]
            out["texts"].append(f"figure {num}: " + ("; ".join(diff) or f"{len(a['texts'])} vs {len(b['texts'])}"
                                                     " texts"))
        for la, lb in zip(a["lines"], b["lines"]):
            la, lb = np.asarray(la, dtype=float), np.asarray(lb, dtype=float)
            if la.shape != lb.shape:
                out["max_line"] = float("inf")
                continue
            finite = np.isfinite(la) & np.isfinite(lb)
            if not finite.any():
                continue
            span = max(float(np.ptp(lb[finite])), float(np.max(np.abs(lb[finite]))), 1e-300)
            out["max_line"] = max(out["max_line"], float(np.max(np.abs(la[finite] - lb[finite]))) / span)
        out["levels_differ"] += sum(1 for x, y in zip(a["levels"], b["levels"]) if _max_abs(x, y) > 1e-9 * max(
            1.0, float(np.max(np.abs(y))) if len(y) else 1.0))
        pa = np.load(out_dir / f"{stem_ours}.fig{num}.npy")
        pb = np.load(out_dir / f"{stem_theirs}.fig{num}.npy")
        out["pixels"].append(float(np.mean(np.any(pa != pb, axis=-1))) if pa.shape == pb.shape else 1.0)
    return out


def _warnings_diff(ours, theirs):
    from collections import Counter
    a, b = Counter(ours), Counter(theirs)
    more = [f"+{n} {w}" for w, n in sorted((a - b).items())]
    fewer = [f"-{n} {w}" for w, n in sorted((b - a).items())]
    return more + fewer


def _first_diff(a, b):
    la, lb = a.splitlines(), b.splitlines()
    for i, (x, y) in enumerate(zip(la, lb)):
        if x != y:
            return f"line {i + 1}: {y!r} -> {x!r}"
    return f"{len(lb)} lines -> {len(la)} lines"


def compare(example, results, out_dir):
    """The report of one example: (printed lines, a summary.tsv row)."""
    name = example.name
    status = {}
    for run, result in results.items():
        ok, error = outcome(result)
        status[run] = ("runs" if ok else "fails") + f" ({result['wall']:.1f} s wall, {result['cpu']:.1f} s CPU)"
        if error:
            status[run] += f": {error}"
    lines = [f"{name}"] + [f"  {run}: {status[run]}" for run in results]
    row = {"example": name, **{run: status[run] for run in RUNS if run in status}}
    if len(results) < 2:
        row["verdict"] = "runs" if outcome(results[next(iter(results))])[0] else "FAILS"
        return lines, row
    ours_ok, ours_error = outcome(results["llsvm"])
    theirs_ok, _ = outcome(results["sklearn"])
    a, b = results["llsvm"]["record"] or {}, results["sklearn"]["record"] or {}
    differs = []
    if results["llsvm"]["stdout"] == results["sklearn"]["stdout"]:
        stdout = "same" if results["sklearn"]["stdout"].strip() else "none printed"
    else:
        stdout = "differs, " + _first_diff(results["llsvm"]["stdout"], results["sklearn"]["stdout"])
        differs.append("stdout")
    fits = compare_fits(a.get("fits", []), b.get("fits", []))
    built = ", ".join(f"{k} {v}" for k, v in sorted(a.get("constructed", {}).items())) or "none"
    fit_line = f"fits {fits['fits'][0]} vs {fits['fits'][1]}, compared {fits['compared']}"
    if fits["rows"]:
        fit_line += f": predictions equal {fits['agree']}/{fits['rows']}"
        if fits["agree"] != fits["rows"]:
            differs.append("predictions")
    if fits["max_decision"] is not None:
        fit_line += f", max |decision difference| {fits['max_decision']:.3g}"
    if fits["max_prediction"]:
        fit_line += f", max |prediction difference| {fits['max_prediction']:.3g}"
    if fits["support_compared"]:
        fit_line += f", same support set {fits['support_same']}/{fits['support_compared']}"
    if fits["misaligned"]:
        fit_line += f", {fits['misaligned']} pairs with different parameters (misaligned)"
    if fits["fits"][0] != fits["fits"][1]:
        differs.append("number of fits")
    lines.append(f"  stdout: {stdout}")
    lines.append(f"  llsvm estimators constructed: {built}; {fit_line}")
    for e in sorted(set(fits["fit_errors"])):
        lines.append(f"  llsvm fit raised: {e} (x{fits['fit_errors'].count(e)})")
    for e in sorted(set(fits["errors"])):
        lines.append(f"  llsvm: {e}")
    figs = compare_figures(a.get("figures", {}), b.get("figures", {}), out_dir, f"{example.stem}.llsvm",
                           f"{example.stem}.sklearn")
    if figs["figures"] != (0, 0):
        fig_line = f"  figures {figs['figures'][0]} vs {figs['figures'][1]}: texts " + \
            ("same" if not figs["texts"] else "differ")
        if figs["max_line"]:
            fig_line += f", lines max relative difference {figs['max_line']:.3g}"
        if figs["levels_differ"]:
            fig_line += f", contour levels differ in {figs['levels_differ']}"
        if figs["pixels"]:
            fig_line += ", pixels differing " + ", ".join(f"{100 * p:.2f}%" for p in figs["pixels"])
        lines.append(fig_line)
        lines += [f"    {t}" for t in figs["texts"]]
        if figs["texts"]:
            differs.append("figure texts")
        if figs["max_line"] > 1e-9 or figs["levels_differ"]:
            differs.append("figure lines")
    warned = _warnings_diff(a.get("warnings", []), b.get("warnings", []))
    if warned:
        lines.append("  warnings (llsvm vs sklearn): " + "; ".join(warned))
    if a.get("unsubstituted"):
        lines.append("  not substituted: " + ", ".join(a["unsubstituted"]))
    if not theirs_ok:
        verdict = "original fails"
    elif not ours_ok:
        verdict = f"FAILS: {ours_error}"
    elif differs:
        verdict = "differs: " + ", ".join(differs)
    else:
        verdict = "same"
    lines.append(f"  verdict: {verdict}")
    row.update(verdict=verdict, stdout=stdout, fits=fit_line, figures=fig_line.strip() if figs["figures"] != (0, 0)
               else "", warnings="; ".join(warned))
    return lines, row


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("folder", nargs="?", help="a folder of scikit-learn's examples (examples/svm)")
    ap.add_argument("names", nargs="*", help="only these examples (stems, file names or paths)")
    ap.add_argument("--also", action="append", default=[], metavar="PATH",
                    help="one more example file, from anywhere (repeatable)")
    ap.add_argument("--git", help="a git directory of scikit-learn (read at --ref, under --under) instead of FOLDER")
    ap.add_argument("--ref", default="HEAD")
    ap.add_argument("--under", default="examples/svm")
    ap.add_argument("--classes", choices=("both",) + RUNS, default="both",
                    help="the runs: both (default), sklearn (as it is) or llsvm (the import swapped)")
    ap.add_argument("--out", default=str(REPO / "bench-results" / "sklearn-examples"), help="the results' directory")
    ap.add_argument("--network", action="store_true", help="let the examples reach the network")
    ap.add_argument("--cpu", type=float, default=CPU_BOUND, help="CPU seconds of a run before it is killed")
    args = ap.parse_args(argv)
    if args.git and args.folder:
        args.names.insert(0, args.folder)
        args.folder = None
    if not args.git and not args.folder:
        ap.error("a folder of examples or --git GITDIR is needed")
    if importlib.util.find_spec("matplotlib") is None:
        print("ERROR: matplotlib is not importable: the examples plot (pip install matplotlib, or put a folder "
              "holding it on PYTHONPATH)", file=sys.stderr)
        return 1
    out_dir = pathlib.Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    runs = RUNS if args.classes == "both" else (args.classes,)
    rows = []
    with tempfile.TemporaryDirectory(prefix="llsvm-examples-") as tmp:
        try:
            folder = from_git(args.git, args.ref, args.under, tmp) if args.git else args.folder
            examples = examples_of(folder, args.names, args.also)
            if not examples:
                raise HarnessError(f"no example in {folder} names an SVM class")
            for example in examples:
                try:
                    results = {run: run_one(example, run, out_dir, args.network, args.cpu) for run in runs}
                except HarnessError as exc:     # a run killed: the example's row says so, the others go on
                    lines, row = [f"{example.name}", f"  killed: {exc}"], {"example": example.name,
                                                                           "verdict": f"killed: {exc}"}
                else:
                    lines, row = compare(example, results, out_dir)
                print("\n".join(lines), flush=True)
                rows.append(row)
        except HarnessError as exc:
            print(f"ERROR: {exc}", file=sys.stderr)
            return 1
    columns = ["example", *runs, "verdict", "stdout", "fits", "figures", "warnings"]
    tmp = out_dir / f"summary.tsv.{os.getpid()}.tmp"
    with open(tmp, "w") as f:
        f.write("\t".join(columns) + "\n")
        f.writelines("\t".join(str(r.get(c, "")).replace("\t", " ") for c in columns) + "\n" for r in rows)
    os.replace(tmp, out_dir / "summary.tsv")
    print(f"\n{'example':40s} verdict")
    for r in rows:
        print(f"{r['example']:40s} {r['verdict']}")
    print(f"results: {out_dir}")
    return 0


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        sys.exit(child(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5], "--network" in sys.argv[6:]))
    sys.exit(main())
