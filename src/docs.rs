//! Shell completions and the man page, generated from the clap definitions
//! so they never disagree with the real options.
use std::io::Write;

use clap::CommandFactory;

use crate::cli::Cli;

pub fn completions(shell: clap_complete::Shell) -> anyhow::Result<()> {
    let mut cmd = Cli::command();
    clap_complete::generate(shell, &mut cmd, "schedtop", &mut std::io::stdout());
    Ok(())
}

pub fn man() -> anyhow::Result<()> {
    let mut out = Vec::new();
    let mut cmd = Cli::command();
    cmd.build();
    clap_mangen::Man::new(cmd.clone()).render(&mut out)?;
    // each subcommand's options in the same page (clap_mangen renders only
    // the top level): a section per subcommand, its headings as subsections
    for sub in cmd
        .get_subcommands()
        .filter(|c| !c.is_hide_set() && c.get_name() != "help")
    {
        let name = format!("schedtop {}", sub.get_name()).to_uppercase();
        writeln!(out, ".SH \"{name}\"")?;
        if let Some(about) = sub.get_about() {
            writeln!(out, "{}", about.to_string().replace('-', "\\-"))?;
        }
        let mut opts = Vec::new();
        clap_mangen::Man::new(sub.clone()).render_options_section(&mut opts)?;
        for line in String::from_utf8_lossy(&opts).lines() {
            match line.strip_prefix(".SH ") {
                Some(h) => writeln!(out, ".SS {h}")?,
                None => writeln!(out, "{line}")?,
            }
        }
    }
    extra_sections(&mut out)?;
    std::io::stdout().write_all(&out)?;
    Ok(())
}

/// Text as roff: backslashes and hyphens escaped, a leading `.` or `'`
/// (a request to roff) made literal.
fn roff(text: &str) -> String {
    let s = text.replace('\\', "\\e").replace('-', "\\-");
    if s.starts_with('.') || s.starts_with('\'') {
        format!("\\&{s}")
    } else {
        s
    }
}

/// What the options cannot say: the live view's keys and columns (from the
/// tables the help overlay shows, so the page never lags behind them), the
/// environment, the exit status and where the longer documentation is.
fn extra_sections(out: &mut Vec<u8>) -> std::io::Result<()> {
    writeln!(out, ".SH KEYS")?;
    writeln!(
        out,
        "In the live view and in replay; ? shows the same list."
    )?;
    for (key, what) in crate::ui::keys::HELP {
        if key.is_empty() {
            // a second line of the key above
            writeln!(out, ".br\n{}", roff(what))?;
        } else {
            writeln!(out, ".TP\n\\fB{}\\fR\n{}", roff(key), roff(what))?;
        }
    }
    writeln!(out, ".SH COLUMNS")?;
    let titles: Vec<&str> = crate::model::metrics::METRICS
        .iter()
        .filter_map(|m| m.column.map(|c| c.title))
        .collect();
    writeln!(
        out,
        "The threads and processes tables: {}. Columns that do not fit are dropped, least important first.",
        roff(&titles.join(", "))
    )?;
    for note in crate::ui::columns::help_notes() {
        writeln!(out, ".IP \\(bu 2\n{}", roff(note))?;
    }
    writeln!(out, ".SH ENVIRONMENT")?;
    for (var, what) in ENVIRONMENT {
        writeln!(out, ".TP\n\\fB{var}\\fR\n{}", roff(what))?;
    }
    writeln!(out, ".SH EXIT STATUS")?;
    for (command, codes) in EXIT_STATUS {
        if command.is_empty() {
            writeln!(out, "Every command but those named below:")?;
        } else {
            writeln!(out, ".SS \"schedtop {command}\"")?;
        }
        for (code, what) in *codes {
            writeln!(out, ".TP\n\\fB{}\\fR\n{}", roff(code), roff(what))?;
        }
    }
    writeln!(out, ".SH SEE ALSO")?;
    writeln!(
        out,
        "{}",
        roff("README.md and docs/ in the source: the columns and the kernel facts behind them (docs/metrics.md), the findings' rules (docs/findings.md), the JSON and CSV schemas, /metrics, the recording format, the kernels, benchmarks.")
    )?;
    Ok(())
}

/// Exit statuses as the code returns them: every command's (""), then the
/// commands whose codes mean something else, each listing all of its own.
/// tests/cli/cli_docs.rs checks the codes in src/ and the ones each
/// command really exits with against the page.
pub const EXIT_STATUS: &[(&str, &[(&str, &str)])] = &[
    (
        "",
        &[
            ("0", "success; record, serve and trace also end with 0 when stopped by SIGINT or SIGTERM (record by SIGHUP too), their files complete"),
            ("1", "an error, said in one line on stderr"),
            ("2", "a command line the parser refused (its message on stderr), or stdout could not be written for another reason than a closed pipe"),
            ("128+N", "ended by signal N: the live view re-raises SIGHUP, SIGINT, SIGQUIT or SIGTERM once the terminal is restored, and exits 129 (as SIGHUP would) when its terminal hangs up; a command printing to a pipe whose reader went away ends by SIGPIPE (141), as cat does"),
        ],
    ),
    (
        "diff",
        &[
            ("0", "the comparison was printed, however much the two windows differ (a difference is not a failure)"),
            ("1", "an error, said in one line on stderr"),
            ("2", "a command line the parser refused"),
        ],
    ),
    (
        "why",
        &[
            ("0", "nothing wrong was found (notes only, or no finding)"),
            ("1", "a finding is a warning"),
            ("2", "an error (one line on stderr), or a command line the parser refused"),
        ],
    ),
];

/// The environment variables schedtop reads (tests' own knobs left out).
const ENVIRONMENT: &[(&str, &str)] = &[
    (
        "SCHEDTOP_WAKERS=1",
        "count who woke each thread (WOKEN BY); off by default: one more program per wakeup",
    ),
    (
        "SCHEDTOP_IRQ_TIME=1",
        "measure hardirq and softirq time per thread and CPU (STOLEN%); off by default",
    ),
    (
        "SCHEDTOP_READ_EVERY_TASK=1",
        "read every thread at every drain instead of only those that changed",
    ),
    ("SCHEDTOP_BPF_DEBUG=1", "show libbpf's own messages"),
    (
        "NO_COLOR",
        "start the live view in the monochrome theme unless the config file chooses one",
    ),
    (
        "XDG_CONFIG_HOME",
        "where the live view's settings are kept: $XDG_CONFIG_HOME/schedtop/config.toml (else ~/.config)",
    ),
];
