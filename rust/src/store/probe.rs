//! The storage probe: whether the file system under a folder gives every guarantee the store relies on.

use super::fsx::{errno, temp_name, Dir, TEMP_PREFIX};
use crate::error::Result;
use rustix::fs::{self as rfs, Mode, OFlags, RenameFlags};
use rustix::io::Errno;
use std::path::Path;

/// One check of the storage probe.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ProbeCheck {
    pub name: &'static str,
    pub ok: bool,
    pub detail: String,
}

/// Checks that the file system under `dir` supports what the store relies on: create-exclusive, no-replace
/// rename (files and folders), atomic replace, ordered append, non-blocking `flock` and folder fsync.
pub fn storage_probe(dir: &Path) -> Result<Vec<ProbeCheck>> {
    let parent = Dir::open(dir)?;
    let name = format!(
        ".gpuopt-probe-{}",
        temp_name().trim_start_matches(TEMP_PREFIX)
    );
    rfs::mkdirat(parent.fd(), name.as_str(), Mode::from_raw_mode(0o700))
        .map_err(|e| errno("mkdir", &dir.join(&name).display().to_string(), e))?;
    let work = parent.open_dir(&name)?;
    let mut checks = Vec::new();
    let mut check = |name: &'static str, outcome: std::result::Result<(), String>| {
        checks.push(ProbeCheck {
            name,
            ok: outcome.is_ok(),
            detail: outcome.err().unwrap_or_default(),
        });
    };
    let create = |n: &str| {
        rfs::openat(
            work.fd(),
            n,
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::from_raw_mode(0o600),
        )
    };
    check(
        "create_exclusive",
        match (create("a"), create("a")) {
            (Ok(_), Err(Errno::EXIST)) => Ok(()),
            (a, b) => Err(format!("first {:?}, second {:?}", a.err(), b.err())),
        },
    );
    let _ = create("b");
    check(
        "noreplace_rename",
        match rfs::renameat_with(work.fd(), "a", work.fd(), "b", RenameFlags::NOREPLACE) {
            Err(Errno::EXIST) => {
                rfs::renameat_with(work.fd(), "a", work.fd(), "c", RenameFlags::NOREPLACE)
                    .map_err(|e| format!("rename to a new name: {e}"))
            }
            Ok(()) => Err("renamed over an existing file".into()),
            Err(e) => Err(format!("renameat2(RENAME_NOREPLACE): {e}")),
        },
    );
    check(
        "atomic_replace",
        rfs::renameat(work.fd(), "c", work.fd(), "b").map_err(|e| format!("rename: {e}")),
    );
    let append = || -> std::result::Result<(), String> {
        let open = || {
            rfs::openat(
                work.fd(),
                "log",
                OFlags::WRONLY | OFlags::APPEND | OFlags::CREATE | OFlags::CLOEXEC,
                Mode::from_raw_mode(0o600),
            )
            .map_err(|e| e.to_string())
        };
        let (one, two) = (open()?, open()?);
        rustix::io::write(&one, b"1\n").map_err(|e| e.to_string())?;
        rustix::io::write(&two, b"2\n").map_err(|e| e.to_string())?;
        rustix::io::write(&one, b"3\n").map_err(|e| e.to_string())?;
        let back = work.read("log", 64).map_err(|e| e.message)?;
        if back == b"1\n2\n3\n" {
            Ok(())
        } else {
            Err(format!("read back {:?}", String::from_utf8_lossy(&back)))
        }
    };
    check("ordered_append", append());
    let lock = || -> std::result::Result<(), String> {
        let first = work.lock("lock", true, false).map_err(|e| e.message)?;
        let second = work.lock("lock", true, false).map_err(|e| e.message)?;
        match (first, second) {
            (Some(_), None) => Ok(()),
            _ => Err("a second exclusive flock was not refused".into()),
        }
    };
    check("nonblocking_flock", lock());
    check(
        "directory_fsync",
        rfs::fsync(work.fd()).map_err(|e| format!("fsync: {e}")),
    );
    let _ = std::fs::remove_dir_all(dir.join(&name));
    Ok(checks)
}
