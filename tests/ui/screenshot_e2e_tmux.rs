//! The `s` key in the real binary, in a real terminal (tmux), with its
//! working directory in a temporary directory: an SVG appears there that
//! shows the very screen tmux shows, and the status line names it.
//!
//! Needs tmux. Without it the test skips, unless SCHEDTOP_REQUIRE_ALL=1
//! (CI), where it fails.
use std::path::Path;

use crate::common;
use crate::svg_grid;
use common::tmux::{have_tmux, Tmux, BIN};
use std::time::Duration;
use svg_grid::svg_screen;

fn files(dir: &Path, ext: &str) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(ext))
        .collect();
    v.sort();
    v
}

#[test]
fn s_saves_the_screen_tmux_shows_as_svg_in_the_working_directory() {
    if !have_tmux() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let tmux = Tmux::start("shot", 120, 40, Some(dir.path()));
    tmux.type_text(&format!(
        "{BIN} -i 0.5 --screenshot-format svg; echo SCHEDTOP_EXIT=$?"
    ));
    tmux.send(&["Enter"]);
    tmux.wait_for("the live view with rates", 30, |s| {
        s.contains("NVCSW/s") && s.contains("switches/s") && !s.contains("switches/s -")
    });
    // freeze the screen so tmux and the file see the same one
    tmux.send(&["Space"]);
    let before = tmux.wait_for("PAUSED", 10, |s| s.contains("PAUSED"));
    std::thread::sleep(Duration::from_millis(300));
    let before = {
        let again = tmux.screen();
        assert_eq!(again, before, "the paused screen changed");
        again
    };
    assert!(files(dir.path(), ".svg").is_empty());

    tmux.send(&["s"]);
    let after = tmux.wait_for("the status line", 10, |s| s.contains("saved schedtop-"));
    let svgs = files(dir.path(), ".svg");
    assert_eq!(svgs.len(), 1, "{svgs:?}");
    assert!(
        files(dir.path(), ".txt").is_empty(),
        "only the asked format"
    );
    let name = &svgs[0];
    assert!(
        name.starts_with("schedtop-") && name.ends_with(".svg"),
        "{name}"
    );
    // the status line names the file (relative: it is in the cwd)
    let last = after.lines().rfind(|l| !l.trim().is_empty()).unwrap();
    assert_eq!(last.trim_end(), format!("saved {name}"));

    let svg = std::fs::read_to_string(dir.path().join(name)).unwrap();
    let shot = svg_screen(&svg);
    let shown: Vec<&str> = before.lines().map(str::trim_end).collect();
    assert_eq!(shot.len(), 40);
    // every line but the bottom one (where the message now is) is what
    // tmux showed before the key, character for character
    for (i, (a, b)) in shot.iter().zip(&shown).enumerate().take(39) {
        assert_eq!(a, b, "line {i} differs");
    }
    assert!(shot[0].contains("schedtop") && shot[0].contains("PAUSED"));
    assert!(shot.iter().any(|l| l.contains("NVCSW/s")));

    tmux.send(&["q"]);
    tmux.wait_for("exit", 20, |s| s.contains("SCHEDTOP_EXIT=0"));
}
