//! File identity: size and BLAKE3 digest of the bytes, the provenance every fact is bound to.
//!
//! BLAKE3 rather than SHA-256: one 1.65 GB export took 1.55 s to SHA-256 on the GPU host, more than
//! gpuopt's whole answer, and SHA-256 cannot use more than one core per file. BLAKE3 is a tree hash
//! with the same 256-bit output and security margin (128-bit collision resistance); its chunks hash on
//! every core, read in large blocks while the previous block hashes. The store keeps SHA-256 for its
//! content addresses (`store/`), where objects are named by it.

use crate::error::{codes, Error, Result};
use serde::Serialize;
use std::io::Read;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::Path;

pub mod cache;

use cache::{IdentityCache, Lookup, StatKey};

/// A path as records show it: UTF-8 as it is, each byte that is not UTF-8 written `\xNN` (as the JSON
/// envelope's tables write a file name), so two different names never show the same.
pub fn shown(path: &Path) -> String {
    use std::fmt::Write;
    use std::os::unix::ffi::OsStrExt;
    let mut out = String::new();
    for chunk in path.as_os_str().as_bytes().utf8_chunks() {
        out.push_str(chunk.valid());
        for b in chunk.invalid() {
            let _ = write!(out, "\\x{b:02x}");
        }
    }
    out
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FileIdentity {
    pub path: String,
    pub size_bytes: u64,
    /// BLAKE3 (256-bit, lowercase hex) of the file's bytes.
    pub blake3: String,
    /// True when the digest came from the identity cache rather than reading the file now.
    pub from_cache: bool,
}

/// An identity and what went wrong with the cache on the way (never an error: the file was hashed).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Identified {
    pub identity: FileIdentity,
    pub warnings: Vec<String>,
    /// The version of the file the digest is of: `dev-ino-size-mtime_ns-ctime_ns` (the caller checks
    /// that the file it parsed was this version).
    pub version: String,
}

/// The largest subtree one pool thread reads and hashes at once (a power of two, so every leaf but the
/// last is whole): small enough that a 100 MB file spreads over 16 cores, large enough that each read
/// and each hash call runs at full speed.
const LEAF_BYTES: u64 = 4 << 20;

fn not_a_file(path: &Path) -> Error {
    let shown = shown(path);
    Error::input(codes::NOT_A_FILE, format!("{shown} is not a regular file"))
        .with_path(shown)
        .with_expected("a regular file")
}

/// Opens `path` for reading when it is a regular file. A FIFO, a device or a folder answers
/// `not_a_file` at once: opening a FIFO blocks until a writer comes, and `/dev/zero` never ends. The
/// file is opened non-blocking and its type checked on the open descriptor, so nothing swapped in
/// between a check and the open can block (non-blocking has no effect on a regular file's reads).
pub fn open_regular(path: &Path) -> Result<std::fs::File> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32)
        .open(path)
        .map_err(|e| Error::io(path, &e))?;
    let meta = file.metadata().map_err(|e| Error::io(path, &e))?;
    if !meta.is_file() {
        return Err(not_a_file(path));
    }
    Ok(file)
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
        let shown = shown(path);
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
        let shown = shown(path);
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
    let shown = shown(path);
    let file = open_regular(path)?;
    let key = StatKey::of(&file.metadata().map_err(|e| Error::io(path, &e))?);
    let mut warnings = Vec::new();
    let found = match cache.lookup(&key) {
        Lookup::Hit(digest) => Some(digest),
        Lookup::Corrupt(warning) => {
            warnings.push(warning);
            None
        }
        Lookup::Miss => None,
    };
    let from_cache = found.is_some();
    let blake3 = match found {
        Some(digest) => digest,
        None => {
            let digest = hash_unchanged(path, file, &key)?;
            warnings.extend(cache.store(&key, &digest, cache::now_ns()));
            digest
        }
    };
    Ok(Identified {
        identity: FileIdentity {
            path: shown,
            size_bytes: key.size,
            blake3,
            from_cache,
        },
        warnings,
        version: key.version(),
    })
}

/// Hashes the first `size` bytes of `file`. Up to one leaf it is read and hashed on this thread;
/// above, BLAKE3's tree is split where the format splits it (`hazmat::left_subtree_len`) and each leaf
/// of at most [`LEAF_BYTES`] is read with `pread` and hashed on the pool, each thread into its own reused
/// buffer, the subtrees' chaining values merged back up to the root: reading is spread over the cores
/// as hashing is, and the digest is the one-shot `blake3::hash` of the same bytes. A file shorter than
/// `size` ends the read with `UnexpectedEof` (the caller reports the change).
fn read_and_hash(file: &std::fs::File, size: u64) -> std::io::Result<blake3::Hash> {
    use blake3::hazmat::{left_subtree_len, merge_subtrees_root, Mode};
    if size <= LEAF_BYTES {
        return with_leaf_buffer(size, |buf| {
            file.read_exact_at(buf, 0)?;
            Ok(blake3::hash(buf))
        });
    }
    let left = left_subtree_len(size);
    let (l, r) = rayon::join(
        || subtree(file, 0, left),
        || subtree(file, left, size - left),
    );
    Ok(merge_subtrees_root(&l?, &r?, Mode::Hash))
}

/// The chaining value of the subtree of `len` bytes at `offset` (a subtree the root's splits made).
fn subtree(
    file: &std::fs::File,
    offset: u64,
    len: u64,
) -> std::io::Result<blake3::hazmat::ChainingValue> {
    use blake3::hazmat::{left_subtree_len, merge_subtrees_non_root, HasherExt, Mode};
    if len <= LEAF_BYTES {
        return with_leaf_buffer(len, |buf| {
            file.read_exact_at(buf, offset)?;
            let mut hasher = blake3::Hasher::new();
            hasher.set_input_offset(offset);
            hasher.update(buf);
            Ok(hasher.finalize_non_root())
        });
    }
    let left = left_subtree_len(len);
    let (l, r) = rayon::join(
        || subtree(file, offset, left),
        || subtree(file, offset + left, len - left),
    );
    Ok(merge_subtrees_non_root(&l?, &r?, Mode::Hash))
}

thread_local! {
    /// Each thread's leaf buffer, kept: its pages are faulted in once, not for every leaf.
    static LEAF: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Runs `work` on this thread's buffer of `len` bytes (`len` ≤ [`LEAF_BYTES`]).
fn with_leaf_buffer<T>(
    len: u64,
    work: impl FnOnce(&mut [u8]) -> std::io::Result<T>,
) -> std::io::Result<T> {
    let len = usize::try_from(len).unwrap_or(usize::MAX);
    LEAF.with(|cell| {
        let mut buf = cell.borrow_mut();
        if buf.len() < len {
            buf.resize(len, 0);
        }
        match buf.get_mut(..len) {
            Some(slice) => work(slice),
            None => Err(std::io::Error::other("leaf buffer")),
        }
    })
}

/// BLAKE3 of the file's bytes; an error when the file is not the version `key` describes at the end.
fn hash_unchanged(path: &Path, file: std::fs::File, key: &StatKey) -> Result<String> {
    let read = read_and_hash(&file, key.size);
    let after = StatKey::of(&std::fs::metadata(path).map_err(|e| Error::io(path, &e))?);
    let short = match read {
        Ok(digest) if after == *key => return Ok(digest.to_hex().to_string()),
        Ok(_) => false,
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => true,
        Err(e) => return Err(Error::io(path, &e)),
    };
    let shown = shown(path);
    let read = if short {
        "fewer bytes than that could be read"
    } else {
        "read whole"
    };
    Err(Error::input(
        codes::FILE_CHANGED_DURING_READ,
        format!("{shown} changed while it was being hashed"),
    )
    .with_path(shown)
    .with_expected(format!("{} bytes, mtime_ns {}", key.size, key.mtime_ns))
    .with_observed(format!(
        "{read}; now {} bytes, mtime_ns {}",
        after.size, after.mtime_ns
    )))
}

/// Identities of many files, hashed in parallel; the first failure (in input order) is the error.
pub fn file_identities(paths: &[std::path::PathBuf]) -> Result<Vec<FileIdentity>> {
    use rayon::prelude::*;
    paths.par_iter().map(|p| file_identity(p)).collect()
}

/// The identities as a table: `path`, `size_bytes`, `blake3`.
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
            "blake3",
            Arc::new(StringArray::from_iter_values(
                identities.iter().map(|i| &i.blake3),
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
            id.map(|i| (i.size_bytes, i.blake3)),
            Ok((3, ABC.to_string()))
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    fn scratch(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("gpuopt-idc-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap_or_default();
        dir
    }

    /// `b3sum` of "abc" (BLAKE3's published test value).
    const ABC: &str = "6437b3ac38465133ffb63b75273a8db548c558465d79db03fd359c6cd5bd9d85";

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
        let hit = identify(&path, &cache).map(|i| (i.identity.from_cache, i.identity.blake3));
        assert_eq!(hit, Ok((true, ABC.to_string())));
        // Rewritten with the same size: another ctime/mtime, never the old entry.
        std::fs::write(&path, b"xyz").unwrap_or_default();
        let after = identify(&path, &cache).map(|i| (i.identity.from_cache, i.identity.blake3));
        assert_eq!(
            after,
            Ok((false, blake3::hash(b"xyz").to_hex().to_string()))
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_forged_or_copied_entry_does_not_stand() {
        use std::os::unix::fs::PermissionsExt;
        let dir = scratch("forged");
        let path = dir.join("f.txt");
        std::fs::write(&path, b"abc").unwrap_or_default();
        let Ok(key) = std::fs::metadata(&path).map(|m| StatKey::of(&m)) else {
            return;
        };
        let cache = IdentityCache::new(Some(dir.join("cache")));
        let later = cache::now_ns() + 3_000_000_000;
        let zeros = "0".repeat(64);
        assert_eq!(cache.store(&key, &zeros, later), None); // the real entry for this version
        let entry = dir
            .join("cache/identity-v2")
            .join(format!("{}-{}", key.dev, key.ino))
            .join(format!("{}-{}-{}", key.size, key.mtime_ns, key.ctime_ns));
        assert!(std::fs::read_to_string(&entry).is_ok_and(|t| t.starts_with(&zeros)));
        // A digest written by hand, with a made-up tag: not believed, the file is hashed.
        let forged = format!("{}\n{}\n", "1".repeat(64), "2".repeat(64));
        std::fs::write(&entry, forged).unwrap_or_default();
        let got = identify(&path, &cache);
        assert_eq!(
            got.as_ref()
                .map(|i| (i.identity.from_cache, i.identity.blake3.as_str())),
            Ok((false, ABC))
        );
        assert!(got.is_ok_and(|i| i.warnings.iter().any(|w| w.contains("forged"))));
        // The cache folder made writable by others: not used at all.
        let root = dir.join("cache/identity-v2");
        std::fs::set_permissions(&root, std::fs::Permissions::from_mode(0o777)).unwrap_or_default();
        assert!(cache
            .store(&key, ABC, later)
            .is_some_and(|w| w.contains("closed to others")));
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
        assert_eq!(got.as_ref().map(|i| i.identity.blake3.as_str()), Ok(ABC));
        assert_eq!(got.as_ref().map(|i| i.warnings.len()), Ok(1));
        // The cache root is a plain file: nothing can be stored there.
        std::fs::write(dir.join("blocked"), b"").unwrap_or_default();
        let blocked = IdentityCache::new(Some(dir.join("blocked")));
        assert!(blocked.store(&key, ABC, later).is_some());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn leaves_hash_to_the_one_shot_digest() {
        // Sizes around a chunk, a leaf and the tree's splits: the subtrees read and hashed on the
        // pool agree with hashing the bytes at once.
        let dir = scratch("leaves");
        let path = dir.join("big.bin");
        let leaf = LEAF_BYTES as usize;
        for size in [
            0,
            1,
            1023,
            1024,
            1025,
            leaf - 1,
            leaf,
            leaf + 1,
            2 * leaf + 12_345,
            5 * leaf + 3,
        ] {
            let bytes: Vec<u8> = (0..size).map(|i| (i % 251) as u8).collect();
            std::fs::write(&path, &bytes).unwrap_or_default();
            let id = file_identity(&path).map(|i| i.blake3);
            assert_eq!(
                id,
                Ok(blake3::hash(&bytes).to_hex().to_string()),
                "size {size}"
            );
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_file_shorter_than_its_size_ends_the_read() {
        let dir = scratch("short");
        let path = dir.join("f.bin");
        std::fs::write(&path, vec![7_u8; 3 * LEAF_BYTES as usize]).unwrap_or_default();
        if let Ok(file) = std::fs::File::open(&path) {
            // Claimed sizes past the end, inside the first leaf's reach and in a later leaf's.
            for claimed in [3 * LEAF_BYTES + 1, 4 * LEAF_BYTES, 8 * LEAF_BYTES + 5] {
                let kind = read_and_hash(&file, claimed).err().map(|e| e.kind());
                assert_eq!(
                    kind,
                    Some(std::io::ErrorKind::UnexpectedEof),
                    "claimed {claimed}"
                );
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_fifo_is_not_a_file_and_does_not_block() {
        let dir = scratch("fifo");
        let fifo = dir.join("f");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        if made.map(|s| s.success()).unwrap_or(false) {
            assert_eq!(
                file_identity(&fifo).err().map(|e| e.code),
                Some(codes::NOT_A_FILE)
            );
            assert_eq!(
                open_regular(&fifo).err().map(|e| e.code),
                Some(codes::NOT_A_FILE)
            );
        }
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
