//! The committed header must be exactly what cbindgen generates from the
//! current sources (run scripts/update-header to refresh it).

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
    for leaked in ["enum Status", "BUFFER_ALIGN", "MAX_RANK", "DYNAMIC_DIM"] {
        assert!(
            !h.contains(leaked),
            "core item {leaked} leaked into the header"
        );
    }
}

#[test]
fn every_export_is_declared_in_the_header() {
    let h = include_str!("../include/hurray_coo.h");
    let src = [include_str!("../src/ffi/mod.rs")];
    let mut count = 0;
    for s in src {
        for line in s.lines() {
            let line = line.trim();
            let Some(rest) = line
                .strip_prefix("pub unsafe extern \"C\" fn ")
                .or_else(|| line.strip_prefix("pub extern \"C\" fn "))
            else {
                continue;
            };
            let name = &rest[..rest.find('(').unwrap()];
            assert!(
                name.starts_with("hurray_"),
                "export {name} lacks the hurray_ prefix"
            );
            let declared = [" ", "*"]
                .iter()
                .any(|before| h.contains(&format!("{before}{name}(")));
            assert!(declared, "{name} is not declared in the header");
            count += 1;
        }
    }
    assert!(count >= 18, "found only {count} exports");
}
