//! The /proc fallback: on fixture /proc trees, and live as an unprivileged user.
use crate::common::skip;
use std::fs;
use std::path::Path;
use std::process::Command;

use schedtop::collect::procfs::ProcfsReader;

fn write(path: &Path, text: &str) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, text).unwrap();
}

/// A /proc/<pid>/task/<tid>/stat line: fields after comm as the kernel
/// writes them (state, ppid, ..., starttime is field 22, processor 39).
fn stat_line(tid: u32, comm: &str, starttime: u64, cpu: u32) -> String {
    let mut fields: Vec<String> = vec!["S".into(), "1".into()];
    fields.extend((5..=21).map(|_| "0".to_string()));
    fields.push(starttime.to_string()); // 22
    fields.extend((23..=38).map(|_| "0".to_string()));
    fields.push(cpu.to_string()); // 39
    fields.extend((40..=52).map(|_| "0".to_string()));
    format!("{tid} ({comm}) {}\n", fields.join(" "))
}

/// A status file as this kernel writes it (a real one, captured into
/// tests/fixtures), with our name and switch counts.
fn status(name: &str, vol: u64, invol: u64) -> String {
    let template = include_str!("../fixtures/proc-status-template.txt");
    template
        .lines()
        .map(|l| match l.split(':').next().unwrap_or("") {
            "Name" => format!("Name:\t{name}"),
            "voluntary_ctxt_switches" => format!("voluntary_ctxt_switches:\t{vol}"),
            "nonvoluntary_ctxt_switches" => format!("nonvoluntary_ctxt_switches:\t{invol}"),
            _ => l.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
        + "\n"
}

fn fixture(root: &Path, vol: u64) {
    write(
        &root.join("stat"),
        "cpu 0 0 0\nctxt 500\nprocs_running 2\nprocs_blocked 0\n",
    );
    write(&root.join("loadavg"), "1.00 0.50 0.25 2/100 42\n");
    // process 42 "server" with two threads, one named hostilely
    for (tid, comm, v, i) in [
        (42, "server", vol, 3),
        (43, "evil\u{1b}[31m)(x", vol * 2, 7),
    ] {
        let t = root.join(format!("42/task/{tid}"));
        write(&t.join("stat"), &stat_line(tid, comm, 1000, 1));
        write(&t.join("status"), &status(comm, v, i));
        write(
            &t.join("schedstat"),
            &format!("{} {} {}\n", v * 1000, i * 500, v + i),
        );
    }
    write(&root.join("42/stat"), &stat_line(42, "server", 1000, 1));
    write(&root.join("42/status"), &status("server", vol, 3));
}

#[test]
fn reads_fixture_proc_tree() {
    let dir = tempfile::tempdir().unwrap();
    fixture(dir.path(), 10);
    let mut r = ProcfsReader::new(dir.path(), vec![]);
    let s = r.read().unwrap();
    assert_eq!(s.threads.len(), 2);
    let t = s.thread(43).unwrap();
    assert_eq!(t.pid, 42);
    assert_eq!(
        &*t.comm, "evil\u{1b}[31m)(x",
        "comm kept as the thread set it"
    );
    assert_eq!(&*t.process_comm, "server");
    assert_eq!((t.voluntary, t.involuntary), (20, 7));
    assert_eq!((t.oncpu_ns, t.wait_ns), (20_000, 3_500));
    assert_eq!(t.cpu, 1);
    assert!(
        t.migrations.is_none() && t.slice_hist.is_none(),
        "procfs has neither"
    );
    assert_eq!(s.system.context_switches, 500);

    // counters move: rates come out of two reads
    fixture(dir.path(), 25);
    let s2 = r.read().unwrap();
    let iv = schedtop::model::rates::intervals(Some(&s), &s2);
    let d = iv
        .iter()
        .find(|(t, _)| t.tid == 42)
        .unwrap()
        .1
        .clone()
        .unwrap();
    assert_eq!(d.voluntary, 15);
    assert!(d.migrations.is_none());
}

#[test]
fn damaged_fixture_files_are_skipped_not_fatal() {
    let dir = tempfile::tempdir().unwrap();
    fixture(dir.path(), 10);
    write(&dir.path().join("42/task/43/stat"), "garbage");
    fs::remove_file(dir.path().join("42/task/42/schedstat")).unwrap();
    let mut r = ProcfsReader::new(dir.path(), vec![]);
    let s = r.read().unwrap();
    assert_eq!(
        s.threads.len(),
        1,
        "the thread with a corrupt stat is skipped"
    );
    assert_eq!(s.threads[0].oncpu_ns, 0, "missing schedstat reads as zero");
    // a pid filter that matches nothing
    let mut r = ProcfsReader::new(dir.path(), vec![7]);
    assert!(r.read().unwrap().threads.is_empty());
}

fn nobody_can_run(bin: &str) -> Option<String> {
    // the binary may sit under a directory nobody cannot enter: copy it
    let dst = std::env::temp_dir().join(format!("schedtop-nobody-{}", std::process::id()));
    fs::copy(bin, &dst).ok()?;
    Command::new("chmod").arg("755").arg(&dst).status().ok()?;
    Some(dst.to_string_lossy().into_owned())
}

#[test]
fn unprivileged_user_gets_procfs_with_one_clear_line() {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        skip::skip("needs root to switch to nobody");
        return;
    }
    let bin = nobody_can_run(env!("CARGO_BIN_EXE_schedtop")).expect("copy binary");
    let out = Command::new("runuser")
        .args([
            "-u", "nobody", "--", &bin, "--batch", "-n", "1", "-i", "0.3",
        ])
        .output()
        .expect("runuser");
    let _ = fs::remove_file(&bin);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "stderr: {stderr}");
    assert_eq!(
        stderr.trim(),
        "schedtop: not root: /proc counters only; run as root for histograms and migrations"
    );
    let line = String::from_utf8_lossy(&out.stdout);
    let v: serde_json::Value = serde_json::from_str(line.trim()).expect("one JSON line");
    assert_eq!(v["source"], "procfs");
    let threads = v["threads"].as_array().unwrap();
    assert!(threads.len() > 5, "nobody sees all threads in /proc");
    assert!(threads
        .iter()
        .any(|t| t["voluntary"].as_u64().unwrap_or(0) > 0));
    assert!(threads.iter().all(|t| t["slice_hist_us"].is_null()));
}
