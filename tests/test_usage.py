"""What a person reads at a terminal (issue 48): llsvm-train's compact usage (LIBLINEAR's `train` usage: one screen,
80 columns), --help-all, --help SOLVER for every solver, every command's --help within 80 columns, --version's
fields on every console script, "did you mean" for a mistyped solver or long option, and the exit codes."""
import hashlib
import importlib.metadata
import os
import subprocess
import sys
import tomllib

import Cython
import pytest
from click.testing import CliRunner
from conftest import assert_exit, write_small_set

from llsvm.cli import convert, easy, predict, scale, svmtrain
from llsvm.cli.train import main as train_main
from llsvm.options import OPTIONS
from llsvm.params import specs

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# LIBLINEAR's train (a build of LIBLINEAR 2.50's sources, which no package installs: the test dependency
# liblinear-official is its library alone). Where it is, every comparison below runs it and also checks that what
# it printed is what is recorded here; elsewhere (a clean machine, CI) the recording stands in for it.
LIBLINEAR_TRAIN = os.environ.get("LLSVM_LIBLINEAR_TRAIN", "/tmp/ref/liblinear/train")
RECORDED = {
    # train's arguments after the program: (exit code, stdout, stderr), stdout as (lines, first line, SHA-256 of
    # the whole, first 32 hex digits) when long
    (): (1, (43, "Usage: train [options] training_set_file [model_file]", "eee3ec8376d9ae14b3be383df0de96df"), ""),
    ("-s", "99"): (1, "", "ERROR: unknown solver type\n"),
}
WIDE = "200"                # a terminal wider than 80 columns (shutil.get_terminal_size): the texts stay within 80


def liblinear_train(*args, files=()):
    """LIBLINEAR's train run with `args` (then `files`): (exit code, stdout, stderr), stdout as RECORDED gives it;
    from the binary where it is (what it printed checked against RECORDED first), else RECORDED's."""
    want = RECORDED[args]
    if not os.access(LIBLINEAR_TRAIN, os.X_OK):
        return want
    ref = subprocess.run([LIBLINEAR_TRAIN, *args, *map(str, files)], capture_output=True, text=True, timeout=60)
    out = ref.stdout
    if isinstance(want[1], tuple):
        out = (len(out.splitlines()), out.splitlines()[0] if out else "",
               hashlib.sha256(out.encode()).hexdigest()[:32])
    got = (ref.returncode, out, ref.stderr)
    assert got == want, (args, got)
    return got


def invoke(command, args, prog="llsvm-train"):
    return CliRunner(env={"COLUMNS": WIDE}).invoke(command, args, prog_name=prog)


def assert_fits(text, max_lines=None):
    lines = text.splitlines()
    wide = [ln for ln in lines if len(ln) > 80]
    assert not wide, wide
    if max_lines is not None:
        assert len(lines) <= max_lines, len(lines)


def test_compact_usage_fits_one_screen_and_names_every_solver():
    r = invoke(train_main, ["--help"])
    assert_exit(r, 0)
    text = r.stdout
    assert_fits(text, max_lines=45)
    assert text.startswith("Usage: llsvm-train [options] training_set_file [model_file]\n")
    # LIBLINEAR's solvers as train lists them, llsvm's by family: every solver once
    words = " ".join(text.split()).replace(";", " ").split()
    for spec in specs():
        if spec.number is not None:
            assert f"{spec.number:>2} -- {spec.title}" in text, spec.name
        else:
            assert words.count(spec.name) == 1, spec.name
    # the common options (the rows marked so), LIBLINEAR's first, then the pointer to the rest
    for flag in ("-s type", "-c cost", "-p epsilon", "-n nu", "-e epsilon", "-B bias", "-R", "-wi weight",
                 "-v n", "-C", "-q", "-W weight_file", "-i initial_model"):
        assert any(ln.startswith(f"{flag} : ") for ln in text.splitlines()), flag
    assert {r.flag for r in OPTIONS if r.common} == {"-s", "-c", "-p", "-n", "-e", "-B", "-R", "--weight", "-v",
                                                     "-C", "-q", "-W", "-i"}
    flat = " ".join(text.split())
    assert "--help-all (every option)" in flat and "--help SOLVER or -s SOLVER -h" in flat
    # -h alone is the same text; no arguments: the same on stderr, a usage error (exit 2, Click's no_args_is_help)
    h = invoke(train_main, ["-h"])
    assert_exit(h, 0)
    assert h.stdout == text
    bare = invoke(train_main, [])
    assert_exit(bare, 2)
    assert bare.stdout == "" and bare.stderr == text


def test_compact_usage_is_shorter_than_liblinears_and_as_narrow_as_it_should_be():
    """LIBLINEAR's train usage (43 lines, some over 80 columns) against ours: at most two lines more, none wider
    than 80."""
    code, (n_lines, first, _), _ = liblinear_train()
    assert code == 1 and first == "Usage: train [options] training_set_file [model_file]"
    ours = invoke(train_main, ["--help"]).stdout
    assert len(ours.splitlines()) <= n_lines + 2


def test_help_all_lists_every_option_within_80_columns():
    r = invoke(train_main, ["--help-all"])
    assert_exit(r, 0)
    assert_fits(r.stdout)
    assert r.stdout.startswith("Usage: llsvm-train [OPTIONS] TRAINING_SET_FILE [MODEL_FILE]\n")
    for row in OPTIONS:
        if not row.hidden and row.decls != ():
            decls = row.decls if row.decls is not None else (row.flag,)
            assert decls[0].split("/")[0] in r.stdout, row.flag
    assert "--help-all" in r.stdout and "--version" in r.stdout


@pytest.mark.parametrize("spec", specs(), ids=lambda s: s.name)
def test_help_solver(spec):
    """--help SOLVER and -s SOLVER -h: the same text, within 80 columns, with every option the solver takes."""
    r = invoke(train_main, ["--help", spec.name])
    assert_exit(r, 0)
    assert_fits(r.stdout)
    assert r.stdout.startswith(f"Usage: llsvm-train -s {spec.name} [options]")
    assert invoke(train_main, ["-s", spec.name, "-h"]).stdout == r.stdout
    flat = " ".join(r.stdout.split())
    assert f"-s {spec.name} -- {spec.title}" in flat and spec.eps_meaning in flat
    for row in OPTIONS:
        if row.solvers is None or row.decls == ():
            continue
        shown = any(f"\n  {name}{end}" in r.stdout for name in (row.flag, (row.decls or ("?",))[0]) for end in " \n")
        assert shown == spec.accepts_option(row.flag), (spec.name, row.flag)


def test_h_before_a_number_is_shrinking_not_help(tmp_path):
    """-h 0 is LIBSVM's shrinking even beside -s smo (no help printed, the option checked as shrinking)."""
    r = invoke(train_main, ["-s", "3", "-h", "0", str(tmp_path / "none")])
    assert_exit(r, 1)
    assert r.stdout == "" and "-h applies only to" in r.stderr


@pytest.mark.parametrize("command,prog", [(predict.main, "llsvm-predict"), (convert.main, "llsvm-convert"),
                                          (scale.main, "llsvm-scale"), (easy.main, "llsvm-easy")],
                         ids=["predict", "convert", "scale", "easy"])
def test_other_commands_help_within_80_columns(command, prog):
    r = invoke(command, ["--help"], prog)
    assert_exit(r, 0)
    assert_fits(r.stdout, max_lines=45)
    assert r.stdout.startswith(f"Usage: {prog} [OPTIONS]") and "--version" in r.stdout


def scripts():
    with open(os.path.join(REPO, "pyproject.toml"), "rb") as f:
        return tomllib.load(f)["project"]["scripts"]


def test_version_of_every_console_script():
    """Every [project.scripts] entry answers --version (exit 0): the package's version, the Cython the kernels were
    built with (the venv's), the flags and OpenMP as the built kernel shows them (libgomp's symbols)."""
    from llsvm._ext import _build_info, _kernel
    with open(_kernel.__file__, "rb") as f:
        openmp = b"GOMP_" in f.read()
    assert _build_info.OPENMP == openmp
    names = sorted(scripts())
    assert {"llsvm-train", "llsvm-predict", "llsvm-convert", "llsvm-scale", "llsvm-easy", "llsvm-svm-train"} <= set(names)
    code = ("import sys; from llsvm.cli import entry; sys.argv = [sys.argv[1], '--version']; "
            "getattr(entry, sys.argv[2])()")
    for name in names:
        fn = scripts()[name].split(":")[1]
        p = subprocess.run([sys.executable, "-c", code.replace("sys.argv[2]", repr(fn)), name], capture_output=True,
                           text=True, timeout=120)
        assert p.returncode == 0, (name, p.stderr)
        lines = p.stdout.splitlines()
        assert lines[0] == f"{name} (llsvm) {importlib.metadata.version('llsvm')}", lines
        assert f"Cython: {Cython.__version__}" in lines
        flat = " ".join(p.stdout.split())
        assert "flags: " in flat and "-O3" in flat
        assert f"OpenMP: {'on (-fopenmp' if openmp else 'off'}" in flat
        assert_fits(p.stdout)


def test_did_you_mean_a_solver(tmp_path):
    data = write_small_set(tmp_path / "small.txt", 20)
    r = invoke(train_main, ["-s", "smoo", str(data), str(tmp_path / "m")])
    assert_exit(r, 1)
    assert r.stderr == "ERROR: unknown solver type 'smoo'; did you mean 'smo'?\n"
    r = invoke(train_main, ["-s", "pegasus", str(data), str(tmp_path / "m")])
    assert r.stderr == "ERROR: unknown solver type 'pegasus'; did you mean 'pegasos' or 'pegaz'?\n"
    # nothing close, or a number: LIBLINEAR's train's words and exit code exactly
    code, out, err = liblinear_train("-s", "99", files=(data, tmp_path / "ref.model"))
    assert err == "ERROR: unknown solver type\n"
    for value in ("99", "nope"):
        r = invoke(train_main, ["-s", value, str(data), str(tmp_path / "m")])
        assert_exit(r, code)
        assert (r.stdout, r.stderr) == (out, err)
    assert not os.path.exists(tmp_path / "m")


def test_did_you_mean_a_long_option():
    r = invoke(train_main, ["--thread", "2", "x"])
    assert_exit(r, 2)
    assert r.stderr.splitlines()[-1] == "Error: No such option '--thread'. Did you mean '--threads'?"
    r = invoke(svmtrain.main, ["--version", "x"], "llsvm-svm-train")      # svm-train's parser: its usage, exit 1
    assert_exit(r, 1)
