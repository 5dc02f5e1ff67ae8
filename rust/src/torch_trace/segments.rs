//! The fast path through `traceEvents`: no framing pass, and no serial stage but the store.
//!
//! A block of the array's text is cut into segments that parse in parallel. The first starts at an
//! event start known to be right; each other one at a guessed event start (a `{` that follows `}`
//! and `,`). Each segment parses event after event (`quick`'s reader, serde_json's where it gives
//! up; either says where the event ends), so it also finds where the next segment should begin.
//! Walking the segments in order, a segment is kept only if its guess is exactly where the segment
//! before it ended: a wrong guess (a `},{` inside a string, say) costs a re-parse, never a wrong
//! event. Anything unusual (bad JSON, a bad separator,
//! the end of the input) stops the fast path at the last event start known to be right; the reader's
//! framing path takes over from there and reports exactly what it always reported.

use super::events::Events;
use super::interned::SegmentStrings;
use super::memo::{Memo, Memos};
use super::quick::read_event_into;
use super::raw::RawEvent;
use rayon::prelude::*;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Receiver;

/// How a segment (or a round of segments) ended; offsets are into the round's bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    /// The next event starts here, at or past the segment's limit.
    Next(usize),
    /// The array closed; the offset is just past its `]`.
    Closed(usize),
    /// The event starting here runs past the end of the text (more input needed, or truncated).
    Incomplete(usize),
    /// The event starting here is bad JSON, is followed by something other than `,` or `]`, or
    /// was refused by the store (a negative duration, say).
    Anomaly(usize),
}

impl End {
    /// The same end, its offset moved on by `by`.
    fn shifted(self, by: usize) -> End {
        match self {
            End::Next(at) => End::Next(at + by),
            End::Closed(at) => End::Closed(at + by),
            End::Incomplete(at) => End::Incomplete(at + by),
            End::Anomaly(at) => End::Anomaly(at + by),
        }
    }

    /// Where it is.
    pub fn offset(self) -> usize {
        let (End::Next(at) | End::Closed(at) | End::Incomplete(at) | End::Anomaly(at)) = self;
        at
    }
}

/// One segment, read into its own events (names borrowed from the text) on a pool thread.
struct Segment<'a> {
    start: usize,
    events: Events<SegmentStrings<'a>>,
    /// Events read and kept (the store refused none of them).
    added: u64,
    end: End,
    /// Whether a byte that is not UTF-8 at all ends the segment's text.
    broken: bool,
}

fn skip_blank(bytes: &[u8], mut i: usize) -> usize {
    while matches!(bytes.get(i), Some(b' ' | b'\n' | b'\r' | b'\t')) {
        i += 1;
    }
    i
}

/// The last non-blank byte before `i`, with its offset.
fn blank_before(bytes: &[u8], mut i: usize) -> Option<(usize, u8)> {
    while i > 0 {
        i -= 1;
        match bytes.get(i) {
            Some(b' ' | b'\n' | b'\r' | b'\t') => {}
            Some(&b) => return Some((i, b)),
            None => return None,
        }
    }
    None
}

/// A likely event start at or after `from`: a `{` after `,` after `}` (blanks between allowed).
fn guess_start(bytes: &[u8], from: usize) -> Option<usize> {
    let mut i = from;
    loop {
        let at = i + memchr::memchr(b'{', bytes.get(i..)?)?;
        if let Some((comma, b',')) = blank_before(bytes, at) {
            if matches!(blank_before(bytes, comma), Some((_, b'}'))) {
                return Some(at);
            }
        }
        i = at + 1;
    }
}

/// Whether a parse error of the event at the start of `text` lies at the text's end. serde_json
/// calls a number cut after its `.` or exponent (`5352965319059.`) an invalid number, not the end
/// of its input; at a block's end that is a cut, to be read again with the next block (a real
/// error shows again there, and at the file's end the framing path names it).
fn at_text_end(text: &str, e: &serde_json::Error) -> bool {
    // serde_json's position: the 1-based line, and the bytes from that line's start.
    let line_start = match e.line() {
        0 | 1 => Some(0),
        line => memchr::memchr_iter(b'\n', text.as_bytes())
            .nth(line - 2)
            .map(|i| i + 1),
    };
    line_start.is_some_and(|start| start + e.column() >= text.len())
}

/// The longest prefix of `bytes` that is UTF-8 text, and whether a byte that is not UTF-8 at all
/// ends it (a character cut at the end of `bytes` is not one: the next block completes it).
/// simdutf8 first (SIMD chosen at run time, several times std's rate), std's for where and why.
fn checked(bytes: &[u8]) -> (&str, bool) {
    match simdutf8::basic::from_utf8(bytes).or_else(|_| std::str::from_utf8(bytes)) {
        Ok(text) => (text, false),
        Err(e) => {
            let valid = bytes.get(..e.valid_up_to()).unwrap_or_default();
            (
                std::str::from_utf8(valid).unwrap_or_default(),
                e.error_len().is_some(),
            )
        }
    }
}

/// Reads events from `*at` in `text` into `events` until the next one starts at or past `limit`
/// (offsets into `text`), or something stops it; `*at` is then the start of the last event looked
/// at (the one an `Incomplete` or `Anomaly` is about).
fn read_events<'a>(
    text: &'a str,
    at: &mut usize,
    limit: usize,
    memo: &mut Memo,
    events: &mut Events<SegmentStrings<'a>>,
    added: &mut u64,
) -> End {
    let bytes = text.as_bytes();
    loop {
        let Some(rest) = text.get(*at..) else {
            return End::Anomaly(*at);
        };
        let mut event = RawEvent::default();
        let len = match read_event_into(rest, &mut event, memo) {
            Some(Ok(len)) => len,
            Some(Err(e)) if !e.is_eof() && !at_text_end(rest, &e) => return End::Anomaly(*at),
            _ => return End::Incomplete(*at),
        };
        let after = skip_blank(bytes, *at + len);
        let next = match bytes.get(after) {
            Some(b']') => None,
            Some(b',') => {
                let next = skip_blank(bytes, after + 1);
                match bytes.get(next) {
                    None => return End::Incomplete(*at),
                    // A trailing comma: the framing path reports it.
                    Some(b']') => return End::Anomaly(*at),
                    Some(_) => Some(next),
                }
            }
            // The text ends between events: this one is re-read with what follows it.
            None => return End::Incomplete(*at),
            Some(_) => return End::Anomaly(*at),
        };
        // An event the store refuses goes to the framing path too: a framing error further on
        // (in the same batch) is reported before it, as it always was.
        if events.push(*added, &event).is_err() {
            return End::Anomaly(*at);
        }
        *added += 1;
        match next {
            None => return End::Closed(after + 1),
            Some(next) if next >= limit => return End::Next(next),
            Some(next) => *at = next,
        }
    }
}

/// Reads events from `start` until the next one starts at or past `limit` (or the text ends), each
/// into the segment's own store as soon as it is read: the store's work (names, threads, the
/// compact structs) runs on the pool with the parse, and the event's text is still in cache. The
/// segment checks its own bytes are UTF-8, so no thread checks a whole block while the pool waits:
/// up to `overrun` bytes past `limit` (room for the event that crosses the limit to end in; an
/// event longer than that makes it check the rest of the block).
fn parse_segment<'a>(
    bytes: &'a [u8],
    (start, limit, overrun): (usize, usize, usize),
    memos: &Memos,
) -> Segment<'a> {
    let piece = |end: usize| checked(bytes.get(start..end).unwrap_or_default());
    let first_end = limit.saturating_add(overrun).min(bytes.len());
    let (mut text, mut broken) = piece(first_end);
    let mut to_block_end = first_end == bytes.len();
    let mut memo = memos.take();
    let mut events = Events::<SegmentStrings<'_>>::default();
    let mut added = 0_u64;
    // Offsets from here on are into `text`, which starts at `start`.
    let limit = limit.saturating_sub(start);
    let mut at = skip_blank(text.as_bytes(), 0);
    let end = loop {
        let end = read_events(text, &mut at, limit, &mut memo, &mut events, &mut added);
        match end {
            // The text stopped `overrun` past the limit, not at the block's end: check the rest,
            // then read the event at `at` again.
            End::Incomplete(_) if !to_block_end && !broken => {
                (text, broken) = piece(bytes.len());
                to_block_end = true;
            }
            end => break end,
        }
    };
    memos.give_back(memo);
    Segment {
        start,
        events,
        added,
        end: end.shifted(start),
        broken,
    }
}

/// Parses what `bytes` holds of the array from `start` (an event start known to be right, blanks
/// allowed before it) in segments of about `segment` bytes, and adds the events it can vouch for to
/// `events` in file order. Returns how it ended and how many events it added; `End::Next` means a
/// guess was wrong and the next round should start there. The bytes need not be UTF-8: each
/// segment checks its own, in parallel (the text stops at the first byte that is not). `meanwhile` runs on the calling thread
/// while the pool parses (the reader reads the next block there). `memos` are the values the
/// segments remember (see `memo`), kept from round to round.
pub fn round<'a>(
    bytes: &'a [u8],
    start: usize,
    segment: usize,
    memos: &Memos,
    events: &mut Events,
    meanwhile: impl FnOnce() + Send,
) -> Walked {
    let mut starts = vec![start];
    let mut from = start + segment;
    while from < bytes.len() {
        let Some(guess) = guess_start(bytes, from) else {
            break;
        };
        starts.push(guess);
        from = guess + segment;
    }
    // An eighth of a segment past its limit: Kineto's events are a few hundred bytes.
    let overrun = (segment / 8).max(1);
    let span = |k: usize, s: usize| (s, starts.get(k + 1).copied().unwrap_or(usize::MAX), overrun);
    if rayon::current_thread_index().is_some() {
        // On a pool thread (ranks read in parallel) this thread must not block on a channel while
        // its own queued segments wait for it: parse them all, then walk.
        let (parsed, ()) = rayon::join(
            || {
                starts
                    .par_iter()
                    .enumerate()
                    .map(|(k, &s)| parse_segment(bytes, span(k, s), memos))
                    .collect::<Vec<_>>()
            },
            meanwhile,
        );
        return walk(parsed, start, events);
    }
    // Segments parse on the pool while this thread runs `meanwhile`, then adds them to the store
    // in order as they come.
    let stop = AtomicBool::new(false);
    let (sender, receiver) = std::sync::mpsc::channel::<(usize, Segment<'a>)>();
    rayon::in_place_scope(|scope| {
        for (k, &s) in starts.iter().enumerate() {
            let (sender, stop, span) = (sender.clone(), &stop, &span);
            scope.spawn(move |_| {
                if !stop.load(Ordering::Relaxed) {
                    // The receiver is gone only when the walk stopped early; the result is unused.
                    let _ = sender.send((k, parse_segment(bytes, span(k, s), memos)));
                }
            });
        }
        drop(sender);
        meanwhile();
        let walked = walk(InOrder::new(receiver, starts.len()), start, events);
        stop.store(true, Ordering::Relaxed);
        walked
    })
}

/// The segments from a channel (sent in any order), in order.
struct InOrder<'a> {
    receiver: Receiver<(usize, Segment<'a>)>,
    parked: Vec<Option<Segment<'a>>>,
    next: usize,
}

impl<'a> InOrder<'a> {
    fn new(receiver: Receiver<(usize, Segment<'a>)>, count: usize) -> Self {
        InOrder {
            receiver,
            parked: (0..count).map(|_| None).collect(),
            next: 0,
        }
    }
}

impl<'a> Iterator for InOrder<'a> {
    type Item = Segment<'a>;

    fn next(&mut self) -> Option<Segment<'a>> {
        loop {
            if let Some(segment) = self.parked.get_mut(self.next)?.take() {
                self.next += 1;
                return Some(segment);
            }
            let (k, segment) = self.receiver.recv().ok()?;
            if let Some(slot) = self.parked.get_mut(k) {
                *slot = Some(segment);
            }
        }
    }
}

/// How a round ended: where, how many events it added, and whether a byte that is not UTF-8 at all
/// ends the text it stopped in (the framing path names it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Walked {
    pub end: End,
    pub added: u64,
    pub broken: bool,
}

/// Adds the segments in file order while each one starts where the one before it ended.
fn walk<'a>(
    segments: impl IntoIterator<Item = Segment<'a>>,
    start: usize,
    events: &mut Events,
) -> Walked {
    let mut added = 0_u64;
    let mut cursor = start;
    for segment in segments {
        if segment.start != cursor {
            break;
        }
        events.append(segment.events);
        added += segment.added;
        match segment.end {
            End::Next(next) => cursor = next,
            end => {
                return Walked {
                    end,
                    added,
                    broken: segment.broken,
                }
            }
        }
    }
    Walked {
        end: End::Next(cursor),
        added,
        broken: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn events_of(text: &str, segment: usize) -> (End, u64, Events) {
        let mut events = Events::default();
        let walked = round(
            text.as_bytes(),
            0,
            segment,
            &Memos::default(),
            &mut events,
            || {},
        );
        (walked.end, walked.added, events)
    }

    const EV: &str =
        r#"{"ph": "X", "cat": "cpu_op", "name": "a},{", "pid": 1, "tid": 1, "ts": 1, "dur": 1}"#;

    #[test]
    fn segments_agree_with_one_pass_whatever_the_cut() {
        let text = format!(" {EV},\n {EV}, {EV},{EV}\n]  ");
        for segment in 1..text.len() + 2 {
            let (end, added, events) = events_of(&text, segment);
            // A wrong guess (inside the name) stops the round early, never adds a wrong event.
            match end {
                End::Closed(after) => {
                    assert_eq!(text.get(after..), Some("  "));
                    assert_eq!(added, 4);
                }
                End::Next(next) => assert!(added < 4 && next > 0),
                other => unreachable!("{other:?} at segment {segment}"),
            }
            assert_eq!(events.cpu.len() as u64, added);
        }
    }

    #[test]
    fn the_end_of_the_text_and_bad_input_stop_at_a_known_start() {
        let cut = format!("{EV}, {EV}, {{\"ph\": \"X\", \"na");
        let (end, added, _) = events_of(&cut, 1 << 20);
        assert_eq!((end, added), (End::Incomplete(EV.len() * 2 + 4), 2));
        let between = format!("{EV}, {EV} ");
        assert_eq!(
            events_of(&between, 1 << 20).0,
            End::Incomplete(EV.len() + 2)
        );
        let trailing = format!("{EV}, {EV}, ]");
        assert_eq!(events_of(&trailing, 1 << 20).0, End::Anomaly(EV.len() + 2));
        let bad = format!("{EV}, {EV} x");
        assert_eq!(events_of(&bad, 1 << 20).0, End::Anomaly(EV.len() + 2));
        let nan = format!("{EV}, {{\"ts\": NaN}}]");
        let (end, added, _) = events_of(&nan, 1 << 20);
        assert_eq!((end, added), (End::Anomaly(EV.len() + 2), 1));
    }

    /// The whole array, round after round, as the reader drives it.
    fn read_all(text: &str, start: usize, segment: usize) -> (u64, Events) {
        let mut events = Events::default();
        let memos = Memos::default();
        let (mut at, mut total) = (start, 0);
        loop {
            let walked = round(text.as_bytes(), at, segment, &memos, &mut events, || {});
            total += walked.added;
            match walked.end {
                End::Next(next) => at = next,
                End::Closed(_) => return (total, events),
                other => panic!("{other:?} with segments of {segment}"),
            }
        }
    }

    /// What a read produced, in a form that compares equal when the reads agree (hash maps with a
    /// random hasher print in any order, so they are sorted first).
    fn same_parts(e: &Events) -> String {
        let sorted = |pairs: Vec<String>| {
            let mut pairs = pairs;
            pairs.sort();
            pairs.join(", ")
        };
        let by_kind = e.unmodeled.by_kind.iter();
        format!(
            "{:?} {:?} {:?} {:?} {:?} {:?} {:?} {:?} {:?} {:?} {:?} {:?} {:?} {} {} {}",
            e.strings.values,
            e.threads,
            e.cpu,
            e.runtime,
            e.gpu,
            e.launch_configs,
            e.gpu_annotations,
            e.comms,
            e.syncs,
            e.flows,
            e.counts,
            (e.first_start, e.last_end),
            (&e.unmodeled.unused_fields, &e.unmodeled.unused_args),
            sorted(e.thread_names.iter().map(|p| format!("{p:?}")).collect()),
            sorted(e.process_labels.iter().map(|p| format!("{p:?}")).collect()),
            sorted(
                by_kind
                    .flat_map(|(k, m)| m.iter().map(move |p| format!("{k} {p:?}")))
                    .collect()
            ),
        )
    }

    #[test]
    fn small_segments_read_a_real_trace_as_one_segment_does() {
        let path = crate::testdata::fixtures().join("h200/torch/eager_trace.json");
        let bytes = std::fs::read(path).unwrap();
        let text = std::str::from_utf8(&bytes).unwrap();
        let key = text.find("\"traceEvents\"").unwrap();
        let start = key + text[key..].find('[').unwrap() + 1;
        let (total, whole) = read_all(text, start, usize::MAX / 2);
        assert_eq!(total, 975);
        for segment in [1 << 10, 3 << 10, 64 << 10] {
            let (n, parts) = read_all(text, start, segment);
            assert_eq!(n, total);
            assert_eq!(
                same_parts(&parts),
                same_parts(&whole),
                "segments of {segment}"
            );
        }
        // On a pool thread (ranks read in parallel) a round parses first and walks after: with one
        // thread, waiting on the channel instead would never end.
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap();
        let (n, parts) = pool.install(|| read_all(text, start, 1 << 10));
        assert_eq!((n, same_parts(&parts)), (total, same_parts(&whole)));
    }

    /// One event of each shape in the H200 eager trace (phase, category, argument keys), in file
    /// order, as the array holds them.
    fn shapes_of_a_real_trace() -> String {
        use crate::torch_trace::tests_quick::{text_of, Doc};
        let text = text_of(&crate::testdata::fixtures().join("h200/torch/eager_trace.json"));
        let doc: Doc<'_> = serde_json::from_str(&text).unwrap();
        let mut seen = std::collections::BTreeSet::new();
        let mut kept = Vec::new();
        for raw in doc.events {
            let v: serde_json::Value = serde_json::from_str(raw.get()).unwrap();
            let keys = |k: &str| v.get(k).map(ToString::to_string).unwrap_or_default();
            let args = v
                .get("args")
                .and_then(serde_json::Value::as_object)
                .map(|a| a.keys().cloned().collect::<Vec<_>>().join(","))
                .unwrap_or_default();
            if seen.insert((keys("ph"), keys("cat"), args)) {
                kept.push(raw.get().to_owned());
            }
        }
        kept.join(",\n")
    }

    /// A block may end anywhere in an event (inside a number, a literal, an escape, a key): the
    /// round must stop there as `Incomplete`, to be read again with the next block, never as an
    /// `Anomaly`, which hands the rest of the file to the framing path (3.5 times slower).
    #[test]
    fn a_block_cut_anywhere_in_real_events_stays_on_the_fast_path() {
        let text = shapes_of_a_real_trace();
        assert!(text.len() > 2_000, "{} bytes of events", text.len());
        let mut anomalies = Vec::new();
        for cut in 1..text.len() {
            let Some(head) = text.get(..cut) else {
                continue;
            };
            let (end, _, _) = events_of(head, 1 << 20);
            if let End::Anomaly(at) = end {
                let shown = head.get(head.len().saturating_sub(24)..).unwrap_or(head);
                anomalies.push(format!("cut {cut} (event at {at}): ...{shown}"));
            }
        }
        assert!(anomalies.is_empty(), "{}", anomalies.join("\n"));
    }
}
