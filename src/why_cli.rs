//! `schedtop why`: watch this machine for a while (or read a window of a
//! recording) and say what is wrong, ranked by what it costs. The window's
//! first and last Samples make one interval (model/finding_window.rs), so
//! the findings cover the whole window exactly. Exit status: 0 nothing
//! wrong, 1 a warning, 2 an error.
use std::path::Path;
use std::process::ExitCode;

use anyhow::{anyhow, bail, Context, Result};

use crate::cli::WhyArgs;
use crate::collect::cgroupfs::CgroupLayout;
use crate::collect::LiveOptions;
use crate::export::json::rfc3339;
use crate::live_window::watch_live;
use crate::model::finding_window::window_end;
use crate::model::findings::{any_warning, of_samples, Finding, Scope, Severity};
use crate::model::{HostInfo, Sample};
use crate::record::timeexpr::parse_time;
use crate::ui::format::escape_name;

/// Run `schedtop why` and turn its outcome into the exit status.
pub fn main(a: &WhyArgs) -> ExitCode {
    crate::sigpipe::end_quietly_on_closed_stdout();
    match run(a) {
        Ok(false) => ExitCode::SUCCESS,
        Ok(true) => ExitCode::from(1),
        Err(e) => {
            crate::say!("schedtop: {e:#}");
            ExitCode::from(2)
        }
    }
}

/// The window as two Samples (first, and the end carrying the window's
/// preemptors and exits), and the host they describe.
struct Window {
    host: HostInfo,
    first: Sample,
    end: Sample,
}

/// Print the findings; true when one of them is a warning.
pub fn run(a: &WhyArgs) -> Result<bool> {
    let w = match &a.from {
        Some(path) => from_recording(path, a.at.as_deref(), a.duration)?,
        None => live(a)?,
    };
    let scope = Scope {
        pids: a.live.pids.clone(),
        cgroup: a
            .cgroup
            .as_deref()
            .map(|c| cgroup_path(c, a.from.is_none())),
    };
    if let Some(c) = &scope.cgroup {
        let known = [&w.first, &w.end]
            .iter()
            .flat_map(|s| s.cgroups.iter())
            .any(|g| crate::model::findings::under(&g.path, c));
        if !known {
            bail!(
                "--cgroup {}: no thread was seen in that cgroup (paths as in the cgroups view, e.g. /system.slice/nginx.service)",
                escape_name(c)
            );
        }
    }
    let found = of_samples(&w.host.topology, &w.first, &w.end, &scope);
    if a.json {
        crate::outln!("{}", json(&w, &scope, &found)?);
    } else {
        for line in text(&w, &found) {
            crate::outln!("{line}");
        }
    }
    Ok(any_warning(&found))
}

/// A cgroup as the Samples name it: relative to its hierarchy. A path
/// under this machine's cgroupfs mount is taken as that cgroup.
fn cgroup_path(c: &str, live: bool) -> String {
    let mut p = c.trim_end_matches('/').to_string();
    if live {
        let layout = CgroupLayout::discover(Path::new("/proc"), Path::new("/"));
        for root in [&layout.cpu_v1, &layout.unified].into_iter().flatten() {
            if let Ok(rel) = Path::new(&p).strip_prefix(root) {
                p = format!("/{}", rel.display());
                break;
            }
        }
    }
    if !p.starts_with('/') {
        p.insert(0, '/');
    }
    p
}

fn live(a: &WhyArgs) -> Result<Window> {
    let interval_ns = ((a.live.interval * 1e9) as u64).clamp(1, a.duration.max(1));
    let opts = LiveOptions {
        interval_ns,
        pid_filter: a.live.pids.clone(),
        force_procfs: a.live.procfs,
        require_bpf: a.live.require_bpf,
        run_delay_waits: a.live.run_delay_waits,
        threads: Default::default(),
    };
    // Ctrl-C ends the watch early: the findings of what was seen so far
    let (host, first, end) = watch_live(&opts, a.duration, "judge")?;
    Ok(Window { host, first, end })
}

/// The window of `duration` ns ending at `at` (default: the end) of a
/// recording, within one segment.
fn from_recording(path: &Path, at: Option<&str>, duration: u64) -> Result<Window> {
    let at = at
        .map(parse_time)
        .transpose()
        .map_err(|e| anyhow!("--at: {e}"))?;
    let timeline = crate::record::dir::open_timeline(path)?;
    // files left out are named; the window is read from the rest
    timeline.say_problems();
    let mut r = timeline.source;
    let times = (0..r.len()).filter_map(|i| r.time_of(i));
    let (Some(first), Some(last)) = (times.clone().min(), times.max()) else {
        bail!("{}: the recording has no Samples", path.display());
    };
    let t = at.map_or(last, |e| e.resolve(first, last));
    if t > last || t.saturating_add(r.host_of(0).interval_ns) < first {
        bail!(
            "--at: {} is outside the recording ({} to {})",
            rfc3339(t),
            rfc3339(first),
            rfc3339(last)
        );
    }
    let i = r
        .index_from_time(t)
        .ok_or_else(|| anyhow!("{}: the recording has no Samples", path.display()))?;
    let end_time = r.time_of(i).unwrap_or(t);
    let start = end_time.saturating_sub(duration);
    // back through the segment to the window's start
    let mut chain = vec![i];
    while let Some(p) = chain.last().and_then(|&j| r.prev_of(j)) {
        chain.push(p);
        if r.time_of(p).is_none_or(|tp| tp <= start) {
            break;
        }
    }
    chain.reverse();
    let mut samples = Vec::with_capacity(chain.len());
    for &j in &chain {
        match r.sample(j) {
            Ok(s) => samples.push(s),
            Err(e) => crate::say!("schedtop: {}: skipping a Sample: {e:#}", path.display()),
        }
    }
    if samples.len() < 2 {
        bail!(
            "the window ending at {} holds fewer than two readable Samples of one segment: no interval to judge (a longer -d?)",
            rfc3339(end_time)
        );
    }
    let end = window_end(&samples).context("no interval")?;
    let first = samples.swap_remove(0);
    Ok(Window {
        host: r.host_of(i),
        first,
        end,
    })
}

fn window_s(w: &Window) -> f64 {
    w.end.mono_ns.saturating_sub(w.first.mono_ns) as f64 / 1e9
}

fn header(w: &Window) -> String {
    format!(
        "schedtop why: {}, {:.1} s from {} to {} ({} source)",
        escape_name(&w.host.hostname),
        window_s(w),
        rfc3339(w.first.time_ns),
        rfc3339(w.end.time_ns),
        w.host.source.as_str()
    )
}

/// The report a person pastes into an incident channel.
fn text(w: &Window, found: &[Finding]) -> Vec<String> {
    let mut out = vec![header(w)];
    let warnings = found
        .iter()
        .filter(|f| f.severity == Severity::Warning)
        .count();
    if warnings == 0 {
        out.push(
            "No scheduler trouble found: no thread, process or cgroup lost enough time waiting for a CPU to matter."
                .into(),
        );
    } else {
        out.push(format!(
            "{warnings} finding{} that cost time, largest first:",
            if warnings == 1 { "" } else { "s" }
        ));
    }
    for (n, f) in found.iter().enumerate() {
        if f.severity == Severity::Info && (n == 0 || found[n - 1].severity == Severity::Warning) {
            out.push("Notes (how programs work here, not trouble by themselves):".into());
        }
        out.push(String::new());
        out.push(format!(
            "{}. {} {} ({} {} {}, impact {:.0}%)",
            n + 1,
            f.severity.key().to_uppercase(),
            f.kind.key(),
            f.subject.kind.key(),
            escape_name(&f.subject.id.to_string()),
            escape_name(&f.subject.name),
            f.impact * 100.0
        ));
        out.push(format!("   {}", escape_name(&f.text)));
        let ev: Vec<String> = f
            .evidence
            .0
            .iter()
            .map(|(k, v)| format!("{k}={}", escape_name(&v.to_string())))
            .collect();
        out.push(format!("   evidence: {}", ev.join("  ")));
    }
    out
}

/// The JSON report (written as it is declared: the evidence keeps its order).
#[derive(serde::Serialize)]
struct Report<'a> {
    host: &'a str,
    source: &'static str,
    from: String,
    to: String,
    window_s: f64,
    scope: ScopeJson<'a>,
    findings: &'a [Finding],
}

#[derive(serde::Serialize)]
struct ScopeJson<'a> {
    pids: &'a [u32],
    cgroup: Option<&'a str>,
}

fn json(w: &Window, scope: &Scope, found: &[Finding]) -> Result<String> {
    Ok(serde_json::to_string(&Report {
        host: &w.host.hostname,
        source: w.host.source.as_str(),
        from: rfc3339(w.first.time_ns),
        to: rfc3339(w.end.time_ns),
        window_s: (window_s(w) * 1000.0).round() / 1000.0,
        scope: ScopeJson {
            pids: &scope.pids,
            cgroup: scope.cgroup.as_deref(),
        },
        findings: found,
    })?)
}
