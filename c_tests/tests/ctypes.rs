//! The ctypes test (tests/python/test_ctypes.py): the library loaded exactly
//! as Julia's ccall loads it (dlopen, symbol, C types, no header).

use std::process::Command;

use hurray_coo_c_tests::{build_shared_library, repo_root};

#[test]
fn python_ctypes_drives_the_shared_library() {
    let root = repo_root();
    let so = build_shared_library().join("libhurray_coo.so");
    let script = root.join("tests/python/test_ctypes.py");
    let out = Command::new("python3")
        .arg(&script)
        .arg(&so)
        .output()
        .expect("python3 is needed for the ctypes test");
    let err = String::from_utf8_lossy(&out.stderr);
    eprintln!("{err}");
    assert!(out.status.success(), "ctypes test failed:\n{err}");
    // Every test method of the script ran (unittest prints "Ran N tests").
    let defined = std::fs::read_to_string(&script)
        .unwrap()
        .lines()
        .filter(|l| l.trim_start().starts_with("def test_"))
        .count();
    assert!(defined >= 4, "only {defined} test methods found");
    assert!(
        err.contains(&format!("Ran {defined} tests")) && err.contains("\nOK"),
        "expected {defined} tests to run and pass:\n{err}"
    );
}

/// scipy wraps the exported CSR arrays (numpy-owned, written by the
/// library) in a csr_array with no copy; its product equals scipy's own
/// assembly of the same triplets; Matrix Market files cross between
/// scipy.io.mmwrite/mmread and the library both ways. numpy and scipy come from PyPI
/// (scripts/test.sh installs them).
#[test]
fn scipy_adopts_the_exported_csr() {
    if std::env::var_os("HURRAY_SKIP_CONSUMERS").is_some_and(|v| v == "1") {
        eprintln!("SKIPPED (HURRAY_SKIP_CONSUMERS=1): scipy client");
        return;
    }
    let so = build_shared_library().join("libhurray_coo.so");
    let out = Command::new("python3")
        .arg(repo_root().join("tests/python/test_scipy.py"))
        .arg(&so)
        .output()
        .expect("python3 is needed");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && err.contains("Ran 2 tests") && err.contains("\nOK"),
        "scipy test failed (scripts/test.sh installs numpy and scipy):\n{err}"
    );
}

/// The shipped Python module (bindings/python/hurray_coo.py), imported as
/// the README says, reads files (gzip too) into scipy csr_arrays, reads
/// values into the solver's type, assembles numpy triplets and writes
/// symmetric files, against scipy's own results.
#[test]
fn the_python_module_serves_a_scipy_user() {
    if std::env::var_os("HURRAY_SKIP_CONSUMERS").is_some_and(|v| v == "1") {
        eprintln!("SKIPPED (HURRAY_SKIP_CONSUMERS=1): the Python module");
        return;
    }
    let so = build_shared_library().join("libhurray_coo.so");
    let out = Command::new("python3")
        .arg(repo_root().join("tests/python/test_module.py"))
        .env("HURRAY_COO_LIB", &so)
        .env("PYTHONPATH", repo_root().join("bindings/python"))
        .output()
        .expect("python3 is needed");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && err.contains("Ran 4 tests") && err.contains("\nOK"),
        "the Python module test failed (scripts/test.sh installs numpy and scipy):\n{err}"
    );
}
