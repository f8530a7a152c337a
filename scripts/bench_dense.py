"""Part `dense` of `make bench` (issue 32 item 4): -s 3 where n >> d, LIBLINEAR's dual against llsvm's (the dual,
then past LIBLINEAR's iteration limit the smoothed-hinge primal Newton to a certified relative gap of 1e-3).

For each set, in the same run, interleaved: LIBLINEAR 2.50's C train call (liblinear-official, in this process,
-s 3 -c 1 -B 1) and llsvm.train (solver 3, C = 1, bias 1, one thread): median seconds over --repeats, the ratio,
LIBLINEAR's primal and llsvm's primal by one definition (numpy over the same rows), llsvm's certified duality gap
(P - D of its result) and LIBLINEAR's primal above the certified lower bound D. Sets: the generated dense set
(scripts/gen_data.py dense, seeds 1-3, --rows rows each) and skin_nonskin (245,057 x 3, unscaled: LIBLINEAR's dual
stops at its 1000-iteration limit there).

    python scripts/bench_dense.py [--rows 400000] [--seeds 1,2,3] [--shared skin_nonskin] [--repeats 3]
                                  [--tmp DIR] [--out FILE.md]
"""
import argparse
import os
import statistics
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchutil import ensure_binary, issue_sets, ll_W, md_header, md_row, print_report, say, srand  # noqa: E402

import llsvm  # noqa: E402
from bench_threads import primal  # noqa: E402

OPTS = "-s 3 -c 1 -B 1 -q"


def bench_set(name, path, repeats):
    from liblinear import liblinear as L
    from liblinear.liblinearutil import toPyModel
    ds = llsvm.read_dataset(path)
    X = ds.to_csr()
    param = L.parameter(OPTS)
    prob = L.problem(ds.y, X)
    prob.set_bias(param.bias)
    L.liblinear.set_print_string_function(L.ctypes_print_null)
    t_ll, t_us = [], []
    for _ in range(repeats):                 # interleaved: one of each per round
        srand(1)
        t0 = time.perf_counter()
        m_ll = toPyModel(L.liblinear.train(prob, param))
        t_ll.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        model = llsvm.train(ds, solver=3, C=1.0, bias=1.0, threads=1, say=lambda *a, **k: None)
        t_us.append(time.perf_counter() - t0)
    labels = [int(v) for v in m_ll.get_labels()]
    y = np.where(np.trunc(ds.y) == labels[0], 1.0, -1.0)
    w_ll = ll_W(m_ll, ds.n_features, 1.0)[:, 0]
    w = model.W[:, 0] * (1 if int(model.label[0]) == labels[0] else -1)
    r = model.meta["results"][0]
    p_ll, p_us = primal(3, X, y, w_ll), primal(3, X, y, w)
    row = {"set": name, "rows": ds.n_rows, "features": ds.n_features, "liblinear_s": statistics.median(t_ll),
           "llsvm_s": statistics.median(t_us), "primal_liblinear": p_ll, "primal_llsvm": p_us, "dual_llsvm": r.dual,
           "rel_gap_llsvm": (p_us - r.dual) / p_us, "liblinear_above_optimum": p_ll / r.dual - 1,
           "switched": bool(r.extra.get("switched_to_primal")), "dcd_iter": r.n_iter, "converged": r.converged}
    row["ratio"] = row["llsvm_s"] / row["liblinear_s"]
    say(f"# {name}: LIBLINEAR {row['liblinear_s']:.3f} s (primal {p_ll:.2f}, {100 * row['liblinear_above_optimum']:.2g} "
        f"% above the certified bound), llsvm {row['llsvm_s']:.3f} s ({row['ratio']:.2f}x, primal {p_us:.2f}, "
        f"gap {row['rel_gap_llsvm']:.1e}, switched {row['switched']})")
    return row


def dense_markdown(rows):
    lines = md_header(["set", "rows x features", "LIBLINEAR s", "llsvm s (ratio)", "llsvm: dual iterations, switched",
                       "llsvm relative gap (certified)", "LIBLINEAR's primal above the optimum"])
    for r in rows:
        lines.append(md_row([r["set"], f"{r['rows']} x {r['features']}", f"{r['liblinear_s']:.3f}",
                             f"{r['llsvm_s']:.3f} ({r['ratio']:.2f}x)", f"{r['dcd_iter']}, {r['switched']}",
                             f"{r['rel_gap_llsvm']:.1e}", f"{100 * r['liblinear_above_optimum']:+.3g} %"]))
    return "\n".join(lines) + "\n"


def bench_dense(tmp, rows=400000, seeds=(1, 2, 3), shared=("skin_nonskin",), repeats=3):
    sets = issue_sets(tmp, rows, seeds, shared, dense=False, kind="dense")
    return [bench_set(name, ensure_binary(path, path + ".bin"), repeats) for name, path in sets]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=400000)
    ap.add_argument("--seeds", default="1,2,3")
    ap.add_argument("--shared", default="skin_nonskin")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--tmp", default=None, help="where the generated sets are (made when missing)")
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    tmp = args.tmp or tempfile.mkdtemp(prefix="bench-dense-")
    rows = bench_dense(tmp, args.rows, [int(s) for s in args.seeds.split(",") if s],
                       [s for s in args.shared.split(",") if s], args.repeats)
    print_report("# -s 3 where n >> d (same run)\n\n" + dense_markdown(rows), args.out)
    return rows


if __name__ == "__main__":
    main()
