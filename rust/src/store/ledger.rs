//! The append-only ledger `ledger/records.jsonl`: one canonical line per publication, so listings and gates
//! read one file instead of scanning folders. Appends hold an exclusive `flock` on the file, write with
//! `O_APPEND` and fsync; a torn last line (a crash mid-append) is ignored by readers and cut by the next writer.

use super::canonical::{self, Json};
use super::codes;
use super::fsx::{errno, Dir};
use crate::error::{Error, Result};
use rustix::fd::OwnedFd;
use rustix::fs::{self as rfs, FlockOperation, Mode, OFlags};

pub const LEDGER_REL: &str = "ledger/records.jsonl";

fn open(root: &Dir, rel: &str) -> Result<OwnedFd> {
    let (parent, name) = root.parent_of(rel, true)?;
    rfs::openat(
        parent.fd(),
        name,
        OFlags::RDWR | OFlags::APPEND | OFlags::CREATE | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::from_raw_mode(0o644),
    )
    .map_err(|e| errno("open", rel, e))
}

fn pread_exact(fd: &OwnedFd, offset: u64, len: usize, rel: &str) -> Result<Vec<u8>> {
    let mut buf = vec![0u8; len];
    let mut done = 0;
    while done < len {
        let slice = buf.get_mut(done..).unwrap_or_default();
        let n = rustix::io::pread(fd, slice, offset + done as u64)
            .map_err(|e| errno("read", rel, e))?;
        if n == 0 {
            break;
        }
        done += n;
    }
    buf.truncate(done);
    Ok(buf)
}

/// Cuts a torn tail and returns the last complete line's `seq` (0 for an empty ledger).
fn repair_and_last_seq(fd: &OwnedFd, rel: &str) -> Result<u64> {
    let size = rfs::fstat(fd)
        .map_err(|e| errno("stat", rel, e))?
        .st_size
        .max(0) as u64;
    if size == 0 {
        return Ok(0);
    }
    let mut window: u64 = 1 << 16;
    loop {
        let start = size.saturating_sub(window);
        let tail = pread_exact(fd, start, (size - start) as usize, rel)?;
        let last_nl = tail.iter().rposition(|b| *b == b'\n');
        let end = match last_nl {
            Some(i) => i,
            None if start == 0 => {
                // No complete line at all: the whole file is one torn line.
                rfs::ftruncate(fd, 0).map_err(|e| errno("truncate", rel, e))?;
                return Ok(0);
            }
            None => {
                window *= 2;
                continue;
            }
        };
        if end as u64 + 1 != tail.len() as u64 {
            rfs::ftruncate(fd, start + end as u64 + 1).map_err(|e| errno("truncate", rel, e))?;
            rfs::fsync(fd).map_err(|e| errno("fsync", rel, e))?;
        }
        let head = tail.get(..end).unwrap_or_default();
        let line_start = match head.iter().rposition(|b| *b == b'\n') {
            Some(i) => i + 1,
            None if start == 0 => 0,
            None => {
                window *= 2;
                continue;
            }
        };
        let line = head.get(line_start..).unwrap_or_default();
        let parsed = canonical::parse_strict(line).map_err(|e| {
            Error::input(
                codes::LEDGER_CORRUPT,
                format!("the last line of {rel} is not valid JSON: {}", e.message),
            )
            .with_path(rel)
        })?;
        return parsed
            .get("seq")
            .and_then(Json::as_f64)
            .filter(|s| *s >= 1.0 && s.fract() == 0.0)
            .map(|s| s as u64)
            .ok_or_else(|| {
                Error::input(
                    codes::LEDGER_CORRUPT,
                    format!("the last line of {rel} has no seq"),
                )
                .with_path(rel)
            });
    }
}

/// Appends `entry` (an object without `seq`) to the ledger and returns the line written, with its `seq`.
pub fn append(root: &Dir, entry: Json) -> Result<(u64, String)> {
    append_at(root, LEDGER_REL, entry)
}

/// Appends `entry` to any sequenced JSON-lines file below `root` (the ledger, an invocation's events).
pub fn append_at(root: &Dir, rel: &str, entry: Json) -> Result<(u64, String)> {
    append_with(root, rel, entry, true)
}

/// Appends `entry`; with `sync` false the line is written (ordered, under the lock) but not fsynced, for
/// lines whose loss in a power cut loses nothing a record depends on (heartbeats, progress events).
pub fn append_with(root: &Dir, rel: &str, mut entry: Json, sync: bool) -> Result<(u64, String)> {
    if !matches!(entry, Json::Object(_)) {
        return Err(Error::input(
            codes::RECORD_INVALID,
            "a ledger entry must be a JSON object",
        ));
    }
    let fd = open(root, rel)?;
    rfs::flock(&fd, FlockOperation::LockExclusive).map_err(|e| errno("flock", rel, e))?;
    let seq = repair_and_last_seq(&fd, rel)? + 1;
    entry.set("seq", Json::Number(seq as f64));
    let line = canonical::to_canonical(&entry)? + "\n";
    let mut rest = line.as_bytes();
    while !rest.is_empty() {
        let n = rustix::io::write(&fd, rest).map_err(|e| errno("append", rel, e))?;
        rest = rest.get(n..).unwrap_or_default();
    }
    if sync {
        rfs::fsync(&fd).map_err(|e| errno("fsync", rel, e))?;
    }
    Ok((seq, line))
}

/// Replaces the ledger with `lines` (used by `store reindex`, under the root's exclusive lock).
pub fn rewrite(root: &Dir, lines: &[Json]) -> Result<String> {
    let mut text = String::new();
    for line in lines {
        text.push_str(&canonical::to_canonical(line)?);
        text.push('\n');
    }
    Ok(root.replace(LEDGER_REL, text.as_bytes(), 0o644)?.sha256)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn append_numbers_lines_and_cuts_a_torn_tail() {
        let base = std::env::temp_dir().join(format!("gpuopt-ledger-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        std::fs::create_dir_all(&base).unwrap();
        let root = Dir::open(&base).unwrap();
        let entry = |id: &str| Json::Object(vec![("id".into(), Json::String(id.into()))]);
        assert_eq!(append(&root, entry("a")).unwrap().0, 1);
        assert_eq!(append(&root, entry("b")).unwrap().0, 2);
        let path = base.join(LEDGER_REL);
        let mut bytes = std::fs::read(&path).unwrap();
        bytes.extend_from_slice(b"{\"id\":\"tor");
        std::fs::write(&path, &bytes).unwrap();
        let (seq, line) = append(&root, entry("c")).unwrap();
        assert_eq!(seq, 3);
        assert_eq!(line, "{\"id\":\"c\",\"seq\":3}\n");
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text.lines().count(), 3);
        let _ = std::fs::remove_dir_all(&base);
    }
}
