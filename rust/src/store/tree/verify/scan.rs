//! Listing what lies below `objects/`: blobs, manifests and temp leftovers.

use crate::error::Result;
use crate::store::fsx::{self, Dir};

use rustix::fs::FileType;

/// Names found below `objects/`, each list sorted.
#[derive(Debug, Default)]
pub(super) struct Found {
    /// Blob names (their sha256).
    pub blobs: Vec<String>,
    /// Manifest file names (`<digest>.json`).
    pub manifests: Vec<String>,
    /// Paths below the root of temp leftovers.
    pub temp_files: Vec<String>,
}

pub(super) fn scan(store: &Dir) -> Result<Found> {
    let mut found = Found::default();
    if store.exists("objects/blobs")? {
        let blob_root = store.open_dir("objects/blobs")?;
        for (prefix, kind) in blob_root.list()? {
            if kind != FileType::Directory {
                continue;
            }
            for (name, _) in blob_root.open_dir(&prefix)?.list()? {
                if name.starts_with(fsx::TEMP_PREFIX) {
                    found
                        .temp_files
                        .push(format!("objects/blobs/{prefix}/{name}"));
                } else {
                    found.blobs.push(name);
                }
            }
        }
    }
    if store.exists("objects/trees")? {
        for (name, _) in store.open_dir("objects/trees")?.list()? {
            if name.starts_with(fsx::TEMP_PREFIX) {
                found.temp_files.push(format!("objects/trees/{name}"));
            } else {
                found.manifests.push(name);
            }
        }
    }
    if store.exists("objects/tmp")? {
        for (name, _) in store.open_dir("objects/tmp")?.list()? {
            found.temp_files.push(format!("objects/tmp/{name}"));
        }
    }
    found.blobs.sort();
    found.manifests.sort();
    found.temp_files.sort();
    Ok(found)
}
