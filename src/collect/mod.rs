//! Sources of Samples: BPF when it can load, /proc otherwise (`LiveSource`);
//! the `Source` trait every mode reads through, and the one `sampler` loop.
pub mod bpf;
mod bpf_load;
mod bpf_maps;
mod bpf_skel;
mod bpf_thread_sample;
mod bpf_threads;
pub mod cgroup_ids;
pub mod cgroupfs;
pub mod cgroups;
mod changed_threads;
mod exit_drainer;
pub mod features;
pub mod flight;
pub mod irq_time;
mod kept_threads;
mod name_intern;
mod outside_threads;
pub mod perf;
pub mod process_ancestors;
pub mod procfs;
pub mod sampler;
pub mod sched_ext;
pub mod sink;
pub mod source;
pub mod system;
pub mod thread_filter;
pub mod topology;
mod waker_slots;
mod why_drain;
mod why_syscalls;

use std::path::Path;

use anyhow::Result;

use crate::model::{HostInfo, Sample, SourceKind};
use bpf::BpfSource;
use features::{Feature, Features};
use procfs::ProcfsReader;
pub use source::{MemorySource, Seekable, Source};
pub use thread_filter::{ThreadFilter, ThreadSieve};

/// What the user asked for.
#[derive(Clone, Debug)]
pub struct LiveOptions {
    pub interval_ns: u64,
    pub pid_filter: Vec<u32>,
    /// never try BPF (`--procfs`)
    pub force_procfs: bool,
    /// fail instead of falling back (`--require-bpf`, and CI)
    pub require_bpf: bool,
    /// waits from sched_info.run_delay, not from the wakeup (`--run-delay-waits`)
    pub run_delay_waits: bool,
    /// `-u USER`, `--cgroup PATH` (thread_filter.rs)
    pub threads: ThreadFilter,
}

enum Inner {
    Bpf(Box<BpfSource>),
    Procfs(ProcfsReader),
}

/// A live source of Samples; the caller decides when to take them.
pub struct LiveSource {
    host: HostInfo,
    inner: Inner,
    sieve: ThreadSieve,
    /// a pid or thread filter drops processes: name their ancestors
    filtered: bool,
}

/// Why BPF is not available here, before even trying, as one line that
/// says what to do about it.
fn bpf_precondition() -> Option<String> {
    // not root, but CAP_BPF and CAP_PERFMON (the systemd units' way) load too
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 && !crate::util::privileges::can_load_bpf() {
        return Some(
            "not root: /proc counters only; run as root for histograms and migrations".into(),
        );
    }
    if !Path::new("/sys/kernel/btf/vmlinux").exists() {
        return Some(
            "no kernel BTF (/sys/kernel/btf/vmlinux): /proc counters only; needs CONFIG_DEBUG_INFO_BTF=y"
                .into(),
        );
    }
    None
}

impl LiveSource {
    pub fn open(opts: &LiveOptions) -> Result<LiveSource> {
        let topology = topology::read_topology(Path::new("/sys"))?;
        // libbpf's own diagnostics go to stderr and would scribble over the
        // TUI; failures reach the user through our error instead.
        // SCHEDTOP_BPF_DEBUG=1 shows them for bug reports.
        if std::env::var_os("SCHEDTOP_BPF_DEBUG").is_none() {
            libbpf_rs::set_print(None);
        }
        let reason = if opts.force_procfs {
            Some("procfs source requested (--procfs): no histograms or migrations".to_string())
        } else {
            bpf_precondition()
        };
        let attempt = match reason {
            Some(r) => Err(r),
            None => BpfSource::start(
                topology.clone(),
                opts.pid_filter.clone(),
                true,
                opts.run_delay_waits,
            )
            .map_err(|e| {
                format!(
                    "BPF failed to load ({}): /proc counters only; see `schedtop doctor`",
                    first_line(&format!("{e:#}"))
                )
            }),
        };
        let (inner, source, degraded_reason) = match attempt {
            Ok(b) => {
                // the header shows this line: what is off, and why
                let off = b.features().off_summary();
                (Inner::Bpf(Box::new(b)), SourceKind::Bpf, off)
            }
            Err(reason) => {
                if opts.require_bpf && !opts.force_procfs {
                    anyhow::bail!("BPF is required but unavailable: {reason}");
                }
                (
                    Inner::Procfs(ProcfsReader::new("/proc", opts.pid_filter.clone())),
                    SourceKind::Procfs,
                    Some(reason),
                )
            }
        };
        let sched_ext = sched_ext::read(std::path::Path::new("/sys")).active_name();
        Ok(LiveSource {
            host: HostInfo {
                hostname: system::hostname(),
                kernel: system::kernel_release(),
                topology,
                source,
                degraded_reason,
                sched_ext,
                interval_ns: opts.interval_ns,
            },
            inner,
            sieve: ThreadSieve::new(opts.threads.clone()),
            filtered: !opts.pid_filter.is_empty() || !opts.threads.is_empty(),
        })
    }

    pub fn host(&self) -> &HostInfo {
        &self.host
    }

    pub fn set_interval(&mut self, interval_ns: u64) {
        self.host.interval_ns = interval_ns;
    }

    /// The cumulative state now.
    pub fn sample(&mut self) -> Result<Sample> {
        self.next_sample()
    }

    /// What this source measures here, feature by feature (the tracer is
    /// not part of a live source: `doctor` probes it).
    pub fn features(&self) -> Features {
        match &self.inner {
            Inner::Bpf(b) => b.features().clone(),
            Inner::Procfs(_) => {
                let why = self
                    .host
                    .degraded_reason
                    .clone()
                    .unwrap_or_else(|| "procfs source".into());
                let mut f = Features::default();
                f.set(Feature::SwitchCounts, true, "/proc/<pid>/task/<tid>/status");
                for off in [
                    Feature::Histograms,
                    Feature::Migrations,
                    Feature::RunQueue,
                    Feature::Exits,
                ] {
                    f.set(off, false, why.clone());
                }
                f
            }
        }
    }

    /// The BPF source, when that is what runs (tests inspect its maps).
    pub fn bpf(&self) -> Option<&BpfSource> {
        match &self.inner {
            Inner::Bpf(b) => Some(b),
            Inner::Procfs(_) => None,
        }
    }
}

impl Source for LiveSource {
    fn host(&self) -> &HostInfo {
        &self.host
    }

    fn next_sample(&mut self) -> Result<Sample> {
        let mut s = match &mut self.inner {
            Inner::Bpf(b) => b.drain(),
            Inner::Procfs(p) => p.read(),
        }?;
        self.sieve.apply(&mut s);
        if self.filtered {
            s.ancestors = process_ancestors::ancestors(&s.threads, Path::new("/proc"));
        }
        Ok(s)
    }

    fn set_interval(&mut self, interval_ns: u64) {
        self.host.interval_ns = interval_ns;
    }
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or(s)
}
