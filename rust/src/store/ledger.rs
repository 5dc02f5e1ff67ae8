//! The append-only ledger `ledger/records.jsonl`: one canonical line per publication, so listings and gates
//! read one file instead of scanning folders. Appends hold an exclusive `flock` on the file, write with
//! `O_APPEND` and fsync; a torn last line (a crash mid-append) is ignored by readers and cut by the next writer.
//!
//! Every sequenced file (the ledger, an invocation's `events.jsonl`) is a hash chain: line `n > 1` carries
//! `prev_sha256`, the SHA-256 of line `n - 1`'s bytes (without its newline), so `store verify` finds an
//! edited, removed or duplicated line anywhere before the last one.

use super::canonical::{self, Json};
use super::codes;
use super::fsx::{self, errno, Dir};
use crate::error::{Error, Result};
use rustix::fd::OwnedFd;
use rustix::fs::{self as rfs, FlockOperation, Mode, OFlags};

pub const LEDGER_REL: &str = "ledger/records.jsonl";
/// The key of a line's link to the line before it.
pub const PREV_KEY: &str = "prev_sha256";

fn open(root: &Dir, rel: &str) -> Result<OwnedFd> {
    let (parent, name) = root.parent_of(rel, true)?;
    rfs::openat(
        parent.fd(),
        name,
        OFlags::RDWR | OFlags::APPEND | OFlags::CREATE | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::from_raw_mode(0o644),
    )
    .map_err(|e| errno("open", rel, e))
    .and_then(|fd| {
        let st = rfs::fstat(&fd).map_err(|e| errno("stat", rel, e))?;
        if rfs::FileType::from_raw_mode(st.st_mode) == rfs::FileType::RegularFile {
            Ok(fd)
        } else {
            Err(
                Error::input(codes::PATH_UNSAFE, format!("{rel} is not a regular file"))
                    .with_path(rel.to_string()),
            )
        }
    })
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

/// The last complete line: its `seq` and the SHA-256 of its bytes (`None` for an empty file).
struct Last {
    seq: u64,
    sha256: Option<String>,
}

/// Cuts a torn tail and returns the last complete line's `seq` and hash (0 and none for an empty ledger).
fn repair_and_last(fd: &OwnedFd, rel: &str) -> Result<Last> {
    let size = rfs::fstat(fd)
        .map_err(|e| errno("stat", rel, e))?
        .st_size
        .max(0) as u64;
    if size == 0 {
        return Ok(Last {
            seq: 0,
            sha256: None,
        });
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
                return Ok(Last {
                    seq: 0,
                    sha256: None,
                });
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
        let seq = parsed
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
            })?;
        return Ok(Last {
            seq,
            sha256: Some(fsx::sha256_hex(line)),
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
    let last = repair_and_last(&fd, rel)?;
    let seq = last.seq + 1;
    entry.set("seq", Json::Number(seq as f64));
    if let Some(prev) = last.sha256 {
        entry.set(PREV_KEY, Json::String(prev));
    }
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

/// Replaces the ledger with `lines` (used by `store reindex`, under the root's exclusive lock), chaining
/// them as appends do.
pub fn rewrite(root: &Dir, lines: &[Json]) -> Result<String> {
    let mut text = String::new();
    let mut prev: Option<String> = None;
    for line in lines {
        let mut line = line.clone();
        if let Some(sha) = prev {
            line.set(PREV_KEY, Json::String(sha));
        }
        let canonical = canonical::to_canonical(&line)?;
        prev = Some(fsx::sha256_hex(canonical.as_bytes()));
        text.push_str(&canonical);
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
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3);
        let second = lines.get(1).copied().unwrap();
        let prev = fsx::sha256_hex(second.as_bytes());
        assert_eq!(
            line,
            format!("{{\"id\":\"c\",\"prev_sha256\":\"{prev}\",\"seq\":3}}\n")
        );
        assert!(!lines.first().copied().unwrap().contains("prev_sha256"));
        let _ = std::fs::remove_dir_all(&base);
    }

    #[test]
    fn rewrite_chains_lines_as_appends_do() {
        let base = std::env::temp_dir().join(format!("gpuopt-ledger-rw-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        std::fs::create_dir_all(base.join("ledger")).unwrap();
        let root = Dir::open(&base).unwrap();
        let entry = |id: &str| Json::Object(vec![("id".into(), Json::String(id.into()))]);
        append(&root, entry("a")).unwrap();
        append(&root, entry("b")).unwrap();
        let appended = std::fs::read(base.join(LEDGER_REL)).unwrap();
        let lines = [
            Json::Object(vec![
                ("id".into(), Json::String("a".into())),
                ("seq".into(), Json::Number(1.0)),
            ]),
            Json::Object(vec![
                ("id".into(), Json::String("b".into())),
                ("seq".into(), Json::Number(2.0)),
            ]),
        ];
        rewrite(&root, &lines).unwrap();
        assert_eq!(std::fs::read(base.join(LEDGER_REL)).unwrap(), appended);
        let _ = std::fs::remove_dir_all(&base);
    }
}
