//! Ways out of schedtop other than the terminal.
pub mod cgroup_csv;
pub mod csv_field;
pub mod dump;
pub mod flight_ring;
pub mod incident;
pub mod incident_summary;
pub mod incident_writer;
pub mod json;
pub mod openmetrics;
pub mod openmetrics_cgroups;
pub mod openmetrics_encode;
pub mod openmetrics_levels;
pub mod openmetrics_totals;
pub mod perfetto;
pub mod screenshot;
pub mod why_csv;
pub mod why_json;
