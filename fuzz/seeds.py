"""Seed corpora, generated from valid small data sets and models (nothing is checked in), and the token
dictionaries libFuzzer splices into inputs.

``seeds(target, work)`` returns {name: bytes}. Text seeds are LIBSVM files written by llsvm's own formatter and by
hand (qid, comments, CRLF, blanks, 0-based, float32 edges, a missing final newline), plus compressed copies.
Binary seeds are files written by BinaryWriter with float64/float32 values, one or several blocks, row ids,
alpha, no rows, a wide n_features. Model seeds are models trained by llsvm (-s 1, 2, 3; two and three classes;
with and without bias), a hashed model, LIBLINEAR-format models of the kinds llsvm only reads
(regression, one-class with rho, Crammer-Singer), and LIBSVM kernel models (every svm_type family and kernel).
"""
import bz2
import gzip
import io
import lzma
import warnings

import numpy as np
import scipy.sparse as sp

from llsvm import BinaryWriter, CSRDataset, Model, train
from llsvm.models.svm import SVMModel
from llsvm.textio import write_text

from . import mutators, options


def _random_csr(rng, n_rows, n_features, density, labels, float32=False):
    rows, indices, values = [0], [], []
    for _ in range(n_rows):
        cols = np.flatnonzero(rng.random(n_features) < density)
        indices.extend(cols.tolist())
        vals = rng.standard_normal(cols.size) * 10.0 ** rng.integers(-3, 4, cols.size)
        values.extend(vals.tolist())
        rows.append(len(indices))
    y = rng.choice(np.asarray(labels, np.float64), n_rows)
    vals = np.asarray(values, np.float32 if float32 else np.float64)
    return CSRDataset(y, np.asarray(rows, np.int64), np.asarray(indices, np.int32), vals, n_features)


def _text(ds, zero_based=False):
    out = io.BytesIO()
    write_text(ds, out, zero_based=zero_based)
    return out.getvalue()


def text_seeds():
    rng = np.random.default_rng(13)
    two = _text(_random_csr(rng, 6, 9, 0.4, [1, -1]))
    seeds = {
        "two-class": two,
        "multiclass": _text(_random_csr(rng, 8, 6, 0.5, [1, 2, 3, 7])),
        "zero-based": _text(_random_csr(rng, 4, 5, 0.6, [0, 1]), zero_based=True),
        "float32": _text(_random_csr(rng, 4, 5, 0.6, [1, -1], float32=True)),
        "regression": _text(_random_csr(rng, 5, 4, 0.5, [0.25, -3.5, 1e10, 2.0, 7.125])),
        "hand": (b"+1 qid:3 1:0.5 3:-2 7:1e-3 # a comment\r\n"
                 b"\n"
                 b"# a comment line\n"
                 b"-1\t2:.5\v4:-0.25e+2\f10:3.\r\n"
                 b"  2 qid:0 # only a qid\n"
                 b"-0 1:-0 2147483647:1\n"
                 b"1e0 5:3.4028234663852886e38 6:1.4e-45 8:4.9e-324#tail\n"
                 b"3 1:1"),
        "long-digits": (b"1 1:0.1000000000000000055511151231257827021181583404541015625 "
                        b"2:123456789012345678901234e-30\n"),
        "edges": b"-1 2147483646:2 2147483647:-1\n+1 1:1.7976931348623157e308 2:-1e-400\n",
    }
    seeds["two-class.gz"] = gzip.compress(two, mtime=0)
    seeds["two-class.bz2"] = bz2.compress(two)
    seeds["two-class.xz"] = lzma.compress(two)
    return seeds


def binary_seeds(work):
    rng = np.random.default_rng(13)
    seeds = {}

    def write(name, datasets, n_features=None, n_qid=None, **kw):
        path = work.file(name)
        with BinaryWriter(path, fsync=False, **kw) as w:
            for ds in datasets:
                w.write_dataset(ds)
            w.close(n_features=n_features, n_qid=n_qid)
        with open(path, "rb") as f:
            seeds[name] = f.read()

    write("one-block", [_random_csr(rng, 5, 7, 0.4, [1, -1])])
    write("blocks", [_random_csr(rng, 9, 6, 0.5, [1, 2, 3])], block_rows=2, n_qid=4)
    write("float32", [_random_csr(rng, 5, 5, 0.5, [0, 1], float32=True)], float32=True, block_rows=3)
    ds = _random_csr(rng, 4, 6, 0.5, [1, -1])
    ds.row_ids = np.array([3, 0, 7, 1], np.int64)
    write("row-ids", [ds], row_ids=True, block_rows=2)
    ds = _random_csr(rng, 4, 5, 0.5, [1, -1])
    ds.row_ids = np.arange(4, dtype=np.int64)
    ds.alpha = np.array([0.0, 0.5, 1.0, 0.25])
    write("active-set", [ds], row_ids=True, alpha=True, block_rows=3)
    write("empty", [])
    write("wide", [_random_csr(rng, 3, 4, 0.7, [2, 5])], n_features=1024)
    write("empty-rows", [CSRDataset(np.array([1.0, -1.0, 1.0]), np.zeros(4, np.int64), np.empty(0, np.int32),
                                    np.empty(0), 0)])
    return seeds


def model_seeds(work):
    rng = np.random.default_rng(13)
    seeds = {}
    two = _random_csr(rng, 12, 5, 0.6, [1, -1])
    three = _random_csr(rng, 15, 4, 0.6, [1, 2, 3])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")             # the iteration limit: any model will do
        for solver in (1, 2, 3):
            for bias in (-1, 1):
                m = train(two, solver=solver, bias=bias, max_iter=20)
                seeds[f"s{solver}-B{bias}-two"] = m.to_text().encode()
        seeds["s3-three"] = train(three, solver=3, bias=1, max_iter=20).to_text().encode()
    W = rng.standard_normal((9, 1))
    seeds["hashed"] = Model("L2R_L1LOSS_SVC_DUAL", 2, [1, -1], 8, 1.0, W, hash_bits=3).to_text().encode()
    seeds["svr"] = Model("L2R_L2LOSS_SVR", 2, None, 3, -1, rng.standard_normal((3, 1))).to_text().encode()
    seeds["one-class"] = Model("ONECLASS_SVM", 2, None, 2, -1, rng.standard_normal((2, 1)),
                               rho=0.5).to_text().encode()
    seeds["mcsvm"] = Model("MCSVM_CS", 2, [4, 9], 2, 1.0, rng.standard_normal((3, 2))).to_text().encode()
    # LIBSVM kernel models (llsvm/models/svm.py), as svm_save_model writes them
    SV = sp.csr_matrix(np.where(rng.random((6, 4)) < 0.6, rng.standard_normal((6, 4)), 0.0))
    seeds["libsvm-c_svc-rbf-three"] = SVMModel(
        "c_svc", "rbf", 3, 0.25, 0, rng.standard_normal(3), rng.standard_normal((2, 6)), SV, label=[1, 2, 3],
        nSV=[2, 3, 1], probA=rng.standard_normal(3), probB=rng.standard_normal(3)).to_text().encode()
    seeds["libsvm-nu_svc-poly"] = SVMModel("nu_svc", "polynomial", 3, 0.5, 1.0, [0.1], rng.standard_normal((1, 6)), SV,
                                           label=[-1, 1], nSV=[4, 2]).to_text().encode()
    seeds["libsvm-one_class-sigmoid"] = SVMModel(
        "one_class", "sigmoid", 3, 0.1, -0.5, [0.2], rng.standard_normal((1, 6)), SV,
        prob_density_marks=np.sort(rng.standard_normal(10))).to_text().encode()
    seeds["libsvm-epsilon_svr-linear"] = SVMModel("epsilon_svr", "linear", 3, 0, 0, [0.3],
                                                  rng.standard_normal((1, 6)), SV, probA=[0.7]).to_text().encode()
    seeds.update(trained_kernel_and_tree_seeds(rng))
    return seeds


def long_integer_models(seeds):
    """Models with one header integer 5,000 digits long (issue 44: beyond Python's int() limit of 4,300 digits,
    once an internal error), from model_seeds' `seeds`: every integer of the headers of a two-class and a
    three-class linear model, the hashed model, a three-class and a polynomial LIBSVM model, and a tree model, as
    5,000 nines (refused, naming the line), and the first of the label and nr_sv lines with 5,000 leading zeros
    (the same model, as C reads it).

    Not seeds of the fuzzer: its model inputs are at most 4096 bytes (the runner's --max-len), which would cut
    them, and 4 KB inputs slowed the model target down threefold; the target widens a token of its inputs itself
    (fuzz.targets.check_long_integers). tests/test_fuzz.py checks these with the model oracle."""
    out = {}
    for name in ("s1-B1-two", "s3-three", "hashed", "libsvm-c_svc-rbf-three", "libsvm-nu_svc-poly", "h1tree-two"):
        data = seeds[name]
        for k, span in enumerate(mutators.integer_tokens(data, header_only=True)):
            out[f"{name}-long-{k}"] = mutators.widen_integer(data, span, "nines")
        for key in (b"\nlabel ", b"\nnr_sv "):
            at = data.find(key)
            if at >= 0 and not name.startswith("h1tree"):
                span = next(sp for sp in mutators.integer_tokens(data) if sp[0] > at)
                out[f"{name}-zeros-{key.strip().decode()}"] = mutators.widen_integer(data, span, "zeros")
    return out


def trained_kernel_and_tree_seeds(rng):
    """Kernel models trained by -s smo and an online solver, and tree models of -s h1tree (two and three classes,
    leaves, an RBF node, a zero-node list), as llsvm-train writes them."""
    from llsvm.options import H1Options
    from llsvm.options import OnlineOptions
    from llsvm.options import SMOOptions
    seeds = {}
    two = _random_csr(rng, 16, 5, 0.6, [1, -1])
    three = _random_csr(rng, 18, 6, 0.6, [2, 1, 3])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        seeds["smo-rbf-three"] = train(three, solver="smo").to_text().encode()
        seeds["smo-poly-two"] = train(two, solver="smo", options=SMOOptions(kernel_type=1, gamma=0.5,
                                                                             coef0=1.0)).to_text().encode()
        seeds["olsvm-two"] = train(two, solver="olsvm", options=OnlineOptions(epochs=2)).to_text().encode()
        seeds["h1tree-two"] = train(two, solver="h1tree").to_text().encode()
        seeds["h1tree-three"] = train(three, solver="h1tree").to_text().encode()
        seeds["h1tree-rbf-three"] = train(three, solver="h1tree",
                                          options=H1Options(rbf_depth=1)).to_text().encode()
        seeds["h1tree-rbf-only"] = train(two, solver="h1tree", options=H1Options(rbf_depth=0)).to_text().encode()
    return seeds


def seeds(target, work):
    if target == "text":
        return text_seeds()
    if target == "binary":
        return binary_seeds(work)
    if target == "model":
        return model_seeds(work)
    if target == "options":
        return options.seeds()
    if target == "selftest":
        return {"fine": b"fine", "crash": b"CRASH", "hang": b"HANG", "alloc": b"ALLOC"}
    raise KeyError(target)


# libFuzzer dictionaries: tokens it inserts and swaps in
DICTIONARIES = {
    "text": [b" ", b"\t", b"\r\n", b"\n", b"\v", b"\f", b"#", b":", b"qid:", b"qid:0", b"+", b"-", b".", b"e",
             b"E-", b"e+", b"0", b"1", b"-1", b"+1", b"nan", b"inf", b"Infinity", b"0x1p3", b"1_0",
             b"2147483647", b"2147483646", b"2147483648", b"4294967297", b"99999999999", b"1e308", b"1e309",
             b"-1e-400", b"4.9e-324", b"3.4028235e38", b"3.4028236e38", b"3.5e38", b"1.7976931348623157e308",
             b"9007199254740993", b"0.1000000000000000055511151231257827", b"\x00", b"\xff",
             b"\x1f\x8b", b"BZh", b"\xfd7zXZ\x00", b"LLSVMBIN"],
    "binary": [b"LLSVMBIN", b"LLSVMBLK", b"LLSVMFTR", b"\x01\x00\x00\x00", b"\x02\x00\x00\x00",
               b"\x04\x00\x00\x00", b"\x08\x00\x00\x00", b"\x10\x00\x00\x00", b"\xff\xff\xff\x7f",
               b"\x00\x00\x00\x80", b"\xff\xff\xff\xff\xff\xff\xff\xff", b"\x00\x00\x00\x00\x00\x00\xf8\x7f",
               b"\x00\x00\x00\x00\x00\x00\xf0\x7f", b"\x00\x00\x00\x00\x00\x00\xf0\xff", b"\x00\x00\xc0\x7f",
               b"\x00\x00\x00\x00\x00\x00\xf0\x3f", b"\x00\x00\x00\x00\x00\x00\xf0\xbf"],
    "model": [b"solver_type ", b"nr_class ", b"label ", b"nr_feature ", b"bias ", b"rho ", b"w\n",
              b"llsvm_hashed_model 1\n", b"hash fmix32-signed ", b"svm_type", b"llsvm_tree_model",
              b"svm_type c_svc\n", b"kernel_type ", b"degree ", b"gamma ", b"coef0 ", b"total_sv ", b"probA ",
              b"probB ", b"prob_density_marks ", b"nr_sv ", b"SV\n", b"nu_svc", b"one_class", b"epsilon_svr",
              b"nu_svr", b"linear", b"polynomial", b"rbf", b"sigmoid", b"precomputed", b"1:", b"0:",
              b"L2R_LR", b"L2R_L2LOSS_SVC_DUAL", b"L2R_L2LOSS_SVC", b"L2R_L1LOSS_SVC_DUAL", b"MCSVM_CS",
              b"L1R_L2LOSS_SVC", b"L1R_LR", b"L2R_LR_DUAL", b"L2R_L2LOSS_SVR", b"L2R_L2LOSS_SVR_DUAL",
              b"L2R_L1LOSS_SVR_DUAL", b"ONECLASS_SVM", b"2147483647", b"2147483648", b"-2147483649",
              b"9223372036854775808", b"28", b"29", b"0", b"-1", b"nan", b"inf", b"1e309", b"0x1p3", b"1_0",
              b"\r\n", b"\t", b"\v", b"\x1c", b"\x1f", b"\x00", b"\x85", b"\xa0",
              # tree models (-s h1tree)
              b"llsvm_tree_model 1\n", b"solver_type H1_TREE\n", b"multiclass ovo\n", b"h1_c ", b"nr_tree ",
              b"tree ", b" nr_node ", b" final leaf ", b" final rbf", b"node hard ", b" b ", b" w ", b"rbf_model\n",
              b"65536", b"65537"],
    "options": options.dictionary(),
    "selftest": [],
}


def dictionary_text(target):
    """The dictionary in libFuzzer's file format: one quoted token per line, bytes as \\xNN escapes."""
    def quote(tok):
        return '"' + "".join(chr(b) if 0x20 <= b < 0x7F and b not in b'"\\' else f"\\x{b:02x}" for b in tok) + '"'
    return "".join(quote(t) + "\n" for t in DICTIONARIES[target])
