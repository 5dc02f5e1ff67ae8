//! Bindings for the Nsight Compute engine: open a report once, then take its tables.

use super::arrow::ArrowTable;
use super::{json, run};
use crate::ncu::{
    columns, compare, kernels, launches, long_table, model::Report, open, report, roofline,
    sections, stalls,
};
use pyo3::prelude::*;
use std::path::PathBuf;
use std::sync::Arc;

/// A parsed Nsight Compute report held natively; every table is built from it on request.
#[pyclass(frozen, module = "gpuopt._native")]
pub struct NcuReport {
    inner: Arc<Report>,
    /// The file it was read from: an error found while building a table names it.
    shown: String,
}

impl NcuReport {
    fn table<F>(&self, py: Python<'_>, build: F) -> PyResult<ArrowTable>
    where
        F: FnOnce(&Report) -> crate::error::Result<crate::table::Table> + Send,
    {
        let (report, shown) = (self.inner.clone(), self.shown.clone());
        let named = move || {
            build(&report).map_err(|e| match e.path {
                Some(_) => e,
                None => e.with_path(shown),
            })
        };
        Ok(run(py, named)?.into())
    }
}

#[pymethods]
impl NcuReport {
    /// JSON description: format, tool, fact sources, alias/unit table versions, roofline coverage.
    fn info_json(&self, py: Python<'_>) -> PyResult<Vec<u8>> {
        let report = self.inner.clone();
        let info = run(py, move || open::info(&report))?;
        json(&info)
    }

    /// JSON list of `{kind, name, count}`: what the report carries that no fact uses.
    fn unmodeled_json(&self, py: Python<'_>) -> PyResult<Vec<u8>> {
        let report = self.inner.clone();
        let items = run(py, move || long_table::unmodeled(&report))?;
        json(&items)
    }

    fn launches(&self, py: Python<'_>) -> PyResult<ArrowTable> {
        self.table(py, launches::launches_table)
    }

    fn kernels(&self, py: Python<'_>) -> PyResult<ArrowTable> {
        self.table(py, kernels::kernels_table)
    }

    fn warp_stalls(&self, py: Python<'_>) -> PyResult<ArrowTable> {
        self.table(py, stalls::warp_stalls_table)
    }

    fn instruction_mix(&self, py: Python<'_>) -> PyResult<ArrowTable> {
        self.table(py, sections::instruction_mix_table)
    }

    fn rules(&self, py: Python<'_>) -> PyResult<ArrowTable> {
        self.table(py, sections::rules_table)
    }

    fn sections(&self, py: Python<'_>) -> PyResult<ArrowTable> {
        self.table(py, sections::sections_table)
    }

    fn metrics(&self, py: Python<'_>) -> PyResult<ArrowTable> {
        self.table(py, long_table::metrics_table)
    }

    #[pyo3(signature = (peak_flop_per_s, peak_dram_bytes_per_s = None))]
    fn roofline(
        &self,
        py: Python<'_>,
        peak_flop_per_s: Vec<(String, f64)>,
        peak_dram_bytes_per_s: Option<f64>,
    ) -> PyResult<ArrowTable> {
        let peaks = roofline::Peaks {
            flop_per_s: peak_flop_per_s,
            dram_bytes_per_s: peak_dram_bytes_per_s,
        };
        self.table(py, move |r| roofline::roofline_table(r, &peaks))
    }

    #[getter]
    fn num_launches(&self) -> usize {
        self.inner.launches.len()
    }
}

/// `ncu_open_csv(path, session=None, details=None) -> NcuReport`: a raw or details page.
#[pyfunction]
#[pyo3(signature = (path, session = None, details = None))]
pub fn ncu_open_csv(
    py: Python<'_>,
    path: PathBuf,
    session: Option<PathBuf>,
    details: Option<PathBuf>,
) -> PyResult<NcuReport> {
    let report = run(py, || {
        open::open_csv(&path, session.as_deref(), details.as_deref())
    })?;
    Ok(NcuReport {
        inner: Arc::new(report),
        shown: path.display().to_string(),
    })
}

/// `ncu_rep_framing_json(path) -> bytes`: the native check of an `.ncu-rep` file's framing.
#[pyfunction]
pub fn ncu_rep_framing_json(py: Python<'_>, path: PathBuf) -> PyResult<Vec<u8>> {
    let framing = run(py, || report::read_framing(&path))?;
    json(&framing)
}

/// `ncu_from_columns(path, extras_json, launch, name, unit, kind, number, text) -> NcuReport`.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
pub fn ncu_from_columns(
    py: Python<'_>,
    path: PathBuf,
    extras_json: Vec<u8>,
    launch: Vec<u32>,
    name: Vec<String>,
    unit: Vec<String>,
    kind: Vec<u8>,
    number: Vec<f64>,
    text: Vec<String>,
) -> PyResult<NcuReport> {
    let cells = columns::MetricCells {
        launch,
        name,
        unit,
        kind,
        number,
        text,
    };
    let report = run(py, || {
        // A compressed report's framing is not read natively: the reader's own count stands.
        let framing = if report::is_compressed(&path) {
            None
        } else {
            Some(report::read_framing(&path)?)
        };
        columns::from_columns(framing.as_ref(), &extras_json, &cells)
            .map_err(|e| e.with_path(path.display().to_string()))
    })?;
    Ok(NcuReport {
        inner: Arc::new(report),
        shown: path.display().to_string(),
    })
}

/// `ncu_compare(a, b, metrics) -> ArrowTable`: per-kernel deltas between two reports.
#[pyfunction]
pub fn ncu_compare(
    py: Python<'_>,
    a: &NcuReport,
    b: &NcuReport,
    metrics: Vec<String>,
) -> PyResult<ArrowTable> {
    let (a, b) = (a.inner.clone(), b.inner.clone());
    let table = run(py, move || compare::compare_table(&a, &b, &metrics))?;
    Ok(table.into())
}

/// `ncu_unit(unit) -> (base, factor) | None`: gpuopt's unit table.
#[pyfunction]
pub fn ncu_unit(unit: &str) -> Option<(String, f64)> {
    crate::ncu::units::resolve(unit).map(|u| (u.base.to_string(), u.factor))
}
