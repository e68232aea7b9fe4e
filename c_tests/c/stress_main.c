/* Standalone driver for the thread stress test, for tools that watch a whole
 * process (valgrind --tool=helgrind): links only libhurray_coo and libc. */
#include <stddef.h>
#include <stdio.h>

size_t ctest_threads_count(void);
int ctest_threads_run(size_t i);

int main(void) {
    size_t i;
    int failures = 0;
    for (i = 0; i < ctest_threads_count(); i++) {
        failures += ctest_threads_run(i);
    }
    printf("thread stress: %d failed checks\n", failures);
    return failures != 0;
}
