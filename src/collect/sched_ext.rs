//! The sched_ext BPF scheduler, if one runs: `<sys>/kernel/sched_ext/state`
//! ("enabled", "disabled", "enabling", "disabling") and `root/ops` (the
//! scheduler's name, e.g. "bpfland"). Only kernels built with
//! CONFIG_SCHED_CLASS_EXT (6.12+) have the directory; Debian's cloud
//! kernels do not. While one is enabled, threads of the EXT policy are
//! placed and ordered by that program, not by the fair class: the waits
//! and placements schedtop shows are its decisions.
use std::path::Path;

/// What the kernel says about sched_ext.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SchedExt {
    /// no sched_ext in this kernel
    Absent,
    /// the state file's word, when no scheduler is enabled
    Idle(String),
    /// a scheduler is enabled (or being enabled): its name
    Active { state: String, ops: String },
}

/// Read sched_ext's state under `sys` (normally /sys). Short reads: the
/// files hold one word each; anything longer or odd is shown as read,
/// cut to 64 bytes and to printable ASCII.
pub fn read(sys: &Path) -> SchedExt {
    let dir = sys.join("kernel/sched_ext");
    let word = |p: &Path| -> Option<String> {
        use std::io::Read;
        let mut buf = Vec::with_capacity(64);
        std::fs::File::open(p)
            .ok()?
            .take(64)
            .read_to_end(&mut buf)
            .ok()?;
        let s: String = String::from_utf8_lossy(&buf)
            .trim()
            .chars()
            .map(|c| if c.is_ascii_graphic() { c } else { '?' })
            .collect();
        Some(s)
    };
    let Some(state) = word(&dir.join("state")) else {
        return SchedExt::Absent;
    };
    match state.as_str() {
        "enabled" | "enabling" => SchedExt::Active {
            ops: word(&dir.join("root/ops")).unwrap_or_else(|| "?".into()),
            state,
        },
        _ => SchedExt::Idle(state),
    }
}

impl SchedExt {
    /// The active scheduler's name for the header (None: none active).
    pub fn active_name(&self) -> Option<String> {
        match self {
            SchedExt::Active { state, ops } if state == "enabled" => Some(ops.clone()),
            SchedExt::Active { state, ops } => Some(format!("{ops} ({state})")),
            _ => None,
        }
    }

    /// One line for `schedtop doctor`.
    pub fn describe(&self) -> String {
        match self {
            SchedExt::Absent => "not in this kernel (no /sys/kernel/sched_ext)".into(),
            SchedExt::Idle(state) => {
                format!("no BPF scheduler ({state}): the fair class schedules")
            }
            SchedExt::Active { state, ops } => {
                format!("{ops} ({state}): a BPF scheduler places and orders EXT threads")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fake(state: Option<&str>, ops: Option<&str>) -> tempfile::TempDir {
        let d = tempfile::tempdir().unwrap();
        let ext = d.path().join("kernel/sched_ext");
        if let Some(s) = state {
            std::fs::create_dir_all(ext.join("root")).unwrap();
            std::fs::write(ext.join("state"), format!("{s}\n")).unwrap();
        }
        if let Some(o) = ops {
            std::fs::write(ext.join("root/ops"), format!("{o}\n")).unwrap();
        }
        d
    }

    #[test]
    fn absent_disabled_enabled_and_hostile() {
        assert_eq!(read(fake(None, None).path()), SchedExt::Absent);
        let off = read(fake(Some("disabled"), None).path());
        assert_eq!(off, SchedExt::Idle("disabled".into()));
        assert_eq!(off.active_name(), None);
        let on = read(fake(Some("enabled"), Some("bpfland")).path());
        assert_eq!(on.active_name().as_deref(), Some("bpfland"));
        assert!(on.describe().starts_with("bpfland (enabled)"));
        let going = read(fake(Some("enabling"), Some("rustland")).path());
        assert_eq!(going.active_name().as_deref(), Some("rustland (enabling)"));
        // a name with escapes and no end: cut, escapes replaced
        let bad = read(
            fake(
                Some("enabled"),
                Some(&format!("\x1b[31m{}", "x".repeat(500))),
            )
            .path(),
        );
        let name = bad.active_name().unwrap();
        assert!(name.len() <= 64 && !name.contains('\x1b'), "{name:?}");
    }

    #[test]
    fn this_kernel_agrees_with_its_sysfs() {
        let here = read(Path::new("/sys"));
        match std::fs::read_to_string("/sys/kernel/sched_ext/state") {
            Err(_) => assert_eq!(here, SchedExt::Absent),
            Ok(s) if s.trim() == "enabled" => assert!(here.active_name().is_some()),
            Ok(s) => assert_eq!(here, SchedExt::Idle(s.trim().into())),
        }
    }
}
