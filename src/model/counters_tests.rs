use super::*;

/// `#define NAME VALUE` lines of the header the probes are built from.
fn header_defines() -> Vec<(String, usize)> {
    include_str!("../../bpf/schedtop.h")
        .lines()
        .filter_map(|l| {
            let mut w = l.split_whitespace();
            (w.next()? == "#define").then_some(())?;
            let name = w.next()?.to_string();
            let v = w.next()?.parse().ok()?;
            Some((name, v))
        })
        .collect()
}

fn define(name: &str) -> usize {
    header_defines()
        .into_iter()
        .find(|(n, _)| n == name)
        .unwrap_or_else(|| panic!("bpf/schedtop.h has no #define {name}"))
        .1
}

#[test]
fn slots_match_the_header() {
    assert_eq!(THREAD_COUNTERS, define("THREAD_COUNTERS"));
    assert_eq!(CTR_STOLEN_HARDIRQ_NS, define("CTR_STOLEN_HARDIRQ_NS"));
    assert_eq!(CTR_STOLEN_SOFTIRQ_NS, define("CTR_STOLEN_SOFTIRQ_NS"));
    assert_eq!(SOFTIRQ_VECTORS, define("SOFTIRQ_VECTORS"));
    assert_eq!(
        CTR_CROSS_NODE_MIGRATIONS,
        define("CTR_CROSS_NODE_MIGRATIONS")
    );
    // every CTR_ slot the header defines is one this file names
    let ctr: Vec<(String, usize)> = header_defines()
        .into_iter()
        .filter(|(n, _)| n.starts_with("CTR_"))
        .collect();
    assert_eq!(ctr.len(), 3, "{ctr:?}: name the new slot in counters.rs");
    // the stolen family: hardirq, then one slot per softirq vector
    let stolen = by_key("stolen_ns").unwrap();
    assert_eq!(
        stolen.slots(),
        CTR_STOLEN_HARDIRQ_NS..CTR_STOLEN_SOFTIRQ_NS + SOFTIRQ_VECTORS
    );
    // (the generated skeleton's array is this size too: the drain passes
    // it as `&[u64; THREAD_COUNTERS]`, collect/bpf_thread_sample.rs)
}

#[test]
fn descriptors_fit_and_do_not_overlap() {
    let mut owner = [None::<&str>; THREAD_COUNTERS];
    let mut keys = Vec::new();
    for d in COUNTERS {
        assert!(
            d.slots().end <= THREAD_COUNTERS,
            "{}: past the array",
            d.key
        );
        assert!(!d.slots().is_empty(), "{}", d.key);
        for s in d.slots() {
            assert!(
                owner[s].is_none(),
                "slot {s}: {} and {}",
                owner[s].unwrap(),
                d.key
            );
            owner[s] = Some(d.key);
        }
        keys.push(d.key);
        keys.extend(d.family.map(|f| f.by_label_key));
        if let Some(f) = d.family {
            assert!(f.values.len() >= 2, "{}: a family of one", d.key);
        }
        if d.column
            .is_some_and(|c| c.display == Display::ShareOfInterval)
        {
            assert_eq!(d.unit, CounterUnit::Ns, "{}: a share of time", d.key);
        }
        assert_eq!(
            d.key.ends_with("_ns"),
            d.unit == CounterUnit::Ns,
            "{}",
            d.key
        );
    }
    let n = keys.len();
    keys.sort_unstable();
    keys.dedup();
    assert_eq!(keys.len(), n, "duplicate key");
}

#[test]
fn deltas_anomalies_and_sums() {
    let mut a = [0; THREAD_COUNTERS];
    a[0] = 10;
    a[11] = 3;
    let before = Counters::from_slots(&a);
    let mut b = a;
    b[0] = 25; // +15
    b[11] = 2; // went down: an anomaly, adds nothing
    b[5] = 7; // new
    let now = Counters::from_slots(&b);
    let mut anomalies = 0;
    let d = now.since(Some(&before), &mut anomalies);
    assert_eq!(anomalies, 1);
    assert_eq!(
        (d.get(0), d.get(11), d.get(5), d.get(1)),
        (Some(15), Some(0), Some(7), Some(0))
    );
    // no earlier value: the whole count; unknown stays unknown
    assert_eq!(now.since(None, &mut anomalies), now);
    assert_eq!(
        Counters::UNKNOWN.since(Some(&before), &mut anomalies),
        Counters::UNKNOWN
    );
    // unchanged: the shared zero, not an array of its own
    let z = now.since(Some(&now), &mut anomalies);
    assert!(z.is_known() && !z.any());
    // sums: unknown + known is known; the shared zero is never written
    let mut sum = Counters::UNKNOWN;
    sum.add(&Counters::UNKNOWN);
    assert!(!sum.is_known());
    sum.add(&Counters::zero());
    sum.add(&d);
    sum.add(&d);
    assert_eq!((sum.get(0), sum.get(5)), (Some(30), Some(14)));
    assert!(!Counters::zero().any());
    let stolen = by_key("stolen_ns").unwrap();
    assert_eq!(stolen.total(&sum), Some(30 + 14));
    let by = stolen.by_label(&sum).unwrap();
    assert_eq!(by[0], ("hardirq", 30));
    assert_eq!(by[5], ("block", 14));
    assert_eq!(stolen.total(&Counters::UNKNOWN), None);
}

#[test]
fn an_idle_thread_costs_eight_bytes() {
    assert_eq!(std::mem::size_of::<Counters>(), 8);
    let mut c = Counters::zero();
    c.set(THREAD_COUNTERS + 3, 9); // a newer writer's slot: ignored
    assert!(!c.any());
    c.set(2, 9);
    assert_eq!(c.get(2), Some(9));
    assert!(!Counters::zero().any(), "set wrote through the shared zero");
}

/// Stolen time with the interrupt-time probes off: unknown through every
/// reader (descriptor, slot, interval, sums, JSON), while the counters the
/// probes did measure stay numbers.
#[test]
fn an_unmeasured_counter_reads_unknown_never_zero() {
    let off = mask_of(STOLEN.slots());
    assert_eq!(off, 0b111_1111_1111, "hardirq + ten softirq vectors");
    let mut slots = [0; THREAD_COUNTERS];
    slots[CTR_CROSS_NODE_MIGRATIONS] = 3;
    slots[CTR_STOLEN_SOFTIRQ_NS] = 99; // a stray value is not believed
    let before = Counters::with_unmeasured(&slots, off);
    assert_eq!(STOLEN.total(&before), None);
    assert_eq!(STOLEN.by_label(&before), None);
    assert!(!STOLEN.measured(&before) && CROSS_NODE.measured(&before));
    assert_eq!(before.get(CTR_STOLEN_HARDIRQ_NS), None);
    assert_eq!(CROSS_NODE.total(&before), Some(3));
    // idle threads share one zero array per mask
    let (a, b) = (
        Counters::with_unmeasured(&[0; THREAD_COUNTERS], off),
        Counters::with_unmeasured(&[0; THREAD_COUNTERS], off),
    );
    assert!(std::ptr::eq(a.known().unwrap(), b.known().unwrap()));
    assert_eq!(STOLEN.total(&a), None);

    // the interval: unmeasured at either end is unmeasured
    slots[CTR_CROSS_NODE_MIGRATIONS] = 5;
    let now = Counters::with_unmeasured(&slots, off);
    let mut anomalies = 0;
    let d = now.since(Some(&before), &mut anomalies);
    assert_eq!((STOLEN.total(&d), CROSS_NODE.total(&d)), (None, Some(2)));
    let measured_now = Counters::of(&[(CTR_STOLEN_HARDIRQ_NS, 7), (CTR_CROSS_NODE_MIGRATIONS, 5)]);
    let d2 = measured_now.since(Some(&before), &mut anomalies);
    assert_eq!(STOLEN.total(&d2), None, "a count from an unmeasured start");
    assert_eq!(anomalies, 0);
    let same = now.since(Some(&now), &mut anomalies);
    assert_eq!(STOLEN.total(&same), None);

    // a process of such threads: unknown, not the sum of zeros
    let mut sum = Counters::UNKNOWN;
    sum.add(&d);
    sum.add(&Counters::of(&[(CTR_STOLEN_HARDIRQ_NS, 10)]));
    assert_eq!(
        (STOLEN.total(&sum), CROSS_NODE.total(&sum)),
        (None, Some(2))
    );
    let mut measured = Counters::zero();
    measured.add(&Counters::of(&[(CTR_STOLEN_HARDIRQ_NS, 10)]));
    assert_eq!(STOLEN.total(&measured), Some(10));

    // JSON: null slots, and back
    let json = serde_json::to_string(&now).unwrap();
    assert!(json.starts_with("[null,null,"), "{json}");
    let back: Counters = serde_json::from_str(&json).unwrap();
    assert_eq!(back, now);
    let old: Counters = serde_json::from_str("[1,2,0,0,0,0,0,0,0,0,0,4]").unwrap();
    assert_eq!(
        (STOLEN.total(&old), CROSS_NODE.total(&old)),
        (Some(3), Some(4))
    );
}
