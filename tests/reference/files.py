"""Test data files: LIBSVM text written from (X, y) with an exact round trip."""
import scipy.sparse as sp


def libsvm_text(X, y):
    """LIBSVM text for (X, y), 1-based indices, values as repr (exact round trip)."""
    X = sp.csr_matrix(X)
    out = []
    for i in range(X.shape[0]):
        a, b = X.indptr[i], X.indptr[i + 1]
        feats = " ".join(f"{j + 1}:{float(v)!r}" for j, v in zip(X.indices[a:b].tolist(), X.data[a:b].tolist()))
        out.append(("%.17g %s" % (y[i], feats)).rstrip() + "\n")
    return "".join(out)


def write_text(path, X, y):
    path.write_text(libsvm_text(X, y))
    return path
