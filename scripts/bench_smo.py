"""Part `smo` of `make bench` (issue 15): `-s smo` against libsvm-official's C `svm_train`, in one process, on the
same rows with the same parameters (C-SVC, RBF, C = 1, gamma = 1/num_features, eps 1e-3, -m 100, shrinking on).

Per set (llsvm with --threads N, N the CPUs available, as libsvm-official's wheel, built with OpenMP, uses them all;
-s smo's default is one thread, as svm-train's, and part `contention` measures it on a busy machine):
  - training time: llsvm.train on the loaded dataset against LIBSVM's C `svm_train` call on an svm_problem built
    beforehand (medians of --repeats; the problem's construction and the data reading are not timed for either);
  - the dual objective of every one-vs-one pair, both models evaluated by one definition (D = sum |a| - 1/2 a'Qa
    over the pair's support vectors, kernel values by llsvm's C kernel_block), summed over the pairs: relative
    difference (target <= 1e-6);
  - nSV of both (target: within 1 %) and the accuracy on the test file, or on the training rows when the set has
    none (target: within 0.1 points).
Sets: the issue's heart_scale, svmguide1 (scaled to [-1, 1] by the training file's feature ranges, as svm-scale
-l -1 -u 1 and -r), splice, dna.scale, usps.t, a9a; and, as data the figures were not tuned on, --smo-extra sets of
the public sets (data/public, `make data`; default: fourclass, german.numer, mushrooms, segment.scale,
vehicle.scale).
"""
import os
import statistics
import time

import numpy as np
import scipy.sparse as sp

import llsvm
from llsvm._ext import _kernel as KK
from llsvm._ext._rowops import row_sq_norms
from llsvm.dataset import CSRDataset
from benchutil import minmax_scale, shared_set
from llsvm.params import Params
from llsvm.options import SMOOptions
from llsvm.models.svm import KERNEL_TYPES

CPUS = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
ISSUE_SETS = ("heart_scale", "svmguide1", "splice", "dna.scale", "usps.t", "a9a")
EXTRA_SETS = ("fourclass", "german.numer", "mushrooms", "segment.scale", "vehicle.scale")
SCALED = {"svmguide1"}


def load_set(shared, name, tmp):
    """(train dataset, test dataset or None) of a public set (data/public), scaled where the issue says so."""
    tr = shared_set(shared, name, tmp)
    if tr is None:
        return None
    te = shared_set(shared, name + ".t", tmp)
    if name in SCALED:
        tr, te = minmax_scale(tr, te)
    return tr, te


def _libsvm_problem(ds):
    from libsvm import svmutil
    X = ds.to_csr()
    rows = []
    for i in range(X.shape[0]):
        a, b = X.indptr[i], X.indptr[i + 1]
        rows.append({int(j) + 1: float(v) for j, v in zip(X.indices[a:b], X.data[a:b])})
    return svmutil.svm_problem(list(map(float, ds.y)), rows), rows


def pair_duals(kernel, gamma, coef0, degree, nSV, sv_coef, SV):
    """D_p = sum |a| - 1/2 a'Qa of every one-vs-one pair p = (i, j) of a LIBSVM-layout model: its coefficients are
    sv_coef[j-1] on class i's SVs and sv_coef[i] on class j's (svm_predict_values' layout). SV: a CSRDataset."""
    k = len(nSV)
    start = np.concatenate([[0], np.cumsum(nSV)[:-1]]).astype(np.int64)
    view = SV.row_view()
    sq = row_sq_norms(view)
    params = {"kernel_type": KERNEL_TYPES.index(kernel) if isinstance(kernel, str) else kernel, "gamma": float(gamma), "coef0": float(coef0),
              "degree": int(degree)}
    out = []
    for i in range(k):
        for j in range(i + 1, k):
            idx = np.concatenate([np.arange(start[i], start[i] + nSV[i]), np.arange(start[j], start[j] + nSV[j])])
            coef = np.concatenate([sv_coef[j - 1][start[i]:start[i] + nSV[i]], sv_coef[i][start[j]:start[j] + nSV[j]]])
            sub = SV.take_rows(idx)
            sv = sub.row_view()
            sqs = sq[idx].copy()
            Kmat = np.empty((idx.size, idx.size))
            KK.kernel_block(sv, sv, params, sqs, sqs, Kmat)
            out.append(float(np.abs(coef).sum() - 0.5 * coef @ Kmat @ coef))
    return np.array(out)


def _libsvm_arrays(m):
    """(nSV, sv_coef (k-1, l), SV as a CSRDataset) of a libsvm-official model."""
    k = m.get_nr_class()
    nSV = [m.nSV[i] for i in range(k)]
    coef = np.array(m.get_sv_coef(), dtype=np.float64).T.reshape(max(k - 1, 0), -1)
    svs = m.get_SV()
    indptr, indices, values = [0], [], []
    n = 0
    for d in svs:
        keys = sorted(kk for kk in d if kk > 0)
        indices.extend(kk - 1 for kk in keys)
        values.extend(d[kk] for kk in keys)
        indptr.append(len(indices))
        n = max(n, keys[-1] if keys else 0)
    X = sp.csr_matrix((values, indices, indptr), shape=(len(svs), n))
    return nSV, coef, CSRDataset.from_csr(X, np.zeros(len(svs)))


def _median(fn, repeats):
    times, out = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def bench_set(name, tr, te, repeats, say=None):
    from libsvm import svm as L, svmutil
    n_features = tr.n_features
    gamma = 1.0 / n_features
    prob, _ = _libsvm_problem(tr)
    param = svmutil.svm_parameter(f"-s 0 -t 2 -c 1 -g {gamma!r} -e 0.001 -m 100 -h 1 -q")
    ll_s, lm = _median(lambda: L.libsvm.svm_train(prob, param), repeats)
    lm = svmutil.toPyModel(lm)
    lm.x_space = None
    # every CPU, as libsvm-official's OpenMP build
    params = Params(solver="smo", C=1.0, threads=CPUS, options=SMOOptions(kernel_type=2, gamma=gamma))
    our_s, model = _median(lambda: llsvm.train(tr, params=params, say=lambda s: None), repeats)
    nSV_l, coef_l, SV_l = _libsvm_arrays(lm)
    d_l = pair_duals("rbf", gamma, 0.0, 3, nSV_l, coef_l, SV_l)
    d_o = pair_duals("rbf", gamma, 0.0, 3, model.nSV, model.sv_coef, model.SV)
    ev = te if te is not None else tr
    _, evrows = _libsvm_problem(ev)
    pl, _, _ = svmutil.svm_predict(list(map(float, ev.y)), evrows, lm, "-q")
    acc_l = 100.0 * float(np.mean(np.asarray(pl) == ev.y))
    acc_o = 100.0 * float(np.mean(model.predict(ev) == ev.y))
    rel = float(abs(d_o.sum() - d_l.sum()) / abs(d_l.sum()))
    row = {"dataset": name, "rows": tr.n_rows, "features": n_features, "classes": int(lm.get_nr_class()),
           "eval": "test" if te is not None else "train",
           "libsvm_train_s": ll_s, "llsvm_train_s": our_s, "time_ratio": our_s / ll_s,
           "libsvm_dual": float(d_l.sum()), "llsvm_dual": float(d_o.sum()), "dual_rel_diff": rel,
           "pair_dual_rel_max": float(np.max(np.abs(d_o - d_l) / np.abs(d_l))),
           "libsvm_nSV": int(sum(nSV_l)), "llsvm_nSV": int(model.total_sv),
           "nSV_rel_diff": abs(int(model.total_sv) - int(sum(nSV_l))) / max(1, int(sum(nSV_l))),
           "libsvm_acc": acc_l, "llsvm_acc": acc_o, "acc_diff": acc_o - acc_l,
           "llsvm_iter": int(sum(r.n_iter for r in model.meta["results"])),
           "max_violation": float(max(r.max_violation for r in model.meta["results"]))}
    row["ok"] = bool(rel <= 1e-6 and row["nSV_rel_diff"] <= 0.01 and abs(row["acc_diff"]) <= 0.1
                     and row["time_ratio"] <= 1.0)
    if say is not None:
        say(f"# smo {name}: {row}")
    return row


def bench_smo(shared, tmp, repeats, sets=ISSUE_SETS + EXTRA_SETS, say=None):
    rows = []
    for name in sets:
        loaded = load_set(shared, name, tmp)
        if loaded is None:
            continue
        row = bench_set(name, *loaded, repeats, say=say)
        row["tuned"] = name in ISSUE_SETS
        rows.append(row)
    return rows


def smo_markdown(rows, md_header, md_row):
    cols = [("dataset", "set"), ("rows", "rows"), ("classes", "k"), ("eval", "acc on"),
            ("libsvm_train_s", "LIBSVM s"), ("llsvm_train_s", "llsvm s"), ("time_ratio", "ratio (<= 1.0)"),
            ("dual_rel_diff", "dual rel diff (<= 1e-6)"), ("libsvm_nSV", "LIBSVM nSV"), ("llsvm_nSV", "llsvm nSV"),
            ("libsvm_acc", "LIBSVM acc"), ("llsvm_acc", "llsvm acc"), ("ok", "targets")]
    lines = md_header([c[1] for c in cols])
    for r in rows:
        cells = []
        for key, _ in cols:
            v = r[key]
            if key == "ok":
                v = "✓" if v else "✗"
            elif key == "dual_rel_diff":
                v = f"{v:.1e}"
            elif isinstance(v, float):
                v = f"{v:.3f}" if key.endswith("_s") or key == "time_ratio" else f"{v:.2f}"
            elif key == "dataset" and not r.get("tuned", True):
                v = f"{v} (not tuned on)"
            cells.append(str(v))
        lines.append(md_row(cells))
    return "\n".join(lines)
