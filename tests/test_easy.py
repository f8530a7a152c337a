"""llsvm-easy (issue 47, item 5): LIBSVM's tools/easy.py in one process.

References: the individual commands (llsvm-scale, llsvm-train -s smo, llsvm-predict, llsvm-train --grid
--libsvm-rand), whose own tests hold them to svm-scale, svm-train and svm-predict; the order in which LIBSVM 3.37's
grid.py runs its cells, recorded from its calculate_jobs (GRID_PY_ORDER below, made by importing tools/grid.py and
printing calculate_jobs' cells for its default options); and grid.py's rule for the best cell (update_param),
restated in the test of ties. A small grid (--log2c, --log2g) on heart_scale's halves keeps it fast.
"""
import json
import os
import re
import signal
import subprocess
import sys

import pytest
from click.testing import CliRunner

from llsvm.cli.easy import best_cell, grid_order, log2_range, main as easy_main
from llsvm.cli.predict import main as predict_main
from llsvm.cli.scale import main as scale_main
from llsvm.cli.train import main as train_main

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SMALL = ["--log2c", "-1,3,2", "--log2g", "-3,-1,1"]

# grid.py 3.37's cells for its defaults (-log2c -5,15,2 -log2g 3,-15,-2), in the order its worker runs them
GRID_PY_ORDER = (
    "5,-7 -1,-7 5,-1 -1,-1 11,-7 11,-1 5,-13 -1,-13 11,-13 -3,-7 -3,-1 -3,-13 5,1 -1,1 11,1 -3,1 9,-7 9,-1 9,-13 9,1 "
    "5,-11 -1,-11 11,-11 -3,-11 9,-11 3,-7 3,-1 3,-13 3,1 3,-11 5,-5 -1,-5 11,-5 -3,-5 9,-5 3,-5 15,-7 15,-1 15,-13 "
    "15,1 15,-11 15,-5 5,-15 -1,-15 11,-15 -3,-15 9,-15 3,-15 15,-15 -5,-7 -5,-1 -5,-13 -5,1 -5,-11 -5,-5 -5,-15 5,3 "
    "-1,3 11,3 -3,3 9,3 3,3 15,3 -5,3 7,-7 7,-1 7,-13 7,1 7,-11 7,-5 7,-15 7,3 5,-9 -1,-9 11,-9 -3,-9 9,-9 3,-9 15,-9 "
    "-5,-9 7,-9 1,-7 1,-1 1,-13 1,1 1,-11 1,-5 1,-15 1,3 1,-9 5,-3 -1,-3 11,-3 -3,-3 9,-3 3,-3 15,-3 -5,-3 7,-3 1,-3 "
    "13,-7 13,-1 13,-13 13,1 13,-11 13,-5 13,-15 13,3 13,-9 13,-3")
GRID_PY_SMALL = "1,-2 1,-3 -1,-2 -1,-3 1,-1 -1,-1 3,-2 3,-3 3,-1"      # -log2c -1,3,2 -log2g -3,-1,1


def _pairs(text):
    return [tuple(float(v) for v in p.split(",")) for p in text.split()]


def test_grid_order_is_grid_pys():
    assert grid_order(log2_range(None, None, "-5,15,2"), log2_range(None, None, "3,-15,-2")) == _pairs(GRID_PY_ORDER)
    assert grid_order(log2_range(None, None, "-1,3,2"), log2_range(None, None, "-3,-1,1")) == _pairs(GRID_PY_SMALL)


def test_ties_as_grid_py():
    """grid.py's update_param: a higher rate wins; an equal one only at the same log2 g with a smaller log2 c."""
    order = [(1, -2), (1, -3), (-1, -2), (-1, -3), (3, -2)]
    rate = {(1, -2): 80.0, (1, -3): 85.0, (-1, -2): 85.0, (-1, -3): 85.0, (3, -2): 85.0}
    assert best_cell(order, rate) == (-1, -3, 85.0)      # same g, smaller c; (-1, -2) ties at another g: not taken
    rate[(-1, -3)] = 84.0
    assert best_cell(order, rate) == (1, -3, 85.0)        # the first of the best, whatever comes later at other g


@pytest.fixture
def heart(shared_plain):
    return shared_plain("heart_scale")


def _halves(tmp_path, heart):
    lines = open(heart).read().splitlines(keepends=True)
    (tmp_path / "tr").write_text("".join(lines[:135]))
    (tmp_path / "te").write_text("".join(lines[135:]))


def _invoke(command, args):
    r = CliRunner().invoke(command, [str(a) for a in args], catch_exceptions=False)
    return r.exit_code, r.stdout, r.stderr


def test_easy_writes_what_the_commands_write(tmp_path, monkeypatch, heart):
    _halves(tmp_path, heart)
    monkeypatch.chdir(tmp_path)
    code, out, err = _invoke(easy_main, SMALL + ["tr", "te"])
    assert code == 0, err
    lines = out.splitlines()
    assert lines[:2] == ["Scaling training data...", "Cross validation..."]
    m = re.fullmatch(r"Best c=(\S+), g=(\S+) CV rate=(\S+)", lines[2])
    assert m, lines
    C, g, rate = (float(v) for v in m.groups())
    assert lines[3:] == ["Training...", "Output model: tr.model", "Scaling testing data...", "Testing...",
                         lines[7], "Output prediction: te.predict"]
    assert re.fullmatch(r"Accuracy = \S+% \(\d+/135\) \(classification\)", lines[7])
    assert sorted(os.listdir(".")) == ["te", "te.predict", "te.scale", "tr", "tr.model", "tr.range", "tr.scale"]
    # the individual commands, one by one
    os.mkdir("ref")
    code, scaled, _ = _invoke(scale_main, ["-s", "ref/tr.range", "tr"])
    assert code == 0 and scaled == open("tr.scale").read()
    assert open("ref/tr.range").read() == open("tr.range").read()
    code, scaled_t, _ = _invoke(scale_main, ["-r", "tr.range", "te"])
    assert code == 0 and scaled_t == open("te.scale").read()
    # the search: llsvm-train --grid --libsvm-rand's cells over the same grid; the best is the most accurate cell
    # (its first in grid.py's order), at svm-train's %g
    code, _, _ = _invoke(train_main, ["-s", "smo", "--libsvm-rand", "-v", 5, "--grid",
                                      "C=0.5,2,8 g=0.125,0.25,0.5", "--json", "ref/grid.json", "tr.scale"])
    assert code == 0
    cells = {(c["C"], c["gamma"]): c["accuracy"] for c in json.load(open("ref/grid.json"))["cells"]}
    assert len(cells) == 9
    best = max(cells.values())
    assert float(f"{cells[(C, g)]:g}") == rate == float(f"{best:g}")
    first = next((2.0 ** c, 2.0 ** gg) for c, gg in _pairs(GRID_PY_SMALL) if cells[(2.0 ** c, 2.0 ** gg)] == best)
    assert (C, g) == first
    code, _, _ = _invoke(train_main, ["-s", "smo", "-c", C, "-g", g, "tr.scale", "ref/tr.model"])
    assert code == 0 and open("ref/tr.model", "rb").read() == open("tr.model", "rb").read()
    code, acc, _ = _invoke(predict_main, ["te.scale", "tr.model", "ref/te.predict"])
    assert code == 0 and acc.strip() == lines[7]
    assert open("ref/te.predict", "rb").read() == open("te.predict", "rb").read()


def test_quiet_training_only_and_measure(tmp_path, monkeypatch, heart):
    _halves(tmp_path, heart)
    monkeypatch.chdir(tmp_path)
    code, out, err = _invoke(easy_main, SMALL + ["-q", "tr"])
    assert (code, out, err) == (0, "", "")
    assert sorted(os.listdir(".")) == ["te", "tr", "tr.model", "tr.range", "tr.scale"]
    code, out, err = _invoke(easy_main, SMALL + ["--measure", "auc", "tr", "te"])
    assert code == 0, err
    assert re.search(r"^Best c=\S+, g=\S+ CV auc=0\.\d+$", out, re.M)
    assert re.search(r"^AUC = 0\.\d+$", out, re.M)


@pytest.mark.parametrize("args, code, message", [
    (["missing"], 1, "can't open input file missing"),
    (["tr", "missing"], 1, "can't open input file missing"),
    (["tr", "tr"], 1, "are the same file"),
    (["--log2c", "1,2,0", "tr"], 2, "step must not be 0"),
    (["--log2g", "1,2,-1", "tr"], 2, "no exponent"),
    (["--log2c", "1,2", "tr"], 2, "begin,end,step"),
    (["reg"], 1, "is not a class"),
    (["--measure", "mse", "tr"], 1, "mse"),
])
def test_refusals_leave_nothing(tmp_path, monkeypatch, args, code, message, heart):
    _halves(tmp_path, heart)
    (tmp_path / "reg").write_text("1.5 1:0.2\n2 1:0.4\n3.25 1:0.1\n")
    monkeypatch.chdir(tmp_path)
    before = sorted(os.listdir("."))
    got, out, err = _invoke(easy_main, SMALL + args)
    assert got == code, (out, err)
    assert message in err
    assert "Traceback" not in err
    assert sorted(os.listdir(".")) == before


def test_ctrl_c_exits_130_leaving_nothing(tmp_path, heart):
    """The console script: SIGINT during the search ends it with 130, no file written, no staging left."""
    _halves(tmp_path, heart)
    env = {**os.environ, "PYTHONPATH": REPO + os.pathsep + os.environ.get("PYTHONPATH", "")}
    p = subprocess.Popen([sys.executable, "-u", "-c", "from llsvm.cli.entry import easy; easy()", "--log2c",
                          "-5,15,0.25", "tr", "te"], cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         env=env, text=True)
    try:
        assert p.stdout.readline() == "Scaling training data...\n"
        assert p.stdout.readline() == "Cross validation...\n"
        p.send_signal(signal.SIGINT)
        _, err = p.communicate(timeout=60)
    finally:
        p.kill()
    assert p.returncode == 130, err
    assert "Traceback" not in err
    assert sorted(os.listdir(tmp_path)) == ["te", "tr"]


def test_console_script_declared():
    text = open(os.path.join(REPO, "pyproject.toml")).read()
    assert 'llsvm-easy = "llsvm.cli.entry:easy"' in text
