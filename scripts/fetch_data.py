"""Fetch the public LIBSVM data sets that the tests, benchmarks and reproduction scripts read (`make data`).

Every set of data/sets.tsv is downloaded from its public address (a file at a fixed commit of a public GitHub
repository), turned into the LIBSVM text by the row's transform, checked against the row's sha256 and size of that
text, and written as data/public/NAME.xz (write to a temporary file, then rename: no partial file is ever left
under the final name), with a data/public/MANIFEST.tsv describing the sets present. A set already there whose text
matches is skipped, so a second run costs only the checks.

Without internet, `--mirror DIR` (or LLSVM_DATA_MIRROR=DIR) takes each set from a local directory instead: DIR/NAME.xz
or the uncompressed DIR/NAME (another clone's data/public will do), checked the same way; the network is then not
used at all.

Transforms (column `transform` of data/sets.tsv; several joined by `+` apply in order):
  none           the file is the LIBSVM text
  bz2            bzip2-compressed
  lines:A-B      lines A to B (counted from 1, both included) of the file
  skin-uci       UCI's Skin_NonSkin.txt ("B<TAB>G<TAB>R<TAB>class" per line, CRLF) rewritten as LIBSVM's
                 skin_nonskin: "class 1:B 2:G 3:R", zero values left out

Exit status: 0 when every set asked for is present and verified (or with --best-effort), 1 otherwise: the sets
missing are named, with the reason (address unreachable, checksum mismatch with both digests, not in the mirror).

    python scripts/fetch_data.py                      # every set
    python scripts/fetch_data.py a9a a9a.t            # some
    python scripts/fetch_data.py --mirror /path/to/copy
    python scripts/fetch_data.py --best-effort        # what `make test` runs: never fails for a missing set

Standard library only.
"""
import argparse
import bz2
import hashlib
import http.client
import lzma
import os
import shutil
import signal
import socket
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SETS = os.path.join(ROOT, "data", "sets.tsv")
DEST = os.path.join(ROOT, "data", "public")
MIRROR_ENV = "LLSVM_DATA_MIRROR"
COLUMNS = ("name", "url", "transform", "sha256", "bytes", "rows", "features", "nnz", "classes", "class_counts",
           "libsvm_site", "note")
MANIFEST_COLUMNS = ("name", "file", "rows", "features", "nnz", "classes", "class_counts", "uncompressed_bytes",
                    "sha256", "url", "transform", "libsvm_site")
LIMIT = 1 << 30            # no download or decompressed intermediate may exceed this (1 GiB)
CHUNK = 1 << 20
PROG = "fetch_data"


class Failure(Exception):
    """A set could not be fetched or verified (the message says why)."""


class Unreachable(Failure):
    """The address did not answer (no network, DNS failure, refused, timed out): later sets on the same host are
    not tried again."""


class NotTried(Unreachable):
    """The set's host did not answer for an earlier set of this run."""


class Terminated(BaseException):
    """SIGTERM arrived (raised by the handler so that temporary files are removed on the way out)."""


class Usage(Exception):
    """Bad command line, sets table or mirror directory."""


# -- the sets table -------------------------------------------------------------------------------------------------
def parse_transform(spec):
    """The steps of a transform column: a list of ("bz2",), ("lines", A, B), ("skin-uci",); "none" is []."""
    steps = []
    for part in spec.split("+"):
        part = part.strip()
        if part == "none":
            continue
        if part in ("bz2", "skin-uci"):
            steps.append((part,))
            continue
        if part.startswith("lines:"):
            a, sep, b = part[len("lines:"):].partition("-")
            if sep and a.isdigit() and b.isdigit() and 1 <= int(a) <= int(b):
                steps.append(("lines", int(a), int(b)))
                continue
        raise ValueError(f"unknown transform {part!r} (none, bz2, lines:A-B, skin-uci)")
    return steps


def read_sets(path):
    """The rows of a sets table (tab-separated, a header line, '#' lines are comments) as dicts, checked."""
    try:
        with open(path, encoding="utf-8") as f:
            lines = [line.rstrip("\r\n") for line in f]
    except OSError as e:
        raise Usage(f"cannot read the sets table {path}: {e.strerror or e}")
    lines = [(i, line) for i, line in enumerate(lines, 1) if line.strip() and not line.startswith("#")]
    if not lines:
        raise Usage(f"{path}: no header line")
    head = lines[0][1].split("\t")
    missing = [c for c in COLUMNS[:5] if c not in head]
    if missing:
        raise Usage(f"{path}: the header lacks the column(s) {', '.join(missing)}")
    rows, seen = [], set()
    for no, line in lines[1:]:
        cells = line.split("\t")
        if len(cells) != len(head):
            raise Usage(f"{path} line {no}: {len(cells)} fields, the header has {len(head)}")
        row = dict(zip(head, cells))
        name = row["name"]
        if not name or "/" in name or name.startswith(".") or name in seen:
            raise Usage(f"{path} line {no}: bad or repeated set name {name!r}")
        seen.add(name)
        sha = row["sha256"].lower()
        if len(sha) != 64 or any(c not in "0123456789abcdef" for c in sha):
            raise Usage(f"{path} line {no} ({name}): sha256 is not 64 hex digits")
        if not row["bytes"].isdigit():
            raise Usage(f"{path} line {no} ({name}): bytes is not a whole number")
        try:
            row["steps"] = parse_transform(row["transform"])
        except ValueError as e:
            raise Usage(f"{path} line {no} ({name}): {e}")
        row["sha256"], row["size"] = sha, int(row["bytes"])
        rows.append(row)
    return rows


# -- transforms -----------------------------------------------------------------------------------------------------
def bunzip2(data):
    """bzip2 data (one or more streams) decompressed, at most LIMIT bytes."""
    out = bytearray()
    try:
        while data:
            d = bz2.BZ2Decompressor()
            buf = data
            while not d.eof:
                out += d.decompress(buf, max_length=LIMIT + 1 - len(out))
                buf = b""
                if len(out) > LIMIT:
                    raise Failure(f"decompresses to more than {LIMIT} bytes")
                if d.needs_input and not d.eof:
                    raise Failure("truncated bzip2 data")
            data = d.unused_data
    except OSError as e:
        raise Failure(f"not valid bzip2 data ({e})")
    return bytes(out)


def split_lines(data):
    """Lines with their b"\\n" (the last one without it when the data does not end in one)."""
    parts = data.split(b"\n")
    lines = [p + b"\n" for p in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def skin_uci(data):
    """UCI's Skin_NonSkin.txt rows "B\\tG\\tR\\tclass" as LIBSVM rows "class 1:B 2:G 3:R" (zero values left out)."""
    out = []
    for no, line in enumerate(data.split(b"\n"), 1):
        line = line.rstrip(b"\r")
        if not line.strip():
            continue
        fields = line.split(b"\t")
        if len(fields) != 4:
            raise Failure(f"skin-uci: line {no} has {len(fields)} tab-separated fields, not 4 (B, G, R, class)")
        try:
            zero = [float(v) == 0.0 for v in fields[:3]]
        except ValueError:
            raise Failure(f"skin-uci: line {no}: a value is not a number")
        out.append(b" ".join([fields[3].strip()] + [b"%d:%s" % (k, v.strip())
                                                     for k, (v, z) in enumerate(zip(fields[:3], zero), 1) if not z]))
    return b"\n".join(out) + b"\n" if out else b""


def apply_transform(steps, data):
    for step in steps:
        if step[0] == "bz2":
            data = bunzip2(data)
        elif step[0] == "lines":
            lines = split_lines(data)
            a, b = step[1], step[2]
            if b > len(lines):
                raise Failure(f"lines:{a}-{b}: the file has only {len(lines)} lines")
            data = b"".join(lines[a - 1:b])
        elif step[0] == "skin-uci":
            data = skin_uci(data)
    return data


# -- checks and atomic writes ---------------------------------------------------------------------------------------
def xz_text_digest(path, limit):
    """(sha256 hex, size) of the text an .xz file decompresses to, read in chunks; stops past `limit` bytes (the
    digest is then of the first part only: a mismatch anyway). Failure when the file is not valid xz."""
    try:
        with lzma.open(path) as f:
            return _digest(f, limit)
    except (lzma.LZMAError, EOFError) as e:
        raise Failure(f"{path} is not a valid .xz file ({e})")


def file_digest(path, limit):
    """(sha256 hex, size) of a plain file (reading stops past `limit` bytes)."""
    with open(path, "rb") as f:
        return _digest(f, limit)


def _digest(f, limit):
    """(sha256 hex, size) of what a file object gives, read in chunks until it ends or passes `limit` bytes."""
    h, size = hashlib.sha256(), 0
    while size <= limit:
        chunk = f.read(CHUNK)
        if not chunk:
            break
        h.update(chunk)
        size += len(chunk)
    return h.hexdigest(), size


def verify(row, digest, size, origin):
    """Failure naming the set, the origin and both digests (and sizes) unless the text is the expected one."""
    if digest != row["sha256"] or size != row["size"]:
        got = f"sha256 {digest}, {size} bytes" if size <= row["size"] else f"more than {row['size']} bytes"
        raise Failure(f"checksum mismatch for {origin}: expected sha256 {row['sha256']} ({row['size']} bytes), "
                      f"got {got}")


def write_atomic(path, fill):
    """Create `path` through a temporary file in its directory: fill(file object) writes it, then it is flushed,
    synced and renamed over `path`. On any failure (or an interruption) the temporary file is removed and `path`
    is left as it was."""
    d = os.path.dirname(path)
    os.makedirs(d, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=d, prefix="." + os.path.basename(path) + ".", suffix=".part")
    try:
        with os.fdopen(fd, "wb") as f:
            fill(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def write_xz(path, text):
    write_atomic(path, lambda f: f.write(lzma.compress(text, preset=6)))


def copy_file(src, path):
    def fill(f):
        with open(src, "rb") as g:
            shutil.copyfileobj(g, f, CHUNK)
    write_atomic(path, fill)


# -- sources --------------------------------------------------------------------------------------------------------
def download(url, timeout, retries):
    """The bytes at url (http, https or file); Unreachable when it does not answer, Failure on an HTTP error."""
    req = urllib.request.Request(url, headers={"User-Agent": "llsvm-fetch-data/1"})
    local = urllib.parse.urlsplit(url).scheme == "file"
    last = None
    for attempt in range(retries + 1):
        if attempt:
            time.sleep(min(2.0 * attempt, 5.0))
        try:
            with urllib.request.urlopen(req, timeout=timeout) as r:
                data = r.read(LIMIT + 1)
        except urllib.error.HTTPError as e:
            last = Failure(f"{url}: HTTP {e.code} {e.reason}")
            if e.code < 500 and e.code != 429:
                raise last
            continue
        except urllib.error.URLError as e:
            reason = e.reason.strerror if isinstance(e.reason, OSError) and e.reason.strerror else e.reason
            if local:
                raise Failure(f"cannot read {url}: {reason}")
            last = Unreachable(f"cannot download {url}: {reason}")
            if isinstance(e.reason, socket.gaierror):     # the name does not resolve: no network, no use retrying
                break
            continue
        except ValueError as e:
            raise Failure(f"bad address {url!r}: {e}")
        except (OSError, http.client.HTTPException) as e:   # timeouts while reading, resets, IncompleteRead
            last = Unreachable(f"cannot download {url}: {e.__class__.__name__}: {e}")
            continue
        if len(data) > LIMIT:
            raise Failure(f"{url} is larger than {LIMIT} bytes")
        return data
    raise last


def from_mirror(row, mirror, target):
    """Take the set from the mirror directory (NAME.xz, else the plain NAME) into target; the origin's name."""
    name = row["name"]
    xz = os.path.join(mirror, name + ".xz")
    plain = os.path.join(mirror, name)
    if os.path.isfile(xz):
        digest, size = xz_text_digest(xz, row["size"])
        verify(row, digest, size, xz)
        if os.path.abspath(xz) != os.path.abspath(target):
            copy_file(xz, target)
        return xz
    if os.path.isfile(plain):
        digest, size = file_digest(plain, row["size"])
        verify(row, digest, size, plain)
        with open(plain, "rb") as f:
            write_xz(target, f.read())
        return plain
    raise Failure(f"not in the mirror {mirror} (looked for {name}.xz and {name})")


def from_network(row, target, timeout, retries):
    data = download(row["url"], timeout, retries)
    try:
        text = apply_transform(row["steps"], data)
    except Failure as e:
        raise Failure(f"{row['url']}: {e}")
    verify(row, hashlib.sha256(text).hexdigest(), len(text), row["url"])
    write_xz(target, text)
    return row["url"]


def present(row, target):
    """True when target exists and holds the expected text; a note when it exists but does not."""
    if not os.path.isfile(target):
        return False, None
    try:
        digest, size = xz_text_digest(target, row["size"])
    except Failure as e:
        return False, f"{e}: fetching it again"
    if digest == row["sha256"] and size == row["size"]:
        return True, None
    return False, f"{target} is not the expected text (sha256 {digest}): fetching it again"


def write_manifest(rows, dest):
    """dest/MANIFEST.tsv: one line per set of the table whose NAME.xz is in dest (the layout readers expect)."""
    lines = ["\t".join(MANIFEST_COLUMNS)]
    for row in rows:
        if os.path.isfile(os.path.join(dest, row["name"] + ".xz")):
            rec = dict(row, file=row["name"] + ".xz", uncompressed_bytes=str(row["size"]))
            lines.append("\t".join(str(rec.get(c, "")) for c in MANIFEST_COLUMNS))
    text = ("\n".join(lines) + "\n").encode()
    write_atomic(os.path.join(dest, "MANIFEST.tsv"), lambda f: f.write(text))


# -- command line ---------------------------------------------------------------------------------------------------
class Parser(argparse.ArgumentParser):
    def error(self, message):
        self.print_usage(sys.stderr)
        self.exit(1, f"{self.prog}: error: {message}\n")


def parse_args(argv):
    ap = Parser(prog="fetch_data.py", description=__doc__.split("\n\n")[0] + " Sets from data/sets.tsv, written to "
                "data/public/NAME.xz (+ MANIFEST.tsv) after checking the sha256 of their LIBSVM text.",
                epilog="Without internet: --mirror DIR (or LLSVM_DATA_MIRROR=DIR make data) with NAME.xz or NAME "
                "files, e.g. another clone's data/public. Exit status 0: every set asked for is present and "
                "verified; 1: some are missing (named) or the command line is wrong.")
    ap.add_argument("names", nargs="*", metavar="NAME", help="sets to fetch (default: every set of the table)")
    ap.add_argument("--mirror", metavar="DIR", default=None,
                    help=f"take NAME.xz or NAME from this local directory instead of the network (default: "
                         f"${MIRROR_ENV} when set)")
    ap.add_argument("--best-effort", action="store_true",
                    help="report the sets that could not be fetched or verified, but exit 0 (make test uses it)")
    ap.add_argument("--dest", metavar="DIR", default=DEST, help="where NAME.xz and MANIFEST.tsv go (default: "
                    "data/public)")
    ap.add_argument("--sets", metavar="FILE", default=SETS, help="the sets table (default: data/sets.tsv)")
    ap.add_argument("--timeout", type=float, default=60.0, metavar="S",
                    help="seconds without an answer before a download is given up (default 60)")
    ap.add_argument("--retries", type=int, default=2, metavar="N",
                    help="further attempts after a network error or an HTTP 5xx (default 2)")
    ap.add_argument("--list", action="store_true", help="list the sets, their sizes and whether they are present; "
                    "fetch nothing")
    ap.add_argument("-q", "--quiet", action="store_true", help="print only what is missing or wrong")
    args = ap.parse_args(argv)
    if args.timeout <= 0:
        ap.error("--timeout must be positive")
    if args.retries < 0:
        ap.error("--retries must be 0 or more")
    if args.mirror is None:
        args.mirror = os.environ.get(MIRROR_ENV) or None
        args.mirror_from = MIRROR_ENV
    else:
        args.mirror_from = "--mirror"
    return args


def run(args):
    rows = read_sets(args.sets)
    if args.names:
        known = {r["name"] for r in rows}
        unknown = [n for n in args.names if n not in known]
        if unknown:
            raise Usage(f"unknown set(s): {', '.join(unknown)} (known: {', '.join(r['name'] for r in rows)})")
        wanted = [r for r in rows if r["name"] in set(args.names)]
    else:
        wanted = rows
    if args.mirror is not None and not os.path.isdir(args.mirror):
        raise Usage(f"the mirror {args.mirror} ({args.mirror_from}) is not a directory")
    dest = args.dest

    if args.list:
        for r in wanted:
            ok = os.path.isfile(os.path.join(dest, r["name"] + ".xz"))
            print(f"{r['name']:<22} {r['size']:>9} bytes  {r['transform']:<16} {'present' if ok else 'absent'}")
        return 0

    def say(text):
        if not args.quiet:
            print(text, flush=True)

    fetched, kept, failed, dead_hosts = [], [], [], {}
    for row in wanted:
        name = row["name"]
        target = os.path.join(dest, name + ".xz")
        ok, note = present(row, target)
        if ok:
            kept.append(name)
            continue
        if note:
            say(f"{PROG}: {name}: {note}")
        try:
            if args.mirror is not None:
                origin = from_mirror(row, args.mirror, target)
            else:
                host = urllib.parse.urlsplit(row["url"]).netloc
                if host and host in dead_hosts:
                    raise NotTried(f"{row['url']} not tried: {host} did not answer for {dead_hosts[host]}")
                try:
                    origin = from_network(row, target, args.timeout, args.retries)
                except Unreachable:
                    if host:
                        dead_hosts[host] = name
                    raise
        except Failure as e:
            failed.append((name, str(e), isinstance(e, Unreachable)))
            if not (args.quiet and isinstance(e, NotTried)):     # -q: the summary names them
                print(f"{PROG}: {name}: {e}", file=sys.stderr, flush=True)
            continue
        fetched.append(name)
        how = "copied" if args.mirror is not None else "fetched"
        say(f"{PROG}: {name}: {how} from {origin} ({row['size']} bytes of text, sha256 verified)")

    if os.path.isdir(dest):
        write_manifest(rows, dest)
    rel = os.path.relpath(dest) if not os.path.relpath(dest).startswith("..") else dest
    if not failed:
        say(f"{PROG}: {rel}: {len(wanted)} set(s) present and verified ({len(fetched)} fetched, {len(kept)} already "
            "there)")
        return 0
    names = ", ".join(n for n, _, _ in failed)
    print(f"{PROG}: {len(failed)} of {len(wanted)} set(s) missing from {rel}: {names}", file=sys.stderr)
    if any(net for _, _, net in failed):
        print(f"{PROG}: no network? fetch from a local copy instead: --mirror DIR or {MIRROR_ENV}=DIR (a directory "
              "holding NAME.xz or NAME files, such as another clone's data/public)", file=sys.stderr)
    if args.best_effort:
        print(f"{PROG}: --best-effort: carrying on without them (the tests that need them skip)", file=sys.stderr)
        return 0
    return 1


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)

    def on_term(signum, frame):
        raise Terminated
    old = signal.signal(signal.SIGTERM, on_term)
    try:
        return run(args)
    except Usage as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted (nothing partial left behind)", file=sys.stderr)
        return 130
    except Terminated:
        print(f"{PROG}: terminated (nothing partial left behind)", file=sys.stderr)
        return 143
    except BrokenPipeError:       # e.g. --list | head
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except OSError as e:
        print(f"{PROG}: error: {e.filename + ': ' if e.filename else ''}{e.strerror or e}", file=sys.stderr)
        return 1
    finally:
        signal.signal(signal.SIGTERM, old)


if __name__ == "__main__":
    sys.exit(main())
