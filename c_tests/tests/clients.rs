//! Real clients adopt the exported CSR: SuiteSparse:GraphBLAS (C), Eigen
//! (C++) and PETSc (C, MatCreateSeqAIJWithArrays, then re-assembly into its
//! own values array), all from Debian (scripts/test.sh installs them), and a
//! sparse matrix-vector product through each equals one computed from the
//! COO.

use std::process::Command;

use hurray_coo_c_tests::{build_shared_library, profile_dir, repo_root, run};

fn skip() -> bool {
    let skip = std::env::var_os("HURRAY_SKIP_CONSUMERS").is_some_and(|v| v == "1");
    if skip {
        eprintln!("SKIPPED (HURRAY_SKIP_CONSUMERS=1): GraphBLAS and Eigen clients");
    }
    skip
}

fn build_and_run(compiler: &[&str], src: &str, extra: &[&str]) -> String {
    let lib = build_shared_library();
    let dir = profile_dir().join("clients");
    std::fs::create_dir_all(&dir).unwrap();
    let exe = dir.join(src.replace('.', "_"));
    run(Command::new(compiler[0])
        .args(&compiler[1..])
        .arg(format!("-I{}", repo_root().join("include").display()))
        .arg(repo_root().join("c_tests/clients").join(src))
        .args(extra)
        .arg(format!("-L{}", lib.display()))
        .arg("-lhurray_coo")
        .arg(format!("-Wl,-rpath,{}", lib.display()))
        .arg("-lm")
        .arg("-o")
        .arg(&exe));
    run(Command::new(&exe).env_remove("LD_LIBRARY_PATH"))
}

#[test]
fn graphblas_adopts_the_exported_csr() {
    if skip() {
        return;
    }
    assert!(
        std::path::Path::new("/usr/include/GraphBLAS.h").exists(),
        "GraphBLAS is missing: run scripts/test.sh (it installs libgraphblas-dev)"
    );
    let out = build_and_run(
        &["cc", "-std=c11", "-Wall", "-Werror"],
        "graphblas_csr.c",
        &["-lgraphblas"],
    );
    // The program exits non-zero unless every entry was adopted and the
    // products agree to 1e-12 (summation order may differ).
    assert!(
        out.contains("adopted") && out.contains("spmv max difference"),
        "{out}"
    );
}

#[test]
fn eigen_adopts_the_exported_csr() {
    if skip() {
        return;
    }
    assert!(
        std::path::Path::new("/usr/include/eigen3").exists(),
        "Eigen is missing: run scripts/test.sh (it installs libeigen3-dev)"
    );
    let out = build_and_run(
        &["c++", "-std=c++17", "-Wall", "-Werror"],
        "eigen_csr.cpp",
        &["-I/usr/include/eigen3"],
    );
    // The program exits non-zero unless every entry was adopted and the
    // products agree to 1e-12 (summation order may differ).
    assert!(
        out.contains("adopted") && out.contains("spmv max difference"),
        "{out}"
    );
}

fn pkg_config(args: &[&str]) -> Vec<String> {
    run(Command::new("pkg-config").args(args))
        .split_whitespace()
        .map(str::to_owned)
        .collect()
}

#[test]
fn petsc_adopts_the_exported_csr_and_sees_reassembled_values() {
    if skip() {
        return;
    }
    let mut flags = pkg_config(&["--cflags", "--libs", "petsc"]);
    flags.extend(pkg_config(&["--cflags", "--libs", "mpi"]));
    let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    let out = build_and_run(
        &["cc", "-std=c11", "-Wall", "-Werror"],
        "petsc_csr.c",
        &flags,
    );
    assert!(
        out.contains("petsc: adopted") && out.contains("after re-assembly"),
        "{out}"
    );
}
