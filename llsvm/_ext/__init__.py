"""Compiled kernels (built from cext/*.pyx).

OpenMP (cext/_kernel.pyx: kernel columns shared among the --threads N threads of -s smo and -s h1tree; one thread
is the default): each column's parallel loop ends at a barrier, and how a thread waits there decides what the
threads cost on a busy machine. GNU OpenMP's default spins up to 300,000 times before it sleeps: beside two
CPU-bound processes, -s smo --threads 2 on pendigits took 106-166 s against 1.0-1.3 s with one thread (issue 26).
Measured with --threads 2 on pendigits, usps.t and dna.scale (5 runs each; one thread = 1.00): quiet, 1,000 spins
0.99 / 0.75 / 0.74, passive waiting (no spin) 1.75 / 0.99 / 1.00; beside two busy processes, 1,000 spins 1.22 / 1.03
/ 1.19, 10,000 spins 4.7 / 2.4 / 1.2, passive 0.78 / 0.87 / 1.18. So a thread spins 1,000 times (microseconds),
then sleeps: GOMP_SPINCOUNT=1000, set here before any kernel module loads libgomp (which reads it once, when it is
loaded), for this process and the processes it starts, unless the user chose a policy (OMP_WAIT_POLICY) or a count
(GOMP_SPINCOUNT) of their own.
"""
import os

if "OMP_WAIT_POLICY" not in os.environ and "GOMP_SPINCOUNT" not in os.environ:
    os.environ["GOMP_SPINCOUNT"] = "1000"
