"""The commands' man pages (man/NAME.1, groff man(7)): generated, as docs/cli.md is (llsvm/cli/reference.py), from
the option rows (llsvm/options.py), the solvers' specs (llsvm/params.py), the Click commands of llsvm-predict,
llsvm-convert, llsvm-scale and llsvm-easy, and llsvm-svm-train's usage; each page has NAME, SYNOPSIS,
DESCRIPTION, OPTIONS (every option with its help), EXIT STATUS, FILES (llsvm-train), EXAMPLES and SEE ALSO.

    python scripts/gen_docs.py          # rewrite man/*.1 with docs/cli.md (tests/test_man.py: up to date, rendered
                                        # by groff without a warning)
"""
import re

import click

from ..options import OPTIONS
from ..params import specs
from .reference import EXIT_CODES, default_text, solvers_text, train_description
from .usage import option_name
from .declare import help_text

# name: (what it is, for NAME; synopsis; the pages of LIBLINEAR's and LIBSVM's programs it stands for, as Debian's
# packages install them)
COMMANDS = {
    "llsvm-train": ("train a linear or kernel SVM (LIBLINEAR's train, LIBSVM's svm-train)",
                    "[options] training_set_file [model_file]", ("train", "predict", "svm-train")),
    "llsvm-predict": ("predict with a LIBLINEAR, LIBSVM or llsvm model file (LIBLINEAR's predict, LIBSVM's "
                      "svm-predict)", "[options] test_file model_file output_file", ("predict", "svm-predict")),
    "llsvm-convert": ("convert LIBSVM text to llsvm's binary data format and back, or describe a data file",
                      "[options] INPUT [OUTPUT]", ()),
    "llsvm-scale": ("scale the features of a LIBSVM data file (LIBSVM's svm-scale)", "[options] data_filename",
                    ("svm-scale",)),
    "llsvm-svm-train": ("LIBSVM's svm-train command line, run by llsvm-train",
                        "[options] training_set_file [model_file]", ("svm-train",)),
    "llsvm-easy": ("scale, search C and gamma, train and test, as LIBSVM's easy.py",
                   "[options] training_file [testing_file]", ("svm-train", "svm-scale", "svm-predict")),
}

# each page's examples, run in order (convert's, scale's, train's, predict's, ...) by tests/test_doc_blocks.py in a
# directory holding train.txt, test.txt and heart_scale
EXAMPLES = {
    "llsvm-train": (("llsvm-train -s 2 -c 4 -B 1 train.txt", "L2-loss SVM as LIBLINEAR's train -s 2; writes "
                     "train.txt.model"),
                    ("llsvm-train -s 0 -v 5 train.txt", "5-fold cross validation of logistic regression"),
                    ("llsvm-train -s 0 -c 4 train.txt lr.model", "logistic regression, whose model gives "
                     "probabilities (llsvm-predict -b 1)"),
                    ("llsvm-train -s llsvm --memory 64M -B 1 train.bin big.model",
                     "the -s 3 problem out of core, within 64 MB"),
                    ("llsvm-train -s smo -t 2 -g 0.5 -c 4 train.txt", "an RBF C-SVC, as svm-train's"),
                    ("llsvm-train -q --strict --json - -s 3 train.txt m.model",
                     "for a script: the metrics alone on standard output, exit 3 when not certified")),
    "llsvm-predict": (("llsvm-predict test.txt train.txt.model out.txt", "predictions, one a line, and the "
                       "accuracy"),
                      ("llsvm-predict -b 1 test.txt lr.model out.txt", "with probability estimates"),
                      ("llsvm-predict test.txt m.model - | head", "predictions on standard output, the accuracy on "
                       "standard error")),
    "llsvm-convert": (("llsvm-convert train.txt train.bin", "LIBSVM text (plain, gzip, bzip2 or xz) to binary"),
                      ("llsvm-convert --info train.bin", "rows, features, classes, blocks; every block verified"),
                      ("llsvm-convert train.bin back.txt", "binary back to LIBSVM text")),
    "llsvm-scale": (("llsvm-scale -s range train.txt > train.scale", "scale to [-1, 1], saving the factors"),
                    ("llsvm-scale -r range test.txt > test.scale", "the same factors on the test set")),
    "llsvm-svm-train": (("llsvm-svm-train -c 4 -g 0.5 heart_scale", "as svm-train -c 4 -g 0.5 heart_scale"),
                        ("python grid.py -svmtrain llsvm-svm-train heart_scale", "LIBSVM's tools/grid.py with "
                         "llsvm")),
    "llsvm-easy": (("llsvm-easy heart_scale", "as LIBSVM's tools/easy.py heart_scale"),),
}

def _escape(text):
    """Plain text as groff reads it: backslashes and hyphens escaped, a line's leading dot or quote protected,
    any other character than ASCII as its \\[uXXXX]."""
    text = text.replace("\\", "\\e").replace("-", "\\-")
    text = "".join(c if ord(c) < 128 else f"\\[u{ord(c):04X}]" for c in text)
    return re.sub(r"(?m)^([.'])", r"\\&\1", text)


def _text(markdown):
    """A paragraph of the docs' words: `code` in bold, the rest plain, on one line (groff fills it)."""
    parts = re.split(r"`([^`]*)`", " ".join(markdown.split()))
    return "".join(_escape(p) if i % 2 == 0 else f"\\fB{_escape(p)}\\fR" for i, p in enumerate(parts))


def _item(tag, body):
    return [".TP", f"\\fB{_escape(tag)}\\fR", _text(body)]


def _train_options():
    out = []
    for row in OPTIONS:
        if row.decls == () or (row.hidden and row.flag != "--weight"):
            continue
        body = help_text(row) if row.help else ""
        default = default_text(row)
        if default and "default" not in body.lower():
            body += f" Default: {default}."
        if row.solvers is not None and "-s " not in body:
            body += f" Solvers: {solvers_text(row)}."
        tag = option_name(row)
        decls = row.decls if row.decls else (row.flag,)
        if len(decls) > 1 and "/" not in decls[0]:        # "-q, --quiet"
            tag = ", ".join(decls) + tag[len(row.flag):]
        out += _item(tag, body)
    return out


def _solver_items():
    out = []
    for s in specs():
        out += _item(f"-s {s.name}", f"{s.title}. Model file's solver_type {s.solver_type}; -e: {s.eps_meaning}; "
                                     f"--max-iter default: {s.default_max_iter}; --threads default: "
                                     f"{s.default_threads}.")
    return out


def _click_options(command):
    out = []
    with click.Context(command, info_name=command.name, **command.context_settings) as ctx:
        for p in command.get_params(ctx):
            if not isinstance(p, click.Option) or p.hidden:
                continue
            tag = ", ".join(p.opts) + ("" if not p.secondary_opts else " / " + ", ".join(p.secondary_opts))
            if not p.is_flag:
                tag += " " + (p.metavar or p.type.name.upper())
            out += _item(tag, p.help or "")
    return out


def _svm_train_options(usage):
    """svm-train's usage lines as items: "-c cost : text" and the lines indented under it."""
    out = []
    for line in usage.splitlines():
        m = re.match(r"(-\S+(?: [a-z_]+)?) ?: (.*)", line)
        if m:
            out += _item(m.group(1), m.group(2))
        elif line.startswith("\t") and out:
            out += [".br", _text(" ".join(line.split()))]
    return out


def _description(name):
    from . import convert, easy, predict, scale, svmtrain
    if name == "llsvm-train":
        return [_text(train_description()), ".PP", _text(
            "Inputs are LIBSVM text (plain, gzip, bzip2 or xz, told by their first bytes; `-` for standard input) or "
            "llsvm binary files (llsvm-convert). LIBLINEAR's lines go to standard output as LIBLINEAR prints them; "
            "llsvm's own warnings and the progress bar (a terminal only) go to standard error; -q silences them.")]
    if name == "llsvm-svm-train":
        types = ", ".join(f"`-s {n}` = `-s {t}`" for n, t in svmtrain.SVM_TYPES.items())
        return [_text("LIBSVM's svm-train command line, for the scripts written for it (tools/grid.py "
                      "-svmtrain llsvm-svm-train, easy.py's svmtrain_exe): its numbering and defaults, its parsing, "
                      "its usage text and exit 1 on no arguments or a bad option, its output and model file. It runs "
                      f"llsvm-train with the translated command line: {types}, `--libsvm-rand`, `-h` as "
                      "`--shrinking`.")]
    command = {"llsvm-predict": predict, "llsvm-convert": convert, "llsvm-scale": scale, "llsvm-easy": easy}[name]
    return [_text((command.main.help or "").replace("\b", ""))]


def page(name, version):
    """The text of NAME's man page."""
    from . import convert, easy, predict, scale, svmtrain
    what, synopsis, debian = COMMANDS[name]
    out = [f'.TH {_escape(name.upper())} 1 "" "llsvm {_escape(version)}" "llsvm manual"',
           ".\\\" generated by scripts/gen_docs.py from the option rows (llsvm/options.py): do not edit",
           ".nh",                                    # no hyphenation: option names and identifiers stay whole
           ".SH NAME", f"{_escape(name)} \\- {_escape(what)}",
           ".SH SYNOPSIS", f".B {_escape(name)}", _escape(synopsis),
           ".SH DESCRIPTION"] + _description(name)
    if name == "llsvm-train":
        out += [".SH SOLVERS"] + _solver_items() + [".SH OPTIONS"] + _train_options()
    elif name == "llsvm-svm-train":
        out += [".SH OPTIONS"] + _svm_train_options(svmtrain.USAGE)
    else:
        command = {"llsvm-predict": predict, "llsvm-convert": convert, "llsvm-scale": scale,
                   "llsvm-easy": easy}[name].main
        out += [".SH OPTIONS"] + _click_options(command)
    out += [".SH EXIT STATUS"]
    for code, text in EXIT_CODES:
        if code == 3 and name != "llsvm-train":
            continue
        out += [".TP", f"\\fB{code}\\fR", _text(text)]
    if name == "llsvm-train":
        out += [".SH FILES", ".TP", "\\fItraining_set_file\\fR\\fB.model\\fR",
                _text("the model file when none is named (`stdin.model` for `-`): LIBLINEAR's format, LIBSVM's for "
                      "the kernel solvers, llsvm's for hashed and tree models; written atomically.")]
    out += [".SH EXAMPLES"]
    for command, note in EXAMPLES[name]:
        out += [".PP", _text(note) + ":", ".RS", ".EX", _escape(command), ".EE", ".RE"]
    see = [f".BR {_escape(n)} (1)," for n in COMMANDS if n != name] + [f".BR {_escape(n)} (1)," for n in debian]
    see[-1] = see[-1].rstrip(",")
    out += [".SH SEE ALSO"] + see + [".PP", _text("docs/cli.md, docs/guide.md and docs/formats.md in llsvm's "
                                                  "source tree; LIBLINEAR and LIBSVM's README files.")]
    return "\n".join(out) + "\n"


def pages(version):
    """{file name: text} of every command's man page."""
    return {f"{name}.1": page(name, version) for name in COMMANDS}
