/* libhurray_coo through its C header, on the exported datasets: what a C
 * caller gets (one call per query, a panic barrier and NULL checks per
 * call), beside the C streaming baseline over the same index bytes.
 *   validate       hurray_coo_create, strict (all rules), borrowed buffers
 *   validate2      the same, hurray_coo_create with 2 threads in its options
 *   lookup         1M hurray_coo_lookup_f64, sorted handle, no index
 *   lookup_first   the first 1M of those on a fresh handle: the search
 *                  directory built by the first lookup is included (median
 *                  of three fresh handles)
 *   lookup_index   the same on a handle with HURRAY_COO_INDEX
 *   lookup_values  the same with HURRAY_COO_INDEX_VALUES (values beside keys)
 *   probe          1M hurray_coo_probe_f64 (hurray_coo_probe.h, inlined here)
 *                  through the handle's hurray_coo_lookup_view, no index
 *   probe_index    the same on the HURRAY_COO_INDEX handle
 *   batch_random   hurray_coo_lookup_batch (index), 1 thread; batch_random2: 2
 *   batch_values   the same with HURRAY_COO_INDEX_VALUES; batch_values2: 2
 *   c-stream       a C sum of the index bytes (gcc -O3 -march=native), timed
 *                  right after each validate run
 * Median of 3, milliseconds, as the other peers print; the batch rows take
 * 5, and the validate rows and the stream HURRAY_VALIDATE_REPS repetitions
 * when set. The 1- and 2-thread runs of the validate and batch rows
 * alternate run by run (their ratio is a target). Also, to stderr, the
 * fixed cost of a call in ns (hurray_coo_nnz; a lookup on a 1-entry tensor). */
#include "common.h" /* first: it sets _POSIX_C_SOURCE */

#include "hurray_coo.h"
#include "hurray_coo_probe.h"
#include "create.h"
#include "stream.h"

static void *aligned_copy(const void *src, size_t n) {
    void *p = NULL;
    if (posix_memalign(&p, 64, n ? n : 64) != 0) return NULL;
    memcpy(p, src, n);
    return p;
}


enum { MAX_REPS = 101 };

/* One hurray_coo_lookup_f64 per query of d, timed (ms); the values found
 * are added to *total. */
static double time_lookups(const hurray_coo *h, const dataset *d, double *total) {
    double x = 0;
    bool found = false;
    double s = now_ms();
    for (uint64_t k = 0; k < d->nq; k++) {
        hurray_coo_lookup_f64(h, d->q + k * (uint64_t)d->rank, (uint32_t)d->rank, &x, &found);
        *total += x;
    }
    return now_ms() - s;
}

static double median(double *t, int n) {
    qsort(t, (size_t)n, sizeof t[0], cmp_double);
    return n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2;
}

int main(int argc, char **argv) {
    /* Repetitions of the validate rows (HURRAY_VALIDATE_REPS, 1 to 101). */
    const char *env = getenv("HURRAY_VALIDATE_REPS");
    int reps = env ? atoi(env) : 3;
    if (reps < 1 || reps > MAX_REPS) reps = 3;
    for (int a = 2; a < argc; a++) {
        dataset d;
        double t[3];
        uint64_t *idx;
        double *val;
        size_t ib, vb;
        if (load(argv[1], argv[a], &d) != 0) continue;
        ib = d.nnz * (size_t)d.rank * 8;
        vb = d.nnz * 8;
        idx = aligned_copy(d.idx, ib);
        val = aligned_copy(d.val, vb);
        double tv[2 * MAX_REPS], tc[2][MAX_REPS], ts[2][MAX_REPS];
        /* One run of each thread count first, untimed (page faults of the
         * scratch memory, clock ramp-up), as the other rows get from their
         * warm-up. */
        for (uint32_t th = 1; th <= 2; th++) {
            hurray_coo *h = NULL;
            bench_create(HURRAY_TYPE_FLOAT64, (uint32_t)d.rank, d.shape, d.nnz, d.sorted, val, vb, idx, ib, 0, th, &h);
            hurray_coo_free(h);
        }
        /* Each repetition times our create on 1 thread, then on 2, each
         * followed by the C stream: the ratios of the medians are of runs
         * side by side, and a change in the machine's state between
         * repetitions touches both thread counts alike. */
        for (int r = 0; r < reps; r++) {
            for (uint32_t th = 1; th <= 2; th++) {
                hurray_coo *h = NULL;
                double s = now_ms();
                hurray_status st =
                    bench_create(HURRAY_TYPE_FLOAT64, (uint32_t)d.rank, d.shape, d.nnz, d.sorted, val, vb, idx, ib, 0, th, &h);
                tc[th - 1][r] = now_ms() - s;
                if (st != HURRAY_OK)
                    fprintf(stderr, "%s: %s\n", argv[a], hurray_last_error_message());
                hurray_coo_free(h);
                s = now_ms();
                sink = sum(idx, ib / 8);
                ts[th - 1][r] = now_ms() - s;
            }
        }
        printf("ours\tvalidate\t%s\t%.4f\n", argv[a], median(tc[0], reps));
        printf("ours\tvalidate2\t%s\t%.4f\n", argv[a], median(tc[1], reps));
        {
            /* The stream's runs beside both thread counts. */
            for (int r = 0; r < reps; r++) tv[r] = ts[0][r], tv[reps + r] = ts[1][r];
            printf("c-stream\tvalidate\t%s\t%.4f\n", argv[a], median(tv, 2 * reps));
        }
        if (d.q) {
            const uint32_t flags[3] = {0, HURRAY_COO_INDEX, HURRAY_COO_INDEX_VALUES};
            const char *names[3] = {"lookup", "lookup_index", "lookup_values"};
            const char *batch1[3] = {"", "batch_random", "batch_values"};
            const char *batch2[3] = {"", "batch_random2", "batch_values2"};
            for (int f = 0; f < 3; f++) {
                hurray_coo *h = NULL;
                double x = 0, total = 0;
                bool found = false;
                bench_create(HURRAY_TYPE_FLOAT64, (uint32_t)d.rank, d.shape, d.nnz, d.sorted, val, vb, idx, ib, flags[f], 1, &h);
                for (int r = 0; r < 3; r++) t[r] = time_lookups(h, &d, &total);
                sink = (uint64_t)total;
                printf("ours\t%s\t%s\t%.4f\n", names[f], argv[a], median3(t[0], t[1], t[2]));
                if (f == 0) {
                    /* The first use, on two more fresh handles: one sample
                     * moved by a factor of two between runs. */
                    double first[3] = {t[0], 0, 0};
                    for (int r = 1; r < 3; r++) {
                        hurray_coo *fresh = NULL;
                        bench_create(HURRAY_TYPE_FLOAT64, (uint32_t)d.rank, d.shape, d.nnz, d.sorted, val, vb,
                                     idx, ib, 0, 1, &fresh);
                        first[r] = time_lookups(fresh, &d, &total);
                        hurray_coo_free(fresh);
                    }
                    sink = (uint64_t)total;
                    printf("ours\tlookup_first\t%s\t%.4f\n", argv[a], median3(first[0], first[1], first[2]));
                }
                if (f <= 1) {
                    hurray_lookup_view v;
                    memset(&v, 0, sizeof v);
                    v.size = sizeof v;
                    if (hurray_coo_lookup_view(h, &v) != HURRAY_OK)
                        fprintf(stderr, "%s: %s\n", argv[a], hurray_last_error_message());
                    for (int r = 0; r < 3; r++) {
                        double s = now_ms();
                        for (uint64_t k = 0; k < d.nq; k++) {
                            hurray_coo_probe_f64(&v, d.q + k * (uint64_t)d.rank, (uint32_t)d.rank,
                                                 &x, &found);
                            total += x;
                        }
                        t[r] = now_ms() - s;
                    }
                    sink = (uint64_t)total;
                    printf("ours\t%s\t%s\t%.4f\n", f == 0 ? "probe" : "probe_index", argv[a],
                           median3(t[0], t[1], t[2]));
                }
                if (f >= 1) {
                    /* 1 and 2 threads alternated call by call (their ratio
                     * is a target), five calls each. */
                    double *out = malloc(d.nq * sizeof *out), tb[2][5];
                    for (int r = 0; r < 5; r++) {
                        for (uint32_t th = 1; th <= 2; th++) {
                            double s = now_ms();
                            hurray_coo_lookup_batch(h, d.q, d.nq, (uint32_t)d.rank, out, NULL, th);
                            tb[th - 1][r] = now_ms() - s;
                        }
                    }
                    for (uint32_t th = 1; th <= 2; th++)
                        printf("ours\t%s\t%s\t%.4f\n", th == 1 ? batch1[f] : batch2[f], argv[a],
                               median(tb[th - 1], 5));
                    free(out);
                }
                hurray_coo_free(h);
            }
        }
        free(idx);
        free(val);
    }
    {
        /* The fixed cost of a call: 10M calls each. */
        static const double v1[8] = {1.0};
        static const uint64_t i1[2] = {0, 0};
        const uint64_t shape[2] = {4, 4}, q[2] = {0, 0};
        hurray_coo *h = NULL;
        void *vv = aligned_copy(v1, 8), *ii = aligned_copy(i1, 16);
        double x = 0, s, acc = 0;
        const uint64_t n = 10000000;
        uint64_t total = 0;
        bool found;
        bench_create(HURRAY_TYPE_FLOAT64, 2, shape, 1, true, vv, 8, ii, 16, 0, 1, &h);
        s = now_ms();
        for (uint64_t k = 0; k < n; k++) total += hurray_coo_nnz(h);
        fprintf(stderr, "call cost: hurray_coo_nnz %.2f ns/call", (now_ms() - s) * 1e6 / (double)n);
        s = now_ms();
        for (uint64_t k = 0; k < n; k++) {
            hurray_coo_lookup_f64(h, q, 2, &x, &found);
            acc += x;
        }
        fprintf(stderr, ", hurray_coo_lookup_f64 on a 1-entry tensor %.2f ns/call\n",
                (now_ms() - s) * 1e6 / (double)n);
        sink = total + (uint64_t)acc;
        hurray_coo_free(h);
        free(vv);
        free(ii);
    }
    return 0;
}
