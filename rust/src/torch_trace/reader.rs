//! Streaming reader for Kineto Chrome-trace JSON (plain or gzip).
//!
//! The framer reads the file in chunks and finds the top-level keys without building any JSON tree
//! (header values, small, are parsed into JSON values). `traceEvents` is read block by block: each
//! block's events parse in parallel straight from its bytes (`segments`, `quick`), in segments that
//! find their own event boundaries, and are added in file order to compact records (`events`). Only
//! one block is held at a time, so memory follows the events kept, never the JSON text. Input the
//! fast path does not vouch for (bad JSON, a truncated file) goes through the framing path, which
//! frames each event first and reports the error precisely.

use super::codes;
use super::codes as generic;
use super::events::Events;
use super::framer::{shown_byte, Framer, Sizes};
use crate::error::{Error, Result};
use serde_json::Value;
use std::collections::BTreeMap;
use std::io::{BufReader, Read};
use std::path::Path;

const SIZES: Sizes = Sizes {
    chunk: 4 << 20,
    block: 16 << 20,
    segment: 512 << 10,
    gap: 1 << 20,
    longest: 256 << 20,
};

/// The header keys (everything but `traceEvents`) and the events of one trace file.
pub struct ReadTrace {
    pub header: BTreeMap<String, Value>,
    pub events: Events,
    pub compressed: bool,
}

/// Reads one trace file; `.gz` is recognised by its magic bytes, not its name. A file that changes
/// while it is read (size, mtime or inode differ after the read) is an error, never a mixed answer.
pub fn read_path(path: &Path) -> Result<ReadTrace> {
    let version = crate::identity::Unchanged::of(path)?;
    let file = crate::identity::open_regular(path)?;
    read_file(path, file, &version)
}

/// Reads an opened trace file, then checks it is still the version `version` recorded.
fn read_file<R: Read + Send>(
    path: &Path,
    mut file: R,
    version: &crate::identity::Unchanged,
) -> Result<ReadTrace> {
    let shown = path.display().to_string();
    let mut magic = [0_u8; 2];
    let got = read_up_to(&mut file, &mut magic).map_err(|e| Error::io(path, &e))?;
    let head = magic.get(..got).unwrap_or(&[]);
    let compressed = head == [0x1f, 0x8b];
    let prefix = std::io::Cursor::new(head.to_vec());
    let plain = prefix.chain(file);
    let result = if compressed {
        read_stream(super::gzip::Members::new(BufReader::new(plain)), &shown)
    } else {
        read_stream(plain, &shown)
    };
    // A change is the real cause of whatever else went wrong (a truncation, bad JSON), so it wins.
    version.check(path)?;
    result
        .map(|(header, events)| ReadTrace {
            header,
            events,
            compressed,
        })
        .map_err(|e| {
            if e.path.is_none() {
                e.with_path(shown)
            } else {
                e
            }
        })
}

fn read_up_to(reader: &mut impl Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut filled = 0;
    while let Some(rest) = buf.get_mut(filled..) {
        if rest.is_empty() {
            break;
        }
        match reader.read(rest) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

/// Reads a whole trace from any byte stream.
pub fn read_stream<R: Read + Send>(
    reader: R,
    shown: &str,
) -> Result<(BTreeMap<String, Value>, Events)> {
    read_stream_with(reader, shown, true, SIZES)
}

fn read_stream_with<R: Read + Send>(
    reader: R,
    shown: &str,
    fast: bool,
    sizes: Sizes,
) -> Result<(BTreeMap<String, Value>, Events)> {
    let mut framer = Framer {
        reader,
        buf: Vec::with_capacity(sizes.block + sizes.chunk),
        sizes,
        pos: 0,
        eof: false,
        pending: None,
        base: 0,
        shown: shown.to_owned(),
        fast,
    };
    let mut events = Events::default();
    let header = framer.document(&mut events)?;
    Ok((header, events))
}

fn duplicate_header_key(key: &str) -> Error {
    Error::input(
        codes::DUPLICATE_KEY,
        format!("the top-level key `{key}` appears twice"),
    )
    .with_expected("each key once per JSON object")
    .with_observed(format!("`{key}` repeated"))
}

impl<R: Read + Send> Framer<R> {
    /// Reads the whole document: header values are parsed here, `traceEvents` goes into `events`.
    fn document(&mut self, events: &mut Events) -> Result<BTreeMap<String, Value>> {
        self.skip_bom()?;
        let mut header = BTreeMap::new();
        let mut saw_events = false;
        match self.peek()? {
            Some(b'{') => self.pos += 1,
            Some(b'[') => {
                return Err(Error::input(
                    generic::FORMAT_INVALID,
                    "the file is a JSON array; a Kineto trace is a JSON object with `traceEvents`",
                )
                .with_expected("{\"schemaVersion\": 1, \"traceEvents\": [...], ...}")
                .with_observed("a top-level JSON array"))
            }
            Some(other) => {
                return Err(self.syntax(format!("expected `{{`, found {}", shown_byte(other))))
            }
            None => return Err(self.truncated("the file is empty")),
        }
        if self.peek()? == Some(b'}') {
            self.pos += 1;
        } else {
            loop {
                let key = self.key()?;
                if key == "traceEvents" {
                    if saw_events {
                        return Err(duplicate_header_key(&key));
                    }
                    saw_events = true;
                    self.events(events)?;
                } else {
                    let value = self.header_value()?;
                    if header.insert(key.clone(), value).is_some() {
                        return Err(duplicate_header_key(&key));
                    }
                }
                match self.peek()? {
                    Some(b',') => self.pos += 1,
                    Some(b'}') => {
                        self.pos += 1;
                        break;
                    }
                    Some(other) => {
                        return Err(self.syntax(format!(
                            "expected `,` or `}}` after a key's value, found {}",
                            shown_byte(other)
                        )))
                    }
                    None => return Err(self.truncated("the top-level object is not closed")),
                }
            }
        }
        if let Some(other) = self.peek()? {
            return Err(self.syntax(format!(
                "content after the end of the JSON object: {}",
                shown_byte(other)
            )));
        }
        if !saw_events {
            return Err(
                Error::input(codes::EVENTS_MISSING, "the trace has no `traceEvents` key")
                    .with_expected("a top-level `traceEvents` array"),
            );
        }
        Ok(header)
    }

    /// Reads the `traceEvents` array into `events`.
    fn events(&mut self, events: &mut Events) -> Result<()> {
        match self.peek()? {
            Some(b'[') => self.pos += 1,
            Some(other) => {
                let observed = match other {
                    b'{' => "an object",
                    b'"' => "a string",
                    b'n' => "null",
                    b't' | b'f' => "a boolean",
                    _ => "a number or other value",
                };
                return Err(Error::input(
                    codes::EVENTS_NOT_ARRAY,
                    format!("`traceEvents` is {observed}, not an array"),
                )
                .with_expected("`traceEvents` as a JSON array of event objects")
                .with_observed(observed));
            }
            None => return Err(self.truncated("the `traceEvents` value is missing")),
        }
        if self.peek()? == Some(b']') {
            self.pos += 1;
            return Ok(());
        }
        if !self.fast {
            return self.events_framed(0, events);
        }
        match self.events_fast(events)? {
            Some(index) => self.events_framed(index, events),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
#[path = "tests_reader.rs"]
mod tests;
