"""The reliability of the Python and scikit-learn surface (issue 45, H1, H8, H12-H14).

- H1, Ctrl-C in a fit from Python: the kernels' stop flag (cext/_stop.pyx) is armed around every training call from
  Python (llsvm/stop.py: llsvm.train, cross_validation, find_parameter_C, grid_search, kernel prediction), so
  SIGINT ends a kernel in the middle of its loop with KeyboardInterrupt. Subprocess, one per estimator family: a
  child Python fits on a generated set with parameters that make the fit last tens of seconds of CPU, writes its
  CPU time as the fit starts, and is sent SIGINT once it has used LEAD_CPU more (so it is inside the solver); the
  verdict is the child's CPU time from the signal to its exit (rusage, scripts/children.py), under CPU_AFTER, and
  its "KeyboardInterrupt" line. Every wait is bounded by the child's CPU time, never the wall clock. Before the fix
  (the flag armed by the CLI only) every kernel family went on computing: killed at CPU_AFTER. In process: the
  flag is armed for a call of the main thread and given back after it (the host's handlers as they were), left
  alone under a host handler of its own, nested in a command's arming, never armed from another thread, and a
  kernel cut short in another thread raises KeyboardInterrupt there.
- H8, wide sparse rows: a kernel solver's scratch row is as wide as the rows' largest index, and none at all when
  that is far wider than the data (the products then merge the rows, LIBSVM's dot): a CSR matrix of 10^9 columns
  (or a 2^40-column shape) with a few non-zeros trains under an address-space limit that an 8 GB scratch exceeds,
  to the model of the same rows on compact columns; llsvm-train -s smo on a file whose largest index is 10^9 too.
  Column indices beyond int32 are refused, not wrapped around; the online lists' linear weight vector is checked
  before it is made.
- H12: the errors of bad input (ParameterError, DataFormatError, ModelFormatError) are ValueErrors; the CLI's
  messages and exit codes are unchanged.
- H13: an extreme C (1e308) or bias leaks no numpy RuntimeWarning (the certificates are inf or nan, as LIBLINEAR
  prints them), a model that is not finite is refused where it is saved; -s llsvm's refusal of an overflowing
  bias leaves no file open (ResourceWarning).
- H14: class labels are 64-bit integers: ±2^40 trains, is written whole and read back; beyond 2^63 is refused.
"""
import gc
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
import warnings
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
import scipy.sparse as sp

import llsvm
from llsvm.errors import DataFormatError, LLSVMError, ModelFormatError, ParameterError

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "scripts"))
from children import STALL, Watch, cpu_of, kill, reap, reap_within, wait_for  # noqa: E402

BIN = os.path.dirname(sys.executable)
LEAD_CPU = 1.0          # CPU seconds into the fit before the signal
CPU_AFTER = 1.0         # the rule: less CPU than this from the signal to the exit
START_CPU = 120.0       # a child that uses this much before its fit starts never starts it
PARALLEL = 2


def _small(n=60, seed=0):
    """A small two-class problem (X, labels +1/-1)."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 4))
    return X, np.where(X[:, 0] + 0.3 * rng.standard_normal(n) > 0, 1.0, -1.0)


# -- H12: ValueError for bad input -----------------------------------------------------------------------------------
def test_bad_input_errors_are_value_errors(tmp_path):
    for cls in (ParameterError, DataFormatError, ModelFormatError):
        assert issubclass(cls, ValueError) and issubclass(cls, LLSVMError)
    bad_model = tmp_path / "bad.model"
    bad_model.write_text("solver_type L2R_L2LOSS_SVC_DUAL\nnr_class x\n")
    with pytest.raises(ValueError):
        llsvm.load_model(bad_model)
    bad_data = tmp_path / "bad.txt"
    bad_data.write_text("1 1:x\n")
    with pytest.raises(ValueError):
        llsvm.read_dataset(bad_data)
    with pytest.raises(ValueError):
        llsvm.train(*_small(), solver=3, C=-1.0)
    from llsvm.sklearn import LinearSVC, OutOfCoreSVC
    with pytest.raises(ValueError):
        LinearSVC.from_file(bad_model)
    with pytest.raises(ValueError):
        OutOfCoreSVC(memory="abc").fit(*_small())


@pytest.mark.parametrize("argv,rc,stderr", [
    (["llsvm-train", "-c", "-1", "{data}"], 1, "ERROR: C <= 0\n"),
    (["llsvm-train", "-s", "smo", "-g", "-1", "{data}"], 1, "ERROR: gamma < 0\n"),
    (["llsvm-train", "{bad}"], 1, "Wrong input format at line 1\n{bad}: line 1, column 5: value is not a number "
                                  "(found 'x')\n"),
    (["llsvm-predict", "{data}", "{bad_model}", "{out}"], 1, "Error: {bad_model}:2: 'nr_class' is not an integer: "
                                                             "'x'\n"),
    (["llsvm-train", "--memory", "abc", "-s", "llsvm", "{data}"], 2, None),
])
def test_the_cli_reports_them_as_before(tmp_path, argv, rc, stderr):
    """ParameterError, DataFormatError and ModelFormatError being ValueErrors changes nothing the commands print."""
    names = {"data": tmp_path / "d.txt", "bad": tmp_path / "bad.txt", "bad_model": tmp_path / "bad.model",
             "out": tmp_path / "out"}
    names["data"].write_text("1 1:1\n-1 1:-1\n1 1:2\n")
    names["bad"].write_text("1 1:x\n")
    names["bad_model"].write_text("solver_type L2R_L2LOSS_SVC_DUAL\nnr_class x\n")
    cmd = [os.path.join(BIN, argv[0])] + [a.format(**names) for a in argv[1:]]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert r.returncode == rc, r.stderr
    if stderr is not None:
        assert r.stderr == stderr.format(**names)
    assert "Traceback" not in r.stderr
