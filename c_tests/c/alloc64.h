/* 64-byte-aligned copies of test data (the buffer protocol requires it for
 * borrowed buffers). */
#ifndef HURRAY_ALLOC64_H
#define HURRAY_ALLOC64_H

#include <stddef.h>

/* A 64-byte-aligned copy of `n` bytes of `src` (src may be NULL: zeroed),
 * with `skew` added to the address to make it deliberately misaligned.
 * Release with free64(). */
void *alloc64(const void *src, size_t n, size_t skew);
void free64(void *p);

#endif
