//! Process facts and process-group cleanup for supervised driver calls (Linux `/proc`, signals, `waitpid`).
//!
//! A supervisor marks itself a child subreaper, so descendants that escape their group with `setsid` or by
//! daemonizing re-parent to it and stay findable. [`terminate`] signals the call's group and every such
//! descendant (SIGTERM, grace, SIGKILL), reaps what dies, and confirms only when `kill(-pgid, 0)` fails with
//! `ESRCH` and no descendant of the supervisor remains. Every driver call also carries a unique environment
//! entry (its request path); processes still carrying it are found even after their supervisor died and
//! its subreaper role with it, which is how `gpuopt cancel` and the next GPU-lock holder reach escaped
//! descendants of an orphaned call (a process that clears its environment escapes this net).

pub mod procs;

pub use procs::{descendants, environ_has, read_proc, scan, start_token, ProcInfo};

use crate::error::{Error, Result};
use rustix::io::Errno;
use rustix::process::{self as rproc, Pid, Signal, WaitOptions};
use serde::Serialize;
use std::collections::BTreeSet;
use std::time::{Duration, Instant};

pub mod codes {
    pub const PROCESS_CONTROL_FAILED: &str = "process_control_failed";
}

/// Makes this process the reaper of its orphaned descendants (`PR_SET_CHILD_SUBREAPER`).
pub fn set_child_subreaper() -> Result<()> {
    rproc::set_child_subreaper(Some(rproc::getpid())).map_err(|e| {
        Error::internal(
            codes::PROCESS_CONTROL_FAILED,
            format!("PR_SET_CHILD_SUBREAPER failed: {e}"),
        )
    })
}

/// Whether any process (zombies included) is still in group `pgid`.
pub fn group_exists(pgid: i32) -> bool {
    match Pid::from_raw(pgid) {
        Some(p) => !matches!(rproc::test_kill_process_group(p), Err(Errno::SRCH)),
        None => false,
    }
}

/// Whether `pid` is alive with the same start token (defeats pid reuse). Zombies count as gone.
pub fn alive_with_token(pid: i32, token: &str) -> bool {
    read_proc(pid).is_some_and(|p| p.state != 'Z' && p.start_token.to_string() == token)
}

/// A return code as Python shows it: the exit status, or minus the terminating signal.
fn returncode(status: rproc::WaitStatus) -> i32 {
    status
        .exit_status()
        .or_else(|| status.terminating_signal().map(|s| -s))
        .unwrap_or(-1)
}

/// Reaps this process's zombie children (except `keep`), returning `(pid, returncode)` per child reaped.
pub fn reap_zombies(keep: &[i32]) -> Vec<(i32, i32)> {
    let me = rproc::getpid().as_raw_nonzero().get();
    let mut out = Vec::new();
    for p in scan() {
        if p.ppid != me || p.state != 'Z' || keep.contains(&p.pid) {
            continue;
        }
        if let Some(pid) = Pid::from_raw(p.pid) {
            if let Ok(Some((_, status))) = rproc::waitpid(Some(pid), WaitOptions::NOHANG) {
                out.push((p.pid, returncode(status)));
            }
        }
    }
    out
}

/// How a call's processes are found: its group, descendants of a reaper, and an environment tag.
#[derive(Debug, Clone, Default)]
pub struct CallScope<'a> {
    pub pgid: i32,
    pub reaper: Option<i32>,
    pub exclude: &'a [i32],
    pub tag: Option<&'a str>,
}

/// The processes a call still has: members of its group, descendants of `reaper`, and processes carrying
/// the call's environment tag (never `exclude` nor this process).
pub fn call_processes(scope: &CallScope<'_>) -> Vec<ProcInfo> {
    let (pgid, reaper, exclude) = (scope.pgid, scope.reaper, scope.exclude);
    let me = rproc::getpid().as_raw_nonzero().get();
    let all = scan();
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for p in all.iter().filter(|p| p.pgid == pgid) {
        if !exclude.contains(&p.pid) && seen.insert(p.pid) {
            out.push(p.clone());
        }
    }
    if let Some(r) = reaper {
        for p in descendants(&all, r) {
            if !exclude.contains(&p.pid) && seen.insert(p.pid) {
                out.push(p);
            }
        }
    }
    if let Some(tag) = scope.tag {
        for p in &all {
            if p.pid != me
                && !exclude.contains(&p.pid)
                && !seen.contains(&p.pid)
                && environ_has(p.pid, tag)
            {
                seen.insert(p.pid);
                out.push(p.clone());
            }
        }
    }
    out
}

/// What a termination did.
#[derive(Debug, Clone, Serialize)]
pub struct Termination {
    /// `true` when the group is gone and no descendant remains.
    pub confirmed: bool,
    /// Signals sent, in order: `SIGTERM`, `SIGKILL`.
    pub signals: Vec<String>,
    /// Distinct processes seen while terminating (group members and escaped descendants).
    pub processes_seen: Vec<i32>,
    /// Of those, the ones outside the call's group (escaped with `setsid` or re-parented).
    pub escaped: Vec<i32>,
    /// Processes still present when the cleanup deadline passed.
    pub survivors: Vec<i32>,
    /// `(pid, returncode)` of children reaped here.
    pub reaped: Vec<(i32, i32)>,
    pub elapsed_s: f64,
}

fn signal_all(pgid: i32, procs: &[ProcInfo], sig: Signal) {
    if let Some(g) = Pid::from_raw(pgid) {
        let _ = rproc::kill_process_group(g, sig);
    }
    for p in procs {
        if let Some(pid) = Pid::from_raw(p.pid) {
            let _ = rproc::kill_process(pid, sig);
        }
    }
}

/// The call's processes that still live: zombies are dead (their parent reaps them; this process does when
/// it is the subreaper), so only running or stopped processes count.
fn living(scope: &CallScope<'_>) -> Vec<ProcInfo> {
    call_processes(scope)
        .into_iter()
        .filter(|p| p.state != 'Z')
        .collect()
}

/// Nothing of the call lives: no running or stopped member of its group, no living escaped descendant or
/// tagged process (`kill(-pgid, 0)` may still see zombies until their parent reaps them).
fn gone(scope: &CallScope<'_>) -> bool {
    living(scope).is_empty()
}

/// Reaps zombie children only when this process is the call's reaper: a library caller's own children are
/// never waited for here (that would steal their exit status).
fn reap_if_reaper(scope: &CallScope<'_>) -> Vec<(i32, i32)> {
    if scope.reaper.is_some() {
        reap_zombies(scope.exclude)
    } else {
        Vec::new()
    }
}

/// Waits up to `settle_s` for a call whose driver exited to leave nothing behind, reaping as it goes.
/// Returns the processes still there (empty when clean) and the children reaped.
pub fn settle(scope: &CallScope<'_>, settle_s: f64) -> (Vec<ProcInfo>, Vec<(i32, i32)>) {
    let deadline = Instant::now() + Duration::from_secs_f64(settle_s.max(0.0));
    let mut reaped = Vec::new();
    loop {
        reaped.extend(reap_if_reaper(scope));
        if gone(scope) {
            return (Vec::new(), reaped);
        }
        if Instant::now() >= deadline {
            return (living(scope), reaped);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// SIGTERM to the group and escaped descendants, `grace_s`, SIGKILL, then poll every 20 ms until nothing is
/// left or `timeout_s` (from the start) passes.
pub fn terminate(scope: &CallScope<'_>, grace_s: f64, timeout_s: f64) -> Termination {
    let pgid = scope.pgid;
    let start = Instant::now();
    let deadline = start + Duration::from_secs_f64(timeout_s.max(0.0));
    let grace_end = start + Duration::from_secs_f64(grace_s.clamp(0.0, timeout_s.max(0.0)));
    let mut seen: BTreeSet<i32> = BTreeSet::new();
    let mut escaped: BTreeSet<i32> = BTreeSet::new();
    let mut reaped = Vec::new();
    let mut signals = Vec::new();
    let mut note = |procs: &[ProcInfo], seen: &mut BTreeSet<i32>| {
        for p in procs {
            seen.insert(p.pid);
            if p.pgid != pgid {
                escaped.insert(p.pid);
            }
        }
    };
    let procs = call_processes(scope);
    note(&procs, &mut seen);
    signal_all(pgid, &procs, Signal::TERM);
    signals.push("SIGTERM".to_string());
    let mut killed = false;
    loop {
        reaped.extend(reap_if_reaper(scope));
        if gone(scope) {
            break;
        }
        let now = Instant::now();
        if !killed && now >= grace_end {
            let procs = call_processes(scope);
            note(&procs, &mut seen);
            signal_all(pgid, &procs, Signal::KILL);
            signals.push("SIGKILL".to_string());
            killed = true;
        } else if killed {
            // Processes forked after the first SIGKILL (a parent racing the signal) get one too.
            let procs = call_processes(scope);
            note(&procs, &mut seen);
            signal_all(pgid, &procs, Signal::KILL);
        }
        if now >= deadline {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    reaped.extend(reap_if_reaper(scope));
    let confirmed = gone(scope);
    let survivors: Vec<i32> = living(scope).iter().map(|p| p.pid).collect();
    Termination {
        confirmed,
        signals,
        processes_seen: seen.into_iter().collect(),
        escaped: escaped.into_iter().collect(),
        survivors,
        reaped,
        elapsed_s: start.elapsed().as_secs_f64(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_process_is_visible_with_a_token() {
        let me = std::process::id() as i32;
        let info = read_proc(me).unwrap();
        assert_eq!(info.pid, me);
        assert!(alive_with_token(me, &info.start_token.to_string()));
        assert!(!alive_with_token(me, "1"));
        assert!(group_exists(info.pgid));
    }
}
