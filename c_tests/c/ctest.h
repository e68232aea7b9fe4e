/* Minimal harness for the C tests: each test is a function returning its
 * number of failed checks; every check prints where and why it failed. */
#ifndef HURRAY_CTEST_H
#define HURRAY_CTEST_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "hurray_coo.h"

#define CHECK(cond)                                                            \
    do {                                                                       \
        if (!(cond)) {                                                         \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__,   \
                    #cond);                                                    \
            failures++;                                                        \
        }                                                                      \
    } while (0)

/* Check a call's status, and that the thread's message contains `needle`
 * (pass "" to only require a non-empty message on failure). */
#define CHECK_STATUS(call, expected, needle)                                   \
    do {                                                                       \
        hurray_status st_ = (call);                                            \
        const char *msg_ = hurray_last_error_message();                        \
        if (st_ != (expected)) {                                               \
            fprintf(stderr, "%s:%d: %s returned %s, expected %s (%s)\n",       \
                    __FILE__, __LINE__, #call, hurray_status_name(st_),        \
                    hurray_status_name(expected), msg_);                       \
            failures++;                                                        \
        } else if ((expected) != HURRAY_OK &&                                  \
                   (msg_ == NULL || msg_[0] == '\0' ||                         \
                    strstr(msg_, (needle)) == NULL)) {                         \
            fprintf(stderr, "%s:%d: message \"%s\" lacks \"%s\"\n", __FILE__,  \
                    __LINE__, msg_ ? msg_ : "(null)", (needle));               \
            failures++;                                                        \
        }                                                                      \
    } while (0)

typedef int (*ctest_fn)(void);

/* hurray_coo_create with the parts and the options as positional arguments
 * (the tests build many small tensors): threads, the release callback and
 * the shard box as in hurray_coo_options, 0 / NULL for none. */
static inline hurray_status ctest_create_with(uint8_t type_tag, uint32_t rank,
                                              const uint64_t *shape, uint64_t nnz,
                                              bool is_sorted, const void *values,
                                              size_t values_bytes, const uint64_t *indices,
                                              size_t indices_bytes, uint32_t flags,
                                              uint32_t threads, hurray_release_fn release,
                                              void *release_ctx, const uint64_t *parent_shape,
                                              const uint64_t *shard_offset, hurray_coo **out) {
    hurray_coo_parts p;
    hurray_coo_options o;
    memset(&p, 0, sizeof p);
    memset(&o, 0, sizeof o);
    p.type_tag = type_tag;
    p.rank = rank;
    p.shape = shape;
    p.nnz = nnz;
    p.is_sorted = is_sorted;
    p.values = values;
    p.values_bytes = values_bytes;
    p.indices = indices;
    p.indices_bytes = indices_bytes;
    o.size = sizeof o;
    o.flags = flags;
    o.threads = threads;
    o.release = release;
    o.release_ctx = release_ctx;
    o.shard_parent_shape = parent_shape;
    o.shard_offset = shard_offset;
    return hurray_coo_create(&p, &o, out);
}

/* The same without threads, callback or shard box. */
static inline hurray_status ctest_create(uint8_t type_tag, uint32_t rank, const uint64_t *shape,
                                         uint64_t nnz, bool is_sorted, const void *values,
                                         size_t values_bytes, const uint64_t *indices,
                                         size_t indices_bytes, uint32_t flags, hurray_coo **out) {
    return ctest_create_with(type_tag, rank, shape, nnz, is_sorted, values, values_bytes, indices,
                             indices_bytes, flags, 1, NULL, NULL, NULL, NULL, out);
}

/* A hurray_compressed over the caller's three arrays. */
static inline hurray_compressed ctest_compressed(uint32_t format, uint32_t index_type,
                                                 uint32_t base, const void *offsets,
                                                 size_t offsets_bytes, const void *indices,
                                                 size_t indices_bytes, const void *values,
                                                 size_t values_bytes) {
    hurray_compressed c;
    memset(&c, 0, sizeof c);
    c.format = format;
    c.index_type = index_type;
    c.base = base;
    c.offsets = (void *)(uintptr_t)offsets;
    c.offsets_bytes = offsets_bytes;
    c.indices = (void *)(uintptr_t)indices;
    c.indices_bytes = indices_bytes;
    c.values = (void *)(uintptr_t)values;
    c.values_bytes = values_bytes;
    return c;
}

/* hurray_coo_compressed_size, export and import with the arrays as
 * positional arguments. */
static inline hurray_status ctest_compressed_size(const hurray_coo *coo, uint32_t format,
                                                  uint32_t index_type, size_t *ob, size_t *ib,
                                                  size_t *vb) {
    hurray_compressed c = ctest_compressed(format, index_type, 0, NULL, 0, NULL, 0, NULL, 0);
    hurray_status st = hurray_coo_compressed_size(coo, &c);
    if (ob) *ob = c.offsets_bytes;
    if (ib) *ib = c.indices_bytes;
    if (vb) *vb = c.values_bytes;
    return st;
}

static inline hurray_status ctest_export_compressed(const hurray_coo *coo, uint32_t format,
                                                    uint32_t index_type, uint32_t base,
                                                    void *offsets, size_t offsets_bytes,
                                                    void *indices, size_t indices_bytes,
                                                    void *values, size_t values_bytes,
                                                    uint32_t threads) {
    hurray_compressed c = ctest_compressed(format, index_type, base, offsets, offsets_bytes,
                                           indices, indices_bytes, values, values_bytes);
    return hurray_coo_export_compressed(coo, &c, threads);
}

static inline hurray_status ctest_from_compressed(uint32_t format, uint64_t rows, uint64_t cols,
                                                  uint32_t index_type, uint32_t base,
                                                  const void *offsets, size_t offsets_bytes,
                                                  const void *indices, size_t indices_bytes,
                                                  uint8_t type_tag, const void *values,
                                                  size_t values_bytes, uint32_t threads,
                                                  hurray_coo **out) {
    hurray_compressed c = ctest_compressed(format, index_type, base, offsets, offsets_bytes,
                                           indices, indices_bytes, values, values_bytes);
    return hurray_coo_from_compressed(rows, cols, &c, type_tag, threads, out);
}

/* The text readers' and writers' options as one expression: a pointer to a
 * hurray_text_options that lives until the end of the enclosing block. */
#define CTEST_TEXT(policy, flags, threads, precision)                          \
    (&(const hurray_text_options){sizeof(hurray_text_options), (policy), (flags),  \
                                  (threads), (precision), 0})

/* Triplets of a matrix: int32 row and column arrays (dims), float64 values,
 * in the given index base. */
static inline hurray_triplets ctest_triplets_i32_f64(const uint64_t *shape, uint64_t n,
                                                     const void **dims, uint32_t base,
                                                     const double *vals) {
    hurray_triplets t;
    memset(&t, 0, sizeof t);
    t.rank = 2;
    t.shape = shape;
    t.n = n;
    t.index_type = HURRAY_INDEX_INT32;
    t.index_base = base;
    t.dim_indices = dims;
    t.dim_indices_bytes = (size_t)n * sizeof(int32_t);
    t.type_tag = HURRAY_TYPE_FLOAT64;
    t.values = vals;
    t.values_bytes = (size_t)n * sizeof(double);
    return t;
}

/* The tests' pseudo-random numbers (xorshift64): the next value of *s. */
static inline uint64_t ctest_next(uint64_t *s) {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* The assembly options as one expression (see CTEST_TEXT). */
#define CTEST_ASSEMBLY(policy, flags, threads)                                 \
    (&(const hurray_assemble_options){sizeof(hurray_assemble_options), (policy), (flags),  \
                                      (threads)})

#endif
