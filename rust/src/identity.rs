//! File identity: size and SHA-256 of the bytes, the provenance every fact is bound to.

use crate::error::{codes, Error, Result};
use serde::Serialize;
use sha2::{Digest, Sha256};
use std::io::Read;
use std::path::Path;

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FileIdentity {
    pub path: String,
    pub size_bytes: u64,
    pub sha256: String,
}

const CHUNK_BYTES: usize = 1 << 20;

fn not_a_file(path: &Path) -> Error {
    let shown = path.display().to_string();
    Error::input(codes::NOT_A_FILE, format!("{shown} is not a regular file"))
        .with_path(shown)
        .with_expected("a regular file")
}

/// Opens `path` for reading when it is a regular file. A FIFO, a device or a folder answers
/// `not_a_file` at once: opening a FIFO blocks until a writer comes, and `/dev/zero` never ends.
pub fn open_regular(path: &Path) -> Result<std::fs::File> {
    let meta = std::fs::metadata(path).map_err(|e| Error::io(path, &e))?;
    if !meta.is_file() {
        return Err(not_a_file(path));
    }
    std::fs::File::open(path).map_err(|e| Error::io(path, &e))
}

/// The bytes of the regular file at `path` (see [`open_regular`]).
pub fn read_regular(path: &Path) -> Result<Vec<u8>> {
    let mut file = open_regular(path)?;
    let mut out = Vec::new();
    file.read_to_end(&mut out)
        .map_err(|e| Error::io(path, &e))?;
    Ok(out)
}

/// Hashes `path`, refusing anything but a regular file and detecting a file that changes while read.
pub fn file_identity(path: &Path) -> Result<FileIdentity> {
    let shown = path.display().to_string();
    let before = std::fs::metadata(path).map_err(|e| Error::io(path, &e))?;
    if !before.is_file() {
        return Err(
            Error::input(codes::NOT_A_FILE, format!("{shown} is not a regular file"))
                .with_path(shown),
        );
    }
    let mut file = std::fs::File::open(path).map_err(|e| Error::io(path, &e))?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; CHUNK_BYTES];
    let mut total: u64 = 0;
    loop {
        let n = file.read(&mut buf).map_err(|e| Error::io(path, &e))?;
        if n == 0 {
            break;
        }
        hasher.update(buf.get(..n).unwrap_or_default());
        total += n as u64;
    }
    let after = std::fs::metadata(path).map_err(|e| Error::io(path, &e))?;
    if total != before.len()
        || after.len() != before.len()
        || after.modified().ok() != before.modified().ok()
    {
        return Err(Error::input(
            codes::FILE_CHANGED_DURING_READ,
            format!("{shown} changed while it was being hashed"),
        )
        .with_path(shown)
        .with_expected(format!("{} bytes", before.len()))
        .with_observed(format!("{total} bytes read, {} bytes now", after.len())));
    }
    Ok(FileIdentity {
        path: shown,
        size_bytes: total,
        sha256: hex(&hasher.finalize()),
    })
}

/// Identities of many files, hashed in parallel; the first failure (in input order) is the error.
pub fn file_identities(paths: &[std::path::PathBuf]) -> Result<Vec<FileIdentity>> {
    use rayon::prelude::*;
    paths.par_iter().map(|p| file_identity(p)).collect()
}

/// The identities as a table: `path`, `size_bytes`, `sha256`.
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
            "sha256",
            Arc::new(StringArray::from_iter_values(
                identities.iter().map(|i| &i.sha256),
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
            id.map(|i| (i.size_bytes, i.sha256)),
            Ok((
                3,
                "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad".to_string()
            ))
        );
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
