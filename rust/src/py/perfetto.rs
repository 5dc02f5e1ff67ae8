//! Bindings for Perfetto exports (`gpuopt nsys export perfetto`, `gpuopt torch export perfetto`).

use super::nsys::NsysReport;
use super::torch_trace::TorchTrace;
use super::{json, run};
use crate::nsys::select::Request;
use crate::perfetto::{FactTrack, Flagged, Options};
use pyo3::prelude::*;
use std::path::PathBuf;

/// A diff's flagged keys (`(key, change_pct)`) and fact tracks (`(name, [(start, end, label)])`).
type Keys = Vec<(String, Option<f64>)>;
type Tracks = Vec<(String, Vec<(i64, i64, String)>)>;

fn options(
    flagged_by: Option<String>,
    flagged: Keys,
    extra: Tracks,
    kernel_wait_ns: i64,
) -> Options {
    Options {
        flagged: flagged_by.map(|by| Flagged {
            by,
            keys: flagged
                .into_iter()
                .map(|(k, v)| (crate::perfetto::normalize(&k), v))
                .collect(),
        }),
        extra: extra
            .into_iter()
            .map(|(name, slices)| FactTrack { name, slices })
            .collect(),
        kernel_wait_threshold_ns: kernel_wait_ns,
    }
}

/// `torch_export_perfetto(trace, out, ...) -> bytes`: writes the trace; returns what was written.
#[pyfunction]
#[pyo3(signature = (trace, out, *, kernel_wait_threshold_ns, flagged_by=None, flagged=Vec::new(), extra=Vec::new()))]
pub fn torch_export_perfetto(
    py: Python<'_>,
    trace: &TorchTrace,
    out: PathBuf,
    kernel_wait_threshold_ns: i64,
    flagged_by: Option<String>,
    flagged: Keys,
    extra: Tracks,
) -> PyResult<Vec<u8>> {
    let set = trace.set();
    let opts = options(flagged_by, flagged, extra, kernel_wait_threshold_ns);
    let written = run(py, move || {
        crate::torch_trace::perfetto::export(&set, &out, &opts)
    })?;
    json(&written)
}

/// `nsys_export_perfetto(report, out, ...) -> bytes`: writes the export's trace; returns what was
/// written.
#[pyfunction]
#[pyo3(signature = (report, out, *, start=None, end=None, nvtx=None, all_api=false, flagged_by=None, flagged=Vec::new(), extra=Vec::new()))]
#[allow(clippy::too_many_arguments)]
pub fn nsys_export_perfetto(
    py: Python<'_>,
    report: &NsysReport,
    out: PathBuf,
    start: Option<i64>,
    end: Option<i64>,
    nvtx: Option<String>,
    all_api: bool,
    flagged_by: Option<String>,
    flagged: Keys,
    extra: Tracks,
) -> PyResult<Vec<u8>> {
    let r = report.report();
    let opts = options(flagged_by, flagged, extra, 0);
    let req = Request {
        window_start_ns: start,
        window_end_ns: end,
        nvtx,
        device: None,
    };
    let written = run(py, move || {
        crate::nsys::perfetto::export(&r, &req, &out, &opts, all_api)
            .map_err(|e| e.or_path(|| r.schema.path.display().to_string()))
    })?;
    json(&written)
}
