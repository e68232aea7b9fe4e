/* Matrix Market read and write through the C ABI, timed as a C program
 * calls them: hurray_coo_read_mtx_file with 1 and 2 threads (file to
 * canonical handle: parse, sort, check), hurray_coo_write_mtx_file
 * (shortest round-trip text) with 1 and 2 threads. Best of `reps` runs each.
 *   text <reps> <file.mtx>...   prints: file op threads seconds
 * and, in a fresh process each, what a solver loading a matrix does: the
 * file read into a handle, then exported as int32 CSR, on `threads`:
 *   text csr <threads> <file.mtx>   prints: seconds peak-RSS-kB entries
 * and the same through hurray_read_mtx_compressed_size and
 * hurray_read_mtx_compressed (the file straight into CSR, no handle):
 *   text direct <threads> <file.mtx> */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hurray_coo.h"

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int fail(const char *what, hurray_status st) {
    fprintf(stderr, "%s: %s: %s\n", what, hurray_status_name(st), hurray_last_error_message());
    return 1;
}

/* This process's peak resident memory in kB: VmHWM, which starts afresh at
 * exec (getrusage's ru_maxrss keeps the parent's peak across fork and exec,
 * so a large parent would show through). */
static long peak_kb(void) {
    char line[256];
    long kb = -1;
    FILE *f = fopen("/proc/self/status", "r");
    if (!f) return -1;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "VmHWM: %ld kB", &kb) == 1) break;
    fclose(f);
    return kb;
}

/* File to int32 CSR, once: the time and the process's peak memory. */
static int csr_once(uint32_t threads, const char *path) {
    hurray_coo *coo = NULL;
    hurray_compressed c;
    hurray_text_options o = {sizeof(hurray_text_options), HURRAY_DUP_ERROR, 0, 0, 0, 0};
    hurray_status st;
    double t0 = now(), t;
    o.threads = threads;
    st = hurray_coo_read_mtx_file(path, &o, NULL, &coo);
    if (st != HURRAY_OK) return fail(path, st);
    memset(&c, 0, sizeof c);
    c.format = HURRAY_FORMAT_CSR;
    c.index_type = HURRAY_INDEX_INT32;
    st = hurray_coo_compressed_size(coo, &c);
    if (st != HURRAY_OK) return fail("compressed_size", st);
    c.offsets = malloc(c.offsets_bytes);
    c.indices = malloc(c.indices_bytes ? c.indices_bytes : 1);
    c.values = malloc(c.values_bytes ? c.values_bytes : 1);
    if (!c.offsets || !c.indices || !c.values) return 1;
    st = hurray_coo_export_compressed(coo, &c, threads);
    if (st != HURRAY_OK) return fail("export_compressed", st);
    t = now() - t0;
    printf("%.6f %ld %llu\n", t, peak_kb(), (unsigned long long)hurray_coo_nnz(coo));
    hurray_coo_free(coo);
    free(c.offsets);
    free(c.indices);
    free(c.values);
    return 0;
}

/* File straight into int32 CSR, once: room as the size call reports it
 * (malloc'd, so pages past the result are never touched, unless flags lets
 * the call work in them). */
static int direct_once(uint32_t threads, const char *path, uint32_t policy, uint32_t flags) {
    hurray_compressed c;
    hurray_text_options o = {sizeof(hurray_text_options), policy, flags, 0, 0, 0};
    hurray_status st;
    uint64_t nnz = 0;
    double t0 = now(), t;
    o.threads = threads;
    memset(&c, 0, sizeof c);
    c.format = HURRAY_FORMAT_CSR;
    c.index_type = HURRAY_INDEX_INT32;
    st = hurray_read_mtx_compressed_size(path, &o, &c, NULL, NULL);
    if (st != HURRAY_OK) return fail("read_mtx_compressed_size", st);
    c.offsets = malloc(c.offsets_bytes);
    c.indices = malloc(c.indices_bytes ? c.indices_bytes : 1);
    c.values = malloc(c.values_bytes ? c.values_bytes : 1);
    if (!c.offsets || !c.indices || !c.values) return 1;
    st = hurray_read_mtx_compressed(path, &o, &c, &nnz, NULL);
    if (st != HURRAY_OK) return fail(path, st);
    t = now() - t0;
    printf("%.6f %ld %llu\n", t, peak_kb(), (unsigned long long)nnz);
    free(c.offsets);
    free(c.indices);
    free(c.values);
    return 0;
}

int main(int argc, char **argv) {
    int reps, i, r;
    if (argc == 4 && strcmp(argv[1], "csr") == 0) return csr_once((uint32_t)atoi(argv[2]), argv[3]);
    if (argc == 4 && strcmp(argv[1], "direct") == 0)
        return direct_once((uint32_t)atoi(argv[2]), argv[3], HURRAY_DUP_ERROR, 0);
    /* An assembled file (duplicates summed), without and with the room. */
    if (argc == 4 && strcmp(argv[1], "sum") == 0)
        return direct_once((uint32_t)atoi(argv[2]), argv[3], HURRAY_DUP_SUM, 0);
    if (argc == 4 && strcmp(argv[1], "sum-room") == 0)
        return direct_once((uint32_t)atoi(argv[2]), argv[3], HURRAY_DUP_SUM,
                           HURRAY_ASSEMBLE_SCRATCH_IN_OUTPUT);
    uint32_t threads, wthreads;
    if (argc < 3) {
        fprintf(stderr, "usage: %s <reps> <file.mtx>...\n", argv[0]);
        return 2;
    }
    reps = atoi(argv[1]);
    for (i = 2; i < argc; i++) {
        hurray_coo *coo = NULL;
        char out[4096];
        for (threads = 1; threads <= 2; threads++) {
            double best = 1e30;
            for (r = 0; r < reps; r++) {
                double t0 = now();
                hurray_text_options o = {sizeof(hurray_text_options), HURRAY_DUP_ERROR, 0, 0, 0, 0};
                hurray_status st;
                o.threads = threads;
                st = hurray_coo_read_mtx_file(argv[i], &o, NULL, &coo);
                double t = now() - t0;
                if (st != HURRAY_OK) return fail(argv[i], st);
                if (t < best) best = t;
                if (r + 1 < reps || threads == 1) {
                    hurray_coo_free(coo);
                    coo = NULL;
                }
            }
            printf("%s read %u %.6f %llu\n", argv[i], threads, best,
                   (unsigned long long)(coo ? hurray_coo_nnz(coo) : 0));
        }
        snprintf(out, sizeof out, "%s.hurray-out.mtx", argv[i]);
        for (wthreads = 1; wthreads <= 2; wthreads++) {
            double best = 1e30;
            for (r = 0; r < reps; r++) {
                double t0 = now();
                hurray_text_options o = {sizeof(hurray_text_options), 0, 0, 0, 0, 0};
                hurray_status st;
                o.threads = wthreads;
                st = hurray_coo_write_mtx_file(coo, out, &o);
                double t = now() - t0;
                if (st != HURRAY_OK) return fail(out, st);
                if (t < best) best = t;
            }
            printf("%s write %u %.6f 0\n", argv[i], wthreads, best);
        }
        remove(out);
        hurray_coo_free(coo);
    }
    return 0;
}
