//! The screenshots the README shows are what schedtop draws today: each shot
//! of assets/screenshots.list, rendered again from its recording, equals the
//! committed text and SVG (scripts/screenshots.sh remakes them).
use std::path::Path;
use std::process::Command;

#[test]
fn committed_screenshots_equal_a_fresh_render() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let list = std::fs::read_to_string(root.join("assets/screenshots.list")).unwrap();
    let mut shots = 0;
    let mut stale = Vec::new();
    for line in list.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let words: Vec<&str> = line.split_whitespace().collect();
        let [name, rec, at, size, opts @ ..] = words.as_slice() else {
            panic!("assets/screenshots.list: want NAME RECORDING AT SIZE OPTIONS...: {line}");
        };
        shots += 1;
        for fmt in ["txt", "svg"] {
            let out = Command::new(env!("CARGO_BIN_EXE_schedtop"))
                .current_dir(root)
                .env_remove("NO_COLOR")
                .env_remove("COLORTERM")
                .args(["snapshot", "--from", rec, "--at", at, "--size", size])
                .args(opts)
                .args(["--format", fmt])
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{name}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            let file = format!("assets/{name}.{fmt}");
            let committed = std::fs::read(root.join(&file)).unwrap_or_default();
            if committed != out.stdout {
                stale.push(file);
            }
        }
    }
    assert!(shots >= 4, "only {shots} screenshots listed");
    assert!(
        stale.is_empty(),
        "{} show an older screen than schedtop draws today: run scripts/screenshots.sh",
        stale.join(", ")
    );
}
