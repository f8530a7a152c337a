"""The kernels' stop flag (cext/_stop.pyx) armed around a command's body or a call from Python, so that Ctrl-C
stops a kernel in the middle of its loop: the one home of its arming (issue 45, H1).

Two ways in, one state (`KERNEL_STOP`), so that they nest:
- a command (llsvm/cli/common.py): `handle_errors` installs its Python handlers of SIGINT and SIGTERM and says so
  (`want()`); the body then arms both (`arm_for_command()`, once its options are checked: the flag's module is a
  compiled one, which --help and an option error do not load) until it ends (`disarm()`). A kernel cut short
  raises SystemExit(128 + signal) through the command's handler.
- a call from Python (`stoppable`: llsvm.train, cross_validation, find_parameter_C, grid_search, and kernel
  prediction): armed for the call and given back when it returns or raises, so that the host program's handlers
  are as they were. Only SIGINT, and only while its Python handler is Python's own (signal.default_int_handler,
  which turns Ctrl-C into KeyboardInterrupt): a kernel cut short then raises KeyboardInterrupt, as any Python code
  interrupted there would. A handler of the host's own (and SIGTERM, whose Python default is to end the process)
  is left alone: the flag is not armed for it, and Python runs it when the kernel call returns, as before.
  Inside an armed command or call (the CLI's body calls llsvm.train) the call arms nothing and disarms nothing.

A call from a thread other than the main one arms nothing either: Python runs signal handlers, and raises
KeyboardInterrupt, in the main thread only, so Ctrl-C is the main thread's business; a fit in a worker thread
runs to its end (or to its own error), unless the flag is armed meanwhile by the main thread (a command, or a call
of the main thread), whose stop then stops it too, with KeyboardInterrupt (SystemExit(128 + signal) in a command).
The state is only ever changed by the main thread, so it needs no lock.
"""
import functools
import signal
import threading


class KernelStop:
    """Who holds the flag armed: nobody (module None), a command, or the outermost call from Python."""

    def __init__(self):
        self.module = None          # the compiled _stop while armed
        self.wanted = False         # a command's handlers are in place: its body arms both signals

    @property
    def armed(self):
        return self.module is not None

    def want(self, wanted):
        """A command's handle_errors: whether its body's arm_for_command() arms (its handlers are installed)."""
        self.wanted = bool(wanted)

    def arm_for_command(self):
        """SIGINT and SIGTERM stop a kernel from here to disarm(): SystemExit(128 + signal)."""
        if self.wanted and self.module is None:
            from ._ext import _stop
            _stop.arm()
            self.module = _stop

    def arm_for_call(self):
        """Arm SIGINT for a call from Python when nothing holds the flag, this is the main thread and SIGINT's
        Python handler is Python's own; True when this call armed it (and must disarm)."""
        if self.module is not None or threading.current_thread() is not threading.main_thread():
            return False
        if signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
            return False
        from ._ext import _stop
        if not _stop.arm(sigint=True, sigterm=False, keyboard=True):
            return False
        self.module = _stop
        return True

    def disarm(self):
        self.wanted = False
        if self.module is not None:
            self.module.disarm()
            self.module = None


KERNEL_STOP = KernelStop()


def stoppable(fn):
    """Decorate a public call that runs kernels: Ctrl-C stops them within a second (KeyboardInterrupt), the flag
    armed for the call alone (see the module's text)."""
    @functools.wraps(fn)
    def call(*args, **kwargs):
        mine = KERNEL_STOP.arm_for_call()
        try:
            return fn(*args, **kwargs)
        finally:
            if mine:
                KERNEL_STOP.disarm()
    return call
