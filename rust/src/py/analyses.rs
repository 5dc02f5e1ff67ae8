//! Bindings for the analyses (`crate::analyses`): iterations, critical path, queues and sequences of
//! an opened nsys export or Kineto trace set. Documents come back as JSON: a list with one entry per
//! trace (`rank`; null for an nsys export).

use super::arrow::ArrowTable;
use super::nsys::NsysReport;
use super::torch_trace::TorchTrace;
use super::{json, run};
use crate::analyses::activity::Activity;
use crate::analyses::critical::Keep;
use crate::analyses::facts;
use crate::analyses::iterations::Source;
use crate::analyses::table::{concat, with_rank};
use crate::error::{Error, Result};
use crate::nsys::select::Request;
use crate::table::Table;
use crate::torch_trace::TraceSet;
use pyo3::prelude::*;
use serde::Serialize;
use std::sync::Arc;

#[derive(Serialize)]
struct Ranked<T: Serialize> {
    rank: Option<i64>,
    #[serde(flatten)]
    doc: T,
}

/// Where the activities come from: one nsys export, or each trace of a Kineto set (with its rank).
enum Input {
    Nsys(Arc<crate::nsys::Report>),
    Torch(Arc<TraceSet>),
}

impl Input {
    fn of(source: &Bound<'_, PyAny>) -> PyResult<Self> {
        if let Ok(r) = source.cast::<NsysReport>() {
            return Ok(Input::Nsys(Arc::clone(&r.get().inner)));
        }
        if let Ok(t) = source.cast::<TorchTrace>() {
            return Ok(Input::Torch(Arc::clone(&t.get().set)));
        }
        Err(pyo3::exceptions::PyTypeError::new_err(
            "expected an NsysReport or a TorchTrace",
        ))
    }

    /// `f` on every activity, with its rank (None for nsys).
    fn each<T, F>(&self, f: F) -> Result<Vec<(Option<i64>, T)>>
    where
        F: Fn(&Activity) -> Result<T>,
    {
        match self {
            Input::Nsys(r) => {
                let named = |e: Error| e.or_path(|| r.schema.path.display().to_string());
                let activity = r.activity(&Request::default()).map_err(named)?;
                Ok(vec![(None, f(&activity).map_err(named)?)])
            }
            Input::Torch(set) => set
                .traces
                .iter()
                .map(|t| Ok((Some(t.rank), f(&crate::torch_trace::activity::load(t)?)?)))
                .collect(),
        }
    }
}

/// The tables of every part as one (a `rank` column first for Kineto traces).
fn joined(parts: Vec<(Option<i64>, Table)>) -> Result<Table> {
    let tables = parts
        .into_iter()
        .map(|(rank, t)| match rank {
            Some(r) => with_rank(t, r),
            None => Ok(t),
        })
        .collect::<Result<Vec<_>>>()?;
    concat(tables).ok_or_else(|| Error::internal("table_invalid", "no trace to analyse"))
}

fn docs<T: Serialize>(parts: Vec<(Option<i64>, T)>) -> Vec<Ranked<T>> {
    parts
        .into_iter()
        .map(|(rank, doc)| Ranked { rank, doc })
        .collect()
}

fn source_of(text: Option<&str>) -> PyResult<Option<Source>> {
    match text {
        None => Ok(None),
        Some("marker") => Ok(Some(Source::Marker)),
        Some("detected") => Ok(Some(Source::Detected)),
        Some(other) => Err(pyo3::exceptions::PyValueError::new_err(format!(
            "source must be 'marker' or 'detected', not {other:?}"
        ))),
    }
}

/// `analysis_iterations(source, marker) -> (table, json)`.
#[pyfunction]
#[pyo3(signature = (source, marker = None))]
pub fn analysis_iterations(
    py: Python<'_>,
    source: &Bound<'_, PyAny>,
    marker: Option<String>,
) -> PyResult<(ArrowTable, Vec<u8>)> {
    let input = Input::of(source)?;
    let parts = run(py, move || {
        input.each(|a| facts::iterations(a, marker.as_deref()))
    })?;
    let (tables, docs_): (Vec<_>, Vec<_>) = parts
        .into_iter()
        .map(|(rank, (t, d))| ((rank, t), (rank, d)))
        .unzip();
    let table = run(py, move || joined(tables))?;
    Ok((table.into(), json(&docs(docs_))?))
}

/// `analysis_critical_path(source, marker, use, step, head) -> (steps, edges, edge count, json)`:
/// the edges of the steps whose row is `step`, else the first `head` of them (of each trace), else all
/// (a path has a few stretches per operation on it: a document holds only the stretches it shows).
#[pyfunction]
#[pyo3(signature = (source, marker = None, using = None, step = None, head = None))]
pub fn analysis_critical_path(
    py: Python<'_>,
    source: &Bound<'_, PyAny>,
    marker: Option<String>,
    using: Option<String>,
    step: Option<usize>,
    head: Option<usize>,
) -> PyResult<(ArrowTable, ArrowTable, usize, Vec<u8>)> {
    let input = Input::of(source)?;
    let using = source_of(using.as_deref())?;
    let which = match (step, head) {
        (Some(row), _) => Keep::Row(row),
        (None, Some(n)) => Keep::Head(n),
        (None, None) => Keep::All,
    };
    let parts = run(py, move || {
        input.each(|a| facts::critical_path(a, marker.as_deref(), using, which))
    })?;
    let mut steps = Vec::new();
    let mut edges = Vec::new();
    let mut ds = Vec::new();
    let mut total = 0usize;
    for (rank, (s, (e, n), d)) in parts {
        steps.push((rank, s));
        edges.push((rank, e));
        ds.push((rank, d));
        total += n;
    }
    let (steps, edges) = run(py, move || Ok((joined(steps)?, joined(edges)?)))?;
    Ok((steps.into(), edges.into(), total, json(&docs(ds))?))
}

/// `analysis_queue(source, series) -> (table, series table or None)`.
#[pyfunction]
#[pyo3(signature = (source, series = false))]
pub fn analysis_queue(
    py: Python<'_>,
    source: &Bound<'_, PyAny>,
    series: bool,
) -> PyResult<(ArrowTable, Option<ArrowTable>)> {
    let input = Input::of(source)?;
    let (table, levels) = run(py, move || {
        let parts = input.each(|a| facts::queue(a, series))?;
        let mut tables = Vec::new();
        let mut levels = Vec::new();
        for (rank, (t, l)) in parts {
            tables.push((rank, t));
            if let Some(l) = l {
                levels.push((rank, l));
            }
        }
        let levels = if series { Some(joined(levels)?) } else { None };
        Ok((joined(tables)?, levels))
    })?;
    Ok((table.into(), levels.map(Into::into)))
}

/// `analysis_sequences(source, n) -> table`.
#[pyfunction]
#[pyo3(signature = (source, n = 3))]
pub fn analysis_sequences(
    py: Python<'_>,
    source: &Bound<'_, PyAny>,
    n: usize,
) -> PyResult<ArrowTable> {
    let input = Input::of(source)?;
    let table = run(py, move || joined(input.each(|a| facts::sequences(a, n))?))?;
    Ok(table.into())
}

/// `analysis_detected_steps(source) -> json`: detected iterations of every trace.
#[pyfunction]
pub fn analysis_detected_steps(py: Python<'_>, source: &Bound<'_, PyAny>) -> PyResult<Vec<u8>> {
    let input = Input::of(source)?;
    let parts = run(py, move || input.each(facts::detected_steps))?;
    json(&docs(parts))
}
