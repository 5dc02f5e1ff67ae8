//! The framer under the trace reader (`reader`): the stream read into a buffer chunk by chunk, and
//! the JSON pieces found in it without parsing them (a string's end, a value's end, a key, a header
//! value), with the errors that name the byte where the JSON went wrong.

use super::codes as generic;
use crate::error::{Error, Result};
use serde_json::Value;
use std::io::Read;

/// The reader's buffer sizes (tests make them tiny, so that every boundary is crossed often).
#[derive(Debug, Clone, Copy)]
pub(super) struct Sizes {
    /// Bytes read from the source per refill.
    pub(super) chunk: usize,
    /// Bytes of `traceEvents` parsed per round of the fast path.
    pub(super) block: usize,
    /// Bytes per parallel segment of a block: enough segments for the threads to share the block
    /// evenly, each long enough that a segment's guessed start costs nothing beside its parse.
    pub(super) segment: usize,
    /// Room kept free at the front of the next block's buffer, read while the pool parses this
    /// block: the unfinished event at the end of this block is copied there, just before the bytes
    /// that follow it, so a block's bytes are read once into place and never moved.
    pub(super) gap: usize,
    /// The most bytes the buffer may hold: a block and the bytes read after it, or one element of
    /// `traceEvents` (or a header value, or a run of blank space) longer than a block. Past it the
    /// trace is `input_too_large`, so a small gzip file that inflates to one huge event cannot take
    /// memory without bound (a 1.5 MB file of one 1.5 GB name took 4.7 GB, then 12 GB to print).
    pub(super) longest: usize,
}

/// The reader's place in the stream: the bytes read and not yet dropped, where the next unread one
/// is, and where `buf` starts in the stream (for the offsets errors name).
pub(super) struct Framer<R> {
    pub(super) reader: R,
    pub(super) buf: Vec<u8>,
    /// Next unread byte in `buf`.
    pub(super) pos: usize,
    pub(super) eof: bool,
    /// A read error met while reading ahead, reported when those bytes are needed.
    pub(super) pending: Option<std::io::Error>,
    /// Offset in the (decompressed) stream of `buf[0]`.
    pub(super) base: u64,
    pub(super) shown: String,
    /// Whether `traceEvents` takes the fast path (off only in tests, to compare the two paths).
    pub(super) fast: bool,
    pub(super) sizes: Sizes,
}

pub(super) fn shown_byte(b: u8) -> String {
    if b.is_ascii_graphic() {
        format!("`{}`", char::from(b))
    } else {
        format!("byte 0x{b:02x}")
    }
}

/// serde_json's message without the values it quotes from the file (`invalid type: string "…"`,
/// integer `` `…` ``, an unknown variant or field; a missing field is the schema's name and stays): what was found is named by its type, where by the
/// message's line and column; the file's content is never repeated (it can hold anything, of any size).
pub(super) fn serde_text(e: &serde_json::Error) -> String {
    let text = e.to_string();
    let mut out = String::with_capacity(text.len().min(256));
    let mut rest = text.as_str();
    loop {
        // The earliest quoted value: a string (`string "…"`, up to its `", expected` or `" at line`)
        // or a scalar in backticks after its kind.
        let string = rest.find("string \"").map(|i| (i, "string \"", true));
        let ticked = [
            "integer `",
            "floating point `",
            "boolean `",
            "char `",
            "unknown variant `",
            "unknown field `",
        ]
        .iter()
        .filter_map(|k| rest.find(k).map(|i| (i, *k, false)))
        .min();
        let Some((at, kind, quoted)) = [string, ticked].into_iter().flatten().min() else {
            out.push_str(rest);
            return out;
        };
        let body = at + kind.len();
        let end = if quoted {
            let tail = rest.get(body..).unwrap_or_default();
            // The last `", expected` closes the value (serde adds it after); a value with none
            // closes at the last `" at line`.
            tail.rfind("\", expected")
                .or_else(|| tail.rfind("\" at line"))
                .map(|j| body + j + 1)
        } else {
            rest.get(body..)
                .and_then(|t| t.find('`'))
                .map(|j| body + j + 1)
        };
        let Some(end) = end else {
            out.push_str(rest.get(..at).unwrap_or_default());
            out.push_str(kind.trim_end_matches(['"', '`', ' ']));
            return out;
        };
        out.push_str(rest.get(..at).unwrap_or_default());
        out.push_str(kind.trim_end_matches(['"', '`', ' ']));
        rest = rest.get(end..).unwrap_or_default();
    }
}

impl<R: Read + Send> Framer<R> {
    /// Appends up to one chunk; false at the end of the stream.
    pub(super) fn fill(&mut self) -> Result<bool> {
        if let Some(e) = self.pending.take() {
            return Err(self.read_error(&e));
        }
        if self.eof {
            return Ok(false);
        }
        self.room_left()?;
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

    /// Fails once the buffer holds `Sizes::longest` bytes (see there).
    pub(super) fn room_left(&self) -> Result<()> {
        if self.buf.len() < self.sizes.longest {
            return Ok(());
        }
        let mib = self.sizes.longest >> 20;
        Err(Error::input(
            crate::error::codes::INPUT_TOO_LARGE,
            format!(
                "{}: more than {mib} MiB from byte {} without the end of one event (or header value, \
                 or run of blank space): gpuopt holds one at a time and refuses one this long",
                self.shown,
                self.offset(self.pos)
            ),
        )
        .with_expected(format!("events of less than {mib} MiB each"))
        .with_observed(format!("over {mib} MiB without an event's end")))
    }

    pub(super) fn read_error(&self, e: &std::io::Error) -> Error {
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
    pub(super) fn compact(&mut self) {
        if self.pos > 0 {
            self.buf.drain(..self.pos);
            self.base += self.pos as u64;
            self.pos = 0;
        }
    }

    pub(super) fn byte_at(&mut self, i: usize) -> Result<Option<u8>> {
        loop {
            if let Some(&b) = self.buf.get(i) {
                return Ok(Some(b));
            }
            if !self.fill()? {
                return Ok(None);
            }
        }
    }

    pub(super) fn skip_bom(&mut self) -> Result<()> {
        if self.byte_at(0)? == Some(0xef)
            && self.byte_at(1)? == Some(0xbb)
            && self.byte_at(2)? == Some(0xbf)
        {
            self.pos = 3;
        }
        Ok(())
    }

    /// Skips whitespace; the next byte, not consumed (None at the end of the stream).
    pub(super) fn peek(&mut self) -> Result<Option<u8>> {
        loop {
            match self.byte_at(self.pos)? {
                Some(b' ' | b'\n' | b'\r' | b'\t') => self.pos += 1,
                other => return Ok(other),
            }
        }
    }

    pub(super) fn offset(&self, i: usize) -> u64 {
        self.base + i as u64
    }

    pub(super) fn syntax(&self, message: String) -> Error {
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

    pub(super) fn truncated(&self, message: &str) -> Error {
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
    pub(super) fn string_end(&mut self, mut i: usize) -> Result<usize> {
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
    pub(super) fn value_end(&mut self, start: usize) -> Result<usize> {
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

    pub(super) fn key(&mut self) -> Result<String> {
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
            .map_err(|e| self.syntax(format!("bad key string: {}", serde_text(&e))))?;
        self.pos = end;
        match self.peek()? {
            Some(b':') => self.pos += 1,
            Some(other) => {
                return Err(self.syntax(format!(
                    "expected `:` after a key, found {}",
                    shown_byte(other)
                )))
            }
            None => return Err(self.truncated("a value is missing")),
        }
        Ok(key)
    }

    pub(super) fn header_value(&mut self) -> Result<Value> {
        if self.peek()?.is_none() {
            return Err(self.truncated("a value is missing"));
        }
        let end = self.value_end(self.pos)?;
        let bytes = self.buf.get(self.pos..end).unwrap_or_default();
        let value: Value =
            serde_json::from_slice(bytes).map_err(|e| self.syntax(serde_text(&e)))?;
        self.pos = end;
        self.compact();
        Ok(value)
    }
}

#[cfg(test)]
mod tests {
    use super::serde_text;
    use serde::Deserialize;

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Event {
        name: String,
        ph: Phase,
    }

    #[derive(Debug, Deserialize)]
    enum Phase {
        X,
    }

    fn shown(json: &str) -> String {
        match serde_json::from_str::<Event>(json) {
            Ok(e) => panic!("parsed: {e:?}"),
            Err(e) => serde_text(&e),
        }
    }

    #[test]
    fn values_from_the_file_are_named_by_type_not_repeated() {
        let cases = [
            (
                r#"{"name": "a", "ph": "hunter2SECRET"}"#,
                "hunter2SECRET",
                "unknown variant",
            ),
            (
                r#"{"name": 12345678901, "ph": "X"}"#,
                "12345678901",
                "invalid type: integer,",
            ),
            (r#"{"name": 1.5, "ph": "X"}"#, "1.5", "floating point"),
            (
                r#"{"name": true, "ph": "X"}"#,
                "true",
                "invalid type: boolean,",
            ),
            (
                r#"{"name": "a", "ph": "X", "secret_key_x": 1}"#,
                "secret_key_x",
                "unknown field,",
            ),
            (
                r#"{"name": ["x"], "ph": "X"}"#,
                "\"x\"",
                "invalid type: sequence",
            ),
        ];
        for (json, secret, kept) in cases {
            let text = shown(json);
            assert!(!text.contains(secret), "{json}: {text}");
            assert!(text.contains(kept), "{json}: {text}");
            assert!(text.contains("at line 1 column"), "{json}: {text}");
        }
        // A string value holding serde's own delimiters, quotes and backticks is cut whole.
        let text = match serde_json::from_str::<u32>(r#""x\", expected y `z` at line 9 pw=SECRET""#)
        {
            Ok(v) => panic!("parsed {v}"),
            Err(e) => serde_text(&e),
        };
        assert!(!text.contains("SECRET") && !text.contains("pw="), "{text}");
        assert!(
            text.starts_with("invalid type: string, expected u32"),
            "{text}"
        );
        // What the schema names (a missing field) stays.
        assert!(shown(r#"{"ph": "X"}"#).contains("missing field `name`"));
    }
}
