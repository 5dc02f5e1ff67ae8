//! Kernel facts: `cuda_gpu_kern_sum` (the hot path: one parallel scan of three columns) and
//! `cuda_kern_exec_sum` (kernels joined to their launch calls).

use super::api::strip_version;
use super::describe::{Durations, Summary};
use super::fields;
use super::ops::{self, OpKind};
use super::out::Columns;
use super::scan;
use super::schema::{Schema, KERNEL};
use super::select::Selection;
use super::strings::Strings;
use super::summary::{self, Groups};
use crate::error::Result;
use crate::table::Table;
use rayon::prelude::*;
use std::collections::BTreeMap;

/// Which kernel name to group by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NameKind {
    /// `demangledName` (nsys' default).
    Demangled,
    /// `shortName` (nsys' `:base`).
    Short,
}

impl NameKind {
    fn column(self) -> &'static str {
        match self {
            NameKind::Demangled => "demangledName",
            NameKind::Short => "shortName",
        }
    }
}

/// `cuda_gpu_kern_sum`: kernel durations grouped by name; sorted by total time descending, then
/// instance count ascending, then name (nsys' `ORDER BY 2 DESC, 3, "Name"`).
pub fn kern_sum(
    schema: &Schema,
    strings: &Strings,
    sel: &Selection,
    by: NameKind,
) -> Result<Table> {
    let mut rows: Vec<(String, Summary)> = Vec::new();
    if let Some(table) = schema.table(&KERNEL) {
        let name = table.actual.clone();
        let needs = sel.needs_launch();
        let mut columns = vec!["start", "end", by.column(), "globalPid", "correlationId"];
        if !needs {
            columns.truncate(3);
        }
        let device_at = columns.len();
        if sel.device.is_some() {
            columns.push("deviceId");
        }
        let parts = scan::scan(
            schema,
            table,
            &columns,
            Groups::default,
            |acc: &mut Groups, row| {
                let (start, end) = row.interval(0, 1)?;
                let (pid, corr) = if needs {
                    (row.opt_int(3)?.unwrap_or(0), row.opt_int(4)?.unwrap_or(0))
                } else {
                    (0, 0)
                };
                let device_ok = sel.device.is_none() || sel.keep_device(row.int(device_at)?);
                if device_ok && sel.keep_gpu(start, end, pid, corr) {
                    acc.push(row.int(2)?, end - start);
                }
                Ok(())
            },
        )?;
        let merged = summary::merge(parts, |id| strings.resolve(id, &name, by.column()))?;
        rows = summary::describe_all(merged)
            .into_iter()
            .map(|(idx, s)| (strings.value(idx).to_string(), s))
            .collect();
    }
    rows.par_sort_unstable_by(|a, b| {
        b.1.total
            .cmp(&a.1.total)
            .then_with(|| a.1.count.cmp(&b.1.count))
            .then_with(|| a.0.cmp(&b.0))
    });
    summary::time_table(fields::CUDA_GPU_KERN_SUM, &rows, "instances", "name")
}

/// One `cuda_kern_exec_sum` group: launching process/thread, device, API name and kernel name.
type ExecKey = (i64, i64, i64, String, u32);

#[derive(Default)]
struct ExecGroup {
    total: Durations,
    api: Durations,
    queue: Vec<i64>,
    kernel: Durations,
}

/// `cuda_kern_exec_sum`: per (pid, tid, device, API, kernel), the statistics of total time
/// (`max(api end, kernel end) − api start`), API time, queue time (`kernel start − api end`, only
/// where ≥ 0; `q_count` counts those) and kernel time. Kernels without a launch call are left out
/// (an inner join, as nsys does). Sorted by mean total time descending.
pub fn kern_exec_sum(schema: &Schema, strings: &Strings, sel: &Selection) -> Result<Table> {
    let kernels = ops::load(schema, strings, sel, &[OpKind::Kernel])?;
    let calls = ops::join_calls(
        schema,
        strings,
        kernels.iter().map(|k| (k.global_pid, k.correlation)),
    )?;
    let mut groups: BTreeMap<ExecKey, ExecGroup> = BTreeMap::new();
    for (k, call) in kernels.iter().zip(&calls) {
        let Some(c) = call else { continue };
        let api = strip_version(strings.value(c.name)).to_string();
        let key = (
            (c.global_tid >> 24) & 0xFF_FFFF,
            c.global_tid & 0xFF_FFFF,
            k.device,
            api,
            u32::try_from(k.name).unwrap_or(u32::MAX),
        );
        let g = groups.entry(key).or_default();
        g.total.push(c.end.max(k.end) - c.start);
        g.api.push(c.end - c.start);
        g.kernel.push(k.duration());
        if k.start - c.end >= 0 {
            g.queue.push(k.start - c.end);
        }
    }
    let mut rows: Vec<(ExecKey, [Option<Summary>; 4])> = groups
        .into_par_iter()
        .map(|(key, g)| {
            let mut queue = g.queue;
            let stats = [
                g.total.describe(),
                g.api.describe(),
                super::describe::describe(&mut queue),
                g.kernel.describe(),
            ];
            (key, stats)
        })
        .collect();
    // ORDER BY the rounded mean total time, as nsys does (ties keep the group order).
    rows.sort_by(|a, b| {
        let ma = a.1[0].map_or(f64::NAN, |s| round1(s.mean));
        let mb = b.1[0].map_or(f64::NAN, |s| round1(s.mean));
        mb.total_cmp(&ma)
    });
    let mut cols = Columns::of(fields::CUDA_KERN_EXEC_SUM)
        .int("pid", rows.iter().map(|r| r.0 .0).collect())
        .int("tid", rows.iter().map(|r| r.0 .1).collect())
        .int("device_id", rows.iter().map(|r| r.0 .2).collect())
        .int("count", rows.iter().map(|r| stat_count(r.1[0])).collect())
        .int("q_count", rows.iter().map(|r| stat_count(r.1[2])).collect());
    for (i, [avg, med, min, max, stddev]) in EXEC_COLUMNS.into_iter().enumerate() {
        let get = |r: &(ExecKey, [Option<Summary>; 4])| r.1.get(i).copied().flatten();
        cols = cols
            .opt_float(avg, rows.iter().map(|r| get(r).map(|s| s.mean)).collect())
            .opt_float(med, rows.iter().map(|r| get(r).map(|s| s.median)).collect())
            .opt_int(min, rows.iter().map(|r| get(r).map(|s| s.min)).collect())
            .opt_int(max, rows.iter().map(|r| get(r).map(|s| s.max)).collect())
            // nsys's stdev() aggregate gives 0.0 for fewer than two values, none included: a
            // group whose kernels all started before their call returned has no queue times but a
            // queue StdDev of 0.0 (seen in nsys 2025.3 stats of the public Fuser and H100 exports).
            .opt_float(
                stddev,
                rows.iter()
                    .map(|r| Some(get(r).map_or(0.0, |s| s.stddev)))
                    .collect(),
            );
    }
    cols.text("api_name", rows.iter().map(|r| r.0 .3.clone()).collect())
        .text(
            "kernel_name",
            rows.iter()
                .map(|r| strings.value(r.0 .4).to_string())
                .collect(),
        )
        .build()
}

/// Column names of the four statistics blocks of the exec summary: total, API, queue, kernel time.
const EXEC_COLUMNS: [[&str; 5]; 4] = [
    [
        "t_avg_ns",
        "t_med_ns",
        "t_min_ns",
        "t_max_ns",
        "t_stddev_ns",
    ],
    [
        "a_avg_ns",
        "a_med_ns",
        "a_min_ns",
        "a_max_ns",
        "a_stddev_ns",
    ],
    [
        "q_avg_ns",
        "q_med_ns",
        "q_min_ns",
        "q_max_ns",
        "q_stddev_ns",
    ],
    [
        "k_avg_ns",
        "k_med_ns",
        "k_min_ns",
        "k_max_ns",
        "k_stddev_ns",
    ],
];

fn stat_count(s: Option<Summary>) -> i64 {
    s.map_or(0, |s| i64::try_from(s.count).unwrap_or(i64::MAX))
}

/// `x` rounded at one decimal from its exact binary value, as SQLite's `round(x, 1)` (which nsys
/// sorts by) does; exact ties, which SQLite rounds away from zero, round to even here, a difference
/// that can only swap two rows whose means are within 0.1 ns.
pub fn round1(x: f64) -> f64 {
    format!("{x:.1}").parse().unwrap_or(x)
}
