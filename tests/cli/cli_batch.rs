//! Batch mode as scripts use it: the JSON Lines schema, and one-line errors.
use std::process::Command;

fn schedtop(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_schedtop"))
        .args(args)
        .output()
        .expect("run schedtop")
}

#[test]
fn batch_prints_n_json_lines_with_the_documented_schema() {
    let out = schedtop(&["--batch", "-n", "2", "-i", "0.3"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2);
    for line in lines {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        for key in [
            "time",
            "interval_s",
            "source",
            "threads",
            "migrations",
            "cpus",
            "system",
            "cgroups",
        ] {
            assert!(!v[key].is_null(), "missing {key}");
        }
        let dt = v["interval_s"].as_f64().unwrap();
        assert!((0.25..0.6).contains(&dt), "interval_s {dt}");
        let threads = v["threads"].as_array().unwrap();
        assert!(!threads.is_empty());
        for key in [
            "tid",
            "pid",
            "comm",
            "voluntary",
            "involuntary",
            "voluntary_per_s",
            "involuntary_per_s",
            "oncpu_ns",
            "wait_ns",
            "migrations",
            "slice_hist_us",
            "wait_hist_us",
        ] {
            assert!(threads[0].get(key).is_some(), "thread lacks {key}");
        }
        if v["source"] == "bpf" {
            // some thread ran in the interval: its slices are bucketed
            assert!(threads
                .iter()
                .any(|t| t["slice_hist_us"].as_array().is_some_and(|h| !h.is_empty())));
            for m in v["migrations"].as_array().unwrap() {
                assert!(m["from_cpu"].is_u64() && m["to_cpu"].is_u64() && m["count"].is_u64());
            }
        }
    }
}

#[test]
fn pid_filter_keeps_only_that_process() {
    let me = std::process::id().to_string();
    let out = schedtop(&["-b", "-n", "1", "-i", "0.2", "-p", &me]);
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let threads = v["threads"].as_array().unwrap();
    // this test process is there (its main thread's tid is its pid), and
    // nothing else is
    assert!(
        threads
            .iter()
            .any(|t| t["tid"].as_u64().unwrap().to_string() == me),
        "the filtered process is missing: {threads:?}"
    );
    for t in threads {
        assert_eq!(t["pid"].as_u64().unwrap().to_string(), me);
    }
    // every thread is in this process's cgroup, as /proc says it is (the
    // hierarchy with the cpu controller), and that cgroup is listed
    let layout = schedtop::collect::cgroupfs::CgroupLayout::discover(
        std::path::Path::new("/proc"),
        std::path::Path::new("/"),
    );
    let text = std::fs::read_to_string("/proc/self/cgroup").unwrap();
    let mine = schedtop::collect::cgroups::proc_cgroup_path(&text, layout.cpu_v1.is_some())
        .expect("this process's cgroup");
    for t in threads {
        assert_eq!(t["cgroup"].as_str(), Some(mine), "{t}");
    }
    let cgroups = v["cgroups"].as_array().unwrap();
    let listed = cgroups
        .iter()
        .find(|c| c["path"].as_str() == Some(mine))
        .expect("the threads' cgroup is listed");
    assert_eq!(listed["threads"].as_u64(), Some(threads.len() as u64));
    for key in [
        "cpu_quota_cpus",
        "nr_throttled",
        "throttled_usec",
        "throttled_per_s",
        "throttled_ms_per_s",
        "psi_some_avg10",
        "psi_full_avg10",
        "psi_some_us",
        "voluntary_per_s",
        "involuntary_per_s",
        "slice_hist_us",
        "wait_hist_us",
    ] {
        assert!(listed.get(key).is_some(), "cgroup lacks {key}");
    }
    let psi = v["system"]["psi_cpu_some_avg10"].as_f64();
    assert_eq!(
        psi.is_some(),
        std::path::Path::new("/proc/pressure/cpu").exists()
    );
}

#[test]
fn user_errors_are_one_line_and_non_zero() {
    for (args, needle) in [
        (
            vec!["-b", "-p", "999999999"],
            "no process with pid 999999999",
        ),
        (vec!["-b", "-i", "0"], "interval must be between"),
        (vec!["-b", "-i", "soon"], "is not a number of seconds"),
    ] {
        let out = schedtop(&args);
        assert!(!out.status.success(), "{args:?} succeeded");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(needle), "{args:?}: {err}");
        assert!(
            !err.contains("panicked") && !err.contains("backtrace"),
            "{err}"
        );
    }
    let out = schedtop(&["-b", "-p", "999999999"]);
    assert_eq!(String::from_utf8_lossy(&out.stderr).lines().count(), 1);
}
