//! The shipped build configuration keeps the panic barrier working and ships
//! all three library kinds.

const MANIFEST: &str = include_str!("../Cargo.toml");

#[test]
fn no_profile_aborts_on_panic() {
    let compact: String = MANIFEST.chars().filter(|c| !c.is_whitespace()).collect();
    assert!(
        !compact.contains("panic=\"abort\""),
        "panic = \"abort\" would let a panic kill the host process instead of \
         becoming HURRAY_ERR_INTERNAL_PANIC"
    );
}

#[test]
fn builds_shared_static_and_rust_libraries() {
    let compact: String = MANIFEST.chars().filter(|c| !c.is_whitespace()).collect();
    assert!(compact.contains("crate-type=[\"cdylib\",\"staticlib\",\"rlib\"]"));
    assert!(compact.contains("name=\"hurray_coo\""));
}
