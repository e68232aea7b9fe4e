//! Generates the C header with cbindgen into OUT_DIR (never outside it, so
//! `cargo publish` verification works). The committed `include/hurray_coo.h`
//! is compared with it by `tests/header.rs`; set HURRAY_COO_WRITE_HEADER=1 to
//! refresh the committed copy (`scripts/update-header`).

use std::path::{Path, PathBuf};

#[path = "build/sections.rs"]
mod sections;

fn write_if_changed(path: &Path, text: &str) {
    if std::fs::read_to_string(path).ok().as_deref() != Some(text) {
        std::fs::write(path, text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    }
}

fn main() {
    let crate_dir = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let out_dir = PathBuf::from(std::env::var("OUT_DIR").unwrap());
    println!("cargo:rerun-if-changed=src");
    println!("cargo:rerun-if-changed=cbindgen.toml");
    println!("cargo:rerun-if-changed=build/sections.rs");
    println!("cargo:rerun-if-env-changed=HURRAY_COO_WRITE_HEADER");

    let config = cbindgen::Config::from_file(crate_dir.join("cbindgen.toml"))
        .expect("cbindgen.toml must parse");
    // Only the FFI module (and the files it declares) is the C API; the core's
    // public Rust items never reach the header.
    let bindings = cbindgen::Builder::new()
        .with_config(config)
        .with_src(crate_dir.join("src/ffi/mod.rs"))
        .generate()
        .expect("cbindgen could not generate the header");
    let mut raw = Vec::new();
    bindings.write(&mut raw);
    let header = sections::arrange(&String::from_utf8(raw).expect("the header is UTF-8"));
    let generated = out_dir.join("hurray_coo.h");
    write_if_changed(&generated, &header);

    // The shared library's soname follows the ABI version (the one number that
    // changes on a binary break): libhurray_coo.so.<ABI>.
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        let consts = std::fs::read_to_string(crate_dir.join("src/ffi/consts.rs")).unwrap();
        let abi: u32 = consts
            .lines()
            .find_map(|l| l.strip_prefix("pub const HURRAY_COO_ABI_VERSION: u32 = "))
            .and_then(|v| v.trim_end_matches(';').parse().ok())
            .expect("HURRAY_COO_ABI_VERSION not found in src/ffi/consts.rs");
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libhurray_coo.so.{abi}");
    }

    if std::env::var_os("HURRAY_COO_WRITE_HEADER").is_some_and(|v| v == "1") {
        let committed = crate_dir.join("include").join("hurray_coo.h");
        std::fs::create_dir_all(committed.parent().unwrap()).unwrap();
        write_if_changed(&committed, &header);
    }
}
