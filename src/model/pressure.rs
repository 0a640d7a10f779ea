//! CPU pressure stall information (PSI), as the kernel writes it in
//! /proc/pressure/cpu and in a cgroup's cpu.pressure (the one parser):
//! `some avg10=0.12 avg60=0.05 avg300=0.01 total=123456` (total in us).
//! The `full` line exists from Linux 5.13 and reads zero system-wide.

#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PressureLine {
    /// percent of time stalled, averaged over 10 s, 60 s, 300 s
    pub avg10: f64,
    pub avg60: f64,
    pub avg300: f64,
    /// cumulative stalled time, us
    pub total_us: u64,
}

#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CpuPressure {
    pub some: PressureLine,
    pub full: Option<PressureLine>,
}

fn parse_line(rest: &str) -> Option<PressureLine> {
    let mut l = PressureLine::default();
    let mut seen = 0;
    for field in rest.split_whitespace() {
        let (k, v) = field.split_once('=')?;
        let avg = || v.parse::<f64>().ok().filter(|x| x.is_finite());
        match k {
            "avg10" => l.avg10 = avg()?,
            "avg60" => l.avg60 = avg()?,
            "avg300" => l.avg300 = avg()?,
            "total" => l.total_us = v.parse().ok()?,
            _ => continue,
        }
        seen += 1;
    }
    (seen == 4).then_some(l)
}

/// None when the text has no well-formed `some` line.
pub fn parse(text: &str) -> Option<CpuPressure> {
    let mut some = None;
    let mut full = None;
    for line in text.lines() {
        if let Some(r) = line.strip_prefix("some ") {
            some = parse_line(r);
        } else if let Some(r) = line.strip_prefix("full ") {
            full = parse_line(r);
        }
    }
    Some(CpuPressure { some: some?, full })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_text_and_junk() {
        let p = parse(
            "some avg10=74.52 avg60=83.97 avg300=80.50 total=718549427\n\
             full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n",
        )
        .unwrap();
        assert_eq!(p.some.avg10, 74.52);
        assert_eq!(p.some.total_us, 718_549_427);
        assert_eq!(p.full.unwrap().total_us, 0);
        // 5.x kernels before 5.13: no full line
        assert!(parse("some avg10=1 avg60=2 avg300=3 total=4")
            .unwrap()
            .full
            .is_none());
        assert!(parse("").is_none());
        assert!(parse("some avg10=x avg60=2 avg300=3 total=4").is_none());
        assert!(parse("some avg10=NaN avg60=2 avg300=3 total=4").is_none());
        assert!(parse("some total=4").is_none());
    }
}
