//! The wire format and what it carries: the Hurray descriptor (reader and
//! writer) and the statistics section.

pub mod descriptor;
pub mod stats;
