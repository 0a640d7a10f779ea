//! cgroup ids to paths. The BPF probes name a thread's cgroup by its kernfs
//! node id (`cgrp->kn->id`), which on 64-bit kernels is also the inode
//! number of the cgroup's directory in cgroupfs (kernfs_id_ino(), 5.5+),
//! on v1 hierarchies as on v2. So the tree is walked once and walked again
//! only when an id it has not seen turns up, at most once per `min_rescan`.
use std::collections::HashMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// A bound on the walk: a hostile or huge tree costs at most this many
/// directories per rescan (ids beyond it stay unresolved).
const MAX_DIRS: usize = 100_000;

pub struct CgroupIds {
    root: PathBuf,
    paths: HashMap<u64, String>,
    last_scan: Option<Instant>,
    min_rescan: Duration,
}

impl CgroupIds {
    /// Ids of the hierarchy mounted at `root`.
    pub fn new(root: PathBuf, min_rescan: Duration) -> CgroupIds {
        CgroupIds {
            root,
            paths: HashMap::new(),
            last_scan: None,
            min_rescan,
        }
    }

    /// The cgroup path ("/a/b") of `id`, rescanning the tree if the id is
    /// new and the last scan is old enough.
    pub fn path_of(&mut self, id: u64) -> Option<&str> {
        if !self.paths.contains_key(&id) {
            let due = self
                .last_scan
                .is_none_or(|t| t.elapsed() >= self.min_rescan);
            if due {
                self.rescan();
            }
        }
        self.paths.get(&id).map(String::as_str)
    }

    /// Walk the hierarchy (breadth first, no symlinks followed) and map
    /// every directory's inode to its cgroup path.
    pub fn rescan(&mut self) {
        self.last_scan = Some(Instant::now());
        self.paths.clear();
        let mut queue: std::collections::VecDeque<(PathBuf, String)> =
            [(self.root.clone(), "/".to_string())].into();
        let mut seen = 0usize;
        while let Some((dir, cg)) = queue.pop_front() {
            seen += 1;
            if seen > MAX_DIRS {
                break;
            }
            let Ok(meta) = std::fs::symlink_metadata(&dir) else {
                continue; // vanished since it was listed
            };
            if !meta.is_dir() {
                continue;
            }
            self.paths.insert(meta.ino(), cg.clone());
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            for e in entries.flatten() {
                if e.file_type().is_ok_and(|t| t.is_dir()) {
                    let name = e.file_name().to_string_lossy().into_owned();
                    let child = if cg == "/" {
                        format!("/{name}")
                    } else {
                        format!("{cg}/{name}")
                    };
                    queue.push_back((e.path(), child));
                }
            }
        }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_of_a_directory_tree_and_new_ones_after_a_rescan() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(d.path().join("system.slice/nginx.service")).unwrap();
        std::fs::write(d.path().join("cpu.stat"), "").unwrap();
        let ino = |p: &str| std::fs::metadata(d.path().join(p)).unwrap().ino();
        let mut ids = CgroupIds::new(d.path().to_path_buf(), Duration::ZERO);
        assert_eq!(ids.path_of(ino("")), Some("/"));
        assert_eq!(
            ids.path_of(ino("system.slice/nginx.service")),
            Some("/system.slice/nginx.service")
        );
        // a file's inode is not a cgroup
        assert_eq!(ids.path_of(ino("cpu.stat")), None);
        std::fs::create_dir(d.path().join("new")).unwrap();
        assert_eq!(ids.path_of(ino("new")), Some("/new"));
    }

    #[test]
    fn unknown_ids_do_not_rescan_more_often_than_asked() {
        let d = tempfile::tempdir().unwrap();
        let mut ids = CgroupIds::new(d.path().to_path_buf(), Duration::from_secs(3600));
        assert_eq!(ids.path_of(1), None);
        std::fs::create_dir(d.path().join("later")).unwrap();
        let later = std::fs::metadata(d.path().join("later")).unwrap().ino();
        // within min_rescan: not found until the next allowed scan
        assert_eq!(ids.path_of(later), None);
        ids.rescan();
        assert_eq!(ids.path_of(later), Some("/later"));
    }
}
