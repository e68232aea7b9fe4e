// C++17 tests of include/hurray_coo.hpp: RAII (freed exactly once, moves),
// exceptions carrying status and message, typed accessors, descriptors.
#include "hurray_coo.hpp"

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

extern "C" int ctest_cpp17(void);

namespace {

int failures = 0;

void expect(bool ok, const char *what, int line) {
    if (!ok) {
        std::fprintf(stderr, "test_cpp17.cpp:%d: CHECK failed: %s\n", line, what);
        failures++;
    }
}
#define CHECK(c) expect((c), #c, __LINE__)

int releases = 0;
extern "C" void on_release(void *) { releases++; }

struct alignas(64) seed_values {
    float v[3] = {1.5f, -0.5f, 2.0f};
};
struct alignas(64) seed_indices {
    std::uint64_t i[6] = {0, 1, 2, 0, 3, 3};
};

} // namespace

extern "C" int ctest_cpp17(void) {
    static_assert(!std::is_copy_constructible<hurray::coo>::value, "move-only");
    static_assert(!std::is_copy_assignable<hurray::coo>::value, "move-only");
    static_assert(std::is_nothrow_move_constructible<hurray::coo>::value, "cheap moves");
    failures = 0;
    static const seed_values values;
    static const seed_indices indices;
    const std::vector<std::uint64_t> shape{4, 4};

    // Borrowed, validated, typed access.
    auto t = hurray::coo::borrow(hurray::type::float32, shape, values.v, sizeof values.v,
                                 indices.i, sizeof indices.i, true);
    t.validate();
    CHECK(t.rank() == 2 && t.nnz() == 3 && t.is_sorted());
    CHECK(t.element_type() == hurray::type::float32);
    CHECK(t.shape().size() == 2 && t.shape()[1] == 4);
    CHECK(t.values<float>().size() == 3 && t.values<float>()[1] == -0.5f);
    CHECK(t.indices().size() == 6 && t.indices()[4] == 3);
    CHECK(t.lookup_f64({2, 0}) == -0.5);
    CHECK(t.lookup_f64({1, 1}) == 0.0);
    auto f = t.find<float>({3, 3});
    CHECK(f.found && f.value == 2.0f);
    CHECK(t.statistics().nnz == 3);

    // Errors are exceptions with the status and the message.
    try {
        (void)t.lookup_f64({4, 0});
        CHECK(false);
    } catch (const hurray::error &e) {
        CHECK(e.status() == HURRAY_ERR_INDEX_OUT_OF_BOUNDS);
        CHECK(std::string(e.name()) == "HURRAY_ERR_INDEX_OUT_OF_BOUNDS");
        CHECK(e.message().find("coordinate 4 in dimension 0") != std::string::npos);
        CHECK(std::string(e.what()).rfind("HURRAY_ERR_INDEX_OUT_OF_BOUNDS: ", 0) == 0);
    }
    try {
        const std::vector<std::uint64_t> dup{2, 0, 2, 0};
        (void)hurray::coo::copy(hurray::type::float64, shape, std::vector<double>{1.0, 2.0}, dup,
                                false);
        CHECK(false);
    } catch (const hurray::error &e) {
        CHECK(e.status() == HURRAY_ERR_DUPLICATE);
        CHECK(e.message() == "entry 1 duplicates entry 0 at (2, 0)");
    }

    // The inline probe: find_f64's answers (float32 here: through the call),
    // and in place on a sorted float64 tensor; errors as exceptions.
    {
        const hurray::probe p(t);
        CHECK(p.view().version == HURRAY_LOOKUP_VIEW_VERSION && p.view().values_f64 == nullptr);
        auto d = hurray::coo::copy(hurray::type::float64, shape,
                                   std::vector<double>{1.5, -0.5, 2.0, 4.0},
                                   std::vector<std::uint64_t>{0, 1, 2, 0, 2, 3, 3, 3}, true);
        const hurray::probe pd(d);
        CHECK(pd.view().offset_bytes != 0 && pd.view().values_f64 != nullptr);
        for (std::uint64_t i = 0; i < 4; i++) {
            for (std::uint64_t j = 0; j < 4; j++) {
                const std::uint64_t q[2] = {i, j};
                auto a = p.find_f64(q, 2), b = t.find_f64(q, 2);
                auto c = pd.find_f64(q, 2), e = d.find_f64(q, 2);
                CHECK(a.value == b.value && a.found == b.found);
                CHECK(c.value == e.value && c.found == e.found);
            }
        }
        CHECK(pd.lookup_f64({2, 3}) == 2.0);
        try {
            (void)pd.lookup_f64({4, 0});
            CHECK(false);
        } catch (const hurray::error &e) {
            CHECK(e.status() == HURRAY_ERR_INDEX_OUT_OF_BOUNDS);
            CHECK(e.message().find("coordinate 4 in dimension 0") != std::string::npos);
        }
    }

    // Copies from vectors: misaligned input is fine.
    auto c = hurray::coo::copy(hurray::type::int32, {10}, std::vector<std::int32_t>{7, -3},
                               std::vector<std::uint64_t>{1, 8}, true);
    CHECK(c.find<std::int32_t>({8}).value == -3);

    // Descriptors round-trip.
    auto desc = t.descriptor(HURRAY_DESCRIPTOR_STATISTICS_COUNTS);
    CHECK(desc.size() == 165);
    auto back = hurray::coo::from_descriptor(desc, values.v, sizeof values.v, indices.i,
                                             sizeof indices.i);
    CHECK(back.lookup_f64({0, 1}) == 1.5);

    // Index and batch lookups.
    {
        auto ix = hurray::coo::borrow(hurray::type::float32, shape, values.v, sizeof values.v,
                                      indices.i, sizeof indices.i, true, false, true);
        CHECK(ix.index_bytes() > 0 && t.index_bytes() == 0);
        std::vector<bool> found;
        auto got = ix.lookup_batch({0, 1, 1, 1, 3, 3}, &found, 2);
        CHECK(got.size() == 3 && got[0] == 1.5 && got[1] == 0.0 && got[2] == 2.0);
        CHECK(found.size() == 3 && found[0] && !found[1] && found[2]);
        try {
            (void)ix.lookup_batch({0, 1, 9});
            CHECK(false);
        } catch (const hurray::error &e) {
            CHECK(e.status() == HURRAY_ERR_RANK_MISMATCH);
        }
    }

    // RAII: the handle is freed exactly once, through moves and reassignment.
    releases = 0;
    {
        hurray_coo *raw = nullptr;
        hurray_coo_parts parts{};
        parts.type_tag = 0x03;
        parts.rank = 2;
        parts.shape = shape.data();
        parts.nnz = 3;
        parts.is_sorted = true;
        parts.values = values.v;
        parts.values_bytes = sizeof values.v;
        parts.indices = indices.i;
        parts.indices_bytes = sizeof indices.i;
        hurray_coo_options opts{};
        opts.size = sizeof opts;
        opts.release = on_release;
        hurray::check(hurray_coo_create(&parts, &opts, &raw));
        auto a = hurray::coo::adopt(raw);
        hurray::coo b = std::move(a);
        CHECK(a.get() == nullptr && b.get() == raw);
        hurray::coo d = std::move(b);
        CHECK(d.get() == raw && releases == 0);
        d = std::move(c); // frees raw now
        CHECK(releases == 1);
    }
    CHECK(releases == 1);
    try {
        (void)hurray::coo::adopt(nullptr);
        CHECK(false);
    } catch (const hurray::error &e) {
        CHECK(e.status() == HURRAY_ERR_NULL_POINTER);
    }

    // Assembly from 1-based int32 triplets, CSR export, re-assembly.
    {
        const std::vector<std::int32_t> rows{1, 2, 2, 1}, cols{1, 2, 2, 3};
        const std::vector<double> vals{1.0, 2.0, 3.0, 4.0};
        hurray::plan p;
        auto m = hurray::coo::assemble(hurray::type::float64, 2, 3, rows, cols, vals,
                                       hurray::duplicates::sum, 1, 0, &p);
        CHECK(m.nnz() == 3 && m.is_sorted() && p.nnz() == 3);
        auto csr = m.export_compressed<std::int32_t, double>(HURRAY_FORMAT_CSR, 0);
        CHECK((csr.offsets == std::vector<std::int32_t>{0, 2, 3}));
        CHECK((csr.indices == std::vector<std::int32_t>{0, 2, 1}));
        CHECK((csr.values == std::vector<double>{1.0, 4.0, 5.0}));
        std::vector<double> out;
        p.apply(std::vector<double>{2.0, 4.0, 6.0, 8.0}, out);
        CHECK((out == std::vector<double>{2.0, 8.0, 10.0}));
        // Straight into CSR and CSC, 1-based like the triplets.
        auto csr1 = hurray::coo::assemble_compressed(hurray::type::float64, 2, 3, rows, cols, vals,
                                                     hurray::duplicates::sum, HURRAY_FORMAT_CSR, 1);
        CHECK((csr1.offsets == std::vector<std::int32_t>{1, 3, 4}));
        CHECK((csr1.indices == std::vector<std::int32_t>{1, 3, 2}));
        CHECK((csr1.values == std::vector<double>{1.0, 4.0, 5.0}));
        auto csc1 = hurray::coo::assemble_compressed(hurray::type::float64, 2, 3, rows, cols, vals,
                                                     hurray::duplicates::sum, HURRAY_FORMAT_CSC, 1);
        CHECK((csc1.offsets == std::vector<std::int32_t>{1, 2, 3, 4}));
        CHECK((csc1.indices == std::vector<std::int32_t>{1, 2, 1}));
        CHECK((csc1.values == std::vector<double>{1.0, 5.0, 4.0}));
        try {
            (void)hurray::coo::assemble(hurray::type::float64, 2, 3, rows, cols, vals,
                                        hurray::duplicates::error, 1);
            CHECK(false);
        } catch (const hurray::error &e) {
            CHECK(e.status() == HURRAY_ERR_DUPLICATE);
            CHECK(e.message().find("triplet 3 duplicates triplet 2 at (2, 2)") != std::string::npos);
            // The same place as numbers, in the triplets' base (1).
            CHECK(e.where().status == HURRAY_ERR_DUPLICATE && e.where().base == 1);
            CHECK(e.where().entry == 3 && e.where().other_entry == 2);
            CHECK((e.where().set & HURRAY_POS_COORDINATES) && e.where().coordinates[0] == 2);
        }
        try {
            (void)m.export_compressed<std::int32_t, float>();
            CHECK(false);
        } catch (const hurray::error &e) {
            CHECK(e.status() == HURRAY_ERR_INVALID_TYPE);
        }
        // A typed accessor never reinterprets: a float64 handle read as
        // int64 (same width) and an int64 handle (a Matrix Market integer
        // file) read as double are refused, not answered with other bits.
        const auto expect_invalid_type = [&](auto call, const char *where) {
            try {
                call();
                CHECK(false);
            } catch (const hurray::error &e) {
                CHECK(e.status() == HURRAY_ERR_INVALID_TYPE);
                CHECK(e.message().find(where) != std::string::npos);
            }
        };
        expect_invalid_type([&] { (void)m.export_compressed<std::int32_t, std::int64_t>(); },
                            "export_compressed: the tensor holds float64 values");
        expect_invalid_type([&] { (void)m.values<std::int64_t>(); }, "values");
        expect_invalid_type([&] { (void)m.find<std::uint64_t>({0, 0}); }, "find");
        std::vector<std::int64_t> iout;
        expect_invalid_type([&] { p.apply(std::vector<std::int64_t>{1, 2, 3, 4}, iout); },
                            "plan::apply");
        expect_invalid_type(
            [&] {
                (void)hurray::coo::assemble(hurray::type::int64, 2, 3, rows, cols, vals,
                                            hurray::duplicates::sum, 1);
            },
            "assemble: the tensor holds int64 values");
        {
            auto ints = hurray::coo::parse_mtx("%%MatrixMarket matrix coordinate integer general\n"
                                               "2 2 1\n1 1 5\n");
            CHECK(ints.element_type() == hurray::type::int64);
            CHECK(ints.find<std::int64_t>({0, 0}).value == 5);
            CHECK(ints.lookup_f64({0, 0}) == 5.0);
            expect_invalid_type([&] { (void)ints.find<double>({0, 0}); }, "int64 values");
            expect_invalid_type([&] { (void)ints.values<double>(); }, "int64 values");
            expect_invalid_type([&] { (void)ints.export_compressed<std::int32_t, double>(); },
                                "int64 values");
            auto icsr = ints.export_compressed<std::int32_t, std::int64_t>();
            CHECK(icsr.values.size() == 1 && icsr.values[0] == 5);
            auto pat = hurray::coo::parse_mtx("%%MatrixMarket matrix coordinate pattern general\n"
                                              "2 2 1\n2 1\n");
            CHECK(pat.find<bool>({1, 0}).value && pat.find<bool>({1, 0}).found);
            expect_invalid_type([&] { (void)pat.export_compressed<std::int32_t, double>(); },
                                "bool values");
        }
        // Matrix Market text round trip, and a file.
        const std::string text = m.mtx_text();
        CHECK(text.find("%%MatrixMarket matrix coordinate real general\n") == 0);
        std::uint32_t sym = 9;
        auto reread = hurray::coo::parse_mtx(text, hurray::duplicates::error, 0, 2, &sym);
        CHECK(reread.nnz() == 3 && sym == HURRAY_MTX_GENERAL);
        CHECK(reread.mtx_text() == text);
        const std::string path = "/tmp/hurray_cpp17_" + std::to_string(m.nnz()) + "_" +
                                 std::to_string(reinterpret_cast<std::uintptr_t>(&sym)) + ".tns";
        m.write_tns(path);
        auto tns = hurray::coo::read_tns(path, {2, 3});
        CHECK(tns.nnz() == 3);
        std::remove(path.c_str());
        try {
            (void)hurray::coo::parse_mtx("%%MatrixMarket matrix coordinate real general\n1 1 1\n1 2 3\n");
            CHECK(false);
        } catch (const hurray::error &e) {
            CHECK(e.status() == HURRAY_ERR_PARSE);
            CHECK(e.message().find("line 3, column 3") != std::string::npos);
        }
        // A Hurray file: written, listed, a zero-copy handle that outlives it.
        const std::string hrry = "/tmp/hurray_cpp17_" +
                                 std::to_string(reinterpret_cast<std::uintptr_t>(&sym)) + ".hrry";
        {
            hurray::file_writer w(hrry, 0, HURRAY_FILE_SORTED_INDEX);
            w.kv("solver", std::string("cg")).kv("level", std::int64_t{3});
            w.add("M", m).add("A", reread);
            try {
                w.kv("late", true);
                CHECK(false);
            } catch (const hurray::error &e) {
                CHECK(e.status() == HURRAY_ERR_INVALID_ARGUMENT);
            }
            w.finish();
        }
        hurray::coo kept = [&] {
            hurray::file hf(hrry);
            const auto ts = hf.tensors();
            CHECK(ts.size() == 2 && ts[0].name == "A" && ts[1].name == "M");
            CHECK(ts[1].is_coo && ts[1].shape.size() == 2 && ts[1].nnz == 3);
            CHECK(hf.kv_count() == 2 && hf.kv(1).i64 == 3);
            try {
                (void)hf.get("Z");
                CHECK(false);
            } catch (const hurray::error &e) {
                CHECK(e.status() == HURRAY_ERR_NOT_FOUND);
            }
            return hf.get("M");
        }();
        CHECK(kept.nnz() == 3 && kept.mtx_text() == text);
        {
            hurray::file_writer abandoned(hrry + ".never");
            abandoned.add("M", m);
        }
        std::FILE *never = std::fopen((hrry + ".never").c_str(), "rb");
        CHECK(never == nullptr);
        std::remove(hrry.c_str());
    }
    return failures;
}
