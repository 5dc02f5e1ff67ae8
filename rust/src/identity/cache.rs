//! The identity cache: a file's BLAKE3 digest remembered per (device, inode, size, mtime_ns, ctime_ns).
//!
//! One entry file per inode version: `<dir>/identity-v2/<dev>-<ino>/<size>-<mtime_ns>-<ctime_ns>`
//! holding the hex digest and its tag, each on a line; writing an entry removes the inode's older
//! versions, so the cache holds at most one entry per inode. Writes are atomic (temporary file, then
//! rename); folders are 0700 and files 0600.
//!
//! An entry stands only when its tag is BLAKE3's keyed hash, under the cache's own 32-byte key
//! (`identity-v2/.key`, made once from the OS's random source), of the five numbers and the digest: an
//! entry written by anything but gpuopt, copied from another inode or another machine, or edited, is
//! not believed (a warning, and the file is hashed). A cache folder that another user owns or that
//! others may write is not used at all. Someone who can read your files can still forge an entry: the
//! cache saves time, it is not a proof; `GPUOPT_CACHE_DIR=` (empty) turns it off.
//!
//! Git's racy-timestamp rule: a file whose mtime or ctime lies within [`RACY_NS`] of the moment its
//! digest would be stored is not stored, since a rewrite within the timestamp's granularity could
//! leave all five numbers unchanged. Any later write moves ctime past the stored one (ctime cannot be
//! set by a user), so a stored entry is never returned for other content.
//!
//! The cache only ever saves time: an unreadable, unwritable or corrupt cache is reported as a
//! warning and the file is hashed as if there were no cache.

use std::io::Read;
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

    /// All five numbers, `dev-ino-size-mtime_ns-ctime_ns`.
    pub fn version(&self) -> String {
        format!("{}-{}", self.folder(), self.entry())
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

const KEY_FILE: &str = ".key";

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
            root: dir.map(|d| d.join("identity-v2")),
        }
    }

    /// The cache's key, when its folder is this user's own and closed to others; the reason otherwise
    /// (`create`: make the folder and the key when they do not exist yet).
    fn key(&self, create: bool) -> std::result::Result<[u8; 32], String> {
        let root = self.root.as_ref().ok_or_else(String::new)?;
        if create {
            make_private_dir(root)
                .map_err(|e| format!("identity cache {} is not writable ({e})", root.display()))?;
        }
        let meta = std::fs::symlink_metadata(root).map_err(|_| String::new())?;
        let mode = meta.mode();
        if !meta.is_dir() || meta.uid() != rustix::process::geteuid().as_raw() || mode & 0o022 != 0
        {
            return Err(format!(
                "identity cache {} is not a folder of this user's closed to others (mode {:o}); \
                 it is not used",
                root.display(),
                mode & 0o7777
            ));
        }
        let path = root.join(KEY_FILE);
        match std::fs::read(&path) {
            Ok(bytes) => <[u8; 32]>::try_from(bytes.as_slice()).map_err(|_| {
                format!(
                    "identity cache key {} is damaged; it is not used",
                    path.display()
                )
            }),
            Err(_) if create => {
                new_key(root, &path).map_err(|e| format!("identity cache key ({e})"))
            }
            Err(_) => Err(String::new()),
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
        let Ok(bytes) = std::fs::read(&path) else {
            return Lookup::Miss;
        };
        let secret = match self.key(false) {
            Ok(secret) => secret,
            Err(why) if why.is_empty() => return Lookup::Miss,
            Err(why) => return Lookup::Corrupt(why),
        };
        match parse_entry(&bytes) {
            Some((digest, tag)) if tag == entry_tag(&secret, key, &digest) => Lookup::Hit(digest),
            _ => Lookup::Corrupt(format!(
                "identity cache entry {} was not written by gpuopt for this file version (forged, copied \
                 or damaged); hashing the file instead",
                path.display()
            )),
        }
    }

    /// Stores `digest` for `key` unless the file is racy at `now_ns`; a warning when it could not.
    pub fn store(&self, key: &StatKey, digest: &str, now_ns: i128) -> Option<String> {
        let root = self.root.as_ref()?;
        if key.racy_at(now_ns) {
            return None;
        }
        let secret = match self.key(true) {
            Ok(secret) => secret,
            Err(why) => return Some(format!("{why}; the file was hashed and nothing was cached")),
        };
        let folder = root.join(key.folder());
        let body = format!("{digest}\n{}\n", entry_tag(&secret, key, digest));
        write_entry(&folder, &key.entry(), &body).err().map(|e| {
            format!(
                "identity cache {} is not writable ({e}); the file was hashed and nothing was cached",
                root.display()
            )
        })
    }
}

/// BLAKE3 keyed hash of the file version and its digest, hex.
fn entry_tag(secret: &[u8; 32], key: &StatKey, digest: &str) -> String {
    let message = format!("gpuopt identity-v2\n{}\n{digest}\n", key.version());
    blake3::keyed_hash(secret, message.as_bytes())
        .to_hex()
        .to_string()
}

fn is_hex64(text: &str) -> bool {
    text.len() == 64
        && text
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// `(digest, tag)` of an entry: two lines of 64 lowercase hex digits.
fn parse_entry(bytes: &[u8]) -> Option<(String, String)> {
    let text = std::str::from_utf8(bytes).ok()?;
    let mut lines = text.strip_suffix('\n')?.split('\n');
    let (digest, tag) = (lines.next()?, lines.next()?);
    (lines.next().is_none() && is_hex64(digest) && is_hex64(tag))
        .then(|| (digest.to_string(), tag.to_string()))
}

fn make_private_dir(path: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(path)
}

/// Writes `bytes` to a new 0600 file `tmp` (never through a link).
fn write_new(tmp: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32)
        .open(tmp)?;
    file.write_all(bytes)
}

/// Writes `bytes` to a new 0600 file, then renames it to `target`.
fn write_private(tmp: &Path, target: &Path, bytes: &[u8]) -> std::io::Result<()> {
    write_new(tmp, bytes)?;
    std::fs::rename(tmp, target)
}

/// 32 bytes from the OS's random source, kept 0600 as the cache's key. Published by a hard link,
/// which fails when a key exists: the first writer wins and everyone reads the same key.
fn new_key(root: &Path, path: &Path) -> std::io::Result<[u8; 32]> {
    let mut secret = [0u8; 32];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut secret)?;
    let tmp = root.join(format!(".key.{}.tmp", std::process::id()));
    let _ = std::fs::remove_file(&tmp);
    write_new(&tmp, &secret)?;
    let linked = std::fs::hard_link(&tmp, path);
    let _ = std::fs::remove_file(&tmp);
    if let Err(e) = linked {
        if e.kind() != std::io::ErrorKind::AlreadyExists {
            return Err(e);
        }
    }
    let stored = std::fs::read(path)?;
    <[u8; 32]>::try_from(stored.as_slice()).map_err(|_| std::io::Error::other("damaged key"))
}

fn write_entry(folder: &Path, name: &str, body: &str) -> std::io::Result<()> {
    make_private_dir(folder)?;
    let tmp = folder.join(format!(".{name}.{}.tmp", std::process::id()));
    let _ = std::fs::remove_file(&tmp);
    write_private(&tmp, &folder.join(name), body.as_bytes())?;
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
