//! Bindings for process facts and cleanup used by the invocation supervisor.

use super::{json, run};
use crate::runtime;
use pyo3::prelude::*;

/// `proc_info(pid) -> bytes | None`: `{pid, ppid, pgid, sid, state, start_token}` from `/proc`.
#[pyfunction]
pub fn proc_info(pid: i32) -> PyResult<Option<Vec<u8>>> {
    runtime::read_proc(pid).map(|p| json(&p)).transpose()
}

/// `proc_alive(pid, start_token) -> bool`: alive, not a zombie, and started at that token.
#[pyfunction]
pub fn proc_alive(pid: i32, start_token: &str) -> bool {
    runtime::alive_with_token(pid, start_token)
}

/// `group_exists(pgid) -> bool`: any process, zombies included, is left in the group.
#[pyfunction]
pub fn group_exists(pgid: i32) -> bool {
    runtime::group_exists(pgid)
}

/// `set_child_subreaper()`: orphaned descendants re-parent to this process.
#[pyfunction]
pub fn set_child_subreaper(py: Python<'_>) -> PyResult<()> {
    run(py, runtime::set_child_subreaper)
}

/// `reap_zombies(keep) -> list[tuple[int, int]]`: `(pid, returncode)` of zombie children reaped.
#[pyfunction]
pub fn reap_zombies(py: Python<'_>, keep: Vec<i32>) -> PyResult<Vec<(i32, i32)>> {
    run(py, || Ok(runtime::reap_zombies(&keep)))
}

fn scope<'a>(
    pgid: i32,
    reaper: Option<i32>,
    exclude: &'a [i32],
    tag: Option<&'a str>,
) -> runtime::CallScope<'a> {
    runtime::CallScope {
        pgid,
        reaper,
        exclude,
        tag,
    }
}

/// `call_processes(pgid, reaper, exclude, tag) -> bytes`: members of the group, descendants of `reaper`,
/// and processes whose environment holds the entry `tag` (`KEY=VALUE`).
#[pyfunction]
#[pyo3(signature = (pgid, reaper, exclude, tag))]
pub fn call_processes(
    py: Python<'_>,
    pgid: i32,
    reaper: Option<i32>,
    exclude: Vec<i32>,
    tag: Option<String>,
) -> PyResult<Vec<u8>> {
    let procs = run(py, || {
        Ok(runtime::call_processes(&scope(
            pgid,
            reaper,
            &exclude,
            tag.as_deref(),
        )))
    })?;
    json(&procs)
}

/// `settle(pgid, reaper, exclude, tag, settle_s) -> bytes`: `{left, reaped}` after waiting for a clean exit.
#[pyfunction]
#[pyo3(signature = (pgid, reaper, exclude, tag, settle_s))]
pub fn settle(
    py: Python<'_>,
    pgid: i32,
    reaper: Option<i32>,
    exclude: Vec<i32>,
    tag: Option<String>,
    settle_s: f64,
) -> PyResult<Vec<u8>> {
    let (left, reaped) = run(py, || {
        Ok(runtime::settle(
            &scope(pgid, reaper, &exclude, tag.as_deref()),
            settle_s,
        ))
    })?;
    json(&serde_json::json!({"left": left, "reaped": reaped}))
}

/// `terminate(pgid, reaper, exclude, tag, grace_s, timeout_s) -> bytes`: SIGTERM, grace, SIGKILL, verify.
#[pyfunction]
#[pyo3(signature = (pgid, reaper, exclude, tag, grace_s, timeout_s))]
pub fn terminate(
    py: Python<'_>,
    pgid: i32,
    reaper: Option<i32>,
    exclude: Vec<i32>,
    tag: Option<String>,
    grace_s: f64,
    timeout_s: f64,
) -> PyResult<Vec<u8>> {
    let report = run(py, || {
        Ok(runtime::terminate(
            &scope(pgid, reaper, &exclude, tag.as_deref()),
            grace_s,
            timeout_s,
        ))
    })?;
    json(&report)
}
