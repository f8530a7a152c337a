"""Part `peers` of `make bench` (issue 49): llsvm against the tools a user would pick for speed, same data, same
rounds, every figure a ratio peer ÷ llsvm of the same round (above 1: llsvm is faster), peak RSS beside it.

The peers live in their own venv, made or updated when asked (`--peers`; `make bench BENCH_ARGS="--parts peers
--peers"`): bench-results/peers-venv (untracked; --peers-venv DIR), with Snap ML (snapml), Vowpal Wabbit
(vowpalwabbit) and scikit-learn-intelex (oneDAL), and the NumPy, SciPy and scikit-learn they run on (PEER_PINS).
A peer that cannot be installed or imported is reported as such and the others run. Every trainer, llsvm's
included, runs in a child process (scripts/peer_runner.py: llsvm's in .venv, the peers' in the peers' venv; fresh
ones for each set) that loads the same CSR matrix (an .npz written by this harness from llsvm's reading of the
file) before any clock starts and times its training call alone (wall, and the process's CPU seconds during the
call: the threads actually used), reporting the peak RSS of that call (VmHWM reset before it: the loaded rows
included, alike for all). Runs are interleaved: round 1 of every trainer, then round 2, ...; the ratio is the
median of the rounds' ratios.

  (a) kernel: llsvm `-s smo` (C-SVC, RBF, C = 1, gamma = 1/features, -e 0.001: LIBSVM's defaults) with --threads
      1 and 2 against scikit-learn-intelex's `SVC` (same C, gamma, tol; oneDAL's threads set by
      daal4py.daalinit(n), dense input: these sets have at most 256 features) and LIBSVM's `svm-train` (the whole
      command, one thread: --libsvm-dir, $LLSVM_LIBSVM_DIR or $LIBSVM_DIR, bench_cli.reference_cli); training time; "same model"
      evidence: nSV and the dual objective of both by one definition (rbf_dual below); whether oneDAL ran its
      accelerated code (its log) and the CPU/wall of its call. Sets: a9a, usps.t, mushrooms, dna.scale and a
      50,000-row sample of skin_nonskin (seed 0) of data/public.
  (b) two threads, linear: llsvm `-s 3|1|2|0 -c 1 -B 1 --threads 2` against Snap ML's `SupportVectorMachine`
      (hinge for -s 3, squared hinge for -s 1 and -s 2) / `LogisticRegression` (-s 0), n_jobs=2, regularizer =
      1/C, fit_intercept with intercept_scaling 1 (a regularized bias feature, as -B 1), from the same CSR matrix;
      the primal of each model by one definition (bench_threads.primal); on the generated sparse sets (seeds
      --peers-seeds) and the dense set (seed 2), quiet and beside two CPU-bound processes (bench_contention.Hogs).
  (c) out of core: bench_ooc's -s llsvm and -s streamsvm at --memory 64M against in-memory -s 3 (whole commands
      from the binary file), and, for information, Vowpal Wabbit one pass with the hinge loss over its own text
      file (the same rows, VW's format), end to end in its process, its primal by the same definition.
  (d) conversion: the in-memory parse (one thread) and llsvm-convert (default threads, whole command) of the
      generated sparse set, and VW's reader (--noop over its text file): MB/s of each one's file.

    python scripts/bench_peers.py [--peers] [--peers-scale small|full|FRACTION] [--peers-parts kernel,linear,ooc,
        convert] [--peers-seeds 1,2,3,4] [--peers-modes quiet,busy] [--repeats 3] [--out FILE.md] [--json FILE]

--peers-scale small: a smoke run (20,000-row generated sets, two seeds, the three smallest kernel sets, --memory 16M);
full (the default): the issue's sizes (500,000 rows, the full kernel sets).
"""
import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from benchutil import (DATA_DIR, ROOT, issue_sets, md_header, md_row, print_report, run_measured, say,  # noqa: E402
                       shared_file)

RUNNER = os.path.join(HERE, "peer_runner.py")
PREFIX = "@@peer "
VENV = os.path.join(ROOT, "bench-results", "peers-venv")
# what the peers' venv holds: each peer installed on its own (one that fails leaves the others), on these
PEER_PINS = ("numpy==2.4.6", "scipy==1.17.1", "scikit-learn==1.9.1", "threadpoolctl==3.8.0")
PEERS = {"snapml": "snapml==1.17.2", "vowpalwabbit": "vowpalwabbit==9.11.9",
         "sklearnex": "scikit-learn-intelex==2026.2.0"}
KERNEL_SETS = ("a9a", "usps.t", "mushrooms", "dna.scale", "skin_nonskin")
SMALL_KERNEL_SETS = ("dna.scale", "mushrooms", "skin_nonskin")
SKIN_SAMPLE = 50_000
LINEAR = ((3, "snapml_svm", {"loss": "hinge"}), (1, "snapml_svm", {"loss": "squared_hinge"}),
          (2, "snapml_svm", {"loss": "squared_hinge"}), (0, "snapml_logreg", {}))
HOGS = 2

DEFINITIONS = {
    "kernel": "training call's wall seconds (data loaded and converted beforehand; LIBSVM: the whole svm-train "
              "command) ; ratio = peer ÷ llsvm at the same threads, same round, median over rounds; dual D = "
              "sum over class pairs of sum|a| - 1/2 a'Ka (RBF, one NumPy definition for both models); peak RSS of "
              "the trainer's process during the call (its loaded rows included)",
    "linear": "training call's wall seconds (fit / llsvm.train on the same CSR matrix loaded beforehand, 2 "
              "threads); ratio = Snap ML ÷ llsvm, same round, median over rounds; primal = 1/2 (|w|^2 + b^2) + C "
              "sum loss(y (w.x + b)) of each model by one NumPy definition (the bias regularized as -B 1's); "
              "busy = beside two CPU-bound processes",
    "ooc": "whole commands from the binary file in the page cache (bench_ooc), wall ratio to in-memory -s 3 of the "
           "same round; VW: one pass, hinge loss, its text file, workspace to model written, in its process",
    "convert": "MB/s of each reader's own file (the LIBSVM text; VW's text of the same rows); ratio = llsvm-convert "
               "MB/s ÷ the other's (above 1: llsvm-convert faster)",
}


class PeerError(RuntimeError):
    """A runner that failed a request, died or answered something else than the protocol."""


# -- the peers' venv ------------------------------------------------------------------------------------------------
def venv_python(venv):
    return os.path.join(venv, "bin", "python")


def install_peers(venv, say=say):
    """Make or update the peers' venv (pip from PyPI): {"seconds", "mb", "failed": {peer: error}}."""
    t0 = time.perf_counter()
    failed = {}
    if not os.path.exists(venv_python(venv)):
        subprocess.run([sys.executable, "-m", "venv", venv], check=True)
    pip = [venv_python(venv), "-m", "pip", "install", "-q", "--disable-pip-version-check", "--only-binary=:all:"]
    p = subprocess.run(pip + list(PEER_PINS), capture_output=True, text=True)
    if p.returncode != 0:
        failed["base"] = p.stderr[-800:]
    for peer, req in PEERS.items():
        say(f"# peers: pip install {req} into {venv}")
        p = subprocess.run(pip + [req] + list(PEER_PINS), capture_output=True, text=True)
        if p.returncode != 0:
            failed[peer] = p.stderr.strip().splitlines()[-1] if p.stderr.strip() else f"pip exited {p.returncode}"
            say(f"# peers: {peer} could not be installed: {failed[peer]}")
    size = subprocess.run(["du", "-sm", venv], capture_output=True, text=True).stdout.split()
    return {"seconds": time.perf_counter() - t0, "mb": int(size[0]) if size else None, "failed": failed}


# -- the runner protocol ----------------------------------------------------------------------------------------------
class Runner:
    """A child process speaking scripts/peer_runner.py's protocol: `python` (a venv's interpreter), env extra."""

    def __init__(self, python, name, env=None, script=RUNNER):
        self.name = name
        self.err = tempfile.TemporaryFile()
        full = dict(os.environ, **(env or {}))
        self.proc = subprocess.Popen([python, script], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self.err, text=True, env=full)

    def ask(self, **req):
        """The answer to one request (a dict); PeerError when the runner reports an error or dies."""
        try:
            self.proc.stdin.write(json.dumps(req) + "\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            raise PeerError(f"{self.name}: runner gone: {self._stderr()}")
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise PeerError(f"{self.name}: runner exited ({self.proc.poll()}): {self._stderr()}")
            if line.startswith(PREFIX):
                ans = json.loads(line[len(PREFIX):])
                if "error" in ans:
                    raise PeerError(f"{self.name}: {ans['error']}")
                return ans

    def _stderr(self):
        self.err.seek(0)
        return self.err.read().decode(errors="replace")[-1500:]

    def close(self):
        if self.proc.poll() is None:
            try:
                self.proc.stdin.write(json.dumps({"op": "quit"}) + "\n")
                self.proc.stdin.close()
                self.proc.wait(timeout=30)
            except (BrokenPipeError, OSError, subprocess.TimeoutExpired):
                self.proc.kill()
                self.proc.wait()
        self.err.close()


def llsvm_runner():
    """The runner in this interpreter (llsvm's .venv), importing this repository's llsvm."""
    pp = os.environ.get("PYTHONPATH")
    return Runner(sys.executable, "llsvm", {"PYTHONPATH": ROOT + (os.pathsep + pp if pp else "")})


def peer_runner(venv):
    """The runner in the peers' venv (PYTHONPATH cleared: nothing of this repository), or None without the venv."""
    if not os.path.exists(venv_python(venv)):
        return None
    return Runner(venv_python(venv), "peers", {"PYTHONPATH": ""})


def write_npz(path, X, y):
    """The CSR matrix and labels both runners load (int32 indices: Snap ML's and scikit-learn's sparse input)."""
    X = X.tocsr()
    np.savez(path, data=np.asarray(X.data, dtype=np.float64), indices=X.indices.astype(np.int32),
             indptr=X.indptr.astype(np.int64 if X.nnz >= 2 ** 31 else np.int32), shape=np.array(X.shape),
             y=np.asarray(y, dtype=np.float64))
    return path


def read_npz_csr(path, prefix=""):
    import scipy.sparse as sp
    with np.load(path) as z:
        return sp.csr_matrix((z["data"], z["indices"], z["indptr"]), shape=tuple(z["shape"])), \
            {k: z[k] for k in z.files if k not in ("data", "indices", "indptr", "shape")}


# -- one definition of each objective ---------------------------------------------------------------------------------
def linear_primal(solver, X, y, w, b, C=1.0):
    """LIBLINEAR's primal of solver -s 0|1|2|3 with -B 1 for weights w and bias b (b the weight of a constant
    feature 1, regularized): bench_threads.primal, the same for every model."""
    from bench_threads import primal
    return primal(solver, X, y, np.append(np.asarray(w, dtype=np.float64), b), C=C, bias=1.0)


def rbf_dual(SV, coef, nSV, gamma, block=2048):
    """D = sum over the one-vs-one pairs (i, j) of sum |a| - 1/2 a'Ka, K the RBF kernel exp(-gamma |u - v|^2) of
    the pair's support vectors and a their coefficients in LIBSVM's layout (sv_coef[j-1] on class i's SVs,
    sv_coef[i] on class j's: scikit-learn's dual_coef_ too). SV: a CSR matrix; the quadratic form by row blocks
    (memory: block x nSV)."""
    SV = SV.tocsr()
    coef = np.atleast_2d(np.asarray(coef, dtype=np.float64))
    nSV = np.asarray(nSV, dtype=np.int64)
    sq = np.asarray(SV.multiply(SV).sum(axis=1)).ravel()
    start = np.concatenate([[0], np.cumsum(nSV)[:-1]])
    total = 0.0
    for i in range(nSV.size):
        for j in range(i + 1, nSV.size):
            idx = np.concatenate([np.arange(start[i], start[i] + nSV[i]), np.arange(start[j], start[j] + nSV[j])])
            a = np.concatenate([coef[j - 1][start[i]:start[i] + nSV[i]], coef[i][start[j]:start[j] + nSV[j]]])
            S, s2 = SV[idx], sq[idx]
            quad = 0.0
            for k in range(0, idx.size, block):
                G = np.asarray((S[k:k + block] @ S.T).todense())
                K = np.exp(-gamma * np.maximum(s2[k:k + block, None] + s2[None, :] - 2.0 * G, 0.0))
                quad += float(a[k:k + block] @ (K @ a))
            total += float(np.abs(a).sum()) - 0.5 * quad
    return total


# -- the parts --------------------------------------------------------------------------------------------------------
def _median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def _fit(runner, task, params, out=None):
    """A runner's answer to one fit, or {"error": ...} (the part goes on)."""
    if runner is None:
        return {"error": "not installed"}
    try:
        return runner.ask(op="fit", task=task, params=params, out=out)
    except PeerError as e:
        say(f"# peers: {e}")
        return {"error": str(e)[:300]}


def _summary(rounds, base, other):
    """Median seconds, CPU, peak RSS of `other` and the median over rounds of other ÷ base."""
    ok = [r for r in rounds if "error" not in r[other] and "error" not in r[base]]
    return {"ratio": _median([r[other]["seconds"] / r[base]["seconds"] for r in ok]) if ok else None,
            "seconds": _median([r[other].get("seconds") for r in rounds if "error" not in r[other]]),
            "cpu": _median([r[other].get("cpu") for r in rounds if "error" not in r[other]]),
            "maxrss_mb": max([r[other].get("maxrss_mb", 0) for r in rounds if "error" not in r[other]], default=None),
            "error": next((r[other]["error"] for r in rounds if "error" in r[other]), None)}


def kernel_sets(tmp, names, skin_rows):
    """[(name, LIBSVM text path)]: the public sets of data/public (decompressed), skin_nonskin as a fixed sample of
    skin_rows rows (numpy default_rng(0), rows in file order)."""
    import llsvm
    from llsvm.io import dump_text
    out = []
    for name in names:
        path = shared_file(DATA_DIR, name, tmp)
        if path is None:
            say(f"# peers: {name} not in data/public (make data), skipped")
            continue
        if name == "skin_nonskin":
            ds = llsvm.read_dataset(path)
            if ds.n_rows > skin_rows:
                keep = np.sort(np.random.default_rng(0).choice(ds.n_rows, skin_rows, replace=False))
                path = os.path.join(tmp, f"skin_nonskin-{skin_rows}")
                dump_text(ds.take_rows(keep), path)
                name = f"skin_nonskin ({skin_rows:,}-row sample, seed 0)"
        out.append((name, path))
    return out


class Runners:
    """Fresh runners for one set, closed after it (`with Runners(venv, npz) as (ll, peer)`): llsvm's, and the peers'
    (None without their venv), both with the same rows loaded when npz is given (a peer's failure to load is
    reported; its cells then fail). Fresh per set: nothing of an earlier set stays in their memory."""

    def __init__(self, venv, npz=None, llsvm=True):
        self.venv, self.npz, self.want_ll = venv, npz, llsvm

    def __enter__(self):
        self.ll = llsvm_runner() if self.want_ll else None
        self.peer = peer_runner(self.venv)
        if self.npz:
            self.ll.ask(op="load", npz=self.npz)
            if self.peer is not None:
                try:
                    self.peer.ask(op="load", npz=self.npz)
                except PeerError as e:
                    say(f"# peers: {e}")
        return self.ll, self.peer

    def __exit__(self, *exc):
        for r in (self.ll, self.peer):
            if r is not None:
                r.close()
        return False


def _kernel_rounds(tmp, path, gamma, ll, peer, libsvm_dir, repeats, ws=0):
    """Interleaved rounds on one set: llsvm and oneDAL on 1 thread, on 2, then svm-train (a whole command).
    ws: llsvm's --ws (0: LIBSVM's pair solver, the default)."""
    svm_train = os.path.join(libsvm_dir, "svm-train") if libsvm_dir else None
    rounds = {1: [], 2: []}
    lib = []
    for _ in range(repeats):
        for t in (1, 2):
            rounds[t].append({"llsvm": _fit(ll, "llsvm_smo", {"C": 1.0, "gamma": gamma, "threads": t, "ws": ws},
                                            os.path.join(tmp, f"llsvm-smo-{t}.npz")),
                              "sklearnex": _fit(peer, "sklearnex_svc", {"C": 1.0, "gamma": gamma, "threads": t},
                                                os.path.join(tmp, f"sklearnex-{t}.npz"))})
        if svm_train and os.path.exists(svm_train):
            try:
                wall, rss, cpu = run_measured([svm_train, "-q", "-g", repr(gamma), path,
                                               os.path.join(tmp, "libsvm.model")], cpu=True)
                lib.append({"seconds": wall, "cpu": cpu, "maxrss_mb": rss})
            except RuntimeError as e:
                lib.append({"error": str(e)[:300]})
    return rounds, lib


def bench_kernel(tmp, sets, venv, libsvm_dir, repeats, ws=0):
    import llsvm
    rows = []
    for name, path in sets:
        ds = llsvm.read_dataset(path)
        gamma = 1.0 / ds.n_features
        npz = write_npz(os.path.join(tmp, "kernel.npz"), ds.to_csr(), ds.y)
        row = {"set": name, "rows": ds.n_rows, "features": ds.n_features, "gamma": gamma, "ws": ws, "threads": {}}
        del ds
        with Runners(venv, npz) as (ll, peer):
            rounds, lib = _kernel_rounds(tmp, path, gamma, ll, peer, libsvm_dir, repeats, ws)
        for t in (1, 2):
            rs = rounds[t]
            cell = {"llsvm": _summary(rs, "llsvm", "llsvm"), "sklearnex": _summary(rs, "llsvm", "sklearnex")}
            for who, pre in (("llsvm", "llsvm-smo"), ("sklearnex", "sklearnex")):
                last = rs[-1][who]
                if "error" in last:
                    continue
                SV, z = read_npz_csr(os.path.join(tmp, f"{pre}-{t}.npz"))
                cell[who].update(nSV=last["nSV"], dual=rbf_dual(SV, z["coef"], z["nSV"], gamma),
                                 accelerated=last.get("accelerated"))
            if lib and t == 1:
                ok = [(a["llsvm"]["seconds"], b) for a, b in zip(rs, lib) if "error" not in b
                      and "error" not in a["llsvm"]]
                cell["svm-train"] = {"seconds": _median([b["seconds"] for _, b in ok]),
                                     "maxrss_mb": max([b["maxrss_mb"] for _, b in ok], default=None),
                                     "ratio": _median([b["seconds"] / s for s, b in ok]),
                                     "error": next((b["error"] for b in lib if "error" in b), None)}
            row["threads"][t] = cell
        say(f"# peers kernel {name}: {json.dumps(row['threads'], default=str)}")
        rows.append(row)
    return rows


def bench_linear(tmp, sets, venv, repeats, modes, eps=None):
    import llsvm
    rows = []
    for name, path in sets:
        ds = llsvm.read_dataset(path)
        first = ds.y[0]
        y = np.where(ds.y == first, 1.0, -1.0)             # the first row's class is +1 (LIBLINEAR's label order)
        X = ds.to_csr()
        npz = write_npz(os.path.join(tmp, "linear.npz"), X, y)
        n_rows, nnz = ds.n_rows, ds.nnz
        del ds
        with Runners(venv, npz) as (ll, peer):
            rows += _linear_rows(name, X, y, n_rows, nnz, ll, peer, repeats, modes, eps)
        del X
    return rows


def _linear_rows(name, X, y, n_rows, nnz, ll, peer, repeats, modes, eps=None):
    """Every -s and mode on one set (both runners holding its rows): interleaved rounds, primal by one definition.
    eps: llsvm's -e (None: LIBLINEAR's default of each -s)."""
    from bench_contention import Hogs
    rows = []
    for mode in modes:
        with Hogs(HOGS if mode == "busy" else 0):
            for solver, task, extra in LINEAR:
                rounds = []
                for _ in range(repeats):
                    rounds.append({
                        "llsvm": _fit(ll, "llsvm_linear", {"solver": solver, "C": 1.0, "bias": 1.0,
                                                           "threads": 2, "eps": eps}),
                        "snapml": _fit(peer, task, dict(extra, C=1.0, bias=1.0, threads=2))})
                row = {"set": name, "rows": n_rows, "nnz": nnz, "solver": solver, "mode": mode, "eps": eps,
                       "peer": "SupportVectorMachine" if task == "snapml_svm" else "LogisticRegression",
                       "loss": extra.get("loss", "logistic"),
                       "llsvm": _summary(rounds, "llsvm", "llsvm"), "snapml": _summary(rounds, "llsvm", "snapml")}
                for who in ("llsvm", "snapml"):
                    last = rounds[-1][who]
                    if "error" not in last:
                        row[who]["primal"] = linear_primal(solver, X, y, last["w"], last["b"])
                if row["llsvm"].get("primal") and row["snapml"].get("primal"):
                    row["primal_rel"] = row["snapml"]["primal"] / row["llsvm"]["primal"] - 1.0
                say(f"# peers linear {name} -s {solver} {mode}: llsvm {row['llsvm']['seconds']:.3f} s, "
                    f"Snap ML {row['snapml']['seconds'] or float('nan'):.3f} s, ratio {row['snapml']['ratio']}")
                rows.append(row)
    return rows


def svmlight_to_vw(src, dst, chunk=64 << 20):
    """The same rows in Vowpal Wabbit's text format: `LABEL | i:v ...` (the label +1/-1 as written, the features
    in VW's default namespace), converted by a regular expression over whole blocks of lines."""
    pat = re.compile(rb"(?m)^(\S+)")
    with open(src, "rb") as f, open(dst + ".part", "wb") as g:
        rest = b""
        while True:
            buf = f.read(chunk)
            if not buf:
                break
            buf = rest + buf
            cut = buf.rfind(b"\n") + 1
            rest = buf[cut:]
            g.write(pat.sub(rb"\1 |", buf[:cut]))
        if rest:
            g.write(pat.sub(rb"\1 |", rest) + b"\n")
    os.replace(dst + ".part", dst)
    return dst


def vw_primal(raw_path, readable_path, y, C=1.0):
    """The hinge primal of a VW model by the same definition: 1/2 |w|^2 (every weight of its readable model, the
    constant's included) + C sum max(0, 1 - y m), m its raw predictions on the training rows."""
    m = np.loadtxt(raw_path, dtype=np.float64, usecols=0, ndmin=1)
    w = []
    with open(readable_path) as f:
        for line in f:
            if re.match(r"^\d+:", line):
                w.append(float(line.split(":", 1)[1].split()[0]))
    w = np.asarray(w)
    return 0.5 * float(w @ w) + C * float(np.maximum(0.0, 1.0 - y * m).sum())


def bench_ooc_peers(tmp, sets, venv, memory, repeats):
    from bench_ooc import bench_set
    from benchutil import ensure_binary
    rows = []
    for name, path in sets:
        binpath = ensure_binary(path, path + ".bin", say)
        row = bench_set(name, binpath, memory, repeats, tmp)
        vwfile = svmlight_to_vw(path, path + ".vw")
        with Runners(venv, llsvm=False) as (_, peer):
            row["vw"] = _vw_one_pass(tmp, path, vwfile, row, peer, repeats)
        rows.append(row)
    return rows


def _vw_one_pass(tmp, path, vwfile, row, peer, repeats):
    """VW's one pass (hinge) over its file: median wall, ratio to -s 3's, its primal by the same definition."""
    import llsvm
    model, readable, raw = (os.path.join(tmp, x) for x in ("vw.model", "vw.readable", "vw.raw"))
    runs = []
    if peer is not None:
        for _ in range(repeats):
            try:
                runs.append(peer.ask(op="vw", args=f"-d {vwfile} --loss_function hinge --passes 1 -f {model} "
                                                   f"--readable_model {readable}"))
            except PeerError as e:
                runs.append({"error": str(e)[:300]})
                break
    ok = [r for r in runs if "error" not in r]
    vw = {"seconds": _median([r["seconds"] for r in ok]), "cpu": _median([r["cpu"] for r in ok]),
          "maxrss_mb": max([r["maxrss_mb"] for r in ok], default=None),
          "error": next((r["error"] for r in runs if "error" in r), None if peer else "not installed")}
    if ok:
        vw["ratio_to_s3"] = vw["seconds"] / row["solvers"]["s3"]["wall_s"]
        try:
            peer.ask(op="vw", args=f"-d {vwfile} -t -i {model} -r {raw}")
            ds = llsvm.read_dataset(path)
            y = np.where(ds.y > 0, 1.0, -1.0)           # VW's labels: the sign as written
            del ds
            vw["primal"] = vw_primal(raw, readable, y)
            vw["primal_rel_to_s3"] = vw["primal"] / row["solvers"]["s3"]["primal"] - 1.0
        except (PeerError, OSError, ValueError) as e:
            vw["primal_error"] = str(e)[:300]
    return vw


def bench_convert_peers(tmp, sets, venv, repeats):
    from bench_parse import convert_once, parse_once, warm_memory
    rows = []
    small = os.path.join(tmp, "warm-up.txt")
    with open(small, "w") as f:
        f.write("".join(f"{i % 2} 1:{i} 3:0.5\n" for i in range(1000)))
    for name, path in sets:
        vwfile = path + ".vw"
        if not os.path.exists(vwfile):
            svmlight_to_vw(path, vwfile)
        mb, vw_mb = os.path.getsize(path) / 1e6, os.path.getsize(vwfile) / 1e6
        out = os.path.join(tmp, "convert.bin")
        runs = {"parse": [], "convert": [], "vw": []}
        with Runners(venv, llsvm=False) as (_, peer):
            for _ in range(repeats):       # each run's new pages recently used memory (bench_parse's docstring)
                warm_memory(2 * mb)
                runs["parse"].append(parse_once(path, 1, small))
                warm_memory(2 * mb)
                runs["convert"].append(convert_once(path, out, 2))
                if peer is not None:
                    try:
                        runs["vw"].append(peer.ask(op="vw", args=f"-d {vwfile} --noop"))
                    except PeerError as e:
                        runs["vw"].append({"error": str(e)[:300]})
        row = {"set": name, "text_mb": mb, "vw_mb": vw_mb}
        installed = os.path.exists(venv_python(venv))
        for k, own in (("parse", mb), ("convert", mb), ("vw", vw_mb)):
            ok = [r for r in runs[k] if "error" not in r]
            wall = _median([r["wall" if k != "vw" else "seconds"] for r in ok])
            row[k] = {"seconds": wall, "mb_s": own / wall if wall else None,
                      "runs": [r["wall" if k != "vw" else "seconds"] for r in ok],
                      "maxrss_mb": max([r.get("maxrss_mb") or 0 for r in ok], default=None),
                      "error": next((r["error"] for r in runs[k] if "error" in r),
                                    None if (installed or k != "vw") else "not installed")}
        c = row["convert"]["mb_s"]
        row["convert_vs_parse"] = c / row["parse"]["mb_s"] if c and row["parse"]["mb_s"] else None
        row["convert_vs_vw"] = c / row["vw"]["mb_s"] if c and row["vw"]["mb_s"] else None
        os.unlink(out)
        rows.append(row)
    return rows


# -- the report -------------------------------------------------------------------------------------------------------
def _s(v, fmt="{:.3f}"):
    return "–" if v is None else fmt.format(v)


def _ratio(v):
    return "–" if v is None else f"{v:.2f}x"


def _who(cell):
    """A cell's seconds, or why there is none."""
    if cell.get("seconds") is None:
        return cell.get("error") and ("not installed" if "not installed" in cell["error"] else "failed") or "–"
    return f"{cell['seconds']:.3f}"


def peers_markdown(result):
    out = []
    inst = result.get("install")
    if result.get("svm_train_missing"):
        out.append(result["svm_train_missing"])
    if inst:
        out.append(f"Peers' venv {result['venv']}: installed/updated in {inst['seconds']:.0f} s, {inst['mb']} MB"
                   + ("; could not be had: " + "; ".join(f"{k}: {v}" for k, v in inst["failed"].items())
                      if inst["failed"] else ""))
    if result.get("versions"):
        out.append("Versions: " + ", ".join(f"{k} {v}" for k, v in result["versions"].items()))
    if result.get("kernel") is not None:
        lines = md_header(["set", "threads", "llsvm -s smo s", "sklearnex SVC s", "sklearnex ÷ llsvm",
                           "svm-train s", "svm-train ÷ llsvm", "nSV llsvm / sklearnex", "dual sklearnex / llsvm - 1",
                           "oneDAL CPU/wall", "peak RSS MB llsvm / sklearnex / svm-train"])
        for r in result["kernel"]:
            for t, c in sorted(r["threads"].items(), key=lambda kv: int(kv[0])):
                a, b, lib = c["llsvm"], c["sklearnex"], c.get("svm-train", {})
                dual = (b["dual"] / a["dual"] - 1.0) if a.get("dual") and b.get("dual") else None
                cpu = b["cpu"] / b["seconds"] if b.get("cpu") and b.get("seconds") else None
                lines.append(md_row([r["set"], str(t), _who(a), _who(b)
                                     + ("" if b.get("accelerated") in (None, True) else " (NOT accelerated)"),
                                     _ratio(b.get("ratio")), _who(lib) if lib else "", _ratio(lib.get("ratio")),
                                     f"{a.get('nSV', '–')} / {b.get('nSV', '–')}", _s(dual, "{:+.1e}"),
                                     _s(cpu, "{:.2f}"),
                                     f"{_s(a.get('maxrss_mb'), '{:.0f}')} / {_s(b.get('maxrss_mb'), '{:.0f}')} / "
                                     f"{_s(lib.get('maxrss_mb'), '{:.0f}')}"]))
        out.append("### (a) Kernel: -s smo against scikit-learn-intelex's SVC and LIBSVM's svm-train\n\n"
                   + DEFINITIONS["kernel"] + "\n\n" + "\n".join(lines))
    if result.get("linear") is not None:
        lines = md_header(["set", "-s", "machine", "llsvm --threads 2 s", "Snap ML (n_jobs=2) s", "Snap ML ÷ llsvm",
                           "Snap ML model", "primal Snap ML / llsvm - 1", "CPU/wall llsvm / Snap ML",
                           "peak RSS MB llsvm / Snap ML"])
        for r in result["linear"]:
            a, b = r["llsvm"], r["snapml"]
            cpu = "/".join(_s(c["cpu"] / c["seconds"] if c.get("cpu") and c.get("seconds") else None, "{:.2f}")
                           for c in (a, b))
            solver = str(r["solver"]) + (f" -e {r['eps']:g}" if r.get("eps") is not None else "")
            lines.append(md_row([r["set"], solver, r["mode"], _who(a), _who(b), _ratio(b.get("ratio")),
                                 f"{r['peer']} ({r['loss']})", _s(r.get("primal_rel"), "{:+.1e}"), cpu,
                                 f"{_s(a.get('maxrss_mb'), '{:.0f}')} / {_s(b.get('maxrss_mb'), '{:.0f}')}"]))
        out.append("### (b) Two threads, linear: llsvm against Snap ML\n\n" + DEFINITIONS["linear"] + "\n\n"
                   + "\n".join(lines))
    if result.get("ooc") is not None:
        lines = md_header(["set", "command", "wall s", "÷ in-memory -s 3", "primal vs -s 3", "peak RSS MB"])
        for r in result["ooc"]:
            for tag, s in r["solvers"].items():
                lines.append(md_row([r["dataset"], s["label"], f"{s['wall_s']:.2f}", _ratio(s.get("wall_ratio", 1.0)),
                                     f"{s.get('primal_rel', 0.0):+.1e}", f"{s['peak_rss_mb']:.0f}"]))
            vw = r["vw"]
            lines.append(md_row([r["dataset"], "VW one pass, hinge (information)", _who(vw),
                                 _ratio(vw.get("ratio_to_s3")), _s(vw.get("primal_rel_to_s3"), "{:+.1e}"),
                                 _s(vw.get("maxrss_mb"), "{:.0f}")]))
        out.append("### (c) Out of core\n\n" + DEFINITIONS["ooc"] + "\n\n" + "\n".join(lines))
    if result.get("convert") is not None:
        lines = md_header(["set", "text MB", "in-memory parse MB/s", "llsvm-convert MB/s", "convert ÷ parse",
                           "VW reader MB/s (its file)", "llsvm-convert ÷ VW", "peak RSS MB parse / convert / VW"])
        for r in result["convert"]:
            lines.append(md_row([r["set"], f"{r['text_mb']:.1f}", _s(r["parse"]["mb_s"], "{:.0f}"),
                                 _s(r["convert"]["mb_s"], "{:.0f}"), _ratio(r["convert_vs_parse"]),
                                 _s(r["vw"]["mb_s"], "{:.0f}") if r["vw"]["mb_s"] else (r["vw"]["error"] or "–"),
                                 _ratio(r["convert_vs_vw"]),
                                 " / ".join(_s(r[k].get("maxrss_mb"), "{:.0f}") for k in ("parse", "convert", "vw"))]))
        out.append("### (d) Conversion\n\n" + DEFINITIONS["convert"] + "\n\n" + "\n".join(lines))
    return "\n\n".join(out) + "\n"


SCALES = {"small": {"rows": 20_000, "seeds": (1, 2), "kernel": SMALL_KERNEL_SETS, "skin": 5_000, "memory": "16M"},
          "full": {"rows": 500_000, "seeds": (1, 2, 3, 4), "kernel": KERNEL_SETS, "skin": SKIN_SAMPLE,
                   "memory": "64M"}}


def scale_settings(scale):
    """The sizes of a --peers-scale: small, full, or a fraction of full's rows (its sets otherwise)."""
    if scale in SCALES:
        return dict(SCALES[scale])
    f = float(scale)
    if not 0 < f <= 1:
        raise ValueError(f"--peers-scale {scale}: small, full or a fraction in (0, 1]")
    return dict(SCALES["full"], rows=max(1000, int(500_000 * f)), skin=max(1000, int(SKIN_SAMPLE * f)))


def bench_peers(tmp, install=False, venv=VENV, scale="full", parts=("kernel", "linear", "ooc", "convert"),
                seeds=None, modes=("quiet", "busy"), repeats=3, libsvm_dir=None, ws=0, linear_eps=None):
    cfg = scale_settings(scale)
    seeds = tuple(seeds or cfg["seeds"])
    result = {"venv": venv, "scale": scale, "settings": dict(cfg, seeds=seeds), "repeats": repeats,
              "definitions": DEFINITIONS}
    if install:
        result["install"] = install_peers(venv)
    with Runners(venv) as (ll, peer):
        if peer is None:
            say(f"# peers: no venv at {venv} (--peers makes it): llsvm's and LIBSVM's figures only")
        else:
            result["versions"] = peer.ask(op="versions")
        result["versions_llsvm"] = ll.ask(op="versions")
    linear_sets = issue_sets(tmp, cfg["rows"], seeds, (), dense=True) if set(parts) & {"linear"} else []
    if "kernel" in parts:
        try:                # svm-train: binaries or sources (bench_cli.reference_cli), else left out
            from bench_cli import reference_cli
            libsvm_dir = reference_cli("libsvm", libsvm_dir, say)
        except Exception as e:
            result["svm_train_missing"] = (f"LIBSVM's svm-train is not available ({type(e).__name__}: {e}); set "
                                           f"LLSVM_LIBSVM_DIR (or --libsvm-dir)")
            say("# peers: " + result["svm_train_missing"])
            libsvm_dir = None
        result["kernel"] = bench_kernel(tmp, kernel_sets(tmp, cfg["kernel"], cfg["skin"]), venv, libsvm_dir,
                                        repeats, ws)
    if "linear" in parts:
        result["linear"] = bench_linear(tmp, linear_sets, venv, repeats, modes, linear_eps)
    sparse = issue_sets(tmp, cfg["rows"], seeds, (), dense=False) if set(parts) & {"ooc", "convert"} else []
    if "ooc" in parts:
        result["ooc"] = bench_ooc_peers(tmp, sparse, venv, cfg["memory"], repeats)
    if "convert" in parts:
        result["convert"] = bench_convert_peers(tmp, sparse[:1], venv, max(repeats, 3))
    return result


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--peers", action="store_true", help="make or update the peers' venv first (pip, PyPI)")
    ap.add_argument("--peers-venv", default=VENV)
    ap.add_argument("--peers-scale", default="full", help="small, full or a fraction of full's rows")
    ap.add_argument("--peers-parts", default="kernel,linear,ooc,convert")
    ap.add_argument("--peers-seeds", default=None, help="the sparse generator's seeds (default: the scale's)")
    ap.add_argument("--peers-modes", default="quiet,busy", help="part linear: quiet, busy (beside 2 CPU-bound "
                                                                "processes)")
    ap.add_argument("--libsvm-dir", default=None, help="LIBSVM's svm-train: a directory of its binaries or sources "
                                                       "(default $LLSVM_LIBSVM_DIR or $LIBSVM_DIR)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--peers-smo-ws", type=int, default=0, help="part kernel: llsvm -s smo with --ws N (default 0: "
                                                                 "LIBSVM's pair solver)")
    ap.add_argument("--peers-linear-eps", type=float, default=None, help="part linear: llsvm's -e (default: "
                                                                          "LIBLINEAR's of each -s)")
    ap.add_argument("--tmp", default=None, help="directory for the generated sets (kept when given)")
    ap.add_argument("--out", default=None)
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    tmp = args.tmp or tempfile.mkdtemp(prefix="bench-peers-")
    try:
        result = bench_peers(tmp, args.peers, args.peers_venv, args.peers_scale, args.peers_parts.split(","),
                             [int(s) for s in args.peers_seeds.split(",")] if args.peers_seeds else None,
                             tuple(args.peers_modes.split(",")), args.repeats, args.libsvm_dir, args.peers_smo_ws,
                             args.peers_linear_eps)
    finally:
        if not args.tmp:
            shutil.rmtree(tmp, ignore_errors=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1, default=float)
    print_report("## Against the fastest peers (part peers; ratios peer ÷ llsvm, above 1: llsvm faster)\n\n"
                 + peers_markdown(result), args.out)
    return result


if __name__ == "__main__":
    main()
