"""Part `signals` of `make bench` (issue 27, item 1): how long a command takes to exit after SIGINT or SIGTERM.

For every solver of the registry (`llsvm-train -q -s S a9a MODEL`, llsvm/solvers/registry.py) and for
`llsvm-predict -q a9a.t MODEL OUT` with an `-s smo` model of a9a (trained once, to its end), on the public
a9a (data/public, `make data`; decompressed into the temporary directory):
  - R, the wall of start-up and loading: the median of three `llsvm-train -q -s 1 --max-iter 1 a9a` runs;
  - T, the wall time of an uninterrupted run (the shorter of two), capped at 20 s (the run is killed there). A
    solver that ends less than 2 s after R is run again with the next parameters of its LONGER list (smaller -e, a
    larger C, more epochs or iterations) until it runs longer; the table says which parameters were used;
  - --signal-runs runs (default 5) for each of SIGINT and SIGTERM, the signal sent at R + f (min(T, 20 s) - R) for
    f evenly spaced in 0.2 .. 0.8 (in the middle of the computation): the exit latency, the wall time from the
    kill() to the exit (os.wait4 polled every millisecond), its median and worst; the CPU time the command used
    after the signal (its rusage minus /proc/<pid>/stat at the kill); the exit codes (130 / 143 expected); that no
    model or output file and no temporary file is left; that stderr is empty.
Target: worst latency <= 1 s for every command. A command still running 60 s after the signal is killed and counted
as blocked. Each child starts with SIGINT at its default action (llsvm keeps an inherited SIG_IGN, which a
benchmark run as a background job of a script would otherwise pass on) and execs the console script (same pid).
"""
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

from benchutil import FETCH_HINT, say, shared_file
from children import cpu_of, kill, reap

TARGET_S = 1.0
EXEC = "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); os.execv(sys.argv[1], sys.argv[1:])"
# parameters tried, in order, for a solver whose default run on a9a ends less than 2 s after start-up and loading
NEWTON = [["-e", "1e-10", "-c", "100000"], ["-v", "10", "-e", "1e-10", "-c", "100000"]]   # Newton: few iterations
DUAL = [["-e", "0.001"], ["-e", "1e-6", "-c", "1000", "--max-iter", "100000"]]
LONGER = {
    "0": NEWTON, "2": NEWTON, "11": NEWTON,
    "1": DUAL, "3": DUAL, "4": DUAL, "7": DUAL, "12": DUAL, "13": DUAL,
    "5": [["-e", "1e-5"], ["-e", "1e-10", "-c", "1000"], ["-e", "1e-12", "-c", "100000", "--max-iter", "100000"]],
    "6": [["-e", "1e-5"], ["-e", "1e-10", "-c", "1000"], ["-e", "1e-12", "-c", "100000", "--max-iter", "100000"]],
    "21": [["-e", "1e-5"], ["-v", "50", "-e", "1e-10"], ["-v", "200", "-e", "1e-10"]],     # a9a: 0.05 s a solve
    "llsvm": DUAL, "streamsvm": DUAL, "bm": DUAL,
    "smo": [["-e", "1e-6"]],
    "h1tree": [["-e", "1e-8"], ["--h1-c", "2", "-e", "1e-8"]],
    "olsvm": [["--epochs", "5"], ["--epochs", "50"], ["--epochs", "500"]],
    "olsvm-rhl": [["--epochs", "5"], ["--epochs", "50"], ["--epochs", "500"]],
    "norma": [["--epochs", "5"], ["--epochs", "50"], ["--epochs", "500"]],
    "pegaz": [["--epochs", "5"], ["--epochs", "50"], ["--epochs", "500"]],
    "pegasos": [["--epochs", "5"], ["--epochs", "50"], ["--epochs", "500"]],
    "local1d": [["--max-iter", "65536"], ["--max-iter", "1048576"], ["--max-iter", "2147483647"]],
    "project1d": [["--max-iter", "16384"], ["--max-iter", "262144"], ["--max-iter", "2147483647"]],
}
OUT_OF_CORE = ("llsvm", "streamsvm", "bm")


def _bin(name):
    return os.path.join(os.path.dirname(sys.executable), name)


def _start(argv, env, err):
    with open(err, "wb") as f:
        return subprocess.Popen([sys.executable, "-c", EXEC, *argv], stdout=subprocess.DEVNULL, stderr=f, env=env)


def _read(path):
    with open(path, "rb") as f:
        return f.read().decode(errors="replace")


def uninterrupted(argv, env, cap, err):
    """(wall seconds, exit code, stderr) of a run to its end; (cap, None, "") when it was still running at cap
    (killed there)."""
    t0 = time.monotonic()
    p = _start(argv, env, err)
    got = reap(p, t0 + cap)
    wall = time.monotonic() - t0
    if got is None:
        kill(p)
        return cap, None, ""
    return wall, p.returncode, _read(err)


def signalled(argv, env, at, sig, wait, err):
    """Start the command, send `sig` `at` seconds after the start; what followed."""
    t0 = time.monotonic()
    p = _start(argv, env, err)
    while time.monotonic() - t0 < at:
        if p.poll() is not None:
            return {"finished_first": True, "rc": p.returncode, "at": at, "stderr": _read(err)[-500:]}
        time.sleep(0.002)
    c0 = cpu_of(p.pid)          # not reaped by anyone but us: /proc/<pid> is there even if it has just exited
    t_sig = time.monotonic()
    os.kill(p.pid, sig)
    got = reap(p, t_sig + wait)
    latency = time.monotonic() - t_sig
    if got is None:
        c1 = cpu_of(p.pid)
        kill(p)
        return {"blocked": True, "latency": latency, "cpu_after": c1 - c0, "rc": p.returncode, "at": at,
                "stderr": _read(err)[-500:]}
    _, usage = got
    rc = p.returncode
    return {"latency": latency, "cpu_after": usage.ru_utime + usage.ru_stime - c0, "rc": rc, "at": at,
            "stderr": _read(err)[-500:]}


def _leftovers(*paths):
    out = []
    for p in paths:
        if os.path.isdir(p):
            out += [os.path.join(p, n) for n in os.listdir(p)]
        elif os.path.exists(p):
            out.append(p)
    return out


def _clear(*paths):
    for path in _leftovers(*paths):
        if os.path.isdir(path):
            shutil.rmtree(path, ignore_errors=True)
        else:
            os.unlink(path)


def _fractions(n):
    return [0.2] if n == 1 else [0.2 + 0.6 * k / (n - 1) for k in range(n)]


def bench_command(label, make_argv, ladder, tmp, runs, cap, min_t, wait, ready, say):
    """One command: T (with the first parameters of the ladder that make it run min_t past `ready`, the wall of
    start-up and loading), then `runs` SIGINT and `runs` SIGTERM runs at fractions of the time between ready and
    min(T, cap)."""
    work = tempfile.mkdtemp(prefix="sig-", dir=tmp)
    tmpdir = os.path.join(work, "tmp")
    os.makedirs(tmpdir)
    env = dict(os.environ, TMPDIR=tmpdir)
    output = os.path.join(work, "output")
    err = os.path.join(work, "stderr")
    extra, T, rc = [], None, None
    for extra in [[]] + ladder:
        T, rc, text = uninterrupted(make_argv(extra, output, tmpdir), env, cap, err)
        if rc not in (None, 0):
            raise RuntimeError(f"{label} {' '.join(extra)} exited {rc}: {text[-500:]}")
        if rc is not None and T >= ready + min_t:
            # a second run: T is the shorter of the two (a busy machine makes one run longer than the next)
            T2, rc2, _ = uninterrupted(make_argv(extra, output, tmpdir), env, cap, err)
            T = min(T, T2) if rc2 is not None else T
        if T >= ready + min_t:
            break
    _clear(output, tmpdir)          # the model of a complete run, what a run killed at the cap left
    if say:
        say(f"# signals {label} {' '.join(extra)}: uninterrupted {T:.2f} s{' (capped)' if rc is None else ''}")
    row = {"command": label, "extra": " ".join(extra), "T": T, "capped": rc is None, "runs": runs, "ready": ready}
    span = min(T, cap)
    for name, sig in (("SIGINT", signal.SIGINT), ("SIGTERM", signal.SIGTERM)):
        results = []
        for f in _fractions(runs):
            at = ready + f * max(span - ready, 0.0)
            r = signalled(make_argv(extra, output, tmpdir), env, at, sig, wait, err)
            r["fraction"] = f
            r["left"] = _leftovers(output, tmpdir)
            _clear(output, tmpdir)
            results.append(r)
            if say:
                if r.get("finished_first"):
                    say(f"#   {label} {name} at {at:.2f} s: finished first (exit {r['rc']})")
                else:
                    say(f"#   {label} {name} at {at:.2f} s: exit {r['rc']} after {r['latency'] * 1000:.1f} ms"
                        f" (CPU {r['cpu_after']:.3f} s){' BLOCKED' if r.get('blocked') else ''}"
                        f"{' left ' + str(r['left']) if r['left'] else ''}"
                        f"{' stderr: ' + r['stderr'].strip()[-200:] if r['stderr'].strip() else ''}")
        hit = [r for r in results if not r.get("finished_first")]
        lat = [r["latency"] for r in hit]
        row[name] = {
            "signalled": len(hit),
            "median_s": statistics.median(lat) if lat else None,
            "worst_s": max(lat) if lat else None,
            "cpu_after_worst_s": max(r["cpu_after"] for r in hit) if hit else None,
            "exit_codes": sorted({r["rc"] for r in results}),
            "codes_ok": all(r["rc"] == 128 + sig for r in hit),
            "clean": all(not r["left"] for r in hit),       # a run that finished first wrote its model
            "stderr_empty": all(not r["stderr"].strip() for r in hit),
            "blocked": sum(1 for r in hit if r.get("blocked")),
            "runs": results,
        }
    row["ok"] = all(row[n]["signalled"] == runs and row[n]["worst_s"] <= TARGET_S and row[n]["codes_ok"]
                    and row[n]["clean"] and row[n]["stderr_empty"] for n in ("SIGINT", "SIGTERM"))
    shutil.rmtree(work, ignore_errors=True)
    return row


def ready_time(train, tmp, repeats=3):
    """The wall of start-up and loading a9a: the median of `llsvm-train -q -s 1 --max-iter 1 a9a` runs (one pass
    of -s 1 is a few milliseconds)."""
    times = []
    for _ in range(repeats):
        t, rc, text = uninterrupted([_bin("llsvm-train"), "-q", "-s", "1", "--max-iter", "1", train,
                                     os.path.join(tmp, "ready.model")], dict(os.environ), 60.0,
                                    os.path.join(tmp, "ready.stderr"))
        if rc != 0:
            raise RuntimeError(f"llsvm-train -s 1 --max-iter 1 exited {rc}: {text[-500:]}")
        times.append(t)
    return statistics.median(times)


def bench_signals(shared_dir, tmp, runs=5, solvers=None, cap=20.0, min_t=2.0, wait=60.0, say=say):
    from llsvm.params import specs

    train = shared_file(shared_dir, "a9a", tmp)
    test = shared_file(shared_dir, "a9a.t", tmp)
    if train is None or test is None:
        raise FileNotFoundError(f"a9a.xz and a9a.t.xz are needed in {shared_dir} ({FETCH_HINT})")
    names = [s.name for s in specs()] + ["predict"]
    if solvers is not None:
        unknown = sorted(set(solvers) - set(names))
        if unknown:
            raise ValueError(f"--signal-solvers: unknown {unknown} (known: {', '.join(names)})")
        names = [n for n in names if n in solvers]
    ready = ready_time(train, tmp)
    if say:
        say(f"# signals: start-up and loading of a9a take {ready:.2f} s (the signals come later)")
    rows = []
    for name in names:
        if name == "predict":
            model = os.path.join(tmp, "a9a.smo.model")
            if not os.path.exists(model):
                t0 = time.monotonic()
                subprocess.run([_bin("llsvm-train"), "-q", "-s", "smo", train, model], check=True)
                if say:
                    say(f"# signals: the -s smo model of a9a trained in {time.monotonic() - t0:.1f} s")

            def argv(extra, output, tmpdir, model=model):
                return [_bin("llsvm-predict"), "-q", test, model, output]
            label, ladder = "llsvm-predict (-s smo model)", []
        else:
            def argv(extra, output, tmpdir, name=name):
                ooc = ["--tmp-dir", tmpdir] if name in OUT_OF_CORE else []
                return [_bin("llsvm-train"), "-q", "-s", name, *extra, *ooc, train, output]
            label, ladder = f"-s {name}", LONGER.get(name, [])
        rows.append(bench_command(label, argv, ladder, tmp, runs, cap, min_t, wait, ready, say))
    return rows


def _ms(v):
    return "-" if v is None else f"{v * 1000:.0f}"


def signals_markdown(rows, md_header, md_row):
    if not rows:
        return "(nothing run)"
    lines = md_header(["command", "parameters", "T (s)", "SIGINT median / worst (ms)", "SIGTERM median / worst (ms)",
                       "CPU after (worst, s)", "exit codes", "files left", f"worst <= {TARGET_S:g} s"])
    for r in rows:
        i, t = r["SIGINT"], r["SIGTERM"]
        cells = [r["command"], r["extra"] or "defaults", f"{r['T']:.1f}{'+' if r['capped'] else ''}",
                 f"{_ms(i['median_s'])} / {_ms(i['worst_s'])}", f"{_ms(t['median_s'])} / {_ms(t['worst_s'])}",
                 f"{max(x for x in (i['cpu_after_worst_s'], t['cpu_after_worst_s']) if x is not None):.3f}"
                 if i["cpu_after_worst_s"] is not None or t["cpu_after_worst_s"] is not None else "-",
                 ", ".join(str(c) for c in i["exit_codes"] + t["exit_codes"]),
                 "none" if i["clean"] and t["clean"] else "some",
                 "✓" if r["ok"] else "✗"]
        notes = []
        for n, d in (("SIGINT", i), ("SIGTERM", t)):
            if d["signalled"] < r["runs"]:
                notes.append(f"{n}: {r['runs'] - d['signalled']} finished first")
            if d["blocked"]:
                notes.append(f"{n}: {d['blocked']} blocked")
            if not d["stderr_empty"]:
                notes.append(f"{n}: stderr")
        if notes:
            cells[-1] += " (" + "; ".join(notes) + ")"
        lines.append(md_row(cells))
    lines.append("")
    lines.append(f"T: one uninterrupted run (+: still running at the cap, killed there). The signals are sent at "
                 f"R + (0.2 .. 0.8) (min(T, cap) - R), R = {rows[0]['ready']:.2f} s the wall of start-up and loading "
                 f"a9a. Latency: from kill() to the exit. Parameters: what made a run that ends less than 2 s "
                 f"after R last longer (defaults otherwise). CPU after: the command's CPU time after the signal.")
    return "\n".join(lines)

