//! Who wakes the threads of a `blocking` finding, and — one hop further —
//! what that waker itself waits for and who wakes it: "blocks on futex;
//! woken 92% by db-writer (pid 1234), which blocks on disk I/O, woken by
//! hardirq". The figures are the probes' waker pairs (SCHEDTOP_WAKERS=1);
//! without them nothing is added (an unknown is never shown as nobody).
use std::collections::BTreeMap;

use super::finding_capacity::pct;
use super::finding_types::{Evidence, IntervalFacts, Value};
use super::why::{PseudoWaker, PSEUDO_WAKERS};

/// The threads of one waking process: tid -> (comm, wakeups).
type WakingThreads = BTreeMap<u32, (String, u64)>;

/// Who woke a set of threads, summed.
#[derive(Default)]
struct Wakers {
    /// waking pid -> (wakeups, its threads)
    procs: BTreeMap<u32, (u64, WakingThreads)>,
    irq: [u64; PSEUDO_WAKERS],
    /// every wakeup the lists account for (threads, the rest, pseudo)
    total: u64,
}

/// The top waker of the threads of `pid` that blocked on reason `reason`
/// (index into `BlockReason::ALL`), added to `ev`; the words for the
/// finding's text (starting with "; "), or None where no wakeups were
/// counted.
pub(crate) fn blocked_wakers(
    f: &IntervalFacts,
    pid: u32,
    reason: usize,
    ev: &mut Evidence,
) -> Option<String> {
    let mut w = Wakers::default();
    for r in f.threads().filter(|r| r.pid == pid) {
        let Some(why) = r.why.as_ref() else { continue };
        if why.blocked_on.get(reason).copied().unwrap_or(0) == 0 {
            continue;
        }
        w.total = w.total.saturating_add(why.wakeups_listed());
        for p in &why.woken_by {
            let e = w.procs.entry(p.pid).or_default();
            e.0 = e.0.saturating_add(p.count);
            let t = e.1.entry(p.tid).or_insert_with(|| (p.comm.clone(), 0));
            t.1 = t.1.saturating_add(p.count);
        }
        for (a, b) in w.irq.iter_mut().zip(&why.woken_by_irq) {
            *a = a.saturating_add(*b);
        }
    }
    if w.total == 0 {
        return None;
    }
    let top_proc = w
        .procs
        .iter()
        .map(|(&p, (n, _))| (p, *n))
        .max_by_key(|&(p, n)| (n, std::cmp::Reverse(p)));
    let top_irq = (0..PSEUDO_WAKERS)
        .map(|i| (PseudoWaker::ALL[i], w.irq[i]))
        .max_by_key(|&(k, n)| (n, std::cmp::Reverse(k as usize)))
        .filter(|&(_, n)| n > 0);
    let share = |n: u64| n as f64 / w.total as f64;
    ev.push("wakeups", Value::Int(w.total));
    match (top_proc, top_irq) {
        (Some((wpid, n)), irq) if irq.is_none_or(|(_, m)| n >= m) => {
            // the thread of that process that woke them most
            let threads = &w.procs[&wpid].1;
            let (tid, (comm, _)) = threads
                .iter()
                .max_by_key(|(t, (_, c))| (*c, std::cmp::Reverse(**t)))
                .map(|(t, x)| (*t, x.clone()))
                .unwrap_or_default();
            let pname = f
                .process_name(wpid)
                .map_or_else(|| comm.clone(), str::to_string);
            let own = wpid == pid;
            let who = if own {
                format!("its own threads (mostly {comm}, tid {tid})")
            } else if tid == wpid && comm == pname {
                format!("{pname} (pid {wpid})")
            } else {
                format!("{pname} (pid {wpid}; thread {comm}, tid {tid})")
            };
            ev.push("woken_by", Value::Text(who.clone()));
            ev.push("woken_by_pid", Value::Int(u64::from(wpid)));
            ev.push("woken_by_share_pct", Value::round(share(n) * 100.0, 1));
            let chain = if own {
                String::new()
            } else {
                chain(f, tid, ev)
            };
            Some(format!("; woken {} by {who}{chain}", pct(share(n))))
        }
        (_, Some((k, n))) => {
            ev.push("woken_by", Value::Text(k.key().into()));
            ev.push("woken_by_pid", Value::None);
            ev.push("woken_by_share_pct", Value::round(share(n) * 100.0, 1));
            Some(format!(
                "; woken {} by {} (interrupt context or the idle task, no thread)",
                pct(share(n)),
                k.key()
            ))
        }
        // wakeups counted, but by threads the lists did not keep
        _ => None,
    }
}

/// The second hop: what the waker `tid` did in the same interval — its own
/// top block reason and who woke it — where its row is in view.
fn chain(f: &IntervalFacts, tid: u32, ev: &mut Evidence) -> String {
    let Some(why) = f
        .derived
        .threads
        .iter()
        .find(|r| r.id == tid)
        .and_then(|r| r.why.as_ref())
    else {
        return String::new();
    };
    let mut words = String::new();
    if let Some((reason, share)) = why.top_block() {
        ev.push("waker_blocks_on", Value::Text(reason.key().into()));
        ev.push("waker_blocks_on_pct", Value::round(share * 100.0, 1));
        words.push_str(&format!(
            ", which itself blocks {} on {}",
            pct(share),
            reason.key()
        ));
    }
    if let Some((name, share)) = why.top_waker() {
        ev.push("waker_woken_by", Value::Text(name.clone()));
        ev.push("waker_woken_by_pct", Value::round(share * 100.0, 1));
        let lead = if words.is_empty() {
            ", which is"
        } else {
            " and is"
        };
        words.push_str(&format!("{lead} woken {} by {name}", pct(share)));
    }
    words
}
