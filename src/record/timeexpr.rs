//! Time expressions for `dump --from/--to` (and the replay view's jump),
//! durations for `--duration` and sizes for `--max-size`.
//!
//! - `2026-11-21T23:15:00Z`, `2026-11-21 23:15:00+01:00`: an instant
//!   (no zone: local time, like `date`);
//! - `23:15`, `23:15:00`, `23:15:00Z`: a clock time, local unless `Z`; the
//!   latest such moment at or before the end of the recording;
//! - `-5m`: before the end of the recording; `+90s`: after its start.
//!
//! Errors are one line that says what is accepted.
const NS: u64 = 1_000_000_000;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeExpr {
    /// ns since the epoch
    At(u64),
    /// seconds into the day (and ns), in local time or UTC
    Clock {
        secs: u32,
        nanos: u32,
        utc: bool,
    },
    FromEnd(u64),
    FromStart(u64),
}

const TIME_HELP: &str =
    "expected 2026-11-21T23:15:00Z, 23:15:00, -5m (before the end) or +90s (after the start)";

/// Parse a time expression; the error is one line.
pub fn parse_time(s: &str) -> Result<TimeExpr, String> {
    let t = s.trim();
    let bad = || format!("bad time {s:?}: {TIME_HELP}");
    if let Some(rest) = t.strip_prefix('-') {
        return parse_duration(rest)
            .map(TimeExpr::FromEnd)
            .map_err(|_| bad());
    }
    if let Some(rest) = t.strip_prefix('+') {
        return parse_duration(rest)
            .map(TimeExpr::FromStart)
            .map_err(|_| bad());
    }
    if t.len() >= 10 && t.as_bytes().get(4) == Some(&b'-') {
        return parse_datetime(t).ok_or_else(bad);
    }
    let (clock, utc) = match t.strip_suffix(['Z', 'z']) {
        Some(c) => (c, true),
        None => (t, false),
    };
    let (secs, nanos) = parse_clock(clock).ok_or_else(bad)?;
    Ok(TimeExpr::Clock { secs, nanos, utc })
}

/// "HH:MM[:SS[.frac]]" to (seconds into the day, ns).
fn parse_clock(s: &str) -> Option<(u32, u32)> {
    let mut parts = s.split(':');
    let h: u32 = num(parts.next()?, 2)?;
    let m: u32 = num(parts.next()?, 2)?;
    let (sec, nanos) = match parts.next() {
        None => (0, 0),
        Some(p) => {
            let (whole, frac) = p.split_once('.').unwrap_or((p, ""));
            (num(whole, 2)?, frac_ns(frac)?)
        }
    };
    if parts.next().is_some() || h > 23 || m > 59 || sec > 60 {
        return None;
    }
    Some((h * 3600 + m * 60 + sec, nanos))
}

fn num(s: &str, width: usize) -> Option<u32> {
    if s.len() != width || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

fn frac_ns(f: &str) -> Option<u32> {
    if f.is_empty() {
        return Some(0);
    }
    if f.len() > 9 || !f.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let v: u32 = f.parse().ok()?;
    Some(v * 10u32.pow(9 - f.len() as u32))
}

/// Days since 1970-01-01 of a proleptic Gregorian date.
pub fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let m = m as i64;
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + d as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn parse_datetime(t: &str) -> Option<TimeExpr> {
    let y: i64 = num(t.get(0..4)?, 4)? as i64;
    if t.get(4..5)? != "-" || t.get(7..8)? != "-" {
        return None;
    }
    let mo = num(t.get(5..7)?, 2)?;
    let d = num(t.get(8..10)?, 2)?;
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) {
        return None;
    }
    let rest = t.get(10..)?;
    let rest = rest
        .strip_prefix('T')
        .or_else(|| rest.strip_prefix('t'))
        .or_else(|| rest.strip_prefix(' '))
        .unwrap_or(rest);
    // zone: Z, ±HH:MM, ±HHMM or nothing (local)
    let (clock, offset_s): (&str, Option<i64>) = if rest.is_empty() {
        ("00:00", None)
    } else if let Some(c) = rest.strip_suffix(['Z', 'z']) {
        (c, Some(0))
    } else if let Some(i) = rest.rfind(['+', '-']) {
        let (c, z) = rest.split_at(i);
        let sign = if z.starts_with('-') { -1 } else { 1 };
        let z = z[1..].replace(':', "");
        let hh = num(z.get(0..2)?, 2)? as i64;
        let mm = num(z.get(2..)?, 2)? as i64;
        (c, Some(sign * (hh * 3600 + mm * 60)))
    } else {
        (rest, None)
    };
    let (secs, nanos) = parse_clock(clock)?;
    let days = days_from_civil(y, mo, d);
    let epoch_s = match offset_s {
        Some(off) => days * 86_400 + secs as i64 - off,
        None => local_to_epoch(days, secs)?,
    };
    let ns = u64::try_from(epoch_s).ok()?.checked_mul(NS)? + nanos as u64;
    Some(TimeExpr::At(ns))
}

/// Local date (days since the epoch, as a civil date) and clock to epoch
/// seconds, through the C library's time zone rules (TZ).
fn local_to_epoch(days: i64, secs: u32) -> Option<i64> {
    let (y, m, d) = crate::util::clock::civil_from_days(days);
    // SAFETY: tm is plain data; mktime reads and normalises it.
    unsafe {
        let mut tm: libc::tm = std::mem::zeroed();
        tm.tm_year = (y - 1900) as i32;
        tm.tm_mon = m as i32 - 1;
        tm.tm_mday = d as i32;
        tm.tm_hour = (secs / 3600) as i32;
        tm.tm_min = (secs / 60 % 60) as i32;
        tm.tm_sec = (secs % 60) as i32;
        tm.tm_isdst = -1;
        let t = libc::mktime(&mut tm);
        (t != -1).then_some(t)
    }
}

/// The local civil date (as days since the epoch) of an epoch second.
fn local_days(epoch_s: i64) -> Option<i64> {
    // SAFETY: localtime_r fills tm from t; both are plain data.
    unsafe {
        let t: libc::time_t = epoch_s;
        let mut tm: libc::tm = std::mem::zeroed();
        if libc::localtime_r(&t, &mut tm).is_null() {
            return None;
        }
        Some(days_from_civil(
            tm.tm_year as i64 + 1900,
            tm.tm_mon as u32 + 1,
            tm.tm_mday as u32,
        ))
    }
}

impl TimeExpr {
    /// The instant meant, for a recording spanning `first..=last` (ns).
    pub fn resolve(&self, first: u64, last: u64) -> u64 {
        match *self {
            TimeExpr::At(t) => t,
            TimeExpr::FromEnd(d) => last.saturating_sub(d),
            TimeExpr::FromStart(d) => first.saturating_add(d),
            TimeExpr::Clock { secs, nanos, utc } => {
                let last_s = (last / NS) as i64;
                let day0 = if utc {
                    last_s.div_euclid(86_400)
                } else {
                    local_days(last_s).unwrap_or(last_s.div_euclid(86_400))
                };
                // that clock time on the last day, else the day before, ...
                for back in 0..3 {
                    let day = day0 - back;
                    let s = if utc {
                        Some(day * 86_400 + secs as i64)
                    } else {
                        local_to_epoch(day, secs)
                    };
                    if let Some(s) = s.and_then(|s| u64::try_from(s).ok()) {
                        let ns = s.saturating_mul(NS).saturating_add(nanos as u64);
                        if ns <= last {
                            return ns;
                        }
                    }
                }
                first
            }
        }
    }
}

/// "90s", "5m", "1h30m", "1.5h", "250ms", "2d", or plain seconds, to ns.
pub fn parse_duration(s: &str) -> Result<u64, String> {
    let bad = || format!("bad duration {s:?}: expected e.g. 90s, 5m, 1h30m, 2d or seconds");
    let t = s.trim();
    if t.is_empty() {
        return Err(bad());
    }
    if let Ok(v) = t.parse::<f64>() {
        return secs_to_ns(v).ok_or_else(bad);
    }
    let mut total: u64 = 0;
    let mut rest = t;
    while !rest.is_empty() {
        let n_end = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .ok_or_else(bad)?;
        if n_end == 0 {
            return Err(bad());
        }
        let v: f64 = rest[..n_end].parse().map_err(|_| bad())?;
        let u_end = rest[n_end..]
            .find(|c: char| c.is_ascii_digit())
            .map_or(rest.len(), |i| n_end + i);
        let unit_s = match &rest[n_end..u_end] {
            "ms" => 1e-3,
            "s" | "sec" => 1.0,
            "m" | "min" => 60.0,
            "h" => 3600.0,
            "d" => 86_400.0,
            _ => return Err(bad()),
        };
        total = total
            .checked_add(secs_to_ns(v * unit_s).ok_or_else(bad)?)
            .ok_or_else(bad)?;
        rest = &rest[u_end..];
    }
    Ok(total)
}

fn secs_to_ns(v: f64) -> Option<u64> {
    (v.is_finite() && (0.0..1e10).contains(&v)).then(|| (v * 1e9).round() as u64)
}

/// "100M", "1.5G", "512k", "10MB", "2GiB" or bytes. Powers of 1024.
pub fn parse_size(s: &str) -> Result<u64, String> {
    let bad = || format!("bad size {s:?}: expected e.g. 500M, 2G or a number of bytes");
    let t = s.trim();
    let i = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let v: f64 = t[..i].parse().map_err(|_| bad())?;
    let mult = match t[i..].to_ascii_lowercase().as_str() {
        "" | "b" => 1u64,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        "t" | "tb" | "tib" => 1 << 40,
        _ => return Err(bad()),
    };
    let bytes = v * mult as f64;
    if !(1.0..=1e18).contains(&bytes) {
        return Err(bad());
    }
    Ok(bytes as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    const T0: u64 = 1_795_302_900_000_000_000; // 2026-11-21T23:15:00Z

    #[test]
    fn absolute_utc_and_offsets() {
        assert_eq!(parse_time("2026-11-21T23:15:00Z"), Ok(TimeExpr::At(T0)));
        assert_eq!(
            parse_time("2026-11-22T00:15:00+01:00"),
            Ok(TimeExpr::At(T0))
        );
        assert_eq!(
            parse_time("2026-11-21 22:15:00.5-01:00"),
            Ok(TimeExpr::At(T0 + 500_000_000))
        );
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(days_from_civil(2000, 3, 1), 11_017);
        for d in [-800_000i64, -1, 0, 59, 20_000, 2_000_000] {
            let (y, m, dd) = crate::util::clock::civil_from_days(d);
            assert_eq!(days_from_civil(y, m, dd), d);
        }
    }

    #[test]
    fn relative_and_clock_times_resolve_against_the_recording() {
        let first = T0 - 3600 * NS; // 22:15Z
        let last = T0 + 1800 * NS; // 23:45Z
        let r = |s: &str| parse_time(s).unwrap().resolve(first, last);
        assert_eq!(r("-5m"), last - 300 * NS);
        assert_eq!(r("+90s"), first + 90 * NS);
        assert_eq!(r("+1h30m"), first + 5400 * NS);
        assert_eq!(r("23:15:00Z"), T0);
        assert_eq!(r("23:15Z"), T0);
        // 23:50 has not happened yet on the last day: the day before
        assert_eq!(r("23:50:00Z"), T0 + 35 * 60 * NS - 86_400 * NS);
        // local clock time is the same instant as local date + time
        let local = parse_time("23:15:00")
            .unwrap()
            .resolve(first, T0 + 86_400 * NS);
        assert!(local <= T0 + 86_400 * NS && local + 86_400 * NS > T0 + 86_400 * NS);
    }

    #[test]
    fn bad_expressions_are_one_line_errors() {
        for bad in [
            "",
            "yesterday",
            "25:00",
            "23:61",
            "-5x",
            "+",
            "2026-13-01T00:00Z",
            "12:00:00:00",
            "2026-11-21T23:15:00+1",
        ] {
            let e = parse_time(bad).unwrap_err();
            assert!(e.starts_with("bad time"), "{bad}: {e}");
            assert!(!e.contains('\n'));
        }
    }

    #[test]
    fn durations_and_sizes() {
        assert_eq!(parse_duration("90s"), Ok(90 * NS));
        assert_eq!(parse_duration("1h30m"), Ok(5400 * NS));
        assert_eq!(parse_duration("1.5h"), Ok(5400 * NS));
        assert_eq!(parse_duration("250ms"), Ok(250_000_000));
        assert_eq!(parse_duration("2"), Ok(2 * NS));
        assert_eq!(parse_duration("2d"), Ok(172_800 * NS));
        for bad in ["", "m", "5 x", "-3", "1e400", "5mm"] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
        assert_eq!(parse_size("100M"), Ok(100 << 20));
        assert_eq!(parse_size("1.5k"), Ok(1536));
        assert_eq!(parse_size("2GiB"), Ok(2 << 30));
        assert_eq!(parse_size("4096"), Ok(4096));
        for bad in ["", "M", "0", "12Q", "-1M"] {
            assert!(parse_size(bad).is_err(), "{bad}");
        }
    }
}
