//! Links the C test objects (built by build.rs) with the library.
