//! Blobs against what the manifests record: present, of the listed size, and (deep) hashing to their name.

use super::{defects, ObjectDefect};
use crate::error::{codes as error_codes, Result};
use crate::store::fsx::{errno, Dir};
use crate::store::tree::freeze::hash_fd;
use crate::store::tree::{blob_rel, Entry, Manifest};

use rayon::prelude::*;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// Re-hashes one stored blob: the SHA-256 of its bytes.
pub fn verify_blob(store: &Dir, sha: &str) -> Result<String> {
    let fd = store.open_file(&blob_rel(sha))?;
    let deadline = Instant::now() + Duration::from_secs(24 * 3600);
    Ok(hash_fd(&fd, sha, deadline, None)?.0)
}

/// Where a blob is listed first: its size, the manifest and the entry path.
#[derive(Debug)]
struct Listing {
    size_bytes: u64,
    manifest: String,
    entry: String,
}

/// Every blob the readable manifests list.
#[derive(Debug, Default)]
pub(super) struct Listed {
    blobs: BTreeMap<String, Listing>,
}

impl Listed {
    pub fn add(&mut self, digest: &str, manifest: &Manifest) {
        for entry in &manifest.entries {
            if let Entry::File {
                path,
                size_bytes,
                sha256,
                ..
            } = entry
            {
                self.blobs.entry(sha256.clone()).or_insert_with(|| Listing {
                    size_bytes: *size_bytes,
                    manifest: digest.to_string(),
                    entry: path.clone(),
                });
            }
        }
    }

    pub fn contains(&self, sha: &str) -> bool {
        self.blobs.contains_key(sha)
    }

    /// The manifest that lists blob `sha` first, if any.
    pub fn manifest_of(&self, sha: &str) -> Option<String> {
        self.blobs.get(sha).map(|l| l.manifest.clone())
    }

    /// Each listed blob must be a regular file of the listed size.
    pub fn check(&self, store: &Dir) -> Result<Vec<ObjectDefect>> {
        let mut out = Vec::new();
        for (sha, listing) in &self.blobs {
            let rel = blob_rel(sha);
            let expected = format!(
                "{} bytes (manifest {} lists them for {})",
                listing.size_bytes, listing.manifest, listing.entry
            );
            let size = match store.open_file(&rel) {
                Ok(fd) => rustix::fs::fstat(&fd)
                    .map_err(|e| errno("stat", &rel, e))?
                    .st_size
                    .max(0) as u64,
                Err(e) => {
                    let observed = (e.code != error_codes::FILE_NOT_FOUND).then_some(e.message);
                    out.push(ObjectDefect {
                        path: rel,
                        code: defects::BLOB_MISSING,
                        expected,
                        observed,
                        manifest: Some(listing.manifest.clone()),
                    });
                    continue;
                }
            };
            if size != listing.size_bytes {
                out.push(ObjectDefect {
                    path: rel,
                    code: defects::BLOB_SIZE_MISMATCH,
                    expected,
                    observed: Some(format!("{size} bytes")),
                    manifest: Some(listing.manifest.clone()),
                });
            }
        }
        Ok(out)
    }
}

/// Re-hashes every stored blob (in parallel); a blob already found short or long is not reported twice.
pub(super) fn check_hashes(
    store: &Dir,
    blobs: &[String],
    known: &[ObjectDefect],
    listed: &Listed,
) -> Vec<ObjectDefect> {
    blobs
        .par_iter()
        .filter_map(|sha| {
            let rel = blob_rel(sha);
            if known.iter().any(|d| d.path == rel) {
                return None;
            }
            let observed = match verify_blob(store, sha) {
                Ok(got) if got == *sha => return None,
                Ok(got) => format!("bytes that hash to {got}"),
                Err(e) => e.message,
            };
            Some(ObjectDefect {
                path: rel,
                code: defects::BLOB_CORRUPT,
                expected: "bytes whose SHA-256 is the blob's name".into(),
                observed: Some(observed),
                manifest: listed.manifest_of(sha),
            })
        })
        .collect()
}
