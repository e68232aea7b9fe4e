//! The shipped build configuration keeps the panic barrier working and ships
//! all three library kinds. Cargo.toml is read as TOML (not matched as
//! text), so a rewording, a new profile or an inherited setting is seen.

use toml::Table;

fn manifest() -> Table {
    include_str!("../Cargo.toml")
        .parse()
        .expect("Cargo.toml parses")
}

#[test]
fn no_profile_aborts_on_panic() {
    let m = manifest();
    let empty = Table::new();
    let profiles = m
        .get("profile")
        .and_then(|p| p.as_table())
        .unwrap_or(&empty);
    // The shipped profiles must be declared unwinding explicitly.
    for name in ["release", "dev"] {
        let p = profiles.get(name).and_then(|p| p.as_table());
        assert_eq!(
            p.and_then(|p| p.get("panic")).and_then(|v| v.as_str()),
            Some("unwind"),
            "[profile.{name}] must say panic = \"unwind\""
        );
    }
    for (name, p) in profiles {
        let panic = p.get("panic").and_then(|v| v.as_str());
        assert_ne!(
            panic,
            Some("abort"),
            "[profile.{name}] panic = \"abort\" would let a panic kill the host process \
             instead of becoming HURRAY_ERR_INTERNAL_PANIC"
        );
    }
}

#[test]
fn builds_shared_static_and_rust_libraries() {
    let m = manifest();
    let lib = m["lib"].as_table().expect("[lib]");
    assert_eq!(lib["name"].as_str(), Some("hurray_coo"));
    let kinds: Vec<&str> = lib["crate-type"]
        .as_array()
        .expect("crate-type")
        .iter()
        .filter_map(|v| v.as_str())
        .collect();
    for kind in ["cdylib", "staticlib", "rlib"] {
        assert!(kinds.contains(&kind), "crate-type lacks {kind}: {kinds:?}");
    }
}
