//! Opening and reading a file that must be a regular file, with the check
//! made on the opened descriptor: a check of the path followed by an open
//! of the path lets a FIFO or a device be put there in between.
//! O_NONBLOCK, because opening a FIFO for reading waits for a writer for
//! ever; a bound on the read, because a device such as /dev/zero stats as
//! 0 bytes and never ends.
use std::fs::File;
use std::io::{self, Read};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// Whether the last component of the path may be a symbolic link.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Links {
    Follow,
    Refuse,
}

/// `path` opened read-only, O_NONBLOCK, checked to be a regular file.
/// A symlink refused with [`Links::Refuse`] is ELOOP from the kernel.
pub fn open_regular(path: &Path, links: Links) -> io::Result<File> {
    let mut flags = libc::O_NONBLOCK | libc::O_CLOEXEC;
    if links == Links::Refuse {
        flags |= libc::O_NOFOLLOW;
    }
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(flags)
        .open(path)?;
    if !f.metadata()?.is_file() {
        return Err(not_regular());
    }
    Ok(f)
}

/// The whole of the regular file at `path`, when it holds at most `max`
/// bytes (checked on what is read, not only on what stat says).
pub fn read_regular(path: &Path, links: Links, max: u64) -> io::Result<Vec<u8>> {
    let f = open_regular(path, links)?;
    if f.metadata()?.len() > max {
        return Err(too_large(max));
    }
    let mut bytes = Vec::new();
    f.take(max + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max {
        return Err(too_large(max));
    }
    Ok(bytes)
}

/// The error of a path that is a FIFO, a device, a directory or a socket.
pub fn not_regular() -> io::Error {
    io::Error::other("not a regular file")
}

fn too_large(max: u64) -> io::Error {
    io::Error::other(format!("over {max} bytes"))
}

/// Puts a FIFO and a regular file with `content` in turn at a path, as fast
/// as the kernel exchanges two names, until dropped: for the tests of the
/// races above. Dropping it frees a reader stuck opening the FIFO.
#[cfg(test)]
pub struct FifoSwapper {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
    names: [std::path::PathBuf; 2],
}

#[cfg(test)]
impl FifoSwapper {
    pub fn start(path: &Path, content: &[u8]) -> FifoSwapper {
        use std::sync::atomic::{AtomicBool, Ordering};
        let fifo = path.with_extension("swap-fifo");
        std::fs::write(path, content).unwrap();
        let c = |p: &Path| std::ffi::CString::new(p.to_str().unwrap()).unwrap();
        // SAFETY: a valid C string
        assert_eq!(unsafe { libc::mkfifo(c(&fifo).as_ptr(), 0o600) }, 0);
        let stop = std::sync::Arc::new(AtomicBool::new(false));
        let s = stop.clone();
        let (a, b) = (c(path), c(&fifo));
        let thread = std::thread::spawn(move || {
            while !s.load(Ordering::Relaxed) {
                // RENAME_EXCHANGE: both stay linked, so a reader stuck on
                // the FIFO can still be freed through one of the names
                // SAFETY: valid C strings
                let r = unsafe {
                    libc::renameat2(
                        libc::AT_FDCWD,
                        a.as_ptr(),
                        libc::AT_FDCWD,
                        b.as_ptr(),
                        libc::RENAME_EXCHANGE,
                    )
                };
                assert_eq!(r, 0, "{}", io::Error::last_os_error());
            }
        });
        FifoSwapper {
            stop,
            thread: Some(thread),
            names: [path.to_path_buf(), fifo],
        }
    }
}

#[cfg(test)]
impl Drop for FifoSwapper {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        // a writer's open frees a reader stuck opening the FIFO (ENXIO
        // when there is none)
        for p in &self.names {
            let _ = std::fs::OpenOptions::new()
                .write(true)
                .custom_flags(libc::O_NONBLOCK)
                .open(p);
        }
        let _ = std::fs::remove_file(&self.names[1]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fifo_a_device_and_a_symlink() {
        let d = tempfile::tempdir().unwrap();
        let fifo = d.path().join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid C string
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let e = read_regular(&fifo, Links::Follow, 10).unwrap_err();
        assert_eq!(e.to_string(), "not a regular file");
        let e = read_regular(Path::new("/dev/zero"), Links::Follow, 10).unwrap_err();
        assert_eq!(e.to_string(), "not a regular file");
        let file = d.path().join("file");
        std::fs::write(&file, b"0123456789").unwrap();
        assert_eq!(
            read_regular(&file, Links::Follow, 10).unwrap(),
            b"0123456789"
        );
        let e = read_regular(&file, Links::Follow, 9).unwrap_err();
        assert_eq!(e.to_string(), "over 9 bytes");
        let link = d.path().join("link");
        std::os::unix::fs::symlink(&file, &link).unwrap();
        assert_eq!(read_regular(&link, Links::Follow, 10).unwrap().len(), 10);
        let e = read_regular(&link, Links::Refuse, 10).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::ELOOP));
    }
}
