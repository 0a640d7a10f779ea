//! `-u USER` and `--cgroup PATH`: which threads a live source keeps. The
//! filter runs on each Sample before any sink sees it, so the live view,
//! `--batch` and the rates all count the same threads. A thread's user is
//! its effective uid (as htop's `-u`), read once per thread from
//! /proc/<tid>/status and kept while the thread lives.
use std::collections::HashMap;

use anyhow::{bail, Result};

use crate::model::{Sample, ThreadSample};

/// What to keep (empty: everything).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ThreadFilter {
    /// effective uids, with the name the user gave for each
    pub users: Vec<(u32, String)>,
    /// a cgroup path: threads in it or below it
    pub cgroup: Option<String>,
}

impl ThreadFilter {
    /// From the command line: users by name or uid, a cgroup path.
    pub fn parse(users: &[String], cgroup: Option<&str>) -> Result<ThreadFilter> {
        let mut out = ThreadFilter::default();
        for u in users {
            let uid = match u.parse::<u32>() {
                Ok(uid) => uid,
                Err(_) => match uid_of_name(u) {
                    Some(uid) => uid,
                    None => bail!("-u {}: no such user", u.escape_debug()),
                },
            };
            out.users.push((uid, u.clone()));
        }
        if let Some(c) = cgroup {
            if !c.starts_with('/') {
                bail!(
                    "--cgroup {}: a path from the hierarchy's root, such as /system.slice",
                    c.escape_debug()
                );
            }
            let trimmed = c.trim_end_matches('/');
            out.cgroup = Some(if trimmed.is_empty() { "/" } else { trimmed }.to_string());
        }
        Ok(out)
    }

    pub fn is_empty(&self) -> bool {
        self.users.is_empty() && self.cgroup.is_none()
    }

    /// The header's words for it: `user nobody`, `cgroup /a/b`.
    pub fn describe(&self) -> Vec<String> {
        let mut out: Vec<String> = self
            .users
            .iter()
            .map(|(_, name)| format!("user {name}"))
            .collect();
        out.extend(self.cgroup.iter().map(|c| format!("cgroup {c}")));
        out
    }

    /// Whether `path` is the filter's cgroup or below it.
    fn cgroup_holds(&self, path: &str) -> bool {
        match self.cgroup.as_deref() {
            None | Some("/") => true,
            Some(root) => path
                .strip_prefix(root)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with('/')),
        }
    }
}

/// The filter and what it learnt of each thread's user.
#[derive(Debug, Default)]
pub struct ThreadSieve {
    filter: ThreadFilter,
    /// (tid, start time) -> effective uid (None: gone before it was read)
    uids: HashMap<(u32, u64), Option<u32>>,
}

impl ThreadSieve {
    pub fn new(filter: ThreadFilter) -> ThreadSieve {
        ThreadSieve {
            filter,
            uids: HashMap::new(),
        }
    }

    /// Keep only the threads the filter wants in `s`.
    pub fn apply(&mut self, s: &mut Sample) {
        self.apply_with(s, read_euid);
    }

    /// `apply` with the uid of a thread from `euid_of` (tests).
    pub fn apply_with(&mut self, s: &mut Sample, mut euid_of: impl FnMut(u32) -> Option<u32>) {
        if self.filter.is_empty() {
            return;
        }
        let threads = std::mem::take(&mut s.threads).into_vec();
        let mut seen = HashMap::with_capacity(if self.filter.users.is_empty() {
            0
        } else {
            threads.len()
        });
        let kept: Vec<ThreadSample> = threads
            .into_iter()
            .filter(|t| {
                let in_cgroup = self.filter.cgroup.is_none()
                    || t.cgroup
                        .and_then(|i| s.cgroups.get(i as usize))
                        .is_some_and(|c| self.filter.cgroup_holds(&c.path));
                if !in_cgroup {
                    return false;
                }
                if self.filter.users.is_empty() {
                    return true;
                }
                let key = (t.tid, t.start_time_ns);
                let uid = match self.uids.get(&key) {
                    Some(&u) => u,
                    // an exited thread's /proc entry is gone: it is not
                    // read again (and not shown) if it was never read
                    None if t.exited => None,
                    None => euid_of(t.tid),
                };
                seen.insert(key, uid);
                uid.is_some_and(|u| self.filter.users.iter().any(|&(w, _)| w == u))
            })
            .collect();
        if !self.filter.users.is_empty() {
            // threads no longer listed are forgotten
            self.uids = seen;
        }
        s.threads = kept.into();
    }
}

/// The effective uid of thread `tid` (/proc/<tid>/status, `Uid:` line: real,
/// effective, saved, filesystem).
fn read_euid(tid: u32) -> Option<u32> {
    let path = format!("/proc/{tid}/status");
    let text = crate::util::proc_text::read_lossy(std::path::Path::new(&path))?;
    let line = text.lines().find_map(|l| l.strip_prefix("Uid:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// The uid of user `name` from the system's user database.
fn uid_of_name(name: &str) -> Option<u32> {
    let cname = std::ffi::CString::new(name).ok()?;
    let mut buf = vec![0u8; 16 * 1024];
    // SAFETY: passwd is plain data; getpwnam_r writes it and strings into
    // `buf` (of the length given) and sets `found` to it or to null.
    unsafe {
        let mut pw: libc::passwd = std::mem::zeroed();
        let mut found: *mut libc::passwd = std::ptr::null_mut();
        let rc = libc::getpwnam_r(
            cname.as_ptr(),
            &mut pw,
            buf.as_mut_ptr().cast(),
            buf.len(),
            &mut found,
        );
        (rc == 0 && !found.is_null()).then_some(pw.pw_uid)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cgroup_holds_its_subtree_not_its_namesakes() {
        let f = ThreadFilter::parse(&[], Some("/a/b/")).unwrap();
        assert!(f.cgroup_holds("/a/b"));
        assert!(f.cgroup_holds("/a/b/c"));
        assert!(!f.cgroup_holds("/a/bc"));
        assert!(!f.cgroup_holds("/a"));
    }

    #[test]
    fn users_by_name_or_uid_and_bad_ones_refused() {
        let f = ThreadFilter::parse(&["root".into(), "65534".into()], None).unwrap();
        assert_eq!(f.users[0].0, 0);
        assert_eq!(f.users[1].0, 65534);
        let e = ThreadFilter::parse(&["no-such-user-here".into()], None).unwrap_err();
        assert_eq!(e.to_string(), "-u no-such-user-here: no such user");
        assert!(ThreadFilter::parse(&[], Some("relative")).is_err());
    }
}
