//! Lines out of a byte stream, in bounded memory, and the few byte-level helpers the grammars share.

use super::codes;
use crate::error::{Error, Result};
use std::io::Read;

/// Read and check the input in windows that fit in a core's L2 cache: the text check, the newline
/// search and the parser then touch the same bytes while they are hot.
const CHUNK_BYTES: usize = 1 << 20;
/// Longest accepted line. Listing lines are a few hundred bytes; demangled template names can reach
/// tens of kilobytes, so the limit is generous but keeps a file without newlines from filling memory.
pub const MAX_LINE_BYTES: usize = 256 << 10;

/// Blanks (space, tab, CR) off both ends. Spaces are skipped eight at a time: cuobjdump indents every
/// encoding line by ~90 spaces.
#[inline]
pub fn trim(line: &[u8]) -> &[u8] {
    trim_end(trim_start(line))
}

#[inline]
pub fn trim_start(mut line: &[u8]) -> &[u8] {
    const SPACES: u64 = u64::from_le_bytes([b' '; 8]);
    while let Some((word, rest)) = line.split_first_chunk::<8>() {
        if u64::from_le_bytes(*word) != SPACES {
            break;
        }
        line = rest;
    }
    while let [b' ' | b'\t' | b'\r', rest @ ..] = line {
        line = rest;
    }
    line
}

#[inline]
pub fn trim_end(mut line: &[u8]) -> &[u8] {
    while let [rest @ .., b' ' | b'\t' | b'\r'] = line {
        line = rest;
    }
    line
}

/// True when every byte is printable ASCII, a tab or a CR.
#[inline]
pub fn is_plain_text(line: &[u8]) -> bool {
    line.iter()
        .all(|&b| (0x20..0x7f).contains(&b) || b == b'\t' || b == b'\r')
}

/// True when a whole window is printable ASCII plus tab, LF and CR. Each 4 KiB block is folded
/// without an early exit so that the compiler vectorises it (tens of GB/s).
fn window_is_plain(bytes: &[u8]) -> bool {
    bytes.chunks(4096).all(|block| {
        let bad = block.iter().fold(0u8, |acc, &b| {
            let control = b < 0x20;
            let allowed = (b == b'\t') | (b == b'\n') | (b == b'\r');
            acc | u8::from((control & !allowed) | (b >= 0x7f))
        });
        bad == 0
    })
}

/// Feeds `sink` the complete lines of `window` after `from`, numbering them on from `line_no`;
/// returns where the unfinished remainder starts.
fn complete_lines(
    window: &[u8],
    line_no: &mut u64,
    sink: &mut impl FnMut(&[u8], u64) -> Result<()>,
) -> Result<usize> {
    let plain = window_is_plain(window);
    let mut start = 0usize;
    for nl in memchr::memchr_iter(b'\n', window) {
        let line = window.get(start..nl).unwrap_or_default();
        *line_no += 1;
        if !plain {
            check_line(line, *line_no)?;
        }
        sink(line, *line_no)?;
        start = nl + 1;
    }
    Ok(start)
}

fn last_line(
    rest: &[u8],
    line_no: &mut u64,
    sink: &mut impl FnMut(&[u8], u64) -> Result<()>,
) -> Result<()> {
    if !rest.is_empty() {
        *line_no += 1;
        check_line(rest, *line_no)?;
        sink(rest, *line_no)?;
    }
    Ok(())
}

fn too_long(line_no: u64) -> Error {
    Error::input(
        codes::LINE_TOO_LONG,
        format!("line {} is longer than {MAX_LINE_BYTES} bytes", line_no + 1),
    )
    .with_expected("a SASS listing with lines of at most 256 KiB")
}

/// Feeds `sink` every line of `reader` (without its `\n`), numbered from 1; a final line without a
/// newline is passed too.
pub fn for_each_line<R: Read>(
    mut reader: R,
    mut sink: impl FnMut(&[u8], u64) -> Result<()>,
) -> Result<LineStats> {
    let mut buf: Vec<u8> = vec![0; CHUNK_BYTES];
    let mut filled = 0usize;
    let mut line_no = 0u64;
    let mut bytes = 0u64;
    // The carried remainder is at most MAX_LINE_BYTES, so a read always has room.
    loop {
        let n = read_some(&mut reader, buf.get_mut(filled..).unwrap_or_default())?;
        bytes += n as u64;
        let end = filled + n;
        let window = buf.get(..end).unwrap_or_default();
        if n == 0 {
            last_line(window, &mut line_no, &mut sink)?;
            return Ok(LineStats {
                lines: line_no,
                bytes,
            });
        }
        // The carried remainder holds no newline, so the first one found ends it.
        let start = complete_lines(window, &mut line_no, &mut sink)?;
        let rest = end - start;
        if rest > MAX_LINE_BYTES {
            return Err(too_long(line_no));
        }
        buf.copy_within(start..end, 0);
        filled = rest;
    }
}

/// The same over bytes already in memory (no copy).
pub fn for_each_line_in(
    bytes: &[u8],
    mut sink: impl FnMut(&[u8], u64) -> Result<()>,
) -> Result<LineStats> {
    let mut line_no = 0u64;
    let mut from = 0usize;
    // Windows of CHUNK_BYTES keep the whole-window text check cache-friendly.
    while from < bytes.len() {
        let stop = (from + CHUNK_BYTES).min(bytes.len());
        let window = bytes.get(from..stop).unwrap_or_default();
        let used = complete_lines(window, &mut line_no, &mut sink)?;
        if stop == bytes.len() {
            last_line(
                window.get(used..).unwrap_or_default(),
                &mut line_no,
                &mut sink,
            )?;
            break;
        }
        if used == 0 {
            // A whole window without a newline: longer than any accepted line.
            return Err(too_long(line_no));
        }
        from += used;
    }
    Ok(LineStats {
        lines: line_no,
        bytes: bytes.len() as u64,
    })
}

/// What the reader saw, for the summary and for the truncation check.
#[derive(Debug, Clone, Copy)]
pub struct LineStats {
    pub lines: u64,
    pub bytes: u64,
}

fn read_some<R: Read>(reader: &mut R, buf: &mut [u8]) -> Result<usize> {
    loop {
        match reader.read(buf) {
            Ok(n) => return Ok(n),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => {
                return Err(Error::input(
                    crate::error::codes::FILE_UNREADABLE,
                    format!("reading the listing failed: {e}"),
                ))
            }
        }
    }
}

fn check_line(line: &[u8], line_no: u64) -> Result<()> {
    if is_plain_text(line) {
        return Ok(());
    }
    // Non-ASCII UTF-8 (a demangled name, a path in line info) is text; anything else is binary.
    let utf8 = std::str::from_utf8(line).ok();
    let control = utf8.is_some_and(|s| s.chars().any(|c| c.is_control() && c != '\t' && c != '\r'));
    if utf8.is_none() || control {
        let offset = line
            .iter()
            .position(|&b| !(b >= 0x20 || b == b'\t' || b == b'\r') || b >= 0x7f)
            .unwrap_or(0);
        return Err(Error::input(
            codes::FORMAT_INVALID,
            format!("line {line_no} holds binary data (byte {offset} of the line is not text)"),
        )
        .with_expected("SASS text from cuobjdump -sass or nvdisasm (give a binary as a file path so that the tool is run on it)")
        .with_observed(format!("line {line_no}")));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trims_blanks() {
        assert_eq!(trim(b"                  /* 0x1 */   "), b"/* 0x1 */");
        assert_eq!(trim(b"\t\tcode for sm_90\r"), b"code for sm_90");
        assert_eq!(trim(b"   "), b"");
    }

    #[test]
    fn yields_lines_with_and_without_final_newline() {
        let mut seen = Vec::new();
        let stats = for_each_line(&b"a\nbb\n\nc"[..], |l, n| {
            seen.push((String::from_utf8_lossy(l).to_string(), n));
            Ok(())
        })
        .unwrap();
        assert_eq!(seen.len(), 4);
        assert_eq!(seen[3], ("c".to_string(), 4));
        assert_eq!((stats.lines, stats.bytes), (4, 7));
    }

    #[test]
    fn slices_split_like_readers() {
        let text = b"a\nbb\n\nccc\nd";
        let mut a = Vec::new();
        let mut b = Vec::new();
        let sa = for_each_line(&text[..], |l, n| {
            a.push((l.to_vec(), n));
            Ok(())
        })
        .unwrap();
        let sb = for_each_line_in(text, |l, n| {
            b.push((l.to_vec(), n));
            Ok(())
        })
        .unwrap();
        assert_eq!(a, b);
        assert_eq!((sa.lines, sa.bytes), (sb.lines, sb.bytes));
    }

    #[test]
    fn window_check_finds_every_bad_byte() {
        for bad in [0u8, 1, 0x1f, 0x7f, 0x80, 0xff] {
            for pos in 0..17 {
                let mut text = vec![b'a'; 17];
                text[pos] = bad;
                assert!(!window_is_plain(&text), "{bad:#x} at {pos}");
            }
        }
        assert!(window_is_plain(b"\t\tcode for sm_90\r\n~ !"));
    }

    #[test]
    fn binary_bytes_are_a_format_error() {
        let err = for_each_line(&b"code for sm_90\n\x7fELF\x02\x01\x00\n"[..], |_, _| Ok(()))
            .unwrap_err();
        assert_eq!(err.code, codes::FORMAT_INVALID);
        let ok = for_each_line("Function : caf\u{e9}\n".as_bytes(), |_, _| Ok(()));
        assert!(ok.is_ok());
    }
}

#[cfg(test)]
mod properties {
    use super::*;
    use proptest::prelude::*;

    /// Printable SASS-like text with blanks, tabs and carriage returns in any place.
    fn line() -> impl Strategy<Value = Vec<u8>> {
        prop::collection::vec(
            prop::sample::select(vec![b' ', b' ', b'\t', b'\r', b'A', b'/', b'*', b'0', b';']),
            0..40,
        )
    }

    fn blank(b: u8) -> bool {
        matches!(b, b' ' | b'\t' | b'\r')
    }

    proptest! {
        #[test]
        fn trim_strips_exactly_the_blanks_at_both_ends(l in line()) {
            let t = trim(&l);
            prop_assert!(t.first().is_none_or(|b| !blank(*b)));
            prop_assert!(t.last().is_none_or(|b| !blank(*b)));
            let start = l.iter().position(|b| !blank(*b)).unwrap_or(l.len());
            let end = l.iter().rposition(|b| !blank(*b)).map_or(start, |e| e + 1);
            prop_assert_eq!(t, &l[start..end]);
            prop_assert_eq!(trim(t), t);
            prop_assert_eq!(trim_start(&l), &l[start..]);
        }

        #[test]
        fn for_each_line_returns_every_line_in_order(lines in prop::collection::vec(line(), 0..30),
                                                     final_newline in any::<bool>()) {
            let mut text = lines.join(&b'\n');
            if final_newline && !lines.is_empty() {
                text.push(b'\n');
            }
            let mut seen: Vec<Vec<u8>> = Vec::new();
            let stats = for_each_line(text.as_slice(), |l, n| {
                assert_eq!(n as usize, seen.len() + 1);
                seen.push(l.to_vec());
                Ok(())
            })
            .unwrap();
            let mut expect = lines.clone();
            if !final_newline && expect.last().is_some_and(Vec::is_empty) {
                expect.pop(); // a text ending in "\n" has no empty last line
            }
            prop_assert_eq!(stats.bytes, text.len() as u64);
            prop_assert_eq!(stats.lines as usize, expect.len());
            prop_assert_eq!(seen, expect);
        }
    }
}
