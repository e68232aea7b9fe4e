//! # hurray-coo
//!
//! Hurray COO sparse tensors (layout tag 0x06): a safe Rust core ([`Coo`])
//! and a thin C ABI over it (`libhurray_coo`, header `include/hurray_coo.h`).
//!
//! The core takes byte slices and returns [`CooError`]s; the C layer only
//! converts arguments, calls the core and maps errors to status codes.
//!
//! The format is little-endian; this crate supports little-endian hosts only.

#[cfg(target_endian = "big")]
compile_error!("hurray-coo reads the little-endian Hurray format in place and supports little-endian hosts only");

mod aligned;
pub mod assemble;
pub mod convert;
pub mod coo;
pub mod element;
pub mod error;
pub mod ffi;
mod hint;
pub mod io;
pub mod shard;
pub mod status;
pub mod threads;

pub use coo::{check_rank, Coo, CooParts, Options};
pub use element::types::{type_info, TagClass, TypeInfo, TYPES};
pub use error::{CooError, Coords};
pub use status::Status;
