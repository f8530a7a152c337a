"""What the out-of-core drivers (-s llsvm, -s streamsvm, -s bm) share: the input adapter over a path, stdin, a
binary file or in-memory rows; a read-ahead thread; and the driver base class that owns the parameters, the
reporter and the temporary directory of one run."""
import os
import tempfile
import time
from dataclasses import dataclass, field

import numpy as np

from .. import memory
from ..binfmt import DEFAULT_BLOCK_BYTES, WRITE_ALIGN, BinaryDataset, BinaryWriter, RowError, unviewed
from ..dataset import CSRDataset
from ..errors import DataFormatError, LLSVMError, ParameterError
from ..fileutil import remove_tree, temporary_dir
from ..models.linear import Model
from ..params import Params, echo
from ..report import as_reporter, size_bar
from ..sources import prefetched
from ..textio import DEFAULT_CHUNK, DEFAULT_MAX_LINE, line_limit
from .common import Classes, FitResult, class_costs, problem_seed, report_finished, stacked_weights, warn_max_iter

READ_BLOCK_BYTES = 8 << 20
# under --memory: text's parser chunk and binary copy blocks (a 32nd of the budget, within these bounds) and the
# copy writer's write alignment
TEXT_PIECE = 8 << 20
MIN_TEXT_PIECE = 16 << 10
COPY_ALIGN = 64 << 10
# buffers of a binary file's blocks kept for reuse by a read-ahead (Input.binary_blocks): the one in use, the one
# read ahead and one more
REUSE_BUFFERS = 3


class Input:
    """The rows of an out-of-core run: a path ('-' for stdin; text is parsed block by block, a binary file is
    read in its blocks), a BinaryDataset, or in-memory rows (a CSRDataset, cut into blocks). Blocks come in order,
    each with `first_row`. Text can be copied to a binary file during its first pass (`text_pass`), which the later
    passes then read (`switch_to_copy`).

    Row weights (docs/weights.md) travel with the blocks: a binary file of version 2 and weighted in-memory rows
    carry them; `weight_file` (-W) gives them to other input, read whole (8 bytes a row, held while the run lasts:
    `held_weight_bytes`) and handed to each block (`with_weights`); text's count of rows is checked against the file's
    lines as the rows come (io.weights_count). `weighted`: whether the blocks carry weights."""

    def __init__(self, data, zero_based=False, progress=None, block_bytes=8 << 20, chunk_size=None,
                 max_line=DEFAULT_MAX_LINE, class_labels=True, weight_file=None):
        from ..io import open_dataset
        self.data = data
        self.progress = progress
        self.block_bytes = block_bytes
        self.stdin = False
        self._own = False
        if isinstance(data, (str, os.PathLike)):
            self.name = os.fspath(data)
            kw = {} if chunk_size is None else {"chunk_size": chunk_size}
            self.ds = open_dataset(data, zero_based=zero_based, stream=True, max_line=max_line,
                                   class_labels=class_labels, **kw)
            self.stdin = self.name == "-"
            self._own = True
        else:
            self.ds = data
            self.name = getattr(data, "source", None) or "<data>"
        self.binary = isinstance(self.ds, BinaryDataset)
        self.memory = isinstance(self.ds, CSRDataset)
        self.weight_file = weight_file
        self.row_weights = None           # -W's weights, held
        if weight_file is not None:
            from ..io import weights_for
            self.row_weights = weights_for(weight_file, self.ds, self.ds.n_rows if self.known else None)
        self.weighted = self.row_weights is not None or getattr(self.ds, "weights", None) is not None or \
            bool(getattr(self.ds, "has_weights", False))

    @property
    def held_weight_bytes(self):
        """Bytes of -W's weights held in memory (0 without -W)."""
        return 0 if self.row_weights is None else self.row_weights.nbytes

    def with_weights(self, block):
        """`block` (a CSRDataset with first_row: some of the input's rows) with their weights from -W (itself
        without -W)."""
        if self.row_weights is None:
            return block
        return next(self._weighted_pass([block], whole=False))

    def _weighted_pass(self, it, whole=True):
        """A pass's blocks with -W's weights (io.weighted_blocks: rows beyond the weight file's lines are refused
        at the file's line, and, `whole` pass, lines beyond the last row)."""
        from ..io import weighted_blocks
        n = self.ds.n_rows if self.known else None
        return weighted_blocks(it, self.row_weights, self.weight_file, n, whole)

    @property
    def known(self):
        """Whether the size and labels are known before a pass (binary or in-memory rows)."""
        return self.binary or self.memory

    def require_rows(self):
        if self.known and self.ds.n_rows == 0:
            raise ParameterError("no training data")

    @property
    def n_rows(self):
        return self.ds.n_rows

    @property
    def n_features(self):
        return self.ds.n_features

    @property
    def nnz(self):
        return self.ds.nnz

    def labels(self):
        if self.memory:
            from ..dataset import label_table
            labels = label_table(self.ds.y)[0]
        else:
            labels = self.ds.labels
        if labels is None:
            from ..dataset import MAX_LABELS
            raise DataFormatError(self.name, 0, 0, f"{'header flag 4: ' if self.binary else ''}continuous labels "
                                  f"(more than {MAX_LABELS} distinct values), not classes: no label table to train on")
        return labels

    def blocks(self, prefetch=False, progress=False, read_ahead=False):
        """One pass, blocks in order, each with first_row. `prefetch`: text is parsed on a helper thread, one block
        ahead; `progress`: the blocks advance the progress bar (text: its bytes; binary: its rows, of the
        header's). A binary file's blocks are read one at a time (see binary_blocks), each into the buffer of an earlier one that nothing views any more; with
        `read_ahead`, the next one is read (and checked) on a helper thread while the consumer works on the
        current one, which it must drop (del) before it asks for the next: two blocks of the file at most."""
        if self.memory:
            it = self.blocks_of(self.block_bytes)
        elif self.binary:
            it = self.binary_blocks(self.block_bytes)
            if progress and self.progress is not None:      # the rows its header gives
                it = counted(it, self.progress, self.ds.n_rows)
            if read_ahead:
                return prefetched(self._weighted_pass(it) if self.row_weights is not None else it, bounded=True)
        else:
            it = self.ds.iter_blocks(progress=self.progress if progress else None)
        if self.row_weights is not None:
            it = self._weighted_pass(it)
        return prefetched(it) if prefetch else it

    def binary_blocks(self, max_bytes=None):
        """The binary file's blocks in order, each read whole (its checksum and structure are checked) and, with
        max_bytes, cut into pieces (views of it). The block is let go before the next one is read, so a consumer
        that drops its own reference (del) holds one block of the file at a time. A block is read into the buffer
        of an earlier one that nothing views any more (binfmt.unviewed), rather than into fresh memory, whose pages
        the system must map and clear (the last REUSE_BUFFERS buffers are candidates)."""
        ds = self.ds
        ring = []
        size = self.largest_block()[0]
        for b in range(ds.n_blocks):
            buf = None
            need = ds.block_payload_bytes(b)
            for k in range(len(ring)):
                if unviewed(ring, k) and ring[k].shape[0] >= need:
                    buf = ring[k]
                    break
            if buf is None:
                buf = np.empty(size, np.uint8)
                if len(ring) == REUSE_BUFFERS:
                    ring.pop(0)         # still viewed: it lives on with its views, out of the ring
                ring.append(buf)
            block = ds.read_block(b, out=buf)
            buf = None
            if max_bytes is None:
                yield block
            else:
                base = block.first_row
                for piece in block.iter_blocks(None, max_bytes):
                    piece.first_row = base
                    base += piece.n_rows
                    yield piece
                piece = None
            block = None

    def largest_block(self):
        """(payload bytes of the binary file's largest block, most rows in a block): what reading it holds."""
        from ..binfmt import payload_layout
        ds = self.ds
        size = max((payload_layout(r, k, ds.float32, ds.has_row_ids, ds.has_alpha, ds.has_weights)[5]
                    for r, k in zip(ds.block_rows.tolist(), ds.block_nnz.tolist())), default=0)
        return size, int(max(ds.block_rows.tolist(), default=0))

    def blocks_of(self, max_bytes):
        """In-memory rows cut into blocks of at most max_bytes (all rows in one without a limit)."""
        base = 0
        for b in self.ds.iter_blocks(max_bytes=max_bytes):
            b.first_row = base
            base += b.n_rows
            yield b

    def text_pass(self, writer):
        """The first pass over text: blocks in order (parsed on a helper thread), each also written to `writer`
        (with -W's weights: `writer` keeps them, weights=self.weighted)."""
        it = prefetched(self.ds.iter_blocks())
        for b in (self._weighted_pass(it) if self.row_weights is not None else it):
            writer.write_dataset(b)
            yield b
            del b               # not held while the next block is taken

    def switch_to_copy(self, path):
        """After a text pass: read the binary copy from now on (it holds -W's weights, which are let go)."""
        self.close()
        self.ds = BinaryDataset(path)
        self._own = True
        self.binary = True
        self.row_weights = None
        self.require_rows()

    def radius_sq(self):
        """max ||x_i||^2 over the rows (binary input records it in its header)."""
        if self.binary:
            return float(self.ds.max_sq_norm)
        from .._ext._rowops import max_sq_norm
        return float(max_sq_norm(self.ds.row_view()))

    def close(self):
        if self._own and hasattr(self.ds, "close"):
            self.ds.close()


@dataclass
class Part:
    """One-vs-rest problem `only` of an out-of-core run, trained alone (OutOfCoreSolver.only): its FitResult, the
    run's labels (the order its problems have) and the input's figures the model records (`assemble`'s info)."""
    result: FitResult
    labels: list
    info: dict


class OutOfCoreSolver:
    """The driver of one out-of-core run: the checked Params (solver, C, eps, bias, -wi weights, max_iter, seed,
    threads and the solver's own options), the reporter, and a temporary directory that lives as long as `fit`.

    Subclasses set `name` (their -s value) and implement `_fit(src, directory, t0)` -> Model (through `_done`) and
    `assemble`; `block_bytes` and `chunk_size` say how the input is cut. Text lines may hold `max_line` bytes, by
    default textio.line_limit of the memory budget (a quarter of it, between 1 MiB and 256 MiB; 256 MiB without a
    budget).

    `only` (llsvm.dask's task of one class): with more than two classes, train one-vs-rest problem `only` alone,
    exactly as the whole run trains it (its seed, the run's budget and block sizes, which count every problem), and
    return its Part instead of a model; what the run prints once (`print_once`) is left out. The model of the
    problems' Parts is `assemble`'s, after `print_once` and each problem's text in order: the whole run's model and
    text, byte for byte."""

    name = None
    only = None

    def __init__(self, params=None, reporter=None, *, zero_based=False, progress=None, max_line=None, **fields):
        if params is None:
            params = Params(solver=self.name, **fields)
        elif fields:
            raise TypeError("give either params or its fields")
        params.check()
        self.params = params
        self.C = float(params.C)
        self.eps = float(params.eps)
        self.bias = float(params.bias)
        self.weights = list(params.weights)
        self.max_iter = int(params.max_iter or params.spec.default_max_iter)
        self.seed = int(params.seed)
        self.threads = max(1, int(params.threads))
        self.opt = params.options
        self.reporter = as_reporter(reporter)
        self.zero_based = zero_based
        self.progress = progress
        self.max_line = line_limit(self.opt.memory) if max_line is None else int(max_line)
        if self.opt.memory is not None:
            memory.release_freed_blocks()

    block_bytes = 8 << 20
    chunk_size = None
    _src = None                 # the Input of the run under way (fit)

    def _held_weights(self):
        """Bytes of -W's weights the run holds in memory (0 without -W, or once text's copy holds them): they count
        in the --memory budget."""
        return 0 if self._src is None else self._src.held_weight_bytes

    def _trains(self, k):
        """Whether this run trains problem k (every problem, or `only`)."""
        return self.only is None or k == self.only

    @property
    def _once(self):
        """The reporter of what the run prints once, not per problem: silent for a run of problem `only` (the
        caller prints it, print_once)."""
        return self.reporter if self.only is None else as_reporter()

    def _done(self, results, labels, info):
        """The end of a run: the model of its problems' results, or the Part of problem `only`."""
        if self.only is not None:
            return Part(results[0], labels, info)
        return self.assemble(results, labels, info)

    def print_once(self, labels, results):
        """What a run prints once, before its problems' text: LIBLINEAR's warnings of -wi weights of absent
        labels."""
        class_costs(self.C, self.weights, labels, self.reporter)

    def assemble(self, results, labels, info):
        """The Model of the problems' results (in problem order) of a run over classes `labels`."""
        raise NotImplementedError

    def check_weights(self, n_features, problems):
        """Refuse the weight vectors of `problems` binary problems of n_features (+ bias) before they are made:
        under --memory, the vectors held while training must fit in the budget; without it, they, a copy of each
        when the model is stacked and one more while a vector grows must fit in the memory available."""
        bits = getattr(self.opt, "hash_bits", None)
        problems = max(1, problems)
        count = problems if self.opt.memory is not None else 2 * problems + 1
        memory.check_weights(n_features, count, budget=self.opt.memory,
                             cause=f"--hash-bits {bits}" if bits else None)

    warm = None                     # fit(warm=): the linear model whose w starts the run (the solvers of -i)

    def fit(self, data, weight_file=None, warm=None):
        """Train on a path ('-' for stdin), a BinaryDataset or a CSRDataset. Returns a Model. `weight_file`: -W's
        file of the rows' weights (docs/weights.md; Input). `warm`: a linear model whose w starts the run (-i,
        llsvm/solvers/warm.py), for a solver that takes one (the -i row's)."""
        if warm is not None and not self.params.spec.accepts_option("-i"):
            from ..params import accepting
            raise ParameterError(f"-s {self.params.spec.name} has no warm start (only {accepting('-i')})")
        self.warm = warm
        t0 = time.perf_counter()
        base = self.opt.tmp_dir or tempfile.gettempdir()
        if not os.path.isdir(base):
            raise LLSVMError(f"temporary directory {base} does not exist")
        # recorded before it exists (fileutil.temporary_dir): whatever a signal interrupts, from here to the end of
        # the removal below, the console script removes what is left (issue 26: a SIGINT landing as the removal
        # began left the directory behind)
        src = None
        directory = None
        try:
            directory = temporary_dir(base, "llsvm-")
            src = self._src = Input(data, self.zero_based, self.progress, self.block_bytes, self.chunk_size,
                                    self.max_line, self.params.spec.class_labels, weight_file)
            return self._fit(src, directory, t0)
        except RowError as exc:            # a text row the binary copy cannot hold: named by its line
            if not isinstance(data, (str, os.PathLike)):
                raise
            from ..io import row_error_at_line
            raise row_error_at_line(data, exc, self.zero_based, note="") from None
        finally:
            self._src = None
            try:
                if src is not None:
                    src.close()
            finally:
                # a Ctrl-C can land here, once the work is done: the removal finishes first (remove_tree)
                if directory is not None:
                    remove_tree(directory)


@dataclass
class Trace:
    seconds: list = field(default_factory=list)   # from the start of training
    dual: list = field(default_factory=list)      # D = sum(alpha) - |w|^2/2 (maximization form)
    primal: list = field(default_factory=list)
    records: list = field(default_factory=list)   # per pass / block dicts for --json


def hasher(bits):
    if bits is None:
        return None
    from ..hashing import check_bits, hash_dataset
    check_bits(bits)
    return lambda block: hash_dataset(block, bits)


class BinaryProblem:
    """One binary problem of one-vs-rest: class `pos` is +1, the others -1."""

    def __init__(self, k, pos, Cp, Cn):
        self.k, self.pos, self.Cp, self.Cn = k, pos, float(Cp), float(Cn)
        self.trace = Trace()
        self.result = None

    def signs(self, cls):
        return np.where(cls == self.pos, 1, -1).astype(np.int8)


class StreamedSolver(OutOfCoreSolver):
    """What -s streamsvm and -s bm share: the memory budget, hashing on the fly, their binary problems and the
    model (LIBLINEAR's label order and {-1,+1} swap).

    The budget (--memory) holds everything that grows with the data: the per-row state (alpha, ...), the weight
    vectors, and what reading the input holds (a block of a binary file, read whole; text's parser chunks and
    parsed blocks in flight and the writer of its binary copy; the temporaries of a block's rows; a hashed copy
    with --hash-bits). The solver's own working store (streamsvm's cache, bm's loaded blocks) gets what is left,
    and a budget too small for the state, the weights, the reading and the smallest working store is refused,
    naming the minimum (memory.check_budget): up front when the number of rows is known, else (text) as soon as
    the rows read so far need more."""

    BLOCK_ROW_BYTES = 48            # temporaries per row of a block in use (labels, class indices, signs)

    def __init__(self, params=None, reporter=None, **kw):
        super().__init__(params, reporter, **kw)
        m = self.opt.memory
        self.block_bytes = READ_BLOCK_BYTES if m is None else int(min(READ_BLOCK_BYTES, max(64 << 10, m // 8)))
        # text: the parser's chunk and the binary copy's blocks, a 32nd of the budget each
        piece = None if m is None else int(min(TEXT_PIECE, max(MIN_TEXT_PIECE, m // 32)))
        self.chunk_size = piece
        self.copy_block_bytes = DEFAULT_BLOCK_BYTES if piece is None else piece
        # the copy writer's write alignment: what it keeps back (a power of two, at most a copy block)
        self.copy_align = WRITE_ALIGN if piece is None else min(COPY_ALIGN, 1 << (piece.bit_length() - 1))
        self._hash = hasher(self.opt.hash_bits)

    # -- the budget ---------------------------------------------------------------------------------------------
    def _copy_writer(self, path, src):
        """The writer of text's binary copy (read back block by block, never mapped: small writes will do); it keeps
        the rows' weights of a weighted input."""
        return BinaryWriter(path, fsync=False, block_bytes=self.copy_block_bytes, write_align=self.copy_align,
                            weights=src.weighted)

    def _block_extra(self, rows, nnz):
        """Bytes a block of `rows` rows and `nnz` non-zeros costs besides its own arrays while it is used: the
        temporaries of its rows (labels, class indices, signs) and, with --hash-bits, its hashed copy."""
        hashed = 12 * nnz + 16 * rows if self._hash is not None else 0
        return self.BLOCK_ROW_BYTES * rows + hashed

    def _reading(self, src):
        """What reading a known input (binary file, rows in memory) holds at a time: one block of the file, read
        whole, or nothing of in-memory rows (their pieces are views), plus _block_extra of the largest piece."""
        if src.binary:
            size, rows = src.largest_block()
            nnz = size // (12 if not src.ds.float32 else 8)
            return size + self._block_extra(rows, nnz)
        from ..dataset import block_rows_for
        ds = src.ds
        bounds = np.asarray(block_rows_for(ds.indptr, None, self.block_bytes, ds.dtype.itemsize))
        rows = int(np.diff(bounds).max()) if bounds.size > 1 else 0
        nnz = int(np.diff(ds.indptr[bounds]).max()) if bounds.size > 1 else 0
        return self._block_extra(rows, nnz)

    def _text_reading(self, block_bytes, block_rows):
        """What reading text holds at a time (the first pass, which also writes the binary copy), given the
        largest parsed block so far: the parser's chunk buffer, about three parsed chunks in flight (one parsing,
        one queued, one in use), the copy's writer (its pending block, the block it assembles, the bytes it keeps
        back), and _block_extra of a parsed block."""
        chunk = self.chunk_size or DEFAULT_CHUNK
        parsed = max(int(block_bytes), chunk)
        writer = 2 * self.copy_block_bytes + self.copy_align
        return chunk + 3 * parsed + writer + self._block_extra(block_rows, parsed // 12)

    def _check_budget(self, rows, state, weights, reading, smallest, partial=False, note=None):
        """Refuse a budget below state + weights + reading + the smallest working store (memory.check_budget);
        returns what is left for the working store (None without a budget). The state includes -W's row weights,
        when the run holds them (8 bytes a row: Input.held_weight_bytes)."""
        state += self._held_weights()
        need = state + weights + reading + smallest
        memory.check_budget(self.opt.memory, need, state, solver=self.name, rows=rows, partial=partial, note=note)
        if self.opt.memory is None:
            return None
        return self.opt.memory - state - weights - reading

    def _block_note(self, src):
        """The hint of a refusal when the binary file's blocks take much of the minimum."""
        if not src.binary:
            return None
        size, _ = src.largest_block()
        return (f"the file's blocks are read whole, the largest holds {memory.format_size(size)}; llsvm-convert "
                "--block-rows writes smaller ones")

    def _copy_text(self, src, directory):
        """Text (or stdin) copied whole to a binary file before training, which then reads the copy as a known
        input (-s bm; -s streamsvm with -i, whose start needs the classes first). Under a budget, the rows read so
        far are checked as they come: the minimum for them (_copy_minimum: their state and the weights, for k
        problems) and one block of the copy."""
        copy = os.path.join(directory, "input.bin")
        classes = Classes()
        rows = n_feat = 0
        piece = self.copy_block_bytes + self._block_extra(self.copy_block_bytes // 16, self.copy_block_bytes // 12)
        with self._copy_writer(copy, src) as w:
            for b in src.blocks(prefetch=True, progress=True):
                w.write_dataset(b)
                if self.opt.memory is not None:
                    classes.add(b.y)
                    rows += b.n_rows
                    n_feat = max(n_feat, (1 << self.opt.hash_bits) if self.opt.hash_bits else b.n_features)
                    k = len(classes.labels) if len(classes.labels) > 2 else 1
                    self.check_weights(n_feat, k)
                    state, weights = self._copy_minimum(rows, n_feat, k)
                    self._check_budget(rows, state, weights, 0, piece, partial=True)
                del b
            w.close()
        src.switch_to_copy(copy)

    def _seed(self, k):
        return problem_seed(self.seed, k)

    def _n_features(self, n_features):
        """The model's features for an input of n_features: 2^B with --hash-bits B."""
        return (1 << self.opt.hash_bits) if self.opt.hash_bits else int(n_features)

    def _fit(self, src, directory, t0):
        src.require_rows()
        problems, labels = self._run(src, directory, t0)
        info = {"n_rows": int(src.n_rows), "n_features": int(src.n_features), "nnz": int(src.nnz)}
        return self._done([p.result for p in problems], labels, info)

    def _problems(self, labels, reporter=None):
        return [BinaryProblem(k, pos, Cp, Cn)
                for k, (pos, Cp, Cn) in enumerate(Classes(labels).problems(self.C, self.weights, reporter))]

    def assemble(self, results, labels, info):
        labs, W = stacked_weights(labels, results)
        bits = self.opt.hash_bits
        kw = {"hash_bits": bits} if bits else {}
        model = Model(self.params.spec.solver_type, labs.size, labs, self._n_features(info["n_features"]), self.bias,
                      W, meta={"results": results, "solver": self.name}, **kw)
        model.meta["stream"] = {**info, "bias": self.bias, "hash_bits": bits}
        return model

    def _report(self, p):
        r = p.result
        report_finished(self.reporter, r.n_iter, -r.dual, r.nSV)
        if not r.converged:
            warn_max_iter(self.reporter)


STREAM_JSON_FIELDS = ("model_solver_type", "C", "eps", "bias", "seed", "threads", "memory", "hash_bits", "inner_eps",
                      "nr_class", "labels", "classes")


def stream_metrics(model, params, trace_key):
    """--json of -s streamsvm and -s bm: per-pass (streamsvm) or per-block (bm) records under `trace_key`, also
    under "classes". Neither holds the data, yet both certify the model they return: a converged run reports the
    primal, gap and max_violation that its last pass (streamsvm) or outer iteration (bm) measured over every row at
    that model; they are null when it stopped at --max-iter."""
    res = model.meta["results"]
    info = model.meta["stream"]
    o = params.options
    per = []
    for k, r in enumerate(res):
        d = {"label": int(model.label[k]) if len(res) > 1 else None, "n_iter": r.n_iter, "dual": r.dual,
             "nSV": r.nSV, "converged": r.converged}
        d.update({"primal": r.primal, "gap": r.gap, "max_violation": r.max_violation, **r.extra})
        per.append(d)

    def total(key):
        vals = [getattr(r, key) for r in res]
        return None if any(v is None or v != v for v in vals) else sum(vals)
    return {
        "solver": params.solver, "model_solver_type": model.solver_type,
        "n_rows": info["n_rows"], "n_features": info["n_features"], "nnz": info["nnz"],
        "n_iter": max(r.n_iter for r in res), "primal": total("primal"), "dual": sum(r.dual for r in res),
        "gap": total("gap"), "max_violation": (None if any(r.max_violation is None for r in res)
                                               else max(r.max_violation for r in res)),
        "nSV": sum(r.nSV for r in res), "converged": all(r.converged for r in res),
        **echo(params, "C", "eps", "bias", "seed", "threads", "memory", "hash_bits", "inner_eps"),
        "inner_eps": o.inner_eps if params.spec.accepts_option("--inner-eps") else None,
        "nr_class": model.nr_class, "labels": [int(v) for v in model.label],
        # the records of a two-class problem, also under "classes"
        trace_key: per[0][trace_key] if len(per) == 1 else None,
        "classes": per,
    }


def counted(blocks, bar, total=None, unit="rows"):
    """`blocks` as they come, each counted on `bar` by its rows once the consumer is done with it (asks for the
    next), no reference to it kept; `total`: the rows of the pass, when known. No bar (None): the blocks alone."""
    if bar is None:
        yield from blocks
        return
    size_bar(bar, total, unit)
    for block in blocks:
        n = block.n_rows
        held = [block]
        del block               # not held here while the consumer asks for the next (read_ahead's rule)
        yield held.pop()
        bar.update(n)
    bar.refresh()                   # the pass's end shown, however fast it was
