//! `schedtop record -o FILE`: headless, suitable for a systemd unit; the
//! recording file as a sink of the shell's sampler, appending each Sample.
//! Stops at `--max-size` (the shell stops it on SIGINT/SIGTERM/SIGHUP and
//! after `--duration`), writing the closing index. SIGKILL loses nothing
//! already written (writer.rs).
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Result;

use super::black_box::left_out_line;
use super::writer::{LeftOut, OpenMode, WriteOptions, Writer, Written};
use crate::collect::sampler::Flow;
use crate::collect::sink::Sink;
use crate::model::shared_interval::Interval;
use crate::model::HostInfo;

pub struct FileRecorder {
    path: PathBuf,
    w: Option<Writer>,
    samples: u64,
}

impl FileRecorder {
    pub fn open(
        path: &Path,
        host: &HostInfo,
        mode: OpenMode,
        max_size: Option<u64>,
    ) -> Result<FileRecorder> {
        let w = Writer::open(
            path,
            host,
            WriteOptions {
                mode,
                max_size,
                ..Default::default()
            },
        )?;
        Ok(FileRecorder {
            path: path.to_path_buf(),
            w: Some(w),
            samples: 0,
        })
    }
}

impl Sink for FileRecorder {
    fn reads_figures(&self) -> bool {
        false
    }

    fn take(&mut self, _host: &HostInfo, iv: &Arc<Interval>) -> Result<Flow> {
        let Some(w) = self.w.as_mut() else {
            return Ok(Flow::Continue);
        };
        let s = &iv.sample;
        let before = w.left_out();
        if w.write_sample(s)? == Written::Full {
            return Ok(Flow::Stop("reached --max-size"));
        }
        if before == LeftOut::default() && w.left_out() != before {
            crate::say!(
                "schedtop: a Sample of {} threads is too large for a frame: {}",
                s.threads.len(),
                left_out_line(&w.left_out())
            );
        }
        self.samples += 1;
        Ok(Flow::Continue)
    }

    fn finish(&mut self, why: &str) -> Result<()> {
        let Some(w) = self.w.take() else {
            return Ok(());
        };
        let size = w.size();
        let left = w.left_out();
        w.finish()?;
        let extra = if left == LeftOut::default() {
            String::new()
        } else {
            format!("; too large for a frame: {}", left_out_line(&left))
        };
        crate::say!(
            "schedtop: {why}: {} samples, {size} bytes in {}{extra}",
            self.samples,
            self.path.display()
        );
        Ok(())
    }
}
