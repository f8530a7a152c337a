# The stop flag of every long kernel loop (issue 27): a signal takes effect within a second, also in the middle of a
# kernel call that runs for minutes without the GIL.
#
# Python runs a signal's handler only between two bytecodes of the main thread, so a kernel that holds no GIL for
# minutes (an SMO solve of a class pair, an online epoch, kernel prediction over a test file) would keep a Ctrl-C or
# a SIGTERM waiting until it returns. The rule, one for every kernel:
# - `arm()` (called through llsvm/stop.py: by the CLI's handle_errors while a command's body runs, after its Python
#   handlers are set, and around a training call from Python, issue 45) puts a C handler before the one Python
#   installed for SIGINT and SIGTERM (or SIGINT alone): it records the signal number in one process-wide flag (a
#   sig_atomic_t, async-signal-safe) and then calls Python's own C handler, which marks the signal for the Python
#   handler as usual. A signal that the process ignores (SIG_IGN, e.g. a background job's inherited SIGINT) or
#   leaves to the default action is not armed: it stays as it was.
# - Every long nogil loop calls `stop_requested()` (a read of the flag) every few thousand elementary steps, and
#   at least once per step that costs more than a few microseconds, and leaves the loop when it is nonzero; the
#   kernel frees its buffers and its Python wrapper, holding the GIL again, calls `check_stop()`, which lets Python
#   run the handler now (PyErr_CheckSignals: the CLI's handler raises SystemExit(130 or 143), Python's default one
#   KeyboardInterrupt; the drivers' finally blocks clean up) and raises itself when no handler did (a kernel in
#   another thread than the main one, where Python runs no handler): SystemExit(128 + signal), or KeyboardInterrupt
#   for SIGINT when armed with keyboard=True (a call from Python, whose Ctrl-C is KeyboardInterrupt). A result cut
#   short is never returned.
# - `disarm()` gives the previous C handlers back; `signal.signal` replacing a handler replaces this one too.
# The flag is cleared by arm() and by disarm(), so an in-process caller (the tests) can run one command after another.
from cpython.exc cimport PyErr_CheckSignals

cdef extern from *:
    """
    #include <signal.h>
    #include <string.h>

    static volatile sig_atomic_t llsvm_stop_signum = 0;
    static struct sigaction llsvm_prev[2];
    static int llsvm_armed[2] = {0, 0};

    static int llsvm_slot(int sig) { return sig == SIGINT ? 0 : 1; }

    static void llsvm_on_signal(int sig, siginfo_t* info, void* ctx) {
        struct sigaction* prev = &llsvm_prev[llsvm_slot(sig)];
        llsvm_stop_signum = sig;
        if (prev->sa_flags & SA_SIGINFO) {
            if (prev->sa_sigaction != NULL) prev->sa_sigaction(sig, info, ctx);
        } else if (prev->sa_handler != SIG_DFL && prev->sa_handler != SIG_IGN && prev->sa_handler != NULL) {
            prev->sa_handler(sig);
        }
    }

    /* 1 when armed; 0 when the signal is ignored or left to its default action (nothing to put a flag before) */
    static int llsvm_arm(int sig) {
        struct sigaction cur, act;
        int k = llsvm_slot(sig);
        if (sigaction(sig, NULL, &cur) != 0) return 0;
        if (!(cur.sa_flags & SA_SIGINFO) && (cur.sa_handler == SIG_IGN || cur.sa_handler == SIG_DFL)) return 0;
        if ((cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == llsvm_on_signal) return 1;   /* armed already */
        memset(&act, 0, sizeof(act));
        act.sa_sigaction = llsvm_on_signal;
        act.sa_mask = cur.sa_mask;
        act.sa_flags = (cur.sa_flags & ~SA_RESETHAND) | SA_SIGINFO;
        llsvm_prev[k] = cur;
        if (sigaction(sig, &act, NULL) != 0) return 0;
        llsvm_armed[k] = 1;
        return 1;
    }

    /* give the previous handler back, unless someone (signal.signal) has replaced this one since */
    static void llsvm_disarm(int sig) {
        struct sigaction cur;
        int k = llsvm_slot(sig);
        if (!llsvm_armed[k]) return;
        llsvm_armed[k] = 0;
        if (sigaction(sig, NULL, &cur) != 0) return;
        if ((cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == llsvm_on_signal) sigaction(sig, &llsvm_prev[k], NULL);
    }
    """
    int SIGINT
    int SIGTERM
    int llsvm_stop_signum
    int llsvm_armed[2]
    int llsvm_arm(int sig) nogil
    void llsvm_disarm(int sig) nogil


cdef bint raise_keyboard = False   # check_stop's own raise for SIGINT: KeyboardInterrupt (arm(keyboard=True))


cdef int stop_requested() noexcept nogil:
    """The signal that asked the kernels to stop, or 0."""
    return llsvm_stop_signum


cdef int check_stop() except -1:
    """With the GIL, after a kernel's nogil loop: raise if a signal asked it to stop (see above), else 0."""
    cdef int signum = llsvm_stop_signum
    if signum == 0:
        return 0
    PyErr_CheckSignals()            # the CLI's handler raises SystemExit(128 + signum) here, Python's KeyboardInterrupt
    if raise_keyboard and signum == SIGINT:
        raise KeyboardInterrupt
    raise SystemExit(128 + signum)


def arm(sigint=True, sigterm=True, keyboard=False):
    """Put the stop flag's handler before the current C handlers of SIGINT and SIGTERM (those asked for, among those
    that are neither ignored nor default) and clear the flag. keyboard: check_stop raises KeyboardInterrupt for a
    SIGINT that no Python handler turned into an exception (else SystemExit(130)). Returns the signals armed."""
    global llsvm_stop_signum, raise_keyboard
    llsvm_stop_signum = 0
    raise_keyboard = bool(keyboard)
    return tuple(sig for sig, wanted in ((SIGINT, sigint), (SIGTERM, sigterm)) if wanted and llsvm_arm(sig))


def disarm():
    """Give back the C handlers arm() found and clear the flag: it speaks only for the body that armed it, so a
    kernel called later in the same process (a library caller, the next test) is not stopped by it."""
    global llsvm_stop_signum, raise_keyboard
    llsvm_disarm(SIGINT)
    llsvm_disarm(SIGTERM)
    llsvm_stop_signum = 0
    raise_keyboard = False


def armed():
    """The signals whose stop-flag handler is in place (arm()'s, not given back yet)."""
    return tuple(sig for sig, k in ((SIGINT, 0), (SIGTERM, 1)) if llsvm_armed[k])


def stopped():
    """The signal number the flag holds (0: none)."""
    return llsvm_stop_signum


def raise_if_stopped():
    """check_stop() for Python code between kernel calls."""
    check_stop()


def request_stop(int signum):
    """Set the flag as a signal would (for tests of the kernels' polling, without a signal)."""
    global llsvm_stop_signum
    llsvm_stop_signum = signum


def clear():
    global llsvm_stop_signum
    llsvm_stop_signum = 0
