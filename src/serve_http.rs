//! The HTTP side of `schedtop serve` (hyper, HTTP/1.1, one thread), with
//! TLS (rustls) and basic authentication when `--web-config` asks.
//! Every request's cost is bounded: headers up to 16 KiB; a connection
//! that has not finished its TLS handshake or its request's headers 5 s
//! after it connected or after its last answer is closed (so 5 s is also
//! the keep-alive idle time); at most 64 connections at once, and at the
//! cap a new one closes the one that has waited longest (conns.rs), so
//! idle and slow clients can never keep a scraper out; 30 s per
//! connection in all; request bodies never read; and the answer is the
//! exposition already rendered for the newest Sample (shared bytes, not a
//! copy), so a request flood costs neither Samples nor renders.
mod auth;
mod conns;
pub mod web_config;

use std::convert::Infallible;
use std::future::Future;
use std::net::TcpListener;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use anyhow::Result;
use http_body_util::Full;
use hyper::body::{Body, Bytes, Frame, SizeHint};
use hyper::header::HeaderValue;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};

use auth::Check;
use conns::Conns;

#[derive(Clone, Copy, Debug)]
pub struct HttpLimits {
    pub max_connections: usize,
    pub header_timeout: Duration,
    pub connection_timeout: Duration,
    pub max_header_bytes: usize,
}

impl Default for HttpLimits {
    fn default() -> Self {
        HttpLimits {
            max_connections: 64,
            header_timeout: Duration::from_secs(5),
            connection_timeout: Duration::from_secs(30),
            max_header_bytes: 16 << 10,
        }
    }
}

/// What a request asked for, as the handler needs it.
pub struct Asked<'a> {
    pub path: &'a str,
    pub accept: Option<&'a str>,
}

/// An answer: status, content type, body.
pub struct Answer {
    pub status: u16,
    pub content_type: &'static str,
    pub body: Bytes,
}

impl Answer {
    pub fn text(status: u16, body: impl Into<String>) -> Answer {
        Answer {
            status,
            content_type: "text/plain; charset=utf-8",
            body: Bytes::from(body.into()),
        }
    }
}

pub type Handler = Arc<dyn Fn(&Asked) -> Answer + Send + Sync>;

/// Bind `addr`, with a one-line error that says what to do.
pub fn bind(addr: &str) -> Result<TcpListener> {
    let l = TcpListener::bind(addr).map_err(|e| match e.kind() {
        std::io::ErrorKind::AddrInUse => anyhow::anyhow!(
            "cannot listen on {addr}: the address is in use (another schedtop serve or exporter?); choose one with --listen"
        ),
        std::io::ErrorKind::PermissionDenied => anyhow::anyhow!(
            "cannot listen on {addr}: permission denied (ports below 1024 need privileges)"
        ),
        _ => anyhow::anyhow!("cannot listen on {addr}: {e}"),
    })?;
    l.set_nonblocking(true)
        .map_err(|e| anyhow::anyhow!("making the listening socket non-blocking: {e}"))?;
    Ok(l)
}

/// What `--web-config` turned on: TLS, basic authentication, neither or both.
#[derive(Default)]
pub struct Access {
    pub tls: Option<Arc<rustls::ServerConfig>>,
    pub auth: Option<BasicAuth>,
}

impl Access {
    /// From a checked web config; starts the password-check thread when
    /// there are users.
    pub fn new(config: web_config::WebConfig) -> Result<Access> {
        let auth = if config.users.is_empty() {
            None
        } else {
            Some(BasicAuth::start(config.users)?)
        };
        Ok(Access {
            tls: config.tls,
            auth,
        })
    }
}

pub use auth::BasicAuth;

/// What every connection's task shares.
struct Shared {
    handler: Handler,
    closing: AtomicBool,
    auth: Option<BasicAuth>,
    conns: Conns,
    limits: HttpLimits,
}

/// An answer's body; when hyper has taken it all (the answer is in the
/// socket's hands), the connection counts as waiting again.
struct Tracked {
    body: Full<Bytes>,
    _done: Done,
}

struct Done {
    shared: Arc<Shared>,
    id: u64,
}

impl Drop for Done {
    fn drop(&mut self) {
        self.shared.conns.waiting(self.id, Instant::now());
    }
}

impl Body for Tracked {
    type Data = Bytes;
    type Error = Infallible;
    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        Pin::new(&mut self.get_mut().body).poll_frame(cx)
    }
    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }
    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

async fn answer(shared: &Shared, req: &Request<hyper::body::Incoming>) -> Answer {
    if shared.closing.load(Ordering::SeqCst) {
        return Answer::text(503, "schedtop is shutting down\n");
    }
    if let Some(auth) = &shared.auth {
        let given = req
            .headers()
            .get(hyper::header::AUTHORIZATION)
            .map(|v| v.as_bytes());
        let allowed = match auth.check(given) {
            Check::Allowed => true,
            Check::Denied => false,
            Check::Verify(verdict) => verdict.await.unwrap_or(false),
            Check::Busy => {
                return Answer::text(503, "busy checking passwords; try again in a second\n")
            }
        };
        if !allowed {
            return Answer::text(
                401,
                "unauthorized: this exporter needs a user and password\n",
            );
        }
    }
    if req.method() != Method::GET && req.method() != Method::HEAD {
        return Answer::text(405, "only GET and HEAD\n");
    }
    let accept = req
        .headers()
        .get(hyper::header::ACCEPT)
        .and_then(|v| v.to_str().ok());
    (shared.handler)(&Asked {
        path: req.uri().path(),
        accept,
    })
}

async fn respond(
    shared: Arc<Shared>,
    id: u64,
    req: Request<hyper::body::Incoming>,
) -> Response<Tracked> {
    shared.conns.serving(id);
    let a = answer(&shared, &req).await;
    let done = Done {
        shared: shared.clone(),
        id,
    };
    let mut r = Response::new(Tracked {
        body: Full::new(a.body),
        _done: done,
    });
    *r.status_mut() = StatusCode::from_u16(a.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let h = r.headers_mut();
    if let Ok(v) = HeaderValue::from_str(a.content_type) {
        h.insert(hyper::header::CONTENT_TYPE, v);
    }
    match a.status {
        405 => {
            h.insert(hyper::header::ALLOW, HeaderValue::from_static("GET, HEAD"));
        }
        401 => {
            h.insert(
                hyper::header::WWW_AUTHENTICATE,
                HeaderValue::from_static("Basic realm=\"schedtop\""),
            );
        }
        503 => {
            h.insert(hyper::header::RETRY_AFTER, HeaderValue::from_static("1"));
        }
        _ => {}
    }
    r
}

/// HTTP/1.1 on one connection (plain or TLS) until it ends.
async fn http1<I>(io: I, shared: Arc<Shared>, id: u64)
where
    I: hyper::rt::Read + hyper::rt::Write + Unpin + Send + 'static,
{
    let limits = shared.limits;
    let service = hyper::service::service_fn(move |req| {
        let shared = shared.clone();
        async move { Ok::<_, Infallible>(respond(shared, id, req).await) }
    });
    let _ = hyper::server::conn::http1::Builder::new()
        .timer(TokioTimer::new())
        // hyper starts this clock when it begins to wait for a request's
        // headers: after the accept and after each answer, so it is also
        // the keep-alive idle timeout
        .header_read_timeout(limits.header_timeout)
        .max_buf_size(limits.max_header_bytes.max(8192))
        .serve_connection(io, service)
        .await;
}

/// A TLS record starts with 22 (handshake); "GET ..." does not. None when
/// the client said nothing in time or hung up.
async fn starts_with_tls(stream: &tokio::net::TcpStream, within: Duration) -> Option<bool> {
    let mut first = [0u8; 1];
    match tokio::time::timeout(within, stream.peek(&mut first)).await {
        Ok(Ok(1)) => Some(first[0] == 0x16),
        _ => None,
    }
}

/// Plain HTTP on the TLS port: one 400 that says so, instead of a TLS alert
/// the client would show as garbage.
async fn refuse_plain_http(stream: tokio::net::TcpStream) {
    const BODY: &str = "this port speaks HTTPS: scrape it with https://\n";
    let reply = format!(
        "HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{BODY}",
        BODY.len()
    );
    if stream.writable().await.is_err() || stream.try_write(reply.as_bytes()).is_err() {
        return;
    }
    // read what the client sent before closing: closing with unread bytes
    // sends a reset, which can destroy the answer before the client reads it
    let Ok(std) = stream.into_std() else { return };
    let _ = std.shutdown(std::net::Shutdown::Write);
    let Ok(stream) = tokio::net::TcpStream::from_std(std) else {
        return;
    };
    let mut sink = [0u8; 4096];
    let deadline = Instant::now() + Duration::from_secs(1);
    for _ in 0..16 {
        let left = deadline.saturating_duration_since(Instant::now());
        match tokio::time::timeout(left, stream.readable()).await {
            Ok(Ok(())) => match stream.try_read(&mut sink) {
                Ok(0) => return,
                Ok(_) => {}
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                Err(_) => return,
            },
            _ => return,
        }
    }
}

/// One connection from accept to close: `close` (its place given to a
/// newer one), the connection's time limit or the peer ends it.
async fn connection(
    stream: tokio::net::TcpStream,
    shared: Arc<Shared>,
    tls: Option<tokio_rustls::TlsAcceptor>,
    admitted: conns::Admitted,
) {
    let limits = shared.limits;
    let id = admitted.id;
    let work = {
        let shared = shared.clone();
        async move {
            let Some(tls) = tls else {
                return http1(TokioIo::new(stream), shared, id).await;
            };
            match starts_with_tls(&stream, limits.header_timeout).await {
                Some(true) => {}
                Some(false) => return refuse_plain_http(stream).await,
                None => return,
            }
            if let Ok(Ok(stream)) =
                tokio::time::timeout(limits.header_timeout, tls.accept(stream)).await
            {
                http1(TokioIo::new(stream), shared, id).await;
            }
        }
    };
    let close = admitted.close.notified();
    let _ = tokio::time::timeout(limits.connection_timeout, until(work, close)).await;
    shared.conns.gone(id);
}

/// `work`, or nothing once `stop` is ready first.
async fn until(work: impl Future<Output = ()>, stop: impl Future<Output = ()>) {
    let mut work = std::pin::pin!(work);
    let mut stop = std::pin::pin!(stop);
    std::future::poll_fn(|cx| {
        if stop.as_mut().poll(cx).is_ready() {
            return Poll::Ready(());
        }
        work.as_mut().poll(cx)
    })
    .await
}

/// Serve until `stop` is set, then stop accepting, answer 503 to requests
/// still arriving on open connections, and give those up to `drain` to end.
pub fn serve(
    listener: TcpListener,
    handler: Handler,
    limits: HttpLimits,
    access: Access,
    stop: impl Fn() -> bool,
    drain: Duration,
) -> Result<()> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .enable_time()
        .build()
        .map_err(|e| anyhow::anyhow!("starting the HTTP runtime: {e}"))?;
    let tls = access.tls.map(tokio_rustls::TlsAcceptor::from);
    let shared = Arc::new(Shared {
        handler,
        closing: AtomicBool::new(false),
        auth: access.auth,
        conns: Conns::new(limits.max_connections),
        limits,
    });
    rt.block_on(async {
        let listener = tokio::net::TcpListener::from_std(listener)?;
        while !stop() {
            let accepted =
                tokio::time::timeout(Duration::from_millis(100), listener.accept()).await;
            let stream = match accepted {
                Err(_) => continue,
                Ok(Ok((stream, _))) => stream,
                // out of file descriptors and the like: wait, go on
                Ok(Err(_)) => {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            };
            let Some(admitted) = shared.conns.admit(Instant::now()) else {
                // every place is busy answering: closed at once
                drop(stream);
                continue;
            };
            tokio::spawn(connection(stream, shared.clone(), tls.clone(), admitted));
            // let the new connection read its request before the next
            // accept: in a burst of connections a scraper's request is
            // then seen (and its connection serving) before a later
            // arrival could take its place
            tokio::task::yield_now().await;
        }
        drop(listener);
        shared.closing.store(true, Ordering::SeqCst);
        let t0 = Instant::now();
        while shared.conns.open() > 0 && t0.elapsed() < drain {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        shared.conns.close_all();
        Ok::<_, anyhow::Error>(())
    })
}
