//! The identity cache: a file's SHA-256 remembered per (device, inode, size, mtime_ns, ctime_ns).
//!
//! One entry file per inode version: `<dir>/identity-v1/<dev>-<ino>/<size>-<mtime_ns>-<ctime_ns>`
//! holding the hex digest and a newline; writing an entry removes the inode's older versions, so
//! the cache holds at most one entry per inode. Writes are atomic (temporary file, then rename).
//!
//! Git's racy-timestamp rule: a file whose mtime or ctime lies within [`RACY_NS`] of the moment its
//! digest would be stored is not stored, since a rewrite within the timestamp's granularity could
//! leave all five numbers unchanged. Any later write moves ctime past the stored one (ctime cannot be
//! set by a user), so a stored entry is never returned for other content.
//!
//! The cache only ever saves time: an unreadable, unwritable or corrupt cache is reported as a
//! warning and the file is hashed as if there were no cache.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// Files changed this recently (ns) when hashed are not cached: 2 s covers the coarsest common
/// timestamp granularity (FAT's 2 s; HFS+ and some NFS servers keep 1 s).
pub const RACY_NS: i128 = 2_000_000_000;

/// The numbers that identify one version of a file's bytes without reading them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StatKey {
    pub dev: u64,
    pub ino: u64,
    pub size: u64,
    pub mtime_ns: i128,
    pub ctime_ns: i128,
}

impl StatKey {
    pub fn of(meta: &std::fs::Metadata) -> Self {
        StatKey {
            dev: meta.dev(),
            ino: meta.ino(),
            size: meta.size(),
            mtime_ns: i128::from(meta.mtime()) * 1_000_000_000 + i128::from(meta.mtime_nsec()),
            ctime_ns: i128::from(meta.ctime()) * 1_000_000_000 + i128::from(meta.ctime_nsec()),
        }
    }

    fn folder(&self) -> String {
        format!("{}-{}", self.dev, self.ino)
    }

    fn entry(&self) -> String {
        format!("{}-{}-{}", self.size, self.mtime_ns, self.ctime_ns)
    }

    /// True when the file changed within [`RACY_NS`] of `now_ns` (or claims to have changed later).
    pub fn racy_at(&self, now_ns: i128) -> bool {
        now_ns - self.mtime_ns.max(self.ctime_ns) < RACY_NS
    }
}

/// A cache folder; `None` inside means no cache (the caller asked for none).
#[derive(Debug, Clone)]
pub struct IdentityCache {
    root: Option<PathBuf>,
}

/// What a look-up found.
pub enum Lookup {
    Hit(String),
    Miss,
    /// The entry exists but is not a digest; the warning says where.
    Corrupt(String),
}

impl IdentityCache {
    pub fn new(dir: Option<PathBuf>) -> Self {
        IdentityCache {
            root: dir.map(|d| d.join("identity-v1")),
        }
    }

    pub fn disabled() -> Self {
        IdentityCache { root: None }
    }

    pub fn lookup(&self, key: &StatKey) -> Lookup {
        let Some(root) = &self.root else {
            return Lookup::Miss;
        };
        let path = root.join(key.folder()).join(key.entry());
        match std::fs::read(&path) {
            Ok(bytes) => match parse_entry(&bytes) {
                Some(sha) => Lookup::Hit(sha),
                None => Lookup::Corrupt(format!(
                    "identity cache entry {} is corrupt; hashing the file instead",
                    path.display()
                )),
            },
            Err(_) => Lookup::Miss,
        }
    }

    /// Stores `sha256` for `key` unless the file is racy at `now_ns`; a warning when it could not.
    pub fn store(&self, key: &StatKey, sha256: &str, now_ns: i128) -> Option<String> {
        let root = self.root.as_ref()?;
        if key.racy_at(now_ns) {
            return None;
        }
        let folder = root.join(key.folder());
        write_entry(&folder, &key.entry(), sha256).err().map(|e| {
            format!(
                "identity cache {} is not writable ({e}); the file was hashed and nothing was cached",
                root.display()
            )
        })
    }
}

fn parse_entry(bytes: &[u8]) -> Option<String> {
    let digest = bytes.strip_suffix(b"\n")?;
    let hex_ok = digest.len() == 64
        && digest
            .iter()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(b));
    hex_ok.then(|| String::from_utf8_lossy(digest).into_owned())
}

fn write_entry(folder: &Path, name: &str, sha256: &str) -> std::io::Result<()> {
    std::fs::create_dir_all(folder)?;
    let tmp = folder.join(format!(".{name}.{}.tmp", std::process::id()));
    std::fs::write(&tmp, format!("{sha256}\n"))?;
    std::fs::rename(&tmp, folder.join(name))?;
    // Older versions of this inode can never match again: drop them.
    for entry in std::fs::read_dir(folder)?.flatten() {
        let other = entry.file_name();
        if other
            .to_str()
            .is_some_and(|o| o != name && !o.starts_with('.'))
        {
            let _ = std::fs::remove_file(entry.path());
        }
    }
    Ok(())
}

/// Nanoseconds since the Unix epoch now (0 if the clock is before it, which makes nothing cacheable).
pub fn now_ns() -> i128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i128::try_from(d.as_nanos()).unwrap_or(0))
}
