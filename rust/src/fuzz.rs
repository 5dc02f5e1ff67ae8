//! Mutation fuzzing of the readers, driven by proptest (stable Rust, no `cargo fuzz`).
//!
//! Each target starts from real bytes (a fixture, cut small so that one case is fast), applies a few
//! random edits (bit flips, bytes set to structural characters, inserted, deleted or repeated ranges,
//! a truncation) and feeds the reader. The property is the reader's contract: it answers, `Ok` or a
//! typed `Err`, and never panics (a panic fails the case, and proptest shrinks it to a small edit list).
//!
//! `GPUOPT_FUZZ_CASES` sets the cases per target (default 64, so `cargo test` stays fast); run
//! `GPUOPT_FUZZ_CASES=1000000 cargo test --release fuzz:: -- --nocapture --test-threads 1` for a
//! campaign. Each target prints its case count, the `Ok`/`Err` split and the slowest case. See
//! `references/fuzzing.md` for the counts run so far.

use crate::error::Result;
use proptest::prelude::*;
use proptest::sample::Index;
use proptest::test_runner::{Config, TestRunner};
use std::cell::Cell;
use std::path::Path;
use std::time::{Duration, Instant};

pub(crate) fn cases() -> u32 {
    std::env::var("GPUOPT_FUZZ_CASES")
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(64)
}

/// One edit of the input; positions are taken modulo the current length.
#[derive(Debug, Clone)]
pub(crate) enum Edit {
    Flip(Index, u8),
    Set(Index, u8),
    Insert(Index, Vec<u8>),
    Delete(Index, usize),
    Repeat(Index, usize),
    Truncate(Index),
}

/// Bytes that mean something to one of the formats (quotes, separators, brackets, digits, signs).
const STRUCTURAL: &[u8] = b"\"',;:{}[]()\n\r\t .-+0123456789eE/*\\\x00\xff";

fn byte() -> impl Strategy<Value = u8> {
    prop_oneof![prop::sample::select(STRUCTURAL), any::<u8>()]
}

pub(crate) fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        3 => (any::<Index>(), 0..8u8).prop_map(|(i, b)| Edit::Flip(i, b)),
        3 => (any::<Index>(), byte()).prop_map(|(i, b)| Edit::Set(i, b)),
        2 => (any::<Index>(), prop::collection::vec(byte(), 1..16)).prop_map(|(i, v)| Edit::Insert(i, v)),
        2 => (any::<Index>(), 1..64usize).prop_map(|(i, n)| Edit::Delete(i, n)),
        1 => (any::<Index>(), 1..256usize).prop_map(|(i, n)| Edit::Repeat(i, n)),
        1 => any::<Index>().prop_map(Edit::Truncate),
    ]
}

pub(crate) fn apply(seed: &[u8], edits: &[Edit]) -> Vec<u8> {
    let mut data = seed.to_vec();
    for e in edits {
        let at = |i: &Index, len: usize| if len == 0 { 0 } else { i.index(len) };
        let len = data.len();
        match e {
            Edit::Flip(i, bit) if len > 0 => {
                if let Some(b) = data.get_mut(at(i, len)) {
                    *b ^= 1 << bit;
                }
            }
            Edit::Set(i, v) if len > 0 => {
                if let Some(b) = data.get_mut(at(i, len)) {
                    *b = *v;
                }
            }
            Edit::Insert(i, bytes) => {
                let p = at(i, len + 1);
                data.splice(p..p, bytes.iter().copied());
            }
            Edit::Delete(i, n) if len > 0 => {
                let p = at(i, len);
                data.drain(p..(p + n).min(len));
            }
            Edit::Repeat(i, n) if len > 0 => {
                let p = at(i, len);
                let piece: Vec<u8> = data.get(p..(p + n).min(len)).unwrap_or(&[]).to_vec();
                data.splice(p..p, piece);
            }
            Edit::Truncate(i) => data.truncate(at(i, len + 1)),
            _ => {}
        }
    }
    data
}

/// Runs `target` on `cases()` mutations of the seeds; a panic fails with the shrunk edit list.
fn fuzz<T>(name: &str, seeds: &[Vec<u8>], target: impl Fn(&[u8]) -> Result<T>) {
    let config = Config {
        cases: cases(),
        failure_persistence: None,
        ..Config::default()
    };
    let mut runner = TestRunner::new(config);
    let strategy = (0..seeds.len(), prop::collection::vec(edit(), 1..6));
    let (ok, slowest) = (Cell::new(0_u64), Cell::new(Duration::ZERO));
    let total = Cell::new(0_u64);
    let start = Instant::now();
    let outcome = runner.run(&strategy, |(seed, edits)| {
        let data = apply(seeds.get(seed).map_or(&[][..], Vec::as_slice), &edits);
        let t = Instant::now();
        let answered = target(&data).is_ok();
        slowest.set(slowest.get().max(t.elapsed()));
        total.set(total.get() + 1);
        ok.set(ok.get() + u64::from(answered));
        Ok(())
    });
    if let Err(e) = outcome {
        panic!("fuzz {name}: {e}");
    }
    eprintln!(
        "fuzz {name}: {} cases ({} Ok, {} typed Err), 0 panics, slowest case {:?}, {:.1} s",
        total.get(),
        ok.get(),
        total.get() - ok.get(),
        slowest.get(),
        start.elapsed().as_secs_f64()
    );
}

fn fixture(rel: &str) -> Vec<u8> {
    std::fs::read(crate::testdata::fixtures().join(rel)).unwrap_or_default()
}

/// The first `lines` lines of an ncu CSV export (every field quoted), each cut to its first `fields`.
fn head(rel: &str, lines: usize, fields: usize) -> Vec<u8> {
    let text = fixture(rel);
    let mut out = Vec::new();
    for line in text.split(|&b| b == b'\n').take(lines) {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let parts = split_quoted(line);
        let kept = parts.get(..fields.min(parts.len())).unwrap_or_default();
        out.extend_from_slice(&kept.join(&b"\",\""[..]));
        if kept.len() < parts.len() {
            out.push(b'"');
        }
        out.push(b'\n');
    }
    out
}

/// An ncu CSV line split at its `","` separators (the outer quotes stay on the first and last part).
fn split_quoted(line: &[u8]) -> Vec<&[u8]> {
    let mut parts = Vec::new();
    let mut rest = line;
    while let Some(at) = rest.windows(3).position(|w| w == b"\",\"") {
        parts.push(rest.get(..at).unwrap_or_default());
        rest = rest.get(at + 3..).unwrap_or_default();
    }
    parts.push(rest);
    parts
}

#[test]
fn ncu_csv_reader() {
    let seeds = [
        head("h200/ncu/kernels_full.raw.csv", 4, 24),
        head("h200/ncu/kernels_full.details.csv", 40, usize::MAX),
    ];
    assert!(seeds
        .iter()
        .all(|s| crate::ncu::csv::read(s.clone()).is_ok()));
    fuzz("ncu csv", &seeds, |data| {
        crate::ncu::csv::read(data.to_vec())
    });
}

#[test]
fn sass_scanner() {
    let cuobjdump = fixture("h200/sass/kernels_sm90.cuobjdump.sass");
    let end = cuobjdump
        .windows(10)
        .position(|w| w == b"..........")
        .map_or(0, |p| p + 11);
    let seeds = [
        cuobjdump.get(..end).unwrap_or_default().to_vec(),
        fixture("public/sass/librecuda_kernel_struct_param.asm"),
    ];
    let scan = |data: &[u8]| crate::sass::scan_bytes(data, crate::sass::ScanOptions::default());
    assert!(seeds.iter().all(|s| scan(s).is_ok()));
    fuzz("sass", &seeds, scan);
}

#[test]
fn kineto_reader() {
    let mut plain = Vec::new();
    let gz = fixture("public/torch/hta_triton_example_triton_example.json.gz");
    std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(&gz[..]), &mut plain).ok();
    let read = |data: &[u8]| {
        let (header, events) = crate::torch_trace::reader::read_stream(data, "fuzz.json")?;
        let read = crate::torch_trace::reader::ReadTrace {
            header,
            events,
            compressed: false,
        };
        crate::torch_trace::build("fuzz.json".into(), read)
    };
    assert!(read(&plain).is_ok());
    fuzz("kineto", &[plain], read);
}

#[test]
fn sample_file_reader() {
    use crate::stats::sample_file::{parse, ReadOptions};
    let keyed = ReadOptions {
        key_column: Some("key".into()),
        order_column: Some("order".into()),
        ..ReadOptions::default()
    };
    let csv = b"key,order,value\nk0,AB,1.25\nk0,AB,1.5\nk1,BA,2e3\nk2,AB,0.75\n".to_vec();
    let jsonl = b"{\"key\": \"k0\", \"order\": \"AB\", \"value\": [1.0, 1.1]}\n{\"key\": \"k1\", \"order\": \"BA\", \"value\": 2.5}\n".to_vec();
    let bare = b"1.0\n2.0\n3.5\n".to_vec();
    let read = |data: &[u8]| {
        for (ext, options) in [
            (Some("csv"), &keyed),
            (Some("jsonl"), &keyed),
            (None, &ReadOptions::default()),
        ] {
            let _ = parse("fuzz".into(), ext, data.to_vec(), options);
        }
        parse("fuzz".into(), None, data.to_vec(), &keyed)
    };
    assert!(read(&csv).is_ok() && read(&jsonl).is_ok());
    fuzz("sample file", &[csv, jsonl, bare], read);
}

#[test]
fn nsys_reader() {
    let seed = fixture("public/nsys/mock.sqlite");
    let dir = std::env::temp_dir().join(format!("gpuopt-fuzz-nsys-{}", std::process::id()));
    std::fs::create_dir_all(&dir).ok();
    let path = dir.join("mutated.sqlite");
    let read = |data: &[u8]| -> Result<()> {
        std::fs::write(&path, data).map_err(|e| crate::error::Error::io(&path, &e))?;
        read_export(&path)
    };
    read(&seed).unwrap_or_else(|e| panic!("the seed export does not read: {e:?}"));
    fuzz("nsys", &[seed], read);
    std::fs::remove_dir_all(&dir).ok();
}

/// Every answer `gpuopt nsys` gives from one export.
fn read_export(path: &Path) -> Result<()> {
    use crate::nsys::select::Request;
    let report = crate::nsys::Report::open(path)?;
    let req = Request::default();
    report.kernels(&req, false)?;
    report.timeline(&req)?;
    report.nvtx(&req, false)?;
    report.memory(&req)?;
    for name in crate::nsys::STATS_REPORTS {
        report.stats(name, &req)?;
    }
    Ok(())
}
