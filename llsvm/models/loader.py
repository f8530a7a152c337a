"""Loading a model of any kind by its file's first line: LIBLINEAR's `solver_type ...` (a linear model),
`llsvm_hashed_model` (a linear model over hashed features; both llsvm.models.linear), LIBSVM's `svm_type ...` (a
kernel model: `svm_type`, `kernel_type`, ..., `SV`; llsvm.models.svm) and `llsvm_tree_model` (llsvm's tree model of
-s h1tree; llsvm.models.tree). `load_model` reads any of them; llsvm-predict uses only the
BaseModel interface. The kernel and tree modules are imported only when such a file is read.
"""
import os

from .._ext._libsvm import first_control
from ..errors import ModelFormatError, quote
from .linear import HASHED_MAGIC, Model

# files larger than this are first tried in pieces (Model.read_streamed), HEAD bytes holding the header
STREAM_FROM = 4 << 20
HEAD = 1 << 16


def _read_svm(path, data, size):
    """LIBSVM's kernel model (llsvm.models.svm, imported on first use)."""
    from .svm import SVMModel

    return SVMModel.parse(path, data, size)


def _read_tree(path, data, size):
    """llsvm's tree model of -s h1tree (llsvm.models.tree, imported on first use)."""
    from .tree import TreeModel

    return TreeModel.parse(path, data.decode("ascii"), size)


# first word of a model file -> its reader (LIBLINEAR's format when none matches)
MODEL_FORMATS = {
    HASHED_MAGIC: Model.parse_hashed,
    "svm_type": _read_svm,
    "llsvm_tree_model": _read_tree,
}


def load_model(path):
    """A model of any kind from its file, the kind chosen by its first line; anything malformed raises
    ModelFormatError."""
    path = os.fspath(path)
    try:
        size = os.path.getsize(path)
        with open(path, "rb") as f:
            if size > STREAM_FROM:
                # a large LIBLINEAR model: its weights are read in pieces, the file never held whole (a file that
                # is not plainly one is read again below, whole, and any error named)
                head = f.read(HEAD)
                if head.startswith(b"solver_type") and first_control(head) < 0:
                    model = Model.read_streamed(path, head, f, size)
                    if model is not None:
                        return model
                del head
                f.seek(0)
            data = f.read()
    except OSError as exc:
        raise ModelFormatError(f"can't open model file {path}: {exc.strerror}") from None
    # the readers take the file's bytes (read as lines on demand, base.ModelText): a large model is held once
    if not data.isascii():
        try:
            data.decode("ascii")
        except UnicodeDecodeError as exc:
            raise ModelFormatError(f"{path}: not a model file (non-ASCII byte at offset {exc.start})") from None
    # a model file is printable ASCII and C's white space (what LIBLINEAR's fscanf separates on); Python's
    # split() would also separate on \x1c-\x1f, so any other control character is refused here, once
    at = first_control(data)
    if at >= 0:
        lineno = data.count(b"\n", 0, at) + 1
        raise ModelFormatError(f"{path}:{lineno}: a control character {quote(chr(data[at]))} in the model file")
    nl = data.find(b"\n")
    first = data[:nl if nl >= 0 else len(data)].split()
    reader = MODEL_FORMATS.get(first[0].decode("ascii") if first else None, Model.parse_liblinear)
    return reader(path, data, size)
