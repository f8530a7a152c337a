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


# -- binary data files, byte by byte ----------------------------------------------------------------------------
# The documented layout of the binary format v1 (docs/formats.md section 2), spelled out here independently of
# llsvm/binfmt.py, to read fields and to craft files: a field rewritten and every checksum fixed up, so that what a
# reader must catch is the field's disagreement with the data, not a checksum.
import struct  # noqa: E402
import zlib  # noqa: E402

import numpy as np  # noqa: E402

HEADER = struct.Struct("<8sIIQQQQQQdQQ")
FIELDS = ["magic", "version", "flags", "n_rows", "n_features", "nnz", "n_blocks", "footer_offset", "footer_size",
          "max_sq_norm", "n_qid", "n_labels"]
FIELD_FORMAT = dict(zip(FIELDS, ["8s", "I", "I", "Q", "Q", "Q", "Q", "Q", "Q", "d", "Q", "Q"]))
OFFSET = {}
_pos = 0
for _name in FIELDS:
    OFFSET[_name] = _pos
    _pos += struct.calcsize("<" + FIELD_FORMAT[_name])
HEADER_SIZE = 128
BLOCK_HEADER = struct.Struct("<8sQQQQII")
BLOCK_HEADER_SIZE = 48


def header(raw):
    return dict(zip(FIELDS, HEADER.unpack_from(raw, 0)))


def fix_header_crc(raw):
    raw[124:128] = struct.pack("<I", zlib.crc32(bytes(raw[:124])))


def set_header(raw, name, value, fmt=None):
    """Rewrite one header field (its documented type unless `fmt` is given) and fix the header's CRC."""
    struct.pack_into(fmt or "<" + FIELD_FORMAT[name], raw, OFFSET[name], value)
    fix_header_crc(raw)


def block_index(raw):
    """[(offset, n_rows, nnz)] from the footer."""
    h = header(raw)
    pos = h["footer_offset"] + 8 + 16 * h["n_labels"]
    return [tuple(int(v) for v in t) for t in
            np.frombuffer(bytes(raw), "<u8", 3 * h["n_blocks"], pos).reshape(-1, 3)]


def payload_span(raw, offset):
    psize = BLOCK_HEADER.unpack_from(raw, offset)[4]
    return offset + BLOCK_HEADER_SIZE, offset + BLOCK_HEADER_SIZE + psize


def fix_block_crc(raw, offset):
    a, b = payload_span(raw, offset)
    struct.pack_into("<I", raw, offset + 40, zlib.crc32(bytes(raw[a:b])))


def label_table(raw):
    """(labels, counts) of the footer, as lists."""
    h = header(raw)
    pos, k = h["footer_offset"] + 8, h["n_labels"]
    return (np.frombuffer(bytes(raw), "<f8", k, pos).tolist(),
            np.frombuffer(bytes(raw), "<u8", k, pos + 8 * k).tolist())


def set_label_table(raw, labels=None, counts=None):
    """A copy of the file with the footer's label table and/or counts replaced (of any length: n_labels,
    footer_size and both CRCs follow)."""
    h = header(raw)
    old_labels, old_counts = label_table(raw)
    labels = old_labels if labels is None else list(labels)
    counts = old_counts if counts is None else list(counts)
    assert len(labels) == len(counts)
    index = np.array(block_index(raw), "<u8").reshape(-1, 3)
    footer = b"LLSVMFTR" + np.array(labels, "<f8").tobytes() + np.array(counts, "<u8").tobytes() + index.tobytes()
    footer += struct.pack("<II", zlib.crc32(footer), 0)
    out = bytearray(raw[:h["footer_offset"]]) + footer
    struct.pack_into("<Q", out, OFFSET["footer_size"], len(footer))
    set_header(out, "n_labels", len(labels))
    return out


def block_arrays(raw, b):
    """Writable numpy views (labels, offsets, indices, values) into block b of `raw` (a bytearray): change them,
    then fix_block_crc(raw, block_index(raw)[b][0])."""
    offset, n, nnz = block_index(raw)[b]
    a, _ = payload_span(raw, offset)
    vdtype = "<f4" if header(raw)["flags"] & 1 else "<f8"
    buf = memoryview(raw)
    o_ptr = a + 8 * n
    o_idx = o_ptr + 8 * (n + 1)
    o_val = o_idx + (4 * nnz + 7) // 8 * 8
    return (np.frombuffer(buf, "<f8", n, a), np.frombuffer(buf, "<i8", n + 1, o_ptr),
            np.frombuffer(buf, "<i4", nnz, o_idx), np.frombuffer(buf, vdtype, nnz, o_val))
