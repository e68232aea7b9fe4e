// Eigen 3, on the exported datasets (rank 2).
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
        if (load(argv[1], argv[a], &d) != 0 || d.rank != 2) continue;
        std::vector<T> trips;
        trips.reserve(d.nnz);
        for (uint64_t k = 0; k < d.nnz; k++)
            trips.emplace_back((std::int64_t)d.idx[2 * k], (std::int64_t)d.idx[2 * k + 1], d.val[k]);
        double t[3];
        for (int r = 0; r < 3; r++) {
            SpMat A((std::int64_t)d.shape[0], (std::int64_t)d.shape[1]);
            double s = now_ms();
            A.setFromTriplets(trips.begin(), trips.end());
            t[r] = now_ms() - s;
        }
        std::printf("eigen\tvalidate\t%s\t%.4f\n", argv[a], median3(t[0], t[1], t[2]));
        if (d.q) {
            SpMat A((std::int64_t)d.shape[0], (std::int64_t)d.shape[1]);
            A.setFromTriplets(trips.begin(), trips.end());
            double sum = 0;
            for (int r = 0; r < 3; r++) {
                double s = now_ms();
                for (uint64_t k = 0; k < d.nq; k++)
                    sum += A.coeff((std::int64_t)d.q[2 * k], (std::int64_t)d.q[2 * k + 1]);
                t[r] = now_ms() - s;
            }
            std::printf("eigen\tlookup\t%s\t%.4f\n", argv[a], median3(t[0], t[1], t[2]));
            std::fprintf(stderr, "eigen %s: checksum %g\n", argv[a], sum);
        }
    }
    return 0;
}
