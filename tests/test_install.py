"""Installing after make, and the shell (issue 48): `make sklearn`, `make dask` and `make plot` install an extra's
requirements only (scripts/extra_requirements.py), never llsvm again (pip install ".[sklearn]" rebuilt every kernel
for minutes and replaced the editable install); Click's shell completion works through the console scripts
(llsvm/cli/entry.py) for bash, zsh and fish, completes -s with the solvers' names and a data file's argument with
the shell's file names."""
import os
import pathlib
import re
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

from extra_requirements import requirements  # noqa: E402

BIN = os.path.dirname(sys.executable)
EXTRAS = re.findall(r"(?m)^(\w+) = \[", (ROOT / "pyproject.toml").read_text().split("[project.optional-dependencies]")[1]
                    .split("\n[")[0])


def _fake_venv(tmp_path):
    """A .venv whose llsvm is installed (its stamp newer than pyproject.toml and setup.py) and whose python records
    its command lines, but runs scripts/extra_requirements.py (with this interpreter, where llsvm is installed)."""
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    log = tmp_path / "calls"
    python = venv / "bin" / "python"
    python.write_text(f"#!/bin/sh\nif [ \"$1\" = scripts/extra_requirements.py ]; then exec {sys.executable} \"$@\"; "
                      f"fi\necho \"$@\" >> {log}\n")
    python.chmod(0o755)
    (venv / ".installed").touch()
    return venv, log


def test_the_extras_are_the_make_targets():
    assert {"sklearn", "dask", "plot"} <= set(EXTRAS)


@pytest.mark.parametrize("extra", ["sklearn", "dask", "plot"])
def test_make_extra_installs_its_requirements_and_not_llsvm(extra, tmp_path):
    venv, log = _fake_venv(tmp_path)
    dry = subprocess.run(["make", "-n", extra, f"VENV={venv}"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert dry.returncode == 0, dry.stderr
    lines = dry.stdout.strip().splitlines()
    assert len(lines) == 1 and f"scripts/extra_requirements.py {extra}" in lines[0], lines
    assert not re.search(r"build_ext|setup\.py|-e \.|--editable|install[^|]* \.(\s|$)", dry.stdout)
    proc = subprocess.run(["make", extra, f"VENV={venv}"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    wanted = requirements([extra])
    assert wanted and log.read_text().split() == ["-m", "pip", "--disable-pip-version-check", "install", "-q", *wanted]


def _complete(command, words, cword, shell="bash"):
    var = "_" + command.upper().replace("-", "_") + "_COMPLETE"
    env = {**os.environ, var: f"{shell}_complete", "COMP_WORDS": words, "COMP_CWORD": str(cword)}
    proc = subprocess.run([os.path.join(BIN, command)], env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.splitlines()


COMMANDS = re.findall(r'(?m)^(llsvm-[\w-]+) = "', (ROOT / "pyproject.toml").read_text())


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_every_command_gives_its_completion_script(shell):
    assert len(COMMANDS) == 6
    for command in COMMANDS:
        var = "_" + command.upper().replace("-", "_") + "_COMPLETE"
        proc = subprocess.run([os.path.join(BIN, command)], env={**os.environ, var: f"{shell}_source"},
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0 and proc.stderr == "", (command, proc.stderr)
        assert f"{var}={shell}_complete" in proc.stdout and command in proc.stdout, command


def test_completion_offers_the_solvers_options_and_files():
    from llsvm.params import specs
    names = [s.name for s in specs()]
    assert _complete("llsvm-train", "llsvm-train -s ", 2) == [f"plain,{n}" for n in names]
    assert _complete("llsvm-train", "llsvm-train -s nu_s", 2) == ["plain,nu_svc", "plain,nu_svr"]
    assert "plain,--max-iter" in _complete("llsvm-train", "llsvm-train --max", 1)
    assert _complete("llsvm-train", "llsvm-train -s 3 da", 3) == ["file,da"]
    assert _complete("llsvm-predict", "llsvm-predict t", 1) == ["file,t"]
    assert _complete("llsvm-train", "llsvm-train --json ", 2) == ["file,"]
    assert "plain,--info" in _complete("llsvm-convert", "llsvm-convert --in", 1)
    zsh = _complete("llsvm-train", "llsvm-train -s sm", 2, "zsh")
    assert zsh[:2] == ["plain", "smo"]
