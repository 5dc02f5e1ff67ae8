//! Content-addressed trees: a frozen file tree is one manifest plus one blob per distinct file content.
//!
//! Freezing walks the source through dirfds with `O_NOFOLLOW` (a link is `object_symlink`, a FIFO, socket or
//! device `object_special_file`), checks every file's `(dev, ino, size, mtime, ctime)` before and after reading
//! and every directory's listing before and after the whole freeze (`object_changed_during_read`), enforces
//! count, size and wall-time limits before reading (`object_limit_exceeded`) and hashes files in parallel in
//! 1 MiB chunks. The object digest is SHA-256 of the canonical manifest. Materializing re-hashes every byte it
//! copies (`object_corrupt` names the blob) into a temp folder published by a no-replace rename.

use super::canonical;
use super::codes;
use super::fsx::{self, errno, Dir};
use super::glob::Excludes;
use crate::error::{Error, Result};
use crate::identity::hex;
use rayon::prelude::*;
use rustix::fd::OwnedFd;
use rustix::fs::{self as rfs, AtFlags, FileType, Mode, OFlags};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

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

fn stat_key(st: &rfs::Stat) -> StatKey {
    (
        st.st_dev,
        st.st_ino,
        st.st_size,
        st.st_mtime,
        st.st_mtime_nsec as i64,
        st.st_ctime,
        st.st_ctime_nsec as i64,
    )
}

struct FileJob {
    index: usize,
    rel: String,
    parent: Arc<OwnedFd>,
    name: String,
    before: StatKey,
    size: u64,
}

struct DirCheck {
    rel: String,
    fd: Arc<OwnedFd>,
    before: (u64, u64, i64, i64),
    listing: Vec<String>,
}

struct Walk<'a> {
    excludes: &'a Excludes,
    limits: Limits,
    deadline: Instant,
    entries: Vec<Entry>,
    jobs: Vec<FileJob>,
    dirs: Vec<DirCheck>,
    total: u64,
    root_shown: String,
}

fn changed(rel: &str, what: &str) -> Error {
    Error::input(
        codes::OBJECT_CHANGED_DURING_READ,
        format!("{rel} changed while it was frozen ({what})"),
    )
    .with_path(rel.to_string())
}

fn limit(what: &str, limit: String, observed: String, rel: &str) -> Error {
    Error::input(
        codes::OBJECT_LIMIT_EXCEEDED,
        format!("the tree exceeds {what} at {rel}"),
    )
    .with_path(rel.to_string())
    .with_expected(limit)
    .with_observed(observed)
}

fn dir_key(st: &rfs::Stat) -> (u64, u64, i64, i64) {
    (st.st_dev, st.st_ino, st.st_mtime, st.st_mtime_nsec as i64)
}

fn listing(fd: &OwnedFd, shown: &str) -> Result<Vec<String>> {
    let mut dir = rfs::Dir::read_from(fd).map_err(|e| errno("list", shown, e))?;
    let mut names = Vec::new();
    while let Some(entry) = dir.read() {
        let entry = entry.map_err(|e| errno("list", shown, e))?;
        let raw = entry.file_name().to_bytes();
        if raw == b"." || raw == b".." {
            continue;
        }
        let name = String::from_utf8(raw.to_vec()).map_err(|_| {
            Error::input(
                codes::OBJECT_NAME_INVALID,
                format!("a name in {shown} is not UTF-8"),
            )
            .with_path(shown.to_string())
        })?;
        names.push(name);
    }
    names.sort_unstable_by(|a, b| a.as_bytes().cmp(b.as_bytes()));
    Ok(names)
}

impl Walk<'_> {
    fn check_time(&self, rel: &str) -> Result<()> {
        if Instant::now() > self.deadline {
            return Err(limit(
                "max_wall_s",
                format!("{} s", self.limits.max_wall_s),
                format!("{} files so far", self.jobs.len()),
                rel,
            ));
        }
        Ok(())
    }

    fn dir(&mut self, fd: Arc<OwnedFd>, prefix: &str) -> Result<()> {
        let shown = if prefix.is_empty() {
            self.root_shown.clone()
        } else {
            prefix.to_string()
        };
        let before = rfs::fstat(&*fd).map_err(|e| errno("stat", &shown, e))?;
        let names = listing(&fd, &shown)?;
        for name in &names {
            let rel = if prefix.is_empty() {
                name.clone()
            } else {
                format!("{prefix}/{name}")
            };
            self.check_time(&rel)?;
            let st = rfs::statat(&*fd, name.as_str(), AtFlags::SYMLINK_NOFOLLOW)
                .map_err(|e| errno("stat", &rel, e))?;
            match FileType::from_raw_mode(st.st_mode) {
                FileType::Symlink => {
                    return Err(Error::input(
                        codes::OBJECT_SYMLINK,
                        format!("{rel} is a symbolic link"),
                    )
                    .with_path(rel));
                }
                FileType::Directory => {
                    if self.excludes.excludes(&rel, true) {
                        continue;
                    }
                    self.entries.push(Entry::Directory {
                        path: rel.clone(),
                        mode: st.st_mode & 0o7777,
                    });
                    let child = rfs::openat(
                        &*fd,
                        name.as_str(),
                        OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::RDONLY,
                        Mode::empty(),
                    )
                    .map_err(|e| errno("open", &rel, e))?;
                    self.dir(Arc::new(child), &rel)?;
                }
                FileType::RegularFile => {
                    if self.excludes.excludes(&rel, false) {
                        continue;
                    }
                    let size = st.st_size.max(0) as u64;
                    let count = self.jobs.len() as u64 + 1;
                    if count > self.limits.max_files {
                        return Err(limit(
                            "max_files",
                            self.limits.max_files.to_string(),
                            format!("{count} files"),
                            &rel,
                        ));
                    }
                    if self.total + size > self.limits.max_total_bytes {
                        return Err(limit(
                            "max_total_bytes",
                            self.limits.max_total_bytes.to_string(),
                            format!("{} bytes", self.total + size),
                            &rel,
                        ));
                    }
                    self.total += size;
                    let index = self.entries.len();
                    self.entries.push(Entry::File {
                        path: rel.clone(),
                        mode: st.st_mode & 0o7777,
                        size_bytes: size,
                        sha256: String::new(),
                    });
                    self.jobs.push(FileJob {
                        index,
                        rel,
                        parent: fd.clone(),
                        name: name.clone(),
                        before: stat_key(&st),
                        size,
                    });
                }
                _ => {
                    return Err(Error::input(
                        codes::OBJECT_SPECIAL_FILE,
                        format!("{rel} is a FIFO, socket or device"),
                    )
                    .with_path(rel));
                }
            }
        }
        self.dirs.push(DirCheck {
            rel: if prefix.is_empty() {
                ".".to_string()
            } else {
                prefix.to_string()
            },
            fd,
            before: dir_key(&before),
            listing: names,
        });
        Ok(())
    }
}

/// Reads a file to its end, hashing it; optionally copying every byte into `sink`.
fn hash_fd(
    fd: &OwnedFd,
    rel: &str,
    deadline: Instant,
    mut sink: Option<&OwnedFd>,
) -> Result<(String, u64)> {
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; CHUNK];
    let mut total = 0u64;
    loop {
        if Instant::now() > deadline {
            return Err(limit(
                "max_wall_s",
                "the freeze deadline".into(),
                format!("{total} bytes"),
                rel,
            ));
        }
        let n = rustix::io::read(fd, &mut buf).map_err(|e| errno("read", rel, e))?;
        if n == 0 {
            break;
        }
        let chunk = buf.get(..n).unwrap_or_default();
        hasher.update(chunk);
        if let Some(out) = sink.as_mut() {
            let mut rest = chunk;
            while !rest.is_empty() {
                let w = rustix::io::write(*out, rest).map_err(|e| errno("write", rel, e))?;
                rest = rest.get(w..).unwrap_or_default();
            }
        }
        total += n as u64;
    }
    Ok((hex(&hasher.finalize()), total))
}

fn open_job(job: &FileJob) -> Result<OwnedFd> {
    rfs::openat(
        &*job.parent,
        job.name.as_str(),
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| errno("open", &job.rel, e))
}

/// Hashes one file, checking it did not change; returns its sha256.
fn hash_job(job: &FileJob, deadline: Instant) -> Result<String> {
    let fd = open_job(job)?;
    let before = rfs::fstat(&fd).map_err(|e| errno("stat", &job.rel, e))?;
    if stat_key(&before) != job.before {
        return Err(changed(
            &job.rel,
            "its metadata differs from the directory walk",
        ));
    }
    let (sha, read) = hash_fd(&fd, &job.rel, deadline, None)?;
    let after = rfs::fstat(&fd).map_err(|e| errno("stat", &job.rel, e))?;
    if read != job.size || stat_key(&after) != job.before {
        return Err(changed(
            &job.rel,
            &format!("expected {} bytes, read {read}", job.size),
        )
        .with_expected(job.size.to_string())
        .with_observed(read.to_string()));
    }
    Ok(sha)
}

/// The path of a blob below the store root.
pub fn blob_rel(sha: &str) -> String {
    format!("objects/blobs/{}/{sha}", sha.get(..2).unwrap_or("00"))
}

/// Stores one file's content as a blob unless present; `true` when it was new.
fn store_blob(
    store: &Dir,
    tmp_dir: &Dir,
    job: &FileJob,
    sha: &str,
    deadline: Instant,
) -> Result<bool> {
    let rel = blob_rel(sha);
    if store.exists(&rel)? {
        return Ok(false);
    }
    let fd = open_job(job)?;
    let tmp = fsx::temp_name();
    let out = rfs::openat(
        tmp_dir.fd(),
        tmp.as_str(),
        OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::from_raw_mode(0o600),
    )
    .map_err(|e| errno("create", &rel, e))?;
    let copied = hash_fd(&fd, &job.rel, deadline, Some(&out)).and_then(|(copy_sha, n)| {
        let after = rfs::fstat(&fd).map_err(|e| errno("stat", &job.rel, e))?;
        if copy_sha != sha || n != job.size || stat_key(&after) != job.before {
            return Err(changed(&job.rel, "its content differs between two reads"));
        }
        rfs::fchmod(&out, Mode::from_raw_mode(0o444)).map_err(|e| errno("chmod", &rel, e))?;
        rfs::fsync(&out).map_err(|e| errno("fsync", &rel, e))
    });
    let unlink_tmp = || {
        let _ = rfs::unlinkat(tmp_dir.fd(), tmp.as_str(), AtFlags::empty());
    };
    if let Err(e) = copied {
        unlink_tmp();
        return Err(e);
    }
    let (parent, name) = store.parent_of(&rel, true)?;
    let published = match rfs::renameat_with(
        tmp_dir.fd(),
        tmp.as_str(),
        parent.fd(),
        name,
        rfs::RenameFlags::NOREPLACE,
    ) {
        Err(rustix::io::Errno::INVAL | rustix::io::Errno::NOSYS | rustix::io::Errno::OPNOTSUPP) => {
            rfs::linkat(
                tmp_dir.fd(),
                tmp.as_str(),
                parent.fd(),
                name,
                AtFlags::empty(),
            )
        }
        other => other,
    };
    unlink_tmp();
    match published {
        // The blob folder is fsynced once per freeze, before the manifest that references it.
        Ok(()) => Ok(true),
        // Another writer published the same content first; it is re-verified on every read.
        Err(rustix::io::Errno::EXIST) => Ok(false),
        Err(e) => Err(errno("publish", &rel, e)),
    }
}

/// Freezes `source` (a file or a directory). With `store`, blobs and the manifest are published into the
/// store root; without, the tree is only hashed (driver `inputs`).
pub fn freeze(
    source: &Path,
    store: Option<&Dir>,
    exclude: &[String],
    limits: Limits,
) -> Result<Frozen> {
    let start = Instant::now();
    let deadline = start + Duration::from_secs_f64(limits.max_wall_s.clamp(0.0, 1e9));
    let excludes = Excludes::new(exclude)?;
    let resolved = std::fs::canonicalize(source).map_err(|e| Error::io(source, &e))?;
    let shown = resolved.display().to_string();
    let meta = std::fs::symlink_metadata(&resolved).map_err(|e| Error::io(&resolved, &e))?;
    let mut walk = Walk {
        excludes: &excludes,
        limits,
        deadline,
        entries: Vec::new(),
        jobs: Vec::new(),
        dirs: Vec::new(),
        total: 0,
        root_shown: shown.clone(),
    };
    let source_kind;
    if meta.is_dir() {
        source_kind = "directory";
        let fd = rfs::open(
            &resolved,
            OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::RDONLY,
            Mode::empty(),
        )
        .map_err(|e| errno("open", &shown, e))?;
        walk.dir(Arc::new(fd), "")?;
    } else if meta.is_file() {
        source_kind = "file";
        let name = resolved
            .file_name()
            .and_then(|n| n.to_str())
            .ok_or_else(|| {
                Error::input(
                    codes::OBJECT_NAME_INVALID,
                    format!("{shown}: name is not UTF-8"),
                )
            })?
            .to_string();
        let parent_path = resolved.parent().unwrap_or(Path::new("/"));
        let parent = rfs::open(
            parent_path,
            OFlags::DIRECTORY | OFlags::CLOEXEC | OFlags::RDONLY,
            Mode::empty(),
        )
        .map_err(|e| errno("open", &shown, e))?;
        let st = rfs::statat(&parent, name.as_str(), AtFlags::SYMLINK_NOFOLLOW)
            .map_err(|e| errno("stat", &shown, e))?;
        let size = st.st_size.max(0) as u64;
        if limits.max_files < 1 || size > limits.max_total_bytes {
            return Err(limit(
                "its limits",
                format!(
                    "{} files, {} bytes",
                    limits.max_files, limits.max_total_bytes
                ),
                format!("1 file, {size} bytes"),
                &name,
            ));
        }
        walk.total = size;
        walk.entries.push(Entry::File {
            path: name.clone(),
            mode: st.st_mode & 0o7777,
            size_bytes: size,
            sha256: String::new(),
        });
        walk.jobs.push(FileJob {
            index: 0,
            rel: name.clone(),
            parent: Arc::new(parent),
            name,
            before: stat_key(&st),
            size,
        });
    } else {
        return Err(Error::input(
            codes::OBJECT_SPECIAL_FILE,
            format!("{shown} is neither a file nor a directory"),
        )
        .with_path(shown));
    }

    let tmp_dir = match store {
        Some(s) => Some(s.ensure_dir("objects/tmp")?),
        None => None,
    };
    let hashed: Vec<(usize, String, bool)> = walk
        .jobs
        .par_iter()
        .map(|job| {
            let sha = hash_job(job, deadline)?;
            let new = match (store, &tmp_dir) {
                (Some(s), Some(t)) => store_blob(s, t, job, &sha, deadline)?,
                _ => false,
            };
            Ok((job.index, sha, new))
        })
        .collect::<Result<_>>()?;
    for check in &walk.dirs {
        let after = rfs::fstat(&*check.fd).map_err(|e| errno("stat", &check.rel, e))?;
        if dir_key(&after) != check.before || listing(&check.fd, &check.rel)? != check.listing {
            return Err(changed(&check.rel, "its listing or metadata changed"));
        }
    }
    let mut blobs_new = 0;
    if let Some(s) = store {
        let mut prefixes: Vec<&str> = hashed
            .iter()
            .filter(|(_, _, new)| *new)
            .filter_map(|(_, sha, _)| sha.get(..2))
            .collect();
        prefixes.sort_unstable();
        prefixes.dedup();
        for prefix in prefixes {
            fsx::fsync_dir(&s.open_dir(&format!("objects/blobs/{prefix}"))?)?;
        }
    }
    for (index, sha, new) in hashed {
        if let Some(Entry::File { sha256, .. }) = walk.entries.get_mut(index) {
            *sha256 = sha;
        }
        blobs_new += u64::from(new);
    }
    let file_count = walk.jobs.len() as u64;
    let manifest = Manifest {
        format: MANIFEST_FORMAT.to_string(),
        source_kind: source_kind.to_string(),
        exclude: exclude.to_vec(),
        entries: walk.entries,
        file_count,
        total_bytes: walk.total,
    };
    let canonical_text = manifest.canonical()?;
    let digest = fsx::sha256_hex(canonical_text.as_bytes());
    if let Some(s) = store {
        s.write_once(
            &format!("objects/trees/{digest}.json"),
            format!("{canonical_text}\n").as_bytes(),
        )?;
    }
    Ok(Frozen {
        digest,
        source_resolved: shown,
        source_kind: source_kind.to_string(),
        file_count,
        total_bytes: manifest.total_bytes,
        blobs_new,
        blobs_existing: file_count - blobs_new,
        manifest,
    })
}

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

/// What a materialization wrote.
#[derive(Debug, Clone, Serialize)]
pub struct Materialized {
    pub digest: String,
    pub destination: String,
    pub file_count: u64,
    pub total_bytes: u64,
    pub reflinked: u64,
}

fn corrupt_blob(sha: &str, why: &str) -> Error {
    Error::input(
        codes::OBJECT_CORRUPT,
        format!("blob {sha} is corrupt: {why}"),
    )
    .with_path(blob_rel(sha))
}

/// Reads blobs for a materialization: blob folders opened once, reflink tried until it proves unsupported.
struct Blobs<'a> {
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
            OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
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

fn remove_tmp(parent: &Dir, tmp: &str) {
    let path = parent.path().join(tmp);
    // Directory modes are restored last, so a failed tree is still writable; make sure anyway.
    let _ = make_writable(&path);
    let _ = std::fs::remove_dir_all(&path).or_else(|_| std::fs::remove_file(&path));
}

fn make_writable(path: &Path) -> std::io::Result<()> {
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

fn create_file(dir: &OwnedFd, name: &str, shown: &str) -> Result<OwnedFd> {
    rfs::openat(
        dir,
        name,
        OFlags::RDWR | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::from_raw_mode(0o600),
    )
    .map_err(|e| errno("create", shown, e))
}

fn materialize_file(
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

fn materialize_tree(
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

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
