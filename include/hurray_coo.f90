! libhurray_coo for Fortran 2008: bind(C) interfaces for the whole C API of
! hurray_coo.h, its constants, and a thin idiomatic layer.
!
! Shipped as source (.mod files differ between compilers); build it with your
! compiler and link libhurray_coo:
!   gfortran -c $(pkg-config --variable=includedir hurray_coo)/hurray_coo.f90
!   gfortran my_solver.f90 hurray_coo.o $(pkg-config --libs hurray_coo)
!
! The idiomatic layer:
!   type(hurray_tensor) :: t
!   call t%create(HURRAY_TYPE_FLOAT64, shape, index1, values, status)  ! 1-based coordinates
!   v = t%lookup([3_c_int64_t, 1_c_int64_t], found, status)           ! 1-based query
!   call t%read_mtx("matrix.mtx.gz", status)                          ! float64 values
!   call t%csr(row_ptr, col_ind, values, status)                      ! 1-based CSR
!   call t%free()                                                     ! idempotent
! hurray_tensor owns its handle: free it explicitly (a final procedure also
! frees it, but gfortran does not finalize every variable). Assigning one
! hurray_tensor to another stops the program: a copy would free the handle
! twice; use hurray_move instead. Status codes are returned, never raised:
! hurray_message() gives the calling thread's last error as a string.
!
! Unsigned C types map to the signed Fortran kinds of the same width
! (uint64_t -> integer(c_int64_t), uint8_t -> integer(c_int8_t)); type tags
! and flags used here all fit.
module hurray_coo
  use, intrinsic :: iso_c_binding
  implicit none
  private

  ! ---- Constants (checked against hurray_coo.h by the test suite) ----------
  ! Fortran names are case-insensitive, so the two version constants whose C
  ! names equal a function's (hurray_coo_abi_version(), ...) carry _VALUE.
  integer(c_int32_t), parameter, public :: HURRAY_COO_VERSION_MAJOR = 0
  integer(c_int32_t), parameter, public :: HURRAY_COO_VERSION_MINOR = 1
  integer(c_int32_t), parameter, public :: HURRAY_COO_VERSION_PATCH = 0
  integer(c_int32_t), parameter, public :: HURRAY_COO_VERSION_NUMBER_VALUE = 1000
  integer(c_int32_t), parameter, public :: HURRAY_COO_ABI_VERSION_VALUE = 2
  integer(c_int32_t), parameter, public :: HURRAY_OK = 0
  integer(c_int32_t), parameter, public :: HURRAY_ERR_INVALID_MAGIC = -1
  integer(c_int32_t), parameter, public :: HURRAY_ERR_VERSION_MISMATCH = -2
  integer(c_int32_t), parameter, public :: HURRAY_ERR_INVALID_LAYOUT = -3
  integer(c_int32_t), parameter, public :: HURRAY_ERR_INVALID_TYPE = -4
  integer(c_int32_t), parameter, public :: HURRAY_ERR_BUFFER_TOO_SMALL = -5
  integer(c_int32_t), parameter, public :: HURRAY_ERR_NULL_POINTER = -6
  integer(c_int32_t), parameter, public :: HURRAY_ERR_INTERNAL_PANIC = -7
  integer(c_int32_t), parameter, public :: HURRAY_ERR_INVALID_SYNC_MODE = -8
  integer(c_int32_t), parameter, public :: HURRAY_ERR_INTERNAL = -10
  integer(c_int32_t), parameter, public :: HURRAY_ERR_INDEX_OUT_OF_BOUNDS = -11
  integer(c_int32_t), parameter, public :: HURRAY_ERR_INVALID_RANK = -20
  integer(c_int32_t), parameter, public :: HURRAY_ERR_INVALID_SHAPE = -21
  integer(c_int32_t), parameter, public :: HURRAY_ERR_BUFFER_SIZE = -22
  integer(c_int32_t), parameter, public :: HURRAY_ERR_MISALIGNED = -23
  integer(c_int32_t), parameter, public :: HURRAY_ERR_DUPLICATE = -24
  integer(c_int32_t), parameter, public :: HURRAY_ERR_NOT_SORTED = -25
  integer(c_int32_t), parameter, public :: HURRAY_ERR_RANK_MISMATCH = -26
  integer(c_int32_t), parameter, public :: HURRAY_ERR_OVERFLOW = -27
  integer(c_int32_t), parameter, public :: HURRAY_ERR_ALLOC = -28
  integer(c_int32_t), parameter, public :: HURRAY_ERR_INVALID_FLAGS = -29
  integer(c_int32_t), parameter, public :: HURRAY_ERR_NONZERO_PADDING = -30
  integer(c_int32_t), parameter, public :: HURRAY_ERR_UNSUPPORTED_TYPE = -31
  integer(c_int32_t), parameter, public :: HURRAY_ERR_INVALID_VALUE = -32
  integer(c_int32_t), parameter, public :: HURRAY_ERR_INVALID_OFFSETS = -33
  integer(c_int32_t), parameter, public :: HURRAY_ERR_TRUNCATED = -40
  integer(c_int32_t), parameter, public :: HURRAY_ERR_RESERVED_BITS = -41
  integer(c_int32_t), parameter, public :: HURRAY_ERR_UNSUPPORTED_DEVICE = -42
  integer(c_int32_t), parameter, public :: HURRAY_ERR_INVALID_BUFFER_HANDLE = -43
  integer(c_int32_t), parameter, public :: HURRAY_ERR_INVALID_STATISTICS = -44
  integer(c_int32_t), parameter, public :: HURRAY_ERR_UNSUPPORTED_FEATURE = -45
  integer(c_int32_t), parameter, public :: HURRAY_ERR_PARSE = -50
  integer(c_int32_t), parameter, public :: HURRAY_ERR_IO = -51
  integer(c_int32_t), parameter, public :: HURRAY_ERR_CORRUPT_FILE = -52
  integer(c_int32_t), parameter, public :: HURRAY_ERR_CHECKSUM = -53
  integer(c_int32_t), parameter, public :: HURRAY_ERR_NOT_FOUND = -54
  integer(c_int32_t), parameter, public :: HURRAY_ERR_INVALID_ARGUMENT = -55
  integer(c_int32_t), parameter, public :: HURRAY_ERR_OUTSIDE_SHARD = -56

  integer(c_int32_t), parameter, public :: HURRAY_COO_BORROW = 0
  integer(c_int32_t), parameter, public :: HURRAY_COO_COPY = 1
  integer(c_int32_t), parameter, public :: HURRAY_COO_PERMISSIVE = 2
  integer(c_int32_t), parameter, public :: HURRAY_COO_INDEX = 4
  integer(c_int32_t), parameter, public :: HURRAY_COO_ONE_BASED_MESSAGES = 8
  integer(c_int32_t), parameter, public :: HURRAY_COO_INDEX_VALUES = 16
  integer(c_size_t), parameter, public :: HURRAY_LOOKUP_MAX_BYTES = 16
  integer(c_int32_t), parameter, public :: HURRAY_LOOKUP_VIEW_VERSION = 1
  integer(c_int32_t), parameter, public :: HURRAY_MAX_THREADS = 64
  integer(c_int32_t), parameter, public :: HURRAY_MAX_RANK = 64
  integer(c_int32_t), parameter, public :: HURRAY_POS_ENTRY = 1
  integer(c_int32_t), parameter, public :: HURRAY_POS_OTHER_ENTRY = 2
  integer(c_int32_t), parameter, public :: HURRAY_POS_DIM = 4
  integer(c_int32_t), parameter, public :: HURRAY_POS_COORDINATE = 8
  integer(c_int32_t), parameter, public :: HURRAY_POS_COORDINATES = 16
  integer(c_int32_t), parameter, public :: HURRAY_POS_LINE = 32
  integer(c_int32_t), parameter, public :: HURRAY_POS_OTHER_LINE = 64
  integer(c_int32_t), parameter, public :: HURRAY_POS_COLUMN = 128
  integer(c_int32_t), parameter, public :: HURRAY_POS_BYTE_OFFSET = 256
  integer(c_int32_t), parameter, public :: HURRAY_POS_LINE_MIRRORED = 512
  integer(c_int32_t), parameter, public :: HURRAY_POS_OTHER_LINE_MIRRORED = 1024
  integer(c_int32_t), parameter, public :: HURRAY_DESCRIPTOR_STATISTICS_COUNTS = 1
  integer(c_int32_t), parameter, public :: HURRAY_DESCRIPTOR_STATISTICS_FULL = 2
  integer(c_int32_t), parameter, public :: HURRAY_DESCRIPTOR_HAS_QUANTIZATION = 1
  integer(c_int32_t), parameter, public :: HURRAY_DESCRIPTOR_HAS_SHARD = 2
  integer(c_int32_t), parameter, public :: HURRAY_DESCRIPTOR_HAS_EXTENSION_TYPE = 4
  integer(c_int32_t), parameter, public :: HURRAY_DESCRIPTOR_HAS_STATISTICS = 8
  integer(c_int32_t), parameter, public :: HURRAY_DESCRIPTOR_HAS_COMPOSITE_MEMBER = 16
  integer(c_int32_t), parameter, public :: HURRAY_STAT_NNZ = 1
  integer(c_int32_t), parameter, public :: HURRAY_STAT_SPARSITY = 2
  integer(c_int32_t), parameter, public :: HURRAY_STAT_VALUE_RANGE = 4
  integer(c_int32_t), parameter, public :: HURRAY_STAT_VALUE_STATS = 8
  integer(c_int32_t), parameter, public :: HURRAY_STAT_NM_SPARSITY = 16
  integer(c_int32_t), parameter, public :: HURRAY_STAT_NAN_INF = 32
  integer(c_int32_t), parameter, public :: HURRAY_INDEX_INT32 = 1
  integer(c_int32_t), parameter, public :: HURRAY_INDEX_INT64 = 2
  integer(c_int32_t), parameter, public :: HURRAY_INDEX_UINT32 = 3
  integer(c_int32_t), parameter, public :: HURRAY_INDEX_UINT64 = 4
  integer(c_int32_t), parameter, public :: HURRAY_DUP_ERROR = 0
  integer(c_int32_t), parameter, public :: HURRAY_DUP_SUM = 1
  integer(c_int32_t), parameter, public :: HURRAY_DUP_FIRST = 2
  integer(c_int32_t), parameter, public :: HURRAY_DUP_LAST = 3
  integer(c_int32_t), parameter, public :: HURRAY_DUP_MIN = 4
  integer(c_int32_t), parameter, public :: HURRAY_DUP_MAX = 5
  integer(c_int32_t), parameter, public :: HURRAY_ASSEMBLE_SKIP_NEGATIVE = 1
  integer(c_int32_t), parameter, public :: HURRAY_ASSEMBLE_DROP_ZEROS = 2
  integer(c_int32_t), parameter, public :: HURRAY_ASSEMBLE_ROUNDED_SUM = 4
  integer(c_int32_t), parameter, public :: HURRAY_ASSEMBLE_SCRATCH_IN_OUTPUT = 8
  integer(c_int8_t), parameter, public :: HURRAY_PATTERN = 0_c_int8_t
  integer(c_int32_t), parameter, public :: HURRAY_FORMAT_CSR = 1
  integer(c_int32_t), parameter, public :: HURRAY_FORMAT_CSC = 2
  integer(c_int32_t), parameter, public :: HURRAY_TEXT_KEEP_TRIANGULAR = 16
  integer(c_int32_t), parameter, public :: HURRAY_TEXT_MAX_PRECISION = 17
  integer(c_int32_t), parameter, public :: HURRAY_MTX_GENERAL = 0
  integer(c_int32_t), parameter, public :: HURRAY_MTX_SYMMETRIC = 1
  integer(c_int32_t), parameter, public :: HURRAY_MTX_SKEW_SYMMETRIC = 2
  integer(c_int32_t), parameter, public :: HURRAY_MTX_HERMITIAN = 3
  integer(c_int32_t), parameter, public :: HURRAY_TEXT_MTX = 1
  integer(c_int32_t), parameter, public :: HURRAY_TEXT_TNS = 2
  integer(c_int32_t), parameter, public :: HURRAY_TEXT_WRITE_SYMMETRIC = 32
  integer(c_int32_t), parameter, public :: HURRAY_TEXT_WRITE_SKEW_SYMMETRIC = 64
  integer(c_int32_t), parameter, public :: HURRAY_TEXT_WRITE_HERMITIAN = 128
  integer(c_int32_t), parameter, public :: HURRAY_TEXT_WRITE_PATTERN = 256
  integer(c_int32_t), parameter, public :: HURRAY_TEXT_WRITE_ARRAY = 512
  integer(c_int32_t), parameter, public :: HURRAY_PARTITION_EQUAL_ROWS = 0
  integer(c_int32_t), parameter, public :: HURRAY_PARTITION_BALANCED_NNZ = 1
  integer(c_int32_t), parameter, public :: HURRAY_PARTITION_BOUNDARIES = 2
  integer(c_int32_t), parameter, public :: HURRAY_FILE_READ_INTO_MEMORY = 1
  integer(c_int32_t), parameter, public :: HURRAY_FILE_SORTED_INDEX = 1
  integer(c_int32_t), parameter, public :: HURRAY_FILE_STATISTICS_COUNTS = 2
  integer(c_int32_t), parameter, public :: HURRAY_FILE_STATISTICS_FULL = 4
  integer(c_int8_t), parameter, public :: HURRAY_KV_STRING = 1_c_int8_t
  integer(c_int8_t), parameter, public :: HURRAY_KV_INT64 = 2_c_int8_t
  integer(c_int8_t), parameter, public :: HURRAY_KV_UINT64 = 3_c_int8_t
  integer(c_int8_t), parameter, public :: HURRAY_KV_FLOAT64 = 4_c_int8_t
  integer(c_int8_t), parameter, public :: HURRAY_KV_BOOL = 5_c_int8_t
  integer(c_int8_t), parameter, public :: HURRAY_KV_BYTES = 6_c_int8_t
  integer(c_int8_t), parameter, public :: HURRAY_KV_ARRAY = 7_c_int8_t

  integer(c_int8_t), parameter, public :: HURRAY_TYPE_FLOAT16 = int(z'01', c_int8_t)
  integer(c_int8_t), parameter, public :: HURRAY_TYPE_BFLOAT16 = int(z'02', c_int8_t)
  integer(c_int8_t), parameter, public :: HURRAY_TYPE_FLOAT32 = int(z'03', c_int8_t)
  integer(c_int8_t), parameter, public :: HURRAY_TYPE_FLOAT64 = int(z'04', c_int8_t)
  integer(c_int8_t), parameter, public :: HURRAY_TYPE_INT8 = int(z'10', c_int8_t)
  integer(c_int8_t), parameter, public :: HURRAY_TYPE_UINT8 = int(z'11', c_int8_t)
  integer(c_int8_t), parameter, public :: HURRAY_TYPE_INT16 = int(z'12', c_int8_t)
  integer(c_int8_t), parameter, public :: HURRAY_TYPE_UINT16 = int(z'13', c_int8_t)
  integer(c_int8_t), parameter, public :: HURRAY_TYPE_INT32 = int(z'14', c_int8_t)
  integer(c_int8_t), parameter, public :: HURRAY_TYPE_UINT32 = int(z'15', c_int8_t)
  integer(c_int8_t), parameter, public :: HURRAY_TYPE_INT64 = int(z'16', c_int8_t)
  integer(c_int8_t), parameter, public :: HURRAY_TYPE_UINT64 = int(z'17', c_int8_t)
  integer(c_int8_t), parameter, public :: HURRAY_TYPE_BOOL = int(z'20', c_int8_t)
  integer(c_int8_t), parameter, public :: HURRAY_TYPE_FLOAT8_E4M3 = int(z'40', c_int8_t)
  integer(c_int8_t), parameter, public :: HURRAY_TYPE_FLOAT8_E5M2 = int(z'41', c_int8_t)
  integer(c_int8_t), parameter, public :: HURRAY_TYPE_FLOAT8_E8M0 = int(z'42', c_int8_t)
  integer(c_int8_t), parameter, public :: HURRAY_TYPE_FLOAT4_E2M1 = int(z'43', c_int8_t)
  integer(c_int8_t), parameter, public :: HURRAY_TYPE_FLOAT6_E2M3 = int(z'44', c_int8_t)
  integer(c_int8_t), parameter, public :: HURRAY_TYPE_FLOAT6_E3M2 = int(z'45', c_int8_t)
  integer(c_int8_t), parameter, public :: HURRAY_TYPE_FLOAT128 = int(z'46', c_int8_t)
  integer(c_int8_t), parameter, public :: HURRAY_TYPE_INT4 = int(z'48', c_int8_t)
  integer(c_int8_t), parameter, public :: HURRAY_TYPE_UINT4 = int(z'49', c_int8_t)
  integer(c_int8_t), parameter, public :: HURRAY_TYPE_INT2 = int(z'4A', c_int8_t)
  integer(c_int8_t), parameter, public :: HURRAY_TYPE_UINT2 = int(z'4B', c_int8_t)
  integer(c_int8_t), parameter, public :: HURRAY_TYPE_COMPLEX64 = int(z'50', c_int8_t)
  integer(c_int8_t), parameter, public :: HURRAY_TYPE_COMPLEX128 = int(z'51', c_int8_t)

  ! ---- C structs ---------------------------------------------------------
  type, bind(C), public :: hurray_statistics
    integer(c_int32_t) :: computed_mask
    integer(c_int64_t) :: nnz
    real(c_double) :: sparsity_ratio
    real(c_double) :: value_min
    real(c_double) :: value_max
    real(c_double) :: value_abs_max
    real(c_double) :: value_mean
    real(c_double) :: value_stddev
    integer(c_int8_t) :: nm_n
    integer(c_int8_t) :: nm_m
    logical(c_bool) :: has_nan
    logical(c_bool) :: has_inf
  end type hurray_statistics

  type, bind(C), public :: hurray_file_tensor
    type(c_ptr) :: name
    integer(c_size_t) :: name_len
    integer(c_int8_t) :: layout_tag
    integer(c_int8_t) :: type_tag
    logical(c_bool) :: is_coo
    integer(c_int32_t) :: rank
    type(c_ptr) :: shape
    integer(c_int64_t) :: nnz
    integer(c_int64_t) :: descriptor_offset
    integer(c_int32_t) :: descriptor_length
    integer(c_int64_t) :: data_offset
    integer(c_int64_t) :: data_length
  end type hurray_file_tensor

  type, bind(C), public :: hurray_kv
    type(c_ptr) :: key
    integer(c_size_t) :: key_len
    integer(c_int8_t) :: tag
    integer(c_int8_t) :: array_tag
    integer(c_int64_t) :: count
    integer(c_int64_t) :: i64
    integer(c_int64_t) :: u64
    real(c_double) :: f64
    logical(c_bool) :: b
    type(c_ptr) :: data
    integer(c_size_t) :: data_len
  end type hurray_kv

  type, bind(C), public :: hurray_descriptor_info
    integer(c_int8_t) :: version_major
    integer(c_int8_t) :: version_minor
    integer(c_int32_t) :: descriptor_length
    integer(c_int32_t) :: flags
    integer(c_int8_t) :: type_tag
    integer(c_int32_t) :: rank
    integer(c_int64_t) :: shape(64)
    integer(c_int64_t) :: nnz
    logical(c_bool) :: is_sorted
    integer(c_int64_t) :: values_bytes
    integer(c_int64_t) :: indices_bytes
    integer(c_int32_t) :: values_alignment
    integer(c_int32_t) :: indices_alignment
    integer(c_int32_t) :: quantization_bytes
  end type hurray_descriptor_info

  !> The tensor hurray_coo_create reads (see the header's hurray_coo_parts).
  type, bind(C), public :: hurray_coo_parts
    integer(c_int8_t) :: type_tag
    integer(c_int32_t) :: rank
    type(c_ptr) :: shape
    integer(c_int64_t) :: nnz
    logical(c_bool) :: is_sorted
    type(c_ptr) :: values
    integer(c_size_t) :: values_bytes
    type(c_ptr) :: indices
    integer(c_size_t) :: indices_bytes
  end type hurray_coo_parts

  !> hurray_coo_create's options: size = c_sizeof(options), the rest 0 (or
  !> c_null_ptr / c_null_funptr) for the defaults.
  type, bind(C), public :: hurray_coo_options
    integer(c_size_t) :: size
    integer(c_int32_t) :: flags
    integer(c_int32_t) :: threads
    type(c_funptr) :: release
    type(c_ptr) :: release_ctx
    type(c_ptr) :: shard_parent_shape
    type(c_ptr) :: shard_offset
  end type hurray_coo_options

  !> CSR or CSC arrays (hurray_coo_compressed_size, _export_compressed,
  !> hurray_coo_from_compressed).
  type, bind(C), public :: hurray_compressed
    integer(c_int32_t) :: format
    integer(c_int32_t) :: index_type
    integer(c_int32_t) :: base
    type(c_ptr) :: offsets
    integer(c_size_t) :: offsets_bytes
    type(c_ptr) :: indices
    integer(c_size_t) :: indices_bytes
    type(c_ptr) :: values
    integer(c_size_t) :: values_bytes
  end type hurray_compressed

  !> hurray_coo_assemble's options: size = c_sizeof(options), the rest 0 for
  !> the defaults (HURRAY_DUP_ERROR, no flags, one thread).
  type, bind(C), public :: hurray_assemble_options
    integer(c_size_t) :: size
    integer(c_int32_t) :: duplicates_policy
    integer(c_int32_t) :: flags
    integer(c_int32_t) :: threads
  end type hurray_assemble_options

  !> The text readers' and writers' options (hurray_coo_read_mtx and the
  !> rest): size = c_sizeof(options); duplicates_policy and flags for
  !> reading, precision for writing, threads for both; 0 for the defaults.
  type, bind(C), public :: hurray_text_options
    integer(c_size_t) :: size
    integer(c_int32_t) :: duplicates_policy
    integer(c_int32_t) :: flags
    integer(c_int32_t) :: threads
    integer(c_int32_t) :: precision
    integer(c_int32_t) :: value_type
  end type hurray_text_options

  !> Where the last failure is (hurray_last_error_position, or the
  !> hurray_error_where wrapper below): a field holds a value when its
  !> HURRAY_POS_* bit is in set; entry, dim and coordinates count from base.
  type, bind(C), public :: hurray_error_position
    integer(c_size_t) :: size
    integer(c_int32_t) :: status
    integer(c_int32_t) :: set
    integer(c_int32_t) :: base
    integer(c_int32_t) :: rank
    integer(c_int64_t) :: entry
    integer(c_int64_t) :: other_entry
    integer(c_int64_t) :: dim
    integer(c_int64_t) :: coordinate
    integer(c_int64_t) :: line
    integer(c_int64_t) :: other_line
    integer(c_int64_t) :: column
    integer(c_int64_t) :: byte_offset
    integer(c_int64_t) :: coordinates(64)
    type(c_ptr) :: detail
  end type hurray_error_position

  !> What a lookup on a handle reads (hurray_coo_lookup_view; the layout is
  !> documented in hurray_coo.h): a Fortran probe may read it with
  !> c_f_pointer, or call hurray_coo_lookup_f64.
  type, bind(C), public :: hurray_lookup_view
    integer(c_size_t) :: size
    integer(c_int32_t) :: version
    integer(c_int32_t) :: rank
    type(c_ptr) :: coo
    type(c_ptr) :: shape
    type(c_ptr) :: strides
    type(c_ptr) :: indices
    type(c_ptr) :: values_f64
    integer(c_int64_t) :: nnz
    integer(c_int32_t) :: shift
    integer(c_int32_t) :: offset_bytes
    type(c_ptr) :: offsets
    integer(c_int32_t) :: low_bytes
    integer(c_int32_t) :: reserved
    type(c_ptr) :: low
  end type hurray_lookup_view

  !> Triplets for hurray_coo_assemble: exactly one of indices (interleaved,
  !> rank * n) and dim_indices (a C array of rank pointers, one per
  !> dimension) is c_null_ptr.
  type, bind(C), public :: hurray_triplets
    integer(c_int32_t) :: rank
    type(c_ptr) :: shape
    integer(c_int64_t) :: n
    integer(c_int32_t) :: index_type
    integer(c_int32_t) :: index_base
    type(c_ptr) :: indices
    integer(c_size_t) :: indices_bytes
    type(c_ptr) :: dim_indices
    integer(c_size_t) :: dim_indices_bytes
    integer(c_int8_t) :: type_tag
    type(c_ptr) :: values
    integer(c_size_t) :: values_bytes
  end type hurray_triplets

  ! ---- The C API, one interface per function -----------------------------
  public :: hurray_coo_create, hurray_coo_free
  public :: hurray_coo_validate, hurray_coo_lookup, hurray_coo_lookup_f64, hurray_coo_lookup_batch
  public :: hurray_coo_lookup_view
  public :: hurray_coo_rank, hurray_coo_shape, hurray_coo_nnz, hurray_coo_type_tag
  public :: hurray_coo_is_sorted, hurray_coo_flags, hurray_coo_values, hurray_coo_indices
  public :: hurray_coo_index_bytes
  public :: hurray_type_values_bytes, hurray_type_name, hurray_status_name
  public :: hurray_last_error_message, hurray_last_error_position
  public :: hurray_coo_version_number, hurray_coo_version_string
  public :: hurray_coo_abi_version, hurray_release_scratch, hurray_coo_descriptor_size, hurray_coo_encode_descriptor
  public :: hurray_coo_from_descriptor, hurray_descriptor_inspect, hurray_coo_statistics
  public :: hurray_coo_descriptor_statistics, hurray_coo_shard, hurray_coo_descriptor_flags
  public :: hurray_coo_assemble, hurray_assembly_plan_apply, hurray_assembly_plan_triplets
  public :: hurray_assembly_plan_nnz, hurray_assembly_plan_free
  public :: hurray_coo_compressed_size, hurray_coo_export_compressed, hurray_coo_dense_size
  public :: hurray_coo_export_dense, hurray_coo_from_compressed, hurray_coo_sort_modes
  public :: hurray_coo_read_mtx, hurray_coo_read_mtx_file, hurray_coo_read_tns
  public :: hurray_coo_read_tns_file, hurray_coo_read_stream, hurray_coo_write_mtx
  public :: hurray_coo_write_mtx_file, hurray_read_mtx_compressed_size, hurray_read_mtx_compressed
  public :: hurray_coo_write_tns, hurray_coo_write_tns_file
  public :: hurray_coo_to_local, hurray_coo_lookup_global_f64
  public :: hurray_coo_partition, hurray_coo_concat
  public :: hurray_file_open, hurray_file_open_bytes, hurray_file_close, hurray_file_tensor_count
  public :: hurray_file_tensor_info, hurray_file_find, hurray_file_get, hurray_file_get_at
  public :: hurray_file_get_rows
  public :: hurray_file_kv_count, hurray_file_kv, hurray_file_kv_item
  public :: hurray_file_writer_create, hurray_file_writer_add, hurray_file_writer_kv_string
  public :: hurray_file_writer_kv_int64, hurray_file_writer_kv_uint64, hurray_file_writer_kv_float64
  public :: hurray_file_writer_kv_bool, hurray_file_writer_kv_bytes, hurray_file_writer_kv_array
  public :: hurray_file_writer_kv_string_array, hurray_file_writer_finish, hurray_file_writer_abort

  interface
    integer(c_int32_t) function hurray_coo_create(parts, options, out) &
        bind(C, name="hurray_coo_create")
      import :: c_int32_t, c_ptr, hurray_coo_parts, hurray_coo_options
      type(hurray_coo_parts), intent(in) :: parts
      type(hurray_coo_options), intent(in) :: options
      type(c_ptr), intent(out) :: out
    end function hurray_coo_create

    subroutine hurray_coo_free(coo) bind(C, name="hurray_coo_free")
      import :: c_ptr
      type(c_ptr), value :: coo
    end subroutine hurray_coo_free

    integer(c_int32_t) function hurray_coo_validate(coo, threads) &
        bind(C, name="hurray_coo_validate")
      import :: c_int32_t, c_ptr
      type(c_ptr), value :: coo
      integer(c_int32_t), value :: threads
    end function hurray_coo_validate

    integer(c_int32_t) function hurray_coo_lookup(coo, index, rank, out_value, &
        out_value_bytes, out_found) bind(C, name="hurray_coo_lookup")
      import :: c_int32_t, c_int64_t, c_ptr, c_size_t, c_bool
      type(c_ptr), value :: coo
      integer(c_int64_t), intent(in) :: index(*)
      integer(c_int32_t), value :: rank
      type(c_ptr), value :: out_value
      integer(c_size_t), value :: out_value_bytes
      logical(c_bool), intent(out) :: out_found
    end function hurray_coo_lookup

    integer(c_int32_t) function hurray_coo_lookup_f64(coo, index, rank, out_value, out_found) &
        bind(C, name="hurray_coo_lookup_f64")
      import :: c_int32_t, c_int64_t, c_ptr, c_double, c_bool
      type(c_ptr), value :: coo
      integer(c_int64_t), intent(in) :: index(*)
      integer(c_int32_t), value :: rank
      real(c_double), intent(out) :: out_value
      logical(c_bool), intent(out) :: out_found
    end function hurray_coo_lookup_f64

    integer(c_int32_t) function hurray_coo_lookup_batch(coo, queries, n, rank, out_values, &
        out_found, threads) bind(C, name="hurray_coo_lookup_batch")
      import :: c_int32_t, c_int64_t, c_ptr, c_size_t, c_double, c_bool
      type(c_ptr), value :: coo
      integer(c_int64_t), intent(in) :: queries(*)
      integer(c_size_t), value :: n
      integer(c_int32_t), value :: rank
      real(c_double), intent(out) :: out_values(*)
      logical(c_bool), intent(out) :: out_found(*)
      integer(c_int32_t), value :: threads
    end function hurray_coo_lookup_batch

    integer(c_int32_t) function hurray_coo_lookup_view(coo, out) &
        bind(C, name="hurray_coo_lookup_view")
      import :: c_int32_t, c_ptr, hurray_lookup_view
      type(c_ptr), value :: coo
      type(hurray_lookup_view), intent(inout) :: out
    end function hurray_coo_lookup_view

    integer(c_int32_t) function hurray_coo_rank(coo) bind(C, name="hurray_coo_rank")
      import :: c_int32_t, c_ptr
      type(c_ptr), value :: coo
    end function hurray_coo_rank

    type(c_ptr) function hurray_coo_shape(coo) bind(C, name="hurray_coo_shape")
      import :: c_ptr
      type(c_ptr), value :: coo
    end function hurray_coo_shape

    integer(c_int64_t) function hurray_coo_nnz(coo) bind(C, name="hurray_coo_nnz")
      import :: c_int64_t, c_ptr
      type(c_ptr), value :: coo
    end function hurray_coo_nnz

    integer(c_int8_t) function hurray_coo_type_tag(coo) bind(C, name="hurray_coo_type_tag")
      import :: c_int8_t, c_ptr
      type(c_ptr), value :: coo
    end function hurray_coo_type_tag

    logical(c_bool) function hurray_coo_is_sorted(coo) bind(C, name="hurray_coo_is_sorted")
      import :: c_bool, c_ptr
      type(c_ptr), value :: coo
    end function hurray_coo_is_sorted

    integer(c_int32_t) function hurray_coo_flags(coo) bind(C, name="hurray_coo_flags")
      import :: c_int32_t, c_ptr
      type(c_ptr), value :: coo
    end function hurray_coo_flags

    integer(c_size_t) function hurray_coo_index_bytes(coo) bind(C, name="hurray_coo_index_bytes")
      import :: c_size_t, c_ptr
      type(c_ptr), value :: coo
    end function hurray_coo_index_bytes

    type(c_ptr) function hurray_coo_values(coo, out_bytes) bind(C, name="hurray_coo_values")
      import :: c_ptr, c_size_t
      type(c_ptr), value :: coo
      integer(c_size_t), intent(out) :: out_bytes
    end function hurray_coo_values

    type(c_ptr) function hurray_coo_indices(coo, out_bytes) bind(C, name="hurray_coo_indices")
      import :: c_ptr, c_size_t
      type(c_ptr), value :: coo
      integer(c_size_t), intent(out) :: out_bytes
    end function hurray_coo_indices

    integer(c_int32_t) function hurray_type_values_bytes(type_tag, n, out_bytes) &
        bind(C, name="hurray_type_values_bytes")
      import :: c_int32_t, c_int8_t, c_int64_t
      integer(c_int8_t), value :: type_tag
      integer(c_int64_t), value :: n
      integer(c_int64_t), intent(out) :: out_bytes
    end function hurray_type_values_bytes

    type(c_ptr) function hurray_type_name(type_tag) bind(C, name="hurray_type_name")
      import :: c_ptr, c_int8_t
      integer(c_int8_t), value :: type_tag
    end function hurray_type_name

    type(c_ptr) function hurray_status_name(status) bind(C, name="hurray_status_name")
      import :: c_ptr, c_int32_t
      integer(c_int32_t), value :: status
    end function hurray_status_name

    type(c_ptr) function hurray_last_error_message() bind(C, name="hurray_last_error_message")
      import :: c_ptr
    end function hurray_last_error_message

    integer(c_int32_t) function hurray_last_error_position(out) &
        bind(C, name="hurray_last_error_position")
      import :: c_int32_t, hurray_error_position
      type(hurray_error_position), intent(inout) :: out
    end function hurray_last_error_position

    integer(c_int32_t) function hurray_coo_version_number() &
        bind(C, name="hurray_coo_version_number")
      import :: c_int32_t
    end function hurray_coo_version_number

    type(c_ptr) function hurray_coo_version_string() bind(C, name="hurray_coo_version_string")
      import :: c_ptr
    end function hurray_coo_version_string

    integer(c_int32_t) function hurray_coo_abi_version() bind(C, name="hurray_coo_abi_version")
      import :: c_int32_t
    end function hurray_coo_abi_version

    ! The bytes of work space freed (see the C header).
    integer(c_size_t) function hurray_release_scratch() bind(C, name="hurray_release_scratch")
      import :: c_size_t
    end function hurray_release_scratch

    integer(c_int32_t) function hurray_coo_descriptor_size(coo, options, out_len) &
        bind(C, name="hurray_coo_descriptor_size")
      import :: c_int32_t, c_ptr, c_size_t
      type(c_ptr), value :: coo
      integer(c_int32_t), value :: options
      integer(c_size_t), intent(out) :: out_len
    end function hurray_coo_descriptor_size

    integer(c_int32_t) function hurray_coo_encode_descriptor(coo, options, out, capacity, &
        out_written) bind(C, name="hurray_coo_encode_descriptor")
      import :: c_int32_t, c_ptr, c_size_t, c_int8_t
      type(c_ptr), value :: coo
      integer(c_int32_t), value :: options
      integer(c_int8_t), intent(out) :: out(*)
      integer(c_size_t), value :: capacity
      integer(c_size_t), intent(out) :: out_written
    end function hurray_coo_encode_descriptor

    integer(c_int32_t) function hurray_coo_from_descriptor(bytes_ptr, len, values, &
        values_bytes, indices, indices_bytes, flags, out) bind(C, name="hurray_coo_from_descriptor")
      import :: c_int32_t, c_int8_t, c_ptr, c_size_t
      integer(c_int8_t), intent(in) :: bytes_ptr(*)
      integer(c_size_t), value :: len
      type(c_ptr), value :: values
      integer(c_size_t), value :: values_bytes
      type(c_ptr), value :: indices
      integer(c_size_t), value :: indices_bytes
      integer(c_int32_t), value :: flags
      type(c_ptr), intent(out) :: out
    end function hurray_coo_from_descriptor

    integer(c_int32_t) function hurray_descriptor_inspect(bytes_ptr, len, flags, out) &
        bind(C, name="hurray_descriptor_inspect")
      import :: c_int32_t, c_int8_t, c_size_t, hurray_descriptor_info
      integer(c_int8_t), intent(in) :: bytes_ptr(*)
      integer(c_size_t), value :: len
      integer(c_int32_t), value :: flags
      type(hurray_descriptor_info), intent(out) :: out
    end function hurray_descriptor_inspect

    integer(c_int32_t) function hurray_coo_statistics(coo, out) &
        bind(C, name="hurray_coo_statistics")
      import :: c_int32_t, c_ptr, hurray_statistics
      type(c_ptr), value :: coo
      type(hurray_statistics), intent(out) :: out
    end function hurray_coo_statistics

    integer(c_int32_t) function hurray_coo_descriptor_statistics(coo, out, out_present) &
        bind(C, name="hurray_coo_descriptor_statistics")
      import :: c_int32_t, c_ptr, c_bool, hurray_statistics
      type(c_ptr), value :: coo
      type(hurray_statistics), intent(inout) :: out
      logical(c_bool), intent(out) :: out_present
    end function hurray_coo_descriptor_statistics

    integer(c_int32_t) function hurray_coo_shard(coo, out_parent_shape, out_offset, &
        out_present) bind(C, name="hurray_coo_shard")
      import :: c_int32_t, c_ptr, c_bool
      type(c_ptr), value :: coo
      type(c_ptr), intent(out) :: out_parent_shape
      type(c_ptr), intent(out) :: out_offset
      logical(c_bool), intent(out) :: out_present
    end function hurray_coo_shard

    integer(c_int32_t) function hurray_coo_descriptor_flags(coo) &
        bind(C, name="hurray_coo_descriptor_flags")
      import :: c_int32_t, c_ptr
      type(c_ptr), value :: coo
    end function hurray_coo_descriptor_flags

    integer(c_int32_t) function hurray_coo_assemble(triplets, options, out, out_plan) &
        bind(C, name="hurray_coo_assemble")
      import :: c_int32_t, c_ptr, hurray_triplets, hurray_assemble_options
      type(hurray_triplets), intent(in) :: triplets
      type(hurray_assemble_options), intent(in) :: options
      type(c_ptr), intent(out) :: out
      type(c_ptr), intent(out) :: out_plan
    end function hurray_coo_assemble

    integer(c_int32_t) function hurray_assembly_plan_apply(plan, values, values_bytes, &
        out_values, out_bytes, threads) bind(C, name="hurray_assembly_plan_apply")
      import :: c_int32_t, c_ptr, c_size_t
      type(c_ptr), value :: plan
      type(c_ptr), value :: values
      integer(c_size_t), value :: values_bytes
      type(c_ptr), value :: out_values
      integer(c_size_t), value :: out_bytes
      integer(c_int32_t), value :: threads
    end function hurray_assembly_plan_apply

    integer(c_int64_t) function hurray_assembly_plan_triplets(plan) &
        bind(C, name="hurray_assembly_plan_triplets")
      import :: c_int64_t, c_ptr
      type(c_ptr), value :: plan
    end function hurray_assembly_plan_triplets

    integer(c_int64_t) function hurray_assembly_plan_nnz(plan) &
        bind(C, name="hurray_assembly_plan_nnz")
      import :: c_int64_t, c_ptr
      type(c_ptr), value :: plan
    end function hurray_assembly_plan_nnz

    subroutine hurray_assembly_plan_free(plan) bind(C, name="hurray_assembly_plan_free")
      import :: c_ptr
      type(c_ptr), value :: plan
    end subroutine hurray_assembly_plan_free

    integer(c_int32_t) function hurray_coo_compressed_size(coo, c) &
        bind(C, name="hurray_coo_compressed_size")
      import :: c_int32_t, c_ptr, hurray_compressed
      type(c_ptr), value :: coo
      type(hurray_compressed), intent(inout) :: c
    end function hurray_coo_compressed_size

    integer(c_int32_t) function hurray_coo_export_compressed(coo, c, threads) &
        bind(C, name="hurray_coo_export_compressed")
      import :: c_int32_t, c_ptr, hurray_compressed
      type(c_ptr), value :: coo
      type(hurray_compressed), intent(in) :: c
      integer(c_int32_t), value :: threads
    end function hurray_coo_export_compressed

    ! out_plan: c_null_ptr for none (the fast path), or c_loc of a
    ! type(c_ptr) that receives the plan.
    integer(c_int32_t) function hurray_assemble_compressed(triplets, options, c, out_nnz, &
        out_plan) bind(C, name="hurray_assemble_compressed")
      import :: c_int32_t, c_int64_t, c_ptr, hurray_triplets, hurray_assemble_options, &
          hurray_compressed
      type(hurray_triplets), intent(in) :: triplets
      type(hurray_assemble_options), intent(in) :: options
      type(hurray_compressed), intent(in) :: c
      integer(c_int64_t), intent(out) :: out_nnz
      type(c_ptr), value :: out_plan
    end function hurray_assemble_compressed

    integer(c_int32_t) function hurray_coo_dense_size(coo, out_bytes) &
        bind(C, name="hurray_coo_dense_size")
      import :: c_int32_t, c_ptr, c_size_t
      type(c_ptr), value :: coo
      integer(c_size_t), intent(out) :: out_bytes
    end function hurray_coo_dense_size

    integer(c_int32_t) function hurray_coo_export_dense(coo, out, out_bytes, threads) &
        bind(C, name="hurray_coo_export_dense")
      import :: c_int32_t, c_ptr, c_size_t
      type(c_ptr), value :: coo
      type(c_ptr), value :: out
      integer(c_size_t), value :: out_bytes
      integer(c_int32_t), value :: threads
    end function hurray_coo_export_dense

    integer(c_int32_t) function hurray_coo_from_compressed(rows, cols, c, type_tag, threads, out) &
        bind(C, name="hurray_coo_from_compressed")
      import :: c_int32_t, c_int64_t, c_int8_t, c_ptr, hurray_compressed
      integer(c_int64_t), value :: rows
      integer(c_int64_t), value :: cols
      type(hurray_compressed), intent(in) :: c
      integer(c_int8_t), value :: type_tag
      integer(c_int32_t), value :: threads
      type(c_ptr), intent(out) :: out
    end function hurray_coo_from_compressed

    integer(c_int32_t) function hurray_coo_sort_modes(coo, modes, rank, threads, out) &
        bind(C, name="hurray_coo_sort_modes")
      import :: c_int32_t, c_ptr
      type(c_ptr), value :: coo
      integer(c_int32_t), intent(in) :: modes(*)
      integer(c_int32_t), value :: rank
      integer(c_int32_t), value :: threads
      type(c_ptr), intent(out) :: out
    end function hurray_coo_sort_modes

    pure integer(c_size_t) function c_strlen(s) bind(C, name="strlen")
      import :: c_ptr, c_size_t
      type(c_ptr), value, intent(in) :: s
    end function c_strlen

    ! Text files. A path is a NUL-terminated string: trim(name)//c_null_char.
    integer(c_int32_t) function hurray_coo_read_mtx(bytes, len, options, out_symmetry, out) &
        bind(C, name="hurray_coo_read_mtx")
      import :: c_int32_t, c_ptr, c_size_t, hurray_text_options
      type(c_ptr), value :: bytes
      integer(c_size_t), value :: len
      type(hurray_text_options), intent(in) :: options
      type(c_ptr), value :: out_symmetry
      type(c_ptr), intent(out) :: out
    end function hurray_coo_read_mtx

    integer(c_int32_t) function hurray_coo_read_mtx_file(path, options, out_symmetry, out) &
        bind(C, name="hurray_coo_read_mtx_file")
      import :: c_int32_t, c_ptr, c_char, hurray_text_options
      character(kind=c_char), intent(in) :: path(*)
      type(hurray_text_options), intent(in) :: options
      type(c_ptr), value :: out_symmetry
      type(c_ptr), intent(out) :: out
    end function hurray_coo_read_mtx_file

    integer(c_int32_t) function hurray_read_mtx_compressed_size(path, options, c, out_shape, &
        out_type_tag) bind(C, name="hurray_read_mtx_compressed_size")
      import :: c_int32_t, c_ptr, c_char, hurray_text_options, hurray_compressed
      character(kind=c_char), intent(in) :: path(*)
      type(hurray_text_options), intent(in) :: options
      type(hurray_compressed), intent(inout) :: c
      type(c_ptr), value :: out_shape
      type(c_ptr), value :: out_type_tag
    end function hurray_read_mtx_compressed_size

    integer(c_int32_t) function hurray_read_mtx_compressed(path, options, c, out_nnz, &
        out_symmetry) bind(C, name="hurray_read_mtx_compressed")
      import :: c_int32_t, c_int64_t, c_ptr, c_char, hurray_text_options, hurray_compressed
      character(kind=c_char), intent(in) :: path(*)
      type(hurray_text_options), intent(in) :: options
      type(hurray_compressed), intent(in) :: c
      integer(c_int64_t), intent(out) :: out_nnz
      type(c_ptr), value :: out_symmetry
    end function hurray_read_mtx_compressed

    integer(c_int32_t) function hurray_coo_read_tns(bytes, len, shape, rank, options, out) &
        bind(C, name="hurray_coo_read_tns")
      import :: c_int32_t, c_ptr, c_size_t, hurray_text_options
      type(c_ptr), value :: bytes
      integer(c_size_t), value :: len
      type(c_ptr), value :: shape
      integer(c_int32_t), value :: rank
      type(hurray_text_options), intent(in) :: options
      type(c_ptr), intent(out) :: out
    end function hurray_coo_read_tns

    integer(c_int32_t) function hurray_coo_read_tns_file(path, shape, rank, options, out) &
        bind(C, name="hurray_coo_read_tns_file")
      import :: c_int32_t, c_ptr, c_char, hurray_text_options
      character(kind=c_char), intent(in) :: path(*)
      type(c_ptr), value :: shape
      integer(c_int32_t), value :: rank
      type(hurray_text_options), intent(in) :: options
      type(c_ptr), intent(out) :: out
    end function hurray_coo_read_tns_file

    ! read: c_funloc of a bind(C) function (user, buf, len) returning
    ! integer(c_intptr_t): the bytes copied into buf, 0 at the end, < 0 on
    ! failure.
    integer(c_int32_t) function hurray_coo_read_stream(read, user, format, shape, rank, options, &
        out_symmetry, out) bind(C, name="hurray_coo_read_stream")
      import :: c_int32_t, c_ptr, c_funptr, hurray_text_options
      type(c_funptr), value :: read
      type(c_ptr), value :: user
      integer(c_int32_t), value :: format
      type(c_ptr), value :: shape
      integer(c_int32_t), value :: rank
      type(hurray_text_options), intent(in) :: options
      integer(c_int32_t), intent(out) :: out_symmetry
      type(c_ptr), intent(out) :: out
    end function hurray_coo_read_stream

    integer(c_int32_t) function hurray_coo_write_mtx(coo, options, out, capacity, out_written) &
        bind(C, name="hurray_coo_write_mtx")
      import :: c_int32_t, c_ptr, c_size_t, hurray_text_options
      type(c_ptr), value :: coo
      type(hurray_text_options), intent(in) :: options
      type(c_ptr), value :: out
      integer(c_size_t), value :: capacity
      integer(c_size_t), intent(out) :: out_written
    end function hurray_coo_write_mtx

    integer(c_int32_t) function hurray_coo_write_mtx_file(coo, path, options) &
        bind(C, name="hurray_coo_write_mtx_file")
      import :: c_int32_t, c_ptr, c_char, hurray_text_options
      type(c_ptr), value :: coo
      character(kind=c_char), intent(in) :: path(*)
      type(hurray_text_options), intent(in) :: options
    end function hurray_coo_write_mtx_file

    integer(c_int32_t) function hurray_coo_write_tns(coo, options, out, capacity, out_written) &
        bind(C, name="hurray_coo_write_tns")
      import :: c_int32_t, c_ptr, c_size_t, hurray_text_options
      type(c_ptr), value :: coo
      type(hurray_text_options), intent(in) :: options
      type(c_ptr), value :: out
      integer(c_size_t), value :: capacity
      integer(c_size_t), intent(out) :: out_written
    end function hurray_coo_write_tns

    integer(c_int32_t) function hurray_coo_write_tns_file(coo, path, options) &
        bind(C, name="hurray_coo_write_tns_file")
      import :: c_int32_t, c_ptr, c_char, hurray_text_options
      type(c_ptr), value :: coo
      character(kind=c_char), intent(in) :: path(*)
      type(hurray_text_options), intent(in) :: options
    end function hurray_coo_write_tns_file

    ! ---- Shards ------------------------------------------------------------
    integer(c_int32_t) function hurray_coo_to_local(coo, global, rank, out_local) &
        bind(C, name="hurray_coo_to_local")
      import :: c_int32_t, c_int64_t, c_ptr
      type(c_ptr), value :: coo
      integer(c_int64_t), intent(in) :: global(*)
      integer(c_int32_t), value :: rank
      integer(c_int64_t), intent(out) :: out_local(*)
    end function hurray_coo_to_local

    integer(c_int32_t) function hurray_coo_lookup_global_f64(coo, global, rank, out_value, out_found) &
        bind(C, name="hurray_coo_lookup_global_f64")
      import :: c_int32_t, c_int64_t, c_ptr, c_double
      type(c_ptr), value :: coo
      integer(c_int64_t), intent(in) :: global(*)
      integer(c_int32_t), value :: rank
      real(c_double), intent(out) :: out_value
      type(c_ptr), value :: out_found
    end function hurray_coo_lookup_global_f64

    integer(c_int32_t) function hurray_coo_partition(coo, mode, parts, boundaries, out_shards) &
        bind(C, name="hurray_coo_partition")
      import :: c_int32_t, c_ptr
      type(c_ptr), value :: coo
      integer(c_int32_t), value :: mode
      integer(c_int32_t), value :: parts
      type(c_ptr), value :: boundaries
      type(c_ptr), intent(out) :: out_shards(*)
    end function hurray_coo_partition

    integer(c_int32_t) function hurray_coo_concat(shards, n, out) bind(C, name="hurray_coo_concat")
      import :: c_int32_t, c_ptr
      type(c_ptr), intent(in) :: shards(*)
      integer(c_int32_t), value :: n
      type(c_ptr), intent(out) :: out
    end function hurray_coo_concat

    ! ---- Hurray files ------------------------------------------------------
    integer(c_int32_t) function hurray_file_open(path, flags, out) bind(C, name="hurray_file_open")
      import :: c_int32_t, c_ptr, c_char
      character(kind=c_char), intent(in) :: path(*)
      integer(c_int32_t), value :: flags
      type(c_ptr), intent(out) :: out
    end function hurray_file_open

    integer(c_int32_t) function hurray_file_open_bytes(bytes, len, out) &
        bind(C, name="hurray_file_open_bytes")
      import :: c_int32_t, c_ptr, c_size_t
      type(c_ptr), value :: bytes
      integer(c_size_t), value :: len
      type(c_ptr), intent(out) :: out
    end function hurray_file_open_bytes

    subroutine hurray_file_close(file) bind(C, name="hurray_file_close")
      import :: c_ptr
      type(c_ptr), value :: file
    end subroutine hurray_file_close

    integer(c_int64_t) function hurray_file_tensor_count(file) bind(C, name="hurray_file_tensor_count")
      import :: c_int64_t, c_ptr
      type(c_ptr), value :: file
    end function hurray_file_tensor_count

    integer(c_int32_t) function hurray_file_tensor_info(file, i, out) &
        bind(C, name="hurray_file_tensor_info")
      import :: c_int32_t, c_int64_t, c_ptr, hurray_file_tensor
      type(c_ptr), value :: file
      integer(c_int64_t), value :: i
      type(hurray_file_tensor), intent(out) :: out
    end function hurray_file_tensor_info

    integer(c_int32_t) function hurray_file_find(file, name, out_index) bind(C, name="hurray_file_find")
      import :: c_int32_t, c_int64_t, c_ptr, c_char
      type(c_ptr), value :: file
      character(kind=c_char), intent(in) :: name(*)
      integer(c_int64_t), intent(out) :: out_index
    end function hurray_file_find

    integer(c_int32_t) function hurray_file_get(file, name, flags, out) bind(C, name="hurray_file_get")
      import :: c_int32_t, c_ptr, c_char
      type(c_ptr), value :: file
      character(kind=c_char), intent(in) :: name(*)
      integer(c_int32_t), value :: flags
      type(c_ptr), intent(out) :: out
    end function hurray_file_get

    integer(c_int32_t) function hurray_file_get_at(file, i, flags, out) bind(C, name="hurray_file_get_at")
      import :: c_int32_t, c_int64_t, c_ptr
      type(c_ptr), value :: file
      integer(c_int64_t), value :: i
      integer(c_int32_t), value :: flags
      type(c_ptr), intent(out) :: out
    end function hurray_file_get_at

    integer(c_int32_t) function hurray_file_get_rows(file, name, row_lo, row_hi, flags, out) &
        bind(C, name="hurray_file_get_rows")
      import :: c_int32_t, c_int64_t, c_ptr, c_char
      type(c_ptr), value :: file
      character(kind=c_char), intent(in) :: name(*)
      integer(c_int64_t), value :: row_lo
      integer(c_int64_t), value :: row_hi
      integer(c_int32_t), value :: flags
      type(c_ptr), intent(out) :: out
    end function hurray_file_get_rows

    integer(c_int64_t) function hurray_file_kv_count(file) bind(C, name="hurray_file_kv_count")
      import :: c_int64_t, c_ptr
      type(c_ptr), value :: file
    end function hurray_file_kv_count

    integer(c_int32_t) function hurray_file_kv(file, i, out) bind(C, name="hurray_file_kv")
      import :: c_int32_t, c_int64_t, c_ptr, hurray_kv
      type(c_ptr), value :: file
      integer(c_int64_t), value :: i
      type(hurray_kv), intent(out) :: out
    end function hurray_file_kv

    integer(c_int32_t) function hurray_file_kv_item(file, i, j, out) bind(C, name="hurray_file_kv_item")
      import :: c_int32_t, c_int64_t, c_ptr, hurray_kv
      type(c_ptr), value :: file
      integer(c_int64_t), value :: i
      integer(c_int64_t), value :: j
      type(hurray_kv), intent(out) :: out
    end function hurray_file_kv_item

    integer(c_int32_t) function hurray_file_writer_create(path, alignment, flags, out) &
        bind(C, name="hurray_file_writer_create")
      import :: c_int32_t, c_ptr, c_char
      character(kind=c_char), intent(in) :: path(*)
      integer(c_int32_t), value :: alignment
      integer(c_int32_t), value :: flags
      type(c_ptr), intent(out) :: out
    end function hurray_file_writer_create

    integer(c_int32_t) function hurray_file_writer_add(w, name, coo) bind(C, name="hurray_file_writer_add")
      import :: c_int32_t, c_ptr, c_char
      type(c_ptr), value :: w
      character(kind=c_char), intent(in) :: name(*)
      type(c_ptr), value :: coo
    end function hurray_file_writer_add

    integer(c_int32_t) function hurray_file_writer_kv_string(w, key, value) &
        bind(C, name="hurray_file_writer_kv_string")
      import :: c_int32_t, c_ptr, c_char
      type(c_ptr), value :: w
      character(kind=c_char), intent(in) :: key(*)
      character(kind=c_char), intent(in) :: value(*)
    end function hurray_file_writer_kv_string

    integer(c_int32_t) function hurray_file_writer_kv_int64(w, key, value) &
        bind(C, name="hurray_file_writer_kv_int64")
      import :: c_int32_t, c_int64_t, c_ptr, c_char
      type(c_ptr), value :: w
      character(kind=c_char), intent(in) :: key(*)
      integer(c_int64_t), value :: value
    end function hurray_file_writer_kv_int64

    integer(c_int32_t) function hurray_file_writer_kv_uint64(w, key, value) &
        bind(C, name="hurray_file_writer_kv_uint64")
      import :: c_int32_t, c_int64_t, c_ptr, c_char
      type(c_ptr), value :: w
      character(kind=c_char), intent(in) :: key(*)
      integer(c_int64_t), value :: value
    end function hurray_file_writer_kv_uint64

    integer(c_int32_t) function hurray_file_writer_kv_float64(w, key, value) &
        bind(C, name="hurray_file_writer_kv_float64")
      import :: c_int32_t, c_double, c_ptr, c_char
      type(c_ptr), value :: w
      character(kind=c_char), intent(in) :: key(*)
      real(c_double), value :: value
    end function hurray_file_writer_kv_float64

    integer(c_int32_t) function hurray_file_writer_kv_bool(w, key, value) &
        bind(C, name="hurray_file_writer_kv_bool")
      import :: c_int32_t, c_bool, c_ptr, c_char
      type(c_ptr), value :: w
      character(kind=c_char), intent(in) :: key(*)
      logical(c_bool), value :: value
    end function hurray_file_writer_kv_bool

    integer(c_int32_t) function hurray_file_writer_kv_bytes(w, key, data, len) &
        bind(C, name="hurray_file_writer_kv_bytes")
      import :: c_int32_t, c_ptr, c_char, c_size_t
      type(c_ptr), value :: w
      character(kind=c_char), intent(in) :: key(*)
      type(c_ptr), value :: data
      integer(c_size_t), value :: len
    end function hurray_file_writer_kv_bytes

    integer(c_int32_t) function hurray_file_writer_kv_array(w, key, elem_tag, elems, count) &
        bind(C, name="hurray_file_writer_kv_array")
      import :: c_int32_t, c_int8_t, c_int64_t, c_ptr, c_char
      type(c_ptr), value :: w
      character(kind=c_char), intent(in) :: key(*)
      integer(c_int8_t), value :: elem_tag
      type(c_ptr), value :: elems
      integer(c_int64_t), value :: count
    end function hurray_file_writer_kv_array

    integer(c_int32_t) function hurray_file_writer_kv_string_array(w, key, strings, count) &
        bind(C, name="hurray_file_writer_kv_string_array")
      import :: c_int32_t, c_int64_t, c_ptr, c_char
      type(c_ptr), value :: w
      character(kind=c_char), intent(in) :: key(*)
      type(c_ptr), intent(in) :: strings(*)
      integer(c_int64_t), value :: count
    end function hurray_file_writer_kv_string_array

    integer(c_int32_t) function hurray_file_writer_finish(w) bind(C, name="hurray_file_writer_finish")
      import :: c_int32_t, c_ptr
      type(c_ptr), value :: w
    end function hurray_file_writer_finish

    subroutine hurray_file_writer_abort(w) bind(C, name="hurray_file_writer_abort")
      import :: c_ptr
      type(c_ptr), value :: w
    end subroutine hurray_file_writer_abort
  end interface

  ! ---- The idiomatic layer -----------------------------------------------
  public :: hurray_tensor, hurray_move, hurray_message, hurray_string, hurray_status_string
  public :: hurray_error_where

  ! A failure this module finds itself (a type_tag that is not how the
  ! array's kind stores values), and the library's message at that moment:
  ! hurray_message says the module's message until the library records a
  ! newer one. Kept per program, not per thread (the library's are per
  ! thread).
  character(len=:), allocatable, save, private :: own_message
  character(len=:), allocatable, save, private :: library_then

  !> Owns one COO handle. Free it with t%free() (idempotent); copying one
  !> hurray_tensor into another stops the program (use hurray_move).
  type :: hurray_tensor
    type(c_ptr) :: handle = c_null_ptr
  contains
    procedure, private :: create_f64, create_f32, create_i32, create_i64
    generic :: create => create_f64, create_f32, create_i32, create_i64
    procedure :: read_mtx => tensor_read_mtx
    procedure :: csr => tensor_csr
    procedure :: validate => tensor_validate
    procedure :: lookup => tensor_lookup
    procedure :: rank => tensor_rank
    procedure :: nnz => tensor_nnz
    procedure :: is_null => tensor_is_null
    procedure :: free => tensor_free
    generic :: assignment(=) => tensor_assign
    procedure, private :: tensor_assign
    final :: tensor_final
  end type hurray_tensor

contains

  !> A C string (NUL-terminated, owned by the library) as a Fortran string.
  function hurray_string(p) result(s)
    type(c_ptr), intent(in) :: p
    character(len=:), allocatable :: s
    character(kind=c_char), pointer :: chars(:)
    integer :: i, n
    if (.not. c_associated(p)) then
      s = ""
      return
    end if
    n = int(c_strlen(p))
    call c_f_pointer(p, chars, [n])
    allocate (character(len=n) :: s)
    do i = 1, n
      s(i:i) = chars(i)
    end do
  end function hurray_string

  !> The last error message: the calling thread's from the library, or
  !> this module's own when it refused a call before reaching the library
  !> (and the library has recorded no failure since).
  function hurray_message() result(s)
    character(len=:), allocatable :: s
    s = hurray_string(hurray_last_error_message())
    if (allocated(own_message) .and. allocated(library_then)) then
      if (s == library_then) s = own_message
    end if
  end function hurray_message

  !> Where the calling thread's last library failure is, as numbers (see
  !> hurray_error_position): p%status, and p%entry, p%dim, p%coordinates,
  !> p%line, ... where p%set has their HURRAY_POS_* bit. Tensors made by
  !> hurray_tensor%create count from 1 (p%base is 1), as written here.
  function hurray_error_where() result(p)
    type(hurray_error_position) :: p
    integer(c_int32_t) :: st
    p%size = int(c_sizeof(p), c_size_t)
    st = hurray_last_error_position(p)
    if (st /= HURRAY_OK) p%status = st
  end function hurray_error_where

  !> Whether type_tag is how values of the given kind ("real64", "real32",
  !> "int32", "int64") are stored: HURRAY_TYPE_FLOAT64, _FLOAT32, _INT32
  !> and _INT64 exactly, so a create never reinterprets one type's bits as
  !> another's. On a mismatch, status is HURRAY_ERR_INVALID_TYPE and
  !> hurray_message says why.
  logical function kind_matches(type_tag, kind_name, expected, status) result(ok)
    integer(c_int8_t), intent(in) :: type_tag, expected
    character(len=*), intent(in) :: kind_name
    integer(c_int32_t), intent(out) :: status
    ok = type_tag == expected
    status = HURRAY_OK
    if (ok) return
    status = HURRAY_ERR_INVALID_TYPE
    library_then = hurray_string(hurray_last_error_message())
    own_message = "hurray_tensor%create: the values are " // kind_name // &
                  ", which store " // hurray_string(hurray_type_name(expected)) // &
                  " elements, but type_tag is " // hurray_string(hurray_type_name(type_tag)) // &
                  "; pass HURRAY_TYPE_" // upper(hurray_string(hurray_type_name(expected))) // &
                  " or convert the values"
  end function kind_matches

  !> s in capitals (ASCII).
  function upper(s) result(u)
    character(len=*), intent(in) :: s
    character(len=len(s)) :: u
    integer :: i
    u = s
    do i = 1, len(s)
      if (u(i:i) >= 'a' .and. u(i:i) <= 'z') u(i:i) = achar(iachar(u(i:i)) - 32)
    end do
  end function upper

  !> The name of a status code, e.g. "HURRAY_ERR_DUPLICATE".
  function hurray_status_string(status) result(s)
    integer(c_int32_t), intent(in) :: status
    character(len=:), allocatable :: s
    s = hurray_string(hurray_status_name(status))
  end function hurray_status_string

  !> Create a tensor from 1-based coordinates index1(rank, nnz) (entry j's
  !> coordinates in column j) and values (real64, real32, int32 or int64; the
  !> type_tag must be the one they store: HURRAY_TYPE_FLOAT64, _FLOAT32,
  !> _INT32 or _INT64, else HURRAY_ERR_INVALID_TYPE and no handle, never a
  !> reinterpretation of the bits). The library copies both
  !> (HURRAY_COO_COPY), so the arrays may change or go away afterwards; the
  !> tensor is validated in full. A previous handle in t is freed first.
  !> Error messages (hurray_message) count entries, dimensions and
  !> coordinates from 1, as written here (HURRAY_COO_ONE_BASED_MESSAGES).
  subroutine create_f64(t, type_tag, shape, index1, values, status, sorted)
    class(hurray_tensor), intent(inout) :: t
    integer(c_int8_t), intent(in) :: type_tag
    integer(c_int64_t), intent(in) :: shape(:), index1(:, :)
    real(c_double), intent(in), target, contiguous :: values(:)
    integer(c_int32_t), intent(out) :: status
    logical, intent(in), optional :: sorted
    type(c_ptr) :: p
    call t%free()
    if (.not. kind_matches(type_tag, "real64", HURRAY_TYPE_FLOAT64, status)) return
    p = c_null_ptr
    if (size(values) > 0) p = c_loc(values)
    status = create_raw(t, type_tag, shape, index1, p, int(size(values), c_size_t) * 8_c_size_t, &
                        sorted)
  end subroutine create_f64

  subroutine create_f32(t, type_tag, shape, index1, values, status, sorted)
    class(hurray_tensor), intent(inout) :: t
    integer(c_int8_t), intent(in) :: type_tag
    integer(c_int64_t), intent(in) :: shape(:), index1(:, :)
    real(c_float), intent(in), target, contiguous :: values(:)
    integer(c_int32_t), intent(out) :: status
    logical, intent(in), optional :: sorted
    type(c_ptr) :: p
    call t%free()
    if (.not. kind_matches(type_tag, "real32", HURRAY_TYPE_FLOAT32, status)) return
    p = c_null_ptr
    if (size(values) > 0) p = c_loc(values)
    status = create_raw(t, type_tag, shape, index1, p, int(size(values), c_size_t) * 4_c_size_t, &
                        sorted)
  end subroutine create_f32

  subroutine create_i32(t, type_tag, shape, index1, values, status, sorted)
    class(hurray_tensor), intent(inout) :: t
    integer(c_int8_t), intent(in) :: type_tag
    integer(c_int64_t), intent(in) :: shape(:), index1(:, :)
    integer(c_int32_t), intent(in), target, contiguous :: values(:)
    integer(c_int32_t), intent(out) :: status
    logical, intent(in), optional :: sorted
    type(c_ptr) :: p
    call t%free()
    if (.not. kind_matches(type_tag, "int32", HURRAY_TYPE_INT32, status)) return
    p = c_null_ptr
    if (size(values) > 0) p = c_loc(values)
    status = create_raw(t, type_tag, shape, index1, p, int(size(values), c_size_t) * 4_c_size_t, &
                        sorted)
  end subroutine create_i32

  subroutine create_i64(t, type_tag, shape, index1, values, status, sorted)
    class(hurray_tensor), intent(inout) :: t
    integer(c_int8_t), intent(in) :: type_tag
    integer(c_int64_t), intent(in) :: shape(:), index1(:, :)
    integer(c_int64_t), intent(in), target, contiguous :: values(:)
    integer(c_int32_t), intent(out) :: status
    logical, intent(in), optional :: sorted
    type(c_ptr) :: p
    call t%free()
    if (.not. kind_matches(type_tag, "int64", HURRAY_TYPE_INT64, status)) return
    p = c_null_ptr
    if (size(values) > 0) p = c_loc(values)
    status = create_raw(t, type_tag, shape, index1, p, int(size(values), c_size_t) * 8_c_size_t, &
                        sorted)
  end subroutine create_i64

  integer(c_int32_t) function create_raw(t, type_tag, shape, index1, vptr, vbytes, sorted) &
      result(status)
    class(hurray_tensor), intent(inout) :: t
    integer(c_int8_t), intent(in) :: type_tag
    integer(c_int64_t), intent(in) :: shape(:), index1(:, :)
    type(c_ptr), intent(in) :: vptr
    integer(c_size_t), intent(in) :: vbytes
    logical, intent(in), optional :: sorted
    integer(c_int64_t), allocatable, target :: index0(:, :)
    integer(c_int64_t), target :: extents(size(shape))
    type(hurray_coo_parts) :: parts
    type(hurray_coo_options) :: options
    call t%free()
    index0 = index1 - 1_c_int64_t
    extents = shape
    parts%type_tag = type_tag
    parts%rank = int(size(shape), c_int32_t)
    parts%shape = c_loc(extents)
    parts%nnz = int(size(index1, 2), c_int64_t)
    parts%is_sorted = .false.
    if (present(sorted)) parts%is_sorted = logical(sorted, c_bool)
    parts%values = vptr
    parts%values_bytes = vbytes
    parts%indices = c_null_ptr
    if (size(index0) > 0) parts%indices = c_loc(index0)
    parts%indices_bytes = int(size(index0), c_size_t) * 8_c_size_t
    options%size = c_sizeof(options)
    options%flags = ior(HURRAY_COO_COPY, HURRAY_COO_ONE_BASED_MESSAGES)
    options%threads = 1
    options%release = c_null_funptr
    options%release_ctx = c_null_ptr
    options%shard_parent_shape = c_null_ptr
    options%shard_offset = c_null_ptr
    status = hurray_coo_create(parts, options, t%handle)
  end function create_raw

  !> Read a Matrix Market file (gzip-compressed or not; symmetric files
  !> mirrored) into t, its values as float64 (real, integer and pattern
  !> files alike; a value float64 cannot hold exactly is an error, never
  !> rounded), on `threads` threads (default 1). Duplicate entries are an
  !> error. A previous handle in t is freed first. Messages name the file,
  !> line and column.
  subroutine tensor_read_mtx(t, path, status, threads)
    class(hurray_tensor), intent(inout) :: t
    character(len=*), intent(in) :: path
    integer(c_int32_t), intent(out) :: status
    integer, intent(in), optional :: threads
    type(hurray_text_options) :: o
    call t%free()
    o%size = c_sizeof(o)
    o%duplicates_policy = HURRAY_DUP_ERROR
    o%flags = 0
    o%threads = 1
    if (present(threads)) o%threads = int(threads, c_int32_t)
    o%precision = 0
    o%value_type = int(HURRAY_TYPE_FLOAT64, c_int32_t)
    status = hurray_coo_read_mtx_file(trim(path) // c_null_char, o, c_null_ptr, t%handle)
  end subroutine tensor_read_mtx

  !> The float64 matrix t as CSR with 1-based int32 indices, the way
  !> Fortran solvers take it: row_ptr(rows + 1), col_ind(nnz) and
  !> values(nnz) are allocated here (any earlier allocation is replaced);
  !> columns sorted within each row. A matrix of another element type is
  !> refused with HURRAY_ERR_INVALID_TYPE (read it with t%read_mtx, which
  !> gives float64); one too large for int32 indices, by the library.
  subroutine tensor_csr(t, row_ptr, col_ind, values, status, threads)
    class(hurray_tensor), intent(in) :: t
    integer(c_int32_t), allocatable, target, intent(out) :: row_ptr(:), col_ind(:)
    real(c_double), allocatable, target, intent(out) :: values(:)
    integer(c_int32_t), intent(out) :: status
    integer, intent(in), optional :: threads
    type(hurray_compressed) :: c
    integer(c_int32_t) :: nt
    if (c_associated(t%handle)) then
      if (hurray_coo_type_tag(t%handle) /= HURRAY_TYPE_FLOAT64) then
        status = HURRAY_ERR_INVALID_TYPE
        library_then = hurray_string(hurray_last_error_message())
        own_message = "hurray_tensor%csr: the matrix holds " // &
                      hurray_string(hurray_type_name(hurray_coo_type_tag(t%handle))) // &
                      " values; csr gives float64 (read the file with t%read_mtx)"
        return
      end if
    end if
    c%format = HURRAY_FORMAT_CSR
    c%index_type = HURRAY_INDEX_INT32
    c%base = 1
    status = hurray_coo_compressed_size(t%handle, c)
    if (status /= HURRAY_OK) return
    allocate (row_ptr(c%offsets_bytes / 4), col_ind(c%indices_bytes / 4), values(c%values_bytes / 8))
    c%offsets = c_loc(row_ptr)
    c%indices = c_null_ptr
    if (size(col_ind) > 0) c%indices = c_loc(col_ind)
    c%values = c_null_ptr
    if (size(values) > 0) c%values = c_loc(values)
    nt = 1
    if (present(threads)) nt = int(threads, c_int32_t)
    status = hurray_coo_export_compressed(t%handle, c, nt)
  end subroutine tensor_csr

  !> Run every rule of the specification.
  integer(c_int32_t) function tensor_validate(t) result(status)
    class(hurray_tensor), intent(in) :: t
    status = hurray_coo_validate(t%handle, 1_c_int32_t)
  end function tensor_validate

  !> The value at a 1-based coordinate tuple, as a double (0 when not stored).
  real(c_double) function tensor_lookup(t, index1, found, status) result(v)
    class(hurray_tensor), intent(in) :: t
    integer(c_int64_t), intent(in) :: index1(:)
    logical, intent(out) :: found
    integer(c_int32_t), intent(out) :: status
    integer(c_int64_t) :: index0(size(index1))
    logical(c_bool) :: f
    index0 = index1 - 1_c_int64_t
    v = 0.0_c_double
    f = .false.
    status = hurray_coo_lookup_f64(t%handle, index0, int(size(index1), c_int32_t), v, f)
    found = logical(f)
  end function tensor_lookup

  integer function tensor_rank(t)
    class(hurray_tensor), intent(in) :: t
    tensor_rank = int(hurray_coo_rank(t%handle))
  end function tensor_rank

  integer(c_int64_t) function tensor_nnz(t)
    class(hurray_tensor), intent(in) :: t
    tensor_nnz = hurray_coo_nnz(t%handle)
  end function tensor_nnz

  logical function tensor_is_null(t)
    class(hurray_tensor), intent(in) :: t
    tensor_is_null = .not. c_associated(t%handle)
  end function tensor_is_null

  !> Free the handle; safe to call any number of times.
  subroutine tensor_free(t)
    class(hurray_tensor), intent(inout) :: t
    if (c_associated(t%handle)) call hurray_coo_free(t%handle)
    t%handle = c_null_ptr
  end subroutine tensor_free

  !> Move the handle from src to dst (dst's own handle is freed first).
  subroutine hurray_move(dst, src)
    type(hurray_tensor), intent(inout) :: dst, src
    call dst%free()
    dst%handle = src%handle
    src%handle = c_null_ptr
  end subroutine hurray_move

  !> Assignment would make two owners of one handle: refuse loudly.
  subroutine tensor_assign(lhs, rhs)
    class(hurray_tensor), intent(inout) :: lhs
    type(hurray_tensor), intent(in) :: rhs
    if (c_associated(rhs%handle) .or. c_associated(lhs%handle)) then
      error stop "hurray_tensor cannot be copied (it owns a handle): use hurray_move(dst, src)"
    end if
  end subroutine tensor_assign

  subroutine tensor_final(t)
    type(hurray_tensor), intent(inout) :: t
    call t%free()
  end subroutine tensor_final

end module hurray_coo
