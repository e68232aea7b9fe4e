"""scipy adopts a CSR exported by libhurray_coo without another copy:
numpy arrays over the caller's buffers (numpy owns the memory; the library
writes into it), wrapped by scipy.sparse.csr_array((data, indices, indptr)).
Matrix Market files written by scipy.io.mmwrite read here, and files written
here read in scipy.io.mmread, value for value.
Run with the path of libhurray_coo.so as the first argument."""
import ctypes as C
import os
import sys
import tempfile
import unittest

import numpy as np
import scipy.sparse as sp

LIB = C.CDLL(sys.argv.pop(1))


class Triplets(C.Structure):
    _fields_ = [("rank", C.c_uint32), ("shape", C.POINTER(C.c_uint64)), ("n", C.c_uint64),
                ("index_type", C.c_uint32), ("index_base", C.c_uint32),
                ("indices", C.c_void_p), ("indices_bytes", C.c_size_t),
                ("dim_indices", C.POINTER(C.c_void_p)), ("dim_indices_bytes", C.c_size_t),
                ("type_tag", C.c_uint8), ("values", C.c_void_p), ("values_bytes", C.c_size_t)]


def sig(name, restype, *argtypes):
    fn = getattr(LIB, name)
    fn.restype, fn.argtypes = restype, list(argtypes)
    return fn




class AssembleOptions(C.Structure):
    _fields_ = [("size", C.c_size_t), ("duplicates_policy", C.c_uint32), ("flags", C.c_uint32),
                ("threads", C.c_uint32)]


assemble_raw = sig("hurray_coo_assemble", C.c_int32, C.POINTER(Triplets),
                   C.POINTER(AssembleOptions), C.POINTER(C.c_void_p), C.c_void_p)


def assemble(triplets, policy, flags, threads, out, out_plan):
    o = AssembleOptions(C.sizeof(AssembleOptions), policy, flags, threads)
    return assemble_raw(triplets, C.byref(o), out, out_plan)
class Compressed(C.Structure):
    """struct hurray_compressed."""
    _fields_ = [("format", C.c_uint32), ("index_type", C.c_uint32), ("base", C.c_uint32),
                ("offsets", C.c_void_p), ("offsets_bytes", C.c_size_t),
                ("indices", C.c_void_p), ("indices_bytes", C.c_size_t),
                ("values", C.c_void_p), ("values_bytes", C.c_size_t)]


export_compressed = sig("hurray_coo_export_compressed", C.c_int32, C.c_void_p,
                        C.POINTER(Compressed), C.c_uint32)


def export(h, fmt, itype, base, o, ob, i, ib, v, vb, threads):
    c = Compressed(fmt, itype, base, o, ob, i, ib, v, vb)
    return export_compressed(h, C.byref(c), threads)
nnz = sig("hurray_coo_nnz", C.c_uint64, C.c_void_p)


class TextOptions(C.Structure):
    _fields_ = [("size", C.c_size_t), ("duplicates_policy", C.c_uint32), ("flags", C.c_uint32),
                ("threads", C.c_uint32), ("precision", C.c_uint32),
                ("value_type", C.c_uint32)]


read_mtx_raw = sig("hurray_coo_read_mtx_file", C.c_int32, C.c_char_p, C.POINTER(TextOptions),
                   C.POINTER(C.c_uint32), C.POINTER(C.c_void_p))
write_mtx_raw = sig("hurray_coo_write_mtx_file", C.c_int32, C.c_void_p, C.c_char_p,
                    C.POINTER(TextOptions))


def read_mtx_file(path, policy, flags, threads, out_symmetry, out):
    o = TextOptions(C.sizeof(TextOptions), policy, flags, threads, 0)
    return read_mtx_raw(path, C.byref(o), out_symmetry, out)


def write_mtx_file(h, path, precision, threads):
    o = TextOptions(C.sizeof(TextOptions), 0, 0, threads, precision, 0)
    return write_mtx_raw(h, path, C.byref(o))
free = sig("hurray_coo_free", None, C.c_void_p)
last_error = sig("hurray_last_error_message", C.c_char_p)

INDEX_INT32, INDEX_INT64, DUP_SUM, CSR, FLOAT64 = 1, 2, 1, 1, 0x04


class ScipyTest(unittest.TestCase):
    def test_csr_array_over_the_exported_buffers(self):
        rng = np.random.default_rng(5)
        n, t = 50, 4000
        rows = rng.integers(0, n, t, dtype=np.int64)
        cols = rng.integers(0, n, t, dtype=np.int64)
        vals = rng.standard_normal(t)
        shape = (C.c_uint64 * 2)(n, n)
        dims = (C.c_void_p * 2)(rows.ctypes.data, cols.ctypes.data)
        trip = Triplets(2, shape, t, INDEX_INT64, 0, None, 0, dims, rows.nbytes, FLOAT64,
                        vals.ctypes.data, vals.nbytes)
        h = C.c_void_p()
        self.assertEqual(assemble(C.byref(trip), DUP_SUM, 0, 1, C.byref(h), None), 0,
                         last_error())
        m = nnz(h)
        for itype, dtype in [(INDEX_INT32, np.int32), (INDEX_INT64, np.int64)]:
            indptr = np.empty(n + 1, dtype=dtype)
            indices = np.empty(m, dtype=dtype)
            data = np.empty(m, dtype=np.float64)
            self.assertEqual(export(h, CSR, itype, 0, indptr.ctypes.data, indptr.nbytes,
                                    indices.ctypes.data, indices.nbytes,
                                    data.ctypes.data, data.nbytes, 2), 0, last_error())
            a = sp.csr_array((data, indices, indptr), shape=(n, n), copy=False)
            self.assertTrue(np.shares_memory(a.data, data))
            self.assertTrue(a.has_sorted_indices)
            want = sp.coo_array((vals, (rows, cols)), shape=(n, n)).tocsr()  # sums duplicates
            x = np.linspace(1.0, 2.0, n)
            np.testing.assert_allclose(a @ x, want @ x, rtol=1e-12, atol=1e-12)
            self.assertEqual(a.nnz, want.nnz)
        free(h)

    def csr_of(self, h, n_rows, n_cols, complex_values=False):
        m = nnz(h)
        indptr = np.empty(n_rows + 1, dtype=np.int64)
        indices = np.empty(m, dtype=np.int64)
        data = np.empty(m, dtype=np.complex128 if complex_values else np.float64)
        self.assertEqual(export(h, CSR, INDEX_INT64, 0, indptr.ctypes.data, indptr.nbytes,
                                indices.ctypes.data, indices.nbytes,
                                data.ctypes.data, data.nbytes, 1), 0, last_error())
        return sp.csr_array((data, indices, indptr), shape=(n_rows, n_cols))

    def test_matrix_market_both_ways(self):
        import scipy.io as sio
        rng = np.random.default_rng(11)
        with tempfile.TemporaryDirectory() as d:
            a = sp.random_array((40, 30), density=0.2, random_state=rng, format="coo")
            s = sp.random_array((25, 25), density=0.2, random_state=rng, format="coo")
            s = (s + s.T).tocoo()  # symmetric: scipy writes the lower triangle
            c = (sp.random_array((9, 9), density=0.3, random_state=rng)
                 + 1j * sp.random_array((9, 9), density=0.3, random_state=rng)).tocoo()
            for name, m, sym, cx in [("a", a, 0, False), ("s", s, 1, False), ("c", c, 0, True)]:
                path = os.path.join(d, name + ".mtx")
                sio.mmwrite(path, m, symmetry="symmetric" if sym else "general")
                h, got_sym = C.c_void_p(), C.c_uint32(9)
                self.assertEqual(read_mtx_file(path.encode(), 0, 0, 1, C.byref(got_sym),
                                               C.byref(h)), 0, last_error())
                self.assertEqual(got_sym.value, sym)
                ours = self.csr_of(h, *m.shape, complex_values=cx)
                self.assertEqual((ours != m.tocsr()).nnz, 0, name)
                back = os.path.join(d, name + "_back.mtx")
                self.assertEqual(write_mtx_file(h, back.encode(), 0, 2), 0, last_error())
                theirs = sp.csr_array(sio.mmread(back))
                self.assertEqual((theirs != m.tocsr()).nnz, 0, name)
                free(h)
            bad = os.path.join(d, "bad.mtx")
            with open(bad, "w") as f:
                f.write("%%MatrixMarket matrix coordinate real general\n2 2 1\n1 3 1.0\n")
            h = C.c_void_p()
            self.assertEqual(read_mtx_file(bad.encode(), 0, 0, 1, None, C.byref(h)), -50)
            self.assertIn(b"line 3, column 3", last_error())


if __name__ == "__main__":
    unittest.main()
