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


create = sig("hurray_coo_create", Status, C.c_uint8, C.c_uint32, C.POINTER(C.c_uint64),
             C.c_uint64, C.c_bool, C.c_void_p, C.c_size_t, C.POINTER(C.c_uint64), C.c_size_t,
             C.c_uint32, C.POINTER(Handle))
free = sig("hurray_coo_free", None, Handle)
validate = sig("hurray_coo_validate", Status, Handle)
lookup = sig("hurray_coo_lookup", Status, Handle, C.POINTER(C.c_uint64), C.c_uint32,
             C.c_void_p, C.c_size_t, C.POINTER(C.c_bool))
lookup_f64 = sig("hurray_coo_lookup_f64", Status, Handle, C.POINTER(C.c_uint64), C.c_uint32,
                 C.POINTER(C.c_double), C.POINTER(C.c_bool))
rank = sig("hurray_coo_rank", C.c_uint32, Handle)
nnz = sig("hurray_coo_nnz", C.c_uint64, Handle)
status_name = sig("hurray_status_name", C.c_char_p, Status)
last_error = sig("hurray_last_error_message", C.c_char_p)
abi_version = sig("hurray_coo_abi_version", C.c_uint32)

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
        self.status = create(FLOAT32, len(shape), u64s(*shape), len(entries), sorted_,
                             self.values.ptr, self.values.len,
                             C.cast(self.indices.ptr, C.POINTER(C.c_uint64)), self.indices.len,
                             flags, C.byref(self.handle))

    def free(self):
        if self.handle:
            free(self.handle)
            self.handle = Handle()


class CtypesTest(unittest.TestCase):
    def test_seed_example(self):
        t = Tensor([4, 4], [(0, 1), (2, 0), (3, 3)], [1.5, -0.5, 2.0])
        self.assertEqual(t.status, HURRAY_OK, last_error())
        self.assertEqual(validate(t.handle), HURRAY_OK)
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
        self.assertEqual(validate(None), HURRAY_ERR_NULL_POINTER)
        self.assertIn(b"coo is NULL", last_error())
        free(None)
        self.assertEqual(abi_version(), 1)


if __name__ == "__main__":
    unittest.main(verbosity=1)
