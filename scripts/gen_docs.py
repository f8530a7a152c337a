#!/usr/bin/env python3
"""The parts of the docs that list what the code holds, generated from the code so that they cannot drift:
- docs/cli.md, the command-line reference (llsvm/cli/reference.py: the option rows, the specs, the commands);
- man/NAME.1, the commands' man pages (llsvm/cli/manpage.py, from the same; make man, make install-man);
- the blocks of docs/architecture.md between `<!-- generated: NAME -->` and `<!-- end: NAME -->`: the modules of
  llsvm/ with their layer (scripts/import_graph.py), the solvers and their code, the fields of SolverSpec and
  Params, the solvers' options classes, and the NumPy twins of tests/reference/.

    python scripts/gen_docs.py            # rewrite them
    python scripts/gen_docs.py --check    # exit 1 when a file differs from what the code gives (tests/test_docs.py)
"""
import argparse
import ast
import dataclasses
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "scripts"))

import import_graph  # noqa: E402
from llsvm import options as options_module  # noqa: E402
from llsvm.cli.manpage import pages  # noqa: E402
from llsvm.cli.reference import markdown  # noqa: E402
from llsvm.params import Params, SolverSpec, specs  # noqa: E402

CLI = os.path.join(ROOT, "docs", "cli.md")
ARCHITECTURE = os.path.join(ROOT, "docs", "architecture.md")
MAN = os.path.join(ROOT, "man")
BLOCK = re.compile(r"(<!-- generated: (?P<name>[\w-]+) -->\n)(?P<body>.*?)(<!-- end: (?P=name) -->)", re.S)


def _first_sentence(doc):
    text = " ".join((doc or "").split())
    m = re.match(r"(.+?\.)(\s|$)", text)
    return (m.group(1) if m else text).replace("|", "\\|")


def _docstring(path):
    return ast.get_docstring(ast.parse(open(path, encoding="utf-8").read(), path))


def modules_block():
    rows = ["| module | layer | what it holds |", "|---|---|---|"]
    mods = import_graph.modules()
    for name in sorted(mods):
        layer = import_graph.layer_of(name)
        where = "facade" if layer == -1 else import_graph.LAYERS[layer][0]
        path = os.path.relpath(mods[name], ROOT)
        rows.append(f"| `{path}` | {where} | {_first_sentence(_docstring(mods[name]))} |")
    return rows


def layers_block():
    private = {}
    graph = import_graph.edges(private)
    layered = {a: d for a, d in graph.items() if a not in import_graph.FACADES}
    rows = ["| layer | modules |", "|---|---|"]
    for name, patterns in import_graph.LAYERS:
        rows.append(f"| {name} | {', '.join(f'`{p}`' for p in patterns)} |")
    rows += ["", f"`python scripts/import_graph.py`: {len(layered)} modules, {len(import_graph.circles(layered))} "
                 f"circles, {len(import_graph.upward(layered))} arrows running back up, "
                 f"{sum(len(t) for t in private.values())} private names taken from other modules "
                 "(`tests/test_docs.py` fails on any)."]
    return rows


def solvers_block():
    rows = ["| -s | access | driver | options | --json metrics | model | on a cluster |",
            "|---|---|---|---|---|---|---|"]
    for s in specs():
        opts = f"`{s.options.__name__}`" if s.options else "–"
        cluster = s.cluster + (f" (`solvers/{s.cluster_run.replace(':', '.py: ')}`)" if s.cluster_run else "")
        rows.append(f"| {s.name} | {s.access} | `solvers/{s.driver_ref.replace(':', '.py: ')}` | {opts} | "
                    f"`solvers/{s.metrics_ref.replace(':', '.py: ')}` | {s.model_kind} | {cluster} |")
    return rows


def _field_comments(cls):
    """{field: its trailing comment} of a dataclass's source (the comment lines that continue it included)."""
    import inspect
    lines = inspect.getsource(cls).splitlines()
    out, last = {}, None
    for ln in lines:
        m = re.match(r"\s+(\w+): [^#]*?(#\s*(.*))?$", ln)
        if m and not ln.strip().startswith("#"):
            last = m.group(1)
            out[last] = (m.group(3) or "").strip()
        elif last and re.match(r"\s+#\s*(.*)", ln) and ln.index("#") > 20:
            out[last] += " " + ln.strip().lstrip("#").strip()
        else:
            last = None if ln.strip() and not ln.strip().startswith("#") else last
    return out


def fields_block(cls):
    comments = _field_comments(cls)
    rows = ["| field | default | meaning |", "|---|---|---|"]
    for f in dataclasses.fields(cls):
        if f.default is not dataclasses.MISSING:
            default = repr(f.default)
        elif f.default_factory is not dataclasses.MISSING:
            default = repr(f.default_factory())
        else:
            default = "(required)"
        rows.append(f"| `{f.name}` | `{default}` | {comments.get(f.name, '').replace('|', chr(92) + '|')} |")
    return rows


def options_block():
    rows = ["| class | solvers | fields (from the option rows) | the library's own fields |", "|---|---|---|---|"]
    for name in ("SMOOptions", "H1Options", "OnlineOptions", "OneDOptions", "LLSVMOptions", "StreamOptions"):
        cls = getattr(options_module, name)
        flagged = {options_module.OPTION[f].dest: f for f in cls.FLAGS}
        table = ", ".join(f"`{d}` ({f})" for d, f in flagged.items())
        own = ", ".join(f"`{f.name}`" for f in dataclasses.fields(cls) if f.name not in flagged) or "–"
        rows.append(f"| `{name}` | {', '.join(cls.SOLVERS)} | {table} | {own} |")
    return rows


def twins_block():
    folder = os.path.join(ROOT, "tests", "reference")
    rows = ["| twin | what it is |", "|---|---|"]
    for f in sorted(os.listdir(folder)):
        if f.endswith(".py") and f != "__init__.py":
            rows.append(f"| `tests/reference/{f}` | {_first_sentence(_docstring(os.path.join(folder, f)))} |")
    return rows


BLOCKS = {"modules": modules_block, "layers": layers_block, "solvers": solvers_block,
          "spec-fields": lambda: fields_block(SolverSpec), "params-fields": lambda: fields_block(Params),
          "options": options_block, "twins": twins_block}


def architecture(text):
    def fill(m):
        name = m.group("name")
        if name not in BLOCKS:
            raise SystemExit(f"{ARCHITECTURE}: unknown generated block {name}")
        return m.group(1) + "\n".join(BLOCKS[name]()) + "\n" + m.group(4)
    out = BLOCK.sub(fill, text)
    missing = set(BLOCKS) - set(m.group("name") for m in BLOCK.finditer(text))
    if missing:
        raise SystemExit(f"{ARCHITECTURE}: no generated block for {sorted(missing)}")
    return out


def version():
    """The version pyproject.toml declares (the man pages' footer)."""
    with open(os.path.join(ROOT, "pyproject.toml"), encoding="utf-8") as f:
        return re.search(r'(?m)^version = "([^"]+)"', f.read()).group(1)


def man_pages():
    """{path: text} of every man page."""
    return {os.path.join(MAN, name): text for name, text in pages(version()).items()}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true", help="compare, do not write")
    args = ap.parse_args(argv)
    status = 0
    wanted = {CLI: markdown(), ARCHITECTURE: architecture(open(ARCHITECTURE, encoding="utf-8").read()),
              **man_pages()}
    stale = sorted(set(os.path.join(MAN, f) for f in os.listdir(MAN) if f.endswith(".1")) - set(wanted)) \
        if os.path.isdir(MAN) else []
    for path in stale:                 # a page of a command that is no more
        if args.check:
            print(f"{os.path.relpath(path, ROOT)} is no command's page: run python scripts/gen_docs.py",
                  file=sys.stderr)
            status = 1
        else:
            os.remove(path)
            print(f"removed {os.path.relpath(path, ROOT)}")
    for path, text in wanted.items():
        current = open(path, encoding="utf-8").read() if os.path.exists(path) else ""
        if current == text:
            continue
        if args.check:
            print(f"{os.path.relpath(path, ROOT)} differs from the code: run python scripts/gen_docs.py",
                  file=sys.stderr)
            status = 1
        else:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path + ".tmp", "w", encoding="utf-8") as f:
                f.write(text)
            os.replace(path + ".tmp", path)
            print(f"wrote {os.path.relpath(path, ROOT)}")
    return status


if __name__ == "__main__":
    sys.exit(main())
