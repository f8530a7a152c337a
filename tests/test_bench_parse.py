"""`make bench` part `convert` (scripts/bench_parse.py): the harness's order of steps, with fakes for the timed runs
(no timing verdict here; the figures are the part's). Each run follows its own memory warm-up (and, --cold, the
input's drop from the page cache), so no run inherits another's freed pages."""
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
