//! Array and object values of `args` met before, so that a repeat is read with one comparison
//! instead of a scan.
//!
//! A Kineto trace repeats itself: every step runs the same ops on the same shapes, so an op's
//! `Input Dims`, `Input type`, `Concrete Inputs` and `Input Strides` texts recur thousands of times,
//! and they are most of the bytes of a trace. The quick reader scans such a value once (checking its
//! syntax) and remembers its text. A later value whose text *starts with* a remembered one is that
//! value, valid, ending at the same byte: a JSON array or object ends at its own closing bracket, so
//! nothing after it changes how it reads, and the scan is a function of the text alone. The memo only
//! saves the scan; what the reader returns is what scanning returns.
//!
//! A value is found by its first 32 bytes of text (with what follows it, for a shorter value) and the
//! argument it belongs to, among a few ways per set; remembered texts are kept in one arena that is
//! emptied when full. A trace whose values never repeat costs a lookup and a copy per value, and
//! bounded memory.

use std::sync::Mutex;

/// Bytes of text the lookup key is made of: values that differ only further on share a set.
const HEAD: usize = 32;
/// Shorter values are scanned every time (a short scan costs about what a lookup does).
const SHORTEST: usize = 12;
/// Longer values are scanned every time (rare, and a long scan costs little beside its bytes).
const LONGEST: usize = 4 << 10;
const SET_BITS: u32 = 10;
const WAYS: usize = 8;
/// Bytes of remembered text kept at most; then everything is forgotten and the memo starts again.
const ARENA_BYTES: usize = 512 << 10;

#[derive(Debug, Clone, Copy, Default)]
struct Slot {
    /// The mixed head and key (a value whose head and key differ never matches one that agrees).
    tag: u64,
    hash: u64,
    start: u32,
    /// 0 for an empty slot.
    len: u32,
}

/// What one reading thread remembers: values (see the module's documentation) and keys (see
/// [`Memo::guess_key`]).
#[derive(Debug, Default)]
pub struct Memo {
    arena: Vec<u8>,
    /// `WAYS` slots per set; empty until the first value is remembered.
    slots: Vec<Slot>,
    /// Picks the way a new value replaces when its set is full.
    clock: usize,
    /// `KEY_WAYS` guesses per (level, previous key code); empty until the first key is learnt.
    keys: Vec<KeyGuess>,
    /// Remembered spans (see [`Memo::find_span`]), chained by tag bucket; emptied with the arena.
    spans: Vec<SpanSlot>,
    /// The first span of each bucket's chain (`NO_SPAN` for none).
    span_heads: Vec<u32>,
}

/// Args a span holds at most.
pub const SPAN_ARGS: usize = 6;
/// Spans kept at most: an op's spans share their first bytes (`"Concrete Inputs": ["", ...`), so
/// they are chained per tag, most recently found first, rather than kept a few per set.
const SPANS: usize = 2048;
const SPAN_BUCKET_BITS: u32 = 9;
/// Spans compared per lookup at most.
const SPAN_CHAIN: usize = 16;
const NO_SPAN: u32 = u32::MAX;
/// The memo's key for span tags (apart from every argument's).
const SPAN_KEY: u32 = 1 << 16;

/// One arg of a remembered span: its code, where its key (after the quote) and its value lie in the
/// span's text, and the value's hash (0 where none is kept).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SpanArg {
    pub code: u32,
    pub key_at: u32,
    pub key_len: u32,
    pub value_at: u32,
    pub value_len: u32,
    pub hash: u64,
}

#[derive(Debug, Clone, Copy)]
struct SpanSlot {
    tag: u64,
    start: u32,
    len: u32,
    args: [SpanArg; SPAN_ARGS],
    count: usize,
    /// The next span of the same bucket, or `NO_SPAN`.
    next: u32,
}

/// Bytes of text a key guess covers at most: the key's quotes, the colon and the blanks after it.
const KEY_BYTES: usize = 32;
/// Key codes per level (a level's codes are below this).
pub const KEY_CODES: u32 = 128;
const KEY_WAYS: usize = 2;

/// The text from a key's opening quote to its value (`"cat": `), what the key is, and how long the
/// key's own text is: one guess of what follows a key at one level.
#[derive(Debug, Clone, Copy, Default)]
struct KeyGuess {
    words: [u64; KEY_BYTES / 8],
    masks: [u64; KEY_BYTES / 8],
    /// 0 for no guess.
    len: u8,
    key_len: u8,
    code: u8,
}

/// The first `KEY_BYTES` bytes of `text` as little-endian words.
#[inline]
fn key_words(text: &[u8]) -> Option<[u64; KEY_BYTES / 8]> {
    let head = text.get(..KEY_BYTES)?;
    let mut words = [0_u64; KEY_BYTES / 8];
    for (w, chunk) in words.iter_mut().zip(head.chunks_exact(8)) {
        *w = u64::from_le_bytes(<[u8; 8]>::try_from(chunk).ok()?);
    }
    Some(words)
}

/// The tag of the text starting at `text` (for the argument `key`) and its set's first slot.
#[inline]
fn tag_of(text: &[u8], key: u32) -> Option<(u64, usize)> {
    let head = text.get(..HEAD)?;
    let mut tag = u64::from(key).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    for word in head.chunks_exact(8) {
        let word = u64::from_le_bytes(<[u8; 8]>::try_from(word).ok()?);
        tag = (tag.rotate_left(26) ^ word).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    // Never 0, so that no tag equals an empty slot's.
    let tag = tag | 1;
    Some((tag, (tag >> (64 - SET_BITS)) as usize * WAYS))
}

impl Memo {
    /// The remembered value (for the argument `key`) that `text` starts with: its length and hash.
    #[inline]
    pub fn find(&self, key: u32, text: &[u8]) -> Option<(usize, u64)> {
        if self.slots.is_empty() {
            return None;
        }
        let (tag, set) = tag_of(text, key)?;
        for slot in self.slots.get(set..set + WAYS)? {
            if slot.tag != tag {
                continue;
            }
            let (start, len) = (slot.start as usize, slot.len as usize);
            if text.get(..len) == self.arena.get(start..start + len) {
                return Some((len, slot.hash));
            }
        }
        None
    }

    /// Room in the arena for `len` more bytes: when full, everything is forgotten (values and
    /// spans point into it).
    fn make_room(&mut self, len: usize) {
        if self.slots.is_empty() || self.arena.len() + len > ARENA_BYTES {
            self.arena.clear();
            self.arena.reserve(ARENA_BYTES);
            self.slots.clear();
            self.slots.resize((1 << SET_BITS) * WAYS, Slot::default());
            self.spans.clear();
            self.span_heads.clear();
            self.span_heads.resize(1 << SPAN_BUCKET_BITS, NO_SPAN);
        }
    }

    /// The remembered span that `text` starts with: its length and its args. A span is a run of
    /// args (keys and array or object values, with what lies between them) that the quick reader
    /// read one by one before; reading the same bytes again would do the same, so it is done at
    /// once (see `quick::args`). A span found moves to the front of its chain.
    #[inline]
    pub fn find_span(&mut self, text: &[u8]) -> Option<(usize, [SpanArg; SPAN_ARGS], usize)> {
        if self.span_heads.is_empty() {
            return None;
        }
        let (tag, _) = tag_of(text, SPAN_KEY)?;
        let bucket = (tag >> (64 - SPAN_BUCKET_BITS)) as usize;
        let mut at = *self.span_heads.get(bucket)?;
        let mut before = NO_SPAN;
        for _ in 0..SPAN_CHAIN {
            let slot = self.spans.get(at as usize)?;
            let next = slot.next;
            let (start, len) = (slot.start as usize, slot.len as usize);
            if slot.tag == tag && text.get(..len) == self.arena.get(start..start + len) {
                let found = (len, slot.args, slot.count);
                if before != NO_SPAN {
                    // Unlink it and put it first.
                    if let Some(prev) = self.spans.get_mut(before as usize) {
                        prev.next = next;
                    }
                    let head = self.span_heads.get(bucket).copied().unwrap_or(NO_SPAN);
                    if let Some(slot) = self.spans.get_mut(at as usize) {
                        slot.next = head;
                    }
                    if let Some(first) = self.span_heads.get_mut(bucket) {
                        *first = at;
                    }
                }
                return Some(found);
            }
            before = at;
            at = next;
        }
        None
    }

    /// Remembers the span at the start of `text`, `len` bytes, with its args.
    pub fn remember_span(&mut self, text: &[u8], len: usize, args: &[SpanArg]) {
        let (Some(span), Some((tag, _))) = (text.get(..len), tag_of(text, SPAN_KEY)) else {
            return;
        };
        if len > LONGEST || args.is_empty() || args.len() > SPAN_ARGS {
            return;
        }
        if self.spans.len() >= SPANS {
            // Forget everything (the arena is shared with the values).
            self.slots.clear();
        }
        self.make_room(len);
        let (Ok(start), Ok(len), Ok(index)) = (
            u32::try_from(self.arena.len()),
            u32::try_from(len),
            u32::try_from(self.spans.len()),
        ) else {
            return;
        };
        let bucket = (tag >> (64 - SPAN_BUCKET_BITS)) as usize;
        let Some(head) = self.span_heads.get_mut(bucket) else {
            return;
        };
        let mut kept = [SpanArg::default(); SPAN_ARGS];
        for (k, a) in kept.iter_mut().zip(args) {
            *k = *a;
        }
        self.spans.push(SpanSlot {
            tag,
            start,
            len,
            args: kept,
            count: args.len(),
            next: *head,
        });
        *head = index;
        self.arena.extend_from_slice(span);
    }

    /// Remembers the value at the start of `text`, its first `len` bytes, just scanned, with its
    /// hash.
    pub fn remember(&mut self, key: u32, text: &[u8], len: usize, hash: u64) {
        let (Some(value), Some((tag, set))) = (text.get(..len), tag_of(text, key)) else {
            return;
        };
        if !(SHORTEST..=LONGEST).contains(&len) {
            return;
        }
        self.make_room(len);
        let (Ok(start), Ok(len)) = (u32::try_from(self.arena.len()), u32::try_from(len)) else {
            return;
        };
        let Some(ways) = self.slots.get_mut(set..set + WAYS) else {
            return;
        };
        let way = match ways.iter().position(|s| s.len == 0) {
            Some(free) => free,
            None => {
                self.clock = self.clock.wrapping_add(1);
                self.clock % WAYS
            }
        };
        if let Some(slot) = ways.get_mut(way) {
            self.arena.extend_from_slice(value);
            *slot = Slot {
                tag,
                hash,
                start,
                len,
            };
        }
    }
}

impl Memo {
    /// The key at the start of `text` (at its opening quote), when it is one of the keys that
    /// followed the key coded `prev` at level `level` before: the length of its text up to its value
    /// (`"cat": `), the length of the key itself, and its code. A key is the same key only when
    /// its whole text, quotes and colon included, is byte for byte the same, so that reading it
    /// again would give the same answer: the guess only saves the reading.
    #[inline(always)]
    pub fn guess_key(&self, level: usize, prev: u32, text: &[u8]) -> Option<(usize, usize, u32)> {
        if self.keys.is_empty() {
            return None;
        }
        let words = key_words(text)?;
        let at = (level * KEY_CODES as usize + prev as usize) * KEY_WAYS;
        for guess in self.keys.get(at..at + KEY_WAYS)? {
            let differs = words
                .iter()
                .zip(guess.words.iter().zip(&guess.masks))
                .fold(0, |acc, (w, (g, m))| acc | ((w ^ g) & m));
            if differs == 0 && guess.len != 0 {
                return Some((
                    usize::from(guess.len),
                    usize::from(guess.key_len),
                    u32::from(guess.code),
                ));
            }
        }
        None
    }

    /// Learns that the key at the start of `text`, `key_len` bytes long and coded `code`, with its
    /// value `len` bytes on, followed the key coded `prev` at level `level`.
    pub fn learn_key(
        &mut self,
        level: usize,
        prev: u32,
        text: &[u8],
        (len, key_len, code): (usize, usize, u32),
    ) {
        let (Some(words), Ok(len8), Ok(key_len), Ok(code)) = (
            key_words(text),
            u8::try_from(len),
            u8::try_from(key_len),
            u8::try_from(code),
        ) else {
            return;
        };
        if len > KEY_BYTES || len == 0 {
            return;
        }
        if self.keys.is_empty() {
            self.keys
                .resize(2 * KEY_CODES as usize * KEY_WAYS, KeyGuess::default());
        }
        let mut masks = [0_u64; KEY_BYTES / 8];
        for (i, m) in masks.iter_mut().enumerate() {
            let covered = len.saturating_sub(i * 8).min(8);
            *m = if covered == 8 {
                u64::MAX
            } else {
                (1_u64 << (covered * 8)) - 1
            };
        }
        let mut words = words;
        for (w, m) in words.iter_mut().zip(&masks) {
            *w &= m;
        }
        let at = (level * KEY_CODES as usize + prev as usize) * KEY_WAYS;
        if let Some(ways) = self.keys.get_mut(at..at + KEY_WAYS) {
            ways.rotate_right(1);
            if let Some(first) = ways.first_mut() {
                *first = KeyGuess {
                    words,
                    masks,
                    len: len8,
                    key_len,
                    code,
                };
            }
        }
    }
}

/// The memos of one file's reading, lent to one segment at a time (a segment takes one when it
/// starts and gives it back when done, so at most one per pool thread is ever made).
#[derive(Debug, Default)]
pub struct Memos(Mutex<Vec<Memo>>);

impl Memos {
    pub fn take(&self) -> Memo {
        let popped = match self.0.lock() {
            Ok(mut memos) => memos.pop(),
            Err(poisoned) => poisoned.into_inner().pop(),
        };
        popped.unwrap_or_default()
    }

    pub fn give_back(&self, memo: Memo) {
        match self.0.lock() {
            Ok(mut memos) => memos.push(memo),
            Err(poisoned) => poisoned.into_inner().push(memo),
        }
    }
}

/// A hash of a value's text (FxHash's multiply-rotate over little-endian words, then the length).
#[inline]
pub fn text_hash(text: &[u8]) -> u64 {
    const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;
    let add = |h: u64, word: u64| (h.rotate_left(5) ^ word).wrapping_mul(SEED);
    let mut h = 0_u64;
    let mut words = text.chunks_exact(8);
    for word in &mut words {
        h = add(
            h,
            u64::from_le_bytes(<[u8; 8]>::try_from(word).unwrap_or_default()),
        );
    }
    let mut last = [0_u8; 8];
    for (slot, b) in last.iter_mut().zip(words.remainder()) {
        *slot = *b;
    }
    add(add(h, u64::from_le_bytes(last)), text.len() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    const AFTER: &[u8] = b", \"Input Strides\": [[1048576, 1024, 1], [], []], \"Ev Idx\": 1}";

    fn with_after(value: &[u8]) -> Vec<u8> {
        [value, AFTER].concat()
    }

    #[test]
    fn a_remembered_value_is_found_only_where_the_text_starts_with_it() {
        let mut memo = Memo::default();
        let value = b"[[8, 1024, 1024], [], [], [], [], []]";
        let text = with_after(value);
        assert_eq!(memo.find(1, &text), None);
        memo.remember(1, &text, value.len(), 7);
        assert_eq!(memo.find(1, &text), Some((value.len(), 7)));
        // The same value with other bytes after it (a bad one is the caller's to find).
        let mut bad = text.clone();
        bad[value.len()] = b']';
        assert_eq!(memo.find(1, &bad), Some((value.len(), 7)));
        // Another argument, a longer array, a cut or changed one: not this value.
        assert_eq!(memo.find(2, &text), None);
        for other in [
            &b"[[8, 1024, 1024], [], [], [], [], [], []]"[..],
            b"[[8, 1024, 1024], [], [], [], [], [",
            b"[[8, 1024, 1024], [], [], [], [], [1]]",
            b"[[8, 1024, 1024], [], [], [], [], []",
        ] {
            let text = with_after(other);
            assert_eq!(
                memo.find(1, &text),
                None,
                "{}",
                String::from_utf8_lossy(other)
            );
        }
        // Too short to remember, or too little text for a head: always scanned.
        let short = with_after(b"[[], []]");
        memo.remember(1, &short, 8, 1);
        assert_eq!(memo.find(1, &short), None);
        let end = b"[[8, 1024, 1024], [], []]";
        memo.remember(1, end, end.len(), 1);
        assert_eq!(memo.find(1, end), None);
    }

    #[test]
    fn a_full_set_and_a_full_arena_forget_old_values() {
        let mut memo = Memo::default();
        let values: Vec<String> = (0..3000)
            .map(|i| format!("[[1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 12], [{i}]]"))
            .collect();
        for (i, v) in values.iter().enumerate() {
            let text = with_after(v.as_bytes());
            memo.remember(3, &text, v.len(), i as u64);
            assert_eq!(memo.find(3, &text), Some((v.len(), i as u64)));
        }
        // Every value shares its first 32 bytes: one set holds the last `WAYS` of them.
        let found = values
            .iter()
            .filter(|v| memo.find(3, &with_after(v.as_bytes())).is_some())
            .count();
        assert_eq!(found, WAYS);
        let long = format!("[{}]", "1, ".repeat(1000) + "1");
        for _ in 0..2 * ARENA_BYTES / long.len() {
            memo.remember(4, long.as_bytes(), long.len(), 0);
            assert!(memo.arena.len() <= ARENA_BYTES);
        }
        assert!(memo.find(4, long.as_bytes()).is_some());
    }

    #[test]
    fn memos_are_lent_and_given_back() {
        let memos = Memos::default();
        let mut memo = memos.take();
        let text = with_after(b"[\"c10::BFloat16\", \"Scalar\", \"\"]");
        memo.remember(1, &text, 31, 5);
        memos.give_back(memo);
        let again = memos.take();
        assert_eq!(again.find(1, &text), Some((31, 5)));
    }
}
