"""What the commands print for a person at a terminal, within 80 columns: llsvm-train's compact usage (LIBLINEAR's
`train` usage: the common options, the solver list; `llsvm-train`, `-h`, `--help`), its every option
(`--help-all`, Click's own help) and one solver's options (`--help SOLVER`, `-s SOLVER --help`); `--version` of
every command; and the lines of --help-all's solver list. ("Did you mean" for a mistyped -s value: llsvm/params.py, get.)

Every text comes from the option rows (llsvm/options.py: `common` marks the compact usage's rows, `brief` their
text when not the help's first sentence) and the solvers' specs (llsvm/params.py); nothing here repeats them.
Imports click and the rows only (issue 26: the help answers before numpy is loaded).
"""
import re
import textwrap

import click

from ..errors import ParameterError
from ..options import LIBSVM_TYPES, ONED, ONLINE, OPTIONS, OUT_OF_CORE
from ..params import get, specs
from .declare import help_text

WIDTH = 80                   # every line of every usage text (tests/test_usage.py)
INDENT = "      "            # an option's continuation lines

# the compact usage's groups of LIBLINEAR's solvers (LIBLINEAR's words) by the spec's task, and llsvm's own solvers
# by family (the families of llsvm/options.py; a test checks every solver is named once)
TASKS = (("for multi-class classification", ("ovr", "multiclass")), ("for regression", ("regression",)),
         ("for outlier detection", ("oneclass",)))
FAMILIES = (("out of core, the -s 3 problem", OUT_OF_CORE), ("kernel, as LIBSVM's svm-train", LIBSVM_TYPES),
            ("decision list", ("h1tree",)), ("online kernel", ONLINE), ("1-D", ONED))
SHOWN = {"--weight": "-wi"}  # LiblinearCommand (llsvm/cli/train.py) reads -wi weight as --weight i weight


def wrap(text, first="", indent=INDENT, width=WIDTH):
    """`first` + text filled to `width` columns, the next lines indented by `indent` (a word longer than a line is
    broken rather than let out)."""
    return textwrap.fill(" ".join(text.split()), width=width, initial_indent=first, subsequent_indent=indent,
                         break_on_hyphens=False)


def _first_sentence(text):
    m = re.search(r"(?<!e\.g)\.\s", text)
    return text if m is None else text[:m.start() + 1]


def option_name(row):
    """How the usage names a row's option and its value: "-c cost", "-wi weight", "--progress/--no-progress"."""
    decls = row.decls if row.decls else (row.flag,)
    flag = SHOWN.get(row.flag, decls[0] if "/" in decls[0] else row.flag)
    if row.kind is bool:
        return flag
    if isinstance(row.kind, tuple) and all(isinstance(k, str) for k in row.kind):
        return f"{flag} {'|'.join(row.kind)}"
    return f"{flag} {row.metavar or {float: 'NUMBER', str: 'TEXT'}.get(row.kind, 'N')}"


def _solver_list():
    out = []
    numbered = [s for s in specs() if s.number is not None]
    for heading, tasks in TASKS:
        out.append(f"  {heading}")
        out += [wrap(s.title, f"    {s.name:>2} -- ", " " * 10) for s in numbered if s.task in tasks]
    families = "; ".join(f"{label}: {' '.join(names)}" for label, names in FAMILIES)
    out.append("  llsvm's own, by family")
    out.append(wrap(families, "    ", "    "))
    return out


def train_usage(prog="llsvm-train"):
    """The compact usage of llsvm-train: LIBLINEAR's train's, from the rows marked common."""
    out = [f"Usage: {prog} [options] training_set_file [model_file]", "options:"]
    for row in OPTIONS:
        if not row.common:
            continue
        text = help_text(row, row.brief, short=True) if row.brief else _first_sentence(help_text(row, short=True))
        out.append(wrap(text, f"{option_name(row)} : "))
        if row.flag == "-s":
            out += _solver_list()
    out.append(wrap("training_set_file: LIBSVM's text ('-': standard input) or an llsvm-convert binary file; "
                    "model_file: by default training_set_file's name + .model", "", ""))
    out.append(wrap("More: --help-all (every option); --help SOLVER or -s SOLVER -h (one solver's options and "
                    "defaults); -h 0|1 (a number after it) is LIBSVM's shrinking.", "", ""))
    return "\n".join(out) + "\n"


def solver_help(value, prog="llsvm-train"):
    """One solver's help: what it trains, its -e, --max-iter and --threads defaults, its own options in full, and the
    names of the options every solver takes."""
    spec = get(value)
    out = [f"Usage: {prog} -s {spec.name} [options] training_set_file [model_file]", "",
           wrap(spec.title, f"-s {spec.name} -- ", "    "),
           wrap(f"model file's solver_type {spec.solver_type}; -e: {spec.eps_meaning}; --max-iter default: "
                f"{spec.default_max_iter}; --threads default: {spec.default_threads}.", "    ", "    "), "",
           f"Options of -s {spec.name} (and of some other solvers):"]
    shared = []
    for row in OPTIONS:
        if row.decls == () or (row.hidden and row.flag not in SHOWN):     # -B R: in -B's help
            continue
        if row.solvers is None:
            shared.append(SHOWN.get(row.flag, row.flag))
        elif spec.accepts_option(row.flag):
            out.append(wrap(option_name(row), "  ", "  "))
            out.append(wrap(help_text(row, short=True), INDENT, INDENT))
    out += ["", wrap(f"Options of every solver: {' '.join(shared)} ({prog} --help-all).", "", "")]
    return "\n".join(out) + "\n"


def solver_lines():
    """The solver list of --help-all (Click's epilog: a \\b paragraph, lines within 78 columns once indented)."""
    lines = []
    for s in specs():
        lines += wrap(s.title, f"   {s.name} -- ", " " * 8, WIDTH - 2).splitlines()
    return "\n".join(["\b", "Solvers (-s type):"] + lines)


# -- llsvm-train's --help SOLVER and --help-all ----------------------------------------------------------------
NUMBER = re.compile(r"[+-]?\d+")      # after -h: LIBSVM's shrinking, not a solver


def _asked_solver(args):
    """The solver of `--help SOLVER` or `-h SOLVER`, else of `-s SOLVER`; None for none (a file name after -h)."""
    candidates = []
    for i, a in enumerate(args[:-1]):
        if a == "--":
            break
        if a == "--help" or (a == "-h" and not NUMBER.fullmatch(args[i + 1])):
            candidates.insert(0, args[i + 1])
        elif a == "-s":
            candidates.append(args[i + 1])
    for candidate in candidates:
        try:
            return get(candidate).name
        except ParameterError:
            continue
    return None


def _only_shrinking(args):
    """Every -h of the command line is LIBSVM's -h 0|1 (a number follows) and no --help is given."""
    return "--help" not in args and all(i + 1 < len(args) and NUMBER.fullmatch(args[i + 1])
                                        for i, a in enumerate(args) if a == "-h")


def help_solver(args):
    """The solver whose help llsvm-train's command line asks for, None when it asks for none (or for the compact
    usage)."""
    if not any(a in ("-h", "--help") for a in args[:args.index("--") if "--" in args else len(args)]):
        return None
    return None if _only_shrinking(args) else _asked_solver(args)


def _help_all(ctx, param, value):
    if value and not ctx.resilient_parsing:
        click.echo(ctx.command.get_help_all(ctx))
        ctx.exit(0)


def help_all_option(fn):
    """Decorate llsvm-train with --help-all (its command's get_help_all: Click's help of every option)."""
    return click.option("--help-all", is_flag=True, expose_value=False, is_eager=True, callback=_help_all,
                        help="Show every option (the compact usage: -h, --help; one solver's: --help SOLVER) and "
                        "exit.")(fn)


class CompactHelp(click.Command):
    """llsvm-train's help: the compact usage (-h, --help, and no arguments: on stderr, exit 2, as Click's
    no_args_is_help), Click's help of every option (--help-all), one solver's (--help SOLVER, -s SOLVER --help)."""

    def get_help(self, ctx):
        return train_usage(ctx.command_path).rstrip("\n")

    def get_help_all(self, ctx):
        return super().get_help(ctx)

    def answer_help(self, ctx, args):
        """Print one solver's help and exit when the command line asks for it."""
        name = help_solver(args)
        if name is not None:
            click.echo(solver_help(name, ctx.command_path), nl=False)
            ctx.exit(0)


# -- --version of every command ------------------------------------------------------------------------------------
def version_text(prog):
    """The package's version, and the kernels' build: Cython, compiler and flags, OpenMP (recorded by setup.py's
    build_ext in llsvm/_ext/_build_info.py)."""
    import platform
    from importlib import metadata
    try:
        version = metadata.version("llsvm")
    except metadata.PackageNotFoundError:        # run from a tree that was never installed
        version = "unknown (not installed)"
    lines = [f"{prog} (llsvm) {version}"]
    try:
        from .._ext import _build_info as b
    except ImportError:
        lines.append("kernels: no build information (built before llsvm recorded it: rebuild, make build)")
    else:
        lines += [f"Cython: {b.CYTHON}", wrap(f"compiler: {b.CC}", "", "    "),
                  wrap(f"flags: {b.CFLAGS}", "", "    "),
                  wrap(f"OpenMP: {'on (' + b.OPENMP_FLAG + ': ' + ', '.join(b.OPENMP_KERNELS) + ')' if b.OPENMP else 'off'}",
                       "", "    ")]
    lines.append(f"Python: {platform.python_version()} ({platform.python_implementation()})")
    return "\n".join(lines) + "\n"


def _print_version(ctx, param, value):
    if value and not ctx.resilient_parsing:
        click.echo(version_text(ctx.find_root().info_name or "llsvm"), nl=False)
        ctx.exit(0)


def version_option(fn):
    """Decorate a Click command with --version."""
    return click.option("--version", is_flag=True, expose_value=False, is_eager=True, callback=_print_version,
                        help="Show the version, the kernels' build (Cython, compiler flags, OpenMP) and exit.")(fn)
