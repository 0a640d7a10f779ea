//! The replay cursor as the UI state holds it: where playback is in a
//! recording, how fast, the jump prompt. Data only; replay.rs moves it.

/// Where the cursor is in the recording: state only. The recording itself
/// (a `Seekable` source) is the event loop's (`Session`), which hands it to
/// the functions below that read Samples.
#[derive(Clone, Debug)]
pub struct Replay {
    /// the file's name, for the header
    pub name: String,
    pub len: usize,
    pub first_ns: u64,
    pub last_ns: u64,
    /// the Sample on screen (None until one decoded)
    pub index: Option<usize>,
    pub playing: bool,
    pub speed: f64,
    /// the jump prompt's text while it is open
    pub prompt: Option<String>,
    /// monotonic ns when the next Sample is due while playing
    pub(super) due_ns: Option<u64>,
    /// the segment start whose Sample is `app.first` (since-start histograms)
    pub(super) first_of: Option<usize>,
}
