/* Reading the datasets written by `cargo bench --bench coo -- --export DIR`. */
#ifndef PEERS_COMMON_H
#define PEERS_COMMON_H
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct {
    int rank, sorted;
    uint64_t nnz, shape[8];
    uint64_t *idx; /* nnz * rank */
    double *val;   /* nnz */
    uint64_t *q;   /* nq * rank, or NULL */
    uint64_t nq;
} dataset;

static void *slurp(const char *path, uint64_t *bytes) {
    FILE *f = fopen(path, "rb");
    void *p;
    long n;
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    p = malloc((size_t)n + 1);
    if (fread(p, 1, (size_t)n, f) != (size_t)n) { fclose(f); free(p); return NULL; }
    fclose(f);
    *bytes = (uint64_t)n;
    return p;
}

static int load(const char *dir, const char *id, dataset *d) {
    char path[4096];
    uint64_t bytes;
    char *meta;
    int k, off = 0;
    snprintf(path, sizeof path, "%s/%s.meta", dir, id);
    meta = (char *)slurp(path, &bytes);
    if (!meta) return -1;
    meta[bytes] = 0;
    sscanf(meta, "%d %lu %d%n", &d->rank, (unsigned long *)&d->nnz, &d->sorted, &off);
    for (k = 0; k < d->rank && k < 8; k++) {
        int used = 0;
        sscanf(meta + off, "%lu%n", (unsigned long *)&d->shape[k], &used);
        off += used;
    }
    free(meta);
    snprintf(path, sizeof path, "%s/%s.idx", dir, id);
    d->idx = (uint64_t *)slurp(path, &bytes);
    snprintf(path, sizeof path, "%s/%s.val", dir, id);
    d->val = (double *)slurp(path, &bytes);
    snprintf(path, sizeof path, "%s/%s.q", dir, id);
    d->q = (uint64_t *)slurp(path, &bytes);
    d->nq = d->q ? bytes / 8 / (uint64_t)d->rank : 0;
    return d->idx && d->val ? 0 : -1;
}

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median3(double a, double b, double c) {
    double v[3] = {a, b, c};
    qsort(v, 3, sizeof v[0], cmp_double);
    return v[1];
}
#endif
