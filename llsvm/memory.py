"""Allocation checks: every array whose size comes from the data (weight vectors, per-class and per-feature
arrays, caches) is checked here before it is made, so a hostile or mistaken input ends with a message instead of
an OOM kill or a MemoryError.

The limit is the --memory budget when the user gives one, else the memory this process can still get: the
machine's available memory (MemAvailable) and the room left under an address-space limit (ulimit -v), whichever
is smaller. Arrays bounded by the size of the input itself (rows read from a file) are not checked here: the
parser's line limit and block sizes bound them.
"""
import os
import re
import resource

from .errors import LLSVMError, ParameterError

# the smallest --memory taken at all (llsvm-train refuses less as it parses the option)
MIN_BUDGET = 256 << 10


class MemoryLimitError(LLSVMError):
    """A data-sized allocation that does not fit in the budget or in the memory available."""


def format_size(n):
    """Bytes as people read them: 512 B, 64 KiB, 7.6 MiB, 16 GiB."""
    n = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if n < 1024 or unit == "TiB":
            if unit == "B":
                return f"{int(n)} B"
            return f"{n:.0f} {unit}" if n >= 100 or n == int(n) else f"{n:.1f} {unit}"
        n /= 1024.0
    return f"{n:.0f} TiB"  # pragma: no cover - the loop returns


def _meminfo_available():
    try:
        with open("/proc/meminfo", "rb") as f:
            for line in f:
                if line.startswith(b"MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def _address_space_left():
    """Room left under RLIMIT_AS (None: no limit)."""
    try:
        soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    except (ValueError, OSError, AttributeError):
        return None
    if soft == resource.RLIM_INFINITY:
        return None
    used = 0
    try:
        with open("/proc/self/statm", "rb") as f:
            used = int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        pass
    return max(0, soft - used)


def machine_available():
    """Bytes the machine has available for new processes (MemAvailable; None when unknown): what worker processes
    started from here share, each under its own ulimit -v (a limit per process, not on their sum)."""
    return _meminfo_available()


def available():
    """Bytes this process can still allocate: min(MemAvailable, room under ulimit -v); None when unknown."""
    known = [v for v in (_meminfo_available(), _address_space_left()) if v is not None]
    return min(known) if known else None


def check(nbytes, what, *, budget=None, hint=None):
    """Raise MemoryLimitError unless an allocation of `nbytes` fits: in `budget` (--memory) when given, else in the
    memory available. `what` says what is allocated and why ("feature index 2147483647 makes a weight vector of
    16 GiB"); `hint` is the way out."""
    nbytes = int(nbytes)
    if budget is not None:
        if nbytes <= budget:
            return
        limit = f"more than --memory {format_size(budget)}"
    else:
        free = available()
        if free is None or nbytes <= free:
            return
        limit = f"more than the {format_size(free)} of memory available"
    raise MemoryLimitError(f"{what}, {limit}" + (f"; {hint}" if hint else ""))


HASH_HINT = "hash the features into fewer with --hash-bits (-s streamsvm, -s bm) or renumber them"


def check_weights(n_features, count=1, *, budget=None, cause=None, extra=0):
    """Check `count` float64 weight vectors of n_features (+1 for a bias) before they are made; `extra` bytes
    of other data-sized arrays come on top. The message names what sets the size: `cause`, by default the
    feature index n_features (the largest index of 1-based data)."""
    n_features = int(n_features)
    one = 8 * (n_features + 1)
    total = count * one + int(extra)
    what = f"{cause or f'feature index {n_features}'} makes a weight vector of {format_size(one)}"
    if count > 1 or extra:
        what += f"; training needs {count} arrays of that size ({format_size(total)})"
    check(total, what, budget=budget, hint=HASH_HINT)


CLASSES_HINT = ("each distinct label is a class: for real-valued targets use a regression solver (-s 11, 12 or 13), "
                "or merge the labels into fewer classes")


def check_classes(n_classes, problems, nbytes, what, *, budget=None):
    """Refuse a run whose per-class state does not fit, before any of it is made, naming the count: `n_classes`
    classes make `problems` (text: "100000 one-vs-rest problems", "4999950000 class pairs (one-vs-one)"), whose
    `what` (text: "labels, dual variables and weight vectors") take `nbytes` in all."""
    check(nbytes, f"{n_classes} classes make {problems}: their {what} take {format_size(nbytes)}", budget=budget,
          hint=CLASSES_HINT)


# the share of the memory available a kernel cache may take (the rest is for the solver's other arrays)
CACHE_SHARE = 0.5


def cache_mb(requested_mb, *, share=CACHE_SHARE):
    """The MB a kernel cache of -m `requested_mb` may take: LIBSVM's -m is a cap on a cache filled as columns are
    computed, so -m 1e12 means "as much as is useful", never more than `share` of the memory available now
    (MemAvailable, the room under ulimit -v). Call it when the cache is made."""
    free = available()
    mb = float(requested_mb)
    if free is not None:
        mb = min(mb, share * free / float(1 << 20))
    return mb


def within_available(budget):
    """A --memory budget as a run can honour it: one above the memory available (--memory 1000T) is the memory
    available, as a run without --memory has it (never below MIN_BUDGET)."""
    free = available()
    if budget is None or free is None:
        return budget
    return min(int(budget), max(MIN_BUDGET, int(free)))


def check_floor(budget, text=None):
    """Refuse a --memory budget below MIN_BUDGET (ParameterError; `text` is the size as the user wrote it)."""
    if budget is not None and budget < MIN_BUDGET:
        shown = f" {text}" if text is not None else ""
        raise ParameterError(f"memory budget{shown} is too small (at least {format_size(MIN_BUDGET)})")


_SIZE = re.compile(r"\s*(\d+(?:\.\d*)?)\s*([kKmMgGtT]?)(i?[bB])?\s*")
_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}


def parse_size(text):
    """Bytes of a size such as 64M, 1.5G, 512k, 1000 (binary units; a trailing B or iB is allowed)."""
    m = _SIZE.fullmatch(str(text))
    if not m:
        raise ParameterError(f"invalid size {text!r} (examples: 64M, 2G, 512K)")
    n = int(float(m.group(1)) * _UNITS[m.group(2).lower()])
    check_floor(n, text)
    return n


def check_budget(budget, need, state, *, solver, rows, partial=False, note=None,
                 what="alpha and the per-row state"):
    """The one check of a --memory budget against what a run needs at least (the out-of-core solvers): `need`
    bytes in all (never less than MIN_BUDGET), of which `state` for `what` (alpha and the other per-row state of
    `rows` rows). Refuses with ParameterError naming the minimum; `partial`: the rows read so far (text, whose
    size is not known before it is read). Returns the minimum."""
    minimum = max(MIN_BUDGET, int(need))
    if budget is None or budget >= minimum:
        return minimum
    on = f"the {rows} rows read so far" if partial else f"{rows} rows"
    raise ParameterError(f"--memory {format_size(budget)} is too small for -s {solver} on {on}: {what} "
                         f"need {format_size(state)}, at least {format_size(minimum)} in all"
                         + (f" ({note})" if note else ""))


# glibc's mallopt parameter
_M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD = 1 << 20


def release_freed_blocks(threshold=MMAP_THRESHOLD):
    """Under a --memory budget: have glibc serve every allocation of `threshold` bytes or more (blocks read from a
    file, parsed text, loaded blocks) by mmap, so that freeing it gives it back to the system at once.

    glibc otherwise raises this threshold to the size of the largest block freed (up to 32 MiB); blocks of that
    size then come from the heap, where the small allocations made between them (a cache's rows, temporaries)
    keep the freed pages resident, and the resident size drifts far above what is in use (measured, -s streamsvm
    --memory 64M on 500,000 rows: 110 MB in one run, 228 MB in the next). Setting the threshold turns that
    adjustment off for the rest of the process. Without glibc (no mallopt) nothing changes."""
    import ctypes
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    return bool(mallopt(_M_MMAP_THRESHOLD, int(threshold)))
