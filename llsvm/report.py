"""The reporter: the one way library code talks to people (docs/architecture.md, "Reporter").

Library code never prints. Every solver, the trainer and the CLI write through one Reporter:

- ``info(text)``: LIBLINEAR's ``info()`` text: the solvers' progress dots and lines, ``optimization finished``,
  ``Objective value``, ``nSV``, and the iteration-limit warning, which LIBLINEAR prints through ``info()`` too.
  Standard output; nothing with ``-q``.
- ``warning(text)``: the notices LIBLINEAR writes to standard error with fprintf, about the command itself (a
  weighted label that is absent, more folds than rows, no solver given with ``-C``), and llsvm's own of that kind.
  Standard error; nothing with ``-q`` (issue 43: ``-q`` silences everything but errors. LIBLINEAR's ``train -q``
  still prints its few fprintf notices; llsvm's does not).

So every solver's own warnings (the iteration limit above all) are on standard output, the command's on standard
error, and ``-q`` silences both, for every solver alike: a quiet run prints nothing but its errors.
- ``result(text)``: the lines LIBLINEAR writes with printf, the command's results: ``-v``'s ``Cross Validation
  Accuracy``, ``-C``'s search, the ``--grid`` table. Standard output, even with ``-q``, as LIBLINEAR's.

When standard output carries the command's data (``stdout_taken``: ``--json -``, a model or predictions written to
``-``), it holds that data alone: info and result text go to standard error, and ``-q`` silences both
(docs/guide.md, "stdout, stderr and exit status").
- ``bar(...)``: a tqdm progress bar on standard error, when asked for or when standard error is a terminal (never
  with ``-q``).

Both text methods take text as LIBLINEAR prints it (newlines included). Their targets are text streams or plain
callables (the library API's ``say=`` and ``warn=``). ``buffered()`` gives a child that keeps its text in order
until ``replay()``: parallel one-vs-rest classes and folds print whole and in task order.
"""
import os
import sys


class _NoBar:
    def update(self, n=1):
        pass

    def set_postfix_str(self, s):
        pass

    def close(self):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def write_standard(name, text):
    """Write text to the standard stream `name` ("stdout" or "stderr") and flush it. When its reader has gone (a
    pipe into `head`), the stream is pointed at the null device and the command goes on quietly, so that its
    model is still written (a C program would die of SIGPIPE and lose it)."""
    stream = getattr(sys, name)
    try:
        stream.write(text)
        stream.flush()
    except BrokenPipeError:
        silence(name)


def reader_gone(name):
    """Whether the standard stream `name` is a pipe (or socket) whose reader has gone: poll reports an error on it.
    A broken pipe elsewhere (a FIFO given as a path, a connection) is not this."""
    import select
    try:
        fd = getattr(sys, name).fileno()
        p = select.poll()
        p.register(fd, 0)
        return any(ev & (select.POLLERR | select.POLLHUP) for _, ev in p.poll(0))
    except (OSError, ValueError, AttributeError):
        return False


def silence(name):
    """Point the standard stream `name` at the null device (its reader has gone): what is still written, and the
    flush at exit, go nowhere instead of raising BrokenPipeError again."""
    stream = getattr(sys, name)
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, stream.fileno())
        os.close(null)
    except (OSError, ValueError):
        setattr(sys, name, open(os.devnull, "w"))


def _writer(target, default):
    """A function writing text to `target`: a callable, a stream, or None (the standard stream at write time)."""
    if target is None:
        return lambda text: write_standard(default, text)
    if callable(target):
        return target

    def write(text):
        target.write(text)
        target.flush()
    return write


class Reporter:
    """Text to `out` (info, results) and `err` (warnings) unless quiet; tqdm bars on stderr when `progress` is true.
    stdout_taken: standard output carries the command's data, so `out` is standard error and results are silenced
    by -q too."""

    def __init__(self, quiet=False, progress=None, out=None, err=None, stdout_taken=False):
        self.quiet = bool(quiet)
        self.stdout_taken = bool(stdout_taken)
        self._err_target = err
        self._out = _writer(out, "stderr" if stdout_taken and out is None else "stdout")
        self._err = _writer(err, "stderr")
        if progress is None:
            stream = err if err is not None and hasattr(err, "isatty") else sys.stderr
            progress = (not self.quiet) and hasattr(stream, "isatty") and stream.isatty()
        self.progress = bool(progress) and not self.quiet

    def info(self, text):
        if not self.quiet and text:
            self._out(text)

    def line(self, text=""):
        self.info(text + "\n")

    def warning(self, text):
        if not self.quiet and text:
            self._err(text)

    def result(self, text):
        """The command's results, as LIBLINEAR prints them with printf: standard output even with -q; standard
        error, and nothing with -q, when standard output carries the command's data."""
        if not text:
            return
        if not self.stdout_taken:
            write_standard("stdout", text)
        elif not self.quiet:
            self._out(text)

    def bar(self, total=None, desc=None, unit="B"):
        if not self.progress:
            return _NoBar()
        from tqdm import tqdm

        err = self._err_target if hasattr(self._err_target, "write") else sys.stderr
        return tqdm(total=total, desc=desc, unit=unit, unit_scale=True, unit_divisor=1024 if unit == "B" else 1000,
                    file=err, leave=False, dynamic_ncols=True)

    def buffered(self):
        return _Buffered(self)


class _Buffered(Reporter):
    """Keeps info and warning text in order: `items`, a list of (is_info, text), plain data that can cross to
    another process (llsvm.dask's tasks send theirs back); `replay()` hands it to the parent reporter."""

    def __init__(self, parent):
        self.quiet = parent.quiet
        self.stdout_taken = parent.stdout_taken
        self.progress = False
        self.items = []
        self._out = lambda text: self.items.append((True, text))
        self._err = lambda text: self.items.append((False, text))
        self._err_target = None

    def replay(self, parent):
        replay(self.items, parent)
        self.items = []


def replay(items, reporter):
    """Say a buffered reporter's `items` ((is_info, text), in order) through `reporter`."""
    for is_info, text in items:
        (reporter.info if is_info else reporter.warning)(text)


def as_reporter(reporter=None, say=None, warn=None):
    """The reporter of a library call: `reporter` as given, else one writing to the callables `say` (info) and
    `warn` (warnings), each silent when None."""
    if reporter is not None:
        return reporter
    return Reporter(progress=False, out=say or (lambda text: None), err=warn or (lambda text: None))
