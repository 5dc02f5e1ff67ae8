//! How an error describes input bytes it does not print.
//!
//! An error names the file, the position and the expected shape, never the file's own bytes: a mistaken
//! path (a credentials file, a `.env`, a key) must not be echoed to a terminal, a CI log or an agent over
//! MCP. [`of`] gives the size and kind of a span instead (`"24 bytes of text"`), enough to tell a wrong file
//! from a damaged one.

/// `"N bytes of KIND"` (`"nothing"` when empty), where KIND is [`kind_of`].
pub fn of(bytes: &[u8]) -> String {
    if bytes.is_empty() {
        return "nothing".to_string();
    }
    let unit = if bytes.len() == 1 { "byte" } else { "bytes" };
    format!("{} {unit} of {}", bytes.len(), kind_of(bytes))
}

/// What `head` (the first bytes of a file or a line) looks like, from well-known magic numbers or the
/// character classes it holds; never any of its bytes.
pub fn kind_of(head: &[u8]) -> &'static str {
    match head {
        [0x1f, 0x8b, ..] => "gzip data",
        [b'P', b'K', 3, 4, ..] => "a ZIP archive",
        [0x7f, b'E', b'L', b'F', ..] => "an ELF binary",
        _ if !is_text(head) => "binary data",
        _ => match head.iter().find(|b| !b.is_ascii_whitespace()) {
            Some(b'{' | b'[') => "JSON-like text",
            Some(b'<') => "XML-like text",
            _ => "text",
        },
    }
}

/// UTF-8 without control characters other than tab, CR and LF (a character cut at the end still counts).
fn is_text(bytes: &[u8]) -> bool {
    let valid = match std::str::from_utf8(bytes) {
        Ok(s) => s,
        Err(e) if e.error_len().is_none() => {
            std::str::from_utf8(bytes.get(..e.valid_up_to()).unwrap_or_default())
                .unwrap_or_default()
        }
        Err(_) => return false,
    };
    !valid
        .chars()
        .any(|c| c.is_control() && !matches!(c, '\t' | '\r' | '\n'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn describes_without_showing() {
        assert_eq!(of(b"ghp_0123456789abcdef"), "20 bytes of text");
        assert_eq!(of(b"  {\"a\": 1}"), "10 bytes of JSON-like text");
        assert_eq!(of(b"\x1f\x8b\x08\x00"), "4 bytes of gzip data");
        assert_eq!(of(b"ab\x00cd"), "5 bytes of binary data");
        assert_eq!(of(b"\xff"), "1 byte of binary data");
        assert_eq!(of(b""), "nothing");
        // A multi-byte character cut by the 16-byte window is still text.
        assert_eq!(
            kind_of("abcdefghijklmno\u{e9}".as_bytes().get(..16).unwrap()),
            "text"
        );
    }
}
