//! The framing path of the trace reader (`reader`): each event of `traceEvents` framed first (its
//! bytes found with the framer), then a batch of them parsed in parallel by the serde reader and
//! added in file order. It reads what the fast path (`blocks`) does not vouch for, and its errors
//! name the event and the byte.

use super::codes;
use super::codes as generic;
use super::events::Events;
use super::framer::{serde_text, shown_byte, Framer};
use super::serde_reader::{parse_event, parse_event_str};
use crate::error::{Error, Result};
use rayon::prelude::*;
use std::io::Read;

/// Event bytes framed into one batch before it is parsed (framing path).
const BATCH: usize = 8 << 20;

/// Parses framed events in parallel, then adds them in file order; the error names the event.
/// `ranges` index `bytes`, whose first byte is at offset `base` of the stream; `first` numbers them.
fn ingest(
    bytes: &[u8],
    ranges: &[(usize, usize)],
    first: u64,
    base: u64,
    shown: &str,
    events: &mut Events,
) -> Result<()> {
    // One UTF-8 check for the whole batch (an ASCII fast path), then each event is parsed as text.
    // A batch that is not UTF-8 is parsed from bytes, so the error names the event and byte.
    let text = std::str::from_utf8(bytes).ok();
    let parsed: Vec<_> = ranges
        .par_iter()
        .with_min_len(256)
        .map(|&(s, e)| match text.and_then(|t| t.get(s..e)) {
            Some(event) => parse_event_str(event),
            None => parse_event(bytes.get(s..e).unwrap_or_default()),
        })
        .collect();
    for (k, (result, &(s, _))) in parsed.iter().zip(ranges).enumerate() {
        let index = first + k as u64;
        match result {
            Ok(event) => events.push(index, event)?,
            Err(e) => return Err(event_json_error(shown, index, base + s as u64, e)),
        }
    }
    Ok(())
}

fn event_json_error(shown: &str, index: u64, at: u64, e: &serde_json::Error) -> Error {
    use serde_json::error::Category;
    match e.classify() {
        Category::Data => Error::input(
            codes::EVENT_INVALID,
            format!("{shown}: event {index} (byte {at}): {}", serde_text(e)),
        )
        .with_expected("a trace event object with string `ph`/`cat`/`name`, numeric `ts`/`dur`"),
        Category::Eof => Error::input(
            generic::FILE_TRUNCATED,
            format!(
                "{shown}: event {index} (byte {at}) ends early: {}",
                serde_text(e)
            ),
        ),
        Category::Syntax | Category::Io => Error::input(
            generic::FORMAT_INVALID,
            format!(
                "{shown}: event {index} (byte {at}) is not valid JSON: {}",
                serde_text(e)
            ),
        )
        .with_expected("strict JSON (no NaN or Infinity)"),
    }
}

impl<R: Read + Send> Framer<R> {
    /// The framing path: frames the rest of the array (from the event at `pos`, numbered `index`)
    /// batch by batch, each parsed in parallel once framed.
    pub(super) fn events_framed(&mut self, mut index: u64, events: &mut Events) -> Result<()> {
        loop {
            self.compact();
            let mut ranges: Vec<(usize, usize)> = Vec::new();
            let batch_start = self.pos;
            let mut done = false;
            while self.pos - batch_start < BATCH {
                if self.peek()?.is_none() {
                    return Err(self.truncated("`traceEvents` is not closed"));
                }
                let start = self.pos;
                let end = self.value_end(start)?;
                ranges.push((start, end));
                self.pos = end;
                match self.peek()? {
                    Some(b',') => {
                        self.pos += 1;
                        if self.peek()? == Some(b']') {
                            return Err(self.syntax("a trailing comma before `]`".into()));
                        }
                    }
                    Some(b']') => {
                        self.pos += 1;
                        done = true;
                        break;
                    }
                    Some(other) => {
                        return Err(self.syntax(format!(
                            "expected `,` or `]` between events, found {}",
                            shown_byte(other)
                        )))
                    }
                    None => return Err(self.truncated("`traceEvents` is not closed")),
                }
            }
            let bytes = self.buf.get(..self.pos).unwrap_or_default();
            ingest(bytes, &ranges, index, self.base, &self.shown, events)?;
            index += ranges.len() as u64;
            if done {
                return Ok(());
            }
        }
    }
}
