"""Reproducers of the bugs the fuzzer has found: small inputs built here from valid files, one per bug.

Every fuzzing run puts them in its corpus (so they are checked first), and tests/test_fuzz.py checks each one
with its target's oracle: a case fails until its bug is fixed. Add a case for every new finding.
"""
import struct
from dataclasses import dataclass

import numpy as np

from llsvm import BinaryWriter, CSRDataset

from .mutators import fix_checksums


@dataclass
class Case:
    target: str
    name: str
    bug: str
    build: object          # work -> bytes


def _binary(work, labels=(1.0, -1.0, 1.0)):
    """A valid one-block binary file: rows {0: 1.0}, {1: 2.0}, {0: 0.5, 1: -1.0}."""
    path = work.file("regression-base.bin")
    ds = CSRDataset(np.array(labels), np.array([0, 1, 2, 4]), np.array([0, 1, 0, 1], np.int32),
                    np.array([1.0, 2.0, 0.5, -1.0]), 2)
    with BinaryWriter(path, fsync=False) as w:
        w.write_dataset(ds)
        w.close()
    with open(path, "rb") as f:
        return bytearray(f.read())


def _footer_offset(buf):
    return struct.unpack_from("<Q", buf, 48)[0]


def _header_field(offset, fmt, value):
    def build(work):
        buf = _binary(work)
        struct.pack_into(fmt, buf, offset, value)
        return fix_checksums(buf)
    return build


def _footer_word(word, fmt, value):
    """Set the word-th 8-byte word after the footer magic (labels, then counts, then the block index)."""
    def build(work):
        buf = _binary(work)
        struct.pack_into(fmt, buf, _footer_offset(buf) + 8 + 8 * word, value)
        return fix_checksums(buf)
    return build


def _payload_value(index, value):
    """Set value number `index` of the first block (labels, offsets, indices and values as written)."""
    def build(work):
        buf = _binary(work)
        n, nnz = 3, 4
        values_at = 128 + 48 + 8 * n + 8 * (n + 1) + ((4 * nnz + 7) & ~7)
        struct.pack_into("<d", buf, values_at + 8 * index, value)
        return fix_checksums(buf)
    return build


def _label_in_rows_and_table(work):
    """The first row's label and its footer entry both NaN: the table matches the rows, but a label is NaN."""
    buf = _binary(work)
    nan = float("nan")
    struct.pack_into("<d", buf, 128 + 48, nan)
    struct.pack_into("<d", buf, _footer_offset(buf) + 8, nan)
    return fix_checksums(buf)


def _model(text):
    return lambda work: text


def _options(text):
    """An input of the options target: llsvm-train's option tokens (fuzz/options.py)."""
    return lambda work: text


LINEAR = b"solver_type L2R_L1LOSS_SVC_DUAL\nnr_class 2\nlabel %s\nnr_feature 1\nbias -1\nw\n0.5 \n"

CASES = [
    # binary: crafted fields with valid checksums
    Case("binary", "inflated-n-features", "n_features 2^31 - 1 in a 2-feature file (no declared width) is "
         "accepted; training it sized w by it", _header_field(24, "<Q", 2 ** 31 - 1)),
    Case("binary", "nan-max-sq-norm", "max_sq_norm NaN in the header is accepted", _header_field(64, "<d",
                                                                                               float("nan"))),
    Case("binary", "wrong-max-sq-norm", "max_sq_norm 0 for rows of squared norm 4 is accepted",
         _header_field(64, "<d", 0.0)),
    Case("binary", "wrong-label-count", "a label table whose counts do not match the rows is accepted",
         _footer_word(2, "<Q", 7)),
    Case("binary", "nan-in-label-table", "a NaN label in the footer's table (rows say 1) is accepted",
         _footer_word(0, "<d", float("nan"))),
    Case("binary", "nan-label", "a NaN row label (listed in the table too) is accepted", _label_in_rows_and_table),
    Case("binary", "nan-value", "a NaN feature value is accepted", _payload_value(1, float("nan"))),
    Case("binary", "continuous-flag-with-table", "flag 4 (continuous labels: no table) on a file with a 2-label "
         "table is accepted, the table ignored", _header_field(12, "<I", 4)),
    Case("binary", "block-index-overflow", "a block-index entry >= 2^63 raises OverflowError, not "
         "DataFormatError", _footer_word(4 + 2, "<Q", 2 ** 63)),
    # models
    Case("model", "label-beyond-int64", "a label beyond int64 raises OverflowError, not ModelFormatError",
         _model(LINEAR % b"99999999999999999999 -1")),
    Case("model", "label-beyond-int", "a label beyond C int (LIBLINEAR's label type) is accepted (since issue 45 "
         "llsvm's labels are 64-bit integers: it is, and kept whole)",
         _model(LINEAR % b"2147483648 -1")),
    Case("model", "control-separator", "\\x1c-\\x1f separate tokens (Python's str.split), unlike C's fscanf",
         _model(LINEAR.replace(b"nr_class 2", b"nr_class\x1c2") % b"1 -1")),
    Case("model", "regression-nr-class-3", "a regression model with nr_class 3 is accepted and predicts 3 values "
         "per row", _model(b"solver_type L2R_L2LOSS_SVR\nnr_class 3\nnr_feature 1\nbias -1\nw\n1 2 3 \n")),
    Case("model", "one-class-huge-nr-class", "a one-class model with nr_class 2^31 - 1 and no weights is accepted; "
         "predicting 3 rows allocates 48 GiB", _model(b"solver_type ONECLASS_SVM\nnr_class 2147483647\n"
                                                       b"nr_feature 0\nbias -1\nrho 0\nw\n")),
    # options (llsvm-train's option values, issue 27)
    Case("options", "s7-weight-zero", "-s 7 -w1 0 writes NaN weights (C = 0 for the class), which predict refuses",
         _options(b"-s 7 -w1 0")),
    Case("options", "s7-huge-C", "-s 7 -c 1e308 writes NaN weights", _options(b"-s 7 -c 1e308")),
    Case("options", "s21-nu-one", "-s 21 -n 1 writes rho inf", _options(b"-s 21 -n 1")),
    Case("options", "free-bias-subnormal", "-s local1d -B 1e-320 writes w_(n+1) = b / B = inf",
         _options(b"-s local1d -B 1e-320")),
    Case("options", "degree-beyond-int", "-d 2147483648: internal error (OverflowError)",
         _options(b"-s smo -t 1 -d 2147483648")),
    Case("options", "sigma-underflow", "--sigma 1e-320: internal error (ZeroDivisionError)",
         _options(b"-s olsvm --sigma 1e-320")),
    Case("options", "grid-sigma-underflow", "--grid sigma=1e-320: internal error (ZeroDivisionError)",
         _options(b"-s olsvm -v 2 --grid sigma=1e-320")),
    Case("options", "grid-N-huge", "--grid C=1:10:99999999999999999999999: internal error (numpy's size limit)",
         _options(b"-s pegaz -v 2 --grid C=1:10:99999999999999999999999")),
    Case("options", "epochs-beyond-long", "--epochs 99999999999999999999: internal error (OverflowError)",
         _options(b"-s olsvm --epochs 99999999999999999999")),
    Case("options", "batch-beyond-long", "-k 99999999999999999999: internal error (OverflowError)",
         _options(b"-s pegasos -k 99999999999999999999")),
    Case("options", "pegasos-huge-C", "-s pegasos -c 1e308: internal error (lambda = 1/(C l) = 0)",
         _options(b"-s pegasos -c 1e308")),
    Case("options", "max-iter-beyond-long", "--max-iter 99999999999999999999: internal error (OverflowError)",
         _options(b"-s 5 --max-iter 99999999999999999999")),
    Case("options", "inner-iter-beyond-int", "--inner-iter 2147483648: internal error (OverflowError)",
         _options(b"-s llsvm --inner-iter 2147483648")),
    Case("options", "threads-beyond-int", "--threads 2147483648: internal error (OverflowError)",
         _options(b"-s smo --threads 2147483648")),
    Case("options", "memory-beyond-cache", "-s streamsvm --memory 1000T: internal error (a cache of 2^31 rows)",
         _options(b"-s streamsvm --memory 1000T")),
    Case("options", "solver-double-minus", "-s --5: internal error (int('--5'), found by the fuzzer)",
         _options(b"-s --5 -B R")),
    Case("options", "cv-empty-fold", "-s pegaz -v 8 on 7 rows per class: an empty fold's zero rows could not be "
         "predicted (internal error, found by the fuzzer)", _options(b"-s pegaz -v 8 @three")),
]
