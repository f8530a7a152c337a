"""`make bench` part `peers` (scripts/bench_peers.py, scripts/peer_runner.py), the pieces that need no peer installed
and no timing verdict: the one primal definition against LIBLINEAR's own objective, the one dual definition against
LIBSVM's, the runner protocol (llsvm's runner for real, a fake peer for the failures), the ratio table, the VW text,
the scales. The figures are the part's, never a test's verdict."""
import json
import os
import re
import sys

import numpy as np
import pytest
import scipy.sparse as sp

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "scripts"))
import bench_peers as BP  # noqa: E402

import llsvm  # noqa: E402


def _problem(seed=3, n=300, d=20):
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=0.3, random_state=np.random.RandomState(seed), format="csr")
    X.data = rng.uniform(-1, 1, X.nnz)
    w = rng.normal(size=d)
    y = np.where(X @ w + 0.3 * rng.normal(size=n) > 0, 1.0, -1.0)
    y[0] = 1.0
    return X.tocsr(), y


@pytest.mark.parametrize("solver", [0, 2])
def test_primal_is_liblinears_objective(solver, capfd):
    """LIBLINEAR's Newton solvers print f, the primal at the current w (%.3e): the harness's one definition of the
    primal, on LIBLINEAR's model, gives the same number."""
    from liblinear import liblinearutil as LU
    from benchutil import ll_W
    X, y = _problem()
    capfd.readouterr()
    m = LU.train(y, X, f"-s {solver} -c 1 -B 1 -e 1e-8")
    out = capfd.readouterr().out
    f_last = float(re.findall(r"f ([0-9.e+-]+)", out)[-1])
    assert m.get_labels()[0] == 1
    W = ll_W(m, X.shape[1], 1.0)[:, 0]
    assert BP.linear_primal(solver, X, y, W[:-1], W[-1]) == pytest.approx(f_last, rel=6e-4)


def test_hinge_primal_against_liblinears_dual(capfd):
    """-s 3: LIBLINEAR prints its dual solver's objective (1/2 |w|^2 - sum alpha = -D); by weak duality the primal
    of its model is at least D, and at a tight -e nearly D."""
    from liblinear import liblinearutil as LU
    from benchutil import ll_W
    X, y = _problem(seed=5)
    capfd.readouterr()
    m = LU.train(y, X, "-s 3 -c 1 -B 1 -e 1e-7")
    D = -float(re.findall(r"Objective value = ([0-9.e+-]+)", capfd.readouterr().out)[-1])
    W = ll_W(m, X.shape[1], 1.0)[:, 0]
    P = BP.linear_primal(3, X, y, W[:-1], W[-1])
    assert D <= P * (1 + 1e-9) and (P - D) / P < 1e-3     # its 1000 iterations end before -e 1e-7


def test_dual_is_libsvms_objective(capfd):
    """LIBSVM prints obj = -D for each one-vs-one pair: rbf_dual on LIBSVM's model is the sum of the -obj (3
    classes: the pair layout of sv_coef)."""
    from libsvm import svmutil
    from bench_smo import _libsvm_arrays
    rng = np.random.default_rng(7)
    X = rng.normal(size=(150, 4)) + np.repeat(np.eye(4)[:3] * 1.5, 50, axis=0)
    y = np.repeat([1.0, 2.0, 3.0], 50)
    rows = [{j + 1: float(v) for j, v in enumerate(r)} for r in X]
    gamma = 0.25
    capfd.readouterr()
    m = svmutil.svm_train(y.tolist(), rows, f"-s 0 -t 2 -c 1 -g {gamma} -e 1e-6")
    out = capfd.readouterr().out
    objs = [float(v) for v in re.findall(r"obj = ([0-9.e+-]+)", out)]
    assert len(objs) == 3
    nSV, coef, SV = _libsvm_arrays(m)
    D = BP.rbf_dual(SV.to_csr(), coef, nSV, gamma, block=17)      # several row blocks
    assert D == pytest.approx(-sum(objs), rel=1e-5)


def test_llsvm_runner_protocol(tmp_path):
    """llsvm's runner for real: load the .npz, one linear fit (the weights of llsvm.train on the same rows, +1 the
    first class), one -s smo fit (its support vectors written, the dual of its model), CPU and peak RSS reported."""
    X, y = _problem()
    npz = BP.write_npz(str(tmp_path / "d.npz"), X, y)
    r = BP.llsvm_runner()
    try:
        assert r.ask(op="load", npz=npz)["rows"] == X.shape[0]
        ans = r.ask(op="fit", task="llsvm_linear", params={"solver": 2, "C": 1.0, "bias": 1.0, "threads": 1})
        assert set(ans) >= {"seconds", "cpu", "maxrss_mb", "w", "b"}
        ref = llsvm.train(llsvm.dataset.CSRDataset.from_csr(X, y), solver=2, C=1.0, bias=1.0)
        np.testing.assert_allclose(np.append(ans["w"], ans["b"]), ref.W[:, 0], rtol=1e-12)
        ans = r.ask(op="fit", task="llsvm_linear", params={"solver": 2, "C": 1.0, "bias": 1.0, "threads": 1,
                                                           "eps": 1e-5})     # --peers-linear-eps: llsvm's -e
        tight = llsvm.train(llsvm.dataset.CSRDataset.from_csr(X, y), solver=2, C=1.0, bias=1.0, eps=1e-5)
        np.testing.assert_allclose(np.append(ans["w"], ans["b"]), tight.W[:, 0], rtol=1e-12)
        assert tight.meta["results"][0].n_iter > ref.meta["results"][0].n_iter
        out = str(tmp_path / "smo.npz")
        ans = r.ask(op="fit", task="llsvm_smo", params={"C": 1.0, "gamma": 0.05, "threads": 1}, out=out)
        SV, z = BP.read_npz_csr(out)
        assert SV.shape[0] == ans["nSV"] == int(z["nSV"].sum())
        assert BP.rbf_dual(SV, z["coef"], z["nSV"], 0.05) > 0
        with pytest.raises(BP.PeerError, match="unknown task"):
            r.ask(op="fit", task="nothing", params={})
        assert r.ask(op="versions")["llsvm"] == llsvm.__version__   # the runner goes on after an error
    finally:
        r.close()


FAKE = r"""
import json, sys
print("a library's chatter on stdout", flush=True)
for line in sys.stdin:
    req = json.loads(line)
    if req["op"] == "quit":
        break
    if req.get("task") == "die":
        sys.exit(3)
    print("more chatter", flush=True)
    print("@@peer " + json.dumps({"seconds": 2.0, "cpu": 3.9, "maxrss_mb": 10.0, "w": [1.0], "b": 0.5}), flush=True)
"""


def test_fake_peer(tmp_path):
    """A peer's runner whose library prints on stdout is still read; one that dies is a PeerError, and a fit the
    harness asks of it an {"error"} cell (the part goes on); no runner at all: "not installed"."""
    script = tmp_path / "fake.py"
    script.write_text(FAKE)
    r = BP.Runner(sys.executable, "fake", script=str(script))
    try:
        assert r.ask(op="fit", task="x", params={})["seconds"] == 2.0
        cell = BP._fit(r, "die", {})
        assert "error" in cell and "exited" in cell["error"]
        assert "error" in BP._fit(r, "x", {})
    finally:
        r.close()
    assert BP._fit(None, "x", {}) == {"error": "not installed"}
    assert BP.peer_runner(str(tmp_path / "no-venv")) is None


def test_ratio_table():
    rounds = [{"llsvm": {"seconds": 1.0, "cpu": 1.0, "maxrss_mb": 50}, "p": {"seconds": 3.0, "cpu": 6.0, "maxrss_mb": 80}},
              {"llsvm": {"seconds": 2.0, "cpu": 2.0, "maxrss_mb": 60}, "p": {"seconds": 3.0, "cpu": 6.0, "maxrss_mb": 90}},
              {"llsvm": {"seconds": 1.0, "cpu": 1.0, "maxrss_mb": 55}, "p": {"error": "boom"}}]
    s = BP._summary(rounds, "llsvm", "p")
    assert s["ratio"] == pytest.approx(2.25) and s["seconds"] == 3.0 and s["maxrss_mb"] == 90 and s["error"] == "boom"
    result = {
        "venv": "V", "install": {"seconds": 30.0, "mb": 495, "failed": {"snapml": "no wheel"}},
        "versions": {"numpy": "2.4.6"}, "svm_train_missing": "LIBSVM's svm-train is not available",
        "kernel": [{"set": "dna.scale", "threads": {
            "1": {"llsvm": {"seconds": 0.5, "ratio": 1.0, "nSV": 10, "dual": 100.0, "maxrss_mb": 150},
                  "sklearnex": {"seconds": 1.0, "cpu": 0.9, "ratio": 2.0, "nSV": 11, "dual": 100.0001,
                                "accelerated": False, "maxrss_mb": 200},
                  "svm-train": {"seconds": 1.5, "ratio": 3.0, "maxrss_mb": 12}},
            "2": {"llsvm": {"seconds": 0.4, "ratio": 1.0}, "sklearnex": {"seconds": None, "error": "not installed"}}}}],
        "linear": [{"set": "sparse seed 1", "solver": 3, "mode": "busy", "peer": "SupportVectorMachine", "loss": "hinge",
                    "llsvm": {"seconds": 1.0, "cpu": 1.9, "maxrss_mb": 100},
                    "snapml": {"seconds": 2.5, "cpu": 4.0, "ratio": 2.5, "maxrss_mb": 120}, "primal_rel": 0.004}],
    }
    md = BP.peers_markdown(result)
    assert BP.DEFINITIONS["kernel"] in md and BP.DEFINITIONS["linear"] in md
    assert "could not be had: snapml: no wheel" in md and "svm-train is not available" in md
    assert "| dna.scale | 1 | 0.500 | 1.000 (NOT accelerated) | 2.00x | 1.500 | 3.00x | 10 / 11 | +1.0e-06 | 0.90 | " \
           "150 / 200 / 12 |" in md
    assert "| dna.scale | 2 | 0.400 | not installed | – |" in md
    assert "| sparse seed 1 | 3 | busy | 1.000 | 2.500 | 2.50x | SupportVectorMachine (hinge) | +4.0e-03 | 1.90/1.60 | " \
           "100 / 120 |" in md
    json.dumps(result)


def test_vw_text(tmp_path):
    src = tmp_path / "a"
    src.write_bytes(b"+1 3:0.5 7:1\n-1 2:0.25\n-1\n+1 1:2")           # an empty row; no newline at the end
    BP.svmlight_to_vw(str(src), str(tmp_path / "a.vw"), chunk=7)
    assert (tmp_path / "a.vw").read_bytes() == b"+1 | 3:0.5 7:1\n-1 | 2:0.25\n-1 |\n+1 | 1:2\n"


def test_vw_primal(tmp_path):
    (tmp_path / "raw").write_text("0.5 tag\n-2\n")
    (tmp_path / "readable").write_text("Version 9\nbits:18\n:0\n1:0.5 3 1\n116060:-1\n")
    assert BP.vw_primal(str(tmp_path / "raw"), str(tmp_path / "readable"), np.array([1.0, 1.0])) == \
        pytest.approx(0.5 * 1.25 + 0.5 + 3.0)


def test_scales():
    assert BP.scale_settings("small")["rows"] == 20_000
    full = BP.scale_settings("full")
    assert full["rows"] == 500_000 and full["seeds"] == (1, 2, 3, 4) and full["memory"] == "64M"
    assert full["kernel"] == ("a9a", "usps.t", "mushrooms", "dna.scale", "skin_nonskin") and full["skin"] == 50_000
    assert BP.scale_settings("0.1")["rows"] == 50_000
    with pytest.raises(ValueError):
        BP.scale_settings("2")
