//! Helpers every layer may use (and which use nothing of schedtop's):
//! clocks, safe file creation, artifact names, signal flags, capabilities.
pub mod clock;
pub mod files;
pub mod heap;
pub mod invisible_chars;
pub mod names;
pub mod privileges;
pub mod proc_text;
pub mod read_regular;
pub mod signals;
pub mod stdio;
