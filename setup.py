"""Build the Cython kernels: every cext/<stem>.pyx becomes the extension llsvm._ext.<stem>.

Cython directives are declared here, once, for every kernel. LLSVM_CYTHON_DEBUG=1 rebuilds with bounds and
wraparound checks on (and C asserts enabled), for chasing memory errors.

A kernel that declares Python-visible types in a cext/<stem>.pxd beside its cext/<stem>.pyx (the row view
`Rows`, cext/_view.pxd) is cimported by its full name, `from llsvm._ext._view cimport Rows`: a module that
cimports a cdef class imports the class's module at run time under the name it was cimported by, and that name
must be the extension's. Cython looks a cimported module's .pxd up by that name, so build/cython-pxd/llsvm/_ext/
holds a link to each such .pxd (a copy where links are not available). Header-only .pxd files (no .pyx of the
same stem) are cimported by their stem from cext/.
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
        include_path=["cext", PXD_ROOT],
        annotate=ANNOTATE,
        force=DEBUG or ANNOTATE,
    ),
)
