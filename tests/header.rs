//! The committed header must be exactly what cbindgen generates from the
//! current sources (run scripts/update-header to refresh it).

mod common;

#[test]
fn committed_header_matches_a_fresh_generation() {
    let generated = include_str!(concat!(env!("OUT_DIR"), "/hurray_coo.h"));
    let committed = include_str!("../include/hurray_coo.h");
    if generated != committed {
        let line = generated
            .lines()
            .zip(committed.lines())
            .position(|(a, b)| a != b)
            .map_or(
                generated.lines().count().min(committed.lines().count()),
                |l| l,
            );
        panic!(
            "include/hurray_coo.h is out of date (first difference at line {}); \
             run scripts/update-header and commit the result",
            line + 1
        );
    }
}

#[test]
fn header_has_no_rust_code_fences_or_core_items() {
    let h = include_str!("../include/hurray_coo.h");
    assert!(
        !h.contains("```"),
        "a rustdoc code fence leaked into the header"
    );
    // The header's own HURRAY_MAX_RANK is not the core's MAX_RANK.
    let h = h.replace("HURRAY_MAX_RANK", "");
    for leaked in ["enum Status", "BUFFER_ALIGN", "MAX_RANK", "DYNAMIC_DIM"] {
        assert!(
            !h.contains(leaked),
            "core item {leaked} leaked into the header"
        );
    }
}

/// Every `extern "C"` function of every file under `src/ffi/`, by name.
fn exports() -> Vec<String> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/src/ffi");
    let mut names = Vec::new();
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    for path in files {
        let text = std::fs::read_to_string(&path).unwrap();
        for line in text.lines() {
            let line = line.trim();
            let Some(rest) = line
                .strip_prefix("pub unsafe extern \"C\" fn ")
                .or_else(|| line.strip_prefix("pub extern \"C\" fn "))
            else {
                continue;
            };
            names.push(rest[..rest.find('(').unwrap()].to_owned());
        }
    }
    names
}

#[test]
fn every_export_is_declared_in_the_header() {
    let h = include_str!("../include/hurray_coo.h");
    let names = exports();
    for name in &names {
        assert!(
            name.starts_with("hurray_"),
            "export {name} lacks the hurray_ prefix"
        );
        let declared = [" ", "*"]
            .iter()
            .any(|before| h.contains(&format!("{before}{name}(")));
        assert!(declared, "{name} is not declared in the header");
    }
    // The descriptor functions live in src/ffi/io.rs: a scan that missed a
    // file would miss them.
    for must in [
        "hurray_coo_create",
        "hurray_coo_encode_descriptor",
        "hurray_descriptor_inspect",
    ] {
        assert!(
            names.iter().any(|n| n == must),
            "{must} not found under src/ffi/"
        );
    }
    // And every function the header declares is an export.
    let declared = h
        .lines()
        .filter_map(|l| {
            let l = l.trim_start();
            let open = l.find('(')?;
            let name = l[..open].rsplit([' ', '*']).next()?;
            let code = !l.starts_with(['#', '*', '/']) && !l.starts_with("typedef");
            (code && name.starts_with("hurray_")).then(|| name.to_owned())
        })
        .collect::<Vec<_>>();
    for name in &declared {
        assert!(
            names.contains(name),
            "the header declares {name}, which no file exports"
        );
    }
    assert_eq!(
        declared.len(),
        names.len(),
        "exports vs header declarations"
    );
}

/// One uniform doc shape: every function's comment says how it may be used
/// from threads, and every fallible one which statuses it returns.
#[test]
fn every_function_documents_threads_and_statuses() {
    let h = include_str!("../include/hurray_coo.h");
    let mut checked = 0;
    for item in h.split("\n\n") {
        let code: Vec<&str> = item
            .lines()
            .filter(|l| !l.trim_start().starts_with(['/', '*']))
            .collect();
        let Some(first) = code.first() else { continue };
        if first.starts_with(['#', '}'])
            || first.starts_with("typedef")
            || !first.contains("hurray_")
        {
            continue;
        }
        let Some(open) = first.find('(') else {
            continue;
        };
        let name = first[..open].rsplit([' ', '*']).next().unwrap();
        assert!(
            item.contains("Thread safety"),
            "{name}: no \"Thread safety\" in its doc"
        );
        if first.starts_with("hurray_status ") {
            assert!(
                item.contains("Returns HURRAY_OK"),
                "{name}: its statuses are not listed"
            );
        }
        checked += 1;
    }
    assert!(checked >= 31, "only {checked} functions checked");
}

/// The API's shape (docs/design.md, API conventions): one export per
/// operation, options in one value, about 8 parameters at most.
#[test]
fn one_create_no_option_twins_and_no_wide_exports() {
    let h = include_str!("../include/hurray_coo.h");
    let funcs = common::header::functions(h);
    assert!(funcs.len() > 60, "only {} functions parsed", funcs.len());
    for (name, types) in &funcs {
        let params = types.len() - 1;
        assert!(params <= 8, "{name} takes {params} parameters (at most 8)");
        assert!(
            !name.ends_with("_threads") && !name.ends_with("_with_release"),
            "{name} is a one-option variant: the option belongs in the operation's options"
        );
    }
    let creates: Vec<&String> = funcs
        .keys()
        .filter(|n| n.starts_with("hurray_coo_create"))
        .collect();
    assert_eq!(creates, ["hurray_coo_create"], "one way to create a handle");
}
