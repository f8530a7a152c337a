"""scikit-learn's own tests of its SVM estimators, run with llsvm's classes substituted (issue 45, "the measure").

    python scripts/sklearn_upstream.py                    # both runs: the figures, the failures by cause
    python scripts/sklearn_upstream.py --classes llsvm    # llsvm's classes only (tests/test_sklearn_upstream.py)
    python scripts/sklearn_upstream.py --check            # exit 1 when a touched test fails unlisted, a listed passes
    python scripts/sklearn_upstream.py --write-known      # rewrite the known failures from this run
    python scripts/sklearn_upstream.py -- -k linearsvc    # more pytest arguments (--check then skips stale entries)

The tests are the ones scikit-learn's wheel ships (FILES): sklearn/svm/tests/test_svm.py, test_sparse.py,
test_bounds.py and the liblinear cases of sklearn/linear_model/tests/test_logistic.py (the rule:
tests/sklearn_upstream/plugin.py). Each run is a pytest of its own, in a subprocess started from a temporary
directory with an empty pytest.ini (-c) and site-packages as its rootdir, so that neither this repository's pytest
settings nor tests/conftest.py apply and scikit-learn's own conftest does; the plugin (-p sklearn_upstream.plugin,
tests/ on PYTHONPATH) substitutes llsvm.sklearn's classes for scikit-learn's (--classes llsvm) or nothing (--classes
sklearn, the same selection with scikit-learn's own classes), notes which tests touch an llsvm class (construct one)
and writes each test's outcome.

Printed: the touched tests passed / failed / errors with llsvm's classes, against how many of them pass with
scikit-learn's; the failing touched tests grouped by cause (the first line of the exception, numbers, lists and
estimator reprs elided; a regex mismatch by its actual message); the known-failure list's problems; the time of each
run (wall and CPU). Written to --out (default bench-results/sklearn-upstream/): llsvm.json and sklearn.json (the
plugin's, per test), llsvm.log and sklearn.log (pytest's output), summary.tsv (test, touched classes, outcome with
llsvm's, with scikit-learn's, listed reason, cause).

The known failures, KNOWN (tests/sklearn_upstream/known_failures.tsv): the touched tests that fail with llsvm's
classes, one a line, "test id<TAB>reason"; # starts a comment. tests/test_sklearn_upstream.py checks that every
touched test passes (or is skipped, or xfails, as scikit-learn marks it) or is listed, and that every listed test
is touched and fails. --write-known keeps the reason of a listed test that still fails, gives a newly failing one its
cause, and drops the ones that pass.
"""
import argparse
import importlib.metadata
import importlib.util
import json
import os
import pathlib
import re
import resource
import subprocess
import sys
import tempfile
import time
from collections import Counter

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from children import wait_within  # noqa: E402

REPO = pathlib.Path(__file__).resolve().parent.parent
TESTS = REPO / "tests"
KNOWN = TESTS / "sklearn_upstream" / "known_failures.tsv"
FILES = ("sklearn/svm/tests/test_svm.py", "sklearn/svm/tests/test_sparse.py", "sklearn/svm/tests/test_bounds.py",
         "sklearn/linear_model/tests/test_logistic.py")
OK = ("passed", "skipped", "xfail", "xpass")     # a touched test with one of these needs no entry
FAILING = ("failed", "error")
CPU_BOUND = 3600.0      # CPU seconds of a run before it is taken for a hang (one run uses about 35 on one core)
HEADER = """\
# scikit-learn's tests (scripts/sklearn_upstream.py) that touch an llsvm class and fail with llsvm's classes, with
# the reason: test id<TAB>reason. tests/test_sklearn_upstream.py fails when a touched test fails without an entry
# here, and when a listed test passes (remove its line) or no longer touches an llsvm class.
# `python scripts/sklearn_upstream.py --classes llsvm --write-known` rewrites the file from a run: the reasons of
# the tests still failing are kept, a newly failing test gets its cause as measured, passing tests are dropped.
"""


class HarnessError(Exception):
    """A run that did not produce its outcomes (pytest's usage or internal error, a hang, no output)."""


def site_packages():
    """The directory holding the sklearn package (the tests' ids are paths under it)."""
    spec = importlib.util.find_spec("sklearn")
    return pathlib.Path(spec.origin).resolve().parent.parent


def tests_missing():
    """Why scikit-learn's tests cannot be run (its installation ships without them), or None."""
    site = site_packages()
    missing = [f for f in FILES if not (site / f).is_file()]
    if not missing:
        return None
    return (f"scikit-learn {importlib.metadata.version('scikit-learn')} is installed without its tests "
            f"({', '.join(missing)} missing under {site})")


def run(classes, out_dir, extra=()):
    """One pytest run of FILES with `classes`' classes ("llsvm" or "sklearn"): the plugin's JSON as a dict, with
    "wall" and "cpu" (seconds) added. Its output goes to out_dir/CLASSES.log, its JSON to out_dir/CLASSES.json."""
    out_dir = pathlib.Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    out, log = out_dir / f"{classes}.json", out_dir / f"{classes}.log"
    if out.exists():
        out.unlink()
    site = site_packages()
    # scikit-learn's settings of its tests (SKLEARN_*: the seeds, float32, network) and the caller's pytest ones
    # (PYTEST_ADDOPTS, PYTEST_PLUGINS) left out: the selection and its ids are those of KNOWN
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SKLEARN_", "PYTEST_"))}
    env.update(PYTHONDONTWRITEBYTECODE="1",        # nothing written into site-packages
               PYTHONPATH=os.pathsep.join(p for p in (str(TESTS), str(REPO), os.environ.get("PYTHONPATH")) if p),
               SKLEARN_TESTS_GLOBAL_RANDOM_SEED="42")
    with tempfile.TemporaryDirectory(prefix="llsvm-upstream-") as cwd:
        ini = pathlib.Path(cwd) / "pytest.ini"
        ini.write_text("[pytest]\n")
        cmd = [sys.executable, "-m", "pytest", "-c", str(ini), "--rootdir", str(site), "-p", "no:cacheprovider",
               "-p", "sklearn_upstream.plugin", f"--llsvm-classes={classes}", f"--llsvm-upstream-out={out}",
               "-q", "--tb=short", *(str(site / f) for f in FILES), *extra]
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.monotonic()
        with open(log, "w") as f:
            p = subprocess.Popen(cmd, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=f, stderr=subprocess.STDOUT)
            try:
                rc = wait_within(p, CPU_BOUND, "finishing scikit-learn's tests")
            except AssertionError as exc:
                raise HarnessError(f"pytest with {classes}'s classes: {exc} (its output: {log})") from None
        wall = time.monotonic() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if rc not in (0, 1) or not out.is_file():
        raise HarnessError(f"pytest with {classes}'s classes exited {rc} without its outcomes (its output: {log})")
    with open(out) as f:
        result = json.load(f)
    result["wall"] = wall
    result["cpu"] = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return result


def cause(entry):
    """A failure's cause: the first line of its exception with numbers, [lists] and Estimator(reprs) elided; a
    regex mismatch (pytest.raises(match=)) by the message it got."""
    lines = (entry.get("detail") or entry.get("message") or "").splitlines()
    first = lines[0] if lines else ""
    if first.endswith("Regex pattern did not match."):
        actual = next((line.split(":", 1)[1].strip() for line in lines if line.strip().startswith("Actual message:")),
                      "")
        first = f"{first} Actual message: {actual}"
    first = re.sub(r"\[[^\[\]]*\]", "[...]", first)
    first = re.sub(r"\b([A-Z]\w*)\([^()]*\)", r"\1(...)", first)
    return re.sub(r"(?<![\w.'])[-+]?\d+(\.\d+)?(e[-+]?\d+)?(?![\w'])", "N", first)


def touched(result):
    """{id: entry} of the tests that touch an llsvm class."""
    return {k: v for k, v in result["tests"].items() if v["touched"]}


def load_known(path=KNOWN):
    """{test id: reason} of the known-failure file."""
    known = {}
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line.strip() or line.startswith("#"):
                continue
            tid, sep, reason = line.partition("\t")
            if not sep or not reason.strip():
                raise HarnessError(f"{path}:{n}: not 'test id<TAB>reason': {line!r}")
            if tid in known:
                raise HarnessError(f"{path}:{n}: {tid} listed twice")
            known[tid] = reason.strip()
    return known


def problems(result, known, complete=True):
    """What the suite fails on, one line each: collection errors, a substituted name left in a test module, a
    touched test failing without an entry, a listed test that does not fail or (complete: the run had every test)
    is not a touched test."""
    out = [f"collection error: {k}: {v}" for k, v in sorted(result["collection_errors"].items())]
    out += [f"not substituted: {u}" for u in result["unsubstituted"]]
    tests = result["tests"]
    for tid, entry in sorted(touched(result).items()):
        if entry["outcome"] in FAILING and tid not in known:
            out.append(f"fails, not listed: {tid}: {entry['message']}")
    for tid in sorted(known):
        entry = tests.get(tid)
        if entry is None or not entry["touched"]:
            if complete:
                out.append(f"listed, but {'not run' if entry is None else 'touches no llsvm class'}: {tid}")
        elif entry["outcome"] not in FAILING:
            out.append(f"listed, but {entry['outcome']} (remove its line): {tid}")
    return out


def write_known(result, known, path=KNOWN):
    """The known-failure file from a run: every failing touched test, its reason kept where it had one."""
    lines = [HEADER]
    for tid, entry in sorted(touched(result).items()):
        if entry["outcome"] in FAILING:
            lines.append(f"{tid}\t{known.get(tid) or cause(entry)}\n")
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "w") as f:
        f.writelines(lines)
    os.replace(tmp, path)


def summary(ours, theirs, known):
    """The printed report (a list of lines) and the rows of summary.tsv."""
    mine = touched(ours)
    count = Counter(v["outcome"] for v in mine.values())
    lines = [f"scikit-learn {ours['sklearn']}'s tests of its SVM estimators (test_svm, test_sparse, test_bounds, "
             f"test_logistic's liblinear cases): {len(ours['tests'])} selected ({ours['deselected']} of "
             f"test_logistic deselected), {len(mine)} touch an llsvm class",
             f"with llsvm's classes: {count['passed']} passed, {count['failed']} failed, {count['error']} errors"
             + "".join(f", {count[k]} {k}" for k in ("skipped", "xfail", "xpass") if count[k])
             + f" (of {len(mine)})  [{ours['wall']:.0f} s wall, {ours['cpu']:.0f} s CPU]"]
    if theirs is not None:
        their = Counter(theirs["tests"].get(t, {}).get("outcome", "not run") for t in mine)
        lines.append(f"with scikit-learn's classes: {their['passed']} of these {len(mine)} pass"
                     + "".join(f", {n} {k}" for k, n in sorted(their.items()) if k != "passed")
                     + f"  [{theirs['wall']:.0f} s wall, {theirs['cpu']:.0f} s CPU]")
    causes = Counter(cause(v) for v in mine.values() if v["outcome"] in FAILING)
    lines.append(f"failing touched tests by cause ({sum(causes.values())}):")
    lines += [f"  {n:4d}  {c}" for c, n in sorted(causes.items(), key=lambda kv: (-kv[1], kv[0]))]
    rows = [("test", "touched", "llsvm", "sklearn", "listed", "cause")]
    for tid, entry in sorted(ours["tests"].items()):
        rows.append((tid, ",".join(entry["touched"]), entry["outcome"],
                     theirs["tests"].get(tid, {}).get("outcome", "") if theirs is not None else "",
                     known.get(tid, ""), cause(entry) if entry["outcome"] in FAILING else ""))
    return lines, rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--classes", choices=("both", "llsvm", "sklearn"), default="both",
                    help="llsvm's substituted, scikit-learn's own, or both runs (default)")
    ap.add_argument("--out", default=str(REPO / "bench-results" / "sklearn-upstream"), help="the results' directory")
    ap.add_argument("--known", default=str(KNOWN), help="the known-failure file (default %(default)s)")
    ap.add_argument("--check", action="store_true", help="exit 1 when the known-failure list has a problem")
    ap.add_argument("--write-known", action="store_true", help="rewrite the known-failure file from this run")
    ap.add_argument("pytest_args", nargs="*", help="after --: more pytest arguments (-k EXPR, ...)")
    args = ap.parse_args(argv)
    missing = tests_missing()
    if missing:
        print(f"ERROR: {missing}", file=sys.stderr)
        return 1
    try:
        known = load_known(args.known) if os.path.exists(args.known) else {}
        ours = run("llsvm", args.out, args.pytest_args) if args.classes != "sklearn" else None
        theirs = run("sklearn", args.out, args.pytest_args) if args.classes != "llsvm" else None
    except HarnessError as exc:
        print(f"ERROR: {exc}", file=sys.stderr)
        return 1
    if ours is None:
        count = Counter(v["outcome"] for v in theirs["tests"].values())
        print(f"with scikit-learn's classes: {len(theirs['tests'])} tests: "
              + ", ".join(f"{n} {k}" for k, n in sorted(count.items()))
              + f"  [{theirs['wall']:.0f} s wall, {theirs['cpu']:.0f} s CPU]")
        return 0
    lines, rows = summary(ours, theirs, known)
    with open(os.path.join(args.out, "summary.tsv"), "w") as f:
        f.writelines("\t".join(r) + "\n" for r in rows)
    found = problems(ours, known, complete=not args.pytest_args)
    lines.append(f"known failures ({args.known}): {len(known)} listed, "
                 + (f"{len(found)} problems:" if found else "no problems"))
    lines += [f"  {p}" for p in found]
    print("\n".join(lines))
    print(f"results: {args.out}")
    if args.write_known:
        if args.pytest_args:
            print("ERROR: --write-known needs the whole selection (no pytest arguments)", file=sys.stderr)
            return 2
        write_known(ours, known, args.known)
        print(f"written: {args.known}")
    return 1 if args.check and found else 0


if __name__ == "__main__":
    sys.exit(main())
