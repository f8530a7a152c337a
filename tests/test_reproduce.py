"""The five `make reproduce-*` scripts (scripts/reproduce_*.py): every figure they draw has labelled axes, a legend
that lists every line, no two lines drawn alike, a title inside the figure naming the paper's figure or table
(benchutil.figure_defects, built here from small made-up results); their acceptance lines decide the exit status
(a failing figure makes it 1, a line the spec does not gate leaves it 0); their results go to
reproduce-results/<seed>/<target>/."""
import json
import os
import sys
from types import SimpleNamespace

import numpy as np
import pytest
import scipy.sparse as sp

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "scripts"))
import benchutil as B  # noqa: E402
import reproduce_h1tree as RH  # noqa: E402
import reproduce_llsvm as RL  # noqa: E402
import reproduce_oned as RD  # noqa: E402
import reproduce_online as RO  # noqa: E402
import reproduce_streamsvm as RS  # noqa: E402
from llsvm.dataset import CSRDataset  # noqa: E402


@pytest.fixture
def plt():
    return B.pyplot()


def assert_clean(figures):
    for name, fig in figures:
        fig.tight_layout()                                # as save_png lays a figure out
        assert B.figure_defects(fig) == [], name


# -- the defects themselves ------------------------------------------------------------------------------------------
def test_figure_defects_finds_each_defect(plt):
    fig, ax = plt.subplots(figsize=(3, 2))
    ax.plot([1, 2, 3], [1, 2, 3], "o-", color="tab:blue", label="a")
    ax.plot([1, 2, 3], [3, 2, 1], "o-", color="tab:blue", label="b")      # drawn as "a" is
    ax.set_title("Figure 1: a title far too long to fit into a figure three inches wide, so it is clipped")
    fig.tight_layout()
    found = " | ".join(B.figure_defects(fig))
    for what in ("no x-axis label", "no y-axis label", "not in a legend", "is drawn as", "runs outside the figure"):
        assert what in found
    plt.close(fig)
    fig, ax = plt.subplots(figsize=(5, 3))
    ax.plot([1, 2], [1, 2], "o-", label="a")
    ax.set_xlabel("x [s]")
    ax.set_ylabel("y [%]")
    fig.tight_layout()                                    # as save_png lays a figure out
    found = B.figure_defects(fig)
    assert found == ["no title names the paper's figure or table (or says the figure is not in the paper)"]
    ax.set_title("Fig. 9")
    fig.tight_layout()
    assert B.figure_defects(fig) == []
    plt.close(fig)


# -- each script's figures ---------------------------------------------------------------------------------------------
def llsvm_result(name, kind, d_star, duals_ll, duals_s3, k=1):
    ll = [{"iter": t, "active": 10, "active_pct": 50.0 - t, "dual": d} for t, d in enumerate(duals_ll)]
    s3 = [{"iter": t + 1, "active": 20, "active_pct": 100.0 - t, "dual": d, "reset": False}
          for t, d in enumerate(duals_s3)]
    problems = [{"label": None if k == 1 else j, "n_iter_tight": 1000, "converged_tight": False,
                 "trace_equals_train": True} for j in range(k)]
    return {"set": name, "kind": kind, "rows": 690, "features": 14, "problems": problems, "tight_eps": 1e-3,
            "figure1": {"total": 690 * k, "llsvm": ll, "s3": s3, "dual_tight": d_star}}


def test_llsvm_figure1(plt):
    flat = llsvm_result("australian", "shared", 19.85, [0.08, 0.37, 0.65, 0.9], [0.07, 0.13, 0.2, 0.27])
    demo = llsvm_result("demo", "generated", 794.2, [466, 739, 744], [470, 667, 739, 768, 780, 786])
    figs = RL.figures([flat, demo])
    assert [n for n, _ in figs] == ["figure1-australian.png", "figure1-demo.png", "figure1-generated.png"]
    assert_clean(figs)
    _, fig = figs[0]
    a, d = fig.axes
    assert d.get_yscale() == "log"                     # the relative gap to D*, not D against a far D* line
    assert any("flat:" in t.get_text() for t in d.texts)          # the data is flat, and the panel says so
    assert not any("flat:" in t.get_text() for t in figs[1][1].axes[1].texts)
    assert "Figure 1" in fig._suptitle.get_text()


def test_streamsvm_figures_3_and_4(plt):
    def run(rel):
        return {"rel": rel, "seconds": list(np.linspace(0.1, 1, len(rel)))}
    runs = {s: run([0.5, 0.1, 1e-3, 1e-5]) for s in RS.SOLVERS}          # the same curve four times
    fig4 = [dict(run([0.5, 0.2, 0.1]), memory=m, omega=100 * (i + 1)) for i, m in enumerate([1 << 20, None])]
    res = {"set": "demo", "binary_mb": 0.5, "memory_text": "1M", "runs": runs, "figure4": fig4}
    figs = RS.figures([res])
    assert [n for n, _ in figs] == ["figure3-demo.png", "figure4-demo.png"]
    assert_clean(figs)                                   # four lines alike in data, drawn apart


def test_h1tree_fourclass_nodes(plt):
    rng = np.random.default_rng(1)
    X = rng.uniform(0, 200, (60, 2))
    y = np.where(X[:, 0] > 100, 1.0, -1.0)
    nodes = [SimpleNamespace(idx=np.array([0, 1]), val=np.array([1.0, 1.0 + k]), b=-150.0 - 20 * k, hard=(-1) ** k)
             for k in range(5)]
    fig = RH.fourclass_figure(X, y, nodes)
    assert_clean([("fourclass-nodes.png", fig)])
    ax = fig.axes[0]
    point_colours = {tuple(np.round(c.get_facecolor()[0][:3], 3)) for c in ax.collections}
    for line in ax.lines:                                # hyperplanes in no class colour
        from matplotlib.colors import to_rgb
        assert tuple(np.round(to_rgb(line.get_color()), 3)) not in point_colours
    assert ax.get_xlabel() and ax.get_ylabel()


def online_cells(Cs, widths, errors, seconds):
    return [{"C": C, "width": w, "error": e, "fit_cpu_seconds": t, "cpu_seconds": t, "fit_seconds": t,
             "seconds": t, "nSV": 10, "viol": 5} for (w, C), e, t in zip([(w, C) for w in widths for C in Cs],
                                                                          errors, seconds)]


def test_online_grid_and_c5_figures(plt):
    Cs, widths = [1e-4, 1.0, 1e4], [0.3, 1.0]
    same = online_cells(Cs, widths, [5, 4, 3, 6, 5, 4], [1, 1, 1, 1, 1, 1])
    methods = {"olsvm": same, "norma": same, "pegaz": same}          # one line on top of another in data
    fig = RO.grid_figure("Kecman & Melki, Figs. 7-8", "sigma", widths, Cs, methods)
    assert_clean([("threeway", fig)])
    labels = [t.get_text() for t in fig.axes[1].get_xticklabels()]
    assert labels == ["0.0001", "1", "10000"] * 2                    # C, not "cell 1..6"
    assert "C" in fig.axes[1].get_xlabel() and "cell 1" not in fig.axes[1].get_xlabel()
    cells = [dict(c, loop_seconds=0.1, bound=0.1) for c in same]
    assert_clean([("c5", RO.c5_figure("gaussians", 100, cells, "sigma", widths, Cs))])


def test_oned_figures(plt):
    seq = {"acc": [50, 60, 70, 75], "seconds": [0.001, 0.002, 0.004, 0.008]}
    rep = {"meta": {"args": {"k_max": 8}}}
    for s in ("svmguide1", "splice", "diabetes", "svmguide3"):
        rep[s] = {"rows": 100, "features": 4, "local1d": dict(seq),
                  "svcdual": {"acc": [50, 55], "seconds": [0.01, 0.02]},
                  "project1d": {"iters": [1, 2, 4], "acc": [60, 60, 60]}}
    figs = RD.figures(rep)
    assert [n for n, _ in figs] == ["fig9.png", "project.png"]
    assert_clean(figs)


# -- acceptance lines and the exit status --------------------------------------------------------------------------
def test_acceptance_and_exit_status(capsys):
    acc = B.Acceptance()
    assert acc.add("A1", True, "held") and not acc.add("A2", False, "failed")
    acc.add("A3", False, "printed", not_gated="not reproducible as printed: spec finding 6")
    assert acc.failed == ["A2"]
    assert acc.lines[1].startswith("- ✗ A2") and acc.lines[2].startswith("- – A3")
    assert B.exit_status("reproduce-x", acc.failed) == 1
    assert "1 acceptance figure(s) failed: A2" in capsys.readouterr().err
    assert B.exit_status("reproduce-x", []) == 0


def test_online_quick_gates_nothing_and_the_full_grid_does():
    Cs, widths = [1.0, 100.0], [0.3]
    methods = {"olsvm": online_cells(Cs, widths, [9, 8], [1, 1]), "libsvm": online_cells(Cs, widths, [2, 1], [2, 2])}
    full = RO.accept_grid("chessboard", methods, quick=False)
    assert full.failed == ["C2"] and all(line.startswith("- ✗ C2") for line in full.lines)
    quick = RO.accept_grid("chessboard", methods, quick=True)
    assert quick.failed == [] and all("not gated" in line for line in quick.lines)


def test_online_exit_status_follows_its_parts(monkeypatch, tmp_path):
    ds = CSRDataset.from_csr(sp.csr_matrix(np.eye(4)), np.array([1.0, -1.0, 1.0, -1.0]))
    monkeypatch.setattr(RO, "chessboard4992", lambda tmp: ds)
    part = {"part": "c5", "text": "c5", "acceptance": ["- ✗ C5 injected"], "failed": ["C5"]}
    monkeypatch.setattr(RO, "c5_part", lambda *a: part)
    assert RO.main(["--quick", "--parts", "c5", "--out", str(tmp_path)]) == 1
    assert "- ✗ C5 injected" in (tmp_path / "online.md").read_text()
    part.update(acceptance=["- ✓ C5 held"], failed=[])
    assert RO.main(["--quick", "--parts", "c5", "--out", str(tmp_path)]) == 0


def h1_runs(acc_rbf, acc_gr, size_gr=3, t_alt=1.0, t_gr=1.0):
    run = {"predict_s": 1.0, "accuracy": acc_rbf, "size": 100, "train_seconds": 1.0, "train_s": 1.0,
           "predict_wall_s": 1.0, "average_depth": None}
    return {"rbf": run, "greedy": dict(run, predict_s=0.01, accuracy=acc_gr, size=size_gr, train_seconds=t_gr),
            "alternate": dict(run, predict_s=0.01, size=size_gr, train_seconds=t_alt)}


def test_h1tree_exit_status(monkeypatch, tmp_path):
    ok = RH.acceptance({"usps.t": {"runs": h1_runs(95, 94)}})
    assert ok.failed == [] and ok.lines[0].startswith("- ✓ A1")
    bad = RH.acceptance({"usps.t": {"runs": h1_runs(95, 90)}, "mushrooms": {"runs": h1_runs(100, 100, 3, 1, 3)}})
    assert bad.failed == ["A1", "A5"]
    # main: the experiments replaced by made-up ones, the verdict is the exit status
    ds = CSRDataset.from_csr(sp.csr_matrix(np.eye(10)), np.arange(10.0) % 2)
    monkeypatch.setattr(RH, "load", lambda name, tmp: ds)
    monkeypatch.setattr(RH, "fourclass_png", lambda tmp, out: None)
    runs = {"usps.t": h1_runs(95, 90)}
    monkeypatch.setattr(RH, "experiment", lambda name, *a, **k: {"dataset": name, "train_rows": 7, "test_rows": 3,
                                                                  "gamma": 1.0, "rbf_C": 1.0, "h1_c": "inf",
                                                                  "runs": runs.get(name, h1_runs(100, 100, 3))})
    assert RH.main(["--quick", "--out", str(tmp_path)]) == 1
    assert json.loads((tmp_path / "h1tree.json").read_text())["failed"] == ["A1"]
    runs["usps.t"] = h1_runs(95, 94)
    assert RH.main(["--quick", "--out", str(tmp_path)]) == 0


def test_streamsvm_checks_the_reference():
    res = [{"set": "demo", "d_star_converged": True, "d_star_n_iter": 30, "star_eps": 1e-4},
           {"set": "sparse", "d_star_converged": False, "d_star_n_iter": 1000, "star_eps": 1e-4}]
    assert RS.checks(res).failed == ["D*"]
    assert RS.checks(res[:1]).failed == []


def tiny_set(path, rows=120, seed=3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(rows, 5))
    y = np.where(X @ rng.normal(size=5) + 0.3 * rng.normal(size=rows) > 0, 1, -1)
    with open(path, "w") as f:
        for yi, xi in zip(y, X):
            f.write(f"{yi:+d} " + " ".join(f"{j + 1}:{v:.5f}" for j, v in enumerate(xi)) + "\n")
    return str(path)


def test_llsvm_run_paths_and_exit_status(monkeypatch, tmp_path):
    data = tiny_set(tmp_path / "tiny")
    monkeypatch.setattr(B, "RESULTS_ROOT", str(tmp_path / "reproduce-results"))
    assert RL.main(["--sets", data, "--seed", "7", "--fig-iter", "3"]) == 0
    out = tmp_path / "reproduce-results" / "7" / "llsvm"            # reproduce-results/<seed>/<target>/
    assert {"table2.md", "figure1.md", "results.json", "figure1-tiny.png"} <= set(os.listdir(out))
    assert "- ✓ trace tiny" in (out / "table2.md").read_text()
    # a traced -s 3 run that is not llsvm.train's (one alpha changed): the figure's curve would not be
    # LIBLINEAR's, and the run exits 1
    trace = RL.trace_s3

    def bent(*a, **k):
        t = trace(*a, **k)
        t["alpha"][0] += 1.0
        return t
    monkeypatch.setattr(RL, "trace_s3", bent)
    assert RL.main(["--sets", data, "--seed", "7", "--fig-iter", "3", "--quick", "--tight-eps", "0"]) == 1
    assert "- ✗ trace tiny" in (out / "quick" / "table2.md").read_text()


# -- what make installs and generates for them -------------------------------------------------------------------------
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_the_reproduce_extra_holds_what_the_scripts_import():
    import tomllib
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        extra = tomllib.load(f)["project"]["optional-dependencies"]["reproduce"]
    names = {r.split(">")[0].split("=")[0].strip() for r in extra}
    assert {"matplotlib", "libsvm-official", "cvxopt"} <= names        # the figures; reproduce-oned's optimum
    make = open(os.path.join(ROOT, "Makefile")).read()
    rule = next(line for line in make.splitlines() if line.startswith("$(VENV)/.reproduce:"))
    assert ".test-deps" not in rule                                   # the test extra is not pulled in


@pytest.mark.parametrize("target, large", [("reproduce-llsvm", ("sparse", "dense", "multiclass")),
                                           ("reproduce-streamsvm", ("sparse", "dense")),
                                           ("reproduce-online", ("chessboard", "gaussians"))])
def test_quick_generates_only_what_it_reads(target, large):
    import subprocess

    def planned(args):
        # -n: print what would run; -B: as if nothing existed yet
        return subprocess.run(["make", "-n", "-B", "-C", ROOT, target, f"REPRODUCE_ARGS={args}"],
                              capture_output=True, text=True, check=True).stdout
    full, quick = planned(""), planned("--quick")
    for name in large:
        assert f"gen_data.py {name} " in full and f"gen_data.py {name} " not in quick, name
    assert "gen_data.py demo " in quick or target == "reproduce-online"
