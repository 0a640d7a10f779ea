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
    std::io::stdout().write_all(&out)?;
    Ok(())
}
