//! Every code block of the README that is C, C++ or Fortran is compiled
//! against the built library (warnings as errors) and run: a complete
//! program as it stands, a fragment inside a `main` that gives it what it
//! names (a seed handle `coo`; `send`/`receive` over an in-memory wire). The
//! tour's output is checked; every other block must run and exit 0.

use std::path::Path;
use std::process::Command;

use hurray_coo_c_tests::{build_shared_library, profile_dir, repo_root, run};

/// The README's fenced blocks of `lang`, in order.
fn blocks(lang: &str) -> Vec<String> {
    let readme = std::fs::read_to_string(repo_root().join("README.md")).unwrap();
    let mut out = Vec::new();
    let mut current: Option<String> = None;
    for line in readme.lines() {
        match (&mut current, line.trim_start().strip_prefix("```")) {
            (None, Some(tag)) if tag.trim() == lang => current = Some(String::new()),
            (None, Some(_)) => current = Some("\u{0}".into()), // another language
            (Some(b), Some(_)) => {
                if !b.starts_with('\u{0}') {
                    out.push(std::mem::take(b));
                }
                current = None;
            }
            (Some(b), None) => {
                b.push_str(line);
                b.push('\n');
            }
            (None, None) => {}
        }
    }
    out
}

/// Split a C/C++ fragment into its `#include` lines and the rest.
fn hoist_includes(block: &str) -> (String, String) {
    let (inc, body): (Vec<&str>, Vec<&str>) = block
        .lines()
        .partition(|l| l.trim_start().starts_with("#include"));
    (inc.join("\n"), body.join("\n"))
}

/// What a C fragment may name: the seed tensor as `coo`, and a wire.
const C_PRELUDE: &str = r#"
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "hurray_coo.h"
static unsigned char wire[1 << 16];
static size_t chunk_at[16], chunk_len[16], chunks, taken = 1; /* chunk 0: the descriptor */
static void send(const void *p, size_t n) {
    size_t at = chunks ? chunk_at[chunks - 1] + chunk_len[chunks - 1] : 0;
    memcpy(wire + at, p, n); chunk_at[chunks] = at; chunk_len[chunks++] = n;
}
static void receive(void *p, size_t n) {
    if (taken < chunks && chunk_len[taken] == n) memcpy(p, wire + chunk_at[taken++], n);
    else exit(3);
}
static size_t round_up_64(size_t n) { return (n + 63) / 64 * 64; }
_Alignas(64) static const float SEED_V[3] = {1.5f, -0.5f, 2.0f};
_Alignas(64) static const uint64_t SEED_I[6] = {0, 1, 2, 0, 3, 3};
static hurray_coo *seed(void) {
    const uint64_t shape[2] = {4, 4};
    hurray_coo *c = NULL;
    const hurray_coo_parts p = {HURRAY_TYPE_FLOAT32, 2, shape, 3, true, SEED_V, 12, SEED_I, 48};
    if (hurray_coo_create(&p, NULL, &c))
        exit(2);
    return c;
}
"#;

fn compile_and_run(compiler: &[&str], src_name: &str, source: &str, lib_dir: &Path) -> String {
    let work = profile_dir().join("readme-blocks");
    std::fs::create_dir_all(&work).unwrap();
    let src = work.join(src_name);
    std::fs::write(&src, source).unwrap();
    let exe = work.join(src_name.replace('.', "_"));
    run(Command::new(compiler[0])
        .args(&compiler[1..])
        .arg(format!("-I{}", repo_root().join("include").display()))
        .arg(&src)
        .arg(format!("-L{}", lib_dir.display()))
        .arg("-lhurray_coo")
        .arg("-lm")
        .arg(format!("-Wl,-rpath,{}", lib_dir.display()))
        .arg("-o")
        .arg(&exe));
    run(Command::new(&exe)
        .env_remove("LD_LIBRARY_PATH")
        .current_dir(&work))
}

#[test]
fn readme_c_and_cpp_blocks_compile_and_run() {
    let lib = build_shared_library();
    let c = blocks("c");
    assert!(c.len() >= 2, "README C blocks: {}", c.len());
    let strict = ["cc", "-std=c11", "-Wall", "-Wextra", "-Werror", "-pedantic"];
    for (k, block) in c.iter().enumerate() {
        if block.contains("int main(") {
            let out = compile_and_run(&strict, &format!("readme_{k}.c"), block, &lib);
            if block.contains("poisson.mtx") {
                // The first solve: read, CSR, CG.
                for line in [
                    "poisson.mtx: 144 x 144, symmetric 1, 672 entries after mirroring",
                    "CG converged in ",
                ] {
                    assert!(
                        out.contains(line),
                        "the first solve prints {out:?}, lacks {line:?}"
                    );
                }
            }
            if block.contains("hurray_coo_lookup_f64(coo, q, 2, &d, NULL)") {
                for line in [
                    "(2, 0) = -0.5\n",
                    "HURRAY_ERR_INDEX_OUT_OF_BOUNDS: query coordinate 4 in dimension 0",
                    "rank 2, nnz 3, sorted 1, 12 value bytes, borrowed 1",
                ] {
                    assert!(
                        out.contains(line),
                        "the tour prints {out:?}, lacks {line:?}"
                    );
                }
            }
            if block.contains("tiny.mtx") {
                for line in [
                    "symmetric 1, nnz 4\n",
                    "bad.mtx: line 3, column 3: column index out of range: the matrix has 2 \
                     columns, counted from 1 (found '3')",
                ] {
                    assert!(
                        out.contains(line),
                        "the files example prints {out:?}, lacks {line:?}"
                    );
                }
            }
            if block.contains("hurray_coo_assemble") {
                // The FEM example: assembled, solved, re-assembled, solved.
                assert!(
                    out.contains("4608 triplets -> 1889 non-zeros; CG:"),
                    "{out}"
                );
                assert!(
                    !out.contains("CG: -1 iterations"),
                    "CG did not converge:\n{out}"
                );
                assert!(out.contains("re-assembled through the plan; CG:"), "{out}");
            }
        } else {
            // The fragment's own includes (the prelude has the usual ones).
            let (inc, body) = hoist_includes(block);
            let source = format!(
                "{C_PRELUDE}\n{inc}\nint main(void) {{\n    hurray_coo *coo = seed();\n{body}\n    \
                 hurray_coo_free(coo);\n    return 0;\n}}\n"
            );
            let fragment = ["cc", "-std=c11", "-Wall", "-Werror", "-Wno-unused"];
            compile_and_run(&fragment, &format!("readme_{k}.c"), &source, &lib);
        }
    }
    let cpp = blocks("cpp");
    assert!(!cpp.is_empty());
    for (k, block) in cpp.iter().enumerate() {
        let (inc, body) = hoist_includes(block);
        let source =
            format!("#include <cstdio>\n{inc}\nint main() {{\n{body}\n    return 0;\n}}\n");
        let out = compile_and_run(
            &["c++", "-std=c++17", "-Wall", "-Werror", "-Wno-unused"],
            &format!("readme_{k}.cpp"),
            &source,
            &lib,
        );
        assert!(out.contains("HURRAY_ERR_INDEX_OUT_OF_BOUNDS"), "{out}");
    }
}

#[test]
fn readme_fortran_blocks_compile_and_run() {
    if std::env::var_os("HURRAY_SKIP_CONSUMERS").is_some_and(|v| v == "1") {
        eprintln!("SKIPPED (HURRAY_SKIP_CONSUMERS=1): gfortran README block");
        return;
    }
    let lib = build_shared_library();
    let work = profile_dir().join("readme-blocks");
    std::fs::create_dir_all(&work).unwrap();
    run(Command::new("gfortran")
        .current_dir(&work)
        .args(["-std=f2008", "-c"])
        .arg(repo_root().join("include/hurray_coo.f90")));
    let fortran = blocks("fortran");
    assert!(!fortran.is_empty());
    for (k, block) in fortran.iter().enumerate() {
        let src = work.join(format!("readme_{k}.f90"));
        std::fs::write(&src, format!("program readme\n{block}end program readme\n")).unwrap();
        let exe = work.join(format!("readme_{k}_f90"));
        run(Command::new("gfortran")
            .current_dir(&work)
            .args(["-std=f2008", "-Wall", "-Werror", "-Wno-unused"])
            .arg(&src)
            .arg("hurray_coo.o")
            .arg(format!("-L{}", lib.display()))
            .arg("-lhurray_coo")
            .arg(format!("-Wl,-rpath,{}", lib.display()))
            .arg("-o")
            .arg(&exe));
        let out = run(Command::new(&exe).env_remove("LD_LIBRARY_PATH"));
        assert!(out.contains("-0.5"), "{out}");
    }
}
