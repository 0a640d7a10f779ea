//! The HTTP side of `schedtop serve` (hyper, HTTP/1.1, one thread).
//! Every request's cost is bounded: headers up to 16 KiB and 5 s to
//! arrive, at most 64 connections at once (more are closed as they come),
//! 30 s per connection in all, request bodies never read, and the answer
//! is the exposition already rendered for the newest Sample (shared
//! bytes, not a copy), so a request flood costs neither Samples nor
//! renders.
use std::convert::Infallible;
use std::net::TcpListener;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};
use http_body_util::Full;
use hyper::body::Bytes;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};

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
        .context("making the listening socket non-blocking")?;
    Ok(l)
}

fn respond(
    handler: &Handler,
    closing: &AtomicBool,
    req: &Request<hyper::body::Incoming>,
) -> Response<Full<Bytes>> {
    let a = if closing.load(Ordering::SeqCst) {
        Answer::text(503, "schedtop is shutting down\n")
    } else if req.method() != Method::GET && req.method() != Method::HEAD {
        Answer::text(405, "only GET and HEAD\n")
    } else {
        let accept = req
            .headers()
            .get(hyper::header::ACCEPT)
            .and_then(|v| v.to_str().ok());
        handler(&Asked {
            path: req.uri().path(),
            accept,
        })
    };
    let mut r = Response::new(Full::new(a.body));
    *r.status_mut() = StatusCode::from_u16(a.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    if let Ok(v) = hyper::header::HeaderValue::from_str(a.content_type) {
        r.headers_mut().insert(hyper::header::CONTENT_TYPE, v);
    }
    if a.status == 405 {
        r.headers_mut().insert(
            hyper::header::ALLOW,
            hyper::header::HeaderValue::from_static("GET, HEAD"),
        );
    }
    r
}

/// Serve until `stop` is set, then stop accepting, answer 503 to requests
/// still arriving on open connections, and give those up to `drain` to end.
pub fn serve(
    listener: TcpListener,
    handler: Handler,
    limits: HttpLimits,
    stop: impl Fn() -> bool,
    drain: Duration,
) -> Result<()> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .enable_time()
        .build()
        .context("starting the HTTP runtime")?;
    let closing = Arc::new(AtomicBool::new(false));
    let slots = Arc::new(tokio::sync::Semaphore::new(limits.max_connections));
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
            let Ok(slot) = slots.clone().try_acquire_owned() else {
                // over the connection cap: closed at once
                drop(stream);
                continue;
            };
            let handler = handler.clone();
            let closing = closing.clone();
            tokio::spawn(async move {
                let service = hyper::service::service_fn(move |req| {
                    let r = respond(&handler, &closing, &req);
                    async move { Ok::<_, Infallible>(r) }
                });
                let conn = hyper::server::conn::http1::Builder::new()
                    .timer(TokioTimer::new())
                    .header_read_timeout(limits.header_timeout)
                    .max_buf_size(limits.max_header_bytes.max(8192))
                    .serve_connection(TokioIo::new(stream), service);
                let _ = tokio::time::timeout(limits.connection_timeout, conn).await;
                drop(slot);
            });
        }
        drop(listener);
        closing.store(true, Ordering::SeqCst);
        let all = limits.max_connections as u32;
        let _ = tokio::time::timeout(drain, slots.acquire_many(all)).await;
        Ok::<_, anyhow::Error>(())
    })
}
