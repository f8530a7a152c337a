"""Watching a child process the signal measurements start (scripts/bench_signals.py, tests/test_signal_kernels.py):
its CPU time from /proc, and reaping it with os.wait4 so its rusage is its own. Standard library only."""
import os
import signal
import time

TICK = os.sysconf("SC_CLK_TCK")


def cpu_of(pid):
    """utime + stime of a process (all its threads), from /proc/<pid>/stat, in seconds."""
    with open(f"/proc/{pid}/stat") as f:
        s = f.read()
    fields = s[s.rindex(")") + 2:].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def reap(p, deadline, every=0.001):
    """os.wait4 polled every `every` seconds until the child (a Popen) has exited or the deadline (monotonic)
    passed: (wait status, rusage), with p.returncode set, or None."""
    while True:
        pid, status, usage = os.wait4(p.pid, os.WNOHANG)
        if pid:
            p.returncode = os.waitstatus_to_exitcode(status)
            return status, usage
        if time.monotonic() > deadline:
            return None
        time.sleep(every)


def kill(p):
    """SIGKILL the child and reap it."""
    os.kill(p.pid, signal.SIGKILL)      # not p.kill(): its poll() would reap the child before our wait4
    _, status, _ = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
