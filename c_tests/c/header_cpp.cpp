// The generated header must compile as C++ (-std=c++11, warnings as errors)
// and be callable from C++ without wrappers.
#include "hurray_coo.h"
#include "hurray_coo_probe.h"

#include <cstdint>
#include <cstring>

extern "C" int ctest_cpp_smoke(void);

extern "C" int ctest_cpp_smoke(void) {
    alignas(64) static const float values[3] = {1.5f, -0.5f, 2.0f};
    alignas(64) static const std::uint64_t indices[6] = {0, 1, 2, 0, 3, 3};
    const std::uint64_t shape[2] = {4, 4};
    hurray_coo *coo = nullptr;
    int failures = 0;
    hurray_coo_parts parts{};
    parts.type_tag = 0x03;
    parts.rank = 2;
    parts.shape = shape;
    parts.nnz = 3;
    parts.is_sorted = true;
    parts.values = values;
    parts.values_bytes = sizeof values;
    parts.indices = indices;
    parts.indices_bytes = sizeof indices;
    if (hurray_coo_create(&parts, nullptr, &coo) != HURRAY_OK) {
        return 1;
    }
    const std::uint64_t q[2] = {3, 3};
    double d = 0;
    bool found = false;
    if (hurray_coo_lookup_f64(coo, q, 2, &d, &found) != HURRAY_OK || !found || d != 2.0) {
        failures++;
    }
    if (std::strcmp(hurray_status_name(HURRAY_ERR_DUPLICATE), "HURRAY_ERR_DUPLICATE") != 0) {
        failures++;
    }
    hurray_coo_free(coo);
    return failures;
}
