//! One source of truth for status codes and type tags: `src/status.rs` and
//! `src/element/types.rs`. Every copy another language needs is checked
//! against them here, name for name and both ways: the generated C header's
//! defines (spelled out in `src/ffi/consts.rs` for cbindgen), the C++
//! `hurray::type` enum, and (through the header, in `tests/bindings.rs` and
//! `tests/abi.rs`) the Fortran module and the ABI record.

mod common;

use std::collections::BTreeMap;

use common::header::defines;
use hurray_coo::{Status, TYPES};

const HEADER: &str = include_str!("../include/hurray_coo.h");
const CPP: &str = include_str!("../include/hurray_coo.hpp");

fn with_prefix(prefix: &str) -> BTreeMap<String, i64> {
    defines(HEADER)
        .into_iter()
        .filter(|(n, _)| n.starts_with(prefix))
        .collect()
}

#[test]
fn header_status_codes_are_the_status_table() {
    let mut header = with_prefix("HURRAY_ERR_");
    header.extend(with_prefix("HURRAY_OK"));
    let table: BTreeMap<String, i64> = Status::ALL
        .iter()
        .map(|s| (s.name().to_str().unwrap().to_owned(), i64::from(s.code())))
        .collect();
    assert!(table.len() >= 30);
    assert_eq!(header, table, "header defines vs src/status.rs");
}

/// `HURRAY_TYPE_<NAME>` for a type name.
fn define_name(type_name: &str) -> String {
    format!("HURRAY_TYPE_{}", type_name.to_uppercase())
}

#[test]
fn header_type_tags_are_the_type_table() {
    let header = with_prefix("HURRAY_TYPE_");
    let table: BTreeMap<String, i64> = TYPES
        .iter()
        .map(|t| (define_name(t.name()), i64::from(t.tag)))
        .collect();
    assert_eq!(table.len(), 26);
    assert_eq!(header, table, "header defines vs src/element/types.rs");
}

/// `name = HURRAY_TYPE_X` rows of `enum class type` in the C++ header.
fn cpp_type_enum() -> BTreeMap<String, String> {
    let start = CPP.find("enum class type").expect("no enum class type");
    let body = &CPP[start..start + CPP[start..].find("};").unwrap()];
    body.lines()
        .filter_map(|l| {
            let (name, value) = l.trim().trim_end_matches(',').split_once(" = ")?;
            Some((name.trim().to_owned(), value.trim().to_owned()))
        })
        .collect()
}

#[test]
fn cpp_type_enum_is_the_type_table() {
    let cpp = cpp_type_enum();
    assert_eq!(cpp.len(), TYPES.len(), "C++ enum rows: {cpp:?}");
    for t in TYPES.iter() {
        // `bool` is a C++ keyword: the enumerator is `boolean`.
        let member = if t.name() == "bool" {
            "boolean"
        } else {
            t.name()
        };
        assert_eq!(
            cpp.get(member),
            Some(&define_name(t.name())),
            "hurray::type::{member} must be {}",
            define_name(t.name())
        );
    }
}

#[test]
fn the_cpp_wrapper_names_no_status_the_table_lacks() {
    let names: Vec<String> = Status::ALL
        .iter()
        .map(|s| s.name().to_str().unwrap().to_owned())
        .collect();
    for word in CPP.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')) {
        if (word.starts_with("HURRAY_ERR_") && word.len() > "HURRAY_ERR_".len())
            || word == "HURRAY_OK"
        {
            assert!(names.iter().any(|n| n == word), "C++ uses unknown {word}");
        }
    }
}
