/* Matrix Market read and write through the C ABI, timed as a C program
 * calls them: hurray_coo_read_mtx_file with 1 and 2 threads (file to
 * canonical handle: parse, sort, check), hurray_coo_write_mtx_file
 * (shortest round-trip text) with 1 and 2 threads. Best of `reps` runs each.
 *   text <reps> <file.mtx>...   prints: file op threads seconds */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
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

int main(int argc, char **argv) {
    int reps, i, r;
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
                hurray_text_options o = {sizeof(hurray_text_options), HURRAY_DUP_ERROR, 0, 0, 0};
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
                hurray_text_options o = {sizeof(hurray_text_options), 0, 0, 0, 0};
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
