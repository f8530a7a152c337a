"""The console scripts (pyproject.toml). Each installs the start-up signal handlers before anything heavy is
imported (click, numpy, scipy, the kernels), so a Ctrl-C at any time ends the command with exit 130 and no
traceback; then it imports and runs its command. This module imports nothing else of llsvm (llsvm/__init__.py
and llsvm/cli/__init__.py import nothing either)."""
import os
import signal


def _exit_now(signum, frame):
    os._exit(128 + signum)


def install_startup_handlers():
    """Until a command's body runs there is nothing to clean up, so SIGINT or SIGTERM ends the process at once,
    silently, with 128 + the signal (130, 143). The body's own handlers (cli/common.py, handle_errors) take over
    while it runs and give these back when it ends."""
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, _exit_now)


def convert():
    install_startup_handlers()
    from .convert import main
    return main()


def train():
    install_startup_handlers()
    from .train import main
    return main()


def predict():
    install_startup_handlers()
    from .predict import main
    return main()
