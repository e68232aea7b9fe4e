//! Owned storage allocated without aborting: 64-byte-aligned byte buffers,
//! large zeroed work space, and plain vectors sized by a caller's count.

use bytemuck::Zeroable;

use crate::element::size::BUFFER_ALIGN;
use crate::error::CooError;

/// A heap buffer whose first byte is 64-byte aligned, with every byte past
/// its length up to the next 64-byte boundary zero (the format's padding
/// rule). It is carved out of a zeroed `u128` allocation (alignment 16, so
/// the allocator hands out fresh zero pages instead of clearing them: a
/// buffer the library then fills is written once, not twice), started at
/// its first 64-byte boundary.
pub struct AlignedBuf {
    words: Vec<u128>,
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
        // Whole 64-byte blocks, and three words of slack to reach the first
        // boundary.
        let blocks = len.div_ceil(BUFFER_ALIGN);
        let words = blocks
            .checked_mul(BUFFER_ALIGN / 16)
            .and_then(|w| w.checked_add(BUFFER_ALIGN / 16 - 1))
            .ok_or_else(alloc)?;
        // No huge-page advice here (unlike `zeroed_vec`): these buffers are
        // written in order, and asking for huge pages makes the kernel
        // compact memory on the first call of a process (measured: the first
        // assembly 3x slower).
        let words: Vec<u128> = bytemuck::allocation::try_zeroed_vec(words).map_err(|_| alloc())?;
        Ok(AlignedBuf { words, len })
    }

    /// Where the buffer starts in `words`, in bytes (0, 16, 32 or 48):
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
        &bytemuck::cast_slice::<u128, u8>(&self.words)[start..start + self.len]
    }

    /// The bytes, writable.
    pub fn as_bytes_mut(&mut self) -> &mut [u8] {
        let start = self.start();
        &mut bytemuck::cast_slice_mut::<u128, u8>(&mut self.words)[start..start + self.len]
    }

    /// Keep the first `len` bytes (no more than there are); the bytes after
    /// them are zeroed, so padding rules still hold.
    pub fn truncate(&mut self, len: usize) {
        let len = len.min(self.len);
        let start = self.start();
        let end = start + self.len.next_multiple_of(BUFFER_ALIGN);
        bytemuck::cast_slice_mut::<u128, u8>(&mut self.words)[start + len..end].fill(0);
        self.len = len;
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
    let v: Vec<T> = bytemuck::allocation::try_zeroed_vec(n).ok()?;
    #[cfg(target_os = "linux")]
    {
        const HUGE: usize = 2 << 20;
        // The allocation succeeded, so this size fits (and cannot overflow).
        let bytes = n * std::mem::size_of::<T>();
        if bytes >= 2 * HUGE {
            let start = v.as_ptr() as usize;
            let first = start.next_multiple_of(HUGE);
            let len = (start + bytes - first) / HUGE * HUGE;
            // SAFETY: `first..first + len` lies inside the allocation `v`
            // owns (rounded inwards to whole 2 MiB pages). MADV_HUGEPAGE only
            // changes how the kernel backs these pages, never their
            // contents; a failure (THP disabled) leaves them as they are and
            // is ignored.
            unsafe {
                libc::madvise(first as *mut libc::c_void, len, libc::MADV_HUGEPAGE);
            }
        }
    }
    Some(v)
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
