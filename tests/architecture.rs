//! The shape of the source tree, checked on every test run (docs/architecture.md):
//! imports go one way (util <- model <- collect <- record <- export <- ui <-
//! the shell), so there are no cycles between modules and nothing but the
//! shell imports the UI; no source file is over 600 lines; `AppState`
//! holds no reader or writer and does no I/O.
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Lower layers first; a module may import only modules before it. Every
/// other top-level module (main, cli, batch, snapshot, ...) is the shell.
const LAYERS: [&str; 6] = ["util", "model", "collect", "record", "export", "ui"];
const MAX_LINES: usize = 600;

fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            sources(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// The top-level module a file belongs to (`src/ui/views/x.rs` -> `ui`).
fn module_of(path: &Path) -> String {
    let rel = path.strip_prefix(src()).unwrap();
    let first = rel.components().next().unwrap().as_os_str();
    first.to_string_lossy().trim_end_matches(".rs").to_string()
}

fn layer(m: &str) -> usize {
    LAYERS.iter().position(|&l| l == m).unwrap_or(LAYERS.len())
}

/// `crate::NAME` paths in the code (comments stripped), as top-level names.
fn crate_refs(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for line in text.lines() {
        let code = line.split("//").next().unwrap_or("");
        let mut rest = code;
        while let Some(i) = rest.find("crate::") {
            let after = &rest[i + "crate::".len()..];
            let name: String = after
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() {
                out.insert(name);
            }
            rest = after;
        }
    }
    out
}

/// module -> modules it imports, with one file per edge for the message.
fn graph() -> BTreeMap<String, BTreeMap<String, PathBuf>> {
    let mut files = Vec::new();
    sources(&src(), &mut files);
    let mut g: BTreeMap<String, BTreeMap<String, PathBuf>> = BTreeMap::new();
    for f in files {
        let from = module_of(&f);
        let text = std::fs::read_to_string(&f).unwrap();
        let entry = g.entry(from.clone()).or_default();
        for to in crate_refs(&text) {
            if to != from {
                entry.entry(to).or_insert_with(|| f.clone());
            }
        }
    }
    g
}

#[test]
fn imports_go_one_way() {
    let mut bad = Vec::new();
    for (from, tos) in graph() {
        for (to, file) in tos {
            let shell = LAYERS.len();
            // the shell's modules may use each other (cycles among them
            // are still caught below)
            if layer(&to) >= layer(&from) && !(layer(&from) == shell && layer(&to) == shell) {
                bad.push(format!("{from} -> {to} ({})", file.display()));
            }
        }
    }
    assert!(
        bad.is_empty(),
        "imports against the layers {LAYERS:?} <- shell:\n{}",
        bad.join("\n")
    );
}

#[test]
fn no_module_cycles() {
    let g = graph();
    // depth-first search for a back edge
    fn visit(
        n: &str,
        g: &BTreeMap<String, BTreeMap<String, PathBuf>>,
        state: &mut BTreeMap<String, u8>,
        path: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        match state.get(n) {
            Some(1) => {
                let i = path.iter().position(|p| p == n).unwrap();
                let mut c = path[i..].to_vec();
                c.push(n.to_string());
                return Some(c);
            }
            Some(_) => return None,
            None => {}
        }
        state.insert(n.to_string(), 1);
        path.push(n.to_string());
        for to in g.get(n).into_iter().flat_map(|t| t.keys()) {
            if let Some(c) = visit(to, g, state, path) {
                return Some(c);
            }
        }
        path.pop();
        state.insert(n.to_string(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for n in g.keys() {
        if let Some(c) = visit(n, &g, &mut state, &mut Vec::new()) {
            panic!("import cycle: {}", c.join(" -> "));
        }
    }
}

#[test]
fn the_checker_sees_edges_and_cycles() {
    // the scanner itself: a use line, a path in code, a comment ignored
    let refs = crate_refs(
        "use crate::model::{Sample};\nlet x = crate::util::clock::now_ns(); // crate::ui\n",
    );
    assert_eq!(
        refs.into_iter().collect::<Vec<_>>(),
        ["model", "util"],
        "comments must not count"
    );
    assert!(layer("model") < layer("ui"));
    assert_eq!(
        layer("main"),
        LAYERS.len(),
        "unlisted modules are the shell"
    );
    // and the real tree has the edges we know of
    let g = graph();
    assert!(g["ui"].contains_key("model"));
    assert!(g["record"].contains_key("model"));
}

#[test]
fn no_source_file_over_600_lines() {
    let mut files = Vec::new();
    sources(&src(), &mut files);
    let long: Vec<String> = files
        .iter()
        .filter_map(|f| {
            let n = std::fs::read_to_string(f).unwrap().lines().count();
            (n > MAX_LINES).then(|| format!("{} ({n} lines)", f.display()))
        })
        .collect();
    assert!(
        long.is_empty(),
        "over {MAX_LINES} lines:\n{}",
        long.join("\n")
    );
}

#[test]
fn app_state_does_no_io() {
    let text = std::fs::read_to_string(src().join("ui/app.rs")).unwrap();
    let code: String = text
        .lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n");
    for word in [
        "Reader", "Writer", "std::fs", "std::io", "File", "record::", "Mutex", "Sender", "Receiver",
    ] {
        assert!(!code.contains(word), "ui/app.rs mentions {word}");
    }
    // the renderer reads the state, never the other way round: the page
    // size comes in through layout::apply / layout::refresh
    for word in ["layout::", "render::", "views::", "ratatui::"] {
        assert!(
            !code.contains(word),
            "ui/app.rs depends on the renderer ({word})"
        );
    }
}
