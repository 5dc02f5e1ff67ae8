//! The columns of the call-path tables (`torch.paths`, `torch.kernel_paths`), declared once (see
//! `crate::column`); `table` and `kernels_table` build exactly these.

use crate::column::{Column, Declared, Unit};
use crate::torch_trace::fields::RANK;

/// `torch.paths`
pub const PATHS: &[Column] = &[
    RANK,
    Column::int(
        "path_id",
        Unit::Id,
        "Row number of the path in depth-first order (its children follow it)",
    ),
    Column::int(
        "parent_path_id",
        Unit::Id,
        "path_id of the enclosing path; null at the top",
    ),
    Column::int(
        "depth",
        Unit::Count,
        "Ranges on the path (1: nothing encloses it)",
    ),
    Column::text(
        "kind",
        "The path's last range: op (cpu_op) or annotation (record_function)",
    ),
    Column::text("name", "The path's last range's name"),
    Column::text(
        "path",
        "The ranges' names, outermost first, joined by ' > ' (ProfilerStep#N and python_function \
         ranges are see-through)",
    ),
    Column::int(
        "instances",
        Unit::Count,
        "Host ranges whose path is exactly this one",
    ),
    Column::int(
        "cpu_inclusive_ns",
        Unit::Ns,
        "Summed duration of those ranges (ns)",
    ),
    Column::int(
        "cpu_exclusive_ns",
        Unit::Ns,
        "Summed duration minus their direct children (nested ranges and runtime calls) (ns)",
    ),
    Column::int(
        "gpu_events_inclusive",
        Unit::Count,
        "GPU events launched by calls on this path or any path under it",
    ),
    Column::int(
        "gpu_inclusive_ns",
        Unit::Ns,
        "Summed duration of gpu_events_inclusive (ns; durations, not their union)",
    ),
    Column::int(
        "gpu_events_exclusive",
        Unit::Count,
        "GPU events launched by calls whose path is exactly this one",
    ),
    Column::int(
        "gpu_exclusive_ns",
        Unit::Ns,
        "Summed duration of gpu_events_exclusive (ns)",
    ),
    Column::int(
        "graph_replay_events_inclusive",
        Unit::Count,
        "The part of gpu_events_inclusive run by CUDA graph replays (cudaGraphLaunch)",
    ),
    Column::int(
        "graph_replay_inclusive_ns",
        Unit::Ns,
        "The part of gpu_inclusive_ns run by CUDA graph replays (ns)",
    ),
];

/// `torch.kernel_paths`
pub const KERNEL_PATHS: &[Column] = &[
    RANK,
    Column::int(
        "path_id",
        Unit::Id,
        "The path (gpuopt torch paths) of the launching call; null: no range encloses the call, or \
         no call launched the event",
    ),
    Column::text(
        "path",
        "The path's ranges, outermost first, joined by ' > '",
    ),
    Column::text(
        "call",
        "The runtime/driver call that launched the events (cudaGraphLaunch for a graph replay); null \
         when unlinked",
    ),
    Column::text(
        "launch",
        "direct (a launch of its own), graph_replay (part of a cudaGraphLaunch) or unlinked (no call \
         in the trace has its correlation id)",
    ),
    Column::text("name", "GPU event name (kernel, memcpy or memset)"),
    Column::text("kind", "kernel, memcpy or memset"),
    Column::int("events", Unit::Count, "GPU events in the group"),
    Column::int(
        "gpu_time_ns",
        Unit::Ns,
        "Summed duration of those events (ns)",
    ),
];

/// The call-path tables, by their `gpuopt schema` keys.
pub fn tables() -> Vec<Declared> {
    vec![
        Declared::new("torch.paths", PATHS),
        Declared::new("torch.kernel_paths", KERNEL_PATHS),
    ]
}
