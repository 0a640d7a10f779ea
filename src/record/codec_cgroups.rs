//! The cgroups of a recorded Sample (format 3), after its threads: the
//! list (paths written only when they differ from the previous Sample's),
//! each cgroup's cgroupfs figures, the system's CPU pressure, and each
//! thread's cgroup as 0 (unknown) or 1 + its index. Format 1 and 2 Samples
//! end with their threads: they read as having no cgroups.
use super::varint::{put_bytes, put_u64, Cursor, DResult, DecodeError};
use crate::model::cgroup::MAX_CGROUPS;
use crate::model::{CgroupSample, Pressure, Sample, ThreadSample};

fn put_opt(out: &mut Vec<u8>, v: Option<u64>) {
    put_u64(out, v.map_or(0, |v| v.saturating_add(1)));
}

fn get_opt(c: &mut Cursor) -> DResult<Option<u64>> {
    Ok(c.u64()?.checked_sub(1))
}

fn put_f(out: &mut Vec<u8>, v: Option<f64>) {
    match v {
        None => out.push(0),
        Some(v) => {
            out.push(1);
            out.extend_from_slice(&v.to_bits().to_le_bytes());
        }
    }
}

fn get_f(c: &mut Cursor) -> DResult<Option<f64>> {
    match c.u8()? {
        0 => Ok(None),
        1 => Ok(Some(c.f64()?)),
        _ => Err(DecodeError("bad optional number in a cgroup")),
    }
}

fn put_pressure(out: &mut Vec<u8>, p: Option<&Pressure>) {
    let Some(p) = p else {
        out.push(0);
        return;
    };
    out.push(1);
    put_f(out, Some(p.some_avg10));
    put_u64(out, p.some_total_us);
    put_f(out, p.full_avg10);
    put_opt(out, p.full_total_us);
}

fn get_pressure(c: &mut Cursor) -> DResult<Option<Pressure>> {
    match c.u8()? {
        0 => Ok(None),
        1 => Ok(Some(Pressure {
            some_avg10: get_f(c)?.unwrap_or(0.0),
            some_total_us: c.u64()?,
            full_avg10: get_f(c)?,
            full_total_us: get_opt(c)?,
        })),
        _ => Err(DecodeError("bad pressure in a cgroup")),
    }
}

/// Whether `cur` has anything for this section (else nothing is written
/// and the Sample reads as format 2 would).
pub(super) fn has_cgroups(cur: &Sample) -> bool {
    !cur.cgroups.is_empty()
        || cur.system.cpu_pressure.is_some()
        || cur.threads.iter().any(|t| t.cgroup.is_some())
}

pub(super) fn encode_cgroups(out: &mut Vec<u8>, cur: &Sample, prev: &Sample) {
    let same = cur.cgroups.len() == prev.cgroups.len()
        && cur
            .cgroups
            .iter()
            .zip(&prev.cgroups)
            .all(|(a, b)| a.path == b.path);
    put_u64(out, cur.cgroups.len() as u64);
    out.push(u8::from(same));
    for c in &cur.cgroups {
        if !same {
            put_bytes(out, c.path.as_bytes());
        }
        put_f(out, c.quota_cpus);
        put_opt(out, c.cpuset_cpus.map(u64::from));
        put_opt(out, c.nr_periods);
        put_opt(out, c.nr_throttled);
        put_opt(out, c.throttled_ns);
        put_pressure(out, c.pressure.as_ref());
    }
    put_pressure(out, cur.system.cpu_pressure.as_deref());
    put_u64(out, cur.threads.len() as u64);
    for t in &cur.threads {
        put_u64(out, t.cgroup.map_or(0, |i| u64::from(i) + 1));
    }
}

/// Read the section into `s` (its threads already decoded).
pub(super) fn decode_cgroups(c: &mut Cursor, s: &mut Sample, prev: &Sample) -> DResult<()> {
    // each cgroup takes at least 7 bytes
    let n = c.count(7)?;
    if n > MAX_CGROUPS {
        return Err(DecodeError("more cgroups than the limit"));
    }
    let same = match c.u8()? {
        0 => false,
        1 => true,
        _ => return Err(DecodeError("bad cgroup list flag")),
    };
    if same && n != prev.cgroups.len() {
        return Err(DecodeError(
            "cgroup list differs from the previous Sample's",
        ));
    }
    let mut list = Vec::with_capacity(n);
    for i in 0..n {
        let path = if same {
            prev.cgroups[i].path.clone()
        } else {
            c.string()?
        };
        list.push(CgroupSample {
            path,
            quota_cpus: get_f(c)?,
            cpuset_cpus: get_opt(c)?.map(|v| u32::try_from(v).unwrap_or(u32::MAX)),
            nr_periods: get_opt(c)?,
            nr_throttled: get_opt(c)?,
            throttled_ns: get_opt(c)?,
            pressure: get_pressure(c)?,
        });
    }
    s.cgroups = list;
    s.system.cpu_pressure = get_pressure(c)?.map(Box::new);
    let nt = c.count(1)?;
    if nt != s.threads.len() {
        return Err(DecodeError("cgroup of a thread the Sample does not have"));
    }
    for t in s.threads.iter_mut() {
        set_cgroup(t, c.u64()?, n)?;
    }
    Ok(())
}

fn set_cgroup(t: &mut ThreadSample, code: u64, n: usize) -> DResult<()> {
    t.cgroup = match code.checked_sub(1) {
        None => None,
        Some(i) if (i as usize) < n => Some(i as u32),
        Some(_) => return Err(DecodeError("thread in a cgroup that is not listed")),
    };
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::codec::{decode, encode};
    use crate::model::{CgroupSample, Pressure, Sample, ThreadSample};

    /// Two Samples a second apart: three cgroups, one throttled.
    fn samples() -> Vec<Sample> {
        (0..2u64)
            .map(|i| Sample {
                time_ns: 1_000_000_000 * (i + 1),
                mono_ns: 1_000_000_000 * (i + 1),
                threads: (0..3)
                    .map(|t| ThreadSample {
                        tid: 10 + t,
                        pid: 10,
                        comm: "w".into(),
                        cgroup: (t > 0).then_some(t),
                        ..Default::default()
                    })
                    .collect(),
                cgroups: ["/", "/a", "/a/b.service"]
                    .iter()
                    .map(|p| CgroupSample {
                        path: (*p).into(),
                        quota_cpus: (*p == "/a").then_some(0.5),
                        cpuset_cpus: Some(4),
                        nr_periods: Some(10 * i),
                        nr_throttled: Some(3 * i),
                        throttled_ns: (*p != "/").then_some(7_000_000 * i),
                        pressure: Some(Pressure {
                            some_avg10: 1.5,
                            some_total_us: 900 * i,
                            full_avg10: None,
                            full_total_us: Some(i),
                        }),
                    })
                    .collect(),
                system: crate::model::SystemSample {
                    cpu_pressure: Some(Box::new(Pressure::default())),
                    ..Default::default()
                },
                ..Default::default()
            })
            .collect()
    }

    #[test]
    fn cgroups_round_trip_as_key_and_delta_frames() {
        let s = samples();
        assert_eq!(decode(&encode(&s[0], None), None).unwrap(), s[0]);
        let delta = encode(&s[1], Some(&s[0]));
        assert_eq!(decode(&delta, Some(&s[0])).unwrap(), s[1]);
        // a delta names the paths only when the list changed
        let mut moved = s[1].clone();
        moved.cgroups[1].path = "/a-renamed".into();
        let d2 = encode(&moved, Some(&s[0]));
        assert!(d2.len() > delta.len());
        assert_eq!(decode(&d2, Some(&s[0])).unwrap(), moved);
        // a Sample without cgroups writes nothing for them (format 2 bytes)
        let mut none = s[1].clone();
        none.cgroups.clear();
        none.system.cpu_pressure = None;
        none.threads.iter_mut().for_each(|t| t.cgroup = None);
        let raw = encode(&none, None);
        assert_eq!(decode(&raw, None).unwrap(), none);
    }

    #[test]
    fn a_thread_in_an_unlisted_cgroup_is_an_error_not_a_panic() {
        let s = samples();
        let mut bad = s[0].clone();
        bad.threads[0].cgroup = Some(bad.cgroups.len() as u32);
        assert!(decode(&encode(&bad, None), None).is_err());
        // cut anywhere inside the section: an error, never a panic
        let raw = encode(&s[0], None);
        for cut in (raw.len() - 20)..raw.len() {
            assert!(decode(&raw[..cut], None).is_err(), "cut at {cut}");
        }
    }
}
