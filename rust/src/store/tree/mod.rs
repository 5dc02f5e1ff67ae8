//! Content-addressed trees: a frozen file tree is one manifest plus one blob per distinct file content.
//!
//! Freezing walks the source through dirfds with `O_NOFOLLOW` (a link is `object_symlink`, a FIFO, socket or
//! device `object_special_file`), checks every file's `(dev, ino, size, mtime, ctime)` before and after reading
//! and every directory's listing before and after the whole freeze (`object_changed_during_read`), enforces
//! count, size and wall-time limits before reading (`object_limit_exceeded`) and hashes files in parallel in
//! 1 MiB chunks. The object digest is SHA-256 of the canonical manifest. Materializing re-hashes every byte it
//! copies (`object_corrupt` names the blob) into a temp folder published by a no-replace rename.

mod freeze;
mod materialize;
mod verify;

pub use freeze::{blob_rel, freeze};
pub use materialize::{materialize, Materialized};
pub use verify::{verify_blob, verify_objects, ObjectsReport};

use super::canonical;
use super::codes;
use super::fsx::{self, Dir};

use crate::error::{Error, Result};

use serde::{Deserialize, Serialize};

pub const MANIFEST_FORMAT: &str = "gpuopt.tree/v1";
const CHUNK: usize = 1 << 20;
const MAX_MANIFEST_BYTES: u64 = 256 << 20;

/// Limits a freeze enforces (spec defaults 100 000 files, 8 GiB, 300 s).
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Limits {
    pub max_files: u64,
    pub max_total_bytes: u64,
    pub max_wall_s: f64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_files: 100_000,
            max_total_bytes: 8 << 30,
            max_wall_s: 300.0,
        }
    }
}

/// One manifest entry: a directory or a file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Entry {
    Directory {
        path: String,
        mode: u32,
    },
    File {
        path: String,
        mode: u32,
        size_bytes: u64,
        sha256: String,
    },
}

impl Entry {
    pub fn path(&self) -> &str {
        match self {
            Entry::Directory { path, .. } | Entry::File { path, .. } => path,
        }
    }
}

/// The manifest of a frozen tree (`objects/trees/<digest>.json`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    pub format: String,
    pub source_kind: String,
    pub exclude: Vec<String>,
    pub entries: Vec<Entry>,
    pub file_count: u64,
    pub total_bytes: u64,
}

impl Manifest {
    /// Canonical bytes (RFC 8785), without the trailing newline of the stored file.
    pub fn canonical(&self) -> Result<String> {
        let raw = serde_json::to_vec(self)
            .map_err(|e| Error::internal("serialize_failed", e.to_string()))?;
        canonical::canonicalize(&raw)
    }

    pub fn digest(&self) -> Result<String> {
        Ok(fsx::sha256_hex(self.canonical()?.as_bytes()))
    }
}

/// What a freeze produced.
#[derive(Debug, Clone, Serialize)]
pub struct Frozen {
    pub digest: String,
    pub source_resolved: String,
    pub source_kind: String,
    pub file_count: u64,
    pub total_bytes: u64,
    pub blobs_new: u64,
    pub blobs_existing: u64,
    pub manifest: Manifest,
}

type StatKey = (u64, u64, i64, i64, i64, i64, i64);

fn check_entry_path(path: &str) -> Result<()> {
    fsx::components(path).map(|_| ()).map_err(|e| {
        Error::input(
            codes::OBJECT_CORRUPT,
            format!("manifest entry {path:?}: {}", e.message),
        )
        .with_path(path.to_string())
    })
}

/// Reads and verifies the manifest of `digest`: its canonical bytes must hash to the digest.
pub fn read_manifest(store: &Dir, digest: &str) -> Result<Manifest> {
    super::ids::validate(super::ids::IdKind::Digest, digest)?;
    let rel = format!("objects/trees/{digest}.json");
    let bytes = match store.read(&rel, MAX_MANIFEST_BYTES) {
        Err(e) if e.code == crate::error::codes::FILE_NOT_FOUND => {
            return Err(Error::input(
                codes::OBJECT_NOT_FOUND,
                format!("no object {digest} in this store"),
            )
            .with_path(rel));
        }
        other => other?,
    };
    let corrupt = |why: String| {
        Error::input(codes::OBJECT_CORRUPT, format!("manifest {digest}: {why}"))
            .with_path(rel.clone())
    };
    let text = canonical::canonicalize(&bytes).map_err(|e| corrupt(e.message))?;
    if fsx::sha256_hex(text.as_bytes()) != digest || bytes != format!("{text}\n").as_bytes() {
        return Err(corrupt("its bytes do not hash to its digest".into()));
    }
    let manifest: Manifest = serde_json::from_slice(&bytes).map_err(|e| corrupt(e.to_string()))?;
    if manifest.format != MANIFEST_FORMAT {
        return Err(corrupt(format!("format {:?}", manifest.format)));
    }
    for entry in &manifest.entries {
        check_entry_path(entry.path())?;
    }
    Ok(manifest)
}

#[cfg(test)]
mod tests {
    use super::materialize::make_writable;
    use super::*;
    use std::os::unix::fs::PermissionsExt;
    use std::path::Path;

    fn scratch(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("gpuopt-tree-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn sample_tree(base: &Path) -> std::path::PathBuf {
        let src = base.join("src");
        std::fs::create_dir_all(src.join("pkg/empty")).unwrap();
        std::fs::create_dir_all(src.join(".git")).unwrap();
        std::fs::write(src.join("pkg/a.py"), b"print(1)\n").unwrap();
        std::fs::write(src.join("pkg/b.py"), b"print(1)\n").unwrap();
        std::fs::write(src.join("README"), b"hello").unwrap();
        std::fs::write(src.join(".git/HEAD"), b"ref").unwrap();
        src
    }

    #[test]
    fn freeze_dedupes_and_is_stable() {
        let base = scratch("freeze");
        let src = sample_tree(&base);
        std::fs::create_dir_all(base.join("store")).unwrap();
        let store = Dir::open(&base.join("store")).unwrap();
        let ex = vec![".git/**".to_string()];
        let a = freeze(&src, Some(&store), &ex, Limits::default()).unwrap();
        assert_eq!(a.file_count, 3);
        assert_eq!(a.blobs_new, 2, "two files share one blob");
        let paths: Vec<&str> = a.manifest.entries.iter().map(Entry::path).collect();
        assert_eq!(
            paths,
            ["README", "pkg", "pkg/a.py", "pkg/b.py", "pkg/empty"]
        );
        let b = freeze(&src, Some(&store), &ex, Limits::default()).unwrap();
        assert_eq!(a.digest, b.digest);
        assert_eq!(b.blobs_new, 0);
        std::fs::set_permissions(src.join("README"), std::fs::Permissions::from_mode(0o600))
            .unwrap();
        let c = freeze(&src, None, &ex, Limits::default()).unwrap();
        assert_ne!(a.digest, c.digest);
        let dest = base.join("out");
        materialize(&store, &a.digest, &dest).unwrap();
        assert_eq!(std::fs::read(dest.join("pkg/a.py")).unwrap(), b"print(1)\n");
        assert!(dest.join("pkg/empty").is_dir());
        assert!(!dest.join(".git").exists());
        assert_eq!(
            materialize(&store, &a.digest, &dest).unwrap_err().code,
            codes::DESTINATION_EXISTS
        );
        let _ = make_writable(&base);
        let _ = std::fs::remove_dir_all(&base);
    }

    #[test]
    fn refusals() {
        let base = scratch("refuse");
        let src = sample_tree(&base);
        std::os::unix::fs::symlink("README", src.join("pkg/link")).unwrap();
        assert_eq!(
            freeze(&src, None, &[], Limits::default()).unwrap_err().code,
            codes::OBJECT_SYMLINK
        );
        std::fs::remove_file(src.join("pkg/link")).unwrap();
        let limits = Limits {
            max_files: 2,
            ..Limits::default()
        };
        let err = freeze(&src, None, &[], limits).unwrap_err();
        assert_eq!(err.code, codes::OBJECT_LIMIT_EXCEEDED);
        assert_eq!(err.expected.as_deref(), Some("2"));
        let _ = std::fs::remove_dir_all(&base);
    }
}
