//! Artifact names: `schedtop-HOST-YYYYMMDD-HHMMSS.EXT`, one rule for
//! screenshots, traces and recordings.
use std::time::{SystemTime, UNIX_EPOCH};

/// [`file_name`] with any extension (`pftrace` for the flight recorder).
pub fn file_name_ext(host: &str, time: SystemTime, ext: &str) -> String {
    let secs = time
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let (y, mo, d) = super::clock::civil_from_days((secs / 86_400) as i64);
    let rem = secs % 86_400;
    format!(
        "schedtop-{}-{y:04}{mo:02}{d:02}-{:02}{:02}{:02}.{}",
        sanitize_host(host),
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        ext
    )
}

pub fn sanitize_host(host: &str) -> String {
    let mut s: String = host
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .take(64)
        .collect();
    if s.starts_with('.') {
        s.replace_range(0..1, "_");
    }
    if s.is_empty() {
        s.push_str("unknown");
    }
    s
}
