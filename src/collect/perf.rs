//! perf_event_open for the run-queue sampler: one software cpu-clock event
//! per CPU at a fixed frequency.
use std::io;
use std::os::fd::{FromRawFd, OwnedFd};

/// include/uapi/linux/perf_event.h
const PERF_FLAG_FD_CLOEXEC: libc::c_ulong = 8;

/// Open a cpu-clock sampling event on `cpu` (all tasks) at `freq_hz`.
pub fn open_cpu_clock(cpu: u32, freq_hz: u64) -> io::Result<OwnedFd> {
    let mut attr = libbpf_sys::perf_event_attr {
        type_: libbpf_sys::PERF_TYPE_SOFTWARE,
        size: std::mem::size_of::<libbpf_sys::perf_event_attr>() as u32,
        config: libbpf_sys::PERF_COUNT_SW_CPU_CLOCK as u64,
        ..Default::default()
    };
    attr.__bindgen_anon_1.sample_freq = freq_hz;
    attr.set_freq(1);
    // SAFETY: perf_event_open reads one perf_event_attr of the size we give;
    // pid -1 with a cpu means every task on that CPU.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_perf_event_open,
            &attr as *const libbpf_sys::perf_event_attr,
            -1 as libc::pid_t,
            cpu as libc::c_int,
            -1 as libc::c_int,
            PERF_FLAG_FD_CLOEXEC,
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: the syscall returned a new file descriptor that we now own.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as i32) })
}
