//! The boundary's plumbing: the one panic barrier every export runs in, the
//! thread-local last-error message, and the checked conversions from raw
//! pointers. Every dereference of a caller's pointer (reads of its arrays,
//! writes through its out-pointers, the handle itself) is in this file; the
//! exports call these helpers, forwarding their documented contracts.

use std::any::Any;
use std::cell::{Cell, RefCell};
use std::ffi::{c_void, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};

use super::hurray_coo;
use crate::coo::Coo;
use crate::element::size::MAX_RANK;
use crate::error::CooError;
use crate::status::Status;

thread_local! {
    /// `None` is the empty message: clearing it after every successful call
    /// then costs no allocation.
    static LAST_ERROR: RefCell<Option<CString>> = const { RefCell::new(None) };
    /// Whether `LAST_ERROR` holds a message: a plain flag (no destructor, so
    /// no registration check on access) that a successful call reads to skip
    /// the clearing.
    static HAS_MESSAGE: Cell<bool> = const { Cell::new(false) };
    /// The last failure's status, place and detail (see
    /// `hurray_last_error_position`); set and cleared with the message.
    static LAST_POSITION: RefCell<Option<Box<Recorded>>> = const { RefCell::new(None) };
}

/// A failure as `hurray_last_error_position` reports it.
pub(crate) struct Recorded {
    pub(crate) status: i32,
    pub(crate) position: crate::error::Position,
    /// The message without its leading place (see `CooError::detail`).
    pub(crate) detail: CString,
}

/// How many threads hold a message. A successful call clears its thread's
/// message; while no thread holds one (a program that has seen no error, or
/// whose failures were followed by successes), that costs one load of this
/// counter and no thread-local access at all, which in a shared library is
/// a call into the dynamic loader. Relaxed is enough: a thread only acts on
/// its own flag, and sees its own increments in program order.
static THREADS_WITH_MESSAGE: AtomicUsize = AtomicUsize::new(0);

/// Set the calling thread's message (a failure).
#[cold]
#[inline(never)]
fn set_message(msg: &str) {
    let c = CString::new(msg.replace('\0', "\\0")).unwrap_or_default();
    if !HAS_MESSAGE.get() {
        HAS_MESSAGE.set(true);
        THREADS_WITH_MESSAGE.fetch_add(1, Ordering::Relaxed);
    }
    // `try_with` fails only while the thread is being torn down; then there is
    // nobody left to read the message.
    let _ = LAST_ERROR.try_with(|m| *m.borrow_mut() = Some(c));
    let _ = LAST_POSITION.try_with(|p| *p.borrow_mut() = None);
}

/// Record `err`'s status, place and detail beside the message `set_message`
/// just set.
#[cold]
#[inline(never)]
fn set_position(err: &CooError) {
    let detail = CString::new(err.detail().replace('\0', "\\0")).unwrap_or_default();
    let r = Recorded {
        status: err.status().code(),
        position: err.position(),
        detail,
    };
    let _ = LAST_POSITION.try_with(|p| *p.borrow_mut() = Some(Box::new(r)));
}

/// Run `f` on the calling thread's last failure (`None` after a success).
pub(crate) fn with_last_failure<R>(f: impl FnOnce(Option<&Recorded>) -> R) -> R {
    let mut f = Some(f);
    let r = LAST_POSITION.try_with(|p| (f.take().expect("called once"))(p.borrow().as_deref()));
    match r {
        Ok(r) => r,
        Err(_) => (f.take().expect("not called"))(None),
    }
}

/// Empty the calling thread's message (a success): almost always a single
/// load that finds no thread holding one.
#[inline(always)]
fn clear_message() {
    if THREADS_WITH_MESSAGE.load(Ordering::Relaxed) != 0 {
        clear_message_slow();
    }
}

#[cold]
#[inline(never)]
fn clear_message_slow() {
    if HAS_MESSAGE.get() {
        HAS_MESSAGE.set(false);
        THREADS_WITH_MESSAGE.fetch_sub(1, Ordering::Relaxed);
        let _ = LAST_ERROR.try_with(|m| *m.borrow_mut() = None);
        let _ = LAST_POSITION.try_with(|p| *p.borrow_mut() = None);
    }
}

/// The calling thread's last message (empty after a success).
pub(crate) fn last_message_ptr() -> *const std::ffi::c_char {
    LAST_ERROR
        .try_with(|m| m.borrow().as_ref().map_or(c"".as_ptr(), |c| c.as_ptr()))
        .unwrap_or(c"".as_ptr())
}

fn panic_text(payload: Box<dyn Any + Send>) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "non-string panic payload".to_owned()
    }
}

/// Run a fallible export body behind the panic barrier: success clears the
/// thread's message and returns `HURRAY_OK`; an error sets the message and
/// returns its status; a panic becomes `HURRAY_ERR_INTERNAL_PANIC`.
#[inline(always)]
pub(crate) fn guard(f: impl FnOnce() -> Result<(), CooError>) -> i32 {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(())) => {
            clear_message();
            Status::Ok.code()
        }
        Ok(Err(e)) => failed(e),
        Err(payload) => failed(CooError::Panic(panic_text(payload))),
    }
}

/// The failure path of `guard`, out of line.
#[cold]
#[inline(never)]
fn failed(err: CooError) -> i32 {
    set_message(&err.to_string());
    set_position(&err);
    err.status().code()
}

/// `guard` for a fast path that may decline: `f` returns `None` when the
/// call must take its checked path instead (then this returns `None` and
/// nothing was written); `Some(())` is a success, as for `guard`.
#[inline(always)]
pub(crate) fn guard_fast(f: impl FnOnce() -> Option<()>) -> Option<i32> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Some(())) => {
            clear_message();
            Some(Status::Ok.code())
        }
        Ok(None) => None,
        Err(payload) => Some(failed(CooError::Panic(panic_text(payload)))),
    }
}

/// Run an infallible export body (an accessor) behind the panic barrier,
/// returning `fallback` if it panics.
pub(crate) fn guard_value<T>(fallback: T, f: impl FnOnce() -> T) -> T {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|payload| {
        set_message(&CooError::Panic(panic_text(payload)).to_string());
        fallback
    })
}

/// Move a new handle to the heap and give its pointer to the caller, with a
/// fallible allocation.
pub(crate) fn box_handle<T>(h: T) -> Result<*mut T, CooError> {
    let mut v = Vec::new();
    v.try_reserve_exact(1).map_err(|_| CooError::Alloc {
        bytes: std::mem::size_of::<T>(),
        what: "the handle",
    })?;
    v.push(h);
    // A boxed one-element slice has the layout of a Box<T>; it is taken back
    // as one in free_handle.
    Ok(Box::into_raw(v.into_boxed_slice()).cast::<T>())
}

/// Free a handle made by `box_handle`.
///
/// # Safety
/// `h` is NULL or a live handle from `box_handle`, freed only once.
pub(crate) unsafe fn free_handle<T>(h: *mut T) {
    // SAFETY: per this function's contract.
    drop(unsafe { take_handle(h) });
}

/// Take back a handle made by `box_handle` (NULL: `None`), to consume it.
///
/// # Safety
/// `h` is NULL or a live handle from `box_handle`, taken back only once.
pub(crate) unsafe fn take_handle<T>(h: *mut T) -> Option<Box<T>> {
    if h.is_null() {
        return None;
    }
    // SAFETY: a non-null `h` came from box_handle (a boxed one-element
    // slice, which has Box<T>'s layout) and is taken back once, per the
    // contract.
    Some(unsafe { Box::from_raw(h) })
}

/// The handle of a lookup's fast path: `None` for NULL (the checked path
/// then names it). Inlined into the caller's frame.
///
/// # Safety
/// `coo` is NULL or a live handle.
#[inline(always)]
pub(crate) unsafe fn handle_fast<'h>(coo: *const hurray_coo) -> Option<&'h hurray_coo> {
    // SAFETY: NULL or live, per the contract.
    unsafe { coo.as_ref() }
}

/// A lookup's query in place, for the fast path: `None` unless `index` is
/// non-NULL and aligned.
///
/// # Safety
/// `index`, when not NULL, holds `rank` readable coordinates (at most 64,
/// checked by the caller against the tensor's rank).
#[inline(always)]
pub(crate) unsafe fn query_fast<'a>(index: *const u64, rank: u32) -> Option<&'a [u64]> {
    if index.is_null() || !index.is_aligned() {
        return None;
    }
    // SAFETY: non-null and aligned, and `rank` readable coordinates, per
    // the contract.
    Some(unsafe { std::slice::from_raw_parts(index, rank as usize) })
}

/// A caller's NUL-terminated UTF-8 string (a name, a key, a value).
///
/// # Safety
/// `s` is NULL or NUL-terminated, and stays unchanged for 'a.
pub(crate) unsafe fn c_str<'a>(
    s: *const std::ffi::c_char,
    what: &'static str,
) -> Result<&'a str, CooError> {
    if s.is_null() {
        return Err(CooError::null(what));
    }
    // SAFETY: non-null and NUL-terminated per the contract.
    let c = unsafe { std::ffi::CStr::from_ptr(s) };
    c.to_str()
        .map_err(|e| CooError::Argument(format!("{what} is not valid UTF-8: {e}")))
}

/// A caller's size-first options struct (its first field is a `size_t`
/// holding its own size), read by value; `None` for NULL (the defaults).
/// A size smaller than this library's struct is refused, naming `what`;
/// a larger one (a newer header) is read up to this library's fields.
///
/// # Safety
/// `ptr` is NULL or points to a struct of at least the size it declares.
#[inline(always)]
pub(crate) unsafe fn read_sized<T: Copy>(
    ptr: *const T,
    what: &'static str,
    type_name: &'static str,
) -> Result<Option<T>, CooError> {
    if ptr.is_null() {
        return Ok(None);
    }
    // SAFETY: non-null; its first field is its size, per the contract.
    let size = unsafe { ptr.cast::<usize>().read_unaligned() };
    let need = std::mem::size_of::<T>();
    if size < need {
        return Err(CooError::Argument(format!(
            "{what}->size is {size}; set it to sizeof({type_name}), {need} in this library"
        )));
    }
    // SAFETY: at least a whole T is readable (its size says so).
    Ok(Some(unsafe { ptr.read_unaligned() }))
}

/// A caller's struct, read by value (unaligned reads tolerated).
///
/// # Safety
/// `ptr`, when not NULL, must be valid for a read of one `T`, and every bit
/// pattern the caller may write must be a valid `T` (plain C data: integers
/// and raw pointers).
#[inline(always)]
pub(crate) unsafe fn read_struct<T: Copy>(
    ptr: *const T,
    what: &'static str,
) -> Result<T, CooError> {
    if ptr.is_null() {
        return Err(CooError::null(what));
    }
    // SAFETY: non-null and readable per the caller's contract.
    Ok(unsafe { ptr.read_unaligned() })
}

/// `n` (at most 64, checked by the caller) pointers of a caller's array of
/// pointers, copied.
///
/// # Safety
/// `ptr`, when not NULL, must be valid for reads of `n` pointers.
pub(crate) unsafe fn read_ptrs(
    ptr: *const *const c_void,
    n: usize,
    what: &'static str,
) -> Result<[*const c_void; MAX_RANK as usize], CooError> {
    if ptr.is_null() {
        return Err(CooError::null(what));
    }
    if n > MAX_RANK as usize {
        return Err(CooError::Internal(format!("{what}: {n} pointers read")));
    }
    let mut out = [std::ptr::null(); MAX_RANK as usize];
    for (k, slot) in out[..n].iter_mut().enumerate() {
        // SAFETY: the caller guarantees `n` readable pointers at `ptr`.
        *slot = unsafe { ptr.add(k).read_unaligned() };
    }
    Ok(out)
}

/// # Safety
/// `coo` is NULL or a live handle from `hurray_coo_create*`.
pub(crate) unsafe fn handle<'h>(coo: *const hurray_coo) -> Result<&'h hurray_coo, CooError> {
    // SAFETY: forwarded contract.
    unsafe { live(coo, "coo") }
}

/// A live object the library handed out (a handle, a plan), or NULL.
///
/// # Safety
/// `p` is NULL or a live object from `box_handle`, not freed meanwhile.
pub(crate) unsafe fn live<'h, T>(p: *const T, what: &'static str) -> Result<&'h T, CooError> {
    // SAFETY: non-null objects are live per the C contract.
    unsafe { p.as_ref() }.ok_or_else(|| CooError::null(what))
}

/// Copy `src` to the caller's memory at `out`.
///
/// # Safety
/// `out` must be non-NULL and valid for writes of `src.len()` bytes.
pub(crate) unsafe fn write_bytes(out: *mut u8, src: &[u8]) {
    // SAFETY: per the caller's contract; `src` is our own memory, so the
    // two cannot overlap.
    unsafe { std::ptr::copy_nonoverlapping(src.as_ptr(), out, src.len()) }
}

/// A caller's byte buffer as a slice; `&[]` when `len` is 0 (whatever `ptr`
/// is, NULL included).
///
/// # Safety
/// When `len > 0` and `ptr` is not NULL, `ptr` must be valid for reads of
/// `len` bytes for `'a` and not be written meanwhile (the documented C
/// contract of every function that takes a buffer).
pub(crate) unsafe fn bytes<'a>(
    ptr: *const c_void,
    len: usize,
    what: &'static str,
) -> Result<&'a [u8], CooError> {
    if len == 0 {
        return Ok(&[]);
    }
    if ptr.is_null() {
        return Err(CooError::NullPointer {
            what,
            hint: " but its byte count is not 0",
        });
    }
    if len > isize::MAX as usize {
        return Err(CooError::Overflow {
            what: format!("{what} byte count {len} (larger than the address space allows)"),
        });
    }
    // SAFETY: `ptr` is non-null, `len` is at most isize::MAX, and the caller
    // guarantees `len` readable, unchanging bytes for 'a (see above). u8 has
    // alignment 1, so any address is suitably aligned.
    Ok(unsafe { std::slice::from_raw_parts(ptr.cast::<u8>(), len) })
}

/// The two COO buffers a caller passes (values, then indices) as byte slices.
///
/// # Safety
/// As `bytes`, for each buffer.
pub(crate) unsafe fn coo_buffers<'a>(
    values: *const c_void,
    values_bytes: usize,
    indices: *const u64,
    indices_bytes: usize,
) -> Result<(&'a [u8], &'a [u8]), CooError> {
    // SAFETY: forwarded contract.
    unsafe {
        Ok((
            bytes(values, values_bytes, "values")?,
            bytes(indices.cast(), indices_bytes, "indices")?,
        ))
    }
}

/// Check a caller's array of `n` `T`s: NULL only when empty, size within the
/// address space, `T`-aligned. Returns the byte length.
fn check_array<T>(ptr: *const T, n: usize, what: &'static str) -> Result<usize, CooError> {
    let bytes = n
        .checked_mul(std::mem::size_of::<T>())
        .filter(|&b| b <= isize::MAX as usize)
        .ok_or_else(|| CooError::Overflow {
            what: format!("{what}: {n} elements (larger than the address space allows)"),
        })?;
    if n > 0 && ptr.is_null() {
        return Err(CooError::NullPointer {
            what,
            hint: " but its element count is not 0",
        });
    }
    let align = std::mem::align_of::<T>();
    if n > 0 && !(ptr as usize).is_multiple_of(align) {
        return Err(CooError::Misaligned {
            buffer: what,
            addr: ptr as usize,
            rem: ptr as usize % align,
        });
    }
    Ok(bytes)
}

/// A caller's read-only array of `n` plain values (`&[]` when `n` is 0).
///
/// # Safety
/// When `n > 0`, `ptr` must be valid for reads of `n` `T`s for `'a`.
pub(crate) unsafe fn array<'a, T: bytemuck::Pod>(
    ptr: *const T,
    n: usize,
    what: &'static str,
) -> Result<&'a [T], CooError> {
    check_array(ptr, n, what)?;
    if n == 0 {
        return Ok(&[]);
    }
    // SAFETY: non-null, aligned, within the address space (checked above),
    // valid for n reads per the caller's contract; Pod: any bits are valid.
    Ok(unsafe { std::slice::from_raw_parts(ptr, n) })
}

/// A caller's writable array of `n` plain values (`&mut []` when `n` is 0).
///
/// # Safety
/// When `n > 0`, `ptr` must be valid for reads and writes of `n` `T`s for
/// `'a`, and not be accessed otherwise meanwhile.
pub(crate) unsafe fn array_mut<'a, T: bytemuck::Pod>(
    ptr: *mut T,
    n: usize,
    what: &'static str,
) -> Result<&'a mut [T], CooError> {
    check_array(ptr, n, what)?;
    if n == 0 {
        return Ok(&mut []);
    }
    // SAFETY: as `array`, plus exclusive access per the caller's contract.
    Ok(unsafe { std::slice::from_raw_parts_mut(ptr, n) })
}

/// Up to 64 `u64`s (a shape or a query) copied off a caller's array.
pub(crate) struct Small {
    buf: [u64; MAX_RANK as usize],
    len: usize,
}

impl Small {
    pub(crate) fn as_slice(&self) -> &[u64] {
        &self.buf[..self.len]
    }
}

/// Copy `n` (at most 64, checked by the caller before) `u64`s from `ptr`.
///
/// # Safety
/// `ptr`, when not NULL, must be valid for reads of `n` `uint64_t`.
#[inline(always)]
pub(crate) unsafe fn read_u64s(
    ptr: *const u64,
    n: u32,
    what: &'static str,
) -> Result<Small, CooError> {
    if ptr.is_null() {
        return Err(CooError::null(what));
    }
    let n = n as usize;
    if n > MAX_RANK as usize {
        return Err(CooError::Internal(format!("{what}: {n} values read")));
    }
    let mut out = Small {
        buf: [0; MAX_RANK as usize],
        len: n,
    };
    for (k, slot) in out.buf[..n].iter_mut().enumerate() {
        // SAFETY: the caller guarantees `n` readable u64s at `ptr`; the read is
        // unaligned-tolerant, so a misaligned array is read correctly, not UB.
        *slot = unsafe { ptr.add(k).read_unaligned() };
    }
    Ok(out)
}

/// Write `value` through an optional out-pointer (skipped when NULL).
///
/// # Safety
/// `ptr`, when not NULL, must be valid for a write of one `T`.
pub(crate) unsafe fn write_opt<T>(ptr: *mut T, value: T) {
    if !ptr.is_null() {
        // SAFETY: non-null and writable per the caller's contract; unaligned
        // writes are tolerated.
        unsafe { ptr.write_unaligned(value) }
    }
}

/// Write `value` through a required out-pointer.
///
/// # Safety
/// As `write_opt`.
pub(crate) unsafe fn write_req<T>(
    ptr: *mut T,
    value: T,
    what: &'static str,
) -> Result<(), CooError> {
    if ptr.is_null() {
        return Err(CooError::null(what));
    }
    // SAFETY: non-null; the caller's contract makes it writable.
    unsafe { write_opt(ptr, value) };
    Ok(())
}

/// Run `f` on a query of `rank` coordinates, after checking `rank`
/// against the tensor (so that no more than the tensor's rank is ever
/// read): the caller's array itself when it is aligned (the common case),
/// else a copy on this frame's stack. Nothing large is moved or returned:
/// a point lookup's whole fixed cost stays a few dozen instructions.
///
/// # Safety
/// `index`, when not NULL, must be valid for reads of `rank` `uint64_t`
/// for the duration of the call (the documented contract of every lookup).
#[inline(always)]
pub(crate) unsafe fn with_query<R>(
    coo: &Coo<'_>,
    index: *const u64,
    rank: u32,
    f: impl FnOnce(&[u64]) -> Result<R, CooError>,
) -> Result<R, CooError> {
    if rank != coo.rank() {
        return Err(CooError::RankMismatch {
            got: rank,
            expected: coo.rank(),
        });
    }
    if index.is_aligned() {
        // SAFETY: the caller guarantees `rank` readable coordinates at
        // `index` for the duration of the call, and rank equals the tensor's
        // rank (1..=64).
        return f(unsafe { array(index, rank as usize, "index") }?);
    }
    // SAFETY: as above; the copy tolerates the misalignment.
    let copy = unsafe { read_u64s(index, rank, "index") }?;
    f(copy.as_slice())
}

/// A C path as a `Path` (any bytes on Unix).
///
/// # Safety
/// `path`, when not NULL, must be a NUL-terminated string.
pub(crate) unsafe fn c_path<'a>(
    path: *const std::ffi::c_char,
) -> Result<&'a std::path::Path, CooError> {
    if path.is_null() {
        return Err(CooError::null("path"));
    }
    // SAFETY: non-null and NUL-terminated per the contract.
    let c = unsafe { std::ffi::CStr::from_ptr(path) };
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        Ok(std::path::Path::new(std::ffi::OsStr::from_bytes(
            c.to_bytes(),
        )))
    }
    #[cfg(not(unix))]
    {
        c.to_str()
            .map(std::path::Path::new)
            .map_err(|_| CooError::Io("the path is not UTF-8".into()))
    }
}

/// A caller's array as [`apart`] compares it: its name in messages, its
/// first byte, its length in bytes.
pub(crate) type Span = (&'static str, *const u8, usize);

/// The [`Span`] of a slice.
pub(crate) fn span<T>(name: &'static str, s: &[T]) -> Span {
    (name, s.as_ptr().cast(), std::mem::size_of_val(s))
}

/// `Err` naming the first two non-empty arrays of a call that share memory
/// when at least one of them is written: each of `written` against every
/// other written one and every `read` one (arrays only read may share
/// memory). Addresses are compared as numbers; nothing is read. A NULL
/// array is apart from everything (its own check refuses it). Checked
/// before any array is touched, so an output that aliases an input (an
/// in-place call the library cannot do) is refused instead of read half
/// overwritten.
pub(crate) fn apart(read: &[Span], written: &[Span]) -> Result<(), CooError> {
    for (k, &w) in written.iter().enumerate() {
        for &other in written[k + 1..].iter().chain(read) {
            let ((na, pa, la), (nb, pb, lb)) = (w, other);
            let (a0, b0) = (pa as usize, pb as usize);
            let both = la > 0 && lb > 0 && !pa.is_null() && !pb.is_null();
            if both && a0 < b0.saturating_add(lb) && b0 < a0.saturating_add(la) {
                return Err(CooError::Argument(format!(
                    "{na} ({la} bytes at {a0:#x}) and {nb} ({lb} bytes at {b0:#x}) overlap: \
                     an array a call writes must not share memory with another array of the \
                     call"
                )));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::CStr;

    fn message() -> String {
        // SAFETY: last_message_ptr returns a valid NUL-terminated string.
        unsafe { CStr::from_ptr(last_message_ptr()) }
            .to_string_lossy()
            .into_owned()
    }

    #[test]
    fn a_panic_becomes_internal_panic_with_its_message() {
        let status = guard(|| panic!("boom at entry 3"));
        assert_eq!(status, Status::InternalPanic.code());
        assert!(message().contains("boom at entry 3"), "{}", message());
        let status = guard(|| std::panic::panic_any(42u8));
        assert_eq!(status, Status::InternalPanic.code());
        assert!(message().contains("non-string panic payload"));
        assert_eq!(guard_value(7, || panic!("accessor")), 7);
        assert!(message().contains("accessor"));
    }

    #[test]
    fn success_clears_and_errors_set_the_thread_message() {
        assert_eq!(
            guard(|| Err(CooError::null("coo"))),
            Status::NullPointer.code()
        );
        assert_eq!(message(), "coo is NULL");
        // Another thread has its own, empty, message.
        std::thread::spawn(|| assert_eq!(message(), ""))
            .join()
            .unwrap();
        assert_eq!(guard(|| Ok(())), 0);
        assert_eq!(message(), "");
        // Interior NULs cannot truncate or break the message.
        guard(|| Err(CooError::Internal("a\0b".into())));
        assert!(message().contains("a\\0b"));
    }

    #[test]
    fn empty_and_null_buffers() {
        // SAFETY: len 0 never reads; NULL with len > 0 is refused.
        unsafe {
            assert_eq!(bytes(std::ptr::null(), 0, "values").unwrap(), &[] as &[u8]);
            assert_eq!(
                bytes(std::ptr::null(), 4, "values").unwrap_err().status(),
                Status::NullPointer
            );
            let x = [1u8; 4];
            let too_long = (isize::MAX as usize) + 1;
            assert_eq!(
                bytes(x.as_ptr().cast(), too_long, "values")
                    .unwrap_err()
                    .status(),
                Status::Overflow
            );
        }
    }

    /// Written ranges that share a byte with another written or a read one
    /// are refused, naming both; ranges that only touch, empty ones
    /// anywhere and read ones sharing memory with each other are apart.
    #[test]
    fn written_arrays_must_be_apart() {
        let buf = [0u8; 64];
        let p = buf.as_ptr();
        let at = |k: usize| p.wrapping_add(k);
        assert!(apart(
            &[],
            &[("a", at(0), 16), ("b", at(16), 16), ("c", at(32), 32)]
        )
        .is_ok());
        assert!(apart(&[], &[("a", at(0), 16), ("b", at(8), 0), ("c", at(8), 0)]).is_ok());
        let e = apart(&[], &[("a", at(0), 16), ("b", at(32), 8), ("c", at(15), 4)]).unwrap_err();
        assert!(e.to_string().starts_with("a (16 bytes at"), "{e}");
        assert!(e.to_string().contains("and c (4 bytes at"), "{e}");
        assert!(apart(&[], &[("a", at(40), 8), ("b", at(0), 41)]).is_err());
        assert!(apart(&[], &[("a", at(40), usize::MAX), ("b", at(0), 41)]).is_err());
        // Read against written, never read against read.
        let r = [("r", at(0), 32), ("s", at(8), 8)];
        assert!(apart(&r, &[("w", at(32), 32)]).is_ok());
        let e = apart(&r, &[("w", at(31), 2)]).unwrap_err();
        assert!(e.to_string().starts_with("w (2 bytes at"), "{e}");
        assert!(e.to_string().contains("and r (32 bytes at"), "{e}");
        assert!(apart(&r, &[("w", at(12), 0)]).is_ok());
        assert!(apart(&r, &[]).is_ok());
        let null = std::ptr::null::<u8>();
        assert!(apart(&[("q", null, 64)], &[("w", null, 64)]).is_ok());
        let v = [1u64, 2];
        assert_eq!(span("v", &v), ("v", v.as_ptr().cast(), 16));
    }
}
