/* Built against an installed libhurray_coo with pkg-config, as users do. */
#include <hurray_coo.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

int main(void) {
    const uint64_t shape[2] = {4, 4};
    const float values[3] = {1.5f, -0.5f, 2.0f};
    const uint64_t indices[6] = {0, 1, 2, 0, 3, 3};
    const uint64_t q[2] = {2, 0};
    hurray_coo *coo = NULL;
    double d = 0;
    const hurray_coo_parts parts = {HURRAY_TYPE_FLOAT32, 2, shape, 3, true, values,
                                    sizeof values, indices, sizeof indices};
    hurray_coo_options opts;
    hurray_status st;
    memset(&opts, 0, sizeof opts);
    opts.size = sizeof opts;
    opts.flags = HURRAY_COO_COPY;
    st = hurray_coo_create(&parts, &opts, &coo);
    if (st != HURRAY_OK || hurray_coo_lookup_f64(coo, q, 2, &d, NULL) != HURRAY_OK || d != -0.5) {
        fprintf(stderr, "%s: %s\n", hurray_status_name(st), hurray_last_error_message());
        return 1;
    }
    printf("c consumer: (2, 0) = %g, library %s, ABI %u\n", d, hurray_coo_version_string(),
           hurray_coo_abi_version());
    hurray_coo_free(coo);
    return hurray_coo_abi_version() == HURRAY_COO_ABI_VERSION ? 0 : 1;
}
