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
}

/// The EXIT STATUS section's codes: every command's (key ""), then each
/// command's own subsection (`.SS "schedtop why"`).
fn exit_codes(man: &str) -> std::collections::BTreeMap<String, Vec<String>> {
    let start = man
        .find(".SH EXIT STATUS\n")
        .expect("an EXIT STATUS section");
    let section = &man[start..];
    let section = &section[..section[1..].find("\n.SH ").map_or(section.len(), |e| e + 1)];
    let mut out = std::collections::BTreeMap::new();
    for (i, part) in section.split("\n.SS ").enumerate() {
        let command = if i == 0 {
            String::new()
        } else {
            let head = part.lines().next().unwrap().trim_matches('"');
            head.strip_prefix("schedtop ").expect(head).to_string()
        };
        let codes: Vec<String> = part
            .split(".TP\n\\fB")
            .skip(1)
            .map(|e| e[..e.find("\\fR").unwrap()].replace("\\-", "-"))
            .collect();
        assert!(!codes.is_empty(), "no codes for {command:?}: {part}");
        out.insert(command, codes);
    }
    out
}

/// The codes the man page gives `command`: its own subsection's, else
/// every command's.
fn listed<'a>(
    codes: &'a std::collections::BTreeMap<String, Vec<String>>,
    command: &str,
) -> &'a [String] {
    codes.get(command).unwrap_or(&codes[""])
}

/// Every exit status written in src/ (`ExitCode::from(N)`, `FAILURE`,
/// `process::exit(N)`), with the command whose file it is in (`why_cli.rs`:
/// why) or "" (main.rs and shared code: every command).
fn exit_codes_in_src() -> Vec<(String, String, String)> {
    let mut found = Vec::new();
    let mut dirs = vec![std::path::PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/src"
    ))];
    while let Some(dir) = dirs.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let path = e.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
                continue;
            }
            if path.extension().is_none_or(|x| x != "rs") {
                continue;
            }
            let stem = path.file_stem().unwrap().to_string_lossy().to_string();
            let command = stem.strip_suffix("_cli").unwrap_or("").to_string();
            let text = std::fs::read_to_string(&path).unwrap();
            for (n, line) in text.lines().enumerate() {
                let line = line.trim();
                if line.starts_with("//") {
                    continue;
                }
                let at = format!("{}:{}", path.display(), n + 1);
                let mut push =
                    |code: &str| found.push((command.clone(), code.to_string(), at.clone()));
                if line.contains("ExitCode::SUCCESS") {
                    push("0");
                }
                if line.contains("ExitCode::FAILURE") {
                    push("1");
                }
                for call in ["ExitCode::from(", "process::exit("] {
                    for (i, _) in line.match_indices(call) {
                        let arg = &line[i + call.len()..];
                        let mut arg = &arg[..arg.find(')').unwrap_or(arg.len())];
                        // a constant of the same file: its value
                        let decl = format!("const {arg}: ");
                        if let Some(d) = text.find(&decl).filter(|_| !arg.is_empty()) {
                            let value = &text[d + decl.len()..];
                            let value =
                                &value[value.find('=').unwrap() + 1..value.find(';').unwrap()];
                            arg = value.trim();
                        }
                        if arg.chars().all(|c| c.is_ascii_digit()) && !arg.is_empty() {
                            push(arg);
                        } else if arg.starts_with("128 + ") {
                            push("128+N");
                        } else {
                            panic!("{at}: an exit status the test cannot read ({arg}): give it a literal and list it in the man page (src/docs.rs EXIT_STATUS)");
                        }
                    }
                }
            }
        }
    }
    found
}

#[test]
fn every_exit_status_in_the_source_is_in_the_man_page() {
    let codes = exit_codes(&run(&["man"]));
    let found = exit_codes_in_src();
    // main.rs's 0 and 1, why's three, stdout_gone's 0 and 2, die_by's 128+N
    assert!(found.len() >= 8, "{found:?}");
    for (command, code, at) in &found {
        assert!(
            listed(&codes, command).contains(code),
            "{at}: exit status {code} (command {command:?}) is not in the man page's EXIT STATUS: {codes:?}"
        );
    }
    // a command with its own subsection exists, so it lists its codes
    for command in codes.keys().filter(|c| !c.is_empty()) {
        assert!(
            <schedtop::cli::Cli as clap::CommandFactory>::command()
                .find_subcommand(command)
                .is_some(),
            "the man page's EXIT STATUS names no command {command}"
        );
    }
}

#[test]
fn each_command_exits_with_a_status_its_man_page_entry_lists() {
    let codes = exit_codes(&run(&["man"]));
    let v1 = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/v1.schedtop");
    let status = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_schedtop"))
            .args(args)
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        out.status.code().expect("ended by a signal").to_string()
    };
    let mut cases: Vec<(String, Vec<&str>, &str)> = Vec::new();
    // the parser's refusal, for every command
    let cli = <schedtop::cli::Cli as clap::CommandFactory>::command();
    for sub in cli.get_subcommands() {
        if sub.get_name() != "help" {
            cases.push((
                sub.get_name().to_string(),
                vec![sub.get_name(), "--no-such-option"],
                "2",
            ));
        }
    }
    cases.push((String::new(), vec!["--no-such-option"], "2"));
    // errors once running, and successes
    for (command, args, want) in [
        (
            "diff",
            vec!["diff", "/nonexistent/a", "/nonexistent/b"],
            "1",
        ),
        ("diff", vec!["diff", "--batch", v1, v1], "0"),
        ("dump", vec!["dump", "/nonexistent/a"], "1"),
        ("dump", vec!["dump", v1], "0"),
        ("replay", vec!["replay", "/nonexistent/a"], "1"),
        ("why", vec!["why", "--from", "/nonexistent/a"], "2"),
        (
            "snapshot",
            vec!["snapshot", "--from", "/nonexistent/a"],
            "1",
        ),
    ] {
        cases.push((command.to_string(), args, want));
    }
    for (command, args, want) in &cases {
        let got = status(args);
        assert_eq!(&got, want, "schedtop {args:?}");
        assert!(
            listed(&codes, command).contains(&got),
            "schedtop {args:?} exits {got}, which the man page does not list for {command:?}: {codes:?}"
        );
    }
}
