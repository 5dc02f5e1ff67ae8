//! The JSON pieces the quick event reader (`quick`) is made of: a cursor over text already known to
//! be UTF-8 that reads strings without escapes, number texts and whole values to skip, checking
//! them against the JSON grammar as strictly as serde_json does. Whatever it is not sure of (an
//! escape where the text is kept, deep nesting, bad syntax, the end of the text) it does not try
//! to report: it gives up, and the serde reader reads the event again and says what is wrong.

/// The quick reader cannot vouch for this event; the serde reader must read it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GiveUp;

pub type Quick<T> = Result<T, GiveUp>;

/// Nesting deeper than this inside a skipped value is left to serde_json (its own limit is 128).
const MAX_DEPTH: u32 = 32;

const ONES: u64 = u64::MAX / 255;

/// The first byte at or after `from` that ends a run of plain string text: `"`, `\` or a control
/// character; `bytes.len()` if none. Eight bytes at a time (serde_json's `skip_to_escape` trick:
/// the lowest flagged byte is exact, borrows only flag bytes above it).
fn string_stop(bytes: &[u8], from: usize) -> usize {
    let Some(rest) = bytes.get(from..) else {
        return bytes.len();
    };
    let mut at = from;
    let mut chunks = rest.chunks_exact(8);
    for chunk in &mut chunks {
        let Ok(word) = <[u8; 8]>::try_from(chunk) else {
            break;
        };
        let v = u64::from_le_bytes(word);
        let control = v.wrapping_sub(ONES * 0x20) & !v;
        let q = v ^ (ONES * u64::from(b'"'));
        let quote = q.wrapping_sub(ONES) & !q;
        let s = v ^ (ONES * u64::from(b'\\'));
        let backslash = s.wrapping_sub(ONES) & !s;
        let found = (control | quote | backslash) & (ONES << 7);
        if found != 0 {
            return at + (found.trailing_zeros() / 8) as usize;
        }
        at += 8;
    }
    for &b in chunks.remainder() {
        if b == b'"' || b == b'\\' || b < 0x20 {
            return at;
        }
        at += 1;
    }
    bytes.len()
}

fn is_blank(b: u8) -> bool {
    matches!(b, b' ' | b'\n' | b'\r' | b'\t')
}

/// A position in one event's text.
pub struct Cursor<'a> {
    text: &'a str,
    pub pos: usize,
}

impl<'a> Cursor<'a> {
    pub fn new(text: &'a str) -> Self {
        Cursor { text, pos: 0 }
    }

    fn bytes(&self) -> &'a [u8] {
        self.text.as_bytes()
    }

    /// The whole text.
    pub fn text(&self) -> &'a str {
        self.text
    }

    /// The text from `pos` on.
    pub fn rest(&self) -> &'a str {
        self.text.get(self.pos..).unwrap_or_default()
    }

    /// The next byte that is not blank, left unread.
    #[inline]
    pub fn peek(&mut self) -> Quick<u8> {
        // Every byte above the space is not blank; Kineto puts one space after each `,` and `:`.
        let bytes = self.bytes();
        match bytes.get(self.pos) {
            Some(&b) if b > b' ' => return Ok(b),
            Some(b' ') => match bytes.get(self.pos + 1) {
                Some(&b) if b > b' ' => {
                    self.pos += 1;
                    return Ok(b);
                }
                _ => {}
            },
            _ => {}
        }
        self.peek_blanks()
    }

    /// [`Cursor::peek`] past any run of blanks.
    fn peek_blanks(&mut self) -> Quick<u8> {
        let bytes = self.bytes();
        loop {
            match bytes.get(self.pos) {
                Some(&b) if is_blank(b) => self.pos += 1,
                Some(&b) => return Ok(b),
                None => return Err(GiveUp),
            }
        }
    }

    /// The next byte that is not blank, read.
    #[inline]
    pub fn next(&mut self) -> Quick<u8> {
        let b = self.peek()?;
        self.pos += 1;
        Ok(b)
    }

    #[inline]
    pub fn expect(&mut self, want: u8) -> Quick<()> {
        if self.next()? == want {
            Ok(())
        } else {
            Err(GiveUp)
        }
    }

    /// The rest of a string whose `"` was read, when it has no escapes (serde_json would decode
    /// those into an owned string, and check escaped surrogates strictly: left to it).
    #[inline]
    pub fn plain_str(&mut self) -> Quick<&'a str> {
        let start = self.pos;
        let end = string_stop(self.bytes(), start);
        if self.bytes().get(end) != Some(&b'"') {
            return Err(GiveUp);
        }
        self.pos = end + 1;
        self.text.get(start..end).ok_or(GiveUp)
    }

    /// Skips the rest of a string whose `"` was read.
    fn skip_str(&mut self) -> Quick<()> {
        self.pos = str_end(self.bytes(), self.pos)?;
        Ok(())
    }

    /// The text of the number that starts at the next byte (JSON's grammar: `-`, no leading zero,
    /// at least one digit after `.` and after the exponent's sign).
    pub fn number(&mut self) -> Quick<&'a str> {
        self.peek()?;
        self.number_here()
    }

    /// [`Cursor::number`] at `pos`, blanks already skipped.
    fn number_here(&mut self) -> Quick<&'a str> {
        let start = self.pos;
        self.pos = number_end(self.bytes(), start)?;
        self.text.get(start..self.pos).ok_or(GiveUp)
    }

    /// The number at the next byte: `Ok(Ok(v))` for an integer serde_json gives an `i64`
    /// visitor (up to 18 digits, not `-0`), `Ok(Err(text))` for any other number's text.
    #[inline]
    pub fn int_or_number(&mut self) -> Quick<Result<i64, &'a str>> {
        self.peek()?;
        let bytes = self.bytes();
        let start = self.pos;
        let negative = bytes.get(start) == Some(&b'-');
        let first = start + usize::from(negative);
        let (value, i) = short_digits(bytes, first).unwrap_or_else(|| digit_run(bytes, first, 18));
        let plain = i > first
            && !matches!(bytes.get(i), Some(b'.' | b'e' | b'E' | b'0'..=b'9') | None)
            && (i == first + 1 || bytes.get(first) != Some(&b'0'))
            && !(negative && value == 0);
        if plain {
            self.pos = i;
            return Ok(Ok(if negative { -value } else { value }));
        }
        self.number_here().map(Err)
    }

    /// A timestamp in Kineto's own form, `digits.ddd` (at most 15 integer and 1 to 3 fraction
    /// digits, valid JSON: no leading zero), as nanoseconds; `None` (nothing read) for any other
    /// text, which [`Cursor::number`] and `time::micros_to_ns` then read.
    #[inline]
    pub fn plain_micros(&mut self) -> Quick<Option<i64>> {
        self.peek()?;
        let bytes = self.bytes();
        let start = self.pos;
        if let Some((ns, end)) = dotted_micros(bytes, start) {
            self.pos = end;
            return Ok(Some(ns));
        }
        let (int, mut i) = digit_run(bytes, start, 15);
        let digits = i - start;
        if digits == 0 || (digits > 1 && bytes.get(start) == Some(&b'0')) {
            return Ok(None);
        }
        let mut frac: i64 = 0;
        let mut scale = 1000;
        if bytes.get(i) == Some(&b'.') {
            let dot = i;
            let (value, end) = digit_run(bytes, dot + 1, 3);
            if end == dot + 1 {
                return Ok(None);
            }
            (frac, i) = (value, end);
            // 1, 2 or 3 fraction digits: tenths, hundredths or thousandths of a microsecond.
            scale = [1000, 100, 10, 1].get(end - dot - 1).copied().unwrap_or(1);
        }
        if matches!(bytes.get(i), Some(b'.' | b'e' | b'E' | b'0'..=b'9') | None) {
            return Ok(None);
        }
        self.pos = i;
        Ok(Some(int * 1000 + frac * scale))
    }

    fn literal(&mut self, rest: &[u8]) -> Quick<()> {
        let end = self.pos + rest.len();
        if self.bytes().get(self.pos..end) != Some(rest) {
            return Err(GiveUp);
        }
        self.pos = end;
        Ok(())
    }

    /// The JSON text of one value (checked as [`Cursor::skip_value`] checks it), escapes and all.
    pub fn raw_value(&mut self, depth: u32) -> Quick<&'a str> {
        self.peek()?;
        let start = self.pos;
        self.skip_value(depth)?;
        self.text.get(start..self.pos).ok_or(GiveUp)
    }

    /// Skips one value, checking its syntax; `depth` counts the containers it is inside.
    pub fn skip_value(&mut self, depth: u32) -> Quick<()> {
        match self.peek()? {
            b'"' => {
                self.pos += 1;
                self.skip_str()
            }
            b'0'..=b'9' => {
                self.pos = uint_end(self.bytes(), self.pos)?;
                Ok(())
            }
            b'-' => self.number_here().map(|_| ()),
            b't' => self.literal(b"true"),
            b'f' => self.literal(b"false"),
            b'n' => self.literal(b"null"),
            b'[' if depth < MAX_DEPTH => {
                self.pos += 1;
                self.skip_array(depth + 1)
            }
            b'{' if depth < MAX_DEPTH => {
                self.pos += 1;
                if self.peek()? == b'}' {
                    self.pos += 1;
                    return Ok(());
                }
                loop {
                    self.expect(b'"')?;
                    self.skip_str()?;
                    self.expect(b':')?;
                    self.skip_value(depth + 1)?;
                    match self.next()? {
                        b',' => {}
                        b'}' => return Ok(()),
                        _ => return Err(GiveUp),
                    }
                }
            }
            _ => Err(GiveUp),
        }
    }

    /// Skips the rest of an array whose `[` was read, `depth` containers deep with it. One loop for
    /// the arrays inside it (Kineto's `Input Dims`: arrays of arrays of integers) and the numbers
    /// and strings in them; objects and literals go through [`Cursor::skip_value`].
    fn skip_array(&mut self, depth: u32) -> Quick<()> {
        let bytes = self.bytes();
        let mut i = self.pos;
        // Arrays open (this one included), and whether the last byte read was a `[`.
        let mut open = 1_u32;
        let mut opened = true;
        loop {
            i = blanks_end(bytes, i);
            match bytes.get(i) {
                Some(b'[') => {
                    if depth + open >= MAX_DEPTH {
                        return Err(GiveUp);
                    }
                    open += 1;
                    opened = true;
                    i += 1;
                    continue;
                }
                Some(b']') if opened => {
                    i += 1;
                    open -= 1;
                    if open == 0 {
                        self.pos = i;
                        return Ok(());
                    }
                }
                Some(b'"') => i = str_end(bytes, i + 1)?,
                Some(b'0'..=b'9') => i = uint_end(bytes, i)?,
                Some(b'-') => i = number_end(bytes, i)?,
                Some(_) => {
                    self.pos = i;
                    self.skip_value(depth + open)?;
                    i = self.pos;
                }
                None => return Err(GiveUp),
            }
            // After a value: `,` then the next value, or `]` (perhaps several).
            opened = false;
            loop {
                i = blanks_end(bytes, i);
                match bytes.get(i) {
                    Some(b',') => {
                        i += 1;
                        break;
                    }
                    Some(b']') => {
                        i += 1;
                        open -= 1;
                        if open == 0 {
                            self.pos = i;
                            return Ok(());
                        }
                    }
                    _ => return Err(GiveUp),
                }
            }
        }
    }
}

/// The end of the string whose text starts at `i` (past its closing `"`). Escapes are checked as
/// serde_json checks them in a value it ignores: a known letter, or `u` and four hex digits.
#[inline]
fn str_end(bytes: &[u8], mut i: usize) -> Quick<usize> {
    loop {
        let stop = string_stop(bytes, i);
        match bytes.get(stop) {
            Some(b'"') => return Ok(stop + 1),
            Some(b'\\') => match bytes.get(stop + 1) {
                Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => i = stop + 2,
                Some(b'u') => {
                    let hex = bytes.get(stop + 2..stop + 6).ok_or(GiveUp)?;
                    if !hex.iter().all(u8::is_ascii_hexdigit) {
                        return Err(GiveUp);
                    }
                    i = stop + 6;
                }
                _ => return Err(GiveUp),
            },
            _ => return Err(GiveUp),
        }
    }
}

/// The end of the number that starts at `i` (JSON's grammar: `-`, no leading zero, at least one
/// digit after `.` and after the exponent's sign).
#[inline]
fn number_end(bytes: &[u8], mut i: usize) -> Quick<usize> {
    if bytes.get(i) == Some(&b'-') {
        i += 1;
    }
    match bytes.get(i) {
        Some(b'0') => i += 1,
        Some(b'1'..=b'9') => i = digits_end(bytes, i + 1),
        _ => return Err(GiveUp),
    }
    if bytes.get(i) == Some(&b'.') {
        let end = digits_end(bytes, i + 1);
        if end == i + 1 {
            return Err(GiveUp);
        }
        i = end;
    }
    if matches!(bytes.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(bytes.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        let end = digits_end(bytes, i);
        if end == i {
            return Err(GiveUp);
        }
        i = end;
    }
    // A digit right after a lone `0` is a syntax error; so is the number running to the end of
    // the text (serde_json may see more digits in what follows).
    if bytes.get(i).is_none_or(u8::is_ascii_digit) {
        return Err(GiveUp);
    }
    Ok(i)
}

/// [`number_end`] for a number starting with a digit, quicker for the short integers of shapes
/// and strides: a plain loop, the full grammar only when a `.` or exponent follows.
#[inline]
fn uint_end(bytes: &[u8], start: usize) -> Quick<usize> {
    let mut i = start + 1;
    while bytes.get(i).is_some_and(u8::is_ascii_digit) {
        i += 1;
    }
    match bytes.get(i) {
        Some(b'.' | b'e' | b'E') => number_end(bytes, start),
        // A leading zero: only `0` itself.
        Some(_) if i > start + 1 && bytes.get(start) == Some(&b'0') => Err(GiveUp),
        Some(_) => Ok(i),
        None => Err(GiveUp),
    }
}

#[inline]
fn blanks_end(bytes: &[u8], mut i: usize) -> usize {
    // The common case first: no blank at all (every byte above the space is not one).
    if bytes.get(i).is_some_and(|&b| b > b' ') {
        return i;
    }
    while bytes.get(i).is_some_and(|&b| is_blank(b)) {
        i += 1;
    }
    i
}

/// [`Cursor::plain_micros`] for the form nearly every Kineto `ts`/`dur` has, `digits.d[dd]` with 1
/// to 15 integer digits, from two words (the integer digits converted eight at a time, with no
/// loop): nanoseconds and where the number ends, or `None` for anything else (which the general
/// reading then reads, to the same answer).
#[inline]
fn dotted_micros(bytes: &[u8], start: usize) -> Option<(i64, usize)> {
    let words = bytes.get(start..start + 16)?;
    let w0 = u64::from_le_bytes(<[u8; 8]>::try_from(words.get(..8)?).ok()?);
    let w1 = u64::from_le_bytes(<[u8; 8]>::try_from(words.get(8..)?).ok()?);
    let (n0, n1) = (non_digits(w0), non_digits(w1));
    let int_digits = if n0 != 0 {
        (n0.trailing_zeros() / 8) as usize
    } else if n1 != 0 {
        8 + (n1.trailing_zeros() / 8) as usize
    } else {
        return None;
    };
    let dot = start + int_digits;
    // At least one digit, no leading zero, then the point.
    if int_digits == 0
        || (int_digits > 1 && words.first() == Some(&b'0'))
        || bytes.get(dot) != Some(&b'.')
    {
        return None;
    }
    let int = if int_digits <= 8 {
        eight_digits(w0, int_digits)
    } else {
        eight_digits(w0, 8) * POW10.get(int_digits - 8).copied()? + eight_digits(w1, int_digits - 8)
    };
    // One to three fraction digits (tenths, hundredths, thousandths of a microsecond), then
    // something that does not continue a number.
    let mut frac = 0_i64;
    let mut end = dot + 1;
    while end < dot + 4 {
        match bytes.get(end) {
            Some(&b) if b.is_ascii_digit() => frac = frac * 10 + i64::from(b - b'0'),
            _ => break,
        }
        end += 1;
    }
    let scale = [0, 100, 10, 1].get(end - dot - 1).copied()?;
    if scale == 0
        || matches!(
            bytes.get(end),
            Some(b'.' | b'e' | b'E' | b'0'..=b'9') | None
        )
    {
        return None;
    }
    Some((int * 1000 + frac * scale, end))
}

/// The value of the ASCII digits from `from` and where they end, when there are fewer than eight
/// (ids, streams, devices: digit by digit is quicker there than [`digit_run`]'s words).
#[inline]
fn short_digits(bytes: &[u8], from: usize) -> Option<(i64, usize)> {
    let mut value = 0_i64;
    for i in from..from + 8 {
        match bytes.get(i) {
            Some(&b) if b.is_ascii_digit() => value = value * 10 + i64::from(b - b'0'),
            _ => return Some((value, i)),
        }
    }
    None
}

/// The value of the ASCII digits from `from` (at most `max` of them, `max` ≤ 18) and where they end:
/// eight bytes at a time (timestamps run to 16 digits), byte by byte near the end of the text.
#[inline]
fn digit_run(bytes: &[u8], from: usize, max: usize) -> (i64, usize) {
    let (mut value, mut i) = (0_i64, from);
    let end = from + max;
    while i < end {
        let Some(Ok(word)) = bytes.get(i..i + 8).map(<[u8; 8]>::try_from) else {
            return digit_run_bytes(bytes, i, end, value);
        };
        let v = u64::from_le_bytes(word);
        let n = (leading_digits(v)).min(end - i);
        if n == 0 {
            break;
        }
        value = value * POW10.get(n).copied().unwrap_or(1) + eight_digits(v, n);
        i += n;
        if n < 8 {
            break;
        }
    }
    (value, i)
}

/// [`digit_run`] byte by byte, from `i` (with the value so far) up to `end`.
fn digit_run_bytes(bytes: &[u8], mut i: usize, end: usize, mut value: i64) -> (i64, usize) {
    while let Some(&b) = bytes.get(i) {
        if !b.is_ascii_digit() || i == end {
            break;
        }
        value = value * 10 + i64::from(b - b'0');
        i += 1;
    }
    (value, i)
}

const POW10: [i64; 9] = [
    1,
    10,
    100,
    1_000,
    10_000,
    100_000,
    1_000_000,
    10_000_000,
    100_000_000,
];

/// Per byte of `v`, the high bit set unless the byte is an ASCII digit (no carries cross bytes:
/// 0x0f + 0x06 < 0x100, 0x7f + 0x7f < 0x100).
#[inline]
fn non_digits(v: u64) -> u64 {
    let odd = ((v & (ONES * 0xf0)) ^ (ONES * 0x30))
        | (((v & (ONES * 0x0f)) + ONES * 0x06) & (ONES * 0x10));
    (((odd & (ONES * 0x7f)) + ONES * 0x7f) | odd) & (ONES * 0x80)
}

/// How many of the eight bytes of `v` (first byte lowest) are digits before the first other one.
#[inline]
fn leading_digits(v: u64) -> usize {
    (non_digits(v).trailing_zeros() / 8) as usize
}

/// The value of the first `n` (1 to 8) bytes of `v`, all ASCII digits, first byte most significant.
#[inline]
fn eight_digits(v: u64, n: usize) -> i64 {
    // The `n` digits moved to the top, `0`s below them: the same value as eight digits.
    let shift = 64 - 8 * n as u32;
    let v =
        v.checked_shl(shift).unwrap_or(0) | (ONES * 0x30).checked_shr(8 * n as u32).unwrap_or(0);
    let v = v.wrapping_sub(ONES * 0x30);
    let v = (v.wrapping_mul(10) + (v >> 8)) & 0x00ff_00ff_00ff_00ff;
    let v = (v.wrapping_mul(100) + (v >> 16)) & 0x0000_ffff_0000_ffff;
    let v = (v.wrapping_mul(10_000) + (v >> 32)) & 0x0000_0000_ffff_ffff;
    v as i64
}

/// The end of the run of ASCII digits at `i`: eight bytes at a time (timestamps run to 16 digits),
/// then byte by byte.
#[inline]
fn digits_end(bytes: &[u8], mut i: usize) -> usize {
    while let Some(Ok(word)) = bytes.get(i..i + 8).map(<[u8; 8]>::try_from) {
        let flags = non_digits(u64::from_le_bytes(word));
        if flags != 0 {
            return i + (flags.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    while bytes.get(i).is_some_and(u8::is_ascii_digit) {
        i += 1;
    }
    i
}

#[cfg(test)]
#[path = "tests_scan.rs"]
mod tests;
