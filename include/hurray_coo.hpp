// libhurray_coo for C++17: a header-only, move-only RAII wrapper over the C
// API in hurray_coo.h. Errors become hurray::error exceptions carrying the
// status code, its name and the library's message.
//
//   #include <hurray_coo.hpp>
//   auto t = hurray::coo::borrow(hurray::type::float32, shape, values, indices, true);
//   double v = t.lookup_f64({2, 0});            // -0.5
//
// A hurray::coo owns one handle and frees it exactly once; it can be moved,
// never copied. Borrowed buffers (hurray::coo::borrow, the default of the C
// API) must be 64-byte aligned and stay alive and unchanged while the coo
// lives; hurray::coo::copy makes the library keep its own copy. Const member
// functions may be called from many threads at once on one object.
#ifndef HURRAY_COO_HPP
#define HURRAY_COO_HPP

#include <complex>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "hurray_coo.h"
#include "hurray_coo_probe.h"

namespace hurray {

/// Element type tags of the Hurray format.
enum class type : std::uint8_t {
    float16 = HURRAY_TYPE_FLOAT16,
    bfloat16 = HURRAY_TYPE_BFLOAT16,
    float32 = HURRAY_TYPE_FLOAT32,
    float64 = HURRAY_TYPE_FLOAT64,
    int8 = HURRAY_TYPE_INT8,
    uint8 = HURRAY_TYPE_UINT8,
    int16 = HURRAY_TYPE_INT16,
    uint16 = HURRAY_TYPE_UINT16,
    int32 = HURRAY_TYPE_INT32,
    uint32 = HURRAY_TYPE_UINT32,
    int64 = HURRAY_TYPE_INT64,
    uint64 = HURRAY_TYPE_UINT64,
    boolean = HURRAY_TYPE_BOOL,
    float8_e4m3 = HURRAY_TYPE_FLOAT8_E4M3,
    float8_e5m2 = HURRAY_TYPE_FLOAT8_E5M2,
    float8_e8m0 = HURRAY_TYPE_FLOAT8_E8M0,
    float4_e2m1 = HURRAY_TYPE_FLOAT4_E2M1,
    float6_e2m3 = HURRAY_TYPE_FLOAT6_E2M3,
    float6_e3m2 = HURRAY_TYPE_FLOAT6_E3M2,
    float128 = HURRAY_TYPE_FLOAT128,
    int4 = HURRAY_TYPE_INT4,
    uint4 = HURRAY_TYPE_UINT4,
    int2 = HURRAY_TYPE_INT2,
    uint2 = HURRAY_TYPE_UINT2,
    complex64 = HURRAY_TYPE_COMPLEX64,
    complex128 = HURRAY_TYPE_COMPLEX128,
};

/// A failed call: the status, its name and the library's message.
class error : public std::runtime_error {
public:
    error(hurray_status status, const std::string &message)
        : std::runtime_error(std::string(hurray_status_name(status)) + ": " + message),
          status_(status), message_(message), where_() {
        where_.size = sizeof where_;
        where_.status = status;
    }
    /// The library's failure: its message and where it is, as numbers.
    static error last(hurray_status status) {
        error e(status, hurray_last_error_message());
        hurray_error_position p{};
        p.size = sizeof p;
        if (hurray_last_error_position(&p) == HURRAY_OK && p.status == status) {
            p.detail = nullptr; /* the library's string does not outlive the call */
            e.where_ = p;
        }
        return e;
    }
    /// Where the failure is (entry, dimension, coordinates, line, column,
    /// byte offset: the fields whose HURRAY_POS_* bit is in set); nothing
    /// set for an error this wrapper raised itself. detail is NULL here:
    /// message() has the text.
    const hurray_error_position &where() const noexcept { return where_; }
    /// The HURRAY_ERR_* code.
    hurray_status status() const noexcept { return status_; }
    /// The code's name, e.g. "HURRAY_ERR_DUPLICATE".
    const char *name() const noexcept { return hurray_status_name(status_); }
    /// What is wrong and where, e.g. "entry 17 duplicates entry 3 at (2, 0)".
    const std::string &message() const noexcept { return message_; }

private:
    hurray_status status_;
    std::string message_;
    hurray_error_position where_;
};

/// Throws hurray::error unless status is HURRAY_OK.
inline void check(hurray_status status) {
    if (status != HURRAY_OK) {
        throw error::last(status);
    }
}

/// A read-only view of contiguous elements (std::span is C++20).
template <typename T> class view {
public:
    view() = default;
    view(const T *data, std::size_t size) : data_(data), size_(size) {}
    const T *data() const noexcept { return data_; }
    std::size_t size() const noexcept { return size_; }
    bool empty() const noexcept { return size_ == 0; }
    const T *begin() const noexcept { return data_; }
    const T *end() const noexcept { return data_ + size_; }
    const T &operator[](std::size_t i) const { return data_[i]; }

private:
    const T *data_ = nullptr;
    std::size_t size_ = 0;
};

/// The result of a lookup: the value and whether it is stored.
template <typename T> struct found_value {
    T value;
    bool found;
};

/// Duplicate policies of hurray::coo::assemble (HURRAY_DUP_*).
enum class duplicates : std::uint32_t {
    error = HURRAY_DUP_ERROR,
    sum = HURRAY_DUP_SUM,
    first = HURRAY_DUP_FIRST,
    last = HURRAY_DUP_LAST,
    min = HURRAY_DUP_MIN,
    max = HURRAY_DUP_MAX,
};

namespace detail {
/// Whether C++ type T is how elements of type t are stored, exactly: float
/// for float32, double for float64, the fixed-width integers for theirs,
/// std::complex<float> / <double> for complex64 / complex128; the raw bits
/// of float16 and bfloat16 in std::uint16_t and of the 8-bit floats in
/// std::uint8_t (there is no C++17 type for them). With bit_pattern, also
/// what a lookup gives for a sub-byte type: its bit pattern in a
/// std::uint8_t (bool in a bool).
template <typename T> constexpr bool stores(type t, bool bit_pattern) {
    using std::is_same;
    switch (t) {
    case type::float32: return is_same<T, float>::value;
    case type::float64: return is_same<T, double>::value;
    case type::int8: return is_same<T, std::int8_t>::value;
    case type::uint8:
    case type::float8_e4m3:
    case type::float8_e5m2:
    case type::float8_e8m0: return is_same<T, std::uint8_t>::value;
    case type::int16: return is_same<T, std::int16_t>::value;
    case type::uint16:
    case type::float16:
    case type::bfloat16: return is_same<T, std::uint16_t>::value;
    case type::int32: return is_same<T, std::int32_t>::value;
    case type::uint32: return is_same<T, std::uint32_t>::value;
    case type::int64: return is_same<T, std::int64_t>::value;
    case type::uint64: return is_same<T, std::uint64_t>::value;
    case type::complex64: return is_same<T, std::complex<float>>::value;
    case type::complex128: return is_same<T, std::complex<double>>::value;
    case type::boolean: return bit_pattern && (is_same<T, bool>::value || is_same<T, std::uint8_t>::value);
    case type::float4_e2m1:
    case type::float6_e2m3:
    case type::float6_e3m2:
    case type::int4:
    case type::uint4:
    case type::int2:
    case type::uint2: return bit_pattern && is_same<T, std::uint8_t>::value;
    default: return false; /* float128 and unknown tags: bytes only */
    }
}

/// Throws HURRAY_ERR_INVALID_TYPE unless T is how t is stored (see stores):
/// a typed accessor never reinterprets one type's bits as another's.
template <typename T> void require(type t, bool bit_pattern, const char *where) {
    if (!stores<T>(t, bit_pattern)) {
        const char *name = hurray_type_name(static_cast<std::uint8_t>(t));
        throw error(HURRAY_ERR_INVALID_TYPE,
                    std::string(where) + ": the tensor holds " + (name ? name : "unknown") +
                        " values, which are not stored as the requested C++ type (sizeof " +
                        std::to_string(sizeof(T)) +
                        "); ask for the type that stores them, or use lookup_f64 / "
                        "lookup_batch for doubles of any real type");
    }
}
} // namespace detail

namespace detail {
template <typename I> constexpr std::uint32_t index_code() {
    static_assert(std::is_same<I, std::int32_t>::value || std::is_same<I, std::int64_t>::value ||
                      std::is_same<I, std::uint32_t>::value || std::is_same<I, std::uint64_t>::value,
                  "indices are int32_t, int64_t, uint32_t or uint64_t");
    return std::is_same<I, std::int32_t>::value   ? HURRAY_INDEX_INT32
           : std::is_same<I, std::int64_t>::value ? HURRAY_INDEX_INT64
           : std::is_same<I, std::uint32_t>::value ? HURRAY_INDEX_UINT32
                                                   : HURRAY_INDEX_UINT64;
}
} // namespace detail

/// CSR or CSC arrays in the consumer's index type I and base, values T.
template <typename I, typename T> struct compressed {
    std::vector<I> offsets;
    std::vector<I> indices;
    std::vector<T> values;
};

class plan;

/// A COO tensor handle.
class coo {
public:
    /// Borrow the caller's buffers (zero-copy): they must be 64-byte aligned
    /// and outlive this object. Validates fully unless permissive; with
    /// index, builds a lookup index (HURRAY_COO_INDEX).
    static coo borrow(type t, const std::vector<std::uint64_t> &shape, const void *values,
                      std::size_t values_bytes, const std::uint64_t *indices,
                      std::size_t indices_bytes, bool is_sorted, bool permissive = false,
                      bool index = false) {
        return make(t, shape, values, values_bytes, indices, indices_bytes, is_sorted,
                    HURRAY_COO_BORROW | (permissive ? HURRAY_COO_PERMISSIVE : 0u) |
                        (index ? HURRAY_COO_INDEX : 0u));
    }

    /// Copy the buffers into library-owned aligned memory (any alignment in).
    static coo copy(type t, const std::vector<std::uint64_t> &shape, const void *values,
                    std::size_t values_bytes, const std::uint64_t *indices,
                    std::size_t indices_bytes, bool is_sorted, bool permissive = false) {
        return make(t, shape, values, values_bytes, indices, indices_bytes, is_sorted,
                    HURRAY_COO_COPY | (permissive ? HURRAY_COO_PERMISSIVE : 0u));
    }

    /// Convenience: copy from vectors of values and (nnz x rank) coordinates.
    template <typename T>
    static coo copy(type t, const std::vector<std::uint64_t> &shape, const std::vector<T> &values,
                    const std::vector<std::uint64_t> &indices, bool is_sorted) {
        detail::require<T>(t, false, "hurray::coo::copy");
        return copy(t, shape, values.data(), values.size() * sizeof(T), indices.data(),
                    indices.size() * sizeof(std::uint64_t), is_sorted);
    }

    /// Read a Hurray descriptor and build a handle over its two buffers.
    static coo from_descriptor(const std::vector<std::uint8_t> &descriptor, const void *values,
                               std::size_t values_bytes, const std::uint64_t *indices,
                               std::size_t indices_bytes, std::uint32_t flags = HURRAY_COO_BORROW) {
        hurray_coo *h = nullptr;
        check(hurray_coo_from_descriptor(descriptor.data(), descriptor.size(), values,
                                         values_bytes, indices, indices_bytes, flags, &h));
        return coo(h);
    }

    /// Assemble a matrix from triplets (rows[k], cols[k], values[k]) in the
    /// caller's index type I and base (0 or 1), duplicates by policy, into a
    /// canonical handle. With out_plan, also the re-assembly plan.
    template <typename I, typename T>
    static coo assemble(type t, std::uint64_t nrows, std::uint64_t ncols,
                        const std::vector<I> &rows, const std::vector<I> &cols,
                        const std::vector<T> &values, duplicates policy = duplicates::error,
                        std::uint32_t base = 0, std::uint32_t flags = 0,
                        plan *out_plan = nullptr, std::uint32_t threads = 1);

    /// Triplets (rows[k], cols[k], values[k]) in index type I counted from
    /// base, straight into CSR (or CSC) in the same index type and base,
    /// duplicates by policy, with no handle in between
    /// (hurray_assemble_compressed).
    template <typename I, typename T>
    static compressed<I, T> assemble_compressed(type t, std::uint64_t nrows, std::uint64_t ncols,
                                                const std::vector<I> &rows,
                                                const std::vector<I> &cols,
                                                const std::vector<T> &values,
                                                duplicates policy = duplicates::error,
                                                std::uint32_t format = HURRAY_FORMAT_CSR,
                                                std::uint32_t base = 0, std::uint32_t flags = 0,
                                                std::uint32_t threads = 1);

    /// This matrix as CSR (or CSC) in index type I, counted from base.
    template <typename I, typename T>
    compressed<I, T> export_compressed(std::uint32_t format = HURRAY_FORMAT_CSR,
                                       std::uint32_t base = 0, std::uint32_t threads = 1) const {
        detail::require<T>(element_type(), false, "hurray::coo::export_compressed");
        hurray_compressed sizes{};
        sizes.format = format;
        sizes.index_type = detail::index_code<I>();
        check(hurray_coo_compressed_size(h_, &sizes));
        const std::size_t ob = sizes.offsets_bytes, ib = sizes.indices_bytes,
                          vb = sizes.values_bytes;
        compressed<I, T> c{std::vector<I>(ob / sizeof(I)), std::vector<I>(ib / sizeof(I)),
                           std::vector<T>(vb / sizeof(T))};
        hurray_compressed arrays{};
        arrays.format = format;
        arrays.index_type = detail::index_code<I>();
        arrays.base = base;
        arrays.offsets = c.offsets.data();
        arrays.offsets_bytes = ob;
        arrays.indices = c.indices.data();
        arrays.indices_bytes = ib;
        arrays.values = c.values.data();
        arrays.values_bytes = vb;
        check(hurray_coo_export_compressed(h_, &arrays, threads));
        return c;
    }

    /// Read a Matrix Market file (path) into a canonical handle; symmetric
    /// files are mirrored unless flags has HURRAY_TEXT_KEEP_TRIANGULAR.
    /// symmetry, when not null, receives HURRAY_MTX_*. Throws hurray::error
    /// whose message names the line, column and token.
    static coo read_mtx(const std::string &path, duplicates policy = duplicates::error,
                        std::uint32_t flags = 0, std::uint32_t threads = 1,
                        std::uint32_t *symmetry = nullptr) {
        hurray_coo *h = nullptr;
        const hurray_text_options o = text_options(policy, flags, threads, 0);
        check(hurray_coo_read_mtx_file(path.c_str(), &o, symmetry, &h));
        return coo(h);
    }

    /// Read a Matrix Market text held in memory (see read_mtx).
    static coo parse_mtx(const std::string &text, duplicates policy = duplicates::error,
                         std::uint32_t flags = 0, std::uint32_t threads = 1,
                         std::uint32_t *symmetry = nullptr) {
        hurray_coo *h = nullptr;
        const hurray_text_options o = text_options(policy, flags, threads, 0);
        check(hurray_coo_read_mtx(text.data(), text.size(), &o, symmetry, &h));
        return coo(h);
    }

    /// Read a FROSTT .tns file; an empty shape infers rank and extents.
    static coo read_tns(const std::string &path, const std::vector<std::uint64_t> &shape = {},
                        duplicates policy = duplicates::error, std::uint32_t flags = 0,
                        std::uint32_t threads = 1) {
        hurray_coo *h = nullptr;
        const hurray_text_options o = text_options(policy, flags, threads, 0);
        check(hurray_coo_read_tns_file(path.c_str(), shape.empty() ? nullptr : shape.data(),
                                       static_cast<std::uint32_t>(shape.size()), &o, &h));
        return coo(h);
    }

    /// Write this matrix as a Matrix Market file (precision 0: shortest
    /// round-trip text; 1..HURRAY_TEXT_MAX_PRECISION significant digits).
    void write_mtx(const std::string &path, std::uint32_t precision = 0,
                   std::uint32_t threads = 1) const {
        const hurray_text_options o = text_options(duplicates::error, 0, threads, precision);
        check(hurray_coo_write_mtx_file(h_, path.c_str(), &o));
    }

    /// This matrix as Matrix Market text.
    std::string mtx_text(std::uint32_t precision = 0, std::uint32_t threads = 1) const {
        std::size_t need = 0;
        const hurray_text_options o = text_options(duplicates::error, 0, threads, precision);
        hurray_status st = hurray_coo_write_mtx(h_, &o, nullptr, 0, &need);
        if (st != HURRAY_ERR_BUFFER_TOO_SMALL && st != HURRAY_OK) {
            check(st);
        }
        std::string out(need, '\0');
        check(hurray_coo_write_mtx(h_, &o, out.empty() ? nullptr : &out[0], out.size(), &need));
        return out;
    }

    /// Write this tensor as a FROSTT .tns file.
    void write_tns(const std::string &path, std::uint32_t precision = 0,
                   std::uint32_t threads = 1) const {
        const hurray_text_options o = text_options(duplicates::error, 0, threads, precision);
        check(hurray_coo_write_tns_file(h_, path.c_str(), &o));
    }

    /// Take ownership of a handle created through the C API (for example by
    /// hurray_coo_create with a release callback). h must not be NULL.
    static coo adopt(hurray_coo *h) {
        if (h == nullptr) {
            throw error(HURRAY_ERR_NULL_POINTER, "hurray::coo::adopt: handle is NULL");
        }
        return coo(h);
    }

    coo(const coo &) = delete;
    coo &operator=(const coo &) = delete;
    coo(coo &&other) noexcept : h_(std::exchange(other.h_, nullptr)) {}
    coo &operator=(coo &&other) noexcept {
        if (this != &other) {
            hurray_coo_free(h_);
            h_ = std::exchange(other.h_, nullptr);
        }
        return *this;
    }
    ~coo() { hurray_coo_free(h_); }

    /// The C handle (still owned by this object), for calls not wrapped here.
    const hurray_coo *get() const noexcept { return h_; }
    /// Give up ownership: the caller must hurray_coo_free the result.
    hurray_coo *release() noexcept { return std::exchange(h_, nullptr); }

    /// Run every rule of the specification; throws on the first violation.
    /// threads: as every threads argument (HURRAY_MAX_THREADS).
    void validate(std::uint32_t threads = 1) const { check(hurray_coo_validate(h_, threads)); }

    std::uint32_t rank() const noexcept { return hurray_coo_rank(h_); }
    std::uint64_t nnz() const noexcept { return hurray_coo_nnz(h_); }
    type element_type() const noexcept { return static_cast<type>(hurray_coo_type_tag(h_)); }
    bool is_sorted() const noexcept { return hurray_coo_is_sorted(h_); }
    view<std::uint64_t> shape() const noexcept { return {hurray_coo_shape(h_), rank()}; }
    /// The coordinates, nnz * rank of them (entry i, dimension d at i * rank + d).
    view<std::uint64_t> indices() const noexcept {
        std::size_t bytes = 0;
        const std::uint64_t *p = hurray_coo_indices(h_, &bytes);
        return {p, bytes / sizeof(std::uint64_t)};
    }
    /// The values buffer as bytes.
    view<std::uint8_t> values_bytes() const noexcept {
        std::size_t bytes = 0;
        const void *p = hurray_coo_values(h_, &bytes);
        return {static_cast<const std::uint8_t *>(p), bytes};
    }
    /// The values as T: T must be how the element type is stored (float for
    /// float32, std::int64_t for int64, ...; see detail::stores), else
    /// hurray::error HURRAY_ERR_INVALID_TYPE. Sub-byte types: values_bytes().
    template <typename T> view<T> values() const {
        detail::require<T>(element_type(), false, "hurray::coo::values");
        auto b = values_bytes();
        return {reinterpret_cast<const T *>(b.data()), b.size() / sizeof(T)};
    }

    /// The value at a coordinate tuple as a double (0.0 when not stored).
    double lookup_f64(std::initializer_list<std::uint64_t> index) const {
        return find_f64(index.begin(), index.size()).value;
    }
    double lookup_f64(const std::vector<std::uint64_t> &index) const {
        return find_f64(index.data(), index.size()).value;
    }
    /// The value as a double and whether it is stored.
    found_value<double> find_f64(const std::uint64_t *index, std::size_t rank) const {
        found_value<double> r{0.0, false};
        check(hurray_coo_lookup_f64(h_, index, static_cast<std::uint32_t>(rank), &r.value,
                                    &r.found));
        return r;
    }
    /// The element's storage as T (T as for values(); sub-byte types give the
    /// bit pattern in a std::uint8_t, bool also in a bool), and whether it is
    /// stored. Another T: hurray::error HURRAY_ERR_INVALID_TYPE.
    template <typename T> found_value<T> find(std::initializer_list<std::uint64_t> index) const {
        detail::require<T>(element_type(), true, "hurray::coo::find");
        found_value<T> r{T{}, false};
        check(hurray_coo_lookup(h_, index.begin(), static_cast<std::uint32_t>(index.size()),
                                &r.value, sizeof(T), &r.found));
        return r;
    }

    /// Look up queries.size() / rank() coordinate tuples in one call (see
    /// hurray_coo_lookup_batch): values as doubles, found flags if asked.
    /// threads > 1 splits the work over that many threads, joined before
    /// this returns.
    std::vector<double> lookup_batch(const std::vector<std::uint64_t> &queries,
                                     std::vector<bool> *found = nullptr,
                                     std::uint32_t threads = 1) const {
        const std::size_t r = rank();
        const std::size_t n = r == 0 ? 0 : queries.size() / r;
        if (n * r != queries.size()) {
            throw error(HURRAY_ERR_RANK_MISMATCH,
                        "hurray::coo::lookup_batch: queries.size() is not a multiple of rank()");
        }
        std::vector<double> out(n);
        std::vector<unsigned char> flags(found ? n : 0);
        check(hurray_coo_lookup_batch(h_, queries.data(), n, static_cast<std::uint32_t>(r),
                                      out.data(),
                                      found ? reinterpret_cast<bool *>(flags.data()) : nullptr,
                                      threads));
        if (found) {
            found->assign(flags.begin(), flags.end());
        }
        return out;
    }

    /// Bytes of the lookup index (HURRAY_COO_INDEX), 0 without one.
    std::size_t index_bytes() const noexcept { return hurray_coo_index_bytes(h_); }

    /// Statistics over all logical elements (see hurray_coo_statistics).
    hurray_statistics statistics() const {
        hurray_statistics s{};
        check(hurray_coo_statistics(h_, &s));
        return s;
    }

    /// This tensor's Hurray descriptor (options: 0 or HURRAY_DESCRIPTOR_STATISTICS_*).
    std::vector<std::uint8_t> descriptor(std::uint32_t options = 0) const {
        std::size_t len = 0;
        check(hurray_coo_descriptor_size(h_, options, &len));
        std::vector<std::uint8_t> out(len);
        check(hurray_coo_encode_descriptor(h_, options, out.data(), out.size(), &len));
        out.resize(len);
        return out;
    }

    /// The handle, for calls the wrapper does not cover (owned by this coo).
    const hurray_coo *handle() const noexcept { return h_; }

private:
    friend class file;
    explicit coo(hurray_coo *h) noexcept : h_(h) {}

    static hurray_text_options text_options(duplicates policy, std::uint32_t flags,
                                            std::uint32_t threads, std::uint32_t precision) {
        hurray_text_options o{};
        o.size = sizeof o;
        o.duplicates_policy = static_cast<std::uint32_t>(policy);
        o.flags = flags;
        o.threads = threads;
        o.precision = precision;
        return o;
    }

    static coo make(type t, const std::vector<std::uint64_t> &shape, const void *values,
                    std::size_t values_bytes, const std::uint64_t *indices,
                    std::size_t indices_bytes, bool is_sorted, std::uint32_t flags) {
        hurray_coo *h = nullptr;
        hurray_coo_parts p{};
        p.type_tag = static_cast<std::uint8_t>(t);
        p.rank = static_cast<std::uint32_t>(shape.size());
        p.shape = shape.data();
        p.nnz = shape.empty() ? 0 : indices_bytes / 8 / shape.size();
        p.is_sorted = is_sorted;
        p.values = values;
        p.values_bytes = values_bytes;
        p.indices = indices;
        p.indices_bytes = indices_bytes;
        hurray_coo_options o{};
        o.size = sizeof o;
        o.flags = flags;
        o.threads = 1;
        check(hurray_coo_create(&p, &o, &h));
        return coo(h);
    }

    hurray_coo *h_ = nullptr;
};

/// Single lookups inlined into the caller's loop (hurray_coo_probe.h): the
/// answers of coo::find_f64, read in place from the handle's lookup view
/// where it allows (a sorted float64 tensor), through the call otherwise.
/// Valid while the coo it was made from lives; copyable, and usable from
/// many threads at once.
class probe {
public:
    explicit probe(const coo &t) {
        v_ = hurray_lookup_view{};
        v_.size = sizeof v_;
        check(hurray_coo_lookup_view(t.get(), &v_));
    }
    /// The value at a coordinate tuple as a double (0.0 when not stored).
    double lookup_f64(std::initializer_list<std::uint64_t> index) const {
        return find_f64(index.begin(), index.size()).value;
    }
    /// The value as a double and whether it is stored.
    found_value<double> find_f64(const std::uint64_t *index, std::size_t rank) const {
        found_value<double> r{0.0, false};
        check(hurray_coo_probe_f64(&v_, index, static_cast<std::uint32_t>(rank), &r.value,
                                   &r.found));
        return r;
    }
    /// The view itself (see hurray_lookup_view).
    const hurray_lookup_view &view() const noexcept { return v_; }

private:
    hurray_lookup_view v_;
};

/// A re-assembly plan (move-only): new values of the same triplets into the
/// canonical order with no sort and no allocation.
class plan {
public:
    plan() = default;
    plan(const plan &) = delete;
    plan &operator=(const plan &) = delete;
    plan(plan &&other) noexcept : p_(std::exchange(other.p_, nullptr)), type_(other.type_) {}
    plan &operator=(plan &&other) noexcept {
        if (this != &other) {
            hurray_assembly_plan_free(p_);
            p_ = std::exchange(other.p_, nullptr);
            type_ = other.type_;
        }
        return *this;
    }
    ~plan() { hurray_assembly_plan_free(p_); }

    /// Combine values (one per triplet) into out (one per canonical entry).
    /// T must store the assembled type (as for coo::values), else
    /// hurray::error HURRAY_ERR_INVALID_TYPE.
    template <typename T>
    void apply(const std::vector<T> &values, std::vector<T> &out, std::uint32_t threads = 1) const {
        detail::require<T>(type_, false, "hurray::plan::apply");
        out.resize(static_cast<std::size_t>(hurray_assembly_plan_nnz(p_)));
        check(hurray_assembly_plan_apply(p_, values.data(), values.size() * sizeof(T), out.data(),
                                         out.size() * sizeof(T), threads));
    }
    std::uint64_t nnz() const noexcept { return hurray_assembly_plan_nnz(p_); }

private:
    friend class coo;
    hurray_assembly_plan *p_ = nullptr;
    type type_ = type::float64; /* the values' type of the assembly */
};

/// One tensor of a Hurray file, as its index lists it.
struct file_tensor {
    std::string name;
    std::uint8_t layout_tag;
    std::uint8_t type_tag;
    bool is_coo;
    std::vector<std::uint64_t> shape;
    std::uint64_t nnz;
};

/// An open Hurray file (move-only): its tensors and metadata, and COO
/// handles that read the mapped file in place (each keeps the mapping
/// alive, so they may outlive the file object).
class file {
public:
    /// Open and check path; flags 0 maps it, HURRAY_FILE_READ_INTO_MEMORY
    /// reads it. Throws hurray::error with the byte offset of a problem.
    explicit file(const std::string &path, std::uint32_t flags = 0) {
        check(hurray_file_open(path.c_str(), flags, &f_));
    }
    file(const file &) = delete;
    file &operator=(const file &) = delete;
    file(file &&other) noexcept : f_(std::exchange(other.f_, nullptr)) {}
    file &operator=(file &&other) noexcept {
        if (this != &other) {
            hurray_file_close(f_);
            f_ = std::exchange(other.f_, nullptr);
        }
        return *this;
    }
    ~file() { hurray_file_close(f_); }

    /// Every tensor, of every layout, in index order.
    std::vector<file_tensor> tensors() const {
        std::vector<file_tensor> out;
        const std::uint64_t n = hurray_file_tensor_count(f_);
        for (std::uint64_t i = 0; i < n; i++) {
            hurray_file_tensor t{};
            check(hurray_file_tensor_info(f_, i, &t));
            std::vector<std::uint64_t> shape;
            if (t.shape != nullptr) {
                shape.assign(t.shape, t.shape + t.rank);
            }
            out.push_back(file_tensor{std::string(t.name, t.name_len), t.layout_tag, t.type_tag,
                                      t.is_coo, std::move(shape), t.nnz});
        }
        return out;
    }

    /// The COO tensor named name, zero-copy, validated unless flags has
    /// HURRAY_COO_PERMISSIVE (flags as hurray_coo_create's).
    coo get(const std::string &name, std::uint32_t flags = 0) const {
        hurray_coo *h = nullptr;
        check(hurray_file_get(f_, name.c_str(), flags, &h));
        return coo(h);
    }

    /// The number of KV metadata entries; entry i with kv(i).
    std::uint64_t kv_count() const noexcept { return hurray_file_kv_count(f_); }
    hurray_kv kv(std::uint64_t i) const {
        hurray_kv k{};
        check(hurray_file_kv(f_, i, &k));
        return k;
    }

    /// The file, for calls the wrapper does not cover (owned by this file).
    const hurray_file *handle() const noexcept { return f_; }

private:
    hurray_file *f_ = nullptr;
};

/// A Hurray file being written (move-only). The file appears at its path
/// only when finish() succeeds; destroyed before that, nothing appears.
class file_writer {
public:
    /// alignment 0 means 4096; flags HURRAY_FILE_SORTED_INDEX,
    /// HURRAY_FILE_STATISTICS_COUNTS or _FULL.
    explicit file_writer(const std::string &path, std::uint32_t alignment = 0,
                         std::uint32_t flags = 0) {
        check(hurray_file_writer_create(path.c_str(), alignment, flags, &w_));
    }
    file_writer(const file_writer &) = delete;
    file_writer &operator=(const file_writer &) = delete;
    file_writer(file_writer &&other) noexcept : w_(std::exchange(other.w_, nullptr)) {}
    file_writer &operator=(file_writer &&other) noexcept {
        if (this != &other) {
            hurray_file_writer_abort(w_);
            w_ = std::exchange(other.w_, nullptr);
        }
        return *this;
    }
    ~file_writer() { hurray_file_writer_abort(w_); }

    /// Metadata, before the first tensor.
    file_writer &kv(const std::string &key, const std::string &value) {
        check(hurray_file_writer_kv_string(w_, key.c_str(), value.c_str()));
        return *this;
    }
    file_writer &kv(const std::string &key, std::int64_t value) {
        check(hurray_file_writer_kv_int64(w_, key.c_str(), value));
        return *this;
    }
    file_writer &kv(const std::string &key, double value) {
        check(hurray_file_writer_kv_float64(w_, key.c_str(), value));
        return *this;
    }
    file_writer &kv(const std::string &key, bool value) {
        check(hurray_file_writer_kv_bool(w_, key.c_str(), value));
        return *this;
    }

    /// Write t under name.
    file_writer &add(const std::string &name, const coo &t) {
        check(hurray_file_writer_add(w_, name.c_str(), t.handle()));
        return *this;
    }

    /// Complete the file, sync it and give it its name.
    void finish() { check(hurray_file_writer_finish(std::exchange(w_, nullptr))); }

private:
    hurray_file_writer *w_ = nullptr;
};

namespace detail {
/// The C structs over a matrix's triplet vectors, for both assembly calls.
/// They point into the vectors and into this object: keep both alive while
/// a call uses them.
template <typename I, typename T> struct matrix_triplets {
    std::uint64_t shape[2];
    const void *dims[2];
    hurray_triplets tr{};
    hurray_assemble_options o{};
    matrix_triplets(const char *who, type t, std::uint64_t nrows, std::uint64_t ncols,
                    const std::vector<I> &rows, const std::vector<I> &cols,
                    const std::vector<T> &values, duplicates policy, std::uint32_t base,
                    std::uint32_t flags, std::uint32_t threads)
        : shape{nrows, ncols}, dims{rows.data(), cols.data()} {
        if (rows.size() != cols.size() || rows.size() != values.size()) {
            throw error(HURRAY_ERR_BUFFER_SIZE,
                        std::string(who) + ": rows, cols and values differ in length");
        }
        require<T>(t, false, who);
        tr.rank = 2;
        tr.shape = shape;
        tr.n = rows.size();
        tr.index_type = index_code<I>();
        tr.index_base = base;
        tr.dim_indices = dims;
        tr.dim_indices_bytes = rows.size() * sizeof(I);
        tr.type_tag = static_cast<std::uint8_t>(t);
        tr.values = values.data();
        tr.values_bytes = values.size() * sizeof(T);
        o.size = sizeof o;
        o.duplicates_policy = static_cast<std::uint32_t>(policy);
        o.flags = flags;
        o.threads = threads;
    }
    matrix_triplets(const matrix_triplets &) = delete;
    matrix_triplets &operator=(const matrix_triplets &) = delete;
};
} // namespace detail

template <typename I, typename T>
coo coo::assemble(type t, std::uint64_t nrows, std::uint64_t ncols, const std::vector<I> &rows,
                  const std::vector<I> &cols, const std::vector<T> &values, duplicates policy,
                  std::uint32_t base, std::uint32_t flags, plan *out_plan, std::uint32_t threads) {
    detail::matrix_triplets<I, T> m("hurray::coo::assemble", t, nrows, ncols, rows, cols, values,
                                    policy, base, flags, threads);
    hurray_coo *h = nullptr;
    hurray_assembly_plan *p = nullptr;
    check(hurray_coo_assemble(&m.tr, &m.o, &h, out_plan ? &p : nullptr));
    if (out_plan) {
        plan fresh;
        fresh.p_ = p;
        fresh.type_ = t;
        *out_plan = std::move(fresh);
    }
    return coo(h);
}

template <typename I, typename T>
compressed<I, T> coo::assemble_compressed(type t, std::uint64_t nrows, std::uint64_t ncols,
                                          const std::vector<I> &rows, const std::vector<I> &cols,
                                          const std::vector<T> &values, duplicates policy,
                                          std::uint32_t format, std::uint32_t base,
                                          std::uint32_t flags, std::uint32_t threads) {
    detail::matrix_triplets<I, T> m("hurray::coo::assemble_compressed", t, nrows, ncols, rows,
                                    cols, values, policy, base, flags, threads);
    const std::uint64_t majors = format == HURRAY_FORMAT_CSC ? ncols : nrows;
    // Room for every triplet: the result never has more entries.
    compressed<I, T> c{std::vector<I>(static_cast<std::size_t>(majors) + 1),
                       std::vector<I>(rows.size()), std::vector<T>(values.size())};
    hurray_compressed arrays{};
    arrays.format = format;
    arrays.index_type = detail::index_code<I>();
    arrays.base = base;
    arrays.offsets = c.offsets.data();
    arrays.offsets_bytes = c.offsets.size() * sizeof(I);
    arrays.indices = c.indices.data();
    arrays.indices_bytes = c.indices.size() * sizeof(I);
    arrays.values = c.values.data();
    arrays.values_bytes = c.values.size() * sizeof(T);
    std::uint64_t nnz = 0;
    check(hurray_assemble_compressed(&m.tr, &m.o, &arrays, &nnz, nullptr));
    c.indices.resize(static_cast<std::size_t>(nnz));
    c.values.resize(static_cast<std::size_t>(nnz));
    return c;
}

} // namespace hurray

#endif // HURRAY_COO_HPP
