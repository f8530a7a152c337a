"""What every command shares: error mapping to LIBLINEAR's messages and exit codes, signals, the reporter."""
import functools
import signal
import sys

import click

from ..errors import DataFormatError, LLSVMError
from ..report import Reporter


class InputOpenError(LLSVMError):
    """An input file that cannot be opened (LIBLINEAR: "can't open input file %s")."""


class ParamError(LLSVMError):
    """A parameter LIBLINEAR's check_parameter refuses: printed as "ERROR: ..." with exit 1."""


def _on_sigterm(signum, frame):
    # turn SIGTERM into an exception so atomic writers remove their temporary files
    raise SystemExit(128 + signum)


def report_error(exc):
    """Print an LLSVMError the LIBLINEAR way on stderr."""
    if isinstance(exc, ParamError):
        click.echo(f"ERROR: {exc}", err=True)
    elif isinstance(exc, DataFormatError) and exc.line > 0:
        click.echo(f"Wrong input format at line {exc.line}", err=True)
        click.echo(f"{exc.path}: line {exc.line}, column {exc.column}: {exc.message}", err=True)
    elif isinstance(exc, InputOpenError):
        click.echo(str(exc), err=True)
    else:
        click.echo(f"Error: {exc}", err=True)


def handle_errors(fn):
    """Run a command body: LLSVMError -> message on stderr and exit 1 (Click's usage errors keep exit 2)."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        previous = None
        try:
            previous = signal.signal(signal.SIGTERM, _on_sigterm)
        except ValueError:      # not the main thread (e.g. inside a test runner thread)
            pass
        try:
            return fn(*args, **kwargs)
        except LLSVMError as exc:
            report_error(exc)
            sys.exit(1)
        finally:
            if previous is not None:
                signal.signal(signal.SIGTERM, previous)
    return wrapper


def check_input(path):
    """Raise InputOpenError with LIBLINEAR's message unless path ('-' is stdin) can be opened for reading."""
    if path == "-":
        return
    try:
        with open(path, "rb"):
            pass
    except OSError:
        raise InputOpenError(f"can't open input file {path}") from None


def make_reporter(quiet, progress):
    return Reporter(quiet=quiet, progress=progress)
