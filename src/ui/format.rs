//! Text for the screen: hostile names made inert, durations in adaptive
//! units, rates that fit a narrow column.
use crate::util::invisible_chars::is_invisible;

/// A name as the terminal may show it: control characters and invisible
/// formatting characters (bidi overrides, zero-width) are spelled out, so a
/// thread that names itself "\x1b[2J" shows as `^[[2J` and clears nothing.
/// C0 controls and DEL use caret notation (`^[`, `^?`, like `cat -v`);
/// C1 controls and the invisible ones use `\u{..}`.
pub fn escape_name(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        let n = c as u32;
        if n < 0x20 {
            out.push('^');
            out.push(char::from_u32(n + 0x40).unwrap_or('?'));
        } else if n == 0x7f {
            out.push_str("^?");
        } else if (0x80..0xa0).contains(&n) || is_invisible(n) {
            out.push_str(&format!("\\u{{{n:x}}}"));
        } else {
            out.push(c);
        }
    }
    out
}

/// A duration in adaptive units with three significant digits: `850ns`,
/// `12.3us`, `4.10ms`, `2.50s`.
pub fn duration_ns(ns: f64) -> String {
    if !ns.is_finite() || ns < 0.0 {
        return "-".into();
    }
    let (v, unit) = if ns < 1e3 {
        return format!("{}ns", ns.round() as u64);
    } else if ns < 1e6 {
        (ns / 1e3, "us")
    } else if ns < 1e9 {
        (ns / 1e6, "ms")
    } else {
        (ns / 1e9, "s")
    };
    format!("{}{unit}", sig3(v))
}

/// A duration given in whole microseconds (histogram bounds, quantiles).
pub fn duration_us(us: u64) -> String {
    duration_ns(us as f64 * 1e3)
}

/// Three significant digits without trailing noise: 1.23, 12.3, 123, 1234.
fn sig3(v: f64) -> String {
    if v >= 99.95 {
        format!("{v:.0}")
    } else if v >= 9.995 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// An events-per-second rate for a 7-character column: `0`, `3.5`, `123`,
/// `12345`, `123.4k`, `12.3M`.
pub fn rate(v: f64) -> String {
    if !v.is_finite() || v < 0.0 {
        return "-".into();
    }
    if v == 0.0 {
        "0".into()
    } else if v < 10.0 {
        format!("{v:.1}")
    } else if v < 100_000.0 {
        format!("{v:.0}")
    } else if v < 10_000_000.0 {
        format!("{:.1}k", v / 1e3)
    } else if v < 10_000_000_000.0 {
        format!("{:.1}M", v / 1e6)
    } else {
        format!("{v:.1e}")
    }
}

/// A percentage with one decimal.
pub fn percent(v: f64) -> String {
    if !v.is_finite() || v < 0.0 {
        return "-".into();
    }
    if v >= 999.95 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

/// An interval in seconds as the user typed it: `1s`, `0.5s`, `2.5s`.
pub fn interval(ns: u64) -> String {
    let s = ns as f64 / 1e9;
    if (s - s.round()).abs() < 1e-9 {
        format!("{}s", s.round() as u64)
    } else {
        let t = format!("{s:.3}");
        format!("{}s", t.trim_end_matches('0').trim_end_matches('.'))
    }
}

/// Clock time (UTC) of a wall-clock timestamp in ns since the epoch.
pub fn clock_utc(ns: u64) -> String {
    let secs = ns / 1_000_000_000;
    let day = secs % 86_400;
    format!("{:02}:{:02}:{:02}", day / 3600, (day / 60) % 60, day % 60)
}

/// Cut `s` to at most `width` characters, marking the cut with `…`.
pub fn truncate(s: &str, width: usize) -> String {
    if s.chars().count() <= width {
        return s.to_string();
    }
    if width == 0 {
        return String::new();
    }
    let mut t: String = s.chars().take(width - 1).collect();
    t.push('…');
    t
}

/// `ns` since the epoch as `2026-11-21 23:15:00` (UTC).
pub fn datetime_utc(ns: u64) -> String {
    let secs = ns / 1_000_000_000;
    let (y, m, d) = crate::util::clock::civil_from_days((secs / 86_400) as i64);
    format!("{y:04}-{m:02}-{d:02} {}", clock_utc(ns))
}

/// `1.5K`, `12.3M`, `512B` (powers of 1024).
pub fn bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["B", "K", "M", "G", "T"];
    let mut v = n as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{n}B")
    } else if v < 10.0 {
        format!("{v:.1}{}", UNITS[u])
    } else {
        format!("{v:.0}{}", UNITS[u])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hostile_names_are_inert() {
        assert_eq!(escape_name("a\x1b[2Jb"), "a^[[2Jb");
        assert_eq!(escape_name("bell\x07\x7f"), "bell^G^?");
        assert_eq!(escape_name("c1\u{9b}31m"), "c1\\u{9b}31m");
        assert_eq!(escape_name("rtl\u{202e}cba"), "rtl\\u{202e}cba");
        assert_eq!(escape_name("kworker/0:1-ëvents"), "kworker/0:1-ëvents");
        assert!(escape_name("\x00\x1f").chars().all(|c| !c.is_control()));
    }

    #[test]
    fn durations_pick_units() {
        assert_eq!(duration_ns(850.0), "850ns");
        assert_eq!(duration_ns(12_345.0), "12.3us");
        assert_eq!(duration_ns(4_100_000.0), "4.10ms");
        assert_eq!(duration_ns(123_456_789.0), "123ms");
        assert_eq!(duration_ns(2.5e9), "2.50s");
        assert_eq!(duration_us(1024), "1.02ms");
        assert_eq!(duration_ns(f64::NAN), "-");
    }

    #[test]
    fn rates_fit_columns() {
        assert_eq!(rate(0.0), "0");
        assert_eq!(rate(3.54), "3.5");
        assert_eq!(rate(12_345.4), "12345");
        assert_eq!(rate(123_456.0), "123.5k");
        assert_eq!(rate(12_300_000.0), "12.3M");
        assert!(rate(1e300).len() <= 9);
        assert_eq!(percent(202.54), "202.5");
        assert_eq!(percent(1600.0), "1600");
        assert_eq!(interval(1_000_000_000), "1s");
        assert_eq!(interval(250_000_000), "0.25s");
        assert_eq!(clock_utc(1_795_302_928_500_000_000), "23:15:28");
        assert_eq!(truncate("abcdef", 4), "abc…");
        assert_eq!(truncate("abc", 0), "abc".get(..0).unwrap());
    }
}
