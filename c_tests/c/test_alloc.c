/* Allocation failure: with the address space capped just above what is
 * mapped, COPY mode and duplicate detection must report HURRAY_ERR_ALLOC
 * instead of aborting, and the process must go on working. Runs in a forked
 * child so the cap does not touch the test runner. Skipped under valgrind
 * and sanitizers (they reserve address space of their own). */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "alloc64.h"
#include "ctest.h"

#define N ((uint64_t)8 << 20) /* 8 Mi entries: 64 MiB of values, 64 MiB of indices */

static long mapped_bytes(void) {
    long pages = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f == NULL) {
        return -1;
    }
    if (fscanf(f, "%ld", &pages) != 1) {
        pages = -1;
    }
    fclose(f);
    return pages < 0 ? -1 : pages * sysconf(_SC_PAGESIZE);
}

static int child(void) {
    int failures = 0;
    const uint64_t shape[1] = {N};
    const uint64_t wide[1] = {(uint64_t)1 << 47};
    double *values = alloc64(NULL, N * sizeof(double), 0);
    uint64_t *indices = alloc64(NULL, N * sizeof(uint64_t), 0);
    hurray_coo *coo = (hurray_coo *)(uintptr_t)1;
    struct rlimit lim;
    uint64_t i;
    long now;
    if (values == NULL || indices == NULL) {
        return 100;
    }
    for (i = 0; i < N; i++) {
        indices[i] = i;
        values[i] = (double)i;
    }
    now = mapped_bytes();
    if (now <= 0) {
        return 101;
    }
    lim.rlim_cur = lim.rlim_max = (rlim_t)now + (rlim_t)(24u << 20);
    if (setrlimit(RLIMIT_AS, &lim) != 0) {
        return 102;
    }
    CHECK_STATUS(ctest_create(0x04, 1, shape, N, true, values, N * 8, indices, N * 8, HURRAY_COO_COPY, &coo),
                 HURRAY_ERR_ALLOC, "the values copy");
    CHECK(coo == NULL);
    /* Unsorted and out of order (ordered data needs no sort, hence no
     * memory): duplicate detection over keys of 47 bits needs about 9 bytes
     * per entry (72 MiB). (A narrower shape, up to 46 bits at this count,
     * takes the 4-byte pass first, 36 MiB, which glibc may place inside the
     * 64 MiB its thread arena already reserved: no new address space, so
     * the cap cannot refuse it.) */
    indices[0] = 1;
    indices[1] = 0;
    CHECK_STATUS(ctest_create(0x04, 1, wide, N, false, values, N * 8, indices, N * 8, 0, &coo),
                 HURRAY_ERR_ALLOC, "duplicate detection");
    CHECK(coo == NULL);
    indices[0] = 0;
    indices[1] = 1;
    /* In order but not flagged sorted: proven duplicate-free without memory. */
    CHECK_STATUS(ctest_create(0x04, 1, shape, N, false, values, N * 8, indices, N * 8, 0, &coo),
                 HURRAY_OK, "");
    hurray_coo_free(coo);
    /* Sorted validation needs no memory: it still works under the cap. */
    CHECK_STATUS(ctest_create(0x04, 1, shape, N, true, values, N * 8, indices, N * 8, 0, &coo),
                 HURRAY_OK, "");
    {
        const uint64_t q[1] = {N - 1};
        double d = 0;
        CHECK(hurray_coo_lookup_f64(coo, q, 1, &d, NULL) == HURRAY_OK && d == (double)(N - 1));
    }
    hurray_coo_free(coo);
    return failures;
}

int ctest_alloc_failure(void);

int ctest_alloc_failure(void) {
    pid_t pid;
    int status = 0;
    if (getenv("HURRAY_SKIP_RLIMIT_TESTS") != NULL) {
        fprintf(stderr, "ctest alloc_failure: skipped (HURRAY_SKIP_RLIMIT_TESTS)\n");
        return 0;
    }
    pid = fork();
    if (pid < 0) {
        return 1;
    }
    if (pid == 0) {
        _exit(child());
    }
    if (waitpid(pid, &status, 0) != pid) {
        return 1;
    }
    if (!WIFEXITED(status)) {
        fprintf(stderr, "alloc_failure child died (signal %d)\n",
                WIFSIGNALED(status) ? WTERMSIG(status) : 0);
        return 1;
    }
    if (WEXITSTATUS(status) != 0) {
        fprintf(stderr, "alloc_failure child: %d failed checks (or setup error >= 100)\n",
                WEXITSTATUS(status));
    }
    return WEXITSTATUS(status);
}
