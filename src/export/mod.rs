//! Ways out of schedtop other than the terminal.
pub mod json;
pub mod perfetto;
pub mod screenshot;
