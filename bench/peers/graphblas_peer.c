/* SuiteSparse:GraphBLAS, single-threaded, on the exported datasets (rank 2;
 * rank 3 for lookups only, as the matrix (i, j * n2 + k) of n0 x n1 n2).
 *   validate:     GrB_Matrix_build with no dup operator (duplicates are an
 *                 error) + GrB_Matrix_wait: bounds, duplicates, and a CSR.
 *   validate_dup: the same with GrB_PLUS_FP64 (duplicates summed).
 *   lookup:       1M GrB_Matrix_extractElement_FP64 (same queries as ours). */
#include "common.h" /* first: it sets _POSIX_C_SOURCE */

#include <GraphBLAS.h>

int main(int argc, char **argv) {
    int a;
    GrB_init(GrB_NONBLOCKING);
    GxB_Global_Option_set(GxB_NTHREADS, 1);
    for (a = 2; a < argc; a++) {
        dataset d;
        GrB_Index *I, *J, n;
        double t[3];
        int r, dup;
        int flat;
        uint64_t n2;
        if (load(argv[1], argv[a], &d) != 0 || d.rank < 2 || d.rank > 3) continue;
        flat = d.rank == 3;
        n2 = flat ? d.shape[2] : 1;
        if (flat) d.shape[1] *= n2;
        n = d.nnz;
        I = malloc(n * sizeof *I);
        J = malloc(n * sizeof *J);
        for (GrB_Index k = 0; k < n; k++) {
            const uint64_t *c = &d.idx[d.rank * k];
            I[k] = c[0];
            J[k] = flat ? c[1] * n2 + c[2] : c[1];
        }
        for (dup = 0; dup < 2 && !flat; dup++) {
            for (r = 0; r < 3; r++) {
                GrB_Matrix A;
                double s = now_ms();
                GrB_Matrix_new(&A, GrB_FP64, d.shape[0], d.shape[1]);
                GrB_Info info = GrB_Matrix_build_FP64(A, I, J, d.val, n, dup ? GrB_PLUS_FP64 : NULL);
                GrB_Matrix_wait(A, GrB_MATERIALIZE);
                t[r] = now_ms() - s;
                if (info != GrB_SUCCESS) fprintf(stderr, "graphblas build: %d\n", (int)info);
                GrB_Matrix_free(&A);
            }
            printf("graphblas\t%s\t%s\t%.4f\n", dup ? "validate_dup" : "validate", argv[a],
                   median3(t[0], t[1], t[2]));
        }
        if (d.q) {
            GrB_Matrix A;
            uint64_t hits = 0;
            GrB_Matrix_new(&A, GrB_FP64, d.shape[0], d.shape[1]);
            GrB_Matrix_build_FP64(A, I, J, d.val, n, GrB_PLUS_FP64);
            GrB_Matrix_wait(A, GrB_MATERIALIZE);
            for (r = 0; r < 3; r++) {
                double s = now_ms();
                for (uint64_t k = 0; k < d.nq; k++) {
                    double x;
                    const uint64_t *q = &d.q[d.rank * k];
                    hits += GrB_Matrix_extractElement_FP64(&x, A, q[0], flat ? q[1] * n2 + q[2] : q[1]) ==
                            GrB_SUCCESS;
                }
                t[r] = now_ms() - s;
            }
            printf("graphblas\tlookup\t%s\t%.4f\n", argv[a], median3(t[0], t[1], t[2]));
            fprintf(stderr, "graphblas %s: %lu hits\n", argv[a], (unsigned long)(hits / 3));
            GrB_Matrix_free(&A);
        }
        free(I);
        free(J);
    }
    GrB_finalize();
    return 0;
}
