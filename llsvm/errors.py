"""The exception hierarchy (docs/architecture.md, "Errors and exit codes")."""


class LLSVMError(Exception):
    """Base of every error llsvm reports to a user."""


class DataFormatError(LLSVMError):
    """Malformed, corrupt or truncated data, with where it was found.

    ``line`` and ``column`` are 1-based for text input; for binary files they are 0 and the message says which
    part of the file is wrong.
    """

    def __init__(self, path, line, column, message):
        self.path = str(path)
        self.line = int(line)
        self.column = int(column)
        self.message = message
        super().__init__(str(self))

    def __str__(self):
        if self.line > 0:
            return f"{self.path}:{self.line}:{self.column}: {self.message}"
        return f"{self.path}: {self.message}"

    def __reduce__(self):
        return (type(self), (self.path, self.line, self.column, self.message))


class ModelFormatError(LLSVMError):
    """A model file that cannot be read."""


class ParameterError(LLSVMError):
    """An option or argument out of its range."""


class ConvergenceWarning(UserWarning):
    """The iteration limit was hit before the stopping rule held."""
