//! CPU hints for the memory-bound loops (lookups, scattered assembly), in
//! one place: ask for a cache line early, and choose between two values
//! without a branch.

/// Ask for the cache line holding `x` (changes nothing that is computed).
#[inline(always)]
pub fn prefetch<T>(x: &T) {
    prefetch_at(x as *const T);
}

/// Ask for the cache line at `p`, which need not be valid: for memory that
/// other threads may be writing, where no reference may be made.
#[inline(always)]
pub fn prefetch_at<T>(p: *const T) {
    // SAFETY: SSE is part of every x86_64 target, and a prefetch never
    // faults, whatever the address; nothing is read into the program.
    #[cfg(target_arch = "x86_64")]
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>(p.cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// `if c { a } else { b }` without a branch, where the answer is
/// unpredictable (found or not): a branch there mispredicts on half the
/// queries and, waiting for the memory the condition comes from, stops the
/// CPU from overlapping lookups. Compilers turn a plain select, and even
/// masking arithmetic, back into a branch when `a` is a load only needed on
/// one side; on x86-64 this is one `cmov`, which they cannot.
/// (`std::hint::select_unpredictable` says this, but needs Rust 1.88.)
#[inline(always)]
pub fn select(c: bool, a: u64, b: u64) -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        let mut r = b;
        // SAFETY: register-only instructions (a test and a conditional
        // move): no memory is read or written, no stack is used, only the
        // flags are clobbered (asm! assumes so unless told otherwise).
        unsafe {
            std::arch::asm!(
                "test {c:e}, {c:e}",
                "cmovnz {r}, {a}",
                c = in(reg) u32::from(c),
                a = in(reg) a,
                r = inout(reg) r,
                options(pure, nomem, nostack),
            );
        }
        r
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        b ^ ((a ^ b) & 0u64.wrapping_sub(u64::from(c)))
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn select_picks_by_the_condition() {
        for (a, b) in [(0u64, u64::MAX), (7, 9), (u64::MAX, 1)] {
            assert_eq!(super::select(true, a, b), a);
            assert_eq!(super::select(false, a, b), b);
        }
    }
}
