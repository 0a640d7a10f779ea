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
    clap_mangen::Man::new(Cli::command()).render(&mut out)?;
    std::io::stdout().write_all(&out)?;
    Ok(())
}
