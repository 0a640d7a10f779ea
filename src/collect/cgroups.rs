//! The cgroups of one Sample: each thread's cgroup (by kernel id from the
//! BPF iterator, or from `/proc/<pid>/task/<tid>/cgroup`) interned into
//! `Sample::cgroups` with its ancestors, and each listed cgroup's cgroupfs
//! figures read once per Sample. Bounded by `MAX_CGROUPS`.
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::cgroup_ids::CgroupIds;
use super::cgroupfs::{read_cgroup_cpu, read_system_pressure, CgroupLayout};
use crate::model::cgroup::{parent_path, MAX_CGROUPS};
use crate::model::Sample;

/// Where a thread's cgroup comes from for this host.
pub struct CgroupCollector {
    layout: CgroupLayout,
    proc_root: PathBuf,
    /// kernfs id -> path, over the hierarchy that holds the quota
    ids: Option<CgroupIds>,
}

/// One Sample's cgroups while its threads are listed.
#[derive(Default)]
pub struct CgroupTable {
    index: HashMap<String, u32>,
    paths: Vec<String>,
    /// kernfs id -> index (None: unresolved or over the bound)
    by_id: HashMap<u64, Option<u32>>,
}

impl CgroupTable {
    /// The index of `path`, listing it and its ancestors if new.
    pub fn intern(&mut self, path: &str) -> Option<u32> {
        if let Some(&i) = self.index.get(path) {
            return Some(i);
        }
        if !path.starts_with('/') || self.paths.len() >= MAX_CGROUPS {
            return None;
        }
        if let Some(parent) = parent_path(path) {
            self.intern(parent)?;
        }
        if self.paths.len() >= MAX_CGROUPS {
            return None;
        }
        let i = self.paths.len() as u32;
        self.index.insert(path.to_string(), i);
        self.paths.push(path.to_string());
        Some(i)
    }
}

impl CgroupCollector {
    /// This host's layout, from `proc_root`'s mountinfo.
    pub fn discover(proc_root: &Path) -> CgroupCollector {
        CgroupCollector::with_layout(CgroupLayout::discover(proc_root, Path::new("/")), proc_root)
    }

    pub fn with_layout(layout: CgroupLayout, proc_root: &Path) -> CgroupCollector {
        let root = layout.cpu_v1.clone().or_else(|| layout.unified.clone());
        CgroupCollector {
            ids: root.map(|r| CgroupIds::new(r, Duration::from_millis(500))),
            layout,
            proc_root: proc_root.to_path_buf(),
        }
    }

    pub fn layout(&self) -> &CgroupLayout {
        &self.layout
    }

    /// The cgroup of kernel id `id` (0: unknown), interned in `table`.
    pub fn intern_id(&mut self, table: &mut CgroupTable, id: u64) -> Option<u32> {
        if id == 0 {
            return None;
        }
        if let Some(&i) = table.by_id.get(&id) {
            return i;
        }
        let i = self
            .ids
            .as_mut()
            .and_then(|ids| ids.path_of(id).map(str::to_string))
            .and_then(|p| table.intern(&p));
        table.by_id.insert(id, i);
        i
    }

    /// The cgroup of a thread as `/proc/<pid>/task/<tid>/cgroup` names it.
    pub fn intern_proc(&self, table: &mut CgroupTable, pid: u32, tid: u32) -> Option<u32> {
        let file = self.proc_root.join(format!("{pid}/task/{tid}/cgroup"));
        let text = std::fs::read_to_string(file).ok()?;
        let path = proc_cgroup_path(&text, self.layout.cpu_v1.is_some())?;
        table.intern(path)
    }

    /// Read every listed cgroup's figures and the system's pressure into
    /// `sample` (its threads already carry their indices).
    pub fn finish(&self, table: CgroupTable, sample: &mut Sample) {
        sample.cgroups = table
            .paths
            .into_iter()
            .map(|path| read_cgroup_cpu(&self.layout, &path))
            .collect();
        sample.system.cpu_pressure = read_system_pressure(&self.proc_root).map(Box::new);
    }
}

/// The path in a `/proc/<pid>/cgroup` listing ("ID:CONTROLLERS:PATH" per
/// line) of the hierarchy that holds the CPU quota: on v1 the line whose
/// controllers include `cpu`, else the v2 line ("0::/path").
pub fn proc_cgroup_path(text: &str, v1_cpu: bool) -> Option<&str> {
    text.lines().find_map(|line| {
        let mut it = line.splitn(3, ':');
        let (_, ctrls, path) = (it.next()?, it.next()?, it.next()?);
        let wanted = if v1_cpu {
            ctrls.split(',').any(|c| c == "cpu")
        } else {
            ctrls.is_empty()
        };
        wanted.then_some(path)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proc_cgroup_lines_v1_hybrid_and_v2() {
        let hybrid =
            "12:cpuset:/\n4:cpu,cpuacct:/system.slice/ssh.service\n0::/system.slice/ssh.service\n";
        assert_eq!(
            proc_cgroup_path(hybrid, true),
            Some("/system.slice/ssh.service")
        );
        assert_eq!(proc_cgroup_path("0::/a/b\n", false), Some("/a/b"));
        // cpuacct alone is not the cpu controller
        assert_eq!(proc_cgroup_path("3:cpuacct:/x\n", true), None);
        assert_eq!(proc_cgroup_path("garbage\n", false), None);
        // a path may contain ':'
        assert_eq!(proc_cgroup_path("0::/a:b\n", false), Some("/a:b"));
    }

    #[test]
    fn interning_lists_ancestors_once_and_is_bounded() {
        let mut t = CgroupTable::default();
        assert_eq!(t.intern("/a/b"), Some(2));
        assert_eq!(t.paths, ["/", "/a", "/a/b"]);
        assert_eq!(t.intern("/a/c"), Some(3));
        assert_eq!(t.intern("/a"), Some(1));
        assert_eq!(t.intern("relative"), None);
        for i in 0..MAX_CGROUPS {
            t.intern(&format!("/many/{i}"));
        }
        assert_eq!(t.paths.len(), MAX_CGROUPS);
        assert_eq!(t.intern("/one/more"), None);
    }
}
