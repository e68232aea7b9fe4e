/* libhurray_coo_mpi: distributed validation of sharded COO tensors, on the
 * public C API of libhurray_coo. See hurray_coo_mpi.h for the contract. */
#define _POSIX_C_SOURCE 200112L
#include "hurray_coo_mpi.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MSG_LEN 512

#if defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
#define THREAD_LOCAL _Thread_local
#else
#define THREAD_LOCAL __thread
#endif

static THREAD_LOCAL char last_message[MSG_LEN + 32];

const char *hurray_mpi_last_error_message(void) { return last_message; }

/* Copy src into dst (n bytes), cut if it must be. */
static void copy_text(char *dst, size_t n, const char *src) {
    size_t len = strlen(src);
    if (len >= n) len = n - 1;
    memcpy(dst, src, len);
    dst[len] = '\0';
}

/* Append src to the NUL-terminated dst (n bytes), cut if it must be. */
static void append_text(char *dst, size_t n, const char *src) {
    size_t at = strlen(dst);
    if (at + 1 < n) copy_text(dst + at, n - at, src);
}

static hurray_status fail(hurray_status st, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_message, sizeof last_message, fmt, ap);
    va_end(ap);
    return st;
}

/* What each rank tells every other: fixed size, sent as bytes (every rank
 * runs the same build of this library, so the layout agrees). */
typedef struct record {
    int32_t status;
    uint32_t rank;
    uint8_t type_tag;
    uint8_t is_shard;
    uint8_t pad[6];
    uint64_t nnz;
    uint64_t parent[HURRAY_MAX_RANK];
    uint64_t offset[HURRAY_MAX_RANK];
    uint64_t shape[HURRAY_MAX_RANK];
    hurray_statistics stats;
    char msg[MSG_LEN];
} record;

static void local_record(const hurray_coo *local, record *r) {
    const uint64_t *parent = NULL, *offset = NULL, *shape;
    bool present = false;
    uint32_t d;
    memset(r, 0, sizeof *r);
    if (local == NULL) {
        r->status = HURRAY_ERR_NULL_POINTER;
        snprintf(r->msg, MSG_LEN, "local is NULL");
        return;
    }
    r->status = hurray_coo_validate(local, 1);
    if (r->status != HURRAY_OK) {
        copy_text(r->msg, MSG_LEN, hurray_last_error_message());
    }
    r->rank = hurray_coo_rank(local);
    r->type_tag = hurray_coo_type_tag(local);
    r->nnz = hurray_coo_nnz(local);
    shape = hurray_coo_shape(local);
    if (hurray_coo_shard(local, &parent, &offset, &present) != HURRAY_OK) present = false;
    r->is_shard = present;
    for (d = 0; d < r->rank && d < HURRAY_MAX_RANK; d++) {
        r->shape[d] = shape[d];
        r->parent[d] = present ? parent[d] : shape[d];
        r->offset[d] = present ? offset[d] : 0;
    }
    if (r->status == HURRAY_OK && hurray_coo_statistics(local, &r->stats) != HURRAY_OK) {
        memset(&r->stats, 0, sizeof r->stats);
    }
}

static void shape_text(char *buf, size_t n, const uint64_t *s, uint32_t rank) {
    size_t at = 0;
    uint32_t d;
    buf[0] = '\0';
    for (d = 0; d < rank && at + 24 < n; d++) {
        at += (size_t)snprintf(buf + at, n - at, d ? " x %llu" : "%llu", (unsigned long long)s[d]);
    }
}

static int boxes_overlap(const record *a, const record *b) {
    uint32_t d;
    for (d = 0; d < a->rank; d++) {
        uint64_t la = a->offset[d], ha = a->offset[d] + a->shape[d];
        uint64_t lb = b->offset[d], hb = b->offset[d] + b->shape[d];
        if (!(la < hb && lb < ha)) return 0;
    }
    return 1;
}

#ifdef __SIZEOF_INT128__
__extension__ typedef unsigned __int128 wide;
#else
typedef long double wide;
#endif

/* The element count of a box, exactly when it fits (else *exact = 0). */
static wide exact_volume(const uint64_t *s, uint32_t rank, int *exact) {
    wide v = 1;
    uint32_t d;
    for (d = 0; d < rank; d++) {
        if (s[d] != 0 && v > ((wide)-1) / s[d]) *exact = 0;
        v *= s[d];
    }
    return v;
}

static double volume(const uint64_t *s, uint32_t rank) {
    double v = 1.0;
    uint32_t d;
    for (d = 0; d < rank; d++) v *= (double)s[d];
    return v;
}

/* The parent's statistics from every rank's own (each over its box). */
static void reduce_statistics(const record *all, int n, hurray_statistics *out) {
    const uint32_t range = HURRAY_STAT_VALUE_RANGE, moments = HURRAY_STAT_VALUE_STATS;
    uint32_t mask = HURRAY_STAT_NNZ | HURRAY_STAT_NAN_INF | range | moments;
    double total = volume(all[0].parent, all[0].rank), mean = 0.0, m2 = 0.0;
    int i, any = 0;
    memset(out, 0, sizeof *out);
    for (i = 0; i < n; i++) out->nnz += all[i].nnz;
    if (total > 0) {
        mask |= HURRAY_STAT_SPARSITY;
        out->sparsity_ratio = 1.0 - (double)out->nnz / total;
    }
    for (i = 0; i < n; i++) {
        const hurray_statistics *s = &all[i].stats;
        double v = volume(all[i].shape, all[i].rank);
        if (v == 0) continue;
        if (!(s->computed_mask & HURRAY_STAT_NAN_INF)) mask &= ~(uint32_t)HURRAY_STAT_NAN_INF;
        out->has_nan |= s->has_nan;
        out->has_inf |= s->has_inf;
        if (!(s->computed_mask & range)) {
            mask &= ~range;
        } else if (!any) {
            out->value_min = s->value_min;
            out->value_max = s->value_max;
        } else {
            out->value_min = fmin(out->value_min, s->value_min);
            out->value_max = fmax(out->value_max, s->value_max);
        }
        if (!(s->computed_mask & moments) || s->has_nan) mask &= ~moments;
        mean += v * s->value_mean;
        any = 1;
    }
    if (!any) mask &= ~(range | moments | (uint32_t)HURRAY_STAT_NAN_INF);
    if (mask & range) out->value_abs_max = fmax(fabs(out->value_min), fabs(out->value_max));
    if (mask & moments) {
        mean /= total;
        for (i = 0; i < n; i++) {
            const hurray_statistics *s = &all[i].stats;
            double v = volume(all[i].shape, all[i].rank), dm = s->value_mean - mean;
            if (v == 0) continue;
            m2 += v * (s->value_stddev * s->value_stddev + dm * dm);
        }
        out->value_mean = mean;
        out->value_stddev = sqrt(m2 / total);
        if (!isfinite(out->value_mean) || !isfinite(out->value_stddev)) mask &= ~moments;
    }
    out->computed_mask = mask;
}

hurray_status hurray_mpi_validate(const hurray_coo *local, MPI_Comm comm, hurray_mpi_report *out) {
    record mine, *all;
    int size = 0, me = 0, i, j;
    uint32_t d;
    char a[256], b[256];
    double covered = 0.0, whole;
    wide covered_exact = 0;
    int exact = 1;
    last_message[0] = '\0';
    if (out != NULL) {
        memset(out, 0, sizeof *out);
        out->failing_rank = -1;
    }
    if (MPI_Comm_size(comm, &size) != MPI_SUCCESS || MPI_Comm_rank(comm, &me) != MPI_SUCCESS) {
        return fail(HURRAY_ERR_INTERNAL, "MPI_Comm_size or MPI_Comm_rank failed");
    }
    local_record(local, &mine);
    all = (record *)calloc((size_t)size, sizeof *all);
    {
        /* Every rank must reach the allgather or none: agree first on
         * whether each could allocate its receive buffer. */
        int ok = all != NULL, all_ok = 0;
        if (MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, comm) != MPI_SUCCESS) {
            free(all);
            return fail(HURRAY_ERR_INTERNAL, "MPI_Allreduce failed");
        }
        if (!all_ok) {
            free(all);
            return fail(HURRAY_ERR_ALLOC, "a rank cannot allocate %d records of %d bytes for the "
                        "allgather", size, (int)sizeof(record));
        }
    }
    if (MPI_Allgather(&mine, (int)sizeof mine, MPI_BYTE, all, (int)sizeof mine, MPI_BYTE, comm) !=
        MPI_SUCCESS) {
        free(all);
        return fail(HURRAY_ERR_INTERNAL, "MPI_Allgather failed");
    }
    /* From here on every rank decides from the same bytes. */
    for (i = 0; i < size; i++) {
        if (all[i].status != HURRAY_OK) {
            hurray_status st = all[i].status;
            if (out != NULL) out->failing_rank = i;
            fail(st, "rank %d: %s", i, all[i].msg);
            free(all);
            return st;
        }
    }
    for (i = 1; i < size; i++) {
        hurray_status st = HURRAY_OK;
        if (all[i].type_tag != all[0].type_tag) {
            st = fail(HURRAY_ERR_INVALID_TYPE,
                      "rank %d holds element type 0x%02X, rank 0 holds 0x%02X: the shards of one "
                      "tensor share its type",
                      i, all[i].type_tag, all[0].type_tag);
        } else if (all[i].rank != all[0].rank) {
            st = fail(HURRAY_ERR_RANK_MISMATCH,
                      "rank %d holds a rank-%u shard, rank 0 a rank-%u shard", i, all[i].rank,
                      all[0].rank);
        } else if (memcmp(all[i].parent, all[0].parent, all[0].rank * sizeof(uint64_t)) != 0) {
            shape_text(a, sizeof a, all[i].parent, all[i].rank);
            shape_text(b, sizeof b, all[0].parent, all[0].rank);
            st = fail(HURRAY_ERR_INVALID_SHAPE,
                      "rank %d's shard is part of a %s parent, rank 0's of a %s parent", i, a, b);
        }
        if (st != HURRAY_OK) {
            if (out != NULL) out->failing_rank = i;
            free(all);
            return st;
        }
    }
    for (i = 0; i < size; i++) {
        for (j = i + 1; j < size; j++) {
            if (boxes_overlap(&all[i], &all[j])) {
                shape_text(a, sizeof a, all[i].offset, all[i].rank);
                shape_text(b, sizeof b, all[j].offset, all[j].rank);
                if (out != NULL) out->failing_rank = j;
                fail(HURRAY_ERR_INVALID_SHAPE,
                     "the boxes of rank %d (offset %s) and rank %d (offset %s) overlap: entries "
                     "in the overlap would be duplicates across ranks",
                     i, a, j, b);
                free(all);
                return HURRAY_ERR_INVALID_SHAPE;
            }
        }
        covered += volume(all[i].shape, all[i].rank);
        covered_exact += exact_volume(all[i].shape, all[i].rank, &exact);
    }
    whole = volume(all[0].parent, all[0].rank);
    /* Disjoint boxes inside the parent cover it exactly iff their volumes
     * add up to its volume (exact integers when they fit 128 bits). */
    if (exact ? covered_exact != exact_volume(all[0].parent, all[0].rank, &exact)
              : covered != whole) {
        shape_text(a, sizeof a, all[0].parent, all[0].rank);
        fail(HURRAY_ERR_INVALID_SHAPE,
             "the %d shards' boxes cover %.17g of the %.17g elements of the %s parent: shards "
             "must cover the parent exactly",
             size, covered, whole, a);
        free(all);
        return HURRAY_ERR_INVALID_SHAPE;
    }
    if (out != NULL) {
        out->rank = all[0].rank;
        for (d = 0; d < all[0].rank; d++) out->parent_shape[d] = all[0].parent[d];
        out->ranks = size;
        reduce_statistics(all, size, &out->statistics);
        out->global_nnz = out->statistics.nnz;
    }
    free(all);
    return HURRAY_OK;
}

/* ---- Distributed assembly ----------------------------------------------- */

__extension__ typedef unsigned __int128 u128;

/* A rank's status and message, gathered so that every rank returns the
 * first failing rank's. */
typedef struct verdict {
    int32_t status;
    char msg[MSG_LEN];
} verdict;

/* Agree on the first failing rank's status; on failure every rank's
 * message is "rank R: <its message>". */
static hurray_status agree(hurray_status mine, MPI_Comm comm) {
    int size = 0, i;
    verdict v, *all;
    hurray_status st = HURRAY_OK;
    int bad = mine != HURRAY_OK, any = 0;
    /* The common case, success everywhere, costs one small allreduce. */
    if (MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, comm) != MPI_SUCCESS) {
        return fail(HURRAY_ERR_INTERNAL, "MPI_Allreduce failed");
    }
    if (!any) {
        last_message[0] = '\0';
        return HURRAY_OK;
    }
    MPI_Comm_size(comm, &size);
    memset(&v, 0, sizeof v);
    v.status = mine;
    if (mine != HURRAY_OK) copy_text(v.msg, MSG_LEN, last_message);
    all = (verdict *)calloc((size_t)size, sizeof *all);
    {
        /* Every rank is here (any is global): all gather or none does. */
        int ok = all != NULL, all_ok = 0;
        if (MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, comm) != MPI_SUCCESS || !all_ok) {
            free(all);
            return fail(HURRAY_ERR_ALLOC, "a rank cannot allocate the error report");
        }
    }
    if (MPI_Allgather(&v, (int)sizeof v, MPI_BYTE, all, (int)sizeof v, MPI_BYTE, comm) !=
        MPI_SUCCESS) {
        free(all);
        return fail(HURRAY_ERR_INTERNAL, "MPI_Allgather failed");
    }
    for (i = 0; i < size; i++) {
        if (all[i].status != HURRAY_OK) {
            st = all[i].status;
            fail(st, "rank %d: %s", i, all[i].msg);
            break;
        }
    }
    free(all);
    return st;
}

struct hurray_mpi_plan {
    MPI_Comm comm;
    int size, me;
    size_t width;         /* bytes per value (0 for a pattern) */
    uint64_t n_triplets;  /* this rank's triplets */
    uint64_t n_send;      /* of them sent to other ranks */
    uint64_t *pick;       /* send slot -> triplet (other ranks' blocks) */
    uint64_t n_self;      /* of them this rank owns */
    uint64_t *self_pick;  /* received position rdispl[me] + k -> triplet */
    int identity;         /* one rank, nothing skipped: values arrive in order */
    int *scount, *sdispl, *rcount, *rdispl; /* MPI counts: self excluded */
    uint64_t self_at;     /* where this rank's own triplets go among the received */
    uint64_t n_recv;      /* received, own included */
    hurray_assembly_plan *local;
    uint64_t nnz;
    uint64_t bytes_sent;
    unsigned char *sendbuf, *recvbuf;
};

void hurray_mpi_plan_free(hurray_mpi_plan *p) {
    if (p == NULL) return;
    free(p->pick);
    free(p->self_pick);
    free(p->scount);
    free(p->sdispl);
    free(p->rcount);
    free(p->rdispl);
    free(p->sendbuf);
    free(p->recvbuf);
    hurray_assembly_plan_free(p->local);
    free(p);
}

uint64_t hurray_mpi_plan_bytes_sent(const hurray_mpi_plan *p) { return p ? p->bytes_sent : 0; }

/* The width of an index type, 0 when unknown. */
static size_t index_width(uint32_t t) {
    switch (t) {
    case HURRAY_INDEX_INT32:
    case HURRAY_INDEX_UINT32: return 4;
    case HURRAY_INDEX_INT64:
    case HURRAY_INDEX_UINT64: return 8;
    default: return 0;
    }
}

/* Coordinate d of triplet i as the caller wrote it, as int64 (UINT64
 * values past INT64_MAX become INT64_MAX: out of bounds either way). */
static int64_t coord(const hurray_triplets *t, uint64_t i, uint32_t d) {
    const void *p;
    uint64_t k;
    int64_t v;
    if (t->indices != NULL) {
        p = t->indices;
        k = i * t->rank + d;
    } else {
        p = t->dim_indices[d];
        k = i;
    }
    switch (t->index_type) {
    case HURRAY_INDEX_INT32: v = ((const int32_t *)p)[k]; break;
    case HURRAY_INDEX_UINT32: v = ((const uint32_t *)p)[k]; break;
    case HURRAY_INDEX_INT64: v = ((const int64_t *)p)[k]; break;
    default: {
        uint64_t u = ((const uint64_t *)p)[k];
        v = u > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)u;
    }
    }
    return v;
}

/* Dimension d of every triplet, as written, into out (n int64): one
 * typed loop per index type and layout. */
static void read_dim(const hurray_triplets *t, uint32_t d, int64_t *out) {
    const uint64_t n = t->n, stride = t->indices != NULL ? t->rank : 1;
    const void *base;
    const uint64_t first = t->indices != NULL ? d : 0;
    uint64_t i;
    /* With n = 0 both index arrays may be NULL (the header allows it):
     * nothing to read, and dim_indices must not be dereferenced. */
    if (n == 0) return;
    base = t->indices != NULL ? t->indices : t->dim_indices[d];
    switch (t->index_type) {
    case HURRAY_INDEX_INT32: {
        const int32_t *p = (const int32_t *)base + first;
        for (i = 0; i < n; i++) out[i] = p[i * stride];
        break;
    }
    case HURRAY_INDEX_UINT32: {
        const uint32_t *p = (const uint32_t *)base + first;
        for (i = 0; i < n; i++) out[i] = p[i * stride];
        break;
    }
    case HURRAY_INDEX_INT64: {
        const int64_t *p = (const int64_t *)base + first;
        for (i = 0; i < n; i++) out[i] = p[i * stride];
        break;
    }
    default: {
        const uint64_t *p = (const uint64_t *)base + first;
        for (i = 0; i < n; i++) out[i] = p[i * stride] > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)p[i * stride];
    }
    }
}

/* dst[k] = src[idx[k]] for n values of `width` bytes (constant-size copies
 * for the common widths). */
static void gather_values(unsigned char *dst, const unsigned char *src, const uint64_t *idx,
                          uint64_t n, size_t width) {
    uint64_t k;
#define GATHER(W)                                                        \
    for (k = 0; k < n; k++) memcpy(dst + k * (W), src + idx[k] * (W), (W)); \
    break
    switch (width) {
    case 0: break;
    case 1: GATHER(1);
    case 2: GATHER(2);
    case 4: GATHER(4);
    case 8: GATHER(8);
    case 16: GATHER(16);
    default:
        for (k = 0; k < n; k++) memcpy(dst + k * width, src + idx[k] * width, width);
    }
#undef GATHER
}

/* Check what the router reads of the caller's triplets; the width of a
 * value into *width. */
static hurray_status check_triplets(const hurray_triplets *t, size_t *width) {
    size_t iw;
    uint64_t vb = 0, v8 = 0;
    uint32_t d;
    if (t == NULL) return fail(HURRAY_ERR_NULL_POINTER, "triplets is NULL");
    if (t->rank == 0 || t->rank > HURRAY_MAX_RANK)
        return fail(HURRAY_ERR_INVALID_RANK, "triplets rank %u is not 1 to %u", t->rank,
                    (unsigned)HURRAY_MAX_RANK);
    if (t->shape == NULL) return fail(HURRAY_ERR_NULL_POINTER, "triplets shape is NULL");
    iw = index_width(t->index_type);
    if (iw == 0)
        return fail(HURRAY_ERR_INVALID_ARGUMENT, "index_type %u is not a HURRAY_INDEX_* type",
                    t->index_type);
    if (t->index_base > 1)
        return fail(HURRAY_ERR_INVALID_ARGUMENT, "index_base %u is not 0 or 1", t->index_base);
    if ((t->indices == NULL) == (t->dim_indices == NULL) && t->n > 0)
        return fail(HURRAY_ERR_INVALID_ARGUMENT, "exactly one of indices and dim_indices is set");
    if (t->n > SIZE_MAX / 8 / HURRAY_MAX_RANK) return fail(HURRAY_ERR_OVERFLOW, "%llu triplets do not fit memory", (unsigned long long)t->n);
    if (t->indices != NULL && t->indices_bytes != t->n * t->rank * iw)
        return fail(HURRAY_ERR_BUFFER_SIZE, "indices_bytes is %zu; n %llu x rank %u x %zu is %llu",
                    t->indices_bytes, (unsigned long long)t->n, t->rank, iw,
                    (unsigned long long)(t->n * t->rank * iw));
    if (t->dim_indices != NULL) {
        if (t->dim_indices_bytes != t->n * iw)
            return fail(HURRAY_ERR_BUFFER_SIZE, "dim_indices_bytes is %zu; n %llu x %zu is %llu",
                        t->dim_indices_bytes, (unsigned long long)t->n, iw,
                        (unsigned long long)(t->n * iw));
        for (d = 0; d < t->rank; d++)
            if (t->dim_indices[d] == NULL && t->n > 0)
                return fail(HURRAY_ERR_NULL_POINTER, "dim_indices[%u] is NULL", d);
    }
    if (t->type_tag == HURRAY_PATTERN) {
        /* A pattern has no values; values given with it are refused (a
         * forgotten type_tag must not drop them), as hurray_coo_assemble does. */
        if (t->values_bytes != 0)
            return fail(HURRAY_ERR_BUFFER_SIZE,
                        "triplets->values buffer is %zu bytes but type_tag HURRAY_PATTERN (0: a "
                        "pattern, no values; give the values' HURRAY_TYPE_* to assemble them) "
                        "needs exactly 0 bytes",
                        t->values_bytes);
        *width = 0;
        return HURRAY_OK;
    }
    if (hurray_type_values_bytes(t->type_tag, 8, &v8) != HURRAY_OK)
        return fail(hurray_type_values_bytes(t->type_tag, 8, &v8), "%s",
                    hurray_last_error_message());
    if (v8 % 8 != 0)
        return fail(HURRAY_ERR_UNSUPPORTED_TYPE,
                    "type tag 0x%02X packs several values per byte; distributed assembly moves "
                    "whole-byte values only",
                    t->type_tag);
    *width = (size_t)(v8 / 8);
    hurray_type_values_bytes(t->type_tag, t->n, &vb);
    if (t->values_bytes != vb || (t->values == NULL && t->n > 0))
        return fail(HURRAY_ERR_BUFFER_SIZE, "values_bytes is %zu; %llu values need %llu",
                    t->values_bytes, (unsigned long long)t->n, (unsigned long long)vb);
    return HURRAY_OK;
}

/* The caller's size + 1 row boundaries (HURRAY_MPI_ROWS_GIVEN) into b,
 * checked: they start at 0, never decrease and end at the row extent. */
static hurray_status given_blocks(const uint64_t *given, int size, uint64_t rows, uint64_t *b) {
    int k;
    if (given == NULL) return fail(HURRAY_ERR_NULL_POINTER, "boundaries is NULL");
    for (k = 0; k <= size; k++) {
        b[k] = given[k];
        if ((k == 0 && b[k] != 0) || (k > 0 && b[k] < b[k - 1]) || (k == size && b[k] != rows))
            return fail(HURRAY_ERR_INVALID_ARGUMENT,
                        "boundaries must start at 0, never decrease and end at the row "
                        "extent %llu (boundary %d is %llu)",
                        (unsigned long long)rows, k, (unsigned long long)b[k]);
    }
    return HURRAY_OK;
}

/* The size + 1 row boundaries of the ownership. */
static hurray_status row_blocks(const hurray_triplets *t, uint32_t ownership,
                                const uint64_t *given, int size, MPI_Comm comm, uint64_t *b) {
    uint64_t rows = t->shape[0];
    int k;
    if (ownership == HURRAY_MPI_ROWS_EQUAL) {
        for (k = 0; k <= size; k++) b[k] = (uint64_t)((u128)rows * (u128)k / (u128)size);
        return HURRAY_OK;
    }
    if (ownership == HURRAY_MPI_ROWS_GIVEN) return given_blocks(given, size, rows, b);
    if (ownership == HURRAY_MPI_ROWS_BALANCED) {
        /* A histogram of rows over up to 64 bins per rank, summed over the
         * ranks; blocks cut at bin starts. */
        uint64_t bins = rows < (uint64_t)size * 64 ? rows : (uint64_t)size * 64, i, sum = 0, total = 0;
        uint64_t *h, *g;
        if (bins == 0) bins = 1;
        h = (uint64_t *)calloc(bins, sizeof *h);
        g = (uint64_t *)calloc(bins, sizeof *g);
        if (h == NULL || g == NULL) {
            free(h);
            free(g);
            return fail(HURRAY_ERR_ALLOC, "cannot allocate the row histogram");
        }
        for (i = 0; i < t->n; i++) {
            int64_t r = coord(t, i, 0) - (int64_t)t->index_base;
            if (r >= 0 && (uint64_t)r < rows) h[(uint64_t)((u128)(uint64_t)r * bins / rows)]++;
        }
        if (MPI_Allreduce(h, g, (int)bins, MPI_UINT64_T, MPI_SUM, comm) != MPI_SUCCESS) {
            free(h);
            free(g);
            return fail(HURRAY_ERR_INTERNAL, "MPI_Allreduce failed");
        }
        for (i = 0; i < bins; i++) total += g[i];
        b[0] = 0;
        k = 1;
        for (i = 0; i < bins && k < size; i++) {
            sum += g[i];
            while (k < size && (u128)sum * (u128)size >= (u128)total * (u128)k) {
                /* Block k starts after bin i. */
                b[k++] = (uint64_t)(((u128)(i + 1) * rows + bins - 1) / bins);
            }
        }
        while (k <= size) b[k++] = rows;
        for (k = 1; k <= size; k++)
            if (b[k] < b[k - 1]) b[k] = b[k - 1];
        free(h);
        free(g);
        return HURRAY_OK;
    }
    return fail(HURRAY_ERR_INVALID_ARGUMENT,
                "ownership %u is not HURRAY_MPI_ROWS_EQUAL, _BALANCED or _GIVEN", ownership);
}

/* The rank owning row r (the last block with b[k] <= r). */
static int owner(const uint64_t *b, int size, uint64_t r) {
    int lo = 0, hi = size; /* b[lo] <= r < b[hi] */
    while (hi - lo > 1) {
        int mid = (lo + hi) / 2;
        if (b[mid] <= r) lo = mid;
        else hi = mid;
    }
    return lo;
}

/* Facts every rank must agree on. */
typedef struct facts {
    uint32_t rank, base, ownership, policy, flags;
    uint8_t type_tag;
    uint8_t pad[3];
    uint64_t shape[HURRAY_MAX_RANK];
} facts;

typedef struct keep {
    hurray_coo *assembled;
    void *indices;
} keep;

static void release_keep(void *ctx) {
    keep *k = (keep *)ctx;
    hurray_coo_free(k->assembled);
    free(k->indices);
    free(k);
}

/* The library's last failure as numbers (hurray_last_error_position);
 * status HURRAY_OK and nothing set when it cannot be read. */
static hurray_error_position last_position(void) {
    hurray_error_position p;
    memset(&p, 0, sizeof p);
    p.size = sizeof p;
    if (hurray_last_error_position(&p) != HURRAY_OK) {
        memset(&p, 0, sizeof p);
        p.detail = "";
    }
    return p;
}

/* The coordinates of the last duplicate this rank's local assembly found
 * (as the triplets were written), for hurray_mpi_read_mtx to name the
 * file's lines. */
static THREAD_LOCAL struct {
    int set;
    uint32_t rank;
    uint64_t coords[HURRAY_MAX_RANK];
} last_duplicate;

/* The core's message about the received triplets, with the triplets it
 * names (the position's entry and other entry, counted from base) told as
 * the ranks and numbers their senders gave them. */
static void name_triplets(const uint64_t *src_rank, const uint64_t *src_index, uint64_t n,
                          uint32_t base) {
    const hurray_error_position p = last_position();
    const uint32_t bits[2] = {HURRAY_POS_ENTRY, HURRAY_POS_OTHER_ENTRY};
    const uint64_t nums[2] = {p.entry, p.other_entry};
    char out[MSG_LEN];
    size_t at = 0;
    int k;
    out[0] = '\0';
    copy_text(last_message, sizeof last_message, hurray_last_error_message());
    for (k = 0; k < 2; k++) {
        uint64_t i = nums[k] - base;
        if (!(p.set & bits[k]) || nums[k] < base || i >= n || at + 80 >= sizeof out) continue;
        at += (size_t)snprintf(out + at, sizeof out - at, "%striplet %llu is rank %llu's triplet %llu",
                               at ? "; " : " (", (unsigned long long)nums[k],
                               (unsigned long long)src_rank[i],
                               (unsigned long long)src_index[i] + base);
    }
    append_text(last_message, sizeof last_message, out);
    if (at) {
        append_text(last_message, sizeof last_message,
                    "; triplets are numbered in the order this rank received them)");
    }
    last_duplicate.set = p.status == HURRAY_ERR_DUPLICATE && (p.set & HURRAY_POS_COORDINATES);
    if (last_duplicate.set) {
        last_duplicate.rank = p.rank;
        for (k = 0; k < (int)p.rank && k < HURRAY_MAX_RANK; k++)
            last_duplicate.coords[k] = p.coordinates[k];
    }
}

hurray_status hurray_mpi_assemble(const hurray_triplets *t, uint32_t policy, uint32_t flags,
                                  uint32_t ownership, const uint64_t *given, MPI_Comm comm,
                                  hurray_coo **out, hurray_mpi_plan **out_plan) {
    int size = 0, me = 0, k;
    hurray_status st = HURRAY_OK;
    hurray_mpi_plan *p = NULL;
    uint64_t *b = NULL, i, *dest = NULL;
    size_t width = 0;
    facts mine, *all = NULL;
    hurray_coo *assembled = NULL, *shard = NULL;
    hurray_assembly_plan *lplan = NULL;
    int64_t *lidx = NULL, *tmp = NULL;
    unsigned char *lval = NULL;
    uint64_t *src_rank = NULL, *src_index = NULL;
    last_message[0] = '\0';
    if (out != NULL) *out = NULL;
    if (out_plan != NULL) *out_plan = NULL;
    last_duplicate.set = 0;
    if (MPI_Comm_size(comm, &size) != MPI_SUCCESS || MPI_Comm_rank(comm, &me) != MPI_SUCCESS)
        return fail(HURRAY_ERR_INTERNAL, "MPI_Comm_size or MPI_Comm_rank failed");

    /* 1. Local checks, facts, ownership. */
    memset(&mine, 0, sizeof mine);
    if (out == NULL) st = fail(HURRAY_ERR_NULL_POINTER, "out is NULL");
    if (st == HURRAY_OK) st = check_triplets(t, &width);
    if (st == HURRAY_OK) {
        mine.rank = t->rank;
        mine.base = t->index_base;
        mine.ownership = ownership;
        mine.policy = policy;
        mine.flags = flags;
        mine.type_tag = t->type_tag;
        memcpy(mine.shape, t->shape, t->rank * sizeof(uint64_t));
    }
    /* The facts travel with the statuses: one allgather. */
    all = (facts *)calloc((size_t)size, sizeof *all);
    b = (uint64_t *)calloc((size_t)size + 1, sizeof *b);
    p = (hurray_mpi_plan *)calloc(1, sizeof *p);
    if (st == HURRAY_OK && (all == NULL || b == NULL || p == NULL))
        st = fail(HURRAY_ERR_ALLOC, "cannot allocate the assembly's bookkeeping");
    if ((st = agree(st, comm)) != HURRAY_OK) goto done;
    if (MPI_Allgather(&mine, (int)sizeof mine, MPI_BYTE, all, (int)sizeof mine, MPI_BYTE, comm) !=
        MPI_SUCCESS) {
        st = fail(HURRAY_ERR_INTERNAL, "MPI_Allgather failed");
        goto done;
    }
    for (k = 1; k < size; k++) {
        if (memcmp(&all[k], &all[0], sizeof mine) != 0) {
            st = fail(HURRAY_ERR_INVALID_ARGUMENT,
                      "rank %d's call differs from rank 0's in rank, shape, element type, index "
                      "base, ownership, duplicate policy or flags: every rank assembles the same "
                      "tensor the same way",
                      k);
            goto done;
        }
    }
    st = row_blocks(t, ownership, given, size, comm, b);
    if ((st = agree(st, comm)) != HURRAY_OK) goto done;

    /* One rank: nothing to route; the core assembles the caller's triplets
     * as they are, and the plan reads the caller's values in place. */
    if (size == 1) {
        p->comm = comm;
        p->size = 1;
        p->width = width;
        p->n_triplets = p->n_recv = p->n_self = t->n;
        p->identity = 1;
        st = hurray_coo_assemble(t, policy, flags, 1, &assembled, out_plan ? &lplan : NULL);
        if (st != HURRAY_OK) copy_text(last_message, sizeof last_message, hurray_last_error_message());
        goto shard;
    }

    /* 2. Route: each triplet to the owner of its row; this rank's own go
     * straight to where the received ones will be, never through MPI. */
    p->comm = comm;
    p->size = size;
    p->me = me;
    p->width = width;
    p->n_triplets = t->n;
    p->scount = (int *)calloc((size_t)size, sizeof(int));
    p->sdispl = (int *)calloc((size_t)size, sizeof(int));
    p->rcount = (int *)calloc((size_t)size, sizeof(int));
    p->rdispl = (int *)calloc((size_t)size, sizeof(int));
    dest = (uint64_t *)malloc((t->n ? t->n : 1) * sizeof *dest);
    tmp = (int64_t *)malloc((t->n ? t->n : 1) * sizeof *tmp);
    if (!p->scount || !p->sdispl || !p->rcount || !p->rdispl || !dest || !tmp) {
        st = fail(HURRAY_ERR_ALLOC, "cannot allocate the routing of %llu triplets",
                  (unsigned long long)t->n);
    }
    if (st == HURRAY_OK) {
        uint32_t d;
        uint64_t *counts = (uint64_t *)calloc((size_t)size, sizeof(uint64_t));
        /* Skipped triplets first (any negative coordinate), then rows. */
        for (i = 0; i < t->n; i++) dest[i] = 0;
        if (flags & HURRAY_ASSEMBLE_SKIP_NEGATIVE) {
            for (d = 0; d < t->rank; d++) {
                read_dim(t, d, tmp);
                for (i = 0; i < t->n; i++)
                    if (tmp[i] < 0) dest[i] = UINT64_MAX;
            }
        }
        read_dim(t, 0, tmp);
        if (counts == NULL) st = fail(HURRAY_ERR_ALLOC, "cannot allocate the counts");
        for (i = 0; st == HURRAY_OK && i < t->n; i++) {
            int64_t raw = tmp[i], r = raw == INT64_MIN ? raw : raw - (int64_t)t->index_base;
            if (dest[i] == UINT64_MAX) continue;
            if (r < 0 || (uint64_t)r >= t->shape[0]) {
                st = fail(HURRAY_ERR_INDEX_OUT_OF_BOUNDS,
                          "triplet %llu: row coordinate %lld is outside the shape (%llu rows, "
                          "counted from %u)",
                          (unsigned long long)i + t->index_base, (long long)raw,
                          (unsigned long long)t->shape[0], t->index_base);
                break;
            }
            dest[i] = (uint64_t)owner(b, size, (uint64_t)r);
            counts[dest[i]]++;
        }
        for (k = 0; st == HURRAY_OK && k < size; k++) {
            /* MPI counts are ints, and coordinates travel rank per triplet. */
            if (counts[k] * t->rank > INT32_MAX)
                st = fail(HURRAY_ERR_OVERFLOW, "more than 2^31 - 1 coordinates go to rank %d", k);
            p->scount[k] = (int)counts[k];
        }
        free(counts);
    }
    if ((st = agree(st, comm)) != HURRAY_OK) goto done;
    if (MPI_Alltoall(p->scount, 1, MPI_INT, p->rcount, 1, MPI_INT, comm) != MPI_SUCCESS) {
        st = fail(HURRAY_ERR_INTERNAL, "MPI_Alltoall failed");
        goto done;
    }
    /* Own triplets keep their place among the received (source-rank
     * order), but are not counted in the MPI exchange. */
    p->n_self = (uint64_t)p->scount[me];
    for (k = 0; k < size; k++) {
        if (k == me) {
            p->self_at = p->n_recv;
            p->n_recv += p->n_self;
            p->scount[k] = p->rcount[k] = 0;
            continue;
        }
        p->n_send += (uint64_t)p->scount[k];
        p->rdispl[k] = (int)p->n_recv;
        p->n_recv += (uint64_t)p->rcount[k];
        p->bytes_sent += (uint64_t)p->scount[k] * width;
    }
    for (k = 1; k < size; k++) p->sdispl[k] = p->sdispl[k - 1] + p->scount[k - 1];
    if (p->n_send * t->rank > INT32_MAX || p->n_recv * t->rank > INT32_MAX)
        st = fail(HURRAY_ERR_OVERFLOW, "more than 2^31 - 1 coordinates leave or reach rank %d", me);

    /* 3. Exchange coordinates, the senders' numbers and values, each as one
     * array (MPI_Alltoallv per array). The received arrays hold every
     * rank's triplets in rank order, own ones at self_at. */
    {
        uint64_t nr = p->n_recv ? p->n_recv : 1, ns = p->n_send ? p->n_send : 1;
        uint64_t *slot = (uint64_t *)malloc((t->n ? t->n : 1) * sizeof(uint64_t));
        int64_t *sc = NULL;
        uint64_t *si = NULL;
        unsigned char *sv = NULL;
        int *fill = (int *)calloc((size_t)size, sizeof(int));
        uint64_t own = 0;
        int *cc = (int *)calloc((size_t)size, sizeof(int)), *cd = (int *)calloc((size_t)size, sizeof(int));
        int *rc2 = (int *)calloc((size_t)size, sizeof(int)), *rd2 = (int *)calloc((size_t)size, sizeof(int));
        if (st == HURRAY_OK) {
            p->pick = (uint64_t *)malloc(ns * sizeof(uint64_t));
            p->self_pick = (uint64_t *)malloc((p->n_self ? p->n_self : 1) * sizeof(uint64_t));
            sc = (int64_t *)malloc(ns * t->rank * sizeof(int64_t));
            si = (uint64_t *)malloc(ns * sizeof(uint64_t));
            sv = (unsigned char *)malloc(ns * (width ? width : 1));
            lidx = (int64_t *)malloc(nr * t->rank * sizeof(int64_t));
            lval = (unsigned char *)malloc(nr * (width ? width : 1));
            src_rank = (uint64_t *)malloc(nr * sizeof(uint64_t));
            src_index = (uint64_t *)malloc(nr * sizeof(uint64_t));
            if (!slot || !fill || !cc || !cd || !rc2 || !rd2 || !p->pick || !p->self_pick || !sc ||
                !si || !sv || !lidx || !lval || !src_rank || !src_index)
                st = fail(HURRAY_ERR_ALLOC, "cannot allocate the exchange of %llu triplets",
                          (unsigned long long)t->n);
        }
        if (st == HURRAY_OK) {
            uint32_t d;
            uint64_t r = t->rank, self0 = p->n_send, dump = p->n_send + p->n_self;
            /* Where each triplet goes in one staging area: its send slot,
             * or after the sends (own triplets, copied to their received
             * place below), or a last slot for skipped ones; the scatters
             * below then have no branch. */
            int64_t *stage = (int64_t *)realloc(sc, (dump + 1) * r * sizeof(int64_t));
            uint64_t *stage_i = (uint64_t *)realloc(si, (dump + 1) * sizeof(uint64_t));
            if (stage == NULL || stage_i == NULL) {
                free(stage ? stage : sc);
                free(stage_i ? stage_i : si);
                sc = NULL;
                si = NULL;
                st = fail(HURRAY_ERR_ALLOC, "cannot allocate the exchange staging");
            } else {
                sc = stage;
                si = stage_i;
                for (i = 0; i < t->n; i++) {
                    uint64_t to = dest[i];
                    if (to == UINT64_MAX) {
                        slot[i] = dump;
                    } else if ((int)to == me) {
                        p->self_pick[own] = i;
                        slot[i] = self0 + own++;
                    } else {
                        uint64_t at = (uint64_t)p->sdispl[to] + (uint64_t)fill[to]++;
                        p->pick[at] = i;
                        slot[i] = at;
                    }
                }
                p->identity = 0;
                for (d = 0; d < r; d++) {
                    read_dim(t, d, tmp);
                    for (i = 0; i < t->n; i++) sc[slot[i] * r + d] = tmp[i];
                }
                for (i = 0; i < t->n; i++) si[slot[i]] = i;
                memcpy(lidx + p->self_at * r, sc + self0 * r, p->n_self * r * sizeof(int64_t));
                memcpy(src_index + p->self_at, si + self0, p->n_self * sizeof(uint64_t));
                for (i = 0; i < p->n_self; i++) src_rank[p->self_at + i] = (uint64_t)me;
                gather_values(sv, (const unsigned char *)t->values, p->pick, p->n_send, width);
                gather_values(lval + p->self_at * width, (const unsigned char *)t->values,
                              p->self_pick, p->n_self, width);
                for (k = 0; k < size; k++) {
                    cc[k] = p->scount[k] * (int)r;
                    cd[k] = p->sdispl[k] * (int)r;
                    rc2[k] = p->rcount[k] * (int)r;
                    rd2[k] = p->rdispl[k] * (int)r;
                    for (uint64_t q = 0; q < (uint64_t)p->rcount[k]; q++)
                        src_rank[(uint64_t)p->rdispl[k] + q] = (uint64_t)k;
                }
            }
        }
        if ((st = agree(st, comm)) == HURRAY_OK) {
            MPI_Datatype vt = MPI_DATATYPE_NULL;
            int bad = MPI_Alltoallv(sc, cc, cd, MPI_INT64_T, lidx, rc2, rd2, MPI_INT64_T, comm) !=
                          MPI_SUCCESS ||
                      MPI_Alltoallv(si, p->scount, p->sdispl, MPI_UINT64_T, src_index, p->rcount,
                                    p->rdispl, MPI_UINT64_T, comm) != MPI_SUCCESS;
            if (!bad && width > 0) {
                MPI_Type_contiguous((int)width, MPI_BYTE, &vt);
                MPI_Type_commit(&vt);
                bad = MPI_Alltoallv(sv, p->scount, p->sdispl, vt, lval, p->rcount, p->rdispl, vt,
                                    comm) != MPI_SUCCESS;
                MPI_Type_free(&vt);
            }
            if (bad) st = fail(HURRAY_ERR_INTERNAL, "MPI_Alltoallv failed");
        }
        free(slot);
        free(sc);
        free(si);
        free(sv);
        free(fill);
        free(cc);
        free(cd);
        free(rc2);
        free(rd2);
        if (st != HURRAY_OK) goto done;
    }

    /* 4. Local assembly of every triplet this rank owns (global
     * coordinates), in source-rank order, then its rows as a shard. */
    {
        hurray_triplets lt;
        memset(&lt, 0, sizeof lt);
        lt.rank = t->rank;
        lt.shape = t->shape;
        lt.n = p->n_recv;
        lt.index_type = HURRAY_INDEX_INT64;
        lt.index_base = t->index_base; /* so that messages count as the caller does */
        lt.indices = p->n_recv ? lidx : NULL;
        lt.indices_bytes = p->n_recv * t->rank * 8;
        lt.type_tag = t->type_tag;
        lt.values = width && p->n_recv ? lval : NULL;
        lt.values_bytes = p->n_recv * width;
        st = hurray_coo_assemble(&lt, policy, flags, 1, &assembled, out_plan ? &lplan : NULL);
        if (st != HURRAY_OK) name_triplets(src_rank, src_index, p->n_recv, t->index_base);
    }
shard:
    if (st == HURRAY_OK) {
        /* Shift rows into the block; values stay where assembly put them. */
        uint32_t rank = t->rank, d;
        uint64_t nnz = hurray_coo_nnz(assembled), shard_shape[HURRAY_MAX_RANK],
                 offset[HURRAY_MAX_RANK];
        size_t vb = 0, ib = 0;
        const void *vals = hurray_coo_values(assembled, &vb);
        const uint64_t *idx = hurray_coo_indices(assembled, &ib);
        keep *kp = (keep *)calloc(1, sizeof *kp);
        void *shifted = NULL;
        if (kp == NULL || (ib > 0 && posix_memalign(&shifted, 64, ib) != 0)) {
            free(kp);
            st = fail(HURRAY_ERR_ALLOC, "cannot allocate the shard's %zu-byte indices", ib);
        } else {
            uint64_t *s = (uint64_t *)shifted;
            for (i = 0; i < nnz; i++) {
                s[i * rank] = idx[i * rank] - b[me]; /* the handle is 0-based */
                for (d = 1; d < rank; d++) s[i * rank + d] = idx[i * rank + d];
            }
            for (d = 0; d < rank; d++) {
                shard_shape[d] = d == 0 ? b[me + 1] - b[me] : t->shape[d];
                offset[d] = d == 0 ? b[me] : 0;
            }
            kp->assembled = assembled;
            kp->indices = shifted;
            assembled = NULL; /* now the shard's, through the release callback */
            {
                hurray_coo_parts parts;
                hurray_coo_options opts;
                memset(&parts, 0, sizeof parts);
                memset(&opts, 0, sizeof opts);
                parts.type_tag = hurray_coo_type_tag(kp->assembled);
                parts.rank = rank;
                parts.shape = shard_shape;
                parts.nnz = nnz;
                parts.is_sorted = true;
                parts.values = vals;
                parts.values_bytes = vb;
                parts.indices = (const uint64_t *)shifted;
                parts.indices_bytes = ib;
                opts.size = sizeof opts;
                opts.flags = HURRAY_COO_BORROW;
                opts.threads = 1;
                opts.release = release_keep;
                opts.release_ctx = kp;
                opts.shard_parent_shape = t->shape;
                opts.shard_offset = offset;
                st = hurray_coo_create(&parts, &opts, &shard);
            }
            if (st != HURRAY_OK)
                copy_text(last_message, sizeof last_message, hurray_last_error_message());
            p->nnz = nnz;
        }
    }
    if ((st = agree(st, comm)) != HURRAY_OK) goto done;

    /* 5. Keep what re-assembly needs: the send order, the counts, the local
     * plan, and value buffers allocated once. */
    if (out_plan != NULL) {
        p->local = lplan;
        lplan = NULL;
        p->sendbuf = (unsigned char *)malloc((p->n_send ? p->n_send : 1) * (width ? width : 1));
        p->recvbuf = p->identity ? (unsigned char *)malloc(1)
                                 : (unsigned char *)malloc((p->n_recv ? p->n_recv : 1) * (width ? width : 1));
        st = p->sendbuf && p->recvbuf ? HURRAY_OK
                                      : fail(HURRAY_ERR_ALLOC, "cannot allocate the plan's buffers");
        if ((st = agree(st, comm)) != HURRAY_OK) goto done;
        *out_plan = p;
        p = NULL;
    }
    *out = shard;
    shard = NULL;

done:
    hurray_coo_free(shard);
    hurray_coo_free(assembled);
    hurray_assembly_plan_free(lplan);
    hurray_mpi_plan_free(p);
    free(all);
    free(b);
    free(dest);
    free(tmp);
    free(lidx);
    free(lval);
    free(src_rank);
    free(src_index);
    return st;
}

hurray_status hurray_mpi_plan_apply(hurray_mpi_plan *p, const void *values, size_t values_bytes,
                                    void *out_values, size_t out_bytes) {
    hurray_status st = HURRAY_OK;
    const unsigned char *src;
    last_message[0] = '\0';
    if (p == NULL) return fail(HURRAY_ERR_NULL_POINTER, "plan is NULL");
    if (values_bytes != p->n_triplets * p->width || (values == NULL && values_bytes > 0))
        st = fail(HURRAY_ERR_BUFFER_SIZE, "values_bytes is %zu; the plan's %llu triplets need %llu",
                  values_bytes, (unsigned long long)p->n_triplets,
                  (unsigned long long)(p->n_triplets * p->width));
    if (st == HURRAY_OK && p->width == 0) return agree(st, p->comm); /* a pattern */
    if ((st = agree(st, p->comm)) != HURRAY_OK) return st;
    if (p->identity) {
        /* One rank, nothing skipped: the values are already in order. */
        src = (const unsigned char *)values;
    } else {
        MPI_Datatype vt;
        gather_values(p->sendbuf, (const unsigned char *)values, p->pick, p->n_send, p->width);
        gather_values(p->recvbuf + p->self_at * p->width, (const unsigned char *)values,
                      p->self_pick, p->n_self, p->width);
        MPI_Type_contiguous((int)p->width, MPI_BYTE, &vt);
        MPI_Type_commit(&vt);
        if (MPI_Alltoallv(p->sendbuf, p->scount, p->sdispl, vt, p->recvbuf, p->rcount, p->rdispl,
                          vt, p->comm) != MPI_SUCCESS) {
            MPI_Type_free(&vt);
            return fail(HURRAY_ERR_INTERNAL, "MPI_Alltoallv failed");
        }
        MPI_Type_free(&vt);
        src = p->recvbuf;
    }
    st = hurray_assembly_plan_apply(p->local, src, p->n_recv * p->width, out_values, out_bytes, 1);
    if (st != HURRAY_OK) copy_text(last_message, sizeof last_message, hurray_last_error_message());
    return agree(st, p->comm);
}

/* ---- Parallel reading --------------------------------------------------- */

hurray_status hurray_mpi_read_hrry(const char *path, const char *name, uint32_t ownership,
                                   const uint64_t *given, MPI_Comm comm, hurray_coo **out) {
    int size = 0, me = 0, k;
    hurray_status st = HURRAY_OK;
    hurray_file *f = NULL;
    hurray_coo *whole = NULL;
    uint64_t *b = NULL;
    last_message[0] = '\0';
    if (out != NULL) *out = NULL;
    if (MPI_Comm_size(comm, &size) != MPI_SUCCESS || MPI_Comm_rank(comm, &me) != MPI_SUCCESS)
        return fail(HURRAY_ERR_INTERNAL, "MPI_Comm_size or MPI_Comm_rank failed");
    b = (uint64_t *)calloc((size_t)size + 1, sizeof *b);
    if (out == NULL) st = fail(HURRAY_ERR_NULL_POINTER, "out is NULL");
    else if (name == NULL) st = fail(HURRAY_ERR_NULL_POINTER, "name is NULL");
    else if (b == NULL) st = fail(HURRAY_ERR_ALLOC, "cannot allocate the row blocks");
    else if ((st = hurray_file_open(path, 0, &f)) != HURRAY_OK ||
             /* Structure only: the view every rank reads its block through. */
             (st = hurray_file_get(f, name, HURRAY_COO_PERMISSIVE, &whole)) != HURRAY_OK)
        copy_text(last_message, sizeof last_message, hurray_last_error_message());
    if (st == HURRAY_OK) {
        uint64_t rows = hurray_coo_shape(whole)[0], n = hurray_coo_nnz(whole);
        uint32_t rank = hurray_coo_rank(whole);
        size_t ib = 0;
        const uint64_t *idx = hurray_coo_indices(whole, &ib);
        switch (ownership) {
        case HURRAY_MPI_ROWS_EQUAL:
            for (k = 0; k <= size; k++) b[k] = (uint64_t)((u128)rows * (u128)k / (u128)size);
            break;
        case HURRAY_MPI_ROWS_GIVEN:
            st = given_blocks(given, size, rows, b);
            break;
        case HURRAY_MPI_ROWS_BALANCED:
            /* Block k starts at the row of entry k * n / size (the file's
             * order, checked as the blocks are read). */
            b[0] = 0;
            for (k = 1; k < size; k++) {
                uint64_t e = (uint64_t)((u128)n * (u128)k / (u128)size);
                b[k] = e < n ? idx[e * rank] : rows;
                if (b[k] > rows) b[k] = rows;
                if (b[k] < b[k - 1]) b[k] = b[k - 1];
            }
            b[size] = rows;
            break;
        default:
            st = fail(HURRAY_ERR_INVALID_ARGUMENT,
                      "ownership %u is not HURRAY_MPI_ROWS_EQUAL, _BALANCED or _GIVEN", ownership);
        }
        (void)ib;
    }
    if (st == HURRAY_OK) {
        st = hurray_file_get_rows(f, name, b[me], b[me + 1], 0, out);
        if (st != HURRAY_OK) copy_text(last_message, sizeof last_message, hurray_last_error_message());
    }
    hurray_coo_free(whole);
    hurray_file_close(f);
    free(b);
    st = agree(st, comm);
    if (st != HURRAY_OK && out != NULL) {
        hurray_coo_free(*out);
        *out = NULL;
    }
    return st;
}

/* Bytes [at, at + n) of the file into buf; 0 on success. */
static int read_at(FILE *fp, long at, unsigned char *buf, size_t n) {
    return fseek(fp, at, SEEK_SET) != 0 || fread(buf, 1, n, fp) != n;
}

/* The core's failure on the synthesized text of a byte range, told with
 * the path and the lines as the file numbers them: synthesized line L (3
 * and on: the banner and the size line come first) is file line
 * L - 3 + first. Built from the position's fields, never from the text. */
static void place_in_file(const char *path, unsigned long long first) {
    const hurray_error_position p = last_position();
    unsigned long long line = p.line >= 3 ? p.line - 3 + first : p.line;
    unsigned long long other = p.other_line >= 3 ? p.other_line - 3 + first : p.other_line;
    if (!(p.set & HURRAY_POS_LINE)) {
        fail(p.status, "%s: %s", path, hurray_last_error_message());
    } else if (p.set & HURRAY_POS_OTHER_LINE) {
        fail(p.status, "%s: line %llu%s duplicates line %llu%s: %s", path, line,
             p.set & HURRAY_POS_LINE_MIRRORED ? " (mirrored)" : "", other,
             p.set & HURRAY_POS_OTHER_LINE_MIRRORED ? " (mirrored)" : "", p.detail);
    } else if (p.set & HURRAY_POS_COLUMN) {
        fail(p.status, "%s: line %llu, column %llu: %s", path, line, (unsigned long long)p.column,
             p.detail);
    } else {
        fail(p.status, "%s: line %llu: %s", path, line, p.detail);
    }
}

/* The first entry line of bytes [a, e) of fp (file lines numbered from
 * first) whose row and column (1-based in the file) are r + 1 and c + 1,
 * and the first whose mirror image is (for a symmetric file): UINT64_MAX
 * for none. */
static void find_entry_lines(FILE *fp, long a, long e, unsigned long long first, uint64_t r,
                             uint64_t c, int symmetric, uint64_t *direct, uint64_t *mirrored) {
    char line[512];
    unsigned long long n = first;
    long at = a;
    *direct = *mirrored = UINT64_MAX;
    if (fseek(fp, a, SEEK_SET) != 0) return;
    while (at < e && fgets(line, sizeof line, fp) != NULL) {
        unsigned long long i = 0, j = 0;
        size_t len = strlen(line);
        at += (long)len;
        if (line[strspn(line, " \t")] != '%' && sscanf(line, " %llu %llu", &i, &j) == 2 && i > 0 &&
            j > 0) {
            if (*direct == UINT64_MAX && i - 1 == r && j - 1 == c) *direct = n;
            if (*mirrored == UINT64_MAX && symmetric && i != j && j - 1 == r && i - 1 == c)
                *mirrored = n;
        }
        if (len > 0 && line[len - 1] == '\n') n++;
    }
}

/* A duplicate found where the entries of several byte ranges met, at
 * their rows' owner: told as a one-process read tells it, with the path
 * and both file lines (the owner's core message counts received triplets).
 * Every rank scans its own byte range again for the duplicate's
 * coordinates, on this failure path only; in read order a symmetric
 * file's stored entries come before the mirror images. */
static hurray_status name_duplicate_lines(const char *path, long a, long e,
                                          unsigned long long first, int symmetric,
                                          MPI_Comm comm) {
    int size = 0, k, from = -1;
    uint64_t mine[3] = {0, 0, 0}, found[2] = {UINT64_MAX, UINT64_MAX}, *all = NULL, *lines = NULL;
    /* The two first occurrences in read order: (mirrored, line). */
    uint64_t best[2][2] = {{1, UINT64_MAX}, {1, UINT64_MAX}};
    hurray_status st = HURRAY_ERR_DUPLICATE;
    FILE *fp;
    MPI_Comm_size(comm, &size);
    if (last_duplicate.set && last_duplicate.rank == 2) {
        mine[0] = 1;
        mine[1] = last_duplicate.coords[0];
        mine[2] = last_duplicate.coords[1];
    }
    all = (uint64_t *)calloc((size_t)size * 3, sizeof *all);
    lines = (uint64_t *)calloc((size_t)size * 2, sizeof *lines);
    {
        int ok = all != NULL && lines != NULL, all_ok = 0;
        MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, comm);
        if (!all_ok) goto done; /* the owner's message stands */
    }
    MPI_Allgather(mine, 3, MPI_UINT64_T, all, 3, MPI_UINT64_T, comm);
    for (k = 0; k < size && from < 0; k++)
        if (all[3 * k] == 1) from = k;
    if (from < 0) goto done;
    fp = fopen(path, "rb");
    if (fp != NULL) {
        find_entry_lines(fp, a, e, first, all[3 * from + 1], all[3 * from + 2], symmetric,
                         &found[0], &found[1]);
        fclose(fp);
    }
    MPI_Allgather(found, 2, MPI_UINT64_T, lines, 2, MPI_UINT64_T, comm);
    for (k = 0; k < 2 * size; k++) {
        const uint64_t m = (uint64_t)(k % 2), l = lines[k];
        if (l == UINT64_MAX) continue;
        if (m < best[0][0] || (m == best[0][0] && l < best[0][1])) {
            best[1][0] = best[0][0];
            best[1][1] = best[0][1];
            best[0][0] = m;
            best[0][1] = l;
        } else if (m < best[1][0] || (m == best[1][0] && l < best[1][1])) {
            best[1][0] = m;
            best[1][1] = l;
        }
    }
    if (best[1][1] != UINT64_MAX) {
        st = fail(HURRAY_ERR_DUPLICATE,
                  "%s: line %llu%s duplicates line %llu%s: both are entry (%llu, %llu) (counted "
                  "from 1); pass a duplicate policy (SUM, FIRST, LAST, MIN, MAX) to combine them",
                  path, (unsigned long long)best[1][1], best[1][0] ? " (mirrored)" : "",
                  (unsigned long long)best[0][1], best[0][0] ? " (mirrored)" : "",
                  (unsigned long long)all[3 * from + 1] + 1,
                  (unsigned long long)all[3 * from + 2] + 1);
    }
done:
    free(all);
    free(lines);
    return st;
}

hurray_status hurray_mpi_read_mtx(const char *path, uint32_t policy, uint32_t flags,
                                  uint32_t ownership, const uint64_t *given, MPI_Comm comm,
                                  uint32_t *out_symmetry, hurray_coo **out) {
    int size = 0, me = 0;
    hurray_status st = HURRAY_OK;
    FILE *fp = NULL;
    long fsize = 0, data = 0, a = 0, e = 0;
    unsigned char *head = NULL, *text = NULL;
    size_t headn = 0, banner_len = 0;
    unsigned long long rows = 0, cols = 0, declared = 0, lines_before = 0;
    unsigned long long my_lines = 0, my_entries = 0, first_line = 0, header_lines = 0;
    unsigned long long entries_before = 0, all_entries = 0, all_lines = 0;
    hurray_coo *local = NULL;
    uint32_t sym = 0;
    last_message[0] = '\0';
    if (out != NULL) *out = NULL;
    if (MPI_Comm_size(comm, &size) != MPI_SUCCESS || MPI_Comm_rank(comm, &me) != MPI_SUCCESS)
        return fail(HURRAY_ERR_INTERNAL, "MPI_Comm_size or MPI_Comm_rank failed");
    if (out == NULL) st = fail(HURRAY_ERR_NULL_POINTER, "out is NULL");
    else if (path == NULL) st = fail(HURRAY_ERR_NULL_POINTER, "path is NULL");
    else if ((fp = fopen(path, "rb")) == NULL || fseek(fp, 0, SEEK_END) != 0 ||
             (fsize = ftell(fp)) < 0)
        st = fail(HURRAY_ERR_IO, "%s: cannot open or size the file", path);
    /* 1. The header: banner, comments, size line (within the first MiB). */
    if (st == HURRAY_OK) {
        size_t i, line_start = 0;
        int seen_banner = 0;
        headn = (size_t)(fsize < (1L << 20) ? fsize : (1L << 20));
        head = (unsigned char *)malloc(headn + 1);
        if (head == NULL || read_at(fp, 0, head, headn)) {
            st = fail(HURRAY_ERR_IO, "%s: cannot read the header", path);
        } else {
            head[headn] = '\0';
            for (i = 0; i <= headn && st == HURRAY_OK; i++) {
                if (i < headn && head[i] != '\n') continue;
                {
                    const char *l = (const char *)head + line_start;
                    size_t len = i - line_start;
                    header_lines++;
                    if (!seen_banner) {
                        char low[256];
                        size_t k;
                        banner_len = len;
                        for (k = 0; k < len && k + 1 < sizeof low; k++) low[k] = (char)tolower((unsigned char)l[k]);
                        low[k] = '\0';
                        if (strncmp(low, "%%matrixmarket", 14) != 0) {
                            st = fail(HURRAY_ERR_PARSE, "%s: line 1: not a Matrix Market file (no %%%%MatrixMarket banner)", path);
                        } else if (strstr(low, "array") != NULL) {
                            st = fail(HURRAY_ERR_UNSUPPORTED_FEATURE,
                                      "%s: an array (dense) file has no entry lines to split; read it "
                                      "with hurray_coo_read_mtx_file", path);
                        } else {
                            sym = strstr(low, "skew-symmetric") ? HURRAY_MTX_SKEW_SYMMETRIC
                                  : strstr(low, "symmetric")    ? HURRAY_MTX_SYMMETRIC
                                  : strstr(low, "hermitian")    ? HURRAY_MTX_HERMITIAN
                                                                : HURRAY_MTX_GENERAL;
                        }
                        seen_banner = 1;
                    } else if (len > 0 && l[0] != '%' && strspn(l, " \t\r") < len) {
                        if (sscanf(l, "%llu %llu %llu", &rows, &cols, &declared) != 3)
                            st = fail(HURRAY_ERR_PARSE, "%s: line %llu: the size line needs rows, "
                                      "columns and entries", path, header_lines);
                        data = (long)(i + 1 < headn + 1 ? i + 1 : headn);
                        break;
                    }
                }
                line_start = i + 1;
            }
            if (st == HURRAY_OK && data == 0)
                st = fail(HURRAY_ERR_PARSE, "%s: no size line in the first MiB", path);
        }
    }
    /* 2. This rank's byte range of the entry lines, cut at line ends. */
    if (st == HURRAY_OK) {
        long span = fsize - data;
        long lo = data + (long)((u128)span * (u128)me / (u128)size);
        long hi = data + (long)((u128)span * (u128)(me + 1) / (u128)size);
        unsigned char c;
        /* A range starts after the line end at or before its start ... */
        a = lo;
        if (me > 0) {
            while (a < fsize && (read_at(fp, a - 1, &c, 1) == 0 && c != '\n')) a++;
        }
        /* ... and ends where the next one starts. */
        e = hi;
        if (me < size - 1) {
            while (e < fsize && (read_at(fp, e - 1, &c, 1) == 0 && c != '\n')) e++;
        } else {
            e = fsize;
        }
        if (e < a) e = a;
        text = (unsigned char *)malloc((size_t)(e - a) + banner_len + 64);
        if (text == NULL) st = fail(HURRAY_ERR_ALLOC, "cannot allocate %ld bytes", e - a);
    }
    /* 3. Number the lines of this range, and count its entry lines: those
     * neither blank nor a comment (first non-blank character '%'), as
     * hurray_coo_read_mtx counts them. */
    if (st == HURRAY_OK) {
        unsigned char *chunk = text;
        long i;
        /* 0: at a line's start (only blanks so far), 1: an entry line, 2: a comment. */
        int kind = 0;
        if (read_at(fp, a, chunk, (size_t)(e - a))) st = fail(HURRAY_ERR_IO, "%s: cannot read bytes %ld to %ld", path, a, e);
        for (i = 0; st == HURRAY_OK && i < e - a; i++) {
            unsigned char c = chunk[i];
            if (c == '\n') {
                my_lines++;
                my_entries += kind == 1;
                kind = 0;
            } else if (kind == 0 && !isspace(c)) {
                kind = c == '%' ? 2 : 1;
            }
        }
        if (st == HURRAY_OK && e - a > 0 && chunk[e - a - 1] != '\n') {
            my_lines++;
            my_entries += kind == 1;
        }
    }
    {
        unsigned long long mine_l = st == HURRAY_OK ? my_lines : 0;
        unsigned long long mine_e = st == HURRAY_OK ? my_entries : 0;
        if (MPI_Exscan(&mine_l, &lines_before, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, comm) != MPI_SUCCESS ||
            MPI_Exscan(&mine_e, &entries_before, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, comm) != MPI_SUCCESS ||
            MPI_Allreduce(&mine_e, &all_entries, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, comm) != MPI_SUCCESS ||
            MPI_Allreduce(&mine_l, &all_lines, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, comm) != MPI_SUCCESS)
            st = fail(HURRAY_ERR_INTERNAL, "MPI_Exscan or MPI_Allreduce failed");
        if (me == 0) lines_before = entries_before = 0;
        first_line = header_lines + 1 + lines_before;
    }
    /* 4. Parse the range as a file of its own: the banner, a size line for
     * its entry lines, then the lines. The size line's count holds for the
     * whole file, as in hurray_coo_read_mtx: only the first `declared`
     * entries are parsed, and the rank that holds entry declared + 1 says
     * "one entry more" (after any problem in the entries before it, as the
     * one-process read does). */
    if (st == HURRAY_OK) {
        unsigned long long keep = entries_before >= declared ? 0
                                  : my_entries < declared - entries_before
                                      ? my_entries
                                      : declared - entries_before;
        long len = e - a, extra_at = -1;
        unsigned long long extra_line = 0;
        unsigned char *buf;
        if (keep < my_entries) {
            /* Cut the range before its entry keep + 1 (0-based keep). */
            unsigned long long seen = 0, line = 0;
            long i, start = 0;
            int kind = 0;
            for (i = 0; i <= len; i++) {
                unsigned char c = i < len ? text[i] : '\n';
                if (c == '\n') {
                    if (kind == 1 && seen++ == keep) {
                        extra_at = start;
                        extra_line = first_line + line;
                        break;
                    }
                    line++;
                    kind = 0;
                    start = i + 1;
                } else if (kind == 0 && !isspace(c)) {
                    kind = c == '%' ? 2 : 1;
                }
            }
            len = extra_at;
        }
        buf = (unsigned char *)malloc((size_t)len + banner_len + 80);
        if (buf == NULL) {
            st = fail(HURRAY_ERR_ALLOC, "cannot allocate %ld bytes", len);
        } else {
            int n = 0;
            memcpy(buf, head, banner_len);
            n = (int)banner_len;
            n += snprintf((char *)buf + n, 80, "\n%llu %llu %llu\n", rows, cols, keep);
            memcpy(buf + n, text, (size_t)len);
            st = hurray_coo_read_mtx(buf, (size_t)n + (size_t)len, policy, flags, 1, NULL, &local);
            if (st != HURRAY_OK) {
                place_in_file(path, first_line);
            } else if (extra_at >= 0 && entries_before <= declared) {
                /* This range holds entry declared + 1: name it as the
                 * one-process read does (line, column, token). */
                const unsigned char *l = text + extra_at;
                long col = 0, tl = 0;
                while (l[col] == ' ' || l[col] == '\t') col++;
                while (extra_at + col + tl < e - a && !isspace(l[col + tl]) && tl < 40) tl++;
                st = fail(HURRAY_ERR_PARSE,
                          "%s: line %llu, column %ld: one entry more than the %llu the size line "
                          "(line %llu) declares (found '%.*s')",
                          path, extra_line, col + 1, declared, header_lines, (int)tl,
                          (const char *)l + col);
                hurray_coo_free(local);
                local = NULL;
            }
            free(buf);
        }
    }
    if (fp != NULL) fclose(fp);
    free(head);
    free(text);
    if ((st = agree(st, comm)) != HURRAY_OK) {
        hurray_coo_free(local);
        return st;
    }
    /* Fewer entries than declared, every line good: the same verdict on
     * every rank (the counts are global), as hurray_coo_read_mtx words it. */
    if (all_entries < declared) {
        hurray_coo_free(local);
        return fail(HURRAY_ERR_PARSE,
                    "%s: line %llu: the file ends after %llu of the %llu entries the size line "
                    "(line %llu) declares",
                    path, header_lines + all_lines, all_entries, declared, header_lines);
    }
    /* 5. Every entry to the owner of its row, duplicates across ranges
     * combined in range (file) order. */
    {
        const uint64_t shape[2] = {rows, cols};
        size_t vb = 0, ib = 0;
        const void *vals = hurray_coo_values(local, &vb);
        const uint64_t *idx = hurray_coo_indices(local, &ib);
        uint8_t tag = hurray_coo_type_tag(local);
        hurray_triplets t;
        memset(&t, 0, sizeof t);
        t.rank = 2;
        t.shape = shape;
        t.n = hurray_coo_nnz(local);
        t.index_type = HURRAY_INDEX_UINT64;
        t.indices = idx;
        t.indices_bytes = ib;
        t.type_tag = tag == HURRAY_TYPE_BOOL ? HURRAY_PATTERN : tag; /* pattern files */
        t.values = tag == HURRAY_TYPE_BOOL ? NULL : vals;
        t.values_bytes = tag == HURRAY_TYPE_BOOL ? 0 : vb;
        st = hurray_mpi_assemble(&t, policy, flags & HURRAY_ASSEMBLE_DROP_ZEROS, ownership, given,
                                 comm, out, NULL);
        hurray_coo_free(local);
        /* Entries of different byte ranges that share coordinates: name
         * the file's lines, as a one-process read does. */
        if (st == HURRAY_ERR_DUPLICATE)
            st = name_duplicate_lines(path, a, e, first_line, sym != HURRAY_MTX_GENERAL, comm);
    }
    if (st == HURRAY_OK && out_symmetry != NULL) *out_symmetry = sym;
    return st;
}
