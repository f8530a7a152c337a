"""Issue 27's hostile data (items 2, 6, 7 and parts of 8): labels without bound, dense arrays sized by a feature
index, extreme but finite values, tree-model structure errors and the qid count of a binary header.

The command-line cases run the installed console scripts in a subprocess under an address-space limit of 2 GiB
(test_reliability.run_limited): each must end with exit 1 and a message that names the cause, never with a
MemoryError, a traceback, numpy's RuntimeWarnings or a kill."""
import resource
import struct
import subprocess
import zlib

import numpy as np
import pytest

import llsvm
from llsvm import memory
from llsvm.binfmt import BinaryDataset, BinaryWriter
from llsvm.dataset import CSRDataset
from llsvm.errors import DataFormatError, ParameterError

from conftest import run_peak, write_small_set
from test_reliability import GiB, assert_clean_failure, run_limited, script

MB = 1 << 20


def assert_quiet_failure(proc, *needles):
    """A clean failure (exit 1, no traceback) whose stderr is the one message: no warning text before it."""
    assert_clean_failure(proc, *needles)
    assert "Warning" not in proc.stderr and "warning" not in proc.stderr, proc.stderr
    assert proc.stderr.count("\n") == 1 and proc.stderr.startswith("Error: "), proc.stderr


# -- item 2: labels without bound ---------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def labels100k(tmp_path_factory):
    """The issue's file: 100,000 rows of 1.2 MB, each with its own label."""
    p = tmp_path_factory.mktemp("labels") / "labels100k.txt"
    p.write_text("".join(f"{i} 1:1\n" for i in range(100000)))
    return p


ONE_VS_REST = ["0", "1", "2", "3", "5", "6", "7", "local1d", "project1d"]
ONE_VS_ONE = ["smo", "h1tree", "olsvm", "olsvm-rhl", "norma", "pegaz", "pegasos"]


@pytest.mark.parametrize("args", [["-s", s] for s in ONE_VS_REST]
                         + [["-s", "1", "-v", "3"], ["-s", "3", "-C", "-v", "3"]], ids=" ".join)
def test_classes_one_vs_rest_refused_up_front(labels100k, tmp_path, args):
    """-s 1 used to grow ~150 MB/s to the cap: every one-vs-rest solver refuses the 100,000 problems before making
    one, naming the count (their labels, dual variables and weight vectors: 84 GiB)."""
    model = tmp_path / "m"
    proc = run_limited(["llsvm-train", "-q", *args, labels100k, model])
    classes = "66667 classes make 66667" if ("-v" in args or "-C" in args) else "100000 classes make 100000"
    assert_quiet_failure(proc, f"{classes} one-vs-rest problems over", "for real-valued targets use a regression")
    assert not model.exists()


@pytest.mark.parametrize("args", [["-s", s] for s in ONE_VS_ONE]
                         + [["-s", "smo", "-v", "3"], ["-s", "h1tree", "-v", "2"],
                            ["-s", "smo", "-v", "2", "--grid", "C=1,2"], ["-s", "olsvm", "-v", "2", "--grid", "C=1,2"]],
                         ids=" ".join)
def test_class_pairs_refused_up_front(labels100k, tmp_path, args):
    """-s smo and -s h1tree started on 5 x 10^9 class pairs: every one-vs-one solver refuses them first."""
    model = tmp_path / "m"
    proc = run_limited(["llsvm-train", "-q", *args, labels100k, model])
    assert_quiet_failure(proc, "100000 classes make 4999950000 class pairs (one-vs-one) over 100000 rows")
    assert not model.exists()


def test_classes_peak_rss(labels100k, tmp_path):
    """The refusal costs what reading the file costs (before: 4 GB at the cap after ~9 s, -s 1; 1 GB in 15 s and
    growing, -s smo)."""
    for solver in ("1", "smo"):
        # first under the address-space limit: run_peak sets none (on the old code -s 1 would take the machine)
        assert_quiet_failure(run_limited(["llsvm-train", "-q", "-s", solver, labels100k, tmp_path / "m"]),
                             "100000 classes make")
        proc, peak = run_peak(["llsvm.cli.train", "-q", "-s", solver, labels100k, tmp_path / "m"])
        assert proc.returncode == 1 and "100000 classes make" in proc.stderr, proc.stderr
        assert peak < 200 * MB, (solver, peak)


@pytest.fixture(scope="module")
def labels60k(tmp_path_factory):
    """60,000 classes: a label table still (at most 65536 labels), so the out-of-core solvers take them."""
    p = tmp_path_factory.mktemp("labels") / "labels60k.txt"
    p.write_text("".join(f"{i} 1:1\n" for i in range(60000)))
    return p


@pytest.mark.parametrize("solver,needle", [
    ("bm", "60000 classes make 60000 one-vs-rest problems over 60000 rows: their dual variables"),
    ("llsvm", "60000 classes make 60000 one-vs-rest problems: their status bytes"),
])
def test_classes_out_of_core(labels60k, tmp_path, solver, needle):
    """-s bm allocated one alpha per row and class (27 GiB) until out of memory; -s llsvm their status bytes."""
    proc = run_limited(["llsvm-train", "-q", "-s", solver, labels60k, tmp_path / "m"])
    assert_quiet_failure(proc, needle)


def test_classes_streamsvm_weight_vectors(tmp_path):
    """-s streamsvm trains the problems one after the other, but keeps every w for the model: 300 classes over
    3,000,000 features (7 GiB of weight vectors) trained until out of memory; refused up front."""
    data = tmp_path / "wide.txt"
    data.write_text("".join(f"{i} {i * 10000 + 1}:1\n" for i in range(300)))
    proc = run_limited(["llsvm-train", "-q", "-s", "streamsvm", data, tmp_path / "m"])
    assert_quiet_failure(proc, "300 classes make 300 one-vs-rest problems: their weight vectors (and the model's) "
                               "take 13.4 GiB, more than the")


def _few_open_files():
    resource.setrlimit(resource.RLIMIT_AS, (2 * GiB, 2 * GiB))
    resource.setrlimit(resource.RLIMIT_NOFILE, (200, 200))


def test_llsvm_classes_beyond_the_open_files(tmp_path):
    """-s llsvm writes one active-set file per class: more classes than files it may open ended in "internal error
    (OSError: [Errno 24] Too many open files)"; now a refusal naming both counts (a soft limit below the hard one
    is raised first)."""
    data = tmp_path / "d.txt"
    data.write_text("".join(f"{i} 1:1\n" for i in range(300)))
    proc = subprocess.run([script("llsvm-train"), "-q", "-s", "llsvm", str(data), str(tmp_path / "m")],
                          capture_output=True, text=True, timeout=600, preexec_fn=_few_open_files)
    assert_quiet_failure(proc, "300 classes make 300 one-vs-rest problems, each writing its active set to a file: "
                               "-s llsvm needs 364 open files, more than the 200 this process may open (ulimit -n)")


def test_check_classes_counts():
    """The sums behind the messages: one-vs-rest problems (9 bytes per row and problem, two weight vectors and the
    objects), class pairs (each row in k - 1 pairs)."""
    from llsvm.solvers.common import PAIR_OBJECT_BYTES, PROBLEM_OBJECT_BYTES, check_ovo, check_ovr
    check_ovr(2, 10 ** 9, 10 ** 9)                     # two classes: one problem, the weight check's business
    with pytest.raises(memory.MemoryLimitError) as exc:
        check_ovr(1000, 1000, 9, budget=1000 * (9000 + 160 + PROBLEM_OBJECT_BYTES) - 1)
    assert str(exc.value).startswith("1000 classes make 1000 one-vs-rest problems over 1000 rows: their labels, dual "
                                     "variables and weight vectors take ")
    check_ovr(1000, 1000, 9, budget=1000 * (9000 + 160 + PROBLEM_OBJECT_BYTES))
    monkey = memory.available
    try:
        memory.available = lambda: 33 * 99 * 500 + PAIR_OBJECT_BYTES * 4950
        check_ovo(100, 500)
        memory.available = lambda: 33 * 99 * 500 + PAIR_OBJECT_BYTES * 4950 - 1
        with pytest.raises(memory.MemoryLimitError, match="100 classes make 4950 class pairs"):
            check_ovo(100, 500)
    finally:
        memory.available = monkey


def test_many_classes_that_fit_still_train(tmp_path):
    """The checks count what is held, not a fixed limit: 40 classes train with every family."""
    data = write_small_set(tmp_path / "d.txt", 120, labels=tuple(range(40)), n_features=8, nnz=3)
    for solver in ("3", "smo", "h1tree", "llsvm"):
        m = llsvm.train(str(data), solver=solver, max_iter=5 if solver in ("3", "llsvm") else None, say=lambda s: None)
        assert m.nr_class == 40


# -- item 6: h1tree's dense arrays and tree prediction -------------------------------------------------------------
@pytest.fixture
def maxidx(tmp_path):
    p = tmp_path / "maxidx.txt"
    p.write_text("1 1:1 268435456:1\n-1 2:1\n1 3:1\n-1 4:1\n")
    return p


@pytest.mark.parametrize("args", [[], ["-v", "2"]], ids=["train", "cv"])
def test_h1tree_huge_index_refused_before_allocating(maxidx, tmp_path, args):
    """A 4-row file with index 2^28 reached 2.1 GB, then a bare "Error: out of memory": refused as the other
    solvers refuse it, naming the index and the node's dense arrays."""
    proc = run_limited(["llsvm-train", "-q", "-s", "h1tree", *args, maxidx, tmp_path / "m"])
    assert_quiet_failure(proc, "feature index 268435456 makes a weight vector of 2.0 GiB; training needs 5 arrays "
                               "of that size (10.0 GiB), more than the")
    assert not (tmp_path / "m").exists()


def test_h1tree_node_memory_error_says_what(monkeypatch, tmp_path):
    """Should a node's arrays still fail (memory taken by another process), the MemoryError says what they were."""
    from llsvm.solvers import h1tree

    def no_memory(*a, **k):
        raise MemoryError()
    monkeypatch.setattr(h1tree._h1, "solve_node", no_memory)
    data = write_small_set(tmp_path / "d.txt", 20, n_features=5, nnz=2)
    with pytest.raises(MemoryError, match=r"an H1 node over 5 features and \d+ hard rows: its dense arrays"):
        llsvm.train(str(data), solver="h1tree")


def test_tree_prediction_ignores_features_beyond_the_model(maxidx, tmp_path):
    """Tree prediction sized its weights by the test file's largest index (32 GiB for index 2^31 - 1); now, as
    linear and kernel models do, features beyond the nodes' are ignored."""
    data = write_small_set(tmp_path / "d.txt", 40, labels=(1, -1, 2), n_features=6, nnz=3)
    model = tmp_path / "tree.model"
    assert run_limited(["llsvm-train", "-q", "-s", "h1tree", data, model]).returncode == 0
    far = tmp_path / "far.txt"
    lines = data.read_text().splitlines()[:5]
    far.write_text("".join(f"{ln} 2147483647:5\n" for ln in lines))
    near = tmp_path / "near.txt"
    near.write_text("".join(f"{ln}\n" for ln in lines))
    for test in (far, maxidx, near):
        proc = run_limited(["llsvm-predict", test, model, tmp_path / f"{test.stem}.out"])
        assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "far.out").read_text() == (tmp_path / "near.out").read_text()
    _, peak = run_peak(["llsvm.cli.predict", far, model, tmp_path / "far2.out"])     # safe: it ran under the limit
    assert peak < 200 * MB


def test_tree_header_of_many_classes_costs_nothing(tmp_path):
    """A tree model claiming 65,536 classes (2^31 pairs) in a few lines is refused at the first tree line missing,
    never by making its pairs first."""
    p = tmp_path / "huge.model"
    p.write_text("llsvm_tree_model 1\nsolver_type H1_TREE\nnr_class 65536\nlabel "
                 + " ".join(map(str, range(65536))) + "\nnr_feature 3\nbias -1\nmulticlass ovo\nh1_c inf\n"
                 "nr_tree 2147450880\ntree 0 1 nr_node 0 final leaf 0\n")
    data = tmp_path / "d.txt"
    data.write_text("1 1:1\n")
    proc = run_limited(["llsvm-predict", data, p, tmp_path / "out"])
    assert_quiet_failure(proc, "huge.model:11: expected 'tree A B nr_node R final leaf LABEL|rbf', found ''")


# -- item 7: extreme but finite values -------------------------------------------------------------------------------
@pytest.fixture
def big(tmp_path):
    p = tmp_path / "big.txt"
    p.write_text("1 1:1e200 2:1e200\n-1 1:-1e200\n")
    return p


OVERFLOW = "big.txt: line 1, column 5: the squared norm of the features overflows (values up to 1e+200"


@pytest.mark.parametrize("args", [["-s", "smo"], ["-s", "1"], ["-s", "3"], ["-s", "0"], ["-s", "11"],
                                  ["-s", "h1tree"], ["-s", "norma"], ["-s", "local1d"], ["-s", "smo", "-v", "2"],
                                  ["-s", "llsvm", "--one-pass"], ["-s", "bm"], ["-s", "streamsvm"]], ids=" ".join)
def test_overflowing_rows_refused_at_their_line(big, tmp_path, args):
    """-s smo printed numpy RuntimeWarnings and "rho must be 1 finite values, not 1"; -s 0, 1, 2, 11 warnings and a
    model; -s 3, h1tree and the online solvers a model from nonsense. Every solver now refuses the row as the binary
    format does, naming its line, the column of its largest value and what overflows."""
    proc = run_limited(["llsvm-train", "-q", *args, big, tmp_path / "m"])
    assert_quiet_failure(proc, OVERFLOW)
    assert not (tmp_path / "m").exists()


def test_overflowing_row_from_stdin_and_in_the_library(big):
    proc = run_limited(["llsvm-train", "-q", "-s", "smo", "-", "/dev/null"], input=big.read_text())
    assert_quiet_failure(proc, "<stdin>: row 1: the squared norm of the features overflows (values up to 1e+200")
    X = np.array([[1e200, 1e200], [-1e200, 0.0]])
    with pytest.raises(ParameterError, match=r"^row 1: the squared norm of the features overflows"):
        llsvm.train(X, np.array([1.0, -1.0]), solver=3)


@pytest.mark.parametrize("text,where,row", [
    ("1 149:5.63e+170\n", "line 1, column 7", 1),
    ("# c\n\n1 1:1\n-1 qid:3 2:1 149:5.63e+170 150:2 # 7:1e300\n", "line 4, column 18", 2),
])
def test_convert_names_the_line_of_an_overflowing_row(tmp_path, text, where, row):
    """llsvm-convert refused the valid line `1 149:5.63e+170` without a line number (and counted rows from 0)."""
    src = tmp_path / "c.txt"
    src.write_text(text)
    proc = run_limited(["llsvm-convert", src, tmp_path / "c.bin"])
    assert_quiet_failure(proc, f"c.txt: {where}: the squared norm of the features overflows (values up to 5.63e+170",
                         "(the binary format records each row's squared norm)")
    assert not (tmp_path / "c.bin").exists()
    with pytest.raises(ParameterError, match=where):
        llsvm.write_binary(str(src), str(tmp_path / "c.bin"))
    proc = run_limited(["llsvm-convert", "-", tmp_path / "c.bin"], input=text)
    assert_quiet_failure(proc, f"<stdin>: row {row}: the squared norm of the features overflows")   # read once


def test_writer_counts_rows_from_one(tmp_path):
    ds = CSRDataset([1.0, -1.0, 1.0], [0, 1, 2, 3], [0, 0, 1], [1.0, 1e200, 1.0])
    with pytest.raises(ParameterError, match=r"^row 2: the squared norm of the features overflows \(values up to "
                                             r"1e\+200"):
        llsvm.write_binary(ds, str(tmp_path / "w.bin"))


@pytest.mark.parametrize("args,needle", [
    (["-s", "norma", "--eta0", "1e308"], "-s norma: the solution of the class pair (1, -1) overflows (the coefficient "
                                         "of row "),
    (["-s", "olsvm", "-c", "1e308"], "-s olsvm: the solution of the class pair (1, -1) overflows (rho is -inf"),
    (["-s", "smo", "-t", "1", "-g", "1", "-d", "9"], "row 61: the kernel value K(x, x) is inf, not a finite number (-t "
                                                     "1 (polynomial) -g 1 -d 9 -r 0; values up to 1e+40)"),
    (["-s", "olsvm", "-t", "1", "-d", "9"], "row 61: the kernel value K(x, x) is inf"),
    (["-s", "smo", "-c", "1e308", "-w1", "1e308"], "-w1 1e+308: the class's C, 1e+308 x 1e+308, overflows"),
], ids=lambda v: " ".join(v) if isinstance(v, list) else None)
def test_solver_overflow_named(tmp_path, args, needle):
    """norma --eta0 1e308 ended in "sv_coef has shape (1, 133), expected (1, 133) finite values" after numpy
    warnings; the solvers' overflow is now named where it happens (a polynomial kernel's on row 61, 1:1e40, whose
    squared norm is finite)."""
    data = write_small_set(tmp_path / "d.txt", 60, n_features=5, nnz=3)
    if "-d" in args:
        with open(data, "a") as f:
            f.write("1 1:1e40 2:1\n")
    proc = run_limited(["llsvm-train", "-q", *args, data, tmp_path / "m"])
    assert_quiet_failure(proc, needle)
    assert "expected" not in proc.stderr


@pytest.mark.parametrize("args", [["-s", "smo", "-c", "1e308"], ["-s", "smo", "-t", "0", "-c", "1e308"],
                                  ["-s", "smo", "-t", "3", "-c", "1e308"], ["-s", "pegaz", "-c", "1e308"],
                                  ["-s", "olsvm-rhl", "-c", "1e308"]], ids=" ".join)
def test_huge_C_trains_without_warnings(tmp_path, args):
    """A finite model from a huge C: its certificate may be inf, but no numpy RuntimeWarning reaches stderr."""
    data = write_small_set(tmp_path / "d.txt", 60, n_features=5, nnz=3)
    proc = run_limited(["llsvm-train", "-q", *args, data, tmp_path / "m"])
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    proc = run_limited(["llsvm-predict", data, tmp_path / "m", tmp_path / "out"])
    assert proc.returncode == 0, proc.stderr


# -- item 8: the qid count of a binary header ------------------------------------------------------------------------
def _binary(tmp_path, n_qid):
    path = tmp_path / "q.bin"
    with BinaryWriter(str(path)) as w:
        w.write_dataset(CSRDataset([1.0, -1.0, 1.0], [0, 1, 2, 2], [0, 1], [1.0, 2.0]))
        w.close(n_qid=2)
    raw = bytearray(path.read_bytes())
    struct.pack_into("<Q", raw, 72, n_qid)
    struct.pack_into("<I", raw, 124, zlib.crc32(bytes(raw[:124])))
    path.write_bytes(bytes(raw))
    return path


def test_info_refuses_a_qid_count_beyond_the_rows(tmp_path):
    """--info printed whatever qid count a crafted header held (2^64 - 1): n_qid is checked against the rows, as
    every other header field is."""
    proc = run_limited(["llsvm-convert", "--info", _binary(tmp_path, 3)])
    assert proc.returncode == 0 and "qid tokens: 3" in proc.stdout, proc.stderr
    for n_qid in (4, 2 ** 64 - 1):
        proc = run_limited(["llsvm-convert", "--info", _binary(tmp_path, n_qid)])
        assert_quiet_failure(proc, f"header n_qid {n_qid} but the file has only 3 rows (a row holds at most one qid "
                                   "token)")
        assert proc.stdout == ""
        with pytest.raises(DataFormatError, match="header n_qid"):
            BinaryDataset(str(_binary(tmp_path, n_qid)))


def test_writer_refuses_more_qid_tokens_than_rows(tmp_path):
    path = tmp_path / "w.bin"
    with pytest.raises(ParameterError, match="n_qid 4: a file of 3 rows holds 0..3 qid tokens"):
        with BinaryWriter(str(path)) as w:
            w.write_dataset(CSRDataset([1.0, -1.0, 1.0], [0, 1, 2, 2], [0, 1], [1.0, 2.0]))
            w.close(n_qid=4)
    assert not path.exists()
