"""Atomic file output: write to a temporary file beside the target, then rename over it.

An interrupted run (an exception, Ctrl-C, SIGTERM through the CLI's handler) removes the temporary file and leaves
any existing target untouched, so no reader ever sees a half-written model or data file.
"""
import contextlib
import os
import sys
import tempfile


def _temp_beside(path):
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".", suffix=".tmp", dir=directory)
    return fd, tmp


@contextlib.contextmanager
def atomic_output(path, mode="wb"):
    """Yield a file object whose contents replace `path` only if the block finishes without an exception.

    `path` '-' writes to stdout instead (not atomic: a pipe cannot be).
    """
    if path == "-":
        stream = sys.stdout.buffer if "b" in mode else sys.stdout
        yield stream
        stream.flush()
        return
    fd, tmp = _temp_beside(path)
    try:
        with os.fdopen(fd, mode, **({} if "b" in mode else {"encoding": "ascii", "newline": "\n"})) as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask
