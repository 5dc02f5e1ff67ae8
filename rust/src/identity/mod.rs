//! File identity: size and SHA-256 of the bytes, the provenance every fact is bound to.

use crate::error::{codes, Error, Result};
use serde::Serialize;
use sha2::{Digest, Sha256};
use std::io::Read;
use std::path::Path;

pub mod cache;

use cache::{IdentityCache, Lookup, StatKey};

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FileIdentity {
    pub path: String,
    pub size_bytes: u64,
    pub sha256: String,
    /// True when the digest came from the identity cache rather than reading the file now.
    pub from_cache: bool,
}

/// An identity and what went wrong with the cache on the way (never an error: the file was hashed).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Identified {
    pub identity: FileIdentity,
    pub warnings: Vec<String>,
}

const CHUNK_BYTES: usize = 1 << 20;

fn not_a_file(path: &Path) -> Error {
    let shown = path.display().to_string();
    Error::input(codes::NOT_A_FILE, format!("{shown} is not a regular file"))
        .with_path(shown)
        .with_expected("a regular file")
}

/// Opens `path` for reading when it is a regular file. A FIFO, a device or a folder answers
/// `not_a_file` at once: opening a FIFO blocks until a writer comes, and `/dev/zero` never ends.
pub fn open_regular(path: &Path) -> Result<std::fs::File> {
    let meta = std::fs::metadata(path).map_err(|e| Error::io(path, &e))?;
    if !meta.is_file() {
        return Err(not_a_file(path));
    }
    std::fs::File::open(path).map_err(|e| Error::io(path, &e))
}

/// The version (device, inode, size, mtime, ctime) of a file a reader is about to read; [`check`]
/// after the read turns a file that changed meanwhile into an error instead of a mixed answer.
///
/// [`check`]: Unchanged::check
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Unchanged {
    key: StatKey,
}

impl Unchanged {
    /// Records the version of the regular file `path` (an error for anything else).
    pub fn of(path: &Path) -> Result<Self> {
        let meta = std::fs::metadata(path).map_err(|e| Error::io(path, &e))?;
        if !meta.is_file() {
            return Err(not_a_file(path));
        }
        Ok(Unchanged {
            key: StatKey::of(&meta),
        })
    }

    /// `file_changed_during_read` when `path` is no longer the version recorded by [`Unchanged::of`].
    pub fn check(&self, path: &Path) -> Result<()> {
        let after = std::fs::metadata(path).map(|m| StatKey::of(&m));
        if after.as_ref().ok() == Some(&self.key) {
            return Ok(());
        }
        let shown = path.display().to_string();
        let observed = match after {
            Ok(a) => format!("now {} bytes, mtime_ns {}", a.size, a.mtime_ns),
            Err(e) => format!("now unreadable: {e}"),
        };
        Err(Error::input(
            codes::FILE_CHANGED_DURING_READ,
            format!("{shown} changed while it was being read"),
        )
        .with_path(shown)
        .with_expected(format!(
            "{} bytes, mtime_ns {} (the version read)",
            self.key.size, self.key.mtime_ns
        ))
        .with_observed(observed))
    }
}

/// The bytes of the regular file at `path` (see [`open_regular`]), at most `limit` of them: a larger
/// file (a sparse 8 GB one, or one growing while read) is `input_too_large` before memory grows.
pub fn read_regular(path: &Path, limit: u64, what: &str) -> Result<Vec<u8>> {
    let file = open_regular(path)?;
    let size = file.metadata().map_err(|e| Error::io(path, &e))?.len();
    let too_large = |observed: String| {
        let shown = path.display().to_string();
        Error::input(
            codes::INPUT_TOO_LARGE,
            format!("{shown}: the {what} is larger than gpuopt reads ({limit} bytes)"),
        )
        .with_path(shown)
        .with_expected(format!("at most {limit} bytes"))
        .with_observed(observed)
    };
    if size > limit {
        return Err(too_large(format!("{size} bytes")));
    }
    let mut out = Vec::with_capacity(usize::try_from(size).unwrap_or(0));
    file.take(limit.saturating_add(1))
        .read_to_end(&mut out)
        .map_err(|e| Error::io(path, &e))?;
    if out.len() as u64 > limit {
        return Err(too_large(format!("more than {limit} bytes")));
    }
    Ok(out)
}

/// Hashes `path`, refusing anything but a regular file and detecting a file that changes while read.
pub fn file_identity(path: &Path) -> Result<FileIdentity> {
    identify(path, &IdentityCache::disabled()).map(|i| i.identity)
}

/// The identity of `path`, from `cache` when it holds this exact version of the file, else hashed
/// (and then stored unless the file changed too recently to be told apart from a rewrite).
pub fn identify(path: &Path, cache: &IdentityCache) -> Result<Identified> {
    let shown = path.display().to_string();
    let before = regular_file_metadata(path)?;
    let key = StatKey::of(&before);
    let mut warnings = Vec::new();
    match cache.lookup(&key) {
        Lookup::Hit(sha256) => {
            return Ok(Identified {
                identity: FileIdentity {
                    path: shown,
                    size_bytes: key.size,
                    sha256,
                    from_cache: true,
                },
                warnings,
            })
        }
        Lookup::Corrupt(warning) => warnings.push(warning),
        Lookup::Miss => {}
    }
    let sha256 = hash_unchanged(path, &key)?;
    warnings.extend(cache.store(&key, &sha256, cache::now_ns()));
    Ok(Identified {
        identity: FileIdentity {
            path: shown,
            size_bytes: key.size,
            sha256,
            from_cache: false,
        },
        warnings,
    })
}

fn regular_file_metadata(path: &Path) -> Result<std::fs::Metadata> {
    let meta = std::fs::metadata(path).map_err(|e| Error::io(path, &e))?;
    if !meta.is_file() {
        let shown = path.display().to_string();
        return Err(
            Error::input(codes::NOT_A_FILE, format!("{shown} is not a regular file"))
                .with_path(shown),
        );
    }
    Ok(meta)
}

/// SHA-256 of the file's bytes; an error when the file is not the version `key` describes at the end.
fn hash_unchanged(path: &Path, key: &StatKey) -> Result<String> {
    let mut file = std::fs::File::open(path).map_err(|e| Error::io(path, &e))?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; CHUNK_BYTES];
    let mut total: u64 = 0;
    loop {
        let n = file.read(&mut buf).map_err(|e| Error::io(path, &e))?;
        if n == 0 {
            break;
        }
        hasher.update(buf.get(..n).unwrap_or_default());
        total += n as u64;
    }
    let after = StatKey::of(&std::fs::metadata(path).map_err(|e| Error::io(path, &e))?);
    if total != key.size || after != *key {
        let shown = path.display().to_string();
        return Err(Error::input(
            codes::FILE_CHANGED_DURING_READ,
            format!("{shown} changed while it was being hashed"),
        )
        .with_path(shown)
        .with_expected(format!("{} bytes, mtime_ns {}", key.size, key.mtime_ns))
        .with_observed(format!(
            "{total} bytes read; now {} bytes, mtime_ns {}",
            after.size, after.mtime_ns
        )));
    }
    Ok(hex(&hasher.finalize()))
}

/// Identities of many files, hashed in parallel; the first failure (in input order) is the error.
pub fn file_identities(paths: &[std::path::PathBuf]) -> Result<Vec<FileIdentity>> {
    use rayon::prelude::*;
    paths.par_iter().map(|p| file_identity(p)).collect()
}

/// The identities as a table: `path`, `size_bytes`, `sha256`.
pub fn identities_table(identities: &[FileIdentity]) -> Result<crate::table::Table> {
    use arrow_array::{ArrayRef, StringArray, UInt64Array};
    use std::sync::Arc;
    crate::table::Table::from_columns(vec![
        (
            "path",
            Arc::new(StringArray::from_iter_values(
                identities.iter().map(|i| &i.path),
            )) as ArrayRef,
        ),
        (
            "size_bytes",
            Arc::new(UInt64Array::from_iter_values(
                identities.iter().map(|i| i.size_bytes),
            )),
        ),
        (
            "sha256",
            Arc::new(StringArray::from_iter_values(
                identities.iter().map(|i| &i.sha256),
            )),
        ),
    ])
}

/// Lowercase hex of a byte slice.
pub fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    bytes
        .iter()
        .fold(String::with_capacity(bytes.len() * 2), |mut s, b| {
            let _ = write!(s, "{b:02x}");
            s
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashes_known_content() {
        let dir = std::env::temp_dir().join(format!("gpuopt-id-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap_or_default();
        let path = dir.join("abc.txt");
        std::fs::write(&path, b"abc").unwrap_or_default();
        let id = file_identity(&path);
        assert_eq!(
            id.map(|i| (i.size_bytes, i.sha256)),
            Ok((
                3,
                "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad".to_string()
            ))
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    fn scratch(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("gpuopt-idc-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap_or_default();
        dir
    }

    const ABC: &str = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";

    #[test]
    fn stored_digest_is_returned_for_the_same_version_only() {
        let dir = scratch("hit");
        let path = dir.join("f.txt");
        std::fs::write(&path, b"abc").unwrap_or_default();
        let cache = IdentityCache::new(Some(dir.join("cache")));
        // Just written: racy, so hashed and not stored.
        let first = identify(&path, &cache).map(|i| i.identity.from_cache);
        assert_eq!(first, Ok(false));
        let key = std::fs::metadata(&path).map(|m| StatKey::of(&m));
        let Ok(key) = key else { return };
        // Stored as if 3 s had passed: now a hit, with the stored digest.
        assert_eq!(
            cache.store(&key, ABC, cache::now_ns() + 3_000_000_000),
            None
        );
        let hit = identify(&path, &cache).map(|i| (i.identity.from_cache, i.identity.sha256));
        assert_eq!(hit, Ok((true, ABC.to_string())));
        // Rewritten with the same size: another ctime/mtime, never the old entry.
        std::fs::write(&path, b"xyz").unwrap_or_default();
        let after = identify(&path, &cache).map(|i| (i.identity.from_cache, i.identity.sha256));
        assert_eq!(
            after,
            Ok((
                false,
                "3608bca1e44ea6c4d268eb6db02260269892c0b42b86bbf1e77a6fa16c3c9282".to_string()
            ))
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn racy_rule_counts_mtime_and_ctime() {
        let key = StatKey {
            dev: 1,
            ino: 2,
            size: 3,
            mtime_ns: 10_000_000_000,
            ctime_ns: 11_000_000_000,
        };
        assert!(key.racy_at(12_999_999_999));
        assert!(!key.racy_at(13_000_000_000));
    }

    #[test]
    fn corrupt_entry_and_unwritable_cache_are_warnings() {
        let dir = scratch("bad");
        let path = dir.join("f.txt");
        std::fs::write(&path, b"abc").unwrap_or_default();
        let Ok(key) = std::fs::metadata(&path).map(|m| StatKey::of(&m)) else {
            return;
        };
        let cache = IdentityCache::new(Some(dir.join("cache")));
        let later = cache::now_ns() + 3_000_000_000;
        assert_eq!(cache.store(&key, "not a digest", later), None);
        let got = identify(&path, &cache);
        assert_eq!(got.as_ref().map(|i| i.identity.sha256.as_str()), Ok(ABC));
        assert_eq!(got.as_ref().map(|i| i.warnings.len()), Ok(1));
        // The cache root is a plain file: nothing can be stored there.
        std::fs::write(dir.join("blocked"), b"").unwrap_or_default();
        let blocked = IdentityCache::new(Some(dir.join("blocked")));
        assert!(blocked.store(&key, ABC, later).is_some());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn directory_is_not_a_file() {
        let err = file_identity(&std::env::temp_dir()).err().map(|e| e.code);
        assert_eq!(err, Some(codes::NOT_A_FILE));
    }

    #[test]
    fn missing_file_is_not_found() {
        let err = file_identity(Path::new("/definitely/not/here"))
            .err()
            .map(|e| e.code);
        assert_eq!(err, Some(codes::FILE_NOT_FOUND));
    }
}
