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
use super::quick::read_event_into;
use super::raw::RawEvent;
use crate::error::Result;
use rayon::prelude::*;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

/// How a segment (or a round of segments) ended; offsets are into the round's text.
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

struct Segment<'a> {
    start: usize,
    events: Vec<RawEvent<'a>>,
    /// Where each event starts.
    offsets: Vec<usize>,
    end: End,
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

/// Emptied vectors of events, kept from round to round: a segment's vector is about a megabyte,
/// and a fresh one each time costs more in page faults than the events cost to move into it.
pub type Spare = Mutex<Vec<Vec<RawEvent<'static>>>>;

/// Empties `events` and keeps its allocation (`filter_map` + `collect` reuse it in place; the
/// lifetime of the text the events borrowed from ends here, so the empty vector outlives it).
fn recycle(spare: &Spare, mut events: Vec<RawEvent<'_>>) {
    events.clear();
    // Not `filter`: the point is the new element type (another lifetime), which `filter` keeps.
    #[allow(clippy::unnecessary_filter_map)]
    let empty: Vec<RawEvent<'static>> = events.into_iter().filter_map(|_| None).collect();
    if let Ok(mut spare) = spare.lock() {
        spare.push(empty);
    }
}

/// Parses events from `start` until the next one starts at or past `limit` (or the text ends).
fn parse_segment<'a>(text: &'a str, start: usize, limit: usize, spare: &Spare) -> Segment<'a> {
    let bytes = text.as_bytes();
    let mut events: Vec<RawEvent<'a>> = spare
        .lock()
        .ok()
        .and_then(|mut spare| spare.pop())
        .unwrap_or_default();
    // Room for the segment's events up front (Kineto events run 200-400 bytes): `RawEvent` is
    // large, and growing the vector would move every event again.
    events.reserve(limit.min(text.len()).saturating_sub(start) / 192 + 8);
    let mut offsets = Vec::with_capacity(events.capacity());
    let mut at = skip_blank(bytes, start);
    let end = loop {
        let Some(rest) = text.get(at..) else {
            break End::Anomaly(at);
        };
        // The event is parsed in its place in the vector; any way out but the last pops it.
        events.push(RawEvent::default());
        let parsed = events
            .last_mut()
            .and_then(|slot| read_event_into(rest, slot));
        let len = match parsed {
            Some(Ok(len)) => len,
            Some(Err(e)) if !e.is_eof() => {
                events.pop();
                break End::Anomaly(at);
            }
            _ => {
                events.pop();
                break End::Incomplete(at);
            }
        };
        let after = skip_blank(bytes, at + len);
        let next = match bytes.get(after) {
            Some(b']') => {
                offsets.push(at);
                break End::Closed(after + 1);
            }
            Some(b',') => skip_blank(bytes, after + 1),
            // The text ends between events: this one is re-read with what follows it.
            None => {
                events.pop();
                break End::Incomplete(at);
            }
            Some(_) => {
                events.pop();
                break End::Anomaly(at);
            }
        };
        match bytes.get(next) {
            None => {
                events.pop();
                break End::Incomplete(at);
            }
            // A trailing comma: the framing path reports it.
            Some(b']') => {
                events.pop();
                break End::Anomaly(at);
            }
            Some(_) => {}
        }
        offsets.push(at);
        if next >= limit {
            break End::Next(next);
        }
        at = next;
    };
    Segment {
        start,
        events,
        offsets,
        end,
    }
}

/// Parses what `text` holds of the array from `start` (an event start known to be right, blanks
/// allowed before it) in segments of about `segment` bytes, and adds the events it can vouch for to
/// `events` in file order, numbered from `first`. Returns how it ended and how many events it added;
/// `End::Next` means a guess was wrong and the next round should start there.
pub fn round<'a>(
    text: &'a str,
    start: usize,
    segment: usize,
    first: u64,
    events: &mut Events,
    spare: &Spare,
) -> Result<(End, u64)> {
    let bytes = text.as_bytes();
    let mut starts = vec![start];
    let mut from = start + segment;
    while from < bytes.len() {
        let Some(guess) = guess_start(bytes, from) else {
            break;
        };
        starts.push(guess);
        from = guess + segment;
    }
    let stop = AtomicBool::new(false);
    let (sender, receiver) = std::sync::mpsc::channel::<(usize, Segment<'a>)>();
    let parse = |k: usize, s: usize, sender: &std::sync::mpsc::Sender<(usize, Segment<'a>)>| {
        if !stop.load(Ordering::Relaxed) {
            let limit = starts.get(k + 1).copied().unwrap_or(usize::MAX);
            // The receiver is gone only when the walk stopped early; the result is unused.
            let _ = sender.send((k, parse_segment(text, s, limit, spare)));
        }
    };
    if rayon::current_thread_index().is_some() {
        // On a pool thread (ranks read in parallel) this thread must not block on the channel
        // while its own queued segments wait for it: parse them all, then walk.
        starts
            .par_iter()
            .enumerate()
            .for_each_with(sender, |sender, (k, &s)| parse(k, s, sender));
        return walk(&receiver, starts.len(), start, first, events, spare);
    }
    // Segments parse on the pool while this thread adds them to the store in order as they come:
    // the store (serial) overlaps the parsing instead of waiting for the whole block.
    rayon::in_place_scope(|scope| {
        for (k, &s) in starts.iter().enumerate() {
            let (sender, parse) = (sender.clone(), &parse);
            scope.spawn(move |_| parse(k, s, &sender));
        }
        drop(sender);
        let walked = walk(&receiver, starts.len(), start, first, events, spare);
        stop.store(true, Ordering::Relaxed);
        drop(receiver);
        walked
    })
}

/// Takes the parsed segments in any order and adds them in file order while each one starts where
/// the one before it ended.
fn walk(
    receiver: &std::sync::mpsc::Receiver<(usize, Segment<'_>)>,
    count: usize,
    start: usize,
    first: u64,
    events: &mut Events,
    spare: &Spare,
) -> Result<(End, u64)> {
    let mut parked: Vec<Option<Segment<'_>>> = (0..count).map(|_| None).collect();
    let mut added = 0_u64;
    let mut cursor = start;
    for k in 0..count {
        let segment = loop {
            if let Some(segment) = parked.get_mut(k).and_then(Option::take) {
                break segment;
            }
            let Ok((j, segment)) = receiver.recv() else {
                return Ok((End::Next(cursor), added));
            };
            if let Some(slot) = parked.get_mut(j) {
                *slot = Some(segment);
            }
        };
        if segment.start != cursor {
            break;
        }
        for (event, &at) in segment.events.iter().zip(&segment.offsets) {
            // An event the store refuses goes to the framing path too: a framing error further on
            // (in the same batch) is reported before it, as it always was.
            if events.push(first + added, event).is_err() {
                return Ok((End::Anomaly(at), added));
            }
            added += 1;
        }
        recycle(spare, segment.events);
        match segment.end {
            End::Next(next) => cursor = next,
            other => return Ok((other, added)),
        }
    }
    Ok((End::Next(cursor), added))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn events_of(text: &str, segment: usize) -> (End, u64, Events) {
        let mut events = Events::default();
        let (end, added) = round(text, 0, segment, 0, &mut events, &Spare::default()).unwrap();
        (end, added, events)
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
        let (mut at, mut total) = (start, 0);
        let spare = Spare::default();
        loop {
            let (end, added) = round(text, at, segment, total, &mut events, &spare).unwrap();
            total += added;
            match end {
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

    #[test]
    fn recycled_vectors_keep_their_room() {
        let spare = Spare::default();
        let text = String::from(EV);
        let mut events = vec![RawEvent::default()];
        read_event_into(&text, &mut events[0]).unwrap().unwrap();
        events.reserve(100);
        let room = events.capacity();
        recycle(&spare, events);
        drop(text);
        let kept = spare.lock().unwrap().pop().unwrap();
        assert_eq!((kept.len(), kept.capacity()), (0, room));
    }
}
