// Eigen 3, on the exported datasets (rank 2; rank 3 for lookups only, as the
// matrix (i, j * n2 + k) of shape n0 x n1 n2: what a caller with a 3-way
// tensor and only a sparse-matrix library would do).
//   validate: SparseMatrix::setFromTriplets (sums duplicates; bounds are only
//             asserted in debug builds) - the usual assembly step.
//   lookup:   1M SparseMatrix::coeff(i, j) on the compressed row-major matrix.
#include <Eigen/Sparse>
#include <cstdio>
#include <vector>

extern "C" {
#include "common.h"
}

int main(int argc, char **argv) {
    using SpMat = Eigen::SparseMatrix<double, Eigen::RowMajor, std::int64_t>;
    using T = Eigen::Triplet<double, std::int64_t>;
    for (int a = 2; a < argc; a++) {
        dataset d;
        if (load(argv[1], argv[a], &d) != 0 || d.rank < 2 || d.rank > 3) continue;
        // Rank 3 flattened: column j * n2 + k.
        const bool flat = d.rank == 3;
        const std::uint64_t n2 = flat ? d.shape[2] : 1;
        auto col = [&](const std::uint64_t *c) {
            return (std::int64_t)(flat ? c[1] * n2 + c[2] : c[1]);
        };
        if (flat) d.shape[1] *= n2;
        std::vector<T> trips;
        trips.reserve(d.nnz);
        for (uint64_t k = 0; k < d.nnz; k++)
            trips.emplace_back((std::int64_t)d.idx[d.rank * k], col(&d.idx[d.rank * k]), d.val[k]);
        double t[3];
        for (int r = 0; r < 3 && !flat; r++) {
            SpMat A((std::int64_t)d.shape[0], (std::int64_t)d.shape[1]);
            double s = now_ms();
            A.setFromTriplets(trips.begin(), trips.end());
            t[r] = now_ms() - s;
        }
        if (!flat) std::printf("eigen\tvalidate\t%s\t%.4f\n", argv[a], median3(t[0], t[1], t[2]));
        if (d.q) {
            SpMat A((std::int64_t)d.shape[0], (std::int64_t)d.shape[1]);
            A.setFromTriplets(trips.begin(), trips.end());
            double sum = 0;
            for (int r = 0; r < 3; r++) {
                double s = now_ms();
                for (uint64_t k = 0; k < d.nq; k++)
                    sum += A.coeff((std::int64_t)d.q[d.rank * k], col(&d.q[d.rank * k]));
                t[r] = now_ms() - s;
            }
            std::printf("eigen\tlookup\t%s\t%.4f\n", argv[a], median3(t[0], t[1], t[2]));
            std::fprintf(stderr, "eigen %s: checksum %g\n", argv[a], sum);
        }
    }
    return 0;
}
