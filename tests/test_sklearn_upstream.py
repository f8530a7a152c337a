"""scikit-learn's own tests of its SVM estimators with llsvm's classes substituted (issue 45, "the measure";
scripts/sklearn_upstream.py, tests/sklearn_upstream/): every test that touches an llsvm class passes, or is listed
with its reason in tests/sklearn_upstream/known_failures.tsv, and no listed test passes.

scikit-learn is a test dependency (imported, not importorskip'd); an installation of it without its tests (its wheel
ships them) skips this, saying so. The harness's pytest runs in a subprocess from a temporary directory: its
plugin never enters this process.
"""
import importlib.util
import sys

import pytest
import sklearn  # noqa: F401  (a test dependency: missing, the suite fails)
import sklearn.svm

from conftest import REPO_ROOT

# loaded from its path, not `import sklearn_upstream`: that name is tests/sklearn_upstream/, the plugin's package,
# which this process never imports
_spec = importlib.util.spec_from_file_location("sklearn_upstream_harness",
                                               REPO_ROOT / "scripts" / "sklearn_upstream.py")
harness = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(harness)

HOW = ("a touched test that fails is fixed or listed in tests/sklearn_upstream/known_failures.tsv with its reason; "
       "a listed test that passes is removed from it (`python scripts/sklearn_upstream.py --classes llsvm "
       "--write-known` rewrites the list from a run, keeping the reasons; the whole report: "
       "`python scripts/sklearn_upstream.py`)")


def test_sklearn_svm_tests_pass_or_are_listed(tmp_path):
    missing = harness.tests_missing()
    if missing:
        pytest.skip(missing)
    known = harness.load_known()
    result = harness.run("llsvm", tmp_path)
    touched = harness.touched(result)
    assert touched, "no test of scikit-learn's touched an llsvm class: the substitution did not happen"
    found = harness.problems(result, known)
    assert not found, (f"scikit-learn {result['sklearn']}'s tests with llsvm's classes, {len(found)} problems:\n  "
                       + "\n  ".join(found[:60]) + ("\n  ..." if len(found) > 60 else "") + f"\n{HOW}")
    # the substitution stayed in the subprocess
    assert "sklearn_upstream.plugin" not in sys.modules
    assert sklearn.svm.SVC.__module__ == "sklearn.svm._classes"
