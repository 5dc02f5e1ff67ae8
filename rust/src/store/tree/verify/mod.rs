//! Verifying a store's objects (`gpuopt store verify`): every manifest against its name, every blob a
//! manifest lists against the size it records (with `deep`, every blob against its hash), and every tree a
//! record references. Read only: `--repair` (Python) removes what the report lists, under the root lock.

mod blobs;
mod scan;

use crate::error::Result;
use crate::store::fsx::Dir;

use serde::Serialize;

use std::collections::BTreeSet;

use super::read_manifest;

pub use blobs::verify_blob;

/// Stable codes of the defects this module finds (the Python report lists them with the record ones).
pub mod defects {
    pub const MANIFEST_CORRUPT: &str = "manifest_corrupt";
    pub const BLOB_MISSING: &str = "blob_missing";
    pub const BLOB_SIZE_MISMATCH: &str = "blob_size_mismatch";
    pub const BLOB_CORRUPT: &str = "blob_corrupt";
}

/// One thing that does not verify: its code, its path below the root, what was expected and what was seen.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct ObjectDefect {
    pub path: String,
    pub code: &'static str,
    pub expected: String,
    pub observed: Option<String>,
    /// The manifest that lists a blob (so the caller can name the records that reference it).
    pub manifest: Option<String>,
}

/// The result of checking a store's objects.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ObjectsReport {
    pub blobs: u64,
    pub manifests: u64,
    pub defects: Vec<ObjectDefect>,
    /// Referenced digests with no `objects/trees/<digest>.json` (the caller names who references them).
    pub manifests_missing: Vec<String>,
    /// Blobs no manifest lists (`objects/blobs/<2>/<sha256>`).
    pub blobs_unreferenced: Vec<String>,
    /// Leftovers of interrupted writes (`.tmp-*` below `objects/`, everything in `objects/tmp`).
    pub temp_files: Vec<String>,
}

/// Checks every manifest, the blobs they list (size; with `deep`, every stored blob's hash) and that each
/// digest in `referenced` has a manifest.
pub fn verify_objects(store: &Dir, referenced: &[String], deep: bool) -> Result<ObjectsReport> {
    let found = scan::scan(store)?;
    let mut report = ObjectsReport {
        blobs: found.blobs.len() as u64,
        manifests: found.manifests.len() as u64,
        temp_files: found.temp_files,
        ..ObjectsReport::default()
    };
    let mut listed = blobs::Listed::default();
    for name in &found.manifests {
        let digest = name.strip_suffix(".json").unwrap_or(name);
        match read_manifest(store, digest) {
            Ok(manifest) => listed.add(digest, &manifest),
            Err(e) => report.defects.push(ObjectDefect {
                path: format!("objects/trees/{name}"),
                code: defects::MANIFEST_CORRUPT,
                expected: "a gpuopt.tree/v1 manifest whose canonical bytes hash to its name".into(),
                observed: Some(e.message),
                manifest: Some(digest.to_string()),
            }),
        }
    }
    let present: BTreeSet<&str> = found
        .manifests
        .iter()
        .map(|n| n.strip_suffix(".json").unwrap_or(n))
        .collect();
    let wanted: BTreeSet<&String> = referenced.iter().collect();
    report.manifests_missing = wanted
        .into_iter()
        .filter(|d| !present.contains(d.as_str()))
        .cloned()
        .collect();
    report.defects.extend(listed.check(store)?);
    if deep {
        report.defects.extend(blobs::check_hashes(
            store,
            &found.blobs,
            &report.defects,
            &listed,
        ));
    }
    report.blobs_unreferenced = found
        .blobs
        .iter()
        .filter(|sha| !listed.contains(sha))
        .map(|sha| super::blob_rel(sha))
        .collect();
    report.defects.sort();
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::tree::{blob_rel, freeze, Limits};
    use std::os::unix::fs::PermissionsExt;

    fn frozen_store(name: &str) -> (std::path::PathBuf, Dir, String) {
        let base =
            std::env::temp_dir().join(format!("gpuopt-verify-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        std::fs::create_dir_all(base.join("src/pkg")).unwrap();
        std::fs::create_dir_all(base.join("store")).unwrap();
        std::fs::write(base.join("src/pkg/a.py"), b"print(1)\n").unwrap();
        std::fs::write(base.join("src/README"), b"hello").unwrap();
        let store = Dir::open(&base.join("store")).unwrap();
        let digest = freeze(&base.join("src"), Some(&store), &[], Limits::default())
            .unwrap()
            .digest;
        (base, store, digest)
    }

    fn writable(path: &std::path::Path) {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o644)).unwrap();
    }

    #[test]
    fn a_clean_store_has_no_defects_and_names_missing_references() {
        let (base, store, digest) = frozen_store("clean");
        let other = "ab".repeat(32);
        let report = verify_objects(&store, &[digest.clone(), other.clone()], true).unwrap();
        assert_eq!((report.blobs, report.manifests), (2, 1));
        assert!(report.defects.is_empty(), "{:?}", report.defects);
        assert_eq!(report.manifests_missing, [other]);
        assert!(report.blobs_unreferenced.is_empty());
        let _ = std::fs::remove_dir_all(&base);
    }

    #[test]
    fn a_truncated_blob_is_a_size_mismatch_without_deep_and_only_that_with_it() {
        let (base, store, _) = frozen_store("short");
        let sha = fsx_sha(b"hello");
        let path = base.join("store").join(blob_rel(&sha));
        writable(&path);
        std::fs::write(&path, b"hel").unwrap();
        for deep in [false, true] {
            let report = verify_objects(&store, &[], deep).unwrap();
            let codes: Vec<(&str, &str)> = report
                .defects
                .iter()
                .map(|d| (d.path.as_str(), d.code))
                .collect();
            assert_eq!(
                codes,
                [(blob_rel(&sha).as_str(), defects::BLOB_SIZE_MISMATCH)]
            );
            let defect = report.defects.first().unwrap();
            assert!(defect.expected.starts_with("5 bytes (manifest "));
            assert_eq!(defect.observed.as_deref(), Some("3 bytes"));
        }
        std::fs::write(&path, b"HELLO").unwrap();
        assert!(verify_objects(&store, &[], false)
            .unwrap()
            .defects
            .is_empty());
        let deep = verify_objects(&store, &[], true).unwrap();
        assert_eq!(
            deep.defects.first().map(|d| d.code),
            Some(defects::BLOB_CORRUPT)
        );
        std::fs::remove_file(&path).unwrap();
        let gone = verify_objects(&store, &[], false).unwrap();
        assert_eq!(
            gone.defects.first().map(|d| (d.code, d.observed.clone())),
            Some((defects::BLOB_MISSING, None))
        );
        let _ = std::fs::remove_dir_all(&base);
    }

    #[test]
    fn a_damaged_manifest_is_corrupt_and_its_blobs_look_unreferenced() {
        let (base, store, digest) = frozen_store("manifest");
        let path = base.join(format!("store/objects/trees/{digest}.json"));
        writable(&path);
        std::fs::write(&path, b"{}\n").unwrap();
        std::fs::write(base.join("store/objects/tmp/.tmp-1"), b"half").unwrap();
        let report = verify_objects(&store, std::slice::from_ref(&digest), false).unwrap();
        assert_eq!(
            report.defects.iter().map(|d| d.code).collect::<Vec<_>>(),
            [defects::MANIFEST_CORRUPT]
        );
        assert!(report.manifests_missing.is_empty(), "present, if corrupt");
        assert_eq!(report.blobs_unreferenced.len(), 2);
        assert_eq!(report.temp_files, ["objects/tmp/.tmp-1"]);
        let _ = std::fs::remove_dir_all(&base);
    }

    fn fsx_sha(bytes: &[u8]) -> String {
        crate::store::fsx::sha256_hex(bytes)
    }
}
