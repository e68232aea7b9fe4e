"""libhurray_coo from Python: read Matrix Market (and FROSTT) files, assemble
triplets and write matrices, with numpy arrays in and scipy.sparse.csr_array
out. ctypes only: nothing to compile.

    import hurray_coo
    A = hurray_coo.read_mtx("bcsstk01.mtx.gz")          # scipy csr_array
    A = hurray_coo.read_mtx("counts.mtx", value_type="float64")
    B = hurray_coo.assemble(rows, cols, vals, (n, n), duplicates="sum")
    hurray_coo.write_mtx("half.mtx", B, symmetry="symmetric")

The library is found through HURRAY_COO_LIB (a path to libhurray_coo.so), then
next to this file's install prefix (PREFIX/share/hurray_coo/python ->
PREFIX/lib), then the system's search path. Errors raise HurrayError with
the library's status name and message ("line 7, column 3: ...").
"""
import ctypes as C
import ctypes.util
import os

import numpy as np
import scipy.sparse as sp

__all__ = ["HurrayError", "read_mtx", "assemble", "write_mtx", "library"]


def _find():
    env = os.environ.get("HURRAY_COO_LIB")
    if env:
        return env
    here = os.path.dirname(os.path.abspath(__file__))
    beside = os.path.join(here, "..", "..", "..", "lib", "libhurray_coo.so")
    if os.path.exists(beside):
        return beside
    found = ctypes.util.find_library("hurray_coo")
    if found:
        return found
    raise OSError("libhurray_coo.so not found: set HURRAY_COO_LIB to its path")


_lib = None


def library():
    """The loaded libhurray_coo (loaded on first use)."""
    global _lib
    if _lib is None:
        _lib = C.CDLL(_find())
        _declare(_lib)
    return _lib


class _Triplets(C.Structure):
    _fields_ = [("rank", C.c_uint32), ("shape", C.POINTER(C.c_uint64)), ("n", C.c_uint64),
                ("index_type", C.c_uint32), ("index_base", C.c_uint32),
                ("indices", C.c_void_p), ("indices_bytes", C.c_size_t),
                ("dim_indices", C.POINTER(C.c_void_p)), ("dim_indices_bytes", C.c_size_t),
                ("type_tag", C.c_uint8), ("values", C.c_void_p), ("values_bytes", C.c_size_t)]


class _AssembleOptions(C.Structure):
    _fields_ = [("size", C.c_size_t), ("duplicates_policy", C.c_uint32), ("flags", C.c_uint32),
                ("threads", C.c_uint32)]


class _TextOptions(C.Structure):
    _fields_ = [("size", C.c_size_t), ("duplicates_policy", C.c_uint32), ("flags", C.c_uint32),
                ("threads", C.c_uint32), ("precision", C.c_uint32), ("value_type", C.c_uint32)]


class _Compressed(C.Structure):
    _fields_ = [("format", C.c_uint32), ("index_type", C.c_uint32), ("base", C.c_uint32),
                ("offsets", C.c_void_p), ("offsets_bytes", C.c_size_t),
                ("indices", C.c_void_p), ("indices_bytes", C.c_size_t),
                ("values", C.c_void_p), ("values_bytes", C.c_size_t)]


def _declare(lib):
    sigs = {
        "hurray_coo_read_mtx_file": (C.c_int32, [C.c_char_p, C.POINTER(_TextOptions),
                                                 C.POINTER(C.c_uint32), C.POINTER(C.c_void_p)]),
        "hurray_coo_write_mtx_file": (C.c_int32, [C.c_void_p, C.c_char_p,
                                                  C.POINTER(_TextOptions)]),
        "hurray_coo_assemble": (C.c_int32, [C.POINTER(_Triplets), C.POINTER(_AssembleOptions),
                                            C.POINTER(C.c_void_p), C.c_void_p]),
        "hurray_assemble_compressed": (C.c_int32, [C.POINTER(_Triplets),
                                                   C.POINTER(_AssembleOptions),
                                                   C.POINTER(_Compressed),
                                                   C.POINTER(C.c_uint64), C.c_void_p]),
        "hurray_read_mtx_compressed_size": (C.c_int32, [C.c_char_p, C.POINTER(_TextOptions),
                                                        C.POINTER(_Compressed),
                                                        C.POINTER(C.c_uint64),
                                                        C.POINTER(C.c_uint8)]),
        "hurray_read_mtx_compressed": (C.c_int32, [C.c_char_p, C.POINTER(_TextOptions),
                                                   C.POINTER(_Compressed),
                                                   C.POINTER(C.c_uint64),
                                                   C.POINTER(C.c_uint32)]),
        "hurray_coo_shape": (C.POINTER(C.c_uint64), [C.c_void_p]),
        "hurray_coo_rank": (C.c_uint32, [C.c_void_p]),
        "hurray_coo_type_tag": (C.c_uint8, [C.c_void_p]),
        "hurray_coo_free": (None, [C.c_void_p]),
        "hurray_status_name": (C.c_char_p, [C.c_int32]),
        "hurray_last_error_message": (C.c_char_p, []),
    }
    for name, (res, args) in sigs.items():
        f = getattr(lib, name)
        f.restype, f.argtypes = res, args


class HurrayError(Exception):
    """A libhurray_coo failure: .status (an int), .name (HURRAY_ERR_...),
    and the library's message as the exception text."""

    def __init__(self, status):
        lib = library()
        self.status = status
        self.name = lib.hurray_status_name(status).decode()
        super().__init__(f"{self.name}: {lib.hurray_last_error_message().decode()}")


def _check(status):
    if status != 0:
        raise HurrayError(status)


_POLICIES = {"error": 0, "sum": 1, "first": 2, "last": 3, "min": 4, "max": 5}
# numpy dtype -> HURRAY_TYPE_*, for the real and integer types numpy has.
_TYPES = {np.dtype(np.float64): 0x04, np.dtype(np.float32): 0x03, np.dtype(np.int8): 0x10,
          np.dtype(np.uint8): 0x11, np.dtype(np.int16): 0x12, np.dtype(np.uint16): 0x13,
          np.dtype(np.int32): 0x14, np.dtype(np.uint32): 0x15, np.dtype(np.int64): 0x16,
          np.dtype(np.uint64): 0x17, np.dtype(np.complex128): 0x51,
          np.dtype(np.complex64): 0x50, np.dtype(np.bool_): 0x20}
_DTYPES = {v: k for k, v in _TYPES.items()}
_SYMMETRY = {"general": 0, "symmetric": 0x20, "skew-symmetric": 0x40, "hermitian": 0x80}


def _policy(name):
    if name not in _POLICIES:
        raise ValueError(f"duplicates={name!r}: one of {', '.join(_POLICIES)}")
    return _POLICIES[name]


def read_mtx(path, *, value_type=None, duplicates="error", threads=1, keep_triangular=False):
    """Read a Matrix Market file (gzip-compressed or not) into a
    scipy.sparse.csr_array with sorted indices. value_type: a numpy dtype
    (np.float64 for an integer or pattern file): every value must fit it
    exactly, or HurrayError (HURRAY_ERR_OVERFLOW) names the entry.
    Symmetric files are mirrored unless keep_triangular. The file is read
    straight into the arrays numpy owns (hurray_read_mtx_compressed): no
    handle in between."""
    lib = library()
    vt = 0
    if value_type is not None:
        dt = np.dtype(value_type)
        if dt not in _TYPES or dt.kind in "cb":
            raise ValueError(f"value_type={dt}: a real or integer numpy type")
        vt = _TYPES[dt]
    o = _TextOptions(C.sizeof(_TextOptions), _policy(duplicates),
                     0x10 if keep_triangular else 0, threads, 0, vt)
    name = os.fsencode(path)
    shape = (C.c_uint64 * 2)()
    tag = C.c_uint8()
    c = _Compressed(1, 1, 0)
    _check(lib.hurray_read_mtx_compressed_size(name, C.byref(o), C.byref(c), shape,
                                               C.byref(tag)))
    rows, cols = shape[0], shape[1]
    if tag.value == 0x20:
        raise ValueError("a pattern matrix: read it with value_type='float64' for ones")
    wide = max(rows, cols) >= 2**31
    itype = np.int64 if wide else np.int32
    if wide:
        c = _Compressed(1, 2, 0)
        _check(lib.hurray_read_mtx_compressed_size(name, C.byref(o), C.byref(c), None, None))
    dtype = _DTYPES[tag.value]
    # Room for every entry the file can give: pages past the result are
    # never touched, so they cost no memory.
    indptr = np.empty(rows + 1, dtype=itype)
    indices = np.empty(c.indices_bytes // np.dtype(itype).itemsize, dtype=itype)
    data = np.empty(c.values_bytes // dtype.itemsize, dtype=dtype)
    c.offsets, c.offsets_bytes = indptr.ctypes.data, indptr.nbytes
    c.indices, c.indices_bytes = indices.ctypes.data, indices.nbytes
    c.values, c.values_bytes = data.ctypes.data, data.nbytes
    nnz = C.c_uint64()
    _check(lib.hurray_read_mtx_compressed(name, C.byref(o), C.byref(c), C.byref(nnz), None))
    n = nnz.value
    return sp.csr_array((data[:n], indices[:n], indptr), shape=(rows, cols), copy=False)


def _triplets(rows, cols, vals, shape):
    """The triplets as numpy arrays the library reads, and their struct
    (which points into them: keep the arrays alive while it is used)."""
    rows = np.ascontiguousarray(rows, dtype=np.int64)
    cols = np.ascontiguousarray(cols, dtype=np.int64)
    vals = np.ascontiguousarray(vals)
    if vals.dtype not in _TYPES:
        vals = vals.astype(np.float64)
    if not (len(rows) == len(cols) == len(vals)):
        raise ValueError(f"rows, cols and vals differ in length: {len(rows)}, {len(cols)}, "
                         f"{len(vals)}")
    dims = (C.c_void_p * 2)(rows.ctypes.data, cols.ctypes.data)
    ext = (C.c_uint64 * 2)(*shape)
    t = _Triplets(2, ext, len(rows), 2, 0, None, 0, dims, rows.nbytes, _TYPES[vals.dtype],
                  vals.ctypes.data, vals.nbytes)
    return (rows, cols, vals, dims, ext), t


def _assemble(rows, cols, vals, shape, duplicates, threads):
    lib = library()
    _keep, t = _triplets(rows, cols, vals, shape)
    o = _AssembleOptions(C.sizeof(_AssembleOptions), _policy(duplicates), 0, threads)
    h = C.c_void_p()
    _check(lib.hurray_coo_assemble(C.byref(t), C.byref(o), C.byref(h), None))
    return h


def assemble(rows, cols, vals, shape, *, duplicates="sum", threads=1):
    """Assemble triplets (numpy arrays, counted from 0) into a csr_array of
    shape (rows, cols): every coordinate checked against the shape,
    duplicates combined by `duplicates` (error, sum, first, last, min,
    max), values kept in their numpy type. The library writes the CSR
    arrays straight into arrays numpy owns (hurray_assemble_compressed):
    no handle in between, no copy after."""
    lib = library()
    keep, t = _triplets(rows, cols, vals, shape)
    n, vals = t.n, keep[2]
    o = _AssembleOptions(C.sizeof(_AssembleOptions), _policy(duplicates), 0, threads)
    wide = max(shape[0], shape[1], n) >= 2**31
    itype = np.int64 if wide else np.int32
    # Room for every triplet: the result never has more entries, and the
    # pages past it are never touched; trimmed in place below.
    indptr = np.empty(shape[0] + 1, dtype=itype)
    indices = np.empty(n, dtype=itype)
    data = np.empty(n, dtype=vals.dtype)
    c = _Compressed(1, 2 if wide else 1, 0, indptr.ctypes.data, indptr.nbytes,
                    indices.ctypes.data, indices.nbytes, data.ctypes.data, data.nbytes)
    nnz = C.c_uint64()
    _check(lib.hurray_assemble_compressed(C.byref(t), C.byref(o), C.byref(c), C.byref(nnz),
                                          None))
    indices.resize(nnz.value, refcheck=False)
    data.resize(nnz.value, refcheck=False)
    return sp.csr_array((data, indices, indptr), shape=tuple(shape), copy=False)


def write_mtx(path, A, *, symmetry="general", precision=0, threads=1):
    """Write a scipy sparse matrix (or anything scipy.sparse.coo_array
    takes) as a Matrix Market file: through a temporary file renamed into
    place; symmetry 'symmetric', 'skew-symmetric' or 'hermitian' writes the
    lower triangle and is refused (HurrayError naming the entry) when A
    does not have it exactly; precision 0 writes shortest round-trip
    numbers."""
    if symmetry not in _SYMMETRY:
        raise ValueError(f"symmetry={symmetry!r}: one of {', '.join(_SYMMETRY)}")
    m = sp.coo_array(A)
    h = _assemble(m.row, m.col, m.data, m.shape, "error", threads)
    try:
        o = _TextOptions(C.sizeof(_TextOptions), 0, _SYMMETRY[symmetry], threads, precision, 0)
        _check(library().hurray_coo_write_mtx_file(h, os.fsencode(path), C.byref(o)))
    finally:
        library().hurray_coo_free(h)
