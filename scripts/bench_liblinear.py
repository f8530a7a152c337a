"""Part `types` of `make bench` (issue 18): LIBLINEAR's solver types -s 0 4 5 6 7 11 12 13 21 against
liblinear-official's C `train`, in one process, on the same rows with the same options (C = 1, default -e, no bias
unless the set says otherwise; single thread).

Every LIBLINEAR call is preceded by srand(1) (its solvers call rand() and never seed it). Per (type, set):
  - training time: llsvm.train on the loaded dataset against LIBLINEAR's C `train` call on a problem built
    beforehand (means over seeds 1..k, k = --repeats, at least 7 where a run takes under a second: run k with seed
    k for both, as the iterations a random order takes vary by tens of percent; each run shorter than 50 ms is
    repeated to 50 ms; reading and problem construction are not timed for either); target <= 1.0x; the models
    compared below are the seed-1 runs;
  - the objective at the same -e, LIBLINEAR's own measure: the `Objective value` it prints (the dual's for -s 4, 7,
    12, 13 and 21, the primal's for -s 5 and 6; summed over one-vs-rest problems), and for the Newton types -s 0 and
    -s 11, which print none, the primal of both models by one definition; relative difference, target <= 1e-3;
    the primal of both models by one definition is also listed for every type;
  - test accuracy (classification, -s 21: the share predicted +1) or mean squared error (regression) of both
    models on the test file (the training rows when the set has none); target: within 0.1 points (MSE: 1 %
    relative);
  - LIBLINEAR's predict on llsvm's model file against LIBLINEAR's predict on its own model: the share of rows
    with the same label (target >= 99.9 %; regression: the largest relative difference of the predicted values);
    and llsvm's predict on LIBLINEAR's model file against LIBLINEAR's (must be every row: models interchangeable).
    For scale, LIBLINEAR against itself: its model after srand(2) against its model after srand(1), the agreement
    two equally valid runs at this -e reach (regression: values within 1 % of the targets' standard deviation).
Sets: the generated `sparse`, `dense` and `multiclass` sets at --types-scale of bench's sizes, a generated
regression set (seeds 1 and 2, the second not looked at while building), and the public sets of data/public
(`make data`): classification sets for -s 0 4 5 6 7, the labels of classification sets as regression targets (as
LIBLINEAR's own tests do) for -s 11 12 13, every set (labels ignored) for -s 21.
"""
import os
import statistics
import time

import numpy as np
import scipy.sparse as sp

import llsvm
from benchutil import liblinear_train, shared_set, srand, timed
from llsvm.dataset import CSRDataset

CLASSIFY = (0, 7, 5, 6, 4)
REGRESS = (11, 12, 13)
ONECLASS = (21,)
TYPES = CLASSIFY + REGRESS + ONECLASS
MIN_SEEDS = 7
SHARED_CLASSIFY = ("a9a", "dna.scale", "usps.t", "mushrooms", "splice", "heart_scale", "german.numer",
                   "reuters_moneyfx.trn", "segment.scale", "vowel.scale")
SHARED_REGRESS = ("a9a", "dna.scale", "heart_scale", "usps.t", "german.numer", "segment.scale")
SHARED_ONECLASS = ("a9a", "dna.scale", "heart_scale", "mushrooms", "splice", "usps.t")


def regression_set(seed, rows=100_000, features=2_000, nnz=40):
    """A generated regression set: sparse rows, y = x.w* + noise (seeded), train and test."""
    rng = np.random.default_rng([seed, 18])
    w = rng.normal(size=features)

    def make(n):
        cols = rng.integers(0, features, size=(n, nnz))
        vals = rng.normal(size=(n, nnz))
        X = sp.csr_matrix((vals.ravel(), cols.ravel(), np.arange(0, n * nnz + 1, nnz)), shape=(n, features))
        X.sum_duplicates()
        X.sort_indices()
        y = X @ w + 0.5 * rng.normal(size=n)
        return CSRDataset.from_csr(X, y)
    return make(rows), make(rows // 10)


def _ll_objective(X, y, opts, seed=1):
    """The `Objective value` lines LIBLINEAR prints for one training (summed), through its print function."""
    from liblinear import liblinear as L

    out = []
    fun = L.PRINT_STRING_FUN(lambda s: out.append(s.decode()))
    param = L.parameter(opts)
    prob = L.problem(y, X)
    prob.set_bias(param.bias)
    L.liblinear.set_print_string_function(fun)
    srand(seed)
    try:
        L.liblinear.train(prob, param)
    finally:
        L.liblinear.set_print_string_function(L.ctypes_print_null)
    vals = [float(ln.split("=")[1]) for ln in "".join(out).splitlines() if ln.startswith("Objective value")]
    return sum(vals) if vals else None


def primal(solver, model, ds, C=1.0, p=0.1):
    """The primal objective of a linear model on ds, one definition for both libraries (-s 21: 1/2 |w|^2)."""
    W = model.W
    if solver == 21:
        return 0.5 * float((W * W).sum())
    Z = np.asarray(model.decision_function(ds)).reshape(ds.n_rows, -1)
    reg = 0.5 * float((W * W).sum())
    if solver in REGRESS:
        e = np.maximum(np.abs(Z[:, 0] - ds.y) - p, 0.0)
        return reg + C * float((e if solver == 13 else e * e).sum())
    labels = list(model.label)
    yi = np.trunc(ds.y).astype(np.int64)
    if solver == 4:
        own = Z[np.arange(ds.n_rows), [labels.index(v) for v in yi]]
        M = Z - own[:, None] + 1.0
        M[np.arange(ds.n_rows), [labels.index(v) for v in yi]] = 0.0
        return reg + C * float(M.max(axis=1).sum())
    cols = [labels[0]] if len(labels) == 2 else labels
    total = 0.0
    for k, lab in enumerate(cols):
        m = np.where(yi == lab, 1.0, -1.0) * Z[:, k]
        w = W[:, k]
        if solver in (5, 6):
            total += float(np.abs(w).sum())
        else:
            total += 0.5 * float(w @ w)
        if solver in (0, 6, 7):
            total += C * float(np.logaddexp(0.0, -m).sum())
        else:
            b = np.maximum(1.0 - m, 0.0)
            total += C * float((b * b).sum())
    return total


def _scores(solver, pred, te):
    if solver in REGRESS:
        return float(np.mean((pred - te.y) ** 2))
    if solver == 21:
        return 100.0 * float(np.mean(pred > 0))
    return 100.0 * float(np.mean(pred == te.y))


def bench_one(solver, name, ds, te, repeats, tmp, bias=-1.0):
    """One (type, set) row."""
    from liblinear import liblinearutil as LU

    from llsvm.models import load_model
    from llsvm.solvers.trainer import train

    te = te if te is not None else ds
    X = ds.to_csr()
    opts = f"-s {solver} -c 1 -B {bias:g}"
    # every run with its own seed (rand() for LIBLINEAR, --seed for llsvm): the number of iterations a random
    # visiting order takes varies by tens of percent for both, so the times are means over the seeds, at least 7
    # of them where a run takes less than a second
    t_ll, t_ours = [], []
    k = 0
    while k < repeats or (k < MIN_SEEDS and max(t_ll) < 1.0):
        k += 1
        t, llm_k = liblinear_train(X, ds.y, opts + " -q", 1, seed=k)
        t_ll.append(t)
        t, model_k = timed(lambda: train(ds, solver=solver, C=1.0, bias=bias, seed=k, threads=1,
                                         say=lambda s: None), 1)
        t_ours.append(t)
        if k == 1:
            llm, model = llm_k, model_k
    seeds = k
    t_ll, t_ours = statistics.mean(t_ll), statistics.mean(t_ours)
    res = model.meta["results"]
    obj_ll = _ll_objective(X, ds.y, opts)
    obj_ll2 = _ll_objective(X, ds.y, opts, seed=2)
    obj_ours = sum(r.extra.get("objective_value", r.primal) for r in res)
    switched = any(r.extra.get("switched_to_primal") for r in res)
    p_ours = primal(solver, model, ds)
    mpath = os.path.join(tmp, f"bench-{solver}.ll.model")
    LU.save_model(mpath, llm)
    ll_model = load_model(mpath)
    p_ll = primal(solver, ll_model, ds)
    # LIBLINEAR against itself (another rand() seed): its model, its primal and its printed objective
    _, llm2 = liblinear_train(X, ds.y, opts + " -q", 1, seed=2)
    ll2_path = os.path.join(tmp, f"bench-{solver}.ll2.model")
    LU.save_model(ll2_path, llm2)
    p_ll2 = primal(solver, load_model(ll2_path), ds)
    if obj_ll is None or switched:
        # the Newton types print no objective, and a dual solver that switched to Newton at its iteration limit
        # printed its dual's before the switch: the primal of both models
        obj_ll, obj_ours, obj_ll2 = p_ll, p_ours, p_ll2
    ours_path = os.path.join(tmp, f"bench-{solver}.llsvm.model")
    model.save(ours_path)
    Xt = te.to_csr()
    pred_ll = np.asarray(LU.predict(te.y, Xt, llm, "-q")[0])
    pred_ll_on_ours = np.asarray(LU.predict(te.y, Xt, LU.load_model(ours_path), "-q")[0])
    pred_ours = model.predict(te)
    # LIBLINEAR against itself, another rand() seed: how much two equally valid runs at this -e agree
    pred_ll2 = np.asarray(LU.predict(te.y, Xt, llm2, "-q")[0])
    agree = _agreement(solver, pred_ll_on_ours, pred_ll, te)
    self_agree = _agreement(solver, pred_ll2, pred_ll, te)
    row = {"type": solver, "dataset": name, "rows": ds.n_rows, "nnz": ds.nnz, "bias": bias, "seeds": seeds,
           "llsvm_train_s": t_ours, "liblinear_train_s": t_ll, "ratio": t_ours / t_ll,
           "objective_llsvm": obj_ours, "objective_liblinear": obj_ll,
           "objective_rel_diff": (obj_ours - obj_ll) / abs(obj_ll) if obj_ll else float("nan"),
           "primal_llsvm": p_ours, "primal_liblinear": p_ll,
           "liblinear_self_objective_rel_diff": (obj_ll2 - obj_ll) / abs(obj_ll) if obj_ll else float("nan"),
           "score_llsvm": _scores(solver, pred_ours, te), "score_liblinear": _scores(solver, pred_ll, te),
           "score_liblinear_seed2": _scores(solver, pred_ll2, te),
           "agreement": agree, "liblinear_self_agreement": self_agree,
           "liblinear_model_same_by_llsvm": bool(np.array_equal(ll_model.predict(te), pred_ll)
                                                 if solver not in REGRESS else
                                                 np.allclose(ll_model.predict(te), pred_ll, rtol=1e-12, atol=1e-12)),
           "ours_same_by_liblinear": bool(np.allclose(pred_ll_on_ours, pred_ours, rtol=1e-12, atol=1e-12)),
           "n_iter": max(r.n_iter for r in res), "converged": all(r.converged for r in res)}
    if solver in REGRESS:
        row["score_ok"] = abs(row["score_llsvm"] - row["score_liblinear"]) <= 0.01 * row["score_liblinear"]
    else:
        row["score_ok"] = abs(row["score_llsvm"] - row["score_liblinear"]) <= 0.1
    row["agreement_ok"] = agree >= 99.9
    row["objective_ok"] = abs(row["objective_rel_diff"]) <= 1e-3
    row["time_ok"] = row["ratio"] <= 1.0
    return row


def _agreement(solver, a, b, te):
    """The share (%) of rows predicted alike: the same label, or for regression values within 1 % of the targets'
    standard deviation."""
    if solver in REGRESS:
        return 100.0 * float(np.mean(np.abs(a - b) <= 0.01 * float(np.std(te.y))))
    return 100.0 * float(np.mean(a == b))


def _as_regression(ds):
    return CSRDataset.from_csr(ds.to_csr(), ds.y.astype(np.float64))


def bench_types(generated, shared_dir, tmp, repeats, say=None, types=TYPES, scale=0.2, shared=True):
    """Every (type, set) row. generated: [(name, train path, test path)] of bench's generated sets."""
    rows = []

    def run(solver, name, ds, te, bias=-1.0):
        r = bench_one(solver, name, ds, te, repeats, tmp, bias=bias)
        rows.append(r)
        if say:
            say(f"-s {solver} {name}: {r['ratio']:.2f}x, objective {r['objective_rel_diff']:+.2e}, "
                f"score {r['score_llsvm']:.4g} vs {r['score_liblinear']:.4g}, agreement {r['agreement']:.4g}")

    sets = []
    for name, path, test in generated:
        ds = llsvm.read_dataset(path)
        te = llsvm.read_dataset(test) if test else None
        if scale < 1.0:
            n = max(1000, int(ds.n_rows * scale))
            ds = ds.take_rows(np.arange(n))
            if te is not None:
                te = te.take_rows(np.arange(max(100, int(te.n_rows * scale))))
        sets.append((name, ds, te))
    for solver in types:
        if solver in REGRESS:
            for seed in (1, 2):
                tr, te = regression_set(seed)
                run(solver, f"regression-seed{seed}", tr, te)
            if shared:
                for name in SHARED_REGRESS:
                    tr = shared_set(shared_dir, name, tmp)
                    if tr is None:
                        continue
                    te = shared_set(shared_dir, name + ".t", tmp)
                    run(solver, f"{name} (labels as targets)", _as_regression(tr),
                        None if te is None else _as_regression(te))
            continue
        for name, ds, te in sets:
            run(solver, name, ds, te)
        if shared:
            for name in (SHARED_ONECLASS if solver == 21 else SHARED_CLASSIFY):
                tr = shared_set(shared_dir, name, tmp)
                if tr is None:
                    continue
                te = shared_set(shared_dir, name + ".t", tmp)
                run(solver, name, tr, te)
    return rows


def types_markdown(rows, md_header, md_row):
    cols = ["-s", "set", "rows", "seeds", "llsvm s", "LIBLINEAR s", "ratio", "objective rel. diff",
            "LIBLINEAR vs itself", "primal llsvm",
            "primal LIBLINEAR", "score llsvm", "score LIBLINEAR", "LIBLINEAR seed 2", "predict agreement",
            "LIBLINEAR vs itself", "models both ways", "targets"]
    out = md_header(cols)
    for r in rows:
        ok = [("time", r["time_ok"]), ("obj", r["objective_ok"]), ("score", r["score_ok"]),
              ("agree", r["agreement_ok"])]
        out.append(md_row([str(r["type"]), r["dataset"], str(r["rows"]), str(r.get("seeds", "")),
                           f"{r['llsvm_train_s']:.3f}",
                           f"{r['liblinear_train_s']:.3f}", f"{r['ratio']:.2f}", f"{r['objective_rel_diff']:+.1e}",
                           f"{r['liblinear_self_objective_rel_diff']:+.1e}",
                           f"{r['primal_llsvm']:.6g}", f"{r['primal_liblinear']:.6g}", f"{r['score_llsvm']:.5g}",
                           f"{r['score_liblinear']:.5g}", f"{r['score_liblinear_seed2']:.5g}",
                           f"{r['agreement']:.2f} %", f"{r['liblinear_self_agreement']:.2f} %",
                           "yes" if r["liblinear_model_same_by_llsvm"] and r["ours_same_by_liblinear"] else "NO",
                           " ".join(f"{k} {'✓' if v else '✗'}" for k, v in ok)]))
    by_type = {}
    for r in rows:
        by_type.setdefault(r["type"], []).append(r)
    out.append("")
    for t, rs in by_type.items():
        out.append(f"-s {t}: median time ratio {statistics.median(r['ratio'] for r in rs):.2f} (max "
                   f"{max(r['ratio'] for r in rs):.2f}); objective within 1e-3 on {sum(r['objective_ok'] for r in rs)}"
                   f"/{len(rs)} (LIBLINEAR's with another seed within 1e-3 of its own on "
                   f"{sum(abs(r['liblinear_self_objective_rel_diff']) <= 1e-3 for r in rs)}/{len(rs)}), score on {sum(r['score_ok'] for r in rs)}/{len(rs)}, agreement on "
                   f"{sum(r['agreement_ok'] for r in rs)}/{len(rs)} (LIBLINEAR with another rand() seed agrees with "
                   f"itself >= 99.9 % on {sum(r['liblinear_self_agreement'] >= 99.9 for r in rs)}/{len(rs)}), "
                   f"time <= 1.0x on {sum(r['time_ok'] for r in rs)}/{len(rs)}")
    return "\n".join(out)


if __name__ == "__main__":      # a quick look: python scripts/bench_liblinear.py [types] (public sets only)
    import sys
    import tempfile
    from benchutil import DATA_DIR, md_header, md_row, say
    tps = tuple(int(t) for t in sys.argv[1].split(",")) if len(sys.argv) > 1 else TYPES
    with tempfile.TemporaryDirectory() as d:
        t0 = time.perf_counter()
        rs = bench_types([], DATA_DIR, d, 3, say=say, types=tps)
        print(types_markdown(rs, md_header, md_row))
        say(f"{time.perf_counter() - t0:.0f} s")
