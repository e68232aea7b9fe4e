//! Builds with `make`, then installs into a fresh prefix with `make install`
//! run the way `sudo make install` runs it (no cargo on PATH: installing only
//! copies what `make` built), and builds consumers the way users do: C with
//! pkg-config (shared, static, and fully static with `cc -static`), C++
//! with CMake find_package, Fortran from the installed module source; then
//! runs each. The prefix is moved after installing (the pkg-config and
//! CMake files are relocatable), and nothing installed carries debug
//! information. Needs make, pkg-config,
//! cmake and gfortran (scripts/test.sh installs them): without them the test
//! fails and says so; HURRAY_SKIP_CONSUMERS=1 skips it explicitly.

use std::path::Path;
use std::process::Command;

use hurray_coo_c_tests::{have, repo_root as root, run_as_user as run, target_dir};

/// PATH without the directories that hold a `cargo`.
fn path_without_cargo() -> String {
    let path = std::env::var("PATH").unwrap_or_default();
    path.split(':')
        .filter(|d| !Path::new(d).join("cargo").exists())
        .collect::<Vec<_>>()
        .join(":")
}

#[test]
fn installed_library_serves_c_cpp_and_fortran_consumers() {
    let missing: Vec<&str> = ["make", "pkg-config", "cmake", "gfortran", "cc", "c++"]
        .into_iter()
        .filter(|t| !have(t))
        .collect();
    if std::env::var_os("HURRAY_SKIP_CONSUMERS").is_some_and(|v| v == "1") {
        eprintln!("SKIPPED (HURRAY_SKIP_CONSUMERS=1): the install-prefix consumer test");
        return;
    }
    assert!(
        missing.is_empty(),
        "the consumer test needs {missing:?}: run scripts/test.sh (it installs them), or set \
         HURRAY_SKIP_CONSUMERS=1 to skip this test on purpose"
    );
    let root = root();
    let work = target_dir().join("consumers");
    let _ = std::fs::remove_dir_all(&work);
    // Installed into one prefix, then moved: the packages are relocatable.
    let installed = work.join("installed-prefix");
    let prefix = work.join("prefix");
    std::fs::create_dir_all(&installed).unwrap();
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let target = format!("CARGO_TARGET_DIR={}", target_dir().display());
    run(Command::new("make")
        .current_dir(&root)
        .arg("PROFILE=dev")
        .arg(format!("CARGO={cargo}"))
        .arg(&target));
    // As `sudo make install` runs it: no cargo anywhere on PATH.
    let no_cargo = "CARGO=/nonexistent/cargo";
    run(Command::new("make")
        .current_dir(&root)
        .env("PATH", path_without_cargo())
        .arg("install")
        .arg(format!("PREFIX={}", installed.display()))
        .arg("PROFILE=dev")
        .arg(no_cargo)
        .arg(&target));
    std::fs::rename(&installed, &prefix).unwrap();
    // Nothing built and no cargo: a message that says what to do.
    let empty = work.join("empty-target");
    let out = Command::new("make")
        .current_dir(&root)
        .env("PATH", path_without_cargo())
        .arg("install")
        .arg(format!("PREFIX={}", work.join("unused").display()))
        .arg("PROFILE=dev")
        .arg(no_cargo)
        .arg(format!("CARGO_TARGET_DIR={}", empty.display()))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success(),
        "make install with nothing built must fail"
    );
    assert!(
        err.contains("is not on PATH") && err.contains("make && sudo make install"),
        "{err}"
    );

    // The installed files, with the soname and its links.
    let lib = prefix.join("lib");
    let abi = hurray_coo::ffi::HURRAY_COO_ABI_VERSION;
    use hurray_coo::ffi::{
        HURRAY_COO_VERSION_MAJOR as MAJOR, HURRAY_COO_VERSION_MINOR as MINOR,
        HURRAY_COO_VERSION_PATCH as PATCH,
    };
    let version = format!("{MAJOR}.{MINOR}.{PATCH}");
    for f in [
        format!("lib/libhurray_coo.so.{version}"),
        format!("lib/libhurray_coo.so.{abi}"),
        "lib/libhurray_coo.so".into(),
        "lib/libhurray_coo.a".into(),
        "include/hurray_coo.h".into(),
        "include/hurray_coo.hpp".into(),
        "include/hurray_coo.f90".into(),
        "lib/pkgconfig/hurray_coo.pc".into(),
        "lib/cmake/hurray_coo/hurray_cooConfig.cmake".into(),
        "lib/cmake/hurray_coo/hurray_cooConfigVersion.cmake".into(),
        "bin/hurray-coo".into(),
    ] {
        assert!(prefix.join(&f).exists(), "{f} not installed");
    }
    assert_eq!(
        std::fs::read_link(lib.join(format!("libhurray_coo.so.{abi}"))).unwrap(),
        Path::new(&format!("libhurray_coo.so.{version}"))
    );
    // No debug information in what is installed.
    for f in [
        format!("lib/libhurray_coo.so.{version}"),
        "lib/libhurray_coo.a".into(),
        "bin/hurray-coo".into(),
    ] {
        let sections = run(Command::new("readelf").arg("-S").arg(prefix.join(&f)));
        assert!(
            !sections.contains(".debug_info"),
            "{f} has debug information"
        );
    }
    let soname = run(Command::new("readelf")
        .arg("-d")
        .arg(lib.join(format!("libhurray_coo.so.{version}"))));
    assert!(
        soname.contains(&format!("[libhurray_coo.so.{abi}]")),
        "{soname}"
    );

    let pc_path = lib.join("pkgconfig");
    let pkg = |args: &[&str]| -> Vec<String> {
        run(Command::new("pkg-config")
            .env("PKG_CONFIG_PATH", &pc_path)
            .args(args)
            .arg("hurray_coo"))
        .split_whitespace()
        .map(str::to_owned)
        .collect()
    };
    let src = root.join("tests/consumers");

    // C, shared, flags from pkg-config.
    let c_exe = work.join("consumer_c");
    run(Command::new("cc")
        .arg("-std=c99")
        .arg("-Wall")
        .arg("-Werror")
        .arg(src.join("consumer.c"))
        .args(pkg(&["--cflags", "--libs"]))
        .arg(format!(
            "-Wl,-rpath,{}",
            // pkg-config gives the moved prefix's libdir as
            // .../lib/pkgconfig/../../lib; the same directory.
            std::fs::canonicalize(&pkg(&["--variable=libdir"])[0])
                .unwrap()
                .display()
        ))
        .arg("-o")
        .arg(&c_exe));
    let out = run(&mut Command::new(&c_exe));
    assert!(out.contains("c consumer: (2, 0) = -0.5"), "{out}");
    let ldd = run(Command::new("ldd").arg(&c_exe));
    assert!(
        ldd.contains(&format!("libhurray_coo.so.{abi} => {}", lib.display())),
        "{ldd}"
    );

    // C, static, with pkg-config --static for the private libraries.
    let c_static = work.join("consumer_c_static");
    let mut libs = pkg(&["--libs", "--static"]);
    libs.retain(|f| f != "-lhurray_coo");
    run(Command::new("cc")
        .arg(src.join("consumer.c"))
        .args(pkg(&["--cflags"]))
        .arg(lib.join("libhurray_coo.a"))
        .args(libs)
        .arg("-o")
        .arg(&c_static));
    let out = run(&mut Command::new(&c_static));
    assert!(out.contains("c consumer: (2, 0) = -0.5"), "{out}");
    assert!(!run(Command::new("ldd").arg(&c_static)).contains("libhurray_coo"));

    // A fully static program (cc -static), as zstd users build them: the
    // private libraries pkg-config gives are enough, unwinder included.
    let c_full = work.join("consumer_c_full_static");
    run(Command::new("cc")
        .arg("-static")
        .arg(src.join("consumer.c"))
        .args(pkg(&["--cflags", "--libs", "--static"]))
        .arg("-o")
        .arg(&c_full));
    let out = run(&mut Command::new(&c_full));
    assert!(out.contains("c consumer: (2, 0) = -0.5"), "{out}");
    let ldd = Command::new("ldd").arg(&c_full).output().unwrap();
    let said =
        String::from_utf8_lossy(&ldd.stdout).to_string() + &String::from_utf8_lossy(&ldd.stderr);
    assert!(said.contains("not a dynamic executable"), "{said}");

    // C++ with CMake find_package, shared and static targets.
    let build = work.join("cmake-build");
    run(Command::new("cmake")
        .arg("-S")
        .arg(&src)
        .arg("-B")
        .arg(&build)
        .arg(format!("-DCMAKE_PREFIX_PATH={}", prefix.display())));
    run(Command::new("cmake").arg("--build").arg(&build));
    for exe in ["consumer", "consumer_static"] {
        let out = run(&mut Command::new(build.join(exe)));
        assert!(out.contains("c++ consumer: (3, 3) = 2"), "{out}");
        assert!(
            out.contains("caught HURRAY_ERR_INDEX_OUT_OF_BOUNDS"),
            "{out}"
        );
    }

    // Fortran: compile the installed module source, then the program.
    let fdir = work.join("fortran");
    std::fs::create_dir_all(&fdir).unwrap();
    run(Command::new("gfortran")
        .current_dir(&fdir)
        .args(["-std=f2008", "-Wall", "-Werror", "-c"])
        .arg(prefix.join("include/hurray_coo.f90")));
    for prog in ["seed", "copy_stops", "assemble", "read_csr"] {
        run(Command::new("gfortran")
            .current_dir(&fdir)
            .args(["-std=f2008", "-Wall", "-Werror"])
            .arg(root.join(format!("tests/fortran/{prog}.f90")))
            .arg("hurray_coo.o")
            .args(pkg(&["--libs"]))
            .arg(format!("-Wl,-rpath,{}", lib.display()))
            .arg("-o")
            .arg(prog));
    }
    let out = run(&mut Command::new(fdir.join("seed")));
    for line in [
        "validate: ok",
        "(3, 1) = -0.50",
        "HURRAY_ERR_INDEX_OUT_OF_BOUNDS: query coordinate 5 in dimension 1 is out of bounds \
         (valid 1 to 4) [entries, dimensions and coordinates counted from 1]",
        "HURRAY_ERR_DUPLICATE: entry 3 duplicates entry 2 at (3, 1)",
        "position: entry 3 duplicates entry 2 at (3, 1)",
        "position: line 3, column 3",
        "HURRAY_ERR_INVALID_TYPE: hurray_tensor%create: the values are real64, which store \
         float64 elements, but type_tag is int64",
        "fortran: all checks passed",
    ] {
        assert!(out.contains(line), "fortran output lacks {line:?}:\n{out}");
    }
    let out = run(&mut Command::new(fdir.join("assemble")));
    for line in [
        "error policy: triplet 4 duplicates triplet 3 at (2, 2)",
        "Matrix Market round trip: 4 entries",
        "fortran assemble: all checks passed",
    ] {
        assert!(
            out.contains(line),
            "fortran assemble output lacks {line:?}:\n{out}"
        );
    }
    let out = run(Command::new(fdir.join("read_csr")).current_dir(&fdir));
    for line in [
        "csr: 4 6 6",
        "HURRAY_ERR_IO: no_such_file.mtx: cannot read: No such file or directory",
        "HURRAY_ERR_PARSE: read_csr.mtx: line 3, column 3: column index out of range",
        "fortran read_csr: all checks passed",
    ] {
        assert!(
            out.contains(line),
            "fortran read_csr output lacks {line:?}:\n{out}"
        );
    }
    let copy = Command::new(fdir.join("copy_stops"))
        .env_remove("LD_LIBRARY_PATH")
        .output()
        .unwrap();
    assert!(
        !copy.status.success(),
        "copying a hurray_tensor must stop the program"
    );
    let err = String::from_utf8_lossy(&copy.stderr);
    assert!(err.contains("hurray_tensor cannot be copied"), "{err}");
    assert!(!String::from_utf8_lossy(&copy.stdout).contains("NOT REACHED"));

    // The installed Python module finds the installed library from its
    // own place in the (moved) prefix, as the README says to use it.
    for f in [
        "share/hurray_coo/python/hurray_coo.py",
        "share/hurray_coo/julia/HurrayCOO.jl",
    ] {
        assert!(prefix.join(f).exists(), "{f} not installed");
    }
    let mtx = work.join("m.mtx");
    std::fs::write(
        &mtx,
        "%%MatrixMarket matrix coordinate integer symmetric\n3 3 2\n1 1 4\n3 1 -2\n",
    )
    .unwrap();
    let py = Command::new("python3")
        .env("PYTHONPATH", prefix.join("share/hurray_coo/python"))
        .env_remove("HURRAY_COO_LIB")
        .env_remove("LD_LIBRARY_PATH")
        .arg("-c")
        .arg(format!(
            "import numpy as np, hurray_coo; A = hurray_coo.read_mtx({:?}, value_type=np.float64); \
             print(hurray_coo.library()._name, A.nnz, A.dtype, A[2, 0])",
            mtx.display().to_string()
        ))
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&py.stdout);
    assert!(
        py.status.success(),
        "{}",
        String::from_utf8_lossy(&py.stderr)
    );
    assert!(
        said.contains(&format!("{}", prefix.display())) && said.contains(" 3 float64 -2.0"),
        "{said}"
    );

    // The installed command-line tool runs on its own.
    let out = run(Command::new(prefix.join("bin/hurray-coo")).arg("--version"));
    assert!(out.contains("hurray-coo "), "{out}");

    // make uninstall removes what make install put there.
    run(Command::new("make")
        .current_dir(&root)
        .arg("uninstall")
        .arg(format!("PREFIX={}", prefix.display())));
    assert!(!lib.join("libhurray_coo.a").exists());
    assert!(!prefix.join("bin/hurray-coo").exists());
    assert!(!prefix.join("include/hurray_coo.h").exists());
}
