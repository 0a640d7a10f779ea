//! Figures that hold still in the live view (ui/steady.rs): a rate that
//! moved by 1 % keeps the figure drawn a second ago, one that moved by 18 %
//! shows at once, and a replay draws every figure exactly.
use crate::common;

use common::ui_kit::screen;
use schedtop::model::{Sample, SourceKind};
use schedtop::ui::fixtures::{self, TREE_THREADS};
use schedtop::ui::{AppState, Mode};

/// The fixture's next second, with worker-0 waking 828 times (820 the
/// seconds before: +1 %) and worker-1 900 times (760: +18 %).
fn next_second(last: &Sample) -> Sample {
    let mut s = last.clone();
    s.time_ns += 1_000_000_000;
    s.mono_ns += 1_000_000_000;
    let mut threads = s.threads.to_vec();
    for t in &mut threads {
        let &(_, _, _, _, _, vol, invol, cpu_us) =
            TREE_THREADS.iter().find(|x| x.0 == t.tid).unwrap();
        let vol = match t.tid {
            5001 => 828,
            5002 => 900,
            _ => vol,
        };
        t.voluntary += vol;
        t.involuntary += invol;
        t.oncpu_ns += cpu_us * 1000;
        t.baseline = None;
    }
    s.threads = threads.into();
    s
}

/// The VCSW/s cell of `name`'s line.
fn vcsw(text: &str, name: &str) -> String {
    let head = text.lines().find(|l| l.contains(" COMM ")).unwrap();
    let line = text
        .lines()
        .find(|l| l.split_whitespace().nth(2) == Some(name))
        .unwrap_or_else(|| panic!("{name}:\n{text}"));
    let end = head.find("VCSW/s").unwrap() + "VCSW/s".len();
    line[..end].split_whitespace().last().unwrap().to_string()
}

fn app(mode: Mode) -> AppState {
    let mut samples = fixtures::tree_samples();
    samples.push(next_second(samples.last().unwrap()));
    let mut app = AppState::new(fixtures::host(SourceKind::Bpf), mode);
    schedtop::ui::layout::apply(&mut app, schedtop::ui::action::Action::Resize(120, 40));
    for s in samples {
        app.push_sample(s);
    }
    app
}

#[test]
fn a_small_move_keeps_its_figure_and_a_big_one_shows() {
    let live = screen(&app(Mode::Live), 120, 40);
    assert_eq!(
        vcsw(&live, "worker-0"),
        "820",
        "828 is 1 % from 820:\n{live}"
    );
    assert_eq!(vcsw(&live, "worker-1"), "900", "18 % shows:\n{live}");
    // a replay is exact
    let replay = screen(&app(Mode::Replay), 120, 40);
    assert_eq!(vcsw(&replay, "worker-0"), "828");
    assert_eq!(vcsw(&replay, "worker-1"), "900");
}
