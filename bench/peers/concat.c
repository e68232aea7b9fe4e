/* How hurray_coo_concat grows with the number of shards (issue 19, item
 * 18): a k x 4 matrix with one entry per row, cut into k row-block shards
 * by hurray_coo_partition, joined again; prints the time of the concat
 * call alone. No peer: this is a scaling check (the pairwise box check it
 * replaced took 0.38 s at 8,192 shards and 24 s at 65,536). */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "hurray_coo.h"
#include "create.h"
int main(int argc, char **argv) {
    uint32_t k = (uint32_t)atoi(argv[1]);
    uint64_t shape[2] = {k, 4};
    double *v = aligned_alloc(64, ((k * 8 + 63) / 64) * 64);
    uint64_t *ix = aligned_alloc(64, ((k * 16 + 63) / 64) * 64);
    for (uint32_t i = 0; i < k; i++) { v[i] = i; ix[2 * i] = i; ix[2 * i + 1] = i % 4; }
    hurray_coo *c = NULL, *j = NULL;
    if (bench_create(HURRAY_TYPE_FLOAT64, 2, shape, k, true, v, k * 8, ix, k * 16, 0, 1, &c)) return 1;
    hurray_coo **parts = malloc(k * sizeof *parts);
    if (hurray_coo_partition(c, HURRAY_PARTITION_EQUAL_ROWS, k, NULL, parts)) { fprintf(stderr, "%s\n", hurray_last_error_message()); return 1; }
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    if (hurray_coo_concat((const hurray_coo *const *)parts, k, &j)) { fprintf(stderr, "%s\n", hurray_last_error_message()); return 1; }
    clock_gettime(CLOCK_MONOTONIC, &b);
    printf("%u shards: concat %.4f s, nnz %llu\n", k, (b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) * 1e-9, (unsigned long long)hurray_coo_nnz(j));
    return 0;
}
