//! Completions and man page come from the clap definitions.
use std::process::Command;

use crate::common::skip;

fn run(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_schedtop"))
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn completions_know_the_subcommands_and_options() {
    let bash = run(&["completions", "bash"]);
    for word in [
        "record",
        "replay",
        "dump",
        "trace",
        "doctor",
        "--batch",
        "--interval",
        "--pid",
    ] {
        assert!(bash.contains(word), "bash completion lacks {word}");
    }
    let zsh = run(&["completions", "zsh"]);
    assert!(zsh.starts_with("#compdef schedtop"));
    let fish = run(&["completions", "fish"]);
    assert!(fish.contains("complete -c schedtop"));
}

#[test]
fn man_page_is_roff_with_the_options() {
    let man = run(&["man"]);
    assert!(
        man.starts_with(".ie") || man.contains(".TH schedtop"),
        "{}",
        &man[..200]
    );
    assert!(man.contains(".TH schedtop 1"));
    assert!(man.contains("\\-\\-batch") && man.contains("\\-\\-interval"));
    // every subcommand's options, not only the top level's
    for opt in [
        "\\-\\-keep\\-free",
        "\\-\\-retain\\-size",
        "\\-\\-rotate",
        "\\-\\-listen",
    ] {
        assert!(man.contains(opt), "the man page lacks {opt}");
    }
    assert!(man.contains(".SH \"SCHEDTOP RECORD\""));
}

#[test]
fn version_names_the_commit_and_doctor_the_kernel_features() {
    let v = run(&["--version"]);
    assert!(v.starts_with("schedtop ") && v.contains("(commit "), "{v}");
    let d = run(&["doctor"]);
    for line in [
        "kernel:",
        "root:",
        "kernel BTF:",
        "BPF probes:",
        "topology:",
    ] {
        assert!(d.contains(line), "doctor lacks {line}: {d}");
    }
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 && std::path::Path::new("/sys/kernel/btf/vmlinux").exists() {
        assert!(d.contains("BPF probes:        loaded"), "{d}");
        assert!(d.contains("source:            bpf"), "{d}");
    } else {
        skip::bpf_unavailable("doctor's BPF lines need root and kernel BTF");
    }
}

/// roff's escaping of plain text, as the man page writes it
fn roff(text: &str) -> String {
    text.replace('\\', "\\e").replace('-', "\\-")
}

#[test]
fn man_page_has_the_keys_columns_environment_and_exit_status() {
    // what the README no longer lists in full must be in the man page
    let man = run(&["man"]);
    for section in ["KEYS", "COLUMNS", "ENVIRONMENT", "EXIT STATUS", "SEE ALSO"] {
        assert!(
            man.contains(&format!(".SH {section}\n")),
            "no {section} section"
        );
    }
    let keys = &man[man.find(".SH KEYS").unwrap()..man.find(".SH COLUMNS").unwrap()];
    for (key, what) in schedtop::ui::keys::HELP {
        if !key.is_empty() {
            assert!(
                keys.contains(&format!(".TP\n\\fB{}\\fR\n", roff(key))),
                "key {key}"
            );
        }
        assert!(keys.contains(&roff(what)), "{key}: {what}");
    }
    // the help overlay's key lines and the page's entries: one each
    let entries = schedtop::ui::keys::HELP
        .iter()
        .filter(|(k, _)| !k.is_empty())
        .count();
    assert_eq!(keys.matches(".TP\n").count(), entries);
    let columns = &man[man.find(".SH COLUMNS").unwrap()..man.find(".SH ENVIRONMENT").unwrap()];
    for title in [
        "VCSW/s",
        "NVCSW/s",
        "P99WAIT",
        "STOLEN%",
        "BLOCKS ON",
        "CGROUP",
    ] {
        assert!(columns.contains(&roff(title)), "column {title}");
    }
    assert!(man.contains("SCHEDTOP_IRQ_TIME=1") && man.contains("SCHEDTOP_WAKERS=1"));
    assert!(man.contains("1 when a finding is a warning, 2 on an error"));
}
