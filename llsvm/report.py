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
  with ``-q``), with a total (and so a percentage and an ETA) whenever the work's size is known. Nothing is written
  onto a bar's line (issue 48): while a bar is shown, text for a terminal is written whole lines at a time above it
  (a partial line, LIBLINEAR's dots, waits for its end: the bar is the live progress then); text for a file or a
  pipe is written as it comes.
- ``live(take)``: a kernel's text as it runs (LIBSVM's dots during an SMO solve, issue 48): a thread calls `take`
  (a kernel's take_text, which reads what the kernel wrote under a lock, no GIL needed by the kernel) a few times a
  second and says it through ``info``, so the text comes in the order, and with the bytes, it would at the end.

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

    def refresh(self):
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
        # the live thread (live()) only for text to the standard streams: a library caller's say= is called from
        # its own thread only
        self.live_text = out is None
        self._bars = []                 # the bars shown (bar()), latest last
        self._pending = {}              # stream name -> a partial line held while a bar is shown

    def _say(self, name, text, write):
        """Write `text` for the standard stream `name` through `write`: above the bars shown when that stream is
        a terminal (whole lines; a partial line is held until its end or the last bar's close)."""
        if not self._bars or not _is_terminal(name):
            write(text)
            return
        text = self._pending.pop(name, "") + text
        cut = text.rfind("\n") + 1
        if cut < len(text):
            self._pending[name] = text[cut:]
        if cut:
            from tqdm import tqdm
            with tqdm.external_write_mode(file=getattr(sys, name)):
                write(text[:cut])

    def _closed(self, bar):
        if bar in self._bars:
            self._bars.remove(bar)
        if not self._bars:
            for name, text in list(self._pending.items()):
                del self._pending[name]
                (self._out if name == self._out_name else self._err)(text)

    @property
    def _out_name(self):
        return "stderr" if self.stdout_taken else "stdout"

    def info(self, text):
        if not self.quiet and text:
            self._say(self._out_name, text, self._out)

    def line(self, text=""):
        self.info(text + "\n")

    def warning(self, text):
        if not self.quiet and text:
            self._say("stderr", text, self._err)

    def result(self, text):
        """The command's results, as LIBLINEAR prints them with printf: standard output even with -q; standard
        error, and nothing with -q, when standard output carries the command's data."""
        if not text:
            return
        if not self.stdout_taken:
            self._say("stdout", text, lambda t: write_standard("stdout", t))
        elif not self.quiet:
            self.info(text)

    def bar(self, total=None, desc=None, unit="B"):
        """A tqdm bar (a do-nothing one without progress): `total` units of work when known (bytes of a file,
        rows, passes, folds, cells, tasks), so that it shows a percentage and an ETA. Close it (or use it as a
        context manager)."""
        if not self.progress:
            return _NoBar()
        err = self._err_target if hasattr(self._err_target, "write") else sys.stderr
        bar = _Bar(total=total, desc=desc, unit=unit, unit_scale=_scaled(unit),
                   unit_divisor=1024 if unit == "B" else 1000, file=err, leave=False, dynamic_ncols=True)
        bar.reporter = self
        self._bars.append(bar)
        return bar

    def waiting(self, desc):
        """A bar for work of unknown size and no count (a cluster starting): `desc` and the time it has taken,
        redrawn every half second by a thread while the body runs; nothing without progress."""
        return _Waiting(self.bar(desc=desc)) if self.progress else _NoBar()

    def live(self, take, interval=0.1):
        """A context manager saying the text `take()` returns as it comes, from a thread polling every `interval`
        seconds while the body runs (a kernel holding no GIL), then what is left; it gives the function that does
        one such step, for the body's own calls between kernel calls (text in order either way). Without a
        thread (quiet, a buffered or library reporter) the steps are the body's calls and the last one."""
        return _Live(self, take, interval)

    def buffered(self):
        return _Buffered(self)


def size_bar(bar, total, unit=None):
    """Give `bar` (Reporter.bar's, made before the work's size was known, nothing done on it yet) the size of its
    work, `total` units (nothing when unknown: None or not positive), and with `unit` the unit it counts in (a
    binary file's rows where its text would be bytes). A do-nothing bar stays one."""
    if bar is None or not total or total <= 0 or isinstance(bar, _NoBar):
        return
    _set_unit(bar, unit)
    bar.total = total
    bar.refresh()


def restage(bar, desc, total=None, unit=None):
    """Start `bar` (Reporter.bar's) again for the next stage of the same work: `desc`, its `total` (None: unknown)
    and `unit` (the same when None). A do-nothing bar stays one."""
    if not hasattr(bar, "reset"):
        return
    bar.reset(total=total)
    bar.miniters = 0                # tqdm's reset keeps the counts per redraw the last stage's steps set
    if total is None:               # and the last total
        bar.total = None
    _set_unit(bar, unit)
    bar.set_description_str(desc)


def _scaled(unit):
    """Whether a bar of `unit` shows its counts scaled (17.8M bytes, 260k rows) rather than whole (3/5 folds)."""
    return unit in ("B", "rows")


def _set_unit(bar, unit):
    if unit is not None and unit != bar.unit:
        bar.unit = unit
        bar.unit_scale = _scaled(unit)
        bar.unit_divisor = 1024 if unit == "B" else 1000


def _is_terminal(name):
    stream = getattr(sys, name, None)
    try:
        return stream is not None and stream.isatty()
    except (AttributeError, ValueError):
        return False


def _bar_class():
    from tqdm import tqdm

    class Bar(tqdm):
        """A tqdm bar that tells its reporter when it closes (text held for its line is written then)."""
        reporter = None

        def close(self):
            try:
                super().close()
            finally:
                if self.reporter is not None:
                    reporter, self.reporter = self.reporter, None
                    reporter._closed(self)
    return Bar


class _LazyBar:
    def __call__(self, *args, **kwargs):
        global _Bar
        _Bar = _bar_class()
        return _Bar(*args, **kwargs)


_Bar = _LazyBar()


class _Waiting:
    def __init__(self, bar):
        import threading
        self.bar = bar
        bar.bar_format = "{desc}: {elapsed}"
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._tick, name="llsvm-waiting", daemon=True)

    def _tick(self):
        while not self.done.wait(0.5):
            self.bar.refresh()

    def __enter__(self):
        self.bar.refresh()
        self.thread.start()
        return self.bar

    def __exit__(self, *exc):
        self.done.set()
        self.thread.join()
        self.bar.close()


class _Live:
    def __init__(self, reporter, take, interval):
        import threading
        self.reporter, self.take, self.interval = reporter, take, interval
        self.lock = threading.Lock()
        self.done = threading.Event()
        self.thread = None
        if reporter.live_text and not reporter.quiet:
            self.thread = threading.Thread(target=self._poll, name="llsvm-live", daemon=True)

    def step(self):
        with self.lock:
            self.reporter.info(self.take())

    def _poll(self):
        while not self.done.wait(self.interval):
            self.step()

    def __enter__(self):
        if self.thread is not None:
            self.thread.start()
        return self.step

    def __exit__(self, *exc):
        if self.thread is not None:
            self.done.set()
            self.thread.join()
        self.step()


class _Buffered(Reporter):
    """Keeps info and warning text in order: `items`, a list of (is_info, text), plain data that can cross to
    another process (llsvm.dask's tasks send theirs back); `replay()` hands it to the parent reporter."""

    def __init__(self, parent):
        self.quiet = parent.quiet
        self.stdout_taken = parent.stdout_taken
        self.progress = False
        self.live_text = False
        self._bars, self._pending = [], {}
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
