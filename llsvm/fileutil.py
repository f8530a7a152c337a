"""Atomic file output: write to a temporary file beside the target, then rename over it.

An interrupted run (an exception, Ctrl-C, SIGTERM through the CLI's handler) removes the temporary file and leaves
any existing target untouched, so no reader ever sees a half-written model or data file.

The rename of a command's output is its point of no return (`commit_output`): from the moment it starts, the
CLI's signal handler ignores SIGINT and SIGTERM (cli/common.py), and the command finishes its remaining small
steps (further renames, the metrics, its last lines) and exits 0. So exit 130 or 143 always means that no target
was changed, and exit 0 that all of them were written.
"""
import contextlib
import os
import shutil
import sys
import tempfile


class _Commit:
    """Whether the running command has begun to put its outputs in place (one per process: the console scripts run
    one command; handle_errors resets it when a command starts)."""
    started = False


def reset_commit():
    _Commit.started = False


def output_committed():
    """True once the running command has begun to rename an output into place."""
    return _Commit.started


def commit_output(tmp, path):
    """Rename a finished temporary file over the command's output `path`: the point of no return. The flag is set
    before the rename, so a signal handled at any moment from here on finds it (a signal handled before it raises,
    and the target is untouched)."""
    _Commit.started = True
    os.replace(tmp, path)


def remove_tree(path):
    """shutil.rmtree that a Ctrl-C cannot cut short: a KeyboardInterrupt raised while it removes (the signal can
    land in the cleanup itself, after the work is done) is held until the tree is gone, then raised."""
    interrupted = None
    while True:
        try:
            shutil.rmtree(path, ignore_errors=True)
            break
        except KeyboardInterrupt as exc:
            interrupted = exc
    if interrupted is not None:
        raise interrupted


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
        commit_output(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask
