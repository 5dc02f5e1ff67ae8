"""Column definitions of the PyTorch-trace tables (``gpuopt torch ...``).

Sources: ``rust/src/torch_trace/`` (kernels.rs, ops.rs, steps.rs, timeline.rs, launches.rs, graphs.rs,
transfers.rs, collectives.rs, api.rs) and ``references/torch-trace.md``. Times are integer ns; ``*_ns``
instants count from the trace's first complete event unless a column says otherwise.
"""

from __future__ import annotations

from gpuopt.fields._nsys import COMM

_RANK = {"rank": "Rank of the trace (distributedInfo.rank; 0 for a single-process trace)"}

_STATS = {
    "count": "Events in the group",
    "total_ns": "Sum of their durations (ns; concurrent events each count)",
    "mean_ns": "Mean duration (ns)",
    "median_ns": "Median duration (ns; the mean of the two middle values when the count is even)",
    "min_ns": "Shortest duration (ns)",
    "max_ns": "Longest duration (ns)",
    "stddev_ns": "Sample standard deviation (n - 1; null below two events)",
}

_KERNELS = {
    **_RANK,
    "name": "Kernel name as the trace records it",
    "kind": "communication (nccl*/rccl* or containing gloo:) or compute",
    **_STATS,
    "count": "Launches of this kernel name on this rank",
    "share_pct": "total_ns as a share of the rank's summed kernel time (%)",
}

_API = {
    **_RANK,
    "name": "CUDA runtime or driver call name (cudaLaunchKernel, cuLaunchKernel, ...)",
    "category": "cuda_runtime or cuda_driver (Kineto's event category)",
    **_STATS,
    "count": "Calls of this name on this rank",
    "total_ns": "Summed host time inside calls of this name (ns; calls on different threads each count)",
    "share_pct": "total_ns as a share of the rank's summed runtime and driver call time (%)",
}

_OPS = {
    **_RANK,
    "name": "cpu_op name (aten::mm, ...)",
    "count": "Instances of this op (an instance nested in one of the same name counts too)",
    "total_cpu_ns": "Summed host duration of the instances (ns)",
    "self_cpu_ns": "Summed host duration minus the durations of direct children (nested ops, runtime "
    "calls) (ns)",
    "runtime_calls": "Runtime/driver calls whose innermost enclosing cpu_op is an instance of this op",
    "gpu_events": "GPU events (kernels, memcpys, memsets) launched directly by this op: through a call "
    "whose innermost cpu_op is the op",
    "gpu_time_ns": "Summed duration of gpu_events (ns): the op's own GPU work, nested ops' work excluded",
    "gpu_events_total": "GPU events launched by this op or any op nested inside it (each counted once "
    "per row)",
    "gpu_time_total_ns": "Summed duration of gpu_events_total (ns): the op's GPU work including nested "
    "ops'; rows of nested ops overlap, so do not add them up",
}

_STEPS = {
    **_RANK,
    "name": "The user_annotation's name (record_function label, ProfilerStep#N)",
    "kind": "profiler_step (ProfilerStep#N) or record_function",
    "pid": "Process of the range",
    "tid": "Thread of the range",
    "start_ns": "Range start (ns from the trace origin)",
    "cpu_duration_ns": "Host duration of the range (ns)",
    "runtime_calls": "Runtime/driver calls of the range's process that start inside the range (any thread)",
    "gpu_events": "GPU events launched by those calls",
    "gpu_time_ns": "Summed duration of those GPU events (ns; overlapping events each count)",
    "gpu_busy_ns": "Union of those GPU events' intervals (ns; overlap counted once)",
    "gpu_start_ns": "Start of the first of those GPU events (ns from the trace origin); null when none",
    "gpu_end_ns": "End of the last of those GPU events (ns from the trace origin); null when none",
    "gpu_annotation_ns": "Extent of the matching gpu_user_annotation Kineto wrote on the GPU side (ns); "
    "null when absent",
}

_TIMELINE = {
    **_RANK,
    "device": "Device id",
    "stream": "Stream id",
    "kernels": "Kernels on the stream",
    "memcpys": "Memcpy events on the stream",
    "memsets": "Memset events on the stream",
    "first_start_ns": "Start of the stream's first GPU event (ns from the trace origin)",
    "last_end_ns": "End of the stream's last GPU event (ns from the trace origin)",
    "window_ns": "last_end_ns - first_start_ns (ns)",
    "busy_ns": "Union of the stream's GPU event intervals (ns)",
    "idle_ns": "window_ns - busy_ns = host_wait_ns + kernel_wait_ns + other_idle_ns (ns)",
    "busy_pct": "busy_ns / window_ns (%): time utilization, not resource saturation",
    "gaps": "Idle gaps between busy spans",
    "largest_gap_ns": "Longest of those gaps (ns)",
    "host_wait_ns": "Idle time in gaps whose next event's runtime call started after the gap began "
    "(the host had not asked yet) (ns)",
    "kernel_wait_ns": "Idle time in other gaps shorter than 30 µs (HTA's threshold) (ns)",
    "other_idle_ns": "Idle time in the remaining gaps (ns)",
}

_GAPS = {
    **_RANK,
    "device": "Device id",
    "stream": "Stream id",
    "start_ns": "End of the busy span before the gap (ns from the trace origin)",
    "end_ns": "Start of the GPU event that ends the gap (ns from the trace origin)",
    "duration_ns": "end_ns - start_ns (ns)",
    "cause": "host_wait (the next event's call started after the gap began), kernel_wait (gap < 30 µs) "
    "or other",
    "next_kind": "Kind of the event that ends the gap: kernel, memcpy or memset",
    "next_name": "Name of the event that ends the gap",
}

_LAUNCHES = {
    **_RANK,
    "kind": "kernel, memcpy or memset",
    "name": "GPU event name",
    "device": "Device id",
    "stream": "Stream id",
    "start_ns": "GPU start (ns from the trace origin)",
    "duration_ns": "GPU duration (ns)",
    "correlation": "args.correlation: the id linking the event to its runtime call",
    "runtime_name": "The runtime/driver call that launched it; null when not in the trace",
    "call_start_ns": "Start of that call (ns from the trace origin)",
    "call_duration_ns": "Duration of that call (ns)",
    "latency_from_call_start_ns": "start_ns - call_start_ns (ns)",
    "latency_from_call_end_ns": "start_ns - (call_start_ns + call_duration_ns); negative when the event "
    "started before the call returned (ns)",
    "op_name": "The innermost cpu_op enclosing the call (else the one with its External id)",
    "grid_x": "Grid size in x (blocks)",
    "grid_y": "Grid size in y (blocks)",
    "grid_z": "Grid size in z (blocks)",
    "block_x": "Block size in x (threads)",
    "block_y": "Block size in y (threads)",
    "block_z": "Block size in z (threads)",
    "registers_per_thread": "Registers per thread (Kineto's args)",
    "shared_memory_bytes": "Shared memory per block (bytes, Kineto's args)",
    "occupancy_pct": "Kineto's 'est. achieved occupancy %': an estimate, not a measurement",
    "bytes": "Bytes moved or set (memcpy/memset)",
}

_GRAPHS = {
    **_RANK,
    "graph_key": "FNV-1a 64 hash of the ordered kernel names of an execution (16 hex digits); Kineto "
    "records no graph id, so identical sequences share a key",
    "device": "Device id",
    "first_kernel": "Name of the first kernel of an execution",
    "kernels_per_execution": "Kernels in one execution",
    "launches": "Graph launch calls (cudaGraphLaunch, ...) of this graph",
    "executions": "Executions of this graph (one per launch call)",
    "gpu_total_ns": "Summed GPU time per execution, first kernel start to last kernel end (ns)",
    "gpu_median_ns": "Nearest-rank median GPU time of an execution (ns)",
    "gpu_p90_ns": "Nearest-rank 90th percentile GPU time of an execution (ns)",
    "gpu_max_ns": "Longest execution (ns)",
    "host_median_ns": "Nearest-rank median duration of the launch call (ns)",
    "host_p90_ns": "Nearest-rank 90th percentile duration of the launch call (ns)",
    "host_max_ns": "Longest launch call (ns)",
    "launch_latency_median_ns": "Nearest-rank median of execution start - launch call start (ns)",
}

_TRANSFERS = {
    **_RANK,
    "kind": "memcpy or memset",
    "name": "Event name (Memcpy HtoD (Pageable -> Device), Memset (Device), ...)",
    "device": "Device id",
    "stream": "Stream id",
    "start_ns": "GPU start (ns from the trace origin)",
    "duration_ns": "GPU duration (ns)",
    "bytes": "Bytes moved or set; null when the trace does not say",
    "bandwidth_gbps": "bytes / duration_ns (GB/s, 1 GB = 1e9 bytes)",
}

_COLLECTIVES = {
    **_RANK,
    "name": "Kernel name",
    "collective": "Collective name from the args (allreduce, allgather, ...)",
    "dtype": "Element type from the args",
    "in_nelems": "Input elements (args 'In msg nelems')",
    "out_nelems": "Output elements (args 'Out msg nelems')",
    "group_size": "Ranks in the process group",
    "process_group": "Process group name or description from the args",
    "bytes_in": "in_nelems x the dtype's size (bytes)",
    "args_source": "Where the args were read: kernel (the kernel's own args) or op (its launching op)",
    "device": "Device id",
    "stream": "Stream id",
    "start_ns": "Kernel start (ns from the trace origin)",
    "duration_ns": "Kernel duration (ns)",
    "compute_overlap_ns": "Part of the kernel's interval during which a compute kernel ran on the same "
    "device (ns)",
    "compute_overlap_pct": "compute_overlap_ns / duration_ns (%)",
    "algbw_gbps": "Algorithm bandwidth as NCCL defines it: bytes_in / duration_ns (GB/s)",
}

_COMM = {**_RANK, **COMM, "stream": "Communication stream; null for the device row (all streams)"}

TABLES: dict[str, dict[str, str]] = {
    "torch.kernels": _KERNELS,
    "torch.api": _API,
    "torch.ops": _OPS,
    "torch.steps": _STEPS,
    "torch.streams": _TIMELINE,
    "torch.gaps": _GAPS,
    "torch.launches": _LAUNCHES,
    "torch.graphs": _GRAPHS,
    "torch.transfers": _TRANSFERS,
    "torch.collectives": _COLLECTIVES,
    "torch.comm": _COMM,
}
