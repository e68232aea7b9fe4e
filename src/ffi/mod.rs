//! The C ABI, split by the same operations as the core: `library` (status
//! names, messages, versions), `element` (type facts), `handle` (create,
//! free, accessors), `validate`, `lookup`, `io` (descriptors, statistics), `assemble`, `convert`,
//! `text` (Matrix Market and FROSTT files), `file` (Hurray files), `shard` (shard boxes, partition, concatenation).
//! Each export converts its arguments (through `guard.rs`), calls the core
//! and maps the result; every body runs inside the panic barrier.
#![allow(non_camel_case_types)]
// Each export's safety contract (what may be NULL, what must stay valid and
// for how long) is written in its doc comment for C readers, who see it in
// the generated header; a Rust-style "# Safety" heading would only add noise
// there.
#![allow(clippy::missing_safety_doc)]

// The header's sections are arranged by build/sections.rs.
mod assemble;
mod consts;
mod convert;
mod element;
mod file;
mod file_kv;
mod file_writer;
mod guard;
mod handle;
mod io;
mod library;
mod lookup;
mod probe;
mod shard;
mod text;
mod validate;

use std::ffi::c_void;

pub use assemble::*;
pub use consts::*;
pub use convert::*;
pub use element::*;
pub use file::*;
pub use file_kv::*;
pub use file_writer::*;
pub use handle::*;
pub use io::*;
pub use library::*;
pub use lookup::*;
pub use probe::hurray_lookup_view;
pub use shard::*;
pub use text::*;
pub use validate::*;

use crate::coo::Coo;
use crate::error::CooError;

/// Release callback of a borrowed handle: called exactly once with the
/// release_ctx given at creation. It may run on any thread (the one that
/// calls hurray_coo_free, or the creating thread), so it must be thread-safe.
pub type hurray_release_fn = Option<unsafe extern "C" fn(ctx: *mut c_void)>;

/// An opaque COO tensor handle. Create it with hurray_coo_create (or
/// hurray_coo_create_with_release), release it with hurray_coo_free. It is
/// immutable after creation: every function taking a const hurray_coo * may
/// be called from many threads at once on the same handle.
pub struct hurray_coo {
    // Declared first so it is dropped first: the tensor stops reading the
    // caller's buffers before the release callback runs.
    coo: Coo<'static>,
    /// The descriptor the handle was read from, if any.
    desc: Option<crate::io::descriptor::Descriptor>,
    /// HURRAY_COO_ONE_BASED_MESSAGES was given at create.
    one_based: bool,
    _release: Option<Release>,
    /// The open file a handle from hurray_file_get borrows from: kept alive
    /// (its mapping too) as long as the handle, dropped after `coo`.
    _file: Option<std::sync::Arc<crate::io::file::HurrayFile>>,
    /// The shortest lookup path (`probe.rs`): taken at create when the
    /// tensor has an index (`boxed`), else on the first lookup.
    probe: std::sync::OnceLock<probe::Probe>,
}

impl hurray_coo {
    /// Move a new handle to the heap (`box_handle`) and, when its tensor has
    /// a lookup index (built at create), take its probe now: the first
    /// lookups on many threads then share it without a first-use step.
    /// Other handles take theirs on their first lookup, which may build
    /// their directory.
    fn boxed(self) -> Result<*mut hurray_coo, CooError> {
        let h = guard::box_handle(self)?;
        // SAFETY: just boxed, live, and not yet shared.
        let r = unsafe { &*h };
        if r.coo.has_index() {
            let _ = r.probe.set(probe::Probe::of(&r.coo));
        }
        Ok(h)
    }

    /// An error of an operation on this handle, as its caller counts.
    fn err(&self, e: CooError) -> CooError {
        e.one_based(self.one_based)
    }

    /// The handle's coordinates and values as arrays an operation reads
    /// (the caller's own memory when the handle borrows it), for
    /// `guard::apart` against the caller's output arrays.
    fn spans(&self) -> [guard::Span; 2] {
        [
            guard::span("the handle's indices", self.coo.indices_bytes()),
            guard::span("the handle's values", self.coo.values()),
        ]
    }
}

/// Calls the caller's release callback exactly once, when dropped.
struct Release {
    f: unsafe extern "C" fn(*mut c_void),
    ctx: *mut c_void,
}

impl Release {
    /// The caller's callback and its context, if there is a callback.
    fn new(f: hurray_release_fn, ctx: *mut c_void) -> Option<Release> {
        f.map(|f| Release { f, ctx })
    }
}

impl Drop for Release {
    fn drop(&mut self) {
        // SAFETY: the caller supplied this function pointer and context for
        // exactly this call; the contract says it is safe on any thread.
        unsafe { (self.f)(self.ctx) }
    }
}

/// The bits a flags word of one call may hold, each with its C name: the
/// one place the call's mask and its refusal message come from.
pub(crate) struct FlagSet {
    call: &'static str,
    flags: &'static [(&'static str, u32)],
}

/// One of a few named `HURRAY_*` codes (a policy, an index type, a
/// format): `choose!("what", code, { NAME => value, ... })` is the value of
/// the code, or the refusal naming every accepted code and its number, made
/// from the same list.
macro_rules! choose {
    ($what:literal, $code:expr, { $($name:ident => $value:expr),+ $(,)? }) => {{
        let code: u32 = $code;
        $(if code == $name {
            Ok($value)
        } else)+ {
            Err(crate::ffi::refuse_choice($what, code, &[$((stringify!($name), $name)),+]))
        }
    }};
}
pub(crate) use choose;

/// "WHAT CODE is not accepted: the WHAT is A (1), B (2) or C (3)".
pub(crate) fn refuse_choice(
    what: &'static str,
    code: u32,
    choices: &[(&'static str, u32)],
) -> crate::error::CooError {
    let each: Vec<String> = choices.iter().map(|(n, v)| format!("{n} ({v})")).collect();
    let list = listed(&each, "or");
    crate::error::CooError::OutOfRange {
        what,
        value: u64::from(code),
        allowed: format!("the {what} is {list}").into(),
    }
}

/// "A", "A or B", "A, B or C" (with `last_word` "or"; "and" likewise).
fn listed(each: &[String], last_word: &str) -> String {
    match each {
        [rest @ .., last] if !rest.is_empty() => format!("{} {last_word} {last}", rest.join(", ")),
        _ => each.join(""),
    }
}

/// A `FlagSet` of the named `HURRAY_*` constants.
macro_rules! flag_set {
    ($call:literal: $($flag:ident),* $(,)?) => {
        crate::ffi::FlagSet::new($call, &[$((stringify!($flag), $flag)),*])
    };
}
pub(crate) use flag_set;

impl FlagSet {
    pub(crate) const fn new(call: &'static str, flags: &'static [(&'static str, u32)]) -> FlagSet {
        FlagSet { call, flags }
    }

    /// Every bit the call accepts.
    pub(crate) fn mask(&self) -> u32 {
        self.flags.iter().fold(0, |m, &(_, f)| m | f)
    }

    /// `flags` when it holds only known bits, else the refusal, which names
    /// every accepted flag and its value.
    pub(crate) fn check(&self, flags: u32) -> Result<u32, crate::error::CooError> {
        let unknown = flags & !self.mask();
        if unknown == 0 {
            return Ok(flags);
        }
        Err(crate::error::CooError::InvalidFlags {
            flags,
            unknown,
            allowed: self.allowed(),
        })
    }

    /// "CALL takes 0 or A (0x1)", "... 0 or any of A (0x1), B (0x2) and C
    /// (0x4)", or "CALL takes 0".
    pub(crate) fn allowed(&self) -> String {
        let each: Vec<String> = self
            .flags
            .iter()
            .map(|(name, f)| format!("{name} (0x{f:X})"))
            .collect();
        match each.as_slice() {
            [] => format!("{} takes 0", self.call),
            [one] => format!("{} takes 0 or {one}", self.call),
            all => format!("{} takes 0 or any of {}", self.call, listed(all, "and")),
        }
    }
}

/// hurray_coo_create's flags (hurray_coo_options.flags).
pub(crate) const CREATE_FLAGS: FlagSet = flag_set!("hurray_coo_create":
    HURRAY_COO_COPY,
    HURRAY_COO_PERMISSIVE,
    HURRAY_COO_INDEX,
    HURRAY_COO_ONE_BASED_MESSAGES,
    HURRAY_COO_INDEX_VALUES,
);

#[cfg(test)]
mod tests {
    use super::*;
    use library::BUILT_VERSION;

    #[test]
    fn a_flag_set_is_the_mask_and_the_message() {
        assert_eq!(CREATE_FLAGS.mask(), 0x1F);
        assert_eq!(CREATE_FLAGS.check(0x11).unwrap(), 0x11);
        let e = CREATE_FLAGS.check(0x21).unwrap_err();
        assert_eq!(
            e.to_string(),
            "flags 0x00000021: bits 0x00000020 are not accepted here; hurray_coo_create takes 0 \
             or any of HURRAY_COO_COPY (0x1), HURRAY_COO_PERMISSIVE (0x2), HURRAY_COO_INDEX (0x4), \
             HURRAY_COO_ONE_BASED_MESSAGES (0x8) and HURRAY_COO_INDEX_VALUES (0x10)"
        );
        let one = flag_set!("f": HURRAY_COO_PERMISSIVE);
        assert_eq!(one.allowed(), "f takes 0 or HURRAY_COO_PERMISSIVE (0x2)");
        let none = flag_set!("g":);
        assert_eq!(none.allowed(), "g takes 0");
        assert!(none.check(1).is_err() && none.check(0).is_ok());
    }

    #[test]
    fn a_refused_choice_names_every_accepted_code_with_its_number() {
        const A: u32 = 1;
        const B: u32 = 2;
        const C: u32 = 7;
        let pick = |code| -> Result<char, crate::error::CooError> {
            choose!("thing", code, { A => 'a', B => 'b', C => 'c' })
        };
        assert_eq!(pick(7).ok(), Some('c'));
        let e = pick(3).unwrap_err();
        assert_eq!(e.status(), crate::status::Status::InvalidArgument);
        assert_eq!(
            e.to_string(),
            "thing 3 is not accepted: the thing is A (1), B (2) or C (7)"
        );
        let one = refuse_choice("x", 9, &[("ONLY", 4)]);
        assert_eq!(one.to_string(), "x 9 is not accepted: the x is ONLY (4)");
    }

    #[test]
    fn header_version_defines_match_the_crate() {
        assert_eq!(
            (
                HURRAY_COO_VERSION_MAJOR,
                HURRAY_COO_VERSION_MINOR,
                HURRAY_COO_VERSION_PATCH
            ),
            BUILT_VERSION
        );
        assert_eq!(HURRAY_COO_VERSION_NUMBER, hurray_coo_version_number());
        // SAFETY: the library returns a static NUL-terminated string.
        let s = unsafe { std::ffi::CStr::from_ptr(hurray_coo_version_string()) };
        assert_eq!(s.to_str().unwrap(), env!("CARGO_PKG_VERSION"));
    }
}
