"""What every command shares: error mapping to LIBLINEAR's messages and exit codes, signals, the reporter."""
import functools
import glob
import os
import signal
import sys

import click

from ..errors import CheckParameterError, DataFormatError, LLSVMError
from ..fileutil import output_committed, reset_commit
from ..report import Reporter, reader_gone, silence
from ..stop import KERNEL_STOP


class InputOpenError(LLSVMError):
    """An input file that cannot be opened (LIBLINEAR: "can't open input file %s")."""


class ParamError(LLSVMError):
    """A parameter LIBLINEAR's check_parameter refuses: printed as "ERROR: ..." with exit 1."""


class _Interrupted:
    """While a command's body runs: the first SIGINT or SIGTERM raises SystemExit(128 + signal), so atomic writers
    remove their temporary files and the out-of-core drivers their temporary directories on the way out; a
    signal that comes while that cleanup runs is ignored, so the cleanup is not cut short. Once the command has
    begun to rename its outputs into place (fileutil.commit_output) it is ignored too: the command finishes and
    exits 0, so an exit of 130 or 143 always leaves every target as it was.

    Python swallows an exception raised in a finalizer ("Exception ignored in ..." on stderr): a __del__, a weakref
    callback, a garbage collector's callback. A signal whose handler ran there was lost, and every later one
    ignored (the command was "exiting"): issue 44, one Ctrl-C in about six of an `llsvm-train --dask local` run
    landed in a Dask Future's __del__ (the main thread drops a step's futures) and the run went on to its end. So
    the handler raises nowhere in a __del__ or in the unraisable hook, and the command's unraisable hook
    (`unraisable`) takes back a SystemExit of its own swallowed elsewhere: either way the signal is marked again
    (_signal_again), for the main thread to take once out of there."""

    def __init__(self):
        self.exiting = False
        self.raised = None
        self.previous_hook = sys.unraisablehook

    def __call__(self, signum, frame):
        if self.exiting or output_committed():
            return
        if _finalizing(frame):
            _signal_again(signum)
            return
        self.exiting = True
        self.raised = SystemExit(128 + signum)
        raise self.raised

    def unraisable(self, unraisable):
        """sys.unraisablehook while the body runs: this handler's SystemExit, swallowed, is the signal again."""
        if self.raised is not None and unraisable.exc_value is self.raised:
            self.exiting, self.raised = False, None
            _signal_again(unraisable.exc_value.code - 128)
            return
        self.previous_hook(unraisable)


def _finalizing(frame):
    """Whether `frame` runs inside a __del__ or the unraisable hook, where a SystemExit raised would be swallowed."""
    hook = _Interrupted.unraisable.__code__
    while frame is not None:
        if frame.f_code.co_name == "__del__" or frame.f_code is hook:
            return True
        frame = frame.f_back
    return False


SIGNAL_AGAIN_AFTER = 0.001      # seconds


def _signal_again(signum):
    """The signal again for its Python handler SIGNAL_AGAIN_AFTER seconds from now, by a thread of its own: from
    here, the handler would run again at once, inside this very frame (and recurse).

    Sent to the main thread (pthread_kill) while this command's handler is still the one installed: a mark alone
    (_thread.interrupt_main) does not wake a main thread that has gone on to block in a wait (a queue's get for
    the next block of a pipe that stays open), which then slept for good with the signal marked and never
    handled (issue 49: `-s llsvm` reading stdin stalled after SIGTERM about once in 4-7 whole-suite runs, when
    the signal had landed in a __del__). Marked only, as before, once the handler has been given back."""
    import _thread
    import threading

    def mark():
        if isinstance(signal.getsignal(signum), _Interrupted):
            signal.pthread_kill(threading.main_thread().ident, signum)
            return
        try:
            _thread.interrupt_main(signum)      # marked, not sent: the handler in place now takes it
        except TypeError:       # Python 3.9: interrupt_main() takes no signal
            signal.pthread_kill(threading.main_thread().ident, signum)
    again = threading.Timer(SIGNAL_AGAIN_AFTER, mark)
    again.daemon = True
    again.start()


def report_error(exc):
    """Print an LLSVMError the LIBLINEAR way on stderr."""
    if isinstance(exc, (ParamError, CheckParameterError)):
        click.echo(f"ERROR: {exc}", err=True)
    elif isinstance(exc, DataFormatError) and exc.line > 0:
        click.echo(f"Wrong input format at line {exc.line}", err=True)
        click.echo(f"{exc.path}: line {exc.line}, column {exc.column}: {exc.message}", err=True)
    elif isinstance(exc, InputOpenError):
        click.echo(str(exc), err=True)
    else:
        click.echo(f"Error: {exc}", err=True)


def arm_kernel_stop():
    """From here to the end of the command's body, SIGINT and SIGTERM also stop a kernel in the middle of its
    loop (cext/_stop.pyx, armed through llsvm/stop.py); called by each command before it loads its data and
    kernels."""
    KERNEL_STOP.arm_for_command()


def _internal_error(exc):
    """An unexpected exception: a one-line message and exit 1 (LLSVM_DEBUG=1 raises it, with its traceback)."""
    if os.environ.get("LLSVM_DEBUG"):
        raise exc
    click.echo(f"Error: internal error ({type(exc).__name__}: {exc}); please report it, with the command "
               "(LLSVM_DEBUG=1 shows where it happened)", err=True)
    sys.exit(1)


def _signal_exit_inside(exc):
    """The signal handler's SystemExit (130 / 143) when `exc` only wraps it, else None: Python 3.11 turns an
    exception raised in a class body's __set_name__ into a RuntimeError whose cause it is (a Ctrl-C while a module
    defining a dataclass is imported)."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, SystemExit):
            return exc
        exc = exc.__cause__ or exc.__context__
    return None


def handle_errors(fn):
    """Run a command body: LLSVMError -> message on stderr and exit 1 (Click's usage errors keep exit 2); out of
    memory -> a message and exit 1; stdout's reader gone (a pipe into `head`) -> no message, exit 141 (SIGPIPE's);
    SIGINT -> exit 130 and SIGTERM -> 143 after cleanup, also in the middle of a
    kernel call once the body has called arm_kernel_stop (cext/_stop.pyx); a signal the process
    inherited as ignored stays ignored; no traceback reaches the user (LLSVM_DEBUG=1 shows one for an unexpected
    error)."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        previous = {}
        handler = _Interrupted()
        reset_commit()
        try:
            for sig in (signal.SIGINT, signal.SIGTERM):
                if signal.getsignal(sig) != signal.SIG_IGN:     # an inherited SIG_IGN stays (LIBLINEAR's too)
                    previous[sig] = signal.signal(sig, handler)
        except ValueError:      # not the main thread (e.g. inside a test runner thread)
            pass
        if previous:
            sys.unraisablehook = handler.unraisable
            KERNEL_STOP.want(True)          # the body's arm_kernel_stop arms the kernels' stop flag
        try:
            return fn(*args, **kwargs)
        except LLSVMError as exc:
            report_error(exc)
            sys.exit(1)
        except MemoryError as exc:
            click.echo(f"Error: out of memory{f': {exc}' if str(exc) else ''}", err=True)
            sys.exit(1)
        except (click.exceptions.ClickException, click.exceptions.Exit, click.exceptions.Abort):
            raise
        except BrokenPipeError as exc:
            # the reader of what the command writes to stdout has gone (`llsvm-convert --info x | head -3`): no
            # message, and the status of a C tool that SIGPIPE ended (progress lines never get here: report.py);
            # a broken pipe anywhere else is an error like any other
            if not reader_gone("stdout"):
                _internal_error(exc)
            silence("stdout")
            sys.exit(128 + signal.SIGPIPE)
        except Exception as exc:
            inner = _signal_exit_inside(exc)
            if inner is not None:
                raise inner from None           # Ctrl-C, wrapped on its way: still exit 130, no message
            _internal_error(exc)
        finally:
            if previous:
                KERNEL_STOP.disarm()
            for sig, prev in previous.items():
                signal.signal(sig, prev)
            if sys.unraisablehook == handler.unraisable:
                sys.unraisablehook = handler.previous_hook
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
        # stdout's reader gone ('-' into `| head`) is no error of the file: handle_errors ends the command quietly
        if exc_type is not None and issubclass(exc_type, self.types) and not isinstance(exc, LLSVMError) and \
                not (issubclass(exc_type, BrokenPipeError) and reader_gone("stdout")):
            text = f"{self.message}: {exc.strerror or exc}" if self.detail else self.message
            raise self.error(text) from None
        return False


def complete_path(ctx, param, incomplete):
    """Shell completion (Click's: docs/guide.md, "Shell completion") of a file argument or option: the shell's own
    file names."""
    from click.shell_completion import CompletionItem
    return [CompletionItem(incomplete, type="file")]


def check_input(path, pattern=False):
    """Raise InputOpenError with LIBLINEAR's message unless path ('-' is stdin) can be opened for reading.
    pattern: the path may be a glob (llsvm-train --dask: its files are checked when they are listed)."""
    if path == "-" or (pattern and glob.has_magic(path)):
        return
    with os_errors(f"can't open input file {path}"):
        with open(path, "rb"):
            pass


def _same_file(a, b):
    """Whether paths a and b name one regular file (a symlink, another spelling or a hard link of it), or, where
    neither exists yet, one path."""
    import stat
    try:
        sa, sb = os.stat(a), os.stat(b)
    except OSError:
        return not os.path.lexists(a) and not os.path.lexists(b) and os.path.realpath(a) == os.path.realpath(b)
    return stat.S_ISREG(sa.st_mode) and os.path.samestat(sa, sb)


def refuse_same_file(outputs, inputs=()):
    """Refuse, before any work, an output that is one of the inputs or another output by any path (a symlink,
    another spelling, a hard link): writing it would replace the input (or the other output), which would be lost.
    outputs, inputs: (what the command calls it, path) pairs; a path None or '-' (stdin, stdout) is left out, and
    so is a device or a pipe (/dev/stdin and /dev/stdout may be one terminal: nothing there is replaced)."""
    ins = [(what, path) for what, path in inputs if path not in (None, "-")]
    outs = [(what, path) for what, path in outputs if path not in (None, "-")]
    for k, (what, path) in enumerate(outs):
        for other_what, other in ins + outs[:k]:
            if _same_file(path, other):
                raise LLSVMError(f"{what} {path} and {other_what} {other} are the same file: writing {what} would "
                                 "replace it (nothing was written)")


def check_writable(path, what):
    """Refuse early (before any work) an output path whose directory cannot take a new file."""
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory) or not os.access(directory, os.W_OK | os.X_OK) or os.path.isdir(path):
        raise LLSVMError(f"can't write {what} {path}: no such directory or not writable")


def measure_names(ctx, param, value):
    """Click's callback of --measure: the names (options.parse_measures), a usage error naming a wrong one."""
    if value is None:
        return None
    from ..errors import ParameterError
    from ..options import parse_measures
    try:
        return parse_measures(value)
    except ParameterError as exc:
        raise click.BadParameter(str(exc).removeprefix("--measure "), param_hint="'--measure'") from None


def check_plot(path):
    """--plot's file, refused before any work: a directory that cannot take it, or no matplotlib (the `plot`
    extra)."""
    if path is None:
        return
    check_writable(path, "plot file")
    from ..plots import require_matplotlib
    require_matplotlib()


def write_plot(summary, path, title):
    """--plot's file (llsvm/plots.py), atomically; a failure names the file."""
    from ..plots import save
    with os_errors(f"can't write plot file {path}", detail=True, error=LLSVMError):
        save(summary, path, title=title)


def write_json(path, data):
    """A command's --json file, written atomically; a failure names the file and the system's reason."""
    import json
    from ..fileutil import atomic_output
    with os_errors(f"can't write JSON file {path}", detail=True, error=LLSVMError):
        with atomic_output(path, "w") as f:
            json.dump(data, f, indent=1, default=float)
            f.write("\n")


def peak_rss_mb():
    import resource
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def make_reporter(quiet, progress, stdout_taken=False):
    return Reporter(quiet=quiet, progress=progress, stdout_taken=stdout_taken)
