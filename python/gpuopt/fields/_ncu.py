"""Column definitions of the Nsight Compute tables (``gpuopt ncu launches|summary|table|roofline|compare``).

Sources: ``rust/src/ncu/`` (metrics.rs holds the alias table: which ncu metric each fact reads) and
``references/ncu.md``. Values are in base units (ns, byte, hz, byte/s); a fact whose metric the report
lacks is null (``ncu summary`` lists the metric behind every fact).
"""

from __future__ import annotations

_LAUNCH_IDENTITY = {
    "launch_id": "Launch index in the report (ncu's ID)",
    "kernel_function": "ncu's base function name (no arguments or templates)",
}

_FACTS = {
    "duration_ns": "GPU duration of the launch (gpu__time_duration.sum, ns)",
    "elapsed_cycles": "Elapsed cycles (gpc__cycles_elapsed.max)",
    "sm_frequency_hz": "SM clock during the launch (gpc__cycles_elapsed.avg.per_second, Hz)",
    "dram_frequency_hz": "DRAM clock during the launch (dram__cycles_elapsed.avg.per_second, Hz)",
    "grid_size": "Blocks in the grid (launch__grid_size)",
    "block_size": "Threads per block (launch__block_size)",
    "threads": "Threads launched (launch__thread_count)",
    "waves_per_sm": "Full waves of blocks per SM at the theoretical occupancy "
    "(launch__waves_per_multiprocessor)",
    "registers_per_thread": "Registers per thread (launch__registers_per_thread)",
    "shared_mem_static_bytes_per_block": "Static shared memory per block (bytes)",
    "shared_mem_dynamic_bytes_per_block": "Dynamic shared memory per block (bytes)",
    "shared_mem_driver_bytes_per_block": "Shared memory the driver reserves per block (bytes)",
    "shared_mem_config_bytes": "Shared memory carve-out configured for the launch (bytes)",
    "sm_throughput_pct": "SM throughput, % of peak sustained over the elapsed time (sm__throughput)",
    "memory_throughput_pct": "Compute-memory throughput, % of peak (gpu__compute_memory_throughput): the "
    "busiest of DRAM, L2, L1 and shared memory",
    "dram_throughput_pct": "DRAM throughput, % of peak (gpu__dram_throughput)",
    "l1_throughput_pct": "L1/TEX throughput, % of peak while active (l1tex__throughput)",
    "l2_throughput_pct": "L2 throughput, % of peak (lts__throughput)",
    "achieved_occupancy_pct": "Active warps per active cycle as % of the SM's maximum (sm__warps_active)",
    "theoretical_occupancy_pct": "Occupancy the launch configuration allows "
    "(%, sm__maximum_warps_per_active_cycle_pct)",
    "achieved_active_warps_per_sm": "Mean active warps per SM per active cycle",
    "theoretical_active_warps_per_sm": "Warps per SM the launch configuration allows",
    "dram_bytes": "Bytes read from and written to DRAM (dram__bytes.sum, or read + write)",
    "dram_read_bytes": "Bytes read from DRAM (dram__bytes_read.sum)",
    "dram_write_bytes": "Bytes written to DRAM (dram__bytes_write.sum)",
    "dram_bandwidth_bytes_per_s": "DRAM bytes per second over the launch (dram__bytes.sum.per_second)",
    "l2_bytes": "Bytes through the L2 (lts__t_bytes.sum, or 32 x lts__t_sectors.sum)",
    "l2_hit_rate_pct": "L2 sector hit rate (%, lts__t_sector_hit_rate)",
    "l1_hit_rate_pct": "L1/TEX sector hit rate (%, l1tex__t_sector_hit_rate)",
    "l1_global_load_bytes": "Global-load bytes through L1/TEX (bytes)",
    "l1_global_store_bytes": "Global-store bytes through L1/TEX (bytes)",
    "local_load_bytes": "Local-memory load bytes (register spills and local arrays; bytes)",
    "local_store_bytes": "Local-memory store bytes (bytes)",
    "local_load_inst": "Local-memory load instructions executed (warp level)",
    "local_store_inst": "Local-memory store instructions executed (warp level)",
    "instructions_executed": "Warp instructions executed (smsp__inst_executed.sum)",
    "warp_cycles_per_issued_inst": "Mean cycles between a warp's issued instructions "
    "(smsp__average_warp_latency_per_inst_issued)",
    "tensor_pipe_active_pct": "Cycles the tensor pipe was active, % of peak while active",
    "tensor_hmma_pipe_active_pct": "Cycles the tensor HMMA pipe was active, % of peak while active",
}

_LAUNCHES = {
    **_LAUNCH_IDENTITY,
    "kernel_name": "Kernel name as the source printed it",
    "kernel_demangled": "Demangled kernel name",
    "kernel_mangled": "Mangled kernel name (.ncu-rep only)",
    "process_id": "Process that launched the kernel",
    "process_name": "Name of that process",
    "context_id": "CUDA context id",
    "stream_id": "CUDA stream id",
    "device_id": "Device index",
    "device_name": "Device name",
    "arch": "SM architecture (sm_90, ...)",
    "compute_capability": "Compute capability (9.0, ...)",
    "grid_x": "Grid size in x (blocks)",
    "grid_y": "Grid size in y (blocks)",
    "grid_z": "Grid size in z (blocks)",
    "block_x": "Block size in x (threads)",
    "block_y": "Block size in y (threads)",
    "block_z": "Block size in z (threads)",
    **_FACTS,
    "tool": "The tool that wrote the report (ncu)",
    "tool_version": "Its version",
    "source_format": "ncu-rep, or the CSV page read (raw, details, session)",
}

_KERNELS = {
    "kernel_name": "Kernel name as the source printed it",
    "kernel_function": "ncu's base function name",
    "grid": "Grid dimensions XxYxZ",
    "block": "Block dimensions XxYxZ",
    "launches": "Launches of this (kernel, grid, block): only these are averaged together",
    "launch_ids": "Their launch ids",
    "duration_ns_sum": "Summed duration of those launches (ns)",
    "duration_ns_mean": "Mean duration (ns)",
    "duration_ns_min": "Shortest duration (ns)",
    "duration_ns_max": "Longest duration (ns)",
    "sm_throughput_pct_mean": "Mean sm_throughput_pct over the launches",
    "memory_throughput_pct_mean": "Mean memory_throughput_pct over the launches",
    "dram_throughput_pct_mean": "Mean dram_throughput_pct over the launches",
    "achieved_occupancy_pct_mean": "Mean achieved_occupancy_pct over the launches",
    "dram_bytes_mean": "Mean dram_bytes over the launches",
    "registers_per_thread_mean": "Mean registers_per_thread over the launches",
}

_WARP_STALLS = {
    **_LAUNCH_IDENTITY,
    "reason": "Stall reason (long_scoreboard, barrier, ...)",
    "stall_cycles_per_issued_inst": "Warps stalled for this reason per issued instruction "
    "(smsp__average_warps_issue_stalled_*_per_issue_active.ratio)",
    "samples": "PC samples of warps stalled for this reason (smsp__pcsamp_warps_issue_stalled_*)",
    "samples_not_issued": "Of those, samples where the warp issued nothing (_not_issued)",
    "samples_pct": "samples as % of all PC samples of the launch (smsp__pcsamp_sample_count)",
}

_INSTRUCTION_MIX = {
    **_LAUNCH_IDENTITY,
    "opcode": "SASS opcode",
    "executed_inst": "Warp instructions of this opcode executed (sass__inst_executed_per_opcode)",
}

_RULES = {
    **_LAUNCH_IDENTITY,
    "section": "The section the rule belongs to",
    "rule": "Rule identifier",
    "rule_type": "INF, OPT, WRN or ERR as ncu reports it",
    "title": "ncu's title, verbatim",
    "message": "ncu's message, verbatim",
    "speedup_type": "ncu's speedup kind (local, global); null when none",
    "estimated_speedup_pct": "ncu's own estimate, verbatim (%); a claim of the tool, not a measurement",
}

_SECTIONS = {
    **_LAUNCH_IDENTITY,
    "section_id": "ncu's section identifier",
    "section": "Section name",
    "metrics": "Metrics the section holds for the launch",
}

_METRICS = {
    **_LAUNCH_IDENTITY,
    "metric": "ncu metric name",
    "section": "Section the metric appears in; null for raw metrics",
    "label": "ncu's display label",
    "unit": "Base unit after conversion (ns, byte, hz, byte/s, ...)",
    "value": "Value in that unit; null when not numeric",
    "text": "The value as ncu printed it",
    "unit_known": "True when ncu's unit is in gpuopt's unit table (else value is carried verbatim)",
    "used_by_facts": "True when a fact column of ncu launches reads this metric",
}

_ROOFLINE = {
    **_LAUNCH_IDENTITY,
    "precision": "fp64, fp32, fp16 or a tensor_* path",
    "flop": "Floating-point operations of the launch at this precision (FMA = 2)",
    "achieved_flop_per_s": "flop per second over the launch",
    "dram_bytes_per_s": "DRAM bytes per second over the launch",
    "arithmetic_intensity_flop_per_byte": "achieved_flop_per_s / dram_bytes_per_s",
    "peak_flop_per_s": "The ceiling used: the report's peak, or --peak-flops",
    "peak_flop_source": "report or user (--peak-flops)",
    "peak_dram_bytes_per_s": "The DRAM ceiling used: the report's, or --peak-dram-bytes-per-s",
    "peak_dram_source": "report or user",
    "ridge_flop_per_byte": "peak_flop_per_s / peak_dram_bytes_per_s: the intensity where the ceilings meet",
    "flop_pct_of_peak": "achieved_flop_per_s / peak_flop_per_s (%)",
    "dram_pct_of_peak": "dram_bytes_per_s / peak_dram_bytes_per_s (%)",
    "region": "bandwidth (intensity below the ridge) or compute: geometry under these ceilings, "
    "not a prediction",
}

_COMPARE = {
    "kernel_name": "Kernel name, matched between the reports",
    "metric": "A fact name (see ncu launches) or a raw metric given with --metric",
    "unit": "Its base unit",
    "a_launches": "Launches of the kernel in report A",
    "b_launches": "Launches of the kernel in report B",
    "a_values": "Launches in A that carry the metric",
    "b_values": "Launches in B that carry the metric",
    "a_mean": "Mean over A's values",
    "b_mean": "Mean over B's values",
    "delta": "b_mean - a_mean",
    "delta_pct": "100 x delta / a_mean (null when a_mean is 0 or absent)",
}

TABLES: dict[str, dict[str, str]] = {
    "ncu.launches": _LAUNCHES,
    "ncu.kernels": _KERNELS,
    "ncu.warp_stalls": _WARP_STALLS,
    "ncu.instruction_mix": _INSTRUCTION_MIX,
    "ncu.rules": _RULES,
    "ncu.sections": _SECTIONS,
    "ncu.metrics": _METRICS,
    "ncu.roofline": _ROOFLINE,
    "ncu.compare": _COMPARE,
}
