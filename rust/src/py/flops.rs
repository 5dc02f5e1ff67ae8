//! Bindings for FLOPs and bandwidth (`gpuopt torch flops`) and the datasheet peak table.

use super::arrow::ArrowTable;
use super::torch_trace::TorchTrace;
use super::{json, run};
use crate::torch_trace::flops;
use pyo3::prelude::*;

/// `torch_flops(trace, gpu) -> (ops, steps, gpus_json, unmodeled_json)`: per-op FLOPs/bytes/rates,
/// per-step MFU, the peak row chosen per rank and the ops without a formula.
#[pyfunction]
#[pyo3(signature = (trace, gpu=None))]
pub fn torch_flops(
    py: Python<'_>,
    trace: &TorchTrace,
    gpu: Option<String>,
) -> PyResult<(ArrowTable, ArrowTable, Vec<u8>, Vec<u8>)> {
    let set = trace.set();
    let result = run(py, move || flops::flops(&set, gpu.as_deref()))?;
    let unmodeled: Vec<serde_json::Value> = result
        .unmodeled
        .iter()
        .map(|(name, why, n)| serde_json::json!({"name": name, "reason": why, "count": n}))
        .collect();
    Ok((
        result.ops.into(),
        result.steps.into(),
        json(&result.gpus)?,
        json(&unmodeled)?,
    ))
}

/// `gpu_peaks_json() -> bytes`: the datasheet peak table (`rust/src/peaks/gpu_peaks.json`).
#[pyfunction]
pub fn gpu_peaks_json() -> Vec<u8> {
    crate::peaks::table_json().as_bytes().to_vec()
}
