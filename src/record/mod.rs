//! Recordings: Samples to a file and back (docs/recording-format.md).
//!
//! - `format`: frames (magic, length, CRCs); `varint`: bounded decoding;
//! - `codec`: a Sample as a key frame or a delta on the previous one
//!   (`codec_ancestors`: a filter's ancestor processes beside it);
//! - `header`: the segment header (host, topology, versions);
//! - `index`: index frames (time → offset), chained back from the end;
//! - `scan`: finding frames through the index or by walking, with resync;
//! - `writer` / `reader`: the two ends; `storage`: positioned reads;
//! - `timeexpr`: `--from/--to`, `--duration`, `--max-size` expressions;
//! - `recorder`: the `record` command (the sampler with a writer sink);
//! - `dir_writer`: `record --dir`; `retention`: which of its files it may
//!   delete, in which order; `disk_floor`: `--keep-free`;
//! - `sample_trim`: a Sample too large for a frame, trimmed;
//! - `source`: a recording as a seekable `Source`;
//! - `testdata`: deterministic synthetic Samples (tests, benches, fixture).
pub mod black_box;
pub mod codec;
mod codec_ancestors;
mod codec_attrs;
mod codec_budget;
mod codec_cgroups;
mod codec_counters;
mod codec_counts;
mod codec_cpus;
mod codec_hist;
pub mod codec_sizes;
mod codec_streams;
mod codec_system;
mod codec_why;
mod codec_zstd;
/// Hostile recordings for tests and the fuzz corpus (not in the release binary).
#[cfg(any(test, feature = "testdata"))]
#[doc(hidden)]
pub mod crafted;
pub mod dir;
pub mod dir_files;
pub mod dir_writer;
pub mod disk_floor;
pub mod format;
pub mod fuzz_tally;
pub mod header;
pub mod index;
mod lockinfo;
pub mod reader;
pub mod recorder;
pub mod retention;
pub mod sample_trim;
pub mod scan;
pub mod source;
pub mod storage;
#[cfg(any(test, feature = "testdata"))]
pub mod testdata;
pub mod timeexpr;
pub mod varint;
pub mod window;
pub mod writer;

pub use reader::Reader;
pub use source::RecordingSource;
pub use writer::{LeftOut, OpenMode, WriteOptions, Writer, Written};
