//! Creating files safely, one copy for every artifact schedtop writes
//! (screenshots, traces, snapshots): O_CREAT|O_EXCL|O_NOFOLLOW, so never an
//! existing file and never through a symlink.
use std::fs::OpenOptions;
use std::io;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use anyhow::{Context, Result};

use super::names::file_name_ext;

/// A new file in `dir` named after `host` and `time` with extension `ext`
/// (`…-2.EXT`, `…-3.EXT`, … when taken), created O_CREAT|O_EXCL|O_NOFOLLOW
/// with `mode` (less the umask): never an existing file or a symlink.
/// `what` names the file in errors ("screenshot").
pub fn create_unique(
    dir: &Path,
    host: &str,
    time: SystemTime,
    ext: &str,
    mode: u32,
    what: &str,
) -> Result<(PathBuf, std::fs::File)> {
    let base = file_name_ext(host, time, ext);
    let stem = base
        .strip_suffix(&format!(".{ext}"))
        .unwrap_or(&base)
        .to_string();
    for n in 1..=100u32 {
        let name = if n == 1 {
            base.clone()
        } else {
            format!("{stem}-{n}.{ext}")
        };
        let path = dir.join(name);
        match create_new_mode(&path, mode) {
            Ok(f) => return Ok((path, f)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            // ELOOP: O_NOFOLLOW met a symlink
            Err(e) if e.raw_os_error() == Some(libc::ELOOP) => continue,
            Err(e) => return Err(e).with_context(|| format!("creating {what} {}", path.display())),
        }
    }
    anyhow::bail!(
        "cannot create a {what} in {}: 100 files named {stem}* exist already",
        dir.display()
    )
}

/// Create a file that did not exist, never through a symlink, mode 0644.
pub fn create_new(path: &Path) -> io::Result<std::fs::File> {
    create_new_mode(path, 0o644)
}

/// [`create_new`] with another mode.
pub fn create_new_mode(path: &Path, mode: u32) -> io::Result<std::fs::File> {
    OpenOptions::new()
        .write(true)
        .create_new(true) // O_CREAT|O_EXCL
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .mode(mode)
        .open(path)
}
