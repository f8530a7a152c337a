"""The solvers: the training layer, one driver module per family, and the registry that finds a spec's code.

    trainer.py    training the LIBLINEAR way for every spec: classes, one-vs-rest, threads, -v, -C
    grid.py       the cross-validation grid search of the kernel solvers (--grid)
    folds.py      LIBLINEAR's and LIBSVM's folds
    registry.py   a spec's driver and --json metrics, imported on first use (the specs: llsvm/params.py)
    common.py     what every driver shares (classes, costs, seeds, the fit result, closing lines)
    dcd.py        -s 1, -s 3   dual coordinate descent (LIBLINEAR's solve_l2r_l1l2_svc)
    cocoa.py      CoCoA+ rounds of one -s 1 / -s 3 problem over K row parts (library only; a mapper hook)
    newton.py     -s 0, 2, 11  Newton with preconditioned CG (LIBLINEAR's NEWTON)
    l2dual.py     -s 4, 7, 12, 13, 21   LIBLINEAR's other dual solvers
    l1r.py        -s 5, 6      L1-regularized CD over the columns
    onepass.py    -s llsvm     one-pass harsh shrinking + block optimization, out of core
    streamsvm.py  -s streamsvm dual cached loops, out of core
    bm.py         -s bm        block minimization, out of core
    outofcore.py  what the out-of-core drivers share (the input adapter, the driver base)
    smo.py        -s smo       LIBSVM's C-SVC (ovo.py: its one-vs-one pairs)
    h1tree.py     -s h1tree    H1-SVM decision lists
    online.py     -s olsvm, olsvm-rhl, norma, pegaz, pegasos
    oned.py       -s local1d, project1d

The names below are imported from their modules on first use (llsvm/lazy.py): importing the registry imports no
driver.
"""
from ..lazy import exports

__getattr__, __dir__ = exports(__name__, {
    "common": ("EMPTY_ROWS", "FitResult", "Subproblem", "group_classes"),
    "dcd": ("solve_dcd",),
    "newton": ("solve_newton",),
    "onepass": ("OnePassSolver",),
    "bm": ("BlockMinimizationSolver",),
    "streamsvm": ("StreamSVMSolver",),
})

__all__ = ["EMPTY_ROWS", "FitResult", "Subproblem", "group_classes", "solve_dcd", "solve_newton", "OnePassSolver",
           "BlockMinimizationSolver", "StreamSVMSolver"]
