"""llsvm: large-scale linear SVMs, LIBLINEAR-compatible, with out-of-core solvers.

Data API (text or binary input, detected from the first bytes):

    ds = llsvm.read_dataset("train.txt.xz")        # in memory: CSRDataset
    X, y = ds.to_csr(), ds.y                       # scipy.sparse.csr_matrix and labels
    llsvm.write_binary("train.txt.xz", "train.bin")  # streaming text -> binary, atomic
    for block in llsvm.iter_blocks("train.bin", max_bytes=64 << 20): ...
    llsvm.dump_text("train.bin", "train.txt")      # binary -> LIBSVM text (%.17g)
"""
import importlib

# the public names and the modules that define them; imported on first use (PEP 562), so that importing
# llsvm.cli.entry, the console scripts' first step, imports nothing heavy before it installs its signal handlers
_EXPORTS = {
    "binfmt": ("BinaryDataset", "BinaryWriter"),
    "dataset": ("CSRDataset", "Dataset"),
    "errors": ("ConvergenceWarning", "DataFormatError", "LLSVMError", "ModelFormatError", "ParameterError"),
    "io": ("dump_text", "file_kind", "iter_blocks", "open_dataset", "read_dataset", "to_csr", "write_binary"),
    "model": ("Model", "load_model"),
    "svm_model": ("SVMModel",),
    "solvers": ("LLSVMOptions", "Params", "StreamOptions"),
    "trainer": ("cross_validation", "find_parameter_C", "train"),
    "textio": ("TextStream",),
}
_HOME = {name: module for module, names in _EXPORTS.items() for name in names}


def __getattr__(name):
    module = _HOME.get(name)
    if module is None:
        raise AttributeError(f"module 'llsvm' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_HOME))


__version__ = "0.1.0"

__all__ = [
    "BinaryDataset", "BinaryWriter", "CSRDataset", "Dataset", "TextStream",
    "LLSVMError", "DataFormatError", "ModelFormatError", "ParameterError", "ConvergenceWarning",
    "read_dataset", "open_dataset", "iter_blocks", "write_binary", "dump_text", "to_csr", "file_kind",
    "train", "cross_validation", "find_parameter_C", "Params", "Model", "SVMModel", "load_model",
    "LLSVMOptions", "StreamOptions",
]
