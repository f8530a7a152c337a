"""`make bench` parts `convert` (scripts/bench_parse.py) and `ooc` (scripts/bench_ooc.py): the harnesses' order of
steps (no timing verdict here; the figures are the parts'). Each run follows its own memory warm-up
(benchutil.warm_memory; and, --cold, the input's drop from the page cache), so no run inherits another's freed
pages."""
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "scripts"))
import bench_parse as BPA  # noqa: E402


@pytest.mark.parametrize("cold,warm", [(False, True), (True, True), (False, False)])
def test_every_run_follows_its_warm_up(tmp_path, monkeypatch, cold, warm):
    path = tmp_path / "in.txt"
    path.write_bytes(b"1 1:1\n" * 1000)
    calls = []

    def run(tag, wall):
        def f(*args):
            calls.append(tag)
            if tag.startswith("convert"):           # the harness compares the two outputs byte for byte
                with open(args[1], "wb") as fo:
                    fo.write(b"same")
            return {"wall": wall, "cpu": wall, "busiest": wall}
        return f
    monkeypatch.setattr(BPA, "parse_once", lambda p, t, s: run(f"parse{t}", 1.0)(p))
    monkeypatch.setattr(BPA, "convert_once", lambda p, o, t: run(f"convert{t}", 2.0)(p, o))
    monkeypatch.setattr(BPA, "convert_main_once", lambda p, o, t: run("convertmain", 1.25)(p, o))
    monkeypatch.setattr(BPA, "scan_once", lambda p: {"mb": 1.0, "cpu": 0.5})
    monkeypatch.setattr(BPA, "warm_memory", lambda mb: calls.append(("warm", mb)))
    monkeypatch.setattr(BPA, "drop_cached", lambda p: calls.append("drop"))
    row = BPA.bench_set("t", str(path), str(tmp_path), repeats=2, cold=cold, warm=warm)
    mb = os.path.getsize(path) / 1e6
    step = (["drop"] if cold else []) + [("warm", 2 * mb if warm else 0)]
    runs = ["parse1", "convert2", "parse2", "convert1", "convertmain"]
    assert calls == [c for _ in range(2) for r in runs for c in step + [r]]
    assert row["identical"] and row["warm_memory"] is warm
    assert row["convert_vs_parse"] == 0.5 and row["convertmain_vs_parse"] == 0.8
    assert sorted(os.listdir(tmp_path)) == ["in.txt"]        # the outputs and the warm-up file removed


def test_warm_memory_runs_a_helper(monkeypatch):
    BPA.warm_memory(1)                  # for real: the helper's code runs (check=True raises if it fails)
    seen = []
    monkeypatch.setattr(BPA.subprocess, "run", lambda cmd, check: seen.append(cmd))
    BPA.warm_memory(0)
    assert seen == []
    BPA.warm_memory(12.7)
    assert seen[0][0] == sys.executable and seen[0][-1] == "12" and "np.ones" in seen[0][2]


def test_ooc_runs_follow_their_warm_up(tmp_path, monkeypatch):
    """Part ooc (scripts/bench_ooc.py) for real on a small binary file, one round: every command's run follows a
    warm-up of twice the file's size, and the rows carry the certificate of each command."""
    import numpy as np
    import bench_ooc as BO
    rng = np.random.default_rng(4)
    X = rng.normal(size=(400, 6))
    y = np.where(X @ rng.normal(size=6) > 0, 1, -1)
    text = tmp_path / "s.txt"
    text.write_text("".join(f"{y[i]} " + " ".join(f"{j + 1}:{X[i, j]:.6g}" for j in range(6)) + "\n"
                            for i in range(len(y))))
    binpath = str(tmp_path / "s.bin")
    BO.ensure_binary(str(text), binpath)
    calls = []
    real = BO.run_measured
    monkeypatch.setattr(BO, "warm_memory", lambda mb: calls.append(("warm", mb)))
    monkeypatch.setattr(BO, "run_measured", lambda cmd, cpu: (calls.append(cmd[cmd.index("-s") + 1]),
                                                              real(cmd, cpu=cpu))[1])
    row = BO.bench_set("t", binpath, "8M", 1, str(tmp_path))
    w = ("warm", 2 * os.path.getsize(binpath) / 1e6)
    assert calls == [w, "3", w, "llsvm", w, "streamsvm"]
    assert row["warm_memory"] and all(s["converged"] for s in row["solvers"].values())
