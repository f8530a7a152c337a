"""Build the Cython kernels: every cext/<stem>.pyx becomes the extension llsvm._ext.<stem>.

Cython directives are declared here, once, for every kernel. LLSVM_CYTHON_DEBUG=1 rebuilds with bounds and
wraparound checks on (and C asserts enabled), for chasing memory errors.

A kernel that declares Python-visible types in a cext/<stem>.pxd beside its cext/<stem>.pyx (the row view
`Rows`, cext/_view.pxd) is cimported by its full name, `from llsvm._ext._view cimport Rows`: a module that
cimports a cdef class imports the class's module at run time under the name it was cimported by, and that name
must be the extension's. Cython looks a cimported module's .pxd up by that name, so build/cython-pxd/llsvm/_ext/
holds a link to each such .pxd (a copy where links are not available). Header-only .pxd files (no .pyx of the
same stem) are cimported by their stem from cext/.

OpenMP: the kernels in OPENMP (their `prange` loops: kernel columns, kernel prediction) are built with -fopenmp
when the C compiler takes it (a probe compiles and links a test program once); without it they build and run
single-threaded, with the same results (every value a thread computes is computed alone). LLSVM_OPENMP=0 turns
it off.
"""
import filecmp
import glob
import os
import shutil

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

PXD_ROOT = os.path.join("build", "cython-pxd")
OPENMP = {"_kernel", "_kpredict"}


def openmp_flag():
    """["-fopenmp"] when the compiler compiles and links an OpenMP program, else [] (LLSVM_OPENMP=0: [])."""
    if os.environ.get("LLSVM_OPENMP", "1") in ("", "0"):
        return []
    import tempfile
    from setuptools._distutils.ccompiler import new_compiler
    from setuptools._distutils.sysconfig import customize_compiler
    cc = new_compiler()
    customize_compiler(cc)
    with tempfile.TemporaryDirectory() as d:
        src = os.path.join(d, "omp.c")
        with open(src, "w") as f:
            f.write("#include <omp.h>\nint main(void) { return omp_get_max_threads() > 0 ? 0 : 1; }\n")
        try:
            objs = cc.compile([src], output_dir=d, extra_postargs=["-fopenmp"])
            cc.link_executable(objs, os.path.join(d, "omp"), extra_postargs=["-fopenmp"])
        except Exception:
            return []
    return ["-fopenmp"]


OPENMP_FLAG = openmp_flag()


def package_pxds():
    """Link build/cython-pxd/llsvm/_ext/<stem>.pxd to cext/<stem>.pxd for every stem that also has a .pyx."""
    pkg = os.path.join(PXD_ROOT, "llsvm", "_ext")
    os.makedirs(pkg, exist_ok=True)
    for pxd in sorted(glob.glob(os.path.join("cext", "*.pxd"))):
        if not os.path.exists(pxd[:-4] + ".pyx"):
            continue
        link = os.path.join(pkg, os.path.basename(pxd))
        target = os.path.relpath(pxd, pkg)
        if os.path.islink(link) and os.readlink(link) == target:
            continue
        if os.path.lexists(link):
            if not os.path.islink(link) and filecmp.cmp(pxd, link, shallow=False):
                continue
            os.remove(link)
        try:
            os.symlink(target, link)
        except OSError:
            shutil.copy2(pxd, link)


package_pxds()


def _stem(path):
    return os.path.splitext(os.path.basename(path))[0]

extensions = [
    Extension(
        "llsvm._ext." + _stem(path),
        [path],
        include_dirs=[np.get_include(), "cext"],
        define_macros=MACROS,
        extra_compile_args=COMPILE_ARGS + (OPENMP_FLAG if _stem(path) in OPENMP else []),
        extra_link_args=OPENMP_FLAG if _stem(path) in OPENMP else [],
    )
    for path in sorted(glob.glob(os.path.join("cext", "*.pyx")))
]

setup(
    ext_modules=cythonize(
        extensions,
        compiler_directives=DIRECTIVES,
        include_path=["cext", PXD_ROOT],
        annotate=ANNOTATE,
        force=DEBUG or ANNOTATE,
    ),
)
