/* SuiteSparse:GraphBLAS adopts a CSR exported by libhurray_coo without
 * another copy (GxB_Matrix_import_CSR takes the three malloc'd arrays), and
 * its sparse matrix-vector product equals one computed from the COO. */
#include <GraphBLAS.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "hurray_coo.h"

#define N 40
#define T 3000

static int fail(const char *what) {
    fprintf(stderr, "graphblas client: %s: %s\n", what, hurray_last_error_message());
    return 1;
}

int main(void) {
    static int64_t rows[T], cols[T];
    static double vals[T];
    const uint64_t shape[2] = {N, N};
    uint64_t s = 12345;
    size_t k;
    hurray_triplets t = {0};
    hurray_coo *coo = NULL;
    for (k = 0; k < T; k++) { /* duplicates galore: FEM-style contributions */
        s = s * 6364136223846793005ULL + 1442695040888963407ULL;
        rows[k] = (int64_t)((s >> 33) % N);
        cols[k] = (int64_t)((s >> 13) % N);
        vals[k] = (double)((s >> 50) % 7) - 3.0;
    }
    const void *dims[2] = {rows, cols};
    t.rank = 2;
    t.shape = shape;
    t.n = T;
    t.index_type = HURRAY_INDEX_INT64;
    t.dim_indices = dims;
    t.dim_indices_bytes = sizeof rows;
    t.type_tag = HURRAY_TYPE_FLOAT64;
    t.values = vals;
    t.values_bytes = sizeof vals;
    const hurray_assemble_options sum = {.size = sizeof(hurray_assemble_options),
                                         .duplicates_policy = HURRAY_DUP_SUM, .threads = 2};
    if (hurray_coo_assemble(&t, &sum, &coo, NULL) != HURRAY_OK) return fail("assemble");

    hurray_compressed csr = {.format = HURRAY_FORMAT_CSR, .index_type = HURRAY_INDEX_UINT64};
    if (hurray_coo_compressed_size(coo, &csr)) return fail("size");
    size_t ob = csr.offsets_bytes, ib = csr.indices_bytes, vb = csr.values_bytes;
    GrB_Index *ap = malloc(ob), *aj = malloc(ib ? ib : 1);
    double *ax = malloc(vb ? vb : 1);
    if (!ap || !aj || !ax) return 1;
    csr.offsets = ap, csr.indices = aj, csr.values = ax;
    if (hurray_coo_export_compressed(coo, &csr, 1)) return fail("export");

    GrB_init(GrB_NONBLOCKING);
    GrB_Matrix A;
    if (GxB_Matrix_import_CSR(&A, GrB_FP64, N, N, &ap, &aj, (void **)&ax, ob, ib, vb, false, false,
                              NULL) != GrB_SUCCESS || ap != NULL)
        return fprintf(stderr, "GraphBLAS did not adopt the arrays\n"), 1;
    GrB_Vector x, y;
    GrB_Vector_new(&x, GrB_FP64, N);
    GrB_Vector_new(&y, GrB_FP64, N);
    double xs[N], want[N] = {0};
    for (k = 0; k < N; k++) {
        xs[k] = 1.0 / (double)(k + 1);
        GrB_Vector_setElement_FP64(x, xs[k], k);
    }
    GrB_mxv(y, NULL, NULL, GrB_PLUS_TIMES_SEMIRING_FP64, A, x, NULL);

    /* The reference: y = A x straight from the COO buffers. */
    size_t nb;
    const double *cv = hurray_coo_values(coo, &nb);
    const uint64_t *ci = hurray_coo_indices(coo, &nb);
    for (k = 0; k < hurray_coo_nnz(coo); k++) want[ci[2 * k]] += cv[k] * xs[ci[2 * k + 1]];
    double worst = 0.0;
    for (k = 0; k < N; k++) {
        double got = 0.0;
        GrB_Vector_extractElement_FP64(&got, y, k); /* absent: left at 0 */
        worst = fmax(worst, fabs(got - want[k]));
    }
    GrB_Index nvals;
    GrB_Matrix_nvals(&nvals, A);
    printf("graphblas: adopted %llu entries, spmv max difference %g\n", (unsigned long long)nvals,
           worst);
    GrB_free(&A);
    GrB_free(&x);
    GrB_free(&y);
    GrB_finalize();
    int ok = nvals == hurray_coo_nnz(coo) && worst <= 1e-12;
    hurray_coo_free(coo);
    return ok ? 0 : 1;
}
