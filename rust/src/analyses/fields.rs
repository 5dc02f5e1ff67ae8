//! The columns of the analyses' tables (`gpuopt nsys|torch iterations|critical-path|queue|sequences`),
//! declared once (see `crate::column`); `super::table` builds exactly these. Times are integer ns: on the
//! capture clock for nsys, from the trace's first complete event for Kineto traces. The torch twins add
//! a leading `rank` column (`crate::fields` gathers both; method: `references/analyses.md`).

use crate::column::{Column, Unit};

/// `nsys.iterations` (and `torch.iterations` after `rank`)
pub const ITERATIONS: &[Column] = &[
    Column::int("device_id", Unit::Id, "The device whose GPU operations the row counts"),
    Column::text("source", "Where the row's boundaries come from: detected (the launch sequence's repeat), or the marker kind: nvtx, record_function, profiler_step"),
    Column::int("row", Unit::Id, "0-based position among the rows of this device and source"),
    Column::int("iteration", Unit::Id, "1-based iteration number; null for work outside the iterations (odd by position)"),
    Column::text("name", "The range's name (marker rows); null for detected rows and work outside ranges"),
    Column::text("thread", "The range's thread as pid/tid (marker rows)"),
    Column::int("host_start_ns", Unit::Ns, "Range start (marker rows), or the start of the call that launched the row's first operation (detected rows)"),
    Column::int("start_ns", Unit::Ns, "Start of the row's first GPU operation"),
    Column::int("end_ns", Unit::Ns, "End of the row's last GPU operation"),
    Column::int("span_ns", Unit::Ns, "completion to completion: the latest end_ns of this and every earlier row, less the same before this row (rows tile the GPU timeline; 0 for a row whose work ended before an earlier row's); the first row: end_ns - start_ns"),
    Column::int("extent_ns", Unit::Ns, "end_ns - start_ns: first start to last end of the row's own operations"),
    Column::int("gpu_busy_ns", Unit::Ns, "Union of the row's operations on the GPU (concurrent work counted once)"),
    Column::int("kernels", Unit::Count, "Kernels in the row"),
    Column::int("memory_ops", Unit::Count, "Memcpys and memsets in the row"),
    Column::int("graph_executions", Unit::Count, "CUDA-graph executions recorded whole (nsys graph-level traces)"),
    Column::int("gpu_ops", Unit::Count, "GPU operations in the row (kernels, memory operations, graph executions)"),
    Column::text("odd", "Why the row is odd, or null: before_first_repeat, after_last_repeat, breaks_repeat, before_first_range, after_last_range, other_range, warm_up, straggler, sequence_differs, kernels_differ"),
    Column::text("odd_rule", "The rule that made it odd, with the row's numbers"),
];

/// `nsys.critical_path` (and `torch.critical_path` after `rank`)
pub const CRITICAL_PATH: &[Column] = &[
    Column::int("device_id", Unit::Id, "The step's device"),
    Column::text("source", "The iteration source of the steps (detected or the marker kind)"),
    Column::int("row", Unit::Id, "The step's row in the iterations table (same device and source)"),
    Column::int("iteration", Unit::Id, "1-based iteration number; null for work outside the iterations"),
    Column::text("name", "The range's name (marker steps)"),
    Column::int("start_ns", Unit::Ns, "The step's start: its range start, or the launch of its first operation"),
    Column::int("end_ns", Unit::Ns, "When the step's last event ended (an operation, or a call of its threads)"),
    Column::int("span_ns", Unit::Ns, "end_ns - start_ns: the path's length; the six categories sum to it"),
    Column::int("cpu_ns", Unit::Ns, "Path time on the host between calls (Python, the framework, calls that neither launch nor wait)"),
    Column::int("launch_ns", Unit::Ns, "Path time inside launch calls"),
    Column::int("gpu_compute_ns", Unit::Ns, "Path time running kernels and graph executions"),
    Column::int("gpu_memory_ns", Unit::Ns, "Path time running memcpys and memsets"),
    Column::int("sync_ns", Unit::Ns, "Path time in synchronizing calls after the operation they waited for ended"),
    Column::int("idle_ns", Unit::Ns, "Path time the next operation waited: after its launch call ended, or after its stream predecessor ended"),
    Column::int("ops_on_path", Unit::Count, "GPU operations on the path"),
    Column::int("calls_on_path", Unit::Count, "Host calls on the path"),
    Column::int("segments", Unit::Count, "Stretches of the path (rows of critical_path_edges)"),
];

/// `nsys.critical_path_edges` (and `torch.critical_path_edges` after `rank`)
pub const CRITICAL_PATH_EDGES: &[Column] = &[
    Column::int("device_id", Unit::Id, "The step's device"),
    Column::int("row", Unit::Id, "The step's row in the iterations table"),
    Column::int("seq", Unit::Id, "0-based position of the stretch in the step's path (time order)"),
    Column::int("start_ns", Unit::Ns, "Start of the stretch"),
    Column::int("end_ns", Unit::Ns, "End of the stretch"),
    Column::int("duration_ns", Unit::Ns, "end_ns - start_ns"),
    Column::text("category", "cpu, launch, gpu_compute, gpu_memory, sync or idle"),
    Column::text("edge", "How the stretch follows the previous one: start, host_order (next call of the thread), launch (call -> its operation), stream_order (previous operation of the stream), sync_wait (operation end -> the synchronizing call that waited for it)"),
    Column::text("node", "What the stretch is: kernel, memcpy, memset, graph (operations), call, host (time between calls), gpu_wait (idle before an operation)"),
    Column::text("name", "The operation's or call's name (gpu_wait: the operation waiting)"),
    Column::int("stream_id", Unit::Id, "The operation's stream"),
    Column::text("thread", "The call's (or host gap's) thread as pid/tid"),
];

/// `nsys.queue` (and `torch.queue` after `rank`)
pub const QUEUE: &[Column] = &[
    Column::int("device_id", Unit::Id, "The GPU the row's streams belong to (CUDA device id)"),
    Column::int("stream_id", Unit::Id, "The stream; null on the device's row (all its streams)"),
    Column::int("operations", Unit::Count, "GPU operations on the stream (device)"),
    Column::int("window_start_ns", Unit::Ns, "First operation start"),
    Column::int("window_end_ns", Unit::Ns, "Last operation end"),
    Column::int("window_ns", Unit::Ns, "window_end_ns - window_start_ns; busy + launch-bound idle + queued idle"),
    Column::int("busy_ns", Unit::Ns, "Window time with an operation running"),
    Column::int("launch_bound_idle_ns", Unit::Ns, "Window time with nothing running and nothing launched but unfinished (the GPU waited for the host to launch)"),
    Column::int("queued_idle_ns", Unit::Ns, "Window time with nothing running but something launched (in flight, or waiting on another stream or event)"),
    Column::int("host_sync_ns", Unit::Ns, "Window time a synchronizing call waited for this stream's operations (the device row: any synchronizing call of the processes using the device), union"),
    Column::float("busy_pct", Unit::Pct, "busy_ns / window_ns (%)"),
    Column::float("launch_bound_pct", Unit::Pct, "launch_bound_idle_ns / window_ns (%)"),
    Column::float("queued_idle_pct", Unit::Pct, "queued_idle_ns / window_ns (%)"),
    Column::float("host_sync_pct", Unit::Pct, "host_sync_ns / window_ns (%)"),
    Column::int("max_depth", Unit::Count, "Most operations outstanding at once (launched, not ended)"),
    Column::float("mean_depth", Unit::Count, "Time-weighted mean of outstanding operations over the window"),
    Column::int("without_call", Unit::Count, "Operations whose launch call is not in the capture (counted from their own start)"),
];

/// `nsys.queue_series` (and `torch.queue_series` after `rank`)
pub const QUEUE_SERIES: &[Column] = &[
    Column::int(
        "device_id",
        Unit::Id,
        "The GPU whose queue depth the stretch gives (CUDA device id)",
    ),
    Column::int(
        "stream_id",
        Unit::Id,
        "The stream; null for the device (all its streams)",
    ),
    Column::int("start_ns", Unit::Ns, "Start of a stretch of constant depth"),
    Column::int("end_ns", Unit::Ns, "End of the stretch"),
    Column::int("duration_ns", Unit::Ns, "end_ns - start_ns"),
    Column::int(
        "depth",
        Unit::Count,
        "Operations outstanding during the stretch (launched, not ended)",
    ),
    Column::int(
        "running",
        Unit::Count,
        "1 when an operation runs during the stretch, else 0",
    ),
];

/// `nsys.sequences` (and `torch.sequences` after `rank`)
pub const SEQUENCES: &[Column] = &[
    Column::int(
        "device_id",
        Unit::Id,
        "The device whose kernel sequence (launch order) is counted",
    ),
    Column::text(
        "kind",
        "repeating_unit (the unit iteration detection finds in the kernel sequence) or ngram",
    ),
    Column::int("n", Unit::Count, "Kernels in the pattern"),
    Column::int(
        "count",
        Unit::Count,
        "Instances: every window of n kernels (windows overlap); full units for the repeating unit",
    ),
    Column::int(
        "gpu_time_ns",
        Unit::Ns,
        "Kernel time of all instances (sum of durations)",
    ),
    Column::float("gpu_time_per_instance_ns", Unit::Ns, "gpu_time_ns / count"),
    Column::float(
        "span_per_instance_ns",
        Unit::Ns,
        "Mean of (last end - first start) over the instances",
    ),
    Column::int(
        "first_start_ns",
        Unit::Ns,
        "Start of the first instance's first kernel",
    ),
    Column::text("kernels", "The kernel names in order, joined by ' → '"),
];

/// (nsys key, torch key, columns) of every analyses table.
pub const TABLES: &[(&str, &str, &[Column])] = &[
    ("nsys.iterations", "torch.iterations", ITERATIONS),
    ("nsys.critical_path", "torch.critical_path", CRITICAL_PATH),
    (
        "nsys.critical_path_edges",
        "torch.critical_path_edges",
        CRITICAL_PATH_EDGES,
    ),
    ("nsys.queue", "torch.queue", QUEUE),
    ("nsys.queue_series", "torch.queue_series", QUEUE_SERIES),
    ("nsys.sequences", "torch.sequences", SEQUENCES),
];
