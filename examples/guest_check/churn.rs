//! The cross_node_churn finding on a 4-node guest: more unpinned spinners
//! than the guest has CPUs keep the load balancer moving them between
//! nodes. The verdict (the same rules `schedtop why` runs) must name the
//! churn with its node-to-node flows, and those flows must agree with an
//! independent count: Debian's perf recording every `sched_migrate_task`
//! (orig_cpu, dest_cpu) of the same window, mapped to nodes.
use std::collections::BTreeMap;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use schedtop::collect::LiveSource;
use schedtop::model::counters::CTR_CROSS_NODE_MIGRATIONS;
use schedtop::model::findings::{of_samples, FindingKind, Scope, Value};
use schedtop::model::flows::node_flows;
use schedtop::model::rates::migration_deltas;
use schedtop::model::why::{cause_moves, MigCause};
use schedtop::model::{Sample, Topology};

use crate::checks::Outcome;

const PERF: &str = "/usr/bin/perf";
const DATA: &str = "/tmp/churn.data";
const NAME: &str = "churn-spin";
/// after every spinner runs (perf and the workload start slowly under TCG)
const WARMUP: Duration = Duration::from_millis(1000);
const WINDOW: Duration = Duration::from_secs(4);

/// One migration perf saw: the task, when (CLOCK_MONOTONIC ns), from, to.
struct Move {
    tid: u32,
    comm: String,
    at_ns: u64,
    from: u32,
    to: u32,
}

/// `churn-workload N`: N spinners named churn-spin, unpinned, that spin
/// until standard input ends, then exit.
pub fn workload_main(args: &[String]) {
    let n: usize = args.first().and_then(|s| s.parse().ok()).unwrap_or(10);
    let stop = Arc::new(AtomicBool::new(false));
    let hs: Vec<_> = (0..n)
        .map(|_| {
            let stop = stop.clone();
            std::thread::Builder::new()
                .name(NAME.into())
                .spawn(move || {
                    while !stop.load(Ordering::Relaxed) {
                        std::hint::spin_loop();
                    }
                })
                .expect("spawn a spinner")
        })
        .collect();
    let _ = std::io::copy(&mut std::io::stdin(), &mut std::io::sink());
    stop.store(true, Ordering::Relaxed);
    for h in hs {
        let _ = h.join();
    }
}

/// Threads named `name` in the whole system.
fn count_named(name: &str) -> usize {
    let Ok(procs) = std::fs::read_dir("/proc") else {
        return 0;
    };
    procs
        .filter_map(|p| std::fs::read_dir(p.ok()?.path().join("task")).ok())
        .flatten()
        .filter(|t| {
            t.as_ref().is_ok_and(|t| {
                std::fs::read_to_string(t.path().join("comm")).is_ok_and(|c| c.trim() == name)
            })
        })
        .count()
}

/// `comm=X pid=N prio=P orig_cpu=A dest_cpu=B` after a `--ns` time.
fn parse_moves(text: &str) -> Vec<Move> {
    let mut out = Vec::new();
    for line in text.lines() {
        let field = |key: &str| -> Option<&str> {
            line.split_whitespace().find_map(|w| w.strip_prefix(key))
        };
        let at = line
            .split_whitespace()
            .find(|w| w.ends_with(':') && w.contains('.'))
            .and_then(|w| {
                let (s, ns) = w.trim_end_matches(':').split_once('.')?;
                Some(s.parse::<u64>().ok()? * 1_000_000_000 + ns.parse::<u64>().ok()?)
            });
        let (Some(at_ns), Some(tid), Some(from), Some(to), Some(comm)) = (
            at,
            field("pid=").and_then(|v| v.parse().ok()),
            field("orig_cpu=").and_then(|v| v.parse().ok()),
            field("dest_cpu=").and_then(|v| v.parse().ok()),
            field("comm="),
        ) else {
            continue;
        };
        out.push(Move {
            tid,
            comm: comm.to_string(),
            at_ns,
            from,
            to,
        });
    }
    out
}

/// Cross-node (from, to) node pairs and their counts.
fn cross_pairs(topo: &Topology, moves: &[(u32, u32, u64)]) -> BTreeMap<(u32, u32), u64> {
    node_flows(topo, moves)
        .into_iter()
        .filter(|f| f.from_node != f.to_node && f.count > 0)
        .map(|f| ((f.from_node, f.to_node), f.count))
        .collect()
}

fn show(m: &BTreeMap<(u32, u32), u64>) -> String {
    let v: Vec<String> = m.iter().map(|((a, b), n)| format!("{a}→{b} {n}")).collect();
    v.join(", ")
}

/// "0→1 5, 2→3 4" (the finding's `flows` evidence) back into pairs.
fn parse_flows(text: &str) -> Option<BTreeMap<(u32, u32), u64>> {
    let mut out = BTreeMap::new();
    for part in text.split(", ").filter(|p| !p.is_empty()) {
        let (pair, n) = part.split_once(' ')?;
        let (a, b) = pair.split_once('→')?;
        out.insert((a.parse().ok()?, b.parse().ok()?), n.parse().ok()?);
    }
    Some(out)
}

pub fn cross_node_churn(src: &mut LiveSource) -> Outcome {
    let topo = src.host().topology.clone();
    let nodes = topo.nodes().len();
    let per_node = topo.cpus.len() / nodes.max(1);
    if nodes < 4 {
        return Err(format!("{nodes} nodes: this check wants the 4-node guest"));
    }
    // more spinners than the guest's CPUs: the balancer never settles
    let n = topo.cpus.len() + 2;
    let exe = std::env::current_exe().map_err(|e| format!("own executable: {e}"))?;
    let sample = |src: &mut LiveSource| src.sample().map_err(|e| format!("drain: {e:#}"));
    let s0 = sample(src)?;
    // the workload (perf's child) reads perf's standard input: closing it
    // ends the spinners, then perf
    let mut perf = Command::new(PERF)
        .args(["record", "-a", "-c", "1", "-k", "CLOCK_MONOTONIC"])
        .args(["-o", DATA, "-e", "sched:sched_migrate_task", "--"])
        .arg(&exe)
        .args(["churn-workload", &n.to_string()])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("perf record: {e}"))?;
    let deadline = Instant::now() + Duration::from_secs(120);
    while count_named(NAME) < n && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
    }
    std::thread::sleep(WARMUP);
    let a = sample(src);
    std::thread::sleep(WINDOW);
    let b = sample(src);
    drop(perf.stdin.take());
    let rec = perf.wait_with_output().map_err(|e| format!("perf: {e}"))?;
    let s1 = sample(src)?;
    let (a, b) = (a?, b?);
    if !rec.status.success() {
        return Err(format!(
            "perf record: {}",
            String::from_utf8_lossy(&rec.stderr).trim()
        ));
    }
    let script = Command::new(PERF)
        .args(["script", "--ns", "-F", "time,trace", "-i", DATA])
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("perf script: {e}"))?;
    let _ = std::fs::remove_file(DATA);
    if !script.status.success() {
        let err = String::from_utf8_lossy(&script.stderr);
        return Err(format!("perf script: {}", err.trim()));
    }
    let moves = parse_moves(&String::from_utf8_lossy(&script.stdout));
    verdict(&topo, per_node, n, &s0, &a, &b, &s1, &moves)
}

#[allow(clippy::too_many_arguments)]
fn verdict(
    topo: &Topology,
    per_node: usize,
    n: usize,
    s0: &Sample,
    a: &Sample,
    b: &Sample,
    s1: &Sample,
    moves: &[Move],
) -> Outcome {
    let mut bad = Vec::new();
    // the verdict of the window, as `schedtop why` computes it
    let found = of_samples(topo, a, b, &Scope::default());
    let kinds: Vec<String> = found
        .iter()
        .map(|f| format!("{} {}", f.kind.key(), f.subject.name))
        .collect();
    let churn = found.iter().find(|f| f.kind == FindingKind::CrossNodeChurn);
    let flows = match churn.map(|c| c.evidence.get("flows")) {
        Some(Some(Value::Text(t))) => parse_flows(t).ok_or_else(|| format!("flows {t:?}"))?,
        Some(other) => return Err(format!("flows evidence: {other:?}")),
        None => {
            bad.push("no cross_node_churn finding".to_string());
            // what the rule saw: the probes' balance moves across nodes
            cross_pairs(topo, &cause_moves(Some(a), b, MigCause::LoadBalance))
        }
    };
    let total = flows.values().sum::<u64>();
    if let Some(Some(Value::Int(t))) = churn.map(|c| c.evidence.get("cross_node_balance_moves")) {
        if *t != total {
            bad.push(format!("flows {flows:?} do not sum to {t}"));
        }
    }
    // perf, same window: every move of every task, any cause
    let in_window = |m: &&Move| m.at_ns > a.mono_ns && m.at_ns <= b.mono_ns;
    let perf_pairs: Vec<(u32, u32, u64)> = moves
        .iter()
        .filter(in_window)
        .map(|m| (m.from, m.to, 1))
        .collect();
    let perf_cross = cross_pairs(topo, &perf_pairs);
    // the probes, same window, any cause
    let probe_cross = cross_pairs(topo, &migration_deltas(Some(a), b));
    let perf_all: u64 = perf_cross.values().sum();
    let probe_all: u64 = probe_cross.values().sum();
    // a move during a drain can fall on either side of it; in a guest on a
    // loaded host a drain takes tens of ms (28 vs 31 seen at load 1,000,
    // the spinners' whole lives equal at the same time)
    let slack = |x: u64| 3 + x / 25;
    for (pair, &n_lb) in &flows {
        let p = perf_cross.get(pair).copied().unwrap_or(0);
        if n_lb > p + slack(p) {
            bad.push(format!(
                "balance flow {}→{} {n_lb} > perf's {p}",
                pair.0, pair.1
            ));
        }
    }
    if probe_all.abs_diff(perf_all) > slack(perf_all) {
        bad.push(format!(
            "cross-node moves: probes {probe_all}, perf {perf_all}"
        ));
    }
    // the spinners' whole lives (born after s0, gone before s1): per
    // thread, the probes' migrations and cross-node moves equal perf's
    let mut per_tid: BTreeMap<u32, (u64, u64)> = BTreeMap::new();
    for m in moves.iter().filter(|m| m.comm == NAME) {
        let e = per_tid.entry(m.tid).or_default();
        e.0 += 1;
        if topo.node_of(m.from) != topo.node_of(m.to) {
            e.1 += 1;
        }
    }
    let spinners: Vec<_> = s1
        .threads
        .iter()
        .filter(|t| &*t.comm == NAME && s0.thread(t.tid).is_none())
        .collect();
    let (mut ours, mut theirs, mut off, mut near) = ((0, 0), (0, 0), Vec::new(), Vec::new());
    for t in &spinners {
        let mine = (
            t.migrations.unwrap_or(0),
            t.counters.get(CTR_CROSS_NODE_MIGRATIONS).unwrap_or(0),
        );
        let perf = per_tid.get(&t.tid).copied().unwrap_or((0, 0));
        ours = (ours.0 + mine.0, ours.1 + mine.1);
        theirs = (theirs.0 + perf.0, theirs.1 + perf.1);
        // one move in ~140 is now and then counted by the probes and not by
        // perf (6.12: 138 / 137 with the cross-node ones equal; under a
        // loaded host 15 / 14 with that move a cross-node one, 6 / 5): not
        // yet explained, so it is printed and tolerated — one move a
        // thread, and the cross-node count off only by that same move
        let (dm, dc) = (mine.0 as i64 - perf.0 as i64, mine.1 as i64 - perf.1 as i64);
        if dm.abs() > 1 || (dc != 0 && dc != dm) {
            off.push(format!("{}: {mine:?} perf {perf:?}", t.tid));
        } else if mine != perf {
            near.push(format!("{}: {mine:?} perf {perf:?}", t.tid));
        }
    }
    if spinners.len() != n {
        bad.push(format!(
            "{} of {n} spinners in the last Sample",
            spinners.len()
        ));
    }
    if !off.is_empty() {
        bad.push(format!("per thread (moves, cross-node) off: {off:?}"));
    }
    let busy: Vec<String> = b
        .threads
        .iter()
        .filter(|t| &*t.comm == NAME)
        .filter_map(|t| {
            let t0 = a.thread(t.tid)?;
            let dt = b.mono_ns.saturating_sub(a.mono_ns).max(1) as f64;
            Some(format!(
                "{:.0}",
                (t.oncpu_ns - t0.oncpu_ns) as f64 * 100.0 / dt
            ))
        })
        .collect();
    let line = format!(
        "{n} spinners on {} CPUs ({per_node} a node): verdict {kinds:?}; churn flows {} = {total} balance moves ({}/s), perf (any cause, same window) {}; cross-node moves probes {probe_all} / perf {perf_all}; spinners' lives: moves {} / perf {}, cross-node {} / perf {}; CPU % in the window {}; off by one move: {near:?}; {bad:?}",
        topo.cpus.len(),
        show(&flows),
        churn
            .and_then(|c| c.evidence.get("per_s"))
            .map_or("?".into(), |v| v.to_string()),
        show(&perf_cross),
        ours.0,
        theirs.0,
        ours.1,
        theirs.1,
        busy.join(" "),
    );
    if bad.is_empty() && total > 0 {
        Ok(line)
    } else {
        Err(line)
    }
}
