"""llsvm-scale (issue 47, item 1): LIBSVM 3.37's svm-scale byte for byte, and llsvm's additions.

The reference is svm-scale itself, built from LIBSVM 3.37's source (LLSVM_SVM_SCALE, default
/tmp/ref/libsvm/svm-scale). Its outputs on the public sets are also recorded as SHA-256 digests (tests/svm_scale_public.tsv, and EDGE_DIGESTS below, made by
`python tests/test_scale.py --record` with that binary), so the comparison holds where the binary is not built; where
it is, the test runs it too and checks the record against it. llsvm-scale runs in-process (Click's CliRunner) for
the many runs of the public-set loop, and as the console command for the few checks of the process itself.
"""
import hashlib
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
from click.testing import CliRunner

from llsvm.cli.scale import main as scale_main

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SVM_SCALE = os.environ.get("LLSVM_SVM_SCALE", "/tmp/ref/libsvm/svm-scale")


def have_svm_scale():
    return os.access(SVM_SCALE, os.X_OK)


def ours(args, input=None):
    """llsvm-scale in-process: (exit code, stdout bytes, stderr text)."""
    result = CliRunner().invoke(scale_main, [str(a) for a in args], input=input, catch_exceptions=False)
    return result.exit_code, result.stdout_bytes, result.stderr


def theirs(args, cwd=None):
    proc = subprocess.run([SVM_SCALE, *map(str, args)], capture_output=True, cwd=cwd)
    return proc.returncode, proc.stdout, proc.stderr.decode()


# -- %g ---------------------------------------------------------------------------------------------------------

def test_format_g_is_printf():
    """The kernel's %g is printf's on random values of every magnitude, on exact ties (dyadic values with 7
    significant digits ending in 5), at the boundaries of the fixed notation and of rounding up to a new decade,
    and on what it hands to snprintf (0, subnormals, huge values, inf): Python's '%g' (correctly rounded, C's
    rules) as the reference."""
    from llsvm._ext._scale import format_g
    rng = np.random.default_rng(47)
    values = [rng.uniform(-1, 1, 20000), 10.0 ** rng.uniform(-12, 20, 20000) * rng.choice([-1, 1], 20000),
              rng.integers(1, 10 ** 7, 20000) / 2.0 ** rng.integers(0, 12, 20000),
              np.round(rng.uniform(-1000, 1000, 20000), 3),
              np.array([1000.125, 0.5, 2.5, 123456.5, 1234565.0, 999999.5, 9999995.0, 9.999995e-5, 0.0001, 1e-5,
                        99999.95, 999999.4999, 1e15, 9.9999949e14, 1e-300, 5e-324, 0.0, -0.0, np.inf, -np.inf,
                        2.0 ** -11, 0.1234565, 1e22, 1e23, -0.00048828125])]
    x = np.concatenate(values)
    got = format_g(np.ascontiguousarray(x)).split(b" ")[:-1]
    want = [(b"%g" % v) for v in x]
    bad = [(v, g, w) for v, g, w in zip(x.tolist(), got, want) if g != w]
    assert not bad, bad[:5]


# -- the public sets --------------------------------------------------------------------------------------------

def public_sets():
    names = []
    with open(os.path.join(REPO, "data", "sets.tsv")) as f:
        for line in f:
            if line.startswith("#") or line.startswith("name\t") or not line.strip():
                continue
            names.append(line.split("\t")[0])
    return names


def plan():
    """(training set, set the range file is applied to, options) for every public set: a set NAME with NAME.t
    scales NAME.t by NAME's ranges (svm-scale -r), another set itself. The default -l -1 -u 1 where the output
    stays small (rows x features up to 1M), -l 0 -u 1 on the larger sparse sets (as svm-scale's warning advises:
    -l -1 would write every absent feature)."""
    names = public_sets()
    out = []
    for name in names:
        if (name.endswith(".t") and name[:-2] in names) or (name.endswith(".tst") and name[:-4] + ".trn" in names):
            continue
        test = name + ".t" if name + ".t" in names else name
        if name.endswith(".trn") and name[:-4] + ".tst" in names:
            test = name[:-4] + ".tst"
        sparse = name in ("a9a", "news20.t", "reuters_moneyfx.trn")
        out.append((name, test, ["-l", "0", "-u", "1"] if sparse else []))
    return out


# SHA-256 of svm-scale 3.37's (stdout, range file, stderr) of `svm-scale OPTS -s RANGE NAME` and of its
# (stdout, stderr) of `svm-scale -r RANGE TEST`, the file names as "NAME", "TEST" and "RANGE" in the messages.
PUBLIC_RECORD = os.path.join(os.path.dirname(os.path.abspath(__file__)), "svm_scale_public.tsv")


def _digest(data):
    return hashlib.sha256(data if isinstance(data, bytes) else data.encode()).hexdigest()[:32]


def _load_record():
    table = {}
    if os.path.exists(PUBLIC_RECORD):
        with open(PUBLIC_RECORD) as f:
            for line in f:
                if line.startswith("#"):
                    continue
                key, *digests = line.rstrip("\n").split("\t")
                table[key] = digests
    return table


def _runs(run, name, test, opts, d):
    """(key, digests) of both directions of one set with `run` (ours or theirs), in directory d."""
    rng = "RANGE"
    code, out, err = run([*opts, "-s", rng, name], d)
    assert code == 0, err
    with open(os.path.join(d, rng), "rb") as f:
        saved = f.read()
    code2, out2, err2 = run(["-r", rng, test], d)
    assert code2 == 0, err2
    return [_digest(out), _digest(saved), _digest(err), _digest(out2), _digest(err2)]


def _in(d, fn):
    def run(args, cwd):
        here = os.getcwd()
        os.chdir(cwd)
        try:
            return fn(args)
        finally:
            os.chdir(here)
    return run


def _materialize(names, d):
    import lzma
    for n in names:
        path = os.path.join(d, n)
        if not os.path.exists(path):
            with lzma.open(os.path.join(REPO, "data", "public", n + ".xz")) as f, open(path, "wb") as out:
                out.write(f.read())


# svm-scale walks every feature of every row in two of its passes: on news20.t (3,993 x 62,060) that is 5 s of CPU,
# so there its recorded digests stand for it (they were made by the same binary)
RECORDED_ONLY = {"news20.t"}


def test_public_sets_byte_for_byte(tmp_path, shared_data):
    """Every public set present in data/public, both directions (-s RANGE on the set, -r RANGE on its test set):
    stdout, the range file and stderr (the #nonzeros warning, the warnings of features absent from the range file)
    are svm-scale's byte for byte: against svm-scale run here when it is built (but on RECORDED_ONLY), and against
    its recorded digests."""
    record = _load_record()
    compared = 0
    for name, test, opts in plan():
        if not all((shared_data / f"{n}.xz").is_file() for n in (name, test)):
            continue
        d = tmp_path / name
        d.mkdir()
        _materialize({name, test}, d)
        key = " ".join([*opts, name, test])
        mine = _runs(_in(d, lambda a: ours(a)), name, test, opts, d)
        if have_svm_scale() and name not in RECORDED_ONLY:
            ref = _runs(_in(d, lambda a: theirs(a)), name, test, opts, d)
            assert mine == ref, f"{key}: (stdout, range, stderr, -r stdout, -r stderr) differ: {mine} {ref}"
        assert key in record, f"{key}: no recorded digest of svm-scale's output (python tests/test_scale.py --record)"
        assert mine == record[key], f"{key}: differs from svm-scale's recorded output"
        compared += 1
    assert compared >= 20, f"only {compared} public sets compared"


def test_y_scaling_on_a_regression_set(tmp_path):
    """-y -1 1 on a regression set (scikit-learn's diabetes, its continuous targets as labels) and -r of the range
    file with its y section on the set's second half: svm-scale's labels (%.17g) and features, byte for byte."""
    from sklearn.datasets import dump_svmlight_file, load_diabetes
    X, y = load_diabetes(return_X_y=True)
    dump_svmlight_file(X[:300], y[:300], str(tmp_path / "train"), zero_based=False)
    dump_svmlight_file(X[300:], y[300:] * 1.5, str(tmp_path / "test"), zero_based=False)
    runs = [(["-y", "-1", "1", "-s", "range", "train"], "range"), (["-r", "range", "test"], None),
            (["-l", "0", "-y", "0", "10", "train"], None)]
    for args, saved in runs:
        mine = _in(tmp_path, ours)(args, tmp_path)
        kept = (tmp_path / saved).read_bytes() if saved else b""
        if have_svm_scale():
            ref = _in(tmp_path, theirs)(args, tmp_path)
            assert mine == ref, args
            if saved:
                assert (tmp_path / saved).read_bytes() == kept
        assert [mine[0], _digest(mine[1]), _digest(mine[2]), _digest(kept)] == Y_DIGESTS[" ".join(args)], args
        assert mine[1].count(b"\n") == (300 if "train" in args else 142)


Y_DIGESTS = {  # svm-scale 3.37's (exit code, stdout, stderr, range file) on the diabetes runs above
    '-y -1 1 -s range train': [0, 'd15684ba168912adab2aba4b605d56e4', 'e3b0c44298fc1c149afbf4c8996fb924',
                               'd39eddd1709b9fb372523f6a9a28c481'],
    '-r range test': [0, 'e3d09c3a8fc2d54dbfc62235e4703633', 'e3b0c44298fc1c149afbf4c8996fb924',
                      'e3b0c44298fc1c149afbf4c8996fb924'],
    '-l 0 -y 0 10 train': [0, 'c997db9cb97b0637bf268de2c343dc86', 'e3b0c44298fc1c149afbf4c8996fb924',
                           'e3b0c44298fc1c149afbf4c8996fb924'],
}


EDGE_TRAIN = (b"3 1:0.5 2:7 4:-2 6:1e-7\n"
              b"-1 1:0.25 2:7 3:0 5:1234567.5\n"
              b"+1 2:7 4:3.5 5:-0.125\n"
              b"3 1:1 4:1000.125 6:3e-7 9:4\n")
EDGE_TEST = (b"1 1:2 2:7 3:5 4:-3 7:1\n"
             b"-1 5:0.5 8:2 10:1\n"
             b"2 6:2e-7\n")
EDGE_RANGE = (b"y\n-1 1\n-1 3\nx\n-1 1\n1 0 1\n2 0 7\n4 -2 1000.125\n5 -0.125 1234567.5\n6 0 2.9999999999999999e-07\n"
              b"8 0 2\n12 -1 1\n")


@pytest.mark.parametrize("args", [[], ["-l", "0"], ["-l", "-3.5", "-u", "2.25"], ["-y", "0", "1"],
                                  ["-r", "edge.range"]], ids=["default", "l0", "bounds", "y", "r"])
def test_edge_cases_against_svm_scale(tmp_path, args):
    """The cases of svm-scale's pass 2.5 and output(): a constant feature (2: dropped), explicit zeros, a feature
    beyond the range file (7, 9, 10: scaled to 0, with the warning for each the data vary on), one of the range
    file beyond the data (12: written in every row), values outside the range (extrapolated), labels at y_min and
    y_max; exact ties of %g (1000.125). svm-scale's stdout, stderr and range file, byte for byte; when svm-scale
    is not built, the digests recorded from it."""
    (tmp_path / "edge").write_bytes(EDGE_TRAIN)
    (tmp_path / "edge.t").write_bytes(EDGE_TEST)
    (tmp_path / "edge.range").write_bytes(EDGE_RANGE)
    full = [*args, "-s", "saved"] if "-r" not in args else args
    for data in ("edge", "edge.t"):
        mine = _in(tmp_path, ours)([*full, data], tmp_path)
        saved = (tmp_path / "saved").read_bytes() if "-s" in full else b""
        digest = [_digest(mine[1]), _digest(mine[2]), _digest(saved)]
        if have_svm_scale():
            ref = _in(tmp_path, theirs)([*full, data], tmp_path)
            ref_saved = (tmp_path / "saved").read_bytes() if "-s" in full else b""
            assert (mine, saved) == (ref, ref_saved), (data, mine, ref)
        key = " ".join([*full, data])
        assert digest == EDGE_DIGESTS[key], key


EDGE_DIGESTS = {
    '-s saved edge': ['da858d5bc6b2e08607ce8a6094664e5d', 'b64fc9c2323aa769b802c49f3359639f', '5ce2eea6c0fe2f1fa17f75fc53139a44'],
    '-s saved edge.t': ['4322394218a7632f9d8ea1cd3f614e19', 'faaa6d9e3dd8bd2bc956db301850cced', '4114d7d9a247f433ebb3601643ddc69f'],
    '-l 0 -s saved edge': ['81856ffe1681686639f88ad8fe30bc49', 'e3b0c44298fc1c149afbf4c8996fb924', 'd82ad1074bcba65f772104cde8366431'],
    '-l 0 -s saved edge.t': ['93d827784ca04ccaf9a70686a196cbcc', 'b159d47ee7c57d394e338f960da13ace', '37a6d48a1a98b6b342b7e4778d272f4f'],
    '-l -3.5 -u 2.25 -s saved edge': ['cf5011b2b95f9ffe9f0e0fb63a293818', '8a6d0522de50988556873765071f21b0', 'd8933fae69d414a0287131cfe807ed14'],
    '-l -3.5 -u 2.25 -s saved edge.t': ['c48fe972a71014ad643193591eb2d931', 'faaa6d9e3dd8bd2bc956db301850cced', 'beb16ffdcf3cc8d5a04888ead1ee0e91'],
    '-y 0 1 -s saved edge': ['c3e47cdae5be8a0c385c7ab2a65a4f3c', 'b64fc9c2323aa769b802c49f3359639f', '0e9b3ec2a879a101434727af51baf942'],
    '-y 0 1 -s saved edge.t': ['322bc4baaa322ca42ddfc844fbc13fd3', 'faaa6d9e3dd8bd2bc956db301850cced', 'd6b04af7a29284298941634266052e88'],
    '-r edge.range edge': ['056892cef7596931fd4aed34156cdc44', '458fa32e1cf02717bddfc80248777462', 'e3b0c44298fc1c149afbf4c8996fb924'],
    '-r edge.range edge.t': ['81fed422e812916d31928ae21a3d766c', '485eeba032d04066416e6ff8d7cdd985', 'e3b0c44298fc1c149afbf4c8996fb924'],
}


# -- llsvm's additions --------------------------------------------------------------------------------------------

def test_compressed_stdin_and_binary_inputs(tmp_path, write_bytes):
    """gzip, bzip2 and xz files and standard input (plain and gzip) give the plain file's bytes; a binary file (made
    by llsvm-convert) too with --to text, and binary output holds the rows of the text output (the same indices, the
    values unrounded: within %g's rounding of svm-scale's)."""
    import bz2
    import gzip
    import lzma
    from llsvm.io import read_dataset, write_binary
    path = write_bytes(EDGE_TRAIN * 3 + EDGE_TEST, "plain")
    args = ["-l", "0", "-y", "-1", "1"]
    code, want, _ = ours([*args, path])
    assert code == 0
    for opener, ext in ((gzip.open, "gz"), (bz2.open, "bz2"), (lzma.open, "xz")):
        with opener(tmp_path / f"plain.{ext}", "wb") as f:
            f.write(path.read_bytes())
        assert ours([*args, tmp_path / f"plain.{ext}"])[1] == want, ext
    assert ours([*args, "-"], input=path.read_bytes())[1] == want
    assert ours([*args, "-"], input=gzip.compress(path.read_bytes()))[1] == want
    write_binary(str(path), str(tmp_path / "plain.bin"))
    assert ours([*args, tmp_path / "plain.bin", "--to", "text"])[1] == want
    code, out, err = ours([*args, tmp_path / "plain.bin", "-o", tmp_path / "scaled.bin"])
    assert code == 0, err
    got = read_dataset(str(tmp_path / "scaled.bin"))
    (tmp_path / "want").write_bytes(want)
    ref = read_dataset(str(tmp_path / "want"))
    assert np.array_equal(got.indptr, ref.indptr) and np.array_equal(got.indices, ref.indices)
    assert np.allclose(got.values, ref.values, rtol=5e-6, atol=0)
    assert np.array_equal(got.y, ref.y)           # the labels are %.17g in the text: exact
    assert got.n_features == 10


def test_errors_name_the_line_and_leave_no_output(tmp_path, write_bytes):
    """Bad input: file:line:col (also on standard input, named <stdin>), exit 1, -o's target untouched and no
    temporary file left; svm-scale's own refusals in its words."""
    bad = write_bytes(b"1 1:2\n-1 1:3 2:x\n", "bad")
    target = tmp_path / "out"
    target.write_bytes(b"before")
    code, out, err = ours([bad, "-o", target])
    assert code == 1 and f"{bad}: line 2, column 10: value is not a number (found 'x')" in err
    code, out, err = ours(["-"], input=bad.read_bytes())
    assert code == 1 and "<stdin>: line 2, column 10" in err
    assert target.read_bytes() == b"before"
    assert sorted(os.listdir(tmp_path)) == ["bad", "out"]
    good = write_bytes(EDGE_TRAIN, "good")
    assert "cannot use -r and -s simultaneously" in ours(["-r", good, "-s", "x", good])[2]
    assert "inconsistent lower/upper specification" in ours(["-l", "1", "-u", "0", good])[2]
    assert ours(["-l", "1", "-u", "0", good])[0] == 1
    rng = write_bytes(b"x\n-1 1\n1 0 1\n3 0 2 9\n", "range")
    code, out, err = ours(["-r", rng, good])
    assert code == 1 and f"{rng}: line 4, column 1" in err
    rng.write_bytes(b"x\n-1 1\n1 0 1\n3 0 abc\n")
    code, out, err = ours(["-r", rng, good])
    assert code == 1 and f"{rng}: line 4, column 5: index min max: 'abc' is not a finite number" in err
    rng.write_bytes(b"x\n-1 1\n3 0 1\n2 0 2\n")
    assert f"{rng}: line 4, column 1: feature indices must increase (index 2 after 3)" in ours(["-r", rng, good])[2]
    code, out, err = ours([tmp_path / "missing"])
    assert code == 1 and "can't open input file" in err


def test_console_command_and_ctrl_c(tmp_path):
    """The console script (pyproject's llsvm-scale) writes svm-scale's bytes to stdout; SIGINT while it spools
    standard input ends it with 130, and its temporary file is gone."""
    import shutil
    exe = shutil.which("llsvm-scale", path=os.path.dirname(sys.executable))
    cmd = [exe] if exe else [sys.executable, "-c", "from llsvm.cli.entry import scale; scale()"]
    env = dict(os.environ, PYTHONPATH=REPO, TMPDIR=str(tmp_path))
    (tmp_path / "edge").write_bytes(EDGE_TRAIN)
    proc = subprocess.run([*cmd, "-l", "0", str(tmp_path / "edge")], capture_output=True, env=env, timeout=600)
    assert proc.returncode == 0
    assert proc.stdout == ours(["-l", "0", tmp_path / "edge"])[1]
    p = subprocess.Popen([*cmd, "-"], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                         env=env)
    p.stdin.write(EDGE_TRAIN * 1000)
    p.stdin.flush()
    deadline = time.monotonic() + 600
    while not any(n.startswith("llsvm-scale-stdin-") for n in os.listdir(tmp_path)):
        assert time.monotonic() < deadline and p.poll() is None
        time.sleep(0.05)
    p.send_signal(signal.SIGINT)
    assert p.wait(timeout=600) == 130
    p.stdin.close()
    assert b"Traceback" not in p.stderr.read()
    assert not any(n.startswith("llsvm-scale-stdin-") for n in os.listdir(tmp_path))


def record():
    """Print the digests of svm-scale's outputs (PUBLIC_RECORD's lines, EDGE_DIGESTS) with the built binary."""
    import tempfile
    assert have_svm_scale(), SVM_SCALE
    lines = ["# tests/test_scale.py: SHA-256 (first 32 hex digits) of svm-scale 3.37's stdout, range file, stderr, "
             "then -r's stdout and stderr, per 'OPTIONS NAME TEST' (python tests/test_scale.py --record)"]
    with tempfile.TemporaryDirectory() as tmp:
        for name, test, opts in plan():
            if not all(os.path.exists(os.path.join(REPO, "data", "public", n + ".xz")) for n in (name, test)):
                continue
            d = os.path.join(tmp, name)
            os.mkdir(d)
            _materialize({name, test}, d)
            lines.append("\t".join([" ".join([*opts, name, test]),
                                    *_runs(_in(d, lambda a: theirs(a)), name, test, opts, d)]))
        d = os.path.join(tmp, "edge")
        os.mkdir(d)
        for n, data in (("edge", EDGE_TRAIN), ("edge.t", EDGE_TEST), ("edge.range", EDGE_RANGE)):
            with open(os.path.join(d, n), "wb") as f:
                f.write(data)
        edge = {}
        for args in ([], ["-l", "0"], ["-l", "-3.5", "-u", "2.25"], ["-y", "0", "1"], ["-r", "edge.range"]):
            full = [*args, "-s", "saved"] if "-r" not in args else args
            for data in ("edge", "edge.t"):
                code, out, err = _in(d, theirs)([*full, data], d)
                saved = open(os.path.join(d, "saved"), "rb").read() if "-s" in full else b""
                edge[" ".join([*full, data])] = [_digest(out), _digest(err), _digest(saved)]
    with open(PUBLIC_RECORD, "w") as f:
        f.write("\n".join(lines) + "\n")
    print("EDGE_DIGESTS = {")
    for k, v in edge.items():
        print(f"    {k!r}: {v!r},")
    print("}")


if __name__ == "__main__":
    if sys.argv[1:] == ["--record"]:
        record()


def test_memory_stays_bounded_on_standard_input(tmp_path):
    """240 MB of text through standard input (spooled to a temporary file, then read twice block by block): the
    process's peak RSS stays below 170 MB (about 125 MB from 50 MB of input on: the parser's chunks, the output
    buffer, NumPy), far below the input or its parsed rows; the output is the plain file's."""
    from conftest import PEAK
    rng = np.random.default_rng(1)
    rows = [f"{rng.choice([-1, 1])} " + " ".join(f"{j}:{v:.6g}" for j, v in enumerate(rng.normal(size=40), 1))
            for _ in range(2000)]
    piece = ("\n".join(rows) + "\n").encode()
    path = tmp_path / "big"
    with open(path, "wb") as f:
        for _ in range(240_000_000 // len(piece) + 1):
            f.write(piece)
    assert path.stat().st_size > 240_000_000
    peak_file = tmp_path / "peak"
    env = dict(os.environ, PYTHONPATH=REPO, LLSVM_PEAK_FILE=str(peak_file), TMPDIR=str(tmp_path))
    with open(path, "rb") as stdin:
        proc = subprocess.run([sys.executable, "-c", PEAK, "llsvm.cli.scale", "-l", "0", "-", "-o",
                               str(tmp_path / "out")], stdin=stdin, capture_output=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stderr
    peak = int(peak_file.read_text()) * 1024
    assert peak < 170 << 20, f"peak RSS {peak >> 20} MB"
    with open(tmp_path / "out", "rb") as f:
        assert f.read(len(piece) // 4) == ours(["-l", "0", write_small(tmp_path, piece)])[1][:len(piece) // 4]
    assert sorted(os.listdir(tmp_path)) == ["big", "out", "peak", "small"]


def write_small(tmp_path, piece):
    """The first rows of the big file as a file of their own: the scaled big file starts with their scaling when
    each piece repeats the same rows (the ranges are the piece's)."""
    path = tmp_path / "small"
    path.write_bytes(piece)
    return path


# -- llsvm-train's note ---------------------------------------------------------------------------------------------

def _train(args):
    from llsvm.cli.train import main as train_main
    result = CliRunner().invoke(train_main, [str(a) for a in args], catch_exceptions=False)
    assert result.exit_code == 0, result.stderr
    return [line for line in result.stderr.splitlines() if line.startswith("Note:") and "llsvm-scale" in line]


def test_train_says_once_that_scaling_may_help(tmp_path):
    """llsvm-train's note (llsvm/scale.py: a |value| beyond SCALE_BOUND, or features' largest |values| more than
    SCALE_RATIO apart): once for a kernel run (-t 1, 2, 3 of LIBSVM's types) and an out-of-core run on such data,
    never with -q, with -t 0, for the in-memory linear solvers, or on scaled data (the same rows through
    llsvm-scale)."""
    rng = np.random.default_rng(3)
    x = rng.uniform(0, 1, (120, 3)) * [100.0, 1.0, 1.0]
    y = np.where(x[:, 0] / 100 + x[:, 1] > 1, 1, -1)
    lines = [f"{y[i]} " + " ".join(f"{j + 1}:{x[i, j]:.6g}" for j in range(3)) for i in range(120)]
    raw = tmp_path / "raw"
    raw.write_text("\n".join(lines) + "\n")
    scaled = tmp_path / "scaled"
    scaled.write_bytes(ours([raw])[1])
    tiny = tmp_path / "tiny"                          # in [-1, 1], but one feature 1e4 times smaller
    tiny.write_text("\n".join(f"{y[i]} 1:{x[i, 1]:.6g} 2:{x[i, 2] * 1e-4:.6g}" for i in range(120)) + "\n")
    model = tmp_path / "m"
    for args, notes in ((["-s", "smo", raw], 1), (["-s", "nu_svr", "-t", "1", raw], 1), (["-s", "llsvm", raw], 1),
                        (["-s", "smo", "-q", raw], 0), (["-s", "smo", "-t", "0", raw], 0), (["-s", "2", raw], 0),
                        (["-s", "smo", scaled], 0), (["-s", "llsvm", scaled], 0), (["-s", "smo", tiny], 1)):
        got = _train([*args, model])
        assert len(got) == notes, (args, got)
        if notes and args[-1] == tiny:
            assert "differ by a factor of" in got[0]
        elif notes:
            assert "values reach" in got[0] and ("first rows" in got[0]) == ("llsvm" in args)
