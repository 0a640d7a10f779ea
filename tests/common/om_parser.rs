//! The exposition as the strict OpenMetrics parser (openmetrics-parser)
//! can read it.

/// openmetrics-parser 0.5 refuses `# UNIT` on histograms, which the
/// OpenMetrics spec allows (only info and stateset families must not have
/// one; Prometheus and the Python reference parser accept them, see
/// tests/serve_prometheus.rs): those lines are left out for it.
pub fn for_crate_parser(om: &str) -> String {
    let histograms: Vec<&str> = om
        .lines()
        .filter_map(|l| l.strip_prefix("# TYPE ")?.strip_suffix(" histogram"))
        .collect();
    om.lines()
        .filter(|l| {
            !l.strip_prefix("# UNIT ")
                .and_then(|r| r.split(' ').next())
                .is_some_and(|n| histograms.contains(&n))
        })
        .map(|l| format!("{l}\n"))
        .collect()
}
