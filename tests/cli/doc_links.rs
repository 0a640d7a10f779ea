//! Every relative link in README.md and docs/ points at a file that exists
//! and, with a `#fragment`, at a heading that exists in it (GitHub's anchor
//! for it). Moving text between pages breaks links silently otherwise.
use std::collections::HashSet;
use std::path::{Path, PathBuf};

use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};

/// GitHub's anchor for a heading's text: lower case, punctuation dropped
/// (letters, digits, `-` and `_` kept), spaces as hyphens.
fn slug(text: &str) -> String {
    text.trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// The links (and images) of a markdown text, and the anchors of its
/// headings (a repeated heading gets `-1`, `-2`, ... as on GitHub).
fn links_and_anchors(md: &str) -> (Vec<String>, HashSet<String>) {
    let mut links = Vec::new();
    let mut anchors = HashSet::new();
    let mut heading: Option<String> = None;
    for ev in Parser::new_ext(md, Options::ENABLE_TABLES) {
        match ev {
            Event::Start(Tag::Link { dest_url, .. } | Tag::Image { dest_url, .. }) => {
                links.push(dest_url.to_string())
            }
            Event::Start(Tag::Heading { .. }) => heading = Some(String::new()),
            Event::Text(t) | Event::Code(t) => {
                if let Some(h) = heading.as_mut() {
                    h.push_str(&t);
                }
            }
            Event::End(TagEnd::Heading(_)) => {
                let base = slug(&heading.take().unwrap_or_default());
                let mut a = base.clone();
                let mut n = 0;
                while !anchors.insert(a.clone()) {
                    n += 1;
                    a = format!("{base}-{n}");
                }
            }
            _ => {}
        }
    }
    (links, anchors)
}

/// What is wrong with each relative link of `file` (a path under `root`).
fn broken_links(root: &Path, file: &Path) -> Vec<String> {
    let md = std::fs::read_to_string(file).unwrap();
    let (links, own_anchors) = links_and_anchors(&md);
    let name = file
        .strip_prefix(root)
        .unwrap_or(file)
        .display()
        .to_string();
    let mut bad = Vec::new();
    for link in links {
        if link.contains("://") || link.starts_with("mailto:") {
            continue; // the network is not ours to check
        }
        let (path, fragment) = match link.split_once('#') {
            Some((p, f)) => (p, Some(f)),
            None => (link.as_str(), None),
        };
        if path.starts_with('/') {
            bad.push(format!(
                "{name}: {link}: an absolute path, outside the repository"
            ));
            continue;
        }
        let target = if path.is_empty() {
            file.to_path_buf()
        } else {
            file.parent().unwrap().join(path)
        };
        if !target.exists() {
            bad.push(format!("{name}: {link}: no such file"));
            continue;
        }
        let Some(fragment) = fragment else { continue };
        let anchors = if path.is_empty() {
            own_anchors.clone()
        } else if target.extension().is_some_and(|e| e == "md") {
            links_and_anchors(&std::fs::read_to_string(&target).unwrap()).1
        } else {
            continue; // a line anchor in a source file: GitHub's, not checked
        };
        if !anchors.contains(fragment) {
            bad.push(format!("{name}: {link}: no heading with that anchor"));
        }
    }
    bad
}

fn markdown_under(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            markdown_under(&p, out);
        } else if p.extension().is_some_and(|e| e == "md") {
            out.push(p);
        }
    }
}

#[test]
fn every_relative_link_in_the_readme_and_docs_resolves() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = vec![root.join("README.md")];
    markdown_under(&root.join("docs"), &mut files);
    files.sort();
    let mut bad = Vec::new();
    let mut checked = 0;
    for f in &files {
        checked += links_and_anchors(&std::fs::read_to_string(f).unwrap())
            .0
            .len();
        bad.extend(broken_links(root, f));
    }
    assert!(bad.is_empty(), "broken links:\n{}", bad.join("\n"));
    // the README links to the reference pages: a parser that found no links
    // would pass the check above without reading anything
    assert!(
        checked >= 20,
        "only {checked} links found in {} files",
        files.len()
    );
}

#[test]
fn the_checker_finds_a_missing_file_and_a_missing_anchor() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("other.md"),
        "# Other page\n\n## The `why` part\n",
    )
    .unwrap();
    let page = dir.path().join("page.md");
    std::fs::write(
        &page,
        "# Page\n\n[ok](other.md#the-why-part) [self](#page) [web](https://example.org/x#y)\n\
         [gone](missing.md) [no anchor](other.md#nothing) | [in a table](#nowhere) |\n\n\
         ```\n[in code](not-a-link.md)\n```\n",
    )
    .unwrap();
    let bad = broken_links(dir.path(), &page);
    assert_eq!(bad.len(), 3, "{bad:#?}");
    assert!(bad[0].contains("missing.md: no such file"), "{}", bad[0]);
    assert!(
        bad[1].contains("other.md#nothing: no heading"),
        "{}",
        bad[1]
    );
    assert!(bad[2].contains("#nowhere: no heading"), "{}", bad[2]);
}

#[test]
fn anchors_follow_githubs_rule() {
    // hand-worked from headings GitHub renders
    assert_eq!(slug("Findings: `schedtop why`"), "findings-schedtop-why");
    assert_eq!(
        slug("Quick start (Debian 12, as root)"),
        "quick-start-debian-12-as-root"
    );
    assert_eq!(
        slug("Fleet: Prometheus exporter, black-box recorder, .deb"),
        "fleet-prometheus-exporter-black-box-recorder-deb"
    );
    let (_, anchors) = links_and_anchors("# Keys\n\n## Keys\n");
    assert!(anchors.contains("keys") && anchors.contains("keys-1"));
}
