/* The Hurray COO seed example, end to end from C: a 4x4 float32 tensor with
 * three non-zeros (0,1)=1.5, (2,0)=-0.5, (3,3)=2.0, borrowed zero-copy. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "hurray_coo.h"

/* Borrowed buffers must be 64-byte aligned (the Hurray buffer protocol);
 * pass HURRAY_COO_COPY instead if yours are not. */
typedef struct {
    _Alignas(64) float v[3];
} values_t;
typedef struct {
    _Alignas(64) uint64_t i[6];
} indices_t;

static int report(const char *what, hurray_status st) {
    if (st != HURRAY_OK) {
        fprintf(stderr, "%s: %s: %s\n", what, hurray_status_name(st), hurray_last_error_message());
        return 1;
    }
    return 0;
}

static int show(const hurray_coo *coo, uint64_t i, uint64_t j) {
    const uint64_t q[2] = {i, j};
    float value = 0.0f;
    bool found = false;
    hurray_status st = hurray_coo_lookup(coo, q, 2, &value, sizeof value, &found);
    if (st != HURRAY_OK) {
        printf("(%llu, %llu): %s: %s\n", (unsigned long long)i, (unsigned long long)j,
               hurray_status_name(st), hurray_last_error_message());
        return st;
    }
    printf("(%llu, %llu) = %g%s\n", (unsigned long long)i, (unsigned long long)j, value,
           found ? "" : " (not stored: implicit zero)");
    return 0;
}

int main(void) {
    static const values_t values = {{1.5f, -0.5f, 2.0f}};
    static const indices_t indices = {{0, 1, /**/ 2, 0, /**/ 3, 3}};
    const uint64_t shape[2] = {4, 4};
    hurray_coo *coo = NULL;
    int bad = 0;

    if (hurray_coo_abi_version() != HURRAY_COO_ABI_VERSION) {
        fprintf(stderr, "header and library ABI versions differ\n");
        return 1;
    }
    printf("libhurray_coo %s\n", hurray_coo_version_string());

    {
        /* The tensor, and how to make the handle: borrow the buffers (the
           default, as NULL options would), validate on this thread. */
        hurray_coo_parts parts;
        hurray_coo_options opts;
        memset(&parts, 0, sizeof parts);
        memset(&opts, 0, sizeof opts);
        parts.type_tag = 0x03; /* float32 */
        parts.rank = 2;
        parts.shape = shape;
        parts.nnz = 3;
        parts.is_sorted = true;
        parts.values = values.v;
        parts.values_bytes = sizeof values.v;
        parts.indices = indices.i;
        parts.indices_bytes = sizeof indices.i;
        opts.size = sizeof opts;
        opts.flags = HURRAY_COO_BORROW;
        opts.threads = 1;
        if (report("create", hurray_coo_create(&parts, &opts, &coo))) return 1;
    }
    printf("created a %llux%llu %s COO tensor with %llu non-zeros\n",
           (unsigned long long)hurray_coo_shape(coo)[0],
           (unsigned long long)hurray_coo_shape(coo)[1],
           hurray_type_name(hurray_coo_type_tag(coo)), (unsigned long long)hurray_coo_nnz(coo));
    bad |= report("validate", hurray_coo_validate(coo, 1));
    printf("validate: ok\n");

    bad |= show(coo, 0, 1); /* present */
    bad |= show(coo, 2, 0); /* present */
    bad |= show(coo, 3, 3); /* present */
    bad |= show(coo, 1, 2); /* absent */
    /* A query outside the shape is an error, not a zero. */
    if (show(coo, 4, 0) != HURRAY_ERR_INDEX_OUT_OF_BOUNDS) {
        bad = 1;
    }

    hurray_coo_free(coo);
    return bad;
}
