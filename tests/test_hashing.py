"""Feature hashing (`--hash-bits`, docs/formats.md section 1.2): the hash itself pinned to fixed values, the Cython kernel
against the NumPy twin (reference/hashing_twin.py) and a naive per-row implementation of the definition,
hash_dataset, the hashed model file format (byte-exact round trip, strict loading with line numbers), and hashed
models predicting through Model.predict, predict_file and the llsvm-predict command.
"""
import io

import numpy as np
import pytest
from click.testing import CliRunner
from conftest import assert_exit

import llsvm
from llsvm.models import load_model
from llsvm import ModelFormatError, ParameterError
from llsvm._ext._hashing import fmix32_array
from llsvm._ext._hashing import hash_rows as hash_view
from llsvm._ext._view import Rows
from llsvm.cli.predict import main as predict_main
from llsvm.hashing import HASH_FUNCTION, check_bits, hash_dataset
from llsvm.solvers.trainer import train as llsvm_fit
from llsvm.models.linear import Model
from llsvm.predict import predict_file
from reference.hashing_twin import fmix32_reference, hash_rows_reference

BITS = [1, 2, 3, 5, 8, 12, 18, 28]


# -- the hash, from its definition ----------------------------------------------------------------------------------

def hash_rows(indptr, indices, values, bits):
    """The kernel on the row view of these CSR arrays."""
    return hash_view(Rows(indptr, indices, values, int(np.max(indices, initial=-1)) + 1), bits)


def fmix32_py(h):
    """MurmurHash3's fmix32 straight from the definition, in Python integers."""
    h &= 0xFFFFFFFF
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & 0xFFFFFFFF
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & 0xFFFFFFFF
    h ^= h >> 16
    return h


def bucket_py(j, bits):
    return fmix32_py(j) & ((1 << bits) - 1)


def sign_py(j):
    return -1.0 if fmix32_py(j ^ 0x9E3779B9) & 0x80000000 else 1.0


def naive_hash(indptr, indices, values, bits):
    """The definition row by row: a dict bucket -> sum, added in storage order, then sorted by bucket."""
    out_indptr, out_indices, out_values = [0], [], []
    for r in range(len(indptr) - 1):
        acc = {}
        for k in range(indptr[r], indptr[r + 1]):
            j = int(indices[k]) + 1
            b = bucket_py(j, bits)
            v = sign_py(j) * float(values[k])
            acc[b] = acc[b] + v if b in acc else v
        for b in sorted(acc):
            out_indices.append(b)
            out_values.append(acc[b])
        out_indptr.append(len(out_indices))
    return (np.array(out_indptr, np.int64), np.array(out_indices, np.int32), np.array(out_values, np.float64))


# fmix32(j) and fmix32(j ^ 0x9E3779B9), computed once with fmix32_py; fmix32(1) = 0x514E28B7 is also MurmurHash3's
# published value. These pin the mapping every hashed model file depends on.
FMIX = {
    1: (0x514E28B7, 0x36DEB503),
    2: (0x30F4C306, 0xB4421BBB),
    3: (0x85F0B427, 0x96A0F96B),
    4: (0x249CB285, 0x589FD748),
    5: (0xCC0D53CD, 0xED81DED3),
    10: (0xE9250490, 0x7E32275D),
    100: (0xFDCE5CEA, 0xF7ECAD0E),
    1000: (0x66692658, 0x55B7A4EE),
    123456: (0x96725ACB, 0x64F84AB7),
    65536: (0x0EA34562, 0xFCF45351),
    16777217: (0x4A232301, 0x701461F8),
    2147483647: (0xF9CC0EA8, 0x56673FA7),
    2147483648: (0x6D3C65A0, 0xBD12A56A),      # index 2^31 - 1, the largest int32 index
}


def bit_equal(a, b):
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape, (a.dtype, b.dtype, a.shape, b.shape)
    if a.dtype.kind == "f":
        a, b = a.view(np.int64 if a.itemsize == 8 else np.int32), b.view(np.int64 if b.itemsize == 8 else np.int32)
    np.testing.assert_array_equal(a, b)


def assert_same_rows(got, expected):
    for g, e in zip(got, expected):
        bit_equal(g, e)


def test_fmix32_fixed_values():
    j = np.array(list(FMIX), dtype=np.uint32)
    expected = np.array([v[0] for v in FMIX.values()], dtype=np.uint32)
    expected_sign = np.array([v[1] for v in FMIX.values()], dtype=np.uint32)
    assert [fmix32_py(int(x)) for x in j] == expected.tolist()
    assert [fmix32_py(int(x) ^ 0x9E3779B9) for x in j] == expected_sign.tolist()
    bit_equal(fmix32_array(j), expected)
    bit_equal(fmix32_array(j ^ np.uint32(0x9E3779B9)), expected_sign)
    bit_equal(fmix32_reference(j), expected)
    assert fmix32_array(np.array([0], np.uint32))[0] == 0
    assert HASH_FUNCTION == "fmix32-signed"


@pytest.mark.parametrize("bits", [1, 5, 18, 28])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_single_feature_bucket_and_sign(bits, dtype):
    """One row per pinned j: the entry lands at fmix32(j) & mask with the pinned sign, as float64."""
    js = list(FMIX)
    indptr = np.arange(len(js) + 1, dtype=np.int64)
    indices = np.array([j - 1 for j in js], dtype=np.int32)
    values = np.full(len(js), 1.5, dtype=dtype)
    ip, ix, v = hash_rows(indptr, indices, values, bits)
    mask = (1 << bits) - 1
    bit_equal(ip, indptr)
    bit_equal(ix, np.array([FMIX[j][0] & mask for j in js], np.int32))
    signs = np.array([-1.0 if FMIX[j][1] & 0x80000000 else 1.0 for j in js])
    bit_equal(v, 1.5 * signs)
    assert (signs > 0).any() and (signs < 0).any()


def random_csr(seed, n_rows, max_len, n_features, dtype, empty_frac=0.2):
    rng = np.random.default_rng(seed)
    lens = rng.integers(0, max_len + 1, n_rows)
    lens[rng.random(n_rows) < empty_frac] = 0
    lens = np.minimum(lens, n_features)
    indptr = np.concatenate([[0], np.cumsum(lens)]).astype(np.int64)
    indices = np.concatenate([np.sort(rng.choice(n_features, k, replace=False)) for k in lens] +
                             [np.zeros(0, np.int64)]).astype(np.int32)
    values = (rng.standard_normal(indptr[-1]) * 10.0 ** rng.integers(-3, 4, indptr[-1])).astype(dtype)
    # some exact ties so that sums of colliding values can cancel to 0.0
    values[rng.random(values.size) < 0.1] = 1.0
    return indptr, indices, values


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("bits", BITS)
def test_kernel_matches_reference(bits, dtype):
    """Short rows (insertion sort) and long ones (merge sort), many collisions at small bits, empty rows."""
    for seed, (n_rows, max_len, n_features) in enumerate([(300, 12, 50), (60, 400, 2 ** 31 - 1), (40, 3000, 5000),
                                                          (5, 0, 10), (0, 0, 10)]):
        indptr, indices, values = random_csr(seed * 100 + bits, n_rows, max_len, n_features, dtype)
        got = hash_rows(indptr, indices, values, bits)
        assert_same_rows(got, hash_rows_reference(indptr, indices, values, bits))
        ip, ix = got[0], got[1]
        assert ip[0] == 0 and ip[-1] == ix.size == got[2].size
        for r in range(n_rows):   # strictly increasing buckets in range
            row = ix[ip[r]:ip[r + 1]]
            assert (np.diff(row) > 0).all() and (row >= 0).all() and (row < (1 << bits)).all()
        if n_rows and bits <= 3 and max_len >= 12:
            assert ix.size < indices.size     # collisions merged


@pytest.mark.parametrize("bits", [1, 4, 10, 28])
def test_reference_matches_the_definition(bits):
    indptr, indices, values = random_csr(7 + bits, 80, 60, 100000, np.float64)
    assert_same_rows(hash_rows_reference(indptr, indices, values, bits), naive_hash(indptr, indices, values, bits))
    assert_same_rows(hash_rows(indptr, indices, values, bits), naive_hash(indptr, indices, values, bits))


def colliding(bits, count, limit=5000):
    """The first `count` 1-based j with the bucket of the first j that has `count` partners, plus their signs."""
    groups = {}
    for j in range(1, limit):
        groups.setdefault(bucket_py(j, bits), []).append(j)
    for js in groups.values():
        if len(js) >= count and {sign_py(j) for j in js[:count]} == {-1.0, 1.0}:
            return js[:count]
    raise AssertionError("no collision group found")  # pragma: no cover


def test_collisions_sum_in_storage_order_and_keep_exact_zero():
    bits = 6
    js = colliding(bits, 4)
    b = bucket_py(js[0], bits)
    signs = [sign_py(j) for j in js]
    # row 0: two colliding entries with opposite signs and the same value: an exact 0.0 stays an entry
    pos = next(j for j in js if sign_py(j) > 0)
    neg = next(j for j in js if sign_py(j) < 0)
    a, c = sorted([pos, neg])
    # row 1: all four colliding, values whose sum depends on the order: 1e16, 1, -1e16, 1 (signed)
    vals = [1e16, 1.0, -1e16, 1.0]
    indptr = np.array([0, 2, 6, 6], np.int64)
    indices = np.array([a - 1, c - 1] + [j - 1 for j in js], np.int32)
    values = np.array([2.5, 2.5] + vals, np.float64)
    ip, ix, v = hash_rows(indptr, indices, values, bits)
    bit_equal(ip, np.array([0, 1, 2, 2], np.int64))
    bit_equal(ix, np.array([b, b], np.int32))
    expected = 0.0
    for s, x in zip(signs, vals):
        expected += s * x
    bit_equal(v, np.array([0.0, expected]))
    assert v[0] == 0.0 and not np.signbit(v[0])
    assert_same_rows((ip, ix, v), hash_rows_reference(indptr, indices, values, bits))


def test_kernel_rejects_bad_arguments():
    indptr, indices, values = np.array([0, 1], np.int64), np.array([0], np.int32), np.array([1.0])
    for bits in (0, 29, -3):
        with pytest.raises(ValueError, match="1..28"):
            hash_rows(indptr, indices, values, bits)
    with pytest.raises(ValueError, match="inconsistent"):
        hash_rows(np.array([0, 2], np.int64), indices, values, 4)
    with pytest.raises(ValueError, match="decrease"):
        hash_rows(np.array([0, 1, 0, 1], np.int64), indices, values, 4)


def test_check_bits():
    assert check_bits(1) == 1 and check_bits(28) == 28 and check_bits(np.int64(18)) == 18
    for bad in (0, 29, -1, 1.5, True, "3", None):
        with pytest.raises(ParameterError):
            check_bits(bad)


def test_hash_dataset_keeps_rows_and_labels():
    indptr, indices, values = random_csr(3, 50, 20, 10 ** 6, np.float32)
    y = np.where(np.arange(50) % 3 == 0, 1.0, -1.0)
    ds = llsvm.CSRDataset(y, indptr, indices, values, row_ids=np.arange(50) * 7 + 3)
    ds.first_row = 1234
    before = values.copy()
    h = hash_dataset(ds, 10)
    assert h.n_features == 1024 and h.n_rows == 50 and h.values.dtype == np.float64
    bit_equal(h.y, y)
    bit_equal(h.row_ids, np.arange(50, dtype=np.int64) * 7 + 3)
    assert h.first_row == 1234
    assert_same_rows((h.indptr, h.indices, h.values), hash_rows_reference(indptr, indices, values, 10))
    bit_equal(values, before)
    np.testing.assert_array_equal(h.labels, [1.0, -1.0])
    with pytest.raises(ParameterError):
        hash_dataset(ds, 29)


# -- the hashed model file ------------------------------------------------------------------------------------------

HASHED = (
    Model("L2R_L1LOSS_SVC_DUAL", 2, [1, -1], 4, 1.0, np.array([[0.1], [-2.5], [0.0], [1 / 3], [-0.0]]),
          hash_bits=2),
    "llsvm_hashed_model 1\n"
    "hash fmix32-signed 2\n"
    "solver_type L2R_L1LOSS_SVC_DUAL\n"
    "nr_class 2\n"
    "label 1 -1\n"
    "nr_feature 4\n"
    "bias 1\n"
    "w\n"
    "0.10000000000000001 \n"
    "-2.5 \n"
    "0 \n"
    "0.33333333333333331 \n"
    "-0 \n")

PLAIN = (
    Model("L2R_L1LOSS_SVC_DUAL", 2, [1, -1], 3, -1.0, np.array([[0.1], [-2.5], [1 / 3]])),
    "solver_type L2R_L1LOSS_SVC_DUAL\n"
    "nr_class 2\n"
    "label 1 -1\n"
    "nr_feature 3\n"
    "bias -1\n"
    "w\n"
    "0.10000000000000001 \n"
    "-2.5 \n"
    "0.33333333333333331 \n")


def test_hashed_model_round_trip_byte_exact(tmp_path):
    model, text = HASHED
    assert model.to_text() == text
    model.save(tmp_path / "h.model")
    assert (tmp_path / "h.model").read_bytes() == text.encode("ascii")
    back = load_model(tmp_path / "h.model")
    assert back.hash_bits == 2 and back.nr_feature == 4 and back.bias == 1.0
    bit_equal(back.W, model.W)
    back.save(tmp_path / "again.model")
    assert (tmp_path / "again.model").read_bytes() == text.encode("ascii")
    # multiclass, no bias, bits 3
    rng = np.random.default_rng(0)
    mc = Model("L2R_L2LOSS_SVC_DUAL", 3, [3, 1, 2], 8, -1.0, rng.standard_normal((8, 3)), hash_bits=3)
    mc.save(tmp_path / "mc.model")
    data = (tmp_path / "mc.model").read_bytes()
    assert data.startswith(b"llsvm_hashed_model 1\nhash fmix32-signed 3\nsolver_type L2R_L2LOSS_SVC_DUAL\n")
    back = load_model(tmp_path / "mc.model")
    assert back.hash_bits == 3
    bit_equal(back.W, mc.W)
    assert back.to_text().encode("ascii") == data


def test_ordinary_model_unchanged_byte_for_byte(tmp_path):
    model, text = PLAIN
    assert model.hash_bits is None
    model.save(tmp_path / "p.model")
    assert (tmp_path / "p.model").read_bytes() == text.encode("ascii")
    back = load_model(tmp_path / "p.model")
    assert back.hash_bits is None
    assert back.to_text() == text
    # an ordinary model ignores features beyond nr_feature rather than hashing them
    X = np.array([[1.0, 0.0, 0.0, 5.0]])
    np.testing.assert_array_equal(back.decision_function(X), [0.1])


def hashed_text_with(line_no, new_line):
    lines = HASHED[1].split("\n")
    lines[line_no - 1] = new_line
    return "\n".join(lines)


@pytest.mark.parametrize("line_no, new_line, message", [
    (1, "llsvm_hashed_model 2", "unsupported hashed model version 2"),
    (1, "llsvm_hashed_model", "expected 'llsvm_hashed_model 1'"),
    (1, "llsvm_hashed_model one", "expected 'llsvm_hashed_model 1'"),
    (2, "hash murmur3 2", "unknown hash function 'murmur3'"),
    (2, "hash fmix32-signed 0", "1..28"),
    (2, "hash fmix32-signed 29", "1..28"),
    (2, "hash fmix32-signed x", "1..28"),
    (2, "hash fmix32-signed", "expected 'hash fmix32-signed BITS'"),
    (2, "solver_type L2R_L1LOSS_SVC_DUAL", "expected 'hash fmix32-signed BITS'"),
    (6, "nr_feature 5", "nr_feature 2^bits = 4, not 5"),
    (6, "nr_feature 3", "nr_feature 2^bits = 4, not 3"),
    (3, "solver_type NOPE", "unknown solver type"),
    (7, "bias x", "'bias' takes one finite number"),
    (11, "zero ", "a weight is not a number"),
    (12, "1 2 ", "expected 1 weights, found 2"),
])
def test_hashed_model_errors_carry_file_line_numbers(tmp_path, line_no, new_line, message):
    path = tmp_path / "bad.model"
    path.write_text(hashed_text_with(line_no, new_line))
    with pytest.raises(ModelFormatError) as exc:
        load_model(path)
    assert str(exc.value).startswith(f"{path}:{line_no}: ")
    assert message in str(exc.value)


def test_hashed_model_truncated_weights(tmp_path):
    path = tmp_path / "short.model"
    path.write_text("".join(HASHED[1].splitlines(keepends=True)[:-2]))    # 3 of 5 weight lines
    with pytest.raises(ModelFormatError, match=r":12: expected 5 weight lines, found 3"):
        load_model(path)
    path.write_text("llsvm_hashed_model 1\n")
    with pytest.raises(ModelFormatError, match=r":2: expected 'hash"):
        load_model(path)


def test_model_constructor_checks_hash_bits():
    W = np.zeros((5, 1))
    with pytest.raises(ParameterError, match="nr_feature"):
        Model("L2R_L1LOSS_SVC_DUAL", 2, [1, -1], 5, -1.0, W, hash_bits=2)
    with pytest.raises(ParameterError):
        Model("L2R_L1LOSS_SVC_DUAL", 2, [1, -1], 5, -1.0, W, hash_bits=0)


# -- a trained hashed model predicting -----------------------------------------------------------------------------

def generated(seed, n_rows, n_features=10 ** 6, per_row=15):
    """Sparse rows over a huge index range, labels from a hidden linear rule on 40 informative features."""
    rule = np.random.default_rng(0)               # the same rule for every seed
    informative = np.sort(rule.choice(n_features, 40, replace=False))
    w_true = rule.standard_normal(40)
    rng = np.random.default_rng(seed)
    rows_idx, rows_val, y = [], [], []
    for _ in range(n_rows):
        k_inf = int(rng.integers(3, 8))
        idx = np.union1d(rng.choice(informative, k_inf, replace=False),
                         rng.choice(n_features, per_row - k_inf, replace=False))
        val = rng.uniform(0.1, 1.0, idx.size)
        hit = np.isin(idx, informative)
        score = float(w_true[np.searchsorted(informative, idx[hit])] @ val[hit])
        rows_idx.append(idx.astype(np.int32))
        rows_val.append(val)
        y.append(1.0 if score > 0 else -1.0)
    indptr = np.concatenate([[0], np.cumsum([r.size for r in rows_idx])]).astype(np.int64)
    return llsvm.CSRDataset(np.array(y), indptr, np.concatenate(rows_idx), np.concatenate(rows_val), n_features)


def write_libsvm(ds, path):
    with open(path, "w") as f:
        for r in range(ds.n_rows):
            a, b = ds.indptr[r], ds.indptr[r + 1]
            f.write("%.17g" % ds.y[r] + "".join(f" {i + 1}:{v!r}" for i, v in
                                                 zip(ds.indices[a:b].tolist(), ds.values[a:b].tolist())) + "\n")


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """(hashed model, its file, train set, test set, test file) for bits 10, -s 3, bias 1."""
    d = tmp_path_factory.mktemp("hashed")
    train_ds, test_ds = generated(1, 400), generated(2, 300)
    fit = llsvm_fit(hash_dataset(train_ds, 10), solver=3, C=1.0, bias=1.0)
    assert fit.nr_feature == 1024 and fit.W.shape == (1025, 1)
    model = Model(fit.solver_type, fit.nr_class, fit.label, fit.nr_feature, fit.bias, fit.W, hash_bits=10)
    model.save(d / "hashed.model")
    write_libsvm(test_ds, d / "test.txt")
    return dict(fit=fit, model=model, model_file=d / "hashed.model", train=train_ds, test=test_ds,
                test_file=d / "test.txt", dir=d)


def test_hashed_model_predicts_unhashed_data(trained):
    model, fit, test = trained["model"], trained["fit"], trained["test"]
    hashed_test = hash_dataset(test, 10)
    bit_equal(model.decision_function(test), fit.decision_function(hashed_test))
    pred = model.predict(test)
    bit_equal(pred, fit.predict(hashed_test))
    assert (pred == test.y).mean() > 0.75                 # it learned something through the hash
    assert (model.predict(trained["train"]) == trained["train"].y).mean() > 0.9
    # scipy input works the same; unhashed weights applied to raw indices would not
    bit_equal(model.predict(test.to_csr()), pred)
    raw = Model(fit.solver_type, fit.nr_class, fit.label, fit.nr_feature, fit.bias, fit.W)
    assert not np.array_equal(raw.decision_function(test), model.decision_function(test))
    # the file loads back to the same predictions
    loaded = load_model(trained["model_file"])
    assert loaded.hash_bits == 10
    bit_equal(loaded.decision_function(test), model.decision_function(test))


def expected_output(model, ds):
    pred = model.predict(ds)
    correct = int((pred == ds.y).sum())
    return "".join("%.17g\n" % v for v in pred.tolist()), correct


def test_predict_file_hashes_every_block(trained, monkeypatch):
    model, test = load_model(trained["model_file"]), trained["test"]
    labels, correct = expected_output(trained["model"], test)
    out, dec = io.StringIO(), io.StringIO()
    m = predict_file(model, trained["test_file"], out, dec_out=dec)
    assert out.getvalue() == labels
    assert (m["n_rows"], m["correct"]) == (test.n_rows, correct)
    d = trained["model"].decision_function(test)
    assert dec.getvalue() == "".join("%.17g\n" % v for v in d.tolist())
    # many small blocks, and a binary test file: the same lines
    import llsvm.predict as predict_mod
    monkeypatch.setattr(predict_mod, "BLOCK_BYTES", 600)
    llsvm.write_binary(str(trained["test_file"]), str(trained["dir"] / "test.bin"))
    for path in (trained["test_file"], trained["dir"] / "test.bin"):
        out = io.StringIO()
        predict_file(model, path, out)
        assert out.getvalue() == labels


def test_llsvm_predict_cli_with_hashed_model(trained, tmp_path):
    labels, correct = expected_output(trained["model"], trained["test"])
    n = trained["test"].n_rows
    out = tmp_path / "out"
    r = CliRunner().invoke(predict_main, [str(trained["test_file"]), str(trained["model_file"]), str(out)])
    assert_exit(r, 0)
    assert r.stdout == "Accuracy = %g%% (%d/%d)\n" % (100.0 * correct / n, correct, n)
    assert out.read_text() == labels
    # a malformed hashed model: exit 1, the file's line number in the message
    bad = tmp_path / "bad.model"
    bad.write_text(trained["model_file"].read_text().replace("fmix32-signed 10", "fmix32-signed 11", 1))
    r = CliRunner().invoke(predict_main, [str(trained["test_file"]), str(bad), str(tmp_path / "out2")])
    assert_exit(r, 1)
    assert f"{bad}:6: a hashed model has nr_feature 2^bits = 2048, not 1024" in r.stderr
    assert not (tmp_path / "out2").exists()


def test_hashed_logistic_model_probabilities(tmp_path):
    """-b 1 through a hashed model: the probabilities of the hashed rows, LIBLINEAR's line format."""
    rng = np.random.default_rng(5)
    model = Model("L2R_LR", 2, [1, -1], 16, 1.0, rng.standard_normal((17, 1)), hash_bits=4)
    model.save(tmp_path / "lr.model")
    test = generated(3, 30, per_row=9)
    write_libsvm(test, tmp_path / "t.txt")
    labels, p = model.predict_probability(test)
    r = CliRunner().invoke(predict_main, ["-b", "1", str(tmp_path / "t.txt"), str(tmp_path / "lr.model"),
                                          str(tmp_path / "out")])
    assert_exit(r, 0)
    expected = "labels 1 -1\n" + "".join("%g %g %g\n" % (lab, *q) for lab, q in zip(labels.tolist(), p.tolist()))
    assert (tmp_path / "out").read_text() == expected
    hashed = hash_dataset(test, 4)
    dec = hashed.to_csr() @ model.W[:16, 0] + model.W[16, 0]
    np.testing.assert_allclose(p[:, 0], 1.0 / (1.0 + np.exp(-dec)), rtol=1e-12)
