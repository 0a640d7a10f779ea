//! One file per part of the screen; each draws from `&AppState` only.
pub mod cgroups;
pub mod cpus;
pub mod detail;
pub mod footer;
pub mod header;
pub mod header_marks;
pub mod help;
pub mod hist;
pub mod info;
pub mod key_hints;
pub mod numa;
mod numa_selection;
pub mod processes;
pub mod table;
pub mod threads;
pub mod timeline;
pub mod too_small;
pub mod why;
