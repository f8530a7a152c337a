"""llsvm-convert: LIBSVM text <-> llsvm binary, and --info to describe a file."""
import click

from ..errors import LLSVMError, ParameterError
from ..fileutil import atomic_output
from .common import check_input, complete_path, handle_errors, make_reporter, os_errors, refuse_same_file
from .declare import check_weight_file
from .usage import version_option


def _label(x):
    return "%.17g" % x


def print_info(path, info):
    cells = info["rows"] * info["features"]
    density = 100.0 * info["nnz"] / cells if cells else 0.0
    click.echo(f"file: {path}")
    click.echo(f"format: {info['format']}")
    click.echo(f"rows: {info['rows']}")
    click.echo(f"features: {info['features']}")
    click.echo(f"nnz: {info['nnz']}")
    click.echo(f"density: {density:.4g}%")
    click.echo(f"value dtype: {info['dtype']}")
    click.echo(f"max squared row norm: {info['max_sq_norm']:.17g}")
    if info["row_ids"]:
        click.echo("row ids: yes")
    if info.get("weights"):
        click.echo("row weights: yes")
    click.echo(f"qid tokens: {info['qid']}")
    if info["labels"] is None:
        click.echo("classes: continuous labels (more than 65536 distinct values)")
    else:
        click.echo(f"classes: {len(info['labels'])}")
        for lab, cnt in zip(info["labels"], info["label_counts"]):
            click.echo(f"  {_label(lab)}: {cnt}")
    if info["blocks"] is not None:
        click.echo(f"blocks: {info['blocks']}")
    click.echo(f"checksum: {info['checksum']}")


def _writing(path):
    """OSErrors while creating or writing the output read "can't write output file PATH: reason"."""
    return os_errors(f"can't write output file {path}", detail=True, error=LLSVMError)


def _to_binary(ds, in_kind, output_file, float32, block_rows, total, reporter, input_file, zero_based, threads,
               weight_file=None):
    from ..binfmt import BinaryWriter, RowError
    from ..io import row_error_at_line, weighted_blocks, weights_for
    from ..sources import prefetched
    from_binary = in_kind == "binary"
    weights = None
    if weight_file is not None:     # -W: a file of version 2 (llsvm-train -W's reader and checks)
        with os_errors(f"can't open weight file {weight_file}"):
            weights = weights_for(weight_file, ds, ds.n_rows if from_binary else None)
    bar = reporter.bar(total=total, desc="converting")
    try:
        with _writing(output_file):
            w = BinaryWriter(output_file, float32=float32 or (from_binary and ds.float32),
                             row_ids=from_binary and ds.has_row_ids, block_rows=block_rows, output=True,
                             weights=weights is not None or (from_binary and ds.has_weights), hold_owned=True)
        with w:
            if from_binary:
                blocks = ds.iter_blocks()
            else:
                blocks = ds.iter_blocks(progress=bar)
                if threads > 1:     # text is parsed on a helper thread while this one writes
                    blocks = prefetched(blocks)
            if weights is not None:
                blocks = weighted_blocks(blocks, weights, weight_file, ds.n_rows if from_binary else None)
            for block in blocks:
                with _writing(output_file):
                    # a text chunk's arrays are the writer's from here (nothing reuses them while they are held):
                    # the rows it keeps for its next block are not copied
                    w.write_dataset(block, owned=not from_binary)
                if from_binary:
                    bar.update(block.nbytes)
            with _writing(output_file):
                w.close(n_features=ds.n_features, n_qid=ds.n_qid)
    except RowError as exc:         # a text row the format cannot hold: named by its line
        if from_binary:
            raise
        raise row_error_at_line(input_file, exc, zero_based) from None
    finally:
        bar.close()
    reporter.line(f"wrote {output_file}: {w.n_rows} rows, {w.n_features} features, {w.nnz} non-zeros, "
                  f"{w.n_blocks} blocks, {'float32' if w.float32 else 'float64'} values"
                  + (", row weights (version 2)" if w.weights else ""))


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("input_file", metavar="INPUT", shell_complete=complete_path)
@click.argument("output_file", metavar="[OUTPUT]", required=False, shell_complete=complete_path)
@click.option("--info", "info", is_flag=True, help="Describe INPUT (rows, features, classes, blocks, checksum).")
@click.option("--to", "to", type=click.Choice(["binary", "text"]), default=None,
              help="Output format (default: binary for text input, text for binary input).")
@click.option("--float32", is_flag=True, help="Store values as float32 in the binary file.")
@click.option("--block-rows", type=click.IntRange(min=1), default=None,
              help="Rows per block in the binary file (default: blocks of about 8 MiB).")
@click.option("--zero-based", is_flag=True, help="Text indices start at 0 (input and output).")
@click.option("-W", "weight_file", default=None, metavar="weight_file",
              help="Weights of the rows, stored in the binary file (a version 2 file): a file of one non-negative "
                   "number a line, a line per row, as llsvm-train -W reads it.")
@click.option("--threads", type=click.IntRange(min=1), default=None,
              help="Threads for text input: 2 or more parse on a helper thread while the binary file is written, "
                   "the parse itself split over N - 1 (the same file for any N). Default: 2, at most the number "
                   "of CPUs.")
@click.option("-q", "--quiet", is_flag=True, help="Quiet mode (no summary, no progress).")
@click.option("--progress/--no-progress", default=None,
              help="Progress bar on stderr (default: on when stderr is a terminal and not -q).")
@handle_errors
@version_option
def main(input_file, output_file, info, to, float32, block_rows, zero_based, weight_file, threads, quiet, progress):
    """Convert LIBSVM text (plain, .gz, .bz2, .xz or - for stdin) to llsvm's binary format and back.

    INPUT is read as text or binary from its first bytes. With --info, describe INPUT instead.
    """
    reporter = make_reporter(quiet, progress)
    if info and (output_file is not None or weight_file is not None):
        raise click.UsageError("--info takes only INPUT")
    if not info and output_file is None:
        raise click.UsageError("Missing argument 'OUTPUT' (or use --info).")
    check_input(input_file)
    if not info:
        refuse_same_file([("OUTPUT", output_file)], [("INPUT", input_file), ("-W", weight_file)])
        check_weight_file(weight_file)
    # the options are good: now the readers (numpy, the kernels; --help and usage errors answer without them)
    from ..io import describe, open_dataset
    from ..sources import TextSource, sniff_path
    from ..textio import write_text
    if info:
        info_dict = describe(input_file, zero_based=zero_based, reporter=reporter)
        print_info(input_file, info_dict)
        if "checksum_error" in info_dict:
            raise info_dict["checksum_error"]
        return
    in_kind = sniff_path(input_file)
    if threads is None:
        from ..params import usable_cpus
        threads = min(2, usable_cpus())
    if to is None:
        to = "text" if in_kind == "binary" else "binary"
    if to == "text" and (float32 or block_rows):
        raise ParameterError("--float32 and --block-rows apply to binary output only")
    if to == "text" and weight_file:
        raise ParameterError("-W applies to binary output only (LIBSVM text has no row weights)")
    if to == "binary" and output_file == "-":
        raise ParameterError("binary output cannot go to standard output: give a path, or use --to text")
    total = None
    if in_kind not in ("stdin", "binary"):
        with TextSource(input_file) as src:
            total = src.total_bytes
    ds = open_dataset(input_file, zero_based=zero_based, float32=float32, stream=True, threads=max(1, threads - 1))
    try:
        if to == "binary":
            _to_binary(ds, in_kind, output_file, float32, block_rows, total, reporter, input_file, zero_based,
                       threads, weight_file)
        else:
            if getattr(ds, "has_weights", False):
                reporter.warning(f"{input_file} carries row weights; LIBSVM text has none: they are not written "
                                 "(keep them with llsvm-convert --to binary, or write them as a -W file)\n")
            with _writing(output_file):
                with atomic_output(output_file, "wb") as f:
                    write_text(ds, f, zero_based=zero_based)
            if output_file != "-":
                reporter.line(f"wrote {output_file}: {ds.n_rows} rows, {ds.n_features} features, "
                              f"{ds.nnz} non-zeros (LIBSVM text)")
    finally:
        if in_kind == "binary":
            ds.close()


if __name__ == "__main__":  # python -m llsvm.cli.convert
    main()
