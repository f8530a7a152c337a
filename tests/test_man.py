"""The man pages (issue 48): man/NAME.1 for every console script of pyproject.toml, generated from the option rows
(llsvm/cli/manpage.py through scripts/gen_docs.py) and up to date; every option of a command is on its page with
its help; groff renders each page with every warning on (-ww) and says nothing; `make install-man` puts them where
man finds them."""
import os
import pathlib
import re
import shutil
import subprocess
import sys

import click
import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

import gen_docs  # noqa: E402

from llsvm.cli import manpage  # noqa: E402
from llsvm.cli.declare import help_text  # noqa: E402
from llsvm.cli.usage import option_name  # noqa: E402
from llsvm.options import OPTIONS  # noqa: E402
from llsvm.params import specs  # noqa: E402

SCRIPTS = re.findall(r'(?m)^(llsvm-[\w-]+) = "', (ROOT / "pyproject.toml").read_text())


def _render(path):
    """The page as groff prints it (UTF-8), 200 columns wide (an option's help on one line), and groff's
    warnings. groff is a test-time tool like the reference binaries: its absence fails the test."""
    groff = shutil.which("groff")
    assert groff, "groff is needed to check the man pages (apt-get install groff)"
    proc = subprocess.run([groff, "-man", "-Tutf8", "-ww", "-rLL=200n", "-P-cbou", str(path)], capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout, proc.stderr


def _flat(text):
    return " ".join(text.split())


def test_a_page_for_every_command_and_up_to_date():
    assert SCRIPTS and sorted(f"{s}.1" for s in SCRIPTS) == sorted(os.listdir(ROOT / "man"))
    for path, text in gen_docs.man_pages().items():
        assert pathlib.Path(path).read_text(encoding="utf-8") == text, \
            f"{path} differs from the code: run python scripts/gen_docs.py (make man)"


@pytest.mark.parametrize("name", SCRIPTS)
def test_groff_renders_the_page_without_a_warning(name):
    out, err = _render(ROOT / "man" / f"{name}.1")
    assert err == ""
    for section in ("NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "EXIT STATUS", "EXAMPLES", "SEE ALSO"):
        assert re.search(rf"(?m)^{section}$", out), (name, section)
    assert f"{name} - " in out
    status = re.search(r"(?ms)^EXIT STATUS$(.*?)^[A-Z]", out).group(1)
    codes = re.findall(r"(?m)^ {7}(\d+) ", status)
    assert codes[:3] == ["0", "1", "2"] and "130" in codes
    assert ("3" in codes) == (name == "llsvm-train")          # --strict's
    if name in ("llsvm-train", "llsvm-predict"):
        see = _flat(out.split("SEE ALSO")[1])
        debian = set(re.findall(r"(?<![\w-])((?:svm-)?(?:train|predict))\(1\)", see))
        assert debian == ({"train", "predict", "svm-train"} if name == "llsvm-train" else {"predict", "svm-predict"})


def test_every_option_row_and_solver_is_on_llsvm_train_s_page():
    out = _flat(_render(ROOT / "man" / "llsvm-train.1")[0])
    options = out.split(" OPTIONS ")[1]
    n = 0
    for row in OPTIONS:
        if row.decls == () or (row.hidden and row.flag != "--weight"):
            continue
        assert option_name(row) in options, row.flag
        assert _flat(help_text(row)) in options, row.flag
        n += 1
    assert n >= 60
    for s in specs():
        assert f"-s {s.name} {s.title}" in out, s.name


@pytest.mark.parametrize("name", ["llsvm-predict", "llsvm-convert", "llsvm-scale", "llsvm-easy"])
def test_every_click_option_is_on_the_page(name):
    from llsvm.cli import convert, easy, predict, scale
    command = {"llsvm-predict": predict, "llsvm-convert": convert, "llsvm-scale": scale, "llsvm-easy": easy}[name].main
    out = _flat(_render(ROOT / "man" / f"{name}.1")[0]).split(" OPTIONS ")[1]
    with click.Context(command, **command.context_settings) as ctx:
        params = [p for p in command.get_params(ctx) if isinstance(p, click.Option) and not p.hidden]
    assert any("--help" in p.opts for p in params)
    for p in params:
        assert ", ".join(p.opts) in out and _flat(p.help or "") in out, p.opts


def test_svm_train_s_page_has_svm_train_s_options():
    from llsvm.cli.svmtrain import USAGE
    out = _flat(_render(ROOT / "man" / "llsvm-svm-train.1")[0]).split(" OPTIONS ")[1]
    flags = re.findall(r"(?m)^(-\w+)", USAGE)
    assert len(flags) == 15
    for line in USAGE.splitlines():
        m = re.match(r"(-\S+(?: [a-z_]+)?) ?: (.*)", line)
        if m:
            assert f"{m.group(1)} {m.group(2)}" in out, line


def test_the_escaping_keeps_groff_quiet(tmp_path):
    """The check can fail: an unescaped leading dot is a request groff warns of; the page's escaping of it, of
    backslashes and of a character beyond ASCII renders them as written."""
    bad = tmp_path / "bad.1"
    bad.write_text('.TH BAD 1\n.SH NAME\nbad\n.fi\n.unknownrequest x\n')
    assert _render(bad)[1] != ""
    good = tmp_path / "good.1"
    good.write_text('.TH GOOD 1\n.SH NAME\n' + manpage._text(".dot `a\\b` Zapién -x") + "\n")
    out, err = _render(good)
    assert err == "" and ".dot a\\b Zapi" in _flat(out) and "-x" in out


def test_make_install_man_puts_the_pages_where_man_finds_them(tmp_path):
    """No root, no build and no .venv: by default into ~/.local/share/man/man1, which man searches when ~/.local/bin
    is on the PATH (no MANPATH); MANDIR elsewhere."""
    home = tmp_path / "home"
    (home / ".local" / "bin").mkdir(parents=True)
    dry = subprocess.run(["make", "-n", "install-man", f"HOME={home}"], cwd=ROOT, capture_output=True, text=True,
                         timeout=60)
    assert dry.returncode == 0 and "setup.py" not in dry.stdout and "pip" not in dry.stdout, dry.stdout
    proc = subprocess.run(["make", "-s", "install-man", f"HOME={home}"], cwd=ROOT, capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr
    mandir = home / ".local" / "share" / "man" / "man1"
    assert sorted(os.listdir(mandir)) == sorted(f"{s}.1" for s in SCRIPTS)
    man = shutil.which("man")
    assert man, "man is needed to check make install-man (apt-get install man-db)"
    env = {k: v for k, v in os.environ.items() if k != "MANPATH"}
    env.update(HOME=str(home), PATH=f"{home / '.local' / 'bin'}{os.pathsep}/usr/bin{os.pathsep}/bin")
    where = subprocess.run([man, "-w", "llsvm-train"], capture_output=True, text=True, timeout=60, env=env)
    assert where.stdout.strip() == str(mandir / "llsvm-train.1"), where.stderr
    other = tmp_path / "elsewhere"
    proc = subprocess.run(["make", "-s", "install-man", f"MANDIR={other}"], cwd=ROOT, capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0 and (other / "llsvm-easy.1").is_file(), proc.stderr
