/* Distributed COO assembly against PETSc's COO path, same triplets, same
 * row blocks, one run per rank count:
 *   ours    hurray_mpi_assemble (route, assemble, shard) with a kept plan
 *   re-ours hurray_mpi_plan_apply (new values: one alltoallv of values)
 *   into    ours + CSR export + MatCreateMPIAIJWithArrays (a PETSc Mat)
 *   petsc   MatSetPreallocationCOO + MatSetValuesCOO (a PETSc Mat)
 *   re-pets MatSetValuesCOO with new values
 * FEM triplets: M x M squares, two triangles, 9 contributions each,
 * element e on rank e % size (so most contributions belong to another
 * rank's rows). Best of reps, the slowest rank's time.
 *   mpirun -n P mpi_assembly M reps */
#include <petscmat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hurray_coo_mpi.h"
#include "create.h"

static int me, size;

static double now(void) { return MPI_Wtime(); }

static double slowest(double t) {
    double m = 0;
    MPI_Allreduce(&t, &m, 1, MPI_DOUBLE, MPI_MAX, PETSC_COMM_WORLD);
    return m;
}

int main(int argc, char **argv) {
    int M, reps;
    uint64_t n = 0, nodes;
    PetscInt *ci, *cj;
    int64_t *ri, *rj;
    double *v, *v2;
    double best[5] = {1e30, 1e30, 1e30, 1e30, 1e30};
    uint64_t bytes = 0, lo, hi;
    PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
    MPI_Comm_rank(PETSC_COMM_WORLD, &me);
    MPI_Comm_size(PETSC_COMM_WORLD, &size);
    M = argc > 1 ? atoi(argv[1]) : 300;
    reps = argc > 2 ? atoi(argv[2]) : 3;
    nodes = (uint64_t)(M + 1) * (uint64_t)(M + 1);
    {
        size_t cap = (size_t)2 * M * M * 9 / (size_t)size + 18;
        ci = malloc(cap * sizeof *ci);
        cj = malloc(cap * sizeof *cj);
        ri = malloc(cap * sizeof *ri);
        rj = malloc(cap * sizeof *rj);
        v = malloc(cap * sizeof *v);
        v2 = malloc(cap * sizeof *v2);
    }
    {
        int e = 0;
        for (int y = 0; y < M; y++)
            for (int x = 0; x < M; x++)
                for (int t = 0; t < 2; t++, e++) {
                    int p0 = y * (M + 1) + x, q[3];
                    if (e % size != me) continue;
                    q[0] = p0;
                    q[1] = t ? p0 + M + 2 : p0 + 1;
                    q[2] = t ? p0 + M + 1 : p0 + M + 2;
                    for (int a = 0; a < 3; a++)
                        for (int b = 0; b < 3; b++) {
                            ci[n] = q[a];
                            cj[n] = q[b];
                            ri[n] = q[a];
                            rj[n] = q[b];
                            v[n] = a == b ? 1.0 : -0.5;
                            v2[n] = 2.0 * v[n] + 1e-3 * (double)(e % 13);
                            n++;
                        }
                }
    }
    lo = nodes * (uint64_t)me / (uint64_t)size;
    hi = nodes * (uint64_t)(me + 1) / (uint64_t)size;
    for (int r = 0; r < reps; r++) {
        const uint64_t shape[2] = {nodes, nodes};
        const void *dims[2] = {ri, rj};
        hurray_triplets t;
        hurray_coo *mine = NULL;
        hurray_mpi_plan *plan = NULL;
        size_t vb = 0;
        void *out;
        double t0;
        memset(&t, 0, sizeof t);
        t.rank = 2;
        t.shape = shape;
        t.n = n;
        t.index_type = HURRAY_INDEX_INT64;
        t.dim_indices = dims;
        t.dim_indices_bytes = n * 8;
        t.type_tag = HURRAY_TYPE_FLOAT64;
        t.values = v;
        t.values_bytes = n * 8;
        MPI_Barrier(PETSC_COMM_WORLD);
        t0 = now();
        if (hurray_mpi_assemble(&t, HURRAY_DUP_SUM, 0, HURRAY_MPI_ROWS_EQUAL, NULL,
                                PETSC_COMM_WORLD, &mine, &plan) != HURRAY_OK) {
            fprintf(stderr, "%s\n", hurray_mpi_last_error_message());
            return 1;
        }
        best[0] = fmin(best[0], slowest(now() - t0));
        (void)hurray_coo_values(mine, &vb);
        out = malloc(vb);
        /* A solver re-assembles into the same buffer every time step (as
         * PETSc writes into its matrix's storage): touched once before. */
        memset(out, 0, vb);
        hurray_mpi_plan_apply(plan, v2, n * 8, out, vb);
        MPI_Barrier(PETSC_COMM_WORLD);
        t0 = now();
        hurray_mpi_plan_apply(plan, v2, n * 8, out, vb);
        best[1] = fmin(best[1], slowest(now() - t0));
        bytes = hurray_mpi_plan_bytes_sent(plan);
        /* Into a PETSc Mat through the CSR export. */
        {
            const uint32_t it = sizeof(PetscInt) == 4 ? HURRAY_INDEX_INT32 : HURRAY_INDEX_INT64;
            size_t ob = 0, ib = 0, cb = 0;
            PetscInt *ia, *ja;
            PetscScalar *a;
            Mat A;
            hurray_coo *again = NULL;
            hurray_mpi_plan_free(plan);
            hurray_coo_free(mine);
            MPI_Barrier(PETSC_COMM_WORLD);
            t0 = now();
            hurray_mpi_assemble(&t, HURRAY_DUP_SUM, 0, HURRAY_MPI_ROWS_EQUAL, NULL,
                                PETSC_COMM_WORLD, &again, NULL);
            bench_csr_size(again, it, &ob, &ib, &cb);
            ia = malloc(ob);
            ja = malloc(ib);
            a = malloc(cb);
            bench_export_csr(again, it, ia, ob, ja, ib, a, cb, 1);
            PetscCall(MatCreateMPIAIJWithArrays(PETSC_COMM_WORLD, (PetscInt)(hi - lo),
                                                (PetscInt)(hi - lo), (PetscInt)nodes,
                                                (PetscInt)nodes, ia, ja, a, &A));
            best[2] = fmin(best[2], slowest(now() - t0));
            PetscCall(MatDestroy(&A));
            free(ia);
            free(ja);
            free(a);
            hurray_coo_free(again);
        }
        /* PETSc's COO path. */
        {
            Mat A;
            MPI_Barrier(PETSC_COMM_WORLD);
            t0 = now();
            PetscCall(MatCreate(PETSC_COMM_WORLD, &A));
            PetscCall(MatSetSizes(A, (PetscInt)(hi - lo), (PetscInt)(hi - lo), (PetscInt)nodes,
                                  (PetscInt)nodes));
            PetscCall(MatSetType(A, MATMPIAIJ));
            PetscCall(MatSetPreallocationCOO(A, (PetscCount)n, ci, cj));
            PetscCall(MatSetValuesCOO(A, v, INSERT_VALUES));
            best[3] = fmin(best[3], slowest(now() - t0));
            MPI_Barrier(PETSC_COMM_WORLD);
            t0 = now();
            PetscCall(MatSetValuesCOO(A, v2, INSERT_VALUES));
            best[4] = fmin(best[4], slowest(now() - t0));
            PetscCall(MatDestroy(&A));
        }
        free(out);
    }
    {
        uint64_t total_bytes = 0, total_n = 0;
        MPI_Allreduce(&bytes, &total_bytes, 1, MPI_UINT64_T, MPI_SUM, PETSC_COMM_WORLD);
        MPI_Allreduce(&n, &total_n, 1, MPI_UINT64_T, MPI_SUM, PETSC_COMM_WORLD);
        if (me == 0)
            printf("%d %llu %llu %.6f %.6f %.6f %.6f %.6f %llu\n", size,
                   (unsigned long long)nodes, (unsigned long long)total_n, best[0], best[1],
                   best[2], best[3], best[4], (unsigned long long)total_bytes);
    }
    PetscCall(PetscFinalize());
    return 0;
}
