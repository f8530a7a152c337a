#!/usr/bin/env python3
"""Deterministic generator of synthetic LIBSVM-format datasets.

Usage::

    python scripts/gen_data.py KIND --out PATH [--rows N] [--features D]
        [--nnz-per-row K] [--classes C] [--seed S]
        [--test-out PATH --test-rows N] [--check] [-q]

KIND is one of:

``sparse``
    "Text-like" binary set (default 500,000 x 100,000, ~75 nnz/row).  Each
    row is a bag of tokens drawn from a Zipf-like (1/(rank+c)) feature
    distribution; repeated tokens become term frequencies, values are
    ``(1 + ln tf) * idf`` and every row is scaled to unit L2 norm.  Labels
    are ``sign(w* . x + b + noise)`` for a hidden sparse ``w*``, with a few
    percent of labels flipped.
``dense``
    400,000 x 200, every feature present in every row, Gaussian values with
    per-feature offset/scale, each row scaled by 1/sqrt(200) (norm about 1);
    labels from a hidden dense linear model + noise.
``multiclass``
    Like ``sparse`` with 10 classes (200,000 x 50,000, ~75 nnz/row); the
    class is the argmax of K hidden linear scores + noise.
``demo``
    Small binary sparse set (2,000 x 1,000, ~20 nnz/row).
``chessboard``
    Kecman and Melki's chess board (the paper gives no generator; this one is fixed here, docs/solvers.md's
    reproduce-online section): x uniform on [0, 4]^2, y = +1 when floor(x1) + floor(x2) is even, else -1 (a 4 x 4
    board); 8,000 rows (the paper's; 4,992 for its Figs. 5-8 with ``--rows``). Labels come from the written
    (rounded) coordinates; no label noise.
``gaussians``
    Their two normally distributed classes: N(0, I_2) against N((2, 2), I_2), equal priors, 15,000 rows; the
    label is the class the row was drawn from (the classes overlap: the Bayes error is about 7.9 %).

With ``--classes 2`` labels are written as ``+1``/``-1``; with more classes
they are ``1``..``C`` (this holds for every kind).

Output format: ``label index:value ...\\n`` with 1-based, strictly increasing
indices, values with at most 6 significant digits written as plain decimals
(``0.0429537``, ``1.5``, ``-0.25``), no trailing blanks.  The largest index
(``features``) always occurs at least once in every file, so tools that infer
the dimensionality from the data see exactly ``features``.

Determinism: all randomness comes from ``numpy.random.default_rng`` seeded
with children of ``SeedSequence([seed, kind])`` (hidden model, calibration
sample, training rows, test rows), never from global state, so the same
arguments give the same bytes on every run.  Model quantities computed with
transcendental ufuncs (whose SIMD implementations differ in the last ulp
between numpy versions / CPUs) are rounded to a coarse grid and the values
are otherwise built from IEEE-exact arithmetic, so the bytes also match
across numpy versions (checked: 1.24 vs 2.4, AVX-512 vs scalar paths) as long
as numpy keeps the ``Generator`` bit streams (not formally guaranteed).  The
hidden model does not depend on ``--rows``, and the training file does not
depend on whether ``--test-out`` is given.

Speed/memory: rows are generated, formatted and written in batches; the text
of a batch is built with vectorised numpy digit arithmetic into a
fixed-width byte matrix whose padding (0 bytes) is then squeezed out.
Output goes to a temporary file in the target directory that is
``os.replace``-d onto the final path only when complete.

The module can be imported: ``from gen_data import generate``.
"""

from __future__ import annotations

import argparse
import hashlib
import math
import os
import signal
import sys
import tempfile
import time

import numpy as np

__all__ = ["generate", "KINDS", "format_libsvm_batch"]

# --------------------------------------------------------------------------
# Defaults
# --------------------------------------------------------------------------

KINDS = {
    "sparse": dict(rows=500_000, features=100_000, nnz_per_row=75, classes=2),
    "dense": dict(rows=400_000, features=200, nnz_per_row=None, classes=2),
    "multiclass": dict(rows=200_000, features=50_000, nnz_per_row=75, classes=10),
    "demo": dict(rows=2_000, features=1_000, nnz_per_row=20, classes=2),
    "chessboard": dict(rows=8_000, features=2, nnz_per_row=None, classes=2),
    "gaussians": dict(rows=15_000, features=2, nnz_per_row=None, classes=2),
}
GEOMETRIC = ("chessboard", "gaussians")     # two features, labels from the geometry (no hidden linear model)

_KIND_CODE = {"sparse": 1, "dense": 2, "multiclass": 3, "demo": 4, "chessboard": 5, "gaussians": 6}

# Model / noise parameters.  Tuned so that LinearSVC (C=1) reaches ~90% test
# accuracy on the default `sparse` set (train ~96%: learnable, not separable).
ZIPF_OFFSET = 5.0        # p(rank r) ~ 1/(r + c): tempers the head of the Zipf law
ROW_LEN_SIGMA = 0.5      # lognormal sigma of the row length (distinct features)
W_DENSITY = 0.2          # fraction of features with a non-zero hidden weight
W_IDF_POWER = 2          # hidden weight scale ~ idf^-p (integer p): signal
                         # mostly on common features (p=0: much harder set)
SCORE_NOISE = 0.1        # Gaussian noise on the hidden score, x std(score)
LABEL_FLIP = 0.02        # fraction of labels replaced by a random (other) label
TARGET_BATCH_NNZ = 1_500_000   # non-zeros per generated batch (memory bound)
CALIB_ROWS = 20_000      # rows of the calibration sample (bias / balance)

_POW10_F = 10.0 ** np.arange(0, 23)
_POW10_I = 10 ** np.arange(0, 19, dtype=np.int64)
_MAX_FRAC = 10           # at most 10 decimals: |x| < 5e-11 prints as "0"


# --------------------------------------------------------------------------
# Vectorised LIBSVM text formatting
# --------------------------------------------------------------------------

def _digits_le(x, ndig):
    """Decimal digits of non-negative int64 array ``x``, least significant
    first, as a list of ``ndig`` uint8 arrays."""
    out = []
    r = x
    for _ in range(ndig):
        q = r // 10
        out.append((r - q * 10).astype(np.uint8))
        r = q
    return out


def _ndigits(maxval):
    return max(1, len(str(int(maxval))))


def _round_sig6(values):
    """Round |values| to 6 significant digits (at most ``_MAX_FRAC``
    decimals) and split them into (integer part, fractional part as an
    integer with ``nfrac`` digits, nfrac, 6-digit mantissa)."""
    a = np.abs(values)
    # decimal exponent via comparisons (exact, no log10 rounding issues)
    thresholds = _POW10_F[1:] / 1e11   # 1e-10 .. 1e11
    e = np.searchsorted(thresholds, a, side="right").astype(np.int64) - 11
    # a in [10^e, 10^(e+1)) (e = -11 for a < 1e-10); six digits -> 5-e decimals
    F = np.clip(5 - e, 0, _MAX_FRAC)
    q = np.rint(a * _POW10_F[F]).astype(np.int64)
    # rounding up to 1000000 (e.g. 0.9999996): one decimal less
    over = (q >= 1_000_000) & (F > 0)
    if over.any():
        F[over] -= 1
        q[over] = np.rint(a[over] * _POW10_F[F[over]]).astype(np.int64)
    p = _POW10_I[F]
    ipart = q // p
    fpart = q - ipart * p
    nfrac = int(F.max()) if F.size else 0
    if nfrac:
        fpart *= _POW10_I[nfrac - F]
    return ipart, fpart, nfrac, q


def format_libsvm_batch(indptr, indices, values, label_ids, label_strings):
    """Format a CSR batch as LIBSVM text and return it as bytes.

    indptr: int array (nrows+1), starting at 0, every row non-empty.
    indices: 0-based feature indices, strictly increasing within a row.
    values: float64 values.
    label_ids: int array (nrows) indexing ``label_strings``.
    """
    indptr = np.asarray(indptr, dtype=np.int64)
    nrows = indptr.size - 1
    n = int(indptr[-1])
    if nrows == 0:
        return b""
    if np.any(np.diff(indptr) <= 0):
        raise ValueError("every row needs at least one non-zero")

    lab_w = max(len(s) for s in label_strings)
    lab_tab = np.zeros((len(label_strings), lab_w), dtype=np.uint8)
    for i, s in enumerate(label_strings):
        b = s.encode("ascii")
        lab_tab[i, lab_w - len(b):] = np.frombuffer(b, dtype=np.uint8)

    idx1 = np.asarray(indices, dtype=np.int64) + 1
    di = _ndigits(idx1.max())
    ipart, fpart, nfrac, _ = _round_sig6(np.asarray(values, dtype=np.float64))
    dint = _ndigits(ipart.max())
    neg = (np.asarray(values) < 0) & ((ipart | fpart) != 0)
    has_sign = bool(neg.any())

    # column layout: label | ' ' | index | ':' | sign | int | '.' | frac | '\n'
    c_sp = lab_w
    c_idx = c_sp + 1
    c_colon = c_idx + di
    c_sign = c_colon + 1
    c_int = c_sign + (1 if has_sign else 0)
    c_dot = c_int + dint
    c_frac = c_dot + 1
    c_nl = c_frac + nfrac
    width = c_nl + 1
    m = np.zeros((n, width), dtype=np.uint8)

    first = indptr[:-1]
    last = indptr[1:] - 1
    m[first, :lab_w] = lab_tab[np.asarray(label_ids)]
    m[:, c_sp] = ord(" ")
    m[:, c_colon] = ord(":")
    m[last, c_nl] = ord("\n")

    # index digits (no leading zeros)
    for k, d in enumerate(_digits_le(idx1, di)):
        col = c_colon - 1 - k
        if k == 0:
            m[:, col] = d + 48
        else:
            m[:, col] = np.where(idx1 >= _POW10_I[k], d + 48, 0)
    if has_sign:
        m[:, c_sign] = np.where(neg, ord("-"), 0).astype(np.uint8)
    # integer part
    for k, d in enumerate(_digits_le(ipart, dint)):
        col = c_dot - 1 - k
        if k == 0:
            m[:, col] = d + 48
        else:
            m[:, col] = np.where(ipart >= _POW10_I[k], d + 48, 0)
    # fraction digits, trailing zeros stripped
    if nfrac:
        seen = np.zeros(n, dtype=bool)
        for k, d in enumerate(_digits_le(fpart, nfrac)):
            col = c_nl - 1 - k
            nz = d != 0
            seen |= nz
            m[:, col] = np.where(seen, d + 48, 0)
        m[:, c_dot] = np.where(seen, ord("."), 0).astype(np.uint8)

    flat = m.reshape(-1)
    return flat[flat != 0].tobytes()


# --------------------------------------------------------------------------
# Data models
# --------------------------------------------------------------------------

class _SparseModel:
    """Zipf-like bag-of-words rows with tf-idf values and hidden linear labels."""

    def __init__(self, rng, features, nnz_per_row, classes):
        self.features = F = int(features)
        self.classes = int(classes)
        c = ZIPF_OFFSET
        self.log_ratio = math.log((F + c) / c)
        # P(rank = j) for the discretised continuous law (density ~ 1/(x + c)),
        # computed without cancellation: log((j + 1 + c) / (j + c)) / log_ratio
        p = np.log1p(1.0 / (np.arange(F) + c)) / self.log_ratio
        log1mp = np.log1p(-np.minimum(p, 1 - 1e-12))
        # expected number of distinct features after L draws: g(L)
        lmax = max(50.0, 20.0 * nnz_per_row * np.exp(3 * ROW_LEN_SIGMA))
        grid = np.unique(np.concatenate([
            np.arange(1, 65, dtype=np.float64),
            np.geomspace(64, lmax, 200)]))
        g = np.array([F - np.exp(L * log1mp).sum() for L in grid])
        # Quantities derived with transcendental ufuncs are rounded to a
        # coarse grid: numpy's SIMD exp/log differ in the last ulp between
        # versions/CPUs, and this keeps the output bytes identical anyway.
        g = np.round(g, 6)
        self.grid_L, self.grid_g = grid, g
        self.max_len = float(g[-1])
        # row-length distribution (number of distinct features), lognormal
        self.mu = np.log(nnz_per_row) - ROW_LEN_SIGMA ** 2 / 2
        # idf from the expected document frequency at the mean row length
        Lmean = np.interp(min(nnz_per_row, self.max_len), g, grid)
        df = -np.expm1(Lmean * log1mp)
        idf_rank = np.round(1.0 - np.log(np.maximum(df, 1e-12)), 4)
        # rank -> feature id permutation: frequent features scattered
        self.perm = rng.permutation(F)
        self.idf = np.empty(F)
        self.idf[self.perm] = idf_rank
        # hidden sparse model(s)
        nvec = 1 if self.classes == 2 else self.classes
        W = rng.standard_normal((F, nvec))
        W *= rng.random((F, 1)) < W_DENSITY
        idf_pow = np.ones(F)
        for _ in range(W_IDF_POWER):    # integer power, plain IEEE products
            idf_pow *= self.idf
        W /= idf_pow[:, None]
        self.W = W
        self.bias = np.zeros(nvec)
        self.noise_scale = 1.0

    def rows(self, rng, nrows, force_last=False):
        F = self.features
        target = np.rint(np.exp(self.mu + ROW_LEN_SIGMA * rng.standard_normal(nrows)))
        target = np.clip(target, 1, self.max_len)
        draws = np.rint(np.interp(target, self.grid_g, self.grid_L))
        draws = np.maximum(1, draws).astype(np.int64)
        total = int(draws.sum())
        u = rng.random(total)
        rank = (ZIPF_OFFSET * np.expm1(u * self.log_ratio)).astype(np.int64)
        np.minimum(rank, F - 1, out=rank)
        key = np.repeat(np.arange(nrows, dtype=np.int64) * F, draws)
        key += self.perm[rank]
        if force_last:     # make sure index `features` occurs in the file
            key = np.append(key, F - 1)
        key.sort()
        start = np.flatnonzero(np.concatenate(([True], key[1:] != key[:-1])))
        tf = np.diff(np.append(start, key.size))
        ukey = key[start]
        row = ukey // F
        feat = ukey - row * F
        counts = np.bincount(row, minlength=nrows)
        indptr = np.zeros(nrows + 1, dtype=np.int64)
        np.cumsum(counts, out=indptr[1:])
        tf_weight = np.round(1.0 + np.log(np.arange(1, int(tf.max()) + 1)), 6)
        val = tf_weight[tf - 1] * self.idf[feat]
        norm = np.sqrt(np.bincount(row, weights=val * val, minlength=nrows))
        val /= norm[row]
        scores = np.empty((nrows, self.W.shape[1]))
        for k in range(self.W.shape[1]):
            scores[:, k] = np.bincount(row, weights=val * self.W[feat, k],
                                       minlength=nrows)
        return indptr, feat, val, scores


class _DenseModel:
    def __init__(self, rng, features, classes):
        self.features = F = int(features)
        self.classes = int(classes)
        self.mu = np.round(rng.normal(0.0, 0.5, F), 6)
        self.scale = np.round(np.exp(rng.normal(0.0, 0.5, F)), 6)
        nvec = 1 if self.classes == 2 else self.classes
        self.W = rng.standard_normal((F, nvec)) / self.scale[:, None]
        self.bias = np.zeros(nvec)
        self.noise_scale = 1.0

    def rows(self, rng, nrows, force_last=False):
        F = self.features
        # rows scaled by 1/sqrt(F) so that ||x|| is about 1, like normalised dense data: C = 1 then means what
        # it means on the sparse sets, and the dual solvers converge instead of hitting their iteration limit
        X = np.round((self.mu + self.scale * rng.standard_normal((nrows, F))) / math.sqrt(F), 7)
        scores = X @ self.W
        indptr = np.arange(0, nrows * F + 1, F, dtype=np.int64)
        feat = np.tile(np.arange(F, dtype=np.int64), nrows)
        return indptr, feat, X.reshape(-1), scores


class _GeometricModel:
    """The two-feature sets of the online-SVM paper: rows() returns the rows and, as `scores`, their class ids
    (0 -> -1, 1 -> +1), so that labels() only passes them on."""

    def __init__(self, kind):
        self.kind = kind
        self.features = 2
        self.classes = 2

    def rows(self, rng, nrows, force_last=False):
        if self.kind == "chessboard":
            # 5 decimals: the written value (6 significant digits) is the value the label is computed from
            X = np.round(rng.uniform(0.0, 4.0, (nrows, 2)), 5)
            y = ((np.floor(X[:, 0]) + np.floor(X[:, 1])) % 2 == 0).astype(np.int64)
        else:
            y = rng.integers(0, 2, nrows).astype(np.int64)          # 1: the class centred at (2, 2), label +1
            X = np.round(rng.standard_normal((nrows, 2)) + 2.0 * y[:, None], 4)
        X[X == 0.0] = 1e-5 if self.kind == "chessboard" else 1e-4  # every row keeps both features
        indptr = np.arange(0, nrows * 2 + 1, 2, dtype=np.int64)
        feat = np.tile(np.arange(2, dtype=np.int64), nrows)
        return indptr, feat, X.reshape(-1), y[:, None]

    def labels(self, rng, scores):
        return scores[:, 0]


def _labels(model, rng, scores):
    """Class ids (0..C-1; for C == 2: 0 -> -1, 1 -> +1) from hidden scores."""
    n = scores.shape[0]
    noise = rng.standard_normal(scores.shape)
    s = scores - model.bias + model.noise_scale * SCORE_NOISE * noise
    if model.classes == 2:
        y = (s[:, 0] > 0).astype(np.int64)
    else:
        y = np.argmax(s, axis=1).astype(np.int64)
    flip = rng.random(n) < LABEL_FLIP
    shift = rng.integers(1, model.classes, size=n)
    y = np.where(flip, (y + shift) % model.classes, y)
    return y


def _calibrate(model, rng):
    """Centre / balance the hidden scores on a calibration sample."""
    nrows = CALIB_ROWS
    _, _, _, scores = model.rows(rng, nrows)
    if model.classes == 2:
        model.bias = np.array([np.median(scores[:, 0])])
        model.noise_scale = float(np.std(scores[:, 0])) or 1.0
        return
    s = scores.copy()
    model.noise_scale = float(np.mean(np.std(s, axis=0))) or 1.0
    bias = s.mean(axis=0)
    K = model.classes
    noise = model.noise_scale * SCORE_NOISE * rng.standard_normal(s.shape)
    # a few multiplicative-weights steps towards equal class frequencies
    for _ in range(200):
        y = np.argmax(s - bias + noise, axis=1)
        frac = np.bincount(y, minlength=K) / nrows
        if np.max(np.abs(frac - 1.0 / K)) < 0.03 / K:
            break
        bias += 0.5 * model.noise_scale * (frac - 1.0 / K) * K / 2
    model.bias = bias


# --------------------------------------------------------------------------
# Writing
# --------------------------------------------------------------------------

def _label_strings(classes):
    if classes == 2:
        return ["-1", "+1"]
    return [str(k + 1) for k in range(classes)]


def _write_set(model, rng, path, nrows, batch_rows, checksum):
    path = os.fspath(path)
    d = os.path.dirname(os.path.abspath(path))
    os.makedirs(d, exist_ok=True)
    labels = _label_strings(model.classes)
    counts = np.zeros(model.classes, dtype=np.int64)
    nnz = 0
    nbytes = 0
    h = hashlib.sha256() if checksum else None
    fd, tmp = tempfile.mkstemp(dir=d, prefix="." + os.path.basename(path) + ".",
                               suffix=".tmp")
    try:
        with os.fdopen(fd, "wb", buffering=0) as f:
            done = 0
            while done < nrows:
                nb = min(batch_rows, nrows - done)
                indptr, feat, val, scores = model.rows(rng, nb, force_last=(done == 0))
                y = model.labels(rng, scores) if hasattr(model, "labels") else _labels(model, rng, scores)
                buf = format_libsvm_batch(indptr, feat, val, y, labels)
                f.write(buf)
                if h is not None:
                    h.update(buf)
                counts += np.bincount(y, minlength=model.classes)
                nnz += int(indptr[-1])
                nbytes += len(buf)
                done += nb
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    if model.classes == 2:
        class_counts = {-1: int(counts[0]), 1: int(counts[1])}
    else:
        class_counts = {k + 1: int(c) for k, c in enumerate(counts)}
    out = dict(path=path, rows=int(nrows), features=model.features, nnz=nnz,
               classes=class_counts, bytes=nbytes)
    if h is not None:
        out["sha256"] = h.hexdigest()
    return out


def generate(kind, out_path, *, rows=None, features=None, nnz_per_row=None,
             classes=None, seed=0, test_out=None, test_rows=None,
             checksum=False) -> dict:
    """Generate a dataset of ``kind`` into ``out_path`` (LIBSVM text).

    Returns a summary dict: kind, path, rows, features, nnz, classes
    (label -> count), bytes, seconds, seed [, sha256 if ``checksum``]
    [, test: the same summary for the test set].
    """
    if kind not in KINDS:
        raise ValueError(f"unknown kind {kind!r}; expected one of {sorted(KINDS)}")
    t0 = time.perf_counter()
    dflt = KINDS[kind]
    rows = dflt["rows"] if rows is None else int(rows)
    features = dflt["features"] if features is None else int(features)
    classes = dflt["classes"] if classes is None else int(classes)
    if kind in GEOMETRIC:
        if features != 2 or classes != 2:
            raise ValueError(f"{kind} has 2 features and 2 classes")
        nnz_per_row = 2
    elif kind == "dense":
        nnz_per_row = features        # every feature in every row
    else:
        nnz_per_row = dflt["nnz_per_row"] if nnz_per_row is None else nnz_per_row
    nnz_per_row = float(nnz_per_row)
    if rows < 0:
        raise ValueError("rows must be >= 0")
    if features < 1:
        raise ValueError("features must be >= 1")
    if nnz_per_row < 1:
        raise ValueError("nnz_per_row must be >= 1")
    if classes < 2:
        raise ValueError("classes must be >= 2")
    if test_out is not None:
        test_rows = max(1, rows // 10) if test_rows is None else int(test_rows)
        if test_rows < 0:
            raise ValueError("test_rows must be >= 0")

    if int(seed) < 0:
        raise ValueError("seed must be >= 0")
    ss = np.random.SeedSequence([int(seed), _KIND_CODE[kind]])
    s_model, s_calib, s_train, s_test = ss.spawn(4)
    rng_model = np.random.default_rng(s_model)
    if kind in GEOMETRIC:
        model = _GeometricModel(kind)
    elif kind == "dense":
        model = _DenseModel(rng_model, features, classes)
    else:
        model = _SparseModel(rng_model, features, nnz_per_row, classes)
    if kind not in GEOMETRIC:
        _calibrate(model, np.random.default_rng(s_calib))

    batch_rows = int(np.clip(TARGET_BATCH_NNZ // max(1.0, nnz_per_row), 256, 100_000))
    summary = _write_set(model, np.random.default_rng(s_train), out_path, rows,
                         batch_rows, checksum)
    summary = dict(kind=kind, seed=int(seed), **summary)
    if test_out is not None:
        summary["test"] = _write_set(model, np.random.default_rng(s_test), test_out,
                                     test_rows, batch_rows, checksum)
    summary["seconds"] = time.perf_counter() - t0
    return summary


# --------------------------------------------------------------------------
# CLI
# --------------------------------------------------------------------------

def _positive_int(s):
    v = int(s)
    if v < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {s!r}")
    return v


def _nonneg_int(s):
    v = int(s)
    if v < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0, got {s!r}")
    return v


def _positive_float(s):
    v = float(s)
    if not v >= 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {s!r}")
    return v


def _fmt_counts(c):
    return ",".join(f"{'+' if k > 0 and len(c) == 2 else ''}{k}:{v}"
                    for k, v in c.items())


def main(argv=None):
    ap = argparse.ArgumentParser(
        description="Generate deterministic synthetic LIBSVM-format datasets.",
        epilog="defaults: " + "; ".join(
            f"{k}: {v['rows']}x{v['features']}"
            + (f", ~{v['nnz_per_row']} nnz/row" if v["nnz_per_row"] else ", dense")
            + f", {v['classes']} classes" for k, v in KINDS.items()))
    ap.add_argument("kind", choices=sorted(KINDS))
    ap.add_argument("--out", required=True, help="output path (written atomically)")
    ap.add_argument("--rows", type=_positive_int)
    ap.add_argument("--features", type=_positive_int)
    ap.add_argument("--nnz-per-row", type=_positive_float,
                    help="mean non-zeros per row (ignored for dense)")
    ap.add_argument("--classes", type=int,
                    help=">= 2; 2 gives +1/-1 labels, more gives 1..C")
    ap.add_argument("--seed", type=_nonneg_int, default=0)
    ap.add_argument("--test-out", help="also write a held-out test set here")
    ap.add_argument("--test-rows", type=_positive_int,
                    help="rows of the test set (default rows/10)")
    ap.add_argument("--check", action="store_true",
                    help="print the sha256 of the output(s) to stdout")
    ap.add_argument("-q", "--quiet", action="store_true")
    a = ap.parse_args(argv)
    # SIGTERM -> SystemExit so the temporary file is removed on the way out
    try:
        signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    except ValueError:      # not in the main thread
        pass
    if a.test_rows is not None and a.test_out is None:
        ap.error("--test-rows needs --test-out")
    if a.classes is not None and a.classes < 2:
        ap.error("--classes must be >= 2")
    s = generate(a.kind, a.out, rows=a.rows, features=a.features,
                 nnz_per_row=a.nnz_per_row, classes=a.classes, seed=a.seed,
                 test_out=a.test_out, test_rows=a.test_rows, checksum=a.check)
    sets = [s] + ([s["test"]] if "test" in s else [])
    if a.check:
        for t in sets:
            print(f"{t['sha256']}  {t['path']}")
    if not a.quiet:
        parts = [f"{t['path']}: rows={t['rows']} features={t['features']} "
                 f"nnz={t['nnz']} ({t['nnz'] / max(1, t['rows']):.1f}/row) "
                 f"labels={_fmt_counts(t['classes'])} bytes={t['bytes']}"
                 for t in sets]
        print(f"gen_data {s['kind']} seed={s['seed']}: " + "; test ".join(parts)
              + f"; {s['seconds']:.2f}s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        print("gen_data: interrupted", file=sys.stderr)
        sys.exit(130)
