"""The kernel solvers' threads on a busy machine (llsvm.solvers.common.idle_threads): -s smo, nu-SVC, the one-class
SVM and SVR take --threads N, less the cores other processes' threads run on when the solve starts (at least one),
and the model is the same on any number of threads, bit for bit."""
import os

import numpy as np
import pytest
import scipy.sparse as sp

import llsvm
from llsvm.dataset import CSRDataset
from llsvm.options import SMOOptions
from llsvm.params import Params
from llsvm.solvers import common
from llsvm.solvers import smo as S


def test_idle_threads(monkeypatch):
    """--threads N takes min(N, the cores no other thread runs on), at least 1; 1 takes no look; not known: N."""
    cpus = os.cpu_count() or 1
    looks = []
    monkeypatch.setattr(common, "others_running", lambda: looks.append(1) or cpus - 1)
    assert common.idle_threads(1) == 1 and not looks
    assert common.idle_threads(2) == 1 and common.idle_threads(8) == 1
    monkeypatch.setattr(common, "others_running", lambda: cpus + 3)     # more runnable than cores
    assert common.idle_threads(2) == 1
    monkeypatch.setattr(common, "others_running", lambda: 0)
    assert common.idle_threads(2) == min(2, cpus) and common.idle_threads(cpus + 5) == cpus
    monkeypatch.setattr(common, "others_running", lambda: None)         # not Linux: as asked
    assert common.idle_threads(3) == 3


def blobs(seed, n, k):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 6)) + np.repeat(rng.normal(scale=2.0, size=(k, 6)), n // k, axis=0)
    y = np.repeat(np.arange(k), n // k).astype(np.float64)
    return CSRDataset.from_csr(sp.csr_matrix(X), y)


@pytest.mark.parametrize("solver, options", [
    ("smo", {}), ("smo", {"probability": 1}), ("nu_svc", {}), ("one_class", {}), ("epsilon_svr", {})],
    ids=["c-svc", "c-svc -b 1", "nu-svc", "one-class", "epsilon-svr"])
def test_a_busy_machine_takes_fewer_threads_and_the_same_model(monkeypatch, solver, options):
    """With every core but this one busy, --threads 2 builds its kernel caches on one thread (the pairs' scratch
    and -b 1's folds, or the one problem's), with idle cores on min(2, cores); the model is the same bit for bit."""
    ds = blobs(3, 600, 3)
    made = []
    real = S.KK.KernelCache

    def spy(*args, **kw):
        made.append(args[5] if len(args) > 5 else kw.get("n_threads", 1))
        return real(*args, **kw)

    monkeypatch.setattr(S.KK, "KernelCache", spy)
    models = {}
    for busy in (True, False):
        monkeypatch.setattr(common, "others_running", lambda busy=busy: (os.cpu_count() or 1) - 1 if busy else 0)
        made.clear()
        params = Params(solver=solver, C=1.0, threads=2, options=SMOOptions(**options))
        m = llsvm.train(ds, params=params, say=lambda s: None)
        assert made and set(made) == ({1} if busy else {min(2, os.cpu_count() or 1)})
        models[busy] = m
    a, b = models[True], models[False]
    assert np.array_equal(np.asarray(a.sv_coef), np.asarray(b.sv_coef))
    assert np.array_equal(np.asarray(a.rho), np.asarray(b.rho))
    assert np.array_equal(a.SV.to_csr().toarray(), b.SV.to_csr().toarray())
