//! Element-type facts: the one table of types (`types`), all size arithmetic
//! (`size`), reading values out of a buffer (`decode`) and writing them in
//! (`encode`), and casting a value to a type that holds it exactly (`cast`).

pub(crate) mod cast;
pub mod decode;
pub mod encode;
pub mod size;
pub mod types;
