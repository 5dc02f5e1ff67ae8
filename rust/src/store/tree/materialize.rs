//! Materializing a frozen tree with verification, into a temp folder published by a no-replace rename.

use crate::error::{Error, Result};

use crate::store::codes;
use crate::store::fsx::{self, errno, Dir};

use rayon::prelude::*;
use rustix::fd::OwnedFd;
use rustix::fs::{self as rfs, FileType, Mode, OFlags};
use serde::Serialize;

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::freeze::hash_fd;
use super::*;

/// What a materialization wrote.
#[derive(Debug, Clone, Serialize)]
pub struct Materialized {
    pub digest: String,
    pub destination: String,
    pub file_count: u64,
    pub total_bytes: u64,
    pub reflinked: u64,
}

pub(super) fn corrupt_blob(sha: &str, why: &str) -> Error {
    Error::input(
        codes::OBJECT_CORRUPT,
        format!("blob {sha} is corrupt: {why}"),
    )
    .with_path(blob_rel(sha))
}

/// Reads blobs for a materialization: blob folders opened once, reflink tried until it proves unsupported.
pub(super) struct Blobs<'a> {
    store: &'a Dir,
    folders: std::sync::Mutex<std::collections::HashMap<String, Arc<Dir>>>,
    reflink: std::sync::atomic::AtomicBool,
}

impl<'a> Blobs<'a> {
    fn new(store: &'a Dir) -> Self {
        Blobs {
            store,
            folders: std::sync::Mutex::new(std::collections::HashMap::new()),
            reflink: std::sync::atomic::AtomicBool::new(true),
        }
    }

    fn folder(&self, sha: &str) -> Result<Arc<Dir>> {
        let prefix = sha.get(..2).unwrap_or("00").to_string();
        if let Some(found) = self
            .folders
            .lock()
            .ok()
            .and_then(|m| m.get(&prefix).cloned())
        {
            return Ok(found);
        }
        let opened = Arc::new(
            self.store
                .open_dir(&format!("objects/blobs/{prefix}"))
                .map_err(|e| {
                    if e.code == crate::error::codes::FILE_NOT_FOUND {
                        corrupt_blob(sha, "missing")
                    } else {
                        e
                    }
                })?,
        );
        if let Ok(mut m) = self.folders.lock() {
            m.insert(prefix, opened.clone());
        }
        Ok(opened)
    }

    /// Copies one blob into `dst` (reflink when the file system supports it) and verifies every byte.
    fn copy(&self, sha: &str, size: u64, dst: &OwnedFd, deadline: Instant) -> Result<bool> {
        use std::sync::atomic::Ordering;
        let folder = self.folder(sha)?;
        let src = rfs::openat(
            folder.fd(),
            sha,
            // NONBLOCK: a FIFO in place of a blob is refused below, not waited on.
            OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NONBLOCK,
            Mode::empty(),
        )
        .map_err(|e| match e {
            rustix::io::Errno::NOENT => corrupt_blob(sha, "missing"),
            other => errno("open", &blob_rel(sha), other),
        })?;
        let st = rfs::fstat(&src).map_err(|e| errno("stat", &blob_rel(sha), e))?;
        if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile {
            return Err(corrupt_blob(sha, "not a regular file"));
        }
        let reflinked = self.reflink.load(Ordering::Relaxed) && {
            let done = rfs::ioctl_ficlone(dst, &src);
            if let Err(e) = done {
                if e != rustix::io::Errno::BADF {
                    self.reflink.store(false, Ordering::Relaxed);
                }
            }
            done.is_ok()
        };
        let (got, n) = if reflinked {
            hash_fd(&src, sha, deadline, None)?
        } else {
            hash_fd(&src, sha, deadline, Some(dst))?
        };
        if got != sha || n != size {
            return Err(corrupt_blob(
                sha,
                &format!("read {n} bytes hashing to {got}"),
            ));
        }
        Ok(reflinked)
    }
}

/// Materializes object `digest` at `destination`, which must not exist. Nothing is left behind on failure.
pub fn materialize(store: &Dir, digest: &str, destination: &Path) -> Result<Materialized> {
    let manifest = read_manifest(store, digest)?;
    let shown = destination.display().to_string();
    if std::fs::symlink_metadata(destination).is_ok() {
        return Err(
            Error::input(codes::DESTINATION_EXISTS, format!("{shown} already exists"))
                .with_path(shown),
        );
    }
    let name = destination
        .file_name()
        .and_then(|n| n.to_str())
        .ok_or_else(|| {
            Error::input(codes::PATH_UNSAFE, format!("{shown} has no final name"))
                .with_path(shown.clone())
        })?;
    let parent = Dir::open(destination.parent().unwrap_or(Path::new(".")))?;
    let deadline = Instant::now() + Duration::from_secs(24 * 3600);
    let tmp = fsx::temp_name();
    let outcome = if manifest.source_kind == "file" {
        materialize_file(store, &manifest, &parent, &tmp, deadline)
    } else {
        materialize_tree(store, &manifest, &parent, &tmp, deadline)
    };
    let reflinked = match outcome {
        Ok(r) => r,
        Err(e) => {
            remove_tmp(&parent, &tmp);
            return Err(e);
        }
    };
    match fsx::rename_noreplace(&parent, &tmp, &parent, name) {
        Ok(()) => {}
        Err(e) => {
            remove_tmp(&parent, &tmp);
            return Err(
                if e == rustix::io::Errno::EXIST || e == rustix::io::Errno::NOTEMPTY {
                    Error::input(
                        codes::DESTINATION_EXISTS,
                        format!("{shown} appeared meanwhile"),
                    )
                    .with_path(shown)
                } else {
                    errno("publish", &shown, e)
                },
            );
        }
    }
    fsx::fsync_dir(&parent)?;
    Ok(Materialized {
        digest: digest.to_string(),
        destination: shown,
        file_count: manifest.file_count,
        total_bytes: manifest.total_bytes,
        reflinked,
    })
}

pub(super) fn remove_tmp(parent: &Dir, tmp: &str) {
    let path = parent.path().join(tmp);
    // Directory modes are restored last, so a failed tree is still writable; make sure anyway.
    let _ = make_writable(&path);
    let _ = std::fs::remove_dir_all(&path).or_else(|_| std::fs::remove_file(&path));
}

pub(super) fn make_writable(path: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let meta = std::fs::symlink_metadata(path)?;
    if meta.is_dir() {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o700))?;
        for entry in std::fs::read_dir(path)? {
            let _ = make_writable(&entry?.path());
        }
    }
    Ok(())
}

pub(super) fn create_file(dir: &OwnedFd, name: &str, shown: &str) -> Result<OwnedFd> {
    rfs::openat(
        dir,
        name,
        OFlags::RDWR | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::from_raw_mode(0o600),
    )
    .map_err(|e| errno("create", shown, e))
}

pub(super) fn materialize_file(
    store: &Dir,
    m: &Manifest,
    parent: &Dir,
    tmp: &str,
    deadline: Instant,
) -> Result<u64> {
    let Some(Entry::File {
        mode,
        size_bytes,
        sha256,
        ..
    }) = m.entries.first()
    else {
        return Err(Error::input(
            codes::OBJECT_CORRUPT,
            "a file object needs exactly one file entry",
        ));
    };
    let fd = create_file(parent.fd(), tmp, tmp)?;
    let reflinked = Blobs::new(store).copy(sha256, *size_bytes, &fd, deadline)?;
    rfs::fchmod(&fd, Mode::from_raw_mode(*mode)).map_err(|e| errno("chmod", tmp, e))?;
    Ok(u64::from(reflinked))
}

pub(super) fn materialize_tree(
    store: &Dir,
    m: &Manifest,
    parent: &Dir,
    tmp: &str,
    deadline: Instant,
) -> Result<u64> {
    rfs::mkdirat(parent.fd(), tmp, Mode::from_raw_mode(0o700))
        .map_err(|e| errno("mkdir", tmp, e))?;
    let blobs = Blobs::new(store);
    let root = parent.open_dir(tmp)?;
    let mut dirs: std::collections::HashMap<String, Arc<Dir>> = std::collections::HashMap::new();
    let mut dir_modes: Vec<(String, u32)> = Vec::new();
    let mut files = Vec::new();
    for entry in &m.entries {
        match entry {
            Entry::Directory { path, mode } => {
                let (p, name) = root.parent_of(path, false)?;
                rfs::mkdirat(p.fd(), name, Mode::from_raw_mode(0o700))
                    .map_err(|e| errno("mkdir", path, e))?;
                dirs.insert(path.clone(), Arc::new(root.open_dir(path)?));
                dir_modes.push((path.clone(), *mode));
            }
            Entry::File { .. } => files.push(entry),
        }
    }
    let root = Arc::new(root);
    let reflinked: Vec<bool> = files
        .par_iter()
        .map(|entry| {
            let Entry::File {
                path,
                mode,
                size_bytes,
                sha256,
            } = entry
            else {
                return Ok(false);
            };
            let (dir, name) = match path.rsplit_once('/') {
                Some((d, n)) => (
                    dirs.get(d).cloned().ok_or_else(|| {
                        Error::input(
                            codes::OBJECT_CORRUPT,
                            format!("{path} comes before its directory"),
                        )
                    })?,
                    n,
                ),
                None => (root.clone(), path.as_str()),
            };
            let fd = create_file(dir.fd(), name, path)?;
            let r = blobs.copy(sha256, *size_bytes, &fd, deadline)?;
            rfs::fchmod(&fd, Mode::from_raw_mode(*mode)).map_err(|e| errno("chmod", path, e))?;
            Ok(r)
        })
        .collect::<Result<_>>()?;
    for (path, mode) in dir_modes.iter().rev() {
        if let Some(d) = dirs.get(path) {
            rfs::fchmod(d.fd(), Mode::from_raw_mode(*mode)).map_err(|e| errno("chmod", path, e))?;
        }
    }
    Ok(reflinked.iter().filter(|r| **r).count() as u64)
}
