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
    println!("cargo:rerun-if-env-changed=HURRAY_CTEST_SANITIZE");
    // e.g. HURRAY_CTEST_SANITIZE=address,undefined: instrument the C tests and
    // link their binaries with the sanitizer runtimes (scripts/test.sh).
    let sanitize = std::env::var("HURRAY_CTEST_SANITIZE")
        .ok()
        .filter(|s| !s.is_empty());
    let sanitize_flags: Vec<String> = sanitize
        .iter()
        .flat_map(|s| {
            [
                format!("-fsanitize={s}"),
                "-fno-sanitize-recover=all".to_owned(),
                "-fno-omit-frame-pointer".to_owned(),
            ]
        })
        .collect();
    if let Some(s) = &sanitize {
        // rustc links with --as-needed and its own library order, so name the
        // runtimes explicitly rather than relying on the driver's -fsanitize.
        for (name, lib) in [
            ("address", "asan"),
            ("undefined", "ubsan"),
            ("thread", "tsan"),
        ] {
            if s.split(',').any(|x| x == name) {
                println!("cargo:rustc-link-lib=dylib={lib}");
            }
        }
    }

    let c_files = [
        "alloc64.c",
        "test_alloc.c",
        "test_api.c",
        "test_assemble.c",
        "test_descriptor.c",
        "test_file.c",
        "test_hostile.c",
        "test_shard.c",
        "test_text.c",
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
    for f in &sanitize_flags {
        c.flag(f);
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
        .flags(&sanitize_flags)
        .compile("hurray_ctests_cpp");

    // The C++17 wrapper header, with g++ and warnings as errors.
    cc::Build::new()
        .cpp(true)
        .include(&include)
        .std("c++17")
        .warnings(true)
        .extra_warnings(true)
        .warnings_into_errors(true)
        .flag("-pedantic")
        .flag("-Wshadow")
        .flag("-Wconversion")
        .file(c_dir.join("test_cpp17.cpp"))
        .flags(&sanitize_flags)
        .compile("hurray_ctests_cpp17");
}
