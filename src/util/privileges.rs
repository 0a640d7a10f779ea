//! Capabilities: whether this process may load the probes without being
//! root, and giving up what it no longer needs once they are attached
//! (`schedtop serve`, the network-facing daemon).
//!
//! What each step needs (capabilities(7), kernel/bpf/syscall.c):
//! - loading and attaching the tracing programs, the task iterator and
//!   the BTF: CAP_BPF and CAP_PERFMON (Linux 5.8+; CAP_SYS_ADMIN before);
//! - the run-queue sampler's cpu-clock perf events on every CPU:
//!   CAP_PERFMON (perf_event_paranoid >= 1 refuses CPU-wide events without
//!   it);
//! - every interval, on descriptors already open (map lookups and deletes,
//!   BPF_ITER_CREATE on the iterator's link, reads of the iterator): from
//!   Linux 6.5 nothing; before 6.5, with kernel.unprivileged_bpf_disabled
//!   set (Debian's default), every bpf() call checks CAP_BPF, so it stays.
//!
//! Which case holds is measured, not guessed from the version: with the
//! effective set emptied for a moment, a lookup in a throw-away map either
//! works or fails with EPERM.
//!
//! Capabilities belong to each thread, and capset(2) changes only the
//! caller's: the drop runs on every thread of the process (a signal whose
//! handler only makes raw capget/capset calls, as glibc does for setuid),
//! then reads every thread's sets back to check.
use std::collections::BTreeSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use caps::{CapSet, Capability, CapsHashSet};

/// `_LINUX_CAPABILITY_VERSION_3`: two 32-bit words per set.
const CAP_V3: u32 = 0x2008_0522;

#[repr(C)]
struct CapHeader {
    version: u32,
    pid: libc::c_int,
}

#[repr(C)]
#[derive(Clone, Copy, Default)]
struct CapData {
    effective: u32,
    permitted: u32,
    inheritable: u32,
}

/// The capabilities every thread keeps, as a bit mask (read by the handler).
static KEEP: AtomicU64 = AtomicU64::new(0);

/// This thread's sets lowered to `keep`: raw system calls only, so that a
/// signal handler may run it. Returns false if capset refused.
fn lower_this_thread(keep: u64) -> bool {
    let mut hdr = CapHeader {
        version: CAP_V3,
        pid: 0,
    };
    let mut data = [CapData::default(); 2];
    // SAFETY: capget writes two CapData words for version 3.
    if unsafe { libc::syscall(libc::SYS_capget, &mut hdr, data.as_mut_ptr()) } != 0 {
        return false;
    }
    let effective = data[0].effective as u64 | (data[1].effective as u64) << 32;
    // the bounding set can shrink only with CAP_SETPCAP (root); harmless
    // without it: NoNewPrivileges and an empty permitted set leave it unused
    if effective & Capability::CAP_SETPCAP.bitmask() != 0 {
        for cap in 0..64u64 {
            if keep & (1 << cap) == 0 {
                // SAFETY: prctl with plain integers; EINVAL past the last cap
                unsafe { libc::prctl(libc::PR_CAPBSET_DROP, cap as libc::c_ulong, 0, 0, 0) };
            }
        }
    }
    for (word, d) in data.iter_mut().enumerate() {
        let k = (keep >> (32 * word)) as u32;
        d.effective &= k;
        d.permitted &= k;
        d.inheritable &= k;
    }
    hdr.pid = 0;
    // SAFETY: capset reads the header and two CapData words; lowering the
    // caller's own sets (ambient follows permitted and inheritable down).
    unsafe { libc::syscall(libc::SYS_capset, &hdr, data.as_ptr()) == 0 }
}

extern "C" fn on_drop_signal(_: libc::c_int) {
    lower_this_thread(KEEP.load(Ordering::SeqCst));
}

fn drop_signal() -> libc::c_int {
    // clear of glibc's own (SIGRTMIN is already past them)
    libc::SIGRTMIN() + 5
}

fn mask(set: &CapsHashSet) -> u64 {
    set.iter().fold(0, |m, c| m | c.bitmask())
}

fn sorted_names<'a>(set: impl Iterator<Item = &'a Capability>) -> String {
    let sorted: BTreeSet<String> = set.map(|c| c.to_string()).collect();
    sorted.into_iter().collect::<Vec<_>>().join(" ")
}

/// Names of the capabilities in `set`, sorted ("CAP_BPF CAP_PERFMON"),
/// "none", or for root's sets "all" / "all but CAP_SYS_RESOURCE".
pub fn names(set: &CapsHashSet) -> String {
    let all = caps::runtime::thread_all_supported();
    let missing: CapsHashSet = all.difference(set).copied().collect();
    if set.is_empty() {
        "none".into()
    } else if missing.is_empty() {
        "all".into()
    } else if set.len() > all.len() / 2 {
        format!("all but {}", sorted_names(missing.iter()))
    } else {
        sorted_names(set.iter())
    }
}

/// The calling thread's effective capabilities.
pub fn effective() -> CapsHashSet {
    caps::read(None, CapSet::Effective).unwrap_or_default()
}

/// Whether this thread may load the probes: CAP_SYS_ADMIN, or CAP_BPF and
/// CAP_PERFMON (5.8+). Root's effective set has all three.
pub fn can_load_bpf() -> bool {
    let e = effective();
    e.contains(&Capability::CAP_SYS_ADMIN)
        || (e.contains(&Capability::CAP_BPF) && e.contains(&Capability::CAP_PERFMON))
}

/// Whether bpf() on a descriptor already open needs CAP_BPF here: true
/// before Linux 6.5 with unprivileged BPF disabled. Measured with a
/// one-entry map and the effective set emptied for one lookup. Call it
/// while the capabilities that loaded the probes are still effective.
pub fn bpf_calls_need_caps() -> bool {
    // SAFETY: creates a one-entry array map (a new fd we close below).
    let fd = unsafe {
        libbpf_sys::bpf_map_create(
            libbpf_sys::BPF_MAP_TYPE_ARRAY,
            std::ptr::null(),
            4,
            8,
            1,
            std::ptr::null(),
        )
    };
    if fd < 0 {
        // cannot tell: assume the strict case
        return true;
    }
    let before = effective();
    let refused = caps::clear(None, CapSet::Effective).is_ok() && {
        let key = 0u32;
        let mut value = 0u64;
        // SAFETY: key and value have the map's sizes (4 and 8 bytes).
        let r = unsafe {
            libbpf_sys::bpf_map_lookup_elem(
                fd,
                &key as *const u32 as *const libc::c_void,
                &mut value as *mut u64 as *mut libc::c_void,
            )
        };
        r != 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
    };
    let _ = caps::set(None, CapSet::Effective, &before);
    // SAFETY: closing the fd created above.
    unsafe { libc::close(fd) };
    refused
}

/// What the process keeps once its probes are attached: CAP_BPF (or
/// CAP_SYS_ADMIN where that is what it has) where every bpf() call needs
/// it, nothing otherwise.
pub fn needed_after_attach() -> CapsHashSet {
    let mut keep = CapsHashSet::new();
    if bpf_calls_need_caps() {
        let e = effective();
        if e.contains(&Capability::CAP_BPF) {
            keep.insert(Capability::CAP_BPF);
        } else if e.contains(&Capability::CAP_SYS_ADMIN) {
            keep.insert(Capability::CAP_SYS_ADMIN);
        }
    }
    keep
}

fn thread_ids() -> Vec<i32> {
    std::fs::read_dir("/proc/self/task")
        .map(|d| {
            d.filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
                .collect()
        })
        .unwrap_or_default()
}

/// Threads whose permitted set still holds more than `keep`.
fn threads_above(keep: u64) -> Vec<i32> {
    thread_ids()
        .into_iter()
        .filter(|&tid| {
            caps::read(Some(tid), CapSet::Permitted).is_ok_and(|p| mask(&p) & !keep != 0)
        })
        .collect()
}

/// Lower every thread's effective, permitted, inheritable and ambient sets
/// (and the bounding set, where the process may) to `keep`, and check it
/// on every thread.
pub fn keep_only(keep: &CapsHashSet) -> Result<()> {
    let keep = mask(keep);
    KEEP.store(keep, Ordering::SeqCst);
    // SAFETY: the handler only makes raw system calls (async-signal-safe);
    // SA_RESTART resumes the calls it interrupts.
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = on_drop_signal as *const () as libc::sighandler_t;
        sa.sa_flags = libc::SA_RESTART;
        libc::sigemptyset(&mut sa.sa_mask);
        if libc::sigaction(drop_signal(), &sa, std::ptr::null_mut()) != 0 {
            bail!("installing the capability drop's signal handler failed");
        }
    }
    if !lower_this_thread(keep) {
        bail!("capset refused to lower this thread's capabilities");
    }
    // SAFETY: getpid and gettid have no preconditions.
    let (pid, me) = unsafe { (libc::getpid(), libc::gettid()) };
    let deadline = Instant::now() + Duration::from_secs(2);
    loop {
        // re-listed each round: a thread born meanwhile is caught too
        let left: Vec<i32> = threads_above(keep)
            .into_iter()
            .filter(|&t| t != me)
            .collect();
        if left.is_empty() {
            return Ok(());
        }
        if Instant::now() > deadline {
            bail!("threads {left:?} kept capabilities beyond the ones needed");
        }
        for tid in left {
            // SAFETY: tgkill to a thread of this process, whose handler is set
            unsafe { libc::syscall(libc::SYS_tgkill, pid, tid, drop_signal()) };
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Give up what the collector no longer needs now that the probes are
/// attached; says what is kept. Does nothing when the process holds no
/// capability (an unprivileged procfs run).
/// `bpf`: whether the probes loaded (the /proc source needs nothing).
pub fn drop_after_attach(bpf: bool) -> Result<String> {
    let permitted = caps::read(None, CapSet::Permitted).context("reading capabilities")?;
    if permitted.is_empty() {
        return Ok("no capabilities held".into());
    }
    let keep = if bpf {
        needed_after_attach()
    } else {
        CapsHashSet::new()
    };
    keep_only(&keep)?;
    Ok(if keep.is_empty() {
        format!("capabilities dropped ({}): none kept", names(&permitted))
    } else {
        format!(
            "capabilities dropped but {} (every bpf() call needs it before Linux 6.5 \
             with unprivileged BPF disabled)",
            names(&keep)
        )
    })
}

/// A thread's sets as /proc/PID/status names them, for `doctor` and logs.
pub fn describe() -> String {
    let read = |s| caps::read(None, s).map_or_else(|e| format!("unreadable ({e})"), |c| names(&c));
    format!(
        "effective {}; bounding {}",
        read(CapSet::Effective),
        read(CapSet::Bounding)
    )
}
