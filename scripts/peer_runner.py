"""The child process of `make bench` part `peers` (scripts/bench_peers.py): one trainer, llsvm's or a peer's, timed
in its own process on data loaded beforehand.

It runs in llsvm's .venv (tasks llsvm_*) or in the peers' venv (snapml_*, sklearnex_svc, vw_*), which has no llsvm:
so it imports nothing of this repository and only NumPy/SciPy at the top.

Protocol: one JSON request per line on stdin, one JSON answer per line on stdout, each answer line starting with
PREFIX (the libraries print on stdout as they please: their fd 1 is pointed at stderr, the answers go to a
duplicate of the original stdout). Requests:
  {"op": "load", "npz": PATH}         the CSR matrix and labels written by the harness (data, indices, indptr,
                                      shape, y): {"rows", "nnz", "seconds"}
  {"op": "fit", "task": T, "params": {...}, "out": PATH or null}
                                      one training call on the loaded rows, timed alone: {"seconds" (wall),
                                      "cpu" (user + system of the process during the call, every thread),
                                      "maxrss_mb" (the process's peak RSS during the request, the loaded data
                                      included), "w", "b" (linear tasks: the weights
                                      with +1 the positive class of the labels), kernel tasks write their support
                                      vectors and coefficients to "out" (npz)}
  {"op": "vw", "args": STRING}        Vowpal Wabbit run over its own file (-d in args), end to end inside this
                                      process (workspace, pass over the file, model written): {"seconds", "cpu",
                                      "maxrss_mb"}
  {"op": "versions"}                  the packages' versions
  {"op": "quit"}
An answer with "error" reports a request that failed (the process goes on).
"""
import json
import os
import resource
import sys
import time
import traceback

PREFIX = "@@peer "


def _cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def _reset_peak():
    """Start a new peak RSS measure (Linux: writing 5 to clear_refs resets VmHWM to the current RSS), so that each
    answer's peak is that request's (the data already loaded included), not the process's since its start."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        pass


def _maxrss_mb():
    """The peak RSS since the last _reset_peak (VmHWM), or since the start where it cannot be reset (ru_maxrss)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


class Runner:
    def __init__(self):
        self.X = None
        self.y = None

    # -- requests ---------------------------------------------------------------------------------------------------
    def load(self, npz):
        import numpy as np
        import scipy.sparse as sp
        t = time.perf_counter()
        with np.load(npz) as z:
            self.X = sp.csr_matrix((z["data"], z["indices"], z["indptr"]), shape=tuple(z["shape"]))
            self.y = z["y"].copy()
        self.dense = None
        return {"rows": self.X.shape[0], "nnz": int(self.X.nnz), "seconds": time.perf_counter() - t}

    def fit(self, task, params, out=None):
        fn = getattr(self, "fit_" + task, None)
        if fn is None:
            raise ValueError(f"unknown task {task!r}")
        prepare = getattr(self, "prepare_" + task, None)
        _reset_peak()
        state = prepare(params) if prepare else None          # conversions of the input: not timed
        c0 = _cpu()
        t = time.perf_counter()
        model = fn(params, state)
        seconds = time.perf_counter() - t
        cpu = _cpu() - c0
        answer = {"seconds": seconds, "cpu": cpu}
        answer.update(getattr(self, "result_" + task)(model, params, out))
        answer["maxrss_mb"] = _maxrss_mb()
        return answer

    def versions(self):
        from importlib import metadata
        out = {"python": sys.version.split()[0]}
        for dist, mod in (("numpy", "numpy"), ("scipy", "scipy"), ("scikit-learn", "sklearn"), ("snapml", "snapml"),
                          ("scikit-learn-intelex", "sklearnex"), ("vowpalwabbit", "vowpalwabbit"),
                          ("llsvm", "llsvm")):
            try:
                __import__(mod)                 # importable here, not only installed
                out[dist] = metadata.version(dist)
            except Exception:
                pass
        return out

    # -- llsvm ------------------------------------------------------------------------------------------------------
    def prepare_llsvm_linear(self, params):
        from llsvm.dataset import CSRDataset
        return CSRDataset.from_csr(self.X, self.y)

    def fit_llsvm_linear(self, p, ds):
        import llsvm
        return llsvm.train(ds, solver=p["solver"], C=p.get("C", 1.0), bias=p.get("bias", 1.0),
                           threads=p.get("threads", 1), eps=p.get("eps"), say=lambda s: None)

    def result_llsvm_linear(self, m, p, out):
        sign = 1.0 if float(m.label[0]) == 1.0 else -1.0
        W = m.W[:, 0] * sign
        r = m.meta["results"][0]
        has_bias = p.get("bias", 1.0) >= 0 and W.size == self.X.shape[1] + 1
        return {"w": W[:self.X.shape[1]].tolist(), "b": float(W[-1]) * p.get("bias", 1.0) if has_bias else 0.0,
                "n_iter": int(r.n_iter), "converged": bool(r.converged)}

    def prepare_llsvm_smo(self, params):
        return self.prepare_llsvm_linear(params)

    def fit_llsvm_smo(self, p, ds):
        import llsvm
        from llsvm.options import SMOOptions
        from llsvm.params import Params
        params = Params(solver="smo", C=p.get("C", 1.0), threads=p.get("threads", 1),
                        options=SMOOptions(kernel_type=2, gamma=p["gamma"], ws=p.get("ws", 0)))
        return llsvm.train(ds, params=params, say=lambda s: None)

    def result_llsvm_smo(self, m, p, out):
        import numpy as np
        SV = m.SV.to_csr()
        np.savez(out, data=SV.data, indices=SV.indices, indptr=SV.indptr, shape=np.array(SV.shape),
                 coef=np.asarray(m.sv_coef, dtype=np.float64), nSV=np.asarray(m.nSV, dtype=np.int64))
        return {"nSV": int(m.total_sv), "n_iter": int(sum(r.n_iter for r in m.meta["results"]))}

    # -- Snap ML ----------------------------------------------------------------------------------------------------
    def prepare_snapml_svm(self, params):
        import numpy as np
        X = self.X
        if params.get("dense"):
            if self.dense is None:
                self.dense = np.ascontiguousarray(X.toarray())
            X = self.dense
        return X

    prepare_snapml_logreg = prepare_snapml_svm

    def fit_snapml_svm(self, p, X):
        from snapml import SupportVectorMachine
        # Snap ML's objective: regularizer/2 ||w||^2 + sum_i loss_i (checked against LIBLINEAR's optimum: C = 1 is
        # regularizer = 1); its intercept is an extra feature of value intercept_scaling, regularized as LIBLINEAR's
        # -B 1 bias
        return SupportVectorMachine(loss=p.get("loss", "hinge"), regularizer=1.0 / p.get("C", 1.0),
                                    fit_intercept=p.get("bias", 1.0) > 0, intercept_scaling=p.get("bias", 1.0),
                                    n_jobs=p.get("threads", 1), **p.get("extra", {})).fit(X, self.y)

    def fit_snapml_logreg(self, p, X):
        from snapml import LogisticRegression
        return LogisticRegression(regularizer=1.0 / p.get("C", 1.0), fit_intercept=p.get("bias", 1.0) > 0,
                                  intercept_scaling=p.get("bias", 1.0), n_jobs=p.get("threads", 1),
                                  **p.get("extra", {})).fit(X, self.y)

    def result_snapml_svm(self, m, p, out):
        import numpy as np
        w = np.ravel(m.coef_).astype(np.float64)
        b = float(np.ravel(m.intercept_)[0]) if p.get("bias", 1.0) > 0 else 0.0
        if list(np.ravel(m.classes_)) != [-1.0, 1.0]:
            raise ValueError(f"labels {m.classes_}: the harness gives -1 and +1")
        return {"w": w.tolist(), "b": b}

    result_snapml_logreg = result_snapml_svm

    # -- scikit-learn-intelex (oneDAL) ------------------------------------------------------------------------------
    def prepare_sklearnex_svc(self, params):
        import logging
        import daal4py
        daal4py.daalinit(int(params.get("threads", 1)))        # oneDAL's thread count (its own control)
        if not hasattr(self, "_log"):
            self._log = []

            class H(logging.Handler):
                def emit(h, record):
                    self._log.append(record.getMessage())

            lg = logging.getLogger("sklearnex")
            lg.addHandler(H())
            lg.setLevel(logging.INFO)
        X = self.X
        if params.get("dense", True):
            if self.dense is None:
                import numpy as np
                self.dense = np.ascontiguousarray(X.toarray())
            X = self.dense
        del self._log[:]
        return X

    def fit_sklearnex_svc(self, p, X):
        from sklearnex.svm import SVC
        return SVC(C=p.get("C", 1.0), kernel="rbf", gamma=p["gamma"], tol=p.get("tol", 1e-3),
                   cache_size=p.get("cache_mb", 100), shrinking=True).fit(X, self.y)

    def result_sklearnex_svc(self, m, p, out):
        import daal4py
        import numpy as np
        SV = self.X[m.support_]
        np.savez(out, data=SV.data, indices=SV.indices, indptr=SV.indptr, shape=np.array(SV.shape),
                 coef=np.asarray(m.dual_coef_, dtype=np.float64), nSV=np.asarray(m.n_support_, dtype=np.int64))
        accelerated = any("accelerated" in s for s in self._log) and not any("fallback" in s.lower()
                                                                              for s in self._log)
        return {"nSV": int(m.support_.size), "accelerated": accelerated, "threads_set": daal4py.num_threads(),
                "log": self._log[-2:]}

    # -- Vowpal Wabbit ----------------------------------------------------------------------------------------------
    def vw(self, args):
        import vowpalwabbit
        _reset_peak()
        c0 = _cpu()
        t = time.perf_counter()
        ws = vowpalwabbit.Workspace(args + " --quiet")
        ws.run_parser()
        ws.finish()
        return {"seconds": time.perf_counter() - t, "cpu": _cpu() - c0, "maxrss_mb": _maxrss_mb()}


def main():
    proto = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)                           # whatever the libraries print goes to stderr
    sys.stdout = sys.stderr
    runner = Runner()
    for line in sys.stdin:
        if not line.strip():
            continue
        req = json.loads(line)
        op = req.get("op")
        if op == "quit":
            break
        try:
            if op == "load":
                ans = runner.load(req["npz"])
            elif op == "fit":
                ans = runner.fit(req["task"], req.get("params", {}), req.get("out"))
            elif op == "vw":
                ans = runner.vw(req["args"])
            elif op == "versions":
                ans = runner.versions()
            else:
                raise ValueError(f"unknown op {op!r}")
        except Exception as e:
            traceback.print_exc()
            ans = {"error": f"{type(e).__name__}: {e}"}
        proto.write(PREFIX + json.dumps(ans) + "\n")
        proto.flush()


if __name__ == "__main__":
    main()
