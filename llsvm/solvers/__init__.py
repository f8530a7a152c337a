"""The solvers: one driver module per family and the registry that maps every -s value to its spec.

    dcd.py        -s 1, -s 3   dual coordinate descent (LIBLINEAR's solve_l2r_l1l2_svc)
    newton.py     -s 2         Newton with preconditioned CG (LIBLINEAR's NEWTON)
    onepass.py    -s llsvm     one-pass harsh shrinking + block optimization, out of core
    streamsvm.py  -s streamsvm dual cached loops, out of core
    bm.py         -s bm        block minimization, out of core
    common.py     what every driver shares (classes, costs, seeds, the fit result, closing lines)
    outofcore.py  what the out-of-core drivers share (the input adapter, the driver base)
    registry.py   SolverSpec, REGISTRY, Params
"""
from .common import EMPTY_ROWS, FitResult, Subproblem, group_classes, parse_size
from .dcd import DUAL_MAX_ITER, solve_dcd
from .newton import NEWTON_MAX_ITER, solve_newton
from .onepass import LLSVMOptions, OnePassSolver
from .outofcore import StreamOptions
from .registry import REGISTRY, Params, SolverSpec, get, specs
from .bm import BlockMinimizationSolver
from .streamsvm import StreamSVMSolver

__all__ = ["EMPTY_ROWS", "FitResult", "Subproblem", "group_classes", "parse_size", "DUAL_MAX_ITER", "solve_dcd",
           "NEWTON_MAX_ITER", "solve_newton", "LLSVMOptions", "OnePassSolver", "StreamOptions", "REGISTRY", "Params",
           "SolverSpec", "get", "specs", "BlockMinimizationSolver", "StreamSVMSolver"]
