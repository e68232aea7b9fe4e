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
pub mod coo;
pub mod decode;
pub mod descriptor;
mod dup;
pub mod error;
pub mod ffi;
mod hash_index;
mod key;
mod packed_index;
mod scan;
pub mod size;
pub mod stats;
pub mod status;
pub mod types;

pub use coo::{check_rank, Coo, CooParts, Options};
pub use error::{CooError, Coords};
pub use status::Status;
pub use types::{type_info, TagClass, TypeInfo, TYPES};
