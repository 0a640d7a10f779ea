//! Command line (clap derive). `schedtop` alone opens the live view.
use clap::{Args, Parser, Subcommand};

#[derive(Parser, Debug)]
#[command(
    name = "schedtop",
    version,
    long_version = concat!(env!("CARGO_PKG_VERSION"), " (commit ", env!("SCHEDTOP_GIT_COMMIT"), ")\nrun `schedtop doctor` for what this kernel offers"),
    about = "Live view of what the Linux scheduler does to every thread",
    long_about = "Live view of what the Linux scheduler does to every thread: voluntary and \
involuntary switches, on-CPU slices, run-queue waits, migrations across CPUs and NUMA nodes. \
Runs with BPF as root; falls back to /proc counters otherwise."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    #[command(flatten)]
    pub live: LiveArgs,
    #[command(flatten)]
    pub screenshot: ScreenshotArgs,
    /// Print one JSON object per interval (JSON Lines) instead of the live view
    #[arg(short = 'b', long)]
    pub batch: bool,
    /// Number of intervals to print in batch mode (default: until interrupted)
    #[arg(short = 'n', long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub count: Option<u64>,
    /// Live view: keep the last SECS seconds of scheduler events in memory;
    /// the W key writes them as a Perfetto trace in --screenshot-dir (needs root)
    #[arg(long, value_name = "SECS", value_parser = parse_flight, conflicts_with = "batch")]
    pub flight: Option<f64>,
    /// Live view: keep this much of the past in memory (e.g. 10m, 90s; 0 turns
    /// it off) for T / j to rewind through, bounded to 256 MiB of
    /// compressed Samples
    #[arg(long, value_name = "DURATION", default_value = "10m", value_parser = parse_history, conflicts_with = "batch")]
    pub history: u64,
    #[command(flatten)]
    pub incidents: TriggerArgs,
    #[command(flatten)]
    pub prefs: crate::prefs_cli::PrefsArgs,
    #[command(flatten)]
    pub view: crate::cli_view::ViewArgs,
}

/// `--trigger` and where incident bundles go (live, record, serve).
#[derive(Args, Debug, Clone, Default)]
pub struct TriggerArgs {
    /// Write an incident bundle when this holds, e.g. 'proc:wait_p99>20ms',
    /// 'cpu:rq_len>8 for 3s', 'cgroup:throttled_ms_per_s>100' (repeatable;
    /// SIGUSR1 fires one by hand, and the i key in the live view)
    #[arg(long = "trigger", value_name = "EXPR", value_parser = parse_trigger)]
    pub triggers: Vec<crate::model::trigger::Trigger>,
    /// Where incident bundles go (schedtop-incident-HOST-TIME/) [default: .]
    #[arg(long, value_name = "DIR")]
    pub incident_dir: Option<std::path::PathBuf>,
    /// A bundle's recording goes on this long after the firing [default: 30s]
    #[arg(long, value_name = "D", value_parser = parse_span)]
    pub after: Option<u64>,
    /// No new bundle this long after one [default: 5m]
    #[arg(long, value_name = "D", value_parser = parse_span)]
    pub cooldown: Option<u64>,
    /// At most this many bundles in the incident directory; beyond, the oldest goes [default: 20]
    #[arg(long, value_name = "N")]
    pub max_incidents: Option<u32>,
    /// At most this many bytes of bundles in the incident directory, flight traces included; beyond, the oldest goes (500M, 2G) [default: 1G]
    #[arg(long, value_name = "SIZE", value_parser = parse_bytes)]
    pub incident_max_size: Option<u64>,
    /// record, serve: keep this much of the past in memory for a bundle's
    /// recording (the live view keeps --history) [default: 2m]
    #[arg(long, value_name = "D", value_parser = parse_span)]
    pub before: Option<u64>,
}

impl TriggerArgs {
    /// Whether anything asks for incident bundles (headless modes).
    pub fn wanted(&self) -> bool {
        !self.triggers.is_empty() || self.incident_dir.is_some()
    }
}

fn parse_trigger(s: &str) -> Result<crate::model::trigger::Trigger, String> {
    crate::model::trigger::parse(s).map_err(|e| e.to_string())
}

/// A duration up to a day, in ns.
fn parse_span(s: &str) -> Result<u64, String> {
    let v = crate::record::timeexpr::parse_duration(s)?;
    if v > 86_400_000_000_000 {
        return Err("at most a day (24h)".into());
    }
    Ok(v)
}

fn parse_bytes(s: &str) -> Result<u64, String> {
    crate::record::timeexpr::parse_size(s)
}

/// `--history`: a duration up to a day, in ns (0: off).
fn parse_history(s: &str) -> Result<u64, String> {
    let v = crate::record::timeexpr::parse_duration(s)?;
    if v > 86_400_000_000_000 {
        return Err("--history must be at most a day (24h)".into());
    }
    Ok(v)
}

fn parse_flight(s: &str) -> Result<f64, String> {
    let v: f64 = s
        .parse()
        .map_err(|_| format!("{s:?} is not a number of seconds"))?;
    if !(1.0..=3600.0).contains(&v) {
        return Err("--flight must be between 1 and 3600 seconds".into());
    }
    Ok(v)
}

#[derive(Args, Debug, Clone)]
pub struct LiveArgs {
    /// Interval between samples, in seconds
    #[arg(short = 'i', long, value_name = "SECS", default_value_t = 1.0, value_parser = parse_interval)]
    pub interval: f64,
    /// Only threads of this process (repeatable)
    #[arg(short = 'p', long = "pid", value_name = "PID")]
    pub pids: Vec<u32>,
    /// Read /proc only, even as root (no histograms or migrations)
    #[arg(long)]
    pub procfs: bool,
    /// Fail instead of falling back to /proc when BPF cannot load
    #[arg(long)]
    pub require_bpf: bool,
    /// Take run-queue waits from the kernel's run_delay instead of timing
    /// them from the wakeup: cheaper per switch, but a wait whose wakeup
    /// preempted the CPU's current task then reads 0
    #[arg(long)]
    pub run_delay_waits: bool,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Show what this kernel offers schedtop (BPF, BTF, perf events) for bug reports
    Doctor,
    /// Print a shell completion script: schedtop completions bash > /etc/bash_completion.d/schedtop
    Completions {
        /// bash, zsh, fish, elvish or powershell
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff): schedtop man > /usr/local/share/man/man1/schedtop.1
    Man,
    /// Record Samples to a file, headless (e.g. from a systemd unit)
    Record(RecordArgs),
    /// Export a recording as per-thread CSV rows or JSON Lines (the batch schema)
    Dump(DumpArgs),
    /// Show a recording in the live views, at the recorded pace
    Replay(ReplayArgs),
    /// Render one screen to a file, headless: from this machine (after --duration) or from a recording (--from FILE --at T)
    Snapshot(SnapshotArgs),
    /// Export scheduler metrics for Prometheus (OpenMetrics at http://127.0.0.1:9717/metrics)
    Serve(ServeArgs),
    /// Record every scheduler event (switch, wakeup, migration) for SECS seconds
    /// into a Perfetto trace (open it in ui.perfetto.dev); needs root
    Trace(TraceArgs),
    /// Say why: watch for a while (-d, default 10s) or read a recording, and print
    /// what troubles the scheduler here, ranked by what it costs. Exit status: 0
    /// nothing wrong, 1 a warning was found, 2 an error
    Why(WhyArgs),
    /// Compare two windows: BEFORE and AFTER are recordings, directories of
    /// recordings, or - (this machine now, for -d); figures are rates over
    /// each window, matched by command, name and path
    Diff(DiffArgs),
}

/// `schedtop diff`: two windows compared (model/compare.rs).
#[derive(Args, Debug, Clone)]
pub struct DiffArgs {
    /// A recording, a directory of recordings, or - for this machine now
    #[arg(value_name = "BEFORE", allow_hyphen_values = true)]
    pub before: String,
    /// Same forms as BEFORE
    #[arg(value_name = "AFTER", allow_hyphen_values = true)]
    pub after: String,
    /// Each recording's window starts here (2026-11-21T23:15:00Z, 23:15:00, -5m, +90s); default: its first Sample
    #[arg(long, value_name = "T", allow_hyphen_values = true)]
    pub from: Option<String>,
    /// Each recording's window ends here (same forms); default: its last Sample
    #[arg(long, value_name = "T", allow_hyphen_values = true)]
    pub to: Option<String>,
    /// The window of -d ending here, in each recording (instead of --from/--to)
    #[arg(long, value_name = "T", allow_hyphen_values = true, conflicts_with_all = ["from", "to", "before_from", "before_to", "after_from", "after_to"])]
    pub at: Option<String>,
    /// BEFORE's window only (over --from/--to)
    #[arg(long, value_name = "T", allow_hyphen_values = true)]
    pub before_from: Option<String>,
    /// BEFORE's window only (over --from/--to)
    #[arg(long, value_name = "T", allow_hyphen_values = true)]
    pub before_to: Option<String>,
    /// AFTER's window only (over --from/--to)
    #[arg(long, value_name = "T", allow_hyphen_values = true)]
    pub after_from: Option<String>,
    /// AFTER's window only (over --from/--to)
    #[arg(long, value_name = "T", allow_hyphen_values = true)]
    pub after_to: Option<String>,
    /// How long to watch a live side (-), and the window length with --at: 10s, 1m
    #[arg(short = 'd', long = "duration", value_name = "D", default_value = "10s", value_parser = parse_why_window)]
    pub duration: u64,
    /// Pair two processes by hand: pid:BEFORE=pid:AFTER (repeatable)
    #[arg(long = "match", value_name = "PAIR", value_parser = crate::model::compare::parse_pin)]
    pub pins: Vec<crate::model::compare::Pin>,
    /// JSON Lines: a summary object, then one object per process, thread, cgroup and CPU
    #[arg(short = 'b', long, conflicts_with = "csv")]
    pub batch: bool,
    /// CSV: one row per process, thread, cgroup and CPU
    #[arg(long)]
    pub csv: bool,
    #[command(flatten)]
    pub live: LiveArgs,
}

/// `schedtop why`: findings over a window.
#[derive(Args, Debug, Clone)]
pub struct WhyArgs {
    /// How long to watch (with --from: the window ending at --at): 10s, 1m, 500ms
    #[arg(short = 'd', long = "duration", value_name = "D", default_value = "10s", value_parser = parse_why_window)]
    pub duration: u64,
    /// Only findings about threads in this cgroup or below it (a path as the
    /// cgroups view shows it, or under this machine's cgroupfs mount)
    #[arg(long, value_name = "PATH")]
    pub cgroup: Option<String>,
    /// One JSON object: {"findings": [{"kind", "severity", "subject", "impact", "evidence", "text"}, ...]}
    #[arg(long)]
    pub json: bool,
    /// Judge a window of this recording (or directory of recordings) instead of this machine
    #[arg(long, value_name = "FILE|DIR")]
    pub from: Option<std::path::PathBuf>,
    /// With --from: the end of the window (2026-11-21T23:15:00Z, 23:15:00, -5m, +90s); default: the end
    #[arg(long, value_name = "T", allow_hyphen_values = true, requires = "from")]
    pub at: Option<String>,
    #[command(flatten)]
    pub live: LiveArgs,
}

#[derive(Args, Debug, Clone)]
pub struct TraceArgs {
    /// How long to record, in seconds
    #[arg(short = 'd', long = "duration", value_name = "SECS", value_parser = parse_trace_duration)]
    pub duration: f64,
    /// The trace file to write (Perfetto protobuf)
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: std::path::PathBuf,
    /// Replace FILE if it exists (never through a symlink)
    #[arg(long)]
    pub force: bool,
    /// Kernel ring buffer size in MiB (a power of two); events that do not fit are counted as dropped
    #[arg(long, value_name = "MIB", default_value_t = 8, value_parser = parse_ringbuf_mib)]
    pub ringbuf_mib: u32,
    /// Only the threads of this process (filtered in the kernel)
    #[arg(short = 'p', long = "pid", value_name = "PID")]
    pub pid: Option<u32>,
}

/// `why -d`: at least 10 ms, at most a day, in ns.
fn parse_why_window(s: &str) -> Result<u64, String> {
    let v = crate::record::timeexpr::parse_duration(s)?;
    if !(10_000_000..=86_400_000_000_000).contains(&v) {
        return Err("the window must be between 10ms and a day (24h)".into());
    }
    Ok(v)
}

fn parse_trace_duration(s: &str) -> Result<f64, String> {
    let v: f64 = s
        .parse()
        .map_err(|_| format!("{s:?} is not a number of seconds"))?;
    if !(0.01..=86400.0).contains(&v) {
        return Err("duration must be between 0.01 and 86400 seconds".into());
    }
    Ok(v)
}

fn parse_ringbuf_mib(s: &str) -> Result<u32, String> {
    let v: u32 = s
        .parse()
        .map_err(|_| format!("{s:?} is not a number of MiB"))?;
    if !v.is_power_of_two() || v > 1024 {
        return Err("ring buffer size must be a power of two from 1 to 1024 MiB".into());
    }
    Ok(v)
}

fn parse_interval(s: &str) -> Result<f64, String> {
    let v: f64 = s
        .parse()
        .map_err(|_| format!("{s:?} is not a number of seconds"))?;
    if !(0.05..=3600.0).contains(&v) {
        return Err("interval must be between 0.05 and 3600 seconds".into());
    }
    Ok(v)
}

#[derive(Args, Debug, Clone)]
pub struct RecordArgs {
    /// The recording to write (created 0600; never through a symlink)
    #[arg(
        short = 'o',
        long = "output",
        value_name = "FILE",
        required_unless_present = "dir"
    )]
    pub output: Option<std::path::PathBuf>,
    /// Record into this directory until stopped: a new file every --rotate, the oldest deleted beyond --retain/--retain-size
    #[arg(long, value_name = "DIR", conflicts_with_all = ["output", "max_size", "append", "force"])]
    pub dir: Option<std::path::PathBuf>,
    #[command(flatten)]
    pub black_box: BlackBoxArgs,
    #[command(flatten)]
    pub live: LiveArgs,
    /// Stop after this long: 90s, 30m, 12h, 1h30m, or seconds
    #[arg(long, value_name = "D")]
    pub duration: Option<String>,
    /// Stop before the file grows past this size: 500M, 2G, or bytes
    #[arg(long, value_name = "SIZE")]
    pub max_size: Option<String>,
    /// Add to an existing recording (a new segment) instead of refusing
    #[arg(long, conflicts_with = "force")]
    pub append: bool,
    /// Replace an existing file
    #[arg(long)]
    pub force: bool,
    #[command(flatten)]
    pub incidents: TriggerArgs,
}

#[derive(Args, Debug, Clone)]
pub struct DumpArgs {
    /// A recording made by `schedtop record`, or a directory of them (`record --dir`)
    #[arg(value_name = "FILE|DIR")]
    pub file: std::path::PathBuf,
    /// csv (one row per thread and interval), json (one object per interval) or
    /// cgroups-csv (one row per cgroup and interval)
    #[arg(long, value_name = "FORMAT", default_value = "json")]
    pub format: String,
    /// Start at: 2026-11-21T23:15:00Z, 23:15:00 (local), -5m (before the end), +90s (after the start)
    #[arg(long, value_name = "T", allow_hyphen_values = true)]
    pub from: Option<String>,
    /// End at (same forms as --from)
    #[arg(long, value_name = "T", allow_hyphen_values = true)]
    pub to: Option<String>,
    /// Only threads of this process (or this thread id); repeatable
    #[arg(short = 'p', long = "pid", value_name = "PID")]
    pub pids: Vec<u32>,
}

#[derive(Args, Debug, Clone)]
pub struct ReplayArgs {
    /// A recording made by `schedtop record`, or a directory of them (`record --dir`)
    #[arg(value_name = "FILE|DIR")]
    pub file: std::path::PathBuf,
    /// Start at (same forms as `dump --from`)
    #[arg(long, value_name = "T", allow_hyphen_values = true)]
    pub from: Option<String>,
    /// Open at this moment, paused: 23:15:00, 2026-11-21T23:15:00Z, -5m (before the end), +90s (after the start)
    #[arg(
        long,
        value_name = "T",
        allow_hyphen_values = true,
        conflicts_with = "from"
    )]
    pub at: Option<String>,
    /// Playback speed: 2 plays twice as fast as recorded (in the view: x, + and - pick x1, x10, x100)
    #[arg(long, value_name = "X", default_value = "1")]
    pub speed: String,
    #[command(flatten)]
    pub screenshot: ScreenshotArgs,
}

/// Where the `s` key saves screenshots of the live or replay view.
#[derive(Args, Debug, Clone)]
pub struct ScreenshotArgs {
    /// Screenshot format(s) the s key saves: txt, ansi, html, svg (repeatable or comma-separated)
    #[arg(
        long = "screenshot-format",
        value_name = "FMT",
        value_delimiter = ',',
        default_value = "svg,txt",
        value_parser = parse_screenshot_format
    )]
    pub screenshot_formats: Vec<crate::export::screenshot::Format>,
    /// Directory the s key saves screenshots in
    #[arg(long, value_name = "DIR", default_value = ".")]
    pub screenshot_dir: std::path::PathBuf,
}

fn parse_screenshot_format(s: &str) -> Result<crate::export::screenshot::Format, String> {
    s.trim().parse()
}

/// `schedtop snapshot`: one screen, rendered to a file without a terminal.
#[derive(Args, Debug, Clone)]
pub struct SnapshotArgs {
    /// threads, processes, cpus, numa, detail (the selected thread's histograms) or cgroups
    #[arg(long, value_name = "VIEW", default_value = "threads")]
    pub view: String,
    /// Screen size, COLSxROWS
    #[arg(long, value_name = "WxH", default_value = "160x50")]
    pub size: String,
    /// txt, ansi, html or svg (default: from the extension of FILE, else svg)
    #[arg(long, value_name = "FORMAT")]
    pub format: Option<String>,
    /// The file to write (created, never through a symlink); without it, stdout
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<std::path::PathBuf>,
    /// Replace FILE if it is an existing regular file
    #[arg(long)]
    pub force: bool,
    /// Take the screen from this recording (or directory of recordings) instead of this machine
    #[arg(long, value_name = "FILE|DIR")]
    pub from: Option<std::path::PathBuf>,
    /// With --from: the moment to show (2026-11-21T23:15:00Z, 23:15:00, -5m, +90s); default: the end
    #[arg(long, value_name = "T", allow_hyphen_values = true, requires = "from")]
    pub at: Option<String>,
    /// Live: collect this long before rendering (at least two Samples): 2s, 500ms, 1m
    #[arg(long, value_name = "D")]
    pub duration: Option<String>,
    /// Select this row: a thread/process id, or the first whose name contains the text
    #[arg(long, value_name = "ID|NAME")]
    pub select: Option<String>,
    /// A comparison screen of two recordings (as `schedtop diff BEFORE AFTER` shows it)
    #[arg(long, num_args = 2, value_names = ["BEFORE", "AFTER"], conflicts_with_all = ["from", "at", "duration"])]
    pub diff: Option<Vec<std::path::PathBuf>>,
    #[command(flatten)]
    pub live: LiveArgs,
}

/// `schedtop serve`: an OpenMetrics exporter.
#[derive(Args, Debug, Clone)]
pub struct ServeArgs {
    /// Also record into this directory as `record --dir` does (the black
    /// box), from the same Samples: one process, one set of probes
    #[arg(long, value_name = "DIR")]
    pub record_dir: Option<std::path::PathBuf>,
    #[command(flatten)]
    pub black_box: BlackBoxArgs,
    /// Address to listen on (HOST:PORT)
    #[arg(long, value_name = "ADDR", default_value = crate::serve::DEFAULT_LISTEN)]
    pub listen: String,
    /// TLS and basic-auth users, in the web-config YAML of Prometheus's
    /// exporters (tls_server_config: cert_file, key_file; basic_auth_users:
    /// user: bcrypt hash)
    #[arg(long, value_name = "FILE")]
    pub web_config: Option<std::path::PathBuf>,
    /// Interval between Samples, in seconds; scrapes read the newest one
    #[arg(short = 'i', long, value_name = "SECS", default_value_t = 5.0, value_parser = parse_interval)]
    pub interval: f64,
    /// Export the N processes (with --per-thread: also the N threads) with the most switches per second
    #[arg(long, value_name = "N", default_value_t = 20)]
    pub top: usize,
    /// Also export per-thread series (the --top N threads)
    #[arg(long)]
    pub per_thread: bool,
    /// At most this many series per scrape; what is left out is counted in schedtop_omitted
    #[arg(long, value_name = "N", default_value_t = 10_000)]
    pub max_series: usize,
    /// Only threads of this process (repeatable)
    #[arg(short = 'p', long = "pid", value_name = "PID")]
    pub pids: Vec<u32>,
    /// Read /proc only, even as root (no histograms or migrations)
    #[arg(long)]
    pub procfs: bool,
    /// Fail instead of falling back to /proc when BPF cannot load
    #[arg(long)]
    pub require_bpf: bool,
    #[command(flatten)]
    pub incidents: TriggerArgs,
    /// Take run-queue waits from the kernel's run_delay instead of timing
    /// them from the wakeup: cheaper per switch, but a wait whose wakeup
    /// preempted the CPU's current task then reads 0
    #[arg(long)]
    pub run_delay_waits: bool,
}

/// How a black box (`record --dir`, `serve --record-dir`) rotates and keeps
/// its files.
#[derive(Args, Debug, Clone, Default)]
pub struct BlackBoxArgs {
    /// Black box: start a new file this often (1h, 30m, 5s) [default: 1h]
    #[arg(long, value_name = "D")]
    pub rotate: Option<String>,
    /// Black box: delete its files whose last Sample is longer ago than this (7d, 12h)
    #[arg(long, value_name = "D")]
    pub retain: Option<String>,
    /// Black box: keep its own files under this size (2G, 500M)
    #[arg(long, value_name = "SIZE")]
    pub retain_size: Option<String>,
    /// Black box: keep this much of the filesystem free (2G, 15%, 0 for none), removing its oldest files and pausing when that is not enough [default: the larger of 15% and 1G, at most 4G and a quarter of the filesystem]
    #[arg(long, value_name = "SIZE|PCT")]
    pub keep_free: Option<String>,
}

impl BlackBoxArgs {
    pub fn any(&self) -> bool {
        self.rotate.is_some()
            || self.retain.is_some()
            || self.retain_size.is_some()
            || self.keep_free.is_some()
    }
}
