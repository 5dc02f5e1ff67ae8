//! Compare-and-swap of the one mutable pointer, and publications conditional on it.
//!
//! Under an exclusive `flock` on a never-deleted lock file, the pointer's file hash (or "absent") must equal
//! the caller's expectation, else `stale_reference`; then the create-once records are published and, when
//! given, the pointer is atomically replaced. Of racing writers on one expectation exactly one wins.

use super::codes;
use super::fsx::Dir;
use crate::error::{Error, Result};
use serde::Serialize;

/// What a compare-and-swap did.
#[derive(Debug, Clone, Serialize)]
pub struct CasOutcome {
    pub previous_sha256: Option<String>,
    pub sha256: Option<String>,
    pub created: Vec<String>,
}

/// The current hash of `rel`, `None` when absent; a link or non-regular file is an error.
pub fn current_sha(root: &Dir, rel: &str, max_bytes: u64) -> Result<Option<String>> {
    match root.read(rel, max_bytes) {
        Ok(bytes) => Ok(Some(super::fsx::sha256_hex(&bytes))),
        Err(e) if e.code == crate::error::codes::FILE_NOT_FOUND => Ok(None),
        Err(e) => Err(e),
    }
}

/// Compares the pointer `rel` with `expected` (`None` = absent) under `lock_rel`; on a match publishes
/// `creates` (create-once, identical content accepted) and then, if `replacement` is given, replaces `rel`.
pub fn compare_and_swap(
    root: &Dir,
    rel: &str,
    lock_rel: &str,
    expected: Option<&str>,
    replacement: Option<&[u8]>,
    creates: &[(String, Vec<u8>)],
) -> Result<CasOutcome> {
    let _lock = root.lock(lock_rel, true, true)?;
    let current = current_sha(root, rel, 16 << 20)?;
    if current.as_deref() != expected {
        return Err(Error::input(
            codes::STALE_REFERENCE,
            format!("{rel} is no longer what the request expected"),
        )
        .with_path(rel.to_string())
        .with_expected(expected.unwrap_or("absent").to_string())
        .with_observed(current.unwrap_or_else(|| "absent".to_string())));
    }
    let mut created = Vec::new();
    for (create_rel, bytes) in creates {
        if root.write_once(create_rel, bytes)?.created {
            created.push(create_rel.clone());
        }
    }
    let sha256 = match replacement {
        Some(bytes) => Some(root.replace(rel, bytes, 0o444)?.sha256),
        None => current.clone(),
    };
    Ok(CasOutcome {
        previous_sha256: current,
        sha256,
        created,
    })
}
