/* What the MPI tests share: this rank, the communicator size, the failed
 * check count, and CHECK (prints rank, file, line and condition). */
#ifndef HURRAY_MPITEST_H
#define HURRAY_MPITEST_H

#include <stdio.h>

static int me, size, failures;

#define CHECK(c)                                                                          \
    do {                                                                                  \
        if (!(c)) {                                                                       \
            fprintf(stderr, "rank %d: %s:%d: CHECK failed: %s\n", me, __FILE__, __LINE__, \
                    #c);                                                                  \
            failures++;                                                                   \
        }                                                                                 \
    } while (0)

#endif
