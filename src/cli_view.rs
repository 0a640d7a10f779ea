//! The live view's and `--batch`'s thread filters and the live view's
//! drawing pace (flattened into the top-level command line).
use clap::Args;

#[derive(Args, Debug, Clone, Default)]
pub struct ViewArgs {
    /// Only threads of this user, by name or uid (repeatable)
    #[arg(short = 'u', long = "user", value_name = "USER")]
    pub users: Vec<String>,
    /// Only threads in this cgroup or below it (a path such as /system.slice)
    #[arg(long = "cgroup", value_name = "PATH")]
    pub cgroup: Option<String>,
    /// Live view: redraw every SECS seconds (default: each sample); slower
    /// than --interval sends fewer bytes over a slow link
    #[arg(long, value_name = "SECS", value_parser = parse_refresh, conflicts_with = "batch")]
    pub refresh: Option<f64>,
}

fn parse_refresh(s: &str) -> Result<f64, String> {
    let v: f64 = s
        .parse()
        .map_err(|_| format!("{s:?} is not a number of seconds"))?;
    if !(0.1..=3600.0).contains(&v) {
        return Err("between 0.1 and 3600 seconds".into());
    }
    Ok(v)
}
