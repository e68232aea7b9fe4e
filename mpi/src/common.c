/* libhurray_coo_mpi: what its operations share: the calling thread's
 * message, the agreement of all ranks on a failure, the library's last
 * position, given row boundaries. */
#define _POSIX_C_SOURCE 200112L
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

THREAD_LOCAL char last_message[MSG_LEN + 32];

const char *hurray_mpi_last_error_message(void) { return last_message; }

/* Copy src into dst (n bytes), cut if it must be. */
void copy_text(char *dst, size_t n, const char *src) {
    size_t len = strlen(src);
    if (len >= n) len = n - 1;
    memcpy(dst, src, len);
    dst[len] = '\0';
}

/* Append src to the NUL-terminated dst (n bytes), cut if it must be. */
void append_text(char *dst, size_t n, const char *src) {
    size_t at = strlen(dst);
    if (at + 1 < n) copy_text(dst + at, n - at, src);
}

hurray_status fail(hurray_status st, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_message, sizeof last_message, fmt, ap);
    va_end(ap);
    return st;
}

/* A rank's status and message, gathered so that every rank returns the
 * first failing rank's. */
typedef struct verdict {
    int32_t status;
    char msg[MSG_LEN];
} verdict;

/* Agree on the first failing rank's status; on failure every rank's
 * message is "rank R: <its message>". */
hurray_status agree(hurray_status mine, MPI_Comm comm) {
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


/* The library's last failure as numbers (hurray_last_error_position);
 * status HURRAY_OK and nothing set when it cannot be read. */
hurray_error_position last_position(void) {
    hurray_error_position p;
    memset(&p, 0, sizeof p);
    p.size = sizeof p;
    if (hurray_last_error_position(&p) != HURRAY_OK) {
        memset(&p, 0, sizeof p);
        p.detail = "";
    }
    return p;
}

THREAD_LOCAL hmpi_duplicate last_duplicate;

/* The caller's size + 1 row boundaries (HURRAY_MPI_ROWS_GIVEN) into b,
 * checked: they start at 0, never decrease and end at the row extent. */
hurray_status given_blocks(const uint64_t *given, int size, uint64_t rows, uint64_t *b) {
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

