//! The language bindings agree with the C header:
//! - every Fortran constant of include/hurray_coo.f90 has the header's value,
//!   and every header constant is in the Fortran module;
//! - every exported function has a Fortran interface with as many arguments;
//! - every ccall of the Julia module (bindings/julia/HurrayCOO.jl) names a declared function with
//!   the same return and argument types.

mod common;

use std::collections::BTreeMap;

const HEADER: &str = include_str!("../include/hurray_coo.h");
const FORTRAN: &str = include_str!("../include/hurray_coo.f90");
const JULIA: &str = include_str!("../bindings/julia/HurrayCOO.jl");

fn header_defines() -> BTreeMap<String, i64> {
    common::header::defines(HEADER)
}

fn fortran_parameters() -> BTreeMap<String, i64> {
    FORTRAN
        .lines()
        .filter(|l| l.contains("parameter"))
        .filter_map(|l| {
            let (_, decl) = l.split_once("::")?;
            let (name, value) = decl.split_once('=')?;
            let value = value.trim();
            let v = if let Some(hex) = value.strip_prefix("int(z'") {
                i64::from_str_radix(&hex[..hex.find('\'')?], 16).ok()?
            } else {
                value.split('_').next()?.trim().parse().ok()?
            };
            Some((name.trim().to_owned(), v))
        })
        .collect()
}

#[test]
fn fortran_constants_match_the_header() {
    let c = header_defines();
    let f = fortran_parameters();
    assert!(c.len() >= 70, "only {} header constants parsed", c.len());
    // Fortran is case-insensitive: constants named like a function carry _VALUE.
    let fortran_name = |n: &str| {
        if HEADER.contains(&format!(" {}(", n.to_lowercase())) {
            format!("{n}_VALUE")
        } else {
            n.to_owned()
        }
    };
    for (name, value) in &c {
        let fname = fortran_name(name);
        assert_eq!(
            f.get(&fname),
            Some(value),
            "Fortran {fname} differs from the header's {value}"
        );
    }
    assert_eq!(
        f.len(),
        c.len(),
        "the Fortran module has constants the header lacks"
    );
}

/// Return and argument types of every function declared in the header.
fn header_functions() -> BTreeMap<String, Vec<String>> {
    common::header::functions(HEADER)
}

#[test]
fn fortran_interfaces_cover_every_export() {
    let funcs = header_functions();
    assert!(funcs.len() >= 29, "only {} functions parsed", funcs.len());
    let flat: String = FORTRAN.replace("&\n", " ");
    for (name, types) in &funcs {
        let marker = format!("bind(C, name=\"{name}\")");
        let at = flat
            .find(&marker)
            .unwrap_or_else(|| panic!("no Fortran interface for {name}"));
        // The procedure header is the text before the marker on its statement.
        let stmt_start = flat[..at].rfind('\n').unwrap();
        let stmt = &flat[stmt_start..at];
        let proc_at = stmt
            .find(&format!("function {name}("))
            .or_else(|| stmt.find(&format!("subroutine {name}(")))
            .unwrap_or_else(|| panic!("{name}: interface header not found"));
        let stmt = &stmt[proc_at..];
        let params = &stmt[stmt.find('(').unwrap() + 1..stmt.rfind(')').unwrap()];
        let count = params.split(',').filter(|p| !p.trim().is_empty()).count();
        assert_eq!(
            count,
            types.len() - 1,
            "{name}: Fortran has {count} arguments"
        );
    }
}

/// Canonical form of a C type: no const/struct, no spaces.
fn c_canon(t: &str) -> String {
    t.replace("const ", "")
        .replace("struct ", "")
        .replace(' ', "")
}

/// Whether a Julia ccall type matches a (canonical) C type.
fn julia_matches(j: &str, c: &str) -> bool {
    let scalar = |j: &str| -> Option<&str> {
        Some(match j {
            "Int32" => "int32_t",
            "UInt8" => "uint8_t",
            "UInt32" => "uint32_t",
            "UInt64" => "uint64_t",
            "Csize_t" => "size_t",
            "Bool" => "bool",
            "Cdouble" => "double",
            "Cvoid" => "void",
            _ => return None,
        })
    };
    let c = if c == "hurray_status" { "int32_t" } else { c };
    if let Some(s) = scalar(j) {
        return s == c;
    }
    match j {
        "Cstring" => c == "char*",
        "Ptr{Cvoid}" => c.ends_with('*') && !c.ends_with("**"),
        "Ref{Ptr{Cvoid}}" | "Ptr{Ptr{Cvoid}}" => c.ends_with("**"),
        _ => {
            let inner = j
                .strip_prefix("Ptr{")
                .or_else(|| j.strip_prefix("Ref{"))
                .and_then(|r| r.strip_suffix('}'));
            match inner.and_then(scalar) {
                Some(s) => c == format!("{s}*"),
                None => false,
            }
        }
    }
}

/// Split a Julia tuple body on top-level commas.
fn split_top(s: &str) -> Vec<String> {
    let (mut depth, mut cur, mut out) = (0, String::new(), Vec::new());
    for ch in s.chars() {
        match ch {
            '{' | '(' => depth += 1,
            '}' | ')' => depth -= 1,
            _ => {}
        }
        if ch == ',' && depth == 0 {
            out.push(cur.trim().to_owned());
            cur.clear();
        } else {
            cur.push(ch);
        }
    }
    if !cur.trim().is_empty() {
        out.push(cur.trim().to_owned());
    }
    out
}

#[test]
fn julia_ccalls_match_the_header() {
    let block = JULIA;
    let funcs = header_functions();
    let mut checked = 0;
    let mut rest = block;
    while let Some(at) = rest.find("ccall((:") {
        rest = &rest[at + "ccall((:".len()..];
        let name = &rest[..rest.find(',').unwrap()];
        let after = &rest[rest.find("),").unwrap() + 2..];
        let ret = after[..after.find(',').unwrap()].trim();
        let tuple_start = after.find('(').unwrap();
        let mut depth = 0;
        let mut end = tuple_start;
        for (i, ch) in after[tuple_start..].char_indices() {
            match ch {
                '(' => depth += 1,
                ')' => {
                    depth -= 1;
                    if depth == 0 {
                        end = tuple_start + i;
                        break;
                    }
                }
                _ => {}
            }
        }
        let args = split_top(&after[tuple_start + 1..end].replace('\n', " "));
        let c = funcs
            .get(name)
            .unwrap_or_else(|| panic!("Julia calls {name}, which the header does not declare"));
        let c: Vec<String> = c.iter().map(|t| c_canon(t)).collect();
        assert!(
            julia_matches(ret, &c[0]),
            "{name}: Julia returns {ret}, C returns {}",
            c[0]
        );
        assert_eq!(args.len(), c.len() - 1, "{name}: argument count");
        for (k, (j, ct)) in args.iter().zip(&c[1..]).enumerate() {
            assert!(
                julia_matches(j, ct),
                "{name} argument {k}: Julia {j} vs C {ct}"
            );
        }
        checked += 1;
    }
    assert!(checked >= 6, "only {checked} ccalls checked");
}

#[test]
fn the_julia_checker_catches_a_wrong_type() {
    assert!(!julia_matches("UInt32", "uint64_t"));
    assert!(!julia_matches("Ptr{UInt64}", "uint64_t**"));
    assert!(julia_matches("Ref{Ptr{Cvoid}}", "hurray_coo**"));
    assert!(julia_matches("Ptr{Cvoid}", "hurray_coo*"));
    assert!(!julia_matches("Ptr{Cvoid}", "hurray_coo**"));
    assert!(julia_matches("Int32", "hurray_status"));
}

/// The Julia module, split into its top-level `function`s (name,
/// body).
fn julia_functions() -> Vec<(String, String)> {
    let block = JULIA;
    let mut out = Vec::new();
    for part in block.split("\nfunction ").skip(1) {
        let name = part[..part.find('(').unwrap()].trim().to_string();
        let body = part[..part.find("\nend").unwrap_or(part.len())].to_string();
        out.push((name, body));
    }
    out
}

#[test]
fn julia_functions_that_export_values_check_the_element_type_first() {
    // Values come back typed (Vector{Float64}): a function that exports them
    // must check the handle's element type before, or an integer or pattern
    // file's values would be read as doubles.
    let mut exporters = 0;
    for (name, body) in julia_functions() {
        if let Some(export) = body.find(":hurray_coo_export_compressed") {
            exporters += 1;
            let check = body.find(":hurray_coo_type_tag");
            assert!(
                check.is_some_and(|c| c < export) && body.contains("0x04"),
                "Julia's {name} exports values without checking the element type first"
            );
        }
    }
    assert!(exporters >= 1, "no Julia function exports values");
}
