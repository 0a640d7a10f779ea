//! The `record`, `dump` and `replay` subcommands (the shell: it builds the
//! source and the sinks and runs the mode): arguments to options, one-line
//! errors, the closing messages.
use std::io::Write;

use anyhow::{bail, Result};

use crate::cli::{BlackBoxArgs, DumpArgs, RecordArgs, ReplayArgs};
use crate::collect::sampler::{self, Limits};
use crate::collect::sink::Fanout;
use crate::collect::{LiveOptions, LiveSource};
use crate::export::dump::{dump as run_dump, DumpOptions, Format};
use crate::record::black_box::{BlackBox, DirPolicy};
use crate::record::dir_writer::BlackBoxSink;
use crate::record::recorder::FileRecorder;
use crate::record::timeexpr::{parse_duration, parse_size, parse_time};
use crate::record::writer::OpenMode;
use crate::util::signals;

pub fn record(a: &RecordArgs) -> Result<()> {
    for &pid in &a.live.pids {
        if !std::path::Path::new(&format!("/proc/{pid}")).exists() {
            bail!("no process with pid {pid}");
        }
    }
    let duration_ns = match &a.duration {
        Some(d) => Some(parse_duration(d).map_err(|e| anyhow::anyhow!("--duration: {e}"))?),
        None => None,
    };
    let max_size = match &a.max_size {
        Some(s) => Some(parse_size(s).map_err(|e| anyhow::anyhow!("--max-size: {e}"))?),
        None => None,
    };
    let incidents = crate::incident_cli::Headless::from_args(&a.incidents)?;
    if a.dir.is_none() && a.black_box.any() {
        bail!("--rotate, --retain, --retain-size and --keep-free are for --dir DIR");
    }
    let mode = if a.append {
        OpenMode::Append
    } else if a.force {
        OpenMode::Replace
    } else {
        OpenMode::CreateNew
    };
    let live = LiveOptions {
        interval_ns: (a.live.interval * 1e9) as u64,
        pid_filter: a.live.pids.clone(),
        force_procfs: a.live.procfs,
        require_bpf: a.live.require_bpf,
        run_delay_waits: a.live.run_delay_waits,
        threads: Default::default(),
    };
    // the directory is locked before any probe loads: a directory another
    // recorder holds is refused at once
    let black_box = match &a.dir {
        Some(dir) => Some(BlackBox::open(dir, black_box_policy(&a.black_box)?)?),
        None => None,
    };
    let mut source = LiveSource::open(&live)?;
    if let Some(reason) = &source.host().degraded_reason {
        crate::say!("schedtop: {reason}");
    }
    let host = source.host().clone();
    let every = live.interval_ns as f64 / 1e9;
    let mut fan = Fanout::new(host.clone());
    match black_box {
        Some(bb) => {
            crate::say!(
                "schedtop: recording to {} every {every} s ({} source), {}",
                bb.dir().display(),
                host.source.as_str(),
                bb.describe()
            );
            fan.add(Box::new(BlackBoxSink::alone(bb)));
        }
        None => {
            let output = a
                .output
                .as_deref()
                .expect("clap requires --output without --dir");
            fan.add(Box::new(FileRecorder::open(output, &host, mode, max_size)?));
            crate::say!(
                "schedtop: recording to {} every {every} s ({} source)",
                output.display(),
                host.source.as_str()
            );
        }
    }
    // the incident watch sees every Sample, written or dropped at the
    // floor: its bundles are not the directory's to hold back
    if let Some(i) = incidents {
        fan.add(Box::new(i));
    }
    signals::stop_on(&[libc::SIGINT, libc::SIGTERM, libc::SIGHUP]);
    let limits = Limits {
        duration_ns,
        ..Default::default()
    };
    fan.run(
        &mut source,
        live.interval_ns,
        limits,
        sampler::sleep_until(signals::stop_requested),
    )?;
    Ok(())
}

/// The black box's policy from its arguments, each checked.
pub fn black_box_policy(a: &BlackBoxArgs) -> Result<DirPolicy> {
    let rotate = a.rotate.as_deref().unwrap_or("1h");
    let rotate_ns = parse_duration(rotate).map_err(|e| anyhow::anyhow!("--rotate: {e}"))?;
    if rotate_ns < 1_000_000_000 {
        bail!("--rotate must be at least 1s");
    }
    let retain_ns = match &a.retain {
        Some(d) => Some(parse_duration(d).map_err(|e| anyhow::anyhow!("--retain: {e}"))?),
        None => None,
    };
    let retain_bytes = match &a.retain_size {
        Some(s) => Some(parse_size(s).map_err(|e| anyhow::anyhow!("--retain-size: {e}"))?),
        None => None,
    };
    let keep_free = match &a.keep_free {
        Some(s) => crate::record::disk_floor::parse_keep_free(s)
            .map_err(|e| anyhow::anyhow!("--keep-free: {e}"))?,
        None => crate::record::disk_floor::KeepFree::Default,
    };
    Ok(DirPolicy {
        rotate_ns,
        retain_ns,
        retain_bytes,
        keep_free,
    })
}

pub fn dump(a: &DumpArgs) -> Result<()> {
    let format = Format::parse(&a.format).map_err(anyhow::Error::msg)?;
    let time = |flag: &str, v: &Option<String>| -> Result<_> {
        match v {
            Some(s) => Ok(Some(
                parse_time(s).map_err(|e| anyhow::anyhow!("--{flag}: {e}"))?,
            )),
            None => Ok(None),
        }
    };
    let opts = DumpOptions {
        format,
        from: time("from", &a.from)?,
        to: time("to", &a.to)?,
        pids: a.pids.clone(),
    };
    let tl = crate::record::dir::open_timeline(&a.file)?;
    let mut r = tl.source;
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let rep = match run_dump(r.as_mut(), &opts, &mut out) {
        Ok(rep) => rep,
        Err(e) => {
            // `schedtop dump f | head` is a normal way to stop
            if e.downcast_ref::<std::io::Error>()
                .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
            {
                return Ok(());
            }
            return Err(e);
        }
    };
    let _ = out.flush();
    for p in tl.notes.iter().chain(&tl.unreadable) {
        crate::say!("schedtop: {p}");
    }
    for s in &rep.skipped {
        crate::say!("schedtop: {}: skipped {s}", a.file.display());
    }
    if rep.read == 0 && (rep.in_range > 0 || r.damaged()) {
        // damage everywhere: exit 0 would pass for an empty but fine result
        bail!(
            "{}: nothing could be read ({} Samples listed, none readable)",
            a.file.display(),
            rep.in_range
        );
    }
    if rep.intervals == 0 {
        crate::say!(
            "schedtop: {}: no intervals in the selected range ({} samples in the file)",
            a.file.display(),
            r.len()
        );
    }
    // everything readable is out: a file that was not makes it a failure
    crate::record::dir::check_unreadable(&a.file, &tl.unreadable)
}

pub fn replay(a: &ReplayArgs) -> Result<()> {
    use std::io::IsTerminal;
    let speed: f64 = a
        .speed
        .parse()
        .ok()
        .filter(|v: &f64| v.is_finite() && *v > 0.0 && *v <= 1000.0)
        .ok_or_else(|| {
            anyhow::anyhow!(
                "bad --speed {:?}: expected a number from 0.001 to 1000",
                a.speed
            )
        })?;
    let from = match &a.from {
        Some(s) => Some(parse_time(s).map_err(|e| anyhow::anyhow!("--from: {e}"))?),
        None => None,
    };
    // a file, or a directory of them (`record --dir`) as one timeline
    let tl = crate::record::dir::open_timeline(&a.file)?;
    tl.say_problems();
    let r = tl.source;
    let times = (0..r.len()).filter_map(|i| r.time_of(i));
    let (Some(first), Some(last)) = (times.clone().min(), times.max()) else {
        bail!("{}: the recording has no Samples", a.file.display());
    };
    let start = match from {
        Some(t) => r
            .index_from_time(t.resolve(first, last))
            .ok_or_else(|| anyhow::anyhow!("--from: after the end of the recording"))?,
        None => 0,
    };
    if !std::io::stdout().is_terminal() {
        bail!("stdout is not a terminal; use `schedtop dump` for CSV or JSON");
    }
    let shots = crate::ui::screenshot_key::ScreenshotConfig::new(
        &a.screenshot.screenshot_formats,
        &a.screenshot.screenshot_dir,
    )?;
    let name = a.file.file_name().map_or_else(
        || a.file.display().to_string(),
        |n| n.to_string_lossy().into(),
    );
    let mut rp = crate::ui::replay::Replay::from_source(r, name)
        .map_err(|e| anyhow::anyhow!("{}: {e}", a.file.display()))?;
    rp.cursor.speed = speed;
    // --at: there and paused; otherwise playing from --from or the start
    let (start, playing) = match &a.at {
        Some(at) => (
            rp.cursor
                .resolve(rp.source.as_ref(), at)
                .map_err(|e| anyhow::anyhow!("--at: {e}"))?,
            false,
        ),
        None => (start, true),
    };
    let session = crate::ui::Session::replay_at(rp, start, playing);
    // the session moves through the recording itself: no feed
    let feed = crate::ui::feed::NoFeed::new(session.host.clone());
    crate::ui::run::run_with(session, feed, &shots)?;
    // the screen hid the names said before it: again, and the status
    for p in &tl.unreadable {
        crate::say!("schedtop: {p}");
    }
    crate::record::dir::check_unreadable(&a.file, &tl.unreadable)
}
