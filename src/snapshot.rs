//! `schedtop snapshot`: one screen of a view rendered to a file, with no
//! terminal. The Samples come from this machine (collected for
//! `--duration`, at least two so rates exist) or from a recording (the
//! Sample at `--at` and the ones before it in its segment); the screen is
//! the one the live UI would draw for the same state (`ui::render`), and
//! the file is a screenshot (`export::screenshot`).
use std::fmt;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::Duration;

use anyhow::{anyhow, bail, Context, Result};

use crate::cli::SnapshotArgs;
use crate::collect::sampler::{self, Flow, Limits, Taken};
use crate::collect::{LiveOptions, LiveSource};
use crate::export::json::rfc3339;
use crate::export::screenshot::{self, visible, Format};
use crate::record::timeexpr::{parse_duration, parse_time, TimeExpr};
use crate::ui::action::Action;
use crate::ui::layout;
use crate::ui::{render_to_buffer, AppState, Mode, View};

/// The views `--view` names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SnapshotView {
    Threads,
    Processes,
    Cpus,
    Numa,
    /// the threads table with the selected thread's detail pane
    Detail,
    /// the cgroup tree with throttling and pressure
    Cgroups,
}

impl SnapshotView {
    pub const ALL: [SnapshotView; 6] = [
        SnapshotView::Threads,
        SnapshotView::Processes,
        SnapshotView::Cpus,
        SnapshotView::Numa,
        SnapshotView::Detail,
        SnapshotView::Cgroups,
    ];

    pub fn name(self) -> &'static str {
        match self {
            SnapshotView::Threads => "threads",
            SnapshotView::Processes => "processes",
            SnapshotView::Cpus => "cpus",
            SnapshotView::Numa => "numa",
            SnapshotView::Detail => "detail",
            SnapshotView::Cgroups => "cgroups",
        }
    }
}

impl fmt::Display for SnapshotView {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for SnapshotView {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let l = s.trim().to_ascii_lowercase();
        SnapshotView::ALL
            .into_iter()
            .find(|v| v.name() == l)
            .ok_or_else(|| {
                format!(
                    "bad --view {:?}: expected threads, processes, cpus, numa, detail or cgroups",
                    visible(s)
                )
            })
    }
}

/// The one place a snapshot view becomes the UI's: which `View` and
/// whether the detail pane is open. (If a view is ever missing from the
/// UI, map it to the nearest one here.)
pub fn ui_view(v: SnapshotView) -> (View, bool) {
    match v {
        SnapshotView::Threads => (View::Threads, false),
        SnapshotView::Processes => (View::Processes, false),
        SnapshotView::Cpus => (View::Cpus, false),
        SnapshotView::Numa => (View::Numa, false),
        SnapshotView::Detail => (View::Threads, true),
        SnapshotView::Cgroups => (View::Cgroups, false),
    }
}

pub const MAX_WIDTH: u16 = 1000;
pub const MAX_HEIGHT: u16 = 500;

/// "160x50" (also `X` or `*`) to (columns, rows).
pub fn parse_size(s: &str) -> Result<(u16, u16), String> {
    let bad = || {
        format!(
            "bad --size {:?}: expected COLSxROWS such as 160x50 (1..{MAX_WIDTH} x 1..{MAX_HEIGHT})",
            visible(s)
        )
    };
    let (w, h) = s.trim().split_once(['x', 'X', '*']).ok_or_else(bad)?;
    let num = |v: &str, max: u16| -> Option<u16> {
        let v = v.trim();
        if v.is_empty() || !v.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        v.parse::<u16>().ok().filter(|&n| (1..=max).contains(&n))
    };
    match (num(w, MAX_WIDTH), num(h, MAX_HEIGHT)) {
        (Some(w), Some(h)) => Ok((w, h)),
        _ => Err(bad()),
    }
}

/// `--format`, else the output file's extension, else SVG.
pub fn output_format(format: Option<&str>, output: Option<&Path>) -> Result<Format, String> {
    if let Some(f) = format {
        return f.parse();
    }
    let ext = output
        .filter(|p| *p != Path::new("-"))
        .and_then(|p| p.extension())
        .map(|e| e.to_string_lossy().into_owned());
    match ext {
        None => Ok(Format::Svg),
        Some(e) => e.parse().map_err(|_| {
            format!(
                "cannot tell the format from the extension {:?}: use --format txt, ansi, html or svg",
                visible(&e)
            )
        }),
    }
}

/// Everything checked before any Sample is taken (a bad argument fails at
/// once, not after the collection).
#[derive(Clone, Debug)]
pub struct Plan {
    pub view: SnapshotView,
    pub size: (u16, u16),
    pub format: Format,
    pub select: Option<String>,
}

/// Samples kept before the shown one (sparklines and CPU history).
const LEAD: usize = 30;

pub fn run(a: &SnapshotArgs) -> Result<()> {
    let view: SnapshotView = a.view.parse().map_err(anyhow::Error::msg)?;
    let size = parse_size(&a.size).map_err(anyhow::Error::msg)?;
    let format =
        output_format(a.format.as_deref(), a.output.as_deref()).map_err(anyhow::Error::msg)?;
    let plan = Plan {
        view,
        size,
        format,
        select: a.select.clone(),
    };
    let out = a.output.as_deref().filter(|p| *p != Path::new("-"));
    if let Some(p) = out {
        check_output(p, a.force)?;
    }
    let mut left_out = None;
    let app = match &a.from {
        Some(file) => {
            if a.duration.is_some() {
                bail!("--duration is for live snapshots; with --from, pick the moment with --at");
            }
            let at = match &a.at {
                Some(s) => Some(parse_time(s).map_err(|e| anyhow!("--at: {e}"))?),
                None => None,
            };
            let (app, unreadable) = from_recording(file, at, &plan)?;
            // the snapshot is made from what reads; the files that do not
            // make the exit status non-zero (named on stderr already)
            left_out = Some((file, unreadable));
            app
        }
        None => {
            let d = a.duration.as_deref().unwrap_or("2s");
            let d = parse_duration(d).map_err(|e| anyhow!("--duration: {e}"))?;
            if !(10_000_000..=3_600_000_000_000).contains(&d) {
                bail!("--duration must be from 10ms to 1h");
            }
            for &pid in &a.live.pids {
                if !Path::new(&format!("/proc/{pid}")).exists() {
                    bail!("no process with pid {pid}");
                }
            }
            let opts = LiveOptions {
                interval_ns: (a.live.interval * 1e9) as u64,
                pid_filter: a.live.pids.clone(),
                force_procfs: a.live.procfs,
                require_bpf: a.live.require_bpf,
                run_delay_waits: a.live.run_delay_waits,
                threads: Default::default(),
            };
            live(&opts, Duration::from_nanos(d), &plan)?
        }
    };
    let text = render(&app, &plan);
    match out {
        Some(p) => write_output(p, text.as_bytes(), a.force)?,
        None => {
            let mut o = io::stdout().lock();
            match o.write_all(text.as_bytes()).and_then(|_| o.flush()) {
                Err(e) if e.kind() != io::ErrorKind::BrokenPipe => return Err(e.into()),
                _ => {}
            }
        }
    }
    match left_out {
        Some((file, unreadable)) => crate::record::dir::check_unreadable(file, &unreadable),
        None => Ok(()),
    }
}

/// The screen `plan` asks for, in its format.
pub fn render(app: &AppState, plan: &Plan) -> String {
    let buf = render_to_buffer(app, plan.size.0, plan.size.1);
    screenshot::render(&buf, plan.format)
}

/// An app state at `plan`'s size holding `samples` (oldest first), in
/// `plan`'s view with its row selected.
pub fn state(
    host: crate::model::HostInfo,
    mode: Mode,
    samples: Vec<crate::model::Sample>,
    plan: &Plan,
) -> Result<AppState> {
    let mut app = AppState::new(host, mode);
    layout::apply(&mut app, Action::Resize(plan.size.0, plan.size.1));
    for s in samples {
        app.push_sample(s);
    }
    let (view, detail) = ui_view(plan.view);
    if view == View::Processes {
        layout::apply(&mut app, Action::ToggleProcesses);
    }
    if let Some(sel) = &plan.select {
        select(&mut app, sel)?;
    }
    match view {
        View::Cpus => {
            layout::apply(&mut app, Action::ShowCpus);
        }
        View::Numa => {
            layout::apply(&mut app, Action::ShowNuma);
        }
        View::Cgroups => {
            layout::apply(&mut app, Action::ShowCgroups);
        }
        View::Threads | View::Processes | View::Findings => {}
    }
    if detail && !app.detail {
        layout::apply(&mut app, Action::ToggleDetail);
    }
    Ok(app)
}

/// Move the selection to the row with this id (thread id in the threads
/// view, pid in the processes view), else the first (in sort order) whose
/// name contains `what`.
fn select(app: &mut AppState, what: &str) -> Result<()> {
    let w = what.trim();
    let id: Option<u32> = w.parse().ok();
    let lw = w.to_lowercase();
    app.sort_all();
    let i = app
        .rows()
        .iter()
        .position(|r| id == Some(r.id))
        .or_else(|| {
            (!lw.is_empty())
                .then(|| {
                    app.rows().iter().position(|r| {
                        r.comm.to_lowercase().contains(&lw)
                            || r.process_comm.to_lowercase().contains(&lw)
                    })
                })
                .flatten()
        })
        .ok_or_else(|| anyhow!("--select {:?}: no such row on the screen", visible(what)))?;
    layout::apply(app, Action::Home);
    for _ in 0..i {
        layout::apply(app, Action::Down);
    }
    Ok(())
}

/// The state at `at` (default: the end) of a recording, and the files of
/// a directory that could not be read (named on stderr), one line each.
pub fn from_recording(
    path: &Path,
    at: Option<TimeExpr>,
    plan: &Plan,
) -> Result<(AppState, Vec<String>)> {
    // a file, or a directory of them (`record --dir`) as one timeline
    let tl = crate::record::dir::open_timeline(path)?;
    tl.say_problems();
    let unreadable = tl.unreadable;
    let mut r = tl.source;
    let times = (0..r.len()).filter_map(|i| r.time_of(i));
    let (Some(first), Some(last)) = (times.clone().min(), times.max()) else {
        bail!("{}: the recording has no Samples", path.display());
    };
    let t = at.map_or(last, |e| e.resolve(first, last));
    // a Sample covers the interval that ends at its time: the one shown is
    // the first at or after `t` (as `replay --at` and `dump --from` pick)
    if t > last {
        bail!(
            "--at: {} is after the end of the recording ({})",
            rfc3339(t),
            rfc3339(last)
        );
    }
    if t.saturating_add(r.host_of(0).interval_ns) < first {
        bail!(
            "--at: {} is before the start of the recording ({})",
            rfc3339(t),
            rfc3339(first)
        );
    }
    let mut i = r
        .index_from_time(t)
        .ok_or_else(|| anyhow!("{}: the recording has no Samples", path.display()))?;
    if at.is_none() {
        // no --at: the end, as far as it reads
        if let Some((j, Some(why))) = r.last_readable() {
            crate::say!(
                "schedtop: {}: the last Sample cannot be read ({why}); showing the last one that can, at {}",
                path.display(),
                rfc3339(r.time_of(j).unwrap_or(t))
            );
            i = j;
        }
    }
    let mut chain = vec![i];
    while chain.len() <= LEAD {
        match chain.last().and_then(|&j| r.prev_of(j)) {
            Some(p) => chain.push(p),
            None => break,
        }
    }
    chain.reverse();
    let mut samples = Vec::with_capacity(chain.len());
    for &j in &chain {
        match r.sample(j) {
            Ok(s) => samples.push(s),
            // a damaged earlier Sample: rates restart after it
            Err(_) if j != i => samples.clear(),
            Err(e) => return Err(e).with_context(|| format!("{}", path.display())),
        }
    }
    if samples.len() < 2 {
        crate::say!(
            "schedtop: the Sample at {} starts its segment: no rates to show",
            rfc3339(r.time_of(i).unwrap_or(t))
        );
    }
    let host = r.host_of(i);
    Ok((state(host, Mode::Replay, samples, plan)?, unreadable))
}

/// Collect from this machine for `duration` (one Sample per interval, at
/// least two: now and at the end), then build the state.
pub fn live(opts: &LiveOptions, duration: Duration, plan: &Plan) -> Result<AppState> {
    let mut source = LiveSource::open(opts)?;
    if let Some(reason) = &source.host().degraded_reason {
        crate::say!("schedtop: {reason}");
    }
    let step = Duration::from_nanos(opts.interval_ns.max(1)).min(duration);
    let mut samples = Vec::new();
    let limits = Limits {
        end_after_ns: Some(duration.as_nanos().min(u64::MAX as u128) as u64),
        ..Default::default()
    };
    let nanos = step.as_nanos().min(u64::MAX as u128) as u64;
    sampler::run(
        &mut source,
        nanos,
        limits,
        sampler::sleep_until(|| false),
        |_, taken| {
            match taken {
                Taken::Sample(s) => samples.push(s),
                Taken::Error(e) => return Err(e),
                Taken::Panicked(p) => bail!("the collector panicked: {p}"),
            }
            if samples.len() > LEAD + 1 {
                samples.remove(0);
            }
            Ok(Flow::Continue)
        },
    )?;
    let mut host = source.host().clone();
    host.interval_ns = step.as_nanos().min(u64::MAX as u128) as u64;
    state(host, Mode::Live, samples, plan)
}

/// Refuse a symlink, a non-file, or (without `force`) an existing file,
/// before spending time collecting.
fn check_output(path: &Path, force: bool) -> Result<()> {
    let shown = || visible(&path.display().to_string());
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => {
            bail!(
                "{} is a symbolic link: refusing to write through it",
                shown()
            )
        }
        Ok(m) if !m.is_file() => bail!("{} exists and is not a regular file", shown()),
        Ok(_) if !force => bail!("{} exists (use --force to replace it)", shown()),
        Ok(_) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e).with_context(shown),
    }
}

/// Write `bytes` to a new file at `path` (O_EXCL|O_NOFOLLOW, 0644). With
/// `force` an existing regular file is replaced: the bytes go to a new
/// temporary file next to it, renamed over it (a rename replaces the
/// directory entry and never follows a symlink); a symlink or anything
/// but a regular file is still refused.
pub fn write_output(path: &Path, bytes: &[u8], force: bool) -> Result<()> {
    check_output(path, force)?;
    let shown = || visible(&path.display().to_string());
    let exists = std::fs::symlink_metadata(path).is_ok();
    if !exists {
        let mut f = screenshot::create_new(path).map_err(|e| match e.raw_os_error() {
            Some(libc::EEXIST) => anyhow!("{} exists (use --force to replace it)", shown()),
            Some(libc::ELOOP) => {
                anyhow!(
                    "{} is a symbolic link: refusing to write through it",
                    shown()
                )
            }
            _ => anyhow::Error::new(e).context(shown()),
        })?;
        if let Err(e) = f.write_all(bytes).and_then(|_| f.flush()) {
            drop(f);
            let _ = std::fs::remove_file(path);
            return Err(anyhow::Error::new(e).context(shown()));
        }
        return Ok(());
    }
    let tmp = temp_name(path);
    let mut f =
        screenshot::create_new(&tmp).with_context(|| visible(&tmp.display().to_string()))?;
    let written = f
        .write_all(bytes)
        .and_then(|_| f.flush())
        .and_then(|_| std::fs::rename(&tmp, path));
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(anyhow::Error::new(e).context(format!("replacing {}", shown())));
    }
    Ok(())
}

/// `.NAME.schedtop-PID.tmp` in the same directory.
fn temp_name(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map_or_else(|| "snapshot".into(), |n| n.to_string_lossy().into_owned());
    let tmp = format!(".{name}.schedtop-{}.tmp", std::process::id());
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.join(tmp),
        _ => PathBuf::from(tmp),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("160x50"), Ok((160, 50)));
        assert_eq!(parse_size(" 80X24 "), Ok((80, 24)));
        assert_eq!(parse_size("1000x500"), Ok((1000, 500)));
        for bad in [
            "",
            "160",
            "x50",
            "160x",
            "0x50",
            "160x0",
            "-1x5",
            "+80x24",
            "1001x50",
            "80x501",
            "80x24x3",
            "99999999999x2",
            "ab\x1bx",
        ] {
            let e = parse_size(bad).unwrap_err();
            assert!(e.starts_with("bad --size"), "{bad:?}: {e}");
            assert!(!e.contains('\x1b'));
        }
    }

    #[test]
    fn views_parse_and_map() {
        for v in SnapshotView::ALL {
            assert_eq!(v.name().parse::<SnapshotView>(), Ok(v));
            assert_eq!(v.name().to_uppercase().parse::<SnapshotView>(), Ok(v));
        }
        let e = "graph".parse::<SnapshotView>().unwrap_err();
        assert!(
            e.contains("expected threads, processes, cpus, numa, detail or cgroups"),
            "{e}"
        );
        assert_eq!(ui_view(SnapshotView::Detail), (View::Threads, true));
        assert_eq!(ui_view(SnapshotView::Numa), (View::Numa, false));
    }

    #[test]
    fn format_from_flag_or_extension() {
        let p = |s: &'static str| Some(Path::new(s));
        assert_eq!(output_format(Some("html"), p("x.svg")), Ok(Format::Html));
        assert_eq!(output_format(None, p("x.TXT")), Ok(Format::Txt));
        assert_eq!(output_format(None, p("shot")), Ok(Format::Svg));
        assert_eq!(output_format(None, p("-")), Ok(Format::Svg));
        assert_eq!(output_format(None, None), Ok(Format::Svg));
        assert!(output_format(None, p("x.png"))
            .unwrap_err()
            .contains("--format"));
        assert!(output_format(Some("png"), None).is_err());
    }

    #[test]
    fn output_never_clobbers_or_follows() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("a.txt");
        write_output(&f, b"one", false).unwrap();
        assert_eq!(std::fs::read(&f).unwrap(), b"one");
        let e = write_output(&f, b"two", false).unwrap_err().to_string();
        assert!(e.contains("exists (use --force"), "{e}");
        write_output(&f, b"two", true).unwrap();
        assert_eq!(std::fs::read(&f).unwrap(), b"two");
        // a symlink, even dangling, even with --force
        let target = d.path().join("target");
        std::fs::write(&target, b"keep").unwrap();
        let link = d.path().join("link.svg");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let dangling = d.path().join("dangling.svg");
        std::os::unix::fs::symlink(d.path().join("nowhere"), &dangling).unwrap();
        for l in [&link, &dangling] {
            for force in [false, true] {
                let e = write_output(l, b"evil", force).unwrap_err().to_string();
                assert!(e.contains("symbolic link"), "{e}");
            }
        }
        assert_eq!(std::fs::read(&target).unwrap(), b"keep");
        assert!(!d.path().join("nowhere").exists());
        // a directory
        let e = write_output(d.path(), b"x", true).unwrap_err().to_string();
        assert!(e.contains("not a regular file"), "{e}");
        // no temporary file left behind
        let left: Vec<_> = std::fs::read_dir(d.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".tmp"))
            .collect();
        assert!(left.is_empty(), "{left:?}");
    }
}
