"""Opening inputs: paths or '-' for stdin, compression recognised by magic bytes (not by the file name)."""
import bz2
import gzip
import io
import lzma
import os
import mmap
import queue
import stat
import sys
import threading
import time
import zlib

from .errors import DataFormatError

GZIP_MAGIC = b"\x1f\x8b"
BZIP2_MAGIC = b"BZh"
XZ_MAGIC = b"\xfd7zXZ\x00"
BINARY_MAGIC = b"LLSVMBIN"

STDIN = "-"


def display_name(path):
    return "<stdin>" if path == STDIN else os.fspath(path)


def _peek(f, n):
    """The first n bytes of a buffered binary stream without consuming them."""
    data = b""
    while len(data) < n:
        more = f.peek(n)
        if len(more) <= len(data):   # EOF (peek returns what is buffered; an empty result means EOF)
            break
        data = more
    return data[:n]


def sniff_kind(head):
    """'binary', 'gzip', 'bzip2', 'xz' or 'text' from a file's first bytes."""
    if head.startswith(BINARY_MAGIC):
        return "binary"
    if head.startswith(GZIP_MAGIC):
        return "gzip"
    if head.startswith(BZIP2_MAGIC):
        return "bzip2"
    if head.startswith(XZ_MAGIC):
        return "xz"
    return "text"


TRAILING_GARBAGE = "trailing garbage after the compressed data"


class _Streams(io.RawIOBase):
    """bzip2 or xz input as `bzip2 -d` and `xz -d` read it: one compressed stream after another (concatenated
    files), and for xz its stream padding (null bytes, four at a time) after a stream; anything else after a stream
    is refused (OSError, as the decompressors' own errors are), where Python's BZ2File and LZMAFile stop there
    without a word and the rest of the file is lost."""

    READ = 1 << 16

    def __init__(self, raw, kind):
        self._raw = raw
        self._xz = kind == "xz"
        self._magic = XZ_MAGIC if self._xz else BZIP2_MAGIC
        self._dec = self._new()
        self._in = b""              # input for the next decompressor, read past the end of the last stream
        self._done = False

    def _new(self):
        return lzma.LZMADecompressor(lzma.FORMAT_XZ) if self._xz else bz2.BZ2Decompressor()

    def readable(self):
        return True

    def readinto(self, b):
        view = memoryview(b).cast("B")
        while not self._done:
            if self._dec.eof:
                self._next_stream()
                continue
            data = b""
            if self._dec.needs_input:
                data, self._in = self._in or self._raw.read(self.READ), b""
                if not data:
                    raise EOFError("Compressed file ended before the end-of-stream marker was reached")
            out = self._dec.decompress(data, len(view))
            if out:
                view[:len(out)] = out
                return len(out)
        return 0

    def _more(self, data, need):
        """data with the raw input after it, until it holds `need` bytes or the input ends."""
        while len(data) < need:
            more = self._raw.read(self.READ)
            if not more:
                break
            data += more
        return data

    def _next_stream(self):
        """After a stream's end: the end of the input, or the next stream (after xz's padding), or refused."""
        rest = self._dec.unused_data
        if self._xz:
            nulls = 0
            while True:
                kept = rest.lstrip(b"\0")
                nulls += len(rest) - len(kept)
                rest = kept or self._raw.read(self.READ)
                if kept or not rest:
                    break
            if nulls % 4:
                raise OSError(f"{TRAILING_GARBAGE} (stream padding of {nulls} null bytes, not a multiple of 4)")
        rest = self._more(rest, len(self._magic))
        if not rest:
            self._done = True
        elif not rest.startswith(self._magic):
            raise OSError(TRAILING_GARBAGE)
        else:
            self._dec, self._in = self._new(), rest


def sniff_path(path):
    """The kind of the file at path ('-' is never binary-sniffed here: see open_text)."""
    if path == STDIN:
        return "stdin"
    with open(path, "rb") as f:
        return sniff_kind(f.read(8))


class TextSource:
    """A readable byte stream of LIBSVM text, decompressed as its magic bytes say.

    ``raw_position()`` tells how far into the underlying file (compressed bytes) reading has gone, for progress.
    """

    def __init__(self, path):
        self.path = path
        self.name = display_name(path)
        if path == STDIN:
            raw = sys.stdin.buffer
            self._owns_raw = False
            self.total_bytes = None
        else:
            raw = open(path, "rb")
            self._owns_raw = True
            try:
                self.total_bytes = os.fstat(raw.fileno()).st_size
            except OSError:
                self.total_bytes = None
        if not isinstance(raw, io.BufferedReader):
            raw = io.BufferedReader(raw)
        self._raw = raw
        head = _peek(raw, 8)
        self.kind = sniff_kind(head)
        if self.kind == "binary":
            self.stream = None
        elif self.kind == "gzip":
            self.stream = gzip.GzipFile(fileobj=raw, mode="rb")
        elif self.kind in ("bzip2", "xz"):
            self.stream = _Streams(raw, self.kind)
        else:
            self.stream = raw

    def mapped(self):
        """The whole file as a read-only memory map when it is a regular, uncompressed, non-empty file (the parser
        then reads the page cache in place: no copy into a buffer); None otherwise (stdin, pipes, compressed input,
        an empty file, or a file the system will not map), which the caller reads as a stream. The map reads
        ahead sequentially; the caller closes it."""
        if self.kind != "text" or not self._owns_raw:
            return None
        try:
            fd = self._raw.fileno()
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode) or st.st_size == 0:
                return None
            mm = mmap.mmap(fd, 0, access=mmap.ACCESS_READ)
        except (OSError, ValueError):
            return None
        if hasattr(mm, "madvise") and hasattr(mmap, "MADV_SEQUENTIAL"):
            mm.madvise(mmap.MADV_SEQUENTIAL)
        return mm

    def raw_position(self):
        try:
            return self._raw.tell()
        except (OSError, ValueError):
            return None

    def readinto(self, view):
        """Fill view as far as the stream allows; returns the bytes read (0 only at EOF)."""
        total = 0
        n = len(view)
        try:
            while total < n:
                got = self.stream.readinto(view[total:])
                if not got:
                    break
                total += got
        except gzip.BadGzipFile as exc:
            # the first member's magic bytes were seen: a later "member" that has none is trailing garbage
            what = TRAILING_GARBAGE if str(exc).startswith("Not a gzipped file") else exc
            raise DataFormatError(self.name, 0, 0, f"corrupt or truncated {self.kind} input ({what})") from None
        except (EOFError, zlib.error, lzma.LZMAError) as exc:
            raise DataFormatError(self.name, 0, 0, f"corrupt or truncated {self.kind} input ({exc})") from None
        except OSError as exc:
            if self.kind in ("gzip", "bzip2", "xz") and exc.errno is None:   # decompressor's own errors
                raise DataFormatError(self.name, 0, 0, f"corrupt or truncated {self.kind} input ({exc})") from None
            raise
        return total

    def close(self):
        if self.stream is not None and self.stream is not self._raw:
            self.stream.close()
        if self._owns_raw:
            self._raw.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


SIGNAL_POLL = 0.1       # seconds: the longest a consumer's wait for the next item goes without looking at signals


def prefetched(iterator, depth=1, bounded=False):
    """Iterate on a helper thread, `depth` items ahead (parsing or reading overlaps the kernels or the writes: both
    release the GIL). An exception of the iterator is raised to the consumer at the item where it happened.
    `bounded`: at most depth + 1 items exist at once, the consumer's included, provided the consumer drops its
    reference to an item (del) before it asks for the next (a binary file's blocks read ahead within a budget that
    counts depth + 1 blocks); otherwise the helper also holds one item while the queue is full. The items and
    their order are the iterator's: only the timing changes."""
    q = queue.Queue(maxsize=depth)
    stop = threading.Event()
    slots = threading.Semaphore(depth + 1) if bounded else None
    DONE = object()

    def run():
        try:
            it = iter(iterator)
            while True:
                if slots is not None:
                    while not slots.acquire(timeout=0.1):
                        if stop.is_set():
                            return
                try:
                    item = next(it)
                except StopIteration:
                    break
                while not stop.is_set():
                    try:
                        q.put((True, item), timeout=0.1)
                        break
                    except queue.Full:
                        continue
                item = None
                if stop.is_set():
                    return
            q.put((True, DONE))
        except BaseException as exc:          # handed to the consumer
            q.put((False, exc))

    t = threading.Thread(target=run, name="llsvm-reader", daemon=True)
    t.start()
    try:
        while True:
            # never an untimed wait: a signal whose C handler ran just before this thread blocked (between the
            # interpreter's last look at its pending signals and the lock's wait) would otherwise wait for the next
            # item, which a pipe left open never brings (issue 49: SIGTERM to `-s llsvm` reading stdin stalled
            # about once in three whole-suite runs); each timeout goes back to the interpreter, which runs it
            try:
                ok, item = q.get(timeout=SIGNAL_POLL)
            except queue.Empty:
                continue
            if not ok:
                raise item
            if item is DONE:
                return
            yield item
            item = None
            if slots is not None:
                slots.release()           # the consumer let go of the item it had: the helper may read one more
    finally:
        stop.set()
        # the reader may be blocked on an open pipe (stdin): give it a moment, then leave it (a daemon thread)
        deadline = time.monotonic() + 1.0
        while t.is_alive() and time.monotonic() < deadline:
            try:
                q.get(timeout=0.05)
            except queue.Empty:
                pass
