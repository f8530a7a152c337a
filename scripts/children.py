"""Watching a child process the signal measurements start (scripts/bench_signals.py, tests/test_signal_kernels.py):
its CPU time from /proc, and reaping it with os.wait4 so its rusage is its own; and bounds on a child that hold
however loaded the machine is (the tests that wait for a child: tests/conftest.py). Standard library only.

A child's work is bounded by its CPU time, never by the wall clock: at a load of 30 on 2 cores a process gets a
fifteenth of a core, and a wall bound that holds on an idle machine fails there. A child that waits forever (the
bugs a hang guard is for) is told by its CPU time too: it stops using any (STALL seconds without a clock tick of
CPU), where a runnable process, however loaded the machine, gets its share within a second or two.
"""
import os
import signal
import subprocess
import time

TICK = os.sysconf("SC_CLK_TCK")
STALL = 120.0           # seconds of wall without a tick of CPU time: the child is blocked


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


class Watch:
    """The CPU time a child has used since the watch began (`used()`), and whether it has stalled: no tick of CPU
    time for `stall` seconds (`stalled()`, as of the last `used()`)."""

    def __init__(self, pid, stall=STALL):
        self.pid, self.stall = pid, stall
        self.start = self.last = cpu_of(pid)
        self.t_last = time.monotonic()

    def used(self):
        c = cpu_of(self.pid)
        if c != self.last:
            self.last, self.t_last = c, time.monotonic()
        return c - self.start

    def stalled(self):
        return time.monotonic() - self.t_last > self.stall


def reap_within(p, cpu, stall=STALL):
    """Reap the child (os.wait4) once it exits: (wait status, rusage), with p.returncode set; None, the child left
    unreaped, once it has used `cpu` CPU seconds from now (it is still working) or has stalled (blocked)."""
    watch = Watch(p.pid, stall)
    while True:
        got = reap(p, time.monotonic() + 0.05)
        if got is not None:
            return got
        if watch.used() >= cpu or watch.stalled():
            return None


def wait_for(point, p, cpu, what, stall=STALL, every=0.01):
    """Poll point() until it is true while the child (a Popen) runs; AssertionError when the child ends first, or
    has used `cpu` CPU seconds from now without getting there, or has stalled (blocked): the child is then killed.
    `what` names the point in the messages."""
    watch = Watch(p.pid, stall)
    while not point():
        if p.poll() is not None:
            raise AssertionError(f"the command ended (exit {p.returncode}) before {what}")
        if watch.used() >= cpu:
            p.kill()
            p.wait()
            raise AssertionError(f"the command used {cpu} s of CPU without {what}")
        if watch.stalled():
            p.kill()
            p.wait()
            raise AssertionError(f"the command stalled ({stall} s without CPU time) before {what}")
        time.sleep(every)


def _stacks(p):
    """End a stalled child with SIGABRT first: a Python child started with PYTHONFAULTHANDLER=1 then writes every
    thread's stack to its stderr, which is returned when the caller gave the child a stderr pipe (else "")."""
    try:
        os.kill(p.pid, signal.SIGABRT)
        p.wait(timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        pass
    if p.poll() is None:
        p.kill()
        p.wait()
    if p.stderr is None:
        return ""
    try:
        text = p.stderr.read()
    except (OSError, ValueError):
        return ""
    text = text.decode("utf-8", "replace") if isinstance(text, bytes) else text
    return "\n" + text[-6000:] if text else ""


def _until_exit(p, step, cpu, what, stall):
    watch = Watch(p.pid, stall)
    while True:
        try:
            return step()
        except subprocess.TimeoutExpired:
            pass
        if watch.used() >= cpu or watch.stalled():
            why = f"used {cpu} s of CPU" if watch.used() >= cpu else f"stalled ({stall} s without CPU time)"
            raise AssertionError(f"the command {why} without {what}{_stacks(p)}")


def wait_within(p, cpu, what="exiting", stall=STALL):
    """p.wait() (its pipes left as they are: stdin stays open); AssertionError when the child has used `cpu` CPU
    seconds from now without exiting, or has stalled (blocked): the child is then killed. Returns the exit code."""
    return _until_exit(p, lambda: p.wait(timeout=0.1), cpu, what, stall)


def communicate_within(p, cpu, what="exiting", stall=STALL):
    """p.communicate() (stdout and stderr read as they come; stdin closed), bounded as wait_within."""
    return _until_exit(p, lambda: p.communicate(timeout=0.1), cpu, what, stall)
