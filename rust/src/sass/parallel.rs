//! Large cuobjdump listings on all cores: the file is read in waves, each wave is cut at `Function :`
//! lines into segments, the segments are scanned in parallel and merged in listing order. The merge
//! gives exactly what one pass gives (function order, cubin indices, opcode ids), whatever the thread
//! count. nvdisasm listings (one cubin, context at the top) are always scanned in one pass.

use super::lexer::trim_start;
use super::listing::Listing;
use super::merge::{Accumulator, Part};
use super::pass::scan_segment;
use super::scanner::ScanOptions;
use crate::error::Result;
use rayon::prelude::*;
use std::io::Read;
use std::path::Path;

/// The largest wave; a listing whose function does not end within it is scanned in one pass.
const MAX_WAVE_BYTES: usize = 1 << 30;
const MARKER: &[u8] = b"Function : ";

/// `None` when the file is not a cuobjdump listing or cannot be cut (the caller scans it in one pass);
/// `Some(Err)` is never returned for a listing error: the caller's one-pass scan reports those.
pub fn scan_file(path: &Path, options: &ScanOptions) -> Option<Result<Listing>> {
    let mut file = std::fs::File::open(path).ok()?;
    let threads = rayon::current_num_threads().max(1);
    let wave = options
        .segment_bytes
        .max(1 << 16)
        .saturating_mul(threads)
        .min(MAX_WAVE_BYTES);
    let mut buf: Vec<u8> = Vec::with_capacity(wave);
    let mut whole = Accumulator::default();
    let mut first = true;
    let mut eof = false;
    let mut target = wave;
    loop {
        if !eof {
            eof = fill(&mut file, &mut buf, target)?;
        }
        if first {
            if !starts_like_cuobjdump(&buf) {
                return None;
            }
            first = false;
        }
        let split = if eof {
            Some(buf.len())
        } else {
            last_function_start(&buf)
        };
        let Some(split) = split.filter(|s| *s > 0) else {
            if eof || buf.len() >= MAX_WAVE_BYTES {
                return None;
            }
            // No function starts after the first line of the wave: read on.
            target = buf.len() + wave;
            continue;
        };
        target = wave;
        let piece = buf.get(..split)?;
        let bounds = cut(piece, threads);
        let last_index = bounds.len().saturating_sub(2);
        let parts: Vec<Result<Part>> = bounds
            .par_windows(2)
            .enumerate()
            .map(|(i, w)| {
                let (a, b) = (
                    w.first().copied().unwrap_or(0),
                    w.get(1).copied().unwrap_or(0),
                );
                scan_segment(
                    piece.get(a..b).unwrap_or_default(),
                    options,
                    eof && i == last_index,
                )
            })
            .collect();
        for part in parts {
            whole.merge(part.ok()?);
        }
        if eof {
            return Some(whole.finish(options.catalog.clone()));
        }
        buf.drain(..split);
    }
}

/// Reads until `buf` holds `target` bytes or the file ends; `Some(true)` at the end of the file.
fn fill(file: &mut std::fs::File, buf: &mut Vec<u8>, target: usize) -> Option<bool> {
    while buf.len() < target {
        let start = buf.len();
        buf.resize(target, 0);
        let got = loop {
            match file.read(buf.get_mut(start..)?) {
                Ok(n) => break n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => {
                    buf.truncate(start);
                    return None;
                }
            }
        };
        buf.truncate(start + got);
        if got == 0 {
            return Some(true);
        }
    }
    Some(false)
}

fn starts_like_cuobjdump(buf: &[u8]) -> bool {
    buf.split(|b| *b == b'\n')
        .map(super::lexer::trim)
        .find(|l| !l.is_empty())
        .is_some_and(|l| {
            [
                &b"Fatbin elf code:"[..],
                b"Fatbin ptx code:",
                b"code for sm_",
                b"Function :",
            ]
            .iter()
            .any(|p| l.starts_with(p))
        })
}

/// The start of the line holding `Function : ` at `at`, when that line is only blanks before it.
fn line_start_if_marker(buf: &[u8], at: usize) -> Option<usize> {
    let start = buf
        .get(..at)?
        .iter()
        .rposition(|b| *b == b'\n')
        .map_or(0, |i| i + 1);
    trim_start(buf.get(start..at)?).is_empty().then_some(start)
}

fn last_function_start(buf: &[u8]) -> Option<usize> {
    let finder = memchr::memmem::FinderRev::new(MARKER);
    let mut end = buf.len();
    while let Some(at) = finder.rfind(buf.get(..end)?) {
        if let Some(start) = line_start_if_marker(buf, at) {
            return Some(start);
        }
        end = at;
    }
    None
}

/// Segment bounds `[0, .., len]` cut at function lines near equal sizes.
fn cut(piece: &[u8], parts: usize) -> Vec<usize> {
    let finder = memchr::memmem::Finder::new(MARKER);
    let mut bounds = vec![0];
    for k in 1..parts {
        let target = piece.len() * k / parts;
        let mut from = target.max(bounds.last().copied().unwrap_or(0) + 1);
        while let Some(rel) = piece.get(from..).and_then(|rest| finder.find(rest)) {
            let at = from + rel;
            if let Some(start) = line_start_if_marker(piece, at) {
                if start > bounds.last().copied().unwrap_or(0) {
                    bounds.push(start);
                }
                break;
            }
            from = at + 1;
        }
    }
    bounds.push(piece.len());
    bounds.dedup();
    bounds
}
