//! Recordings: Samples to a file and back (docs/recording-format.md).
//!
//! - `format`: frames (magic, length, CRCs); `varint`: bounded decoding;
//! - `codec`: a Sample as a key frame or a delta on the previous one;
//! - `header`: the segment header (host, topology, versions);
//! - `index`: index frames (time → offset), chained back from the end;
//! - `scan`: finding frames through the index or by walking, with resync;
//! - `writer` / `reader`: the two ends; `storage`: positioned reads;
//! - `timeexpr`: `--from/--to`, `--duration`, `--max-size` expressions;
//! - `dump`: CSV / JSON export; `recorder`: the `record` command loop;
//! - `cli`: the `record`, `dump` and `replay` subcommands;
//! - `source`: a recording as a seekable `Source`;
//! - `fuzz`: the fuzz target's body, shared with a stable-Rust test;
//! - `testdata`: deterministic synthetic Samples (tests, benches, fixture).
pub mod cli;
pub mod codec;
pub mod dump;
pub mod format;
pub mod fuzz;
pub mod header;
pub mod index;
pub mod reader;
pub mod recorder;
pub mod scan;
pub mod source;
pub mod storage;
pub mod testdata;
pub mod timeexpr;
pub mod varint;
pub mod writer;

pub use reader::Reader;
pub use source::RecordingSource;
pub use writer::{OpenMode, WriteOptions, Writer, Written};
