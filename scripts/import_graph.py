#!/usr/bin/env python3
"""llsvm's import graph, and the three rules it must keep (docs/architecture.md, section 2):
- no circle: no module reaches itself through the modules it imports;
- one way: every import goes from a layer to the same layer or one below it (LAYERS, top first);
- no private name crosses a module: no `from llsvm.x import _name`, no `x._name` of an imported llsvm module (a
  name another module needs is public where it lives).

Edges are read from the source (ast), not by importing it: every `import` and `from ... import` anywhere in a
module (in a function too: a deferred import is still a dependency), and the registry's references (a spec's
"module:attribute" of llsvm.solvers, which llsvm/solvers/registry.py imports on first use) as edges from the
registry. The packages' __init__ modules are the public facade (lazy exports, llsvm/lazy.py): they stand above
every layer; a module may use another package's facade (its public names), never its own package's.

    python scripts/import_graph.py            # the layers, the counts, every circle and upward arrow (exit 1 if any)
    python scripts/import_graph.py --edges    # also every edge
"""
import argparse
import ast
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE = os.path.join(ROOT, "llsvm")

# top first; a module matches the first pattern that names it (fnmatch-like: a trailing .* is a package's modules)
LAYERS = (
    ("commands", ("llsvm.cli.*",)),
    ("estimators", ("llsvm.sklearn", "llsvm.sklearn.*")),
    ("cluster client", ("llsvm.dask.client",)),
    ("cluster tasks", ("llsvm.dask.tasks",)),
    ("training", ("llsvm.solvers.registry", "llsvm.solvers.trainer", "llsvm.solvers.grid")),
    ("drivers", ("llsvm.solvers.*",)),
    ("data and models", ("llsvm.predict", "llsvm.plots", "llsvm.measures", "llsvm.io", "llsvm.models.*", "llsvm.binfmt",
                         "llsvm.textio", "llsvm.dataset", "llsvm.sources", "llsvm.hashing", "llsvm.scale")),
    ("parameters", ("llsvm.params", "llsvm.options")),
    ("base", ("llsvm.memory", "llsvm.errors", "llsvm.fileutil", "llsvm.report", "llsvm.lazy", "llsvm.stop",
              "llsvm._ext.*")),
)
FACADES = ("llsvm", "llsvm.cli", "llsvm.solvers", "llsvm.models", "llsvm.dask", "llsvm._ext")


GENERATED = ("llsvm._ext._build_info",)        # written by setup.py's build_ext (untracked): not the code's


def modules():
    """{module name: path} of every .py module of the package but the GENERATED ones (compiled kernels appear as
    llsvm._ext.NAME when imported)."""
    out = {}
    for folder, _, files in os.walk(PACKAGE):
        for f in files:
            if f.endswith(".py") and os.path.relpath(os.path.join(folder, f), ROOT)[:-3].replace(os.sep, ".") \
                    not in GENERATED:
                rel = os.path.relpath(os.path.join(folder, f), ROOT)[:-3].replace(os.sep, ".")
                out[rel.removesuffix(".__init__")] = os.path.join(folder, f)
    return out


def _resolve(name, level, current, is_package):
    if level == 0:
        return name
    base = current.split(".") if is_package else current.split(".")[:-1]
    base = base[:len(base) - (level - 1)]
    return ".".join(base + ([name] if name else []))


def _private(name):
    return name.startswith("_") and not name.startswith("__")


def _scan(name, path, known):
    """(the llsvm modules a module imports, [(module, private name)] it takes from other modules)."""
    tree = ast.parse(open(path, encoding="utf-8").read(), path)
    is_package = path.endswith("__init__.py")
    deps, taken, bound = set(), [], {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
            bound.update({(a.asname or a.name.split(".")[0]): a.name for a in node.names if a.asname})
        elif isinstance(node, ast.ImportFrom):
            target = _resolve(node.module or "", node.level, name, is_package)
            targets = []
            for a in node.names:
                sub = f"{target}.{a.name}"
                if sub in known or sub.startswith("llsvm._ext."):      # a module (the kernels' are compiled)
                    targets.append(sub)
                    bound[a.asname or a.name] = sub
                else:
                    targets.append(target)
                    if _private(a.name) and target != name and target.startswith("llsvm"):
                        taken.append((target, a.name))
        else:
            continue
        deps |= {t for t in targets if t == "llsvm" or t.startswith("llsvm.")}
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and _private(node.attr):
            module = bound.get(node.value.id)
            if module is not None and module != name and module.startswith("llsvm") and \
                    not module.startswith("llsvm._ext"):
                taken.append((module, node.attr))
    deps.discard(name)
    return deps, sorted(set(taken))


def edges(private=None):
    """{module: set of llsvm modules it imports}; with a dict `private`, also {module: [(module, private name)]
    it takes from others}."""
    mods = modules()
    known = set(mods)
    out = {}
    for name, path in mods.items():
        out[name], taken = _scan(name, path, known)
        if private is not None and taken:
            private[name] = taken
    registry = "llsvm.solvers.registry"
    if registry in out:
        out[registry] |= _registry_refs()
    return out


def _registry_refs():
    """The modules the specs name as "module:attribute" (llsvm/params.py): the registry imports them."""
    text = open(os.path.join(PACKAGE, "params.py"), encoding="utf-8").read()
    return {f"llsvm.solvers.{m}" for m in re.findall(r'"(\w+):\w+"', text)}


def layer_of(module):
    if module in FACADES:
        return -1
    for i, (_, patterns) in enumerate(LAYERS):
        for p in patterns:
            if module == p or (p.endswith(".*") and module.startswith(p[:-1])):
                return i
    return None


def circles(graph):
    """Every strongly connected set of more than one module (Tarjan), each a sorted list."""
    index, low, stack, on, found = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def upward(graph):
    """(importer, imported) pairs that run back up: to a higher layer, or to a package's facade from inside that
    package (from outside, a facade is the package's public names: llsvm-predict's `from ..models import
    load_model`)."""
    bad = []
    for a, deps in sorted(graph.items()):
        la = layer_of(a)
        if la == -1:
            continue
        for b in sorted(deps):
            lb = layer_of(b)
            if lb == -1:
                if a.startswith(b + "."):
                    bad.append((a, b))
            elif lb is None or la is None or lb < la:
                bad.append((a, b))
    return bad


def unplaced(graph):
    return sorted(m for m in set(graph) | {d for ds in graph.values() for d in ds} if layer_of(m) is None)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--edges", action="store_true", help="print every edge")
    args = ap.parse_args(argv)
    private = {}
    graph = edges(private)
    # the facades are the public surface: their lazy tables are not dependencies of the layers
    layered = {a: {b for b in deps} for a, deps in graph.items() if a not in FACADES}
    for i, (name, patterns) in enumerate(LAYERS):
        print(f"layer {i} {name}: {', '.join(patterns)}")
    n_edges = sum(len(d) for d in layered.values())
    cyc = circles(layered)
    up = upward(layered)
    lost = unplaced(layered)
    n_private = sum(len(t) for t in private.values())
    print(f"{len(layered)} modules, {n_edges} imports; circles: {len(cyc)}; arrows running back up: {len(up)}; "
          f"modules in no layer: {len(lost)}; private names taken from other modules: {n_private}")
    if args.edges:
        for a in sorted(layered):
            for b in sorted(layered[a]):
                print(f"  {a} -> {b}")
    for c in cyc:
        print("circle: " + " <-> ".join(c))
    for a, b in up:
        print(f"upward: {a} (layer {layer_of(a)}) -> {b} (layer {layer_of(b)})")
    for m in lost:
        print(f"in no layer: {m}")
    for a, taken in sorted(private.items()):
        for module, attr in taken:
            print(f"private: {a} takes {module}.{attr}")
    return 1 if cyc or up or lost or n_private else 0


if __name__ == "__main__":
    sys.exit(main())
