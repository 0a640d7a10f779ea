//! Snapshots of every view and state of the live UI, drawn from fixture
//! Samples into ratatui's TestBackend and compared as text.
use crate::common;

use common::ui_kit::screen;
use schedtop::model::SourceKind;
use schedtop::ui::action::Action;
use schedtop::ui::fixtures;
use schedtop::ui::render::{buffer_text, render_to_buffer};
use schedtop::ui::AppState;

use ratatui::style::Modifier;

const SIZES: [(u16, u16); 2] = [(80, 24), (200, 50)];

fn apply(mut app: AppState, actions: &[Action]) -> AppState {
    for &a in actions {
        schedtop::ui::layout::apply(&mut app, a);
    }
    app
}

fn typed(s: &str) -> Vec<Action> {
    s.chars().map(Action::FilterChar).collect()
}

/// Snapshot the state `build` makes at both sizes; returns the screens.
fn snap(name: &str, build: impl Fn(u16, u16) -> AppState) -> Vec<String> {
    SIZES
        .iter()
        .map(|&(w, h)| {
            let text = screen(&build(w, h), w, h);
            insta::assert_snapshot!(format!("{name}_{w}x{h}"), text);
            text
        })
        .collect()
}

fn bpf(w: u16, h: u16) -> AppState {
    fixtures::app(SourceKind::Bpf, w, h)
}

#[test]
fn threads_view() {
    for s in snap("threads", bpf) {
        assert!(s.contains("source BPF"));
        assert!(s.contains("NVCSW/s"));
        assert!(s.contains("ffmpeg:enc0"));
    }
}

#[test]
fn processes_view() {
    for s in snap("processes", |w, h| {
        apply(bpf(w, h), &[Action::ToggleProcesses])
    }) {
        assert!(s.contains("Processes"));
        assert!(s.contains("THR"));
        assert!(!s.contains("ffmpeg:enc0"));
    }
}

#[test]
fn detail_with_both_histograms() {
    for s in snap("detail", |w, h| apply(bpf(w, h), &[Action::ToggleDetail])) {
        assert!(s.contains("on-CPU slice (us)"));
        assert!(s.contains("run-queue latency (us)"));
        assert!(s.contains("thread 2211 ffmpeg:enc0"));
        assert!(
            s.contains("[224, 256)"),
            "a sub-bucket of the wait histogram"
        );
        assert!(s.contains("@@@"));
        assert!(s.contains("last interval"));
    }
}

#[test]
fn detail_since_start() {
    let screens = snap("detail_since_start", |w, h| {
        apply(
            bpf(w, h),
            &[Action::Down, Action::ToggleDetail, Action::ToggleHistScope],
        )
    });
    for s in screens {
        assert!(s.contains("since start (a: last interval)"));
    }
}

#[test]
fn detail_waits_after_a_preemption() {
    let acts = [
        Action::ToggleDetail,
        Action::CycleWaitView,
        Action::CycleWaitView,
    ];
    let app = apply(bpf(200, 50), &acts);
    let row = app.selected_row().unwrap().clone();
    let preempt = row.preempt_wait_hist().unwrap();
    let all = row.wait_hist().unwrap();
    assert!(preempt.total() > 0 && preempt.total() < all.total());
    for s in snap("detail_preempt_waits", |w, h| apply(bpf(w, h), &acts)) {
        assert!(s.contains("run-queue latency: preempted (us)"));
    }
    // the drawn counts are the preemption waits' (the screen at 200x50
    // has room for every non-empty bucket)
    let s = screen(&app, 200, 50);
    let drawn: u64 = s
        .lines()
        .flat_map(|l| l.split('|').step_by(2))
        .filter(|cell| cell.contains('['))
        .filter_map(|cell| cell.split_whitespace().last()?.parse::<u64>().ok())
        .sum();
    let slices = row.slice_hist().unwrap().total();
    assert_eq!(drawn, slices + preempt.total(), "{s}");
}

#[test]
fn detail_of_a_process() {
    for s in snap("detail_process", |w, h| {
        apply(bpf(w, h), &[Action::ToggleProcesses, Action::ToggleDetail])
    }) {
        assert!(s.contains("process 2210 ffmpeg (6 threads)"));
    }
}

/// The BPF fixture as a source that did not count wakers (the probes'
/// waker counting off): every thread's waker figures unknown.
fn bpf_without_wakers(w: u16, h: u16) -> AppState {
    let mut samples = fixtures::samples(SourceKind::Bpf);
    for s in &mut samples {
        for t in s.threads.iter_mut() {
            if let Some(why) = t.why.as_mut() {
                let why = std::sync::Arc::make_mut(why);
                why.wakeups = None;
                why.woken_by.clear();
                why.woken_by_rest = 0;
            }
        }
    }
    fixtures::app_with(fixtures::host(SourceKind::Bpf), samples, w, h)
}

#[test]
fn detail_with_wakers_not_counted_says_unknown_not_nobody() {
    let acts = [Action::ToggleDetail];
    for s in snap("detail_wakers_unknown", |w, h| {
        apply(bpf_without_wakers(w, h), &acts)
    }) {
        assert!(s.contains("woken by  - (not counted"), "{s}");
        assert!(!s.contains("nobody this interval") || s.contains("preempted by"));
        assert!(!s.contains("hardirq"), "{s}");
        assert!(!s.contains("chain"), "no wait chain without wakers: {s}");
    }
    // the counted fixture shows who woke the same thread
    let s = screen(&apply(bpf(200, 50), &acts), 200, 50);
    assert!(s.contains("hardirq"), "{s}");
}

#[test]
fn help_overlay() {
    let tops = snap("help", |w, h| apply(bpf(w, h), &[Action::ToggleHelp]));
    // taller than 24 rows: the rest is one End away
    let ends = snap("help_end", |w, h| {
        apply(bpf(w, h), &[Action::ToggleHelp, Action::HelpScroll(1000)])
    });
    assert!(tops[0].contains("lines 1-22 of"), "{}", tops[0]);
    assert!(!tops[1].contains("Up/Down scroll"), "fits at 200x50");
    for ((top, end), &(w, h)) in tops.iter().zip(&ends).zip(SIZES.iter()) {
        // the lines between the first and the last page, when there are any
        let middle: String = (1..6)
            .map(|page| {
                let at = Action::HelpScroll(page * 11);
                screen(&apply(bpf(w, h), &[Action::ToggleHelp, at]), w, h)
            })
            .collect();
        let s = format!("{top}{middle}{end}");
        for (keys, what) in schedtop::ui::keys::HELP {
            assert!(s.contains(keys), "help lacks {keys}");
            assert!(s.contains(what), "help lacks {what}");
        }
        assert!(s.contains("XNODE/s: migrations to a CPU of another NUMA node"));
    }
    assert_ne!(tops[0], ends[0]);
}

#[test]
fn filter_being_typed_and_kept() {
    let typing = snap("filter_typing", |w, h| {
        let mut a = vec![Action::FilterStart];
        a.extend(typed("enc"));
        apply(bpf(w, h), &a)
    });
    for s in typing {
        assert!(s.contains("Filter: enc_"));
        assert!(s.contains("Threads 5/13"));
        assert!(!s.contains("postgres"));
    }
    let kept = snap("filter_kept", |w, h| {
        let mut a = vec![Action::FilterStart];
        a.extend(typed("812"));
        a.push(Action::FilterDone);
        apply(bpf(w, h), &a)
    });
    for s in kept {
        assert!(s.contains("filter \"812\""));
        assert!(s.contains("walwriter") && !s.contains("ffmpeg"));
    }
}

#[test]
fn procfs_mode_banner() {
    let screens = snap("procfs", |w, h| fixtures::app(SourceKind::Procfs, w, h));
    for s in screens {
        assert!(s.contains("source procfs"));
        assert!(s.contains("procfs mode: not root"));
    }
    let detail = snap("procfs_detail", |w, h| {
        apply(
            fixtures::app(SourceKind::Procfs, w, h),
            &[Action::ToggleDetail],
        )
    });
    for s in detail {
        assert!(s.contains("no histograms: /proc has none"));
    }
}

#[test]
fn paused_screen_stays_frozen() {
    let screens = snap("paused", |w, h| {
        let mut app = apply(bpf(w, h), &[Action::TogglePause]);
        // a newer Sample arrives: collection continues, the screen does not move
        let mut next = fixtures::samples(SourceKind::Bpf).pop().unwrap();
        next.time_ns += 60_000_000_000;
        next.mono_ns += 60_000_000_000;
        app.push_sample(next);
        app
    });
    for s in screens {
        assert!(s.contains(" PAUSED "));
        assert!(s.contains("23:15:23 UTC"), "clock moved while paused");
        assert!(s.contains("SpcResume"));
    }
}

#[test]
fn hostile_names_are_escaped() {
    let build = |w, h| {
        let mut app = fixtures::app_with(
            fixtures::host(SourceKind::Bpf),
            fixtures::hostile_samples(),
            w,
            h,
        );
        schedtop::ui::layout::apply(&mut app, Action::FilterStart);
        for c in "6666".chars() {
            schedtop::ui::layout::apply(&mut app, Action::FilterChar(c));
        }
        schedtop::ui::layout::apply(&mut app, Action::FilterDone);
        schedtop::ui::layout::apply(&mut app, Action::ToggleDetail);
        app
    };
    for (w, h) in SIZES {
        let buf = render_to_buffer(&build(w, h), w, h);
        for cell in buf.content() {
            assert!(
                !cell
                    .symbol()
                    .chars()
                    .any(|c| c.is_control() || ('\u{202a}'..='\u{202e}').contains(&c)),
                "raw control character {:?} on screen",
                cell.symbol()
            );
        }
    }
    for s in snap("hostile", build) {
        assert!(s.contains("evil^[[2J^G"), "{s}");
        assert!(s.contains("(process 6666 ^[]0;pwne"));
        assert!(s.contains("lost 391"));
    }
}

#[test]
fn selection_is_a_reverse_video_bar() {
    let app = apply(bpf(80, 24), &[Action::Down, Action::Down]);
    let buf = render_to_buffer(&app, 80, 24);
    let text = buffer_text(&buf);
    let y = text
        .lines()
        .position(|l| l.contains(&*app.selected_row().unwrap().comm))
        .unwrap() as u16;
    for x in 0..40 {
        assert!(buf[(x, y)].modifier.contains(Modifier::REVERSED), "x={x}");
        assert!(!buf[(x, y + 1)].modifier.contains(Modifier::REVERSED));
    }
}

#[test]
fn tiny_terminals() {
    for (w, h) in [(1, 1), (10, 3), (20, 5)] {
        let text = screen(&bpf(w, h), w, h);
        insta::assert_snapshot!(format!("tiny_{w}x{h}"), text);
    }
    assert!(screen(&bpf(20, 5), 20, 5).contains("too small"));
}

#[test]
fn no_size_panics_in_any_state() {
    let states: Vec<AppState> = vec![
        bpf(80, 24),
        apply(bpf(80, 24), &[Action::ToggleDetail, Action::ToggleHelp]),
        apply(
            bpf(80, 24),
            &[Action::ToggleProcesses, Action::ToggleDetail, Action::End],
        ),
        apply(
            fixtures::app(SourceKind::Procfs, 80, 24),
            &[Action::ToggleDetail, Action::FilterStart],
        ),
        AppState::new(fixtures::host(SourceKind::Bpf), schedtop::ui::Mode::Live),
    ];
    // every size up to 12x12, then a coarse grid up to 130x40
    let small = (0..=12u16).flat_map(|w| (0..=12u16).map(move |h| (w, h)));
    let large = (13..=130u16)
        .step_by(9)
        .flat_map(|w| (13..=40u16).step_by(3).map(move |h| (w, h)));
    let sizes: Vec<(u16, u16)> = small.chain(large).collect();
    for app in &states {
        for &(w, h) in &sizes {
            let buf = render_to_buffer(app, w, h);
            assert_eq!(buf.area.width, w);
        }
    }
}

#[test]
fn follow_inverted_sort_and_feed_error() {
    let screens = snap("follow_error", |w, h| {
        let mut app = apply(
            bpf(w, h),
            &[Action::End, Action::ToggleFollow, Action::SortInvert],
        );
        app.set_error(Some("reading /proc/stat: permission denied".into()));
        app
    });
    for s in screens {
        assert!(s.contains("FOLLOW"));
        assert!(s.contains("sort NVCSW/s▲"));
        assert!(s.contains("error: reading /proc/stat: permission denied"));
        // inverted, the followed last row (no rate yet) is still last and selected
        let last_row = s
            .lines()
            .rfind(|l| l.trim_start().starts_with(char::is_numeric));
        assert!(last_row.unwrap().contains("ffmpeg:enc4"), "{s}");
    }
}

#[test]
fn similar_threads_show_p99s_that_differ_where_their_histograms_do() {
    // 24 workers with the same rates whose wait tails sit a quarter octave
    // apart: whole-octave p99s would read alike in groups of four
    let screens = snap("worker_pool", |w, h| {
        fixtures::app_with(
            fixtures::host(SourceKind::Bpf),
            fixtures::worker_pool_samples(),
            w,
            h,
        )
    });
    let mut seen = Vec::new();
    for s in &screens {
        let header = s.lines().find(|l| l.contains("P99WAIT")).unwrap();
        let col = header
            .split_whitespace()
            .position(|c| c == "P99WAIT")
            .unwrap();
        let p99s: std::collections::BTreeSet<&str> = s
            .lines()
            .filter(|l| l.contains("worker-"))
            .filter_map(|l| l.split_whitespace().nth(col))
            .collect();
        let rows = s.lines().filter(|l| l.contains("worker-")).count();
        assert_eq!(p99s.len(), rows, "P99WAIT values {p99s:?}");
        seen.push(rows);
    }
    // the large screen holds the whole pool: 24 different p99s
    assert_eq!(seen, [18, 24]);
}

#[test]
fn detail_folded_to_octaves_sums_the_sub_buckets() {
    for (i, s) in snap("detail_octaves", |w, h| {
        apply(bpf(w, h), &[Action::ToggleDetail, Action::ToggleOctaves])
    })
    .into_iter()
    .enumerate()
    {
        assert!(s.contains("on-CPU slice (us, octaves)"), "{s}");
        assert!(
            !s.contains("[224, 256)"),
            "a sub-bucket after folding:\n{s}"
        );
        // each octave shown holds exactly its four sub-buckets' counts
        let (w, h) = SIZES[i];
        let app = bpf(w, h);
        let row = &app.rows()[app.selected];
        let wait = row.wait_hist().unwrap();
        for octave in 0..schedtop::model::hist::HIST_OCTAVES {
            let n: u64 = (0..4).map(|j| wait.get(4 * octave + j)).sum();
            if n == 0 {
                continue;
            }
            let label = schedtop::ui::views::hist::label(octave);
            let line = s
                .lines()
                .find(|l| l.contains(&format!("{label} ")) && l.contains(&n.to_string()));
            assert!(line.is_some(), "{label} {n} not shown:\n{s}");
        }
    }
}
