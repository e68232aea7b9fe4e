//! Owned storage allocated without aborting: 64-byte-aligned byte buffers,
//! large zeroed work space, and plain vectors sized by a caller's count.

use std::mem::MaybeUninit;

use bytemuck::{Pod, Zeroable};

use crate::element::size::BUFFER_ALIGN;
use crate::error::CooError;

/// A heap buffer whose first byte is 64-byte aligned, with every byte past
/// its length up to the next 64-byte boundary zero (the format's padding
/// rule). It is carved out of a vector of words, started at its first
/// 64-byte boundary: a zeroed allocation (the allocator hands out fresh
/// zero pages instead of clearing them: a buffer the library then fills is
/// written once, not twice), or words the library filled itself
/// ([`AlignedBuf::from_words`]).
pub struct AlignedBuf {
    words: Vec<u64>,
    len: usize,
}

impl AlignedBuf {
    /// Copy `src` into fresh aligned memory. Reports `Alloc` instead of
    /// aborting when the memory cannot be had.
    pub fn copy_from(src: &[u8], what: &'static str) -> Result<AlignedBuf, CooError> {
        let mut buf = AlignedBuf::zeroed(src.len(), what)?;
        buf.as_bytes_mut().copy_from_slice(src);
        Ok(buf)
    }

    /// `len` zero bytes in fresh aligned memory.
    pub fn zeroed(len: usize, what: &'static str) -> Result<AlignedBuf, CooError> {
        let alloc = || CooError::Alloc { bytes: len, what };
        let words = AlignedBuf::words_for(len).ok_or_else(alloc)?;
        // No huge-page advice here (unlike `zeroed_vec`): room that may stay
        // partly unwritten is touched only 4 KiB at a time. An assembly's
        // result, written whole as soon as it exists, takes `zeroed_huge`.
        // (Huge pages draw more often on memory the machine has never
        // touched, whose first use is slow on this VM: a sorted assembly's
        // first call took 460-660 ms in the first processes to meet it, 32
        // ms in later ones, against 121-155 ms with 4 KiB pages.)
        let words: Vec<u64> = bytemuck::allocation::try_zeroed_vec(words).map_err(|_| alloc())?;
        Ok(AlignedBuf { words, len })
    }

    /// [`AlignedBuf::zeroed`] in memory for which Linux is asked for
    /// transparent huge pages, as [`zeroed_vec`] does: for a large buffer
    /// written whole, or in many places at once, as soon as it exists (an
    /// assembly's result: its values, combined in the handle's own buffer,
    /// and its indices), whose pages would otherwise be faulted in 4 KiB at
    /// a time.
    pub fn zeroed_huge(len: usize, what: &'static str) -> Result<AlignedBuf, CooError> {
        let alloc = || CooError::Alloc { bytes: len, what };
        let words = AlignedBuf::words_for(len).ok_or_else(alloc)?;
        let words: Vec<u64> = zeroed_vec(words).ok_or_else(alloc)?;
        Ok(AlignedBuf { words, len })
    }

    /// The words a buffer of `len` bytes is carved from: whole 64-byte
    /// blocks, and seven words of slack to reach the first boundary
    /// (`None` when that overflows).
    fn words_for(len: usize) -> Option<usize> {
        len.div_ceil(BUFFER_ALIGN)
            .checked_mul(BUFFER_ALIGN / 8)?
            .checked_add(BUFFER_ALIGN / 8 - 1)
    }

    /// `v`'s words as a buffer without a second allocation: moved up, in
    /// place, to the first 64-byte boundary inside `v`'s memory, and the
    /// bytes after them zeroed up to the next boundary. A vector the
    /// library filled (a parser's entries) so becomes a handle's buffer
    /// without touching fresh pages. Gives `v` back when its spare room is
    /// short of that move (up to 14 words: reserve 16 more than needed).
    pub fn from_words(mut v: Vec<u64>) -> Result<AlignedBuf, Vec<u64>> {
        let len = v.len();
        let at = v.as_ptr() as usize;
        // A vector's words are 8-byte aligned: the gap is whole words.
        let pad = (at.next_multiple_of(BUFFER_ALIGN) - at) / 8;
        let need = len
            .checked_next_multiple_of(BUFFER_ALIGN / 8)
            .and_then(|w| w.checked_add(pad));
        let Some(need) = need.filter(|&w| w <= v.capacity()) else {
            return Err(v);
        };
        // Within the capacity: the words stay where they are, and every
        // word from `len` on is zero.
        v.resize(need, 0);
        v.copy_within(0..len, pad);
        // Words `pad + len..need` were zeroed by the resize and not written
        // by the move (which wrote `pad..pad + len`).
        Ok(AlignedBuf {
            words: v,
            len: len * 8,
        })
    }

    /// Where the buffer starts in `words`, in bytes (a multiple of 8 below 64):
    /// computed, not stored, so that a handle holding two of these stays
    /// as small as it was (each handle is moved a few times on create).
    #[inline(always)]
    fn start(&self) -> usize {
        let at = self.words.as_ptr() as usize;
        at.next_multiple_of(BUFFER_ALIGN) - at
    }

    /// The bytes.
    pub fn as_bytes(&self) -> &[u8] {
        let start = self.start();
        &bytemuck::cast_slice::<u64, u8>(&self.words)[start..start + self.len]
    }

    /// The bytes, writable.
    pub fn as_bytes_mut(&mut self) -> &mut [u8] {
        let start = self.start();
        &mut bytemuck::cast_slice_mut::<u64, u8>(&mut self.words)[start..start + self.len]
    }

    /// Keep the first `len` bytes (no more than there are); the bytes after
    /// them up to the next 64-byte boundary are zeroed, so the padding rule
    /// still holds, and the memory past that boundary goes back to the
    /// allocator (room made for the most entries and never written is never
    /// cleared; pages written past the entries are returned).
    pub fn truncate(&mut self, len: usize) {
        let len = len.min(self.len);
        let start = self.start();
        let end = start + len.next_multiple_of(BUFFER_ALIGN);
        bytemuck::cast_slice_mut::<u64, u8>(&mut self.words)[start + len..end].fill(0);
        self.len = len;
        // The words up to that boundary are kept. A shrink may move them
        // (the allocator's choice): then the buffer's start is moved to the
        // new first boundary, within the words kept (the slack of up to
        // seven words kept in front allows any shift).
        let keep = end / 8 + BUFFER_ALIGN / 8 - 1;
        if keep < self.words.len() {
            self.words.truncate(keep);
            self.words.shrink_to_fit();
            self.realign(start);
        }
    }

    /// The bytes, found at `was` in the words (where the start was before
    /// the words moved), moved to the words' first 64-byte boundary, with
    /// the padding after them zeroed. The words must hold `was` plus the
    /// bytes rounded up to 64, and the new start plus as much.
    fn realign(&mut self, was: usize) {
        let now = self.start();
        if now != was {
            let len = self.len;
            let bytes = bytemuck::cast_slice_mut::<u64, u8>(&mut self.words);
            bytes.copy_within(was..was + len, now);
            bytes[now + len..now + len.next_multiple_of(BUFFER_ALIGN)].fill(0);
        }
    }
}

/// `n` zeroed values for a large buffer of the library's own (duplicate
/// detection's work space, the lookup index), allocated without aborting
/// (`None` when the memory cannot be had). Large buffers ask Linux for
/// transparent huge pages: passes that write to many places at once, and
/// random lookups, then miss the TLB far less. The zeroing comes from the
/// allocator (fresh pages are not cleared twice, and stay untouched until
/// the advice is given); that needs a type of alignment 16 or less: the
/// allocator clears over-aligned memory itself.
pub fn zeroed_vec<T: Zeroable>(n: usize) -> Option<Vec<T>> {
    const { assert!(std::mem::align_of::<T>() <= 16) };
    let mut v: Vec<T> = bytemuck::allocation::try_zeroed_vec(n).ok()?;
    // SAFETY: `v` owns its `n` values' bytes (the allocation succeeded, so
    // the size fits).
    unsafe { advise_huge(v.as_mut_ptr().cast(), n * std::mem::size_of::<T>()) };
    Some(v)
}

/// Ask Linux for transparent huge pages for the whole 2 MiB pages inside
/// `start..start + len`, when it spans at least two (smaller memory gains
/// nothing). Only how the pages are backed changes, never their contents;
/// where the kernel refuses (THP disabled) they stay as they are.
///
/// # Safety
/// `start..start + len` is memory the caller owns.
unsafe fn advise_huge(start: *mut u8, len: usize) {
    #[cfg(target_os = "linux")]
    {
        const HUGE: usize = 2 << 20;
        if len >= 2 * HUGE {
            let at = start as usize;
            let first = at.next_multiple_of(HUGE);
            let huge = (at + len - first) / HUGE * HUGE;
            // SAFETY: `first..first + huge` lies inside the caller's memory
            // (rounded inwards to whole 2 MiB pages). MADV_HUGEPAGE never
            // changes the contents; its error is ignored.
            unsafe {
                libc::madvise(first as *mut libc::c_void, huge, libc::MADV_HUGEPAGE);
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (start, len);
}

/// An [`AlignedBuf`] before its bytes are written: memory that is neither
/// cleared by the library nor by the allocator, for a buffer the library
/// writes whole before it is read (a sorted assembly's result). Where the
/// allocator hands back memory the process freed (glibc in an MPI
/// process), a zeroed allocation would clear it first: a pass of its own
/// over every byte (about a tenth of a sorted assembly's time).
pub struct Unfilled {
    words: Vec<MaybeUninit<u64>>,
    len: usize,
}

impl Unfilled {
    /// Room for `len` bytes, in memory for which huge pages are asked (as
    /// [`AlignedBuf::zeroed_huge`]). Reports `Alloc` instead of aborting.
    pub fn huge(len: usize, what: &'static str) -> Result<Unfilled, CooError> {
        let alloc = || CooError::Alloc { bytes: len, what };
        let n = AlignedBuf::words_for(len).ok_or_else(alloc)?;
        let mut words: Vec<MaybeUninit<u64>> = Vec::new();
        words.try_reserve_exact(n).map_err(|_| alloc())?;
        // SAFETY: the capacity is at least `n` (reserved above), and a
        // MaybeUninit needs no value.
        unsafe { words.set_len(n) };
        // SAFETY: the vector owns its `n` words.
        unsafe { advise_huge(words.as_mut_ptr().cast(), n * 8) };
        // The words outside the buffer's bytes are zeroed now: those before
        // the first 64-byte boundary, and from the 64-byte block that holds
        // the buffer's last byte on (its bytes are written over the zeros
        // later; the padding after them stays zero).
        let at = words.as_ptr() as usize;
        let first = (at.next_multiple_of(BUFFER_ALIGN) - at) / 8;
        let tail = first + len / BUFFER_ALIGN * (BUFFER_ALIGN / 8);
        for w in &mut words[..first] {
            w.write(0);
        }
        for w in &mut words[tail..] {
            w.write(0);
        }
        Ok(Unfilled { words, len })
    }

    /// The buffer as `len / size_of::<T>()` slots of `T` to be written (see
    /// [`fill`]).
    pub fn slots<T: Pod>(&mut self) -> &mut [MaybeUninit<T>] {
        const { assert!(std::mem::align_of::<T>() <= BUFFER_ALIGN) };
        let at = self.words.as_mut_ptr().cast::<u8>();
        let first = (at as usize).next_multiple_of(BUFFER_ALIGN) - at as usize;
        let n = self.len.checked_div(std::mem::size_of::<T>()).unwrap_or(0);
        // SAFETY: bytes first..first + len of the words' memory belong to
        // this buffer (`words_for` made room for them past the first
        // boundary), borrowed mutably with `self`; the start is 64-byte
        // aligned, so aligned for T (asserted above); the n slots of T
        // cover at most `len` bytes; MaybeUninit<T> needs no valid value.
        unsafe { std::slice::from_raw_parts_mut(at.add(first).cast::<MaybeUninit<T>>(), n) }
    }

    /// The buffer, written.
    ///
    /// # Safety
    /// Every byte of the buffer's `len` was written (through
    /// [`Unfilled::slots`]) since [`Unfilled::huge`].
    pub unsafe fn filled(self) -> AlignedBuf {
        let mut words = std::mem::ManuallyDrop::new(self.words);
        let (ptr, n, cap) = (words.as_mut_ptr(), words.len(), words.capacity());
        // SAFETY: the words outside the bytes were zeroed by `huge`, and per
        // this function's contract every byte inside was written since, so
        // all `n` words are initialised; MaybeUninit<u64> has u64's size and
        // alignment, and the vector's allocation is handed over whole
        // (pointer, length, capacity).
        let words = unsafe { Vec::from_raw_parts(ptr.cast::<u64>(), n, cap) };
        AlignedBuf {
            words,
            len: self.len,
        }
    }
}

/// Writes `items` into `slots`, one each, and gives the slots back
/// written. Panics (a bug of the caller's) when there are fewer items than
/// slots: a slot left unwritten must never be read.
pub fn fill<T>(slots: &mut [MaybeUninit<T>], items: impl IntoIterator<Item = T>) -> &mut [T] {
    let mut written = 0usize;
    for (slot, item) in slots.iter_mut().zip(items) {
        slot.write(item);
        written += 1;
    }
    assert_eq!(written, slots.len(), "fewer items than slots");
    // SAFETY: every slot was written just above (counted); MaybeUninit<T>
    // has T's layout.
    unsafe { &mut *(std::ptr::from_mut(slots) as *mut [T]) }
}

/// Have the kernel map `bytes`' pages now, in one call, rather than one
/// fault per page as they are first written: for the library's own fresh
/// memory about to be written whole (a handle's buffers once their length
/// is known). Not for memory that may be mapped already (a caller's
/// arrays): asking again for mapped pages costs about as much as writing
/// them. Contents are unchanged (pages already mapped stay as they are; the
/// rest come zeroed, as a first write would find them). Only whole pages
/// inside `bytes` are asked for. A kernel without the call (before Linux
/// 5.14), or one that cannot map them now, refuses, and the pages are then
/// faulted in as written, as without it.
pub fn populate(bytes: &mut [u8]) {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: sysconf reads a constant of the system; no memory is passed.
        let page = usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).unwrap_or(0);
        let start = bytes.as_mut_ptr() as usize;
        // `None` for a page size of 0 (unknown).
        let Some(first) = start.checked_next_multiple_of(page) else {
            return;
        };
        let len = (start + bytes.len()).saturating_sub(first) / page * page;
        if len > 0 {
            // SAFETY: `first..first + len` lies inside `bytes`, memory this
            // call borrows mutably. MADV_POPULATE_WRITE only maps the pages
            // (as a write would) and never changes their contents; its
            // error is ignored.
            unsafe {
                libc::madvise(first as *mut libc::c_void, len, libc::MADV_POPULATE_WRITE);
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = bytes;
}

/// Work space kept between calls: the scatter buffer of an unsorted
/// check (4-5 or 8-9 bytes per entry) goes back to this pool on return instead of
/// to the allocator, so the next check writes to pages the process already
/// has instead of having the kernel map and clear fresh ones.
///
/// The bound: at most [`KEEP_BUFFERS`] buffers and [`KEEP_BYTES`] bytes in
/// all (a larger buffer is freed on return); [`release_scratch`] frees
/// them (`hurray_release_scratch` in the C API). A buffer is never shared:
/// a call takes it out of the pool and puts it back when done.
static POOL: std::sync::Mutex<Pool> = std::sync::Mutex::new(Pool {
    bufs: Vec::new(),
    max_buffers: KEEP_BUFFERS,
    max_bytes: KEEP_BYTES,
});

/// The most buffers the pool keeps (one per thread of a 4-thread check).
pub const KEEP_BUFFERS: usize = 4;
/// The most bytes the pool keeps: 64 MiB, the work space of a check of
/// about 7M entries. Larger work space comes from fresh huge pages, whose
/// mapping costs little beside the check (about 6 % on 30M entries,
/// against about 15 % saved on 1M; BENCHMARKS.md), so holding hundreds of
/// MiB after the call would buy little.
pub const KEEP_BYTES: usize = 64 << 20;

/// Kept buffers, within a bound (the pool's is `KEEP_*`; tests use
/// smaller ones).
struct Pool {
    bufs: Vec<Vec<u64>>,
    max_buffers: usize,
    max_bytes: usize,
}

impl Pool {
    /// The smallest kept buffer of at least `n` values, taken out.
    fn take(&mut self, n: usize) -> Option<Vec<u64>> {
        let fit = (0..self.bufs.len())
            .filter(|&i| self.bufs[i].len() >= n)
            .min_by_key(|&i| self.bufs[i].len())?;
        Some(self.bufs.swap_remove(fit))
    }

    /// Keep `buf`, then push the smallest buffers out until the bound holds
    /// (the largest is the one a next call of the same size needs). What is
    /// not kept goes to `out`, for the caller to free once the pool's lock
    /// is released (an `munmap` under the lock would stall every other
    /// check). `out` must have room for `max_buffers + 1` buffers, so that
    /// nothing here allocates; the list of kept buffers must have room for
    /// one more, or `buf` goes to `out` too.
    fn give(&mut self, buf: Vec<u64>, out: &mut Vec<Vec<u64>>) {
        debug_assert!(out.capacity() - out.len() > self.max_buffers);
        if buf.len() > self.max_bytes / 8 || self.bufs.try_reserve(1).is_err() {
            out.push(buf);
            return;
        }
        self.bufs.push(buf);
        while self.bufs.len() > self.max_buffers || self.bytes() > self.max_bytes {
            let smallest = (0..self.bufs.len()).min_by_key(|&i| self.bufs[i].len());
            match smallest {
                Some(i) => out.push(self.bufs.swap_remove(i)),
                None => break,
            }
        }
    }

    fn bytes(&self) -> usize {
        self.bufs.iter().map(|b| b.len() * 8).sum()
    }
}

fn pool() -> std::sync::MutexGuard<'static, Pool> {
    // A panic while the lock was held left the list itself whole.
    POOL.lock().unwrap_or_else(|e| e.into_inner())
}

/// `n` `u64`s of work space, of arbitrary contents: a kept buffer that is
/// large enough (the smallest such), or else fresh zeroed memory as
/// [`zeroed_vec`] gives; `None` when the memory cannot be had. Dropping it
/// gives it back to the pool.
pub fn scratch_u64(n: usize) -> Option<Scratch> {
    let kept = pool().take(n);
    let buf = match kept {
        Some(buf) => buf,
        None => zeroed_vec::<u64>(n)?,
    };
    Some(Scratch { buf, len: n })
}

/// Frees every buffer the pool keeps; returns their bytes.
pub fn release_scratch() -> usize {
    let kept = std::mem::take(&mut pool().bufs);
    kept.iter().map(|b| b.len() * 8).sum()
}

/// Work space from [`scratch_u64`]: a slice of `u64`, back to the pool on drop.
pub struct Scratch {
    buf: Vec<u64>,
    len: usize,
}

impl std::ops::Deref for Scratch {
    type Target = [u64];
    fn deref(&self) -> &[u64] {
        &self.buf[..self.len]
    }
}

impl std::ops::DerefMut for Scratch {
    fn deref_mut(&mut self) -> &mut [u64] {
        &mut self.buf[..self.len]
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let buf = std::mem::take(&mut self.buf);
        // Room for what the pool may push out, taken before the lock; without
        // it the buffer is simply freed (never an abort).
        let mut out = Vec::new();
        if out.try_reserve_exact(KEEP_BUFFERS + 1).is_err() {
            return;
        }
        pool().give(buf, &mut out);
        // The guard is gone: buffers that were not kept are freed here,
        // outside the lock.
        drop(out);
    }
}

/// An empty `Vec` with room for `n` elements, or `Alloc` naming `what`
/// (never an abort): for every vector whose length a caller's count sets.
pub fn try_vec<T>(n: usize, what: &'static str) -> Result<Vec<T>, CooError> {
    let mut v = Vec::new();
    v.try_reserve_exact(n).map_err(|_| CooError::Alloc {
        bytes: n.saturating_mul(std::mem::size_of::<T>()),
        what,
    })?;
    Ok(v)
}

/// A copy of `src` in a `Vec`, allocated as `try_vec` does.
pub fn try_copy<T: Clone>(src: &[T], what: &'static str) -> Result<Vec<T>, CooError> {
    let mut v = try_vec(src.len(), what)?;
    v.extend_from_slice(src);
    Ok(v)
}

/// A copy of `src` in a `String`, allocated as `try_vec` does.
pub fn try_string(src: &str, what: &'static str) -> Result<String, CooError> {
    let mut s = String::new();
    s.try_reserve_exact(src.len())
        .map_err(|_| CooError::Alloc {
            bytes: src.len(),
            what,
        })?;
    s.push_str(src);
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Mapping pages ahead changes no byte: neither written pages nor
    /// fresh ones (still zero), whole or cut anywhere, nor the bytes just
    /// outside the range asked for.
    #[test]
    fn populating_pages_keeps_every_byte() {
        let mut b = AlignedBuf::zeroed(5 << 20, "a test buffer").unwrap();
        let bytes = b.as_bytes_mut();
        let pattern = |k: usize| (k * 31 % 251) as u8 + 1;
        // The first 2 MiB written, the rest fresh.
        for (k, x) in bytes[..2 << 20].iter_mut().enumerate() {
            *x = pattern(k);
        }
        for (from, to) in [
            (0, 0),
            (1, 100),
            (3, 3 * 4096 + 5),
            (4095, 3 << 20),
            (0, 5 << 20),
        ] {
            populate(&mut bytes[from..to]);
            for (k, &x) in bytes.iter().enumerate() {
                let want = if k < 2 << 20 { pattern(k) } else { 0 };
                assert_eq!(x, want, "byte {k} after mapping {from}..{to}");
            }
        }
        // Writes after it land as ever.
        bytes[(4 << 20) + 7] = 9;
        assert_eq!(b.as_bytes()[(4 << 20) + 7], 9);
    }

    /// A truncated buffer keeps its first bytes and is zero after them up
    /// to the next 64-byte boundary, whatever was written there before.
    #[test]
    fn a_truncated_buffer_keeps_its_padding_zero() {
        for len in [0usize, 1, 7, 63, 64, 65, 200, 4096] {
            for keep in [0usize, 1, 8, 63, 64, 65, 130, 4096] {
                let mut b = AlignedBuf::zeroed(len, "a test buffer").unwrap();
                b.as_bytes_mut().fill(0xa5);
                b.truncate(keep);
                let kept = keep.min(len);
                assert_eq!(b.as_bytes(), vec![0xa5u8; kept].as_slice());
                assert_eq!(b.as_bytes().as_ptr() as usize % BUFFER_ALIGN, 0);
                // No more than the kept bytes and their padding, from a
                // start at most 56 bytes in, and the slack of 7 words.
                let most = (kept.next_multiple_of(BUFFER_ALIGN) + 56) / 8 + 7;
                assert!(b.words.capacity() <= most, "len {len} keep {keep}");
                let start = b.start();
                let all = bytemuck::cast_slice::<u64, u8>(&b.words);
                let end = start + kept.next_multiple_of(BUFFER_ALIGN);
                assert!(
                    all[start + kept..end].iter().all(|&x| x == 0),
                    "len {len} keep {keep}: padding not zero"
                );
            }
        }
    }

    /// A buffer built unfilled holds exactly what was written through its
    /// slots, from a 64-byte boundary, with every word around it zero (the
    /// padding, and the slack before and after): of bytes, of 16-byte
    /// entries, and in memory large enough for huge pages.
    #[test]
    fn unfilled_buffers_hold_what_was_written_and_zero_around_it() {
        for len in [0usize, 1, 8, 63, 64, 65, 200, 4096, (5 << 20) + 24] {
            // Fill the allocator's free memory with a pattern first, so that
            // memory handed back uncleared would show.
            drop(vec![0x5au8; len + 128]);
            let mut u = Unfilled::huge(len, "a test buffer").unwrap();
            fill(u.slots::<u8>(), (0..len).map(|k| (k % 251) as u8 + 1));
            // SAFETY: every byte was written just above.
            let b = unsafe { u.filled() };
            let want: Vec<u8> = (0..len).map(|k| (k % 251) as u8 + 1).collect();
            assert_eq!(b.as_bytes(), want.as_slice(), "len {len}");
            assert_eq!(b.as_bytes().as_ptr() as usize % BUFFER_ALIGN, 0);
            let (start, all) = (b.start(), bytemuck::cast_slice::<u64, u8>(&b.words));
            assert!(all[..start].iter().all(|&x| x == 0), "len {len}: slack");
            assert!(
                all[start + len..].iter().all(|&x| x == 0),
                "len {len}: padding"
            );
        }
        let n = 1000;
        let mut u = Unfilled::huge(n * 16, "a test buffer").unwrap();
        fill(u.slots::<[u64; 2]>(), (0..n as u64).map(|k| [k, !k]));
        // SAFETY: all n entries (every byte) were written just above.
        let b = unsafe { u.filled() };
        let got: &[[u64; 2]] = bytemuck::cast_slice(b.as_bytes());
        assert!(got.iter().zip(0u64..).all(|(e, k)| *e == [k, !k]));
    }

    /// `fill` refuses to hand back slots it was given too few items for.
    #[test]
    #[should_panic(expected = "fewer items than slots")]
    fn filling_with_too_few_items_panics() {
        let mut slots = [MaybeUninit::<u32>::uninit(); 4];
        fill(&mut slots, [1, 2, 3]);
    }

    /// Bytes left at another offset in the words (as when a shrink moved
    /// them) are moved to the first boundary, padding zeroed.
    #[test]
    fn moved_words_are_realigned() {
        for len in [0usize, 1, 8, 63, 64, 100] {
            for was in (0..64).step_by(8) {
                let mut b = AlignedBuf::zeroed(len + 128, "a test buffer").unwrap();
                let start = b.start();
                let want: Vec<u8> = (0..len).map(|i| i as u8 ^ 0x5a).collect();
                let all = bytemuck::cast_slice_mut::<u64, u8>(&mut b.words);
                all.fill(0xee);
                all[was..was + len].copy_from_slice(&want);
                b.len = len;
                b.realign(was);
                if was == start {
                    // Nothing moves: only the bytes were there.
                    assert_eq!(b.as_bytes(), want.as_slice());
                    continue;
                }
                assert_eq!(b.as_bytes(), want.as_slice(), "len {len} was {was}");
                let all = bytemuck::cast_slice::<u64, u8>(&b.words);
                let end = start + len.next_multiple_of(BUFFER_ALIGN);
                assert!(all[start + len..end].iter().all(|&x| x == 0));
            }
        }
    }

    /// A vector's words become an aligned buffer in place exactly when its
    /// spare room allows the move: the same bytes from a 64-byte boundary,
    /// zeros after them up to the next, in the vector's own memory; else
    /// the vector comes back as it was.
    #[test]
    fn words_become_a_buffer_where_they_lie() {
        for len in 0..40usize {
            for spare in 0..20usize {
                // Vectors at several addresses: each shifts by whole words.
                for shift in 0..8usize {
                    let mut hold: Vec<u64> = Vec::with_capacity(len + spare + shift);
                    hold.resize(shift, 0);
                    let mut v: Vec<u64> = Vec::with_capacity(len + spare);
                    v.extend((0..len as u64).map(|i| i * 0x0101_0101 + 7));
                    let want = v.clone();
                    let (at, cap) = (v.as_ptr() as usize, v.capacity());
                    let pad = (at.next_multiple_of(BUFFER_ALIGN) - at) / 8;
                    let fits = pad + len.next_multiple_of(8) <= cap;
                    match AlignedBuf::from_words(v) {
                        Ok(b) => {
                            assert!(fits, "len {len} spare {spare}: taken without room");
                            let bytes = b.as_bytes();
                            assert_eq!(bytes, bytemuck::cast_slice::<u64, u8>(&want));
                            assert_eq!(bytes.as_ptr() as usize % BUFFER_ALIGN, 0);
                            assert!(bytes.as_ptr() as usize >= at && b.words.capacity() == cap);
                            let start = b.start();
                            let all = bytemuck::cast_slice::<u64, u8>(&b.words);
                            let end = start + (len * 8).next_multiple_of(BUFFER_ALIGN);
                            assert!(all[start + len * 8..end].iter().all(|&x| x == 0));
                        }
                        Err(back) => {
                            assert!(!fits, "len {len} spare {spare}: refused");
                            assert_eq!(back, want);
                        }
                    }
                    drop(hold);
                }
            }
        }
    }

    #[test]
    fn the_pool_hands_out_the_smallest_fit_and_keeps_its_bound() {
        let mut p = Pool {
            bufs: Vec::new(),
            max_buffers: 4,
            max_bytes: 8000,
        };
        // What `give` pushes out, with the room `Scratch::drop` gives it.
        let mut out: Vec<Vec<u64>> = Vec::with_capacity(5);
        let mut give = |p: &mut Pool, buf: Vec<u64>| {
            out.clear();
            p.give(buf, &mut out);
            out.iter().map(|b| b[0]).collect::<Vec<u64>>()
        };
        assert!(p.take(1).is_none());
        assert!(give(&mut p, vec![1; 100]).is_empty());
        assert!(give(&mut p, vec![2; 10]).is_empty());
        assert!(give(&mut p, vec![3; 50]).is_empty());
        // The smallest buffer of at least 20 values is the 50 one.
        assert_eq!(p.take(20).unwrap()[0], 3);
        assert!(p.take(101).is_none());
        assert_eq!(p.take(100).unwrap()[0], 1);
        assert_eq!(p.bytes(), 80);
        // No more than max_buffers: the smallest ones go, handed back to
        // be freed outside the lock.
        let mut pushed_out = Vec::new();
        for k in 0..6 {
            pushed_out.extend(give(&mut p, vec![100 + k as u64; 20 + k]));
        }
        assert_eq!(p.bufs.len(), 4);
        assert!(p.bufs.iter().all(|b| b.len() >= 22));
        assert_eq!(pushed_out, vec![2, 100, 101]);
        // No more than max_bytes: a buffer above it is not kept at all,
        // and one that passes the sum pushes the smallest ones out.
        assert_eq!(give(&mut p, vec![0; 1001]), vec![0]);
        assert_eq!(p.bufs.len(), 4);
        assert!(p.bufs.iter().all(|b| b.len() < 1001));
        // 970 + 22..=25 values is over 8000 bytes until three are out.
        assert_eq!(give(&mut p, vec![9; 970]), vec![102, 103, 104]);
        assert!(p.bytes() <= 8000);
        assert!(p.bufs.len() < 4);
        assert_eq!(p.take(970).unwrap()[0], 9);
    }

    #[test]
    fn scratch_returns_to_the_pool_and_is_released() {
        // Other tests share the process-wide pool, so only what holds
        // whatever they do is asserted: the bound, and a release empties it.
        let n = 1000;
        drop(scratch_u64(n).unwrap());
        assert!(pool().bytes() <= KEEP_BYTES);
        assert!(pool().bufs.len() <= KEEP_BUFFERS);
        release_scratch();
        let mut s = scratch_u64(n).unwrap();
        assert_eq!(s.len(), n);
        s.fill(7);
        drop(s);
    }

    #[test]
    fn copies_are_aligned_and_exact() {
        for len in [0usize, 1, 63, 64, 65, 1000] {
            let src: Vec<u8> = (0..len).map(|i| i as u8).collect();
            let buf = AlignedBuf::copy_from(&src, "test").unwrap();
            assert_eq!(buf.as_bytes(), &src[..]);
            assert_eq!(buf.as_bytes().as_ptr() as usize % 64, 0);
        }
    }
}
