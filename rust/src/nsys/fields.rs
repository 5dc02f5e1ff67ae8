//! The columns of every table the nsys engine builds, declared once: name, type, unit and meaning
//! (see `crate::column`). A builder names its table's declaration (`Columns::of(fields::GAPS)`) and
//! `build()` refuses any column not declared here, so adding a column is one entry here, the code that
//! computes it, and its test.

use crate::column::{Column, Declared, Unit};

// Statistics of one group's durations, as nsys stats prints them.
const AVG_NS: Column = Column::float("avg_ns", Unit::Ns, "Mean duration (ns)");
const COUNT: Column = Column::int("count", Unit::Count, "Operations of this kind");
const GPU_OPS: Column = Column::int(
    "gpu_ops",
    Unit::Count,
    "GPU operations (kernels, memcpys, memsets, graph executions) launched inside the range",
);
const GRAPH_EXCLUSIVE_NS: Column = Column::int(
    "graph_exclusive_ns",
    Unit::Ns,
    "Summed GPU time of the graph executions whose innermost enclosing range is this one (ns)",
);
const GRAPH_EXECUTIONS: Column = Column::int("graph_executions", Unit::Count, "CUDA-graph executions (CUPTI_ACTIVITY_KIND_GRAPH_TRACE rows of a graph-level trace) whose cudaGraphLaunch was made inside the range, by the same rule as kernels; 0 in a node-level trace, whose graph kernels count in kernels. nsys' nvtx_kern_sum leaves them out");
const GRAPH_INCLUSIVE_NS: Column = Column::int("graph_inclusive_ns", Unit::Ns, "Summed GPU time of those graph executions (end - start of each execution, ns), including executions launched in nested ranges");
const KERNELS: Column = Column::int("kernels", Unit::Count, "Kernels (CUPTI_ACTIVITY_KIND_KERNEL rows) launched (API call on the range's thread, inside the range) while the range was open; counted once per tag even when ranges of that tag nest. A graph-level trace records no kernel inside a CUDA-graph execution: see graph_executions");
const KERNEL_EXCLUSIVE_NS: Column = Column::int("kernel_exclusive_ns", Unit::Ns, "Summed GPU time of the kernels whose innermost enclosing range is this one (ns); excludes kernels launched inside nested ranges");
const KERNEL_INCLUSIVE_NS: Column = Column::int("kernel_inclusive_ns", Unit::Ns, "Summed GPU time of those kernels, including kernels of nested ranges (ns); excludes graph executions (graph_inclusive_ns)");
const KERNEL_NAME: Column = Column::text(
    "kernel_name",
    "The kernel's demangled C++ name, as nsys stats prints it",
);
const MAX_NS: Column = Column::int("max_ns", Unit::Ns, "Longest duration (ns)");
const MED_NS: Column = Column::float(
    "med_ns",
    Unit::Ns,
    "Median duration (ns; the mean of the two middle values when the count is even)",
);
const MIN_NS: Column = Column::int("min_ns", Unit::Ns, "Shortest duration (ns)");
const OPERATION: Column = Column::text(
    "operation",
    "[CUDA memcpy Host-to-Device], [CUDA memset], ... as nsys names them",
);
const RANGE: Column = Column::text(
    "range",
    "The range's tag DOMAIN:TEXT (the default domain prints as :TEXT)",
);
const RANGE_TAG: Column = Column::text("range", "The range's tag DOMAIN:TEXT");
const STDDEV_NS: Column = Column::float(
    "stddev_ns",
    Unit::Ns,
    "Sample standard deviation of the durations (n - 1; null below two values)",
);
const STYLE: Column = Column::text("style", "PushPop or StartEnd");

/// `nsys.cuda_api_sum`
pub const CUDA_API_SUM: &[Column] = &[
    Column::float("time_pct", Unit::Pct, "This call name's share of the summed CUDA API time of the selection (%)"),
    Column::int("total_time_ns", Unit::Ns, "Summed host time spent inside calls of this name (ns; calls on different threads each count)"),
    Column::int("num_calls", Unit::Count, "How many calls of this API name the selection holds"),
    AVG_NS,
    MED_NS,
    MIN_NS,
    MAX_NS,
    STDDEV_NS,
    Column::text("name", "CUDA runtime or driver API name with the version suffix removed (cudaLaunchKernel)"),
];

/// `nsys.cuda_gpu_kern_sum`
pub const CUDA_GPU_KERN_SUM: &[Column] = &[
    Column::float("time_pct", Unit::Pct, "This kernel name's share of the summed kernel time of the selection (%)"),
    Column::int("total_time_ns", Unit::Ns, "Summed GPU execution time of every launch of this kernel name (end - start, ns); concurrent launches are each counted"),
    Column::int("instances", Unit::Count, "Launches of this kernel name"),
    AVG_NS,
    MED_NS,
    MIN_NS,
    MAX_NS,
    STDDEV_NS,
    Column::text("name", "Demangled kernel name (shortName with --short-names)"),
];

/// `nsys.cuda_gpu_mem_size_sum`
pub const CUDA_GPU_MEM_SIZE_SUM: &[Column] = &[
    Column::int(
        "total_bytes",
        Unit::Bytes,
        "Bytes moved or set by operations of this kind",
    ),
    COUNT,
    Column::float("avg_bytes", Unit::Bytes, "Mean bytes per operation"),
    Column::float("med_bytes", Unit::Bytes, "Median bytes per operation"),
    Column::int("min_bytes", Unit::Bytes, "Smallest operation (bytes)"),
    Column::int("max_bytes", Unit::Bytes, "Largest operation (bytes)"),
    Column::float(
        "stddev_bytes",
        Unit::Bytes,
        "Sample standard deviation of the sizes (n - 1; null below two values)",
    ),
    OPERATION,
];

/// `nsys.cuda_gpu_mem_time_sum`
pub const CUDA_GPU_MEM_TIME_SUM: &[Column] = &[
    Column::float(
        "time_pct",
        Unit::Pct,
        "This operation kind's share of the summed memory-operation time (%)",
    ),
    Column::int(
        "total_time_ns",
        Unit::Ns,
        "Sum of the durations in the group (ns)",
    ),
    COUNT,
    AVG_NS,
    MED_NS,
    MIN_NS,
    MAX_NS,
    STDDEV_NS,
    OPERATION,
];

/// `nsys.cuda_kern_exec_sum`
pub const CUDA_KERN_EXEC_SUM: &[Column] = &[
    Column::int("pid", Unit::Id, "Process that launched the kernels"),
    Column::int("tid", Unit::Id, "Thread that launched the kernels"),
    Column::int("device_id", Unit::Id, "Device the kernels ran on"),
    Column::int(
        "count",
        Unit::Count,
        "Kernels of the group joined to their launch call",
    ),
    Column::int(
        "q_count",
        Unit::Count,
        "Kernels with a queue time >= 0 (those the q_* statistics describe)",
    ),
    Column::float(
        "t_avg_ns",
        Unit::Ns,
        "Mean total time: max(API end, kernel end) - API start (ns)",
    ),
    Column::float(
        "t_med_ns",
        Unit::Ns,
        "Median total time: max(API end, kernel end) - API start (ns)",
    ),
    Column::int(
        "t_min_ns",
        Unit::Ns,
        "Shortest total time: max(API end, kernel end) - API start (ns)",
    ),
    Column::int(
        "t_max_ns",
        Unit::Ns,
        "Longest total time: max(API end, kernel end) - API start (ns)",
    ),
    Column::float(
        "t_stddev_ns",
        Unit::Ns,
        "Sample standard deviation of the total time: max(API end, kernel end) - API start (ns)",
    ),
    Column::float("a_avg_ns", Unit::Ns, "Mean launch API call duration (ns)"),
    Column::float("a_med_ns", Unit::Ns, "Median launch API call duration (ns)"),
    Column::int(
        "a_min_ns",
        Unit::Ns,
        "Shortest launch API call duration (ns)",
    ),
    Column::int(
        "a_max_ns",
        Unit::Ns,
        "Longest launch API call duration (ns)",
    ),
    Column::float(
        "a_stddev_ns",
        Unit::Ns,
        "Sample standard deviation of the launch API call duration (ns)",
    ),
    Column::float(
        "q_avg_ns",
        Unit::Ns,
        "Mean queue time: kernel start - API end, where >= 0 (ns)",
    ),
    Column::float(
        "q_med_ns",
        Unit::Ns,
        "Median queue time: kernel start - API end, where >= 0 (ns)",
    ),
    Column::int(
        "q_min_ns",
        Unit::Ns,
        "Shortest queue time: kernel start - API end, where >= 0 (ns)",
    ),
    Column::int(
        "q_max_ns",
        Unit::Ns,
        "Longest queue time: kernel start - API end, where >= 0 (ns)",
    ),
    Column::float(
        "q_stddev_ns",
        Unit::Ns,
        "Sample standard deviation of the queue time: kernel start - API end, where >= 0 (ns)",
    ),
    Column::float("k_avg_ns", Unit::Ns, "Mean kernel duration (ns)"),
    Column::float("k_med_ns", Unit::Ns, "Median kernel duration (ns)"),
    Column::int("k_min_ns", Unit::Ns, "Shortest kernel duration (ns)"),
    Column::int("k_max_ns", Unit::Ns, "Longest kernel duration (ns)"),
    Column::float(
        "k_stddev_ns",
        Unit::Ns,
        "Sample standard deviation of the kernel duration (ns)",
    ),
    Column::text(
        "api_name",
        "The launch call (cudaLaunchKernel, ...), version suffix removed",
    ),
    KERNEL_NAME,
];

/// `nsys.gaps`
pub const GAPS: &[Column] = &[
    Column::int("device_id", Unit::Id, "Device of the gap"),
    Column::int(
        "stream_id",
        Unit::Id,
        "Stream of the gap; null for the device row (all streams merged)",
    ),
    Column::int(
        "start_ns",
        Unit::Ns,
        "End of the operation before the gap (ns, capture clock)",
    ),
    Column::int(
        "end_ns",
        Unit::Ns,
        "Start of the operation after the gap (ns, capture clock)",
    ),
    Column::int(
        "duration_ns",
        Unit::Ns,
        "end_ns - start_ns: time with no GPU operation on this device or stream (ns)",
    ),
    Column::text(
        "before",
        "The operation that ends before the gap (kernel name, [CUDA memcpy ...], ...)",
    ),
    Column::text("after", "The operation that starts after the gap"),
];

/// `nsys.memory`
pub const MEMORY: &[Column] = &[
    Column::int("device_id", Unit::Id, "Device the operation ran on"),
    Column::text("operation", "memcpy or memset"),
    Column::text("copy_kind", "ENUM_CUDA_MEMCPY_OPER label (Host-to-Device, Device-to-Host, ...); Memset for memsets"),
    Column::text("src_kind", "Memory kind of the source (Pageable, Pinned, Device, ...); null for memsets"),
    Column::text("dst_kind", "Memory kind of the destination (Pageable, Pinned, Device, ...)"),
    Column::text("host_memory", "The host side of a host-device copy (Pageable or Pinned); null when neither side is on the host"),
    Column::int("count", Unit::Count, "Operations in the group"),
    Column::int("total_bytes", Unit::Bytes, "Bytes moved or set by the group's operations"),
    Column::int("total_time_ns", Unit::Ns, "Summed GPU duration of the group's operations (ns)"),
    Column::float("bandwidth_gbps", Unit::Gbps, "Achieved bandwidth: total_bytes / total_time_ns (GB/s, 1 GB = 1e9 bytes)"),
    Column::float("median_op_bandwidth_gbps", Unit::Gbps, "Median over the operations of each one's bytes / duration (GB/s)"),
];

/// `nsys.nvtx_instances`
pub const NVTX_INSTANCES: &[Column] = &[
    RANGE,
    Column::int("pid", Unit::Id, "Process id of the pushing thread"),
    Column::int("tid", Unit::Id, "Thread id that pushed and popped the range"),
    Column::int("depth", Unit::Count, "Push/pop ranges of the same thread enclosing this one (0 = outermost)"),
    Column::int("start_ns", Unit::Ns, "Push time (ns, capture clock)"),
    Column::int("end_ns", Unit::Ns, "Pop time (ns, capture clock; open ranges end at the last NVTX timestamp)"),
    Column::int("cpu_ns", Unit::Ns, "end_ns - start_ns (ns)"),
    KERNELS,
    KERNEL_INCLUSIVE_NS,
    KERNEL_EXCLUSIVE_NS,
    GRAPH_EXECUTIONS,
    GRAPH_INCLUSIVE_NS,
    GRAPH_EXCLUSIVE_NS,
    GPU_OPS,
    Column::int("gpu_start_ns", Unit::Ns, "Start of the first GPU operation launched inside the range (ns); null when none"),
    Column::int("gpu_end_ns", Unit::Ns, "End of the last GPU operation launched inside the range (ns); null when none"),
    Column::int("gpu_projected_ns", Unit::Ns, "gpu_end_ns - gpu_start_ns: the range projected onto the GPU, idle time between its operations included (ns)"),
];

/// `nsys.nvtx_kern_sum`
pub const NVTX_KERN_SUM: &[Column] = &[
    RANGE_TAG,
    STYLE,
    Column::int("pid", Unit::Id, "Process id of the range"),
    Column::int("tid", Unit::Id, "Thread id of the range"),
    Column::int(
        "nvtx_instances",
        Unit::Count,
        "Range instances that launched this kernel",
    ),
    Column::int(
        "kernel_instances",
        Unit::Count,
        "Launches of this kernel inside those instances",
    ),
    Column::int(
        "total_time_ns",
        Unit::Ns,
        "Summed GPU time of those kernel launches (ns)",
    ),
    AVG_NS,
    MED_NS,
    MIN_NS,
    MAX_NS,
    STDDEV_NS,
    KERNEL_NAME,
];

/// `nsys.nvtx_ranges`
pub const NVTX_RANGES: &[Column] = &[
    RANGE,
    Column::int("instances", Unit::Count, "Push/pop instances of this range in the selection (ended on the thread that pushed them)"),
    Column::int("cpu_total_ns", Unit::Ns, "Summed host duration of the instances, push to pop (ns; open ranges end at the last NVTX timestamp)"),
    KERNELS,
    KERNEL_INCLUSIVE_NS,
    KERNEL_EXCLUSIVE_NS,
    GRAPH_EXECUTIONS,
    GRAPH_INCLUSIVE_NS,
    GRAPH_EXCLUSIVE_NS,
    GPU_OPS,
    Column::int("gpu_projected_ns", Unit::Ns, "Sum over instances of the GPU projection: the last end minus the first start of the GPU operations launched inside the instance (ns); includes idle time between them"),
];

/// `nsys.nvtx_sum`
pub const NVTX_SUM: &[Column] = &[
    Column::float(
        "time_pct",
        Unit::Pct,
        "This range's share of the summed NVTX range time (%)",
    ),
    Column::int(
        "total_time_ns",
        Unit::Ns,
        "Summed host duration of the range's instances (ns)",
    ),
    Column::int("instances", Unit::Count, "Instances of this range"),
    AVG_NS,
    MED_NS,
    MIN_NS,
    MAX_NS,
    STDDEV_NS,
    STYLE,
    RANGE_TAG,
];

/// `nsys.operations`: one row per GPU operation (the HTML timeline; `Report.operations()`).
pub const OPERATIONS: &[Column] = &[
    Column::int("device_id", Unit::Id, "Device the operation ran on"),
    Column::int("stream_id", Unit::Id, "Stream the operation ran on"),
    Column::text(
        "kind",
        "kernel, memcpy, memset or graph (one CUDA-graph execution of a graph-level trace)",
    ),
    Column::int(
        "start_ns",
        Unit::Ns,
        "Start (ns, capture clock), clipped to the selected window",
    ),
    Column::int(
        "end_ns",
        Unit::Ns,
        "End (ns, capture clock), clipped to the selected window",
    ),
    Column::int("duration_ns", Unit::Ns, "end_ns - start_ns (ns)"),
    Column::text(
        "name",
        "Kernel name, [CUDA memcpy KIND], [CUDA memset] or [CUDA graph G exec E]",
    ),
    Column::int(
        "bytes",
        Unit::Bytes,
        "Bytes moved or set by a memcpy or memset; 0 for kernels and graphs",
    ),
];

/// Every table of the engine, by its `gpuopt schema` key.
pub fn tables() -> Vec<Declared> {
    vec![
        Declared::new("nsys.comm", crate::comm::COLUMNS),
        Declared::new("nsys.cuda_api_sum", CUDA_API_SUM),
        Declared::new("nsys.cuda_gpu_kern_sum", CUDA_GPU_KERN_SUM),
        Declared::new("nsys.cuda_gpu_mem_size_sum", CUDA_GPU_MEM_SIZE_SUM),
        Declared::new("nsys.cuda_gpu_mem_time_sum", CUDA_GPU_MEM_TIME_SUM),
        Declared::new("nsys.cuda_kern_exec_sum", CUDA_KERN_EXEC_SUM),
        Declared::new("nsys.gaps", GAPS),
        Declared::new("nsys.memory", MEMORY),
        Declared::new("nsys.nvtx_instances", NVTX_INSTANCES),
        Declared::new("nsys.nvtx_kern_sum", NVTX_KERN_SUM),
        Declared::new("nsys.nvtx_ranges", NVTX_RANGES),
        Declared::new("nsys.nvtx_sum", NVTX_SUM),
        Declared::new("nsys.operations", OPERATIONS),
    ]
}
