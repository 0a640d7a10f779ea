//! HTTP basic authentication against bcrypt hashes (`basic_auth_users` of
//! the web config). bcrypt is slow on purpose (cost 10: ~50-100 ms of CPU),
//! so the checks run on one thread of their own, never on the HTTP thread,
//! with a short queue (full: "busy", not a wait); and a password that
//! passed is remembered, as a keyed hash of (user, password, stored hash),
//! in a bounded set, so a scraper's every scrape does not pay for bcrypt.
//! Only successes are remembered: a wrong password costs bcrypt each time.
use std::collections::{BTreeMap, HashSet, VecDeque};
use std::sync::mpsc::{sync_channel, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};

use anyhow::{Context, Result};
use base64::Engine;
use ring::hmac;

/// Remembered successes (one a scraper is enough; more than this many
/// distinct good passwords and the oldest is forgotten).
const CACHE_MAX: usize = 256;
/// Checks waiting for the bcrypt thread before new ones are turned away.
const QUEUE: usize = 4;

type Tag = [u8; 32];

struct Shared {
    users: BTreeMap<String, String>,
    key: hmac::Key,
    cache: Mutex<Cache>,
}

#[derive(Default)]
struct Cache {
    known: HashSet<Tag>,
    order: VecDeque<Tag>,
}

impl Cache {
    fn insert(&mut self, tag: Tag) {
        if self.known.insert(tag) {
            self.order.push_back(tag);
            while self.order.len() > CACHE_MAX {
                if let Some(old) = self.order.pop_front() {
                    self.known.remove(&old);
                }
            }
        }
    }
}

struct Job {
    password: Vec<u8>,
    hash: String,
    /// an unknown user: bcrypt runs all the same (the answer takes as long
    /// as for a known one), then the answer is no
    deny: bool,
    tag: Tag,
    reply: tokio::sync::oneshot::Sender<bool>,
}

/// What to do with a request.
pub enum Check {
    Allowed,
    Denied,
    /// being checked: the answer comes on this channel
    Verify(tokio::sync::oneshot::Receiver<bool>),
    /// too many checks waiting: try again
    Busy,
}

pub struct BasicAuth {
    shared: Arc<Shared>,
    jobs: SyncSender<Job>,
}

impl BasicAuth {
    /// Starts the bcrypt thread; it ends when this is dropped.
    pub fn start(users: BTreeMap<String, String>) -> Result<BasicAuth> {
        let rng = ring::rand::SystemRandom::new();
        let key = hmac::Key::generate(hmac::HMAC_SHA256, &rng)
            .map_err(|_| anyhow::anyhow!("no random numbers for the credential cache"))?;
        let shared = Arc::new(Shared {
            users,
            key,
            cache: Mutex::new(Cache::default()),
        });
        let (jobs, rx) = sync_channel::<Job>(QUEUE);
        let worker = shared.clone();
        std::thread::Builder::new()
            .name("bcrypt".into())
            .spawn(move || {
                for job in rx {
                    let ok = bcrypt::verify(&job.password, &job.hash).unwrap_or(false) && !job.deny;
                    if ok {
                        worker
                            .cache
                            .lock()
                            .unwrap_or_else(|e| e.into_inner())
                            .insert(job.tag);
                    }
                    let _ = job.reply.send(ok);
                }
            })
            .context("starting the password-check thread")?;
        Ok(BasicAuth { shared, jobs })
    }

    fn tag(&self, user: &str, password: &[u8], hash: &str) -> Tag {
        let mut ctx = hmac::Context::with_key(&self.shared.key);
        for part in [user.as_bytes(), b"\0", password, b"\0", hash.as_bytes()] {
            ctx.update(part);
        }
        let mut tag = [0u8; 32];
        tag.copy_from_slice(ctx.sign().as_ref());
        tag
    }

    /// The verdict on a request's `Authorization` header.
    pub fn check(&self, authorization: Option<&[u8]>) -> Check {
        let Some((user, password)) = authorization.and_then(parse_basic) else {
            return Check::Denied;
        };
        let users = &self.shared.users;
        let (hash, deny) = match users.get(&user) {
            Some(h) => (h.clone(), false),
            None => match users.values().next() {
                Some(h) => (h.clone(), true),
                None => return Check::Denied,
            },
        };
        let tag = self.tag(&user, &password, &hash);
        if !deny
            && self
                .shared
                .cache
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .known
                .contains(&tag)
        {
            return Check::Allowed;
        }
        let (reply, answer) = tokio::sync::oneshot::channel();
        let job = Job {
            password,
            hash,
            deny,
            tag,
            reply,
        };
        match self.jobs.try_send(job) {
            Ok(()) => Check::Verify(answer),
            Err(TrySendError::Full(_)) => Check::Busy,
            Err(TrySendError::Disconnected(_)) => Check::Denied,
        }
    }
}

/// `Basic base64(user:password)` -> (user, password); None for anything else.
fn parse_basic(header: &[u8]) -> Option<(String, Vec<u8>)> {
    let text = std::str::from_utf8(header).ok()?.trim();
    let (scheme, creds) = text.split_once(' ')?;
    if !scheme.eq_ignore_ascii_case("basic") {
        return None;
    }
    let raw = base64::engine::general_purpose::STANDARD
        .decode(creds.trim())
        .ok()?;
    let colon = raw.iter().position(|&b| b == b':')?;
    let user = String::from_utf8(raw[..colon].to_vec()).ok()?;
    Some((user, raw[colon + 1..].to_vec()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(user: &str, password: &str) -> Vec<u8> {
        let b = base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"));
        format!("Basic {b}").into_bytes()
    }

    fn verdict(auth: &BasicAuth, h: Option<&[u8]>) -> &'static str {
        match auth.check(h) {
            Check::Allowed => "cached",
            Check::Denied => "denied",
            Check::Busy => "busy",
            Check::Verify(rx) => {
                if rx.blocking_recv().unwrap() {
                    "verified"
                } else {
                    "wrong"
                }
            }
        }
    }

    #[test]
    fn right_wrong_unknown_and_malformed_credentials() {
        // one hash from the crate, one from crypt_blowfish's published test
        // vectors (another implementation): "U*U"
        let mut users = BTreeMap::new();
        users.insert("prom".to_string(), bcrypt::hash("s3cret", 4).unwrap());
        users.insert(
            "openwall".to_string(),
            "$2a$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW".to_string(),
        );
        let auth = BasicAuth::start(users).unwrap();
        assert_eq!(verdict(&auth, Some(&header("prom", "s3cret"))), "verified");
        // the second time from the cache, without bcrypt
        assert_eq!(verdict(&auth, Some(&header("prom", "s3cret"))), "cached");
        // a wrong password is checked (and refused) every time
        assert_eq!(verdict(&auth, Some(&header("prom", "s3cret "))), "wrong");
        assert_eq!(verdict(&auth, Some(&header("prom", "s3cret "))), "wrong");
        assert_eq!(verdict(&auth, Some(&header("prom", ""))), "wrong");
        assert_eq!(verdict(&auth, Some(&header("openwall", "U*U"))), "verified");
        assert_eq!(verdict(&auth, Some(&header("openwall", "U*V"))), "wrong");
        // an unknown user with a password that is right for another one
        assert_eq!(verdict(&auth, Some(&header("nobody", "s3cret"))), "wrong");
        // the user's password for another user
        assert_eq!(verdict(&auth, Some(&header("openwall", "s3cret"))), "wrong");
        assert_eq!(verdict(&auth, None), "denied");
        for bad in [
            &b"Bearer abc"[..],
            b"Basic !!!",
            b"Basic cHJvbQ==", // "prom", no colon
            b"Basic",
            b"\xff\xfe",
        ] {
            assert_eq!(verdict(&auth, Some(bad)), "denied", "{bad:?}");
        }
        // the scheme is case-insensitive (RFC 7617)
        let lower = header("prom", "s3cret");
        let lower = [b"basic".as_slice(), &lower[5..]].concat();
        assert_eq!(verdict(&auth, Some(&lower)), "cached");
    }

    #[test]
    fn the_cache_is_bounded_and_forgets_the_oldest() {
        let mut c = Cache::default();
        for i in 0..(CACHE_MAX + 10) {
            let mut t = [0u8; 32];
            t[..8].copy_from_slice(&(i as u64).to_le_bytes());
            c.insert(t);
            c.insert(t);
        }
        assert_eq!(c.known.len(), CACHE_MAX);
        assert_eq!(c.order.len(), CACHE_MAX);
        assert!(!c.known.contains(&[0u8; 32]));
    }

    #[test]
    fn a_full_queue_is_busy_not_a_wait() {
        let mut users = BTreeMap::new();
        // cost 12: each check takes long enough for the queue to fill
        users.insert("u".to_string(), bcrypt::hash("p", 12).unwrap());
        let auth = BasicAuth::start(users).unwrap();
        let mut pending = Vec::new();
        let mut busy = 0;
        for i in 0..(QUEUE + 4) {
            match auth.check(Some(&header("u", &format!("wrong{i}")))) {
                Check::Verify(rx) => pending.push(rx),
                Check::Busy => busy += 1,
                _ => panic!("unexpected verdict"),
            }
        }
        // one being checked, QUEUE waiting, the rest turned away
        assert!(busy >= 3, "{busy} busy");
        for rx in pending {
            assert!(!rx.blocking_recv().unwrap());
        }
    }
}
