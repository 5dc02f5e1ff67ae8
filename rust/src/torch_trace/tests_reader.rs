//! The trace reader (`reader`) on whole documents: codes of bad ones, a file changed while read, and
//! the fast path, the framing path and small blocks giving the same answer on every cut and damage.

use super::*;

fn read(text: &str) -> Result<(BTreeMap<String, Value>, Events)> {
    read_stream(text.as_bytes(), "t.json")
}

#[test]
fn frames_header_and_events_in_any_order() {
    let (header, events) = read(
        r#" { "schemaVersion": 1, "traceEvents": [
            {"ph": "X", "cat": "cpu_op", "name": "a{]\"", "pid": 1, "tid": 1, "ts": 1.5, "dur": 2},
            {"ph": "M", "name": "thread_name", "pid": 1, "tid": 1, "args": {"name": "main"}}
          ], "traceName": "x" } "#,
    )
    .unwrap();
    assert_eq!(header.get("traceName"), Some(&Value::from("x")));
    assert_eq!(events.cpu.len(), 1);
    assert_eq!(events.strings.get(events.cpu[0].name), "a{]\"");
    assert_eq!((events.cpu[0].start, events.cpu[0].end), (1500, 3500));
    assert_eq!(events.counts.metadata, 1);
}

#[test]
fn bad_documents_get_their_codes() {
    let cases = [
        ("", generic::FILE_TRUNCATED),
        (r#"{"traceEvents": [{"ph": "X""#, generic::FILE_TRUNCATED),
        (r#"{"traceEvents": [{"ph": "X"}"#, generic::FILE_TRUNCATED),
        (r#"{"traceEvents": {}}"#, codes::EVENTS_NOT_ARRAY),
        (r#"{"schemaVersion": 1}"#, codes::EVENTS_MISSING),
        (
            r#"{"traceEvents": [], "traceEvents": []}"#,
            codes::DUPLICATE_KEY,
        ),
        (
            r#"{"a": 1, "a": 2, "traceEvents": []}"#,
            codes::DUPLICATE_KEY,
        ),
        (
            r#"{"traceEvents": [{"ph": "X", "ts": NaN, "dur": 1}]}"#,
            generic::FORMAT_INVALID,
        ),
        (r#"{"traceEvents": [1,]}"#, generic::FORMAT_INVALID),
        (r#"{"traceEvents": []} x"#, generic::FORMAT_INVALID),
        (r#"[{"ph": "X"}]"#, generic::FORMAT_INVALID),
        (
            r#"{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": -1}]}"#,
            codes::NEGATIVE_DURATION,
        ),
        (
            r#"{"traceEvents": [{"ph": "X", "name": 5, "ts": 1, "dur": 1}]}"#,
            codes::EVENT_INVALID,
        ),
    ];
    for (text, code) in cases {
        let err = read(text).err().map(|e| e.code);
        assert_eq!(err, Some(code), "{text}");
    }
}

/// Appends to the file it reads on its first read: a writer racing the reader.
struct Tamper {
    file: std::fs::File,
    path: std::path::PathBuf,
    done: bool,
}

impl Read for Tamper {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if !self.done {
            self.done = true;
            let mut other = std::fs::OpenOptions::new().append(true).open(&self.path)?;
            std::io::Write::write_all(&mut other, b"  ")?;
        }
        self.file.read(buf)
    }
}

#[test]
fn a_file_changed_while_read_is_an_error() {
    let dir = std::env::temp_dir().join(format!("gpuopt-tamper-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("t.json");
    let text = r#"{"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 1}]}"#;
    std::fs::write(&path, text).unwrap();
    // Unchanged, it reads; the same file grown by a writer during the read does not.
    assert!(read_path(&path).is_ok());
    let version = crate::identity::Unchanged::of(&path).unwrap();
    let file = std::fs::File::open(&path).unwrap();
    let tamper = Tamper {
        file,
        path: path.clone(),
        done: false,
    };
    let err = read_file(&path, tamper, &version).err().unwrap();
    assert_eq!(err.code, crate::error::codes::FILE_CHANGED_DURING_READ);
    assert!(err.message.contains("changed while it was being read"));
    // Same size, new mtime (a rewrite within the same second): still a different version.
    std::fs::write(&path, text).unwrap();
    let version = crate::identity::Unchanged::of(&path).unwrap();
    let later = std::time::SystemTime::now() + std::time::Duration::from_secs(5);
    std::fs::File::options()
        .write(true)
        .open(&path)
        .unwrap()
        .set_modified(later)
        .unwrap();
    let err = version.check(&path).err().unwrap();
    assert_eq!(err.code, crate::error::codes::FILE_CHANGED_DURING_READ);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// What a read gave, to compare the fast path with the framing path.
fn outcome(result: Result<(BTreeMap<String, Value>, Events)>) -> String {
    match result {
        Ok((header, e)) => {
            let mut names: Vec<_> = e.thread_names.iter().collect();
            names.sort();
            let mut labels: Vec<_> = e.process_labels.iter().map(|p| format!("{p:?}")).collect();
            labels.sort();
            format!(
                "{header:?} {:?} {:?} {:?} {:?} {:?} {:?} {:?} {:?} {:?} {:?} {:?} {:?} {names:?} {labels:?} {:?}",
                e.strings.values,
                e.cpu,
                e.runtime,
                e.gpu,
                e.flows,
                e.counts,
                e.threads,
                e.launch_configs,
                e.gpu_annotations,
                e.comms,
                e.syncs,
                (e.first_start, e.last_end),
                e.unmodeled.items(),
            )
        }
        Err(e) => e.code.to_string(),
    }
}

#[test]
fn the_fast_path_and_the_framing_path_agree_on_every_truncation_and_damage() {
    // Raw multi-byte characters too: a block's edge, a segment's limit or the room past it may cut
    // one (each segment checks its own bytes are UTF-8).
    let text = r#"{"schemaVersion": 1, "traceEvents": [
  {"ph": "X", "cat": "cpu_op", "name": "a},{é😀", "pid": 1, "tid": 1, "ts": 1.5, "dur": 2,
"args": {"External id": 3, "Input Dims": [[1, 2], []]}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 2, "dur": 1,
"args": {"correlation": 9, "External id": 3}},
  {"ph": "X", "cat": "kernel", "name": "k\u00e9", "pid": 0, "tid": 7, "ts": 4, "dur": 3,
"args": {"correlation": 9, "stream": 7, "device": 0}},
  {"ph": "s", "cat": "ac2g", "id": 9, "pid": 1, "tid": 1, "ts": 2, "name": "ac2g"}
], "traceName": "t"}"#;
    let bytes = text.as_bytes();
    // Blocks of a few events, read ahead in small pieces: every cut and damage also lands
    // on a block's edge, the room in front of the next block, or a refill.
    let small = Sizes {
        chunk: 7,
        block: 96,
        segment: 24,
        gap: 160,
        longest: 1 << 20,
    };
    let both = |data: &[u8]| {
        let fast = outcome(read_stream_with(data, "t.json", true, SIZES));
        let framed = outcome(read_stream_with(data, "t.json", false, SIZES));
        let blocks = outcome(read_stream_with(data, "t.json", true, small));
        assert_eq!(blocks, fast, "small blocks");
        (fast, framed)
    };
    let (fast, framed) = both(bytes);
    assert_eq!(fast, framed);
    assert!(fast.contains("cudaLaunchKernel"), "{fast}");
    for cut in 0..bytes.len() {
        let (fast, framed) = both(&bytes[..cut]);
        assert_eq!(fast, framed, "cut at {cut}");
    }
    for at in 0..bytes.len() {
        for b in [b'"', b'{', b'}', b',', b']', b'x', b' ', 0xff] {
            let mut damaged = bytes.to_vec();
            damaged[at] = b;
            let (fast, framed) = both(&damaged);
            assert_eq!(fast, framed, "byte {at} set to {b:#x}");
        }
    }
}

/// A source that gives at most `step` bytes per read (a pipe, a gzip decoder).
struct Trickle<'a> {
    data: &'a [u8],
    step: usize,
}

impl Read for Trickle<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.step.min(buf.len()).min(self.data.len());
        let (head, rest) = self.data.split_at(n);
        buf[..n].copy_from_slice(head);
        self.data = rest;
        Ok(n)
    }
}

#[test]
fn blocks_read_ahead_give_the_events_of_one_reading() {
    let path = crate::testdata::fixtures().join("h200/torch/eager_trace.json");
    let bytes = std::fs::read(path).unwrap();
    let whole = outcome(read_stream_with(bytes.as_slice(), "t.json", true, SIZES));
    let framed = outcome(read_stream_with(bytes.as_slice(), "t.json", false, SIZES));
    assert_eq!(whole, framed);
    // Room enough for the unfinished event (moved in front of the next block), and too little
    // for it (the fallback copies); blocks smaller than one event (read again, twice as long).
    for (block, segment, gap) in [
        (8 << 10, 1 << 10, 4 << 10),
        (8 << 10, 1 << 10, 64),
        (256, 64, 512),
    ] {
        for step in [1 << 20, 333] {
            let sizes = Sizes {
                chunk: 1000,
                block,
                segment,
                gap,
                longest: 1 << 20,
            };
            let source = Trickle { data: &bytes, step };
            let got = outcome(read_stream_with(source, "t.json", true, sizes));
            assert_eq!(got, whole, "{sizes:?}, reads of {step}");
        }
    }
}

#[test]
fn batches_larger_than_a_chunk_are_framed_across_refills() {
    let name = "n".repeat(3 << 20);
    let event = format!(
        r#"{{"ph": "X", "cat": "cpu_op", "name": "{name}", "pid": 1, "tid": 1, "ts": 1, "dur": 1}}"#
    );
    let text = format!(r#"{{"traceEvents": [{event}, {event}, {event}]}}"#);
    let (_, events) = read(&text).unwrap();
    assert_eq!(events.cpu.len(), 3);
}

#[test]
fn an_element_longer_than_the_buffer_may_hold_is_too_large() {
    // A small gzip file can inflate to one event of any length: the reader held it whole (a 1.5 GB
    // name took 4.7 GB). Past `longest` bytes without an event's end it is `input_too_large`, on both
    // paths, for an event, a header value and a run of blank space alike.
    let sizes = Sizes {
        chunk: 1000,
        block: 8 << 10,
        segment: 1 << 10,
        gap: 4 << 10,
        longest: 1 << 20,
    };
    let event = |name: &str| {
        format!(
            r#"{{"ph": "X", "cat": "cpu_op", "name": "{name}", "pid": 1, "tid": 1, "ts": 1, "dur": 1}}"#
        )
    };
    let long = "n".repeat(2 << 20);
    let fits = format!(
        r#"{{"traceEvents": [{}, {}]}}"#,
        event(&"n".repeat(400 << 10)),
        event("a")
    );
    for fast in [true, false] {
        let (_, events) = read_stream_with(fits.as_bytes(), "t.json", fast, sizes).unwrap();
        assert_eq!(events.cpu.len(), 2);
    }
    let too_long = [
        format!(r#"{{"traceEvents": [{}]}}"#, event(&long)),
        format!(r#"{{"traceEvents": [{}, {}]}}"#, event("a"), event(&long)),
        format!(r#"{{"x": "{long}", "traceEvents": []}}"#),
        format!(
            r#"{{"traceEvents": [{}{}]}}"#,
            " ".repeat(2 << 20),
            event("a")
        ),
    ];
    for (i, text) in too_long.iter().enumerate() {
        for fast in [true, false] {
            let Err(err) = read_stream_with(text.as_bytes(), "t.json", fast, sizes) else {
                panic!("case {i}, fast {fast}: read whole");
            };
            assert_eq!(
                err.code,
                crate::error::codes::INPUT_TOO_LARGE,
                "case {i}, fast {fast}"
            );
            assert!(err.message.contains("more than 1 MiB"), "{}", err.message);
        }
    }
}
