/* C tests of Hurray files through the header, as a solver uses them: write
 * tensors and metadata, open mapped and read, list, get zero-copy handles
 * that outlive the file, and hostile files and arguments. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "alloc64.h"
#include "ctest.h"

static void temp_path(char *buf, size_t n, const char *name) {
    snprintf(buf, n, "/tmp/hurray-ctest-%ld-%s", (long)getpid(), name);
}

/* A float64 3x3 tensor: (0,0)=4, (1,2)=-1, (2,1)=2.5, sorted. */
static hurray_coo *make_tensor(void) {
    static const double vals[3] = {4.0, -1.0, 2.5};
    static const uint64_t idx[6] = {0, 0, 1, 2, 2, 1};
    const uint64_t shape[2] = {3, 3};
    hurray_coo *coo = NULL;
    if (ctest_create(HURRAY_TYPE_FLOAT64, 2, shape, 3, true, vals, sizeof vals, idx, sizeof idx, HURRAY_COO_COPY, &coo) != HURRAY_OK)
        return NULL;
    return coo;
}

static int write_sample(const char *path, uint32_t flags) {
    int failures = 0;
    hurray_file_writer *w = NULL;
    hurray_coo *coo = make_tensor();
    const int64_t ints[3] = {1, -2, 3};
    const char *dims[2] = {"row", "col"};
    CHECK(coo != NULL);
    CHECK_STATUS(hurray_file_writer_create(path, 0, flags, &w), HURRAY_OK, "");
    CHECK_STATUS(hurray_file_writer_kv_string(w, "solver", "cg"), HURRAY_OK, "");
    CHECK_STATUS(hurray_file_writer_kv_float64(w, "tol", 1e-8), HURRAY_OK, "");
    CHECK_STATUS(hurray_file_writer_kv_bool(w, "spd", true), HURRAY_OK, "");
    CHECK_STATUS(hurray_file_writer_kv_array(w, "ints", HURRAY_KV_INT64, ints, 3), HURRAY_OK, "");
    CHECK_STATUS(hurray_file_writer_kv_string_array(w, "dims", dims, 2), HURRAY_OK, "");
    CHECK_STATUS(hurray_file_writer_kv_bytes(w, "raw", "\x01\x00\x02", 3), HURRAY_OK, "");
    CHECK_STATUS(hurray_file_writer_kv_int64(w, "tol", 1), HURRAY_ERR_INVALID_ARGUMENT,
                 "KV key \"tol\" is already");
    CHECK_STATUS(hurray_file_writer_add(w, "K", coo), HURRAY_OK, "");
    CHECK_STATUS(hurray_file_writer_add(w, "M", coo), HURRAY_OK, "");
    CHECK_STATUS(hurray_file_writer_add(w, "K", coo), HURRAY_ERR_INVALID_ARGUMENT,
                 "a tensor named \"K\" is already in this file");
    CHECK_STATUS(hurray_file_writer_kv_uint64(w, "late", 1), HURRAY_ERR_INVALID_ARGUMENT,
                 "before the first tensor");
    CHECK_STATUS(hurray_file_writer_finish(w), HURRAY_OK, "");
    hurray_coo_free(coo);
    return failures;
}

static int test_write_open_list_get(void) {
    int failures = 0;
    char path[256];
    hurray_file *f = NULL;
    hurray_file_tensor t;
    hurray_kv kv;
    hurray_coo *k = NULL;
    uint64_t i = 99;
    double d = 0.0;
    bool found = false;
    const uint64_t q[2] = {2, 1};
    temp_path(path, sizeof path, "sample.hrry");
    failures += write_sample(path, HURRAY_FILE_SORTED_INDEX | HURRAY_FILE_STATISTICS_FULL);
    for (uint32_t mode = 0; mode < 2; mode++) {
        CHECK_STATUS(hurray_file_open(path, mode ? HURRAY_FILE_READ_INTO_MEMORY : 0, &f), HURRAY_OK,
                     "");
        CHECK(hurray_file_tensor_count(f) == 2);
        CHECK_STATUS(hurray_file_tensor_info(f, 1, &t), HURRAY_OK, "");
        CHECK(t.name_len == 1 && strcmp(t.name, "M") == 0);
        CHECK(t.is_coo && t.layout_tag == 0x06 && t.type_tag == HURRAY_TYPE_FLOAT64);
        CHECK(t.rank == 2 && t.shape != NULL && t.shape[0] == 3 && t.nnz == 3);
        CHECK(t.data_offset % 4096 == 0 && t.descriptor_offset % 8 == 0);
        CHECK_STATUS(hurray_file_tensor_info(f, 2, &t), HURRAY_ERR_NOT_FOUND, "position 2");
        CHECK_STATUS(hurray_file_find(f, "K", &i), HURRAY_OK, "");
        CHECK(i == 0);
        CHECK_STATUS(hurray_file_find(f, "X", &i), HURRAY_ERR_NOT_FOUND,
                     "no tensor is named \"X\" in the index; the file holds \"K\", \"M\"");
        /* Metadata, in file order. */
        CHECK(hurray_file_kv_count(f) == 6);
        CHECK_STATUS(hurray_file_kv(f, 0, &kv), HURRAY_OK, "");
        CHECK(kv.tag == HURRAY_KV_STRING && strcmp(kv.key, "solver") == 0);
        CHECK(kv.data_len == 2 && strcmp((const char *)kv.data, "cg") == 0);
        CHECK_STATUS(hurray_file_kv(f, 1, &kv), HURRAY_OK, "");
        CHECK(kv.tag == HURRAY_KV_FLOAT64 && kv.f64 == 1e-8);
        CHECK_STATUS(hurray_file_kv(f, 2, &kv), HURRAY_OK, "");
        CHECK(kv.tag == HURRAY_KV_BOOL && kv.b);
        CHECK_STATUS(hurray_file_kv(f, 3, &kv), HURRAY_OK, "");
        CHECK(kv.tag == HURRAY_KV_ARRAY && kv.array_tag == HURRAY_KV_INT64 && kv.count == 3);
        CHECK(kv.data_len == 24 && ((const int64_t *)kv.data)[1] == -2);
        CHECK_STATUS(hurray_file_kv(f, 4, &kv), HURRAY_OK, "");
        CHECK(kv.array_tag == HURRAY_KV_STRING && kv.count == 2 && kv.data == NULL);
        CHECK_STATUS(hurray_file_kv_item(f, 4, 1, &kv), HURRAY_OK, "");
        CHECK(kv.tag == HURRAY_KV_STRING && strcmp((const char *)kv.data, "col") == 0);
        CHECK_STATUS(hurray_file_kv_item(f, 4, 2, &kv), HURRAY_ERR_NOT_FOUND, "");
        CHECK_STATUS(hurray_file_kv_item(f, 0, 0, &kv), HURRAY_ERR_INVALID_ARGUMENT,
                     "is a string, not an array");
        CHECK_STATUS(hurray_file_kv(f, 5, &kv), HURRAY_OK, "");
        CHECK(kv.tag == HURRAY_KV_BYTES && kv.data_len == 3 &&
              memcmp(kv.data, "\x01\x00\x02", 3) == 0);
        /* A row block: rows 1..2 of K hold (1,2)=-1 and (2,1)=2.5. */
        {
            hurray_coo *part = NULL;
            const uint64_t g[2] = {2, 1};
            CHECK_STATUS(hurray_file_get_rows(f, "K", 1, 3, 0, &part), HURRAY_OK, "");
            CHECK(hurray_coo_nnz(part) == 2 && hurray_coo_shape(part)[0] == 2);
            CHECK_STATUS(hurray_coo_lookup_global_f64(part, g, 2, &d, &found), HURRAY_OK, "");
            CHECK(found && d == 2.5);
            hurray_coo_free(part);
            part = (hurray_coo *)&failures;
            CHECK_STATUS(hurray_file_get_rows(f, "K", 2, 9, 0, &part), HURRAY_ERR_INVALID_ARGUMENT,
                         "row block 2 to 9 is not inside the tensor's 3 rows");
            CHECK(part == NULL);
            CHECK_STATUS(hurray_file_get_rows(f, "K", 0, 1, 1, &part), HURRAY_ERR_INVALID_FLAGS, "");
        }
        /* A handle that reads the file in place and outlives it. */
        CHECK_STATUS(hurray_file_get(f, "K", HURRAY_COO_INDEX, &k), HURRAY_OK, "");
        hurray_file_close(f);
        f = NULL;
        CHECK(hurray_coo_nnz(k) == 3 && !(hurray_coo_flags(k) & HURRAY_COO_COPY));
        CHECK_STATUS(hurray_coo_lookup_f64(k, q, 2, &d, &found), HURRAY_OK, "");
        CHECK(found && d == 2.5);
        {
            hurray_statistics s;
            bool present = false;
            CHECK_STATUS(hurray_coo_descriptor_statistics(k, &s, &present), HURRAY_OK, "");
            CHECK(present && s.value_max == 4.0);
        }
        CHECK_STATUS(hurray_coo_validate(k, 1), HURRAY_OK, "");
        hurray_coo_free(k);
        k = NULL;
    }
    unlink(path);
    return failures;
}

static int test_hostile_files_and_arguments(void) {
    int failures = 0;
    char path[256];
    hurray_file *f = (hurray_file *)&failures; /* must be reset to NULL */
    hurray_coo *k = (hurray_coo *)&failures;
    hurray_file_writer *w = (hurray_file_writer *)&failures;
    FILE *fp;
    long size;
    unsigned char *bytes;
    temp_path(path, sizeof path, "hostile.hrry");
    failures += write_sample(path, 0);
    fp = fopen(path, "rb");
    CHECK(fp != NULL);
    if (fp == NULL)
        return failures;
    fseek(fp, 0, SEEK_END);
    size = ftell(fp);
    fseek(fp, 0, SEEK_SET);
    bytes = (unsigned char *)malloc((size_t)size);
    CHECK(fread(bytes, 1, (size_t)size, fp) == (size_t)size);
    fclose(fp);
    /* NULLs and bad flags. */
    CHECK_STATUS(hurray_file_open(NULL, 0, &f), HURRAY_ERR_NULL_POINTER, "path");
    CHECK(f == NULL);
    CHECK_STATUS(hurray_file_open(path, 0, NULL), HURRAY_ERR_NULL_POINTER, "out");
    CHECK_STATUS(hurray_file_open(path, 0x10, &f), HURRAY_ERR_INVALID_FLAGS, "0x00000010");
    CHECK_STATUS(hurray_file_open("/nonexistent/x.hrry", 0, &f), HURRAY_ERR_IO, "/nonexistent");
    CHECK(hurray_file_tensor_count(NULL) == 0 && hurray_file_kv_count(NULL) == 0);
    CHECK_STATUS(hurray_file_get(NULL, "K", 0, &k), HURRAY_ERR_NULL_POINTER, "file");
    CHECK(k == NULL);
    hurray_file_close(NULL);
    hurray_file_writer_abort(NULL);
    CHECK_STATUS(hurray_file_writer_finish(NULL), HURRAY_ERR_NULL_POINTER, "writer");
    CHECK_STATUS(hurray_file_writer_create(path, 1000, 0, &w), HURRAY_ERR_INVALID_ARGUMENT,
                 "data_buffer_alignment 1000");
    CHECK(w == NULL);
    CHECK_STATUS(hurray_file_writer_create(path, 0, 6, &w), HURRAY_ERR_INVALID_FLAGS, "at most one");
    /* The bytes, whole and hand-broken. */
    CHECK_STATUS(hurray_file_open_bytes(bytes, (size_t)size, &f), HURRAY_OK, "");
    CHECK_STATUS(hurray_file_get(f, "K", 0x100, &k), HURRAY_ERR_INVALID_FLAGS, "");
    CHECK_STATUS(hurray_file_get(f, "nope", 0, &k), HURRAY_ERR_NOT_FOUND, "\"nope\"");
    CHECK_STATUS(hurray_file_get_at(f, 7, 0, &k), HURRAY_ERR_NOT_FOUND, "position 7");
    CHECK_STATUS(hurray_file_get_at(f, 1, HURRAY_COO_COPY, &k), HURRAY_OK, "");
    CHECK(hurray_coo_flags(k) & HURRAY_COO_COPY);
    hurray_coo_free(k);
    hurray_file_close(f);
    CHECK_STATUS(hurray_file_open_bytes(bytes, (size_t)size - 1, &f), HURRAY_ERR_INVALID_MAGIC,
                 "the trailer magic");
    CHECK_STATUS(hurray_file_open_bytes(bytes, 50, &f), HURRAY_ERR_TRUNCATED,
                 "byte 50 of the file: the file ends after 50 bytes");
    CHECK_STATUS(hurray_file_open_bytes(NULL, 10, &f), HURRAY_ERR_NULL_POINTER, "bytes");
    bytes[(size_t)size - 40 - 10] ^= 1; /* inside the index */
    CHECK_STATUS(hurray_file_open_bytes(bytes, (size_t)size, &f), HURRAY_ERR_CHECKSUM,
                 "CRC-32C");
    CHECK(f == NULL);
    free(bytes);
    /* An aborted writer leaves the old file in place, untouched. Before
     * that: KV values refused by their size before a byte is read or copied
     * (the lengths lie: the buffer holds 8 bytes), never an abort. */
    CHECK_STATUS(hurray_file_writer_create(path, 0, 0, &w), HURRAY_OK, "");
    {
        static const int64_t eight[1] = {7};
        CHECK_STATUS(hurray_file_writer_kv_bytes(w, "x", eight, (size_t)1 << 40),
                     HURRAY_ERR_INVALID_ARGUMENT, "KV entry \"x\": a string, byte sequence or "
                                                  "array is longer than 2^32 - 1");
        CHECK_STATUS(hurray_file_writer_kv_bytes(w, "x", eight, 0xFFFFFFFFu),
                     HURRAY_ERR_INVALID_ARGUMENT, "would make the KV section");
        CHECK_STATUS(hurray_file_writer_kv_array(w, "x", HURRAY_KV_INT64, eight, 1ull << 37),
                     HURRAY_ERR_INVALID_ARGUMENT, "longer than 2^32 - 1");
        CHECK_STATUS(hurray_file_writer_kv_array(w, "x", HURRAY_KV_INT64, eight, 1ull << 29),
                     HURRAY_ERR_INVALID_ARGUMENT, "would make the KV section");
        CHECK_STATUS(hurray_file_writer_kv_array(w, "x", HURRAY_KV_BOOL, eight, 0xFFFFFFFFull),
                     HURRAY_ERR_INVALID_ARGUMENT, "would make the KV section");
        CHECK_STATUS(hurray_file_writer_kv_string_array(w, "x", (const char *const *)eight,
                                                        1ull << 33),
                     HURRAY_ERR_INVALID_ARGUMENT, "longer than 2^32 - 1");
        /* The writer is still usable: the honest value goes in. */
        CHECK_STATUS(hurray_file_writer_kv_bytes(w, "x", eight, sizeof eight), HURRAY_OK, "");
    }
    hurray_file_writer_abort(w);
    CHECK_STATUS(hurray_file_open(path, 0, &f), HURRAY_OK, "");
    CHECK(hurray_file_tensor_count(f) == 2);
    hurray_file_close(f);
    unlink(path);
    return failures;
}

static const struct {
    const char *name;
    ctest_fn fn;
} TESTS[] = {
    {"write_open_list_get", test_write_open_list_get},
    {"hostile_files_and_arguments", test_hostile_files_and_arguments},
};

size_t ctest_file_count(void);
const char *ctest_file_name(size_t i);
int ctest_file_run(size_t i);

size_t ctest_file_count(void) { return sizeof TESTS / sizeof TESTS[0]; }
const char *ctest_file_name(size_t i) { return i < ctest_file_count() ? TESTS[i].name : NULL; }
int ctest_file_run(size_t i) { return i < ctest_file_count() ? TESTS[i].fn() : -1; }
