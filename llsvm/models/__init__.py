"""llsvm's models, one module per kind, none taking a private name from another:

- base: BaseModel (the interface llsvm-predict and the library use), NonFiniteModelError, the numbers of a model
  file as C reads them (c_int, c_ints, c_float, INT, FLOAT, INT32_MIN, INT32_MAX), as_rows, and the one header
  reader of the LIBLINEAR and LIBSVM formats (parse_header, header_int);
- linear: Model, the linear model in LIBLINEAR's text format and its hashed variant (SOLVER_TYPE_TABLE, ...);
- svm: SVMModel, LIBSVM's kernel model (KERNEL_TYPES, SVM_TYPES, ovo_vote, ...);
- tree: TreeModel, Tree, Node, the tree model of -s h1tree (built on svm's public names);
- loader: load_model, a model of any kind from its file (MODEL_FORMATS: the readers by the file's first word).

The names below are imported on first use (llsvm.lazy), so that importing one module of the package imports no
other kind's (the kernel and tree modules load their kernels' extensions).
"""
from ..lazy import exports

__getattr__, __dir__ = exports(__name__, {
    "base": ("BaseModel", "NonFiniteModelError"),
    "linear": ("Model",),
    "svm": ("SVMModel",),
    "tree": ("Node", "Tree", "TreeModel"),
    "loader": ("load_model",),
})

__all__ = ["BaseModel", "NonFiniteModelError", "Model", "SVMModel", "Node", "Tree", "TreeModel", "load_model"]
