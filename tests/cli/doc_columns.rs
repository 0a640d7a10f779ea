//! Every column of the metric table is defined in docs/metrics.md: a new
//! column appears on screen by itself, and its definition must not stay
//! behind.
use schedtop::model::metrics::METRICS;

#[test]
fn every_table_column_is_defined_in_the_docs() {
    let doc =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/metrics.md")).unwrap();
    let titles: Vec<&str> = METRICS
        .iter()
        .filter_map(|m| m.column.map(|c| c.title))
        .collect();
    assert!(titles.len() >= 10, "{titles:?}");
    let missing: Vec<&str> = titles
        .iter()
        .copied()
        .filter(|t| !doc.contains(&format!("| `{t}` |")))
        .collect();
    assert!(
        missing.is_empty(),
        "docs/metrics.md has no row for the columns {missing:?}"
    );
}
