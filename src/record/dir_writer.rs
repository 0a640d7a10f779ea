//! `schedtop record --dir DIR`: an always-on black box. A new file every
//! `--rotate` (named by its start time, `schedtop-HOST-YYYYMMDD-HHMMSS.schedtop`,
//! UTC), each written as `record -o` writes one (crash-safe: SIGKILL loses
//! nothing written); at each rotation and at exit the oldest files beyond
//! `--retain` (age of their last write) or `--retain-size` (the whole
//! directory) are deleted, never the file being written. One recorder per
//! directory (a lock file). A write that fails (a full disk) stops the
//! recorder with one line saying what is kept; a service manager restarts it.
use std::fs::{File, OpenOptions};
use std::os::fd::AsRawFd;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::{bail, Context, Result};

use super::dir::{recording_files, EXT};
use super::writer::{OpenMode, WriteOptions, Writer};
use crate::collect::sampler::{self, Flow, Limits, Taken};
use crate::collect::{LiveOptions, LiveSource};
use crate::model::{HostInfo, Sample};
use crate::util::clock::rfc3339;
use crate::util::names::file_name_ext;
use crate::util::signals;

pub struct DirOptions {
    pub live: LiveOptions,
    pub rotate_ns: u64,
    /// delete files last written longer ago than this
    pub retain_ns: Option<u64>,
    /// keep the directory's recordings under this many bytes
    pub retain_bytes: Option<u64>,
    pub duration_ns: Option<u64>,
}

/// The directory, created 0700 if missing, and its lock (held while the
/// returned file is open).
fn prepare(dir: &Path) -> Result<File> {
    if std::fs::symlink_metadata(dir).is_err() {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .with_context(|| format!("creating {}", dir.display()))?;
    }
    if !dir.is_dir() {
        bail!("{} is not a directory", dir.display());
    }
    let lock_path = dir.join(".schedtop-record.lock");
    let lock = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(&lock_path)
        .with_context(|| format!("opening {}", lock_path.display()))?;
    // SAFETY: flock on a descriptor we own.
    if unsafe { libc::flock(lock.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
        bail!(
            "{} is being recorded by another schedtop record --dir",
            dir.display()
        );
    }
    Ok(lock)
}

/// A new file for a segment starting at `time_ns`.
fn open_next(dir: &Path, host: &HostInfo, time_ns: u64) -> Result<(PathBuf, Writer)> {
    let t = UNIX_EPOCH + Duration::from_nanos(time_ns);
    let base = file_name_ext(&host.hostname, t, EXT);
    let stem = base.trim_end_matches(&format!(".{EXT}")).to_string();
    for n in 1..=100u32 {
        let name = if n == 1 {
            base.clone()
        } else {
            format!("{stem}-{n}.{EXT}")
        };
        let path = dir.join(name);
        if std::fs::symlink_metadata(&path).is_ok() {
            continue;
        }
        let opts = WriteOptions {
            mode: OpenMode::CreateNew,
            ..Default::default()
        };
        return Ok((path.clone(), Writer::open(&path, host, opts)?));
    }
    bail!("{}: 100 files named {stem}* exist already", dir.display())
}

/// Delete the oldest recordings beyond the limits, never `current`.
/// Returns the deleted files.
pub fn prune(
    dir: &Path,
    current: Option<&Path>,
    retain_ns: Option<u64>,
    retain_bytes: Option<u64>,
    now: SystemTime,
) -> Result<Vec<PathBuf>> {
    let mut files: Vec<(SystemTime, PathBuf, u64)> = recording_files(dir)?
        .into_iter()
        .filter_map(|p| {
            let m = std::fs::symlink_metadata(&p).ok()?;
            Some((m.modified().ok()?, p, m.len()))
        })
        .collect();
    // oldest first
    files.sort();
    let mut total: u64 = files.iter().map(|f| f.2).sum();
    let mut gone = Vec::new();
    for (mtime, path, len) in files {
        if Some(path.as_path()) == current {
            continue;
        }
        let too_old = retain_ns.is_some_and(|r| {
            now.duration_since(mtime)
                .is_ok_and(|age| age > Duration::from_nanos(r))
        });
        let too_big = retain_bytes.is_some_and(|b| total > b);
        if !(too_old || too_big) {
            continue;
        }
        match std::fs::remove_file(&path) {
            Ok(()) => {
                total = total.saturating_sub(len);
                gone.push(path);
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e).with_context(|| format!("removing {}", path.display())),
        }
    }
    Ok(gone)
}

struct Current {
    path: PathBuf,
    writer: Writer,
    started_mono: u64,
    last_time_ns: u64,
}

pub fn run(dir: &Path, o: &DirOptions) -> Result<()> {
    run_tapped(dir, o, &mut |_, _| {})
}

/// `run`, handing each Sample, once written, to `tap` as well (the
/// incident watch of `--trigger`).
pub fn run_tapped(
    dir: &Path,
    o: &DirOptions,
    tap: &mut dyn FnMut(&HostInfo, &Sample),
) -> Result<()> {
    let _lock = prepare(dir)?;
    let mut source = LiveSource::open(&o.live)?;
    if let Some(reason) = &source.host().degraded_reason {
        crate::say!("schedtop: {reason}");
    }
    signals::stop_on(&[libc::SIGINT, libc::SIGTERM, libc::SIGHUP]);
    crate::say!(
        "schedtop: recording to {} every {} s ({} source), a new file every {} s",
        dir.display(),
        o.live.interval_ns as f64 / 1e9,
        source.host().source.as_str(),
        o.rotate_ns as f64 / 1e9
    );
    let report_pruned = |gone: Vec<PathBuf>| {
        for g in gone {
            crate::say!("schedtop: removed {} (beyond retention)", g.display());
        }
    };
    let mut cur: Option<Current> = None;
    // the newest file and Sample safely written, for the closing message
    let mut kept: Option<(PathBuf, u64)> = None;
    let (mut samples, mut files) = (0u64, 0u64);
    let limits = Limits {
        duration_ns: o.duration_ns,
        ..Default::default()
    };
    let why = sampler::run(
        &mut source,
        o.live.interval_ns,
        limits,
        sampler::sleep_until(signals::stop_requested),
        |source, taken| {
            let s = match taken {
                Taken::Sample(s) => s,
                Taken::Error(e) => return Err(e),
                Taken::Panicked(p) => bail!("the collector panicked: {p}"),
            };
            let due = cur
                .as_ref()
                .is_none_or(|c| s.mono_ns.saturating_sub(c.started_mono) >= o.rotate_ns);
            if due {
                if let Some(c) = cur.take() {
                    let kept = c.path.clone();
                    c.writer
                        .finish()
                        .with_context(|| format!("closing {}", kept.display()))?;
                }
                let (path, writer) = open_next(dir, source.host(), s.time_ns)?;
                files += 1;
                cur = Some(Current {
                    path,
                    writer,
                    started_mono: s.mono_ns,
                    last_time_ns: 0,
                });
                let current = cur.as_ref().map(|c| c.path.as_path());
                report_pruned(prune(
                    dir,
                    current,
                    o.retain_ns,
                    o.retain_bytes,
                    SystemTime::now(),
                )?);
            }
            let c = cur.as_mut().expect("opened above");
            c.writer
                .write_sample(&s)
                .with_context(|| format!("writing {}", c.path.display()))?;
            c.last_time_ns = s.time_ns;
            kept = Some((c.path.clone(), s.time_ns));
            samples += 1;
            tap(source.host(), &s);
            Ok(Flow::Continue)
        },
    );
    let why = match why {
        Ok("stopped") => "stopped by signal".to_string(),
        Ok(other) => other.to_string(),
        Err(e) => {
            // a failed write (a full disk): what was written stays readable
            if let Some(c) = cur.take() {
                let _ = c.writer.finish();
            }
            let kept = kept.as_ref().map_or_else(
                || "no Sample of this run was written".to_string(),
                |(path, t)| {
                    format!(
                        "Samples up to {} are kept in {} and the files before it",
                        rfc3339(*t),
                        path.display()
                    )
                },
            );
            bail!("{e:#}; stopped recording ({kept})");
        }
    };
    let current = cur.as_ref().map(|c| c.path.clone());
    if let Some(c) = cur.take() {
        c.writer
            .finish()
            .with_context(|| format!("closing {}", c.path.display()))?;
    }
    report_pruned(prune(
        dir,
        current.as_deref(),
        o.retain_ns,
        o.retain_bytes,
        SystemTime::now(),
    )?);
    crate::say!(
        "schedtop: {why}: {samples} samples in {files} files in {}",
        dir.display()
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn touch(dir: &Path, name: &str, bytes: usize, age_s: u64, now: SystemTime) -> PathBuf {
        let p = dir.join(name);
        std::fs::write(&p, vec![0u8; bytes]).unwrap();
        let f = File::options().write(true).open(&p).unwrap();
        f.set_modified(now - Duration::from_secs(age_s)).unwrap();
        p
    }

    #[test]
    fn prune_by_age_and_size_oldest_first_never_the_current_file() {
        let d = tempfile::tempdir().unwrap();
        let now = SystemTime::now();
        let old = touch(d.path(), "a.schedtop", 100, 100, now);
        let mid = touch(d.path(), "b.schedtop", 100, 50, now);
        let new = touch(d.path(), "c.schedtop", 100, 5, now);
        let other = touch(d.path(), "keep.txt", 100, 1000, now);
        // by age: only a is older than 60 s
        let gone = prune(d.path(), None, Some(60_000_000_000), None, now).unwrap();
        assert_eq!(gone, vec![old.clone()]);
        assert!(other.exists(), "only recordings are touched");
        // by size: 200 bytes over 150 -> the oldest goes
        let gone = prune(d.path(), None, None, Some(150), now).unwrap();
        assert_eq!(gone, vec![mid.clone()]);
        // the current file stays even when it alone is over the limit
        let gone = prune(d.path(), Some(&new), Some(0), Some(0), now).unwrap();
        assert!(gone.is_empty());
        assert!(new.exists());
    }

    #[test]
    fn a_second_recorder_on_the_same_directory_is_refused() {
        let d = tempfile::tempdir().unwrap();
        let _held = prepare(d.path()).unwrap();
        let e = prepare(d.path()).err().unwrap().to_string();
        assert!(e.contains("another schedtop record"), "{e}");
        let nested = d.path().join("x/y");
        prepare(&nested).unwrap();
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&nested).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
    }
}
