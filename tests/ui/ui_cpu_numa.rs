//! The CPU (`c`) and NUMA (`n`) views: snapshots for each fixture topology
//! (1 node/2 CPUs, 2/8, 4/32 and the 16-node 128-CPU server of seed 004)
//! at 80x24 and 200x50, the selected thread's highlighted flows (styles
//! read from the Buffer), the XNODE/s column, and no panic at any size.
use crate::common;

use common::ui_kit::screen;
use std::collections::BTreeMap;
use std::sync::Mutex;

use ratatui::buffer::Buffer;
use ratatui::style::{Color, Modifier};

use schedtop::collect::topology::{read_topology, write_fixture_tree};
use schedtop::model::{SourceKind, Topology};
use schedtop::ui::action::Action;
use schedtop::ui::fixtures;
use schedtop::ui::format::{percent, rate};
use schedtop::ui::render::{buffer_text, render_to_buffer};
use schedtop::ui::{AppState, Mode, View};

const SIZES: [(u16, u16); 2] = [(80, 24), (200, 50)];
/// (nodes, CPUs per node)
const TOPOLOGIES: [(u32, u32); 4] = [(1, 2), (2, 4), (4, 8), (16, 8)];

/// The topology as sysfs describes it, read back by `read_topology` (and
/// the same as the fixture's own). Written once per shape: a 128-CPU tree
/// is some 1500 files.
fn topology(nodes: u32, per_node: u32) -> Topology {
    static CACHE: Mutex<BTreeMap<(u32, u32), Topology>> = Mutex::new(BTreeMap::new());
    let mut cache = CACHE.lock().unwrap_or_else(|e| e.into_inner());
    cache
        .entry((nodes, per_node))
        .or_insert_with(|| {
            let dir = tempfile::tempdir().unwrap();
            write_fixture_tree(dir.path(), nodes, per_node).unwrap();
            let t = read_topology(dir.path()).unwrap();
            assert_eq!(t, fixtures::numa_topology(nodes, per_node));
            t
        })
        .clone()
}

fn app(nodes: u32, per_node: u32, w: u16, h: u16, actions: &[Action]) -> AppState {
    let mut app = fixtures::numa_app(topology(nodes, per_node), w, h);
    for &a in actions {
        schedtop::ui::layout::apply(&mut app, a);
    }
    app
}

/// Run-queue average of `cpu` in the fixture's last interval.
fn rq_last(t: &Topology, cpu: u32) -> f64 {
    let k = fixtures::NUMA_STEPS as u64 - 1;
    let c = fixtures::rq_counts(t, cpu, k);
    c.iter().map(|(len, n)| len * n).sum::<u64>() as f64 / 100.0
}

/// Migrations per second in the fixture: (all, cross-node, within a node).
fn expected_rates(nodes: u32, per_node: u32) -> (f64, f64, f64) {
    let t = fixtures::numa_topology(nodes, per_node);
    let cpus = f64::from(nodes * per_node);
    let local_per_node = if per_node > 1 {
        fixtures::LOCAL_MOVES as f64 * f64::from(per_node)
    } else {
        0.0
    };
    let local = if per_node > 1 {
        fixtures::LOCAL_MOVES as f64 * cpus
    } else {
        0.0
    };
    let cross = 2.0 * fixtures::wanderers(&t).len() as f64;
    (local + cross, cross, local_per_node)
}

#[test]
fn cpu_view_per_topology() {
    for (nodes, per) in TOPOLOGIES {
        let t = fixtures::numa_topology(nodes, per);
        for (w, h) in SIZES {
            let app = app(nodes, per, w, h, &[Action::ShowCpus]);
            assert_eq!(app.view, View::Cpus);
            let s = screen(&app, w, h);
            insta::assert_snapshot!(format!("cpus_{nodes}n_{}c_{w}x{h}", nodes * per), s);
            assert!(s.contains(&format!("CPUs {} on {nodes} node", nodes * per)));
            let lines: Vec<&str> = s.lines().collect();
            // a summary per node, as a grid line or a list title
            for n in 0..nodes {
                let grid = format!("N{n:<w$} ", w = format!("N{}", nodes - 1).len() - 1);
                let title = format!("node {n}  CPUs {}-{}", n * per, n * per + per - 1);
                assert!(
                    lines
                        .iter()
                        .any(|l| l.starts_with(&grid) || l.starts_with(&title)),
                    "node {n} has no summary at {w}x{h}:\n{s}"
                );
            }
            let list = lines.iter().any(|l| l.contains("RQ NOW RQ AVG RQ MAX"));
            let grid = lines.iter().any(|l| l.starts_with("N0 "));
            // the list whole when it fits, else the grid first
            let whole = ((nodes * per + nodes) as usize) < usize::from(h) - 5;
            assert_eq!(grid, !whole, "{nodes}x{per} at {w}x{h}");
            if list {
                // CPU 0: its last interval's queue, busy 100%, 200 switches/s,
                // LOCAL_MOVES in and out (plus a wanderer passing through)
                let l0 = lines
                    .iter()
                    .find(|l| l.starts_with("    0    0 "))
                    .expect("CPU 0 line");
                let want = format!("{:.2}", rq_last(&t, 0));
                let cols: Vec<&str> = l0.split_whitespace().collect();
                assert_eq!(cols[2], want, "{l0}");
                assert_eq!(&cols[5..8], ["100.0", "200", "3.0"], "{l0}");
            }
            if grid {
                // one glyph per CPU on each node's grid line
                let g = lines.iter().find(|l| l.starts_with("N0 ")).unwrap();
                let glyphs = g.chars().filter(|c| "·▁▃▅▇█".contains(*c)).count();
                assert_eq!(glyphs, per as usize, "{g}");
            }
        }
    }
}

#[test]
fn cpu_summaries_match_the_fixture() {
    // 16 nodes: node 0's queue now is the mean of its CPUs' last intervals;
    // node 0 is home to one wanderer and away for another: 2 in, 2 out
    let t = fixtures::numa_topology(16, 8);
    let app = app(16, 8, 200, 50, &[Action::ShowCpus]);
    let s = screen(&app, 200, 50);
    let n0 = s.lines().find(|l| l.starts_with("N0  ")).unwrap();
    let mean = (0..8).map(|c| rq_last(&t, c)).sum::<f64>() / 8.0;
    assert!(n0.contains(&format!("rq {mean:.2}")), "{n0}");
    assert!(
        n0.contains("max  3"),
        "the last CPU of an even node has 3 queued: {n0}"
    );
    assert!(n0.contains("x-node in  2.0 out  2.0"), "{n0}");
    assert!(n0.contains("local   24"), "{n0}");
    let n4 = s.lines().find(|l| l.starts_with("N4  ")).unwrap();
    assert!(n4.contains("x-node in    0 out    0"), "{n4}");
    // the list scrolls below the grid
    assert!(s.contains("list lines 1-"));
    let mut app = app;
    schedtop::ui::layout::apply(&mut app, Action::End);
    let s = screen(&app, 200, 50);
    assert!(s.contains("  127  120 "), "End shows the last CPU:\n{s}");
}

#[test]
fn numa_view_per_topology() {
    for (nodes, per) in TOPOLOGIES {
        let (all, cross, local) = expected_rates(nodes, per);
        for (w, h) in SIZES {
            let app = app(nodes, per, w, h, &[Action::ShowNuma]);
            let s = screen(&app, w, h);
            insta::assert_snapshot!(format!("numa_{nodes}n_{}c_{w}x{h}", nodes * per), s);
            let pct = if all > 0.0 { cross / all * 100.0 } else { 0.0 };
            let info = format!(
                "migrations/s {}  cross-node {} ({}%)",
                rate(all),
                rate(cross),
                percent(pct)
            );
            assert!(s.contains(&info), "{info} at {w}x{h}:\n{s}");
            // every node's box with its same-node migrations/s
            for n in 0..nodes {
                let label = format!("N{n} {}", schedtop::ui::views::numa::rate3(local));
                assert!(s.contains(&label), "no box {label} at {w}x{h}:\n{s}");
            }
            // an arrow head for every cross-node flow (at most MAX_ARROWS)
            let heads = s.chars().filter(|c| "→↗↑↖←↙↓↘".contains(*c)).count();
            let flows = (cross as usize).min(schedtop::ui::views::numa::MAX_ARROWS);
            assert!(heads >= flows, "{heads} heads for {flows} flows:\n{s}");
        }
    }
}

#[test]
fn numa_matrix_on_m() {
    for (nodes, per) in [(2, 4), (16, 8)] {
        let (w, h) = (80, 24);
        let app = app(nodes, per, w, h, &[Action::ShowNuma, Action::ToggleMatrix]);
        assert!(app.numa_matrix);
        let s = screen(&app, w, h);
        insta::assert_snapshot!(format!("numa_matrix_{nodes}n_{w}x{h}"), s);
        let head = s.lines().find(|l| l.starts_with("from")).unwrap();
        let cols: Vec<&str> = head.split_whitespace().collect();
        let row = |n: u32| -> Vec<&str> {
            let name = format!("N{n}");
            s.lines()
                .find(|l| l.split_whitespace().next() == Some(name.as_str()))
                .unwrap()
                .split_whitespace()
                .collect()
        };
        // the cell under column "N<to>" of row "N<from>"
        let cell = |from: u32, to: u32| {
            let j = cols.iter().position(|c| *c == format!("N{to}")).unwrap();
            row(from)[j].to_string()
        };
        let local = format!("{}", 3 * per);
        for n in 0..nodes {
            assert_eq!(cell(n, n), local, "diagonal: same-node migrations/s");
        }
        assert_eq!(cell(0, 1), "1.0");
        assert_eq!(cell(1, 0), "1.0");
        if nodes == 16 {
            for (a, b) in fixtures::WANDERERS {
                assert_eq!(cell(a, b), "1.0", "{a}->{b}");
                assert_eq!(cell(b, a), "1.0", "{b}->{a}");
            }
            assert_eq!(cell(4, 7), "·");
            assert_eq!(cell(5, 4), "·");
            // x-out of node 0: to 1 and to 15
            assert_eq!(row(0).last().copied(), Some("2.0"));
        }
    }
}

/// Cells of `buf` at row `y` from `x` spelling `text`.
fn text_at(buf: &Buffer, x: u16, y: u16, text: &str) -> bool {
    text.chars()
        .enumerate()
        .all(|(i, c)| buf[(x + i as u16, y)].symbol() == c.to_string())
}

/// Where `text` starts in `buf`, in rows below `from_y` and columns below `max_x`.
fn find_all(buf: &Buffer, text: &str, from_y: u16, max_x: u16) -> Vec<(u16, u16)> {
    let mut out = Vec::new();
    let n = text.chars().count() as u16;
    for y in from_y..buf.area.height {
        for x in 0..max_x.saturating_sub(n - 1) {
            if text_at(buf, x, y, text) {
                out.push((x, y));
            }
        }
    }
    out
}

fn selected_wanderer(w: u16, h: u16, also: &[Action]) -> AppState {
    // node 5's wanderer: the busy thread of node 5's second CPU (41)
    let mut a = vec![Action::FilterStart];
    a.extend("10041".chars().map(Action::FilterChar));
    a.push(Action::FilterDone);
    a.extend_from_slice(also);
    app(16, 8, w, h, &a)
}

#[test]
fn selected_threads_flows_are_highlighted() {
    let t = fixtures::numa_topology(16, 8);
    assert!(fixtures::wanderers(&t).contains(&(41, 74)));
    let app = selected_wanderer(200, 50, &[Action::ShowNuma]);
    assert_eq!(app.selected_row().unwrap().id, 10041);
    let (_, nodes) = app.highlighted_thread().unwrap();
    assert_eq!(nodes, vec![5]);
    let buf = render_to_buffer(&app, 200, 50);
    let s = buffer_text(&buf);
    insta::assert_snapshot!("numa_highlight_200x50", s.clone());
    assert!(s.contains("thread 10041 crunch-41: 2.0 cross-node migrations/s; flows of node 5"));
    let sel_y = s
        .lines()
        .position(|l| l.starts_with("thread 10041"))
        .unwrap() as u16;
    // the map is left of the matrix (74 cells wide, 2 apart)
    let map_w = 200 - 74 - 2;
    let lit = |x: u16, y: u16, n: u16| {
        (0..n).all(|i| {
            let c = &buf[(x + i, y)];
            c.bg == Color::Magenta && c.modifier.contains(Modifier::BOLD)
        })
    };
    let mut lit_labels = 0;
    let mut plain_labels = 0;
    for g in ['→', '↗', '↑', '↖', '←', '↙', '↓', '↘'] {
        for (x, y) in find_all(&buf, &format!("1.0{g}"), sel_y + 1, map_w) {
            if lit(x, y, 4) {
                lit_labels += 1;
            } else {
                assert_ne!(buf[(x, y)].bg, Color::Magenta, "half-lit label at {x},{y}");
                plain_labels += 1;
            }
        }
    }
    // 5->9 and 9->5 are node 5's; the other eight are not
    assert_eq!(lit_labels, 2, "{s}");
    assert!(plain_labels >= 6, "{plain_labels} plain labels:\n{s}");
    // the matrix cells of 5->9 and 9->5 are lit, 0->1 is not
    let row_y = |n: u32| {
        s.lines()
            .position(|l| {
                let right: String = l.chars().skip(usize::from(map_w)).collect();
                right.trim_start().starts_with(&format!("N{n} "))
            })
            .unwrap() as u16
    };
    let head_y = s.lines().position(|l| l.contains("from  N0")).unwrap() as u16;
    let col_x = |n: u32| -> u16 {
        let line = s.lines().nth(usize::from(head_y)).unwrap();
        let name = format!(" N{n} ");
        let byte = line.find(&name).unwrap() + name.len() - 1;
        // the cell is 4 wide, right-aligned like its title
        line[..byte].chars().count() as u16 - 4
    };
    for (from, to, want) in [(5, 9, true), (9, 5, true), (0, 1, false)] {
        let (x, y) = (col_x(to), row_y(from));
        assert!(text_at(&buf, x, y, " 1.0"), "cell {from}->{to} at {x},{y}");
        assert_eq!(lit(x + 1, y, 3), want, "matrix {from}->{to}");
    }
    // the 80x24 map highlights the same two
    let small = selected_wanderer(80, 24, &[Action::ShowNuma]);
    let buf = render_to_buffer(&small, 80, 24);
    insta::assert_snapshot!("numa_highlight_80x24", buffer_text(&buf));
    let lit80 = ['→', '↗', '↑', '↖', '←', '↙', '↓', '↘']
        .iter()
        .flat_map(|g| find_all(&buf, &format!("1.0{g}"), 5, 80))
        .filter(|&(x, y)| buf[(x, y)].bg == Color::Magenta)
        .count();
    assert_eq!(lit80, 2);
}

#[test]
fn thread_without_cross_node_moves_lights_nothing() {
    let app = app(16, 8, 200, 50, &[Action::ShowNuma]);
    let (r, nodes) = app.highlighted_thread().unwrap();
    assert_eq!(
        r.counter_per_s(&schedtop::model::counters::CROSS_NODE),
        Some(0.0)
    );
    assert!(nodes.is_empty());
    let buf = render_to_buffer(&app, 200, 50);
    let s = buffer_text(&buf);
    assert!(s.contains("no cross-node migrations in the last interval"));
    let sel_y = s.lines().position(|l| l.starts_with("thread ")).unwrap() as u16;
    for y in sel_y + 1..50 {
        for x in 0..200 {
            assert_ne!(buf[(x, y)].bg, Color::Magenta, "lit cell at {x},{y}");
        }
    }
}

#[test]
fn xnode_column_in_the_threads_table() {
    let app = selected_wanderer(200, 50, &[]);
    let s = screen(&app, 200, 50);
    let head = s.lines().find(|l| l.contains("TID")).unwrap();
    assert!(
        head.trim_end()
            .ends_with("MIGR/s XNODE/s  NI POLICY RTPRI BLOCKS ON  MIG BY WOKEN BY     CGROUP"),
        "{head}"
    );
    // the columns up to the policy, the why columns and the cgroup (which
    // may hold spaces)
    let cut = head.find(" POLICY").unwrap();
    let row = s.lines().find(|l| l.contains("crunch-41")).unwrap();
    let cols: Vec<&str> = row[..cut].split_whitespace().collect();
    // migrations, cross-node migrations, then the nice value
    assert_eq!(cols[cols.len() - 3..], ["2.0", "2.0", "0"], "{row}");
    // dropped first on a narrow screen
    let narrow = screen(&selected_wanderer(80, 24, &[]), 80, 24);
    assert!(!narrow.contains("XNODE/s") && narrow.contains("MIGR/s"));
    // procfs cannot see migrations: a dash, not a zero
    let procfs = screen(&fixtures::app(SourceKind::Procfs, 200, 50), 200, 50);
    let row = procfs.lines().find(|l| l.contains("ffmpeg:enc0")).unwrap();
    let cols: Vec<&str> = row[..cut].split_whitespace().collect();
    // MIGR/s and XNODE/s, then the nice value /proc does know
    assert_eq!(cols[cols.len() - 3..], ["-", "-", "-5"], "{row}");
}

#[test]
fn history_is_bounded_per_cpu_not_samples() {
    let t = fixtures::numa_topology(1, 2);
    let samples = fixtures::numa_samples_n(&t, 320);
    let app = fixtures::app_with(fixtures::numa_host(t.clone()), samples, 80, 24);
    assert_eq!(app.history.len(), schedtop::ui::app::HISTORY_CAP);
    for c in [0, 1] {
        let s = app.cpu_history.get(c).unwrap();
        assert_eq!(s.len(), schedtop::model::cpus::CPU_HISTORY_CAP);
        // the newest point is the last interval, k = 319 (Sample 319 counts
        // intervals 0..=319)
        let k = 319;
        let want: u64 = fixtures::rq_counts(&t, c, k)
            .iter()
            .map(|(l, n)| l * n)
            .sum();
        assert!((f64::from(s.back().unwrap().avg) - want as f64 / 100.0).abs() < 1e-4);
    }
}

#[test]
fn procfs_and_no_samples_say_why() {
    let mut app = fixtures::app(SourceKind::Procfs, 80, 24);
    schedtop::ui::layout::apply(&mut app, Action::ShowNuma);
    assert!(screen(&app, 80, 24).contains("no migrations: /proc has no CPU-to-CPU counts"));
    schedtop::ui::layout::apply(&mut app, Action::ShowCpus);
    let s = screen(&app, 80, 24);
    // no run-queue sampler: dashes; busy and switches still known
    let l0 = s.lines().find(|l| l.starts_with("    0    0 ")).unwrap();
    assert!(l0.contains("  -      -      - "), "{l0}");
    let mut empty = AppState::new(fixtures::numa_host(topology(2, 4)), Mode::Live);
    schedtop::ui::layout::apply(&mut empty, Action::ShowCpus);
    assert!(screen(&empty, 80, 24).contains("waiting for a second Sample"));
}

#[test]
fn no_size_panics_in_the_new_views() {
    let mut states = Vec::new();
    for (nodes, per) in [(1, 2), (16, 8)] {
        for a in [
            vec![Action::ShowCpus],
            vec![Action::ShowCpus, Action::End],
            vec![Action::ShowNuma],
            vec![Action::ShowNuma, Action::ToggleMatrix],
            vec![Action::ShowNuma, Action::ToggleHelp],
        ] {
            states.push(app(nodes, per, 80, 24, &a));
        }
    }
    states.push(selected_wanderer(80, 24, &[Action::ShowNuma]));
    let mut empty = AppState::new(fixtures::numa_host(topology(4, 8)), Mode::Live);
    schedtop::ui::layout::apply(&mut empty, Action::ShowNuma);
    states.push(empty);
    // every size up to 20x12, the smallest drawn ones (40x8 is the
    // minimum), then a coarse grid
    let small = (0..=20u16).flat_map(|w| (0..=12u16).map(move |h| (w, h)));
    let edge = (40..=44u16).flat_map(|w| (8..=11u16).map(move |h| (w, h)));
    let large = (45..=210u16)
        .step_by(33)
        .flat_map(|w| (12..=60u16).step_by(12).map(move |h| (w, h)));
    let sizes: Vec<(u16, u16)> = small.chain(edge).chain(large).collect();
    for app in &states {
        for &(w, h) in &sizes {
            let buf = render_to_buffer(app, w, h);
            assert_eq!((buf.area.width, buf.area.height), (w, h));
        }
    }
    for (w, h) in [(1, 1), (10, 3), (20, 5)] {
        let s = screen(&states[0], w, h);
        assert!(w < 20 || s.contains("too small"), "{s}");
    }
}

/// The 16-node fixture plus a ring of flows node i -> i+1 at `rate(i)`
/// migrations/s (cumulative counts added to every Sample).
fn with_ring(w: u16, h: u16, rate: impl Fn(u32) -> u64) -> AppState {
    let t = topology(16, 8);
    let mut samples = fixtures::numa_samples(&t);
    for (step, s) in samples.iter_mut().enumerate() {
        for i in 0..16u32 {
            let (from, to) = (i * 8 + 7, ((i + 1) % 16) * 8 + 7);
            let add = rate(i) * (step as u64 + 1);
            match s
                .migrations
                .iter_mut()
                .find(|m| (m.from_cpu, m.to_cpu) == (from, to))
            {
                Some(m) => m.count += add,
                None => s.migrations.push(schedtop::model::MigrationCount {
                    from_cpu: from,
                    to_cpu: to,
                    count: add,
                }),
            }
        }
    }
    let mut app = fixtures::app_with(fixtures::numa_host(t), samples, w, h);
    schedtop::ui::layout::apply(&mut app, Action::ShowNuma);
    app
}

#[test]
fn only_the_top_flows_are_arrows_and_big_ones_are_red() {
    // ring flows of 20..35/s; three of them (0->1, 2->3, 15->0) are also
    // wanderers' (1/s more): with the fixture's 1/s flows, 23 in all
    let app = with_ring(80, 24, |i| 20 + u64::from(i));
    let buf = render_to_buffer(&app, 80, 24);
    let s = buffer_text(&buf);
    assert!(s.contains("arrows: top 12 of 23"), "{s}");
    // the twelve biggest are ring flows 4..14 (24..34/s) and 15->0 (36/s);
    // no 1/s label
    let body: String = s.lines().skip(5).collect::<Vec<_>>().join("\n");
    assert!(!body.contains("1.0"), "a small flow was drawn:\n{s}");
    let heads = body.chars().filter(|c| "→↗↑↖←↙↓↘".contains(*c)).count();
    assert!(heads <= 2 * 12, "{heads} arrow glyphs:\n{s}");
    let drawn = (24..=34)
        .chain([36])
        .filter(|r| body.contains(&format!("{r}")))
        .count();
    assert!(
        drawn >= 10,
        "only {drawn} of the top flows' labels visible:\n{s}"
    );
    assert!(!body.contains("21") && !body.contains("23"), "{s}");
    // the matrix (m) still has all of them
    let mut m = app.clone();
    schedtop::ui::layout::apply(&mut m, Action::ToggleMatrix);
    let ms = screen(&m, 80, 24);
    let row0: Vec<&str> = ms
        .lines()
        .find(|l| l.starts_with("N0 "))
        .unwrap()
        .split_whitespace()
        .collect();
    assert_eq!(
        row0[2], "21",
        "N0->N1: ring 20/s plus the wanderer's 1/s: {row0:?}"
    );

    // weight by magnitude: under 10/s cyan, under 100/s yellow, else red
    let app = with_ring(200, 50, |i| match i {
        0 => 150,
        1 => 40,
        _ => 0,
    });
    let buf = render_to_buffer(&app, 200, 50);
    let s = buffer_text(&buf);
    let map_w = 200 - 74 - 2;
    let fg_of = |label: &str| -> Vec<Color> {
        ['→', '↗', '↑', '↖', '←', '↙', '↓', '↘']
            .iter()
            .flat_map(|g| find_all(&buf, &format!("{label}{g}"), 5, map_w))
            .map(|(x, y)| buf[(x, y)].fg)
            .collect()
    };
    // N0 -> N1 carries 150 + 1 (the wanderer), N1 -> N2 40
    assert_eq!(fg_of("151"), vec![Color::Red], "{s}");
    assert_eq!(fg_of("40"), vec![Color::Yellow], "{s}");
    assert!(fg_of("1.0").iter().all(|&c| c == Color::Cyan), "{s}");
    assert_eq!(schedtop::ui::views::numa::flow_tier(99.9), 1);
    assert_eq!(schedtop::ui::views::numa::flow_tier(100.0), 2);
    assert_eq!(schedtop::ui::views::numa::flow_tier(9.9), 0);
}

#[test]
fn m_counts_one_migration_cause_at_a_time_and_the_causes_add_up() {
    use schedtop::model::why::MigCause;
    let all = app(2, 4, 200, 50, &[Action::ShowNuma]);
    let (total, _) = all.cpu.as_ref().unwrap().totals_s();
    assert!(total > 0.0);
    let mut sum = 0.0;
    for (k, cause) in MigCause::ALL.iter().enumerate() {
        let mut actions = vec![Action::ShowNuma];
        actions.extend(std::iter::repeat_n(Action::CycleMigCause, k + 1));
        let a = app(2, 4, 200, 50, &actions);
        assert_eq!(a.mig_cause, Some(*cause));
        let v = a.cpu.as_ref().unwrap();
        assert_eq!(v.cause, Some(*cause));
        let (s, _) = v.totals_s();
        // the fixture's moves are wakeup placement or load balancing
        let expect_some = matches!(cause, MigCause::Wakeup | MigCause::LoadBalance);
        assert_eq!(s > 0.0, expect_some, "{cause:?}: {s}");
        sum += s;
        let text = screen(&a, 200, 50);
        assert!(
            text.contains(&format!("({} only, M: next)", cause.key())),
            "{text}"
        );
        // the CPU view says so too
        let mut cpu_actions = actions.clone();
        cpu_actions.push(Action::ShowCpus);
        let c = app(2, 4, 200, 50, &cpu_actions);
        assert!(screen(&c, 200, 50).contains(&format!("({} only", cause.key())));
    }
    assert!((sum - total).abs() < 1e-6, "causes {sum} vs all {total}");
    // one more press: all causes again
    let mut actions = vec![Action::ShowNuma];
    actions.extend(std::iter::repeat_n(
        Action::CycleMigCause,
        MigCause::ALL.len() + 1,
    ));
    let back = app(2, 4, 200, 50, &actions);
    assert_eq!(back.mig_cause, None);
    assert!((back.cpu.as_ref().unwrap().totals_s().0 - total).abs() < 1e-9);
    assert!(!screen(&back, 200, 50).contains(" only, M: next"));
}

/// IRQ% SIRQ% STEAL% per CPU and the header's hi+si+st: the fixture's
/// figures (ms per second, see fixtures/numa.rs) computed by hand, the
/// probes' where they are on; the shares obey physics: interrupts within
/// the CPU's busy time, steal within its idle time.
#[test]
fn interrupt_and_steal_shares_per_cpu_and_in_the_header() {
    let (nodes, per, w, h) = (2, 4, 120, 40);
    let app = app(nodes, per, w, h, &[Action::ShowCpus]);
    let s = screen(&app, w, h);
    assert!(s.contains("IRQ% SIRQ% STEAL%"), "{s}");
    // the list's cells, one word each, in the columns' order
    let cols = schedtop::model::cpu_metrics::columns();
    let at = |k: &str| cols.iter().position(|(f, _)| f.key == k).unwrap();
    let (busy_i, irq_i) = (at("busy_pct"), at("irq_shown_pct"));
    let mut sum = 0.0;
    for cpu in 0..nodes * per {
        let c = f64::from(cpu);
        let (irq, soft, steal) = (
            6.0 * (1.0 + c % 2.0) / 10.0,
            (20.0 + 5.0 * (c % 4.0)) / 10.0,
            2.0 * (c % 3.0) / 10.0,
        );
        sum += irq + soft + steal;
        let line = s
            .lines()
            .find(|l| l.split_whitespace().next() == Some(&cpu.to_string()))
            .unwrap();
        let cols: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(
            &cols[irq_i..irq_i + 3],
            [percent(irq), percent(soft), percent(steal)],
            "CPU {cpu}: {line}"
        );
        let busy: f64 = cols[busy_i].parse().unwrap();
        assert!(irq + soft <= busy && steal <= 100.0 - busy + 1e-9, "{line}");
    }
    let want = format!("hi+si+st {:.1}%", sum / f64::from(nodes * per));
    assert!(s.lines().take(4).any(|l| l.contains(&want)), "{want}:\n{s}");
}
