//! The CSV tokenizer: quote-aware record boundaries and fields (`""` inside quotes is one `"`).

use crate::error::{Error, Result};
use crate::ncu::codes;

use crate::ncu::model::unescape;

use std::borrow::Cow;

/// Byte ranges of the records (quote-aware; a trailing `\r` is dropped). Lines are found first and a
/// line ends a record only when the quotes seen so far pair up, so a newline inside quotes is kept.
pub(crate) fn split_records(data: &[u8]) -> Result<Vec<(usize, usize)>> {
    let mut out = Vec::with_capacity(data.len() / 4096 + 16);
    let mut start = 0usize;
    let mut pos = 0usize;
    let mut quotes = 0usize;
    while let Some(rest) = data.get(pos..) {
        let Some(nl) = memchr::memchr(b'\n', rest) else {
            quotes += count_quotes(rest);
            break;
        };
        let line = rest.get(..nl).unwrap_or_default();
        quotes += count_quotes(line);
        let end = pos + nl;
        if quotes.is_multiple_of(2) {
            let trimmed = if end > start && data.get(end - 1) == Some(&b'\r') {
                end - 1
            } else {
                end
            };
            out.push((start, trimmed));
            start = end + 1;
            quotes = 0;
        }
        pos = end + 1;
    }
    if quotes % 2 == 1 {
        return Err(Error::input(
            codes::FILE_TRUNCATED,
            "the CSV ends inside a quoted field",
        ));
    }
    if start < data.len() {
        out.push((start, data.len()));
    }
    Ok(out)
}

fn count_quotes(bytes: &[u8]) -> usize {
    bytes.iter().filter(|b| **b == b'"').count()
}

pub(crate) fn record<'a>(data: &'a [u8], records: &[(usize, usize)], i: usize) -> &'a [u8] {
    records
        .get(i)
        .and_then(|&(s, e)| data.get(s..e))
        .unwrap_or_default()
}

/// Splits one record into fields, unquoting (`""` inside quotes is one `"`).
pub(crate) fn fields(rec: &[u8]) -> Result<Vec<Cow<'_, [u8]>>> {
    let mut out = Vec::new();
    for_each_field(rec, |_, span| out.push(span.bytes(rec)))?;
    Ok(out)
}

/// Where a field's content lies in its record; `escaped` when it holds doubled quotes to undo.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FieldSpan {
    pub start: usize,
    pub end: usize,
    pub escaped: bool,
}

impl FieldSpan {
    /// The field's bytes, unescaped.
    pub fn bytes(self, rec: &[u8]) -> Cow<'_, [u8]> {
        let raw = rec.get(self.start..self.end).unwrap_or_default();
        if self.escaped {
            unescape(raw)
        } else {
            Cow::Borrowed(raw)
        }
    }
}

/// Calls `each(index, span)` for every field of a record, in order, and returns how many there were;
/// the streaming form of [`fields`] for the hot loop of the raw page.
pub(crate) fn for_each_field(rec: &[u8], mut each: impl FnMut(usize, FieldSpan)) -> Result<usize> {
    let mut pos = 0usize;
    let mut index = 0usize;
    loop {
        let (span, next) = field_at(rec, pos)?;
        each(index, span);
        index += 1;
        match next {
            Some(n) => pos = n,
            None => return Ok(index),
        }
    }
}

/// The field starting at `pos` and where the next one starts (`None` at the end of the record).
fn field_at(rec: &[u8], pos: usize) -> Result<(FieldSpan, Option<usize>)> {
    let rest = rec.get(pos..).unwrap_or_default();
    if rest.first() != Some(&b'"') {
        let end = memchr::memchr(b',', rest).unwrap_or(rest.len());
        if rest.get(..end).unwrap_or_default().contains(&b'"') {
            return Err(bad_quote());
        }
        let span = FieldSpan {
            start: pos,
            end: pos + end,
            escaped: false,
        };
        return Ok((span, (end < rest.len()).then_some(pos + end + 1)));
    }
    let mut i = 1usize;
    let mut escaped = false;
    loop {
        let Some(q) = rest.get(i..).and_then(|r| memchr::memchr(b'"', r)) else {
            return Err(bad_quote());
        };
        let q = i + q;
        if rest.get(q + 1) == Some(&b'"') {
            escaped = true;
            i = q + 2;
            continue;
        }
        let span = FieldSpan {
            start: pos + 1,
            end: pos + q,
            escaped,
        };
        return match rest.get(q + 1) {
            None => Ok((span, None)),
            Some(b',') => Ok((span, Some(pos + q + 2))),
            Some(_) => Err(bad_quote()),
        };
    }
}

fn bad_quote() -> Error {
    Error::input(
        codes::FORMAT_INVALID,
        "malformed CSV: a quote in an unquoted field or text after a closing quote",
    )
}

#[cfg(test)]
mod properties {
    //! The tokenizer against an encoder written here: any fields, quoted (inner quotes doubled) where
    //! they need it or at random, joined by commas and newlines, come back unchanged.
    use super::*;
    use proptest::prelude::*;

    fn field() -> impl Strategy<Value = Vec<u8>> {
        prop::collection::vec(
            prop::sample::select(vec![b'a', b'7', b' ', b',', b'"', b'\n', b'\r', b'.']),
            0..12,
        )
    }

    fn encode(f: &[u8], quote: bool) -> Vec<u8> {
        let needs = f.iter().any(|b| matches!(b, b',' | b'"' | b'\n' | b'\r'));
        if !(quote || needs) {
            return f.to_vec();
        }
        let mut out = vec![b'"'];
        for &b in f {
            if b == b'"' {
                out.push(b'"');
            }
            out.push(b);
        }
        out.push(b'"');
        out
    }

    fn encode_record(fields: &[(Vec<u8>, bool)]) -> Vec<u8> {
        let encoded: Vec<Vec<u8>> = fields.iter().map(|(f, q)| encode(f, *q)).collect();
        encoded.join(&b',')
    }

    proptest! {
        #[test]
        fn fields_round_trip(rec in prop::collection::vec((field(), any::<bool>()), 1..8)) {
            let line = encode_record(&rec);
            let got: Vec<Vec<u8>> = fields(&line).unwrap().into_iter().map(|c| c.into_owned()).collect();
            let expect: Vec<Vec<u8>> = rec.into_iter().map(|(f, _)| f).collect();
            prop_assert_eq!(got, expect);
        }

        #[test]
        fn records_split_where_quotes_pair_up(
            recs in prop::collection::vec(prop::collection::vec(field(), 1..5), 1..6),
            crlf in any::<bool>(),
        ) {
            // Every field quoted, so a record is never an empty line.
            let lines: Vec<Vec<u8>> = recs
                .iter()
                .map(|r| encode_record(&r.iter().map(|f| (f.clone(), true)).collect::<Vec<_>>()))
                .collect();
            let data = lines.join(if crlf { &b"\r\n"[..] } else { &b"\n"[..] });
            let ranges = split_records(&data).unwrap();
            prop_assert_eq!(ranges.len(), recs.len());
            for (i, r) in recs.iter().enumerate() {
                let got: Vec<Vec<u8>> = fields(record(&data, &ranges, i))
                    .unwrap()
                    .into_iter()
                    .map(|c| c.into_owned())
                    .collect();
                prop_assert_eq!(&got, r);
            }
        }

        #[test]
        fn an_unclosed_quote_is_file_truncated(body in field()) {
            let mut data = b"\"ID\",\"x\"\n\"".to_vec();
            data.extend(body.iter().filter(|b| **b != b'"'));
            let err = split_records(&data).unwrap_err();
            prop_assert_eq!(err.code, codes::FILE_TRUNCATED);
        }
    }
}
