//! The ranks of a job from nsys exports, for [`crate::ranks::compare`]: one rank per process that ran
//! kernels, in file order and then by process id (an export holds no rank metadata; the order is
//! stated in the output). Collectives are the process's NCCL/RCCL kernels; steps, the instances of a
//! named NVTX range on the process's threads.
//!
//! Clock: a process's times are on its host's clock. Exports that record their session start
//! (`TARGET_INFO_SESSION_START_TIME`: `utcEpochNs` at `systemClockNs`) are moved onto UTC so that
//! exports from several hosts compare; otherwise the file's own clock is used.

use super::db;
use super::ops::{self, OpKind};
use super::ranges;
use super::select::{Selection, PID_MASK};
use super::Report;
use crate::comm::is_communication;
use crate::error::Result;
use crate::intervals::Span;
use crate::ranks::{Collective, Rank};
use std::collections::BTreeMap;

/// `utcEpochNs − systemClockNs` of the session start, when the export records both (exports of
/// older nsys versions have the table without `systemClockNs`: their own clock is used).
pub fn utc_offset(report: &Report) -> Result<Option<i64>> {
    let schema = &report.schema;
    let table = "TARGET_INFO_SESSION_START_TIME";
    let recorded = schema
        .all_tables
        .get(table)
        .is_some_and(|columns| columns.contains("utcEpochNs") && columns.contains("systemClockNs"));
    if !recorded {
        return Ok(None);
    }
    let rows = db::query_all(
        &schema.uri,
        &schema.path,
        &format!("SELECT utcEpochNs, systemClockNs FROM \"{table}\" LIMIT 1"),
        |row| {
            Ok(db::opt_int(row, 0, table, "utcEpochNs")?.zip(db::opt_int(
                row,
                1,
                table,
                "systemClockNs",
            )?))
        },
    )?;
    Ok(rows
        .into_iter()
        .flatten()
        .next()
        .map(|(utc, sys)| utc - sys))
}

/// One rank per process with kernels (ascending pid); `shift` is added to every time.
pub fn ranks(report: &Report, label: &str, step: Option<&str>, shift: i64) -> Result<Vec<Rank>> {
    let (schema, strings) = (&report.schema, &report.strings);
    let kernels = ops::load(schema, strings, &Selection::default(), &[OpKind::Kernel])?;
    let mut by_pid: BTreeMap<i64, (Vec<Collective>, Vec<i64>)> = BTreeMap::new();
    for k in &kernels {
        let p = by_pid.entry(k.global_pid & PID_MASK).or_default();
        if !p.1.contains(&k.device) {
            p.1.push(k.device);
        }
        let name = strings.value(u32::try_from(k.name).unwrap_or(u32::MAX));
        if is_communication(name) {
            p.0.push(Collective {
                name: name.to_string(),
                start: k.start + shift,
                end: k.end + shift,
            });
        }
    }
    let mut steps: BTreeMap<i64, Vec<Span>> = BTreeMap::new();
    if let Some(step) = step {
        let data = ranges::load(schema, strings)?;
        for r in data.ranges.iter().filter(|r| data.matches(r, step)) {
            if let Some(end) = r.end() {
                steps
                    .entry(r.tid & PID_MASK)
                    .or_default()
                    .push(Span::new(r.start + shift, end + shift));
            }
        }
    }
    Ok(by_pid
        .into_iter()
        .map(|(pid, (collectives, mut devices))| {
            devices.sort_unstable();
            let shown: Vec<String> = devices.iter().map(i64::to_string).collect();
            Rank {
                rank: -1,
                label: format!(
                    "{label} pid {} (device {})",
                    (pid >> 24) & 0xFF_FFFF,
                    shown.join(",")
                ),
                collectives,
                steps: steps.remove(&pid).unwrap_or_default(),
            }
        })
        .collect())
}

/// The ranks of several exports (file order, then pid) compared; with the clock used (`utc` when
/// every export records its session start, else `file`: each export's own clock).
pub fn compare_files(
    paths: &[std::path::PathBuf],
    step: Option<&str>,
) -> Result<(crate::ranks::Tables, &'static str)> {
    use rayon::prelude::*;
    let reports = paths
        .par_iter()
        .map(|p| Report::open(p))
        .collect::<Result<Vec<_>>>()?;
    let offsets = reports.iter().map(utc_offset).collect::<Result<Vec<_>>>()?;
    let utc = offsets.iter().all(Option::is_some);
    let mut all = Vec::new();
    for (report, offset) in reports.iter().zip(offsets) {
        let shift = if utc { offset.unwrap_or(0) } else { 0 };
        let label = report.schema.path.display().to_string();
        all.extend(ranks(report, &label, step, shift)?);
    }
    for (i, r) in all.iter_mut().enumerate() {
        r.rank = i64::try_from(i).unwrap_or(i64::MAX);
    }
    let clock = if utc { "utc" } else { "file" };
    Ok((crate::ranks::compare(&all)?, clock))
}
