// Eigen adopts a CSR exported by libhurray_coo in its own index type
// (int32, base 0) with no copy (Map<SparseMatrix<double, RowMajor, int>>),
// and its sparse matrix-vector product equals one computed from the COO.
#include <Eigen/Sparse>
#include <cmath>
#include <cstdio>
#include <vector>

#include "hurray_coo.h"

int main() {
    const int n = 40, t = 3000;
    std::vector<int32_t> rows(t), cols(t);
    std::vector<double> vals(t);
    uint64_t s = 777;
    for (int k = 0; k < t; k++) {
        s = s * 6364136223846793005ULL + 1442695040888963407ULL;
        rows[k] = int32_t((s >> 33) % n);
        cols[k] = int32_t((s >> 13) % n);
        vals[k] = double((s >> 50) % 7) - 3.0;
    }
    const uint64_t shape[2] = {uint64_t(n), uint64_t(n)};
    const void *dims[2] = {rows.data(), cols.data()};
    hurray_triplets tr{};
    tr.rank = 2;
    tr.shape = shape;
    tr.n = uint64_t(t);
    tr.index_type = HURRAY_INDEX_INT32;
    tr.dim_indices = dims;
    tr.dim_indices_bytes = rows.size() * sizeof(int32_t);
    tr.type_tag = HURRAY_TYPE_FLOAT64;
    tr.values = vals.data();
    tr.values_bytes = vals.size() * sizeof(double);
    hurray_coo *coo = nullptr;
    hurray_assemble_options sum{};
    sum.size = sizeof sum;
    sum.duplicates_policy = HURRAY_DUP_SUM;
    if (hurray_coo_assemble(&tr, &sum, &coo, nullptr) != HURRAY_OK) {
        std::fprintf(stderr, "assemble: %s\n", hurray_last_error_message());
        return 1;
    }
    hurray_compressed csr{};
    csr.format = HURRAY_FORMAT_CSR;
    csr.index_type = HURRAY_INDEX_INT32;
    hurray_coo_compressed_size(coo, &csr);
    std::vector<int32_t> rp(csr.offsets_bytes / 4), ci(csr.indices_bytes / 4);
    std::vector<double> v(csr.values_bytes / 8);
    csr.offsets = rp.data();
    csr.indices = ci.data();
    csr.values = v.data();
    if (hurray_coo_export_compressed(coo, &csr, 1) != HURRAY_OK) {
        std::fprintf(stderr, "export: %s\n", hurray_last_error_message());
        return 1;
    }
    Eigen::Map<const Eigen::SparseMatrix<double, Eigen::RowMajor, int>> A(
        n, n, int(v.size()), rp.data(), ci.data(), v.data());
    Eigen::VectorXd x(n), want = Eigen::VectorXd::Zero(n);
    for (int k = 0; k < n; k++) x[k] = 1.0 / double(k + 1);
    Eigen::VectorXd y = A * x;
    size_t nb;
    const double *cv = static_cast<const double *>(hurray_coo_values(coo, &nb));
    const uint64_t *cc = hurray_coo_indices(coo, &nb);
    for (uint64_t k = 0; k < hurray_coo_nnz(coo); k++) want[cc[2 * k]] += cv[k] * x[cc[2 * k + 1]];
    double worst = (y - want).cwiseAbs().maxCoeff();
    std::printf("eigen: adopted %ld entries, spmv max difference %g\n", long(A.nonZeros()), worst);
    bool ok = uint64_t(A.nonZeros()) == hurray_coo_nnz(coo) && worst <= 1e-12;
    hurray_coo_free(coo);
    return ok ? 0 : 1;
}
