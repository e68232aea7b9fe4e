//! Compiles the C tests (strict C99, warnings as errors) and a C++ use of the
//! header into a static library linked only into this unpublished crate's
//! tests, never into the shipped libhurray_coo.

use std::path::PathBuf;

fn main() {
    let here = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let include = here.join("../include");
    let c_dir = here.join("c");
    println!("cargo:rerun-if-changed={}", c_dir.display());
    println!("cargo:rerun-if-changed={}", include.display());

    let c_files = [
        "alloc64.c",
        "test_api.c",
        "test_descriptor.c",
        "test_threads.c",
    ];
    let mut c = cc::Build::new();
    c.include(&include)
        .include(&c_dir)
        .std("c99")
        .warnings(true)
        .extra_warnings(true)
        .warnings_into_errors(true)
        .flag("-pedantic")
        .flag("-Wshadow")
        .flag("-Wstrict-prototypes")
        .flag("-Wmissing-prototypes")
        .flag("-Wconversion")
        .flag("-pthread");
    for f in c_files {
        c.file(c_dir.join(f));
    }
    c.compile("hurray_ctests");

    cc::Build::new()
        .cpp(true)
        .include(&include)
        .std("c++11")
        .warnings(true)
        .extra_warnings(true)
        .warnings_into_errors(true)
        .flag("-pedantic")
        .file(c_dir.join("header_cpp.cpp"))
        .compile("hurray_ctests_cpp");
}
