//! The `s` key: save exactly what is on screen (the current state rendered
//! by the same `render` into a buffer of the terminal's size) in each
//! configured format, named after the host and the time, and say on the
//! status line where it went (or why it did not). The key clears the
//! previous message first (every key does), so a second screenshot shows
//! the key hints rather than a stale "saved …".
//!
//! The directory and the clock are parameters, so tests point them at a
//! temporary directory and a fixed time.
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use anyhow::{bail, Result};

use crate::export::screenshot::{self, visible, Format};

use super::app::AppState;
use super::render::render_to_buffer;
use super::status::Status;

/// The formats written when none is asked for.
pub const DEFAULT_FORMATS: [Format; 2] = [Format::Svg, Format::Txt];

/// Where and how the `s` key saves.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScreenshotConfig {
    /// each written once, in this order
    pub formats: Vec<Format>,
    pub dir: PathBuf,
}

impl Default for ScreenshotConfig {
    fn default() -> Self {
        ScreenshotConfig {
            formats: DEFAULT_FORMATS.to_vec(),
            dir: PathBuf::from("."),
        }
    }
}

impl ScreenshotConfig {
    /// From the command line: duplicates dropped (first one wins), an empty
    /// list means the default, and the directory must exist (checked now so
    /// a typo is an error at start, not at the first key press).
    pub fn new(formats: &[Format], dir: &Path) -> Result<ScreenshotConfig> {
        let mut f: Vec<Format> = Vec::new();
        for &x in formats {
            if !f.contains(&x) {
                f.push(x);
            }
        }
        if f.is_empty() {
            f = DEFAULT_FORMATS.to_vec();
        }
        match std::fs::metadata(dir) {
            Ok(m) if m.is_dir() => {}
            Ok(_) => bail!(
                "--screenshot-dir {}: not a directory",
                visible(&dir.display().to_string())
            ),
            Err(e) => bail!(
                "--screenshot-dir {}: {e}",
                visible(&dir.display().to_string())
            ),
        }
        Ok(ScreenshotConfig {
            formats: f,
            dir: dir.to_path_buf(),
        })
    }
}

/// Save the screen as `app` shows it now (at `app.size`, the terminal's
/// size) in every configured format; the paths written, in format order.
/// Stops at the first failure, keeping what was written before it.
pub fn save_screen(
    app: &AppState,
    cfg: &ScreenshotConfig,
    now: SystemTime,
) -> (Vec<PathBuf>, Option<anyhow::Error>) {
    let (w, h) = app.size;
    let buf = render_to_buffer(app, w, h);
    let mut saved = Vec::new();
    for &f in &cfg.formats {
        match screenshot::save(&buf, f, &cfg.dir, &app.host.hostname, now) {
            Ok(p) => saved.push(p),
            Err(e) => return (saved, Some(e)),
        }
    }
    (saved, None)
}

/// What the `s` key does: save, then put the outcome on the status line.
pub fn take(app: &mut AppState, cfg: &ScreenshotConfig, now: SystemTime) -> Vec<PathBuf> {
    let (saved, err) = save_screen(app, cfg, now);
    app.status = Some(describe(&saved, err.as_ref(), &cfg.dir));
    saved
}

/// "saved schedtop-vm-20261122-001500.svg, .txt" (the directory shown when
/// it is not the current one), or the failure as one line.
pub fn describe(saved: &[PathBuf], err: Option<&anyhow::Error>, dir: &Path) -> Status {
    let names: Vec<String> = saved
        .iter()
        .map(|p| {
            p.file_name()
                .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
        })
        .collect();
    let mut text = String::new();
    if let Some(first) = names.first() {
        text.push_str("saved ");
        if dir != Path::new(".") && dir != Path::new("") {
            text.push_str(&dir.join(first).display().to_string());
        } else {
            text.push_str(first);
        }
        let stem = first.rsplit_once('.').map_or(first.as_str(), |(s, _)| s);
        for n in &names[1..] {
            match n.rsplit_once('.') {
                // same name, other format: just the extension
                Some((s, ext)) if s == stem => text.push_str(&format!(", .{ext}")),
                _ => text.push_str(&format!(", {n}")),
            }
        }
    }
    match err {
        None => Status::info(visible(&text)),
        Some(e) => {
            let why = format!("{e:#}");
            let why = why.lines().next().unwrap_or("").to_string();
            let msg = if text.is_empty() {
                format!("screenshot failed: {why}")
            } else {
                format!("{text}; then failed: {why}")
            };
            Status::error(visible(&msg))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, UNIX_EPOCH};

    #[test]
    fn describe_names_the_files() {
        let d = Path::new(".");
        let p = |s: &str| PathBuf::from(format!("./{s}"));
        let st = describe(
            &[
                p("schedtop-vm-20261122-001500.svg"),
                p("schedtop-vm-20261122-001500.txt"),
            ],
            None,
            d,
        );
        assert_eq!(st.text, "saved schedtop-vm-20261122-001500.svg, .txt");
        assert!(!st.error);
        let st = describe(
            &[p("schedtop-vm-1.svg"), p("schedtop-vm-1-2.txt")],
            None,
            Path::new("/tmp/shots"),
        );
        assert_eq!(
            st.text,
            "saved /tmp/shots/schedtop-vm-1.svg, schedtop-vm-1-2.txt"
        );
        let e = anyhow::anyhow!("Permission denied (os error 13)").context("creating x\x1b[2J");
        let st = describe(&[], Some(&e), d);
        assert!(st.error);
        assert!(
            st.text.starts_with("screenshot failed: creating x"),
            "{}",
            st.text
        );
        assert!(!st.text.contains('\x1b'), "{:?}", st.text);
        assert!(!st.text.contains('\n'));
    }

    #[test]
    fn config_checks_the_directory_and_dedups() {
        let dir = tempfile::tempdir().unwrap();
        let c =
            ScreenshotConfig::new(&[Format::Txt, Format::Txt, Format::Svg], dir.path()).unwrap();
        assert_eq!(c.formats, vec![Format::Txt, Format::Svg]);
        let c = ScreenshotConfig::new(&[], dir.path()).unwrap();
        assert_eq!(c.formats, DEFAULT_FORMATS.to_vec());
        let f = dir.path().join("file");
        std::fs::write(&f, "x").unwrap();
        let e = ScreenshotConfig::new(&[], &f).unwrap_err().to_string();
        assert!(e.contains("not a directory"), "{e}");
        let e = ScreenshotConfig::new(&[], &dir.path().join("nope"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("No such file"), "{e}");
    }

    #[test]
    fn a_failed_save_is_an_error_status() {
        let dir = tempfile::tempdir().unwrap();
        let gone = dir.path().join("gone");
        std::fs::create_dir(&gone).unwrap();
        let cfg = ScreenshotConfig::new(&[Format::Svg], &gone).unwrap();
        std::fs::remove_dir(&gone).unwrap();
        let mut app = crate::ui::fixtures::app(crate::model::SourceKind::Bpf, 80, 24);
        let t = UNIX_EPOCH + Duration::from_secs(1_795_302_900);
        let saved = take(&mut app, &cfg, t);
        assert!(saved.is_empty());
        let st = app.status.as_ref().unwrap();
        assert!(
            st.error && st.text.starts_with("screenshot failed"),
            "{st:?}"
        );
    }
}
