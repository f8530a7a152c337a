"""llsvm: large-scale linear SVMs, LIBLINEAR-compatible, with out-of-core solvers.

Data API (text or binary input, detected from the first bytes):

    ds = llsvm.read_dataset("train.txt.xz")        # in memory: CSRDataset
    X, y = ds.to_csr(), ds.y                       # scipy.sparse.csr_matrix and labels
    llsvm.write_binary("train.txt.xz", "train.bin")  # streaming text -> binary, atomic
    for block in llsvm.iter_blocks("train.bin", max_bytes=64 << 20): ...
    llsvm.dump_text("train.bin", "train.txt")      # binary -> LIBSVM text (%.17g)
"""
from .binfmt import BinaryDataset, BinaryWriter
from .dataset import CSRDataset, Dataset
from .errors import ConvergenceWarning, DataFormatError, LLSVMError, ModelFormatError, ParameterError
from .io import dump_text, file_kind, iter_blocks, open_dataset, read_dataset, to_csr, write_binary
from .model import Model, load_model
from .solvers import LLSVMOptions, Params, StreamOptions
from .trainer import cross_validation, find_parameter_C, train
from .textio import TextStream

__version__ = "0.1.0"

__all__ = [
    "BinaryDataset", "BinaryWriter", "CSRDataset", "Dataset", "TextStream",
    "LLSVMError", "DataFormatError", "ModelFormatError", "ParameterError", "ConvergenceWarning",
    "read_dataset", "open_dataset", "iter_blocks", "write_binary", "dump_text", "to_csr", "file_kind",
    "train", "cross_validation", "find_parameter_C", "Params", "Model", "load_model", "LLSVMOptions",
    "StreamOptions",
]
