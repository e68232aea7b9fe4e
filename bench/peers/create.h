/* The bench drivers' shorthand for hurray_coo_create and the CSR export:
 * the parts and the options (flags, threads) as positional arguments. */
#ifndef PEERS_CREATE_H
#define PEERS_CREATE_H
#include <stdbool.h>
#include <string.h>

#include "hurray_coo.h"

static inline hurray_status bench_create(uint8_t type_tag, uint32_t rank, const uint64_t *shape,
                                         uint64_t nnz, bool is_sorted, const void *values,
                                         size_t values_bytes, const uint64_t *indices,
                                         size_t indices_bytes, uint32_t flags, uint32_t threads,
                                         hurray_coo **out) {
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
    return hurray_coo_create(&p, &o, out);
}

/* CSR (base 0) of coo into the three arrays of the sizes given. */
static inline hurray_status bench_export_csr(const hurray_coo *coo, uint32_t index_type,
                                             void *offsets, size_t offsets_bytes, void *indices,
                                             size_t indices_bytes, void *values,
                                             size_t values_bytes, uint32_t threads) {
    hurray_compressed c;
    memset(&c, 0, sizeof c);
    c.format = HURRAY_FORMAT_CSR;
    c.index_type = index_type;
    c.offsets = offsets;
    c.offsets_bytes = offsets_bytes;
    c.indices = indices;
    c.indices_bytes = indices_bytes;
    c.values = values;
    c.values_bytes = values_bytes;
    return hurray_coo_export_compressed(coo, &c, threads);
}

/* The sizes of that export. */
static inline hurray_status bench_csr_size(const hurray_coo *coo, uint32_t index_type,
                                           size_t *ob, size_t *ib, size_t *vb) {
    hurray_compressed c;
    hurray_status st;
    memset(&c, 0, sizeof c);
    c.format = HURRAY_FORMAT_CSR;
    c.index_type = index_type;
    st = hurray_coo_compressed_size(coo, &c);
    *ob = c.offsets_bytes;
    *ib = c.indices_bytes;
    *vb = c.values_bytes;
    return st;
}
#endif
