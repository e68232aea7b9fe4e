//! libhurray_coo_mpi as an MPI user gets it: `make mpi` and `make install`
//! into a fresh prefix, the distributed-validation test
//! (`mpi/tests/test_validate.c`) built against the installed files with
//! pkg-config and with CMake `find_package(hurray_coo_mpi)`, then run under
//! `mpirun` with 1, 2 and 4 ranks. Needs an MPI (`mpicc`, `mpirun`; Open
//! MPI from Debian here, which scripts/test.sh installs); without one the
//! test fails and says so, and HURRAY_SKIP_MPI=1 skips it on purpose.

use std::path::Path;
use std::process::Command;

use hurray_coo_c_tests::{have, repo_root as root, run_as_user as run, target_dir};

/// mpirun as this machine allows it: oversubscribed (2 cores, 4 ranks), as
/// root when the tests run as root.
fn mpirun(n: u32, exe: &Path) -> String {
    run(Command::new("mpirun")
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .env("OMPI_MCA_rmaps_base_oversubscribe", "1")
        .args(["-n", &n.to_string()])
        .arg(exe))
}

/// The MPI layer's C sources (mpi/src/*.c).
fn mpi_sources(root: &Path) -> Vec<std::path::PathBuf> {
    let mut v: Vec<_> = std::fs::read_dir(root.join("mpi/src"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "c"))
        .collect();
    v.sort();
    assert!(v.len() >= 4, "mpi/src has {} C files", v.len());
    v
}

#[test]
fn distributed_validation_under_mpirun_from_an_installed_prefix() {
    if std::env::var_os("HURRAY_SKIP_MPI").is_some_and(|v| v == "1") {
        eprintln!("SKIPPED (HURRAY_SKIP_MPI=1): the MPI tests");
        return;
    }
    let missing: Vec<&str> = ["make", "mpicc", "mpirun", "pkg-config", "cmake"]
        .into_iter()
        .filter(|t| !have(t))
        .collect();
    assert!(
        missing.is_empty(),
        "the MPI test needs {missing:?}: run scripts/test.sh (it installs Open MPI), or set \
         HURRAY_SKIP_MPI=1 to skip it on purpose"
    );
    let root = root();
    let work = target_dir().join("mpi");
    let _ = std::fs::remove_dir_all(&work);
    let prefix = work.join("prefix");
    std::fs::create_dir_all(&prefix).unwrap();
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let target = format!("CARGO_TARGET_DIR={}", target_dir().display());
    for args in [vec!["mpi"], vec!["install"]] {
        run(Command::new("make")
            .current_dir(&root)
            .args(&args)
            .arg("PROFILE=dev")
            .arg(format!("CARGO={cargo}"))
            .arg(format!("PREFIX={}", prefix.display()))
            .arg(&target));
    }
    let abi = hurray_coo::ffi::HURRAY_COO_ABI_VERSION;
    for f in [
        format!("lib/libhurray_coo_mpi.so.{abi}"),
        "lib/libhurray_coo_mpi.so".into(),
        "lib/libhurray_coo_mpi.a".into(),
        "include/hurray_coo_mpi.h".into(),
        "lib/pkgconfig/hurray_coo_mpi.pc".into(),
        "lib/cmake/hurray_coo_mpi/hurray_coo_mpiConfig.cmake".into(),
    ] {
        assert!(prefix.join(&f).exists(), "{f} not installed");
    }
    let lib = prefix.join("lib");
    // The library exports its API and nothing else (the helpers its files
    // share are hidden).
    let symbols = run(Command::new("nm")
        .args(["-D", "--defined-only"])
        .arg(lib.join("libhurray_coo_mpi.so")));
    let exported: Vec<&str> = symbols
        .lines()
        .filter_map(|l| l.split_whitespace().nth(2))
        .filter(|n| !n.starts_with('_'))
        .collect();
    assert!(exported.len() >= 8, "{exported:?}");
    for name in &exported {
        assert!(
            name.starts_with("hurray_mpi_"),
            "libhurray_coo_mpi exports {name}"
        );
    }
    let test = root.join("mpi/tests/test_validate.c");

    // pkg-config (hurray_coo_mpi requires hurray_coo), compiled by mpicc.
    let flags = run(Command::new("pkg-config")
        .env("PKG_CONFIG_PATH", lib.join("pkgconfig"))
        .args(["--cflags", "--libs", "hurray_coo_mpi"]));
    let exe = work.join("test_validate");
    run(Command::new("mpicc")
        .args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-pedantic"])
        .arg(&test)
        .args(flags.split_whitespace())
        .arg("-lm")
        .arg(format!("-Wl,-rpath,{}", lib.display()))
        .arg("-o")
        .arg(&exe));
    for n in [1, 2, 4] {
        let out = mpirun(n, &exe);
        assert!(
            out.contains(&format!("{n} ranks: ok (0 failed checks)")),
            "{out}"
        );
    }

    // Distributed assembly: scattered FEM contributions equal the
    // single-process assembly, the plan equals a fresh assembly, errors are
    // collective.
    let asm = work.join("test_assemble");
    run(Command::new("mpicc")
        .args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-pedantic"])
        .arg(root.join("mpi/tests/test_assemble.c"))
        .args(flags.split_whitespace())
        .arg(format!("-Wl,-rpath,{}", lib.display()))
        .arg("-o")
        .arg(&asm));
    for n in [1, 2, 4] {
        let out = mpirun(n, &asm);
        assert!(
            out.contains(&format!("{n} ranks: ok (0 failed checks)")),
            "{out}"
        );
    }

    // The PETSc example: rows exported as CSR into MatCreateMPIAIJWithArrays,
    // CG on 4 ranks converges to the one-process solution.
    let have_petsc = Command::new("pkg-config")
        .args(["--exists", "petsc"])
        .status()
        .is_ok_and(|s| s.success());
    assert!(
        have_petsc || std::env::var_os("CI").is_none(),
        "PETSc (petsc-dev) is missing: scripts/test.sh installs it"
    );
    if have_petsc {
        let both = run(Command::new("pkg-config")
            .env("PKG_CONFIG_PATH", lib.join("pkgconfig"))
            .args(["--cflags", "--libs", "hurray_coo_mpi", "petsc"]));
        let cg = work.join("petsc_cg");
        run(Command::new("mpicc")
            .args(["-std=c11", "-O1", "-Wall", "-Wextra", "-Werror"])
            .arg(root.join("mpi/examples/petsc_cg.c"))
            .args(both.split_whitespace())
            .arg(format!("-Wl,-rpath,{}", lib.display()))
            .arg("-o")
            .arg(&cg));
        for n in [1, 4] {
            let out = mpirun(n, &cg);
            assert!(out.contains(&format!("{n} ranks: CG converged")), "{out}");
        }
    } else {
        eprintln!("SKIPPED: the PETSc example (no petsc pkg-config entry)");
    }

    // MPICH too: the same library source and tests built with MPICH's
    // compiler wrapper and run with its launcher (Debian installs it beside
    // Open MPI as mpicc.mpich and mpirun.mpich).
    if have("mpicc.mpich") && have("mpirun.mpich") {
        let dir = work.join("mpich");
        std::fs::create_dir_all(&dir).unwrap();
        let core = format!("-L{}", lib.display());
        run(Command::new("mpicc.mpich")
            .args([
                "-std=c11",
                "-O2",
                "-Wall",
                "-Wextra",
                "-Werror",
                "-pedantic",
                "-fPIC",
                "-shared",
            ])
            .arg(format!("-I{}", root.join("include").display()))
            .arg(format!("-I{}", root.join("mpi/include").display()))
            .args(mpi_sources(&root))
            .args([&core, "-lhurray_coo", "-lm"])
            .arg("-o")
            .arg(dir.join("libhurray_coo_mpi.so")));
        for t in ["test_validate", "test_assemble"] {
            let exe = dir.join(t);
            run(Command::new("mpicc.mpich")
                .args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-pedantic"])
                .arg(format!("-I{}", root.join("include").display()))
                .arg(format!("-I{}", root.join("mpi/include").display()))
                .arg(root.join(format!("mpi/tests/{t}.c")))
                .arg(format!("-L{}", dir.display()))
                .args(["-lhurray_coo_mpi", &core, "-lhurray_coo", "-lm"])
                .arg(format!("-Wl,-rpath,{}", dir.display()))
                .arg(format!("-Wl,-rpath,{}", lib.display()))
                .arg("-o")
                .arg(&exe));
            for n in [1, 2, 4] {
                let out = run(Command::new("mpirun.mpich")
                    .args(["-n", &n.to_string()])
                    .arg(&exe));
                assert!(
                    out.contains(&format!("{n} ranks: ok (0 failed checks)")),
                    "MPICH {t}: {out}"
                );
            }
        }
    } else {
        assert!(
            std::env::var_os("CI").is_none(),
            "MPICH (mpicc.mpich, mpirun.mpich) is missing: scripts/test.sh installs it"
        );
        eprintln!("SKIPPED: the MPICH build (no mpicc.mpich)");
    }

    // The README's MPI example (the block tagged `c mpi`), built and run.
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let block = readme
        .split("```c mpi\n")
        .nth(1)
        .and_then(|b| b.split("\n```").next())
        .expect("the README has a `c mpi` block");
    let src = work.join("readme_mpi.c");
    std::fs::write(&src, block).unwrap();
    let example = work.join("readme_mpi");
    run(Command::new("mpicc")
        .args(["-std=c11", "-Wall", "-Wextra", "-Werror"])
        .arg(&src)
        .args(flags.split_whitespace())
        .arg(format!("-Wl,-rpath,{}", lib.display()))
        .arg("-o")
        .arg(&example));
    let out = mpirun(4, &example);
    assert!(out.contains("4 ranks, 4 entries, max 4"), "{out}");

    // CMake find_package, the way a CMake project links it.
    let build = work.join("cmake-build");
    run(Command::new("cmake")
        .arg("-S")
        .arg(root.join("mpi/tests/cmake"))
        .arg("-B")
        .arg(&build)
        .arg(format!("-DCMAKE_PREFIX_PATH={}", prefix.display()))
        .arg(format!("-DTEST_SOURCE={}", test.display()))
        .arg(format!("-DCMAKE_BUILD_RPATH={}", lib.display())));
    run(Command::new("cmake").arg("--build").arg(&build));
    let out = mpirun(2, &build.join("test_validate"));
    assert!(out.contains("2 ranks: ok (0 failed checks)"), "{out}");
}
