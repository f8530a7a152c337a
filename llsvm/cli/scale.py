"""llsvm-scale: LIBSVM's svm-scale, its options and its output byte for byte, on text (plain, .gz, .bz2, .xz, stdin)
and llsvm binary files (llsvm/scale.py does the work)."""
import click

from ..errors import DataFormatError, LLSVMError, ParameterError
from ..fileutil import atomic_output
from .common import check_input, complete_path, handle_errors, make_reporter, os_errors, refuse_same_file
from .usage import version_option


def _writing(path):
    return os_errors(f"can't write output file {path}", detail=True, error=LLSVMError)


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("data_file", metavar="data_filename", shell_complete=complete_path)
@click.option("-l", "lower", type=float, default=-1.0, metavar="lower",
              help="x scaling lower limit (default -1).")
@click.option("-u", "upper", type=float, default=1.0, metavar="upper",
              help="x scaling upper limit (default +1).")
@click.option("-y", "y_bounds", type=(float, float), default=None, metavar="y_lower y_upper",
              help="y scaling limits (default: no y scaling).")
@click.option("-s", "save_file", default=None, metavar="save_filename",
              help="Save scaling parameters to save_filename (svm-scale's range file, written atomically).")
@click.option("-r", "restore_file", default=None, metavar="restore_filename",
              help="Restore scaling parameters from restore_filename: its bounds and ranges replace the data's (a "
                   "feature the file does not have is scaled to 0, with svm-scale's warning).")
@click.option("-o", "output_file", default=None, metavar="FILE",
              help="Write the scaled data to FILE (atomically) instead of standard output.")
@click.option("--to", "to", type=click.Choice(["text", "binary"]), default=None,
              help="Output format: text (svm-scale's) or an llsvm binary file, which needs -o (default: binary for "
                   "binary input, text otherwise). Binary output holds the scaled values unrounded.")
@click.option("-q", "--quiet", is_flag=True, help="Quiet mode (no warnings, no progress).")
@click.option("--progress/--no-progress", default=None,
              help="Progress bar on stderr (default: on when stderr is a terminal and not -q).")
@handle_errors
@version_option
def main(data_file, lower, upper, y_bounds, save_file, restore_file, output_file, to, quiet, progress):
    """Scale the features of a LIBSVM data file (plain, .gz, .bz2, .xz, - for standard input, or llsvm binary) to
    [lower, upper], as LIBSVM's svm-scale does: llsvm-scale [options] data_filename. The data are read twice
    (standard input is spooled to a temporary file); the scaled rows go to standard output unless -o FILE.
    """
    from ..scale import check_bounds
    reporter = make_reporter(quiet, progress)
    check_bounds(lower, upper, y_bounds)
    if restore_file and save_file:
        raise ParameterError("cannot use -r and -s simultaneously")
    check_input(data_file)
    if restore_file is not None:
        with os_errors(f"can't open file {restore_file}"):
            with open(restore_file, "rb"):
                pass
    refuse_same_file([("-o", output_file), ("-s", save_file)], [("data_filename", data_file), ("-r", restore_file)])
    if to == "binary" and output_file in (None, "-"):
        raise ParameterError("binary output cannot go to standard output: give -o FILE")
    from ..fileutil import discard_temporary
    from ..scale import spool_stdin
    spooled = None
    if data_file == "-":
        with os_errors("can't spool standard input to a temporary file", detail=True, error=LLSVMError):
            spooled = spool_stdin()
    try:
        _run(spooled or data_file, "<stdin>" if spooled else data_file, lower, upper, y_bounds, save_file,
             restore_file, output_file, to, reporter)
    except DataFormatError as exc:
        if spooled is None or exc.path != spooled:
            raise
        raise DataFormatError("<stdin>", exc.line, exc.column, exc.message) from None
    finally:
        if spooled is not None:
            discard_temporary(spooled)


def _blocks(path, reporter, desc, prefetch=False):
    """The rows of the text or binary file at path, block by block (a progress bar on text)."""
    from ..binfmt import BinaryDataset
    from ..io import open_dataset
    from ..params import usable_cpus
    from ..sources import TextSource, prefetched
    ds = open_dataset(path, stream=True, threads=1 if prefetch else min(2, usable_cpus()))
    if isinstance(ds, BinaryDataset):
        try:
            yield from (prefetched(ds.iter_blocks()) if prefetch else ds.iter_blocks())
        finally:
            ds.close()
        return
    with TextSource(path) as src:
        total = src.total_bytes
    bar = reporter.bar(total=total, desc=desc)
    try:
        blocks = ds.iter_blocks(progress=bar)
        yield from (prefetched(blocks) if prefetch else blocks)
    finally:
        bar.close()


def _run(path, name, lower, upper, y_bounds, save_file, restore_file, output_file, to, reporter):
    from ..scale import (Bounds, data_ranges, nonzeros_warning, range_text, read_range, restore, scale_to_csr,
                         scale_to_text, scaling, widen)
    from ..params import usable_cpus
    from ..sources import sniff_path
    binary_in = sniff_path(path) == "binary"
    if to is None:
        to = "binary" if binary_in else "text"
    if to == "binary" and output_file in (None, "-"):
        raise ParameterError(f"{name} is an llsvm binary file: its scaled rows go to a binary file, give -o FILE "
                             "(or --to text for svm-scale's text on standard output)")
    bounds = Bounds(lower, upper, y_bounds)
    rf = read_range(restore_file) if restore_file else None
    # pass 1: the features' ranges
    ranges = data_ranges(_blocks(path, reporter, "pass 1/2"))
    if ranges.n_rows == 0:
        raise DataFormatError(name, 0, 0, "empty input: no data rows")
    if rf is not None:
        widen(ranges, rf.max_index)
        for line in restore(ranges, rf, bounds, name, restore_file):
            reporter.warning(line)
    if save_file:
        with os_errors(f"can't open file {save_file}", detail=True, error=LLSVMError):
            with atomic_output(save_file, "wb") as f:
                f.write(range_text(ranges, bounds))
    sc = scaling(ranges, bounds)
    # pass 2: the rows scaled
    blocks = _blocks(path, reporter, "pass 2/2", prefetch=True)
    if to == "binary":
        from ..binfmt import BinaryWriter
        with _writing(output_file):
            w = BinaryWriter(output_file, output=True, **_carried(path, binary_in))
        with w:
            new_nnz = 0
            for block in scale_to_csr(blocks, sc, ranges.max_index):
                new_nnz += block.nnz
                with _writing(output_file):
                    w.write_dataset(block, owned=True)
                del block
            with _writing(output_file):
                w.close(n_features=ranges.max_index)
    else:
        with _writing(output_file or "-"):
            with atomic_output(output_file or "-", "wb") as f:
                new_nnz = scale_to_text(blocks, sc, f.write, threads=min(2, usable_cpus()))
    reporter.warning(nonzeros_warning(ranges.nnz, new_nnz))


def _carried(path, binary_in):
    """What the binary output keeps of a binary input: row ids and weights (a version 2 file)."""
    if not binary_in:
        return {}
    from ..binfmt import BinaryDataset
    with BinaryDataset(path) as ds:
        return {"row_ids": ds.has_row_ids, "weights": ds.has_weights}


if __name__ == "__main__":  # python -m llsvm.cli.scale
    main()
