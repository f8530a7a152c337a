"""Build the Cython kernels: every cext/<stem>.pyx becomes the extension llsvm._ext.<stem>.

Cython directives are declared here, once, for every kernel. LLSVM_CYTHON_DEBUG=1 rebuilds with bounds and
wraparound checks on (and C asserts enabled), for chasing memory errors.
"""
import glob
import os

import numpy as np
from Cython.Build import cythonize
from setuptools import Extension, setup

DEBUG = os.environ.get("LLSVM_CYTHON_DEBUG", "") not in ("", "0")
ANNOTATE = os.environ.get("LLSVM_CYTHON_ANNOTATE", "") not in ("", "0")

DIRECTIVES = {
    "language_level": 3,
    "boundscheck": DEBUG,
    "wraparound": DEBUG,
    "initializedcheck": DEBUG,
    "cdivision": True,
    "nonecheck": False,
    "embedsignature": True,
}

COMPILE_ARGS = ["-O0", "-g"] if DEBUG else ["-O3"]
MACROS = [("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")]
if not DEBUG:
    MACROS.append(("NDEBUG", "1"))

extensions = [
    Extension(
        "llsvm._ext." + os.path.splitext(os.path.basename(path))[0],
        [path],
        include_dirs=[np.get_include(), "cext"],
        define_macros=MACROS,
        extra_compile_args=COMPILE_ARGS,
    )
    for path in sorted(glob.glob(os.path.join("cext", "*.pyx")))
]

setup(
    ext_modules=cythonize(
        extensions,
        compiler_directives=DIRECTIVES,
        include_path=["cext"],
        annotate=ANNOTATE,
        force=DEBUG or ANNOTATE,
    ),
)
