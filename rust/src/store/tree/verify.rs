//! Verifying (and repairing) the blobs of a store.

use crate::error::Result;

use crate::store::fsx::{self, Dir};

use rayon::prelude::*;

use rustix::fs::FileType;
use serde::Serialize;

use std::time::{Duration, Instant};

use super::freeze::hash_fd;
use super::*;

/// Re-hashes one stored blob.
pub fn verify_blob(store: &Dir, sha: &str) -> Result<bool> {
    let fd = store.open_file(&blob_rel(sha))?;
    let (got, _) = hash_fd(
        &fd,
        sha,
        Instant::now() + Duration::from_secs(24 * 3600),
        None,
    )?;
    Ok(got == sha)
}

/// The result of checking a store's objects.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ObjectsReport {
    pub blobs: u64,
    pub manifests: u64,
    pub blobs_corrupt: Vec<String>,
    pub manifests_corrupt: Vec<String>,
    pub blobs_missing: Vec<String>,
    pub blobs_unreferenced: Vec<String>,
    pub temp_files: Vec<String>,
    pub removed: Vec<String>,
}

/// Checks every manifest and (with `deep`) re-hashes every blob; with `repair`, removes temp files and
/// unreferenced blobs.
pub fn verify_objects(store: &Dir, deep: bool, repair: bool) -> Result<ObjectsReport> {
    let mut report = ObjectsReport::default();
    let mut blobs = Vec::new();
    if store.exists("objects/blobs")? {
        let blob_root = store.open_dir("objects/blobs")?;
        for (prefix, kind) in blob_root.list()? {
            if kind != FileType::Directory {
                continue;
            }
            for (name, _) in blob_root.open_dir(&prefix)?.list()? {
                if name.starts_with(fsx::TEMP_PREFIX) {
                    report
                        .temp_files
                        .push(format!("objects/blobs/{prefix}/{name}"));
                } else {
                    blobs.push(name);
                }
            }
        }
    }
    blobs.sort();
    report.blobs = blobs.len() as u64;
    let mut referenced = std::collections::HashSet::new();
    if store.exists("objects/trees")? {
        let mut names: Vec<String> = store
            .open_dir("objects/trees")?
            .list()?
            .into_iter()
            .map(|(n, _)| n)
            .collect();
        names.sort();
        for name in names {
            if name.starts_with(fsx::TEMP_PREFIX) {
                report.temp_files.push(format!("objects/trees/{name}"));
                continue;
            }
            report.manifests += 1;
            let digest = name.strip_suffix(".json").unwrap_or(&name);
            match read_manifest(store, digest) {
                Ok(m) => {
                    for e in m.entries {
                        if let Entry::File { sha256, .. } = e {
                            if !store.exists(&blob_rel(&sha256))? {
                                report.blobs_missing.push(sha256.clone());
                            }
                            referenced.insert(sha256);
                        }
                    }
                }
                Err(_) => report.manifests_corrupt.push(digest.to_string()),
            }
        }
    }
    if store.exists("objects/tmp")? {
        for (name, _) in store.open_dir("objects/tmp")?.list()? {
            report.temp_files.push(format!("objects/tmp/{name}"));
        }
    }
    if deep {
        let corrupt: Vec<String> = blobs
            .par_iter()
            .filter(|sha| !matches!(verify_blob(store, sha), Ok(true)))
            .cloned()
            .collect();
        report.blobs_corrupt = corrupt;
    }
    report.blobs_unreferenced = blobs
        .iter()
        .filter(|b| !referenced.contains(*b))
        .cloned()
        .collect();
    report.blobs_missing.sort();
    report.blobs_missing.dedup();
    report.temp_files.sort();
    if repair {
        let victims: Vec<String> = report
            .temp_files
            .iter()
            .cloned()
            .chain(report.blobs_unreferenced.iter().map(|b| blob_rel(b)))
            .collect();
        for rel in victims {
            if store.remove_file(&rel)? {
                report.removed.push(rel);
            }
        }
    }
    Ok(report)
}
