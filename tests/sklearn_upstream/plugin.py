"""pytest plugin: scikit-learn's own tests of its SVM estimators, run with llsvm's classes substituted (issue 45).

scripts/sklearn_upstream.py loads it into a pytest of its own (`-p sklearn_upstream.plugin`, tests/ on PYTHONPATH),
in a subprocess started from a temporary directory: the suite's own pytest never imports it, so nothing here
reaches the rest of the suite.

--llsvm-classes=llsvm (default) replaces, before any test module is imported, the names the test modules take
their classes from: sklearn.svm.{LinearSVC, LinearSVR, SVC, NuSVC, SVR, NuSVR, OneClassSVM} (`from sklearn import
svm` then `svm.SVC`, and `from sklearn.svm import SVC`) and sklearn.linear_model.LogisticRegression, each with
llsvm.sklearn's class of the same name where llsvm has one (a name llsvm lacks keeps scikit-learn's class).
scikit-learn's own modules (sklearn.svm._classes, sklearn.linear_model._logistic) keep theirs, as in the program of
a user who changed their imports. After collection every test module's globals are checked: a substituted
scikit-learn class still there is reported (`unsubstituted`). --llsvm-classes=sklearn substitutes nothing (the
same selection with scikit-learn's own classes).

A test touches an llsvm class when an llsvm estimator is constructed from its setup to its teardown (each
substituted class's __init__ is wrapped to note it), or when its parametrisation holds an llsvm estimator or class
(those are built at collection).

The selection: test_svm.py, test_sparse.py and test_bounds.py whole; of test_logistic.py only its liblinear cases,
the tests that (a) are parametrised with a value "liblinear" (`solver` from SOLVERS), or (b) pass
solver="liblinear" as a keyword in their body (LogisticRegression(solver="liblinear"), Estimator(solver=...),
_logistic_regression_path(..., solver=...)), or (c) loop with the name `solver` (a for statement or a
comprehension) over a collection that holds "liblinear" (the collection's expression evaluated in the test
module's namespace: `for solver in SOLVERS`, yes; `set(SOLVERS) - set(["liblinear"])`, no). On scikit-learn 1.9.1
these are the 36 tests in which scikit-learn's LogisticRegression trains with LIBLINEAR (its _fit_liblinear is
called) and the 8 that check a liblinear combination is refused before any training.

--llsvm-upstream-out=PATH: a JSON file written at the end, {"classes", "sklearn", "tests": {id: {"outcome",
"touched", "message"}}, "collection_errors": {path: first line}, "unsubstituted": [...], "deselected": n}. An id is
the test's path under site-packages and its name, "sklearn/svm/tests/test_svm.py::test_x[param]". outcome:
passed, failed, error (setup or teardown failed), skipped, xfail, xpass. touched: the llsvm classes the test
touched (sorted; empty when none). message: the first line of the failure's exception ("TypeError: ..."), the
skip or xfail reason, else "". detail: a failure's exception text (its first DETAIL characters), else "".
"""
import ast
import functools
import inspect
import json
import os
import pathlib
import sys
import textwrap

import pytest

# where the test modules take the classes from: module -> names
SUBSTITUTED = {"sklearn.svm": ("LinearSVC", "LinearSVR", "SVC", "NuSVC", "SVR", "NuSVR", "OneClassSVM"),
               "sklearn.linear_model": ("LogisticRegression",)}
LOGISTIC = "sklearn/linear_model/tests/test_logistic.py"
DETAIL = 1000              # characters of a failure's exception text kept (its first lines: a regex mismatch's
                           # actual message is on its third)

_current = None            # the touched set of the test running now (None between tests)
_touching = {}             # llsvm class -> its name, for the parametrisation check
_originals = {}            # id(scikit-learn class) -> "module.Name", for the check of the test modules' globals
_touched_key = pytest.StashKey()   # an item's touched set
_ids = {}                  # nodeid -> (test id, touched classes), at the teardown's report
_results = {}              # nodeid -> {"outcome", "message", "detail"}
_collection_errors = {}
_deselected = 0


def pytest_addoption(parser):
    group = parser.getgroup("llsvm", "llsvm: scikit-learn's tests with llsvm's classes (issue 45)")
    group.addoption("--llsvm-classes", choices=("llsvm", "sklearn"), default="llsvm",
                    help="whose classes the tests use (default llsvm: llsvm.sklearn's, substituted)")
    group.addoption("--llsvm-upstream-out", default=None, help="the JSON file of the outcomes (see the plugin)")


def _observed(cls, name):
    """Wraps cls.__init__ (its signature kept: __wrapped__) so that constructing one is noted for the test running."""
    init = cls.__dict__.get("__init__", cls.__init__)

    @functools.wraps(init)
    def __init__(self, *args, **kwargs):
        if _current is not None:
            _current.add(name)
        init(self, *args, **kwargs)
    cls.__init__ = __init__


def pytest_configure(config):
    """The substitution, before collection imports any test module."""
    if config.getoption("--llsvm-classes") != "llsvm":
        return
    import importlib
    import llsvm.sklearn as ours
    for module_name, names in SUBSTITUTED.items():
        module = importlib.import_module(module_name)
        for name in names:
            cls = getattr(ours, name, None)
            if cls is None:
                continue
            _originals[id(getattr(module, name))] = f"{module_name}.{name}"
            setattr(module, name, cls)
            if cls not in _touching:
                _touching[cls] = name
                _observed(cls, name)


def _values(params):
    for v in params.values():
        yield from (v if isinstance(v, (tuple, list)) else (v,))


def _param_touches(item):
    """The llsvm classes the test's parametrisation holds (as estimators or classes)."""
    params = getattr(getattr(item, "callspec", None), "params", {})
    out = set()
    for v in _values(params):
        for cls, name in _touching.items():
            if v is cls or isinstance(v, cls):
                out.add(name)
    return out


def test_id(item):
    """The item's id: its file's path under site-packages (the parent of the sklearn package) and its name."""
    root = pathlib.Path(sys.modules["sklearn"].__file__).resolve().parent.parent
    path = pathlib.Path(str(item.path)).resolve()
    try:
        rel = path.relative_to(root).as_posix()
    except ValueError:
        rel = path.as_posix()
    return rel + "::" + item.nodeid.split("::", 1)[1]


def _loops_over_liblinear(node, namespace):
    """(c): a for statement or comprehension of the name `solver` over a collection holding "liblinear"."""
    for n in ast.walk(node):
        if isinstance(n, (ast.For, ast.comprehension)) and isinstance(n.target, ast.Name) \
                and n.target.id == "solver":
            try:
                collection = eval(compile(ast.Expression(n.iter), "<iter>", "eval"), dict(namespace))
                if "liblinear" in list(collection):
                    return True
            except Exception:  # an expression of the test's locals: not decidable here, so not selected by (c)
                continue
    return False


@functools.lru_cache(maxsize=None)
def _body_selects(function):
    """(b) or (c) for a test function of test_logistic.py."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(function)))
    keyword = any(isinstance(n, ast.keyword) and n.arg == "solver" and isinstance(n.value, ast.Constant)
                  and n.value.value == "liblinear" for n in ast.walk(tree))
    return keyword or _loops_over_liblinear(tree, function.__globals__)


def liblinear_case(item):
    """The rule that selects test_logistic.py's liblinear cases (the module's docstring)."""
    params = getattr(getattr(item, "callspec", None), "params", {})
    if any(isinstance(v, str) and v == "liblinear" for v in _values(params)):
        return True
    function = getattr(item, "function", None)
    return function is not None and _body_selects(getattr(function, "__func__", function))


def pytest_collection_modifyitems(session, config, items):
    global _deselected
    keep, drop = [], []
    for item in items:
        (drop if test_id(item).startswith(LOGISTIC + "::") and not liblinear_case(item) else keep).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep
        _deselected += len(drop)


def _unsubstituted():
    """Names in the test modules' globals still bound to a scikit-learn class that was substituted."""
    out = []
    for module_name, module in list(sys.modules.items()):
        if module is None or ".tests." not in module_name or not module_name.startswith("sklearn."):
            continue
        for name, value in list(vars(module).items()):
            if id(value) in _originals and isinstance(value, type):
                out.append(f"{module_name}.{name} is {_originals[id(value)]}")
    return sorted(out)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    global _current
    _current = set(_param_touches(item))
    item.stash[_touched_key] = _current
    try:
        yield
    finally:
        _current = None


def _crash(report):
    """The failure's exception text ("TypeError: ..."), or the skip's reason."""
    crash = getattr(report.longrepr, "reprcrash", None)
    if crash is not None:
        return crash.message.strip()
    if isinstance(report.longrepr, tuple):           # a skip: (path, line, reason)
        return str(report.longrepr[2]).strip()
    return str(report.longrepr or "").strip()


def _first_line(text):
    lines = text.splitlines()
    return lines[0] if lines else ""


def pytest_runtest_logreport(report):
    if report.when == "setup":
        _results[report.nodeid] = {"outcome": None, "message": "", "detail": ""}
    entry = _results.setdefault(report.nodeid, {"outcome": None, "message": "", "detail": ""})
    wasxfail = getattr(report, "wasxfail", None)
    if report.failed:
        if entry["outcome"] in (None, "passed", "xpass", "skipped"):
            entry["outcome"] = "failed" if report.when == "call" else "error"
            text = _crash(report)
            entry["message"], entry["detail"] = _first_line(text), text[:DETAIL]
    elif report.skipped:
        entry["outcome"] = "xfail" if wasxfail is not None else "skipped"
        entry["message"] = _first_line(wasxfail.strip() if wasxfail is not None else _crash(report))
    elif report.when == "call":
        entry["outcome"] = "xpass" if wasxfail is not None else "passed"


def pytest_collectreport(report):
    if report.failed:
        _collection_errors[report.nodeid or "<session>"] = _first_line(_crash(report))


def pytest_runtest_makereport(item, call):
    # the touched set, read at the last phase (a class constructed in a teardown counts)
    if call.when == "teardown":
        _ids[item.nodeid] = (test_id(item), sorted(item.stash.get(_touched_key, set())))


def pytest_sessionfinish(session, exitstatus):
    out = session.config.getoption("--llsvm-upstream-out")
    if not out:
        return
    import sklearn
    tests = {}
    for nodeid, entry in _results.items():
        tid, touched = _ids.get(nodeid, (nodeid, []))
        tests[tid] = {"outcome": entry["outcome"] or "error", "touched": touched, "message": entry["message"],
                      "detail": entry["detail"]}
    data = {"classes": session.config.getoption("--llsvm-classes"), "sklearn": sklearn.__version__,
            "tests": tests, "collection_errors": _collection_errors, "unsubstituted": _unsubstituted(),
            "deselected": _deselected}
    tmp = f"{out}.{os.getpid()}.tmp"
    with open(tmp, "w") as f:
        json.dump(data, f, indent=1, sort_keys=True)
    os.replace(tmp, out)
