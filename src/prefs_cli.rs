//! The live view's settings at start: the config file (`--config FILE`,
//! else the XDG one; `--no-config`: none), then what the command line and
//! NO_COLOR say over it.
use clap::Args;

use crate::ui::config_file::{self, Loaded};
use crate::ui::palette;

/// `--config`, `--no-config`, `--no-mouse`, `--exact`.
#[derive(Args, Debug, Clone, Default)]
pub struct PrefsArgs {
    /// Live view: read settings from FILE and save them there (default:
    /// $XDG_CONFIG_HOME/schedtop/config.toml, else ~/.config/schedtop/config.toml)
    #[arg(long, value_name = "FILE", conflicts_with = "no_config")]
    pub config: Option<std::path::PathBuf>,
    /// Live view: no config file: the default settings, nothing saved
    #[arg(long)]
    pub no_config: bool,
    /// Live view: leave the mouse to the terminal (plain drag selects text)
    #[arg(long)]
    pub no_mouse: bool,
    /// Live view: draw every figure exactly at each refresh (default: a
    /// figure that moved by 5 % or less keeps the value drawn before)
    #[arg(long)]
    pub exact: bool,
}

/// The settings the live view starts with. `interval_ns`: the `-i` given on
/// the command line, if it was. A broken file is one line on stderr (and on
/// the status line) and the defaults.
pub fn load(args: &PrefsArgs, interval_ns: Option<u64>) -> Loaded {
    let path = if args.no_config {
        None
    } else {
        args.config
            .clone()
            .or_else(|| config_file::default_path(|k| std::env::var_os(k)))
    };
    let mut l = match path {
        Some(p) => config_file::load(&p),
        None => Loaded::defaults(),
    };
    if let Some(w) = &l.warning {
        crate::say!("schedtop: {w}");
    }
    let file = l.settings.clone();
    let chosen = l.theme_chosen.then_some(l.settings.theme);
    l.settings.theme = palette::start_theme(chosen, std::env::var_os("NO_COLOR").as_deref());
    if args.no_mouse {
        l.settings.mouse = false;
    }
    if args.exact {
        l.settings.exact_figures = true;
    }
    if let Some(ns) = interval_ns {
        l.settings.interval_ms = (ns / 1_000_000).max(1);
    }
    if let Some(store) = l.store.as_mut() {
        store.started(file, &l.settings);
    }
    l
}
