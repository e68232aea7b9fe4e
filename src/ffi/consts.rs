//! Constants exported to the C header as defines. The status numbers mirror
//! `crate::status::Status` (the one table); `status_defines_match_the_table`
//! checks that they agree.
#![allow(non_camel_case_types)]

/// A status code returned by every fallible function: HURRAY_OK (0) on
/// success, a negative HURRAY_ERR_* value on failure. Positive values are
/// reserved. Numbers never change meaning once released.
pub type hurray_status = i32;

/// Success.
pub const HURRAY_OK: hurray_status = 0;
/// A descriptor does not start with the magic bytes "HRRY".
pub const HURRAY_ERR_INVALID_MAGIC: hurray_status = -1;
/// A descriptor's major version is not supported.
pub const HURRAY_ERR_VERSION_MISMATCH: hurray_status = -2;
/// A descriptor's layout tag or layout field is invalid.
pub const HURRAY_ERR_INVALID_LAYOUT: hurray_status = -3;
/// The element type tag is invalid (0x00, 0xFF), reserved (0x47, 0x80-0xEF),
/// private (0xF0-0xFE) or unassigned, or a descriptor's extension-type
/// section is malformed. Only 0x00 and 0xFF stay refused under
/// HURRAY_COO_PERMISSIVE.
pub const HURRAY_ERR_INVALID_TYPE: hurray_status = -4;
/// A caller-provided output buffer is too small; the message says how many
/// bytes are needed.
pub const HURRAY_ERR_BUFFER_TOO_SMALL: hurray_status = -5;
/// A required pointer argument is NULL (or a buffer pointer is NULL with a
/// nonzero byte count).
pub const HURRAY_ERR_NULL_POINTER: hurray_status = -6;
/// A Rust panic was caught at the boundary. This is a bug in the library;
/// please report it with the message.
pub const HURRAY_ERR_INTERNAL_PANIC: hurray_status = -7;
/// A descriptor's buffer handle has an undefined sync mode (not 0, 1 or 2),
/// or a CPU buffer declares a sync mode other than producer-synced (0).
pub const HURRAY_ERR_INVALID_SYNC_MODE: hurray_status = -8;
/// An internal invariant failed. This is a bug in the library.
pub const HURRAY_ERR_INTERNAL: hurray_status = -10;
/// A coordinate is outside the shape: a stored entry's (validation) or a
/// query's (lookup).
pub const HURRAY_ERR_INDEX_OUT_OF_BOUNDS: hurray_status = -11;
/// The rank is outside 1..=64 (rank 0 is a scalar, which may not be sparse).
pub const HURRAY_ERR_INVALID_RANK: hurray_status = -20;
/// A shape dimension is UINT64_MAX, the dynamic-dimension sentinel.
pub const HURRAY_ERR_INVALID_SHAPE: hurray_status = -21;
/// The values or indices buffer does not have exactly the byte size the
/// type, nnz and rank require.
pub const HURRAY_ERR_BUFFER_SIZE: hurray_status = -22;
/// A non-empty borrowed buffer is not 64-byte aligned (use HURRAY_COO_COPY).
pub const HURRAY_ERR_MISALIGNED: hurray_status = -23;
/// Two stored entries have the same coordinate tuple.
pub const HURRAY_ERR_DUPLICATE: hurray_status = -24;
/// is_sorted is set but the entries are not in strictly increasing
/// lexicographic order.
pub const HURRAY_ERR_NOT_SORTED: hurray_status = -25;
/// A query's rank differs from the tensor's rank.
pub const HURRAY_ERR_RANK_MISMATCH: hurray_status = -26;
/// A size computation (such as nnz * rank * 8) overflows.
pub const HURRAY_ERR_OVERFLOW: hurray_status = -27;
/// Memory could not be allocated. Nothing was leaked and nothing aborted.
pub const HURRAY_ERR_ALLOC: hurray_status = -28;
/// Unknown bits are set in a flags word (a flags argument or option); only
/// flags words.
pub const HURRAY_ERR_INVALID_FLAGS: hurray_status = -29;
/// Padding bits after the last element of a sub-byte values buffer are not 0.
pub const HURRAY_ERR_NONZERO_PADDING: hurray_status = -30;
/// The operation is not possible for this element type: a complex value as
/// a double, or any value of a tag accepted only in permissive mode.
pub const HURRAY_ERR_UNSUPPORTED_TYPE: hurray_status = -31;
/// A stored value is a code its element type forbids as data: float8_e8m0
/// codes 0x00 and 0xFF (reserved, NaN in OCP MX). The message names the
/// entry and the code.
pub const HURRAY_ERR_INVALID_VALUE: hurray_status = -32;
/// CSR or CSC offsets (hurray_coo_from_compressed) that do not describe
/// their indices: the first is not the base, one decreases or passes the
/// end of the indices, or the last is not nnz + base. The message names the
/// row or column.
pub const HURRAY_ERR_INVALID_OFFSETS: hurray_status = -33;
/// A descriptor is shorter than its fields (or its descriptor_length) need.
pub const HURRAY_ERR_TRUNCATED: hurray_status = -40;
/// Reserved descriptor flag bits or reserved bytes are not zero, or a field
/// holds a value the format reserves (composite member_role 0x02-0xFF).
pub const HURRAY_ERR_RESERVED_BITS: hurray_status = -41;
/// A descriptor declares a buffer on a device other than the host CPU; this
/// library reads host memory only.
pub const HURRAY_ERR_UNSUPPORTED_DEVICE: hurray_status = -42;
/// A descriptor's buffer handle is invalid: alignment not a power of two (at
/// least 64 when non-empty), reserved or invalid device tag, undefined memory
/// class, a CPU buffer of memory class peer, or the two buffers on different
/// devices or memory classes.
pub const HURRAY_ERR_INVALID_BUFFER_HANDLE: hurray_status = -43;
/// A descriptor's statistics section is invalid: reserved computed_mask bits,
/// or a valid statistics nnz that differs from the COO nnz.
pub const HURRAY_ERR_INVALID_STATISTICS: hurray_status = -44;
/// The descriptor needs a feature this library does not apply: a
/// quantization section (accepted and skipped with HURRAY_COO_PERMISSIVE).
pub const HURRAY_ERR_UNSUPPORTED_FEATURE: hurray_status = -45;
/// A text file (Matrix Market, FROSTT) does not parse; the message names the
/// line, the column and the token.
pub const HURRAY_ERR_PARSE: hurray_status = -50;
/// A file could not be opened, read or written; the message names the path
/// and the system's reason.
pub const HURRAY_ERR_IO: hurray_status = -51;
/// A Hurray file's container contradicts itself or the file: a section or
/// tensor outside the file or overlapping another, a length that lies, a
/// repeated name or key, non-zero padding, a torn composite. The message
/// gives the byte offset of the problem.
pub const HURRAY_ERR_CORRUPT_FILE: hurray_status = -52;
/// A Hurray file's index does not match the CRC-32C its trailer records.
pub const HURRAY_ERR_CHECKSUM: hurray_status = -53;
/// No tensor of that name (or position) in the file; the message lists the
/// names there are.
pub const HURRAY_ERR_NOT_FOUND: hurray_status = -54;
/// An argument other than a flags word is outside its domain: a duplicate
/// policy, index type, format, index base or precision that is not one of
/// the documented values, an options struct whose size is too small, an
/// empty, too long or repeated tensor name or KV key, a
/// data_buffer_alignment that is not a power of two from 4096 to 2 MiB,
/// metadata added after the first tensor. Never a data or format error.
pub const HURRAY_ERR_INVALID_ARGUMENT: hurray_status = -55;
/// A global coordinate falls outside the shard's box; the message names the
/// dimension, the coordinate and the box.
pub const HURRAY_ERR_OUTSIDE_SHARD: hurray_status = -56;

// Element type tags (the format's type table; tied to crate::element::types::TYPES by
// a test).
/// Element type tag float16.
pub const HURRAY_TYPE_FLOAT16: u8 = 0x01;
/// Element type tag bfloat16.
pub const HURRAY_TYPE_BFLOAT16: u8 = 0x02;
/// Element type tag float32.
pub const HURRAY_TYPE_FLOAT32: u8 = 0x03;
/// Element type tag float64.
pub const HURRAY_TYPE_FLOAT64: u8 = 0x04;
/// Element type tag int8.
pub const HURRAY_TYPE_INT8: u8 = 0x10;
/// Element type tag uint8.
pub const HURRAY_TYPE_UINT8: u8 = 0x11;
/// Element type tag int16.
pub const HURRAY_TYPE_INT16: u8 = 0x12;
/// Element type tag uint16.
pub const HURRAY_TYPE_UINT16: u8 = 0x13;
/// Element type tag int32.
pub const HURRAY_TYPE_INT32: u8 = 0x14;
/// Element type tag uint32.
pub const HURRAY_TYPE_UINT32: u8 = 0x15;
/// Element type tag int64.
pub const HURRAY_TYPE_INT64: u8 = 0x16;
/// Element type tag uint64.
pub const HURRAY_TYPE_UINT64: u8 = 0x17;
/// Element type tag bool.
pub const HURRAY_TYPE_BOOL: u8 = 0x20;
/// Element type tag float8_e4m3.
pub const HURRAY_TYPE_FLOAT8_E4M3: u8 = 0x40;
/// Element type tag float8_e5m2.
pub const HURRAY_TYPE_FLOAT8_E5M2: u8 = 0x41;
/// Element type tag float8_e8m0.
pub const HURRAY_TYPE_FLOAT8_E8M0: u8 = 0x42;
/// Element type tag float4_e2m1.
pub const HURRAY_TYPE_FLOAT4_E2M1: u8 = 0x43;
/// Element type tag float6_e2m3.
pub const HURRAY_TYPE_FLOAT6_E2M3: u8 = 0x44;
/// Element type tag float6_e3m2.
pub const HURRAY_TYPE_FLOAT6_E3M2: u8 = 0x45;
/// Element type tag float128.
pub const HURRAY_TYPE_FLOAT128: u8 = 0x46;
/// Element type tag int4.
pub const HURRAY_TYPE_INT4: u8 = 0x48;
/// Element type tag uint4.
pub const HURRAY_TYPE_UINT4: u8 = 0x49;
/// Element type tag int2.
pub const HURRAY_TYPE_INT2: u8 = 0x4A;
/// Element type tag uint2.
pub const HURRAY_TYPE_UINT2: u8 = 0x4B;
/// Element type tag complex64.
pub const HURRAY_TYPE_COMPLEX64: u8 = 0x50;
/// Element type tag complex128.
pub const HURRAY_TYPE_COMPLEX128: u8 = 0x51;

/// Flag for hurray_coo_create: borrow both buffers in place (zero-copy). The
/// caller keeps them alive and unchanged until hurray_coo_free. The default.
pub const HURRAY_COO_BORROW: u32 = 0;
/// Flag for hurray_coo_create: copy both buffers into library-owned
/// 64-byte-aligned memory; the caller may free its arrays as soon as create
/// returns. Misaligned input buffers are accepted in this mode.
pub const HURRAY_COO_COPY: u32 = 1;
/// Flag for hurray_coo_create: skip the O(nnz) data checks (bounds,
/// duplicates, order) and accept reserved, private and unassigned type tags
/// without ever interpreting their values. Structural checks still run.
/// hurray_coo_validate always runs every check. A claimed is_sorted is
/// checked once, on the first lookup that needs it (see hurray_coo_lookup).
pub const HURRAY_COO_PERMISSIVE: u32 = 2;

/// Flag for hurray_coo_create: build a lookup index at create, so a lookup
/// costs O(1) expected instead of a scan over every entry (unsorted tensor)
/// or a search (sorted tensor). On a tensor that is sorted and validated at
/// create, the index is a bucket directory: one 4-byte offset per bucket of
/// consecutive positions (at most one bucket per entry) and each entry's
/// low position bits (2 bytes, 4 on very sparse shapes); a lookup reads two
/// offsets, a few of those keys (a binary search of them when many entries
/// crowd one bucket, such as a dense row) and the value. About 4 to 6 bytes
/// per entry, at most 8 per entry plus 8 bytes (12 per entry beyond 2^32
/// entries). Otherwise, and when a sorted shape is
/// too sparse for 32 low bits, a hash table over the entries' coordinates:
/// it usually reads one cache line and the value; about 13 bytes per entry,
/// at most 16 (plus 256 bytes). Building either is one pass over the
/// entries. Memory is reported by hurray_coo_index_bytes; results are
/// identical to a lookup without the index.
pub const HURRAY_COO_INDEX: u32 = 4;

/// Flag for hurray_coo_create: the handle's error messages count entries,
/// dimensions and coordinates from 1, as a Fortran or Julia caller writes
/// them ("entry 3 duplicates entry 2 at (3, 1) [... counted from 1]"). The
/// API itself stays 0-based: only the text of hurray_last_error_message()
/// changes, for every call on this handle and for its creation.
pub const HURRAY_COO_ONE_BASED_MESSAGES: u32 = 8;

/// Flag for hurray_coo_create: HURRAY_COO_INDEX, and the index also keeps a
/// copy of each entry's value, converted to double, in the same cache line
/// as its key, so that hurray_coo_lookup_f64 and hurray_coo_lookup_batch
/// read one line instead of the index and then the values buffer
/// (hurray_coo_lookup still reads the caller's buffer). The index then
/// takes about 32 bytes per entry instead of 13 (hurray_coo_index_bytes
/// counts them). Applies to real element types when the compact index
/// applies (an entry's linear position and number fit one 64-bit slot,
/// which holds unless the shape is huge); otherwise the flag builds the
/// index alone, and hurray_coo_flags reports HURRAY_COO_INDEX without this
/// flag. The copy is taken at create: the buffers stay unchanged until
/// hurray_coo_free, as for every handle.
pub const HURRAY_COO_INDEX_VALUES: u32 = 16;

/// hurray_error_position.set bit: entry holds a value.
pub const HURRAY_POS_ENTRY: u32 = 1;
/// hurray_error_position.set bit: other_entry holds a value.
pub const HURRAY_POS_OTHER_ENTRY: u32 = 2;
/// hurray_error_position.set bit: dim holds a value.
pub const HURRAY_POS_DIM: u32 = 4;
/// hurray_error_position.set bit: coordinate holds a value.
pub const HURRAY_POS_COORDINATE: u32 = 8;
/// hurray_error_position.set bit: coordinates (rank of them) hold values.
pub const HURRAY_POS_COORDINATES: u32 = 16;
/// hurray_error_position.set bit: line holds a value.
pub const HURRAY_POS_LINE: u32 = 32;
/// hurray_error_position.set bit: other_line holds a value.
pub const HURRAY_POS_OTHER_LINE: u32 = 64;
/// hurray_error_position.set bit: column holds a value.
pub const HURRAY_POS_COLUMN: u32 = 128;
/// hurray_error_position.set bit: byte_offset holds a value.
pub const HURRAY_POS_BYTE_OFFSET: u32 = 256;
/// hurray_error_position.set bit: line's entry is the mirror image of a
/// symmetric Matrix Market file's stored entry (the message says
/// "(mirrored)").
pub const HURRAY_POS_LINE_MIRRORED: u32 = 512;
/// hurray_error_position.set bit: other_line's entry is a mirror image.
pub const HURRAY_POS_OTHER_LINE_MIRRORED: u32 = 1024;

/// What every threads argument of this library means: 0 and 1 work on the
/// calling thread; n > 1 asks for up to n threads, at most this many (a
/// larger n is read as HURRAY_MAX_THREADS), the calling thread and n - 1 of
/// the library's own. An operation uses fewer when its work is small (each
/// function says how much a thread gets at least) and its result is the
/// same for any count; every share has ended when the call returns. A
/// thread that cannot be started is no error: its share runs on the calling
/// thread.
///
/// The library's threads are kept for later calls: started when a call
/// first needs them, at most HURRAY_MAX_THREADS - 1 in a process however
/// many threads call, they stay for the life of the process (as OpenMP's
/// do), spinning for about 100 microseconds after each share and then
/// asleep until a call hands them work; a share none of them has started
/// when the caller's own is done runs on the calling thread. Concurrent
/// calls never share one.
/// A process forked from one that has them starts its own. While they
/// exist, dlclose does not unload the library.
pub const HURRAY_MAX_THREADS: u32 = 64;

/// The largest rank of a COO tensor (the format's limit).
pub const HURRAY_MAX_RANK: u32 = 64;

/// Largest number of bytes hurray_coo_lookup writes (float128, complex128);
/// an out_value buffer of this size fits every element type.
pub const HURRAY_LOOKUP_MAX_BYTES: usize = 16;

/// The layout of hurray_coo_lookup_view this header describes: written by
/// hurray_coo_lookup_view in view->version, and checked by the inline probe
/// of hurray_coo_probe.h, which takes the library call for any other value.
pub const HURRAY_LOOKUP_VIEW_VERSION: u32 = 1;

/// Major version of this library (semantic versioning).
pub const HURRAY_COO_VERSION_MAJOR: u32 = 0;
/// Minor version of this library.
pub const HURRAY_COO_VERSION_MINOR: u32 = 1;
/// Patch version of this library.
pub const HURRAY_COO_VERSION_PATCH: u32 = 0;
/// MAJOR * 1000000 + MINOR * 1000 + PATCH, as hurray_coo_version_number()
/// returns it at run time.
pub const HURRAY_COO_VERSION_NUMBER: u32 = 1000;
/// Version of the binary interface: it changes whenever an exported function
/// changes signature or disappears, or a status code changes meaning.
pub const HURRAY_COO_ABI_VERSION: u32 = 2;
