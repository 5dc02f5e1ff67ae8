//! The details page's labels mapped back to metric names, verified against the raw page.

/// `(section display name, label, metric)`: the details page's labels mapped back to metric names.
/// Verified against the raw page of the 2025.3.1 fixture (every launch's value equals within the
/// details page's printed precision); a label not listed stays a `Section: Label` column.
pub const LABELS: &[(&str, &str, &str)] = &[
    (
        "GPU Speed Of Light Throughput",
        "Duration",
        "gpu__time_duration.sum",
    ),
    (
        "GPU Speed Of Light Throughput",
        "Elapsed Cycles",
        "gpc__cycles_elapsed.max",
    ),
    (
        "GPU Speed Of Light Throughput",
        "SM Frequency",
        "gpc__cycles_elapsed.avg.per_second",
    ),
    (
        "GPU Speed Of Light Throughput",
        "DRAM Frequency",
        "dram__cycles_elapsed.avg.per_second",
    ),
    (
        "GPU Speed Of Light Throughput",
        "SM Active Cycles",
        "sm__cycles_active.avg",
    ),
    (
        "GPU Speed Of Light Throughput",
        "Compute (SM) Throughput",
        "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    ),
    (
        "GPU Speed Of Light Throughput",
        "Memory Throughput",
        "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
    ),
    (
        "GPU Speed Of Light Throughput",
        "DRAM Throughput",
        "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
    ),
    (
        "GPU Speed Of Light Throughput",
        "L1/TEX Cache Throughput",
        "l1tex__throughput.avg.pct_of_peak_sustained_active",
    ),
    (
        "GPU Speed Of Light Throughput",
        "L2 Cache Throughput",
        "lts__throughput.avg.pct_of_peak_sustained_elapsed",
    ),
    ("Launch Statistics", "Block Size", "launch__block_size"),
    ("Launch Statistics", "Grid Size", "launch__grid_size"),
    ("Launch Statistics", "Threads", "launch__thread_count"),
    (
        "Launch Statistics",
        "Waves Per SM",
        "launch__waves_per_multiprocessor",
    ),
    (
        "Launch Statistics",
        "Registers Per Thread",
        "launch__registers_per_thread",
    ),
    ("Launch Statistics", "# SMs", "launch__sm_count"),
    (
        "Launch Statistics",
        "Shared Memory Configuration Size",
        "launch__shared_mem_config_size",
    ),
    (
        "Launch Statistics",
        "Driver Shared Memory Per Block",
        "launch__shared_mem_per_block_driver",
    ),
    (
        "Launch Statistics",
        "Dynamic Shared Memory Per Block",
        "launch__shared_mem_per_block_dynamic",
    ),
    (
        "Launch Statistics",
        "Static Shared Memory Per Block",
        "launch__shared_mem_per_block_static",
    ),
    (
        "Occupancy",
        "Theoretical Occupancy",
        "sm__maximum_warps_per_active_cycle_pct",
    ),
    (
        "Occupancy",
        "Achieved Occupancy",
        "sm__warps_active.avg.pct_of_peak_sustained_active",
    ),
    (
        "Occupancy",
        "Achieved Active Warps Per SM",
        "sm__warps_active.avg.per_cycle_active",
    ),
    (
        "Occupancy",
        "Theoretical Active Warps per SM",
        "sm__maximum_warps_avg_per_active_cycle",
    ),
    (
        "Occupancy",
        "Block Limit Registers",
        "launch__occupancy_limit_registers",
    ),
    (
        "Occupancy",
        "Block Limit Warps",
        "launch__occupancy_limit_warps",
    ),
    (
        "Memory Workload Analysis",
        "Memory Throughput",
        "dram__bytes.sum.per_second",
    ),
    (
        "Memory Workload Analysis",
        "L1/TEX Hit Rate",
        "l1tex__t_sector_hit_rate.pct",
    ),
    (
        "Memory Workload Analysis",
        "L2 Hit Rate",
        "lts__t_sector_hit_rate.pct",
    ),
    (
        "Memory Workload Analysis",
        "Mem Busy",
        "gpu__compute_memory_access_throughput.avg.pct_of_peak_sustained_elapsed",
    ),
    (
        "Memory Workload Analysis",
        "Max Bandwidth",
        "gpu__compute_memory_request_throughput.avg.pct_of_peak_sustained_elapsed",
    ),
    (
        "Memory Workload Analysis",
        "Mem Pipes Busy",
        "sm__memory_throughput.avg.pct_of_peak_sustained_elapsed",
    ),
    (
        "Warp State Statistics",
        "Warp Cycles Per Issued Instruction",
        "smsp__average_warp_latency_per_inst_issued.ratio",
    ),
    (
        "Warp State Statistics",
        "Warp Cycles Per Executed Instruction",
        "smsp__average_warps_active_per_inst_executed.ratio",
    ),
    (
        "Instruction Statistics",
        "Executed Instructions",
        "smsp__inst_executed.sum",
    ),
    (
        "Instruction Statistics",
        "Issued Instructions",
        "smsp__inst_issued.sum",
    ),
    (
        "Compute Workload Analysis",
        "Executed Ipc Elapsed",
        "sm__inst_executed.avg.per_cycle_elapsed",
    ),
    (
        "Compute Workload Analysis",
        "SM Busy",
        "sm__instruction_throughput.avg.pct_of_peak_sustained_elapsed",
    ),
    (
        "Scheduler Statistics",
        "Active Warps Per Scheduler",
        "smsp__warps_active.avg.per_cycle_active",
    ),
    (
        "Scheduler Statistics",
        "Eligible Warps Per Scheduler",
        "smsp__warps_eligible.avg.per_cycle_active",
    ),
    (
        "Scheduler Statistics",
        "Issued Warp Per Scheduler",
        "smsp__issue_active.avg.per_cycle_active",
    ),
    (
        "Source Counters",
        "Branch Instructions",
        "smsp__inst_executed_op_branch.sum",
    ),
];

/// The metric a details-page label stands for, if the table knows it.
pub fn label_metric(section: &str, label: &str) -> Option<&'static str> {
    LABELS
        .iter()
        .find(|(s, l, _)| *s == section && *l == label)
        .map(|(_, _, m)| *m)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_resolve_by_section() {
        assert_eq!(
            label_metric("GPU Speed Of Light Throughput", "Memory Throughput"),
            Some("gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed")
        );
        assert_eq!(
            label_metric("Memory Workload Analysis", "Memory Throughput"),
            Some("dram__bytes.sum.per_second")
        );
        assert_eq!(label_metric("Occupancy", "Unknown Label"), None);
    }
}
