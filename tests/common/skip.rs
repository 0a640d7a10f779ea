//! A test that cannot run here says so and passes, unless
//! SCHEDTOP_REQUIRE_ALL=1 (CI), where a skip is a failure.
pub fn skip(why: &str) {
    if std::env::var("SCHEDTOP_REQUIRE_ALL").as_deref() == Ok("1") {
        panic!("{why}, and SCHEDTOP_REQUIRE_ALL=1 makes this a failure");
    }
    eprintln!("SKIPPED: {why} (SCHEDTOP_REQUIRE_ALL=1 makes this fail)");
}

/// A BPF test that cannot load its programs (or lacks root or kernel BTF
/// to try): a failure with SCHEDTOP_REQUIRE_BPF=1, else `skip`. Every
/// test that loads BPF ends up here rather than returning early on its
/// own, so none can pass without having run where CI requires BPF.
pub fn bpf_unavailable(why: &str) {
    if std::env::var("SCHEDTOP_REQUIRE_BPF").as_deref() == Ok("1") {
        panic!("BPF required (SCHEDTOP_REQUIRE_BPF=1), but {why}");
    }
    skip(why);
}
