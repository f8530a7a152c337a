"""The exception hierarchy (docs/architecture.md, "Errors and exit codes"), and how messages quote what was found."""


# the most characters (bytes, for bytes) of a token a message quotes: a longer one is cut there and ends in "..."
QUOTE_LIMIT = 40


def quote(text, limit=QUOTE_LIMIT):
    """`text` (str, or bytes from a file) between single quotes, as messages show what they found (escape: cut
    after `limit` characters)."""
    return f"'{escape(text, limit)}'"


def escape(text, limit=QUOTE_LIMIT):
    """`text` (str, or bytes from a file) as messages show it: its first `limit` characters (bytes, for bytes;
    None: all), then "..." when there are more, so that a 5 KB token does not fill the message; control and other
    unprintable characters, bytes that are not UTF-8, and backslashes escaped as Python writes them ('\\x00',
    '\\x7f', '\\xff', '\\\\'), so that a NUL byte or an escape sequence in a file can neither garble a terminal nor
    hide."""
    more = ""
    if limit is not None and len(text) > limit:
        text, more = text[:limit], "..."
    if isinstance(text, (bytes, bytearray, memoryview)):
        text = bytes(text).decode("utf-8", "surrogateescape")     # a byte that is not UTF-8: U+DC80..U+DCFF
    if text.isprintable() and "\\" not in text:
        return text + more
    out = []
    for ch in text:
        o = ord(ch)
        if ch == "\\":
            out.append("\\\\")
        elif 0xDC80 <= o <= 0xDCFF:
            out.append(f"\\x{o - 0xDC00:02x}")
        elif ch.isprintable():
            out.append(ch)
        elif o < 0x100:
            out.append(f"\\x{o:02x}")
        elif o < 0x10000:
            out.append(f"\\u{o:04x}")
        else:
            out.append(f"\\U{o:08x}")
    return "".join(out) + more


class LLSVMError(Exception):
    """Base of every error llsvm reports to a user. The errors of bad input, a parameter out of its range
    (ParameterError), data (DataFormatError) or a model file (ModelFormatError) that cannot be read, are also
    ValueErrors (issue 45), what Python and scikit-learn raise for a bad argument and what their callers catch;
    the CLI reports every LLSVMError the same way, whatever else it is."""


class DataFormatError(LLSVMError, ValueError):
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


class ModelFormatError(LLSVMError, ValueError):
    """A model file that cannot be read."""


class ParameterError(LLSVMError, ValueError):
    """An option or argument out of its range."""


class CheckParameterError(ParameterError):
    """A parameter that LIBLINEAR's check_parameter or LIBSVM's svm_check_parameter refuses, found only once the data
    are read (LIBSVM's nu feasibility needs the class counts): the command prints it as they do, "ERROR: ..."."""


class ConvergenceWarning(UserWarning):
    """The iteration limit was hit before the stopping rule held."""
