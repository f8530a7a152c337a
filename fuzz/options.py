"""The `options` fuzz target (issue 27): llsvm-train's options with hostile values, run in-process on a tiny file.

An input is text: the option tokens of one llsvm-train command line (e.g. ``-s 7 -w1 0 -c 1e308``), as libFuzzer
mutates them (its dictionary holds every option and the values of VALUES: NaN, infinities, 0, negatives, huge and
tiny numbers, text). The tokens are read as the command would read them, with three guards that keep a run inside
its scratch directory: a token that is not an option is dropped (it would be taken for the training file), the
options that take a path (--json, --tmp-dir, --keep-active-set) get one inside the scratch directory, and the
command always ends ``-q TRAINING_FILE MODEL_FILE``. A token ``@NAME`` picks the training file: a tiny set of
two classes (the default), three classes, one class, or real-valued targets (each runs in milliseconds). The
option values themselves are never capped: they are the input.

llsvm-train's Click command runs in-process (click's CliRunner, through the command's own handle_errors); then,
when it wrote a model, llsvm-predict on that model and the same file. A run that takes longer than GUARD_SECONDS
(a legitimate value such as --max-iter 2147483647 can ask for hours) gets a SIGINT, as a user's Ctrl-C: it must
then end with exit 130 within STOP_SECONDS (issue 27, item 1); the per-input timeout of the runner catches a run
that does not.

--dask and --workers (issue 44) take addresses (local, malformed ones, an unreachable tcp://127.0.0.1:1) and
counts (0, negative, huge, not numbers). No input starts a cluster or connects: the training files are text,
which --dask refuses before either (a cluster's workers read llsvm binary files), and --workers beyond the
machine is refused before any worker starts; a command with --dask runs with Dask's connect timeout at
DASK_CONNECT (a guard, should that order ever change), once distributed has been imported outside the command's
guard and address-space limit (a SIGINT in the middle of its first import would leave it half imported for the
inputs after).

Rules (OracleFailure), for train and predict alike:
- options.exit_code: the exit code is 0, 1 or 2 (130 only after the guard's SIGINT);
- options.internal_error / options.traceback: no "internal error" and no traceback in the output;
- options.exception: no exception escapes the command (handle_errors maps every one);
- options.message: an exit 1 or 2 prints an error line (ERROR:, Error:, LIBLINEAR's can't ... / Wrong input
  format) on stderr;
- options.model_on_failure: a model file exists only after exit 0;
- options.no_model: an exit 0 of a training run (no -v, -C, --grid or --help) writes the model;
- options.quiet: with -q, nothing on stdout but LIBLINEAR's printf lines (-v, -C, --grid) and --help;
- options.python_warning: no Python warning that Python shows by default (NumPy's RuntimeWarning, ...) reaches
  the user;
- options.json: a --json file written on exit 0 is JSON;
- options.predict_refuses: llsvm-predict accepts every model llsvm-train wrote (exit 0, one label per row);
- options.slow_stop: after the guard's SIGINT the command ends within STOP_SECONDS;
- options.leftovers: no temporary file or directory is left behind (in --tmp-dir or beside the outputs).
"""
import contextlib
import gc
import json
import os
import re
import shutil
import signal
import threading
import time
import warnings

from click.testing import CliRunner

from llsvm.cli import predict as predict_cli
from llsvm.cli import train as train_cli
from llsvm.params import specs
from llsvm.solvers import registry

from . import targets

# every solver's driver, options and metrics imported now, so that the fuzzer's worker instruments them (it
# instruments what is imported while it imports this module), as the commands would import them on first use
for _spec in specs():
    registry.driver(_spec), registry.metrics(_spec)
import llsvm.solvers.grid, llsvm.predict, llsvm.solvers.trainer  # noqa: E401, E402, F401
import llsvm.dask.client, llsvm.cli.cluster  # noqa: E401, E402, F401

GUARD_SECONDS = 1.0          # a run still going after this gets a SIGINT (the user's Ctrl-C)
STOP_SECONDS = 2.0           # ... and must end within this (the 1 s, with room for a loaded machine)

# the values every option is tried with (libFuzzer splices and mutates them)
VALUES = ["nan", "-nan", "NaN", "inf", "-inf", "Infinity", "0", "-0", "-1", "-2147483648", "1e308", "-1e308",
          "1.7976931348623157e308", "2147483647", "2147483648", "4294967296", "9223372036854775807",
          "9223372036854775808", "18446744073709551616", "99999999999999999999", "1e-320", "4.9e-324",
          "2.2250738585072014e-308", "1e-300", "abc", "", "0x10", "1_0", "1", "2", "3", "0.5", "0.001", "10",
          "100", "1e6"]
SIZES = ["1K", "256K", "1M", "64M", "1000T", "99999999999999999999G", "0", "1e308", "-1M", "nanM", "1.5G"]
GRIDS = ["C=1:10:3", "C=1:10:99999999999999999999999", "C=1:10:20000000", "C=1:10:2147483648", "sigma=1e-320",
         "sigma=1e200", "g=nan", "g=0", "g=1e308", "C=1e308", "C=1e-320", "C=0.5,1;g=0.25,0.5", "sigma=1,2;C=1",
         "C=1:10:0", "C=inf", "C=1:1e308:3", "C=4.9e-324:1:3", "x=1", "C=", "C=1;C=2"]
SOLVERS = [s.name for s in specs()] + ["8", "99", "-1", "abc", ""]
# --dask: local, an unreachable scheduler, malformed addresses; --workers: counts
DASK = ["local", "tcp://127.0.0.1:1", "127.0.0.1:1", "", "foo://bar", "tcp://", "tcp://127.0.0.1", "localhost:x",
        "tcp://127.0.0.1:99999", "tcp://127.0.0.1:0", "tcp://[::1", "inproc://x", "ucx://127.0.0.1:1",
        "tls://127.0.0.1:1", "LOCAL", "local:1", "abc"]
WORKERS = ["0", "-1", "1", "2", "3", "8", "9", "1000", "2147483648", "99999999999999999999", "1e3", "1.5", "nan",
           "abc", ""]
DASK_CONNECT = "0.5s"         # Dask's connect timeout in a command with --dask
WEIGHT_FLAGS = ["-w1", "-w-1", "-w2", "-w3", "-w0", "-w2147483648", "-w99999999999999999999"]
SPECIAL = {               # values of options whose values are not numbers
    "-s": SOLVERS,
    "-B": VALUES + ["R", "r"],
    "--h1-c": ["inf", "Infinity", "nan", "0", "0.5", "1", "2", "1e308", "-1", "abc"],
    "--rbf-depth": ["auto", "none", "0", "1", "2", "-1", "2147483648", "99999999999999999999", "abc"],
    "--hard-class": ["greedy", "alternate", "larger", "abc"],
    "--rbf-select": ["validation", "train", "abc"],
    "--oned": ["scan", "exact", "abc"],
    "--oned-norm": ["unit", "paper", "abc"],
    "--memory": SIZES,
    "--grid": GRIDS,
    "-h": ["0", "1", "2", "-1", "2147483648"],
    "--dask": DASK,
    "--workers": WORKERS,
}
PATH_OPTIONS = {"--json": "run.json", "--tmp-dir": "tmp", "--keep-active-set": "keep"}
TRAINING_MODES = ("-v", "-C", "--grid")       # options after which llsvm-train writes no model

# the tiny training files: (name, text); each runs in milliseconds
DATASETS = {
    "two": "".join(f"{1 if i % 2 else -1} 1:{(i % 5) / 4 - 0.4 + (0.5 if i % 2 else -0.5):.3f} "
                   f"2:{(i % 3) - 1} {3 + i % 4}:{0.25 * (i % 7) - 0.5:.2f}\n" for i in range(20)),
    "three": "".join(f"{1 + i % 3} {1 + i % 3}:1 4:{(i % 4) / 3:.3f} 5:{0.5 - (i % 5) / 4:.2f}\n" for i in range(21)),
    "one": "".join(f"1 1:{i / 6:.3f} 2:{1 - i / 6:.3f}\n" for i in range(6)),
    "real": "".join(f"{(i % 9) / 4 - 1:.2f} 1:{(i % 9) / 8:.3f} 2:{(i % 4) / 3:.3f}\n" for i in range(20)),
}


def _option_table():
    """{flag: number of values} for every option of llsvm-train's Click command (LIBSVM's -h included)."""
    table = {}
    for p in train_cli.main.params:
        if p.param_type_name != "option":
            continue
        takes = 0 if p.is_flag else p.nargs
        for flag in p.opts + p.secondary_opts:
            table[flag] = takes
    table.pop("--weight", None)          # the -wi form is the one users type
    table["-h"] = 1                      # -h 0|1, or the help (command() tells them apart)
    return table


OPTIONS = _option_table()
_WEIGHT = re.compile(r"-w[+-]?\d+")


def command(data, work):
    """(llsvm-train's arguments, dataset name, whether a model is expected on exit 0) of one input."""
    text = data.decode("latin-1")
    tokens = text.split()
    args = []
    dataset = "two"
    writes_model = True
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        i += 1
        if tok.startswith("@"):
            if tok[1:] in DATASETS:
                dataset = tok[1:]
            continue
        if _WEIGHT.fullmatch(tok):
            takes = 1
        elif tok == "-h":
            # LIBSVM's -h 0|1 (shrinking) when a number follows, else the help, which takes no value
            takes = 1 if i < len(tokens) and re.fullmatch(r"[+-]?\d+", tokens[i]) else 0
        elif tok in OPTIONS:
            takes = OPTIONS[tok]
        else:
            continue                      # not an option: it would be taken for a file name
        values = tokens[i:i + takes]
        i += len(values)
        if tok in PATH_OPTIONS:
            path = work.file(PATH_OPTIONS[tok])
            if tok != "--json":
                os.makedirs(path, exist_ok=True)
            values = [path]
        while len(values) < takes:
            values.append("")             # a missing value is an empty one
        if tok in TRAINING_MODES or tok == "--help" or (tok == "-h" and not takes):
            writes_model = False
        args += [tok] + values
    return args, dataset, writes_model


class _Guard:
    """A SIGINT to this process after `seconds` (the user's Ctrl-C), unless cancelled first. While it is set, a
    SIGINT outside the command (after it returned) is absorbed here instead of raising KeyboardInterrupt."""

    def __init__(self, seconds):
        self.seconds = seconds
        self.fired_at = None

    def _fire(self):
        self.fired_at = time.monotonic()
        os.kill(os.getpid(), signal.SIGINT)

    def __enter__(self):
        self.previous = signal.signal(signal.SIGINT, lambda signum, frame: None)
        self.timer = threading.Timer(self.seconds, self._fire)
        self.timer.daemon = True
        self.timer.start()
        return self

    def __exit__(self, *exc):
        self.timer.cancel()
        self.timer.join()
        signal.signal(signal.SIGINT, self.previous)
        return False


ERROR_LINE = re.compile(r"^(ERROR: |Error: |can't |Wrong input format)", re.MULTILINE)


def _mapped():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[0]) * PAGE


def _collect():
    """Free what an ended command left in reference cycles (the frames of the exception that carried its exit code
    hold its arrays until Python's collector runs) once the process has grown by COLLECT_GROWTH since the last
    collection: one command per process, as the console scripts run, never carries that over."""
    global _collected_at
    if _mapped() > _collected_at + COLLECT_GROWTH:
        gc.collect()
        _collected_at = _mapped()


PAGE = os.sysconf("SC_PAGE_SIZE")
COLLECT_GROWTH = 256 << 20
_collected_at = 0
# the address space one command may add to what the process has mapped (targets.memory_limit): the memory
# available to it (--memory 1000T's budget, -m's cap) is then bounded, as a console script's is by the machine
COMMAND_MB = 768


def _run(cmd, args, what):
    """Run one command in-process; check the rules every command meets; returns (result, exit code)."""
    runner = CliRunner()
    with warnings.catch_warnings(record=True) as caught, _Guard(GUARD_SECONDS) as guard, \
            targets.memory_limit(COMMAND_MB):
        warnings.simplefilter("always")
        result = runner.invoke(cmd, args, catch_exceptions=True)
        ended = time.monotonic()
    exception = result.exception
    result.exc_info = result.exception = None
    _collect()
    code = result.exit_code
    out, err = result.stdout, result.stderr
    shown = f"{what} {' '.join(args)}: exit {code}\nstdout: {out[-600:]}\nstderr: {err[-600:]}"
    if guard.fired_at is not None:
        targets.require(ended - guard.fired_at <= STOP_SECONDS, "options.slow_stop",
                f"ended {ended - guard.fired_at:.1f} s after SIGINT; {shown}")
        if code == 130:
            return result, code
    targets.require(exception is None or isinstance(exception, SystemExit), "options.exception",
                    f"{type(exception).__name__}: {exception}; {shown}")
    targets.require(code in (0, 1, 2), "options.exit_code", shown)
    targets.require("internal error" not in err + out, "options.internal_error", shown)
    targets.require("Traceback" not in err + out, "options.traceback", shown)
    if code != 0:
        targets.require(ERROR_LINE.search(err) is not None, "options.message", shown)
    # the warnings a user would see (Python hides DeprecationWarning and ResourceWarning by default)
    shown_warnings = [w for w in caught
                      if not issubclass(w.category, (DeprecationWarning, PendingDeprecationWarning, ResourceWarning))]
    targets.require(not shown_warnings, "options.python_warning",
            f"{shown_warnings[0].category.__name__}: {shown_warnings[0].message} "
            f"({shown_warnings[0].filename}:{shown_warnings[0].lineno}); {shown}" if shown_warnings else "")
    return result, code


def _no_leftovers(work, shown):
    """options.leftovers: a command leaves no temporary file or directory behind, in --tmp-dir or beside its
    outputs, whatever its exit (130 included)."""
    expected = {"model", "run.json", "pred", "tmp", "keep"} | {f"train-{name}.txt" for name in DATASETS}
    odd = sorted(set(os.listdir(work.path)) - expected)
    tmp = work.file("tmp")
    odd += [os.path.join("tmp", name) for name in (os.listdir(tmp) if os.path.isdir(tmp) else [])]
    targets.require(not odd, "options.leftovers", f"{odd[:5]} left behind; {shown}")


def _data_file(work, name):
    path = work.file(f"train-{name}.txt")
    if not os.path.exists(path):
        with open(path, "w") as f:
            f.write(DATASETS[name])
    return path


@contextlib.contextmanager
def _dask_guard(dask):
    """For a command with --dask: distributed imported now (once per process), and Dask's connect timeout
    DASK_CONNECT while the command runs (nothing when distributed is not installed: the command says so)."""
    if not dask:
        yield
        return
    try:
        import dask.config
        import distributed  # noqa: F401
    except ImportError:
        yield
        return
    with dask.config.set({"distributed.comm.timeouts.connect": DASK_CONNECT}):
        yield


def check_options(data, work):
    """llsvm-train with the input's options on a tiny file, then llsvm-predict on the model it wrote (rules: the
    module docstring). The directories the path options got are removed afterwards (Workdir removes files only)."""
    try:
        _check(data, work)
    finally:
        for name in ("tmp", "keep"):
            shutil.rmtree(work.file(name), ignore_errors=True)


def _check(data, work):
    args, dataset, writes_model = command(data, work)
    train_path = _data_file(work, dataset)
    model = work.file("model")
    for path in (model, work.file("run.json"), work.file("pred")):
        if os.path.exists(path):
            os.unlink(path)
    full = args + ["-q", train_path, model]
    with _dask_guard("--dask" in args):
        result, code = _run(train_cli.main, full, "llsvm-train")
    shown = f"llsvm-train {' '.join(full)}: exit {code}\nstderr: {result.stderr[-600:]}"
    _no_leftovers(work, shown)
    if code == 130:
        return
    exists = os.path.exists(model)
    targets.require(code == 0 or not exists, "options.model_on_failure", shown)
    if code != 0:
        return
    targets.require(exists or not writes_model, "options.no_model", shown)
    if writes_model and "--help" not in args:
        targets.require(result.stdout == "", "options.quiet", f"stdout {result.stdout[:300]!r}; {shown}")
    if "--json" in args and os.path.exists(work.file("run.json")):
        with open(work.file("run.json")) as f:
            try:
                json.load(f)
            except ValueError as exc:
                raise targets.OracleFailure("options.json", f"{exc}; {shown}") from None
    if not exists:
        return
    pred = work.file("pred")
    presult, pcode = _run(predict_cli.main, ["-q", train_path, model, pred], "llsvm-predict")
    _no_leftovers(work, f"llsvm-predict on the model of {shown}")
    if pcode == 130:
        return
    targets.require(pcode == 0, "options.predict_refuses", f"{presult.stderr[-600:]}; model of {shown}")
    with open(pred) as f:
        n = sum(1 for _ in f)
    targets.require(n == DATASETS[dataset].count("\n"), "options.predict_refuses", f"{n} predictions; model of {shown}")


# ---------------------------------------------------------------------------------------------------------------
# Seeds and dictionary

# the values of the seeds (the dictionary has them all): one of each kind
SEED_VALUES = ["nan", "inf", "-inf", "0", "-1", "1e308", "2147483648", "9223372036854775808", "99999999999999999999",
               "1e-320", "abc", "", "2"]


def _values(flag, seed=False):
    return SPECIAL.get(flag, SEED_VALUES if seed else VALUES)


def seeds():
    """{name: bytes}: every solver alone, and with each option it takes (and the common ones) at each value."""
    out = {}
    common = ["-c", "-e", "-B", "-w1", "--max-iter", "--threads", "--seed"]
    for spec in specs():
        base = f"-s {spec.name}"
        out[f"{spec.name}"] = base
        flags = [f for f in spec.accepts if f in OPTIONS] + common
        if "-B R" in spec.accepts:
            flags.append("-B")
        data = "@real " if spec.task == "regression" else ""
        for flag in dict.fromkeys(flags):
            takes = OPTIONS.get(flag, 1)
            if takes == 0:
                out[f"{spec.name}{flag}"] = f"{data}{base} {flag}"
                continue
            for k, value in enumerate(_values(flag, seed=True)):
                out[f"{spec.name}{flag}={k}"] = f"{data}{base} {flag} {value}"
        for k, extra in enumerate(["-v 2", "-v 3 -c 1e308", "-C", "@three", "@one", "@real", "-v 2 @three"]):
            out[f"{spec.name}-mode{k}"] = f"{base} {extra}"
    for k, value in enumerate(SOLVERS):
        out[f"solver={k}"] = f"-s {value}"
    for k, value in enumerate(DASK):            # an empty value: the last token, missing
        out[f"dask={k}"] = f"-s 2 --dask {value}" if value else "-s 2 --dask"
    for k, value in enumerate(WORKERS):
        out[f"workers={k}"] = f"--dask local -s 3 -v 2 --workers {value}" if value else "--dask local --workers"
    out["workers-remote"] = "--dask tcp://127.0.0.1:1 --workers 2"
    out["dask-grid"] = "--dask tcp://127.0.0.1:1 -s smo --grid C=1:10:3"
    out["dask-C"] = "--dask local -C -s 2"
    return {name: text.encode("latin-1") for name, text in out.items()}


def dictionary():
    tokens = set(OPTIONS) | set(WEIGHT_FLAGS) | {"@" + name for name in DATASETS}
    for flag in OPTIONS:
        tokens.update(v for v in _values(flag) if v)
    return sorted(t.encode("latin-1") for t in tokens)
