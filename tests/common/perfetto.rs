//! A protobuf reader for the subset of Perfetto's trace format that
//! schedtop writes (written for the tests, independent of the encoder):
//! `decode` a whole trace file into clocks, events and the process tree.
use std::collections::HashMap;

#[derive(Debug, Clone, Copy)]
pub enum Val<'a> {
    Varint(u64),
    Bytes(&'a [u8]),
}

pub fn read_varint(b: &[u8], pos: &mut usize) -> Result<u64, String> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let byte = *b.get(*pos).ok_or("truncated varint")?;
        *pos += 1;
        v |= ((byte & 0x7f) as u64) << shift;
        if byte & 0x80 == 0 {
            return Ok(v);
        }
    }
    Err("varint longer than 10 bytes".into())
}

/// Every (field number, value) of one message, in order.
pub fn fields(b: &[u8]) -> Result<Vec<(u64, Val<'_>)>, String> {
    let mut out = Vec::new();
    let mut pos = 0;
    while pos < b.len() {
        let key = read_varint(b, &mut pos)?;
        let (field, wire) = (key >> 3, key & 7);
        match wire {
            0 => out.push((field, Val::Varint(read_varint(b, &mut pos)?))),
            2 => {
                let len = read_varint(b, &mut pos)? as usize;
                let end = pos
                    .checked_add(len)
                    .filter(|&e| e <= b.len())
                    .ok_or("truncated bytes")?;
                out.push((field, Val::Bytes(&b[pos..end])));
                pos = end;
            }
            1 => pos += 8,
            5 => pos += 4,
            w => return Err(format!("unexpected wire type {w} for field {field}")),
        }
    }
    if pos != b.len() {
        return Err("fixed-width field runs past the end".into());
    }
    Ok(out)
}

pub fn get<'a>(f: &[(u64, Val<'a>)], n: u64) -> Option<Val<'a>> {
    f.iter().find(|(k, _)| *k == n).map(|(_, v)| *v)
}

pub fn uint(f: &[(u64, Val<'_>)], n: u64) -> Option<u64> {
    match get(f, n) {
        Some(Val::Varint(v)) => Some(v),
        _ => None,
    }
}

pub fn int32(f: &[(u64, Val<'_>)], n: u64) -> Option<i32> {
    uint(f, n).map(|v| v as i64 as i32)
}

pub fn string(f: &[(u64, Val<'_>)], n: u64) -> Option<String> {
    match get(f, n) {
        Some(Val::Bytes(b)) => Some(String::from_utf8(b.to_vec()).expect("UTF-8 string")),
        _ => None,
    }
}

/// (cpu, timestamp, common pid, event field number, the event's fields)
pub type Event = (u32, u64, u32, u64, Vec<(u64, Val<'static>)>);

#[derive(Debug, Default)]
pub struct Decoded {
    pub clocks: HashMap<u64, u64>,
    pub events: Vec<Event>,
    /// tid -> (tgid, name)
    pub threads: HashMap<i32, (i32, String)>,
}

pub fn decode(file: &'static [u8]) -> Decoded {
    let mut d = Decoded::default();
    for (n, packet) in fields(file).expect("Trace") {
        assert_eq!(n, 1, "Trace has only packets");
        let Val::Bytes(packet) = packet else {
            panic!("packet is a message")
        };
        let p = fields(packet).expect("TracePacket");
        assert_eq!(uint(&p, 10), Some(1), "trusted_packet_sequence_id");
        if let Some(Val::Bytes(snap)) = get(&p, 6) {
            for (k, c) in fields(snap).unwrap() {
                if let (1, Val::Bytes(c)) = (k, c) {
                    let c = fields(c).unwrap();
                    d.clocks.insert(uint(&c, 1).unwrap(), uint(&c, 2).unwrap());
                }
            }
        }
        if let Some(Val::Bytes(bundle)) = get(&p, 1) {
            let b = fields(bundle).expect("FtraceEventBundle");
            let cpu = uint(&b, 1).expect("bundle cpu") as u32;
            for (k, ev) in b {
                let (2, Val::Bytes(ev)) = (k, ev) else {
                    continue;
                };
                let e = fields(ev).expect("FtraceEvent");
                let ts = uint(&e, 1).expect("timestamp");
                let pid = uint(&e, 2).expect("pid") as u32;
                let (which, body) = e
                    .iter()
                    .find_map(|(k, v)| match v {
                        Val::Bytes(b) if *k != 1 && *k != 2 => Some((*k, *b)),
                        _ => None,
                    })
                    .expect("one event payload");
                d.events
                    .push((cpu, ts, pid, which, fields(body).expect("event body")));
            }
        }
        if let Some(Val::Bytes(tree)) = get(&p, 2) {
            for (k, t) in fields(tree).unwrap() {
                if let (2, Val::Bytes(t)) = (k, t) {
                    let t = fields(t).unwrap();
                    d.threads.insert(
                        int32(&t, 1).unwrap(),
                        (int32(&t, 5).unwrap_or(0), string(&t, 2).unwrap_or_default()),
                    );
                }
            }
        }
    }
    d
}

pub const SCHED_SWITCH: u64 = 4;
pub const SCHED_WAKEUP: u64 = 17;
pub const SCHED_WAKEUP_NEW: u64 = 114;
pub const SCHED_MIGRATE_TASK: u64 = 491;
