//! Streaming reader for Kineto Chrome-trace JSON (plain or gzip).
//!
//! The framer reads the file in chunks and finds the top-level keys without building any JSON tree
//! (header values, small, are parsed into JSON values). `traceEvents` is read block by block: each
//! block's events parse in parallel straight from its bytes (`segments`, `raw`), in segments that
//! find their own event boundaries, and are added in file order to compact structs (`events`). Only
//! one block is held at a time, so memory follows the events kept, never the JSON text. Input the
//! fast path does not vouch for (bad JSON, a truncated file) goes through the framing path, which
//! frames each event first and reports the error precisely.

use super::codes;
use super::codes as generic;
use super::events::Events;
use super::memo::Memos;
use super::raw::{parse_event, parse_event_str};
use super::segments::{self, End};
use crate::error::{Error, Result};
use rayon::prelude::*;
use serde_json::Value;
use std::collections::BTreeMap;
use std::io::{BufReader, Read};
use std::path::Path;

/// Event bytes framed into one batch before it is parsed (framing path).
const BATCH: usize = 8 << 20;

/// The reader's buffer sizes (tests make them tiny, so that every boundary is crossed often).
#[derive(Debug, Clone, Copy)]
struct Sizes {
    /// Bytes read from the source per refill.
    chunk: usize,
    /// Bytes of `traceEvents` parsed per round of the fast path.
    block: usize,
    /// Bytes per parallel segment of a block: enough segments for the threads to share the block
    /// evenly, each long enough that a segment's guessed start costs nothing beside its parse.
    segment: usize,
    /// Room kept free at the front of the next block's buffer, read while the pool parses this
    /// block: the unfinished event at the end of this block is copied there, just before the bytes
    /// that follow it, so a block's bytes are read once into place and never moved.
    gap: usize,
}

const SIZES: Sizes = Sizes {
    chunk: 4 << 20,
    block: 16 << 20,
    segment: 512 << 10,
    gap: 1 << 20,
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
        read_stream(
            flate2::read::MultiGzDecoder::new(BufReader::new(plain)),
            &shown,
        )
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
            format!("{shown}: event {index} (byte {at}): {e}"),
        )
        .with_expected("a trace event object with string `ph`/`cat`/`name`, numeric `ts`/`dur`"),
        Category::Eof => Error::input(
            generic::FILE_TRUNCATED,
            format!("{shown}: event {index} (byte {at}) ends early: {e}"),
        ),
        Category::Syntax | Category::Io => Error::input(
            generic::FORMAT_INVALID,
            format!("{shown}: event {index} (byte {at}) is not valid JSON: {e}"),
        )
        .with_expected("strict JSON (no NaN or Infinity)"),
    }
}

fn duplicate_header_key(key: &str) -> Error {
    Error::input(
        codes::DUPLICATE_KEY,
        format!("the top-level key `{key}` appears twice"),
    )
    .with_expected("each key once per JSON object")
    .with_observed(format!("`{key}` repeated"))
}

fn shown_byte(b: u8) -> String {
    if b.is_ascii_graphic() {
        format!("`{}`", char::from(b))
    } else {
        format!("byte 0x{b:02x}")
    }
}

struct Framer<R> {
    reader: R,
    buf: Vec<u8>,
    /// Next unread byte in `buf`.
    pos: usize,
    eof: bool,
    /// A read error met while reading ahead, reported when those bytes are needed.
    pending: Option<std::io::Error>,
    /// Offset in the (decompressed) stream of `buf[0]`.
    base: u64,
    shown: String,
    /// Whether `traceEvents` takes the fast path (off only in tests, to compare the two paths).
    fast: bool,
    sizes: Sizes,
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

    /// Appends up to one chunk; false at the end of the stream.
    fn fill(&mut self) -> Result<bool> {
        if let Some(e) = self.pending.take() {
            return Err(self.read_error(&e));
        }
        if self.eof {
            return Ok(false);
        }
        // `take` + `read_to_end` fills the spare capacity without zeroing a chunk per read (gzip
        // decoders return a few KiB per call) and retries interrupted reads.
        let got = (&mut self.reader)
            .take(self.sizes.chunk as u64)
            .read_to_end(&mut self.buf);
        match got {
            Ok(0) => {
                self.eof = true;
                Ok(false)
            }
            Ok(_) => Ok(true),
            Err(e) => Err(self.read_error(&e)),
        }
    }

    fn read_error(&self, e: &std::io::Error) -> Error {
        use std::io::ErrorKind;
        match e.kind() {
            ErrorKind::UnexpectedEof => Error::input(
                generic::FILE_TRUNCATED,
                format!("{}: the compressed stream ends early ({e})", self.shown),
            ),
            ErrorKind::InvalidData | ErrorKind::InvalidInput => Error::input(
                generic::FORMAT_INVALID,
                format!("{}: the compressed stream is damaged ({e})", self.shown),
            ),
            _ => Error::input(
                crate::error::codes::FILE_UNREADABLE,
                format!("{}: {e}", self.shown),
            ),
        }
    }

    /// Drops consumed bytes so the buffer holds only what is still needed.
    fn compact(&mut self) {
        if self.pos > 0 {
            self.buf.drain(..self.pos);
            self.base += self.pos as u64;
            self.pos = 0;
        }
    }

    fn byte_at(&mut self, i: usize) -> Result<Option<u8>> {
        loop {
            if let Some(&b) = self.buf.get(i) {
                return Ok(Some(b));
            }
            if !self.fill()? {
                return Ok(None);
            }
        }
    }

    fn skip_bom(&mut self) -> Result<()> {
        if self.byte_at(0)? == Some(0xef)
            && self.byte_at(1)? == Some(0xbb)
            && self.byte_at(2)? == Some(0xbf)
        {
            self.pos = 3;
        }
        Ok(())
    }

    /// Skips whitespace; the next byte, not consumed (None at the end of the stream).
    fn peek(&mut self) -> Result<Option<u8>> {
        loop {
            match self.byte_at(self.pos)? {
                Some(b' ' | b'\n' | b'\r' | b'\t') => self.pos += 1,
                other => return Ok(other),
            }
        }
    }

    fn offset(&self, i: usize) -> u64 {
        self.base + i as u64
    }

    fn syntax(&self, message: String) -> Error {
        Error::input(
            generic::FORMAT_INVALID,
            format!(
                "{}: invalid JSON at byte {}: {message}",
                self.shown,
                self.offset(self.pos)
            ),
        )
        .with_expected("a Kineto Chrome-trace JSON object")
    }

    fn truncated(&self, message: &str) -> Error {
        Error::input(
            generic::FILE_TRUNCATED,
            format!(
                "{}: the JSON ends early at byte {}: {message}",
                self.shown,
                self.offset(self.buf.len())
            ),
        )
        .with_expected("a complete JSON document")
    }

    /// Index just past the closing quote of the string whose body starts at `i`.
    fn string_end(&mut self, mut i: usize) -> Result<usize> {
        loop {
            let hay = self.buf.get(i..).unwrap_or_default();
            match memchr::memchr2(b'"', b'\\', hay) {
                Some(k) => {
                    i += k;
                    if self.buf.get(i) == Some(&b'"') {
                        return Ok(i + 1);
                    }
                    // A backslash: skip it and the escaped byte.
                    if self.byte_at(i + 1)?.is_none() {
                        return Err(self.truncated("inside a string"));
                    }
                    i += 2;
                }
                None => {
                    i = self.buf.len();
                    if !self.fill()? {
                        return Err(self.truncated("inside a string"));
                    }
                }
            }
        }
    }

    /// Index just past the JSON value starting at `start` (framing only; parsing validates it).
    fn value_end(&mut self, start: usize) -> Result<usize> {
        let Some(first) = self.byte_at(start)? else {
            return Err(self.truncated("a value is missing"));
        };
        match first {
            b'"' => self.string_end(start + 1),
            b'{' | b'[' => {
                // Only the opening kind of bracket needs counting: the other kind is balanced
                // inside any valid value and cannot close this one. memchr3 skips the rest.
                let (open, close) = if first == b'{' {
                    (b'{', b'}')
                } else {
                    (b'[', b']')
                };
                let mut depth = 0_usize;
                let mut i = start;
                loop {
                    let hay = self.buf.get(i..).unwrap_or_default();
                    let Some(k) = memchr::memchr3(b'"', open, close, hay) else {
                        i = self.buf.len();
                        if !self.fill()? {
                            return Err(self.truncated("an object or array is not closed"));
                        }
                        continue;
                    };
                    i += k;
                    match self.buf.get(i) {
                        Some(b'"') => {
                            i = self.string_end(i + 1)?;
                            continue;
                        }
                        Some(&b) if b == open => depth += 1,
                        _ => {
                            depth -= 1;
                            if depth == 0 {
                                return Ok(i + 1);
                            }
                        }
                    }
                    i += 1;
                }
            }
            _ => {
                let mut i = start;
                while let Some(b) = self.byte_at(i)? {
                    if matches!(b, b',' | b'}' | b']' | b' ' | b'\n' | b'\r' | b'\t') {
                        break;
                    }
                    i += 1;
                }
                Ok(i)
            }
        }
    }

    fn key(&mut self) -> Result<String> {
        match self.peek()? {
            Some(b'"') => {}
            Some(other) => {
                return Err(self.syntax(format!(
                    "expected a key string, found {}",
                    shown_byte(other)
                )))
            }
            None => return Err(self.truncated("a key is missing")),
        }
        let end = self.string_end(self.pos + 1)?;
        let bytes = self.buf.get(self.pos..end).unwrap_or_default();
        let key: String = serde_json::from_slice(bytes)
            .map_err(|e| self.syntax(format!("bad key string: {e}")))?;
        self.pos = end;
        match self.peek()? {
            Some(b':') => self.pos += 1,
            Some(other) => {
                return Err(self.syntax(format!(
                    "expected `:` after key `{key}`, found {}",
                    shown_byte(other)
                )))
            }
            None => return Err(self.truncated("a value is missing")),
        }
        Ok(key)
    }

    fn header_value(&mut self) -> Result<Value> {
        if self.peek()?.is_none() {
            return Err(self.truncated("a value is missing"));
        }
        let end = self.value_end(self.pos)?;
        let bytes = self.buf.get(self.pos..end).unwrap_or_default();
        let value: Value =
            serde_json::from_slice(bytes).map_err(|e| self.syntax(format!("{e}")))?;
        self.pos = end;
        self.compact();
        Ok(value)
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

    /// The fast path (`segments`): block after block until the array closes (`None`), or until
    /// something it does not vouch for; then the index of the event at `pos`, where the framing
    /// path takes over.
    fn events_fast(&mut self, events: &mut Events) -> Result<Option<u64>> {
        let mut index = 0_u64;
        let Sizes {
            block: block_size,
            segment,
            gap,
            ..
        } = self.sizes;
        let mut want = block_size;
        // The next block: `gap` bytes of room, then what was read while the pool parsed.
        let mut ahead: Vec<u8> = Vec::new();
        let memos = Memos::default();
        loop {
            while self.buf.len() - self.pos < want && self.fill()? {}
            let Framer {
                reader,
                buf,
                pos,
                eof,
                pending,
                ..
            } = self;
            let block = buf.get(*pos..).unwrap_or_default();
            // A block may end inside a multi-byte character; the text stops before it and the
            // event holding it is read again with the next block. A byte that is not UTF-8 at all
            // (`broken`) is left to the framing path, which names it.
            // simdutf8 first (SIMD chosen at run time, several times std's rate: this check is
            // on the calling thread), std's for where and why a block is not UTF-8.
            let checked = simdutf8::basic::from_utf8(block).or_else(|_| std::str::from_utf8(block));
            let (text, broken) = match checked {
                Ok(text) => (text, false),
                Err(e) => {
                    let valid = block.get(..e.valid_up_to()).unwrap_or_default();
                    (
                        std::str::from_utf8(valid).unwrap_or_default(),
                        e.error_len().is_some(),
                    )
                }
            };
            ahead.clear();
            ahead.resize(gap, 0);
            let read_ahead = || {
                if !*eof && pending.is_none() {
                    // Bytes read before an error stay in `ahead`; the error waits for `fill`.
                    match reader
                        .by_ref()
                        .take(block_size as u64)
                        .read_to_end(&mut ahead)
                    {
                        Ok(0) => *eof = true,
                        Ok(_) => {}
                        Err(e) => *pending = Some(e),
                    }
                }
            };
            let (end, added) = segments::round(text, 0, segment, &memos, events, read_ahead);
            index += added;
            let (End::Next(at) | End::Closed(at) | End::Incomplete(at) | End::Anomaly(at)) = end;
            let grown = self.take_ahead(self.pos + at, &mut ahead);
            want = block_size;
            match end {
                End::Next(_) => {}
                End::Closed(_) => return Ok(None),
                End::Incomplete(at) if (grown || !self.eof) && !broken => {
                    // One event longer than the block: read twice as much before trying again
                    // (doubling keeps the re-parses of a huge event linear in its size).
                    if at == 0 {
                        want = (self.buf.len() - self.pos)
                            .saturating_mul(2)
                            .max(block_size);
                    }
                }
                End::Incomplete(_) | End::Anomaly(_) => return Ok(Some(index)),
            }
        }
    }

    /// Moves on to `at` (an index into `buf`) with the bytes read ahead after the buffer's end: the
    /// bytes from `at` are copied into the room in front of them, and that buffer becomes `buf`.
    /// True when bytes were added.
    fn take_ahead(&mut self, at: usize, ahead: &mut Vec<u8>) -> bool {
        let gap = self.sizes.gap;
        let read = ahead.len().saturating_sub(gap);
        let tail = self.buf.get(at..).unwrap_or_default();
        let start = gap.saturating_sub(tail.len());
        let base = (self.base + at as u64).checked_sub(start as u64);
        match (base, ahead.get_mut(start..gap)) {
            (Some(base), Some(room)) if read > 0 && room.len() == tail.len() => {
                room.copy_from_slice(tail);
                std::mem::swap(&mut self.buf, ahead);
                self.base = base;
                self.pos = start;
            }
            _ => {
                self.pos = at;
                if read > 0 {
                    self.compact();
                    self.buf
                        .extend_from_slice(ahead.get(gap..).unwrap_or_default());
                }
            }
        }
        read > 0
    }

    /// The framing path: frames the rest of the array (from the event at `pos`, numbered `index`)
    /// batch by batch, each parsed in parallel once framed.
    fn events_framed(&mut self, mut index: u64, events: &mut Events) -> Result<()> {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Result<(BTreeMap<String, Value>, Events)> {
        read_stream(text.as_bytes(), "t.json")
    }

    #[test]
    fn frames_header_and_events_in_any_order() {
        let (header, events) = read(
            r#" { "schemaVersion": 1, "traceEvents": [
                {"ph": "X", "cat": "cpu_op", "name": "a{]\"", "pid": 1, "tid": 1, "ts": 1.5, "dur": 2},
                {"ph": "M", "name": "thread_name", "pid": 1, "tid": 1, "args": {"name": "main"}}
              ], "traceName": "x" } "#,
        )
        .unwrap();
        assert_eq!(header.get("traceName"), Some(&Value::from("x")));
        assert_eq!(events.cpu.len(), 1);
        assert_eq!(events.strings.get(events.cpu[0].name), "a{]\"");
        assert_eq!((events.cpu[0].start, events.cpu[0].end), (1500, 3500));
        assert_eq!(events.counts.metadata, 1);
    }

    #[test]
    fn bad_documents_get_their_codes() {
        let cases = [
            ("", generic::FILE_TRUNCATED),
            (r#"{"traceEvents": [{"ph": "X""#, generic::FILE_TRUNCATED),
            (r#"{"traceEvents": [{"ph": "X"}"#, generic::FILE_TRUNCATED),
            (r#"{"traceEvents": {}}"#, codes::EVENTS_NOT_ARRAY),
            (r#"{"schemaVersion": 1}"#, codes::EVENTS_MISSING),
            (
                r#"{"traceEvents": [], "traceEvents": []}"#,
                codes::DUPLICATE_KEY,
            ),
            (
                r#"{"a": 1, "a": 2, "traceEvents": []}"#,
                codes::DUPLICATE_KEY,
            ),
            (
                r#"{"traceEvents": [{"ph": "X", "ts": NaN, "dur": 1}]}"#,
                generic::FORMAT_INVALID,
            ),
            (r#"{"traceEvents": [1,]}"#, generic::FORMAT_INVALID),
            (r#"{"traceEvents": []} x"#, generic::FORMAT_INVALID),
            (r#"[{"ph": "X"}]"#, generic::FORMAT_INVALID),
            (
                r#"{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": -1}]}"#,
                codes::NEGATIVE_DURATION,
            ),
            (
                r#"{"traceEvents": [{"ph": "X", "name": 5, "ts": 1, "dur": 1}]}"#,
                codes::EVENT_INVALID,
            ),
        ];
        for (text, code) in cases {
            let err = read(text).err().map(|e| e.code);
            assert_eq!(err, Some(code), "{text}");
        }
    }

    /// Appends to the file it reads on its first read: a writer racing the reader.
    struct Tamper {
        file: std::fs::File,
        path: std::path::PathBuf,
        done: bool,
    }

    impl Read for Tamper {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            if !self.done {
                self.done = true;
                let mut other = std::fs::OpenOptions::new().append(true).open(&self.path)?;
                std::io::Write::write_all(&mut other, b"  ")?;
            }
            self.file.read(buf)
        }
    }

    #[test]
    fn a_file_changed_while_read_is_an_error() {
        let dir = std::env::temp_dir().join(format!("gpuopt-tamper-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("t.json");
        let text = r#"{"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 1}]}"#;
        std::fs::write(&path, text).unwrap();
        // Unchanged, it reads; the same file grown by a writer during the read does not.
        assert!(read_path(&path).is_ok());
        let version = crate::identity::Unchanged::of(&path).unwrap();
        let file = std::fs::File::open(&path).unwrap();
        let tamper = Tamper {
            file,
            path: path.clone(),
            done: false,
        };
        let err = read_file(&path, tamper, &version).err().unwrap();
        assert_eq!(err.code, crate::error::codes::FILE_CHANGED_DURING_READ);
        assert!(err.message.contains("changed while it was being read"));
        // Same size, new mtime (a rewrite within the same second): still a different version.
        std::fs::write(&path, text).unwrap();
        let version = crate::identity::Unchanged::of(&path).unwrap();
        let later = std::time::SystemTime::now() + std::time::Duration::from_secs(5);
        std::fs::File::options()
            .write(true)
            .open(&path)
            .unwrap()
            .set_modified(later)
            .unwrap();
        let err = version.check(&path).err().unwrap();
        assert_eq!(err.code, crate::error::codes::FILE_CHANGED_DURING_READ);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// What a read gave, to compare the fast path with the framing path.
    fn outcome(result: Result<(BTreeMap<String, Value>, Events)>) -> String {
        match result {
            Ok((header, e)) => {
                let mut names: Vec<_> = e.thread_names.iter().collect();
                names.sort();
                let mut labels: Vec<_> =
                    e.process_labels.iter().map(|p| format!("{p:?}")).collect();
                labels.sort();
                format!(
                    "{header:?} {:?} {:?} {:?} {:?} {:?} {:?} {:?} {:?} {:?} {:?} {:?} {:?} {names:?} {labels:?} {:?}",
                    e.strings.values,
                    e.cpu,
                    e.runtime,
                    e.gpu,
                    e.flows,
                    e.counts,
                    e.threads,
                    e.launch_configs,
                    e.gpu_annotations,
                    e.comms,
                    e.syncs,
                    (e.first_start, e.last_end),
                    e.unmodeled.items(),
                )
            }
            Err(e) => e.code.to_string(),
        }
    }

    #[test]
    fn the_fast_path_and_the_framing_path_agree_on_every_truncation_and_damage() {
        let text = r#"{"schemaVersion": 1, "traceEvents": [
  {"ph": "X", "cat": "cpu_op", "name": "a},{", "pid": 1, "tid": 1, "ts": 1.5, "dur": 2,
    "args": {"External id": 3, "Input Dims": [[1, 2], []]}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 2, "dur": 1,
    "args": {"correlation": 9, "External id": 3}},
  {"ph": "X", "cat": "kernel", "name": "k\u00e9", "pid": 0, "tid": 7, "ts": 4, "dur": 3,
    "args": {"correlation": 9, "stream": 7, "device": 0}},
  {"ph": "s", "cat": "ac2g", "id": 9, "pid": 1, "tid": 1, "ts": 2, "name": "ac2g"}
], "traceName": "t"}"#;
        let bytes = text.as_bytes();
        // Blocks of a few events, read ahead in small pieces: every cut and damage also lands
        // on a block's edge, the room in front of the next block, or a refill.
        let small = Sizes {
            chunk: 7,
            block: 96,
            segment: 24,
            gap: 160,
        };
        let both = |data: &[u8]| {
            let fast = outcome(read_stream_with(data, "t.json", true, SIZES));
            let framed = outcome(read_stream_with(data, "t.json", false, SIZES));
            let blocks = outcome(read_stream_with(data, "t.json", true, small));
            assert_eq!(blocks, fast, "small blocks");
            (fast, framed)
        };
        let (fast, framed) = both(bytes);
        assert_eq!(fast, framed);
        assert!(fast.contains("cudaLaunchKernel"), "{fast}");
        for cut in 0..bytes.len() {
            let (fast, framed) = both(&bytes[..cut]);
            assert_eq!(fast, framed, "cut at {cut}");
        }
        for at in 0..bytes.len() {
            for b in [b'"', b'{', b'}', b',', b']', b'x', b' ', 0xff] {
                let mut damaged = bytes.to_vec();
                damaged[at] = b;
                let (fast, framed) = both(&damaged);
                assert_eq!(fast, framed, "byte {at} set to {b:#x}");
            }
        }
    }

    /// A source that gives at most `step` bytes per read (a pipe, a gzip decoder).
    struct Trickle<'a> {
        data: &'a [u8],
        step: usize,
    }

    impl Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let n = self.step.min(buf.len()).min(self.data.len());
            let (head, rest) = self.data.split_at(n);
            buf[..n].copy_from_slice(head);
            self.data = rest;
            Ok(n)
        }
    }

    #[test]
    fn blocks_read_ahead_give_the_events_of_one_reading() {
        let path = crate::testdata::fixtures().join("h200/torch/eager_trace.json");
        let bytes = std::fs::read(path).unwrap();
        let whole = outcome(read_stream_with(bytes.as_slice(), "t.json", true, SIZES));
        let framed = outcome(read_stream_with(bytes.as_slice(), "t.json", false, SIZES));
        assert_eq!(whole, framed);
        // Room enough for the unfinished event (moved in front of the next block), and too little
        // for it (the fallback copies); blocks smaller than one event (read again, twice as long).
        for (block, segment, gap) in [
            (8 << 10, 1 << 10, 4 << 10),
            (8 << 10, 1 << 10, 64),
            (256, 64, 512),
        ] {
            for step in [1 << 20, 333] {
                let sizes = Sizes {
                    chunk: 1000,
                    block,
                    segment,
                    gap,
                };
                let source = Trickle { data: &bytes, step };
                let got = outcome(read_stream_with(source, "t.json", true, sizes));
                assert_eq!(got, whole, "{sizes:?}, reads of {step}");
            }
        }
    }

    #[test]
    fn batches_larger_than_a_chunk_are_framed_across_refills() {
        let name = "n".repeat(3 << 20);
        let event = format!(
            r#"{{"ph": "X", "cat": "cpu_op", "name": "{name}", "pid": 1, "tid": 1, "ts": 1, "dur": 1}}"#
        );
        let text = format!(r#"{{"traceEvents": [{event}, {event}, {event}]}}"#);
        let (_, events) = read(&text).unwrap();
        assert_eq!(events.cpu.len(), 3);
    }
}
