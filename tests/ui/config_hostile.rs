//! config.toml that is not a plain file: a FIFO, a symlink kept by a
//! dotfiles manager, a private (0600) file. Loading never hangs, and saving
//! never replaces what the person set up around their settings.
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::sync::mpsc;
use std::time::Duration;

use schedtop::ui::config_file;
use schedtop::ui::settings::Settings;

fn mkfifo(path: &std::path::Path) {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0, "mkfifo");
}

/// A FIFO named as the config (`--config FIFO`, or a prank in ~/.config):
/// the live view used to wait for a writer for ever before drawing anything.
#[test]
fn a_fifo_config_is_one_line_not_a_hang() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config.toml");
    mkfifo(&path);
    let (tx, rx) = mpsc::channel();
    let p = path.clone();
    let loader = std::thread::spawn(move || {
        let l = config_file::load(&p);
        let _ = tx.send((l.warning, l.settings));
    });
    let got = rx.recv_timeout(Duration::from_secs(5));
    if got.is_err() {
        // unblock the loader (a writer opens and closes: it reads EOF)
        let _ = std::fs::OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(&path);
    }
    loader.join().unwrap();
    let (warning, settings) = got.expect("loading a FIFO config hung for 5 s");
    let w = warning.expect("a FIFO config gives a warning");
    assert!(w.contains("not a regular file") && !w.contains('\n'), "{w}");
    assert_eq!(settings, Settings::default());
    // still a FIFO: nothing was written over it
    let meta = std::fs::symlink_metadata(&path).unwrap();
    assert_eq!(meta.mode() & libc::S_IFMT, libc::S_IFIFO);
}

/// config.toml a symlink into a dotfiles repository, the file 0600: a save
/// used to rename a new 0644 file over the link, so the link was gone and
/// the dotfiles copy silently stale.
#[test]
fn a_save_through_a_symlink_keeps_the_link_and_the_mode() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let dots = dir.path().join("dotfiles");
    std::fs::create_dir(&dots).unwrap();
    let real = dots.join("schedtop.toml");
    std::fs::write(&real, "interval_ms = 2000 # mine\n").unwrap();
    std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o600)).unwrap();
    let link = dir.path().join("config.toml");
    std::os::unix::fs::symlink("dotfiles/schedtop.toml", &link).unwrap();

    let loaded = config_file::load(&link);
    assert_eq!(loaded.warning, None);
    assert_eq!(loaded.settings.interval_ms, 2000);
    let mut s = loaded.settings.clone();
    s.interval_ms = 5000;
    loaded.store.unwrap().save(&s).unwrap();

    let meta = std::fs::symlink_metadata(&link).unwrap();
    assert!(meta.file_type().is_symlink(), "the link was replaced");
    let text = std::fs::read_to_string(&real).unwrap();
    assert!(text.starts_with("interval_ms = 5000 # mine\n"), "{text}");
    assert_eq!(config_file::parse(&text).unwrap(), s);
    let mode = std::fs::metadata(&real).unwrap().permissions().mode() & 0o7777;
    assert_eq!(mode, 0o600, "the file's mode changed");
    // nothing left beside either
    for d in [dir.path(), dots.as_path()] {
        let names: Vec<_> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert!(
            names.iter().all(|n| !n.to_string_lossy().ends_with(".tmp")),
            "{names:?}"
        );
    }
}
