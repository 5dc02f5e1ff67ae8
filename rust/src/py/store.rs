//! Bindings for the artifact store: canonical JSON, trees, create-once records, CAS, ledger, probe.

use super::{json, run};
use crate::store::{canonical, fsx::Dir, ids, ledger, records, tree};
use pyo3::prelude::*;
use std::path::PathBuf;

/// `canonical_json(data) -> bytes`: strict parse, then RFC 8785 canonical bytes (no trailing newline).
#[pyfunction]
pub fn canonical_json(py: Python<'_>, data: Vec<u8>) -> PyResult<Vec<u8>> {
    run(py, || {
        canonical::canonicalize(&data).map(String::into_bytes)
    })
}

/// `validate_id(kind, id)`: raises `path_unsafe` unless `id` has the exact shape of its kind.
#[pyfunction]
pub fn validate_id(kind: &str, id: &str) -> PyResult<()> {
    let k = ids::IdKind::parse(kind).ok_or_else(|| {
        super::boundary::to_pyerr(crate::error::Error::internal(
            "id_kind_unknown",
            format!("no id kind {kind:?}"),
        ))
    })?;
    ids::validate(k, id).map_err(super::boundary::to_pyerr)
}

/// `store_freeze(source, store_root, exclude, max_files, max_total_bytes, max_wall_s) -> bytes`.
#[pyfunction]
#[pyo3(signature = (source, store_root, exclude, max_files, max_total_bytes, max_wall_s))]
pub fn store_freeze(
    py: Python<'_>,
    source: PathBuf,
    store_root: Option<PathBuf>,
    exclude: Vec<String>,
    max_files: u64,
    max_total_bytes: u64,
    max_wall_s: f64,
) -> PyResult<Vec<u8>> {
    let frozen = run(py, || {
        let store = store_root.as_deref().map(Dir::open).transpose()?;
        let limits = tree::Limits {
            max_files,
            max_total_bytes,
            max_wall_s,
        };
        tree::freeze(&source, store.as_ref(), &exclude, limits)
    })?;
    json(&frozen)
}

/// `store_materialize(store_root, digest, destination) -> bytes`.
#[pyfunction]
pub fn store_materialize(
    py: Python<'_>,
    store_root: PathBuf,
    digest: String,
    destination: PathBuf,
) -> PyResult<Vec<u8>> {
    let done = run(py, || {
        tree::materialize(&Dir::open(&store_root)?, &digest, &destination)
    })?;
    json(&done)
}

/// `store_manifest(store_root, digest) -> bytes`: the verified manifest as JSON.
#[pyfunction]
pub fn store_manifest(py: Python<'_>, store_root: PathBuf, digest: String) -> PyResult<Vec<u8>> {
    let manifest = run(py, || {
        tree::read_manifest(&Dir::open(&store_root)?, &digest)
    })?;
    json(&manifest)
}

/// `store_verify_objects(store_root, referenced, deep) -> bytes`: the objects report (read only).
#[pyfunction]
pub fn store_verify_objects(
    py: Python<'_>,
    store_root: PathBuf,
    referenced: Vec<String>,
    deep: bool,
) -> PyResult<Vec<u8>> {
    let report = run(py, || {
        tree::verify_objects(&Dir::open(&store_root)?, &referenced, deep)
    })?;
    json(&report)
}

/// `store_write_once(root, rel, data) -> bytes`: `{sha256, created, mtime_ns}`.
#[pyfunction]
pub fn store_write_once(
    py: Python<'_>,
    root: PathBuf,
    rel: String,
    data: Vec<u8>,
) -> PyResult<Vec<u8>> {
    let outcome = run(py, || Dir::open(&root)?.write_once(&rel, &data))?;
    json(&outcome)
}

/// `store_replace(root, rel, data, mode, durable=True) -> bytes`: atomic replace, `{sha256, created,
/// mtime_ns}`; without `durable` nothing is fsynced (state that dies with the machine).
#[pyfunction]
#[pyo3(signature = (root, rel, data, mode, durable = true))]
pub fn store_replace(
    py: Python<'_>,
    root: PathBuf,
    rel: String,
    data: Vec<u8>,
    mode: u32,
    durable: bool,
) -> PyResult<Vec<u8>> {
    let outcome = run(py, || {
        Dir::open(&root)?.replace_with(&rel, &data, mode, durable)
    })?;
    json(&outcome)
}

/// `store_read(root, rel, max_bytes) -> bytes`: a regular file below `root`, following no link.
#[pyfunction]
pub fn store_read(py: Python<'_>, root: PathBuf, rel: String, max_bytes: u64) -> PyResult<Vec<u8>> {
    run(py, || Dir::open(&root)?.read(&rel, max_bytes))
}

/// `store_exists(root, rel) -> bool`.
#[pyfunction]
pub fn store_exists(py: Python<'_>, root: PathBuf, rel: String) -> PyResult<bool> {
    run(py, || Dir::open(&root)?.exists(&rel))
}

/// `store_remove(root, rel, durable=True) -> bool`: removes a file below `root`; `False` if it was absent.
#[pyfunction]
#[pyo3(signature = (root, rel, durable = true))]
pub fn store_remove(py: Python<'_>, root: PathBuf, rel: String, durable: bool) -> PyResult<bool> {
    run(py, || Dir::open(&root)?.remove_file_with(&rel, durable))
}

/// `store_ensure_dir(root, rel)`: creates folders below `root`, following no link.
#[pyfunction]
pub fn store_ensure_dir(py: Python<'_>, root: PathBuf, rel: String) -> PyResult<()> {
    run(py, || Dir::open(&root)?.ensure_dir(&rel).map(|_| ()))
}

/// `store_lock_fd(root, rel) -> int`: opens (creating) a lock file below `root`; the caller flocks and closes.
#[pyfunction]
pub fn store_lock_fd(py: Python<'_>, root: PathBuf, rel: String) -> PyResult<i32> {
    use std::os::fd::IntoRawFd;
    let fd = run(py, || {
        let dir = Dir::open(&root)?;
        let (parent, name) = dir.parent_of(&rel, true)?;
        rustix::fs::openat(
            parent.fd(),
            name,
            rustix::fs::OFlags::RDWR
                | rustix::fs::OFlags::CREATE
                | rustix::fs::OFlags::NOFOLLOW
                | rustix::fs::OFlags::CLOEXEC,
            rustix::fs::Mode::from_raw_mode(0o666),
        )
        .map_err(|e| crate::store::fsx::errno("open lock", &rel, e))
    })?;
    Ok(fd.into_raw_fd())
}

/// `store_cas(root, rel, lock_rel, expected, replacement, creates) -> bytes`.
#[pyfunction]
#[pyo3(signature = (root, rel, lock_rel, expected, replacement, creates))]
pub fn store_cas(
    py: Python<'_>,
    root: PathBuf,
    rel: String,
    lock_rel: String,
    expected: Option<String>,
    replacement: Option<Vec<u8>>,
    creates: Vec<(String, Vec<u8>)>,
) -> PyResult<Vec<u8>> {
    let outcome = run(py, || {
        records::compare_and_swap(
            &Dir::open(&root)?,
            &rel,
            &lock_rel,
            expected.as_deref(),
            replacement.as_deref(),
            &creates,
        )
    })?;
    json(&outcome)
}

/// `ledger_append(root, rel, entry, sync=True) -> bytes`: appends a JSON object (given without `seq`) to a
/// sequenced JSON-lines file (`ledger/records.jsonl`, an invocation's `events.jsonl`); returns the line.
#[pyfunction]
#[pyo3(signature = (root, rel, entry, sync = true))]
pub fn ledger_append(
    py: Python<'_>,
    root: PathBuf,
    rel: String,
    entry: Vec<u8>,
    sync: bool,
) -> PyResult<Vec<u8>> {
    run(py, || {
        let value = canonical::parse_strict(&entry)?;
        ledger::append_with(&Dir::open(&root)?, &rel, value, sync)
            .map(|(_, line)| line.into_bytes())
    })
}

/// `ledger_rewrite(root, lines) -> str`: replaces the ledger with these JSON lines; returns its sha256.
#[pyfunction]
pub fn ledger_rewrite(py: Python<'_>, root: PathBuf, lines: Vec<Vec<u8>>) -> PyResult<String> {
    run(py, || {
        let parsed = lines
            .iter()
            .map(|l| canonical::parse_strict(l))
            .collect::<crate::error::Result<Vec<_>>>()?;
        ledger::rewrite(&Dir::open(&root)?, &parsed)
    })
}

/// `rename_noreplace(source, destination)`: renames a file or folder unless the destination exists.
#[pyfunction]
pub fn rename_noreplace(py: Python<'_>, source: PathBuf, destination: PathBuf) -> PyResult<()> {
    run(py, || {
        let name = |p: &PathBuf| {
            p.file_name()
                .and_then(|n| n.to_str())
                .map(str::to_string)
                .ok_or_else(|| {
                    crate::error::Error::input(
                        crate::store::codes::PATH_UNSAFE,
                        format!("{} has no final name", p.display()),
                    )
                })
        };
        let parent = |p: &PathBuf| Dir::open(p.parent().unwrap_or(std::path::Path::new(".")));
        let (from, to) = (parent(&source)?, parent(&destination)?);
        let (from_name, to_name) = (name(&source)?, name(&destination)?);
        match crate::store::fsx::rename_noreplace(&from, &from_name, &to, &to_name) {
            Ok(()) => crate::store::fsx::fsync_dir(&to),
            Err(rustix::io::Errno::EXIST | rustix::io::Errno::NOTEMPTY) => {
                Err(crate::error::Error::input(
                    crate::store::codes::ROOT_EXISTS,
                    format!("{} already exists", destination.display()),
                )
                .with_path(destination.display().to_string()))
            }
            Err(e) => Err(crate::store::fsx::errno(
                "rename",
                &destination.display().to_string(),
                e,
            )),
        }
    })
}

/// `storage_probe(directory) -> bytes`: `[{name, ok, detail}]` for each storage guarantee the store needs.
#[pyfunction]
pub fn storage_probe(py: Python<'_>, directory: PathBuf) -> PyResult<Vec<u8>> {
    let checks = run(py, || crate::store::probe::storage_probe(&directory))?;
    json(&checks)
}
