//! The columns of every table the PyTorch-trace engine builds, declared once: name, type, unit and
//! meaning (see `crate::column`). Times are integer ns; `*_ns` instants count from the trace's first
//! complete event unless a column says otherwise. Each builder passes its declaration to
//! `Table::declared`, which refuses a column not declared here.

use crate::column::{Column, Declared, Unit};

const DEVICE: Column = Column::int("device", Unit::Id, "Device id");
const DURATION_NS: Column = Column::int("duration_ns", Unit::Ns, "GPU duration (ns)");
const MAX_NS: Column = Column::int("max_ns", Unit::Ns, "Longest duration (ns)");
const MEAN_NS: Column = Column::float("mean_ns", Unit::Ns, "Mean duration (ns)");
const MEDIAN_NS: Column = Column::float(
    "median_ns",
    Unit::Ns,
    "Median duration (ns; the mean of the two middle values when the count is even)",
);
const MIN_NS: Column = Column::int("min_ns", Unit::Ns, "Shortest duration (ns)");
pub const RANK: Column = Column::int(
    "rank",
    Unit::Id,
    "Rank of the trace (distributedInfo.rank; 0 for a single-process trace)",
);
const START_NS: Column = Column::int("start_ns", Unit::Ns, "GPU start (ns from the trace origin)");
const STDDEV_NS: Column = Column::float(
    "stddev_ns",
    Unit::Ns,
    "Sample standard deviation (n - 1; null below two events)",
);
const STREAM: Column = Column::int(
    "stream",
    Unit::Id,
    "The CUDA stream the GPU event ran on (args.stream)",
);

/// `torch.api`
pub const API: &[Column] = &[
    RANK,
    Column::text(
        "name",
        "CUDA runtime or driver call name (cudaLaunchKernel, cuLaunchKernel, ...)",
    ),
    Column::text(
        "category",
        "cuda_runtime or cuda_driver (Kineto's event category)",
    ),
    Column::int("count", Unit::Count, "Calls of this name on this rank"),
    Column::int(
        "total_ns",
        Unit::Ns,
        "Summed host time inside calls of this name (ns; calls on different threads each count)",
    ),
    MEAN_NS,
    MEDIAN_NS,
    MIN_NS,
    MAX_NS,
    STDDEV_NS,
    Column::float(
        "share_pct",
        Unit::Pct,
        "total_ns as a share of the rank's summed runtime and driver call time (%)",
    ),
];

/// `torch.collectives`
pub const COLLECTIVES: &[Column] = &[
    RANK,
    Column::text("name", "Kernel name"),
    Column::text(
        "collective",
        "Collective name from the args (allreduce, allgather, ...)",
    ),
    Column::text("dtype", "Element type from the args"),
    Column::int(
        "in_nelems",
        Unit::Count,
        "Input elements (args 'In msg nelems')",
    ),
    Column::int(
        "out_nelems",
        Unit::Count,
        "Output elements (args 'Out msg nelems')",
    ),
    Column::int("group_size", Unit::Count, "Ranks in the process group"),
    Column::text(
        "process_group",
        "Process group name or description from the args",
    ),
    Column::int(
        "bytes_in",
        Unit::Bytes,
        "in_nelems x the dtype's size (bytes)",
    ),
    Column::text(
        "args_source",
        "Where the args were read: kernel (the kernel's own args) or op (its launching op)",
    ),
    DEVICE,
    STREAM,
    Column::int(
        "start_ns",
        Unit::Ns,
        "Kernel start (ns from the trace origin)",
    ),
    Column::int("duration_ns", Unit::Ns, "Kernel duration (ns)"),
    Column::int(
        "compute_overlap_ns",
        Unit::Ns,
        "Part of the kernel's interval during which a compute kernel ran on the same device (ns)",
    ),
    Column::float(
        "compute_overlap_pct",
        Unit::Pct,
        "compute_overlap_ns / duration_ns (%)",
    ),
    Column::float(
        "algbw_gbps",
        Unit::Gbps,
        "Algorithm bandwidth as NCCL defines it: bytes_in / duration_ns (GB/s)",
    ),
];

/// `torch.gaps`
pub const GAPS: &[Column] = &[
    RANK,
    DEVICE,
    STREAM,
    Column::int("start_ns", Unit::Ns, "End of the busy span before the gap (ns from the trace origin)"),
    Column::int("end_ns", Unit::Ns, "Start of the GPU event that ends the gap (ns from the trace origin)"),
    Column::int("duration_ns", Unit::Ns, "end_ns - start_ns (ns)"),
    Column::text("cause", "host_wait (the next event's call started after the gap began), kernel_wait (gap < 30 µs) or other"),
    Column::text("next_kind", "Kind of the event that ends the gap: kernel, memcpy or memset"),
    Column::text("next_name", "Name of the event that ends the gap"),
];

/// `torch.graphs`
pub const GRAPHS: &[Column] = &[
    RANK,
    Column::text("graph_key", "FNV-1a 64 hash of the ordered kernel names of an execution (16 hex digits); Kineto records no graph id, so identical sequences share a key"),
    DEVICE,
    Column::text("first_kernel", "Name of the first kernel of an execution"),
    Column::int("kernels_per_execution", Unit::Count, "Kernels in one execution"),
    Column::int("executions", Unit::Count, "Executions of this graph (one per launch call)"),
    Column::int("launches", Unit::Count, "Graph launch calls (cudaGraphLaunch, ...) of this graph"),
    Column::int("gpu_total_ns", Unit::Ns, "Summed GPU time per execution, first kernel start to last kernel end (ns)"),
    Column::int("gpu_median_ns", Unit::Ns, "Nearest-rank median GPU time of an execution (ns)"),
    Column::int("gpu_p90_ns", Unit::Ns, "Nearest-rank 90th percentile GPU time of an execution (ns)"),
    Column::int("gpu_max_ns", Unit::Ns, "Longest execution (ns)"),
    Column::int("host_median_ns", Unit::Ns, "Nearest-rank median duration of the launch call (ns)"),
    Column::int("host_p90_ns", Unit::Ns, "Nearest-rank 90th percentile duration of the launch call (ns)"),
    Column::int("host_max_ns", Unit::Ns, "Longest launch call (ns)"),
    Column::int("launch_latency_median_ns", Unit::Ns, "Nearest-rank median of execution start - launch call start (ns)"),
];

/// `torch.kernels`
pub const KERNELS: &[Column] = &[
    RANK,
    Column::text("name", "Kernel name as the trace records it"),
    Column::text(
        "kind",
        "communication (nccl*/rccl* or containing gloo:) or compute",
    ),
    Column::int(
        "count",
        Unit::Count,
        "Launches of this kernel name on this rank",
    ),
    Column::int(
        "total_ns",
        Unit::Ns,
        "Summed duration of every launch of this kernel name on this rank (ns; concurrent launches each count)",
    ),
    MEAN_NS,
    MEDIAN_NS,
    MIN_NS,
    MAX_NS,
    STDDEV_NS,
    Column::float(
        "share_pct",
        Unit::Pct,
        "total_ns as a share of the rank's summed kernel time (%)",
    ),
];

/// `torch.launches`
pub const LAUNCHES: &[Column] = &[
    RANK,
    Column::text("kind", "kernel, memcpy or memset"),
    Column::text("name", "GPU event name"),
    DEVICE,
    STREAM,
    START_NS,
    DURATION_NS,
    Column::int("correlation", Unit::Id, "args.correlation: the id linking the event to its runtime call"),
    Column::text("runtime_name", "The runtime/driver call that launched it; null when not in the trace"),
    Column::int("call_start_ns", Unit::Ns, "Start of that call (ns from the trace origin)"),
    Column::int("call_duration_ns", Unit::Ns, "Duration of that call (ns)"),
    Column::int("latency_from_call_start_ns", Unit::Ns, "Launch latency from the call's start: start_ns - call_start_ns (ns)"),
    Column::int("latency_from_call_end_ns", Unit::Ns, "start_ns - (call_start_ns + call_duration_ns); negative when the event started before the call returned (ns)"),
    Column::text("op_name", "The innermost cpu_op enclosing the call (else the one with its External id)"),
    Column::int("grid_x", Unit::Count, "Grid size in x (blocks)"),
    Column::int("grid_y", Unit::Count, "Grid size in y (blocks)"),
    Column::int("grid_z", Unit::Count, "Grid size in z (blocks)"),
    Column::int("block_x", Unit::Count, "Block size in x (threads)"),
    Column::int("block_y", Unit::Count, "Block size in y (threads)"),
    Column::int("block_z", Unit::Count, "Block size in z (threads)"),
    Column::int("registers_per_thread", Unit::Count, "Registers per thread (Kineto's args)"),
    Column::int("shared_memory_bytes", Unit::Bytes, "Shared memory per block (bytes, Kineto's args)"),
    Column::float("occupancy_pct", Unit::Pct, "Kineto's 'est. achieved occupancy %': an estimate, not a measurement"),
    Column::int("bytes", Unit::Bytes, "Bytes moved or set (memcpy/memset)"),
];

/// `torch.ops`
pub const OPS: &[Column] = &[
    RANK,
    Column::text("name", "cpu_op name (aten::mm, ...)"),
    Column::int("count", Unit::Count, "Instances of this op (an instance nested in one of the same name counts too)"),
    Column::int("total_cpu_ns", Unit::Ns, "Summed host duration of the instances (ns)"),
    Column::int("self_cpu_ns", Unit::Ns, "Summed host duration minus the durations of direct children (nested ops, runtime calls) (ns)"),
    Column::int("runtime_calls", Unit::Count, "Runtime/driver calls whose innermost enclosing cpu_op is an instance of this op"),
    Column::int("gpu_events", Unit::Count, "GPU events (kernels, memcpys, memsets) launched directly by this op: through a call whose innermost cpu_op is the op"),
    Column::int("gpu_time_ns", Unit::Ns, "Summed duration of gpu_events (ns): the op's own GPU work, nested ops' work excluded"),
    Column::int("gpu_events_total", Unit::Count, "GPU events launched by this op or any op nested inside it (each counted once per row)"),
    Column::int("gpu_time_total_ns", Unit::Ns, "Summed duration of gpu_events_total (ns): the op's GPU work including nested ops'; rows of nested ops overlap, so do not add them up"),
];

/// `torch.steps`
pub const STEPS: &[Column] = &[
    RANK,
    Column::text("name", "The user_annotation's name (record_function label, ProfilerStep#N)"),
    Column::text("kind", "profiler_step (ProfilerStep#N) or record_function"),
    Column::text("pid", "Process of the range"),
    Column::text("tid", "Thread of the range"),
    Column::int("start_ns", Unit::Ns, "Range start (ns from the trace origin)"),
    Column::int("cpu_duration_ns", Unit::Ns, "Host duration of the range (ns)"),
    Column::int("runtime_calls", Unit::Count, "Runtime/driver calls of the range's process that start inside the range (any thread)"),
    Column::int("gpu_events", Unit::Count, "GPU events launched by those calls"),
    Column::int("gpu_time_ns", Unit::Ns, "Summed duration of those GPU events (ns; overlapping events each count)"),
    Column::int("gpu_busy_ns", Unit::Ns, "Union of those GPU events' intervals (ns; overlap counted once)"),
    Column::int("gpu_start_ns", Unit::Ns, "Start of the first of those GPU events (ns from the trace origin); null when none"),
    Column::int("gpu_end_ns", Unit::Ns, "End of the last of those GPU events (ns from the trace origin); null when none"),
    Column::int("gpu_annotation_ns", Unit::Ns, "Extent of the matching gpu_user_annotation Kineto wrote on the GPU side (ns); null when absent"),
];

/// `torch.streams` (what `gpuopt torch timeline` prints)
pub const STREAMS: &[Column] = &[
    RANK,
    DEVICE,
    STREAM,
    Column::int("kernels", Unit::Count, "Kernels on the stream"),
    Column::int("memcpys", Unit::Count, "Memcpy events on the stream"),
    Column::int("memsets", Unit::Count, "Memset events on the stream"),
    Column::int("first_start_ns", Unit::Ns, "Start of the stream's first GPU event (ns from the trace origin)"),
    Column::int("last_end_ns", Unit::Ns, "End of the stream's last GPU event (ns from the trace origin)"),
    Column::int("window_ns", Unit::Ns, "last_end_ns - first_start_ns (ns)"),
    Column::int("busy_ns", Unit::Ns, "Union of the stream's GPU event intervals (ns)"),
    Column::int("idle_ns", Unit::Ns, "window_ns - busy_ns = host_wait_ns + kernel_wait_ns + other_idle_ns (ns)"),
    Column::float("busy_pct", Unit::Pct, "busy_ns / window_ns (%): time utilization, not resource saturation"),
    Column::int("gaps", Unit::Count, "Idle gaps between busy spans"),
    Column::int("largest_gap_ns", Unit::Ns, "Longest of those gaps (ns)"),
    Column::int("host_wait_ns", Unit::Ns, "Idle time in gaps whose next event's runtime call started after the gap began (the host had not asked yet) (ns)"),
    Column::int("kernel_wait_ns", Unit::Ns, "Idle time in other gaps shorter than 30 µs (HTA's threshold) (ns)"),
    Column::int("other_idle_ns", Unit::Ns, "Idle time in the remaining gaps (ns)"),
];

/// `torch.transfers`
pub const TRANSFERS: &[Column] = &[
    RANK,
    Column::text("kind", "memcpy or memset"),
    Column::text(
        "name",
        "Event name (Memcpy HtoD (Pageable -> Device), Memset (Device), ...)",
    ),
    DEVICE,
    STREAM,
    START_NS,
    DURATION_NS,
    Column::int(
        "bytes",
        Unit::Bytes,
        "Bytes moved or set; null when the trace does not say",
    ),
    Column::float(
        "bandwidth_gbps",
        Unit::Gbps,
        "bytes / duration_ns (GB/s, 1 GB = 1e9 bytes)",
    ),
];

/// `torch.comm`: the trace's rank, then the communication columns both engines share.
pub fn comm() -> Vec<Column> {
    let mut columns = vec![RANK];
    columns.extend_from_slice(crate::comm::COLUMNS);
    columns
}

/// Every table of the engine, by its `gpuopt schema` key (the analyses declare their own:
/// `paths::fields`, `flops::fields`).
pub fn tables() -> Vec<Declared> {
    vec![
        Declared::new("torch.api", API),
        Declared::new("torch.collectives", COLLECTIVES),
        Declared::new("torch.comm", &comm()),
        Declared::new("torch.gaps", GAPS),
        Declared::new("torch.graphs", GRAPHS),
        Declared::new("torch.kernels", KERNELS),
        Declared::new("torch.launches", LAUNCHES),
        Declared::new("torch.ops", OPS),
        Declared::new("torch.steps", STEPS),
        Declared::new("torch.streams", STREAMS),
        Declared::new("torch.transfers", TRANSFERS),
    ]
}
