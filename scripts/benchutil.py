"""Helpers shared by scripts/bench.py and the scripts/reproduce_*.py: finding data sets, binary copies and a warm
page cache, a memory warm-up before a timed run, timed training and accuracy, Table 2's comparison of two solvers'
alpha, Markdown tables, PNG figures and their defects, the reproductions' output directory and exit status, and the
machine fields of a results file.
"""
import datetime
import os
import platform
import statistics
import subprocess
import sys
import time
import warnings

import numpy as np

import llsvm


def say(text):
    """A progress line on stderr (flushed: the scripts' results go to stdout)."""
    print(text, file=sys.stderr, flush=True)


# -- data sets ----------------------------------------------------------------------------------------------------
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# the public LIBSVM sets (NAME.xz, MANIFEST.tsv), fetched and checked by `make data` (scripts/fetch_data.py, from the
# addresses of data/sets.tsv): the one place the scripts look for them
DATA_DIR = os.path.join(ROOT, "data", "public")
FETCH_HINT = "`make data` fetches the public sets into data/public"


def shared_training_sets(shared_dir):
    """The training sets in a public data directory (DATA_DIR): stems of its .xz files, test files (.t.xz) left
    out."""
    if not os.path.isdir(shared_dir):
        return []
    return sorted(fn[:-3] for fn in os.listdir(shared_dir) if fn.endswith(".xz") and not fn.endswith(".t.xz"))


def resolve(name, data_dir, generated, shared_dir=None):
    """(kind, train path, test path or None) of a set name, or None when its file is absent.

    kind "generated": data_dir/name (a name in `generated`, or any file there); "shared": shared_dir/name.xz (the
    public sets, DATA_DIR);
    "file": name taken as a path. The test file is the training file's path + ".t" (shared: name.t.xz).
    """
    if name in generated or os.path.exists(os.path.join(data_dir, name)):
        path = os.path.join(data_dir, name)
        if not os.path.exists(path):
            return None
        test = path + ".t"
        return "generated", path, test if os.path.exists(test) else None
    if shared_dir is not None:
        path = os.path.join(shared_dir, name + ".xz")
        if os.path.exists(path):
            test = os.path.join(shared_dir, name + ".t.xz")
            return "shared", path, test if os.path.exists(test) else None
    if os.path.exists(name):
        return "file", name, name + ".t" if os.path.exists(name + ".t") else None
    return None


def timed_command(argv, env=None):
    """Wall seconds of a command run to its end (output discarded); RuntimeError with its stderr when it fails."""
    import subprocess
    t = time.perf_counter()
    p = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    wall = time.perf_counter() - t
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} exited {p.returncode}: {p.stderr.decode(errors='replace')[-500:]}")
    return wall


# A child's peak RSS (ru_maxrss) includes the high-water mark of the process it was forked from, carried across
# exec; forked from this benchmark (gigabytes of data loaded) it would be meaningless. So a small launcher process
# starts the command and reports the command's own peak. Its first argument is a time limit in seconds (0: none):
# SIGALRM interrupts the launcher's wait4 and kills the command, which wait4 then reaps. The command's stderr goes
# to a temporary file (a pipe read only at the end would stall a command that writes more than the pipe holds).
_LAUNCHER = """
import json, os, signal, subprocess, sys, tempfile, time
limit, killed = float(sys.argv[1]), []
err = tempfile.TemporaryFile()
t0 = time.perf_counter()
p = subprocess.Popen(sys.argv[2:], stdout=subprocess.DEVNULL, stderr=err)
if limit > 0:
    def kill(signum, frame):
        killed.append(1)
        os.kill(p.pid, signal.SIGKILL)
    signal.signal(signal.SIGALRM, kill)
    signal.setitimer(signal.ITIMER_REAL, limit)
_, status, usage = os.wait4(p.pid, 0)
seconds = time.perf_counter() - t0
signal.setitimer(signal.ITIMER_REAL, 0)
err.seek(0)
print(json.dumps({"seconds": seconds, "maxrss_kb": usage.ru_maxrss, "cpu": usage.ru_utime + usage.ru_stime,
                  "rc": os.waitstatus_to_exitcode(status), "timed_out": bool(killed),
                  "stderr": err.read().decode(errors="replace")[-4000:]}))
"""


class CommandFailed(RuntimeError):
    """A command run by run_measured exited with a status other than 0, by a signal or at its time limit:
    rc (negative: the signal), stderr (its last 4000 characters), timed_out, seconds (until it ended)."""

    def __init__(self, cmd, rc, stderr, timed_out, seconds):
        what = f"timed out after {seconds:.0f} s" if timed_out else f"failed ({rc})"
        super().__init__(f"{cmd} {what}: {stderr}")
        self.cmd, self.rc, self.stderr, self.timed_out, self.seconds = cmd, rc, stderr, timed_out, seconds


def run_measured(cmd, env=None, cpu=False, timeout=None):
    """Run a command; return (seconds, peak RSS in MB) of that command alone (env: its environment), and with
    `cpu` its CPU seconds too (user + system, all its threads). timeout: seconds after which the command is killed.
    CommandFailed (a RuntimeError) when it fails or is killed."""
    import json
    import subprocess
    out = subprocess.run([sys.executable, "-c", _LAUNCHER, str(float(timeout or 0)), *cmd], check=True,
                         capture_output=True, text=True, env=env)
    r = json.loads(out.stdout)
    if r["rc"] != 0 or r["timed_out"]:
        raise CommandFailed(cmd, r["rc"], r["stderr"], r["timed_out"], r["seconds"])
    if cpu:
        return r["seconds"], r["maxrss_kb"] / 1024.0, r["cpu"]
    return r["seconds"], r["maxrss_kb"] / 1024.0


def shared_file(shared_dir, name, tmp):
    """A file of the public data directory (name.xz, DATA_DIR) decompressed into tmp (once): its path, or None when
    absent."""
    import lzma
    import shutil
    src = os.path.join(shared_dir, name + ".xz")
    if not os.path.exists(src):
        return None
    out = os.path.join(tmp, name)
    if not os.path.exists(out):
        with lzma.open(src) as f, open(out + ".part", "wb") as g:
            shutil.copyfileobj(f, g)
        os.replace(out + ".part", out)
    return out


def issue_sets(tmp, rows, seeds, shared, dense=True, kind="sparse"):
    """[(name, path)] of the sets the issue-32 parts measure: the generated `kind` set (scripts/gen_data.py) for
    each seed (rows rows), with kind sparse also the dense set of seed 2 (0.8 rows) unless not `dense`, and the
    public sets among `shared` (decompressed), all in tmp (a file already there is used as it is)."""
    import gen_data
    sets = []
    for seed in seeds:
        path = os.path.join(tmp, f"{kind}-{seed}")
        if not os.path.exists(path):
            gen_data.generate(kind, path, rows=rows, seed=seed)
        sets.append((f"{kind} seed {seed}", path))
    if dense and kind == "sparse":
        path = os.path.join(tmp, "dense-2")
        if not os.path.exists(path):
            gen_data.generate("dense", path, rows=int(rows * 0.8), seed=2)
        sets.append(("dense seed 2", path))
    for name in shared:
        path = shared_file(DATA_DIR, name, tmp)
        if path is not None:
            sets.append((name, path))
    return sets


def shared_set(shared_dir, name, tmp):
    """A set of the public data directory (name.xz, DATA_DIR) decompressed into tmp and read (class labels), or
    None when it is absent."""
    out = shared_file(shared_dir, name, tmp)
    return None if out is None else llsvm.read_dataset(out, class_labels=True)


def minmax_scale(tr, te=None):
    """svm-scale -l -1 -u 1 on the training rows and the same ranges on the test rows (svm-scale -r): each feature
    to [-1, 1] by its training minimum and maximum; a feature constant on the training rows is dropped (svm-scale
    writes nothing for it). Returns (train, test or None) as CSRDatasets."""
    import scipy.sparse as sp
    from llsvm.dataset import CSRDataset
    X = tr.to_csr().toarray()
    n = X.shape[1]
    lo, hi = X.min(axis=0), X.max(axis=0)
    keep = hi > lo

    def apply(ds):
        Z = ds.to_csr().toarray()
        Z = Z[:, :n] if Z.shape[1] >= n else np.pad(Z, ((0, 0), (0, n - Z.shape[1])))
        out = np.zeros_like(Z)
        out[:, keep] = -1.0 + 2.0 * (Z[:, keep] - lo[keep]) / (hi[keep] - lo[keep])
        return CSRDataset.from_csr(sp.csr_matrix(out), ds.y)

    return apply(tr), (apply(te) if te is not None else None)


def ensure_binary(text_path, bin_path, say=None, prefix="# "):
    """The binary copy of a text set (llsvm.write_binary, atomic), written when missing or older than the text;
    `say`, when given, is told `{prefix}wrote ...`."""
    if not os.path.exists(bin_path) or os.path.getmtime(bin_path) < os.path.getmtime(text_path):
        t0 = time.perf_counter()
        llsvm.write_binary(text_path, bin_path)
        if say is not None:
            say(f"{prefix}wrote {bin_path} in {time.perf_counter() - t0:.1f} s")
    return bin_path


_WARM = """
import sys
import numpy as np
np.ones(int(sys.argv[1]) << 20, dtype=np.uint8)      # touched, then freed at exit
"""


def warm_memory(mb):
    """MB of memory touched and freed by a helper process, so that the next run's new pages (its arrays, the page
    cache of the files it writes) are memory used a moment ago, as on a machine that does not hand freed memory back
    to a host. On a virtual machine with free page reporting (this one), a page freed over ~2 s earlier costs a host
    fault at its first touch: about 3.5 s per GB, against 0.15 s per GB for memory freed a moment before (measured);
    without the helper, whichever run follows a large free wins (bench_parse's and bench_ooc's docstrings)."""
    if mb > 0:
        subprocess.run([sys.executable, "-c", _WARM, str(int(mb))], check=True)


def warm_page_cache(path):
    """Read a file once so that every timed reader finds it in the page cache."""
    with open(path, "rb", buffering=0) as f:
        buf = bytearray(8 << 20)
        while f.readinto(buf):
            pass


# -- training and its results ---------------------------------------------------------------------------------------
def timed_train(data, **kw):
    """(seconds, model) of llsvm.train(data, **kw), its ConvergenceWarnings silenced (the results record them)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t0 = time.perf_counter()
        model = llsvm.train(data, **kw)
        return time.perf_counter() - t0, model


def inner_count(seconds):
    """Calls per timing for a job taking `seconds`: short jobs are repeated to about 50 ms (timer noise)."""
    return 1 if seconds >= 0.05 else max(1, int(0.05 / max(seconds, 1e-6)))


def srand(seed):
    """Seed the C library's rand(), which LIBLINEAR's solvers call and never seed: its runs are repeatable."""
    import ctypes
    ctypes.CDLL(None).srand(int(seed))


def liblinear_train(X, y, opts, repeats, seed=1):
    """(median seconds of the C train call only, liblinear model) for a problem built beforehand."""
    from liblinear import liblinear as L
    from liblinear.liblinearutil import toPyModel

    param = L.parameter(opts)
    prob = L.problem(y, X)
    prob.set_bias(param.bias)
    L.liblinear.set_print_string_function(L.ctypes_print_null)

    def once():
        srand(seed)
        t0 = time.perf_counter()
        m = L.liblinear.train(prob, param)
        return time.perf_counter() - t0, toPyModel(m)

    first, model = once()
    inner = inner_count(first)
    times = []
    for _ in range(repeats):
        total = 0.0
        for _ in range(inner):
            sec, model = once()
            total += sec
        times.append(total / inner)
    return statistics.median(times), model


def timed(fn, repeats):
    """(median seconds per call, last result); calls shorter than 50 ms are repeated within each timing."""
    t0 = time.perf_counter()
    result = fn()
    inner = inner_count(time.perf_counter() - t0)
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(inner):
            result = fn()
        times.append((time.perf_counter() - t0) / inner)
    return statistics.median(times), result


def ll_W(m, n_features, bias):
    """The weights of a liblinear-official model as (w_size, nr_w) (nr_w = nr_class for -s 4, as LIBLINEAR's)."""
    nr_w = 1 if m.nr_class == 2 and m.param.solver_type != 4 else m.nr_class
    w_size = n_features + (1 if bias >= 0 else 0)
    return np.ctypeslib.as_array(m.w, shape=(w_size * nr_w,)).reshape(w_size, nr_w).copy()


def accuracy(model, te):
    """Test accuracy (%) of a model on a loaded test set; None without one."""
    return None if te is None else 100.0 * float(np.mean(model.predict(te) == te.y))


def match_problems(m_ll, m_s3):
    """(k, j, label) pairing -s 3's k-th binary problem with -s llsvm's j-th, matched by class label (one problem
    for two classes; labels may come in different orders)."""
    if m_s3.nr_w == 1:
        return [(0, 0, int(m_s3.label[0]))]
    return [(k, int(np.flatnonzero(m_ll.label == lab)[0]), int(lab)) for k, lab in enumerate(m_s3.label)]


def mismatch(a_ll, a_s3):
    """Table 2's fraction of variables whose zero/non-zero status differs."""
    return float(np.mean((a_ll > 0) != (a_s3 > 0)))


# -- output ---------------------------------------------------------------------------------------------------------
def print_report(text, out=None):
    """A bench script's Markdown report: on stdout, and into `out` when given."""
    print(text)
    if out:
        with open(out, "w") as f:
            f.write(text)


def md_row(cells):
    """One row of a Markdown table."""
    return "| " + " | ".join(cells) + " |"


def md_header(cols):
    """A Markdown table's header row and the separator under it."""
    return [md_row(cols), "|" + "---|" * len(cols)]


def pyplot():
    """matplotlib.pyplot drawing to files only (the Agg backend)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def figure_defects(fig):
    """What a reader of a saved figure would miss, as sentences (none: []): a panel with data and no x or y label
    (an x label shared with a panel below, as sharex draws it, counts), a legend missing a labelled line, two lines
    of one panel drawn alike (colour, marker and line style: one would hide the other), a text outside the figure
    (a clipped title), and no title naming the paper's figure or table ("Fig", "Table", or "not in the paper" for a
    figure of the spec's own)."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    W, H = fig.bbox.width, fig.bbox.height
    out = []
    for i, ax in enumerate(fig.axes):
        if not ax.get_visible() or not (ax.lines or ax.collections or ax.patches or ax.images):
            continue
        name = f"panel {i + 1} ({ax.get_title() or 'untitled'})"
        if not ax.get_xlabel() and not any(a.get_xlabel() for a in ax.get_shared_x_axes().get_siblings(ax)):
            out.append(f"{name}: no x-axis label")
        if not ax.get_ylabel():
            out.append(f"{name}: no y-axis label")
        labelled = [a for a in ax.lines + ax.collections if a.get_label() and not a.get_label().startswith("_")]
        legends = [lg for lg in [*(a.get_legend() for a in fig.axes), *fig.legends] if lg is not None]
        shown = {t.get_text() for lg in legends for t in lg.get_texts()}     # one legend may serve every panel
        missing = [a.get_label() for a in labelled if a.get_label() not in shown]
        if len(labelled) > 1 and missing:
            out.append(f"{name}: not in a legend: {', '.join(missing)}")
        styles = {}
        for line in ax.lines:
            if line.get_label().startswith("_") or len(line.get_xdata()) < 2:
                continue
            key = (str(line.get_color()), str(line.get_marker()), str(line.get_linestyle()))
            if key in styles:
                out.append(f"{name}: {line.get_label()!r} is drawn as {styles[key]!r} is")
            styles[key] = line.get_label()
    texts = list(fig.texts) + [fig._suptitle] if fig._suptitle is not None else list(fig.texts)
    for ax in fig.axes:
        texts += [ax.title, ax._left_title, ax._right_title, ax.xaxis.label, ax.yaxis.label, *ax.texts]
        if ax.get_legend() is not None:
            texts += ax.get_legend().get_texts()
    texts = [t for t in texts if t.get_visible() and t.get_text().strip()]
    for t in texts:
        bb = t.get_window_extent(renderer)
        if bb.x0 < -1 or bb.y0 < -1 or bb.x1 > W + 1 or bb.y1 > H + 1:
            out.append(f"text {t.get_text()[:60]!r} runs outside the figure")
    titles = [fig._suptitle] + [ax.title for ax in fig.axes]
    if not any(t is not None and any(k in t.get_text() for k in ("Fig", "Table", "not in the paper"))
               for t in titles):
        out.append("no title names the paper's figure or table (or says the figure is not in the paper)")
    return out


def save_png(fig, path):
    """Lay out a figure, write it as a PNG (110 dpi) and close it; returns path. Its defects (figure_defects) are
    reported on stderr."""
    import matplotlib.pyplot as plt

    fig.tight_layout()
    for defect in figure_defects(fig):
        say(f"# WARNING: {os.path.basename(path)}: {defect}")
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


# -- reproductions: one output layout, one exit status ---------------------------------------------------------------
RESULTS_ROOT = os.path.join(ROOT, "reproduce-results")
DEFAULT_SEED = 1


def reproduce_dir(target, seed, out=None):
    """The directory a `make reproduce-TARGET` run writes to, created: `out` when given, else
    reproduce-results/<seed>/<target>/ (the one layout of the five targets)."""
    path = out or os.path.join(RESULTS_ROOT, str(seed), target)
    os.makedirs(path, exist_ok=True)
    return path


class Acceptance:
    """A reproduction's acceptance lines in order, and the names of the gated figures that failed (exit_status)."""

    def __init__(self):
        self.lines, self.failed = [], []

    def add(self, name, ok, text, not_gated=None):
        """'- ✓ NAME text' or '- ✗ NAME text' (a failure: the run's exit status is 1), or, given a reason (say, why
        the paper's figure is not reproducible as printed, from the spec's resolutions), '- – NAME text (not gated:
        reason)', which no exit status counts. Returns ok."""
        if not_gated:
            self.lines.append(f"- – {name} {text} (not gated: {not_gated})")
        else:
            self.lines.append(f"- {'✓' if ok else '✗'} {name} {text}")
            if not ok and name not in self.failed:
                self.failed.append(name)
        return ok

    def text(self):
        return "\n".join(self.lines)


def exit_status(target, failed):
    """A reproduction's exit status: 0 when every acceptance figure held, else 1, with one line on stderr naming
    the figures that failed (`failed`: their names, in order)."""
    if failed:
        say(f"# {target}: {len(failed)} acceptance figure(s) failed: {', '.join(failed)} (exit status 1)")
        return 1
    say(f"# {target}: every acceptance figure held")
    return 0


def timestamp():
    """The local time as results are named by it: YYYYmmdd-HHMMSS."""
    return datetime.datetime.now().strftime("%Y%m%d-%H%M%S")


def run_meta(when, **extra):
    """A results file's meta: when, python, machine, cpus and llsvm's version, then `extra` in its order."""
    return {"when": when, "python": platform.python_version(), "machine": platform.machine(),
            "cpus": os.cpu_count(), "llsvm": llsvm.__version__, **extra}
