//! Iterations: the repeated steps of a capture, from its step markers and from the launch sequence
//! alone, with the odd ones out and the rule that made each odd.
//!
//! * **Markers.** The top-level ranges of each thread are grouped by name with a trailing number
//!   made `*` (`step_3` → `step_*`, `ProfilerStep#3` → `ProfilerStep#*`); the step marker is
//!   `ProfilerStep#*` when present, else the group with at least two instances that covers the most
//!   time among those that are at least half the top-level ranges, or cover at least half the
//!   top-level time, of the threads holding them (a step marker tiles its thread; per-op ranges do
//!   not), or the one `--marker` names. Rows are the top-level ranges of the threads holding the
//!   marker, in time order; a range of another name is an odd row (`other_range`). A GPU operation
//!   belongs to the row of its process whose range holds the start of the call that launched it.
//! * **Detected.** Per device, the names of the operations in launch order; `period.rs` finds the
//!   repeating unit and the regions it covers. Which rotation of the unit is an iteration: the one
//!   whose first operation follows the longest pause in launching (median over the region of the
//!   host time between the previous launch call's end and this one's start; GPU idle time when the
//!   capture has no calls) — a loop body starts after the host's work between iterations.
//!   Operations before the first iteration, between regions and after the last are odd rows.
//!
//! Measures of a row (GPU clock): `start`/`end` = first start and last end of its operations;
//! `span` = completion − the previous completion, where a row's completion is the latest `end` of it
//! and every row before it (rows tile the GPU timeline: completion to completion, never negative; the
//! first row: `end − start`); `extent` = `end − start`; `gpu_busy` = union of its operations.

use super::activity::{index, Activity, GpuOp, Marker, NONE};
use crate::error::Result;
use serde::Serialize;
use std::collections::BTreeMap;

// Detection is a part of this module (a file of its own for size): it builds this module's rows.
mod detect;
mod marker;
use detect::detect;
use marker::choose_marker;

/// Iterations whose span exceeds `median + STRAGGLER_MADS × 1.4826 × MAD` (and
/// `median × (1 + STRAGGLER_MIN_EXCESS)`) are stragglers (warm-up when it is the first).
pub const STRAGGLER_MADS: f64 = 3.0;
pub const STRAGGLER_MIN_EXCESS: f64 = 0.05;

/// Where a row's boundaries came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// From repeated ranges (NVTX ranges, `record_function`s).
    Marker,
    /// From the repetition of the launch sequence.
    Detected,
}

/// One row: an iteration, or work outside the iterations (odd by position).
#[derive(Debug, Clone)]
pub struct Row {
    pub device: i64,
    pub source: Source,
    /// The marker's kind (`nvtx`, `record_function`, `profiler_step`) or `detected`.
    pub source_name: &'static str,
    /// 0-based among the rows of this device and source.
    pub index: usize,
    /// 1-based among the iterations; None for work outside them.
    pub iteration: Option<usize>,
    /// The range's name (marker rows).
    pub name: Option<String>,
    /// Range start, or the start of the call that launched the first operation.
    pub host_start: Option<i64>,
    /// The thread of the range (marker rows).
    pub thread: Option<u32>,
    /// Indices into [`Activity::ops`], in launch order.
    pub ops: Vec<u32>,
    /// The rule that makes the row odd, and its numbers.
    pub odd: Option<&'static str>,
    pub odd_rule: Option<String>,
    pub m: Measures,
}

/// What a row's operations did on the GPU.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Measures {
    pub start: Option<i64>,
    pub end: Option<i64>,
    pub span: Option<i64>,
    pub busy: i64,
    pub kernels: i64,
    pub memory_ops: i64,
    pub graph_executions: i64,
}

impl Measures {
    pub fn extent(&self) -> Option<i64> {
        Some(self.end? - self.start?)
    }
}

/// How detected and marked iterations compare on one device.
#[derive(Debug, Clone, Serialize)]
pub struct Agreement {
    pub device_id: i64,
    pub marker: String,
    pub marker_iterations: usize,
    pub detected_iterations: usize,
    /// Rows of the two sources paired by the operations they share (each detected row with the
    /// marker row holding most of its operations).
    pub paired_rows: usize,
    /// Largest |detected span − marker span| / marker span over the paired rows, in percent.
    pub max_span_diff_pct: Option<f64>,
    /// Paired rows whose kernel counts differ.
    pub kernel_count_differs: usize,
}

/// What detection found on one device.
#[derive(Debug, Clone, Serialize)]
pub struct Detection {
    pub device_id: i64,
    /// GPU operations of the device (the sequence searched).
    pub operations: usize,
    /// Operations in one unit; None when nothing repeats.
    pub period_ops: Option<usize>,
    /// Operations covered by the longest exact run of the unit.
    pub exact_cover_ops: usize,
    pub regions: usize,
    pub iterations: usize,
    /// Which rotation starts an iteration: the unit position after the longest launch pause, and
    /// that pause (median ns over the region).
    pub phase: Option<usize>,
    pub phase_pause_ns: Option<i64>,
    /// What the pause measures: `host` (between launch calls) or `gpu` (idle before the operation).
    pub pause_clock: &'static str,
}

/// The marker chosen.
#[derive(Debug, Clone, Serialize)]
pub struct MarkerChoice {
    /// The range group (`decode_step`, `step_*`, `ProfilerStep#*`).
    pub name: String,
    pub kind: &'static str,
    pub instances: usize,
    /// How it was chosen: `option` (--marker), `profiler_step`, `most_time`.
    pub chosen_by: &'static str,
    /// Operations launched between rows (in no row).
    pub unattributed_ops: usize,
}

#[derive(Debug, Clone)]
pub struct Iterations {
    pub rows: Vec<Row>,
    /// `marker` when a marker was found, else `detected`.
    pub used: Source,
    pub marker: Option<MarkerChoice>,
    pub detection: Vec<Detection>,
    pub agreement: Vec<Agreement>,
}

impl Iterations {
    /// The rows of the source the other analyses use (per device, in order).
    pub fn used_rows(&self) -> impl Iterator<Item = &Row> {
        self.rows.iter().filter(move |r| r.source == self.used)
    }
}

/// `step_3` → `step_*`: a trailing number made `*`.
pub fn group_name(name: &str) -> String {
    let trimmed = name.trim_end_matches(|c: char| c.is_ascii_digit());
    if trimmed.len() < name.len() && !trimmed.is_empty() {
        format!("{trimmed}*")
    } else {
        name.to_string()
    }
}

/// Iterations of every device, from markers (when any) and detection.
pub fn iterations(a: &Activity, marker: Option<&str>) -> Result<Iterations> {
    let choice = choose_marker(a, marker)?;
    let mut rows = Vec::new();
    let mut detection = Vec::new();
    let mut agreement = Vec::new();
    let mut unattributed = 0usize;
    for device in a.devices() {
        let ops = a.ops_of_device(device);
        let (detected, found) = detect(a, device, &ops);
        detection.push(found);
        let marked = match &choice {
            Some((group, _)) => {
                let (marked, outside) = marker_rows(a, device, &ops, group);
                unattributed += outside;
                marked
            }
            None => Vec::new(),
        };
        if let Some((group, _)) = &choice {
            agreement.push(agree(a.ops.len(), device, group, &marked, &detected));
        }
        rows.extend(marked);
        rows.extend(detected);
    }
    let marker = choice.map(|(name, (kind, instances, chosen_by))| MarkerChoice {
        name,
        kind,
        instances,
        chosen_by,
        unattributed_ops: unattributed,
    });
    Ok(Iterations {
        rows,
        used: if marker.is_some() {
            Source::Marker
        } else {
            Source::Detected
        },
        marker,
        detection,
        agreement,
    })
}

/// Rows of the marker on one device, and how many of its operations no row holds.
fn marker_rows(a: &Activity, device: i64, ops: &[u32], group: &str) -> (Vec<Row>, usize) {
    let threads: Vec<u32> = {
        let mut t: Vec<u32> = a
            .markers
            .iter()
            .filter(|m| group_name(a.name(m.name)) == group)
            .map(|m| m.thread)
            .collect();
        t.sort_unstable();
        t.dedup();
        t
    };
    let ranges: Vec<&Marker> = a
        .markers
        .iter()
        .filter(|m| threads.binary_search(&m.thread).is_ok())
        .collect();
    let source_name = if group == "ProfilerStep#*" {
        "profiler_step"
    } else {
        a.marker_kind
    };
    let mut held: Vec<Vec<u32>> = vec![Vec::new(); ranges.len()];
    let (mut before, mut after, mut outside) = (Vec::new(), Vec::new(), 0usize);
    let first_start = ranges.first().map_or(i64::MAX, |r| r.start);
    let last_end = ranges.iter().map(|r| r.end).max().unwrap_or(i64::MIN);
    for &i in ops {
        let Some(op) = a.ops.get(i as usize) else {
            continue;
        };
        let t = a.launched_at(op);
        let process = a.lane(op).process;
        let upto = ranges.partition_point(|r| r.start <= t);
        let owner = (0..upto).rev().find(|&k| {
            ranges.get(k).is_some_and(|r| {
                t < r.end.max(r.start + 1) && a.process_of_thread(r.thread) == process
            })
        });
        match owner.and_then(|k| held.get_mut(k)) {
            Some(list) => list.push(i),
            None if t < first_start => before.push(i),
            None if t >= last_end => after.push(i),
            None => outside += 1,
        }
    }
    let mut rows = Vec::new();
    let push = |rows: &mut Vec<Row>, name: Option<String>, m: Option<&Marker>, list: Vec<u32>| {
        let odd = match (m, &name) {
            (None, _) if rows.is_empty() => Some("before_first_range"),
            (None, _) => Some("after_last_range"),
            (Some(_), Some(n)) if group_name(n) != group => Some("other_range"),
            _ => None,
        };
        rows.push(Row {
            device,
            source: Source::Marker,
            source_name,
            index: rows.len(),
            iteration: None,
            name,
            host_start: m.map(|m| m.start).or_else(|| first_launch(a, &list)),
            thread: m.map(|m| m.thread),
            ops: list,
            odd,
            odd_rule: odd.map(|o| odd_text(o, group)),
            m: Measures::default(),
        });
    };
    if !before.is_empty() {
        push(&mut rows, None, None, before);
    }
    for (r, list) in ranges.iter().zip(held) {
        push(&mut rows, Some(a.name(r.name).to_string()), Some(r), list);
    }
    if !after.is_empty() {
        push(&mut rows, None, None, after);
    }
    finish_rows(a, &mut rows);
    flag_iterations(a, &mut rows, false);
    (rows, outside)
}

pub(super) fn odd_text(odd: &str, group: &str) -> String {
    match odd {
        "before_first_range" => {
            format!("launched before the first top-level range of the {group:?} threads")
        }
        "after_last_range" => {
            format!("launched after the last top-level range of the {group:?} threads")
        }
        "other_range" => format!("a top-level range that is not {group:?}"),
        "before_first_repeat" => {
            "before the first repeat of the launch sequence's unit".to_string()
        }
        "after_last_repeat" => "after the last full repeat of the unit".to_string(),
        "breaks_repeat" => {
            "between two regions of the repeat: these operations do not follow the unit".to_string()
        }
        other => other.to_string(),
    }
}

pub(super) fn first_launch(a: &Activity, list: &[u32]) -> Option<i64> {
    list.iter()
        .filter_map(|&i| a.ops.get(i as usize))
        .map(|op| a.launched_at(op))
        .min()
}

/// Fills each row's measures; spans run from the previous row's end.
pub(super) fn finish_rows(a: &Activity, rows: &mut [Row]) {
    let mut previous_end: Option<i64> = None;
    for row in rows.iter_mut() {
        let mut m = Measures::default();
        for op in row.ops.iter().filter_map(|&i| a.ops.get(i as usize)) {
            m.start = Some(m.start.map_or(op.start, |s| s.min(op.start)));
            m.end = Some(m.end.map_or(op.end, |e| e.max(op.end)));
            count_op(&mut m, op);
        }
        m.busy = busy(a, &row.ops);
        // Completion is the latest end so far: a row whose work all ended before the previous
        // completion (its kernels overlap the rows before it) spans 0, never a negative time, and
        // the spans still sum to the rows' whole length.
        if let Some(end) = m.end {
            let from = previous_end.or(m.start).unwrap_or(end);
            m.span = Some(end.max(from) - from);
            previous_end = Some(end.max(from));
        }
        row.m = m;
    }
}

/// Time covered by the union of the operations: their indices sorted by start (4 bytes each, not a
/// 16-byte span: one row can hold most of a capture's operations), then one sweep.
fn busy(a: &Activity, ops: &[u32]) -> i64 {
    let span = |i: &u32| a.ops.get(*i as usize).map_or((0, 0), |o| (o.start, o.end));
    let mut order = ops.to_vec();
    // Launch order is nearly start order: the sort mostly confirms it.
    if !order.is_sorted_by_key(span) {
        order.sort_by_key(span);
    }
    let (mut total, mut open): (i64, Option<(i64, i64)>) = (0, None);
    for (start, end) in order.iter().map(span).filter(|(s, e)| e > s) {
        open = match open {
            Some((s, e)) if start <= e => Some((s, e.max(end))),
            Some((s, e)) => {
                total += e - s;
                Some((start, end))
            }
            None => Some((start, end)),
        };
    }
    total + open.map_or(0, |(s, e)| e - s)
}

fn count_op(m: &mut Measures, op: &GpuOp) {
    use super::activity::OpClass;
    match op.class {
        OpClass::Kernel => m.kernels += 1,
        OpClass::Memcpy | OpClass::Memset => m.memory_ops += 1,
        OpClass::Graph => m.graph_executions += 1,
    }
}

/// Numbers the iterations (rows not odd by position) and flags warm-up, stragglers, and (marker
/// rows) kernel counts that differ from the median.
pub(super) fn flag_iterations(_a: &Activity, rows: &mut [Row], detected: bool) {
    let positional = |r: &Row| {
        matches!(
            r.odd,
            Some(
                "before_first_range"
                    | "after_last_range"
                    | "other_range"
                    | "before_first_repeat"
                    | "after_last_repeat"
                    | "breaks_repeat"
            )
        )
    };
    let mut n = 0;
    for r in rows.iter_mut() {
        if !positional(r) {
            n += 1;
            r.iteration = Some(n);
        }
    }
    let spans: Vec<i64> = rows
        .iter()
        .filter(|r| r.iteration.is_some())
        .filter_map(|r| r.m.span)
        .collect();
    if let Some((median, mad)) = median_mad(&spans) {
        let limit =
            (median + STRAGGLER_MADS * 1.4826 * mad).max(median * (1.0 + STRAGGLER_MIN_EXCESS));
        for r in rows
            .iter_mut()
            .filter(|r| r.iteration.is_some() && r.odd.is_none())
        {
            let Some(span) = r.m.span else { continue };
            #[allow(clippy::cast_precision_loss)]
            if span as f64 > limit {
                let first = r.iteration == Some(1);
                r.odd = Some(if first { "warm_up" } else { "straggler" });
                r.odd_rule = Some(format!(
                    "span {span} ns > {limit:.0} ns = max(median {median:.0} + {STRAGGLER_MADS} x 1.4826 x MAD {mad:.0}, median x {:.2}){}",
                    1.0 + STRAGGLER_MIN_EXCESS,
                    if first { ", and it is the first iteration" } else { "" }
                ));
            }
        }
    }
    if !detected {
        let mut counts: Vec<i64> = rows
            .iter()
            .filter(|r| r.iteration.is_some())
            .map(|r| r.m.kernels + r.m.graph_executions)
            .collect();
        if counts.is_empty() {
            return;
        }
        let mid = (counts.len() - 1) / 2;
        let (_, median, _) = counts.select_nth_unstable(mid);
        let median = *median;
        for r in rows
            .iter_mut()
            .filter(|r| r.iteration.is_some() && r.odd.is_none())
        {
            let k = r.m.kernels + r.m.graph_executions;
            if k != median {
                r.odd = Some("kernels_differ");
                r.odd_rule = Some(format!(
                    "{k} kernels and graph executions, the iterations' median is {median}"
                ));
            }
        }
    }
}

/// Median and median absolute deviation (nearest rank, lower middle).
fn median_mad(values: &[i64]) -> Option<(f64, f64)> {
    if values.is_empty() {
        return None;
    }
    let mut v = values.to_vec();
    let mid = (v.len() - 1) / 2;
    let (_, m, _) = v.select_nth_unstable(mid);
    let m = *m;
    let mut dev: Vec<i64> = values.iter().map(|x| (x - m).abs()).collect();
    let (_, d, _) = dev.select_nth_unstable(mid);
    #[allow(clippy::cast_precision_loss)]
    Some((m as f64, *d as f64))
}

/// Pairs each detected row with the marker row holding most of its operations (`ops`: how many
/// operations the capture has).
fn agree(ops: usize, device: i64, group: &str, marked: &[Row], detected: &[Row]) -> Agreement {
    // The marker row of each operation (by index: a map of millions of operations costs more than
    // the rest of the iterations).
    let mut owner: Vec<u32> = vec![NONE; ops];
    for (k, r) in marked.iter().enumerate() {
        for &i in &r.ops {
            if let Some(slot) = owner.get_mut(i as usize) {
                *slot = index(k);
            }
        }
    }
    let (mut paired, mut differs, mut max_diff) = (0usize, 0usize, None::<f64>);
    let mut votes: BTreeMap<usize, usize> = BTreeMap::new();
    for d in detected {
        votes.clear();
        for &i in &d.ops {
            if let Some(&k) = owner.get(i as usize).filter(|&&k| k != NONE) {
                *votes.entry(k as usize).or_default() += 1;
            }
        }
        let Some((&k, _)) = votes.iter().max_by(|x, y| x.1.cmp(y.1).then(y.0.cmp(x.0))) else {
            continue;
        };
        let Some(m) = marked.get(k) else { continue };
        paired += 1;
        if m.m.kernels + m.m.graph_executions != d.m.kernels + d.m.graph_executions {
            differs += 1;
        }
        if let (Some(ds), Some(ms)) = (d.m.span, m.m.span) {
            if ms != 0 {
                #[allow(clippy::cast_precision_loss)]
                let diff = 100.0 * ((ds - ms) as f64).abs() / ms as f64;
                max_diff = Some(max_diff.map_or(diff, |x| x.max(diff)));
            }
        }
    }
    Agreement {
        device_id: device,
        marker: group.to_string(),
        marker_iterations: marked.iter().filter(|r| r.iteration.is_some()).count(),
        detected_iterations: detected.iter().filter(|r| r.iteration.is_some()).count(),
        paired_rows: paired,
        max_span_diff_pct: max_diff,
        kernel_count_differs: differs,
    }
}
