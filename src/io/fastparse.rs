//! The fast path of the text readers: entry lines ("c1 c2 ... cN v...")
//! parsed straight from bytes, in chunks on several threads.
//!
//! It accepts only input it is sure of and says nothing about the rest:
//! on anything unusual (a malformed token, a coordinate out of range, a
//! count that does not add up) it gives up, and the reader runs its
//! line-by-line path, which is the reference and names the line, the
//! column and the token. So every message comes from one place, and the
//! fast path is tested by comparing it with the reference.

use super::text::Entries;
use crate::error::CooError;

/// How the values of an entry line are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Values {
    /// No value (Matrix Market pattern).
    None,
    /// One real number, stored as float64.
    Real,
    /// One integer, stored as int64.
    Integer,
    /// Two real numbers, stored as two float64.
    Complex,
}

impl Values {
    pub(crate) fn count(self) -> usize {
        match self {
            Values::None => 0,
            Values::Real | Values::Integer => 1,
            Values::Complex => 2,
        }
    }
}

/// What to parse.
pub(crate) struct Spec<'a> {
    /// Coordinates per entry.
    pub rank: usize,
    /// Extents to check coordinates against (1..=extent), or `None` to
    /// infer them as the largest coordinate of each mode.
    pub extents: Option<&'a [u64]>,
    pub values: Values,
    /// Comment character.
    pub comment: u8,
}

/// Entries as parsed (`rank` coordinates and `values.count()` words per
/// entry), and the largest coordinate (1-based) of each mode.
pub(crate) struct Parsed {
    pub entries: Entries,
    pub max: Vec<u64>,
}

/// Why the fast path stopped: either it cannot tell (the reference path
/// decides), or memory ran out (an error of its own).
pub(crate) enum Stop {
    Unsure,
    Failed(CooError),
}

fn alloc_err(bytes: usize) -> Stop {
    Stop::Failed(CooError::Alloc {
        bytes,
        what: "the parsed entries",
    })
}

fn is_space(b: u8) -> bool {
    b == b' ' || b == b'\t'
}

/// An unsigned decimal of at most 19 digits at `text[*at..]`, advancing
/// `at` (19 digits never overflow a u64, so no check per digit; a longer
/// number, leading zeros included, is left to the reference path).
#[inline(always)]
fn uint(text: &[u8], at: &mut usize) -> Option<u64> {
    // Up to 7 digits followed by another byte, as most coordinates are:
    // eight bytes at once, without a branch per digit.
    if let Some(w) = text.get(*at..*at + 8) {
        let w = u64::from_le_bytes([w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]]);
        let len = digits_swar(w);
        if (1..8).contains(&len) {
            *at += len;
            return Some(swar_value(w, len));
        }
        if len == 0 {
            return None;
        }
    }
    uint_loop(text, at)
}

/// The number of leading ASCII digits of the 8 bytes `w` (the first in
/// its lowest byte). Subtracting '0' from every byte borrows only out of
/// a byte below '0', into the bytes after it; every byte up to the first
/// that is not a digit is exact, and that one has its top bit set, either
/// at once (below '0', or from 0xB0 up) or once 0x76 is added (':' to
/// 0xAF), which carries out of no digit.
#[inline(always)]
fn digits_swar(w: u64) -> usize {
    const ONES: u64 = 0x0101_0101_0101_0101;
    let d = w.wrapping_sub(ONES * u64::from(b'0'));
    let not_digit = (d | d.wrapping_add(ONES * 0x76)) & (ONES * 0x80);
    (not_digit.trailing_zeros() / 8) as usize
}

/// The value of the first `len` (1 to 7) bytes of `w`, all digits: moved
/// to the top (zeros, leading, below them), then combined pairwise.
#[inline(always)]
fn swar_value(w: u64, len: usize) -> u64 {
    const ONES: u64 = 0x0101_0101_0101_0101;
    let d = (w.wrapping_sub(ONES * u64::from(b'0'))) << (8 * (8 - len));
    let d = ((d & 0x0F0F_0F0F_0F0F_0F0F).wrapping_mul(10 * 256 + 1)) >> 8;
    let d = ((d & 0x00FF_00FF_00FF_00FF).wrapping_mul(100 * 65536 + 1)) >> 16;
    ((d & 0x0000_FFFF_0000_FFFF).wrapping_mul(10000 * (1 << 32) + 1)) >> 32
}

/// [`uint`] a byte at a time: near the end of the text, and for 8 digits
/// or more.
#[inline(always)]
fn uint_loop(text: &[u8], at: &mut usize) -> Option<u64> {
    let start = *at;
    let mut v: u64 = 0;
    while let Some(&b) = text.get(*at) {
        let d = b.wrapping_sub(b'0');
        if d > 9 {
            break;
        }
        v = v.wrapping_mul(10).wrapping_add(u64::from(d));
        *at += 1;
    }
    let digits = *at - start;
    (digits > 0 && digits <= 19).then_some(v)
}

/// The token at `text[*at..]` (up to whitespace or the line's end). Its
/// ends are ASCII bytes or the ends of `text`, so they are character
/// boundaries of valid UTF-8 and `get` never fails on checked text.
#[inline(always)]
fn token<'t>(text: &'t str, at: &mut usize) -> Option<&'t str> {
    let start = *at;
    let b = text.as_bytes();
    while let Some(&c) = b.get(*at) {
        if c <= b' ' {
            break;
        }
        *at += 1;
    }
    text.get(start..*at)
}

fn skip_spaces(text: &[u8], at: &mut usize) {
    while text.get(*at).is_some_and(|&b| is_space(b)) {
        *at += 1;
    }
}

/// Parse the entry lines of `text` (which starts at a line start).
fn parse_chunk(chunk: &[u8], spec: &Spec<'_>, expect: usize) -> Result<Parsed, Stop> {
    let mut entries = Entries::default();
    let max = parse_chunk_into(chunk, spec, expect, &mut entries)?;
    Ok(Parsed { entries, max })
}

/// Parse `chunk`'s entry lines onto the end of `p`; the largest coordinate
/// (1-based) of each mode in the chunk.
fn parse_chunk_into(
    chunk: &[u8],
    spec: &Spec<'_>,
    expect: usize,
    p: &mut Entries,
) -> Result<Vec<u64>, Stop> {
    // Checked here, on the chunk's own thread; the reference path names
    // the line of a non-UTF-8 byte.
    let str_text = std::str::from_utf8(chunk).map_err(|_| Stop::Unsure)?;
    let text = chunk;
    let r = spec.rank;
    let nv = spec.values.count();
    let mut max = vec![0; r];
    p.coords
        .try_reserve(expect.saturating_mul(r))
        .map_err(|_| alloc_err(expect.saturating_mul(8 * r)))?;
    p.values
        .try_reserve(expect.saturating_mul(nv))
        .map_err(|_| alloc_err(expect.saturating_mul(8 * nv)))?;
    let mut at = 0;
    let len = text.len();
    while at < len {
        skip_spaces(text, &mut at);
        match text.get(at) {
            None => break,
            Some(b'\n') => {
                at += 1;
                continue;
            }
            Some(b'\r') if text.get(at + 1) == Some(&b'\n') => {
                at += 2;
                continue;
            }
            Some(&c) if c == spec.comment => {
                at = match text[at..].iter().position(|&b| b == b'\n') {
                    Some(k) => at + k + 1,
                    None => len,
                };
                continue;
            }
            _ => {}
        }
        if p.coords.capacity() - p.coords.len() < r {
            let more = p.coords.len().max(1024);
            p.coords
                .try_reserve(more)
                .map_err(|_| alloc_err(more * 8))?;
        }
        for d in 0..r {
            if d > 0 {
                if !text.get(at).is_some_and(|&b| is_space(b)) {
                    return Err(Stop::Unsure);
                }
                skip_spaces(text, &mut at);
            }
            let v = uint(text, &mut at).ok_or(Stop::Unsure)?;
            match spec.extents {
                Some(e) if v == 0 || v > e[d] => return Err(Stop::Unsure),
                None if v == 0 => return Err(Stop::Unsure),
                _ => {}
            }
            if v > max[d] {
                max[d] = v;
            }
            p.coords.push(v - 1);
        }
        if p.values.capacity() - p.values.len() < nv {
            let more = p.values.len().max(1024);
            p.values
                .try_reserve(more)
                .map_err(|_| alloc_err(more * 8))?;
        }
        for _ in 0..nv {
            if !text.get(at).is_some_and(|&b| is_space(b)) {
                return Err(Stop::Unsure);
            }
            skip_spaces(text, &mut at);
            let word = match spec.values {
                Values::Integer => {
                    let t = token(str_text, &mut at).ok_or(Stop::Unsure)?;
                    t.parse::<i64>().map_err(|_| Stop::Unsure)? as u64
                }
                _ => {
                    let (x, used) = fast_float2::parse_partial::<f64, _>(&text[at..])
                        .map_err(|_| Stop::Unsure)?;
                    if used == 0 || text.get(at + used).is_some_and(|&b| b > b' ') {
                        return Err(Stop::Unsure);
                    }
                    at += used;
                    x.to_bits()
                }
            };
            p.values.push(word);
        }
        skip_spaces(text, &mut at);
        match text.get(at) {
            None => {}
            Some(b'\n') => at += 1,
            Some(b'\r') if text.get(at + 1) == Some(&b'\n') => at += 2,
            _ => return Err(Stop::Unsure),
        }
        p.n += 1;
    }
    Ok(max)
}

/// [`parse`] onto the end of `out` (one piece of a file read in pieces,
/// each cut at a line end): on one thread straight into `out`.
pub(crate) fn parse_append(
    text: &[u8],
    spec: &Spec<'_>,
    expect: Option<u64>,
    threads: usize,
    out: &mut Entries,
) -> Result<(), Stop> {
    if crate::threads::count(threads, text.len(), 1 << 20) == 1 {
        let most = text.len() / (2 * spec.rank + 2).max(4) + 1;
        let expect = expect.map_or(most, |e| e.min(most as u64) as usize);
        parse_chunk_into(text, spec, expect, out)?;
        return Ok(());
    }
    let p = parse(text, spec, expect, threads)?.entries;
    for (v, more, what) in [
        (&mut out.coords, &p.coords, "the coordinates"),
        (&mut out.values, &p.values, "the values"),
    ] {
        v.try_reserve(more.len()).map_err(|_| {
            Stop::Failed(CooError::Alloc {
                bytes: more.len().saturating_mul(8),
                what,
            })
        })?;
        v.extend_from_slice(more);
    }
    out.n += p.n;
    Ok(())
}

/// [`parse`] into `parts`, one per chunk in the text's order (cleared
/// first; their memory is kept, so a caller parsing a file a step at a
/// time reuses it instead of touching fresh pages each step): how many
/// were used. Nothing is copied between chunks.
pub(crate) fn parse_parts(
    text: &[u8],
    spec: &Spec<'_>,
    expect: Option<u64>,
    threads: usize,
    parts: &mut Vec<Entries>,
) -> Result<usize, Stop> {
    let threads = crate::threads::count(threads, text.len(), 1 << 20);
    let most = text.len() / (2 * spec.rank + 2).max(4) + 1;
    let expect = expect.map_or(most, |e| e.min(most as u64) as usize);
    let cuts = line_cuts(text, threads);
    while parts.len() < threads {
        parts
            .try_reserve(1)
            .map_err(|_| alloc_err(size_of::<Entries>()))?;
        parts.push(Entries::default());
    }
    let share = |k: usize| expect / threads + (k == 0) as usize * (expect % threads) + 64;
    let jobs: Vec<(&[u8], &mut Entries)> = cuts
        .windows(2)
        .map(|w| &text[w[0]..w[1]])
        .zip(parts.iter_mut())
        .collect();
    let done = crate::threads::run(jobs, |k, (chunk, e)| {
        e.coords.clear();
        e.values.clear();
        e.n = 0;
        parse_chunk_into(chunk, spec, share(k), e).map(|_| ())
    });
    done.into_iter().collect::<Result<Vec<()>, Stop>>()?;
    Ok(threads)
}

/// Where `text` is cut for `threads` threads: 0, a line start near each
/// k-th share, the end.
fn line_cuts(text: &[u8], threads: usize) -> Vec<usize> {
    let mut cuts = vec![0];
    for k in 1..threads {
        let guess = (text.len() / threads * k).max(*cuts.last().unwrap_or(&0));
        let cut = match text[guess..].iter().position(|&b| b == b'\n') {
            Some(j) => guess + j + 1,
            None => text.len(),
        };
        cuts.push(cut);
    }
    cuts.push(text.len());
    cuts
}

/// Parse the entry lines of `text` on up to `threads` threads (chunks cut
/// at line ends; entries keep the file's order). `expect` is the number of
/// entries the file declares, if it does (a guess for the memory to
/// reserve, never trusted beyond the input's size).
pub(crate) fn parse(
    text: &[u8],
    spec: &Spec<'_>,
    expect: Option<u64>,
    threads: usize,
) -> Result<Parsed, Stop> {
    // No entry line is shorter than "1 1\n" per two coordinates.
    let most = text.len() / (2 * spec.rank + 2).max(4) + 1;
    let expect = expect.map_or(most, |e| e.min(most as u64) as usize);
    let threads = crate::threads::count(threads, text.len(), 1 << 20);
    if threads == 1 {
        return parse_chunk(text, spec, expect);
    }
    let cuts = line_cuts(text, threads);
    let share = |k: usize| expect / threads + (k == 0) as usize * (expect % threads) + 64;
    let chunks: Vec<&[u8]> = cuts.windows(2).map(|w| &text[w[0]..w[1]]).collect();
    let parts = crate::threads::run(chunks, |k, chunk| parse_chunk(chunk, spec, share(k)));
    let mut parts = parts.into_iter().collect::<Result<Vec<_>, _>>()?;
    // Sums of lengths of vectors already in memory: they cannot overflow.
    let coords: usize = parts.iter().map(|p| p.entries.coords.len()).sum();
    let values: usize = parts.iter().map(|p| p.entries.values.len()).sum();
    let mut first = parts.remove(0);
    let e = &mut first.entries;
    e.coords
        .try_reserve_exact(coords - e.coords.len())
        .map_err(|_| alloc_err(coords.saturating_mul(8)))?;
    e.values
        .try_reserve_exact(values - e.values.len())
        .map_err(|_| alloc_err(values.saturating_mul(8)))?;
    for p in parts {
        e.coords.extend_from_slice(&p.entries.coords);
        e.values.extend_from_slice(&p.entries.values);
        e.n += p.entries.n;
        for (m, x) in first.max.iter_mut().zip(p.max) {
            *m = (*m).max(x);
        }
    }
    Ok(first)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The eight-byte path of `uint` gives what the byte loop gives, on
    /// every length of digits and every byte after them (below and above
    /// the digits, 0x80 and up), at the text's end and not.
    #[test]
    fn eight_bytes_at_once_agree_with_the_loop() {
        let mut s = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            s
        };
        let mut checked = 0;
        for round in 0..200_000 {
            let len = (next() % 12) as usize;
            let mut t: Vec<u8> = (0..len).map(|_| b'0' + (next() % 10) as u8).collect();
            let tail = (next() % 4) as usize;
            for _ in 0..tail {
                t.push(match next() % 5 {
                    0 => b' ',
                    1 => b'/',
                    2 => b':',
                    3 => (next() % 256) as u8,
                    _ => b'0' + (next() % 10) as u8,
                });
            }
            if round % 3 == 0 {
                t.extend_from_slice(b" 1 2.5\n");
            }
            let (mut a, mut b) = (0, 0);
            assert_eq!(uint(&t, &mut a), uint_loop(&t, &mut b), "{:?}", t);
            assert_eq!(a, b, "{:?}", t);
            checked += 1;
        }
        assert_eq!(checked, 200_000);
        for w in [b"1234567 ", b"0000001\n", b"9999999x", b"7\t123456"] {
            let (mut a, mut b) = (0, 0);
            assert_eq!(uint(w, &mut a), uint_loop(w, &mut b));
            assert_eq!(a, b);
        }
    }
}
