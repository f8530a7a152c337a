"""llsvm: large-scale linear SVMs, LIBLINEAR-compatible, with out-of-core solvers.

Data API (text or binary input, detected from the first bytes):

    ds = llsvm.read_dataset("train.txt.xz")        # in memory: CSRDataset
    X, y = ds.to_csr(), ds.y                       # scipy.sparse.csr_matrix and labels
    llsvm.write_binary("train.txt.xz", "train.bin")  # streaming text -> binary, atomic
    for block in llsvm.iter_blocks("train.bin", max_bytes=64 << 20): ...
    llsvm.dump_text("train.bin", "train.txt")      # binary -> LIBSVM text (%.17g)
"""
from .lazy import exports

# the public names and the modules that define them; imported on first use, so that importing llsvm.cli.entry, the
# console scripts' first step, imports nothing heavy before it installs its signal handlers
__getattr__, __dir__ = exports(__name__, {
    "binfmt": ("BinaryDataset", "BinaryWriter"),
    "dataset": ("CSRDataset", "Dataset"),
    "errors": ("ConvergenceWarning", "DataFormatError", "LLSVMError", "ModelFormatError", "ParameterError"),
    "io": ("dump_text", "file_kind", "iter_blocks", "open_dataset", "read_dataset", "to_csr", "write_binary"),
    "models": ("Model", "SVMModel", "load_model"),
    "options": ("H1Options", "LLSVMOptions", "OneDOptions", "OnlineOptions", "SMOOptions", "StreamOptions"),
    "params": ("Params",),
    "solvers.trainer": ("cross_validation", "find_parameter_C", "train"),
    "solvers.grid": ("grid_search",),
    "textio": ("TextStream",),
})

__version__ = "0.1.0"

__all__ = [
    "BinaryDataset", "BinaryWriter", "CSRDataset", "Dataset", "TextStream",
    "LLSVMError", "DataFormatError", "ModelFormatError", "ParameterError", "ConvergenceWarning",
    "read_dataset", "open_dataset", "iter_blocks", "write_binary", "dump_text", "to_csr", "file_kind",
    "train", "cross_validation", "find_parameter_C", "grid_search", "Params", "Model", "SVMModel", "load_model",
    "LLSVMOptions", "StreamOptions", "SMOOptions", "H1Options", "OnlineOptions", "OneDOptions",
]
