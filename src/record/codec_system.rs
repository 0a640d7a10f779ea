//! The box-wide figures of a Sample (context switches, run-queue and load
//! figures, the probes' losses) in a frame: cumulative counts as deltas on
//! the previous Sample's.
use super::varint::{put_delta, put_u64, Cursor, DResult};
use crate::model::{Losses, SystemSample};

pub(super) fn encode_system(out: &mut Vec<u8>, s: &SystemSample, p: &SystemSample) {
    put_delta(out, s.context_switches, p.context_switches);
    put_u64(out, s.procs_running.into());
    put_u64(out, s.procs_blocked.into());
    for l in s.load {
        out.extend_from_slice(&l.to_bits().to_le_bytes());
    }
    put_delta(out, s.losses.thread_map_full, p.losses.thread_map_full);
    put_delta(
        out,
        s.losses.migration_matrix_overflow,
        p.losses.migration_matrix_overflow,
    );
}

pub(super) fn decode_system(c: &mut Cursor, p: &SystemSample) -> DResult<SystemSample> {
    let context_switches = c.delta(p.context_switches)?;
    let procs_running = c.u32()?;
    let procs_blocked = c.u32()?;
    let load = [c.f64()?, c.f64()?, c.f64()?];
    let thread_map_full = c.delta(p.losses.thread_map_full)?;
    let migration_matrix_overflow = c.delta(p.losses.migration_matrix_overflow)?;
    Ok(SystemSample {
        context_switches,
        procs_running,
        procs_blocked,
        load,
        // torn_reads and exits_untraced are not in the format yet
        losses: Losses {
            thread_map_full,
            migration_matrix_overflow,
            ..Losses::default()
        },
        cpu_pressure: None,
        migrations_by_cause: Vec::new(),
    })
}
