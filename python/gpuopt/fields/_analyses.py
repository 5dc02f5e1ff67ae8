"""Column definitions of the analyses' tables
(``gpuopt nsys|torch iterations|critical-path|queue|sequences``).

Source: ``rust/src/analyses/`` (iterations.rs, critical.rs, queue.rs, sequences.rs) and
``references/analyses.md``. Times are integer ns: on the capture clock for nsys, from the trace's first
complete event for Kineto traces (a ``rank`` column comes first there).
"""

from __future__ import annotations

_RANK = {"rank": "Rank of the trace (distributedInfo.rank; 0 for a single-process trace)"}

ITERATIONS = {
    "device_id": "The device whose GPU operations the row counts",
    "source": "Where the row's boundaries come from: detected (the launch sequence's repeat), or the marker "
    "kind: nvtx, record_function, profiler_step",
    "row": "0-based position among the rows of this device and source",
    "iteration": "1-based iteration number; null for work outside the iterations (odd by position)",
    "name": "The range's name (marker rows); null for detected rows and work outside ranges",
    "thread": "The range's thread as pid/tid (marker rows)",
    "host_start_ns": "Range start (marker rows), or the start of the call that launched the row's first "
    "operation (detected rows)",
    "start_ns": "Start of the row's first GPU operation",
    "end_ns": "End of the row's last GPU operation",
    "span_ns": "end_ns - the previous row's end_ns (completion to completion: rows tile the GPU timeline); "
    "the first row: end_ns - start_ns",
    "extent_ns": "end_ns - start_ns: first start to last end of the row's own operations",
    "gpu_busy_ns": "Union of the row's operations on the GPU (concurrent work counted once)",
    "kernels": "Kernels in the row",
    "memory_ops": "Memcpys and memsets in the row",
    "graph_executions": "CUDA-graph executions recorded whole (nsys graph-level traces)",
    "gpu_ops": "GPU operations in the row (kernels, memory operations, graph executions)",
    "odd": "Why the row is odd, or null: before_first_repeat, after_last_repeat, breaks_repeat, "
    "before_first_range, after_last_range, other_range, warm_up, straggler, sequence_differs, kernels_differ",
    "odd_rule": "The rule that made it odd, with the row's numbers",
}

CRITICAL_PATH = {
    "device_id": "The step's device",
    "source": "The iteration source of the steps (detected or the marker kind)",
    "row": "The step's row in the iterations table (same device and source)",
    "iteration": "1-based iteration number; null for work outside the iterations",
    "name": "The range's name (marker steps)",
    "start_ns": "The step's start: its range start, or the launch of its first operation",
    "end_ns": "When the step's last event ended (an operation, or a call of its threads)",
    "span_ns": "end_ns - start_ns: the path's length; the six categories sum to it",
    "cpu_ns": "Path time on the host between calls (Python, the framework, calls that neither launch "
    "nor wait)",
    "launch_ns": "Path time inside launch calls",
    "gpu_compute_ns": "Path time running kernels and graph executions",
    "gpu_memory_ns": "Path time running memcpys and memsets",
    "sync_ns": "Path time in synchronizing calls after the operation they waited for ended",
    "idle_ns": "Path time the next operation waited: after its launch call ended, or after its stream "
    "predecessor ended",
    "ops_on_path": "GPU operations on the path",
    "calls_on_path": "Host calls on the path",
    "segments": "Stretches of the path (rows of critical_path_edges)",
}

CRITICAL_PATH_EDGES = {
    "device_id": "The step's device",
    "row": "The step's row in the iterations table",
    "seq": "0-based position of the stretch in the step's path (time order)",
    "start_ns": "Start of the stretch",
    "end_ns": "End of the stretch",
    "duration_ns": "end_ns - start_ns",
    "category": "cpu, launch, gpu_compute, gpu_memory, sync or idle",
    "edge": "How the stretch follows the previous one: start, host_order (next call of the thread), launch "
    "(call -> its operation), stream_order (previous operation of the stream), sync_wait (operation end -> "
    "the synchronizing call that waited for it)",
    "node": "What the stretch is: kernel, memcpy, memset, graph (operations), call, host (time between "
    "calls), gpu_wait (idle before an operation)",
    "name": "The operation's or call's name (gpu_wait: the operation waiting)",
    "stream_id": "The operation's stream",
    "thread": "The call's (or host gap's) thread as pid/tid",
}

QUEUE = {
    "device_id": "The device",
    "stream_id": "The stream; null on the device's row (all its streams)",
    "operations": "GPU operations on the stream (device)",
    "window_start_ns": "First operation start",
    "window_end_ns": "Last operation end",
    "window_ns": "window_end_ns - window_start_ns; busy + launch-bound idle + queued idle",
    "busy_ns": "Window time with an operation running",
    "launch_bound_idle_ns": "Window time with nothing running and nothing launched but unfinished (the GPU "
    "waited for the host to launch)",
    "queued_idle_ns": "Window time with nothing running but something launched (in flight, or waiting on "
    "another stream or event)",
    "host_sync_ns": "Window time a synchronizing call waited for this stream's operations (the device row: "
    "any synchronizing call of the processes using the device), union",
    "busy_pct": "busy_ns / window_ns (%)",
    "launch_bound_pct": "launch_bound_idle_ns / window_ns (%)",
    "queued_idle_pct": "queued_idle_ns / window_ns (%)",
    "host_sync_pct": "host_sync_ns / window_ns (%)",
    "max_depth": "Most operations outstanding at once (launched, not ended)",
    "mean_depth": "Time-weighted mean of outstanding operations over the window",
    "without_call": "Operations whose launch call is not in the capture (counted from their own start)",
}

QUEUE_SERIES = {
    "device_id": "The device",
    "stream_id": "The stream; null for the device (all its streams)",
    "start_ns": "Start of a stretch of constant depth",
    "end_ns": "End of the stretch",
    "duration_ns": "end_ns - start_ns",
    "depth": "Operations outstanding during the stretch (launched, not ended)",
    "running": "1 when an operation runs during the stretch, else 0",
}

SEQUENCES = {
    "device_id": "The device whose kernel sequence (launch order) is counted",
    "kind": "repeating_unit (the unit iteration detection finds in the kernel sequence) or ngram",
    "n": "Kernels in the pattern",
    "count": "Instances: every window of n kernels (windows overlap); full units for the repeating unit",
    "gpu_time_ns": "Kernel time of all instances (sum of durations)",
    "gpu_time_per_instance_ns": "gpu_time_ns / count",
    "span_per_instance_ns": "Mean of (last end - first start) over the instances",
    "first_start_ns": "Start of the first instance's first kernel",
    "kernels": "The kernel names in order, joined by ' → '",
}

NSYS_TABLES: dict[str, dict[str, str]] = {
    "nsys.iterations": ITERATIONS,
    "nsys.critical_path": CRITICAL_PATH,
    "nsys.critical_path_edges": CRITICAL_PATH_EDGES,
    "nsys.queue": QUEUE,
    "nsys.queue_series": QUEUE_SERIES,
    "nsys.sequences": SEQUENCES,
}

TORCH_TABLES: dict[str, dict[str, str]] = {
    key.replace("nsys.", "torch.", 1): {**_RANK, **columns} for key, columns in NSYS_TABLES.items()
}

TABLES: dict[str, dict[str, str]] = {**NSYS_TABLES, **TORCH_TABLES}
