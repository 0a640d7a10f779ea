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
            // `crate::say!`: an exported macro sits at the crate's root
            // whichever module defines it (util/stdio.rs): not a module
            let is_macro = after[name.len()..].starts_with('!');
            if !name.is_empty() && !is_macro {
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

/// A cycle reachable from `n` in `g` (depth-first search for a back edge).
fn find_cycle(
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
        if let Some(c) = find_cycle(to, g, state, path) {
            return Some(c);
        }
    }
    path.pop();
    state.insert(n.to_string(), 2);
    None
}

#[test]
fn no_module_cycles() {
    let g = graph();
    let mut state = BTreeMap::new();
    for n in g.keys() {
        if let Some(c) = find_cycle(n, &g, &mut state, &mut Vec::new()) {
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

/// A source file's module path (`src/ui/views/header.rs` -> ui::views::header;
/// `src/ui/mod.rs` -> ui).
fn module_path(f: &Path) -> Vec<String> {
    let rel = f.strip_prefix(src()).unwrap();
    let mut parts: Vec<String> = rel
        .components()
        .map(|c| {
            c.as_os_str()
                .to_string_lossy()
                .trim_end_matches(".rs")
                .to_string()
        })
        .collect();
    if is_dir_module(f) {
        parts.pop();
    }
    parts
}

fn is_dir_module(f: &Path) -> bool {
    f.file_name()
        .is_some_and(|n| n == "mod.rs" || n == "lib.rs" || n == "main.rs")
}

/// Every path a `use` tree names: `a::{b, c::{d, e}}` -> a::b, a::c::d, a::c::e.
fn expand_use(tree: &str) -> Vec<String> {
    let tree: String = tree.chars().filter(|c| !c.is_whitespace()).collect();
    let Some(open) = tree.find('{') else {
        return vec![tree];
    };
    let prefix = &tree[..open];
    let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
    let (mut depth, mut start, mut out) = (0, 0, Vec::new());
    for (i, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                out.extend(expand_use(&format!("{prefix}{}", &inner[start..i])));
                start = i + 1;
            }
            _ => {}
        }
    }
    if start < inner.len() {
        out.extend(expand_use(&format!("{prefix}{}", &inner[start..])));
    }
    out
}

/// The `crate::` and `super::` paths a file names: in its `use` trees and
/// written inline in code (comments and the unit tests at the end stripped:
/// a test may drive the code above it).
fn named_paths(text: &str) -> Vec<String> {
    let code: String = text
        .lines()
        .take_while(|l| l.trim() != "#[cfg(test)]")
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n");
    let mut out = Vec::new();
    let mut rest = code.as_str();
    while let Some(i) = rest.find("use ") {
        let stmt = &rest[i + 4..];
        let end = stmt.find(';').unwrap_or(stmt.len());
        let tree = stmt[..end].trim();
        if tree.starts_with("crate::") || tree.starts_with("super::") {
            out.extend(expand_use(tree));
        }
        rest = &stmt[end..];
    }
    for head in ["crate::", "super::"] {
        let mut rest = code.as_str();
        while let Some(i) = rest.find(head) {
            // only where a path starts (not the tail of `super::super::`)
            let starts = i == 0 || !rest[..i].ends_with("::");
            if starts {
                out.push(
                    rest[i..]
                        .chars()
                        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == ':')
                        .collect(),
                );
            }
            rest = &rest[i + head.len()..];
        }
    }
    out
}

/// The source file (not a mod.rs: its re-exports would tie every child to
/// every other) that `path`, written in the file of module `from`, names.
fn file_named(
    path: &str,
    from: &[String],
    files: &BTreeMap<Vec<String>, PathBuf>,
) -> Option<String> {
    let mut segs = path.split("::").filter(|s| !s.is_empty()).peekable();
    let mut at: Vec<String> = match segs.peek() {
        Some(&"crate") => {
            segs.next();
            Vec::new()
        }
        Some(&"super") => {
            let mut at = from.to_vec();
            while segs.peek() == Some(&"super") {
                segs.next();
                at.pop();
            }
            at
        }
        _ => return None,
    };
    for s in segs {
        at.push(s.to_string());
        match files.get(&at) {
            Some(f) if !is_dir_module(f) => return Some(at.join("::")),
            Some(_) => {}
            None => return None,
        }
    }
    None
}

#[test]
fn no_file_cycles() {
    let mut list = Vec::new();
    sources(&src(), &mut list);
    let files: BTreeMap<Vec<String>, PathBuf> =
        list.iter().map(|f| (module_path(f), f.clone())).collect();
    let mut g: BTreeMap<String, BTreeMap<String, PathBuf>> = BTreeMap::new();
    for (m, f) in &files {
        if is_dir_module(f) {
            continue;
        }
        let from = m.join("::");
        let entry = g.entry(from.clone()).or_default();
        for p in named_paths(&std::fs::read_to_string(f).unwrap()) {
            if let Some(to) = file_named(&p, m, &files) {
                if to != from {
                    entry.entry(to).or_insert_with(|| f.clone());
                }
            }
        }
    }
    let edges: usize = g.values().map(BTreeMap::len).sum();
    assert!(edges > 200, "the scanner found only {edges} file imports");
    let mut state = BTreeMap::new();
    for n in g.keys() {
        if let Some(c) = find_cycle(n, &g, &mut state, &mut Vec::new()) {
            panic!("file import cycle: {}", c.join(" -> "));
        }
    }
}

#[test]
fn use_trees_expand_to_every_path() {
    assert_eq!(
        expand_use("super::{a, b::{c, d}, e::F}"),
        ["super::a", "super::b::c", "super::b::d", "super::e::F"]
    );
    let text = "use crate::model::{cpus::{self, X}, rates};\nfn f() { super::format::clock(1); } // crate::ui::app\n";
    let p = named_paths(text);
    assert!(p.contains(&"crate::model::cpus::self".to_string()), "{p:?}");
    assert!(p.contains(&"crate::model::rates".to_string()), "{p:?}");
    assert!(p.contains(&"super::format::clock".to_string()), "{p:?}");
    assert!(
        !p.iter().any(|x| x.contains("ui::app")),
        "a comment counted: {p:?}"
    );
}
