//! Freezing a source tree: the no-follow walk, the before/after checks, parallel hashing and blob dedupe.

use crate::error::{Error, Result};
use crate::identity::hex;

use crate::store::codes;
use crate::store::fsx::{self, errno, Dir};
use crate::store::glob::Excludes;
use rayon::prelude::*;
use rustix::fd::OwnedFd;
use rustix::fs::{self as rfs, AtFlags, FileType, Mode, OFlags};

use sha2::{Digest, Sha256};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::*;

pub(super) fn stat_key(st: &rfs::Stat) -> StatKey {
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

pub(super) struct FileJob {
    index: usize,
    rel: String,
    parent: Arc<OwnedFd>,
    name: String,
    before: StatKey,
    size: u64,
}

pub(super) struct DirCheck {
    rel: String,
    fd: Arc<OwnedFd>,
    before: (u64, u64, i64, i64),
    listing: Vec<String>,
}

pub(super) struct Walk<'a> {
    excludes: &'a Excludes,
    limits: Limits,
    deadline: Instant,
    entries: Vec<Entry>,
    jobs: Vec<FileJob>,
    dirs: Vec<DirCheck>,
    total: u64,
    root_shown: String,
}

pub(super) fn changed(rel: &str, what: &str) -> Error {
    Error::input(
        codes::OBJECT_CHANGED_DURING_READ,
        format!("{rel} changed while it was frozen ({what})"),
    )
    .with_path(rel.to_string())
}

pub(super) fn limit(what: &str, limit: String, observed: String, rel: &str) -> Error {
    Error::input(
        codes::OBJECT_LIMIT_EXCEEDED,
        format!("the tree exceeds {what} at {rel}"),
    )
    .with_path(rel.to_string())
    .with_expected(limit)
    .with_observed(observed)
}

pub(super) fn dir_key(st: &rfs::Stat) -> (u64, u64, i64, i64) {
    (st.st_dev, st.st_ino, st.st_mtime, st.st_mtime_nsec as i64)
}

pub(super) fn listing(fd: &OwnedFd, shown: &str) -> Result<Vec<String>> {
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
pub(super) fn hash_fd(
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

pub(super) fn open_job(job: &FileJob) -> Result<OwnedFd> {
    rfs::openat(
        &*job.parent,
        job.name.as_str(),
        // NONBLOCK: a file that became a FIFO since the walk fails the stat check, not the open.
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NONBLOCK,
        Mode::empty(),
    )
    .map_err(|e| errno("open", &job.rel, e))
}

/// Hashes one file, checking it did not change; returns its sha256.
pub(super) fn hash_job(job: &FileJob, deadline: Instant) -> Result<String> {
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
pub(super) fn store_blob(
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
