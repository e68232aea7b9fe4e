// Built with CMake find_package(hurray_coo), as C++ users do.
#include <hurray_coo.hpp>

#include <cstdio>
#include <vector>

int main() {
    try {
        auto t = hurray::coo::copy(hurray::type::float64, {4, 4},
                                   std::vector<double>{1.5, -0.5, 2.0},
                                   std::vector<std::uint64_t>{0, 1, 2, 0, 3, 3}, true);
        t.validate();
        std::printf("c++ consumer: (3, 3) = %g\n", t.lookup_f64({3, 3}));
        (void)t.lookup_f64({9, 9});
    } catch (const hurray::error &e) {
        std::printf("c++ consumer caught %s: %s\n", e.name(), e.message().c_str());
        return e.status() == HURRAY_ERR_INDEX_OUT_OF_BOUNDS ? 0 : 1;
    }
    return 1;
}
