/* The C streaming baseline every "C stream" row is measured against: a sum
 * of the index bytes as uint64 with four accumulators (gcc -O3
 * -march=native vectorises it), and the sink that keeps it from being
 * optimised away. One copy, so every benchmark compares to the same loop. */
#ifndef PEERS_STREAM_H
#define PEERS_STREAM_H
#include <stddef.h>
#include <stdint.h>

static volatile uint64_t sink;

static uint64_t sum(const uint64_t *p, size_t n) {
    uint64_t a = 0, b = 0, c = 0, d = 0;
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        a += p[i];
        b += p[i + 1];
        c += p[i + 2];
        d += p[i + 3];
    }
    for (; i < n; i++) a += p[i];
    return a + b + c + d;
}
#endif
