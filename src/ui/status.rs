//! A one-line message for the user on the bottom line ("saved …", or what
//! went wrong), until the next key or a few seconds pass (run.rs).
use std::time::Duration;

use ratatui::text::{Line, Span};

use super::format::escape_name;
use super::theme;

/// How long the event loop leaves a message on screen.
pub const SHOWN_FOR: Duration = Duration::from_secs(6);

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Status {
    pub text: String,
    pub error: bool,
}

impl Status {
    pub fn info(text: impl Into<String>) -> Status {
        Status {
            text: text.into(),
            error: false,
        }
    }

    pub fn error(text: impl Into<String>) -> Status {
        Status {
            text: text.into(),
            error: true,
        }
    }

    /// The bottom line showing it (control characters escaped).
    pub fn line(&self) -> Line<'static> {
        let style = if self.error {
            theme::error()
        } else {
            theme::warning()
        };
        Line::from(Span::styled(escape_name(&self.text), style))
    }
}
