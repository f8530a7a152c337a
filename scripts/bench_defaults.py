"""Part `defaults` of `make bench` (issue 43): every solver type at the tools' defaults, as a user runs it.

Each cell is one training command of llsvm and the same command of the reference CLI on the same file, run end to
end (a subprocess each: start-up, reading, training and writing the model; benchutil.run_measured):
  - LIBLINEAR's twelve types: `llsvm-train -s N [-B 1] SET MODEL` against LIBLINEAR 2.50's `train -s N [-B 1] SET
    MODEL`, N = 0 1 2 3 4 5 6 7 11 12 13 21, with and without `-B 1`;
  - LIBSVM's five types: `llsvm-train -s smo|nu_svc|one_class|epsilon_svr|nu_svr [-b 1] SET MODEL` against LIBSVM
    3.37's `svm-train -s 0|1|2|3|4 [-b 1] SET MODEL` (C-SVC, nu-SVC, one-class, epsilon-SVR, nu-SVR; 3.37 takes
    `-b 1` for all five: one-class gets its density marks), with and without `-b 1`;
on every public set of data/sets.tsv (data/public, `make data`): the training files, a test half (NAME.t beside
NAME, reuters_moneyfx.tst) left out, so that news20.t and usps.t, which come alone, are in; and on a generated set
of 200 classes, one row each (`200-classes`: "i 1:i/100" for i < 200). Regression types and one-class train on the
labels as the references do.

Each cell: the median wall of --defaults-repeats runs taken round-robin (llsvm, reference, llsvm, ...), the ratio
llsvm / reference, whether the two model files are byte for byte the same (expected where both algorithms are
deterministic: LIBLINEAR's -s 0, 2, 11 and 21, LIBSVM's five types without -b 1 and one-class with it; the others
visit rows in rand() order in the references, in --seed order in llsvm, and -b 1 cuts rand() folds), and, where
the reference takes 0.5 s or more, ✓/✗ for the target ratio <= 1.5. A command is killed after --defaults-timeout
seconds (reported as a time-out); a command that exits with an error (a refused option, a crash) is reported with
its exit status and first line on stderr, both sides of a cell run whatever the other does. A cell whose first
round takes more than --defaults-long seconds is timed once; the `-b 1` cell of a LIBSVM type is skipped (and said
so) when the reference timed out on the same set without it. --defaults-sets and --defaults-solvers (e.g.
`0,2,smo`, or `liblinear` / `libsvm` for a family) select cells.

The reference CLIs come from bench_cli.reference_cli (--liblinear-dir / --libsvm-dir, $LLSVM_LIBLINEAR_DIR /
$LLSVM_LIBSVM_DIR): a family whose reference cannot be had is left out, and the part says why and what to set.
"""
import compileall
import filecmp
import os
import statistics
import sys

from bench_cli import TEST_FILES, _bin, reference_cli
from benchutil import CommandFailed, FETCH_HINT, md_header, md_row, run_measured, say, shared_file

LINEAR_TYPES = ("0", "1", "2", "3", "4", "5", "6", "7", "11", "12", "13", "21")
# llsvm-train -s NAME: svm-train -s N (LIBSVM's numbering)
LIBSVM_TYPES = {"smo": "0", "nu_svc": "1", "one_class": "2", "epsilon_svr": "3", "nu_svr": "4"}
FLAGS = {"liblinear": ("-B", "1"), "libsvm": ("-b", "1")}
DETERMINISTIC_LINEAR = {"0", "2", "11", "21"}
REPEATS = 3
TIMEOUT = 120.0
LONG = 30.0
TARGET = 1.5
LINE = 0.5           # the reference's seconds from which a cell is held to the target
GENERATED = {"200-classes": dict(rows=200, features=1, classes=200)}
REFERENCE_NAMES = {"liblinear": "LIBLINEAR's train", "libsvm": "LIBSVM's svm-train"}


def write_generated(name, path):
    """A generated set of this part, written to path: `200-classes` is 200 rows "i 1:i/100" (one per class)."""
    if name != "200-classes":
        raise KeyError(name)
    with open(path, "w") as f:
        f.write("".join("%d 1:%g\n" % (i, i / 100) for i in range(200)))
    return path


def family(solver):
    return "libsvm" if solver in LIBSVM_TYPES else "liblinear"


def solvers_selected(spec=None):
    """The -s values of the cells, LIBLINEAR's then LIBSVM's: all, or those of a comma list of values and the
    family names `liblinear` and `libsvm`."""
    every = LINEAR_TYPES + tuple(LIBSVM_TYPES)
    if not spec:
        return every
    want = set()
    for item in (x.strip() for x in spec.split(",") if x.strip()):
        if item in ("liblinear", "libsvm"):
            want.update(s for s in every if family(s) == item)
        elif item in every:
            want.add(item)
        else:
            raise ValueError(f"--defaults-solvers: unknown solver {item!r} (LIBLINEAR's {' '.join(LINEAR_TYPES)}, "
                             f"LIBSVM's {' '.join(LIBSVM_TYPES)}, or liblinear / libsvm)")
    return tuple(s for s in every if s in want)


def commands(solver, flagged, path, ours_model, ref_model, train, ref_dir):
    """(llsvm argv, reference argv) of one cell: `llsvm-train -s SOLVER [flag] path model` and the reference's
    command (`train -s N [-B 1]`, `svm-train -s N [-b 1]` in LIBSVM's numbering)."""
    fam = family(solver)
    flags = list(FLAGS[fam]) if flagged else []
    if fam == "libsvm":
        ref = [os.path.join(ref_dir, "svm-train"), "-s", LIBSVM_TYPES[solver], *flags, path, ref_model]
    else:
        ref = [os.path.join(ref_dir, "train"), "-s", solver, *flags, path, ref_model]
    return [train, "-s", solver, *flags, path, ours_model], ref


def deterministic(solver, flagged):
    """Whether both tools' models are expected to be the same file: no rand() in either reference's run."""
    if family(solver) == "libsvm":
        return not flagged or solver == "one_class"
    return solver in DETERMINISTIC_LINEAR


def public_sets(table):
    """The training sets among the rows of data/sets.tsv: NAME.t beside NAME and the test files of TEST_FILES left
    out (a test half that comes alone, as news20.t and usps.t, is in)."""
    names = [r["name"] for r in table]
    tests = set(TEST_FILES.values())
    return [n for n in names if n not in tests and not (n.endswith(".t") and n[:-2] in names)]


def _failure(e):
    """A side's record of a CommandFailed: time-out, or exit status and the first line it wrote on stderr."""
    if e.timed_out:
        return {"status": "timeout", "s": e.seconds}
    first = next((ln.strip() for ln in e.stderr.splitlines() if ln.strip()), "")
    return {"status": "failed", "rc": e.rc, "message": first[:200]}


def measure(ours, ref, repeats, timeout, long=LONG):
    """Round-robin runs of the two commands: {"llsvm": side, "ref": side}, a side {"status": "ok", "s": median,
    "runs": [...], "mb": largest peak RSS} or the failure of its first failing run (then it is not run again)."""
    sides = {"llsvm": {"status": "ok", "runs": [], "mbs": []}, "ref": {"status": "ok", "runs": [], "mbs": []}}
    for i in range(repeats):
        for key, argv in (("llsvm", ours), ("ref", ref)):
            side = sides[key]
            if side["status"] != "ok":
                continue
            try:
                w, mb = run_measured(argv, timeout=timeout)
            except CommandFailed as e:
                sides[key] = _failure(e)
                continue
            side["runs"].append(w)
            side["mbs"].append(mb)
        if any(s["status"] != "ok" for s in sides.values()) or max(sides[k]["runs"][-1] for k in sides) > long:
            break
    for side in sides.values():
        if side["status"] == "ok":
            side["s"], side["mb"] = statistics.median(side["runs"]), max(side.pop("mbs"))
    return sides


def _describe(side, timeout):
    if side["status"] == "ok":
        return f"{side['s']:.3f} s"
    if side["status"] == "timeout":
        return f"timeout ({timeout:.0f} s)"
    if side["status"] == "skipped":
        return "skipped"
    return f"exit {side['rc']}: {side['message']}"


def bench_defaults(shared_dir, tmp, repeats=REPEATS, timeout=TIMEOUT, liblinear_dir=None, libsvm_dir=None,
                   sets=None, solvers=None, long=LONG, shared=True, bindir=None, say=say):
    """Every cell of the part (see the module's docstring): a result dict for defaults_markdown and the JSON."""
    import fetch_data

    train = _bin("llsvm-train", bindir)
    import llsvm
    compileall.compile_dir(os.path.dirname(llsvm.__file__), quiet=1)     # as a wheel install leaves it
    solvers = solvers_selected(solvers)
    result = {"llsvm_bin": os.path.dirname(train), "repeats": repeats, "timeout": timeout, "long": long,
              "target": TARGET, "line": LINE, "unavailable": {}, "missing": [], "cells": [],
              "load": os.getloadavg()}
    refs = {}
    for fam, given in (("liblinear", liblinear_dir), ("libsvm", libsvm_dir)):
        if not any(family(s) == fam for s in solvers):
            continue
        try:
            refs[fam] = reference_cli(fam, given, say)
        except Exception as e:          # no sources, no network, a failed build: the family is left out
            result["unavailable"][fam] = (f"{REFERENCE_NAMES[fam]} is not available ({type(e).__name__}: {e}); "
                                          f"set LLSVM_{fam.upper()}_DIR (or --{fam}-dir) to a directory holding "
                                          f"its binaries or its sources")
            if say:
                say(f"# defaults: {result['unavailable'][fam]}")
    result["liblinear_dir"], result["libsvm_dir"] = refs.get("liblinear"), refs.get("libsvm")
    solvers = tuple(s for s in solvers if family(s) in refs)

    table = {r["name"]: r for r in fetch_data.read_sets(fetch_data.SETS)}
    names = (public_sets(table.values()) if shared else []) + list(GENERATED)
    if sets:
        want = [x for x in sets.split(",") if x] if isinstance(sets, str) else list(sets)
        unknown = [x for x in want if x not in table and x not in GENERATED]
        if unknown:
            raise ValueError(f"--defaults-sets: {', '.join(unknown)} not in data/sets.tsv nor generated "
                             f"({', '.join(GENERATED)})")
        names = want
    found = []
    for name in names:
        if name in GENERATED:
            found.append((name, write_generated(name, os.path.join(tmp, name)), GENERATED[name]))
            continue
        path = shared_file(shared_dir, name, tmp)
        if path is None:
            result["missing"].append(name)
            if say:
                say(f"# defaults: {name} not found ({FETCH_HINT}), left out")
            continue
        r = table[name]
        found.append((name, path, dict(rows=int(r["rows"]), features=int(r["features"]),
                                       classes=int(r["classes"]), bytes=int(r["bytes"]))))
    found.sort(key=lambda f: os.path.getsize(f[1]))     # the quick sets first
    result["sets"] = [dict(name=n, **shape) for n, _, shape in found]

    for name, path, shape in found:
        for solver in solvers:
            fam = family(solver)
            ref_timed_out = False
            for flagged in (False, True):
                tag = f"{name}.{solver}{'.flag' if flagged else ''}"
                a, b = os.path.join(tmp, tag + ".llsvm.model"), os.path.join(tmp, tag + ".ref.model")
                ours, ref = commands(solver, flagged, path, a, b, train, refs[fam])
                cell = {"set": name, "family": fam, "solver": solver, "flagged": flagged,
                        "command": " ".join(ours[1:-2]), "reference": " ".join([os.path.basename(ref[0])] + ref[1:-2]),
                        "argv_llsvm": ours, "argv_ref": ref, "deterministic": deterministic(solver, flagged)}
                if flagged and fam == "libsvm" and ref_timed_out:
                    cell.update(llsvm={"status": "skipped"}, ref={"status": "skipped"}, identical=None, ratio=None,
                                ok=None, note="the reference timed out without -b 1")
                else:
                    for p in (a, b):
                        if os.path.exists(p):
                            os.unlink(p)
                    m = measure(ours, ref, repeats, timeout, long)
                    cell.update(llsvm=m["llsvm"], ref=m["ref"])
                    both = m["llsvm"]["status"] == m["ref"]["status"] == "ok"
                    cell["identical"] = filecmp.cmp(a, b, shallow=False) if both else None
                    cell["ratio"] = m["llsvm"]["s"] / m["ref"]["s"] if both else None
                    cell["ok"] = cell["ratio"] <= TARGET if both and m["ref"]["s"] >= LINE else None
                    ref_timed_out = ref_timed_out or m["ref"]["status"] == "timeout"
                    for p in (a, b):
                        if os.path.exists(p):
                            os.unlink(p)
                result["cells"].append(cell)
                if say:
                    ratio = f", ratio {cell['ratio']:.2f}" if cell["ratio"] is not None else ""
                    same = {True: ", identical", False: ", models differ", None: ""}[cell["identical"]]
                    say(f"# defaults {name} {cell['command']}: llsvm {_describe(cell['llsvm'], timeout)}, "
                        f"{cell['reference']} {_describe(cell['ref'], timeout)}{ratio}{same}")
    return result


def _alike(c):
    """Whether both sides refused a cell the same way (exit status and first line on stderr)."""
    lf, rf = c["llsvm"], c["ref"]
    return lf["status"] == rf["status"] == "failed" and (lf["rc"], lf["message"]) == (rf["rc"], rf["message"])


def _model_cell(c):
    if c["identical"] is None:
        if _alike(c):
            return "both refuse alike"
        return "both refuse, in other words" if c["llsvm"]["status"] == c["ref"]["status"] == "failed" else "-"
    if c["identical"]:
        return "identical"
    return "differs" + ("" if c["deterministic"] else " (rand())")


def _not_rated(cells, timeout):
    """Lines on the cells without a ratio, grouped by what happened and the command: both timed out, both refused
    alike (the same exit status and first line on stderr) or in other words, llsvm timed out or failed, the
    reference timed out or failed, skipped."""
    groups = {}
    for c in cells:
        if c["ratio"] is not None:
            continue
        if c["llsvm"]["status"] == "skipped":
            key = ("Skipped", c["command"], c.get("note", ""))
        elif _alike(c):
            key = ("Both refuse alike", c["command"], f"exit {c['ref']['rc']}: {c['ref']['message']}")
        elif c["llsvm"]["status"] == c["ref"]["status"] == "timeout":
            key = (f"Both timed out ({timeout:.0f} s)", c["command"], "")
        elif c["llsvm"]["status"] == c["ref"]["status"] == "failed":
            key = ("Both refuse, in other words", c["command"],
                   f"llsvm exit {c['llsvm']['rc']}: {c['llsvm']['message']}; {c['reference']} exit {c['ref']['rc']}: "
                   f"{c['ref']['message']}")
        else:
            for who, side, cmd in (("llsvm", c["llsvm"], "llsvm-train " + c["command"]),
                                   ("The reference", c["ref"], c["reference"])):
                if side["status"] == "timeout":
                    groups.setdefault((f"{who} timed out ({timeout:.0f} s)", cmd, ""), []).append(c["set"])
                elif side["status"] == "failed":
                    groups.setdefault((f"{who} failed", cmd, f"exit {side['rc']}: {side['message']}"),
                                      []).append(c["set"])
            continue
        groups.setdefault(key, []).append(c["set"])
    return [f"{what}: {cmd} on {', '.join(sets)}" + (f" ({why})" if why else "") + "."
            for (what, cmd, why), sets in groups.items()]


def _cell_text(side, timeout):
    """A time cell of the table: seconds, `timeout (120 s)`, `exit N` (its message is in the summary), `skipped`."""
    if side["status"] == "ok":
        return f"{side['s']:.3f}"
    return f"exit {side['rc']}" if side["status"] == "failed" else _describe(side, timeout)


def _ratio_cell(c, timeout):
    if c["ratio"] is not None:
        return f"{c['ratio']:.2f}"
    if c["llsvm"]["status"] == "timeout" and c["ref"]["status"] == "ok":
        return f"> {timeout / c['ref']['s']:.2f}"
    if c["llsvm"]["status"] == "ok" and c["ref"]["status"] == "timeout":
        return f"< {c['llsvm']['s'] / timeout:.2f}"
    return "-"


def summary(result):
    """The summary lines: cells measured, ✓/✗ at the line, the largest ratio on each side of it, the models, and
    every cell that did not give a ratio."""
    cells, line, target = result["cells"], result["line"], result["target"]
    rated = [c for c in cells if c["ratio"] is not None]
    above = [c for c in rated if c["ref"]["s"] >= line]
    below = [c for c in rated if c["ref"]["s"] < line]
    n = len(result['sets'])
    out = [f"{len(cells)} cells on {n} set{'' if n == 1 else 's'}, {len(rated)} with both sides timed; "
           f"{len(above)} where the reference takes >= {line} s: {sum(c['ok'] for c in above)} ✓, "
           f"{sum(not c['ok'] for c in above)} ✗ (target ratio <= {target})."]
    for what, group in ((f"reference >= {line} s", above), (f"reference < {line} s", below)):
        if group:
            c = max(group, key=lambda c: c["ratio"])
            out.append(f"Largest ratio, {what}: {c['ratio']:.2f} ({c['set']}, llsvm-train {c['command']}: "
                       f"{c['llsvm']['s']:.3f} s against {c['ref']['s']:.3f} s).")
    det = [c for c in rated if c["deterministic"]]
    other = [c for c in rated if not c["deterministic"]]
    differ = [f"{c['set']} {c['command']}" for c in det if not c["identical"]]
    out.append(f"Models identical: {len(det) - len(differ)} of {len(det)} cells where both are deterministic"
               + (f" (differ: {', '.join(differ)})" if differ else "")
               + f"; {sum(c['identical'] for c in other)} of {len(other)} others.")
    out += _not_rated(cells, result["timeout"])
    for fam, why in result["unavailable"].items():
        out.append(f"Not measured: LIBLINEAR's types ({why})." if fam == "liblinear" else
                   f"Not measured: LIBSVM's types ({why}).")
    if result["missing"]:
        out.append(f"Sets not found, left out: {', '.join(result['missing'])} ({FETCH_HINT}).")
    return out


def defaults_markdown(result, md_header=md_header, md_row=md_row):
    t = result["timeout"]
    lines = [f"llsvm: {result['llsvm_bin']}; LIBLINEAR: {result['liblinear_dir'] or '-'}; LIBSVM: "
             f"{result['libsvm_dir'] or '-'}; wall seconds, medians of {result['repeats']} round-robin runs (once "
             f"when a first run takes over {result['long']:.0f} s); commands killed after {t:.0f} s; load average at "
             f"the start {', '.join(f'{v:.2f}' for v in result['load'])}. Target: llsvm / reference <= "
             f"{result['target']} where the reference takes >= {result['line']} s.", ""]
    lines += summary(result) + [""]
    shapes = {s["name"]: s for s in result["sets"]}
    lines += md_header(["set", "llsvm-train", "reference", "llsvm s", "ref s", "ratio", "runs", "model",
                        f"<= {result['target']}x"])
    for c in result["cells"]:
        s = shapes[c["set"]]
        runs = len(c["llsvm"].get("runs", ())) if c["llsvm"]["status"] == "ok" else "-"
        target = "" if c["ok"] is None else ("✓" if c["ok"] else "✗")
        lines.append(md_row([f"{c['set']} ({s['rows']}x{s['features']}, {s['classes']} cl.)", c["command"],
                             c["reference"], _cell_text(c["llsvm"], t), _cell_text(c["ref"], t),
                             _ratio_cell(c, t), str(runs), _model_cell(c), target]))
    return "\n".join(lines)


if __name__ == "__main__":     # by hand: python scripts/bench_defaults.py [SETS [SOLVERS [REPEATS]]]
    import json
    import shutil
    import tempfile
    from benchutil import DATA_DIR
    tmp = tempfile.mkdtemp(prefix="llsvm-defaults-")
    try:
        res = bench_defaults(DATA_DIR, tmp, int(sys.argv[3]) if len(sys.argv) > 3 else REPEATS,
                             sets=sys.argv[1] if len(sys.argv) > 1 else None,
                             solvers=sys.argv[2] if len(sys.argv) > 2 else None)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(json.dumps(res, default=float), file=sys.stderr)
    print(defaults_markdown(res))
