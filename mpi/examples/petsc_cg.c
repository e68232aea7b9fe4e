/* Distributed assembly into PETSc, as a solver uses it: every rank adds its
 * elements' contributions (any rows, 1-based, as Fortran codes hold them),
 * hurray_mpi_assemble sends each to the owner of its row and sums
 * duplicates, each rank exports its rows as CSR with global column indices
 * (PetscInt, 0-based), MatCreateMPIAIJWithArrays takes them as they are,
 * and CG solves. Then rank 0 solves the same system assembled in one
 * process and compares: the two solutions agree to the solver tolerance.
 *   mpicc petsc_cg.c $(pkg-config --cflags --libs hurray_coo_mpi petsc)
 *   mpirun -n 4 ./a.out */
#include <petscksp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hurray_coo_mpi.h"

#define M 40 /* M x M squares, two triangles each */
#define NODES ((M + 1) * (M + 1))

/* Rank r's share of the triplets: elements e with e % size == r. */
static uint64_t triplets_of(int r, int size, int32_t *rows, int32_t *cols, double *vals) {
    uint64_t n = 0;
    int e = 0;
    for (int y = 0; y < M; y++)
        for (int x = 0; x < M; x++)
            for (int t = 0; t < 2; t++, e++) {
                int p0 = y * (M + 1) + x, v[3];
                if (e % size != r) continue;
                v[0] = p0;
                v[1] = t ? p0 + M + 2 : p0 + 1;
                v[2] = t ? p0 + M + 1 : p0 + M + 2;
                for (int a = 0; a < 3; a++)
                    for (int b = 0; b < 3; b++) {
                        rows[n] = v[a] + 1;
                        cols[n] = v[b] + 1;
                        vals[n++] = a == b ? 1.0 + 0.05 : -0.5; /* stiffness + a mass shift */
                    }
            }
    return n;
}

static hurray_triplets triplets(const int32_t **dims, uint64_t n, const double *vals,
                                const uint64_t *shape) {
    hurray_triplets t;
    memset(&t, 0, sizeof t);
    t.rank = 2;
    t.shape = shape;
    t.n = n;
    t.index_type = HURRAY_INDEX_INT32;
    t.index_base = 1;
    t.dim_indices = (const void *const *)dims;
    t.dim_indices_bytes = n * sizeof(int32_t);
    t.type_tag = HURRAY_TYPE_FLOAT64;
    t.values = vals;
    t.values_bytes = n * sizeof(double);
    return t;
}

/* A handle's rows as PETSc CSR arrays (0-based PetscInt, global columns). */
static void csr(const hurray_coo *h, PetscInt **ia, PetscInt **ja, PetscScalar **a) {
    const uint32_t it = sizeof(PetscInt) == 4 ? HURRAY_INDEX_INT32 : HURRAY_INDEX_INT64;
    hurray_compressed c = {.format = HURRAY_FORMAT_CSR, .index_type = it};
    hurray_coo_compressed_size(h, &c);
    *ia = malloc(c.offsets_bytes);
    *ja = malloc(c.indices_bytes ? c.indices_bytes : 1);
    *a = malloc(c.values_bytes ? c.values_bytes : 1);
    c.offsets = *ia, c.indices = *ja, c.values = *a;
    if (hurray_coo_export_compressed(h, &c, 1) != HURRAY_OK)
        fprintf(stderr, "export: %s\n", hurray_last_error_message());
}

static PetscErrorCode solve(Mat A, Vec b, Vec x, PetscInt *its) {
    KSP ksp;
    PC pc;
    PetscFunctionBeginUser;
    PetscCall(KSPCreate(PetscObjectComm((PetscObject)A), &ksp));
    PetscCall(KSPSetOperators(ksp, A, A));
    PetscCall(KSPSetType(ksp, KSPCG));
    PetscCall(KSPGetPC(ksp, &pc));
    PetscCall(PCSetType(pc, PCJACOBI));
    PetscCall(KSPSetTolerances(ksp, 1e-12, PETSC_DEFAULT, PETSC_DEFAULT, 10000));
    PetscCall(KSPSolve(ksp, b, x));
    PetscCall(KSPGetIterationNumber(ksp, its));
    PetscCall(KSPDestroy(&ksp));
    PetscFunctionReturn(0);
}

int main(int argc, char **argv) {
    int me, size;
    const uint64_t shape[2] = {NODES, NODES};
    const size_t cap = (size_t)2 * M * M * 9;
    int32_t *rows = malloc(cap * sizeof *rows), *cols = malloc(cap * sizeof *cols);
    double *vals = malloc(cap * sizeof *vals);
    hurray_coo *mine = NULL;
    PetscInt *ia, *ja, its = 0, m;
    PetscScalar *a;
    Mat A;
    Vec x, b, x0;
    VecScatter to0;
    double diff = 0.0;

    PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
    MPI_Comm_rank(PETSC_COMM_WORLD, &me);
    MPI_Comm_size(PETSC_COMM_WORLD, &size);
    {
        const int32_t *dims[2] = {rows, cols};
        uint64_t n = triplets_of(me, size, rows, cols, vals);
        hurray_triplets t = triplets(dims, n, vals, shape);
        if (hurray_mpi_assemble(&t, HURRAY_DUP_SUM, 0, HURRAY_MPI_ROWS_BALANCED, NULL,
                                PETSC_COMM_WORLD, &mine, NULL) != HURRAY_OK) {
            fprintf(stderr, "%s\n", hurray_mpi_last_error_message());
            return 1;
        }
    }
    csr(mine, &ia, &ja, &a);
    m = (PetscInt)hurray_coo_shape(mine)[0];
    PetscCall(MatCreateMPIAIJWithArrays(PETSC_COMM_WORLD, m, m, NODES, NODES, ia, ja,
                                        a, &A));
    PetscCall(MatCreateVecs(A, &x, &b));
    PetscCall(VecSet(b, 1.0));
    PetscCall(solve(A, b, x, &its));

    /* Rank 0: the same system from one process, and the difference. */
    PetscCall(VecScatterCreateToZero(x, &to0, &x0));
    PetscCall(VecScatterBegin(to0, x, x0, INSERT_VALUES, SCATTER_FORWARD));
    PetscCall(VecScatterEnd(to0, x, x0, INSERT_VALUES, SCATTER_FORWARD));
    if (me == 0) {
        int32_t *r1 = malloc(cap * sizeof *r1), *c1 = malloc(cap * sizeof *c1);
        double *v1 = malloc(cap * sizeof *v1);
        const int32_t *dims[2] = {r1, c1};
        uint64_t n = 0;
        hurray_coo *whole = NULL;
        PetscInt *ia1, *ja1, its1 = 0;
        PetscScalar *a1;
        const PetscScalar *xs, *xd;
        Mat A1;
        Vec x1, b1;
        for (int r = 0; r < size; r++) n += triplets_of(r, size, r1 + n, c1 + n, v1 + n);
        {
            hurray_triplets t = triplets(dims, n, v1, shape);
            const hurray_assemble_options sum = {sizeof(hurray_assemble_options), HURRAY_DUP_SUM,
                                                 0, 1};
            hurray_coo_assemble(&t, &sum, &whole, NULL);
        }
        csr(whole, &ia1, &ja1, &a1);
        PetscCall(MatCreateSeqAIJWithArrays(PETSC_COMM_SELF, NODES, NODES, ia1, ja1, a1, &A1));
        PetscCall(MatCreateVecs(A1, &x1, &b1));
        PetscCall(VecSet(b1, 1.0));
        PetscCall(solve(A1, b1, x1, &its1));
        PetscCall(VecGetArrayRead(x1, &xs));
        PetscCall(VecGetArrayRead(x0, &xd));
        for (PetscInt i = 0; i < NODES; i++) {
            double d = xs[i] - xd[i];
            if (d < 0) d = -d;
            if (d > diff) diff = d;
        }
        PetscCall(VecRestoreArrayRead(x0, &xd));
        PetscCall(VecRestoreArrayRead(x1, &xs));
        printf("%d ranks: CG converged in %d iterations (one process: %d), max difference %.1e\n",
               size, (int)its, (int)its1, diff);
        PetscCall(MatDestroy(&A1));
        PetscCall(VecDestroy(&x1));
        PetscCall(VecDestroy(&b1));
        free(ia1);
        free(ja1);
        free(a1);
        free(r1);
        free(c1);
        free(v1);
        hurray_coo_free(whole);
    }
    PetscCall(VecScatterDestroy(&to0));
    PetscCall(VecDestroy(&x0));
    PetscCall(MatDestroy(&A));
    PetscCall(VecDestroy(&x));
    PetscCall(VecDestroy(&b));
    free(ia);
    free(ja);
    free(a);
    hurray_coo_free(mine);
    free(rows);
    free(cols);
    free(vals);
    PetscCall(PetscFinalize());
    return diff < 1e-8 ? 0 : 1;
}
