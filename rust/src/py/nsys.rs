//! Bindings for the Nsight Systems engine: one opened report object; facts come back as Arrow tables
//! or JSON documents.

use super::arrow::ArrowTable;
use super::boundary::to_pyerr;
use super::{json, run};
use crate::nsys::coverage::Coverage;
use crate::nsys::render;
use crate::nsys::select::Request;
use crate::nsys::Report;
use crate::table::Table;
use pyo3::prelude::*;
use std::path::PathBuf;
use std::sync::Arc;

/// An opened, validated nsys SQLite export.
#[pyclass(frozen, module = "gpuopt._native")]
pub struct NsysReport {
    pub(super) inner: Arc<Report>,
}

fn request(start: Option<i64>, end: Option<i64>, nvtx: Option<String>) -> Request {
    Request {
        window_start_ns: start,
        window_end_ns: end,
        nvtx,
        device: None,
    }
}

fn on_device(mut req: Request, device: Option<i64>) -> Request {
    req.device = device;
    req
}

/// `nsys_open(path) -> NsysReport`: validates the export and interns its strings.
#[pyfunction]
pub fn nsys_open(py: Python<'_>, path: PathBuf) -> PyResult<NsysReport> {
    let report = run(py, || Report::open(&path))?;
    Ok(NsysReport {
        inner: Arc::new(report),
    })
}

impl NsysReport {
    /// The opened export (for the bindings of other areas: perfetto).
    pub(crate) fn report(&self) -> Arc<Report> {
        Arc::clone(&self.inner)
    }

    /// `work` without the GIL ([`run`]), its errors naming this export: a data error found in a table
    /// (a NULL, an inverted interval) named the row but not the file, so a command over several
    /// exports could not tell which was bad.
    fn run_named<T, F>(&self, py: Python<'_>, work: F) -> PyResult<T>
    where
        T: Send,
        F: FnOnce(&Report) -> crate::error::Result<T> + Send,
    {
        let r = self.report();
        run(py, move || {
            work(&r).map_err(|e| e.or_path(|| r.schema.path.display().to_string()))
        })
    }
}

#[pymethods]
impl NsysReport {
    #[getter]
    fn path(&self) -> String {
        self.inner.schema.path.display().to_string()
    }

    /// The source tables this export has, by gpuopt's names (versioned `_V<n>` names resolved).
    fn captured_tables(&self) -> Vec<String> {
        self.inner
            .schema
            .resolved()
            .map(|t| t.logical.clone())
            .collect()
    }

    /// Tables in the file that no gpuopt fact reads.
    fn unread_tables(&self) -> Vec<String> {
        self.inner.schema.unread_tables()
    }

    /// Every device that ran GPU work (kernels, memcpys, memsets), ascending.
    fn devices(&self, py: Python<'_>) -> PyResult<Vec<i64>> {
        self.run_named(py, move |r| r.devices())
    }

    /// The export's identity and what it holds, as JSON.
    fn info_json(&self, py: Python<'_>) -> PyResult<Vec<u8>> {
        let doc = self.run_named(py, move |r| r.info())?;
        json(&doc)
    }

    /// The GPU timer's resolution (ns) the export's GPU durations show (1: no grid seen).
    fn timer_resolution_ns(&self, py: Python<'_>) -> PyResult<i64> {
        self.run_named(py, move |r| r.timer_resolution())
    }

    /// How CUDA graphs were traced: "graph", "node", "graph+node", or None.
    fn graph_trace_mode(&self, py: Python<'_>) -> PyResult<Option<String>> {
        self.run_named(py, move |r| r.graph_trace_mode())
    }

    #[pyo3(signature = (report, window_start_ns = None, window_end_ns = None, nvtx = None, device = None))]
    fn stats(
        &self,
        py: Python<'_>,
        report: String,
        window_start_ns: Option<i64>,
        window_end_ns: Option<i64>,
        nvtx: Option<String>,
        device: Option<i64>,
    ) -> PyResult<ArrowTable> {
        let req = on_device(request(window_start_ns, window_end_ns, nvtx), device);
        Ok(self.run_named(py, move |r| r.stats(&report, &req))?.into())
    }

    /// `stats_doc(report, ...) -> NsysStatsDoc`: one stats report, kept in native memory to be
    /// printed as CSV or as the `--json` envelope without a DataFrame.
    #[pyo3(signature = (report, window_start_ns = None, window_end_ns = None, nvtx = None))]
    fn stats_doc(
        &self,
        py: Python<'_>,
        report: String,
        window_start_ns: Option<i64>,
        window_end_ns: Option<i64>,
        nvtx: Option<String>,
    ) -> PyResult<NsysStatsDoc> {
        let req = request(window_start_ns, window_end_ns, nvtx.clone());
        let name = report.clone();
        let (table, coverage) =
            self.run_named(py, move |r| Ok((r.stats(&name, &req)?, r.coverage(&name)?)))?;
        Ok(NsysStatsDoc {
            path: self.inner.schema.path.display().to_string(),
            report,
            selection: (window_start_ns, window_end_ns, nvtx),
            table,
            coverage,
        })
    }

    #[pyo3(signature = (short_names = false, window_start_ns = None, window_end_ns = None, nvtx = None, device = None))]
    fn kernels(
        &self,
        py: Python<'_>,
        short_names: bool,
        window_start_ns: Option<i64>,
        window_end_ns: Option<i64>,
        nvtx: Option<String>,
        device: Option<i64>,
    ) -> PyResult<ArrowTable> {
        let req = on_device(request(window_start_ns, window_end_ns, nvtx), device);
        Ok(self
            .run_named(py, move |r| r.kernels(&req, short_names))?
            .into())
    }

    #[pyo3(signature = (window_start_ns = None, window_end_ns = None, nvtx = None, device = None))]
    fn memory(
        &self,
        py: Python<'_>,
        window_start_ns: Option<i64>,
        window_end_ns: Option<i64>,
        nvtx: Option<String>,
        device: Option<i64>,
    ) -> PyResult<ArrowTable> {
        let req = on_device(request(window_start_ns, window_end_ns, nvtx), device);
        Ok(self.run_named(py, move |r| r.memory(&req))?.into())
    }

    #[pyo3(signature = (per_instance = false, window_start_ns = None, window_end_ns = None, nvtx = None, device = None))]
    fn nvtx(
        &self,
        py: Python<'_>,
        per_instance: bool,
        window_start_ns: Option<i64>,
        window_end_ns: Option<i64>,
        nvtx: Option<String>,
        device: Option<i64>,
    ) -> PyResult<ArrowTable> {
        let req = on_device(request(window_start_ns, window_end_ns, nvtx), device);
        Ok(self
            .run_named(py, move |r| r.nvtx(&req, per_instance))?
            .into())
    }

    #[pyo3(signature = (window_start_ns = None, window_end_ns = None, nvtx = None))]
    fn comm(
        &self,
        py: Python<'_>,
        window_start_ns: Option<i64>,
        window_end_ns: Option<i64>,
        nvtx: Option<String>,
    ) -> PyResult<ArrowTable> {
        let req = request(window_start_ns, window_end_ns, nvtx);
        Ok(self.run_named(py, move |r| r.comm(&req))?.into())
    }

    /// Every gap; or (`top`) only the `top` longest, longest first; or (`first`) only the first `first`
    /// in the table's order (a heap of that many, not a sort of all).
    #[pyo3(signature = (window_start_ns = None, window_end_ns = None, nvtx = None, top = None, first = None))]
    fn gaps(
        &self,
        py: Python<'_>,
        window_start_ns: Option<i64>,
        window_end_ns: Option<i64>,
        nvtx: Option<String>,
        top: Option<usize>,
        first: Option<usize>,
    ) -> PyResult<ArrowTable> {
        use crate::nsys::timeline::GapKeep;
        let req = request(window_start_ns, window_end_ns, nvtx);
        let keep = match (top, first) {
            (Some(k), _) => GapKeep::Longest(k),
            (None, Some(k)) => GapKeep::First(k),
            (None, None) => GapKeep::All,
        };
        Ok(self.run_named(py, move |r| r.gaps(&req, keep))?.into())
    }

    /// One row per GPU operation (kernel, memcpy, memset, graph execution), clipped to the window.
    #[pyo3(signature = (window_start_ns = None, window_end_ns = None, nvtx = None))]
    fn operations(
        &self,
        py: Python<'_>,
        window_start_ns: Option<i64>,
        window_end_ns: Option<i64>,
        nvtx: Option<String>,
    ) -> PyResult<ArrowTable> {
        let req = request(window_start_ns, window_end_ns, nvtx);
        Ok(self.run_named(py, move |r| r.operations(&req))?.into())
    }

    /// Facts per CUDA graph (executions joined to their launch calls), as JSON.
    #[pyo3(signature = (window_start_ns = None, window_end_ns = None, nvtx = None))]
    fn graphs_json(
        &self,
        py: Python<'_>,
        window_start_ns: Option<i64>,
        window_end_ns: Option<i64>,
        nvtx: Option<String>,
    ) -> PyResult<Vec<u8>> {
        let req = request(window_start_ns, window_end_ns, nvtx);
        let doc = self.run_named(py, move |r| r.graphs(&req))?;
        json(&doc)
    }

    /// The timeline and the graph facts (as `timeline_json` and `graphs_json` give them) from one read
    /// of the operations and one join to their calls.
    #[pyo3(signature = (window_start_ns = None, window_end_ns = None, nvtx = None))]
    fn timeline_graphs_json(
        &self,
        py: Python<'_>,
        window_start_ns: Option<i64>,
        window_end_ns: Option<i64>,
        nvtx: Option<String>,
    ) -> PyResult<(Vec<u8>, Vec<u8>)> {
        let req = request(window_start_ns, window_end_ns, nvtx);
        let (timeline, graphs) = self.run_named(py, move |r| r.timeline_and_graphs(&req))?;
        Ok((json(&timeline)?, json(&graphs)?))
    }

    /// The GPU activity a fact leaves out (coverage flags), as JSON.
    fn coverage_json(&self, py: Python<'_>, fact: String) -> PyResult<Vec<u8>> {
        let doc = self.run_named(py, move |r| r.coverage(&fact))?;
        json(&doc)
    }

    #[pyo3(signature = (window_start_ns = None, window_end_ns = None, nvtx = None))]
    fn timeline_json(
        &self,
        py: Python<'_>,
        window_start_ns: Option<i64>,
        window_end_ns: Option<i64>,
        nvtx: Option<String>,
    ) -> PyResult<Vec<u8>> {
        let req = request(window_start_ns, window_end_ns, nvtx);
        let doc = self.run_named(py, move |r| r.timeline(&req))?;
        json(&doc)
    }
}

/// One computed stats report of one `.sqlite` export, rendered on demand (see `crate::nsys::render`).
#[pyclass(frozen, module = "gpuopt._native")]
pub struct NsysStatsDoc {
    path: String,
    report: String,
    selection: (Option<i64>, Option<i64>, Option<String>),
    table: Table,
    coverage: Vec<Coverage>,
}

#[pymethods]
impl NsysStatsDoc {
    /// `csv(path=None, missing=[]) -> str`: as `nsys stats --format csv` prints it (`missing`: the
    /// report's source tables the export lacks; with `path`, nsys's own SKIPPED line).
    #[pyo3(signature = (path = None, missing = Vec::new()))]
    fn csv(&self, path: Option<String>, missing: Vec<String>) -> PyResult<String> {
        render::stats_csv(&self.table, &self.report, path.as_deref(), &missing).map_err(to_pyerr)
    }

    /// `envelope(limit, schema, gpuopt_version, not_captured, identity) -> str`: the command's whole
    /// `--json` envelope as pydantic prints it; `identity` = (path, size_bytes, blake3, from_cache).
    fn envelope(
        &self,
        limit: usize,
        schema: &str,
        gpuopt_version: &str,
        not_captured: Vec<String>,
        identity: (String, u64, String, bool),
    ) -> PyResult<String> {
        let (window_start_ns, window_end_ns, nvtx) = self.selection.clone();
        let data = render::NsysTableDoc {
            path: self.path.clone(),
            source: None,
            selection: render::SelectionDoc {
                window_start_ns,
                window_end_ns,
                nvtx,
            },
            report: &self.report,
            not_captured,
            coverage: self.coverage.clone(),
            table: render::TableData::new(&self.report, &self.table, limit).map_err(to_pyerr)?,
        };
        let (path, size_bytes, blake3, from_cache) = identity;
        let input = render::FileIdentityDoc {
            path,
            size_bytes,
            blake3,
            from_cache,
        };
        render::envelope(schema, data, gpuopt_version, vec![input]).map_err(to_pyerr)
    }
}

/// `nsys_stats_reports() -> list[str]`: the `nsys stats` report names gpuopt reproduces.
#[pyfunction]
pub fn nsys_stats_reports() -> Vec<String> {
    crate::nsys::STATS_REPORTS
        .iter()
        .map(|s| (*s).to_string())
        .collect()
}

/// `nsys_ranks(paths, step) -> (ranks, collectives, stragglers, clock)`: one rank per process with
/// kernels, in file order then by pid (see `crate::nsys::ranks`).
#[pyfunction]
#[pyo3(signature = (paths, step = None))]
pub fn nsys_ranks(
    py: Python<'_>,
    paths: Vec<PathBuf>,
    step: Option<String>,
) -> PyResult<(ArrowTable, ArrowTable, ArrowTable, String)> {
    let (t, clock) = run(py, move || {
        crate::nsys::ranks::compare_files(&paths, step.as_deref())
    })?;
    Ok((
        t.ranks.into(),
        t.collectives.into(),
        t.stragglers.into(),
        clock.to_string(),
    ))
}
