//! Ways out of schedtop other than the terminal.
pub mod cgroup_csv;
pub mod dump;
pub mod flight_ring;
pub mod json;
pub mod perfetto;
pub mod screenshot;
