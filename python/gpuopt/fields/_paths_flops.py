"""Column definitions of the call-path and FLOPs tables (``gpuopt torch paths``, ``gpuopt torch flops``).

Sources: ``rust/src/torch_trace/paths/`` and ``rust/src/torch_trace/flops/``, ``references/paths.md``
and ``references/flops.md``.
"""

from __future__ import annotations

from gpuopt.fields._ncu import TABLES as _NCU

_RANK = {"rank": "Rank of the trace (distributedInfo.rank; 0 for a single-process trace)"}

_PATHS = {
    **_RANK,
    "path_id": "Row number of the path in depth-first order (its children follow it)",
    "parent_path_id": "path_id of the enclosing path; null at the top",
    "depth": "Ranges on the path (1: nothing encloses it)",
    "kind": "The path's last range: op (cpu_op) or annotation (record_function)",
    "name": "The path's last range's name",
    "path": "The ranges' names, outermost first, joined by ' > ' (ProfilerStep#N and python_function "
    "ranges are see-through)",
    "instances": "Host ranges whose path is exactly this one",
    "cpu_inclusive_ns": "Summed duration of those ranges (ns)",
    "cpu_exclusive_ns": "Summed duration minus their direct children (nested ranges and runtime calls) (ns)",
    "gpu_events_inclusive": "GPU events launched by calls on this path or any path under it",
    "gpu_inclusive_ns": "Summed duration of gpu_events_inclusive (ns; durations, not their union)",
    "gpu_events_exclusive": "GPU events launched by calls whose path is exactly this one",
    "gpu_exclusive_ns": "Summed duration of gpu_events_exclusive (ns)",
    "graph_replay_events_inclusive": "The part of gpu_events_inclusive run by CUDA graph replays "
    "(cudaGraphLaunch)",
    "graph_replay_inclusive_ns": "The part of gpu_inclusive_ns run by CUDA graph replays (ns)",
}

_KERNEL_PATHS = {
    **_RANK,
    "path_id": "The path (gpuopt torch paths) of the launching call; null: no range encloses the call, or "
    "no call launched the event",
    "path": "The path's ranges, outermost first, joined by ' > '",
    "call": "The runtime/driver call that launched the events (cudaGraphLaunch for a graph replay); null "
    "when unlinked",
    "launch": "direct (a launch of its own), graph_replay (part of a cudaGraphLaunch) or unlinked (no "
    "call in the trace has its correlation id)",
    "name": "GPU event name (kernel, memcpy or memset)",
    "kind": "kernel, memcpy or memset",
    "events": "GPU events in the group",
    "gpu_time_ns": "Summed duration of those events (ns)",
}

_FLOPS = {
    **_RANK,
    "name": "cpu_op name",
    "class": "Formula: gemm, conv, attention, attention_backward, elementwise, reduction, norm, copy, "
    "fill; view/composite (no work of their own); unmodeled (no formula: see note)",
    "precision": "Element type the work is done in (bf16, fp16, fp8, fp32, fp64, int, complex)",
    "input_dims": "The op's Input Dims as recorded (JSON)",
    "input_types": "The op's Input type as recorded (JSON)",
    "counted": "True when no enclosing op has a formula: counted rows add up to the trace's FLOPs "
    "(aten::linear is counted, the aten::mm inside it is not)",
    "instances": "Instances with this op name, shapes and counted flag",
    "flop": "FLOPs of one instance from the shapes (GEMMs 2·M·N·K); null when unmodeled",
    "bytes": "Least bytes one instance moves: every tensor argument read once, every output written once",
    "total_flop": "flop x instances",
    "total_bytes": "bytes x instances",
    "gpu_events": "GPU events the instances launched, nested ops' included",
    "gpu_time_ns": "Summed duration of those events (ns)",
    "achieved_tflop_per_s": "total_flop / gpu_time_ns (TFLOP/s)",
    "achieved_gb_per_s": "total_bytes / gpu_time_ns (GB/s, decimal)",
    "arithmetic_intensity_flop_per_byte": "flop / bytes",
    "peak": "The datasheet column compared with: bf16_tensor, fp16_tensor, fp8_tensor, fp64_tensor "
    "(matrix work), fp32, fp64; null when the datasheet has none for this precision",
    "peak_tflop_per_s": "That peak (TFLOP/s, dense)",
    "flop_pct_of_peak": "achieved_tflop_per_s / peak_tflop_per_s (%)",
    "peak_gb_per_s": "The GPU's datasheet memory bandwidth (GB/s)",
    "bandwidth_pct_of_peak": "achieved_gb_per_s / peak_gb_per_s (%)",
    "note": "Why the row is unmodeled, or what its bytes leave out",
}

_FLOPS_STEPS = {
    **_RANK,
    "step": "ProfilerStep#N (or (trace) for a trace without steps)",
    "start_ns": "Step start (ns from the trace origin)",
    "duration_ns": "Step duration on the host (ns)",
    "model_flop": "FLOPs of the counted GEMM, convolution and attention ops that start in the step (any "
    "thread of its process)",
    "total_flop": "FLOPs of every counted op that starts in the step",
    "model_tflop_per_s": "model_flop / duration_ns (TFLOP/s)",
    "mfu_pct": "Model FLOPs utilisation: sum over precisions of model_flop / (duration x the dense "
    "datasheet peak of that precision) (%); null when a precision has no peak or no GPU row was chosen",
    "peak_basis": "The precisions of the model FLOPs and the datasheet column each was compared with",
    "counted_gpu_time_ns": "GPU time launched by the counted ops of the step (ns)",
    "gpu_time_ns": "GPU time launched by every runtime call that starts in the step (ns)",
}

_NCU_FLOPS = {
    **_NCU["ncu.roofline"],
    "device_name": "The launch's GPU as the report names it",
    "datasheet_gpu": "The datasheet row used (references/gpu-peaks.md); null when the GPU is not in the "
    "table",
    "datasheet_peak": "The datasheet column compared with (fp64, fp32, bf16_tensor, ...; 'sparse' for a "
    "sparsity_on tensor path); null where the datasheets give no figure (fp16 HFMA2 pipe, integer paths)",
    "datasheet_peak_tflop_per_s": "That peak (TFLOP/s; a sparse path's is twice the dense figure)",
    "flop_pct_of_datasheet_peak": "achieved_flop_per_s / datasheet peak (%)",
    "datasheet_peak_gb_per_s": "The GPU's datasheet memory bandwidth (GB/s)",
    "dram_pct_of_datasheet_peak": "dram_bytes_per_s / datasheet memory bandwidth (%)",
}

TABLES: dict[str, dict[str, str]] = {
    "ncu.flops": _NCU_FLOPS,
    "torch.paths": _PATHS,
    "torch.kernel_paths": _KERNEL_PATHS,
    "torch.flops": _FLOPS,
    "torch.flops_steps": _FLOPS_STEPS,
}
