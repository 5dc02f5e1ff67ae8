//! The one JSON reader and hasher of the evaluation core.
//!
//! [`parse_strict`] reads requests, driver results and records: duplicate keys, `NaN`/`Infinity`, invalid
//! UTF-8, a byte-order mark, lone surrogates and integer literals beyond ±(2^53−1) are `json_invalid` with
//! the JSON path where they occur. [`to_canonical`] writes RFC 8785 (JCS): keys sorted by UTF-16 code
//! units, no whitespace, ECMAScript number formatting, UTF-8. Every identity hash goes through here.

use super::codes;
use crate::error::{Error, Result};

/// A parsed JSON value. Objects keep their members in input order (duplicates are refused on read).
#[derive(Debug, Clone, PartialEq)]
pub enum Json {
    Null,
    Bool(bool),
    Number(f64),
    String(String),
    Array(Vec<Json>),
    Object(Vec<(String, Json)>),
}

/// The largest integer a JSON number may carry exactly (I-JSON, RFC 7493).
pub const MAX_SAFE_INTEGER: f64 = 9_007_199_254_740_991.0;
const MAX_DEPTH: usize = 128;

impl Json {
    /// The member `key` of an object, if any.
    pub fn get(&self, key: &str) -> Option<&Json> {
        match self {
            Json::Object(members) => members.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Json::String(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Json::Number(n) => Some(*n),
            _ => None,
        }
    }

    /// Sets (or replaces) the member `key` of an object; a no-op on other values.
    pub fn set(&mut self, key: &str, value: Json) {
        if let Json::Object(members) = self {
            if let Some(slot) = members.iter_mut().find(|(k, _)| k == key) {
                slot.1 = value;
            } else {
                members.push((key.to_string(), value));
            }
        }
    }
}

/// One step of a JSON path: `a.b[3]["odd key"]`.
#[derive(Clone)]
enum Step {
    Key(String),
    Index(usize),
}

/// Renders a JSON path the way every gpuopt error shows it: `subjects[1].measurements.step_time_ms`.
fn render_path(steps: &[Step]) -> String {
    if steps.is_empty() {
        return "$".to_string();
    }
    let mut out = String::new();
    for step in steps {
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

/// The canonical (RFC 8785) text of a value.
pub fn to_canonical(value: &Json) -> Result<String> {
    let mut out = String::new();
    write_value(value, &mut out)?;
    Ok(out)
}

/// Strict parse followed by canonical serialization.
pub fn canonicalize(bytes: &[u8]) -> Result<String> {
    to_canonical(&parse_strict(bytes)?)
}

fn write_value(value: &Json, out: &mut String) -> Result<()> {
    match value {
        Json::Null => out.push_str("null"),
        Json::Bool(true) => out.push_str("true"),
        Json::Bool(false) => out.push_str("false"),
        Json::Number(n) => out.push_str(&format_number(*n)?),
        Json::String(s) => write_string(s, out),
        Json::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_value(item, out)?;
            }
            out.push(']');
        }
        Json::Object(members) => {
            let mut sorted: Vec<(Vec<u16>, &String, &Json)> = members
                .iter()
                .map(|(k, v)| (k.encode_utf16().collect(), k, v))
                .collect();
            sorted.sort_by(|a, b| a.0.cmp(&b.0));
            out.push('{');
            for (i, (_, key, item)) in sorted.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_string(key, out);
                out.push(':');
                write_value(item, out)?;
            }
            out.push('}');
        }
    }
    Ok(())
}

fn write_string(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// ECMAScript `Number.prototype.toString` for a finite double (RFC 8785 §3.2.2.3).
pub fn format_number(value: f64) -> Result<String> {
    if !value.is_finite() {
        return Err(Error::input(
            codes::JSON_INVALID,
            "NaN and Infinity have no JSON representation",
        ));
    }
    if value == 0.0 {
        return Ok("0".to_string());
    }
    // Rust's `{:e}` prints the shortest digit count that round-trips, e.g. "1.2345e-7". Among digit strings
    // of that length ECMAScript wants the one closest to the exact value, ties to even, which is what the
    // exact (correctly rounded, half-even) formatting at that precision gives.
    let shortest = format!("{:e}", value.abs());
    let k_digits = shortest
        .split_once('e')
        .map_or(shortest.as_str(), |(m, _)| m)
        .chars()
        .filter(char::is_ascii_digit)
        .count();
    let exact = format!("{:.*e}", k_digits.saturating_sub(1), value.abs());
    let sci = if exact.parse::<f64>().ok() == Some(value.abs()) {
        exact
    } else {
        shortest
    };
    let (mantissa, exponent) = sci.split_once('e').unwrap_or((&sci, "0"));
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let exp: i32 = exponent.parse().unwrap_or(0);
    let k = digits.len() as i32;
    let n = exp + 1; // the decimal point sits after n digits
    let mut out = String::new();
    if value < 0.0 {
        out.push('-');
    }
    if k <= n && n <= 21 {
        out.push_str(&digits);
        out.extend(std::iter::repeat_n('0', (n - k) as usize));
    } else if 0 < n && n <= 21 {
        let (head, tail) = digits.split_at(n as usize);
        out.push_str(head);
        out.push('.');
        out.push_str(tail);
    } else if -6 < n && n <= 0 {
        out.push_str("0.");
        out.extend(std::iter::repeat_n('0', (-n) as usize));
        out.push_str(&digits);
    } else {
        let (head, tail) = digits.split_at(1);
        out.push_str(head);
        if !tail.is_empty() {
            out.push('.');
            out.push_str(tail);
        }
        out.push('e');
        out.push(if n > 0 { '+' } else { '-' });
        out.push_str(&(n - 1).abs().to_string());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn canon(s: &str) -> String {
        canonicalize(s.as_bytes()).unwrap()
    }

    fn err_path(s: &[u8]) -> (String, String) {
        let e = parse_strict(s).unwrap_err();
        (e.code.to_string(), e.path.unwrap_or_default())
    }

    #[test]
    fn rfc8785_number_vectors() {
        let vectors: [(u64, &str); 24] = [
            (0x0000000000000000, "0"),
            (0x8000000000000000, "0"),
            (0x0000000000000001, "5e-324"),
            (0x8000000000000001, "-5e-324"),
            (0x7fefffffffffffff, "1.7976931348623157e+308"),
            (0xffefffffffffffff, "-1.7976931348623157e+308"),
            (0x4340000000000000, "9007199254740992"),
            (0xc340000000000000, "-9007199254740992"),
            (0x4430000000000000, "295147905179352830000"),
            (0x44b52d02c7e14af5, "9.999999999999997e+22"),
            (0x44b52d02c7e14af6, "1e+23"),
            (0x44b52d02c7e14af7, "1.0000000000000001e+23"),
            (0x444b1ae4d6e2ef4e, "999999999999999700000"),
            (0x444b1ae4d6e2ef4f, "999999999999999900000"),
            (0x444b1ae4d6e2ef50, "1e+21"),
            (0x3eb0c6f7a0b5ed8c, "9.999999999999997e-7"),
            (0x3eb0c6f7a0b5ed8d, "0.000001"),
            (0x41b3de4355555553, "333333333.3333332"),
            (0x41b3de4355555554, "333333333.33333325"),
            (0x41b3de4355555555, "333333333.3333333"),
            (0x41b3de4355555556, "333333333.3333334"),
            (0x41b3de4355555557, "333333333.33333343"),
            (0xbecbf647612f3696, "-0.0000033333333333333333"),
            (0x43143ff3c1cb0959, "1424953923781206.2"),
        ];
        for (bits, expected) in vectors {
            assert_eq!(
                format_number(f64::from_bits(bits)).unwrap(),
                expected,
                "{bits:#x}"
            );
        }
        assert!(format_number(f64::NAN).is_err());
        assert!(format_number(f64::INFINITY).is_err());
    }

    #[test]
    fn rfc8785_example_document() {
        let input = r#"{
          "numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
          "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
          "literals": [null, true, false]
        }"#;
        assert_eq!(
            canon(input),
            r#"{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\u000f\nA'B\"\\\\\"/"}"#
        );
    }

    #[test]
    fn rfc8785_key_order_is_utf16() {
        let input = r#"{"\u20ac":"Euro Sign","\r":"Carriage Return","\ufb33":"Hebrew Letter Dalet With Dagesh","1":"One","\ud83d\ude00":"Emoji: Grinning Face","\u0080":"Control","\u00f6":"Latin Small Letter O With Diaeresis"}"#;
        let out = canon(input);
        let order: Vec<&str> = [
            "\\r",
            "\"1\"",
            "\u{80}",
            "\u{f6}",
            "\u{20ac}",
            "\u{1F600}",
            "\u{fb33}",
        ]
        .to_vec();
        let mut last = 0;
        for key in order {
            let at = out.find(key).unwrap();
            assert!(at >= last, "{key} out of order in {out}");
            last = at;
        }
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
    fn integers_and_floats_share_one_form() {
        assert_eq!(
            canon("[1, 1.0, 1e0, -0, 0.5, 100, 1e21, 1e-7]"),
            "[1,1,1,0,0.5,100,1e+21,1e-7]"
        );
    }

    #[test]
    fn deep_nesting_is_refused_not_overflowed() {
        let deep = "[".repeat(10_000) + &"]".repeat(10_000);
        assert_eq!(err_path(deep.as_bytes()).0, "json_invalid");
    }
}
