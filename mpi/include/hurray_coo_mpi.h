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
    uint64_t parent_shape[HURRAY_MAX_RANK];
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

/** Row ownership of hurray_mpi_assemble: rank k owns rows k * rows / size
 * to (k + 1) * rows / size. */
#define HURRAY_MPI_ROWS_EQUAL 0u
/** Row ownership: blocks of about equal triplet counts (from a histogram
 * of the triplets' rows over every rank: one extra allreduce). */
#define HURRAY_MPI_ROWS_BALANCED 1u
/** Row ownership: the caller's size + 1 boundaries (the same on every
 * rank): 0, non-decreasing, ending at the row extent. */
#define HURRAY_MPI_ROWS_GIVEN 2u

/** A distributed re-assembly plan (opaque): what hurray_mpi_assemble
 * learned, so that new values of the same triplets move and combine with
 * one MPI_Alltoallv of values and no sort. */
typedef struct hurray_mpi_plan hurray_mpi_plan;

/**
 * Assemble a tensor from triplets spread over the ranks, each triplet
 * possibly owned by another rank: rank k owns a block of rows (dimension
 * 0), chosen by ownership (HURRAY_MPI_ROWS_*; boundaries: size + 1 row
 * numbers for HURRAY_MPI_ROWS_GIVEN, else NULL). Every rank passes its own
 * triplets (as hurray_coo_assemble takes them; the same rank, shape, type
 * and index base on every rank; whole-byte element types or
 * HURRAY_PATTERN), and the same duplicates_policy and flags (those of
 * hurray_coo_assemble; HURRAY_ASSEMBLE_SKIP_NEGATIVE drops triplets with a
 * negative coordinate before they are sent).
 *
 * The result equals hurray_coo_assemble of all triplets in rank order
 * (rank 0's in their order, then rank 1's, ...), which is what the first
 * and last policies and the order of floating-point sums refer to: *out
 * (not NULL) receives this rank's rows as a shard (hurray_coo_shard: the
 * parent is the triplets' shape, the offset the block's first row),
 * validated, canonical, owned by the caller. Cost: an MPI_Alltoall of
 * counts, one MPI_Alltoallv of the triplets, the local assembly, and one
 * MPI_Allgather of statuses; triplets are sent once.
 *
 * out_plan (may be NULL) receives the re-assembly plan (release with
 * hurray_mpi_plan_free).
 *
 * Returns, on every rank, HURRAY_OK or the first failing rank's status
 * (its message names the rank and, for a problem in the triplets, the
 * triplet as its rank numbered it): the statuses of hurray_coo_assemble,
 * HURRAY_ERR_INDEX_OUT_OF_BOUNDS (a row outside the shape),
 * HURRAY_ERR_INVALID_ARGUMENT (ownership, boundaries, ranks disagreeing
 * on shape, type or base), HURRAY_ERR_UNSUPPORTED_TYPE (sub-byte types),
 * HURRAY_ERR_OVERFLOW (more than 2^31 - 1 triplets between two ranks),
 * HURRAY_ERR_ALLOC, HURRAY_ERR_INTERNAL (an MPI call failed).
 */
hurray_status hurray_mpi_assemble(const hurray_triplets *triplets, uint32_t duplicates_policy,
                                  uint32_t flags, uint32_t ownership, const uint64_t *boundaries,
                                  MPI_Comm comm, hurray_coo **out, hurray_mpi_plan **out_plan);

/**
 * Re-assemble with new values: values holds this rank's new values, one
 * per triplet it passed to hurray_mpi_assemble, in that order and type
 * (values_bytes of them); out_values receives this rank's entries' values
 * (out_bytes: its shard's values buffer size), in the order of its shard
 * and of its CSR export. Collective over the communicator of the plan's
 * assembly. Moves only values: one MPI_Alltoallv, then the local plan; no
 * sort, no allocation.
 *
 * Returns, on every rank, HURRAY_OK or the first failing rank's status:
 * HURRAY_ERR_NULL_POINTER, HURRAY_ERR_BUFFER_SIZE, the statuses of
 * hurray_assembly_plan_apply (HURRAY_ERR_OVERFLOW for an integer sum),
 * HURRAY_ERR_INTERNAL.
 */
hurray_status hurray_mpi_plan_apply(hurray_mpi_plan *plan, const void *values, size_t values_bytes,
                                    void *out_values, size_t out_bytes);

/** Bytes this rank sends to other ranks per hurray_mpi_plan_apply (values
 * that cross ranks, and nothing else); 0 for NULL. */
uint64_t hurray_mpi_plan_bytes_sent(const hurray_mpi_plan *plan);

/** Free a plan (NULL is a no-op). Not collective. */
void hurray_mpi_plan_free(hurray_mpi_plan *plan);

/**
 * Read the sorted COO tensor name (NUL-terminated) of the Hurray file path
 * (NUL-terminated; the same on every rank, on a file system every rank
 * sees), each rank only its block of rows: the file is mapped, the block's
 * entries found by binary search and copied into a shard (as
 * hurray_file_get_rows does), so a rank reads its own part of the file and
 * not the rest. Together the ranks check the whole tensor, each part once.
 * ownership: HURRAY_MPI_ROWS_EQUAL, HURRAY_MPI_ROWS_GIVEN (boundaries: size
 * + 1 rows) or HURRAY_MPI_ROWS_BALANCED (blocks of about equal entry
 * counts, from the entries at the cuts: each rank reads size entries, no
 * communication). *out (not NULL) receives this rank's shard.
 *
 * Returns, on every rank, HURRAY_OK or the first failing rank's status (the
 * statuses of hurray_file_open and hurray_file_get_rows).
 */
hurray_status hurray_mpi_read_hrry(const char *path, const char *name, uint32_t ownership,
                                   const uint64_t *boundaries, MPI_Comm comm, hurray_coo **out);

/**
 * Read a Matrix Market coordinate file (path, NUL-terminated, the same on
 * every rank) in parallel: every rank reads the header and its own byte
 * range of the entry lines (cut at line ends), parses it as
 * hurray_coo_read_mtx does (symmetric files mirrored unless flags has
 * HURRAY_TEXT_KEEP_TRIANGULAR, duplicates within the range combined by
 * duplicates_policy), then the entries go to the owners of their rows
 * (hurray_mpi_assemble: ownership and boundaries as there), which combine
 * duplicates across ranges in file order. *out (not NULL) receives this
 * rank's rows as a shard; out_symmetry (may be NULL) the banner's
 * HURRAY_MTX_*. Messages give the path and the line as the file numbers
 * it ("m.mtx: line 70012, column 9: ..."). HURRAY_DUP_SUM adds duplicates
 * that fall in different ranges in range order, so a floating-point sum
 * may differ in its last bits from a one-process read.
 *
 * Returns, on every rank, HURRAY_OK or the first failing rank's status:
 * HURRAY_ERR_IO, HURRAY_ERR_PARSE, HURRAY_ERR_UNSUPPORTED_FEATURE (an
 * array file: read it with hurray_coo_read_mtx_file), and the statuses of
 * hurray_coo_read_mtx and hurray_mpi_assemble.
 */
hurray_status hurray_mpi_read_mtx(const char *path, uint32_t duplicates_policy, uint32_t flags,
                                  uint32_t ownership, const uint64_t *boundaries, MPI_Comm comm,
                                  uint32_t *out_symmetry, hurray_coo **out);

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
