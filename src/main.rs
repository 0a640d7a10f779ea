use std::process::ExitCode;

use clap::parser::ValueSource;
use clap::FromArgMatches;

use schedtop::cli::{Cli, Command};
use schedtop::collect::{LiveOptions, LiveSource};

fn main() -> ExitCode {
    schedtop::util::stdio::fill_closed_std_fds();
    schedtop::util::heap::keep_resident_near_use();
    let matches = <Cli as clap::CommandFactory>::command().get_matches();
    let cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    // -i on the command line wins over the config file's interval
    let interval_given = matches.value_source("interval") == Some(ValueSource::CommandLine);
    if let Some(Command::Why(a)) = &cli.command {
        // its own exit status: 0 nothing wrong, 1 a warning, 2 an error
        return schedtop::why_cli::main(a);
    }
    match run(cli, interval_given) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            // one line, the whole cause chain, no backtrace
            schedtop::say!("schedtop: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli, interval_given: bool) -> anyhow::Result<()> {
    let mut interval_ns = (cli.live.interval * 1e9) as u64;
    // the live view's settings (config file, --no-mouse) before its source
    let prefs = (cli.command.is_none() && !cli.batch)
        .then(|| schedtop::prefs_cli::load(&cli.prefs, interval_given.then_some(interval_ns)));
    if let Some(p) = &prefs {
        interval_ns = p.settings.interval_ns();
    }
    for &pid in &cli.live.pids {
        if !std::path::Path::new(&format!("/proc/{pid}")).exists() {
            anyhow::bail!("no process with pid {pid}");
        }
    }
    let opts = LiveOptions {
        interval_ns,
        pid_filter: cli.live.pids.clone(),
        force_procfs: cli.live.procfs,
        require_bpf: cli.live.require_bpf,
        run_delay_waits: cli.live.run_delay_waits,
        threads: schedtop::collect::ThreadFilter::parse(
            &cli.view.users,
            cli.view.cgroup.as_deref(),
        )?,
    };
    if cli.history != schedtop::ui::history::DEFAULT_WINDOW_NS && cli.command.is_some() {
        anyhow::bail!("--history is for the live view (schedtop --history 10m)");
    }
    if cli.command.is_some() && (cli.incidents.wanted() || cli.incidents.before.is_some()) {
        anyhow::bail!(
            "--trigger and the bundle options go after the command (schedtop record --trigger EXPR)"
        );
    }
    if cli.flight.is_some() && cli.command.is_some() {
        anyhow::bail!("--flight is for the live view (schedtop --flight SECS)");
    }
    let to_stdout = match &cli.command {
        Some(Command::Doctor | Command::Completions { .. } | Command::Man) => true,
        Some(Command::Dump(_) | Command::Snapshot(_)) => true,
        None => cli.batch,
        _ => false,
    };
    if to_stdout {
        schedtop::sigpipe::end_quietly_on_closed_stdout();
    }
    match cli.command {
        Some(Command::Doctor) => schedtop::doctor::run(),
        Some(Command::Completions { shell }) => schedtop::docs::completions(shell),
        Some(Command::Man) => schedtop::docs::man(),
        Some(Command::Record(args)) => schedtop::record_cli::record(&args),
        Some(Command::Dump(args)) => schedtop::record_cli::dump(&args),
        Some(Command::Replay(args)) => schedtop::record_cli::replay(&args),
        Some(Command::Trace(t)) => schedtop::trace::run(&schedtop::trace::TraceOptions {
            duration: std::time::Duration::from_secs_f64(t.duration),
            output: t.output,
            force: t.force,
            ringbuf_bytes: t.ringbuf_mib << 20,
            pid: t.pid,
        }),
        Some(Command::Snapshot(args)) if args.diff.is_some() => schedtop::snapshot_diff::run(&args),
        Some(Command::Snapshot(args)) => schedtop::snapshot::run(&args),
        Some(Command::Why(_)) => unreachable!("handled in main"),
        Some(Command::Diff(a)) => schedtop::diff_cli::run(&a),
        Some(Command::Serve(a)) => schedtop::serve::run_with(
            &schedtop::serve::ServeOptions {
                listen: a.listen,
                live: LiveOptions {
                    interval_ns: (a.interval * 1e9) as u64,
                    pid_filter: a.pids,
                    force_procfs: a.procfs,
                    require_bpf: a.require_bpf,
                    run_delay_waits: a.run_delay_waits,
                    threads: Default::default(),
                },
                export: schedtop::export::openmetrics::ExportOptions {
                    top: a.top,
                    per_thread: a.per_thread,
                    max_series: a.max_series,
                },
                http: Default::default(),
                web_config: a.web_config,
                black_box: match a.record_dir {
                    Some(dir) => Some((dir, schedtop::record_cli::black_box_policy(&a.black_box)?)),
                    None if a.black_box.any() => anyhow::bail!(
                        "--rotate, --retain, --retain-size and --keep-free are for --record-dir DIR"
                    ),
                    None => None,
                },
            },
            schedtop::incident_cli::Headless::from_args(&a.incidents)?
                .into_iter()
                .map(|w| Box::new(w) as Box<dyn schedtop::collect::sink::Sink + Send>)
                .collect(),
        ),
        None if !cli.batch => schedtop::ui::run::run_live_configured(
            &opts,
            &schedtop::ui::screenshot_key::ScreenshotConfig::new(
                &cli.screenshot.screenshot_formats,
                &cli.screenshot.screenshot_dir,
            )?,
            cli.flight.map(std::time::Duration::from_secs_f64),
            cli.history,
            schedtop::incident_cli::live_watch(&cli.incidents, cli.history)?,
            prefs.unwrap_or_else(schedtop::ui::config_file::Loaded::defaults),
            cli.view.refresh.map(std::time::Duration::from_secs_f64),
        ),
        None => {
            if cli.incidents.wanted() {
                anyhow::bail!("--trigger is for the live view, record and serve, not --batch");
            }
            // not used in batch mode, but not accepted unchecked either
            schedtop::ui::screenshot_key::ScreenshotConfig::new(
                &cli.screenshot.screenshot_formats,
                &cli.screenshot.screenshot_dir,
            )?;
            let mut source = LiveSource::open(&opts)?;
            if let Some(reason) = &source.host().degraded_reason {
                schedtop::say!("schedtop: {reason}");
            }
            schedtop::batch::run(&mut source, interval_ns, cli.count)
        }
    }
}
