#include "alloc64.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The raw malloc pointer is stored just before the returned address. */
void *alloc64(const void *src, size_t n, size_t skew) {
    unsigned char *raw = malloc(n + 64 + skew + sizeof(void *));
    uintptr_t p;
    unsigned char *out;
    if (raw == NULL) {
        return NULL;
    }
    p = ((uintptr_t)(raw + sizeof(void *)) + 63u) & ~(uintptr_t)63u;
    out = (unsigned char *)p + skew;
    memcpy(out - sizeof(void *), &raw, sizeof(void *));
    if (src != NULL) {
        memcpy(out, src, n);
    } else {
        memset(out, 0, n);
    }
    return out;
}

void free64(void *p) {
    unsigned char *raw;
    if (p == NULL) {
        return;
    }
    memcpy(&raw, (unsigned char *)p - sizeof(void *), sizeof(void *));
    free(raw);
}
