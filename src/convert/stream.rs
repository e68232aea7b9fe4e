//! Filling a large output array that the caller reads later, not now.
//!
//! A plain store first reads the line it writes into cache (to merge the
//! rest of the line), so an output of N bytes costs 2N of memory traffic. A
//! non-temporal store writes whole lines straight to memory. That is what
//! `memcpy` does for large copies, and what an export compared against
//! `memcpy` has to do too. Small outputs keep plain stores: the caller is
//! likely to read them while they are still in cache.

use bytemuck::Pod;

/// Outputs at least this large (bytes) are written by non-temporal stores.
const STREAM_FROM: usize = 4 << 20;

/// Fills `out` by calling `fill(first, block)` on consecutive blocks of it
/// (`block` stands for `out[first..first + block.len()]`), in increasing
/// `first`, so `fill` may have side effects that rely on that order. On
/// x86_64, an output of at least 4 MiB of 4- or 8-byte items is filled 64
/// bytes at a time over its 16-byte-aligned middle and those lines go out
/// by non-temporal stores; everything else is filled in place.
pub(crate) fn fill_streaming<I: Pod>(out: &mut [I], mut fill: impl FnMut(usize, &mut [I])) {
    #[cfg(target_arch = "x86_64")]
    {
        use core::arch::x86_64::{__m128i, _mm_sfence, _mm_stream_si128};
        let size = std::mem::size_of::<I>();
        if std::mem::size_of_val(out) >= STREAM_FROM && (size == 4 || size == 8) {
            let (head, mid, tail) = bytemuck::pod_align_to_mut::<I, __m128i>(out);
            fill(0, head);
            let mut first = head.len();
            let per = 16 / size;
            for lines in mid.chunks_mut(4) {
                let mut buf: [__m128i; 4] = bytemuck::Zeroable::zeroed();
                let buf = &mut buf[..lines.len()];
                fill(first, bytemuck::cast_slice_mut(buf));
                first += buf.len() * per;
                for (m, line) in lines.iter_mut().zip(buf.iter()) {
                    // SAFETY: `m` is an exclusively borrowed, 16-byte-aligned
                    // `__m128i` inside `out` (pod_align_to_mut's middle),
                    // and SSE2, which the instruction needs, is part of
                    // x86_64.
                    unsafe { _mm_stream_si128(m, *line) };
                }
            }
            fill(first, tail);
            // SAFETY: no preconditions (SSE is part of x86_64). The fence
            // orders the streaming stores before every later store, so the
            // thread that joins this one, or the caller, sees the output.
            #[allow(unused_unsafe)]
            unsafe {
                _mm_sfence()
            };
            return;
        }
    }
    fill(0, out);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every length around the threshold and every alignment of the start:
    /// blocks asked for in order and without gaps, each item in its slot.
    #[test]
    fn every_item_lands_in_its_slot_in_order() {
        fn check<I: Pod + PartialEq + std::fmt::Debug>(make: fn(usize) -> I) {
            let n = STREAM_FROM / std::mem::size_of::<I>() + 40;
            let mut backing = vec![I::zeroed(); n + 8];
            for skip in 0..4 {
                for len in [0, 1, 3, 17, n - 40, n - 1, n] {
                    let out = &mut backing[skip..skip + len];
                    let mut next = 0;
                    fill_streaming(out, |first, block| {
                        assert_eq!(first, next, "blocks filled out of order");
                        for (k, v) in block.iter_mut().enumerate() {
                            *v = make(first + k);
                        }
                        next += block.len();
                    });
                    assert_eq!(next, len);
                    for (k, v) in out.iter().enumerate() {
                        assert_eq!(*v, make(k), "slot {k} of {len} (start {skip})");
                    }
                }
            }
        }
        check::<u32>(|k| k as u32 ^ 0x9e37_79b9);
        check::<i64>(|k| -(k as i64) * 3);
        check::<u16>(|k| k as u16);
    }
}
