/* Concurrency from C: one handle shared by several threads doing lookups
 * (the handle is immutable, so this needs no locking), thread-local error
 * messages, and free plus release callback on a thread other than the
 * creator's. */
#define _POSIX_C_SOURCE 200112L
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "alloc64.h"
#include "ctest.h"

#define DIM 64u
#define NTHREADS 8

typedef struct {
    const hurray_coo *coo;
    int failures;
    unsigned seed;
    hurray_statistics stats; /* single-threaded answers to compare with */
    uint8_t desc[256];
    size_t desc_len;
} worker_arg;

/* Entry (i, j) with (i + j) % 3 == 0 stores i * DIM + j. */
static void *worker(void *p) {
    worker_arg *a = p;
    int failures = 0;
    unsigned round, i, j;
    for (round = 0; round < 10; round++) {
        for (i = 0; i < DIM; i++) {
            for (j = 0; j < DIM; j++) {
                const uint64_t q[2] = {i, j};
                double d = -1;
                bool found = false;
                hurray_status st = hurray_coo_lookup_f64(a->coo, q, 2, &d, &found);
                bool want = (i + j) % 3 == 0;
                CHECK(st == HURRAY_OK);
                CHECK(found == want);
                CHECK(d == (want ? (double)(i * DIM + j) : 0.0));
            }
        }
        /* Whole-tensor reads agree with the single-threaded answers. */
        {
            hurray_statistics st;
            uint8_t desc[256];
            size_t n = 0;
            CHECK(hurray_coo_statistics(a->coo, &st) == HURRAY_OK);
            CHECK(st.computed_mask == a->stats.computed_mask && st.nnz == a->stats.nnz);
            CHECK(st.value_mean == a->stats.value_mean && st.value_max == a->stats.value_max);
            CHECK(hurray_coo_encode_descriptor(a->coo, HURRAY_DESCRIPTOR_STATISTICS_FULL, desc,
                                               sizeof desc, &n) == HURRAY_OK);
            CHECK(n == a->desc_len && memcmp(desc, a->desc, n) == 0);
        }
        /* Each thread's message is its own. */
        if ((a->seed + round) % 2 == 0) {
            const uint64_t bad[2] = {DIM, 0};
            double d;
            CHECK(hurray_coo_lookup_f64(a->coo, bad, 2, &d, NULL) ==
                  HURRAY_ERR_INDEX_OUT_OF_BOUNDS);
            CHECK(strstr(hurray_last_error_message(), "coordinate 64 in dimension 0") != NULL);
        } else {
            CHECK(hurray_coo_validate(a->coo, 1) == HURRAY_OK);
            CHECK(strcmp(hurray_last_error_message(), "") == 0);
        }
    }
    a->failures = failures;
    return NULL;
}

static int released;
static void on_release(void *ctx) {
    (void)ctx;
    released++;
}

static void *free_it(void *p) {
    hurray_coo_free(p);
    return NULL;
}

static int test_shared_handle_concurrent_lookups(void) {
    int failures = 0;
    uint64_t shape[2] = {DIM, DIM};
    uint64_t n = 0, i, j;
    double vals[DIM * DIM];
    uint64_t idx[2 * DIM * DIM];
    double *av;
    uint64_t *aidx;
    hurray_coo *coo = NULL;
    pthread_t th[NTHREADS];
    worker_arg args[NTHREADS];
    int t;

    for (i = 0; i < DIM; i++) {
        for (j = 0; j < DIM; j++) {
            if ((i + j) % 3 == 0) {
                vals[n] = (double)(i * DIM + j);
                idx[2 * n] = i;
                idx[2 * n + 1] = j;
                n++;
            }
        }
    }
    av = alloc64(vals, n * sizeof(double), 0);
    aidx = alloc64(idx, 2 * n * sizeof(uint64_t), 0);
    released = 0;
    CHECK(ctest_create_with(0x04, 2, shape, n, true, av, n * sizeof(double), aidx, 2 * n * sizeof(uint64_t), HURRAY_COO_INDEX, 1, on_release, NULL, NULL, NULL, &coo) == HURRAY_OK);
    for (t = 0; t < NTHREADS; t++) {
        args[t].coo = coo;
        args[t].failures = 0;
        args[t].seed = (unsigned)t;
        CHECK(hurray_coo_statistics(coo, &args[t].stats) == HURRAY_OK);
        CHECK(hurray_coo_encode_descriptor(coo, HURRAY_DESCRIPTOR_STATISTICS_FULL, args[t].desc,
                                           sizeof args[t].desc, &args[t].desc_len) == HURRAY_OK);
        CHECK(pthread_create(&th[t], NULL, worker, &args[t]) == 0);
    }
    for (t = 0; t < NTHREADS; t++) {
        CHECK(pthread_join(th[t], NULL) == 0);
        failures += args[t].failures;
    }
    /* Free from another thread: the release callback runs there, once. */
    {
        pthread_t f;
        CHECK(pthread_create(&f, NULL, free_it, coo) == 0);
        CHECK(pthread_join(f, NULL) == 0);
        CHECK(released == 1);
    }
    free64(av);
    free64(aidx);
    return failures;
}

/* The library's own threads: scattered triplets (rows far apart from one to
 * the next) assembled on two threads, which place them into shared buckets
 * at slots that never coincide. Under helgrind this shows the placement has
 * no data race; everywhere it checks that the result is one thread's. */
#define SC_ROWS 250000u
#define SC_COLS 50u
#define SC_N 140000u
static int test_assembly_threads_place_scattered_triplets(void) {
    int failures = 0;
    int32_t *rows = malloc(SC_N * sizeof *rows), *cols = malloc(SC_N * sizeof *cols);
    double *vals = malloc(SC_N * sizeof *vals);
    uint64_t shape[2] = {SC_ROWS, SC_COLS};
    const void *dims[2];
    uint64_t s = 88172645463325252u;
    uint32_t k;
    hurray_triplets t;
    hurray_coo *one = NULL, *two = NULL;
    if (rows == NULL || cols == NULL || vals == NULL) {
        free(rows);
        free(cols);
        free(vals);
        return 1;
    }
    dims[0] = rows;
    dims[1] = cols;
    for (k = 0; k < SC_N; k++) {
        ctest_next(&s);
        rows[k] = (int32_t)(s % SC_ROWS);
        cols[k] = (int32_t)((s >> 32) % SC_COLS);
        vals[k] = (double)(k % 1000) * 0.25 - 3.0;
    }
    t = ctest_triplets_i32_f64(shape, SC_N, dims, 0, vals);
    CHECK(hurray_coo_assemble(&t, CTEST_ASSEMBLY(HURRAY_DUP_SUM, 0, 1), &one, NULL) == HURRAY_OK);
    CHECK(hurray_coo_assemble(&t, CTEST_ASSEMBLY(HURRAY_DUP_SUM, 0, 2), &two, NULL) == HURRAY_OK);
    if (one != NULL && two != NULL) {
        size_t b1 = 0, b2 = 0, v1 = 0, v2 = 0;
        const uint64_t *i1 = hurray_coo_indices(one, &b1), *i2 = hurray_coo_indices(two, &b2);
        const void *x1 = hurray_coo_values(one, &v1), *x2 = hurray_coo_values(two, &v2);
        CHECK(hurray_coo_nnz(one) == hurray_coo_nnz(two) && hurray_coo_nnz(one) > SC_N / 2);
        CHECK(b1 == b2 && i1 != NULL && i2 != NULL && memcmp(i1, i2, b1) == 0);
        CHECK(v1 == v2 && x1 != NULL && x2 != NULL && memcmp(x1, x2, v1) == 0);
    }
    hurray_coo_free(one);
    hurray_coo_free(two);
    free(rows);
    free(cols);
    free(vals);
    return failures;
}

/* The library keeps the threads it started for later calls: callers on
 * several threads at once share them, each call's parts on threads no other
 * call has at the same time (under helgrind: without a data race). */
#define CALLERS 3
static void *assemble_on_one_and_two(void *p) {
    int *failures = p;
    *failures = test_assembly_threads_place_scattered_triplets();
    return NULL;
}
static int test_callers_at_once_share_the_kept_threads(void) {
    int failures = 0, each[CALLERS] = {0};
    pthread_t t[CALLERS];
    int started[CALLERS] = {0};
    int i;
    for (i = 0; i < CALLERS; i++) {
        started[i] = pthread_create(&t[i], NULL, assemble_on_one_and_two, &each[i]) == 0;
        CHECK(started[i]);
    }
    for (i = 0; i < CALLERS; i++) {
        if (started[i]) {
            CHECK(pthread_join(t[i], NULL) == 0);
            CHECK(each[i] == 0);
        }
    }
    return failures;
}

/* A child forked after the library kept threads (which the child does not
 * have) starts its own: its two-thread call returns, and right. Without
 * that it would wait for a thread that is not there, until the alarm. */
static int test_a_forked_child_starts_its_own_threads(void) {
    int failures = 0, status = 0;
    pid_t pid;
    failures += test_assembly_threads_place_scattered_triplets();
    pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        const char *result;
        alarm(60);
        /* The exit status goes through exec of true or false: on a plain
         * exit, valgrind's leak check would count the parent's threads'
         * bookkeeping (not in the child's memory roots) as lost. */
        result = test_assembly_threads_place_scattered_triplets() == 0 ? "/bin/true" : "/bin/false";
        execl(result, result, (char *)NULL);
        _exit(2);
    }
    if (pid > 0) {
        CHECK(waitpid(pid, &status, 0) == pid);
        CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    return failures;
}

size_t ctest_threads_count(void);
const char *ctest_threads_name(size_t i);
int ctest_threads_run(size_t i);

size_t ctest_threads_count(void) { return 4; }
const char *ctest_threads_name(size_t i) {
    switch (i) {
    case 0:
        return "shared_handle_concurrent_lookups";
    case 1:
        return "assembly_threads_place_scattered_triplets";
    case 2:
        return "callers_at_once_share_the_kept_threads";
    case 3:
        return "a_forked_child_starts_its_own_threads";
    default:
        return NULL;
    }
}
int ctest_threads_run(size_t i) {
    switch (i) {
    case 0:
        return test_shared_handle_concurrent_lookups();
    case 1:
        return test_assembly_threads_place_scattered_triplets();
    case 2:
        return test_callers_at_once_share_the_kept_threads();
    case 3:
        return test_a_forked_child_starts_its_own_threads();
    default:
        return -1;
    }
}
