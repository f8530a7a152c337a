"""The console scripts (pyproject.toml). Each installs the start-up signal handlers before anything heavy is
imported (click, numpy, scipy, the kernels), so a Ctrl-C at any time ends the command with exit 130 and no
traceback; then it imports and runs its command. This module imports nothing else of llsvm (llsvm/__init__.py
and llsvm/cli/__init__.py import nothing either)."""
import os
import signal
import sys


def remove_temporaries():
    """Remove the temporary files and directories the command recorded and left (llsvm/fileutil.py); nothing when
    it never imported fileutil (then it made none)."""
    fileutil = sys.modules.get("llsvm.fileutil")
    if fileutil is not None:
        try:
            fileutil.remove_temporaries()
        except Exception:           # best effort on the way out: never a traceback
            pass


def _exit_now(signum, frame):
    # fileutil may be in sys.modules half imported (the signal came during its import): then it has committed
    # nothing yet
    committed = getattr(sys.modules.get("llsvm.fileutil"), "output_committed", None)
    if committed is not None and committed():
        # the body has ended after renaming an output into place (its handlers gave these back): the command
        # succeeded, and an exit of 130 or 143 must leave every target as it was, so the signal is ignored
        return
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, signal.SIG_IGN)
    remove_temporaries()
    os._exit(128 + signum)


def install_startup_handlers():
    """Until a command's body runs there is nothing to clean up, so SIGINT or SIGTERM ends the process at once,
    silently, with 128 + the signal (130, 143) (after removing any recorded temporary path, for a signal that comes
    after the body has ended). A signal the process inherited as ignored (SIG_IGN: a job started in the
    background by a script, `nohup`) stays ignored, as LIBLINEAR's `train` leaves it. The body's own handlers (cli/common.py, handle_errors) take over
    while it runs and give these back when it ends."""
    for sig in (signal.SIGINT, signal.SIGTERM):
        if signal.getsignal(sig) != signal.SIG_IGN:     # inherited as ignored (a background job): stays so
            signal.signal(sig, _exit_now)


def one_blas_thread():
    """OpenBLAS runs one thread in a command unless the user's environment says otherwise. llsvm's kernels do its
    numeric work (with their own --threads); NumPy calls BLAS only for dot products of vectors, where OpenBLAS's
    pool of a thread per core gains nothing and its idle threads spin: news20.t -s 3 took 2.4 s of CPU in 1.7 s of
    wall with it, 1.4 s without, the same wall (a busy machine pays the spinning). Set before NumPy is imported."""
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def _run(command):
    """Run a command's Click main and end the process here: flush the output, then leave without the
    interpreter's finalization (it resets the signal handlers, so a Ctrl-C during it would kill the process by
    the signal instead of exiting with 130; it also only joins threads whose work is done). First, with the
    signals ignored, it removes the temporary paths the command left: a signal can land between a path's creation
    and the code that would remove it."""
    try:
        command()
        code = 0
    except SystemExit as exc:
        code = exc.code
    # the command is over (its output committed or cleaned up): a signal now would only change the exit code
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, signal.SIG_IGN)
    remove_temporaries()
    if code is None:
        code = 0
    elif not isinstance(code, int):
        sys.stderr.write(f"{code}\n")
        code = 1
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):      # a closed pipe (llsvm-predict ... | head): nothing more to say
            pass
    os._exit(code)


def convert():
    install_startup_handlers()
    one_blas_thread()
    from .convert import main
    _run(main)


def scale():
    install_startup_handlers()
    one_blas_thread()
    from .scale import main
    _run(main)


def _batch_or(main, name):
    """The command's main, or, for `--jobs FILE` (llsvm/cli/jobs.py), the batch of its command lines in FILE."""
    from .jobs import jobs_argument, run_jobs
    path = jobs_argument(sys.argv[1:])
    if path is None:
        return main
    return lambda: sys.exit(run_jobs(main, name, path))


def train():
    install_startup_handlers()
    one_blas_thread()
    from .train import main
    _run(_batch_or(main, "llsvm-train"))


def predict():
    install_startup_handlers()
    one_blas_thread()
    from .predict import main
    _run(_batch_or(main, "llsvm-predict"))


def svm_train():
    """llsvm-svm-train: svm-train's command line, run by llsvm-train (llsvm/cli/svmtrain.py)."""
    install_startup_handlers()
    one_blas_thread()
    from .svmtrain import main
    _run(main)


def easy():
    """llsvm-easy: LIBSVM's tools/easy.py in one process (llsvm/cli/easy.py)."""
    install_startup_handlers()
    one_blas_thread()
    from .easy import main
    _run(main)
