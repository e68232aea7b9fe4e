//! Runs the C tests in `c/` (compiled by build.rs) against the library.
//! Only this unpublished crate links them; the shipped libhurray_coo never
//! contains test code.

// Link the library so that the C tests' hurray_* references resolve.
extern crate hurray_coo;

use std::ffi::{c_char, c_int, CStr};

extern "C" {
    fn ctest_api_count() -> usize;
    fn ctest_api_name(i: usize) -> *const c_char;
    fn ctest_api_run(i: usize) -> c_int;
    fn ctest_assemble_count() -> usize;
    fn ctest_assemble_name(i: usize) -> *const c_char;
    fn ctest_assemble_run(i: usize) -> c_int;
    fn ctest_descriptor_count() -> usize;
    fn ctest_descriptor_name(i: usize) -> *const c_char;
    fn ctest_descriptor_run(i: usize) -> c_int;
    fn ctest_file_count() -> usize;
    fn ctest_file_name(i: usize) -> *const c_char;
    fn ctest_file_run(i: usize) -> c_int;
    fn ctest_hostile_count() -> usize;
    fn ctest_hostile_name(i: usize) -> *const c_char;
    fn ctest_hostile_run(i: usize) -> c_int;
    fn ctest_shard_count() -> usize;
    fn ctest_shard_name(i: usize) -> *const c_char;
    fn ctest_shard_run(i: usize) -> c_int;
    fn ctest_text_count() -> usize;
    fn ctest_text_name(i: usize) -> *const c_char;
    fn ctest_text_run(i: usize) -> c_int;
    fn ctest_threads_count() -> usize;
    fn ctest_threads_name(i: usize) -> *const c_char;
    fn ctest_threads_run(i: usize) -> c_int;
    fn ctest_cpp_smoke() -> c_int;
    fn ctest_alloc_failure() -> c_int;
    fn ctest_cpp17() -> c_int;
}

/// A suite of C tests: its count, names and runner.
pub struct Suite {
    pub count: unsafe extern "C" fn() -> usize,
    pub name: unsafe extern "C" fn(usize) -> *const c_char,
    pub run: unsafe extern "C" fn(usize) -> c_int,
}

pub const API: Suite = Suite {
    count: ctest_api_count,
    name: ctest_api_name,
    run: ctest_api_run,
};

pub const ASSEMBLE: Suite = Suite {
    count: ctest_assemble_count,
    name: ctest_assemble_name,
    run: ctest_assemble_run,
};

pub const DESCRIPTOR: Suite = Suite {
    count: ctest_descriptor_count,
    name: ctest_descriptor_name,
    run: ctest_descriptor_run,
};

pub const FILE: Suite = Suite {
    count: ctest_file_count,
    name: ctest_file_name,
    run: ctest_file_run,
};

pub const HOSTILE: Suite = Suite {
    count: ctest_hostile_count,
    name: ctest_hostile_name,
    run: ctest_hostile_run,
};

pub const SHARD: Suite = Suite {
    count: ctest_shard_count,
    name: ctest_shard_name,
    run: ctest_shard_run,
};

pub const TEXT: Suite = Suite {
    count: ctest_text_count,
    name: ctest_text_name,
    run: ctest_text_run,
};

pub const THREADS: Suite = Suite {
    count: ctest_threads_count,
    name: ctest_threads_name,
    run: ctest_threads_run,
};

/// Runs every test of `suite`; returns the names of those that failed.
pub fn run_suite(suite: &Suite) -> (usize, Vec<String>) {
    let mut failed = Vec::new();
    // SAFETY: the C functions take and return plain values; names are static
    // NUL-terminated strings for every index below count().
    let count = unsafe { (suite.count)() };
    for i in 0..count {
        let name = unsafe { CStr::from_ptr((suite.name)(i)) }
            .to_string_lossy()
            .into_owned();
        let failures = unsafe { (suite.run)(i) };
        eprintln!("ctest {name}: {failures} failed checks");
        if failures != 0 {
            failed.push(name);
        }
    }
    (count, failed)
}

/// The C++ smoke test's failure count.
pub fn cpp_smoke() -> c_int {
    // SAFETY: a plain C++ function with extern "C" linkage and no arguments.
    unsafe { ctest_cpp_smoke() }
}

/// The allocation-failure test's failure count (it forks; see test_alloc.c).
pub fn alloc_failure() -> c_int {
    // SAFETY: a plain C function without arguments.
    unsafe { ctest_alloc_failure() }
}

/// The C++17 wrapper tests' failure count.
pub fn cpp17() -> c_int {
    // SAFETY: a plain C++ function with C linkage, no arguments; it catches
    // its own exceptions.
    unsafe { ctest_cpp17() }
}

/// target/<profile> of the running test binary (target/<profile>/deps/…).
pub fn profile_dir() -> std::path::PathBuf {
    let exe = std::env::current_exe().unwrap();
    exe.parent().unwrap().parent().unwrap().to_path_buf()
}

/// The repository root.
pub fn repo_root() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// Run `cmd`, fail the test with its output unless it succeeds, and return
/// its standard output.
pub fn run(cmd: &mut std::process::Command) -> String {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Build libhurray_coo.so and .a the way a user does (cargo test builds the
/// rlib only), point the soname at the build output (as `make build` does),
/// and return the directory that holds them.
pub fn build_shared_library() -> std::path::PathBuf {
    let dir = profile_dir();
    let release = dir.file_name().is_some_and(|n| n == "release");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut build = std::process::Command::new(cargo);
    build
        .current_dir(repo_root())
        .args(["build", "--quiet", "-p", "hurray-coo"]);
    if release {
        build.arg("--release");
    }
    run(&mut build);
    let so = dir.join("libhurray_coo.so");
    assert!(so.exists(), "{} was not built", so.display());
    let link = dir.join(format!(
        "libhurray_coo.so.{}",
        hurray_coo::ffi::HURRAY_COO_ABI_VERSION
    ));
    // Tests in one binary run at once and may all get here: each makes its
    // own link under a name of its own and renames it over the soname (a
    // rename replaces atomically; removing then linking raced, and a test
    // failed with "File exists").
    static LINKS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = LINKS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let tmp = dir.join(format!(".soname-link-{}-{n}", std::process::id()));
    let _ = std::fs::remove_file(&tmp);
    std::os::unix::fs::symlink("libhurray_coo.so", &tmp).unwrap();
    std::fs::rename(&tmp, &link).unwrap();
    dir
}

/// Whether `tool --version` runs.
pub fn have(tool: &str) -> bool {
    std::process::Command::new(tool)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Run `cmd` as a user's shell would (without the LD_LIBRARY_PATH cargo
/// points at the build tree, so an installed library must be found on its
/// own); fail the test with its output unless it succeeds; return standard
/// output and error together.
pub fn run_as_user(cmd: &mut std::process::Command) -> String {
    let out = cmd
        .env_remove("LD_LIBRARY_PATH")
        .output()
        .unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{cmd:?} failed:\n{text}");
    text
}

/// target/ of this build (from target/<profile>/deps/<test binary>).
pub fn target_dir() -> std::path::PathBuf {
    let exe = std::env::current_exe().unwrap();
    exe.ancestors().nth(3).unwrap().to_path_buf()
}
