//! Detected iterations of one device (a part of `iterations.rs`): the repeating unit of its launch
//! sequence (`period.rs`), the rotation that starts an iteration (after the longest launch pause),
//! and the rows it cuts: iterations, and the odd stretches before, between and after the regions.

use super::{
    finish_rows, first_launch, flag_iterations, odd_text, Detection, Measures, Row, Source,
};
use crate::analyses::activity::{Activity, NONE};
use crate::analyses::period::{self, Region};

/// How many names of the unit's start align the unit in another region.
const ALIGN_NAMES: usize = 32;

/// Detected rows of one device.
pub(super) fn detect(a: &Activity, device: i64, ops: &[u32]) -> (Vec<Row>, Detection) {
    let seq: Vec<u32> = ops
        .iter()
        .map(|&i| a.ops.get(i as usize).map_or(NONE, |o| o.name))
        .collect();
    let with_calls = ops
        .iter()
        .filter_map(|&i| a.ops.get(i as usize))
        .all(|o| o.call != NONE);
    let mut found = Detection {
        device_id: device,
        operations: ops.len(),
        period_ops: None,
        exact_cover_ops: 0,
        regions: 0,
        iterations: 0,
        phase: None,
        phase_pause_ns: None,
        pause_clock: if with_calls { "host" } else { "gpu" },
    };
    // Each operation weighs its GPU time: the unit that repeats over the most time is the step.
    let weight = |k: usize| {
        ops.get(k)
            .and_then(|&i| a.ops.get(i as usize))
            .map_or(0, |o| o.end - o.start)
    };
    let Some(repeat) = period::find_weighted(&seq, &weight) else {
        return (Vec::new(), found);
    };
    let p = repeat.period;
    found.period_ops = Some(p);
    found.exact_cover_ops = repeat.exact_cover;
    found.regions = repeat.regions.len();
    let pause = |pos: usize| -> i64 { pause_before(a, ops, pos, with_calls) };
    let Some(main) = repeat
        .regions
        .iter()
        .max_by_key(|r| (r.end - r.start, usize::MAX - r.start))
    else {
        return (Vec::new(), found);
    };
    let (phase, phase_pause) = best_phase(main, p, &pause);
    found.phase = Some(phase);
    found.phase_pause_ns = Some(phase_pause);
    let unit_start = main.start + phase;
    let head: Vec<u32> = seq
        .get(unit_start..(unit_start + p.min(ALIGN_NAMES)).min(seq.len()))
        .unwrap_or_default()
        .to_vec();
    let unit: Vec<u32> = seq
        .get(unit_start..unit_start + p)
        .unwrap_or_default()
        .to_vec();
    // Cuts: (first, count) of iterations per region.
    let mut spans: Vec<(usize, usize)> = Vec::new();
    for region in &repeat.regions {
        let first = if region == main {
            unit_start
        } else {
            align(&seq, region, p, &head)
        };
        let count = region.end.saturating_sub(first) / p;
        if count > 0 {
            spans.push((first, count));
        }
    }
    let mut rows: Vec<Row> = Vec::new();
    let mut at = 0usize;
    let slice =
        |from: usize, to: usize| -> Vec<u32> { ops.get(from..to).unwrap_or_default().to_vec() };
    let odd_row = |rows: &mut Vec<Row>, from: usize, to: usize, odd: &'static str| {
        if to > from {
            rows.push(detected_row(device, rows.len(), slice(from, to), Some(odd)));
        }
    };
    for (k, &(first, count)) in spans.iter().enumerate() {
        odd_row(
            &mut rows,
            at,
            first,
            if k == 0 {
                "before_first_repeat"
            } else {
                "breaks_repeat"
            },
        );
        for j in 0..count {
            let from = first + j * p;
            let mut row = detected_row(device, rows.len(), slice(from, from + p), None);
            if seq.get(from..from + p) != Some(unit.as_slice()) {
                row.odd = Some("sequence_differs");
                let differ = seq
                    .get(from..from + p)
                    .unwrap_or_default()
                    .iter()
                    .zip(&unit)
                    .filter(|(x, y)| x != y)
                    .count();
                row.odd_rule = Some(format!(
                    "{differ} of its {p} operations differ from the unit's names at the same place"
                ));
            }
            rows.push(row);
        }
        at = first + count * p;
    }
    odd_row(&mut rows, at, ops.len(), "after_last_repeat");
    for r in &mut rows {
        r.host_start = first_launch(a, &r.ops);
        if let Some(odd) = r.odd {
            if r.odd_rule.is_none() {
                r.odd_rule = Some(odd_text(odd, ""));
            }
        }
    }
    finish_rows(a, &mut rows);
    flag_iterations(a, &mut rows, true);
    found.iterations = rows.iter().filter(|r| r.iteration.is_some()).count();
    (rows, found)
}

fn detected_row(device: i64, index: usize, ops: Vec<u32>, odd: Option<&'static str>) -> Row {
    Row {
        device,
        source: Source::Detected,
        source_name: "detected",
        index,
        iteration: None,
        name: None,
        host_start: None,
        thread: None,
        ops,
        odd,
        odd_rule: None,
        m: Measures::default(),
    }
}

/// The pause before the operation at position `pos` of the device's sequence: host time between
/// the previous operation's launch call end and this one's call start (0 when one call launched
/// both), or GPU idle before it when the capture has no calls.
fn pause_before(a: &Activity, ops: &[u32], pos: usize, with_calls: bool) -> i64 {
    let get = |k: usize| ops.get(k).and_then(|&i| a.ops.get(i as usize));
    let (Some(prev), Some(op)) = (pos.checked_sub(1).and_then(get), get(pos)) else {
        return 0;
    };
    if with_calls {
        if prev.call == op.call {
            return 0;
        }
        match (a.call(prev.call), a.call(op.call)) {
            (Some(p), Some(c)) => (c.start - p.end).max(0),
            _ => 0,
        }
    } else {
        (op.start - prev.end).max(0)
    }
}

/// The unit position (0..p) whose operations follow the longest median pause over the region.
fn best_phase(region: &Region, p: usize, pause: &dyn Fn(usize) -> i64) -> (usize, i64) {
    let mut best = (0usize, i64::MIN);
    for r in 0..p {
        let mut values: Vec<i64> = (region.start + r..region.end)
            .step_by(p)
            .filter(|&pos| pos > 0)
            .map(pause)
            .collect();
        if values.is_empty() {
            continue;
        }
        let mid = (values.len() - 1) / 2;
        let (_, median, _) = values.select_nth_unstable(mid);
        if *median > best.1 {
            best = (r, *median);
        }
    }
    (best.0, best.1.max(0))
}

/// Where the unit starts in another region: the position among its first `p` whose next names
/// best match the unit's first names.
fn align(seq: &[u32], region: &Region, p: usize, head: &[u32]) -> usize {
    let mut best = (region.start, 0usize);
    for j in region.start..(region.start + p).min(region.end) {
        let matches = seq
            .get(j..)
            .unwrap_or_default()
            .iter()
            .zip(head)
            .filter(|(x, y)| x == y)
            .count();
        if matches > best.1 {
            best = (j, matches);
        }
    }
    best.0
}
