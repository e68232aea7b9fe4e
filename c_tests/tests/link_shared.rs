//! Links the README's C example against the built shared library exactly as
//! a user would (cc -I include -L ... -lhurray_coo), runs it, and checks what
//! it prints.

use std::path::Path;
use std::process::Command;

use hurray_coo_c_tests::{build_shared_library, repo_root, run};

/// Compile `source` (relative to the repository) as a user would, with
/// warnings as errors, against the shared library in `dir`; run it and
/// return what it printed.
fn link_and_run(root: &Path, dir: &Path, source: &str, exe: &Path) -> String {
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    run(Command::new(cc)
        .current_dir(root)
        .args([
            "-std=c11",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-pedantic",
            "-Iinclude",
        ])
        .arg(source)
        .arg(format!("-L{}", dir.display()))
        .arg("-lhurray_coo")
        .arg("-o")
        .arg(exe));
    run(Command::new(exe).env("LD_LIBRARY_PATH", dir))
}

#[test]
fn c_program_links_against_the_shared_library_and_runs() {
    let root = &repo_root();
    let dir = build_shared_library();
    let so = dir.join("libhurray_coo.so");
    let soname = format!(
        "libhurray_coo.so.{}",
        hurray_coo::ffi::HURRAY_COO_ABI_VERSION
    );
    let dynamic = run(Command::new("readelf").arg("-d").arg(&so));
    assert!(
        dynamic.contains(&format!("Library soname: [{soname}]")),
        "{dynamic}"
    );

    let exe = dir.join("seed_example_linked");
    let out = link_and_run(root, &dir, "examples/seed.c", &exe);
    for line in [
        "created a 4x4 float32 COO tensor with 3 non-zeros",
        "validate: ok",
        "(0, 1) = 1.5\n",
        "(2, 0) = -0.5\n",
        "(3, 3) = 2\n",
        "(1, 2) = 0 (not stored: implicit zero)",
        "(4, 0): HURRAY_ERR_INDEX_OUT_OF_BOUNDS: query coordinate 4 in dimension 0",
    ] {
        assert!(out.contains(line), "output lacks {line:?}:\n{out}");
    }
    // The shared library exports exactly the hurray_* API (no Rust internals,
    // no test code), and the static library carries no test objects.
    let dynsym = run(Command::new("nm").args(["-D", "--defined-only"]).arg(&so));
    let exported: Vec<&str> = dynsym
        .lines()
        .filter_map(|l| l.split_whitespace().nth(2))
        .collect();
    assert!(exported.len() >= 21, "only {} exports", exported.len());
    for sym in &exported {
        assert!(
            sym.starts_with("hurray_"),
            "{sym} leaks from libhurray_coo.so"
        );
    }
    let header = std::fs::read_to_string(root.join("include/hurray_coo.h")).unwrap();
    for sym in &exported {
        assert!(
            header.contains(&format!("{sym}(")),
            "{sym} is exported but not declared"
        );
    }
    let archive = run(Command::new("nm").arg(dir.join("libhurray_coo.a")));
    assert!(
        !archive.contains("ctest_"),
        "C test code inside libhurray_coo.a"
    );
    assert!(archive.contains("T hurray_coo_create"));

    // The program resolved its hurray_* symbols from the shared library.
    let ldd = run(Command::new("ldd").arg(&exe).env("LD_LIBRARY_PATH", &dir));
    assert!(
        ldd.contains("libhurray_coo.so"),
        "not dynamically linked:\n{ldd}"
    );
}

/// The work space an unsorted check keeps, and `hurray_release_scratch`, in
/// a process of its own (c_tests/c/scratch_main.c): the library's pool is
/// process-wide, so only there are its byte counts exact.
#[test]
fn unsorted_checks_keep_their_work_space_until_released() {
    let dir = build_shared_library();
    let exe = dir.join("scratch_main");
    let out = link_and_run(&repo_root(), &dir, "c_tests/c/scratch_main.c", &exe);
    assert!(out.contains("scratch: ok"), "{out}");
}
