//! How many inputs reached each decoder of the recording format: every
//! decoder passes its result through `tally` (a thread-local add, nothing to
//! notice outside fuzzing), and the fuzz targets print the census.
use std::cell::Cell;

/// The decoders behind the frame layer.
#[derive(Clone, Copy, Debug)]
pub enum Decoder {
    /// zstd payload to an encoded Sample
    Decompress = 0,
    /// an encoded Sample to a Sample
    Sample = 1,
    /// an index frame's entries
    Index = 2,
    /// a segment header's JSON
    Header = 3,
}

pub const DECODERS: [(Decoder, &str); 4] = [
    (Decoder::Decompress, "decompress"),
    (Decoder::Sample, "sample"),
    (Decoder::Index, "index"),
    (Decoder::Header, "header"),
];

// Per thread, so tests running side by side do not blur each other's tally.
thread_local! {
    static CALLS: [Cell<u64>; 4] = const { [const { Cell::new(0) }; 4] };
    static REJECTS: [Cell<u64>; 4] = const { [const { Cell::new(0) }; 4] };
    static DECOMPRESSED: Cell<u64> = const { Cell::new(0) };
}

fn bump(c: &Cell<u64>, n: u64) {
    c.set(c.get().wrapping_add(n));
}

/// Every decoder passes its result through here: a call, and whether it
/// rejected its input (a thread-local add: nothing to notice outside
/// fuzzing).
pub(crate) fn tally<T, E>(d: Decoder, r: Result<T, E>) -> Result<T, E> {
    CALLS.with(|c| bump(&c[d as usize], 1));
    if r.is_err() {
        REJECTS.with(|c| bump(&c[d as usize], 1));
    }
    r
}

/// Bytes the zstd decoder produced: work an input causes beyond its size.
pub(crate) fn decompressed(n: usize) {
    DECOMPRESSED.with(|c| bump(c, n as u64));
}

/// Bytes decompressed so far on this thread.
pub fn decompressed_total() -> u64 {
    DECOMPRESSED.with(Cell::get)
}

fn counts() -> ([u64; 4], [u64; 4]) {
    (
        CALLS.with(|c| std::array::from_fn(|i| c[i].get())),
        REJECTS.with(|c| std::array::from_fn(|i| c[i].get())),
    )
}

/// How many inputs reached each decoder (at least once), and how many of
/// them it rejected (damaged data that got past the frame layer).
#[derive(Clone, Debug, Default)]
pub struct Census {
    pub inputs: u64,
    pub reached: [u64; 4],
    pub rejected: [u64; 4],
}

impl Census {
    /// Run `f` on one input and note which decoders it reached.
    pub fn run<T>(&mut self, f: impl FnOnce() -> T) -> T {
        let before = counts();
        let out = f();
        let after = counts();
        self.inputs += 1;
        for i in 0..4 {
            if after.0[i] > before.0[i] {
                self.reached[i] += 1;
            }
            if after.1[i] > before.1[i] {
                self.rejected[i] += 1;
            }
        }
        out
    }

    pub fn get(&self, d: Decoder) -> u64 {
        self.reached[d as usize]
    }

    pub fn rejected_by(&self, d: Decoder) -> u64 {
        self.rejected[d as usize]
    }

    pub fn report(&self, target: &str) -> String {
        let per: Vec<String> = DECODERS
            .iter()
            .map(|&(d, name)| format!("{name} {} ({} rejected)", self.get(d), self.rejected_by(d)))
            .collect();
        format!(
            "{target}: {} inputs; reached {}",
            self.inputs,
            per.join(", ")
        )
    }
}
