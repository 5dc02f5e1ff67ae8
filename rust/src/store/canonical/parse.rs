//! The strict JSON reader: what it refuses, with the JSON path where it occurs.

use super::value::{Json, MAX_SAFE_INTEGER};
use crate::error::{Error, Result};
use crate::store::codes;

const MAX_DEPTH: usize = 128;

/// One step of a JSON path: `a.b[3]["odd key"]`.
#[derive(Clone)]
enum Step {
    Key(String),
    Index(usize),
}

/// Keys longer than this are shown by their length; paths deeper than `SHOWN_STEPS` by their
/// first and last steps: an error names the place, and must stay short whatever the file holds.
const SHOWN_KEY_CHARS: usize = 40;
const SHOWN_STEPS: usize = 8;

/// Renders a JSON path the way every gpuopt error shows it: `subjects[1].measurements.step_time_ms`.
fn render_path(steps: &[Step]) -> String {
    if steps.is_empty() {
        return "$".to_string();
    }
    if steps.len() > SHOWN_STEPS {
        let (head, tail) = (
            steps.get(..3).unwrap_or_default(),
            steps.get(steps.len() - 3..).unwrap_or_default(),
        );
        let hidden = steps.len() - 6;
        return format!(
            "{}…({hidden} levels)…{}",
            render_path(head),
            render_path(tail)
        );
    }
    let mut out = String::new();
    for step in steps {
        let long;
        let step = match step {
            Step::Key(k) if k.chars().count() > SHOWN_KEY_CHARS => {
                long = Step::Key(format!("<a key of {} characters>", k.chars().count()));
                &long
            }
            other => other,
        };
        match step {
            Step::Index(i) => out.push_str(&format!("[{i}]")),
            Step::Key(k) => {
                let simple = !k.is_empty()
                    && k.chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
                if simple {
                    if !out.is_empty() {
                        out.push('.');
                    }
                    out.push_str(k);
                } else {
                    out.push_str(&format!("[{}]", serde_json::Value::String(k.clone())));
                }
            }
        }
    }
    out
}

struct Parser<'a> {
    bytes: &'a [u8],
    pos: usize,
    path: Vec<Step>,
}

/// Parses `bytes` as strict JSON (see the module documentation).
pub fn parse_strict(bytes: &[u8]) -> Result<Json> {
    if bytes.starts_with(&[0xEF, 0xBB, 0xBF]) {
        return Err(invalid("a byte-order mark is not allowed", "$", 0));
    }
    if let Err(e) = std::str::from_utf8(bytes) {
        return Err(invalid("invalid UTF-8", "$", e.valid_up_to()));
    }
    let mut p = Parser {
        bytes,
        pos: 0,
        path: Vec::new(),
    };
    p.skip_ws();
    let value = p.value(0)?;
    p.skip_ws();
    if p.pos != bytes.len() {
        return Err(p.err("unexpected content after the JSON value"));
    }
    Ok(value)
}

fn invalid(what: &str, path: &str, offset: usize) -> Error {
    Error::input(
        codes::JSON_INVALID,
        format!("invalid JSON at {path} (byte {offset}): {what}"),
    )
    .with_path(path.to_string())
}

impl Parser<'_> {
    fn err(&self, what: &str) -> Error {
        invalid(what, &render_path(&self.path), self.pos)
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    fn skip_ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.pos += 1;
        }
    }

    fn literal(&mut self, word: &[u8], value: Json) -> Result<Json> {
        if self.bytes.get(self.pos..self.pos + word.len()) == Some(word) {
            self.pos += word.len();
            Ok(value)
        } else {
            Err(self.err("unexpected token (NaN, Infinity and bare words are not JSON)"))
        }
    }

    fn value(&mut self, depth: usize) -> Result<Json> {
        if depth > MAX_DEPTH {
            return Err(self.err("nesting deeper than 128 levels"));
        }
        match self.peek() {
            None => Err(self.err("unexpected end of input")),
            Some(b'{') => self.object(depth),
            Some(b'[') => self.array(depth),
            Some(b'"') => Ok(Json::String(self.string()?)),
            Some(b't') => self.literal(b"true", Json::Bool(true)),
            Some(b'f') => self.literal(b"false", Json::Bool(false)),
            Some(b'n') => self.literal(b"null", Json::Null),
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(_) => {
                Err(self.err("unexpected token (NaN, Infinity and bare words are not JSON)"))
            }
        }
    }

    fn object(&mut self, depth: usize) -> Result<Json> {
        self.pos += 1;
        let mut members: Vec<(String, Json)> = Vec::new();
        let mut seen = std::collections::HashSet::new();
        self.skip_ws();
        if self.peek() == Some(b'}') {
            self.pos += 1;
            return Ok(Json::Object(members));
        }
        loop {
            self.skip_ws();
            if self.peek() != Some(b'"') {
                return Err(self.err("expected a string key"));
            }
            let key = self.string()?;
            self.path.push(Step::Key(key.clone()));
            if !seen.insert(key.clone()) {
                return Err(self.err("duplicate key"));
            }
            self.skip_ws();
            if self.peek() != Some(b':') {
                return Err(self.err("expected ':'"));
            }
            self.pos += 1;
            self.skip_ws();
            let value = self.value(depth + 1)?;
            self.path.pop();
            members.push((key, value));
            self.skip_ws();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b'}') => {
                    self.pos += 1;
                    return Ok(Json::Object(members));
                }
                _ => return Err(self.err("expected ',' or '}'")),
            }
        }
    }

    fn array(&mut self, depth: usize) -> Result<Json> {
        self.pos += 1;
        let mut items = Vec::new();
        self.skip_ws();
        if self.peek() == Some(b']') {
            self.pos += 1;
            return Ok(Json::Array(items));
        }
        loop {
            self.skip_ws();
            self.path.push(Step::Index(items.len()));
            let value = self.value(depth + 1)?;
            self.path.pop();
            items.push(value);
            self.skip_ws();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b']') => {
                    self.pos += 1;
                    return Ok(Json::Array(items));
                }
                _ => return Err(self.err("expected ',' or ']'")),
            }
        }
    }

    fn hex4(&mut self) -> Result<u32> {
        let digits = self
            .bytes
            .get(self.pos..self.pos + 4)
            .and_then(|b| std::str::from_utf8(b).ok())
            .and_then(|s| u32::from_str_radix(s, 16).ok());
        match digits {
            Some(v) => {
                self.pos += 4;
                Ok(v)
            }
            None => Err(self.err("invalid \\u escape")),
        }
    }

    fn string(&mut self) -> Result<String> {
        self.pos += 1;
        let mut out = String::new();
        loop {
            let start = self.pos;
            while let Some(b) = self.peek() {
                if b == b'"' || b == b'\\' || b < 0x20 {
                    break;
                }
                self.pos += 1;
            }
            // The input is valid UTF-8 and we stop only at ASCII bytes, so this slice is valid too.
            if let Some(chunk) = self
                .bytes
                .get(start..self.pos)
                .and_then(|b| std::str::from_utf8(b).ok())
            {
                out.push_str(chunk);
            }
            match self.peek() {
                None => return Err(self.err("unterminated string")),
                Some(b'"') => {
                    self.pos += 1;
                    return Ok(out);
                }
                Some(b'\\') => {
                    self.pos += 1;
                    let esc = self.peek();
                    self.pos += 1;
                    match esc {
                        Some(b'"') => out.push('"'),
                        Some(b'\\') => out.push('\\'),
                        Some(b'/') => out.push('/'),
                        Some(b'b') => out.push('\u{8}'),
                        Some(b'f') => out.push('\u{c}'),
                        Some(b'n') => out.push('\n'),
                        Some(b'r') => out.push('\r'),
                        Some(b't') => out.push('\t'),
                        Some(b'u') => out.push(self.unicode_escape()?),
                        _ => return Err(self.err("invalid escape")),
                    }
                }
                Some(_) => return Err(self.err("control character in string")),
            }
        }
    }

    fn unicode_escape(&mut self) -> Result<char> {
        let first = self.hex4()?;
        let code = if (0xD800..0xDC00).contains(&first) {
            if self.bytes.get(self.pos..self.pos + 2) != Some(b"\\u") {
                return Err(self.err("lone surrogate in \\u escape"));
            }
            self.pos += 2;
            let second = self.hex4()?;
            if !(0xDC00..0xE000).contains(&second) {
                return Err(self.err("lone surrogate in \\u escape"));
            }
            0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00)
        } else if (0xDC00..0xE000).contains(&first) {
            return Err(self.err("lone surrogate in \\u escape"));
        } else {
            first
        };
        char::from_u32(code).ok_or_else(|| self.err("invalid \\u escape"))
    }

    fn digits(&mut self) -> usize {
        let start = self.pos;
        while matches!(self.peek(), Some(b'0'..=b'9')) {
            self.pos += 1;
        }
        self.pos - start
    }

    fn number(&mut self) -> Result<Json> {
        let start = self.pos;
        if self.peek() == Some(b'-') {
            self.pos += 1;
        }
        let int_start = self.pos;
        let int_len = self.digits();
        if int_len == 0 {
            return Err(self.err("invalid number"));
        }
        if int_len > 1 && self.bytes.get(int_start) == Some(&b'0') {
            return Err(self.err("leading zero in number"));
        }
        let mut integer = true;
        if self.peek() == Some(b'.') {
            self.pos += 1;
            integer = false;
            if self.digits() == 0 {
                return Err(self.err("invalid number"));
            }
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.pos += 1;
            integer = false;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.pos += 1;
            }
            if self.digits() == 0 {
                return Err(self.err("invalid number"));
            }
        }
        let text = self
            .bytes
            .get(start..self.pos)
            .and_then(|b| std::str::from_utf8(b).ok())
            .unwrap_or("");
        let value: f64 = text.parse().map_err(|_| self.err("invalid number"))?;
        if !value.is_finite() {
            return Err(self.err("number out of range"));
        }
        if integer && value.abs() > MAX_SAFE_INTEGER {
            return Err(self.err("integer beyond ±(2^53−1)"));
        }
        Ok(Json::Number(value))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err_path(s: &[u8]) -> (String, String) {
        let e = parse_strict(s).unwrap_err();
        (e.code.to_string(), e.path.unwrap_or_default())
    }

    #[test]
    fn strict_reader_refuses_with_paths() {
        assert_eq!(
            err_path(br#"{"a": {"b": 1, "b": 2}}"#),
            ("json_invalid".into(), "a.b".into())
        );
        assert_eq!(err_path(br#"{"x": [1, NaN]}"#).1, "x[1]");
        assert_eq!(err_path(br#"{"x": Infinity}"#).1, "x");
        assert_eq!(err_path(br#"{"x": -Infinity}"#).1, "x");
        assert_eq!(err_path(b"\xEF\xBB\xBF{}").1, "$");
        assert_eq!(err_path(b"{\"a\": \"\xff\"}").0, "json_invalid");
        assert_eq!(err_path(br#"{"n": 9007199254740992}"#).1, "n");
        assert_eq!(err_path(br#"{"n": "\ud800"}"#).1, "n");
        assert_eq!(err_path(br#"{"odd key": {"x": 01}}"#).1, "[\"odd key\"].x");
        assert_eq!(err_path(br#"{"n": 1e400}"#).1, "n");
        assert_eq!(err_path(br#"{} {}"#).1, "$");
        assert_eq!(err_path(br#"{"a": 1,}"#).0, "json_invalid");
        assert!(parse_strict(br#"{"n": 9007199254740991, "m": -9007199254740991}"#).is_ok());
        assert!(parse_strict(br#"{"n": 1e300}"#).is_ok());
    }

    #[test]
    fn a_path_stays_short_whatever_the_file_holds() {
        // 100,000 levels (a trial's file: a 200 KB message) and a 10,000-character key.
        let deep = format!("{}1{}", r#"{"a":"#.repeat(100_000), "}".repeat(100_000));
        let e = parse_strict(deep.as_bytes()).unwrap_err();
        assert!(e.message.len() < 200, "{}", e.message.len());
        assert_eq!(e.path.unwrap_or_default(), "a.a.a…(123 levels)…a.a.a");
        let key = "k".repeat(10_000);
        let long = format!(r#"{{"{key}": [1, NaN]}}"#);
        assert_eq!(
            err_path(long.as_bytes()).1,
            "[\"<a key of 10000 characters>\"][1]"
        );
    }

    #[test]
    fn deep_nesting_is_refused_not_overflowed() {
        let deep = "[".repeat(10_000) + &"]".repeat(10_000);
        assert_eq!(err_path(deep.as_bytes()).0, "json_invalid");
    }
}
