/* C tests of Matrix Market and FROSTT files, read and written through the
 * header as a solver would: from memory, from a path, round trips, and
 * hostile arguments (NULL, lying lengths, bad flags). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ctest.h"

static const char SYM[] = "%%MatrixMarket matrix coordinate real symmetric\n"
                          "% a 3x3 symmetric matrix, lower triangle\n"
                          "3 3 4\n"
                          "1 1 4.0\n"
                          "2 1 -1\n"
                          "3 2 -1\n"
                          "3 3 4.0\n";

static int test_mtx_from_memory(void) {
    int failures = 0;
    hurray_coo *coo = NULL;
    uint32_t sym = 99;
    double d = 0.0;
    bool found = false;
    const uint64_t q[2] = {0, 1};
    CHECK_STATUS(hurray_coo_read_mtx(SYM, strlen(SYM), CTEST_TEXT(HURRAY_DUP_ERROR, 0, 1, 0), &sym, &coo),
                 HURRAY_OK, "");
    CHECK(sym == HURRAY_MTX_SYMMETRIC);
    CHECK(hurray_coo_nnz(coo) == 6 && hurray_coo_is_sorted(coo));
    CHECK(hurray_coo_type_tag(coo) == HURRAY_TYPE_FLOAT64);
    CHECK_STATUS(hurray_coo_lookup_f64(coo, q, 2, &d, &found), HURRAY_OK, "");
    CHECK(found && d == -1.0);
    {
        /* A handle read from a file speaks 1-based in later messages. */
        const uint64_t bad[2] = {3, 0};
        CHECK_STATUS(hurray_coo_lookup_f64(coo, bad, 2, &d, NULL), HURRAY_ERR_INDEX_OUT_OF_BOUNDS,
                     "query coordinate 4 in dimension 1");
    }
    hurray_coo_free(coo);
    coo = NULL;
    CHECK_STATUS(hurray_coo_read_mtx(SYM, strlen(SYM), CTEST_TEXT(HURRAY_DUP_ERROR, HURRAY_TEXT_KEEP_TRIANGULAR, 1, 0), NULL, &coo),
                 HURRAY_OK, "");
    CHECK(hurray_coo_nnz(coo) == 4);
    hurray_coo_free(coo);
    return failures;
}

static int test_mtx_errors_name_line_and_column(void) {
    int failures = 0;
    hurray_coo *coo = (hurray_coo *)&failures; /* must be reset to NULL */
    static const char bad[] = "%%MatrixMarket matrix coordinate real general\n"
                              "2 2 2\n"
                              "1 1 1\n"
                              "1 3 1\n";
    static const char dup[] = "%%MatrixMarket matrix coordinate real general\n"
                              "2 2 2\n"
                              "1 2 1\n"
                              "1 2 5\n";
    CHECK_STATUS(hurray_coo_read_mtx(bad, strlen(bad), CTEST_TEXT(HURRAY_DUP_ERROR, 0, 1, 0), NULL, &coo),
                 HURRAY_ERR_PARSE, "line 4, column 3: column index out of range");
    CHECK(coo == NULL);
    CHECK_STATUS(hurray_coo_read_mtx(dup, strlen(dup), CTEST_TEXT(HURRAY_DUP_ERROR, 0, 1, 0), NULL, &coo),
                 HURRAY_ERR_DUPLICATE, "line 4 duplicates line 3");
    CHECK_STATUS(hurray_coo_read_mtx(dup, strlen(dup), CTEST_TEXT(HURRAY_DUP_MAX, 0, 1, 0), NULL, &coo),
                 HURRAY_OK, "");
    CHECK(hurray_coo_nnz(coo) == 1);
    hurray_coo_free(coo);
    /* A length that stops mid-file is what is read: the file is short. */
    CHECK_STATUS(hurray_coo_read_mtx(dup, 58, CTEST_TEXT(HURRAY_DUP_ERROR, 0, 1, 0), NULL, &coo),
                 HURRAY_ERR_PARSE, "the file ends after 1 of the 2 entries");
    CHECK_STATUS(hurray_coo_read_mtx(dup, 60, CTEST_TEXT(HURRAY_DUP_ERROR, 0, 1, 0), NULL, &coo),
                 HURRAY_ERR_PARSE, "line 4: 1 field(s) where an entry is 'row column value'");
    /* Hostile arguments. */
    CHECK_STATUS(hurray_coo_read_mtx(NULL, 10, CTEST_TEXT(HURRAY_DUP_ERROR, 0, 1, 0), NULL, &coo),
                 HURRAY_ERR_NULL_POINTER, "bytes");
    CHECK_STATUS(hurray_coo_read_mtx(SYM, strlen(SYM), CTEST_TEXT(HURRAY_DUP_ERROR, 0, 1, 0), NULL, NULL),
                 HURRAY_ERR_NULL_POINTER, "out");
    CHECK_STATUS(hurray_coo_read_mtx(SYM, strlen(SYM), CTEST_TEXT(77, 0, 1, 0), NULL, &coo),
                 HURRAY_ERR_INVALID_ARGUMENT, "duplicate policy 77");
    CHECK_STATUS(hurray_coo_read_mtx(SYM, strlen(SYM), CTEST_TEXT(HURRAY_DUP_ERROR, 0x1, 1, 0), NULL, &coo),
                 HURRAY_ERR_INVALID_FLAGS, "HURRAY_TEXT_KEEP_TRIANGULAR");
    CHECK_STATUS(hurray_coo_read_mtx(NULL, 0, CTEST_TEXT(HURRAY_DUP_ERROR, 0, 1, 0), NULL, &coo),
                 HURRAY_ERR_PARSE, "the input is empty");
    CHECK(coo == NULL);
    /* NULL options are the defaults (HURRAY_DUP_ERROR, no flags, one
     * thread); a size other than sizeof(hurray_text_options) is refused
     * before anything else is read. */
    CHECK_STATUS(hurray_coo_read_mtx(SYM, strlen(SYM), NULL, NULL, &coo), HURRAY_OK, "");
    hurray_coo_free(coo);
    coo = NULL;
    {
        hurray_text_options short_options = {0};
        short_options.size = sizeof(short_options) - 1;
        CHECK_STATUS(hurray_coo_read_mtx(SYM, strlen(SYM), &short_options, NULL, &coo),
                     HURRAY_ERR_INVALID_ARGUMENT, "options->size is");
        CHECK(coo == NULL);
        size_t need = 0;
        CHECK_STATUS(hurray_coo_read_mtx(SYM, strlen(SYM), NULL, NULL, &coo), HURRAY_OK, "");
        CHECK_STATUS(hurray_coo_write_mtx(coo, &short_options, NULL, 0, &need),
                     HURRAY_ERR_INVALID_ARGUMENT, "sizeof(hurray_text_options)");
        CHECK_STATUS(hurray_coo_write_mtx(coo, NULL, NULL, 0, &need), HURRAY_ERR_BUFFER_TOO_SMALL,
                     "");
        CHECK(need > 0);
        hurray_coo_free(coo);
        coo = NULL;
    }
    CHECK_STATUS(hurray_coo_read_mtx_file(NULL, CTEST_TEXT(HURRAY_DUP_ERROR, 0, 1, 0), NULL, &coo),
                 HURRAY_ERR_NULL_POINTER, "path");
    CHECK_STATUS(hurray_coo_read_mtx_file("/nonexistent/a.mtx", CTEST_TEXT(HURRAY_DUP_ERROR, 0, 1, 0), NULL, &coo),
                 HURRAY_ERR_IO, "/nonexistent/a.mtx");
    {
        /* 2^64 - 1 rows: a documented status naming the line, not the
         * handle's INVALID_SHAPE. */
        static const char huge[] = "%%MatrixMarket matrix coordinate real general\n"
                                   "18446744073709551615 2 0\n";
        CHECK_STATUS(hurray_coo_read_mtx(huge, strlen(huge), CTEST_TEXT(HURRAY_DUP_ERROR, 0, 1, 0), NULL, &coo),
                     HURRAY_ERR_PARSE, "line 2, column 1: 18446744073709551615 rows is not an extent");
        CHECK(coo == NULL);
    }
    return failures;
}

static int test_write_sizes_and_round_trips(void) {
    int failures = 0;
    hurray_coo *coo = NULL, *back = NULL;
    size_t need = 0, written = 0;
    char *text;
    char path[64];
    CHECK_STATUS(hurray_coo_read_mtx(SYM, strlen(SYM), CTEST_TEXT(HURRAY_DUP_ERROR, 0, 1, 0), NULL, &coo),
                 HURRAY_OK, "");
    /* Capacity 0 asks the size. */
    CHECK_STATUS(hurray_coo_write_mtx(coo, CTEST_TEXT(0, 0, 1, 0), NULL, 0, &need), HURRAY_ERR_BUFFER_TOO_SMALL,
                 "needed");
    CHECK(need > 40);
    text = (char *)malloc(need + 1);
    CHECK(text != NULL);
    if (text == NULL) {
        hurray_coo_free(coo);
        return failures;
    }
    memset(text, 'x', need + 1);
    CHECK_STATUS(hurray_coo_write_mtx(coo, CTEST_TEXT(0, 0, 1, 0), text, need - 1, &written),
                 HURRAY_ERR_BUFFER_TOO_SMALL, "");
    CHECK(written == need && text[0] == 'x');
    CHECK_STATUS(hurray_coo_write_mtx(coo, CTEST_TEXT(0, 0, 1, 0), text, need, &written), HURRAY_OK, "");
    CHECK(written == need && text[need] == 'x');
    CHECK(strncmp(text, "%%MatrixMarket matrix coordinate real general\n", 46) == 0);
    CHECK_STATUS(hurray_coo_read_mtx(text, written, CTEST_TEXT(HURRAY_DUP_ERROR, 0, 1, 0), NULL, &back),
                 HURRAY_OK, "");
    CHECK(hurray_coo_nnz(back) == 6);
    {
        size_t a = 0, b = 0;
        const uint64_t *ia = hurray_coo_indices(back, &a), *ib = hurray_coo_indices(coo, &b);
        CHECK(a == b && a == 12 * sizeof(uint64_t) && memcmp(ia, ib, a) == 0);
        CHECK(memcmp(hurray_coo_values(back, &a), hurray_coo_values(coo, &b), 6 * sizeof(double)) ==
              0);
    }
    hurray_coo_free(back);
    back = NULL;
    free(text);
    CHECK_STATUS(hurray_coo_write_mtx(coo, CTEST_TEXT(0, 0, 1, 18), NULL, 0, &need), HURRAY_ERR_INVALID_ARGUMENT,
                 "precision 18");
    CHECK_STATUS(hurray_coo_write_mtx(NULL, CTEST_TEXT(0, 0, 1, 0), NULL, 0, &need), HURRAY_ERR_NULL_POINTER, "");
    CHECK_STATUS(hurray_coo_write_mtx(coo, CTEST_TEXT(0, 0, 1, 0), NULL, 0, NULL), HURRAY_ERR_NULL_POINTER,
                 "out_written");

    /* Files: .mtx and .tns with the shape given, through a path. */
    snprintf(path, sizeof path, "/tmp/hurray_ctest_%ld.mtx", (long)getpid());
    CHECK_STATUS(hurray_coo_write_mtx_file(coo, path, CTEST_TEXT(0, 0, 2, 6)), HURRAY_OK, "");
    CHECK_STATUS(hurray_coo_read_mtx_file(path, CTEST_TEXT(HURRAY_DUP_ERROR, 0, 2, 0), NULL, &back), HURRAY_OK,
                 "");
    CHECK(hurray_coo_nnz(back) == 6);
    hurray_coo_free(back);
    back = NULL;
    remove(path);
    snprintf(path, sizeof path, "/tmp/hurray_ctest_%ld.tns", (long)getpid());
    CHECK_STATUS(hurray_coo_write_tns_file(coo, path, CTEST_TEXT(0, 0, 2, 0)), HURRAY_OK, "");
    {
        const uint64_t shape[2] = {3, 3};
        const uint64_t small[2] = {3, 2};
        CHECK_STATUS(hurray_coo_read_tns_file(path, shape, 2, CTEST_TEXT(HURRAY_DUP_ERROR, 0, 1, 0), &back),
                     HURRAY_OK, "");
        CHECK(hurray_coo_nnz(back) == 6);
        hurray_coo_free(back);
        back = NULL;
        CHECK_STATUS(hurray_coo_read_tns_file(path, small, 2, CTEST_TEXT(HURRAY_DUP_ERROR, 0, 1, 0), &back),
                     HURRAY_ERR_PARSE, "beyond the given extent 2");
        CHECK_STATUS(hurray_coo_read_tns_file(path, NULL, 2, CTEST_TEXT(HURRAY_DUP_ERROR, 0, 1, 0), &back),
                     HURRAY_ERR_NULL_POINTER, "shape");
        CHECK(back == NULL);
    }
    remove(path);
    CHECK_STATUS(hurray_coo_write_tns_file(coo, "/nonexistent/dir/a.tns", CTEST_TEXT(0, 0, 2, 0)), HURRAY_ERR_IO,
                 "/nonexistent/dir/a.tns");
    hurray_coo_free(coo);
    return failures;
}

static int test_tns_from_memory(void) {
    int failures = 0;
    static const char t3[] = "# rank 3\n1 1 1 2.5\n2 3 4 -1\n2 3 4 1\n";
    hurray_coo *coo = NULL;
    size_t need = 0;
    CHECK_STATUS(hurray_coo_read_tns(t3, strlen(t3), NULL, 0, CTEST_TEXT(HURRAY_DUP_ERROR, 0, 1, 0), &coo),
                 HURRAY_ERR_DUPLICATE, "line 4 duplicates line 3: both are entry (2, 3, 4)");
    CHECK_STATUS(hurray_coo_read_tns(t3, strlen(t3), NULL, 0, CTEST_TEXT(HURRAY_DUP_SUM, HURRAY_ASSEMBLE_DROP_ZEROS, 1, 0), &coo),
                 HURRAY_OK, "");
    CHECK(hurray_coo_rank(coo) == 3 && hurray_coo_nnz(coo) == 1);
    CHECK(hurray_coo_shape(coo)[2] == 4);
    /* Matrix Market refuses rank 3. */
    CHECK_STATUS(hurray_coo_write_mtx(coo, CTEST_TEXT(0, 0, 1, 0), NULL, 0, &need), HURRAY_ERR_UNSUPPORTED_FEATURE,
                 "rank 3");
    CHECK_STATUS(hurray_coo_write_tns(coo, CTEST_TEXT(0, 0, 1, 0), NULL, 0, &need), HURRAY_ERR_BUFFER_TOO_SMALL, "");
    hurray_coo_free(coo);
    return failures;
}

/* The number of entries of directory dir other than . and .. */
static int dir_entries(const char *dir) {
    int n = 0;
    struct dirent *e;
    DIR *d = opendir(dir);
    if (d == NULL) return -1;
    while ((e = readdir(d)) != NULL)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) n++;
    closedir(d);
    return n;
}

/* A write whose rename fails (the target is a directory) returns IO and
 * leaves no temporary file beside the target: the header promises it. */
static int test_failed_writes_leave_no_temporary(void) {
    int failures = 0;
    char dir[128], sub[160];
    hurray_coo *coo = NULL;
    hurray_file_writer *w = NULL;
    snprintf(dir, sizeof dir, "/tmp/hurray_ctest_tmpleak_%ld", (long)getpid());
    snprintf(sub, sizeof sub, "%s/sub", dir);
    CHECK(mkdir(dir, 0700) == 0);
    CHECK(mkdir(sub, 0700) == 0);
    CHECK_STATUS(hurray_coo_read_mtx(SYM, strlen(SYM), CTEST_TEXT(HURRAY_DUP_ERROR, 0, 1, 0), NULL, &coo),
                 HURRAY_OK, "");
    CHECK_STATUS(hurray_coo_write_mtx_file(coo, sub, CTEST_TEXT(0, 0, 1, 0)), HURRAY_ERR_IO, sub);
    CHECK(dir_entries(dir) == 1);
    CHECK_STATUS(hurray_coo_write_tns_file(coo, sub, CTEST_TEXT(0, 0, 1, 0)), HURRAY_ERR_IO, sub);
    CHECK(dir_entries(dir) == 1);
    CHECK_STATUS(hurray_file_writer_create(sub, 0, 0, &w), HURRAY_OK, "");
    CHECK_STATUS(hurray_file_writer_add(w, "a", coo), HURRAY_OK, "");
    CHECK_STATUS(hurray_file_writer_finish(w), HURRAY_ERR_IO, sub);
    CHECK(dir_entries(dir) == 1);
    rmdir(sub);
    rmdir(dir);
    hurray_coo_free(coo);
    return failures;
}

/* SYM above, gzip-compressed (as .mtx.gz files are). */
static const unsigned char SYM_GZ[] = {
    0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x03, 0x45, 0x8b,
    0x41, 0x0a, 0x80, 0x30, 0x10, 0x03, 0xef, 0x7d, 0x45, 0x2e, 0xbd, 0xa9,
    0x58, 0xd7, 0x6f, 0xf8, 0x88, 0xa5, 0x2e, 0x22, 0xb6, 0x16, 0xd6, 0x82,
    0xfa, 0x7b, 0x4b, 0x15, 0x3c, 0x4d, 0x32, 0x21, 0xd6, 0x4e, 0x9c, 0x75,
    0xbd, 0x26, 0xd6, 0x4d, 0x32, 0x62, 0x2d, 0xf0, 0x29, 0xe9, 0xbc, 0xee,
    0x9c, 0x05, 0x2a, 0x1c, 0x70, 0xdc, 0x31, 0x4a, 0x59, 0xbc, 0xb1, 0x60,
    0xd0, 0x45, 0xbf, 0xf9, 0x2e, 0x0d, 0x42, 0x3a, 0x45, 0x51, 0x32, 0xef,
    0x4b, 0x10, 0x43, 0x20, 0x8c, 0xc6, 0xc1, 0x61, 0xec, 0x7a, 0x33, 0x14,
    0xb6, 0xae, 0xc8, 0xe1, 0x05, 0x55, 0xfb, 0x00, 0xa7, 0xba, 0x71, 0x9b,
    0x7d, 0x00, 0x00, 0x00,
};

/* A FILE* as a hurray_read_fn: what a caller reading a pipe writes. */
static ptrdiff_t read_file_cb(void *user, void *buf, size_t len) {
    FILE *f = (FILE *)user;
    size_t n = fread(buf, 1, len, f);
    return (n == 0 && ferror(f)) ? -1 : (ptrdiff_t)n;
}

/* A callback that hands out `left` bytes of SYM and then fails. */
static size_t fail_after;
static ptrdiff_t failing_cb(void *user, void *buf, size_t len) {
    size_t *pos = (size_t *)user;
    if (*pos >= fail_after) return -1;
    size_t n = fail_after - *pos < len ? fail_after - *pos : len;
    memcpy(buf, SYM + *pos, n);
    *pos += n;
    return (ptrdiff_t)n;
}

/* A callback that claims more bytes than it was given room for. */
static ptrdiff_t lying_cb(void *user, void *buf, size_t len) {
    (void)user;
    (void)buf;
    return (ptrdiff_t)len + 1;
}

static int test_gzip_and_streams(void) {
    int failures = 0;
    hurray_coo *coo = NULL;
    uint32_t sym = 99;
    /* gzip bytes in memory read as their text. */
    CHECK_STATUS(hurray_coo_read_mtx(SYM_GZ, sizeof SYM_GZ, NULL, &sym, &coo), HURRAY_OK, "");
    CHECK(sym == HURRAY_MTX_SYMMETRIC && hurray_coo_nnz(coo) == 6);
    hurray_coo_free(coo);
    coo = NULL;
    /* Cut short: an Io error that says so, and no handle. */
    CHECK_STATUS(hurray_coo_read_mtx(SYM_GZ, sizeof SYM_GZ - 9, NULL, NULL, &coo), HURRAY_ERR_IO,
                 "the gzip data does not decompress");
    CHECK(coo == NULL);
    /* A stream, plain and gzip, through a FILE* (a file called .mtx that
       holds gzip is still gzip). */
    char path[64];
    snprintf(path, sizeof path, "/tmp/hurray_ctest_stream_%ld.mtx", (long)getpid());
    for (int gz = 0; gz < 2; gz++) {
        FILE *w = fopen(path, "wb");
        CHECK(w != NULL);
        if (w == NULL) return failures;
        fwrite(gz ? (const void *)SYM_GZ : (const void *)SYM, 1, gz ? sizeof SYM_GZ : strlen(SYM), w);
        fclose(w);
        FILE *r = fopen(path, "rb");
        sym = 99;
        CHECK_STATUS(hurray_coo_read_stream(read_file_cb, r, HURRAY_TEXT_MTX, NULL, 0, NULL, &sym, &coo),
                     HURRAY_OK, "");
        fclose(r);
        CHECK(sym == HURRAY_MTX_SYMMETRIC && hurray_coo_nnz(coo) == 6);
        hurray_coo_free(coo);
        coo = NULL;
        /* The path reader takes the same file. */
        CHECK_STATUS(hurray_coo_read_mtx_file(path, NULL, NULL, &coo), HURRAY_OK, "");
        CHECK(hurray_coo_nnz(coo) == 6);
        hurray_coo_free(coo);
        coo = NULL;
    }
    {
        /* FROSTT from a stream; the shape checks every coordinate. */
        static const char tns[] = "1 2 3 1.5\n2 1 1 -2\n";
        FILE *w = fopen(path, "wb");
        CHECK(w != NULL);
        if (w == NULL) return failures;
        fwrite(tns, 1, strlen(tns), w);
        fclose(w);
        FILE *r = fopen(path, "rb");
        const uint64_t shape[3] = {2, 2, 3};
        sym = 99;
        CHECK_STATUS(hurray_coo_read_stream(read_file_cb, r, HURRAY_TEXT_TNS, shape, 3, NULL, &sym, &coo),
                     HURRAY_OK, "");
        fclose(r);
        CHECK(sym == HURRAY_MTX_GENERAL && hurray_coo_nnz(coo) == 2 && hurray_coo_rank(coo) == 3);
        hurray_coo_free(coo);
        coo = NULL;
    }
    remove(path);
    /* A callback that fails, or lies about what it wrote: Io, with how far
       the stream got. */
    size_t pos = 0;
    fail_after = 20;
    coo = (hurray_coo *)&pos;
    CHECK_STATUS(hurray_coo_read_stream(failing_cb, &pos, HURRAY_TEXT_MTX, NULL, 0, NULL, NULL, &coo),
                 HURRAY_ERR_IO, "the read callback returned -1 (failure) after 20 bytes");
    CHECK(coo == NULL);
    CHECK_STATUS(hurray_coo_read_stream(lying_cb, NULL, HURRAY_TEXT_MTX, NULL, 0, NULL, NULL, &coo),
                 HURRAY_ERR_IO, "for a buffer of");
    /* Hostile arguments. */
    CHECK_STATUS(hurray_coo_read_stream(NULL, NULL, HURRAY_TEXT_MTX, NULL, 0, NULL, NULL, &coo),
                 HURRAY_ERR_NULL_POINTER, "read");
    CHECK_STATUS(hurray_coo_read_stream(lying_cb, NULL, 7, NULL, 0, NULL, NULL, &coo),
                 HURRAY_ERR_INVALID_ARGUMENT, "format 7");
    {
        const uint64_t shape[2] = {3, 3};
        CHECK_STATUS(hurray_coo_read_stream(lying_cb, NULL, HURRAY_TEXT_MTX, shape, 2, NULL, NULL, &coo),
                     HURRAY_ERR_INVALID_ARGUMENT, "says its own shape");
    }
    CHECK_STATUS(hurray_coo_read_stream(lying_cb, NULL, HURRAY_TEXT_MTX, NULL, 0, NULL, NULL, NULL),
                 HURRAY_ERR_NULL_POINTER, "out");
    CHECK(coo == NULL);
    return failures;
}

/* A whole symmetric matrix written with HURRAY_TEXT_WRITE_SYMMETRIC is its
   lower triangle under a symmetric banner and reads back as the same
   matrix; a matrix that is not symmetric is refused, naming the entry. */
static int test_symmetric_writes(void) {
    int failures = 0;
    hurray_coo *coo = NULL, *back = NULL;
    char text[512];
    size_t written = 0;
    uint32_t sym = 99;
    CHECK_STATUS(hurray_coo_read_mtx(SYM, strlen(SYM), NULL, NULL, &coo), HURRAY_OK, "");
    CHECK_STATUS(hurray_coo_write_mtx(coo, CTEST_TEXT(0, HURRAY_TEXT_WRITE_SYMMETRIC, 1, 0), text, sizeof text,
                                      &written),
                 HURRAY_OK, "");
    CHECK(strncmp(text, "%%MatrixMarket matrix coordinate real symmetric\n", 48) == 0);
    CHECK(written < sizeof text && strstr(text, "\n3 3 4\n") != NULL);
    CHECK_STATUS(hurray_coo_read_mtx(text, written, NULL, &sym, &back), HURRAY_OK, "");
    CHECK(sym == HURRAY_MTX_SYMMETRIC && hurray_coo_nnz(back) == 6);
    {
        size_t a = 0, b = 0;
        CHECK(memcmp(hurray_coo_indices(back, &a), hurray_coo_indices(coo, &b), 12 * sizeof(uint64_t)) == 0);
        CHECK(memcmp(hurray_coo_values(back, &a), hurray_coo_values(coo, &b), 6 * sizeof(double)) == 0);
    }
    hurray_coo_free(back);
    /* The pattern alone, folded. */
    CHECK_STATUS(hurray_coo_write_mtx(coo, CTEST_TEXT(0, HURRAY_TEXT_WRITE_SYMMETRIC | HURRAY_TEXT_WRITE_PATTERN, 1, 0),
                                      text, sizeof text, &written),
                 HURRAY_OK, "");
    CHECK(strncmp(text, "%%MatrixMarket matrix coordinate pattern symmetric\n", 51) == 0);
    /* Dense: the lower triangle's columns, zeros included (3 + 2 + 1 values). */
    CHECK_STATUS(hurray_coo_write_mtx(coo, CTEST_TEXT(0, HURRAY_TEXT_WRITE_SYMMETRIC | HURRAY_TEXT_WRITE_ARRAY, 1, 0),
                                      text, sizeof text, &written),
                 HURRAY_OK, "");
    CHECK(strncmp(text, "%%MatrixMarket matrix array real symmetric\n", 43) == 0);
    CHECK(written < sizeof text && strstr(text, "\n3 3\n4.0\n-1.0\n0.0\n0.0\n-1.0\n4.0\n") != NULL);
    /* Not skew-symmetric: the diagonal holds values. */
    CHECK_STATUS(hurray_coo_write_mtx(coo, CTEST_TEXT(0, HURRAY_TEXT_WRITE_SKEW_SYMMETRIC, 1, 0), text, sizeof text,
                                      &written),
                 HURRAY_ERR_INVALID_ARGUMENT, "entry 0 (1 1 4.0, counted from 1) is on the diagonal");
    /* Hermitian needs complex values; two symmetries are one too many;
       FROSTT declares none. */
    CHECK_STATUS(hurray_coo_write_mtx(coo, CTEST_TEXT(0, HURRAY_TEXT_WRITE_HERMITIAN, 1, 0), text, sizeof text,
                                      &written),
                 HURRAY_ERR_INVALID_ARGUMENT, "hermitian for complex values only");
    CHECK_STATUS(hurray_coo_write_mtx(coo,
                                      CTEST_TEXT(0, HURRAY_TEXT_WRITE_SYMMETRIC | HURRAY_TEXT_WRITE_HERMITIAN, 1, 0),
                                      text, sizeof text, &written),
                 HURRAY_ERR_INVALID_ARGUMENT, "more than one of");
    CHECK_STATUS(hurray_coo_write_tns(coo, CTEST_TEXT(0, HURRAY_TEXT_WRITE_SYMMETRIC, 1, 0), text, sizeof text,
                                      &written),
                 HURRAY_ERR_INVALID_ARGUMENT, "declares no symmetry");
    CHECK_STATUS(hurray_coo_write_mtx(coo, CTEST_TEXT(0, 0x400, 1, 0), text, sizeof text, &written),
                 HURRAY_ERR_INVALID_FLAGS, "HURRAY_TEXT_WRITE_ARRAY");
    hurray_coo_free(coo);
    coo = NULL;
    {
        static const char unsym[] = "%%MatrixMarket matrix coordinate real general\n"
                                    "2 2 2\n"
                                    "1 2 1.5\n"
                                    "2 1 2.5\n";
        CHECK_STATUS(hurray_coo_read_mtx(unsym, strlen(unsym), NULL, NULL, &coo), HURRAY_OK, "");
        CHECK_STATUS(hurray_coo_write_mtx(coo, CTEST_TEXT(0, HURRAY_TEXT_WRITE_SYMMETRIC, 1, 0), text, sizeof text,
                                          &written),
                     HURRAY_ERR_INVALID_ARGUMENT, "entry 1 (2 1 2.5) and its mirror image, entry 0 (1 2 1.5)");
        hurray_coo_free(coo);
    }
    return failures;
}

/* Values in the solver's type: float64 from an integer file, exactly or
   not at all. */
static int test_values_in_the_solvers_type(void) {
    int failures = 0;
    hurray_coo *coo = NULL;
    static const char ints[] = "%%MatrixMarket matrix coordinate integer general\n"
                               "2 2 2\n"
                               "1 1 3\n"
                               "2 2 9007199254740993\n";
    static const char small[] = "%%MatrixMarket matrix coordinate integer general\n"
                                "2 2 2\n"
                                "1 1 3\n"
                                "2 2 -7\n";
    hurray_text_options o = {sizeof o, 0, 0, 1, 0, HURRAY_TYPE_FLOAT64};
    CHECK_STATUS(hurray_coo_read_mtx(small, strlen(small), &o, NULL, &coo), HURRAY_OK, "");
    CHECK(hurray_coo_type_tag(coo) == HURRAY_TYPE_FLOAT64);
    {
        size_t n = 0;
        const double *v = (const double *)hurray_coo_values(coo, &n);
        CHECK(n == 2 * sizeof(double) && v[0] == 3.0 && v[1] == -7.0);
    }
    hurray_coo_free(coo);
    coo = NULL;
    /* 2^53 + 1 has no float64. */
    CHECK_STATUS(hurray_coo_read_mtx(ints, strlen(ints), &o, NULL, &coo), HURRAY_ERR_OVERFLOW,
                 "entry 1 at (2, 2) (counted from 1): 9007199254740993 would become 9007199254740992.0");
    CHECK(coo == NULL);
    o.value_type = HURRAY_TYPE_INT32;
    CHECK_STATUS(hurray_coo_read_mtx(small, strlen(small), &o, NULL, &coo), HURRAY_OK, "");
    CHECK(hurray_coo_type_tag(coo) == HURRAY_TYPE_INT32);
    hurray_coo_free(coo);
    coo = NULL;
    o.value_type = HURRAY_TYPE_COMPLEX128;
    CHECK_STATUS(hurray_coo_read_mtx(small, strlen(small), &o, NULL, &coo), HURRAY_ERR_INVALID_ARGUMENT,
                 "options->value_type 81");
    o.value_type = 0x1234;
    CHECK_STATUS(hurray_coo_read_mtx(small, strlen(small), &o, NULL, &coo), HURRAY_ERR_INVALID_ARGUMENT,
                 "options->value_type 4660");
    return failures;
}

/* Write text to a fresh temporary file; its path in path. */
static int write_temp(char *path, size_t len, const char *tag, const char *text) {
    FILE *f;
    snprintf(path, len, "/tmp/hurray_ctest_%s_%ld.mtx", tag, (long)getpid());
    f = fopen(path, "wb");
    if (f == NULL) return 1;
    fputs(text, f);
    return fclose(f) != 0;
}

/* One read straight into CSR or CSC, compared with the handle's export:
 * the same offsets, indices and values, byte for byte. */
static int csr_agrees_with_export(const char *path, const hurray_text_options *o, uint32_t format,
                                  uint32_t index_type, uint32_t base, uint64_t expect_nnz) {
    int failures = 0;
    hurray_coo *coo = NULL;
    hurray_compressed room = ctest_compressed(format, index_type, base, NULL, 0, NULL, 0, NULL, 0);
    hurray_compressed want = room;
    uint64_t shape[2] = {0, 0}, nnz = 99;
    uint8_t tag = 0;
    uint32_t sym = 99;
    void *wo, *wi, *wv, *go, *gi, *gv;
    CHECK_STATUS(hurray_read_mtx_compressed_size(path, o, &room, shape, &tag), HURRAY_OK, "");
    CHECK_STATUS(hurray_coo_read_mtx_file(path, o, NULL, &coo), HURRAY_OK, "");
    if (coo == NULL) return failures + 1;
    CHECK(shape[0] == hurray_coo_shape(coo)[0] && shape[1] == hurray_coo_shape(coo)[1]);
    CHECK(tag == hurray_coo_type_tag(coo));
    CHECK_STATUS(hurray_coo_compressed_size(coo, &want), HURRAY_OK, "");
    CHECK(room.offsets_bytes == want.offsets_bytes);
    CHECK(room.indices_bytes >= want.indices_bytes && room.values_bytes >= want.values_bytes);
    wo = malloc(want.offsets_bytes);
    wi = malloc(want.indices_bytes + 1);
    wv = malloc(want.values_bytes + 1);
    go = malloc(room.offsets_bytes);
    gi = malloc(room.indices_bytes + 1);
    gv = malloc(room.values_bytes + 1);
    if (!wo || !wi || !wv || !go || !gi || !gv) {
        failures++;
    } else {
        want.offsets = wo, want.indices = wi, want.values = wv;
        room.offsets = go, room.indices = gi, room.values = gv;
        /* Bytes past the result are never written. */
        memset(gi, 0xA5, room.indices_bytes);
        memset(gv, 0xA5, room.values_bytes);
        CHECK_STATUS(hurray_coo_export_compressed(coo, &want, 1), HURRAY_OK, "");
        CHECK_STATUS(hurray_read_mtx_compressed(path, o, &room, &nnz, &sym), HURRAY_OK, "");
        CHECK(nnz == hurray_coo_nnz(coo) && nnz == expect_nnz);
        CHECK(memcmp(go, wo, want.offsets_bytes) == 0);
        CHECK(memcmp(gi, wi, want.indices_bytes) == 0);
        CHECK(memcmp(gv, wv, want.values_bytes) == 0);
        CHECK(room.indices_bytes == want.indices_bytes ||
              ((unsigned char *)gi)[want.indices_bytes] == 0xA5);
        CHECK(room.values_bytes == want.values_bytes ||
              ((unsigned char *)gv)[want.values_bytes] == 0xA5);
    }
    free(wo), free(wi), free(wv), free(go), free(gi), free(gv);
    hurray_coo_free(coo);
    return failures;
}

static int test_mtx_straight_into_csr(void) {
    int failures = 0;
    char sym[96], dup[96], pat[96];
    static const char dups[] = "%%MatrixMarket matrix coordinate real general\n"
                               "3 4 5\n"
                               "3 4 1.5\n"
                               "1 2 2\n"
                               "3 4 0.25\n"
                               "2 1 -1\n"
                               "1 1 7\n";
    static const char pattern[] = "%%MatrixMarket matrix coordinate pattern symmetric\n"
                                  "3 3 3\n"
                                  "2 1\n"
                                  "3 3\n"
                                  "3 2\n";
    hurray_text_options sum = {sizeof sum, HURRAY_DUP_SUM, 0, 1, 0, 0};
    hurray_text_options f32 = {sizeof f32, HURRAY_DUP_SUM, 0, 2, 0, HURRAY_TYPE_FLOAT32};
    hurray_compressed c;
    uint64_t nnz = 99, shape[2] = {0, 0};
    uint32_t offs[5] = {0}, cols[5] = {0};
    double vals[5] = {0};
    uint8_t tag = 0;
    if (write_temp(sym, sizeof sym, "sym", SYM) || write_temp(dup, sizeof dup, "dup", dups) ||
        write_temp(pat, sizeof pat, "pat", pattern))
        return 1;
    failures += csr_agrees_with_export(sym, NULL, HURRAY_FORMAT_CSR, HURRAY_INDEX_INT32, 0, 6);
    failures += csr_agrees_with_export(sym, NULL, HURRAY_FORMAT_CSC, HURRAY_INDEX_UINT64, 1, 6);
    failures += csr_agrees_with_export(sym, CTEST_TEXT(HURRAY_DUP_ERROR, HURRAY_TEXT_KEEP_TRIANGULAR, 1, 0),
                                       HURRAY_FORMAT_CSR, HURRAY_INDEX_INT64, 1, 4);
    failures += csr_agrees_with_export(dup, &sum, HURRAY_FORMAT_CSR, HURRAY_INDEX_INT32, 1, 4);
    failures += csr_agrees_with_export(dup, &f32, HURRAY_FORMAT_CSC, HURRAY_INDEX_INT32, 0, 4);
    failures += csr_agrees_with_export(pat, NULL, HURRAY_FORMAT_CSR, HURRAY_INDEX_INT32, 0, 5);

    /* What the size says: rows + 1 offsets, room for 2 x 4 mirrored entries. */
    c = ctest_compressed(HURRAY_FORMAT_CSR, HURRAY_INDEX_INT32, 0, NULL, 0, NULL, 0, NULL, 0);
    CHECK_STATUS(hurray_read_mtx_compressed_size(sym, NULL, &c, shape, &tag), HURRAY_OK, "");
    CHECK(c.offsets_bytes == 4 * 4 && c.indices_bytes == 8 * 4 && c.values_bytes == 8 * 8);
    CHECK(shape[0] == 3 && shape[1] == 3 && tag == HURRAY_TYPE_FLOAT64);
    CHECK_STATUS(hurray_read_mtx_compressed_size(dup, &f32, &c, NULL, &tag), HURRAY_OK, "");
    CHECK(c.offsets_bytes == 4 * 4 && c.indices_bytes == 5 * 4 && c.values_bytes == 5 * 4);
    CHECK(tag == HURRAY_TYPE_FLOAT32);
    CHECK_STATUS(hurray_read_mtx_compressed_size(NULL, NULL, &c, NULL, NULL), HURRAY_ERR_NULL_POINTER, "path");
    CHECK_STATUS(hurray_read_mtx_compressed_size(sym, NULL, NULL, NULL, NULL), HURRAY_ERR_NULL_POINTER, "c");
    CHECK_STATUS(hurray_read_mtx_compressed_size("/nonexistent/a.mtx", NULL, &c, NULL, NULL), HURRAY_ERR_IO,
                 "/nonexistent/a.mtx");
    c.format = 7;
    CHECK_STATUS(hurray_read_mtx_compressed_size(sym, NULL, &c, NULL, NULL), HURRAY_ERR_INVALID_ARGUMENT,
                 "format");

    /* Four entries after SUM fit room for four: exactly the result. */
    c = ctest_compressed(HURRAY_FORMAT_CSR, HURRAY_INDEX_INT32, 0, offs, 4 * 4, cols, 4 * 4, vals, 4 * 8);
    CHECK_STATUS(hurray_read_mtx_compressed(dup, &sum, &c, &nnz, NULL), HURRAY_OK, "");
    CHECK(nnz == 4 && offs[0] == 0 && offs[1] == 2 && offs[2] == 3 && offs[3] == 4);
    CHECK(cols[0] == 0 && cols[1] == 1 && cols[2] == 0 && cols[3] == 3);
    CHECK(vals[0] == 7 && vals[1] == 2 && vals[2] == -1 && vals[3] == 1.75);
    /* Room for three is too little, and the message says what suffices. */
    c.indices_bytes = 3 * 4;
    CHECK_STATUS(hurray_read_mtx_compressed(dup, &sum, &c, &nnz, NULL), HURRAY_ERR_BUFFER_TOO_SMALL,
                 "room for the 5 entries the file gives");
    CHECK(nnz == 0);
    c.indices_bytes = 4 * 4;
    c.offsets_bytes = 3 * 4;
    CHECK_STATUS(hurray_read_mtx_compressed(dup, &sum, &c, &nnz, NULL), HURRAY_ERR_BUFFER_SIZE, "offsets");
    c.offsets_bytes = 4 * 4;
    /* The duplicate is named by its lines, as the handle reader names it. */
    CHECK_STATUS(hurray_read_mtx_compressed(dup, NULL, &c, &nnz, NULL), HURRAY_ERR_DUPLICATE, "line 5");
    CHECK_STATUS(hurray_read_mtx_compressed(NULL, NULL, &c, &nnz, NULL), HURRAY_ERR_NULL_POINTER, "path");
    CHECK_STATUS(hurray_read_mtx_compressed(dup, NULL, NULL, &nnz, NULL), HURRAY_ERR_NULL_POINTER, "c");
    CHECK_STATUS(hurray_read_mtx_compressed(dup, NULL, &c, NULL, NULL), HURRAY_ERR_NULL_POINTER, "out_nnz");
    c.base = 2;
    CHECK_STATUS(hurray_read_mtx_compressed(dup, &sum, &c, &nnz, NULL), HURRAY_ERR_INVALID_ARGUMENT, "base");
    /* A pattern read as bool may leave its values out. */
    c = ctest_compressed(HURRAY_FORMAT_CSR, HURRAY_INDEX_INT32, 0, offs, 4 * 4, cols, 5 * 4, NULL, 0);
    CHECK_STATUS(hurray_read_mtx_compressed(pat, NULL, &c, &nnz, NULL), HURRAY_OK, "");
    CHECK(nnz == 5 && offs[3] == 5 && cols[0] == 1 && cols[4] == 2);
    remove(sym);
    remove(dup);
    remove(pat);
    return failures;
}

/* HURRAY_ASSEMBLE_SCRATCH_IN_OUTPUT on a file read into CSR: a triangle
 * mesh's element matrices, element by element (so not in CSR order, with
 * duplicates to sum), read with and without the flag on 1 and 2 threads
 * into arrays with room for every line. The result is the same bit for bit;
 * with the flag the room past the result was used (so the path ran),
 * without it it is untouched. The readers into a handle refuse the flag. */
static int test_mtx_compressed_scratch_in_output(void) {
    int failures = 0;
    enum { SIDE = 40, LINES = (SIDE - 1) * (SIDE - 1) * 18 };
    char path[96];
    FILE *f;
    int a, b, t, r, k, run, threads;
    hurray_coo *coo = NULL;
    uint32_t *offs[2] = {NULL, NULL}, *cols[2] = {NULL, NULL};
    double *vals[2] = {NULL, NULL};
    uint64_t nnz[2] = {0, 0};
    snprintf(path, sizeof path, "/tmp/hurray_ctest_mesh_%ld.mtx", (long)getpid());
    f = fopen(path, "wb");
    if (f == NULL) return 1;
    fprintf(f, "%%%%MatrixMarket matrix coordinate real general\n%d %d %d\n", SIDE * SIDE, SIDE * SIDE, LINES);
    for (a = 0; a < SIDE - 1; a++)
        for (b = 0; b < SIDE - 1; b++) {
            int n0 = a * SIDE + b;
            int tri[2][3] = {{n0, n0 + 1, n0 + SIDE}, {n0 + 1, n0 + SIDE + 1, n0 + SIDE}};
            for (t = 0; t < 2; t++)
                for (r = 0; r < 3; r++)
                    for (k = 0; k < 3; k++)
                        fprintf(f, "%d %d %.17g\n", tri[t][r] + 1, tri[t][k] + 1,
                                0.1 * (double)((n0 * 7 + t * 5 + r * 3 + k) % 23) - 1.0);
        }
    if (fclose(f) != 0) return 1;
    for (threads = 1; threads <= 2; threads++) {
        for (run = 0; run < 2; run++) {
            hurray_text_options o = {sizeof o, HURRAY_DUP_SUM, run ? HURRAY_ASSEMBLE_SCRATCH_IN_OUTPUT : 0,
                                     (uint32_t)threads, 0, 0};
            hurray_compressed c = ctest_compressed(HURRAY_FORMAT_CSR, HURRAY_INDEX_INT32, 1, NULL, 0, NULL, 0, NULL, 0);
            size_t i, changed = 0;
            CHECK_STATUS(hurray_read_mtx_compressed_size(path, &o, &c, NULL, NULL), HURRAY_OK, "");
            CHECK(c.indices_bytes == (size_t)LINES * 4 && c.values_bytes == (size_t)LINES * 8);
            offs[run] = malloc(c.offsets_bytes);
            cols[run] = malloc(c.indices_bytes);
            vals[run] = malloc(c.values_bytes);
            if (!offs[run] || !cols[run] || !vals[run]) return failures + 1;
            memset(cols[run], 0xA5, c.indices_bytes);
            memset(vals[run], 0xA5, c.values_bytes);
            c.offsets = offs[run], c.indices = cols[run], c.values = vals[run];
            CHECK_STATUS(hurray_read_mtx_compressed(path, &o, &c, &nnz[run], NULL), HURRAY_OK, "");
            for (i = (size_t)nnz[run] * 4; i < c.indices_bytes; i++)
                changed += ((unsigned char *)cols[run])[i] != 0xA5;
            CHECK(run ? changed > 0 : changed == 0);
        }
        /* An inner node's row holds 7 entries: itself and its 6 neighbours. */
        CHECK(nnz[0] == nnz[1] && nnz[0] > (uint64_t)LINES / 4 && nnz[0] < (uint64_t)LINES);
        CHECK(memcmp(offs[0], offs[1], (SIDE * SIDE + 1) * 4) == 0);
        CHECK(memcmp(cols[0], cols[1], (size_t)nnz[0] * 4) == 0);
        CHECK(memcmp(vals[0], vals[1], (size_t)nnz[0] * 8) == 0);
        for (run = 0; run < 2; run++) free(offs[run]), free(cols[run]), free(vals[run]);
    }
    CHECK_STATUS(hurray_coo_read_mtx_file(path, CTEST_TEXT(HURRAY_DUP_SUM, HURRAY_ASSEMBLE_SCRATCH_IN_OUTPUT, 1, 0),
                                          NULL, &coo),
                 HURRAY_ERR_INVALID_FLAGS, "into a handle");
    CHECK(coo == NULL);
    remove(path);
    return failures;
}

static const struct {
    const char *name;
    ctest_fn fn;
} TESTS[] = {
    {"mtx_straight_into_csr", test_mtx_straight_into_csr},
    {"mtx_compressed_scratch_in_output", test_mtx_compressed_scratch_in_output},
    {"failed_writes_leave_no_temporary", test_failed_writes_leave_no_temporary},
    {"mtx_from_memory", test_mtx_from_memory},
    {"mtx_errors_name_line_and_column", test_mtx_errors_name_line_and_column},
    {"write_sizes_and_round_trips", test_write_sizes_and_round_trips},
    {"tns_from_memory", test_tns_from_memory},
    {"gzip_and_streams", test_gzip_and_streams},
    {"symmetric_writes", test_symmetric_writes},
    {"values_in_the_solvers_type", test_values_in_the_solvers_type},
};

size_t ctest_text_count(void);
const char *ctest_text_name(size_t i);
int ctest_text_run(size_t i);

size_t ctest_text_count(void) { return sizeof TESTS / sizeof TESTS[0]; }
const char *ctest_text_name(size_t i) { return i < ctest_text_count() ? TESTS[i].name : NULL; }
int ctest_text_run(size_t i) { return i < ctest_text_count() ? TESTS[i].fn() : -1; }
