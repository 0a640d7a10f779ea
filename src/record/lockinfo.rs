//! Who holds the writer's lock on a recording: the kernel lists every
//! flock(2) lock in /proc/locks with the holder's pid and the file's
//! device and inode ("1: FLOCK  ADVISORY  WRITE 4242 fd:01:1234 0 EOF",
//! device numbers in hex, inode in decimal).
use std::fs::File;
use std::os::unix::fs::MetadataExt;

/// Pid of the process holding a flock on `file`, if the kernel says.
pub fn holder(file: &File) -> Option<u32> {
    let m = file.metadata().ok()?;
    let locks = std::fs::read_to_string("/proc/locks").ok()?;
    find(&locks, libc::major(m.dev()), libc::minor(m.dev()), m.ino())
}

fn find(locks: &str, major: u32, minor: u32, ino: u64) -> Option<u32> {
    let want = format!("{major:02x}:{minor:02x}:{ino}");
    locks.lines().find_map(|l| {
        let f: Vec<&str> = l.split_whitespace().collect();
        // "->" marks a waiter, not a holder
        (f.len() >= 6 && f[1] == "FLOCK" && f[5] == want)
            .then(|| f[4].parse().ok())
            .flatten()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_holder_not_a_waiter() {
        let locks = "1: POSIX  ADVISORY  WRITE 10 fd:01:77 0 EOF\n\
                     2: FLOCK  ADVISORY  WRITE 4242 fd:01:77 0 EOF\n\
                     2: -> FLOCK  ADVISORY  WRITE 99 fd:01:77 0 EOF\n";
        assert_eq!(find(locks, 0xfd, 1, 77), Some(4242));
        assert_eq!(find(locks, 0xfd, 1, 78), None);
    }
}
