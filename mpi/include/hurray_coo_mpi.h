/* libhurray_coo_mpi: sharded Hurray COO tensors across MPI ranks, built on
 * the public C API of libhurray_coo (hurray_coo.h) and the caller's MPI.
 * The core library stays free of MPI; this one is built only where an MPI
 * is installed (Open MPI or MPICH): `make mpi`, `make install-mpi`.
 *
 * Every function is collective over the communicator given: every rank
 * calls it, with its own local arguments, and every rank returns the same
 * status. On failure, hurray_mpi_last_error_message() holds, on every
 * rank, the message of the rank that found the problem, prefixed with its
 * number ("rank 2: entry 5 at (3, 1): ...").
 *
 * Thread safety: as MPI's; the message is kept per thread. */
#ifndef HURRAY_COO_MPI_H
#define HURRAY_COO_MPI_H

#include <mpi.h>
#include <stdint.h>

#include "hurray_coo.h"

#ifdef __cplusplus
extern "C" {
#endif

/** What a distributed validation learned about the whole tensor. */
typedef struct hurray_mpi_report {
    /** The parent tensor's rank and shape (rank extents). */
    uint32_t rank;
    uint64_t parent_shape[64];
    /** Entries over all ranks. */
    uint64_t global_nnz;
    /** Number of ranks (the communicator's size). */
    int32_t ranks;
    /** The lowest rank that found a problem, or -1. */
    int32_t failing_rank;
    /** Statistics of the parent tensor reduced from every rank's own
     * (hurray_coo_statistics): nnz and sparsity always; min, max, mean,
     * population stddev, has_nan and has_inf for real types. Valid only on
     * success; the same on every rank. */
    hurray_statistics statistics;
} hurray_mpi_report;

/**
 * Validate a tensor distributed as one shard per rank. local (not NULL) is
 * this rank's shard (hurray_coo_create_shard, or a handle read from a
 * descriptor or Hurray file with a shard section); a handle that is not a
 * shard counts as the whole parent at offset 0, which is valid only on a
 * communicator of one rank.
 *
 * Checked: every rank's local rules (hurray_coo_validate), then, on every
 * rank from the same gathered facts: the same element type, rank and
 * parent shape everywhere, boxes pairwise disjoint (entries in an overlap
 * would be duplicates across ranks) and together covering the parent
 * exactly. Cost: the local validation and one MPI_Allgather of a small
 * fixed-size record per rank; no entry crosses the network.
 *
 * out (may be NULL) receives the report on success (and failing_rank on
 * failure).
 *
 * Returns, on every rank: HURRAY_OK; the status of the lowest rank whose
 * local validation failed (HURRAY_ERR_INDEX_OUT_OF_BOUNDS, ..._DUPLICATE,
 * ..._NOT_SORTED, ...; HURRAY_ERR_NULL_POINTER for a NULL local); or
 * HURRAY_ERR_INVALID_TYPE, HURRAY_ERR_RANK_MISMATCH, HURRAY_ERR_INVALID_SHAPE
 * (parent shapes differ, boxes overlap, or leave part of the parent
 * uncovered), HURRAY_ERR_INTERNAL (an MPI call failed).
 */
hurray_status hurray_mpi_validate(const hurray_coo *local, MPI_Comm comm, hurray_mpi_report *out);

/**
 * The calling thread's message of its last failed hurray_mpi_* call (the
 * same text on every rank), "" after a success. Never NULL; valid until
 * the next hurray_mpi_* call on this thread.
 */
const char *hurray_mpi_last_error_message(void);

#ifdef __cplusplus
}
#endif

#endif /* HURRAY_COO_MPI_H */
