//! The design notes stay true: every test that `docs/design.md` names as the
//! check of a MUST of the specification exists (a Rust test function, or a
//! C test registered in its suite).

use std::path::Path;

fn read(rel: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(rel))
        .unwrap_or_else(|e| panic!("{rel}: {e}"))
}

#[test]
fn every_test_named_in_the_must_table_exists() {
    let design = read("docs/design.md");
    let start = design
        .find("## Every MUST that touches COO")
        .expect("the MUST table section");
    let table = &design[start..];
    let table = &table[..table[3..].find("\n## ").map_or(table.len(), |e| e + 3)];
    let c_sources: String = [
        "test_api.c",
        "test_descriptor.c",
        "test_file.c",
        "test_hostile.c",
        "test_shard.c",
        "test_threads.c",
    ]
    .iter()
    .map(|f| read(&format!("c_tests/c/{f}")))
    .collect();
    let mut rows = 0;
    let mut named = 0;
    for line in table
        .lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| spec"))
    {
        let Some(tests) = line.trim_end_matches('|').rsplit('|').next() else {
            continue;
        };
        rows += 1;
        for word in tests.split([',', ' ', '(', ')']) {
            if let Some((file, func)) = word.split_once("::") {
                let src = read(&format!("tests/{file}.rs"));
                assert!(
                    src.contains(&format!("fn {func}(")),
                    "docs/design.md names {word}, which tests/{file}.rs does not define"
                );
                named += 1;
            } else if word.starts_with("test_") {
                let registered = format!("{word}}}");
                assert!(
                    c_sources.contains(&format!("static int {word}(void)"))
                        && c_sources.contains(&registered),
                    "docs/design.md names the C test {word}, which is not defined and registered"
                );
                named += 1;
            }
        }
    }
    assert!(rows >= 40, "only {rows} MUST rows");
    assert!(named >= rows, "{named} tests named for {rows} rules");
}
