//! The columns of the Nsight Compute tables (`gpuopt ncu launches|summary|table|roofline|compare`),
//! declared once: name, type, unit and meaning (see `crate::column`). Values are in base units (ns,
//! byte, hz, byte/s); a fact whose metric the report lacks is null. The facts of `ncu launches` are
//! declared in the alias table (`metrics::FACTS`: name, unit, meaning, metrics), this file places
//! them; every builder goes through `cells::table`, which refuses a column not declared here.

use super::metrics::FACTS;
use crate::column::{Column, Declared, Unit};

const KERNEL_FUNCTION: Column = Column::text(
    "kernel_function",
    "ncu's base function name (no arguments or templates)",
);
const KERNEL_NAME: Column = Column::text("kernel_name", "Kernel name as the source printed it");
const LAUNCH_ID: Column = Column::int(
    "launch_id",
    Unit::Id,
    "Launch index in the report (ncu's ID)",
);

/// `ncu.compare`
pub const COMPARE: &[Column] = &[
    Column::text("kernel_name", "Kernel name, matched between the reports"),
    Column::text(
        "metric",
        "A fact name (see ncu launches) or a raw metric given with --metric",
    ),
    Column::text("unit", "Its base unit"),
    Column::int(
        "a_launches",
        Unit::Count,
        "Launches of the kernel in report A",
    ),
    Column::int(
        "b_launches",
        Unit::Count,
        "Launches of the kernel in report B",
    ),
    Column::int(
        "a_values",
        Unit::Count,
        "Launches in A that carry the metric",
    ),
    Column::int(
        "b_values",
        Unit::Count,
        "Launches in B that carry the metric",
    ),
    Column::float("a_mean", Unit::PerRow, "Mean over A's values"),
    Column::float("b_mean", Unit::PerRow, "Mean over B's values"),
    Column::float("delta", Unit::PerRow, "b_mean - a_mean"),
    Column::float(
        "delta_pct",
        Unit::Pct,
        "100 x delta / a_mean (null when a_mean is 0 or absent)",
    ),
];

/// `ncu.instruction_mix`
pub const INSTRUCTION_MIX: &[Column] = &[
    LAUNCH_ID,
    KERNEL_FUNCTION,
    Column::text("opcode", "SASS opcode"),
    Column::float(
        "executed_inst",
        Unit::Count,
        "Warp instructions of this opcode executed (sass__inst_executed_per_opcode)",
    ),
];

/// `ncu.kernels` (what `gpuopt ncu summary` prints); the `*_mean` columns follow `KERNEL_MEANS`
pub const KERNELS: &[Column] = &[
    KERNEL_NAME,
    Column::text("kernel_function", "ncu's base function name"),
    Column::text("grid", "Grid dimensions XxYxZ"),
    Column::text("block", "Block dimensions XxYxZ"),
    Column::int(
        "launches",
        Unit::Count,
        "Launches of this (kernel, grid, block): only these are averaged together",
    ),
    Column::text("launch_ids", "Their launch ids"),
    Column::float(
        "duration_ns_sum",
        Unit::Ns,
        "Summed duration of those launches (ns)",
    ),
    Column::float(
        "duration_ns_mean",
        Unit::Ns,
        "Mean duration of the kernel's profiled launches (ns)",
    ),
    Column::float("duration_ns_min", Unit::Ns, "Shortest duration (ns)"),
    Column::float("duration_ns_max", Unit::Ns, "Longest duration (ns)"),
    Column::float(
        "sm_throughput_pct_mean",
        Unit::Pct,
        "Mean sm_throughput_pct over the launches",
    ),
    Column::float(
        "memory_throughput_pct_mean",
        Unit::Pct,
        "Mean memory_throughput_pct over the launches",
    ),
    Column::float(
        "dram_throughput_pct_mean",
        Unit::Pct,
        "Mean dram_throughput_pct over the launches",
    ),
    Column::float(
        "achieved_occupancy_pct_mean",
        Unit::Pct,
        "Mean achieved_occupancy_pct over the launches",
    ),
    Column::float(
        "dram_bytes_mean",
        Unit::Bytes,
        "Mean dram_bytes over the launches",
    ),
    Column::float(
        "registers_per_thread_mean",
        Unit::Count,
        "Mean registers_per_thread over the launches",
    ),
];

/// `ncu.launches`, first the launch's identity, then its facts (`metrics::FACTS`), then the source.
const LAUNCH_IDENTITY: &[Column] = &[
    LAUNCH_ID,
    KERNEL_NAME,
    Column::text(
        "kernel_demangled",
        "The kernel's demangled C++ name (with its template and argument list)",
    ),
    KERNEL_FUNCTION,
    Column::text("kernel_mangled", "Mangled kernel name (.ncu-rep only)"),
    Column::int("process_id", Unit::Id, "Process that launched the kernel"),
    Column::text("process_name", "Name of that process"),
    Column::int("context_id", Unit::Id, "CUDA context id"),
    Column::int("stream_id", Unit::Id, "CUDA stream id"),
    Column::int("device_id", Unit::Id, "Device index"),
    Column::text(
        "device_name",
        "The GPU's product name as the report records it (e.g. NVIDIA H200)",
    ),
    Column::text("arch", "SM architecture (sm_90, ...)"),
    Column::text("compute_capability", "Compute capability (9.0, ...)"),
    Column::int("grid_x", Unit::Count, "Grid size in x (blocks)"),
    Column::int("grid_y", Unit::Count, "Grid size in y (blocks)"),
    Column::int("grid_z", Unit::Count, "Grid size in z (blocks)"),
    Column::int("block_x", Unit::Count, "Block size in x (threads)"),
    Column::int("block_y", Unit::Count, "Block size in y (threads)"),
    Column::int("block_z", Unit::Count, "Block size in z (threads)"),
];

const LAUNCH_SOURCE: &[Column] = &[
    Column::text("tool", "The tool that wrote the report (ncu)"),
    Column::text(
        "tool_version",
        "The version of that tool as the report records it",
    ),
    Column::text(
        "source_format",
        "ncu-rep, or the CSV page read (raw, details, session)",
    ),
];

/// The columns of `ncu launches`: identity, one per fact of the alias table, source.
pub fn launches() -> Vec<Column> {
    let facts = FACTS
        .iter()
        .map(|f| Column::float(f.name, unit_of(f.unit), f.meaning));
    LAUNCH_IDENTITY
        .iter()
        .copied()
        .chain(facts)
        .chain(LAUNCH_SOURCE.iter().copied())
        .collect()
}

/// The column unit of a fact's ncu unit (`byte/block` is bytes, `inst` and `warp` are counts).
fn unit_of(ncu_unit: &str) -> Unit {
    match ncu_unit {
        "ns" => Unit::Ns,
        "cycle" => Unit::Cycles,
        "hz" => Unit::Hz,
        "%" => Unit::Pct,
        "byte" | "byte/block" => Unit::Bytes,
        "byte/s" => Unit::BytesPerS,
        _ => Unit::Count,
    }
}

/// `ncu.metrics`
pub const METRICS: &[Column] = &[
    LAUNCH_ID,
    KERNEL_FUNCTION,
    Column::text("metric", "ncu metric name"),
    Column::text(
        "section",
        "Section the metric appears in; null for raw metrics",
    ),
    Column::text("label", "ncu's display label"),
    Column::text(
        "unit",
        "Base unit after conversion (ns, byte, hz, byte/s, ...)",
    ),
    Column::float(
        "value",
        Unit::PerRow,
        "Value in that unit; null when not numeric",
    ),
    Column::text("text", "The value as ncu printed it"),
    Column::flag(
        "unit_known",
        "True when ncu's unit is in gpuopt's unit table (else value is carried verbatim)",
    ),
    Column::flag(
        "used_by_facts",
        "True when a fact column of ncu launches reads this metric",
    ),
];

/// `ncu.roofline`
pub const ROOFLINE: &[Column] = &[
    LAUNCH_ID,
    KERNEL_FUNCTION,
    Column::text("precision", "fp64, fp32, fp16 or a tensor_* path"),
    Column::float("flop", Unit::Flop, "Floating-point operations of the launch at this precision (FMA = 2)"),
    Column::float("achieved_flop_per_s", Unit::FlopPerS, "flop per second over the launch"),
    Column::float("dram_bytes_per_s", Unit::BytesPerS, "DRAM bytes per second over the launch"),
    Column::float("arithmetic_intensity_flop_per_byte", Unit::FlopPerByte, "achieved_flop_per_s / dram_bytes_per_s"),
    Column::float("peak_flop_per_s", Unit::FlopPerS, "The ceiling used: the report's peak, or --peak-flops"),
    Column::text("peak_flop_source", "report or user (--peak-flops)"),
    Column::float("peak_dram_bytes_per_s", Unit::BytesPerS, "The DRAM ceiling used: the report's, or --peak-dram-bytes-per-s"),
    Column::text("peak_dram_source", "report or user"),
    Column::float("ridge_flop_per_byte", Unit::FlopPerByte, "peak_flop_per_s / peak_dram_bytes_per_s: the intensity where the ceilings meet"),
    Column::float("flop_pct_of_peak", Unit::Pct, "achieved_flop_per_s / peak_flop_per_s (%)"),
    Column::float("dram_pct_of_peak", Unit::Pct, "dram_bytes_per_s / peak_dram_bytes_per_s (%)"),
    Column::text("region", "bandwidth (intensity below the ridge) or compute: geometry under these ceilings, not a prediction"),
];

/// `ncu.rules`
pub const RULES: &[Column] = &[
    LAUNCH_ID,
    KERNEL_FUNCTION,
    Column::text("section", "The section the rule belongs to"),
    Column::text("rule", "Rule identifier"),
    Column::text("rule_type", "INF, OPT, WRN or ERR as ncu reports it"),
    Column::text("title", "ncu's title, verbatim"),
    Column::text("message", "ncu's message, verbatim"),
    Column::text(
        "speedup_type",
        "ncu's speedup kind (local, global); null when none",
    ),
    Column::float(
        "estimated_speedup_pct",
        Unit::Pct,
        "ncu's own estimate, verbatim (%); a claim of the tool, not a measurement",
    ),
];

/// `ncu.sections`
pub const SECTIONS: &[Column] = &[
    LAUNCH_ID,
    KERNEL_FUNCTION,
    Column::text("section_id", "ncu's section identifier"),
    Column::text(
        "section",
        "The section's display name as ncu prints it (e.g. Memory Workload Analysis)",
    ),
    Column::int(
        "metrics",
        Unit::Count,
        "Metrics the section holds for the launch",
    ),
];

/// `ncu.warp_stalls`
pub const WARP_STALLS: &[Column] = &[
    LAUNCH_ID,
    KERNEL_FUNCTION,
    Column::text("reason", "Stall reason (long_scoreboard, barrier, ...)"),
    Column::float("stall_cycles_per_issued_inst", Unit::Ratio, "Warps stalled for this reason per issued instruction (smsp__average_warps_issue_stalled_*_per_issue_active.ratio)"),
    Column::float("samples", Unit::Count, "PC samples of warps stalled for this reason (smsp__pcsamp_warps_issue_stalled_*)"),
    Column::float("samples_not_issued", Unit::Count, "Of those, samples where the warp issued nothing (_not_issued)"),
    Column::float("samples_pct", Unit::Pct, "samples as % of all PC samples of the launch (smsp__pcsamp_sample_count)"),
];

/// Every table of the engine, by its `gpuopt schema` key.
pub fn tables() -> Vec<Declared> {
    vec![
        Declared::new("ncu.compare", COMPARE),
        Declared::new("ncu.instruction_mix", INSTRUCTION_MIX),
        Declared::new("ncu.kernels", KERNELS),
        Declared::new("ncu.launches", &launches()),
        Declared::new("ncu.metrics", METRICS),
        Declared::new("ncu.roofline", ROOFLINE),
        Declared::new("ncu.rules", RULES),
        Declared::new("ncu.sections", SECTIONS),
        Declared::new("ncu.warp_stalls", WARP_STALLS),
    ]
}
