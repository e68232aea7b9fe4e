//! Element-type facts: the one table of types (`types`), all size arithmetic
//! (`size`), and reading values out of a buffer (`decode`).

pub mod decode;
pub mod size;
pub mod types;
