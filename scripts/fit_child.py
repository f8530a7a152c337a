"""A child Python that fits one llsvm.sklearn estimator, for the Ctrl-C measurements of a fit from Python (issue 45,
H1: tests/test_estimator_reliability.py bounds the CPU time after SIGINT, scripts/bench_estimator_signals.py
times the latency on a9a).

    python scripts/fit_child.py CLASS PARAMS DATA TARGET MARKS

CLASS: an estimator of llsvm.sklearn; PARAMS: its parameters, a Python literal ({"C": 1000.0}); DATA: a LIBSVM
text or llsvm binary file, or one of the generated sets (`generated`); TARGET: labels, targets (the real values)
or none (an outlier detector's fit(X)). As the fit starts, the child writes "MONOTONIC PROCESS_TIME" to MARKS
(atomically: MARKS.tmp renamed); on KeyboardInterrupt it writes its monotonic time to MARKS.caught, prints
"KeyboardInterrupt" and exits 3; a fit that ends prints "fitted" and exits 0. SIGINT starts at Python's own
handler, whatever the parent had.
"""
import ast
import os
import signal
import sys
import time


def generated(kind):
    """(X, class labels, real targets) of a generated set: `kernel` (4,000 x 20 dense), `kernel8k` (8,000 x 20),
    `dense` (20,000 x 50, around (2, ..., 2)): noisy labels of a random hyperplane, which no hyperplane separates;
    `sparse` (20,000 x 50,000, 20 non-zeros a row): random labels, separable (more features than rows)."""
    import numpy as np
    import scipy.sparse as sp
    rng = np.random.default_rng(45)
    if kind in ("kernel", "kernel8k", "dense"):
        n, d = {"kernel": (4000, 20), "kernel8k": (8000, 20), "dense": (20000, 50)}[kind]
        Z = rng.standard_normal((n, d))
        t = Z @ rng.standard_normal(d) + 2.0 * rng.standard_normal(n)
        return (np.round(Z + 2.0, 3) if kind == "dense" else Z), np.where(t > 0, 1, -1), t
    n, d, k = 20000, 50000, 20
    cols = (rng.integers(0, d // k, (n, k)) + np.arange(k) * (d // k)).ravel()
    X = sp.csr_matrix((np.round(rng.standard_normal(n * k), 3), cols, np.arange(0, n * k + 1, k)), shape=(n, d))
    y = np.where(rng.random(n) < 0.5, 1, -1)
    return X, y, y.astype(float)


def main(argv):
    signal.signal(signal.SIGINT, signal.default_int_handler)
    cls, params, data, target, marks = argv
    import llsvm
    import llsvm.sklearn as S
    if os.path.exists(data):
        ds = llsvm.read_dataset(data)
        X, labels, values = ds.to_csr(), ds.y, ds.y
    else:
        X, labels, values = generated(data)
    est = getattr(S, cls)(**ast.literal_eval(params))
    args = {"none": (X,), "labels": (X, labels), "targets": (X, values)}[target]
    with open(marks + ".tmp", "w") as f:
        f.write(f"{time.monotonic()!r} {time.process_time()!r}")
    os.rename(marks + ".tmp", marks)
    try:
        est.fit(*args)
    except KeyboardInterrupt:
        caught = time.monotonic()
        with open(marks + ".caught", "w") as f:
            f.write(repr(caught))
        print("KeyboardInterrupt", flush=True)
        return 3
    print("fitted", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
