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


class os_errors:
    """Turn an OSError (of `types`) raised inside the block into a message for the user: `error(message)`, with the
    system's reason appended when `detail` is true. The one place where the commands map OSErrors."""

    def __init__(self, message, detail=False, error=None, types=(OSError,)):
        self.message = message
        self.detail = detail
        self.error = error or InputOpenError
        self.types = types

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is not None and issubclass(exc_type, self.types) and not isinstance(exc, LLSVMError):
            text = f"{self.message}: {exc.strerror or exc}" if self.detail else self.message
            raise self.error(text) from None
        return False


def check_input(path):
    """Raise InputOpenError with LIBLINEAR's message unless path ('-' is stdin) can be opened for reading."""
    if path == "-":
        return
    with os_errors(f"can't open input file {path}"):
        with open(path, "rb"):
            pass


def make_reporter(quiet, progress):
    return Reporter(quiet=quiet, progress=progress)
