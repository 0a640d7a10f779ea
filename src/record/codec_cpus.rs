//! The per-CPU and CPU-to-CPU migration parts of a Sample's encoding
//! (codec.rs): each a delta on the previous Sample's same CPU or cell.
use std::collections::HashMap;

use super::codec_budget::Budget;
use super::codec_counts::{decode_counts, encode_counts};
use super::varint::{put_delta, put_u64, Cursor, DResult, DecodeError};
use crate::model::{CpuIrqSample, CpuSample, MigrationCount, RqSample};

pub(super) fn encode_cpus(out: &mut Vec<u8>, cpus: &[CpuSample], prev: &[CpuSample]) {
    put_u64(out, cpus.len() as u64);
    for (i, cpu) in cpus.iter().enumerate() {
        let r = prev.get(i);
        put_delta(out, cpu.cpu.into(), r.map_or(i as u64, |r| r.cpu.into()));
        put_delta(out, cpu.switches, r.map_or(0, |r| r.switches));
        put_delta(out, cpu.busy_ns, r.map_or(0, |r| r.busy_ns));
        let rr = r.and_then(|r| r.rq.as_ref());
        out.push(presence(cpu));
        if let Some(rq) = &cpu.rq {
            put_delta(out, rq.samples, rr.map_or(0, |x| x.samples));
            put_delta(out, rq.sum, rr.map_or(0, |x| x.sum));
            put_u64(out, rq.freq_hz.into());
            encode_counts(out, &rq.hist, rr.map(|x| x.hist.as_slice()));
        }
        if let Some(irq) = &cpu.irq {
            let ri = r.and_then(|r| r.irq.as_ref());
            put_delta(out, irq.stat_irq_ns, ri.map_or(0, |x| x.stat_irq_ns));
            put_delta(
                out,
                irq.stat_softirq_ns,
                ri.map_or(0, |x| x.stat_softirq_ns),
            );
            put_delta(out, irq.stat_steal_ns, ri.map_or(0, |x| x.stat_steal_ns));
            for (v, was) in [
                (irq.probe_irq_ns, ri.and_then(|x| x.probe_irq_ns)),
                (irq.probe_softirq_ns, ri.and_then(|x| x.probe_softirq_ns)),
            ] {
                if let Some(v) = v {
                    put_delta(out, v, was.unwrap_or(0));
                }
            }
        }
    }
}

/// What follows a CPU's counters: bit 0 its run-queue figures, bit 1 its
/// interrupt time, bits 2 and 3 the probes' hardirq and softirq time within
/// it (format 5 and older write 0 or 1).
const RQ: u8 = 1;
const IRQ: u8 = 2;
const PROBE_IRQ: u8 = 4;
const PROBE_SOFTIRQ: u8 = 8;

fn presence(cpu: &CpuSample) -> u8 {
    let mut p = if cpu.rq.is_some() { RQ } else { 0 };
    if let Some(irq) = &cpu.irq {
        p |= IRQ;
        if irq.probe_irq_ns.is_some() {
            p |= PROBE_IRQ;
        }
        if irq.probe_softirq_ns.is_some() {
            p |= PROBE_SOFTIRQ;
        }
    }
    p
}

pub(super) fn decode_cpus(
    c: &mut Cursor,
    prev: &[CpuSample],
    b: &mut Budget,
) -> DResult<Vec<CpuSample>> {
    let n = c.count(4)?;
    b.items::<CpuSample>(n)?;
    let mut cpus = Vec::with_capacity(n);
    for i in 0..n {
        let r = prev.get(i);
        let cpu = u32::try_from(c.delta(r.map_or(i as u64, |r| r.cpu.into()))?)
            .map_err(|_| DecodeError("CPU id over 32 bits"))?;
        let switches = c.delta(r.map_or(0, |r| r.switches))?;
        let busy_ns = c.delta(r.map_or(0, |r| r.busy_ns))?;
        let rr = r.and_then(|r| r.rq.as_ref());
        let p = c.u8()?;
        if p > RQ | IRQ | PROBE_IRQ | PROBE_SOFTIRQ || (p & IRQ == 0 && p > RQ) {
            return Err(DecodeError("bad CPU presence byte"));
        }
        let rq = match p & RQ {
            0 => None,
            _ => Some(RqSample {
                samples: c.delta(rr.map_or(0, |x| x.samples))?,
                sum: c.delta(rr.map_or(0, |x| x.sum))?,
                freq_hz: c.u32()?,
                hist: decode_counts(c, rr.map(|x| x.hist.as_slice()), b)?,
            }),
        };
        let irq = match p & IRQ {
            0 => None,
            _ => {
                let ri = r.and_then(|r| r.irq.as_ref());
                let stat_irq_ns = c.delta(ri.map_or(0, |x| x.stat_irq_ns))?;
                let stat_softirq_ns = c.delta(ri.map_or(0, |x| x.stat_softirq_ns))?;
                let stat_steal_ns = c.delta(ri.map_or(0, |x| x.stat_steal_ns))?;
                let probe_irq_ns = match p & PROBE_IRQ {
                    0 => None,
                    _ => Some(c.delta(ri.and_then(|x| x.probe_irq_ns).unwrap_or(0))?),
                };
                let probe_softirq_ns = match p & PROBE_SOFTIRQ {
                    0 => None,
                    _ => Some(c.delta(ri.and_then(|x| x.probe_softirq_ns).unwrap_or(0))?),
                };
                Some(CpuIrqSample {
                    stat_irq_ns,
                    stat_softirq_ns,
                    stat_steal_ns,
                    probe_irq_ns,
                    probe_softirq_ns,
                })
            }
        };
        cpus.push(CpuSample {
            irq,
            cpu,
            switches,
            busy_ns,
            rq,
        });
    }
    Ok(cpus)
}

pub(crate) fn encode_migrations(
    out: &mut Vec<u8>,
    cells: &[MigrationCount],
    prev: &[MigrationCount],
) {
    let before: HashMap<(u32, u32), u64> = prev
        .iter()
        .map(|m| ((m.from_cpu, m.to_cpu), m.count))
        .collect();
    put_u64(out, cells.len() as u64);
    let (mut from, mut to) = (0u64, 0u64);
    for m in cells {
        put_delta(out, m.from_cpu.into(), from);
        put_delta(out, m.to_cpu.into(), to);
        from = m.from_cpu.into();
        to = m.to_cpu.into();
        let b = before.get(&(m.from_cpu, m.to_cpu)).copied().unwrap_or(0);
        put_delta(out, m.count, b);
    }
}

pub(crate) fn decode_migrations(
    c: &mut Cursor,
    prev: &[MigrationCount],
    b: &mut Budget,
) -> DResult<Vec<MigrationCount>> {
    let before: HashMap<(u32, u32), u64> = prev
        .iter()
        .map(|m| ((m.from_cpu, m.to_cpu), m.count))
        .collect();
    let n = c.count(3)?;
    b.items::<MigrationCount>(n)?;
    let mut cells = Vec::with_capacity(n);
    let (mut from, mut to) = (0u64, 0u64);
    for _ in 0..n {
        from = c.delta(from)?;
        to = c.delta(to)?;
        let (f, t) = (
            u32::try_from(from).map_err(|_| DecodeError("CPU id over 32 bits"))?,
            u32::try_from(to).map_err(|_| DecodeError("CPU id over 32 bits"))?,
        );
        let b = before.get(&(f, t)).copied().unwrap_or(0);
        cells.push(MigrationCount {
            from_cpu: f,
            to_cpu: t,
            count: c.delta(b)?,
        });
    }
    Ok(cells)
}
