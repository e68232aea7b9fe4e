/* libhurray_coo_mpi: distributed assembly (hurray_mpi_assemble) and
 * re-assembly (hurray_mpi_plan_apply). See hurray_coo_mpi.h. */
#define _POSIX_C_SOURCE 200112L
#include "internal.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* What one hurray_mpi_assemble call works with, from step to step. */
typedef struct assembly {
    const hurray_triplets *t;
    uint32_t policy, flags;
    hurray_assemble_options options; /* policy and flags, one thread: each local assembly */
    MPI_Comm comm;
    int size, me;
    size_t width;                  /* bytes per value (0 for a pattern) */
    uint64_t *b;                   /* size + 1 row boundaries */
    hurray_mpi_plan *p;            /* what re-assembly keeps */
    uint64_t *dest;                /* triplet -> owning rank (UINT64_MAX: skipped) */
    int64_t *tmp;                  /* one dimension of every triplet */
    int64_t *lidx;                 /* received coordinates (rank per triplet) */
    unsigned char *lval;           /* received values */
    uint64_t *src_rank, *src_index; /* where each received triplet came from */
    hurray_coo *assembled, *shard;
    hurray_assembly_plan *lplan;
} assembly;

static void assembly_free(assembly *a) {
    hurray_coo_free(a->shard);
    hurray_coo_free(a->assembled);
    hurray_assembly_plan_free(a->lplan);
    hurray_mpi_plan_free(a->p);
    free(a->b);
    free(a->dest);
    free(a->tmp);
    free(a->lidx);
    free(a->lval);
    free(a->src_rank);
    free(a->src_index);
}

/* 1. Local checks, then every rank agrees on the call (the same rank,
 * shape, type, base, ownership, policy and flags) and on the row blocks.
 * Collective; the status is every rank's. */
static hurray_status agree_on_the_call(assembly *a, uint32_t ownership, const uint64_t *given,
                                       const hurray_coo *const *out) {
    const hurray_triplets *t = a->t;
    hurray_status st = HURRAY_OK;
    facts mine, *all = NULL;
    int k;
    memset(&mine, 0, sizeof mine);
    if (out == NULL) st = fail(HURRAY_ERR_NULL_POINTER, "out is NULL");
    if (st == HURRAY_OK) st = check_triplets(t, &a->width);
    if (st == HURRAY_OK) {
        mine.rank = t->rank;
        mine.base = t->index_base;
        mine.ownership = ownership;
        mine.policy = a->policy;
        mine.flags = a->flags;
        mine.type_tag = t->type_tag;
        memcpy(mine.shape, t->shape, t->rank * sizeof(uint64_t));
    }
    /* The facts travel with the statuses: one allgather. */
    all = (facts *)calloc((size_t)a->size, sizeof *all);
    a->b = (uint64_t *)calloc((size_t)a->size + 1, sizeof *a->b);
    a->p = (hurray_mpi_plan *)calloc(1, sizeof *a->p);
    if (st == HURRAY_OK && (all == NULL || a->b == NULL || a->p == NULL))
        st = fail(HURRAY_ERR_ALLOC, "cannot allocate the assembly's bookkeeping");
    if ((st = agree(st, a->comm)) == HURRAY_OK &&
        MPI_Allgather(&mine, (int)sizeof mine, MPI_BYTE, all, (int)sizeof mine, MPI_BYTE,
                      a->comm) != MPI_SUCCESS)
        st = fail(HURRAY_ERR_INTERNAL, "MPI_Allgather failed");
    for (k = 1; st == HURRAY_OK && k < a->size; k++) {
        if (memcmp(&all[k], &all[0], sizeof mine) != 0)
            st = fail(HURRAY_ERR_INVALID_ARGUMENT,
                      "rank %d's call differs from rank 0's in rank, shape, element type, index "
                      "base, ownership, duplicate policy or flags: every rank assembles the same "
                      "tensor the same way",
                      k);
    }
    free(all);
    if (st != HURRAY_OK) return st; /* the same on every rank */
    st = row_blocks(t, ownership, given, a->size, a->comm, a->b);
    return agree(st, a->comm);
}

/* One rank: nothing to route; the core assembles the caller's triplets as
 * they are, and the plan reads the caller's values in place. */
static hurray_status assemble_alone(assembly *a, int want_plan) {
    hurray_mpi_plan *p = a->p;
    hurray_status st;
    p->comm = a->comm;
    p->size = 1;
    p->width = a->width;
    p->n_triplets = p->n_recv = p->n_self = a->t->n;
    p->identity = 1;
    st = hurray_coo_assemble(a->t, &a->options, &a->assembled, want_plan ? &a->lplan : NULL);
    if (st != HURRAY_OK) copy_text(last_message, sizeof last_message, hurray_last_error_message());
    return st;
}

/* The owner of each triplet (dest) and the count for each rank, checked:
 * a triplet whose row is outside the shape, or more than 2^31 - 1
 * coordinates for one rank, fails. */
static hurray_status owners(assembly *a) {
    const hurray_triplets *t = a->t;
    hurray_mpi_plan *p = a->p;
    hurray_status st = HURRAY_OK;
    uint32_t d;
    uint64_t i, *counts = (uint64_t *)calloc((size_t)a->size, sizeof(uint64_t));
    int k;
    if (counts == NULL) return fail(HURRAY_ERR_ALLOC, "cannot allocate the counts");
    /* Skipped triplets first (any negative coordinate), then rows. */
    for (i = 0; i < t->n; i++) a->dest[i] = 0;
    if (a->flags & HURRAY_ASSEMBLE_SKIP_NEGATIVE) {
        for (d = 0; d < t->rank; d++) {
            read_dim(t, d, a->tmp);
            for (i = 0; i < t->n; i++)
                if (a->tmp[i] < 0) a->dest[i] = UINT64_MAX;
        }
    }
    read_dim(t, 0, a->tmp);
    for (i = 0; st == HURRAY_OK && i < t->n; i++) {
        int64_t raw = a->tmp[i], r = raw == INT64_MIN ? raw : raw - (int64_t)t->index_base;
        if (a->dest[i] == UINT64_MAX) continue;
        if (r < 0 || (uint64_t)r >= t->shape[0]) {
            st = fail(HURRAY_ERR_INDEX_OUT_OF_BOUNDS,
                      "triplet %llu: row coordinate %lld is outside the shape (%llu rows, "
                      "counted from %u)",
                      (unsigned long long)i + t->index_base, (long long)raw,
                      (unsigned long long)t->shape[0], t->index_base);
            break;
        }
        a->dest[i] = (uint64_t)owner(a->b, a->size, (uint64_t)r);
        counts[a->dest[i]]++;
    }
    for (k = 0; st == HURRAY_OK && k < a->size; k++) {
        /* MPI counts are ints, and coordinates travel rank per triplet. */
        if (counts[k] * t->rank > INT32_MAX)
            st = fail(HURRAY_ERR_OVERFLOW, "more than 2^31 - 1 coordinates go to rank %d", k);
        p->scount[k] = (int)counts[k];
    }
    free(counts);
    return st;
}

/* 2. Route: each triplet to the owner of its row; this rank's own go
 * straight to where the received ones will be, never through MPI. The
 * counts are exchanged and the displacements set. Collective. Returns the
 * agreed status; *pending gets a local failure found after the counts'
 * exchange (totals past 2^31 - 1), which the exchange agrees on. */
static hurray_status route(assembly *a, hurray_status *pending) {
    const hurray_triplets *t = a->t;
    hurray_mpi_plan *p = a->p;
    hurray_status st = HURRAY_OK;
    const int size = a->size, me = a->me;
    int k;
    *pending = HURRAY_OK;
    p->comm = a->comm;
    p->size = size;
    p->me = me;
    p->width = a->width;
    p->n_triplets = t->n;
    p->scount = (int *)calloc((size_t)size, sizeof(int));
    p->sdispl = (int *)calloc((size_t)size, sizeof(int));
    p->rcount = (int *)calloc((size_t)size, sizeof(int));
    p->rdispl = (int *)calloc((size_t)size, sizeof(int));
    a->dest = (uint64_t *)malloc((t->n ? t->n : 1) * sizeof *a->dest);
    a->tmp = (int64_t *)malloc((t->n ? t->n : 1) * sizeof *a->tmp);
    if (!p->scount || !p->sdispl || !p->rcount || !p->rdispl || !a->dest || !a->tmp)
        st = fail(HURRAY_ERR_ALLOC, "cannot allocate the routing of %llu triplets",
                  (unsigned long long)t->n);
    if (st == HURRAY_OK) st = owners(a);
    if ((st = agree(st, a->comm)) != HURRAY_OK) return st;
    if (MPI_Alltoall(p->scount, 1, MPI_INT, p->rcount, 1, MPI_INT, a->comm) != MPI_SUCCESS)
        return fail(HURRAY_ERR_INTERNAL, "MPI_Alltoall failed");
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
        p->bytes_sent += (uint64_t)p->scount[k] * a->width;
    }
    for (k = 1; k < size; k++) p->sdispl[k] = p->sdispl[k - 1] + p->scount[k - 1];
    if (p->n_send * t->rank > INT32_MAX || p->n_recv * t->rank > INT32_MAX)
        *pending = fail(HURRAY_ERR_OVERFLOW,
                        "more than 2^31 - 1 coordinates leave or reach rank %d", me);
    return HURRAY_OK;
}

/* The send buffers of the exchange, and the counts in coordinates. */
typedef struct staging {
    uint64_t *slot;          /* triplet -> its place in the staging area */
    int64_t *sc;             /* coordinates to send (then own, then a dump slot) */
    uint64_t *si;            /* the senders' triplet numbers, likewise */
    unsigned char *sv;       /* values to send */
    int *fill, *cc, *cd, *rc2, *rd2;
} staging;

static void staging_free(staging *s) {
    free(s->slot);
    free(s->sc);
    free(s->si);
    free(s->sv);
    free(s->fill);
    free(s->cc);
    free(s->cd);
    free(s->rc2);
    free(s->rd2);
}

/* Every triplet into the staging area (its send slot, after the sends for
 * own triplets, which are copied straight to their received place, or a
 * last slot for skipped ones: the scatters have no branch), the values
 * gathered in send order, and the coordinate counts. */
static hurray_status stage(assembly *a, staging *s) {
    const hurray_triplets *t = a->t;
    hurray_mpi_plan *p = a->p;
    const uint64_t r = t->rank, self0 = p->n_send, dump = p->n_send + p->n_self;
    const size_t width = a->width;
    uint64_t i, own = 0;
    uint32_t d;
    int k;
    int64_t *grown = (int64_t *)realloc(s->sc, (dump + 1) * r * sizeof(int64_t));
    uint64_t *grown_i;
    if (grown == NULL) return fail(HURRAY_ERR_ALLOC, "cannot allocate the exchange staging");
    s->sc = grown;
    grown_i = (uint64_t *)realloc(s->si, (dump + 1) * sizeof(uint64_t));
    if (grown_i == NULL) return fail(HURRAY_ERR_ALLOC, "cannot allocate the exchange staging");
    s->si = grown_i;
    for (i = 0; i < t->n; i++) {
        uint64_t to = a->dest[i];
        if (to == UINT64_MAX) {
            s->slot[i] = dump;
        } else if ((int)to == a->me) {
            p->self_pick[own] = i;
            s->slot[i] = self0 + own++;
        } else {
            uint64_t at = (uint64_t)p->sdispl[to] + (uint64_t)s->fill[to]++;
            p->pick[at] = i;
            s->slot[i] = at;
        }
    }
    p->identity = 0;
    for (d = 0; d < r; d++) {
        read_dim(t, d, a->tmp);
        for (i = 0; i < t->n; i++) s->sc[s->slot[i] * r + d] = a->tmp[i];
    }
    for (i = 0; i < t->n; i++) s->si[s->slot[i]] = i;
    memcpy(a->lidx + p->self_at * r, s->sc + self0 * r, p->n_self * r * sizeof(int64_t));
    memcpy(a->src_index + p->self_at, s->si + self0, p->n_self * sizeof(uint64_t));
    for (i = 0; i < p->n_self; i++) a->src_rank[p->self_at + i] = (uint64_t)a->me;
    gather_values(s->sv, (const unsigned char *)t->values, p->pick, p->n_send, width);
    gather_values(a->lval + p->self_at * width, (const unsigned char *)t->values, p->self_pick,
                  p->n_self, width);
    for (k = 0; k < a->size; k++) {
        s->cc[k] = p->scount[k] * (int)r;
        s->cd[k] = p->sdispl[k] * (int)r;
        s->rc2[k] = p->rcount[k] * (int)r;
        s->rd2[k] = p->rdispl[k] * (int)r;
        for (uint64_t q = 0; q < (uint64_t)p->rcount[k]; q++)
            a->src_rank[(uint64_t)p->rdispl[k] + q] = (uint64_t)k;
    }
    return HURRAY_OK;
}

/* 3. Exchange coordinates, the senders' numbers and values, each as one
 * array (MPI_Alltoallv per array). The received arrays hold every rank's
 * triplets in rank order, own ones at self_at. Collective; st is the
 * failure route left pending. */
static hurray_status exchange(assembly *a, hurray_status st) {
    const hurray_triplets *t = a->t;
    hurray_mpi_plan *p = a->p;
    const uint64_t nr = p->n_recv ? p->n_recv : 1, ns = p->n_send ? p->n_send : 1;
    const size_t width = a->width, size = (size_t)a->size;
    staging s;
    memset(&s, 0, sizeof s);
    s.slot = (uint64_t *)malloc((t->n ? t->n : 1) * sizeof(uint64_t));
    s.fill = (int *)calloc(size, sizeof(int));
    s.cc = (int *)calloc(size, sizeof(int));
    s.cd = (int *)calloc(size, sizeof(int));
    s.rc2 = (int *)calloc(size, sizeof(int));
    s.rd2 = (int *)calloc(size, sizeof(int));
    if (st == HURRAY_OK) {
        p->pick = (uint64_t *)malloc(ns * sizeof(uint64_t));
        p->self_pick = (uint64_t *)malloc((p->n_self ? p->n_self : 1) * sizeof(uint64_t));
        s.sc = (int64_t *)malloc(ns * t->rank * sizeof(int64_t));
        s.si = (uint64_t *)malloc(ns * sizeof(uint64_t));
        s.sv = (unsigned char *)malloc(ns * (width ? width : 1));
        a->lidx = (int64_t *)malloc(nr * t->rank * sizeof(int64_t));
        a->lval = (unsigned char *)malloc(nr * (width ? width : 1));
        a->src_rank = (uint64_t *)malloc(nr * sizeof(uint64_t));
        a->src_index = (uint64_t *)malloc(nr * sizeof(uint64_t));
        if (!s.slot || !s.fill || !s.cc || !s.cd || !s.rc2 || !s.rd2 || !p->pick ||
            !p->self_pick || !s.sc || !s.si || !s.sv || !a->lidx || !a->lval || !a->src_rank ||
            !a->src_index)
            st = fail(HURRAY_ERR_ALLOC, "cannot allocate the exchange of %llu triplets",
                      (unsigned long long)t->n);
    }
    if (st == HURRAY_OK) st = stage(a, &s);
    if ((st = agree(st, a->comm)) == HURRAY_OK) {
        MPI_Datatype vt = MPI_DATATYPE_NULL;
        int bad = MPI_Alltoallv(s.sc, s.cc, s.cd, MPI_INT64_T, a->lidx, s.rc2, s.rd2, MPI_INT64_T,
                                a->comm) != MPI_SUCCESS ||
                  MPI_Alltoallv(s.si, p->scount, p->sdispl, MPI_UINT64_T, a->src_index,
                                p->rcount, p->rdispl, MPI_UINT64_T, a->comm) != MPI_SUCCESS;
        if (!bad && width > 0) {
            MPI_Type_contiguous((int)width, MPI_BYTE, &vt);
            MPI_Type_commit(&vt);
            bad = MPI_Alltoallv(s.sv, p->scount, p->sdispl, vt, a->lval, p->rcount, p->rdispl, vt,
                                a->comm) != MPI_SUCCESS;
            MPI_Type_free(&vt);
        }
        if (bad) st = fail(HURRAY_ERR_INTERNAL, "MPI_Alltoallv failed");
    }
    staging_free(&s);
    return st;
}

/* 4. Local assembly of every triplet this rank owns (global coordinates),
 * in source-rank order; a failure names the triplets as their senders
 * numbered them. */
static hurray_status assemble_received(assembly *a, int want_plan) {
    const hurray_triplets *t = a->t;
    hurray_mpi_plan *p = a->p;
    hurray_triplets lt;
    hurray_status st;
    memset(&lt, 0, sizeof lt);
    lt.rank = t->rank;
    lt.shape = t->shape;
    lt.n = p->n_recv;
    lt.index_type = HURRAY_INDEX_INT64;
    lt.index_base = t->index_base; /* so that messages count as the caller does */
    lt.indices = p->n_recv ? a->lidx : NULL;
    lt.indices_bytes = p->n_recv * t->rank * 8;
    lt.type_tag = t->type_tag;
    lt.values = a->width && p->n_recv ? a->lval : NULL;
    lt.values_bytes = p->n_recv * a->width;
    st = hurray_coo_assemble(&lt, &a->options, &a->assembled, want_plan ? &a->lplan : NULL);
    if (st != HURRAY_OK) name_triplets(a->src_rank, a->src_index, p->n_recv, t->index_base);
    return st;
}

/* 5. This rank's rows of the assembled tensor as a shard of the parent
 * (rows shifted into the block; values stay where assembly put them; the
 * shard owns the assembled handle through its release callback).
 * Collective; st is the assembly's status. */
static hurray_status make_shard(assembly *a, hurray_status st) {
    const hurray_triplets *t = a->t;
    if (st == HURRAY_OK) {
        const uint32_t rank = t->rank;
        const uint64_t lo = a->b[a->me], hi = a->b[a->me + 1];
        uint64_t nnz = hurray_coo_nnz(a->assembled), i, shard_shape[HURRAY_MAX_RANK],
                 offset[HURRAY_MAX_RANK];
        uint32_t d;
        size_t vb = 0, ib = 0;
        const void *vals = hurray_coo_values(a->assembled, &vb);
        const uint64_t *idx = hurray_coo_indices(a->assembled, &ib);
        keep *kp = (keep *)calloc(1, sizeof *kp);
        void *shifted = NULL;
        if (kp == NULL || (ib > 0 && posix_memalign(&shifted, 64, ib) != 0)) {
            free(kp);
            st = fail(HURRAY_ERR_ALLOC, "cannot allocate the shard's %zu-byte indices", ib);
        } else {
            uint64_t *sh = (uint64_t *)shifted;
            hurray_coo_parts parts;
            hurray_coo_options opts;
            for (i = 0; i < nnz; i++) {
                sh[i * rank] = idx[i * rank] - lo; /* the handle is 0-based */
                for (d = 1; d < rank; d++) sh[i * rank + d] = idx[i * rank + d];
            }
            for (d = 0; d < rank; d++) {
                shard_shape[d] = d == 0 ? hi - lo : t->shape[d];
                offset[d] = d == 0 ? lo : 0;
            }
            kp->assembled = a->assembled;
            kp->indices = shifted;
            a->assembled = NULL; /* now the shard's, through the release callback */
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
            st = hurray_coo_create(&parts, &opts, &a->shard);
            if (st != HURRAY_OK)
                copy_text(last_message, sizeof last_message, hurray_last_error_message());
            a->p->nnz = nnz;
        }
    }
    return agree(st, a->comm);
}

/* 6. What re-assembly keeps: the send order, the counts, the local plan,
 * and value buffers allocated once. Collective. */
static hurray_status keep_plan(assembly *a, hurray_mpi_plan **out_plan) {
    hurray_mpi_plan *p = a->p;
    const size_t w = a->width ? a->width : 1;
    hurray_status st;
    p->local = a->lplan;
    a->lplan = NULL;
    p->sendbuf = (unsigned char *)malloc((p->n_send ? p->n_send : 1) * w);
    p->recvbuf = p->identity ? (unsigned char *)malloc(1)
                             : (unsigned char *)malloc((p->n_recv ? p->n_recv : 1) * w);
    st = p->sendbuf && p->recvbuf ? HURRAY_OK
                                  : fail(HURRAY_ERR_ALLOC, "cannot allocate the plan's buffers");
    if ((st = agree(st, a->comm)) != HURRAY_OK) return st;
    *out_plan = p;
    a->p = NULL;
    return HURRAY_OK;
}

hurray_status hurray_mpi_assemble(const hurray_triplets *t, uint32_t policy, uint32_t flags,
                                  uint32_t ownership, const uint64_t *given, MPI_Comm comm,
                                  hurray_coo **out, hurray_mpi_plan **out_plan) {
    assembly a;
    hurray_status st, pending;
    last_message[0] = '\0';
    if (out != NULL) *out = NULL;
    if (out_plan != NULL) *out_plan = NULL;
    last_duplicate.set = 0;
    memset(&a, 0, sizeof a);
    a.t = t;
    a.policy = policy;
    a.flags = flags;
    a.options.size = sizeof a.options;
    a.options.duplicates_policy = policy;
    a.options.flags = flags;
    a.options.threads = 1;
    a.comm = comm;
    if (MPI_Comm_size(comm, &a.size) != MPI_SUCCESS || MPI_Comm_rank(comm, &a.me) != MPI_SUCCESS)
        return fail(HURRAY_ERR_INTERNAL, "MPI_Comm_size or MPI_Comm_rank failed");
    if ((st = agree_on_the_call(&a, ownership, given, (const hurray_coo *const *)out)) !=
        HURRAY_OK)
        goto done;
    if (a.size == 1) {
        st = assemble_alone(&a, out_plan != NULL);
    } else {
        if ((st = route(&a, &pending)) != HURRAY_OK) goto done;
        if ((st = exchange(&a, pending)) != HURRAY_OK) goto done;
        st = assemble_received(&a, out_plan != NULL);
    }
    if ((st = make_shard(&a, st)) != HURRAY_OK) goto done;
    if (out_plan != NULL && (st = keep_plan(&a, out_plan)) != HURRAY_OK) goto done;
    *out = a.shard;
    a.shard = NULL;
done:
    assembly_free(&a);
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

