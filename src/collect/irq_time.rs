//! The interrupt-time probes (bpf/irq_time.bpf.h): time hardirqs and softirqs
//! take from the thread they interrupt, and each CPU's interrupt time. Off
//! by default, on with `SCHEDTOP_IRQ_TIME=1`: attached on 6.1 and 6.12 they
//! make the exit map refuse a few final records (the kernel matrix's 2,000
//! short threads lost 1-7 exits, none with them off), which costs exact
//! counts everywhere else.
//!
//! The kernel's own split of interrupt time needs
//! `CONFIG_IRQ_TIME_ACCOUNTING`; without it (Debian's cloud kernels, many
//! others) /proc/stat's irq and softirq columns only count the timer ticks
//! that happened to land in an interrupt, and a thread's CPU time includes
//! the interrupts it suffered.
use anyhow::{Context, Result};

use libbpf_rs::skel::{OpenSkel, Skel};
use libbpf_rs::Link;

use super::bpf_skel::{OpenSchedtopSkel, SchedtopSkel};

/// Whether the kernel's BTF has `name` of `kind` (a function, a
/// tracepoint's typedef).
fn kernel_btf_has(name: &std::ffi::CStr, kind: u32) -> bool {
    // SAFETY: libbpf loads (and we free) the kernel's own BTF; the name
    // is a NUL-terminated string.
    unsafe {
        let btf = libbpf_sys::btf__load_vmlinux_btf();
        if btf.is_null() {
            return false;
        }
        let found = libbpf_sys::btf__find_by_name_kind(btf, name.as_ptr(), kind) > 0;
        libbpf_sys::btf__free(btf);
        found
    }
}

/// Whether the user asked for the probes (`SCHEDTOP_IRQ_TIME=1`).
pub fn wanted() -> bool {
    std::env::var_os("SCHEDTOP_IRQ_TIME").is_some_and(|v| v != "0")
}

/// The programs of bpf/irq_time.bpf.h and their tracepoints: `irq_soft_*`
/// on softirq_entry/exit, `irq_in_X` / `irq_out_X` on X_entry / X_exit.
fn tracepoint_of(prog: &str) -> Option<String> {
    let (dir, name) = if let Some(n) = prog.strip_prefix("irq_in_") {
        ("entry", n)
    } else if let Some(n) = prog.strip_prefix("irq_out_") {
        ("exit", n)
    } else if let Some(d) = prog.strip_prefix("irq_soft_") {
        return Some(format!("softirq_{d}"));
    } else {
        return None;
    };
    Some(format!("{name}_{dir}"))
}

/// Whether the kernel has tracepoint `tp` (BTF names its btf_trace_ typedef).
fn has_tracepoint(tp: &str) -> bool {
    std::ffi::CString::new(format!("btf_trace_{tp}"))
        .is_ok_and(|c| kernel_btf_has(&c, libbpf_sys::BTF_KIND_TYPEDEF))
}

/// Before load: turn the probes on, or leave them out of the object (a
/// program left out cannot fail the load); also those whose tracepoint this
/// kernel lacks (x86's irq_vectors elsewhere, vectors a config leaves out).
/// `wakers`: the softirq programs also name the vector a wakeup came from,
/// so they load for either.
pub fn prepare(open: &mut OpenSchedtopSkel<'_>, on: bool, wakers: bool) {
    if let Some(ro) = open.maps.rodata_data.as_mut() {
        ro.irq_time_on = on as u32;
    }
    for mut p in open.open_object_mut().progs_mut() {
        let Some(tp) = p.name().to_str().and_then(tracepoint_of) else {
            continue;
        };
        let wanted = on || (wakers && tp.starts_with("softirq_"));
        p.set_autoload(wanted && has_tracepoint(&tp));
    }
}

/// Attach the loaded probes. Returns the links (the probes stay attached as
/// long as they live) and the hardirq tracepoints covered.
pub fn attach(skel: &SchedtopSkel<'_>) -> Result<(Vec<Link>, Vec<String>)> {
    let mut links = Vec::new();
    let mut names = Vec::new();
    let mut soft = 0;
    for p in skel.object().progs_mut() {
        let Some(tp) = p.name().to_str().and_then(tracepoint_of) else {
            continue;
        };
        if !has_tracepoint(&tp) {
            continue;
        }
        links.push(p.attach().with_context(|| format!("attaching {tp}"))?);
        match tp.strip_suffix("_entry") {
            _ if tp.starts_with("softirq_") => soft += 1,
            Some(n) => names.push(n.to_string()),
            None => {}
        }
    }
    anyhow::ensure!(
        soft == 2 && names.iter().any(|n| n == "irq_handler"),
        "the kernel lacks softirq_entry/exit or irq_handler_entry/exit"
    );
    Ok((links, names))
}

/// How the probes measure, for `schedtop doctor`.
pub const HOW: &str = "softirq by vector and hardirq handlers, charged to the interrupted \
                       thread (not idle; a CPU's ksoftirqd runs its softirqs as its own work)";

/// What /proc/stat's irq and softirq columns mean on this kernel: exact
/// with CONFIG_IRQ_TIME_ACCOUNTING (whose irqtime_account_irq() the
/// kernel's BTF then lists), else only the timer ticks that landed in an
/// interrupt (coarse, often 0).
pub fn proc_stat_irq_note() -> &'static str {
    if kernel_btf_has(c"irqtime_account_irq", libbpf_sys::BTF_KIND_FUNC) {
        "/proc/stat irq/softirq exact (CONFIG_IRQ_TIME_ACCOUNTING=y)"
    } else {
        "/proc/stat irq/softirq tick-sampled only (no CONFIG_IRQ_TIME_ACCOUNTING): \
         thread CPU times include the interrupts they suffered"
    }
}

/// What the kernel's build config says of `CONFIG_<name>` (`y`/`m`: on; `is
/// not set` or absent: off), from config lines.
fn config_has(text: impl std::io::BufRead, name: &str) -> bool {
    let on = format!("CONFIG_{name}=");
    text.lines()
        .map_while(Result::ok)
        .any(|l| l.strip_prefix(&on).is_some_and(|v| v == "y" || v == "m"))
}

/// `CONFIG_<name>` of the running kernel, and where that was read:
/// /boot/config-RELEASE, else /proc/config.gz; None when neither is there.
fn kernel_config(name: &str) -> Option<(bool, String)> {
    use std::io::{BufReader, Read};
    // a config is ~300 KB: a bound against a hostile or odd file
    const MAX: u64 = 16 << 20;
    let release = std::fs::read_to_string("/proc/sys/kernel/osrelease").ok()?;
    let boot = format!("/boot/config-{}", release.trim());
    if let Ok(f) = std::fs::File::open(&boot) {
        return Some((config_has(BufReader::new(f.take(MAX)), name), boot));
    }
    let gz = std::fs::File::open("/proc/config.gz").ok()?;
    let text = BufReader::new(flate2::read::GzDecoder::new(gz).take(MAX));
    Some((config_has(text, name), "/proc/config.gz".into()))
}

/// `schedtop doctor`'s lines on stolen time: which figures this kernel
/// gives and from where (`probes_on`: the interrupt-time probes attached).
pub fn doctor_lines(probes_on: bool) -> Vec<String> {
    let cfg = |name: &str| match kernel_config(name) {
        Some((on, from)) => format!(
            "CONFIG_{name} {} ({from})",
            if on { "is set" } else { "is not set" }
        ),
        None => format!("CONFIG_{name} unknown (no /boot/config-RELEASE, no /proc/config.gz)"),
    };
    let irq_exact = kernel_btf_has(c"irqtime_account_irq", libbpf_sys::BTF_KIND_FUNC);
    vec![
        "stolen time:".into(),
        format!(
            "  per thread, interrupts: {}",
            if probes_on {
                "measured by the interrupt-time probes (STOLEN%, stolen_ns)"
            } else {
                "not measured: the probes are off (SCHEDTOP_IRQ_TIME=1), so STOLEN% shows - \
                 and stolen_ns is null"
            }
        ),
        format!(
            "  per CPU, irq/softirq:   /proc/stat, {}; {}{}",
            if irq_exact {
                "exact"
            } else {
                "tick-sampled (a thread's CPU time includes the interrupts it suffered)"
            },
            cfg("IRQ_TIME_ACCOUNTING"),
            if probes_on {
                "; and the probes' measured time"
            } else {
                ""
            }
        ),
        format!(
            "  per CPU, steal:         /proc/stat (0 without a hypervisor steal clock); {}",
            cfg("PARAVIRT_TIME_ACCOUNTING")
        ),
        "  per thread, steal:      none: the kernel keeps steal per CPU only \
         (/proc/<pid>/schedstat holds run time, wait time and slices, no steal), so none is shown"
            .into(),
    ]
}

#[cfg(test)]
mod tests {
    #[test]
    fn config_lines_say_set_or_not() {
        let text = "# CONFIG_IRQ_TIME_ACCOUNTING is not set\nCONFIG_PARAVIRT_TIME_ACCOUNTING=y\n\
                    CONFIG_HAVE_IRQ_TIME_ACCOUNTING=y\nCONFIG_X_MOD=m\n";
        assert!(!super::config_has(text.as_bytes(), "IRQ_TIME_ACCOUNTING"));
        assert!(super::config_has(
            text.as_bytes(),
            "PARAVIRT_TIME_ACCOUNTING"
        ));
        assert!(super::config_has(text.as_bytes(), "X_MOD"));
        assert!(!super::config_has(text.as_bytes(), "ABSENT"));
        assert!(!super::config_has(&b"\xff\xfe"[..], "X"));
    }
}
