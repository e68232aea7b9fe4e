//! The core's layers read top-down: no cycle between the top-level modules
//! of `src/` (an arrow is a `crate::module` path in a file of another
//! module, outside its tests; `ffi`, the C boundary over everything, and
//! `lib.rs` are left out). docs/design.md says so; this keeps it true.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The top-level modules each module of `src/` uses.
fn arrows() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut stack = vec![src.clone()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
                continue;
            }
            if p.extension().is_none_or(|x| x != "rs") {
                continue;
            }
            let rel = p.strip_prefix(&src).unwrap();
            let first = rel.iter().next().unwrap().to_string_lossy().into_owned();
            let module = first.trim_end_matches(".rs").to_string();
            if matches!(module.as_str(), "lib" | "main" | "ffi") {
                continue;
            }
            let text = std::fs::read_to_string(&p).unwrap();
            // Outside the tests, without comments.
            let code = text.split("#[cfg(test)]").next().unwrap_or("");
            let uses = out.entry(module.clone()).or_default();
            for line in code.lines() {
                let line = line.split("//").next().unwrap_or("");
                let mut rest = line;
                while let Some(at) = rest.find("crate::") {
                    rest = &rest[at + "crate::".len()..];
                    let names: Vec<String> = if let Some(group) = rest.strip_prefix('{') {
                        group
                            .split('}')
                            .next()
                            .unwrap_or("")
                            .split(',')
                            .map(|n| n.trim().split("::").next().unwrap_or("").to_string())
                            .collect()
                    } else {
                        vec![rest
                            .split(|c: char| !c.is_alphanumeric() && c != '_')
                            .next()
                            .unwrap_or("")
                            .to_string()]
                    };
                    for n in names {
                        if !n.is_empty() && n != module && n != "ffi" {
                            uses.insert(n);
                        }
                    }
                }
            }
        }
    }
    let known: BTreeSet<String> = out.keys().cloned().collect();
    for v in out.values_mut() {
        v.retain(|m| known.contains(m));
    }
    out
}

/// A cycle of `graph`, as the modules along it, if there is one.
fn a_cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        g: &BTreeMap<String, BTreeSet<String>>,
        m: &str,
        state: &mut BTreeMap<String, u8>,
        path: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        state.insert(m.to_string(), 1);
        path.push(m.to_string());
        for n in g.get(m).into_iter().flatten() {
            match state.get(n.as_str()).copied().unwrap_or(0) {
                1 => {
                    let from = path.iter().position(|x| x == n).unwrap();
                    let mut c = path[from..].to_vec();
                    c.push(n.clone());
                    return Some(c);
                }
                0 => {
                    if let Some(c) = visit(g, n, state, path) {
                        return Some(c);
                    }
                }
                _ => {}
            }
        }
        path.pop();
        state.insert(m.to_string(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for m in graph.keys() {
        if state.get(m.as_str()).copied().unwrap_or(0) == 0 {
            if let Some(c) = visit(graph, m, &mut state, &mut Vec::new()) {
                return Some(c);
            }
        }
    }
    None
}

#[test]
fn no_cycle_between_the_top_level_modules_of_src() {
    let g = arrows();
    assert!(g.len() >= 8, "only {} modules read: {g:?}", g.len());
    assert!(g["io"].contains("coo"), "the reader misses arrows: {g:?}");
    if let Some(c) = a_cycle(&g) {
        panic!("a cycle between modules of src/: {}", c.join(" -> "));
    }
}

#[test]
fn the_cycle_check_finds_a_cycle() {
    let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    g.entry("a".into()).or_default().insert("b".into());
    g.entry("b".into()).or_default().insert("c".into());
    g.entry("c".into()).or_default().insert("a".into());
    assert_eq!(a_cycle(&g).unwrap(), ["a", "b", "c", "a"]);
    g.get_mut("c").unwrap().clear();
    assert!(a_cycle(&g).is_none());
}
