//! config.toml: the settings kept between runs (settings.rs), in
//! `$XDG_CONFIG_HOME/schedtop/` (else `~/.config/schedtop/`) or `--config
//! FILE`. Read once at start; a broken file costs one line and the
//! defaults, never the start. Written only when the person saves (the setup
//! screen's Enter, or yes to the question at quit), and never over a file
//! whose content changed on disk since it was read (a hand edit in another
//! window wins: the save is refused and said so). Keys this version does
//! not know, and the file's comments, are kept (toml_edit).
use std::ffi::OsString;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use super::app::AppState;
use super::settings::Settings;
use super::status::Status;

/// A config file bigger than this is not read (it is a few hundred bytes).
const MAX_BYTES: u64 = 1 << 20;

/// Where the settings came from and where they go back.
#[derive(Clone, Debug)]
pub struct ConfigStore {
    pub path: PathBuf,
    /// the file's content when read (None: there was no file)
    read: Option<String>,
    /// the file did not parse: saving would lose what its author wrote
    broken: bool,
    /// the file's settings and those the run started with (flags and
    /// NO_COLOR override some): a setting still at its overridden value is
    /// saved as the file had it
    base: Option<(Settings, Settings)>,
}

/// What starting with a config file gives.
#[derive(Clone, Debug)]
pub struct Loaded {
    pub settings: Settings,
    /// None with `--no-config`, or when the file could not be read
    pub store: Option<ConfigStore>,
    /// one line for stderr (the file was broken or unreadable)
    pub warning: Option<String>,
    /// whether the file chose a theme (else NO_COLOR decides)
    pub theme_chosen: bool,
}

impl Loaded {
    /// `--no-config`: the defaults, nothing saved.
    pub fn defaults() -> Loaded {
        Loaded {
            settings: Settings::default(),
            store: None,
            warning: None,
            theme_chosen: false,
        }
    }
}

/// `$XDG_CONFIG_HOME/schedtop/config.toml`, else `$HOME/.config/…`
/// (`env` reads the environment; a relative XDG path is ignored, as the
/// XDG spec says).
pub fn default_path(env: impl Fn(&str) -> Option<OsString>) -> Option<PathBuf> {
    let set = |k: &str| env(k).filter(|v| !v.is_empty()).map(PathBuf::from);
    let base = set("XDG_CONFIG_HOME")
        .filter(|p| p.is_absolute())
        .or_else(|| set("HOME").map(|h| h.join(".config")))?;
    Some(base.join("schedtop").join("config.toml"))
}

/// The file's content, or None when there is no file.
fn read_text(path: &Path) -> io::Result<Option<String>> {
    use std::os::unix::fs::OpenOptionsExt;
    // O_NONBLOCK: opening a FIFO for reading waits for a writer for ever
    let f = match std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)
    {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    if !f.metadata()?.is_file() {
        return Err(io::Error::other("not a regular file"));
    }
    let mut text = String::new();
    f.take(MAX_BYTES + 1).read_to_string(&mut text)?;
    if text.len() as u64 > MAX_BYTES {
        return Err(io::Error::other(format!("over {MAX_BYTES} bytes")));
    }
    Ok(Some(text))
}

/// Settings from a file's text, or what is wrong with it in one line.
pub fn parse(text: &str) -> Result<Settings, String> {
    let s: Settings = toml::from_str(text).map_err(|e| {
        let line = e
            .span()
            .map(|sp| text[..sp.start.min(text.len())].matches('\n').count() + 1);
        let msg = e.message().lines().next().unwrap_or("").trim().to_string();
        match line {
            Some(n) => format!("line {n}: {msg}"),
            None => msg,
        }
    })?;
    s.check()?;
    Ok(s)
}

/// Read the settings from `path` (absent: the defaults, saved there).
pub fn load(path: &Path) -> Loaded {
    let shown = path.display();
    let text = match read_text(path) {
        Ok(t) => t,
        Err(e) => {
            return Loaded {
                warning: Some(format!(
                    "cannot read {shown}: {e}; using the default settings"
                )),
                ..Loaded::defaults()
            }
        }
    };
    let parsed = text
        .as_deref()
        .map(parse)
        .unwrap_or(Ok(Settings::default()));
    let broken = parsed.is_err();
    let theme_chosen = !broken
        && text
            .as_deref()
            .and_then(|t| t.parse::<toml::Table>().ok())
            .is_some_and(|t| t.contains_key("theme"));
    let (settings, warning) = match parsed {
        Ok(s) => (s, None),
        Err(e) => (
            Settings::default(),
            Some(format!("{shown}: {e}; using the default settings")),
        ),
    };
    Loaded {
        settings,
        store: Some(ConfigStore {
            path: path.to_path_buf(),
            read: text,
            broken,
            base: None,
        }),
        warning,
        theme_chosen,
    }
}

/// `text` (a config file's, or none) with `s`'s keys set: every other key,
/// table and comment stays as it was.
pub fn merged(text: Option<&str>, s: &Settings) -> Result<String, String> {
    let mut doc: toml_edit::DocumentMut = match text {
        Some(t) => t.parse().map_err(|e: toml_edit::TomlError| {
            e.message().lines().next().unwrap_or("").to_string()
        })?,
        None => toml_edit::DocumentMut::new(),
    };
    let ours: toml_edit::DocumentMut = toml::to_string(s)
        .map_err(|e| e.to_string())?
        .parse()
        .map_err(|e: toml_edit::TomlError| e.message().to_string())?;
    merge_table(doc.as_table_mut(), ours.as_table());
    Ok(doc.to_string())
}

fn merge_table(dst: &mut toml_edit::Table, src: &toml_edit::Table) {
    use toml_edit::Item;
    for (k, item) in src.iter() {
        match (dst.get_mut(k), item) {
            (Some(Item::Table(d)), Item::Table(s)) => merge_table(d, s),
            (Some(Item::Value(d)), Item::Value(v)) => {
                let bare = |x: &toml_edit::Value| x.clone().decorated("", "").to_string();
                if bare(d) != bare(v) {
                    // the value changes, a comment after it stays
                    let decor = d.decor().clone();
                    *d = v.clone();
                    *d.decor_mut() = decor;
                }
            }
            _ => {
                dst.insert(k, item.clone());
            }
        }
    }
}

impl ConfigStore {
    /// The run starts with `start`: the file's `file` settings with the
    /// command line's (and NO_COLOR's) overrides.
    pub fn started(&mut self, file: Settings, start: &Settings) {
        self.base = Some((file, start.clone()));
    }

    /// What saving `s` writes: an overridden setting left as it started is
    /// written as the file had it (`--no-mouse` once is not mouse = false
    /// for ever).
    fn to_write(&self, s: &Settings) -> Settings {
        let mut out = s.clone();
        if let Some((file, start)) = &self.base {
            if s.theme == start.theme {
                out.theme = file.theme;
            }
            if s.mouse == start.mouse {
                out.mouse = file.mouse;
            }
            if s.exact_figures == start.exact_figures {
                out.exact_figures = file.exact_figures;
            }
            if s.interval_ms == start.interval_ms {
                out.interval_ms = file.interval_ms;
            }
        }
        out
    }

    /// Write `s` to the file, unless its content changed since it was read
    /// (or it did not parse): then the person's file is kept and the error
    /// says so. On success the file's new content is what was read.
    pub fn save(&mut self, s: &Settings) -> Result<(), String> {
        let shown = self.path.display();
        let now = read_text(&self.path).map_err(|e| format!("cannot read {shown}: {e}"))?;
        if now != self.read {
            return Err(format!(
                "{shown} changed on disk since schedtop read it: kept yours, settings not saved"
            ));
        }
        if self.broken {
            return Err(format!(
                "{shown} does not parse: kept as it is, settings not saved"
            ));
        }
        let s = self.to_write(s);
        let text = merged(now.as_deref(), &s).map_err(|e| format!("{shown}: {e}"))?;
        write_replacing(&self.path, &text).map_err(|e| format!("cannot write {shown}: {e}"))?;
        self.read = Some(text);
        Ok(())
    }
}

/// Write `text` to a new file beside `path`, then rename it over `path`: a
/// crash leaves the old file or the new one, never half of one. A symlink
/// (a dotfiles manager's) is followed and kept, and so is the file's mode.
fn write_replacing(path: &Path, text: &str) -> io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::PermissionsExt;
    let resolved;
    let path = if std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
        resolved = std::fs::canonicalize(path)?;
        resolved.as_path()
    } else {
        path
    };
    let mode = match std::fs::metadata(path) {
        Ok(m) => m.permissions().mode() & 0o7777,
        Err(_) => 0o644,
    };
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = path.with_file_name(format!(".{name}.{}.tmp", std::process::id()));
    let _ = std::fs::remove_file(&tmp); // a leftover of a crashed save
    let result = (|| {
        let mut f = crate::util::files::create_new_mode(&tmp, mode)?;
        // the umask took bits off the old file's mode
        f.set_permissions(std::fs::Permissions::from_mode(mode))?;
        f.write_all(text.as_bytes())?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// Save the settings `app` uses to `store`: the status line's message, and
/// whether they were saved.
pub fn save_to(store: Option<&mut ConfigStore>, app: &AppState) -> (Status, bool) {
    let Some(store) = store else {
        return (
            Status::error("settings not saved: no config file (--no-config, or no $HOME)"),
            false,
        );
    };
    match store.save(&app.view_model.settings) {
        Ok(()) => (
            Status::info(format!("settings saved to {}", store.path.display())),
            true,
        ),
        Err(e) => (Status::error(e), false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xdg_first_then_home() {
        fn env(
            xdg: Option<&'static str>,
            home: Option<&'static str>,
        ) -> impl Fn(&str) -> Option<OsString> {
            move |k: &str| match k {
                "XDG_CONFIG_HOME" => xdg.map(OsString::from),
                "HOME" => home.map(OsString::from),
                _ => None,
            }
        }
        assert_eq!(
            default_path(env(Some("/x"), Some("/h"))),
            Some(PathBuf::from("/x/schedtop/config.toml"))
        );
        // empty or relative XDG_CONFIG_HOME: ignored
        for xdg in [Some(""), Some("rel"), None] {
            assert_eq!(
                default_path(env(xdg, Some("/h"))),
                Some(PathBuf::from("/h/.config/schedtop/config.toml"))
            );
        }
        assert_eq!(default_path(env(None, None)), None);
    }

    #[test]
    fn a_merge_keeps_comments_and_unknown_keys() {
        let text = "# mine\ncolour_of_the_day = \"blue\" # why not\ninterval_ms = 2000 # slow link\n\n[plugins]\nx = 1\n";
        let mut s = parse(text).unwrap();
        assert_eq!(s.interval_ms, 2000);
        s.interval_ms = 5000;
        let out = merged(Some(text), &s).unwrap();
        assert!(out.starts_with("# mine\n"), "{out}");
        assert!(
            out.contains("colour_of_the_day = \"blue\" # why not"),
            "{out}"
        );
        assert!(out.contains("interval_ms = 5000 # slow link"), "{out}");
        assert!(out.contains("[plugins]\nx = 1"), "{out}");
        assert_eq!(parse(&out).unwrap(), s);
    }

    #[test]
    fn errors_are_one_line_with_the_line_number() {
        let e = parse("view = \"threads\"\ninterval_ms = \"fast\"\n").unwrap_err();
        assert!(e.starts_with("line 2:") && !e.contains('\n'), "{e}");
        let e = parse("view = \"bogus\"\n").unwrap_err();
        assert!(e.contains("bogus") && !e.contains('\n'), "{e}");
        let e = parse("[[[").unwrap_err();
        assert!(e.starts_with("line 1:") && !e.contains('\n'), "{e}");
    }
}
