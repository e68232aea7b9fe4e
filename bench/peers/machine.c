/* What one and two threads get from this machine, with no library code:
 * the bounds that the "2 threads >= 1.7x one" targets of issues 21 and 23
 * meet on a memory-bound operation.
 *
 *   read     a vectorised sum of an array (one streaming read)
 *   copy     b[i] = a[i] + 1 (a streaming read and write)
 *   scatter  each element's hashed key written to the end of one of 512
 *            buckets (the unsorted check's first pass, in C)
 *   compute  an integer recurrence in registers (no memory at all)
 *
 * Each at two sizes: 16 MiB per array (within this machine's L3 for the
 * read) and 256 MiB (main memory). Threads are started once per timed run
 * and split the work in contiguous halves, as the library's threads do.
 * Medians of 15 runs each, 1 and 2 threads alternated run by run; prints
 * ms for 1 and 2 threads and their ratio.
 *
 * Build and run: bench/peers/machine.sh. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

enum kind { READ, COPY, SCATTER, COMPUTE };
static const char *names[] = {"read", "copy", "scatter", "compute"};

struct job {
    enum kind kind;
    const uint64_t *a;
    uint64_t *b;
    size_t lo, hi, n;
    uint64_t result;
};

#define BUCKETS 512

static void *work(void *p) {
    struct job *j = p;
    uint64_t s = 0;
    switch (j->kind) {
    case READ:
        for (size_t i = j->lo; i < j->hi; i++) s += j->a[i];
        break;
    case COPY:
        for (size_t i = j->lo; i < j->hi; i++) j->b[i] = j->a[i] + 1;
        break;
    case SCATTER: {
        /* Buckets of this half's own, in this half's part of b. */
        size_t len = j->hi - j->lo, cap = len / BUCKETS * 5 / 4 + 64;
        size_t *end = malloc(BUCKETS * sizeof *end);
        if (!end || cap * BUCKETS > len * 2) { free(end); break; }
        uint64_t *out = j->b + 2 * j->lo;
        for (size_t k = 0; k < BUCKETS; k++) end[k] = k * cap;
        for (size_t i = j->lo; i < j->hi; i++) {
            uint64_t h = j->a[i] * 0x9E3779B97F4A7C15ull;
            size_t k = (size_t)(h >> 55);
            if (end[k] < (k + 1) * cap) out[end[k]++] = (h << 20) | (i & 0xFFFFF);
        }
        for (size_t k = 0; k < BUCKETS; k++) s += end[k];
        free(end);
        break;
    }
    case COMPUTE: {
        uint64_t x = j->lo + 1;
        for (size_t i = j->lo; i < j->hi; i++) {
            x = x * 6364136223846793005ull + 1442695040888963407ull;
            s += x >> 33;
        }
        break;
    }
    }
    j->result = s;
    return NULL;
}

static int cmp(const void *x, const void *y) {
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* One timed run of `kind` on `threads` threads (1 or 2). */
static double once(enum kind kind, const uint64_t *a, uint64_t *b, size_t n, int threads) {
    static volatile uint64_t sink;
    struct job jobs[2];
    pthread_t tid;
    double s = now_ms();
    for (int k = 0; k < threads; k++)
        jobs[k] = (struct job){kind, a, b, n * k / threads, n * (k + 1) / threads, n, 0};
    int spawned = threads == 2 && pthread_create(&tid, NULL, work, &jobs[1]) == 0;
    work(&jobs[0]);
    if (threads == 2) {
        if (spawned)
            pthread_join(tid, NULL);
        else
            work(&jobs[1]);
    }
    double t = now_ms() - s;
    for (int k = 0; k < threads; k++) sink += jobs[k].result;
    return t;
}

#define RUNS 15

/* Medians of RUNS runs on 1 and on 2 threads, alternated run by run (so
 * that a change in the machine's state between runs touches both). */
static void run(enum kind kind, const uint64_t *a, uint64_t *b, size_t n, double *one, double *two) {
    double t1[RUNS], t2[RUNS];
    once(kind, a, b, n, 1);
    for (int r = 0; r < RUNS; r++) {
        t1[r] = once(kind, a, b, n, 1);
        t2[r] = once(kind, a, b, n, 2);
    }
    qsort(t1, RUNS, sizeof t1[0], cmp);
    qsort(t2, RUNS, sizeof t2[0], cmp);
    *one = t1[RUNS / 2];
    *two = t2[RUNS / 2];
}

int main(void) {
    const size_t sizes[] = {16u << 20, 256u << 20};
    printf("| what | bytes per array | 1 thread ms | 2 threads ms | 2 threads / 1 |\n|---|---|---|---|---|\n");
    for (int z = 0; z < 2; z++) {
        size_t n = sizes[z] / 8;
        uint64_t *a = aligned_alloc(64, n * 8), *b = aligned_alloc(64, n * 16);
        if (!a || !b) return 1;
        for (size_t i = 0; i < n; i++) a[i] = i * 0x2545F4914F6CDD1Dull;
        memset(b, 0, n * 16);
        for (int k = READ; k <= COMPUTE; k++) {
            double one, two;
            run(k, a, b, n, &one, &two);
            printf("| %s | %zu MiB | %.2f | %.2f | %.2f |\n", names[k], sizes[z] >> 20, one, two, one / two);
        }
        free(a);
        free(b);
    }
    return 0;
}
