"""The shipped Python module (bindings/python/hurray_coo.py) used the way
the README says: import it, read files into scipy csr_arrays, assemble
numpy triplets, write matrices. The library comes from HURRAY_COO_LIB or,
installed, from the module's prefix."""
import gzip
import os
import tempfile
import unittest

import numpy as np
import scipy.io as sio
import scipy.sparse as sp

import hurray_coo


class ModuleTest(unittest.TestCase):
    def test_read_gzip_symmetric_file_as_scipy_does(self):
        rng = np.random.default_rng(3)
        s = sp.random_array((30, 30), density=0.2, random_state=rng, format="coo")
        s = (s + s.T).tocoo()
        with tempfile.TemporaryDirectory() as d:
            plain = os.path.join(d, "s.mtx")
            sio.mmwrite(plain, s, symmetry="symmetric")
            packed = plain + ".gz"
            with open(plain, "rb") as f, gzip.open(packed, "wb") as g:
                g.write(f.read())
            for path in [plain, packed]:
                a = hurray_coo.read_mtx(path, threads=2)
                self.assertIsInstance(a, sp.csr_array)
                self.assertTrue(a.has_sorted_indices)
                self.assertEqual(a.indices.dtype, np.int32)
                self.assertEqual((a != sio.mmread(plain).tocsr()).nnz, 0, path)
            half = hurray_coo.read_mtx(plain, keep_triangular=True)
            self.assertEqual(half.nnz, sp.tril(s).nnz)

    def test_values_in_the_solvers_type(self):
        with tempfile.TemporaryDirectory() as d:
            p = os.path.join(d, "i.mtx")
            with open(p, "w") as f:
                f.write("%%MatrixMarket matrix coordinate integer general\n2 2 2\n1 1 3\n2 1 -7\n")
            a = hurray_coo.read_mtx(p, value_type=np.float64)
            self.assertEqual(a.dtype, np.float64)
            self.assertEqual(a.toarray().tolist(), [[3.0, 0.0], [-7.0, 0.0]])
            self.assertEqual(hurray_coo.read_mtx(p).dtype, np.int64)
            with open(p, "w") as f:
                f.write("%%MatrixMarket matrix coordinate real general\n2 2 1\n2 1 0.1\n")
            with self.assertRaises(hurray_coo.HurrayError) as e:
                hurray_coo.read_mtx(p, value_type=np.float32)
            self.assertEqual(e.exception.name, "HURRAY_ERR_OVERFLOW")
            self.assertIn("entry 0 at (2, 1) (counted from 1): 0.1 would become", str(e.exception))

    def test_assemble_sums_as_scipy_does(self):
        rng = np.random.default_rng(8)
        n, t = 40, 3000
        rows, cols = rng.integers(0, n, t), rng.integers(0, n, t)
        vals = rng.standard_normal(t)
        a = hurray_coo.assemble(rows, cols, vals, (n, n))
        want = sp.coo_array((vals, (rows, cols)), shape=(n, n)).tocsr()
        np.testing.assert_allclose(a.toarray(), want.toarray(), rtol=1e-12, atol=1e-12)
        with self.assertRaises(hurray_coo.HurrayError) as e:
            hurray_coo.assemble(rows, cols, vals, (n, n), duplicates="error")
        self.assertEqual(e.exception.name, "HURRAY_ERR_DUPLICATE")
        with self.assertRaises(hurray_coo.HurrayError) as e:
            hurray_coo.assemble([0, 5], [0, 0], [1.0, 2.0], (4, 4))
        self.assertIn("5", str(e.exception))

    def test_write_symmetric_or_refuse(self):
        a = sp.csr_array(np.array([[4.0, -1.0, 0.0], [-1.0, 4.0, 2.0], [0.0, 2.0, 1.0]]))
        with tempfile.TemporaryDirectory() as d:
            p = os.path.join(d, "half.mtx")
            hurray_coo.write_mtx(p, a, symmetry="symmetric")
            with open(p) as f:
                self.assertTrue(f.readline().startswith("%%MatrixMarket matrix coordinate real symmetric"))
            self.assertEqual((sio.mmread(p).tocsr() != a).nnz, 0)
            a[0, 1] = 5.0
            with self.assertRaises(hurray_coo.HurrayError) as e:
                hurray_coo.write_mtx(p, a, symmetry="symmetric")
            self.assertIn("is not symmetric", str(e.exception))
            bad = os.path.join(d, "bad.mtx")
            with open(bad, "w") as f:
                f.write("%%MatrixMarket matrix coordinate real general\n2 2 1\n1 3 1.0\n")
            with self.assertRaises(hurray_coo.HurrayError) as e:
                hurray_coo.read_mtx(bad)
            self.assertIn("line 3, column 3", str(e.exception))


if __name__ == "__main__":
    unittest.main()
