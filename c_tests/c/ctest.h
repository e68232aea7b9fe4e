/* Minimal harness for the C tests: each test is a function returning its
 * number of failed checks; every check prints where and why it failed. */
#ifndef HURRAY_CTEST_H
#define HURRAY_CTEST_H

#include <stdio.h>
#include <string.h>

#include "hurray_coo.h"

#define CHECK(cond)                                                            \
    do {                                                                       \
        if (!(cond)) {                                                         \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__,   \
                    #cond);                                                    \
            failures++;                                                        \
        }                                                                      \
    } while (0)

/* Check a call's status, and that the thread's message contains `needle`
 * (pass "" to only require a non-empty message on failure). */
#define CHECK_STATUS(call, expected, needle)                                   \
    do {                                                                       \
        hurray_status st_ = (call);                                            \
        const char *msg_ = hurray_last_error_message();                        \
        if (st_ != (expected)) {                                               \
            fprintf(stderr, "%s:%d: %s returned %s, expected %s (%s)\n",       \
                    __FILE__, __LINE__, #call, hurray_status_name(st_),        \
                    hurray_status_name(expected), msg_);                       \
            failures++;                                                        \
        } else if ((expected) != HURRAY_OK &&                                  \
                   (msg_ == NULL || msg_[0] == '\0' ||                         \
                    strstr(msg_, (needle)) == NULL)) {                         \
            fprintf(stderr, "%s:%d: message \"%s\" lacks \"%s\"\n", __FILE__,  \
                    __LINE__, msg_ ? msg_ : "(null)", (needle));               \
            failures++;                                                        \
        }                                                                      \
    } while (0)

typedef int (*ctest_fn)(void);

#endif
