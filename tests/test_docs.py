"""The docs match the code, and the code keeps its shape (issue 28):
- docs/cli.md and the generated blocks of docs/architecture.md are what scripts/gen_docs.py makes from the code
  now (a driver, an option, a module or a twin missing from them fails here);
- the import graph has no circle and no arrow running back up (scripts/import_graph.py);
- every option is one row: its solvers exist, in the registry's order; every options field comes from a row or is
  the library's own; the Click command has exactly the rows' options;
- llsvm-train's command stays thin; no path outside the repository in code, docs or README.
"""
import ast
import os
import pathlib
import re
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

import gen_docs  # noqa: E402
import import_graph  # noqa: E402

from llsvm import options  # noqa: E402
from llsvm.params import specs  # noqa: E402


def test_generated_docs_match_the_code():
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "gen_docs.py"), "--check"], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr


@pytest.mark.parametrize("block", sorted(gen_docs.BLOCKS))
def test_every_generated_block_is_in_architecture_md(block):
    text = (ROOT / "docs" / "architecture.md").read_text()
    assert f"<!-- generated: {block} -->" in text and f"<!-- end: {block} -->" in text


def test_docs_name_every_driver_option_and_twin():
    arch = (ROOT / "docs" / "architecture.md").read_text()
    cli = (ROOT / "docs" / "cli.md").read_text()
    for spec in specs():
        assert f"`solvers/{spec.driver_ref.split(':')[0]}.py: " in arch, spec.name
        assert f"\n| {spec.name} | " in cli, spec.name
    for row in options.OPTIONS:
        if not row.hidden:
            assert row.flag.split()[0] in cli, row.flag
    for twin in (ROOT / "tests" / "reference").glob("*.py"):
        if twin.name != "__init__.py":
            assert f"`tests/reference/{twin.name}`" in arch, twin.name
    for module in import_graph.modules().values():
        assert f"`{os.path.relpath(module, ROOT)}`" in arch, module


def test_import_graph_has_no_circle_and_flows_one_way():
    private = {}
    graph = {a: d for a, d in import_graph.edges(private).items() if a not in import_graph.FACADES}
    assert import_graph.circles(graph) == []
    assert import_graph.upward(graph) == []
    assert import_graph.unplaced(graph) == []
    assert private == {}


def test_import_graph_sees_a_circle_and_an_upward_arrow():
    """The check can fail: a circle and an arrow back up in a made-up graph are found; the commands stand above
    the estimators, which stand above the Dask wing's client, above its tasks."""
    graph = {"llsvm.params": {"llsvm.solvers.registry"}, "llsvm.solvers.registry": {"llsvm.params"}}
    assert import_graph.circles(graph) == [["llsvm.params", "llsvm.solvers.registry"]]
    assert import_graph.upward(graph) == [("llsvm.params", "llsvm.solvers.registry")]
    up = {"llsvm.dask.client": {"llsvm.cli.declare", "llsvm.sklearn", "llsvm.dask.tasks"},
          "llsvm.dask.tasks": {"llsvm.dask.client", "llsvm.solvers.trainer"}, "llsvm.sklearn": {"llsvm.cli.common"},
          "llsvm.cli.train": {"llsvm.sklearn", "llsvm.dask.client"}}
    assert import_graph.upward(up) == [("llsvm.dask.client", "llsvm.cli.declare"),
                                       ("llsvm.dask.client", "llsvm.sklearn"),
                                       ("llsvm.dask.tasks", "llsvm.dask.client"), ("llsvm.sklearn", "llsvm.cli.common")]


def test_import_graph_sees_a_private_name_taken(tmp_path):
    """The check can fail: `from llsvm.x import _name` and `x._name` of an imported llsvm module are found; a
    module's own names, dunders and the compiled kernels' modules are not."""
    path = tmp_path / "m.py"
    path.write_text("from llsvm.solvers.trainer import _fit, train\nfrom llsvm.solvers import h1tree\n"
                    "from llsvm._ext import _linear\nimport llsvm.report as report\n"
                    "def f():\n    h1tree._setup(); h1tree.TreeRun; report.__name__; _linear.x; report._writer\n")
    known = {"llsvm.solvers.trainer", "llsvm.solvers.h1tree", "llsvm.report", "llsvm.m"}
    deps, taken = import_graph._scan("llsvm.m", str(path), known)
    assert taken == [("llsvm.report", "_writer"), ("llsvm.solvers.h1tree", "_setup"),
                     ("llsvm.solvers.trainer", "_fit")]
    assert deps == {"llsvm.solvers.trainer", "llsvm.solvers.h1tree", "llsvm._ext._linear", "llsvm.report"}


def test_option_rows_name_registered_solvers_in_the_registry_order():
    order = [s.name for s in specs()]
    for row in options.OPTIONS:
        if row.solvers is not None:
            assert set(row.solvers) <= set(order), row.flag
            assert list(row.solvers) == [n for n in order if n in row.solvers], row.flag
        if isinstance(row.default, dict):
            assert set(row.default) <= set(row.solvers), row.flag


def test_options_classes_take_their_fields_from_the_rows():
    for spec in specs():
        cls = spec.options
        if cls is None:
            continue
        rows = {r.dest for r in options.OPTIONS if r.where == "options" and r.solvers and spec.name in r.solvers}
        fields = {r.dest for r in cls.rows()}
        assert rows <= fields, (spec.name, rows - fields)
        for row in cls.rows():
            assert getattr(cls(), row.dest) == row.default_for(*cls.SOLVERS), (cls.__name__, row.flag)


def test_estimator_parameters_come_from_the_rows():
    """The parameters of a solver's estimator (issue 30): the rows it takes, with its defaults."""
    from llsvm.params import estimator_parameters
    smo = estimator_parameters("smo")
    assert smo["C"] == 1.0 and smo["kernel_type"] == 2 and smo["cache_size"] == 100.0 and "svr_p" not in smo
    assert "hard_class" not in smo and "regularize_bias" not in smo and "eps" in smo
    assert estimator_parameters("bm")["inner_iter"] == 300 and estimator_parameters("llsvm")["inner_iter"] == 5
    assert "inner_iter" not in estimator_parameters("streamsvm")
    assert estimator_parameters(11)["svr_p"] == 0.1 and estimator_parameters(0)["regularize_bias"] is True


def test_click_options_are_exactly_the_rows():
    from llsvm.cli.train import main
    # --help-all and --version print and exit (Click's eager options, like --help): no value, no row
    names = {p.name for p in main.params if p.param_type_name == "option" and p.expose_value}
    assert names == {r.dest for r in options.OPTIONS if r.decls != ()}
    assert {p.name for p in main.params if not p.expose_value} == {"help_all", "version"}


def test_train_command_is_thin():
    path = ROOT / "llsvm" / "cli" / "train.py"
    text = path.read_text()
    assert len(text.splitlines()) < 200
    tree = ast.parse(text)
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef):
            assert node.end_lineno - node.lineno + 1 <= 80, node.name
    main = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "main")
    assert [a.arg for a in main.args.args] == ["training_set_file", "model_file"] and main.args.kwarg is not None
    for spec in specs():        # no solver's name in the command
        if not spec.name.isdigit():
            assert not re.search(rf"[\"']{re.escape(spec.name)}[\"']", text), spec.name


OUTSIDE = re.compile("|".join([re.escape("../" + "shared"), re.escape("shared/" + "specs"), "/wo" + "rk/"]))


def test_no_path_outside_the_repository():
    """Code, docs, README, scripts, tests and the Makefile name no path outside the clone (CI's own configuration,
    .ci/run, is where the CI machine's mirror of the data sets is named)."""
    found = []
    for pattern in ("llsvm/**/*.py", "cext/*.pyx", "cext/*.pxd", "docs/*.md", "README.md", "scripts/*.py",
                    "tests/**/*.py", "fuzz/*.py", "Makefile", "data/Makefile.mk", "setup.py", "pyproject.toml"):
        for path in ROOT.glob(pattern):
            for i, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
                if OUTSIDE.search(line):
                    found.append(f"{path.relative_to(ROOT)}:{i}: {line.strip()}")
    assert not found, "\n".join(found)
