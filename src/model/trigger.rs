//! Trigger expressions (`--trigger`): a condition on a figure schedtop
//! already measures, such as `proc:wait_p99>20ms`, `cpu:rq_len>8 for 3s`
//! or `cgroup:throttled_ms_per_s>100`. This is the parser only; a malformed
//! expression gets a one-line error that names the bad part.
//!
//! ```text
//! EXPR   = SCOPE ":" METRIC OP VALUE [ " for " DURATION ]
//!        | "finding:" KIND [ " for " DURATION ]
//! SCOPE  = thread | proc | cgroup | cpu | system
//! METRIC = a descriptor's key (trigger_figures.rs: metrics.rs, counters.rs)
//! KIND   = cpu_quota | cpu_saturation | ... (model/finding_types.rs)
//! OP     = ">" | ">=" | "<" | "<="
//! ```
use std::fmt;

use super::finding_types::FindingKind;
use super::trigger_figures::{self, Unit};
pub use super::trigger_figures::{Figure, Scope};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    Gt,
    Ge,
    Lt,
    Le,
}

impl Op {
    pub fn holds(self, value: f64, threshold: f64) -> bool {
        match self {
            Op::Gt => value > threshold,
            Op::Ge => value >= threshold,
            Op::Lt => value < threshold,
            Op::Le => value <= threshold,
        }
    }
}

/// One parsed `--trigger`.
#[derive(Clone, Debug, PartialEq)]
pub struct Trigger {
    /// the expression as written (for summaries)
    pub text: String,
    pub scope: Scope,
    pub figure: Figure,
    pub op: Op,
    /// in the figure's unit: ns for durations, else as written
    pub threshold: f64,
    /// how long the condition must hold before firing (0: at once)
    pub for_ns: u64,
}

/// A malformed expression: the whole of it, the bad part, and what was
/// expected, on one line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TriggerError {
    pub expr: String,
    pub part: String,
    pub expected: String,
}

impl fmt::Display for TriggerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "trigger {:?}: bad {:?}: {}",
            self.expr, self.part, self.expected
        )
    }
}

impl std::error::Error for TriggerError {}

/// Longest expression accepted (it is typed by a person).
const MAX_LEN: usize = 200;

fn scope_of(s: &str) -> Option<Scope> {
    Some(match s {
        "thread" => Scope::Thread,
        "proc" | "process" => Scope::Proc,
        "cgroup" => Scope::Cgroup,
        "cpu" => Scope::Cpu,
        "system" => Scope::System,
        _ => return None,
    })
}

/// `20ms`, `5us`, `1.5s`, `250ns`, `2m` to ns.
pub fn parse_time_ns(s: &str) -> Option<u64> {
    let end = s.find(|c: char| !(c.is_ascii_digit() || c == '.'))?;
    let v: f64 = s[..end].parse().ok()?;
    let scale = match &s[end..] {
        "ns" => 1.0,
        "us" | "µs" => 1e3,
        "ms" => 1e6,
        "s" => 1e9,
        "m" => 60e9,
        _ => return None,
    };
    let ns = v * scale;
    (ns.is_finite() && (0.0..=1e15).contains(&ns)).then_some(ns as u64)
}

/// Parse one `--trigger` expression.
pub fn parse(expr: &str) -> Result<Trigger, TriggerError> {
    let err = |part: &str, expected: &str| TriggerError {
        expr: expr.chars().take(MAX_LEN).collect(),
        part: part.chars().take(60).collect(),
        expected: expected.into(),
    };
    if expr.len() > MAX_LEN {
        return Err(err(expr, "an expression of at most 200 bytes"));
    }
    let text = expr.trim();
    let (cond, for_part) = match text.split_once(" for ") {
        Some((c, f)) => (c.trim(), Some(f.trim())),
        None => (text, None),
    };
    let Some((scope_s, rest)) = cond.split_once(':') else {
        return Err(err(
            cond,
            "SCOPE:FIGURE>VALUE, e.g. proc:wait_p99>20ms (scopes: thread, proc, cgroup, cpu, system), or finding:KIND",
        ));
    };
    let scope_s = scope_s.trim();
    if scope_s == "finding" {
        let name = rest.trim();
        let kinds: Vec<&str> = FindingKind::ALL.iter().map(|k| k.key()).collect();
        let kind = FindingKind::ALL
            .into_iter()
            .find(|k| k.key() == name)
            .ok_or_else(|| err(name, &format!("a finding kind: {}", kinds.join(", "))))?;
        let for_ns = match for_part {
            None => 0,
            Some(f) => {
                parse_time_ns(f).ok_or_else(|| err(f, "a time after \"for\", such as 3s"))?
            }
        };
        return Ok(Trigger {
            text: text.to_string(),
            scope: Scope::Finding,
            figure: Figure::Finding(kind),
            op: Op::Gt,
            threshold: 0.0,
            for_ns,
        });
    }
    let scope = scope_of(scope_s).ok_or_else(|| {
        err(
            scope_s,
            "a scope: thread, proc, cgroup, cpu, system or finding",
        )
    })?;
    let Some(op_at) = rest.find(['>', '<']) else {
        return Err(err(rest, "a comparison: > >= < <= and a value"));
    };
    let name = rest[..op_at].trim();
    let after = &rest[op_at..];
    let (op, value_s) = if let Some(v) = after.strip_prefix(">=") {
        (Op::Ge, v)
    } else if let Some(v) = after.strip_prefix("<=") {
        (Op::Le, v)
    } else if let Some(v) = after.strip_prefix('>') {
        (Op::Gt, v)
    } else {
        (Op::Lt, &after[1..])
    };
    let value_s = value_s.trim();
    let Some((figure, unit)) = trigger_figures::resolve(scope, name) else {
        return Err(err(
            name,
            &format!(
                "a figure of {scope_s}: {}",
                trigger_figures::names(scope).join(", ")
            ),
        ));
    };
    let threshold = match unit {
        Unit::Duration => parse_time_ns(value_s)
            .map(|v| v as f64)
            .ok_or_else(|| err(value_s, "a time such as 20ms, 500us or 1.5s"))?,
        Unit::Number => value_s
            .parse::<f64>()
            .ok()
            .filter(|v| v.is_finite() && *v >= 0.0)
            .ok_or_else(|| err(value_s, "a number such as 8 or 100"))?,
    };
    let for_ns = match for_part {
        None => 0,
        Some(f) => parse_time_ns(f).ok_or_else(|| err(f, "a time after \"for\", such as 3s"))?,
    };
    Ok(Trigger {
        text: text.to_string(),
        scope,
        figure,
        op,
        threshold,
        for_ns,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_issue_examples_parse() {
        let t = parse("proc:wait_p99>20ms").unwrap();
        assert_eq!(
            (t.scope, t.figure, t.op, t.threshold, t.for_ns),
            (
                Scope::Proc,
                Figure::metric("p99_wait").unwrap(),
                Op::Gt,
                20e6,
                0
            )
        );
        let t = parse("cpu:rq_len>8 for 3s").unwrap();
        assert_eq!(
            (t.scope, t.figure, t.threshold, t.for_ns),
            (
                Scope::Cpu,
                Figure::Cpu(crate::model::cpu_metrics::by_key("rq_len_avg").unwrap()),
                8.0,
                3_000_000_000
            )
        );
        let t = parse(" cgroup:throttled_ms_per_s >= 100 ").unwrap();
        assert_eq!(
            (t.scope, t.figure, t.op, t.threshold),
            (
                Scope::Cgroup,
                Figure::Cgroup(crate::model::cgroup_metrics::by_key("throttled_ms_per_s").unwrap()),
                Op::Ge,
                100.0
            )
        );
        assert_eq!(parse("thread:wait_p99>500us").unwrap().threshold, 500e3);
    }

    #[test]
    fn errors_name_the_bad_part() {
        let e = |s: &str| parse(s).unwrap_err();
        assert_eq!(e("procs:wait_p99>1ms").part, "procs");
        assert_eq!(e("proc:wiat_p99>1ms").part, "wiat_p99");
        assert!(e("proc:wiat_p99>1ms").expected.contains("wait_p99"));
        // a figure that exists, but not for this scope
        assert_eq!(e("cpu:wait_p99>1ms").part, "wait_p99");
        assert_eq!(e("proc:wait_p99>20").part, "20");
        assert_eq!(e("proc:wait_p99>20xs").part, "20xs");
        assert_eq!(e("cpu:rq_len>eight").part, "eight");
        assert_eq!(e("cpu:rq_len>-1").part, "-1");
        assert_eq!(e("cpu:rq_len>8 for ever").part, "ever");
        assert_eq!(e("cpu:rq_len=8").part, "rq_len=8");
        assert_eq!(e("rq_len>8").part, "rq_len>8");
        let msg = e("proc:wait_p99>20xs").to_string();
        assert!(!msg.contains('\n'));
        assert!(msg.contains("\"20xs\""), "{msg}");
        // hostile input: bounded, no panic
        assert!(parse(&"x".repeat(10_000)).is_err());
        assert!(parse("cpu:rq_len>\u{1b}[2J").is_err());
        assert!(parse("cpu:rq_len>").is_err());
        assert!(parse(":>").is_err());
        assert!(parse("proc:wait_p99>1e400s").is_err());
    }

    #[test]
    fn comparisons() {
        assert!(Op::Gt.holds(2.0, 1.0) && !Op::Gt.holds(1.0, 1.0));
        assert!(Op::Ge.holds(1.0, 1.0) && Op::Le.holds(1.0, 1.0));
        assert!(Op::Lt.holds(0.5, 1.0) && !Op::Lt.holds(1.0, 1.0));
    }
}
