//! The ctypes test (tests/python/test_ctypes.py): the library loaded exactly
//! as Julia's ccall loads it (dlopen, symbol, C types, no header).

use std::path::Path;
use std::process::Command;

#[test]
fn python_ctypes_drives_the_shared_library() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let dir = std::env::current_exe()
        .unwrap()
        .parent()
        .unwrap()
        .parent()
        .unwrap()
        .to_path_buf();
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut build = Command::new(cargo);
    build
        .current_dir(root)
        .args(["build", "--quiet", "-p", "hurray-coo"]);
    if dir.file_name().is_some_and(|n| n == "release") {
        build.arg("--release");
    }
    assert!(build.status().unwrap().success());
    let so = dir.join("libhurray_coo.so");
    let out = Command::new("python3")
        .arg(root.join("tests/python/test_ctypes.py"))
        .arg(&so)
        .output()
        .expect("python3 is needed for the ctypes test");
    let err = String::from_utf8_lossy(&out.stderr);
    eprintln!("{err}");
    assert!(out.status.success(), "ctypes test failed:\n{err}");
    assert!(err.contains("Ran 4 tests") && err.contains("OK"), "{err}");
}
