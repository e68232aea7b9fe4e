//! Allocation failure reports HURRAY_ERR_ALLOC instead of aborting (C test in
//! a forked child with a capped address space). Its own test binary, so the
//! fork happens with as few threads around as possible.

#[test]
fn allocation_failure_is_an_error_not_an_abort() {
    assert_eq!(hurray_coo_c_tests::alloc_failure(), 0);
}
