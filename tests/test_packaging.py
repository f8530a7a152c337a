"""The distribution holds every module of the tree: what a wheel or `pip install .` gets is what the suite tests.

The suite runs the editable install, which finds every module wherever it is; a regular install holds only the
packages the build configuration lists. So these tests compare the build configuration (pyproject.toml, read by
setuptools as a build would read it) with the tree, cheaply, without building a wheel (`make wheel` and the
closing note of issue 26 check a real wheel in a bare venv)."""
import ast
import glob
import os

import pytest
from setuptools.config.pyprojecttoml import read_configuration

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def configured_packages():
    """The package list a build of this tree uses (setuptools expands [tool.setuptools.packages.find])."""
    config = read_configuration(os.path.join(REPO, "pyproject.toml"), expand=True)
    return set(config["tool"]["setuptools"]["packages"])


def tree_packages():
    """Every directory under llsvm/ that holds Python source or a kernel's target, as a dotted package name."""
    found = set()
    for path in glob.glob(os.path.join(REPO, "llsvm", "**", "*.py"), recursive=True):
        rel = os.path.relpath(os.path.dirname(path), REPO)
        if "__pycache__" not in rel.split(os.sep):
            found.add(rel.replace(os.sep, "."))
    return found


def test_every_package_of_the_tree_is_distributed():
    missing = tree_packages() - configured_packages()
    assert not missing, f"packages under llsvm/ that a wheel would leave out: {sorted(missing)}"


def test_every_package_has_an_init():
    """A directory without __init__.py would be a namespace package: found only by the editable install's finder
    on some setups, and easy to drop from a wheel."""
    for package in tree_packages():
        init = os.path.join(REPO, *package.split("."), "__init__.py")
        assert os.path.isfile(init), f"{package} has no __init__.py"


def test_kernels_land_in_a_distributed_package():
    """setup.py builds every cext/<stem>.pyx as llsvm._ext.<stem>: that package must be in the distribution."""
    assert glob.glob(os.path.join(REPO, "cext", "*.pyx"))
    assert "llsvm._ext" in configured_packages()


def _imports(path):
    tree = ast.parse(open(path, encoding="utf-8").read(), path)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield 0, alias.name
        elif isinstance(node, ast.ImportFrom):
            yield node.level, node.module or ""


@pytest.mark.parametrize("path", sorted(glob.glob(os.path.join(REPO, "llsvm", "**", "*.py"), recursive=True)),
                         ids=lambda p: os.path.relpath(p, REPO))
def test_modules_import_only_distributed_code(path):
    """No module of the package reaches for the repository's other folders (scripts/, tests/, fuzz/), which a wheel
    does not hold, and every absolute llsvm import names a distributed package."""
    packages = configured_packages()
    for level, name in _imports(path):
        if level:
            continue
        top = name.split(".")[0]
        assert top not in ("scripts", "tests", "fuzz", "cext"), f"{path} imports {name}"
        if top == "llsvm":
            parts = name.split(".")
            assert any(".".join(parts[:i]) in packages for i in range(len(parts), 0, -1)), f"{path}: {name}"


def test_licence_is_declared_and_shipped():
    """LICENSE (BSD-3-Clause, as LIBLINEAR, LIBSVM and scikit-learn) is the project's licence expression and a
    licence file of the distribution (setuptools puts it in the wheel's .dist-info/licenses)."""
    config = read_configuration(os.path.join(REPO, "pyproject.toml"), expand=True)
    assert config["project"]["license"] == "BSD-3-Clause"
    assert config["project"]["license-files"] == ["LICENSE"]
    text = open(os.path.join(REPO, "LICENSE"), encoding="utf-8").read()
    assert text.startswith("BSD 3-Clause License\n") and "Copyright (c) the llsvm developers" in text


def test_build_info_is_generated_and_untracked():
    """llsvm/_ext/_build_info.py (llsvm-* --version) is written by setup.py's build_ext beside the kernels, in the
    tree and in a wheel's build directory (a module of the distributed package llsvm._ext), and git ignores it."""
    import subprocess
    path = os.path.join("llsvm", "_ext", "_build_info.py")
    assert os.path.isfile(os.path.join(REPO, path))
    assert "llsvm._ext" in configured_packages()
    ignored = subprocess.run(["git", "check-ignore", "-q", path], cwd=REPO)
    assert ignored.returncode == 0
    tracked = subprocess.run(["git", "ls-files", path], cwd=REPO, capture_output=True, text=True)
    assert tracked.stdout == ""
    setup = open(os.path.join(REPO, "setup.py"), encoding="utf-8").read()
    assert "write_build_info(self.build_lib)" in setup
