"""Names a package exports from its modules, imported on first use (PEP 562): `import llsvm` or `import
llsvm.solvers` (which every `import llsvm.solvers.registry` runs first) then imports none of the modules, so a
command imports only what it runs (issue 26: start-up)."""
import importlib


def exports(package, table):
    """The module-level __getattr__ and __dir__ of `package` for `table` = {module: (name, ...)}: `package.name`
    imports `package.module` and caches the name in the package's namespace."""
    home = {name: module for module, names in table.items() for name in names}
    namespace = importlib.import_module(package).__dict__

    def __getattr__(name):
        module = home.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f".{module}", package), name)
        namespace[name] = value
        return value

    def __dir__():
        return sorted(set(namespace) | set(home))

    return __getattr__, __dir__
