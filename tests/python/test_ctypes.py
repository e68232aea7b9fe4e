"""libhurray_coo through Python's ctypes: dlopen, symbols, C types, no header.

This is exactly how Julia's ccall (and most dynamic FFIs) reach the library,
so it stands in for Julia, which cannot be installed here. Run with the path
of libhurray_coo.so as the first argument (the Rust test runner does that).
"""
import ctypes as C
import struct
import sys
import unittest

LIB = C.CDLL(sys.argv.pop(1))

Status = C.c_int32
Handle = C.c_void_p


def sig(name, restype, *argtypes):
    fn = getattr(LIB, name)
    fn.restype = restype
    fn.argtypes = list(argtypes)
    return fn


class Parts(C.Structure):
    """struct hurray_coo_parts."""
    _fields_ = [("type_tag", C.c_uint8), ("rank", C.c_uint32), ("shape", C.POINTER(C.c_uint64)),
                ("nnz", C.c_uint64), ("is_sorted", C.c_bool), ("values", C.c_void_p),
                ("values_bytes", C.c_size_t), ("indices", C.POINTER(C.c_uint64)),
                ("indices_bytes", C.c_size_t)]


Release = C.CFUNCTYPE(None, C.c_void_p)


class Options(C.Structure):
    """struct hurray_coo_options (size first; zeros are the defaults)."""
    _fields_ = [("size", C.c_size_t), ("flags", C.c_uint32), ("threads", C.c_uint32),
                ("release", Release), ("release_ctx", C.c_void_p),
                ("shard_parent_shape", C.POINTER(C.c_uint64)),
                ("shard_offset", C.POINTER(C.c_uint64))]


class Compressed(C.Structure):
    """struct hurray_compressed."""
    _fields_ = [("format", C.c_uint32), ("index_type", C.c_uint32), ("base", C.c_uint32),
                ("offsets", C.c_void_p), ("offsets_bytes", C.c_size_t),
                ("indices", C.c_void_p), ("indices_bytes", C.c_size_t),
                ("values", C.c_void_p), ("values_bytes", C.c_size_t)]


create = sig("hurray_coo_create", Status, C.POINTER(Parts), C.POINTER(Options), C.POINTER(Handle))
free = sig("hurray_coo_free", None, Handle)
validate = sig("hurray_coo_validate", Status, Handle, C.c_uint32)
lookup = sig("hurray_coo_lookup", Status, Handle, C.POINTER(C.c_uint64), C.c_uint32,
             C.c_void_p, C.c_size_t, C.POINTER(C.c_bool))
lookup_f64 = sig("hurray_coo_lookup_f64", Status, Handle, C.POINTER(C.c_uint64), C.c_uint32,
                 C.POINTER(C.c_double), C.POINTER(C.c_bool))
rank = sig("hurray_coo_rank", C.c_uint32, Handle)
nnz = sig("hurray_coo_nnz", C.c_uint64, Handle)
status_name = sig("hurray_status_name", C.c_char_p, Status)
last_error = sig("hurray_last_error_message", C.c_char_p)
abi_version = sig("hurray_coo_abi_version", C.c_uint32)



class Triplets(C.Structure):
    """struct hurray_triplets, as a Julia wrapper would declare it."""
    _fields_ = [("rank", C.c_uint32), ("shape", C.POINTER(C.c_uint64)), ("n", C.c_uint64),
                ("index_type", C.c_uint32), ("index_base", C.c_uint32),
                ("indices", C.c_void_p), ("indices_bytes", C.c_size_t),
                ("dim_indices", C.POINTER(C.c_void_p)), ("dim_indices_bytes", C.c_size_t),
                ("type_tag", C.c_uint8), ("values", C.c_void_p), ("values_bytes", C.c_size_t)]


Plan = C.c_void_p


class AssembleOptions(C.Structure):
    """struct hurray_assemble_options."""
    _fields_ = [("size", C.c_size_t), ("duplicates_policy", C.c_uint32), ("flags", C.c_uint32),
                ("threads", C.c_uint32)]


assemble_raw = sig("hurray_coo_assemble", Status, C.POINTER(Triplets),
                   C.POINTER(AssembleOptions), C.POINTER(Handle), C.POINTER(Plan))


def assemble(triplets, policy, flags, threads, out, out_plan):
    o = AssembleOptions(C.sizeof(AssembleOptions), policy, flags, threads)
    return assemble_raw(triplets, C.byref(o), out, out_plan)
plan_apply = sig("hurray_assembly_plan_apply", Status, Plan, C.c_void_p, C.c_size_t,
                 C.c_void_p, C.c_size_t, C.c_uint32)
plan_free = sig("hurray_assembly_plan_free", None, Plan)
compressed_size = sig("hurray_coo_compressed_size", Status, Handle, C.POINTER(Compressed))
export_compressed = sig("hurray_coo_export_compressed", Status, Handle, C.POINTER(Compressed),
                        C.c_uint32)

HURRAY_INDEX_INT64 = 2
HURRAY_DUP_SUM = 1
HURRAY_FORMAT_CSC = 2
FLOAT64 = 0x04
HURRAY_OK = 0
HURRAY_ERR_NULL_POINTER = -6
HURRAY_ERR_INDEX_OUT_OF_BOUNDS = -11
HURRAY_ERR_DUPLICATE = -24
HURRAY_ERR_MISALIGNED = -23
HURRAY_COO_COPY = 1
FLOAT32 = 0x03


def u64s(*v):
    return (C.c_uint64 * len(v))(*v)


class Aligned:
    """A 64-byte-aligned copy of some bytes, kept alive by this object."""

    def __init__(self, data):
        self.raw = C.create_string_buffer(len(data) + 64)
        off = (-C.addressof(self.raw)) % 64
        self.ptr = C.addressof(self.raw) + off
        C.memmove(self.ptr, data, len(data))
        self.len = len(data)


class Tensor:
    """What a Julia wrapper does: own the handle and the arrays it borrows."""

    def __init__(self, shape, entries, values, sorted_=True, flags=0, align=True):
        self.values = Aligned(struct.pack("<%df" % len(values), *values))
        self.indices = Aligned(struct.pack("<%dQ" % (len(entries) * len(shape)),
                                           *[c for e in entries for c in e]))
        if not align:
            self.values.ptr += 4  # misalign on purpose
        self.handle = Handle()
        self.shape = u64s(*shape)
        parts = Parts(FLOAT32, len(shape), self.shape, len(entries), sorted_, self.values.ptr,
                      self.values.len, C.cast(self.indices.ptr, C.POINTER(C.c_uint64)),
                      self.indices.len)
        options = Options(size=C.sizeof(Options), flags=flags, threads=1)
        self.status = create(C.byref(parts), C.byref(options), C.byref(self.handle))

    def free(self):
        if self.handle:
            free(self.handle)
            self.handle = Handle()


class CtypesTest(unittest.TestCase):
    def test_seed_example(self):
        t = Tensor([4, 4], [(0, 1), (2, 0), (3, 3)], [1.5, -0.5, 2.0])
        self.assertEqual(t.status, HURRAY_OK, last_error())
        self.assertEqual(validate(t.handle, 1), HURRAY_OK)
        self.assertEqual((rank(t.handle), nnz(t.handle)), (2, 3))
        value, found = C.c_double(), C.c_bool()
        self.assertEqual(lookup_f64(t.handle, u64s(2, 0), 2, C.byref(value), C.byref(found)),
                         HURRAY_OK)
        self.assertEqual((value.value, found.value), (-0.5, True))
        raw = C.c_float()
        self.assertEqual(lookup(t.handle, u64s(1, 1), 2, C.byref(raw), 4, C.byref(found)),
                         HURRAY_OK)
        self.assertEqual((raw.value, found.value), (0.0, False))
        t.free()
        t.free()  # idempotent wrapper

    def test_errors_carry_names_and_messages(self):
        t = Tensor([4, 4], [(0, 1), (2, 0)], [1.0, 2.0])
        value = C.c_double()
        st = lookup_f64(t.handle, u64s(4, 0), 2, C.byref(value), None)
        self.assertEqual(st, HURRAY_ERR_INDEX_OUT_OF_BOUNDS)
        self.assertEqual(status_name(st), b"HURRAY_ERR_INDEX_OUT_OF_BOUNDS")
        self.assertIn(b"coordinate 4 in dimension 0", last_error())
        t.free()
        d = Tensor([4, 4], [(2, 0), (1, 1), (2, 0)], [1.0, 2.0, 3.0], sorted_=False)
        self.assertEqual(d.status, HURRAY_ERR_DUPLICATE)
        self.assertEqual(last_error(), b"entry 2 duplicates entry 0 at (2, 0)")
        self.assertFalse(d.handle)  # *out is NULL on failure

    def test_misaligned_needs_copy(self):
        t = Tensor([4], [(1,)], [1.0], align=False)
        self.assertEqual(t.status, HURRAY_ERR_MISALIGNED)
        self.assertIn(b"HURRAY_COO_COPY", last_error())
        t = Tensor([4], [(1,)], [1.0], align=False, flags=HURRAY_COO_COPY)
        self.assertEqual(t.status, HURRAY_OK)
        t.free()

    def test_null_pointers_are_errors(self):
        self.assertEqual(validate(None, 1), HURRAY_ERR_NULL_POINTER)
        self.assertIn(b"coo is NULL", last_error())
        free(None)
        self.assertEqual(abi_version(), 2)


class AssemblyTest(unittest.TestCase):
    def test_julia_style_sparse_matrix_csc(self):
        """I, J, V 1-based Int64 with duplicates -> SparseMatrixCSC arrays
        (colptr, rowval, nzval: Int64, 1-based), then new values by the plan."""
        I = (C.c_int64 * 5)(1, 2, 2, 3, 1)
        J = (C.c_int64 * 5)(1, 1, 1, 3, 1)
        V = (C.c_double * 5)(1.0, 2.0, 3.0, 4.0, 5.0)
        shape = u64s(3, 3)
        dims = (C.c_void_p * 2)(C.addressof(I), C.addressof(J))
        t = Triplets(2, shape, 5, HURRAY_INDEX_INT64, 1, None, 0, dims, C.sizeof(I), FLOAT64,
                     C.addressof(V), C.sizeof(V))
        h, plan = Handle(), Plan()
        self.assertEqual(assemble(C.byref(t), HURRAY_DUP_SUM, 0, 2, C.byref(h), C.byref(plan)),
                         HURRAY_OK, last_error())
        csc = Compressed(format=HURRAY_FORMAT_CSC, index_type=HURRAY_INDEX_INT64, base=1)
        self.assertEqual(compressed_size(h, C.byref(csc)), HURRAY_OK)
        colptr = (C.c_int64 * (csc.offsets_bytes // 8))()
        rowval = (C.c_int64 * (csc.indices_bytes // 8))()
        nzval = (C.c_double * (csc.values_bytes // 8))()
        csc.offsets, csc.indices, csc.values = (C.addressof(colptr), C.addressof(rowval),
                                                C.addressof(nzval))
        self.assertEqual(export_compressed(h, C.byref(csc), 2), HURRAY_OK)
        self.assertEqual(list(colptr), [1, 3, 3, 4])
        self.assertEqual(list(rowval), [1, 2, 3])
        self.assertEqual(list(nzval), [6.0, 5.0, 4.0])
        # New values through the plan, in canonical (row-major) order.
        V2 = (C.c_double * 5)(10.0, 20.0, 30.0, 40.0, 50.0)
        out = (C.c_double * 3)()
        self.assertEqual(plan_apply(plan, V2, C.sizeof(V2), out, C.sizeof(out), 1), HURRAY_OK)
        self.assertEqual(list(out), [60.0, 50.0, 40.0])
        # A bad coordinate is named as Julia wrote it.
        I[3] = 4
        h2 = Handle()
        self.assertEqual(assemble(C.byref(t), HURRAY_DUP_SUM, 0, 1, C.byref(h2), None),
                         HURRAY_ERR_INDEX_OUT_OF_BOUNDS)
        self.assertIn(b"triplet 4: coordinate 4 in dimension 1 is out of bounds (valid 1 to 3)",
                      last_error())
        plan_free(plan)
        free(h)


if __name__ == "__main__":
    unittest.main(verbosity=1)
