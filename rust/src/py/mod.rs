//! The only place that uses pyo3: thin functions that convert arguments, call an engine and map errors.

mod analyses;
mod arrow;
mod boundary;
mod fields;
mod flops;
mod identity;
mod map;
mod ncu;
mod nsys;
mod paths;
mod perfetto;
mod profile;
mod runtime;
mod sass;
mod stats;
mod store;
mod torch_trace;

use pyo3::prelude::*;

#[pymodule(gil_used = false)]
mod _native {
    #[pymodule_export]
    use super::analyses::{
        analysis_critical_path, analysis_detected_steps, analysis_iterations, analysis_queue,
        analysis_sequences,
    };
    #[pymodule_export]
    use super::arrow::ArrowTable;
    #[pymodule_export]
    use super::fields::table_fields_json;
    #[pymodule_export]
    use super::flops::{gpu_peaks_json, torch_flops};
    #[pymodule_export]
    use super::identity::{
        build_info_json, debug_panic, file_identities_table, file_identity_json,
    };
    #[pymodule_export]
    use super::map::map_account;
    #[pymodule_export]
    use super::ncu::{
        ncu_compare, ncu_from_columns, ncu_open_csv, ncu_rep_framing_json, ncu_unit, NcuReport,
    };
    #[pymodule_export]
    use super::nsys::{nsys_open, nsys_ranks, nsys_stats_reports, NsysReport, NsysStatsDoc};
    #[pymodule_export]
    use super::paths::{torch_kernel_paths, torch_paths};
    #[pymodule_export]
    use super::perfetto::{nsys_export_perfetto, torch_export_perfetto};
    #[pymodule_export]
    use super::profile::profile_diff_keys;
    #[pymodule_export]
    use super::runtime::{
        call_processes, group_exists, proc_alive, proc_info, reap_zombies, set_child_subreaper,
        settle, terminate,
    };
    #[pymodule_export]
    use super::sass::{sass_builtin_catalog, sass_scan_path, sass_scan_text};
    #[pymodule_export]
    use super::stats::compare::{
        stats_compare, stats_compare_unpaired, stats_constraint, stats_guardrail,
    };
    #[pymodule_export]
    use super::stats::files::{stats_compare_files, stats_noise_file};
    #[pymodule_export]
    use super::stats::noise::stats_noise;
    #[pymodule_export]
    use super::stats::seeded::{stats_input_seed, stats_rng_draws, stats_schedule, stats_simulate};
    #[pymodule_export]
    use super::stats::steps::{stats_mde_pct, stats_pair_effects, stats_summarize};
    #[pymodule_export]
    use super::store::{
        canonical_json, ledger_append, ledger_rewrite, rename_noreplace, storage_probe, store_cas,
        store_ensure_dir, store_exists, store_freeze, store_lock_fd, store_manifest,
        store_materialize, store_read, store_remove, store_replace, store_verify_objects,
        store_write_once, validate_id,
    };
    #[pymodule_export]
    use super::torch_trace::{torch_trace_open, torch_trace_open_paths, TorchTrace};

    use pyo3::prelude::*;

    #[pymodule_init]
    fn init(m: &Bound<'_, PyModule>) -> PyResult<()> {
        m.add("__version__", env!("CARGO_PKG_VERSION"))?;
        m.add("BUILD_ID", crate::build_info::build_info().build_id)?;
        Ok(())
    }
}

/// Serializes a document for Python; documents cross the boundary as JSON bytes.
pub(crate) fn json<T: serde::Serialize>(value: &T) -> PyResult<Vec<u8>> {
    serde_json::to_vec(value).map_err(|e| {
        boundary::to_pyerr(crate::error::Error::internal(
            "serialize_failed",
            e.to_string(),
        ))
    })
}

pub(crate) use boundary::run;
