//! Duplicate detection for unsorted tensors, without sorting.
//!
//! Each entry's linear key (row-major position, `key_bits` wide) is put
//! through a bijective mix, so equal coordinates give equal mixed keys and
//! different coordinates different ones. The top bits of the mixed key pick
//! one of `2^b` buckets (uniform whatever the data's skew); one stable
//! scatter pass writes, per entry, the rest of the mixed key and the entry
//! number packed into one `u64` (buckets of a fixed capacity, or counted
//! exactly first when one would overflow). Each bucket is then small enough (about
//! 2,048 entries) for a hash set that lives in L1/L2 cache, and is walked in
//! entry order, so the first repeat it meets is that bucket's lowest
//! duplicate entry; equal keys share a bucket, so the lowest over all
//! buckets is the tensor's.
//!
//! When the rest of the mixed key fits 31 bits (at a million entries or
//! more, a shape of up to 2^40 elements), a first pass keeps it alone in a
//! `u32`: half the bytes to scatter and to hash, and a table that holds the
//! sub-keys themselves. That pass says whether any key repeats; only when
//! one does (the tensor is invalid) is the `u64` pass run to name the
//! lowest repeat.
//!
//! Entries of rank 1 to 3 are keyed eight at a time in AVX-512 vectors
//! where the CPU has F and DQ ([`avx512::scatter`]); the scalar scatter
//! over keys ([`scatter_keys`]) is its oracle. From [`LINES_FROM`] entries
//! that kernel writes each bucket a whole 64-byte line at a time with
//! streaming stores ([`Lines`]); with lines a scatter can take up to
//! `2^MAX_LINE_BUCKET_BITS` buckets, so the 4-byte pass also serves keys
//! of up to 46 bits at 17M entries and more ([`Plan::narrowed`]).
//!
//! Transient memory: about 9 bytes per entry (4.5 in the narrow pass), 8
//! when counted, on Linux in transparent huge pages (for the scatter's many
//! write streams); 64 bytes per bucket of line buffers (at most 2 MiB a
//! thread) when the scatter uses them; the bucket counts and one bucket's
//! table (a few hundred KiB at most). The scatter buffer goes back
//! to the library's scratch pool on return (`crate::aligned::scratch_u64`:
//! the next check reuses its pages; bounded, and freed by
//! `hurray_release_scratch`); the rest is freed.

/// Average entries per bucket the bucket count aims at.
const BUCKET_TARGET: usize = 2048;
/// At most `2^MAX_BUCKET_BITS` buckets (the scatter pass writes one stream
/// per bucket; more streams than this thrash the TLB).
const MAX_BUCKET_BITS: u32 = 12;

use crate::coo::key::{bits_below, LinearKey, Mixer};

/// Why the detection could not run.
#[derive(Debug, PartialEq, Eq)]
pub enum Unavailable {
    /// The mixed key and the entry number do not fit one `u64`; the caller
    /// needs another method.
    TooWide,
    /// Allocation of this many bytes failed.
    Alloc(usize),
}

/// Over the entries of `idx` (rank `shape.len()`, which is `R` unless `R`
/// is 0), keyed by their linear position (`strides`): the lowest entry `j`
/// whose key equals that of an earlier entry `i`:
/// `Some((j, i))` with the earliest such `i`; and whether every entry was
/// inside the shape (the answer is only meaningful then: keys of valid
/// entries are below `2^key_bits`).
///
/// When the sub-keys fit [`NARROW_BITS`] (with more buckets if need be,
/// [`Plan::narrowed`]), the buckets first hold the
/// sub-keys alone (4 bytes an entry instead of 8): that pass says whether
/// any key repeats, not where. Only when one does (an invalid tensor) are
/// the buckets built again with entry numbers, to name the lowest repeat.
pub fn first_duplicate<const R: usize>(
    idx: &[u64],
    shape: &[u64],
    strides: &[u64],
    key_bits: u32,
    threads: usize,
) -> Result<(Option<(usize, usize)>, bool), Unavailable> {
    let key = LinearKey::<R> { shape, strides };
    let r = key.rank();
    assert!(shape.len() == r && strides.len() == r);
    let count = idx.len() / r;
    let keys_of = |a: usize, b: usize| {
        let key = &key;
        move || idx[a * r..b * r].chunks_exact(r).map(|e| key.key(e))
    };
    let flat_of = |a: usize, b: usize| {
        (1..=3).contains(&r).then(|| {
            let (mut sh, mut st) = ([0; 3], [0; 3]);
            sh[..r].copy_from_slice(shape);
            st[..r].copy_from_slice(strides);
            Flat {
                idx: &idx[a * r..b * r],
                rank: r,
                shape: sh,
                strides: st,
            }
        })
    };
    if count < 2 {
        return Ok((None, keys_of(0, count)().all(|(_, valid)| valid)));
    }
    let plan = Plan::new(count, key_bits)?;
    let threads = crate::threads::count(threads, count, crate::coo::validate::scan::MIN_PER_THREAD);
    let wider;
    let narrow = match plan.sub_bits <= NARROW_BITS {
        true => Some(&plan),
        false => {
            wider = plan.narrowed();
            wider.as_ref()
        }
    };
    if let Some(narrow) = narrow {
        let (found, all_valid) = detect::<u32, _, _, _>(narrow, threads, &keys_of, &flat_of)?;
        if found.is_none() {
            return Ok((None, all_valid));
        }
    }
    detect::<u64, _, _, _>(&plan, threads, &keys_of, &flat_of)
}

/// Entries of rank 1 to 3 as they lie (`rank` coordinates each), with the
/// shape and its row-major strides (the first `rank` of each array): what
/// the vector scatter reads instead of keys one by one.
#[derive(Clone, Copy)]
struct Flat<'a> {
    idx: &'a [u64],
    rank: usize,
    shape: [u64; 3],
    strides: [u64; 3],
}

/// The scatter's line buffers: one 64-byte line per bucket, where a
/// bucket's entries wait until a whole line of them goes to the bucket;
/// bucket regions start `lead` entries into the buffer plus a multiple of
/// a line.
struct Lines<'a, W> {
    buf: &'a mut [W],
    lead: usize,
}

impl<W: Packing> Lines<'_, W> {
    /// Entries of `W` in a 64-byte line.
    const PER: usize = 64 / size_of::<W>();

    /// Where in its line the entry at `at` of the buffer goes.
    #[inline(always)]
    fn in_line(&self, at: usize) -> usize {
        (at - self.lead) & (Self::PER - 1)
    }

    /// The entries still waiting in the lines, to the ends of their buckets
    /// (`end`), after the streaming stores are ordered before what follows.
    fn flush(&mut self, packed: &mut [W], end: &[usize]) {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: a store fence has no precondition (SSE, on every x86_64).
        unsafe {
            std::arch::x86_64::_mm_sfence()
        };
        let per = Self::PER;
        for (b, &at) in end.iter().enumerate() {
            let k = self.in_line(at);
            packed[at - k..at].copy_from_slice(&self.buf[b * per..b * per + k]);
        }
    }
}

/// [`first_duplicate`] with the entries packed as `W`: over `threads`
/// ranges of entries, each scattered into buckets of its own, then the
/// buckets split between the threads.
fn detect<'a, W, I, G, F>(
    plan: &Plan,
    threads: usize,
    keys_of: &F,
    flat_of: &(dyn Fn(usize, usize) -> Option<Flat<'a>> + Sync),
) -> Result<(Option<(usize, usize)>, bool), Unavailable>
where
    W: Packing,
    I: Iterator<Item = (u64, bool)>,
    G: Fn() -> I,
    F: Fn(usize, usize) -> G + Sync,
{
    let count = plan.count;
    if threads == 1 {
        let (parts, all_valid) =
            partition::<W, _>(plan, count, 0, keys_of(0, count), flat_of(0, count))?;
        return Ok((first_repeat::<W>(plan, parts)?, all_valid));
    }
    // Threads scatter contiguous ranges of entries into their own buckets
    // (each range in entry order), then split the buckets between them; a
    // bucket's segments, read in range order, are in entry order, so each
    // bucket's first repeat is still its lowest duplicate. The 4-byte pass
    // walks the segments where they are (no copy into one run: about 5 %
    // of a two-thread check at 1M entries); the 8-byte pass copies them.
    let cuts: Vec<usize> = (0..=threads).map(|t| count * t / threads).collect();
    let scattered = crate::threads::each(threads, |t| {
        let (a, b) = (cuts[t], cuts[t + 1]);
        partition::<W, _>(plan, b - a, a, keys_of(a, b), flat_of(a, b))
    });
    let mut parts: Vec<Partition> = Vec::with_capacity(threads);
    let mut all_valid = true;
    for p in scattered {
        let (p, valid) = p?;
        parts.push(p);
        all_valid &= valid;
    }
    // Thread t takes buckets t * per.. of every partition: a partition's
    // buckets lie in bucket order, so each is split where thread t's
    // buckets begin.
    let per = plan.buckets.div_ceil(threads);
    let first = |t: usize| (t * per).min(plan.buckets);
    let mut jobs: Vec<(std::ops::Range<usize>, Vec<Segments<'_, W>>)> = (0..threads)
        .map(|t| (first(t)..first(t + 1), Vec::with_capacity(parts.len())))
        .collect();
    for p in parts.iter_mut() {
        let mut rest = bytemuck::cast_slice_mut::<u64, W>(&mut p.packed);
        let mut base = 0;
        for (t, job) in jobs.iter_mut().enumerate() {
            // Where the next thread's buckets begin (the end for the last).
            let cut = if t + 1 == threads || first(t + 1) == plan.buckets {
                base + rest.len()
            } else {
                p.start[first(t + 1)]
            };
            let (mine, after) = std::mem::take(&mut rest).split_at_mut(cut - base);
            job.1.push(Segments {
                data: mine,
                base,
                start: &p.start,
                end: &p.end,
            });
            (rest, base) = (after, cut);
        }
    }
    let found = crate::threads::run(jobs, |_, (range, mut segs)| {
        first_repeat_merged::<W>(plan, &mut segs, range)
    });
    let mut best: Option<(usize, usize)> = None;
    for f in found {
        best = lowest(best, f?);
    }
    Ok((best, all_valid))
}

/// Of two answers, the one with the lower repeating entry.
fn lowest(a: Option<(usize, usize)>, b: Option<(usize, usize)>) -> Option<(usize, usize)> {
    match (a, b) {
        (Some((aj, _)), Some((bj, _))) if bj < aj => b,
        (None, _) => b,
        _ => a,
    }
}

/// `first_repeat` over buckets `range` of several partitions (of
/// consecutive entry ranges, `segs` in range order): each bucket's
/// segments walked as one bucket ([`Packing::first_repeat_segments`]).
fn first_repeat_merged<W: Packing>(
    plan: &Plan,
    segs: &mut [Segments<'_, W>],
    range: std::ops::Range<usize>,
) -> Result<Option<(usize, usize)>, Unavailable> {
    let largest = range
        .clone()
        .map(|b| segs.iter_mut().map(|s| s.of(b).len()).sum::<usize>())
        .max()
        .unwrap_or(0);
    let table_limit = table_limit(plan);
    let mut table = table_for(largest, table_limit)?;
    let mut run: Vec<W> = Vec::new();
    run.try_reserve_exact(largest)
        .map_err(|_| Unavailable::Alloc(largest.saturating_mul(size_of::<W>())))?;
    let mut kept: Vec<usize> = Vec::new();
    kept.try_reserve_exact(segs.len())
        .map_err(|_| Unavailable::Alloc(segs.len().saturating_mul(size_of::<usize>())))?;
    let mut best: Option<(usize, usize)> = None;
    for b in range {
        let found =
            W::first_repeat_segments(segs, b, &mut run, &mut kept, &mut table, plan, table_limit);
        best = lowest(best, found);
    }
    Ok(best)
}

/// The hash table for buckets of up to `largest` entries (those above
/// `table_limit` are sorted instead): four slots per entry, zeroed.
fn table_for(largest: usize, table_limit: usize) -> Result<Vec<u32>, Unavailable> {
    let len = (largest.min(table_limit) * 4).max(16).next_power_of_two();
    let mut table: Vec<u32> = Vec::new();
    table
        .try_reserve_exact(len)
        .map_err(|_| Unavailable::Alloc(len.saturating_mul(4)))?;
    table.resize(len, 0);
    Ok(table)
}

/// The largest bucket walked through the hash table (larger ones are
/// sorted in place).
fn table_limit(plan: &Plan) -> usize {
    (plan.count / plan.buckets)
        .saturating_mul(4)
        .max(1 << 14)
        .min(POS_MASK as usize - 1)
}

/// How the mixed keys are cut: the top `bucket_bits` choose the bucket, the
/// next `sub_bits` are kept in the bucket (with the entry number,
/// `entry_bits`, in one `u64`, or alone in a `u32`: [`Packing`]).
#[derive(Clone, Copy)]
struct Plan {
    count: usize,
    entry_bits: u32,
    sub_bits: u32,
    sub_mask: u64,
    buckets: usize,
    mixer: Mixer,
    /// Whether the vector scatter goes through line buffers ([`Lines`]).
    lines: bool,
}

impl Plan {
    fn new(count: usize, key_bits: u32) -> Result<Plan, Unavailable> {
        let key_bits = key_bits.max(1);
        let entry_bits = bits_below(count as u128);
        let bucket_bits = bits_below((count / BUCKET_TARGET) as u128)
            .min(MAX_BUCKET_BITS)
            .min(key_bits);
        let sub_bits = key_bits - bucket_bits;
        if sub_bits + entry_bits > 63 {
            return Err(Unavailable::TooWide);
        }
        Ok(Plan {
            count,
            entry_bits,
            sub_bits,
            sub_mask: (1u64 << sub_bits) - 1,
            buckets: 1usize << bucket_bits,
            mixer: Mixer::new(key_bits),
            lines: count >= LINES_FROM,
        })
    }

    /// This plan for the 4-byte pass when its sub-keys do not fit it:
    /// more buckets (up to `2^MAX_LINE_BUCKET_BITS`), so that the sub-key
    /// fits [`NARROW_BITS`], scattered through line buffers by the vector
    /// scatter (the scalar one stores into that many buckets directly, and
    /// was still faster than the 8-byte pass: BENCHMARKS.md). `None` when
    /// the sub-keys fit already, when more buckets would be needed, or when
    /// the buckets would hold fewer than [`MIN_LINE_BUCKET`] entries on
    /// average.
    fn narrowed(&self) -> Option<Plan> {
        let key_bits = self.sub_bits + self.buckets.trailing_zeros();
        let bucket_bits = key_bits.checked_sub(NARROW_BITS)?;
        if self.sub_bits <= NARROW_BITS
            || bucket_bits > MAX_LINE_BUCKET_BITS
            || self.count >> bucket_bits < MIN_LINE_BUCKET
        {
            return None;
        }
        Some(Plan {
            sub_bits: NARROW_BITS,
            sub_mask: (1u64 << NARROW_BITS) - 1,
            buckets: 1 << bucket_bits,
            // More streams than `MAX_BUCKET_BITS` allows go through lines.
            lines: self.lines || bucket_bits > MAX_BUCKET_BITS,
            ..*self
        })
    }

    /// The bucket of linear key `k`, and the rest of its mixed key.
    #[inline(always)]
    fn place(&self, k: u64) -> (usize, u64) {
        let h = self.mixer.mix(k);
        ((h >> self.sub_bits) as usize, h & self.sub_mask)
    }
}

/// At most `2^MAX_LINE_BUCKET_BITS` buckets in a scatter through line
/// buffers (64 bytes each: 2 MiB of them).
const MAX_LINE_BUCKET_BITS: u32 = 15;
/// From this many entries the vector scatter goes through line buffers:
/// its buckets (32 MiB and more) no longer stay in cache, where writing
/// whole lines without reading them first pays; below, plain stores into
/// cached lines are faster (measured in BENCHMARKS.md).
const LINES_FROM: usize = 1 << 23;
/// The fewest entries a bucket of [`Plan::narrowed`] holds on average.
const MIN_LINE_BUCKET: usize = 512;

/// Sub-keys of at most this many bits are first checked packed alone in a
/// `u32` (one more than the sub-key marks a used table slot, so 31).
const NARROW_BITS: u32 = 31;

/// What a bucket holds per entry, and how a bucket is checked.
trait Packing: bytemuck::Pod + Send + Sync {
    /// Entry `i`, whose mixed key's rest is `sub`.
    fn pack(plan: &Plan, sub: u64, i: usize) -> Self;
    /// The bucket's first repeat `(j, i)` (see [`first_repeat_hashed`]):
    /// `table` holds four slots per entry of buckets up to `limit`
    /// entries, larger ones are sorted in place; `b` is the bucket number.
    fn first_repeat(
        bucket: &mut [Self],
        table: &mut [u32],
        b: u32,
        plan: &Plan,
        limit: usize,
    ) -> Option<(usize, usize)>;
    /// [`Packing::first_repeat`] of bucket `b` held as one segment in each
    /// of `segs` (in entry order): copied into `run` and walked as one
    /// bucket. `kept` is room the narrow packing's override uses.
    fn first_repeat_segments(
        segs: &mut [Segments<'_, Self>],
        b: usize,
        run: &mut Vec<Self>,
        _kept: &mut Vec<usize>,
        table: &mut [u32],
        plan: &Plan,
        limit: usize,
    ) -> Option<(usize, usize)> {
        first_repeat_copied(segs, b, run, table, plan, limit)
    }
}

/// [`Packing::first_repeat_segments`] by copying: the segments into `run`,
/// in order, then one bucket's walk.
fn first_repeat_copied<W: Packing>(
    segs: &mut [Segments<'_, W>],
    b: usize,
    run: &mut Vec<W>,
    table: &mut [u32],
    plan: &Plan,
    limit: usize,
) -> Option<(usize, usize)> {
    run.clear();
    for s in segs.iter_mut() {
        run.extend_from_slice(s.of(b));
    }
    W::first_repeat(run, table, b as u32, plan, limit)
}

/// Bucket numbers `first..` of one thread's scattered range of entries, as
/// the second phase of a multi-thread check holds them: bucket `b` is
/// `data[start[b] - base..end[b] - base]`.
struct Segments<'a, W> {
    data: &'a mut [W],
    base: usize,
    start: &'a [usize],
    end: &'a [usize],
}

impl<W> Segments<'_, W> {
    fn of(&mut self, b: usize) -> &mut [W] {
        &mut self.data[self.start[b] - self.base..self.end[b] - self.base]
    }
}

/// The sub-key above the entry number: finds where the first repeat is.
impl Packing for u64 {
    #[inline(always)]
    fn pack(plan: &Plan, sub: u64, i: usize) -> u64 {
        (sub << plan.entry_bits) | i as u64
    }

    fn first_repeat(
        bucket: &mut [u64],
        table: &mut [u32],
        b: u32,
        plan: &Plan,
        limit: usize,
    ) -> Option<(usize, usize)> {
        match bucket.len() <= limit {
            // Buckets are at most 2^12, so the bucket number is the epoch.
            true => first_repeat_hashed(bucket, table, b, plan.entry_bits),
            false => first_repeat_sorted(bucket, plan.entry_bits),
        }
    }
}

/// The sub-key alone (at most [`NARROW_BITS`]): finds whether a key
/// repeats, and then answers `Some((0, 0))`, not where.
impl Packing for u32 {
    #[inline(always)]
    fn pack(_: &Plan, sub: u64, _: usize) -> u32 {
        sub as u32
    }

    fn first_repeat(
        bucket: &mut [u32],
        table: &mut [u32],
        _: u32,
        _: &Plan,
        limit: usize,
    ) -> Option<(usize, usize)> {
        let repeats = match bucket.len() <= limit {
            true => repeats_hashed(bucket, table),
            false => {
                bucket.sort_unstable();
                bucket.windows(2).any(|w| w[0] == w[1])
            }
        };
        repeats.then_some((0, 0))
    }

    /// Without the copy: the home round over each segment in turn (each
    /// keeps its own collisions at its front), then the probing round over
    /// what each kept; equal sub-keys share a home whichever segments they
    /// are in. Buckets over `limit` are copied and sorted.
    fn first_repeat_segments(
        segs: &mut [Segments<'_, u32>],
        b: usize,
        run: &mut Vec<u32>,
        kept: &mut Vec<usize>,
        table: &mut [u32],
        plan: &Plan,
        limit: usize,
    ) -> Option<(usize, usize)> {
        let total: usize = segs.iter_mut().map(|s| s.of(b).len()).sum();
        if total > limit {
            return first_repeat_copied(segs, b, run, table, plan, limit);
        }
        let slots = narrow_slots(table, total);
        kept.clear();
        for s in segs.iter_mut() {
            kept.push(home_round(s.of(b), slots));
        }
        let repeats = segs
            .iter_mut()
            .zip(kept.iter())
            .any(|(s, &k)| s.of(b)[..k].iter().any(|&sub| insert_narrow(slots, sub)));
        repeats.then_some((0, 0))
    }
}

/// The entries, packed and grouped by bucket: bucket `b` is
/// `packed[start[b]..end[b]]` (in units of the packing), in entry order.
struct Partition {
    packed: crate::aligned::Scratch,
    start: Vec<usize>,
    end: Vec<usize>,
}

fn zeroed<T: bytemuck::Zeroable>(n: usize) -> Result<Vec<T>, Unavailable> {
    crate::aligned::zeroed_vec::<T>(n).ok_or(Unavailable::Alloc(n.saturating_mul(8)))
}

/// Room for `n` values of `W` (contents arbitrary: only what the scatter
/// wrote is read), kept between calls by [`crate::aligned::scratch_u64`].
fn scratch<W>(n: usize) -> Result<crate::aligned::Scratch, Unavailable> {
    let bytes = n.saturating_mul(size_of::<W>());
    crate::aligned::scratch_u64(bytes.div_ceil(8)).ok_or(Unavailable::Alloc(bytes))
}

/// Scatter every entry, in order, to the end of its bucket, checking bounds
/// on the way (whether every entry is inside the shape). One pass, into
/// buckets of a fixed capacity a few standard deviations above the average
/// (the mixed keys spread uniformly); only when a bucket overflows (many
/// repeats of one key, crafted keys) are the buckets counted first,
/// exactly, and the pass redone.
fn partition<W: Packing, I: Iterator<Item = (u64, bool)>>(
    plan: &Plan,
    n: usize,
    offset: usize,
    keys: impl Fn() -> I,
    flat: Option<Flat<'_>>,
) -> Result<(Partition, bool), Unavailable> {
    let buckets = plan.buckets;
    #[cfg(target_arch = "x86_64")]
    let vector = flat.filter(|_| avx512::available());
    #[cfg(not(target_arch = "x86_64"))]
    let vector: Option<Flat<'_>> = flat.filter(|_| false);
    let scatter = |packed: &mut [u64],
                   end: &mut [usize],
                   limit: &[usize],
                   lines: Option<&mut Lines<'_, W>>| {
        let packed = bytemuck::cast_slice_mut::<u64, W>(packed);
        #[cfg(target_arch = "x86_64")]
        if let Some(e) = vector {
            // SAFETY: the CPU has AVX-512F and DQ (`available`).
            return unsafe { avx512::scatter(plan, &e, offset, packed, end, limit, lines) };
        }
        let _ = lines;
        scatter_keys(plan, keys(), offset, packed, end, limit)
    };
    // Line buffers (64 bytes a bucket) for the vector scatter when the
    // plan asks for them: bucket regions of whole lines from an aligned
    // first entry.
    let per = Lines::<W>::PER;
    let use_lines = plan.lines && vector.is_some();
    let avg = n.div_ceil(buckets);
    let mut cap = avg + 4 * (avg as f64).sqrt() as usize + 16;
    if use_lines {
        cap = cap.next_multiple_of(per);
    }
    let total = buckets
        .checked_mul(cap)
        .and_then(|t| t.checked_add(per))
        .ok_or(Unavailable::Alloc(usize::MAX))?;
    let mut packed = scratch::<W>(total)?;
    let lead = match use_lines {
        true => {
            let at = bytemuck::cast_slice::<u64, W>(&packed).as_ptr();
            at.align_offset(64).min(per - 1)
        }
        false => 0,
    };
    let mut start = zeroed::<usize>(buckets)?;
    let mut end = zeroed::<usize>(buckets)?;
    let mut limit = zeroed::<usize>(buckets)?;
    for b in 0..buckets {
        let at = lead + b * cap;
        (start[b], end[b], limit[b]) = (at, at, at + cap);
    }
    let mut line_buf = match use_lines {
        true => Some(zeroed::<u64>(buckets * 8)?),
        false => None,
    };
    let mut lines = line_buf.as_mut().map(|buf| Lines {
        buf: bytemuck::cast_slice_mut::<u64, W>(buf),
        lead,
    });
    if let Some(all_valid) = scatter(&mut packed, &mut end, &limit, lines.as_mut()) {
        return Ok((Partition { packed, start, end }, all_valid));
    }
    drop(packed);
    end.fill(0);
    for (k, _) in keys() {
        end[plan.place(k).0] += 1;
    }
    let mut sum = 0;
    for b in 0..buckets {
        (start[b], limit[b]) = (sum, sum + end[b]);
        sum += end[b];
        end[b] = start[b];
    }
    let mut packed = scratch::<W>(n)?;
    // Exact limits: only entries changed under us (against the contract)
    // could make a bucket overflow; then the answer is for the entries placed.
    let all_valid = scatter(&mut packed, &mut end, &limit, None).unwrap_or(false);
    Ok((Partition { packed, start, end }, all_valid))
}

/// Entries `offset..` (their keys and whether each is inside the shape, in
/// order) each to the end of its bucket (`end`): `Some(all entries inside
/// the shape)`, or `None` as soon as a bucket reaches its `limit`. The
/// oracle of `avx512::scatter`.
fn scatter_keys<W: Packing>(
    plan: &Plan,
    keys: impl Iterator<Item = (u64, bool)>,
    offset: usize,
    packed: &mut [W],
    end: &mut [usize],
    limit: &[usize],
) -> Option<bool> {
    let mut all_valid = true;
    for (i, (k, valid)) in keys.enumerate() {
        all_valid &= valid;
        let (b, sub) = plan.place(k);
        if end[b] == limit[b] {
            return None;
        }
        packed[end[b]] = W::pack(plan, sub, offset + i);
        end[b] += 1;
    }
    Some(all_valid)
}

#[cfg(target_arch = "x86_64")]
mod avx512 {
    use super::{scatter_keys, Flat, Lines, Packing, Plan};
    use crate::coo::key::{linear, Mixer};
    use std::arch::x86_64::*;

    /// Whether the CPU has AVX-512F and DQ (the 64-bit multiply); off with
    /// the sorted check's kernels (`HURRAY_COO_NO_AVX512`).
    #[inline]
    pub(super) fn available() -> bool {
        crate::coo::validate::scan::avx512::available()
            && std::arch::is_x86_feature_detected!("avx512dq")
    }

    /// [`scatter_keys`] over entries of rank 1 to 3 as they lie: the
    /// bounds, the linear keys and their mix eight entries at a time in
    /// vectors, then the eight scattered in order (each block's keys are
    /// computed before the block before it is scattered, so the key work
    /// of one overlaps the stores of the other); the last `len % 8`
    /// through `scatter_keys`. The same buckets, in the same order, and the
    /// same answer.
    ///
    /// # Safety
    /// The CPU has AVX-512F and AVX-512DQ ([`available`]).
    pub(super) unsafe fn scatter<W: Packing>(
        plan: &Plan,
        e: &Flat<'_>,
        offset: usize,
        packed: &mut [W],
        end: &mut [usize],
        limit: &[usize],
        lines: Option<&mut Lines<'_, W>>,
    ) -> Option<bool> {
        // SAFETY: the caller's, passed on.
        unsafe {
            // The kernel without lines is its own instance: no test of
            // `lines` per block (measured: 10 % at 1M when it was one).
            match (e.rank, lines) {
                (1, None) => scatter_rank::<W, 1, false>(plan, e, offset, packed, end, limit, None),
                (2, None) => scatter_rank::<W, 2, false>(plan, e, offset, packed, end, limit, None),
                (_, None) => scatter_rank::<W, 3, false>(plan, e, offset, packed, end, limit, None),
                (1, l) => scatter_rank::<W, 1, true>(plan, e, offset, packed, end, limit, l),
                (2, l) => scatter_rank::<W, 2, true>(plan, e, offset, packed, end, limit, l),
                (_, l) => scatter_rank::<W, 3, true>(plan, e, offset, packed, end, limit, l),
            }
        }
    }

    /// [`scatter`] at rank `R` (`e.rank`).
    #[target_feature(enable = "avx512f,avx512dq")]
    unsafe fn scatter_rank<W: Packing, const R: usize, const LINES: bool>(
        plan: &Plan,
        e: &Flat<'_>,
        offset: usize,
        packed: &mut [W],
        end: &mut [usize],
        limit: &[usize],
        mut lines: Option<&mut Lines<'_, W>>,
    ) -> Option<bool> {
        let n = e.idx.len() / R;
        let (mask, shift) = plan.mixer.mask_and_shift();
        let (m1, m2) = Mixer::MULTIPLIERS;
        let splat = |v: u64| _mm512_set1_epi64(v as i64);
        let (mask, m1, m2, sub_mask) = (splat(mask), splat(m1), splat(m2), splat(plan.sub_mask));
        let shift = _mm_cvtsi64_si128(shift as i64);
        let sub_bits = _mm_cvtsi64_si128(plan.sub_bits as i64);
        // Coordinate d of entry j is value R * j + d of a block of eight
        // entries (8 R values, R vectors): its lane in the first two
        // vectors (mod 16), and in the third (mod 8) when it lies there.
        let mut lanes = [[0i64; 8]; 3];
        let mut third = [0u8; 3];
        for (d, l) in lanes.iter_mut().enumerate() {
            for (j, x) in l.iter_mut().enumerate() {
                let at = R * j + d;
                *x = at as i64;
                third[d] |= u8::from(at >= 16) << j;
            }
        }
        // Per dimension: the lanes, which come from the third vector, the
        // extent and the stride.
        let dims: [(__m512i, __mmask8, __m512i, __m512i); 3] = std::array::from_fn(|d| {
            let lanes = _mm512_loadu_epi64(lanes[d].as_ptr());
            (lanes, third[d], splat(e.shape[d]), splat(e.strides[d]))
        });
        let mut inside: __mmask8 = 0xFF;
        let (mut buckets, mut subs) = ([0u64; 8], [0u64; 8]);
        let whole = n / 8 * 8;
        // The block whose buckets and sub-keys wait in `buckets` and
        // `subs`: each block's keys are computed before the block before
        // it is scattered, so that the two overlap.
        let mut waiting = None;
        for (g, block) in e.idx[..whole * R].chunks_exact(8 * R).enumerate() {
            // SAFETY: `block` holds 8 R values: R unaligned 64-byte loads.
            let v: [__m512i; 3] = unsafe {
                let at = |k: usize| _mm512_loadu_si512(block.as_ptr().add(8 * k.min(R - 1)).cast());
                [at(0), at(1), at(2)]
            };
            let mut key = _mm512_setzero_si512();
            for &(lanes, third, extent, stride) in &dims[..R] {
                let c = match R {
                    1 => v[0],
                    2 => _mm512_permutex2var_epi64(v[0], lanes, v[1]),
                    _ => _mm512_mask_permutexvar_epi64(
                        _mm512_permutex2var_epi64(v[0], lanes, v[1]),
                        third,
                        lanes,
                        v[2],
                    ),
                };
                inside &= _mm512_cmplt_epu64_mask(c, extent);
                key = _mm512_add_epi64(key, _mm512_mullo_epi64(c, stride));
            }
            let mut h = _mm512_and_si512(_mm512_mullo_epi64(key, m1), mask);
            h = _mm512_xor_si512(h, _mm512_srl_epi64(h, shift));
            h = _mm512_and_si512(_mm512_mullo_epi64(h, m2), mask);
            if let Some(w) = waiting {
                let l = lines.as_deref_mut().filter(|_| LINES);
                // SAFETY: this function enables AVX-512F.
                unsafe { place(plan, &buckets, &subs, offset + w * 8, packed, end, limit, l)? };
            }
            // SAFETY: two 64-byte stores into arrays of eight u64.
            unsafe {
                _mm512_storeu_si512(buckets.as_mut_ptr().cast(), _mm512_srl_epi64(h, sub_bits));
                _mm512_storeu_si512(subs.as_mut_ptr().cast(), _mm512_and_si512(h, sub_mask));
            }
            waiting = Some(g);
        }
        if let Some(w) = waiting {
            let l = lines.as_deref_mut().filter(|_| LINES);
            // SAFETY: this function enables AVX-512F.
            unsafe { place(plan, &buckets, &subs, offset + w * 8, packed, end, limit, l)? };
        }
        if let Some(l) = lines {
            l.flush(packed, end);
        }
        let tail = e.idx[whole * R..].chunks_exact(R).map(|c| {
            let inside = c.iter().zip(&e.shape).all(|(x, s)| x < s);
            (linear(c, &e.strides[..R]), inside)
        });
        let rest = scatter_keys(plan, tail, offset + whole, packed, end, limit)?;
        Some(rest && inside == 0xFF)
    }

    /// Eight entries, `first` on, each to the end of its bucket (`buckets`,
    /// with the rest of its key in `subs`); `None` when a bucket is full.
    /// With `lines`, each entry goes to its bucket's 64-byte line there,
    /// and a full line goes to `packed` in one streaming store (no read of
    /// the line it replaces, and no cache line taken for it) where it is
    /// aligned; the buckets are the same.
    ///
    /// # Safety
    /// The CPU has AVX-512F (inlined into [`scatter_rank`], which enables it).
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    unsafe fn place<W: Packing>(
        plan: &Plan,
        buckets: &[u64; 8],
        subs: &[u64; 8],
        first: usize,
        packed: &mut [W],
        end: &mut [usize],
        limit: &[usize],
        lines: Option<&mut Lines<'_, W>>,
    ) -> Option<()> {
        let Some(lines) = lines else {
            for j in 0..8 {
                let b = buckets[j] as usize;
                if end[b] == limit[b] {
                    return None;
                }
                packed[end[b]] = W::pack(plan, subs[j], first + j);
                end[b] += 1;
            }
            return Some(());
        };
        let per = Lines::<W>::PER;
        for j in 0..8 {
            let b = buckets[j] as usize;
            let at = end[b];
            if at == limit[b] {
                return None;
            }
            let k = lines.in_line(at);
            lines.buf[b * per + k] = W::pack(plan, subs[j], first + j);
            end[b] = at + 1;
            if k == per - 1 {
                let line = &lines.buf[b * per..(b + 1) * per];
                let dst = &mut packed[at + 1 - per..at + 1];
                if (dst.as_ptr() as usize).is_multiple_of(64) {
                    // SAFETY: `line` and `dst` are 64 bytes each; `dst` is
                    // 64-byte aligned (checked), as the streaming store needs.
                    unsafe {
                        let v = _mm512_loadu_si512(line.as_ptr().cast());
                        _mm512_stream_si512(dst.as_mut_ptr().cast(), v);
                    }
                } else {
                    dst.copy_from_slice(line);
                }
            }
        }
        Some(())
    }
}

/// The lowest duplicate over all buckets (equal keys share a bucket): each
/// bucket through a small hash set, or, when it is far above the average
/// (adversarial keys, or many repeats of one key), sorted in place, so the
/// table stays small.
fn first_repeat<W: Packing>(
    plan: &Plan,
    mut parts: Partition,
) -> Result<Option<(usize, usize)>, Unavailable> {
    let buckets = plan.buckets;
    let largest = (0..buckets)
        .map(|b| parts.end[b] - parts.start[b])
        .max()
        .unwrap_or(0);
    let table_limit = table_limit(plan);
    let mut table = table_for(largest, table_limit)?;
    let packed = bytemuck::cast_slice_mut::<u64, W>(&mut parts.packed);
    let mut best: Option<(usize, usize)> = None;
    for b in 0..buckets {
        let bucket = &mut packed[parts.start[b]..parts.end[b]];
        let found = W::first_repeat(bucket, &mut table, b as u32, plan, table_limit);
        best = lowest(best, found);
    }
    Ok(best)
}

/// Table slots: `epoch << POS_BITS | (position in the bucket + 1)`; a slot
/// of another epoch, or with position field 0, is empty. So the table is
/// cleared once, not once per bucket.
const POS_BITS: u32 = 20;
const POS_MASK: u32 = (1 << POS_BITS) - 1;
const _: () = assert!(
    MAX_BUCKET_BITS + POS_BITS <= 32,
    "bucket numbers are epochs"
);

/// The first slot of a hash table of `len` (a power of two) slots for the
/// already mixed sub-key `sub`: one multiply spreads its low bits.
#[inline(always)]
fn home(sub: u64, len: usize) -> usize {
    (sub.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - len.trailing_zeros())) as usize
}

/// In one bucket (values `sub << entry_bits | entry`, entries ascending,
/// fewer than `2^POS_BITS`), the first entry whose sub-key was seen before,
/// with that earlier entry. `table` holds at least four slots per value;
/// `epoch` (below `2^(32 - POS_BITS)`) differs from every earlier bucket's.
fn first_repeat_hashed(
    bucket: &[u64],
    table: &mut [u32],
    epoch: u32,
    entry_bits: u32,
) -> Option<(usize, usize)> {
    let entry_mask = (1u64 << entry_bits) - 1;
    // At most a quarter full, so most inserts find their first slot empty
    // (fewer mispredicted probes); 4-byte slots keep it in L1 with the bucket.
    let len = (bucket.len() * 4).max(16).next_power_of_two();
    let slots = &mut table[..len];
    let mask = len - 1;
    for (pos, &v) in bucket.iter().enumerate() {
        let sub = v >> entry_bits;
        let mut s = home(sub, len);
        loop {
            let t = slots[s];
            if t >> POS_BITS != epoch || t & POS_MASK == 0 {
                slots[s] = epoch << POS_BITS | (pos as u32 + 1);
                break;
            }
            let other = bucket[(t & POS_MASK) as usize - 1];
            if other >> entry_bits == sub {
                // Entries come in ascending order: this is the bucket's first.
                return Some(((v & entry_mask) as usize, (other & entry_mask) as usize));
            }
            s = (s + 1) & mask;
        }
    }
    None
}

/// Whether two of `bucket`'s sub-keys (each below `2^NARROW_BITS`) are
/// equal: a hash set of `sub + 1` (0 is an empty slot) in `table` (at least
/// four slots per value), cleared first.
///
/// Two rounds, so that the common case does not branch: each sub-key whose
/// home slot is empty is put there, and the others (about one in eight)
/// are kept, in place at the front of `bucket`; then those go in with
/// probing ([`insert_narrow`]). Equal sub-keys share a home, so the second
/// of a pair always reaches the second round and meets the first there.
fn repeats_hashed(bucket: &mut [u32], table: &mut [u32]) -> bool {
    let slots = narrow_slots(table, bucket.len());
    let kept = home_round(bucket, slots);
    bucket[..kept].iter().any(|&sub| insert_narrow(slots, sub))
}

/// The cleared slots of a narrow hash set for `n` sub-keys: four per
/// sub-key (at least 16), a power of two, the front of `table`.
fn narrow_slots(table: &mut [u32], n: usize) -> &mut [u32] {
    let slots = &mut table[..(n * 4).max(16).next_power_of_two()];
    slots.fill(0);
    slots
}

/// The first round of [`repeats_hashed`] over `bucket`: each sub-key whose
/// home slot is empty goes there; the others are kept at the front of
/// `bucket`, and their count returned.
fn home_round(bucket: &mut [u32], slots: &mut [u32]) -> usize {
    let bits = slots.len().trailing_zeros();
    let mut kept = 0;
    for i in 0..bucket.len() {
        let sub = bucket[i];
        let s = home_narrow(sub, bits);
        let t = slots[s];
        // `sub + 1` into an empty slot, an occupied one unchanged.
        slots[s] = t + ((sub + 1) & u32::from(t == 0).wrapping_neg());
        bucket[kept] = sub;
        kept += usize::from(t != 0);
    }
    kept
}

/// The first slot for sub-key `sub` in a narrow table of `2^bits` slots
/// (`4 <= bits <= 32`): the top bits of one 32-bit multiply, which spreads
/// the already mixed sub-key's low bits.
#[inline(always)]
fn home_narrow(sub: u32, bits: u32) -> usize {
    (sub.wrapping_mul(NARROW_MULTIPLIER) >> (32 - bits)) as usize
}

/// The multiplier of [`home_narrow`].
const NARROW_MULTIPLIER: u32 = 0x9E37_79B1;

/// Puts `sub + 1` into the hash set `slots` (a power of two long, linear
/// probing from [`home_narrow`]); true when it was there already.
#[inline(always)]
fn insert_narrow(slots: &mut [u32], sub: u32) -> bool {
    let mask = slots.len() - 1;
    let mut s = home_narrow(sub, slots.len().trailing_zeros());
    loop {
        let t = slots[s];
        if t == 0 {
            slots[s] = sub + 1;
            return false;
        }
        if t == sub + 1 {
            return true;
        }
        s = (s + 1) & mask;
    }
}

/// `first_repeat_hashed` without a table: sorts the bucket in place.
fn first_repeat_sorted(bucket: &mut [u64], entry_bits: u32) -> Option<(usize, usize)> {
    let entry_mask = (1u64 << entry_bits) - 1;
    bucket.sort_unstable(); // by sub-key, then entry
    first_pair(
        bucket,
        |a, b| a >> entry_bits == b >> entry_bits,
        |v| (v & entry_mask) as usize,
    )
}

/// In `sorted` (grouped by `same`), the lowest second member of any group,
/// with the group's first member: `(second, first)` as extracted by `id`.
pub fn first_pair<T>(
    sorted: &[T],
    same: impl Fn(&T, &T) -> bool,
    id: impl Fn(&T) -> usize,
) -> Option<(usize, usize)> {
    let mut best: Option<(usize, usize)> = None;
    let mut k = 0;
    while k + 1 < sorted.len() {
        if same(&sorted[k], &sorted[k + 1]) {
            let (first, second) = (id(&sorted[k]), id(&sorted[k + 1]));
            if best.is_none_or(|(b, _)| second < b) {
                best = Some((second, first));
            }
            // Skip the rest of this group.
            let start = k;
            while k + 1 < sorted.len() && same(&sorted[start], &sorted[k + 1]) {
                k += 1;
            }
        }
        k += 1;
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn rng(seed: &mut u64) -> u64 {
        *seed ^= *seed << 13;
        *seed ^= *seed >> 7;
        *seed ^= *seed << 17;
        *seed
    }

    fn oracle(keys: &[u64]) -> Option<(usize, usize)> {
        let mut seen = HashMap::new();
        for (j, &k) in keys.iter().enumerate() {
            if let Some(&i) = seen.get(&k) {
                return Some((j, i));
            }
            seen.insert(k, j);
        }
        None
    }

    #[test]
    fn oversized_buckets_are_sorted_with_the_same_answer() {
        let mut s = 77u64;
        for case in 0..300 {
            let n = 1 + (rng(&mut s) % 3000) as usize;
            let entry_bits = bits_below(n as u128);
            // Many repeats, or sub-keys of up to 30 bits (few or none) with
            // one repeat planted late, behind many probed inserts.
            let range = [n as u64 / 2 + 1, 1 << 30, 1 << 30][case % 3];
            let mut subs: Vec<u64> = (0..n).map(|_| rng(&mut s) % range).collect();
            if case % 3 == 2 && n > 2 {
                let (j, i) = (
                    n - 1 - (rng(&mut s) as usize % (n / 2)),
                    rng(&mut s) as usize % (n / 2),
                );
                subs[j] = subs[i];
            }
            let bucket: Vec<u64> = subs
                .iter()
                .enumerate()
                .map(|(i, &k)| (k << entry_bits) | i as u64)
                .collect();
            let mut table = vec![0u32; (4 * n).max(16).next_power_of_two()];
            let hashed = first_repeat_hashed(&bucket, &mut table, 0, entry_bits);
            // A second epoch over the same table (stale slots are empty).
            assert_eq!(
                first_repeat_hashed(&bucket, &mut table, 1, entry_bits),
                hashed
            );
            assert_eq!(hashed, oracle(&subs));
            assert_eq!(first_repeat_sorted(&mut bucket.clone(), entry_bits), hashed);
        }
    }

    #[test]
    fn narrow_buckets_say_whether_a_sub_key_repeats() {
        // Sub-keys alone (the first pass when they fit 31 bits): hashed,
        // and sorted when above the limit, against the oracle; the table
        // is reused between buckets with whatever the last one left in it.
        let mut s = 91u64;
        let plan = Plan::new(1 << 20, 40).unwrap();
        let mut table = vec![0u32; 4 * 4096];
        // What one bucket leaves in the table is not another's.
        assert!(!repeats_hashed(&mut [7, 8, 9], &mut table));
        assert!(!repeats_hashed(&mut [8], &mut table));
        for case in 0..600 {
            let n = 1 + (rng(&mut s) % 4000) as usize;
            let range = match case % 3 {
                0 => 1u64 << NARROW_BITS,
                1 => (n as u64) * 40,
                _ => (n as u64 / 2).max(1),
            };
            let mut bucket: Vec<u32> = (0..n).map(|_| (rng(&mut s) % range) as u32).collect();
            if case % 4 == 0 && n > 1 {
                bucket[n - 1] = bucket[(rng(&mut s) as usize) % (n - 1)];
            }
            let keys: Vec<u64> = bucket.iter().map(|&k| k as u64).collect();
            let want = oracle(&keys).map(|_| (0, 0));
            let limit = if case % 5 == 0 { n / 2 } else { n };
            let got = u32::first_repeat(&mut bucket.clone(), &mut table, 0, &plan, limit);
            assert_eq!(got, want, "case {case} n {n} limit {limit}");
        }
        // The largest sub-key a narrow bucket holds, twice.
        let top = (1u32 << NARROW_BITS) - 1;
        assert!(repeats_hashed(&mut [top, 0, top], &mut table));
        assert!(!repeats_hashed(&mut [top, 0, top - 1], &mut table));
    }

    #[test]
    fn sub_keys_sharing_a_home_meet_in_the_second_round() {
        // Three different sub-keys with one home slot in a 16-slot table:
        // the first takes the home, the others wait for the probing round,
        // where a repeat of any of them is found and distinct ones are not.
        let mut table = vec![0u32; 64];
        let home = |k: u32| home_narrow(k, 4);
        let mut same = (1..).filter(|&k| home(k) == home(0));
        let (a, b, c) = (0, same.next().unwrap(), same.next().unwrap());
        assert!(!repeats_hashed(&mut [a, b, c], &mut table));
        assert!(repeats_hashed(&mut [a, b, b], &mut table));
        assert!(repeats_hashed(&mut [a, b, a], &mut table));
        assert!(repeats_hashed(&mut [b, c, a, c], &mut table));
        assert!(!repeats_hashed(&mut [b, c, a, 7], &mut table));
    }

    #[test]
    fn narrow_and_wide_passes_give_the_same_first_duplicate() {
        // Keys of 40 bits over 300,000 entries: sub-keys of 33 bits, so the
        // wide pass alone; of 30 bits, so the narrow one first. Both name
        // the oracle's lowest repeat, on 1 and 2 threads.
        let mut s = 5u64;
        for bits in [40u32, 30] {
            let n = 300_000usize;
            let plan = Plan::new(n, bits).unwrap();
            assert_eq!(plan.sub_bits <= NARROW_BITS, bits == 30);
            let mut keys: Vec<u64> = (0..n as u64)
                .map(|k| (k * 2_654_435_761) % (1 << bits))
                .collect();
            for case in 0..4 {
                if case > 0 {
                    let (a, b) = (rng(&mut s) as usize % n, rng(&mut s) as usize % n);
                    keys[a] = keys[b];
                }
                // The same keys as rank-2 entries (the vector scatter's rank).
                let pairs: Vec<u64> = keys.iter().flat_map(|&k| [k >> 15, k & 0x7FFF]).collect();
                let shape = [1 << (bits - 15), 1 << 15];
                for threads in [1, 2] {
                    let got = first_duplicate::<1>(&keys, &[1 << bits], &[1], bits, threads);
                    assert_eq!(got, Ok((oracle(&keys), true)), "bits {bits} case {case}");
                    let got = first_duplicate::<2>(&pairs, &shape, &[1 << 15, 1], bits, threads);
                    assert_eq!(
                        got,
                        Ok((oracle(&keys), true)),
                        "rank 2, bits {bits} case {case}"
                    );
                }
            }
        }
    }

    /// Both scatters of `e` into buckets of `cap` slots: the scalar one
    /// over the keys, and the vector one where the CPU has it; equal
    /// answers, and when they succeed, equal buckets.
    fn scatter_both<W: Packing + PartialEq + std::fmt::Debug>(
        plan: &Plan,
        e: Flat<'_>,
        cap: usize,
    ) {
        let r = e.rank;
        let key = LinearKey::<0> {
            shape: &e.shape[..r],
            strides: &e.strides[..r],
        };
        let setup = || {
            let end: Vec<usize> = (0..plan.buckets).map(|b| b * cap).collect();
            let limit: Vec<usize> = (0..plan.buckets).map(|b| (b + 1) * cap).collect();
            (vec![W::zeroed(); plan.buckets * cap], end, limit)
        };
        let (mut want, mut want_end, limit) = setup();
        let keys = e.idx.chunks_exact(r).map(|c| key.key(c));
        let expected = scatter_keys(plan, keys, 5, &mut want, &mut want_end, &limit);
        #[cfg(target_arch = "x86_64")]
        if avx512::available() {
            let (mut got, mut got_end, limit) = setup();
            // SAFETY: `available` said the CPU has AVX-512F and DQ.
            let answer =
                unsafe { avx512::scatter(plan, &e, 5, &mut got, &mut got_end, &limit, None) };
            assert_eq!(answer, expected, "rank {r}, {} entries", e.idx.len() / r);
            if answer.is_some() {
                assert_eq!(got_end, want_end);
                assert_eq!(got, want);
            }
            // Through line buffers: regions of whole lines from `lead`, an
            // aligned first entry (streaming stores) or one off it (copies).
            let per = Lines::<W>::PER;
            let cap = cap.next_multiple_of(per);
            for skew in [0, 1] {
                let len = plan.buckets * cap + per;
                let mut got = vec![W::zeroed(); len];
                let lead = (got.as_ptr().align_offset(64) + skew) % per;
                let end: Vec<usize> = (0..plan.buckets).map(|b| lead + b * cap).collect();
                let limit: Vec<usize> = end.iter().map(|&at| at + cap).collect();
                let (mut want, mut want_end) = (vec![W::zeroed(); len], end.clone());
                let keys = e.idx.chunks_exact(r).map(|c| key.key(c));
                let expected = scatter_keys(plan, keys, 5, &mut want, &mut want_end, &limit);
                let mut buf = vec![W::zeroed(); plan.buckets * per];
                let mut lines = Lines {
                    buf: &mut buf,
                    lead,
                };
                let mut got_end = end.clone();
                // SAFETY: `available` said the CPU has AVX-512F and DQ.
                let answer = unsafe {
                    avx512::scatter(
                        plan,
                        &e,
                        5,
                        &mut got,
                        &mut got_end,
                        &limit,
                        Some(&mut lines),
                    )
                };
                assert_eq!(answer, expected, "lines, skew {skew}, rank {r}");
                if answer.is_some() {
                    assert_eq!(got_end, want_end);
                    assert_eq!(got, want, "lines, skew {skew}, rank {r}");
                }
            }
        }
    }

    #[test]
    fn a_narrow_plan_takes_the_buckets_its_sub_keys_need() {
        let narrowed = |count, bits| Plan::new(count, bits).unwrap().narrowed();
        // 1M entries of 40-bit keys fit the 4-byte pass as they are.
        assert!(narrowed(1 << 20, 40).is_none());
        // Of 42 bits: 2^11 buckets (plain stores); of 46 bits at 30M:
        // 2^15, through lines; of 47 bits: more than lines allow.
        let p = narrowed(1 << 20, 42).unwrap();
        assert_eq!(
            (p.buckets, p.sub_bits, p.lines),
            (1 << 11, NARROW_BITS, false)
        );
        let p = narrowed(30_000_000, 46).unwrap();
        assert_eq!(
            (p.buckets, p.sub_bits, p.lines),
            (1 << 15, NARROW_BITS, true)
        );
        assert!(narrowed(30_000_000, 47).is_none());
        // Buckets of fewer than MIN_LINE_BUCKET entries on average: no.
        assert!(narrowed(1 << 20, 44).is_none());
    }

    #[test]
    fn buckets_through_lines_give_the_same_answers() {
        // `detect` with and without line buffers, narrow and wide, on 1 and
        // 2 threads, against the oracle: no repeat, and a repeat planted.
        let mut s = 17u64;
        let n = 200_000usize;
        let bits = 36u32;
        let mut keys: Vec<u64> = (0..n as u64)
            .map(|k| (k * 2_654_435_761) % (1 << bits))
            .collect();
        let shape = [1u64 << bits];
        for case in 0..3 {
            if case > 0 {
                let (a, b) = (rng(&mut s) as usize % n, rng(&mut s) as usize % n);
                keys[a.max(b)] = keys[a.min(b)];
            }
            let key = LinearKey::<1> {
                shape: &shape,
                strides: &[1],
            };
            let keys_of = |a: usize, b: usize| {
                let (key, keys) = (&key, &keys);
                move || keys[a..b].chunks_exact(1).map(|e| key.key(e))
            };
            let flat_of = |a: usize, b: usize| {
                Some(Flat {
                    idx: &keys[a..b],
                    rank: 1,
                    shape: [1 << bits, 0, 0],
                    strides: [1, 0, 0],
                })
            };
            let want = oracle(&keys);
            for lines in [false, true] {
                let mut plan = Plan::new(n, bits).unwrap();
                plan.lines = lines;
                for threads in [1, 2] {
                    let wide = detect::<u64, _, _, _>(&plan, threads, &keys_of, &flat_of);
                    assert_eq!(wide, Ok((want, true)), "case {case} lines {lines}");
                    let narrow = detect::<u32, _, _, _>(&plan, threads, &keys_of, &flat_of);
                    assert_eq!(
                        narrow,
                        Ok((want.map(|_| (0, 0)), true)),
                        "case {case} lines {lines}"
                    );
                }
            }
        }
    }

    #[test]
    fn the_vector_scatter_matches_the_key_scatter() {
        // Ranks 1 to 3, lengths around multiples of eight, a coordinate
        // outside the shape in any dimension (in the vector part and in the
        // tail), both packings, and buckets small enough to overflow. Runs
        // the scalar scatter alone on a CPU without AVX-512DQ.
        let mut s = 2024u64;
        for case in 0..180 {
            let r = 1 + case % 3;
            let n = [0, 1, 7, 8, 9, 15, 16, 17, 1000, 4099][case % 10] + case / 10 * 3;
            let (mut shape, mut strides) = ([0u64; 3], [0u64; 3]);
            for x in shape.iter_mut().take(r) {
                *x = 1 + rng(&mut s) % [5_000_000, 3000, 200][r - 1];
            }
            let mut stride = 1;
            for d in (0..r).rev() {
                strides[d] = stride;
                stride *= shape[d];
            }
            let mut idx: Vec<u64> = (0..n * r).map(|k| rng(&mut s) % shape[k % r]).collect();
            if case % 4 < 2 && n > 0 {
                let at = rng(&mut s) as usize % (r * n);
                idx[at] = shape[at % r] + rng(&mut s) % 3;
            }
            let e = Flat {
                idx: &idx,
                rank: r,
                shape,
                strides,
            };
            let plan = Plan::new(n.max(1), bits_below(stride as u128)).unwrap();
            let avg = n.div_ceil(plan.buckets);
            for cap in [avg + 4 * (avg as f64).sqrt() as usize + 16, avg / 2 + 1] {
                scatter_both::<u64>(&plan, e, cap);
                if plan.sub_bits <= NARROW_BITS {
                    scatter_both::<u32>(&plan, e, cap);
                }
            }
        }
    }

    #[test]
    fn a_key_repeated_past_a_bucket_capacity_is_found() {
        // 40,000 distinct keys, then one of them 6,000 more times: its
        // bucket overflows the fixed capacity (so the buckets are counted;
        // not observable here), and the answer is the oracle's.
        let mut s = 3u64;
        let mut keys: Vec<u64> = (0..40_000u64).map(|k| k * 7 + 1).collect();
        for _ in 0..6000 {
            keys.push(7 * 123 + 1);
        }
        for i in (1..keys.len()).rev() {
            keys.swap(i, (rng(&mut s) as usize) % (i + 1));
        }
        let got = first_duplicate::<1>(&keys, &[1 << 20], &[1], 20, 1).unwrap();
        assert_eq!(got, (oracle(&keys), true));
    }

    #[test]
    fn one_key_repeated_in_one_oversized_bucket_is_found() {
        // Every entry in one bucket, far above the table limit (the in-place
        // sort's case); the answer is checked, the path is not observable.
        let keys = vec![5u64; 100_000];
        let got = first_duplicate::<1>(&keys, &[6], &[1], 3, 1).unwrap();
        assert_eq!(got, (Some((1, 0)), true));
    }

    #[test]
    fn matches_a_hash_map_oracle() {
        let mut s = 12345u64;
        for case in 0..400 {
            let bits = 1 + (rng(&mut s) % 64) as u32;
            let n = match case % 4 {
                0 => (rng(&mut s) % 40) as usize,
                1 => (rng(&mut s) % 5000) as usize,
                2 => 20_000 + (rng(&mut s) % 20_000) as usize,
                _ => (rng(&mut s) % 300) as usize,
            };
            let mask = if bits == 64 {
                u64::MAX
            } else {
                (1 << bits) - 1
            };
            // Narrow key ranges make natural repeats; sometimes inject one.
            // Some cases large enough for the threaded path.
            let n = if case % 11 == 0 { n * 64 + 140_000 } else { n };
            let range = if case % 3 == 0 {
                mask
            } else {
                mask.min(4 * n as u64)
            };
            let mut keys: Vec<u64> = (0..n).map(|_| rng(&mut s) % range.max(1)).collect();
            if n > 2 && case % 5 == 0 {
                let (a, b) = (rng(&mut s) as usize % n, rng(&mut s) as usize % n);
                keys[a] = keys[b];
            }
            // An invalid entry is reported whatever else happens.
            let poison = (case % 7 == 0 && n > 0).then(|| rng(&mut s) as usize % n);
            let limit = poison.map_or(u64::MAX, |p| keys[p]);
            // The shape excludes the poisoned key (and any key above it).
            let got = first_duplicate::<1>(&keys, &[limit], &[1], bits, 1 + case % 3);
            match got {
                Ok((v, valid)) => {
                    let want_valid = keys.iter().all(|&k| k < limit) || limit == u64::MAX;
                    assert_eq!(valid, want_valid, "case {case}");
                    if valid {
                        assert_eq!(v, oracle(&keys), "case {case} bits {bits} n {n}");
                    }
                }
                Err(Unavailable::TooWide) => {
                    assert!(bits + bits_below(n as u128) > 63, "case {case}")
                }
                Err(e) => panic!("{e:?}"),
            }
        }
    }
}
