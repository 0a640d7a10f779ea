//! CPU limits, throttling and pressure of cgroups, read from cgroupfs.
//!
//! Servers run both layouts, often mixed:
//! - v2 (unified): `cpu.max` ("QUOTA PERIOD" or "max PERIOD"), `cpu.stat`
//!   with `nr_periods`, `nr_throttled`, `throttled_usec` (µs), and
//!   `cpu.pressure`.
//! - v1: the cpu controller's own hierarchy, `cpu.cfs_quota_us` (-1 when
//!   unlimited) and `cpu.cfs_period_us`, `cpu.stat` with `throttled_time`
//!   in **ns**; pressure only in a unified tree mounted beside it (a
//!   "hybrid" host), under the same path, if at all.
//!
//! None of these files needs root to read. Every field is optional: a
//! cgroup can vanish between two reads and a file can be missing or
//! unreadable; that costs the field (shown as `-`), never the Sample.
use std::fs;
use std::path::{Path, PathBuf};

/// Where this host keeps its cgroup hierarchies.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CgroupLayout {
    /// the cgroup2 mount, if any
    pub unified: Option<PathBuf>,
    /// the v1 hierarchy with the cpu controller, if any (then it, not the
    /// unified tree, holds the quota that throttles a thread)
    pub cpu_v1: Option<PathBuf>,
    /// the v1 hierarchy with the cpuset controller, if any
    pub cpuset_v1: Option<PathBuf>,
}

impl CgroupLayout {
    /// Read the mounts of `proc_root` (`/proc/self/mountinfo`), with
    /// `prefix` put in front of every mount point (a test's fake root).
    pub fn discover(proc_root: &Path, prefix: &Path) -> CgroupLayout {
        let text = fs::read_to_string(proc_root.join("self/mountinfo")).unwrap_or_default();
        let mut layout = CgroupLayout::from_mountinfo(&text);
        for p in [
            &mut layout.unified,
            &mut layout.cpu_v1,
            &mut layout.cpuset_v1,
        ]
        .into_iter()
        .flatten()
        {
            *p = prefix.join(p.strip_prefix("/").unwrap_or(p));
        }
        layout
    }

    /// Parse mountinfo text (proc(5)): mount point is field 5, then
    /// optional fields up to "-", then fstype, source, super options.
    pub fn from_mountinfo(text: &str) -> CgroupLayout {
        let mut out = CgroupLayout::default();
        for line in text.lines() {
            let fields: Vec<&str> = line.split(' ').collect();
            let Some(dash) = fields.iter().position(|f| *f == "-") else {
                continue;
            };
            let (Some(mount), Some(fstype), Some(opts)) =
                (fields.get(4), fields.get(dash + 1), fields.get(dash + 3))
            else {
                continue;
            };
            let mount = PathBuf::from(unescape_octal(mount));
            match *fstype {
                "cgroup2" if out.unified.is_none() => out.unified = Some(mount),
                "cgroup" => {
                    let has = |c: &str| opts.split(',').any(|o| o == c);
                    if has("cpu") && out.cpu_v1.is_none() {
                        out.cpu_v1 = Some(mount.clone());
                    }
                    if has("cpuset") && out.cpuset_v1.is_none() {
                        out.cpuset_v1 = Some(mount);
                    }
                }
                _ => {}
            }
        }
        out
    }

    /// The directory whose cpu files throttle cgroup `path` ("/a/b").
    pub fn cpu_dir(&self, path: &str) -> Option<PathBuf> {
        self.cpu_v1
            .as_ref()
            .or(self.unified.as_ref())
            .map(|root| join_cgroup(root, path))
    }
}

/// mountinfo escapes space, tab, newline and backslash as \ooo.
fn unescape_octal(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\'
            && i + 3 < b.len()
            && b[i + 1..i + 4].iter().all(|c| (b'0'..=b'7').contains(c))
        {
            let v = b[i + 1..i + 4]
                .iter()
                .fold(0u32, |acc, c| acc * 8 + u32::from(c - b'0'));
            out.push(v as u8);
            i += 4;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// `root` + cgroup `path`, never escaping `root` ("..", absolute parts).
pub fn join_cgroup(root: &Path, path: &str) -> PathBuf {
    let mut out = root.to_path_buf();
    for part in path.split('/') {
        if !part.is_empty() && part != "." && part != ".." {
            out.push(part);
        }
    }
    out
}

pub use crate::model::{CgroupSample, Pressure};

/// Read cgroup `path` ("/" for the root) under `layout`.
pub fn read_cgroup_cpu(layout: &CgroupLayout, path: &str) -> CgroupSample {
    let mut out = CgroupSample {
        path: path.to_string(),
        ..CgroupSample::default()
    };
    if let Some(dir) = layout.cpu_dir(path) {
        let v1 = layout.cpu_v1.is_some();
        let stat = fs::read_to_string(dir.join("cpu.stat")).ok();
        if let Some(stat) = stat.as_deref() {
            let (periods, throttled, time_ns) = parse_cpu_stat(stat);
            out.nr_periods = periods;
            out.nr_throttled = throttled;
            out.throttled_ns = time_ns;
        }
        out.quota_cpus = if v1 {
            let q = read_trim(&dir.join("cpu.cfs_quota_us"));
            let p = read_trim(&dir.join("cpu.cfs_period_us"));
            q.zip(p).and_then(|(q, p)| quota_v1(&q, &p))
        } else {
            read_trim(&dir.join("cpu.max")).and_then(|m| parse_cpu_max(&m))
        };
    }
    out.cpuset_cpus = match (&layout.cpuset_v1, &layout.unified) {
        (Some(root), _) => read_trim(&join_cgroup(root, path).join("cpuset.effective_cpus")),
        (None, Some(root)) => read_trim(&join_cgroup(root, path).join("cpuset.cpus.effective")),
        _ => None,
    }
    .and_then(|l| cpu_list_len(&l));
    // PSI lives in the unified tree only, also on a v1 hybrid
    out.pressure = layout
        .unified
        .as_ref()
        .and_then(|root| fs::read_to_string(join_cgroup(root, path).join("cpu.pressure")).ok())
        .and_then(|t| parse_pressure(&t));
    out
}

/// System-wide CPU pressure (`/proc/pressure/cpu`), if the kernel has PSI.
pub fn read_system_pressure(proc_root: &Path) -> Option<Pressure> {
    parse_pressure(&fs::read_to_string(proc_root.join("pressure/cpu")).ok()?)
}

fn read_trim(p: &Path) -> Option<String> {
    fs::read_to_string(p).ok().map(|s| s.trim().to_string())
}

/// (nr_periods, nr_throttled, throttled ns) from v1 or v2 cpu.stat.
pub fn parse_cpu_stat(text: &str) -> (Option<u64>, Option<u64>, Option<u64>) {
    let (mut periods, mut throttled, mut ns) = (None, None, None);
    for line in text.lines() {
        let mut it = line.split_whitespace();
        let (Some(k), Some(v)) = (it.next(), it.next().and_then(|v| v.parse::<u64>().ok())) else {
            continue;
        };
        match k {
            "nr_periods" => periods = Some(v),
            "nr_throttled" => throttled = Some(v),
            // v2: µs
            "throttled_usec" => ns = Some(v.saturating_mul(1000)),
            // v1: ns
            "throttled_time" => ns = Some(v),
            _ => {}
        }
    }
    (periods, throttled, ns)
}

/// v2 `cpu.max`: "max 100000" (unlimited) or "50000 100000" (0.5 CPU).
pub fn parse_cpu_max(text: &str) -> Option<f64> {
    let mut it = text.split_whitespace();
    let quota = it.next()?;
    let period: f64 = it.next().unwrap_or("100000").parse().ok()?;
    if quota == "max" || period <= 0.0 {
        return None;
    }
    let q: f64 = quota.parse().ok()?;
    (q > 0.0).then(|| q / period)
}

/// v1 `cpu.cfs_quota_us` (-1: unlimited) over `cpu.cfs_period_us`.
pub fn quota_v1(quota: &str, period: &str) -> Option<f64> {
    let q: i64 = quota.trim().parse().ok()?;
    let p: i64 = period.trim().parse().ok()?;
    (q > 0 && p > 0).then(|| q as f64 / p as f64)
}

/// Number of CPUs in a cpu list ("0-3,8,10-11" -> 7).
pub fn cpu_list_len(text: &str) -> Option<u32> {
    let mut n = 0u32;
    for part in text.trim().split(',').filter(|p| !p.is_empty()) {
        let (a, b) = match part.split_once('-') {
            Some((a, b)) => (a.parse::<u32>().ok()?, b.parse::<u32>().ok()?),
            None => {
                let a = part.parse::<u32>().ok()?;
                (a, a)
            }
        };
        n = n.checked_add(b.checked_sub(a)?.checked_add(1)?)?;
    }
    Some(n)
}

/// `cpu.pressure` / `/proc/pressure/cpu` as a Sample keeps it (the parser
/// is model::pressure's, shared with the exporter).
pub fn parse_pressure(text: &str) -> Option<Pressure> {
    crate::model::pressure::parse(text).map(Pressure::from)
}

#[cfg(test)]
mod tests {
    use super::*;

    const HYBRID: &str = "\
25 30 0:22 / /sys/fs/cgroup ro,nosuid shared:9 - tmpfs tmpfs ro,mode=755
26 25 0:23 / /sys/fs/cgroup/unified rw,nosuid shared:10 - cgroup2 cgroup2 rw,nsdelegate
29 25 0:26 / /sys/fs/cgroup/cpu,cpuacct rw,nosuid shared:13 - cgroup cgroup rw,cpu,cpuacct
30 25 0:27 / /sys/fs/cgroup/cpuset rw,nosuid shared:14 - cgroup cgroup rw,cpuset
31 25 0:28 / /sys/fs/cgroup/my\\040dir rw - cgroup cgroup rw,name=odd
";

    #[test]
    fn mountinfo_hybrid_and_v2() {
        let l = CgroupLayout::from_mountinfo(HYBRID);
        assert_eq!(
            l.unified.as_deref(),
            Some(Path::new("/sys/fs/cgroup/unified"))
        );
        assert_eq!(
            l.cpu_v1.as_deref(),
            Some(Path::new("/sys/fs/cgroup/cpu,cpuacct"))
        );
        assert_eq!(
            l.cpuset_v1.as_deref(),
            Some(Path::new("/sys/fs/cgroup/cpuset"))
        );
        assert_eq!(
            l.cpu_dir("/a/b").as_deref(),
            Some(Path::new("/sys/fs/cgroup/cpu,cpuacct/a/b"))
        );
        let v2 = CgroupLayout::from_mountinfo(
            "35 24 0:30 / /sys/fs/cgroup rw,nosuid shared:9 - cgroup2 cgroup2 rw\n",
        );
        assert_eq!(v2.cpu_v1, None);
        assert_eq!(
            v2.cpu_dir("/").as_deref(),
            Some(Path::new("/sys/fs/cgroup"))
        );
        assert_eq!(unescape_octal("my\\040dir\\134x"), "my dir\\x");
        assert_eq!(unescape_octal("end\\04"), "end\\04");
    }

    #[test]
    fn cgroup_paths_cannot_escape_the_root() {
        assert_eq!(
            join_cgroup(Path::new("/r"), "/../../etc/./x"),
            PathBuf::from("/r/etc/x")
        );
        assert_eq!(join_cgroup(Path::new("/r"), "/"), PathBuf::from("/r"));
    }

    #[test]
    fn cpu_stat_v1_ns_and_v2_us() {
        let v1 = "nr_periods 120\nnr_throttled 30\nthrottled_time 1500000000\nnr_bursts 0\n";
        assert_eq!(
            parse_cpu_stat(v1),
            (Some(120), Some(30), Some(1_500_000_000))
        );
        let v2 = "usage_usec 99\nuser_usec 1\nsystem_usec 2\nnr_periods 10\nnr_throttled 4\nthrottled_usec 2500\n";
        assert_eq!(parse_cpu_stat(v2), (Some(10), Some(4), Some(2_500_000)));
        // the root cgroup's v2 cpu.stat has no throttling fields
        assert_eq!(parse_cpu_stat("usage_usec 5\n"), (None, None, None));
        assert_eq!(parse_cpu_stat("nr_periods x\n"), (None, None, None));
    }

    #[test]
    fn quotas() {
        assert_eq!(parse_cpu_max("max 100000"), None);
        assert_eq!(parse_cpu_max("50000 100000"), Some(0.5));
        assert_eq!(parse_cpu_max("200000 100000\n"), Some(2.0));
        assert_eq!(parse_cpu_max("garbage"), None);
        assert_eq!(parse_cpu_max("1 0"), None);
        assert_eq!(quota_v1("-1", "100000"), None);
        assert_eq!(quota_v1("20000", "100000"), Some(0.2));
        assert_eq!(quota_v1("20000", "0"), None);
    }

    #[test]
    fn cpu_lists() {
        assert_eq!(cpu_list_len("0-3,8,10-11"), Some(7));
        assert_eq!(cpu_list_len("0"), Some(1));
        assert_eq!(cpu_list_len(""), Some(0));
        assert_eq!(cpu_list_len("3-1"), None);
        assert_eq!(cpu_list_len("0-4294967295"), None);
        assert_eq!(cpu_list_len("a-b"), None);
    }

    #[test]
    fn pressure_lines() {
        let p = parse_pressure(
            "some avg10=39.92 avg60=28.80 avg300=22.61 total=135915639\n\
             full avg10=1.50 avg60=0.00 avg300=0.00 total=42\n",
        )
        .unwrap();
        assert_eq!(p.some_avg10, 39.92);
        assert_eq!(p.some_total_us, 135_915_639);
        assert_eq!(p.full_avg10, Some(1.5));
        assert_eq!(p.full_total_us, Some(42));
        let no_full = parse_pressure("some avg10=0.00 avg60=0.00 avg300=0.00 total=7\n").unwrap();
        assert_eq!(no_full.full_avg10, None);
        assert_eq!(parse_pressure(""), None);
        assert_eq!(parse_pressure("some avg10=x total=1\n"), None);
    }

    #[test]
    fn fake_v1_hybrid_tree_and_a_vanished_cgroup() {
        let root = tempfile::tempdir().unwrap();
        let cpu = root.path().join("cpu");
        let uni = root.path().join("unified");
        std::fs::create_dir_all(cpu.join("svc")).unwrap();
        std::fs::create_dir_all(uni.join("svc")).unwrap();
        std::fs::write(cpu.join("svc/cpu.cfs_quota_us"), "50000\n").unwrap();
        std::fs::write(cpu.join("svc/cpu.cfs_period_us"), "100000\n").unwrap();
        std::fs::write(
            cpu.join("svc/cpu.stat"),
            "nr_periods 8\nnr_throttled 3\nthrottled_time 7000\n",
        )
        .unwrap();
        std::fs::write(
            uni.join("svc/cpu.pressure"),
            "some avg10=2.00 avg60=1.00 avg300=0.50 total=900\nfull avg10=1.00 avg60=0.00 avg300=0.00 total=100\n",
        )
        .unwrap();
        let layout = CgroupLayout {
            unified: Some(uni),
            cpu_v1: Some(cpu),
            cpuset_v1: None,
        };
        let c = read_cgroup_cpu(&layout, "/svc");
        assert_eq!(c.quota_cpus, Some(0.5));
        assert_eq!(
            (c.nr_periods, c.nr_throttled, c.throttled_ns),
            (Some(8), Some(3), Some(7000))
        );
        assert_eq!(c.pressure.unwrap().some_total_us, 900);
        // gone between the listing and the read: every field unknown, no error
        let gone = CgroupSample {
            path: "/gone".into(),
            ..CgroupSample::default()
        };
        assert_eq!(read_cgroup_cpu(&layout, "/gone"), gone);
    }
}
