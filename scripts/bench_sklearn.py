"""Part `sklearn` of `make bench` (issue 30): llsvm.sklearn's estimators against scikit-learn's own LinearSVC,
LogisticRegression and SVC (which call LIBLINEAR and LIBSVM through their Python layer), fit time in the same run on
the same in-memory matrix, at equal objective; and the peak memory of OutOfCoreSVC(memory=...).fit(path).

For each set and pair: the median wall time of fit(X, y) over --repeats (the matrix is built once, before; neither
side's construction is timed), the primal objective of both models computed here from their weights by one
definition (1/2 w.w + C sum loss over the rows with the bias column, LIBLINEAR's -B 1), their relative difference,
the test accuracy of both where the set has a test file, and the ratio ours / theirs (target <= 0.8). SVC: the dual
objective of the pairs is LIBSVM's own in both (the same solver); the ratio and the accuracies are reported.

Sets: the five largest public training sets by non-zeros (data/public: usps.t, skin_nonskin, a9a,
reuters_moneyfx.trn, mushrooms) and the generated 500k-row sparse set (scripts/gen_data.py sparse, seed 1; --rows
to change its size, --sparse-seed for sets the figures were not tuned on). SVC runs on the sets of at most
--svc-rows rows (a random subset of that size otherwise, the same for both).

    python scripts/bench_sklearn.py [--sets a9a,usps.t] [--repeats 3] [--out FILE.md]
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
import warnings

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchutil import DATA_DIR, md_header, md_row, run_measured, say, shared_file  # noqa: E402

import llsvm  # noqa: E402
import llsvm.sklearn as S  # noqa: E402

SETS = ("usps.t", "skin_nonskin", "a9a", "reuters_moneyfx.trn", "mushrooms")
PAIRS = (
    # name, ours (class, params), theirs (module attribute, params), loss
    ("-s 3 hinge", (S.LinearSVC, {"solver": 3}), ("svm.LinearSVC", {"loss": "hinge", "dual": True}), "hinge"),
    ("-s 1 squared hinge dual", (S.LinearSVC, {"solver": 1}),
     ("svm.LinearSVC", {"loss": "squared_hinge", "dual": True}), "squared_hinge"),
    ("-s 2 squared hinge primal", (S.LinearSVC, {"solver": 2}),
     ("svm.LinearSVC", {"loss": "squared_hinge", "dual": False}), "squared_hinge"),
    ("-s 0 logistic", (S.LogisticRegression, {"solver": 0}),
     ("linear_model.LogisticRegression", {"solver": "liblinear"}), "log"),
)


def theirs_class(path):
    import importlib
    module, name = path.split(".")
    return getattr(importlib.import_module(f"sklearn.{module}"), name)


def primal(X, y01, W, b, C, loss, labels):
    """Sum over the one-vs-rest problems of 1/2 w.w + C sum loss (the bias as the last weight, B = 1)."""
    W = np.atleast_2d(W)
    b = np.ravel(b)
    total = 0.0
    cols = range(W.shape[0])
    for k in cols:
        y = np.where(y01 == labels[1], 1.0, -1.0) if W.shape[0] == 1 else np.where(y01 == labels[k], 1.0, -1.0)
        m = X @ W[k] + b[k]
        if loss == "hinge":
            losses = np.maximum(0.0, 1.0 - y * m)
        elif loss == "squared_hinge":
            losses = np.maximum(0.0, 1.0 - y * m) ** 2
        else:
            losses = np.logaddexp(0.0, -y * m)
        total += 0.5 * (float(W[k] @ W[k]) + b[k] * b[k]) + C * float(losses.sum())
    return total


def _weights(est):
    """(coef, intercept) of a scikit-learn estimator, or of its one-vs-rest wrapper's estimators."""
    if hasattr(est, "estimators_"):
        return (np.vstack([e.coef_ for e in est.estimators_]),
                np.concatenate([np.ravel(e.intercept_) for e in est.estimators_]))
    return est.coef_, est.intercept_


def median_fit(make, X, y, repeats):
    times, est = [], None
    for _ in range(repeats):
        est = make()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t = time.perf_counter()
            est.fit(X, y)
            times.append(time.perf_counter() - t)
    return statistics.median(times), est


def columns(X, n):
    X = sp.csr_matrix(X)
    if X.shape[1] >= n:
        return sp.csr_matrix(X[:, :n])
    return sp.csr_matrix(sp.hstack([X, sp.csr_matrix((X.shape[0], n - X.shape[1]))]))


def load(name, tmp, rows, seed):
    """(X, y, Xt or None, yt) of a public set or of the generated sparse set ("sparse")."""
    if name == "sparse":
        path = os.path.join(tmp, f"sparse-{seed}")
        if not os.path.exists(path):
            subprocess.run([sys.executable, os.path.join(os.path.dirname(__file__), "gen_data.py"), "sparse",
                            "--out", path, "--rows", str(rows), "--seed", str(seed), "--test-out", path + ".t", "-q"],
                           check=True)
        tr, te = llsvm.read_dataset(path), llsvm.read_dataset(path + ".t")
    else:
        path = shared_file(DATA_DIR, name, tmp)
        if path is None:
            return None
        tr = llsvm.read_dataset(path, class_labels=True)
        test = shared_file(DATA_DIR, name + ".t", tmp) if not name.endswith(".t") else None
        te = None if test is None else llsvm.read_dataset(test, class_labels=True)
    X, y = tr.to_csr(), tr.y
    return X, y, None if te is None else columns(te.to_csr(), X.shape[1]), None if te is None else te.y


def at_equal_objective(ours_cls, ours_kw, X, y, C, tol, repeats, loss, f_theirs, steps=8):
    """(seconds, estimator, primal, tol, max_iter) of our fit at the loosest settings from (`tol`, the solver's
    default iteration limit) whose primal is at most scikit-learn's (1 + 1e-3): the time to reach their objective,
    never a cheaper, worse stopping point. Each step that falls short divides tol by ten, or doubles the
    iteration limit when the fit stopped at it (LIBLINEAR 2.50's dual solvers stop at 300 outer iterations;
    scikit-learn's bundled copy at its max_iter=1000)."""
    t, limit = tol, None
    for step in range(steps + 1):
        kw = dict(ours_kw, C=C, tol=t) if limit is None else dict(ours_kw, C=C, tol=t, max_iter=limit)
        secs, est = median_fit(lambda: ours_cls(**kw), X, y, repeats)
        f = primal(X, y, est.coef_, est.intercept_, C, loss, est.classes_)
        if f <= f_theirs + 1e-3 * abs(f_theirs) or step == steps:
            return secs, est, f, t, limit
        if not est.converged_:
            limit = 2 * (limit or max(est.n_iter_, 1))
        else:
            t /= 10


def bench_linear(name, data, C, tol, repeats):
    X, y, Xt, yt = data
    rows = []
    for title, (ours_cls, ours_kw), (theirs_path, theirs_kw), loss in PAIRS:
        make = lambda: theirs_class(theirs_path)(C=C, tol=tol, **theirs_kw)  # noqa: E731
        if theirs_path.endswith("LogisticRegression") and np.unique(y).size > 2:
            # scikit-learn >= 1.8 runs liblinear on two classes only: its own one-vs-rest wrapper, as LIBLINEAR's
            from sklearn.multiclass import OneVsRestClassifier
            make = (lambda m: lambda: OneVsRestClassifier(m()))(make)
        t_theirs, theirs = median_fit(make, X, y, repeats)
        f_theirs = primal(X, y, *_weights(theirs), C, loss, theirs.classes_)
        t_ours, ours, f_ours, tol_ours, limit = at_equal_objective(ours_cls, ours_kw, X, y, C, tol, repeats, loss, f_theirs)
        acc = (ours.score(Xt, yt), theirs.score(Xt, yt)) if Xt is not None else (None, None)
        rows.append({"set": name, "estimator": title, "C": C, "tol": tol, "tol_ours": tol_ours, "max_iter_ours": limit,
                     "ours_s": t_ours,
                     "theirs_s": t_theirs, "ratio": t_ours / t_theirs, "primal_ours": f_ours,
                     "primal_theirs": f_theirs, "rel_diff": (f_ours - f_theirs) / abs(f_theirs),
                     "acc_ours": acc[0], "acc_theirs": acc[1]})
        say(f"# {name} {title}: {t_ours:.3f} s (tol {tol_ours:g}, max_iter {limit or 'default'}) vs {t_theirs:.3f} s ({t_ours / t_theirs:.2f}x), "
            f"primal {f_ours:.6g} vs {f_theirs:.6g}")
    return rows


def bench_svc(name, data, svc_rows, repeats, seed):
    from sklearn.svm import SVC
    X, y, Xt, yt = data
    if X.shape[0] > svc_rows:
        keep = np.sort(np.random.default_rng(seed).choice(X.shape[0], svc_rows, replace=False))
        X, y = X[keep], y[keep]
    gamma = 1.0 / X.shape[1]
    t_ours, ours = median_fit(lambda: S.SVC(C=1.0, gamma=gamma), X, y, repeats)
    t_theirs, theirs = median_fit(lambda: SVC(C=1.0, gamma=gamma, tol=1e-3, cache_size=100), X, y, repeats)
    acc = (ours.score(Xt, yt), theirs.score(Xt, yt)) if Xt is not None else (ours.score(X, y), theirs.score(X, y))
    say(f"# {name} SVC ({X.shape[0]} rows): {t_ours:.3f} s vs {t_theirs:.3f} s ({t_ours / t_theirs:.2f}x)")
    return {"set": name, "estimator": f"SVC rbf ({X.shape[0]} rows)", "C": 1.0, "tol": 1e-3, "tol_ours": 1e-3, "max_iter_ours": None,
            "ours_s": t_ours,
            "theirs_s": t_theirs, "ratio": t_ours / t_theirs, "primal_ours": None, "primal_theirs": None,
            "rel_diff": None, "acc_ours": acc[0], "acc_theirs": acc[1]}


MEMORY_CHILD = """
import sys
from llsvm.sklearn import OutOfCoreSVC
OutOfCoreSVC(memory=sys.argv[2], solver=sys.argv[3]).fit(sys.argv[1])
"""
IMPORT_CHILD = "import llsvm.sklearn"


def bench_memory(path, budget, solver):
    """Peak RSS (MB) of OutOfCoreSVC(memory=budget).fit(path) in a fresh process, measured by benchutil's small
    launcher (ru_maxrss carries over from the process that forks: this one holds the whole data set)."""
    _, peak = run_measured([sys.executable, "-c", MEMORY_CHILD, path, budget, solver])
    return peak


def import_floor():
    """Peak RSS (MB) of a process that only imports llsvm.sklearn: scikit-learn's own import (scipy.stats, pandas
    when installed) is in every fit's peak and out of the budget's reach."""
    return run_measured([sys.executable, "-c", IMPORT_CHILD])[1]


def sklearn_markdown(rows, mem_rows):
    lines = md_header(["set", "estimator", "C", "tol ours", "max_iter ours", "ours s", "sklearn s", "ratio", "primal ours",
                        "primal sklearn", "rel. diff", "acc ours", "acc sklearn"])
    for r in rows:
        def f(v, fmt):
            return "-" if v is None else format(v, fmt)
        lines.append(md_row([r["set"], r["estimator"], f"{r['C']:g}", f(r["tol_ours"], "g"),
                             "default" if r["max_iter_ours"] is None else str(r["max_iter_ours"]), f(r["ours_s"], ".3f"),
                             f(r["theirs_s"], ".3f"),
                             f(r["ratio"], ".2f"), f(r["primal_ours"], ".6g"), f(r["primal_theirs"], ".6g"),
                             f(r["rel_diff"], ".1e"), f(r["acc_ours"], ".4f"), f(r["acc_theirs"], ".4f")]))
    if mem_rows:
        lines += ["", "## OutOfCoreSVC(memory=...).fit(path): peak RSS", ""]
        lines += md_header(["file", "solver", "budget", "peak RSS MB", "within budget + 60 MB",
                            "import llsvm.sklearn MB", "fit's own MB", "fit's own within budget + 60 MB"])
        for m in mem_rows:
            lines.append(md_row([m["file"], m["solver"], m["budget"], f"{m['peak_mb']:.0f}",
                                 "yes" if m["within"] else "NO", f"{m['floor_mb']:.0f}",
                                 f"{m['peak_mb'] - m['floor_mb']:.0f}", "yes" if m["own_within"] else "NO"]))
    return "\n".join(lines) + "\n"


def bench_sklearn(tmp, sets, repeats=3, rows=500000, seed=1, C=1.0, tol=1e-3, svc_rows=10000, memory="64M"):
    """(fit rows, memory rows) of the part: every set of `sets` ("sparse": the generated one)."""
    fit_rows, mem_rows = [], []
    for name in sets:
        data = load(name, tmp, rows, seed)
        if data is None:
            say(f"# {name}: not in {DATA_DIR}, left out")
            continue
        fit_rows += bench_linear(name, data, C, tol, repeats)
        fit_rows.append(bench_svc(name, data, svc_rows, repeats, seed))
        if name == "sparse":
            path = os.path.join(tmp, f"sparse-{seed}")
            bin_path = path + ".bin"
            if not os.path.exists(bin_path):
                llsvm.write_binary(path, bin_path)
            budget_mb = float(memory.rstrip("MmGg")) * (1024 if memory[-1] in "Gg" else 1)
            floor = import_floor()
            for solver in ("llsvm", "streamsvm"):
                peak = bench_memory(bin_path, memory, solver)
                mem_rows.append({"file": os.path.basename(bin_path), "solver": solver, "budget": memory,
                                 "peak_mb": peak, "within": peak <= budget_mb + 60, "floor_mb": floor,
                                 "own_within": peak - floor <= budget_mb + 60})
    return fit_rows, mem_rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sets", default=",".join(SETS + ("sparse",)))
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--rows", type=int, default=500000, help="rows of the generated sparse set")
    ap.add_argument("--sparse-seed", type=int, default=1)
    ap.add_argument("--C", type=float, default=1.0)
    ap.add_argument("--tol", type=float, default=1e-3)
    ap.add_argument("--svc-rows", type=int, default=10000)
    ap.add_argument("--memory", default="64M", help="the OutOfCoreSVC budget of the memory run")
    ap.add_argument("--out", default=None)
    ap.add_argument("--tmp", default=None)
    args = ap.parse_args(argv)
    tmp = args.tmp or tempfile.mkdtemp(prefix="bench-sklearn-")
    rows, mem_rows = bench_sklearn(tmp, args.sets.split(","), args.repeats, args.rows, args.sparse_seed, args.C,
                                   args.tol, args.svc_rows, args.memory)
    text = "# llsvm.sklearn against scikit-learn (fit, same run)\n\n" + sklearn_markdown(rows, mem_rows)
    print(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
    return rows, mem_rows


if __name__ == "__main__":
    main()
