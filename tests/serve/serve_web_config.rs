//! `schedtop serve --web-config`: TLS with a certificate that curl really
//! verifies, basic auth against bcrypt hashes (one of them from another
//! bcrypt implementation's test vectors), the password cache seen in the
//! kernel's CPU counters of the checking thread, plain HTTP on the TLS
//! port, broken config files, and the warning when listening beyond
//! loopback unprotected.
use crate::common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::skip;

struct Serve {
    child: Child,
    addr: SocketAddr,
    /// stderr lines before the "serving" line
    said: Vec<String>,
}

impl Drop for Serve {
    fn drop(&mut self) {
        // the whole process group, however the test ends
        unsafe { libc::kill(-(self.child.id() as i32), libc::SIGKILL) };
        let _ = self.child.wait();
    }
}

/// `schedtop serve` (behind `wrapper`, if any) until its "serving" line.
fn start(wrapper: &[&str], listen: &str, extra: &[&str], cwd: &Path) -> Serve {
    let bin = env!("CARGO_BIN_EXE_schedtop");
    let mut argv: Vec<&str> = wrapper.to_vec();
    argv.extend([bin, "serve", "--procfs", "-i", "5", "--listen", listen]);
    argv.extend(extra);
    let child = Command::new(argv[0])
        .args(&argv[1..])
        .current_dir(cwd)
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .process_group(0)
        .spawn()
        .unwrap();
    let mut serve = Serve {
        child,
        addr: "0.0.0.0:0".parse().unwrap(),
        said: Vec::new(),
    };
    let mut err = BufReader::new(serve.child.stderr.take().unwrap());
    let mut line = String::new();
    loop {
        line.clear();
        assert!(
            err.read_line(&mut line).unwrap() > 0,
            "serve exited early: {:?}",
            serve.said
        );
        if let Some(rest) = line
            .split("://")
            .nth(1)
            .filter(|_| line.contains("serving"))
        {
            serve.addr = rest.split('/').next().unwrap().parse().unwrap();
            serve.said.push(line.clone());
            std::thread::spawn(move || std::io::copy(&mut err, &mut std::io::sink()));
            return serve;
        }
        serve.said.push(line.clone());
    }
}

fn run(cmd: &mut Command) -> Output {
    cmd.output().unwrap()
}

/// A self-signed certificate for 127.0.0.1 and its key, made by openssl.
fn self_signed(dir: &Path, name: &str) -> bool {
    let out = Command::new("openssl")
        .args(["req", "-x509", "-newkey", "ec", "-pkeyopt"])
        .args(["ec_paramgen_curve:prime256v1", "-nodes", "-days", "2"])
        .args(["-subj", "/CN=schedtop test"])
        .args(["-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"])
        .arg("-keyout")
        .arg(dir.join(format!("{name}.key")))
        .arg("-out")
        .arg(dir.join(format!("{name}.crt")))
        .output();
    match out {
        Ok(o) if o.status.success() => true,
        Ok(o) => panic!("openssl req: {}", String::from_utf8_lossy(&o.stderr)),
        Err(_) => {
            skip::skip("openssl is not installed");
            false
        }
    }
}

/// curl's (status code or 0, exit code, body) for `url`.
fn curl(url: &str, extra: &[&str]) -> (u16, i32, String) {
    let out = run(Command::new("curl")
        .args(["-sS", "--max-time", "10", "-w", "\n%{http_code}"])
        .args(extra)
        .arg(url));
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    let (body, code) = text.rsplit_once('\n').unwrap_or(("", "0"));
    (
        code.trim().parse().unwrap_or(0),
        out.status.code().unwrap_or(-1),
        body.to_string(),
    )
}

/// User + system CPU ticks of the serve process's thread called `name`.
fn thread_ticks(pid: u32, name: &str) -> u64 {
    for task in std::fs::read_dir(format!("/proc/{pid}/task")).unwrap() {
        let dir = task.unwrap().path();
        let comm = std::fs::read_to_string(dir.join("comm")).unwrap_or_default();
        if comm.trim() == name {
            let stat = std::fs::read_to_string(dir.join("stat")).unwrap();
            let after = &stat[stat.rfind(')').unwrap() + 2..];
            let f: Vec<&str> = after.split(' ').collect();
            // fields 14 and 15 of stat, counted from after the name
            return f[11].parse::<u64>().unwrap() + f[12].parse::<u64>().unwrap();
        }
    }
    panic!("no thread {name}");
}

#[test]
fn tls_and_basic_auth_with_curl() {
    let dir = tempfile::tempdir().unwrap();
    if !self_signed(dir.path(), "server") || !self_signed(dir.path(), "other") {
        return;
    }
    if Command::new("curl").arg("--version").output().is_err() {
        return skip::skip("curl is not installed");
    }
    // cost 8: a check costs the checking thread tens of ms in this build
    let hash = bcrypt::hash("s3cret pass", 8).unwrap();
    std::fs::write(
        dir.path().join("web.yml"),
        format!(
            "# as for any Prometheus exporter\ntls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n\
             basic_auth_users:\n  prometheus: {hash}\n  \
             openwall: $2a$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW\n"
        ),
    )
    .unwrap();
    // started from / : the certificate's paths are taken from the file's
    // directory, not the working one
    let web = dir.path().join("web.yml");
    let s = start(
        &[],
        "127.0.0.1:0",
        &["--web-config", web.to_str().unwrap()],
        Path::new("/"),
    );
    assert!(s.said.last().unwrap().contains("https://"), "{:?}", s.said);
    assert!(
        !s.said.iter().any(|l| l.contains("warning")),
        "{:?}",
        s.said
    );
    let url = format!("https://{}/metrics", s.addr);
    let ca = dir.path().join("server.crt");
    let ca = ["--cacert", ca.to_str().unwrap()];
    let with = |extra: &[&str]| curl(&url, &[&ca[..], extra].concat());

    // without credentials, and with wrong ones: 401 and the challenge
    let (code, exit, _) = with(&["-D", "-"]);
    assert_eq!((code, exit), (401, 0));
    let (_, _, head) = with(&["-D", "-", "-o", "/dev/null"]);
    assert!(
        head.to_ascii_lowercase()
            .contains("www-authenticate: basic realm=\"schedtop\""),
        "{head}"
    );
    assert_eq!(with(&["-u", "prometheus:wrong"]).0, 401);
    assert_eq!(with(&["-u", "nobody:s3cret pass"]).0, 401);
    assert_eq!(with(&["-u", "openwall:U*V"]).0, 401);
    // the right ones: 200 and the exposition (503 until the first Sample)
    let t0 = Instant::now();
    let (code, body) = loop {
        let (code, _, body) = with(&["-u", "prometheus:s3cret pass"]);
        if code != 503 || t0.elapsed() > Duration::from_secs(10) {
            break (code, body);
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    assert_eq!(code, 200, "{body}");
    assert!(body.contains("schedtop_samples_total"), "{body}");
    // a hash made by another bcrypt implementation (crypt_blowfish's
    // published test vector for the password "U*U")
    assert_eq!(with(&["-u", "openwall:U*U"]).0, 200);

    // the certificate really is checked: curl refuses the server when it
    // trusts another certificate, or only the system's CAs (exit 60)
    let other = dir.path().join("other.crt");
    let (code, exit, _) = curl(&url, &["--cacert", other.to_str().unwrap()]);
    assert_eq!((code, exit), (0, 60));
    assert_eq!(curl(&url, &[]).1, 60);

    // the password cache: further scrapes with the right password cost the
    // checking thread no bcrypt; each wrong one costs one
    let pid = s.child.id();
    let before = thread_ticks(pid, "bcrypt");
    for _ in 0..10 {
        assert_eq!(with(&["-u", "prometheus:s3cret pass"]).0, 200);
    }
    let cached = thread_ticks(pid, "bcrypt") - before;
    let t0 = Instant::now();
    for i in 0..5 {
        assert_eq!(with(&["-u", &format!("prometheus:wrong{i}")]).0, 401);
    }
    let wrong = thread_ticks(pid, "bcrypt") - before - cached;
    eprintln!(
        "bcrypt thread: {cached} ticks for 10 right scrapes, {wrong} for 5 wrong ones ({:?})",
        t0.elapsed()
    );
    assert!(wrong >= 2, "wrong passwords cost {wrong} ticks");
    assert!(
        cached * 5 <= wrong,
        "cached {cached} vs wrong {wrong} ticks"
    );

    // plain HTTP on the TLS port: a clear 400, and the exporter goes on
    let (code, _, body) = curl(&format!("http://{}/metrics", s.addr), &[]);
    assert_eq!(code, 400);
    assert!(body.contains("https://"), "{body}");
    // a TLS record of garbage: the handshake fails, the connection closes
    let mut c = TcpStream::connect(s.addr).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(8))).unwrap();
    let _ = c.write_all(b"\x16\x03\x01\x00\x05hello garbage");
    let t0 = Instant::now();
    let _ = c.read_to_end(&mut Vec::new());
    assert!(t0.elapsed() < Duration::from_secs(7), "{:?}", t0.elapsed());
    // a client that opens TLS and never speaks does not wedge others
    let _silent = TcpStream::connect(s.addr).unwrap();
    assert_eq!(with(&["-u", "prometheus:s3cret pass"]).0, 200);
}

/// `serve --web-config FILE` that must fail at start: its stderr.
fn refused(dir: &Path, config: &str) -> String {
    let path = dir.join("web.yml");
    std::fs::write(&path, config).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_schedtop"))
        .args([
            "serve",
            "--procfs",
            "--listen",
            "127.0.0.1:0",
            "--web-config",
        ])
        .arg(&path)
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .process_group(0)
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    while child.try_wait().unwrap().is_none() && t0.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(20));
    }
    unsafe { libc::kill(-(child.id() as i32), libc::SIGKILL) };
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(!out.status.success(), "{config:?} was accepted: {err}");
    assert_eq!(err.lines().count(), 1, "{config:?}: {err}");
    err
}

#[test]
fn a_broken_web_config_is_one_line_at_start() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cases: [(&str, &[&str]); 8] = [
        (
            "tls_config:\n  cert_file: a\n",
            &["unknown key \"tls_config\""],
        ),
        (
            "tls_server_config:\n  cert_file: a.crt\n  key_file: a.key\n  client_ca_file: ca.crt\n",
            &["tls_server_config.client_ca_file is not supported"],
        ),
        (
            "basic_auth_users:\n  prom: plaintext\n",
            &["basic_auth_users.prom", "bcrypt"],
        ),
        ("basic_auth_users: [\n", &["not valid YAML"]),
        (
            "tls_server_config:\n  cert_file: missing.crt\n  key_file: missing.key\n",
            &["cert_file", "missing.crt", "No such file"],
        ),
        ("tls_server_config:\n  key_file: a.key\n", &["no cert_file"]),
        (
            "a: &a [x, x, x, x]\nb: &b [*a, *a, *a, *a]\nc: [*b, *b, *b, *b]\n",
            &["aliases are not supported"],
        ),
        ("- just\n- a list\n", &["expected a mapping"]),
    ];
    for (config, wanted) in cases {
        let err = refused(d, config);
        assert!(err.contains("--web-config"), "{err}");
        for w in wanted {
            assert!(err.contains(w), "{config:?}: {err}");
        }
    }
    // a key that does not belong to the certificate
    if self_signed(d, "a") && self_signed(d, "b") {
        let err = refused(
            d,
            "tls_server_config:\n  cert_file: a.crt\n  key_file: b.key\n",
        );
        assert!(err.contains("a.crt") && err.contains("b.key"), "{err}");
    }
    // no file at all
    let out = run(Command::new(env!("CARGO_BIN_EXE_schedtop"))
        .args([
            "serve",
            "--procfs",
            "--listen",
            "127.0.0.1:0",
            "--web-config",
        ])
        .arg(d.join("nope.yml")));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("nope.yml") && err.contains("cannot read"),
        "{err}"
    );
}

#[test]
fn listening_beyond_loopback_unprotected_is_a_warning() {
    // in a network namespace of its own (only a loopback device, down), so
    // "all interfaces" reaches nothing
    let ok = Command::new("unshare")
        .args(["--net", "true"])
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        return skip::skip("unshare --net cannot make a network namespace here");
    }
    let s = start(&["unshare", "--net"], "0.0.0.0:0", &[], Path::new("/"));
    let warning: Vec<&String> = s.said.iter().filter(|l| l.contains("warning")).collect();
    assert_eq!(warning.len(), 1, "{:?}", s.said);
    for w in [
        "0.0.0.0",
        "neither TLS nor a password",
        "pids",
        "thread",
        "cgroup paths",
    ] {
        assert!(warning[0].contains(w), "{w}: {}", warning[0]);
    }
    assert!(warning[0].contains("kernel version") && warning[0].contains("--web-config"));
    drop(s);
    // on loopback: no warning
    let s = start(&[], "127.0.0.1:0", &[], Path::new("/"));
    assert!(
        !s.said.iter().any(|l| l.contains("warning")),
        "{:?}",
        s.said
    );
}

/// A cert_file or key_file that is no file: a FIFO waited for a writer for
/// ever, and /dev/zero (length 0 to stat) was read until memory ran out
/// (1 GB in a second here). The child runs under a 2 GiB address-space
/// limit so a regression fails instead of eating the machine.
#[test]
fn a_pem_path_that_is_a_fifo_or_a_device_is_one_line() {
    use std::os::unix::process::CommandExt;
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("cert.pem");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a valid C string
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    for pem in [fifo.to_str().unwrap(), "/dev/zero"] {
        let path = dir.path().join("web.yml");
        std::fs::write(
            &path,
            format!("tls_server_config:\n  cert_file: {pem}\n  key_file: {pem}\n"),
        )
        .unwrap();
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_schedtop"));
        cmd.args([
            "serve",
            "--procfs",
            "--listen",
            "127.0.0.1:0",
            "--web-config",
        ])
        .arg(&path)
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .process_group(0);
        // SAFETY: setrlimit is async-signal-safe
        unsafe {
            cmd.pre_exec(|| {
                let lim = libc::rlimit {
                    rlim_cur: 2 << 30,
                    rlim_max: 2 << 30,
                };
                libc::setrlimit(libc::RLIMIT_AS, &lim);
                Ok(())
            });
        }
        let mut child = cmd.spawn().unwrap();
        let t0 = Instant::now();
        while child.try_wait().unwrap().is_none() && t0.elapsed() < Duration::from_secs(10) {
            std::thread::sleep(Duration::from_millis(20));
        }
        let hung = child.try_wait().unwrap().is_none();
        unsafe { libc::kill(-(child.id() as i32), libc::SIGKILL) };
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr).to_string();
        assert!(!hung, "cert_file {pem}: still starting after 10 s");
        assert!(!out.status.success(), "cert_file {pem} was accepted");
        assert_eq!(err.lines().count(), 1, "{pem}: {err}");
        assert!(
            err.contains("cert_file") && err.contains("not a regular file"),
            "{pem}: {err}"
        );
    }
}
