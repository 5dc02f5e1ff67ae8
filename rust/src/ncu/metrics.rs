//! The versioned alias table: for every fact, the ncu metrics it may come from, in order of preference,
//! with the units each accepts. Metric names differ by ncu version and GPU architecture, so a fact lists
//! several candidates; the first candidate whose metrics the report carries is the one used, and the
//! report states which one (`fact_sources`). `seen_in` records the (ncu version, arch) generations where
//! a candidate was verified against real output; the tests pin every resolution on both fixture
//! generations (ncu 2025.3.1 on sm_90, ncu 2024.1.1 on sm_80).
//!
//! The details page printed with labels (ncu's default) is mapped back to metric names by
//! `labels::LABELS`, verified value by value against the raw page of the same report.

/// Version of the alias and label tables; bump it when a resolution changes.
pub const ALIAS_TABLE_VERSION: &str = "ncu-aliases/1";

/// `(ncu version prefix, architecture)` pairs the tables were verified on.
pub const VERIFIED_ON: &[(&str, &str)] = &[("2025.3.1", "sm_90"), ("2024.1.1", "sm_80")];

const V2025_3: &str = "2025.3.1/sm_90";
const V2024_1: &str = "2024.1.1/sm_80";
const BOTH: &[&str] = &[V2025_3, V2024_1];

/// One way to obtain a fact: `scale × Σ terms`.
#[derive(Debug, Clone, Copy)]
pub struct Candidate {
    pub terms: &'static [&'static str],
    /// Base units each term may carry (after normalisation).
    pub units: &'static [&'static str],
    pub scale: f64,
    pub seen_in: &'static [&'static str],
}

/// A fact: its output name (unit in the name), its unit, what it means (the column's declaration in
/// `ncu launches`, see `fields.rs`), its candidates in order of preference.
#[derive(Debug, Clone, Copy)]
pub struct Fact {
    pub name: &'static str,
    pub unit: &'static str,
    pub meaning: &'static str,
    pub candidates: &'static [Candidate],
}

const fn one(metric: &'static [&'static str], units: &'static [&'static str]) -> Candidate {
    Candidate {
        terms: metric,
        units,
        scale: 1.0,
        seen_in: BOTH,
    }
}

const fn unseen(metric: &'static [&'static str], units: &'static [&'static str]) -> Candidate {
    Candidate {
        terms: metric,
        units,
        scale: 1.0,
        seen_in: &[],
    }
}

/// ncu's sector is an aligned 32-byte chunk; `*_sectors` counts become bytes by this factor.
const SECTOR_BYTES: f64 = 32.0;

const fn sectors(metric: &'static [&'static str]) -> Candidate {
    Candidate {
        terms: metric,
        units: &["sector"],
        scale: SECTOR_BYTES,
        seen_in: BOTH,
    }
}

const PCT: &[&str] = &["%"];
const COUNT: &[&str] = &[""];
const BYTE: &[&str] = &["byte"];
const INST: &[&str] = &["inst"];

/// Every per-launch numeric fact, in output column order.
pub const FACTS: &[Fact] = &[
    Fact {
        name: "duration_ns",
        unit: "ns",
        meaning: "GPU duration of the launch (gpu__time_duration.sum, ns)",
        candidates: &[one(&["gpu__time_duration.sum"], &["ns"])],
    },
    Fact {
        name: "elapsed_cycles",
        unit: "cycle",
        meaning: "Elapsed cycles (gpc__cycles_elapsed.max)",
        candidates: &[one(&["gpc__cycles_elapsed.max"], &["cycle"])],
    },
    Fact {
        name: "sm_frequency_hz",
        unit: "hz",
        meaning: "SM clock during the launch (gpc__cycles_elapsed.avg.per_second, Hz)",
        candidates: &[one(&["gpc__cycles_elapsed.avg.per_second"], &["hz"])],
    },
    Fact {
        name: "dram_frequency_hz",
        unit: "hz",
        meaning: "DRAM clock during the launch (dram__cycles_elapsed.avg.per_second, Hz)",
        candidates: &[one(&["dram__cycles_elapsed.avg.per_second"], &["hz"])],
    },
    Fact {
        name: "grid_size",
        unit: "",
        meaning: "Blocks in the grid (launch__grid_size)",
        candidates: &[one(&["launch__grid_size"], COUNT)],
    },
    Fact {
        name: "block_size",
        unit: "",
        meaning: "Threads per block (launch__block_size)",
        candidates: &[one(&["launch__block_size"], COUNT)],
    },
    Fact {
        name: "threads",
        unit: "thread",
        meaning: "Threads launched (launch__thread_count)",
        candidates: &[one(&["launch__thread_count"], &["thread"])],
    },
    Fact {
        name: "waves_per_sm",
        unit: "",
        meaning: "Full waves of blocks per SM at the theoretical occupancy (launch__waves_per_multiprocessor)",
        candidates: &[one(&["launch__waves_per_multiprocessor"], COUNT)],
    },
    Fact {
        name: "registers_per_thread",
        unit: "register/thread",
        meaning: "Registers per thread (launch__registers_per_thread)",
        candidates: &[one(&["launch__registers_per_thread"], &["register/thread"])],
    },
    Fact {
        name: "shared_mem_static_bytes_per_block",
        unit: "byte/block",
        meaning: "Static shared memory per block (bytes)",
        candidates: &[one(
            &["launch__shared_mem_per_block_static"],
            &["byte/block"],
        )],
    },
    Fact {
        name: "shared_mem_dynamic_bytes_per_block",
        unit: "byte/block",
        meaning: "Dynamic shared memory per block (bytes)",
        candidates: &[one(
            &["launch__shared_mem_per_block_dynamic"],
            &["byte/block"],
        )],
    },
    Fact {
        name: "shared_mem_driver_bytes_per_block",
        unit: "byte/block",
        meaning: "Shared memory the driver reserves per block (bytes)",
        candidates: &[one(
            &["launch__shared_mem_per_block_driver"],
            &["byte/block"],
        )],
    },
    Fact {
        name: "shared_mem_config_bytes",
        unit: "byte",
        meaning: "Shared memory carve-out configured for the launch (bytes)",
        candidates: &[one(&["launch__shared_mem_config_size"], BYTE)],
    },
    Fact {
        name: "sm_throughput_pct",
        unit: "%",
        meaning: "SM throughput, % of peak sustained over the elapsed time (sm__throughput)",
        candidates: &[one(
            &["sm__throughput.avg.pct_of_peak_sustained_elapsed"],
            PCT,
        )],
    },
    Fact {
        name: "memory_throughput_pct",
        unit: "%",
        meaning: "Compute-memory throughput, % of peak (gpu__compute_memory_throughput): the busiest of DRAM, L2, L1 and shared memory",
        candidates: &[one(
            &["gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed"],
            PCT,
        )],
    },
    Fact {
        name: "dram_throughput_pct",
        unit: "%",
        meaning: "DRAM throughput, % of peak (gpu__dram_throughput)",
        candidates: &[
            one(
                &["gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed"],
                PCT,
            ),
            unseen(&["dram__throughput.avg.pct_of_peak_sustained_elapsed"], PCT),
        ],
    },
    Fact {
        name: "l1_throughput_pct",
        unit: "%",
        meaning: "L1/TEX throughput, % of peak while active (l1tex__throughput)",
        candidates: &[one(
            &["l1tex__throughput.avg.pct_of_peak_sustained_active"],
            PCT,
        )],
    },
    Fact {
        name: "l2_throughput_pct",
        unit: "%",
        meaning: "L2 throughput, % of peak (lts__throughput)",
        candidates: &[one(
            &["lts__throughput.avg.pct_of_peak_sustained_elapsed"],
            PCT,
        )],
    },
    Fact {
        name: "achieved_occupancy_pct",
        unit: "%",
        meaning: "Active warps per active cycle as % of the SM's maximum (sm__warps_active)",
        candidates: &[one(
            &["sm__warps_active.avg.pct_of_peak_sustained_active"],
            PCT,
        )],
    },
    Fact {
        name: "theoretical_occupancy_pct",
        unit: "%",
        meaning: "Occupancy the launch configuration allows (%, sm__maximum_warps_per_active_cycle_pct)",
        candidates: &[one(&["sm__maximum_warps_per_active_cycle_pct"], PCT)],
    },
    Fact {
        name: "achieved_active_warps_per_sm",
        unit: "warp",
        meaning: "Mean active warps per SM per active cycle",
        candidates: &[one(&["sm__warps_active.avg.per_cycle_active"], &["warp"])],
    },
    Fact {
        name: "theoretical_active_warps_per_sm",
        unit: "warp",
        meaning: "Warps per SM the launch configuration allows",
        candidates: &[one(&["sm__maximum_warps_avg_per_active_cycle"], &["warp"])],
    },
    Fact {
        name: "dram_bytes",
        unit: "byte",
        meaning: "Bytes read from and written to DRAM (dram__bytes.sum, or read + write)",
        candidates: &[
            unseen(&["dram__bytes.sum"], BYTE),
            one(&["dram__bytes_read.sum", "dram__bytes_write.sum"], BYTE),
        ],
    },
    Fact {
        name: "dram_read_bytes",
        unit: "byte",
        meaning: "Bytes read from DRAM (dram__bytes_read.sum)",
        candidates: &[one(&["dram__bytes_read.sum"], BYTE)],
    },
    Fact {
        name: "dram_write_bytes",
        unit: "byte",
        meaning: "Bytes written to DRAM (dram__bytes_write.sum)",
        candidates: &[one(&["dram__bytes_write.sum"], BYTE)],
    },
    Fact {
        name: "dram_bandwidth_bytes_per_s",
        unit: "byte/s",
        meaning: "DRAM bytes per second over the launch (dram__bytes.sum.per_second)",
        candidates: &[one(&["dram__bytes.sum.per_second"], &["byte/s"])],
    },
    Fact {
        name: "l2_bytes",
        unit: "byte",
        meaning: "Bytes through the L2 (lts__t_bytes.sum, or 32 x lts__t_sectors.sum)",
        candidates: &[
            unseen(&["lts__t_bytes.sum"], BYTE),
            sectors(&["lts__t_sectors.sum"]),
        ],
    },
    Fact {
        name: "l2_hit_rate_pct",
        unit: "%",
        meaning: "L2 sector hit rate (%, lts__t_sector_hit_rate)",
        candidates: &[one(&["lts__t_sector_hit_rate.pct"], PCT)],
    },
    Fact {
        name: "l1_hit_rate_pct",
        unit: "%",
        meaning: "L1/TEX sector hit rate (%, l1tex__t_sector_hit_rate)",
        candidates: &[one(&["l1tex__t_sector_hit_rate.pct"], PCT)],
    },
    Fact {
        name: "l1_global_load_bytes",
        unit: "byte",
        meaning: "Global-load bytes through L1/TEX (bytes)",
        candidates: &[
            unseen(&["l1tex__t_bytes_pipe_lsu_mem_global_op_ld.sum"], BYTE),
            sectors(&["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"]),
        ],
    },
    Fact {
        name: "l1_global_store_bytes",
        unit: "byte",
        meaning: "Global-store bytes through L1/TEX (bytes)",
        candidates: &[
            unseen(&["l1tex__t_bytes_pipe_lsu_mem_global_op_st.sum"], BYTE),
            sectors(&["l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"]),
        ],
    },
    Fact {
        name: "local_load_bytes",
        unit: "byte",
        meaning: "Local-memory load bytes (register spills and local arrays; bytes)",
        candidates: &[
            unseen(&["l1tex__t_bytes_pipe_lsu_mem_local_op_ld.sum"], BYTE),
            sectors(&["l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum"]),
        ],
    },
    Fact {
        name: "local_store_bytes",
        unit: "byte",
        meaning: "Local-memory store bytes (bytes)",
        candidates: &[
            unseen(&["l1tex__t_bytes_pipe_lsu_mem_local_op_st.sum"], BYTE),
            sectors(&["l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum"]),
        ],
    },
    Fact {
        name: "local_load_inst",
        unit: "inst",
        meaning: "Local-memory load instructions executed (warp level)",
        candidates: &[
            one(&["smsp__sass_inst_executed_op_local_ld.sum"], INST),
            one(&["sass__inst_executed_local_loads"], INST),
        ],
    },
    Fact {
        name: "local_store_inst",
        unit: "inst",
        meaning: "Local-memory store instructions executed (warp level)",
        candidates: &[
            one(&["smsp__sass_inst_executed_op_local_st.sum"], INST),
            one(&["sass__inst_executed_local_stores"], INST),
        ],
    },
    Fact {
        name: "instructions_executed",
        unit: "inst",
        meaning: "Warp instructions executed (smsp__inst_executed.sum)",
        candidates: &[one(&["smsp__inst_executed.sum"], INST)],
    },
    Fact {
        name: "warp_cycles_per_issued_inst",
        unit: "cycle",
        meaning: "Mean cycles between a warp's issued instructions (smsp__average_warp_latency_per_inst_issued)",
        candidates: &[one(
            &["smsp__average_warp_latency_per_inst_issued.ratio"],
            &["cycle"],
        )],
    },
    Fact {
        name: "tensor_pipe_active_pct",
        unit: "%",
        meaning: "Cycles the tensor pipe was active, % of peak while active",
        candidates: &[one(
            &["sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active"],
            PCT,
        )],
    },
    Fact {
        name: "tensor_hmma_pipe_active_pct",
        unit: "%",
        meaning: "Cycles the tensor HMMA pipe was active, % of peak while active",
        candidates: &[one(
            &["sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active"],
            PCT,
        )],
    },
];

/// Text facts (device and launch attributes that are strings).
pub const TEXT_FACTS: &[(&str, &str)] = &[
    ("device_name", "device__attribute_display_name"),
    ("cc_major", "device__attribute_compute_capability_major"),
    ("cc_minor", "device__attribute_compute_capability_minor"),
];

/// Warp-stall metric families: per-reason metric = prefix + reason + suffix.
pub const STALL_CYCLES: (&str, &str) = (
    "smsp__average_warps_issue_stalled_",
    "_per_issue_active.ratio",
);
pub const STALL_SAMPLES: &str = "smsp__pcsamp_warps_issue_stalled_";
pub const STALL_SAMPLES_NOT_ISSUED: &str = "_not_issued";
pub const STALL_SAMPLE_TOTAL: &str = "smsp__pcsamp_sample_count";
/// Stall reasons spelled differently in the two families: `(cycles family, samples family)`.
pub const STALL_REASON_SPELLINGS: &[(&str, &str)] = &[("no_instruction", "no_instructions")];
/// Units a stall-sample count may carry (ncu labels some reasons in `branches` or `inst`).
pub const STALL_SAMPLE_UNITS: &[&str] = &["warp", "branches", "inst", ""];

/// Instanced metric holding the per-opcode executed-instruction counts.
pub const OPCODE_MIX: &str = "sass__inst_executed_per_opcode";

/// Whether `(tool version, arch)` is one the tables were verified on.
pub fn verified(tool_version: Option<&str>, arch: Option<&str>) -> bool {
    match (tool_version, arch) {
        (Some(v), Some(a)) => VERIFIED_ON
            .iter()
            .any(|(vp, va)| v.starts_with(vp) && a == *va),
        _ => false,
    }
}

/// The metric names a set of facts may read (for marking everything else unmodeled).
pub fn fact_metric_names() -> impl Iterator<Item = &'static str> {
    FACTS
        .iter()
        .flat_map(|f| f.candidates.iter())
        .flat_map(|c| c.terms.iter().copied())
        .chain(TEXT_FACTS.iter().map(|(_, m)| *m))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fact_names_are_unique_and_carry_units_in_their_names() {
        let mut names: Vec<&str> = FACTS.iter().map(|f| f.name).collect();
        let total = names.len();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), total);
        for fact in FACTS {
            assert!(!fact.candidates.is_empty(), "{}", fact.name);
            let suffix_ok = match fact.unit {
                "%" => fact.name.ends_with("_pct"),
                "ns" => fact.name.ends_with("_ns"),
                "hz" => fact.name.ends_with("_hz"),
                "byte" => fact.name.ends_with("_bytes"),
                "byte/s" => fact.name.ends_with("_bytes_per_s"),
                "byte/block" => fact.name.ends_with("_bytes_per_block"),
                _ => true,
            };
            assert!(suffix_ok, "{} ({})", fact.name, fact.unit);
        }
    }

    #[test]
    fn verification_needs_version_and_arch() {
        assert!(verified(Some("2025.3.1.0"), Some("sm_90")));
        assert!(!verified(Some("2025.3.1.0"), Some("sm_80")));
        assert!(!verified(None, Some("sm_90")));
    }
}
