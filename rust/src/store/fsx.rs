//! File-system primitives that never follow a link below a root and never leave a partial file visible.
//!
//! Every path below a root is walked component by component through directory file descriptors opened
//! with `O_NOFOLLOW`; a symbolic link anywhere, `..`, an empty or absolute component is `path_unsafe`.
//! Create-once publication writes a temp file in the target directory, fsyncs it, renames it with
//! `renameat2(RENAME_NOREPLACE)` (falling back to `link` + `unlink` where the file system lacks it) and
//! fsyncs the directory, so a reader sees all of a record or nothing, and a crash leaves at most a temp file.

use super::codes;
use crate::error::{Error, Result};
use crate::identity::hex;
use rustix::fd::OwnedFd;
use rustix::fs::{self as rfs, AtFlags, FlockOperation, Mode, OFlags, RenameFlags};
use rustix::io::Errno;
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Prefix of every temp file the store creates; readers skip such names, `store verify` lists them.
pub const TEMP_PREFIX: &str = ".tmp-";

static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// A unique temp name for this process.
pub fn temp_name() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let n = TEMP_COUNTER.fetch_add(1, Ordering::Relaxed);
    format!("{TEMP_PREFIX}{}-{nanos:x}-{n}", std::process::id())
}

/// SHA-256 of bytes, lowercase hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

/// Maps a syscall failure on `shown` to the crate's error.
pub fn errno(op: &str, shown: &str, e: Errno) -> Error {
    let code = match e {
        Errno::NOENT => crate::error::codes::FILE_NOT_FOUND,
        Errno::LOOP | Errno::NOTDIR => codes::PATH_UNSAFE,
        _ => codes::STORE_IO,
    };
    let what = if code == codes::PATH_UNSAFE {
        "a symbolic link or a non-directory sits in the path".to_string()
    } else {
        e.to_string()
    };
    Error::input(code, format!("{op} {shown}: {what}")).with_path(shown.to_string())
}

/// Splits a relative path into safe components.
pub fn components(rel: &str) -> Result<Vec<&str>> {
    let unsafe_path = |why: &str| {
        Error::input(codes::PATH_UNSAFE, format!("unsafe path {rel:?}: {why}"))
            .with_path(rel.to_string())
    };
    if rel.is_empty() {
        return Err(unsafe_path("empty"));
    }
    if rel.starts_with('/') {
        return Err(unsafe_path("absolute"));
    }
    let parts: Vec<&str> = rel.split('/').collect();
    for part in &parts {
        match *part {
            "" => return Err(unsafe_path("empty component")),
            "." | ".." => return Err(unsafe_path("'.' or '..' component")),
            p if p.contains('\0') => return Err(unsafe_path("NUL byte")),
            _ => {}
        }
    }
    Ok(parts)
}

/// An open directory: the root of a store, or a folder below it.
#[derive(Debug)]
pub struct Dir {
    fd: OwnedFd,
    shown: PathBuf,
}

const DIR_FLAGS: OFlags = OFlags::DIRECTORY
    .union(OFlags::NOFOLLOW)
    .union(OFlags::CLOEXEC)
    .union(OFlags::RDONLY);

impl Dir {
    /// Opens an existing directory by path (links above it are resolved once; the last one may not be a link).
    pub fn open(path: &Path) -> Result<Dir> {
        let shown = path.display().to_string();
        let fd = rfs::open(path, DIR_FLAGS, Mode::empty()).map_err(|e| errno("open", &shown, e))?;
        Ok(Dir {
            fd,
            shown: path.to_path_buf(),
        })
    }

    pub fn fd(&self) -> &OwnedFd {
        &self.fd
    }

    pub fn path(&self) -> &Path {
        &self.shown
    }

    fn shown(&self, rel: &str) -> String {
        self.shown.join(rel).display().to_string()
    }

    /// Opens the directory `rel` below this one, following no link.
    pub fn open_dir(&self, rel: &str) -> Result<Dir> {
        self.walk(rel, false)
    }

    /// Opens `rel`, creating missing directories (mode 0755) on the way.
    pub fn ensure_dir(&self, rel: &str) -> Result<Dir> {
        self.walk(rel, true)
    }

    fn walk(&self, rel: &str, create: bool) -> Result<Dir> {
        let mut current =
            rustix::io::dup(&self.fd).map_err(|e| errno("dup", &self.shown(""), e))?;
        let mut shown = self.shown.clone();
        for part in components(rel)? {
            shown.push(part);
            let opened = match rfs::openat(&current, part, DIR_FLAGS, Mode::empty()) {
                Err(Errno::NOENT) if create => {
                    match rfs::mkdirat(&current, part, Mode::from_raw_mode(0o755)) {
                        Ok(()) | Err(Errno::EXIST) => {}
                        Err(e) => return Err(errno("mkdir", &shown.display().to_string(), e)),
                    }
                    rfs::openat(&current, part, DIR_FLAGS, Mode::empty())
                }
                other => other,
            };
            current = opened.map_err(|e| errno("open", &shown.display().to_string(), e))?;
        }
        Ok(Dir { fd: current, shown })
    }

    /// Splits `rel` into its parent directory (opened, optionally created) and its final name.
    pub fn parent_of<'a>(&self, rel: &'a str, create: bool) -> Result<(Dir, &'a str)> {
        let parts = components(rel)?;
        let name = parts.last().copied().unwrap_or(rel);
        let parent = match rel.rfind('/') {
            Some(cut) => self.walk(rel.get(..cut).unwrap_or(""), create)?,
            None => self.walk_self()?,
        };
        Ok((parent, name))
    }

    fn walk_self(&self) -> Result<Dir> {
        let fd = rustix::io::dup(&self.fd).map_err(|e| errno("dup", &self.shown(""), e))?;
        Ok(Dir {
            fd,
            shown: self.shown.clone(),
        })
    }

    /// Whether `rel` exists (as anything; a link is not followed).
    pub fn exists(&self, rel: &str) -> Result<bool> {
        let (parent, name) = match self.parent_of(rel, false) {
            Ok(found) => found,
            Err(e) if e.code == crate::error::codes::FILE_NOT_FOUND => return Ok(false),
            Err(e) => return Err(e),
        };
        match rfs::statat(&parent.fd, name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(_) => Ok(true),
            Err(Errno::NOENT) => Ok(false),
            Err(e) => Err(errno("stat", &self.shown(rel), e)),
        }
    }

    /// Opens the regular file `rel` for reading, following no link.
    pub fn open_file(&self, rel: &str) -> Result<OwnedFd> {
        let (parent, name) = self.parent_of(rel, false)?;
        let fd = rfs::openat(
            &parent.fd,
            name,
            // NONBLOCK: a FIFO planted in the store is refused below instead of waiting for a
            // writer (a regular file's reads ignore the flag).
            OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NONBLOCK,
            Mode::empty(),
        )
        .map_err(|e| errno("open", &self.shown(rel), e))?;
        let st = rfs::fstat(&fd).map_err(|e| errno("stat", &self.shown(rel), e))?;
        if rfs::FileType::from_raw_mode(st.st_mode) != rfs::FileType::RegularFile {
            return Err(Error::input(
                codes::PATH_UNSAFE,
                format!("{} is not a regular file", self.shown(rel)),
            )
            .with_path(self.shown(rel)));
        }
        Ok(fd)
    }

    /// Reads the regular file `rel` whole, refusing files over `max_bytes`.
    pub fn read(&self, rel: &str, max_bytes: u64) -> Result<Vec<u8>> {
        let fd = self.open_file(rel)?;
        read_all(&fd, max_bytes, &self.shown(rel))
    }

    /// Publishes `bytes` at `rel` once. An existing identical file is accepted (`created: false`); an existing
    /// different one is `record_conflict`.
    pub fn write_once(&self, rel: &str, bytes: &[u8]) -> Result<WriteOutcome> {
        let (parent, name) = self.parent_of(rel, true)?;
        let sha256 = sha256_hex(bytes);
        let tmp = write_temp(&parent, bytes, 0o444, &self.shown(rel))?;
        match publish_noreplace(&parent, &tmp, name) {
            Ok(()) => {
                fsync_dir(&parent)?;
                let mtime_ns = mtime_of(&parent, name, &self.shown(rel))?;
                Ok(WriteOutcome {
                    sha256,
                    created: true,
                    mtime_ns,
                })
            }
            Err(Errno::EXIST) => {
                let _ = rfs::unlinkat(&parent.fd, tmp.as_str(), AtFlags::empty());
                let existing = self.read(rel, u64::MAX)?;
                let observed = sha256_hex(&existing);
                if observed != sha256 {
                    return Err(Error::input(
                        codes::RECORD_CONFLICT,
                        format!("{} already exists with other content", self.shown(rel)),
                    )
                    .with_path(self.shown(rel))
                    .with_expected(sha256)
                    .with_observed(observed));
                }
                let mtime_ns = mtime_of(&parent, name, &self.shown(rel))?;
                Ok(WriteOutcome {
                    sha256,
                    created: false,
                    mtime_ns,
                })
            }
            Err(e) => {
                let _ = rfs::unlinkat(&parent.fd, tmp.as_str(), AtFlags::empty());
                Err(errno("publish", &self.shown(rel), e))
            }
        }
    }

    /// Atomically replaces `rel` with `bytes` (temp, fsync, rename, fsync of the folder).
    pub fn replace(&self, rel: &str, bytes: &[u8], mode: u32) -> Result<WriteOutcome> {
        self.replace_with(rel, bytes, mode, true)
    }

    /// [`Dir::replace`]; without `durable` nothing is fsynced: readers still see all or nothing and a killed
    /// process loses nothing, only a power cut may (for state that dies with the machine, such as the
    /// record of a running child).
    pub fn replace_with(
        &self,
        rel: &str,
        bytes: &[u8],
        mode: u32,
        durable: bool,
    ) -> Result<WriteOutcome> {
        let (parent, name) = self.parent_of(rel, true)?;
        let tmp = write_temp_with(&parent, bytes, mode, &self.shown(rel), durable)?;
        if let Err(e) = rfs::renameat(&parent.fd, tmp.as_str(), &parent.fd, name) {
            let _ = rfs::unlinkat(&parent.fd, tmp.as_str(), AtFlags::empty());
            return Err(errno("replace", &self.shown(rel), e));
        }
        if durable {
            fsync_dir(&parent)?;
        }
        Ok(WriteOutcome {
            sha256: sha256_hex(bytes),
            created: true,
            mtime_ns: mtime_of(&parent, name, &self.shown(rel))?,
        })
    }

    /// Removes the file `rel` (not a directory); absence is fine.
    pub fn remove_file(&self, rel: &str) -> Result<bool> {
        self.remove_file_with(rel, true)
    }

    /// [`Dir::remove_file`], fsyncing the folder only when `durable`.
    pub fn remove_file_with(&self, rel: &str, durable: bool) -> Result<bool> {
        let (parent, name) = match self.parent_of(rel, false) {
            Ok(found) => found,
            Err(e) if e.code == crate::error::codes::FILE_NOT_FOUND => return Ok(false),
            Err(e) => return Err(e),
        };
        match rfs::unlinkat(&parent.fd, name, AtFlags::empty()) {
            Ok(()) => {
                if durable {
                    fsync_dir(&parent)?;
                }
                Ok(true)
            }
            Err(Errno::NOENT) => Ok(false),
            Err(e) => Err(errno("remove", &self.shown(rel), e)),
        }
    }

    /// Takes an advisory `flock` on `rel` (created if absent, never deleted). `None` if `wait` is false and
    /// another holder has it.
    pub fn lock(&self, rel: &str, exclusive: bool, wait: bool) -> Result<Option<OwnedFd>> {
        let (parent, name) = self.parent_of(rel, true)?;
        let fd = rfs::openat(
            &parent.fd,
            name,
            OFlags::RDWR | OFlags::CREATE | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::from_raw_mode(0o666),
        )
        .map_err(|e| errno("open lock", &self.shown(rel), e))?;
        let op = match (exclusive, wait) {
            (true, true) => FlockOperation::LockExclusive,
            (true, false) => FlockOperation::NonBlockingLockExclusive,
            (false, true) => FlockOperation::LockShared,
            (false, false) => FlockOperation::NonBlockingLockShared,
        };
        match rfs::flock(&fd, op) {
            Ok(()) => Ok(Some(fd)),
            Err(Errno::WOULDBLOCK) => Ok(None),
            Err(e) => Err(errno("flock", &self.shown(rel), e)),
        }
    }

    /// Names in this directory (no `.`/`..`), unsorted; fails on a name that is not UTF-8.
    pub fn list(&self) -> Result<Vec<(String, rfs::FileType)>> {
        let mut dir =
            rfs::Dir::read_from(&self.fd).map_err(|e| errno("list", &self.shown(""), e))?;
        let mut out = Vec::new();
        while let Some(entry) = dir.read() {
            let entry = entry.map_err(|e| errno("list", &self.shown(""), e))?;
            let raw = entry.file_name().to_bytes();
            if raw == b"." || raw == b".." {
                continue;
            }
            let name = String::from_utf8(raw.to_vec()).map_err(|_| {
                Error::input(
                    codes::OBJECT_NAME_INVALID,
                    format!("a name in {} is not UTF-8", self.shown("")),
                )
                .with_path(self.shown(""))
            })?;
            out.push((name, entry.file_type()));
        }
        Ok(out)
    }
}

/// The result of a publication.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct WriteOutcome {
    pub sha256: String,
    pub created: bool,
    pub mtime_ns: i64,
}

/// Reads a whole file descriptor, refusing more than `max_bytes`.
pub fn read_all(fd: &OwnedFd, max_bytes: u64, shown: &str) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = rustix::io::read(fd, &mut buf).map_err(|e| errno("read", shown, e))?;
        if n == 0 {
            return Ok(out);
        }
        out.extend_from_slice(buf.get(..n).unwrap_or_default());
        if out.len() as u64 > max_bytes {
            return Err(Error::input(
                codes::RECORD_INVALID,
                format!("{shown} is larger than {max_bytes} bytes"),
            )
            .with_path(shown.to_string())
            .with_expected(format!("<= {max_bytes} bytes")));
        }
    }
}

fn write_all(fd: &OwnedFd, mut bytes: &[u8], shown: &str) -> Result<()> {
    while !bytes.is_empty() {
        let n = rustix::io::write(fd, bytes).map_err(|e| errno("write", shown, e))?;
        bytes = bytes.get(n..).unwrap_or_default();
    }
    Ok(())
}

/// Writes `bytes` to a fresh temp file in `dir`, sets `mode`, fsyncs; returns its name.
pub fn write_temp(dir: &Dir, bytes: &[u8], mode: u32, shown: &str) -> Result<String> {
    write_temp_with(dir, bytes, mode, shown, true)
}

/// [`write_temp`], fsyncing only when `durable`.
pub fn write_temp_with(
    dir: &Dir,
    bytes: &[u8],
    mode: u32,
    shown: &str,
    durable: bool,
) -> Result<String> {
    let name = temp_name();
    let fd = rfs::openat(
        &dir.fd,
        name.as_str(),
        OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::from_raw_mode(0o600),
    )
    .map_err(|e| errno("create", shown, e))?;
    let done = write_all(&fd, bytes, shown)
        .and_then(|()| {
            rfs::fchmod(&fd, Mode::from_raw_mode(mode)).map_err(|e| errno("chmod", shown, e))
        })
        .and_then(|()| {
            if durable {
                rfs::fsync(&fd).map_err(|e| errno("fsync", shown, e))
            } else {
                Ok(())
            }
        });
    if let Err(e) = done {
        let _ = rfs::unlinkat(&dir.fd, name.as_str(), AtFlags::empty());
        return Err(e);
    }
    Ok(name)
}

/// Renames `tmp` to `name` in `dir` unless `name` exists (`EEXIST`); `link` + `unlink` where `renameat2` is
/// unsupported (regular files only).
pub fn publish_noreplace(dir: &Dir, tmp: &str, name: &str) -> std::result::Result<(), Errno> {
    match rfs::renameat_with(&dir.fd, tmp, &dir.fd, name, RenameFlags::NOREPLACE) {
        Err(Errno::INVAL | Errno::NOSYS | Errno::OPNOTSUPP) => {
            rfs::linkat(&dir.fd, tmp, &dir.fd, name, AtFlags::empty())?;
            let _ = rfs::unlinkat(&dir.fd, tmp, AtFlags::empty());
            Ok(())
        }
        other => other,
    }
}

/// Renames a directory entry across folders without replacing anything (`renameat2` only).
pub fn rename_noreplace(
    from: &Dir,
    from_name: &str,
    to: &Dir,
    to_name: &str,
) -> std::result::Result<(), Errno> {
    rfs::renameat_with(&from.fd, from_name, &to.fd, to_name, RenameFlags::NOREPLACE)
}

/// Makes the directory's entries durable.
pub fn fsync_dir(dir: &Dir) -> Result<()> {
    rfs::fsync(&dir.fd).map_err(|e| errno("fsync", &dir.shown.display().to_string(), e))
}

fn mtime_of(dir: &Dir, name: &str, shown: &str) -> Result<i64> {
    let st = rfs::statat(&dir.fd, name, AtFlags::SYMLINK_NOFOLLOW)
        .map_err(|e| errno("stat", shown, e))?;
    Ok(st
        .st_mtime
        .saturating_mul(1_000_000_000)
        .saturating_add(st.st_mtime_nsec as i64))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("gpuopt-fsx-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn write_once_is_create_once() {
        let base = scratch("once");
        let root = Dir::open(&base).unwrap();
        let first = root.write_once("a/b/rec.json", b"{}\n").unwrap();
        assert!(first.created);
        let again = root.write_once("a/b/rec.json", b"{}\n").unwrap();
        assert!(!again.created);
        let err = root.write_once("a/b/rec.json", b"[]\n").unwrap_err();
        assert_eq!(err.code, codes::RECORD_CONFLICT);
        assert_eq!(std::fs::read(base.join("a/b/rec.json")).unwrap(), b"{}\n");
        let leftovers: Vec<_> = std::fs::read_dir(base.join("a/b")).unwrap().collect();
        assert_eq!(leftovers.len(), 1);
        let _ = std::fs::remove_dir_all(&base);
    }

    #[test]
    fn links_and_traversal_are_unsafe() {
        let base = scratch("unsafe");
        std::fs::create_dir_all(base.join("real")).unwrap();
        std::os::unix::fs::symlink(base.join("real"), base.join("link")).unwrap();
        let root = Dir::open(&base).unwrap();
        for rel in [
            "link/x.json",
            "../x.json",
            "a/../x.json",
            "/etc/passwd",
            "a//b",
            "",
        ] {
            let err = root.write_once(rel, b"x").unwrap_err();
            assert_eq!(err.code, codes::PATH_UNSAFE, "{rel}");
        }
        std::os::unix::fs::symlink(base.join("real/f"), base.join("real/l")).unwrap();
        assert_eq!(
            root.read("real/l", 10).unwrap_err().code,
            codes::PATH_UNSAFE
        );
        let _ = std::fs::remove_dir_all(&base);
    }
}
