//! ABI stability: abi/hurray_coo.abi records, for one ABI version, every
//! exported prototype, public struct layout and constant (status codes,
//! flags) of the header. The check fails when a recorded item disappears or
//! changes while HURRAY_COO_ABI_VERSION stays the same, and when the header
//! gains an item that is not recorded yet. Refresh the record (after bumping
//! the ABI version for a break) with:
//!   HURRAY_COO_UPDATE_ABI=1 cargo test --test abi

mod common;

use common::header::strip_comments;
use std::collections::BTreeSet;

const HEADER: &str = include_str!("../include/hurray_coo.h");
const RECORD_PATH: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/abi/hurray_coo.abi");

fn squash(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// (abi version, items) of a header.
fn items(header: &str) -> (u32, BTreeSet<String>) {
    let text = strip_comments(header);
    let mut set = BTreeSet::new();
    let mut abi = 0;
    let mut body = String::new();
    for line in text.lines() {
        let t = line.trim();
        if let Some(def) = t.strip_prefix("#define ") {
            let mut parts = def.split_whitespace();
            let (name, value) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
            if name == "HURRAY_COO_ABI_VERSION" {
                abi = value.parse().unwrap();
            } else if name.starts_with("HURRAY_")
                && !name.starts_with("HURRAY_COO_VERSION")
                && name != "HURRAY_COO_H"
            {
                set.insert(format!("const {name} = {value}"));
            }
        } else if !t.starts_with('#') {
            body.push_str(t);
            body.push(' ');
        }
    }
    for stmt in body.split(';') {
        let s = squash(stmt);
        let s = s.trim_start_matches('}').trim();
        let s = s.strip_prefix("extern \"C\" {").unwrap_or(s).trim();
        if s.is_empty() || s.starts_with("typedef struct") {
            continue;
        }
        if s.contains("hurray_") && (s.contains('(') || s.starts_with("typedef")) {
            set.insert(s.to_owned());
        }
    }
    // Struct bodies: fields in order.
    let squashed = squash(&text);
    let mut rest = squashed.as_str();
    while let Some(i) = rest.find("typedef struct hurray_") {
        let open = rest[i..].find('{').map(|o| i + o);
        let close = rest[i..].find('}').map(|c| i + c);
        match (open, close) {
            (Some(o), Some(c)) if o < c => {
                let name_end = rest[c..].find(';').map_or(rest.len(), |e| c + e);
                set.insert(format!(
                    "struct {} {{{}}}",
                    &rest[c + 1..name_end].trim(),
                    &rest[o + 1..c].trim()
                ));
                rest = &rest[name_end..];
            }
            _ => rest = &rest[i + 1..],
        }
    }
    (abi, set)
}

fn record_text(abi: u32, set: &BTreeSet<String>) -> String {
    let mut s = format!("abi {abi}\n");
    for item in set {
        s.push_str(item);
        s.push('\n');
    }
    s
}

#[test]
fn exported_abi_matches_the_record() {
    let (abi, now) = items(HEADER);
    assert!(abi >= 1, "HURRAY_COO_ABI_VERSION not found");
    assert!(now.iter().any(|i| i.contains("hurray_coo_create(")));
    assert!(now
        .iter()
        .any(|i| i.starts_with("struct hurray_statistics")));
    if std::env::var_os("HURRAY_COO_UPDATE_ABI").is_some() {
        std::fs::write(RECORD_PATH, record_text(abi, &now)).unwrap();
        return;
    }
    let record = std::fs::read_to_string(RECORD_PATH).expect("abi/hurray_coo.abi is missing");
    let mut lines = record.lines();
    let recorded_abi: u32 = lines
        .next()
        .and_then(|l| l.strip_prefix("abi "))
        .and_then(|v| v.parse().ok())
        .expect("first line must be 'abi N'");
    let recorded: BTreeSet<String> = lines.map(str::to_owned).collect();
    if abi == recorded_abi {
        let gone: Vec<&String> = recorded.difference(&now).collect();
        assert!(
            gone.is_empty(),
            "these recorded ABI items disappeared or changed while HURRAY_COO_ABI_VERSION \
             stayed {abi}; bump it (and refresh the record) or restore them:\n{gone:#?}"
        );
    } else {
        assert!(abi > recorded_abi, "HURRAY_COO_ABI_VERSION went down");
    }
    let new: Vec<&String> = now.difference(&recorded).collect();
    assert!(
        new.is_empty() && abi == recorded_abi,
        "the ABI record is out of date; run HURRAY_COO_UPDATE_ABI=1 cargo test --test abi \
         and commit abi/hurray_coo.abi. New items:\n{new:#?}"
    );
}

#[test]
fn the_checker_catches_a_changed_signature() {
    let (abi, now) = items(HEADER);
    let changed = HEADER.replace("uint32_t hurray_coo_rank(", "uint64_t hurray_coo_rank(");
    let (abi2, after) = items(&changed);
    assert_eq!(abi, abi2);
    assert!(now
        .difference(&after)
        .any(|i| i.contains("hurray_coo_rank(")));
    let renamed = HEADER.replace(
        "#define HURRAY_ERR_DUPLICATE -24",
        "#define HURRAY_ERR_DUPLICATE -99",
    );
    assert!(items(&renamed).1 != now);
    let field = HEADER.replace(
        "uint64_t nnz;\n  /**\n   * 1 - nnz",
        "uint32_t nnz;\n  /**\n   * 1 - nnz",
    );
    assert!(items(&field).1 != now, "a struct field change must be seen");
}
