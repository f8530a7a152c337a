"""llsvm.Model: LIBLINEAR's model text format exactly (docs/formats.md section 1.1), atomic saves, strict loading
(docs/architecture.md section 7), and models exchanged both ways with liblinear-official.
"""
import os
import time
import tracemalloc

import numpy as np
import pytest

import llsvm
from llsvm.models import load_model
from llsvm import ModelFormatError
from llsvm.solvers.trainer import train as llsvm_fit
from llsvm.models.linear import Model

from liblinear import liblinearutil as llu  # noqa: E402


def bits(a):
    return np.ascontiguousarray(a, dtype=np.float64).view(np.int64)


# -- golden model strings -----------------------------------------------------------------------------------------

GOLDEN = {
    "binary": (
        Model("L2R_L1LOSS_SVC_DUAL", 2, [1, -1], 3, -1.0, np.array([[0.1], [-2.5], [1 / 3]])),
        "solver_type L2R_L1LOSS_SVC_DUAL\n"
        "nr_class 2\n"
        "label 1 -1\n"
        "nr_feature 3\n"
        "bias -1\n"
        "w\n"
        "0.10000000000000001 \n"
        "-2.5 \n"
        "0.33333333333333331 \n"),
    "binary_bias": (
        Model("L2R_L2LOSS_SVC_DUAL", 2, [4, 2], 3, 1.0,
              np.array([[1e-300], [-0.0], [123456789.125], [5e-324]])),
        "solver_type L2R_L2LOSS_SVC_DUAL\n"
        "nr_class 2\n"
        "label 4 2\n"
        "nr_feature 3\n"
        "bias 1\n"
        "w\n"
        "1e-300 \n"
        "-0 \n"
        "123456789.125 \n"
        "4.9406564584124654e-324 \n"),
    "binary_bias_half": (
        Model("L2R_L2LOSS_SVC", 2, [-1, 1], 1, 0.5, np.array([[2.0], [-1.7976931348623157e308]])),
        "solver_type L2R_L2LOSS_SVC\n"
        "nr_class 2\n"
        "label -1 1\n"
        "nr_feature 1\n"
        "bias 0.5\n"
        "w\n"
        "2 \n"
        "-1.7976931348623157e+308 \n"),
    "multiclass": (
        Model("L2R_L2LOSS_SVC_DUAL", 3, [3, 1, 2], 2, -1.0, np.array([[1.0, -2.0, 0.25], [2 / 3, 0.0, -1e-5]])),
        "solver_type L2R_L2LOSS_SVC_DUAL\n"
        "nr_class 3\n"
        "label 3 1 2\n"
        "nr_feature 2\n"
        "bias -1\n"
        "w\n"
        "1 -2 0.25 \n"
        "0.66666666666666663 0 -1.0000000000000001e-05 \n"),
    "mcsvm_two_classes": (
        Model("MCSVM_CS", 2, [1, -1], 1, 1.0, np.array([[0.5, -0.5], [-0.25, 0.25]])),
        "solver_type MCSVM_CS\n"
        "nr_class 2\n"
        "label 1 -1\n"
        "nr_feature 1\n"
        "bias 1\n"
        "w\n"
        "0.5 -0.5 \n"
        "-0.25 0.25 \n"),
    "regression": (
        Model("L2R_L2LOSS_SVR", 2, None, 2, -1.0, np.array([[1.5], [-3.0]])),
        "solver_type L2R_L2LOSS_SVR\n"
        "nr_class 2\n"
        "nr_feature 2\n"
        "bias -1\n"
        "w\n"
        "1.5 \n"
        "-3 \n"),
    "oneclass": (
        Model("ONECLASS_SVM", 2, None, 2, -1.0, np.array([[0.75], [1.25]]), rho=0.5),
        "solver_type ONECLASS_SVM\n"
        "nr_class 2\n"
        "nr_feature 2\n"
        "bias -1\n"
        "rho 0.5\n"
        "w\n"
        "0.75 \n"
        "1.25 \n"),
}


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_golden_text(name, tmp_path):
    model, text = GOLDEN[name]
    assert model.to_text() == text
    model.save(tmp_path / "m")
    assert (tmp_path / "m").read_bytes() == text.encode("ascii")
    # LIBLINEAR reads it and writes back the same bytes
    m = llu.load_model(str(tmp_path / "m"))
    assert m is not None
    llu.save_model(str(tmp_path / "ll"), m)
    assert (tmp_path / "ll").read_bytes() == text.encode("ascii")
    # and so do we
    back = load_model(tmp_path / "m")
    assert back.to_text() == text
    np.testing.assert_array_equal(bits(back.W), bits(model.W))
    assert (back.solver_type, back.nr_class, back.nr_feature, back.bias, back.rho) == \
        (model.solver_type, model.nr_class, model.nr_feature, model.bias, model.rho)
    if model.label is None:
        assert back.label is None
    else:
        assert back.label.tolist() == model.label.tolist()


def test_golden_predictions():
    """LIBLINEAR's rules by hand: sign for two classes (0 goes to label[1]), first largest value otherwise."""
    X = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 0.0], [-1.0, 0.0, 3.0]])
    m = GOLDEN["binary"][0]
    np.testing.assert_array_equal(m.decision_function(X), [0.1, -2.5, 0.0, -0.1 + 1.0])
    np.testing.assert_array_equal(m.predict(X), [1.0, -1.0, -1.0, 1.0])
    mc = GOLDEN["multiclass"][0]
    X2 = np.array([[1.0, 0.0], [0.0, 1.0], [0.0, 0.0], [-1.0, 3.0]])
    dec = mc.decision_function(X2)
    np.testing.assert_array_equal(dec, [[1.0, -2.0, 0.25], [2 / 3, 0.0, -1e-5], [0, 0, 0],
                                        [-1.0 + 3.0 * (2 / 3), 2.0, -0.25 + 3.0 * -1e-5]])
    # row 3: a tie at 0 goes to the first label; row 4: 1 < 2 (second column)
    np.testing.assert_array_equal(mc.predict(X2), [3.0, 3.0, 3.0, 1.0])
    mb = GOLDEN["binary_bias_half"][0]              # w = 2, bias weight -max: x = [1] -> 2 - 0.5 * max < 0
    np.testing.assert_array_equal(mb.predict(np.array([[1.0]])), [1.0])      # label[1] = 1
    reg = GOLDEN["regression"][0]
    np.testing.assert_array_equal(reg.predict(np.array([[2.0, 1.0]])), [0.0])


def test_oneclass_decision_values_subtract_rho():
    """LIBLINEAR's predict_values for ONECLASS_SVM: dec = w.x - rho, label = +1 if dec > 0 else -1."""
    m = GOLDEN["oneclass"][0]
    X = np.array([[1.0, 0.0], [0.0, 0.0], [0.0, 0.4]])
    np.testing.assert_array_equal(m.decision_function(X), [0.25, -0.5, 0.0])
    np.testing.assert_array_equal(m.predict(X), [1.0, -1.0, -1.0])


def test_single_class_model_predicts_its_label():
    """nr_class 1 (a training set with one label): LIBLINEAR's argmax over nr_w = 1 column gives label[0]."""
    m = Model("L2R_L2LOSS_SVC_DUAL", 1, [5], 2, -1.0, np.array([[1.0], [-1.0]]))
    assert m.to_text() == ("solver_type L2R_L2LOSS_SVC_DUAL\nnr_class 1\nlabel 5\nnr_feature 2\nbias -1\nw\n"
                           "1 \n-1 \n")
    np.testing.assert_array_equal(m.predict(np.array([[1.0, 0.0], [0.0, 1.0]])), [5.0, 5.0])


# -- saving -------------------------------------------------------------------------------------------------------

def test_save_is_atomic_and_leaves_no_temp_files(tmp_path):
    model, text = GOLDEN["multiclass"]
    model.save(tmp_path / "m.model")
    model.save(str(tmp_path / "m.model"))          # over an existing file, str path
    assert os.listdir(tmp_path) == ["m.model"]
    assert (tmp_path / "m.model").read_text() == text


@pytest.mark.parametrize("exc", [OSError(28, "No space left on device"), KeyboardInterrupt()])
def test_failed_save_keeps_the_old_file(tmp_path, monkeypatch, exc):
    target = tmp_path / "m.model"
    target.write_text("the old model\n")

    def fail(fd):
        raise exc

    monkeypatch.setattr(os, "fsync", fail)
    with pytest.raises(type(exc)):
        GOLDEN["binary"][0].save(target)
    monkeypatch.undo()
    assert os.listdir(tmp_path) == ["m.model"]
    assert target.read_text() == "the old model\n"


def test_save_into_missing_directory(tmp_path):
    with pytest.raises(OSError):
        GOLDEN["binary"][0].save(tmp_path / "no" / "m.model")
    assert os.listdir(tmp_path) == []


def test_load_round_trips_bit_exactly(tmp_path):
    rng = np.random.default_rng(7)
    n, k = 400, 4
    W = rng.standard_normal((n + 1, k)) * 10.0 ** rng.integers(-300, 300, (n + 1, k))
    W[0, :] = [0.0, -0.0, 5e-324, -1.7976931348623157e308]
    W[1, :] = [1 / 3, 2.2250738585072014e-308, 0.1, -2.2250738585072009e-308]   # smallest normal, largest subnormal
    model = Model("L2R_L1LOSS_SVC_DUAL", k, [7, -3, 0, 2147483647], n, 1.0, W)
    path = tmp_path / "m"
    model.save(path)
    back = load_model(path)
    np.testing.assert_array_equal(bits(back.W), bits(W))
    assert back.label.tolist() == [7, -3, 0, 2147483647]
    assert (back.nr_class, back.nr_feature, back.bias, back.nr_w) == (4, 400, 1.0, 4)
    assert back.to_text() == path.read_text()
    # LIBLINEAR reads the same numbers (strtod of %.17g is exact)
    m = llu.load_model(str(path))
    got = np.ctypeslib.as_array(m.w, shape=((n + 1) * k,)).reshape(n + 1, k)
    np.testing.assert_array_equal(bits(got), bits(W))


def test_load_accepts_crlf_and_missing_final_newline(tmp_path):
    _, text = GOLDEN["multiclass"]
    (tmp_path / "crlf").write_bytes(text.replace("\n", "\r\n").encode())
    (tmp_path / "nonl").write_bytes(text.rstrip("\n").encode())
    for name in ("crlf", "nonl"):
        assert load_model(tmp_path / name).to_text() == text


# -- strict loading -----------------------------------------------------------------------------------------------

VALID = [
    "solver_type L2R_L2LOSS_SVC_DUAL",   # 1
    "nr_class 3",                        # 2
    "label 3 1 2",                       # 3
    "nr_feature 2",                      # 4
    "bias 1",                            # 5
    "w",                                 # 6
    "0.5 -1 2 ",                         # 7
    "0.25 0 -3 ",                        # 8
    "1 2 3 ",                            # 9 (the bias weights)
]


def variant(replace=None, drop=None, insert=None, append=None):
    lines = list(VALID)
    for i, text in (replace or {}).items():
        lines[i - 1] = text
    if drop:
        del lines[drop - 1]
    if insert:
        at, text = insert
        lines.insert(at - 1, text)
    if append:
        lines.extend(append)
    return "\n".join(lines) + "\n"


def test_valid_base_loads(tmp_path):
    p = tmp_path / "m"
    p.write_text(variant())
    m = load_model(p)
    assert (m.nr_class, m.nr_feature, m.bias, m.label.tolist()) == (3, 2, 1.0, [3, 1, 2])
    np.testing.assert_array_equal(m.W, [[0.5, -1, 2], [0.25, 0, -3], [1, 2, 3]])
    assert llu.load_model(str(p)) is not None


MALFORMED = {
    # name: (text, line named, words in the message)
    "unknown_solver": (variant(replace={1: "solver_type L2R_FOO"}), 1, ["solver type", "L2R_FOO"]),
    "solver_number": (variant(replace={1: "solver_type 1"}), 1, ["solver type"]),
    "no_solver": (variant(drop=1), 5, ["solver_type"]),
    "no_nr_class": (variant(drop=2), 5, ["nr_class"]),
    "no_nr_feature": (variant(drop=4), 5, ["nr_feature"]),
    "no_bias": (variant(drop=5), 5, ["bias"]),
    "no_label": (variant(drop=3), 5, ["label"]),
    "no_w": (variant(drop=6), 6, ["unknown text in model file: [0.5]"]),
    "label_count_low": (variant(replace={3: "label 3 1"}), 3, ["'label' lists 2 labels for nr_class 3"]),
    "label_count_high": (variant(replace={3: "label 3 1 2 4"}), 3, ["'label' lists 4 labels for nr_class 3"]),
    "label_not_integer": (variant(replace={3: "label 3 1 2.5"}), 3, ["labels must be integers (found '2.5')"]),
    "label_word": (variant(replace={3: "label 3 one 2"}), 3, ["labels must be integers (found 'one')"]),
    "nr_class_word": (variant(replace={2: "nr_class three"}), 2, ["nr_class"]),
    "nr_class_zero": (variant(replace={2: "nr_class 0"}), 2, ["nr_class"]),
    "nr_feature_negative": (variant(replace={4: "nr_feature -2"}), 4, ["nr_feature"]),
    "nr_feature_float": (variant(replace={4: "nr_feature 2.0"}), 4, ["nr_feature"]),
    "nr_feature_int_overflow": (variant(replace={4: "nr_feature 2147483648"}), 4, ["nr_feature"]),
    "bias_word": (variant(replace={5: "bias one"}), 5, ["bias"]),
    "bias_nan": (variant(replace={5: "bias nan"}), 5, ["bias"]),
    "duplicate_key": (variant(insert=(3, "nr_class 3")), 3, ["nr_class"]),
    "unknown_key": (variant(insert=(2, "foo 1")), 2, ["unknown text in model file: [foo]"]),
    "unknown_key_late": (variant(insert=(6, "weights_follow")), 6, ["unknown text in model file: [weights_follow]"]),
    "w_with_text": (variant(replace={6: "w 0.5"}), 6, ["w"]),
    "too_few_values": (variant(replace={8: "0.25 0 "}), 8, ["expected 3 weights, found 2"]),
    "too_many_values": (variant(replace={8: "0.25 0 -3 4 "}), 8, ["expected 3 weights, found 4"]),
    "empty_weight_line": (variant(replace={8: ""}), 8, ["expected 3 weights, found 0"]),
    "non_numeric": (variant(replace={8: "0.25 abc -3 "}), 8, ["a weight is not a number (found 'abc')"]),
    "comma_decimal": (variant(replace={7: "0,5 -1 2 "}), 7, ["0,5"]),
    "underscore_digits": (variant(replace={9: "1_5 2 3 "}), 9, ["1_5"]),
    "nan_weight": (variant(replace={8: "0.25 nan -3 "}), 8, ["NaN"]),
    "inf_weight": (variant(replace={7: "0.5 -inf 2 "}), 7, ["infinite"]),
    "truncated": (variant(drop=9), 9, ["expected 3 weight lines, found 2"]),
    "truncated_in_header": (variant()[:variant().index("\nw\n")], 5, ["truncated"]),
    "extra_line": (variant(append=["4 5 6 "]), 10, ["expected 3 weight lines, found 4"]),
    "extra_text": (variant(append=["", "trailing text"]), 10, ["expected 3 weight lines"]),
    "empty_file": ("", 1, []),
}


@pytest.mark.parametrize("name", sorted(MALFORMED))
def test_malformed_model_rejected_with_line(tmp_path, name):
    text, line, words = MALFORMED[name]
    p = tmp_path / "bad.model"
    p.write_text(text)
    with pytest.raises(ModelFormatError) as ei:
        load_model(p)
    msg = str(ei.value)
    assert msg.startswith(f"{p}:{line}: "), msg
    for w in words:
        assert w in msg, msg
    assert isinstance(ei.value, llsvm.LLSVMError)


def test_missing_model_file(tmp_path):
    with pytest.raises(ModelFormatError) as ei:
        load_model(tmp_path / "nope.model")
    assert str(ei.value).startswith(f"can't open model file {tmp_path / 'nope.model'}")
    with pytest.raises(ModelFormatError) as ei:
        load_model(tmp_path)                       # a directory
    assert str(ei.value).startswith(f"can't open model file {tmp_path}")


@pytest.mark.parametrize("nr_feature,bias,nr_class", [(2_000_000_000, "-1", 2), (2147483647, "1", 2),
                                                      (1_000_000_000, "-1", 1000)])
def test_huge_header_fails_fast_without_allocating(tmp_path, nr_feature, bias, nr_class):
    labels = " ".join(str(i) for i in range(nr_class))
    text = (f"solver_type L2R_L2LOSS_SVC_DUAL\nnr_class {nr_class}\nlabel {labels}\nnr_feature {nr_feature}\n"
            f"bias {bias}\nw\n" + "0.5 " * (1 if nr_class == 2 else nr_class) + "\n")
    p = tmp_path / "huge.model"
    p.write_text(text)
    tracemalloc.start()
    t0 = time.process_time()     # CPU seconds: time spent waiting for a busy machine's cores does not count
    try:
        with pytest.raises(ModelFormatError) as ei:
            load_model(p)
        cpu = time.process_time() - t0
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert cpu < 0.2             # 0.4-4.4 ms measured (1000 labels the most); a pass over 1e9 features, far more
    assert peak < 4 << 20
    assert str(ei.value).startswith(f"{p}:6: ")


@pytest.mark.parametrize("data,offset", [(b"\x89PNG\r\n\x1a\n" + bytes(range(256)), 0),
                                         (b"solver_type L2R_L2LOSS_SVC_DUAL\nnr_class 2\n\xff\xfe", 43),
                                         (bytes(range(256)) * 16, 128)])
def test_binary_file_rejected(tmp_path, data, offset):
    p = tmp_path / "bin.model"
    p.write_bytes(data)
    with pytest.raises(ModelFormatError) as ei:
        load_model(p)
    msg = str(ei.value)
    assert msg.startswith(f"{p}")
    assert f"non-ASCII byte at offset {offset}" in msg


def test_ascii_control_bytes_rejected_with_line(tmp_path):
    p = tmp_path / "ctl.model"
    p.write_bytes(b"\x00\x01\x02\x03 junk\nmore\n")
    with pytest.raises(ModelFormatError) as ei:
        load_model(p)
    assert str(ei.value) == f"{p}:1: a control character '\\x00' in the model file"


@pytest.mark.parametrize("text, line, message", [
    ("solver_type L2R_L2LOSS_SVC_DUAL\nnr_class\x1c2\n", 2, "a control character '\\x1c' in the model file"),
    ("solver_type L2R_L2LOSS_SVC_DUAL\nnr_class 2\nlabel 99999999999999999999 -1\n", 3,
     "label 99999999999999999999 is beyond the int64 range (llsvm's class labels are 64-bit integers)"),
    ("solver_type L2R_L2LOSS_SVC_DUAL\nnr_class 2\nlabel 9223372036854775808 -1\n", 3,
     "label 9223372036854775808 is beyond the int64 range (llsvm's class labels are 64-bit integers)"),
    ("solver_type L2R_L2LOSS_SVR\nnr_class 3\nnr_feature 1\nbias -1\nw\n1 2 3\n", 2,
     "nr_class 3 for L2R_L2LOSS_SVR, whose models have nr_class 2"),
    ("solver_type ONECLASS_SVM\nnr_class 2147483647\nnr_feature 0\nbias -1\nrho 0\nw\n", 2,
     "nr_class 2147483647 for ONECLASS_SVM, whose models have nr_class 2"),
], ids=["control-separator", "label-beyond-int64", "label-beyond-int", "svr-3-classes", "one-class-huge"])
def test_fuzzer_findings_are_refused_at_their_line(tmp_path, text, line, message):
    """What the fuzzer found the model loader accepted or crashed on (fuzz/regressions.py has the same inputs)."""
    p = tmp_path / "f.model"
    p.write_bytes(text.encode())
    with pytest.raises(ModelFormatError) as ei:
        load_model(p)
    assert str(ei.value) == f"{p}:{line}: {message}"


# -- interoperability with liblinear-official ---------------------------------------------------------------------

@pytest.fixture(scope="module")
def sets(shared_plain):
    """{name: (path, y, X as scipy CSR as LIBLINEAR's reader gives it)} for heart_scale and dna.scale."""
    out = {}
    for name in ("heart_scale", "dna.scale"):
        path = shared_plain(name)
        y, x = llu.svm_read_problem(str(path), return_scipy=True)
        out[name] = (path, y, x)
    return out


def ll_predict(model, y, x):
    labels, _, values = llu.predict(y, x, model, "-q")
    return np.array(labels), np.array(values)


@pytest.mark.filterwarnings("ignore::llsvm.ConvergenceWarning")
@pytest.mark.parametrize("name", ["heart_scale", "dna.scale"])
@pytest.mark.parametrize("solver,bias", [(1, -1.0), (2, -1.0), (3, -1.0), (1, 1.0), (3, 1.0)])
def test_liblinear_reads_our_models(sets, tmp_path, name, solver, bias):
    path, y, x = sets[name]
    model = llsvm_fit(str(path), solver=solver, bias=bias)
    mfile = tmp_path / "ours.model"
    model.save(mfile)
    ll = llu.load_model(str(mfile))
    assert ll is not None
    assert (ll.get_nr_class(), ll.get_nr_feature(), ll.bias) == (model.nr_class, model.nr_feature, bias)
    assert ll.get_labels() == model.label.tolist()
    labels, values = ll_predict(ll, y, x)
    ds = llsvm.read_dataset(path)
    np.testing.assert_array_equal(model.predict(ds), labels)
    dec = model.decision_function(ds).reshape(len(y), -1)
    np.testing.assert_allclose(dec, values, rtol=1e-13, atol=1e-13)
    # and LIBLINEAR writes our file back byte for byte
    llu.save_model(str(tmp_path / "again.model"), ll)
    assert (tmp_path / "again.model").read_bytes() == mfile.read_bytes()


CLASSIFIERS = ["-s 0", "-s 1", "-s 2", "-s 3", "-s 4", "-s 5", "-s 6", "-s 7", "-s 1 -B 1", "-s 4 -B 1",
               "-s 6 -B 1 -c 4"]
OTHERS = ["-s 11", "-s 12", "-s 13 -B 1", "-s 21"]


@pytest.mark.parametrize("options", CLASSIFIERS + OTHERS)
@pytest.mark.parametrize("name", ["heart_scale", "dna.scale"])
def test_we_read_liblinear_models(sets, tmp_path, name, options):
    path, y, x = sets[name]
    ll = llu.train(y, x, options + " -q")
    mfile = tmp_path / "ll.model"
    llu.save_model(str(mfile), ll)
    model = load_model(mfile)
    assert model.to_text() == mfile.read_text()
    assert model.nr_class == ll.get_nr_class() and model.nr_feature == ll.get_nr_feature()
    labels, values = ll_predict(ll, y, x)
    ds = llsvm.read_dataset(path)
    np.testing.assert_array_equal(model.predict(ds), labels)
    dec = model.decision_function(ds).reshape(len(y), -1)
    assert dec.shape[1] == model.nr_w
    # liblinearutil.predict returns one value for two classes even for MCSVM_CS (which has two columns)
    np.testing.assert_allclose(dec[:, :values.shape[1]], values, rtol=1e-12, atol=1e-12)


# -- the body readers in C against the token-by-token readers -------------------------------------------------------

BODY_TOKENS = ["1", "-0.5", "+2", "1e3", "1E-3", "2.", ".5", "-.5e+2", "0", "-0", "0.10000000000000001",
               "-2.6190954802559436e-05", "1e999", "inf", "-nan", "1e", ".", "x", "0x1p3", "1.5.2", "1:2", "#"]


def _outcome(path):
    try:
        m = load_model(path)
    except ModelFormatError as exc:
        return str(exc)
    if hasattr(m, "W"):
        return m.to_text(), bits(m.W).tobytes()
    return m.to_text(), bits(m.sv_coef).tobytes(), bits(m.SV.values).tobytes(), m.SV.indices.tobytes()


@pytest.mark.parametrize("kind", ["weights", "svs", "weights in pieces"])
def test_body_readers_match_the_python_readers(tmp_path, monkeypatch, kind):
    """Model files with weight lines (LIBLINEAR) or SV lines (LIBSVM) of every spelling, white space of every kind
    and with or without the final newline: load_model with the C body reader gives what it gives with the C reader
    disabled (every line read by the Python loop): the same arrays bit for bit, or the same error message; and the
    C reader takes most well-formed files itself (read from the file's bytes as load_model holds them: base.ModelText,
    the body cut without a copy, blank lines after it and a missing final newline included; and a LIBLINEAR model
    read in pieces, as large files are, Model.read_streamed)."""
    import llsvm.models.linear as lin
    import llsvm.models.svm as svm
    from llsvm._ext import _libsvm

    import llsvm.models.loader as loader
    calls = {"taken": 0, "streamed": 0}
    pieces = kind == "weights in pieces"
    if kind == "weights in pieces":     # every file read in pieces (Model.read_streamed), pieces of 7 bytes
        monkeypatch.setattr(loader, "STREAM_FROM", -1)
        monkeypatch.setattr(loader, "HEAD", 96)
        monkeypatch.setattr(lin, "PIECE", 7)
        kind = "weights"
        real_streamed = lin.Model.read_streamed.__func__

        def streamed(cls, *a):
            m = real_streamed(cls, *a)
            calls["streamed"] += m is not None
            return m
        monkeypatch.setattr(lin.Model, "read_streamed", classmethod(streamed))
    rng = np.random.default_rng(29)
    seps = [" ", " ", "\t", "\v", "\f", "\r", "  "]
    real = _libsvm.parse_weight_block if kind == "weights" else _libsvm.parse_sv_block

    def counting(*a):
        out = real(*a)
        calls["taken"] += not isinstance(out, int)
        return out
    target = (lin, "parse_weight_block") if kind == "weights" else (svm, "parse_sv_block")
    for trial in range(300):
        good = trial % 3 != 0
        toks = BODY_TOKENS[:12] if good else BODY_TOKENS
        nr_w, rows = int(rng.integers(1, 4)), int(rng.integers(1, 5))
        if kind == "weights":
            head = (f"solver_type L2R_L2LOSS_SVC_DUAL\nnr_class {nr_w if nr_w > 1 else 2}\nlabel "
                    + " ".join(str(i) for i in range(max(nr_w, 2))) + f"\nnr_feature {rows}\nbias -1\nw\n")
            lines = [[str(rng.choice(toks)) for _ in range(nr_w)] for _ in range(rows)]
        else:
            head = (f"svm_type c_svc\nkernel_type rbf\ngamma 0.5\nnr_class 2\ntotal_sv {rows}\nrho 0.25\nlabel 1 -1\n"
                    f"nr_sv {rows} 0\nSV\n")
            lines = []
            for _ in range(rows):
                prev, line = 0, [str(rng.choice(toks))]
                for _ in range(int(rng.integers(0, 4))):
                    prev += int(rng.integers(1, 9))
                    line.append(f"{prev}:{rng.choice(toks)}" if good or rng.random() < 0.5 else
                                str(rng.choice(BODY_TOKENS)))
                lines.append(line)
        if not good and rng.random() < 0.3:
            lines[-1].append(str(rng.choice(BODY_TOKENS)))
        text = head + "".join("".join(t + str(rng.choice(seps)) for t in ln) + "\n" for ln in lines)
        r = rng.random()
        if r < 0.2:
            text = text[:-1]                    # no final newline
        elif r < 0.35:
            text += str(rng.choice(["\n", " \n\n", "\t", "\n\n"]))       # blank lines after the body
        path = tmp_path / "m.model"
        path.write_text(text)
        monkeypatch.setattr(*target, counting)
        fast = _outcome(path)
        monkeypatch.setattr(*target, lambda *a: 0)
        slow = _outcome(path)
        assert fast == slow, (text, fast, slow)
    assert calls["taken"] > 100
    assert not pieces or calls["streamed"] > 50


def test_save_to_a_fifo_writes_into_it(tmp_path):
    """A path that is not a regular file (a FIFO here; /dev/null, a terminal) is written in place: the atomic
    rename would replace the device with a file (`llsvm-predict T M /dev/null` once turned /dev/null into one)."""
    import stat
    import threading

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(open(fifo, "rb").read()), daemon=True)
    reader.start()
    m, text = GOLDEN["binary"]
    m.save(fifo)
    reader.join(5)
    assert got == [text.encode()]
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert sorted(os.listdir(tmp_path)) == ["pipe"]


def test_weights_text_is_printfs_for_every_value():
    """format_weights writes zeros itself ("0 ", "-0 ") and every other value by snprintf: the bytes of C's
    "%.17g " for each (LIBLINEAR's save_model), signed zeros, subnormals and extremes included."""
    from llsvm._ext._libsvm import format_weights
    rng = np.random.default_rng(7)
    vals = np.concatenate([[0.0, -0.0, 5e-324, -5e-324, 1e308, -1e-300, 1.0, -0.5, 2.0 ** 60],
                           rng.standard_normal(200) * 10.0 ** rng.integers(-20, 20, 200), np.zeros(52)])
    W = vals.reshape(-1, 3)
    expect = "".join("".join("%.17g " % v for v in row) + "\n" for row in W).encode()
    assert bytes(format_weights(W, 0, W.shape[0])) == expect
