// Assembly, re-assembly and CSR export through libhurray_coo's C ABI, against
// the peers a solver author would pick, on the same triplets in one process:
// Eigen setFromTriplets, GraphBLAS GrB_Matrix_build (PLUS, one thread), PETSc
// 3.18 MatSetPreallocationCOO + MatSetValuesCOO (values only:
// MatSetValuesCOO), a -O3 -march=native C loop for re-assembly through a
// precomputed map, and a streaming copy of the same bytes (numpy and scipy
// run in bench/peers/assembly_numpy.py). Build and run with
// bench/peers/assembly.sh.
//
// Data: the P1 element matrices of an M x M square mesh (two triangles per
// square, nine triplets each, each interior node shared by six triangles),
// in element order ("fem"), randomly permuted ("permuted"), and the
// assembled entries in row order without duplicates ("sorted").
extern "C" {
#include <GraphBLAS.h>
}
#include <petscmat.h>

#include <Eigen/Sparse>
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <vector>

#include "hurray_coo.h"
#include "create.h"

namespace {

double now() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

// Median wall time of `reps` runs of f, in seconds.
double median(int reps, const std::function<void()> &f) {
    std::vector<double> t;
    for (int r = 0; r < reps; r++) {
        double t0 = now();
        f();
        t.push_back(now() - t0);
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

struct Triplets {
    std::vector<int32_t> i, j;
    std::vector<double> v;
    uint64_t n = 0;  // matrix order
};

Triplets fem(int m) {
    Triplets t;
    t.n = uint64_t(m + 1) * uint64_t(m + 1);
    const double k[9] = {1, -0.5, -0.5, -0.5, 0.5, 0, -0.5, 0, 0.5};
    for (int a = 0; a < m; a++)
        for (int b = 0; b < m; b++)
            for (int half = 0; half < 2; half++) {
                int n0 = a * (m + 1) + b;
                int tri[3] = {half ? n0 + m + 2 : n0, half ? n0 + m + 1 : n0 + 1,
                              half ? n0 + 1 : n0 + m + 1};
                for (int q = 0; q < 9; q++) {
                    t.i.push_back(tri[q / 3]);
                    t.j.push_back(tri[q % 3]);
                    t.v.push_back(k[q] + 1e-3 * (q % 4 == 0 ? 2.0 : 1.0));
                }
            }
    return t;
}

volatile double sink;

void row(const char *what, double ours, const char *peer, double theirs) {
    std::printf("| %-44s | %9.2f | %-34s | %9.2f | %6.2fx |\n", what, ours * 1e3, peer,
                theirs * 1e3, theirs / ours);
}

/* The C structs over t (they point into t and into this object). */
struct Call {
    uint64_t shape[2];
    const void *dims[2];
    hurray_triplets tr{};
    hurray_assemble_options o{};
    Call(const Triplets &t, uint32_t threads) : shape{t.n, t.n}, dims{t.i.data(), t.j.data()} {
        tr.rank = 2;
        tr.shape = shape;
        tr.n = t.v.size();
        tr.index_type = HURRAY_INDEX_INT32;
        tr.dim_indices = dims;
        tr.dim_indices_bytes = t.i.size() * sizeof(int32_t);
        tr.type_tag = HURRAY_TYPE_FLOAT64;
        tr.values = t.v.data();
        tr.values_bytes = t.v.size() * sizeof(double);
        o.size = sizeof o;
        o.duplicates_policy = HURRAY_DUP_SUM;
        o.threads = threads;
    }
};

hurray_coo *assemble(const Triplets &t, uint32_t threads, hurray_assembly_plan **plan) {
    Call call(t, threads);
    hurray_coo *h = nullptr;
    if (hurray_coo_assemble(&call.tr, &call.o, &h, plan) != HURRAY_OK) {
        std::fprintf(stderr, "assemble: %s\n", hurray_last_error_message());
        std::exit(1);
    }
    return h;
}

/* Triplets straight into int32 CSR (hurray_assemble_compressed), into
   arrays allocated in the timed region as Eigen allocates its own: room for
   every triplet, of which only the result's pages are touched. With `keep`,
   into the arrays `keep` holds instead (allocated on its first call), as a
   solver that assembles every step into the same arrays does. */
struct Kept {
    void *offsets = nullptr, *indices = nullptr, *values = nullptr;
    ~Kept() {
        std::free(offsets);
        std::free(indices);
        std::free(values);
    }
};

void assemble_csr(const Triplets &t, uint32_t threads, Kept *keep = nullptr, uint32_t flags = 0) {
    Call call(t, threads);
    call.o.flags = flags;
    hurray_compressed c{};
    c.format = HURRAY_FORMAT_CSR;
    c.index_type = HURRAY_INDEX_INT32;
    c.offsets_bytes = (t.n + 1) * sizeof(int32_t);
    c.indices_bytes = t.v.size() * sizeof(int32_t);
    c.values_bytes = t.v.size() * sizeof(double);
    if (keep && keep->offsets) {
        c.offsets = keep->offsets;
        c.indices = keep->indices;
        c.values = keep->values;
    } else {
        c.offsets = std::malloc(c.offsets_bytes);
        c.indices = std::malloc(c.indices_bytes);
        c.values = std::malloc(c.values_bytes);
    }
    uint64_t nnz = 0;
    if (hurray_assemble_compressed(&call.tr, &call.o, &c, &nnz, nullptr) != HURRAY_OK) {
        std::fprintf(stderr, "assemble_compressed: %s\n", hurray_last_error_message());
        std::exit(1);
    }
    sink = static_cast<double *>(c.values)[nnz / 2];
    if (keep) {
        keep->offsets = c.offsets;
        keep->indices = c.indices;
        keep->values = c.values;
    } else {
        std::free(c.offsets);
        std::free(c.indices);
        std::free(c.values);
    }
}

void bench_input(const char *name, const Triplets &t, int reps) {
    size_t n = t.v.size();
    std::printf("\n%s: %zu triplets, order %llu\n\n", name, n, (unsigned long long)t.n);
    std::printf("| %-44s | %9s | %-34s | %9s | %7s |\n|---|---:|---|---:|---:|\n", "operation",
                "ours ms", "peer", "peer ms", "ratio");
    double ours1 = median(reps, [&] { hurray_coo_free(assemble(t, 1, nullptr)); });
    double ours2 = median(reps, [&] { hurray_coo_free(assemble(t, 2, nullptr)); });
    double csr1 = median(reps, [&] { assemble_csr(t, 1); });
    double csr2 = median(reps, [&] { assemble_csr(t, 2); });
    Kept kept;
    assemble_csr(t, 1, &kept);
    double csr_kept = median(reps, [&] { assemble_csr(t, 1, &kept); });
    /* The same, the room past the result lent as work space. */
    const uint32_t lend = HURRAY_ASSEMBLE_SCRATCH_IN_OUTPUT;
    double lent1 = median(reps, [&] { assemble_csr(t, 1, &kept, lend); });
    double lent2 = median(reps, [&] { assemble_csr(t, 2, &kept, lend); });
    std::vector<Eigen::Triplet<double, int>> et(n);
    for (size_t k = 0; k < n; k++) et[k] = {t.i[k], t.j[k], t.v[k]};
    double eigen = median(reps, [&] {
        Eigen::SparseMatrix<double, Eigen::RowMajor, int> A(int(t.n), int(t.n));
        A.setFromTriplets(et.begin(), et.end());
        sink = A.valuePtr()[0];
    });
    std::vector<GrB_Index> gi(t.i.begin(), t.i.end()), gj(t.j.begin(), t.j.end());
    double graphblas = median(reps, [&] {
        GrB_Matrix A;
        GrB_Matrix_new(&A, GrB_FP64, t.n, t.n);
        GrB_Matrix_build_FP64(A, gi.data(), gj.data(), t.v.data(), n, GrB_PLUS_FP64);
        GrB_Index nv;
        GrB_Matrix_nvals(&nv, A);  // finishes pending work
        GrB_Matrix_free(&A);
    });
    std::vector<PetscInt> pi(t.i.begin(), t.i.end()), pj(t.j.begin(), t.j.end());
    double petsc = median(reps, [&] {
        // MatSetPreallocationCOO may reorder its index arrays: give it copies.
        std::vector<PetscInt> ci(pi), cj(pj);
        Mat A;
        MatCreate(PETSC_COMM_SELF, &A);
        MatSetSizes(A, PetscInt(t.n), PetscInt(t.n), PetscInt(t.n), PetscInt(t.n));
        MatSetType(A, MATSEQAIJ);
        MatSetPreallocationCOO(A, PetscCount(n), ci.data(), cj.data());
        MatSetValuesCOO(A, t.v.data(), INSERT_VALUES);
        MatDestroy(&A);
    });
    std::vector<char> src(n * 16), dst(n * 16);
    double copy = median(reps, [&] {
        std::memcpy(dst.data(), src.data(), src.size());
        sink = dst[n];
    });
    row("assemble, SUM, 1 thread", ours1, "Eigen setFromTriplets", eigen);
    row("assemble, SUM, 1 thread", ours1, "GraphBLAS GrB_Matrix_build", graphblas);
    row("assemble, SUM, 1 thread", ours1, "PETSc PreallocationCOO+SetValuesCOO", petsc);
    row("assemble, SUM, 1 thread", ours1, "streaming copy of the 16 B/triplet", copy);
    row("assemble, SUM, 2 threads", ours2, "ours, 1 thread", ours1);
    row("into int32 CSR, SUM, 1 thread", csr1, "Eigen setFromTriplets", eigen);
    row("into int32 CSR, SUM, 1 thread", csr1, "GraphBLAS GrB_Matrix_build", graphblas);
    row("into int32 CSR, SUM, 1 thread", csr1, "PETSc PreallocationCOO+SetValuesCOO", petsc);
    row("into int32 CSR, SUM, 1 thread", csr1, "streaming copy of the 16 B/triplet", copy);
    row("into int32 CSR, SUM, 2 threads", csr2, "ours into CSR, 1 thread", csr1);
    row("into reused int32 CSR arrays, 1 thread", csr_kept, "Eigen setFromTriplets", eigen);
    row("into reused int32 CSR arrays, 1 thread", csr_kept, "streaming copy of the 16 B/triplet", copy);
    row("reused arrays, SCRATCH_IN_OUTPUT, 1 thread", lent1, "Eigen setFromTriplets", eigen);
    row("reused arrays, SCRATCH_IN_OUTPUT, 1 thread", lent1, "ours into reused arrays, no flag", csr_kept);
    row("reused arrays, SCRATCH_IN_OUTPUT, 2 threads", lent2, "ours, SCRATCH_IN_OUTPUT, 1 thread", lent1);
}

// Re-assembly of `t`'s values through our plan, against PETSc's
// MatSetValuesCOO on the same triplets, the C loop a solver would write with
// a precomputed map (out[map[k]] += v[k]), and a streaming copy of the
// values read.
void bench_reassembly(const char *name, const Triplets &t, int reps) {
    hurray_assembly_plan *plan = nullptr;
    hurray_coo *A = assemble(t, 1, &plan);
    size_t n = t.v.size(), nnz = size_t(hurray_coo_nnz(A));
    std::printf("\nre-assembly, %s: %zu triplets, %zu entries\n\n", name, n, nnz);
    std::printf("| %-44s | %9s | %-34s | %9s | %7s |\n|---|---:|---|---:|---:|\n", "operation",
                "ours ms", "peer", "peer ms", "ratio");
    std::vector<double> out(nnz), out2(nnz), vals(t.v);
    for (auto &v : vals) v *= 1.5;
    double apply1 = median(reps, [&] {
        hurray_assembly_plan_apply(plan, vals.data(), n * 8, out.data(), nnz * 8, 1);
    });
    double apply2 = median(reps, [&] {
        hurray_assembly_plan_apply(plan, vals.data(), n * 8, out.data(), nnz * 8, 2);
    });
    // What building the plan adds to an assembly.
    double bare = median(reps, [&] { hurray_coo_free(assemble(t, 1, nullptr)); });
    double planned = median(reps, [&] {
        hurray_assembly_plan *p = nullptr;
        hurray_coo_free(assemble(t, 1, &p));
        hurray_assembly_plan_free(p);
    });
    // The peer's map: each triplet's canonical entry (from the CSR of A).
    std::vector<int32_t> rp(t.n + 1), ci(nnz);
    std::vector<double> cv(nnz);
    bench_export_csr(A, HURRAY_INDEX_INT32, rp.data(), rp.size() * 4, ci.data(), ci.size() * 4, cv.data(), cv.size() * 8, 1);
    std::vector<uint32_t> map(n);
    for (size_t k = 0; k < n; k++) {
        const int32_t *b = ci.data() + rp[t.i[k]], *e = ci.data() + rp[t.i[k] + 1];
        map[k] = uint32_t(std::lower_bound(b, e, t.j[k]) - ci.data());
    }
    double loop = median(reps, [&] {
        std::fill(out2.begin(), out2.end(), 0.0);
        for (size_t k = 0; k < n; k++) out2[map[k]] += vals[k];
        sink = out2[0];
    });
    // The fastest such loop: the map also marks each entry's first triplet,
    // which then writes the entry instead of adding to a cleared one (no
    // pass over the output first). It gives the plan's bits exactly.
    if (nnz >= 0x80000000u) {  // the top bit marks a first triplet
        std::fprintf(stderr, "first-write C loop: %zu entries need more than 31 bits\n", nnz);
        std::exit(1);
    }
    std::vector<uint32_t> first_map(map);
    {
        std::vector<char> seen(nnz, 0);
        for (size_t k = 0; k < n; k++) {
            if (!seen[map[k]]) first_map[k] |= 0x80000000u;
            seen[map[k]] = 1;
        }
    }
    std::vector<double> out3(nnz);
    double loop_first = median(reps, [&] {
        for (size_t k = 0; k < n; k++) {
            uint32_t f = first_map[k], e = f & 0x7fffffffu;
            out3[e] = (f >> 31) ? vals[k] : out3[e] + vals[k];
        }
        sink = out3[0];
    });
    double petsc_values;
    {
        std::vector<PetscInt> ci(t.i.begin(), t.i.end()), cj(t.j.begin(), t.j.end());
        Mat P;
        MatCreate(PETSC_COMM_SELF, &P);
        MatSetSizes(P, PetscInt(t.n), PetscInt(t.n), PetscInt(t.n), PetscInt(t.n));
        MatSetType(P, MATSEQAIJ);
        MatSetPreallocationCOO(P, PetscCount(n), ci.data(), cj.data());
        petsc_values = median(reps, [&] { MatSetValuesCOO(P, vals.data(), INSERT_VALUES); });
        MatDestroy(&P);
    }
    std::vector<char> src(n * 8), dst(n * 8);
    double copyv = median(reps, [&] {
        std::memcpy(dst.data(), src.data(), src.size());
        sink = dst[1];
    });
    row("re-assemble through the plan, 1 thread", apply1, "PETSc MatSetValuesCOO", petsc_values);
    row("re-assemble through the plan, 1 thread", apply1, "C loop out[map[k]] += v[k]", loop);
    row("re-assemble through the plan, 1 thread", apply1, "C loop, first triplet writes", loop_first);
    row("re-assemble through the plan, 1 thread", apply1, "streaming copy of the values", copyv);
    row("re-assemble through the plan, 2 threads", apply2, "ours, 1 thread", apply1);
    row("assemble with a plan, 1 thread", planned, "ours, no plan, 1 thread", bare);
    // The plan and the C loop must agree (the loop sums in triplet order too,
    // from +0.0, which differs from the plan only in the sign of a zero sum).
    double worst = 0;
    for (size_t k = 0; k < nnz; k++) worst = std::max(worst, std::abs(out[k] - out2[k]));
    std::printf("\nplan vs C loop: max difference %g\n", worst);
    if (std::memcmp(out.data(), out3.data(), nnz * 8) != 0) {
        std::fprintf(stderr, "plan and the first-write C loop differ\n");
        std::exit(1);
    }
    hurray_assembly_plan_free(plan);
    hurray_coo_free(A);
}

}  // namespace

int main(int argc, char **argv) {
    int m = argc > 1 ? std::atoi(argv[1]) : 300;
    int reps = argc > 2 ? std::atoi(argv[2]) : 5;
    PetscInitialize(&argc, &argv, nullptr, nullptr);
    GrB_init(GrB_NONBLOCKING);
    GxB_Global_Option_set(GxB_GLOBAL_NTHREADS, 1);
    // HURRAY_BENCH_ONLY=reassembly skips the assembly tables (for A/B runs).
    const char *only = std::getenv("HURRAY_BENCH_ONLY");
    bool all = !(only && std::strcmp(only, "reassembly") == 0);
    Triplets t = fem(m);
    if (all) bench_input("fem (element order)", t, reps);

    Triplets p = t;
    std::mt19937_64 rng(42);
    for (size_t k = p.v.size() - 1; k > 0; k--) {
        size_t r = rng() % (k + 1);
        std::swap(p.i[k], p.i[r]);
        std::swap(p.j[k], p.j[r]);
        std::swap(p.v[k], p.v[r]);
    }
    if (all) bench_input("permuted", p, reps);

    // The assembled entries, sorted and duplicate-free, as triplets.
    hurray_coo *A = assemble(t, 1, nullptr);
    Triplets s;
    s.n = t.n;
    size_t nb;
    const uint64_t *ix = hurray_coo_indices(A, &nb);
    const double *vx = static_cast<const double *>(hurray_coo_values(A, &nb));
    for (uint64_t k = 0; k < hurray_coo_nnz(A); k++) {
        s.i.push_back(int32_t(ix[2 * k]));
        s.j.push_back(int32_t(ix[2 * k + 1]));
        s.v.push_back(vx[k]);
    }
    if (all) bench_input("sorted, no duplicates", s, reps);

    // Re-assembly through the plan, of element-order and permuted triplets.
    bench_reassembly("fem (element order)", t, reps);
    bench_reassembly("permuted", p, reps);

    // CSR export of the canonical handle.
    size_t nnz = size_t(hurray_coo_nnz(A));
    std::printf("\nCSR export (%zu entries)\n\n", nnz);
    std::printf("| %-44s | %9s | %-34s | %9s | %7s |\n|---|---:|---|---:|---:|\n", "operation",
                "ours ms", "peer", "peer ms", "ratio");
    std::vector<double> cv(nnz);
    std::vector<int32_t> rp(t.n + 1), ci(nnz);
    double exp_csr = median(reps, [&] {
        bench_export_csr(A, HURRAY_INDEX_INT32, rp.data(), rp.size() * 4, ci.data(), ci.size() * 4, cv.data(), cv.size() * 8, 1);
    });
    double exp_csr2 = median(reps, [&] {
        bench_export_csr(A, HURRAY_INDEX_INT32, rp.data(), rp.size() * 4, ci.data(), ci.size() * 4, cv.data(), cv.size() * 8, 2);
    });
    std::vector<int64_t> rp64(t.n + 1), ci64(nnz);
    double exp_csr64 = median(reps, [&] {
        bench_export_csr(A, HURRAY_INDEX_INT64, rp64.data(), rp64.size() * 8, ci64.data(), ci64.size() * 8, cv.data(), cv.size() * 8, 1);
    });
    size_t out_bytes = rp.size() * 4 + ci.size() * 4 + cv.size() * 8;
    std::vector<char> csrc(out_bytes), cdst(out_bytes);
    double copyo = median(reps, [&] {
        std::memcpy(cdst.data(), csrc.data(), out_bytes);
        sink = cdst[1];
    });
    size_t out64 = rp64.size() * 8 + ci64.size() * 8 + cv.size() * 8;
    std::vector<char> csrc64(out64), cdst64(out64);
    double copyo64 = median(reps, [&] {
        std::memcpy(cdst64.data(), csrc64.data(), out64);
        sink = cdst64[1];
    });
    row("CSR export (int32, base 0)", exp_csr, "streaming copy of the output bytes", copyo);
    row("CSR export (int64, base 0)", exp_csr64, "streaming copy of the output bytes", copyo64);
    row("CSR export, 2 threads", exp_csr2, "ours, 1 thread", exp_csr);
    hurray_coo_free(A);
    GrB_finalize();
    PetscFinalize();
    return 0;
}
