//! The wire format and what it carries: the Hurray descriptor (reader and
//! writer), Hurray files (`file/`) and the statistics section; the text formats (Matrix Market in
//! `mtx.rs`, FROSTT in `tns.rs`, what they share in `text.rs`, gzip-compressed
//! text in `gzip.rs`).

pub mod descriptor;
mod fastparse;
pub mod file;
pub(crate) mod fsutil;
pub(crate) mod gzip;
pub use fsutil::reason;
pub use gzip::Report;
pub mod mtx;
pub mod stats;
mod symmetry;
pub(crate) mod text;
pub mod tns;

pub use text::{entry_text, TextOptions, WriteOptions, MAX_PRECISION};
