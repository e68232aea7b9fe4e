/* What the MPI tests share: this rank, the communicator size, the failed
 * check count, and CHECK (prints rank, file, line and condition). */
#ifndef HURRAY_MPITEST_H
#define HURRAY_MPITEST_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "hurray_coo.h"

static int me, size, failures;

#define CHECK(c)                                                                          \
    do {                                                                                  \
        if (!(c)) {                                                                       \
            fprintf(stderr, "rank %d: %s:%d: CHECK failed: %s\n", me, __FILE__, __LINE__, \
                    #c);                                                                  \
            failures++;                                                                   \
        }                                                                                 \
    } while (0)

/* hurray_coo_create with the parts and the options as positional
 * arguments (the tests build many shards): parent and offset NULL for a
 * tensor that is no shard. */
static inline hurray_status mpitest_create(uint8_t type_tag, uint32_t rank, const uint64_t *shape,
                                    uint64_t nnz, bool is_sorted, const void *values,
                                    size_t values_bytes, const uint64_t *indices,
                                    size_t indices_bytes, uint32_t flags, const uint64_t *parent,
                                    const uint64_t *offset, hurray_coo **out) {
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
    o.threads = 1;
    o.shard_parent_shape = parent;
    o.shard_offset = offset;
    return hurray_coo_create(&p, &o, out);
}

#endif
