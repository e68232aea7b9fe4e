# HurrayCOO: libhurray_coo from Julia through ccall (every call checked
# against include/hurray_coo.h by tests/bindings.rs). Installed by
# `make install` as PREFIX/share/hurray_coo/julia/HurrayCOO.jl; see the
# README's Julia section for its use.
module HurrayCOO

# The library: HURRAY_COO_LIB (a full path to libhurray_coo.so) or the
# system's search path.
const libhurray_coo = get(ENV, "HURRAY_COO_LIB", "libhurray_coo")

struct HurrayError <: Exception
    status::Int32
    name::String
    message::String
end
Base.showerror(io::IO, e::HurrayError) = print(io, e.name, ": ", e.message)

function check(status::Int32)
    if status != 0
        name = unsafe_string(ccall((:hurray_status_name, libhurray_coo), Cstring, (Int32,), status))
        msg = unsafe_string(ccall((:hurray_last_error_message, libhurray_coo), Cstring, ()))
        throw(HurrayError(status, name, msg))
    end
    return nothing
end

# struct hurray_coo_parts and struct hurray_coo_options (size first; the
# release callback and shard box unused here).
struct Parts
    type_tag::UInt8
    rank::UInt32
    shape::Ptr{UInt64}
    nnz::UInt64
    is_sorted::Bool
    values::Ptr{Cvoid}
    values_bytes::Csize_t
    indices::Ptr{UInt64}
    indices_bytes::Csize_t
end
struct Options
    size::Csize_t
    flags::UInt32
    threads::UInt32
    release::Ptr{Cvoid}
    release_ctx::Ptr{Cvoid}
    shard_parent_shape::Ptr{UInt64}
    shard_offset::Ptr{UInt64}
end

# Owns the handle and the arrays it may borrow; indices are 0-based, one
# entry per column (rank x nnz), which is the COO buffer layout.
mutable struct COOTensor
    ptr::Ptr{Cvoid}
    values::Vector{Float64}
    indices::Matrix{UInt64}
    function COOTensor(shape::Vector{UInt64}, indices::Matrix{UInt64}, values::Vector{Float64};
                       sorted::Bool=false, copy::Bool=true)
        out = Ref{Ptr{Cvoid}}(C_NULL)
        # HURRAY_COO_COPY or HURRAY_COO_BORROW, and HURRAY_COO_ONE_BASED_MESSAGES
        # (8): errors name entries, dimensions and coordinates 1-based, as here.
        flags = (copy ? UInt32(1) : UInt32(0)) | UInt32(8)
        GC.@preserve shape indices values begin
            parts = Ref(Parts(0x04, length(shape), pointer(shape), size(indices, 2), sorted,
                              pointer(values), sizeof(values), pointer(indices), sizeof(indices)))
            opts = Ref(Options(sizeof(Options), flags, Threads.nthreads(), C_NULL, C_NULL,
                               C_NULL, C_NULL))
            check(ccall((:hurray_coo_create, libhurray_coo), Int32,
                        (Ptr{Cvoid}, Ptr{Cvoid}, Ref{Ptr{Cvoid}}), parts, opts, out))
        end
        t = new(out[], values, indices)
        finalizer(free!, t)   # a safety net: call free! yourself when done
        return t
    end
end

function free!(t::COOTensor)   # idempotent
    if t.ptr != C_NULL
        ccall((:hurray_coo_free, libhurray_coo), Cvoid, (Ptr{Cvoid},), t.ptr)
        t.ptr = C_NULL
    end
    return nothing
end

function Base.getindex(t::COOTensor, I::Integer...)   # 1-based, like Julia arrays
    idx = UInt64[i - 1 for i in I]
    value = Ref{Cdouble}(0.0)
    found = Ref{Bool}(false)
    GC.@preserve t idx begin
        check(ccall((:hurray_coo_lookup_f64, libhurray_coo), Int32,
                    (Ptr{Cvoid}, Ptr{UInt64}, UInt32, Ref{Cdouble}, Ref{Bool}),
                    t.ptr, idx, length(idx), value, found))
    end
    return value[]
end

validate(t::COOTensor) = GC.@preserve t check(
    ccall((:hurray_coo_validate, libhurray_coo), Int32, (Ptr{Cvoid}, UInt32), t.ptr,
          Threads.nthreads()))
nnz(t::COOTensor) = GC.@preserve t ccall((:hurray_coo_nnz, libhurray_coo), UInt64,
                                         (Ptr{Cvoid},), t.ptr)

# struct hurray_triplets
struct Triplets
    rank::UInt32
    shape::Ptr{UInt64}
    n::UInt64
    index_type::UInt32
    index_base::UInt32
    indices::Ptr{Cvoid}
    indices_bytes::Csize_t
    dim_indices::Ptr{Ptr{Cvoid}}
    dim_indices_bytes::Csize_t
    type_tag::UInt8
    values::Ptr{Cvoid}
    values_bytes::Csize_t
end

# struct hurray_assemble_options.
struct AssembleOptions
    size::Csize_t
    duplicates_policy::UInt32
    flags::UInt32
    threads::UInt32
end
const POLICY = Dict(:error => UInt32(0), :sum => UInt32(1), :first => UInt32(2),
                    :last => UInt32(3), :min => UInt32(4), :max => UInt32(5))

# Like SparseArrays.sparse(I, J, V, m, n, combine): 1-based Int64 triplets,
# duplicates combined (:sum, :first, :last, :min, :max, or :error), returned
# as the three arrays of a SparseMatrixCSC{Float64,Int64} (colptr, rowval,
# nzval), exported 1-based: SparseMatrixCSC(m, n, colptr, rowval, nzval).
function csc(I::Vector{Int64}, J::Vector{Int64}, V::Vector{Float64}, m::Integer, n::Integer;
             combine::Symbol=:sum)
    length(I) == length(J) == length(V) || throw(ArgumentError("I, J, V differ in length"))
    shape = UInt64[m, n]
    dims = Ptr{Cvoid}[pointer(I), pointer(J)]
    h = Ref{Ptr{Cvoid}}(C_NULL)
    GC.@preserve I J V shape dims begin
        t = Ref(Triplets(2, pointer(shape), length(V), 2, 1, C_NULL, 0, pointer(dims),
                         sizeof(I), 0x04, pointer(V), sizeof(V)))
        options = Ref(AssembleOptions(sizeof(AssembleOptions), POLICY[combine], 0,
                                      Threads.nthreads()))
        check(ccall((:hurray_coo_assemble, libhurray_coo), Int32,
                    (Ptr{Cvoid}, Ptr{Cvoid}, Ref{Ptr{Cvoid}}, Ptr{Ptr{Cvoid}}),
                    t, options, h, C_NULL))   # no plan
    end
    try
        return export_csc(h[])
    finally
        ccall((:hurray_coo_free, libhurray_coo), Cvoid, (Ptr{Cvoid},), h[])
    end
end

# struct hurray_compressed.
struct Compressed
    format::UInt32
    index_type::UInt32
    base::UInt32
    offsets::Ptr{Cvoid}
    offsets_bytes::Csize_t
    indices::Ptr{Cvoid}
    indices_bytes::Csize_t
    values::Ptr{Cvoid}
    values_bytes::Csize_t
end

# The CSC arrays (1-based Int64, Float64 values) of a float64 handle; any
# other element type is refused, never its bits read as doubles.
function export_csc(h::Ptr{Cvoid})
    tag = ccall((:hurray_coo_type_tag, libhurray_coo), UInt8, (Ptr{Cvoid},), h)
    if tag != 0x04   # HURRAY_TYPE_FLOAT64
        name = unsafe_string(ccall((:hurray_type_name, libhurray_coo), Cstring, (UInt8,), tag))
        throw(ArgumentError("the tensor holds $name values, not float64"))
    end
    # struct hurray_compressed: HURRAY_FORMAT_CSC, HURRAY_INDEX_INT64, base 1.
    sizes = Ref(Compressed(2, 2, 1, C_NULL, 0, C_NULL, 0, C_NULL, 0))
    check(ccall((:hurray_coo_compressed_size, libhurray_coo), Int32,
                (Ptr{Cvoid}, Ptr{Cvoid}), h, sizes))
    colptr = Vector{Int64}(undef, sizes[].offsets_bytes ÷ 8)
    rowval = Vector{Int64}(undef, sizes[].indices_bytes ÷ 8)
    nzval = Vector{Float64}(undef, sizes[].values_bytes ÷ 8)
    GC.@preserve colptr rowval nzval begin
        arrays = Ref(Compressed(2, 2, 1, pointer(colptr), sizeof(colptr), pointer(rowval),
                                sizeof(rowval), pointer(nzval), sizeof(nzval)))
        check(ccall((:hurray_coo_export_compressed, libhurray_coo), Int32,
                    (Ptr{Cvoid}, Ptr{Cvoid}, UInt32), h, arrays, Threads.nthreads()))
    end
    return colptr, rowval, nzval
end

# struct hurray_text_options.
struct TextOptions
    size::Csize_t
    duplicates_policy::UInt32
    flags::UInt32
    threads::UInt32
    precision::UInt32
    value_type::UInt32
end

# A real, integer or pattern Matrix Market file (gzip-compressed or not;
# symmetric ones mirrored) as the arguments of SparseMatrixCSC{Float64}: m,
# n, colptr, rowval, nzval. Values are read as Float64 exactly (an integer
# beyond 2^53 is an error, never rounded); errors name line and column.
function read_mtx(path::AbstractString; combine::Symbol=:error)
    h = Ref{Ptr{Cvoid}}(C_NULL)
    options = Ref(TextOptions(sizeof(TextOptions), POLICY[combine], 0, Threads.nthreads(), 0, 0x04))
    check(ccall((:hurray_coo_read_mtx_file, libhurray_coo), Int32,
                (Cstring, Ptr{Cvoid}, Ptr{UInt32}, Ref{Ptr{Cvoid}}),
                path, options, C_NULL, h))
    try
        shape = ccall((:hurray_coo_shape, libhurray_coo), Ptr{UInt64}, (Ptr{Cvoid},), h[])
        m, n = Int(unsafe_load(shape, 1)), Int(unsafe_load(shape, 2))
        return (m, n, export_csc(h[])...)
    finally
        ccall((:hurray_coo_free, libhurray_coo), Cvoid, (Ptr{Cvoid},), h[])
    end
end

# The named float64 matrix of a Hurray file, as the arguments of
# SparseMatrixCSC (the file is mapped; the handle reads it in place).
function read_hrry(path::AbstractString, name::AbstractString)
    f, h = Ref{Ptr{Cvoid}}(C_NULL), Ref{Ptr{Cvoid}}(C_NULL)
    check(ccall((:hurray_file_open, libhurray_coo), Int32,
                (Cstring, UInt32, Ref{Ptr{Cvoid}}), path, 0, f))
    try
        check(ccall((:hurray_file_get, libhurray_coo), Int32,
                    (Ptr{Cvoid}, Cstring, UInt32, Ref{Ptr{Cvoid}}), f[], name, 0, h))
    finally
        ccall((:hurray_file_close, libhurray_coo), Cvoid, (Ptr{Cvoid},), f[])
    end
    try
        shape = ccall((:hurray_coo_shape, libhurray_coo), Ptr{UInt64}, (Ptr{Cvoid},), h[])
        return (Int(unsafe_load(shape, 1)), Int(unsafe_load(shape, 2)), export_csc(h[])...)
    finally
        ccall((:hurray_coo_free, libhurray_coo), Cvoid, (Ptr{Cvoid},), h[])
    end
end

end # module
