"""-s 1 / -s 3 on two or more threads: liblinear-multicore 2.50's dual CD (Chiang, Lee, Lin, KDD 2016) in
cext/_linear.pyx (DCDState.run_parallel), the gradients of each block on OpenMP threads, the steps serial.

- Against its NumPy twin (tests/reference/dcd_twin.py solve_l2r_l1l2_svc_multicore, written from the algorithm):
  the same iterations, alpha and w to 1e-12, on the tiny problems of test_solvers (sparse, dense, float32, bias,
  Cp != Cn, L1 and L2 loss, an empty row, duplicated rows).
- The result depends on the seed, not on the threads: 2, 3 and 4 threads give the same alpha and w bit for bit.
- At the optimum: the -s 3 / -s 1 optimum of the one-thread solver within the tolerance, an exact certificate
  (0 <= gap, max violation as reported), and LIBLINEAR's rule holding at the returned w (the exact last check).
- --threads picks it for one problem of 1,000 rows a thread or more; below that, or with --threads 1, the
  one-thread solver bit for bit.
"""
import numpy as np
import pytest
import scipy.sparse as sp

import llsvm
from llsvm.dataset import CSRDataset
from llsvm.solvers.common import Subproblem
from llsvm.solvers.dcd import solve_dcd
from reference import dcd_twin as T
from conftest import generated_set
from test_solvers import DOT_ORDER, TINY, kind_is_dense, tiny_problem


def _sub(X, y, Cp, Cn, bias, float32=False):
    ds = CSRDataset.from_csr(sp.csr_matrix(X), y, dtype=np.float32 if float32 else None)
    return Subproblem(ds, np.where(y > 0, 1, -1), Cp, Cn, bias=bias)


@pytest.mark.parametrize("case", list(TINY), ids=list(TINY))
def test_kernel_is_the_twin(case):
    seed, l, n, density, kind, bias, l1, Cp, Cn, eps = TINY[case]
    X, y = tiny_problem(seed, l, n, density, kind)
    res = solve_dcd(_sub(X, y, Cp, Cn, bias, kind == "float32"), l1, eps, 300, rng_seed=seed, threads=2)
    twin = T.solve_l2r_l1l2_svc_multicore(X if kind_is_dense(X) else sp.csr_matrix(X), np.where(y > 0, 1, -1),
                                          Cp, Cn, eps, l1, 300, bias=bias, seed=seed, dot_order=DOT_ORDER)
    assert res.n_iter == twin.n_iter
    np.testing.assert_allclose(res.alpha, twin.alpha, rtol=1e-12, atol=1e-12 * max(1.0, np.abs(twin.alpha).max()))
    np.testing.assert_allclose(res.w, twin.w, rtol=1e-12, atol=1e-12 * max(1.0, np.abs(twin.w).max()))
    assert res.converged == (twin.n_iter < 300)


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    """A two-class generated sparse set of 8,000 rows."""
    return generated_set(tmp_path_factory.mktemp("dcdmc") / "g", "sparse", rows=8000, features=3000, nnz_per_row=25,
                         seed=12)


@pytest.mark.parametrize("kw", [dict(solver=3), dict(solver=1), dict(solver=3, bias=1, C=4.0),
                                dict(solver=1, weights={1: 2.0})], ids=["s3", "s1", "s3-bias-C4", "s1-w"])
def test_threads_give_the_optimum_with_an_exact_certificate(generated, kw):
    one = llsvm.train(generated, threads=1, **kw).meta["results"][0]
    runs = [llsvm.train(generated, threads=t, **kw).meta["results"][0] for t in (2, 3, 4)]
    two = runs[0]
    for r in runs[1:]:                       # the seed decides, not the threads
        np.testing.assert_array_equal(r.w, two.w)
        np.testing.assert_array_equal(r.alpha, two.alpha)
    assert two.extra["threads"] == 2 and two.converged and two.extra["exact_checks"] >= 1
    # LIBLINEAR's rule at -e 0.1 holds at the returned point: max |PG| <= eps
    assert 0 <= two.max_violation <= 0.1
    assert 0 <= two.gap
    # both stop by the same rule at the same tolerance: their primals agree to the rule's accuracy
    assert two.primal == pytest.approx(one.primal, rel=1e-3)
    tight = llsvm.train(generated, threads=2, eps=1e-5, max_iter=5000, **kw).meta["results"][0]
    best = llsvm.train(generated, threads=1, eps=1e-5, max_iter=5000, **kw).meta["results"][0]
    assert tight.primal == pytest.approx(best.primal, rel=1e-6)
    assert tight.gap <= 1e-4 * tight.primal


def test_one_thread_and_small_problems_are_the_one_thread_solver(generated, shared_plain):
    """--threads 1 is the one-thread solver; so is --threads 2 on fewer than 2,000 rows (heart_scale)."""
    heart = llsvm.read_dataset(shared_plain("heart_scale"))
    a = llsvm.train(heart, solver=3, threads=2).meta["results"][0]
    b = llsvm.train(heart, solver=3, threads=1).meta["results"][0]
    np.testing.assert_array_equal(a.w, b.w)
    assert "threads" not in a.extra
