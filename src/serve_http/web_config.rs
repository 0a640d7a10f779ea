//! `schedtop serve --web-config FILE`: TLS and basic authentication, in
//! the YAML format Prometheus's own exporters read (exporter-toolkit's
//! web configuration), so one file can serve a fleet of exporters:
//!
//! ```yaml
//! tls_server_config:
//!   cert_file: schedtop.crt   # relative to this file's directory
//!   key_file: schedtop.key
//! basic_auth_users:
//!   prometheus: $2y$10$...    # bcrypt
//! ```
//!
//! Only those keys are supported; any other is one line naming it, as are
//! a file that cannot be read, a certificate or key that does not load,
//! and a hash that is not bcrypt. All of it is checked at start.
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use anyhow::{anyhow, bail, Context, Result};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use yaml_rust2::parser::{Event, MarkedEventReceiver, Parser};
use yaml_rust2::scanner::Marker;
use yaml_rust2::{Yaml, YamlLoader};

use crate::util::read_regular::{open_regular, read_regular, Links};

/// A web config larger than this is not a web config.
const MAX_FILE_BYTES: u64 = 1 << 20;
/// bcrypt costs above this take seconds per check (htpasswd's -C stops at 17).
pub const MAX_BCRYPT_COST: u32 = 17;

/// What `--web-config` asks for.
pub struct WebConfig {
    pub tls: Option<Arc<rustls::ServerConfig>>,
    /// user -> bcrypt hash (empty: no authentication)
    pub users: BTreeMap<String, String>,
}

/// exporter-toolkit keys schedtop does not implement: named as such, not
/// as typos.
const UNSUPPORTED_TLS: [&str; 13] = [
    "cert",
    "key",
    "client_ca_file",
    "client_ca",
    "client_auth_type",
    "client_allowed_sans",
    "cipher_suites",
    "curve_preferences",
    "min_version",
    "max_version",
    "prefer_server_cipher_suites",
    "client_ca_files",
    "key_password",
];
const UNSUPPORTED_TOP: [&str; 2] = ["http_server_config", "rate_limit"];

/// Read and check `path`: every error is one line that names the file.
pub fn load(path: &Path) -> Result<WebConfig> {
    parse_file(path).with_context(|| format!("--web-config {}", path.display()))
}

fn parse_file(path: &Path) -> Result<WebConfig> {
    use std::io::Read;
    // checked on the opened file: a FIFO put there after a check of the
    // path would block the start for ever
    let f = match open_regular(path, Links::Follow) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::Other => bail!("{e}"),
        Err(e) => bail!("cannot read it: {e}"),
    };
    let len = f.metadata().map_or(0, |m| m.len());
    if len > MAX_FILE_BYTES {
        bail!("{len} bytes: too large for a web config");
    }
    let mut text = String::new();
    f.take(MAX_FILE_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(|e| anyhow!("cannot read it: {e}"))?;
    if text.len() as u64 > MAX_FILE_BYTES {
        bail!("over {MAX_FILE_BYTES} bytes: too large for a web config");
    }
    let dir = path.parent().unwrap_or(Path::new("."));
    parse(&text, dir)
}

/// Refuses aliases before the tree is built: the loader copies an alias's
/// node at each use, so a few lines of nested aliases would expand to
/// gigabytes, and a web config has no use for them.
struct NoAliases(Option<Marker>);

impl MarkedEventReceiver for NoAliases {
    fn on_event(&mut self, ev: Event, mark: Marker) {
        if matches!(ev, Event::Alias(_)) && self.0.is_none() {
            self.0 = Some(mark);
        }
    }
}

fn yaml_error(e: &yaml_rust2::ScanError) -> anyhow::Error {
    let m = e.marker();
    anyhow!("not valid YAML: {} (line {})", e.info(), m.line())
}

/// The config in `text`; relative paths are taken from `dir`.
pub fn parse(text: &str, dir: &Path) -> Result<WebConfig> {
    let mut aliases = NoAliases(None);
    Parser::new_from_str(text)
        .load(&mut aliases, true)
        .map_err(|e| yaml_error(&e))?;
    if let Some(m) = aliases.0 {
        bail!("YAML aliases are not supported (line {})", m.line());
    }
    let docs = YamlLoader::load_from_str(text).map_err(|e| yaml_error(&e))?;
    let root = match docs.as_slice() {
        [] => return Ok(WebConfig::none()),
        [one] => one,
        _ => bail!("more than one YAML document"),
    };
    let top = match root {
        Yaml::Null => return Ok(WebConfig::none()),
        Yaml::Hash(h) => h,
        _ => bail!("expected a mapping with tls_server_config and/or basic_auth_users"),
    };
    let mut config = WebConfig::none();
    for (k, v) in top {
        let key = key_name(k, "")?;
        match key {
            "tls_server_config" => config.tls = tls(v, dir)?,
            "basic_auth_users" => config.users = users(v)?,
            k if UNSUPPORTED_TOP.contains(&k) => {
                bail!("{k} is not supported by schedtop (supported: tls_server_config, basic_auth_users)")
            }
            k => bail!("unknown key {k:?} (supported: tls_server_config, basic_auth_users)"),
        }
    }
    Ok(config)
}

impl WebConfig {
    pub fn none() -> WebConfig {
        WebConfig {
            tls: None,
            users: BTreeMap::new(),
        }
    }
}

fn key_name<'a>(k: &'a Yaml, within: &str) -> Result<&'a str> {
    match k {
        Yaml::String(s) => Ok(s),
        other => bail!("{within}a key that is not a string: {}", scalar(other)),
    }
}

fn scalar(y: &Yaml) -> String {
    match y {
        Yaml::String(s) | Yaml::Real(s) => s.clone(),
        Yaml::Integer(i) => i.to_string(),
        Yaml::Boolean(b) => b.to_string(),
        Yaml::Null => "null".into(),
        Yaml::Array(_) => "a list".into(),
        Yaml::Hash(_) => "a mapping".into(),
        Yaml::Alias(_) | Yaml::BadValue => "?".into(),
    }
}

fn string_value(v: &Yaml, key: &str) -> Result<String> {
    match v {
        Yaml::String(s) if !s.is_empty() => Ok(s.clone()),
        Yaml::String(_) | Yaml::Null => bail!("{key} is empty"),
        other => bail!("{key} must be a string, not {}", scalar(other)),
    }
}

fn tls(v: &Yaml, dir: &Path) -> Result<Option<Arc<rustls::ServerConfig>>> {
    let h = match v {
        Yaml::Hash(h) => h,
        Yaml::Null => bail!("tls_server_config is empty: it needs cert_file and key_file"),
        other => bail!("tls_server_config must be a mapping, not {}", scalar(other)),
    };
    let (mut cert, mut key) = (None, None);
    for (k, v) in h {
        match key_name(k, "tls_server_config: ")? {
            "cert_file" => cert = Some(dir.join(string_value(v, "tls_server_config.cert_file")?)),
            "key_file" => key = Some(dir.join(string_value(v, "tls_server_config.key_file")?)),
            k if UNSUPPORTED_TLS.contains(&k) => bail!(
                "tls_server_config.{k} is not supported by schedtop (supported: cert_file, key_file)"
            ),
            k => bail!("unknown key tls_server_config.{k:?} (supported: cert_file, key_file)"),
        }
    }
    let cert = cert.ok_or_else(|| anyhow!("tls_server_config has no cert_file"))?;
    let key = key.ok_or_else(|| anyhow!("tls_server_config has no key_file"))?;
    Ok(Some(Arc::new(server_config(&cert, &key)?)))
}

fn read_pem(path: &Path, what: &str) -> Result<Vec<u8>> {
    // a FIFO would wait for a writer for ever; and a device such as
    // /dev/zero stats as 0 bytes and never ends: regular files only
    read_regular(path, Links::Follow, MAX_FILE_BYTES).map_err(|e| match e.kind() {
        std::io::ErrorKind::Other => anyhow!("{what} {}: {e}", path.display()),
        _ => anyhow!("{what} {}: cannot read it: {e}", path.display()),
    })
}

/// rustls's server config for one certificate chain and its key.
fn server_config(cert: &Path, key: &Path) -> Result<rustls::ServerConfig> {
    let pem = read_pem(cert, "cert_file")?;
    let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(&pem)
        .collect::<Result<_, _>>()
        .map_err(|e| anyhow!("cert_file {}: not a PEM certificate: {e}", cert.display()))?;
    if chain.is_empty() {
        bail!("cert_file {}: no PEM certificate in it", cert.display());
    }
    let pem = read_pem(key, "key_file")?;
    let private = PrivateKeyDer::from_pem_slice(&pem)
        .map_err(|e| anyhow!("key_file {}: no PEM private key in it ({e})", key.display()))?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .context("TLS versions")?
        .with_no_client_auth()
        .with_single_cert(chain, private)
        .map_err(|e| {
            anyhow!(
                "cert_file {} and key_file {}: {e}",
                cert.display(),
                key.display()
            )
        })
}

fn users(v: &Yaml) -> Result<BTreeMap<String, String>> {
    let h = match v {
        Yaml::Hash(h) => h,
        Yaml::Null => return Ok(BTreeMap::new()),
        other => bail!(
            "basic_auth_users must be a mapping of user: bcrypt-hash, not {}",
            scalar(other)
        ),
    };
    let mut out = BTreeMap::new();
    for (k, v) in h {
        let user = match k {
            Yaml::String(s) => s.clone(),
            // `123: $2y$...` is a user named 123
            Yaml::Integer(i) => i.to_string(),
            other => bail!("basic_auth_users: {} is not a user name", scalar(other)),
        };
        if user.is_empty() || user.contains(':') || user.chars().any(char::is_control) {
            bail!("basic_auth_users: user {user:?} is empty or has a ':' or a control character");
        }
        let hash = match v {
            Yaml::String(s) => s.clone(),
            other => bail!(
                "basic_auth_users.{user}: expected a bcrypt hash, not {}",
                scalar(other)
            ),
        };
        check_hash(&hash).with_context(|| format!("basic_auth_users.{user}"))?;
        out.insert(user, hash);
    }
    Ok(out)
}

/// A bcrypt hash that the verifier can use at a bounded cost.
fn check_hash(hash: &str) -> Result<()> {
    let parts: bcrypt::HashParts = hash
        .parse()
        .map_err(|e| anyhow!("not a bcrypt hash ({e}); make one with `htpasswd -nBC 10 USER`"))?;
    if parts.get_cost() < 4 {
        bail!(
            "bcrypt cost {} is below bcrypt's minimum of 4",
            parts.get_cost()
        );
    }
    if parts.get_cost() > MAX_BCRYPT_COST {
        bail!(
            "bcrypt cost {} would take seconds per scrape; at most {MAX_BCRYPT_COST}",
            parts.get_cost()
        );
    }
    Ok(())
}

/// The one-line warning for an exporter that others can reach without
/// TLS or a password; None on loopback or with both.
pub fn exposure_warning(addr: std::net::SocketAddr, tls: bool, auth: bool) -> Option<String> {
    if addr.ip().to_canonical().is_loopback() || (tls && auth) {
        return None;
    }
    let leaks = "pids, thread and process names, cgroup paths and the kernel version";
    Some(match (tls, auth) {
        (false, false) => format!(
            "warning: listening on {addr}, beyond loopback, with neither TLS nor a password: anyone who can reach it reads {leaks}; see --web-config"
        ),
        (true, _) => format!(
            "warning: listening on {addr}, beyond loopback, with TLS but no password: anyone who can reach it reads {leaks}; add basic_auth_users to the --web-config file"
        ),
        (false, _) => format!(
            "warning: listening on {addr}, beyond loopback, with a password but no TLS: the password and the metrics ({leaks}) cross the network in clear text; add tls_server_config to the --web-config file"
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str) -> String {
        match parse(text, Path::new("/nonexistent")) {
            Ok(_) => panic!("{text:?} was accepted"),
            Err(e) => format!("{e:#}"),
        }
    }

    #[test]
    fn users_and_their_hashes() {
        let h = bcrypt::hash("pw", 4).unwrap();
        let c = parse(
            &format!("basic_auth_users:\n  alice: {h}\n  42: '{h}'\n"),
            Path::new("."),
        )
        .unwrap();
        assert!(c.tls.is_none());
        assert_eq!(c.users.keys().collect::<Vec<_>>(), ["42", "alice"]);
        assert_eq!(c.users["alice"], h);
        // nothing configured: an empty file, a comment, an empty mapping
        for empty in ["", "# nothing\n", "{}\n", "basic_auth_users:\n"] {
            let c = parse(empty, Path::new(".")).unwrap();
            assert!(c.tls.is_none() && c.users.is_empty(), "{empty:?}");
        }
        assert!(err(&format!("basic_auth_users:\n  'a:b': {h}\n")).contains("':'"));
        assert!(err(&format!("basic_auth_users:\n  a: {h}\n  a: {h}\n")).contains("duplicated key"));
        let slow = h.replacen("$04$", "$18$", 1);
        assert!(err(&format!("basic_auth_users:\n  a: '{slow}'\n")).contains("cost 18"));
        let weak = h.replacen("$04$", "$03$", 1);
        assert!(err(&format!("basic_auth_users:\n  a: '{weak}'\n")).contains("cost 3"));
        assert!(err("basic_auth_users:\n  a: 12\n").contains("basic_auth_users.a"));
        assert!(err("basic_auth_users: yes\n").contains("must be a mapping"));
        assert!(err("http_server_config:\n  http2: false\n")
            .contains("http_server_config is not supported"));
        assert!(err("---\na: 1\n---\nb: 2\n").contains("more than one"));
        assert!(err("tls_server_config:\n").contains("needs cert_file and key_file"));
        assert!(err("tls_server_config:\n  cert_file: ''\n  key_file: k\n")
            .contains("cert_file is empty"));
    }

    #[test]
    fn the_warning_names_what_leaks_and_what_is_missing() {
        let lo: std::net::SocketAddr = "127.0.0.1:9717".parse().unwrap();
        let lo6: std::net::SocketAddr = "[::1]:9717".parse().unwrap();
        let mapped: std::net::SocketAddr = "[::ffff:127.0.0.1]:9717".parse().unwrap();
        let all: std::net::SocketAddr = "0.0.0.0:9717".parse().unwrap();
        let all6: std::net::SocketAddr = "[::]:9717".parse().unwrap();
        for addr in [lo, lo6, mapped] {
            for (tls, auth) in [(false, false), (true, false), (false, true)] {
                assert!(exposure_warning(addr, tls, auth).is_none(), "{addr}");
            }
        }
        for addr in [all, all6] {
            assert!(exposure_warning(addr, true, true).is_none());
            let none = exposure_warning(addr, false, false).unwrap();
            assert!(none.contains("neither TLS nor a password") && none.contains("--web-config"));
            assert!(exposure_warning(addr, true, false)
                .unwrap()
                .contains("no password"));
            assert!(exposure_warning(addr, false, true)
                .unwrap()
                .contains("clear text"));
        }
    }
}

#[cfg(test)]
mod race_tests {
    use super::*;
    use crate::util::read_regular::FifoSwapper;
    use std::time::{Duration, Instant};

    /// The web config was checked with stat and then read by name: a FIFO
    /// put there in between blocked the start for ever. 2 s of loads while
    /// a FIFO and the file swap places.
    #[test]
    fn a_web_config_swapped_for_a_fifo_after_its_check_does_not_hang() {
        let d = tempfile::tempdir().unwrap();
        let path = d.path().join("web.yml");
        let swap = FifoSwapper::start(&path, b"basic_auth_users: {}\n");
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let (t0, mut loaded, mut refused) = (Instant::now(), 0u32, 0u32);
            while t0.elapsed() < Duration::from_secs(2) {
                match load(&path) {
                    Ok(_) => loaded += 1,
                    Err(e) => {
                        let e = format!("{e:#}");
                        assert!(e.ends_with("not a regular file"), "{e}");
                        refused += 1
                    }
                }
            }
            let _ = tx.send((loaded, refused));
        });
        let got = rx.recv_timeout(Duration::from_secs(10));
        drop(swap);
        let (loaded, refused) = got.expect("loading a web config hung on a FIFO");
        assert!(
            loaded > 0 && refused > 0,
            "loaded {loaded}, refused {refused}"
        );
    }
}
