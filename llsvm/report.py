"""The reporter: the one way library code talks to people (DESIGN.md section 3).

Library code never prints. It calls ``reporter.line(text)`` for LIBLINEAR's output lines, ``reporter.warning``
for warnings, and ``reporter.bar(...)`` for a progress bar. The CLI picks the reporter: LIBLINEAR-like lines on
stdout, quiet (``-q``), and tqdm bars on stderr when asked for or when stderr is a terminal.
"""
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


class Reporter:
    """Prints lines to `out` (stdout) unless quiet; shows tqdm bars on stderr when `progress` is true."""

    def __init__(self, quiet=False, progress=None, out=None, err=None):
        self.quiet = quiet
        self.out = out
        self.err = err
        if progress is None:
            stream = err if err is not None else sys.stderr
            progress = (not quiet) and hasattr(stream, "isatty") and stream.isatty()
        self.progress = bool(progress)

    def line(self, text="", end="\n"):
        if not self.quiet:
            out = self.out if self.out is not None else sys.stdout
            out.write(text + end)
            out.flush()

    def warning(self, text):
        if not self.quiet:
            err = self.err if self.err is not None else sys.stderr
            err.write(text + "\n")
            err.flush()

    def bar(self, total=None, desc=None, unit="B"):
        if not self.progress:
            return _NoBar()
        from tqdm import tqdm

        return tqdm(total=total, desc=desc, unit=unit, unit_scale=True, unit_divisor=1024 if unit == "B" else 1000,
                    file=self.err if self.err is not None else sys.stderr, leave=False, dynamic_ncols=True)


QUIET = Reporter(quiet=True, progress=False)
