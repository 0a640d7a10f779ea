//! Short, readable names for cgroup paths, for a column a dozen characters
//! wide: systemd units by name, containers by a shortened id, Kubernetes
//! pods by QoS class and the start of their UID.
//!
//! The result is as hostile as the path (a delegated subtree can name its
//! directories anything): escape it before display, as with thread names.

/// How many hex digits of a container id to keep (docker's short id).
const SHORT_ID: usize = 12;
/// How many characters of a pod UID to keep.
const SHORT_UID: usize = 8;

/// The short name of cgroup `path` ("/" for the root).
pub fn short_name(path: &str) -> String {
    let parts: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
    let Some(&last) = parts.last() else {
        return "/".into();
    };
    let parent = parts.len().checked_sub(2).map(|i| parts[i]);
    if let Some(id) = container_id(last, parent) {
        return id;
    }
    if let Some(pod) = pod_name(last) {
        return pod;
    }
    if let Some(qos) = qos_slice(last) {
        return qos.into();
    }
    last.to_string()
}

/// `docker-<id>.scope`, `cri-containerd-<id>.scope`, `crio-<id>.scope`,
/// `libpod-<id>.scope` (systemd driver), or a bare 64-hex id under
/// `docker`/a pod (cgroupfs driver).
fn container_id(name: &str, parent: Option<&str>) -> Option<String> {
    const SCOPES: [(&str, &str); 5] = [
        ("docker-", "docker"),
        ("cri-containerd-", "ctr"),
        ("crio-", "crio"),
        ("libpod-", "podman"),
        ("containerd-", "ctr"),
    ];
    let unit = name.strip_suffix(".scope").unwrap_or(name);
    for (prefix, label) in SCOPES {
        if let Some(id) = unit.strip_prefix(prefix).filter(|id| is_long_hex(id)) {
            return Some(format!("{label} {}", &id[..SHORT_ID]));
        }
    }
    if is_long_hex(name) {
        // cgroupfs driver: docker's parent is `docker`; under a pod it is
        // whatever runtime the kubelet uses
        let label = if parent == Some("docker") {
            "docker"
        } else {
            "ctr"
        };
        return Some(format!("{label} {}", &name[..SHORT_ID]));
    }
    None
}

/// A container id: at least 32 lowercase hex digits (docker, containerd and
/// CRI-O use 64).
fn is_long_hex(s: &str) -> bool {
    s.len() >= 32
        && s.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// `kubepods-burstable-pod<uid_with_underscores>.slice` (systemd driver) or
/// `pod<uid>` (cgroupfs driver) -> `pod 1a2b3c4d`, with the QoS class when
/// the name carries it.
fn pod_name(name: &str) -> Option<String> {
    let unit = name.strip_suffix(".slice").unwrap_or(name);
    let (qos, uid) = if let Some(rest) = unit.strip_prefix("kubepods-") {
        let (qos, uid) = match rest.split_once("-pod") {
            Some((q, u)) => (Some(q), u),
            None => (None, rest.strip_prefix("pod")?),
        };
        (qos, uid)
    } else {
        (None, unit.strip_prefix("pod")?)
    };
    let looks_like_uid = uid.len() >= SHORT_UID
        && uid
            .bytes()
            .all(|b| b.is_ascii_hexdigit() || b == b'-' || b == b'_');
    if !looks_like_uid {
        return None;
    }
    let short = &uid[..SHORT_UID];
    Some(match qos {
        Some(q) => format!("{q} pod {short}"),
        None => format!("pod {short}"),
    })
}

/// `kubepods.slice` -> `kubepods`; `kubepods-besteffort.slice` -> `besteffort`.
fn qos_slice(name: &str) -> Option<&str> {
    let unit = name.strip_suffix(".slice")?;
    if unit == "kubepods" {
        return Some("kubepods");
    }
    unit.strip_prefix("kubepods-")
        .filter(|q| matches!(*q, "besteffort" | "burstable" | "guaranteed"))
}

#[cfg(test)]
mod tests {
    use super::short_name;

    const ID: &str = "3f4e9a0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f";

    #[test]
    fn root_and_plain_directories() {
        assert_eq!(short_name("/"), "/");
        assert_eq!(short_name(""), "/");
        assert_eq!(short_name("/schedtop-test/limited"), "limited");
        assert_eq!(short_name("/batch//jobs/"), "jobs");
    }

    #[test]
    fn systemd_units_by_name() {
        assert_eq!(short_name("/system.slice"), "system.slice");
        assert_eq!(short_name("/system.slice/nginx.service"), "nginx.service");
        assert_eq!(
            short_name("/user.slice/user-1000.slice/session-3.scope"),
            "session-3.scope"
        );
        assert_eq!(
            short_name("/user.slice/user-1000.slice/user@1000.service/app.slice/firefox.scope"),
            "firefox.scope"
        );
    }

    #[test]
    fn docker_both_drivers() {
        assert_eq!(
            short_name(&format!("/system.slice/docker-{ID}.scope")),
            "docker 3f4e9a0b1c2d"
        );
        assert_eq!(short_name(&format!("/docker/{ID}")), "docker 3f4e9a0b1c2d");
        // docker's own daemon unit is a plain service
        assert_eq!(short_name("/system.slice/docker.service"), "docker.service");
    }

    #[test]
    fn containerd_crio_podman() {
        assert_eq!(
            short_name(&format!("/system.slice/cri-containerd-{ID}.scope")),
            "ctr 3f4e9a0b1c2d"
        );
        assert_eq!(
            short_name(&format!("/machine.slice/libpod-{ID}.scope")),
            "podman 3f4e9a0b1c2d"
        );
        assert_eq!(
            short_name(&format!("/kubepods.slice/crio-{ID}.scope")),
            "crio 3f4e9a0b1c2d"
        );
    }

    #[test]
    fn kubernetes_systemd_driver() {
        let pod = "kubepods-burstable-pod8a1f2c3d_4b5e_6f70_8192_a3b4c5d6e7f8.slice";
        let base = format!("/kubepods.slice/kubepods-burstable.slice/{pod}");
        assert_eq!(short_name("/kubepods.slice"), "kubepods");
        assert_eq!(
            short_name("/kubepods.slice/kubepods-burstable.slice"),
            "burstable"
        );
        assert_eq!(short_name(&base), "burstable pod 8a1f2c3d");
        assert_eq!(
            short_name(&format!("{base}/cri-containerd-{ID}.scope")),
            "ctr 3f4e9a0b1c2d"
        );
        // guaranteed pods sit directly under kubepods.slice
        assert_eq!(
            short_name("/kubepods.slice/kubepods-pod0f1e2d3c_4b5a_6978_8796_a5b4c3d2e1f0.slice"),
            "pod 0f1e2d3c"
        );
    }

    #[test]
    fn kubernetes_cgroupfs_driver() {
        let pod = "/kubepods/besteffort/pod8a1f2c3d-4b5e-6f70-8192-a3b4c5d6e7f8";
        assert_eq!(short_name("/kubepods/besteffort"), "besteffort");
        assert_eq!(short_name(pod), "pod 8a1f2c3d");
        assert_eq!(short_name(&format!("{pod}/{ID}")), "ctr 3f4e9a0b1c2d");
    }

    #[test]
    fn near_misses_stay_as_they_are() {
        // too short to be a container id, not hex, not a uid
        assert_eq!(
            short_name("/system.slice/docker-abc.scope"),
            "docker-abc.scope"
        );
        assert_eq!(short_name("/podcast.slice"), "podcast.slice");
        assert_eq!(short_name("/pods"), "pods");
        // hostile names pass through unchanged (the display escapes them)
        assert_eq!(short_name("/x/\u{1b}[31mred"), "\u{1b}[31mred");
    }
}
