//! The C test suites, run by cargo test.

use hurray_coo_c_tests::{
    cpp17, cpp_smoke, run_suite, API, ASSEMBLE, DESCRIPTOR, FILE, HOSTILE, SHARD, TEXT, THREADS,
};

#[test]
fn c_assemble_suite_passes() {
    let (count, failed) = run_suite(&ASSEMBLE);
    assert!(count >= 3, "only {count} C tests found");
    assert!(
        failed.is_empty(),
        "C tests failed: {failed:?} (details on stderr)"
    );
}

#[test]
fn c_file_suite_passes() {
    let (count, failed) = run_suite(&FILE);
    assert!(count >= 2, "only {count} C tests found");
    assert!(
        failed.is_empty(),
        "C tests failed: {failed:?} (details on stderr)"
    );
}

#[test]
fn c_shard_suite_passes() {
    let (count, failed) = run_suite(&SHARD);
    assert!(count >= 2, "only {count} C tests found");
    assert!(
        failed.is_empty(),
        "C tests failed: {failed:?} (details on stderr)"
    );
}

#[test]
fn c_text_suite_passes() {
    let (count, failed) = run_suite(&TEXT);
    assert!(count >= 4, "only {count} C tests found");
    assert!(
        failed.is_empty(),
        "C tests failed: {failed:?} (details on stderr)"
    );
}

#[test]
fn c_api_suite_passes() {
    let (count, failed) = run_suite(&API);
    assert!(count >= 11, "only {count} C tests found");
    assert!(
        failed.is_empty(),
        "C tests failed: {failed:?} (details on stderr)"
    );
}

#[test]
fn c_descriptor_suite_passes() {
    let (count, failed) = run_suite(&DESCRIPTOR);
    assert!(count >= 5, "only {count} C tests found");
    assert!(
        failed.is_empty(),
        "C tests failed: {failed:?} (details on stderr)"
    );
}

#[test]
fn c_hostile_battery_passes() {
    let (count, failed) = run_suite(&HOSTILE);
    assert!(count >= 2);
    assert!(
        failed.is_empty(),
        "C tests failed: {failed:?} (details on stderr)"
    );
}

#[test]
fn c_threads_suite_passes() {
    let (count, failed) = run_suite(&THREADS);
    assert!(count >= 1);
    assert!(failed.is_empty(), "C tests failed: {failed:?}");
}

#[test]
fn header_compiles_and_works_from_cpp() {
    assert_eq!(cpp_smoke(), 0);
}

#[test]
fn cpp17_wrapper_works() {
    assert_eq!(cpp17(), 0);
}
