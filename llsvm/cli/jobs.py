"""`llsvm-train --jobs FILE` and `llsvm-predict --jobs FILE`: many commands in one process, so that a Makefile or a
cron job that trains or predicts hundreds of times pays the interpreter's and NumPy's start-up once (issue 43: a
command on a small file spends ~100 ms of its ~130 starting, ~80 of them importing NumPy, which every path needs).

FILE ('-' for standard input) holds one command line a line, split as a POSIX shell splits words (quotes and
backslashes; `#` starts a comment); blank lines are skipped, and a line may begin with the command's own name.
Every line is read and split before anything runs: a line that does not split is a usage error (exit 2) naming the
file and line; a file that cannot be read, an error (exit 1). The commands then run in order, each exactly as it would alone (its output, files, messages and exit
code); the first that fails ends the batch with its exit code after a line naming the file and line (a usage error:
2, any other: its code), and Ctrl-C ends it with 130 as it ends any command.
"""
import shlex
import sys

import click

from ..fileutil import reset_commit

JOBS = "--jobs"


def batch_help(name):
    """The help text's paragraph on the batch form of command `name`."""
    return (f"Batch: {name} {JOBS} FILE runs the {name} command lines of FILE, one a line, in one process (the "
            "start-up paid once); the first that fails ends it with its exit code.")


class JobFileError(Exception):
    """The job file cannot be read (exit 1, as an input file that cannot be opened)."""


def jobs_argument(argv):
    """FILE when argv (sys.argv[1:]) asks for a batch (`--jobs FILE` or `--jobs=FILE`, alone), else None."""
    if len(argv) == 2 and argv[0] == JOBS:
        return argv[1]
    if len(argv) == 1 and argv[0].startswith(JOBS + "="):
        return argv[0][len(JOBS) + 1:]
    return None


def read_jobs(path, name):
    """[(line number, argv)] of the job file, every line split before anything runs (UsageError naming the line)."""
    try:
        if path == "-":
            text = sys.stdin.read()
        else:
            with open(path, encoding="utf-8", errors="surrogateescape") as f:
                text = f.read()
    except OSError as exc:
        raise JobFileError(f"can't open job file {path}: {exc.strerror or exc}") from None
    jobs = []
    for lineno, line in enumerate(text.splitlines(), 1):
        try:
            argv = shlex.split(line, comments=True)
        except ValueError as exc:
            raise click.UsageError(f"{path}:{lineno}: {str(exc).lower()}") from None
        if argv and argv[0] in (name, name + ".exe") or argv and argv[0].endswith("/" + name):
            argv = argv[1:]
        if argv:
            if any(a == JOBS or a.startswith(JOBS + "=") for a in argv):
                raise click.UsageError(f"{path}:{lineno}: a job cannot be a batch itself ({JOBS})")
            jobs.append((lineno, argv))
    return jobs


def run_jobs(command, name, path):
    """Run the jobs of `path` with the Click command `command` (its prog name `name`); returns the exit code."""
    try:
        jobs = read_jobs(path, name)
    except click.UsageError as exc:
        click.echo(f"Usage: {name} {JOBS} FILE\nError: {exc.message}", err=True)
        return 2
    except JobFileError as exc:
        click.echo(f"{name} {JOBS}: {exc}", err=True)
        return 1
    for lineno, argv in jobs:
        try:
            command.main(args=argv, prog_name=name, standalone_mode=True)
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        # the job is over: its outputs are in place or cleaned up, and a signal from here on ends the batch
        reset_commit()
        if code in (130, 143, 141):     # Ctrl-C, SIGTERM, stdout's reader gone: as the command alone
            return code
        if code != 0:
            click.echo(f"{name} {JOBS}: {path}:{lineno}: the job failed (exit {code}); the jobs after it did "
                       f"not run", err=True)
            return code
    return 0
