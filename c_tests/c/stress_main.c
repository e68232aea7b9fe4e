/* Standalone driver for the thread stress test, for tools that watch a whole
 * process (valgrind --tool=helgrind): links only libhurray_coo and libc.
 *
 * It leaves out the fork test: helgrind keeps the parent's threads in a
 * forked child's history, so the child's fresh start of a condition variable
 * those threads waited on (the library's kept threads, which the child does
 * not have) reads to it as a race with them. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

size_t ctest_threads_count(void);
const char *ctest_threads_name(size_t i);
int ctest_threads_run(size_t i);

int main(void) {
    size_t i;
    int failures = 0;
    for (i = 0; i < ctest_threads_count(); i++) {
        if (strcmp(ctest_threads_name(i), "a_forked_child_starts_its_own_threads") != 0) {
            failures += ctest_threads_run(i);
        }
    }
    printf("thread stress: %d failed checks\n", failures);
    return failures != 0;
}
