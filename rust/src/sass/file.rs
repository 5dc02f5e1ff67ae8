//! A listing read from a file: large cuobjdump listings in parallel segments, everything else in one
//! pass.

use super::listing::Listing;
use super::parallel;
use super::pass::scan_reader;
use super::scanner::ScanOptions;
use crate::error::{Error, Result};
use std::path::Path;

/// Scans a listing file: large cuobjdump listings in parallel segments, everything else in one pass.
/// Any error in the parallel path is reported by re-running the one-pass scan, so that errors (and
/// their line numbers) do not depend on how the file was cut.
pub fn scan_path(path: &Path, options: ScanOptions) -> Result<Listing> {
    let shown = path.display().to_string();
    let meta = std::fs::metadata(path).map_err(|e| Error::io(path, &e))?;
    if !meta.is_file() {
        return Err(Error::input(
            crate::error::codes::NOT_A_FILE,
            format!("{shown} is not a regular file"),
        )
        .with_path(shown));
    }
    let with_path = |e: Error| {
        if e.path.is_none() {
            e.with_path(shown.clone())
        } else {
            e
        }
    };
    if meta.len() > options.segment_bytes as u64 {
        if let Some(Ok(listing)) = parallel::scan_file(path, &options) {
            return Ok(listing);
        }
    }
    let file = std::fs::File::open(path).map_err(|e| Error::io(path, &e))?;
    scan_reader(file, options).map_err(with_path)
}
