//! The four analyses as tables and documents: what the bindings call on an [`Activity`].

use super::activity::{Activity, OpClass};
use super::critical::{self, Keep};
use super::iterations::{self, Agreement, Detection, MarkerChoice, Row, Source};
use super::queue;
use super::sequences;
use super::table;
use crate::error::Result;
use crate::table::Table;
use serde::Serialize;

/// What the iterations were made of: the source the other analyses use, the marker chosen, what
/// detection found per device, and how the two agree.
#[derive(Debug, Clone, Serialize)]
pub struct IterationsDoc {
    pub used: Source,
    pub marker: Option<MarkerChoice>,
    pub detection: Vec<Detection>,
    pub agreement: Vec<Agreement>,
}

fn doc(it: &iterations::Iterations, used: Source) -> IterationsDoc {
    IterationsDoc {
        used,
        marker: it.marker.clone(),
        detection: it.detection.clone(),
        agreement: it.agreement.clone(),
    }
}

/// The iterations table (rows of both sources) and its document.
pub fn iterations(a: &Activity, marker: Option<&str>) -> Result<(Table, IterationsDoc)> {
    let it = iterations::iterations(a, marker)?;
    Ok((table::iterations(a, &it)?, doc(&it, it.used)))
}

/// The critical path of every row of `source` (default: the source the iterations use): per step,
/// the stretches `keep` selects, and how many stretches there are in all.
pub fn critical_path(
    a: &Activity,
    marker: Option<&str>,
    source: Option<Source>,
    keep: Keep,
) -> Result<(Table, (Table, usize), IterationsDoc)> {
    let it = iterations::iterations(a, marker)?;
    let used = source.unwrap_or(it.used);
    let rows: Vec<&Row> = it.rows.iter().filter(|r| r.source == used).collect();
    let paths = critical::paths(a, &rows, keep);
    Ok((
        table::critical_summary(&paths, &rows)?,
        table::critical_edges(a, &paths, &rows)?,
        doc(&it, used),
    ))
}

/// Queue facts per stream and device, and (with `series`) the depth over time.
pub fn queue(a: &Activity, series: bool) -> Result<(Table, Option<Table>)> {
    let (q, levels) = queue::queues(a, series);
    let levels = if series {
        Some(table::levels(&levels)?)
    } else {
        None
    };
    Ok((table::queues(&q)?, levels))
}

/// The repeating unit and the `n`-grams of the kernel sequence of every device.
pub fn sequences(a: &Activity, n: usize) -> Result<Table> {
    table::sequences(a, &sequences::sequences(a, n)?)
}

/// Steps as detection counts them, for per-step normalisation without markers.
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
pub struct DetectedSteps {
    /// The device with the most detected iterations (ties: the lowest id).
    pub device_id: Option<i64>,
    pub iterations: usize,
    /// Kernel and graph-execution time of those iterations.
    pub gpu_time_ns: i64,
}

pub fn detected_steps(a: &Activity) -> Result<DetectedSteps> {
    let it = iterations::iterations(a, None)?;
    let mut best = DetectedSteps {
        device_id: None,
        iterations: 0,
        gpu_time_ns: 0,
    };
    for d in &it.detection {
        if d.iterations > best.iterations {
            best = DetectedSteps {
                device_id: Some(d.device_id),
                iterations: d.iterations,
                gpu_time_ns: 0,
            };
        }
    }
    let Some(device) = best.device_id else {
        return Ok(best);
    };
    best.gpu_time_ns = it
        .rows
        .iter()
        .filter(|r| r.source == Source::Detected && r.device == device && r.iteration.is_some())
        .flat_map(|r| r.ops.iter())
        .filter_map(|&i| a.ops.get(i as usize))
        .filter(|o| matches!(o.class, OpClass::Kernel | OpClass::Graph))
        .map(|o| o.end - o.start)
        .sum();
    Ok(best)
}
