"""scripts/fetch_data.py (`make data`): the public sets fetched from their addresses, transformed, checked against
their sha256 and written atomically as data/public/NAME.xz + MANIFEST.tsv; --mirror / LLSVM_DATA_MIRROR; skips,
mismatches, unreachable addresses, --best-effort. No network: fake sets served from file:// URLs and from an HTTP
server on 127.0.0.1."""
import ast
import bz2
import functools
import hashlib
import http.server
import lzma
import re
import socket
import subprocess
import sys
import threading

import pytest

from conftest import REPO_ROOT

sys.path.insert(0, str(REPO_ROOT / "scripts"))
import fetch_data  # noqa: E402

SCRIPT = REPO_ROOT / "scripts" / "fetch_data.py"
HEADER = "\t".join(fetch_data.COLUMNS)

TEXT = b"".join(b"%+d 1:%d 3:0.%d\n" % (1 if i % 3 else -1, i, i) for i in range(1, 41))      # 40 LIBSVM rows


def sha(b):
    return hashlib.sha256(b).hexdigest()


def row(name, url, transform, text, **kw):
    """One line of a sets table for `text` (the expected LIBSVM text: its sha256 and size)."""
    cells = dict(name=name, url=url, transform=transform, sha256=kw.get("sha256", sha(text)),
                 bytes=str(kw.get("size", len(text))), rows="40", features="3", nnz="80", classes="2",
                 class_counts="-1:13 +1:27", libsvm_site="-", note="test set")
    return "\t".join(cells[c] for c in fetch_data.COLUMNS)


def table(tmp_path, *rows):
    path = tmp_path / "sets.tsv"
    path.write_text("# a comment line\n" + HEADER + "\n" + "\n".join(rows) + "\n")
    return path


def run(sets, dest, *args):
    """fetch_data.main in this process (its output goes to capsys): the exit status."""
    return fetch_data.main(["--sets", str(sets), "--dest", str(dest), "--retries", "0", "--timeout", "5", *args])


def xz_text(path):
    with lzma.open(path) as f:
        return f.read()


def leftovers(dest):
    """Temporary files left in dest (there must never be any)."""
    return [p.name for p in dest.iterdir() if p.name.endswith(".part")] if dest.exists() else []


@pytest.fixture(autouse=True)
def no_mirror_env(monkeypatch):
    monkeypatch.delenv(fetch_data.MIRROR_ENV, raising=False)


@pytest.fixture
def served(tmp_path):
    """(directory, base URL) of an HTTP server on 127.0.0.1 serving that directory."""
    root = tmp_path / "www"
    root.mkdir()

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *a):
            pass

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(root)))
    t = threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    t.start()
    yield root, f"http://127.0.0.1:{srv.server_address[1]}"
    srv.shutdown()
    srv.server_close()


def closed_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


# -- fetching and transforms --------------------------------------------------------------------------------------
def test_bz2_from_a_file_url(tmp_path, capsys):
    src = tmp_path / "upstream" / "fake.bz2"
    src.parent.mkdir()
    src.write_bytes(bz2.compress(TEXT))
    dest = tmp_path / "public"
    sets = table(tmp_path, row("fake", src.as_uri(), "bz2", TEXT))
    assert run(sets, dest) == 0
    out = capsys.readouterr().out
    assert "fake: fetched from file://" in out and "1 set(s) present and verified (1 fetched" in out
    assert xz_text(dest / "fake.xz") == TEXT
    manifest = (dest / "MANIFEST.tsv").read_text().splitlines()
    assert manifest[0].split("\t") == list(fetch_data.MANIFEST_COLUMNS)
    rec = dict(zip(manifest[0].split("\t"), manifest[1].split("\t")))
    assert rec["name"] == "fake" and rec["file"] == "fake.xz" and rec["rows"] == "40" and rec["nnz"] == "80"
    assert rec["class_counts"] == "-1:13 +1:27" and rec["uncompressed_bytes"] == str(len(TEXT))
    assert rec["sha256"] == sha(TEXT)
    assert leftovers(dest) == []


def test_lines_and_bz2_over_http(tmp_path, served, capsys):
    root, base = served
    whole = b"# header line\n" + TEXT + b"-1 2:7\n"
    (root / "big.txt").write_bytes(whole)
    (root / "big.txt.bz2").write_bytes(bz2.compress(whole))
    dest = tmp_path / "public"
    sets = table(tmp_path, row("part", f"{base}/big.txt", "lines:2-41", TEXT),
                 row("part2", f"{base}/big.txt.bz2", "bz2+lines:2-41", TEXT))
    assert run(sets, dest) == 0
    assert xz_text(dest / "part.xz") == TEXT == xz_text(dest / "part2.xz")
    assert "part2: fetched from http://127.0.0.1:" in capsys.readouterr().out


def test_lines_past_the_end_is_a_clear_failure(tmp_path, capsys):
    src = tmp_path / "short.txt"
    src.write_bytes(TEXT)
    dest = tmp_path / "public"
    assert run(table(tmp_path, row("short", src.as_uri(), "lines:2-99", TEXT)), dest) == 1
    err = capsys.readouterr().err
    assert "short:" in err and "lines:2-99: the file has only 40 lines" in err and "Traceback" not in err
    assert not (dest / "short.xz").exists() and leftovers(dest) == []


def test_skin_uci_conversion(tmp_path):
    raw = b"74\t85\t123\t1\r\n0\t0\t5\t2\r\n0\t0\t0\t2\r\n"
    want = b"1 1:74 2:85 3:123\n2 3:5\n2\n"
    src = tmp_path / "Skin_NonSkin.txt"
    src.write_bytes(raw)
    dest = tmp_path / "public"
    assert run(table(tmp_path, row("skin", src.as_uri(), "skin-uci", want)), dest) == 0
    assert xz_text(dest / "skin.xz") == want


def test_skin_uci_refuses_other_layouts():
    with pytest.raises(fetch_data.Failure, match="line 2 has 3 tab-separated fields"):
        fetch_data.skin_uci(b"1\t2\t3\t1\n1\t2\t3\n")


def test_bz2_truncated_and_garbage():
    data = bz2.compress(TEXT * 50)
    with pytest.raises(fetch_data.Failure, match="truncated"):
        fetch_data.bunzip2(data[: len(data) // 2])
    with pytest.raises(fetch_data.Failure, match="not valid bzip2"):
        fetch_data.bunzip2(b"this is not bzip2 at all")
    assert fetch_data.bunzip2(bz2.compress(b"ab") + bz2.compress(b"cd")) == b"abcd"      # several streams


# -- checksums, skips, atomic writes ------------------------------------------------------------------------------
def test_checksum_mismatch_names_the_set_and_both_digests(tmp_path, capsys):
    src = tmp_path / "bad.txt"
    src.write_bytes(TEXT.replace(b"1:5 ", b"1:6 "))
    dest = tmp_path / "public"
    assert run(table(tmp_path, row("badset", src.as_uri(), "none", TEXT)), dest) == 1
    err = capsys.readouterr().err
    assert re.search(r"badset: checksum mismatch for file://\S+: expected sha256 " + sha(TEXT), err)
    assert "got sha256 " + sha(src.read_bytes()) in err
    assert "1 of 1 set(s) missing" in err and "badset" in err.splitlines()[-1] and "Traceback" not in err
    assert not (dest / "badset.xz").exists() and leftovers(dest) == []


def test_mismatch_keeps_an_existing_good_copy_and_best_effort_exits_0(tmp_path, capsys):
    src = tmp_path / "good.txt"
    src.write_bytes(TEXT)
    dest = tmp_path / "public"
    sets = table(tmp_path, row("s", src.as_uri(), "none", TEXT))
    assert run(sets, dest) == 0
    before = (dest / "s.xz").read_bytes()
    # the table now expects other text: the copy there does not match, the source does not either
    other = TEXT + b"+1 1:1\n"
    sets = table(tmp_path, row("s", src.as_uri(), "none", other))
    assert run(sets, dest, "--best-effort") == 0
    err = capsys.readouterr().err
    assert "checksum mismatch" in err and "--best-effort" in err
    assert (dest / "s.xz").read_bytes() == before and leftovers(dest) == []
    assert run(sets, dest) == 1


def test_present_and_matching_is_skipped_without_touching_the_source(tmp_path, capsys):
    src = tmp_path / "once.txt"
    src.write_bytes(TEXT)
    dest = tmp_path / "public"
    sets = table(tmp_path, row("once", src.as_uri(), "none", TEXT))
    assert run(sets, dest) == 0
    stat = (dest / "once.xz").stat()
    src.unlink()                                  # the source is gone: a second run must not need it
    capsys.readouterr()
    assert run(sets, dest) == 0
    out = capsys.readouterr().out
    assert "1 set(s) present and verified (0 fetched, 1 already there)" in out
    assert (dest / "once.xz").stat().st_mtime_ns == stat.st_mtime_ns


def test_a_corrupt_copy_is_replaced(tmp_path, capsys):
    src = tmp_path / "c.txt"
    src.write_bytes(TEXT)
    dest = tmp_path / "public"
    dest.mkdir()
    (dest / "c.xz").write_bytes(b"not xz")
    assert run(table(tmp_path, row("c", src.as_uri(), "none", TEXT)), dest) == 0
    assert "not a valid .xz file" in capsys.readouterr().out
    assert xz_text(dest / "c.xz") == TEXT


@pytest.mark.parametrize("exc,code", [(OSError(28, "No space left on device"), 1), (KeyboardInterrupt(), 130)])
def test_a_failure_while_writing_leaves_nothing(tmp_path, monkeypatch, capsys, exc, code):
    src = tmp_path / "w.txt"
    src.write_bytes(TEXT)
    dest = tmp_path / "public"

    def half(f):
        f.write(b"\xfd7zXZ\x00 half of a file")
        raise exc
    real = fetch_data.write_atomic
    monkeypatch.setattr(fetch_data, "write_xz", lambda path, text: real(path, half))
    assert run(table(tmp_path, row("w", src.as_uri(), "none", TEXT)), dest) == code
    err = capsys.readouterr().err
    assert "Traceback" not in err and ("No space left" in err if code == 1 else "interrupted" in err)
    assert not (dest / "w.xz").exists() and leftovers(dest) == []


def test_sigterm_mid_write_leaves_nothing(tmp_path):
    """A separate process, killed with SIGTERM while it writes: status 143, no partial file."""
    src = tmp_path / "t.txt"
    src.write_bytes(TEXT)
    dest = tmp_path / "public"
    sets = table(tmp_path, row("t", src.as_uri(), "none", TEXT))
    code = (f"import os, signal, sys; sys.path.insert(0, {str(REPO_ROOT / 'scripts')!r}); import fetch_data\n"
            "def fill(f):\n    f.write(b'partial'); f.flush(); os.kill(os.getpid(), signal.SIGTERM)\n"
            "real = fetch_data.write_atomic\n"
            "fetch_data.write_xz = lambda path, text: real(path, fill)\n"
            f"sys.exit(fetch_data.main(['--sets', {str(sets)!r}, '--dest', {str(dest)!r}]))\n")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert p.returncode == 143, p.stderr
    assert "terminated" in p.stderr and "Traceback" not in p.stderr
    assert not (dest / "t.xz").exists() and leftovers(dest) == []


# -- the mirror -----------------------------------------------------------------------------------------------------
def test_mirror_xz_plain_and_env(tmp_path, monkeypatch, capsys):
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    (mirror / "a.xz").write_bytes(lzma.compress(TEXT))
    (mirror / "b").write_bytes(TEXT)
    dead = f"http://127.0.0.1:{closed_port()}/x"          # the network must not be used with a mirror
    sets = table(tmp_path, row("a", dead, "bz2", TEXT), row("b", dead, "none", TEXT))
    dest = tmp_path / "public"
    assert run(sets, dest, "--mirror", str(mirror)) == 0
    out = capsys.readouterr().out
    assert f"a: copied from {mirror / 'a.xz'}" in out and f"b: copied from {mirror / 'b'}" in out
    assert (dest / "a.xz").read_bytes() == (mirror / "a.xz").read_bytes()       # an .xz is copied as it is
    assert xz_text(dest / "b.xz") == TEXT
    dest2 = tmp_path / "public2"
    monkeypatch.setenv(fetch_data.MIRROR_ENV, str(mirror))
    assert run(sets, dest2, "b") == 0
    assert xz_text(dest2 / "b.xz") == TEXT and not (dest2 / "a.xz").exists()
    assert [line.split("\t")[0] for line in (dest2 / "MANIFEST.tsv").read_text().splitlines()] == ["name", "b"]


def test_mirror_missing_or_mismatched_sets(tmp_path, capsys):
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    (mirror / "wrong.xz").write_bytes(lzma.compress(TEXT + b"-1 1:2\n"))
    sets = table(tmp_path, row("wrong", "http://127.0.0.1:9/x", "none", TEXT),
                 row("absent", "http://127.0.0.1:9/y", "none", TEXT))
    dest = tmp_path / "public"
    assert run(sets, dest, "--mirror", str(mirror)) == 1
    err = capsys.readouterr().err
    assert f"wrong: checksum mismatch for {mirror / 'wrong.xz'}: expected sha256 {sha(TEXT)}" in err
    assert f"absent: not in the mirror {mirror} (looked for absent.xz and absent)" in err
    assert "2 of 2 set(s) missing" in err and "Traceback" not in err
    assert not dest.exists() or sorted(p.name for p in dest.iterdir()) in ([], ["MANIFEST.tsv"])


def test_mirror_must_be_a_directory(tmp_path, capsys):
    sets = table(tmp_path, row("a", "http://127.0.0.1:9/x", "none", TEXT))
    assert run(sets, tmp_path / "public", "--mirror", str(tmp_path / "nowhere"), "--best-effort") == 1
    assert "is not a directory" in capsys.readouterr().err


# -- the network ----------------------------------------------------------------------------------------------------
def test_unreachable_names_the_url_suggests_a_mirror_and_tries_the_host_once(tmp_path, capsys):
    base = f"http://127.0.0.1:{closed_port()}"
    sets = table(tmp_path, row("one", f"{base}/one", "none", TEXT), row("two", f"{base}/two", "none", TEXT))
    dest = tmp_path / "public"
    assert run(sets, dest) == 1
    err = capsys.readouterr().err
    assert f"one: cannot download {base}/one:" in err
    assert f"two: {base}/two not tried: 127.0.0.1:" in err
    assert "2 of 2 set(s) missing" in err and "--mirror DIR or LLSVM_DATA_MIRROR=DIR" in err
    assert "Traceback" not in err and not dest.exists()
    assert run(sets, dest, "--best-effort") == 0
    err = capsys.readouterr().err
    assert "missing" in err and "--best-effort: carrying on without them" in err


def test_http_404_names_the_url(tmp_path, served, capsys):
    root, base = served
    sets = table(tmp_path, row("gone", f"{base}/gone.txt", "none", TEXT))
    assert run(sets, tmp_path / "public") == 1
    err = capsys.readouterr().err
    assert f"gone: {base}/gone.txt: HTTP 404" in err and "Traceback" not in err


# -- the command line and the real table ------------------------------------------------------------------------
def test_help_and_usage_errors():
    p = subprocess.run([sys.executable, str(SCRIPT), "--help"], capture_output=True, text=True, timeout=600)
    assert p.returncode == 0 and "--mirror DIR" in p.stdout and "--best-effort" in p.stdout
    assert "LLSVM_DATA_MIRROR" in p.stdout and "data/public" in p.stdout
    for args, msg in ((["--timeout", "0"], "--timeout must be positive"), (["--bogus"], "unrecognized arguments"),
                      (["no-such-set"], "unknown set(s): no-such-set"),
                      (["--sets", "/nonexistent/sets.tsv"], "cannot read the sets table")):
        p = subprocess.run([sys.executable, str(SCRIPT), "--dest", "/nonexistent/public", *args],
                           capture_output=True, text=True, timeout=600)
        assert p.returncode == 1 and msg in p.stderr and "Traceback" not in p.stderr, (args, p.stderr)


def test_bad_tables_are_refused(tmp_path):
    for body, msg in ((HEADER + "\n" + row("x", "file:///x", "gzip", TEXT), "unknown transform 'gzip'"),
                      (HEADER + "\n" + row("x", "file:///x", "lines:5-2", TEXT), "unknown transform"),
                      (HEADER + "\n" + row("x", "file:///x", "none", TEXT, sha256="abc"), "64 hex digits"),
                      (HEADER + "\n" + row("x", "file:///x", "none", TEXT) + "\n" + row("x", "file:///y", "none",
                                                                                          TEXT), "repeated"),
                      ("name\turl\n", "lacks the column(s) transform, sha256, bytes")):
        p = tmp_path / "t.tsv"
        p.write_text(body + "\n")
        with pytest.raises(fetch_data.Usage, match=re.escape(msg)):
            fetch_data.read_sets(str(p))


def test_standard_library_only():
    tree = ast.parse(SCRIPT.read_text())
    names = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    names |= {n.module.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
    assert names <= set(sys.stdlib_module_names), names - set(sys.stdlib_module_names)


def test_the_repository_table():
    """data/sets.tsv: every set at a fixed commit of a public repository (raw.githubusercontent.com), a known
    transform, a checksum; the names the tests and scripts read are there."""
    rows = fetch_data.read_sets(fetch_data.SETS)
    names = [r["name"] for r in rows]
    assert len(rows) == 27 and len(set(names)) == 27
    for r in rows:
        assert re.fullmatch(r"https://raw\.githubusercontent\.com/[\w.-]+/[\w.-]+/[0-9a-f]{40}/\S+", r["url"]), r
        assert r["libsvm_site"] == "-" or r["libsvm_site"].startswith(
            "https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets/"), r
        assert int(r["rows"]) > 0 and int(r["features"]) > 0 and int(r["nnz"]) > 0 and r["size"] > 0
    assert {"a9a", "a9a.t", "heart_scale", "fourclass", "diabetes", "svmguide1", "svmguide1.t", "usps.t",
            "skin_nonskin", "reuters_moneyfx.trn", "reuters_moneyfx.tst", "splice.t", "news20.t"} <= set(names)
    transforms = {r["name"]: r["transform"] for r in rows}
    assert transforms["splice.t"] == "lines:1001-3175" and transforms["skin_nonskin"] == "skin-uci"
    assert transforms["usps.t"] == transforms["reuters_moneyfx.trn"] == "bz2"


def test_the_public_copies_match_the_table():
    """When data/public is there (make data), every set in it is the text data/sets.tsv describes."""
    dest = REPO_ROOT / "data" / "public"
    present = sorted(dest.glob("*.xz")) if dest.is_dir() else []
    if not present:
        pytest.skip(f"no public sets in {dest}: {fetch_data.PROG} (make data) fetches them")
    rows = {r["name"]: r for r in fetch_data.read_sets(fetch_data.SETS)}
    for path in present:
        r = rows[path.name[:-3]]
        assert fetch_data.xz_text_digest(str(path), r["size"]) == (r["sha256"], r["size"]), path.name
