//! Datasheet peaks per GPU model (`gpu_peaks.json` beside this file, documented with its sources in
//! `references/gpu-peaks.md`): dense FLOP/s per precision and memory bandwidth, for "% of peak"
//! facts. A GPU is found by the exact device name a trace or report records, or by its key
//! (`--gpu h100-sxm`); an unknown one has no peaks, never a guessed neighbour's.

use crate::error::{Error, Result};
use serde::{Deserialize, Serialize};
use std::sync::OnceLock;

/// Error codes of this module.
pub mod codes {
    /// `--gpu KEY` names no row of the table.
    pub const GPU_UNKNOWN: &str = "gpu_peaks_unknown";
}

const TABLE: &str = include_str!("gpu_peaks.json");

/// The precisions the table has a column for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Peak {
    Fp64,
    Fp64Tensor,
    Fp32,
    Tf32Tensor,
    Bf16Tensor,
    Fp16Tensor,
    Fp8Tensor,
}

impl Peak {
    pub fn as_str(self) -> &'static str {
        match self {
            Peak::Fp64 => "fp64",
            Peak::Fp64Tensor => "fp64_tensor",
            Peak::Fp32 => "fp32",
            Peak::Tf32Tensor => "tf32_tensor",
            Peak::Bf16Tensor => "bf16_tensor",
            Peak::Fp16Tensor => "fp16_tensor",
            Peak::Fp8Tensor => "fp8_tensor",
        }
    }
}

/// One row of the table (TFLOP/s dense, GB/s).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GpuPeaks {
    pub key: String,
    pub label: String,
    pub device_names: Vec<String>,
    pub fp64: Option<f64>,
    pub fp64_tensor: Option<f64>,
    pub fp32: Option<f64>,
    pub tf32_tensor: Option<f64>,
    pub bf16_tensor: Option<f64>,
    pub fp16_tensor: Option<f64>,
    pub fp8_tensor: Option<f64>,
    pub memory_gb_per_s: f64,
    pub source: String,
    pub date: String,
}

impl GpuPeaks {
    /// Peak of a precision in FLOP/s, when the datasheet gives one.
    pub fn flop_per_s(&self, peak: Peak) -> Option<f64> {
        let tflops = match peak {
            Peak::Fp64 => self.fp64,
            Peak::Fp64Tensor => self.fp64_tensor,
            Peak::Fp32 => self.fp32,
            Peak::Tf32Tensor => self.tf32_tensor,
            Peak::Bf16Tensor => self.bf16_tensor,
            Peak::Fp16Tensor => self.fp16_tensor,
            Peak::Fp8Tensor => self.fp8_tensor,
        };
        tflops.map(|t| t * 1e12)
    }

    /// Memory bandwidth in bytes/s.
    pub fn bytes_per_s(&self) -> f64 {
        self.memory_gb_per_s * 1e9
    }
}

#[derive(Deserialize)]
struct File {
    gpus: Vec<GpuPeaks>,
}

/// Every row of the table (read once; the file is part of the build, so a bad one fails a test).
pub fn table() -> &'static [GpuPeaks] {
    static ROWS: OnceLock<Vec<GpuPeaks>> = OnceLock::new();
    ROWS.get_or_init(|| {
        serde_json::from_str::<File>(TABLE)
            .map(|f| f.gpus)
            .unwrap_or_default()
    })
}

/// The row whose device names include `name` exactly (surrounding blanks ignored).
pub fn by_device_name(name: &str) -> Option<&'static GpuPeaks> {
    let name = name.trim();
    table()
        .iter()
        .find(|g| g.device_names.iter().any(|n| n == name))
}

/// The row of `key`; an unknown key is an input error naming the keys there are.
pub fn by_key(key: &str) -> Result<&'static GpuPeaks> {
    table().iter().find(|g| g.key == key).ok_or_else(|| {
        Error::input(
            codes::GPU_UNKNOWN,
            format!("no GPU named {key:?} in the datasheet peak table"),
        )
        .with_path("gpu")
        .with_expected(
            table()
                .iter()
                .map(|g| g.key.as_str())
                .collect::<Vec<_>>()
                .join(", "),
        )
    })
}

/// The table as JSON (for `gpuopt.flops.peaks()`).
pub fn table_json() -> &'static str {
    TABLE
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_reads_and_every_key_and_name_is_unique() {
        let rows = table();
        assert_eq!(rows.len(), 11);
        let mut keys: Vec<&str> = rows.iter().map(|g| g.key.as_str()).collect();
        keys.sort_unstable();
        keys.dedup();
        assert_eq!(keys.len(), rows.len());
        let mut names: Vec<&str> = rows
            .iter()
            .flat_map(|g| g.device_names.iter().map(String::as_str))
            .collect();
        let all = names.len();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), all);
    }

    #[test]
    fn lookups_by_name_and_key() {
        let h200 = by_device_name(" NVIDIA H200 ").unwrap();
        assert_eq!(h200.key, "h200");
        assert_eq!(h200.flop_per_s(Peak::Bf16Tensor), Some(989.5e12));
        assert_eq!(h200.bytes_per_s(), 4.8e12);
        assert!(by_device_name("NVIDIA H2000").is_none());
        assert_eq!(by_key("a100-sxm4-80gb").unwrap().memory_gb_per_s, 2039.0);
        assert_eq!(by_key("nope").unwrap_err().code, codes::GPU_UNKNOWN);
        assert_eq!(
            by_key("a100-sxm4-80gb")
                .unwrap()
                .flop_per_s(Peak::Fp8Tensor),
            None
        );
    }
}
