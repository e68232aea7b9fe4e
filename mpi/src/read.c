/* libhurray_coo_mpi: parallel reading of Hurray files and Matrix Market
 * files (hurray_mpi_read_hrry, hurray_mpi_read_mtx). See hurray_coo_mpi.h. */
#define _POSIX_C_SOURCE 200112L
#include "internal.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* What one hurray_mpi_read_mtx call works with, from step to step. */
typedef struct mtx_read {
    const char *path;
    uint32_t policy, flags;
    MPI_Comm comm;
    int size, me;
    FILE *fp;
    long fsize, data;              /* file size; where the entry lines start */
    unsigned char *head;           /* the first MiB: banner, comments, size line */
    size_t banner_len;
    unsigned long long rows, cols, declared, header_lines; /* header_lines: the size line's */
    uint32_t symmetry;
    long a, e;                     /* this rank's byte range [a, e) */
    unsigned char *text;           /* its bytes */
    unsigned long long my_lines, my_entries, lines_before, entries_before;
    unsigned long long all_lines, all_entries, first_line; /* first_line: a's line */
    hurray_coo *local;             /* this range's entries, parsed */
} mtx_read;

static void mtx_read_free(mtx_read *r) {
    if (r->fp != NULL) fclose(r->fp);
    free(r->head);
    free(r->text);
    hurray_coo_free(r->local);
}

/* One header line of the first MiB (l, len bytes; the line number counted
 * in header_lines): the banner (the symmetry; array files refused) or,
 * after it, the size line, which ends the header (*done). */
static hurray_status header_line(mtx_read *r, const char *l, size_t len, int banner, int *done) {
    if (banner) {
        char low[256];
        size_t k;
        r->banner_len = len;
        for (k = 0; k < len && k + 1 < sizeof low; k++)
            low[k] = (char)tolower((unsigned char)l[k]);
        low[k] = '\0';
        if (strncmp(low, "%%matrixmarket", 14) != 0)
            return fail(HURRAY_ERR_PARSE,
                        "%s: line 1: not a Matrix Market file (no %%%%MatrixMarket banner)",
                        r->path);
        if (strstr(low, "array") != NULL)
            return fail(HURRAY_ERR_UNSUPPORTED_FEATURE,
                        "%s: an array (dense) file has no entry lines to split; read it with "
                        "hurray_coo_read_mtx_file",
                        r->path);
        r->symmetry = strstr(low, "skew-symmetric") ? HURRAY_MTX_SKEW_SYMMETRIC
                      : strstr(low, "symmetric")    ? HURRAY_MTX_SYMMETRIC
                      : strstr(low, "hermitian")    ? HURRAY_MTX_HERMITIAN
                                                    : HURRAY_MTX_GENERAL;
        return HURRAY_OK;
    }
    if (len > 0 && l[0] != '%' && strspn(l, " \t\r") < len) {
        *done = 1;
        if (sscanf(l, "%llu %llu %llu", &r->rows, &r->cols, &r->declared) != 3)
            return fail(HURRAY_ERR_PARSE,
                        "%s: line %llu: the size line needs rows, columns and entries", r->path,
                        r->header_lines);
    }
    return HURRAY_OK;
}

/* 1. The header: banner, comments, size line (within the first MiB). */
static hurray_status read_header(mtx_read *r) {
    hurray_status st = HURRAY_OK;
    size_t i, line_start = 0, headn = (size_t)(r->fsize < (1L << 20) ? r->fsize : (1L << 20));
    int done = 0;
    r->head = (unsigned char *)malloc(headn + 1);
    if (r->head == NULL || read_at(r->fp, 0, r->head, headn))
        return fail(HURRAY_ERR_IO, "%s: cannot read the header", r->path);
    r->head[headn] = '\0';
    for (i = 0; i <= headn && st == HURRAY_OK && !done; i++) {
        if (i < headn && r->head[i] != '\n') continue;
        r->header_lines++;
        st = header_line(r, (const char *)r->head + line_start, i - line_start,
                         r->header_lines == 1, &done);
        if (done) r->data = (long)(i + 1 < headn + 1 ? i + 1 : headn);
        line_start = i + 1;
    }
    if (st == HURRAY_OK && r->data == 0)
        st = fail(HURRAY_ERR_PARSE, "%s: no size line in the first MiB", r->path);
    return st;
}

/* 2. This rank's byte range of the entry lines, cut at line ends, read. */
static hurray_status read_range(mtx_read *r) {
    long span = r->fsize - r->data;
    long lo = r->data + (long)((u128)span * (u128)r->me / (u128)r->size);
    long hi = r->data + (long)((u128)span * (u128)(r->me + 1) / (u128)r->size);
    unsigned char c;
    /* A range starts after the line end at or before its start ... */
    r->a = lo;
    if (r->me > 0) {
        while (r->a < r->fsize && (read_at(r->fp, r->a - 1, &c, 1) == 0 && c != '\n')) r->a++;
    }
    /* ... and ends where the next one starts. */
    r->e = hi;
    if (r->me < r->size - 1) {
        while (r->e < r->fsize && (read_at(r->fp, r->e - 1, &c, 1) == 0 && c != '\n')) r->e++;
    } else {
        r->e = r->fsize;
    }
    if (r->e < r->a) r->e = r->a;
    r->text = (unsigned char *)malloc((size_t)(r->e - r->a) + r->banner_len + 64);
    if (r->text == NULL) return fail(HURRAY_ERR_ALLOC, "cannot allocate %ld bytes", r->e - r->a);
    if (read_at(r->fp, r->a, r->text, (size_t)(r->e - r->a)))
        return fail(HURRAY_ERR_IO, "%s: cannot read bytes %ld to %ld", r->path, r->a, r->e);
    return HURRAY_OK;
}

/* 3. Number the lines of this range, and count its entry lines: those
 * neither blank nor a comment (first non-blank character '%'), as
 * hurray_coo_read_mtx counts them. */
static void count_range(mtx_read *r) {
    const long len = r->e - r->a;
    long i;
    /* 0: at a line's start (only blanks so far), 1: an entry line, 2: a comment. */
    int kind = 0;
    for (i = 0; i < len; i++) {
        unsigned char c = r->text[i];
        if (c == '\n') {
            r->my_lines++;
            r->my_entries += kind == 1;
            kind = 0;
        } else if (kind == 0 && !isspace(c)) {
            kind = c == '%' ? 2 : 1;
        }
    }
    if (len > 0 && r->text[len - 1] != '\n') {
        r->my_lines++;
        r->my_entries += kind == 1;
    }
}

/* The lines and entry lines before this range and in all ranges.
 * Collective; a rank that failed counts nothing. */
static hurray_status number_ranges(mtx_read *r, hurray_status st) {
    unsigned long long mine_l = st == HURRAY_OK ? r->my_lines : 0;
    unsigned long long mine_e = st == HURRAY_OK ? r->my_entries : 0;
    const MPI_Datatype ull = MPI_UNSIGNED_LONG_LONG;
    if (MPI_Exscan(&mine_l, &r->lines_before, 1, ull, MPI_SUM, r->comm) != MPI_SUCCESS ||
        MPI_Exscan(&mine_e, &r->entries_before, 1, ull, MPI_SUM, r->comm) != MPI_SUCCESS ||
        MPI_Allreduce(&mine_e, &r->all_entries, 1, ull, MPI_SUM, r->comm) != MPI_SUCCESS ||
        MPI_Allreduce(&mine_l, &r->all_lines, 1, ull, MPI_SUM, r->comm) != MPI_SUCCESS)
        st = fail(HURRAY_ERR_INTERNAL, "MPI_Exscan or MPI_Allreduce failed");
    if (r->me == 0) r->lines_before = r->entries_before = 0;
    r->first_line = r->header_lines + 1 + r->lines_before;
    return st;
}

/* Where this range's entry keep + 1 (counting from 0: keep) starts, and
 * its file line; -1 when the range holds no more than keep entries. */
static long entry_start(const mtx_read *r, unsigned long long keep,
                        unsigned long long *line_of) {
    const long len = r->e - r->a;
    unsigned long long seen = 0, line = 0;
    long i, start = 0;
    int kind = 0;
    for (i = 0; i <= len; i++) {
        unsigned char c = i < len ? r->text[i] : '\n';
        if (c == '\n') {
            if (kind == 1 && seen++ == keep) {
                *line_of = r->first_line + line;
                return start;
            }
            line++;
            kind = 0;
            start = i + 1;
        } else if (kind == 0 && !isspace(c)) {
            kind = c == '%' ? 2 : 1;
        }
    }
    return -1;
}

/* "One entry more" for the entry line at extra_at (file line line_of),
 * named as the one-process read names it (line, column, token). */
static hurray_status one_more(const mtx_read *r, long extra_at, unsigned long long line_of) {
    const unsigned char *l = r->text + extra_at;
    long col = 0, tl = 0;
    while (l[col] == ' ' || l[col] == '\t') col++;
    while (extra_at + col + tl < r->e - r->a && !isspace(l[col + tl]) && tl < 40) tl++;
    return fail(HURRAY_ERR_PARSE,
                "%s: line %llu, column %ld: one entry more than the %llu the size line (line "
                "%llu) declares (found '%.*s')",
                r->path, line_of, col + 1, r->declared, r->header_lines, (int)tl,
                (const char *)l + col);
}

/* 4. Parse the range as a file of its own: the banner, a size line for its
 * entry lines, then the lines. The size line's count holds for the whole
 * file, as in hurray_coo_read_mtx: only the first `declared` entries are
 * parsed, and the rank that holds entry declared + 1 says "one entry more"
 * (after any problem in the entries before it, as the one-process read
 * does). */
static hurray_status parse_range(mtx_read *r) {
    const unsigned long long declared = r->declared, before = r->entries_before;
    unsigned long long keep = before >= declared               ? 0
                              : r->my_entries < declared - before ? r->my_entries
                                                                 : declared - before;
    long len = r->e - r->a, extra_at = -1;
    unsigned long long extra_line = 0;
    unsigned char *buf;
    hurray_status st;
    int n;
    if (keep < r->my_entries) {
        extra_at = entry_start(r, keep, &extra_line);
        len = extra_at;
    }
    buf = (unsigned char *)malloc((size_t)len + r->banner_len + 80);
    if (buf == NULL) return fail(HURRAY_ERR_ALLOC, "cannot allocate %ld bytes", len);
    memcpy(buf, r->head, r->banner_len);
    n = (int)r->banner_len;
    n += snprintf((char *)buf + n, 80, "\n%llu %llu %llu\n", r->rows, r->cols, keep);
    memcpy(buf + n, r->text, (size_t)len);
    {
        hurray_text_options o = {sizeof(hurray_text_options), 0, 0, 1, 0, 0};
        o.duplicates_policy = r->policy;
        o.flags = r->flags;
        st = hurray_coo_read_mtx(buf, (size_t)n + (size_t)len, &o, NULL, &r->local);
    }
    free(buf);
    if (st != HURRAY_OK) {
        place_in_file(r->path, r->first_line);
    } else if (extra_at >= 0 && before <= declared) {
        /* This range holds entry declared + 1. */
        st = one_more(r, extra_at, extra_line);
        hurray_coo_free(r->local);
        r->local = NULL;
    }
    return st;
}

/* 5. Every entry to the owner of its row, duplicates across ranges
 * combined in range (file) order; a duplicate whose entries come from
 * different ranges is named by its file lines. Collective. */
static hurray_status distribute(mtx_read *r, uint32_t ownership, const uint64_t *given,
                                hurray_coo **out) {
    const uint64_t shape[2] = {r->rows, r->cols};
    size_t vb = 0, ib = 0;
    const void *vals = hurray_coo_values(r->local, &vb);
    const uint64_t *idx = hurray_coo_indices(r->local, &ib);
    uint8_t tag = hurray_coo_type_tag(r->local);
    hurray_triplets t;
    hurray_status st;
    memset(&t, 0, sizeof t);
    t.rank = 2;
    t.shape = shape;
    t.n = hurray_coo_nnz(r->local);
    t.index_type = HURRAY_INDEX_UINT64;
    t.indices = idx;
    t.indices_bytes = ib;
    t.type_tag = tag == HURRAY_TYPE_BOOL ? HURRAY_PATTERN : tag; /* pattern files */
    t.values = tag == HURRAY_TYPE_BOOL ? NULL : vals;
    t.values_bytes = tag == HURRAY_TYPE_BOOL ? 0 : vb;
    st = hurray_mpi_assemble(&t, r->policy, r->flags & HURRAY_ASSEMBLE_DROP_ZEROS, ownership,
                             given, r->comm, out, NULL);
    if (st == HURRAY_ERR_DUPLICATE)
        st = name_duplicate_lines(r->path, r->a, r->e, r->first_line,
                                  r->symmetry != HURRAY_MTX_GENERAL, r->comm);
    return st;
}

hurray_status hurray_mpi_read_mtx(const char *path, uint32_t policy, uint32_t flags,
                                  uint32_t ownership, const uint64_t *given, MPI_Comm comm,
                                  uint32_t *out_symmetry, hurray_coo **out) {
    mtx_read r;
    hurray_status st = HURRAY_OK;
    last_message[0] = '\0';
    if (out != NULL) *out = NULL;
    memset(&r, 0, sizeof r);
    r.path = path;
    r.policy = policy;
    r.flags = flags;
    r.comm = comm;
    if (MPI_Comm_size(comm, &r.size) != MPI_SUCCESS || MPI_Comm_rank(comm, &r.me) != MPI_SUCCESS)
        return fail(HURRAY_ERR_INTERNAL, "MPI_Comm_size or MPI_Comm_rank failed");
    if (out == NULL) st = fail(HURRAY_ERR_NULL_POINTER, "out is NULL");
    else if (path == NULL) st = fail(HURRAY_ERR_NULL_POINTER, "path is NULL");
    else if ((r.fp = fopen(path, "rb")) == NULL || fseek(r.fp, 0, SEEK_END) != 0 ||
             (r.fsize = ftell(r.fp)) < 0)
        st = fail(HURRAY_ERR_IO, "%s: cannot open or size the file", path);
    if (st == HURRAY_OK) st = read_header(&r);
    if (st == HURRAY_OK) st = read_range(&r);
    if (st == HURRAY_OK) count_range(&r);
    st = number_ranges(&r, st);
    if (st == HURRAY_OK) st = parse_range(&r);
    if ((st = agree(st, comm)) != HURRAY_OK) goto done;
    /* Fewer entries than declared, every line good: the same verdict on
     * every rank (the counts are global), as hurray_coo_read_mtx words it. */
    if (r.all_entries < r.declared) {
        st = fail(HURRAY_ERR_PARSE,
                  "%s: line %llu: the file ends after %llu of the %llu entries the size line "
                  "(line %llu) declares",
                  path, r.header_lines + r.all_lines, r.all_entries, r.declared, r.header_lines);
        goto done;
    }
    st = distribute(&r, ownership, given, out);
    if (st == HURRAY_OK && out_symmetry != NULL) *out_symmetry = r.symmetry;
done:
    mtx_read_free(&r);
    return st;
}
