/* What the parts of libhurray_coo_mpi share (internal, not installed):
 * the calling thread's message, the failure helpers, the agreement of all
 * ranks on the first failure, the library's last position, and the row
 * boundaries a caller gives. */
#ifndef HURRAY_COO_MPI_INTERNAL_H
#define HURRAY_COO_MPI_INTERNAL_H

#include "hurray_coo_mpi.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#define MSG_LEN 512

#if defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
#define THREAD_LOCAL _Thread_local
#else
#define THREAD_LOCAL __thread
#endif

/* Functions shared between the files of the library, not exported. */
#define HMPI_INTERNAL __attribute__((visibility("hidden")))

__extension__ typedef unsigned __int128 u128;

/* The calling thread's message (hurray_mpi_last_error_message). */
HMPI_INTERNAL extern THREAD_LOCAL char hmpi_last_message[MSG_LEN + 32];

/* Copy src into dst (n bytes), cut if it must be. */
HMPI_INTERNAL void hmpi_copy_text(char *dst, size_t n, const char *src);
/* Append src to the NUL-terminated dst (n bytes), cut if it must be. */
HMPI_INTERNAL void hmpi_append_text(char *dst, size_t n, const char *src);
/* Set the message (printf-style) and return st. */
HMPI_INTERNAL hurray_status hmpi_fail(hurray_status st, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Agree on the first failing rank's status; on failure every rank's
 * message is "rank R: <its message>". Collective. */
HMPI_INTERNAL hurray_status hmpi_agree(hurray_status mine, MPI_Comm comm);
/* The library's last failure as numbers; status HURRAY_OK and nothing set
 * when it cannot be read. */
HMPI_INTERNAL hurray_error_position hmpi_last_position(void);
/* The caller's size + 1 row boundaries (HURRAY_MPI_ROWS_GIVEN) into b,
 * checked: they start at 0, never decrease and end at the row extent. */
HMPI_INTERNAL hurray_status hmpi_given_blocks(const uint64_t *given, int size, uint64_t rows,
                                              uint64_t *b);

/* The coordinates of the last duplicate this rank's local assembly found
 * (as the triplets were written), for hurray_mpi_read_mtx to name the
 * file's lines. */
typedef struct hmpi_duplicate {
    int set;
    uint32_t rank;
    uint64_t coords[HURRAY_MAX_RANK];
} hmpi_duplicate;
HMPI_INTERNAL extern THREAD_LOCAL hmpi_duplicate hmpi_last_duplicate;

#define last_message hmpi_last_message
#define copy_text hmpi_copy_text
#define append_text hmpi_append_text
#define fail hmpi_fail
#define agree hmpi_agree
#define last_position hmpi_last_position
#define given_blocks hmpi_given_blocks
#define last_duplicate hmpi_last_duplicate

#endif
