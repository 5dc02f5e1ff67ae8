//! Bindings for the PyTorch trace engine: one parsed trace set held natively, queried for tables.

use super::arrow::ArrowTable;
use super::{json, run};
use crate::table::Table;
use crate::torch_trace::scope::{self, Scope};
use crate::torch_trace::{self, TraceSet};
use pyo3::prelude::*;
use std::path::PathBuf;
use std::sync::Arc;

/// A trace file or folder of rank traces, read and linked once; each method builds one table.
#[pyclass(frozen, module = "gpuopt._native")]
pub struct TorchTrace {
    pub(super) set: Arc<TraceSet>,
}

impl TorchTrace {
    /// The parsed traces (for the bindings of other areas: paths, flops, perfetto).
    pub(crate) fn set(&self) -> Arc<TraceSet> {
        Arc::clone(&self.set)
    }

    fn table(
        &self,
        py: Python<'_>,
        build: fn(&TraceSet) -> crate::error::Result<Table>,
    ) -> PyResult<ArrowTable> {
        let set = Arc::clone(&self.set);
        Ok(run(py, move || build(&set))?.into())
    }
}

#[pymethods]
impl TorchTrace {
    /// The same traces restricted to `ProfilerStep#first..=last` (`steps`) or to events starting in
    /// `[start, end)` ns from each trace's origin (`window`); exactly one of the two.
    #[pyo3(signature = (*, steps=None, window=None))]
    fn scoped(
        &self,
        py: Python<'_>,
        steps: Option<(i64, i64)>,
        window: Option<(i64, i64)>,
    ) -> PyResult<TorchTrace> {
        let scope = match (steps, window) {
            (Some((first, last)), None) => Scope::Steps { first, last },
            (None, Some((start, end))) => Scope::Window { start, end },
            _ => {
                return Err(pyo3::exceptions::PyValueError::new_err(
                    "scoped() takes exactly one of steps= and window=",
                ))
            }
        };
        let set = Arc::clone(&self.set);
        let scoped = run(py, move || scope::apply(&set, scope))?;
        Ok(TorchTrace {
            set: Arc::new(scoped),
        })
    }

    /// Number of trace files (ranks) in the set.
    #[getter]
    fn num_traces(&self) -> usize {
        self.set.traces.len()
    }

    fn kernels(&self, py: Python<'_>) -> PyResult<ArrowTable> {
        self.table(py, torch_trace::kernels::table)
    }

    fn api(&self, py: Python<'_>) -> PyResult<ArrowTable> {
        self.table(py, torch_trace::api::table)
    }

    fn ops(&self, py: Python<'_>) -> PyResult<ArrowTable> {
        self.table(py, torch_trace::ops::table)
    }

    fn steps(&self, py: Python<'_>) -> PyResult<ArrowTable> {
        self.table(py, torch_trace::steps::table)
    }

    fn launches(&self, py: Python<'_>) -> PyResult<ArrowTable> {
        self.table(py, torch_trace::launches::table)
    }

    fn graphs(&self, py: Python<'_>) -> PyResult<ArrowTable> {
        self.table(py, torch_trace::graphs::table)
    }

    fn transfers(&self, py: Python<'_>) -> PyResult<ArrowTable> {
        self.table(py, torch_trace::transfers::table)
    }

    fn collectives(&self, py: Python<'_>) -> PyResult<ArrowTable> {
        self.table(py, torch_trace::collectives::table)
    }

    /// The ranks compared: `(ranks, collectives, stragglers, rank_source)` (see `crate::ranks`);
    /// `rank_source` is the traces' one source of ranks, or `mixed`.
    fn ranks(&self, py: Python<'_>) -> PyResult<(ArrowTable, ArrowTable, ArrowTable, String)> {
        let set = Arc::clone(&self.set);
        let mut sources: Vec<&str> = self.set.traces.iter().map(|t| t.rank_source).collect();
        sources.dedup();
        let source = match sources.as_slice() {
            [one] => (*one).to_string(),
            _ => "mixed".to_string(),
        };
        let t = run(py, move || torch_trace::ranks::compare(&set))?;
        Ok((
            t.ranks.into(),
            t.collectives.into(),
            t.stragglers.into(),
            source,
        ))
    }

    fn comm(&self, py: Python<'_>) -> PyResult<ArrowTable> {
        self.table(py, torch_trace::collectives::comm_table)
    }

    fn streams(&self, py: Python<'_>, kernel_wait_threshold_ns: i64) -> PyResult<ArrowTable> {
        let set = Arc::clone(&self.set);
        Ok(run(py, move || {
            torch_trace::timeline::streams_table(&set, kernel_wait_threshold_ns)
        })?
        .into())
    }

    fn gaps(&self, py: Python<'_>, kernel_wait_threshold_ns: i64) -> PyResult<ArrowTable> {
        let set = Arc::clone(&self.set);
        Ok(run(py, move || {
            torch_trace::timeline::gaps_table(&set, kernel_wait_threshold_ns)
        })?
        .into())
    }

    /// JSON list of `{path, global_rank, platform, format, gpu_absent}`, one per trace.
    fn overview_json(&self) -> PyResult<Vec<u8>> {
        json(&torch_trace::summary::overview(&self.set))
    }

    /// JSON list of `{kind, name, count}`: content recognised but not modeled, over all traces.
    fn unmodeled_json(&self) -> PyResult<Vec<u8>> {
        json(&torch_trace::summary::unmodeled(&self.set))
    }

    fn summary_json(&self, py: Python<'_>, kernel_wait_threshold_ns: i64) -> PyResult<Vec<u8>> {
        let set = Arc::clone(&self.set);
        let summary = run(py, move || {
            Ok(torch_trace::summary::summary(
                &set,
                kernel_wait_threshold_ns,
            ))
        })?;
        json(&summary)
    }
}

/// `torch_trace_open(path) -> TorchTrace`: reads a Kineto trace (`.json`/`.json.gz`) or a folder of them.
#[pyfunction]
pub fn torch_trace_open(py: Python<'_>, path: PathBuf) -> PyResult<TorchTrace> {
    let set = run(py, move || torch_trace::open(&path))?;
    Ok(TorchTrace { set: Arc::new(set) })
}

/// `torch_trace_open_paths(paths) -> TorchTrace`: several trace files (or folders) as one job's ranks.
#[pyfunction]
pub fn torch_trace_open_paths(py: Python<'_>, paths: Vec<PathBuf>) -> PyResult<TorchTrace> {
    let set = run(py, move || torch_trace::open_paths(&paths))?;
    Ok(TorchTrace { set: Arc::new(set) })
}
