"""Column definitions of the Nsight Systems tables (``gpuopt nsys kernels|api|mem|nvtx|gaps|comm|stats``).

Sources: ``rust/src/nsys/`` (kernels.rs, api.rs, memory.rs, nvtx/, timeline.rs, comm.rs) and nsys'
own report definitions, which the ``stats`` tables reproduce.
"""

from __future__ import annotations

# Statistics of one group's durations, as nsys stats prints them.
_DURATIONS = {
    "total_time_ns": "Sum of the durations in the group (ns)",
    "avg_ns": "Mean duration (ns)",
    "med_ns": "Median duration (ns; the mean of the two middle values when the count is even)",
    "min_ns": "Shortest duration (ns)",
    "max_ns": "Longest duration (ns)",
    "stddev_ns": "Sample standard deviation of the durations (n - 1; null below two values)",
}

_KERNELS = {
    "time_pct": "This kernel name's share of the summed kernel time of the selection (%)",
    **_DURATIONS,
    "total_time_ns": "Summed GPU execution time of every launch of this kernel name (end - start, ns); "
    "concurrent launches are each counted",
    "instances": "Launches of this kernel name",
    "name": "Demangled kernel name (shortName with --short-names)",
}

_API = {
    "time_pct": "This call name's share of the summed CUDA API time of the selection (%)",
    **_DURATIONS,
    "total_time_ns": "Summed host time spent inside calls of this name (ns; calls on different threads "
    "each count)",
    "num_calls": "Calls of this name",
    "name": "CUDA runtime or driver API name with the version suffix removed (cudaLaunchKernel)",
}

_MEMORY = {
    "device_id": "Device the operation ran on",
    "operation": "memcpy or memset",
    "copy_kind": "ENUM_CUDA_MEMCPY_OPER label (Host-to-Device, Device-to-Host, ...); Memset for memsets",
    "src_kind": "Memory kind of the source (Pageable, Pinned, Device, ...); null for memsets",
    "dst_kind": "Memory kind of the destination (Pageable, Pinned, Device, ...)",
    "host_memory": "The host side of a host-device copy (Pageable or Pinned); null when neither side is "
    "on the host",
    "count": "Operations in the group",
    "total_bytes": "Bytes moved or set by the group's operations",
    "total_time_ns": "Summed GPU duration of the group's operations (ns)",
    "bandwidth_gbps": "Achieved bandwidth: total_bytes / total_time_ns (GB/s, 1 GB = 1e9 bytes)",
    "median_op_bandwidth_gbps": "Median over the operations of each one's bytes / duration (GB/s)",
}

_NVTX_COMMON = {
    "range": "The range's tag DOMAIN:TEXT (the default domain prints as :TEXT)",
    "kernels": "Kernels (CUPTI_ACTIVITY_KIND_KERNEL rows) launched (API call on the range's thread, inside "
    "the range) while the range was open; counted once per tag even when ranges of that tag nest. A "
    "graph-level trace records no kernel inside a CUDA-graph execution: see graph_executions",
    "kernel_inclusive_ns": "Summed GPU time of those kernels, including kernels of nested ranges (ns); "
    "excludes graph executions (graph_inclusive_ns)",
    "kernel_exclusive_ns": "Summed GPU time of the kernels whose innermost enclosing range is this one "
    "(ns); excludes kernels launched inside nested ranges",
    "graph_executions": "CUDA-graph executions (CUPTI_ACTIVITY_KIND_GRAPH_TRACE rows of a graph-level "
    "trace) whose cudaGraphLaunch was made inside the range, by the same rule as kernels; 0 in a "
    "node-level trace, whose graph kernels count in kernels. nsys' nvtx_kern_sum leaves them out",
    "graph_inclusive_ns": "Summed GPU time of those graph executions (end - start of each execution, ns), "
    "including executions launched in nested ranges",
    "graph_exclusive_ns": "Summed GPU time of the graph executions whose innermost enclosing range is this "
    "one (ns)",
    "gpu_ops": "GPU operations (kernels, memcpys, memsets, graph executions) launched inside the range",
}

_NVTX_RANGES = {
    **_NVTX_COMMON,
    "instances": "Push/pop instances of this range in the selection (ended on the thread that pushed them)",
    "cpu_total_ns": "Summed host duration of the instances, push to pop (ns; open ranges end at the "
    "last NVTX timestamp)",
    "gpu_projected_ns": "Sum over instances of the GPU projection: the last end minus the first start "
    "of the GPU operations launched inside the instance (ns); includes idle time between them",
}

_NVTX_INSTANCES = {
    **_NVTX_COMMON,
    "pid": "Process id of the pushing thread",
    "tid": "Thread id that pushed and popped the range",
    "depth": "Push/pop ranges of the same thread enclosing this one (0 = outermost)",
    "start_ns": "Push time (ns, capture clock)",
    "end_ns": "Pop time (ns, capture clock; open ranges end at the last NVTX timestamp)",
    "cpu_ns": "end_ns - start_ns (ns)",
    "gpu_start_ns": "Start of the first GPU operation launched inside the range (ns); null when none",
    "gpu_end_ns": "End of the last GPU operation launched inside the range (ns); null when none",
    "gpu_projected_ns": "gpu_end_ns - gpu_start_ns: the range projected onto the GPU, idle time between "
    "its operations included (ns)",
}

_GAPS = {
    "device_id": "Device of the gap",
    "stream_id": "Stream of the gap; null for the device row (all streams merged)",
    "start_ns": "End of the operation before the gap (ns, capture clock)",
    "end_ns": "Start of the operation after the gap (ns, capture clock)",
    "duration_ns": "end_ns - start_ns: time with no GPU operation on this device or stream (ns)",
    "before": "The operation that ends before the gap (kernel name, [CUDA memcpy ...], ...)",
    "after": "The operation that starts after the gap",
}

# Shared with the PyTorch engine (rust/src/comm.rs), so the words mean the same in both.
COMM = {
    "device": "Device id",
    "stream": "Communication stream; null for the device row (all streams)",
    "kernels": "Kernels of the device (device row) or stream (stream row)",
    "comm_kernels": "Communication kernels: names starting nccl/rccl or containing gloo:",
    "comm_time_ns": "Summed duration of the communication kernels (ns; overlapping ones each count)",
    "comm_busy_ns": "Union of the communication kernels' intervals (ns)",
    "compute_busy_ns": "Union of the device's other kernels' intervals (ns); copies are neither",
    "overlap_ns": "Time communication and compute ran at once: |comm union ∩ compute union| (ns)",
    "exposed_comm_ns": "Communication not hidden by compute: comm_busy_ns - overlap_ns (ns)",
    "overlap_pct": "overlap_ns / comm_busy_ns (%; 0 without communication)",
}

_MEM_TIME = {
    "time_pct": "This operation kind's share of the summed memory-operation time (%)",
    **_DURATIONS,
    "count": "Operations of this kind",
    "operation": "[CUDA memcpy Host-to-Device], [CUDA memset], ... as nsys names them",
}

_MEM_SIZE = {
    "total_bytes": "Bytes moved or set by operations of this kind",
    "count": "Operations of this kind",
    "avg_bytes": "Mean bytes per operation",
    "med_bytes": "Median bytes per operation",
    "min_bytes": "Smallest operation (bytes)",
    "max_bytes": "Largest operation (bytes)",
    "stddev_bytes": "Sample standard deviation of the sizes (n - 1; null below two values)",
    "operation": "[CUDA memcpy Host-to-Device], [CUDA memset], ... as nsys names them",
}

_NVTX_SUM = {
    "time_pct": "This range's share of the summed NVTX range time (%)",
    **_DURATIONS,
    "total_time_ns": "Summed host duration of the range's instances (ns)",
    "instances": "Instances of this range",
    "style": "PushPop or StartEnd",
    "range": "The range's tag DOMAIN:TEXT",
}


def _exec_stat(prefix: str, what: str) -> dict[str, str]:
    return {
        f"{prefix}_avg_ns": f"Mean {what} (ns)",
        f"{prefix}_med_ns": f"Median {what} (ns)",
        f"{prefix}_min_ns": f"Shortest {what} (ns)",
        f"{prefix}_max_ns": f"Longest {what} (ns)",
        f"{prefix}_stddev_ns": f"Sample standard deviation of the {what} (ns)",
    }


_KERN_EXEC = {
    "pid": "Process that launched the kernels",
    "tid": "Thread that launched the kernels",
    "device_id": "Device the kernels ran on",
    "count": "Kernels of the group joined to their launch call",
    "q_count": "Kernels with a queue time >= 0 (those the q_* statistics describe)",
    **_exec_stat("t", "total time: max(API end, kernel end) - API start"),
    **_exec_stat("a", "launch API call duration"),
    **_exec_stat("q", "queue time: kernel start - API end, where >= 0"),
    **_exec_stat("k", "kernel duration"),
    "api_name": "The launch call (cudaLaunchKernel, ...), version suffix removed",
    "kernel_name": "Demangled kernel name",
}

_NVTX_KERN = {
    "range": "The range's tag DOMAIN:TEXT",
    "style": "PushPop or StartEnd",
    "pid": "Process id of the range",
    "tid": "Thread id of the range",
    "nvtx_instances": "Range instances that launched this kernel",
    "kernel_instances": "Launches of this kernel inside those instances",
    **_DURATIONS,
    "total_time_ns": "Summed GPU time of those kernel launches (ns)",
    "kernel_name": "Demangled kernel name",
}

TABLES: dict[str, dict[str, str]] = {
    "nsys.cuda_gpu_kern_sum": _KERNELS,
    "nsys.cuda_api_sum": _API,
    "nsys.memory": _MEMORY,
    "nsys.nvtx_ranges": _NVTX_RANGES,
    "nsys.nvtx_instances": _NVTX_INSTANCES,
    "nsys.gaps": _GAPS,
    "nsys.comm": COMM,
    "nsys.cuda_gpu_mem_time_sum": _MEM_TIME,
    "nsys.cuda_gpu_mem_size_sum": _MEM_SIZE,
    "nsys.nvtx_sum": _NVTX_SUM,
    "nsys.cuda_kern_exec_sum": _KERN_EXEC,
    "nsys.nvtx_kern_sum": _NVTX_KERN,
}
