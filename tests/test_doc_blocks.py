"""Every code block of README.md and docs/*.md runs as written (issue 48).

Each code block is fenced and says its language (an indented block or a fence without one fails here):
- ```sh, ```bash: shell commands, run by bash -e -o pipefail;
- ```console: the lines after a `$ ` prompt are run, the others are the output shown;
- ```python: run as a script (`python block.py`: an `if __name__ == "__main__":` guard is needed where a script
  needs one, as Dask's LocalCluster does);
- ```text, ```diff, ```json: output, diffs and formats, not run.

The blocks of a file run in order in one directory of their own (a block may use what an earlier one wrote), with
this interpreter's bin directory first on the PATH and the data of the repository after `make demo` and
`make data`: data/demo, data/demo.t, data/demo.bin and data/chessboard (scripts/gen_data.py, as data/Makefile.mk
makes them) and data/public (the public sets: `make data`; their absence fails the test). A block that cannot
run here (a make target, a cluster at another address, a download) is marked just before its fence with
`<!-- doc-test: skip (the reason) -->`; the skips are counted and listed, and a marked block must say why. The
man pages' examples (llsvm/cli/manpage.py) run there too.
"""
import lzma
import os
import pathlib
import re
import shlex
import shutil
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
DOCS = ["README.md"] + sorted(f"docs/{p.name}" for p in (ROOT / "docs").glob("*.md"))
SHELL = {"sh", "bash"}
RUN = SHELL | {"console", "python"}
SHOWN = {"text", "diff", "json"}
SKIP = re.compile(r"<!-- doc-test: skip \((?P<reason>[^)]+)\) -->\s*$")
FENCE = re.compile(r"^(?P<indent> *)```(?P<lang>[^\s`]*)[^\n`]*$")
MAX_SKIPS = 12                                       # few, each with its reason


def blocks(text):
    """[(line, language, body, skip reason or None)] of a markdown text's fenced blocks."""
    lines = text.split("\n")
    out, i = [], 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, start = len(m.group("indent")), i
        j = i + 1
        while j < len(lines) and not re.match(rf"^ {{{indent}}}```\s*$", lines[j]):
            j += 1
        assert j < len(lines), f"line {start + 1}: a fence that is never closed"
        body = "\n".join(ln[min(indent, len(ln) - len(ln.lstrip(" "))):] for ln in lines[start + 1:j]) + "\n"
        k = start - 1
        while k >= 0 and not lines[k].strip():
            k -= 1
        skip = SKIP.search(lines[k]) if k >= 0 else None
        out.append((start + 1, m.group("lang"), body, skip.group("reason") if skip else None))
        i = j + 1
    return out


def indented_blocks(text):
    """Line numbers of indented code blocks (4 spaces after a blank line, outside a fence and a list)."""
    found, fenced, prev = [], False, ""
    for n, line in enumerate(text.split("\n"), 1):
        if FENCE.match(line) or re.match(r"^ *```\s*$", line):
            fenced = not fenced
        elif not fenced and line.startswith("    ") and line.strip() and not prev.strip():
            found.append(n)
        prev = "x" if fenced else line
    return found


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
    """data/ as make demo and make data leave it, generated once for the module."""
    public = ROOT / "data" / "public"
    assert public.is_dir() and (public / "heart_scale.xz").is_file(), \
        "the public sets are not in data/public: make data (LLSVM_DATA_MIRROR=DIR make data without internet)"
    data = tmp_path_factory.mktemp("doc-data") / "data"
    data.mkdir()
    gen = [sys.executable, str(ROOT / "scripts" / "gen_data.py")]
    for args in (["demo", "--out", "demo", "--test-out", "demo.t", "--seed", "1"],          # data/Makefile.mk
                 ["chessboard", "--out", "chessboard", "--test-out", "chessboard.t", "--test-rows", "2000",
                  "--seed", "1"]):
        subprocess.run(gen + args + ["-q"], cwd=data, check=True, timeout=600)
    subprocess.run([os.path.join(BIN, "llsvm-convert"), "-q", "demo", "demo.bin"], cwd=data, check=True, timeout=600)
    (data / "public").symlink_to(public)
    return data


def _sandbox(data_dir, where):
    """A directory as the docs' examples expect it: data/ (above), and the names they give the user's own data:
    train.txt and test.txt (the demo set's), heart_scale (LIBSVM's example set, plain text)."""
    shutil.copytree(data_dir, where / "data", symlinks=True)
    shutil.copy(data_dir / "demo", where / "train.txt")
    shutil.copy(data_dir / "demo.t", where / "test.txt")
    with lzma.open(data_dir / "public" / "heart_scale.xz") as f:
        (where / "heart_scale").write_bytes(f.read())


BIN = os.path.dirname(sys.executable)


def _environment():
    env = dict(os.environ)
    env["PATH"] = BIN + os.pathsep + env.get("PATH", "")
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    return env


def _run(lang, body, cwd, n):
    if lang == "python":
        script = cwd / f"block{n}.py"
        script.write_text(body)
        cmd = [sys.executable, script.name]
    elif lang == "console":
        commands = [ln[2:] for ln in body.splitlines() if ln.startswith("$ ")]
        cmd = ["bash", "-e", "-o", "pipefail", "-c", "\n".join(commands)]
    else:
        cmd = ["bash", "-e", "-o", "pipefail", "-c", body]
    return subprocess.run(cmd, cwd=cwd, env=_environment(), capture_output=True, text=True, timeout=600)


def test_every_code_block_is_fenced_with_its_language():
    bad = []
    for doc in DOCS:
        text = (ROOT / doc).read_text(encoding="utf-8")
        bad += [f"{doc}:{n}: an indented code block (fence it, with its language)" for n in indented_blocks(text)]
        for line, lang, _, reason in blocks(text):
            if lang not in RUN | SHOWN:
                bad.append(f"{doc}:{line}: a fence without a known language ({lang!r}): {sorted(RUN | SHOWN)}")
            if reason is not None and lang not in RUN:
                bad.append(f"{doc}:{line}: a skip mark on a block that is not run")
    assert not bad, "\n".join(bad)


def test_the_skips_are_few_and_say_why():
    skips = [f"{doc}:{line}: {reason}" for doc in DOCS
             for line, lang, _, reason in blocks((ROOT / doc).read_text(encoding="utf-8")) if reason]
    print(f"{len(skips)} blocks not run:\n" + "\n".join(skips))
    assert len(skips) <= MAX_SKIPS, "\n".join(skips)
    assert all(len(s.split(": ", 1)[1]) >= 10 for s in skips)


def test_the_parsing_of_the_blocks():
    """The check can fail: an indented block, a fence without a language and a skip mark are seen."""
    text = ("Text\n\n    make demo\n\n- a list\n\n```sh\nls\n```\n\n<!-- doc-test: skip (needs a cluster) -->\n"
            "```python\nimport x\n```\n\n  ```\nplain\n  ```\n")
    assert indented_blocks(text) == [3]
    assert blocks(text) == [(7, "sh", "ls\n", None), (12, "python", "import x\n", "needs a cluster"),
                            (16, "", "plain\n", None)]


@pytest.mark.parametrize("doc", [d for d in DOCS if any(lang in RUN and not reason for _, lang, _, reason in
                                                        blocks((ROOT / d).read_text(encoding="utf-8")))])
def test_the_blocks_run_as_written(doc, data_dir, tmp_path):
    _sandbox(data_dir, tmp_path)
    outputs = []
    for n, (line, lang, body, reason) in enumerate(blocks((ROOT / doc).read_text(encoding="utf-8"))):
        if lang not in RUN or reason:
            continue
        proc = _run(lang, body, tmp_path, n)
        assert proc.returncode == 0, f"{doc}:{line}: the {lang} block fails (exit {proc.returncode}):\n" \
                                     f"{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
        outputs.append(proc.stdout + proc.stderr)
    if doc == "README.md":
        _classifiers_beat_the_majority(doc, tmp_path)


REGRESSION_OR_OUTLIERS = {"11", "12", "13", "21", "one_class", "epsilon_svr", "nu_svr"}


def _classifiers_beat_the_majority(doc, where):
    """The one-liners show what each solver does well: every classifier a README line trains (`llsvm-train ... -s S
    DATA NAME.model`) predicts DATA's test set (DATA.t, data/public/NAME.t.xz) better than its majority class does
    (data/demo.t: 55 %, svmguide1.t: 50 %), in one llsvm-predict --jobs batch."""
    import llsvm
    jobs, tests = [], []
    for _, lang, body, reason in blocks((ROOT / doc).read_text(encoding="utf-8")):
        if lang not in SHELL or reason:
            continue
        for line in body.splitlines():
            words = shlex.split(line, comments=True)
            if words[:1] != ["llsvm-train"] or not words[-1].endswith(".model"):
                continue
            solver = words[words.index("-s") + 1] if "-s" in words else "1"
            if solver in REGRESSION_OR_OUTLIERS:
                continue
            data = words[-2]
            test = data[:-3] + ".t.xz" if data.endswith(".xz") else data.removesuffix(".bin") + ".t"
            jobs.append(f"{test} {words[-1]} {words[-1]}.predictions")
            tests.append((words[-1], test))
    assert len(jobs) >= 8, jobs
    (where / "jobs.txt").write_text("\n".join(jobs) + "\n")
    proc = subprocess.run([os.path.join(BIN, "llsvm-predict"), "--jobs", "jobs.txt"], cwd=where, env=_environment(),
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    accuracies = [float(a) for a in re.findall(r"Accuracy = ([\d.]+)%", proc.stdout)]
    assert len(accuracies) == len(tests), proc.stdout
    for (model, test), accuracy in zip(tests, accuracies):
        counts = llsvm.read_dataset(where / test).label_counts
        majority = 100.0 * counts.max() / counts.sum()
        assert accuracy > majority, f"{model} on {test}: {accuracy}% where the majority class has {majority:.1f}%"


# the man pages' examples that are not run, and why
MAN_NOT_RUN = {"python grid.py -svmtrain llsvm-svm-train heart_scale": "needs LIBSVM's tools/grid.py",
               "llsvm-easy heart_scale": "a grid of 110 cells"}


def test_the_man_pages_examples_run(data_dir, tmp_path):
    """llsvm/cli/manpage.py's EXAMPLES, page after page (convert's first: train's read its train.bin), in the same
    directory as the docs' blocks."""
    from llsvm.cli.manpage import EXAMPLES
    _sandbox(data_dir, tmp_path)
    ran = 0
    for name in ("llsvm-convert", "llsvm-scale", "llsvm-train", "llsvm-predict", "llsvm-svm-train", "llsvm-easy"):
        for command, _ in EXAMPLES[name]:
            if command in MAN_NOT_RUN:
                continue
            proc = _run("sh", command, tmp_path, 0)
            assert proc.returncode == 0, f"{name}(1): {command}: exit {proc.returncode}\n{proc.stderr[-3000:]}"
            ran += 1
    assert ran == sum(len(e) for e in EXAMPLES.values()) - len(MAN_NOT_RUN)
