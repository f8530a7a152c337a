"""Compiled kernels (built from cext/*.pyx).

OpenMP (cext/_kernel.pyx: kernel columns shared among --threads N threads of -s smo and -s h1tree): its threads
wait passively, blocked in the kernel, instead of spinning, unless the user chose otherwise. GNU OpenMP reads
OMP_WAIT_POLICY once, when libgomp is loaded (the first import of llsvm._ext._kernel), so the default is set here,
before any kernel module loads, for this process and the processes it starts. Spinning threads are GNU OpenMP's
default, and on a busy machine they are ruinous: with two CPU-bound processes beside it, `-s smo --threads 2` on
pendigits took 106-166 s spinning at the barrier that ends each column's parallel loop, against 1.0-1.3 s with one
thread, and 1.1-1.5 s with passive waiting (issue 26). One thread stays the default all the same (registry).
"""
import os

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
