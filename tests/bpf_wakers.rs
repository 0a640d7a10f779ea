//! Who woke each thread, live with the real probes, against workloads
//! whose wakers are known (the checks are the kernel matrix's own,
//! examples/guest_check/wakers.rs): a pipe ping-pong pair, a nanosleep loop
//! beside a spinner, a futex/pipe chain; for every thread the wakers sum
//! exactly to the wakeups counted and no pair is lost.
mod common;

#[allow(dead_code)]
#[path = "../examples/guest_check/wakers.rs"]
mod wakers;

use common::*;

#[test]
fn ping_pong_pair_wake_each_other_once_per_write() {
    let _g = serial();
    if wakers::allowed_cpus().len() < 2 {
        skip::skip("the ping-pong check needs 2 CPUs");
        return;
    }
    let Some(mut src) = bpf_source(vec![getpid()]) else {
        return;
    };
    match wakers::ping_pong(&mut src) {
        Ok(line) => eprintln!("{line}"),
        Err(e) => panic!("{e}"),
    }
}

#[test]
fn nanosleep_is_woken_by_the_timer_interrupt_not_the_spinner() {
    let _g = serial();
    let Some(mut src) = bpf_source(vec![getpid()]) else {
        return;
    };
    match wakers::nanosleep_timer(&mut src) {
        Ok(line) => eprintln!("{line}"),
        Err(e) => panic!("{e}"),
    }
}

#[test]
fn chain_a_is_woken_by_b_and_b_by_c() {
    let _g = serial();
    let Some(mut src) = bpf_source(vec![getpid()]) else {
        return;
    };
    match wakers::chain(&mut src) {
        Ok((line, _)) => eprintln!("{line}"),
        Err(e) => panic!("{e}"),
    }
}
