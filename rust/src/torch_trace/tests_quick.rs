//! The quick event reader (`quick`) against the serde reader (`serde_reader`): on every event of every
//! Kineto fixture, and on events cut and damaged every way, it gives the same event and length, or
//! gives up (and the serde reader's answer, error included, is the answer).

use super::memo::Memo;
use super::quick::{quick_event, read_event_into};
use super::raw::RawEvent;
use super::serde_reader::parse_event_into;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use serde_json::value::RawValue;
use std::io::Read;
use std::path::{Path, PathBuf};

type Reader = for<'a> fn(&'a str, &mut RawEvent<'a>) -> Option<serde_json::Result<usize>>;

/// What `reader` said about `text`, in a form that compares equal when two readers agree.
fn outcome(reader: Reader, text: &str) -> String {
    let mut ev = RawEvent::default();
    match reader(text, &mut ev) {
        Some(Ok(len)) => format!("{len} {ev:?}"),
        Some(Err(e)) => format!("error {e} eof={}", e.is_eof()),
        None => "blank".into(),
    }
}

fn serde_outcome(text: &str) -> String {
    outcome(parse_event_into, text)
}

fn read_outcome(text: &str) -> String {
    outcome(
        |text, ev| read_event_into(text, ev, &mut Memo::default()),
        text,
    )
}

thread_local! {
    /// A memo that remembers the values of every event a test thread read before.
    static SEEN: std::cell::RefCell<Memo> = std::cell::RefCell::new(Memo::default());
}

fn quick_outcome(text: &str, memo: &mut Memo) -> Result<String, super::scan::GiveUp> {
    let mut ev = RawEvent::default();
    quick_event(text, &mut ev, memo).map(|len| format!("{len} {ev:?}"))
}

/// Checks `text` both ways; true when the quick reader read it itself.
fn agrees(text: &str) -> bool {
    let quick = quick_outcome(text, &mut Memo::default());
    let serde = serde_outcome(text);
    if let Ok(quick) = &quick {
        assert_eq!(quick, &serde, "quick and serde differ on {text:?}");
    }
    assert_eq!(read_outcome(text), serde, "on {text:?}");
    // Through a memo holding the values of earlier texts (and, the second time, of this one), the
    // quick reader reads exactly as without one.
    SEEN.with(|seen| {
        let mut seen = seen.borrow_mut();
        for pass in 0..2 {
            let remembering = quick_outcome(text, &mut seen);
            assert_eq!(remembering, quick, "with a memo, pass {pass}, on {text:?}");
        }
    });
    quick.is_ok()
}

fn kineto_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = path.to_string_lossy();
        if path.is_dir() {
            kineto_files(&path, out);
        } else if name.ends_with(".json") || name.ends_with(".json.gz") {
            out.push(path);
        }
    }
}

pub(super) fn text_of(path: &Path) -> String {
    let bytes = std::fs::read(path).unwrap();
    let mut text = String::new();
    if bytes.starts_with(&[0x1f, 0x8b]) {
        flate2::read::MultiGzDecoder::new(&bytes[..])
            .read_to_string(&mut text)
            .unwrap();
    } else {
        text = String::from_utf8(bytes).unwrap();
    }
    text
}

#[derive(serde::Deserialize)]
pub(super) struct Doc<'a> {
    #[serde(borrow, rename = "traceEvents")]
    pub(super) events: Vec<&'a RawValue>,
}

#[test]
fn quick_reads_every_fixture_event_as_serde_does() {
    let mut files = Vec::new();
    kineto_files(&crate::testdata::fixtures(), &mut files);
    let (mut traces, mut events, mut quick) = (0, 0_usize, 0_usize);
    for path in files {
        let text = text_of(&path);
        let Ok(doc) = serde_json::from_str::<Doc<'_>>(&text) else {
            continue;
        };
        traces += 1;
        for raw in doc.events {
            events += 1;
            // With what follows in the file, as the segment reader sees an event.
            let rest = format!("{}, {{}}", raw.get());
            quick += usize::from(agrees(&rest));
        }
    }
    assert!(traces >= 20, "{traces} traces");
    // The fast path must actually be the one taken: escapes in kept strings are the exception.
    assert!(
        quick * 100 >= events * 95,
        "{quick} of {events} read quickly"
    );
}

/// Events with every shape the quick reader handles, and some it gives up on.
const SAMPLES: [&str; 5] = [
    r#"{"ph": "X", "cat": "cpu_op", "name": "aten::to", "pid": 821, "tid": 821, "ts": 5352965319325.514, "dur": 1952.147, "args": {"External id": 2, "Concrete Inputs": ["", "15", "T\"r\u00e9"], "Input Dims": [[8, 1024, 1024], [], {"a": null}], "Ev Idx": 1, "new": true}}"#,
    r#"{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":1.5e3,"dur":-0.0004,"args":{"grid":[8192,1.0,1],"block":[32,"4"],"stream":7,"correlation":-44,"est. achieved occupancy %":99.5,"blocks per SM":62.06}}"#,
    r#"{"ph": "f", "id": "0x1", "pid": "p", "tid": 1, "ts": "12", "cat": "ac2g", "name": "ac2g", "bp": "e", "zz": [1, {"b": [true]}]}"#,
    r#"{"ph": "M", "name": "thread_name", "args": {"name": "a\\b", "labels": 3, "Collective name": "all", "Group size": 8, "dtype": null, "In msg nelems": 12345678901234567890}}"#,
    r#"{"ts": 1, "ts": 2, "args": {"stream": 1, "stream": [2], "device": 0}, "args": 3, "name": "x"}"#,
];

#[test]
fn quick_agrees_with_serde_on_every_cut_and_damage() {
    for sample in SAMPLES {
        let text = format!("{sample} , {{\"ph\": \"X\"}}");
        agrees(&text);
        for cut in 0..text.len() {
            if let Some(head) = text.get(..cut) {
                agrees(head);
            }
        }
        let bytes = text.as_bytes();
        for at in 0..bytes.len() {
            for b in *b"\"{}[],:x 0-.e\\\n" {
                let mut damaged = bytes.to_vec();
                damaged[at] = b;
                if let Ok(damaged) = String::from_utf8(damaged) {
                    agrees(&damaged);
                }
            }
        }
    }
}

/// JSON-ish text from the pieces events are made of.
fn piece() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![
        "{",
        "}",
        "[",
        "]",
        ",",
        ":",
        " ",
        "\"",
        "\"ph\"",
        "\"args\"",
        "\"ts\"",
        "\"dur\"",
        "\"grid\"",
        "\"stream\"",
        "\"name\"",
        "\"Input Dims\"",
        "\"id\"",
        "\"pid\"",
        "1",
        "0",
        "-",
        ".",
        "5e3",
        "12.345",
        "true",
        "null",
        "\\",
        "\\u00e9",
        "x",
        "\u{1}",
        "é",
    ])
}

proptest! {
    #[test]
    fn quick_agrees_with_serde_on_random_text(pieces in prop::collection::vec(piece(), 0..40)) {
        agrees(&pieces.concat());
        agrees(&format!("{{{}", pieces.concat()));
    }
}

/// Differential fuzzing: the samples above and real events of the H200 trace, mutated the way
/// `crate::fuzz` mutates files (bit flips, structural bytes, inserted, deleted and repeated ranges, a
/// cut); wherever the quick reader reads an event itself it must agree with serde, and the reader as
/// a whole must answer as serde does. `GPUOPT_FUZZ_CASES` sets the cases (default 64), as for the
/// other fuzz targets: `GPUOPT_FUZZ_CASES=1000000 cargo test --release --lib fuzz_quick`.
#[test]
fn fuzz_quick_against_serde() {
    let text = text_of(&crate::testdata::fixtures().join("h200/torch/eager_trace.json"));
    let doc: Doc = serde_json::from_str(&text).unwrap();
    let mut seeds: Vec<Vec<u8>> = SAMPLES.iter().map(|s| s.as_bytes().to_vec()).collect();
    seeds.extend(
        doc.events
            .iter()
            .step_by(17)
            .map(|e| format!("{} , {{}}", e.get()).into_bytes()),
    );
    let config = Config {
        cases: crate::fuzz::cases(),
        failure_persistence: None,
        ..Config::default()
    };
    let strategy = (
        0..seeds.len(),
        prop::collection::vec(crate::fuzz::edit(), 1..6),
    );
    let (quick, checked) = (std::cell::Cell::new(0_u64), std::cell::Cell::new(0_u64));
    let outcome = TestRunner::new(config).run(&strategy, |(seed, edits)| {
        let data = crate::fuzz::apply(seeds.get(seed).map_or(&[][..], Vec::as_slice), &edits);
        if let Ok(text) = std::str::from_utf8(&data) {
            checked.set(checked.get() + 1);
            quick.set(quick.get() + u64::from(agrees(text)));
        }
        Ok(())
    });
    if let Err(e) = outcome {
        panic!("quick vs serde: {e}");
    }
    eprintln!(
        "fuzz quick vs serde: {} seeds, {} UTF-8 cases compared, {} read by the quick reader",
        seeds.len(),
        checked.get(),
        quick.get()
    );
}
