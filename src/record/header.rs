//! The segment header: what a recording session writes first (twice, so one
//! damaged copy does not orphan its Samples). JSON, with its own field list
//! rather than `HostInfo`'s serde form, so a later change to the model does
//! not stop old recordings from opening; unknown fields are ignored and
//! missing ones take defaults.
use serde::{Deserialize, Serialize};

use super::format::FORMAT_VERSION;
use crate::model::{CpuTopology, HostInfo, SourceKind, Topology};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct FileHeader {
    /// always "schedtop-recording"
    pub format: String,
    pub format_version: u32,
    /// "schedtop 0.1.0"
    pub tool: String,
    /// when the segment started (ns since the epoch)
    pub created_ns: u64,
    pub hostname: String,
    pub kernel: String,
    /// "bpf" or "procfs"
    pub source: String,
    pub degraded_reason: Option<String>,
    pub interval_ns: u64,
    /// [cpu, node, llc] per online CPU
    pub topology: Vec<[u32; 3]>,
    /// the key-frame interval the writer used (informative)
    pub key_every: u32,
    /// set by `record --dir` only: which directory's recorder wrote the
    /// file, its place in that directory's sequence and the run (process)
    /// that wrote it; retention deletes nothing without it. Left out of
    /// the header when unset, as is `dropped_before` when 0: a file that
    /// is not a black box's reads byte for byte as before they existed
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dir: Option<DirMark>,
    /// Samples `record --dir` could not write just before this file (the
    /// disk was at its free-space floor); 0 otherwise
    #[serde(skip_serializing_if = "is_zero")]
    pub dropped_before: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// What marks a file as written by a directory's own recorder (header.dir).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct DirMark {
    /// random id of the directory, kept in its lock file
    pub id: u64,
    /// 0, 1, 2, ... per directory, in the order the files were started
    pub seq: u64,
    /// random id of the recorder process that wrote the file: files of one
    /// run follow each other without a gap
    pub run: u64,
}

impl Default for FileHeader {
    fn default() -> Self {
        FileHeader {
            format: FORMAT_NAME.into(),
            format_version: FORMAT_VERSION,
            tool: String::new(),
            created_ns: 0,
            hostname: String::new(),
            kernel: String::new(),
            source: "procfs".into(),
            degraded_reason: None,
            interval_ns: 1_000_000_000,
            topology: Vec::new(),
            key_every: 0,
            dir: None,
            dropped_before: 0,
        }
    }
}

pub const FORMAT_NAME: &str = "schedtop-recording";

impl FileHeader {
    pub fn new(host: &HostInfo, created_ns: u64, key_every: u32) -> Self {
        FileHeader {
            tool: format!("schedtop {}", env!("CARGO_PKG_VERSION")),
            created_ns,
            hostname: host.hostname.clone(),
            kernel: host.kernel.clone(),
            source: host.source.as_str().into(),
            degraded_reason: host.degraded_reason.clone(),
            interval_ns: host.interval_ns,
            topology: host
                .topology
                .cpus
                .iter()
                .map(|c| [c.cpu, c.node, c.llc])
                .collect(),
            key_every,
            ..Default::default()
        }
    }

    pub fn host(&self) -> HostInfo {
        HostInfo {
            hostname: self.hostname.clone(),
            kernel: self.kernel.clone(),
            topology: Topology {
                cpus: self
                    .topology
                    .iter()
                    .map(|&[cpu, node, llc]| CpuTopology { cpu, node, llc })
                    .collect(),
            },
            source: if self.source == "bpf" {
                SourceKind::Bpf
            } else {
                SourceKind::Procfs
            },
            degraded_reason: self.degraded_reason.clone(),
            sched_ext: None,
            interval_ns: self.interval_ns,
        }
    }

    pub fn to_bytes(&self) -> Vec<u8> {
        serde_json::to_vec(self).unwrap_or_default()
    }

    /// Parse a header payload; None if it is not one of ours.
    pub fn from_bytes(b: &[u8]) -> Option<FileHeader> {
        let h = serde_json::from_slice::<FileHeader>(b)
            .ok()
            .filter(|h| h.format == FORMAT_NAME)
            .ok_or(());
        super::fuzz_tally::tally(super::fuzz_tally::Decoder::Header, h).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::testdata::{synthetic_host, SynthOptions};

    #[test]
    fn host_round_trips_and_old_headers_still_parse() {
        let host = synthetic_host(&SynthOptions {
            cpus: 8,
            ..Default::default()
        });
        let h = FileHeader::new(&host, 5, 60);
        let back = FileHeader::from_bytes(&h.to_bytes()).unwrap();
        assert_eq!(back, h);
        assert_eq!(back.host(), host);
        assert!(back.tool.starts_with("schedtop "));
        // the directory mark survives the round trip; a header without one
        // (every file before it) parses as foreign
        let mut h = FileHeader::new(&host, 5, 60);
        h.dir = Some(DirMark {
            id: u64::MAX,
            seq: 7,
            run: 3,
        });
        h.dropped_before = 12;
        assert_eq!(FileHeader::from_bytes(&h.to_bytes()).unwrap(), h);
        // a header from a version with fewer (and other) fields
        let old = br#"{"format":"schedtop-recording","format_version":1,"hostname":"a","extra":3}"#;
        let h = FileHeader::from_bytes(old).unwrap();
        assert_eq!(h.hostname, "a");
        assert_eq!((h.dir, h.dropped_before), (None, 0));
        assert!(FileHeader::from_bytes(br#"{"format":"other"}"#).is_none());
        assert!(FileHeader::from_bytes(b"\xff").is_none());
    }
}
