"""Atomic file output: write to a temporary file beside the target, then rename over it.

An interrupted run (an exception, Ctrl-C, SIGTERM through the CLI's handler) removes the temporary file and leaves
any existing target untouched, so no reader ever sees a half-written model or data file.

The rename of a command's output is its point of no return (`commit_output`): from the moment it starts, the
CLI's signal handler ignores SIGINT and SIGTERM (cli/common.py), and the command finishes its remaining small
steps (further renames, the metrics, its last lines) and exits 0. So exit 130 or 143 always means that no target
was changed, and exit 0 that all of them were written.

Temporary files and directories are recorded by name before they are created and forgotten once renamed or
removed (`temporary_file`, `temporary_dir`, `rename_temporary`, `discard_temporary`, `remove_tree`). Whatever
moment a signal lands at, even between the creation and the line that would clean up (Python runs a signal
handler between any two bytecodes, also at the entry of a cleanup function), what is still recorded is removed by
the console script once signals are ignored (cli/entry.py: remove_temporaries).
"""
import contextlib
import os
import sys


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
    _forget(tmp)


class _Temporaries:
    """The temporary paths of the running process that may exist: path -> True for a directory, False for a file."""
    paths = {}


def _record(path, is_dir):
    _Temporaries.paths[path] = is_dir


def _forget(path):
    _Temporaries.paths.pop(path, None)


def _random_name(directory, prefix, suffix=""):
    # 48 random bits: a name that exists already (retried by the callers) is practically impossible
    return os.path.join(directory, f"{prefix}{os.urandom(6).hex()}{suffix}")


def _create(directory, prefix, suffix, is_dir, make):
    """(make(path), path) for a new random path in `directory`, recorded before make creates it."""
    while True:
        path = _random_name(directory, prefix, suffix)
        _record(path, is_dir)
        try:
            return make(path), path
        except FileExistsError:         # another file's name: not ours to remove
            _forget(path)


def temporary_file(directory, prefix, suffix=".tmp"):
    """A new file in `directory`, created exclusively with mode 0600, recorded before it exists: (fd, path)."""
    flags = os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    return _create(directory, prefix, suffix, False, lambda path: os.open(path, flags, 0o600))


def temporary_dir(directory, prefix):
    """A new directory in `directory` (mode 0700), recorded before it exists: its path."""
    return _create(directory, prefix, "", True, lambda path: os.mkdir(path, 0o700))[1]


class ScratchFiles:
    """The files a solver writes again and again in its temporary directory (-s llsvm's active sets): one that is
    replaced or dropped becomes a spare, which the next writer overwrites in place (BinaryWriter(scratch=...)).
    The page cache's pages of the old file are so reused instead of freed and allocated anew: on a virtual machine
    a page new to the guest can cost a fault of the host (about 1.5 us per 4 KB here), and the kernel frees a
    replaced file's pages inside the rename. The spares stay in the directory, which goes as a whole at the end."""

    def __init__(self, directory, prefix="spare-"):
        self.directory = directory
        self.prefix = prefix        # one per user of the directory (threads need not share a counter)
        self.free = []
        self._n = 0

    MAX_SPARES = 2          # a writer takes one and a replaced file gives one back: more would only hold disk

    def retire(self, path):
        """`path` (if it exists) becomes a spare; with MAX_SPARES spares already, it is removed."""
        if os.path.exists(path):
            if len(self.free) >= self.MAX_SPARES:
                os.unlink(path)
                return
            spare = os.path.join(self.directory, f"{self.prefix}{self._n}.tmp")
            self._n += 1
            os.replace(path, spare)
            self.free.append(spare)

    def take(self):
        """A spare to overwrite (it is no longer one), or None."""
        return self.free.pop() if self.free else None

    def replace(self, src, dst):
        """os.replace(src, dst), the old dst kept as a spare."""
        self.retire(dst)
        os.replace(src, dst)


def rename_temporary(tmp, path):
    """os.replace a finished temporary file onto `path` (not a command's output: commit_output renames those)."""
    os.replace(tmp, path)
    _forget(tmp)


def discard_temporary(tmp):
    """Remove a temporary file (gone already: nothing to do)."""
    with contextlib.suppress(OSError):
        os.unlink(tmp)
    _forget(tmp)


def remove_temporaries():
    """Remove every recorded temporary path that is left (the console scripts call it last, with SIGINT and SIGTERM
    ignored, so nothing cuts it short)."""
    for path, is_dir in list(_Temporaries.paths.items()):
        if is_dir:
            remove_tree(path)
        else:
            discard_temporary(path)


def remove_tree(path):
    """shutil.rmtree that a signal cannot cut short. The signal can land in the removal itself (once the work is
    done, in a driver's cleanup), where the CLI's handler raises SystemExit(130/143) (cli/common.py) and a plain
    Python caller gets KeyboardInterrupt: either is held until the tree is gone, then raised. (Holding only
    KeyboardInterrupt left the directory behind: issue 26, the random-signal test's `llsvm-*` leak.)"""
    interrupted = None
    while True:
        try:
            import shutil
            shutil.rmtree(path, ignore_errors=True)
            _forget(path)
            break
        except (KeyboardInterrupt, SystemExit) as exc:
            if interrupted is None:
                interrupted = exc
    if interrupted is not None:
        raise interrupted


def _special(path):
    """Whether path exists and is not a regular file or a directory (a device, a FIFO, a socket)."""
    import stat
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


# an output that replaces a regular file at least this large drops that file's cached pages while it is written
RELEASE_MIN_BYTES = 32 << 20


def release_replaced(path):
    """Start dropping the cached pages of the regular file that the output `path` will replace, on a thread of its
    own; returns the thread (join it before the rename) or None (no such file, a small one, no posix_fadvise).

    The kernel frees a replaced file's page cache inside the rename that replaces it, after all the work (0.13 s
    for 458 MB here), and the new file's page cache meanwhile takes pages of its own. Dropped at the start
    (posix_fadvise POSIX_FADV_DONTNEED: clean pages only, the file's data untouched, so a command that fails
    leaves it whole), the freeing runs beside the work and its pages are at hand for the new file."""
    import stat
    import threading
    advise = getattr(os, "posix_fadvise", None)
    try:
        st = os.stat(path)
    except OSError:
        return None
    if advise is None or not stat.S_ISREG(st.st_mode) or st.st_size < RELEASE_MIN_BYTES:
        return None

    def drop():
        with contextlib.suppress(OSError):
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
            try:
                if os.fstat(fd).st_ino == st.st_ino:        # still the file that was looked at
                    advise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            finally:
                os.close(fd)
    t = threading.Thread(target=drop, name="llsvm-release-replaced", daemon=True)
    t.start()
    return t


def joined(thread):
    """Wait for a thread from release_replaced (None: nothing to wait for)."""
    if thread is not None:
        thread.join()


def temp_beside(path):
    """(fd, path) of a new hidden temporary file in the folder of `path` (so that its rename onto `path` is atomic)."""
    return temporary_file(os.path.dirname(os.path.abspath(path)), "." + os.path.basename(path) + ".")


@contextlib.contextmanager
def atomic_output(path, mode="wb"):
    """Yield a file object whose contents replace `path` only if the block finishes without an exception.

    `path` '-' writes to stdout instead (not atomic: a pipe cannot be), and an existing path that is not a regular
    file (/dev/null, a FIFO, a terminal) is written in place: renaming a file onto it would replace the device.
    """
    if path == "-":
        stream = sys.stdout.buffer if "b" in mode else sys.stdout
        yield stream
        stream.flush()
        return
    if _special(path):
        with open(path, mode, **({} if "b" in mode else {"encoding": "ascii", "newline": "\n"})) as f:
            yield f
        return
    fd, tmp = temp_beside(path)
    release = release_replaced(path)
    try:
        with os.fdopen(fd, mode, **({} if "b" in mode else {"encoding": "ascii", "newline": "\n"})) as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o666 & ~_umask())
        joined(release)
        commit_output(tmp, path)
    except BaseException:
        discard_temporary(tmp)
        raise


def _umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask
