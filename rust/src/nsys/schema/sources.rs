//! The tables gpuopt reads from an nsys export, with the columns it needs, and the enum tables each needs.

/// The process bits of a `globalTid` (`globalPid` has the same layout with the thread bits zero).
pub const PID_MASK: i64 = 0xFFFF_FFFF_FF00_0000_u64 as i64;

/// A table gpuopt reads, with the columns it needs. `required` tables must exist; the others are
/// facts when absent ("not captured").
pub struct Source {
    pub name: &'static str,
    pub columns: &'static [&'static str],
    pub required: bool,
}

pub const STRING_IDS: Source = Source {
    name: "StringIds",
    columns: &["id", "value"],
    required: true,
};
pub const KERNEL: Source = Source {
    name: "CUPTI_ACTIVITY_KIND_KERNEL",
    columns: &[
        "start",
        "end",
        "deviceId",
        "streamId",
        "correlationId",
        "globalPid",
        "demangledName",
        "shortName",
    ],
    required: false,
};
/// Graph executions of a graph-level trace (`--cuda-graph-trace=graph`, nsys' default).
pub const GRAPH_TRACE: Source = Source {
    name: "CUPTI_ACTIVITY_KIND_GRAPH_TRACE",
    columns: &[
        "start",
        "end",
        "deviceId",
        "streamId",
        "correlationId",
        "globalPid",
        "graphId",
        "graphExecId",
    ],
    required: false,
};
/// Graph and graph-exec creation events (graph-level traces).
pub const GRAPH_EVENTS: Source = Source {
    name: "CUDA_GRAPH_EVENTS",
    columns: &["start", "graphId", "graphExecId"],
    required: false,
};
pub const RUNTIME: Source = Source {
    name: "CUPTI_ACTIVITY_KIND_RUNTIME",
    columns: &["start", "end", "globalTid", "correlationId", "nameId"],
    required: false,
};
pub const MEMCPY: Source = Source {
    name: "CUPTI_ACTIVITY_KIND_MEMCPY",
    columns: &[
        "start",
        "end",
        "deviceId",
        "streamId",
        "correlationId",
        "globalPid",
        "bytes",
        "copyKind",
        "srcKind",
        "dstKind",
    ],
    required: false,
};
pub const MEMSET: Source = Source {
    name: "CUPTI_ACTIVITY_KIND_MEMSET",
    columns: &[
        "start",
        "end",
        "deviceId",
        "streamId",
        "correlationId",
        "globalPid",
        "bytes",
    ],
    required: false,
};
pub const SYNC: Source = Source {
    name: "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION",
    columns: &[
        "start",
        "end",
        "deviceId",
        "streamId",
        "correlationId",
        "globalPid",
        "syncType",
    ],
    required: false,
};
pub const NVTX: Source = Source {
    name: "NVTX_EVENTS",
    columns: &[
        "start",
        "end",
        "eventType",
        "text",
        "globalTid",
        "endGlobalTid",
        "textId",
        "domainId",
    ],
    required: false,
};
pub const PROFILER_OVERHEAD: Source = Source {
    name: "PROFILER_OVERHEAD",
    columns: &["start", "end", "globalTid"],
    required: false,
};
pub const CUPTI_OVERHEAD: Source = Source {
    name: "CUPTI_ACTIVITY_KIND_OVERHEAD",
    columns: &["start", "end", "globalTid"],
    required: false,
};
pub const ENUM_MEMCPY_OPER: Source = Source {
    name: "ENUM_CUDA_MEMCPY_OPER",
    columns: &["id", "label"],
    required: false,
};
pub const ENUM_MEM_KIND: Source = Source {
    name: "ENUM_CUDA_MEM_KIND",
    columns: &["id", "label"],
    required: false,
};
pub const ENUM_SYNC_TYPE: Source = Source {
    name: "ENUM_CUPTI_SYNC_TYPE",
    columns: &["id", "label"],
    required: false,
};
/// Names `overheadType` values; a label ending in "(Profiler)" is overhead the export attributes to
/// the profiler ("Command buffer full (CUDA)" is CUDA's own stall).
pub const ENUM_OVERHEAD_TYPE: Source = Source {
    name: "ENUM_CUPTI_OVERHEAD_TYPE",
    columns: &["id", "label"],
    required: false,
};

/// Every source gpuopt reads, in the order they are validated.
pub const SOURCES: &[&Source] = &[
    &STRING_IDS,
    &KERNEL,
    &GRAPH_TRACE,
    &GRAPH_EVENTS,
    &RUNTIME,
    &MEMCPY,
    &MEMSET,
    &SYNC,
    &NVTX,
    &PROFILER_OVERHEAD,
    &CUPTI_OVERHEAD,
    &ENUM_MEMCPY_OPER,
    &ENUM_MEM_KIND,
    &ENUM_SYNC_TYPE,
    &ENUM_OVERHEAD_TYPE,
];

/// Enum tables that must accompany an activity table when it is present.
pub(super) const COMPANIONS: &[(&Source, &Source)] = &[
    (&MEMCPY, &ENUM_MEMCPY_OPER),
    (&MEMCPY, &ENUM_MEM_KIND),
    (&SYNC, &ENUM_SYNC_TYPE),
];
