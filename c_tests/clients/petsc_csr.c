/* PETSc adopts a CSR exported by libhurray_coo without another copy
 * (MatCreateSeqAIJWithArrays uses the caller's arrays in place, in PetscInt:
 * int32 or int64 as PETSc was built, base 0); its MatMult equals the COO's
 * product; then the re-assembly plan writes a time step's new values
 * straight into those same values, and PETSc sees them. */
#include <math.h>
#include <petscmat.h>
#include <stdio.h>
#include <stdlib.h>

#include "hurray_coo.h"

#define N 40
#define T 3000

static int fail(const char *what) {
    fprintf(stderr, "petsc client: %s: %s\n", what, hurray_last_error_message());
    return 1;
}

static double worst_diff(Mat A, hurray_coo *coo, const double *vals, double scale) {
    Vec x, y;
    double want[N] = {0}, worst = 0.0;
    size_t nb, k;
    const uint64_t *ci = hurray_coo_indices(coo, &nb);
    const PetscScalar *ys;
    VecCreateSeq(PETSC_COMM_SELF, N, &x);
    VecDuplicate(x, &y);
    for (k = 0; k < N; k++) VecSetValue(x, (PetscInt)k, 1.0 / (double)(k + 1), INSERT_VALUES);
    VecAssemblyBegin(x);
    VecAssemblyEnd(x);
    MatMult(A, x, y);
    for (k = 0; k < hurray_coo_nnz(coo); k++)
        want[ci[2 * k]] += scale * vals[k] / (double)(ci[2 * k + 1] + 1);
    VecGetArrayRead(y, &ys);
    for (k = 0; k < N; k++) worst = fmax(worst, fabs(ys[k] - want[k]));
    VecRestoreArrayRead(y, &ys);
    VecDestroy(&x);
    VecDestroy(&y);
    return worst;
}

int main(int argc, char **argv) {
    static int64_t rows[T], cols[T];
    static double vals[T], vals2[T];
    const uint64_t shape[2] = {N, N};
    const void *dims[2] = {rows, cols};
    uint64_t s = 4242;
    size_t k, ob, ib, vb, nb;
    hurray_triplets t = {0};
    hurray_coo *coo = NULL;
    hurray_assembly_plan *plan = NULL;
    const uint32_t itype = sizeof(PetscInt) == 8 ? HURRAY_INDEX_INT64 : HURRAY_INDEX_INT32;
    for (k = 0; k < T; k++) {
        s = s * 6364136223846793005ULL + 1442695040888963407ULL;
        rows[k] = (int64_t)((s >> 33) % N);
        cols[k] = (int64_t)((s >> 13) % N);
        vals[k] = (double)((s >> 50) % 7) - 3.0;
        vals2[k] = 2.0 * vals[k];
    }
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
                                         .duplicates_policy = HURRAY_DUP_SUM};
    if (hurray_coo_assemble(&t, &sum, &coo, &plan)) return fail("assemble");
    hurray_compressed csr = {.format = HURRAY_FORMAT_CSR, .index_type = itype};
    if (hurray_coo_compressed_size(coo, &csr)) return fail("size");
    ob = csr.offsets_bytes, ib = csr.indices_bytes, vb = csr.values_bytes;
    PetscInt *rp = malloc(ob), *ci = malloc(ib);
    PetscScalar *av = malloc(vb);
    if (!rp || !ci || !av) return 1;
    csr.offsets = rp, csr.indices = ci, csr.values = av;
    if (hurray_coo_export_compressed(coo, &csr, 1)) return fail("export");

    PetscInitialize(&argc, &argv, NULL, NULL);
    Mat A;
    if (MatCreateSeqAIJWithArrays(PETSC_COMM_SELF, N, N, rp, ci, av, &A)) return 1;
    const double *cv = hurray_coo_values(coo, &nb);
    double d1 = worst_diff(A, coo, cv, 1.0);

    /* A time step: new values through the plan, into PETSc's own array. */
    if (hurray_assembly_plan_apply(plan, vals2, sizeof vals2, av, vb, 1)) return fail("plan");
    /* MatMult reads the adopted arrays as they are now. */
    double d2 = worst_diff(A, coo, cv, 2.0);
    PetscInt nz;
    MatInfo info;
    MatGetInfo(A, MAT_LOCAL, &info);
    nz = (PetscInt)info.nz_used;
    printf("petsc: adopted %ld entries (PetscInt %zu bytes), matmult max difference %g, after "
           "re-assembly %g\n",
           (long)nz, sizeof(PetscInt), d1, d2);
    MatDestroy(&A);
    PetscFinalize();
    int ok = (uint64_t)nz == hurray_coo_nnz(coo) && d1 <= 1e-12 && d2 <= 1e-12;
    free(rp);
    free(ci);
    free(av);
    hurray_assembly_plan_free(plan);
    hurray_coo_free(coo);
    return ok ? 0 : 1;
}
