/* Opening a Hurray file and getting a validated handle of a sorted tensor,
 * through the C ABI, against a C streaming read of the same index bytes
 * (gcc -O3 -march=native), in one run.
 *   file <reps> <file.mtx>...
 * For each Matrix Market file: read it (canonical: sorted, no duplicates),
 * write it as a Hurray file, then time (best of reps, page cache warm):
 *   open+get   hurray_file_open (mmap, container checks) + hurray_file_get
 *              (strict: every rule of the spec) + hurray_coo_free + close
 *   open+perm  the same with HURRAY_COO_PERMISSIVE (structure only)
 *   stream     open + mmap + sum of the index bytes as uint64 + munmap
 *              + close: the streaming read of the index bytes, page faults
 *              included as in ours
 *   stream-hot the sum alone over a mapping kept across runs
 *   copy-read  read() of the whole file into a buffer (what a copying
 *              loader costs at least)
 * prints: file nnz bytes open+get open+perm stream stream-hot copy-read */
#define _POSIX_C_SOURCE 200809L
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "hurray_coo.h"
#include "stream.h"

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int fail(const char *what, hurray_status st) {
    fprintf(stderr, "%s: %s: %s\n", what, hurray_status_name(st), hurray_last_error_message());
    return 1;
}


/* Open, map, sum `len` bytes at `off`, unmap, close. */
static double stream(const char *path, size_t off, size_t len) {
    double t0 = now();
    int fd = open(path, O_RDONLY);
    struct stat st;
    void *m;
    if (fd < 0 || fstat(fd, &st) != 0) return -1;
    m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
    if (m == MAP_FAILED) return -1;
    sink = sum((const uint64_t *)((const char *)m + off), len / 8);
    munmap(m, (size_t)st.st_size);
    close(fd);
    return now() - t0;
}

static double copy_read(const char *path, char *buf, size_t size) {
    double t0 = now();
    int fd = open(path, O_RDONLY);
    size_t got = 0;
    if (fd < 0) return -1;
    while (got < size) {
        ssize_t n = read(fd, buf + got, size - got);
        if (n <= 0) break;
        got += (size_t)n;
    }
    close(fd);
    sink = (uint64_t)buf[size / 2];
    return now() - t0;
}

int main(int argc, char **argv) {
    int reps, i, r;
    if (argc < 3) {
        fprintf(stderr, "usage: %s <reps> <file.mtx>...\n", argv[0]);
        return 2;
    }
    reps = atoi(argv[1]);
    for (i = 2; i < argc; i++) {
        hurray_coo *coo = NULL;
        hurray_file_writer *w = NULL;
        hurray_file *f = NULL;
        hurray_file_tensor t;
        char path[4096];
        size_t values_bytes = 0, indices_bytes = 0, idx_off;
        double best[5] = {1e30, 1e30, 1e30, 1e30, 1e30};
        hurray_status st;
        struct stat fst;
        char *buf;
        const uint64_t *hot;
        int fd;
        void *m;
        {
            const hurray_text_options two_threads = {sizeof(hurray_text_options), HURRAY_DUP_ERROR,
                                                     0, 2, 0};
            st = hurray_coo_read_mtx_file(argv[i], &two_threads, NULL, &coo);
        }
        if (st != HURRAY_OK) return fail(argv[i], st);
        snprintf(path, sizeof path, "%s.hrry", argv[i]);
        if ((st = hurray_file_writer_create(path, 0, 0, &w)) != HURRAY_OK ||
            (st = hurray_file_writer_add(w, "A", coo)) != HURRAY_OK ||
            (st = hurray_file_writer_finish(w)) != HURRAY_OK)
            return fail(path, st);
        (void)hurray_coo_values(coo, &values_bytes);
        (void)hurray_coo_indices(coo, &indices_bytes);
        if ((st = hurray_file_open(path, 0, &f)) != HURRAY_OK) return fail(path, st);
        if ((st = hurray_file_tensor_info(f, 0, &t)) != HURRAY_OK) return fail(path, st);
        idx_off = (size_t)t.data_offset + (values_bytes + 4095) / 4096 * 4096;
        hurray_file_close(f);
        stat(path, &fst);
        buf = malloc((size_t)fst.st_size);
        fd = open(path, O_RDONLY);
        m = mmap(NULL, (size_t)fst.st_size, PROT_READ, MAP_SHARED, fd, 0);
        hot = (const uint64_t *)((const char *)m + idx_off);
        sink = sum(hot, indices_bytes / 8); /* fault it in */
        for (r = 0; r < reps; r++) {
            for (int mode = 0; mode < 2; mode++) {
                hurray_coo *h = NULL;
                double t0 = now(), dt;
                if ((st = hurray_file_open(path, 0, &f)) != HURRAY_OK) return fail(path, st);
                st = hurray_file_get(f, "A", mode ? HURRAY_COO_PERMISSIVE : 0, &h);
                if (st != HURRAY_OK) return fail(path, st);
                hurray_coo_free(h);
                hurray_file_close(f);
                dt = now() - t0;
                if (dt < best[mode]) best[mode] = dt;
            }
            {
                double s = stream(path, idx_off, indices_bytes), t0, dt;
                if (s < 0) return 1;
                if (s < best[2]) best[2] = s;
                t0 = now();
                sink = sum(hot, indices_bytes / 8);
                dt = now() - t0;
                if (dt < best[3]) best[3] = dt;
                dt = copy_read(path, buf, (size_t)fst.st_size);
                if (dt < best[4]) best[4] = dt;
            }
        }
        munmap(m, (size_t)fst.st_size);
        close(fd);
        free(buf);
        printf("%s %llu %llu %.6f %.6f %.6f %.6f %.6f\n", argv[i],
               (unsigned long long)hurray_coo_nnz(coo), (unsigned long long)indices_bytes,
               best[0], best[1], best[2], best[3], best[4]);
        remove(path);
        hurray_coo_free(coo);
    }
    return 0;
}
