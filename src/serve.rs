//! `schedtop serve`: the sampler takes a Sample every interval on its own
//! thread and folds it into the exporter's totals; scrapes of /metrics
//! read the newest totals (rendered at most once per Sample) and never
//! make the sampler drain. Stops on SIGINT/SIGTERM.
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;

use anyhow::Result;
use hyper::body::Bytes;

use crate::collect::sampler::{self, Flow, Limits};
use crate::collect::sink::{Fanout, Sink};
use crate::collect::{LiveOptions, LiveSource, Source};
use crate::export::openmetrics::{render, ExportOptions};
use crate::export::openmetrics_encode::{
    to_prometheus_text, wants_prometheus_text, OPENMETRICS_TYPE, PROMETHEUS_TYPE,
};
use crate::export::openmetrics_totals::Totals;
use crate::model::shared_interval::Interval;
use crate::model::HostInfo;
use crate::record::black_box::{BlackBox, DirPolicy};
use crate::record::dir_writer::BlackBoxSink;

use crate::serve_http::{self, web_config, Answer, Asked, HttpLimits};
use crate::util::signals;

/// The port `schedtop serve` listens on unless told (docs/serve.md).
pub const DEFAULT_LISTEN: &str = "127.0.0.1:9717";

pub struct ServeOptions {
    pub listen: String,
    pub live: LiveOptions,
    pub export: ExportOptions,
    pub http: HttpLimits,
    /// `--web-config`: TLS and basic authentication (exporter-toolkit's format)
    pub web_config: Option<std::path::PathBuf>,
    /// `--record-dir`: the black box, fed the same Samples
    pub black_box: Option<(std::path::PathBuf, DirPolicy)>,
}

const INDEX: &str = "<!DOCTYPE html>\n<html><head><title>schedtop</title></head><body>\n\
<h1>schedtop</h1>\n<p>Scheduler metrics for Prometheus: <a href=\"/metrics\">/metrics</a> \
(OpenMetrics; Prometheus text when asked with <code>Accept: text/plain</code>).</p>\n</body></html>\n";

/// The rendered answer for one generation of the totals.
#[derive(Default)]
struct Cache {
    generation: u64,
    openmetrics: Bytes,
    text: Option<Bytes>,
    /// the newest Sample's monotonic time at the last render: where the
    /// next run-queue window starts
    since_mono: u64,
}

/// The answer for a request, from the shared totals.
fn answer(
    asked: &Asked,
    totals: &Mutex<Option<Totals>>,
    cache: &Mutex<Cache>,
    export: &ExportOptions,
) -> Answer {
    match asked.path {
        "/" => Answer {
            status: 200,
            content_type: "text/html; charset=utf-8",
            body: Bytes::from_static(INDEX.as_bytes()),
        },
        "/metrics" => {
            let mut c = cache.lock().unwrap_or_else(|e| e.into_inner());
            {
                let t = totals.lock().unwrap_or_else(|e| e.into_inner());
                let Some(t) = t.as_ref().filter(|t| t.samples > 0) else {
                    return Answer::text(503, "no Sample taken yet; try again in a second\n");
                };
                if t.generation != c.generation {
                    let since = c.since_mono;
                    c.openmetrics = Bytes::from(render(t, export, since));
                    c.text = None;
                    c.generation = t.generation;
                    c.since_mono = t.latest.as_ref().map_or(0, |s| s.mono_ns);
                }
            }
            if wants_prometheus_text(asked.accept) {
                let om = c.openmetrics.clone();
                let text = c.text.get_or_insert_with(|| {
                    Bytes::from(to_prometheus_text(std::str::from_utf8(&om).unwrap_or("")))
                });
                Answer {
                    status: 200,
                    content_type: PROMETHEUS_TYPE,
                    body: text.clone(),
                }
            } else {
                Answer {
                    status: 200,
                    content_type: OPENMETRICS_TYPE,
                    body: c.openmetrics.clone(),
                }
            }
        }
        _ => Answer::text(404, "not found: the metrics are at /metrics\n"),
    }
}

pub fn run(o: &ServeOptions) -> Result<()> {
    run_with(o, Vec::new())
}

/// The exporter as a sink: each Interval folded into the shared totals,
/// which scrapes read.
struct Exporter {
    totals: Arc<Mutex<Option<Totals>>>,
}

impl Sink for Exporter {
    fn take(&mut self, _: &HostInfo, iv: &Arc<Interval>) -> Result<Flow> {
        // everything it exports, CPU pressure included, comes from the
        // Interval: no sink reads the kernel
        let mut t = self.totals.lock().unwrap_or_else(|e| e.into_inner());
        let t = t.as_mut().expect("set before sampling");
        t.take(iv);
        Ok(Flow::Continue)
    }

    fn missed(&mut self, e: &anyhow::Error) -> bool {
        let mut t = self.totals.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(t) = t.as_mut() {
            t.note_error();
        }
        crate::say!("schedtop: taking a Sample failed: {e:#}");
        true
    }
}

/// `run`, with `more` sinks (`--trigger`'s incident watch) fed the same
/// Intervals on the sampler thread, after the black box and before the
/// exporter's totals (a bundle being written does not hold up a scrape's
/// lock).
pub fn run_with(o: &ServeOptions, more: Vec<Box<dyn Sink + Send>>) -> Result<()> {
    for &pid in &o.live.pid_filter {
        if !std::path::Path::new(&format!("/proc/{pid}")).exists() {
            anyhow::bail!("no process with pid {pid}");
        }
    }
    // the web config and the port first: a broken file or a port in use is
    // the likeliest mistake, say it before loading any probe
    let web = match &o.web_config {
        Some(path) => web_config::load(path)?,
        None => web_config::WebConfig::none(),
    };
    let listener = serve_http::bind(&o.listen)?;
    let addr = listener.local_addr()?;
    let (tls, auth) = (web.tls.is_some(), !web.users.is_empty());
    if let Some(warning) = web_config::exposure_warning(addr, tls, auth) {
        crate::say!("schedtop: {warning}");
    }
    let access = serve_http::Access::new(web)?;
    // the black box's directory is locked before any probe loads: a
    // directory another recorder holds is refused at once
    let black_box = match &o.black_box {
        Some((dir, policy)) => Some(BlackBox::open(dir, policy.clone())?),
        None => None,
    };
    if let Some(bb) = &black_box {
        crate::say!(
            "schedtop: recording to {} every {} s, {}",
            bb.dir().display(),
            o.live.interval_ns as f64 / 1e9,
            bb.describe()
        );
    }
    signals::stop_on(&[libc::SIGINT, libc::SIGTERM]);
    let totals: Arc<Mutex<Option<Totals>>> = Arc::new(Mutex::new(None));
    let failed = Arc::new(AtomicBool::new(false));
    let (ready_tx, ready_rx) = mpsc::channel();
    let sampler = {
        let totals = totals.clone();
        let failed = failed.clone();
        let live = o.live.clone();
        // the source is opened on the thread that uses it (BPF handles stay there)
        std::thread::Builder::new()
            .name("sampler".into())
            .spawn(move || -> Result<()> {
                let mut source = match LiveSource::open(&live) {
                    Ok(s) => s,
                    Err(e) => {
                        let _ = ready_tx.send(Err(e));
                        return Ok(());
                    }
                };
                let host = Source::host(&source).clone();
                *totals.lock().unwrap_or_else(|e| e.into_inner()) = Some(Totals::new(host.clone()));
                let _ = ready_tx.send(Ok(host.clone()));
                // one Interval per Sample for all of them; the black box
                // first: a Sample is on disk before anything else can go
                // wrong with it
                let mut fan = Fanout::new(host);
                if let Some(bb) = black_box {
                    fan.add(Box::new(BlackBoxSink::beside(bb)));
                }
                for sink in more {
                    fan.add(sink);
                }
                fan.add(Box::new(Exporter { totals }));
                let stop = || signals::stop_requested();
                let r = fan.run(
                    &mut source,
                    live.interval_ns,
                    Limits::default(),
                    sampler::sleep_until(stop),
                );
                if r.is_err() {
                    failed.store(true, Ordering::SeqCst);
                }
                r.map(|_| ())
            })?
    };
    let host = match ready_rx.recv() {
        Ok(Ok(h)) => h,
        Ok(Err(e)) => return Err(e),
        Err(_) => {
            return sampler
                .join()
                .unwrap_or_else(|_| anyhow::bail!("the sampler panicked"))
        }
    };
    if let Some(reason) = &host.degraded_reason {
        crate::say!("schedtop: {reason}");
    }
    // the probes are attached: what loaded them is no longer needed
    let bpf = host.source == crate::model::SourceKind::Bpf;
    match crate::util::privileges::drop_after_attach(bpf) {
        Ok(kept) => crate::say!("schedtop: {kept}"),
        Err(e) => crate::say!("schedtop: warning: capabilities not dropped: {e:#}"),
    }
    crate::say!(
        "schedtop: serving {}://{addr}/metrics{}, a Sample every {} s ({} source)",
        if tls { "https" } else { "http" },
        if auth { " (basic auth)" } else { "" },
        o.live.interval_ns as f64 / 1e9,
        host.source.as_str()
    );
    let cache = Arc::new(Mutex::new(Cache::default()));
    let export = o.export.clone();
    let handler_totals = totals.clone();
    let handler: serve_http::Handler =
        Arc::new(move |asked: &Asked| answer(asked, &handler_totals, &cache, &export));
    let stop_http = {
        let failed = failed.clone();
        move || signals::stop_requested() || failed.load(Ordering::SeqCst)
    };
    let served = serve_http::serve(
        listener,
        handler,
        o.http,
        access,
        stop_http,
        Duration::from_secs(2),
    );
    // the sampler stops on the same signal (or has failed, with its error)
    let sampled = sampler
        .join()
        .unwrap_or_else(|_| anyhow::bail!("the sampler panicked"));
    served?;
    sampled?;
    crate::say!("schedtop: stopped serving");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Sample, ThreadSample};

    fn shared(samples: u64) -> Mutex<Option<Totals>> {
        let mut t = Totals::new(crate::record::testdata::synthetic_host(&Default::default()));
        for i in 0..samples {
            t.update(Sample {
                mono_ns: i * 1_000_000_000,
                threads: vec![ThreadSample {
                    tid: 1,
                    pid: 1,
                    voluntary: i,
                    ..Default::default()
                }]
                .into(),
                ..Default::default()
            });
        }
        Mutex::new(Some(t))
    }

    fn ask<'a>(path: &'a str, accept: Option<&'a str>) -> Asked<'a> {
        Asked { path, accept }
    }

    #[test]
    fn paths_formats_and_renders_once_per_sample() {
        let totals = shared(2);
        let cache = Mutex::new(Cache::default());
        let o = ExportOptions::default();
        let a = answer(&ask("/", None), &totals, &cache, &o);
        assert_eq!(a.status, 200);
        assert!(std::str::from_utf8(&a.body).unwrap().contains("/metrics"));
        assert_eq!(answer(&ask("/nope", None), &totals, &cache, &o).status, 404);
        let m = answer(&ask("/metrics", None), &totals, &cache, &o);
        assert_eq!((m.status, m.content_type), (200, OPENMETRICS_TYPE));
        assert!(m.body.ends_with(b"# EOF\n"));
        let t = answer(&ask("/metrics", Some("text/plain")), &totals, &cache, &o);
        assert_eq!(t.content_type, PROMETHEUS_TYPE);
        assert!(!t.body.ends_with(b"# EOF\n"));
        // a second scrape of the same Sample shares the rendered bytes
        let again = answer(&ask("/metrics", None), &totals, &cache, &o);
        assert_eq!(again.body.as_ptr(), m.body.as_ptr());
        totals
            .lock()
            .unwrap()
            .as_mut()
            .unwrap()
            .update(Sample::default());
        let next = answer(&ask("/metrics", None), &totals, &cache, &o);
        assert_ne!(next.body.as_ptr(), m.body.as_ptr());
    }

    #[test]
    fn before_the_first_sample_the_answer_is_503() {
        let totals = shared(0);
        let cache = Mutex::new(Cache::default());
        let a = answer(
            &ask("/metrics", None),
            &totals,
            &cache,
            &ExportOptions::default(),
        );
        assert_eq!(a.status, 503);
    }
}
